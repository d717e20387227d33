//! Raw code we never get wrong (issue 21, items 1–3): code cut inside an
//! instruction, empty code, input that is not code, unknown encodings and
//! their exit code (`--allow-unknown`), and one-line usage errors. Each bad
//! input is checked for its exit code and its exact one line on stderr.

use crate::common;
use agx_container::testutil::*;
use agx_container::Stage;
use common::*;

fn matmul() -> Vec<u8> {
    std::fs::read(repo().join("examples/matmul_naive.bin")).unwrap()
}

/// A deterministic stream of bytes (xorshift).
fn noise(n: usize) -> Vec<u8> {
    let mut next = crate::xorshift::xorshift64(0x2545_F491_4F6C_DD1D);
    (0..n).map(|_| next() as u8).collect()
}

#[test]
fn code_cut_inside_an_instruction_is_an_error() {
    let t = tmp("cut");
    let m = matmul();
    // 1 byte, 3 bytes (a 4-byte get_sr), and 147 bytes (the `stop` at
    // 0x92 cut after its first byte)
    for (len, at, line) in [
        (1, 0, "metal-profile: error: c.bin: the code ends inside an instruction at 0x0: 1 of 2 bytes; the input is cut short or --offset is wrong: give the whole code"),
        (3, 0, "metal-profile: error: c.bin: the code ends inside an instruction at 0x0: 3 of 4 bytes; the input is cut short or --offset is wrong: give the whole code"),
        (147, 0x92, "metal-profile: error: c.bin: the code ends inside an instruction at 0x92: 1 of 2 bytes; the input is cut short or --offset is wrong: give the whole code"),
    ] {
        std::fs::write(t.0.join("c.bin"), &m[..len]).unwrap();
        let o = run_in(&t.0, &["--binary", "c.bin"], None);
        assert_eq!(one_line(&o), (Some(1), line.to_string()), "{len} bytes");
        assert_eq!(out(&o), "", "no report for cut code");
        // --disasm-only: the listing up to the cut, then the same error
        let o = run_in(&t.0, &["--binary", "c.bin", "--disasm-only"], None);
        assert_eq!(one_line(&o), (Some(1), line.to_string()), "{len} bytes");
        let whole = run(&["--binary", "examples/matmul_naive.bin", "--disasm-only"]);
        let want: String = out(&whole)
            .lines()
            .take_while(|l| {
                let a = l.split(':').next().unwrap_or("").trim();
                u32::from_str_radix(a, 16).is_ok_and(|a| a < at)
            })
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(out(&o), want, "{len} bytes: the listing before the cut");
        // stdin: the same, named <stdin>
        let o = run_in(&t.0, &["--binary", "-", "--disasm-only"], Some(&m[..len]));
        assert_eq!(
            one_line(&o),
            (Some(1), line.replace("c.bin", "<stdin>")),
            "{len} bytes on stdin"
        );
    }
    // the whole file is fine
    let o = run(&["--binary", "examples/matmul_naive.bin"]);
    assert!(o.status.success(), "{}", err(&o));
}

#[test]
fn empty_code_is_an_error() {
    let t = tmp("empty");
    std::fs::write(t.0.join("e.bin"), b"").unwrap();
    for extra in [&[][..], &["--disasm-only"][..]] {
        let mut args = vec!["--binary", "e.bin"];
        args.extend_from_slice(extra);
        let o = run_in(&t.0, &args, None);
        assert_eq!(
            one_line(&o),
            (Some(1), "metal-profile: error: e.bin is empty: no machine code to disassemble or profile; give a file of G13 machine code".into())
        );
        let mut args = vec!["--binary", "-"];
        args.extend_from_slice(extra);
        let o = run_in(&t.0, &args, None);
        assert_eq!(
            one_line(&o),
            (Some(1), "metal-profile: error: <stdin> is empty: no machine code to disassemble or profile; give a file of G13 machine code".into())
        );
        // --offset at the end of the file
        let mut args = vec!["--binary", "examples/matmul_naive.bin", "--offset", "164"];
        args.extend_from_slice(extra);
        let o = run(&args);
        assert_eq!(
            one_line(&o),
            (Some(1), "metal-profile: error: --offset 0xa4 is the end of examples/matmul_naive.bin (164 bytes): no code after it; pick an offset inside the file".into())
        );
    }
    // only zero bytes: no instruction
    std::fs::write(t.0.join("z.bin"), [0u8; 64]).unwrap();
    let o = run_in(&t.0, &["--binary", "z.bin"], None);
    assert_eq!(
        one_line(&o),
        (Some(1), "metal-profile: error: z.bin holds no G13 instructions (only zero bytes); check the file and --offset".into())
    );
}

#[test]
fn input_that_is_not_code_is_refused() {
    let t = tmp("notcode");
    std::fs::write(t.0.join("noise.bin"), noise(65536)).unwrap();
    let o = run_in(&t.0, &["--binary", "noise.bin"], None);
    let line = one_line_error(&o, 1);
    assert!(
        line.starts_with("metal-profile: error: noise.bin does not look like G13 machine code: ")
            && line.ends_with("% of it does not decode (is it an archive? drop --binary)"),
        "{line}"
    );
    let pct: u32 = line
        .split(": ")
        .nth(3)
        .and_then(|s| s.split('%').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!((50..=80).contains(&pct), "{line}");
    assert_eq!(out(&o), "", "no report for input that is not code");
    // an archive given to --binary: the hint says so
    let o = run(&["--binary", "examples/kernels.archive"]);
    let line = one_line_error(&o, 1);
    assert!(
        line.starts_with(
            "metal-profile: error: examples/kernels.archive does not look like G13 machine code: "
        ) && line
            .ends_with("% of it does not decode (it is a Metal binary archive: drop --binary)"),
        "{line}"
    );
    // text
    std::fs::write(
        t.0.join("t.txt"),
        "hello, this is not machine code at all\n".repeat(40),
    )
    .unwrap();
    let o = run_in(&t.0, &["--binary", "t.txt", "--disasm-only"], None);
    assert_one_line_error(&o, 1, "t.txt does not look like G13 machine code");
    // real kernels decode fully: far from the threshold (every Mesa kernel
    // of testdata and the example, profile and listing)
    let mut bins = vec![repo().join("examples/matmul_naive.bin")];
    for d in std::fs::read_dir(repo().join("testdata/mesa"))
        .unwrap()
        .flatten()
    {
        let name = d.file_name().to_string_lossy().to_string();
        let b = d.path().join(format!("{name}.bin"));
        if b.exists() {
            bins.push(b);
        }
    }
    assert!(bins.len() >= 38, "{} kernels", bins.len());
    for b in &bins {
        let f = b.to_str().unwrap();
        for extra in [&[][..], &["--disasm-only"][..]] {
            let mut args = vec!["--binary", f];
            args.extend_from_slice(extra);
            let o = run(&args);
            assert!(o.status.success() && err(&o).is_empty(), "{f}: {}", err(&o));
        }
    }
}

/// Code with a few unknown encodings: the report is written, the warning
/// is the one stderr line, the exit code is 4; `--allow-unknown` makes it 0
/// with the warning kept.
#[test]
fn unknown_encodings_exit_4_unless_allowed() {
    let t = tmp("unknown");
    let mut code = vec![0xff, 0xff];
    code.extend(matmul());
    std::fs::write(t.0.join("u.bin"), &code).unwrap();
    let warning = "warning: 1 of 26 positions did not decode (<disassembly failed>); this may be code for another GPU generation (decoding supports G13/M1 and G14/M2 code), data, or the wrong --offset";
    for extra in [&[][..], &["--disasm-only"][..], &["--format", "json"][..]] {
        let mut args = vec!["--binary", "u.bin"];
        args.extend_from_slice(extra);
        let o = run_in(&t.0, &args, None);
        assert_eq!(
            one_line(&o),
            (
                Some(4),
                format!("{warning}; exit code 4 (--allow-unknown: 0)")
            ),
            "{extra:?}"
        );
        assert!(!out(&o).is_empty(), "the output is written");
        args.push("--allow-unknown");
        let o = run_in(&t.0, &args, None);
        assert_eq!(one_line(&o), (Some(0), warning.to_string()), "{extra:?}");
    }
}

/// An archive function: cut code is refused as raw code is; unknown
/// encodings exit 4 in a profile and in `batch`, 0 with `--allow-unknown`.
#[test]
fn archive_functions_follow_the_same_rules() {
    let t = tmp("archive");
    let m = matmul();
    // main without its `stop` and cut inside the 6-byte pop_exec at 0x8c
    let cut = build_test_archive(G13G, Stage::Compute, &m[..0x8f], &[("_k_agc.main", 0)]);
    std::fs::write(t.0.join("cut.archive"), &cut).unwrap();
    let o = run_in(&t.0, &["cut.archive", "-f", "k"], None);
    assert_eq!(
        one_line(&o),
        (Some(1), "metal-profile: error: `_k_agc.main`: the code ends inside an instruction at 0x8c: 3 of 6 bytes; the archive is cut short or damaged: rebuild it".into())
    );
    let o = run_in(&t.0, &["batch", "cut.archive"], None);
    assert_fails(&o, 1, "error: cut.archive: `_k_agc.main`: the code ends inside an instruction at 0x8c: 3 of 6 bytes");

    let mut main = vec![0xff, 0xff];
    main.extend(&m);
    let a = build_test_archive(G13G, Stage::Compute, &main, &[("_k_agc.main", 0)]);
    std::fs::write(t.0.join("u.archive"), &a).unwrap();
    let warning = "warning: `_k_agc.main`: 1 position(s) hold encodings the G13 tables do not know; shown as <disassembly failed> (native syntax: `unknown.<group> (N bytes)`) and left out of the analysis";
    let o = run_in(&t.0, &["u.archive", "-f", "k"], None);
    assert_eq!(
        one_line(&o),
        (
            Some(4),
            format!("{warning}; exit code 4 (--allow-unknown: 0)")
        )
    );
    assert!(
        out(&o).contains("metal-profiler: k"),
        "the report is written"
    );
    let o = run_in(&t.0, &["u.archive", "-f", "k", "--allow-unknown"], None);
    assert_eq!(one_line(&o), (Some(0), warning.to_string()));
    let bw = "warning: u.archive: `k`: 1 position(s) hold encodings the G13 tables do not know; left out of the analysis";
    let o = run_in(&t.0, &["batch", "u.archive"], None);
    assert_eq!(
        one_line(&o),
        (Some(4), format!("{bw}; exit code 4 (--allow-unknown: 0)"))
    );
    let o = run_in(&t.0, &["batch", "u.archive", "--allow-unknown"], None);
    assert_eq!(one_line(&o), (Some(0), bw.to_string()));
    // diff: the same warning (both sides), exit 4 unless allowed
    let o = run_in(&t.0, &["diff", "u.archive", "u.archive"], None);
    assert_eq!(o.status.code(), Some(4), "{}", err(&o));
    assert!(
        err(&o).contains("exit code 4 (--allow-unknown: 0)"),
        "{}",
        err(&o)
    );
    let o = run_in(
        &t.0,
        &["diff", "u.archive", "u.archive", "--allow-unknown"],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
}

#[test]
fn asm_of_empty_input_is_an_error() {
    let t = tmp("asm");
    std::fs::write(t.0.join("e.s"), "; nothing here\n\n").unwrap();
    let o = run_in(&t.0, &["asm", "e.s", "-o", "e.bin"], None);
    assert_eq!(
        one_line(&o),
        (Some(1), "metal-profile: error: e.s holds no instructions: nothing to assemble; give applegpu- or native-syntax lines (e.g. a --disasm-only listing)".into())
    );
    assert!(!t.0.join("e.bin").exists(), "nothing written");
    let o = run_in(&t.0, &["asm", "-"], Some(b""));
    assert_eq!(
        one_line(&o),
        (Some(1), "metal-profile: error: <stdin> holds no instructions: nothing to assemble; give applegpu- or native-syntax lines (e.g. a --disasm-only listing)".into())
    );
}

#[test]
fn usage_errors_are_one_line() {
    for (args, line) in [
        (
            &["--binary", "examples/matmul_naive.bin", "--offset", "-4"][..],
            "metal-profile: error: invalid value '-4' for '--offset <N>': -4 is negative; give 0 or more (decimal or 0x-prefixed hex); see `metal-profile --help`",
        ),
        (
            &["examples/kernels.archive", "--trip-count", "-1"][..],
            "metal-profile: error: invalid value '-1' for '--trip-count <N>': -1 is negative; give the iterations assumed per loop, 1 or more; see `metal-profile --help`",
        ),
        (
            &["examples/kernels.archive", "--trip-count", "many"][..],
            "metal-profile: error: invalid value 'many' for '--trip-count <N>': 'many' is not a whole number of iterations (1 to 4294967295); see `metal-profile --help`",
        ),
        (
            &["--ofset", "4"][..],
            "metal-profile: error: unexpected argument '--ofset' found (a similar argument exists: '--offset'); see `metal-profile --help`",
        ),
        (
            &["batch"][..],
            "metal-profile: error: the following required arguments were not provided: <PATH>...; see `metal-profile batch --help`",
        ),
        (
            &["batch", "examples", "--jobs", "-2"][..],
            "metal-profile: error: invalid value '-2' for '--jobs <N>': -2 is negative; give a number of threads, 1 or more; see `metal-profile batch --help`",
        ),
        (
            &["examples/kernels.archive", "--format", "pdf"][..],
            "metal-profile: error: invalid value 'pdf' for '--format <FORMAT>' [possible values: text, json, html, dot, sarif]; see `metal-profile --help`",
        ),
        (
            &["examples/kernels.archive", "--trip-count", "0"][..],
            "metal-profile: error: --trip-count must be at least 1",
        ),
    ] {
        let o = run(args);
        assert_eq!(one_line(&o), (Some(2), line.to_string()), "{args:?}");
    }
    // --help and --version still print and exit 0
    let o = run(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(out(&o).contains("Usage:"));
    let o = run(&["--version"]);
    assert_eq!(o.status.code(), Some(0));
}

fn asm(text: &str) -> Vec<u8> {
    agx_isa::asm::assemble(text).unwrap()
}

/// Main (`call 0x40`, `stop`) at 0, zero padding to 0x40, then `helper`.
fn with_helper(helper: &[u8]) -> Vec<u8> {
    let mut buf = asm("mov_imm r0l, 0\ncall 0x40\nstop\n");
    buf.resize(0x40, 0);
    buf.extend_from_slice(helper);
    buf
}

/// A `call` in raw code whose target holds no code to follow (issue 21):
/// past the input, inside an instruction, on bytes that do not decode, or
/// code that is mostly not code is a warning naming the call, with the
/// report written and exit code 4 (`--allow-unknown`: 0, the warning
/// kept); a called function whose code runs into the end of the input
/// inside an instruction is an error, exit 1, no report.
#[test]
fn call_targets_with_no_code_to_follow() {
    let t = tmp("calls");
    let helper = asm("mov_imm r4, 1, 0b0\niadd r4, r4.sx, 1\nret r1\n");
    let write = |name: &str, bytes: &[u8]| std::fs::write(t.0.join(name), bytes).unwrap();
    // the helper is there: no warning
    write("ok.bin", &with_helper(&helper));
    let o = run_in(&t.0, &["--binary", "ok.bin"], None);
    assert!(o.status.success() && err(&o).is_empty(), "{}", err(&o));
    let note = "; exit code 4 (--allow-unknown: 0)";
    let main = asm("mov_imm r0l, 0\ncall 0x40\nstop\n");
    let inside = asm("mov_imm r0l, 0\ncall 0x2\nstop\n");
    let mut junk = vec![0x01, 0x01];
    junk.extend_from_slice(&helper);
    let mut mostly = asm("mov_imm r4, 1, 0b0\n");
    mostly.extend([0x01, 0x01].repeat(6));
    mostly.extend(asm("ret r1\n"));
    let mut few = asm("mov_imm r4, 1, 0b0\niadd r4, r4.sx, 1\n");
    few.extend([0x01, 0x01]);
    few.extend(asm("iadd r4, r4.sx, 1\niadd r4, r4.sx, 1\nret r1\n"));
    let cases: Vec<(&str, Vec<u8>, String)> = vec![
        (
            "past.bin",
            main.clone(),
            format!("warning: past.bin: the call at 0x4 to 0x40 is not followed: it is past the end of the input (file offset 0x40, the input is {:#x} bytes); only the call instruction is costed (check --offset and --base)", main.len()),
        ),
        (
            "inside.bin",
            inside,
            "warning: inside.bin: the call at 0x4 to 0x2 is not followed: it is inside the 4-byte instruction at 0x0; only the call instruction is costed (check --offset and --base)".to_string(),
        ),
        (
            "junk.bin",
            with_helper(&junk),
            "warning: junk.bin: the call at 0x4 to 0x40 is not followed: it holds bytes that do not decode; only the call instruction is costed (check --offset and --base)".to_string(),
        ),
        (
            "mostly.bin",
            with_helper(&mostly),
            "warning: mostly.bin: the call at 0x4 to 0x40 is not followed: 75% of the code it runs into does not decode: it is not code; only the call instruction is costed (check --offset and --base)".to_string(),
        ),
        (
            "few.bin",
            with_helper(&few),
            "warning: few.bin: the function at 0x40: 1 position(s) hold encodings the G13 tables do not know; left out of the analysis".to_string(),
        ),
    ];
    for (name, bytes, line) in &cases {
        write(name, bytes);
        for extra in [&[][..], &["--format", "json"][..]] {
            let mut args = vec!["--binary", name];
            args.extend_from_slice(extra);
            let o = run_in(&t.0, &args, None);
            assert_eq!(one_line(&o), (Some(4), format!("{line}{note}")), "{name}");
            assert!(!out(&o).is_empty(), "{name}: the report is written");
            args.push("--allow-unknown");
            let o = run_in(&t.0, &args, None);
            assert_eq!(one_line(&o), (Some(0), line.clone()), "{name}");
        }
    }
    // the report states the call it did not follow
    let o = run_in(&t.0, &["--binary", "past.bin", "--allow-unknown"], None);
    assert!(
        out(&o).contains("the call at 0x4 to 0x40: not followed (it is past the end of the input"),
        "{}",
        out(&o)
    );
    // cut: the helper runs into the end of the input inside an instruction
    let mut cut = asm("mov_imm r4, 1, 0b0\n");
    cut.extend_from_slice(&asm("get_sr r1, sr80\n")[..2]);
    write("cut.bin", &with_helper(&cut));
    for extra in [&[][..], &["--allow-unknown"][..]] {
        let mut args = vec!["--binary", "cut.bin"];
        args.extend_from_slice(extra);
        let o = run_in(&t.0, &args, None);
        assert_eq!(
            one_line(&o),
            (Some(1), "metal-profile: error: cut.bin: the function at 0x40 (called at 0x4): the code ends inside an instruction at 0x46: 2 of 4 bytes; the input is cut short: give the whole code".to_string())
        );
        assert_eq!(out(&o), "", "no report for cut code");
    }
}
