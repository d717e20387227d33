//! The access facts against the hand-read labels (issue 27, must-show 1 and
//! 4): for every labelled memory instruction of `testdata/access_labels`
//! (`<set>/<kernel>.json`, the format of its README), the profiler's
//! `lane_pattern` is the label's or `unknown`, never another pattern (and
//! its `lane_stride`, `run`, `jump` agree where both give one), at least 90%
//! of those whose label is known are not `unknown`, and a `loop_stride` the
//! profiler gives equals the label's where the label has a constant (null
//! with a symbolic `loop_stride_expr` is a runtime stride, which the
//! profiler must then not give as a constant; null outside a loop, where it
//! must give none). Every label file present is checked, held-out ones
//! included.
//!
//! Inputs are the compact copies in `testdata/` (Mesa corpus, real kernels,
//! the stack tests) where present, else the shared corpus
//! ([`crate::shared_data`]). Where the input records no threadgroup shape
//! (no `layout.json` beside it: the repo's examples), the label's shape,
//! read from the kernel's source, is given with `--threadgroup`, as a user
//! would.

use crate::common;
use crate::shared_data;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn labels_root() -> PathBuf {
    common::repo().join("testdata/access_labels")
}

pub(crate) fn label_files() -> Vec<PathBuf> {
    let mut v = Vec::new();
    let Ok(sets) = std::fs::read_dir(labels_root()) else {
        return v;
    };
    for set in sets.flatten() {
        if !set.path().is_dir() {
            continue;
        }
        for f in std::fs::read_dir(set.path()).unwrap().flatten() {
            if f.path().extension().is_some_and(|e| e == "json") {
                v.push(f.path());
            }
        }
    }
    v.sort();
    v
}

/// The file of a `shared:` input: its testdata copy, else the shared corpus.
pub(crate) fn shared_input(rel: &str) -> Option<PathBuf> {
    let repo = common::repo();
    let base = Path::new(rel).file_name()?.to_owned();
    let candidates = [
        rel.strip_prefix("corpus/mesa/")
            .map(|r| repo.join("testdata/mesa").join(r)),
        rel.strip_prefix("corpus/real/")
            .map(|r| repo.join("testdata/real").join(r)),
        Some(repo.join("testdata/apple_stack").join(&base)),
    ];
    for c in candidates.into_iter().flatten() {
        if c.is_file() {
            return Some(c);
        }
    }
    let dir = Path::new(rel).parent()?.to_str()?.to_string();
    shared_data::shared(&dir).map(|d| d.join(base))
}

/// The profiler's `access` of every instruction (by offset) of every kernel
/// of the label's input, run as the label says (`--threadgroup` from the
/// label where the input records no shape); None when the input is absent.
fn profiled_accesses(label: &serde_json::Value) -> Option<BTreeMap<u64, serde_json::Value>> {
    let input = label["input"].as_str().unwrap();
    let mut args: Vec<String> = Vec::new();
    let file: PathBuf;
    if let Some(rel) = input.strip_prefix("shared:") {
        let p = shared_input(rel)?;
        file = p;
        args.extend(["--binary".to_string(), file.display().to_string()]);
    } else {
        let rest = input.strip_prefix("repo:").expect("repo: or shared: input");
        let mut parts = rest.split_whitespace();
        file = common::repo().join(parts.next().unwrap());
        if file.extension().is_some_and(|e| e == "bin") {
            args.push("--binary".to_string());
        }
        args.push(file.display().to_string());
        args.extend(parts.map(str::to_string));
    }
    let recorded = file
        .parent()
        .is_some_and(|d| d.join("layout.json").is_file());
    if let (false, Some(tg)) = (recorded, label["threadgroup"].as_array()) {
        let dims: Vec<String> = tg.iter().map(|v| v.to_string()).collect();
        args.extend(["--threadgroup".to_string(), dims.join("x")]);
    }
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let doc = common::json(&a);
    // the access of every instruction of every kernel of the document
    let mut rows: BTreeMap<u64, serde_json::Value> = BTreeMap::new();
    for k in doc["kernels"].as_array().unwrap() {
        for r in k["instructions_detail"].as_array().unwrap() {
            if r.get("access").is_some() {
                rows.entry(r["offset"].as_u64().unwrap())
                    .or_insert_with(|| r["access"].clone());
            }
        }
    }
    Some(rows)
}

#[derive(Default)]
struct Tally {
    accesses: usize,
    agree: usize,
    unknown: usize,
    known_label: usize,
    known_label_unknown: usize,
    different: Vec<String>,
    loop_given: usize,
    loop_agree: usize,
    loop_different: Vec<String>,
}

#[test]
fn access_patterns_agree_with_the_labels() {
    let files = label_files();
    assert!(
        !files.is_empty(),
        "no label files under {}",
        labels_root().display()
    );
    let mut by_set: BTreeMap<String, Tally> = BTreeMap::new();
    for f in &files {
        let set = f
            .parent()
            .and_then(|p| p.file_name())
            .unwrap()
            .to_string_lossy()
            .to_string();
        let label: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        let Some(rows) = profiled_accesses(&label) else {
            continue;
        };
        let t = by_set.entry(set).or_default();
        let name = f.file_stem().unwrap().to_string_lossy().to_string();
        for l in label["accesses"].as_array().unwrap() {
            if l["stack_kind"] == "adjust" {
                continue; // a stack-pointer adjust moves no data
            }
            let off = l["offset"].as_str().unwrap();
            let off = u64::from_str_radix(off.trim_start_matches("0x"), 16).unwrap();
            let want = l["lane_pattern"].as_str().unwrap();
            t.accesses += 1;
            if want != "unknown" {
                t.known_label += 1;
            }
            // an instruction the record does not reach (a helper's) counts
            // as unknown
            let Some(acc) = rows.get(&off) else {
                t.unknown += 1;
                if want != "unknown" {
                    t.known_label_unknown += 1;
                }
                continue;
            };
            let got = acc["lane_pattern"].as_str().unwrap();
            let at = format!("{name} 0x{off:x} {}", l["mnemonic"]);
            if got == "unknown" {
                t.unknown += 1;
                if want != "unknown" {
                    t.known_label_unknown += 1;
                }
            } else if want == "unknown" || got == want {
                let mut same = true;
                for k in ["lane_stride", "run", "jump"] {
                    if want != "unknown" && !acc[k].is_null() && !l[k].is_null() && acc[k] != l[k] {
                        same = false;
                    }
                }
                if same {
                    t.agree += 1;
                } else {
                    t.different.push(format!(
                        "{at}: {got} stride {} run {} jump {}, label stride {} run {} jump {}",
                        acc["lane_stride"],
                        acc["run"],
                        acc["jump"],
                        l["lane_stride"],
                        l["run"],
                        l["jump"]
                    ));
                }
            } else {
                t.different.push(format!("{at}: {got}, label {want}"));
            }
            if let Some(ls) = acc["loop_stride"].as_i64() {
                t.loop_given += 1;
                if l["loop"].is_null() {
                    t.loop_different
                        .push(format!("{at}: loop_stride {ls} outside any labelled loop"));
                } else if l["loop_stride"].as_i64() == Some(ls) {
                    t.loop_agree += 1;
                } else {
                    t.loop_different.push(format!(
                        "{at}: loop_stride {ls}, label {} {}",
                        l["loop_stride"], l["loop_stride_expr"]
                    ));
                }
            }
        }
    }
    // the table (docs/analysis.md, "Access patterns against the labels")
    let mut total = Tally::default();
    eprintln!(
        "| set | accesses | agree | unknown | different | loop_stride given | agree | different |"
    );
    eprintln!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (set, t) in &by_set {
        eprintln!(
            "| {set} | {} | {} | {} | {} | {} | {} | {} |",
            t.accesses,
            t.agree,
            t.unknown,
            t.different.len(),
            t.loop_given,
            t.loop_agree,
            t.loop_different.len()
        );
        total.accesses += t.accesses;
        total.agree += t.agree;
        total.unknown += t.unknown;
        total.known_label += t.known_label;
        total.known_label_unknown += t.known_label_unknown;
        total.different.extend(t.different.iter().cloned());
        total.loop_given += t.loop_given;
        total.loop_agree += t.loop_agree;
        total
            .loop_different
            .extend(t.loop_different.iter().cloned());
    }
    eprintln!(
        "| all | {} | {} | {} | {} | {} | {} | {} |",
        total.accesses,
        total.agree,
        total.unknown,
        total.different.len(),
        total.loop_given,
        total.loop_agree,
        total.loop_different.len()
    );
    let known = total.known_label - total.known_label_unknown;
    eprintln!(
        "known where the label is known: {known} of {} ({:.1}%)",
        total.known_label,
        100.0 * known as f64 / total.known_label.max(1) as f64
    );
    assert!(
        total.different.is_empty(),
        "patterns different from the labels:\n{}",
        total.different.join("\n")
    );
    assert!(
        total.loop_different.is_empty(),
        "loop strides different from the labels:\n{}",
        total.loop_different.join("\n")
    );
    assert!(total.accesses > 0);
    assert!(
        known * 10 >= total.known_label * 9,
        "only {known} of {} labelled patterns known (< 90%)",
        total.known_label
    );
}

/// `access.reuse` against the hand-read reuse labels (issue 35, must-show
/// 1): for every labelled device/texture load (`reuse` not null), the
/// profiler's `threads`, `grid_dimension` and `iterations` are the
/// label's (agree), or the profiler says it does not know (`known`
/// false: the address goes through loaded data or is not followed), or
/// they differ (wrong). Prints the disagreement table; wrong stays within
/// 2% of the labelled loads.
#[test]
fn access_reuse_agrees_with_the_labels() {
    let (mut labelled, mut agree, mut unknown) = (0usize, 0usize, Vec::new());
    let mut wrong = Vec::new();
    for f in label_files() {
        let label: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let want: Vec<&serde_json::Value> = label["accesses"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l.get("reuse").is_some_and(|r| !r.is_null()))
            .collect();
        if want.is_empty() {
            continue;
        }
        let Some(rows) = profiled_accesses(&label) else {
            continue;
        };
        let name = format!(
            "{}/{}",
            f.parent().unwrap().file_name().unwrap().to_string_lossy(),
            f.file_stem().unwrap().to_string_lossy()
        );
        for l in want {
            labelled += 1;
            let off = l["offset"].as_str().unwrap();
            let at = format!("{name} {off}");
            let off = u64::from_str_radix(off.trim_start_matches("0x"), 16).unwrap();
            let r = &l["reuse"];
            let Some(got) = rows.get(&off).map(|a| &a["reuse"]) else {
                unknown.push(format!("{at}: not in the record"));
                continue;
            };
            let same = ["threads", "grid_dimension", "iterations"]
                .iter()
                .all(|k| got[k] == r[k]);
            let row = format!(
                "| {at} | {} {} {} | {} {} {} | {} |",
                r["threads"],
                r["grid_dimension"],
                r["iterations"],
                got["threads"],
                got["grid_dimension"],
                got["iterations"],
                r["why"].as_str().unwrap_or("")
            );
            if same {
                agree += 1;
            } else if got["known"] == false {
                unknown.push(row);
            } else {
                wrong.push(row);
            }
        }
    }
    eprintln!(
        "reuse against the labels: {labelled} labelled loads, agree {agree}, unknown {}, wrong {}",
        unknown.len(),
        wrong.len()
    );
    eprintln!("| load | label threads grid iterations | profiler | label's reason |");
    eprintln!("| --- | --- | --- | --- |");
    for r in wrong.iter().map(|r| format!("{r} wrong")) {
        eprintln!("{r}");
    }
    for r in &unknown {
        eprintln!("{r} unknown");
    }
    assert!(labelled >= 100, "only {labelled} reuse labels found");
    assert!(
        wrong.len() * 50 <= labelled,
        "access.reuse wrong on {} of {labelled} labelled loads (> 2%)",
        wrong.len()
    );
    // the data-dependent ones the code cannot decide (docs/analysis.md)
    assert!(
        unknown.len() <= REUSE_UNKNOWN,
        "access.reuse unknown on {} of {labelled}",
        unknown.len()
    );
}

/// Loads whose reuse the profiler does not know (the reached figure).
const REUSE_UNKNOWN: usize = 22;
