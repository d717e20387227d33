//! Native syntax: applegpu's text, except for the encodings applegpu prints
//! as another form.
//!
//! applegpu decodes by first match over its form table. Some later forms can
//! never be reached because an earlier form accepts every word they accept
//! (the earlier form tests a subset of their fixed bits, with the same
//! values): `stack_get_ptr` (caught by `stack_load`), `TODO.stack_adjust` and
//! `TODO.stack_adjust2` (caught by `stack_store`), `TODO.unk51` (caught by
//! `no_var`). The list is computed from the table ([`shadowed_forms`]), not
//! written by hand. In applegpu syntax such an encoding prints as the
//! earlier form, and that text assembles back to the earlier form: a stack
//! adjust comes back as a real `stack_store` (a spill).
//!
//! Native syntax prints an instruction whose word matches a shadowed form
//! with that form's own name ([`NATIVE_NAMES`] for applegpu's `TODO.*`
//! placeholders) and operands (applegpu's operand list for it),
//! e.g. `stack_adjust 0, 0, 0, 0, 0, 80` instead of
//! `stack_store i8, 1, 2, 0, 80, 0`; everything else prints exactly as in
//! applegpu syntax. The assembler accepts these names, so disassemble →
//! assemble → disassemble in native syntax keeps every instruction.
//!
//! The decoded [`Instruction`] itself stays the first-match one (its `form`,
//! operands and the analysis facts such as [`Instruction::stack_adjust`]);
//! only the text changes. The facts of what it does come from the form it
//! really matches: [`Instruction::semantic_form`], the one refinement.

use crate::decode::{decode_as, size_mask};
use crate::forms::{Form, FORMS};
use crate::model::Instruction;
use std::sync::OnceLock;

/// `(earlier form, shadowed later form)` pairs: every word the later form
/// matches is matched by the earlier one (its fixed-bit mask is a subset of
/// the later form's, with equal values).
pub fn shadowed_forms() -> &'static [(u8, u8)] {
    static PAIRS: OnceLock<Vec<(u8, u8)>> = OnceLock::new();
    PAIRS.get_or_init(|| {
        let mut v = Vec::new();
        for (j, later) in FORMS.iter().enumerate() {
            if let Some(earlier) = FORMS[..j].iter().find(|e| {
                e.mask & !later.mask == 0
                    && (e.bits ^ later.bits) & e.mask == 0
                    && e.sizes == later.sizes
                    && e.length_bit == later.length_bit
            }) {
                v.push((earlier.idx, later.idx));
            }
        }
        v
    })
}

/// The shadowed form `insn`'s word really matches, if any (the generated
/// `Form::shadows` column: empty for every form but the three that shadow).
#[inline]
pub fn shadowed_form(insn: &Instruction) -> Option<&'static Form> {
    let f = FORMS.get(insn.form as usize)?;
    if f.shadows.is_empty() {
        return None;
    }
    f.shadows
        .iter()
        .map(|&l| &FORMS[l as usize])
        .find(|s| insn.raw() & s.mask & size_mask(insn.len) == s.bits)
}

fn field_bits(f: &Form) -> u128 {
    f.fields
        .iter()
        .flat_map(|x| x.parts.iter())
        .fold(0, |m, &(start, width, _)| {
            m | (((1u128 << width) - 1) << start)
        })
}

/// Bits of `insn` that its first-match form reads (a field) but the
/// shadowed form it prints as neither reads nor fixes: native syntax shows
/// them as a trailing `raw(0x..)` operand when non-zero, so the text keeps
/// everything the first-match decode (and so the analysis) sees. Zero in
/// every real kernel of the corpus; random encodings have them.
pub fn uncovered_bits(insn: &Instruction) -> u128 {
    let Some(s) = shadowed_form(insn) else {
        return 0;
    };
    let f = &FORMS[insn.form as usize];
    insn.raw() & field_bits(f) & !(field_bits(s) | s.mask) & size_mask(insn.len)
}

/// The bits native syntax appends as `raw(0x..)` (0: none): the
/// [`uncovered_bits`] of a shadowed encoding, and for an encoding applegpu
/// refuses to print (`raised`, where our best rendering can drop bits, e.g.
/// an odd register number printed as `value >> 1`) every field bit of the
/// printed form. The assembler sets them as written, so the text determines
/// the instruction. Never needed in real code.
pub fn raw_operand_bits(insn: &Instruction) -> u128 {
    let n = native_instruction(insn);
    let shown = n.as_ref().unwrap_or(insn);
    let mut bits = uncovered_bits(insn);
    // either reading may be one applegpu refuses to print (fuzz: a
    // `TODO.stack_adjust2` whose `stack_store` reading has an odd register)
    for i in [insn, shown] {
        if i.raised {
            bits |= i.raw() & field_bits(&FORMS[i.form as usize]) & size_mask(i.len);
        }
    }
    bits
}

/// `insn` decoded as the shadowed form its word matches (what native syntax
/// prints), or `None` when applegpu's form is the right one.
pub fn native_instruction(insn: &Instruction) -> Option<Instruction> {
    let f = shadowed_form(insn)?;
    let mut out = Instruction::default();
    decode_as(f, insn.raw(), insn.addr, &mut out);
    if let Some((_, name)) = NATIVE_NAMES.iter().find(|(t, _)| *t == f.name) {
        out.set_mnemonic(name);
    }
    Some(out)
}

/// Native-syntax names of the shadowed forms applegpu's table calls
/// `TODO.*` (a placeholder no listing should show): `(applegpu's name,
/// native name)`. The immediate stack adjust is Mesa's `stack_adjust`
/// (`agx_opcodes.py`; the frame allocation at a function's entry and exit);
/// the register form, which Mesa never emits, keeps the same name with
/// `_reg`. The assembler reads both spellings.
pub static NATIVE_NAMES: [(&str, &str); 2] = [
    ("TODO.stack_adjust", "stack_adjust"),
    ("TODO.stack_adjust2", "stack_adjust_reg"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shadowed_forms_are_the_four_applegpu_cannot_reach() {
        let names: Vec<(&str, &str)> = shadowed_forms()
            .iter()
            .map(|&(e, l)| (FORMS[e as usize].name, FORMS[l as usize].name))
            .collect();
        assert_eq!(
            names,
            [
                ("stack_load", "stack_get_ptr"),
                ("stack_store", "TODO.stack_adjust"),
                ("no_var", "TODO.unk51"),
                ("stack_store", "TODO.stack_adjust2"),
            ]
        );
    }

    #[test]
    fn the_generated_shadows_column_is_the_computed_list() {
        let mut from_column: Vec<(u8, u8)> = FORMS
            .iter()
            .flat_map(|f| f.shadows.iter().map(move |&l| (f.idx, l)))
            .collect();
        from_column.sort_by_key(|&(_, l)| l);
        assert_eq!(from_column, shadowed_forms());
    }

    #[test]
    fn stack_adjust_prints_as_itself() {
        // examples/simple_call.archive at 0x18e (issue #13)
        let i = crate::decode(&[0xb5, 0x00, 0x81, 0x05, 0x20, 0x00], 0x18e).unwrap();
        assert_eq!(i.mnemonic(), "stack_store");
        let n = native_instruction(&i).expect("a stack adjust");
        assert_eq!(n.mnemonic(), "stack_adjust");
        // a real spill is not
        let s = crate::decode(&[0xb5, 0x00, 0x80, 0x05, 0x20, 0x00], 0).unwrap();
        assert!(native_instruction(&s).is_none());
    }
}
