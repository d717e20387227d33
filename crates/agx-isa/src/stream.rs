//! Walking a code buffer exactly as applegpu's `disassemble.py` does:
//! stop after the first `stop`; when a run of zero bytes begins (the next
//! 32 bits are zero) print one empty line and skip zero halfwords; on bytes no
//! form matches, print `<disassembly failed>` and advance 2 bytes.
//!
//! A walk made with [`walk_native`] differs in one point: on bytes no form
//! matches whose length is known ([`crate::decode::unknown_encoding`]) it
//! advances by that length and reports one [`Step::Failed`] covering all of
//! it (native syntax prints `unknown.<group> (N bytes) 0x<hex>`); when the
//! length is not known it advances 2 bytes as applegpu does.

use crate::decode::{decode_word_into, read_word};
use crate::format::{write_addr, write_hex, write_line_parts, Syntax};
use crate::model::Instruction;
use std::fmt::Write as _;

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
    /// Undecodable bytes at `addr`: see [`Step::Failed`].
    Failed {
        addr: u32,
        bytes: [u8; 12],
        shown: u8,
        unknown: Unknown,
    },
}

/// What a length-aware walk ([`walk_native`]) knows of an undecodable
/// position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Unknown {
    /// The opcode group's name ([`crate::decode::UnknownEncoding::group`]).
    pub group: Option<&'static str>,
    /// The encoding's length when known and the walk is length-aware:
    /// the walk skipped this many bytes. `None`: it skipped 2.
    pub len: Option<u8>,
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
    /// Skip an undecodable encoding of known length whole (native syntax).
    lengths: bool,
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
    /// Undecodable bytes at `addr`: `shown` of `bytes` are in the code
    /// (the halfword applegpu skips, or the whole encoding when
    /// `unknown.len` is known; fewer at the end of the code).
    Failed {
        addr: u32,
        bytes: [u8; 12],
        shown: u8,
        unknown: Unknown,
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
            let u = crate::decode::unknown_encoding(word);
            // an encoding cut off by the end of the code: length unknown
            let len = if self.lengths {
                u.len.filter(|&n| n as usize <= rest.len())
            } else {
                None
            };
            let skip = len.unwrap_or(2) as usize;
            let shown = rest.len().min(skip);
            let mut bytes = [0u8; 12];
            bytes[..shown].copy_from_slice(&rest[..shown]);
            self.p += skip;
            return Some(Step::Failed {
                addr,
                bytes,
                shown: shown as u8,
                unknown: Unknown {
                    group: u.group,
                    len,
                },
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
            Step::Failed {
                addr,
                bytes,
                shown,
                unknown,
            } => Item::Failed {
                addr,
                bytes,
                shown,
                unknown,
            },
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
        lengths: false,
    }
}

/// Walks `code` as [`walk`] does, except that an undecodable encoding whose
/// length is known is skipped whole (one [`Step::Failed`] with
/// `unknown.len` set): the walk of native syntax and of the profile.
pub fn walk_native(code: &[u8], base: u32) -> Walk<'_> {
    Walk {
        lengths: true,
        ..walk(code, base)
    }
}

/// Every instruction of the walk, decoded straight into the vector (no
/// per-instruction copies), and the number of `<disassembly failed>`
/// positions.
pub fn decode_all(code: &[u8], base: u32) -> (Vec<Instruction>, usize) {
    decode_all_with(walk(code, base))
}

/// [`decode_all`] over the length-aware walk [`walk_native`]: an unknown
/// encoding of known length counts once and its bytes are skipped whole.
/// What the profile decodes.
pub fn decode_all_native(code: &[u8], base: u32) -> (Vec<Instruction>, usize) {
    decode_all_with(walk_native(code, base))
}

fn decode_all_with(mut w: Walk<'_>) -> (Vec<Instruction>, usize) {
    let mut out: Vec<Instruction> = Vec::with_capacity(w.code.len() / 6 + 16);
    let mut failed = 0;
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
    // the capacity guessed from the code size may be ~10% over
    out.shrink_to_fit();
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
        Step::Failed {
            addr,
            bytes,
            shown,
            unknown,
        } => write_failed(out, addr, &bytes[..shown as usize], unknown, syntax),
    }
    out.push('\n');
}

/// `'%4x:' addr, hex, <disassembly failed>` (no newline); in native syntax
/// `'%4x:' addr, hex, ` then [`unknown_text`].
fn write_failed(out: &mut String, addr: u32, bytes: &[u8], unknown: Unknown, syntax: Syntax) {
    write_addr(out, addr);
    out.push(' ');
    write_hex(out, bytes);
    out.push(' ');
    if syntax == Syntax::Native {
        out.push_str(&unknown_text(bytes, unknown));
    } else {
        out.push_str("<disassembly failed>");
    }
}

/// Native syntax for undecodable bytes: `unknown.<group> (N bytes) 0x<hex>`
/// when the length is known, else `unknown (length unknown) 0x<hex>` for
/// the halfword; `<hex>` is the bytes in memory order (as the listing's
/// hex column). The assembler reads it back as those bytes.
pub fn unknown_text(bytes: &[u8], unknown: Unknown) -> String {
    let mut s = String::with_capacity(48);
    match (unknown.len, unknown.group) {
        (Some(n), Some(g)) => {
            let _ = write!(s, "unknown.{g} ({n} bytes) 0x");
        }
        (Some(n), None) => {
            let _ = write!(s, "unknown ({n} bytes) 0x");
        }
        (None, _) => s.push_str("unknown (length unknown) 0x"),
    }
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Appends the listing text of one walk item (with newline).
pub fn write_item(out: &mut String, item: &Item, syntax: Syntax) {
    match item {
        Item::Insn { insn, shown } => {
            write_step(out, &Step::Insn { shown: *shown }, insn, syntax);
        }
        Item::Gap { .. } => out.push('\n'),
        Item::Failed {
            addr,
            bytes,
            shown,
            unknown,
        } => {
            write_failed(out, *addr, &bytes[..*shown as usize], *unknown, syntax);
            out.push('\n');
        }
    }
}

/// The full text applegpu's `disassemble.py` prints for `code` (without its
/// `TODO:` debug lines), addresses starting at `base`.
/// In native syntax the walk is [`walk_native`].
pub fn disassemble_listing(code: &[u8], base: u32, syntax: Syntax) -> String {
    let mut out = String::with_capacity(code.len() * 8);
    let mut w = if syntax == Syntax::Native {
        walk_native(code, base)
    } else {
        walk(code, base)
    };
    let mut insn = Instruction::default();
    while let Some(step) = w.next_into(&mut insn) {
        write_step(&mut out, &step, &insn, syntax);
    }
    out
}
