//! Checks the analysis against Mesa's own shader-db statistics on every
//! kernel of the Mesa corpus (testdata/mesa, copied from
//! shared/corpus/mesa; and shared/corpus/mesa itself when present).
//!
//! Main is decoded from offset 0 with `agx_isa::stream::walk` over
//! `bin[..layout.main.size]` (applegpu's walk stops at the first `stop`).
//!
//! Stats and their definitions (shared/corpus/mesa/README.md):
//! * `inst` = machine instructions of main including `stop` → `instructions`
//! * `regs` = highest 16-bit half-register index used → `highest_half_index`
//! * `threads` = occupancy table applied to `regs` → `occupancy.threads`
//! * `loops` = NIR loops emitted; "in every one of the 113 kernels, `loops`
//!   equals the number of backward branches in the machine code of main".
//!   The machine-code definition is the backward-branch count
//!   (`backward_branches`); the number of natural loops found is checked to
//!   agree too.
//! * `spills`/`fills` = `stack_store`/`stack_load` inserted by RA, the entry
//!   `stack_adjust` excluded; the adjust's amount is checked against
//!   `layout.json` `scratch_size_dwords`.

use agx_analysis::analyze;
use serde_json::Value;
use std::path::{Path, PathBuf};

use crate::shared_data;

fn kernel_dirs(root: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.join("stats.json").exists() && p.join("layout.json").exists())
        .collect();
    v.sort();
    v
}

struct Tally {
    name: &'static str,
    ok: usize,
    total: usize,
}

fn check_root(root: &Path) -> (usize, Vec<String>, Vec<Tally>) {
    let dirs = kernel_dirs(root);
    let mut mismatches = Vec::new();
    let names = [
        "inst",
        "regs",
        "threads",
        "loops(backward branches)",
        "loops(natural loops)",
        "spills",
        "fills",
        "scratch_size_dwords",
    ];
    let mut tallies: Vec<Tally> = names
        .iter()
        .map(|&n| Tally {
            name: n,
            ok: 0,
            total: 0,
        })
        .collect();
    for dir in &dirs {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let stats: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("stats.json")).unwrap())
                .unwrap();
        let layout: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("layout.json")).unwrap())
                .unwrap();
        let bin = std::fs::read(dir.join(format!("{name}.bin"))).unwrap();
        let size = layout["main"]["size"].as_u64().unwrap() as usize;
        let insns: Vec<_> = agx_isa::stream::walk(&bin[..size.min(bin.len())], 0)
            .filter_map(|it| it.into_insn())
            .collect();
        let a = analyze(&insns);
        let st = |k: &str| stats[k].as_u64().unwrap_or(u64::MAX);
        let scratch = layout["scratch_size_dwords"].as_u64().unwrap_or(0);
        let got_scratch = a.stack.scratch_reserved.unwrap_or(0) as u64;
        let checks: [(u64, u64); 8] = [
            (a.instructions as u64, st("inst")),
            (a.registers.highest_half_index as u64, st("regs")),
            (a.occupancy.threads as u64, st("threads")),
            (a.backward_branches as u64, st("loops")),
            (a.loops.len() as u64, st("loops")),
            (a.spills as u64, st("spills")),
            (a.fills as u64, st("fills")),
            (got_scratch, scratch),
        ];
        for (k, (got, want)) in checks.iter().enumerate() {
            tallies[k].total += 1;
            if got == want {
                tallies[k].ok += 1;
            } else {
                mismatches.push(format!(
                    "{name}: {} = {got}, Mesa says {want}",
                    tallies[k].name
                ));
            }
        }
    }
    (dirs.len(), mismatches, tallies)
}

fn run(root: &Path) {
    let (n, mismatches, tallies) = check_root(root);
    if n == 0 {
        return;
    }
    eprintln!("{}: {n} kernels", root.display());
    for t in &tallies {
        eprintln!("  {:<26} {}/{}", t.name, t.ok, t.total);
    }
    for m in &mismatches {
        eprintln!("  MISMATCH {m}");
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches against Mesa stats under {}",
        mismatches.len(),
        root.display()
    );
}

#[test]
fn mesa_testdata_matches_shader_db_stats() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/mesa");
    let (n, _, _) = check_root(&root);
    assert_eq!(n, 37, "expected the 37 kernels copied under testdata/mesa");
    run(&root);
}

#[test]
fn mesa_shared_corpus_matches_shader_db_stats() {
    let Some(root) = shared_data::shared("corpus/mesa") else {
        return;
    };
    let (n, _, _) = check_root(&root);
    assert!(n >= 37, "{n} kernels under {}", root.display());
    run(&root);
}
