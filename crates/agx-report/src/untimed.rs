//! The record and views of a kernel no timing model applies to (Apple9:
//! M3, M4, A18 Pro code; `Isa::timed` false): counts, framing, CFG and
//! loops, memory accesses per loop, registers against the family's file,
//! the wait fields, and what is unknown. No cycle figure: no measurements
//! exist for these GPUs, and the record says so in `timing`.
//!
//! Such a kernel is a [`KernelRecord`] like any other (issue 29: one
//! record type), built once by [`KernelRecord::build_untimed`] from the
//! untimed analysis (`agx_analysis::untimed`): `timing` is `None` and the
//! sections only it has ([`UntimedSections`]: framing, the named
//! fraction, registers as a lower bound, loops with their memory and
//! waits, the unknown list, the CFG's blocks) are its `untimed`. It
//! serializes as `$defs/untimed_kernel` of docs/schema.json. The text and
//! HTML views here print those sections and compute nothing; DOT, `batch`
//! and `diff` read the same record. Field names are the
//! timed record's where they mean the same (`name`, `gpu`,
//! `instructions`, `code_bytes`, `registers.highest_half_index`, …,
//! `loops[].start/end/depth/instructions`, `cfg.blocks/edges`,
//! `backward_branches`, `irreducible`).

use crate::record::KernelRecord;
use agx_analysis::round::r4;
/// The `registers` object: the analysis's figures, serialized as they are.
pub use agx_analysis::untimed::Registers;
use agx_analysis::untimed::{Decoded, Untimed};
use agx_isa::isa::Isa;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Why no cycle figure is given.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Timing {
    /// Always `null` here: no timing model applies.
    pub model: Option<String>,
    pub reason: String,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FramingStop {
    pub offset: u32,
    pub reason: String,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Framing {
    pub input_bytes: usize,
    pub code_bytes: usize,
    pub framed_bytes: usize,
    pub gap_bytes: usize,
    /// (framed + gap) / code bytes, 4 decimals.
    pub framed_fraction: f64,
    pub named: usize,
    pub unknown: usize,
    /// named / instructions, 4 decimals.
    pub named_fraction: f64,
    /// Instructions whose operand fields are not all decoded (unknown ones
    /// included).
    pub operands_incomplete: usize,
    /// Address of the `stop` that ended the walk.
    pub stop_offset: Option<u32>,
    pub stopped: Option<FramingStop>,
}

/// A `loops[]` entry: the analysis's loop, serialized as it is.
pub use agx_analysis::untimed::Loop as LoopRecord;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct MemoryRecord {
    pub offset: u32,
    pub text: String,
    /// The access as decoded (space, dir, elem, components, bytes_per_lane,
    /// data, base, index, shift, byte_offset).
    #[serde(flatten)]
    pub site: agx_analysis::untimed::MemSite,
    /// `uniform` (every lane the same address), `contiguous`, `strided`
    /// or `unknown` (`agx_analysis::lanes`).
    pub lane_pattern: &'static str,
    /// Bytes between consecutive lanes' addresses; `null` when unknown.
    pub lane_stride: Option<i64>,
    pub lane_pattern_reason: Option<String>,
    /// Innermost loop (index into `loops[]`), `null` outside loops.
    #[serde(rename = "loop")]
    pub in_loop: Option<usize>,
}

/// One instruction of an untimed kernel (`instructions_detail[]`): the
/// timed row's identifying fields, its class and cost key from the code
/// table, and `unit`/`cycles` kept as `null` (no timing model applies).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DetailRow {
    pub offset: u32,
    pub size: u8,
    /// `null` for an unknown encoding.
    pub mnemonic: Option<String>,
    pub text: String,
    /// The code table's class (`alu`, `load`, `store`, `control`, …).
    pub class: &'static str,
    /// The timing-table row that would price it (`fma32`, `device_load`,
    /// …); `null` where none is known for the family.
    pub cost_key: Option<&'static str>,
    /// Every operand decoded.
    pub complete: bool,
    pub unit: Option<&'static str>,
    pub cycles: Option<f64>,
    #[serde(rename = "loop")]
    pub in_loop: Option<usize>,
}

fn detail_of(d: &Decoded, owner: &[Option<u32>]) -> Vec<DetailRow> {
    d.insns
        .iter()
        .enumerate()
        .map(|(i, ins)| {
            let row = d.table.as_ref().and_then(|t| t.rows.get(i));
            DetailRow {
                offset: ins.addr,
                size: ins.len,
                mnemonic: ins.mnemonic.clone(),
                text: ins.text.clone(),
                class: row.map_or("todo", |r| r.class.group_name()),
                cost_key: row.and_then(|r| r.cost).map(|k| k.name()),
                complete: ins.complete,
                unit: None,
                cycles: None,
                in_loop: innermost(owner, i),
            }
        })
        .collect()
}

/// Threads per core the register use allows: the timed record's
/// `occupancy` object, whose figures stay `null` where no rule is known,
/// with the reason.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Occupancy {
    pub threads: Option<u32>,
    pub percent: Option<f64>,
    pub reason: String,
}

impl Occupancy {
    /// No occupancy rule applies to `isa`'s GPUs (Apple9: Dynamic Caching).
    pub fn unknown(isa: &Isa) -> Occupancy {
        Occupancy {
            threads: None,
            percent: None,
            reason: format!(
                "no figure: on {} GPUs Dynamic Caching allocates registers as the code runs, so register use no longer sets how many SIMD-groups a core runs (Apple tech talk 111375), and no public rule gives the number",
                isa.describe
            ),
        }
    }
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct WaitRecord {
    pub offset: u32,
    pub mnemonic: String,
    /// The output wait group field (`g`) as decoded.
    pub wait_group: Option<u8>,
    /// The wait groups waited on, as decoded.
    pub waits_on: Vec<u8>,
    #[serde(rename = "loop")]
    pub in_loop: Option<usize>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct UnknownRecord {
    pub offset: u32,
    pub bytes: u8,
    /// `unknown_encoding` or `undecoded_operands`.
    pub kind: &'static str,
    pub text: String,
}

/// A CFG block of main (`blocks[]`: the graph view's nodes).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct BlockRecord {
    pub index: usize,
    /// Addresses of its first and last instruction.
    pub start: u32,
    pub end: u32,
    pub instructions: usize,
    /// Blocks it goes to (indices into `blocks[]`).
    pub successors: Vec<usize>,
    /// Those of them reached by a loop's back edge (to the loop's header).
    pub back_successors: Vec<usize>,
    /// Innermost loop (index into `loops[]`), `null` outside loops.
    #[serde(rename = "loop")]
    pub in_loop: Option<usize>,
}

/// The sections of a kernel no timing model applies to
/// ([`KernelRecord::untimed`]): what the family's decoder and the untimed
/// analysis know and a timed kernel has no field for.
#[derive(Clone, Debug, Serialize)]
pub struct UntimedSections {
    /// The instruction-set family (`Apple9`) and its description.
    pub isa: &'static str,
    pub isa_name: &'static str,
    pub timing: Timing,
    pub framing: Framing,
    /// The CFG's summary (the timed analysis's type).
    pub cfg: agx_analysis::CfgSummary,
    pub irreducible: Vec<agx_analysis::IrreducibleSummary>,
    pub registers: Registers,
    pub occupancy: Occupancy,
    pub loops: Vec<LoopRecord>,
    /// Relative cost per region in issue slots, not cycles, dearest first
    /// (`agx_analysis::untimed::Region`).
    pub regions: Vec<agx_analysis::untimed::Region>,
    pub memory: Vec<MemoryRecord>,
    pub waits: Vec<WaitRecord>,
    pub unknowns: Vec<UnknownRecord>,
    /// Instructions per mnemonic (`unknown` for unknown encodings).
    pub mix: BTreeMap<String, usize>,
    pub blocks: Vec<BlockRecord>,
    /// One row per instruction, by offset.
    pub instructions_detail: Vec<DetailRow>,
    /// Main and every function the CFG finds, with its branches.
    pub functions: Vec<FunctionRecord>,
    /// if/loop counts of the functions' branches.
    pub divergence: agx_analysis::divergence::Counts,
}

/// A `functions[]` entry: the timed kernel's keys (cycle and stack
/// figures `null`: no timing model, no stack analysis for the family).
#[derive(Clone, Debug, Serialize)]
pub struct FunctionRecord {
    pub entry: u32,
    pub symbol: Option<String>,
    pub display_name: String,
    pub main: bool,
    pub instructions: usize,
    pub code_bytes: u64,
    pub highest_half_index: Option<u32>,
    pub allocated_half: Option<u32>,
    pub peak_live_half: Option<u32>,
    pub peak_live_offset: Option<u32>,
    pub spills: Option<u32>,
    pub fills: Option<u32>,
    pub stack_kinds: Option<()>,
    pub scratch_reserved: Option<i32>,
    pub loops: usize,
    pub own_cycles: Option<f64>,
    pub total_cycles: Option<f64>,
    /// `false` when the code makes no call; `null` otherwise (calls are
    /// not followed for the family).
    pub recursive: Option<bool>,
    pub live_in: Option<()>,
    pub suggestions: Vec<crate::record::SuggestionOut>,
    pub branches: Vec<agx_analysis::uniformity::TableBranch>,
    pub divergence: agx_analysis::divergence::Counts,
}

/// The `$defs/untimed_kernel` object: every key of the timed kernel
/// (`$defs/kernel`), in its order, with the shapes it has there; a
/// cycle-bearing key (and a fact this family's analysis does not give) is
/// kept with `null` (the reason is `timing_note` / `timing.reason`); then
/// the keys only this family's record has (`isa`, `isa_name`, `timing`,
/// `framing`, `memory`, `waits`, `unknowns`).
#[derive(Serialize)]
pub struct UntimedJson<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<&'a str>,
    gpu: Option<&'a str>,
    gpu_name: Option<&'a str>,
    timing_note: Option<&'a str>,
    unknown_encodings: usize,
    instructions: usize,
    code_bytes: u64,
    registers: RegistersJson<'a>,
    occupancy: &'a Occupancy,
    spills: Option<u32>,
    fills: Option<u32>,
    stack_kinds: Option<()>,
    scratch_reserved: Option<i32>,
    backward_branches: usize,
    loops: Vec<LoopJson<'a>>,
    irreducible: &'a [agx_analysis::IrreducibleSummary],
    cfg: CfgJson<'a>,
    cycles: Option<()>,
    total_cycles: Option<f64>,
    breakdown: Option<()>,
    paths: Option<()>,
    mesa_estimate: Option<()>,
    bottleneck: Option<&'a str>,
    bound_by: Option<&'a str>,
    bottleneck_unit: Option<&'a str>,
    bottleneck_detail: Option<()>,
    straight_line: Option<()>,
    regions: &'a [agx_analysis::untimed::Region],
    blocks: &'a [BlockRecord],
    model: Option<()>,
    prolog: Option<()>,
    mix: MixJson,
    raised_instructions: Option<usize>,
    suggestions: &'a [crate::record::SuggestionOut],
    calls: &'a [crate::record::CallOut],
    functions: &'a [FunctionRecord],
    call_assumptions: &'a [String],
    divergence: agx_analysis::divergence::Counts,
    divergence_paths: Option<()>,
    instructions_detail: &'a [DetailRow],
    isa: &'static str,
    isa_name: &'static str,
    timing: &'a Timing,
    framing: &'a Framing,
    memory: &'a [MemoryRecord],
    waits: &'a [WaitRecord],
    unknowns: &'a [UnknownRecord],
}

/// `registers`: the timed kernel's keys (an allocation figure is `null`:
/// no allocation rule is known for the family), then the family's own.
#[derive(Serialize)]
struct RegistersJson<'a> {
    highest_half_index: Option<u32>,
    allocated_half: Option<u32>,
    peak_live_half: Option<u32>,
    peak_live_offset: Option<u32>,
    uniform_half: u32,
    peak_live_registers: Option<()>,
    allocated_gprs: Option<u32>,
    peak_live_gprs: Option<u32>,
    file_half: u32,
    highest_gpr: Option<u32>,
    highest_register: Option<&'a str>,
    uniform_gprs: u32,
    file_gprs: u32,
    gprs_touched: u32,
    highest_uniform_half: Option<u32>,
    lower_bound: bool,
    lower_bound_reasons: &'a [String],
    exceeds_file: bool,
}

impl<'a> RegistersJson<'a> {
    fn of(r: &'a Registers) -> Self {
        RegistersJson {
            highest_half_index: r.highest_half_index,
            allocated_half: None,
            peak_live_half: r.peak_live_half,
            peak_live_offset: r.peak_live_offset,
            uniform_half: r.uniform_half,
            peak_live_registers: None,
            allocated_gprs: None,
            peak_live_gprs: r.peak_live_gprs,
            file_half: r.file_half,
            highest_gpr: r.highest_gpr,
            highest_register: r.highest_register.as_deref(),
            uniform_gprs: r.uniform_gprs,
            file_gprs: r.file_gprs,
            gprs_touched: r.gprs_touched,
            highest_uniform_half: r.highest_uniform_half,
            lower_bound: r.lower_bound,
            lower_bound_reasons: &r.lower_bound_reasons,
            exceeds_file: r.exceeds_file,
        }
    }
}

/// A `loops[]` entry: the timed kernel's keys (the trip count is the
/// assumed one the regions use; cycle figures `null`), then the family's.
#[derive(Serialize)]
struct LoopJson<'a> {
    index: usize,
    start: u32,
    end: u32,
    depth: u32,
    instructions: usize,
    header: u32,
    latches: &'a agx_analysis::Addrs,
    exits: &'a agx_analysis::Addrs,
    blocks: usize,
    trip_count: u32,
    trip_count_source: &'static str,
    trip_count_max: Option<u32>,
    trip_count_bound: Option<&'a str>,
    cycles_per_iteration: Option<f64>,
    latency_bound_cycles: Option<f64>,
    nested_cycles: Option<f64>,
    bottleneck: Option<&'a str>,
    bound: Option<()>,
    body: Option<()>,
    parent: Option<usize>,
    operands_incomplete: usize,
    memory: &'a [u32],
    waits: &'a [u32],
}

impl<'a> LoopJson<'a> {
    fn of(l: &'a LoopRecord) -> Self {
        LoopJson {
            index: l.index,
            start: l.start,
            end: l.end,
            depth: l.depth,
            instructions: l.instructions,
            header: l.header,
            latches: &l.latches,
            exits: &l.exits,
            blocks: l.blocks,
            trip_count: l.trip_count,
            trip_count_source: l.trip.source,
            trip_count_max: l.trip.count,
            trip_count_bound: l.trip.bound.as_deref(),
            cycles_per_iteration: None,
            latency_bound_cycles: None,
            nested_cycles: None,
            bottleneck: None,
            bound: None,
            body: None,
            parent: l.parent,
            operands_incomplete: l.operands_incomplete,
            memory: &l.memory,
            waits: &l.waits,
        }
    }
}

/// `cfg`: the timed kernel's object (`outside_targets`: branch targets
/// outside the code, the unresolved ones here).
#[derive(Serialize)]
struct CfgJson<'a> {
    blocks: usize,
    edges: usize,
    calls: &'a [agx_analysis::CallSummary],
    unresolved_targets: &'a [(u32, i64)],
    max_exec_depth: u16,
    outside_targets: usize,
}

/// `mix`: per mnemonic, most used first (as the timed kernel's); `by_unit`
/// is `null` (no unit table for the family); `by_class` counts the code
/// table's classes.
#[derive(Serialize)]
struct MixJson {
    by_unit: Option<()>,
    by_mnemonic: Vec<MixCount>,
    by_class: BTreeMap<&'static str, usize>,
}

#[derive(Serialize)]
struct MixCount {
    mnemonic: String,
    count: usize,
}

impl UntimedSections {
    /// The JSON object of `r`, whose sections these are.
    pub fn json<'a>(&'a self, r: &'a KernelRecord) -> UntimedJson<'a> {
        let mut by_mnemonic: Vec<MixCount> = self
            .mix
            .iter()
            .map(|(m, &count)| MixCount {
                mnemonic: m.clone(),
                count,
            })
            .collect();
        by_mnemonic.sort_by(|a, b| b.count.cmp(&a.count).then(a.mnemonic.cmp(&b.mnemonic)));
        let mut by_class = BTreeMap::new();
        for d in &self.instructions_detail {
            *by_class.entry(d.class).or_insert(0) += 1;
        }
        UntimedJson {
            name: &r.name,
            source: r.source.as_deref(),
            gpu: r.gpu.as_deref(),
            gpu_name: r.gpu_name.as_deref(),
            timing_note: Some(&self.timing.reason),
            unknown_encodings: r.unknown_encodings,
            instructions: r.instructions,
            code_bytes: r.code_bytes,
            registers: RegistersJson::of(&self.registers),
            occupancy: &self.occupancy,
            spills: None,
            fills: None,
            stack_kinds: None,
            scratch_reserved: None,
            backward_branches: r.backward_branches,
            loops: self.loops.iter().map(LoopJson::of).collect(),
            irreducible: &self.irreducible,
            cfg: CfgJson {
                blocks: self.cfg.blocks,
                edges: self.cfg.edges,
                calls: &self.cfg.calls,
                unresolved_targets: &self.cfg.unresolved_targets,
                max_exec_depth: self.cfg.max_exec_depth,
                outside_targets: self.cfg.unresolved_targets.len(),
            },
            cycles: None,
            total_cycles: None,
            breakdown: None,
            paths: None,
            mesa_estimate: None,
            bottleneck: None,
            bound_by: None,
            bottleneck_unit: None,
            bottleneck_detail: None,
            straight_line: None,
            regions: &self.regions,
            blocks: &self.blocks,
            model: None,
            prolog: None,
            mix: MixJson {
                by_unit: None,
                by_mnemonic,
                by_class,
            },
            raised_instructions: None,
            suggestions: &r.suggestions,
            calls: &r.calls,
            functions: &self.functions,
            call_assumptions: &r.call_assumptions,
            divergence: self.divergence,
            divergence_paths: None,
            instructions_detail: &self.instructions_detail,
            isa: self.isa,
            isa_name: self.isa_name,
            timing: &self.timing,
            framing: &self.framing,
            memory: &self.memory,
            waits: &self.waits,
            unknowns: &self.unknowns,
        }
    }
}

/// The reason no timing figure is given, for `isa`.
pub fn timing_reason(isa: &Isa) -> String {
    format!(
        "no timing model applies to {} code: no per-instruction cycle measurements exist for it, so this profile gives counts and structure and no cycle figure",
        isa.describe
    )
}

fn memory_of(isa: &Isa, d: &Decoded, u: &Untimed) -> Vec<MemoryRecord> {
    let owner = &u.owner;
    d.insns
        .iter()
        .enumerate()
        .filter_map(|(i, ins)| {
            let m = ins.mem.as_ref()?;
            // (lane facts come in instruction order)
            let lane = u
                .lanes
                .binary_search_by_key(&i, |(k, _)| *k)
                .ok()
                .map(|k| &u.lanes[k].1);
            let (pattern, stride, reason) = match lane {
                Some(f) => (
                    f.pattern,
                    f.lane_stride,
                    f.reason.map(|r| {
                        if m.lane_registers.is_empty() {
                            r.to_string()
                        } else {
                            format!(
                                "{r} (per-lane register{} {})",
                                if m.lane_registers.len() == 1 { "" } else { "s" },
                                m.lane_registers.join(", ")
                            )
                        }
                    }),
                ),
                None if m.uniform_address => ("uniform", Some(0), None),
                None => (
                    "unknown",
                    None,
                    Some(format!("no lane analysis for {} code", isa.name)),
                ),
            };
            Some(MemoryRecord {
                offset: ins.addr,
                text: ins.text.clone(),
                site: m.clone(),
                lane_pattern: pattern,
                lane_stride: stride,
                lane_pattern_reason: reason,
                in_loop: innermost(owner, i),
            })
        })
        .collect()
}

/// The innermost loop of instruction `i` (the analysis's loop nest).
fn innermost(owner: &[Option<u32>], i: usize) -> Option<usize> {
    owner.get(i).copied().flatten().map(|l| l as usize)
}

fn framing_of(d: &Decoded) -> Framing {
    Framing {
        input_bytes: d.input_bytes,
        code_bytes: d.code_bytes,
        framed_bytes: d.framed_bytes,
        gap_bytes: d.gap_bytes,
        framed_fraction: r4(d.framed_fraction()),
        named: d.named(),
        unknown: d.unknown(),
        named_fraction: r4(d.named_fraction()),
        operands_incomplete: d.incomplete(),
        stop_offset: d.stop,
        stopped: d.framing_stop.as_ref().map(|s| FramingStop {
            offset: s.addr,
            reason: s.reason.clone(),
        }),
    }
}

fn blocks_of(u: &Untimed) -> Vec<BlockRecord> {
    u.cfg
        .blocks
        .iter()
        .enumerate()
        .map(|(k, b)| BlockRecord {
            index: k,
            start: b.start,
            end: b.last,
            instructions: b.len(),
            successors: b.succs.iter().map(|e| e.to).collect(),
            back_successors: b
                .succs
                .iter()
                .map(|e| e.to)
                .filter(|&t| u.back_edges.contains(&(k, t)))
                .collect(),
            in_loop: innermost(&u.owner, b.insns.start),
        })
        .collect()
}

/// One `functions[]` entry per function the CFG finds (main first), with
/// the branches inside it and their counts.
fn functions_of(name: &str, d: &Decoded, u: &Untimed) -> Vec<FunctionRecord> {
    let func_of = |i: usize| u.cfg.blocks[u.cfg.block_of[i] as usize].function;
    u.cfg
        .functions
        .iter()
        .enumerate()
        .map(|(k, f)| {
            let main = k == 0;
            let branches: Vec<_> = u
                .uniformity
                .branches
                .iter()
                .filter(|b| func_of(b.index) == Some(k))
                .cloned()
                .collect();
            let mut divergence = agx_analysis::uniformity::counts_of(&branches);
            if main {
                divergence.uniform_loads = u.uniformity.counts.uniform_loads;
            }
            let rows = (0..d.insns.len()).filter(|&i| func_of(i) == Some(k));
            let code_bytes = rows.clone().map(|i| d.insns[i].len as u64).sum();
            FunctionRecord {
                entry: f.entry,
                symbol: None,
                display_name: if main {
                    name.to_string()
                } else {
                    format!("function at 0x{:x}", f.entry)
                },
                main,
                instructions: f.instructions,
                code_bytes,
                highest_half_index: u.registers.highest_half_index.filter(|_| main),
                allocated_half: None,
                peak_live_half: u.registers.peak_live_half.filter(|_| main),
                peak_live_offset: u.registers.peak_live_offset.filter(|_| main),
                spills: None,
                fills: None,
                stack_kinds: None,
                scratch_reserved: None,
                loops: u
                    .loops
                    .iter()
                    .filter(|l| {
                        d.insns
                            .iter()
                            .position(|i| i.addr == l.header)
                            .is_some_and(|i| func_of(i) == Some(k))
                    })
                    .count(),
                own_cycles: None,
                total_cycles: None,
                recursive: u.cfg.calls.is_empty().then_some(false),
                live_in: None,
                suggestions: if main {
                    crate::record::suggestions_out(&u.suggestions)
                } else {
                    Vec::new()
                },
                branches,
                divergence,
            }
        })
        .collect()
}

impl KernelRecord {
    /// The record of a kernel no timing model applies to: `d` (the
    /// family's decoding) analysed as `u`, for family `isa`. The fields a
    /// timed kernel shares (`name`, `gpu`, `instructions`, `code_bytes`,
    /// `backward_branches`, `unknown_encodings`) are filled; `timing` is
    /// `None`; the rest is in [`KernelRecord::untimed`].
    pub fn build_untimed(
        name: String,
        gpu: Option<String>,
        isa: &'static Isa,
        d: &Decoded,
        u: &Untimed,
    ) -> KernelRecord {
        let waits = d
            .insns
            .iter()
            .enumerate()
            .filter(|(_, ins)| ins.carries_waits())
            .map(|(i, ins)| WaitRecord {
                offset: ins.addr,
                mnemonic: ins.mnemonic.clone().unwrap_or_default(),
                wait_group: ins.wait_group,
                waits_on: ins.waits_on.clone(),
                in_loop: innermost(&u.owner, i),
            })
            .collect();
        let unknowns = d
            .insns
            .iter()
            .filter(|i| !i.complete)
            .map(|i| UnknownRecord {
                offset: i.addr,
                bytes: i.len,
                kind: if i.mnemonic.is_none() {
                    "unknown_encoding"
                } else {
                    "undecoded_operands"
                },
                text: i.text.clone(),
            })
            .collect();
        let mut mix = BTreeMap::new();
        for i in &d.insns {
            *mix.entry(i.mnemonic.clone().unwrap_or_else(|| "unknown".into()))
                .or_insert(0) += 1;
        }
        let sections = UntimedSections {
            isa: isa.name,
            isa_name: isa.describe,
            timing: Timing {
                model: None,
                reason: timing_reason(isa),
            },
            framing: framing_of(d),
            cfg: u.summary.clone(),
            irreducible: u.irreducible.clone(),
            registers: u.registers.clone(),
            occupancy: Occupancy::unknown(isa),
            loops: u.loops.clone(),
            regions: u.regions.clone(),
            memory: memory_of(isa, d, u),
            waits,
            unknowns,
            mix,
            blocks: blocks_of(u),
            instructions_detail: detail_of(d, &u.owner),
            functions: functions_of(name.as_str(), d, u),
            divergence: u.uniformity.counts,
        };
        // (the timed-family sections stay empty: `Default`)
        let suggestions = crate::record::suggestions_out(&u.suggestions);
        KernelRecord {
            suggestions,
            name,
            gpu,
            unknown_encodings: d.unknown(),
            instructions: d.insns.len(),
            code_bytes: d.code_bytes as u64,
            backward_branches: u.backward_branches,
            untimed: Some(Box::new(sections)),
            ..KernelRecord::default()
        }
    }
}

/// The JSON document (schema `metal-profiler/1`, `kernels[]` of
/// `$defs/untimed_kernel`).
pub fn json_document(records: &[KernelRecord]) -> String {
    let doc = serde_json::json!({
        "schema": crate::json::SCHEMA,
        "tool": { "name": "metal-profiler", "version": env!("CARGO_PKG_VERSION") },
        "kernels": records,
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

fn pct(f: f64) -> String {
    format!("{:.1}%", f * 100.0)
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn waits_text(w: &WaitRecord) -> String {
    let mut parts = Vec::new();
    if let Some(g) = w.wait_group {
        parts.push(format!("wait group field g={g}"));
    }
    if !w.waits_on.is_empty() {
        let g: Vec<String> = w.waits_on.iter().map(|x| x.to_string()).collect();
        parts.push(format!("waits on {}", g.join(", ")));
    }
    parts.join("; ")
}

fn mem_line(m: &MemoryRecord) -> String {
    let a = &m.site;
    let mut s = format!(
        "{}  {} {} {}×{} = {} B/lane, data {}, base {}, index {}{}{}",
        crate::profile::Addr {
            addr: m.offset,
            width: 6
        },
        a.space.name(),
        a.dir.name(),
        a.components,
        a.elem,
        a.bytes_per_lane,
        if a.data.is_empty() { "-" } else { &a.data },
        a.base,
        a.index,
        if a.shift != 0 {
            format!(" << {}", a.shift)
        } else {
            String::new()
        },
        if a.offset != 0 {
            format!(" + {}", a.offset)
        } else {
            String::new()
        },
    );
    let _ = write!(s, "; lanes: {}", m.lane_pattern);
    if let (Some(k), "strided" | "contiguous") = (m.lane_stride, m.lane_pattern) {
        let _ = write!(s, ", {k} B apart");
    }
    if let Some(r) = &m.lane_pattern_reason {
        let _ = write!(s, " ({r})");
    }
    s
}

/// Every function's branches with their verdicts (`functions[].branches`).
fn all_branches(
    u: &UntimedSections,
) -> impl Iterator<Item = &agx_analysis::uniformity::TableBranch> {
    u.functions.iter().flat_map(|f| &f.branches)
}

fn verdict_word(b: &agx_analysis::uniformity::TableBranch) -> &'static str {
    match b.uniform {
        Some(true) => "uniform",
        Some(false) => "divergent",
        None => "unknown",
    }
}

fn branches_summary(u: &UntimedSections) -> String {
    let (mut uni, mut div, mut unk) = (0, 0, 0);
    for b in all_branches(u) {
        match b.uniform {
            Some(true) => uni += 1,
            Some(false) => div += 1,
            None => unk += 1,
        }
    }
    format!("{uni} uniform, {div} divergent, {unk} unknown")
}

fn branches_text(o: &mut String, u: &UntimedSections) {
    let _ = writeln!(
        o,
        "\nBranches (from the code table: {})",
        branches_summary(u)
    );
    if all_branches(u).next().is_none() {
        let _ = writeln!(o, "  none");
    }
    for b in all_branches(u) {
        let _ = writeln!(
            o,
            "  {}  {:<6} {:<9} {}",
            crate::profile::Addr {
                addr: b.at,
                width: 6
            },
            b.kind.name(),
            verdict_word(b),
            b.reason
        );
    }
}

fn suggestions_html(o: &mut String, r: &KernelRecord) {
    use crate::html::esc;
    o.push_str(
        "<h3>Suggestions (from the code table's facts; shares in issue slots, not cycles)</h3>\n",
    );
    if r.suggestions.is_empty() {
        o.push_str("<p>none from the rules that run without a timing model</p>\n");
        return;
    }
    o.push_str("<ul>\n");
    for s in &r.suggestions {
        let _ = writeln!(
            o,
            "<li>{} {} <span class=\"mono\">[0x{:x}]</span><br><small>fact: {}</small></li>",
            s.severity.icon(),
            esc(&s.message),
            s.offset,
            esc(&s.fact)
        );
    }
    o.push_str("</ul>\n");
}

fn branches_html(o: &mut String, u: &UntimedSections) {
    use crate::html::esc;
    let _ = writeln!(o, "<h3>Branches ({})</h3>", esc(&branches_summary(u)));
    if all_branches(u).next().is_none() {
        o.push_str("<p>none</p>\n");
        return;
    }
    o.push_str("<table><tr><th>Offset</th><th>Kind</th><th>Verdict</th><th>Why</th></tr>\n");
    for b in all_branches(u) {
        let _ = writeln!(
            o,
            "<tr><td class=\"mono\">0x{:x}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            b.at,
            b.kind.name(),
            verdict_word(b),
            esc(&b.reason)
        );
    }
    o.push_str("</table>\n");
}

/// The text report.
pub fn text(r: &KernelRecord) -> String {
    let mut o = String::new();
    let Some(u) = r.untimed.as_deref() else {
        return o;
    };
    let _ = writeln!(
        o,
        "{} — {} code{}",
        r.name,
        u.isa_name,
        r.gpu
            .as_deref()
            .map_or(String::new(), |g| format!(" ({g})"))
    );
    let _ = writeln!(o, "timing: none. {}.", u.timing.reason);
    if let Some(h) = u.regions.first() {
        let _ = writeln!(
            o,
            "hot region: {}, {}% of issue slots (issue slots, not cycles; a loop runs its proved trip count, else {} times, assumed)",
            h.name,
            h.share_pct,
            agx_analysis::untimed::ASSUMED_TRIP_COUNT
        );
    }
    text_code(&mut o, r, u);
    text_registers(&mut o, u);
    text_regions(&mut o, u);
    text_loops(&mut o, u);
    branches_text(&mut o, u);
    text_waits(&mut o, u);
    text_suggestions(&mut o, r);
    text_not_known(&mut o, u);
    o
}

/// A loop's trip count as the report words it.
fn trip_words(l: &LoopRecord) -> String {
    let assumed = agx_analysis::untimed::ASSUMED_TRIP_COUNT;
    match (l.trip.source, l.trip.count, l.trip.bound.as_deref()) {
        ("code", Some(n), _) => format!("{n} (proved by the code)"),
        ("bounded", Some(n), _) => {
            format!("at most {n} (proved by one exit test; another can leave earlier), {n} used")
        }
        ("argument", _, Some(b)) => {
            format!("bounded by the uniform register {b} (a kernel argument); {assumed} assumed")
        }
        _ => format!("{assumed} assumed (not proved by the code)"),
    }
}

/// The Code section: counts, framing, CFG and mix.
fn text_code(o: &mut String, r: &KernelRecord, u: &UntimedSections) {
    let f = &u.framing;
    let _ = writeln!(o, "\nCode");
    let _ = writeln!(
        o,
        "  instructions     {} ({} named, {} unknown: {} named)",
        r.instructions,
        f.named,
        f.unknown,
        pct(f.named_fraction)
    );
    let end = match (&f.stopped, f.stop_offset) {
        (Some(s), _) => format!("framing stopped at 0x{:x}: {}", s.offset, s.reason),
        (None, Some(a)) => format!("walk ended by the stop at 0x{a:x}"),
        (None, None) => "no stop: the walk ran to the end of the code".into(),
    };
    let _ = writeln!(
        o,
        "  code bytes       {} ({} framed{}: {}); {end}",
        r.code_bytes,
        f.framed_bytes,
        if f.gap_bytes > 0 {
            format!(" + {} zero bytes skipped", f.gap_bytes)
        } else {
            String::new()
        },
        pct(f.framed_fraction)
    );
    let _ = writeln!(
        o,
        "  CFG              {}, {}, {}, {}, {}",
        plural(u.cfg.blocks, "block", "blocks"),
        plural(u.cfg.edges, "edge", "edges"),
        plural(r.backward_branches, "backward branch", "backward branches"),
        plural(u.cfg.calls.len(), "call", "calls"),
        plural(
            u.cfg.unresolved_targets.len(),
            "unresolved target",
            "unresolved targets"
        ),
    );
    let mut mix: Vec<(&String, &usize)> = u.mix.iter().collect();
    mix.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let mix: Vec<String> = mix.iter().map(|(m, n)| format!("{m} {n}")).collect();
    let _ = writeln!(o, "  mix              {}", mix.join(", "));
}

/// The Registers section.
fn text_registers(o: &mut String, u: &UntimedSections) {
    let g = &u.registers;
    let _ = writeln!(
        o,
        "\nRegisters (from decoded operands; register file {} GPRs per thread)",
        g.file_gprs
    );
    let bound = if g.lower_bound { "at least " } else { "" };
    match (&g.highest_register, g.highest_gpr) {
        (Some(name), Some(h)) => {
            let _ = writeln!(
                o,
                "  highest          {bound}{name} ({bound}{} of {} GPRs; {} touched){}",
                h + 1,
                g.file_gprs,
                g.gprs_touched,
                if g.exceeds_file {
                    " — past the register file"
                } else {
                    ""
                }
            );
        }
        _ => {
            let _ = writeln!(o, "  highest          no GPR operand decoded");
        }
    }
    if let (Some(p), Some(h)) = (g.peak_live_gprs, g.peak_live_half) {
        let _ = writeln!(
            o,
            "  peak live        {bound}{p} GPRs ({h} halves){}",
            g.peak_live_offset
                .map_or(String::new(), |a| format!(" at 0x{a:x}"))
        );
    }
    if g.lower_bound {
        let _ = writeln!(o, "  LOWER BOUND: {}", g.lower_bound_reasons.join("; "));
    }
    let _ = writeln!(o, "  occupancy        {}", u.occupancy.reason);
}

/// The Regions section (issue slots, not cycles).
fn text_regions(o: &mut String, u: &UntimedSections) {
    let _ = writeln!(
        o,
        "\nRegions (issue slots, not cycles: own instructions × the trip count of each enclosing loop, proved or {} assumed)",
        agx_analysis::untimed::ASSUMED_TRIP_COUNT
    );
    for rg in &u.regions {
        let _ = writeln!(
            o,
            "  {:<18} {:>6}%  {} × {} = {} issue slots",
            rg.name,
            rg.share_pct,
            plural(rg.instructions, "instruction", "instructions"),
            rg.executions,
            rg.issue_slots
        );
    }
}

/// Each loop with its memory instructions, then the memory outside loops.
fn text_loops(o: &mut String, u: &UntimedSections) {
    let _ = writeln!(o, "\nLoops");
    if u.loops.is_empty() {
        let _ = writeln!(o, "  none found");
    }
    for l in &u.loops {
        let _ = writeln!(
            o,
            "  Loop {}  0x{:x}–0x{:x}  depth {}, {}, {}{}",
            l.index,
            l.start,
            l.end,
            l.depth,
            plural(l.instructions, "instruction", "instructions"),
            plural(l.blocks, "block", "blocks"),
            if l.operands_incomplete > 0 {
                format!(", {} with undecoded operands", l.operands_incomplete)
            } else {
                String::new()
            }
        );
        let _ = writeln!(o, "    trip count: {}", trip_words(l));
        let ms: Vec<&MemoryRecord> = u
            .memory
            .iter()
            .filter(|m| m.in_loop == Some(l.index))
            .collect();
        if ms.is_empty() {
            let _ = writeln!(o, "    memory: none");
        }
        for m in ms {
            let _ = writeln!(o, "    {}", mem_line(m));
        }
    }
    let outside: Vec<&MemoryRecord> = u.memory.iter().filter(|m| m.in_loop.is_none()).collect();
    if !outside.is_empty() {
        let _ = writeln!(o, "\nMemory outside loops");
        for m in outside {
            let _ = writeln!(o, "  {}", mem_line(m));
        }
    }
}

/// The advice the code table's facts support (no rule needs a cycle figure
/// here).
fn text_suggestions(o: &mut String, r: &KernelRecord) {
    let _ = writeln!(
        o,
        "\nSuggestions (from the code table's facts; shares in issue slots, not cycles)"
    );
    if r.suggestions.is_empty() {
        let _ = writeln!(o, "  none from the rules that run without a timing model");
    }
    for s in &r.suggestions {
        crate::text::plain_suggestion_line(o, "  ", s);
    }
}

/// The wait fields as decoded.
fn text_waits(o: &mut String, u: &UntimedSections) {
    let _ = writeln!(o, "\nWaits (fields in the instruction bits, as decoded)");
    if u.waits.is_empty() {
        let _ = writeln!(o, "  none");
    }
    for w in &u.waits {
        let _ = writeln!(
            o,
            "  {}  {:<14} {}{}",
            crate::profile::Addr {
                addr: w.offset,
                width: 6
            },
            w.mnemonic,
            waits_text(w),
            w.in_loop.map_or(String::new(), |l| format!("  (loop {l})"))
        );
    }
}

/// What is not known.
fn text_not_known(o: &mut String, u: &UntimedSections) {
    let f = &u.framing;
    let _ = writeln!(o, "\nNot known");
    let _ = writeln!(o, "  cycles: no timing model applies (no figure given)");
    if u.unknowns.is_empty() && f.stopped.is_none() {
        let _ = writeln!(
            o,
            "  every instruction framed, named and its operands decoded"
        );
    }
    for u in &u.unknowns {
        let _ = writeln!(
            o,
            "  {}  {} ({} bytes): {}",
            crate::profile::Addr {
                addr: u.offset,
                width: 6
            },
            u.text,
            u.bytes,
            if u.kind == "unknown_encoding" {
                "no source decodes this encoding"
            } else {
                "operand fields not decoded (no public layout); counted as writing every register for liveness"
            }
        );
    }
    if let Some(s) = &f.stopped {
        let _ = writeln!(
            o,
            "  code from 0x{:x} on: not framed ({})",
            s.offset, s.reason
        );
    }
    let unknown_lanes = u
        .memory
        .iter()
        .filter(|m| m.lane_pattern == "unknown")
        .count();
    if unknown_lanes > 0 {
        let _ = writeln!(
            o,
            "  lane patterns: {} of {} memory instructions unknown (per-lane address registers)",
            unknown_lanes,
            u.memory.len()
        );
    }
}

/// The HTML page of `records`.
pub fn html_document(records: &[KernelRecord]) -> String {
    use crate::html::esc;
    let mut o = String::new();
    let title = match records {
        [r] => format!("metal-profiler: {}", r.name),
        _ => format!(
            "metal-profiler: {}",
            crate::profile::count_title(records.iter().map(|_| None))
        ),
    };
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n\
         <style>body{{font-family:system-ui,sans-serif;margin:1.5em;max-width:70em}}\
         table{{border-collapse:collapse;margin:.4em 0}}td,th{{border:1px solid #ccc;padding:.2em .5em;text-align:left}}\
         code,.mono{{font-family:ui-monospace,monospace}}.note{{background:#fff6d5;padding:.4em .7em;border-left:4px solid #e0b000}}\
         .bound{{color:#a40}}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        esc(&title),
        esc(&title)
    );
    for (k, r) in records.iter().enumerate() {
        kernel_html(&mut o, k, r);
    }
    o.push_str("</body>\n</html>\n");
    o
}

fn kernel_html(o: &mut String, k: usize, r: &KernelRecord) {
    use crate::html::esc;
    let Some(u) = r.untimed.as_deref() else {
        return;
    };
    let f = &u.framing;
    let _ = writeln!(
        o,
        "<section id=\"k{k}\"><h2>{}</h2><p>{} code{}</p>",
        esc(&r.name),
        esc(u.isa_name),
        r.gpu
            .as_deref()
            .map_or(String::new(), |g| format!(" ({})", esc(g)))
    );
    let _ = writeln!(
        o,
        "<p class=\"note\">Timing: none. {}.</p>",
        esc(&u.timing.reason)
    );
    let _ = writeln!(o, "<h3>Code</h3><table>");
    let _ = writeln!(
        o,
        "<tr><th>Instructions</th><td>{} ({} named, {} unknown: {} named)</td></tr>",
        r.instructions,
        f.named,
        f.unknown,
        pct(f.named_fraction)
    );
    let _ = writeln!(
        o,
        "<tr><th>Code bytes</th><td>{} ({} framed, {} zero bytes skipped: {})</td></tr>",
        r.code_bytes,
        f.framed_bytes,
        f.gap_bytes,
        pct(f.framed_fraction)
    );
    if let Some(s) = &f.stopped {
        let _ = writeln!(
            o,
            "<tr><th>Framing stopped</th><td>0x{:x}: {}</td></tr>",
            s.offset,
            esc(&s.reason)
        );
    }
    let _ = writeln!(
        o,
        "<tr><th>CFG</th><td>{}, {}, {}, {}</td></tr></table>",
        plural(u.cfg.blocks, "block", "blocks"),
        plural(u.cfg.edges, "edge", "edges"),
        plural(r.backward_branches, "backward branch", "backward branches"),
        plural(
            u.cfg.unresolved_targets.len(),
            "unresolved target",
            "unresolved targets"
        )
    );
    let g = &u.registers;
    let bound = if g.lower_bound { "at least " } else { "" };
    let _ = writeln!(
        o,
        "<h3>Registers</h3><table><tr><th>Register file</th><td>{} GPRs per thread</td></tr>",
        g.file_gprs
    );
    if let (Some(name), Some(h)) = (&g.highest_register, g.highest_gpr) {
        let _ = writeln!(
            o,
            "<tr><th>Highest</th><td>{bound}<code>{}</code> ({bound}{} GPRs; {} touched)</td></tr>",
            esc(name),
            h + 1,
            g.gprs_touched
        );
    }
    if let (Some(p), Some(h)) = (g.peak_live_gprs, g.peak_live_half) {
        let _ = writeln!(
            o,
            "<tr><th>Peak live</th><td>{bound}{p} GPRs ({h} halves){}</td></tr>",
            g.peak_live_offset
                .map_or(String::new(), |a| format!(" at 0x{a:x}"))
        );
    }
    o.push_str("</table>\n");
    if g.lower_bound {
        let _ = writeln!(
            o,
            "<p class=\"bound\">LOWER BOUND: {}</p>",
            esc(&g.lower_bound_reasons.join("; "))
        );
    }
    let _ = writeln!(o, "<h3>Loops</h3>");
    if u.loops.is_empty() {
        o.push_str("<p>none found</p>\n");
    }
    for l in &u.loops {
        let _ = writeln!(
            o,
            "<h4>Loop {} <span class=\"mono\">0x{:x}–0x{:x}</span></h4><p>depth {}, {}, {}</p>",
            l.index,
            l.start,
            l.end,
            l.depth,
            plural(l.instructions, "instruction", "instructions"),
            plural(l.blocks, "block", "blocks")
        );
        mem_table(o, u.memory.iter().filter(|m| m.in_loop == Some(l.index)));
    }
    if u.memory.iter().any(|m| m.in_loop.is_none()) {
        o.push_str("<h3>Memory outside loops</h3>\n");
        mem_table(o, u.memory.iter().filter(|m| m.in_loop.is_none()));
    }
    branches_html(o, u);
    suggestions_html(o, r);
    o.push_str("<h3>Waits (fields in the instruction bits, as decoded)</h3>\n");
    if u.waits.is_empty() {
        o.push_str("<p>none</p>\n");
    } else {
        o.push_str("<table><tr><th>Offset</th><th>Instruction</th><th>Wait fields</th><th>Loop</th></tr>\n");
        for w in &u.waits {
            let _ = writeln!(
                o,
                "<tr><td class=\"mono\">0x{:x}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                w.offset,
                esc(&w.mnemonic),
                esc(&waits_text(w)),
                w.in_loop.map_or(String::new(), |l| l.to_string())
            );
        }
        o.push_str("</table>\n");
    }
    o.push_str(
        "<h3>Not known</h3><ul><li>cycles: no timing model applies (no figure given)</li>\n",
    );
    for u in &u.unknowns {
        let _ = writeln!(
            o,
            "<li class=\"mono\">0x{:x} {} ({} bytes): {}</li>",
            u.offset,
            esc(&u.text),
            u.bytes,
            u.kind
        );
    }
    o.push_str("</ul></section>\n");
}

fn mem_table<'a>(o: &mut String, ms: impl Iterator<Item = &'a MemoryRecord>) {
    use crate::html::esc;
    let ms: Vec<&MemoryRecord> = ms.collect();
    if ms.is_empty() {
        o.push_str("<p>memory: none</p>\n");
        return;
    }
    o.push_str("<table><tr><th>Offset</th><th>Access</th><th>B/lane</th><th>Address</th><th>Lanes</th></tr>\n");
    for m in ms {
        let _ = writeln!(
            o,
            "<tr><td class=\"mono\">0x{:x}</td><td>{} {} {}×{}</td><td>{}</td><td class=\"mono\">{} + {} &lt;&lt; {} + {}</td><td>{}{}</td></tr>",
            m.offset,
            m.site.space.name(),
            m.site.dir.name(),
            m.site.components,
            m.site.elem,
            m.site.bytes_per_lane,
            esc(&m.site.base),
            esc(&m.site.index),
            m.site.shift,
            m.site.offset,
            m.lane_pattern,
            m.lane_pattern_reason
                .as_deref()
                .map_or(String::new(), |r| format!(" ({})", esc(r)))
        );
    }
    o.push_str("</table>\n");
}
