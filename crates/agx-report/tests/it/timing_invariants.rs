//! The timing model's published figures hold together on every corpus
//! kernel (Mesa, real Apple/Asahi code, hand-written assembly, examples):
//! the breakdown sums to `total_cycles`, each loop's `cycles_per_iteration`
//! equals `bound.cycles`, the largest bound component, attained by `by`,
//! and the uniform paths bracket the total. The shared corpus
//! (`../shared/corpus`, not in testdata) is the held-out set; under
//! `CI=true` its absence fails the test.

use agx_isa::stream::walk;
use agx_report::{json, Options, Profile};
use std::path::{Path, PathBuf};

use crate::common::repo;
use crate::shared_data;

/// Every `.bin` under `dir` (recursively), cut to `main` when a
/// `layout.json` beside it says so.
fn bins(dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    for p in shared_data::files_with_ext(dir, "bin") {
        let Ok(mut bin) = std::fs::read(&p) else {
            continue;
        };
        if let Ok(layout) = std::fs::read_to_string(p.with_file_name("layout.json")) {
            let v: serde_json::Value = serde_json::from_str(&layout).unwrap();
            if let Some(size) = v["main"]["size"].as_u64() {
                bin.truncate(size as usize);
            }
        }
        out.push((p.display().to_string(), bin));
    }
}

fn check(name: &str, bin: &[u8], opts: &Options) -> usize {
    let insns: Vec<_> = walk(bin, 0).filter_map(|i| i.into_insn()).collect();
    if insns.is_empty() {
        return 0;
    }
    let has_mem = insns.iter().any(|i| i.mem_access().is_some());
    let p = Profile::build(name.to_string(), None, insns, None, vec![], opts);
    let t = &p.timing;
    // Rust-level: exact up to float rounding
    let sum: f64 = t.breakdown.iter().map(|b| b.cycles).sum();
    assert!(
        (sum - t.total_cycles).abs() < 1e-6,
        "{name}: parts {sum} vs total {}",
        t.total_cycles
    );
    assert!(
        t.paths.shortest <= t.paths.longest + 1e-9,
        "{name}: {:?}",
        t.paths
    );
    assert!(
        t.paths.longest <= t.total_cycles + 1e-9,
        "{name}: {:?} vs {}",
        t.paths,
        t.total_cycles
    );
    for l in &t.loops {
        let max = l
            .bound
            .components
            .values()
            .copied()
            .fold(f64::MIN, f64::max);
        assert_eq!(l.cycles_per_iteration, l.bound.cycles, "{name}");
        assert_eq!(l.bound.cycles, max, "{name}");
        assert_eq!(l.bound.components[l.bound.by], l.bound.cycles, "{name}");
        let own_max = l
            .body
            .bound
            .components
            .values()
            .copied()
            .fold(f64::MIN, f64::max);
        assert_eq!(l.body.bound.cycles, own_max, "{name}");
    }
    // JSON: the same facts after 2-decimal rounding
    let doc: serde_json::Value = serde_json::from_str(&json::document(&[p])).unwrap();
    let k = &doc["kernels"][0];
    let total = k["total_cycles"].as_f64().unwrap();
    let parts = k["breakdown"].as_array().unwrap();
    let sum: f64 = parts.iter().map(|b| b["cycles"].as_f64().unwrap()).sum();
    assert!(
        (sum - total).abs() <= 0.005 * (parts.len() as f64 + 1.0) + 1e-9,
        "{name}: breakdown {sum} vs total {total}"
    );
    let (s, l) = (
        k["paths"]["shortest"].as_f64().unwrap(),
        k["paths"]["longest"].as_f64().unwrap(),
    );
    assert!(s <= l && l <= total, "{name}: paths {s} {l} total {total}");
    for lp in k["loops"].as_array().unwrap() {
        let b = &lp["bound"];
        if b.is_null() {
            continue;
        }
        let cyc = b["cycles"].as_f64().unwrap();
        let max = b["components"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_f64().unwrap())
            .fold(f64::MIN, f64::max);
        assert_eq!(lp["cycles_per_iteration"].as_f64().unwrap(), cyc, "{name}");
        assert_eq!(cyc, max, "{name}");
        assert_eq!(
            b["components"][b["by"].as_str().unwrap()].as_f64().unwrap(),
            cyc,
            "{name}"
        );
    }
    let c = &k["cycles"];
    let f = |n: &str| c[n].as_f64().unwrap();
    let alu = (f("f32") + f("f16") + f("scib")).max(f("ic"));
    assert!(
        (f("alu") - alu).abs() <= 0.02,
        "{name}: alu {} vs {alu}",
        f("alu")
    );
    // cycles.mem is the weighted sum of the regions' memory stalls, which
    // are the waits' exposed stalls: it never exceeds the total
    assert!(f("mem") <= total + 0.01, "{name}");
    if !has_mem {
        assert_eq!(
            k["cycles"]["mem"].as_f64().unwrap(),
            0.0,
            "{name}: no memory instruction"
        );
    }
    1
}

fn walk_all(dirs: &[PathBuf]) -> usize {
    let mut ks = Vec::new();
    for d in dirs {
        bins(d, &mut ks);
    }
    let other = Options {
        trip_count: 7,
        trip_count_given: true,
        mem: agx_analysis::timing::MemParams {
            l1_hit_rate: Some(0.9),
            ..Default::default()
        },
        graph: true,
        ..Options::default()
    };
    let mut n = 0;
    for (name, bin) in &ks {
        n += check(name, bin, &Options::default());
        check(name, bin, &other);
    }
    n
}

#[test]
fn invariants_hold_on_every_testdata_kernel() {
    let r = repo();
    let n = walk_all(&[
        r.join("testdata/mesa"),
        r.join("testdata/real"),
        r.join("testdata/apple_stack"),
        r.join("testdata/asm"),
        r.join("examples"),
    ]);
    assert!(n >= 60, "only {n} kernels found in testdata/examples");
    eprintln!("timing invariants hold on {n} testdata kernels");
}

#[test]
fn invariants_hold_on_the_held_out_shared_corpus() {
    let shared = shared_data::shared_root().join("corpus");
    if !shared.is_dir() {
        // a panic under CI=true
        shared_data::skip("../shared/corpus is missing");
        return;
    }
    let n = walk_all(&[shared.join("mesa"), shared.join("real")]);
    assert!(n >= 37, "only {n} kernels in ../shared/corpus");
    eprintln!("timing invariants hold on {n} held-out shared-corpus kernels");
}
