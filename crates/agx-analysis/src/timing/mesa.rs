//! Mesa-compatible estimate: Mesa 24.3's `agx_estimate_cycles`
//! (`src/asahi/compiler/agx_performance.c`) reproduced on machine code.
//!
//! Mesa sums, over every instruction of main (no loop weighting), `2 * tp`
//! into `ic` for IC-unit opcodes and `tp` into `fscib` for F32/F16/SCIB
//! opcodes; `alu = max(ic, fscib)`. Opcodes missing from its table cost 0.
//!
//! Each machine form is mapped back to the Mesa opcode it is emitted from
//! (learned from the corpus' `ir.txt`, which maps 1:1 onto machine code):
//! * every `bitop` truth table (`mov`, `and`, `or`, `xor`, `not`, `bitop`) is
//!   Mesa `bitop`; `isub` is Mesa `iadd`; `imadd` is `imad`;
//! * of the rounding forms only `floor` is in Mesa's table (`ceil`, `trunc`,
//!   `roundeven` are separate opcodes with no entry, cost 0);
//! * `rsqrt_special` is `srsqrt`;
//! * of the shuffles only the plain `simd_shuffle`/`quad_shuffle` are Mesa
//!   `shuffle`/`quad_shuffle`; `_xor/_up/_down` variants have no entry;
//! * 16- and 32-bit `fadd/fmul/fma` are the same Mesa opcodes in 24.3;
//! * `bfeil`, `convert`, `bitrev`, `popcount`, `ffs`, `intl`, memory and
//!   control flow have no entry.

use super::table::form_name;
use agx_isa::Instruction;
use serde::Serialize;

/// Mesa's `struct agx_cycle_estimate`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MesaEstimate {
    pub alu: u32,
    pub fscib: u32,
    pub ic: u32,
}

/// Mesa's unit classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MesaUnit {
    /// Not modelled (cost 0).
    None,
    /// F32, F16 or SCIB: adds `tp` to `fscib`.
    Fscib,
    /// IC: adds `2 * tp` to `ic`.
    Ic,
}

/// Mesa's (unit, latency, tp) for the opcode a machine instruction came from.
pub fn mesa_timing(insn: &Instruction) -> (MesaUnit, u32, u32) {
    use MesaUnit::*;
    let name = form_name(insn);
    match name {
        "fmadd32" | "fmadd16" | "fadd32" | "fadd16" | "fmul32" | "fmul16" => (Fscib, 2, 1),
        "mov_imm" => (Fscib, 1, 1),
        "bitop" | "icmpsel" | "fcmpsel" | "iadd" => (Fscib, 2, 1),
        "get_sr" => (Fscib, 2, 2),
        "imadd" | "bfi" | "extr" | "asr" | "floor" | "sin_pt_1" => (Ic, 3, 2),
        "sin_pt_2" | "log2" | "exp2" => (Ic, 5, 2),
        "rcp" => (Ic, 5, 3),
        "rsqrt" | "rsqrt_special" => (Ic, 6, 4),
        "simd_shuffle" | "quad_shuffle" => (Fscib, 5, 2),
        "icmp_ballot" | "fcmp_ballot" => (Fscib, 5, 2),
        "icmp_quad_ballot" | "fcmp_quad_ballot" => (Fscib, 4, 2),
        "simd_op" | "simd_shuf_op" => subgroup_by_bits(insn.raw),
        _ => {
            if name.starts_with("simd_shuffle") || name.starts_with("quad_shuffle") {
                (None, 0, 0)
            } else if name.starts_with("simd_prefix_") || name.starts_with("quad_prefix_") {
                (Fscib, 18, 18)
            } else if (name.starts_with("simd_") || name.starts_with("quad_"))
                && !name.starts_with("simd_matrix")
            {
                (Fscib, 24, 24)
            } else {
                (None, 0, 0)
            }
        }
    }
}

/// Mesa's subgroup encodings (agx_opcodes.py): low byte 0x6F; with the
/// length bit (15) set, bits 29-30 select quad_reduce/simd_reduce/
/// quad_prefix/simd_prefix; without it, a shuffle whose bits 38-39 select
/// plain/xor/up/down.
fn subgroup_by_bits(raw: u128) -> (MesaUnit, u32, u32) {
    if raw & 0xFF != 0x6F {
        return (MesaUnit::None, 0, 0);
    }
    if (raw >> 15) & 1 == 1 {
        match (raw >> 29) & 3 {
            0 | 1 => (MesaUnit::Fscib, 24, 24),
            _ => (MesaUnit::Fscib, 18, 18),
        }
    } else if (raw >> 38) & 3 == 0 {
        (MesaUnit::Fscib, 5, 2)
    } else {
        (MesaUnit::None, 0, 0)
    }
}

/// Mesa's `agx_estimate_cycles` over the machine instructions of main.
pub fn mesa_estimate<'a, I>(insns: I) -> MesaEstimate
where
    I: IntoIterator<Item = &'a Instruction>,
{
    let mut est = MesaEstimate::default();
    for insn in insns {
        match mesa_timing(insn) {
            (MesaUnit::Ic, _, tp) => est.ic += 2 * tp,
            (MesaUnit::Fscib, _, tp) => est.fscib += tp,
            (MesaUnit::None, _, _) => {}
        }
    }
    est.alu = est.ic.max(est.fscib);
    est
}
