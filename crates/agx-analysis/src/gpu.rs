//! The GPU seam: one [`GpuModel`] per GPU generation — its instruction set,
//! timing table, occupancy rule, chips (memory parameters) and display name —
//! chosen once by the front end ([`model_for_slice`], [`GpuModel::chip`])
//! and passed down in [`crate::timing::ModelParams`]. Nothing below the
//! front end names a generation: the timing model, the program analysis and
//! the report read the model they are given.
//!
//! Adding a generation is adding data: a form table for its ISA (generated
//! by tools/gen_forms.py), a timing table (`timing::table`, one row per
//! `CostKey`, checked when it compiles), an occupancy table and its chips,
//! and one [`GPU_MODELS`] entry. See docs/architecture.md.

use crate::occupancy::OCCUPANCY_TABLE;
use crate::timing::table::{DramVariant, GpuTiming, MemParams, DRAM_VARIANTS, G13};

/// One GPU generation as the profiler models it.
#[derive(Debug)]
pub struct GpuModel {
    /// Display name, e.g. `"G13 (Apple M1 family)"` (the timing model the
    /// report names).
    pub name: &'static str,
    /// Short name, e.g. `"G13"`.
    pub short: &'static str,
    /// The chip family the timing table was measured on (JSON
    /// `model.measured_on`).
    pub measured_on: &'static str,
    /// GPU generations (the `NN` of a slice's `GNNx` name) whose code this
    /// model times with its own measurements.
    pub generations: &'static [u8],
    /// The instruction-set family whose code this model times (one value
    /// per family, agx_isa::isa: which GPUs it covers, register file,
    /// decoder entry points).
    pub isa: &'static agx_isa::isa::Isa,
    /// The cost table and pipe structure.
    pub timing: &'static GpuTiming,
    /// Occupancy rule: (max half-registers, threads per core), ascending;
    /// the first row with `half_regs <= max` applies.
    pub occupancy: &'static [(u32, u32)],
    /// Chips of the generation and their memory parameters; the first is the
    /// default.
    pub chips: &'static [DramVariant],
}

/// Every modelled generation; the first is the default (used for code of a
/// generation no entry measures, with the report's timing note saying so).
pub static GPU_MODELS: &[GpuModel] = &[GpuModel {
    name: G13.name,
    short: "G13",
    // every cost-table figure is an M1 (G13) measurement (docs/timing-model.md)
    measured_on: "M1",
    generations: &[13],
    isa: &agx_isa::isa::G13,
    timing: &G13,
    occupancy: &OCCUPANCY_TABLE,
    chips: DRAM_VARIANTS,
}];

/// The default model (the first of [`GPU_MODELS`]).
pub fn default_model() -> &'static GpuModel {
    &GPU_MODELS[0]
}

/// The model for code of the slice GPU `gpu` (an architecture name such as
/// `G13G` or `applegpu_g14g`): the entry measuring its generation, else the
/// default.
pub fn model_for_slice(gpu: Option<&str>) -> &'static GpuModel {
    let generation = gpu.and_then(|g| {
        let g = g.trim();
        let g = g
            .get(..9)
            .filter(|p| p.eq_ignore_ascii_case("applegpu_"))
            .map_or(g, |_| &g[9..]);
        let digits: String = g
            .strip_prefix(['G', 'g'])?
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        digits.parse::<u8>().ok()
    });
    generation
        .and_then(|n| GPU_MODELS.iter().find(|m| m.generations.contains(&n)))
        .unwrap_or_else(default_model)
}

impl GpuModel {
    /// The chip called `name` (case-, space- and dash-insensitive: `m1-max`,
    /// `M1 Max`), if the generation has it.
    pub fn chip(&self, name: &str) -> Option<&'static DramVariant> {
        crate::timing::table::chip_named(self.chips, name)
    }

    /// The default chip (the first).
    pub fn default_chip(&self) -> &'static DramVariant {
        &self.chips[0]
    }

    /// The memory parameters' defaults on `chip`.
    pub fn mem_params(&self, chip: &DramVariant) -> MemParams {
        MemParams {
            dram_bytes_per_cycle_per_core: chip.bytes_per_cycle_per_core(),
            ..MemParams::default()
        }
    }

    /// Threads per core and percent of 1024 for `half_regs` allocated
    /// half-registers (the first row with `half_regs <= max`); beyond the
    /// table: (0, 0.0).
    pub fn occupancy_for_regs(&self, half_regs: u32) -> (u32, f64) {
        crate::occupancy::occupancy_in(self.occupancy, half_regs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_choose_their_model() {
        assert_eq!(model_for_slice(Some("G13G")).short, "G13");
        assert_eq!(model_for_slice(Some("applegpu_g13s")).short, "G13");
        // G14 code: no G14 measurements, the default (G13) model
        assert_eq!(model_for_slice(Some("G14G")).short, "G13");
        assert_eq!(model_for_slice(None).short, "G13");
        let m = default_model();
        assert_eq!(m.chip("m1-max").unwrap().chip, "M1 Max");
        assert_eq!(m.default_chip().chip, "M1");
        assert!(m.chip("M7").is_none());
        assert_eq!(m.mem_params(m.default_chip()), MemParams::default());
    }
}
