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
    let mut buf = [0u8; 16];
    let n = bytes.len().min(12);
    buf[..n].copy_from_slice(&bytes[..n]);
    u128::from_le_bytes(buf)
}

/// The first form matching `word`, applegpu's first-match rule.
#[inline]
pub fn match_form(word: u128) -> Option<&'static Form> {
    for &i in DISPATCH[(word & 0xFF) as usize] {
        let f = &FORMS[i as usize];
        let size = f.size_of(word);
        let w = word & size_mask(size);
        if w & f.mask == f.bits {
            return Some(f);
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
    let form = match_form(word)?;
    let size = form.size_of(word);
    let raw = word & size_mask(size);
    let mut insn = Instruction {
        addr,
        len: size,
        form: form.idx,
        mnemonic: form.name,
        operands: Default::default(),
        implicit: Default::default(),
        raw,
        raised: false,
    };
    crate::operands::decode_into(form, raw, &mut insn);
    Some(insn)
}
