//! The kernel record (issue 29): one owned [`KernelRecord`] per kernel,
//! built once by [`KernelRecord::build`] from the analysis and the timing
//! model, every figure rounded there by the one rule
//! ([`agx_analysis::round`]). The JSON document is this record through
//! serde (with `instructions_detail` streamed beside it, see
//! [`crate::json`]); `batch`, `diff` and Python read its fields, and the
//! figures the views print that no analysis field holds (the cycles main's
//! calls take, a helper's hot spot, the stall marks) are fields here.
//!
//! Contract names (schema `metal-profiler/1`, docs/schema.json): `name`,
//! `gpu`, `instructions`, `code_bytes`, `registers{...}`, `occupancy`,
//! `spills`, `fills`, `loops[{start, end, depth, instructions, ...}]` do not
//! depend on timing; the timed sections (`cycles` ... `model`, the loops'
//! timing fields, `divergence_paths`) are `Option`s, absent for a kernel
//! profiled without a timing model.

use crate::Profile;
use agx_analysis::round::{r2, r4, round};
use agx_analysis::timing::{MemParams, Severity};
use serde::Serialize;

/// The exposed stall (cycles, the record's `stall`) at which the listings
/// mark an instruction `◀◀◀ STALL` (`stall_mark: "exposed"`).
pub const STALL_EXPOSED_CYCLES: f64 = 0.5;

/// The stall of one SIMD-group alone (`stall_single`) at which an
/// instruction whose stall the other SIMD-groups hide is marked
/// (`stall_mark: "hidden"`).
pub const STALL_HIDDEN_CYCLES: f64 = 8.0;

/// The listing mark of an instruction's stall (the record's
/// `instructions_detail[].stall_mark`): every view marks by this.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StallMark {
    /// At least [`STALL_EXPOSED_CYCLES`] left exposed at occupancy.
    Exposed,
    /// [`STALL_HIDDEN_CYCLES`] or more for one SIMD-group alone, hidden by
    /// the other SIMD-groups.
    Hidden,
}

impl StallMark {
    /// The mark of a stall of `exposed` cycles at occupancy and `single`
    /// cycles for one SIMD-group alone.
    pub fn of(exposed: f64, single: f64) -> Option<StallMark> {
        if exposed >= STALL_EXPOSED_CYCLES {
            Some(StallMark::Exposed)
        } else if single >= STALL_HIDDEN_CYCLES {
            Some(StallMark::Hidden)
        } else {
            None
        }
    }
}

/// One kernel, every figure rounded once. A kernel of a family no timing
/// model applies to (Apple9) is one too: built by
/// [`KernelRecord::build_untimed`], its `timing` is `None` and its own
/// sections are in [`KernelRecord::untimed`] (serialized as
/// `$defs/untimed_kernel`, see the `Serialize` impl below).
#[derive(Clone, Debug, Default, Serialize)]
#[serde(remote = "Self")]
pub struct KernelRecord {
    pub name: String,
    /// The input file, in `batch` documents (absent for single runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    pub gpu: Option<String>,
    pub gpu_name: Option<String>,
    pub timing_note: Option<String>,
    pub unknown_encodings: usize,
    pub instructions: usize,
    pub code_bytes: u64,
    pub registers: Registers,
    pub occupancy: Occupancy,
    pub spills: u32,
    pub fills: u32,
    /// Stack accesses by kind (issue 27 item 4).
    pub stack_kinds: agx_analysis::stack_kind::StackKinds,
    pub scratch_reserved: Option<i32>,
    pub backward_branches: usize,
    pub loops: Vec<Loop>,
    pub irreducible: Vec<agx_analysis::IrreducibleSummary>,
    pub cfg: Cfg,
    /// The timed sections (absent without a timing model).
    #[serde(flatten)]
    pub timing: Option<Timed>,
    pub prolog: Option<Prolog>,
    /// Main's instruction mix.
    pub mix: MixOut,
    /// Instructions using encodings applegpu cannot print.
    pub raised_instructions: usize,
    pub suggestions: Vec<SuggestionOut>,
    /// Every call site of the program (issue 12).
    pub calls: Vec<CallOut>,
    /// Main and every function it reaches, each with its own figures.
    pub functions: Vec<FunctionOut>,
    /// Assumptions of the whole-program view (recursion, unresolved calls,
    /// call overhead).
    pub call_assumptions: Vec<String>,
    /// Branch divergence counts over the program's functions (issue 22).
    pub divergence: agx_analysis::divergence::Counts,
    /// Cost when branches go as the divergence analysis says: divergent
    /// ones charge both arms, uniform ones the cheaper / dearer arm.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub divergence_paths: Option<agx_analysis::divergence::DivergenceRange>,
    /// The Memory section's regions (record3: its figures are
    /// `instructions_detail[].access` and `loops[]`; not serialized).
    #[serde(skip)]
    pub memory: MemorySection,
    /// The sections of a kernel no timing model applies to (Apple9:
    /// framing, the named fraction, registers as a lower bound against the
    /// family's file, loops with their memory and waits, the unknown
    /// list; [`crate::untimed`]); `None` for a timed kernel. When set, the
    /// timed-family sections above (`registers`, `occupancy`, `cfg`,
    /// `mix`, `loops`, ...) are empty and the record serializes as
    /// `$defs/untimed_kernel`.
    #[serde(skip)]
    pub untimed: Option<Box<crate::untimed::UntimedSections>>,
}

// ---- fold: one record type for timed and untimed kernels ----

/// A timed kernel serializes as `$defs/kernel` (the derived fields
/// above); an untimed one as `$defs/untimed_kernel`
/// ([`crate::untimed::UntimedSections::json`]).
impl Serialize for KernelRecord {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.untimed {
            Some(u) => u.json(self).serialize(s),
            None => KernelRecord::serialize(self, s),
        }
    }
}

// ---- end fold ----

/// The kernel's timed sections, in the document's order.
#[derive(Clone, Debug, Serialize)]
pub struct Timed {
    pub cycles: Cycles,
    pub total_cycles: f64,
    pub breakdown: Vec<Part>,
    pub paths: Paths,
    pub mesa_estimate: Mesa,
    pub bottleneck: String,
    /// The bound of the kernel's hot spot, `bottleneck_detail.by` (`batch`'s `bound`): a bound
    /// component (`ic`, `device_bandwidth`, ...), `call` or `none`.
    pub bound_by: &'static str,
    /// `bound_by` in words (`device-memory (DRAM) bandwidth`).
    pub bottleneck_unit: &'static str,
    /// The hot spot: the region with the largest `self_share`, its own bound.
    pub bottleneck_detail: BottleneckDetailOut,
    pub straight_line: StraightLine,
    /// Every region of the cost; their `self_cycles` sum to `total_cycles`.
    pub regions: Vec<RegionOut>,
    /// Main's basic blocks with their cycles (sum: `total_cycles`).
    pub blocks: Vec<BlockOut>,
    pub model: Model,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Registers {
    pub highest_half_index: u32,
    pub allocated_half: u32,
    pub peak_live_half: u32,
    pub peak_live_offset: Option<u32>,
    pub uniform_half: u32,
    pub peak_live_registers: Vec<String>,
    /// `allocated_half` in 32-bit registers.
    pub allocated_gprs: u32,
    /// `peak_live_half` in 32-bit registers.
    pub peak_live_gprs: u32,
    /// Half-registers of the register file (the occupancy table's last row).
    pub file_half: u32,
    /// Number of the highest 32-bit GPR (`highest_half_index / 2`).
    pub highest_gpr: u32,
    /// The highest register by name (`r6h`).
    pub highest_register: String,
    /// `uniform_half` in 32-bit uniform registers.
    pub uniform_gprs: u32,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Occupancy {
    pub threads: u32,
    pub percent: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct LoopBody {
    pub instructions: usize,
    pub alu_per_iter: f64,
    pub loads: usize,
    pub stores: usize,
    pub wait_stall: f64,
    pub exposed_stall: f64,
    pub recurrence_cycles: f64,
    pub memory_stall: f64,
    pub bottleneck_unit: &'static str,
    pub bound: Bound,
    /// Sum of every instruction's raw stall per iteration (`stall.raw`).
    pub raw_stall: f64,
    pub stall: Stall,
    /// The runner-up bound (the "next" of `bottleneck`).
    pub next: Next,
    /// Cycles one SIMD-group alone takes per iteration (in-order issue).
    pub single_simd_cycles: f64,
    /// Pipe pressure per iteration.
    pub pipes: Pipes,
}

/// Pipe pressure of one pass of a region: the model's
/// [`agx_analysis::timing::model::PipeCycles`], every figure rounded
/// ([`pipes_of`]).
pub type Pipes = agx_analysis::timing::model::PipeCycles;

fn pipes_of(p: &Pipes) -> Pipes {
    Pipes {
        f32: r2(p.f32),
        f16: r2(p.f16),
        scib: r2(p.scib),
        ic: r2(p.ic),
        mem: r2(p.mem),
        issue: r2(p.issue),
        dram: r2(p.dram),
        raw_penalty: r2(p.raw_penalty),
    }
}

/// Stall per pass of a region, one set of names: `raw` is one SIMD-group
/// alone (before the other SIMD-groups hide it), `exposed` what is left at
/// occupancy; `wait_*` the part of each at memory waits.
#[derive(Clone, Debug, Serialize)]
pub struct Stall {
    pub raw: f64,
    pub exposed: f64,
    pub wait_raw: f64,
    pub wait_exposed: f64,
}

impl Stall {
    fn of(r: &agx_analysis::timing::RegionTiming) -> Stall {
        Stall {
            raw: r2(r.raw_stall),
            exposed: r2(r.exposed_stall),
            wait_raw: r2(r.wait_stall),
            wait_exposed: r2(r.memory_stall),
        }
    }
}

/// The largest bound component after the attaining one.
#[derive(Clone, Debug, Serialize)]
pub struct Next {
    pub by: &'static str,
    pub cycles: f64,
}

impl Next {
    fn of(b: &agx_analysis::timing::Bound) -> Next {
        let (by, cycles) = b.runner_up();
        Next {
            by,
            cycles: r2(cycles.max(0.0)),
        }
    }
}

/// The straight-line code outside loops (once per thread).
#[derive(Clone, Debug, Serialize)]
pub struct StraightLine {
    /// First instruction outside loops (`null` when every one is in a loop).
    pub at: Option<u32>,
    pub instructions: usize,
    pub loads: usize,
    pub stores: usize,
    pub bound: Bound,
    pub next: Next,
    pub stall: Stall,
    pub bottleneck: String,
    /// `bound.by` in words.
    pub bottleneck_unit: &'static str,
    /// Cycles one SIMD-group alone takes for the pass (in-order issue).
    pub single_simd_cycles: f64,
    /// Pipe pressure of the pass.
    pub pipes: Pipes,
}

/// A region of the model ([`agx_analysis::timing::model::Region`]) with its
/// figures rounded ([`region_out`]).
pub type RegionOut = agx_analysis::timing::model::Region;

#[derive(Clone, Debug, Serialize)]
pub struct BlockOut {
    pub index: usize,
    pub start: u32,
    pub end: u32,
    pub cycles: f64,
    pub share: f64,
    pub executions: f64,
    /// Instructions in the block.
    pub instructions: usize,
    /// `cycles / executions`: one execution's cycles.
    pub cycles_per_execution: f64,
}

/// A hot spot: the region with the largest share of a function's cost (the
/// model's [`agx_analysis::timing::model::BottleneckDetail`], rounded by
/// [`bottleneck_detail_of`]).
pub type BottleneckDetailOut = agx_analysis::timing::model::BottleneckDetail;

fn bottleneck_detail_of(d: &BottleneckDetailOut) -> BottleneckDetailOut {
    BottleneckDetailOut {
        cycles: r2(d.cycles),
        share: r4(d.share),
        ..d.clone()
    }
}

/// A cost as the maximum of named bounds (`cycles == max(components)`).
#[derive(Clone, Debug, Serialize)]
pub struct Bound {
    pub by: &'static str,
    pub cycles: f64,
    /// (serialized as an object in alphabetical key order, no map built)
    pub components: agx_analysis::timing::model::Components,
}

impl Bound {
    fn of(b: &agx_analysis::timing::Bound) -> Bound {
        Bound {
            by: b.by,
            cycles: r2(b.cycles),
            components: b.components.map(r2),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Part {
    pub part: agx_analysis::timing::PartKind,
    pub at: u32,
    pub cycles: f64,
    pub executions: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callee: Option<u32>,
    /// `cycles / total_cycles` (0..1, 4 decimals).
    pub share: f64,
    /// A loop part's loop: its `index` in `loops` (absent for the other
    /// parts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loop_index: Option<usize>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Paths {
    pub shortest: f64,
    pub longest: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Loop {
    /// The loop's number in the reports (`Loop 0`, the timing model's order).
    pub index: Option<usize>,
    pub start: u32,
    pub end: u32,
    pub depth: u32,
    pub instructions: usize,
    pub header: u32,
    pub latches: agx_analysis::Addrs,
    pub exits: agx_analysis::Addrs,
    pub blocks: usize,
    pub trip_count: Option<u32>,
    pub trip_count_source: Option<&'static str>,
    /// The most iterations the code allows (`code`: the count; `bounded`:
    /// the proved maximum), when known.
    pub trip_count_max: Option<u32>,
    /// The uniform register holding a kernel-argument bound (`"u6"`).
    pub trip_count_bound: Option<String>,
    pub cycles_per_iteration: Option<f64>,
    pub latency_bound_cycles: Option<f64>,
    /// Cycles of `cycles_per_iteration` that its nested loops take (the
    /// iteration less its own body's).
    pub nested_cycles: Option<f64>,
    pub bottleneck: Option<String>,
    pub bound: Option<Bound>,
    pub body: Option<LoopBody>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Cfg {
    pub blocks: usize,
    pub edges: usize,
    pub calls: Vec<agx_analysis::CallSummary>,
    pub unresolved_targets: Vec<(u32, i64)>,
    pub max_exec_depth: u16,
    /// Unresolved targets less the calls resolved to a helper: targets
    /// outside the code analysed.
    pub outside_targets: usize,
}

/// Main's instruction mix ([`crate::profile::Mix`]).
#[derive(Clone, Debug, Default, Serialize)]
pub struct MixOut {
    /// Instructions per unit, by unit name.
    pub by_unit: serde_json::Map<String, serde_json::Value>,
    /// Instructions per mnemonic, most used first.
    pub by_mnemonic: Vec<MnemonicCount>,
}

#[derive(Clone, Debug, Serialize)]
pub struct MnemonicCount {
    pub mnemonic: &'static str,
    pub count: usize,
}

/// The kernel's weighted per-unit cycles: the model's
/// [`agx_analysis::timing::model::UnitCycles`], every figure rounded.
pub type Cycles = agx_analysis::timing::model::UnitCycles;

#[derive(Clone, Debug, Serialize)]
pub struct Mesa {
    pub alu: u32,
    pub fscib: u32,
    pub ic: u32,
}

#[derive(Clone, Debug, Serialize)]
pub struct Model {
    pub gpu: &'static str,
    /// The chip modelled (`--chip`; the model's default chip otherwise).
    pub chip: &'static str,
    pub measured_on: &'static str,
    pub trip_count: u32,
    /// `"given"` when `--trip-count` was passed, else `"default"`.
    pub trip_count_source: &'static str,
    pub threads_per_core: u32,
    pub simds_per_scheduler: f64,
    pub mem: MemParams,
}

#[derive(Clone, Debug, Serialize)]
pub struct Prolog {
    pub instructions: usize,
    pub code_bytes: u64,
    pub state_stores: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct SuggestionOut {
    pub severity: Severity,
    pub offset: u32,
    pub message: String,
    pub rule: &'static str,
    /// The figures the message cites, by name.
    pub figures: agx_analysis::timing::suggest::Figures,
    /// The fact the rule rests on; the instructions it concerns (issue 27).
    pub fact: String,
    pub sites: Vec<u32>,
}

#[derive(Clone, Debug, Serialize)]
pub struct CallOut {
    /// Address of the `call`.
    pub at: u32,
    /// Absolute target (`null` for a call through a register).
    pub target: Option<i64>,
    pub symbol: Option<String>,
    /// The callee's name in every view (its [`FunctionOut::display_name`];
    /// the symbol for a callee not followed).
    pub display_name: Option<String>,
    pub resolved: bool,
    /// Cycles this call site adds to its caller: executions × the callee's
    /// whole cost.
    pub cycles: f64,
    /// Callee's highest register, spills and fills (its callees included).
    pub highest_half_index: Option<u32>,
    pub spills: Option<u32>,
    pub fills: Option<u32>,
    /// Entry of the calling function.
    pub caller: u32,
    /// Entry of the callee.
    pub callee: Option<u32>,
    pub executions: f64,
    pub cycles_per_call: f64,
    pub recursive: bool,
    pub live_across_half: u32,
}

#[derive(Clone, Debug, Serialize)]
pub struct FunctionOut {
    pub entry: u32,
    pub symbol: Option<String>,
    /// The one name every view shows (demangled symbol, the kernel's Metal
    /// name for main, else `function at 0x..`).
    pub display_name: String,
    pub main: bool,
    pub instructions: usize,
    pub code_bytes: u64,
    pub highest_half_index: u32,
    pub allocated_half: u32,
    pub peak_live_half: u32,
    pub peak_live_offset: Option<u32>,
    pub spills: u32,
    pub fills: u32,
    pub stack_kinds: agx_analysis::stack_kind::StackKinds,
    pub scratch_reserved: Option<i32>,
    pub loops: usize,
    /// Own cost (callees excluded).
    pub own_cycles: f64,
    /// Whole cost of one execution (callees included).
    pub total_cycles: f64,
    pub recursive: bool,
    pub live_in: Vec<String>,
    pub suggestions: Vec<SuggestionOut>,
    /// Every branch, classified uniform or divergent with its reason
    /// (issue 22).
    pub branches: Vec<agx_analysis::divergence::Branch>,
    /// if/loop counts of `branches` (an `if` once, its `else` not again).
    pub divergence: agx_analysis::divergence::Counts,
    /// A called function's own timing (absent for main, whose timing is
    /// the kernel's): its bottleneck sentence (a call-bound kernel's
    /// headline quotes it), the parts of its cost and its loops.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timing: Option<FunctionTiming>,
}

/// The own timing of a called function.
#[derive(Clone, Debug, Serialize)]
pub struct FunctionTiming {
    pub bottleneck: String,
    pub total_cycles: f64,
    pub breakdown: Vec<Part>,
    pub loops: Vec<FunctionLoop>,
    /// Cycles of the kernel's total that main's calls to this function
    /// take (the sum of those call sites' `cycles`; the text report's
    /// "N cy of the kernel's total from main's calls").
    pub cycles_from_main: f64,
    /// The function's hot spot, with its callees (the figures its
    /// `bottleneck` sentence and a call-bound kernel's headline quote).
    pub bottleneck_detail: BottleneckDetailOut,
    /// `bottleneck_detail.share` as the whole percentage the sentence
    /// prints.
    pub bottleneck_percent: f64,
}

/// One loop of a called function.
#[derive(Clone, Debug, Serialize)]
pub struct FunctionLoop {
    pub header: u32,
    pub depth: u32,
    pub trip_count: u32,
    pub cycles_per_iteration: f64,
    /// The iteration's bounds (nested loops included).
    pub bound: Bound,
    /// The own body's bounds.
    pub body_bound: Bound,
}

fn loop_out(tl: Option<&agx_analysis::timing::LoopTiming>, l: &agx_analysis::LoopSummary) -> Loop {
    Loop {
        index: tl.map(|x| x.index),
        start: l.start,
        end: l.end,
        depth: l.depth,
        instructions: l.instructions,
        header: l.header,
        latches: l.latches.clone(),
        exits: l.exits.clone(),
        blocks: l.blocks,
        trip_count: tl.map(|x| x.trip_count),
        trip_count_source: tl.map(|x| x.trip_count_source.as_str()),
        trip_count_max: tl.and_then(|x| x.trip_count_max),
        trip_count_bound: tl.and_then(|x| x.trip_count_bound.clone()),
        cycles_per_iteration: tl.map(|x| r2(x.cycles_per_iteration)),
        latency_bound_cycles: tl.map(|x| r2(x.latency_bound_cycles)),
        nested_cycles: tl.map(|x| r2(x.cycles_per_iteration - x.body.cycles_per_iteration)),
        bottleneck: tl.map(|x| x.bottleneck().to_string()),
        bound: tl.map(|x| Bound::of(&x.bound)),
        body: tl.map(|x| LoopBody {
            instructions: x.body.instructions,
            alu_per_iter: r2(x.body.alu_per_iter),
            loads: x.body.loads,
            stores: x.body.stores,
            wait_stall: r2(x.body.wait_stall),
            exposed_stall: r2(x.body.exposed_stall),
            recurrence_cycles: r2(x.body.recurrence_cycles),
            memory_stall: r2(x.body.memory_stall),
            bottleneck_unit: x.body.bottleneck_unit,
            bound: Bound::of(&x.body.bound),
            raw_stall: r2(x.body.raw_stall),
            stall: Stall::of(&x.body),
            next: Next::of(&x.body.bound),
            single_simd_cycles: r2(x.body.single_simd_iteration_cycles),
            pipes: pipes_of(&x.body.pipes),
        }),
    }
}

fn region_out(r: &agx_analysis::timing::model::Region) -> RegionOut {
    RegionOut {
        cycles_per_execution: r2(r.cycles_per_execution),
        self_cycles: r2(r.self_cycles),
        self_share: r4(r.self_share),
        stall_raw: r2(r.stall_raw),
        stall_exposed: r2(r.stall_exposed),
        ..r.clone()
    }
}

fn block_out(b: &agx_analysis::timing::model::BlockCycles) -> BlockOut {
    BlockOut {
        index: b.index,
        start: b.start,
        end: b.end,
        cycles: r2(b.cycles),
        share: r4(b.share),
        executions: b.executions,
        instructions: b.instructions(),
        cycles_per_execution: b.cycles_per_execution(),
    }
}

/// The parts of a timing's total, each with its share.
fn parts_out(t: &agx_analysis::timing::KernelTiming) -> Vec<Part> {
    t.breakdown
        .iter()
        .map(|b| Part {
            part: b.part,
            at: b.at,
            cycles: r2(b.cycles),
            executions: b.executions,
            callee: b.callee,
            share: t.part_share(b),
            loop_index: b.loop_index,
        })
        .collect()
}

pub(crate) fn suggestions_out(s: &[agx_analysis::timing::Suggestion]) -> Vec<SuggestionOut> {
    s.iter()
        .map(|s| SuggestionOut {
            severity: s.severity,
            offset: s.offset,
            message: s.message.clone(),
            rule: s.rule,
            figures: s.figures.clone(),
            fact: s.fact.clone(),
            sites: s.sites.clone(),
        })
        .collect()
}

fn calls_out(p: &Profile) -> Vec<CallOut> {
    let prog = &p.program;
    prog.calls
        .iter()
        .map(|c| {
            let callee = c.callee.and_then(|k| prog.functions.get(k));
            CallOut {
                at: c.at,
                target: c.target,
                symbol: c.symbol.clone(),
                display_name: callee.map(|f| f.label()).or_else(|| c.symbol.clone()),
                resolved: c.resolved,
                cycles: r2(c.cycles),
                highest_half_index: callee.map(|f| f.inclusive.highest_half_index),
                spills: callee.map(|f| f.inclusive.spills),
                fills: callee.map(|f| f.inclusive.fills),
                caller: prog.functions[c.caller].entry,
                callee: callee.map(|f| f.entry),
                executions: r2(c.executions),
                cycles_per_call: r2(c.callee_cycles),
                recursive: c.recursive,
                live_across_half: c.live_across_half,
            }
        })
        .collect()
}

fn functions_out(p: &Profile) -> Vec<FunctionOut> {
    let prog = &p.program;
    prog.functions
        .iter()
        .enumerate()
        .map(|(k, f)| {
            let a = &f.analysis;
            FunctionOut {
                entry: f.entry,
                symbol: f.symbol.clone(),
                display_name: f.label(),
                main: k == 0,
                instructions: a.instructions,
                code_bytes: a.code_bytes,
                highest_half_index: a.registers.highest_half_index,
                allocated_half: a.registers.allocated_half,
                peak_live_half: a.registers.peak_live_half,
                peak_live_offset: a.registers.peak_live_offset,
                spills: a.spills,
                fills: a.fills,
                stack_kinds: a.stack_kinds,
                scratch_reserved: a.stack.scratch_reserved,
                // (main's loop list moved into the kernel's analysis)
                loops: if k == 0 {
                    p.analysis.loops.len()
                } else {
                    a.loops.len()
                },
                own_cycles: r2(f.timing.total_cycles),
                total_cycles: r2(f.inclusive.total_cycles),
                recursive: f.recursive,
                live_in: f.entry_live_registers(),
                // main's suggestions are the kernel's `suggestions`
                suggestions: if k == 0 {
                    suggestions_out(&p.suggestions)
                } else {
                    suggestions_out(&f.suggestions)
                },
                branches: f.divergence.branches.clone(),
                divergence: f.divergence.counts,
                timing: (k > 0).then(|| {
                    let t = &f.timing;
                    // (the hot spot with the function's own calls: the
                    // figures of the sentence a call-bound kernel quotes)
                    let detail = bottleneck_detail_of(&t.bottleneck_detail);
                    FunctionTiming {
                        bottleneck: t.bottleneck.clone(),
                        total_cycles: r2(t.total_cycles),
                        breakdown: parts_out(t),
                        loops: t
                            .loops
                            .iter()
                            .map(|l| FunctionLoop {
                                header: l.header,
                                depth: l.depth,
                                trip_count: l.trip_count,
                                cycles_per_iteration: r2(l.cycles_per_iteration),
                                bound: Bound::of(&l.bound),
                                body_bound: Bound::of(&l.body.bound),
                            })
                            .collect(),
                        cycles_from_main: r2(prog
                            .calls
                            .iter()
                            .filter(|c| c.caller == 0 && c.callee == Some(k))
                            .map(|c| c.cycles)
                            .sum()),
                        bottleneck_percent: round(100.0 * detail.share, 0),
                        bottleneck_detail: detail,
                    }
                }),
            }
        })
        .collect()
}

impl KernelRecord {
    /// The call sites of the function entered at `entry`, as every view
    /// prints them: `0x1c`, `0x1c ×4`, `0x30 (recursive)`, comma-separated.
    pub fn call_sites_of(&self, entry: u32) -> String {
        let sites: Vec<String> = self
            .calls
            .iter()
            .filter(|c| c.callee == Some(entry))
            .map(|c| {
                let n = if c.executions != 1.0 {
                    format!(" ×{}", agx_analysis::timing::model::fmt_cy(c.executions))
                } else {
                    String::new()
                };
                let r = if c.recursive { " (recursive)" } else { "" };
                format!("0x{:x}{n}{r}", c.at)
            })
            .collect();
        sites.join(", ")
    }

    /// The trip count of the timed loop `index` (the model's loop of a
    /// forest loop, `FunctionGraph::loop_timing`), when the record has one.
    pub fn trip_of_timed_loop(&self, index: Option<usize>) -> Option<u32> {
        self.timed_loop(index?)?.trip_count
    }

    /// The loop whose timing is the model's loop `i` (`Loop::index`): loop
    /// `k` of the record is loop `k` of the model (one forest; the model's
    /// `LoopTiming::index` is its position), so this is one look-up (a
    /// view asking for every part of the breakdown used to scan every
    /// loop each time: quadratic on loop-dense code).
    pub fn timed_loop(&self, i: usize) -> Option<&Loop> {
        self.loops.get(i).filter(|l| l.index == Some(i))
    }

    /// Where the loops' trip counts come from, worded from each loop's
    /// `trip_count_source` and the model's `trip_count` (text header, HTML
    /// header, DOT title): `trip counts: 2 from the code, 1 assumed 16 (no
    /// bound found; set with --trip-count ADDR=N)`; `no loops` without.
    pub fn trip_count_summary(&self) -> String {
        let Some(m) = self.timing.as_ref().map(|t| &t.model) else {
            return String::new();
        };
        let given = m.trip_count_source == "given";
        let t = m.trip_count;
        let n = |s: &str| {
            self.loops
                .iter()
                .filter(|l| l.trip_count_source == Some(s))
                .count()
        };
        let mut parts = Vec::new();
        let mut add = |k: usize, what: String| {
            if k > 0 {
                parts.push(format!("{k} {what}"));
            }
        };
        add(n("code"), "from the code".into());
        add(n("bounded"), "bounded by the code".into());
        add(n("user"), "set per loop with --trip-count ADDR=N".into());
        add(
            n("argument"),
            if given {
                format!("bound by a kernel argument, set to {t} with --trip-count")
            } else {
                format!("bound by a kernel argument, assumed {t} (set with --trip-count)")
            },
        );
        add(n("given"), format!("set to {t} with --trip-count"));
        add(
            n("default"),
            format!("assumed {t} (no bound found; set with --trip-count ADDR=N)"),
        );
        if parts.is_empty() {
            return "trip counts: no loops".into();
        }
        format!("trip counts: {}", parts.join(", "))
    }

    /// The record of one profiled kernel: the one place its figures are
    /// read from the analysis and the model and rounded.
    pub fn build(p: &Profile) -> KernelRecord {
        let a = &p.analysis;
        let t = &p.timing;
        let c = &t.cycles;
        KernelRecord {
            name: p.name.clone(),
            source: None,
            gpu: p.gpu.clone(),
            gpu_name: p.gpu_label.clone(),
            timing_note: p.timing_note.clone(),
            unknown_encodings: p.unknown_encodings,
            instructions: a.instructions,
            code_bytes: a.code_bytes,
            registers: Registers {
                highest_half_index: a.registers.highest_half_index,
                allocated_half: a.registers.allocated_half,
                peak_live_half: a.registers.peak_live_half,
                peak_live_offset: a.registers.peak_live_offset,
                uniform_half: a.registers.uniform_half,
                peak_live_registers: a.registers.peak_live_registers.clone(),
                allocated_gprs: a.registers.allocated_gprs(),
                peak_live_gprs: a.registers.peak_live_gprs(),
                file_half: p.options.gpu.file_half(),
                highest_gpr: a.registers.highest_gpr(),
                highest_register: a.registers.highest_register(),
                uniform_gprs: a.registers.uniform_gprs(),
            },
            occupancy: Occupancy {
                threads: a.occupancy.threads,
                percent: r2(a.occupancy.percent),
            },
            spills: a.spills,
            fills: a.fills,
            stack_kinds: a.stack_kinds,
            scratch_reserved: a.stack.scratch_reserved,
            backward_branches: a.backward_branches,
            // loop `i` of the analysis is loop `i` of the model (one forest)
            loops: a
                .loops
                .iter()
                .enumerate()
                .map(|(i, l)| loop_out(t.loops.get(i), l))
                .collect(),
            irreducible: a.irreducible.clone(),
            cfg: Cfg {
                blocks: a.cfg.blocks,
                edges: a.cfg.edges,
                calls: a.cfg.calls.clone(),
                unresolved_targets: a.cfg.unresolved_targets.clone(),
                max_exec_depth: a.cfg.max_exec_depth,
                outside_targets: p.outside_targets,
            },
            timing: Some(Timed {
                cycles: Cycles {
                    f32: r2(c.f32),
                    f16: r2(c.f16),
                    scib: r2(c.scib),
                    ic: r2(c.ic),
                    mem: r2(c.mem),
                    alu: r2(c.alu),
                    memory_bandwidth: r2(c.memory_bandwidth),
                    device_bandwidth: r2(c.device_bandwidth),
                },
                total_cycles: r2(t.total_cycles),
                breakdown: parts_out(t),
                paths: Paths {
                    shortest: r2(t.paths.shortest),
                    longest: r2(t.paths.longest),
                },
                mesa_estimate: Mesa {
                    alu: t.mesa_estimate.alu,
                    fscib: t.mesa_estimate.fscib,
                    ic: t.mesa_estimate.ic,
                },
                bottleneck: t.bottleneck.clone(),
                bound_by: t.dominant_bound(),
                bottleneck_unit: match t.dominant_bound() {
                    b @ ("call" | "none") => b,
                    b => agx_analysis::timing::bound_label(b),
                },
                bottleneck_detail: bottleneck_detail_of(&t.bottleneck_detail),
                straight_line: {
                    let o = &t.outside_loops;
                    StraightLine {
                        at: t
                            .regions
                            .iter()
                            .find(|r| r.kind == agx_analysis::timing::PartKind::StraightLine)
                            .map(|r| r.at),
                        instructions: o.instructions,
                        loads: o.loads,
                        stores: o.stores,
                        bound: Bound::of(&o.bound),
                        next: Next::of(&o.bound),
                        stall: Stall::of(o),
                        bottleneck: o.bottleneck.clone(),
                        bottleneck_unit: o.bottleneck_unit,
                        single_simd_cycles: r2(o.single_simd_iteration_cycles),
                        pipes: pipes_of(&o.pipes),
                    }
                },
                regions: t.regions.iter().map(region_out).collect(),
                blocks: t.blocks.iter().map(block_out).collect(),
                model: Model {
                    gpu: t.gpu,
                    chip: p.options.chip.chip,
                    measured_on: p.options.gpu.table().measured_on,
                    trip_count: p.options.trip_count,
                    trip_count_source: if p.options.trip_count_given {
                        "given"
                    } else {
                        "default"
                    },
                    threads_per_core: t.params.threads_per_core,
                    simds_per_scheduler: r2(t.simds_per_scheduler),
                    mem: t.params.mem,
                },
            }),
            prolog: p.prolog.as_ref().map(|pr| Prolog {
                instructions: pr.instructions,
                code_bytes: pr.code_bytes,
                state_stores: pr.state_stores,
            }),
            mix: MixOut {
                by_unit: p
                    .mix
                    .by_unit
                    .iter()
                    .map(|(u, n)| (u.to_string(), (*n).into()))
                    .collect(),
                by_mnemonic: p
                    .mix
                    .by_mnemonic
                    .iter()
                    .map(|&(mnemonic, count)| MnemonicCount { mnemonic, count })
                    .collect(),
            },
            raised_instructions: p.raised,
            suggestions: suggestions_out(&p.suggestions),
            calls: calls_out(p),
            functions: functions_out(p),
            call_assumptions: p.program.assumptions.clone(),
            divergence: p.program.divergence_counts(),
            divergence_paths: Some(p.program.divergence_range()),
            memory: MemorySection::of(p),
            untimed: None,
        }
    }

    /// The suggestions of every function: main's, then each called
    /// function's with its label (`(None, s)` for main's).
    pub fn all_suggestions(&self) -> impl Iterator<Item = (Option<&str>, &SuggestionOut)> {
        self.suggestions
            .iter()
            .map(|s| (None, s))
            .chain(self.functions.iter().skip(1).flat_map(|f| {
                f.suggestions
                    .iter()
                    .map(move |s| (Some(f.display_name.as_str()), s))
            }))
    }

    /// Whether any function of the kernel has a finding (a suggestion).
    pub fn has_findings(&self) -> bool {
        self.all_suggestions().next().is_some()
    }
}

// ── Per-instruction rows and the Memory section (issue 29 item 1, record3) ──
//
// The record does not own `instructions_detail[]` (a 1M-instruction kernel
// would hold a million rows): [`FunctionRows::row`] makes each row from the
// analysis when asked, the one place a row's figures and marks are read and
// rounded. JSON serializes these rows (main's: `instructions_detail[]`;
// a called function's: `functions[k].instructions_detail[]`); the text and
// HTML annotated listings print them (main's and, with `--part all`, each
// called function's).

/// A back-to-back RAW dependency of a row (`instructions_detail[].raw_dep`).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct RawDepOut {
    pub producer: u32,
    pub penalty: f64,
    pub bits: u32,
}

/// The asm text of an instruction, serialized without an intermediate
/// `String` per instruction.
#[derive(Clone, Copy)]
pub struct AsmText<'a>(pub &'a agx_isa::Instruction, pub agx_isa::Syntax);

thread_local! {
    /// The asm text being written (one buffer per thread, reused).
    static ASM: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

impl AsmText<'_> {
    /// `f` of the instruction's asm text (trailing blanks trimmed).
    fn with<R>(&self, f: impl FnOnce(&str) -> R) -> R {
        ASM.with(|b| {
            let mut b = b.borrow_mut();
            b.clear();
            agx_isa::format::write_asm(&mut *b, self.0, self.1);
            f(b.trim_end())
        })
    }
}

impl std::fmt::Display for AsmText<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.with(|s| f.write_str(s))
    }
}

impl Serialize for AsmText<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// One instruction's row: `instructions_detail[k]` of the JSON document,
/// and every figure and mark an annotated listing prints of it.
#[derive(Clone, Copy, Serialize)]
pub struct InsnRow<'a> {
    pub offset: u32,
    pub size: u8,
    pub mnemonic: &'static str,
    pub text: AsmText<'a>,
    /// Native syntax, only where it differs from `text` (an encoding
    /// applegpu prints as another form, e.g. a stack adjust).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub native: Option<AsmText<'a>>,
    pub unit: Option<&'static str>,
    pub cycles: Option<f64>,
    pub latency: Option<f64>,
    pub loop_depth: Option<u32>,
    pub stall: Option<f64>,
    pub stall_single: Option<f64>,
    pub raw_dep: Option<RawDepOut>,
    pub call_target: Option<&'a str>,
    pub raised: bool,
    /// Issue cycles of one execution (pipe throughput + RAW penalty, at
    /// least a dispatch slot).
    pub issue_cycles: Option<f64>,
    /// Its share of its region's cost × executions (the heat column; they
    /// sum to `total_cycles`).
    pub self_cycles: Option<f64>,
    pub executions: Option<f64>,
    /// Present (true) on a load whose address the divergence analysis
    /// proved uniform: one value for the whole SIMD-group, charged once per
    /// SIMD-group (issue 22).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub uniform_address: bool,
    /// On a stack access: `spill`, `fill`, `save`, `restore` or
    /// `private_array` (issue 27 item 4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stack_kind: Option<&'static str>,
    /// The access facts of a memory instruction (issue 27): what its
    /// addresses are across the lanes and the iterations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access: Option<&'a agx_analysis::address::Access>,
    /// The listing's stall mark (`exposed` or `hidden`, thresholds
    /// [`STALL_EXPOSED_CYCLES`] and [`STALL_HIDDEN_CYCLES`]); absent when
    /// none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall_mark: Option<StallMark>,
}

impl InsnRow<'_> {
    /// The listings' stall mark in words (text and HTML): `◀◀◀ STALL ~N cy
    /// exposed` (`/iter` in a loop) for an exposed stall, `◀ stall hidden by
    /// the other SIMD-groups` for a hidden one.
    pub fn stall_words(&self) -> Option<(StallMark, String)> {
        let m = self.stall_mark?;
        Some((
            m,
            match m {
                StallMark::Exposed => format!(
                    "◀◀◀ STALL ~{} cy exposed{}",
                    agx_analysis::timing::model::fmt_cy(self.stall.unwrap_or(0.0)),
                    if self.loop_depth.unwrap_or(0) > 0 {
                        "/iter"
                    } else {
                        ""
                    }
                ),
                StallMark::Hidden => STALL_HIDDEN_WORDS.to_string(),
            },
        ))
    }

    /// The listings' access mark (text and HTML) of a memory instruction:
    /// its pattern, the lane stride, the lines per request and the loop
    /// stride ([`access_mark`]).
    pub fn access_words(&self) -> Option<String> {
        self.access.map(access_mark)
    }
}

/// The words of a hidden stall's mark.
pub const STALL_HIDDEN_WORDS: &str = "◀ stall hidden by the other SIMD-groups";

/// The short listing mark of an access (`▤ rows 4x8 B, 2 lines, +16
/// B/iter`): its pattern, the lane stride, the lines per request and the
/// loop stride, each a field of `instructions_detail[].access`.
pub fn access_mark(a: &agx_analysis::address::Access) -> String {
    use agx_analysis::address::Pattern;
    use std::fmt::Write as _;
    // (written into one string: a listing has a mark per memory row)
    let mut m = String::with_capacity(48);
    let _ = write!(m, "▤ {}", a.lane_pattern.name());
    match (a.lane_pattern, a.lane_stride, a.run) {
        (Pattern::Rows, s, Some(r)) => {
            let _ = write!(m, " {r}x");
            match s {
                Some(s) => {
                    let _ = write!(m, "{s} B");
                }
                None => m.push('?'),
            }
        }
        (Pattern::Strided, Some(s), _) => {
            let _ = write!(m, " {s} B");
        }
        (Pattern::Strided, None, _) => {
            if let Some(e) = &a.lane_stride_expr {
                let _ = write!(m, " {e} B");
            }
        }
        _ => {}
    }
    if let Some(l) = a.lines_per_request {
        let _ = write!(m, ", {l} line{}", if l == 1 { "" } else { "s" });
    } else if let Some(w) = wide_lines(a) {
        let _ = write!(m, ", {w}");
    }
    match a.loop_stride {
        Some(0) => m.push_str(", loop-invariant"),
        Some(s) => {
            let _ = write!(m, ", {s:+} B/iter");
        }
        None => {}
    }
    m
}

/// The rows of one function of a profile: main's (the JSON document's
/// `instructions_detail[]`) or a called function's (the document's
/// `functions[k].instructions_detail[]`, its listing under `--part all`).
#[derive(Clone, Copy)]
pub struct FunctionRows<'a> {
    p: &'a Profile,
    insns: &'a [agx_isa::Instruction],
    details: &'a [agx_analysis::timing::InsnDetail],
    insn_cycles: &'a [f64],
    executions: &'a [f64],
    access: Option<&'a agx_analysis::address::Addresses>,
}

impl<'a> FunctionRows<'a> {
    /// Main's rows.
    pub fn main(p: &'a Profile) -> Self {
        FunctionRows {
            p,
            insns: &p.insns,
            details: &p.timing.instructions_detail,
            insn_cycles: &p.timing.insn_cycles,
            executions: &p.timing.executions,
            access: p.program.functions.first().map(|f| &f.access),
        }
    }

    /// The rows of the program's function `k` (`functions[k]`; 0 is main).
    pub fn function(p: &'a Profile, k: usize) -> Option<Self> {
        if k == 0 {
            return Some(Self::main(p));
        }
        let f = p.program.functions.get(k)?;
        Some(FunctionRows {
            p,
            insns: &f.insns,
            details: &f.timing.instructions_detail,
            insn_cycles: &f.timing.insn_cycles,
            executions: &f.timing.executions,
            access: Some(&f.access),
        })
    }

    /// The function's instructions (row `k` is instruction `k`'s).
    pub fn insns(&self) -> &'a [agx_isa::Instruction] {
        self.insns
    }

    pub fn len(&self) -> usize {
        self.insns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.insns.is_empty()
    }

    /// The timing detail of instruction `k` (details follow the
    /// instructions; else found by address).
    fn detail(&self, k: usize, addr: u32) -> Option<&'a agx_analysis::timing::InsnDetail> {
        let d = self.details;
        match d.get(k) {
            Some(x) if x.addr == addr => Some(x),
            _ => d
                .binary_search_by_key(&addr, |x| x.addr)
                .ok()
                .map(|i| &d[i])
                .or_else(|| d.iter().find(|x| x.addr == addr)),
        }
    }

    /// Row `k`: the one place an instruction's figures and marks are read
    /// from the analysis and the model and rounded.
    pub fn row(&self, k: usize) -> InsnRow<'a> {
        let i = &self.insns[k];
        let d = self.detail(k, i.addr);
        let p = self.p;
        InsnRow {
            offset: i.addr,
            size: i.len,
            mnemonic: i.mnemonic(),
            text: AsmText(i, agx_isa::Syntax::Default),
            native: agx_isa::native::shadowed_form(i).map(|_| AsmText(i, agx_isa::Syntax::Native)),
            unit: d.map(|d| d.unit().name()),
            cycles: d.map(|d| r2(d.cycles())),
            latency: d.map(|d| r2(d.latency())),
            loop_depth: d.map(|d| d.loop_depth),
            stall: d.map(|d| r2(d.stall)),
            stall_single: d.map(|d| r2(d.stall_single)),
            raw_dep: d.and_then(|d| d.raw_dep()).map(|r| RawDepOut {
                producer: r.producer,
                penalty: r2(r.penalty),
                bits: r.bits,
            }),
            call_target: p.call_symbol(i.addr),
            raised: i.raised,
            issue_cycles: d.map(|d| r2(d.issue_cycles(p.options.gpu.table()))),
            self_cycles: d.map(|_| r2(self.insn_cycles.get(k).copied().unwrap_or(0.0))),
            executions: d.map(|_| self.executions.get(k).copied().unwrap_or(1.0)),
            uniform_address: d.is_some_and(|d| d.uniform_address),
            stack_kind: d.and_then(|d| d.stack_kind).map(|k| k.name()),
            access: self.access.and_then(|a| a.get(k)),
            stall_mark: d.and_then(|d| StallMark::of(d.stall, d.stall_single)),
        }
    }
}

impl Serialize for FunctionRows<'_> {
    /// The rows one at a time (no vector of a million rows in memory).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.len()))?;
        for k in 0..self.len() {
            seq.serialize_element(&self.row(k))?;
        }
        seq.end()
    }
}

/// The Memory section (issue 27) of the text and HTML reports: main's
/// memory instructions by region — each loop holding some (hottest first:
/// its cycles per iteration × trip count), then the code outside loops.
/// Its figures are fields of the JSON record already (each access's
/// `instructions_detail[k].access`, each loop's `loops[j]`): this is the
/// section's grouping and order only, not serialized (empty for an
/// untimed kernel, whose memory is its loops' sites).
#[derive(Clone, Debug, Default)]
pub struct MemorySection {
    /// The threadgroup shape the lanes are laid over.
    pub shape: agx_analysis::address::Shape,
    pub regions: Vec<MemoryRegion>,
}

/// One region of the [`MemorySection`].
#[derive(Clone, Debug)]
pub struct MemoryRegion {
    /// The loop (its position in the record's `loops`); `None`: outside
    /// loops.
    pub looped: Option<usize>,
    /// Main's memory instructions in the region (row indices, in order).
    pub rows: Vec<usize>,
}

impl MemorySection {
    fn of(p: &Profile) -> MemorySection {
        let shape = p
            .options
            .threadgroup
            .unwrap_or(agx_analysis::address::Shape::DEFAULT);
        let Some(main) = p.program.functions.first() else {
            return MemorySection {
                shape,
                regions: Vec::new(),
            };
        };
        let details = &p.timing.instructions_detail;
        let mut by_loop: std::collections::BTreeMap<Option<u32>, Vec<usize>> = Default::default();
        for a in &main.access.accesses {
            let i = a.index as usize;
            let Some(insn) = p.insns.get(i) else { continue };
            let lp = details
                .get(i)
                .filter(|d| d.addr == insn.addr)
                .and_then(|d| d.loop_index);
            by_loop.entry(lp).or_default().push(i);
        }
        let mut regions: Vec<(f64, MemoryRegion)> = by_loop
            .into_iter()
            .map(|(lp, rows)| {
                // (ordered by the model's unrounded cost; loop `l` of the
                // model is the record's `loops[l]`)
                let l = lp.and_then(|l| p.timing.loops.get(l as usize).map(|t| (l as usize, t)));
                let cy = l.map_or(-1.0, |(_, t)| t.cycles_per_iteration * t.trip_count as f64);
                (
                    cy,
                    MemoryRegion {
                        looped: l.map(|(l, _)| l),
                        rows,
                    },
                )
            })
            .collect();
        regions.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
        MemorySection {
            shape,
            regions: regions.into_iter().map(|r| r.1).collect(),
        }
    }

    /// The shape as printed (`32x1x1`).
    pub fn shape_text(&self) -> String {
        format!("{}x{}x{}", self.shape.w, self.shape.h, self.shape.d)
    }
}

impl FunctionOut {
    /// The function's name in the views (its `display_name`).
    pub fn label(&self) -> String {
        self.display_name.clone()
    }

    /// The highest register by name (`r6h`), the analysis's name of
    /// `highest_half_index` ([`agx_analysis::Registers::highest_register`]).
    pub fn highest_register(&self) -> String {
        agx_analysis::Registers {
            highest_half_index: self.highest_half_index,
            ..Default::default()
        }
        .highest_register()
    }
}

impl KernelRecord {
    /// The title of a Memory region (text and HTML): `loop at 0x34 (depth
    /// 1, 16 iterations, 5.5 cy/iter): per iteration`, its figures the
    /// record's `loops[j]`.
    pub fn memory_title(&self, r: &MemoryRegion) -> String {
        match r.looped.and_then(|j| self.loops.get(j)) {
            Some(l) => format!(
                "loop at 0x{:x} (depth {}, {} iterations, {} cy/iter): per iteration",
                l.header,
                l.depth,
                l.trip_count.unwrap_or(0),
                agx_analysis::timing::model::fmt_cy(l.cycles_per_iteration.unwrap_or(0.0))
            ),
            None => "outside loops: per execution".to_string(),
        }
    }
}

/// The lines of an access with a runtime lane stride, for every value of
/// a line or more (`32 lines if u16 >= 4`): `lines_per_request_if_wide`
/// and `wide_from` of the record, the uniform from `lane_stride_expr`.
fn wide_lines(a: &agx_analysis::address::Access) -> Option<String> {
    let (l, from, e) = (
        a.lines_per_request_if_wide?,
        a.wide_from?,
        a.lane_stride_expr.as_ref()?,
    );
    let u = e.split_once('*').map_or(e.as_str(), |x| x.1);
    Some(format!("{l} lines if {u} >= {from}"))
}

/// One access of the Memory section (text and HTML): its address,
/// mnemonic, space, lane pattern, bytes per lane and per request, cache
/// lines, bank-conflict ways (threadgroup) and loop stride, each a field of
/// the row (`instructions_detail[k]`); `None` for a row without an access.
pub fn memory_line(r: &InsnRow<'_>) -> Option<String> {
    let a = r.access?;
    let lines = match (a.lines_per_request, wide_lines(a)) {
        (Some(l), _) => format!("{l} line{}", if l == 1 { "" } else { "s" }),
        (None, Some(w)) => w,
        (None, None) => "lines ?".to_string(),
    };
    let banks = match (a.space, a.bank_conflict_ways) {
        ("threadgroup", Some(w)) => format!(", {w}-way banks"),
        ("threadgroup", None) => ", banks ?".to_string(),
        _ => String::new(),
    };
    Some(format!(
        "0x{:<5x} {:<18} {:<11} {:<11} {} B/lane, {} B, {}{}{}",
        r.offset,
        r.mnemonic,
        a.space,
        a.lane_pattern.name(),
        a.bytes_per_lane,
        a.bytes_per_request,
        lines,
        banks,
        match a.loop_stride {
            Some(0) => ", loop-invariant".to_string(),
            Some(s) => format!(", {s:+} B/iter"),
            None => String::new(),
        }
    ))
}

// ── end of the per-instruction rows and the Memory section ──

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// examples/matmul_naive.bin profiled with the default options.
    pub(crate) fn matmul() -> Profile {
        let code = std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../examples/matmul_naive.bin"),
        )
        .unwrap();
        let insns: Vec<_> = agx_isa::stream::walk(&code, 0)
            .filter_map(|i| i.into_insn())
            .collect();
        Profile::build("m".into(), None, insns, None, vec![], &Default::default())
    }

    /// A kernel without a timing model (the untimed case, e.g. Apple9
    /// code) keeps the contract fields that do not depend on timing and
    /// drops the timed sections.
    #[test]
    fn an_untimed_record_keeps_the_untimed_contract_fields() {
        let mut r = KernelRecord::build(&matmul());
        let timed = serde_json::to_value(&r).unwrap();
        assert!(timed["cycles"]["alu"].as_f64().unwrap() > 0.0);
        r.timing = None;
        r.divergence_paths = None;
        let v = serde_json::to_value(&r).unwrap();
        for k in [
            "cycles",
            "total_cycles",
            "breakdown",
            "model",
            "divergence_paths",
        ] {
            assert!(v.get(k).is_none(), "{k}");
        }
        for k in [
            "name",
            "gpu",
            "instructions",
            "code_bytes",
            "registers",
            "loops",
            "spills",
        ] {
            assert_eq!(v[k], timed[k], "{k}");
        }
        assert!(v["loops"][0]["start"].is_u64() && v["loops"][0]["depth"].is_u64());
    }

    #[test]
    fn stall_marks_have_one_rule() {
        assert_eq!(StallMark::of(0.5, 0.0), Some(StallMark::Exposed));
        assert_eq!(StallMark::of(0.49, 8.0), Some(StallMark::Hidden));
        assert_eq!(StallMark::of(0.49, 7.99), None);
    }
}
