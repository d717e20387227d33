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

/// Mesa's (unit, latency, tp) for the opcode a machine instruction came from,
/// keyed by the instruction's form (applegpu's first match, the generated
/// `forms::idx` constants).
pub fn mesa_timing(insn: &Instruction) -> (MesaUnit, u32, u32) {
    use agx_isa::forms::idx::*;
    use MesaUnit::*;
    match insn.form {
        FMADD32 | FMADD16 | FADD32 | FADD16 | FMUL32 | FMUL16 => (Fscib, 2, 1),
        MOV_IMM | MOV_IMM_1 => (Fscib, 1, 1),
        BITOP | ICMPSEL | FCMPSEL | IADD => (Fscib, 2, 1),
        GET_SR => (Fscib, 2, 2),
        IMADD | BFI | EXTR | ASR | FLOOR | SIN_PT_1 => (Ic, 3, 2),
        SIN_PT_2 | LOG2 | EXP2 => (Ic, 5, 2),
        RCP => (Ic, 5, 3),
        RSQRT | RSQRT_SPECIAL => (Ic, 6, 4),
        // plain shuffles only; the _down/_up/_rotate_up/_xor variants have
        // no entry
        SIMD_SHUFFLE | QUAD_SHUFFLE => (Fscib, 5, 2),
        ICMP_BALLOT | FCMP_BALLOT => (Fscib, 5, 2),
        ICMP_QUAD_BALLOT | FCMP_QUAD_BALLOT => (Fscib, 4, 2),
        SIMD_OP | SIMD_SHUF_OP => subgroup_by_bits(insn.raw()),
        // scans (prefix ops)
        QUAD_PREFIX_IADD..=QUAD_PREFIX_FMUL | SIMD_PREFIX_IADD..=SIMD_PREFIX_MAX_U => {
            (Fscib, 18, 18)
        }
        // reductions
        QUAD_AND..=QUAD_FMUL
        | QUAD_MIN_U..=QUAD_MAX_F
        | SIMD_AND..=SIMD_FMUL
        | SIMD_MIN_U..=SIMD_MAX_F => (Fscib, 24, 24),
        _ => (None, 0, 0),
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
