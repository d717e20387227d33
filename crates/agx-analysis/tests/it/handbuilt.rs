//! Small hand-built programs for the tricky cases: nested loops, a loop
//! whose body calls a helper, divergent if/else inside a loop, a
//! `jmp_exec_none` skipping a region, an irreducible region, a kernel with
//! no `stop`, garbage targets and empty input.

use crate::common;

use agx_analysis::{analyze, analyze_detailed, cfg::EdgeKind, cfg::Terminator, CfgOptions};
use common::*;

#[test]
fn nested_loops_three_deep() {
    let mut p = Prog::new();
    p.mov_imm(R0L, 0);
    p.alu(&[r(1)], &[]);
    p.label("outer");
    p.alu(&[r(2)], &[r(1)]);
    p.label("middle");
    p.alu(&[r(3)], &[r(2)]);
    p.label("inner");
    p.alu(&[r(3)], &[r(3)]);
    p.alu(&[r(4)], &[r(3)]);
    p.jmp_any("inner");
    p.alu(&[r(2)], &[r(2), r(4)]);
    p.jmp_any("middle");
    p.alu(&[r(1)], &[r(1), r(2)]);
    p.jmp_any("outer");
    p.store(&[r(1)]);
    p.stop();
    let insns = p.build();
    let d = analyze_detailed(&insns, &CfgOptions::default());
    let a = &d.analysis;
    assert_eq!(a.backward_branches, 3);
    assert_eq!(a.loops.len(), 3);
    // Sorted by start: outer, middle, inner.
    let (o, m, i) = (&a.loops[0], &a.loops[1], &a.loops[2]);
    assert_eq!((o.depth, m.depth, i.depth), (1, 2, 3));
    assert_eq!(o.header, p.addr("outer"));
    assert_eq!(m.header, p.addr("middle"));
    assert_eq!(i.header, p.addr("inner"));
    // inner: alu, alu, jmp = 3; middle: + alu(r3) + alu + jmp = 6;
    // outer: + alu(r2) + alu + jmp = 9. Blocks: inner 1; middle adds its
    // header block and its latch block (3); outer likewise (5).
    assert_eq!((i.instructions, m.instructions, o.instructions), (3, 6, 9));
    assert_eq!((i.blocks, m.blocks, o.blocks), (1, 3, 5));
    assert_eq!(i.latches, vec![p.addr_of_nth_jmp(0)]);
    assert_eq!(o.end, p.addr_of_nth_jmp(2));
    // Each loop leaves to the instruction after its own latch.
    assert_eq!(i.exits, vec![p.addr_of_nth_jmp(0) + 6]);
    assert_eq!(o.exits, vec![p.addr_of_nth_jmp(2) + 6]);
    // The forest: inner's parent is middle, middle's is outer.
    let f = &d.loops;
    let inner = f.loops.iter().position(|l| l.depth == 3).unwrap();
    let middle = f.loops[inner].parent.unwrap();
    let outer = f.loops[middle].parent.unwrap();
    assert_eq!(f.loops[outer].parent, None);
    assert!(a.irreducible.is_empty());
    // r1 is live around the whole outer loop (used after it).
    let hb = d.cfg.block_at(&insns, p.addr("inner")).unwrap();
    assert!(d.liveness.live_in[hb].contains(2) && d.liveness.live_in[hb].contains(3));
}

#[test]
fn loop_body_calls_helper() {
    let mut p = Prog::new();
    // main
    p.mov_imm(R0L, 0);
    p.alu(&[r(3)], &[]);
    p.label("loop");
    p.alu(&[r(2)], &[r(3)]);
    p.call("helper");
    p.alu(&[r(3)], &[r(3), r(4)]);
    p.jmp_any("loop");
    p.store(&[r(3)]);
    p.stop();
    // helper: reads r2 (argument), writes r4 (result), has its own loop.
    p.label("helper");
    p.alu(&[r(4)], &[r(2)]);
    p.label("hloop");
    p.alu(&[r(4)], &[r(4)]);
    p.jmp_any("hloop");
    p.ret();
    let insns = p.build();
    let d = analyze_detailed(&insns, &CfgOptions::default());
    let a = &d.analysis;
    // The call resolves to the helper, which becomes function 1.
    assert_eq!(a.cfg.functions.len(), 2);
    assert_eq!(a.cfg.functions[1].entry, p.addr("helper"));
    assert_eq!(a.cfg.calls.len(), 1);
    assert!(a.cfg.calls[0].resolved);
    let cb = d.cfg.block_at(&insns, p.addr_of("call")).unwrap();
    let kinds: Vec<EdgeKind> = d.cfg.blocks[cb].succs.iter().map(|e| e.kind).collect();
    assert_eq!(kinds, vec![EdgeKind::Call, EdgeKind::CallReturn]);
    // Two loops, both at depth 1: main's does not contain the helper's
    // blocks and the helper's loop is not nested in main's.
    assert_eq!(a.loops.len(), 2);
    let ml = a.loops.iter().find(|l| l.header == p.addr("loop")).unwrap();
    let hl = a
        .loops
        .iter()
        .find(|l| l.header == p.addr("hloop"))
        .unwrap();
    assert_eq!((ml.depth, hl.depth), (1, 1));
    assert_eq!(ml.function, Some(0));
    assert_eq!(hl.function, Some(p.addr("helper")));
    // main's loop: alu, call | alu, jmp = 4 instructions, 2 blocks.
    assert_eq!((ml.instructions, ml.blocks), (4, 2));
    assert!(ml.end < p.addr("helper"));
    // The argument r2 is live at the call (read by the helper), and r3
    // across it (the call does not define it).
    let live_out_call = d.liveness.live_out(&d.cfg, cb);
    assert!(live_out_call.contains(4) && live_out_call.contains(5)); // r2
    assert!(live_out_call.contains(6) && live_out_call.contains(7)); // r3
                                                                     // The call writes the link register r1 (implicit def), so r1 is not
                                                                     // live before the call even though `ret` reads it.
    assert!(!d.liveness.live_in[cb].contains(2));
    assert!(a.irreducible.is_empty());
}

#[test]
fn divergent_if_else_inside_loop() {
    let mut p = Prog::new();
    p.mov_imm(R0L, 0);
    p.alu(&[r(1)], &[]);
    p.label("loop");
    p.exec("while_icmp", 1, &[r(1)]);
    p.exec("if_icmp", 1, &[r(1)]);
    p.alu(&[r(5)], &[r(1)]);
    p.exec("else_icmp", 1, &[r(1)]);
    p.alu(&[r(5)], &[]);
    p.pop(1);
    p.alu(&[r(1)], &[r(1), r(5)]);
    p.jmp_any("loop");
    p.pop(1);
    p.store(&[r(1)]);
    p.stop();
    let insns = p.build();
    let d = analyze_detailed(&insns, &CfgOptions::default());
    let a = &d.analysis;
    // Exec-mask ops do not split blocks: [mov, alu] [loop … jmp] [pop, store, stop].
    assert_eq!(a.cfg.blocks, 3);
    assert_eq!(a.loops.len(), 1);
    assert_eq!(a.loops[0].blocks, 1);
    assert_eq!(a.loops[0].instructions, 8);
    assert_eq!(a.cfg.exec_ops, 5);
    // Depth: while 1 → 1, if → 2, else stays 2, pop 1 → 1, pop 1 → 0.
    let depth = |k: usize| d.cfg.exec_depth[k];
    let at = |x: &str| insns.iter().position(|i| i.mnemonic() == x).unwrap();
    assert_eq!(depth(at("if_icmp")), 1);
    assert_eq!(depth(at("else_icmp")), 2);
    assert_eq!(depth(at("else_icmp") + 1), 2);
    assert_eq!(depth(at("jmp_exec_any")), 1);
    assert_eq!(depth(insns.len() - 1), 0);
    assert_eq!(a.cfg.max_exec_depth, 2);
    let ev: Vec<(&str, u16, u16)> = d
        .cfg
        .exec_events
        .iter()
        .map(|e| (e.op, e.depth_before, e.depth_after))
        .collect();
    assert_eq!(
        ev,
        vec![
            ("while", 0, 1),
            ("if", 1, 2),
            ("else", 2, 2),
            ("pop", 2, 1),
            ("pop", 1, 0)
        ]
    );
    // r5 is defined in both arms: not live into the loop header.
    let hb = d.cfg.block_at(&insns, p.addr("loop")).unwrap();
    assert!(!d.liveness.live_in[hb].contains(10));
    // r0l (the exec stack) is live through the loop.
    assert!(d.liveness.live_in[hb].contains(0));
}

#[test]
fn jmp_exec_none_skips_region() {
    let mut p = Prog::new();
    p.mov_imm(R0L, 0);
    p.alu(&[r(2)], &[]);
    p.alu(&[r(3)], &[]);
    p.exec("if_icmp", 1, &[r(2)]);
    p.jmp_none("skip");
    p.alu(&[r(2)], &[r(3)]);
    p.alu(&[r(6)], &[r(2)]);
    p.alu(&[r(2)], &[r(6)]);
    p.label("skip");
    p.pop(1);
    p.store(&[r(2)]);
    p.stop();
    let insns = p.build();
    let d = analyze_detailed(&insns, &CfgOptions::default());
    let a = &d.analysis;
    assert_eq!(a.cfg.blocks, 3);
    let b0 = d.cfg.block_at(&insns, 0).unwrap();
    let region = d
        .cfg
        .block_at(&insns, p.addr_of("jmp_exec_none") + 6)
        .unwrap();
    let skip = d.cfg.block_at(&insns, p.addr("skip")).unwrap();
    let succ: Vec<(usize, EdgeKind)> = d.cfg.blocks[b0]
        .succs
        .iter()
        .map(|e| (e.to, e.kind))
        .collect();
    assert_eq!(
        succ,
        vec![(skip, EdgeKind::Taken), (region, EdgeKind::Fallthrough)]
    );
    assert_eq!(d.cfg.blocks[region].succs[0].to, skip);
    assert!(a.loops.is_empty());
    assert_eq!(a.backward_branches, 0);
    assert_eq!(a.cfg.unreachable_blocks, 0);
    // r2 reaches the store either way: live out of the branch block;
    // r3 only matters in the region.
    assert!(d.liveness.live_out(&d.cfg, b0).contains(4));
    assert!(d.liveness.live_out(&d.cfg, b0).contains(6));
    assert!(!d.liveness.live_in[skip].contains(6));
    // The region is inside the if: depth 1.
    let k = insns
        .iter()
        .position(|i| i.addr == p.addr_of("jmp_exec_none") + 6)
        .unwrap();
    assert_eq!(d.cfg.exec_depth[k], 1);
}

/// A cycle {A, B} with two entries: a branch to B, or a fall into A; A
/// falls into B; B branches back to A (labels "a" and "b").
fn irreducible_cycle(p: &mut Prog) {
    p.jmp_none("b");
    p.label("a");
    p.alu(&[r(1)], &[r(1)]);
    p.label("b");
    p.alu(&[r(2)], &[r(1)]);
    p.jmp_any("a");
}

#[test]
fn irreducible_region_is_reported_not_a_loop() {
    // E: branch to B or fall into A; A falls into B; B branches back to A.
    // The cycle {A, B} has two entries: neither header dominates the other.
    let mut p = Prog::new();
    p.alu(&[r(1)], &[]);
    irreducible_cycle(&mut p);
    p.store(&[r(2)]);
    p.stop();
    let insns = p.build();
    let d = analyze_detailed(&insns, &CfgOptions::default());
    let a = &d.analysis;
    assert!(
        a.loops.is_empty(),
        "no natural loop in an irreducible cycle"
    );
    assert_eq!(a.backward_branches, 1);
    assert_eq!(a.irreducible.len(), 1);
    let reg = &a.irreducible[0];
    let mut blocks = reg.blocks.clone();
    blocks.sort_unstable();
    assert_eq!(blocks, vec![p.addr("a"), p.addr("b")]);
    let mut entries = reg.entries.clone();
    entries.sort_unstable();
    assert_eq!(entries, vec![p.addr("a"), p.addr("b")]);
    assert_eq!(reg.retreating_edges.len(), 1);
    assert_eq!(reg.instructions, 3);
    // Liveness still converges over the cycle: r1 live into both.
    let ba = d.cfg.block_at(&insns, p.addr("a")).unwrap();
    let bb = d.cfg.block_at(&insns, p.addr("b")).unwrap();
    assert!(d.liveness.live_in[ba].contains(2));
    assert!(d.liveness.live_in[bb].contains(2));
}

#[test]
fn irreducible_inside_natural_loop() {
    // outer: E → {A, B} irreducible cycle → back to outer header.
    let mut p = Prog::new();
    p.alu(&[r(1)], &[]);
    p.label("head");
    irreducible_cycle(&mut p);
    p.jmp_any("head");
    p.stop();
    let insns = p.build();
    let a = analyze(&insns);
    assert_eq!(a.irreducible.len(), 1);
    assert_eq!(a.loops.len(), 1);
    assert_eq!(a.loops[0].header, p.addr("head"));
    // head(jmp) + a + b, jmp + jmp = 5 instructions.
    assert_eq!(a.loops[0].instructions, 5);
    assert_eq!(a.backward_branches, 2);
}

#[test]
fn kernel_without_stop() {
    let mut p = Prog::new();
    p.alu(&[r(1)], &[]);
    p.label("l");
    p.alu(&[r(1)], &[r(1)]);
    p.jmp_any("l");
    p.alu(&[r(2)], &[r(1)]);
    let insns = p.build();
    let d = analyze_detailed(&insns, &CfgOptions::default());
    let a = &d.analysis;
    assert_eq!(a.instructions, 4);
    let last = d.cfg.blocks.last().unwrap();
    assert_eq!(last.term, Terminator::End);
    assert!(last.succs.is_empty());
    assert_eq!(a.loops.len(), 1);
    assert_eq!(a.loops[0].exits, vec![p.addr_of("jmp_exec_any") + 6]);
}

#[test]
fn garbage_targets_and_empty_input() {
    let a = analyze(&[]);
    assert_eq!(a.instructions, 0);
    assert!(a.loops.is_empty());
    assert_eq!(a.occupancy.threads, 1024);

    let mut p = Prog::new();
    p.alu(&[r(1)], &[]);
    p.jmp_any_abs(0x10_0000); // far outside the code
    p.jmp_any_abs(3); // inside an instruction
    p.jmp_any_abs(-64); // negative
    p.call_abs(0x7fff_0000);
    p.trap();
    p.alu(&[r(9)], &[]); // unreachable after trap
    let insns = p.build();
    let d = analyze_detailed(&insns, &CfgOptions::default());
    let a = &d.analysis;
    assert_eq!(a.cfg.unresolved_targets.len(), 4);
    assert_eq!(a.cfg.calls.len(), 1);
    assert!(!a.cfg.calls[0].resolved);
    assert_eq!(a.cfg.unreachable_blocks, 1);
    assert!(a.loops.is_empty());
    // Backward branches count targets at or before the branch, resolved
    // or not: 3 and -64.
    assert_eq!(a.backward_branches, 2);
    // Registers are counted even in unreachable code (the hardware
    // allocates by the highest register in the code): r9h = 19.
    assert_eq!(a.registers.highest_half_index, 19);
}

#[test]
fn register_accounting_at_half_granularity() {
    let mut p = Prog::new();
    p.alu(&[h(1)], &[]); // r0h
    p.alu(&[rv(4, 4)], &[]); // r4_r5_r6_r7: halves 8..16
    p.alu(&[h(40)], &[h(1), rv(4, 4), u(2)]); // r20l ← …, u2
    p.alu_u(&[], &[u64r(12)]); // u6_u7 as 64-bit: uniform halves 12..16
    p.store(&[h(40)]);
    p.stop();
    let insns = p.build();
    let a = analyze(&insns);
    assert_eq!(a.registers.highest_half_index, 40);
    assert_eq!(a.registers.allocated_half, 41);
    assert_eq!(a.registers.uniform_half, 16);
    // Peak: r0h + r4..r7 = 9 halves, first reached as the second
    // instruction writes r4..r7 (and still 9 into the third).
    assert_eq!(a.registers.peak_live_half, 9);
    assert_eq!(a.registers.peak_live_offset, Some(p.addr_of_index(1)));
    assert_eq!(
        a.registers.peak_live_registers,
        vec!["r0h", "r4", "r5", "r6", "r7"]
    );
    assert_eq!(a.occupancy.threads, 1024);
    assert_eq!(a.occupancy.percent, 100.0);
}

#[test]
fn stack_adjust_is_not_a_spill() {
    let mut p = Prog::new();
    p.stack_adjust(44);
    p.spill(r(4));
    p.fill(r(4));
    p.spill(r(5));
    p.stop();
    let insns = p.build();
    let a = analyze(&insns);
    assert_eq!((a.spills, a.fills), (2, 1));
    assert_eq!(a.stack.scratch_reserved, Some(44));
    assert_eq!(a.stack.adjusts.len(), 1);
}

#[test]
fn json_field_names() {
    let mut p = Prog::new();
    p.label("l");
    p.alu(&[r(1)], &[r(1)]);
    p.jmp_any("l");
    p.stop();
    let a = analyze(&p.build());
    let v = serde_json::to_value(&a).unwrap();
    for k in [
        "instructions",
        "code_bytes",
        "registers",
        "occupancy",
        "spills",
        "fills",
        "loops",
    ] {
        assert!(v.get(k).is_some(), "{k}");
    }
    for k in [
        "highest_half_index",
        "allocated_half",
        "peak_live_half",
        "peak_live_offset",
        "uniform_half",
    ] {
        assert!(v["registers"].get(k).is_some(), "registers.{k}");
    }
    assert!(v["occupancy"].get("threads").is_some());
    assert!(v["occupancy"].get("percent").is_some());
    for k in [
        "start",
        "end",
        "depth",
        "instructions",
        "header",
        "latches",
        "exits",
        "blocks",
    ] {
        assert!(v["loops"][0].get(k).is_some(), "loops[].{k}");
    }
}
