//! The JSON document, schema `metal-profiler/1` (docs/schema.json).
//!
//! Field names spelled out by the issues are contracts: `schema`, `kernels`,
//! `name`, `gpu`, `instructions`, `code_bytes`, `registers{highest_half_index,
//! allocated_half, peak_live_half, peak_live_offset, uniform_half}`,
//! `occupancy{threads, percent}`, `spills`, `fills`, `loops[{start, end,
//! depth, instructions, cycles_per_iteration, latency_bound_cycles,
//! bottleneck}]`, `cycles{f32, f16, scib, ic, mem, alu}`,
//! `mesa_estimate{alu, fscib, ic}`, `bottleneck`, `suggestions[{severity,
//! offset, message}]`, `instructions_detail[]`. New fields may be added;
//! none is renamed.

use crate::Profile;
use agx_analysis::timing::{MemParams, Severity};
use agx_isa::format::write_asm;
use agx_isa::Syntax;
use serde::Serialize;

/// Documents describing more instructions than this are written compact.
pub const PRETTY_LIMIT: usize = 50_000;

/// Schema identifier of the document.
pub const SCHEMA: &str = "metal-profiler/1";

/// Rounds to 2 decimals for output (the model is not that precise anyway;
/// the same rounding as every printed figure).
use agx_analysis::timing::model::{r2, r4};

#[derive(Serialize)]
struct Document<'a> {
    schema: &'static str,
    tool: Tool,
    kernels: Vec<Kernel<'a>>,
}

#[derive(Serialize)]
struct Tool {
    name: &'static str,
    version: &'static str,
}

#[derive(Serialize)]
struct Registers<'a> {
    highest_half_index: u32,
    allocated_half: u32,
    peak_live_half: u32,
    peak_live_offset: Option<u32>,
    uniform_half: u32,
    peak_live_registers: &'a [String],
    /// `allocated_half` in 32-bit registers.
    allocated_gprs: u32,
    /// `peak_live_half` in 32-bit registers.
    peak_live_gprs: u32,
    /// Half-registers of the register file (the occupancy table's last row).
    file_half: u32,
    /// Number of the highest 32-bit GPR (`highest_half_index / 2`).
    highest_gpr: u32,
    /// The highest register by name (`r6h`).
    highest_register: String,
    /// `uniform_half` in 32-bit uniform registers.
    uniform_gprs: u32,
}

#[derive(Serialize)]
struct Occupancy {
    threads: u32,
    percent: f64,
}

#[derive(Serialize)]
struct LoopBody {
    instructions: usize,
    alu_per_iter: f64,
    loads: usize,
    stores: usize,
    wait_stall: f64,
    exposed_stall: f64,
    recurrence_cycles: f64,
    memory_stall: f64,
    bottleneck_unit: &'static str,
    bound: Bound,
    /// Sum of every instruction's raw stall per iteration (`stall.raw`).
    raw_stall: f64,
    stall: Stall,
    /// The runner-up bound (the "next" of `bottleneck`).
    next: Next,
    /// Cycles one SIMD-group alone takes per iteration (in-order issue).
    single_simd_cycles: f64,
    /// Pipe pressure per iteration.
    pipes: Pipes,
}

/// Pipe pressure of one pass of a region (`agx_analysis::timing::model::PipeCycles`,
/// rounded).
#[derive(Serialize)]
struct Pipes {
    f32: f64,
    f16: f64,
    scib: f64,
    ic: f64,
    /// Memory-pipe (L1) bandwidth cycles.
    mem: f64,
    /// Dispatch cycles.
    issue: f64,
    /// Device-memory (DRAM) bandwidth cycles.
    dram: f64,
    /// Back-to-back RAW penalties (counted on the consumers' pipes).
    raw_penalty: f64,
}

impl Pipes {
    fn of(p: &agx_analysis::timing::model::PipeCycles) -> Pipes {
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
}

/// Stall per pass of a region, one set of names: `raw` is one SIMD-group
/// alone (before the other SIMD-groups hide it), `exposed` what is left at
/// occupancy; `wait_*` the part of each at memory waits.
#[derive(Serialize)]
struct Stall {
    raw: f64,
    exposed: f64,
    wait_raw: f64,
    wait_exposed: f64,
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
#[derive(Serialize)]
struct Next {
    by: &'static str,
    cycles: f64,
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
#[derive(Serialize)]
struct StraightLine<'a> {
    /// First instruction outside loops (`null` when every one is in a loop).
    at: Option<u32>,
    instructions: usize,
    loads: usize,
    stores: usize,
    bound: Bound,
    next: Next,
    stall: Stall,
    bottleneck: &'a str,
    /// `bound.by` in words.
    bottleneck_unit: &'static str,
    /// Cycles one SIMD-group alone takes for the pass (in-order issue).
    single_simd_cycles: f64,
    /// Pipe pressure of the pass.
    pipes: Pipes,
}

#[derive(Serialize)]
struct RegionOut {
    at: u32,
    kind: agx_analysis::timing::PartKind,
    depth: u32,
    executions: f64,
    cycles_per_execution: f64,
    self_cycles: f64,
    self_share: f64,
    by: &'static str,
    stall_raw: f64,
    stall_exposed: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    loop_index: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    callee: Option<u32>,
}

#[derive(Serialize)]
struct BlockOut {
    index: usize,
    start: u32,
    end: u32,
    cycles: f64,
    share: f64,
    executions: f64,
    /// Instructions in the block.
    instructions: usize,
    /// `cycles / executions`: one execution's cycles.
    cycles_per_execution: f64,
}

#[derive(Serialize)]
struct BottleneckDetailOut {
    at: u32,
    kind: &'static str,
    by: &'static str,
    cycles: f64,
    share: f64,
    depth: u32,
}

/// A cost as the maximum of named bounds (`cycles == max(components)`).
#[derive(Serialize)]
struct Bound {
    by: &'static str,
    cycles: f64,
    /// (serialized as an object in alphabetical key order, no map built)
    components: agx_analysis::timing::model::Components,
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

#[derive(Serialize)]
struct Part {
    part: agx_analysis::timing::PartKind,
    at: u32,
    cycles: f64,
    executions: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    callee: Option<u32>,
    /// `cycles / total_cycles` (0..1, 4 decimals).
    share: f64,
}

#[derive(Serialize)]
struct Paths {
    shortest: f64,
    longest: f64,
}

#[derive(Serialize)]
struct Loop<'a> {
    /// The loop's number in the reports (`Loop 0`, the timing model's order).
    index: Option<usize>,
    start: u32,
    end: u32,
    depth: u32,
    instructions: usize,
    header: u32,
    latches: &'a [u32],
    exits: &'a [u32],
    blocks: usize,
    trip_count: Option<u32>,
    trip_count_source: Option<&'static str>,
    cycles_per_iteration: Option<f64>,
    latency_bound_cycles: Option<f64>,
    bottleneck: Option<&'a str>,
    bound: Option<Bound>,
    body: Option<LoopBody>,
}

#[derive(Serialize)]
struct Cfg<'a> {
    blocks: usize,
    edges: usize,
    calls: &'a [agx_analysis::CallSummary],
    unresolved_targets: &'a [(u32, i64)],
    max_exec_depth: u16,
    /// Unresolved targets less the calls resolved to a helper: targets
    /// outside the code analysed.
    outside_targets: usize,
}

/// Main's instruction mix ([`crate::profile::Mix`]).
#[derive(Serialize)]
struct MixOut {
    /// Instructions per unit, by unit name.
    by_unit: serde_json::Map<String, serde_json::Value>,
    /// Instructions per mnemonic, most used first.
    by_mnemonic: Vec<MnemonicCount>,
}

#[derive(Serialize)]
struct MnemonicCount {
    mnemonic: &'static str,
    count: usize,
}

#[derive(Serialize)]
struct Cycles {
    f32: f64,
    f16: f64,
    scib: f64,
    ic: f64,
    mem: f64,
    alu: f64,
    /// The L1/memory-pipe bandwidth bound, loops weighted.
    memory_bandwidth: f64,
    /// The device-memory (DRAM) bandwidth bound, loops weighted.
    device_bandwidth: f64,
}

#[derive(Serialize)]
struct Mesa {
    alu: u32,
    fscib: u32,
    ic: u32,
}

#[derive(Serialize)]
struct Model {
    gpu: &'static str,
    /// The chip modelled (`--chip`; the model's default chip otherwise).
    chip: &'static str,
    measured_on: &'static str,
    trip_count: u32,
    /// `"given"` when `--trip-count` was passed, else `"default"`.
    trip_count_source: &'static str,
    threads_per_core: u32,
    simds_per_scheduler: f64,
    mem: MemParams,
}

#[derive(Serialize)]
struct Prolog {
    instructions: usize,
    code_bytes: u64,
    state_stores: usize,
}

#[derive(Serialize)]
struct SuggestionOut<'a> {
    severity: Severity,
    offset: u32,
    message: &'a str,
    rule: &'static str,
    /// The figures the message cites, by name.
    figures: &'a agx_analysis::timing::suggest::Figures,
    /// The fact the rule rests on; the instructions it concerns (issue 27).
    fact: &'a str,
    sites: &'a [u32],
}

#[derive(Serialize)]
struct RawDep {
    producer: u32,
    penalty: f64,
    bits: u32,
}

/// The asm text of an instruction, serialized without an intermediate
/// `String` per instruction.
struct AsmText<'a>(&'a agx_isa::Instruction, Syntax);

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
            write_asm(&mut *b, self.0, self.1);
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

#[derive(Serialize)]
struct Detail<'a> {
    offset: u32,
    size: u8,
    mnemonic: &'static str,
    text: AsmText<'a>,
    /// Native syntax, only where it differs from `text` (an encoding
    /// applegpu prints as another form, e.g. a stack adjust).
    #[serde(skip_serializing_if = "Option::is_none")]
    native: Option<AsmText<'a>>,
    unit: Option<&'static str>,
    cycles: Option<f64>,
    latency: Option<f64>,
    loop_depth: Option<u32>,
    stall: Option<f64>,
    stall_single: Option<f64>,
    raw_dep: Option<RawDep>,
    call_target: Option<&'a str>,
    raised: bool,
    /// Issue cycles of one execution (pipe throughput + RAW penalty, at
    /// least a dispatch slot).
    issue_cycles: Option<f64>,
    /// Its share of its region's cost × executions (the heat column; they
    /// sum to `total_cycles`).
    self_cycles: Option<f64>,
    executions: Option<f64>,
    /// Present (true) on a load whose address the divergence analysis
    /// proved uniform: one value for the whole SIMD-group, charged once per
    /// SIMD-group (issue 22).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    uniform_address: bool,
    /// On a stack access: `spill`, `fill`, `save`, `restore` or
    /// `private_array` (issue 27 item 4).
    #[serde(skip_serializing_if = "Option::is_none")]
    stack_kind: Option<&'static str>,
    /// The access facts of a memory instruction (issue 27): what its
    /// addresses are across the lanes and the iterations.
    #[serde(skip_serializing_if = "Option::is_none")]
    access: Option<&'a agx_analysis::address::Access>,
}

#[derive(Serialize)]
struct Kernel<'a> {
    name: &'a str,
    /// The input file, in `batch` documents (absent for single runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<&'a str>,
    gpu: Option<&'a str>,
    gpu_name: Option<&'a str>,
    timing_note: Option<&'a str>,
    unknown_encodings: usize,
    instructions: usize,
    code_bytes: u64,
    registers: Registers<'a>,
    occupancy: Occupancy,
    spills: u32,
    fills: u32,
    /// Stack accesses by kind (issue 27 item 4).
    stack_kinds: agx_analysis::stack_kind::StackKinds,
    scratch_reserved: Option<i32>,
    backward_branches: usize,
    loops: LoopSeq<'a>,
    irreducible: &'a [agx_analysis::IrreducibleSummary],
    cfg: Cfg<'a>,
    cycles: Cycles,
    total_cycles: f64,
    breakdown: Vec<Part>,
    paths: Paths,
    mesa_estimate: Mesa,
    bottleneck: &'a str,
    /// The bound of the kernel's dearest part (`batch`'s `bound`): a bound
    /// component (`ic`, `device_bandwidth`, ...), `call` or `none`.
    bound_by: &'static str,
    /// `bound_by` in words (`device-memory (DRAM) bandwidth`).
    bottleneck_unit: &'static str,
    /// The hot spot: the region with the largest `self_share`, its own bound.
    bottleneck_detail: BottleneckDetailOut,
    straight_line: StraightLine<'a>,
    /// Every region of the cost; their `self_cycles` sum to `total_cycles`.
    regions: RegionSeq<'a>,
    /// Main's basic blocks with their cycles (sum: `total_cycles`).
    blocks: BlockSeq<'a>,
    model: Model,
    prolog: Option<Prolog>,
    /// Main's instruction mix.
    mix: MixOut,
    /// Instructions using encodings applegpu cannot print.
    raised_instructions: usize,
    suggestions: Vec<SuggestionOut<'a>>,
    /// Every call site of the program (issue 12).
    calls: Vec<CallOut<'a>>,
    /// Main and every function it reaches, each with its own figures.
    functions: Vec<FunctionOut<'a>>,
    /// Assumptions of the whole-program view (recursion, unresolved calls,
    /// call overhead).
    call_assumptions: &'a [String],
    /// Branch divergence counts over the program's functions (issue 22).
    divergence: agx_analysis::divergence::Counts,
    /// Cost when branches go as the divergence analysis says: divergent
    /// ones charge both arms, uniform ones the cheaper / dearer arm.
    divergence_paths: agx_analysis::divergence::DivergenceRange,
    /// (always set; `None` only while [`write_kernel_compact`] writes the
    /// rows itself)
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions_detail: Option<DetailSeq<'a>>,
}

#[derive(Serialize)]
struct CallOut<'a> {
    /// Address of the `call`.
    at: u32,
    /// Absolute target (`null` for a call through a register).
    target: Option<i64>,
    symbol: Option<&'a str>,
    resolved: bool,
    /// Cycles this call site adds to its caller: executions × the callee's
    /// whole cost.
    cycles: f64,
    /// Callee's highest register, spills and fills (its callees included).
    highest_half_index: Option<u32>,
    spills: Option<u32>,
    fills: Option<u32>,
    /// Entry of the calling function.
    caller: u32,
    /// Entry of the callee.
    callee: Option<u32>,
    executions: f64,
    cycles_per_call: f64,
    recursive: bool,
    live_across_half: u32,
}

#[derive(Serialize)]
struct FunctionOut<'a> {
    entry: u32,
    symbol: Option<&'a str>,
    main: bool,
    instructions: usize,
    code_bytes: u64,
    highest_half_index: u32,
    allocated_half: u32,
    peak_live_half: u32,
    peak_live_offset: Option<u32>,
    spills: u32,
    fills: u32,
    stack_kinds: agx_analysis::stack_kind::StackKinds,
    scratch_reserved: Option<i32>,
    loops: usize,
    /// Own cost (callees excluded).
    own_cycles: f64,
    /// Whole cost of one execution (callees included).
    total_cycles: f64,
    recursive: bool,
    live_in: Vec<String>,
    suggestions: Vec<SuggestionOut<'a>>,
    /// Every branch, classified uniform or divergent with its reason
    /// (issue 22).
    branches: BranchSeq<'a>,
    /// if/loop counts of `branches` (an `if` once, its `else` not again).
    divergence: agx_analysis::divergence::Counts,
    /// A called function's own timing (absent for main, whose timing is
    /// the kernel's): its bottleneck sentence (a call-bound kernel's
    /// headline quotes it), the parts of its cost and its loops.
    #[serde(skip_serializing_if = "Option::is_none")]
    timing: Option<FunctionTiming<'a>>,
}

/// The own timing of a called function.
#[derive(Serialize)]
struct FunctionTiming<'a> {
    bottleneck: &'a str,
    total_cycles: f64,
    breakdown: Vec<Part>,
    loops: Vec<FunctionLoop>,
}

/// One loop of a called function.
#[derive(Serialize)]
struct FunctionLoop {
    header: u32,
    depth: u32,
    trip_count: u32,
    cycles_per_iteration: f64,
    /// The iteration's bounds (nested loops included).
    bound: Bound,
    /// The own body's bounds.
    body_bound: Bound,
}

/// `instructions_detail`, serialized one instruction at a time (no vector
/// of a million records in memory).
struct DetailSeq<'a>(&'a Profile);

impl Serialize for DetailSeq<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let p = self.0;
        let details = &p.timing.instructions_detail;
        let mut seq = s.serialize_seq(Some(p.insns.len()))?;
        for (k, i) in p.insns.iter().enumerate() {
            seq.serialize_element(&detail(p, details, k, i))?;
        }
        seq.end()
    }
}

fn detail<'a>(
    p: &'a Profile,
    details: &'a [agx_analysis::timing::InsnDetail],
    k: usize,
    i: &'a agx_isa::Instruction,
) -> Detail<'a> {
    // details follow the instructions; fall back to a search by address
    let d = match details.get(k) {
        Some(d) if d.addr == i.addr => Some(d),
        _ => details
            .binary_search_by_key(&i.addr, |d| d.addr)
            .ok()
            .map(|x| &details[x]),
    };
    Detail {
        offset: i.addr,
        size: i.len,
        mnemonic: i.mnemonic(),
        text: AsmText(i, Syntax::Default),
        native: agx_isa::native::shadowed_form(i).map(|_| AsmText(i, Syntax::Native)),
        unit: d.map(|d| d.unit().name()),
        cycles: d.map(|d| r2(d.cycles())),
        latency: d.map(|d| r2(d.latency())),
        loop_depth: d.map(|d| d.loop_depth),
        stall: d.map(|d| r2(d.stall)),
        stall_single: d.map(|d| r2(d.stall_single)),
        raw_dep: d.and_then(|d| d.raw_dep()).map(|r| RawDep {
            producer: r.producer,
            penalty: r2(r.penalty),
            bits: r.bits,
        }),
        call_target: p.call_symbol(i.addr),
        raised: i.raised,
        issue_cycles: d.map(|d| r2(d.issue_cycles(p.options.gpu.timing))),
        self_cycles: d.map(|_| r2(p.timing.insn_cycles.get(k).copied().unwrap_or(0.0))),
        executions: d.map(|_| p.timing.executions.get(k).copied().unwrap_or(1.0)),
        uniform_address: d.is_some_and(|d| d.uniform_address),
        stack_kind: d.and_then(|d| d.stack_kind).map(|k| k.name()),
        access: p.program.functions.first().and_then(|f| f.access.get(k)),
    }
}

/// `loops`, serialized one loop at a time (a 1M-instruction kernel has
/// ~83k loops: no vector of them in memory). With a slot (the compact
/// writer's), serialized as `null` and the slot set: [`HoldLast`] writes
/// the rows in its place with [`loop_row`].
struct LoopSeq<'a>(&'a Profile, Option<&'a Splice>);

/// The rows [`write_kernel_compact`] writes itself in place of a `null`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rows {
    Loops,
    Regions,
    Blocks,
    /// The branches of function `k`.
    Branches(usize),
}

/// Which rows the `null` written next stands for.
type Splice = std::cell::Cell<Option<Rows>>;

impl Serialize for LoopSeq<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        if let Some(slot) = self.1 {
            slot.set(Some(Rows::Loops));
            return s.serialize_unit();
        }
        let p = self.0;
        let a = &p.analysis;
        let t = &p.timing;
        // loop `i` of the analysis is loop `i` of the model (one forest)
        let mut seq = s.serialize_seq(Some(a.loops.len()))?;
        for (i, l) in a.loops.iter().enumerate() {
            seq.serialize_element(&loop_out(t.loops.get(i), l))?;
        }
        seq.end()
    }
}

/// `regions`, one at a time (see [`LoopSeq`]).
struct RegionSeq<'a>(&'a agx_analysis::timing::KernelTiming, Option<&'a Splice>);

/// `blocks`, one at a time (see [`LoopSeq`]).
struct BlockSeq<'a>(&'a agx_analysis::timing::KernelTiming, Option<&'a Splice>);

/// A function's `branches` (function `.1`), one at a time (see [`LoopSeq`]).
struct BranchSeq<'a>(
    &'a [agx_analysis::divergence::Branch],
    usize,
    Option<&'a Splice>,
);

impl Serialize for RegionSeq<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let Some(slot) = self.1 {
            slot.set(Some(Rows::Regions));
            return s.serialize_unit();
        }
        s.collect_seq(self.0.regions.iter().map(region_out))
    }
}

impl Serialize for BlockSeq<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let Some(slot) = self.1 {
            slot.set(Some(Rows::Blocks));
            return s.serialize_unit();
        }
        s.collect_seq(self.0.blocks.iter().map(block_out))
    }
}

impl Serialize for BranchSeq<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let Some(slot) = self.2 {
            slot.set(Some(Rows::Branches(self.1)));
            return s.serialize_unit();
        }
        s.collect_seq(self.0)
    }
}

fn region_out(r: &agx_analysis::timing::model::Region) -> RegionOut {
    RegionOut {
        at: r.at,
        kind: r.kind,
        depth: r.depth,
        executions: r.executions,
        cycles_per_execution: r2(r.cycles_per_execution),
        self_cycles: r2(r.self_cycles),
        self_share: r4(r.self_share),
        by: r.by,
        stall_raw: r2(r.stall_raw),
        stall_exposed: r2(r.stall_exposed),
        loop_index: r.loop_index,
        callee: r.callee,
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

fn loop_out<'a>(
    tl: Option<&'a agx_analysis::timing::LoopTiming>,
    l: &'a agx_analysis::LoopSummary,
) -> Loop<'a> {
    Loop {
        index: tl.map(|x| x.index),
        start: l.start,
        end: l.end,
        depth: l.depth,
        instructions: l.instructions,
        header: l.header,
        latches: &l.latches,
        exits: &l.exits,
        blocks: l.blocks,
        trip_count: tl.map(|x| x.trip_count),
        trip_count_source: tl.map(|x| x.trip_count_source),
        cycles_per_iteration: tl.map(|x| r2(x.cycles_per_iteration)),
        latency_bound_cycles: tl.map(|x| r2(x.latency_bound_cycles)),
        bottleneck: tl.map(|x| x.bottleneck()),
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
            pipes: Pipes::of(&x.body.pipes),
        }),
    }
}

fn kernel(p: &Profile) -> Kernel<'_> {
    let a = &p.analysis;
    let t = &p.timing;
    let c = &t.cycles;
    Kernel {
        name: &p.name,
        source: None,
        gpu: p.gpu.as_deref(),
        gpu_name: p.gpu_label.as_deref(),
        timing_note: p.timing_note.as_deref(),
        unknown_encodings: p.unknown_encodings,
        instructions: a.instructions,
        code_bytes: a.code_bytes,
        registers: Registers {
            highest_half_index: a.registers.highest_half_index,
            allocated_half: a.registers.allocated_half,
            peak_live_half: a.registers.peak_live_half,
            peak_live_offset: a.registers.peak_live_offset,
            uniform_half: a.registers.uniform_half,
            peak_live_registers: &a.registers.peak_live_registers,
            allocated_gprs: a.registers.allocated_gprs(),
            peak_live_gprs: a.registers.peak_live_gprs(),
            file_half: agx_analysis::Registers::FILE_HALF,
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
        loops: LoopSeq(p, None),
        irreducible: &a.irreducible,
        cfg: Cfg {
            blocks: a.cfg.blocks,
            edges: a.cfg.edges,
            calls: &a.cfg.calls,
            unresolved_targets: &a.cfg.unresolved_targets,
            max_exec_depth: a.cfg.max_exec_depth,
            outside_targets: p.outside_targets,
        },
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
        bottleneck: &t.bottleneck,
        bottleneck_detail: BottleneckDetailOut {
            at: t.bottleneck_detail.at,
            kind: t.bottleneck_detail.kind,
            by: t.bottleneck_detail.by,
            cycles: r2(t.bottleneck_detail.cycles),
            share: r4(t.bottleneck_detail.share),
            depth: t.bottleneck_detail.depth,
        },
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
                bottleneck: &o.bottleneck,
                bottleneck_unit: o.bottleneck_unit,
                single_simd_cycles: r2(o.single_simd_iteration_cycles),
                pipes: Pipes::of(&o.pipes),
            }
        },
        regions: RegionSeq(t, None),
        blocks: BlockSeq(t, None),
        bound_by: t.dominant_bound(),
        bottleneck_unit: match t.dominant_bound() {
            b @ ("call" | "none") => b,
            b => agx_analysis::timing::bound_label(b),
        },
        model: Model {
            gpu: t.gpu,
            chip: p.options.chip.chip,
            measured_on: p.options.gpu.measured_on,
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
        call_assumptions: &p.program.assumptions,
        divergence: p.program.divergence_counts(),
        divergence_paths: p.program.divergence_range(),
        instructions_detail: Some(DetailSeq(p)),
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
        })
        .collect()
}

fn suggestions_out(s: &[agx_analysis::timing::Suggestion]) -> Vec<SuggestionOut<'_>> {
    s.iter()
        .map(|s| SuggestionOut {
            severity: s.severity,
            offset: s.offset,
            message: &s.message,
            rule: s.rule,
            figures: &s.figures,
            fact: &s.fact,
            sites: &s.sites,
        })
        .collect()
}

fn calls_out(p: &Profile) -> Vec<CallOut<'_>> {
    let prog = &p.program;
    prog.calls
        .iter()
        .map(|c| {
            let callee = c.callee.and_then(|k| prog.functions.get(k));
            CallOut {
                at: c.at,
                target: c.target,
                symbol: c.symbol.as_deref(),
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

fn functions_out(p: &Profile) -> Vec<FunctionOut<'_>> {
    p.program
        .functions
        .iter()
        .enumerate()
        .map(|(k, f)| {
            let a = &f.analysis;
            FunctionOut {
                entry: f.entry,
                symbol: f.symbol.as_deref(),
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
                branches: BranchSeq(&f.divergence.branches, k, None),
                divergence: f.divergence.counts,
                timing: (k > 0).then(|| {
                    let t = &f.timing;
                    FunctionTiming {
                        bottleneck: &t.bottleneck,
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
                    }
                }),
            }
        })
        .collect()
}

/// The kernel object of one profile, as a JSON value.
pub fn kernel_value(p: &Profile) -> serde_json::Value {
    serde_json::to_value(kernel(p)).unwrap_or(serde_json::Value::Null)
}

/// Writes one kernel object (compact, no newline) with its `source` file,
/// as `metal-profile batch` streams them into its document.
pub fn write_kernel<W: std::io::Write>(
    w: W,
    p: &Profile,
    source: Option<&str>,
) -> std::io::Result<()> {
    let mut k = kernel(p);
    k.source = source;
    write_kernel_compact(w, k)
}

/// Writes the versioned JSON document for these profiles to `w` (pretty
/// for up to [`PRETTY_LIMIT`] instructions, compact beyond), with a trailing
/// newline. Streaming: nothing of the size of the document is built in
/// memory.
pub fn write_document<W: std::io::Write>(mut w: W, profiles: &[Profile]) -> std::io::Result<()> {
    let doc = Document {
        schema: SCHEMA,
        tool: Tool {
            name: "metal-profiler",
            version: env!("CARGO_PKG_VERSION"),
        },
        kernels: profiles.iter().map(kernel).collect(),
    };
    let insns: usize = profiles.iter().map(|p| p.insns.len()).sum();
    // Pretty-printed for people; past PRETTY_LIMIT instructions compact,
    // which halves the size and the time of very large documents.
    if insns <= PRETTY_LIMIT {
        serde_json::to_writer_pretty(&mut w, &doc)?;
    } else {
        // what `serde_json::to_writer(&mut w, &doc)` writes (`kernels` is
        // the document's last field), each kernel through
        // `write_kernel_compact`
        let Document {
            schema,
            tool,
            kernels,
        } = doc;
        w.write_all(b"{\"schema\":")?;
        serde_json::to_writer(&mut w, schema)?;
        w.write_all(b",\"tool\":")?;
        serde_json::to_writer(&mut w, &tool)?;
        w.write_all(b",\"kernels\":[")?;
        for (n, k) in kernels.into_iter().enumerate() {
            if n > 0 {
                w.write_all(b",")?;
            }
            write_kernel_compact(&mut w, k)?;
        }
        w.write_all(b"]}")?;
    }
    w.write_all(b"\n")
}

/// `serde_json::to_writer(w, &k)`, the same bytes, with the
/// `instructions_detail` rows (the kernel's last field) written by
/// [`detail_row`] instead of serde: its per-field dispatch and key escaping
/// were ~15% of a 1M-instruction JSON run. (Rows formatted on both cores
/// took +0.3 s of CPU for no gain in wall time on a 2-logical-core VM: one
/// thread writes them.)
fn write_kernel_compact<W: std::io::Write>(mut w: W, mut k: Kernel<'_>) -> std::io::Result<()> {
    let Some(DetailSeq(p)) = k.instructions_detail.take() else {
        return serde_json::to_writer(w, &k).map_err(std::io::Error::other);
    };
    // the kernel without its rows, less the closing brace; the loops
    // written by `loop_row` in place of the `null` serde writes for them
    let slot = Splice::new(None);
    // (a kernel of the slot's lifetime: its references shortened)
    fn spliced<'s>(mut k: Kernel<'s>, slot: &'s Splice) -> Kernel<'s> {
        k.loops.1 = Some(slot);
        k.regions.1 = Some(slot);
        k.blocks.1 = Some(slot);
        for f in &mut k.functions {
            f.branches.2 = Some(slot);
        }
        k
    }
    let k = spliced(k, &slot);
    let mut head = HoldLast {
        inner: &mut w,
        buf: Vec::with_capacity(1 << 16),
        rows: Some((&slot, p)),
    };
    serde_json::to_writer(&mut head, &k).map_err(std::io::Error::other)?;
    let closing = head.buf.pop();
    debug_assert_eq!(closing, Some(b'}'));
    head.inner.write_all(&head.buf)?;
    drop(head);
    w.write_all(b",\"instructions_detail\":[")?;
    let details = &p.timing.instructions_detail;
    let mut buf = Vec::with_capacity(1 << 17);
    for (j, i) in p.insns.iter().enumerate() {
        if j > 0 {
            buf.push(b',');
        }
        detail_row(&mut buf, &detail(p, details, j, i));
        if buf.len() >= 1 << 16 {
            w.write_all(&buf)?;
            buf.clear();
        }
    }
    w.write_all(&buf)?;
    w.write_all(b"]}")
}

/// A writer that passes everything on in pieces of ~64 KiB but the bytes
/// written last, left in `buf`; with `rows`, a `null` written while the
/// slot is set is replaced by those rows of the profile.
struct HoldLast<'a, W: std::io::Write> {
    inner: W,
    buf: Vec<u8>,
    rows: Option<(&'a Splice, &'a Profile)>,
}

impl<W: std::io::Write> HoldLast<'_, W> {
    /// Passes on all but the last byte once a piece is held.
    fn pass_on(&mut self) -> std::io::Result<()> {
        if self.buf.len() >= 1 << 16 {
            // keep the last byte back
            let keep = self.buf.pop();
            self.inner.write_all(&self.buf)?;
            self.buf.clear();
            self.buf.extend(keep);
        }
        Ok(())
    }

    /// The rows `r` of `p`, as serde writes their sequence.
    fn rows(&mut self, r: Rows, p: &Profile) -> std::io::Result<()> {
        match r {
            Rows::Loops => {
                let t = &p.timing;
                self.buf.push(b'[');
                for (i, l) in p.analysis.loops.iter().enumerate() {
                    if i > 0 {
                        self.buf.push(b',');
                    }
                    loop_row(&mut self.buf, &loop_out(t.loops.get(i), l));
                    self.pass_on()?;
                }
                self.buf.push(b']');
            }
            Rows::Regions => {
                self.buf.push(b'[');
                for (i, r) in p.timing.regions.iter().enumerate() {
                    if i > 0 {
                        self.buf.push(b',');
                    }
                    region_row(&mut self.buf, &region_out(r));
                    self.pass_on()?;
                }
                self.buf.push(b']');
            }
            Rows::Blocks => {
                self.buf.push(b'[');
                for (i, b) in p.timing.blocks.iter().enumerate() {
                    if i > 0 {
                        self.buf.push(b',');
                    }
                    block_row(&mut self.buf, &block_out(b));
                    self.pass_on()?;
                }
                self.buf.push(b']');
            }
            Rows::Branches(k) => {
                self.buf.push(b'[');
                let none = &[][..];
                let bs = p
                    .program
                    .functions
                    .get(k)
                    .map_or(none, |f| &f.divergence.branches[..]);
                for (i, b) in bs.iter().enumerate() {
                    if i > 0 {
                        self.buf.push(b',');
                    }
                    branch_row(&mut self.buf, b);
                    self.pass_on()?;
                }
                self.buf.push(b']');
            }
        }
        Ok(())
    }
}

impl<W: std::io::Write> std::io::Write for HoldLast<'_, W> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        if let Some((slot, p)) = self.rows {
            if b == b"null" {
                if let Some(r) = slot.take() {
                    self.rows(r, p)?;
                    return Ok(b.len());
                }
            }
        }
        self.buf.extend_from_slice(b);
        self.pass_on()?;
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `{:?}`-free writers of serde_json's compact spelling, for the rows.
mod row {
    use serde_json::ser::{CompactFormatter, Formatter};

    /// `"key":`
    pub fn key(buf: &mut Vec<u8>, first: bool, k: &str) {
        if !first {
            buf.push(b',');
        }
        buf.push(b'"');
        buf.extend_from_slice(k.as_bytes());
        buf.extend_from_slice(b"\":");
    }

    pub fn uint(buf: &mut Vec<u8>, v: u64) {
        let _ = CompactFormatter.write_u64(buf, v);
    }

    pub fn opt_uint(buf: &mut Vec<u8>, v: Option<u64>) {
        match v {
            Some(v) => uint(buf, v),
            None => buf.extend_from_slice(b"null"),
        }
    }

    /// An `f64` as serde_json writes it (`null` when not finite). A figure
    /// of hundredths or ten-thousandths (the records' `r2` / `r4`) is
    /// spelled from its digits: the shortest text that reads back as it is
    /// those digits (test `floats_are_what_serde_writes`).
    pub fn float(buf: &mut Vec<u8>, v: f64) {
        if !v.is_finite() {
            buf.extend_from_slice(b"null");
            return;
        }
        for (scale, places) in [(100.0, 2u32), (10_000.0, 4)] {
            let k = (v * scale).round();
            if k.abs() < 1e15 && k / scale == v {
                if v.is_sign_negative() {
                    buf.push(b'-');
                }
                let a = k.abs() as u64;
                let unit = 10u64.pow(places);
                crate::text::put_u(buf, a / unit);
                buf.push(b'.');
                let mut f = a % unit;
                if f == 0 {
                    buf.push(b'0');
                } else {
                    let mut n = places;
                    while f.is_multiple_of(10) {
                        f /= 10;
                        n -= 1;
                    }
                    // `f` zero-padded to `n` digits
                    let mut d = [b'0'; 4];
                    for i in (0..n as usize).rev() {
                        d[i] = b'0' + (f % 10) as u8;
                        f /= 10;
                    }
                    buf.extend_from_slice(&d[..n as usize]);
                }
                return;
            }
        }
        let _ = CompactFormatter.write_f64(buf, v);
    }

    pub fn opt_float(buf: &mut Vec<u8>, v: Option<f64>) {
        match v {
            Some(v) => float(buf, v),
            None => buf.extend_from_slice(b"null"),
        }
    }

    pub fn opt_str(buf: &mut Vec<u8>, v: Option<&str>) {
        match v {
            Some(v) => super::json_str(buf, v),
            None => buf.extend_from_slice(b"null"),
        }
    }

    pub fn uints(buf: &mut Vec<u8>, v: &[u32]) {
        buf.push(b'[');
        for (i, &x) in v.iter().enumerate() {
            if i > 0 {
                buf.push(b',');
            }
            uint(buf, x as u64);
        }
        buf.push(b']');
    }
}

/// A [`Bound`] as serde writes it.
fn bound_row(buf: &mut Vec<u8>, b: &Bound) {
    row::key(buf, true, "by");
    json_str(buf, b.by);
    row::key(buf, false, "cycles");
    row::float(buf, b.cycles);
    row::key(buf, false, "components");
    buf.push(b'{');
    for (i, (n, v)) in b.components.iter().enumerate() {
        row::key(buf, i == 0, n);
        row::float(buf, *v);
    }
    buf.extend_from_slice(b"}}");
}

/// A [`PartKind`](agx_analysis::timing::PartKind) as serde writes it.
fn part_kind(k: agx_analysis::timing::PartKind) -> &'static str {
    use agx_analysis::timing::PartKind;
    match k {
        PartKind::StraightLine => "\"straight_line\"",
        PartKind::Loop => "\"loop\"",
        PartKind::Call => "\"call\"",
    }
}

/// A [`RegionOut`] as serde writes it.
fn region_row(buf: &mut Vec<u8>, r: &RegionOut) {
    use row::*;
    buf.push(b'{');
    key(buf, true, "at");
    uint(buf, r.at as u64);
    key(buf, false, "kind");
    buf.extend_from_slice(part_kind(r.kind).as_bytes());
    key(buf, false, "depth");
    uint(buf, r.depth as u64);
    key(buf, false, "executions");
    float(buf, r.executions);
    key(buf, false, "cycles_per_execution");
    float(buf, r.cycles_per_execution);
    key(buf, false, "self_cycles");
    float(buf, r.self_cycles);
    key(buf, false, "self_share");
    float(buf, r.self_share);
    key(buf, false, "by");
    json_str(buf, r.by);
    key(buf, false, "stall_raw");
    float(buf, r.stall_raw);
    key(buf, false, "stall_exposed");
    float(buf, r.stall_exposed);
    if let Some(l) = r.loop_index {
        key(buf, false, "loop_index");
        uint(buf, l as u64);
    }
    if let Some(c) = r.callee {
        key(buf, false, "callee");
        uint(buf, c as u64);
    }
    buf.push(b'}');
}

/// A [`BlockOut`] as serde writes it.
fn block_row(buf: &mut Vec<u8>, b: &BlockOut) {
    use row::*;
    buf.push(b'{');
    key(buf, true, "index");
    uint(buf, b.index as u64);
    key(buf, false, "start");
    uint(buf, b.start as u64);
    key(buf, false, "end");
    uint(buf, b.end as u64);
    key(buf, false, "cycles");
    float(buf, b.cycles);
    key(buf, false, "share");
    float(buf, b.share);
    key(buf, false, "executions");
    float(buf, b.executions);
    key(buf, false, "instructions");
    uint(buf, b.instructions as u64);
    key(buf, false, "cycles_per_execution");
    float(buf, b.cycles_per_execution);
    buf.push(b'}');
}

/// A [`Branch`](agx_analysis::divergence::Branch) as serde writes it.
fn branch_row(buf: &mut Vec<u8>, b: &agx_analysis::divergence::Branch) {
    use row::*;
    buf.push(b'{');
    key(buf, true, "at");
    uint(buf, b.at as u64);
    key(buf, false, "kind");
    json_str(buf, b.kind.name());
    buf.extend_from_slice(if b.uniform {
        b",\"uniform\":true"
    } else {
        b",\"uniform\":false"
    });
    key(buf, false, "reason");
    json_str(buf, &b.reason.to_string());
    key(buf, false, "arms_cycles");
    opt_float(buf, b.arms_cycles);
    buf.push(b'}');
}

/// A [`Loop`] as serde writes it (fields in declaration order; test
/// `compact_kernels_are_what_serde_writes`).
fn loop_row(buf: &mut Vec<u8>, l: &Loop<'_>) {
    use row::*;
    buf.push(b'{');
    key(buf, true, "index");
    opt_uint(buf, l.index.map(|x| x as u64));
    key(buf, false, "start");
    uint(buf, l.start as u64);
    key(buf, false, "end");
    uint(buf, l.end as u64);
    key(buf, false, "depth");
    uint(buf, l.depth as u64);
    key(buf, false, "instructions");
    uint(buf, l.instructions as u64);
    key(buf, false, "header");
    uint(buf, l.header as u64);
    key(buf, false, "latches");
    uints(buf, l.latches);
    key(buf, false, "exits");
    uints(buf, l.exits);
    key(buf, false, "blocks");
    uint(buf, l.blocks as u64);
    key(buf, false, "trip_count");
    opt_uint(buf, l.trip_count.map(u64::from));
    key(buf, false, "trip_count_source");
    opt_str(buf, l.trip_count_source);
    key(buf, false, "cycles_per_iteration");
    opt_float(buf, l.cycles_per_iteration);
    key(buf, false, "latency_bound_cycles");
    opt_float(buf, l.latency_bound_cycles);
    key(buf, false, "bottleneck");
    opt_str(buf, l.bottleneck);
    key(buf, false, "bound");
    match &l.bound {
        Some(b) => {
            buf.push(b'{');
            bound_row(buf, b);
        }
        None => buf.extend_from_slice(b"null"),
    }
    key(buf, false, "body");
    match &l.body {
        Some(b) => {
            buf.push(b'{');
            key(buf, true, "instructions");
            uint(buf, b.instructions as u64);
            key(buf, false, "alu_per_iter");
            float(buf, b.alu_per_iter);
            key(buf, false, "loads");
            uint(buf, b.loads as u64);
            key(buf, false, "stores");
            uint(buf, b.stores as u64);
            key(buf, false, "wait_stall");
            float(buf, b.wait_stall);
            key(buf, false, "exposed_stall");
            float(buf, b.exposed_stall);
            key(buf, false, "recurrence_cycles");
            float(buf, b.recurrence_cycles);
            key(buf, false, "memory_stall");
            float(buf, b.memory_stall);
            key(buf, false, "bottleneck_unit");
            json_str(buf, b.bottleneck_unit);
            key(buf, false, "bound");
            buf.push(b'{');
            bound_row(buf, &b.bound);
            key(buf, false, "raw_stall");
            float(buf, b.raw_stall);
            key(buf, false, "stall");
            let s = &b.stall;
            buf.push(b'{');
            key(buf, true, "raw");
            float(buf, s.raw);
            key(buf, false, "exposed");
            float(buf, s.exposed);
            key(buf, false, "wait_raw");
            float(buf, s.wait_raw);
            key(buf, false, "wait_exposed");
            float(buf, s.wait_exposed);
            buf.push(b'}');
            key(buf, false, "next");
            buf.push(b'{');
            key(buf, true, "by");
            json_str(buf, b.next.by);
            key(buf, false, "cycles");
            float(buf, b.next.cycles);
            buf.push(b'}');
            key(buf, false, "single_simd_cycles");
            float(buf, b.single_simd_cycles);
            key(buf, false, "pipes");
            let q = &b.pipes;
            buf.push(b'{');
            for (i, (n, v)) in [
                ("f32", q.f32),
                ("f16", q.f16),
                ("scib", q.scib),
                ("ic", q.ic),
                ("mem", q.mem),
                ("issue", q.issue),
                ("dram", q.dram),
                ("raw_penalty", q.raw_penalty),
            ]
            .into_iter()
            .enumerate()
            {
                key(buf, i == 0, n);
                float(buf, v);
            }
            buf.extend_from_slice(b"}}");
        }
        None => buf.extend_from_slice(b"null"),
    }
    buf.push(b'}');
}

/// One `instructions_detail` row as `serde_json::to_writer` writes a
/// [`Detail`] (fields in declaration order; test
/// `compact_kernels_are_what_serde_writes`).
fn detail_row(buf: &mut Vec<u8>, d: &Detail<'_>) {
    use serde_json::ser::{CompactFormatter, Formatter};
    // (writing to a Vec cannot fail)
    let int = |buf: &mut Vec<u8>, v: u32| {
        let _ = CompactFormatter.write_u32(buf, v);
    };
    let float = row::opt_float;
    let string = |buf: &mut Vec<u8>, v: Option<&str>| match v {
        None => buf.extend_from_slice(b"null"),
        Some(v) => json_str(buf, v),
    };
    buf.extend_from_slice(b"{\"offset\":");
    int(buf, d.offset);
    buf.extend_from_slice(b",\"size\":");
    int(buf, d.size as u32);
    buf.extend_from_slice(b",\"mnemonic\":");
    json_str(buf, d.mnemonic);
    buf.extend_from_slice(b",\"text\":");
    d.text.with(|a| json_str(buf, a));
    if let Some(native) = &d.native {
        buf.extend_from_slice(b",\"native\":");
        native.with(|a| json_str(buf, a));
    }
    buf.extend_from_slice(b",\"unit\":");
    string(buf, d.unit);
    buf.extend_from_slice(b",\"cycles\":");
    float(buf, d.cycles);
    buf.extend_from_slice(b",\"latency\":");
    float(buf, d.latency);
    buf.extend_from_slice(b",\"loop_depth\":");
    match d.loop_depth {
        Some(v) => int(buf, v),
        None => buf.extend_from_slice(b"null"),
    }
    buf.extend_from_slice(b",\"stall\":");
    float(buf, d.stall);
    buf.extend_from_slice(b",\"stall_single\":");
    float(buf, d.stall_single);
    buf.extend_from_slice(b",\"raw_dep\":");
    match &d.raw_dep {
        Some(r) => {
            buf.extend_from_slice(b"{\"producer\":");
            int(buf, r.producer);
            buf.extend_from_slice(b",\"penalty\":");
            float(buf, Some(r.penalty));
            buf.extend_from_slice(b",\"bits\":");
            int(buf, r.bits);
            buf.push(b'}');
        }
        None => buf.extend_from_slice(b"null"),
    }
    buf.extend_from_slice(b",\"call_target\":");
    string(buf, d.call_target);
    buf.extend_from_slice(if d.raised {
        b",\"raised\":true"
    } else {
        b",\"raised\":false"
    });
    buf.extend_from_slice(b",\"issue_cycles\":");
    float(buf, d.issue_cycles);
    buf.extend_from_slice(b",\"self_cycles\":");
    float(buf, d.self_cycles);
    buf.extend_from_slice(b",\"executions\":");
    float(buf, d.executions);
    if d.uniform_address {
        buf.extend_from_slice(b",\"uniform_address\":true");
    }
    if let Some(k) = d.stack_kind {
        buf.extend_from_slice(b",\"stack_kind\":");
        string(buf, Some(k));
    }
    if let Some(a) = d.access {
        buf.extend_from_slice(b",\"access\":");
        let _ = serde_json::to_writer(&mut *buf, a);
    }
    buf.push(b'}');
}

/// A JSON string as serde_json writes it: as is when nothing needs an
/// escape (control characters, `"` and `\\`), through serde_json otherwise.
fn json_str(buf: &mut Vec<u8>, s: &str) {
    if s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
        let _ = serde_json::to_writer(&mut *buf, s);
    } else {
        buf.push(b'"');
        buf.extend_from_slice(s.as_bytes());
        buf.push(b'"');
    }
}

/// The versioned JSON document for these profiles, as a string (see
/// [`write_document`]).
pub fn document(profiles: &[Profile]) -> String {
    let insns: usize = profiles.iter().map(|p| p.insns.len()).sum();
    let mut buf = Vec::with_capacity(256 + insns * 300);
    if let Err(e) = write_document(&mut buf, profiles) {
        return format!("{{\"error\": \"{e}\"}}\n");
    }
    String::from_utf8(buf).unwrap_or_default()
}

/// The `--explain-model --format json` document: the same facts as
/// [`crate::explain_model`] (the default model's cost table with each row's source,
/// model rules, memory-parameter defaults), under the same schema id, with
/// `model` in place of `kernels`.
pub fn model_document() -> String {
    let t = agx_analysis::gpu::default_model().timing;
    let doc = serde_json::json!({
        "schema": SCHEMA,
        "tool": { "name": "metal-profiler", "version": env!("CARGO_PKG_VERSION") },
        "model": {
            "gpu": t.name,
            "schedulers_per_core": t.schedulers_per_core,
            "simd_width": t.simd_width,
            "issue_cycles": t.issue_cycles,
            "raw_penalty_32": t.raw_penalty_32,
            "raw_penalty_16": t.raw_penalty_16,
            "entries": t.entries.iter().map(|e| serde_json::json!({
                "key": e.key.name(),
                "covers": e.covers,
                "unit": e.unit.name(),
                "latency": e.latency,
                "throughput": e.throughput,
                "source": e.source,
                "assumption": e.is_assumption(),
            })).collect::<Vec<_>>(),
            "rules": t.notes.iter().map(|(rule, source)| serde_json::json!({
                "rule": rule, "source": source,
            })).collect::<Vec<_>>(),
            "memory_parameters": MemParams::default().documented().into_iter().map(|(name, value, source)| serde_json::json!({
                "name": name, "value": value, "source": source,
            })).collect::<Vec<_>>(),
        }
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn bins(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        let mut es: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        es.sort();
        for e in es {
            if e.is_dir() {
                bins(&e, out);
            } else if e.extension().is_some_and(|x| x == "bin") {
                out.push(e);
            }
        }
    }

    /// The shipped example and every testdata kernel, profiled.
    fn profiles() -> Vec<Profile> {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut files = vec![repo.join("examples/matmul_naive.bin")];
        bins(&repo.join("testdata"), &mut files);
        files
            .iter()
            .map(|f| {
                let code = std::fs::read(f).unwrap();
                let insns: Vec<_> = agx_isa::stream::walk(&code, 0)
                    .filter_map(|i| i.into_insn())
                    .collect();
                let name = f.display().to_string();
                Profile::build(name, None, insns, None, vec![], &Default::default())
            })
            .collect()
    }

    #[test]
    fn compact_kernels_are_what_serde_writes() {
        let ps = profiles();
        assert!(ps.len() > 50, "{} kernels", ps.len());
        for p in &ps {
            let mut ours = Vec::new();
            write_kernel_compact(&mut ours, kernel(p)).unwrap();
            let serde = serde_json::to_vec(&kernel(p)).unwrap();
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                String::from_utf8(serde).unwrap(),
                "{}",
                p.name
            );
        }
    }

    #[test]
    fn floats_are_what_serde_writes() {
        let mut v = vec![
            0.0,
            -0.0,
            0.01,
            -0.01,
            0.0001,
            0.00015,
            1e-7,
            0.1 + 0.2,
            1e12,
            1e13 - 0.01,
            1e13,
            1e15,
            1e16,
            1e17 + 3.0,
            9.999_999_999_999e12,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        for k in -20_000i64..200_000 {
            v.push(k as f64 / 100.0);
            v.push(k as f64 / 10_000.0);
            v.push(k as f64 / 1000.0);
        }
        let mut s: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..100_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let m = (s >> 11) as f64 / (1u64 << 53) as f64;
            let x = m * 10f64.powi((s % 22) as i32 - 6);
            v.extend([x, r2(x), r4(x), -r2(x), (x * 1e6).round()]);
        }
        for x in v {
            let mut ours = Vec::new();
            row::float(&mut ours, x);
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                serde_json::to_string(&x).unwrap(),
                "{x:e}"
            );
        }
    }

    #[test]
    fn strings_are_escaped_as_serde_escapes_them() {
        for s in [
            "",
            "plain r0l, r1",
            "a\"b",
            "back\\slash",
            "tab\t",
            "\n\r",
            "\u{1}\u{1f}",
            "ünï ✓",
        ] {
            let mut ours = Vec::new();
            json_str(&mut ours, s);
            assert_eq!(ours, serde_json::to_vec(s).unwrap(), "{s:?}");
        }
    }

    #[test]
    fn hold_last_passes_on_all_but_the_last_bytes() {
        let mut inner = Vec::new();
        let mut all = Vec::new();
        let mut h = HoldLast {
            inner: &mut inner,
            buf: Vec::new(),
            rows: None,
        };
        for k in 0..40_000u32 {
            let piece = format!("{k},");
            std::io::Write::write_all(&mut h, piece.as_bytes()).unwrap();
            all.extend_from_slice(piece.as_bytes());
        }
        let held = std::mem::take(&mut h.buf);
        assert!(!held.is_empty());
        inner.extend_from_slice(&held);
        assert_eq!(inner, all);
    }
}
