//! The CLI on Metal binary archives built in code around real Apple G13 code
//! (testdata/archives/real, see its NOTE.md): `--list`, selection by Metal
//! name and by symbol, `--part`, applegpu-identical `--disasm-only` of each
//! function at its `__text` offset, `; -> helper` call annotations, and every
//! container error path with its message and exit code.

use crate::common;
use agx_container::testutil::*;
use agx_container::Stage;
use common::*;

fn real_text(name: &str) -> String {
    std::fs::read_to_string(repo().join("testdata/archives/real").join(name)).unwrap()
}

/// texread: prolog at 0, main at 64, kernel name as a symbol prefix.
fn texread_archive() -> Vec<u8> {
    let prolog = real("texread_compute_shader_prolog.bin");
    let main = real("texread_compute_shader.bin");
    let (text, syms) = layout_text(
        &[
            ("_texread_agc.main.constant_program", &prolog),
            ("_texread_agc.main", &main),
        ],
        64,
    );
    build_test_archive(G13G, Stage::Compute, &text, &sym_refs(&syms))
}

/// applegpu's listing of code printed at base 0, moved to `base`: the
/// address column and the absolute branch targets are the only
/// pc-dependent text.
fn rebase(listing: &str, base: i64) -> String {
    let mut s = String::new();
    for line in listing.lines() {
        let (addr, rest) = line.split_at(line.find(':').unwrap());
        let a = i64::from_str_radix(addr.trim(), 16).unwrap() + base;
        let mut rest = rest.to_string();
        for mnem in [
            "call             ",
            "jmp_exec_any     ",
            "jmp_exec_none    ",
        ] {
            if let Some(i) = rest.find(mnem) {
                let t = &rest[i + mnem.len()..];
                let v = if let Some(h) = t.strip_prefix("0x-") {
                    -i64::from_str_radix(h.trim(), 16).unwrap()
                } else {
                    i64::from_str_radix(t.trim().trim_start_matches("0x"), 16).unwrap()
                };
                let n = v + base;
                let nt = if n < 0 {
                    format!("0x-{:X}", -n)
                } else {
                    format!("0x{n:X}")
                };
                rest = format!("{}{}", &rest[..i + mnem.len()], nt);
            }
        }
        s.push_str(&format!("{a:4x}{rest}\n"));
    }
    s
}

#[test]
fn list_shows_every_function() {
    let (_t, p) = write_tmp("simple_call.archive", &simple_call_archive());
    let text = ok_out(&[p.to_str().unwrap(), "--list"]);
    let lines: Vec<&str> = text.lines().collect();
    // the slice table first (see cli_targets.rs), then the functions
    assert!(lines[0].starts_with("slice"), "{text}");
    assert!(lines.iter().any(|l| l.starts_with("stage")), "{text}");
    let helper = lines
        .iter()
        .find(|l| l.contains(HELPER_SYM))
        .expect("helper listed");
    assert!(
        helper.starts_with("compute")
            && helper.contains("helper")
            && helper.contains("0x0")
            && helper.contains("G13G"),
        "{helper}"
    );
    let main = lines
        .iter()
        .find(|l| l.contains("_agc.main"))
        .expect("main listed");
    assert!(
        main.contains("main") && main.contains("0x180") && main.contains("G13G (M1)"),
        "{main}"
    );
}

#[test]
fn main_disassembles_at_its_text_offset_like_applegpu() {
    let (_t, p) = write_tmp("sc1.archive", &simple_call_archive());
    let want = rebase(&real_text("simple_call_compute_shader.applegpu.txt"), 0x180);
    for sel in ["simple_call", "_agc.main"] {
        let o = run(&[p.to_str().unwrap(), "-f", sel, "--disasm-only"]);
        assert!(o.status.success(), "{sel}: {}", err(&o));
        assert_eq!(out(&o), want, "selected by {sel}");
    }
    // the call now targets the helper at __text offset 0
    assert!(want.contains("call             0x0\n"), "{want}");
}

#[test]
fn helper_disassembles_like_applegpu() {
    let (_t, p) = write_tmp("sc2.archive", &simple_call_archive());
    let want = real_text("simple_call_compute_l__Z6helperPU9MTLdeviceKjj.applegpu.txt");
    for sel in ["helper", HELPER_SYM] {
        let o = run(&[p.to_str().unwrap(), "-f", sel, "--disasm-only"]);
        assert!(o.status.success(), "{sel}: {}", err(&o));
        assert_eq!(out(&o), want, "selected by {sel}");
    }
}

#[test]
fn report_resolves_call_targets_to_the_helper() {
    let (_t, p) = write_tmp("sc3.archive", &simple_call_archive());
    let text = ok_out(&[p.to_str().unwrap(), "-f", "simple_call"]);
    let call = text
        .lines()
        // (the disassembly's line, not the headline's "inside it: call at")
        .find(|l| l.contains(": call ") && !l.trim_start().starts_with("Bottleneck:"))
        .expect("call line");
    // (the helper's display name: its symbol demangled)
    assert!(call.contains("; -> helper"), "{call}");
    assert!(text.contains("GPU G13G"), "{text}");
    // the JSON names the call target too
    let o = run(&[p.to_str().unwrap(), "-f", "simple_call", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let k = &v["kernels"][0];
    assert_eq!(k["gpu"], "G13G");
    let calls: Vec<&serde_json::Value> = k["instructions_detail"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["mnemonic"] == "call")
        .collect();
    assert!(!calls.is_empty());
    // the callee's one name, as the listing prints it
    assert!(calls.iter().all(|c| c["call_target"] == "helper"));
}

#[test]
fn prolog_is_its_own_part() {
    let (_t, p) = write_tmp("texread.archive", &texread_archive());
    let o = run(&[p.to_str().unwrap(), "--part", "prolog", "--disasm-only"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(
        out(&o),
        real_text("texread_compute_shader_prolog.applegpu.txt")
    );
    let o = run(&[p.to_str().unwrap(), "-f", "texread", "--disasm-only"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(
        out(&o),
        rebase(&real_text("texread_compute_shader.applegpu.txt"), 64)
    );
    // default view: main, with the prolog summarised
    let o = run(&[p.to_str().unwrap()]);
    assert_prints(&o, "prolog:");
    let o = run(&[p.to_str().unwrap(), "--part", "all", "--disasm-only"]);
    assert_prints(&o, "_texread_agc.main.constant_program");
}

#[test]
fn missing_function_lists_the_names() {
    let (_t, p) = write_tmp("sc4.archive", &simple_call_archive());
    let o = run(&[p.to_str().unwrap(), "-f", "nope"]);
    let e = one_line_error(&o, 1);
    assert!(
        e.contains("nope") && e.contains("simple_call") && e.contains("helper"),
        "{e}"
    );
}

#[test]
fn air_only_archive_is_refused() {
    let (_t, p) = write_tmp("air.archive", &fat(&[air_slice(&["k"])], false));
    let o = run(&[p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        err(&o).contains("holds AIR bitcode only, no GPU machine code; build it for a device")
            && err(&o).contains("for raw machine code use --binary FILE"),
        "{}",
        err(&o)
    );
}

#[test]
fn newer_gpu_is_refused() {
    let main = real("simple_call_compute_shader.bin");
    let a = build_test_archive(G16P, Stage::Compute, &main, &[("_agc.main", 0)]);
    let (_t, p) = write_tmp("g16.archive", &a);
    let o = run(&[p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        err(&o)
            .contains("native code for GPU G16P (iPhone/iPad SoC) only: decoding supports G13 (M1) and G14 (M2) code; get a decodable slice on any Mac with `metal-profile export"),
        "{}",
        err(&o)
    );
}

#[test]
fn truncated_archive_names_the_offset() {
    let a = simple_call_archive();
    let (_t, p) = write_tmp("trunc.archive", &a[..a.len() / 2]);
    let o = run(&[p.to_str().unwrap()]);
    assert_one_line_error(&o, 1, "at offset 0x");
}

#[test]
fn offset_flags_are_refused_for_archives() {
    let (_t, p) = write_tmp("sc5.archive", &simple_call_archive());
    let o = run(&[p.to_str().unwrap(), "--offset", "4"]);
    assert_fails(&o, 2, "--offset/--base apply to raw code");
}

#[test]
fn all_profiles_every_kernel_and_default_selection_is_ambiguous() {
    let matmul = std::fs::read(repo().join("examples/matmul_naive.bin")).unwrap();
    let mandel =
        std::fs::read(repo().join("testdata/mesa/cf_mandelbrot/cf_mandelbrot.bin")).unwrap();
    let (text, syms) = layout_text(
        &[
            ("matmul_naive_agc.main", &matmul),
            ("mandelbrot_agc.main", &mandel),
        ],
        256,
    );
    let a = build_test_archive(G13G, Stage::Compute, &text, &sym_refs(&syms));
    let (_t, p) = write_tmp("two.archive", &a);
    let o = run(&[p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        err(&o).contains("several kernels") && err(&o).contains("matmul_naive"),
        "{}",
        err(&o)
    );
    let o = run(&[p.to_str().unwrap(), "--all", "--format", "json"]);
    assert!(o.status.success(), "{}", err(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(names(&v["kernels"]), ["matmul_naive", "mandelbrot"]);
    let o = run(&[p.to_str().unwrap(), "-f", "mandelbrot", "--disasm-only"]);
    assert!(o.status.success());
    assert!(out(&o).starts_with(" 100: "), "{}", out(&o));
}
