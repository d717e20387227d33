//! Forms of this group: mnemonic rules, group-specific operand kinds, enum
//! spellings, roles and implicit operands.

use crate::forms::OperandDesc;
use crate::model::Instruction;
use crate::operands::{kw, Ctx, Out};

/// Mnemonic of the instruction (applegpu `fields_to_mnem` + aliases).
pub(crate) fn mnemonic(ctx: &Ctx) -> &'static str {
    ctx.form.name
}

/// Operand kinds specific to this group.
pub(crate) fn operand(ctx: &mut Ctx, op: &'static OperandDesc) -> Out {
    let _ = (ctx, op);
    kw("<TODO>")
}

/// Spelling of an `EnumDesc` value (None: printed as the number).
pub(crate) fn enum_value(ctx: &Ctx, op: &'static OperandDesc, v: u64) -> Option<&'static str> {
    let _ = (ctx, op, v);
    None
}

/// Post-processing: aliases, operand roles, implicit operands.
pub(crate) fn finish(ctx: &mut Ctx, insn: &mut Instruction) {
    let _ = (ctx, insn);
}
