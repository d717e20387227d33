//! Advice as a registry of rules (issue 36 item 2): one file per rule, each
//! a [`Rule`] stating the facts it needs ([`Need`]) and the suggestions it
//! draws from them. [`run`] evaluates the registry in order over one
//! function's [`Context`]; the rule ids (`suggestions[].rule`, the list of
//! `--explain-model`) are the registry's ([`rule_ids`]). How to add a rule:
//! docs/design.md.

mod facts;

mod break_dependency_chain;
mod coalesce_strided_loads;
mod consider_fp16;
mod divergent_branch;
mod divergent_loop_exit;
mod division_rcp_fmul;
mod hoist_invariant_loads;
mod hoist_invariant_transcendental;
mod independent_work_before_wait;
mod int64_emulation_in_loop;
mod memory;
mod pad_threadgroup_array;
mod private_array;
mod privatise_atomics;
mod reduction_in_loop;
mod register_blocking;
mod register_pressure;
mod spills;
mod subgroup_reduction;
mod tile_global_loads;
mod uniform_address_loads;
mod vectorise_loads;

pub use facts::Facts;

use crate::address::Addresses;
use crate::divergence::Divergence;
use crate::timing::model::{KernelTiming, LoopTiming};
use crate::timing::Suggestion;
use crate::Analysis;
use agx_isa::Instruction;

/// The facts a rule reads; a rule whose facts are absent is not run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// The timing model's record (always present).
    Timing,
    /// The address analysis's access facts (at least one access).
    Access,
    /// The divergence analysis of the function (branches resolved).
    Divergence,
}

/// One function's facts, as the rules read them.
pub struct Context<'a> {
    pub insns: &'a [Instruction],
    pub timing: &'a KernelTiming,
    /// register and stack facts (None: derived from the instructions)
    pub analysis: Option<&'a Analysis>,
    /// address-analysis facts of this function (None: not analysed)
    pub access: Option<&'a Addresses>,
    /// the divergence analysis (None: not analysed)
    pub divergence: Option<&'a Divergence>,
    /// the cache line of the memory model, bytes
    pub line_bytes: u32,
    /// shared, precomputed facts (loop ranges, buckets, shares)
    pub facts: Facts<'a>,
}

impl<'a> Context<'a> {
    pub fn new(
        insns: &'a [Instruction],
        timing: &'a KernelTiming,
        analysis: Option<&'a Analysis>,
        access: Option<&'a Addresses>,
        divergence: Option<&'a Divergence>,
        line_bytes: u32,
    ) -> Context<'a> {
        Context {
            insns,
            timing,
            analysis,
            access,
            divergence,
            line_bytes,
            facts: Facts::new(insns, timing, analysis),
        }
    }

    /// Whether the fact is there.
    pub fn has(&self, need: Need) -> bool {
        match need {
            Need::Timing => true,
            Need::Access => self.access.is_some_and(|a| !a.accesses.is_empty()),
            Need::Divergence => self.divergence.is_some_and(|d| d.unknown.is_none()),
        }
    }

    /// `rule(l)` for every loop, on all cores, appended in loop order.
    pub fn per_loop(
        &self,
        out: &mut Vec<Suggestion>,
        rule: &(dyn Fn(&LoopTiming) -> Option<Suggestion> + Sync),
    ) {
        crate::par::map_ordered(
            self.timing.loops.len(),
            &|i| rule(&self.timing.loops[i]),
            |_, s| out.extend(s),
        );
    }
}

/// The facts a rule reads from the code table alone, for a family without
/// a timing model (Apple9): the branch verdicts (`crate::uniformity`) and
/// each loop's share of the issue slots (not cycles).
pub struct TableContext<'a> {
    pub table: &'a agx_isa::table::CodeTable,
    pub branches: &'a [crate::uniformity::TableBranch],
    pub loops: &'a [TableLoop],
    /// Issues per thread of each row (the default trip count per enclosing
    /// loop, assumed), and their sum over the rows.
    pub executions: &'a [u64],
    pub total_slots: u64,
}

/// One loop as [`TableContext`] gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct TableLoop {
    pub header: u32,
    /// Address of its last instruction (its back branch).
    pub end: u32,
    /// Its instructions' share of the kernel's issue slots, nested loops
    /// included, percent (each loop run its proved trip count, else the
    /// default, assumed).
    pub share_pct: f64,
}

/// An advice rule.
pub trait Rule: Sync {
    fn id(&self) -> &'static str;
    /// One sentence: what the rule checks and what it advises (the help
    /// text of --explain-model and SARIF).
    fn help(&self) -> &'static str;
    /// The facts it needs: a rule whose facts are absent is not run.
    fn needs(&self) -> &'static [Need];
    fn evaluate(&self, cx: &Context<'_>, out: &mut Vec<Suggestion>);
    /// The rule over the code table's facts alone (families without a
    /// timing model); by default it needs more than the table gives and is
    /// silent.
    fn evaluate_table(&self, _cx: &TableContext<'_>, _out: &mut Vec<Suggestion>) {}
}

/// Every rule, in evaluation order. The rules needing only the timing come
/// first (their suggestions sorted by severity, then address), then the
/// divergence rules, then the access rules.
pub fn registry() -> &'static [&'static dyn Rule] {
    &[
        &spills::Spills,
        &private_array::PrivateArray,
        &register_pressure::RegisterPressure,
        &tile_global_loads::TileGlobalLoads,
        &register_blocking::RegisterBlocking,
        &break_dependency_chain::BreakDependencyChain,
        &hoist_invariant_transcendental::HoistInvariantTranscendental,
        &int64_emulation_in_loop::Int64EmulationInLoop,
        &reduction_in_loop::ReductionInLoop,
        &subgroup_reduction::SubgroupReduction,
        &consider_fp16::ConsiderFp16,
        &uniform_address_loads::UniformAddressLoads,
        &independent_work_before_wait::IndependentWorkBeforeWait,
        &division_rcp_fmul::DivisionRcpFmul,
        &divergent_branch::DivergentBranch,
        &divergent_loop_exit::DivergentLoopExit,
        &vectorise_loads::VectoriseLoads,
        &coalesce_strided_loads::CoalesceStridedLoads,
        &hoist_invariant_loads::HoistInvariantLoads,
        &pad_threadgroup_array::PadThreadgroupArray,
        &privatise_atomics::PrivatiseAtomics,
    ]
}

/// The rule ids, in evaluation order.
pub fn rule_ids() -> Vec<&'static str> {
    registry().iter().map(|r| r.id()).collect()
}

/// The rule of an id.
pub fn rule(id: &str) -> Option<&'static dyn Rule> {
    registry().iter().copied().find(|r| r.id() == id)
}

/// Which group a rule's suggestions join (see [`registry`]).
fn group(r: &dyn Rule) -> u8 {
    let n = r.needs();
    if n.contains(&Need::Access) {
        2
    } else if n.contains(&Need::Divergence) {
        1
    } else {
        0
    }
}

/// The suggestions of the rules of one group whose facts are present.
fn run_group(cx: &Context<'_>, g: u8) -> Vec<Suggestion> {
    let mut out = Vec::new();
    for r in registry().iter().filter(|r| group(**r) == g) {
        if r.needs().iter().all(|&n| cx.has(n)) {
            r.evaluate(cx, &mut out);
        }
    }
    out
}

/// The timing rules' suggestions, sorted by severity then address.
pub fn run_timing(cx: &Context<'_>) -> Vec<Suggestion> {
    let mut out = run_group(cx, 0);
    out.sort_by(|a, b| a.severity.cmp(&b.severity).then(a.offset.cmp(&b.offset)));
    out
}

/// Every rule's suggestions from the code table's facts, in registry order.
pub fn run_table(cx: &TableContext<'_>) -> Vec<Suggestion> {
    let mut out = Vec::new();
    for r in registry() {
        r.evaluate_table(cx, &mut out);
    }
    out
}

/// Every rule's suggestions for one function.
pub fn run(cx: &Context<'_>) -> Vec<Suggestion> {
    let mut out = run_timing(cx);
    run_after_timing(cx, &mut out);
    out
}

/// Appends the divergence and access rules' suggestions to the timing
/// rules' (`out`, from [`run_timing`]), and keeps the tiling advice only
/// where the access facts show reuse.
pub fn run_after_timing(cx: &Context<'_>, out: &mut Vec<Suggestion>) {
    // the divergence rules, in branch (address) order
    let mut div = run_group(cx, 1);
    div.sort_by_key(|s| s.offset);
    out.extend(div);
    if cx.has(Need::Access) {
        // the tiling advice is kept only where the access facts show reuse
        tile_global_loads::refine(cx, out);
        out.extend(run_group(cx, 2));
    }
}
