//! Issue 22, must show 2: the divergence analysis on hand-made code (applegpu
//! syntax, assembled): each source class, sync dependence (a value set
//! under a divergent branch), a loop with a divergent exit, calls.

use crate::common;
use agx_analysis::divergence::{Branch, BranchKind, Counts};
use agx_analysis::program::{analyze_program, FunctionCode};
use agx_analysis::timing::ModelParams;
use agx_analysis::{analyze_detailed, CfgOptions};
use agx_isa::asm::assemble_insns_at;
use common::Funcs;

fn asm(text: &str) -> Vec<agx_isa::Instruction> {
    assemble_insns_at(text, 0).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn branches(text: &str) -> (Vec<Branch>, Counts) {
    let d = analyze_detailed(&asm(text), &CfgOptions::default());
    assert!(d.divergence.unknown.is_none(), "{:?}", d.divergence.unknown);
    (d.divergence.branches, d.divergence.counts)
}

/// The `if` branches, in address order.
fn ifs(text: &str) -> Vec<Branch> {
    branches(text)
        .0
        .into_iter()
        .filter(|b| b.kind == BranchKind::If)
        .collect()
}

/// `if` on the value `setup` leaves in r2.
fn if_on_r2(setup: &str) -> Branch {
    let text = format!(
        "mov_imm r0l, 0\n{setup}\nif_icmp r0l, nueq, r2, 0, 1\nmov_imm r3, 1, 0b0\npop_exec r0l, 1\nstop\n"
    );
    let v = ifs(&text);
    assert_eq!(v.len(), 1, "{v:?}");
    v[0].clone()
}

#[test]
fn sources_divergent() {
    // thread position: divergent, and the reason names it
    let b = if_on_r2("get_sr r1, sr80 (thread_position_in_grid.x)\niadd r2, r1, 1");
    assert!(!b.uniform);
    assert_eq!(
        b.reason, "r2 ← iadd r1 ← get_sr thread_position_in_grid.x",
        "{b:?}"
    );
    // lane number
    assert!(!if_on_r2("get_sr r2, sr52 (thread_index_in_simdgroup)").uniform);
    // a load from a thread-dependent address
    let b = if_on_r2(
        "get_sr r1, sr80 (thread_position_in_grid.x)\n\
         device_load 0, i32, x, r2, u0_u1, r1, unsigned\nwait 0",
    );
    assert!(!b.uniform, "{b:?}");
    // an atomic's result (one old value per thread)
    let b = if_on_r2("atomic add, 0, r2, u4_u5, 0, signed, r2, 1, 0, 1, 4, 2\nwait 0");
    assert!(!b.uniform, "{b:?}");
    // a register never written (undefined at entry)
    let b = if_on_r2("iadd r2, r5, 1");
    assert!(!b.uniform, "{b:?}");
    // a shuffle from a divergent lane
    let b = if_on_r2("get_sr r1, sr80 (thread_position_in_grid.x)\nsimd_shuffle r2, r1, r1l");
    assert!(!b.uniform, "{b:?}");
}

#[test]
fn sources_uniform() {
    // uniform registers and immediates
    assert!(if_on_r2("iadd r2, u4, 1").uniform);
    assert!(if_on_r2("mov_imm r2, 5, 0b0").uniform);
    // threadgroup position, SIMD-group index: the same for the SIMD-group
    assert!(if_on_r2("get_sr r2, sr0 (threadgroup_position_in_grid.x)").uniform);
    assert!(if_on_r2("get_sr r2, sr53 (simdgroup_index_in_threadgroup)").uniform);
    // a load whose address is uniform
    let b = if_on_r2("device_load 0, i32, x, r2, u0_u1, 8, unsigned\nwait 0");
    assert!(b.uniform, "{b:?}");
    // ballots and reductions of divergent values
    assert!(
        if_on_r2("get_sr r1, sr80 (thread_position_in_grid.x)\nicmp_ballot r2, ueq, r1l, 0")
            .uniform
    );
    assert!(if_on_r2("get_sr r3, sr80 (thread_position_in_grid.x)\nsimd_min.f r2, r3").uniform);
    // a broadcast: shuffle from a uniform lane
    assert!(
        if_on_r2(
            "get_sr r1, sr80 (thread_position_in_grid.x)\nmov_imm r4l, 3\nsimd_shuffle r2, r1, r4l"
        )
        .uniform
    );
    // a spilled uniform value comes back uniform; a spilled divergent one not
    assert!(
        if_on_r2(
            "iadd r4, u4, 1\nstack_store i32, 1, 0, x, 4, r4, 8, 0\n\
         get_sr r4, sr80 (thread_position_in_grid.x)\nstack_load r2, i32, 1, 0, x, 4, 8, 0\nwait 0"
        )
        .uniform
    );
    assert!(
        !if_on_r2(
            "get_sr r4, sr80 (thread_position_in_grid.x)\nstack_store i32, 1, 0, x, 4, r4, 8, 0\n\
         mov_imm r4, 0, 0b0\nstack_load r2, i32, 1, 0, x, 4, 8, 0\nwait 0"
        )
        .uniform
    );
}

/// Sync dependence: a uniform value written in the arm of a divergent `if`
/// is divergent after the `pop_exec`; under a uniform `if` it stays uniform.
#[test]
fn value_set_under_a_divergent_branch() {
    let prog = |cond: &str| {
        format!(
            "mov_imm r0l, 0\n{cond}\n\
             mov_imm r2, 0, 0b0\n\
             if_icmp r0l, nueq, r1, 0, 1\n\
             mov_imm r2, 1, 0b0\n\
             if_icmp r0l, nueq, r2, 0, 1\n\
             pop_exec r0l, 1\n\
             pop_exec r0l, 1\n\
             if_icmp r0l, nueq, r2, 0, 1\n\
             pop_exec r0l, 1\n\
             stop\n"
        )
    };
    let v = ifs(&prog("get_sr r1, sr80 (thread_position_in_grid.x)"));
    assert_eq!(v.len(), 3);
    assert!(!v[0].uniform);
    // inside the arm, r2 = 1 on every lane that runs it
    assert!(v[1].uniform, "{:?}", v[1]);
    // after the join, lanes disagree
    assert!(!v[2].uniform, "{:?}", v[2]);
    assert!(
        v[2].reason.to_string().contains("divergent exec mask"),
        "{}",
        v[2].reason
    );
    let v = ifs(&prog("mov r1, u6"));
    assert!(v.iter().all(|b| b.uniform), "{v:?}");
    // if/else: a value written in both arms of a divergent if
    let text = "mov_imm r0l, 0\n\
         get_sr r1, sr80 (thread_position_in_grid.x)\n\
         if_icmp r0l, nueq, r1, 0, 1\n\
         mov_imm r2, 1, 0b0\n\
         else_fcmp r0l, eq, 0.0, 0.0, 1\n\
         mov_imm r2, 2, 0b0\n\
         pop_exec r0l, 1\n\
         if_icmp r0l, nueq, r2, 0, 1\n\
         pop_exec r0l, 1\n\
         stop\n";
    let (b, c) = branches(text);
    let e = b.iter().find(|b| b.kind == BranchKind::Else).unwrap();
    assert!(!e.uniform);
    assert_eq!(c.if_divergent, 2, "{b:?}");
}

/// A loop whose exit depends on the thread: divergent, and what it computes
/// is divergent after it; a counted loop on a kernel argument is uniform and
/// so is its counter.
#[test]
fn loop_with_a_divergent_exit() {
    let prog = |bound: &str| {
        format!(
            "mov_imm r0l, 0\n\
             {bound}\n\
             mov_imm r2, 0, 0b0\n\
             mov_imm r3, 0, 0b0\n\
             head:\n\
             while_icmp r0l, ult, r2, r5, 1\n\
             iadd r3, r3, u4\n\
             iadd r2, r2.sx, 1\n\
             jmp_exec_any head\n\
             pop_exec r0l, 1\n\
             if_icmp r0l, nueq, r3, 0, 1\n\
             pop_exec r0l, 1\n\
             stop\n"
        )
    };
    let (b, c) = branches(&prog("get_sr r5, sr80 (thread_position_in_grid.x)"));
    assert_eq!((c.loop_uniform, c.loop_divergent), (0, 1), "{b:?}");
    let l = b.iter().find(|b| b.kind == BranchKind::Loop).unwrap();
    assert!(
        l.reason.to_string().contains("slowest thread"),
        "{}",
        l.reason
    );
    assert!(
        l.reason.to_string().contains("thread_position_in_grid.x"),
        "{}",
        l.reason
    );
    // r3 sums u4 on every lane, but lanes leave after different counts
    let after = b.iter().find(|b| b.kind == BranchKind::If).unwrap();
    assert!(!after.uniform, "{after:?}");
    let (b, c) = branches(&prog("mov r5, u6"));
    assert_eq!((c.loop_uniform, c.loop_divergent), (1, 0), "{b:?}");
    assert!(b.iter().all(|b| b.uniform), "{b:?}");
}

/// A loop left by a `break` under a divergent `if` (Mesa's `mov_imm r0l,
/// 2`): divergent; the break's `if` is its exit test, not counted as an if.
#[test]
fn loop_with_a_divergent_break() {
    let prog = |c: &str| {
        format!(
            "mov_imm r0l, 0\n\
             {c}\n\
             mov_imm r2, 0, 0b0\n\
             head:\n\
             while_icmp r0l, ult, r2, u16, 1\n\
             if_icmp r0l, ult, r2, r3, 1\n\
             mov r4, r2\n\
             mov_imm r0l, 2\n\
             pop_exec r0l, 0\n\
             pop_exec r0l, 1\n\
             iadd r2, r2.sx, 1\n\
             jmp_exec_any head\n\
             pop_exec r0l, 1\n\
             stop\n"
        )
    };
    // (the loop counter r3 read per lane, then from a uniform)
    let divergent = Counts {
        loop_divergent: 1,
        ..Counts::default()
    };
    let uniform = Counts {
        loop_uniform: 1,
        ..Counts::default()
    };
    for (setup, want, break_divergent) in [
        (
            "get_sr r3, sr80 (thread_position_in_grid.x)",
            divergent,
            true,
        ),
        ("mov r3, u6", uniform, false),
    ] {
        let (b, c) = branches(&prog(setup));
        assert_eq!(c, want, "{b:?}");
        let broken = b.iter().any(|b| b.kind == BranchKind::Break && !b.uniform);
        assert_eq!(broken, break_divergent, "{b:?}");
    }
}

/// Calls: a helper's uniform result stays uniform in the caller, its
/// divergent one is divergent; a call to code not given makes everything
/// divergent.
#[test]
fn calls_through_callee_summaries() {
    let helper = assemble_insns_at(
        "get_sr r6, sr80 (thread_position_in_grid.x)\n\
         iadd r4, u8, 1\n\
         iadd r5, r6, 1\n\
         ret r1\n",
        0x100,
    )
    .unwrap();
    let main = asm("mov_imm r0l, 0\n\
         call 0x100\n\
         if_icmp r0l, nueq, r4, 0, 1\n\
         pop_exec r0l, 1\n\
         if_icmp r0l, nueq, r5, 0, 1\n\
         pop_exec r0l, 1\n\
         stop\n");
    let code = |insns| FunctionCode::new(0, None, insns);
    let p = analyze_program(
        code(main.clone()),
        &Funcs(vec![FunctionCode::new(
            0x100,
            Some("helper".into()),
            helper,
        )]),
        &ModelParams::default(),
    );
    let v: Vec<bool> = p
        .main()
        .divergence
        .branches
        .iter()
        .filter(|b| b.kind == BranchKind::If)
        .map(|b| b.uniform)
        .collect();
    assert_eq!(v, vec![true, false], "{:?}", p.main().divergence.branches);
    let r5 = &p.main().divergence.branches[1];
    assert!(r5.reason.to_string().contains("call"), "{r5:?}");
    // the helper not given: nothing is known after the call
    let p = analyze_program(code(main), &Funcs(vec![]), &ModelParams::default());
    assert!(p
        .main()
        .divergence
        .branches
        .iter()
        .filter(|b| b.kind == BranchKind::If)
        .all(|b| !b.uniform));
}

/// Code the model does not understand is divergent, never uniform.
#[test]
fn unknown_exec_writes_are_divergent() {
    let text = "mov_imm r0l, 0\n\
         iadd r0l, r0l, u4l\n\
         if_icmp r0l, nueq, u4, 0, 1\n\
         pop_exec r0l, 1\n\
         stop\n";
    let d = analyze_detailed(&asm(text), &CfgOptions::default());
    assert!(d.divergence.unknown.is_some());
    assert!(d.divergence.branches.iter().all(|b| !b.uniform));
}

/// Item 3's range: a divergent if/else charges both arms (the range rises
/// above the uniform-path bounds, up to the every-arm estimate); a uniform
/// one charges one arm (the range is the uniform-path bounds).
#[test]
fn divergence_aware_range() {
    let prog = |cond: &str| {
        format!(
            "mov_imm r0l, 0\n{cond}\n\
             if_icmp r0l, nueq, r1, 0, 1\n\
             fmul32 r2, r3, r3\nfmul32 r2, r2, r3\nfmul32 r2, r2, r3\nfmul32 r2, r2, r3\n\
             rsqrt r2, r2\nrsqrt r2, r2\nrsqrt r2, r2\n\
             else_fcmp r0l, eq, 0.0, 0.0, 1\n\
             fadd32 r2, r3, r3\n\
             pop_exec r0l, 1\n\
             stop\n"
        )
    };
    let run = |cond: &str| {
        let p = analyze_program(
            FunctionCode::new(0, None, asm(&prog(cond))),
            &Funcs(vec![]),
            &ModelParams::default(),
        );
        (
            p.divergence_range(),
            p.main().timing.paths,
            p.main().timing.total_cycles,
            p,
        )
    };
    let (r, paths, total, p) =
        run("get_sr r1, sr80 (thread_position_in_grid.x)\nmov_imm r3, 1, 0b0");
    assert!(r.shortest > paths.shortest + 1.0, "{r:?} {paths:?}");
    assert!(
        r.longest >= paths.longest && r.longest <= total + 1e-9,
        "{r:?} {paths:?} {total}"
    );
    assert!(r.shortest <= r.longest);
    // the divergent if's arms are most of the cost: a suggestion names it
    let s: Vec<_> = p
        .main()
        .suggestions
        .iter()
        .filter(|s| s.rule == "divergent-branch")
        .collect();
    assert!(!s.is_empty(), "{:?}", p.main().suggestions);
    assert!(
        s[0].message.contains("thread_position_in_grid.x"),
        "{}",
        s[0].message
    );
    let (r, paths, _, p) = run("mov r1, u4\nmov_imm r3, 1, 0b0");
    assert_eq!((r.shortest, r.longest), (paths.shortest, paths.longest));
    assert!(p
        .main()
        .suggestions
        .iter()
        .all(|s| s.rule != "divergent-branch"));
}

/// Argument uniformity: a callee is analysed again with the halves every
/// one of its call sites passes uniform, so a result it computes from a
/// uniform argument is uniform in the caller, and a load at an address it
/// gets as an argument is a uniform-address load. A callee called with a
/// uniform argument at one site and a divergent one at another keeps the
/// divergent summary (it must hold at both).
#[test]
fn callee_summaries_follow_uniform_arguments() {
    let helper = || {
        FunctionCode::new(
            0x100,
            Some("helper".into()),
            assemble_insns_at(
                "iadd r5, r2, 1\n\
             device_load 0, i32, x, r6, u0_u1, r2, unsigned\n\
             wait 0\n\
             ret r1\n",
                0x100,
            )
            .unwrap(),
        )
    };
    let check = "mov_imm r0l, 0\n\
         if_icmp r0l, nueq, r5, 0, 1\n\
         pop_exec r0l, 1\n\
         if_icmp r0l, nueq, r6, 0, 1\n\
         pop_exec r0l, 1\n";
    let run = |main: String| {
        let main = FunctionCode::new(0, None, asm(&main));
        analyze_program(main, &Funcs(vec![helper()]), &ModelParams::default())
    };
    let if_uniform = |p: &agx_analysis::program::Program| -> Vec<bool> {
        p.main()
            .divergence
            .branches
            .iter()
            .filter(|b| b.kind == BranchKind::If)
            .map(|b| b.uniform)
            .collect()
    };
    // a uniform argument (a uniform register plus an immediate)
    let p = run(format!("iadd r2, u4, 3\ncall 0x100\n{check}stop\n"));
    assert_eq!(p.functions.len(), 2);
    assert_eq!(
        if_uniform(&p),
        vec![true, true],
        "{:?}",
        p.main().divergence
    );
    let h = &p.functions[1];
    assert_eq!(h.divergence.uniform_loads, vec![1], "{:?}", h.divergence);
    assert!(h.timing.instructions_detail[1].uniform_address);
    assert_eq!(p.divergence_counts().uniform_loads, 1);
    // a divergent argument: both results divergent, the load per thread
    let p = run(format!(
        "get_sr r2, sr80 (thread_position_in_grid.x)\ncall 0x100\n{check}stop\n"
    ));
    assert_eq!(if_uniform(&p), vec![false, false]);
    assert!(p.functions[1].divergence.uniform_loads.is_empty());
    // one site uniform, one divergent: the summary must hold at both
    let p = run(format!(
        "iadd r2, u4, 3\ncall 0x100\n{check}\
         get_sr r2, sr80 (thread_position_in_grid.x)\ncall 0x100\n{check}stop\n"
    ));
    assert_eq!(if_uniform(&p), vec![false, false, false, false]);
    assert!(p.functions[1].divergence.uniform_loads.is_empty());
    // two sites that both pass uniform values: uniform at both
    let p = run(format!(
        "iadd r2, u4, 3\ncall 0x100\n{check}\
         mov_imm r2, 9, 0b0\ncall 0x100\n{check}stop\n"
    ));
    assert_eq!(if_uniform(&p), vec![true, true, true, true]);
}

/// Argument uniformity through two levels: main passes a uniform value to
/// `outer`, which passes it on to `inner`; inner's result comes back
/// uniform to main.
#[test]
fn argument_uniformity_through_two_levels() {
    let outer = FunctionCode::new(
        0x100,
        Some("outer".into()),
        assemble_insns_at("iadd r3, r2, 2\ncall 0x200\nret r1\n", 0x100).unwrap(),
    );
    let inner = FunctionCode::new(
        0x200,
        Some("inner".into()),
        assemble_insns_at("imadd r5, r3, r3, 0\nret r1\n", 0x200).unwrap(),
    );
    let main = |arg: &str| {
        FunctionCode::new(0, None, asm(&format!(
            "{arg}\ncall 0x100\nmov_imm r0l, 0\nif_icmp r0l, nueq, r5, 0, 1\npop_exec r0l, 1\nstop\n"
        )))
    };
    let src = Funcs(vec![outer, inner]);
    let p = analyze_program(main("iadd r2, u4, 3"), &src, &ModelParams::default());
    assert_eq!(p.functions.len(), 3);
    let b: Vec<bool> = p
        .main()
        .divergence
        .branches
        .iter()
        .map(|b| b.uniform)
        .collect();
    assert_eq!(b, vec![true], "{:?}", p.main().divergence.branches);
    let p = analyze_program(
        main("get_sr r2, sr80 (thread_position_in_grid.x)"),
        &src,
        &ModelParams::default(),
    );
    let b: Vec<bool> = p
        .main()
        .divergence
        .branches
        .iter()
        .map(|b| b.uniform)
        .collect();
    assert_eq!(b, vec![false]);
}
