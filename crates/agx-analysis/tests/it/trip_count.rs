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

/// `for (i = 0; i < 8; ++i)` as `if (i >= 8) break;` at the top (Mesa's
/// form for loops it does not rotate): the break's `if_icmp` leaves.
#[test]
fn trip_break_form_is_proved() {
    let text = "mov_imm r0l, 0\n\
                mov_imm r3, 0, 0b0\n\
                loop:\n\
                if_icmp r0l, ugte, r3, 8, 1\n\
                mov_imm r0l, 2\n\
                pop_exec r0l, 0\n\
                pop_exec r0l, 1\n\
                fadd32 r4, r4, r5\n\
                iadd r3, r3.sx, 1\n\
                jmp_exec_any loop\n\
                pop_exec r0l, 1\n\
                stop\n";
    assert_eq!(trips(text), vec![Some(TripFact::Exact(8))]);
}

/// A tile fill `for (i = lid; i < 324; i += 256)`: lanes start at their
/// own position (>= 0), so at most ceil(324 / 256) = 2 iterations.
#[test]
fn trip_lid_started_tile_loop_is_bounded() {
    // (an ALU immediate is 8 bits: 324 and 256 are in registers)
    let tile = |start: &str| {
        while_loop(
            &format!("mov_imm r7, 324, 0b0\nmov_imm r8, 256, 0b0\n{start}"),
            "ult",
            "r7",
            1,
        )
        .replace("iadd r2, r2.sx, 1", "iadd r2, r2.sx, r8.sx")
    };
    assert_eq!(trips(&tile("mov r2, r1")), vec![Some(TripFact::AtMost(2))]);
    // started at lid + 100: at most ceil(224 / 256) = 1
    assert_eq!(
        trips(&tile("iadd r2, r1.sx, 100")),
        vec![Some(TripFact::AtMost(1))]
    );
    // the same bounds from 0: proved, 2
    assert_eq!(
        trips(&tile("mov_imm r2, 0, 0b0")),
        vec![Some(TripFact::Exact(2))]
    );
}

/// A bound in a uniform register is a kernel argument, named.
#[test]
fn trip_argument_bound_names_its_register() {
    let t = trips(&while_loop("mov_imm r2, 0, 0b0", "ult", "u6", 1));
    assert_eq!(t, vec![Some(TripFact::Argument("u6".into()))]);
}

/// Nothing known: a bound the code never sets before the loop, a step
/// that is not an immediate, a start loaded per lane.
#[test]
fn trip_data_dependent_loops_are_unknown() {
    let t = trips(&while_loop("mov_imm r2, 0, 0b0", "ult", "r9", 1));
    assert_eq!(t, vec![None]);
    let t = trips(&while_loop("get_sr r2, sr80", "ult", "64", 1));
    assert_eq!(t, vec![None], "a grid-position start is not bounded");
    let text = while_loop("mov_imm r2, 0, 0b0", "ult", "16", 1)
        .replace("iadd r2, r2.sx, 1", "iadd r2, r2.sx, r6.sx");
    assert_eq!(trips(&text), vec![None], "a step in a GPR");
    // the counter written twice in the loop by a GPR step
    let text = while_loop("mov_imm r2, 0, 0b0", "ult", "16", 1)
        .replace("fadd32 r4, r4, r5", "iadd r2, r2.sx, r6.sx");
    assert_eq!(trips(&text), vec![None]);
}

/// The counter stepped twice by an immediate in a straight-line body moves
/// by both steps an iteration (the walk of `trip_count/traced.rs`): `i +=
/// 1` twice from 0 while `i < 16` runs 8 times.
#[test]
fn trip_counter_stepped_twice_moves_by_both() {
    let text = while_loop("mov_imm r2, 0, 0b0", "ult", "16", 1)
        .replace("fadd32 r4, r4, r5", "iadd r2, r2.sx, 1");
    assert_eq!(trips(&text), vec![Some(TripFact::Exact(8))]);
}

/// The parallel-copy shuffle of the register-blocked GEMMs: the counter is
/// stored to a slot, the slot filled into another register and stepped
/// there, and the result swapped back into the counter's register by xor
/// triples (through a third register first); a store over the slot after
/// the fill does not matter. Any broken link (a swap missing its middle
/// xor, a step in a GPR, a second write to the counter after the swap)
/// gives nothing.
#[test]
fn trip_counter_through_xor_swaps_and_stack_slots_is_followed() {
    let body = |swap: &str| {
        format!(
            "mov_imm r0l, 0\n\
             mov_imm r9, 0, 0b0\n\
             loop:\n\
             while_icmp r0l, ult, r9, {{B}}, 1\n\
             stack_store i32, 1, 0, x, 4, r9, 100, 0\n\
             iadd r9, 0, r9.sx, lsl 3\n\
             fadd32 r9, r3, r4\n\
             stack_load r5, i32, 1, 0, x, 4, 100, 0\n\
             iadd r5, r5.sx, 1\n\
             stack_store i32, 1, 0, x, 4, r8, 100, 0\n\
             mov r6, r7\n\
             {swap}\n\
             jmp_exec_any loop\n\
             pop_exec r0l, 1\n\
             stop\n"
        )
    };
    let swaps = "xor r6, r6, r9\nxor r9, r6, r9\nxor r6, r6, r9\n\
                 xor r5, r5, r9\nxor r9, r5, r9\nxor r5, r5, r9";
    let t = trips(&body(swaps).replace("{B}", "u16"));
    assert_eq!(t, vec![Some(TripFact::Argument("u16".to_string()))]);
    // the first swap only parks the counter's garbage in r6: r9 = r5
    let t = trips(&body(swaps).replace("{B}", "12"));
    assert_eq!(t, vec![Some(TripFact::Exact(12))]);
    // (two xors already move r5 into r9; without the middle one r9 keeps
    // r6's value)
    let broken = swaps.replace("xor r9, r5, r9\n", "");
    assert_eq!(trips(&body(&broken).replace("{B}", "u16")), vec![None]);
    let gpr_step = body(swaps).replace("iadd r5, r5.sx, 1", "iadd r5, r5.sx, r7.sx");
    assert_eq!(trips(&gpr_step.replace("{B}", "u16")), vec![None]);
    let after = format!("{swaps}\nmov r9, r6");
    assert_eq!(trips(&body(&after).replace("{B}", "u16")), vec![None]);
}

/// Another exit (a data-dependent break) makes the count a maximum.
#[test]
fn trip_second_exit_makes_a_maximum() {
    let text = while_loop("mov_imm r2, 0, 0b0", "ult", "16", 1).replace(
        "fadd32 r4, r4, r5\n",
        "if_icmp r0l, ueq, r4, r5, 1\nmov_imm r0l, 2\npop_exec r0l, 0\npop_exec r0l, 1\n",
    );
    assert_eq!(trips(&text), vec![Some(TripFact::AtMost(16))]);
}

/// `for (i = 0; i < 8; ++i) for (j = 0; j <= i; ++j)`: the inner bound is
/// the outer counter, whose value before the outer loop (0) must not be
/// taken for the bound (a wrong constant 1).
#[test]
fn trip_triangular_inner_gets_no_wrong_constant() {
    let text = "mov_imm r0l, 0\n\
                mov_imm r2, 0, 0b0\n\
                outer:\n\
                while_icmp r0l, ult, r2, 8, 1\n\
                mov_imm r3, 0, 0b0\n\
                push_exec r0l, 1\n\
                inner:\n\
                if_icmp r0l, ult, r2, r3, 1\n\
                mov_imm r0l, 2\n\
                pop_exec r0l, 0\n\
                pop_exec r0l, 1\n\
                fadd32 r4, r4, r5\n\
                iadd r3, r3.sx, 1\n\
                jmp_exec_any inner\n\
                pop_exec r0l, 1\n\
                iadd r2, r2.sx, 1\n\
                jmp_exec_any outer\n\
                pop_exec r0l, 1\n\
                stop\n";
    let t = trips(text);
    assert_eq!(t.len(), 2);
    assert_eq!(t[0], Some(TripFact::Exact(8)));
    assert_eq!(t[1], None);
}

/// The timing model takes a proved count (source `code`) and a user's
/// per-loop count over it (`user`).
#[test]
fn trip_model_uses_the_proved_count() {
    use agx_analysis::timing::{self, ModelParams};
    let insns = assemble_insns(&while_loop("mov_imm r2, 0, 0b0", "ult", "40", 1)).unwrap();
    let mut p = ModelParams::default();
    let k = timing::analyze_kernel(&insns, &p);
    assert_eq!(k.loops[0].trip_count, 40);
    assert_eq!(k.loops[0].trip_count_source.as_str(), "code");
    assert_eq!(k.loops[0].trip_count_max, Some(40));
    p.loop_trip_counts.insert(k.loops[0].header, 3);
    let k = timing::analyze_kernel(&insns, &p);
    assert_eq!(
        (k.loops[0].trip_count, k.loops[0].trip_count_source.as_str()),
        (3, "user")
    );
}

/// The labelled set (testdata/trip_labels, labelled from the sources): the
/// analysis never states a wrong fact, and names the argument of as many
/// argument-bound loops as it did when the table in docs/analysis.md
/// ("Trip counts") was made.
#[test]
fn trip_labels_mesa_corpus() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let text = std::fs::read_to_string(root.join("trip_labels/mesa.json")).expect("labels");
    let labels: serde_json::Value = serde_json::from_str(&text).expect("labels parse");
    let (mut equal, mut unknown, mut wrong) = (0, 0, Vec::new());
    let mut unknowns = Vec::new();
    for l in labels["loops"].as_array().expect("loops") {
        let k = l["kernel"].as_str().unwrap();
        let head = u32::from_str_radix(l["header"].as_str().unwrap().trim_start_matches("0x"), 16)
            .unwrap();
        let dir = root.join("mesa").join(k);
        let bin = std::fs::read(dir.join(format!("{k}.bin"))).expect("bin");
        let layout: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("layout.json")).unwrap())
                .unwrap();
        let size = layout["main"]["size"].as_u64().unwrap() as usize;
        let insns: Vec<_> = agx_isa::stream::walk(&bin[..size.min(bin.len())], 0)
            .filter_map(|it| it.into_insn())
            .collect();
        let d = agx_analysis::analyze_detailed(&insns, &agx_analysis::CfgOptions::default());
        let li = d
            .nest
            .loops
            .iter()
            .position(|n| insns[n.header].addr == head)
            .unwrap_or_else(|| panic!("{k}: no loop at 0x{head:x}"));
        let fact = &d.nest.trips[li];
        let truth = l["truth"].as_str().unwrap();
        let ok = match (truth, fact) {
            // nothing known where the code gives nothing: right
            ("data" | "triangular", None) => Some(true),
            (_, None) => None,
            ("argument", Some(TripFact::Argument(u))) => {
                Some(Some(u.as_str()) == l["bound"].as_str())
            }
            ("code", Some(TripFact::Exact(n))) => Some(Some(*n as u64) == l["count"].as_u64()),
            ("code", Some(TripFact::AtMost(n))) => {
                Some(l["count"].as_u64().is_some_and(|c| c <= *n as u64))
            }
            _ => Some(false),
        };
        match ok {
            None => {
                unknown += 1;
                unknowns.push(format!("{k} 0x{head:x} ({truth})"));
            }
            Some(true) => equal += 1,
            Some(false) => wrong.push(format!("{k} 0x{head:x}: {truth} but {fact:?}")),
        }
    }
    eprintln!(
        "trip labels: equal {equal}, unknown {unknown}, wrong {}; unknown: {}",
        wrong.len(),
        unknowns.join(", ")
    );
    assert!(wrong.is_empty(), "{wrong:?}");
    // docs/analysis.md's table: 17 equal (14 named argument bounds, 3 loops
    // rightly left unknown): every argument-bound loop names its argument
    assert!(equal >= 17, "equal {equal}");
}

/// A `stop` inside the loop (an early return) is another exit: a maximum.
#[test]
fn trip_stop_in_the_loop_makes_a_maximum() {
    let text = while_loop("mov_imm r2, 0, 0b0", "ult", "16", 1).replace(
        "fadd32 r4, r4, r5\n",
        "push_exec r0l, 1\njmp_exec_none skip\nstop\nskip:\npop_exec r0l, 1\n",
    );
    assert_eq!(trips(&text), vec![Some(TripFact::AtMost(16))]);
}

/// A counter kept in a stack slot while its register holds other data (the
/// register-blocked GEMMs: `k` spilled before a vector load reuses r2,
/// filled back and stepped at the bottom): still the loop's counter.
#[test]
fn trip_spilled_counter_is_followed() {
    let body = |store: &str, fill_slot: u32| {
        format!(
            "mov_imm r0l, 0\n\
             mov_imm r2, 0, 0b0\n\
             loop:\n\
             while_icmp r0l, ult, r2, {{B}}, 1\n\
             {store}\n\
             device_load 0, i32, xyzw, r2_r3_r4_r5, u0_u1, r6, unsigned\n\
             fadd32 r8, r3, r4\n\
             stack_load r7, i32, 1, 0, x, 4, {fill_slot}, 0\n\
             iadd r2, r7.sx, 1\n\
             jmp_exec_any loop\n\
             pop_exec r0l, 1\n\
             stop\n"
        )
    };
    let spill = "stack_store i32, 1, 0, x, 4, r2, 4, 0";
    let t = trips(&body(spill, 4).replace("{B}", "12"));
    assert_eq!(t, vec![Some(TripFact::Exact(12))]);
    let t = trips(&body(spill, 4).replace("{B}", "u6"));
    assert_eq!(t, vec![Some(TripFact::Argument("u6".to_string()))]);
    // filled from another slot, or a second store to the slot: not known
    assert_eq!(trips(&body(spill, 8).replace("{B}", "12")), vec![None]);
    let twice = format!("{spill}\nstack_store i32, 1, 0, x, 4, r8, 4, 0");
    assert_eq!(trips(&body(&twice, 4).replace("{B}", "12")), vec![None]);
}

/// A counter stepped through a select on Mesa's first-iteration flag
/// (conv1d_var_radius: `j = first ? j : j + 1` before the header's test):
/// it steps or holds, so an argument bound names its register but a
/// constant bound gives no count.
#[test]
fn trip_held_counter_names_its_argument() {
    let body = |bound: &str, arms: &str| {
        format!(
            "mov_imm r0l, 0\n\
             mov_imm r0h, 0\n\
             mov r2, u20\n\
             push_exec r0l, 1\n\
             loop:\n\
             iadd r4, r2.sx, 1\n\
             icmpsel ueq, r2, r0h, 0, {arms}\n\
             while_icmp r0l, sgte, {bound}, r2, 1\n\
             fadd32 r3, r3, r5\n\
             mov_imm r5l, 1\n\
             mov r0h, r5l\n\
             jmp_exec_any loop\n\
             pop_exec r0l, 1\n\
             stop\n"
        )
    };
    let t = trips(&body("u17", "r2, r4"));
    assert_eq!(t, vec![Some(TripFact::Argument("u17".to_string()))]);
    let t = trips(&body("u17", "r4, r2"));
    assert_eq!(t, vec![Some(TripFact::Argument("u17".to_string()))]);
    // a constant bound: no count (the hold is not proved to be once)
    assert_eq!(trips(&body("12", "r2, r4")), vec![None]);
    // neither arm the counter: not known
    assert_eq!(trips(&body("u17", "r4, r5")), vec![None]);
}

/// A compared value `t = i + c` the latch copies back into the counter
/// (regpressure_nbody12_wg64: `r18 = r17 + 12`, `while u16 >= r18`, the body
/// reusing r17 as a temporary, `mov r17, r18` before the back edge): an
/// argument bound names its register; a constant bound gives no count (the
/// start is not followed); without the copy, or with a write of the counter
/// before the add, nothing.
#[test]
fn trip_copied_back_counter_names_its_argument() {
    let body = |bound: &str, first: &str, latch: &str| {
        format!(
            "mov_imm r0l, 0\n\
             mov_imm r2, 0, 0b0\n\
             push_exec r0l, 1\n\
             loop:\n\
             {first}\
             iadd r4, r2.sx, 12\n\
             while_icmp r0l, ugte, {bound}, r4, 1\n\
             fadd32 r2, r3, r5\n\
             fadd32 r3, r3, r2\n\
             {latch}\n\
             jmp_exec_any loop\n\
             pop_exec r0l, 1\n\
             stop\n"
        )
    };
    let t = trips(&body("u16", "", "mov r2, r4"));
    assert_eq!(t, vec![Some(TripFact::Argument("u16".to_string()))]);
    assert_eq!(trips(&body("40", "", "mov r2, r4")), vec![None]);
    // the latch copies something else into the counter
    assert_eq!(trips(&body("u16", "", "mov r2, r5")), vec![None]);
    // the counter is written before the add: not the previous t
    assert_eq!(
        trips(&body("u16", "mov_imm r2, 3, 0b0\n", "mov r2, r4")),
        vec![None]
    );
}
