//! Throughput / latency views of the loop model on built kernels.

use agx_analysis::timing::build::{r, u, Builder};
use agx_analysis::timing::table::g13;
use agx_analysis::timing::{analyze_kernel, body_timing, ModelParams, RegionTiming, Unit};
use agx_isa::Reg;

use crate::shared_data;

fn params() -> ModelParams {
    ModelParams::default()
}

#[test]
fn sixty_four_independent_fadd32_cost_64() {
    let mut b = Builder::new();
    for i in 0..64 {
        b.op("fadd32", &[r(10 + i)], &[r(2), u(4)]);
    }
    let t = body_timing(&b.finish(), &params());
    assert_eq!(t.cycles_per_iteration, 64.0);
    assert_eq!(t.pipes.raw_penalty, 0.0);
}

/// Eight `op r3, r3, src`, each reading the one before, as a loop body.
fn chain_of_eight(op: &str, src: Reg) -> RegionTiming {
    let mut b = Builder::new();
    for _ in 0..8 {
        b.op(op, &[r(3)], &[r(3), src]);
    }
    body_timing(&b.finish(), &params())
}

#[test]
fn back_to_back_dependency_adds_raw_penalty() {
    let t = chain_of_eight("fmul32", r(4));
    // 8 dependent FMUL32: 8 * 1.84 (metal-benchmarks ALU Bottlenecks).
    assert!((t.cycles_per_iteration - 8.0 * 1.84).abs() < 1e-6, "{t:?}");
    // One dependency-chain figure: the bound component (the in-order pass
    // without memory stalls, over the SIMD-groups sharing the scheduler).
    assert_eq!(t.recurrence_cycles, t.bound.components["dependency_chain"]);
    assert!(t.recurrence_cycles > 0.0);
}

#[test]
fn single_register_fetch_has_no_raw_penalty() {
    let t = chain_of_eight("fmadd32", r(3));
    assert_eq!(t.pipes.raw_penalty, 0.0);
}

#[test]
fn ic_pipe_bound_loop_names_rsqrt() {
    let mut b = Builder::new();
    b.op("rsqrt", &[r(5)], &[r(1)]);
    b.op("imadd", &[r(6)], &[r(1), r(2), r(3)]);
    b.op("fadd32", &[r(7)], &[r(1), r(2)]);
    let t = body_timing(&b.finish(), &params());
    // rsqrt 8 + imadd 4 + one integer/transcendental pair
    let ic = 12.0 + agx_analysis::timing::IC_SWITCH_CYCLES;
    assert_eq!(t.pipes.ic, ic);
    assert_eq!(t.cycles_per_iteration, ic);
    assert_eq!(t.bottleneck_unit, "IC pipe");
    assert!(
        t.bottleneck.contains("rsqrt at 0x0 takes 8"),
        "{}",
        t.bottleneck
    );
}

#[test]
fn f16_and_f32_share_the_pipe_ic_runs_in_parallel() {
    let mut b = Builder::new();
    for i in 0..4 {
        b.op("fadd32", &[r(10 + i)], &[r(2)]);
        b.op("exp2", &[r(20 + i)], &[r(2)]);
    }
    let t = body_timing(&b.finish(), &params());
    assert_eq!(t.pipes.f32, 4.0);
    assert_eq!(t.pipes.ic, 16.0);
    assert_eq!(t.cycles_per_iteration, 16.0);
}

#[test]
fn wait_stall_is_exposed_at_low_occupancy_and_hidden_at_high() {
    let build = || {
        let mut b = Builder::new();
        b.op("device_load", &[r(4)], &[r(1)]);
        b.raw("wait");
        b.op("fadd32", &[r(5)], &[r(4), r(5)]);
        b.jmp_exec_any(0);
        b.finish()
    };
    let insns = build();
    let mut p = params();
    p.threads_per_core = 128; // 1 SIMD-group per scheduler
                              // half the bytes hit (without access facts every byte would be a DRAM
                              // first touch, whose bandwidth bound would hide part of the latency)
    p.mem.l1_hit_rate = Some(0.5);
    let k = analyze_kernel(&insns, &p);
    assert_eq!(k.loops.len(), 1);
    let l = &k.loops[0];
    assert!(l.body.wait_stall > 150.0, "{:?}", l.body);
    assert!(l.latency_bound_cycles > 150.0);
    let wait = &l.body.waits[0];
    assert_eq!(wait.loads, vec![0]);
    assert!(wait.exposed > 150.0);
    assert!(k.instructions_detail[1].stall > 150.0);
    assert_eq!(l.body.bottleneck_unit, "memory latency");
    assert_eq!(l.bound.by, "memory_latency");
    // At full occupancy the other 7 SIMD-groups hide part of it.
    let mut full = params();
    full.mem.l1_hit_rate = Some(0.5);
    let k2 = analyze_kernel(&insns, &full);
    assert!(k2.loops[0].latency_bound_cycles < l.latency_bound_cycles / 4.0);
}

#[test]
fn kernel_weights_loops_by_trip_count_parameter() {
    let mut b = Builder::new();
    b.op("mov_imm", &[r(1)], &[]);
    let head = b.addr;
    b.op("fadd32", &[r(2)], &[r(3)]);
    b.op("fadd32", &[r(4)], &[r(3)]);
    b.jmp_exec_any(head);
    b.raw("stop");
    let insns = b.finish();
    let mut p = params();
    p.trip_count = 10;
    p.trip_count_given = true;
    let k = analyze_kernel(&insns, &p);
    assert_eq!(k.loops[0].trip_count, 10);
    assert_eq!(k.loops[0].trip_count_source.as_str(), "given");
    assert_eq!(k.cycles.f32, 20.0);
    assert_eq!(k.cycles.scib, 1.0);
    p.loop_trip_counts.insert(head, 3);
    let k = analyze_kernel(&insns, &p);
    assert_eq!(k.cycles.f32, 6.0);
    assert_eq!(k.loops[0].trip_count_source.as_str(), "user");
    assert!(k.bottleneck.contains("loop at 0x4"), "{}", k.bottleneck);
    p.loop_trip_counts.clear();
    // the source is whether the count was given, not a guess from its
    // value: the default's value given is "given"
    p.trip_count = agx_analysis::timing::DEFAULT_TRIP_COUNT;
    let k = analyze_kernel(&insns, &p);
    assert_eq!(k.loops[0].trip_count_source.as_str(), "given");
    p.trip_count_given = false;
    let k = analyze_kernel(&insns, &p);
    assert_eq!(k.loops[0].trip_count_source.as_str(), "default");
}

#[test]
fn nested_loops_multiply() {
    let mut b = Builder::new();
    let outer = b.addr;
    b.op("iadd", &[r(1)], &[r(1)]);
    let inner = b.addr;
    b.op("fadd32", &[r(2)], &[r(3)]);
    b.jmp_exec_any(inner);
    b.jmp_exec_any(outer);
    b.raw("stop");
    let insns = b.finish();
    let mut p = params();
    p.trip_count = 4;
    let k = analyze_kernel(&insns, &p);
    assert_eq!(k.loops.len(), 2);
    let inner_l = k.loops.iter().find(|l| l.depth == 2).unwrap();
    assert_eq!(
        inner_l.parent,
        Some(k.loops.iter().position(|l| l.depth == 1).unwrap())
    );
    assert_eq!(k.cycles.f32, 16.0);
    assert_eq!(k.cycles.scib, 4.0);
}

#[test]
fn explain_model_lists_every_entry_and_assumption() {
    let text = g13().explain_model();
    for e in g13().entries {
        assert!(text.contains(e.key.name()), "{}", e.key.name());
        assert!(!e.source.is_empty());
    }
    assert!(text.contains("assumption"));
    assert!(text.contains("trip_count"));
    assert!(g13()
        .entries
        .iter()
        .any(|e| e.unit == Unit::Ic && e.throughput == 6.0));
}

/// Every cost key has exactly one row (also checked when the table
/// compiles, `table::index_rows`), and every form's rule picks a key: a form
/// without a timing row cannot fall back to another row.
#[test]
fn every_cost_key_has_its_own_row() {
    use agx_analysis::timing::CostKey;
    assert_eq!(g13().entries.len(), CostKey::COUNT);
    for &k in CostKey::ALL {
        assert_eq!(g13().entry(k).key, k);
    }
    for f in agx_isa::forms::FORMS.iter() {
        if let agx_isa::CostRule::Fixed(k) = f.cost {
            assert_eq!(g13().entry(k).key, k, "{}", f.name);
        }
    }
}

#[test]
fn timing_serializes() {
    let mut b = Builder::new();
    b.op("fadd32", &[r(2)], &[r(3)]);
    b.raw("stop");
    let k = analyze_kernel(&b.finish(), &params());
    let j = serde_json::to_value(&k).unwrap();
    for key in ["f32", "f16", "scib", "ic", "mem", "alu"] {
        assert!(j["cycles"].get(key).is_some());
    }
    for key in ["alu", "fscib", "ic"] {
        assert!(j["mesa_estimate"].get(key).is_some());
    }
    assert_eq!(j["instructions_detail"][0]["unit"], "F32");
}

#[test]
fn corpus_kernels_model_with_analysis_loops() {
    let Some(dir) = shared_data::shared("corpus/mesa") else {
        return;
    };
    let rd = std::fs::read_dir(&dir).expect("read shared/corpus/mesa");
    let mut n = 0;
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Ok(bin) = std::fs::read(e.path().join(format!("{name}.bin"))) else {
            continue;
        };
        let insns: Vec<_> = agx_isa::stream::walk(&bin, 0)
            .filter_map(|i| i.into_insn())
            .collect();
        let a = agx_analysis::analyze(&insns);
        let k = agx_analysis::timing::analyze_with_analysis(&insns, &a, &params());
        assert_eq!(k.loops.len(), a.loops.len(), "{name}");
        // the model's loops are the analysis' loops, one for one, in order
        for (t, l) in k.loops.iter().zip(&a.loops) {
            assert_eq!((t.header, t.depth), (l.header, l.depth), "{name}");
        }
        assert!(k.total_cycles.is_finite() && k.total_cycles > 0.0, "{name}");
        let s = agx_analysis::timing::suggest(&insns, &k, Some(&a));
        for x in &s {
            assert!(
                insns.iter().any(|i| i.addr == x.offset) || x.offset == 0,
                "{name}: {x:?}"
            );
        }
        n += 1;
    }
    assert!(n > 0);
}

/// 1M instructions through the model and the suggestions (timed in
/// release: `cargo test --release -p agx-analysis --test timing_model -- --ignored`).
#[test]
#[ignore]
fn one_million_instructions() {
    let mut b = Builder::new();
    for i in 0..100_000u32 {
        let head = b.addr;
        b.op("device_load", &[r(4)], &[r(2)]);
        b.op("fadd32", &[r(5)], &[r(3), r(6)]);
        b.op("fmadd32", &[r(6)], &[r(6), r(7), r(8)]);
        b.op("imadd", &[r(9)], &[r(1), r(2), r(3)]);
        b.raw("wait");
        b.op("fmul32", &[r(10)], &[r(4), r(5)]);
        b.op("rcp", &[r(11)], &[r(10)]);
        b.op("fmul32", &[r(12)], &[r(11), r(3)]);
        b.op("iadd", &[r(1)], &[r(1), r(2)]);
        if i % 10 == 0 {
            b.jmp_exec_any(head);
        } else {
            b.op("mov", &[r(13)], &[r(1)]);
        }
    }
    let insns = b.finish();
    assert!(insns.len() >= 1_000_000);
    let t0 = std::time::Instant::now();
    let k = analyze_kernel(&insns, &params());
    let t1 = t0.elapsed();
    let s = agx_analysis::timing::suggest(&insns, &k, None);
    let t2 = t0.elapsed();
    let j = serde_json::to_string(&k).unwrap();
    eprintln!("model {t1:?}, suggest {:?}", t2 - t1);
    let dt = t0.elapsed();
    eprintln!(
        "1M: {dt:?}, {} loops, {} suggestions, {} bytes JSON",
        k.loops.len(),
        s.len(),
        j.len()
    );
    assert!(dt.as_secs_f64() < 10.0);
}
