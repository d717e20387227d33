//! Per-kind operand decoding.
use crate::forms::Form;
use crate::model::Instruction;

pub(crate) fn decode_into(form: &'static Form, raw: u128, insn: &mut Instruction) {
    let _ = (form, raw, insn);
}
