//! Apple-compiled kernels with loops, calls and stack use
//! (testdata/apple_stack, from marysaka/applegpu `stack_tests/simple`).
//! Every expectation below was worked out by hand from the `.applegpu.txt`
//! listing next to each binary; the listing lines are quoted.

use agx_analysis::{analyze_detailed, cfg::EdgeKind, CfgOptions, Detailed};
use agx_isa::Instruction;
use std::path::PathBuf;

fn data(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/apple_stack")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn walk(bin: &[u8], start: usize, end: usize) -> Vec<Instruction> {
    agx_isa::stream::walk(&bin[start..end], start as u32)
        .filter_map(|x| x.into_insn())
        .collect()
}

fn load(name: &str) -> (Vec<Instruction>, Detailed) {
    let bin = data(name);
    let insns = walk(&bin, 0, bin.len());
    let d = analyze_detailed(&insns, &CfgOptions::default());
    (insns, d)
}

fn block_at(d: &Detailed, insns: &[Instruction], addr: u32) -> usize {
    d.cfg.block_at(insns, addr).expect("instruction at address")
}

#[test]
fn simple_call_main_alone() {
    // 15 instructions, `0: mov_imm r0l, 0` … `4a: stop`.
    let (insns, d) = load("simple_call_compute_shader.bin");
    let a = &d.analysis;
    assert_eq!(a.instructions, 15);
    // `36: 10c04afeffff call 0x-180`: the helper sits 0x180 bytes before
    // main in __text, outside this buffer → one unresolved call.
    assert_eq!(a.cfg.calls.len(), 1);
    assert_eq!(a.cfg.calls[0].addr, 0x36);
    assert_eq!(a.cfg.calls[0].target, Some(-0x180));
    assert!(!a.cfg.calls[0].resolved);
    // Blocks: [0x0..=0x36] ends at the call, [0x3c..=0x4a] ends at stop;
    // one edge, the call's return.
    assert_eq!(a.cfg.blocks, 2);
    assert_eq!(d.cfg.blocks[0].succs.len(), 1);
    assert_eq!(d.cfg.blocks[0].succs[0].kind, EdgeKind::CallReturn);
    assert_eq!(d.cfg.blocks[0].succs[0].to, block_at(&d, &insns, 0x3c));
    // No loop, no backward branch.
    assert!(a.loops.is_empty());
    assert_eq!(a.backward_branches, 0);
    // `30: push_exec r0l, 2` … `3c: pop_exec r0l, 2`: depth 2 at the call.
    assert_eq!(a.cfg.max_exec_depth, 2);
    let k = insns.iter().position(|i| i.addr == 0x36).unwrap();
    assert_eq!(d.cfg.exec_depth[k], 2);
    // `e: b50081052000 stack_store i8, 1, 2, 0, 8, 0` is the stack adjust.
    assert_eq!(a.stack.scratch_reserved, Some(8));
    assert_eq!((a.spills, a.fills), (0, 0));
    // Highest register: r13 (`18: get_sr r13, ...`) → half 27; uniforms up
    // to u3 (`22: mov r12, u3`) → 8 halves.
    assert_eq!(a.registers.highest_half_index, 27);
    assert_eq!(a.registers.uniform_half, 8);
    assert!(a.registers.peak_live_half <= a.registers.allocated_half);
}

#[test]
fn simple_call_helper_alone() {
    // 46 instructions, `0: iadd r10, 8, r10` … `122: ret r1`.
    let (insns, d) = load("simple_call_compute_l__Z6helperPU9MTLdeviceKjj.bin");
    let a = &d.analysis;
    assert_eq!(a.instructions, 46);
    // Blocks: B0 0x0..=0x62 (`jmp_exec_none 0xD0`), B1 0x68..=0x6e,
    // B2 0x74..=0x96 (`call 0x0`), B3 0x9c..=0xc4 (`jmp_exec_any 0x74`),
    // B4 0xca, B5 0xd0..=0x122 (`ret r1`).
    assert_eq!(a.cfg.blocks, 6);
    let b = |x| block_at(&d, &insns, x);
    let succ = |blk: usize| -> Vec<(usize, EdgeKind)> {
        d.cfg.blocks[blk]
            .succs
            .iter()
            .map(|e| (e.to, e.kind))
            .collect()
    };
    // The jmp_exec_none skips the whole if-body 0x68..0xca.
    assert_eq!(
        succ(b(0x62)),
        vec![(b(0xd0), EdgeKind::Taken), (b(0x68), EdgeKind::Fallthrough)]
    );
    // `96: call 0x0` calls the helper's own entry (resolved) and returns to
    // 0x9c.
    assert_eq!(
        succ(b(0x96)),
        vec![(b(0x0), EdgeKind::Call), (b(0x9c), EdgeKind::CallReturn)]
    );
    assert_eq!(a.cfg.calls.len(), 1);
    assert!(a.cfg.calls[0].resolved);
    assert_eq!(
        succ(b(0xc4)),
        vec![(b(0x74), EdgeKind::Taken), (b(0xca), EdgeKind::Fallthrough)]
    );
    assert!(succ(b(0x122)).is_empty()); // ret
    assert_eq!(a.cfg.edges, 8);
    // One loop: header 0x74 (`c4: jmp_exec_any 0x74`), body 0x74..=0xc4 =
    // 6 + 8 instructions in 2 blocks, leaves to 0xca. The self-call is a
    // call edge, not a loop.
    assert_eq!(a.loops.len(), 1);
    let l = &a.loops[0];
    assert_eq!((l.start, l.end, l.header), (0x74, 0xc4, 0x74));
    assert_eq!((l.depth, l.instructions, l.blocks), (1, 14, 2));
    assert_eq!(l.latches, vec![0xc4]);
    assert_eq!(l.exits, vec![0xca]);
    assert_eq!(a.backward_branches, 1);
    assert!(a.irreducible.is_empty());
    // Exec nesting: `5c: if_icmp … 1` (1), `6e: push_exec 2` (3),
    // `90: push_exec 2` (5, at the call), `9c: pop_exec 2` (3),
    // `ba: while_icmp … 2` (3), `ca: pop_exec 2` (1), `d0: pop_exec 1` (0).
    let depth = |x: u32| d.cfg.exec_depth[insns.iter().position(|i| i.addr == x).unwrap()];
    assert_eq!(depth(0x96), 5);
    assert_eq!(depth(0xa2), 3);
    assert_eq!(depth(0xd0), 1);
    assert_eq!(depth(0xd6), 0);
    assert_eq!(a.cfg.max_exec_depth, 5);
    // Stack: `c: … 8` adjust in, `10c: … -8` adjust out; 5 callee-saved
    // register pairs stored (0x12..0x32) and reloaded (0xe4..0x104).
    assert_eq!(a.stack.scratch_reserved, Some(8));
    assert_eq!(a.stack.adjusts.len(), 2);
    assert_eq!(a.stack.adjusts[1].amount, -8);
    assert_eq!((a.spills, a.fills), (5, 5));
    // Highest register r26h (`r26l_r26h`) = half 53; no uniforms.
    assert_eq!(a.registers.highest_half_index, 53);
    assert_eq!(a.registers.uniform_half, 0);
}

#[test]
fn simple_call_reconstructed_text_resolves_calls() {
    // Helper at 0..0x124, main at 0x180 (gap zero-filled).
    let bin = data("simple_call_TEXT_reconstructed_helper0_main0x180.binimg");
    let mut insns = walk(&bin, 0, 0x124);
    insns.extend(walk(&bin, 0x180, bin.len()));
    assert_eq!(insns.len(), 46 + 15);
    let opts = CfgOptions {
        entry: Some(0x180),
        helpers: std::iter::once(0..0x124).collect(),
    };
    let d = analyze_detailed(&insns, &opts);
    let a = &d.analysis;
    // Two functions, main first.
    assert_eq!(a.cfg.functions.len(), 2);
    assert_eq!(a.cfg.functions[0].entry, 0x180);
    assert_eq!(a.cfg.functions[0].instructions, 15);
    assert_eq!(a.cfg.functions[1].entry, 0x0);
    assert_eq!(a.cfg.functions[1].instructions, 46);
    // Both calls (`1b6: call 0x0` in main, `96: call 0x0` in the helper)
    // resolve to the helper entry.
    assert_eq!(a.cfg.calls.len(), 2);
    assert!(a
        .cfg
        .calls
        .iter()
        .all(|c| c.resolved && c.target == Some(0)));
    let main_call = block_at(&d, &insns, 0x1b6);
    let helper = block_at(&d, &insns, 0x0);
    assert!(d.cfg.blocks[main_call]
        .succs
        .iter()
        .any(|e| e.to == helper && e.kind == EdgeKind::Call));
    // The only loop is the helper's, at depth 1 (not nested in main).
    assert_eq!(a.loops.len(), 1);
    assert_eq!(a.loops[0].header, 0x74);
    assert_eq!(a.loops[0].depth, 1);
    assert_eq!(a.loops[0].function, Some(0));
    assert_eq!(a.cfg.unreachable_blocks, 0);
    // Arguments: the helper reads r11 (`3a: mov r23, r11`), r12 (`40: mov
    // r24, r12`) and r13 (`46: device_load … r13`) before writing them, so
    // they are live into the helper and hence live at main's call.
    let live_in = d.liveness.live_in[helper];
    for half in 22..28 {
        assert!(live_in.contains(half), "half {half} live into the helper");
    }
    let k = insns.iter().position(|i| i.addr == 0x1b6).unwrap();
    assert!(d.liveness.live_count[k] >= 6);
    // Entry scratch is main's own adjust (`18e: … 8`).
    assert_eq!(a.stack.scratch_reserved, Some(8));
}

/// The s16/s32 kernels: one loop, closed by `while_icmp r0l, nueq, rN,
/// u2l, 2` + backward `jmp_exec_any`, no push before it.
struct Expect {
    n_insns: usize,
    header: u32,
    latch: u32,
    loop_insns: usize,
    spills: u32,
    fills: u32,
    adjust: i32,
    highest: u32,
}

fn check_private_array_loop(name: &str, e: Expect) {
    let Expect {
        n_insns,
        header,
        latch,
        loop_insns,
        spills,
        fills,
        adjust,
        highest,
    } = e;
    let (_, d) = load(name);
    let a = &d.analysis;
    assert_eq!(a.instructions, n_insns, "{name}");
    assert_eq!(a.loops.len(), 1, "{name}");
    let l = &a.loops[0];
    assert_eq!(
        (l.header, l.start, l.end),
        (header, header, latch),
        "{name}"
    );
    assert_eq!(l.latches, vec![latch], "{name}");
    // The loop is straight-line code: one block; it leaves to the
    // instruction after the jmp (`pop_exec r0l, 2`, 6 bytes later).
    assert_eq!(l.blocks, 1, "{name}");
    assert_eq!(l.exits, vec![latch + 6], "{name}");
    assert_eq!(l.instructions, loop_insns, "{name}");
    assert_eq!(l.depth, 1, "{name}");
    assert_eq!(a.backward_branches, 1, "{name}");
    assert_eq!(a.cfg.blocks, 3, "{name}");
    assert_eq!((a.spills, a.fills), (spills, fills), "{name}");
    assert_eq!(a.stack.scratch_reserved, Some(adjust), "{name}");
    assert_eq!(a.registers.highest_half_index, highest, "{name}");
    // u0_u1 (device_store base) and u2l (loop bound): halves 0..=4.
    assert_eq!(a.registers.uniform_half, 5, "{name}");
    // `while_icmp … 2` with r0l = 0 takes the depth to 2, `pop_exec 2`
    // back to 0.
    assert_eq!(a.cfg.max_exec_depth, 2, "{name}");
    assert!(a.registers.peak_live_half <= a.registers.allocated_half);
}

#[test]
fn simple_s16_private_array_loop() {
    // 81 instructions; loop 0x24..=0x238 (68 instructions); 8 stack_store
    // `i16 … xyzw` into the private array inside the loop (0x1f2..0x22a),
    // 1 stack_load after it (0x244); `6: … 140` adjust; highest r28
    // (`54: icmpsel ugt, r28, …`) = half 57.
    check_private_array_loop(
        "simple_s16_compute_shader.bin",
        Expect {
            n_insns: 81,
            header: 0x24,
            latch: 0x238,
            loop_insns: 68,
            spills: 8,
            fills: 1,
            adjust: 140,
            highest: 57,
        },
    );
}

/// `simple_s32`'s kernel (48 instructions; `testing` and `simple_s32_index`
/// have the same loop).
const S32_LOOP: Expect = Expect {
    n_insns: 48,
    header: 0x26,
    latch: 0x134,
    loop_insns: 35,
    spills: 4,
    fills: 1,
    adjust: 268,
    highest: 39,
};

#[test]
fn simple_s32_private_array_loop() {
    // 48 instructions; loop 0x26..=0x134 (35 instructions); 4 stack_store
    // (0x5e, 0x116, 0x11e, 0x126), 1 stack_load (0x140); `6: … 268`;
    // highest r19 (`8e: icmpsel ugt, r19, …`) = half 39.
    // testing_compute_shader's listing is identical.
    for bin in [
        "simple_s32_compute_shader.bin",
        "testing_compute_shader.bin",
    ] {
        check_private_array_loop(bin, S32_LOOP);
    }
}

#[test]
fn simple_s32_index_private_array_loop() {
    // Same loop; after it an indexed `164: stack_load r1, …, r1, 0`.
    check_private_array_loop(
        "simple_s32_index_compute_shader.bin",
        Expect {
            n_insns: 52,
            ..S32_LOOP
        },
    );
}
