//! `-o/--output FILE` for every format, and the `--format html` / `--format
//! dot` views from the command line.

use crate::common;
use common::*;

const MANDEL: &str = "testdata/mesa/cf_mandelbrot/cf_mandelbrot.bin";

#[test]
fn output_file_holds_exactly_what_stdout_would() {
    let dir = std::env::temp_dir().join(format!("mp-out-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let _t = Tmp(dir.clone());
    for format in ["text", "json", "html", "dot"] {
        let to_stdout = run(&["--binary", MANDEL, "-f", "mandel", "--format", format]);
        assert!(to_stdout.status.success(), "{format}");
        assert!(!to_stdout.stdout.is_empty(), "{format}");
        let path = dir.join(format!("out.{format}"));
        let p = path.display().to_string();
        let to_file = run(&[
            "--binary", MANDEL, "-f", "mandel", "--format", format, "-o", &p,
        ]);
        assert!(to_file.status.success(), "{format}");
        assert!(to_file.stdout.is_empty(), "{format}: nothing on stdout");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            to_stdout.stdout,
            "{format}: -o writes the same bytes"
        );
        // long spelling
        let long = run(&[
            "--binary", MANDEL, "-f", "mandel", "--format", format, "--output", &p,
        ]);
        assert!(long.status.success());
    }
    // `--disasm-only` and `--list` go to the file too
    let p = dir.join("listing.txt").display().to_string();
    let o = run(&["--binary", MANDEL, "--disasm-only", "-o", &p]);
    assert!(o.status.success() && o.stdout.is_empty());
    assert!(std::fs::read_to_string(&p).unwrap().starts_with("   0: "));
}

/// `--disasm-only` streams a big input (read in pieces, formatted on all
/// cores) to `-o FILE` as it goes: the same bytes as stdout; a run that
/// fails before printing leaves an existing FILE alone; FILE may be the
/// input itself.
#[test]
fn streamed_listing_to_a_file() {
    let dir = std::env::temp_dir().join(format!("mp-out-stream-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let _t = Tmp(dir.clone());
    // ~600 KB of code: matmul's loop body repeated, a zero run now and then
    let m = std::fs::read(repo().join("examples/matmul_naive.bin")).unwrap();
    let mut code = m[..0x2e].to_vec();
    for i in 0..8000 {
        code.extend_from_slice(&m[0x2e..0x7a]);
        if i % 1000 == 999 {
            code.extend_from_slice(&[0; 16]);
        }
    }
    code.extend_from_slice(&m[0x7a..]);
    let input = dir.join("big.bin");
    std::fs::write(&input, &code).unwrap();
    let i = input.display().to_string();
    let to_stdout = run(&["--binary", &i, "--disasm-only"]);
    assert!(to_stdout.status.success());
    let out = dir.join("listing.txt");
    let o = out.display().to_string();
    let to_file = run(&["--binary", &i, "--disasm-only", "-o", &o]);
    assert!(to_file.status.success() && to_file.stdout.is_empty());
    assert!(std::fs::read(&out).unwrap() == to_stdout.stdout);

    std::fs::write(&out, "keep").unwrap();
    let missing = dir.join("missing.bin").display().to_string();
    let failed = run(&["--binary", &missing, "--disasm-only", "-o", &o]);
    assert_eq!(failed.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep");

    let over = run(&["--binary", &i, "--disasm-only", "-o", &i]);
    assert!(over.status.success());
    assert!(std::fs::read(&input).unwrap() == to_stdout.stdout);
}

#[test]
fn unwritable_output_is_a_one_line_error() {
    let o = run(&[
        "--binary",
        MANDEL,
        "--format",
        "html",
        "-o",
        "/nonexistent-dir/x/report.html",
    ]);
    assert_one_line_error(&o, 1, "cannot write /nonexistent-dir/x/report.html");
}

#[test]
fn html_and_dot_formats() {
    let page = ok_out(&["--binary", MANDEL, "-f", "mandel", "--format", "html"]);
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("<title>metal-profiler: mandel</title>"));
    assert!(page.contains("1 assumed 16 (no bound found; set with --trip-count ADDR=N)"));
    // --trip-count reaches the page
    let page7 = ok_out(&[
        "--binary",
        MANDEL,
        "-f",
        "mandel",
        "--format",
        "html",
        "--trip-count",
        "7",
    ]);
    assert!(page7.contains("1 set to 7 with --trip-count"));
    assert!(
        page7.contains("× 7)"),
        "loop region label shows the trip count"
    );

    let dot = ok_out(&["--binary", MANDEL, "-f", "mandel", "--format", "dot"]);
    assert!(dot.starts_with("digraph \"mandel\" {"));
    assert!(dot.contains("subgraph cluster_loop0"));
    assert!(dot.contains("label=\"back\""));
    assert!(dot.trim_end().ends_with('}'));

    // several kernels: one page with an index, one digraph each
    let page = ok_out(&["examples/kernels.archive", "--all", "--format", "html"]);
    assert!(page.contains("<nav class=\"index\">"));
    assert_eq!(page.matches("<section class=\"kernel\"").count(), 2);
    // one graph per output (issue 29), each kernel a cluster of it
    let dot = ok_out(&["examples/kernels.archive", "--all", "--format", "dot"]);
    assert_eq!(dot.matches("digraph ").count(), 1);
    assert_eq!(dot.matches("\n  subgraph cluster_k").count(), 2);
}

#[test]
fn call_links_to_the_helper_section() {
    let page = ok_out(&[
        "examples/simple_call.archive",
        "--part",
        "all",
        "--format",
        "html",
    ]);
    // helper is section k0, main k1; main's call links to k0
    assert!(page.contains("<a href=\"#k0\">helper</a>"), "index");
    let main = &page[page.find("<section class=\"kernel\" id=\"k1\"").unwrap()..];
    assert!(main.contains("<a href=\"#k0\">→ helper</a>"), "call link");
}
