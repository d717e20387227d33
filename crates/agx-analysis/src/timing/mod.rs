//! Timing: cost tables per GPU generation ([`table`]), the Mesa-compatible
//! estimate ([`mesa`]), our steady-state model ([`model`]) and the
//! suggestions engine ([`suggest`]). See docs/timing-model.md.

pub mod mesa;
pub mod table;

pub use mesa::{mesa_estimate, MesaEstimate};
pub use table::{g13, CostEntry, GpuTiming, MemParams, Unit, G13};
