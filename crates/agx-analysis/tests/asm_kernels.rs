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
    let insns = assemble_insns(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let a = agx_analysis::analyze(&insns);
    let t = timing::analyze_with_analysis(&insns, &a, &ModelParams::default());
    (insns, a, t)
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
    assert!(l.bottleneck.contains("IC"), "{}", l.bottleneck);
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
    assert!(
        (64.0..=67.0).contains(&cpi),
        "IC work (8 cy) runs beside F32 (64 cy): {cpi}"
    );
}

#[test]
fn dependent_chain_is_latency_bound() {
    // each fmadd32 reads the previous result: a loop-carried chain
    let (_, _, t) = model(&loop_of(8, |_| "fmadd32 r4, r4, r1, r2".to_string()));
    let l = &t.loops[0];
    assert!(
        l.body.recurrence_cycles >= 8.0 * 2.0,
        "recurrence {}",
        l.body.recurrence_cycles
    );
    assert!(l.latency_bound_cycles >= l.cycles_per_iteration);
}

#[test]
fn load_six_alu_ops_then_wait_stalls_and_is_flagged() {
    let text = "\
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
    let (insns, a, t) = model(text);
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
