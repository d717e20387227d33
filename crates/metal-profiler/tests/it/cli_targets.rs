//! Multi-slice archives (what `metal-tt -arch … -arch …` writes): `--list`
//! shows every slice with its GPU, whether it is decodable and which is
//! chosen; the default is the newest decodable slice; `--gpu` picks one
//! (any case); undecodable or absent slices are refused naming the
//! alternatives; a G14 slice profiles exactly like the same code in a G13
//! slice apart from the GPU's name. `--binary --gpu` labels raw code.

use crate::common;
use agx_container::testutil::*;
use agx_container::{Stage, CPU_TYPE_AMDGPU, CPU_TYPE_APPLEGPU};
use common::*;
use serde_json::Value;

/// AIR, G13G, G14G, G15G (not decodable) and an AMD slice.
pub fn multi_slice_archive() -> Vec<u8> {
    fat(
        &[
            air_slice(&["simple_call"]),
            (CPU_TYPE_APPLEGPU, G13G, simple_call_image(G13G)),
            (CPU_TYPE_APPLEGPU, G14G, simple_call_image(G14G)),
            (CPU_TYPE_APPLEGPU, G15G, simple_call_image(G15G)),
            (CPU_TYPE_AMDGPU, 0, vec![0; 64]),
        ],
        false,
    )
}

#[test]
fn list_shows_every_slice_and_the_chosen_one() {
    let (_t, p) = write_tmp("multi.archive", &multi_slice_archive());
    let text = ok_out(&[p.to_str().unwrap(), "--list"]);
    let slices: Vec<&str> = text.lines().take(6).collect();
    assert_eq!(
        slices,
        [
            "slice kind      gpu                      decodable chosen",
            "0     AIR64     AIR bitcode              no",
            "1     APPLEGPU  G13G (M1)                yes",
            "2     APPLEGPU  G14G (M2)                yes       *",
            "3     APPLEGPU  G15G (M3)                Apple9",
            "4     AMDGPU    AMD GPU                  no",
        ],
        "{text}"
    );
    // then the chosen slice's functions only
    let funcs: Vec<&str> = text.lines().filter(|l| l.starts_with("compute")).collect();
    assert_eq!(funcs.len(), 2, "{text}");
    assert!(funcs.iter().all(|l| l.ends_with("G14G (M2)")), "{text}");

    let text = ok_out(&[p.to_str().unwrap(), "--list", "--gpu", "G13G"]);
    assert!(
        text.contains("1     APPLEGPU  G13G (M1)                yes       *"),
        "{text}"
    );
    assert!(
        text.contains("2     APPLEGPU  G14G (M2)                yes\n"),
        "{text}"
    );
}

#[test]
fn default_is_the_newest_decodable_slice_and_gpu_picks_one() {
    let (_t, p) = write_tmp("multi2.archive", &multi_slice_archive());
    let p = p.to_str().unwrap();
    let o = run(&[p, "-f", "simple_call"]);
    assert!(o.status.success(), "{}", err(&o));
    let e = err(&o);
    assert!(
        e.contains("note: profiling the G14G (M2) slice, the newest decodable of G13G (M1), G14G (M2); pick another with --gpu"),
        "{e}"
    );
    let text = out(&o);
    assert!(text.contains("· GPU G14G (M2) ·"), "{text}");
    assert!(
        text.contains(
            "note: timed with the G13 table measured on M1: this GPU runs the same instruction set"
        ),
        "{text}"
    );
    for g in ["g13g", "G13G", "applegpu_g13g"] {
        let o = run(&[p, "-f", "simple_call", "--gpu", g]);
        assert!(o.status.success(), "{}", err(&o));
        assert!(out(&o).contains("· GPU G13G (M1) ·"), "{g}: {}", out(&o));
        assert!(!out(&o).contains("note: timed with"), "{}", out(&o));
        assert!(!err(&o).contains("note: profiling"), "{}", err(&o));
    }
}

/// Asserts that the run printed the untimed Apple9 profile for `gpu` (e.g.
/// `G15G`) and exited 4, warning of the encodings no Apple9 source decodes
/// (the code is G13's).
fn assert_g13_code_profiled_as_apple9(o: &std::process::Output, gpu: &str) {
    assert_eq!(o.status.code(), Some(4), "{}", err(o));
    let title = format!("Apple9 (M3/M4/A18 Pro) code ({gpu})");
    assert!(out(o).contains(&title), "{}", out(o));
    assert!(
        err(o).contains("Apple9 encodings no source decodes"),
        "{}",
        err(o)
    );
}

#[test]
fn undecodable_or_absent_slices_are_refused_naming_the_alternatives() {
    let (_t, p) = write_tmp("multi3.archive", &multi_slice_archive());
    let p = p.to_str().unwrap();
    // an Apple9 (M3) slice is read as Apple9 (issue 28; cli_apple9): this
    // one holds G13 code, so the untimed profile warns of unknown encodings
    let o = run(&[p, "--gpu", "g15g"]);
    assert_g13_code_profiled_as_apple9(&o, "G15G");
    let o = run(&[p, "--gpu", "g14s", "--list"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        err(&o).contains(
            "no slice for GPU `g14s` in this archive; it holds: G13G (M1), G14G (M2), G15G (M3)"
        ),
        "{}",
        err(&o)
    );
    // an archive with nothing decodable: listed, refused when profiled
    let only15 = fat(&[(CPU_TYPE_APPLEGPU, G15G, simple_call_image(G15G))], false);
    let (_t2, q) = write_tmp("g15.archive", &only15);
    let q = q.to_str().unwrap();
    let o = run(&[q, "--list"]);
    assert_prints(&o, "0     APPLEGPU  G15G (M3)                Apple9");
    let o = run(&[q]);
    let e = one_line_error(&o, 1);
    assert!(
        e.contains("native code for GPU G15G (M3) only: decoding supports G13 (M1) and G14 (M2) code; \
                    get a decodable slice on any Mac with `metal-profile export KERNEL.metal -f NAME --target g14g -o out.archive`"),
        "{e}"
    );
}

/// Drops the fields that name the GPU.
fn without_gpu(mut v: Value) -> Value {
    for k in v["kernels"].as_array_mut().unwrap() {
        let k = k.as_object_mut().unwrap();
        for f in ["gpu", "gpu_name", "timing_note"] {
            assert!(k.remove(f).is_some(), "{f}");
        }
    }
    v
}

fn json(args: &[&str]) -> Value {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {}", err(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// A G14G archive at `name` whose kernel `k` is `prefix` followed by the
/// real `simple_call` main (alone: its call to the helper, not in the
/// archive, is not followed).
fn main_after(prefix: &[u8], name: &str) -> (Tmp, std::path::PathBuf) {
    let mut main = prefix.to_vec();
    main.extend(real("simple_call_compute_shader.bin"));
    write_tmp(
        name,
        &build_test_archive(G14G, Stage::Compute, &main, &[("_k_agc.main", 0)]),
    )
}

/// The JSON profile of kernel `k` of the archive at `p`, unknown encodings
/// allowed.
fn k_json(p: &str) -> Value {
    json(&[p, "-f", "k", "--format", "json", "--allow-unknown"])
}

#[test]
fn g14_slice_profiles_like_the_same_code_in_a_g13_slice() {
    let (_t, p) = write_tmp("multi4.archive", &multi_slice_archive());
    let p = p.to_str().unwrap();
    for part in ["main", "all"] {
        let g14 = json(&[p, "--format", "json", "--gpu", "g14g", "--part", part]);
        let g13 = json(&[p, "--format", "json", "--gpu", "g13g", "--part", part]);
        let k14 = &g14["kernels"][0];
        assert_eq!(k14["gpu"], "G14G");
        assert_eq!(k14["gpu_name"], "G14G (M2)");
        assert!(k14["timing_note"]
            .as_str()
            .unwrap()
            .contains("measured on M1"));
        assert_eq!(k14["model"]["measured_on"], "M1");
        assert_eq!(g13["kernels"][0]["gpu_name"], "G13G (M1)");
        assert_eq!(g13["kernels"][0]["timing_note"], Value::Null);
        assert_eq!(without_gpu(g14), without_gpu(g13), "--part {part}");
    }
    // the text reports differ only in the header's GPU and the timing note
    let t14 = out(&run(&[p, "--gpu", "g14g", "--show-disasm"]));
    let t13 = out(&run(&[p, "--gpu", "g13g", "--show-disasm"]));
    let t14: Vec<String> = t14
        .lines()
        .filter(|l| !l.contains("note: timed with"))
        .map(|l| l.replace("G14G (M2)", "G13G (M1)"))
        .collect();
    let t13: Vec<&str> = t13.lines().collect();
    assert_eq!(t14, t13);
    // and the disassembly is byte-for-byte the same
    assert_eq!(
        out(&run(&[
            p,
            "--gpu",
            "g14g",
            "--disasm-only",
            "--part",
            "all"
        ])),
        out(&run(&[
            p,
            "--gpu",
            "g13g",
            "--disasm-only",
            "--part",
            "all"
        ]))
    );
}

#[test]
fn binary_gpu_labels_raw_code() {
    let bin = repo().join("examples/matmul_naive.bin");
    let bin = bin.to_str().unwrap();
    let v = json(&["--binary", bin, "--gpu", "G14G", "--format", "json"]);
    assert_eq!(v["kernels"][0]["gpu"], "G14G");
    assert_eq!(v["kernels"][0]["gpu_name"], "G14G (M2)");
    assert_eq!(v["kernels"][0]["model"]["gpu"], "G13 (Apple M1 family)");
    let plain = json(&["--binary", bin, "--format", "json"]);
    assert_eq!(plain["kernels"][0]["gpu"], Value::Null);
    // G13 code read as Apple9 (--gpu g16g): the untimed profile, warning
    // of the encodings no source decodes
    let o = run(&["--binary", bin, "--gpu", "g16g"]);
    assert_g13_code_profiled_as_apple9(&o, "G16G");
    let o = run(&["--binary", bin, "--gpu", "g16p"]);
    assert_fails(&o, 1, "--gpu g16p: G16P (iPhone/iPad SoC) code cannot be decoded (decoding supports G13G, G13S, G13C, G13D, G14G, G14S, G14D)");
    let o = run(&["--binary", bin, "--gpu", "m2"]);
    assert_fails(
        &o,
        2,
        "--gpu m2: not a known Apple GPU; use one of: g13g, g13s",
    );
}

/// Every archive-shaped input we have (`examples/`, `python/tests/data/`),
/// each kernel wrapped as a G14 slice beside its G13 self, profiles the same
/// apart from the GPU name; archives added there are checked the same way.
#[test]
fn shipped_archives_rewrapped_as_g14_profile_the_same() {
    let mut checked = 0;
    let mut paths = Vec::new();
    for dir in ["examples", "python/tests/data"] {
        for entry in std::fs::read_dir(repo().join(dir)).unwrap() {
            paths.push(entry.unwrap().path());
        }
    }
    paths.sort();
    for path in paths {
        if path.extension().and_then(|e| e.to_str()) != Some("archive") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let Ok(agx_container::Input::Archive(a)) = metal_profiler::pipeline::read_input(&bytes)
        else {
            // e.g. python/tests/data/truncated.archive, an error-path fixture
            continue;
        };
        // re-slice each G13 image's functions into a G14 twin
        for f in a
            .functions
            .iter()
            .filter(|f| f.part == agx_container::Part::Main)
        {
            let text = a.code(f);
            let syms: Vec<(String, u64)> = a
                .functions
                .iter()
                .filter(|g| g.image == f.image)
                .map(|g| (g.symbol.clone(), g.text_offset))
                .collect();
            let img =
                |sub| gpu_image_stages(sub, &[(f.stage, code_image(text, Some(&sym_refs(&syms))))]);
            let twin = fat(
                &[
                    (CPU_TYPE_APPLEGPU, G13G, img(G13G)),
                    (CPU_TYPE_APPLEGPU, G14G, img(G14G)),
                ],
                false,
            );
            let (_t, p) = write_tmp(&format!("twin{checked}.archive"), &twin);
            let p = p.to_str().unwrap();
            let sym = f.symbol.as_str();
            let g14 = json(&[p, "-f", sym, "--format", "json", "--gpu", "g14g"]);
            let g13 = json(&[p, "-f", sym, "--format", "json", "--gpu", "g13g"]);
            assert_eq!(
                without_gpu(g14),
                without_gpu(g13),
                "{}: {sym}",
                path.display()
            );
            checked += 1;
        }
    }
    assert!(checked >= 5, "only {checked} kernels checked");
}

/// An encoding the G13 tables do not know (as M2's non-returning 64-bit
/// atomic min/max would be) is shown, counted and warned about; the profile
/// goes on with the rest.
#[test]
fn unknown_encodings_are_counted_and_the_profile_goes_on() {
    let (_t, p) = main_after(&[0xff, 0xff], "unknown.archive");
    let p = p.to_str().unwrap();
    // the report is written; exit 4 (unknown encodings) unless --allow-unknown
    let o = run(&[p, "-f", "k"]);
    assert_eq!(o.status.code(), Some(4), "{}", err(&o));
    assert!(run(&[p, "-f", "k", "--allow-unknown"]).status.success());
    assert!(
        err(&o).contains(
            "warning: `_k_agc.main`: 1 position(s) hold encodings the G13 tables do not know"
        ),
        "{}",
        err(&o)
    );
    assert!(
        out(&o).contains("warning: 1 encoding(s) the G13 tables do not know (marked not decoded below; <disassembly failed> in applegpu syntax); left out of the profile"),
        "{}",
        out(&o)
    );
    let v = k_json(p);
    assert_eq!(v["kernels"][0]["unknown_encodings"], 1);
    assert_eq!(v["kernels"][0]["gpu_name"], "G14G (M2)");
    // the rest is exactly the code without the unknown halfword
    let (_t2, q) = main_after(&[], "clean.archive");
    // main alone: its call to the helper (not in this archive) is not
    // followed, a warning and exit 4 (issue 21)
    let o = run(&[q.to_str().unwrap(), "-f", "k"]);
    assert_eq!(o.status.code(), Some(4), "{}", err(&o));
    assert!(
        err(&o).contains("is not followed: no function of the archive starts at 0x-"),
        "{}",
        err(&o)
    );
    let w = k_json(q.to_str().unwrap());
    assert_eq!(
        v["kernels"][0]["instructions"], w["kernels"][0]["instructions"],
        "same instruction count"
    );
    let o = run(&[p, "-f", "k", "--disasm-only"]);
    assert!(
        out(&o).starts_with("   0: ffff                 <disassembly failed>\n"),
        "{}",
        out(&o)
    );
}

/// An unknown encoding whose length its opcode group fixes (first byte 0x0e,
/// the `iadd` group: 8 bytes; bit 15 set matches no form) counts once, prints
/// as one `unknown.alu (8 bytes)` line in native syntax and in the report's
/// annotated disassembly, and the profile is the one of the code without it.
#[test]
fn unknown_encoding_of_known_length_is_one_line_and_counted_once() {
    let (_t, p) = main_after(
        &[0x0e, 0x80, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66],
        "unknown8.archive",
    );
    let p = p.to_str().unwrap();
    let v = k_json(p);
    assert_eq!(v["kernels"][0]["unknown_encodings"], 1);
    let (_t2, q) = main_after(&[], "clean8.archive");
    // (main alone: its call to the helper is not followed, exit 4)
    let w = k_json(q.to_str().unwrap());
    assert_eq!(
        v["kernels"][0]["instructions"],
        w["kernels"][0]["instructions"]
    );
    // the report: warned (exit 4), and the line in place in the annotated
    // disassembly
    let o = run(&[p, "-f", "k"]);
    assert_eq!(o.status.code(), Some(4), "{}", err(&o));
    assert!(
        err(&o).contains("`_k_agc.main`: 1 position(s) hold encodings the G13 tables do not know"),
        "{}",
        err(&o)
    );
    let line = out(&o)
        .lines()
        .find(|l| l.contains("unknown.alu"))
        .map(str::to_string)
        .unwrap_or_else(|| panic!("no unknown line in\n{}", out(&o)));
    assert!(line.contains("   0x0: "), "{line}");
    assert!(line.contains("(8 bytes) 0x0e80112233445566"), "{line}");
    assert!(line.contains("[not decoded]"), "{line}");
    // native listing: one line, then the code at 8; default: applegpu's text
    let o = run(&[p, "-f", "k", "--disasm-only", "--syntax", "native"]);
    let t = out(&o);
    let first = t.lines().next().unwrap_or("");
    assert_eq!(
        first,
        "   0: 0e80112233445566     unknown.alu (8 bytes) 0x0e80112233445566"
    );
    assert!(t.lines().nth(1).unwrap_or("").starts_with("   8: "), "{t}");
    let o = run(&[p, "-f", "k", "--disasm-only"]);
    assert!(
        out(&o).starts_with("   0: 0e80                 <disassembly failed>\n"),
        "{}",
        out(&o)
    );
}
