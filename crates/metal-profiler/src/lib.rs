//! metal-profiler: the pipeline behind the `metal-profile` CLI and the
//! `metal_profiler` Python module.
//!
//! `container` (archive → code) → `isa` (bytes → instructions) → `analysis`
//! (CFG, loops, liveness, occupancy, timing) → `report` (text, JSON). This
//! crate only wires the stages together and turns their errors into one-line
//! messages with exit codes; the CLI front end is [`cli`] + [`app`], with
//! the many-kernel subcommands in [`batch`] and [`diff`].

pub mod app;
pub mod batch;
pub mod cli;
pub mod diff;
pub mod pipeline;
pub mod untimed;

pub use pipeline::Error;
