//! Timing: cost tables per GPU generation ([`table`]), the Mesa-compatible
//! estimate ([`mesa`]), our steady-state model ([`model`]) and the
//! suggestions engine ([`suggest`]). See docs/timing-model.md.

pub mod cache;
pub mod mesa;
pub mod table;

pub use mesa::{mesa_estimate, MesaEstimate};
pub use table::{
    dram_variant, CostEntry, CostKey, DramVariant, GpuTiming, MemParams, Unit, DRAM_VARIANTS,
    IC_ISSUE_CYCLES, IC_OVERLAP_CYCLES, IC_SWITCH_CYCLES,
};
pub mod model;
pub mod sync;

pub use model::{
    analyze_kernel, analyze_kernel_with_nest, analyze_with_access, analyze_with_analysis,
    analyze_with_analysis_on, analyze_with_nest, body_timing, bound_label, BlockCycles,
    BottleneckDetail, Bound, BreakdownPart, InsnDetail, KernelTiming, LoopTiming, ModelParams,
    PartKind, Paths, RawDep, Region, RegionTiming, UnitCycles, BOUND_NAMES, DEFAULT_TRIP_COUNT,
};
pub mod build;
pub mod suggest;

pub use suggest::{suggest, Severity, Suggestion};
