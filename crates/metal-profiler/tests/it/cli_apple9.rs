//! `--binary F --gpu NAME` for Apple9 code (G15/G16/G17P; issue 28): the
//! listing, the refusals, framing stops as warnings with exit 4 (the
//! profile: cli_apple9_profile.rs).

use crate::common::{assert_prints, err, one_line, one_line_error, out, run, tmp};
use std::process::Output;

/// `metal-profile --binary examples/apple9_loop.a9bin ARGS`.
fn example(args: &[&str]) -> Output {
    let mut a = vec!["--binary", "examples/apple9_loop.a9bin"];
    a.extend(args);
    run(&a)
}

#[test]
fn apple9_example_lists_as_committed() {
    for gpu in ["g16g", "g15s", "g17p"] {
        let o = example(&["--gpu", gpu, "--disasm-only", "--offset", "0x40"]);
        assert!(o.status.success(), "{}", err(&o));
        let want = std::fs::read_to_string(crate::common::repo().join("examples/apple9_loop.txt"))
            .unwrap();
        assert_eq!(out(&o), want);
        assert!(err(&o).is_empty(), "{}", err(&o));
    }
    // the reference's cryptic syntax: `$` for the cache hint
    let o = example(&[
        "--gpu",
        "g16g",
        "--disasm-only",
        "--offset",
        "0x40",
        "--syntax",
        "cryptic",
    ]);
    assert!(
        out(&o).contains("fadd             $r4, r2.discard, r3.discard"),
        "{}",
        out(&o)
    );
    // the preamble: its stop ends the listing of offset 0
    let o = example(&["--gpu", "g16g", "--disasm-only"]);
    assert_eq!(
        out(&o),
        format!("   0: {:<42} stop             \n", "0E 00 00 00")
    );
}

#[test]
fn m5_is_refused_in_one_line() {
    let o = example(&["--gpu", "g17g", "--disasm-only"]);
    let line = one_line_error(&o, 1);
    assert!(line.contains("M5") && line.contains("not Apple9"), "{line}");
    let o = example(&["--gpu", "g16g", "--disasm-only", "--syntax", "native"]);
    assert_eq!(one_line(&o).0, Some(2));
}

#[test]
fn apple9_framing_stop_warns_with_the_offset() {
    let t = tmp("apple9");
    let f = t.0.join("a.bin");
    // mov_imm, then an iadd key no source sizes (0x31f), then a stop
    std::fs::write(&f, [0x04, 0x00, 0x1f, 0x03, 0, 0, 0, 0, 0x0e, 0, 0, 0]).unwrap();
    let p = f.to_str().unwrap();
    let o = run(&["--binary", p, "--gpu", "g16g", "--disasm-only"]);
    assert_eq!(o.status.code(), Some(4));
    assert!(
        out(&o).contains("Unrecognized opcode\n1F 03 00 00"),
        "{}",
        out(&o)
    );
    let (_, line) = one_line(&o);
    assert!(
        line.contains("framing stops at 0x2")
            && line.contains("0x31f")
            && line.contains("exit code 4"),
        "{line}"
    );
    let o = run(&[
        "--binary",
        p,
        "--gpu",
        "g16g",
        "--disasm-only",
        "--allow-unknown",
    ]);
    assert_eq!(o.status.code(), Some(0));
    // the default (no --gpu) is still G13
    let o = example(&["--disasm-only", "--allow-unknown"]);
    assert!(!out(&o).contains("push_exec"), "{}", out(&o));
}

/// An archive with a G15G slice of Apple9 code: `--list` names the family
/// and how much of each function decodes; `--gpu g15g --disasm-only` lists
/// it; without --disasm-only its main is profiled.
#[test]
fn apple9_archive_slice_lists_and_is_listed() {
    use agx_container::testutil::{build_test_archive, G15G};
    use agx_container::Stage;
    let code = std::fs::read(crate::common::repo().join("examples/apple9_loop.a9bin")).unwrap();
    let archive = build_test_archive(
        G15G,
        Stage::Compute,
        &code,
        &[("_agc.main.constant_program", 0), ("_agc.main", 0x40)],
    );
    let t = tmp("apple9-archive");
    let f = t.0.join("a9.archive");
    std::fs::write(&f, archive).unwrap();
    let p = f.to_str().unwrap();
    let o = run(&[p, "--list"]);
    assert_prints(&o, "G15G (M3)                Apple9");
    let o = run(&[p, "--list", "--gpu", "g15g"]);
    assert_prints(
        &o,
        "_agc.main: 66 of 128 bytes framed, 9 instructions named, 0 unknown",
    );
    let o = run(&[p, "--gpu", "g15g", "--disasm-only"]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(
        out(&o).contains("  44: 0F 05 54 1A") && out(&o).contains("while_exec"),
        "{}",
        out(&o)
    );
    // the profile of its main (cli_apple9_profile.rs has the raw file's)
    let o = run(&[p, "--gpu", "g15g"]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(
        out(&o).contains("_agc.main — Apple9 (M3/M4/A18 Pro) code (G15G)")
            && out(&o).contains("Loop 0  0x48–0x6e"),
        "{}",
        out(&o)
    );
}

/// An empty file given as Apple9 code is refused naming that family's code
/// (not G13's), from the CLI.
#[test]
fn empty_apple9_input_names_its_family() {
    let t = tmp("a9-empty");
    let p = t.0.join("empty.bin");
    std::fs::write(&p, b"").unwrap();
    let o = run(&["--binary", p.to_str().unwrap(), "--gpu", "g16g"]);
    let line = one_line_error(&o, 1);
    assert!(
        line.ends_with("empty.bin is empty: no machine code to disassemble or profile; give a file of Apple9 machine code"),
        "{line}"
    );
}
