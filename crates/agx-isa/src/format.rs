//! [`Instruction`] → applegpu text, character for character.
//!
//! Layout (applegpu `disassemble.py` / `AsmInstruction.__str__`): `'%4x:'`
//! address, space, hex bytes left-justified to 20, space, mnemonic
//! left-justified to 16, one space, operands joined by `", "`.

use crate::forms::SR_NAMES;
use crate::model::*;
use crate::operands::float_imm_text;
use std::fmt::Write as _;

/// Which spelling of the register-cache hint to print.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Syntax {
    /// `r0.cache` (applegpu's default, and the seed's).
    #[default]
    Default,
    /// `$r0` (applegpu with `APPLEGPU_CRYPTIC` set).
    Cryptic,
    /// applegpu's default text, except that encodings applegpu prints as
    /// another form (stack adjusts as `stack_store`, ...) print as their own
    /// form; see [`crate::native`]. Text that assembles back to the same
    /// instructions.
    Native,
}

/// The mnemonic (left-justified to 16), a space, and the operands joined by
/// `", "`: applegpu's `str(AsmInstruction)`.
pub fn format_asm(insn: &Instruction, syntax: Syntax) -> String {
    let mut s = String::with_capacity(64);
    write_asm(&mut s, insn, syntax);
    s
}

/// Appends the asm text of `insn` to `out`. Branch targets print as absolute
/// addresses from `insn.addr` (which already includes any `--base`).
pub fn write_asm(out: &mut String, insn: &Instruction, syntax: Syntax) {
    if syntax == Syntax::Native {
        let extra = crate::native::raw_operand_bits(insn);
        let shown = crate::native::native_instruction(insn);
        if shown.is_some() || extra != 0 {
            let start = out.len();
            write_asm(out, shown.as_ref().unwrap_or(insn), Syntax::Default);
            if extra != 0 {
                // no operands printed: the padded mnemonic ends in a space
                let sep = if out.len() > start && out.ends_with(' ') {
                    ""
                } else {
                    ", "
                };
                let _ = write!(out, "{sep}raw(0x{extra:X})");
            }
            return;
        }
    }
    out.push_str(insn.mnemonic);
    for _ in insn.mnemonic.len()..16 {
        out.push(' ');
    }
    out.push(' ');
    let mut first = true;
    for o in insn.operands.iter() {
        let mark = out.len();
        if !first {
            out.push_str(", ");
        }
        let body = out.len();
        write_operand(out, insn, o, syntax);
        if out.len() == body {
            // empty operands are filtered out, as applegpu does
            out.truncate(mark);
        } else {
            first = false;
        }
    }
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
    write_line_parts(
        out,
        insn.addr,
        &insn.bytes()[..insn.len as usize],
        insn,
        syntax,
    )
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Writes `'%4x:'`.
pub fn write_addr(out: &mut String, addr: u32) {
    let _ = write!(out, "{addr:4x}:");
}

/// Writes the hex column: bytes as lower-case hex, left-justified to 20.
pub fn write_hex(out: &mut String, bytes: &[u8]) {
    for b in bytes {
        out.push(HEX[(b >> 4) as usize] as char);
        out.push(HEX[(b & 15) as usize] as char);
    }
    for _ in bytes.len() * 2..20 {
        out.push(' ');
    }
}

/// A listing line with explicit address and shown bytes (the tail of a
/// buffer may hold fewer bytes than the instruction's length).
pub fn write_line_parts(
    out: &mut String,
    addr: u32,
    bytes: &[u8],
    insn: &Instruction,
    syntax: Syntax,
) {
    write_addr(out, addr);
    out.push(' ');
    write_hex(out, bytes);
    out.push(' ');
    write_asm(out, insn, syntax);
}

fn push_u(out: &mut String, v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut v = v;
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.push_str(std::str::from_utf8(&buf[i..]).unwrap_or("0"));
}

fn push_i(out: &mut String, v: i64) {
    if v < 0 {
        out.push('-');
    }
    push_u(out, v.unsigned_abs());
}

fn reg_name(out: &mut String, file: RegFile, width: Width, half: u32) {
    out.push(match file {
        RegFile::Gpr => 'r',
        RegFile::Uniform => 'u',
    });
    match width {
        Width::W16 => {
            push_u(out, (half >> 1) as u64);
            out.push(if half & 1 == 0 { 'l' } else { 'h' });
        }
        Width::W32 => push_u(out, (half >> 1) as u64),
        Width::W64 => {
            let n = (half >> 1) as u64;
            push_u(out, n);
            out.push('_');
            out.push(match file {
                RegFile::Gpr => 'r',
                RegFile::Uniform => 'u',
            });
            push_u(out, n + 1);
        }
    }
}

/// Appends `.flag` suffixes in applegpu's order (hint, sx, abs, neg); the
/// cache hint is a `$` prefix in cryptic syntax (written by the caller).
fn push_flags(out: &mut String, f: u8, syntax: Syntax) {
    if f & flags::CACHE != 0 && syntax != Syntax::Cryptic {
        out.push_str(".cache");
    }
    if f & flags::DISCARD != 0 {
        out.push_str(".discard");
    }
    if f & flags::SX != 0 {
        out.push_str(".sx");
    }
    if f & flags::ABS != 0 {
        out.push_str(".abs");
    }
    if f & flags::NEG != 0 {
        out.push_str(".neg");
    }
}

/// Writes a register operand (tuples joined with `_`).
pub fn write_reg(out: &mut String, r: &Reg, syntax: Syntax) {
    if r.flags & flags::CACHE != 0 && syntax == Syntax::Cryptic {
        out.push('$');
    }
    let step = r.width.halves() as u32;
    for i in 0..r.count as u32 {
        if i > 0 {
            out.push('_');
        }
        reg_name(out, r.file, r.width, r.half as u32 + i * step);
    }
    push_flags(out, r.flags, syntax);
}

fn write_operand(out: &mut String, insn: &Instruction, o: &Operand, syntax: Syntax) {
    match o.kind {
        OperandKind::Reg(ref r) => write_reg(out, r, syntax),
        OperandKind::Imm(v) => {
            push_i(out, v.get());
            push_flags(out, o.flags, syntax);
        }
        OperandKind::HexImm(v) => {
            let _ = write!(out, "0x{:X}", v.get());
        }
        OperandKind::FloatImm(v) => {
            out.push_str(float_imm_text(v));
            push_flags(out, o.flags, syntax);
        }
        OperandKind::Target(rel) => {
            let abs = insn.addr as i64 + rel as i64;
            if abs < 0 {
                // Python's '0x%X' % v puts the sign after the prefix.
                let _ = write!(out, "0x-{:X}", -abs);
            } else {
                let _ = write!(out, "0x{abs:X}");
            }
        }
        OperandKind::SpecialReg(n) => {
            out.push_str("sr");
            push_u(out, n as u64);
            if let Some(name) = SR_NAMES.get(n as usize).copied().flatten() {
                out.push_str(" (");
                out.push_str(name);
                out.push(')');
            }
        }
        OperandKind::TexState(n) => {
            out.push_str("ts");
            push_u(out, n as u64);
        }
        OperandKind::SamplerState(n) => {
            out.push_str("ss");
            push_u(out, n as u64);
        }
        OperandKind::Cf(n) => {
            out.push_str("cf");
            push_u(out, n as u64);
        }
        OperandKind::Binary { value, bits } => {
            out.push_str("0b");
            for i in (0..bits as u32).rev() {
                out.push(if (value >> i) & 1 == 1 { '1' } else { '0' });
            }
            if bits == 0 {
                out.push('0');
            }
        }
        OperandKind::Keyword(s) => out.push_str(s.get()),
    }
}
