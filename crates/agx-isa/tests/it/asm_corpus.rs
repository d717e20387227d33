//! Assembler round trip over the applegpu encodings corpus: assembling each
//! case's `asm` (and `asm_cryptic`) text at its `pc` gives bytes that decode
//! to the same text. Cases whose *decode* does not yet match the corpus are
//! counted separately (they cannot round-trip until the decoder does).

use agx_isa::asm::{assemble_at, dont_care_mask};
use agx_isa::forms::FORMS;
use agx_isa::{decode, format_asm, Syntax};
use std::collections::BTreeMap;
use std::path::Path;

use crate::shared_data;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn word(b: &[u8]) -> u128 {
    let mut buf = [0u8; 16];
    buf[..b.len().min(16)].copy_from_slice(&b[..b.len().min(16)]);
    u128::from_le_bytes(buf)
}

#[derive(Default, Debug)]
struct Tally {
    cases: usize,
    decoder_mismatch: usize,
    identical: usize,
    dont_care_only: usize,
    field_bits_differ: usize,
    failed: usize,
    cryptic_ok: usize,
    cryptic_failed: usize,
    failed_forms: BTreeMap<String, (usize, String)>,
}

fn run(path: &Path) -> Tally {
    let text = std::fs::read_to_string(path).unwrap();
    let mut t = Tally::default();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let asm = v["asm"].as_str().unwrap();
        let cryptic = v["asm_cryptic"].as_str().unwrap_or(asm);
        let pc = v["pc"].as_u64().unwrap() as u32;
        let idx = v["idx"].as_u64().unwrap() as usize;
        let orig = hex(v["hex"].as_str().unwrap());
        t.cases += 1;
        let ours = decode(&orig, pc).map(|i| format_asm(&i, Syntax::Default));
        if ours.as_deref().map(str::trim_end) != Ok(asm.trim_end()) {
            t.decoder_mismatch += 1;
            continue;
        }
        let key = format!("{idx:3} {}", FORMS[idx].name);
        let fail = |t: &mut Tally, why: String| {
            t.failed += 1;
            let e = t.failed_forms.entry(key.clone()).or_insert((0, why));
            e.0 += 1;
        };
        match assemble_at(asm, pc) {
            Err(e) => fail(&mut t, format!("{asm:?}: {e}")),
            Ok(b) => {
                let back = decode(&b, pc).map(|i| format_asm(&i, Syntax::Default));
                if back.as_deref().map(str::trim_end) != Ok(asm.trim_end()) {
                    fail(&mut t, format!("{asm:?} -> {back:?}"));
                } else if b == orig {
                    t.identical += 1;
                } else {
                    let diff = word(&b) ^ word(&orig);
                    if b.len() == orig.len()
                        && diff & !dont_care_mask(&FORMS[idx], b.len() as u8) == 0
                    {
                        t.dont_care_only += 1;
                    } else {
                        t.field_bits_differ += 1;
                    }
                }
            }
        }
        match assemble_at(cryptic, pc) {
            Ok(b) => {
                let back = decode(&b, pc).map(|i| format_asm(&i, Syntax::Cryptic));
                if back.as_deref().map(str::trim_end) == Ok(cryptic.trim_end()) {
                    t.cryptic_ok += 1;
                } else {
                    t.cryptic_failed += 1;
                }
            }
            Err(_) => t.cryptic_failed += 1,
        }
    }
    t
}

fn report(name: &str, t: &Tally) {
    eprintln!(
        "{name}: {} cases; decoder differs from corpus: {}; round trip: {} byte-identical, \
         {} differ only in don't-care bits, {} differ in field bits (same text), {} failed; \
         cryptic: {} ok, {} failed",
        t.cases,
        t.decoder_mismatch,
        t.identical,
        t.dont_care_only,
        t.field_bits_differ,
        t.failed,
        t.cryptic_ok,
        t.cryptic_failed
    );
    for (k, (n, ex)) in &t.failed_forms {
        eprintln!("  FAILED form {k}: {n} case(s), e.g. {ex}");
    }
}

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn asm_round_trip_slice() {
    let p = manifest_dir().join("../../testdata/applegpu/encodings.slice.jsonl");
    let t = run(&p);
    report("slice", &t);
    assert!(t.cases > 0);
    assert_eq!(t.failed, 0, "every decodable case must round-trip");
    assert_eq!(t.cryptic_failed, 0);
}

#[test]
fn asm_round_trip_full_corpus() {
    let Some(p) = shared_data::shared("corpus/applegpu/encodings.jsonl") else {
        return;
    };
    let t = run(&p);
    report("full corpus", &t);
    assert_eq!(t.failed, 0, "every decodable case must round-trip");
    assert_eq!(t.cryptic_failed, 0);
}
