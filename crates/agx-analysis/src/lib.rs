//! `agx-analysis`: structure and cost of AGX machine code.
//!
//! Pipeline: decoded instructions → [`cfg`] (basic blocks, edges, exec-mask
//! nesting) → [`loops`] (dominators, natural loops, irreducible regions) →
//! [`liveness`] (half-register dataflow) → [`occupancy`] (registers allocated,
//! threads per core) → [`timing`] (cost tables, Mesa-compatible estimate,
//! steady-state loop model, suggestions).

pub mod cfg;
pub mod liveness;
pub mod loops;
pub mod occupancy;
pub mod timing;
