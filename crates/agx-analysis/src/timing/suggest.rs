//! Suggestions engine: rules that fire on measured facts of the model and
//! the analysis, each naming the instructions involved. No rule fires
//! without evidence.

use super::model::{fmt_cy, KernelTiming, LoopTiming};
use crate::stack_kind::StackKind;
use crate::Analysis;
use agx_isa::{Instruction, MemDir, MemSpace, RegFile, Width};
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

/// Rule ids, in evaluation order.
pub const RULES: &[&str] = &[
    "spills",
    "private-array",
    "register-pressure",
    "tile-global-loads",
    "independent-work-before-wait",
    "break-dependency-chain",
    "hoist-invariant-transcendental",
    "int64-emulation-in-loop",
    "reduction-in-loop",
    "division-rcp-fmul",
    "consider-fp16",
    "uniform-address-loads",
    // issue 22 (`crate::divergence::suggestions`)
    "divergent-branch",
    "divergent-loop-exit",
    // issue 35 (`timing::rule_*`, called after `memory_advice::refine`)
    "pad-threadgroup-array",
    "privatise-atomics",
];

/// Index range of the instructions between the loop's lowest and highest
/// block; `addrs[i]` is `insns[i].addr` (searched instead of the 500-byte
/// instructions: no cache miss per probe). The loop's own instructions are
/// those of the range the loop forest puts in it ([`LoopTiming::holds`]).
fn loop_range(addrs: &[u32], l: &LoopTiming) -> std::ops::Range<usize> {
    let s = addrs.partition_point(|&a| a < l.first);
    let e = addrs.partition_point(|&a| a <= l.last);
    s..e.max(s)
}

/// The innermost loop of the instruction at `addr`, by the loop forest's
/// membership (none for an address that is no instruction).
fn innermost_loop(t: &KernelTiming, addr: u32) -> Option<&LoopTiming> {
    let i = t.instructions_detail.partition_point(|d| d.addr < addr);
    match t.instructions_detail.get(i) {
        Some(d) if d.addr == addr => d.loop_index.and_then(|l| t.loops.get(l as usize)),
        _ => None,
    }
}

/// Indices bucketed by a key (each index under at most one), ascending
/// within each bucket.
struct Buckets {
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
    fn get(&self, k: usize) -> &[u32] {
        match (self.start.get(k), self.start.get(k + 1)) {
            (Some(&a), Some(&b)) => &self.flat[a as usize..b as usize],
            _ => &[],
        }
    }
}

/// The part of an ascending index list within `range`.
fn within<'a>(ix: &'a [u32], range: &std::ops::Range<usize>) -> &'a [u32] {
    let a = ix.partition_point(|&j| (j as usize) < range.start);
    let b = ix.partition_point(|&j| (j as usize) < range.end);
    &ix[a..b.max(a)]
}

/// Highest GPR half index touched and the first instruction touching it.
fn highest_gpr(insns: &[Instruction]) -> Option<(u32, u32)> {
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

/// Threads per core for `halfregs` allocated half-registers (the one
/// occupancy rule of the GPU model the timing used).
fn threads_for(gpu: &crate::gpu::GpuModel, halfregs: u32) -> u32 {
    match gpu.occupancy_for_regs(halfregs).0 {
        0 => 384,
        t => t,
    }
}

/// Runs every rule. `analysis` (from [`crate::analyze`]) provides the
/// register peak and spill counts; without it they are derived from the
/// instructions.
pub fn suggest(
    insns: &[Instruction],
    timing: &KernelTiming,
    analysis: Option<&Analysis>,
) -> Vec<Suggestion> {
    let mut out: Vec<Suggestion> = Vec::new();
    // Details are normally in strictly increasing address order: binary
    // search; otherwise an address map (the last entry for an address wins).
    let details = &timing.instructions_detail;
    let details_sorted = details.windows(2).all(|w| w[0].addr < w[1].addr);
    let detail_at: Option<std::collections::HashMap<u32, usize>> = if details_sorted {
        None
    } else {
        Some(
            details
                .iter()
                .enumerate()
                .map(|(i, d)| (d.addr, i))
                .collect(),
        )
    };
    let addrs: Vec<u32> = insns.iter().map(|i| i.addr).collect();
    let detail_addrs: Vec<u32> = details.iter().map(|d| d.addr).collect();
    // innermost_loop(timing, insns[j].addr), without the search when the
    // detail at j is that instruction's (details are strictly increasing,
    // so the search would land on j)
    let innermost_at = |j: usize, addr: u32| -> Option<&LoopTiming> {
        if details_sorted {
            if let Some(d) = details.get(j).filter(|d| d.addr == addr) {
                return d.loop_index.and_then(|l| timing.loops.get(l as usize));
            }
        }
        innermost_loop(timing, addr)
    };
    // Each detail is its instruction's (the model's record of these
    // instructions): the cost-table key is read from the detail's row, not
    // worked out again from the encoding per rule and instruction.
    let aligned =
        details.len() == insns.len() && details.iter().zip(&addrs).all(|(d, &a)| d.addr == a);
    let key_of = |j: usize| -> agx_isa::CostKey {
        if aligned {
            details[j].entry.key
        } else {
            insns[j].cost_key()
        }
    };
    // Each loop's own instructions (the loop is their innermost, by the loop
    // forest's membership) and its own details, bucketed by loop in one
    // pass each (a walk up the parents per instruction of every loop's
    // range was most of the suggestions' cost on deep nests); one list
    // serves both when every instruction's innermost loop is its detail's.
    let own_key = |j: usize| innermost_at(j, addrs[j]).map(|l| l.index);
    let detail_key = |k: usize| details[k].loop_index.map(|l| l as usize);
    let own_of = Buckets::of(details.len(), detail_key);
    let same = aligned && (0..insns.len()).all(|j| own_key(j) == detail_key(j));
    let own_insn_of = if same {
        None
    } else {
        Some(Buckets::of(insns.len(), own_key))
    };
    let own_insn_of = own_insn_of.as_ref().unwrap_or(&own_of);
    let cycles_at = |addr: u32, dflt: f64| {
        let i = match &detail_at {
            None => details.binary_search_by_key(&addr, |d| d.addr).ok(),
            Some(m) => m.get(&addr).copied(),
        };
        i.map(|i| details[i].cycles()).unwrap_or(dflt)
    };
    // whether the load at `addr` has a uniform address (the record's
    // `uniform_address`, from the divergence analysis)
    let uniform_at = |addr: u32| -> bool {
        let i = match &detail_at {
            None => details.binary_search_by_key(&addr, |d| d.addr).ok(),
            Some(m) => m.get(&addr).copied(),
        };
        i.is_some_and(|i| details[i].uniform_address)
    };
    // each instruction's part of the estimate (`insn_cycles`: they sum to
    // `total_cycles`), by address
    let total = timing.total_cycles;
    let cy_at = |addr: u32| -> f64 {
        let i = match &detail_at {
            None => details.binary_search_by_key(&addr, |d| d.addr).ok(),
            Some(m) => m.get(&addr).copied(),
        };
        i.and_then(|i| timing.insn_cycles.get(i))
            .copied()
            .unwrap_or(0.0)
    };
    let share_of = |sites: &[u32]| share_pct(sites.iter().map(|&a| cy_at(a)).sum(), total);
    let loop_cycles = loop_cycles(timing);
    // the stack accesses the analysis counts (Instruction::mem_access: stack
    // adjusts and stack_get_ptr move no data)
    let stack_dir = |i: &Instruction| {
        i.mem_access()
            .filter(|m| m.space == MemSpace::Stack)
            .map(|m| m.dir)
    };
    let mut push = |s: Suggestion| out.push(s);

    // --- stack traffic, by kind (crate::stack_kind) ---
    // only true spills and fills speak of register pressure; saves and
    // restores around a call are the calling convention (no advice); a
    // private array has its own rule
    let own_sites;
    let stack_sites: &[(u32, StackKind)] = match analysis {
        Some(a)
            if a.stack_sites
                .iter()
                .all(|&(k, _)| (k as usize) < insns.len()) =>
        {
            &a.stack_sites
        }
        _ => {
            own_sites = crate::stack_kind::classify(insns);
            &own_sites
        }
    };
    let stack_of = |kinds: &[StackKind]| -> Vec<u32> {
        stack_sites
            .iter()
            .filter(|(_, k)| kinds.contains(k))
            .map(|&(j, _)| insns[j as usize].addr)
            .collect()
    };
    let spills = stack_of(&[StackKind::Spill, StackKind::Fill]);
    if let Some(&first) = spills.first() {
        let stores = stack_of(&[StackKind::Spill]).len();
        let loads = spills.len() - stores;
        let in_loops = spills
            .iter()
            .filter(|&&a| innermost_loop(timing, a).is_some())
            .count();
        let share = share_of(&spills);
        push(
            Suggestion::new(
                severity_for_share(share),
                first,
                "spills",
                &[
                    ("spill_stores", stores as f64),
                    ("fills", loads as f64),
                    ("in_loops", in_loops as f64),
                    ("share_pct", share),
                ],
                |f| {
                    format!(
                "{} spill stores and {} fills (stack_store/stack_load of fixed slots), {} of them inside loops, {}% of the estimate; first at 0x{:x}. Reduce live values (smaller tiles, fewer accumulators) or a smaller workgroup so the register budget grows.",
                f("spill_stores"), f("fills"), f("in_loops"), f("share_pct"),
                first
            )
                },
            )
            .with_fact(format!(
                "{} stack accesses move registers to fixed stack slots and back with no call between (spill/fill)",
                spills.len()
            ))
            .with_sites(spills.clone()),
        );
    }
    let arrays = stack_of(&[StackKind::PrivateArray]);
    if let Some(&first) = arrays.first() {
        let indexed = stack_sites
            .iter()
            .filter(|(j, k)| {
                *k == StackKind::PrivateArray
                    && insns[*j as usize]
                        .uses()
                        .filter(|r| r.file == RegFile::Gpr)
                        .count()
                        > usize::from(stack_dir(&insns[*j as usize]) == Some(MemDir::Store))
            })
            .count();
        let in_loops = arrays
            .iter()
            .filter(|&&a| innermost_loop(timing, a).is_some())
            .count();
        let frame = analysis
            .and_then(|a| a.stack.scratch_reserved)
            .unwrap_or(0)
            .max(0);
        let share = share_of(&arrays);
        push(
            Suggestion::new(
                severity_for_share(share),
                first,
                "private-array",
                &[
                    ("accesses", arrays.len() as f64),
                    ("indexed_accesses", indexed as f64),
                    ("in_loops", in_loops as f64),
                    ("stack_frame", frame as f64),
                    ("share_pct", share),
                ],
                |f| {
                    format!(
                "A private array lives in stack memory: {} stack accesses (first at 0x{first:x}), {} of them at an address computed in a register, {} inside loops, in a stack frame of {} (entry stack adjust), {}% of the estimate. Registers cannot be indexed at run time, so the compiler keeps the array in memory. Index it only with compile-time constants (unroll the loops over it) so it can stay in registers, or, if the threads of a threadgroup share it, keep it in threadgroup memory.",
                f("accesses"), f("indexed_accesses"), f("in_loops"), f("stack_frame"), f("share_pct")
            )
                },
            )
            .with_fact(format!(
                "{indexed} stack accesses address the stack through a register (an array indexed at run time)"
            ))
            .with_sites(arrays.clone()),
        );
    }

    // --- register pressure / occupancy ---
    let threads = timing.params.threads_per_core;
    // (address of the peak, its figures, their words)
    type Desc = Box<dyn Fn(&dyn Fn(&str) -> String) -> String>;
    let (peak_addr, peak_figs, peak_desc): (Option<u32>, Vec<(&'static str, f64)>, Desc) =
        match analysis {
            Some(a) => (
                a.registers.peak_live_offset,
                vec![
                    ("allocated_half", a.registers.allocated_half as f64),
                    ("highest_half_index", a.registers.highest_half_index as f64),
                    ("peak_live_half", a.registers.peak_live_half as f64),
                ],
                Box::new(|f: &dyn Fn(&str) -> String| {
                    format!(
                        "{} half-registers allocated (highest index {}), peak liveness {} halves",
                        f("allocated_half"),
                        f("highest_half_index"),
                        f("peak_live_half")
                    )
                }),
            ),
            None => match highest_gpr(insns) {
                Some((hi, addr)) => (
                    Some(addr),
                    vec![],
                    Box::new(move |_: &dyn Fn(&str) -> String| {
                        format!(
                            "highest register half r{}{} touched",
                            hi / 2,
                            if hi % 2 == 0 { "l" } else { "h" }
                        )
                    }),
                ),
                None => (
                    None,
                    vec![],
                    Box::new(|_: &dyn Fn(&str) -> String| String::new()),
                ),
            },
        };
    let derived_threads = analysis
        .map(|a| a.occupancy.threads)
        .filter(|&t| t > 0)
        .or_else(|| highest_gpr(insns).map(|(hi, _)| threads_for(timing.params.gpu, hi + 1)));
    let occ = derived_threads.unwrap_or(threads).min(threads.max(1));
    if occ < 1024 {
        let sev = if occ < 640 {
            Severity::High
        } else {
            Severity::Medium
        };
        let at = peak_addr.unwrap_or(0);
        let mut figs = vec![
            ("threads_per_core", occ as f64),
            // (rounded as `{:.0}` rounds, half to even)
            (
                "occupancy_percent",
                format!("{:.0}", occ as f64 / 1024.0 * 100.0)
                    .parse()
                    .unwrap_or(0.0),
            ),
        ];
        figs.extend(peak_figs);
        push(Suggestion::new(sev, at, "register-pressure", &figs, |f| {
            format!(
                "Occupancy limited to {} threads/core ({}%): {}; the peak is at 0x{at:x}. Shorten live ranges there (recompute cheap values, narrow to 16-bit) to reach the next occupancy step.",
                f("threads_per_core"),
                f("occupancy_percent"),
                peak_desc(f)
            )
        }));
    }

    // each loop's rules, on all cores; the suggestions are kept in loop order
    // the kernel-wide half of tiling_already_done, once per kernel
    let stages = stages_through_threadgroup(insns);
    let per_loop = |l: &LoopTiming| -> Vec<Suggestion> {
        let mut mine: Vec<Suggestion> = Vec::new();
        let mut push = |s: Suggestion| mine.push(s);
        let range = loop_range(&addrs, l);
        // the loop's own instructions, by the loop forest's membership
        let own_idx = within(own_insn_of.get(l.index), &range);
        let own: Vec<&Instruction> = own_idx.iter().map(|&j| &insns[j as usize]).collect();
        // the loop's instructions, nested loops included (read by one rule,
        // on a loop with a transcendental)
        let body = || -> Vec<&Instruction> {
            let base = range.start;
            let mut body: Vec<&Instruction> = Vec::new();
            for (k, i) in insns[range.clone()].iter().enumerate() {
                let mut cur = innermost_at(base + k, i.addr);
                while let Some(x) = cur {
                    if x.index == l.index {
                        body.push(i);
                        break;
                    }
                    cur = x.parent.and_then(|p| timing.loops.get(p));
                }
            }
            body
        };

        // --- tile global loads ---
        // (a load whose address is uniform reads one value for the whole
        // SIMD-group: tiling would not share it further, it is not blamed)
        let dev_loads: Vec<&&Instruction> = own
            .iter()
            .filter(|i| {
                i.mem_access().is_some_and(|m| {
                    m.dir == MemDir::Load && matches!(m.space, MemSpace::Device | MemSpace::Texture)
                }) && !uniform_at(i.addr)
            })
            .collect();
        let dev_addrs: HashSet<u32> = dev_loads.iter().map(|i| i.addr).collect();
        let dev_stall: f64 = l
            .body
            .waits
            .iter()
            .filter(|w| w.loads.iter().any(|a| dev_addrs.contains(a)))
            .map(|w| w.exposed)
            .sum();
        let mem_bound = matches!(
            l.body.bound.by,
            "memory_bandwidth" | "device_bandwidth" | "memory_latency"
        );
        let loop_share = share_pct(loop_cycles.get(l.index).copied().unwrap_or(0.0), total);
        if !dev_loads.is_empty() && mem_bound && !stages && !stores_to_threadgroup(&body()) {
            let sites: Vec<u32> = dev_loads.iter().map(|i| i.addr).collect();
            push(
                Suggestion::new(
                    severity_for_share(loop_share),
                    dev_loads[0].addr,
                    "tile-global-loads",
                    &[
                        ("cycles_per_iteration", l.body.bound.cycles),
                        ("global_loads", dev_loads.len() as f64),
                        ("exposed_wait_stall", dev_stall),
                        ("simds_per_scheduler", timing.simds_per_scheduler),
                        ("share_pct", loop_share),
                    ],
                    |f| {
                        format!(
                    "Loop at 0x{:x} is bound by {} ({} cy/iter, {}% of the estimate; {} global loads/iter, ~{} cy/iter of wait stall exposed at {} SIMD-groups/scheduler). Tile the data into threadgroup memory and reuse it across iterations.",
                    l.header,
                    super::model::bound_label(l.body.bound.by),
                    f("cycles_per_iteration"),
                    f("share_pct"),
                    f("global_loads"),
                    f("exposed_wait_stall"),
                    f("simds_per_scheduler")
                )
                    },
                )
                .with_fact(format!(
                    "the loop is bound by memory, loads {} per-thread device values per iteration, and the kernel does not stage data through threadgroup memory",
                    dev_loads.len()
                ))
                .with_sites(sites),
            );
        }

        // --- break dependency chains ---
        // (the one dependency-chain figure: the bound component)
        let chain_bound = l.body.bound.components["dependency_chain"];
        let no_mem_stall = l.body.wait_stall <= 0.0;
        // the RAW penalties the loop's own body pays (a nested loop's are
        // in its own bound)
        let ds = {
            let a = detail_addrs.partition_point(|&x| x < l.first);
            let b = detail_addrs.partition_point(|&x| x <= l.last);
            within(own_of.get(l.index), &(a..b.max(a)))
        };
        let paid =
            |d: &&super::model::InsnDetail| d.raw_dep().map(|r| r.penalty > 0.0).unwrap_or(false);
        let ds = ds.iter().map(|&k| &details[k as usize]);
        let raw_count = ds.clone().filter(paid).count();
        let first_raw = ds.clone().find(paid);
        let latency_bound = no_mem_stall && l.body.bound.by == "dependency_chain";
        // the fact splitting rests on: a value carried across iterations
        // through an associative operation (a sum or a product)
        // (only where the chain is the loop's bound: a loop bound by a pipe
        // or by memory does not get faster by splitting its chain)
        let accs = if latency_bound {
            accumulators(&body())
        } else {
            Vec::new()
        };
        if let Some(&(acc, _)) = accs.first() {
            let values = accs.iter().map(|a| a.1).collect::<HashSet<u16>>().len();
            let accs: Vec<u32> = accs.iter().map(|a| a.0).collect();
            let at = first_raw.map(|d| d.addr).unwrap_or(l.header);
            push(
                Suggestion::new(
                    severity_for_share(loop_share),
                    at,
                    "break-dependency-chain",
                    &[
                        ("dependency_chain", chain_bound),
                        ("raw_dependencies", raw_count as f64),
                        ("cycles_per_iteration", l.body.cycles_per_iteration),
                        ("throughput_bound", l.body.bound.throughput()),
                        ("accumulators", values as f64),
                        ("share_pct", loop_share),
                    ],
                    |f| {
                        format!(
                    "Loop at 0x{:x}: dependency chain of {} cy/iter and {} back-to-back RAW dependencies (first at 0x{at:x}); the loop costs {} cy/iter, bound by {} (largest throughput bound {} cy), {}% of the estimate. {} value(s) accumulate across iterations through a sum or product (first at 0x{acc:x}): split each into independent partial accumulators and combine them after the loop.",
                    l.header,
                    f("dependency_chain"),
                    f("raw_dependencies"),
                    f("cycles_per_iteration"),
                    super::model::bound_label(l.body.bound.by),
                    f("throughput_bound"),
                    f("share_pct"),
                    f("accumulators")
                )
                    },
                )
                .with_fact(format!(
                    "the instruction at 0x{acc:x} adds (or multiplies) into a register it carries across iterations, with operands that do not depend on that register"
                ))
                .with_sites(accs.clone()),
            );
        }

        // --- hoist invariant transcendentals ---
        // built on the first transcendental only (most loops have none)
        let mut written_set: Option<HashSet<u32>> = None;
        let mut hoist: Vec<&Instruction> = Vec::new();
        for (&j, i) in own_idx.iter().zip(&own) {
            if key_of(j as usize).transcendental().is_none() {
                continue;
            }
            let written = written_set.get_or_insert_with(|| {
                body()
                    .iter()
                    .flat_map(|i| {
                        i.defs()
                            .filter(|r| r.file == RegFile::Gpr)
                            .flat_map(|r| r.half_range())
                            .collect::<Vec<_>>()
                    })
                    .collect()
            });
            let srcs: Vec<_> = i.uses().collect();
            let invariant = !srcs.is_empty()
                && srcs.iter().all(|r| {
                    r.file == RegFile::Uniform || r.half_range().all(|h| !written.contains(&h))
                });
            if invariant {
                hoist.push(i);
            }
        }
        if let Some(i) = hoist.first() {
            let sites: Vec<u32> = hoist.iter().map(|i| i.addr).collect();
            let share = share_of(&sites);
            let ic: f64 = hoist.iter().map(|i| cycles_at(i.addr, 4.0)).sum();
            push(
                Suggestion::new(
                    severity_for_share(share),
                    i.addr,
                    "hoist-invariant-transcendental",
                    &[
                        ("transcendentals", hoist.len() as f64),
                        ("ic_cycles", ic),
                        ("share_pct", share),
                    ],
                    |f| {
                        format!(
                        "{} transcendental(s) in loop 0x{:x} (first {} at 0x{:x}) read only values the loop never writes: hoist them out of the loop (saves {} IC cy/iter, {}% of the estimate).",
                        f("transcendentals"),
                        l.header,
                        i.mnemonic(),
                        i.addr,
                        f("ic_cycles"),
                        f("share_pct")
                    )
                    },
                )
                .with_fact("its sources are uniform registers or registers no instruction of the loop writes")
                .with_sites(sites),
            );
        }

        // --- 64-bit integer emulation ---
        let int64: Vec<&&Instruction> = own_idx
            .iter()
            .zip(&own)
            .filter(|&(&j, i)| {
                key_of(j as usize).is_integer_arith()
                    && i.defs()
                        .any(|r| r.file == RegFile::Gpr && r.width == Width::W64)
            })
            .map(|(_, i)| i)
            .collect();
        if let Some(first) = int64.first() {
            let sites: Vec<u32> = int64.iter().map(|i| i.addr).collect();
            let share = share_of(&sites);
            push(
                Suggestion::new(
                    severity_for_share(share),
                    first.addr,
                    "int64-emulation-in-loop",
                    &[
                        ("int64_ops", int64.len() as f64),
                        ("add64_instructions", 4.0),
                        ("mul64_ic_cycles", 8.0),
                        ("share_pct", share),
                    ],
                    |f| {
                        format!(
                    "Loop at 0x{:x}: {} 64-bit integer op(s) (first {} at 0x{:x}), {}% of the estimate; 64-bit adds are emulated (~{} instructions) and 32x32=64 multiplies take {} IC cycles. Use 32-bit indices/offsets in the loop.",
                    l.header,
                    f("int64_ops"),
                    first.mnemonic(),
                    first.addr,
                    f("share_pct"),
                    f("add64_instructions"),
                    f("mul64_ic_cycles")
                )
                    },
                )
                .with_fact("integer arithmetic in the loop writes 64-bit registers")
                .with_sites(sites),
            );
        }

        // --- simd/quad reductions in loops ---
        let reds: Vec<&&Instruction> = own_idx
            .iter()
            .zip(&own)
            .filter(|&(&j, _)| key_of(j as usize).is_cross_lane_reduction())
            .map(|(_, i)| i)
            .collect();
        if let Some(i) = reds.first() {
            let sites: Vec<u32> = reds.iter().map(|i| i.addr).collect();
            let share = share_of(&sites);
            push(
                Suggestion::new(
                    severity_for_share(share),
                    i.addr,
                    "reduction-in-loop",
                    &[
                        ("reductions", reds.len() as f64),
                        ("cycles", cycles_at(i.addr, 14.5)),
                        ("share_pct", share),
                    ],
                    |f| {
                        format!(
                        "{} cross-lane reduction(s) inside loop 0x{:x} (first {} at 0x{:x}, ~{} cy each), {}% of the estimate. Accumulate per lane in the loop and reduce once after it.",
                        f("reductions"),
                        l.header,
                        i.mnemonic(),
                        i.addr,
                        f("cycles"),
                        f("share_pct")
                    )
                    },
                )
                .with_fact("a SIMD-group or quad reduction executes on every iteration")
                .with_sites(sites),
            );
        }

        // --- FP16 ---
        let own_keys = || own_idx.iter().map(|&j| key_of(j as usize));
        let f32_ops = own_keys().filter(|k| k.is_fp32_arith()).count();
        let f16_ops = own_keys().filter(|k| k.is_fp16_arith()).count();
        let f_bound = no_mem_stall && l.body.pipes.ic < l.body.pipes.fscib();
        if f32_ops >= 4
            && f16_ops == 0
            && f_bound
            && l.body.pipes.f32 * 2.0 >= l.body.cycles_per_iteration
        {
            let f32_insns: Vec<u32> = own_idx
                .iter()
                .zip(&own)
                .filter(|&(&j, _)| key_of(j as usize).is_fp32_arith())
                .map(|(_, i)| i.addr)
                .collect();
            let share = share_of(&f32_insns);
            let g = timing.params.gpu.table();
            push(
                Suggestion::new(
                    // (whether the precision allows is not known: at most 🟢)
                    Severity::Low,
                    f32_insns[0],
                    "consider-fp16",
                    &[
                        ("f32_ops", f32_ops as f64),
                        ("f32_cycles", l.body.pipes.f32),
                        ("cycles_per_iteration", l.body.cycles_per_iteration),
                        ("raw_penalty_16", g.raw_penalty_16),
                        ("raw_penalty_32", g.raw_penalty_32),
                        ("share_pct", share),
                    ],
                    |f| {
                        format!(
                    "Loop at 0x{:x} is FP32-bound ({} FP32 ops, {} of {} cy/iter, {}% of the estimate); if the precision allows, half-precision halves register use and RAW penalties (+{} vs +{} cy).",
                    l.header,
                    f("f32_ops"),
                    f("f32_cycles"),
                    f("cycles_per_iteration"),
                    f("share_pct"),
                    f("raw_penalty_16"),
                    f("raw_penalty_32")
                )
                    },
                )
                .with_fact("the loop's FP32 pipe takes at least half its cycles, with no FP16 arithmetic and no memory stall")
                .with_sites(f32_insns),
            );
        }
        mine
    };
    crate::par::map_ordered(
        timing.loops.len(),
        &|i| per_loop(&timing.loops[i]),
        |_, v| v.into_iter().for_each(&mut push),
    );

    // --- uniform-address loads in a memory-bound region ---
    // Loads the divergence analysis proved uniform (kernel arguments, array
    // lengths, constants) read one value for the whole SIMD-group: named
    // where the region is bound by memory so that the bound is not read as
    // theirs.
    {
        let region_by = |d: &super::model::InsnDetail| match d.loop_index {
            Some(l) => timing.loops.get(l as usize).map(|l| l.body.bound.by),
            None => Some(timing.outside_loops.bound.by),
        };
        let mut first: Option<u32> = None;
        let mut usites: Vec<u32> = Vec::new();
        let (mut n, mut bytes) = (0usize, 0u32);
        for (j, i) in insns.iter().enumerate() {
            let Some(m) = i
                .mem_access()
                .filter(|m| m.dir == MemDir::Load && m.space == MemSpace::Device)
            else {
                continue;
            };
            let d = match details.get(j).filter(|d| d.addr == i.addr) {
                Some(d) => d,
                None => match details.binary_search_by_key(&i.addr, |d| d.addr) {
                    Ok(k) => &details[k],
                    Err(_) => continue,
                },
            };
            let mem_bound = matches!(
                region_by(d),
                Some("memory_bandwidth" | "device_bandwidth" | "memory_latency")
            );
            if d.uniform_address && mem_bound {
                first.get_or_insert(i.addr);
                usites.push(i.addr);
                n += 1;
                bytes += m.bytes_per_lane();
            }
        }
        if let Some(at) = first {
            let simd = timing.params.gpu.table().simd_width as f64;
            let share = share_of(&usites);
            push(Suggestion::new(
                // (nothing to do: at most 🟢)
                Severity::Low,
                at,
                "uniform-address-loads",
                &[
                    ("uniform_loads", n as f64),
                    ("bytes_per_simd_group", bytes as f64),
                    ("bytes_if_per_thread", bytes as f64 * simd),
                    ("l1_hit_latency", timing.params.mem.l1_hit_latency),
                    ("share_pct", share),
                ],
                |f| {
                    let (what, verb, it) = if n == 1 {
                        ("device load", "reads", "it is")
                    } else {
                        ("device loads", "read", "they are")
                    };
                    format!(
                    "{} {what} (first at 0x{at:x}) {verb} the same address for the whole SIMD-group (kernel arguments, lengths, constants): {it} charged once per SIMD-group ({} bytes, not {}) at the L1-hit latency ({} cy), so the memory bound is the per-thread accesses'. Nothing to do there; look at the thread-indexed loads and stores.",
                    f("uniform_loads"),
                    f("bytes_per_simd_group"),
                    f("bytes_if_per_thread"),
                    f("l1_hit_latency")
                )
                },
            )
            .with_fact("the divergence analysis proved these loads' addresses uniform, in a region bound by memory")
            .with_sites(usites));
        }
    }

    // --- more independent work between loads and wait (one per region) ---
    // A wait waits for the loads of its scoreboard slot (all loads for a
    // wait without one): the loads named are those, not every load the
    // model lets complete there (loads without a slot, e.g. threadgroup
    // loads issued after the wait, complete at any wait).
    let slot_loads = |w: &super::model::WaitStall| -> Vec<u32> {
        w.loads
            .iter()
            .copied()
            .filter(|&a| {
                w.slot.is_none()
                    || addrs
                        .binary_search(&a)
                        .ok()
                        .is_some_and(|k| insns[k].scoreboard_slot() == w.slot)
            })
            .collect()
    };
    let mut regions: Vec<(Option<u32>, Vec<&super::model::WaitStall>)> =
        vec![(None, timing.outside_loops.waits.iter().collect())];
    for l in &timing.loops {
        regions.push((Some(l.header), l.body.waits.iter().collect()));
    }
    for (header, waits) in regions {
        // (the wait, the loads of its slot)
        let short: Vec<(&super::model::WaitStall, Vec<u32>)> = waits
            .into_iter()
            .filter(|w| w.exposed > 0.0 && w.latency > 0.0 && w.independent_work < 0.25 * w.latency)
            .map(|w| (w, slot_loads(w)))
            .filter(|(_, l)| !l.is_empty())
            .collect();
        // the wait that exposes most stall speaks for the region
        let Some((w, loads)) = short.iter().max_by(|a, b| {
            a.0.exposed
                .total_cmp(&b.0.exposed)
                .then(b.0.addr.cmp(&a.0.addr))
        }) else {
            continue;
        };
        let sites: Vec<u32> = short.iter().map(|(w, _)| w.addr).collect();
        let share = share_of(&sites);
        let exposed: f64 = short.iter().map(|(w, _)| w.exposed).sum();
        let names: Vec<String> = loads
            .iter()
            .take(3)
            .map(|&a| {
                let m = addrs
                    .binary_search(&a)
                    .map_or("load", |k| insns[k].mnemonic());
                let when = if a > w.addr && header.is_some() {
                    " (previous iteration)"
                } else {
                    ""
                };
                format!("{m} at 0x{a:x}{when}")
            })
            .collect();
        let more = loads.len().saturating_sub(3);
        let slot = w.slot.map(|s| format!(" (slot {s})")).unwrap_or_default();
        let region = header
            .map(|h| format!("loop 0x{h:x}"))
            .unwrap_or_else(|| "the straight-line code".to_string());
        push(
            Suggestion::new(
                severity_for_share(share),
                w.addr,
                "independent-work-before-wait",
                &[
                    ("waits", short.len() as f64),
                    ("slot", w.slot.map_or(0.0, |s| s as f64)),
                    ("more_loads", more as f64),
                    ("independent_work", w.independent_work),
                    ("latency", w.latency),
                    ("exposed_stall", exposed),
                    ("share_pct", share),
                ],
                |f| {
                    format!(
                    "{} wait(s) in {region} have little work before them; the wait at 0x{:x}{slot} waits for the {}{} after only {} cy of work (assumed load latency {} cy; ~{} cy exposed in all at this occupancy, {}% of the estimate). Issue loads earlier / unroll so independent work covers them.",
                    f("waits"),
                    w.addr,
                    names.join(", "),
                    if more > 0 { format!(" and {} more", f("more_loads")) } else { String::new() },
                    f("independent_work"),
                    f("latency"),
                    f("exposed_stall"),
                    f("share_pct")
                )
                },
            )
            .with_fact(format!(
                "the loads of the wait's scoreboard slot are issued less than a quarter of their latency before it (wait at 0x{:x})",
                w.addr
            ))
            .with_sites(sites),
        );
    }

    // --- division: rcp feeding fmul (one per region) ---
    // (region: innermost loop header, None outside loops; the rcp and its
    // consumer)
    let mut divs: Vec<(Option<u32>, u32, &Instruction)> = Vec::new();
    for (idx, i) in insns.iter().enumerate() {
        if key_of(idx) != agx_isa::CostKey::Rcp {
            continue;
        }
        let defs: Vec<u32> = i
            .defs()
            .filter(|r| r.file == RegFile::Gpr)
            .flat_map(|r| r.half_range())
            .collect();
        if defs.is_empty() {
            continue;
        }
        let consumer = insns[idx + 1..].iter().take(6).find(|j| {
            j.cost_key().is_fmul()
                && j.uses()
                    .any(|r| r.file == RegFile::Gpr && r.half_range().any(|h| defs.contains(&h)))
        });
        if let Some(c) = consumer {
            divs.push((innermost_loop(timing, i.addr).map(|l| l.header), i.addr, c));
        }
    }
    divs.sort_by_key(|d| (d.0, d.1));
    for group in divs.chunk_by(|a, b| a.0 == b.0) {
        let (lp, at, c) = group[0];
        let sites: Vec<u32> = group.iter().map(|d| d.1).collect();
        let share = share_of(&sites);
        push(
            Suggestion::new(
                severity_for_share(share),
                at,
                "division-rcp-fmul",
                &[
                    ("divisions", group.len() as f64),
                    ("rcp_ic_cycles", cycles_at(at, 6.0)),
                    ("share_pct", share),
                ],
                |f| {
                    format!(
                    "{} division(s){}: rcp at 0x{at:x} ({} IC cy) feeds {} at 0x{:x}; {}% of the estimate. If the divisor is reused or loop-invariant, compute its reciprocal once and multiply.",
                    f("divisions"),
                    lp.map(|h| format!(" inside loop 0x{h:x}")).unwrap_or_default(),
                    f("rcp_ic_cycles"),
                    c.mnemonic(),
                    c.addr,
                    f("share_pct")
                )
                },
            )
            .with_fact("an rcp's result is multiplied within the next 6 instructions (a division)")
            .with_sites(sites),
        );
    }

    out.sort_by(|a, b| a.severity.cmp(&b.severity).then(a.offset.cmp(&b.offset)));
    out
}

/// Whether tiling through threadgroup memory is already what the code does
/// (the tiling rule's condition, issue 27 item 5): the kernel stages data
/// through threadgroup memory ([`stages_through_threadgroup`]), or the loop
/// (`body`, nested loops included) is a tile-loading loop (it stores to
/// threadgroup memory). The reuse facts of the address analysis join in
/// [`super::memory_advice`].
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
/// rule here and its refinement in [`super::memory_advice`] read it. (A
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
fn stores_to_threadgroup(body: &[&Instruction]) -> bool {
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
fn accumulators(body: &[&Instruction]) -> Vec<(u32, u16)> {
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
