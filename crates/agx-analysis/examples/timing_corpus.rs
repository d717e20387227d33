//! Prints our model's loop timings for every kernel of a Mesa corpus folder
//! (default: testdata/mesa, else $METAL_PROFILER_SHARED/corpus/mesa or
//! ../shared/corpus/mesa beside the repository).
//!
//! `cargo run -p agx-analysis --example timing_corpus [DIR]`

use agx_analysis::timing::{analyze_kernel, ModelParams};

#[path = "../../../testdata/shared_data.rs"]
mod shared_data;

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| {
        let local = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/mesa");
        if std::path::Path::new(local).exists() {
            local.to_string()
        } else {
            let shared = std::env::var("METAL_PROFILER_SHARED").unwrap_or_else(|_| {
                concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared").to_string()
            });
            format!("{shared}/corpus/mesa")
        }
    });
    let dir = std::path::PathBuf::from(dir);
    assert!(dir.is_dir(), "corpus dir {} not found", dir.display());
    for d in shared_data::subdirs(&dir) {
        let name = d.file_name().unwrap().to_string_lossy().to_string();
        let Ok(bin) = std::fs::read(d.join(format!("{name}.bin"))) else {
            continue;
        };
        let insns: Vec<_> = agx_isa::stream::walk(&bin, 0)
            .filter_map(|i| i.into_insn())
            .collect();
        let k = analyze_kernel(&insns, &ModelParams::default());
        println!(
            "{name}: {} insns, total {:.1} cy, cycles {:?}, mesa {:?}\n  bottleneck: {}",
            insns.len(),
            k.total_cycles,
            k.cycles,
            k.mesa_estimate,
            k.bottleneck
        );
        for l in &k.loops {
            println!(
                "  loop {} @0x{:x} depth {}: cpi {} lbc {} single {} rec {} loads {} waits {:?}\n    {}",
                l.index,
                l.header,
                l.depth,
                l.cycles_per_iteration,
                l.latency_bound_cycles,
                l.body.single_simd_iteration_cycles,
                l.body.recurrence_cycles,
                l.body.loads,
                l.body.waits.iter().map(|w| (w.addr, w.stall_single, w.exposed)).collect::<Vec<_>>(),
                l.bottleneck()
            );
        }
    }
}
