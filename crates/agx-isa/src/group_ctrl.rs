//! Control, compare and cross-lane forms (descriptor indices 39..=113): flow
//! control (`ret`, `stop`, `trap`, both `call`s, `jmp_*`), the exec-mask
//! stack (`pop_exec`, `if_*`, `while_*`, `else_*`), compare-and-select,
//! ballots, SIMD/quad shuffles and reductions, `simd_matrix_fmadd*`,
//! `wait_pix`, `signal_pix` and `wait`.
//!
//! Most operands of these forms are the shared ALU kinds (operands.rs); this
//! module adds the branch offset, the implicit `r0l` exec-stack operand and
//! the integer/float condition codes, applegpu's `update_exec`/`push_exec`
//! alias of an unconditional `if_fcmp`, and the roles and implicit operands.
//!
//! # Where applegpu raises on valid bytes (our rendering)
//!
//! No operand kind decoded in this file raises. The exceptions the corpus
//! counts for this group all come from shared kinds, which set
//! `Instruction::raised` and render as follows:
//!
//! * Float sources (`if_fcmp`/`while_fcmp`/`else_fcmp`, `fcmpsel`,
//!   `fcmp_ballot`, `fcmp_quad_ballot`, `simd_matrix_fmadd32/16`): a source
//!   type with no register/immediate meaning (type bits `1000`/`1100`) makes
//!   applegpu print `TODO: ...` and decode the operand as `None`; a non-zero
//!   abs/neg modifier on it then raises (`add_float_modifier(None, m)`). We
//!   print `None` (modifiers dropped), as applegpu prints the operand when the
//!   modifier is 0.
//! * `icmpsel`/`fcmpsel` X/Y (CmpselSrcDesc) with a 32-bit destination and
//!   an odd register number: applegpu asserts the number is even. We print
//!   the 32-bit register `value >> 1`.
//! * 64-bit sources (`quad_shuffle*`, `simd_shuf_op`, `quad_*`, `simd_*`
//!   reductions, `simd_op`; ALUSrc64Desc) with an odd register number:
//!   applegpu asserts it is even. We print the 64-bit pair `value >> 1`.
//!
//! # Roles and implicit operands
//!
//! * The exec-mask stack lives in `r0l`. `pop_exec`, `if_*`, `while_*`,
//!   `else_*` and the `update_exec`/`push_exec` alias print it (applegpu
//!   `ImplicitR0LDesc`) and both read and write it: that operand is
//!   `Role::UseDef`.
//! * `r1` is the link register (ISA docs: "r1 is used as the link
//!   register"). The PC-relative `call` (form 46) writes it (`r1 = pc + 6`
//!   in applegpu's pseudocode): implicit `r1` Def. The register `call`
//!   (form 42) has no pseudocode; we assume it writes the link register the
//!   same way (implicit `r1` Def) and reads its printed register (Use).
//! * `ret` reads its printed 32-bit register (Use; normally `r1`).
//! * Branch/call targets are `OperandKind::Target(offset)` relative to the
//!   instruction (printed `0x%X` absolute). `jmp_incomplete` has an 8-bit
//!   signed offset, the others 32-bit; odd offsets are kept as-is.
//! * Destinations (ALUDst, PairedALUDst) are Def, all sources Use; the
//!   paired `simd_matrix_fmadd` registers are count-2 tuples.

use crate::forms::{OpKind, OperandDesc};
use crate::model::{flags, Instruction, OperandKind, Role};
use crate::operands::{gpr16, gpr32, imm, kw, Ctx, Out};

/// Form indices used below (applegpu descriptor order).
const CALL_REG: u8 = crate::forms::idx::CALL;
const CALL_IMM: u8 = crate::forms::idx::CALL_46;
const IF_FCMP: u8 = crate::forms::idx::IF_FCMP;

/// Mnemonic of the instruction (applegpu `fields_to_mnem` + aliases).
///
/// Every form of this group prints its descriptor name; the only alias
/// (`if_fcmp` → `update_exec`/`push_exec`) also rewrites the operands and is
/// applied in [`finish`].
#[inline(always)]
pub(crate) fn mnemonic(ctx: &Ctx) -> crate::model::Mnem {
    crate::model::Mnem::form(ctx.form.idx)
}

/// Integer condition (IConditionDesc): bit 2 signed, bits 0..2 eq/lt/gt,
/// bit 3 (`ccn`) inverts. Unlisted values print as numbers.
static ICOND: [Option<&str>; 16] = [
    Some("ueq"),
    Some("ult"),
    Some("ugt"),
    None,
    Some("seq"),
    Some("slt"),
    Some("sgt"),
    None,
    Some("nueq"),
    Some("ugte"),
    Some("ulte"),
    None,
    Some("nseq"),
    Some("sgte"),
    Some("slte"),
    None,
];

/// Float condition (FConditionDesc): bits 0..3 select the comparison, bit 3
/// (`ccn`) inverts. Unlisted values print as numbers.
static FCOND: [Option<&str>; 16] = [
    Some("eq"),
    Some("lt"),
    Some("gt"),
    Some("ltn"),
    None,
    Some("gte"),
    Some("lte"),
    Some("gtn"),
    Some("neq"),
    Some("nlt"),
    Some("ngt"),
    Some("nltn"),
    None,
    Some("ngte"),
    Some("nlte"),
    Some("ngtn"),
];

/// Condition operand: `cc` (3 bits) | `ccn` << 3 (absent in the cmpsel
/// forms, where it reads as 0).
#[inline(always)]
fn condition(ctx: &Ctx, op: &OperandDesc, table: &'static [Option<&'static str>; 16]) -> Out {
    let v = (ctx.op(op, 0) & 7) | (ctx.op(op, 1) & 1) << 3;
    match &table[v as usize] {
        Some(s) => kw(s),
        None => imm(v as i64),
    }
}

/// Sign-extends the low `bits` bits of `v` (bits in 1..=64; 0 gives 0).
fn sign_extend(v: u64, bits: u8) -> i64 {
    if bits == 0 {
        return 0;
    }
    let bits = bits.min(64) as u32;
    let sh = 64 - bits;
    ((v << sh) as i64) >> sh
}

/// Operand kinds specific to this group.
#[inline(always)]
pub(crate) fn operand(ctx: &mut Ctx, op: &'static OperandDesc) -> Out {
    match op.kind {
        // Signed byte offset from the start of the instruction.
        OpKind::BranchOffsetDesc => {
            let rel = sign_extend(ctx.op(op, 0), ctx.op_width(op, 0));
            let rel = rel.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
            Out::Op(crate::model::Operand::new(OperandKind::target(rel)))
        }
        // The exec-mask stack register r0l; bit 0 of `Dt` is a cache hint.
        OpKind::ImplicitR0LDesc => {
            let mut r = gpr16(0);
            if ctx.op(op, 0) & 1 != 0 {
                r.flags = flags::CACHE;
            }
            Out::Op(crate::model::Operand::reg(r, Role::UseDef))
        }
        OpKind::IConditionDesc => condition(ctx, op, &ICOND),
        OpKind::FConditionDesc => condition(ctx, op, &FCOND),
        // Not used by any form of this group (the table is generated and
        // fixed); print applegpu's placeholder for an undecoded operand.
        _ => kw(&"<TODO>"),
    }
}

/// Whether `o` prints exactly `0.0` (a float immediate 0 with no modifier).
fn is_plain_zero(o: &crate::model::Operand) -> bool {
    matches!(o.kind, OperandKind::FloatImm(0)) && o.flags == 0
}

/// applegpu's alias of `if_fcmp`: condition `eq` between the immediates
/// `0.0` and `0.0` is unconditional; `update_exec r0l` when n is 0, else
/// `push_exec r0l, n`.
fn if_fcmp_alias(insn: &mut Instruction) {
    let ops = insn.operands.as_slice();
    if ops.len() != 5 {
        return;
    }
    let unconditional = ops[1].kind.keyword_text() == Some("eq")
        && is_plain_zero(&ops[2])
        && is_plain_zero(&ops[3]);
    if !unconditional {
        return;
    }
    let (d, n) = (ops[0], ops[4]);
    let n_is_zero = n.kind.imm_value() == Some(0);
    insn.operands.clear();
    insn.operands.push(d);
    if n_is_zero {
        insn.set_mnem(const { crate::model::Mnem::named("update_exec") });
    } else {
        insn.set_mnem(const { crate::model::Mnem::named("push_exec") });
        insn.operands.push(n);
    }
}

/// Post-processing: aliases, operand roles, implicit operands.
#[inline(always)]
pub(crate) fn finish(ctx: &mut Ctx, insn: &mut Instruction) {
    match ctx.form.idx {
        IF_FCMP => if_fcmp_alias(insn),
        // Link register r1 written by both calls (see the module docs).
        CALL_REG | CALL_IMM => {
            insn.implicit
                .push(crate::model::Operand::reg(gpr32(1), Role::Def));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use crate::decode::decode_word;
    use crate::format::{format_asm, Syntax};
    use crate::forms::FORMS;
    use crate::model::{Role, Width};

    /// Random words with each form's fixed bits: decoding and printing never
    /// panic, and every word decodes to some form of the table.
    #[test]
    fn random_words_never_panic() {
        let mut next = crate::xorshift::xorshift64(0x9E37_79B9_7F4A_7C15);
        use crate::forms::idx;
        for f in FORMS
            .iter()
            .filter(|f| (idx::RET..=idx::WAIT).contains(&f.idx))
        {
            for i in 0..4000u32 {
                let mut w = (next() as u128) | (next() as u128) << 64;
                w &= (1u128 << 96) - 1;
                match i % 4 {
                    0 => w = 0,
                    1 => w = (1u128 << 96) - 1,
                    _ => {}
                }
                let w = (w & !f.mask) | f.bits;
                let addr = (next() & 0xFFFF_FFFE) as u32;
                if let Some(insn) = decode_word(w, addr) {
                    let _ = format_asm(&insn, Syntax::Default);
                    let _ = format_asm(&insn, Syntax::Cryptic);
                }
            }
        }
    }

    fn decode_hex(h: &str, addr: u32) -> crate::model::Instruction {
        let bytes: Vec<u8> = (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
            .collect();
        crate::decode::decode(&bytes, addr).unwrap()
    }

    #[test]
    fn exec_stack_ops_read_and_write_r0l() {
        // pop_exec r0l, 1 (applegpu: 52 0e 00 00 00 00)
        let i = decode_hex("520e00000000", 0);
        assert_eq!(i.mnemonic(), "pop_exec");
        let r = i.operands[0].as_reg().unwrap();
        assert_eq!((r.half, r.width), (0, Width::W16));
        assert_eq!(i.operands[0].role, Role::UseDef);
        assert_eq!(
            format_asm(&i, Syntax::Default).trim_end(),
            "pop_exec         r0l, 1"
        );
    }

    #[test]
    fn update_exec_alias_keeps_r0l_use_def() {
        // if_fcmp r0l, eq, 0.0, 0.0, 0 → update_exec r0l
        let i = decode_hex("420000000000", 0);
        assert_eq!(i.mnemonic(), "update_exec");
        assert_eq!(i.operands.len(), 1);
        assert_eq!(i.operands[0].role, Role::UseDef);
        // n = 1 → push_exec r0l, 1
        let i = decode_hex("420800000000", 0);
        assert_eq!(format_asm(&i, Syntax::Default), "push_exec        r0l, 1");
    }

    #[test]
    fn calls_define_link_register_and_targets_are_relative() {
        // call 0x100 from 0x40: c010 + off32 0xC0
        let i = decode_hex("10c0c0000000", 0x40);
        assert!(i.operands[0].kind.target_offset() == Some(0xC0));
        assert_eq!(format_asm(&i, Syntax::Default), "call             0x100");
        let d: Vec<_> = i.defs().collect();
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].half, d[0].width), (2, Width::W32));
        // jmp_incomplete: 8-bit signed offset
        let i = decode_hex("0000fe00", 0x10);
        assert!(i.operands[0].kind.target_offset() == Some(-2));
    }
}
