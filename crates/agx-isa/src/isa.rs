//! The instruction set as a value: one [`Isa`] per family (G13, Apple9),
//! with what the rest of the project asks of a family: its register file
//! and its decoder entry points (a listing with its counts). Which GPUs run
//! a family's code, and whether a timing model exists for them, are GPU
//! model data (`agx_analysis::gpu::GPU_MODELS`, each entry pointing at its
//! family value here); the decodable GPUs are derived from those entries.
//! Adding a family is one decoder module plus one value here
//! (docs/architecture.md, "Adding a GPU family").

/// An instruction-set family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// M1 (G13) and M2 (G14): dougallj/applegpu's tables.
    G13,
    /// M3 (G15), M4 (G16), A18 Pro (G17P): [`crate::apple9`].
    Apple9,
}

/// What a listing of code found (the same counts for every family).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Positions printed with an instruction text.
    pub named: usize,
    /// Positions of known length with no text (`<disassembly failed>`
    /// for G13, `unknown` for Apple9).
    pub unknown: usize,
    /// Bytes covered by the instructions and unknown positions.
    pub framed_bytes: usize,
    /// Where framing stopped before the code's end, and why (Apple9 only:
    /// a G13 walk always advances).
    pub framing_stop: Option<(usize, String)>,
}

/// One instruction-set family as data and entry points.
pub struct Isa {
    pub family: Family,
    /// Short name, e.g. "G13", "Apple9".
    pub name: &'static str,
    /// e.g. "Apple9 (M3/M4/A18 Pro)".
    pub describe: &'static str,
    /// 32-bit general registers per thread (the register file a GPU
    /// model of this family compares register counts against:
    /// `GpuModel::file_half`).
    pub gprs: u32,
    /// The listing of `code` at `base` in the family's reference syntax
    /// (`Syntax::Default` or `Cryptic`; `Native` where [`Isa::native`]),
    /// and its counts.
    pub listing: fn(&[u8], u32, crate::Syntax) -> (String, Summary),
    /// Whether `--syntax native` (assemblable text) exists for it.
    pub native: bool,
}

impl std::fmt::Debug for Isa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

fn g13_listing(code: &[u8], base: u32, syntax: crate::Syntax) -> (String, Summary) {
    let text = crate::stream::disassemble_listing(code, base, syntax);
    let (insns, failed) = crate::stream::decode_all(code, base);
    let framed_bytes = insns.iter().map(|i| i.len as usize).sum::<usize>() + 2 * failed;
    (
        text,
        Summary {
            named: insns.len(),
            unknown: failed,
            framed_bytes,
            framing_stop: None,
        },
    )
}

fn apple9_listing(code: &[u8], base: u32, syntax: crate::Syntax) -> (String, Summary) {
    let (text, l) = crate::apple9::disassemble_with(code, base, syntax == crate::Syntax::Cryptic);
    let (named, unknown, framed_bytes) = l.counts();
    let framing_stop = l.framing.map(|s| (s.offset, s.to_string()));
    (
        text,
        Summary {
            named,
            unknown,
            framed_bytes,
            framing_stop,
        },
    )
}

/// The code of G13 (M1) and G14 (M2) Mac parts: Mesa compiles both with
/// one backend and gives G14 the G13 shader library. 256 half-registers
/// (128 GPRs) per thread: the occupancy table's last row (timing.md, from
/// Mesa).
pub static G13: Isa = Isa {
    family: Family::G13,
    name: "G13",
    describe: "G13 (M1/M2)",
    gprs: 128,
    listing: g13_listing,
    native: true,
};

/// The code of M3 (G15), M4 (G16) and A18 Pro (G17P), which share the
/// Apple9 framing as far as the data go (apple9-isa.md); the register file
/// is 96 GPRs per thread (Mesa `agx_apple9_machine.h`, hardware).
pub static APPLE9: Isa = Isa {
    family: Family::Apple9,
    name: "Apple9",
    describe: "Apple9 (M3/M4/A18 Pro)",
    gprs: 96,
    listing: apple9_listing,
    native: false,
};

/// Every family, oldest first.
pub static ISAS: [&Isa; 2] = [&G13, &APPLE9];

/// Generations known to be another encoding no decoder here reads, with
/// the reason (one line).
pub static REFUSED: &[(u8, &str)] = &[(
    17,
    "M5 (G17G/G17S) code is not Apple9: its memory operations sit where Apple9 has jumps, and no public length rule exists (apple9-isa.md)",
)];

/// Why a Mac generation's code is refused, when it is known to be
/// another encoding.
pub fn refusal(generation: u8, phone: bool) -> Option<&'static str> {
    if phone {
        return None;
    }
    REFUSED.iter().find(|r| r.0 == generation).map(|r| r.1)
}

/// The family by name (`g13`, `apple9`, any case).
pub fn by_name(name: &str) -> Option<&'static Isa> {
    ISAS.iter()
        .copied()
        .find(|i| i.name.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_by_name_and_refusals() {
        assert_eq!(by_name("apple9").unwrap().family, Family::Apple9);
        assert_eq!(by_name("G13").unwrap().family, Family::G13);
        assert!(by_name("g17").is_none());
        assert!(refusal(17, false).unwrap().contains("M5"));
        assert!(refusal(17, true).is_none());
        assert!(refusal(16, false).is_none());
    }

    #[test]
    fn instructions_know_their_isa() {
        let g13 = crate::decode(&[0x88, 0x00], 0).unwrap();
        assert_eq!(g13.isa().family, Family::G13);
        // an Apple9 mov_imm + stop
        let l = crate::apple9::walk(&[0x04, 0x00, 0x0e, 0x00, 0x00, 0x00], 0);
        assert!(!l.items.is_empty());
        assert!(l.items.iter().all(|i| i.isa().family == Family::Apple9));
    }

    #[test]
    fn listings_count_alike() {
        // an Apple9 mov_imm + stop; the same bytes are no G13 stop
        let code = [0x04, 0x00, 0x0e, 0x00, 0x00, 0x00];
        let (text, s) = (APPLE9.listing)(&code, 0, crate::Syntax::Default);
        assert_eq!(s.named, 2, "{text}");
        assert_eq!(s.framed_bytes, 6);
        let (_, s) = (G13.listing)(&[0x88, 0x00], 0, crate::Syntax::Default);
        assert_eq!((s.named, s.framed_bytes), (1, 2));
    }
}
