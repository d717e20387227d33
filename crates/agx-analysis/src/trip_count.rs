//! Trip counts from the code (issue 35, item 1): an induction-variable
//! analysis over the loop forest.
//!
//! For each loop: the *exit compare* is an integer compare of the loop's own
//! body that decides, every iteration, whether the lanes stay (`while_icmp`:
//! lanes whose compare is true stay, applegpu's pseudocode) or leave
//! (`if_icmp` opening a *break*: `mov_imm r0l, k` (k >= 2) then `pop_exec`,
//! Mesa's `if (cond) break;`). One of its sources is the *induction
//! variable*: a 32-bit GPR written in the loop exactly once (the break path
//! aside), by `iadd`/`isub` of itself and an immediate, in a block that
//! dominates every latch; its initial value is the definition reaching the
//! loop from outside (a `mov_imm`, or `thread_position_in_threadgroup`
//! plus an immediate). The other source is the *bound*: an immediate, a
//! uniform register (a kernel argument: `argument`), or a GPR not written in
//! the loop holding one of those.
//!
//! * start, step and bound all immediates: the count is proved (`code`);
//! * a start of `lid + c` (each lane its own start, `lid >= 0`): the
//!   SIMD-group holding lane 0 runs the most iterations, `count(c)`; that
//!   maximum is the count assumed (`bounded`, `trip_count_max`);
//! * another exit in the loop (a second break, a data-dependent `while`):
//!   the count is a maximum only (`bounded`);
//! * a uniform bound: `argument`, naming the register;
//! * anything else (data-dependent exits, unrecognised forms): nothing.
//!
//! Values are 32-bit and are assumed not to wrap (a count whose values
//! would leave the compare's signed/unsigned range is not given).
//! The ISA-specific recognition lives in [`classify`] alone.

mod traced;

use crate::cfg::Cfg;
use crate::facts::Facts;
use crate::loops::{Dominators, LoopForest, LoopNest};
use agx_isa::{ExecOp, Instruction, OperandKind, Reg, RegFile, Width};
use serde::Serialize;

/// Where a loop's trip count comes from (serialized as its string).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TripSource {
    /// Nothing known: the model's default trip count.
    #[default]
    Default,
    /// Nothing known: the count given for unknown loops (`--trip-count N`).
    Given,
    /// Set for this loop by the user (`--trip-count ADDR=N`).
    User,
    /// Proved constant by the code.
    Code,
    /// A proved maximum (`trip_count_max`); the count assumed within it.
    Bounded,
    /// The bound is a kernel argument (`trip_count_bound`); the count is
    /// `--trip-count`'s.
    Argument,
}

impl TripSource {
    pub fn as_str(self) -> &'static str {
        match self {
            TripSource::Default => "default",
            TripSource::Given => "given",
            TripSource::User => "user",
            TripSource::Code => "code",
            TripSource::Bounded => "bounded",
            TripSource::Argument => "argument",
        }
    }
}

impl std::fmt::Display for TripSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for TripSource {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// What the code says about one loop's trip count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TripFact {
    /// Proved: the loop runs exactly this many times.
    Exact(u32),
    /// At most this many times (lane-dependent start, or another exit).
    AtMost(u32),
    /// Bounded by a kernel argument held in this uniform register (`u6`).
    Argument(String),
}

/// The instruction forms the analysis reads (the one ISA-specific part).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    /// `d = a + sign * b` (32-bit, no shift).
    Add { d: Reg, a: Src, b: Src, sign: i64 },
    /// `d = v`.
    MovImm { d: Reg, v: i64 },
    /// `d = s`.
    Mov { d: Reg, s: Src },
    /// `d = thread_position_in_threadgroup.dim`.
    Lid { d: Reg },
    /// An integer exec compare: `while` (stay when true) or `if`.
    Cmp {
        stay_if_true: bool,
        cc: Cc,
        a: Src,
        b: Src,
    },
    /// `mov_imm r0l, k`: lanes leave `k` exec levels (a break when k >= 2).
    SetExec(i64),
    /// `d = cc(..) ? x : y` (`icmpsel` of two 32-bit GPR arms).
    Select { d: Reg, x: Reg, y: Reg },
    /// Anything else.
    Other,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Src {
    Reg(Reg),
    Imm(i64),
}

/// An integer condition: relation and signedness.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Cc {
    rel: Rel,
    signed: bool,
}

/// A compare's relation: the code table's (one enum for every family).
use agx_isa::table::Cond as Rel;

fn cc_of(t: &str) -> Option<Cc> {
    // applegpu IConditionDesc spellings (agx_isa group_ctrl ICOND)
    let (signed, rel) = match t {
        "ueq" => (false, Rel::Eq),
        "seq" => (true, Rel::Eq),
        "nueq" => (false, Rel::Ne),
        "nseq" => (true, Rel::Ne),
        "ult" => (false, Rel::Lt),
        "slt" => (true, Rel::Lt),
        "ulte" => (false, Rel::Le),
        "slte" => (true, Rel::Le),
        "ugt" => (false, Rel::Gt),
        "sgt" => (true, Rel::Gt),
        "ugte" => (false, Rel::Ge),
        "sgte" => (true, Rel::Ge),
        _ => return None,
    };
    Some(Cc { rel, signed })
}

fn src_of(o: &agx_isa::Operand) -> Option<Src> {
    match o.kind {
        OperandKind::Reg(r) if o.flags & (agx_isa::flags::NEG | agx_isa::flags::ABS) == 0 => {
            // (modifier flags such as `.sx` do not change a 32-bit value)
            (r.count == 1 && r.width == Width::W32).then_some(Src::Reg(Reg { flags: 0, ..r }))
        }
        OperandKind::Imm(v) => Some(Src::Imm(v.get())),
        OperandKind::HexImm(v) => Some(Src::Imm(v.get() as i64)),
        _ => None,
    }
}

fn gpr32(o: &agx_isa::Operand) -> Option<Reg> {
    match o.kind {
        OperandKind::Reg(r) if r.file == RegFile::Gpr && r.width == Width::W32 && r.count == 1 => {
            Some(Reg { flags: 0, ..r })
        }
        _ => None,
    }
}

/// The form of `insn` the analysis reads (G13 mnemonics and operand order).
fn classify(insn: &Instruction) -> Op {
    let ops = insn.operands.as_slice();
    let m = insn.mnemonic();
    match m {
        "iadd" | "isub" if ops.len() == 3 => {
            match (gpr32(&ops[0]), src_of(&ops[1]), src_of(&ops[2])) {
                (Some(d), Some(a), Some(b)) => Op::Add {
                    d,
                    a,
                    b,
                    sign: if m == "isub" { -1 } else { 1 },
                },
                _ => Op::Other,
            }
        }
        "mov_imm" => {
            let v = ops.iter().skip(1).find_map(|o| o.kind.imm_value());
            match (ops.first().map(|o| o.kind), v) {
                (Some(OperandKind::Reg(r)), Some(v))
                    if r.file == RegFile::Gpr && r.half == 0 && r.width == Width::W16 =>
                {
                    Op::SetExec(v)
                }
                (Some(_), Some(v)) => match gpr32(&ops[0]) {
                    Some(d) => Op::MovImm { d, v },
                    None => Op::Other,
                },
                _ => Op::Other,
            }
        }
        "mov" if ops.len() == 2 => match (gpr32(&ops[0]), src_of(&ops[1])) {
            (Some(d), Some(s)) => Op::Mov { d, s },
            _ => Op::Other,
        },
        "get_sr" => {
            let sr = ops.iter().find_map(|o| match o.kind {
                OperandKind::SpecialReg(n) => Some(n),
                _ => None,
            });
            match (ops.first().and_then(gpr32), sr) {
                // sr48..50: thread_position_in_threadgroup.x/y/z
                (Some(d), Some(48..=50)) => Op::Lid { d },
                _ => Op::Other,
            }
        }
        "icmpsel" if ops.len() == 6 => match (gpr32(&ops[1]), gpr32(&ops[4]), gpr32(&ops[5])) {
            (Some(d), Some(x), Some(y)) => Op::Select { d, x, y },
            _ => Op::Other,
        },
        "while_icmp" | "if_icmp" if ops.len() >= 4 => {
            let cc = ops[1].kind.keyword_text().and_then(cc_of);
            match (cc, src_of(&ops[2]), src_of(&ops[3])) {
                (Some(cc), Some(a), Some(b)) => Op::Cmp {
                    stay_if_true: m == "while_icmp",
                    cc,
                    a,
                    b,
                },
                _ => Op::Other,
            }
        }
        _ => Op::Other,
    }
}

/// Whether instruction `i` writes a GPR half of the 32-bit register at
/// `r`'s half (read from the compact register ranges of the facts, not the
/// instruction's operands: the outer loops of a deep nest ask this of every
/// instruction they hold, several times).
fn writes(facts: &Facts, i: usize, r: &Reg) -> bool {
    let (lo, hi) = (r.half as u32, r.half as u32 + 2);
    facts.regs(i).iter().any(|d| {
        d.is_def() && !d.is_uniform() && {
            let g = d.range();
            g.start < hi && lo < g.end
        }
    })
}

/// A value reaching the loop from outside.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Val {
    Const(i64),
    /// `thread_position_in_threadgroup.d + c` (each lane its own; >= c).
    LidPlus(i64),
    Uniform(Reg),
}

struct Ctx<'a> {
    insns: &'a [Instruction],
    /// The same instructions' compact facts (register ranges).
    facts: &'a Facts,
    cfg: &'a Cfg,
    dom: &'a Dominators,
    forest: &'a LoopForest,
    /// Whether the CFG's blocks are in address order (else scans are whole).
    sorted: bool,
}

impl Ctx<'_> {
    /// The definition of `r` reaching instruction `at` (exclusive) along
    /// the dominator tree, and none other in between in layout order.
    fn reaching(&self, r: &Reg, at: usize) -> Option<usize> {
        let mut b = self.cfg.block_of[at] as usize;
        let mut end = at;
        loop {
            let start = self.cfg.blocks[b].insns.start;
            // (the walk reads code laid out before `at`, within reach)
            if start > at || at - start > 4096 {
                return None;
            }
            if let Some(i) = (start..end).rev().find(|&i| writes(self.facts, i, r)) {
                // another write between it and `at` in layout (a path the
                // dominator walk skipped): not known
                return (i + 1..at).all(|j| !writes(self.facts, j, r)).then_some(i);
            }
            // leaving a loop (other than the one headed at `at`) that
            // writes `r`: the value changes from one of its iterations to
            // the next, not the one before it
            if let Some(l) = self.forest.loop_of[b] {
                let lp = &self.forest.loops[l];
                if lp.header == b && self.cfg.blocks[b].insns.start != at && self.loop_writes(l, r)
                {
                    return None;
                }
            }
            b = self.dom.idom[b]?;
            end = self.cfg.blocks[b].insns.end.min(at);
        }
    }

    /// Whether loop `l` (forest index; nested loops included) writes `r`.
    fn loop_writes(&self, l: usize, r: &Reg) -> bool {
        // (blocks are in address order: only those between the loop's
        // lowest and highest address)
        let lp = &self.forest.loops[l];
        let blocks = &self.cfg.blocks;
        let first = if self.sorted {
            blocks.partition_point(|b| b.start < lp.start)
        } else {
            0
        };
        (first..blocks.len())
            .take_while(|&b| !self.sorted || blocks[b].start <= lp.end)
            .any(|b| {
                self.forest.contains(l, b)
                    && blocks[b].insns.clone().any(|i| writes(self.facts, i, r))
            })
    }

    /// The value of `r` at `at`, followed through up to three moves/adds.
    fn value(&self, s: Src, at: usize, depth: u8) -> Option<Val> {
        let r = match s {
            Src::Imm(v) => return Some(Val::Const(v)),
            Src::Reg(r) if r.file == RegFile::Uniform => return Some(Val::Uniform(r)),
            Src::Reg(r) => r,
        };
        if depth == 0 {
            return None;
        }
        let d = self.reaching(&r, at)?;
        match classify(&self.insns[d]) {
            Op::MovImm { v, .. } => Some(Val::Const(v)),
            Op::Lid { .. } => Some(Val::LidPlus(0)),
            Op::Mov { s, .. } => self.value(s, d, depth - 1),
            Op::Add { a, b, sign, .. } => {
                match (self.value(a, d, depth - 1)?, self.value(b, d, depth - 1)?) {
                    // (immediates are 40-bit: no overflow in i64)
                    (Val::Const(x), Val::Const(y)) => Some(Val::Const(x + sign * y)),
                    (Val::LidPlus(x), Val::Const(y)) => Some(Val::LidPlus(x + sign * y)),
                    (Val::Const(x), Val::LidPlus(y)) if sign == 1 => Some(Val::LidPlus(x + y)),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// Iterations of a loop testing `x = start + k*step` (k = 0, 1, ...) with
/// `stay(x)`, until the first false: `None` when it would not end, wrap or
/// is not monotone. (Closed forms: the count is up to 2^32.)
fn count(start: i64, step: i64, rel: Rel, bound: i64, signed: bool) -> Option<u64> {
    let (lo, hi) = if signed {
        (i32::MIN as i64, i32::MAX as i64)
    } else {
        (0, u32::MAX as i64)
    };
    if !(lo..=hi).contains(&start)
        || !(lo..=hi).contains(&bound)
        || step == 0
        || step.unsigned_abs() > u32::MAX as u64
    {
        return None;
    }
    let ceil = |a: i64, b: i64| -> u64 {
        if a <= 0 {
            0
        } else {
            ((a + b - 1) / b) as u64
        }
    };
    let n = match rel {
        Rel::Lt if step > 0 => ceil(bound - start, step),
        Rel::Le if step > 0 => ceil(bound - start + 1, step),
        Rel::Gt if step < 0 => ceil(start - bound, -step),
        Rel::Ge if step < 0 => ceil(start - bound + 1, -step),
        Rel::Ne if (bound - start) % step == 0 && (bound - start) / step >= 0 => {
            ((bound - start) / step) as u64
        }
        // the first test fails: no iteration
        Rel::Lt if start >= bound => 0,
        Rel::Gt if start <= bound => 0,
        _ => return None,
    };
    // every value tested stays in range (no wrap)
    let last = (n as i64).checked_mul(step)?.checked_add(start)?;
    (lo..=hi).contains(&last).then_some(n)
}

/// The trip-count facts of every loop of `nest` (by nest index; `None`:
/// nothing known).
pub fn analyze(
    insns: &[Instruction],
    facts: &Facts,
    cfg: &Cfg,
    dom: &Dominators,
    forest: &LoopForest,
    nest: &LoopNest,
) -> Vec<Option<TripFact>> {
    let cx = Ctx {
        insns,
        facts,
        cfg,
        dom,
        forest,
        sorted: cfg.blocks.windows(2).all(|w| w[0].start <= w[1].start),
    };
    (0..nest.loops.len())
        .map(|li| one_loop(&cx, forest, nest, li))
        .collect()
}

/// The break path after the `if_icmp` at `ci`: the `pop_exec` after a
/// `mov_imm r0l, k >= 2` ending it (its last instruction), if it is one.
fn break_path(insns: &[Instruction], ci: usize, end: usize) -> Option<usize> {
    let mut set = false;
    for (j, insn) in insns.iter().enumerate().take(end).skip(ci + 1).take(8) {
        match classify(insn) {
            Op::SetExec(k) => set = k >= 2,
            _ if insn.exec_op().is_some() || insn.flow() != agx_isa::Flow::Next => {
                return (set && matches!(insn.exec_op(), Some(ExecOp::Pop(_)))).then_some(j);
            }
            _ => {}
        }
    }
    None
}

/// Exit edges of loop `lp` that are not its ends: to the code after the
/// latch, or a `jmp_exec_none` skipping to it when no lane runs (an early
/// `stop` or `ret`, a jump out).
fn other_exits(cx: &Ctx, lp: &crate::loops::Loop, latch: usize) -> usize {
    let follow = cx.cfg.block_of.get(latch + 1).map(|&b| b as usize);
    lp.exits
        .iter()
        .filter(|&&(from, to)| {
            let Some(last) = cx.cfg.blocks[from]
                .insns
                .end
                .checked_sub(1)
                .map(|i| &cx.insns[i])
            else {
                return true;
            };
            let skip = matches!(last.flow(), agx_isa::Flow::BranchExec { target, any: false }
                if target == cx.cfg.blocks[to].start as i64);
            Some(to) != follow && !skip
        })
        .count()
}

fn one_loop(cx: &Ctx, forest: &LoopForest, nest: &LoopNest, li: usize) -> Option<TripFact> {
    let nl = &nest.loops[li];
    let lp = &forest.loops[nl.forest];
    let own = |i: usize| nest.owner[i] == Some(li as u32);
    let dominates_latches = |i: usize| {
        let b = cx.cfg.block_of[i] as usize;
        lp.latches.iter().all(|&l| cx.dom.dominates(b, l))
    };
    // exits: compares and breaks of the loop's own body; the break paths
    let (mut cmps, mut exits, mut path) = (Vec::new(), 0usize, Vec::new());
    for i in nl.first..=nl.last {
        if !nest.contains(li, i) {
            continue;
        }
        // a nested loop's instruction counts only as a break out of several
        // levels (`mov_imm r0l, k >= 3`, a write of the exec counter r0l,
        // GPR half 0): the others are not classified (an outer loop of a
        // deep nest holds every inner loop's code)
        let writes_r0l = || {
            cx.facts
                .regs(i)
                .iter()
                .any(|d| d.is_def() && !d.is_uniform() && d.start == 0)
        };
        if !own(i) && !writes_r0l() {
            continue;
        }
        match classify(&cx.insns[i]) {
            Op::SetExec(k) if k >= 2 && (own(i) || k >= 3) => exits += 1,
            Op::Cmp {
                stay_if_true: true, ..
            } if own(i) => {
                exits += 1;
                cmps.push((i, true));
            }
            Op::Cmp { .. } if own(i) => {
                if let Some(p) = break_path(cx.insns, i, nl.last + 1) {
                    cmps.push((i, false));
                    path.push((i, p));
                }
            }
            _ if cx.insns[i].exec_op() == Some(ExecOp::While) && own(i) => exits += 1,

            _ => {}
        }
    }
    exits += other_exits(cx, lp, nl.latch);
    let on_path = |j: usize| path.iter().any(|&(a, b)| a < j && j <= b);
    let mut best: Option<TripFact> = None;
    for &(ci, stay_if_true) in &cmps {
        if !dominates_latches(ci) {
            continue;
        }
        let Op::Cmp { cc, a, b, .. } = classify(&cx.insns[ci]) else {
            continue;
        };
        let f = compare_fact(
            cx,
            nest,
            li,
            ci,
            stay_if_true,
            cc,
            a,
            b,
            &on_path,
            &dominates_latches,
        );
        let Some(f) = f else { continue };
        // a count from one exit of several is a maximum
        let f = match f {
            TripFact::Exact(n) if exits > 1 => TripFact::AtMost(n),
            f => f,
        };
        best = Some(match (best, f) {
            (None, f) => f,
            (Some(TripFact::Exact(x)), TripFact::Exact(y)) => TripFact::Exact(x.min(y)),
            (
                Some(TripFact::Exact(x) | TripFact::AtMost(x)),
                TripFact::Exact(y) | TripFact::AtMost(y),
            ) => TripFact::AtMost(x.min(y)),
            (Some(TripFact::Argument(r)), _) | (_, TripFact::Argument(r)) => TripFact::Argument(r),
        });
    }
    best
}

#[allow(clippy::too_many_arguments)]
fn compare_fact(
    cx: &Ctx,
    nest: &LoopNest,
    li: usize,
    ci: usize,
    stay_if_true: bool,
    cc: Cc,
    a: Src,
    b: Src,
    on_path: &dyn Fn(usize) -> bool,
    dominates_latches: &dyn Fn(usize) -> bool,
) -> Option<TripFact> {
    let lp = InLoop {
        cx,
        nest,
        li,
        ci,
        on_path,
        dominates_latches,
    };
    let nl = &nest.loops[li];
    let (iv_src, bound_src, rel) = match (lp.induction_var(a), lp.induction_var(b)) {
        (Some(x), None) => (x, b, cc.rel),
        (None, Some(x)) => (x, a, swap(cc.rel)),
        _ => return None,
    };
    let rel = if stay_if_true { rel } else { negate(rel) };
    let (r, di, step, held) = iv_src;
    // the bound: not written in the loop
    if let Src::Reg(br) = bound_src {
        if br.file == RegFile::Gpr && lp.written_in_loop(&br) {
            return None;
        }
    }
    let header = nl.header;
    let bound = cx.value(bound_src, header, 3)?;
    // a kernel-argument bound names its register, whatever the start and
    // step (a grid-stride loop: start per lane, step an argument too)
    if let Val::Uniform(u) = bound {
        return Some(TripFact::Argument(uniform_name(&u)));
    }
    // a counter that may hold an iteration: no constant count
    if held {
        return None;
    }
    let Val::Const(step) = step else { return None };
    let start = cx.value(Src::Reg(r), header, 3)?;
    // the compare before the step (a test at the top) or after it
    let bottom = di < ci;
    let top_count = |s0: i64, bnd: i64| -> Option<u64> {
        if bottom {
            count(s0 + step, step, rel, bnd, cc.signed).map(|n| n + 1)
        } else {
            count(s0, step, rel, bnd, cc.signed)
        }
    };
    let to_u32 = |n: u64| u32::try_from(n).ok();
    match (start, bound) {
        (Val::Const(s0), Val::Const(bnd)) => {
            top_count(s0, bnd).and_then(to_u32).map(TripFact::Exact)
        }
        // lanes start at lid + c >= c: lane 0's SIMD-group runs the most
        (Val::LidPlus(c), Val::Const(bnd)) if step > 0 && matches!(rel, Rel::Lt | Rel::Le) => {
            top_count(c, bnd).and_then(to_u32).map(TripFact::AtMost)
        }
        _ => None,
    }
}

/// An exit compare at `ci` of loop `li`, read for its induction variable.
struct InLoop<'a, 'c> {
    cx: &'a Ctx<'c>,
    nest: &'a LoopNest,
    li: usize,
    ci: usize,
    /// Whether an instruction is on a break path (its writes do not count).
    on_path: &'a dyn Fn(usize) -> bool,
    dominates_latches: &'a dyn Fn(usize) -> bool,
}

/// A counter's update: (the write, its sources a and b, its sign, the
/// register written, whether the counter may hold an iteration).
type Update = (usize, Src, Src, i64, Reg, bool);

impl InLoop<'_, '_> {
    /// Whether the loop (nested loops included) writes `x`.
    fn written_in_loop(&self, x: &Reg) -> bool {
        let nl = &self.nest.loops[self.li];
        (nl.first..=nl.last).any(|i| self.nest.contains(self.li, i) && writes(self.cx.facts, i, x))
    }

    /// The loop's writes of `x`, break paths aside.
    fn defs_of(&self, x: &Reg) -> Vec<usize> {
        let nl = &self.nest.loops[self.li];
        (nl.first..=nl.last)
            .filter(|&i| {
                self.nest.contains(self.li, i) && !(self.on_path)(i) && writes(self.cx.facts, i, x)
            })
            .collect()
    }

    /// Whether instruction `k` runs on every iteration of the loop itself
    /// (not only of a nested one).
    fn every_iteration(&self, k: usize) -> bool {
        (self.dominates_latches)(k) && self.nest.owner[k] == Some(self.li as u32)
    }

    /// The induction variable: the only write of a GPR in the loop (break
    /// paths aside) adds an immediate to itself every iteration. Returns
    /// (the register, its write, the step, whether it may hold an
    /// iteration).
    fn induction_var(&self, s: Src) -> Option<(Reg, usize, Val, bool)> {
        let Src::Reg(r) = s else { return None };
        if r.file != RegFile::Gpr {
            return None;
        }
        let (d, a, b, sign, dr, mut held) = self.update_of(r)?;
        let step = match (a, b) {
            (Src::Reg(x), s) if x == r => self.step_of(s, sign)?,
            (s, Src::Reg(x)) if x == r && sign == 1 => self.step_of(s, sign)?,
            (Src::Reg(x), s) if !held && self.copied_back(r, x, d) => {
                held = true;
                self.step_of(s, sign)?
            }
            (s, Src::Reg(x)) if !held && sign == 1 && self.copied_back(r, x, d) => {
                held = true;
                self.step_of(s, sign)?
            }
            _ => return None,
        };
        (dr.half == r.half && self.every_iteration(d)).then_some((r, d, step, held))
    }

    /// The write that updates the counter `r` each iteration.
    fn update_of(&self, r: Reg) -> Option<Update> {
        let (cx, nest, li) = (self.cx, self.nest, self.li);
        let defs = self.defs_of(&r);
        match defs.as_slice() {
            // one write: `r = r + step`
            &[d] => match classify(&cx.insns[d]) {
                Op::Add { d: dr, a, b, sign } => Some((d, a, b, sign, dr, false)),
                // or `r = icmpsel(.., r, t)` with `t = r + step` (either
                // order): the counter steps or holds an iteration (Mesa's
                // first-iteration flag skips the step once); monotone but
                // its count unproved: an argument bound only
                _ => {
                    let (t, k) = held_step(cx, &r, d)?;
                    let Op::Add { d: dr, a, b, sign } = classify(&cx.insns[k]) else {
                        return None;
                    };
                    if dr.half != t.half || !self.every_iteration(k) {
                        return None;
                    }
                    Some((d, a, b, sign, Reg { half: r.half, ..dr }, true))
                }
            },
            // several: the counter kept in a stack slot meanwhile
            [..] => match spilled_counter(cx, nest, li, &r, &defs, self.dominates_latches) {
                Some((d, x, step, sign)) => {
                    let Op::Add { d: dr, .. } = classify(&cx.insns[d]) else {
                        return None;
                    };
                    // as if `r = r + step` (the fill holds r's header value)
                    let (a, b) = if x {
                        (Src::Reg(r), step)
                    } else {
                        (step, Src::Reg(r))
                    };
                    Some((d, a, b, sign, dr, false))
                }
                // or moved through copies, xor-swaps and stack slots and
                // back (the parallel-copy shuffle, [`traced`]), tested at
                // the header where `r` holds its header value
                None if self.ci == nest.loops[li].header => {
                    let (step, d) = traced::traced_step(cx.insns, nest, li, &r)?;
                    Some((d, Src::Reg(r), Src::Imm(step), 1, r, false))
                }
                None => None,
            },
        }
    }

    /// The step: an immediate, or a register the loop does not write
    /// holding one (an ALU immediate is 8 bits: 256 is in a register).
    fn step_of(&self, s: Src, sign: i64) -> Option<Val> {
        if let Src::Reg(x) = s {
            if x.file == RegFile::Gpr && self.written_in_loop(&x) {
                return None;
            }
        }
        match self.cx.value(s, self.nest.loops[self.li].header, 3)? {
            Val::Const(v) => Some(Val::Const(sign * v)),
            // a uniform step (a kernel argument): the count is not known
            Val::Uniform(u) => Some(Val::Uniform(u)),
            Val::LidPlus(_) => None,
        }
    }

    /// Or `r = x + step` (the write `d`) where the loop's last write of `x`
    /// is `mov x, r` on every iteration, no write of `x` before the add
    /// (the body may reuse `x` as a temporary in between: Mesa's `t = i +
    /// 12; if (n < t) break; ...; i = t`): `x` at the header is `r` of the
    /// previous iteration, so `r` too moves by `step` an iteration; its
    /// start is not followed, so an argument bound only.
    fn copied_back(&self, r: Reg, x: Reg, d: usize) -> bool {
        if x.file != RegFile::Gpr || x.half == r.half {
            return false;
        }
        let xdefs = self.defs_of(&x);
        matches!(xdefs.as_slice(), &[.., m] if xdefs[0] > d
            && matches!(classify(&self.cx.insns[m]),
                Op::Mov { d: md, s: Src::Reg(t) } if md.half == x.half && t.half == r.half)
            && self.every_iteration(m))
    }
}

/// The counter `r` of a loop that keeps it in a stack slot while its
/// register holds something else (issue 35: the register-blocked GEMMs
/// spill `k` before a vector load reuses its register): the loop stores `r`
/// to slot `S` (a constant offset) before any write of `r` in the
/// iteration, fills `x` from `S` later, and its last write of `r` is
/// `r = x + step`; no other store to `S` in the loop, each of the three on
/// every iteration. Then `r` at the header moves by `step` an iteration, as
/// one `r = r + step` would. Returns (the last write, whether `x` is the
/// add's first source, the step operand, the add's sign).
fn spilled_counter(
    cx: &Ctx,
    nest: &LoopNest,
    li: usize,
    r: &Reg,
    defs: &[usize],
    every_iteration: &dyn Fn(usize) -> bool,
) -> Option<(usize, bool, Src, i64)> {
    let nl = &nest.loops[li];
    let (&first, &last) = (defs.first()?, defs.last()?);
    let Op::Add { d, a, b, sign } = classify(&cx.insns[last]) else {
        return None;
    };
    if d.half != r.half {
        return None;
    }
    let (x, step, x_first) = match (a, b) {
        (Src::Reg(x), s) if x != *r && x.file == RegFile::Gpr => (x, s, true),
        (s, Src::Reg(x)) if x != *r && x.file == RegFile::Gpr && sign == 1 => (x, s, false),
        _ => return None,
    };
    // x: filled from a constant slot
    let f = cx.reaching(&x, last)?;
    let slot_of = |i: usize, m: &str| -> Option<(i64, Option<Reg>)> {
        let insn = &cx.insns[i];
        if insn.mnemonic() != m {
            return None;
        }
        let ops = insn.operands.as_slice();
        let off = ops.get(ops.len().checked_sub(2)?)?.kind.imm_value()?;
        // the stored register (a store's operand before the offset), or
        // the filled one (a load's destination)
        let reg = if m == "stack_store" {
            ops.get(ops.len().checked_sub(3)?).and_then(gpr32)
        } else {
            ops.first().and_then(gpr32)
        };
        Some((off, reg))
    };
    let (slot, filled) = slot_of(f, "stack_load")?;
    if filled.map(|x2| x2.half) != Some(x.half) {
        return None;
    }
    // the one store to that slot in the loop: r, before r is written
    let mut stores = (nl.first..=nl.last).filter(|&i| {
        nest.contains(li, i)
            && cx.insns[i].mnemonic() == "stack_store"
            && slot_of(i, "stack_store").is_none_or(|(o, _)| o == slot)
    });
    let st = stores.next()?;
    if stores.next().is_some() {
        return None;
    }
    let (_, stored) = slot_of(st, "stack_store")?;
    let ok = stored.is_some_and(|s| s.half == r.half && s.width == Width::W32)
        && st < first
        && st < f
        && f < last
        && [st, f, last].iter().all(|&i| every_iteration(i));
    ok.then_some((last, x_first, step, sign))
}

/// `r = icmpsel(cc, p, q, r, t)` or `(.., t, r)` at `d`: the other arm `t`
/// (a 32-bit GPR) and the instruction writing it that reaches `d`.
fn held_step(cx: &Ctx, r: &Reg, d: usize) -> Option<(Reg, usize)> {
    let Op::Select { d: dst, x, y } = classify(&cx.insns[d]) else {
        return None;
    };
    if dst.half != r.half {
        return None;
    }
    let t = match (x.half == r.half, y.half == r.half) {
        (true, false) => y,
        (false, true) => x,
        _ => return None,
    };
    Some((t, cx.reaching(&t, d)?))
}

fn uniform_name(u: &Reg) -> String {
    match u.width {
        Width::W16 => format!(
            "u{}{}",
            u.half / 2,
            if u.half.is_multiple_of(2) { "l" } else { "h" }
        ),
        _ => format!("u{}", u.half / 2),
    }
}

fn swap(r: Rel) -> Rel {
    match r {
        Rel::Lt => Rel::Gt,
        Rel::Le => Rel::Ge,
        Rel::Gt => Rel::Lt,
        Rel::Ge => Rel::Le,
        x => x,
    }
}

fn negate(r: Rel) -> Rel {
    match r {
        Rel::Eq => Rel::Ne,
        Rel::Ne => Rel::Eq,
        Rel::Lt => Rel::Ge,
        Rel::Le => Rel::Gt,
        Rel::Gt => Rel::Le,
        Rel::Ge => Rel::Lt,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_form_counts() {
        assert_eq!(count(0, 1, Rel::Lt, 16, false), Some(16));
        assert_eq!(count(0, 256, Rel::Lt, 324, false), Some(2));
        assert_eq!(count(0, 1, Rel::Le, 3, true), Some(4));
        assert_eq!(count(-3, 1, Rel::Le, 3, true), Some(7));
        assert_eq!(count(10, -2, Rel::Gt, 0, true), Some(5));
        assert_eq!(count(0, 4, Rel::Ne, 16, false), Some(4));
        assert_eq!(count(0, 3, Rel::Ne, 16, false), None);
        assert_eq!(count(0, -1, Rel::Lt, 16, false), None);
        assert_eq!(count(20, 1, Rel::Lt, 16, false), Some(0));
    }
}
