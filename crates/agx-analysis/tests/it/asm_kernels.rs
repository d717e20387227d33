//! Analysis and timing tests written as assembly text (agx_isa::asm): the
//! kernels read like what they describe, instead of hex.

use agx_analysis::timing::{self, ModelParams};
use agx_isa::asm::assemble_insns;
use agx_isa::Instruction;

fn model(
    text: &str,
) -> (
    Vec<Instruction>,
    agx_analysis::Analysis,
    timing::KernelTiming,
) {
    model_at(text, &ModelParams::default())
}

/// `n` independent copies of `op` (distinct destinations from r`first`,
/// sources that are never written) in a loop.
fn loop_of(n: usize, op: impl Fn(usize) -> String) -> String {
    let mut s = String::from("loop:\n");
    for i in 0..n {
        s.push_str(&op(i));
        s.push('\n');
    }
    s.push_str("jmp_exec_any     loop\nstop\n");
    s
}

#[test]
fn sixty_four_independent_fadd32_cost_sixty_four() {
    let (_, a, t) = model(&loop_of(64, |i| format!("fadd32 r{}, r1, r2", 4 + i)));
    assert_eq!(a.loops.len(), 1);
    let cpi = t.loops[0].cycles_per_iteration;
    // one F32 issue per cycle per scheduler; the back-edge adds at most ~1
    assert!((64.0..=66.0).contains(&cpi), "cycles_per_iteration {cpi}");
}

#[test]
fn rsqrt_loop_is_ic_bound_at_eight_cycles_each() {
    let (_, _, t) = model(&loop_of(16, |i| format!("rsqrt r{}, r1", 4 + i)));
    let l = &t.loops[0];
    // metal-benchmarks: RSQRT throughput 8 cycles (IC pipe)
    assert!(
        (128.0..=130.0).contains(&l.cycles_per_iteration),
        "{}",
        l.cycles_per_iteration
    );
    assert!(l.bottleneck().contains("IC"), "{}", l.bottleneck());
}

#[test]
fn one_rsqrt_hides_under_sixty_four_fmadds() {
    let mut text = String::from("loop:\n");
    for i in 0..64 {
        text.push_str(&format!("fmadd32 r{}, r1, r2, r3\n", 8 + i));
    }
    text.push_str("rsqrt r5, r6\njmp_exec_any loop\nstop\n");
    let (_, _, t) = model(&text);
    let cpi = t.loops[0].cycles_per_iteration;
    // the 8 IC cycles hide under the F32 work; what is left is dispatch:
    // 64 fmadds + the jmp at 1 slot each, the rsqrt at IC_ISSUE_CYCLES
    let dispatch = 65.0 + timing::IC_ISSUE_CYCLES;
    assert!(
        (cpi - dispatch).abs() < 1e-9 && cpi < 64.0 + 8.0,
        "IC work (8 cy) runs beside F32 (64 cy), leaving dispatch {dispatch}: {cpi}"
    );
}

fn model_at(
    text: &str,
    params: &ModelParams,
) -> (
    Vec<Instruction>,
    agx_analysis::Analysis,
    timing::KernelTiming,
) {
    let insns = assemble_insns(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let a = agx_analysis::analyze(&insns);
    let t = timing::analyze_with_analysis(&insns, &a, params);
    (insns, a, t)
}

/// 128 threads per core: one SIMD-group per scheduler, nothing hides latency.
fn low_occupancy() -> ModelParams {
    ModelParams {
        threads_per_core: 128,
        ..ModelParams::default()
    }
}

fn assert_bound(t: &timing::KernelTiming, by: &str, cycles: f64, tol: f64) {
    let l = &t.loops[0];
    assert_eq!(l.bound.by, by, "bound {:?}", l.bound);
    assert!(
        (l.cycles_per_iteration - cycles).abs() <= tol,
        "{by}: {} cy/iter, expected {cycles} ± {tol} ({:?})",
        l.cycles_per_iteration,
        l.bound
    );
    assert_eq!(l.cycles_per_iteration, l.bound.cycles);
}

#[test]
fn pipe_bound_ic_sixteen_rsqrt() {
    // metal-benchmarks: RSQRT32 reciprocal throughput 8 on the IC pipe;
    // dispatch is 16 IC issues of IC_ISSUE_CYCLES each + the back-edge
    let (_, _, t) = model(&loop_of(16, |i| format!("rsqrt r{}, r1", 4 + i)));
    assert_bound(&t, "ic", 128.0, 1e-9);
    let want = 16.0 * timing::IC_ISSUE_CYCLES + 1.0;
    assert_eq!(t.loops[0].bound.components["dispatch"], want);
    assert!(want < 128.0);
}

#[test]
fn pipe_bound_f32_dependent_fadds_pay_the_raw_penalty_on_f32() {
    // each fadd32 reads the previous one's result: +0.84 cy per dependent
    // instruction on the F32 pipe (metal-benchmarks, 1.84 cy at high
    // occupancy); the first one follows the back-edge branch (no penalty)
    let (_, _, t) = model(&loop_of(32, |_| "fadd32 r4, r4, r1".to_string()));
    assert_bound(&t, "f32", 32.0 + 31.0 * 0.84, 1e-6);
}

#[test]
fn ic_dispatch_bound_imul_with_three_fmul() {
    // IMUL32 + 3 FMUL32 (metal-benchmarks mix, measured 5.20 per mix): the
    // IC instruction takes IC_ISSUE_CYCLES dispatch slots, so 4 copies
    // cost 4 * (IC_ISSUE_CYCLES + 3) + 1 (back-edge), above the IC pipe (16)
    let mut text = String::from("loop:\n");
    for c in 0..4 {
        text.push_str(&format!("imadd r{}, r2, r3, r4\n", 6 + c));
    }
    for c in 0..12 {
        text.push_str(&format!("fmul32 r{}, r2, r3\n", 10 + c));
    }
    text.push_str("jmp_exec_any loop\nstop\n");
    let (_, _, t) = model(&text);
    assert_bound(
        &t,
        "dispatch",
        4.0 * (timing::IC_ISSUE_CYCLES + 3.0) + 1.0,
        1e-9,
    );
    assert_eq!(t.loops[0].bound.components["ic"], 16.0);
}

/// The IC pipe of a loop: integer/transcendental pairs cost the switch
/// cycles (2 exp2 + 2 imadd: 2 pairs), and a transcendental of another kind
/// than the most frequent one saves IC_OVERLAP_CYCLES (rsqrt 8 + rcp 6).
#[test]
fn ic_pipe_switch_and_overlap_cycles() {
    for (body, want) in [
        (
            "exp2 r6, r2\nexp2 r7, r2\nimadd r8, r2, r3, r4\nimadd r9, r2, r3, r4\n",
            16.0 + 2.0 * timing::IC_SWITCH_CYCLES,
        ),
        (
            "rsqrt r6, r2\nrcp r7, r2\n",
            14.0 - timing::IC_OVERLAP_CYCLES,
        ),
    ] {
        let (_, _, t) = model(&format!("loop:\n{body}jmp_exec_any loop\nstop\n"));
        let ic = t.loops[0].bound.components["ic"];
        assert!((ic - want).abs() < 1e-9, "{body}: {ic}");
    }
}

#[test]
fn raw_penalties_of_ic_chains_stay_off_the_f_pipes() {
    let (_, _, t) = model(&loop_of(8, |_| "imadd r4, r4, r1, r2".to_string()));
    let c = &t.loops[0].bound.components;
    assert_eq!(c["fscib"], 0.0, "{c:?}");
    assert_eq!(c["f32"], 0.0);
    assert!(c["ic"] >= 32.0, "{c:?}");
}

#[test]
fn dispatch_bound_sixty_four_independent_fadd32() {
    // 64 F32 cycles, 65 issue slots (the back-edge branch takes one)
    let (_, _, t) = model(&loop_of(64, |i| format!("fadd32 r{}, r1, r2", 4 + i)));
    assert_bound(&t, "dispatch", 65.0, 1e-9);
    assert_eq!(t.loops[0].bound.components["f32"], 64.0);
}

#[test]
fn chain_bound_dependent_fmadds_at_low_occupancy() {
    // one SIMD-group per scheduler: each fmadd32 waits for the previous
    // one's result, 2.21 cy latency (metal-benchmarks FFMA32); across the
    // back-edge the branch's issue slot comes between: 1.84 (issue + RAW
    // penalty of the last fmadd) + 1 (jmp) instead of 2.21
    let (_, _, t) = model_at(
        &loop_of(8, |_| "fmadd32 r4, r4, r1, r2".to_string()),
        &low_occupancy(),
    );
    assert_bound(&t, "dependency_chain", 7.0 * 2.21 + 1.84 + 1.0, 1e-6);
    assert_eq!(t.loops[0].bound.components["memory_latency"], 0.0);
    assert_eq!(t.cycles.mem, 0.0);
}

const LOAD_LOOP: &str = "\
loop:
device_load      0, i32, x, r8, u0_u1, r9, unsigned
fadd32           r10, r1, r2
fadd32           r11, r1, r2
fadd32           r12, r1, r2
fadd32           r13, r1, r2
fadd32           r14, r1, r2
fadd32           r15, r1, r2
wait             0
fadd32           r16, r8, r10
iadd             r9, r9, 4
jmp_exec_any     loop
stop
";

#[test]
fn latency_bound_one_load_at_low_occupancy() {
    // the load's latency (0.5 * 100 + 0.5 * 300 = 200 cy by default) is
    // exposed: the pass is the latency plus the issue slots of wait, fadd,
    // iadd and jmp, plus the 0.21 cy of iadd latency (2.21) the load still
    // waits for its address register r9
    let params = low_occupancy();
    let (_, _, t) = model_at(LOAD_LOOP, &params);
    let lat = params.mem.device_latency();
    assert_bound(&t, "memory_latency", lat + 4.0 + 0.21, 1e-6);
    let l = &t.loops[0];
    // one stall figure: the wait's exposed share is the loop's memory stall
    let w = &l.body.waits[0];
    assert_eq!(w.exposed, l.body.memory_stall);
    // exposed = cost above the largest throughput bound (DRAM, 38.35 here);
    // nearly all of it is the wait's
    let exposed = l.cycles_per_iteration - l.bound.throughput();
    assert!(
        (l.body.exposed_stall - exposed).abs() < 1e-3,
        "{}",
        l.body.exposed_stall
    );
    assert!(l.body.memory_stall <= exposed + 1e-3);
    assert!(
        l.body.memory_stall > 0.95 * exposed,
        "{}",
        l.body.memory_stall
    );
    assert!(t.cycles.mem > 0.0);
    let d = t
        .instructions_detail
        .iter()
        .find(|d| d.addr == w.addr)
        .unwrap();
    assert_eq!(d.stall, w.exposed);
}

#[test]
fn bandwidth_bound_four_loads_at_full_occupancy() {
    let text = "\
loop:
device_load      0, i32, x, r8, u0_u1, r9, unsigned
device_load      0, i32, x, r10, u0_u1, r9, unsigned
device_load      0, i32, x, r12, u0_u1, r9, unsigned
device_load      0, i32, x, r14, u0_u1, r9, unsigned
wait             0
iadd             r9, r9, 16
jmp_exec_any     loop
stop
";
    // 4 loads x 32 lanes x 4 B; half miss L1 and come from DRAM (M1: 68.25
    // GB/s over 8 cores x 1.278 GHz, a quarter per scheduler)
    let p = ModelParams::default();
    let (_, _, t) = model_at(text, &p);
    let dram = timing::DRAM_VARIANTS[0].bytes_per_cycle_per_core() / 4.0;
    // (no access facts here: every line is a first touch reaching DRAM)
    assert_bound(&t, "device_bandwidth", 4.0 * 128.0 / dram, 0.01);
    // all hits: the L1 share (64 B/cycle/core) binds instead
    let mut hits = ModelParams::default();
    hits.mem.l1_hit_rate = Some(1.0);
    let (_, _, t) = model_at(text, &hits);
    assert_bound(&t, "memory_bandwidth", 4.0 * 128.0 / 16.0, 1e-9);
    // at full occupancy the latency is hidden: no exposed memory stall
    assert_eq!(t.cycles.mem, 0.0);
}

#[test]
fn nested_loop_cost_is_added_to_every_component_of_the_outer_bound() {
    let text = "\
outer:
fadd32           r4, r1, r2
inner:
rsqrt            r5, r1
jmp_exec_any     inner
jmp_exec_any     outer
stop
";
    let (insns, _, t) = model(text);
    assert_eq!(t.loops.len(), 2);
    let (outer, inner) = (&t.loops[0], &t.loops[1]);
    assert_eq!(inner.parent, Some(0));
    let nested = inner.trip_count as f64 * inner.cycles_per_iteration;
    assert!((outer.cycles_per_iteration - (outer.body.bound.cycles + nested)).abs() < 1e-6);
    assert_eq!(
        outer.bound.components["ic"],
        outer.body.bound.components["ic"] + nested
    );
    // breakdown: one loop part (the outer one), trip counts applied
    let parts: Vec<_> = t
        .breakdown
        .iter()
        .filter(|b| b.loop_index.is_some())
        .collect();
    assert_eq!(parts.len(), 1);
    let want = outer.trip_count as f64 * outer.cycles_per_iteration;
    assert!((parts[0].cycles - want).abs() < 1e-6);
    let rsqrt = insns.iter().find(|i| i.mnemonic() == "rsqrt").unwrap();
    assert_eq!(t.executions_at(rsqrt.addr), 256.0);
    // the whole-program layer's hook: a call at that site costing 10 cy
    let mut t2 = t.clone();
    t2.add_call_part(rsqrt.addr, 0x1000, 10.0);
    assert!((t2.total_cycles - (t.total_cycles + 2560.0)).abs() < 1e-6);
    assert!((t2.paths.longest - (t.paths.longest + 2560.0)).abs() < 1e-6);
    let sum: f64 = t2.breakdown.iter().map(|b| b.cycles).sum();
    assert!((sum - t2.total_cycles).abs() < 1e-6);
    let call = t2.breakdown.last().unwrap();
    assert_eq!(call.part, timing::PartKind::Call);
    assert_eq!((call.executions, call.callee), (256.0, Some(0x1000)));
    assert_eq!(t.executions_at(0xffff), 0.0);
}

#[test]
fn if_else_arms_give_uniform_path_bounds() {
    // divergent: both arms charged; uniform: the cheap arm (1 fadd) or the
    // dear one (4 rsqrt)
    let text = "\
if_icmp          r0l, ueq, r1l, 0, 1
rsqrt            r5, r1
rsqrt            r6, r1
rsqrt            r7, r1
rsqrt            r8, r1
else_icmp        r0l, ueq, r1l, 0, 1
fadd32           r9, r1, r2
pop_exec         r0l, 1
stop
";
    let (_, _, t) = model(text);
    let p = t.paths;
    assert!(p.shortest < p.longest, "{p:?}");
    assert!(p.longest <= t.total_cycles);
    // the shortest path skips the four rsqrt (32 IC cycles)
    assert!(p.longest - p.shortest >= 20.0, "{p:?}");
}

#[test]
fn load_six_alu_ops_then_wait_stalls_and_is_flagged() {
    // at low occupancy the wait's latency is exposed: both rules fire
    let (insns, a, t) = model_at(LOAD_LOOP, &low_occupancy());
    let l = &t.loops[0];
    assert_eq!(l.body.loads, 1);
    assert!(l.body.wait_stall > 50.0, "wait stall {}", l.body.wait_stall);
    let s = timing::suggest(&insns, &t, Some(&a));
    let rules: Vec<&str> = s.iter().map(|x| x.rule).collect();
    assert!(rules.contains(&"independent-work-before-wait"), "{rules:?}");
    assert!(rules.contains(&"tile-global-loads"), "{rules:?}");
}

#[test]
fn registers_follow_the_highest_register_written() {
    // touching r60 allocates 122 half-registers: occupancy drops below 1024
    let (_, a, _) = model("mov_imm r60, 1, 0b0\nfadd32 r1, r60, r60\nstop\n");
    assert_eq!(a.registers.highest_half_index, 121);
    assert_eq!(a.registers.allocated_half, 122);
    assert_eq!(a.occupancy.threads, 832);
    assert!(a.registers.peak_live_half <= 4);
}

/// A 3-component `device_load` reserves the aligned group of 4 registers
/// Mesa's allocator gives it (issue 21 item 6; `Reg::allocated_half_range`,
/// docs/analysis.md "Register footprint of vectors"): with `r4_r5_r6` the
/// highest registers, the footprint is half 15 (Mesa's `regs` for such a
/// kernel), not 13. The padding is not written: liveness is unchanged. A
/// vector at an unaligned base reserves only what it spans.
#[test]
fn three_component_load_reserves_an_aligned_group_of_four() {
    let body = |dst: &str, a: &str, b: &str, c: &str| {
        format!(
            "get_sr r0, sr80\n\
             device_load 0, i32, xyz, {dst}, u0_u1, r0, unsigned, lsl 2\n\
             wait 0\n\
             fmul32 r1, {c}, {c}\n\
             fmadd32 r1, {b}, {b}, r1\n\
             fmadd32 r1, {a}, {a}, r1\n\
             device_store 1, i32, x, r1, u2_u3, r0, unsigned, 0\n\
             stop\n"
        )
    };
    let (insns, a, _) = model(&body("r4_r5_r6", "r4", "r5", "r6"));
    // the load defines exactly its three registers
    let load = &insns[1];
    let defs: Vec<_> = load.defs().map(|r| (r.half, r.count)).collect();
    assert_eq!(defs, vec![(8, 3)]);
    assert_eq!(a.registers.highest_half_index, 15);
    assert_eq!(a.registers.allocated_half, 16);
    // r7 is reserved, never live: r0, r1 and r4..r6 at most
    assert!(
        a.registers.peak_live_half <= 10,
        "peak {}",
        a.registers.peak_live_half
    );
    // unaligned (r3..r5 start at half 6, not a multiple of 8): as spanned
    let (_, a, _) = model(&body("r3_r4_r5", "r3", "r4", "r5"));
    assert_eq!(a.registers.highest_half_index, 11);
    // a 4-component vector spans its group already
    let (_, a, _) = model(
        "get_sr r0, sr80\n\
         device_load 0, i32, xyzw, r4_r5_r6_r7, u0_u1, r0, unsigned, lsl 2\n\
         wait 0\n\
         device_store 0, i32, xyzw, r4_r5_r6_r7, u0_u1, r0, unsigned, lsl 2, 0\n\
         stop\n",
    );
    assert_eq!(a.registers.highest_half_index, 15);
    // a 3-component store source reserves its group too (Mesa's collect)
    let (_, a, _) = model(
        "get_sr r0, sr80\n\
         mov_imm r4, 1, 0b0\n\
         mov_imm r5, 2, 0b0\n\
         mov_imm r6, 3, 0b0\n\
         device_store 0, i32, xyz, r4_r5_r6, u0_u1, r0, unsigned, lsl 2, 0\n\
         stop\n",
    );
    assert_eq!(a.registers.highest_half_index, 15);
}

/// A texture load or sample whose mask enables 1–3 channels writes them
/// contiguously from its data register but clobbers the group of 4 (Mesa
/// `agx_write_registers`, "Even when masked out, these clobber 4
/// registers"; the allocator reserves the 4): the rest of the group is an
/// implicit def, counted in the footprint. 32-bit data: 8 halves from r8
/// (highest half 23); 16-bit: 4 halves from r8l (highest 19).
#[test]
fn masked_texture_ops_clobber_a_group_of_four() {
    let body = |op: &str, mask: &str, dst: &str| {
        format!(
            "get_sr r0, sr80\n\
             {op} 0, 0b1100, 0b0, none, {mask}, 0b00, {dst}, None, ts0, ss0, tex_2d, r0l_r0h.discard, auto_lod, 0\n\
             wait 0\n\
             stop\n"
        )
    };
    for op in ["texture_load", "texture_sample"] {
        for (mask, dst, n, top) in [
            ("x", "r8", 1, 23),
            ("xy", "r8_r9", 2, 23),
            ("xyz", "r8_r9_r10", 3, 23),
            ("xyzw", "r8_r9_r10_r11", 4, 23),
            ("x", "r8l", 1, 19),
            ("xyz", "r8l_r8h_r9l", 3, 19),
        ] {
            let (insns, a, _) = model(&body(op, mask, dst));
            let load = &insns[1];
            let defs: Vec<_> = load
                .all_operands()
                .filter(|o| o.role == agx_isa::Role::Def)
                .filter_map(|o| o.as_reg())
                .map(|r| (r.half, r.count))
                .collect();
            // the printed tuple, then (1–3 channels) the group of 4
            let mut want = vec![(16, n)];
            if n < 4 {
                want.push((16, 4));
            }
            assert_eq!(defs, want, "{op} {mask} {dst}");
            assert_eq!(a.registers.highest_half_index, top, "{op} {mask} {dst}");
        }
    }
}

/// A loop whose address range holds a cold block that is not in the loop
/// (it leaves the kernel): the loop forest says the loop is its two blocks,
/// so the cold block is neither charged per iteration nor counted as the
/// loop's (the timing model, the suggestions and the record read loops from
/// the forest only).
const COLD_BLOCK_IN_RANGE: &str = "\
loop:
fadd32 r4, r1, r2
jmp_exec_none body2
fmul32 r5, r1, r2
fmul32 r6, r1, r2
fmul32 r7, r1, r2
fmul32 r8, r1, r2
fmul32 r9, r1, r2
stop
body2:
fadd32 r10, r1, r2
jmp_exec_any loop
stop
";

#[test]
fn cold_block_inside_a_loops_range_is_not_the_loops() {
    let (insns, a, t) = model(COLD_BLOCK_IN_RANGE);
    assert_eq!(a.loops.len(), 1, "{:?}", a.loops);
    let l = &a.loops[0];
    // the address range spans the cold block, the loop holds 4 instructions
    let in_range = insns
        .iter()
        .filter(|i| l.start <= i.addr && i.addr <= l.end)
        .count();
    assert!(in_range > l.instructions, "{in_range} vs {l:?}");
    assert_eq!(l.instructions, 4);
    let tl = &t.loops[0];
    // counted as the loop's: its own body is its 4 instructions (not 10)
    assert_eq!(tl.body.instructions, 4, "{:?}", tl.body);
    assert!(tl.body.instructions <= l.instructions);
    // the cold block runs once (straight-line), not trip-count times
    let cold: Vec<u32> = insns
        .iter()
        .filter(|i| i.mnemonic() == "fmul32")
        .map(|i| i.addr)
        .collect();
    assert_eq!(cold.len(), 5);
    for &c in &cold {
        assert_eq!(t.executions_at(c), 1.0, "0x{c:x}");
        let d = t.instructions_detail.iter().find(|d| d.addr == c).unwrap();
        assert_eq!(d.loop_index, None);
        assert_eq!(d.loop_depth, 0);
    }
    assert_eq!(t.outside_loops.instructions, insns.len() - 4);
    // per iteration: 2 fadd32 + 2 branches, the fmuls are not in the bound
    assert!(tl.body.pipes.f32 < 3.0, "{:?}", tl.body.pipes);
    // the regions and blocks sum to the estimate
    let sum: f64 = t.regions.iter().map(|r| r.self_cycles).sum();
    assert!(
        (sum - t.total_cycles).abs() < 0.01,
        "{sum} vs {}",
        t.total_cycles
    );
    let blocks: f64 = t.blocks.iter().map(|b| b.cycles).sum();
    assert!(
        (blocks - t.total_cycles).abs() < 0.01,
        "{blocks} vs {}",
        t.total_cycles
    );
    // suggestions find the loop's instructions by membership too
    let s = timing::suggest(&insns, &t, Some(&a));
    for x in &s {
        assert!(
            !x.message.contains("in loop") || !cold.contains(&x.offset),
            "{x:?}"
        );
    }
}
