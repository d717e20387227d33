//! Branch verdicts from the code table alone (any GPU family): whether the
//! lanes of a SIMD-group agree at each exec-mask test, loop and skip. It
//! reads only `agx_isa::table` rows (uses, definitions, special-register
//! meanings, memory descriptors, the exec column) and the CFG's exec
//! depths; it is what Apple9 code gets, where the G13 divergence analysis
//! (`crate::divergence`, which reads G13 instructions) does not run.
//!
//! A value is *uniform* (the same in every active lane), *divergent*, or
//! *unknown*, per 16-bit GPR half, by a forward dataflow over the CFG:
//! uniform-file registers and immediates are uniform; a special register
//! is as its meaning says (`SpecialValue::simd_uniform`); an atomic's
//! result is divergent; a cross-lane operation's is unknown (a reduction is
//! uniform, a shuffle is not: the table does not say which); an
//! instruction whose operands are not all decoded makes what it defines
//! unknown; anything else is divergent if a source is, else unknown if a
//! source is, else uniform (a load from a uniform address reads one value).
//! A GPR read before any definition is unknown.
//!
//! Exec masks add one rule (sync dependence): inside an exec region (from
//! an `if`/`while` test to the point its level is popped) lanes that fail
//! the test keep their old values, so when a divergent region closes every
//! half defined inside it is divergent; a loop with a divergent exit test
//! likewise makes the halves it defines divergent where it is left. The
//! verdicts and the values are iterated together to a fixed point.

use crate::cfg::Cfg;
use crate::divergence::{BranchKind, Counts};
use agx_isa::table::{CodeTable, Pred};
use agx_isa::{Category, ExecOp, Flow};
use serde::Serialize;

/// What the lanes of a SIMD-group hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Val {
    Uniform,
    Unknown,
    Divergent,
}

/// One branch and its verdict.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TableBranch {
    /// Address of the branch instruction.
    pub at: u32,
    #[serde(skip)]
    pub index: usize,
    pub kind: BranchKind,
    /// Whether every active lane goes the same way; `null` when unknown.
    pub uniform: Option<bool>,
    pub reason: String,
    /// Cycles of the arms it guards: `null` (no timing model here).
    pub arms_cycles: Option<f64>,
    /// The rows it guards (end exclusive): an `if` to the end of its
    /// region, an `else` from itself to that end.
    #[serde(skip)]
    pub arms: Option<(usize, usize)>,
}

/// The verdicts of one piece of code.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Uniformity {
    pub branches: Vec<TableBranch>,
    pub counts: Counts,
    /// Branches whose verdict is unknown.
    pub unknown: usize,
    /// The values before each row (empty when no fixed point was found).
    before: Vec<State>,
}

impl Uniformity {
    /// The compare row whose predicate bank `bank` holds just before row
    /// `row` (`None`: none, or different ones on merged paths).
    pub fn pred_source(&self, row: usize, bank: u8) -> Option<usize> {
        let at = self.before.get(row)?.pred_at[bank as usize & 7];
        (at != u32::MAX).then_some(at as usize)
    }

    /// Whether every half of `r` holds a uniform value just before row
    /// `row` (a uniform-file register always does).
    pub fn uniform_at(&self, row: usize, r: &agx_isa::table::RegRange) -> bool {
        r.is_uniform()
            || self
                .before
                .get(row)
                .is_some_and(|st| r.range().all(|h| h < 256 && st.get(h) == Val::Uniform))
    }
}

/// 256 GPR halves, two bits each: divergent, unknown; and the predicate
/// banks a compare sets (Apple9).
#[derive(Clone, Debug, PartialEq, Eq)]
struct State {
    div: [u64; 4],
    unk: [u64; 4],
    pred: [Val; 8],
    /// The compare that set each bank (row index; `u32::MAX`: none, or
    /// several on merged paths).
    pred_at: [u32; 8],
}

impl State {
    fn entry() -> State {
        // nothing defined yet: every GPR unknown
        State {
            div: [0; 4],
            unk: [u64::MAX; 4],
            pred: [Val::Unknown; 8],
            pred_at: [u32::MAX; 8],
        }
    }
    fn get(&self, h: u32) -> Val {
        let (w, b) = ((h / 64) as usize & 3, h % 64);
        if self.div[w] >> b & 1 != 0 {
            Val::Divergent
        } else if self.unk[w] >> b & 1 != 0 {
            Val::Unknown
        } else {
            Val::Uniform
        }
    }
    fn set(&mut self, h: u32, v: Val) {
        let (w, b) = ((h / 64) as usize & 3, h % 64);
        let m = 1u64 << b;
        self.div[w] = (self.div[w] & !m) | if v == Val::Divergent { m } else { 0 };
        self.unk[w] = (self.unk[w] & !m) | if v == Val::Unknown { m } else { 0 };
    }
    /// Joins `o` into `self` (the worse value per half); whether it changed.
    fn meet(&mut self, o: &State) -> bool {
        let before = self.clone();
        for w in 0..4 {
            self.div[w] |= o.div[w];
            self.unk[w] = (self.unk[w] | o.unk[w]) & !self.div[w];
        }
        for (p, q) in self.pred.iter_mut().zip(o.pred) {
            *p = (*p).max(q);
        }
        for (a, b) in self.pred_at.iter_mut().zip(o.pred_at) {
            if *a != b {
                *a = u32::MAX;
            }
        }
        *self != before
    }
    fn mark_divergent(&mut self, halves: &[u64; 4]) {
        or_into(&mut self.div, halves);
        for (u, d) in self.unk.iter_mut().zip(self.div) {
            *u &= !d;
        }
    }
}

/// `a |= b`, word by word.
fn or_into(a: &mut [u64; 4], b: &[u64; 4]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x |= y;
    }
}

/// An exec region: the test at `open`, the rows it covers (end exclusive).
#[derive(Clone, Debug)]
struct Region {
    open: usize,
    end: usize,
    /// GPR halves defined inside.
    defs: [u64; 4],
}

fn defs_in(t: &CodeTable, rows: std::ops::Range<usize>) -> [u64; 4] {
    let mut m = [0u64; 4];
    for i in rows {
        for r in t.defs(i).filter(|r| !r.is_uniform()) {
            for h in r.range().filter(|&h| h < 256) {
                m[(h / 64) as usize] |= 1 << (h % 64);
            }
        }
    }
    m
}

/// The exec regions of the code: an `if`/`while` test opens one, closed
/// at the first later row of its function whose exec depth is below the
/// depth after the test. In the order of their opening rows.
fn regions(t: &CodeTable, cfg: &Cfg) -> Vec<Region> {
    let n = t.rows.len();
    let func_of = |i: usize| cfg.blocks[cfg.block_of[i] as usize].function;
    let mut out: Vec<Region> = cfg
        .exec_events
        .iter()
        .filter(|e| matches!(e.op, "if" | "while"))
        .filter(|e| e.depth_after > 0)
        .map(|e| {
            let f = func_of(e.index);
            let end = (e.index + 1..n)
                .find(|&k| func_of(k) != f || cfg.exec_depth[k] < e.depth_after)
                .unwrap_or(n);
            Region {
                open: e.index,
                end,
                defs: defs_in(t, e.index + 1..end),
            }
        })
        .collect();
    // (stable: regions opened at one row keep the events' order)
    out.sort_by_key(|r| r.open);
    out
}

/// The value row `i` defines, given the state before it.
fn value(t: &CodeTable, i: usize, st: &State) -> Val {
    let row = &t.rows[i];
    if !row.complete {
        return Val::Unknown;
    }
    if let Some(s) = row.special {
        return match s.value.simd_uniform() {
            Some(true) => Val::Uniform,
            Some(false) => Val::Divergent,
            None => Val::Unknown,
        };
    }
    if row.op == agx_isa::table::AluOp::Imm {
        // an immediate (or a constant truth table): no source matters
        return Val::Uniform;
    }
    match row.class {
        Category::Atomic => return Val::Divergent,
        Category::CrossLane => return Val::Unknown,
        _ => {}
    }
    sources(t, i, st)
}

/// The worst value among row `i`'s GPR sources (uniform without any).
fn sources(t: &CodeTable, i: usize, st: &State) -> Val {
    t.uses(i)
        .filter(|u| !u.is_uniform())
        .flat_map(|u| u.range())
        .map(|h| if h < 256 { st.get(h) } else { Val::Unknown })
        .max()
        .unwrap_or(Val::Uniform)
}

fn transfer(t: &CodeTable, i: usize, st: &mut State) {
    // an exec-mask row's register write is its nesting counter, per lane:
    // not a data value
    let v = if t.rows[i].exec.is_some() {
        Val::Unknown
    } else {
        value(t, i, st)
    };
    if let Some(Pred::Write(b)) = t.rows[i].pred {
        st.pred[b as usize & 7] = v;
        st.pred_at[b as usize & 7] = i as u32;
    }
    for r in t.defs(i).filter(|r| !r.is_uniform()) {
        for h in r.range().filter(|&h| h < 256) {
            st.set(h, v);
        }
    }
}

/// What the divergent regions and loops add at row `i` (before it): the
/// halves defined in each divergent region closing there.
struct Sync<'a> {
    closing: &'a [Vec<usize>],
    regions: &'a [Region],
    divergent: &'a [bool],
}

impl Sync<'_> {
    fn apply(&self, i: usize, st: &mut State) {
        for &r in &self.closing[i] {
            if self.divergent[r] {
                st.mark_divergent(&self.regions[r].defs);
            }
        }
    }
}

/// The domain of [`states`] over the shared dataflow framework
/// ([`crate::dataflow`]): a block applies each row's sync marks and
/// transfer; an edge leaving a divergent loop marks what the loop defines;
/// with `record` set (the replay after the fixpoint), the state before each
/// row is kept.
struct Domain<'a, 'b> {
    t: &'a CodeTable,
    cfg: &'a Cfg,
    sync: &'a Sync<'b>,
    leaving: &'a dyn Fn(usize, usize) -> Option<[u64; 4]>,
    before: Option<Vec<State>>,
}

impl crate::dataflow::Forward for Domain<'_, '_> {
    type State = State;
    fn block(&mut self, b: usize, st: &mut State) {
        for i in self.cfg.blocks[b].insns.clone() {
            self.sync.apply(i, st);
            if let Some(v) = self.before.as_mut() {
                v[i] = st.clone();
            }
            transfer(self.t, i, st);
        }
    }
    fn edge(&mut self, b: usize, st: &mut State, e: &crate::cfg::Edge) {
        if let Some(d) = (self.leaving)(b, e.to) {
            st.mark_divergent(&d);
        }
    }
    fn join(&mut self, _pred: usize, _to: usize, into: &mut State, from: &State) -> bool {
        into.meet(from)
    }
}

/// The state before each row: the framework's fixpoint from every
/// function entry (nothing defined), then one recording replay. A walk
/// that does not settle within the framework's budget claims nothing
/// (every value unknown).
fn states(
    t: &CodeTable,
    cfg: &Cfg,
    sync: &Sync<'_>,
    leaving: &dyn Fn(usize, usize) -> Option<[u64; 4]>,
) -> Vec<State> {
    let mut d = Domain {
        t,
        cfg,
        sync,
        leaving,
        before: None,
    };
    let mut entries: Vec<(usize, State)> = cfg
        .functions
        .iter()
        .map(|f| (f.entry_block, State::entry()))
        .collect();
    if entries.is_empty() && !cfg.blocks.is_empty() {
        entries.push((0, State::entry()));
    }
    let mut out = crate::dataflow::forward(cfg, &mut d, entries);
    if !out.settled {
        return vec![State::entry(); t.rows.len()];
    }
    d.before = Some(vec![State::entry(); t.rows.len()]);
    crate::dataflow::replay(cfg, &mut d, &mut out);
    d.before.unwrap_or_default()
}

/// A loop as the analysis needs it: its blocks (in order), the halves it
/// defines, its latches' last rows and its parent in the nest.
struct LoopInfo {
    blocks: Vec<usize>,
    defs: [u64; 4],
    latch_rows: Vec<usize>,
    parent: Option<usize>,
}

/// The loops, and each block's innermost loop: a block is in loop `l`
/// when `l` is on its innermost loop's parent chain. (Lists and chains,
/// not a block bitmap per loop: memory and time grow with blocks × depth,
/// not blocks × loops.)
struct Loops {
    infos: Vec<LoopInfo>,
    block_loop: Vec<Option<usize>>,
}

impl Loops {
    /// The loops holding block `b`, innermost first.
    fn chain(&self, b: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(self.block_loop[b], |&l| self.infos[l].parent)
    }

    fn contains(&self, l: usize, b: usize) -> bool {
        self.chain(b).any(|x| x == l)
    }
}

fn loop_infos(t: &CodeTable, cfg: &Cfg, forest: &crate::loops::LoopForest) -> Loops {
    let nest = crate::loops::LoopNest::new(cfg, forest);
    let mut infos: Vec<LoopInfo> = nest
        .loops
        .iter()
        .map(|nl| LoopInfo {
            blocks: Vec::new(),
            defs: [0; 4],
            latch_rows: forest.loops[nl.forest]
                .latches
                .iter()
                .map(|&b| cfg.blocks[b].insns.end - 1)
                .collect(),
            parent: nl.parent,
        })
        .collect();
    let mut block_loop = vec![None; cfg.blocks.len()];
    for (i, o) in nest.owner.iter().enumerate() {
        let b = cfg.block_of[i] as usize;
        block_loop[b] = o.map(|x| x as usize);
        let defs = defs_in(t, i..i + 1);
        let mut cur = o.map(|x| x as usize);
        while let Some(l) = cur {
            // (a block's rows are consecutive: pushed once per loop)
            if infos[l].blocks.last() != Some(&b) {
                infos[l].blocks.push(b);
            }
            or_into(&mut infos[l].defs, &defs);
            cur = nest.loops[l].parent;
        }
    }
    Loops { infos, block_loop }
}

/// Runs the analysis over `t` (its CFG `cfg`, loop forest `forest`).
pub fn analyze(t: &CodeTable, cfg: &Cfg, forest: &crate::loops::LoopForest) -> Uniformity {
    let regions = regions(t, cfg);
    let mut closing = vec![Vec::new(); t.rows.len() + 1];
    for (k, r) in regions.iter().enumerate() {
        closing[r.end.min(t.rows.len())].push(k);
    }
    let loops = loop_infos(t, cfg, forest);
    let mut region_div = vec![false; regions.len()];
    let mut loop_div = vec![false; loops.infos.len()];
    // monotone: regions and loops only turn divergent; at most one more
    // round per region and loop (each round is one fixpoint over the code;
    // in practice two or three rounds settle)
    for _ in 0..=regions.len() + loops.infos.len() {
        let sync = Sync {
            closing: &closing,
            regions: &regions,
            divergent: &region_div,
        };
        // the loops an edge leaves: those on `from`'s chain up to the
        // first that holds `to` (its parents hold `to` too)
        let leaving = |from: usize, to: usize| {
            let mut m: Option<[u64; 4]> = None;
            for l in loops.chain(from).take_while(|&l| !loops.contains(l, to)) {
                if loop_div[l] {
                    or_into(m.get_or_insert([0; 4]), &loops.infos[l].defs);
                }
            }
            m
        };
        let before = states(t, cfg, &sync, &leaving);
        let new_regions: Vec<bool> = regions
            .iter()
            .map(|r| test_value(t, r.open, &before[r.open]) == Val::Divergent)
            .collect();
        let new_loops: Vec<bool> = loops
            .infos
            .iter()
            .map(|l| exit_value(t, cfg, l, &before) == Val::Divergent)
            .collect();
        if new_regions == region_div && new_loops == loop_div {
            let mut u = verdicts(t, cfg, &regions, &loops.infos, &before);
            u.before = before;
            return u;
        }
        region_div = new_regions;
        loop_div = new_loops;
    }
    Uniformity::default()
}

/// The value an exec test compares: the predicate bank it reads, else its
/// GPR sources (uniform when it reads none: immediates, uniform registers
/// or a constant condition). A test whose operands are not decoded is
/// unknown.
fn test_value(t: &CodeTable, i: usize, st: &State) -> Val {
    // (a family may decode an exec test's condition and not the rest of its
    // payload: the exec column says the condition is known)
    if !t.rows[i].complete && t.rows[i].exec.is_none() {
        return Val::Unknown;
    }
    match t.rows[i].pred {
        // the predicate bank a compare set
        Some(Pred::Read(b)) => st.pred[b as usize & 7],
        // the compared registers: not the exec-nesting counter the test
        // itself updates (a register it both reads and writes: G13's r0l)
        _ => {
            let defs: Vec<_> = t.defs(i).map(|d| d.range()).collect();
            t.uses(i)
                .filter(|u| !u.is_uniform() && !defs.contains(&u.range()))
                .flat_map(|u| u.range())
                .map(|h| if h < 256 { st.get(h) } else { Val::Unknown })
                .max()
                .unwrap_or(Val::Uniform)
        }
    }
}

/// The worst exit test of a loop: the `while` tests inside it (an
/// exec-mask instruction whose effect is not decoded makes it unknown).
/// A `break` (an `if` whose arm leaves the loop) is not yet counted: the
/// G13 analysis (`crate::divergence`) is the reference there.
fn exit_value(t: &CodeTable, cfg: &Cfg, l: &LoopInfo, before: &[State]) -> Val {
    worst_exit(t, cfg, l, before).0
}

/// [`exit_value`] and the first row giving it (`None` when every test is
/// uniform, or there is none).
fn worst_exit(t: &CodeTable, cfg: &Cfg, l: &LoopInfo, before: &[State]) -> (Val, Option<usize>) {
    let mut worst = (Val::Uniform, None);
    for &b in &l.blocks {
        for i in cfg.blocks[b].insns.clone() {
            let row = &t.rows[i];
            let v = match row.exec {
                Some((ExecOp::While, _)) => test_value(t, i, &before[i]),
                // an exec-mask instruction whose effect is not decoded
                None if row.class == Category::ExecMask => Val::Unknown,
                _ => Val::Uniform,
            };
            if v > worst.0 || (v == worst.0 && v != Val::Uniform && worst.1.is_none_or(|w| i < w)) {
                worst = (v, Some(i));
            }
        }
    }
    worst
}

/// A register range as the listings spell it (`r3`, `r3l`, `r4_r5`, `u6`).
pub(crate) fn reg_text(r: &agx_isa::table::RegRange) -> String {
    let p = if r.is_uniform() { 'u' } else { 'r' };
    let (s, n) = (r.start as u32, r.len as u32);
    if n == 1 {
        format!("{p}{}{}", s / 2, if s % 2 == 0 { 'l' } else { 'h' })
    } else if n == 2 && s % 2 == 0 {
        format!("{p}{}", s / 2)
    } else {
        format!("{p}{}..{p}{}", s / 2, (s + n - 1) / 2)
    }
}

/// What an exec test's condition reads, for its reason: the compared
/// registers, or the predicate bank and the compare that set it.
fn condition_text(t: &CodeTable, i: usize, st: &State) -> String {
    let regs = |k: usize| -> Vec<String> {
        let defs: Vec<_> = t.defs(k).map(|d| d.range()).collect();
        let mut v: Vec<String> = t
            .uses(k)
            .filter(|u| !defs.contains(&u.range()))
            .map(reg_text)
            .collect();
        v.dedup();
        v
    };
    match t.rows[i].pred {
        Some(Pred::Read(b)) => match st.pred_at[b as usize & 7] {
            u32::MAX => format!("predicate {b} (set on several paths, or never)"),
            k => {
                let r = regs(k as usize);
                format!(
                    "predicate {b} from the compare at 0x{:x}{}",
                    t.rows[k as usize].addr,
                    if r.is_empty() {
                        String::new()
                    } else {
                        format!(" of {}", r.join(", "))
                    }
                )
            }
        },
        _ => {
            let r = regs(i);
            if r.is_empty() {
                "a constant condition".into()
            } else {
                r.join(", ")
            }
        }
    }
}

/// The innermost exec region open at each row: the latest-opened region
/// with `open < i <= end` (its closing row still counts: the `else` or
/// `pop` there belongs to it). One sweep over the regions' rows, which
/// [`regions`] already walks once each, instead of a scan of every region
/// per row.
fn innermost_by_row(regions: &[Region], n: usize) -> Vec<Option<u32>> {
    let mut inner = vec![None; n + 1];
    // (regions come in the order of their opening rows: of those open at
    // a row, the last written is the latest opened)
    for (k, r) in regions.iter().enumerate() {
        for slot in &mut inner[(r.open + 1).min(n)..=r.end.max(r.open + 1).min(n)] {
            *slot = Some(k as u32);
        }
    }
    inner
}

/// Sets the arms of the branch just pushed.
fn set_arms(u: &mut Uniformity, arms: Option<(usize, usize)>) {
    if let Some(b) = u.branches.last_mut() {
        b.arms = arms;
    }
}

/// The if/loop counts of `branches` (an unknown verdict counts in
/// neither).
pub fn counts_of(branches: &[TableBranch]) -> Counts {
    let mut c = Counts::default();
    for b in branches {
        match (b.kind, b.uniform) {
            (BranchKind::If, Some(true)) => c.if_uniform += 1,
            (BranchKind::If, Some(false)) => c.if_divergent += 1,
            (BranchKind::Loop, Some(true)) => c.loop_uniform += 1,
            (BranchKind::Loop, Some(false)) => c.loop_divergent += 1,
            _ => {}
        }
    }
    c
}

fn verdict(v: Val) -> Option<bool> {
    match v {
        Val::Uniform => Some(true),
        Val::Divergent => Some(false),
        Val::Unknown => None,
    }
}

fn verdicts(
    t: &CodeTable,
    cfg: &Cfg,
    regions: &[Region],
    loops: &[LoopInfo],
    before: &[State],
) -> Uniformity {
    let mut u = Uniformity::default();
    let push = |u: &mut Uniformity, i: usize, kind: BranchKind, v: Val, reason: String| {
        u.branches.push(TableBranch {
            at: t.rows[i].addr,
            index: i,
            kind,
            uniform: verdict(v),
            reason,
            arms_cycles: None,
            arms: None,
        });
    };
    let why = |v: Val, what: &str| -> String {
        match v {
            Val::Uniform => format!("{what}: uniform"),
            Val::Divergent => format!("{what}: divergent (lanes disagree)"),
            Val::Unknown => format!("{what}: unknown"),
        }
    };
    let condition = |i: usize| -> String { condition_text(t, i, &before[i]) };
    let inner = innermost_by_row(regions, t.rows.len());
    let innermost = |i: usize| {
        inner
            .get(i)
            .copied()
            .flatten()
            .map(|k| &regions[k as usize])
    };
    // the innermost open region's verdict at each row (for else and skips)
    let level = |i: usize| -> Val {
        innermost(i).map_or(Val::Uniform, |r| test_value(t, r.open, &before[r.open]))
    };
    // the region an `if` opens (regions are in the order of their rows)
    let opened = |i: usize| {
        let k = regions.partition_point(|r| r.open < i);
        regions.get(k).filter(|r| r.open == i)
    };
    for (i, row) in t.rows.iter().enumerate() {
        match (row.exec, row.flow) {
            (Some((ExecOp::If, _)), _) => {
                let v = test_value(t, i, &before[i]);
                push(&mut u, i, BranchKind::If, v, why(v, &condition(i)));
                set_arms(&mut u, opened(i).map(|r| (i + 1, r.end)));
            }
            (Some((ExecOp::While, _)), _) => {
                let v = test_value(t, i, &before[i]);
                push(&mut u, i, BranchKind::While, v, why(v, &condition(i)));
            }
            (Some((ExecOp::Else, _)), _) => {
                let v = level(i);
                push(&mut u, i, BranchKind::Else, v, why(v, "the matching if"));
                set_arms(&mut u, innermost(i).map(|r| (i + 1, r.end)));
            }
            (_, Flow::BranchExec { target, .. }) if target > row.addr as i64 => {
                let v = level(i);
                push(
                    &mut u,
                    i,
                    BranchKind::Skip,
                    v,
                    why(v, "the innermost exec level"),
                );
            }
            (None, _) if row.class == Category::ExecMask => {
                push(
                    &mut u,
                    i,
                    BranchKind::Jump,
                    Val::Unknown,
                    "an exec-mask instruction whose effect is not decoded".into(),
                );
            }
            _ => {}
        }
    }
    for l in loops {
        let (v, test) = worst_exit(t, cfg, l, before);
        let at = l.latch_rows.iter().copied().max().unwrap_or(0);
        let what = match test {
            Some(k) if t.rows[k].exec.is_some() => {
                format!("its exit test at 0x{:x} ({})", t.rows[k].addr, condition(k))
            }
            Some(k) => format!("the exec-mask instruction at 0x{:x}", t.rows[k].addr),
            None => "its exit tests".into(),
        };
        if at < t.rows.len() {
            push(&mut u, at, BranchKind::Loop, v, why(v, &what));
        }
    }
    u.branches.sort_by_key(|b| (b.at, b.kind as u8));
    u.counts = counts_of(&u.branches);
    u.unknown = u.branches.iter().filter(|b| b.uniform.is_none()).count();
    u.counts.uniform_loads = t
        .accesses()
        .filter(|(i, m)| {
            m.dir == agx_isa::MemDir::Load
                && t.uses(*i).all(|r| {
                    r.is_uniform() || {
                        r.range()
                            .all(|h| h < 256 && before[*i].get(h) == Val::Uniform)
                    }
                })
        })
        .count() as u32;
    u
}
