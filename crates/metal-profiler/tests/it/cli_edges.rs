//! The command line's edges (issue 29 item 9): each one a defect a user met.

use crate::common;
use common::*;

fn s(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn part_sections_name_their_part() {
    let t = ok_out(&["examples/texread.archive", "-f", "texread", "--part", "all"]);
    let titles: Vec<&str> = t
        .lines()
        .filter(|l| l.contains("metal-profiler:"))
        .collect();
    assert_eq!(titles.len(), 2, "{t}");
    assert!(
        titles[0].contains("metal-profiler: texread (prolog)"),
        "{t}"
    );
    assert!(titles[1].contains("metal-profiler: texread (main)"), "{t}");
    let t = ok_out(&[
        "examples/texread.archive",
        "-f",
        "texread",
        "--part",
        "prolog",
    ]);
    assert!(t.contains("metal-profiler: texread (prolog) "), "{t}");
    // the default (main) report keeps its title
    let t = ok_out(&["examples/texread.archive", "-f", "texread"]);
    assert!(t.contains("metal-profiler: texread "), "{t}");
    assert!(!t.contains("(main)"), "{t}");
}

#[test]
fn two_inputs_say_one_input_and_batch() {
    let o = run(&[
        "examples/kernels.archive",
        "examples/simple_call.archive",
        "-f",
        "simple_call",
    ]);
    let line = one_line_error(&o, 2);
    assert!(line.contains("more than one input"), "{line}");
    assert!(line.contains("examples/simple_call.archive"), "{line}");
    assert!(line.contains("metal-profile batch"), "{line}");
    assert!(!line.contains("subcommand"), "{line}");
}

#[test]
fn batch_and_diff_with_nothing_fail() {
    let t = tmp("edges-empty");
    // missing or empty input (issue 37 item 4): one `metal-profile: error:`
    // line, exit 1, nothing on stdout, whatever the format
    std::fs::write(t.0.join("notes.txt"), b"not an archive\n").unwrap();
    let empty = t.0.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    for (input, says) in [
        (
            "/nonexistent-batch-input",
            "/nonexistent-batch-input: no such file",
        ),
        (s(&empty), "nothing to profile"),
        (s(&t.0), "nothing to profile"),
        (
            "examples/matmul_naive.bin",
            "error: examples/matmul_naive.bin: not a Metal binary archive",
        ),
    ] {
        for format in ["text", "csv", "json", "html"] {
            let o = run(&["batch", input, "--format", format]);
            assert_one_line_error(&o, 1, says);
            assert!(
                o.stdout.is_empty(),
                "batch {input} --format {format} wrote to stdout"
            );
        }
    }
    let o = run(&["diff", s(&t.0), s(&t.0)]);
    assert_one_line_error(&o, 1, "nothing to compare");
}

#[test]
fn diff_names_a_file_once() {
    let t = tmp("edges-diff");
    let p = t.0.join("notes.txt");
    std::fs::write(&p, b"hello\n").unwrap();
    let o = run(&["diff", s(&p), s(&p)]);
    let line = one_line_error(&o, 1);
    assert_eq!(line.matches("notes.txt").count(), 1, "{line}");
}

#[test]
fn odd_base_is_refused_like_odd_offset() {
    for flag in ["--offset", "--base"] {
        let o = run(&[
            "--binary",
            "examples/matmul_naive.bin",
            "--disasm-only",
            flag,
            "0x1",
        ]);
        let (code, line) = one_line(&o);
        assert_eq!(code, Some(2), "{flag}");
        assert!(line.contains(&format!("{flag} 0x1 is odd")), "{line}");
    }
    assert!(ok_out(&[
        "--binary",
        "examples/matmul_naive.bin",
        "--disasm-only",
        "--base",
        "0x2"
    ])
    .starts_with("   2: "));
}

#[test]
fn asm_refuses_bytes_on_a_terminal() {
    use clap::Parser;
    let cli = metal_profiler::cli::Cli::try_parse_from([
        "metal-profile",
        "asm",
        s(&repo().join("examples/matmul_naive.s")),
    ])
    .unwrap();
    let (mut o, mut e) = (Vec::new(), Vec::new());
    let r = metal_profiler::app::run(&cli, &mut o, &mut e, true);
    let err = r.expect_err("refused on a terminal");
    assert_eq!(err.code, 2);
    assert!(err.message.contains("-o FILE"), "{}", err.message);
    assert!(o.is_empty());
    // not a terminal (a pipe): the bytes are written
    let r = metal_profiler::app::run(&cli, &mut o, &mut e, false);
    assert!(r.is_ok());
    // (the shipped .bin carries trailing padding the assembly has not)
    let shipped = std::fs::read(repo().join("examples/matmul_naive.bin")).unwrap();
    assert!(o.len() > 100 && shipped.starts_with(&o), "{o:?}");
    // -o - asks for stdout explicitly
    let cli = metal_profiler::cli::Cli::try_parse_from([
        "metal-profile",
        "asm",
        s(&repo().join("examples/matmul_naive.s")),
        "-o",
        "-",
    ])
    .unwrap();
    let mut o = Vec::new();
    assert!(metal_profiler::app::run(&cli, &mut o, &mut e, true).is_ok());
    assert!(!o.is_empty());
}

/// `--jobs N` caps the cores one profile uses; the report is the same
/// bytes for any N (text, JSON, the listing alone), on code big enough
/// that every two-core step runs (the decode, the analysis passes side by
/// side, the listing's batches: over 50,000 instructions and 256 KiB).
#[test]
fn jobs_cap_keeps_every_byte() {
    let dir = tmp("jobs-cap");
    let one = std::fs::read(repo().join("examples/matmul_naive.bin")).unwrap();
    // the kernel's body repeated (its `stop` at 0x92 and the padding after
    // it only once, at the end): one function of ~75,000 instructions
    let (body, end) = one.split_at(0x92);
    assert_eq!(&end[..2], &[0x88, 0x00], "matmul_naive.bin ends in stop");
    let mut code = Vec::new();
    while code.len() < 400 * 1024 {
        code.extend_from_slice(body);
    }
    code.extend_from_slice(end);
    let f = dir.0.join("big.bin");
    std::fs::write(&f, &code).unwrap();
    for extra in [&[][..], &["--format", "json"][..], &["--disasm-only"][..]] {
        let mut args = vec!["--binary", s(&f), "--allow-unknown"];
        args.extend_from_slice(extra);
        let all = ok_out(&args);
        // (a line or a JSON object of ~50 bytes or more per instruction)
        assert!(all.len() > 3_000_000, "{extra:?}: a small report");
        for n in ["1", "2", "3"] {
            let mut a = args.clone();
            a.extend_from_slice(&["--jobs", n]);
            assert!(ok_out(&a) == all, "{extra:?} --jobs {n}: other bytes");
        }
    }
    let o = run(&["--binary", s(&f), "--jobs", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert_eq!(
        err(&o).trim(),
        "metal-profile: error: --jobs must be at least 1"
    );
}
