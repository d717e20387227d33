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
    /// The bytes end inside the instruction: `have` of its `need` bytes are
    /// given (applegpu reads the missing ones as zeros; we never read past
    /// the input).
    Cut { have: u8, need: u8 },
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::Truncated => write!(f, "truncated instruction (fewer than 2 bytes)"),
            DecodeError::NoMatch => write!(f, "no instruction form matches these bytes"),
            DecodeError::Cut { have, need } => write!(
                f,
                "the bytes end inside an instruction: {have} of {need} bytes"
            ),
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

/// Candidate forms for each value of an instruction's first halfword, split
/// once more on a window of higher bits: for halfword `h`, `entry[h]` names a
/// bit window (`lo`, `w` bits, possibly empty) of the word and a block of
/// `sub`; the window's value `k` selects the candidate list
/// `forms[sub[base + k]..sub[base + k + 1]]`, the forms (in first-match
/// order) whose fixed bits in the halfword and, where fixed in both sizes, in
/// the window agree with it. Built once from [`FORMS`]; the window is chosen
/// per distinct halfword candidate list to minimise the longest list, so a
/// lookup tests 1–2 forms (against up to 38 with the halfword alone, ~100
/// with the first-byte table [`DISPATCH`]).
struct Dispatch16 {
    /// Per halfword: `base << 11 | w << 7 | lo`.
    entry: Vec<u32>,
    sub: Vec<u32>,
    /// The candidate lists' forms, each with its match test inline (one
    /// load fewer per lookup than indexing a per-form table).
    forms: Vec<(MatchTest, u8)>,
}

/// `word` matches form `f` iff `word & mask[long] == bits`, where `long` is
/// the length bit (the form's mask restricted to its selected size).
#[derive(Clone, Copy)]
struct MatchTest {
    mask: [u128; 2],
    bits: u128,
    length_bit: u8,
}

/// Widest window of the second-level split (bits).
const MAX_WINDOW: u32 = 8;

/// Splits the candidate list `cands` on a window of bits 16..96: returns
/// `(lo, w, lists)` with `lists[k]` the candidates compatible with window
/// value `k` (order kept).
fn split(cands: &[u8], tests: &[MatchTest]) -> (u32, u32, Vec<Vec<u8>>) {
    let sub = |lo: u32, w: u32| -> Vec<Vec<u8>> {
        (0..1u128 << w)
            .map(|k| {
                let wm = ((1u128 << w) - 1) << lo;
                let key = k << lo;
                cands
                    .iter()
                    .copied()
                    .filter(|&i| {
                        let t = &tests[i as usize];
                        // bits fixed whatever the size: a necessary condition
                        let m = t.mask[0] & t.mask[1] & wm;
                        key & m == t.bits & m
                    })
                    .collect()
            })
            .collect()
    };
    // bits fixed whatever the size, per candidate: (mask, value)
    let fixed: Vec<(u128, u128)> = cands
        .iter()
        .map(|&i| {
            let t = &tests[i as usize];
            let m = t.mask[0] & t.mask[1];
            (m, t.bits & m)
        })
        .collect();
    let mut win: Vec<(u32, u32)> = Vec::with_capacity(cands.len());
    // longest list for a window, without building the lists; stops once it
    // reaches `bound` (such a window is not chosen)
    let mut longest = |lo: u32, w: u32, bound: usize| -> usize {
        win.clear();
        win.extend(fixed.iter().map(|&(m, v)| {
            let m = (m >> lo) as u32 & ((1 << w) - 1);
            (m, (v >> lo) as u32 & m)
        }));
        if win.iter().all(|&(m, _)| m == 0) {
            return cands.len();
        }
        let mut max = 0;
        for k in 0..1u32 << w {
            let n = win.iter().filter(|&&(m, v)| k & m == v).count();
            if n > max {
                max = n;
                if max >= bound {
                    break;
                }
            }
        }
        max
    };
    let mut best = (cands.len(), 0, 16);
    if cands.len() > 1 {
        for w in 1..=MAX_WINDOW {
            for lo in 16..=96 - w {
                let l = longest(lo, w, best.0);
                if l < best.0 {
                    best = (l, w, lo);
                }
            }
            if best.0 <= 1 {
                break;
            }
        }
    }
    let (_, w, lo) = best;
    (lo, w, sub(lo, w))
}

/// A set of forms by index (161 forms).
type FormSet = [u64; 3];
const _: () = assert!(FORMS.len() <= 192);

/// A multiply-rotate hasher for [`FormSet`] keys (SipHash costs more than
/// the rest of the table build).
#[derive(Default)]
struct SetHasher(u64);

impl std::hash::Hasher for SetHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(b));
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
}

fn dispatch16() -> &'static Dispatch16 {
    static D: std::sync::OnceLock<Dispatch16> = std::sync::OnceLock::new();
    D.get_or_init(|| {
        let tests: Vec<MatchTest> = FORMS
            .iter()
            .map(|f| MatchTest {
                mask: [f.mask & size_mask(f.sizes.0), f.mask & size_mask(f.sizes.1)],
                bits: f.bits,
                length_bit: f.length_bit,
            })
            .collect();
        // The candidate list of halfword `h` is the forms of `DISPATCH`
        // (ascending: first-match order) whose fixed bits 0..16 agree with
        // `h`, as a bit set over form indices: the set of the low byte (its
        // DISPATCH list, and agreement on bits 0..8) and of the high byte
        // (agreement on bits 8..16), intersected. Distinct lists are few
        // (one block each); building the table this way takes well under a
        // millisecond at start-up, where filtering 65,536 vectors and
        // hashing them took ~5 ms (issue 15: `--disasm-only` start-up).
        let agree = |byte: u32, shift: u32| -> FormSet {
            let mut s = [0u64; 3];
            for f in FORMS.iter() {
                let m = (f.mask >> shift) as u32 & 0xFF;
                if byte & m == (f.bits >> shift) as u32 & m {
                    s[f.idx as usize / 64] |= 1 << (f.idx % 64);
                }
            }
            s
        };
        let lo: Vec<FormSet> = (0..256u32)
            .map(|b| {
                let mut s = [0u64; 3];
                for &i in DISPATCH[b as usize] {
                    s[i as usize / 64] |= 1 << (i % 64);
                }
                let a = agree(b, 0);
                [s[0] & a[0], s[1] & a[1], s[2] & a[2]]
            })
            .collect();
        let hi: Vec<FormSet> = (0..256u32).map(|b| agree(b, 8)).collect();
        let mut entry = vec![0u32; 65536];
        let mut sub = Vec::new();
        let mut forms = Vec::new();
        let mut blocks: std::collections::HashMap<
            FormSet,
            u32,
            std::hash::BuildHasherDefault<SetHasher>,
        > = Default::default();
        let mut last: Option<(FormSet, u32)> = None;
        // low byte outer: neighbouring high bytes mostly share a list
        for (b, l) in lo.iter().enumerate() {
            for (c, u) in hi.iter().enumerate() {
                let set = [l[0] & u[0], l[1] & u[1], l[2] & u[2]];
                let e = match last {
                    Some((s, e)) if s == set => e,
                    _ => *blocks.entry(set).or_insert_with(|| {
                        let cands: Vec<u8> = (0..FORMS.len() as u8)
                            .filter(|&i| set[i as usize / 64] >> (i % 64) & 1 == 1)
                            .collect();
                        let (lo, w, lists) = split(&cands, &tests);
                        let base = sub.len() as u32;
                        for l in &lists {
                            sub.push(forms.len() as u32);
                            forms.extend(l.iter().map(|&i| (tests[i as usize], i)));
                        }
                        sub.push(forms.len() as u32);
                        base << 11 | w << 7 | lo
                    }),
                };
                last = Some((set, e));
                entry[c << 8 | b] = e;
            }
        }
        Dispatch16 { entry, sub, forms }
    })
}

/// The first form matching `word`, applegpu's first-match rule.
#[inline]
pub fn match_form(word: u128) -> Option<&'static Form> {
    let d = dispatch16();
    let e = d.entry[(word & 0xFFFF) as usize];
    let (lo, w, base) = (e & 0x7F, (e >> 7) & 0xF, (e >> 11) as usize);
    let k = ((word >> lo) as u32 & ((1u32 << w) - 1)) as usize;
    let (a, b) = (d.sub[base + k] as usize, d.sub[base + k + 1] as usize);
    for (t, i) in &d.forms[a..b] {
        let long = ((word >> t.length_bit) & 1) as usize;
        if word & t.mask[long] == t.bits {
            return Some(&FORMS[*i as usize]);
        }
    }
    None
}

/// What is known about a word no form matches: its length when every form
/// of its opcode group agrees on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnknownEncoding {
    /// The group's name (its forms' common [`Category`] in lower case, or
    /// the first form's name when they differ), `None` when no form has
    /// this first byte.
    pub group: Option<&'static str>,
    /// Length in bytes, when known.
    pub len: Option<u8>,
}

/// The length rule for an undecodable word (docs/decoder.md, "Unknown
/// encodings"): the forms whose fixed bits in the first byte agree with
/// the word's ([`DISPATCH`], the opcode group: the low 7 bits and bit 7
/// select the group in applegpu's tables) each read the length from their
/// own length bit (bit 15, or 47 for the memory forms). When the group is
/// not empty and every one of its forms gives the word the same size, that
/// size is the word's length; otherwise the length is unknown.
pub fn unknown_encoding(word: u128) -> UnknownEncoding {
    let cands = DISPATCH[(word & 0xFF) as usize];
    let Some(&first) = cands.first() else {
        return UnknownEncoding {
            group: None,
            len: None,
        };
    };
    let f0 = &FORMS[first as usize];
    let size = f0.size_of(word);
    let same_size = cands
        .iter()
        .all(|&i| FORMS[i as usize].size_of(word) == size);
    let same_cat = cands
        .iter()
        .all(|&i| FORMS[i as usize].category == f0.category);
    UnknownEncoding {
        group: Some(if same_cat {
            f0.category.group_name()
        } else {
            f0.name
        }),
        len: same_size.then_some(size),
    }
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
/// Never reads past `bytes`: an instruction longer than the bytes given is
/// [`DecodeError::Cut`].
pub fn decode(bytes: &[u8], addr: u32) -> Result<Instruction, DecodeError> {
    let mut insn = Instruction::default();
    decode_into(bytes, addr, &mut insn).map(|()| insn)
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
    decode_as(form, word, addr, out);
    true
}

/// Decodes `word` with `form`, whether or not first-match would pick it
/// (native syntax decodes the forms applegpu shadows this way).
pub(crate) fn decode_as(
    form: &'static crate::forms::Form,
    word: u128,
    addr: u32,
    out: &mut Instruction,
) {
    let size = form.size_of(word);
    let raw = word & size_mask(size);
    out.addr = addr;
    out.len = size;
    out.form = form.idx;
    out.set_mnem(Mnem::form(form.idx));
    out.operands.clear();
    out.implicit.clear();
    out.set_raw(raw);
    out.raised = false;
    crate::operands::decode_into(form, raw, out);
}

/// Decodes the instruction at the start of `bytes` into `out` (see
/// [`decode_word_into`]).
pub fn decode_into(bytes: &[u8], addr: u32, out: &mut Instruction) -> Result<(), DecodeError> {
    if bytes.len() < 2 {
        return Err(DecodeError::Truncated);
    }
    if !decode_word_into(read_word(bytes), addr, out) {
        return Err(DecodeError::NoMatch);
    }
    if (out.len as usize) > bytes.len() {
        return Err(DecodeError::Cut {
            have: bytes.len() as u8,
            need: out.len,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// applegpu's rule spelled out: the first form of the table that matches.
    fn linear(word: u128) -> Option<u8> {
        FORMS.iter().find_map(|f| {
            let size = f.size_of(word);
            (word & f.mask & size_mask(size) == f.bits).then_some(f.idx)
        })
    }

    /// The two-level dispatch agrees with a linear scan of the table, on
    /// random words and on random words forced onto each form.
    #[test]
    fn dispatch_matches_linear_scan() {
        let mut next = crate::xorshift::xorshift64(0x2545_F491_4F6C_DD1D);
        let check = |w: u128| {
            let w = w & ((1u128 << 96) - 1);
            assert_eq!(match_form(w).map(|f| f.idx), linear(w), "word {w:x}");
        };
        for _ in 0..200_000 {
            check((next() as u128) | (next() as u128) << 64);
        }
        for f in FORMS.iter() {
            for i in 0..2000 {
                let mut w = (next() as u128) | (next() as u128) << 64;
                match i % 3 {
                    0 => w &= (next() as u128) | (next() as u128) << 64,
                    1 => w |= (next() as u128) | (next() as u128) << 64,
                    _ => {}
                }
                check((w & !f.mask) | f.bits);
            }
        }
    }
}
