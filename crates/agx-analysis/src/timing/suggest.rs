//! Suggestions engine: rules that fire on measured facts of the model and
//! the analysis, each naming the instructions involved. No rule fires
//! without evidence.

use super::model::{fmt_cy, KernelTiming};
use crate::Analysis;
use agx_isa::{Instruction, MemDir, MemSpace, RegFile};
use serde::Serialize;
use std::collections::HashSet;

/// How much a suggestion matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    High,
    Medium,
    Low,
}

impl Severity {
    /// 🔴 / 🟡 / 🟢
    pub fn icon(self) -> &'static str {
        match self {
            Severity::High => "🔴",
            Severity::Medium => "🟡",
            Severity::Low => "🟢",
        }
    }
}

/// The figures a suggestion cites, by name (serialized as an object in
/// this order): every number of its message is one of them, at the
/// message's precision (addresses aside).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figures(pub Vec<(&'static str, f64)>);

impl Figures {
    /// The figure called `name` (0 when absent).
    pub fn get(&self, name: &str) -> f64 {
        self.0
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(0.0, |(_, v)| *v)
    }
}

impl Serialize for Figures {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (*k, *v)))
    }
}

/// One suggestion: a rule that fired, the figures it cites and the message
/// worded from them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Suggestion {
    pub severity: Severity,
    /// Address of the instruction the suggestion is about.
    pub offset: u32,
    pub message: String,
    /// Stable rule id (e.g. `"tile-global-loads"`).
    pub rule: &'static str,
    /// The figures the message cites (rounded to 2 decimals, as printed).
    pub figures: Figures,
    /// The fact about the code the rule rests on (issue 27 item 5): without
    /// it the rule stays silent.
    pub fact: String,
    /// Every instruction the finding is about, ascending (`offset` is the
    /// first): one suggestion per rule per region lists its sites.
    pub sites: Vec<u32>,
}

/// Severity thresholds on the share of the kernel's estimate a finding
/// concerns (docs/analysis.md, "Suggestions"): at least
/// [`HIGH_SHARE_PCT`]% is 🔴, at least [`MEDIUM_SHARE_PCT`]% 🟡, less 🟢;
/// under [`MIN_SHARE_PCT`]% the finding is hidden unless `--all-findings`.
pub const HIGH_SHARE_PCT: f64 = 30.0;
/// See [`HIGH_SHARE_PCT`].
pub const MEDIUM_SHARE_PCT: f64 = 10.0;
/// See [`HIGH_SHARE_PCT`].
pub const MIN_SHARE_PCT: f64 = 1.0;

/// The severity of a finding that concerns `share_pct`% of the estimate.
pub fn severity_for_share(share_pct: f64) -> Severity {
    if share_pct >= HIGH_SHARE_PCT {
        Severity::High
    } else if share_pct >= MEDIUM_SHARE_PCT {
        Severity::Medium
    } else {
        Severity::Low
    }
}

/// `part` as a percentage of `total`, within 0..=100 (0 for an empty
/// estimate): a finding never concerns more than the whole kernel.
pub fn share_pct(part: f64, total: f64) -> f64 {
    if total > 0.0 && part > 0.0 {
        (100.0 * part / total).min(100.0)
    } else {
        0.0
    }
}

/// A cited figure is rounded as the record holds cycles: the one rule
/// ([`crate::round::r2`]).
use crate::round::r2;

impl Suggestion {
    /// A suggestion whose `message` is worded by `word` from its
    /// `figures` (each rounded to 2 decimals first), trimmed to size (a
    /// kernel of many loops keeps one message per loop).
    pub(crate) fn new(
        severity: Severity,
        offset: u32,
        rule: &'static str,
        figures: &[(&'static str, f64)],
        word: impl FnOnce(&dyn Fn(&str) -> String) -> String,
    ) -> Suggestion {
        let figures = Figures(figures.iter().map(|&(k, v)| (k, r2(v))).collect());
        let mut message = word(&|name: &str| fmt_cy(figures.get(name)));
        message.shrink_to_fit();
        Suggestion {
            severity,
            offset,
            message,
            rule,
            figures,
            fact: String::new(),
            sites: vec![offset],
        }
    }

    /// Sets [`Suggestion::fact`].
    pub fn with_fact(mut self, fact: impl Into<String>) -> Suggestion {
        self.fact = fact.into();
        self
    }

    /// Sets [`Suggestion::sites`] (sorted, deduplicated; `offset` kept
    /// among them).
    pub fn with_sites(mut self, sites: Vec<u32>) -> Suggestion {
        self.set_sites(sites);
        self
    }

    /// Sets [`Suggestion::sites`] in place, as [`Suggestion::with_sites`].
    pub fn set_sites(&mut self, mut sites: Vec<u32>) {
        sites.push(self.offset);
        sites.sort_unstable();
        sites.dedup();
        self.sites = sites;
    }

    /// The share of the kernel's estimate the finding concerns (its
    /// `share_pct` figure), for rules that have one.
    pub fn share_pct(&self) -> Option<f64> {
        self.figures
            .0
            .iter()
            .find(|(n, _)| *n == "share_pct")
            .map(|(_, v)| *v)
    }

    /// Whether the finding concerns less than [`MIN_SHARE_PCT`]% of the
    /// estimate (hidden unless `--all-findings`).
    pub fn is_minor(&self) -> bool {
        self.share_pct().is_some_and(|s| s < MIN_SHARE_PCT)
    }
}

/// Each loop's part of the estimate (`insn_cycles` of its instructions),
/// nested loops included (a loop's parent comes before it in
/// `timing.loops`): the share a loop's findings concern.
pub(crate) fn loop_cycles(timing: &KernelTiming) -> Vec<f64> {
    let mut c = vec![0.0f64; timing.loops.len()];
    for (k, d) in timing.instructions_detail.iter().enumerate() {
        if let Some(l) = d.loop_index.and_then(|l| c.get_mut(l as usize)) {
            *l += timing.insn_cycles.get(k).copied().unwrap_or(0.0);
        }
    }
    for l in (0..timing.loops.len()).rev() {
        if let Some(p) = timing.loops[l].parent.filter(|&p| p < l) {
            c[p] += c[l];
        }
    }
    c
}

/// Runs the rules that read the timing only ([`crate::advice::run_timing`]),
/// sorted by severity then address. `analysis` (from [`crate::analyze`])
/// provides the register peak and spill counts; without it they are
/// derived from the instructions.
pub fn suggest(
    insns: &[Instruction],
    timing: &KernelTiming,
    analysis: Option<&Analysis>,
) -> Vec<Suggestion> {
    let cx = crate::advice::Context::new(insns, timing, analysis, None, None, 0);
    crate::advice::run_timing(&cx)
}

/// Whether tiling through threadgroup memory is already what the code does
/// (the tiling rule's condition, issue 27 item 5): the kernel stages data
/// through threadgroup memory ([`stages_through_threadgroup`]), or the loop
/// (`body`, nested loops included) is a tile-loading loop (it stores to
/// threadgroup memory). The reuse facts of the address analysis join in
/// `crate::advice` (`tile_global_loads::refine`).
pub fn tiling_already_done(insns: &[Instruction], body: &[&Instruction]) -> bool {
    stages_through_threadgroup(insns) || stores_to_threadgroup(body)
}

fn is_tg(i: &Instruction, dir: MemDir) -> bool {
    i.mem_access()
        .is_some_and(|m| m.space == MemSpace::Threadgroup && m.dir == dir)
}

/// Whether the kernel stages data through threadgroup memory: it stores to
/// threadgroup memory, synchronises the threadgroup at a
/// `threadgroup_barrier` and loads from threadgroup memory (what it stored
/// is read back, by other threads). The one test of this fact: the tiling
/// rule here and its refinement in `crate::advice` (`tile_global_loads::refine`) read it. (A
/// `memory_barrier` orders memory but does not wait for the other threads,
/// and a store never read back stages nothing.) The suggestion pass
/// computes it once per kernel, not once per loop: per loop it was a walk
/// of every instruction, quadratic on a kernel of many loops (the scale
/// bench's 1M-instruction loop nests took minutes).
pub fn stages_through_threadgroup(insns: &[Instruction]) -> bool {
    insns.iter().any(|i| is_tg(i, MemDir::Store))
        && insns.iter().any(|i| i.mnemonic() == "threadgroup_barrier")
        && insns.iter().any(|i| is_tg(i, MemDir::Load))
}

/// The loop half of [`tiling_already_done`]: the loop (`body`, nested loops
/// included) stores to threadgroup memory (a tile-loading loop).
pub(crate) fn stores_to_threadgroup(body: &[&Instruction]) -> bool {
    body.iter().any(|i| is_tg(i, MemDir::Store))
}

/// The instructions of a loop (`body`, in address order, nested loops
/// included) that accumulate into a value carried across iterations through
/// an associative operation: a floating add, multiply or fused multiply-add
/// into its addend, an integer multiply-add into its addend, or an integer
/// add of a value the loop computes, whose destination is one of its
/// sources (the carried value), every write of which in the loop is such an
/// update, and whose other sources do not depend on that value within the
/// iteration. `z = z*z + c` (a recurrence through a multiply by itself) is
/// not one; a sum `s += a[i]*b[i]` is.
/// Each as (its address, the first half of the value it carries).
pub(crate) fn accumulators(body: &[&Instruction]) -> Vec<(u32, u16)> {
    use agx_isa::CostKey as K;
    let gpr_halves = |regs: &mut dyn Iterator<Item = &agx_isa::Reg>| -> Vec<u32> {
        regs.filter(|r| r.file == RegFile::Gpr)
            .flat_map(|r| r.half_range())
            .collect()
    };
    let mut written: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
    for i in body {
        for h in gpr_halves(&mut i.defs()) {
            *written.entry(h).or_default() += 1;
        }
    }
    // the accumulation form: (destination halves, index of the carried
    // source) of an associative update `D = D op x`
    let form = |i: &Instruction| -> Option<(Vec<u32>, usize)> {
        let key = i.cost_key();
        // (position among the sources of the operand that may carry the
        // value: None = any)
        let acc_operand: Option<usize> = match key {
            K::Fadd32 | K::Fadd16 | K::Fmul32 | K::Fmul16 | K::Iadd32 | K::Iadd16 => None,
            K::Fma32 | K::Fma16 | K::Imad32 | K::Imad16 => Some(2),
            _ => return None,
        };
        let defs = gpr_halves(&mut i.defs());
        if defs.is_empty() {
            return None;
        }
        let srcs: Vec<&agx_isa::Reg> = i.uses().collect();
        let acc = srcs
            .iter()
            .position(|r| r.file == RegFile::Gpr && r.half_range().collect::<Vec<_>>() == defs)?;
        if acc_operand.is_some_and(|p| p != acc) {
            return None;
        }
        // an integer add: of a value computed in the loop (not an
        // induction step by a constant or an invariant stride)
        if matches!(key, K::Iadd32 | K::Iadd16)
            && !srcs.iter().enumerate().any(|(p, r)| {
                p != acc
                    && r.file == RegFile::Gpr
                    && r.half_range().any(|h| written.contains_key(&h))
            })
        {
            return None;
        }
        Some((defs, acc))
    };
    let forms: Vec<Option<(Vec<u32>, usize)>> = body.iter().map(|i| form(i)).collect();
    let mut out = Vec::new();
    for (k, i) in body.iter().enumerate() {
        let Some((defs, acc)) = &forms[k] else {
            continue;
        };
        // every write of the carried value in the loop is such an update
        // of it
        let writers = body
            .iter()
            .zip(&forms)
            .filter(|(j, _)| gpr_halves(&mut j.defs()).iter().any(|h| defs.contains(h)));
        if !writers
            .clone()
            .all(|(_, f)| f.as_ref().is_some_and(|f| f.0 == *defs))
        {
            continue;
        }
        // what depends on the carried value before this instruction: a
        // whole pass (values carried from the previous iteration), then the
        // instructions before it; the updates themselves keep it
        let mut tainted: HashSet<u32> = defs.iter().copied().collect();
        for j in body.iter().chain(&body[..k]) {
            let dep = gpr_halves(&mut j.uses())
                .iter()
                .any(|h| tainted.contains(h));
            for h in gpr_halves(&mut j.defs()) {
                if dep || defs.contains(&h) {
                    tainted.insert(h);
                } else {
                    tainted.remove(&h);
                }
            }
        }
        let independent = i.uses().enumerate().all(|(p, r)| {
            p == *acc || r.file != RegFile::Gpr || r.half_range().all(|h| !tainted.contains(&h))
        });
        if independent {
            out.push((i.addr, defs[0] as u16));
        }
    }
    out
}
