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

pub use agx_isa::CostKey;
use agx_isa::Instruction;
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
    /// How many units there are.
    pub const COUNT: usize = 6;

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
}

/// One ALU pipe of a generation, in the order the pipe-cycle views print
/// them (the kernel's `cycles`, a loop's pipes).
#[derive(Clone, Copy, Debug)]
pub struct Pipe {
    pub unit: Unit,
    /// Whether it shares the FP32/integer/conditional pipes: the busiest
    /// ALU pipe bound adds these and compares the sum with the others.
    pub fscib: bool,
}

impl Pipe {
    /// Its name as the views print it (`F32`, `SCIB`).
    pub fn name(&self) -> &'static str {
        self.unit.name()
    }
}

/// Which units share the FP32/integer/conditional pipes, by `Unit as
/// usize` (evaluated when a table compiles, from its pipes).
pub const fn fscib_units(pipes: &[Pipe]) -> [bool; Unit::COUNT] {
    let mut out = [false; Unit::COUNT];
    let mut i = 0;
    while i < pipes.len() {
        if pipes[i].fscib {
            out[pipes[i].unit as usize] = true;
        }
        i += 1;
    }
    out
}

/// G13's ALU pipes: F32, F16 and SCIB share one pipe, IC is its own
/// (docs/timing-model.md; Mesa `agx_performance.c`: the F+SCIB and IC
/// units).
pub const G13_PIPES: &[Pipe] = &[
    Pipe {
        unit: Unit::F32,
        fscib: true,
    },
    Pipe {
        unit: Unit::F16,
        fscib: true,
    },
    Pipe {
        unit: Unit::Scib,
        fscib: true,
    },
    Pipe {
        unit: Unit::Ic,
        fscib: false,
    },
];

fn key_name<S: serde::Serializer>(k: &CostKey, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(k.name())
}

/// One row of a cost table.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct CostEntry {
    /// The row's key (spelled e.g. `"fadd32"`, `"imad32x32_64"`).
    #[serde(serialize_with = "key_name")]
    pub key: CostKey,
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
    /// Explicit override (`--l1-hit-rate`, 0..=1): the fraction of the
    /// first touches the cache model ([`super::cache`]) charges to DRAM that
    /// still hit a cache. None (the default): the cache model alone.
    pub l1_hit_rate: Option<f64>,
    /// Threadgroup-memory load latency, cycles.
    pub threadgroup_latency: f64,
    /// Stack (spill) load latency, cycles: spills live in L1-resident scratch.
    pub stack_latency: f64,
    /// L1 data bandwidth per GPU core, bytes/cycle (loads+stores).
    pub l1_bytes_per_cycle_per_core: f64,
    /// Device-memory (DRAM) bandwidth per GPU core and GPU cycle: the chip's
    /// bandwidth shared by its cores ([`DRAM_VARIANTS`]; default M1).
    pub dram_bytes_per_cycle_per_core: f64,
    /// Device-memory cache line, bytes: what a SIMD-group request is
    /// charged per line it touches (issue 27).
    pub cache_line_bytes: f64,
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
    chip_named(DRAM_VARIANTS, name)
}

/// The variant of `chips` whose `chip` is `name`, compared on letters and
/// digits only, case-insensitive (`m1-max`, `M1 Max`).
pub fn chip_named(chips: &'static [DramVariant], name: &str) -> Option<&'static DramVariant> {
    let norm = |s: &str| {
        s.chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase()
    };
    let n = norm(name);
    chips.iter().find(|v| norm(v.chip) == n)
}

impl Default for MemParams {
    fn default() -> Self {
        MemParams {
            l1_hit_latency: 100.0,
            l1_miss_latency: 300.0,
            l1_hit_rate: None,
            threadgroup_latency: 40.0,
            stack_latency: 100.0,
            l1_bytes_per_cycle_per_core: 64.0,
            dram_bytes_per_cycle_per_core: DRAM_VARIANTS[0].bytes_per_cycle_per_core(),
            cache_line_bytes: 128.0,
        }
    }
}

impl MemParams {
    /// Expected device-load latency: the `l1_hit_rate` override, else
    /// [`LATENCY_HIT_RATE`] (the cache model gives bytes, not the latency
    /// of each load).
    pub fn device_latency(&self) -> f64 {
        let h = self.l1_hit_rate.unwrap_or(LATENCY_HIT_RATE).clamp(0.0, 1.0);
        h * self.l1_hit_latency + (1.0 - h) * self.l1_miss_latency
    }
}

/// The share of device loads whose latency is the L1-hit latency when no
/// `--l1-hit-rate` is given: an assumption (the latency mix only; the
/// bandwidth bounds use the cache model's bytes).
pub const LATENCY_HIT_RATE: f64 = 0.5;

/// Where the memory defaults come from (printed by `explain_model`).
pub const MEM_PARAM_SOURCES: &[(&str, &str)] = &[
    ("l1_hit_latency", "assumption: no public G13 L1 latency measurement in our sources; order of GPU L1 hit latencies (~100 cy), override with --l1-hit-latency"),
    ("l1_miss_latency", "assumption: L2/SLC hit ~300 cy; override with --l1-miss-latency"),
    ("l1_hit_rate", "not set by default: the cache model (timing/cache.rs, docs/analysis.md Cache model) charges each device/texture access its first touches (access.dram_bytes: lines shared with the threadgroup's SIMD-groups, with resident threadgroups along x, and with earlier iterations charged once while the reuse window fits the 8 KB L1); --l1-hit-rate H sets the share of those first touches that still hit a cache (DRAM gets 1 - H of them); the load-latency mix assumes 0.5 (an assumption) unless it is given"),
    ("threadgroup_latency", "assumption: threadgroup (on-core SRAM) loads ~40 cy; a threadgroup_barrier exposes one such round trip (the barrier bound, timing/sync.rs); override"),
    ("stack_latency", "assumption: spill loads hit L1 (= l1_hit_latency default)"),
    ("l1_bytes_per_cycle_per_core", "metal-benchmarks README, On-Chip Memory: On-Core Data BW/Cycle 64 B (Apple 7/8)"),
    ("dram_bytes_per_cycle_per_core", "chip DRAM GB/s / (GPU cores x GHz), M1 by default (6.68 B; M1 Pro/Max/Ultra 9.65 B, see DRAM_VARIANTS); the cache model's first touches (access.dram_bytes) are charged to it"),
    ("cache_line_bytes", "metal-benchmarks README (philipturner/metal-benchmarks @ dc2adc6), On-Chip Memory: Global Cache Line 128 B (Apple 7, 8)"),
];

impl MemParams {
    /// Each parameter's name, value and source, in [`MEM_PARAM_SOURCES`]
    /// order: the one list `--explain-model` prints as text and as JSON.
    pub fn documented(&self) -> Vec<(&'static str, f64, &'static str)> {
        let vals = [
            self.l1_hit_latency,
            self.l1_miss_latency,
            self.l1_hit_rate.unwrap_or(LATENCY_HIT_RATE),
            self.threadgroup_latency,
            self.stack_latency,
            self.l1_bytes_per_cycle_per_core,
            self.dram_bytes_per_cycle_per_core,
            self.cache_line_bytes,
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
    /// The chip family the table was measured on (JSON `model.measured_on`).
    #[serde(skip)]
    pub measured_on: &'static str,
    /// The generations it was measured on (code of the model's other
    /// generations is timed with it, and the report's timing note says so).
    #[serde(skip)]
    pub measured_generations: &'static [u8],
    /// The rows, in the order `--explain-model` prints them: exactly one
    /// per [`CostKey`] ([`index_rows`] checks it when the table compiles).
    pub entries: &'static [CostEntry],
    /// Row of each key in `entries`, by `CostKey as usize` ([`index_rows`]).
    #[serde(skip)]
    pub index: [u8; CostKey::COUNT],
    /// Its ALU pipes, in the order the views print them.
    #[serde(skip)]
    pub pipes: &'static [Pipe],
    /// [`fscib_units`] of `pipes`.
    #[serde(skip)]
    pub fscib: [bool; Unit::COUNT],
    /// Schedulers per core (each issues one instruction per cycle).
    pub schedulers_per_core: u32,
    /// L1 data cache per core, bytes: the window in which the SIMD-groups
    /// of a threadgroup that read the same lines share one DRAM fetch
    /// (the timing model's cache model).
    #[serde(skip)]
    pub l1_data_bytes_per_core: u32,
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
    /// sub-pipeline ([`agx_isa::CostKey::transcendental`]) than the pass's most used
    /// one (fitted, see [`IC_OVERLAP_CYCLES`]).
    pub ic_overlap_cycles: f64,
    /// Statements about the model that are not table rows.
    pub notes: &'static [(&'static str, &'static str)],
}

const MESA: &str = "Mesa agx_performance.c (G13G op_timings)";

macro_rules! e {
    ($key:ident, $covers:expr, $unit:ident, $lat:expr, $tp:expr, $src:expr) => {
        CostEntry {
            key: CostKey::$key,
            covers: $covers,
            unit: Unit::$unit,
            latency: $lat,
            throughput: $tp,
            source: $src,
        }
    };
}

/// The row of each [`CostKey`] in `entries`. Evaluated when the table is
/// compiled: a key without a row, or with two, is a compile error (a
/// generation's table must price every key; there is no fallback row).
pub const fn index_rows(entries: &[CostEntry]) -> [u8; CostKey::COUNT] {
    const NONE: u8 = u8::MAX;
    assert!(entries.len() < NONE as usize, "too many cost rows");
    let mut index = [NONE; CostKey::COUNT];
    let mut i = 0;
    while i < entries.len() {
        let k = entries[i].key as usize;
        assert!(index[k] == NONE, "a cost key has two rows");
        index[k] = i as u8;
        i += 1;
    }
    let mut k = 0;
    while k < CostKey::COUNT {
        assert!(
            index[k] != NONE,
            "a cost key has no row in the timing table"
        );
        k += 1;
    }
    index
}

/// The G13 (M1-family) table.
pub const G13_ENTRIES: &[CostEntry] = &[
    // --- FP32 / FP16 ---
    e!(Fadd32, "fadd32", F32, 2.20, 1.0, "metal-benchmarks FADD32: throughput 1 (M1 Max), adjusted latency 2.20; Mesa fadd {F32,2,1}"),
    e!(Fmul32, "fmul32", F32, 2.21, 1.0, "metal-benchmarks FMUL32: throughput 1, latency 2.21; Mesa fmul {F32,2,1}"),
    e!(Fma32, "fmadd32", F32, 2.21, 1.0, "metal-benchmarks FFMA32: throughput 1, latency 2.21; Mesa fma {F32,2,1}"),
    e!(Fadd16, "fadd16", F16, 2.16, 1.0, "metal-benchmarks FADD16: throughput 1, latency 2.16"),
    e!(Fmul16, "fmul16", F16, 2.17, 1.0, "metal-benchmarks FMUL16: throughput 1, latency 2.17"),
    e!(Fma16, "fmadd16", F16, 2.18, 1.0, "metal-benchmarks FFMA16: throughput 1, latency 2.18"),
    e!(Fcmpsel32, "fcmpsel (32-bit; also FMAX32/FMIN32)", Scib, 4.74, 1.0, "metal-benchmarks FCMPSEL32/FMAX32/FMIN32: throughput 1, latency 4.74; Mesa fcmpsel SCIB"),
    e!(Fcmpsel16, "fcmpsel (16-bit)", Scib, 2.17, 1.0, "metal-benchmarks FCMPSEL16: throughput 1, latency 2.17"),
    // --- SCIB integer ---
    e!(MovImm, "mov_imm", Scib, 1.0, 1.0, "Mesa mov_imm {SCIB,1,1}"),
    e!(GetSr, "get_sr", Scib, 2.0, 2.0, "Mesa get_sr {SCIB,2,2}"),
    e!(Iadd32, "iadd/isub (32-bit)", Scib, 2.21, 1.0, "metal-benchmarks IADD32: throughput 1, latency 2.21; Mesa iadd {SCIB,2,1}"),
    e!(Iadd16, "iadd/isub (16-bit)", Scib, 2.17, 1.0, "metal-benchmarks IADD16: throughput 1, latency 2.17"),
    e!(IaddSat32, "iadd.sat / isub.sat", Scib, 2.75, 1.02, "metal-benchmarks IADDSAT32: throughput 1.02, latency 2.75"),
    e!(Iadd64, "iadd/isub with a 64-bit destination", Scib, 2.21, 1.0, "assumption: one 64-bit iadd issues like IADD32 (metal-benchmarks measures IADD64 only as a 4-instruction sequence)"),
    e!(Icmpsel32, "icmpsel (32-bit; also IMAX32/IMIN32)", Scib, 4.74, 1.0, "metal-benchmarks ICMPSEL32/IMAX32/IMIN32: throughput 1, latency 4.74; Mesa icmpsel SCIB"),
    e!(Icmpsel16, "icmpsel (16-bit)", Scib, 2.17, 1.0, "metal-benchmarks ICMPSEL16: throughput 1, latency 2.17"),
    e!(Bitop, "bitop (mov, and, or, xor, not, ...)", Scib, 2.0, 1.06, "metal-benchmarks BITWISE32: throughput 1.06; latency from Mesa bitop {SCIB,2,1}"),
    // --- IC pipe ---
    e!(Imad16, "imadd (16-bit)", Ic, 3.68, 4.0, "metal-benchmarks IMUL16/IMAD16: throughput 4, latency 3.68"),
    e!(Imad32, "imadd (32-bit)", Ic, 4.02, 4.0, "metal-benchmarks IMUL32/IMAD32: throughput 4, latency 4.02"),
    e!(Imad32x32_64, "imadd with a 64-bit destination (IMUL 32x32=64, IMULHI32)", Ic, 9.84, 8.0, "metal-benchmarks IMUL(32x32=64)/IMULHI32: throughput 8.01, latency 9.84; ALU Layout: 8 cycles"),
    e!(Bfi, "bfi (bit insert; LSHIFT32)", Ic, 4.02, 4.0, "metal-benchmarks LSHIFT32: throughput 4.01 (BITINSERT32 <=4.42); latency assumption = BITEXTRACT32 4.02"),
    e!(BfeilConst, "bfeil/extr with a constant offset (BITEXTRACT32)", Ic, 4.02, 4.0, "metal-benchmarks BITEXTRACT32 (constant width): throughput 4.01, latency 4.02"),
    e!(BfeilDynamic, "bfeil/extr with a register offset (RSHIFT32)", Ic, 4.02, 8.0, "metal-benchmarks: BITEXTRACT32 with a non-constant width throughput 8; RSHIFT32 7.89"),
    e!(ShiftHi, "shlhi/shrhi/asr/asrh", Ic, 4.02, 4.0, "assumption: as LSHIFT32 (metal-benchmarks 4.01); Mesa asr {IC,3,2} = 4 IC cycles"),
    e!(Bitrev, "bitrev", Ic, 3.62, 4.0, "metal-benchmarks BITREV32: throughput 4.00, latency 3.62"),
    e!(Popcount, "popcount", Ic, 3.62, 4.0, "metal-benchmarks POPCOUNT32: throughput 4.00, latency 3.62"),
    e!(Ffs, "ffs (find first set)", Ic, 3.62, 4.0, "assumption: as POPCOUNT32; metal-benchmarks CLZ32 sequence 4.05"),
    e!(Intl, "intl (interleave)", Ic, 3.62, 4.0, "metal-benchmarks BITINTERLEAVE16: throughput 4; latency assumption = BITREV32"),
    e!(Iunop, "iunop (unknown integer unary)", Ic, 4.0, 4.0, "assumption: an IC integer unary like bitrev/popcount"),
    e!(Convert, "convert (F<->I)", Ic, 3.66, 4.0, "metal-benchmarks CONVERT(F->I32): throughput 4, latency 3.66"),
    e!(Rint, "rint / floor / ceil", Ic, 3.66, 4.0, "metal-benchmarks RINT32: throughput 4, latency 3.66"),
    e!(Trunc, "trunc", Ic, 4.0, 4.0, "metal-benchmarks TRUNC32: throughput 4, latency ~4"),
    e!(Rcp, "rcp (16/32)", Ic, 6.50, 6.0, "metal-benchmarks RECIP16/RECIP32: throughput 6, latency 6.50"),
    e!(Rsqrt16, "rsqrt/rsqrt_special (16-bit)", Ic, 8.61, 8.0, "metal-benchmarks RSQRT16: throughput 8, latency 8.61"),
    e!(Rsqrt32, "rsqrt/rsqrt_special (32-bit)", Ic, 8.99, 8.0, "metal-benchmarks RSQRT32: throughput 8, latency 8.99"),
    e!(Exp2_32, "exp2 (32-bit)", Ic, 4.31, 4.0, "metal-benchmarks EXP2_32: throughput 4.00, latency 4.31"),
    e!(Exp2_16, "exp2 (16-bit)", Ic, 4.62, 4.0, "metal-benchmarks EXP2_16: throughput 4.00, latency 4.62"),
    e!(Log2_32, "log2 (32-bit)", Ic, 4.31, 4.0, "metal-benchmarks LOG2_32: throughput 4.00, latency 4.31"),
    e!(Log2_16, "log2 (16-bit)", Ic, 4.62, 4.0, "metal-benchmarks LOG2_16: throughput 4.00, latency 4.62"),
    e!(SinPt1, "sin_pt_1", Ic, 3.0, 5.0, "metal-benchmarks ALU Layout: SIN_PT_1 + SIN_PT_2 = 10 cycles, split evenly (assumption); latency Mesa sin_pt_1 3"),
    e!(SinPt2, "sin_pt_2", Ic, 5.0, 5.0, "metal-benchmarks ALU Layout: SIN_PT_1 + SIN_PT_2 = 10 cycles, split evenly (assumption); latency Mesa sin_pt_2 5"),
    e!(Dfdxy, "dfdx/dfdy", Ic, 5.0, 4.0, "assumption: derivatives (graphics only) cost like an IC op"),
    e!(Funop, "funop (unknown float unary)", Ic, 4.0, 4.0, "assumption: an IC float unary like exp2/log2"),
    // --- cross-lane (SCIB pipe, as Mesa models them) ---
    e!(SimdBallot, "icmp_ballot/fcmp_ballot", Scib, 4.77, 2.04, "metal-benchmarks ICMP_BALLOT/FCMP_BALLOT: throughput 2.04, latency 4.77; Mesa {SCIB,5,2}"),
    e!(QuadBallot, "icmp_quad_ballot/fcmp_quad_ballot", Scib, 4.0, 2.0, "Mesa icmp_quad_ballot {SCIB,4,2}"),
    e!(SimdShuffle, "simd_shuffle*", Scib, 3.73, 2.04, "metal-benchmarks SHUFFLE_NOROTATE32/ROTATE32/BROADCAST32: throughput 2.04, latency 3.73"),
    e!(QuadShuffle, "quad_shuffle*", Scib, 2.77, 2.01, "metal-benchmarks quad SHUFFLE/BROADCAST32: throughput 2.01, latency 2.77"),
    e!(SimdReduceF32, "simd_fadd/simd_fmul (32-bit)", Scib, 27.55, 14.54, "metal-benchmarks SIMD SUM<F32> 14.54 / PRODUCT<F32> 14.65, latency 27.55"),
    e!(SimdReduceF16, "simd_fadd/simd_fmul (16-bit)", Scib, 26.77, 17.10, "metal-benchmarks SIMD SUM<F16> 17.10, latency 26.77"),
    e!(SimdReduceI32, "simd_iadd (32-bit)", Scib, 32.57, 16.64, "metal-benchmarks SIMD SUM<I32> 16.64, latency 32.57"),
    e!(SimdReduceI16, "simd_iadd (16-bit)", Scib, 33.88, 17.16, "metal-benchmarks SIMD SUM<I16> 17.16, latency 33.88"),
    e!(SimdReduceBit, "simd_and/or/xor, simd_min/max", Scib, 27.79, 14.53, "metal-benchmarks SIMD BITWISE_REDUCE32 14.53, latency 27.79; min/max: assumption, same as bitwise"),
    e!(SimdPrefixF, "simd_prefix_fadd/fmul", Scib, 24.26, 12.60, "metal-benchmarks SIMD PREFIX_ISUM<F32>/IPROD<F32>: 12.60, latency 24.26"),
    e!(SimdPrefixI, "simd_prefix_iadd and other simd_prefix_*", Scib, 24.78, 13.01, "metal-benchmarks SIMD PREFIX_ISUM<I32>: 13.01, latency 24.78; bitwise/min/max prefix: assumption, same"),
    e!(QuadReduceF, "quad_fadd/quad_fmul", Scib, 13.53, 6.02, "metal-benchmarks QUAD SUM<F32>/PRODUCT<F32>: 6.02, latency 13.53"),
    e!(QuadReduceI, "quad_iadd, quad_and/or/xor, quad_min/max", Scib, 16.20, 6.78, "metal-benchmarks QUAD SUM<I32>/BITWISE_REDUCE32: 6.78, latency 16.20; min/max: assumption, same"),
    e!(QuadPrefixF, "quad_prefix_fadd/fmul", Scib, 9.18, 3.19, "metal-benchmarks QUAD PREFIX_ISUM<F32>: 3.19, latency 9.18"),
    e!(QuadPrefixI, "quad_prefix_iadd", Scib, 8.73, 3.81, "metal-benchmarks QUAD PREFIX_ISUM<I32>: 3.81, latency 8.73"),
    e!(SimdMatrix, "simd_matrix_fmadd16/32", Scib, 36.0, 18.0, "metal-benchmarks MATMUL<8x8xF32> ~18 (F16 ~17), latency ~36"),
    e!(SimdGeneric, "simd_op/simd_shuf_op (undecoded sub-op)", Scib, 27.0, 14.5, "assumption: an unidentified SIMD reduction (metal-benchmarks SUM ~14.5)"),
    // --- memory ---
    e!(DeviceLoad, "device_load / async_load", Mem, 0.0, 1.0, "assumption: one dispatch cycle; latency = MemParams device latency, completion at wait"),
    e!(ThreadgroupLoad, "threadgroup_load", Mem, 0.0, 1.0, "assumption: one dispatch cycle; latency = MemParams threadgroup_latency"),
    e!(StackLoad, "stack_load (spill fill)", Mem, 0.0, 1.0, "assumption: one dispatch cycle; latency = MemParams stack_latency"),
    e!(Store, "device/threadgroup/stack/uniform stores", Mem, 1.0, 1.0, "assumption: one dispatch cycle, fire-and-forget"),
    e!(Atomic, "atomic / threadgroup_atomic", Mem, 0.0, 1.0, "assumption: one dispatch cycle; latency = device (or threadgroup) latency"),
    e!(Texture, "texture_sample/texture_load/image_write", Mem, 0.0, 1.0, "assumption: one dispatch cycle; latency = device latency"),
    // --- control ---
    e!(Wait, "wait (scoreboard)", Ctrl, 0.0, 1.0, "assumption: one dispatch cycle; stalls until its scoreboard slot completes"),
    e!(Branch, "jmp_exec_*, call, ret, stop", Ctrl, 1.0, 1.0, "assumption: one dispatch cycle, no pipe"),
    e!(Exec, "if/else/while_*cmp, pop_exec, push_exec", Ctrl, 1.0, 1.0, "assumption: one dispatch cycle; Mesa does not model them (cost 0)"),
    e!(Barrier, "threadgroup_barrier / memory_barrier", Ctrl, 1.0, 1.0, "assumption: one dispatch cycle; the wait for the threadgroup is the region's barrier bound (timing/sync.rs)"),
    e!(Other, "any other form (graphics, TODO.*)", Ctrl, 1.0, 1.0, "assumption: one dispatch cycle, no pipe"),
];

/// The G13 generation.
pub static G13: GpuTiming = GpuTiming {
    name: "G13 (Apple M1 family)",
    // every cost-table figure is an M1 (G13) measurement (docs/timing-model.md)
    measured_on: "M1",
    measured_generations: &[13],
    entries: G13_ENTRIES,
    index: index_rows(G13_ENTRIES),
    pipes: G13_PIPES,
    fscib: fscib_units(G13_PIPES),
    schedulers_per_core: 4,
    // metal-benchmarks README (philipturner/metal-benchmarks), On-Chip
    // Memory: ~8 KB L1 data cache per core on Apple 7 (M1); the low end of
    // its ~8-12 KB range is taken (a working set said to fit fits on every
    // part)
    l1_data_bytes_per_core: 8 * 1024,
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
/// ([`agx_isa::CostKey::transcendental`]) than the pass's most used one
/// (metal-benchmarks: RSQRT32 + RECIP32 10.86 and EXP2_32 + RSQRT32 10.85
/// against throughput sums of 14 and 12). Fitted like [`IC_ISSUE_CYCLES`].
pub const IC_OVERLAP_CYCLES: f64 = 1.0;

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
    /// Whether `unit` shares the FP32/integer/conditional pipes.
    #[inline]
    pub fn shares_fscib(&self, unit: Unit) -> bool {
        self.fscib[unit as usize]
    }

    /// The busiest-ALU-pipe bound in words: `max(F32+F16+SCIB, IC)` (the
    /// pipes sharing the FP/SCIB pipes added, then the others).
    pub fn alu_bound_label(&self) -> String {
        let names = |f: bool| -> Vec<&str> {
            self.pipes
                .iter()
                .filter(|p| p.fscib == f)
                .map(Pipe::name)
                .collect()
        };
        let mut parts = vec![names(true).join("+")];
        parts.extend(names(false).into_iter().map(String::from));
        format!("max({})", parts.join(", "))
    }

    /// The row of `key` (every key has one: [`index_rows`]).
    pub fn entry(&self, key: CostKey) -> &'static CostEntry {
        &self.entries[self.index[key as usize] as usize]
    }

    /// The cost entry for an instruction.
    pub fn cost(&self, insn: &Instruction) -> &'static CostEntry {
        self.entry(insn.cost_key())
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
                e.key.name(),
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
            s.push_str(&format!("- {}: {}\n", e.key.name(), e.source));
        }
        s.push_str(&format!("\nMesa-compatible estimate: {MESA}, agx_estimate_cycles (ic += 2*tp for IC ops, fscib += tp for F32/F16/SCIB ops, alu = max); see timing::mesa.\n"));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pipes_say_the_fp_scib_bound() {
        assert_eq!(G13.alu_bound_label(), "max(F32+F16+SCIB, IC)");
        let names: Vec<&str> = G13.pipes.iter().map(Pipe::name).collect();
        assert_eq!(names, ["F32", "F16", "SCIB", "IC"]);
        for u in [Unit::F32, Unit::F16, Unit::Scib] {
            assert!(G13.shares_fscib(u), "{u:?}");
        }
        for u in [Unit::Ic, Unit::Mem, Unit::Ctrl] {
            assert!(!G13.shares_fscib(u), "{u:?}");
        }
    }
}
