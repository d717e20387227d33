//! Static divergence (uniformity) analysis of AGX machine code (issue 22).
//!
//! A forward dataflow over the CFG that tells, for every register at every
//! point, whether all the threads of a SIMD-group that run there hold the
//! same value, and from that which branches the SIMD-group can disagree on.
//!
//! # Values
//!
//! Uniform sources: uniform registers `u*`, immediates, the special
//! registers [`crate::special_regs`] classes uniform, SIMD-group ballots and
//! reductions (`*_ballot`, `simd_{and,or,xor,iadd,fadd,fmul,min,max}`), a
//! `simd_shuffle` whose lane index is uniform (a broadcast), and loads
//! (`device_load`, `threadgroup_load`) whose address registers are uniform.
//! A `stack_load` returns what the same thread stored at that immediate
//! offset (spill slots are tracked like registers). Everything else that
//! produces a value from nothing known (atomics, texture, varyings, prefix
//! and quad ops, lane shuffles, unknown forms, registers undefined at entry)
//! is divergent. An ALU result is uniform when every register it reads is.
//!
//! # Exec masks (sync dependence)
//!
//! The structured exec-mask ops keep a per-thread nesting counter in `r0l`
//! (ISA reference, "Execution Mask Stack Instructions": `if` pushes, lanes
//! failing the condition get `r0l = 1`; `else` flips the innermost level;
//! `while n` sends failing lanes `n` levels out; `pop_exec n` brings lanes
//! with `r0l <= n` back; Mesa writes `r0l = k` directly for `break` and
//! `continue`, `agx_compile.c` `agx_emit_jump`). The analysis follows the
//! lane sets level by level: for each level, whether it was entered by a
//! divergent test (some lanes of the level below are outside it), and the
//! register state of the lanes that left it (failed an `if`, failed a
//! `while`, broke out). A register value is uniform from a level up: a
//! write under a mask whose innermost divergent level is `k` is uniform
//! among the lanes of level `k`, and becomes divergent when lanes that did
//! not write it come back (the pop of level `k`, an `else`, a `while` that
//! reactivates continued lanes). So a value set under a divergent branch,
//! or in a loop with a divergent exit, is divergent after the join or exit,
//! while a loop counter of a loop whose exits are all uniform stays uniform.
//!
//! Anything the model does not recognise (`r0l` written with a register,
//! levels that do not line up at a join, more than 60 levels) makes the
//! whole function divergent: the analysis never calls a divergent branch
//! uniform on code it does not understand.
//!
//! # Calls
//!
//! A callee is summarised (entry registers divergent, or uniform where
//! [`analyze_entry`] is told every caller passes them uniform): the halves
//! it writes, and which of them are divergent at its `ret`. At a call site
//! the halves it writes get that value (uniform ones uniform among the
//! caller's active lanes), and the halves uniform among the calling lanes
//! are recorded ([`Divergence::call_uniform`]) for the callee's next
//! summary (`program.rs`). A call without a summary (through a register, to
//! code not given, recursive) makes every register divergent.

use crate::cfg::Cfg;
use crate::dataflow::{self, has_back_pred, is_back};
use crate::facts::{Facts, RegRange};
use crate::liveness::GprSet;
use crate::loops::LoopForest;
use crate::special_regs::{sr_class, sr_name, SrClass};
use agx_isa::forms::idx;
use agx_isa::{Category, ExecOp, Flow, Instruction, OperandKind, Reg, RegFile, Width};
use serde::Serialize;
use std::collections::HashMap;

/// Divergent (any threshold above the deepest level).
const DIV: u8 = 255;
/// Deepest nesting level followed; deeper code is declared divergent.
const MAX_LEVELS: usize = 60;

/// What a branch is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BranchKind {
    /// A structured `if_icmp`/`if_fcmp` (not a loop's exit test).
    If,
    /// `else_icmp`/`else_fcmp`.
    Else,
    /// A `while_*` exit test.
    While,
    /// An `if` whose arm only breaks out of (or continues) its loop.
    Break,
    /// A loop (at its back edge, the backward `jmp_exec_any`): uniform when
    /// every exit test is.
    Loop,
    /// A forward `jmp_exec_none`/`jmp_exec_any` (skips an arm when no lane
    /// runs it).
    Skip,
    /// A jump whose condition is unknown (`jmp_incomplete`,
    /// `jmp_if_skipping_doorbell`).
    Jump,
}

impl BranchKind {
    pub fn name(self) -> &'static str {
        match self {
            BranchKind::If => "if",
            BranchKind::Else => "else",
            BranchKind::While => "while",
            BranchKind::Break => "break",
            BranchKind::Loop => "loop",
            BranchKind::Skip => "skip",
            BranchKind::Jump => "jump",
        }
    }
}

/// One classified branch.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Branch {
    /// Address of the branch instruction.
    pub at: u32,
    /// Index of the branch instruction.
    #[serde(skip)]
    pub index: u32,
    pub kind: BranchKind,
    /// Whether every thread of the SIMD-group goes the same way.
    pub uniform: bool,
    /// Why: the chain from the condition back to its source (worded by its
    /// `Display`).
    pub reason: Reason,
    /// Cycles per SIMD-group of the instructions it guards (both arms of an
    /// `if` up to its closing `pop_exec`, from an `else` to it, a loop's
    /// body), each weighted by its executions; `None` for branches that
    /// guard no arm (`while`, `skip`, `jump`) or before timing.
    pub arms_cycles: Option<f64>,
    /// Instructions it guards (indices, end exclusive).
    #[serde(skip)]
    pub arms: Option<(u32, u32)>,
    /// For a loop: its index in the function's loop forest.
    #[serde(skip)]
    pub loop_index: Option<u32>,
}

/// Why a branch is classified as it is, kept in structure and worded on
/// demand (`Display`, and as a string in serde): a 1M-instruction kernel
/// has hundreds of thousands of branches, and a `String` each was ~40
/// bytes of heap beyond the record (the reasons are mostly a few fixed
/// sentences, a condition's registers, or one exit test's address).
#[derive(Clone)]
pub struct Reason(Repr);

#[derive(Clone)]
enum Repr {
    Fixed(Fixed),
    /// `REGS: uniform`: up to two condition registers ([`pack_reg`]; 0:
    /// none).
    Uniform([u32; 2]),
    /// `every exit test is uniform (0xA)`: one exit test.
    OneTest(u32),
    /// Any other wording (trace chains, shared by equal reasons).
    Text(std::sync::Arc<String>),
}

/// FNV-1a, for interning reasons (short strings, no adversary).
#[derive(Default)]
struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
        self.0 = h;
    }
}

/// The fixed sentences of [`Reason`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fixed {
    ImmediatesOnly,
    MatchingIfUniform,
    MatchingIfDivergent,
    ConditionUnknown,
    LevelDivergent,
    LevelUniform,
    NoExitTest,
}

impl Fixed {
    fn text(self) -> &'static str {
        match self {
            Fixed::ImmediatesOnly => "condition on immediates only",
            Fixed::MatchingIfUniform => "the matching if is uniform",
            Fixed::MatchingIfDivergent => "the matching if is divergent: both arms run",
            Fixed::ConditionUnknown => "condition unknown (not modelled)",
            Fixed::LevelDivergent => "the innermost exec level is divergent: lanes disagree",
            Fixed::LevelUniform => "the innermost exec level is uniform",
            Fixed::NoExitTest => "no exit test found: uniform",
        }
    }
}

/// A register as [`push_reg_name`] spells it, in 32 bits (never 0): half
/// (bits 0-15), count (16-23), width (24-25), uniform file (26), bit 31 set.
fn pack_reg(r: &Reg) -> u32 {
    let w = match r.width {
        Width::W16 => 0u32,
        Width::W32 => 1,
        Width::W64 => 2,
    };
    r.half as u32
        | (r.count as u32) << 16
        | w << 24
        | ((r.file == RegFile::Uniform) as u32) << 26
        | 1 << 31
}

fn unpack_reg(x: u32) -> Reg {
    let mut r = Reg::gpr(
        match x >> 24 & 3 {
            0 => Width::W16,
            1 => Width::W32,
            _ => Width::W64,
        },
        x as u16,
    );
    r.count = (x >> 16) as u8;
    if x >> 26 & 1 != 0 {
        r.file = RegFile::Uniform;
    }
    r
}

impl Reason {
    fn fixed(f: Fixed) -> Reason {
        Reason(Repr::Fixed(f))
    }
    fn text(s: String) -> Reason {
        Reason(Repr::Text(std::sync::Arc::new(s)))
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Repr::Fixed(x) => f.write_str(x.text()),
            Repr::Uniform(regs) => {
                let mut out = String::new();
                for (k, &r) in regs.iter().filter(|&&r| r != 0).enumerate() {
                    if k > 0 {
                        out.push_str(", ");
                    }
                    push_reg_name(&mut out, &unpack_reg(r));
                }
                out.push_str(": uniform");
                f.write_str(&out)
            }
            Repr::OneTest(a) => write!(f, "every exit test is uniform (0x{a:x})"),
            Repr::Text(s) => f.write_str(s),
        }
    }
}

impl std::fmt::Debug for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.to_string(), f)
    }
}

/// Equal when worded the same.
impl PartialEq for Reason {
    fn eq(&self, o: &Reason) -> bool {
        match (&self.0, &o.0) {
            (Repr::Fixed(a), Repr::Fixed(b)) => a == b,
            (Repr::Uniform(a), Repr::Uniform(b)) if a == b => true,
            (Repr::OneTest(a), Repr::OneTest(b)) => a == b,
            (Repr::Text(a), Repr::Text(b)) if std::sync::Arc::ptr_eq(a, b) => true,
            _ => self.to_string() == o.to_string(),
        }
    }
}

impl PartialEq<str> for Reason {
    fn eq(&self, o: &str) -> bool {
        self.to_string().as_str() == o
    }
}

impl PartialEq<&str> for Reason {
    fn eq(&self, o: &&str) -> bool {
        self.to_string().as_str() == *o
    }
}

impl Serialize for Reason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Repr::Fixed(x) => s.serialize_str(x.text()),
            Repr::Text(t) => s.serialize_str(t),
            _ => s.serialize_str(&self.to_string()),
        }
    }
}

/// Per-function counts (a structured `if` once, its `else` not again; a
/// loop once).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub if_uniform: u32,
    pub if_divergent: u32,
    pub loop_uniform: u32,
    pub loop_divergent: u32,
    /// Device/threadgroup loads whose address is uniform
    /// ([`Divergence::uniform_loads`]): one value for the whole SIMD-group.
    pub uniform_loads: u32,
}

/// The divergence analysis of one function.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Divergence {
    /// Branches by address.
    pub branches: Vec<Branch>,
    pub counts: Counts,
    /// Indices of loads whose address is uniform (one value for the whole
    /// SIMD-group).
    pub uniform_loads: Vec<usize>,
    /// Set when the code was not understood (everything divergent).
    pub unknown: Option<String>,
    /// The function's effect for its callers.
    pub summary: CalleeSummary,
    /// Per `call` (by address, in address order): the GPR halves uniform
    /// among the lanes that make the call, i.e. uniform at the callee's
    /// entry (empty when the analysis gave up).
    pub call_uniform: Vec<(u32, GprSet)>,
    /// Divergence-aware cost range of the function alone (see
    /// [`DivergenceRange`]); set with the timing.
    pub range: DivergenceRange,
}

/// The cost of a SIMD-group when branches go as the analysis says: a
/// divergent `if` charges both arms (the SIMD-group runs them), a uniform
/// one only its cheaper (`shortest`) or dearer (`longest`) arm. Beside
/// `total_cycles` (every arm charged) and the uniform-path bounds (every
/// branch uniform): `paths.shortest <= shortest`, `paths.longest <= longest
/// <= total_cycles`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct DivergenceRange {
    pub shortest: f64,
    pub longest: f64,
}

/// What a function does to its caller's registers, for the divergence of
/// the caller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CalleeSummary {
    /// GPR halves it writes (its callees' included).
    pub written: GprSet,
    /// Of those, the ones divergent at its `ret` (entry registers taken as
    /// divergent).
    pub divergent: GprSet,
    /// It may leave the caller's exec mask changed.
    pub mask_changed: bool,
}

// ---------------------------------------------------------------------------
// Lattice
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Slot {
    off: i64,
    size: u32,
    key: u32,
    val: u8,
}

/// Row of [`State::regs`] holding the active lanes.
const CUR: usize = 0;

/// Row of [`State::regs`] holding `exits[k]`: the lanes of level `k - 1`
/// outside level `k` (`k = 0`: the lanes that left the function's own level).
#[inline]
fn ex(k: usize) -> usize {
    k + 1
}

/// The analysis state at a point: the exec-mask levels and, for each set
/// of lanes the levels keep apart, the value of every register.
///
/// Compact on purpose (a state is copied along every CFG edge and one is
/// stored per join block, hundreds of thousands on large code): the lane
/// sets are rows of one flat, exactly sized byte buffer, so a stored state
/// is one allocation of `(depth + 2) × halves` bytes and a copy one
/// `memcpy`. Row [`CUR`] holds the active lanes, row [`ex`]`(k)` the lanes
/// that left level `k`. A row's byte per GPR half is the lowest level among
/// whose lanes the value is uniform (`DIV`: not even among the lanes holding
/// it); halves past the tracked ones are never written: divergent. A row
/// whose `live` bit is clear holds no lane (its bytes mean nothing).
#[derive(Debug)]
struct State {
    /// GPR halves tracked per row (the function's highest touched, its
    /// callees' writes included).
    n: usize,
    depth: u8,
    /// Bit k: level k was entered (or left) by a divergent test.
    flags: u64,
    /// Bit r: row r holds lanes.
    live: u64,
    /// `depth + 2` rows of `n` bytes.
    regs: Vec<u8>,
    /// Spill slots known uniform enough, as (row, slot); empty (no
    /// allocation) in code without immediate-offset stack stores.
    slots: Vec<(u8, Slot)>,
}

impl Clone for State {
    fn clone(&self) -> State {
        State {
            n: self.n,
            depth: self.depth,
            flags: self.flags,
            live: self.live,
            regs: self.regs.clone(),
            slots: self.slots.clone(),
        }
    }
    /// Reuses `self`'s buffers (the fixpoint recycles states).
    fn clone_from(&mut self, o: &State) {
        self.n = o.n;
        self.depth = o.depth;
        self.flags = o.flags;
        self.live = o.live;
        self.regs.clone_from(&o.regs);
        self.slots.clone_from(&o.slots);
    }
}

impl State {
    fn entry(n: usize) -> State {
        State {
            n,
            depth: 0,
            flags: 0,
            live: 1 << CUR,
            regs: vec![DIV; 2 * n],
            slots: Vec::new(),
        }
    }
    #[inline]
    fn live(&self, r: usize) -> bool {
        self.live >> r & 1 != 0
    }
    /// Whether any lane is active.
    #[inline]
    fn running(&self) -> bool {
        self.live(CUR)
    }
    #[inline]
    fn row(&self, r: usize) -> &[u8] {
        &self.regs[r * self.n..(r + 1) * self.n]
    }
    #[inline]
    fn row_mut(&mut self, r: usize) -> &mut [u8] {
        let n = self.n;
        &mut self.regs[r * n..(r + 1) * n]
    }
    /// The value of half `h` among the active lanes.
    #[inline]
    fn get(&self, h: u32) -> u8 {
        if (h as usize) < self.n {
            self.regs[h as usize]
        } else {
            DIV
        }
    }
    #[inline]
    fn set(&mut self, h: u32, v: u8) {
        if (h as usize) < self.n {
            self.regs[h as usize] = v;
        }
    }
    /// Row `r` holds no lane any more.
    fn kill(&mut self, r: usize) {
        self.live &= !(1u64 << r);
        if !self.slots.is_empty() {
            self.slots.retain(|x| x.0 as usize != r);
        }
    }
    /// `row dst ⊔= row src` (lanes of both); whether `dst` changed.
    fn join_rows(&mut self, dst: usize, src: usize) -> bool {
        if !self.live(src) || dst == src {
            return false;
        }
        let n = self.n;
        if !self.live(dst) {
            self.regs.copy_within(src * n..(src + 1) * n, dst * n);
            self.live |= 1u64 << dst;
            let copied: Vec<(u8, Slot)> = self
                .slots
                .iter()
                .filter(|x| x.0 as usize == src)
                .map(|x| (dst as u8, x.1))
                .collect();
            self.slots.extend(copied);
            return true;
        }
        let (s, d) = if src < dst {
            let (x, y) = self.regs.split_at_mut(dst * n);
            (&x[src * n..(src + 1) * n], &mut y[..n])
        } else {
            let (x, y) = self.regs.split_at_mut(src * n);
            (&y[..n], &mut x[dst * n..(dst + 1) * n])
        };
        let mut changed = join_bytes(d, s);
        if !self.slots.is_empty() {
            let other = slots_of(&self.slots, src);
            changed |= join_slots(&mut self.slots, dst, &other);
        }
        changed
    }
    /// Rows `a` and `b` trade places.
    fn swap_rows(&mut self, a: usize, b: usize) {
        if a == b {
            return;
        }
        let n = self.n;
        let (lo, hi) = (a.min(b), a.max(b));
        let (x, y) = self.regs.split_at_mut(hi * n);
        x[lo * n..(lo + 1) * n].swap_with_slice(&mut y[..n]);
        let (la, lb) = (self.live(a), self.live(b));
        self.live &= !(1u64 << a | 1u64 << b);
        self.live |= (lb as u64) << a | (la as u64) << b;
        for s in &mut self.slots {
            if s.0 as usize == a {
                s.0 = b as u8;
            } else if s.0 as usize == b {
                s.0 = a as u8;
            }
        }
    }
    /// Values of row `r` uniform only above level `x` become divergent
    /// (lanes from lower levels join them).
    fn widen(&mut self, r: usize, x: u8) {
        if !self.live(r) {
            return;
        }
        for a in self.row_mut(r) {
            // (a select, not a branch: vectorised)
            *a = if *a > x { DIV } else { *a };
        }
        for s in &mut self.slots {
            if s.0 as usize == r && s.1.val > x {
                s.1.val = DIV;
            }
        }
    }
    fn flag(&self, k: usize) -> bool {
        k < 64 && self.flags & (1 << k) != 0
    }
    fn set_flag(&mut self, k: usize, v: bool) {
        if k < 64 {
            if v {
                self.flags |= 1 << k;
            } else {
                self.flags &= !(1 << k);
            }
        }
    }
    /// Whether a level in `from..=to` is flagged.
    fn any_flag(&self, from: usize, to: usize) -> bool {
        if from > to || from >= 64 {
            return false;
        }
        let to = to.min(63);
        let mask = (u64::MAX >> (63 - to)) & (u64::MAX << from);
        self.flags & mask != 0
    }
    /// Innermost divergent level at or below the current depth.
    fn eff(&self) -> u8 {
        let d = (self.depth as usize).min(63);
        let m = self.flags & (u64::MAX >> (63 - d));
        if m == 0 {
            0
        } else {
            (63 - m.leading_zeros()) as u8
        }
    }
    fn grow(&mut self, d: usize) {
        debug_assert!(d >= self.depth as usize);
        let rows = ex(d) + 1;
        if self.regs.len() < rows * self.n {
            self.regs.resize(rows * self.n, DIV);
        }
        for k in self.depth as usize + 1..=d {
            self.kill(ex(k));
            self.set_flag(k, false);
        }
        self.depth = d as u8;
    }
    fn shrink(&mut self, d: usize) {
        for k in d + 1..=self.depth as usize {
            self.kill(ex(k));
            self.set_flag(k, false);
        }
        self.regs.truncate((ex(d) + 1) * self.n);
        self.depth = d as u8;
    }
    /// `self ⊔= o`; whether `self` changed.
    fn join(&mut self, o: &State) -> bool {
        let mut changed = false;
        let d = self.depth.max(o.depth) as usize;
        if d != self.depth as usize {
            self.grow(d);
            changed = true;
        }
        changed |= self.join_row_from(CUR, o);
        let f = self.flags | o.flags;
        changed |= f != self.flags;
        self.flags = f;
        for k in 0..=o.depth as usize {
            changed |= self.join_row_from(ex(k), o);
        }
        changed
    }
    /// `row r ⊔= o's row r`; whether it changed.
    fn join_row_from(&mut self, r: usize, o: &State) -> bool {
        if !o.live(r) {
            return false;
        }
        let n = self.n;
        if !self.live(r) {
            self.row_mut(r).copy_from_slice(o.row(r));
            self.live |= 1u64 << r;
            self.slots
                .extend(o.slots.iter().filter(|x| x.0 as usize == r).copied());
            return true;
        }
        let mut changed = join_bytes(&mut self.regs[r * n..(r + 1) * n], o.row(r));
        if self.slots.iter().any(|x| x.0 as usize == r) {
            changed |= join_slots(&mut self.slots, r, &slots_of(&o.slots, r));
        }
        changed
    }
}

/// `dst[k] = max(dst[k], src[k])`; whether any grew (branch-free, so it
/// runs as vector max: the join of two rows is the fixpoint's inner loop).
#[inline]
fn join_bytes(dst: &mut [u8], src: &[u8]) -> bool {
    let mut grew = [0u8; 16];
    let mut d = dst.chunks_exact_mut(16);
    let mut s = src.chunks_exact(16);
    for (dc, sc) in (&mut d).zip(&mut s) {
        for k in 0..16 {
            let m = dc[k].max(sc[k]);
            grew[k] |= m ^ dc[k];
            dc[k] = m;
        }
    }
    let mut g = grew.iter().fold(0, |a, &b| a | b);
    for (a, &b) in d.into_remainder().iter_mut().zip(s.remainder()) {
        let m = (*a).max(b);
        g |= m ^ *a;
        *a = m;
    }
    g != 0
}

/// The slots of row `r`.
fn slots_of(slots: &[(u8, Slot)], r: usize) -> Vec<Slot> {
    slots
        .iter()
        .filter(|x| x.0 as usize == r)
        .map(|x| x.1)
        .collect()
}

/// Joins the slots of row `r` with `other` (the other side's slots of the
/// same lanes): a slot missing on one side holds garbage there (dropped).
/// Whether any changed.
fn join_slots(slots: &mut Vec<(u8, Slot)>, r: usize, other: &[Slot]) -> bool {
    let mut changed = false;
    slots.retain_mut(|(row, s)| {
        if *row as usize != r {
            return true;
        }
        match other
            .iter()
            .find(|t| t.off == s.off && t.size == s.size && t.key == s.key)
        {
            Some(t) => {
                if t.val > s.val {
                    s.val = t.val;
                    changed = true;
                }
                true
            }
            None => {
                changed = true;
                false
            }
        }
    });
    changed
}

// ---------------------------------------------------------------------------
// Per-instruction facts the transfer needs
// ---------------------------------------------------------------------------

/// Why an instruction's result is divergent (for reasons; worded only
/// when a reason is printed).
#[derive(Clone, Copy, Debug)]
enum Why {
    /// `get_sr` of a divergent special register.
    Sr(u16),
    /// The instruction itself is a per-thread source (its mnemonic says).
    Source,
    /// A shuffle whose lane index is divergent.
    LaneIndex,
    /// A per-lane cross-lane op.
    CrossLane,
    /// A spill slot not known uniform.
    Spill,
    /// A register it reads (a half index).
    Operand(u16),
    /// A call: the callee's result, or code not analysed.
    Call(bool),
}

fn form_of(i: &Instruction) -> u8 {
    i.form
}

fn is_mov_imm(i: &Instruction) -> bool {
    matches!(form_of(i), idx::MOV_IMM | idx::MOV_IMM_1)
}

/// The value a `mov_imm` writes.
fn mov_imm_value(i: &Instruction) -> Option<i64> {
    i.operands.iter().find_map(|o| o.kind.imm_value())
}

/// Whether an exec op's condition is always true (applegpu's aliases
/// `push_exec`/`else_exec`/`update_exec` compare `0.0 == 0.0`; Mesa's
/// continue reactivation `while_icmp 0 == 0`).
fn cond_always(i: &Instruction) -> bool {
    if matches!(i.mnemonic(), "push_exec" | "else_exec" | "update_exec") {
        return true;
    }
    let mut vals = Vec::new();
    let mut cc = None;
    for o in i.operands.iter().skip(1) {
        match o.kind {
            OperandKind::Reg(_) => return false,
            OperandKind::Keyword(_) => cc = o.kind.keyword_text(),
            OperandKind::Imm(v) => vals.push(v.get() as u64),
            OperandKind::FloatImm(b) => vals.push(b as u64 | 1 << 40),
            _ => {}
        }
    }
    // (cond a, b, n): the last immediate is n
    vals.len() >= 3
        && vals[0] == vals[1]
        && matches!(
            cc,
            Some("eq" | "ueq" | "seq" | "gte" | "ugte" | "sgte" | "lte" | "ulte" | "slte")
        )
}

/// Cross-lane forms whose result is one value for the SIMD-group.
fn simd_uniform_result(form: u8) -> bool {
    matches!(
        form,
        idx::ICMP_BALLOT
            | idx::FCMP_BALLOT
            | idx::SIMD_AND
            | idx::SIMD_OR
            | idx::SIMD_XOR
            | idx::SIMD_IADD
            | idx::SIMD_FADD
            | idx::SIMD_FMUL
            | idx::SIMD_MIN_U
            | idx::SIMD_MAX_U
            | idx::SIMD_MIN_S
            | idx::SIMD_MAX_S
            | idx::SIMD_MIN_F
            | idx::SIMD_MAX_F
    )
}

/// Name of a register operand as applegpu prints it (`r3`, `r3l`, `u2_u3`).
pub fn reg_name(r: &Reg) -> String {
    let mut out = String::new();
    push_reg_name(&mut out, r);
    out
}

/// [`reg_name`] appended to `out` (reasons are worded in one buffer).
fn push_reg_name(out: &mut String, r: &Reg) {
    use std::fmt::Write;
    let p = if r.file == RegFile::Uniform { 'u' } else { 'r' };
    let step = r.width.halves();
    for k in 0..r.count.max(1) as u16 {
        if k > 0 {
            out.push('_');
        }
        let h = r.half + k * step;
        let _ = match r.width {
            Width::W16 => write!(
                out,
                "{p}{}{}",
                h / 2,
                if h.is_multiple_of(2) { 'l' } else { 'h' }
            ),
            Width::W32 => write!(out, "{p}{}", h / 2),
            Width::W64 => write!(out, "{p}{}_{p}{}", h / 2, h / 2 + 1),
        };
    }
}

/// Name of half `h` as instruction `i` spells the register holding it.
fn half_name_in(i: &Instruction, h: u16) -> String {
    i.all_operands()
        .filter_map(|o| o.as_reg())
        .find(|r| r.file == RegFile::Gpr && r.half_range().contains(&(h as u32)))
        .map(|r| {
            let mut one = *r;
            one.count = 1;
            one.half = r.half + ((h - r.half) / r.width.halves()) * r.width.halves();
            reg_name(&one)
        })
        .unwrap_or_else(|| format!("r{}", h / 2))
}

/// Stack slot of a `stack_load`/`stack_store`: (immediate offset, bytes,
/// shape key); `None` when the offset is a register.
fn stack_slot(i: &Instruction) -> Option<(i64, u32, u32)> {
    let regs = i.operands.iter().filter(|o| o.as_reg().is_some()).count();
    if regs > 1 {
        return None;
    }
    let imms: Vec<i64> = i
        .operands
        .iter()
        .filter_map(|o| o.kind.imm_value())
        .collect();
    if imms.len() < 2 {
        return None;
    }
    let off = imms[imms.len() - 2];
    let mut key = 0u32;
    let mut bytes = 4u32;
    let mut lanes = 1u32;
    for o in i.operands.iter() {
        if let Some(t) = o.kind.keyword_text() {
            for b in t.bytes() {
                key = key.wrapping_mul(31).wrapping_add(b as u32);
            }
            match t {
                "i8" => bytes = 1,
                "i16" | "f16" => bytes = 2,
                "i32" => bytes = 4,
                m if m.chars().all(|c| "xyzw".contains(c)) && !m.is_empty() => {
                    lanes = m.len() as u32
                }
                _ => {}
            }
        }
    }
    Some((off, bytes * lanes, key))
}

// ---------------------------------------------------------------------------
// Analysis
// ---------------------------------------------------------------------------

struct Ctx<'a> {
    insns: &'a [Instruction],
    facts: &'a Facts,
    cfg: &'a Cfg,
    callees: &'a HashMap<u32, CalleeSummary>,
    unknown: Option<String>,
    /// Instructions the reason chains may still walk (linear cost on huge
    /// code with many divergent branches).
    trace_budget: std::cell::Cell<usize>,
    /// GPR halves tracked (see [`State::n`]).
    nregs: usize,
    /// Blocks seen by the current [`reaching_def`] walk (stamped with
    /// `seen_stamp`; allocated on the first walk).
    seen: std::cell::RefCell<Vec<u32>>,
    seen_stamp: std::cell::Cell<u32>,
    /// Per block, for [`reaching_def`]: the halves below 63 its
    /// instructions may write (bit 63: computed; filled on first use).
    block_defs: std::cell::RefCell<Vec<u64>>,
}

/// [`exec_bits`]: the exec op's condition always holds ([`cond_always`]).
const X_ALWAYS: u8 = 1;
/// [`exec_bits`]: an `if`/`update` whose test is a branch event.
const X_IF_EVENT: u8 = 2;

/// An exec op as the transfer runs it: (op, n, [`exec_bits`]).
type ExecAt = (ExecOp, u8, u8);

/// What the transfer needs to know of exec op `op` at `insn` beside its
/// kind: [`X_ALWAYS`] | [`X_IF_EVENT`].
fn exec_bits(insn: &Instruction, op: ExecOp) -> u8 {
    let mut f = 0;
    if cond_always(insn) {
        f |= X_ALWAYS;
    }
    if op == ExecOp::If && insn.form != idx::IF_FCMP || insn.mnemonic() != "update_exec" {
        f |= X_IF_EVENT;
    }
    f
}

/// Whether the register ranges write `r0l`.
fn ranges_write_r0l(ranges: &[RegRange]) -> bool {
    ranges
        .iter()
        .any(|r| r.bits & RegRange::DEF != 0 && r.bits & RegRange::UNIFORM == 0 && r.start == 0)
}

/// One recorded exec/branch event of the final pass (compact: one per
/// branch of the code; the condition's registers are read back from the
/// instruction when its reason is worded, [`cond_regs`]).
#[derive(Clone, Debug)]
struct Event {
    /// The instruction ([`Event::index`]).
    ix: u32,
    block: u32,
    /// Stamp of the block visit that recorded it ([`Record`]).
    stamp: u32,
    kind: EvKind,
    /// Divergent test / leaving lanes a divergent subset.
    div: bool,
    /// Innermost level flag when the event ran (for skips and elses).
    level_div: bool,
    /// Level the lanes leave (exit events), if any.
    leaves: Option<u8>,
    /// The condition's own value (threshold).
    cond_val: u8,
    /// The half that made the condition divergent (its register is printed
    /// first).
    worst: Option<u16>,
}

impl Event {
    #[inline]
    fn index(&self) -> usize {
        self.ix as usize
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EvKind {
    If,
    Else,
    While,
    Break,
    JmpNone,
    JmpAny,
    Jump,
}

/// What the transfer records for reasons and callers. The fixpoint
/// records as it goes (each block visit gets a stamp) and only the last
/// visit of each block counts: that visit ran the block's final entry
/// state, as a separate pass over the final states would.
#[derive(Default)]
struct Record {
    /// Stamp of the visit running now.
    stamp: u32,
    /// Per block: the stamp of its last visit.
    last: Vec<u32>,
    events: Vec<Event>,
    /// Per instruction: why its result is divergent (cleared when its
    /// block is visited again).
    why: Vec<Option<Why>>,
    /// Loads with a uniform address, with their visit's stamp.
    loads: Vec<(u32, u32)>,
    /// States at `ret`s: (block, stamp, state).
    rets: Vec<(u32, u32, State)>,
    /// After [`Record::finish`]: the loads with a uniform address.
    uniform_loads: Vec<usize>,
    /// Calls with the halves uniform among the calling lanes: (call
    /// instruction, its address, visit stamp, halves).
    calls: Vec<(u32, u32, u32, GprSet)>,
    /// After [`Record::finish`]: per call, the halves uniform at its entry.
    call_uniform: Vec<(u32, GprSet)>,
    /// After [`Record::finish`]: the join of the states at `ret`s.
    ret: Option<State>,
}

impl Record {
    fn new(insns: usize, blocks: usize) -> Record {
        Record {
            last: vec![0; blocks],
            why: vec![None; insns],
            ..Record::default()
        }
    }
    /// A visit of block `b` (instructions `insns`) starts.
    fn visit(&mut self, b: usize, insns: std::ops::Range<usize>) {
        self.stamp += 1;
        if self.last[b] != 0 {
            // what the earlier visit recorded no longer holds
            self.why[insns].fill(None);
        }
        self.last[b] = self.stamp;
    }
    /// Keeps what the last visit of each block recorded.
    fn finish(&mut self, cfg: &Cfg) {
        let last = &self.last;
        self.events.retain(|e| last[e.block as usize] == e.stamp);
        self.events.sort_by_key(|e| e.ix);
        self.uniform_loads = self
            .loads
            .iter()
            .filter(|&&(i, t)| last[cfg.block_of[i as usize] as usize] == t)
            .map(|&(i, _)| i as usize)
            .collect();
        self.call_uniform = self
            .calls
            .iter()
            .filter(|&&(i, _, t, _)| last[cfg.block_of[i as usize] as usize] == t)
            .map(|&(_, a, _, u)| (a, u))
            .collect();
        for (b, t, st) in std::mem::take(&mut self.rets) {
            if last[b as usize] != t {
                continue;
            }
            match self.ret.as_mut() {
                None => self.ret = Some(st),
                Some(r) => {
                    r.join(&st);
                }
            }
        }
    }
}

/// The registers an exec op's condition reads, in print order: the
/// divergent one (`worst`) first.
fn cond_regs(insn: &Instruction, worst: Option<u16>) -> Vec<Reg> {
    let mut regs = Vec::new();
    for o in insn.operands.iter() {
        if let OperandKind::Reg(r) = o.kind {
            if o.role.is_use() && !(r.file == RegFile::Gpr && r.half == 0 && r.width == Width::W16)
            {
                regs.push(r);
            }
        }
    }
    if let Some(w) = worst {
        // the divergent register first: the reason follows it
        if let Some(k) = regs
            .iter()
            .position(|r| r.file == RegFile::Gpr && r.half_range().contains(&(w as u32)))
        {
            let r = regs.remove(k);
            regs.insert(0, r);
        }
    }
    regs
}

/// The value an ALU instruction writes (`input`: its inputs' value), and
/// why it is divergent when the instruction itself says.
fn alu_result(insn: &Instruction, form: u8, input: u8) -> (u8, Option<Why>) {
    if form == idx::GET_SR {
        let n = insn.operands.iter().find_map(|o| match o.kind {
            OperandKind::SpecialReg(n) => Some(n),
            _ => None,
        });
        match n.map(sr_class) {
            Some(SrClass::Uniform) => (0, None),
            _ => (DIV, Some(Why::Sr(n.unwrap_or(u16::MAX)))),
        }
    } else if is_mov_imm(insn) {
        (0, None)
    } else if matches!(form, idx::STACK_GET_PTR | idx::DFDX | idx::DFDY) {
        (DIV, Some(Why::Source))
    } else {
        (input, None)
    }
}

/// The value a cross-lane instruction writes, and why it is divergent.
fn cross_lane_result(insn: &Instruction, form: u8, s: &State, input: u8) -> (u8, Option<Why>) {
    let d = s.depth as usize;
    if simd_uniform_result(form) {
        (0, None)
    } else if form == idx::SIMD_SHUFFLE {
        // lane index (last operand): a uniform index is a broadcast
        let ix = insn.operands.iter().last().and_then(|o| match o.kind {
            OperandKind::Reg(r) => Some(r),
            _ => None,
        });
        let iv = match ix {
            None => 0,
            Some(r) if r.file == RegFile::Uniform => 0,
            Some(r) => r
                .half_range()
                .map(|h| if h == 0 { DIV } else { s.get(h) })
                .max()
                .unwrap_or(0),
        };
        if iv as usize <= d {
            (0, None)
        } else {
            (DIV, Some(Why::LaneIndex))
        }
    } else if input == 0
        && !s.flag(0)
        && !matches!(form, idx::SIMD_PREFIX_IADD..=idx::SIMD_PREFIX_MAX_U | idx::QUAD_PREFIX_IADD..=idx::QUAD_PREFIX_FMUL | idx::SIMD_MATRIX_FMADD32 | idx::SIMD_MATRIX_FMADD16)
    {
        // lane moves of a value every lane holds
        (0, None)
    } else {
        (DIV, Some(Why::CrossLane))
    }
}

/// The value a load writes, and why it is divergent.
fn load_result(insn: &Instruction, form: u8, s: &State, input: u8) -> (u8, Option<Why>) {
    let d = s.depth as usize;
    match insn.mem_space() {
        Some(agx_isa::MemSpace::Device) | Some(agx_isa::MemSpace::Threadgroup)
            if form != idx::ASYNC_LOAD =>
        {
            (if input as usize <= d { 0 } else { input }, None)
        }
        Some(agx_isa::MemSpace::Stack) => {
            let mut out = DIV;
            if input as usize <= d {
                if let Some((off, size, key)) = stack_slot(insn) {
                    if let Some(sl) = s.slots.iter().find(|t| {
                        t.0 as usize == CUR && t.1.off == off && t.1.size == size && t.1.key == key
                    }) {
                        out = sl.1.val;
                    }
                }
            }
            (out, (out == DIV).then_some(Why::Spill))
        }
        _ => (DIV, Some(Why::Source)),
    }
}

/// A stack store (`input`: its inputs' value): replaces the slots it
/// overlaps in the current row (all of them when its slot is unknown).
fn store_stack_slot(insn: &Instruction, s: &mut State, input: u8) {
    let d = s.depth as usize;
    let val = if input as usize <= d { s.eff() } else { DIV };
    match stack_slot(insn) {
        Some((off, size, key)) => {
            s.slots.retain(|(row, t)| {
                *row as usize != CUR || t.off + t.size as i64 <= off || off + size as i64 <= t.off
            });
            s.slots.push((
                CUR as u8,
                Slot {
                    off,
                    size,
                    key,
                    val,
                },
            ));
        }
        None => s.slots.retain(|(row, _)| *row as usize != CUR),
    }
}

impl<'a> Ctx<'a> {
    fn read(&self, s: &State, r: &RegRange) -> u8 {
        if r.bits & RegRange::UNIFORM != 0 {
            return 0;
        }
        let mut v = 0u8;
        for h in r.range() {
            if h == 0 || h >= 256 {
                return DIV;
            }
            v = v.max(s.get(h));
        }
        v
    }

    /// Applies instruction `i` (its exec op `xop`, if any) to `s`.
    fn step(&mut self, i: usize, xop: Option<ExecAt>, s: &mut State, mut rec: Option<&mut Record>) {
        if let Some((op, n, x)) = xop {
            self.exec(i, op, n as usize, x, s, rec);
            return;
        }
        if !s.running() {
            // no lane runs: nothing is written (an `r0l` write too)
            return;
        }
        let ranges = self.facts.regs(i);
        let writes_r0l = ranges_write_r0l(ranges);
        let (input, worst) = self.inputs(s, ranges);
        let (out, why, call_defs) = self.result(i, s, input, rec.as_deref_mut());
        let why = if out == DIV && why.is_none() {
            worst.map(Why::Operand)
        } else {
            why
        };
        self.write_defs(i, s, out, why, call_defs, rec);
        if writes_r0l {
            self.write_r0l(i, s);
        }
    }

    /// The value of an instruction's inputs (`ranges`), and which half
    /// made it divergent.
    fn inputs(&self, s: &State, ranges: &[RegRange]) -> (u8, Option<u16>) {
        let mut input = 0u8;
        let mut worst: Option<u16> = None;
        for r in ranges.iter().filter(|r| r.bits & RegRange::USE != 0) {
            let v = self.read(s, r);
            if v > input {
                input = v;
                if r.bits & RegRange::UNIFORM == 0 {
                    worst = r
                        .range()
                        .find(|&h| h == 0 || s.get(h) == v)
                        .map(|h| h as u16);
                }
            }
        }
        (input, worst)
    }

    /// The value instruction `i` writes (`input`: its inputs' value), why
    /// it is divergent when the instruction itself says, and for a call
    /// the callee's (written, divergent) halves. A stack store updates the
    /// slots of `s`; a call may set its level's mask-changed flag.
    fn result(
        &self,
        i: usize,
        s: &mut State,
        input: u8,
        rec: Option<&mut Record>,
    ) -> (u8, Option<Why>, Option<(GprSet, GprSet)>) {
        let insn = &self.insns[i];
        let d = s.depth as usize;
        let form = form_of(insn);
        let (out, why) = match insn.category() {
            Category::Alu => alu_result(insn, form, input),
            Category::CrossLane => cross_lane_result(insn, form, s, input),
            Category::Load => load_result(insn, form, s, input),
            Category::Store => {
                if insn.mem_space() == Some(agx_isa::MemSpace::Stack) {
                    store_stack_slot(insn, s, input);
                }
                (input, None)
            }
            Category::Control => match self.cfg.flows[i] {
                Flow::Call { .. } | Flow::CallIndirect => {
                    let defs = self.call(i, s, d, rec);
                    // the link register: pc + 6 for every lane
                    return (0, None, Some(defs));
                }
                _ => (input, None),
            },
            _ => (DIV, Some(Why::Source)),
        };
        (out, why, None)
    }

    /// A call at `i` (exec depth `d`): records what the callee's entry sees
    /// uniform and returns the callee's (written, divergent) halves.
    fn call(
        &self,
        i: usize,
        s: &mut State,
        d: usize,
        rec: Option<&mut Record>,
    ) -> (GprSet, GprSet) {
        let facts = self.facts;
        if let Some(r) = rec {
            // what the callee's entry sees uniform: the halves
            // uniform among the calling lanes
            let mut u = GprSet::new();
            for h in 1..(s.n as u32).min(256) {
                if s.get(h) as usize <= d {
                    u.insert(h);
                }
            }
            r.calls.push((i as u32, facts.addr[i], r.stamp, u));
        }
        match self.callees.get(&facts.addr[i]) {
            Some(c) => {
                if c.mask_changed {
                    s.set_flag(d, true);
                }
                (c.written, c.divergent)
            }
            None => {
                let mut all = GprSet::new();
                all.set_range(1..256);
                (all, all)
            }
        }
    }

    /// Writes instruction `i`'s result `out` to its destinations (or a
    /// call's `call_defs` to the callee's), and records why it is
    /// divergent and which loads are uniform.
    fn write_defs(
        &self,
        i: usize,
        s: &mut State,
        out: u8,
        why: Option<Why>,
        call_defs: Option<(GprSet, GprSet)>,
        rec: Option<&mut Record>,
    ) {
        let insn = &self.insns[i];
        let facts = self.facts;
        let d = s.depth as usize;
        let val = if out as usize <= d { s.eff() } else { DIV };
        let eff = s.eff();
        for r in facts.regs(i).iter().filter(|r| r.bits & RegRange::DEF != 0) {
            if r.bits & RegRange::UNIFORM != 0 {
                continue;
            }
            for h in r.range() {
                if h > 0 && h < 256 {
                    s.set(h, val);
                }
            }
        }
        if let Some((w, dv)) = call_defs {
            for h in 1..256u32 {
                if w.contains(h) {
                    s.set(h, if dv.contains(h) { DIV } else { eff });
                }
            }
            if let Some(rec) = rec {
                rec.why[i] = Some(Why::Call(self.callees.contains_key(&facts.addr[i])));
            }
        } else if let Some(rec) = rec {
            if out == DIV {
                if let Some(w) = why {
                    rec.why[i] = Some(w);
                }
            }
            if insn.category() == Category::Load
                && out as usize <= d
                && matches!(
                    insn.mem_space(),
                    Some(agx_isa::MemSpace::Device) | Some(agx_isa::MemSpace::Threadgroup)
                )
            {
                rec.loads.push((i as u32, rec.stamp));
            }
        }
    }

    /// `r0l` written by an ordinary instruction: Mesa's `break`/`continue`
    /// (`mov_imm r0l, k`: the active lanes leave `k` levels).
    fn write_r0l(&mut self, i: usize, s: &mut State) {
        let insn = &self.insns[i];
        let k = if is_mov_imm(insn) {
            mov_imm_value(insn)
        } else {
            None
        };
        match k {
            Some(0) => {}
            Some(k) if k > 0 => {
                let d = s.depth as usize;
                let b = (d + 1).saturating_sub(k as usize);
                let sub = s.any_flag(b + 1, d.max(b));
                // the active lanes leave for level b
                s.join_rows(ex(b), CUR);
                s.kill(CUR);
                if sub || k as usize > d {
                    s.set_flag(b, true);
                }
            }
            _ => {
                self.unknown.get_or_insert_with(|| {
                    format!(
                        "r0l (the exec-mask counter) written by a non-constant at 0x{:x}",
                        insn.addr
                    )
                });
            }
        }
    }

    /// The value of exec op `i`'s condition among the lanes of `row` (and
    /// the half that made it so).
    fn cond(&self, i: usize, row: Option<&[u8]>) -> (u8, Option<u16>) {
        let Some(l) = row else { return (0, None) };
        let mut v = 0u8;
        let mut worst = None;
        for o in self.insns[i].operands.iter() {
            let OperandKind::Reg(r) = o.kind else {
                continue;
            };
            if !o.role.is_use()
                || r.file == RegFile::Gpr && r.half == 0 && r.width == Width::W16
                || r.file == RegFile::Uniform
            {
                continue;
            }
            for h in r.half_range() {
                let x = if h == 0 || h >= 256 {
                    DIV
                } else {
                    l.get(h as usize).copied().unwrap_or(DIV)
                };
                if x > v {
                    v = x;
                    worst = Some(h as u16);
                }
            }
        }
        (v, worst)
    }

    fn exec(
        &mut self,
        i: usize,
        op: ExecOp,
        n: usize,
        x: u8,
        s: &mut State,
        rec: Option<&mut Record>,
    ) {
        let insn = &self.insns[i];
        let always = x & X_ALWAYS != 0;
        let d = s.depth as usize;
        let block = self.cfg.block_of[i];
        let mut ev: Option<Event> = None;
        let mk = |kind, div, leaves: Option<usize>, (cond_val, worst), level_div| Event {
            ix: i as u32,
            block,
            stamp: 0,
            kind,
            div,
            level_div,
            leaves: leaves.map(|b| b as u8),
            cond_val,
            worst,
        };
        match op {
            ExecOp::If | ExecOp::Update => {
                let c = self.cond(i, s.running().then(|| s.row(CUR)));
                let top = d + n;
                if top > MAX_LEVELS {
                    self.unknown
                        .get_or_insert_with(|| "exec-mask nesting deeper than 60".to_string());
                    return;
                }
                let div = c.0 as usize > d;
                s.grow(top);
                if !always {
                    if s.running() {
                        // the lanes failing the test wait at level top
                        s.join_rows(ex(top), CUR);
                        if div {
                            s.set_flag(top, true);
                        }
                    }
                    if x & X_IF_EVENT != 0 {
                        ev = Some(mk(EvKind::If, div, None, c, false));
                    }
                }
            }
            ExecOp::Else => {
                if d == 0 || n == 0 {
                    self.unknown
                        .get_or_insert_with(|| format!("else at nesting 0 at 0x{:x}", insn.addr));
                    return;
                }
                // the lanes waiting at level d run; the running ones leave
                let r = ex(d);
                s.widen(r, (d - 1) as u8);
                let c = self.cond(i, s.live(r).then(|| s.row(r)));
                let div = c.0 as usize > d;
                s.swap_rows(CUR, r);
                // now CUR: the lanes that run the else; row r: the then lanes
                let b = d + 1 - n.min(d);
                if b == d {
                    if !always {
                        s.join_rows(r, CUR);
                    }
                } else {
                    s.join_rows(ex(b), r);
                    s.kill(r);
                    if !always {
                        s.join_rows(r, CUR);
                    }
                }
                if b < d && s.any_flag(b + 1, d) {
                    s.set_flag(b, true);
                }
                if div {
                    s.set_flag(d, true);
                }
                ev = Some(mk(EvKind::Else, div, None, c, s.flag(d)));
            }
            ExecOp::While => {
                if n == 0 {
                    self.unknown
                        .get_or_insert_with(|| format!("while with n = 0 at 0x{:x}", insn.addr));
                    return;
                }
                let d2 = d.max(n);
                if d2 > MAX_LEVELS {
                    self.unknown
                        .get_or_insert_with(|| "exec-mask nesting deeper than 60".to_string());
                    return;
                }
                s.grow(d2);
                let b = d2 + 1 - n;
                // the pool of lanes that test: the running ones and those
                // waiting above level b
                for k in b + 1..=d2 {
                    s.join_rows(CUR, ex(k));
                    s.kill(ex(k));
                    s.set_flag(k, false);
                }
                s.widen(CUR, b as u8);
                let c = self.cond(i, s.running().then(|| s.row(CUR)));
                let div = c.0 as usize > b;
                if !always {
                    s.join_rows(ex(b), CUR);
                    if div {
                        s.set_flag(b, true);
                    }
                    ev = Some(mk(EvKind::While, div, Some(b), c, false));
                }
            }
            ExecOp::Pop(_) => {
                if n == 0 {
                    return;
                }
                let nd = d.saturating_sub(n);
                for k in nd + 1..=d {
                    s.join_rows(CUR, ex(k));
                    s.kill(ex(k));
                }
                // lanes that left the function's own level come back:
                // nothing written since is known uniform
                if n > d && s.live(ex(0)) {
                    s.join_rows(CUR, ex(0));
                    s.kill(ex(0));
                    if s.running() {
                        s.row_mut(CUR).fill(DIV);
                    }
                }
                s.widen(CUR, nd as u8);
                s.shrink(nd);
            }
        }
        if let (Some(rec), Some(mut e)) = (rec, ev) {
            e.stamp = rec.stamp;
            rec.events.push(e);
        }
    }

    /// Applies the block's instructions to `s` (its entry state).
    fn block(&mut self, b: usize, s: &mut State, mut rec: Option<&mut Record>) {
        let blk = &self.cfg.blocks[b];
        if let Some(r) = rec.as_deref_mut() {
            r.visit(b, blk.insns.clone());
        }
        let exec = &self.facts.exec;
        // the block's exec ops, in index order
        let mut xk = exec.partition_point(|x| x.0 < blk.insns.start);
        let mut skip = 0;
        for i in blk.insns.clone() {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            if i + 2 < blk.insns.end && self.insns[i].mnemonic() == "xor" {
                if let Some((a, c)) = xor_swap(&self.insns[i..i + 3]) {
                    // a register swap by three xors (Mesa's parallel-copy
                    // lowering): the two values trade places
                    if s.running() {
                        let (ra, rc) = (a.half_range(), c.half_range());
                        let n = s.n as u32;
                        for (x, y) in ra.clone().zip(rc.clone()) {
                            if x > 0 && y > 0 && x < n && y < n {
                                s.regs.swap(x as usize, y as usize);
                            }
                        }
                        if let Some(r) = rec.as_deref_mut() {
                            for (k, (x, y)) in
                                [(i + 2, (ra.start, rc.start)), (i + 1, (rc.start, ra.start))]
                            {
                                if y < 256 && s.get(x) == DIV {
                                    r.why[k] = Some(Why::Operand(y as u16));
                                }
                            }
                        }
                    }
                    skip = 2;
                    continue;
                }
            }
            while xk < exec.len() && exec[xk].0 < i {
                xk += 1;
            }
            let xop = exec
                .get(xk)
                .filter(|x| x.0 == i)
                .map(|&(_, op, n)| (op, n, exec_bits(&self.insns[i], op)));
            // the branch events that are not exec ops
            if let Some(r) = rec.as_deref_mut() {
                if let Flow::BranchExec { .. } = self.cfg.flows[i] {
                    let d = s.depth as usize;
                    let kind = if self.insns[i].form == idx::JMP_EXEC_ANY {
                        EvKind::JmpAny
                    } else if self.insns[i].form == idx::JMP_EXEC_NONE {
                        EvKind::JmpNone
                    } else {
                        EvKind::Jump
                    };
                    r.events.push(Event {
                        ix: i as u32,
                        block: b as u32,
                        stamp: r.stamp,
                        kind,
                        div: s.flag(d),
                        level_div: s.flag(d),
                        leaves: None,
                        cond_val: 0,
                        worst: None,
                    });
                }
                if self.cfg.flows[i] == Flow::Ret {
                    r.rets.push((b as u32, r.stamp, s.clone()));
                }
                // breaks (r0l writes) are events too
                if xop.is_none() && s.running() && ranges_write_r0l(self.facts.regs(i)) {
                    if let Some(k) = mov_imm_value(&self.insns[i]).filter(|&k| k > 0) {
                        let d = s.depth as usize;
                        let bl = (d + 1).saturating_sub(k as usize);
                        r.events.push(Event {
                            ix: i as u32,
                            block: b as u32,
                            stamp: r.stamp,
                            kind: EvKind::Break,
                            div: s.any_flag(bl + 1, d.max(bl + 1)) && d > bl || k as usize > d,
                            level_div: false,
                            leaves: Some(bl as u8),
                            cond_val: 0,
                            worst: None,
                        });
                    }
                }
            }
            self.step(i, xop, s, rec.as_deref_mut());
        }
    }
}

/// Analyses every function of `cfg`. `callees`: summaries of called
/// functions by call address.
pub fn analyze(
    insns: &[Instruction],
    facts: &Facts,
    cfg: &Cfg,
    forest: &LoopForest,
    callees: &HashMap<u32, CalleeSummary>,
) -> Divergence {
    analyze_entry(insns, facts, cfg, forest, callees, &GprSet::new())
}

/// [`analyze`] with the GPR halves `entry_uniform` uniform at the entry of
/// the first function (the halves every caller passes uniform: see
/// `program.rs`); the summary it gives holds at every call site where at
/// least those halves are uniform.
pub fn analyze_entry(
    insns: &[Instruction],
    facts: &Facts,
    cfg: &Cfg,
    forest: &LoopForest,
    callees: &HashMap<u32, CalleeSummary>,
    entry_uniform: &GprSet,
) -> Divergence {
    let nb = cfg.blocks.len();
    // halves tracked: every one this function or its callees write
    let mut nregs = facts.highest_gpr.map_or(1, |h| h as usize + 1);
    for c in callees.values() {
        if let Some(h) = (0..256u32).rev().find(|&h| c.written.contains(h)) {
            nregs = nregs.max(h as usize + 1);
        }
    }
    let nregs = nregs.clamp(1, 256);
    let mut cx = Ctx {
        insns,
        facts,
        cfg,
        callees,
        unknown: None,
        trace_budget: std::cell::Cell::new(2_000_000),
        nregs,
        seen: std::cell::RefCell::new(Vec::new()),
        block_defs: std::cell::RefCell::new(Vec::new()),
        seen_stamp: std::cell::Cell::new(0),
    };
    let mut entries = Vec::new();
    // each entry block once, by a bitmap (a scan of the list so far was
    // quadratic in the functions: 4% of call-dense 1M's samples)
    let mut has_entry = vec![false; nb];
    for (k, f) in cfg.functions.iter().enumerate() {
        if !std::mem::replace(&mut has_entry[f.entry_block], true) {
            let mut st = State::entry(cx.nregs);
            if k == 0 {
                for h in entry_uniform.iter().filter(|&h| h > 0) {
                    st.set(h, 0);
                }
            }
            entries.push((f.entry_block, st));
        }
    }
    // the fixpoint records as it goes (see [`Record`])
    let mut flow = DivFlow {
        cx: &mut cx,
        rec: Record::new(insns.len(), nb),
    };
    let mut out = dataflow::forward(cfg, &mut flow, entries);
    if !out.settled {
        flow.cx
            .unknown
            .get_or_insert_with(|| "divergence fixpoint did not settle".to_string());
    }
    let header_depth: Vec<Option<u8>> = (0..nb)
        .map(|b| out.stored.get(b).map(|s| s.depth))
        .collect();
    // unsettled: the states as they stand, recorded again in one pass
    if !out.settled {
        flow.rec = Record::new(insns.len(), nb);
        dataflow::replay(cfg, &mut flow, &mut out);
    }
    drop(out);
    let mut rec = flow.rec;
    rec.finish(cfg);
    build(&cx, forest, &header_depth, rec)
}

/// The divergence domain over the shared forward dataflow
/// ([`crate::dataflow`]): the context, and the record the fixpoint keeps.
struct DivFlow<'c, 'a> {
    cx: &'c mut Ctx<'a>,
    rec: Record,
}

impl dataflow::Forward for DivFlow<'_, '_> {
    type State = State;
    fn block(&mut self, b: usize, s: &mut State) {
        self.cx.block(b, s, Some(&mut self.rec));
    }
    fn edge(&mut self, b: usize, st: &mut State, e: &crate::cfg::Edge) {
        let cfg = self.cx.cfg;
        let last = cfg.blocks[b].insns.end - 1;
        if let Flow::BranchExec { .. } = cfg.flows[last] {
            let form = self.cx.insns[last].form;
            let taken = e.kind == crate::cfg::EdgeKind::Taken;
            // jmp_exec_any falls through only when no lane is active;
            // jmp_exec_none is taken only then
            if (form == idx::JMP_EXEC_ANY && !taken) || (form == idx::JMP_EXEC_NONE && taken) {
                st.kill(CUR);
            }
        }
    }
    fn join(&mut self, b: usize, to: usize, t: &mut State, out: &State) -> bool {
        let cfg = self.cx.cfg;
        if t.depth != out.depth && !is_back(cfg, b, to) && !has_back_pred(cfg, to) {
            self.cx.unknown.get_or_insert_with(|| {
                format!(
                    "exec-mask levels differ where paths join at 0x{:x}",
                    cfg.blocks[to].start
                )
            });
        }
        t.join(out)
    }
}

/// Whether instruction `k` is one of a three-xor swap.
fn xor_swap_member(insns: &[Instruction], k: usize) -> bool {
    (k.saturating_sub(2)..=k).any(|s| s + 3 <= insns.len() && xor_swap(&insns[s..s + 3]).is_some())
}

/// `xor a, a, b; xor b, a, b; xor a, a, b` (any source order): swaps `a`
/// and `b`.
pub(crate) fn xor_swap(w: &[Instruction]) -> Option<(Reg, Reg)> {
    let parts = |x: &Instruction| -> Option<(Reg, Reg, Reg)> {
        if x.mnemonic() != "xor" || x.operands.len() != 3 {
            return None;
        }
        let r = |k: usize| {
            x.operands[k]
                .as_reg()
                .copied()
                .filter(|r| r.file == RegFile::Gpr)
        };
        let (d, s1, s2) = (r(0)?, r(1)?, r(2)?);
        let same = |p: &Reg, q: &Reg| p.half == q.half && p.width == q.width && p.count == q.count;
        let _ = same;
        Some((d, s1, s2))
    };
    let key = |r: &Reg| (r.half, r.width.halves(), r.count);
    let (d0, a0, b0) = parts(&w[0])?;
    let (d1, a1, b1) = parts(&w[1])?;
    let (d2, a2, b2) = parts(&w[2])?;
    let a = d0;
    let b = if key(&a0) == key(&a) { b0 } else { a0 };
    let pair = |x: &Reg, y: &Reg| {
        let mut p = [key(x), key(y)];
        p.sort();
        p
    };
    let want = pair(&a, &b);
    if key(&a) == key(&b)
        || pair(&a0, &b0) != want
        || pair(&a1, &b1) != want
        || pair(&a2, &b2) != want
        || key(&d1) != key(&b)
        || key(&d2) != key(&a)
    {
        return None;
    }
    Some((a, b))
}

/// An `if` whose arm only copies registers and then breaks/continues
/// (`mov_imm r0l, k`): the loop's exit test, not an if.
fn is_break_if(insns: &[Instruction], facts: &Facts, i: usize) -> bool {
    let mut k = i + 1;
    while k < insns.len() {
        let x = &insns[k];
        if x.form == idx::JMP_EXEC_NONE {
            k += 1;
            continue;
        }
        let r0l = facts.regs(k).iter().any(|r| {
            r.bits & RegRange::DEF != 0 && r.bits & RegRange::UNIFORM == 0 && r.start == 0
        });
        if r0l {
            return is_mov_imm(x) && mov_imm_value(x).is_some_and(|v| v > 0);
        }
        if x.mnemonic() == "mov" || is_mov_imm(x) {
            k += 1;
            continue;
        }
        return false;
    }
    false
}

fn build(cx: &Ctx, forest: &LoopForest, header_depth: &[Option<u8>], rec: Record) -> Divergence {
    let mut branches = Vec::with_capacity(rec.events.len() + forest.loops.len());
    let mut counts = Counts::default();
    let reasons = Reasons::new(cx, &rec);
    let exit_events = event_branches(&reasons, &mut branches, &mut counts);
    loop_branches(
        &reasons,
        forest,
        header_depth,
        &exit_events,
        &mut branches,
        &mut counts,
    );
    branches.sort_by_key(|b| (b.at, b.kind as u8));
    // (kept to the report: the capacity counted every event, the backward
    // jumps of loops included, ~a third more than the branches)
    branches.shrink_to_fit();
    fill_arms_of(cx.cfg, forest, &mut branches);
    let unknown = cx.unknown.clone();
    let summary = callee_summary(cx, &rec);
    let mut uniform_loads = if unknown.is_some() {
        Vec::new()
    } else {
        rec.uniform_loads.clone()
    };
    let mut call_uniform = rec.call_uniform.clone();
    if unknown.is_some() {
        for c in &mut call_uniform {
            c.1 = GprSet::new();
        }
    }
    call_uniform.sort_by_key(|c| c.0);
    uniform_loads.sort_unstable();
    uniform_loads.dedup();
    counts.uniform_loads = uniform_loads.len() as u32;
    Divergence {
        branches,
        counts,
        uniform_loads,
        unknown,
        summary,
        call_uniform,
        range: DivergenceRange::default(),
    }
}

/// The worded reasons of one function's branches, read off its record.
struct Reasons<'a, 'c> {
    cx: &'a Ctx<'c>,
    rec: &'a Record,
    // equal worded reasons share one string (a huge function has many
    // branches with the same chain, or all "not analysed")
    interned: std::cell::RefCell<
        HashMap<String, std::sync::Arc<String>, std::hash::BuildHasherDefault<Fnv>>,
    >,
}

impl<'a, 'c> Reasons<'a, 'c> {
    fn new(cx: &'a Ctx<'c>, rec: &'a Record) -> Self {
        Reasons {
            cx,
            rec,
            interned: Default::default(),
        }
    }

    fn intern(&self, s: String) -> Reason {
        let mut m = self.interned.borrow_mut();
        if let Some(a) = m.get(&s) {
            return Reason(Repr::Text(a.clone()));
        }
        let a = std::sync::Arc::new(s.clone());
        m.insert(s, a.clone());
        Reason(Repr::Text(a))
    }

    /// The reason of exec op `i`'s test (`worst`: its divergent half).
    fn chain(&self, i: usize, worst: Option<u16>, v: u8) -> Reason {
        let regs = cond_regs(&self.cx.insns[i], worst);
        if regs.is_empty() {
            return Reason::fixed(Fixed::ImmediatesOnly);
        }
        if (v as usize) < DIV as usize && self.cx.unknown.is_none() {
            if regs.len() <= 2 {
                let mut p = [0u32; 2];
                for (k, r) in regs.iter().enumerate() {
                    p[k] = pack_reg(r);
                }
                return Reason(Repr::Uniform(p));
            }
            let mut out = String::new();
            for (k, r) in regs.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                push_reg_name(&mut out, r);
            }
            out.push_str(": uniform");
            return self.intern(out);
        }
        // the first divergent GPR of the condition
        let h = regs
            .iter()
            .filter(|r| r.file == RegFile::Gpr)
            .flat_map(|r| r.half_range())
            .next()
            .unwrap_or(0) as u16;
        self.intern(trace(self.cx, self.rec, i, h))
    }
}

/// A branch with no arms filled in yet.
fn bare_branch(at: u32, index: u32, kind: BranchKind, uniform: bool, reason: Reason) -> Branch {
    Branch {
        at,
        index,
        kind,
        uniform,
        reason,
        arms_cycles: None,
        arms: None,
        loop_index: None,
    }
}

/// The branches of the record's events (ifs, elses, while tests, skips and
/// jumps; loops come from [`loop_branches`]); returns the exit events
/// (while tests and breaks) in event order.
fn event_branches<'a>(
    reasons: &Reasons<'a, '_>,
    branches: &mut Vec<Branch>,
    counts: &mut Counts,
) -> Vec<&'a Event> {
    let (insns, facts, cfg) = (reasons.cx.insns, reasons.cx.facts, reasons.cx.cfg);
    let unknown = &reasons.cx.unknown;
    let chain = |i, worst, v| reasons.chain(i, worst, v);
    let mut exit_events: Vec<&Event> = Vec::new();
    for e in &reasons.rec.events {
        let at = facts.addr[e.index()];
        match e.kind {
            EvKind::If => {
                let uniform = !e.div && unknown.is_none();
                let kind = if is_break_if(insns, facts, e.index()) {
                    BranchKind::Break
                } else {
                    if uniform {
                        counts.if_uniform += 1;
                    } else {
                        counts.if_divergent += 1;
                    }
                    BranchKind::If
                };
                let reason = if uniform {
                    chain(e.index(), e.worst, e.cond_val)
                } else {
                    chain(e.index(), e.worst, DIV)
                };
                branches.push(bare_branch(at, e.ix, kind, uniform, reason));
            }
            EvKind::Else => {
                let uniform = !e.level_div && unknown.is_none();
                let reason = if uniform {
                    Reason::fixed(Fixed::MatchingIfUniform)
                } else if e.div {
                    chain(e.index(), e.worst, DIV)
                } else {
                    Reason::fixed(Fixed::MatchingIfDivergent)
                };
                branches.push(bare_branch(at, e.ix, BranchKind::Else, uniform, reason));
            }
            EvKind::While => {
                exit_events.push(e);
                let uniform = !e.div && unknown.is_none();
                let reason = chain(e.index(), e.worst, if uniform { 0 } else { DIV });
                branches.push(bare_branch(at, e.ix, BranchKind::While, uniform, reason));
            }
            EvKind::Break => exit_events.push(e),
            EvKind::JmpNone | EvKind::JmpAny | EvKind::Jump => {
                let back = match cfg.flows[e.index()] {
                    Flow::BranchExec { target, .. } => target <= at as i64,
                    _ => false,
                };
                if back && e.kind == EvKind::JmpAny {
                    continue; // the loop record below
                }
                let (uniform, reason) = if e.kind == EvKind::Jump {
                    (false, Reason::fixed(Fixed::ConditionUnknown))
                } else if e.level_div || unknown.is_some() {
                    (false, Reason::fixed(Fixed::LevelDivergent))
                } else {
                    (true, Reason::fixed(Fixed::LevelUniform))
                };
                let kind = if e.kind == EvKind::Jump {
                    BranchKind::Jump
                } else {
                    BranchKind::Skip
                };
                branches.push(bare_branch(at, e.ix, kind, uniform, reason));
            }
        }
    }
    exit_events
}

/// One branch per analysed loop, at its last latch: uniform when every exit
/// test is.
fn loop_branches(
    reasons: &Reasons,
    forest: &LoopForest,
    header_depth: &[Option<u8>],
    exit_events: &[&Event],
    branches: &mut Vec<Branch>,
    counts: &mut Counts,
) {
    let (facts, cfg) = (reasons.cx.facts, reasons.cx.cfg);
    // each exit event counts for the loops containing it whose level it
    // leaves (header depth >= the level left)
    let header_depth = |l: usize| header_depth[forest.loops[l].header].map(|d| d as usize);
    // (loop, exit event) pairs, by loop, each loop's in event order (one
    // flat list, not a list per loop)
    let mut per_loop: Vec<(u32, u32)> = Vec::new();
    for (k, e) in exit_events.iter().enumerate() {
        let mut cur = forest.loop_of.get(e.block as usize).copied().flatten();
        while let Some(l) = cur {
            if let (Some(b), Some(hd)) = (e.leaves.map(usize::from), header_depth(l)) {
                if b <= hd {
                    per_loop.push((l as u32, k as u32));
                }
            }
            cur = forest.loops[l].parent;
        }
    }
    per_loop.sort_by_key(|x| x.0);
    let mut pl = 0usize;
    for (li, l) in forest.loops.iter().enumerate() {
        let from = pl;
        while pl < per_loop.len() && per_loop[pl].0 as usize == li {
            pl += 1;
        }
        if header_depth(li).is_none() {
            continue;
        }
        let mut div: Option<&Event> = None;
        let mut tests = Vec::new();
        for e in per_loop[from..pl].iter().map(|x| exit_events[x.1 as usize]) {
            tests.push(facts.addr[e.index()]);
            if e.div && div.is_none() {
                div = Some(e);
            }
        }
        let latch = l
            .latches
            .iter()
            .map(|&b| cfg.blocks[b].insns.end - 1)
            .max()
            .unwrap_or(cfg.blocks[l.header].insns.start);
        let uniform = div.is_none() && reasons.cx.unknown.is_none();
        let reason = loop_reason(reasons, div, &tests);
        if uniform {
            counts.loop_uniform += 1;
        } else {
            counts.loop_divergent += 1;
        }
        branches.push(Branch {
            loop_index: Some(li as u32),
            ..bare_branch(
                facts.addr[latch],
                latch as u32,
                BranchKind::Loop,
                uniform,
                reason,
            )
        });
    }
}

/// Why a loop is uniform or not: `div` its first divergent exit event,
/// `tests` the addresses of all its exit tests.
fn loop_reason(reasons: &Reasons, div: Option<&Event>, tests: &[u32]) -> Reason {
    let (facts, rec) = (reasons.cx.facts, reasons.rec);
    match (div, &reasons.cx.unknown) {
        (_, Some(u)) => reasons.intern(format!("not analysed: {u}")),
        (Some(e), _) => {
            let what = match e.kind {
                EvKind::While => format!(
                    "exit test at 0x{:x} is divergent: {}",
                    facts.addr[e.index()],
                    reasons.chain(e.index(), e.worst, DIV)
                ),
                _ => {
                    // the break's enclosing divergent if
                    let at = rec.events.partition_point(|x| x.index() < e.index());
                    let cond_if = rec.events[..at]
                        .iter()
                        .rev()
                        .take(64)
                        .find(|x| x.kind == EvKind::If && x.div);
                    match cond_if {
                        Some(x) => format!(
                            "break at 0x{:x} under the divergent if at 0x{:x}: {}",
                            facts.addr[e.index()],
                            facts.addr[x.index()],
                            reasons.chain(x.index(), x.worst, DIV)
                        ),
                        None => format!(
                            "break at 0x{:x} under a divergent exec mask",
                            facts.addr[e.index()]
                        ),
                    }
                }
            };
            Reason::text(format!(
                "{what}; the SIMD-group runs until its slowest thread exits"
            ))
        }
        (None, None) if tests.is_empty() => Reason::fixed(Fixed::NoExitTest),
        (None, None) if tests.len() == 1 => Reason(Repr::OneTest(tests[0])),
        (None, None) => Reason::text(format!(
            "every exit test is uniform ({})",
            tests
                .iter()
                .map(|a| format!("0x{a:x}"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// The summary for callers: the GPR halves the function writes, those it
/// may leave divergent, and whether it may change the exec mask.
fn callee_summary(cx: &Ctx, rec: &Record) -> CalleeSummary {
    let (insns, facts) = (cx.insns, cx.facts);
    let mut summary = CalleeSummary::default();
    for i in 0..insns.len() {
        for r in facts.regs(i) {
            if r.bits & RegRange::DEF != 0 && r.bits & RegRange::UNIFORM == 0 {
                summary
                    .written
                    .set_range(r.range().start.max(1)..r.range().end);
            }
        }
    }
    for (&_, c) in cx.callees.iter() {
        summary.written.union_with(&c.written);
    }
    match (&rec.ret, &cx.unknown) {
        (Some(r), None) => {
            let regs = r.running().then(|| r.row(CUR));
            for h in 1..256u32 {
                let v = regs.map_or(DIV, |x| x.get(h as usize).copied().unwrap_or(DIV));
                if v > 0 {
                    summary.divergent.insert(h);
                }
            }
            summary.mask_changed = r.depth > 0 || r.flag(0);
        }
        _ => {
            summary.divergent = summary.written;
            summary.mask_changed = true;
        }
    }
    summary
}

/// [`arms_of`] for every branch. The arms of an `if` or `else` end at the
/// first instruction past it whose exec depth is below a threshold: all
/// found in one backward sweep over the depths that keeps the positions
/// no later one hides (a stack with depths rising towards the top), so
/// the cost is linear, not the sum of the arms' lengths.
fn fill_arms_of(cfg: &Cfg, forest: &LoopForest, branches: &mut [Branch]) {
    let dep = &cfg.exec_depth;
    // (instruction, threshold, branch)
    let mut queries: Vec<(usize, u32, usize)> = Vec::new();
    for (k, b) in branches.iter_mut().enumerate() {
        let bi = b.index as usize;
        match (b.kind, dep.get(bi)) {
            (BranchKind::If | BranchKind::Break, Some(&d)) => {
                queries.push((bi, d.wrapping_add(1) as u32, k))
            }
            (BranchKind::Else, Some(&d)) => queries.push((bi, d as u32, k)),
            _ => b.arms = arms_of(cfg, forest, b),
        }
    }
    queries.sort_unstable_by_key(|q| std::cmp::Reverse(q.0));
    let mut stack: Vec<u32> = Vec::new();
    let mut p = dep.len();
    for (i, t, k) in queries {
        while p > i + 1 {
            p -= 1;
            while stack.last().is_some_and(|&x| dep[x as usize] >= dep[p]) {
                stack.pop();
            }
            stack.push(p as u32);
        }
        // the nearest position past i below t: the topmost below it
        let j = stack.partition_point(|&x| (dep[x as usize] as u32) < t);
        let end = if j == 0 {
            dep.len()
        } else {
            stack[j - 1] as usize
        };
        branches[k].arms = Some((i as u32 + 1, end as u32));
    }
}

/// Instructions a branch guards (see [`Branch::arms_cycles`]).
fn arms_of(cfg: &Cfg, forest: &LoopForest, b: &Branch) -> Option<(u32, u32)> {
    let dep = &cfg.exec_depth;
    let i = b.index as usize;
    let d = *dep.get(i)?;
    // (not past the end of the function: entries reset the depth to 0)
    let end_where = |below: u16| {
        (i + 1..dep.len())
            .find(|&k| dep[k] < below)
            .unwrap_or(dep.len())
    };
    let (s, e) = match b.kind {
        BranchKind::If | BranchKind::Break => (i + 1, end_where(d + 1)),
        BranchKind::Else => (i + 1, end_where(d)),
        BranchKind::Loop => {
            let li = b.loop_index? as usize;
            let start = forest.loops[li].start;
            let bk = cfg.blocks.partition_point(|b| b.start < start);
            let first = cfg.blocks.get(bk).filter(|b| b.start == start)?.insns.start;
            (first, i + 1)
        }
        _ => return None,
    };
    Some((s as u32, e as u32))
}

/// Fills [`Branch::arms_cycles`] and [`Divergence::range`] from a
/// function's timing: the issue cycles and exposed stall of each guarded
/// instruction times its executions.
pub fn fill_arms_cycles(d: &mut Divergence, t: &crate::timing::KernelTiming) {
    fill_arms(d, t);
    d.range = range_of(d, t);
}

/// The divergence-aware range from the uniform-path bounds: for each
/// outermost divergent `if` (one not inside the arms of another), the arm
/// the uniform path dropped is charged back: both arms `A` (then) and `B`
/// (else) run, so the shortest path gains `max(A, B)` (`A` for an if
/// without else) and the longest `min(A, B)` (0 without else). Clamped to
/// `[paths, total_cycles]`. First-order: nested uniform ifs inside a
/// divergent arm are charged in full.
fn range_of(d: &Divergence, t: &crate::timing::KernelTiming) -> DivergenceRange {
    let total = t.total_cycles;
    let (mut short, mut long) = (t.paths.shortest, t.paths.longest);
    let mut covered_to = 0u32;
    for (k, b) in d.branches.iter().enumerate() {
        if b.kind != BranchKind::If || b.uniform {
            continue;
        }
        let Some((s, e)) = b.arms else { continue };
        if s < covered_to {
            continue;
        }
        covered_to = e;
        let whole = b.arms_cycles.unwrap_or(0.0);
        // its else: the next else branch inside its arms
        let els = d.branches[k + 1..]
            .iter()
            .take_while(|x| x.arms.is_none_or(|(xs, _)| xs < e))
            .find(|x| x.kind == BranchKind::Else && x.arms.is_some_and(|(_, xe)| xe == e));
        match els {
            Some(x) => {
                let bb = x.arms_cycles.unwrap_or(0.0);
                let a = (whole - bb).max(0.0);
                short += a.max(bb);
                long += a.min(bb);
            }
            None => short += whole,
        }
    }
    let round = crate::round::r3;
    let long = round(long.min(total).max(t.paths.longest));
    DivergenceRange {
        shortest: round(short.min(long).max(t.paths.shortest)),
        longest: long,
    }
}

/// Whether a loop (its body `arms`, instruction indices) leaves only
/// through `while` tests that compare one induction variable with uniform
/// values, where every write of that variable in the loop adds a uniform
/// register or an immediate of at least the SIMD width to it: a grid- or
/// block-stride loop. Its threads start at nearby values and step together,
/// so their trip counts differ by at most one, in the tail: not a cost to
/// fix. (The start values' spread is not checked: a start spread wider than
/// the step would make the difference larger.)
pub(crate) fn tail_only_exit(insns: &[Instruction], arms: (u32, u32), reason: &Reason) -> bool {
    use agx_isa::{CostKey, ExecOp};
    if !reason.to_string().starts_with("exit test at") {
        return false;
    }
    let body = insns
        .get(arms.0 as usize..(arms.1 as usize).min(insns.len()))
        .unwrap_or(&[]);
    let halves = |r: &agx_isa::Reg| r.half_range().collect::<Vec<_>>();
    let mut tests = 0;
    for w in body.iter().filter(|i| i.exec_op() == Some(ExecOp::While)) {
        tests += 1;
        // the compared values (the exec register, the first operand, aside)
        let first = w.operands.first().and_then(|o| o.as_reg()).copied();
        let compared: Vec<&agx_isa::Reg> = w.uses().filter(|r| Some(**r) != first).collect();
        let gprs: Vec<&&agx_isa::Reg> =
            compared.iter().filter(|r| r.file == RegFile::Gpr).collect();
        let [iv] = gprs.as_slice() else {
            return false;
        };
        let iv = halves(iv);
        let stepped = body
            .iter()
            .filter(|i| {
                i.defs()
                    .any(|r| r.file == RegFile::Gpr && halves(r).iter().any(|h| iv.contains(h)))
            })
            .all(|i| {
                let add = matches!(i.cost_key(), CostKey::Iadd32 | CostKey::Iadd16);
                let srcs: Vec<&agx_isa::Reg> = i.uses().collect();
                let gpr_ok = srcs
                    .iter()
                    .filter(|r| r.file == RegFile::Gpr)
                    .all(|r| halves(r) == iv)
                    && srcs.iter().any(|r| r.file == RegFile::Gpr);
                let step = srcs.iter().any(|r| r.file == RegFile::Uniform)
                    || i.operands
                        .iter()
                        .any(|o| o.kind.imm_value().is_some_and(|v| v.abs() >= 32));
                add && gpr_ok && step
            });
        if !stepped {
            return false;
        }
    }
    tests > 0
}

/// Whether the instructions `arms` (indices, end exclusive) only move
/// values (`mov`, `mov_imm`) besides the exec-mask instructions.
pub(crate) fn only_moves(insns: &[Instruction], arms: (u32, u32)) -> bool {
    insns
        .get(arms.0 as usize..(arms.1 as usize).min(insns.len()))
        .unwrap_or(&[])
        .iter()
        .all(|i| {
            i.exec_op().is_some()
                || i.cost_key() == agx_isa::CostKey::MovImm
                || i.mnemonic() == "mov"
        })
}

fn fill_arms(d: &mut Divergence, t: &crate::timing::KernelTiming) {
    // each instruction's weighted cycles (the model's share of the
    // estimate per instruction when it has them: they sum to
    // `total_cycles`, so no arm exceeds the whole), as running totals
    // (compensated: an arm's sum is a difference of two running totals,
    // each kept as a rounded sum and its error term, so it is as exact as
    // summing the arm itself): nested arms cost one subtraction each
    // instead of a walk over their instructions (the walks were 4.7% of a
    // call-dense 1M profile)
    let n = t.instructions_detail.len();
    let prefix = if !d.branches.iter().any(|b| b.arms.is_some()) {
        Vec::new()
    } else if t.insn_cycles.len() == n {
        compensated_prefix(t.insn_cycles.iter().copied(), n)
    } else {
        let w = |k: usize| {
            let x = &t.instructions_detail[k];
            (x.cycles() + x.stall) * t.executions.get(k).copied().unwrap_or(1.0)
        };
        compensated_prefix((0..n).map(w), n)
    };
    for b in &mut d.branches {
        b.arms_cycles = b.arms.map(|(s, e)| {
            let (s, e) = ((s as usize).min(n), (e as usize).min(n));
            if s >= e {
                return 0.0;
            }
            let (hs, ls) = prefix[s];
            let (he, le) = prefix[e];
            crate::round::r2((he - hs) + (le - ls))
        });
    }
}

/// Running totals of the `n` weights `w` as (rounded sum, error term)
/// pairs, `n + 1` of them (Neumaier's compensated summation).
fn compensated_prefix(w: impl Iterator<Item = f64>, n: usize) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(n + 1);
    let (mut sum, mut err) = (0.0f64, 0.0f64);
    out.push((sum, err));
    for x in w {
        let t = sum + x;
        err += if sum.abs() >= x.abs() {
            (sum - t) + x
        } else {
            (x - t) + sum
        };
        sum = t;
        out.push((sum, err));
    }
    out
}

/// The chain from half `h` read at instruction `i` back to its source:
/// `r3 ← iadd r1 ← get_sr thread_position_in_grid.x`.
fn trace(cx: &Ctx, rec: &Record, i: usize, h: u16) -> String {
    if let Some(u) = &cx.unknown {
        return format!("not analysed: {u}");
    }
    let mut out = half_name_in(&cx.insns[i], h);
    let mut at = i;
    let mut half = h;
    let mut budget = cx.trace_budget.get().min(4096);
    let mut visited: Vec<usize> = Vec::new();
    for _ in 0..8 {
        let before = budget;
        let found = reaching_def(cx, &rec.why, at, half, &mut budget, &visited);
        cx.trace_budget
            .set(cx.trace_budget.get() - (before - budget));
        let Some(j) = found else {
            out.push_str(if budget == 0 {
                " ← … (not traced further)"
            } else {
                " ← (undefined at entry)"
            });
            return out;
        };
        visited.push(j);
        // a three-xor swap: the value is what the other register held before it
        for k in j.saturating_sub(2)..j + 3 {
            if k != j && k < cx.insns.len() && xor_swap_member(cx.insns, k) {
                visited.push(k);
            }
        }
        let m = cx.insns[j].mnemonic();
        // an operand leads one more step back; anything else ends the chain
        let cause = match rec.why[j].as_ref() {
            Some(Why::Operand(h2)) => {
                out.push_str(&format!(" ← {m} {}", half_name_in(&cx.insns[j], *h2)));
                at = j;
                half = *h2;
                continue;
            }
            Some(Why::Sr(n)) => format!("{m} {}", sr_name(*n)),
            Some(Why::Source) => format!("{m} (one value per thread)"),
            Some(Why::LaneIndex) => format!("{m} with a divergent lane index"),
            Some(Why::CrossLane) => format!("{m} (per-lane cross-lane op)"),
            Some(Why::Spill) => format!("{m} (spill slot not known uniform)"),
            Some(Why::Call(known)) => format!(
                "call at 0x{:x} ({})",
                cx.facts.addr[j],
                if *known {
                    "result divergent in the callee"
                } else {
                    "to code not analysed"
                }
            ),
            None => format!(
                "{m} at 0x{:x}, written under a divergent exec mask (set in a divergent branch or loop, read after it)",
                cx.facts.addr[j]
            ),
        };
        out.push_str(" ← ");
        out.push_str(&cause);
        return out;
    }
    out
}

/// An instruction before `i` (in its block, else in a predecessor) that
/// writes half `h`.
/// An instruction before `i` (in its block, else in a predecessor, a
/// path at a time) that writes half `h`: the first whose result is
/// divergent by its data (`why`), else the first found.
fn reaching_def(
    cx: &Ctx,
    why: &[Option<Why>],
    i: usize,
    h: u16,
    budget: &mut usize,
    visited: &[usize],
) -> Option<usize> {
    let cfg = cx.cfg;
    // (a def already on the chain is looked past: a loop-carried value is
    // explained by what enters the loop)
    let defines = |k: usize| {
        !visited.contains(&k)
            && cx.facts.regs(k).iter().any(|r| {
                r.bits & RegRange::DEF != 0
                    && r.bits & RegRange::UNIFORM == 0
                    && r.range().contains(&(h as u32))
            })
            || (cx.cfg.flows[k] != Flow::Next && rec_call(cx, k, h))
    };
    let b0 = cfg.block_of[i] as usize;
    for k in (cfg.blocks[b0].insns.start..i).rev() {
        if *budget == 0 {
            return None;
        }
        *budget -= 1;
        if defines(k) {
            return Some(k);
        }
    }
    let mut first = None;
    // blocks seen by this walk: those stamped with a fresh stamp
    let mut seen = cx.seen.borrow_mut();
    if seen.len() != cfg.blocks.len() {
        *seen = vec![0; cfg.blocks.len()];
    }
    let stamp = cx.seen_stamp.get().wrapping_add(1);
    if stamp == 0 {
        seen.fill(0);
    }
    let stamp = stamp.max(1);
    cx.seen_stamp.set(stamp);
    let mut stack: Vec<usize> = cfg.blocks[b0].preds.iter().map(|e| e.to).collect();
    while let Some(b) = stack.pop() {
        if seen[b] == stamp {
            continue;
        }
        seen[b] = stamp;
        let len = cfg.blocks[b].insns.len();
        if b != b0 && h < 63 && block_defs(cx, b) & (1u64 << h) == 0 {
            // no instruction of the block writes h: the walk passes it,
            // a step per instruction, as the scan below would
            if *budget < len {
                *budget = 0;
                return first;
            }
            *budget -= len;
            stack.extend(cfg.blocks[b].preds.iter().map(|e| e.to));
            continue;
        }
        let mut hit = None;
        for k in cfg.blocks[b].insns.clone().rev() {
            if b == b0 && k < i {
                break;
            }
            if *budget == 0 {
                return first;
            }
            *budget -= 1;
            if defines(k) {
                hit = Some(k);
                break;
            }
        }
        match hit {
            Some(k) if why.get(k).copied().flatten().is_some() => return Some(k),
            Some(k) => {
                first.get_or_insert(k);
            }
            None => stack.extend(cfg.blocks[b].preds.iter().map(|e| e.to)),
        }
    }
    first
}

/// The halves below 63 that block `b`'s instructions may write (what
/// [`reaching_def`] looks for; calls included), computed once per block.
fn block_defs(cx: &Ctx, b: usize) -> u64 {
    const DONE: u64 = 1 << 63;
    let mut v = cx.block_defs.borrow_mut();
    if v.len() != cx.cfg.blocks.len() {
        *v = vec![0; cx.cfg.blocks.len()];
    }
    if v[b] & DONE == 0 {
        let below = |h: u32| if h >= 63 { DONE - 1 } else { (1u64 << h) - 1 };
        let mut m = DONE;
        for k in cx.cfg.blocks[b].insns.clone() {
            for r in cx.facts.regs(k) {
                if r.bits & RegRange::DEF != 0 && r.bits & RegRange::UNIFORM == 0 {
                    let x = r.range();
                    m |= below(x.end) & !below(x.start);
                }
            }
            if let Flow::Call { .. } | Flow::CallIndirect = cx.cfg.flows[k] {
                match cx.callees.get(&cx.facts.addr[k]) {
                    Some(c) => {
                        for h in 0..63u32 {
                            if c.written.contains(h) {
                                m |= 1 << h;
                            }
                        }
                    }
                    None => m |= DONE - 1,
                }
            }
        }
        v[b] = m;
    }
    v[b]
}

fn rec_call(cx: &Ctx, k: usize, h: u16) -> bool {
    match cx.cfg.flows[k] {
        Flow::Call { .. } | Flow::CallIndirect => match cx.callees.get(&cx.facts.addr[k]) {
            Some(c) => c.written.contains(h as u32),
            None => true,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A packed condition register is worded as the register itself.
    #[test]
    fn packed_regs_worded_as_the_register() {
        let mut v = Reg::gpr(Width::W32, 6);
        v.count = 3;
        let regs = [
            Reg::gpr(Width::W16, 1),
            Reg::gpr(Width::W32, 254),
            Reg::gpr(Width::W64, 8),
            Reg::uniform(Width::W32, 36),
            Reg::uniform(Width::W16, 511),
            v,
        ];
        for r in regs {
            assert_eq!(reg_name(&unpack_reg(pack_reg(&r))), reg_name(&r), "{r:?}");
        }
        let two = Reason(Repr::Uniform([pack_reg(&regs[1]), pack_reg(&regs[3])]));
        assert_eq!(two.to_string(), "r127, u18: uniform");
        assert_eq!(
            Reason(Repr::OneTest(0x134)),
            "every exit test is uniform (0x134)"
        );
        assert_eq!(
            serde_json::to_string(&Reason::fixed(Fixed::LevelUniform)).unwrap(),
            "\"the innermost exec level is uniform\""
        );
    }
}
