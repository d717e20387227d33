//! ALU forms (descriptor indices 0..=38): immediate moves, `get_sr`, integer
//! add / multiply-add, `convert`, shifts and bitfield operations, bitwise
//! operations, bit counting, and the float arithmetic / unary float forms.
//!
//! Printing follows dougallj/applegpu at 4c5bae61 (the reference listing):
//!
//! * `iadd`/`imadd` print as `isub`/`imsub` when the `N` bit is set; every
//!   saturatable form (`iadd`, `imadd`, all float forms 19..=38) gets a
//!   `.sat` suffix when `S` is set.
//! * `bitop` is printed through its aliases (`and`, `or`, `xor`, `nand`,
//!   `nor`, `xnor`; `not`/`mov` when the second source is the immediate 0;
//!   `bitop_mov_a` for the truth tables `0011`/`1100`).
//! * The shift of `iadd`/`imadd` prints as `lsl N` (nothing when 0); the
//!   mask of the bitfield forms as `mask 0x..` (nothing when 0).
//! * `convert` spells its mode and rounding enums; unknown values print as
//!   numbers.
//!
//! Encodings on which applegpu raises (we still decode them, set
//! `Instruction::raised`, and print the rendering below):
//!
//! * `iadd` / `imadd`: a 64-bit source register (`AddSrc`, type `0b11xx`)
//!   with an odd register number (applegpu asserts the number is even). We
//!   print the 64-bit pair starting at `value >> 1` (`r2_r3` for value 5),
//!   i.e. the low bit is ignored, and the operand spans that pair.
//! * Float forms (`fmadd32`, `fadd32`, `fmul32`, and the unary float forms
//!   25..=38): a source whose type field is undefined (applegpu prints
//!   `TODO: ....` and the source is `None`) combined with a non-zero abs/neg
//!   modifier (applegpu then fails adding the modifier to `None`). We print
//!   the source as `None`, without the modifier (exactly what applegpu
//!   prints when the modifier is zero).
//!
//! Roles: destinations are `Def`, sources `Use` (set by the shared kinds);
//! no ALU form reads its destination (the bitfield-insert forms take the
//! value they insert into as the explicit source `A`), none has implicit
//! operands, and `get_sr` reads no general-purpose register (the special
//! register is not part of the register file model).
//!
//! Note for analysis: a 64-bit destination or source can name `r127_r128`
//! (value 255 with the 64-bit type), whose half range runs past the 256
//! halves of the GPR file; applegpu prints it as is, and so do we.

use crate::forms::idx;
use crate::forms::OperandDesc;
use crate::model::{Instruction, Mnem, OperandKind};
use crate::operands::{kw, Ctx, Out};

/// `.sat` spellings of the saturatable forms, by form index.
#[inline(always)]
fn sat_name(idx: u8) -> Mnem {
    match idx {
        idx::FMADD32 => const { Mnem::named("fmadd32.sat") },
        idx::FMADD16 => const { Mnem::named("fmadd16.sat") },
        idx::FADD32 => const { Mnem::named("fadd32.sat") },
        idx::FADD16 => const { Mnem::named("fadd16.sat") },
        idx::FMUL32 => const { Mnem::named("fmul32.sat") },
        idx::FMUL16 => const { Mnem::named("fmul16.sat") },
        idx::FLOOR => const { Mnem::named("floor.sat") },
        idx::CEIL => const { Mnem::named("ceil.sat") },
        idx::TRUNC => const { Mnem::named("trunc.sat") },
        idx::RINT => const { Mnem::named("rint.sat") },
        idx::RCP => const { Mnem::named("rcp.sat") },
        idx::RSQRT => const { Mnem::named("rsqrt.sat") },
        idx::RSQRT_SPECIAL => const { Mnem::named("rsqrt_special.sat") },
        idx::SIN_PT_1 => const { Mnem::named("sin_pt_1.sat") },
        idx::SIN_PT_2 => const { Mnem::named("sin_pt_2.sat") },
        idx::LOG2 => const { Mnem::named("log2.sat") },
        idx::EXP2 => const { Mnem::named("exp2.sat") },
        idx::DFDX => const { Mnem::named("dfdx.sat") },
        idx::DFDY => const { Mnem::named("dfdy.sat") },
        idx::FUNOP => const { Mnem::named("funop.sat") },
        _ => Mnem::form(idx),
    }
}

/// Mnemonic of the instruction (applegpu `fields_to_mnem`; the `bitop`
/// aliases are applied in [`finish`]).
#[inline(always)]
pub(crate) fn mnemonic(ctx: &Ctx) -> Mnem {
    let sat = ctx.named("S") & 1 != 0;
    let neg = ctx.named("N") & 1 != 0;
    match ctx.form.idx {
        idx::IADD => match (neg, sat) {
            (false, false) => const { Mnem::named("iadd") },
            (false, true) => const { Mnem::named("iadd.sat") },
            (true, false) => const { Mnem::named("isub") },
            (true, true) => const { Mnem::named("isub.sat") },
        },
        idx::IMADD => match (neg, sat) {
            (false, false) => const { Mnem::named("imadd") },
            (false, true) => const { Mnem::named("imadd.sat") },
            (true, false) => const { Mnem::named("imsub") },
            (true, true) => const { Mnem::named("imsub.sat") },
        },
        idx::FMADD32..=idx::FUNOP if sat => sat_name(ctx.form.idx),
        _ => Mnem::form(ctx.form.idx),
    }
}

/// `lsl N` for the 3-bit shift of `iadd`/`imadd`.
static SHIFTS: [&str; 8] = [
    "", "lsl 1", "lsl 2", "lsl 3", "lsl 4", "lsl 5", "lsl 6", "lsl 7",
];

/// `mask 0x..` for the 5-bit mask width `m` of the bitfield forms:
/// `(1 << m) - 1` in upper-case hex; 0 prints nothing.
static MASKS: [&str; 32] = [
    "",
    "mask 0x1",
    "mask 0x3",
    "mask 0x7",
    "mask 0xF",
    "mask 0x1F",
    "mask 0x3F",
    "mask 0x7F",
    "mask 0xFF",
    "mask 0x1FF",
    "mask 0x3FF",
    "mask 0x7FF",
    "mask 0xFFF",
    "mask 0x1FFF",
    "mask 0x3FFF",
    "mask 0x7FFF",
    "mask 0xFFFF",
    "mask 0x1FFFF",
    "mask 0x3FFFF",
    "mask 0x7FFFF",
    "mask 0xFFFFF",
    "mask 0x1FFFFF",
    "mask 0x3FFFFF",
    "mask 0x7FFFFF",
    "mask 0xFFFFFF",
    "mask 0x1FFFFFF",
    "mask 0x3FFFFFF",
    "mask 0x7FFFFFF",
    "mask 0xFFFFFFF",
    "mask 0x1FFFFFFF",
    "mask 0x3FFFFFFF",
    "mask 0x7FFFFFFF",
];

/// A keyword from `table[v]`, or nothing when the entry is empty.
#[inline(always)]
fn table_kw(table: &'static [&'static str], v: u64) -> Out {
    match table.get(v as usize) {
        Some(s) if !s.is_empty() => kw(s),
        _ => Out::Skip,
    }
}

/// Operand kinds specific to this group.
#[inline(always)]
pub(crate) fn operand(ctx: &mut Ctx, op: &'static OperandDesc) -> Out {
    use crate::forms::OpKind::*;
    use crate::model::Operand;
    match op.kind {
        SReg32Desc => Out::Op(Operand::new(OperandKind::SpecialReg(
            (ctx.op(op, 0) & 0xFF) as u16,
        ))),
        ShiftDesc => table_kw(&SHIFTS, ctx.op(op, 0)),
        MaskDesc => table_kw(&MASKS, ctx.op(op, 0)),
        _ => kw(&"<TODO>"),
    }
}

/// Spelling of an `EnumDesc` value (None: printed as the number).
#[inline(always)]
pub(crate) fn enum_value(
    ctx: &Ctx,
    op: &'static OperandDesc,
    v: u64,
) -> Option<&'static &'static str> {
    if ctx.form.idx != idx::CONVERT {
        return None;
    }
    match op.name {
        "mode" => match v {
            0 => Some(&"u8_to_f"),
            1 => Some(&"s8_to_f"),
            4 => Some(&"f_to_u16"),
            5 => Some(&"f_to_s16"),
            6 => Some(&"u16_to_f"),
            7 => Some(&"s16_to_f"),
            8 => Some(&"f_to_u32"),
            9 => Some(&"f_to_s32"),
            10 => Some(&"u32_to_f"),
            11 => Some(&"s32_to_f"),
            _ => None,
        },
        "round" => match v {
            0 => Some(&"rtz"),
            1 => Some(&"rte"),
            _ => None,
        },
        _ => None,
    }
}

/// `bitop` aliases (applegpu `map_to_alias`): the truth table is operand 0,
/// then D, A, B.
fn bitop_alias(insn: &mut Instruction) {
    let ops = insn.operands.clone();
    let tt = match ops.first().and_then(|o| o.kind.keyword_text()) {
        Some(s) => s,
        None => return,
    };
    let binary = match tt {
        "0001" => Some(const { Mnem::named("and") }),
        "0111" => Some(const { Mnem::named("or") }),
        "0110" => Some(const { Mnem::named("xor") }),
        "1110" => Some(const { Mnem::named("nand") }),
        "1000" => Some(const { Mnem::named("nor") }),
        "1001" => Some(const { Mnem::named("xnor") }),
        _ => None,
    };
    // `str(B) == '0'`: the plain immediate zero.
    let b_is_zero = ops
        .get(3)
        .is_some_and(|o| o.kind == OperandKind::imm(0) && o.flags == 0);
    let unary = match tt {
        "1010" if b_is_zero => Some(const { Mnem::named("not") }),
        "0101" if b_is_zero => Some(const { Mnem::named("mov") }),
        _ => None,
    };
    let (mnem, keep) = if let Some(m) = binary {
        (m, 1..ops.len())
    } else if let Some(m) = unary {
        (m, 1..ops.len().min(3))
    } else if matches!(tt, "0011" | "1100") {
        insn.set_mnem(const { Mnem::named("bitop_mov_a") });
        return;
    } else {
        return;
    };
    insn.set_mnem(mnem);
    insn.operands.clear();
    for o in ops.get(keep).unwrap_or(&[]) {
        insn.operands.push(*o);
    }
}

/// Post-processing: aliases, operand roles, implicit operands.
#[inline(always)]
pub(crate) fn finish(ctx: &mut Ctx, insn: &mut Instruction) {
    if ctx.form.idx == idx::BITOP {
        bitop_alias(insn);
    }
}

#[cfg(test)]
mod tests {
    use crate::decode::decode_word;
    use crate::format::{format_asm, Syntax};
    use crate::forms::FORMS;
    use crate::model::Role;

    /// xorshift64*: deterministic, dependency-free.
    fn next(s: &mut u64) -> u64 {
        *s ^= *s >> 12;
        *s ^= *s << 25;
        *s ^= *s >> 27;
        s.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Random words forced onto each ALU form: decoding and printing never
    /// panic, and exactly one operand (the destination) is written.
    #[test]
    fn alu_forms_decode_print_and_roles() {
        let mut s = 0x005E_EDA1_u64;
        for form in FORMS.iter().filter(|f| f.idx <= 38) {
            for i in 0..4000u32 {
                let mut w = (next(&mut s) as u128) | (next(&mut s) as u128) << 64;
                match i % 4 {
                    0 => w &= (next(&mut s) as u128) | (next(&mut s) as u128) << 64,
                    1 => w |= (next(&mut s) as u128) | (next(&mut s) as u128) << 64,
                    _ => {}
                }
                w = (w & !form.mask) | form.bits;
                w &= (1u128 << 96) - 1;
                let Some(insn) = decode_word(w, 0xFFFE) else {
                    panic!("form {} word {w:x} does not decode", form.idx)
                };
                let _ = format_asm(&insn, Syntax::Default);
                let _ = format_asm(&insn, Syntax::Cryptic);
                if insn.form != form.idx {
                    continue; // an earlier form claims it
                }
                let defs = insn.all_operands().filter(|o| o.role != Role::Use).count();
                assert_eq!(defs, 1, "form {} word {w:x}", form.idx);
                assert!(insn.implicit.is_empty());
            }
        }
    }
}
