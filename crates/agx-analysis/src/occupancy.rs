//! Registers allocated, occupancy, and stack (spill) use.
//!
//! Facts (`shared/reference/timing.md`, "Occupancy and registers", from
//! Mesa; `shared/corpus/mesa/README.md`, stats meaning):
//! * The hardware allocates by the highest register used, not by peak
//!   liveness. Mesa's `regs` stat is the highest 16-bit half-register index
//!   used by main; the driver programs `regs + 1` half-registers.
//! * Occupancy table (max half-registers → threads per core), ascending;
//!   the first row with `halfregs <= max` applies, and Mesa's `threads`
//!   applies it to `regs` (the highest index).
//! * `spills`/`fills` count `stack_store`/`stack_load`; the entry
//!   `stack_adjust` (printed by applegpu as `stack_store i8, 1, 2, 0, <size>,
//!   0`) is not counted.

use agx_isa::{Instruction, RegFile};
use serde::Serialize;

/// (max half-registers, threads per core), from `timing.md`.
pub const OCCUPANCY_TABLE: [(u32, u32); 10] = [
    (104, 1024),
    (112, 896),
    (128, 832),
    (136, 768),
    (144, 704),
    (160, 640),
    (184, 576),
    (208, 512),
    (232, 448),
    (256, 384),
];

/// Threads per core and percent of 1024 for `half_regs`, using the first
/// row with `half_regs <= max` (Mesa's shader-db `threads` applies it to
/// `regs`, the highest half-register index). Beyond the table: (0, 0.0).
pub fn occupancy_for_regs(half_regs: u32) -> (u32, f64) {
    occupancy_in(&OCCUPANCY_TABLE, half_regs)
}

/// [`occupancy_for_regs`] with another generation's table
/// ([`crate::gpu::GpuModel::occupancy`]).
pub fn occupancy_in(table: &[(u32, u32)], half_regs: u32) -> (u32, f64) {
    for &(max, threads) in table {
        if half_regs <= max {
            return (threads, threads as f64 * 100.0 / 1024.0);
        }
    }
    (0, 0.0)
}

/// Register-file use of the code.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RegisterUse {
    /// Highest GPR half-register index touched (def or use; a vector
    /// counts the aligned group it reserves,
    /// [`agx_isa::Reg::allocated_half_range`]), Mesa's `regs`.
    /// `None` when no GPR is touched.
    pub highest_half_index: Option<u32>,
    /// Half-registers the hardware allocates: highest index + 1.
    pub allocated_half: u32,
    /// Highest uniform half index touched + 1.
    pub uniform_half: u32,
}

/// Scans every register operand (printed and implicit).
pub fn register_use(insns: &[Instruction]) -> RegisterUse {
    let mut hi: Option<u32> = None;
    let mut uhi: Option<u32> = None;
    for i in insns {
        for o in i.all_operands() {
            let Some(r) = o.as_reg() else { continue };
            // GPR vectors: the aligned group an allocator reserves
            let last = r.allocated_half_range().end.saturating_sub(1);
            let slot = match r.file {
                RegFile::Gpr => &mut hi,
                RegFile::Uniform => &mut uhi,
            };
            *slot = Some(slot.map_or(last, |h| h.max(last)));
        }
    }
    RegisterUse {
        highest_half_index: hi,
        allocated_half: hi.map_or(0, |h| h + 1),
        uniform_half: uhi.map_or(0, |h| h + 1),
    }
}

/// A stack-adjust instruction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StackAdjust {
    /// Index of the instruction in the input.
    #[serde(skip)]
    pub index: usize,
    pub addr: u32,
    /// Signed amount as encoded (Mesa: dwords of scratch; equals
    /// `layout.json` `scratch_size_dwords`).
    pub amount: i32,
}

/// Stack use.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StackUse {
    /// `stack_store` instructions, stack adjusts excluded.
    pub spills: u32,
    /// `stack_load` instructions.
    pub fills: u32,
    /// Every stack-adjust instruction, in order.
    pub adjusts: Vec<StackAdjust>,
    /// Scratch reserved by the entry's adjust: the first positive adjust
    /// (Mesa puts it at offset 0; Apple after a few setup instructions).
    /// [`crate::analyze`] narrows this to main's own adjust when helpers are
    /// included.
    pub scratch_reserved: Option<i32>,
}

pub fn stack_use(insns: &[Instruction]) -> StackUse {
    crate::facts::scan(insns).stack
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_mesa_readme_checks() {
        // shared/corpus/mesa/README.md: regs 103→1024, 127→832, 135→768,
        // 159→640, 167→576, 207→512, 239→384.
        for (regs, threads) in [
            (103, 1024),
            (127, 832),
            (135, 768),
            (159, 640),
            (167, 576),
            (207, 512),
            (239, 384),
            (104, 1024),
            (105, 896),
            (0, 1024),
            (256, 384),
            (257, 0),
        ] {
            assert_eq!(occupancy_for_regs(regs).0, threads, "regs {regs}");
        }
        assert_eq!(occupancy_for_regs(103).1, 100.0);
        assert_eq!(occupancy_for_regs(239).1, 37.5);
    }
}
