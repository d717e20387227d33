//! The facts several rules read, computed once per function
//! ([`Facts::new`]): the instructions' details by address, each loop's own
//! instructions and details, each loop's part of the estimate, the stack
//! accesses by kind.

use crate::stack_kind::StackKind;
use crate::timing::model::{InsnDetail, KernelTiming, LoopTiming};
use crate::timing::suggest::{loop_cycles, share_pct, stages_through_threadgroup};
use crate::Analysis;
use agx_isa::{Instruction, RegFile};
use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;

/// Indices bucketed by a key (each index under at most one), ascending
/// within each bucket.
pub struct Buckets {
    start: Vec<u32>,
    flat: Vec<u32>,
}

impl Buckets {
    /// `0..n` bucketed by `key`.
    fn of(n: usize, key: impl Fn(usize) -> Option<usize>) -> Buckets {
        let mut start: Vec<u32> = Vec::new();
        for j in 0..n {
            if let Some(k) = key(j) {
                if start.len() < k + 2 {
                    start.resize(k + 2, 0);
                }
                start[k + 1] += 1;
            }
        }
        for k in 1..start.len() {
            start[k] += start[k - 1];
        }
        let mut flat = vec![0u32; start.last().copied().unwrap_or(0) as usize];
        let mut next = start.clone();
        for j in 0..n {
            if let Some(k) = key(j) {
                flat[next[k] as usize] = j as u32;
                next[k] += 1;
            }
        }
        Buckets { start, flat }
    }

    /// The indices under `k`.
    pub fn get(&self, k: usize) -> &[u32] {
        match (self.start.get(k), self.start.get(k + 1)) {
            (Some(&a), Some(&b)) => &self.flat[a as usize..b as usize],
            _ => &[],
        }
    }
}

/// The part of an ascending index list within `range`.
pub fn within<'a>(ix: &'a [u32], range: &Range<usize>) -> &'a [u32] {
    &ix[within_span(ix, range)]
}

/// Where [`within`]'s part lies in `ix`.
fn within_span(ix: &[u32], range: &Range<usize>) -> Range<usize> {
    let a = ix.partition_point(|&j| (j as usize) < range.start);
    let b = ix.partition_point(|&j| (j as usize) < range.end);
    a..b.max(a)
}

/// The innermost loop of the instruction at `addr`, by the loop forest's
/// membership (none for an address that is no instruction).
pub fn innermost_loop(t: &KernelTiming, addr: u32) -> Option<&LoopTiming> {
    let i = t.instructions_detail.partition_point(|d| d.addr < addr);
    match t.instructions_detail.get(i) {
        Some(d) if d.addr == addr => d.loop_index.and_then(|l| t.loops.get(l as usize)),
        _ => None,
    }
}

/// One loop as its rules see it: the index range between its lowest and
/// highest block, its own instructions (the loop forest's membership).
pub struct LoopView<'a> {
    pub range: Range<usize>,
    pub own_idx: &'a [u32],
    pub own: Own<'a>,
}

/// A loop's own instructions (its `own_idx`), read in place: a view is
/// asked for by every per-loop rule, and a list of them built per ask was
/// a tenth of the advice pass on deep loop nests.
#[derive(Clone, Copy)]
pub struct Own<'a> {
    idx: &'a [u32],
    insns: &'a [Instruction],
}

impl<'a> Own<'a> {
    /// The instructions in address order.
    pub fn iter(&self) -> OwnIter<'a> {
        OwnIter {
            idx: self.idx.iter(),
            insns: self.insns,
        }
    }
}

/// The iterator of [`Own`].
#[derive(Clone)]
pub struct OwnIter<'a> {
    idx: std::slice::Iter<'a, u32>,
    insns: &'a [Instruction],
}

impl<'a> Iterator for OwnIter<'a> {
    type Item = &'a Instruction;
    fn next(&mut self) -> Option<&'a Instruction> {
        self.idx.next().map(|&j| &self.insns[j as usize])
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.idx.size_hint()
    }
}

impl ExactSizeIterator for OwnIter<'_> {}

impl<'a> IntoIterator for &Own<'a> {
    type Item = &'a Instruction;
    type IntoIter = OwnIter<'a>;
    fn into_iter(self) -> OwnIter<'a> {
        self.iter()
    }
}

/// The shared facts of one function.
pub struct Facts<'a> {
    insns: &'a [Instruction],
    timing: &'a KernelTiming,
    /// `insns[i].addr` (searched instead of the 500-byte instructions: no
    /// cache miss per probe)
    pub addrs: Vec<u32>,
    /// `timing.instructions_detail[k].addr`
    pub detail_addrs: Vec<u32>,
    /// details in strictly increasing address order: binary search;
    /// otherwise the address map (the last entry for an address wins)
    details_sorted: bool,
    detail_at: Option<HashMap<u32, usize>>,
    /// each detail is its instruction's: the cost-table key is read from
    /// the detail's row
    aligned: bool,
    /// each loop's own details
    pub own_of: Buckets,
    /// each loop's own instructions (None: the same as `own_of`)
    own_insn_of: Option<Buckets>,
    /// each loop's part of the estimate, nested loops included
    pub loop_cycles: Vec<f64>,
    /// the stack accesses by kind (crate::stack_kind)
    pub stack_sites: Cow<'a, [(u32, StackKind)]>,
    /// the kernel stages data through threadgroup memory
    pub stages: bool,
    /// each loop's view spans ([`Facts::view`]), found on first ask: every
    /// per-loop rule asks for every loop's, and each ask was four binary
    /// searches over a million addresses on a deep loop nest
    views: std::sync::OnceLock<Vec<ViewSpan>>,
}

/// Where a loop's view lies: its instruction range, and its own
/// instructions' part of its bucket.
#[derive(Clone, Debug)]
struct ViewSpan {
    range: Range<usize>,
    own: Range<usize>,
}

impl<'a> Facts<'a> {
    pub fn new(
        insns: &'a [Instruction],
        timing: &'a KernelTiming,
        analysis: Option<&'a Analysis>,
    ) -> Facts<'a> {
        let details = &timing.instructions_detail;
        let details_sorted = details.windows(2).all(|w| w[0].addr < w[1].addr);
        let detail_at = (!details_sorted).then(|| {
            details
                .iter()
                .enumerate()
                .map(|(i, d)| (d.addr, i))
                .collect()
        });
        let addrs: Vec<u32> = insns.iter().map(|i| i.addr).collect();
        let detail_addrs: Vec<u32> = details.iter().map(|d| d.addr).collect();
        let aligned =
            details.len() == insns.len() && details.iter().zip(&addrs).all(|(d, &a)| d.addr == a);
        let own_of = Buckets::of(details.len(), |k| details[k].loop_index.map(|l| l as usize));
        let stack_sites = match analysis {
            Some(a)
                if a.stack_sites
                    .iter()
                    .all(|&(k, _)| (k as usize) < insns.len()) =>
            {
                Cow::Borrowed(a.stack_sites.as_slice())
            }
            _ => Cow::Owned(crate::stack_kind::classify(insns)),
        };
        let mut f = Facts {
            insns,
            timing,
            addrs,
            detail_addrs,
            details_sorted,
            detail_at,
            aligned,
            own_of,
            own_insn_of: None,
            loop_cycles: loop_cycles(timing),
            stack_sites,
            stages: stages_through_threadgroup(insns),
            views: std::sync::OnceLock::new(),
        };
        // one list serves both when every instruction's innermost loop is
        // its detail's
        let own_key = |j: usize| f.innermost_at(j, f.addrs[j]).map(|l| l.index);
        let same = aligned
            && (0..insns.len()).all(|j| own_key(j) == details[j].loop_index.map(|l| l as usize));
        let own_insn_of = (!same).then(|| Buckets::of(insns.len(), own_key));
        f.own_insn_of = own_insn_of;
        f
    }

    /// The detail index of the instruction at `addr`.
    pub fn detail_index(&self, addr: u32) -> Option<usize> {
        match &self.detail_at {
            // (searched in the compact address column, `details`' addresses)
            None => self.detail_addrs.binary_search(&addr).ok(),
            Some(m) => m.get(&addr).copied(),
        }
    }

    /// The detail of the instruction at `addr`.
    pub fn detail(&self, addr: u32) -> Option<&'a InsnDetail> {
        self.detail_index(addr)
            .map(|i| &self.timing.instructions_detail[i])
    }

    /// The model's cycles of the instruction at `addr` (`dflt` without one).
    pub fn cycles_at(&self, addr: u32, dflt: f64) -> f64 {
        self.detail(addr).map(|d| d.cycles()).unwrap_or(dflt)
    }

    /// Whether the load at `addr` has a uniform address (the record's
    /// `uniform_address`, from the divergence analysis).
    pub fn uniform_at(&self, addr: u32) -> bool {
        self.detail(addr).is_some_and(|d| d.uniform_address)
    }

    /// The instruction's part of the estimate (`insn_cycles`: they sum to
    /// `total_cycles`).
    pub fn cy_at(&self, addr: u32) -> f64 {
        self.detail_index(addr)
            .and_then(|i| self.timing.insn_cycles.get(i))
            .copied()
            .unwrap_or(0.0)
    }

    /// The sites' part of the estimate, in percent.
    pub fn share_of(&self, sites: &[u32]) -> f64 {
        share_pct(
            sites.iter().map(|&a| self.cy_at(a)).sum(),
            self.timing.total_cycles,
        )
    }

    /// Instructions `r`'s part of the estimate, in percent: [`Facts::share_of`]
    /// of their addresses, summed in place when the details follow the
    /// instructions (a range of a million instructions was a million
    /// searches).
    pub fn share_of_range(&self, r: std::ops::RangeInclusive<usize>) -> f64 {
        if !self.aligned {
            let sites: Vec<u32> = self.addrs[r].to_vec();
            return self.share_of(&sites);
        }
        let cy = &self.timing.insn_cycles;
        share_pct(
            r.map(|j| cy.get(j).copied().unwrap_or(0.0)).sum(),
            self.timing.total_cycles,
        )
    }

    /// A loop's part of the estimate (nested loops included), in percent.
    pub fn loop_share(&self, l: &LoopTiming) -> f64 {
        share_pct(
            self.loop_cycles.get(l.index).copied().unwrap_or(0.0),
            self.timing.total_cycles,
        )
    }

    /// The cost-table key of `insns[j]`.
    pub fn key_of(&self, j: usize) -> agx_isa::CostKey {
        if self.aligned {
            self.timing.instructions_detail[j].entry.key
        } else {
            self.insns[j].cost_key()
        }
    }

    /// `innermost_loop(timing, insns[j].addr)`, without the search when the
    /// detail at j is that instruction's.
    pub fn innermost_at(&self, j: usize, addr: u32) -> Option<&'a LoopTiming> {
        let timing = self.timing;
        if self.details_sorted {
            if let Some(d) = timing.instructions_detail.get(j).filter(|d| d.addr == addr) {
                return d.loop_index.and_then(|l| timing.loops.get(l as usize));
            }
        }
        innermost_loop(timing, addr)
    }

    /// The loop's range and own instructions.
    pub fn view(&self, l: &LoopTiming) -> LoopView<'_> {
        let own_insn_of = self.own_insn_of.as_ref().unwrap_or(&self.own_of);
        let span = match self.timing.loops.get(l.index) {
            // one of the kernel's loops: its span, found once
            Some(k) if std::ptr::eq(k, l) => self
                .views
                .get_or_init(|| self.timing.loops.iter().map(|k| self.span_of(k)).collect())
                [l.index]
                .clone(),
            _ => self.span_of(l),
        };
        let range = span.range;
        let own_idx = &own_insn_of.get(l.index)[span.own];
        LoopView {
            range,
            own_idx,
            own: Own {
                idx: own_idx,
                insns: self.insns,
            },
        }
    }

    /// Where loop `l`'s view lies (see [`Facts::view`]).
    fn span_of(&self, l: &LoopTiming) -> ViewSpan {
        let s = self.addrs.partition_point(|&a| a < l.first);
        let e = self.addrs.partition_point(|&a| a <= l.last);
        let range = s..e.max(s);
        let own_insn_of = self.own_insn_of.as_ref().unwrap_or(&self.own_of);
        let own = within_span(own_insn_of.get(l.index), &range);
        ViewSpan { range, own }
    }

    /// The loop's instructions, nested loops included.
    pub fn body(&self, l: &LoopTiming, range: &Range<usize>) -> Vec<&'a Instruction> {
        let base = range.start;
        let mut body: Vec<&Instruction> = Vec::new();
        for (k, i) in self.insns[range.clone()].iter().enumerate() {
            let mut cur = self.innermost_at(base + k, i.addr);
            while let Some(x) = cur {
                if x.index == l.index {
                    body.push(i);
                    break;
                }
                cur = x.parent.and_then(|p| self.timing.loops.get(p));
            }
        }
        body
    }

    /// The loop's own details (a nested loop's are in its own record).
    pub fn own_details(&self, l: &LoopTiming) -> impl Iterator<Item = &'a InsnDetail> + Clone + '_ {
        let a = self.detail_addrs.partition_point(|&x| x < l.first);
        let b = self.detail_addrs.partition_point(|&x| x <= l.last);
        let details = &self.timing.instructions_detail;
        within(self.own_of.get(l.index), &(a..b.max(a)))
            .iter()
            .map(move |&k| &details[k as usize])
    }

    /// The addresses of the stack accesses of these kinds.
    pub fn stack_of(&self, kinds: &[StackKind]) -> Vec<u32> {
        self.stack_sites
            .iter()
            .filter(|(_, k)| kinds.contains(k))
            .map(|&(j, _)| self.insns[j as usize].addr)
            .collect()
    }
}

/// Highest GPR half index touched and the first instruction touching it.
pub fn highest_gpr(insns: &[Instruction]) -> Option<(u32, u32)> {
    let mut best: Option<(u32, u32)> = None;
    for i in insns {
        for r in i.defs().chain(i.uses()) {
            if r.file == RegFile::Gpr {
                let hi = r.half_range().end.saturating_sub(1);
                if best.map(|b| hi > b.0).unwrap_or(true) {
                    best = Some((hi, i.addr));
                }
            }
        }
    }
    best
}
