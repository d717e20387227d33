//! Cost tables as data, one per GPU generation.
//!
//! Every entry names its unit, latency, reciprocal throughput and the source
//! of those numbers. Entries no public source measures say so in their
//! `source` string (`"assumption: ..."`) and are listed by
//! [`GpuTiming::explain_model`].
//!
//! Units of `throughput`: cycles one SIMD-group instruction occupies its pipe
//! on one scheduler (metal-benchmarks' "throughput" column): 1 for `fadd32`,
//! 4 for most integer-and-complex (IC) ops, 6 for `rcp`, 8 for `rsqrt`.

use agx_isa::forms::FORMS;
use agx_isa::{Instruction, OperandKind, RegFile, Width};
use serde::Serialize;

/// Execution unit / pipe an instruction occupies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "UPPERCASE")]
pub enum Unit {
    /// 32-bit float pipe (shares the FP/integer/conditional pipes).
    F32,
    /// 16-bit float pipe (shares the FP/integer/conditional pipes).
    F16,
    /// Scalar integer / conditional / bitwise (and cross-lane, as Mesa does).
    Scib,
    /// Integer-and-complex pipe: multiplies, shifts, conversions,
    /// transcendentals.
    Ic,
    /// Loads, stores, atomics (asynchronous; completion at `wait`).
    Mem,
    /// Control flow, exec-mask, `wait`, barriers.
    Ctrl,
}

impl Unit {
    pub fn name(self) -> &'static str {
        match self {
            Unit::F32 => "F32",
            Unit::F16 => "F16",
            Unit::Scib => "SCIB",
            Unit::Ic => "IC",
            Unit::Mem => "MEM",
            Unit::Ctrl => "CTRL",
        }
    }
    /// Units that share the FP32/integer/conditional pipes.
    pub fn is_fscib(self) -> bool {
        matches!(self, Unit::F32 | Unit::F16 | Unit::Scib)
    }
}

/// One row of a cost table.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct CostEntry {
    /// Stable key, e.g. `"fadd32"`, `"imad32x32_64"`.
    pub key: &'static str,
    /// What machine forms it covers (human readable).
    pub covers: &'static str,
    pub unit: Unit,
    /// Cycles until the result can be used (adjusted latency).
    pub latency: f64,
    /// Reciprocal throughput in scheduler cycles on `unit`'s pipe.
    pub throughput: f64,
    /// Where the numbers come from.
    pub source: &'static str,
}

impl CostEntry {
    pub fn is_assumption(&self) -> bool {
        self.source.contains("assumption")
    }
}

/// Memory-latency parameters (overridable; defaults are stated assumptions).
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct MemParams {
    /// Device-memory load latency on an L1 hit, cycles.
    pub l1_hit_latency: f64,
    /// Device-memory load latency on an L1 miss, cycles.
    pub l1_miss_latency: f64,
    /// Fraction of device loads assumed to hit L1 (0..=1).
    pub l1_hit_rate: f64,
    /// Threadgroup-memory load latency, cycles.
    pub threadgroup_latency: f64,
    /// Stack (spill) load latency, cycles: spills live in L1-resident scratch.
    pub stack_latency: f64,
    /// L1 data bandwidth per GPU core, bytes/cycle (loads+stores).
    pub l1_bytes_per_cycle_per_core: f64,
    /// Device-memory (DRAM) bandwidth per GPU core and GPU cycle: the chip's
    /// bandwidth shared by its cores ([`DRAM_VARIANTS`]; default M1).
    pub dram_bytes_per_cycle_per_core: f64,
}

/// One M1-family chip: DRAM bandwidth, GPU cores and clock.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct DramVariant {
    pub chip: &'static str,
    pub gb_per_s: f64,
    pub cores: u32,
    pub ghz: f64,
    pub source: &'static str,
}

impl DramVariant {
    /// Bytes per GPU cycle per core when every core streams at once.
    pub fn bytes_per_cycle_per_core(&self) -> f64 {
        self.gb_per_s / (self.cores as f64 * self.ghz)
    }
}

/// DRAM bandwidth per G13 chip (largest GPU configuration of each chip;
/// cores and clocks from metal-benchmarks' GPU table).
pub const DRAM_VARIANTS: &[DramVariant] = &[
    DramVariant { chip: "M1", gb_per_s: 68.25, cores: 8, ghz: 1.278, source: "LPDDR4X-4266, 128-bit: 68.25 GB/s (Apple M1 tech specs / AnandTech M1 review); 8 cores at 1.278 GHz (metal-benchmarks GPU table)" },
    DramVariant { chip: "M1 Pro", gb_per_s: 200.0, cores: 16, ghz: 1.296, source: "Apple newsroom 2021-10-18 (M1 Pro: up to 200GB/s); 16 cores at 1.296 GHz (metal-benchmarks)" },
    DramVariant { chip: "M1 Max", gb_per_s: 400.0, cores: 32, ghz: 1.296, source: "Apple newsroom 2021-10-18 (M1 Max: up to 400GB/s); 32 cores at 1.296 GHz (metal-benchmarks)" },
    DramVariant { chip: "M1 Ultra", gb_per_s: 800.0, cores: 64, ghz: 1.296, source: "Apple newsroom 2022-03-08 (M1 Ultra: 800GB/s); 64 cores at 1.296 GHz (metal-benchmarks)" },
];

/// The variant whose `chip` matches `name` (case- and space-insensitive:
/// `m1`, `m1-pro`, `M1 Max`, ...).
pub fn dram_variant(name: &str) -> Option<&'static DramVariant> {
    let norm = |s: &str| {
        s.chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase()
    };
    let n = norm(name);
    DRAM_VARIANTS.iter().find(|v| norm(v.chip) == n)
}

impl Default for MemParams {
    fn default() -> Self {
        MemParams {
            l1_hit_latency: 100.0,
            l1_miss_latency: 300.0,
            l1_hit_rate: 0.5,
            threadgroup_latency: 40.0,
            stack_latency: 100.0,
            l1_bytes_per_cycle_per_core: 64.0,
            dram_bytes_per_cycle_per_core: DRAM_VARIANTS[0].bytes_per_cycle_per_core(),
        }
    }
}

impl MemParams {
    /// Expected device-load latency under the hit-rate assumption.
    pub fn device_latency(&self) -> f64 {
        let h = self.l1_hit_rate.clamp(0.0, 1.0);
        h * self.l1_hit_latency + (1.0 - h) * self.l1_miss_latency
    }
}

/// Where the memory defaults come from (printed by `explain_model`).
pub const MEM_PARAM_SOURCES: &[(&str, &str)] = &[
    ("l1_hit_latency", "assumption: no public G13 L1 latency measurement in our sources; order of GPU L1 hit latencies (~100 cy), override with --l1-hit-latency"),
    ("l1_miss_latency", "assumption: L2/SLC hit ~300 cy; override with --l1-miss-latency"),
    ("l1_hit_rate", "assumption: 50% of device loads hit L1; override with --l1-hit-rate"),
    ("threadgroup_latency", "assumption: threadgroup (on-core SRAM) loads ~40 cy; override"),
    ("stack_latency", "assumption: spill loads hit L1 (= l1_hit_latency default)"),
    ("l1_bytes_per_cycle_per_core", "metal-benchmarks README, On-Chip Memory: On-Core Data BW/Cycle 64 B (Apple 7/8)"),
    ("dram_bytes_per_cycle_per_core", "chip DRAM GB/s / (GPU cores x GHz), M1 by default (6.68 B; M1 Pro/Max/Ultra 9.65 B, see DRAM_VARIANTS); the bytes that miss L1 (1 - l1_hit_rate) are charged to it, an assumption"),
];

impl MemParams {
    /// Each parameter's name, value and source, in [`MEM_PARAM_SOURCES`]
    /// order: the one list `--explain-model` prints as text and as JSON.
    pub fn documented(&self) -> Vec<(&'static str, f64, &'static str)> {
        let vals = [
            self.l1_hit_latency,
            self.l1_miss_latency,
            self.l1_hit_rate,
            self.threadgroup_latency,
            self.stack_latency,
            self.l1_bytes_per_cycle_per_core,
            self.dram_bytes_per_cycle_per_core,
        ];
        debug_assert_eq!(vals.len(), MEM_PARAM_SOURCES.len());
        MEM_PARAM_SOURCES
            .iter()
            .zip(vals)
            .map(|(&(name, src), v)| (name, v, src))
            .collect()
    }
}

/// Timing facts for one GPU generation.
#[derive(Clone, Debug, Serialize)]
pub struct GpuTiming {
    /// e.g. `"G13 (M1 family)"`.
    pub name: &'static str,
    pub entries: &'static [CostEntry],
    /// Schedulers per core (each issues one instruction per cycle).
    pub schedulers_per_core: u32,
    /// Threads per SIMD-group.
    pub simd_width: u32,
    /// Extra cycles when an instruction reads a 32-bit register written by the
    /// instruction issued just before it.
    pub raw_penalty_32: f64,
    /// The same for a 16-bit register.
    pub raw_penalty_16: f64,
    /// Cycles one instruction occupies the scheduler's dispatch slot.
    pub issue_cycles: f64,
    /// Dispatch cycles of an IC-pipe instruction (fitted: see
    /// [`GpuTiming::issue_of`] and docs/accuracy.md).
    pub ic_issue_cycles: f64,
    /// Extra IC-pipe cycles per pair of an integer IC instruction and a
    /// transcendental one in the same pass (fitted, see
    /// [`IC_SWITCH_CYCLES`]).
    pub ic_switch_cycles: f64,
    /// IC cycles saved per transcendental instruction on another IC
    /// sub-pipeline ([`transcendental_subpipe`]) than the pass's most used
    /// one (fitted, see [`IC_OVERLAP_CYCLES`]).
    pub ic_overlap_cycles: f64,
    /// Statements about the model that are not table rows.
    pub notes: &'static [(&'static str, &'static str)],
}

const MESA: &str = "Mesa agx_performance.c (G13G op_timings)";

macro_rules! e {
    ($key:expr, $covers:expr, $unit:ident, $lat:expr, $tp:expr, $src:expr) => {
        CostEntry {
            key: $key,
            covers: $covers,
            unit: Unit::$unit,
            latency: $lat,
            throughput: $tp,
            source: $src,
        }
    };
}

/// The G13 (M1-family) table.
pub static G13_ENTRIES: &[CostEntry] = &[
    // --- FP32 / FP16 ---
    e!("fadd32", "fadd32", F32, 2.20, 1.0, "metal-benchmarks FADD32: throughput 1 (M1 Max), adjusted latency 2.20; Mesa fadd {F32,2,1}"),
    e!("fmul32", "fmul32", F32, 2.21, 1.0, "metal-benchmarks FMUL32: throughput 1, latency 2.21; Mesa fmul {F32,2,1}"),
    e!("fma32", "fmadd32", F32, 2.21, 1.0, "metal-benchmarks FFMA32: throughput 1, latency 2.21; Mesa fma {F32,2,1}"),
    e!("fadd16", "fadd16", F16, 2.16, 1.0, "metal-benchmarks FADD16: throughput 1, latency 2.16"),
    e!("fmul16", "fmul16", F16, 2.17, 1.0, "metal-benchmarks FMUL16: throughput 1, latency 2.17"),
    e!("fma16", "fmadd16", F16, 2.18, 1.0, "metal-benchmarks FFMA16: throughput 1, latency 2.18"),
    e!("fcmpsel32", "fcmpsel (32-bit; also FMAX32/FMIN32)", Scib, 4.74, 1.0, "metal-benchmarks FCMPSEL32/FMAX32/FMIN32: throughput 1, latency 4.74; Mesa fcmpsel SCIB"),
    e!("fcmpsel16", "fcmpsel (16-bit)", Scib, 2.17, 1.0, "metal-benchmarks FCMPSEL16: throughput 1, latency 2.17"),
    // --- SCIB integer ---
    e!("mov_imm", "mov_imm", Scib, 1.0, 1.0, "Mesa mov_imm {SCIB,1,1}"),
    e!("get_sr", "get_sr", Scib, 2.0, 2.0, "Mesa get_sr {SCIB,2,2}"),
    e!("iadd32", "iadd/isub (32-bit)", Scib, 2.21, 1.0, "metal-benchmarks IADD32: throughput 1, latency 2.21; Mesa iadd {SCIB,2,1}"),
    e!("iadd16", "iadd/isub (16-bit)", Scib, 2.17, 1.0, "metal-benchmarks IADD16: throughput 1, latency 2.17"),
    e!("iaddsat32", "iadd.sat / isub.sat", Scib, 2.75, 1.02, "metal-benchmarks IADDSAT32: throughput 1.02, latency 2.75"),
    e!("iadd64", "iadd/isub with a 64-bit destination", Scib, 2.21, 1.0, "assumption: one 64-bit iadd issues like IADD32 (metal-benchmarks measures IADD64 only as a 4-instruction sequence)"),
    e!("icmpsel32", "icmpsel (32-bit; also IMAX32/IMIN32)", Scib, 4.74, 1.0, "metal-benchmarks ICMPSEL32/IMAX32/IMIN32: throughput 1, latency 4.74; Mesa icmpsel SCIB"),
    e!("icmpsel16", "icmpsel (16-bit)", Scib, 2.17, 1.0, "metal-benchmarks ICMPSEL16: throughput 1, latency 2.17"),
    e!("bitop", "bitop (mov, and, or, xor, not, ...)", Scib, 2.0, 1.06, "metal-benchmarks BITWISE32: throughput 1.06; latency from Mesa bitop {SCIB,2,1}"),
    // --- IC pipe ---
    e!("imad16", "imadd (16-bit)", Ic, 3.68, 4.0, "metal-benchmarks IMUL16/IMAD16: throughput 4, latency 3.68"),
    e!("imad32", "imadd (32-bit)", Ic, 4.02, 4.0, "metal-benchmarks IMUL32/IMAD32: throughput 4, latency 4.02"),
    e!("imad32x32_64", "imadd with a 64-bit destination (IMUL 32x32=64, IMULHI32)", Ic, 9.84, 8.0, "metal-benchmarks IMUL(32x32=64)/IMULHI32: throughput 8.01, latency 9.84; ALU Layout: 8 cycles"),
    e!("bfi", "bfi (bit insert; LSHIFT32)", Ic, 4.02, 4.0, "metal-benchmarks LSHIFT32: throughput 4.01 (BITINSERT32 <=4.42); latency assumption = BITEXTRACT32 4.02"),
    e!("bfeil_const", "bfeil/extr with a constant offset (BITEXTRACT32)", Ic, 4.02, 4.0, "metal-benchmarks BITEXTRACT32 (constant width): throughput 4.01, latency 4.02"),
    e!("bfeil_dynamic", "bfeil/extr with a register offset (RSHIFT32)", Ic, 4.02, 8.0, "metal-benchmarks: BITEXTRACT32 with a non-constant width throughput 8; RSHIFT32 7.89"),
    e!("shift_hi", "shlhi/shrhi/asr/asrh", Ic, 4.02, 4.0, "assumption: as LSHIFT32 (metal-benchmarks 4.01); Mesa asr {IC,3,2} = 4 IC cycles"),
    e!("bitrev", "bitrev", Ic, 3.62, 4.0, "metal-benchmarks BITREV32: throughput 4.00, latency 3.62"),
    e!("popcount", "popcount", Ic, 3.62, 4.0, "metal-benchmarks POPCOUNT32: throughput 4.00, latency 3.62"),
    e!("ffs", "ffs (find first set)", Ic, 3.62, 4.0, "assumption: as POPCOUNT32; metal-benchmarks CLZ32 sequence 4.05"),
    e!("intl", "intl (interleave)", Ic, 3.62, 4.0, "metal-benchmarks BITINTERLEAVE16: throughput 4; latency assumption = BITREV32"),
    e!("iunop", "iunop (unknown integer unary)", Ic, 4.0, 4.0, "assumption: an IC integer unary like bitrev/popcount"),
    e!("convert", "convert (F<->I)", Ic, 3.66, 4.0, "metal-benchmarks CONVERT(F->I32): throughput 4, latency 3.66"),
    e!("rint", "rint / floor / ceil", Ic, 3.66, 4.0, "metal-benchmarks RINT32: throughput 4, latency 3.66"),
    e!("trunc", "trunc", Ic, 4.0, 4.0, "metal-benchmarks TRUNC32: throughput 4, latency ~4"),
    e!("rcp", "rcp (16/32)", Ic, 6.50, 6.0, "metal-benchmarks RECIP16/RECIP32: throughput 6, latency 6.50"),
    e!("rsqrt16", "rsqrt/rsqrt_special (16-bit)", Ic, 8.61, 8.0, "metal-benchmarks RSQRT16: throughput 8, latency 8.61"),
    e!("rsqrt32", "rsqrt/rsqrt_special (32-bit)", Ic, 8.99, 8.0, "metal-benchmarks RSQRT32: throughput 8, latency 8.99"),
    e!("exp2_32", "exp2 (32-bit)", Ic, 4.31, 4.0, "metal-benchmarks EXP2_32: throughput 4.00, latency 4.31"),
    e!("exp2_16", "exp2 (16-bit)", Ic, 4.62, 4.0, "metal-benchmarks EXP2_16: throughput 4.00, latency 4.62"),
    e!("log2_32", "log2 (32-bit)", Ic, 4.31, 4.0, "metal-benchmarks LOG2_32: throughput 4.00, latency 4.31"),
    e!("log2_16", "log2 (16-bit)", Ic, 4.62, 4.0, "metal-benchmarks LOG2_16: throughput 4.00, latency 4.62"),
    e!("sin_pt_1", "sin_pt_1", Ic, 3.0, 5.0, "metal-benchmarks ALU Layout: SIN_PT_1 + SIN_PT_2 = 10 cycles, split evenly (assumption); latency Mesa sin_pt_1 3"),
    e!("sin_pt_2", "sin_pt_2", Ic, 5.0, 5.0, "metal-benchmarks ALU Layout: SIN_PT_1 + SIN_PT_2 = 10 cycles, split evenly (assumption); latency Mesa sin_pt_2 5"),
    e!("dfdxy", "dfdx/dfdy", Ic, 5.0, 4.0, "assumption: derivatives (graphics only) cost like an IC op"),
    e!("funop", "funop (unknown float unary)", Ic, 4.0, 4.0, "assumption: an IC float unary like exp2/log2"),
    // --- cross-lane (SCIB pipe, as Mesa models them) ---
    e!("simd_ballot", "icmp_ballot/fcmp_ballot", Scib, 4.77, 2.04, "metal-benchmarks ICMP_BALLOT/FCMP_BALLOT: throughput 2.04, latency 4.77; Mesa {SCIB,5,2}"),
    e!("quad_ballot", "icmp_quad_ballot/fcmp_quad_ballot", Scib, 4.0, 2.0, "Mesa icmp_quad_ballot {SCIB,4,2}"),
    e!("simd_shuffle", "simd_shuffle*", Scib, 3.73, 2.04, "metal-benchmarks SHUFFLE_NOROTATE32/ROTATE32/BROADCAST32: throughput 2.04, latency 3.73"),
    e!("quad_shuffle", "quad_shuffle*", Scib, 2.77, 2.01, "metal-benchmarks quad SHUFFLE/BROADCAST32: throughput 2.01, latency 2.77"),
    e!("simd_reduce_f32", "simd_fadd/simd_fmul (32-bit)", Scib, 27.55, 14.54, "metal-benchmarks SIMD SUM<F32> 14.54 / PRODUCT<F32> 14.65, latency 27.55"),
    e!("simd_reduce_f16", "simd_fadd/simd_fmul (16-bit)", Scib, 26.77, 17.10, "metal-benchmarks SIMD SUM<F16> 17.10, latency 26.77"),
    e!("simd_reduce_i32", "simd_iadd (32-bit)", Scib, 32.57, 16.64, "metal-benchmarks SIMD SUM<I32> 16.64, latency 32.57"),
    e!("simd_reduce_i16", "simd_iadd (16-bit)", Scib, 33.88, 17.16, "metal-benchmarks SIMD SUM<I16> 17.16, latency 33.88"),
    e!("simd_reduce_bit", "simd_and/or/xor, simd_min/max", Scib, 27.79, 14.53, "metal-benchmarks SIMD BITWISE_REDUCE32 14.53, latency 27.79; min/max: assumption, same as bitwise"),
    e!("simd_prefix_f", "simd_prefix_fadd/fmul", Scib, 24.26, 12.60, "metal-benchmarks SIMD PREFIX_ISUM<F32>/IPROD<F32>: 12.60, latency 24.26"),
    e!("simd_prefix_i", "simd_prefix_iadd and other simd_prefix_*", Scib, 24.78, 13.01, "metal-benchmarks SIMD PREFIX_ISUM<I32>: 13.01, latency 24.78; bitwise/min/max prefix: assumption, same"),
    e!("quad_reduce_f", "quad_fadd/quad_fmul", Scib, 13.53, 6.02, "metal-benchmarks QUAD SUM<F32>/PRODUCT<F32>: 6.02, latency 13.53"),
    e!("quad_reduce_i", "quad_iadd, quad_and/or/xor, quad_min/max", Scib, 16.20, 6.78, "metal-benchmarks QUAD SUM<I32>/BITWISE_REDUCE32: 6.78, latency 16.20; min/max: assumption, same"),
    e!("quad_prefix_f", "quad_prefix_fadd/fmul", Scib, 9.18, 3.19, "metal-benchmarks QUAD PREFIX_ISUM<F32>: 3.19, latency 9.18"),
    e!("quad_prefix_i", "quad_prefix_iadd", Scib, 8.73, 3.81, "metal-benchmarks QUAD PREFIX_ISUM<I32>: 3.81, latency 8.73"),
    e!("simd_matrix", "simd_matrix_fmadd16/32", Scib, 36.0, 18.0, "metal-benchmarks MATMUL<8x8xF32> ~18 (F16 ~17), latency ~36"),
    e!("simd_generic", "simd_op/simd_shuf_op (undecoded sub-op)", Scib, 27.0, 14.5, "assumption: an unidentified SIMD reduction (metal-benchmarks SUM ~14.5)"),
    // --- memory ---
    e!("device_load", "device_load / async_load", Mem, 0.0, 1.0, "assumption: one dispatch cycle; latency = MemParams device latency, completion at wait"),
    e!("threadgroup_load", "threadgroup_load", Mem, 0.0, 1.0, "assumption: one dispatch cycle; latency = MemParams threadgroup_latency"),
    e!("stack_load", "stack_load (spill fill)", Mem, 0.0, 1.0, "assumption: one dispatch cycle; latency = MemParams stack_latency"),
    e!("store", "device/threadgroup/stack/uniform stores", Mem, 1.0, 1.0, "assumption: one dispatch cycle, fire-and-forget"),
    e!("atomic", "atomic / threadgroup_atomic", Mem, 0.0, 1.0, "assumption: one dispatch cycle; latency = device (or threadgroup) latency"),
    e!("texture", "texture_sample/texture_load/image_write", Mem, 0.0, 1.0, "assumption: one dispatch cycle; latency = device latency"),
    // --- control ---
    e!("wait", "wait (scoreboard)", Ctrl, 0.0, 1.0, "assumption: one dispatch cycle; stalls until its scoreboard slot completes"),
    e!("branch", "jmp_exec_*, call, ret, stop", Ctrl, 1.0, 1.0, "assumption: one dispatch cycle, no pipe"),
    e!("exec", "if/else/while_*cmp, pop_exec, push_exec", Ctrl, 1.0, 1.0, "assumption: one dispatch cycle; Mesa does not model them (cost 0)"),
    e!("barrier", "threadgroup_barrier / memory_barrier", Ctrl, 1.0, 1.0, "assumption: one dispatch cycle; waiting for other SIMD-groups is not modelled"),
    e!("other", "any other form (graphics, TODO.*)", Ctrl, 1.0, 1.0, "assumption: one dispatch cycle, no pipe"),
];

/// The G13 generation.
pub static G13: GpuTiming = GpuTiming {
    name: "G13 (Apple M1 family)",
    entries: G13_ENTRIES,
    schedulers_per_core: 4,
    simd_width: 32,
    raw_penalty_32: 0.84,
    raw_penalty_16: 0.56,
    issue_cycles: 1.0,
    ic_issue_cycles: IC_ISSUE_CYCLES,
    ic_switch_cycles: IC_SWITCH_CYCLES,
    ic_overlap_cycles: IC_OVERLAP_CYCLES,
    notes: &[
        ("schedulers_per_core = 4, one instruction per cycle each", "metal-benchmarks ALU Layout"),
        ("F32, F16 and SCIB share the FP32/integer/conditional pipes: their throughputs add", "metal-benchmarks ALU Layout; Mesa agx_estimate_cycles sums them into f_scib"),
        ("IC runs in parallel with F/SCIB; a loop costs at least max(F+SCIB, IC, dispatch)", "Mesa agx_estimate_cycles (alu = max(ic, f_scib)); metal-benchmarks ALU Layout"),
        ("back-to-back RAW dependency: +0.84 cy (32-bit register), +0.56 cy (16-bit), charged to the consumer's pipe", "metal-benchmarks ALU Bottlenecks (1.84 / 1.56 at 88 simds/core)"),
        ("register cache: no RAW penalty for an fma/fmul whose sources are one register (x*x+1), the one case measured; .cache/.discard hints are reported but not costed", "metal-benchmarks ALU Bottlenecks (x*x+1 reaches ~95% at ILP=1); not costing the hints is an assumption"),
        ("loads are asynchronous; the wait on their scoreboard slot stalls until they complete", "applegpu ISA docs (wait); Mesa scoreboard slots"),
        ("latency hiding: the other SIMD-groups on a scheduler (threads/32/4) issue their own iterations during a stall", "assumption (standard GPU occupancy model); ALU saturation at ~24 simds/core per metal-benchmarks"),
        ("unknown loop trip counts use the `trip_count` parameter (default 16)", "assumption: stated default, override with --trip-count"),
    ],
};

/// Dispatch slots an IC-pipe instruction takes. Not measured directly:
/// fitted by 5-fold cross-validation to metal-benchmarks' mixed-workload
/// rows (`cargo run -p agx-analysis --example accuracy`, docs/accuracy.md
/// reports the held-out error); every single-instruction row is unchanged
/// by it (IC throughputs are all >= 4).
pub const IC_ISSUE_CYCLES: f64 = 2.25;

/// Extra IC cycles per (integer, transcendental) pair of IC-pipe
/// instructions in one pass: metal-benchmarks' mixes of an integer multiply
/// or shift with exp2/rcp/rsqrt cost more than the sum of their
/// throughputs. Fitted like [`IC_ISSUE_CYCLES`] (5-fold CV, docs/accuracy.md).
pub const IC_SWITCH_CYCLES: f64 = 1.5;

/// IC cycles saved per transcendental on another IC sub-pipeline
/// ([`transcendental_subpipe`]) than the pass's most used one
/// (metal-benchmarks: RSQRT32 + RECIP32 10.86 and EXP2_32 + RSQRT32 10.85
/// against throughput sums of 14 and 12). Fitted like [`IC_ISSUE_CYCLES`].
pub const IC_OVERLAP_CYCLES: f64 = 1.0;

/// Whether a cost-table key is a transcendental on the IC pipe (the other
/// IC keys are integer/conversion work).
pub fn is_transcendental(key: &str) -> bool {
    key.starts_with("exp2")
        || key.starts_with("log2")
        || key.starts_with("rsqrt")
        || key.starts_with("sin_pt")
        || key == "rcp"
}

/// The IC sub-pipeline a transcendental key runs on, as metal-benchmarks'
/// ALU Layout lists them ("Integer and complex math pipeline": EXP2, LOG2
/// on one line; RECIP; RSQRT; SIN_PT_1 + SIN_PT_2). Transcendentals on
/// different sub-pipelines overlap ([`IC_OVERLAP_CYCLES`]); two on the same
/// one (e.g. EXP2 and LOG2: metal-benchmarks EXP2_32 + LOG2_32 = 8.00, the
/// sum of their throughputs) do not.
pub fn transcendental_subpipe(key: &str) -> &str {
    if key.starts_with("exp2") || key.starts_with("log2") {
        "exp2/log2"
    } else if key.starts_with("rsqrt") {
        "rsqrt"
    } else if key.starts_with("sin_pt") {
        "sin_pt"
    } else {
        key
    }
}

impl GpuTiming {
    /// Dispatch cycles of an instruction on `unit`.
    pub fn issue_of(&self, unit: Unit) -> f64 {
        if unit == Unit::Ic {
            self.ic_issue_cycles
        } else {
            self.issue_cycles
        }
    }
}

/// The default generation.
pub fn g13() -> &'static GpuTiming {
    &G13
}

/// Which memory latency class a memory instruction uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MemClass {
    Device,
    Threadgroup,
    Stack,
    Store,
}

/// Width of the first register destination (or first register source), if
/// the decoder provided operands.
pub fn dest_width(insn: &Instruction) -> Option<Width> {
    insn.defs()
        .find(|r| r.file == RegFile::Gpr)
        .map(|r| r.width)
        .or_else(|| {
            insn.uses()
                .find(|r| r.file == RegFile::Gpr)
                .map(|r| r.width)
        })
}

fn is16(insn: &Instruction) -> bool {
    dest_width(insn) == Some(Width::W16)
}

/// Whether operand `idx` (printed order) is a register (not an immediate).
fn operand_is_reg(insn: &Instruction, idx: usize) -> Option<bool> {
    insn.operands
        .get(idx)
        .map(|o| matches!(o.kind, OperandKind::Reg(_)))
}

/// Name of an instruction's form.
pub fn form_name(insn: &Instruction) -> &'static str {
    FORMS.get(insn.form as usize).map(|f| f.name).unwrap_or("?")
}

/// The table key for an instruction (generation independent).
pub fn classify(insn: &Instruction) -> &'static str {
    // Most forms map to one key whatever the operands: looked up per form
    // (built once) instead of matching the form name per instruction.
    static CONST: std::sync::OnceLock<[Option<&'static str>; 256]> = std::sync::OnceLock::new();
    let t = CONST.get_or_init(|| {
        let mut t = [None; 256];
        for (i, k) in t.iter_mut().enumerate() {
            *k = constant_key(FORMS.get(i).map(|f| f.name).unwrap_or("?"));
        }
        t
    });
    match t[insn.form as usize] {
        Some(k) => k,
        None => classify_dynamic(form_name(insn), insn),
    }
}

/// The key of form `name` when it does not depend on the operands.
fn constant_key(name: &str) -> Option<&'static str> {
    match name {
        "mov_imm" => Some("mov_imm"),
        "get_sr" => Some("get_sr"),
        "convert" => Some("convert"),
        "bfi" => Some("bfi"),
        "shlhi" | "shrhi" | "asr" | "asrh" => Some("shift_hi"),
        "bitop" => Some("bitop"),
        "bitrev" => Some("bitrev"),
        "popcount" => Some("popcount"),
        "ffs" => Some("ffs"),
        "intl" => Some("intl"),
        "iunop" => Some("iunop"),
        "fmadd32" => Some("fma32"),
        "fmadd16" => Some("fma16"),
        "fadd32" => Some("fadd32"),
        "fadd16" => Some("fadd16"),
        "fmul32" => Some("fmul32"),
        "fmul16" => Some("fmul16"),
        "floor" | "ceil" | "rint" => Some("rint"),
        "trunc" => Some("trunc"),
        "rcp" => Some("rcp"),
        "sin_pt_1" => Some("sin_pt_1"),
        "sin_pt_2" => Some("sin_pt_2"),
        "dfdx" | "dfdy" => Some("dfdxy"),
        "funop" => Some("funop"),
        "icmp_ballot" | "fcmp_ballot" => Some("simd_ballot"),
        "icmp_quad_ballot" | "fcmp_quad_ballot" => Some("quad_ballot"),
        "simd_matrix_fmadd32" | "simd_matrix_fmadd16" => Some("simd_matrix"),
        "simd_op" | "simd_shuf_op" => Some("simd_generic"),
        "device_load" | "device_load.TODO" | "async_load" => Some("device_load"),
        "threadgroup_load" => Some("threadgroup_load"),
        "stack_load" => Some("stack_load"),
        "device_store"
        | "device_store.TODO"
        | "threadgroup_store"
        | "stack_store"
        | "uniform_store"
        | "async_store"
        | "tex_state_store"
        | "sampler_state_store" => Some("store"),
        "atomic" | "threadgroup_atomic" => Some("atomic"),
        "texture_sample" | "texture_load" | "image_write" | "image_write_block" => Some("texture"),
        "wait" => Some("wait"),
        "threadgroup_barrier" | "memory_barrier" => Some("barrier"),
        "jmp_exec_any"
        | "jmp_exec_none"
        | "jmp_incomplete"
        | "call"
        | "ret"
        | "stop"
        | "trap"
        | "jmp_if_skipping_doorbell" => Some("branch"),
        "pop_exec" | "if_icmp" | "if_fcmp" | "while_icmp" | "while_fcmp" | "else_icmp"
        | "else_fcmp" | "TODO.pop_exec2" => Some("exec"),
        _ => None,
    }
}

/// The key of the forms whose key depends on the mnemonic or operands.
fn classify_dynamic(name: &str, insn: &Instruction) -> &'static str {
    let sat = insn.mnemonic.ends_with(".sat");
    match name {
        "iadd" => {
            if sat {
                "iaddsat32"
            } else {
                match dest_width(insn) {
                    Some(Width::W16) => "iadd16",
                    Some(Width::W64) => "iadd64",
                    _ => "iadd32",
                }
            }
        }
        "imadd" => match insn.defs().next().map(|r| r.width) {
            Some(Width::W16) => "imad16",
            Some(Width::W64) => "imad32x32_64",
            _ => "imad32",
        },
        "bfeil" | "extr" => {
            // Operands: D, A, B, shift/offset, mask. A register shift
            // (operand 3) is a dynamic shift (RSHIFT32), twice the cost.
            let dynamic = operand_is_reg(insn, 3) == Some(true);
            if dynamic {
                "bfeil_dynamic"
            } else {
                "bfeil_const"
            }
        }
        "rsqrt" | "rsqrt_special" => {
            if is16(insn) {
                "rsqrt16"
            } else {
                "rsqrt32"
            }
        }
        "log2" => {
            if is16(insn) {
                "log2_16"
            } else {
                "log2_32"
            }
        }
        "exp2" => {
            if is16(insn) {
                "exp2_16"
            } else {
                "exp2_32"
            }
        }
        "icmpsel" => {
            if is16(insn) {
                "icmpsel16"
            } else {
                "icmpsel32"
            }
        }
        "fcmpsel" => {
            if is16(insn) {
                "fcmpsel16"
            } else {
                "fcmpsel32"
            }
        }
        _ => classify_crosslane(name, insn).unwrap_or("other"),
    }
}

fn classify_crosslane(name: &str, insn: &Instruction) -> Option<&'static str> {
    if let Some(rest) = name.strip_prefix("simd_") {
        if rest.starts_with("shuffle") {
            return Some("simd_shuffle");
        }
        if let Some(op) = rest.strip_prefix("prefix_") {
            return Some(if op.starts_with('f') {
                "simd_prefix_f"
            } else {
                "simd_prefix_i"
            });
        }
        let w16 = is16(insn);
        return Some(match rest {
            "fadd" | "fmul" => {
                if w16 {
                    "simd_reduce_f16"
                } else {
                    "simd_reduce_f32"
                }
            }
            "iadd" => {
                if w16 {
                    "simd_reduce_i16"
                } else {
                    "simd_reduce_i32"
                }
            }
            _ => "simd_reduce_bit",
        });
    }
    if let Some(rest) = name.strip_prefix("quad_") {
        if rest.starts_with("shuffle") {
            return Some("quad_shuffle");
        }
        if let Some(op) = rest.strip_prefix("prefix_") {
            return Some(if op.starts_with('f') {
                "quad_prefix_f"
            } else {
                "quad_prefix_i"
            });
        }
        return Some(match rest {
            "fadd" | "fmul" => "quad_reduce_f",
            _ => "quad_reduce_i",
        });
    }
    None
}

/// Memory class of a memory instruction (by form), if any.
pub fn mem_class(insn: &Instruction) -> Option<MemClass> {
    // Derived from the ISA's one memory classification.
    use agx_isa::{MemDir, MemSpace};
    let m = insn.mem_access()?;
    Some(match (m.dir, m.space) {
        (MemDir::Store, _) => MemClass::Store,
        (_, MemSpace::Device | MemSpace::Texture) => MemClass::Device,
        (_, MemSpace::Threadgroup) => MemClass::Threadgroup,
        (_, MemSpace::Stack) => MemClass::Stack,
        _ => return None,
    })
}

impl GpuTiming {
    /// The entry for `key` (falls back to the `"other"` row).
    pub fn entry(&self, key: &str) -> &'static CostEntry {
        // Keys normally come from `classify`, i.e. the same string literals
        // as the table rows: try pointer identity first (no string compares;
        // identical pointer and length imply identical text).
        let same = |e: &&CostEntry| e.key.as_ptr() == key.as_ptr() && e.key.len() == key.len();
        self.entries
            .iter()
            .find(same)
            .or_else(|| self.entries.iter().find(|e| e.key == key))
            .or_else(|| self.entries.iter().find(|e| e.key == "other"))
            .expect("table has an 'other' row")
    }

    /// The cost entry for an instruction.
    pub fn cost(&self, insn: &Instruction) -> &CostEntry {
        self.entry(classify(insn))
    }

    /// Every entry, every assumption and every parameter default, as text
    /// (for `--explain-model`).
    pub fn explain_model(&self) -> String {
        let mut s = String::new();
        s.push_str(&format!("Timing model for {}\n\n", self.name));
        s.push_str("Cost table (throughput = scheduler cycles on the unit's pipe per SIMD-group instruction; latency = cycles until the result is usable)\n\n");
        s.push_str(&format!(
            "{:<18} {:<5} {:>7} {:>6}  {:<48} source\n",
            "key", "unit", "latency", "tp", "covers"
        ));
        for e in self.entries {
            s.push_str(&format!(
                "{:<18} {:<5} {:>7.2} {:>6.2}  {:<48} {}\n",
                e.key,
                e.unit.name(),
                e.latency,
                e.throughput,
                e.covers,
                e.source
            ));
        }
        s.push_str("\nModel rules\n\n");
        s.push_str(&format!(
            "- RAW back-to-back penalty: +{} cy (32-bit), +{} cy (16-bit)\n",
            self.raw_penalty_32, self.raw_penalty_16
        ));
        for (what, src) in self.notes {
            s.push_str(&format!("- {what} [{src}]\n"));
        }
        s.push_str(&format!(
            "- an IC-pipe instruction takes {} dispatch cycles; each (integer, transcendental) pair of IC instructions in a pass adds {} IC cycles; each transcendental on another IC sub-pipeline (exp2/log2, rcp, rsqrt, sin_pt) than the pass's most used one saves {} IC cycles [fitted by 5-fold cross-validation to metal-benchmarks' mixed workloads, docs/accuracy.md]\n",
            self.ic_issue_cycles, self.ic_switch_cycles, self.ic_overlap_cycles
        ));
        s.push_str("- a region costs the maximum of its bounds: f32, f16, scib, fscib, ic, dispatch, memory_bandwidth, device_bandwidth, memory_latency, dependency_chain (docs/timing-model.md); the part above the largest throughput bound is the exposed stall\n");
        s.push_str("\nDRAM bandwidth per chip\n\n");
        for v in DRAM_VARIANTS {
            s.push_str(&format!(
                "- {}: {} GB/s, {} cores at {} GHz = {:.2} B/cycle/core [{}]\n",
                v.chip,
                v.gb_per_s,
                v.cores,
                v.ghz,
                v.bytes_per_cycle_per_core(),
                v.source
            ));
        }
        s.push_str("\nMemory parameters (defaults, overridable)\n\n");
        for (name, v, src) in MemParams::default().documented() {
            s.push_str(&format!("- {name} = {v} [{src}]\n"));
        }
        s.push_str("\nAssumptions (rows no source measures)\n\n");
        for e in self.entries.iter().filter(|e| e.is_assumption()) {
            s.push_str(&format!("- {}: {}\n", e.key, e.source));
        }
        s.push_str(&format!("\nMesa-compatible estimate: {MESA}, agx_estimate_cycles (ic += 2*tp for IC ops, fscib += tp for F32/F16/SCIB ops, alu = max); see timing::mesa.\n"));
        s
    }
}
