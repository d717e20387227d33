//! Trip counts from the code (issue 35 item 1): hand-built G13 loops, each
//! case's fact checked against the count the source implies.

use agx_analysis::trip_count::TripFact;
use agx_isa::asm::assemble_insns;

fn trips(text: &str) -> Vec<Option<TripFact>> {
    let insns = assemble_insns(text).expect("assembles");
    let d = agx_analysis::analyze_detailed(&insns, &agx_analysis::CfgOptions::default());
    d.nest.trips
}

/// `for (i = START; i CC BOUND; i += STEP)` as Mesa emits it: the compare
/// at the header (`while_icmp`), the step in the latch.
fn while_loop(start: &str, cc: &str, bound: &str, step: i64) -> String {
    format!(
        "get_sr r1, sr48\n\
         mov_imm r0l, 0\n\
         {start}\n\
         loop:\n\
         while_icmp r0l, {cc}, r2, {bound}, 1\n\
         fadd32 r4, r4, r5\n\
         iadd r2, r2.sx, {step}\n\
         jmp_exec_any loop\n\
         pop_exec r0l, 1\n\
         stop\n"
    )
}

#[test]
fn trip_constant_loop_is_proved() {
    let t = trips(&while_loop("mov_imm r2, 0, 0b0", "ult", "16", 1));
    assert_eq!(t, vec![Some(TripFact::Exact(16))]);
    let t = trips(&while_loop("mov_imm r2, 3, 0b0", "slte", "10", 2));
    assert_eq!(t, vec![Some(TripFact::Exact(4))]);
}
