//! [`Instruction`] → applegpu text, character for character.
//!
//! Layout (applegpu `disassemble.py` / `AsmInstruction.__str__`): `'%4x:'`
//! address, space, hex bytes left-justified to 20, space, mnemonic
//! left-justified to 16, one space, operands joined by `", "`.

use crate::forms::SR_NAMES;
use crate::model::*;
use crate::operands::float_imm_text;

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

/// Where formatted text goes: a `String`, or a `Vec<u8>` (the listing's
/// fast path: bytes appended with no UTF-8 bookkeeping, no `core::fmt`).
/// The formatter writes only `&str`s and ASCII bytes, so a `Vec<u8>` sink
/// always holds UTF-8. Sealed: implemented for those two types only.
pub trait Sink: sealed::Sealed {
    /// Appends one ASCII byte.
    fn put(&mut self, b: u8);
    /// Appends ASCII bytes.
    fn put_ascii(&mut self, b: &[u8]);
    /// Appends a string.
    fn put_str(&mut self, s: &str);
    /// Bytes written so far.
    fn len(&self) -> usize;
    /// Whether nothing was written.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Drops everything after the first `n` bytes (`n` on a boundary this
    /// formatter wrote).
    fn truncate(&mut self, n: usize);
    /// The last byte written.
    fn last(&self) -> Option<u8>;
    /// Appends the first `n` bytes of `b` (ASCII).
    #[inline(always)]
    fn put_head(&mut self, b: &[u8; HEAD], n: usize) {
        self.put_ascii(&b[..n]);
    }
}

/// Size of the stack buffer holding a listing line's columns up to the
/// operands ([`write_line_parts`]).
pub const HEAD: usize = 64;

mod sealed {
    pub trait Sealed {}
    impl Sealed for String {}
    impl Sealed for Vec<u8> {}
}

impl Sink for Vec<u8> {
    #[inline(always)]
    fn put(&mut self, b: u8) {
        self.push(b);
    }
    #[inline(always)]
    fn put_ascii(&mut self, b: &[u8]) {
        self.extend_from_slice(b);
    }
    #[inline(always)]
    fn put_str(&mut self, s: &str) {
        self.extend_from_slice(s.as_bytes());
    }
    #[inline(always)]
    fn len(&self) -> usize {
        Vec::len(self)
    }
    #[inline(always)]
    fn truncate(&mut self, n: usize) {
        Vec::truncate(self, n);
    }
    #[inline(always)]
    fn last(&self) -> Option<u8> {
        self.as_slice().last().copied()
    }
    /// A fixed-size copy and a shorter length: cheaper than a copy of a
    /// variable length (a call to `memcpy`).
    #[inline(always)]
    fn put_head(&mut self, b: &[u8; HEAD], n: usize) {
        let len = self.len();
        self.extend_from_slice(b);
        self.truncate(len + n.min(HEAD));
    }
}

impl Sink for String {
    #[inline(always)]
    fn put(&mut self, b: u8) {
        debug_assert!(b.is_ascii());
        self.push(b as char);
    }
    #[inline(always)]
    fn put_ascii(&mut self, b: &[u8]) {
        for &c in b {
            self.put(c);
        }
    }
    #[inline(always)]
    fn put_str(&mut self, s: &str) {
        self.push_str(s);
    }
    #[inline(always)]
    fn len(&self) -> usize {
        String::len(self)
    }
    #[inline(always)]
    fn truncate(&mut self, n: usize) {
        String::truncate(self, n);
    }
    #[inline(always)]
    fn last(&self) -> Option<u8> {
        self.as_bytes().last().copied()
    }
}

/// Spaces for padding (the widest pad is the 20-column hex field).
const SPACES: &[u8; 20] = b"                    ";

/// The mnemonic (left-justified to 16), a space, and the operands joined by
/// `", "`: applegpu's `str(AsmInstruction)`.
pub fn format_asm(insn: &Instruction, syntax: Syntax) -> String {
    let mut s = String::with_capacity(64);
    write_asm(&mut s, insn, syntax);
    s
}

/// Appends the asm text of `insn` to `out`. Branch targets print as absolute
/// addresses from `insn.addr` (which already includes any `--base`).
pub fn write_asm<S: Sink + ?Sized>(out: &mut S, insn: &Instruction, syntax: Syntax) {
    if syntax == Syntax::Native {
        let extra = crate::native::raw_operand_bits(insn);
        let shown = crate::native::native_instruction(insn);
        if shown.is_some() || extra != 0 {
            let start = out.len();
            write_asm(out, shown.as_ref().unwrap_or(insn), Syntax::Default);
            if extra != 0 {
                // no operands printed: the padded mnemonic ends in a space
                if !(out.len() > start && out.last() == Some(b' ')) {
                    out.put_ascii(b", ");
                }
                out.put_ascii(b"raw(0x");
                push_hex(out, extra, HEX_UPPER);
                out.put(b')');
            }
            return;
        }
    }
    out.put_str(insn.mnemonic());
    out.put_ascii(&SPACES[..16 - insn.mnemonic().len().min(16)]);
    out.put(b' ');
    write_operands(out, insn, syntax);
}

/// Each operand of `insn` as [`write_asm`] prints it, empty ones left out
/// (the operands without splitting the joined text).
pub fn operand_texts(insn: &Instruction, syntax: Syntax) -> Vec<String> {
    insn.operands
        .iter()
        .filter_map(|o| {
            let mut s = String::new();
            write_operand(&mut s, insn, o, syntax);
            (!s.is_empty()).then_some(s)
        })
        .collect()
}

/// The first non-empty operand text of `insn` (`operand_texts(..)[0]`,
/// without formatting the others) into `out`, cleared first; empty when
/// every operand prints empty.
pub fn first_operand_text(insn: &Instruction, syntax: Syntax, out: &mut String) {
    out.clear();
    for o in insn.operands.iter() {
        write_operand(out, insn, o, syntax);
        if !out.is_empty() {
            return;
        }
    }
}

/// The operands of `insn` joined by `", "`, empty ones left out.
#[inline]
fn write_operands<S: Sink + ?Sized>(out: &mut S, insn: &Instruction, syntax: Syntax) {
    let mut first = true;
    for o in insn.operands.iter() {
        let mark = out.len();
        if !first {
            out.put_ascii(b", ");
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
pub fn write_line<S: Sink + ?Sized>(out: &mut S, insn: &Instruction, syntax: Syntax) {
    write_line_parts(
        out,
        insn.addr,
        &insn.bytes()[..insn.len as usize],
        insn,
        syntax,
    )
}

const HEX: &[u8; 16] = b"0123456789abcdef";
const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

/// Appends `v` in hexadecimal with the given digits, no prefix, no padding
/// (Python's `'%x'` / `'%X'`).
#[inline]
fn push_hex<S: Sink + ?Sized>(out: &mut S, v: u128, digits: &[u8; 16]) {
    let mut buf = [0u8; 32];
    let mut i = buf.len();
    let mut v = v;
    loop {
        i -= 1;
        buf[i] = digits[(v & 15) as usize];
        v >>= 4;
        if v == 0 {
            break;
        }
    }
    out.put_ascii(&buf[i..]);
}

/// Writes `v` as `{:x}` / Python's `'%x'` (lower-case digits, no prefix,
/// no padding).
#[inline]
pub fn write_lower_hex<S: Sink + ?Sized>(out: &mut S, v: u32) {
    push_hex(out, v as u128, HEX);
}

/// Writes `'%4x:'`.
#[inline]
pub fn write_addr<S: Sink + ?Sized>(out: &mut S, addr: u32) {
    let digits = (32 - (addr | 1).leading_zeros()).div_ceil(4) as usize;
    if digits < 4 {
        out.put_ascii(&SPACES[..4 - digits]);
    }
    push_hex(out, addr as u128, HEX);
    out.put(b':');
}

/// Writes the hex column: bytes as lower-case hex, left-justified to 20.
#[inline]
pub fn write_hex<S: Sink + ?Sized>(out: &mut S, bytes: &[u8]) {
    if bytes.len() > 12 {
        for b in bytes {
            out.put_ascii(&[HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]);
        }
        return;
    }
    let mut buf = [b' '; 24];
    for (i, b) in bytes.iter().enumerate() {
        buf[2 * i] = HEX[(b >> 4) as usize];
        buf[2 * i + 1] = HEX[(b & 15) as usize];
    }
    out.put_ascii(&buf[..(bytes.len() * 2).max(20)]);
}

/// A listing line with explicit address and shown bytes (the tail of a
/// buffer may hold fewer bytes than the instruction's length).
pub fn write_line_parts<S: Sink + ?Sized>(
    out: &mut S,
    addr: u32,
    bytes: &[u8],
    insn: &Instruction,
    syntax: Syntax,
) {
    if bytes.len() > 12 {
        write_addr(out, addr);
        out.put(b' ');
        write_hex(out, bytes);
        out.put(b' ');
        write_asm(out, insn, syntax);
        return;
    }
    // the columns up to the operands are built on the stack and appended
    // at once (a copy per column cost more than the rest of the line, perf):
    // at most 8 + 2 + 24 + 1 + 16 + 1 = 52 bytes
    let mut head = [b' '; HEAD];
    let digits = (32 - (addr | 1).leading_zeros()).div_ceil(4) as usize;
    let width = digits.max(4);
    for i in 0..digits {
        head[width - 1 - i] = HEX[(addr >> (4 * i)) as usize & 15];
    }
    head[width] = b':';
    let mut p = width + 2;
    for (i, b) in bytes.iter().enumerate() {
        head[p + 2 * i] = HEX[(b >> 4) as usize];
        head[p + 2 * i + 1] = HEX[(b & 15) as usize];
    }
    p += (bytes.len() * 2).max(20) + 1;
    let m = insn.mnemonic().as_bytes();
    if syntax == Syntax::Native || m.len() > 16 {
        out.put_head(&head, p);
        write_asm(out, insn, syntax);
        return;
    }
    for (d, s) in head[p..p + 16].iter_mut().zip(m) {
        *d = *s;
    }
    p += 17;
    out.put_head(&head, p);
    write_operands(out, insn, syntax);
}

#[inline(always)]
fn push_u<S: Sink + ?Sized>(out: &mut S, v: u64) {
    if v < 10 {
        out.put(b'0' + v as u8);
    } else if v < 100 {
        out.put_ascii(&[b'0' + (v / 10) as u8, b'0' + (v % 10) as u8]);
    } else {
        push_u_long(out, v);
    }
}

#[inline(never)]
fn push_u_long<S: Sink + ?Sized>(out: &mut S, v: u64) {
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
    out.put_ascii(&buf[i..]);
}

/// `{}` of an integer, appended (no formatter).
pub fn write_int<S: Sink + ?Sized>(out: &mut S, v: i64) {
    if v < 0 {
        out.put(b'-');
    }
    push_u(out, v.unsigned_abs());
}

#[inline]
fn reg_name<S: Sink + ?Sized>(out: &mut S, file: RegFile, width: Width, half: u32) {
    let letter = match file {
        RegFile::Gpr => b'r',
        RegFile::Uniform => b'u',
    };
    out.put(letter);
    match width {
        Width::W16 => {
            push_u(out, (half >> 1) as u64);
            out.put(if half & 1 == 0 { b'l' } else { b'h' });
        }
        Width::W32 => push_u(out, (half >> 1) as u64),
        Width::W64 => {
            let n = (half >> 1) as u64;
            push_u(out, n);
            out.put(b'_');
            out.put(letter);
            push_u(out, n + 1);
        }
    }
}

/// Appends `.flag` suffixes in applegpu's order (hint, sx, abs, neg); the
/// cache hint is a `$` prefix in cryptic syntax (written by the caller).
#[inline]
fn push_flags<S: Sink + ?Sized>(out: &mut S, f: u8, syntax: Syntax) {
    if f == 0 {
        return;
    }
    if f & flags::CACHE != 0 && syntax != Syntax::Cryptic {
        out.put_ascii(b".cache");
    }
    if f & flags::DISCARD != 0 {
        out.put_ascii(b".discard");
    }
    if f & flags::SX != 0 {
        out.put_ascii(b".sx");
    }
    if f & flags::ABS != 0 {
        out.put_ascii(b".abs");
    }
    if f & flags::NEG != 0 {
        out.put_ascii(b".neg");
    }
}

/// Writes a register operand (tuples joined with `_`).
pub fn write_reg<S: Sink + ?Sized>(out: &mut S, r: &Reg, syntax: Syntax) {
    if r.flags & flags::CACHE != 0 && syntax == Syntax::Cryptic {
        out.put(b'$');
    }
    let step = r.width.halves() as u32;
    for i in 0..r.count as u32 {
        if i > 0 {
            out.put(b'_');
        }
        reg_name(out, r.file, r.width, r.half as u32 + i * step);
    }
    push_flags(out, r.flags, syntax);
}

fn write_operand<S: Sink + ?Sized>(out: &mut S, insn: &Instruction, o: &Operand, syntax: Syntax) {
    match o.kind {
        OperandKind::Reg(ref r) => write_reg(out, r, syntax),
        OperandKind::Imm(v) => {
            write_int(out, v.get());
            push_flags(out, o.flags, syntax);
        }
        OperandKind::HexImm(v) => {
            out.put_ascii(b"0x");
            push_hex(out, v.get() as u128, HEX_UPPER);
        }
        OperandKind::FloatImm(v) => {
            out.put_str(float_imm_text(v));
            push_flags(out, o.flags, syntax);
        }
        OperandKind::Target(rel) => {
            let abs = insn.addr as i64 + rel.get() as i64;
            // Python's '0x%X' % v puts the sign after the prefix.
            out.put_ascii(if abs < 0 { b"0x-" } else { b"0x" });
            push_hex(out, abs.unsigned_abs() as u128, HEX_UPPER);
        }
        OperandKind::SpecialReg(n) => {
            out.put_ascii(b"sr");
            push_u(out, n as u64);
            if let Some(name) = SR_NAMES.get(n as usize).copied().flatten() {
                out.put_ascii(b" (");
                out.put_str(name);
                out.put(b')');
            }
        }
        OperandKind::TexState(n) => {
            out.put_ascii(b"ts");
            push_u(out, n as u64);
        }
        OperandKind::SamplerState(n) => {
            out.put_ascii(b"ss");
            push_u(out, n as u64);
        }
        OperandKind::Cf(n) => {
            out.put_ascii(b"cf");
            push_u(out, n as u64);
        }
        OperandKind::Binary { value, bits } => {
            let value = value.get();
            out.put_ascii(b"0b");
            for i in (0..bits as u32).rev() {
                out.put(if (value >> i) & 1 == 1 { b'1' } else { b'0' });
            }
            if bits == 0 {
                out.put(b'0');
            }
        }
        OperandKind::Keyword(s) => out.put_str(s.get()),
    }
}
