//! Threadgroup bank conflicts against the labels (issue 35 items 3 and 7):
//! for every threadgroup access of `testdata/access_labels` with a
//! `bank_ways` label (README, "Bank ways"), the record's
//! `access.bank_conflict_ways` is the label's or null, never another
//! number, and at least 90% of the labels that give a number are known.
//! The table it prints is docs/analysis.md's "Bank ways against the
//! labels".

use crate::access_labels::{label_files, shared_input};
use crate::common;
use std::collections::BTreeMap;

#[derive(Default)]
struct Tally {
    accesses: usize,
    equal: usize,
    unknown: usize,
    wrong: Vec<String>,
    label_known: usize,
    label_known_unknown: usize,
}

/// The record's access facts by instruction offset.
fn accesses(bin: &str) -> BTreeMap<u64, serde_json::Value> {
    let doc = common::json(&["--binary", bin]);
    let mut rows = BTreeMap::new();
    for k in doc["kernels"].as_array().unwrap() {
        for r in k["instructions_detail"].as_array().unwrap() {
            if let Some(a) = r.get("access") {
                rows.entry(r["offset"].as_u64().unwrap())
                    .or_insert_with(|| a.clone());
            }
        }
    }
    rows
}

#[test]
fn tgmem_bank_ways_agree_with_the_labels() {
    let mut t = Tally::default();
    for f in label_files() {
        let label: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let tg: Vec<&serde_json::Value> = label["accesses"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["space"] == "threadgroup" && a.get("bank_ways").is_some())
            .collect();
        if tg.is_empty() {
            continue;
        }
        // threadgroup accesses are labelled on the Mesa set, whose inputs
        // record their threadgroup shape (layout.json)
        let Some(rel) = label["input"].as_str().unwrap().strip_prefix("shared:") else {
            continue;
        };
        let Some(bin) = shared_input(rel) else {
            continue;
        };
        let rows = accesses(&bin.display().to_string());
        let name = f.file_stem().unwrap().to_string_lossy().to_string();
        for l in tg {
            let off = l["offset"].as_str().unwrap();
            let off = u64::from_str_radix(off.trim_start_matches("0x"), 16).unwrap();
            let want = l["bank_ways"].as_u64();
            t.accesses += 1;
            t.label_known += want.is_some() as usize;
            let got = rows
                .get(&off)
                .and_then(|a| a["bank_conflict_ways"].as_u64());
            match (got, want) {
                (None, w) => {
                    t.unknown += 1;
                    t.label_known_unknown += w.is_some() as usize;
                }
                (Some(g), Some(w)) if g == w => t.equal += 1,
                (Some(g), w) => t.wrong.push(format!("{name} 0x{off:x}: {g}, label {w:?}")),
            }
        }
    }
    eprintln!("| threadgroup accesses | equal | unknown | wrong |");
    eprintln!("| ---: | ---: | ---: | ---: |");
    eprintln!(
        "| {} | {} | {} | {} |",
        t.accesses,
        t.equal,
        t.unknown,
        t.wrong.len()
    );
    assert!(t.accesses > 0, "no labelled threadgroup access was checked");
    assert!(
        t.wrong.is_empty(),
        "bank ways different from the labels:\n{}",
        t.wrong.join("\n")
    );
    let known = t.label_known - t.label_known_unknown;
    assert!(
        known * 10 >= t.label_known * 9,
        "only {known} of {} labelled bank ways known (< 90%)",
        t.label_known
    );
}
