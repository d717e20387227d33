//! Snapshot tests (insta) of the text report for every Mesa kernel in
//! testdata/mesa and every Apple-compiled kernel in
//! testdata/real/marysaka_applegpu_stack_tests, plus the JSON of the shipped
//! example. A change to the model or the layout shows up as a reviewable
//! diff: `INSTA_UPDATE=always cargo test -p agx-report --test snapshots`
//! rewrites them.

use agx_isa::stream::walk;
use agx_report::{json, text, Options, Profile};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn profile(name: &str, code: &[u8]) -> Profile {
    let insns: Vec<_> = walk(code, 0).filter_map(|i| i.into_insn()).collect();
    Profile::build(
        name.to_string(),
        None,
        insns,
        None,
        vec![],
        &Options::default(),
    )
}

fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path(repo().join("crates/agx-report/tests/snapshots"));
    s.set_prepend_module_to_snapshot(false);
    s
}

#[test]
fn mesa_kernel_reports() {
    let dir = repo().join("testdata/mesa");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
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
    let mut bins: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().and_then(|x| x.to_str()) == Some("bin"))
        .collect();
    bins.sort();
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
        "── Pipeline cycles",
        "── Critical path ──",
        "── Loop 0",
        "Wait stall:",
        "── Instruction mix ──",
        "── Annotated disassembly ──",
        "◀◀◀ STALL",
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
            >= 2,
        "{r}"
    );
}
