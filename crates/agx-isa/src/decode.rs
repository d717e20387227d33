//! bytes → [`Instruction`]: first-match over the form table, then per-kind
//! operand decoding (operands.rs) and per-class mnemonic rules.

use crate::forms::{Form, DISPATCH, FORMS};
use crate::model::*;

/// Why a decode failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// Fewer than 2 bytes available.
    Truncated,
    /// No form matches these bytes (applegpu prints `<disassembly failed>`).
    NoMatch,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::Truncated => write!(f, "truncated instruction (fewer than 2 bytes)"),
            DecodeError::NoMatch => write!(f, "no instruction form matches these bytes"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Reads up to 12 bytes little-endian, zero-extended (applegpu's
/// `opcode_to_number`).
#[inline]
pub fn read_word(bytes: &[u8]) -> u128 {
    if let Some(b) = bytes.first_chunk::<16>() {
        // one unaligned 16-byte load (no variable-length copy)
        return u128::from_le_bytes(*b) & ((1u128 << 96) - 1);
    }
    let mut buf = [0u8; 16];
    let n = bytes.len().min(12);
    buf[..n].copy_from_slice(&bytes[..n]);
    u128::from_le_bytes(buf)
}

/// Candidate forms for each value of an instruction's first halfword: the
/// forms (in first-match order) whose fixed bits in the low 16 bits agree
/// with it. Built once from [`FORMS`] (about 10 ms); typically 1–3 candidates,
/// against up to ~100 for the first-byte table [`DISPATCH`].
struct Dispatch16 {
    /// `start[h]..start[h + 1]` indexes `forms`.
    start: Vec<u32>,
    forms: Vec<u8>,
    /// Per form (by index): the match test with the size mask folded in.
    tests: Vec<MatchTest>,
}

/// `word` matches form `f` iff `word & mask[long] == bits`, where `long` is
/// the length bit (the form's mask restricted to its selected size).
struct MatchTest {
    mask: [u128; 2],
    bits: u128,
    length_bit: u8,
}

fn dispatch16() -> &'static Dispatch16 {
    static D: std::sync::OnceLock<Dispatch16> = std::sync::OnceLock::new();
    D.get_or_init(|| {
        let mut start = Vec::with_capacity(65537);
        let mut forms = Vec::with_capacity(65536 * 3);
        for h in 0u32..65536 {
            start.push(forms.len() as u32);
            for &i in DISPATCH[(h & 0xFF) as usize] {
                let f = &FORMS[i as usize];
                let m = (f.mask & 0xFFFF) as u32;
                if h & m == (f.bits & 0xFFFF) as u32 {
                    forms.push(i);
                }
            }
        }
        start.push(forms.len() as u32);
        let tests = FORMS
            .iter()
            .map(|f| MatchTest {
                mask: [f.mask & size_mask(f.sizes.0), f.mask & size_mask(f.sizes.1)],
                bits: f.bits,
                length_bit: f.length_bit,
            })
            .collect();
        Dispatch16 {
            start,
            forms,
            tests,
        }
    })
}

/// The first form matching `word`, applegpu's first-match rule.
#[inline]
pub fn match_form(word: u128) -> Option<&'static Form> {
    let d = dispatch16();
    let h = (word & 0xFFFF) as usize;
    let (a, b) = (d.start[h] as usize, d.start[h + 1] as usize);
    for &i in &d.forms[a..b] {
        let t = &d.tests[i as usize];
        let long = ((word >> t.length_bit) & 1) as usize;
        if word & t.mask[long] == t.bits {
            return Some(&FORMS[i as usize]);
        }
    }
    None
}

#[inline]
pub(crate) fn size_mask(size: u8) -> u128 {
    if size >= 16 {
        u128::MAX
    } else {
        (1u128 << (size as u32 * 8)) - 1
    }
}

/// Decodes the instruction at the start of `bytes`, printed at `addr`.
pub fn decode(bytes: &[u8], addr: u32) -> Result<Instruction, DecodeError> {
    if bytes.len() < 2 {
        return Err(DecodeError::Truncated);
    }
    decode_word(read_word(bytes), addr).ok_or(DecodeError::NoMatch)
}

/// Decodes the instruction in the (zero-extended) 12-byte `word`.
pub fn decode_word(word: u128, addr: u32) -> Option<Instruction> {
    let mut insn = Instruction::default();
    decode_word_into(word, addr, &mut insn).then_some(insn)
}

/// Decodes `word` into `out`, reusing its storage (no copy, no
/// re-initialisation of the operand arrays): the fast path, as iced-x86's
/// `decode_out`. Returns false (leaving `out` unspecified) when no form
/// matches.
#[inline]
pub fn decode_word_into(word: u128, addr: u32, out: &mut Instruction) -> bool {
    let Some(form) = match_form(word) else {
        return false;
    };
    let size = form.size_of(word);
    let raw = word & size_mask(size);
    out.addr = addr;
    out.len = size;
    out.form = form.idx;
    out.mnemonic = form.name;
    out.operands.clear();
    out.implicit.clear();
    out.raw = raw;
    out.raised = false;
    crate::operands::decode_into(form, raw, out);
    true
}

/// Decodes the instruction at the start of `bytes` into `out` (see
/// [`decode_word_into`]).
pub fn decode_into(bytes: &[u8], addr: u32, out: &mut Instruction) -> Result<(), DecodeError> {
    if bytes.len() < 2 {
        return Err(DecodeError::Truncated);
    }
    if decode_word_into(read_word(bytes), addr, out) {
        Ok(())
    } else {
        Err(DecodeError::NoMatch)
    }
}
