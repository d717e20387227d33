//! Our steady-state model.
//!
//! For every loop (and for the straight-line code outside loops) we compute,
//! per SIMD-group and per scheduler:
//!
//! * **throughput view** (`cycles_per_iteration`): the maximum of the
//!   FP32/integer/conditional pipe (F32 + F16 + SCIB reciprocal throughputs,
//!   plus back-to-back RAW penalties), the integer-and-complex pipe (IC), the
//!   dispatch slot (one instruction per cycle) and device-memory bandwidth.
//!   This is metal-benchmarks' "throughput" unit: 64 independent `fadd32`
//!   cost 64.
//! * **latency view** (`latency_bound_cycles`): one SIMD-group's iteration is
//!   simulated in order (operands ready after the producer's latency, loads
//!   complete at their `wait`, pipes busy for their throughput); with `k`
//!   SIMD-groups resident per scheduler, the scheduler spends at least
//!   `single_simd_iteration_cycles / k` per SIMD-group iteration.
//!   `latency_bound_cycles = max(cycles_per_iteration, that)`.
//!
//! The kernel estimate weights each loop by its trip count (`trip_count`
//! parameter, default [`DEFAULT_TRIP_COUNT`], or a per-loop override).

use super::mesa::{mesa_estimate, MesaEstimate};
use super::table::{
    classify, dest_width, form_name, mem_class, GpuTiming, MemClass, MemParams, Unit, G13,
};
use agx_isa::forms::FORMS;
use agx_isa::{Flow, Instruction, RegFile, Width};
use serde::Serialize;
use std::collections::BTreeMap;

/// Trip count assumed for loops whose count is unknown.
pub const DEFAULT_TRIP_COUNT: u32 = 16;

/// Model parameters (all overridable; defaults stated in the report).
#[derive(Clone, Debug, Serialize)]
pub struct ModelParams {
    /// Trip count for every loop without an override.
    pub trip_count: u32,
    /// Per-loop trip counts, keyed by the loop header's address.
    pub loop_trip_counts: BTreeMap<u32, u32>,
    /// Threads resident per GPU core (occupancy), e.g. from
    /// `occupancy::threads_per_core`. Default 1024 (the maximum).
    pub threads_per_core: u32,
    pub mem: MemParams,
}

impl Default for ModelParams {
    fn default() -> Self {
        ModelParams {
            trip_count: DEFAULT_TRIP_COUNT,
            loop_trip_counts: BTreeMap::new(),
            threads_per_core: 1024,
            mem: MemParams::default(),
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
#[derive(Clone, Debug, Serialize)]
pub struct InsnDetail {
    pub addr: u32,
    pub mnemonic: &'static str,
    /// Cost-table key.
    pub key: &'static str,
    pub unit: Unit,
    /// Reciprocal throughput on `unit`'s pipe.
    pub cycles: f64,
    pub latency: f64,
    /// Loop nesting depth (0 = not in a loop).
    pub loop_depth: u32,
    /// Index (into `KernelTiming::loops`) of the innermost enclosing loop.
    pub loop_index: Option<usize>,
    /// Back-to-back RAW dependency on the previous instruction, if any.
    pub raw_dep: Option<RawDep>,
    /// Stall of one SIMD-group before this instruction issues (alone on its
    /// scheduler), in cycles.
    pub stall_single: f64,
    /// Stall left exposed at the kernel's occupancy (after the other
    /// SIMD-groups on the scheduler fill it).
    pub stall: f64,
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
    /// Sum of back-to-back RAW penalties.
    pub raw_penalty: f64,
}

impl PipeCycles {
    pub fn fscib(&self) -> f64 {
        self.f32 + self.f16 + self.scib + self.raw_penalty
    }
    fn add_scaled(&mut self, o: &PipeCycles, w: f64) {
        self.f32 += o.f32 * w;
        self.f16 += o.f16 * w;
        self.scib += o.scib * w;
        self.ic += o.ic * w;
        self.mem += o.mem * w;
        self.issue += o.issue * w;
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

/// Timing of one region: a loop's own body (one iteration) or the
/// straight-line code outside loops.
#[derive(Clone, Debug, Serialize)]
pub struct RegionTiming {
    pub instructions: usize,
    pub pipes: PipeCycles,
    /// Throughput view (reciprocal throughput per SIMD-group iteration).
    pub cycles_per_iteration: f64,
    /// Latency view at the kernel's occupancy.
    pub latency_bound_cycles: f64,
    /// Cycles one SIMD-group alone takes per iteration (in-order issue).
    pub single_simd_iteration_cycles: f64,
    /// Loop-carried dependency chain per iteration (dataflow only).
    pub recurrence_cycles: f64,
    pub loads: usize,
    pub stores: usize,
    pub waits: Vec<WaitStall>,
    /// Sum of one SIMD-group's wait stalls per iteration.
    pub wait_stall: f64,
    /// Stall cycles per SIMD-group iteration left exposed at occupancy.
    pub exposed_stall: f64,
    /// `max(F+SCIB, IC)` per iteration.
    pub alu_per_iter: f64,
    /// Which bound dominates, e.g. `"IC pipe"`.
    pub bottleneck_unit: &'static str,
    /// Human-readable bottleneck.
    pub bottleneck: String,
}

/// A loop of the kernel, with its timing.
#[derive(Clone, Debug, Serialize)]
pub struct LoopTiming {
    pub index: usize,
    /// Address of the first instruction of the loop (header).
    pub header: u32,
    /// Address of the back-edge branch.
    pub latch: u32,
    pub depth: u32,
    pub parent: Option<usize>,
    pub trip_count: u32,
    /// `"parameter"` (the `trip_count` default) or `"override"`.
    pub trip_count_source: &'static str,
    /// Throughput view of one iteration including nested loops (× their trip
    /// counts).
    pub cycles_per_iteration: f64,
    /// Latency view of one iteration including nested loops.
    pub latency_bound_cycles: f64,
    /// The loop's own instructions (nested loops excluded).
    pub body: RegionTiming,
    pub bottleneck: String,
}

/// Weighted per-unit cycles of the whole kernel.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct UnitCycles {
    pub f32: f64,
    pub f16: f64,
    pub scib: f64,
    pub ic: f64,
    /// Exposed memory stall cycles per SIMD-group at occupancy.
    pub mem: f64,
    /// `max(f32 + f16 + scib, ic)`.
    pub alu: f64,
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
}

impl KernelTiming {
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
    }
}

/// A loop as an instruction-index range `[start, end]` (end = back-edge).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LoopSpan {
    pub start: usize,
    pub end: usize,
}

/// Branch target of a control-flow instruction (absolute address).
pub fn branch_target(insn: &Instruction) -> Option<i64> {
    match insn.flow() {
        Flow::BranchExec { target, .. } | Flow::Jump { target } => Some(target),
        _ => {
            // Fallback on the raw encoding (jmp_exec_any/none: signed 32-bit
            // offset at bit 16, relative to the instruction).
            let n = form_name(insn);
            if n == "jmp_exec_any" || n == "jmp_exec_none" {
                let off = ((insn.raw >> 16) & 0xFFFF_FFFF) as u32 as i32;
                Some(insn.addr as i64 + off as i64)
            } else {
                None
            }
        }
    }
}

/// Loops from back-edges: a branch at index `j` to an earlier address `t`
/// spans the instructions from `t` to `j`. (AGX loops are structured; the
/// CFG/loop analysis gives the same ranges on reducible code.)
pub fn find_loops(insns: &[Instruction]) -> Vec<LoopSpan> {
    let mut out = Vec::new();
    for (j, insn) in insns.iter().enumerate() {
        if let Some(t) = branch_target(insn) {
            if t <= insn.addr as i64 {
                let s = insns.partition_point(|i| (i.addr as i64) < t);
                if s <= j {
                    out.push(LoopSpan { start: s, end: j });
                }
            }
        }
    }
    out.sort_by_key(|l| (l.start, std::cmp::Reverse(l.end)));
    out.dedup();
    out
}

/// Value of a named encoding field of the instruction's form.
pub fn raw_field(insn: &Instruction, name: &str) -> Option<u64> {
    let f = FORMS.get(insn.form as usize)?;
    let fi = f.fields.iter().find(|x| x.name == name)?;
    let mut v = 0u64;
    for &(start, width, shift) in fi.parts {
        v |= (((insn.raw >> start) & ((1u128 << width) - 1)) as u64) << shift;
    }
    Some(v)
}

/// Scoreboard slot of a load or `wait`, when the encoding has one.
pub fn scoreboard_slot(insn: &Instruction) -> Option<u32> {
    match form_name(insn) {
        "wait" => raw_field(insn, "i").map(|v| v as u32),
        "device_load" | "device_load.TODO" | "texture_sample" | "texture_load" | "atomic" => {
            raw_field(insn, "g").map(|v| v as u32)
        }
        _ => None,
    }
}

/// Bytes per lane a memory instruction moves (from its data register).
fn mem_bytes_per_lane(insn: &Instruction) -> f64 {
    let data = insn
        .all_operands()
        .filter_map(|o| o.as_reg())
        .find(|r| r.file == RegFile::Gpr);
    data.map(|r| r.halves() as f64 * 2.0).unwrap_or(4.0)
}

/// Latency of a load, by memory class.
fn load_latency(insn: &Instruction, mem: &MemParams) -> f64 {
    match mem_class(insn) {
        Some(MemClass::Device) => mem.device_latency(),
        Some(MemClass::Threadgroup) => mem.threadgroup_latency,
        Some(MemClass::Stack) => mem.stack_latency,
        _ => 0.0,
    }
}

fn is_load(insn: &Instruction) -> bool {
    matches!(
        mem_class(insn),
        Some(MemClass::Device | MemClass::Threadgroup | MemClass::Stack)
    )
}

/// Per-instruction static cost facts used by the region model.
struct Static<'a> {
    insn: &'a Instruction,
    key: &'static str,
    unit: Unit,
    tp: f64,
    lat: f64,
    defs: &'a [(u32, Width)],
    uses: &'a [(u32, Width)],
    distinct_sources: usize,
}

/// Appends the GPR 16-bit halves `it` spans, with their widths, to `out`.
fn push_gpr_halves<'a>(out: &mut Vec<(u32, Width)>, it: impl Iterator<Item = &'a agx_isa::Reg>) {
    for r in it {
        if r.file == RegFile::Gpr {
            for h in r.half_range() {
                out.push((h, r.width));
            }
        }
    }
}

/// The statics of `insns`; their def/use half lists live in `arena` (one
/// allocation per region instead of three per instruction).
fn statics<'a>(
    gpu: &GpuTiming,
    insns: &[&'a Instruction],
    arena: &'a mut Vec<(u32, Width)>,
) -> Vec<Static<'a>> {
    let mut spans = Vec::with_capacity(insns.len());
    for &insn in insns {
        let d0 = arena.len();
        push_gpr_halves(arena, insn.defs());
        let u0 = arena.len();
        push_gpr_halves(arena, insn.uses());
        spans.push((d0, u0, arena.len()));
    }
    let arena: &'a [(u32, Width)] = arena;
    insns
        .iter()
        .zip(spans)
        .map(|(&insn, (d0, u0, u1))| {
            let key = classify(insn);
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
            let mut distinct = 0;
            for j in 0..ns {
                if j == 0 || src_regs[j] != src_regs[j - 1] {
                    distinct += 1;
                }
            }
            Static {
                insn,
                key,
                unit: e.unit,
                tp: e.throughput,
                lat: e.latency,
                defs: &arena[d0..u0],
                uses: &arena[u0..u1],
                distinct_sources: distinct,
            }
        })
        .collect()
}

/// RAW penalty of `cur` reading what `prev` wrote.
fn raw_dep(gpu: &GpuTiming, prev: &Static, cur: &Static) -> Option<RawDep> {
    if matches!(cur.unit, Unit::Ctrl) || matches!(prev.unit, Unit::Mem | Unit::Ctrl) {
        return None;
    }
    let hit = cur
        .uses
        .iter()
        .find(|(h, _)| prev.defs.iter().any(|(d, _)| d == h))?;
    let bits = if hit.1 == Width::W16 { 16 } else { 32 };
    let mut penalty = if bits == 16 {
        gpu.raw_penalty_16
    } else {
        gpu.raw_penalty_32
    };
    // Register cache: a dependent instruction fetching a single distinct
    // register (x*x+1) runs at near full rate (metal-benchmarks).
    if cur.distinct_sources <= 1 {
        penalty = 0.0;
    }
    Some(RawDep {
        producer: prev.insn.addr,
        penalty,
        bits,
    })
}

/// Result of modelling one region.
struct RegionOut {
    timing: RegionTiming,
    /// Per instruction: (raw dep, single stall, exposed stall).
    per_insn: Vec<(Option<RawDep>, f64, f64)>,
}

/// Outstanding loads per scoreboard slot: (completion time, [(index, latency)]).
type SlotMap = BTreeMap<Option<u32>, (f64, Vec<(usize, f64)>)>;

#[allow(clippy::needless_range_loop)]
fn model_region(
    gpu: &GpuTiming,
    params: &ModelParams,
    insns: &[&Instruction],
    is_loop: bool,
) -> RegionOut {
    let mut arena = Vec::new();
    let st = statics(gpu, insns, &mut arena);
    let n = st.len();
    let k = params.simds_per_scheduler(gpu);

    // ---- throughput view ----
    let mut pipes = PipeCycles::default();
    let mut deps: Vec<Option<RawDep>> = vec![None; n];
    let per_sched_bw = params.mem.l1_bytes_per_cycle_per_core / gpu.schedulers_per_core as f64;
    let (mut loads, mut stores) = (0, 0);
    for i in 0..n {
        let s = &st[i];
        pipes.issue += gpu.issue_cycles;
        match s.unit {
            Unit::F32 => pipes.f32 += s.tp,
            Unit::F16 => pipes.f16 += s.tp,
            Unit::Scib => pipes.scib += s.tp,
            Unit::Ic => pipes.ic += s.tp,
            Unit::Mem => {
                if is_load(s.insn) {
                    loads += 1;
                } else if mem_class(s.insn) == Some(MemClass::Store) {
                    stores += 1;
                }
                let device = matches!(
                    form_name(s.insn),
                    "device_load" | "device_store" | "device_load.TODO" | "device_store.TODO"
                );
                if device && per_sched_bw > 0.0 {
                    pipes.mem += mem_bytes_per_lane(s.insn) * gpu.simd_width as f64 / per_sched_bw;
                }
            }
            Unit::Ctrl => {}
        }
        let prev = if i > 0 {
            Some(&st[i - 1])
        } else if is_loop && n > 1 {
            Some(&st[n - 1])
        } else {
            None
        };
        if let Some(p) = prev {
            deps[i] = raw_dep(gpu, p, s);
            if let Some(d) = &deps[i] {
                pipes.raw_penalty += d.penalty;
            }
        }
    }
    let alu = pipes.fscib().max(pipes.ic);
    let cpi = pipes
        .fscib()
        .max(pipes.ic)
        .max(pipes.issue + pipes.raw_penalty)
        .max(pipes.mem);

    // ---- latency view: in-order simulation of one SIMD-group ----
    let iters = if is_loop { 3 } else { 1 };
    let mut reg_ready = vec![0.0f64; 512];
    let mut slot_done: SlotMap = BTreeMap::new();
    let mut t = 0.0f64;
    let mut fscib_free = 0.0f64;
    let mut ic_free = 0.0f64;
    let mut iter_end = vec![0.0f64; iters];
    let mut stall_single = vec![0.0f64; n];
    let mut wait_info: Vec<WaitStall> = Vec::new();
    let mut wait_idx: Vec<(usize, Vec<usize>)> = Vec::new();
    for it in 0..iters {
        for i in 0..n {
            let s = &st[i];
            let mut start = t;
            for (h, _) in s.uses {
                start = start.max(reg_ready[*h as usize % 512]);
            }
            match s.unit {
                Unit::Ic => start = start.max(ic_free),
                u if u.is_fscib() => start = start.max(fscib_free),
                _ => {}
            }
            let mut completed: Vec<(usize, f64)> = Vec::new();
            let mut wait_lat = 0.0;
            if s.key == "wait" {
                let slot = scoreboard_slot(s.insn);
                let keys: Vec<Option<u32>> = slot_done
                    .keys()
                    .filter(|k| slot.is_none() || **k == slot || k.is_none())
                    .cloned()
                    .collect();
                for key in keys {
                    if let Some((done, ls)) = slot_done.remove(&key) {
                        start = start.max(done);
                        for l in &ls {
                            wait_lat = f64::max(wait_lat, l.1);
                        }
                        completed.extend(ls);
                    }
                }
            }
            let stall = (start - t).max(0.0);
            if it == iters - 1 {
                stall_single[i] = stall;
                if s.key == "wait" && !completed.is_empty() {
                    wait_idx.push((i, completed.iter().map(|c| c.0).collect()));
                    wait_info.push(WaitStall {
                        addr: s.insn.addr,
                        slot: scoreboard_slot(s.insn),
                        loads: completed.iter().map(|(li, _)| st[*li].insn.addr).collect(),
                        latency: wait_lat,
                        independent_work: 0.0,
                        stall_single: stall,
                        exposed: 0.0,
                    });
                }
            }
            // issue
            match s.unit {
                Unit::Ic => ic_free = start + s.tp,
                u if u.is_fscib() => fscib_free = start + s.tp,
                _ => {}
            }
            let mut issue = gpu.issue_cycles;
            if let Some(d) = &deps[i] {
                issue += d.penalty;
            }
            let done = if is_load(s.insn) || s.key == "atomic" {
                let lat = load_latency(s.insn, &params.mem);
                let d = start + lat;
                let e = slot_done
                    .entry(scoreboard_slot(s.insn))
                    .or_insert((0.0, Vec::new()));
                e.0 = e.0.max(d);
                e.1.push((i, lat));
                d
            } else {
                start + s.lat
            };
            for (h, _) in s.defs {
                reg_ready[*h as usize % 512] = done;
            }
            t = start + issue;
        }
        iter_end[it] = t;
    }
    let single = if iters >= 2 {
        iter_end[iters - 1] - iter_end[iters - 2]
    } else {
        iter_end[0]
    };
    // Independent work between the loads and each wait: issue-time distance,
    // recomputed from the static issue positions (instructions between).
    for (w, (wi, lis)) in wait_info.iter_mut().zip(&wait_idx) {
        let wi = *wi;
        let li = lis
            .iter()
            .map(|&li| if li < wi { wi - li } else { wi + n - li })
            .min()
            .unwrap_or(0);
        w.independent_work = (1..li)
            .map(|d| {
                let j = (wi + n - d) % n;
                st[j].tp.max(gpu.issue_cycles)
            })
            .sum();
    }

    // ---- recurrence (dataflow only) ----
    let recurrence = if is_loop {
        let mut ready = vec![0.0f64; 512];
        let mut second: Vec<f64> = Vec::new();
        for pass in 0..3 {
            for s in &st {
                let mut start = 0.0f64;
                for (h, _) in s.uses {
                    start = start.max(ready[*h as usize % 512]);
                }
                let lat = if is_load(s.insn) {
                    load_latency(s.insn, &params.mem)
                } else {
                    s.lat
                };
                for (h, _) in s.defs {
                    ready[*h as usize % 512] = start + lat;
                }
            }
            if pass == 1 {
                second = ready.clone();
            }
        }
        // Only halves the region writes differ between the second and the
        // third pass (the others give exactly +0.0, below the 0.0 start, and
        // max is exact): fold over those.
        st.iter()
            .flat_map(|s| s.defs.iter())
            .map(|&(h, _)| {
                let h = h as usize % 512;
                ready[h] - second[h]
            })
            .fold(0.0f64, f64::max)
    } else {
        0.0
    };

    let latency_view = single / k;
    let lbc = cpi.max(latency_view);
    // Exposed stalls: other SIMD-groups' work fills `(k-1) * cpi` cycles.
    let hide = (k - 1.0) * cpi;
    let mut per_insn = Vec::with_capacity(n);
    for i in 0..n {
        let exposed = (stall_single[i] - hide).max(0.0);
        per_insn.push((deps[i].clone(), stall_single[i], exposed));
    }
    for w in wait_info.iter_mut() {
        w.exposed = (w.stall_single - hide).max(0.0);
    }
    let wait_stall: f64 = wait_info.iter().map(|w| w.stall_single).sum();
    let exposed_stall = (lbc - cpi).max(0.0);

    // ---- bottleneck ----
    let top = |unit_ok: &dyn Fn(Unit) -> bool| -> Option<(u32, &'static str, f64)> {
        st.iter()
            .filter(|s| unit_ok(s.unit))
            .max_by(|a, b| a.tp.partial_cmp(&b.tp).unwrap())
            .map(|s| (s.insn.addr, s.insn.mnemonic, s.tp))
    };
    let cands: [(&'static str, f64); 5] = [
        ("F+SCIB pipe", pipes.fscib()),
        ("IC pipe", pipes.ic),
        ("dispatch", pipes.issue + pipes.raw_penalty),
        ("memory bandwidth", pipes.mem),
        ("latency", latency_view),
    ];
    let (unit, val) =
        cands
            .iter()
            .cloned()
            .fold(("none", -1.0), |a, b| if b.1 > a.1 + 1e-9 { b } else { a });
    let second = cands
        .iter()
        .filter(|c| c.0 != unit)
        .cloned()
        .fold(("none", -1.0), |a, b| if b.1 > a.1 { b } else { a });
    let per = if is_loop { " cy/iter" } else { " cy" };
    let mut bottleneck = format!(
        "{unit}: {}{per} vs {} {} cy",
        fmt_cy(val),
        second.0,
        fmt_cy(second.1)
    );
    match unit {
        "IC pipe" => {
            if let Some((a, m, tp)) = top(&|u| u == Unit::Ic) {
                bottleneck += &format!("; {m} at 0x{a:x} is {} of them", fmt_cy(tp));
            }
        }
        "F+SCIB pipe" => {
            bottleneck += &format!(
                " (F32 {}, F16 {}, SCIB {}, RAW penalties {})",
                fmt_cy(pipes.f32),
                fmt_cy(pipes.f16),
                fmt_cy(pipes.scib),
                fmt_cy(pipes.raw_penalty)
            );
        }
        "latency" => {
            let worst = wait_info
                .iter()
                .max_by(|a, b| a.stall_single.partial_cmp(&b.stall_single).unwrap());
            bottleneck += &format!(
                "; one SIMD-group needs {} cy per pass, {:.0} SIMD-groups/scheduler hide {}",
                fmt_cy(single),
                k,
                fmt_cy(hide.min(single))
            );
            if let Some(w) = worst.filter(|w| w.stall_single > 0.0) {
                bottleneck += &format!(
                    "; wait at 0x{:x} stalls {} cy",
                    w.addr,
                    fmt_cy(w.stall_single)
                );
            } else if recurrence > 0.0 {
                bottleneck += &format!(
                    "; loop-carried dependency chain {} cy/iter",
                    fmt_cy(recurrence)
                );
            }
        }
        _ => {}
    }

    RegionOut {
        timing: RegionTiming {
            instructions: n,
            pipes,
            cycles_per_iteration: round3(cpi),
            latency_bound_cycles: round3(lbc),
            single_simd_iteration_cycles: round3(single),
            recurrence_cycles: round3(recurrence),
            loads,
            stores,
            waits: wait_info,
            wait_stall: round3(wait_stall),
            exposed_stall: round3(exposed_stall),
            alu_per_iter: round3(alu),
            bottleneck_unit: unit,
            bottleneck,
        },
        per_insn,
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Formats cycles compactly (`12`, `5.84`).
pub fn fmt_cy(x: f64) -> String {
    if (x - x.round()).abs() < 0.005 {
        format!("{}", x.round() as i64)
    } else {
        format!("{x:.2}")
    }
}

/// Models one straight-line body as a loop body (every instruction once per
/// iteration, back-edge implied): the building block for unrolled-loop
/// kernels and tests.
pub fn body_timing(insns: &[Instruction], params: &ModelParams) -> RegionTiming {
    let refs: Vec<&Instruction> = insns.iter().collect();
    model_region(&G13, params, &refs, true).timing
}

/// Models a whole kernel (main's instructions in address order), finding
/// loops from back-edges.
pub fn analyze_kernel(insns: &[Instruction], params: &ModelParams) -> KernelTiming {
    let loops = find_loops(insns);
    analyze_kernel_with_loops(&G13, insns, &loops, params)
}

/// Models a whole kernel with loops supplied by the caller (e.g. from the
/// CFG/loop analysis).
#[allow(clippy::needless_range_loop)]
pub fn analyze_kernel_with_loops(
    gpu: &'static GpuTiming,
    insns: &[Instruction],
    spans: &[LoopSpan],
    params: &ModelParams,
) -> KernelTiming {
    let n = insns.len();
    let k = params.simds_per_scheduler(gpu);
    // Innermost loop owning each instruction, and depth.
    let mut spans: Vec<LoopSpan> = spans
        .iter()
        .filter(|s| s.start <= s.end && s.end < n)
        .cloned()
        .collect();
    spans.sort_by_key(|l| (l.start, std::cmp::Reverse(l.end)));
    spans.dedup();
    // Spans are sorted by (start, -end): the enclosing loop is on a stack.
    let mut parent: Vec<Option<usize>> = vec![None; spans.len()];
    let mut stack: Vec<usize> = Vec::new();
    for i in 0..spans.len() {
        while let Some(&top) = stack.last() {
            if spans[top].end < spans[i].start || spans[top].end < spans[i].end {
                stack.pop();
            } else {
                break;
            }
        }
        parent[i] = stack.last().copied();
        stack.push(i);
    }
    let depth: Vec<u32> = (0..spans.len())
        .map(|i| {
            let mut d = 1;
            let mut p = parent[i];
            while let Some(q) = p {
                d += 1;
                p = parent[q];
            }
            d
        })
        .collect();
    let mut owner: Vec<Option<usize>> = vec![None; n];
    for (li, s) in spans.iter().enumerate() {
        for o in owner.iter_mut().take(s.end + 1).skip(s.start) {
            let replace = match *o {
                None => true,
                Some(cur) => depth[li] > depth[cur],
            };
            if replace {
                *o = Some(li);
            }
        }
    }
    // Trip count of each loop and weight (product of enclosing trip counts,
    // innermost first), computed once per loop.
    let trips: Vec<(u32, &'static str)> = spans
        .iter()
        .map(|s| {
            let h = insns[s.start].addr;
            match params.loop_trip_counts.get(&h) {
                Some(&t) => (t, "override"),
                None => (params.trip_count, "parameter"),
            }
        })
        .collect();
    let trip = |li: usize| -> (u32, &'static str) { trips[li] };
    let weights: Vec<f64> = (0..spans.len())
        .map(|li| {
            let mut w = 1.0;
            let mut p = Some(li);
            while let Some(q) = p {
                w *= trip(q).0 as f64;
                p = parent[q];
            }
            w
        })
        .collect();
    // Weight of each instruction = product of enclosing trip counts.
    let weight = |li: Option<usize>| -> f64 { li.map_or(1.0, |l| weights[l]) };

    // Regions.
    let outside: Vec<&Instruction> = (0..n)
        .filter(|&i| owner[i].is_none())
        .map(|i| &insns[i])
        .collect();
    let out_region = model_region(gpu, params, &outside, false);
    let mut details: Vec<Option<(Option<RawDep>, f64, f64)>> = vec![None; n];
    {
        let idx: Vec<usize> = (0..n).filter(|&i| owner[i].is_none()).collect();
        for (j, &i) in idx.iter().enumerate() {
            details[i] = Some(out_region.per_insn[j].clone());
        }
    }
    let mut bodies: Vec<RegionTiming> = Vec::new();
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); spans.len()];
    for (i, o) in owner.iter().enumerate() {
        if let Some(li) = o {
            members[*li].push(i);
        }
    }
    for li in 0..spans.len() {
        let idx = std::mem::take(&mut members[li]);
        let refs: Vec<&Instruction> = idx.iter().map(|&i| &insns[i]).collect();
        let r = model_region(gpu, params, &refs, true);
        for (j, &i) in idx.iter().enumerate() {
            details[i] = Some(r.per_insn[j].clone());
        }
        bodies.push(r.timing);
    }
    // Inclusive per-iteration costs, innermost first.
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(depth[i]));
    let mut incl_cpi = vec![0.0; spans.len()];
    let mut incl_lbc = vec![0.0; spans.len()];
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); spans.len()];
    for (ch, p) in parent.iter().enumerate() {
        if let Some(p) = p {
            children[*p].push(ch);
        }
    }
    for &li in &order {
        let mut c = bodies[li].cycles_per_iteration;
        let mut l = bodies[li].latency_bound_cycles;
        for &ch in &children[li] {
            let t = trip(ch).0 as f64;
            c += t * incl_cpi[ch];
            l += t * incl_lbc[ch];
        }
        incl_cpi[li] = c;
        incl_lbc[li] = l;
    }
    let mut breakdown = Vec::new();
    if !outside.is_empty() {
        breakdown.push(BreakdownPart {
            part: PartKind::StraightLine,
            at: outside[0].addr,
            cycles: round3(out_region.timing.latency_bound_cycles),
            executions: 1.0,
            loop_index: None,
            callee: None,
        });
    }
    for li in 0..spans.len() {
        if parent[li].is_none() {
            let t = trip(li).0 as f64;
            breakdown.push(BreakdownPart {
                part: PartKind::Loop,
                at: insns[spans[li].start].addr,
                cycles: round3(t * incl_lbc[li]),
                executions: t,
                loop_index: Some(li),
                callee: None,
            });
        }
    }
    let total: f64 = breakdown.iter().map(|b| b.cycles).sum();
    let executions: Vec<f64> = (0..n).map(|i| weight(owner[i])).collect();

    // Weighted unit cycles.
    let mut pipes = PipeCycles::default();
    pipes.add_scaled(&out_region.timing.pipes, 1.0);
    let mut mem = out_region.timing.exposed_stall;
    for li in 0..spans.len() {
        let w = weight(Some(li));
        pipes.add_scaled(&bodies[li].pipes, w);
        mem += bodies[li].exposed_stall * w;
    }
    let cycles = UnitCycles {
        f32: round3(pipes.f32),
        f16: round3(pipes.f16),
        scib: round3(pipes.scib),
        ic: round3(pipes.ic),
        mem: round3(mem),
        alu: round3((pipes.f32 + pipes.f16 + pipes.scib).max(pipes.ic)),
    };

    // Per-instruction detail.
    let mut instructions_detail = Vec::with_capacity(n);
    for (i, insn) in insns.iter().enumerate() {
        let key = classify(insn);
        let e = gpu.entry(key);
        let (dep, ss, se) = details[i].clone().unwrap_or((None, 0.0, 0.0));
        instructions_detail.push(InsnDetail {
            addr: insn.addr,
            mnemonic: insn.mnemonic,
            key,
            unit: e.unit,
            cycles: e.throughput,
            latency: e.latency,
            loop_depth: owner[i].map(|l| depth[l]).unwrap_or(0),
            loop_index: owner[i],
            raw_dep: dep,
            stall_single: round3(ss),
            stall: round3(se),
        });
    }

    // Kernel bottleneck: the largest weighted bound.
    let fscib = pipes.fscib();
    let issue = pipes.issue + pipes.raw_penalty;
    let cands = [
        ("F+SCIB pipe", fscib),
        ("IC pipe", pipes.ic),
        ("dispatch", issue),
        ("memory bandwidth", pipes.mem),
        ("memory latency (exposed stalls)", mem),
    ];
    let best = cands
        .iter()
        .cloned()
        .fold(("none", -1.0), |a, b| if b.1 > a.1 + 1e-9 { b } else { a });
    let second = cands
        .iter()
        .filter(|c| c.0 != best.0)
        .cloned()
        .fold(("none", -1.0), |a, b| if b.1 > a.1 { b } else { a });
    let mut bottleneck = format!(
        "{}: {} cy vs {} {} cy (loops weighted by trip count",
        best.0,
        fmt_cy(best.1),
        second.0,
        fmt_cy(second.1)
    );
    if spans.is_empty() {
        bottleneck = format!(
            "{}: {} cy vs {} {} cy (no loops",
            best.0,
            fmt_cy(best.1),
            second.0,
            fmt_cy(second.1)
        );
    } else if params.loop_trip_counts.is_empty() {
        bottleneck += &format!(" {} = --trip-count default", params.trip_count);
    }
    bottleneck.push(')');
    if let Some(hot) = (0..spans.len()).max_by(|&a, &b| {
        (weight(Some(a)) * bodies[a].latency_bound_cycles)
            .partial_cmp(&(weight(Some(b)) * bodies[b].latency_bound_cycles))
            .unwrap()
    }) {
        bottleneck += &format!(
            "; hottest loop {hot} at 0x{:x}: {}",
            insns[spans[hot].start].addr, bodies[hot].bottleneck
        );
    }
    let _ = k;
    // last use of `bodies`: moved into the loop records, not cloned
    let mut loops_out = Vec::with_capacity(spans.len());
    for (li, body) in bodies.into_iter().enumerate() {
        let (t, src) = trip(li);
        loops_out.push(LoopTiming {
            index: li,
            header: insns[spans[li].start].addr,
            latch: insns[spans[li].end].addr,
            depth: depth[li],
            parent: parent[li],
            trip_count: t,
            trip_count_source: src,
            cycles_per_iteration: round3(incl_cpi[li]),
            latency_bound_cycles: round3(incl_lbc[li]),
            bottleneck: body.bottleneck.clone(),
            body,
        });
    }

    KernelTiming {
        gpu: gpu.name,
        params: params.clone(),
        simds_per_scheduler: round3(k),
        cycles,
        mesa_estimate: mesa_estimate(insns),
        total_cycles: round3(total),
        breakdown,
        paths: Paths {
            shortest: round3(total),
            longest: round3(total),
        },
        executions,
        outside_loops: out_region.timing,
        loops: loops_out,
        instructions_detail,
        bottleneck,
    }
}

/// Width-in-bits helper for reports.
pub fn width_bits(insn: &Instruction) -> u32 {
    dest_width(insn).map(|w| w.bits()).unwrap_or(32)
}

/// Loop spans from the CFG/loop analysis ([`crate::Analysis::loops`]).
pub fn spans_from_analysis(insns: &[Instruction], analysis: &crate::Analysis) -> Vec<LoopSpan> {
    // instructions are in address order: binary search (linear scans here
    // made the model quadratic in the number of loops)
    // (searched in a compact address array: no cache miss per probe)
    let addrs: Vec<u32> = insns.iter().map(|i| i.addr).collect();
    let idx = |a: u32| {
        addrs
            .binary_search(&a)
            .ok()
            .or_else(|| addrs.iter().position(|&x| x == a))
    };
    analysis
        .loops
        .iter()
        .filter_map(|l| {
            Some(LoopSpan {
                start: idx(l.start)?,
                end: idx(l.end)?,
            })
        })
        .collect()
}

/// Models a kernel using the analysis' loops and occupancy (threads per
/// core from its register allocation, unless `params` is more restrictive).
pub fn analyze_with_analysis(
    insns: &[Instruction],
    analysis: &crate::Analysis,
    params: &ModelParams,
) -> KernelTiming {
    let mut p = params.clone();
    if analysis.occupancy.threads > 0 {
        p.threads_per_core = p.threads_per_core.min(analysis.occupancy.threads);
    }
    let spans = spans_from_analysis(insns, analysis);
    analyze_kernel_with_loops(&G13, insns, &spans, &p)
}
