//! Instruction facts are data (issue #20 item 2): the figures, the
//! suggestions and the instruction mix read one classification of each
//! instruction (the generated form columns, refined once in
//! `agx_isa::semantics` for the encodings applegpu shadows), so they agree
//! with each other and with the listing.

use crate::common;
use common::*;
use std::collections::BTreeMap;

/// `metal-profile ARGS` with `code` on stdin (`--binary -`), stdout.
fn profile(code: &[u8], args: &[&str]) -> String {
    let mut a = vec!["--binary", "-", "--color", "never"];
    a.extend_from_slice(args);
    let o = run_stdin(&a, code);
    assert!(o.status.success(), "{}", err(&o));
    out(&o)
}

fn json(code: &[u8]) -> serde_json::Value {
    serde_json::from_str(&profile(code, &["--format", "json"])).unwrap()
}

/// `stack_get_ptr 2, 1, 0, 4, 4, r3` (applegpu prints it as
/// `stack_load r3, i32, 1, 0, x, 4, r0, 0`), then `stop`.
const GET_PTR: &[u8] = &[0x35, 0x1a, 0x01, 0x04, 0x00, 0xc0, 0x12, 0x00, 0x88, 0x00];
/// A real fill: `stack_load r1, i32, 1, 0, x, 4, 0, 0` (apple_stack
/// simple_s32 at 0x140), then `stop`.
const FILL: &[u8] = &[0x35, 0x0a, 0x00, 0x05, 0x00, 0xc0, 0x12, 0x00, 0x88, 0x00];

fn spill_suggestions(v: &serde_json::Value) -> Vec<String> {
    v["kernels"][0]["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["rule"] == "spills")
        .map(|s| s["message"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_lone_stack_get_ptr_is_no_fill_in_the_figures_nor_in_the_suggestions() {
    let listing = profile(GET_PTR, &["--disasm-only", "--syntax", "native"]);
    assert!(listing.contains("stack_get_ptr"), "{listing}");
    let v = json(GET_PTR);
    let k = &v["kernels"][0];
    assert_eq!(k["fills"], 0);
    assert_eq!(k["spills"], 0);
    assert_eq!(spill_suggestions(&v), Vec::<String>::new());
    // it moves no data: not priced as a memory instruction
    assert_ne!(k["instructions_detail"][0]["unit"], "MEM");
    let text = profile(GET_PTR, &[]);
    assert!(!text.contains("fills"), "{text}");
    assert!(text.contains("stack_get_ptr 1"), "the mix names it: {text}");
}

#[test]
fn a_real_fill_counts_once_everywhere() {
    let listing = profile(FILL, &["--disasm-only", "--syntax", "native"]);
    assert!(listing.contains("stack_load"), "{listing}");
    let v = json(FILL);
    assert_eq!(v["kernels"][0]["fills"], 1);
    let s = spill_suggestions(&v);
    assert_eq!(s.len(), 1);
    assert!(s[0].starts_with("0 spill stores and 1 fills"), "{}", s[0]);
    assert_eq!(v["kernels"][0]["instructions_detail"][0]["unit"], "MEM");
}

/// `mnemonic -> count` of the annotated disassembly of a text report.
fn listing_counts(text: &str) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    let mut inside = false;
    for line in text.lines() {
        if line.contains("── Annotated disassembly ──") {
            inside = true;
            continue;
        }
        if inside && line.trim_start().starts_with("── ") {
            break;
        }
        if !inside {
            continue;
        }
        // `  │ │   1a4: mnemonic   [UNIT ...] operands`
        let Some((addr, rest)) = line.split_once(": ") else {
            continue;
        };
        let addr = addr.trim_start_matches([' ', '│']).trim();
        let Some(addr) = addr.strip_prefix("0x") else {
            continue;
        };
        if addr.is_empty() || !addr.chars().all(|c| c.is_ascii_hexdigit()) {
            continue;
        }
        if let Some(m) = rest.split_whitespace().next() {
            *out.entry(m.to_string()).or_insert(0) += 1;
        }
    }
    out
}

/// `(mnemonic, count)` of the mix's `top:` line.
fn mix_top(text: &str) -> Vec<(String, usize)> {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("top:"))
        .expect("a mix");
    line.trim_start()
        .trim_start_matches("top:")
        .split(" · ")
        .map(|e| {
            let (m, n) = e.trim().rsplit_once(' ').unwrap();
            (m.to_string(), n.parse().unwrap())
        })
        .collect()
}

#[test]
fn the_mix_names_what_the_listing_shows() {
    // kernels with stack adjusts (applegpu: `stack_store`; the listing:
    // `stack_adjust`) and real spills
    let dir = repo().join("testdata/apple_stack");
    let mut seen_adjust = false;
    for name in [
        "simple_s32_compute_shader.bin",
        "simple_s16_compute_shader.bin",
        "simple_call_compute_l__Z6helperPU9MTLdeviceKjj.bin",
    ] {
        let code = std::fs::read(dir.join(name)).unwrap();
        let text = profile(&code, &[]);
        let listing = listing_counts(&text);
        assert!(!listing.is_empty(), "{name}: no listing parsed");
        for (m, n) in mix_top(&text) {
            assert_eq!(
                listing.get(&m).copied(),
                Some(n),
                "{name}: the mix says {m} {n}, the listing {listing:?}"
            );
        }
        seen_adjust |= listing.contains_key("stack_adjust");
        // a stack adjust is not a spill: the mix's stack_store count is
        // the spill count of the figures
        let v: serde_json::Value =
            serde_json::from_str(&profile(&code, &["--format", "json"])).unwrap();
        // the JSON mix is the same mix, complete
        let json_mix: BTreeMap<String, usize> = v["kernels"][0]["mix"]["by_mnemonic"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["mnemonic"].as_str().unwrap().to_string(),
                    e["count"].as_u64().unwrap() as usize,
                )
            })
            .collect();
        assert_eq!(json_mix, listing, "{name}: JSON mix");
        let spills = v["kernels"][0]["spills"].as_u64().unwrap() as usize;
        assert_eq!(
            listing.get("stack_store").copied().unwrap_or(0),
            spills,
            "{name}"
        );
    }
    assert!(seen_adjust, "the slice has stack adjusts");
}
