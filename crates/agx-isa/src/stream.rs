//! Walking a code buffer exactly as applegpu's `disassemble.py` does:
//! stop after the first `stop`; when a run of zero bytes begins (the next
//! 32 bits are zero) print one empty line and skip zero halfwords; on bytes no
//! form matches, print `<disassembly failed>` and advance 2 bytes.

use crate::decode::{decode_word_into, read_word};
use crate::format::{write_addr, write_hex, write_line_parts, Syntax};
use crate::model::Instruction;

/// One step of the walk.
// Items are transient values handed straight to the caller; boxing the
// instruction would cost an allocation per instruction.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// A decoded instruction. `shown` is how many of its bytes the buffer
    /// holds (less than `len` only for an instruction cut off by the end).
    Insn { insn: Instruction, shown: u8 },
    /// A run of zero bytes begins here (applegpu prints one empty line).
    Gap { addr: u32 },
    /// Undecodable halfword at `addr` (`<disassembly failed>`); skipped 2 bytes.
    Failed {
        addr: u32,
        bytes: [u8; 2],
        shown: u8,
    },
}

impl Item {
    /// The instruction, if this item is one.
    pub fn insn(&self) -> Option<&Instruction> {
        match self {
            Item::Insn { insn, .. } => Some(insn),
            _ => None,
        }
    }
    /// Takes the instruction, if this item is one.
    pub fn into_insn(self) -> Option<Instruction> {
        match self {
            Item::Insn { insn, .. } => Some(insn),
            _ => None,
        }
    }
}

/// Iterator state of [`walk`].
pub struct Walk<'a> {
    code: &'a [u8],
    base: u32,
    p: usize,
    end: bool,
    skipping: bool,
}

/// One step of the walk when decoding into a caller-owned [`Instruction`]
/// (see [`Walk::next_into`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The instruction was decoded into the caller's buffer; `shown` bytes of
    /// it are in the code.
    Insn { shown: u8 },
    /// A run of zero bytes begins here.
    Gap { addr: u32 },
    /// Undecodable halfword.
    Failed {
        addr: u32,
        bytes: [u8; 2],
        shown: u8,
    },
}

impl Walk<'_> {
    /// The next step, decoding instructions into `insn` (reused across calls:
    /// no allocation, no copy). The fast path behind listings and benchmarks.
    #[inline]
    pub fn next_into(&mut self, insn: &mut Instruction) -> Option<Step> {
        loop {
            if self.end || self.p >= self.code.len() {
                return None;
            }
            let rest = &self.code[self.p..];
            let word = read_word(rest);
            let addr = self.base.wrapping_add(self.p as u32);
            if !self.skipping && word & 0xFFFF_FFFF == 0 {
                self.skipping = true;
                return Some(Step::Gap { addr });
            }
            if self.skipping {
                if word & 0xFFFF == 0 {
                    self.p += 2;
                    continue;
                }
                self.skipping = false;
            }
            if decode_word_into(word, addr, insn) {
                let len = insn.len as usize;
                let shown = len.min(rest.len()) as u8;
                if insn.mnemonic == "stop" {
                    self.end = true;
                }
                self.p += len;
                return Some(Step::Insn { shown });
            }
            let b0 = rest[0];
            let b1 = rest.get(1).copied().unwrap_or(0);
            let shown = rest.len().min(2) as u8;
            self.p += 2;
            return Some(Step::Failed {
                addr,
                bytes: [b0, b1],
                shown,
            });
        }
    }
}

impl Iterator for Walk<'_> {
    type Item = Item;
    fn next(&mut self) -> Option<Item> {
        let mut insn = Instruction::default();
        Some(match self.next_into(&mut insn)? {
            Step::Insn { shown } => Item::Insn { insn, shown },
            Step::Gap { addr } => Item::Gap { addr },
            Step::Failed { addr, bytes, shown } => Item::Failed { addr, bytes, shown },
        })
    }
}

/// Walks `code`; the first byte has address `base`.
pub fn walk(code: &[u8], base: u32) -> Walk<'_> {
    Walk {
        code,
        base,
        p: 0,
        end: false,
        skipping: false,
    }
}

/// Every instruction of the walk, decoded straight into the vector (no
/// per-instruction copies), and the number of `<disassembly failed>`
/// positions.
pub fn decode_all(code: &[u8], base: u32) -> (Vec<Instruction>, usize) {
    let mut out: Vec<Instruction> = Vec::with_capacity(code.len() / 6 + 16);
    let mut failed = 0;
    let mut w = walk(code, base);
    out.push(Instruction::default());
    loop {
        let last = out.len() - 1;
        match w.next_into(&mut out[last]) {
            Some(Step::Insn { .. }) => out.push(Instruction::default()),
            Some(Step::Failed { .. }) => failed += 1,
            Some(Step::Gap { .. }) => {}
            None => break,
        }
    }
    out.pop();
    (out, failed)
}

/// Appends the listing text of one [`Step`] (with newline); `insn` is the
/// buffer [`Walk::next_into`] decoded into.
pub fn write_step(out: &mut String, step: &Step, insn: &Instruction, syntax: Syntax) {
    match *step {
        Step::Insn { shown } => {
            let b = insn.bytes();
            write_line_parts(out, insn.addr, &b[..shown as usize], insn, syntax);
        }
        Step::Gap { .. } => {}
        Step::Failed { addr, bytes, shown } => write_failed(out, addr, &bytes[..shown as usize]),
    }
    out.push('\n');
}

/// `'%4x:' addr, hex, <disassembly failed>` (no newline).
fn write_failed(out: &mut String, addr: u32, bytes: &[u8]) {
    write_addr(out, addr);
    out.push(' ');
    write_hex(out, bytes);
    out.push_str(" <disassembly failed>");
}

/// Appends the listing text of one walk item (with newline).
pub fn write_item(out: &mut String, item: &Item, syntax: Syntax) {
    match item {
        Item::Insn { insn, shown } => {
            write_step(out, &Step::Insn { shown: *shown }, insn, syntax);
        }
        Item::Gap { .. } => out.push('\n'),
        Item::Failed { addr, bytes, shown } => {
            write_failed(out, *addr, &bytes[..*shown as usize]);
            out.push('\n');
        }
    }
}

/// The full text applegpu's `disassemble.py` prints for `code` (without its
/// `TODO:` debug lines), addresses starting at `base`.
pub fn disassemble_listing(code: &[u8], base: u32, syntax: Syntax) -> String {
    let mut out = String::with_capacity(code.len() * 8);
    let mut w = walk(code, base);
    let mut insn = Instruction::default();
    while let Some(step) = w.next_into(&mut insn) {
        write_step(&mut out, &step, &insn, syntax);
    }
    out
}
