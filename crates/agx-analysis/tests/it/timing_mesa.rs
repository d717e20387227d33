//! `mesa_estimate` must equal Mesa's own shader-db `alu`/`fscib`/`ic` on every
//! corpus kernel.

use agx_analysis::timing::mesa_estimate;
use agx_isa::Instruction;
use std::path::{Path, PathBuf};

use crate::shared_data;

fn main_instructions(code: &[u8]) -> Vec<Instruction> {
    let walked: Vec<Instruction> = agx_isa::stream::walk(code, 0)
        .filter_map(|it| it.into_insn())
        .collect();
    if !walked.is_empty() {
        return walked;
    }
    // Fallback while the stream walker is unavailable: decode linearly up to
    // the first `stop`.
    let mut out = Vec::new();
    let mut off = 0usize;
    while off + 2 <= code.len() {
        let Ok(insn) = agx_isa::decode(&code[off..], off as u32) else {
            off += 2;
            continue;
        };
        off += insn.len as usize;
        let stop = insn.mnemonic() == "stop";
        out.push(insn);
        if stop {
            break;
        }
    }
    out
}

fn field(json: &str, key: &str) -> Option<u64> {
    let pat = format!("\"{key}\"");
    let at = json.find(&pat)? + pat.len();
    let rest = json[at..].trim_start().strip_prefix(':')?.trim_start();
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

fn main_size(layout: &str) -> Option<usize> {
    let at = layout.find("\"main\"")?;
    field(&layout[at..], "size").map(|v| v as usize)
}

fn check_dir(root: &Path) -> (usize, Vec<String>) {
    let mut n = 0;
    let mut bad = Vec::new();
    let Ok(rd) = std::fs::read_dir(root) else {
        return (0, bad);
    };
    let mut dirs: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    dirs.sort();
    for d in dirs {
        let name = d.file_name().unwrap().to_string_lossy().to_string();
        let bin = d.join(format!("{name}.bin"));
        let (Ok(bin), Ok(layout), Ok(stats)) = (
            std::fs::read(&bin),
            std::fs::read_to_string(d.join("layout.json")),
            std::fs::read_to_string(d.join("stats.json")),
        ) else {
            continue;
        };
        let size = main_size(&layout).unwrap_or(bin.len()).min(bin.len());
        let insns = main_instructions(&bin[..size]);
        let est = mesa_estimate(&insns);
        let want = (
            field(&stats, "alu").unwrap() as u32,
            field(&stats, "fscib").unwrap() as u32,
            field(&stats, "ic").unwrap() as u32,
        );
        n += 1;
        if (est.alu, est.fscib, est.ic) != want {
            bad.push(format!("{name}: ours {est:?}, mesa {want:?}"));
        }
    }
    (n, bad)
}

#[test]
fn mesa_estimate_matches_shader_db() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut roots = vec![manifest.join("../../testdata/mesa")];
    roots.extend(shared_data::shared("corpus/mesa"));
    let mut total = 0;
    let mut bad = Vec::new();
    for r in &roots {
        let (n, b) = check_dir(r);
        total += n;
        bad.extend(b);
    }
    assert!(
        total >= 37,
        "testdata/mesa holds 37 kernels, found {total} in all"
    );
    assert!(
        bad.is_empty(),
        "{} of {total} kernels differ:\n{}",
        bad.len(),
        bad.join("\n")
    );
    eprintln!("mesa_estimate matches {total}/{total} kernels");
}
