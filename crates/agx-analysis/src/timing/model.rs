//! Our steady-state model: one result per fact.
//!
//! For every region (the own instructions of a loop, one iteration; or the
//! straight-line code outside loops, once) we compute named **bounds** on
//! the scheduler cycles one SIMD-group's pass costs, and the region costs
//! their maximum ([`Bound`]):
//!
//! * `f32`, `f16`, `scib`, `fscib` (their sum: they share the FP32/integer/
//!   conditional pipes), `ic`: reciprocal throughputs of the instructions on
//!   that pipe, plus the back-to-back RAW penalties of the instructions on
//!   that pipe (a penalty is paid on the consumer's pipe);
//! * `dispatch`: one issue slot per instruction;
//! * `memory_bandwidth`: device/texture bytes (and the replays of
//!   threadgroup requests with an N-way bank conflict, [`crate::banks`])
//!   over the scheduler's share of L1 bandwidth; `device_bandwidth`: the first touches that reach DRAM
//!   (the cache model's `dram_bytes`, [`super::cache`]) over its share of
//!   the chip's DRAM bandwidth;
//! * `memory_latency` / `dependency_chain`: one SIMD-group's in-order pass
//!   (operands ready after their producer's latency, loads complete at their
//!   `wait`, RAW penalties delay issue), divided by the `k` SIMD-groups per
//!   scheduler that interleave. When the pass waits on memory the quotient
//!   is `memory_latency` and `dependency_chain` is the pass without its
//!   memory stalls; otherwise it is `dependency_chain` (and
//!   `memory_latency` is 0).
//!
//! The part of the cost above the largest throughput bound is the *exposed
//! stall*; it is shared among the instructions that stall in proportion to
//! their stall, so per-wait figures sum to the region's.
//!
//! A loop's `cycles_per_iteration` is its own bound plus its nested loops'
//! (trip count x their cycles per iteration); the kernel's total is the sum
//! of its [`BreakdownPart`]s. `paths` re-costs each region without the arms
//! a uniform branch skips (shortest) or with only the dearer arm of each
//! if/else (longest).

use super::mesa::{mesa_estimate, MesaEstimate};
use super::table::{CostEntry, GpuTiming, MemParams, Unit};
use agx_isa::semantics::dest_width;
use agx_isa::{CostKey, ExecOp, Instruction, MemAccess, MemDir, MemSpace, RegFile, Width};
use serde::Serialize;
use std::collections::BTreeMap;

/// Trip count assumed for loops whose count is unknown.
pub const DEFAULT_TRIP_COUNT: u32 = 16;

/// Model parameters (all overridable; defaults stated in the report).
#[derive(Clone, Debug, Serialize)]
pub struct ModelParams {
    /// Trip count for every loop without an override.
    pub trip_count: u32,
    /// Whether `trip_count` was given by the user (`--trip-count`), not the
    /// model's default: the loops' `trip_count_source` says so.
    pub trip_count_given: bool,
    /// Per-loop trip counts, keyed by the loop header's address.
    pub loop_trip_counts: BTreeMap<u32, u32>,
    /// Threads resident per GPU core (occupancy), e.g. from
    /// `occupancy::threads_per_core`. Default 1024 (the maximum).
    pub threads_per_core: u32,
    pub mem: MemParams,
    /// The GPU model (timing table, occupancy rule), chosen by the front end.
    #[serde(skip)]
    pub gpu: &'static crate::gpu::GpuModel,
    /// The chip whose memory parameters `mem` defaults to.
    #[serde(skip)]
    pub chip: &'static super::table::DramVariant,
    /// The threadgroup shape the lanes are laid out over (issue 27): from
    /// the input or `--threadgroup`; `None`: [`crate::address::Shape::DEFAULT`].
    #[serde(skip)]
    pub threadgroup: Option<crate::address::Shape>,
    /// Uniform registers a preamble fills ([`crate::address::preamble_uniforms`]).
    #[serde(skip)]
    pub uniform_values: crate::address::UniformValues,
}

impl Default for ModelParams {
    fn default() -> Self {
        let gpu = crate::gpu::default_model();
        let chip = gpu.default_chip();
        ModelParams {
            trip_count: DEFAULT_TRIP_COUNT,
            trip_count_given: false,
            loop_trip_counts: BTreeMap::new(),
            threads_per_core: 1024,
            mem: gpu.mem_params(chip),
            threadgroup: None,
            uniform_values: Default::default(),
            gpu,
            chip,
        }
    }
}

impl ModelParams {
    /// SIMD-groups resident per scheduler (at least 1).
    pub fn simds_per_scheduler(&self, gpu: &GpuTiming) -> f64 {
        let s =
            self.threads_per_core as f64 / gpu.simd_width as f64 / gpu.schedulers_per_core as f64;
        s.max(1.0)
    }
}

/// A back-to-back read-after-write dependency.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RawDep {
    /// Address of the producing instruction.
    pub producer: u32,
    /// Extra cycles charged (0 when the register cache absorbs it).
    pub penalty: f64,
    /// Register width of the dependency (16 or 32).
    pub bits: u32,
}

/// Per-instruction detail for the annotated disassembly.
///
/// Kept small (56 bytes; one per instruction of the kernel): the cost-table
/// figures are read through `entry` ([`InsnDetail::key`], [`unit`],
/// [`cycles`], [`latency`]), the mnemonic is the instruction's, and the RAW
/// dependency is held unboxed from its `Option` ([`InsnDetail::raw_dep`]:
/// 24 bytes as an `Option<RawDep>`, 13 here).
///
/// [`unit`]: InsnDetail::unit
/// [`cycles`]: InsnDetail::cycles
/// [`latency`]: InsnDetail::latency
#[derive(Clone, Debug)]
pub struct InsnDetail {
    pub addr: u32,
    /// Loop nesting depth (0 = not in a loop).
    pub loop_depth: u32,
    /// The instruction's cost-table row.
    pub entry: &'static CostEntry,
    /// Index (into `KernelTiming::loops`) of the innermost enclosing loop.
    pub loop_index: Option<u32>,
    /// Back-to-back RAW dependency on the previous instruction, if any
    /// ([`InsnDetail::raw_dep`]): its producer's address, its penalty and
    /// its register width (0: no dependency).
    dep_producer: u32,
    dep_penalty: f64,
    dep_bits: u8,
    /// Stall of one SIMD-group before this instruction issues (alone on its
    /// scheduler), in cycles.
    pub stall_single: f64,
    /// Stall left exposed at the kernel's occupancy (after the other
    /// SIMD-groups on the scheduler fill it).
    pub stall: f64,
    /// A device/threadgroup load whose address the divergence analysis
    /// proved uniform ([`crate::divergence::Divergence::uniform_loads`]):
    /// one value for the whole SIMD-group, charged once per SIMD-group.
    pub uniform_address: bool,
    /// For a stack access: what it is for ([`crate::stack_kind`]).
    pub stack_kind: Option<crate::stack_kind::StackKind>,
}

impl InsnDetail {
    /// Back-to-back RAW dependency on the previous instruction, if any.
    pub fn raw_dep(&self) -> Option<RawDep> {
        (self.dep_bits != 0).then_some(RawDep {
            producer: self.dep_producer,
            penalty: self.dep_penalty,
            bits: self.dep_bits as u32,
        })
    }
    /// Sets [`InsnDetail::raw_dep`] (a dependency's width is 16 or 32).
    pub fn set_raw_dep(&mut self, dep: Option<RawDep>) {
        match dep {
            Some(r) => {
                let bits = u8::try_from(r.bits)
                    .ok()
                    .filter(|&b| b != 0)
                    .expect("a RAW dependency is 16 or 32 bits wide");
                self.dep_producer = r.producer;
                self.dep_penalty = r.penalty;
                self.dep_bits = bits;
            }
            None => {
                self.dep_producer = 0;
                self.dep_penalty = 0.0;
                self.dep_bits = 0;
            }
        }
    }
    /// Cost-table key ([`Instruction::cost_key`]), as spelled in the
    /// table.
    pub fn key(&self) -> &'static str {
        self.entry.key.name()
    }
    pub fn unit(&self) -> Unit {
        self.entry.unit
    }
    /// Reciprocal throughput on `unit`'s pipe.
    pub fn cycles(&self) -> f64 {
        self.entry.throughput
    }
    pub fn latency(&self) -> f64 {
        self.entry.latency
    }
    /// Issue cycles of one execution: its pipe's reciprocal throughput plus
    /// the RAW penalty it pays, at least one dispatch slot. With the exposed
    /// stall (`stall`) it is the weight by which its region's cost is shared
    /// among the region's instructions (`KernelTiming::insn_cycles`).
    /// `gpu`: the timing table the detail was computed with.
    pub fn issue_cycles(&self, gpu: &GpuTiming) -> f64 {
        let pen = if self.dep_bits != 0 {
            self.dep_penalty
        } else {
            0.0
        };
        (self.cycles() + pen).max(gpu.issue_of(self.unit()))
    }
}

impl Serialize for InsnDetail {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("InsnDetail", 11)?;
        st.serialize_field("addr", &self.addr)?;
        st.serialize_field("key", self.key())?;
        st.serialize_field("unit", &self.unit())?;
        st.serialize_field("cycles", &self.cycles())?;
        st.serialize_field("latency", &self.latency())?;
        st.serialize_field("loop_depth", &self.loop_depth)?;
        st.serialize_field("loop_index", &self.loop_index)?;
        st.serialize_field("raw_dep", &self.raw_dep())?;
        st.serialize_field("stall_single", &self.stall_single)?;
        st.serialize_field("stall", &self.stall)?;
        st.serialize_field("uniform_address", &self.uniform_address)?;
        if let Some(k) = self.stack_kind {
            st.serialize_field("stack_kind", k.name())?;
        }
        st.end()
    }
}

/// Pipe pressure of one region (one iteration of a loop body).
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct PipeCycles {
    pub f32: f64,
    pub f16: f64,
    pub scib: f64,
    pub ic: f64,
    /// Device-memory L1 bandwidth cycles per scheduler.
    pub mem: f64,
    /// Dispatch cycles (one per instruction).
    pub issue: f64,
    /// Device-memory (DRAM) bandwidth cycles per scheduler for the bytes
    /// that miss L1.
    pub dram: f64,
    /// Sum of back-to-back RAW penalties (already counted on the pipe of
    /// each consumer).
    pub raw_penalty: f64,
}

impl PipeCycles {
    /// F32 + F16 + SCIB (RAW penalties of their instructions included).
    pub fn fscib(&self) -> f64 {
        self.f32 + self.f16 + self.scib
    }
    fn add_scaled(&mut self, o: &PipeCycles, w: f64) {
        self.f32 += o.f32 * w;
        self.f16 += o.f16 * w;
        self.scib += o.scib * w;
        self.ic += o.ic * w;
        self.mem += o.mem * w;
        self.issue += o.issue * w;
        self.dram += o.dram * w;
        self.raw_penalty += o.raw_penalty * w;
    }
}

/// One `wait` and the loads it completes.
#[derive(Clone, Debug, Serialize)]
pub struct WaitStall {
    pub addr: u32,
    /// Scoreboard slot, when known.
    pub slot: Option<u32>,
    /// Addresses of the loads this wait completes.
    pub loads: Vec<u32>,
    /// Memory latency assumed for them.
    pub latency: f64,
    /// Cycles of work one SIMD-group issued between the first load and this
    /// wait.
    pub independent_work: f64,
    /// Stall of one SIMD-group at this wait.
    pub stall_single: f64,
    /// Stall left exposed at the kernel's occupancy.
    pub exposed: f64,
}

/// Names of the bound components, in the order ties are broken.
pub const BOUND_NAMES: [&str; 12] = [
    "f32",
    "f16",
    "scib",
    "fscib",
    "ic",
    "dispatch",
    "memory_bandwidth",
    "device_bandwidth",
    "memory_latency",
    "dependency_chain",
    // synchronisation (issue 35): [`super::sync`]
    "barrier",
    "atomic",
];

/// Components that are throughput limits (the rest are latency limits).
/// The synchronisation bounds count with them: the cost above them is the
/// memory and dependency stall the waits expose, and a barrier's or a
/// serialised atomic's time is not a load's stall.
fn is_throughput_bound(name: &str) -> bool {
    !matches!(name, "memory_latency" | "dependency_chain")
}

/// Words for a bound component.
pub fn bound_label(name: &str) -> &'static str {
    match name {
        "f32" => "F32 pipe",
        "f16" => "F16 pipe",
        "scib" => "SCIB pipe",
        "fscib" => "F+SCIB pipe",
        "ic" => "IC pipe",
        "dispatch" => "dispatch",
        "memory_bandwidth" => "L1 bandwidth",
        "device_bandwidth" => "device-memory (DRAM) bandwidth",
        "memory_latency" => "memory latency",
        "dependency_chain" => "dependency chain",
        "barrier" => "threadgroup barriers",
        "atomic" => "atomics on shared addresses",
        _ => "?",
    }
}

/// The cost of a region (or loop iteration) as the maximum of named bounds.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Bound {
    /// The component that attains `cycles`.
    pub by: &'static str,
    /// `max(components)`.
    pub cycles: f64,
    /// Every bound, in cycles (see [`BOUND_NAMES`]).
    pub components: Components,
}

/// The twelve bound components by name: a fixed array (a map per region cost
/// ~280 heap bytes, and a loop has two bounds: ~47 B per instruction of a
/// 1M-instruction kernel of 12-instruction loops). Reads like the
/// `BTreeMap<&str, f64>` it replaces: `get`, `["ic"]`, and `iter`,
/// `Debug` and `Serialize` in the map's (alphabetical) key order.
#[derive(Clone, Copy, Default, PartialEq)]
pub struct Components([f64; 12]);

/// Indices into [`BOUND_NAMES`] in alphabetical order of the names.
const BOUND_NAMES_SORTED: [usize; 12] = {
    let mut ix = [0usize; 12];
    let mut i = 0;
    while i < 12 {
        ix[i] = i;
        i += 1;
    }
    // insertion sort on the names (const context: byte-wise compare)
    let mut a = 1;
    while a < 12 {
        let mut b = a;
        while b > 0 && str_lt(BOUND_NAMES[ix[b]], BOUND_NAMES[ix[b - 1]]) {
            let t = ix[b];
            ix[b] = ix[b - 1];
            ix[b - 1] = t;
            b -= 1;
        }
        a += 1;
    }
    ix
};

const fn str_lt(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut i = 0;
    while i < a.len() && i < b.len() {
        if a[i] != b[i] {
            return a[i] < b[i];
        }
        i += 1;
    }
    a.len() < b.len()
}

impl Components {
    fn index_of(name: &str) -> Option<usize> {
        BOUND_NAMES.iter().position(|n| *n == name)
    }
    /// The component called `name`.
    pub fn get(&self, name: &str) -> Option<&f64> {
        Self::index_of(name).map(|i| &self.0[i])
    }
    /// Every component passed through `f` (e.g. rounded for a report).
    pub fn map(&self, f: impl Fn(f64) -> f64) -> Components {
        Components(self.0.map(f))
    }
    /// (name, cycles) in alphabetical order of the names.
    pub fn iter(&self) -> impl Iterator<Item = (&'static &'static str, &f64)> + '_ {
        BOUND_NAMES_SORTED
            .iter()
            .map(move |&i| (&BOUND_NAMES[i], &self.0[i]))
    }
    /// The cycles, in alphabetical order of the names.
    pub fn values(&self) -> impl Iterator<Item = &f64> + '_ {
        self.iter().map(|(_, v)| v)
    }
}

impl std::ops::Index<&str> for Components {
    type Output = f64;
    fn index(&self, name: &str) -> &f64 {
        self.get(name)
            .unwrap_or_else(|| panic!("no bound component {name:?}"))
    }
}

impl std::fmt::Debug for Components {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for Components {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

impl Bound {
    /// The bound of `values` (indexed like [`BOUND_NAMES`]), each rounded to
    /// 3 decimals first so that `cycles == max(components)` exactly.
    fn of(values: [f64; 12]) -> Bound {
        let mut by = BOUND_NAMES[0];
        let mut cycles = f64::NEG_INFINITY;
        let mut components = Components::default();
        for ((name, v), c) in BOUND_NAMES.iter().zip(values).zip(&mut components.0) {
            let v = round3(v.max(0.0));
            if v > cycles {
                by = name;
                cycles = v;
            }
            *c = v;
        }
        Bound {
            by,
            cycles,
            components,
        }
    }

    /// The same bound with `extra` cycles (nested loops) added to every
    /// component.
    fn plus(&self, extra: f64) -> Bound {
        let mut b = Bound::of(self.components.0.map(|c| c + extra));
        // keep the attaining component when rounding ties it with another
        if (b.components[self.by] - b.cycles).abs() < 1e-9 {
            b.by = self.by;
        }
        b
    }

    /// The largest throughput component.
    pub fn throughput(&self) -> f64 {
        self.components
            .iter()
            .filter(|(k, _)| is_throughput_bound(k))
            .map(|(_, v)| *v)
            .fold(0.0, f64::max)
    }

    /// The largest component other than `by` (name, cycles).
    pub fn runner_up(&self) -> (&'static str, f64) {
        let mut best = ("none", -1.0);
        for (&name, &v) in BOUND_NAMES.iter().zip(&self.components.0) {
            if name != self.by && v > best.1 && !(self.by == "fscib" && is_fscib_part(name)) {
                best = (name, v);
            }
        }
        best
    }
}

fn is_fscib_part(name: &str) -> bool {
    matches!(name, "f32" | "f16" | "scib" | "fscib")
}

/// Timing of one region: a loop's own body (one iteration) or the
/// straight-line code outside loops.
#[derive(Clone, Debug, Serialize)]
pub struct RegionTiming {
    pub instructions: usize,
    pub pipes: PipeCycles,
    /// The region's cost: the maximum of its bounds.
    pub bound: Bound,
    /// `bound.cycles`: cycles per SIMD-group pass of the region.
    pub cycles_per_iteration: f64,
    /// Same as `cycles_per_iteration` (kept for schema compatibility: the
    /// latency view is now the `memory_latency`/`dependency_chain` bound).
    pub latency_bound_cycles: f64,
    /// Cycles one SIMD-group alone takes per iteration (in-order issue).
    pub single_simd_iteration_cycles: f64,
    /// The region's dependency chain per pass: the same figure as
    /// `bound.components["dependency_chain"]` (one SIMD-group's in-order
    /// pass without its memory stalls, over the SIMD-groups that share the
    /// scheduler), kept under its earlier name for the schema.
    pub recurrence_cycles: f64,
    /// Sum of every instruction's stall of one SIMD-group alone per pass
    /// (memory waits and register dependencies): the raw stall, before the
    /// other SIMD-groups hide it (`exposed_stall` is what is left).
    pub raw_stall: f64,
    pub loads: usize,
    pub stores: usize,
    pub waits: Vec<WaitStall>,
    /// Sum of one SIMD-group's wait stalls per iteration.
    pub wait_stall: f64,
    /// Stall cycles per SIMD-group pass left exposed at occupancy:
    /// `bound.cycles - max(throughput components)`.
    pub exposed_stall: f64,
    /// The part of `exposed_stall` spent at memory waits.
    pub memory_stall: f64,
    /// `max(F+SCIB, IC)` per iteration.
    pub alu_per_iter: f64,
    /// Which bound dominates, in words (`bound_label(bound.by)`, e.g.
    /// `"IC pipe"`).
    pub bottleneck_unit: &'static str,
    /// Human-readable bottleneck.
    pub bottleneck: String,
}

/// A loop of the kernel, with its timing.
#[derive(Clone, Debug)]
pub struct LoopTiming {
    /// Index in `KernelTiming::loops`, which is the order of
    /// `Analysis::loops` (loop `i` there is loop `i` here).
    pub index: usize,
    /// Index of the loop in the analysis' loop forest
    /// (`LoopForest::loops`).
    pub forest: usize,
    /// Address of the first instruction of the loop (header).
    pub header: u32,
    /// Address of the back-edge branch.
    pub latch: u32,
    /// Addresses of the first instruction of the loop's lowest block and of
    /// the last instruction of its highest (its blocks lie between; code
    /// between them may be outside the loop).
    pub first: u32,
    pub last: u32,
    pub depth: u32,
    pub parent: Option<usize>,
    pub trip_count: u32,
    /// Where `trip_count` comes from ([`crate::trip_count::TripSource`]).
    pub trip_count_source: crate::trip_count::TripSource,
    /// The most iterations the code allows (source `code`: the count;
    /// `bounded`: the proved maximum), when known.
    pub trip_count_max: Option<u32>,
    /// The uniform register holding the loop's bound when it is a kernel
    /// argument (`"u6"`, source `argument`).
    pub trip_count_bound: Option<String>,
    /// Cost of one iteration: own body bound plus nested loops (trip count ×
    /// their cycles per iteration) added to every component.
    pub bound: Bound,
    /// `bound.cycles`.
    pub cycles_per_iteration: f64,
    /// Same as `cycles_per_iteration` (schema compatibility).
    pub latency_bound_cycles: f64,
    /// The loop's own instructions (nested loops excluded).
    pub body: RegionTiming,
}

impl LoopTiming {
    /// Whether instruction `d` is in this loop (nested loops included),
    /// by the loop forest's membership (`d.loop_index` and the parents).
    pub fn holds(&self, loops: &[LoopTiming], d: &InsnDetail) -> bool {
        let mut cur = d.loop_index.map(|l| l as usize);
        while let Some(x) = cur {
            if x == self.index {
                return true;
            }
            cur = loops.get(x).and_then(|l| l.parent);
        }
        false
    }

    /// The loop's bottleneck in words: its body's (`body.bottleneck`; the
    /// loop keeps no copy of that text, ~100 B per loop).
    pub fn bottleneck(&self) -> &str {
        &self.body.bottleneck
    }
}

// Written out to keep the serialized form of the earlier derive (same field
// names and order, `bottleneck` included) without storing the text twice.
impl Serialize for LoopTiming {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("LoopTiming", 14)?;
        st.serialize_field("index", &self.index)?;
        st.serialize_field("header", &self.header)?;
        st.serialize_field("latch", &self.latch)?;
        st.serialize_field("depth", &self.depth)?;
        st.serialize_field("parent", &self.parent)?;
        st.serialize_field("trip_count", &self.trip_count)?;
        st.serialize_field("trip_count_source", &self.trip_count_source)?;
        st.serialize_field("trip_count_max", &self.trip_count_max)?;
        st.serialize_field("trip_count_bound", &self.trip_count_bound)?;
        st.serialize_field("bound", &self.bound)?;
        st.serialize_field("cycles_per_iteration", &self.cycles_per_iteration)?;
        st.serialize_field("latency_bound_cycles", &self.latency_bound_cycles)?;
        st.serialize_field("body", &self.body)?;
        st.serialize_field("bottleneck", self.bottleneck())?;
        st.end()
    }
}

/// Weighted per-unit cycles of the whole kernel.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct UnitCycles {
    /// Cycles of each ALU pipe (see [`UnitCycles::pipe`]).
    pub f32: f64,
    pub f16: f64,
    pub scib: f64,
    pub ic: f64,
    /// Exposed memory stall cycles per SIMD-group at occupancy (0 without
    /// memory waits), loops weighted by trip count.
    pub mem: f64,
    /// `max(f32 + f16 + scib, ic)`.
    pub alu: f64,
    /// The L1/memory-pipe bandwidth bound (`memory_bandwidth`) of every
    /// region's own code, loops weighted by trip count.
    pub memory_bandwidth: f64,
    /// The device-memory (DRAM) bandwidth bound (`device_bandwidth`) of
    /// every region's own code, loops weighted by trip count.
    pub device_bandwidth: f64,
}

impl UnitCycles {
    /// The cycles of the ALU pipe `unit` (0 for a unit that is no ALU pipe:
    /// memory is a stall and bandwidth bounds, control has no cycles).
    pub fn pipe(&self, unit: Unit) -> f64 {
        match unit {
            Unit::F32 => self.f32,
            Unit::F16 => self.f16,
            Unit::Scib => self.scib,
            Unit::Ic => self.ic,
            Unit::Mem | Unit::Ctrl => 0.0,
        }
    }
}

/// Kind of a [`BreakdownPart`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PartKind {
    /// Code outside every loop, run once.
    StraightLine,
    /// An outermost loop, all its iterations (nested loops included).
    Loop,
    /// A call site: the callee's cost (added by the whole-program layer).
    Call,
}

/// One part of the kernel's total: the `cycles` of all parts sum to
/// [`KernelTiming::total_cycles`].
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct BreakdownPart {
    pub part: PartKind,
    /// Byte offset: first instruction (straight line), loop header (loop)
    /// or the `call` instruction (call).
    pub at: u32,
    /// Cycles per SIMD-group this part contributes to the total.
    pub cycles: f64,
    /// How many times the part runs per thread (loop: its trip count; call:
    /// the call site's executions).
    pub executions: f64,
    /// Index into `loops` of a loop part.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loop_index: Option<usize>,
    /// Entry offset of the callee of a call part.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callee: Option<u32>,
}

/// One region of the kernel's cost, like a profiler's self time: the
/// straight-line code (once), a loop's own instructions (each execution:
/// nested loops excluded) or a call site (the callee's whole cost). The
/// `self_cycles` of all regions sum to [`KernelTiming::total_cycles`].
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Region {
    /// First instruction (straight line), loop header (loop) or the `call`.
    pub at: u32,
    pub kind: PartKind,
    /// Loop nesting depth (0 for the straight line; a call's is its site's).
    pub depth: u32,
    /// Executions per thread: product of the enclosing loops' trip counts.
    pub executions: f64,
    /// Own cost of one execution (a loop: its body's bound per iteration).
    pub cycles_per_execution: f64,
    /// `cycles_per_execution × executions`.
    pub self_cycles: f64,
    /// `self_cycles / total_cycles` (0..1).
    pub self_share: f64,
    /// The region's own bound component (`"call"` for a call).
    pub by: &'static str,
    /// Raw stall (one SIMD-group alone) × executions.
    pub stall_raw: f64,
    /// Exposed stall (left at occupancy) × executions.
    pub stall_exposed: f64,
    /// Index into `loops` of a loop region.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loop_index: Option<usize>,
    /// Entry of the callee of a call region.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callee: Option<u32>,
}

/// The hot spot: the region with the largest `self_share`, with its own
/// bound.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct BottleneckDetail {
    /// The region's `at`.
    pub at: u32,
    /// `straight_line`, `loop`, `call` (`none` for empty code).
    pub kind: &'static str,
    /// Its own bound component (`"call"` for a call).
    pub by: &'static str,
    /// Its `self_cycles`.
    pub cycles: f64,
    /// Its `self_share`.
    pub share: f64,
    /// Its loop depth.
    pub depth: u32,
}

/// Cycles of one basic block for the graph views: its instructions' share
/// of their region's cost (in proportion to issue cycles + exposed stall)
/// × executions; a call's cycles go to the block of the call. The blocks'
/// `cycles` sum to [`KernelTiming::total_cycles`].
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct BlockCycles {
    /// Index of the block in the CFG.
    pub index: usize,
    /// Address of its first and its last instruction.
    pub start: u32,
    pub end: u32,
    pub cycles: f64,
    /// `cycles / total_cycles` (0..1).
    pub share: f64,
    /// Executions per thread (its instructions' most).
    pub executions: f64,
    /// Its instruction indices `[first, end)`.
    #[serde(skip)]
    pub insns: (u32, u32),
}

impl BlockCycles {
    /// Instructions in the block.
    pub fn instructions(&self) -> usize {
        self.insns.1.saturating_sub(self.insns.0) as usize
    }

    /// Cycles of one execution of the block: `cycles / executions`, rounded
    /// as the record holds it ([`r2`]).
    pub fn cycles_per_execution(&self) -> f64 {
        r2(if self.executions > 0.0 {
            self.cycles / self.executions
        } else {
            self.cycles
        })
    }
}

fn kind_name(k: PartKind) -> &'static str {
    match k {
        PartKind::StraightLine => "straight_line",
        PartKind::Loop => "loop",
        PartKind::Call => "call",
    }
}

/// Cost bounds over uniform paths: `shortest <= longest <= total_cycles`
/// (`total_cycles` charges every arm of a branch, as a divergent
/// SIMD-group runs them).
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct Paths {
    /// The cheapest path when every branch is uniform.
    pub shortest: f64,
    /// The dearest path when every branch is uniform.
    pub longest: f64,
}

/// Whole-kernel timing.
#[derive(Clone, Debug, Serialize)]
pub struct KernelTiming {
    pub gpu: &'static str,
    pub params: ModelParams,
    pub simds_per_scheduler: f64,
    pub cycles: UnitCycles,
    pub mesa_estimate: MesaEstimate,
    /// Estimated scheduler cycles per SIMD-group for the whole kernel
    /// (regions' latency-bound cycles weighted by trip counts).
    pub total_cycles: f64,
    /// Parts of `total_cycles` (straight-line code, outermost loops, calls).
    pub breakdown: Vec<BreakdownPart>,
    /// Uniform-branch path bounds.
    pub paths: Paths,
    /// Executions per thread of each instruction (index as
    /// `instructions_detail`): product of enclosing loops' trip counts.
    #[serde(skip)]
    pub executions: Vec<f64>,
    /// Straight-line code outside loops.
    pub outside_loops: RegionTiming,
    pub loops: Vec<LoopTiming>,
    pub instructions_detail: Vec<InsnDetail>,
    pub bottleneck: String,
    /// Every region of the cost (straight line, loop bodies, calls).
    pub regions: Vec<Region>,
    /// The region with the largest `self_share` and its own bound.
    pub bottleneck_detail: BottleneckDetail,
    /// Cycles of each basic block (the graph views).
    pub blocks: Vec<BlockCycles>,
    /// Each instruction's cycles (index as `instructions_detail`): its
    /// share of its region's cost × executions (+ a call's cycles at the
    /// call); they sum to `total_cycles`.
    #[serde(skip)]
    pub insn_cycles: Vec<f64>,
}

impl KernelTiming {
    /// The share (0..1) of `total_cycles` a part of the breakdown takes,
    /// rounded to 4 decimals as the record holds it (a percentage to 2
    /// decimals): the one computation of a part's share every view prints.
    pub fn part_share(&self, b: &BreakdownPart) -> f64 {
        if self.total_cycles > 0.0 {
            r4(b.cycles / self.total_cycles)
        } else {
            0.0
        }
    }

    /// The bound of the kernel's hot spot ([`KernelTiming::bottleneck_detail`]):
    /// the own bound of the region (straight-line code, one loop's own body,
    /// a call) with the most cycles, `"call"` for a call, `"none"` for empty
    /// code. Not the bound of the dearest outermost loop: that loop's
    /// per-iteration bound adds its nested loops' cycles to every component
    /// alike, so it names whatever its own few instructions are bound by
    /// (`dispatch` for the counter of a loop nest) while the work is in the
    /// inner loop.
    pub fn dominant_bound(&self) -> &'static str {
        match self.bottleneck_detail.kind {
            "none" => "none",
            "call" => "call",
            _ => self.bottleneck_detail.by,
        }
    }

    /// How many times the instruction at byte `offset` runs per thread:
    /// the product of its enclosing loops' trip counts (1 outside loops, 0
    /// for an offset that is no instruction of the kernel).
    pub fn executions_at(&self, offset: u32) -> f64 {
        match self
            .instructions_detail
            .binary_search_by_key(&offset, |d| d.addr)
        {
            Ok(i) => self.executions.get(i).copied().unwrap_or(1.0),
            Err(_) => 0.0,
        }
    }

    /// Adds the cost of a call at `site` to `callee`: `executions_at(site)
    /// * cycles_per_call` becomes a `call` part of the breakdown and is
    /// added to `total_cycles` and both path bounds.
    pub fn add_call_part(&mut self, site: u32, callee: u32, cycles_per_call: f64) {
        let executions = self.executions_at(site);
        let cycles = round3(executions * cycles_per_call);
        self.breakdown.push(BreakdownPart {
            part: PartKind::Call,
            at: site,
            cycles,
            executions,
            loop_index: None,
            callee: Some(callee),
        });
        self.total_cycles = round3(self.total_cycles + cycles);
        self.paths.shortest = round3(self.paths.shortest + cycles);
        self.paths.longest = round3(self.paths.longest + cycles);
        let at = self
            .instructions_detail
            .binary_search_by_key(&site, |d| d.addr)
            .ok();
        self.regions.push(Region {
            at: site,
            kind: PartKind::Call,
            depth: at.map_or(0, |i| self.instructions_detail[i].loop_depth),
            executions,
            cycles_per_execution: round3(cycles_per_call),
            self_cycles: cycles,
            self_share: 0.0,
            by: "call",
            stall_raw: 0.0,
            stall_exposed: 0.0,
            loop_index: None,
            callee: Some(callee),
        });
        if let Some(i) = at {
            if let Some(c) = self.insn_cycles.get_mut(i) {
                *c += cycles;
            }
            let b = self.blocks.partition_point(|b| b.insns.1 as usize <= i);
            if let Some(b) = self.blocks.get_mut(b).filter(|b| b.insns.0 as usize <= i) {
                b.cycles = round3(b.cycles + cycles);
            }
        }
    }

    /// Shares of the regions and blocks, the hot spot
    /// ([`KernelTiming::bottleneck_detail`]) and the headline
    /// (`bottleneck`) from the regions: called by the model and again by
    /// the whole-program layer once its call regions are added (it then
    /// words a call's headline itself).
    pub fn finish_regions(&mut self) {
        let total = self.total_cycles;
        let share = |c: f64| if total > 0.0 { c / total } else { 0.0 };
        for r in &mut self.regions {
            r.self_share = share(r.self_cycles);
        }
        for b in &mut self.blocks {
            b.share = share(b.cycles);
        }
        let hot = self
            .regions
            .iter()
            .enumerate()
            .max_by(|a, b| {
                a.1.self_cycles
                    .total_cmp(&b.1.self_cycles)
                    .then(b.0.cmp(&a.0))
            })
            .map(|x| x.1);
        let Some(r) = hot else {
            self.bottleneck_detail = BottleneckDetail {
                kind: "none",
                by: "none",
                ..Default::default()
            };
            self.bottleneck = "empty kernel".to_string();
            return;
        };
        self.bottleneck_detail = BottleneckDetail {
            at: r.at,
            kind: kind_name(r.kind),
            by: r.by,
            cycles: r.self_cycles,
            share: r.self_share,
            depth: r.depth,
        };
        let pct = 100.0 * r.self_share;
        self.bottleneck = match (r.kind, r.loop_index.and_then(|l| self.loops.get(l))) {
            (PartKind::Loop, Some(l)) => {
                let depth = if l.depth > 1 {
                    format!(" (depth {})", l.depth)
                } else {
                    String::new()
                };
                let (iters, src) = if l.depth > 1 {
                    (
                        format!("{}", r.executions),
                        "trip counts of it and its enclosing loops",
                    )
                } else {
                    (format!("{}", l.trip_count), l.trip_count_source.as_str())
                };
                format!(
                    "loop at 0x{:x}{depth}, {} cy of {} cy ({pct:.0}%): {} cy/iter x {iters} iterations ({src}); its own body is bound by {}",
                    r.at,
                    fmt_cy(r.self_cycles),
                    fmt_cy(total),
                    fmt_cy(r.cycles_per_execution),
                    l.body.bottleneck
                )
            }
            (PartKind::Call, _) => format!(
                "call at 0x{:x}, {} cy of {} cy ({pct:.0}%)",
                r.at,
                fmt_cy(r.self_cycles),
                fmt_cy(total)
            ),
            _ => format!(
                "straight-line code, {} cy of {} cy ({pct:.0}%): {}",
                fmt_cy(r.self_cycles),
                fmt_cy(total),
                self.outside_loops.bottleneck
            ),
        };
    }
}

/// Scoreboard slot of a load or `wait`, when the encoding has one (the
/// form's slot column, [`Instruction::scoreboard_slot`]).
pub fn scoreboard_slot(insn: &Instruction) -> Option<u32> {
    insn.scoreboard_slot()
}

/// Latency of a load, by the memory space the ISA semantics give it.
///
/// A device load whose address is uniform (`uniform`, from the divergence
/// analysis) reads the same bytes in every SIMD-group of the dispatch (a
/// kernel argument, a bound, a constant): the first SIMD-group on a core to
/// ask brings the line into that core's L1 and every later one hits, so its
/// latency is the model's own L1-hit latency (`l1_hit_latency`), not the
/// `l1_hit_rate` mix that stands for per-thread streaming data.
fn load_latency(access: Option<MemAccess>, mem: &MemParams, uniform: bool) -> f64 {
    match access.map(|m| m.space) {
        Some(MemSpace::Device) if uniform => mem.l1_hit_latency,
        Some(MemSpace::Device | MemSpace::Texture) => mem.device_latency(),
        Some(MemSpace::Threadgroup) => mem.threadgroup_latency,
        Some(MemSpace::Stack) => mem.stack_latency,
        _ => 0.0,
    }
}

/// Whether the instruction returns data at a `wait` (loads and atomics).
fn is_load(access: Option<MemAccess>) -> bool {
    matches!(
        access,
        Some(MemAccess {
            dir: MemDir::Load | MemDir::Atomic,
            space: MemSpace::Device | MemSpace::Texture | MemSpace::Threadgroup | MemSpace::Stack,
            ..
        })
    )
}

/// Per-instruction static cost facts used by the region model.
///
/// Kept compact (32 bytes; a region can be a whole 1M-instruction kernel,
/// and its rows are its model's peak memory): the cost-table row stands for
/// the key, unit, throughput and latency; the GPR halves the instruction
/// writes and reads are a span of the region's arena; the RAW dependency on
/// the instruction issued before it is found once and packed ([`Dep`]).
#[derive(Clone, Copy)]
struct Static {
    e: &'static CostEntry,
    /// The instruction's memory access (read once).
    mem: Option<MemAccess>,
    /// Its defs are `arena[at..at + nd]`, its uses the `nu` after them.
    at: u32,
    nd: u16,
    nu: u16,
    /// Distinct (half, width) GPR sources, saturating at 255 (only `<= 1`
    /// is asked).
    distinct: u8,
    dep: Dep,
}

/// A back-to-back RAW dependency on the instruction issued before, packed
/// in one byte: `NONE`, or its register width (16 or 32) with [`Dep::FREE`]
/// when the register cache absorbs the penalty. The producer is the
/// region's previous instruction and the penalty the timing table's, so
/// [`RawDep`] is rebuilt from it exactly ([`Dep::raw`]).
#[derive(Clone, Copy, Default, PartialEq)]
struct Dep(u8);

impl Dep {
    const NONE: Dep = Dep(0);
    const FREE: u8 = 0x80;

    fn bits(self) -> u32 {
        (self.0 & !Dep::FREE) as u32
    }

    /// Cycles charged for it.
    fn penalty(self, gpu: &GpuTiming) -> f64 {
        match self.bits() {
            0 => 0.0,
            _ if self.0 & Dep::FREE != 0 => 0.0,
            16 => gpu.raw_penalty_16,
            _ => gpu.raw_penalty_32,
        }
    }

    /// The record's dependency, on the instruction at `producer`.
    fn raw(self, gpu: &GpuTiming, producer: u32) -> Option<RawDep> {
        (self != Dep::NONE).then(|| RawDep {
            producer,
            penalty: self.penalty(gpu),
            bits: self.bits(),
        })
    }
}

/// One GPR half in a region's arena: `half << 1 | 1` for a 16-bit operand
/// (a dependency's width is all the model asks of it), 4 bytes instead of a
/// `(u32, Width)` pair's 8.
fn packed_half(h: u32, w: Width) -> u32 {
    h << 1 | (w == Width::W16) as u32
}

/// Appends the GPR 16-bit halves `it` spans, packed, to `out`.
fn push_gpr_halves<'a>(out: &mut Vec<u32>, it: impl Iterator<Item = &'a agx_isa::Reg>) -> u16 {
    let n0 = out.len();
    for r in it {
        if r.file == RegFile::Gpr {
            for h in r.half_range() {
                out.push(packed_half(h, r.width));
            }
        }
    }
    u16::try_from(out.len() - n0).expect("an instruction spans fewer than 65536 halves")
}

/// The instructions of one region: `idx` indexes `insns` (ascending); a RAW
/// penalty needs the instruction before in the region to be the one before
/// in the code (for the first, the loop's wrap-around: the back-edge branch
/// precedes the header).
#[derive(Clone, Copy)]
struct RegionCode<'a> {
    insns: &'a [Instruction],
    idx: &'a [u32],
    /// Per kernel instruction (empty: none): a load whose address the
    /// divergence analysis proved uniform
    /// ([`crate::divergence::Divergence::uniform_loads`]).
    uniform: &'a [bool],
    /// Per kernel instruction (empty: none): cache lines one SIMD-group
    /// request touches, 0 when not known ([`crate::address::Access`]).
    lines: &'a [u16],
    /// Per kernel instruction (empty: none): a device load whose address
    /// does not move across the iterations of its innermost loop.
    invariant: &'a [bool],
    /// Per kernel instruction (empty: none): bank-conflict ways of a
    /// threadgroup access, 0 when not known ([`crate::banks`]).
    banks: &'a [u8],
    /// Per kernel instruction (empty: none): the cache model's traffic of
    /// a device/texture access ([`super::cache`]), None when not known.
    traffic: &'a [Option<super::cache::Traffic>],
    /// Per kernel instruction (empty: none): lanes per address of an
    /// atomic, 0 when not known ([`super::sync::atomic_ways`]).
    atomic_ways: &'a [u8],
    /// Per kernel instruction (empty: none): the fewest updates the
    /// busiest word of a threadgroup atomic gets per threadgroup, 0 when
    /// not known ([`super::sync::atomic_chains_by_insn`]).
    atomic_chains: &'a [u16],
}

impl RegionCode<'_> {
    /// Lines of the region's instruction `j` (0: not known).
    fn lines(&self, j: usize) -> u16 {
        self.lines.get(self.idx[j] as usize).copied().unwrap_or(0)
    }
    /// Whether the region's instruction `j` is a loop-invariant load.
    fn invariant(&self, j: usize) -> bool {
        self.invariant
            .get(self.idx[j] as usize)
            .copied()
            .unwrap_or(false)
    }
    /// Lanes per address of the region's atomic `j` (0: not known).
    fn atomic_ways(&self, j: usize) -> u8 {
        self.atomic_ways
            .get(self.idx[j] as usize)
            .copied()
            .unwrap_or(0)
    }
    /// Updates of the busiest word of the region's atomic `j` per
    /// threadgroup (0: not known).
    fn atomic_chain(&self, j: usize) -> u16 {
        self.atomic_chains
            .get(self.idx[j] as usize)
            .copied()
            .unwrap_or(0)
    }
    /// Bank-conflict ways of the region's instruction `j` (0: not known).
    fn banks(&self, j: usize) -> u8 {
        self.banks.get(self.idx[j] as usize).copied().unwrap_or(0)
    }
    /// The cache model's traffic of the region's instruction `j`.
    fn traffic(&self, j: usize) -> Option<super::cache::Traffic> {
        self.traffic.get(self.idx[j] as usize).copied().flatten()
    }
    fn len(&self) -> usize {
        self.idx.len()
    }
    fn insn(&self, j: usize) -> &Instruction {
        &self.insns[self.idx[j] as usize]
    }
    /// Whether the region's instruction `j` is a uniform-address load.
    fn uniform(&self, j: usize) -> bool {
        self.uniform
            .get(self.idx[j] as usize)
            .copied()
            .unwrap_or(false)
    }
    /// Whether the region's instruction `j` issues right after `j - 1`.
    fn follows(&self, j: usize) -> bool {
        j == 0 || self.idx[j] == self.idx[j - 1] + 1
    }
}

/// Working vectors of the region model, kept by each thread from one region
/// to the next (a kernel with a loop per 12 instructions has ~80k regions a
/// million instructions: a dozen allocations each were ~10% of its model).
/// [`release_scratch`] frees them when a kernel is done.
#[derive(Default)]
struct Scratch {
    arena: Vec<u32>,
    st: Vec<Static>,
    /// One SIMD-group's stall before each instruction of the last pass.
    stall: Vec<f64>,
    /// Cycle at which each GPR half is ready; every entry is 0 between
    /// regions (a region resets the ones it wrote).
    reg_ready: Vec<f64>,
    /// Loads not yet waited for, and those a wait completes.
    loads: (Loads, Loads),
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// Frees this thread's region scratch (its size is the biggest region's).
fn release_scratch() {
    SCRATCH.with(|s| *s.borrow_mut() = Scratch::default());
}

/// The statics of `code` into `sc.st`, their def/use halves into
/// `sc.arena`, each with its RAW dependency on the instruction before.
fn statics(sc: &mut Scratch, gpu: &GpuTiming, code: &RegionCode, is_loop: bool) {
    sc.arena.clear();
    sc.st.clear();
    let n = code.len();
    // one static per instruction, a few halves each: sized once, not by
    // doubling (a million-instruction region)
    sc.st.reserve(n);
    sc.arena.reserve(4 * n);
    for j in 0..n {
        let insn = code.insn(j);
        let at = u32::try_from(sc.arena.len()).expect("region arena below 2^32 halves");
        let nd = push_gpr_halves(&mut sc.arena, insn.defs());
        let nu = push_gpr_halves(&mut sc.arena, insn.uses());
        let key = insn.cost_key();
        let e = gpu.entry(key);
        // distinct (half, width) GPR sources, sorted by half then deduped
        // (at most MAX_OPERANDS + MAX_IMPLICIT of them: no allocation)
        let mut src = [(0u16, Width::W16); agx_isa::MAX_OPERANDS + agx_isa::MAX_IMPLICIT];
        let mut ns = 0;
        for r in insn.uses().filter(|r| r.file == RegFile::Gpr) {
            if ns < src.len() {
                src[ns] = (r.half, r.width);
                ns += 1;
            }
        }
        let src_regs = &mut src[..ns];
        src_regs.sort_by_key(|x| x.0);
        let mut distinct = 0u8;
        for k in 0..ns {
            if k == 0 || src_regs[k] != src_regs[k - 1] {
                distinct = distinct.saturating_add(1);
            }
        }
        sc.st.push(Static {
            e,
            mem: insn.mem_access(),
            at,
            nd,
            nu,
            distinct,
            dep: Dep::NONE,
        });
    }
    for j in 0..n {
        let prev = if j > 0 {
            Some(j - 1)
        } else if is_loop && n > 1 {
            Some(n - 1)
        } else {
            None
        };
        if let Some(p) = prev.filter(|_| code.follows(j)) {
            let dep = raw_dep(&sc.arena, &sc.st[p], &sc.st[j]);
            sc.st[j].dep = dep;
        }
    }
}

impl Static {
    fn unit(&self) -> Unit {
        self.e.unit
    }
    fn key(&self) -> CostKey {
        self.e.key
    }
    fn tp(&self) -> f64 {
        self.e.throughput
    }
    fn defs<'a>(&self, arena: &'a [u32]) -> &'a [u32] {
        let a = self.at as usize;
        &arena[a..a + self.nd as usize]
    }
    fn uses<'a>(&self, arena: &'a [u32]) -> &'a [u32] {
        let a = self.at as usize + self.nd as usize;
        &arena[a..a + self.nu as usize]
    }
}

/// RAW dependency of `cur` reading what `prev` wrote.
fn raw_dep(arena: &[u32], prev: &Static, cur: &Static) -> Dep {
    if matches!(cur.unit(), Unit::Ctrl) || matches!(prev.unit(), Unit::Mem | Unit::Ctrl) {
        return Dep::NONE;
    }
    let defs = prev.defs(arena);
    let Some(hit) = cur
        .uses(arena)
        .iter()
        .find(|&&h| defs.iter().any(|&d| d >> 1 == h >> 1))
    else {
        return Dep::NONE;
    };
    let bits: u8 = if hit & 1 != 0 { 16 } else { 32 };
    // Register cache: metal-benchmarks measured one case, an FFMA whose
    // multiply reads one register twice (`x*x+1` at ~95% with ILP=1); only
    // that shape (fma/fmul reading a single distinct register) is exempt.
    if cur.distinct <= 1 && cur.key().is_fmul() {
        Dep(bits | Dep::FREE)
    } else {
        Dep(bits)
    }
}

/// Result of modelling one region.
struct RegionOut {
    timing: RegionTiming,
    /// Per instruction: (raw dep, single stall, exposed stall); empty for a
    /// region modelled for its bound only.
    per_insn: Vec<(Dep, f64, f64)>,
}

/// Loads in flight: (scoreboard slot, index, latency, completion time).
type Loads = Vec<(Option<u32>, usize, f64, f64)>;

/// Models one region ([`RegionCode`]); with `detail` false only the bound
/// (`timing.bound`, `cycles_per_iteration`) is meant to be read: no
/// per-instruction figures, waits or words are made (a uniform path's
/// re-costing reads the cost alone).
fn model_region(
    gpu: &GpuTiming,
    params: &ModelParams,
    code: &RegionCode,
    is_loop: bool,
    detail: bool,
) -> RegionOut {
    SCRATCH.with(|sc| model_region_in(&mut sc.borrow_mut(), gpu, params, code, is_loop, detail))
}

#[allow(clippy::needless_range_loop)]
fn model_region_in(
    sc: &mut Scratch,
    gpu: &GpuTiming,
    params: &ModelParams,
    code: &RegionCode,
    is_loop: bool,
    detail: bool,
) -> RegionOut {
    statics(sc, gpu, code, is_loop);
    let Scratch {
        arena,
        st,
        stall: stall_single,
        reg_ready,
        loads: sc_loads,
    } = sc;
    let (arena, st): (&[u32], &[Static]) = (arena, st);
    let n = st.len();
    let k = params.simds_per_scheduler(gpu);

    // ---- throughput bounds ----
    let mut pipes = PipeCycles::default();
    let sched = gpu.schedulers_per_core as f64;
    let l1_bw = params.mem.l1_bytes_per_cycle_per_core / sched;
    let dram_bw = params.mem.dram_bytes_per_cycle_per_core / sched;
    // without the cache model's figures every byte is a first touch (less
    // an explicit --l1-hit-rate's hits)
    let miss = 1.0 - params.mem.l1_hit_rate.unwrap_or(0.0).clamp(0.0, 1.0);
    let (mut loads, mut stores) = (0, 0);
    let (mut barriers, mut atomic) = (0usize, 0.0);
    // whether the phase the next barrier closes reads threadgroup memory
    // (each such barrier counts twice: [`super::sync`])
    let mut tg_read = false;
    for (j, s) in st.iter().enumerate() {
        if super::sync::is_barrier(code.insn(j)) {
            barriers += 1 + tg_read as usize;
            tg_read = false;
        }
        if let Some(m) = s.mem {
            tg_read |= m.space == MemSpace::Threadgroup && m.dir != MemDir::Store;
            let request = super::sync::atomic_request_cycles(
                gpu,
                params,
                m.dir,
                m.space,
                code.atomic_ways(j),
            );
            let chain = super::sync::atomic_chain_cycles(gpu, params, code.atomic_chain(j));
            atomic += request.max(chain);
        }
        pipes.issue += gpu.issue_of(s.unit());
        let pen = s.dep.penalty(gpu);
        pipes.raw_penalty += pen;
        // the penalty is paid on the consumer's pipe
        match s.unit() {
            Unit::F32 => pipes.f32 += s.tp() + pen,
            Unit::F16 => pipes.f16 += s.tp() + pen,
            Unit::Scib => pipes.scib += s.tp() + pen,
            Unit::Ic => pipes.ic += s.tp() + pen,
            Unit::Mem => {
                if let Some(m) = s.mem {
                    match m.dir {
                        MemDir::Load | MemDir::Atomic => loads += 1,
                        MemDir::Store => stores += 1,
                    }
                    if matches!(
                        m.space,
                        MemSpace::Device | MemSpace::Texture | MemSpace::TextureState
                    ) {
                        // The cache model (timing/cache.rs) gives the bytes
                        // one execution moves through L1 and the first
                        // touches of them that reach DRAM, from the access
                        // facts. Without them: a uniform-address load reads
                        // one value for the SIMD-group (a broadcast), else
                        // the request moves the lines it touches
                        // (lines_per_request x cache_line_bytes) or 32
                        // lanes x its width, all of it a first touch but
                        // for a loop-invariant load (its lines came in with
                        // the first iteration).
                        let (l1b, dramb) = if let Some(t) = code.traffic(j) {
                            (t.l1_bytes, t.dram_bytes)
                        } else {
                            let uniform = code.uniform(j) && m.dir == MemDir::Load;
                            let bytes = if uniform {
                                m.bytes_per_lane() as f64
                            } else if code.lines(j) > 0 && m.space == MemSpace::Device {
                                code.lines(j) as f64 * params.mem.cache_line_bytes
                            } else {
                                m.bytes_per_lane() as f64 * gpu.simd_width as f64
                            };
                            let first = if code.invariant(j) { 0.0 } else { bytes * miss };
                            (bytes, first)
                        };
                        if l1_bw > 0.0 {
                            pipes.mem += l1b / l1_bw;
                        }
                        if dram_bw > 0.0 {
                            pipes.dram += dramb / dram_bw;
                        }
                    } else if m.space == MemSpace::Threadgroup && code.banks(j) > 1 && l1_bw > 0.0 {
                        // an N-way bank conflict replays the request N - 1
                        // more times through the on-core data path (the
                        // l1_bytes_per_cycle_per_core bandwidth, which
                        // threadgroup memory shares: an assumption); a
                        // conflict-free request costs nothing here, as before
                        let replays = (code.banks(j) - 1) as f64;
                        pipes.mem +=
                            replays * m.bytes_per_lane() as f64 * gpu.simd_width as f64 / l1_bw;
                    }
                }
            }
            Unit::Ctrl => {}
        }
    }
    // IC integer/transcendental pairs (fitted term, see table.rs)
    let (mut n_int, mut n_trans) = (0usize, 0usize);
    for s in st.iter().filter(|s| s.unit() == Unit::Ic) {
        if s.key().transcendental().is_some() {
            n_trans += 1;
        } else {
            n_int += 1;
        }
    }
    pipes.ic += gpu.ic_switch_cycles * n_int.min(n_trans) as f64;
    if gpu.ic_overlap_cycles > 0.0 && n_trans > 1 {
        let mut by_key: BTreeMap<agx_isa::Transcendental, usize> = BTreeMap::new();
        for s in st.iter().filter(|s| s.unit() == Unit::Ic) {
            if let Some(sub) = s.key().transcendental() {
                *by_key.entry(sub).or_default() += 1;
            }
        }
        let most = by_key.values().copied().max().unwrap_or(0);
        pipes.ic -= gpu.ic_overlap_cycles * (n_trans - most) as f64;
    }
    let alu = pipes.fscib().max(pipes.ic);

    // ---- one SIMD-group's in-order pass ----
    let iters = if is_loop { 3 } else { 1 };
    reg_ready.resize(512, 0.0);
    stall_single.clear();
    stall_single.resize(n, 0.0);
    // loads not yet waited for, in issue order: (scoreboard slot, index,
    // latency, completion time); a wait takes those of its slot (all for a
    // wait without one) and those without a slot
    let pending = &mut sc_loads.0;
    let completed = &mut sc_loads.1;
    pending.clear();
    let mut t = 0.0f64;
    let mut pipe_free = [0.0f64; 2]; // F+SCIB, IC
    let mut iter_end = [0.0f64; 3];
    let mut wait_info: Vec<WaitStall> = Vec::new();
    // the waits of the last pass that completed loads, ascending
    let mut wait_at: Vec<usize> = Vec::new();
    for it in 0..iters {
        for i in 0..n {
            let s = &st[i];
            let mut start = t;
            for h in s.uses(arena) {
                start = start.max(reg_ready[(h >> 1) as usize % 512]);
            }
            let pipe = match s.unit() {
                Unit::Ic => Some(1),
                u if gpu.shares_fscib(u) => Some(0),
                _ => None,
            };
            if let Some(p) = pipe {
                start = start.max(pipe_free[p]);
            }
            completed.clear();
            let mut wait_lat = 0.0;
            if s.key() == CostKey::Wait {
                let slot = scoreboard_slot(code.insn(i));
                let takes = |k: Option<u32>| params.gpu.scoreboard.waits_for(slot, k);
                pending.retain(|&(k, li, lat, done)| {
                    if takes(k) {
                        completed.push((k, li, lat, done));
                        false
                    } else {
                        true
                    }
                });
                // by slot (no slot first), each slot's loads in issue
                // order: a stable sort
                completed.sort_by_key(|c| c.0);
                for &(_, _, lat, done) in completed.iter() {
                    start = start.max(done);
                    wait_lat = f64::max(wait_lat, lat);
                }
            }
            let stall = (start - t).max(0.0);
            if it == iters - 1 {
                stall_single[i] = stall;
                if s.key() == CostKey::Wait && !completed.is_empty() {
                    wait_at.push(i);
                    if detail {
                        let insn = code.insn(i);
                        // independent work between the loads and the wait:
                        // issue cycles of the instructions between them
                        let li = completed
                            .iter()
                            .map(|&(_, li, _, _)| if li < i { i - li } else { i + n - li })
                            .min()
                            .unwrap_or(0);
                        let independent_work = (1..li)
                            .map(|d| {
                                let j = (i + n - d) % n;
                                st[j].tp().max(gpu.issue_cycles)
                            })
                            .sum();
                        wait_info.push(WaitStall {
                            addr: insn.addr,
                            slot: scoreboard_slot(insn),
                            loads: completed
                                .iter()
                                .map(|&(_, li, _, _)| code.insn(li).addr)
                                .collect(),
                            latency: wait_lat,
                            independent_work,
                            stall_single: stall,
                            exposed: 0.0,
                        });
                    }
                }
            }
            if let Some(p) = pipe {
                pipe_free[p] = start + s.tp();
            }
            let issue = gpu.issue_of(s.unit()) + s.dep.penalty(gpu);
            let done = if is_load(s.mem) {
                let lat = load_latency(s.mem, &params.mem, code.uniform(i) || code.invariant(i));
                let d = start + lat;
                pending.push((scoreboard_slot(code.insn(i)), i, lat, d));
                d
            } else {
                start + s.e.latency
            };
            for h in s.defs(arena) {
                reg_ready[(h >> 1) as usize % 512] = done;
            }
            t = start + issue;
        }
        iter_end[it] = t;
    }
    // (every entry 0 again for the next region)
    for s in st {
        for h in s.defs(arena) {
            reg_ready[(h >> 1) as usize % 512] = 0.0;
        }
    }
    let single = if iters >= 2 {
        iter_end[iters - 1] - iter_end[iters - 2]
    } else {
        iter_end[0]
    };

    // ---- the bound ----
    // (`wait_at` ascends: the memory stalls summed in instruction order)
    let mem_stall_single: f64 = wait_at.iter().map(|&i| stall_single[i]).sum();
    let (mem_latency, dep_chain) = if mem_stall_single > 0.0 {
        (single / k, (single - mem_stall_single).max(0.0) / k)
    } else {
        (0.0, single / k)
    };
    let bound = Bound::of([
        pipes.f32,
        pipes.f16,
        pipes.scib,
        pipes.fscib(),
        pipes.ic,
        pipes.issue,
        pipes.mem,
        pipes.dram,
        mem_latency,
        dep_chain,
        super::sync::barrier_cycles(gpu, params, barriers),
        atomic,
    ]);
    let cost = bound.cycles;
    if !detail {
        return RegionOut {
            timing: RegionTiming {
                instructions: n,
                pipes,
                cycles_per_iteration: cost,
                latency_bound_cycles: cost,
                bound,
                single_simd_iteration_cycles: 0.0,
                recurrence_cycles: 0.0,
                loads,
                stores,
                waits: Vec::new(),
                wait_stall: 0.0,
                raw_stall: 0.0,
                exposed_stall: 0.0,
                memory_stall: 0.0,
                alu_per_iter: 0.0,
                bottleneck_unit: "",
                bottleneck: String::new(),
            },
            per_insn: Vec::new(),
        };
    }
    let by = bound.by;
    let dep_chain_bound = bound.components["dependency_chain"];
    // One exposed-stall formula: the cost above the largest throughput
    // bound, shared among the stalling instructions by their stall.
    let exposed = (cost - bound.throughput()).max(0.0);
    let total_stall: f64 = stall_single.iter().sum();
    let share = |i: usize| {
        if total_stall > 0.0 {
            exposed * stall_single[i] / total_stall
        } else {
            0.0
        }
    };
    let per_insn: Vec<(Dep, f64, f64)> = (0..n)
        .map(|i| (st[i].dep, stall_single[i], round3(share(i))))
        .collect();
    for (w, &i) in wait_info.iter_mut().zip(&wait_at) {
        w.exposed = round3(share(i));
    }
    let memory_stall: f64 = wait_info.iter().map(|w| w.exposed).sum();
    let wait_stall: f64 = wait_info.iter().map(|w| w.stall_single).sum();

    // ---- words ----
    let per = if is_loop { " cy/iter" } else { " cy" };
    let (second, second_v) = bound.runner_up();
    let mut bottleneck = format!(
        "{}: {}{per} (next: {} {} cy)",
        bound_label(bound.by),
        fmt_cy(cost),
        bound_label(second),
        fmt_cy(second_v)
    );
    match bound.by {
        "ic" => {
            if let Some(j) = (0..n)
                .filter(|&j| st[j].unit() == Unit::Ic)
                .max_by(|&a, &b| st[a].tp().total_cmp(&st[b].tp()))
            {
                let insn = code.insn(j);
                bottleneck += &format!(
                    "; {} at 0x{:x} takes {} of them",
                    insn.mnemonic(),
                    insn.addr,
                    fmt_cy(st[j].tp())
                );
            }
        }
        "fscib" | "f32" | "f16" | "scib" => {
            bottleneck += &format!(
                " (F32 {}, F16 {}, SCIB {}, of which RAW penalties {})",
                fmt_cy(pipes.f32),
                fmt_cy(pipes.f16),
                fmt_cy(pipes.scib),
                fmt_cy(pipes.raw_penalty)
            );
        }
        // (a latency bound's "one SIMD-group alone" figure is the record's
        // `single_simd_cycles`, printed beside the bound, not in this
        // sentence: the sentence also reaches the kernel's bottleneck from
        // loops inside called functions, whose figures no field holds)
        _ => {}
    }

    RegionOut {
        timing: RegionTiming {
            instructions: n,
            pipes,
            cycles_per_iteration: cost,
            latency_bound_cycles: cost,
            bound,
            single_simd_iteration_cycles: round3(single),
            // the one dependency-chain figure of the region: its bound
            // component (the in-order pass without memory stalls, over k)
            recurrence_cycles: dep_chain_bound,
            loads,
            stores,
            waits: {
                // (a loop's one wait would otherwise keep room for four)
                wait_info.shrink_to_fit();
                wait_info
            },
            wait_stall: round3(wait_stall),
            raw_stall: round3(total_stall),
            exposed_stall: round3(exposed),
            memory_stall: round3(memory_stall),
            alu_per_iter: round3(alu),
            bottleneck_unit: bound_label(by),
            bottleneck: {
                bottleneck.shrink_to_fit();
                bottleneck
            },
        },
        per_insn,
    }
}

use crate::round::r3 as round3;
/// The record's precisions of the one rounding rule ([`crate::round`]).
pub use crate::round::{r2, r4};

/// Formats cycles compactly (`12`, `5.84`): [`r2`] of `x`, whole when it is.
pub fn fmt_cy(x: f64) -> String {
    let mut s = String::new();
    push_cy(&mut s, x);
    s
}

/// [`fmt_cy`] appended to `out` (no string of its own: the report writes
/// ~20 of them per loop).
pub fn push_cy(out: &mut String, x: f64) {
    use std::fmt::Write;
    let x = r2(x);
    if (x - x.round()).abs() < 0.005 {
        agx_isa::format::write_int(out, x.round() as i64);
    } else if x.is_finite() && x.abs() < 1e12 {
        // `{x:.2}` of a figure already rounded to hundredths: the hundredths
        // `k` are exact (x is within an ulp of k/100, far below 0.005 at
        // this size), so the digits are k's with the point put in — the
        // float formatter's exact algorithm was most of a listing line's cost
        let k = (x * 100.0).round() as i64;
        if k < 0 {
            out.push('-');
        }
        let a = k.unsigned_abs();
        agx_isa::format::write_int(out, (a / 100) as i64);
        out.push('.');
        out.push(char::from(b'0' + (a / 10 % 10) as u8));
        out.push(char::from(b'0' + (a % 10) as u8));
    } else {
        let _ = write!(out, "{x:.2}");
    }
}

/// Models one straight-line body as a loop body (every instruction once per
/// iteration, back-edge implied): the building block for unrolled-loop
/// kernels and tests.
pub fn body_timing(insns: &[Instruction], params: &ModelParams) -> RegionTiming {
    let idx: Vec<u32> =
        (0..u32::try_from(insns.len()).expect("fewer than 2^32 instructions")).collect();
    let code = RegionCode {
        insns,
        idx: &idx,
        uniform: &[],
        lines: &[],
        invariant: &[],
        banks: &[],
        traffic: &[],
        atomic_ways: &[],
        atomic_chains: &[],
    };
    let t = model_region(params.gpu.table(), params, &code, true, true).timing;
    release_scratch();
    t
}

/// Models a whole kernel (main's instructions in address order), with the
/// loops the analysis crate finds.
pub fn analyze_kernel(insns: &[Instruction], params: &ModelParams) -> KernelTiming {
    let d = crate::analyze_detailed(insns, &crate::CfgOptions::default());
    analyze_kernel_with_nest(
        params.gpu.table(),
        insns,
        &d.nest,
        &d.divergence.uniform_loads,
        params,
    )
}

/// The exec-mask if/else structure: for each instruction, the innermost
/// conditional arm it lies in, as (frame, arm), with each frame's opening
/// instruction and whether it has an else arm.
struct Arms {
    /// The arm of each instruction packed in a `u32`: `frame << 1 | arm`
    /// ([`Arms::NONE`]: in no arm); 4 bytes an instruction.
    arm_of: Vec<u32>,
    /// The frames, in opener order (one per opener).
    frames: Vec<Frame>,
    /// One bit per instruction: it opens a frame.
    opens: Vec<u64>,
}

/// One if-frame of [`Arms`].
#[derive(Clone, Copy)]
struct Frame {
    /// Index of the opening `if`.
    opener: u32,
    /// Parent frame ([`Arms::NONE`]: none).
    parent: u32,
    has_else: bool,
}

fn exec_arms(insns: &[Instruction]) -> Arms {
    let n = insns.len();
    assert!(
        u32::try_from(n).is_ok_and(|n| n < u32::MAX / 2),
        "fewer than 2^31 instructions"
    );
    let mut arm_of = vec![Arms::NONE; n];
    let mut frames: Vec<Frame> = Vec::new();
    let mut opens = vec![0u64; n.div_ceil(64)];
    // (frame, arm) of each open level
    let mut stack: Vec<(u32, u32)> = Vec::new();
    let pack = |top: Option<&(u32, u32)>| top.map_or(Arms::NONE, |&(f, a)| f << 1 | a);
    for (i, insn) in insns.iter().enumerate() {
        // exec-mask instructions themselves run on every path: they belong
        // to the arm enclosing their frame
        match insn.exec_op() {
            Some(ExecOp::If) => {
                arm_of[i] = pack(stack.last());
                let parent = stack.last().map_or(Arms::NONE, |f| f.0);
                frames.push(Frame {
                    opener: i as u32,
                    parent,
                    has_else: false,
                });
                opens[i / 64] |= 1 << (i % 64);
                stack.push((frames.len() as u32 - 1, 0));
            }
            Some(ExecOp::Else) => {
                if stack.len() >= 2 {
                    arm_of[i] = pack(stack.get(stack.len() - 2));
                }
                if let Some(top) = stack.last_mut() {
                    top.1 = 1;
                    frames[top.0 as usize].has_else = true;
                }
            }
            Some(ExecOp::Pop(n)) => {
                for _ in 0..n.max(1) {
                    stack.pop();
                }
                arm_of[i] = pack(stack.last());
            }
            _ => arm_of[i] = pack(stack.last()),
        }
    }
    Arms {
        arm_of,
        frames,
        opens,
    }
}

impl Arms {
    /// No arm / no frame.
    const NONE: u32 = u32::MAX;

    /// The innermost arm instruction `i` lies in: (frame, arm).
    fn arm(&self, i: usize) -> Option<(usize, u8)> {
        match self.arm_of[i] {
            Arms::NONE => None,
            p => Some(((p >> 1) as usize, (p & 1) as u8)),
        }
    }
    /// Whether instruction `i` lies in an arm.
    fn in_arm(&self, i: usize) -> bool {
        self.arm_of[i] != Arms::NONE
    }
    /// The frame instruction `i` opens, if it opens one.
    fn opened_at(&self, i: usize) -> Option<usize> {
        if self.opens[i / 64] >> (i % 64) & 1 == 0 {
            return None;
        }
        self.frames
            .binary_search_by_key(&(i as u32), |f| f.opener)
            .ok()
    }
    fn parent(&self, g: usize) -> Option<usize> {
        match self.frames[g].parent {
            Arms::NONE => None,
            p => Some(p as usize),
        }
    }
}

/// Instructions of a region from which its uniform paths are modelled
/// beside its detailed model (below it a thread's start costs more than
/// the overlap saves).
const PARALLEL_PATHS: usize = 50_000;

/// An instruction's weight in a uniform path: the throughput of the
/// cost-table row found for its detail, at least one issue slot.
fn path_weight(gpu: &GpuTiming, d: &InsnDetail) -> f64 {
    d.entry.throughput.max(gpu.issue_cycles)
}

/// The uniform-path models of a region without nested loops, made beside
/// its detailed model: each path's own cost, `None` where the path runs
/// the whole region (its cost is then the detailed one).
#[derive(Clone, Copy, Debug)]
struct EarlyPaths {
    longest: Option<f64>,
    shortest: Option<f64>,
}

/// Working vectors of [`path_subset`], indexed by frame and kept from one
/// region to the next (each call resets the entries it set): a map per
/// region keyed by frame and a binary search per instruction were most of
/// the paths' cost on a kernel of nested ifs.
#[derive(Default)]
struct PathScratch {
    /// Per frame: its slot in `local` ([`Arms::NONE`]: not opened in the
    /// region).
    slot: Vec<u32>,
    /// Per frame: summed weight of the instructions below it (valid while
    /// `seen`).
    below: Vec<f64>,
    /// Per frame: visited by the region's chains.
    seen: Vec<bool>,
    /// Per frame: every local arm above it is kept (valid while `seen`).
    up_ok: Vec<bool>,
    /// Frames opened in the region, ascending.
    local: Vec<u32>,
    /// Per local frame: the weights of its two arms.
    arm_w: Vec<[f64; 2]>,
    /// Frames visited.
    visited: Vec<u32>,
}

impl PathScratch {
    fn for_frames(frames: usize) -> PathScratch {
        PathScratch {
            slot: vec![Arms::NONE; frames],
            below: vec![0.0; frames],
            seen: vec![false; frames],
            up_ok: vec![false; frames],
            ..Default::default()
        }
    }
}

/// Which instructions of a region a uniform path runs, appended to `out`
/// (ascending): `longest` keeps the dearer arm of every if/else (and every
/// if-only arm), otherwise the cheaper arm (and no if-only arm). Only
/// frames opened inside the region count; `weight` ranks arms.
fn path_subset(
    idx: &[u32],
    arms: &Arms,
    weight: &dyn Fn(usize) -> f64,
    longest: bool,
    sc: &mut PathScratch,
    out: &mut Vec<u32>,
) {
    // frames opened in the region, ascending (`idx` is sorted and frames
    // are in opener order)
    sc.local.clear();
    for &i in idx {
        if let Some(f) = arms.opened_at(i as usize) {
            sc.slot[f] = sc.local.len() as u32;
            sc.local.push(f as u32);
        }
    }
    if sc.local.is_empty() {
        // no frame opened here: every chain below is empty, all is kept
        // (a loop body between a push_exec and a pop_exec outside it)
        out.extend_from_slice(idx);
        return;
    }
    let PathScratch {
        slot,
        below,
        seen,
        up_ok,
        local,
        arm_w,
        visited,
    } = sc;
    // Every instruction's chain is its arm (frame `f`, arm `a`), then for
    // each frame `g` from `f` up the parent links while `g` has a parent,
    // the arm `g`'s opener lies in; only local frames count. Frames opened
    // before the region's first instruction (and their ancestors, opened
    // earlier still) are never local. So the frames a region's chains
    // visit are the innermost frames of its instructions and their
    // ancestors opened inside the region's span: each is visited once, not
    // once per instruction below it.
    let first = idx.first().copied().unwrap_or(0);
    let inside = |g: usize| arms.frames[g].opener >= first;
    let slot_of = |slot: &[u32], f: usize| match slot[f] {
        Arms::NONE => None,
        k => Some(k as usize),
    };
    arm_w.clear();
    arm_w.resize(local.len(), [0.0; 2]);
    visited.clear();
    // frames visited, with the summed weight of the instructions below
    // each (its own arms and its descendants')
    for &i in idx {
        let Some((f, a)) = arms.arm(i as usize) else {
            continue;
        };
        let w = weight(i as usize);
        if let Some(k) = slot_of(slot, f) {
            arm_w[k][(a != 0) as usize] += w;
        }
        if inside(f) {
            if !seen[f] {
                seen[f] = true;
                below[f] = 0.0;
                visited.push(f as u32);
            }
            below[f] += w;
        }
    }
    // close the visited set under parents opened inside the span
    let mut k = 0;
    while k < visited.len() {
        let g = visited[k] as usize;
        k += 1;
        if let Some(p) = arms.parent(g).filter(|&p| inside(p)) {
            if !seen[p] {
                seen[p] = true;
                below[p] = 0.0;
                visited.push(p as u32);
            }
        }
    }
    visited.sort_unstable();
    // children before parents (a parent is opened before its children):
    // each frame's weight goes to the arm its opener lies in, then up
    for &g in visited.iter().rev() {
        let g = g as usize;
        let w = below[g];
        let Some(p) = arms.parent(g) else { continue };
        if let Some((qf, qa)) = arms.arm(arms.frames[g].opener as usize) {
            if let Some(k) = slot_of(slot, qf) {
                arm_w[k][(qa != 0) as usize] += w;
            }
        }
        if inside(p) {
            below[p] += w;
        }
    }
    let keep_arm = |k: usize, a: u8| -> bool {
        let has_else = arms.frames[local[k] as usize].has_else;
        let [w0, w1] = arm_w[k];
        if !has_else {
            return longest;
        }
        let pick0 = if longest { w0 >= w1 } else { w0 <= w1 };
        (a == 0) == pick0
    };
    let keeps = |(f, a): (usize, u8)| slot_of(slot, f).is_none_or(|k| keep_arm(k, a));
    // whether every local arm above frame `g` (the `up` arms of `g` and of
    // its ancestors) is kept: parents first, frames outside the span keep
    // all (nothing local above them)
    for &g in visited.iter() {
        let g = g as usize;
        let ok = match arms.parent(g) {
            None => true,
            Some(p) => {
                arms.arm(arms.frames[g].opener as usize).is_none_or(keeps) && (!seen[p] || up_ok[p])
            }
        };
        up_ok[g] = ok;
    }
    out.extend(idx.iter().copied().filter(|&i| match arms.arm(i as usize) {
        None => true,
        Some((f, a)) => keeps((f, a)) && (!seen[f] || up_ok[f]),
    }));
    for &g in visited.iter() {
        seen[g as usize] = false;
    }
    for &f in local.iter() {
        slot[f as usize] = Arms::NONE;
    }
}

/// A loop's trip count for the model, with where it comes from.
struct Trip {
    count: u32,
    source: crate::trip_count::TripSource,
    max: Option<u32>,
    bound: Option<String>,
}

/// The trip count of the loop headed at `header`: the user's for this loop
/// (`--trip-count ADDR=N`), else what the code proves ([`crate::trip_count`]),
/// else `--trip-count N` or the default.
fn loop_trip(
    params: &ModelParams,
    header: u32,
    fact: Option<&Option<crate::trip_count::TripFact>>,
) -> Trip {
    use crate::trip_count::{TripFact, TripSource};
    let fact = fact.and_then(|f| f.as_ref());
    let unknown = if params.trip_count_given {
        TripSource::Given
    } else {
        TripSource::Default
    };
    let (max, bound) = match fact {
        Some(TripFact::Exact(n) | TripFact::AtMost(n)) => (Some(*n), None),
        Some(TripFact::Argument(u)) => (None, Some(u.clone())),
        None => (None, None),
    };
    let (count, source) = match (params.loop_trip_counts.get(&header), fact) {
        (Some(&t), _) => (t, TripSource::User),
        (None, Some(TripFact::Exact(n))) => (*n, TripSource::Code),
        (None, Some(TripFact::AtMost(n))) => (*n, TripSource::Bounded),
        (None, Some(TripFact::Argument(_))) => (params.trip_count, TripSource::Argument),
        (None, None) => (params.trip_count, unknown),
    };
    Trip {
        count,
        source,
        max,
        bound,
    }
}

/// Models a whole kernel whose loops are `nest`'s (the loop forest's
/// membership: a loop is its blocks, [`crate::loops::LoopNest`]).
/// `uniform_loads`: indices (sorted) of the loads whose address the
/// divergence analysis proved uniform
/// ([`crate::divergence::Divergence::uniform_loads`]; empty: none); the
/// model takes them as given and never derives uniformity itself.
pub fn analyze_kernel_with_nest(
    gpu: &'static GpuTiming,
    insns: &[Instruction],
    nest: &crate::loops::LoopNest,
    uniform_loads: &[usize],
    params: &ModelParams,
) -> KernelTiming {
    analyze_kernel_with_access(gpu, insns, nest, uniform_loads, &[], params)
}

/// [`analyze_kernel_with_nest`] with the access facts of the address
/// analysis ([`crate::address::Access`], by instruction index; empty: none):
/// the memory rule (docs/analysis.md, "Memory rule") charges a device
/// request the cache lines it touches, and a loop-invariant device load its
/// DRAM bytes once, not per iteration.
#[allow(clippy::needless_range_loop)]
pub fn analyze_kernel_with_access(
    gpu: &'static GpuTiming,
    insns: &[Instruction],
    nest: &crate::loops::LoopNest,
    uniform_loads: &[usize],
    access: &[crate::address::Access],
    params: &ModelParams,
) -> KernelTiming {
    let n = insns.len();
    let k = params.simds_per_scheduler(gpu);
    let nl = nest.loops.len();
    let parent: Vec<Option<usize>> = nest.loops.iter().map(|l| l.parent).collect();
    let depth: Vec<u32> = nest.loops.iter().map(|l| l.depth).collect();
    // innermost loop of each instruction: the nest's (read, not copied)
    assert_eq!(
        nest.owner.len(),
        n,
        "the loop nest is of these instructions"
    );
    let owner: &[Option<u32>] = &nest.owner;
    let trips: Vec<Trip> = (0..nl)
        .map(|li| {
            loop_trip(
                params,
                insns[nest.loops[li].header].addr,
                nest.trips.get(li),
            )
        })
        .collect();
    let trip = |li: usize| -> f64 { trips[li].count as f64 };
    // Executions per thread of each loop's body: product of trip counts,
    // from the loop up its parents. Found top-down (parents first, by depth:
    // one product per loop, not a walk up the parents); the trip counts are
    // whole numbers, so a product of factors >= 1 is exact in either order
    // while it stays at most 2^53 — otherwise (a zero trip count, or above)
    // the loop's is taken again in the walk's order.
    let weights: Vec<f64> = {
        let walk = |li: usize| {
            let mut w = 1.0;
            let mut p = Some(li);
            while let Some(q) = p {
                w *= trip(q);
                p = parent[q];
            }
            w
        };
        let mut top_down: Vec<usize> = (0..nl).collect();
        top_down.sort_by_key(|&i| depth[i]);
        let mut w = vec![f64::NAN; nl];
        for li in top_down {
            let above = match parent[li] {
                None => 1.0,
                Some(p) if !w[p].is_nan() => w[p],
                // (a parent no shallower than its child: the walk)
                Some(_) => f64::NAN,
            };
            let x = 1.0 * trip(li) * above;
            w[li] = if !(1.0..=9_007_199_254_740_992.0).contains(&x) {
                walk(li)
            } else {
                x
            };
        }
        w
    };
    let weight = |li: Option<usize>| -> f64 { li.map_or(1.0, |l| weights[l]) };

    // Regions: None = outside loops, Some(li) = loop li's own body.
    // Their instruction indices, region by region in one flat list of `u32`
    // (4 B per instruction and two allocations; a vector of `usize` per
    // region was ~13 B per instruction with a loop per 12 instructions).
    let mut member_start: Vec<u32> = vec![0; nl + 2];
    for o in owner {
        member_start[o.map_or(0, |l| l as usize + 1) + 1] += 1;
    }
    for r in 1..member_start.len() {
        member_start[r] += member_start[r - 1];
    }
    let mut member_flat: Vec<u32> = vec![0; n];
    {
        let mut next = member_start.clone();
        for (i, o) in owner.iter().enumerate() {
            let r = o.map_or(0, |l| l as usize + 1);
            member_flat[next[r] as usize] = i as u32;
            next[r] += 1;
        }
    }
    let region_count = nl + 1;
    let members = |r: usize| &member_flat[member_start[r] as usize..member_start[r + 1] as usize];
    // uniform-address loads by instruction (none: empty)
    let mut uniform = vec![false; if uniform_loads.is_empty() { 0 } else { n }];
    for &i in uniform_loads {
        if let Some(u) = uniform.get_mut(i) {
            *u = true;
        }
    }
    let is_uniform = |i: usize| uniform.get(i).copied().unwrap_or(false);
    // access facts by instruction (none: empty): lines per request (0:
    // not known) and loop-invariant device loads
    let mut lines = vec![0u16; if access.is_empty() { 0 } else { n }];
    let mut invariant = vec![false; if access.is_empty() { 0 } else { n }];
    let mut banks = vec![0u8; if access.is_empty() { 0 } else { n }];
    let atomic_ways = super::sync::atomic_ways_by_insn(access, n);
    let atomic_chains = super::sync::atomic_chains_by_insn(access, n);
    // the cache model's traffic by instruction (none: empty)
    let mut traffic = vec![None; if access.is_empty() { 0 } else { n }];
    // (the cache model's figures as `cache::annotate` left them on the
    // access facts: the record's l1_bytes / dram_bytes, read, not re-derived)
    for a in access {
        if let Some(slot) = traffic.get_mut(a.index as usize) {
            *slot = super::cache::Traffic::of_access(a);
        }
    }
    for a in access {
        let i = a.index as usize;
        if i < lines.len() {
            banks[i] = a
                .bank_conflict_ways
                .map_or(0, |w| w.min(u8::MAX as u32) as u8);
            lines[i] = a
                .lines_per_request
                .map_or(0, |l| l.min(u16::MAX as u32) as u16);
            invariant[i] = a.loop_stride == Some(0) && a.in_loop.is_some() && a.dir == "load";
        }
    }
    let model_idx = |idx: &[u32], is_loop: bool, detail: bool| -> RegionOut {
        let code = RegionCode {
            insns,
            idx,
            uniform: &uniform,
            lines: &lines,
            invariant: &invariant,
            banks: &banks,
            traffic: &traffic,
            atomic_ways: &atomic_ways,
            atomic_chains: &atomic_chains,
        };
        model_region(gpu, params, &code, is_loop, detail)
    };
    // Per-instruction detail, its stalls filled in region by region (no
    // second per-instruction vector).
    let mut instructions_detail = Vec::with_capacity(n);
    for (i, insn) in insns.iter().enumerate() {
        let key = insn.cost_key();
        let e = gpu.entry(key);
        // every key has its row (index_rows; InsnDetail::key reads it)
        debug_assert_eq!(e.key, key);
        instructions_detail.push(InsnDetail {
            addr: insn.addr,
            loop_depth: owner[i].map(|l| depth[l as usize]).unwrap_or(0),
            entry: e,
            loop_index: owner[i],
            dep_producer: 0,
            dep_penalty: 0.0,
            dep_bits: 0,
            stall_single: 0.0,
            stall: 0.0,
            uniform_address: is_uniform(i),
            stack_kind: None,
        });
    }
    // (each detail's `loop_index` is the owner from here on)
    let nest_loop = |li: usize| &nest.loops[li];
    // Each loop's body region goes straight into its record (the rest of
    // the record is filled at the end): a vector of regions moved into the
    // records later would hold every region twice at the kernel's peak
    // (~27 B per instruction of a kernel with a loop per 12 instructions).
    let mut outside: Option<RegionTiming> = None;
    let mut loops_out: Vec<LoopTiming> = Vec::with_capacity(nl);
    let arms = exec_arms(insns);
    // A big region without nested loops whose if-frames open inside it has
    // uniform paths that depend on its own instructions only: their models
    // (below) run beside its detailed one (call-dense 1M: one straight line
    // of ~1M instructions, three passes of the model otherwise in a row).
    let mut has_child = vec![false; region_count];
    for p in &parent {
        has_child[p.map_or(0, |p| p + 1)] = true;
    }
    let early_region = |r: usize| !has_child[r] && members(r).len() >= PARALLEL_PATHS;
    // (each instruction's weight in a path, as the general case weighs it)
    let path_w: Vec<f64> = if (0..region_count).any(early_region) {
        let w = |d: &InsnDetail| path_weight(gpu, d);
        instructions_detail.iter().map(w).collect()
    } else {
        Vec::new()
    };
    // (only for an early region)
    let early_paths = |r: usize| -> Option<EarlyPaths> {
        let idx = members(r);
        if crate::par::threads() < 2 {
            return None;
        }
        if !idx.iter().any(|&i| arms.opened_at(i as usize).is_some())
            || !idx.iter().any(|&i| arms.in_arm(i as usize))
        {
            return None;
        }
        let w = |i: usize| -> f64 { path_w[i] };
        let mut sc = PathScratch::for_frames(arms.frames.len());
        let mut sub = Vec::new();
        let mut one = |longest: bool| -> Option<f64> {
            sub.clear();
            path_subset(idx, &arms, &w, longest, &mut sc, &mut sub);
            (sub.len() != idx.len()).then(|| model_idx(&sub, r > 0, false).timing.bound.cycles)
        };
        let paths = EarlyPaths {
            longest: one(true),
            shortest: one(false),
        };
        // (this thread's scratch is as big as the region: freed)
        release_scratch();
        Some(paths)
    };
    let mut early: Vec<Option<EarlyPaths>> = vec![None; region_count];
    // regions are independent: modelled on all cores, taken in order
    crate::par::map_ordered(
        region_count,
        &|r| {
            if early_region(r) {
                crate::par::join(|| model_idx(members(r), r > 0, true), || early_paths(r))
            } else {
                (model_idx(members(r), r > 0, true), None)
            }
        },
        |r, (out, paths)| {
            early[r] = paths;
            let idx = members(r);
            for (j, ((dep, ss, se), &i)) in out.per_insn.into_iter().zip(idx).enumerate() {
                // the producer: the region's instruction before (the first's is
                // the last, a loop's wrap-around)
                let before = if j > 0 { j - 1 } else { idx.len() - 1 };
                let d = &mut instructions_detail[i as usize];
                d.set_raw_dep(dep.raw(gpu, insns[idx[before] as usize].addr));
                d.stall_single = round3(ss);
                d.stall = round3(se);
            }
            if r == 0 {
                outside = Some(out.timing);
            } else {
                let li = r - 1;
                let Trip {
                    count: t,
                    source: src,
                    max,
                    ref bound,
                } = trips[li];
                loops_out.push(LoopTiming {
                    index: li,
                    forest: nest_loop(li).forest,
                    header: insns[nest_loop(li).header].addr,
                    latch: insns[nest_loop(li).latch].addr,
                    first: insns[nest_loop(li).first].addr,
                    last: insns[nest_loop(li).last].addr,
                    depth: depth[li],
                    parent: parent[li],
                    trip_count: t,
                    trip_count_source: src,
                    trip_count_max: max,
                    trip_count_bound: bound.clone(),
                    bound: Bound::default(),
                    cycles_per_iteration: 0.0,
                    latency_bound_cycles: 0.0,
                    body: out.timing,
                });
            }
        },
    );
    let outside = outside.expect("outside region");
    // region r: 0 = outside loops, li + 1 = loop li's own body
    let region = |loops_out: &[LoopTiming], r: usize| -> f64 {
        if r == 0 {
            outside.bound.cycles
        } else {
            loops_out[r - 1].body.bound.cycles
        }
    };

    // Inclusive per-iteration costs, innermost first.
    let mut order: Vec<usize> = (0..nl).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(depth[i]));
    // the children of each region (0: outermost loops, li + 1: loop li's),
    // ascending, in one flat list (not a vector per loop)
    let mut child_start: Vec<u32> = vec![0; nl + 2];
    for p in &parent {
        child_start[p.map_or(0, |p| p + 1) + 1] += 1;
    }
    for r in 1..child_start.len() {
        child_start[r] += child_start[r - 1];
    }
    let mut child_flat: Vec<u32> = vec![0; nl];
    {
        let mut next = child_start.clone();
        for (ch, p) in parent.iter().enumerate() {
            let r = p.map_or(0, |p| p + 1);
            child_flat[next[r] as usize] = ch as u32;
            next[r] += 1;
        }
    }
    let children =
        |r: usize| -> &[u32] { &child_flat[child_start[r] as usize..child_start[r + 1] as usize] };
    let mut incl = vec![0.0; nl];
    let mut nested = vec![0.0; nl];
    for &li in &order {
        let c: f64 = children(li + 1)
            .iter()
            .map(|&ch| trip(ch as usize) * incl[ch as usize])
            .sum();
        nested[li] = c;
        incl[li] = round3(loops_out[li].body.bound.cycles + c);
    }

    // Uniform-branch paths: each region re-costed on the instructions (and
    // nested loops) a uniform path runs, clamped so that shortest <= longest
    // <= the divergent cost. Loops innermost first, then the straight line.
    let mut incl_short = vec![0.0; nl];
    let mut incl_long = vec![0.0; nl];
    let (mut shortest, mut longest) = (0.0, 0.0);
    // (working vectors kept from one region to the next)
    let mut path_sc = PathScratch::for_frames(arms.frames.len());
    let mut header_of: Vec<(u32, usize)> = Vec::new();
    let (mut all, mut sub, mut own): (Vec<u32>, Vec<u32>, Vec<u32>) = Default::default();
    let region_order = order.iter().map(|&l| l + 1).chain([0]);
    for r in region_order {
        let idx = members(r);
        let full = region(&loops_out, r);
        let opens_frame = idx.iter().any(|&i| arms.opened_at(i as usize).is_some());
        let (short, long) = if children(r).is_empty() && !opens_frame {
            // A region with no nested loop and no if-frame opened in it:
            // every uniform path runs all of it (what the general case below
            // computes, without its vectors).
            (full, full)
        } else if let Some(e) = early[r] {
            // modelled beside the region (the general case's figures: its
            // path's own instructions, at most the whole region, no kids)
            let own = |c: Option<f64>| c.map_or(full, |c| c.min(full)) + -0.0;
            let long = own(e.longest);
            (own(e.shortest).min(long), long)
        } else {
            // (first instruction, child loop), by instruction: a sorted
            // vector searched (a map's node walk per instruction of a
            // region holding thousands of loops was a tenth of the model)
            header_of.clear();
            header_of.extend(
                children(r)
                    .iter()
                    .map(|&ch| (nest_loop(ch as usize).first as u32, ch as usize)),
            );
            header_of.sort_by_key(|h| h.0);
            // (one child per instruction; were two to share one, the last
            // counts, as a map's insert keeps it)
            header_of.reverse();
            header_of.dedup_by_key(|h| h.0);
            header_of.reverse();
            let header_of = &header_of[..];
            let header_at = |i: usize| -> Option<usize> {
                header_of
                    .binary_search_by_key(&(i as u32), |h| h.0)
                    .ok()
                    .map(|k| header_of[k].1)
            };
            // the region's instructions and its children's first ones, in
            // order (both lists ascend: merged)
            all.clear();
            all.reserve(idx.len() + header_of.len());
            let (mut a, mut b) = (0, 0);
            while a < idx.len() || b < header_of.len() {
                if b == header_of.len() || (a < idx.len() && idx[a] <= header_of[b].0) {
                    all.push(idx[a]);
                    a += 1;
                } else {
                    all.push(header_of[b].0);
                    b += 1;
                }
            }
            let has_arm = all.iter().any(|&i| arms.in_arm(i as usize));
            let mut cost = |longest_path: bool| -> f64 {
                sub.clear();
                if has_arm {
                    let w = |i: usize| -> f64 {
                        match header_at(i) {
                            Some(ch) => trip(ch) * incl_long[ch],
                            None => path_weight(gpu, &instructions_detail[i]),
                        }
                    };
                    path_subset(&all, &arms, &w, longest_path, &mut path_sc, &mut sub);
                } else {
                    sub.extend_from_slice(&all);
                }
                // the path's own instructions and its children's cost, in
                // one walk of both ascending lists (the sum as `Iterator::sum`
                // folds: from -0.0)
                own.clear();
                let mut kids = -0.0f64;
                let mut h = 0;
                for &i in sub.iter() {
                    while h < header_of.len() && header_of[h].0 < i {
                        h += 1;
                    }
                    match header_of.get(h).filter(|x| x.0 == i) {
                        Some(&(_, ch)) => {
                            kids += trip(ch)
                                * if longest_path {
                                    incl_long[ch]
                                } else {
                                    incl_short[ch]
                                };
                        }
                        None => own.push(i),
                    }
                }
                let own_cost = if own.len() == idx.len() {
                    full
                } else {
                    model_idx(&own, r > 0, false).timing.bound.cycles.min(full)
                };
                own_cost + kids
            };
            let long = cost(true);
            (cost(false).min(long), long)
        };
        if r == 0 {
            shortest = short;
            longest = long;
        } else {
            incl_short[r - 1] = short;
            incl_long[r - 1] = long;
        }
    }
    drop((path_sc, header_of, all, sub, own));
    // the working sets of the regions are done: freed before the loops'
    // records are built (the kernel's peak memory is reached there)
    let first_outside = members(0).first().map(|&i| i as usize);
    drop(member_flat);
    drop(member_start);
    drop(arms);

    // The breakdown: straight-line code, then each outermost loop.
    let mut breakdown = Vec::with_capacity(1 + parent.iter().filter(|p| p.is_none()).count());
    if let Some(first) = first_outside {
        breakdown.push(BreakdownPart {
            part: PartKind::StraightLine,
            at: insns[first].addr,
            cycles: outside.bound.cycles,
            executions: 1.0,
            loop_index: None,
            callee: None,
        });
    }
    for li in 0..nl {
        if parent[li].is_none() {
            breakdown.push(BreakdownPart {
                part: PartKind::Loop,
                at: loops_out[li].header,
                cycles: round3(trip(li) * incl[li]),
                executions: trip(li),
                loop_index: Some(li),
                callee: None,
            });
        }
    }
    let total = round3(breakdown.iter().map(|b| b.cycles).sum());
    let executions: Vec<f64> = (0..n)
        .map(|i| weight(instructions_detail[i].loop_index.map(|l| l as usize)))
        .collect();
    let longest = round3(longest).min(total);
    let paths = Paths {
        shortest: round3(shortest).min(longest),
        longest,
    };

    // Weighted unit cycles.
    let mut pipes = PipeCycles::default();
    let mut mem = 0.0;
    let (mut l1_bw, mut dram_bw) = (0.0, 0.0);
    let bodies = loops_out.iter().map(|l| &l.body);
    for (r, reg) in std::iter::once(&outside).chain(bodies).enumerate() {
        let w = if r == 0 { 1.0 } else { weights[r - 1] };
        pipes.add_scaled(&reg.pipes, w);
        mem += reg.memory_stall * w;
        let c = &reg.bound.components;
        l1_bw += c.get("memory_bandwidth").copied().unwrap_or(0.0) * w;
        dram_bw += c.get("device_bandwidth").copied().unwrap_or(0.0) * w;
    }
    let cycles = UnitCycles {
        f32: round3(pipes.f32),
        f16: round3(pipes.f16),
        scib: round3(pipes.scib),
        ic: round3(pipes.ic),
        mem: round3(mem),
        alu: round3(pipes.fscib().max(pipes.ic)),
        memory_bandwidth: round3(l1_bw),
        device_bandwidth: round3(dram_bw),
    };

    for (li, l) in loops_out.iter_mut().enumerate() {
        let bound = l.body.bound.plus(nested[li]);
        l.cycles_per_iteration = bound.cycles;
        l.latency_bound_cycles = bound.cycles;
        l.bound = bound;
    }

    // Regions (self time) and what each instruction and block costs.
    let mut regions: Vec<Region> = Vec::with_capacity(nl + 1);
    let mut insn_cycles = vec![0.0f64; n];
    {
        // per region: (cost per pass, sum of weights, raw and exposed stall)
        let mut acc = vec![(0.0f64, 0.0f64, 0.0f64); nl + 1];
        let weight_of = |d: &InsnDetail| -> f64 { d.issue_cycles(gpu) + d.stall };
        for d in &instructions_detail {
            let r = d.loop_index.map_or(0, |l| l as usize + 1);
            acc[r].0 += weight_of(d);
            acc[r].1 += d.stall_single;
            acc[r].2 += d.stall;
        }
        let counts = {
            let mut c = vec![0usize; nl + 1];
            for d in &instructions_detail {
                c[d.loop_index.map_or(0, |l| l as usize + 1)] += 1;
            }
            c
        };
        for (i, d) in instructions_detail.iter().enumerate() {
            let r = d.loop_index.map_or(0, |l| l as usize + 1);
            let cost = if r == 0 {
                outside.bound.cycles
            } else {
                loops_out[r - 1].body.bound.cycles
            };
            let w = acc[r].0;
            let part = if w > 0.0 {
                weight_of(d) / w
            } else {
                1.0 / counts[r] as f64
            };
            insn_cycles[i] = cost * part * executions[i];
        }
        if let Some(first) = first_outside {
            regions.push(Region {
                at: insns[first].addr,
                kind: PartKind::StraightLine,
                depth: 0,
                executions: 1.0,
                cycles_per_execution: outside.bound.cycles,
                self_cycles: outside.bound.cycles,
                self_share: 0.0,
                by: outside.bound.by,
                stall_raw: round3(acc[0].1),
                stall_exposed: round3(acc[0].2),
                loop_index: None,
                callee: None,
            });
        }
        for (li, l) in loops_out.iter().enumerate() {
            let w = weights[li];
            regions.push(Region {
                at: l.header,
                kind: PartKind::Loop,
                depth: l.depth,
                executions: w,
                cycles_per_execution: l.body.bound.cycles,
                self_cycles: round3(l.body.bound.cycles * w),
                self_share: 0.0,
                by: l.body.bound.by,
                stall_raw: round3(acc[li + 1].1 * w),
                stall_exposed: round3(acc[li + 1].2 * w),
                loop_index: Some(li),
                callee: None,
            });
        }
    }
    let blocks: Vec<BlockCycles> = nest
        .blocks
        .iter()
        .enumerate()
        .filter(|(_, &(s, e))| s < e && (e as usize) <= n)
        .map(|(index, &(s, e))| {
            let r = s as usize..e as usize;
            BlockCycles {
                index,
                start: insns[r.start].addr,
                end: insns[r.end - 1].addr,
                cycles: round3(insn_cycles[r.clone()].iter().sum()),
                share: 0.0,
                executions: executions[r].iter().copied().fold(0.0, f64::max),
                insns: (s, e),
            }
        })
        .collect();

    let mut t = KernelTiming {
        gpu: gpu.name,
        params: params.clone(),
        simds_per_scheduler: round3(k),
        cycles,
        mesa_estimate: mesa_estimate(insns),
        total_cycles: total,
        breakdown,
        paths,
        executions,
        outside_loops: outside,
        loops: loops_out,
        instructions_detail,
        bottleneck: String::new(),
        regions,
        bottleneck_detail: BottleneckDetail::default(),
        blocks,
        insn_cycles,
    };
    t.finish_regions();
    release_scratch();
    t
}

/// Width-in-bits helper for reports.
pub fn width_bits(insn: &Instruction) -> u32 {
    dest_width(insn).map(|w| w.bits()).unwrap_or(32)
}

/// Models a kernel using the analysis' loops and occupancy (threads per
/// core from its register allocation, unless `params` is more restrictive).
pub fn analyze_with_analysis(
    insns: &[Instruction],
    analysis: &crate::Analysis,
    params: &ModelParams,
) -> KernelTiming {
    analyze_with_analysis_on(params.gpu.table(), insns, analysis, params)
}

/// [`analyze_with_analysis`] with another cost table (e.g. one whose fitted
/// parameters are being cross-validated).
pub fn analyze_with_analysis_on(
    gpu: &'static GpuTiming,
    insns: &[Instruction],
    analysis: &crate::Analysis,
    params: &ModelParams,
) -> KernelTiming {
    let mut p = params.clone();
    if analysis.occupancy.threads > 0 {
        p.threads_per_core = p.threads_per_core.min(analysis.occupancy.threads);
    }
    // (the summary keeps no membership: the loop forest and the divergence
    // are found again)
    let d = crate::analyze_detailed(insns, &crate::CfgOptions::default());
    let mut t = analyze_kernel_with_nest(gpu, insns, &d.nest, &d.divergence.uniform_loads, &p);
    set_stack_kinds(&mut t, analysis);
    t
}

/// Copies the analysis' stack kinds into the details (its instruction
/// indices are the details').
fn set_stack_kinds(t: &mut KernelTiming, analysis: &crate::Analysis) {
    for &(k, kind) in &analysis.stack_sites {
        if let Some(d) = t.instructions_detail.get_mut(k as usize) {
            d.stack_kind = Some(kind);
        }
    }
}

/// [`analyze_with_analysis`] with the loop nest and the uniform-address
/// loads of the same analysis (no second analysis): what the whole-program
/// layer calls.
pub fn analyze_with_nest(
    insns: &[Instruction],
    analysis: &crate::Analysis,
    nest: &crate::loops::LoopNest,
    uniform_loads: &[usize],
    params: &ModelParams,
) -> KernelTiming {
    analyze_with_access(insns, analysis, nest, uniform_loads, &[], params)
}

/// [`analyze_with_nest`] with the access facts ([`analyze_kernel_with_access`]);
/// their cache traffic is read as [`super::cache::annotate`] set it (an
/// access without it is charged by the fallback rule).
pub fn analyze_with_access(
    insns: &[Instruction],
    analysis: &crate::Analysis,
    nest: &crate::loops::LoopNest,
    uniform_loads: &[usize],
    access: &[crate::address::Access],
    params: &ModelParams,
) -> KernelTiming {
    let mut p = params.clone();
    if analysis.occupancy.threads > 0 {
        p.threads_per_core = p.threads_per_core.min(analysis.occupancy.threads);
    }
    let mut t =
        analyze_kernel_with_access(params.gpu.table(), insns, nest, uniform_loads, access, &p);
    set_stack_kinds(&mut t, analysis);
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One detail per instruction of the kernel: it stays at 56 bytes.
    #[test]
    fn insn_detail_stays_small() {
        assert!(std::mem::size_of::<InsnDetail>() <= 56);
    }

    /// The formatter's spelling `push_cy` replaces.
    fn reference(x: f64) -> String {
        let x = r2(x);
        if (x - x.round()).abs() < 0.005 {
            format!("{}", x.round() as i64)
        } else {
            format!("{x:.2}")
        }
    }

    /// `push_cy` spells every figure as `{:.2}`/`{}` would: hundredths,
    /// halves, eighths (exact ties), values from 1e-6 to 1e15 and their
    /// negatives.
    #[test]
    fn push_cy_matches_the_formatter() {
        let mut xs: Vec<f64> = (-300_000..300_000).map(|k| k as f64 / 100.0).collect();
        xs.extend((-20_000..20_000).map(|k| k as f64 / 8.0));
        xs.extend((-20_000..20_000).map(|k| k as f64 / 1000.0 + 0.005));
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let m = (state >> 11) as f64 / (1u64 << 53) as f64;
            let e = ((state >> 3) % 22) as i32 - 6;
            let x = m * 10f64.powi(e);
            xs.push(x);
            xs.push(-x);
        }
        xs.extend([
            f64::NAN,
            f64::INFINITY,
            -f64::INFINITY,
            1e12 + 0.25,
            -0.0,
            0.004999,
        ]);
        for x in xs {
            let mut s = String::new();
            push_cy(&mut s, x);
            assert_eq!(s, reference(x), "{x:e}");
        }
    }
}
