//! Register liveness at 16-bit half-register granularity.
//!
//! GPRs: 256 halves (`r0l` = 0, `r0h` = 1, `r127h` = 255), uniforms apart:
//! 512 halves (`timing.md`, "Occupancy and registers"). Def/use sets come
//! from the typed operands (`Instruction::defs`/`uses`, implicit operands
//! included: the exec stack in `r0l`, `call`'s link register).
//!
//! Classic backward dataflow, `in = use ∪ (out − def)`, over the CFG's
//! intra-procedural edges plus call edges: a `call` ends its block, so
//! making the callee's entry a successor of the call block makes the call
//! *use* everything the callee reads (arguments) while the `ret` block has
//! no successor. Values the caller keeps across the call stay live in the
//! caller (the call does not define them); they are not counted inside the
//! callee, so a helper's peak is its own. When the callee is not in the code
//! given, [`liveness_with_calls`] applies its summary at the call instead
//! (built by [`crate::program`]): what it reads are uses, what it writes
//! definitions, so a result it returns is not live into the caller's entry.
//!
//! Writes are treated as full definitions even under a partial exec mask
//! (if/else arms writing the same register are the compiler's SSA merge;
//! treating masked writes as non-killing would keep every such value live
//! back to the entry).
//!
//! Pressure at an instruction = max(|live before|, |live after ∪ defs|):
//! registers that must hold a value while it issues (an ideal allocator can
//! reuse a dying source for a destination, so the two sides are taken
//! apart, not summed).

use crate::cfg::Cfg;
use crate::facts::{Facts, RegRange};
use agx_isa::{Instruction, RegFile};
use serde::Serialize;

/// A fixed-size bit set of `64 * W` half-registers.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Bits<const W: usize>(pub [u64; W]);

/// 256 GPR halves.
pub type GprSet = Bits<4>;
/// 512 uniform halves.
pub type UniformSet = Bits<8>;

impl<const W: usize> Default for Bits<W> {
    fn default() -> Self {
        Bits([0; W])
    }
}

impl<const W: usize> Bits<W> {
    pub const CAPACITY: u32 = 64 * W as u32;

    pub fn new() -> Self {
        Self::default()
    }
    /// Sets halves `range` (clipped to the capacity).
    #[inline]
    pub fn set_range(&mut self, range: std::ops::Range<u32>) {
        let end = range.end.min(Self::CAPACITY);
        let mut i = range.start;
        while i < end {
            let w = (i / 64) as usize;
            let b = i % 64;
            let n = (end - i).min(64 - b);
            let mask = if n == 64 {
                u64::MAX
            } else {
                ((1u64 << n) - 1) << b
            };
            self.0[w] |= mask;
            i += n;
        }
    }
    #[inline]
    pub fn insert(&mut self, i: u32) {
        if i < Self::CAPACITY {
            self.0[(i / 64) as usize] |= 1 << (i % 64);
        }
    }
    #[inline]
    pub fn contains(&self, i: u32) -> bool {
        i < Self::CAPACITY && self.0[(i / 64) as usize] & (1 << (i % 64)) != 0
    }
    #[inline]
    pub fn union_with(&mut self, o: &Self) {
        for k in 0..W {
            self.0[k] |= o.0[k];
        }
    }
    #[inline]
    pub fn difference_with(&mut self, o: &Self) {
        for k in 0..W {
            self.0[k] &= !o.0[k];
        }
    }
    #[inline]
    pub fn union(mut self, o: &Self) -> Self {
        self.union_with(o);
        self
    }
    #[inline]
    pub fn count(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }
    /// Highest set index.
    pub fn highest(&self) -> Option<u32> {
        (0..W)
            .rev()
            .find(|&k| self.0[k] != 0)
            .map(|k| k as u32 * 64 + 63 - self.0[k].leading_zeros())
    }
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (0..Self::CAPACITY).filter(move |&i| self.contains(i))
    }
}

impl<const W: usize> std::fmt::Debug for Bits<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Register names for a set of halves, as applegpu spells them: `rN` when
/// both halves are present, else `rNl` / `rNh` (prefix `u` for uniforms).
pub fn half_names<const W: usize>(set: &Bits<W>, prefix: char) -> Vec<String> {
    let mut out = Vec::new();
    let mut r = 0u32;
    while r * 2 < Bits::<W>::CAPACITY {
        let l = set.contains(2 * r);
        let h = set.contains(2 * r + 1);
        match (l, h) {
            (true, true) => out.push(format!("{prefix}{r}")),
            (true, false) => out.push(format!("{prefix}{r}l")),
            (false, true) => out.push(format!("{prefix}{r}h")),
            _ => {}
        }
        r += 1;
    }
    out
}

/// Def and use sets of one instruction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DefUse {
    pub def: GprSet,
    pub used: GprSet,
    pub udef: UniformSet,
    pub uused: UniformSet,
}

/// Def/use of `insn` (all register operands, printed and implicit).
#[inline]
pub fn def_use(insn: &Instruction) -> DefUse {
    let mut d = DefUse::default();
    for o in insn.all_operands() {
        let Some(r) = o.as_reg() else { continue };
        let range = r.half_range();
        match r.file {
            RegFile::Gpr => {
                if o.role.is_def() {
                    d.def.set_range(range.clone());
                }
                if o.role.is_use() {
                    d.used.set_range(range);
                }
            }
            RegFile::Uniform => {
                if o.role.is_def() {
                    d.udef.set_range(range.clone());
                }
                if o.role.is_use() {
                    d.uused.set_range(range);
                }
            }
        }
    }
    d
}

/// Liveness result.
#[derive(Clone, Debug, Default)]
///
///
/// Per block only the GPR live-in sets are kept: a block's live-out is the
/// union of its successors' live-in ([`Liveness::live_out`]), and uniform
/// sets (64 bytes each) are kept at function entries only, where callers'
/// summaries read them: 160 bytes a block fewer, ~70 MB at a
/// 1M-instruction kernel of small blocks (~450k blocks).
pub struct Liveness {
    pub live_in: Vec<GprSet>,
    /// Uniform live-in at each function's entry block, in
    /// [`Cfg::functions`] order.
    pub uniform_entry_live_in: Vec<UniformSet>,
    /// GPR pressure (live halves) at each instruction, see module docs.
    pub live_count: Vec<u16>,
    /// Peak GPR pressure and the first instruction where it occurs.
    pub peak: u32,
    pub peak_index: Option<usize>,
    pub peak_set: GprSet,
    /// Peak number of live uniform halves.
    pub uniform_peak: u32,
    /// Dataflow iterations (blocks processed), for diagnostics.
    pub iterations: usize,
}

/// Peak summary for reports.
#[derive(Clone, Debug, Serialize)]
pub struct PeakInfo {
    pub live_half: u32,
    pub offset: Option<u32>,
    pub registers: Vec<String>,
}

impl Liveness {
    /// GPR live-out of block `b` of `cfg` (the CFG this was solved over):
    /// the union of its successors' live-in.
    pub fn live_out(&self, cfg: &Cfg, b: usize) -> GprSet {
        let mut out = GprSet::new();
        for e in &cfg.blocks[b].succs {
            out.union_with(&self.live_in[e.to]);
        }
        out
    }
    pub fn peak_info(&self, addrs: &[u32]) -> PeakInfo {
        PeakInfo {
            live_half: self.peak,
            offset: self.peak_index.map(|i| addrs[i]),
            registers: half_names(&self.peak_set, 'r'),
        }
    }
}

/// Def and use sets of one instruction, `G` words of GPR halves and `U`
/// of uniform halves (the solver runs as narrow as the code allows).
#[derive(Clone, Copy, Default)]
struct Du<const G: usize, const U: usize> {
    def: Bits<G>,
    used: Bits<G>,
    udef: Bits<U>,
    uused: Bits<U>,
}

/// `x` in `B` words (words past `A` zero; words past `B` dropped: callers
/// only narrow sets that fit).
#[inline]
fn resize<const A: usize, const B: usize>(x: &Bits<A>) -> Bits<B> {
    let mut o = Bits::<B>::new();
    let k = A.min(B);
    o.0[..k].copy_from_slice(&x.0[..k]);
    o
}

/// Def/use of instruction `i` from the compact facts.
#[inline]
fn def_use_facts<const G: usize, const U: usize>(facts: &Facts, i: usize) -> Du<G, U> {
    let mut d = Du::<G, U>::default();
    for r in facts.regs(i) {
        let range = r.range();
        if r.bits & RegRange::UNIFORM != 0 {
            if r.bits & RegRange::DEF != 0 {
                d.udef.set_range(range.clone());
            }
            if r.bits & RegRange::USE != 0 {
                d.uused.set_range(range);
            }
        } else {
            if r.bits & RegRange::DEF != 0 {
                d.def.set_range(range.clone());
            }
            if r.bits & RegRange::USE != 0 {
                d.used.set_range(range);
            }
        }
    }
    d
}

/// Solves liveness over `cfg`.
pub fn liveness(cfg: &Cfg, insns: &[Instruction]) -> Liveness {
    liveness_from_facts(cfg, &crate::facts::scan(insns))
}

/// Solves liveness over `cfg` from the facts of one [`crate::facts::scan`].
pub fn liveness_from_facts(cfg: &Cfg, facts: &Facts) -> Liveness {
    liveness_with_calls(cfg, facts, &CallEffects::new())
}

/// What a called function does to the caller's registers, from its summary
/// (see [`crate::program`]): `used` = registers it reads before writing
/// them (arguments), `def` = registers it writes (results and clobbers).
pub type CallEffects = std::collections::HashMap<usize, DefUse>;

/// Call effects by instruction index, sorted, narrowed to the solver's
/// widths.
type Effects<const G: usize, const U: usize> = Vec<(usize, Du<G, U>)>;

/// Def/use of instruction `i`, with the effect of the function it calls
/// when `i` is a `call` with a known callee summary: the callee's reads are
/// uses at the call, its writes definitions. The call's own definitions
/// (the link register, `r1`) happen first, so the callee's read of them
/// (`ret r1`) is not a use of the caller's value.
#[inline]
fn def_use_at<const G: usize, const U: usize>(
    facts: &Facts,
    effects: &Effects<G, U>,
    i: usize,
) -> Du<G, U> {
    let mut d = def_use_facts::<G, U>(facts, i);
    if effects.is_empty() {
        return d;
    }
    if let Ok(k) = effects.binary_search_by_key(&i, |e| e.0) {
        let e = &effects[k].1;
        let mut used = e.used;
        used.difference_with(&d.def);
        d.used.union_with(&used);
        d.def.union_with(&e.def);
        let mut uused = e.uused;
        uused.difference_with(&d.udef);
        d.uused.union_with(&uused);
        d.udef.union_with(&e.udef);
    }
    d
}

/// Live-out of block `b`: the union of its successors' live-in sets.
#[inline]
fn live_out_of<const G: usize, const U: usize>(
    cfg: &Cfg,
    b: usize,
    live_in: &[Bits<G>],
    ulive_in: &[Bits<U>],
) -> (Bits<G>, Bits<U>) {
    let mut out = Bits::<G>::new();
    let mut uout = Bits::<U>::new();
    for e in &cfg.blocks[b].succs {
        out.union_with(&live_in[e.to]);
        uout.union_with(&ulive_in[e.to]);
    }
    (out, uout)
}

/// Solves liveness over `cfg`, applying callee summaries at the `call`
/// instructions in `effects` (keyed by instruction index).
///
/// The sets are as wide as the halves the code (and its callees' effects)
/// touch: one 64-bit word of GPR and one of uniform halves for most code,
/// where the full sets (4 and 8 words) were 288 bytes a block while solving
/// (~130 MB at a 1M-instruction kernel of small blocks); the result is the
/// same set for set.
pub fn liveness_with_calls(cfg: &Cfg, facts: &Facts, effects: &CallEffects) -> Liveness {
    // the highest half + 1 touched, of each file
    let (mut g, mut u) = (0u32, 0u32);
    for r in &facts.ranges {
        let e = r.range().end;
        if r.bits & RegRange::UNIFORM != 0 {
            u = u.max(e);
        } else {
            g = g.max(e);
        }
    }
    for e in effects.values() {
        g = g.max(e.def.union(&e.used).highest().map_or(0, |h| h + 1));
        u = u.max(e.udef.union(&e.uused).highest().map_or(0, |h| h + 1));
    }
    match (g.div_ceil(64), u.div_ceil(64)) {
        (0..=1, 0..=1) => solve::<1, 1>(cfg, facts, effects),
        (0..=1, 2) => solve::<1, 2>(cfg, facts, effects),
        (0..=1, _) => solve::<1, 8>(cfg, facts, effects),
        (2, 0..=1) => solve::<2, 1>(cfg, facts, effects),
        (2, 2) => solve::<2, 2>(cfg, facts, effects),
        (2, _) => solve::<2, 8>(cfg, facts, effects),
        (_, 0..=1) => solve::<4, 1>(cfg, facts, effects),
        (_, 2) => solve::<4, 2>(cfg, facts, effects),
        (_, _) => solve::<4, 8>(cfg, facts, effects),
    }
}

/// [`liveness_with_calls`] with sets of `G` GPR words and `U` uniform
/// words (every half touched fits).
fn solve<const G: usize, const U: usize>(
    cfg: &Cfg,
    facts: &Facts,
    effects: &CallEffects,
) -> Liveness {
    let nb = cfg.blocks.len();
    if nb == 0 {
        return Liveness::default();
    }
    let mut eff: Effects<G, U> = effects
        .iter()
        .map(|(&i, e)| {
            (
                i,
                Du {
                    def: resize(&e.def),
                    used: resize(&e.used),
                    udef: resize(&e.udef),
                    uused: resize(&e.uused),
                },
            )
        })
        .collect();
    eff.sort_unstable_by_key(|e| e.0);
    let effects = &eff;
    // Per-block gen (upward-exposed uses) and kill (defs).
    let mut gen = vec![Bits::<G>::new(); nb];
    let mut kill = vec![Bits::<G>::new(); nb];
    let mut ugen = vec![Bits::<U>::new(); nb];
    let mut ukill = vec![Bits::<U>::new(); nb];
    for (b, blk) in cfg.blocks.iter().enumerate() {
        let (mut g, mut k) = (Bits::<G>::new(), Bits::<G>::new());
        let (mut ug, mut uk) = (Bits::<U>::new(), Bits::<U>::new());
        for i in blk.insns.clone().rev() {
            let du = def_use_at(facts, effects, i);
            g.difference_with(&du.def);
            g.union_with(&du.used);
            k.union_with(&du.def);
            ug.difference_with(&du.udef);
            ug.union_with(&du.uused);
            uk.union_with(&du.udef);
        }
        gen[b] = g;
        kill[b] = k;
        ugen[b] = ug;
        ukill[b] = uk;
    }

    // Processing order: postorder over all successor edges (good for a
    // backward problem), unreachable blocks appended.
    let order = postorder_all(cfg);
    // Only the live-in sets are kept while solving; the live-out sets are
    // the union of the successors' live-in at the fixed point (a block is
    // queued again whenever a successor's live-in changes), built once the
    // gen/kill sets are freed: two vectors of sets fewer at a big kernel's
    // peak (~16 B per instruction with a block per 6 instructions).
    let mut live_in = gen.clone();
    let mut ulive_in = ugen.clone();
    // Worklist: a queue seeded in postorder.
    let mut queued = vec![true; nb];
    let mut queue: std::collections::VecDeque<usize> = order.iter().copied().collect();
    drop(order);
    let mut iterations = 0;
    while let Some(b) = queue.pop_front() {
        queued[b] = false;
        iterations += 1;
        let (mut inn, mut uin) = live_out_of(cfg, b, &live_in, &ulive_in);
        inn.difference_with(&kill[b]);
        inn.union_with(&gen[b]);
        uin.difference_with(&ukill[b]);
        uin.union_with(&ugen[b]);
        if inn != live_in[b] || uin != ulive_in[b] {
            live_in[b] = inn;
            ulive_in[b] = uin;
            for p in &cfg.blocks[b].preds {
                if !queued[p.to] {
                    queued[p.to] = true;
                    queue.push_back(p.to);
                }
            }
        }
    }

    drop((gen, kill, ugen, ukill, queue, queued));

    // Per-instruction pressure.
    let mut live_count = vec![0u16; facts.len()];
    let mut peak = 0u32;
    let mut peak_index = None;
    let mut peak_set = Bits::<G>::new();
    let mut uniform_peak = 0u32;
    for (b, blk) in cfg.blocks.iter().enumerate() {
        let (mut live, mut ulive) = live_out_of(cfg, b, &live_in, &ulive_in);
        for i in blk.insns.clone().rev() {
            let du = def_use_at(facts, effects, i);
            let after = live.union(&du.def);
            live.difference_with(&du.def);
            live.union_with(&du.used);
            let (ca, cb) = (after.count(), live.count());
            let (c, set) = if ca >= cb { (ca, after) } else { (cb, live) };
            live_count[i] = c as u16;
            // Ties: keep the lowest address.
            if c > peak || (c == peak && c > 0 && peak_index.is_some_and(|p| i < p)) {
                peak = c;
                peak_index = Some(i);
                peak_set = set;
            }
            let uafter = ulive.union(&du.udef);
            ulive.difference_with(&du.udef);
            ulive.union_with(&du.uused);
            uniform_peak = uniform_peak.max(uafter.count()).max(ulive.count());
        }
    }

    let uniform_entry_live_in = cfg
        .functions
        .iter()
        .map(|f| resize(&ulive_in[f.entry_block]))
        .collect();
    drop(ulive_in);
    Liveness {
        live_in: live_in.iter().map(resize).collect(),
        uniform_entry_live_in,
        live_count,
        peak,
        peak_index,
        peak_set: resize(&peak_set),
        uniform_peak,
        iterations,
    }
}

/// Postorder over all successor edges from the function entries, then any
/// block not reached.
fn postorder_all(cfg: &Cfg) -> Vec<usize> {
    let nb = cfg.blocks.len();
    let mut seen = vec![false; nb];
    let mut out = Vec::with_capacity(nb);
    let mut stack: Vec<(usize, usize)> = Vec::new();
    let roots = cfg
        .functions
        .iter()
        .map(|f| f.entry_block)
        .chain(0..nb)
        .collect::<Vec<_>>();
    for r in roots {
        if seen[r] {
            continue;
        }
        seen[r] = true;
        stack.push((r, 0));
        while let Some(&mut (b, ref mut k)) = stack.last_mut() {
            let succs = &cfg.blocks[b].succs;
            if *k < succs.len() {
                let t = succs[*k].to;
                *k += 1;
                if !seen[t] {
                    seen[t] = true;
                    stack.push((t, 0));
                }
            } else {
                out.push(b);
                stack.pop();
            }
        }
    }
    out
}
