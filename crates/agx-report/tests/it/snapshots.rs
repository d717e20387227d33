//! Snapshot tests (insta) of the text report for every Mesa kernel in
//! testdata/mesa and every Apple-compiled kernel in
//! testdata/real/marysaka_applegpu_stack_tests, plus the JSON of the shipped
//! example. A change to the model or the layout shows up as a reviewable
//! diff: `INSTA_UPDATE=always cargo test -p agx-report --test snapshots`
//! rewrites them.

use crate::common::{profile, repo};
use crate::shared_data;
use agx_report::{json, text, Options, Profile};

fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path(repo().join("crates/agx-report/tests/snapshots"));
    s.set_prepend_module_to_snapshot(false);
    s
}

#[test]
fn mesa_kernel_reports() {
    let dir = repo().join("testdata/mesa");
    let names: Vec<String> = crate::shared_data::subdirs(&dir)
        .iter()
        .map(|d| d.file_name().unwrap().to_string_lossy().to_string())
        .collect();
    assert!(names.len() >= 37);
    let s = settings();
    for name in names {
        let bin = std::fs::read(dir.join(&name).join(format!("{name}.bin"))).unwrap();
        let p = profile(&name, &bin);
        s.bind(|| insta::assert_snapshot!(format!("mesa__{name}"), text::report(&p, false)));
    }
}

#[test]
fn apple_kernel_reports() {
    let dir = repo().join("testdata/real/marysaka_applegpu_stack_tests");
    let bins = shared_data::files_with_ext(&dir, "bin");
    assert!(bins.len() >= 5);
    let s = settings();
    for b in bins {
        let name = b.file_stem().unwrap().to_string_lossy().to_string();
        let p = profile(&name, &std::fs::read(&b).unwrap());
        s.bind(|| insta::assert_snapshot!(format!("apple__{name}"), text::report(&p, false)));
    }
}

#[test]
fn example_json() {
    let bin = std::fs::read(repo().join("examples/matmul_naive.bin")).unwrap();
    let p = profile("matmul_naive", &bin);
    settings().bind(|| insta::assert_snapshot!("example__matmul_naive_json", json::document(&[p])));
}

#[test]
fn example_report_shows_every_section() {
    let bin = std::fs::read(repo().join("examples/matmul_naive.bin")).unwrap();
    let r = text::report(&profile("matmul_naive", &bin), false);
    for section in [
        "metal-profiler: matmul_naive",
        "── Registers & Occupancy ──",
        "── Pipe cycles",
        "── Critical path ──",
        "── Loop 0",
        "Cost/iter:",
        "Bounds/iter:",
        "Uniform paths:",
        "── Instruction mix ──",
        "── Annotated disassembly ──",
        "◀ stall hidden",
        "── Suggestions ──",
    ] {
        assert!(r.contains(section), "missing {section:?} in\n{r}");
    }
    let suggestions = r.split("── Suggestions ──").nth(1).unwrap();
    assert!(
        suggestions
            .lines()
            .filter(|l| l.contains('🔴') || l.contains('🟡') || l.contains('🟢'))
            .count()
            >= 1
            // with a 32x1x1 threadgroup (the default shape) matmul_naive's
            // loads are uniform and contiguous and no data is re-read by the
            // threadgroup: no tiling advice is a finding of its own (issue 27)
            || suggestions.contains("No problems found by the rules"),
        "{r}"
    );
}

#[test]
fn example_text_report() {
    let bin = std::fs::read(repo().join("examples/matmul_naive.bin")).unwrap();
    let r = text::report(&profile("matmul_naive", &bin), false);
    settings().bind(|| insta::assert_snapshot!("example__matmul_naive_text", r));
}

/// The text prints the figures the JSON carries: one cost per loop, one
/// stall figure per wait, the same total; at full occupancy and at low
/// occupancy (where the waits' stalls are exposed).
#[test]
fn text_and_json_agree_on_matmul_naive() {
    let bin = std::fs::read(repo().join("examples/matmul_naive.bin")).unwrap();
    for hit in [0.5, 1.0] {
        let mut opts = Options::default();
        opts.mem.l1_hit_rate = Some(hit);
        let insns: Vec<_> = agx_isa::stream::walk(&bin, 0)
            .filter_map(|i| i.into_insn())
            .collect();
        let mut p = Profile::build("matmul_naive".into(), None, insns, None, vec![], &opts);
        for threads in [1024, 128] {
            let mut params = p.timing.params.clone();
            params.threads_per_core = threads;
            p.timing = agx_analysis::timing::analyze_kernel(&p.insns, &params);
            let r = text::report(&p, false);
            let doc: serde_json::Value =
                serde_json::from_str(&json::document(&[p.clone()])).unwrap();
            let k = &doc["kernels"][0];
            let fmt = |x: f64| agx_analysis::timing::model::fmt_cy(x);
            let total = k["total_cycles"].as_f64().unwrap();
            assert!(
                r.contains(&format!("~{} cy per SIMD-group", fmt(total))),
                "{r}"
            );
            for l in k["loops"].as_array().unwrap() {
                let cpi = l["cycles_per_iteration"].as_f64().unwrap();
                assert_eq!(cpi, l["bound"]["cycles"].as_f64().unwrap());
                let line = format!("Cost/iter:        {} cy, bound by", fmt(cpi));
                assert_eq!(
                    r.matches(&line).count(),
                    1,
                    "one cost per loop: {line}
{r}"
                );
            }
            for d in k["instructions_detail"].as_array().unwrap() {
                if d["mnemonic"] != "wait" {
                    continue;
                }
                let stall = d["stall"].as_f64().unwrap();
                let off = d["offset"].as_u64().unwrap();
                let line = r
                    .lines()
                    .find(|l| l.contains(&format!(" 0x{off:x}: wait ")))
                    .unwrap();
                let figures = line.matches(" cy").count();
                if stall >= 0.5 {
                    assert!(
                        line.contains(&format!("STALL ~{} cy exposed", fmt(stall))),
                        "{line}"
                    );
                    assert_eq!(figures, 1, "one stall figure per wait: {line}");
                } else {
                    assert_eq!(figures, 0, "{line}");
                }
            }
        }
    }
}
