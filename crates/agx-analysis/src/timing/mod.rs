//! Timing: cost tables per GPU generation ([`table`]), the Mesa-compatible
//! estimate ([`mesa`]), our steady-state model ([`model`]) and the
//! suggestions engine ([`suggest`]). See docs/timing-model.md.

pub mod mesa;
pub mod table;

pub use mesa::{mesa_estimate, MesaEstimate};
pub use table::{g13, CostEntry, GpuTiming, MemParams, Unit, G13};
pub mod model;

pub use model::{
    analyze_kernel, analyze_kernel_with_loops, analyze_with_analysis, body_timing, find_loops,
    BreakdownPart, InsnDetail, KernelTiming, LoopSpan, LoopTiming, ModelParams, PartKind, Paths,
    RawDep, RegionTiming, UnitCycles, DEFAULT_TRIP_COUNT,
};
pub mod build;
pub mod suggest;

pub use suggest::{suggest, Severity, Suggestion};
