//! Walking a code buffer exactly as applegpu's `disassemble.py` does:
//! stop after the first `stop`; when a run of zero bytes begins (the next
//! 32 bits are zero) print one empty line and skip zero halfwords; on bytes no
//! form matches, print `<disassembly failed>` and advance 2 bytes.
//!
//! One difference from applegpu, which reads bytes past the end of the
//! buffer as zeros: a walk never reads past the code it is given. Where the
//! code ends inside an instruction (its length, or 2 bytes for a position
//! no form matches, is more than the bytes left; or an unknown encoding of
//! known length is cut) the walk stops before that instruction and
//! [`Walk::cut`] says where and how many bytes are missing: the listing
//! stops there and the caller reports the error (docs/decoder.md, "Cut
//! code").
//!
//! A walk made with [`walk_native`] differs in one point: on bytes no form
//! matches whose length is known ([`crate::decode::unknown_encoding`]) it
//! advances by that length and reports one [`Step::Failed`] covering all of
//! it (native syntax prints `unknown.<group> (N bytes) 0x<hex>`); when the
//! length is not known it advances 2 bytes as applegpu does.

use crate::decode::{decode_as, match_form, read_word};
use crate::format::{write_addr, write_hex, write_line_parts, Sink, Syntax};
use crate::model::Instruction;
use std::fmt::Write as _;

/// One step of the walk.
// Items are transient values handed straight to the caller; boxing the
// instruction would cost an allocation per instruction.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// A decoded instruction. `shown` is how many of its bytes the buffer
    /// holds: always `len` (a walk stops before an instruction the code
    /// ends inside, [`Walk::cut`]).
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
#[derive(Clone, Copy)]
pub struct Walk<'a> {
    code: &'a [u8],
    base: u32,
    p: usize,
    end: bool,
    skipping: bool,
    /// Skip an undecodable encoding of known length whole (native syntax).
    lengths: bool,
    /// `code` is a prefix of the code ([`Walk::continue_on`]): stop where
    /// fewer than [`LOOKAHEAD`] bytes are left.
    prefix: bool,
    /// Where the code ended inside an instruction (the walk stopped there).
    cut: Option<Cut>,
}

/// Code that ends inside an instruction: the instruction at `addr` needs
/// `need` bytes and the code holds `have` (< `need`) of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cut {
    pub addr: u32,
    pub have: u8,
    pub need: u8,
}

impl std::fmt::Display for Cut {
    /// `the code ends inside an instruction at 0x92: 1 of 2 bytes`
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the code ends inside an instruction at {:#x}: {} of {} bytes",
            self.addr, self.have, self.need
        )
    }
}

/// Bytes a step reads at most (one 12-byte word): a walk over a prefix of
/// the code stops where fewer are left, since every decision of a step
/// (gap, zero skipping, form, length, bytes shown) depends only on them.
pub const LOOKAHEAD: usize = 12;

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
    /// `unknown.len` is known).
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
        self.step(Target::Decode(insn))
    }

    /// The next step without decoding the instruction's operands: the same
    /// steps, positions and lengths as [`Walk::next_into`], at a fraction of
    /// the cost (the form is matched, nothing decoded). An instruction comes
    /// back as its word, address and form, for [`Skim::decode`] to decode
    /// later, on any thread: the listing scans the code on one thread and
    /// decodes and formats batches of it on the others.
    #[inline]
    pub fn skim(&mut self) -> Option<Skim> {
        let mut found = None;
        let step = self.step(Target::Form(&mut found))?;
        Some(match (found, step) {
            (Some((word, addr, form)), Step::Insn { shown }) => Skim::Insn {
                word,
                addr,
                shown,
                form,
            },
            _ => Skim::Other(step),
        })
    }

    /// Offset in this walk's code of the next step.
    pub fn position(&self) -> usize {
        self.p
    }

    /// Where the code ended inside an instruction, once the walk reached it
    /// (the walk stopped before that instruction).
    pub fn cut(&self) -> Option<Cut> {
        self.cut
    }

    /// Whether the walk is over (a `stop`, a cut, or the end of the whole
    /// code).
    pub fn ended(&self) -> bool {
        self.end || (!self.prefix && self.p >= self.code.len())
    }

    /// This walk continued on `code`: the rest of the code from this walk's
    /// [`Walk::position`] on when `whole`, else a prefix of it. A walk over
    /// a prefix stops (returns `None` with [`Walk::ended`] false) where
    /// fewer than [`LOOKAHEAD`] bytes are left; continue it in turn on the
    /// bytes from its position on followed by more code. Reading the code in
    /// pieces this way gives the steps of one walk over all of it (a walk
    /// over no code, `continue_on(&[], false)`, keeps a walk's state while
    /// its buffer is refilled).
    pub fn continue_on<'b>(&self, code: &'b [u8], whole: bool) -> Walk<'b> {
        Walk {
            code,
            base: self.base.wrapping_add(self.p as u32),
            p: 0,
            end: self.end,
            skipping: self.skipping,
            lengths: self.lengths,
            prefix: !whole,
            cut: self.cut,
        }
    }

    /// Stops the walk at a cut instruction.
    #[cold]
    fn stop_cut(&mut self, addr: u32, have: usize, need: usize) -> Option<Step> {
        self.end = true;
        self.cut = Some(Cut {
            addr,
            have: have as u8,
            need: need as u8,
        });
        None
    }

    #[inline(always)]
    fn step(&mut self, target: Target<'_>) -> Option<Step> {
        loop {
            if self.end || self.p >= self.code.len() {
                return None;
            }
            if self.prefix && self.code.len() - self.p < LOOKAHEAD {
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
            if rest.len() < 2 {
                // no instruction is shorter than 2 bytes
                return self.stop_cut(addr, rest.len(), 2);
            }
            if let Some(form) = match_form(word) {
                // a prefix walk stops LOOKAHEAD bytes before its end: only
                // the whole code's last bytes can cut an instruction
                let need = form.size_of(word) as usize;
                if need > rest.len() {
                    return self.stop_cut(addr, rest.len(), need);
                }
                // `stop` ends the walk; only the form called `stop` decodes
                // to that mnemonic (test `stop_mnemonic_is_its_form`)
                let (len, stop) = match target {
                    Target::Decode(insn) => {
                        decode_as(form, word, addr, insn);
                        (insn.len as usize, insn.mnemonic() == "stop")
                    }
                    Target::Form(found) => {
                        *found = Some((word, addr, form));
                        (form.size_of(word) as usize, form.name == "stop")
                    }
                };
                let shown = len.min(rest.len()) as u8;
                if stop {
                    self.end = true;
                }
                self.p += len;
                return Some(Step::Insn { shown });
            }
            let u = crate::decode::unknown_encoding(word);
            // an unknown encoding of known length cut by the end of the
            // code (both walks: the same cut whatever the syntax)
            if let Some(n) = u.len.filter(|&n| n as usize > rest.len()) {
                return self.stop_cut(addr, rest.len(), n as usize);
            }
            let len = if self.lengths { u.len } else { None };
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

/// A step of [`Walk::skim`]: all that decoding it needs, so that it can be
/// decoded anywhere ([`Skim::decode`]), without the code.
#[derive(Clone, Copy, Debug)]
pub enum Skim {
    /// An instruction of form `form`: its word (zero-extended), address,
    /// and the bytes of it the code holds.
    Insn {
        word: u128,
        addr: u32,
        shown: u8,
        form: &'static crate::forms::Form,
    },
    /// A step that is not an instruction (`Step::Gap`, `Step::Failed`).
    Other(Step),
}

impl Skim {
    /// The step of [`Walk::next_into`] for this step of [`Walk::skim`],
    /// decoding an instruction into `insn`.
    #[inline]
    pub fn decode(&self, insn: &mut Instruction) -> Step {
        match *self {
            Skim::Insn {
                word,
                addr,
                shown,
                form,
            } => {
                decode_as(form, word, addr, insn);
                Step::Insn { shown }
            }
            Skim::Other(step) => step,
        }
    }
}

/// What [`Walk::step`] does with an instruction.
enum Target<'x> {
    /// Decode it into this buffer.
    Decode(&'x mut Instruction),
    /// Only note its word, address and form.
    Form(&'x mut Option<(u128, u32, &'static crate::forms::Form)>),
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
        prefix: false,
        cut: None,
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
/// Code that ends inside an instruction stops the decode before it
/// ([`decode_checked`] says where).
pub fn decode_all(code: &[u8], base: u32) -> (Vec<Instruction>, usize) {
    let d = decode_all_with(walk(code, base));
    (d.insns, d.failed)
}

/// [`decode_all`] over the length-aware walk [`walk_native`]: an unknown
/// encoding of known length counts once and its bytes are skipped whole.
/// What the profile decodes.
pub fn decode_all_native(code: &[u8], base: u32) -> (Vec<Instruction>, usize) {
    let d = decode_all_with(walk_native(code, base));
    (d.insns, d.failed)
}

/// Code is refused as not machine code when at least this share (percent)
/// of its positions do not decode. Real kernels decode fully (the Mesa and
/// real corpora: 0 undecodable positions); random bytes leave ~60–65%
/// undecodable, text and images more. A quarter leaves room for code with
/// a few encodings our tables do not know (reported, exit code 4) and
/// refuses data long before it could pass for code (docs/decoder.md, "Code
/// that is not code").
pub const NOT_CODE_PERCENT: usize = 25;

/// The share of `failed` positions among `insns + failed`, rounded, when it
/// is [`NOT_CODE_PERCENT`] or more (the code is refused as not code);
/// `None` when the code passes (or holds nothing).
pub fn not_code_percent(insns: usize, failed: usize) -> Option<usize> {
    let total = insns + failed;
    (total > 0 && failed * 100 >= total * NOT_CODE_PERCENT)
        .then(|| (failed * 100 + total / 2) / total)
}

/// What decoding a piece of code gave: the instructions, the number of
/// positions that did not decode, and where the code ended inside an
/// instruction (if it did; the instructions stop before it).
#[derive(Clone, Debug, Default)]
pub struct Decoded {
    pub insns: Vec<Instruction>,
    pub failed: usize,
    pub cut: Option<Cut>,
}

/// [`decode_all_native`] with the cut, if any: what the profile decodes.
pub fn decode_checked(code: &[u8], base: u32) -> Decoded {
    decode_all_with(walk_native(code, base))
}

fn decode_all_with(mut w: Walk<'_>) -> Decoded {
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
    Decoded {
        insns: out,
        failed,
        cut: w.cut,
    }
}

/// Appends the listing text of one [`Step`] (with newline); `insn` is the
/// buffer [`Walk::next_into`] decoded into.
pub fn write_step<S: Sink + ?Sized>(out: &mut S, step: &Step, insn: &Instruction, syntax: Syntax) {
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
    out.put(b'\n');
}

/// `'%4x:' addr, hex, <disassembly failed>` (no newline); in native syntax
/// `'%4x:' addr, hex, ` then [`unknown_text`].
fn write_failed<S: Sink + ?Sized>(
    out: &mut S,
    addr: u32,
    bytes: &[u8],
    unknown: Unknown,
    syntax: Syntax,
) {
    write_addr(out, addr);
    out.put(b' ');
    write_hex(out, bytes);
    out.put(b' ');
    if syntax == Syntax::Native {
        out.put_str(&unknown_text(bytes, unknown));
    } else {
        out.put_str("<disassembly failed>");
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
pub fn write_item<S: Sink + ?Sized>(out: &mut S, item: &Item, syntax: Syntax) {
    match item {
        Item::Insn { insn, shown } => {
            write_step(out, &Step::Insn { shown: *shown }, insn, syntax);
        }
        Item::Gap { .. } => out.put(b'\n'),
        Item::Failed {
            addr,
            bytes,
            shown,
            unknown,
        } => {
            write_failed(out, *addr, &bytes[..*shown as usize], *unknown, syntax);
            out.put(b'\n');
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forms::FORMS;

    /// [`Walk::skim`] ends the walk on the form called `stop`, the decoding
    /// walk on the mnemonic `stop`: the same instructions.
    #[test]
    fn stop_mnemonic_is_its_form() {
        let mut next = crate::xorshift::xorshift64(0x9E37_79B9_7F4A_7C15);
        for f in FORMS.iter() {
            for _ in 0..3000 {
                let w = ((next() as u128) | (next() as u128) << 64) & ((1u128 << 96) - 1);
                let w = (w & !f.mask) | f.bits;
                let Some(g) = match_form(w) else { continue };
                let mut insn = Instruction::default();
                decode_as(g, w, 0, &mut insn);
                assert_eq!(insn.mnemonic() == "stop", g.name == "stop", "word {w:x}");
                assert_eq!(insn.len, g.size_of(w), "word {w:x}");
            }
        }
    }

    /// Scanning with [`Walk::skim`] and decoding its steps with
    /// [`Skim::decode`] gives the steps of one decoding walk, on
    /// random bytes (gaps, failures, cut-off tails) in both walk kinds.
    #[test]
    fn skim_then_decode_matches_next_into() {
        let mut next = crate::xorshift::xorshift64(0x2545_F491_4F6C_DD1D);
        for round in 0..60 {
            let n = 64 + (next() % 4000) as usize;
            let mut code: Vec<u8> = (0..n).map(|_| next() as u8).collect();
            // zero runs, and no `stop` (0x88 0x00) so the walks go far
            for i in 0..n {
                if next().is_multiple_of(23) {
                    let l = (next() % 12) as usize;
                    for b in code.iter_mut().skip(i).take(l) {
                        *b = 0;
                    }
                }
                if code[i] & 0x7F == 0x08 {
                    code[i] ^= 0x10;
                }
            }
            let first = if round % 2 == 0 {
                walk(&code, 0x100)
            } else {
                walk_native(&code, 0x100)
            };
            let mut whole = first;
            let mut insn = Instruction::default();
            let mut expect = Vec::new();
            while let Some(s) = whole.next_into(&mut insn) {
                let mut t = String::new();
                write_step(&mut t, &s, &insn, Syntax::Default);
                expect.push((s, t));
            }
            let mut scan = first;
            let mut got = Vec::new();
            while let Some(k) = scan.skim() {
                let s = k.decode(&mut insn);
                let mut t = String::new();
                write_step(&mut t, &s, &insn, Syntax::Default);
                got.push((s, t));
            }
            assert_eq!(got, expect);

            // the same code read in pieces of random sizes
            let mut got = Vec::new();
            let mut buf: Vec<u8> = Vec::new();
            let mut fed = 0;
            let mut w = first.continue_on(&[], false);
            loop {
                let more = 1 + (next() % 40) as usize;
                let to = (fed + more).min(code.len());
                buf.extend_from_slice(&code[fed..to]);
                fed = to;
                let whole = fed == code.len();
                let mut part = w.continue_on(&buf, whole);
                while let Some(k) = part.skim() {
                    let s = k.decode(&mut insn);
                    let mut t = String::new();
                    write_step(&mut t, &s, &insn, Syntax::Default);
                    got.push((s, t));
                }
                if part.ended() {
                    break;
                }
                assert!(!whole, "a whole walk ends");
                let used = part.position();
                w = part.continue_on(&[], false);
                buf.drain(..used);
            }
            assert_eq!(got, expect);
        }
    }
}
