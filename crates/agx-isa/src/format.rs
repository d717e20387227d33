//! [`Instruction`] → applegpu text.

use crate::model::*;

/// Which spelling of the register-cache hint to print.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Syntax {
    /// `r0.cache` (applegpu's default, and the seed's).
    #[default]
    Default,
    /// `$r0` (applegpu with `APPLEGPU_CRYPTIC` set).
    Cryptic,
}

/// The mnemonic (left-justified to 16), a space, and the operands joined by
/// `", "`: applegpu's `str(AsmInstruction)`.
pub fn format_asm(insn: &Instruction, syntax: Syntax) -> String {
    let mut s = String::with_capacity(64);
    write_asm(&mut s, insn, syntax);
    s
}

/// Appends the asm text of `insn` to `out`.
pub fn write_asm(out: &mut String, insn: &Instruction, syntax: Syntax) {
    let _ = (out, insn, syntax);
}

/// A whole listing line: `'%4x:' % addr`, space, hex bytes left-justified to
/// 20, space, asm text.
pub fn format_line(insn: &Instruction, syntax: Syntax) -> String {
    let mut s = String::with_capacity(96);
    write_line(&mut s, insn, syntax);
    s
}

/// Appends a whole listing line (no newline) to `out`.
pub fn write_line(out: &mut String, insn: &Instruction, syntax: Syntax) {
    let _ = (out, insn, syntax);
}
