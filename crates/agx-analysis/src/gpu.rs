//! The GPU seam: one [`GpuModel`] per GPU generation the tool decodes —
//! which GPUs' code it is, its instruction set (and through it the register
//! file), how its code reaches the analysis (its [`Adapter`]), its
//! scoreboard, and, where measurements exist, its timing table, occupancy
//! rule and chips (memory parameters) — chosen once by the front end
//! ([`model_for_gpu`] for a named GPU, [`model_for_slice`] for the timed
//! pipeline, [`GpuModel::chip`]) and passed down in
//! [`crate::timing::ModelParams`]. Nothing below the front end names a
//! generation: the timing model, the program analysis, the untimed
//! analysis and the report read the model they are given.
//!
//! Adding a generation is adding data: one [`GPU_MODELS`] entry (with, for
//! a timed one, a timing table in `timing::table`, one row per `CostKey`,
//! checked when it compiles, an occupancy table and its chips). See
//! docs/architecture.md, "Adding a GPU family".

use crate::occupancy::OCCUPANCY_TABLE;
use crate::timing::table::{DramVariant, GpuTiming, MemParams, DRAM_VARIANTS, G13};
use agx_container::GpuRow;
use agx_isa::isa;

/// How a family's code reaches the analysis passes (the per-family
/// adapter, chosen through the model: no front end or pass matches on a
/// family).
#[derive(Clone, Copy)]
pub enum Adapter {
    /// The code decodes to typed instructions ([`agx_isa::Instruction`],
    /// `agx_isa::stream`) that [`crate::facts::scan`] turns into the
    /// analysis facts, and that the timing model reads (the timed
    /// pipeline).
    Instructions,
    /// The family's walk fills the analysis facts and the untimed
    /// profile's per-instruction facts directly (`code`, its address).
    Walk(fn(&[u8], u32) -> crate::untimed::Decoded),
}

impl std::fmt::Debug for Adapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Adapter::Instructions => "Instructions",
            Adapter::Walk(_) => "Walk",
        })
    }
}

/// What a `wait` waits for: the rule of a generation's scoreboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitRule {
    /// A load, atomic or `wait` names one slot in its slot field (the form
    /// table's `slot` column): a `wait` completes the loads of its slot and
    /// those without one; a `wait` without a slot completes every load.
    OneSlot,
    /// Waits are carried in the instructions' own bits as a mask of slots
    /// (a `wait N` operand; a load's output wait group `g`): a wait
    /// completes the loads of the slots its mask names.
    Mask,
}

/// A generation's scoreboard: the slots loads complete through and the
/// rule a `wait` follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scoreboard {
    /// Slots, where a source states the number.
    pub slots: Option<u32>,
    pub rule: WaitRule,
}

impl Scoreboard {
    /// Whether a `wait` with slot field `wait` (its slot under
    /// [`WaitRule::OneSlot`], its mask under [`WaitRule::Mask`]; `None`:
    /// none encoded) completes a load whose slot is `load`.
    pub fn waits_for(&self, wait: Option<u32>, load: Option<u32>) -> bool {
        match (self.rule, wait, load) {
            (_, None, _) | (_, _, None) => true,
            (WaitRule::OneSlot, Some(w), Some(l)) => w == l,
            (WaitRule::Mask, Some(m), Some(l)) => l < 32 && m >> l & 1 == 1,
        }
    }
}

/// One GPU generation as the profiler models it.
#[derive(Debug)]
pub struct GpuModel {
    /// Display name, e.g. `"G13 (Apple M1 family)"` (the timing model the
    /// report names).
    pub name: &'static str,
    /// Short name, e.g. `"G13"`.
    pub short: &'static str,
    /// Mac GPU generations (the `NN` of a slice's `GNNx` name) whose code
    /// is profiled with this model.
    pub generations: &'static [u8],
    /// Phone/tablet parts (by name, e.g. `G17P`) whose code is profiled
    /// with this model (checked to be its family's code).
    pub phone_parts: &'static [&'static str],
    /// The instruction-set family of its code (agx_isa::isa: decoder
    /// entry points, register file).
    pub isa: &'static isa::Isa,
    /// How its code reaches the analysis.
    pub adapter: Adapter,
    /// The scoreboard: its slots and the rule of a `wait`.
    pub scoreboard: Scoreboard,
    /// The cost table and pipes; `None`: no cycle measurements exist, the
    /// code is profiled untimed (counts and structure).
    pub timing: Option<&'static GpuTiming>,
    /// Occupancy rule: (max half-registers, threads per core), ascending;
    /// the first row with `half_regs <= max` applies. `None`: not known.
    pub occupancy: Option<&'static [(u32, u32)]>,
    /// Chips of the generation and their memory parameters; the first is the
    /// default (none for an untimed model).
    pub chips: &'static [DramVariant],
    /// How its threadgroup memory is banked ([`crate::banks`]); `None`:
    /// not known (bank-conflict ways are null).
    pub threadgroup_banks: Option<crate::banks::BankModel>,
}

/// Apple9 code: six scoreboard slots, waits carried as masks in the
/// instructions' bits (apple9-isa.md: TK, Mesa).
const APPLE9_SCOREBOARD: Scoreboard = Scoreboard {
    slots: Some(6),
    rule: WaitRule::Mask,
};

/// An Apple9 generation: no timing table (no cycle measurements exist for
/// M3 or later: apple9-isa.md "Timing"), no occupancy rule known.
const fn apple9(
    name: &'static str,
    short: &'static str,
    generations: &'static [u8],
    phone_parts: &'static [&'static str],
) -> GpuModel {
    GpuModel {
        name,
        short,
        generations,
        phone_parts,
        isa: &isa::APPLE9,
        adapter: Adapter::Walk(crate::apple9_adapter::decode),
        scoreboard: APPLE9_SCOREBOARD,
        timing: None,
        occupancy: None,
        chips: &[],
        // no source for any Apple GPU's banking (banks.rs): the same
        // labelled assumption as G13's
        threadgroup_banks: Some(crate::banks::CONVENTIONAL_32X4),
    }
}

/// Every generation whose code the tool decodes; the first is the default
/// (used by the timed pipeline for code of a generation no timed entry
/// covers, with the report's timing note saying so).
pub static GPU_MODELS: &[GpuModel] = &[
    GpuModel {
        name: G13.name,
        short: "G13",
        // G14 (M2) runs the same code (Mesa compiles both with one
        // backend): timed with the G13 table, its timing note says so
        generations: &[13, 14],
        phone_parts: &[],
        isa: &isa::G13,
        adapter: Adapter::Instructions,
        // the slot field of loads and `wait` (applegpu); no source here
        // states the number of slots
        scoreboard: Scoreboard {
            slots: None,
            rule: WaitRule::OneSlot,
        },
        timing: Some(&G13),
        occupancy: Some(&OCCUPANCY_TABLE),
        chips: DRAM_VARIANTS,
        threadgroup_banks: Some(crate::banks::CONVENTIONAL_32X4),
    },
    // M3 (G15), M4 (G16), A18 Pro (G17P): one framing (apple9-isa.md)
    apple9("G15 (Apple M3 family)", "G15", &[15], &[]),
    apple9("G16 (Apple M4 family)", "G16", &[16], &[]),
    apple9("G17P (Apple A18 Pro)", "G17P", &[], &["G17P"]),
];

/// The default model (the first of [`GPU_MODELS`]; timed).
pub fn default_model() -> &'static GpuModel {
    &GPU_MODELS[0]
}

/// The model of a GPU's code: Mac `generation`, or the phone part `name`
/// when `phone`; `None` when no model decodes it.
pub fn model_for_gpu(generation: u8, name: &str, phone: bool) -> Option<&'static GpuModel> {
    GPU_MODELS.iter().find(|m| {
        if phone {
            m.phone_parts.iter().any(|p| p.eq_ignore_ascii_case(name))
        } else {
            m.generations.contains(&generation)
        }
    })
}

/// Mac generations whose code has a timing model (the profile pipeline),
/// in model order.
pub fn timed_generations() -> Vec<u8> {
    GPU_MODELS
        .iter()
        .filter(|m| m.timed())
        .flat_map(|m| m.generations.iter().copied())
        .collect()
}

/// The model of the code of `gpu` (a row of agx-container's GPU table), if
/// one decodes it.
pub fn model_of(gpu: &GpuRow) -> Option<&'static GpuModel> {
    model_for_gpu(gpu.generation, gpu.name, gpu.is_phone())
}

/// Whether the profile pipeline decodes code for `gpu`: a timed model
/// covers it (G13/G14 Macs today). The predicate the front ends give
/// agx-container (`ReadOptions::decodes`): which slices are read by
/// default, which `choose_slice` picks from and what its messages name.
pub fn decodes(gpu: &GpuRow) -> bool {
    model_of(gpu).is_some_and(|m| m.timed())
}

/// Why `gpu`'s code is refused when it is known to be an encoding no
/// decoder here reads (M5), one line: an instruction-set fact
/// ([`isa::REFUSED`]).
pub fn refusal(gpu: &GpuRow) -> Option<&'static str> {
    isa::refusal(gpu.generation, gpu.is_phone())
}

/// The timed model for code of the slice GPU `gpu` (an architecture name
/// such as `G13G` or `applegpu_g14g`): the timed entry covering its
/// generation, else the default.
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
        .and_then(|n| {
            GPU_MODELS
                .iter()
                .find(|m| m.timed() && m.generations.contains(&n))
        })
        .unwrap_or_else(default_model)
}

impl GpuModel {
    /// The timing table. Only a model with one (`timing: Some`) is given to
    /// the timing model: the front end profiles the others' code untimed,
    /// and [`model_for_slice`] returns timed models only (the default
    /// model's table keeps this total).
    pub fn table(&self) -> &'static GpuTiming {
        self.timing.unwrap_or(&G13)
    }

    /// Whether a timing table exists for its code (else it is profiled
    /// untimed: counts and structure, no cycle figure).
    pub fn timed(&self) -> bool {
        self.timing.is_some()
    }

    /// 32-bit general registers per thread (its family's register file).
    pub fn gprs(&self) -> u32 {
        self.isa.gprs
    }

    /// Half-registers of the register file a thread can be given (256 on
    /// G13: the occupancy table's last row, checked by a test).
    pub fn file_half(&self) -> u32 {
        2 * self.isa.gprs
    }

    /// The chip called `name` (case-, space- and dash-insensitive: `m1-max`,
    /// `M1 Max`), if the generation has it.
    pub fn chip(&self, name: &str) -> Option<&'static DramVariant> {
        crate::timing::table::chip_named(self.chips, name)
    }

    /// The default chip (the first; a model without chips is untimed and
    /// never asks, the default model's keeps this total).
    pub fn default_chip(&self) -> &'static DramVariant {
        self.chips.first().unwrap_or(&DRAM_VARIANTS[0])
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
    /// table, or without an occupancy rule: (0, 0.0).
    pub fn occupancy_for_regs(&self, half_regs: u32) -> (u32, f64) {
        crate::occupancy::occupancy_in(self.occupancy.unwrap_or(&[]), half_regs)
    }

    /// What the report says of timing code of a GPU of `generation`, whose
    /// own model is `own` (`None`: no model decodes it), with this model:
    /// nothing when the table was measured on that generation; that the
    /// table was measured on another GPU running the same code; or that
    /// the code is not this model's, so the figures do not apply.
    pub fn timing_note(&self, generation: u8, own: Option<&GpuModel>) -> Option<String> {
        let t = self.table();
        let same = own.is_some_and(|m| std::ptr::eq(m, self));
        if same && t.measured_generations.contains(&generation) {
            None
        } else if same {
            Some(format!(
                "timed with the {} table measured on {}: this GPU runs the same instruction set, its own timings were not measured",
                self.short, t.measured_on
            ))
        } else {
            Some(format!(
                "timed with the {} table measured on {}; this GPU's code is not {} code, so the figures do not apply",
                self.short, t.measured_on, self.short
            ))
        }
    }

    /// The analysis facts of `code` at `addr` through the family's walk;
    /// `None` for a family whose code decodes to typed instructions (the
    /// timed pipeline decodes and scans those itself).
    pub fn walk(&self, code: &[u8], addr: u32) -> Option<crate::untimed::Decoded> {
        match self.adapter {
            Adapter::Walk(f) => Some(f(code, addr)),
            Adapter::Instructions => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_choose_their_model() {
        assert_eq!(model_for_slice(Some("G13G")).short, "G13");
        assert_eq!(model_for_slice(Some("applegpu_g13s")).short, "G13");
        // G14 code: the G13 model (its table)
        assert_eq!(model_for_slice(Some("G14G")).short, "G13");
        assert_eq!(model_for_slice(None).short, "G13");
        // the timed pipeline never gets an untimed model
        assert_eq!(model_for_slice(Some("G16G")).short, "G13");
        let m = default_model();
        assert!(m.timed());
        assert_eq!(m.chip("m1-max").unwrap().chip, "M1 Max");
        assert_eq!(m.default_chip().chip, "M1");
        assert!(m.chip("M7").is_none());
        assert_eq!(m.mem_params(m.default_chip()), MemParams::default());
    }

    #[test]
    fn gpus_choose_their_model() {
        let short = |g, n, p| model_for_gpu(g, n, p).map(|m| m.short);
        assert_eq!(short(13, "G13G", false), Some("G13"));
        assert_eq!(short(14, "G14S", false), Some("G13"));
        assert_eq!(short(15, "G15G", false), Some("G15"));
        assert_eq!(short(16, "G16G", false), Some("G16"));
        assert_eq!(short(17, "G17P", true), Some("G17P"));
        assert_eq!(short(17, "G17G", false), None);
        assert_eq!(short(13, "G13P", true), None);
        assert_eq!(timed_generations(), [13, 14]);
        // agx-container's rows: the models of its GPUs, the ones decoded
        // (timed), the refused (M5 Macs)
        let row = |n| agx_container::gpu_row(n).unwrap();
        assert_eq!(model_of(row("g14s")).map(|m| m.short), Some("G13"));
        assert_eq!(model_of(row("g17p")).map(|m| m.short), Some("G17P"));
        assert!(model_of(row("g13p")).is_none() && model_of(row("g17g")).is_none());
        assert_eq!(
            agx_container::decodable_names(decodes),
            ["G13G", "G13S", "G13C", "G13D", "G14G", "G14S", "G14D"]
        );
        assert_eq!(
            agx_container::Supported::of(decodes).0,
            timed_generations(),
            "what decodes is what is timed"
        );
        assert!(refusal(row("g17s")).unwrap().contains("M5"));
        assert!(refusal(row("g17p")).is_none() && refusal(row("g16g")).is_none());
        // each generation and part has one model
        for (i, a) in GPU_MODELS.iter().enumerate() {
            for b in &GPU_MODELS[i + 1..] {
                assert!(a.generations.iter().all(|g| !b.generations.contains(g)));
                assert!(a.phone_parts.iter().all(|p| !b.phone_parts.contains(p)));
            }
        }
    }

    #[test]
    fn register_file_is_the_occupancy_tables_last_row() {
        for m in GPU_MODELS {
            if let Some(t) = m.occupancy {
                assert_eq!(t.last().unwrap().0, m.file_half(), "{}", m.short);
            }
            // a timed model has all its timed data
            assert_eq!(m.timing.is_some(), !m.chips.is_empty(), "{}", m.short);
            assert_eq!(m.timing.is_some(), m.occupancy.is_some(), "{}", m.short);
            assert_eq!(m.timed(), matches!(m.adapter, Adapter::Instructions));
        }
        assert_eq!(default_model().file_half(), 256);
        assert_eq!(model_for_gpu(16, "G16G", false).unwrap().gprs(), 96);
    }

    #[test]
    fn timing_notes_say_what_was_measured() {
        let g13 = default_model();
        let own = |g, n| model_for_gpu(g, n, false);
        assert_eq!(g13.timing_note(13, own(13, "G13G")), None);
        let g14 = g13.timing_note(14, own(14, "G14G")).unwrap();
        assert!(g14.contains("same instruction set"), "{g14}");
        let g16 = g13.timing_note(16, own(16, "G16G")).unwrap();
        assert!(g16.contains("not G13 code"), "{g16}");
        assert_eq!(g13.timing_note(0, None).unwrap(), g16);
    }

    #[test]
    fn wait_rules() {
        let one = default_model().scoreboard;
        assert!(one.waits_for(Some(1), Some(1)) && !one.waits_for(Some(1), Some(0)));
        assert!(one.waits_for(None, Some(0)) && one.waits_for(Some(0), None));
        let mask = APPLE9_SCOREBOARD;
        assert!(mask.waits_for(Some(0b110), Some(2)) && !mask.waits_for(Some(0b110), Some(0)));
    }
}
