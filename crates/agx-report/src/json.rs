//! The JSON document, schema `metal-profiler/1` (docs/schema.json).
//!
//! Field names spelled out by the issues are contracts: `schema`, `kernels`,
//! `name`, `gpu`, `instructions`, `code_bytes`, `registers{highest_half_index,
//! allocated_half, peak_live_half, peak_live_offset, uniform_half}`,
//! `occupancy{threads, percent}`, `spills`, `fills`, `loops[{start, end,
//! depth, instructions, cycles_per_iteration, latency_bound_cycles,
//! bottleneck}]`, `cycles{f32, f16, scib, ic, mem, alu}`,
//! `mesa_estimate{alu, fscib, ic}`, `bottleneck`, `suggestions[{severity,
//! offset, message}]`, `instructions_detail[]`. New fields may be added;
//! none is renamed.

use crate::Profile;
use agx_isa::format::write_asm;
use agx_isa::Syntax;
use serde_json::{json, Value};

/// Schema identifier of the document.
pub const SCHEMA: &str = "metal-profiler/1";

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The kernel object of one profile.
pub fn kernel(p: &Profile) -> Value {
    let a = &p.analysis;
    let t = &p.timing;
    let loops: Vec<Value> = a
        .loops
        .iter()
        .map(|l| {
            let tl = t
                .loops
                .iter()
                .find(|x| x.header == l.header && l.latches.contains(&x.latch))
                .or_else(|| t.loops.iter().find(|x| x.header == l.header));
            json!({
                "start": l.start,
                "end": l.end,
                "depth": l.depth,
                "instructions": l.instructions,
                "header": l.header,
                "latches": l.latches,
                "exits": l.exits,
                "blocks": l.blocks,
                "trip_count": tl.map(|x| x.trip_count),
                "trip_count_source": tl.map(|x| x.trip_count_source),
                "cycles_per_iteration": tl.map(|x| round2(x.cycles_per_iteration)),
                "latency_bound_cycles": tl.map(|x| round2(x.latency_bound_cycles)),
                "bottleneck": tl.map(|x| x.bottleneck.clone()),
                "body": tl.map(|x| json!({
                    "instructions": x.body.instructions,
                    "alu_per_iter": round2(x.body.alu_per_iter),
                    "loads": x.body.loads,
                    "stores": x.body.stores,
                    "wait_stall": round2(x.body.wait_stall),
                    "exposed_stall": round2(x.body.exposed_stall),
                    "recurrence_cycles": round2(x.body.recurrence_cycles),
                    "bottleneck_unit": x.body.bottleneck_unit,
                })),
            })
        })
        .collect();
    let mut asm = String::new();
    let detail: Vec<Value> = p
        .insns
        .iter()
        .map(|i| {
            let d = t.instructions_detail.iter().find(|d| d.addr == i.addr);
            asm.clear();
            write_asm(&mut asm, i, Syntax::Default);
            json!({
                "offset": i.addr,
                "size": i.len,
                "mnemonic": i.mnemonic,
                "text": asm.trim_end(),
                "unit": d.map(|d| d.unit.name()),
                "cycles": d.map(|d| round2(d.cycles)),
                "latency": d.map(|d| round2(d.latency)),
                "loop_depth": d.map(|d| d.loop_depth),
                "stall": d.map(|d| round2(d.stall)),
                "stall_single": d.map(|d| round2(d.stall_single)),
                "raw_dep": d.and_then(|d| d.raw_dep.as_ref()).map(|r| json!({
                    "producer": r.producer, "penalty": round2(r.penalty), "bits": r.bits
                })),
                "call_target": p.call_symbol(i.addr),
                "raised": i.raised,
            })
        })
        .collect();
    let c = &t.cycles;
    json!({
        "name": p.name,
        "gpu": p.gpu,
        "instructions": a.instructions,
        "code_bytes": a.code_bytes,
        "registers": {
            "highest_half_index": a.registers.highest_half_index,
            "allocated_half": a.registers.allocated_half,
            "peak_live_half": a.registers.peak_live_half,
            "peak_live_offset": a.registers.peak_live_offset,
            "uniform_half": a.registers.uniform_half,
            "peak_live_registers": a.registers.peak_live_registers,
        },
        "occupancy": { "threads": a.occupancy.threads, "percent": round2(a.occupancy.percent) },
        "spills": a.spills,
        "fills": a.fills,
        "scratch_reserved": a.stack.scratch_reserved,
        "backward_branches": a.backward_branches,
        "loops": loops,
        "irreducible": a.irreducible,
        "cfg": {
            "blocks": a.cfg.blocks,
            "edges": a.cfg.edges,
            "calls": a.cfg.calls,
            "unresolved_targets": a.cfg.unresolved_targets,
            "max_exec_depth": a.cfg.max_exec_depth,
        },
        "cycles": {
            "f32": round2(c.f32), "f16": round2(c.f16), "scib": round2(c.scib),
            "ic": round2(c.ic), "mem": round2(c.mem), "alu": round2(c.alu),
        },
        "total_cycles": round2(t.total_cycles),
        "mesa_estimate": { "alu": t.mesa_estimate.alu, "fscib": t.mesa_estimate.fscib, "ic": t.mesa_estimate.ic },
        "bottleneck": t.bottleneck,
        "model": {
            "gpu": t.gpu,
            "trip_count": p.options.trip_count,
            "threads_per_core": t.params.threads_per_core,
            "simds_per_scheduler": round2(t.simds_per_scheduler),
            "mem": t.params.mem,
        },
        "prolog": p.prolog.as_ref().map(|pr| json!({
            "instructions": pr.instructions, "code_bytes": pr.code_bytes, "state_stores": pr.state_stores
        })),
        "suggestions": p.suggestions.iter().map(|s| json!({
            "severity": s.severity, "offset": s.offset, "message": s.message, "rule": s.rule
        })).collect::<Vec<_>>(),
        "instructions_detail": detail,
    })
}

/// The versioned JSON document for these profiles (pretty-printed, with a
/// trailing newline).
pub fn document(profiles: &[Profile]) -> String {
    let doc = json!({
        "schema": SCHEMA,
        "tool": { "name": "metal-profiler", "version": env!("CARGO_PKG_VERSION") },
        "kernels": profiles.iter().map(kernel).collect::<Vec<_>>(),
    });
    let mut s =
        serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}
