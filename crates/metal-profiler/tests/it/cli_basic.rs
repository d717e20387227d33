//! End-to-end tests of the `metal-profile` binary: disassembly identical to
//! applegpu, and every error path with its message and exit code.

use crate::common;
use common::*;

/// The listing applegpu printed for the Mesa matmul kernel (testdata copy).
fn matmul_reference() -> String {
    std::fs::read_to_string(repo().join("testdata/mesa/matmul_naive_16x16/main.applegpu.txt"))
        .expect("testdata/mesa/matmul_naive_16x16/main.applegpu.txt")
}

#[test]
fn disasm_only_matches_applegpu() {
    let o = run(&["--binary", "examples/matmul_naive.bin", "--disasm-only"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(out(&o), matmul_reference());
}

#[test]
fn disasm_only_reads_stdin() {
    let bytes = std::fs::read(repo().join("examples/matmul_naive.bin")).unwrap();
    let o = run_stdin(&["--binary", "-", "--disasm-only"], &bytes);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(out(&o), matmul_reference());
}

#[test]
fn offset_is_a_seek_and_addresses_are_relative() {
    // Like `python3 disassemble.py FILE 0x1c`: start at byte 0x1c, print from 0.
    let o = run(&[
        "--binary",
        "examples/matmul_naive.bin",
        "--disasm-only",
        "--offset",
        "0x1c",
    ]);
    assert!(o.status.success());
    let first = out(&o).lines().next().unwrap().to_string();
    assert_eq!(
        first,
        "   0: 520841000000         if_icmp          r0l, ueq, r0h, 0, 1"
    );
}

#[test]
fn base_moves_addresses_and_targets() {
    let o = run(&[
        "--binary",
        "examples/matmul_naive.bin",
        "--disasm-only",
        "--base",
        "0x1000",
    ]);
    assert!(o.status.success());
    let out = out(&o);
    assert!(out.starts_with("1000: 72051004"), "{out}");
    assert!(out.contains("jmp_exec_any     0x1034"), "{out}");
}

#[test]
fn cryptic_syntax() {
    let o = run(&[
        "--binary",
        "examples/matmul_naive.bin",
        "--disasm-only",
        "--syntax",
        "cryptic",
    ]);
    assert!(o.status.success());
    assert!(!out(&o).contains(".cache"));
}

#[test]
fn missing_file_is_a_clean_error() {
    let o = run(&["--binary", "no/such/file.bin", "--disasm-only"]);
    assert_one_line_error(&o, 1, "cannot read no/such/file.bin: no such file");
}

/// Usage errors (exit 2) and inputs that cannot be profiled (exit 1): the
/// exit code and the reason in the message.
#[test]
fn bad_arguments_fail_with_their_code_and_reason() {
    let m = "examples/matmul_naive.bin";
    for (args, code, reason) in [
        (&[][..], 2, "no input"),
        (&["--binary", m, "--no-such-flag"][..], 2, "--no-such-flag"),
        (&["--binary", m, "--offset", "3"][..], 2, "odd"),
        (
            &["--binary", m, "--offset", "0x100000"][..],
            1,
            "past the end",
        ),
        (
            &["--binary", m, "--list"][..],
            2,
            "--list needs a Metal binary archive",
        ),
    ] {
        assert_fails(&run(args), code, reason);
    }
}

#[test]
fn metal_source_on_linux_explains_what_to_do() {
    if cfg!(target_os = "macos") {
        return;
    }
    let o = run(&["examples/matmul.metal", "-f", "matmul_naive"]);
    assert_eq!(o.status.code(), Some(1));
    let e = err(&o);
    assert!(e.contains("macOS") && e.contains("export"), "{e}");
}

#[test]
fn garbage_raw_input_is_refused() {
    let junk: Vec<u8> = (0..64u32).map(|i| (i * 37 + 11) as u8 | 0x80).collect();
    let o = run_stdin(&["--binary", "-", "--disasm-only"], &junk);
    assert_eq!(o.status.code(), Some(1));
    let e = err(&o);
    assert!(
        e.starts_with("metal-profile: error: <stdin> does not look like G13 machine code: "),
        "{e}"
    );
}

#[test]
fn asm_round_trips_a_listing() {
    // The --disasm-only listing assembles back to the original bytes.
    let dir = std::env::temp_dir().join(format!("mp-asm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let listing = dir.join("matmul.s");
    std::fs::write(&listing, matmul_reference()).unwrap();
    let bin = dir.join("matmul.bin");
    let o = run(&[
        "asm",
        listing.to_str().unwrap(),
        "-o",
        bin.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", err(&o));
    let original = std::fs::read(repo().join("examples/matmul_naive.bin")).unwrap();
    let got = std::fs::read(&bin).unwrap();
    assert_eq!(&got[..], &original[..got.len()]);
    let o = run(&["asm", "--check", listing.to_str().unwrap()]);
    assert!(o.status.success());
    assert!(err(&o).contains("ok (25 instructions"), "{}", err(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn asm_error_names_line_and_column() {
    let o = run_stdin(
        &["asm", "-", "--check"],
        b"fadd32 r0, r1, r2\nfad32 r0, r1, r2\n",
    );
    assert_fails(&o, 1, "<stdin>: line 2, column 1: unknown mnemonic `fad32`");
}

#[test]
fn model_flags_change_the_estimate_and_are_checked() {
    let json = |args: &[&str]| -> serde_json::Value {
        let mut a = vec!["--binary", "examples/matmul_naive.bin", "--format", "json"];
        a.extend_from_slice(args);
        let o = run(&a);
        assert!(o.status.success(), "{}", err(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let base = json(&[]);
    let k = &base["kernels"][0];
    assert_eq!(k["model"]["trip_count"], 16);
    // every load misses L1: twice the DRAM traffic, a higher total
    let misses = json(&["--l1-hit-rate", "0", "--l1-miss-latency", "600"]);
    assert!(misses["kernels"][0]["total_cycles"].as_f64() > k["total_cycles"].as_f64());
    // all hits but a very slow L1: the latency is no longer hidden
    let slow = json(&["--l1-hit-rate", "1", "--l1-hit-latency", "2000"]);
    assert!(slow["kernels"][0]["cycles"]["mem"].as_f64() > k["cycles"]["mem"].as_f64());
    // a chip with more DRAM bandwidth per core: a lower device-memory bound
    let max = json(&["--chip", "M1 Max"]);
    let dram = |d: &serde_json::Value| {
        d["kernels"][0]["loops"][0]["bound"]["components"]["device_bandwidth"]
            .as_f64()
            .unwrap()
    };
    assert!(
        dram(&max) < dram(&base),
        "{} vs {}",
        dram(&max),
        dram(&base)
    );
    let more = json(&["--trip-count", "64"]);
    assert!(more["kernels"][0]["total_cycles"].as_f64() > k["total_cycles"].as_f64());
    for bad in [
        &["--trip-count", "0"][..],
        &["--l1-hit-rate", "2"][..],
        &["--chip", "M7"][..],
    ] {
        let mut a = vec!["--binary", "examples/matmul_naive.bin"];
        a.extend_from_slice(bad);
        let o = run(&a);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
    }
}

#[test]
fn explain_model_lists_sources_and_assumptions() {
    let o = run(&["--explain-model"]);
    assert!(o.status.success());
    let t = out(&o);
    assert!(
        t.contains("agx_performance.c")
            && t.contains("metal-benchmarks")
            && t.contains("assumption"),
        "{t}"
    );
}

#[test]
fn shipped_example_archives_work() {
    let o = run(&["examples/kernels.archive", "--list"]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(out(&o).contains("matmul_naive_agc.main") && out(&o).contains("mandelbrot_agc.main"));
    let o = run(&[
        "examples/kernels.archive",
        "-f",
        "matmul_naive",
        "--disasm-only",
    ]);
    assert_eq!(out(&o), matmul_reference());
    let o = run(&["examples/simple_call.archive", "-f", "simple_call"]);
    assert_prints(&o, "; -> helper");
}
