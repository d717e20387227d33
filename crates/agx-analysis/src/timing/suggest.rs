//! Suggestions engine: rules that fire on measured facts of the model and
//! the analysis, each naming the instructions involved. No rule fires
//! without evidence.

use super::model::{fmt_cy, KernelTiming, LoopTiming};
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
}

/// Rounds a cited figure to the precision messages print: 2 decimals, as
/// `{:.2}` rounds them (so the message reads as it did before the figures
/// were fields).
fn r2(x: f64) -> f64 {
    r2_exact(x).unwrap_or_else(|| format!("{x:.2}").parse().unwrap_or(x))
}

/// [`r2`] without the formatter and the parser (a kernel of many loops
/// cites ~4 figures per loop): `{:.2}` rounds the exact binary value of `x`
/// to hundredths, ties to even; the hundredths `q` are found exactly from
/// its mantissa and exponent, and `q / 100` is the double nearest q/100,
/// as parsing "q/100" gives. `None` outside `|x| < 1e13` (and for NaN and
/// infinities): there the formatter decides.
fn r2_exact(x: f64) -> Option<f64> {
    let a = x.abs();
    if a.is_nan() || a >= 1e13 {
        return None;
    }
    let bits = a.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    // a = m * 2^e
    let (m, e) = if exp == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), exp - 1075)
    };
    if e >= 0 {
        // a whole number: its hundredths are exact
        return Some(x);
    }
    let n = m as u128 * 100;
    let s = (-e) as u32;
    let q: u128 = if s >= 120 {
        0
    } else {
        let q = n >> s;
        let rem = n & ((1u128 << s) - 1);
        let half = 1u128 << (s - 1);
        if rem > half || (rem == half && q & 1 == 1) {
            q + 1
        } else {
            q
        }
    };
    let v = q as f64 / 100.0;
    Some(if x.is_sign_negative() { -v } else { v })
}

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
        }
    }
}

/// Rule ids, in evaluation order.
pub const RULES: &[&str] = &[
    "spills",
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
    let mut push = |s: Suggestion| out.push(s);

    // --- spills ---
    // the stack accesses the analysis counts (Instruction::mem_access: stack
    // adjusts and stack_get_ptr move no data)
    let stack_dir = |i: &Instruction| {
        i.mem_access()
            .filter(|m| m.space == MemSpace::Stack)
            .map(|m| m.dir)
    };
    let spills: Vec<&Instruction> = insns.iter().filter(|i| stack_dir(i).is_some()).collect();
    if let Some(first) = spills.first() {
        let stores = spills
            .iter()
            .filter(|i| stack_dir(i) == Some(MemDir::Store))
            .count();
        let loads = spills.len() - stores;
        let in_loops = spills
            .iter()
            .filter(|i| innermost_loop(timing, i.addr).is_some())
            .count();
        push(Suggestion::new(
            Severity::High,
            first.addr,
            "spills",
            &[
                ("spill_stores", stores as f64),
                ("fills", loads as f64),
                ("in_loops", in_loops as f64),
            ],
            |f| {
                format!(
                "{} spill stores and {} fills (stack_store/stack_load), {} of them inside loops; first at 0x{:x}. Reduce live values (smaller tiles, fewer accumulators) or a smaller workgroup so the register budget grows.",
                f("spill_stores"), f("fills"), f("in_loops"),
                first.addr
            )
            },
        ));
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
        if !dev_loads.is_empty() && mem_bound {
            push(Suggestion::new(
                Severity::High,
                dev_loads[0].addr,
                "tile-global-loads",
                &[
                    ("cycles_per_iteration", l.body.bound.cycles),
                    ("global_loads", dev_loads.len() as f64),
                    ("exposed_wait_stall", dev_stall),
                    ("simds_per_scheduler", timing.simds_per_scheduler),
                ],
                |f| {
                    format!(
                    "Loop at 0x{:x} is bound by {} ({} cy/iter; {} global loads/iter, ~{} cy/iter of wait stall exposed at {} SIMD-groups/scheduler). Tile the data into threadgroup memory and reuse it across iterations.",
                    l.header,
                    super::model::bound_label(l.body.bound.by),
                    f("cycles_per_iteration"),
                    f("global_loads"),
                    f("exposed_wait_stall"),
                    f("simds_per_scheduler")
                )
                },
            ));
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
        let many_raw = raw_count >= 4 && raw_count * 4 >= l.body.instructions;
        if latency_bound || (many_raw && chain_bound > 0.0) {
            let at = first_raw.map(|d| d.addr).unwrap_or(l.header);
            push(Suggestion::new(
                Severity::Medium,
                at,
                "break-dependency-chain",
                &[
                    ("dependency_chain", chain_bound),
                    ("raw_dependencies", raw_count as f64),
                    ("cycles_per_iteration", l.body.cycles_per_iteration),
                    ("throughput_bound", l.body.bound.throughput()),
                ],
                |f| {
                    format!(
                    "Loop at 0x{:x}: dependency chain of {} cy/iter and {} back-to-back RAW dependencies (first at 0x{at:x}); the loop costs {} cy/iter, bound by {} (largest throughput bound {} cy). Split accumulators / interleave independent chains.",
                    l.header,
                    f("dependency_chain"),
                    f("raw_dependencies"),
                    f("cycles_per_iteration"),
                    super::model::bound_label(l.body.bound.by),
                    f("throughput_bound")
                )
                },
            ));
        }

        // --- hoist invariant transcendentals ---
        // built on the first transcendental only (most loops have none)
        let mut written_set: Option<HashSet<u32>> = None;
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
                push(Suggestion::new(
                    Severity::Medium,
                    i.addr,
                    "hoist-invariant-transcendental",
                    &[("ic_cycles", cycles_at(i.addr, 4.0))],
                    |f| {
                        format!(
                        "{} at 0x{:x} in loop 0x{:x} reads only values the loop never writes: hoist it out of the loop (saves {} IC cy/iter).",
                        i.mnemonic(),
                        i.addr,
                        l.header,
                        f("ic_cycles")
                    )
                    },
                ));
            }
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
            push(Suggestion::new(
                Severity::Medium,
                first.addr,
                "int64-emulation-in-loop",
                &[
                    ("int64_ops", int64.len() as f64),
                    ("add64_instructions", 4.0),
                    ("mul64_ic_cycles", 8.0),
                ],
                |f| {
                    format!(
                    "Loop at 0x{:x}: {} 64-bit integer op(s) (first {} at 0x{:x}); 64-bit adds are emulated (~{} instructions) and 32x32=64 multiplies take {} IC cycles. Use 32-bit indices/offsets in the loop.",
                    l.header,
                    f("int64_ops"),
                    first.mnemonic(),
                    first.addr,
                    f("add64_instructions"),
                    f("mul64_ic_cycles")
                )
                },
            ));
        }

        // --- simd/quad reductions in loops ---
        for (&j, i) in own_idx.iter().zip(&own) {
            if key_of(j as usize).is_cross_lane_reduction() {
                push(Suggestion::new(
                    Severity::Medium,
                    i.addr,
                    "reduction-in-loop",
                    &[("cycles", cycles_at(i.addr, 14.5))],
                    |f| {
                        format!(
                        "{} at 0x{:x} is a cross-lane reduction inside loop 0x{:x} (~{} cy each). Accumulate per lane in the loop and reduce once after it.",
                        i.mnemonic(),
                        i.addr,
                        l.header,
                        f("cycles")
                    )
                    },
                ));
            }
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
            let first = own_idx
                .iter()
                .zip(&own)
                .find(|&(&j, _)| key_of(j as usize).is_fp32_arith())
                .map(|(_, i)| i)
                .unwrap();
            let g = timing.params.gpu.timing;
            push(Suggestion::new(
                Severity::Low,
                first.addr,
                "consider-fp16",
                &[
                    ("f32_ops", f32_ops as f64),
                    ("f32_cycles", l.body.pipes.f32),
                    ("cycles_per_iteration", l.body.cycles_per_iteration),
                    ("raw_penalty_16", g.raw_penalty_16),
                    ("raw_penalty_32", g.raw_penalty_32),
                ],
                |f| {
                    format!(
                    "Loop at 0x{:x} is FP32-bound ({} FP32 ops, {} of {} cy/iter); if the precision allows, half-precision halves register use and RAW penalties (+{} vs +{} cy).",
                    l.header,
                    f("f32_ops"),
                    f("f32_cycles"),
                    f("cycles_per_iteration"),
                    f("raw_penalty_16"),
                    f("raw_penalty_32")
                )
                },
            ));
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
                n += 1;
                bytes += m.bytes_per_lane();
            }
        }
        if let Some(at) = first {
            let simd = timing.params.gpu.timing.simd_width as f64;
            push(Suggestion::new(
                Severity::Low,
                at,
                "uniform-address-loads",
                &[
                    ("uniform_loads", n as f64),
                    ("bytes_per_simd_group", bytes as f64),
                    ("bytes_if_per_thread", bytes as f64 * simd),
                    ("l1_hit_latency", timing.params.mem.l1_hit_latency),
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
            ));
        }
    }

    // --- more independent work between loads and wait (any region) ---
    let mut waits: Vec<&super::model::WaitStall> = timing.outside_loops.waits.iter().collect();
    for l in &timing.loops {
        waits.extend(l.body.waits.iter());
    }
    for w in waits {
        if w.exposed > 0.0 && w.latency > 0.0 && w.independent_work < 0.25 * w.latency {
            let first = w.loads.first().copied().unwrap_or(w.addr);
            push(Suggestion::new(
                Severity::Medium,
                w.addr,
                "independent-work-before-wait",
                &[
                    ("independent_work", w.independent_work),
                    ("latency", w.latency),
                    ("exposed_stall", w.exposed),
                ],
                |f| {
                    format!(
                    "Only {} cy of work between the load at 0x{first:x} and the wait at 0x{:x} (assumed load latency {} cy; ~{} cy exposed at this occupancy). Issue loads earlier / unroll so independent work covers them.",
                    f("independent_work"),
                    w.addr,
                    f("latency"),
                    f("exposed_stall")
                )
                },
            ));
        }
    }

    // --- division: rcp feeding fmul ---
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
            let lp = innermost_loop(timing, i.addr);
            let sev = if lp.is_some() {
                Severity::Medium
            } else {
                Severity::Low
            };
            push(Suggestion::new(
                sev,
                i.addr,
                "division-rcp-fmul",
                &[("rcp_ic_cycles", cycles_at(i.addr, 6.0))],
                |f| {
                    format!(
                    "Division: rcp at 0x{:x} ({} IC cy) feeds {} at 0x{:x}{}. If the divisor is reused or loop-invariant, compute its reciprocal once and multiply.",
                    i.addr,
                    f("rcp_ic_cycles"),
                    c.mnemonic(),
                    c.addr,
                    lp.map(|l| format!(" inside loop 0x{:x}", l.header)).unwrap_or_default()
                )
                },
            ));
        }
    }

    out.sort_by(|a, b| a.severity.cmp(&b.severity).then(a.offset.cmp(&b.offset)));
    out
}

#[cfg(test)]
mod r2_tests {
    use super::*;

    /// The exact hundredths are the formatter's and parser's: ties (odd
    /// eighths), hundredths, thousandths, random values from 1e-8 to 1e14
    /// and their negatives.
    #[test]
    fn r2_exact_matches_format_and_parse() {
        let mut xs: Vec<f64> = (-40_000..40_000).map(|k| k as f64 / 8.0).collect();
        xs.extend((-100_000..100_000).map(|k| k as f64 / 1000.0));
        xs.extend((-100_000..100_000).map(|k| k as f64 / 100.0));
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..300_000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let m = (state >> 11) as f64 / (1u64 << 53) as f64;
            let e = ((state >> 3) % 24) as i32 - 8;
            xs.push(m * 10f64.powi(e));
            xs.push(-m * 10f64.powi(e));
        }
        xs.extend([
            0.0,
            -0.0,
            5e-324,
            0.005,
            0.015,
            1.005,
            9.999e12,
            1e13,
            f64::NAN,
        ]);
        for x in xs {
            let slow: f64 = format!("{x:.2}").parse().unwrap_or(x);
            let fast = r2(x);
            assert!(
                fast.to_bits() == slow.to_bits() || (fast.is_nan() && slow.is_nan()),
                "{x:e}: {fast} vs {slow}"
            );
        }
    }
}
