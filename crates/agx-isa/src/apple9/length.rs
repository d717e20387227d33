//! The Apple9 length rule: how many bytes the instruction at a position
//! holds, from its first bytes. Written from the facts in
//! `shared/reference/apple9-isa.md` and the corpus README's "Length rule"
//! table (docs/decoder.md, "Apple9"): the M3 reference's rule (TK), the
//! Mesa Apple9 encodings (MESA) and hardware measurements (HW), with the
//! two documented deviations from the pinned reference (`06 00` is 2
//! bytes, the loop update `8f x4` is 4) and the documented framing
//! conflicts, where framing stops.

/// What the rule says about one position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Len {
    /// A known length in bytes (2..=16).
    Known(u8),
    /// No source gives this encoding's length (class 7 key not in the
    /// table): framing must stop.
    Unknown { key: u16 },
    /// The bytes are one of the documented framing conflicts: sources
    /// disagree on the length, so framing stops rather than guess.
    Conflict { what: &'static str },
    /// The rule needs more bytes than the code holds (it reads bytes 0, 1,
    /// 2 and 4).
    Short,
}

/// Where a class-7 length comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src {
    /// The pinned M3 reference's table (TK @ca77778).
    Tk,
    /// A newer TK table, Mesa or hardware facts where the pinned reference
    /// has no entry or (documented deviation) another length.
    Fact(&'static str),
}

/// Class 7 (`b0 & 7 == 7`): lengths keyed on `b0 | (b1 & 0xf) << 8`.
/// The pinned reference's table (TK @ca77778), as facts (key, length).
#[rustfmt::skip]
pub static TK_TABLE: &[(u16, u8)] = &[
    (0x40f, 4), (0x50f, 4), (0x407, 6), (0x157, 6), (0x60f, 6), (0x417, 8), (0x527, 8), (0x627, 8),
    (0x7a7, 8), (0x4a7, 8), (0x5a7, 8), (0x657, 8), (0x037, 8), (0x137, 8), (0x237, 8), (0x337, 8),
    (0x637, 8), (0x0b7, 8), (0x1b7, 8), (0x2b7, 8), (0x3b7, 8), (0x6b7, 8), (0x5b7, 8), (0x7b7, 8),
    (0x03f, 8), (0x13f, 8), (0x23f, 8), (0x33f, 8), (0x63f, 8), (0x0bf, 8), (0x1bf, 8), (0x2bf, 8),
    (0x3bf, 8), (0x6bf, 8), (0x5bf, 8), (0x7bf, 8), (0x10f, 10), (0x727, 10), (0x02f, 10), (0x12f, 10),
    (0x22f, 10), (0x32f, 10), (0x19f, 10), (0x497, 10), (0x11f, 10), (0x327, 10), (0x427, 10),
    (0x1a7, 10), (0x3a7, 10), (0x0af, 10), (0x1af, 10), (0x2af, 10), (0x047, 10), (0x147, 10),
    (0x1c7, 10), (0x0c7, 10), (0x447, 10), (0x547, 10), (0x5c7, 10), (0x4c7, 10), (0x217, 10),
    (0x717, 10), (0x027, 12), (0x127, 12), (0x227, 12), (0x09f, 12), (0x01f, 12), (0x0a7, 12),
    (0x2a7, 12), (0x397, 12), (0x797, 12), (0x06f, 12), (0x517, 12), (0x48f, 14), (0x067, 14),
    (0x267, 14), (0x6a7, 14), (0x0e7, 14), (0x2e7, 14), (0x0d7, 16),
];

/// Class-7 lengths from other facts: keys the pinned reference does not
/// know, and (first row) the loop update it sizes 14.
#[rustfmt::skip]
pub static FACT_TABLE: &[(u16, u8, &str)] = &[
    (0x48f, 4, "loop update `8f x4`: 4 (Mesa loop_mask_update gtests, HW hw-loop_mask_update_bank2, newer TK)"),
    (0x00f, 10, "jmp_exec_any `0f x0`: 10 (Mesa gtest, HW hw-jump10, newer TK)"),
    (0x08f, 10, "call (immediate) `8f x0`: 10 (newer TK; Mesa push+call split of hw-direct_call14)"),
    (0x28f, 4, "ret `8f x2`: 4 (newer TK)"),
    (0x20f, 6, "call (register) `0f x2`: 6 (newer TK)"),
    (0x58f, 6, "break/unwind `8f x5`: 6 (Mesa break_mask_unwind gtests)"),
    (0x167, 14, "device atomic `67 x1`: 14 (Mesa gtests, HW hw-atomic_device14)"),
    (0x647, 12, "shuffle fill `47 x6`: 12 (newer TK)"),
    (0x6c7, 12, "shuffle fill `c7 x6`: 12 (newer TK, HW hw-simd_shuffle_mode6_12)"),
    (0x2df, 14, "`df x2`: 14 (newer TK)"),
    (0xe67, 12, "tile load `67 xe`: 12 (HW hw-fragment_tile_load12)"),
    (0x2cf, 12, "matrix multiply-accumulate `cf x2`: 12 (HW hw-matrix_mac12)"),
];

/// The documented framing conflicts (`apple9-isa.md` "Documented
/// conflicts", corpus README "Known disagreements"): byte strings whose
/// length the sources disagree on. Framing stops at them with a warning.
#[rustfmt::skip]
pub static CONFLICTS: &[(&[u8], &str)] = &[
    (&[0xf9, 0x15, 0x2f, 0x8d, 0x00, 0x02, 0x00, 0x00], "float2_project: Mesa 8 bytes, TK rule 6"),
    (&[0x10, 0x03, 0x1c, 0x05, 0x03, 0xc0], "half-precision ALU (m3 form): hardware 6 bytes, TK rule 12"),
    (&[0x10, 0x03, 0x1d, 0x05, 0x03, 0xc0, 0x00, 0x00], "half-precision ALU (m3 form): hardware 8 bytes, TK rule 12"),
    (&[0x32, 0x00, 0x35, 0x03, 0x22, 0x81], "carry_gen: notebooks 6 bytes, TK rule 10"),
    (
        &[0x04, 0x02, 0x00, 0x80, 0x00, 0x00, 0x82, 0x40, 0x0c, 0x01, 0x0c, 0x02],
        "op04 compiler prefix: notebooks 12 bytes, TK rule 2",
    ),
    (
        &[0x04, 0x42, 0xa2, 0x2a, 0x4f, 0x80, 0x86, 0x34, 0x00, 0x00, 0x00, 0x00],
        "op04 compiler prefix: notebooks 12 bytes, TK rule 2",
    ),
    (&[0x60, 0x00, 0xe7, 0x02], "0x60 frame word: notebooks 2, 4 or 6 bytes, TK rule reads the next instruction"),
    (
        &[0x0f, 0x05, 0x54, 0x1a, 0x8f, 0x10, 0x54, 0x54, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00],
        "call: notebooks one 14-byte instruction, Mesa + TK a 4-byte push and a 10-byte call",
    ),
];

/// The conflict whose bytes `code` starts with, if any.
pub fn conflict(code: &[u8]) -> Option<&'static str> {
    CONFLICTS
        .iter()
        .find(|(b, _)| code.starts_with(b))
        .map(|&(_, w)| w)
}

/// The class-7 table lookup: (length, where it comes from).
pub fn class7(key: u16) -> Option<(u8, Src)> {
    if let Some(&(_, l, why)) = FACT_TABLE.iter().find(|r| r.0 == key) {
        return Some((l, Src::Fact(why)));
    }
    TK_TABLE
        .iter()
        .find(|r| r.0 == key)
        .map(|&(_, l)| (l, Src::Tk))
}

/// The length of the instruction at the start of `code` (never reads past
/// its end).
pub fn length(code: &[u8]) -> Len {
    if let Some(what) = conflict(code) {
        return Len::Conflict { what };
    }
    rule(code, false).unwrap_or(Len::Short)
}

/// The rule; `pinned`: the pinned reference's own (no deviations, no
/// facts beyond its table). `None`: it would read past `code`.
fn rule(code: &[u8], pinned: bool) -> Option<Len> {
    let g = |i: usize| code.get(i).copied();
    let b0 = g(0)?;
    let n = match b0 & 7 {
        0 | 1 => {
            let b2 = g(2)?;
            if b2 & 4 == 0 {
                4
            } else {
                let b4 = g(4)?;
                if b2 & 3 == 1 && b4 & 2 != 0 {
                    12
                } else {
                    6 + 2 * (b4 & 3)
                }
            }
        }
        2 => {
            if g(2)? & 1 == 0 {
                6
            } else {
                let b4 = g(4)?;
                if b4 & 2 == 0 {
                    8
                } else if b4 & 1 == 0 {
                    10
                } else {
                    14
                }
            }
        }
        3 => {
            if g(2)? & 6 != 6 {
                4
            } else {
                10
            }
        }
        4 => {
            if g(1)? & 0x80 == 0 {
                2
            } else {
                match g(2)? & 3 {
                    0 => 4,
                    1 | 2 => 8,
                    _ => 10,
                }
            }
        }
        5 => 14,
        6 => {
            let b1 = g(1)?;
            // deviation: a lone `06 00` is a 2-byte unit (APPLE-T: Xcode
            // lists it as its own instruction; newer TK); the pinned
            // reference frames it as 4
            if !pinned && b0 == 0x06 && b1 == 0 {
                2
            } else if b1 == 0 {
                4
            } else {
                8
            }
        }
        _ => {
            let key = b0 as u16 | ((g(1)? as u16 & 0xf) << 8);
            let found = if pinned {
                TK_TABLE.iter().find(|r| r.0 == key).map(|r| r.1)
            } else {
                class7(key).map(|r| r.0)
            };
            match found {
                Some(l) => l,
                None => return Some(Len::Unknown { key }),
            }
        }
    };
    Some(Len::Known(n))
}

/// The pinned reference's own length rule (TK @ca77778), for comparing
/// framings in tests and docs: `None` where it has no entry (it prints
/// `Unrecognized opcode`) or would read past `code`.
pub fn reference_length(code: &[u8]) -> Option<u8> {
    match rule(code, true)? {
        Len::Known(n) => Some(n),
        _ => None,
    }
}
