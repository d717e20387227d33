//! The address analysis across a `break` out of a one-level `if` and an
//! inner loop's header first reached in its outer loop's first iteration
//! (docs/analysis.md, "Address analysis", Loops and Exec masks): Mesa's
//! `for (i…) for (j…) acc += x[gid + i + j]` with `if (j >= n) { r = acc;
//! break; }` reusing the counter's register for the result.

use agx_analysis::address::{self, Pattern, Shape};
use agx_isa::asm::assemble_insns;

/// The nested loop; `leave`: the `if`'s lanes break (`mov_imm r0l, 2`), or
/// (false) fall through with the counter overwritten.
fn nest(leave: bool) -> String {
    let brk = if leave {
        "mov_imm r0l, 2\npop_exec r0l, 0\n"
    } else {
        ""
    };
    format!(
        "get_sr r1, sr80\n\
         mov_imm r0l, 0\n\
         mov_imm r3, 0, 0b0\n\
         mov_imm r4, 0, 0b0\n\
         outer:\n\
         while_icmp r0l, slt, r3, u18, 1\n\
         iadd r5, r1.sx, r3.sx\n\
         mov r6, r4\n\
         mov_imm r4, 0, 0b0\n\
         push_exec r0l, 1\n\
         inner:\n\
         if_icmp r0l, sgte, r4, u18, 1\n\
         mov r4, r6\n\
         {brk}\
         pop_exec r0l, 1\n\
         iadd r7, r5.sx, r4.sx\n\
         device_load 0, i32, x, r8, u0_u1, r7, unsigned\n\
         wait 0\n\
         fadd32 r6, r6, r8\n\
         iadd r4, r4.sx, 1\n\
         jmp_exec_any inner\n\
         pop_exec r0l, 1\n\
         iadd r3, r3.sx, 1\n\
         jmp_exec_any outer\n\
         pop_exec r0l, 1\n\
         stop\n"
    )
}

fn the_load(text: &str) -> address::Access {
    let insns = assemble_insns(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let d = agx_analysis::analyze_detailed(&insns, &agx_analysis::CfgOptions::default());
    let facts = agx_analysis::facts::scan(&insns);
    let a = address::analyze(&insns, &facts, &d.cfg, &d.loops, &Shape::DEFAULT, 128);
    let mut loads: Vec<_> = a
        .accesses
        .into_iter()
        .filter(|x| x.space == "device")
        .collect();
    assert_eq!(loads.len(), 1);
    loads.remove(0)
}

#[test]
fn a_counter_past_a_break_is_followed() {
    let a = the_load(&nest(true));
    assert_eq!(a.lane_pattern, Pattern::Contiguous, "{}", a.reason);
    assert_eq!(a.lane_stride, Some(4));
    assert_eq!(a.loop_stride, Some(4), "{}", a.reason);
}

#[test]
fn a_counter_overwritten_by_lanes_that_run_on_is_not() {
    // no break: the lanes that ran the `if` reach the load with r4 = acc
    let a = the_load(&nest(false));
    assert_eq!(a.lane_pattern, Pattern::Unknown, "{}", a.reason);
    assert_eq!(a.loop_stride, None);
}
