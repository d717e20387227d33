//! Apple9: the instruction encoding of M3 (G15), M4 (G16) and A18 Pro
//! (G17P) GPUs. A decoder of its own, beside the G13 one:
//!
//! - [`length`]: the length rule, from every fact in
//!   `shared/reference/apple9-isa.md` and the corpus README (the M3
//!   reference's rule, Mesa's Apple9 encodings, hardware measurements),
//!   with its documented deviations from the pinned reference and its
//!   documented framing conflicts;
//! - [`forms`]: the 57 instruction forms the M3 reference disassembler
//!   (TellowKrinkle/applegpu branch `M3`) decodes, printed in its syntax;
//! - [`flow`](fn@flow): control flow (if/else/pop/while/break, jumps,
//!   call, ret) from the Mesa Apple9 facts, in a syntax of ours;
//! - [`walk`] and [`write_listing`]: the listing, line for line as the
//!   reference prints it where both frame alike (docs/decoder.md, "Apple9").
//!
//! Never panics on any input (fuzzed: fuzz/fuzz_targets/apple9.rs).

pub mod facts;
mod fields;
pub mod forms;
pub mod length;

pub use length::{length, Len};

/// One position of a walk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// An instruction with a text: a reference form or control flow.
    Insn {
        addr: u32,
        len: u8,
        /// The reference's `Length mismatch (expected len, got form)`
        /// when the form's own size differs from the framed length.
        mismatch: Option<u8>,
        /// Mnemonic and operands (empty operands already left out).
        mnem: String,
        operands: Vec<String>,
        kind: Kind,
    },
    /// Bytes of known length that no form decodes (or whose operands the
    /// reference cannot print): one `unknown` line.
    Unknown { addr: u32, len: u8 },
    /// A run of zero bytes begins (one empty line, zero half-words skipped).
    Gap { addr: u32 },
}

impl Item {
    /// Address and length of a framed position (an instruction or an
    /// `unknown` one), with its bytes in `code` placed at `base`; `None`
    /// for a gap.
    pub fn framed<'c>(&self, code: &'c [u8], base: u32) -> Option<(u32, u8, &'c [u8])> {
        let (addr, len) = match self {
            Item::Gap { .. } => return None,
            Item::Insn { addr, len, .. } | Item::Unknown { addr, len } => (*addr, *len),
        };
        let p = addr.wrapping_sub(base) as usize;
        Some((addr, len, code.get(p..p + len as usize).unwrap_or(&[])))
    }

    /// The instruction-set family it belongs to: this type is the Apple9
    /// decoder's (its form indexes the Apple9 form table).
    pub fn isa(&self) -> &'static crate::isa::Isa {
        &crate::isa::APPLE9
    }
}

/// What an instruction is, for counting and the CFG.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One of the reference's forms (index into [`forms::FORMS`]).
    Form(u8),
    /// Control flow; `offset`: a branch offset relative to the
    /// instruction (jumps, call).
    Flow { offset: Option<i64> },
}

/// Why framing stopped before the end of the code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stop {
    /// Byte offset in the code and address.
    pub offset: usize,
    pub addr: u32,
    pub reason: String,
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Apple9 framing stops at 0x{:x}: {}",
            self.addr, self.reason
        )
    }
}

/// A whole walk: the items, whether a `stop` ended it, and where framing
/// stopped when it could not go on.
#[derive(Clone, Debug, Default)]
pub struct Listing {
    pub items: Vec<Item>,
    /// The address of the `stop` that ended the walk.
    pub stop: Option<u32>,
    pub framing: Option<Stop>,
}

impl Listing {
    /// (instructions with a text, unknown positions, bytes framed).
    pub fn counts(&self) -> (usize, usize, usize) {
        let (mut named, mut unknown, mut bytes) = (0, 0, 0);
        for it in &self.items {
            match it {
                Item::Insn { len, .. } => {
                    named += 1;
                    bytes += *len as usize;
                }
                Item::Unknown { len, .. } => {
                    unknown += 1;
                    bytes += *len as usize;
                }
                Item::Gap { .. } => {}
            }
        }
        (named, unknown, bytes)
    }
}

fn word(b: &[u8]) -> u128 {
    let mut n = 0u128;
    for (i, &x) in b.iter().take(16).enumerate() {
        n |= (x as u128) << (8 * i);
    }
    n
}

/// Control flow from the Mesa Apple9 facts (niklassheth/mesa
/// `agx_apple9_machine.c` encodings and `test-apple9.cpp` vectors, MIT)
/// and the newer TK length table: mnemonic and branch offset. The
/// mask-stack forms print their payload bits raw (`0x…`: the Mesa facts
/// give their lengths and a few encodings, not a field layout we could
/// print as operands).
pub fn flow(b: &[u8]) -> Option<(&'static str, Option<i64>)> {
    if b.len() < 2 || b[0] & 7 != 7 {
        return None;
    }
    let key = b[0] as u16 | ((b[1] as u16 & 0xf) << 8);
    let name = match key {
        0x50f => "push_exec",
        0x40f => "else_exec",
        0x60f => "pop_exec",
        0x48f => "while_exec",
        0x58f => "break_exec",
        0x00f => "jmp_exec_any",
        0x10f => "jmp_exec_none",
        0x08f => "call",
        0x28f => "ret",
        _ => return None,
    };
    let offset = match key {
        // a signed 48-bit offset in bytes 3..9 (Mesa jmp_any_-58,
        // jmp_none_92; hardware jump10)
        0x00f | 0x10f | 0x08f if b.len() >= 9 => {
            let mut v: i64 = 0;
            for (i, &x) in b[3..9].iter().enumerate() {
                v |= (x as i64) << (8 * i);
            }
            Some((v << 16) >> 16)
        }
        _ => None,
    };
    Some((name, offset))
}

/// Walks `code` placed at `base` as the reference does (stop ends it;
/// zero runs print one empty line), with our length rule. Never reads
/// past `code`, never panics.
pub fn walk(code: &[u8], base: u32) -> Listing {
    let mut out = Listing::default();
    let mut p = 0usize;
    let mut skipping = false;
    while p < code.len() {
        let addr = base.wrapping_add(p as u32);
        let stop_here = |reason: String| Stop {
            offset: p,
            addr,
            reason,
        };
        let len = match length(&code[p..]) {
            Len::Known(n) if p + n as usize <= code.len() => n,
            Len::Known(n) => {
                out.framing = Some(stop_here(format!(
                    "a {n}-byte instruction runs past the end of the code ({} bytes left)",
                    code.len() - p
                )));
                break;
            }
            Len::Unknown { key } => {
                out.framing = Some(stop_here(format!(
                    "no source gives the length of encoding key 0x{key:03x} (bytes {})",
                    hex_lower(&code[p..(p + 4).min(code.len())])
                )));
                break;
            }
            Len::Conflict { what } => {
                out.framing = Some(stop_here(format!("documented framing conflict: {what}")));
                break;
            }
            Len::Short => {
                out.framing = Some(stop_here(format!(
                    "the code ends inside an instruction's first bytes ({} bytes left)",
                    code.len() - p
                )));
                break;
            }
        };
        let bytes = &code[p..p + len as usize];
        let n = word(bytes);
        if !skipping && n & 0xffff_ffff == 0 {
            out.items.push(Item::Gap { addr });
            skipping = true;
        }
        if skipping {
            if n & 0xffff == 0 {
                p += 2;
                continue;
            }
            skipping = false;
        }
        let item = if let Some((i, f)) = forms::find(n) {
            let size = f.size(n);
            match f.asm(n) {
                Ok((mnem, ops)) => {
                    let is_stop = mnem == "stop";
                    let it = Item::Insn {
                        addr,
                        len,
                        mismatch: (size != len).then_some(size),
                        mnem,
                        operands: ops.into_iter().filter(|o| !o.is_empty()).collect(),
                        kind: Kind::Form(i as u8),
                    };
                    if is_stop {
                        out.items.push(it);
                        out.stop = Some(addr);
                        return out;
                    }
                    it
                }
                Err(_) => Item::Unknown { addr, len },
            }
        } else if let Some((name, offset)) = flow(bytes) {
            let operands = match (offset, name) {
                (Some(o), _) => vec![if o >= 0 {
                    format!("pc+{o}")
                } else {
                    format!("pc-{}", -o)
                }],
                (None, "ret") => vec![],
                _ => vec![format!("0x{:x}", n >> 16)],
            };
            Item::Insn {
                addr,
                len,
                mismatch: None,
                mnem: name.into(),
                operands,
                kind: Kind::Flow { offset },
            }
        } else {
            Item::Unknown { addr, len }
        };
        out.items.push(item);
        p += len as usize;
    }
    out
}

fn hex_lower(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn hex_upper(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02X}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// An operand in the reference's cryptic syntax (`APPLEGPU_CRYPTIC`): the
/// `cache` flag becomes a `$` prefix (`r3.cache.discard` → `$r3.discard`).
/// Only register operands carry a `.cache` part.
pub fn cryptic(operand: &str) -> String {
    let mut parts = operand.split('.');
    let base = parts.next().unwrap_or_default();
    let rest: Vec<&str> = parts.collect();
    if !rest.contains(&"cache") {
        return operand.to_string();
    }
    let mut s = format!("${base}");
    for p in rest.iter().filter(|p| **p != "cache") {
        s.push('.');
        s.push_str(p);
    }
    s
}

/// The asm column of an item's line (`cryptic`: [`cryptic`] operands).
pub fn asm_text(item: &Item, cryptic_syntax: bool) -> Option<String> {
    match item {
        Item::Insn { mnem, operands, .. } if cryptic_syntax => {
            let ops: Vec<String> = operands.iter().map(|o| cryptic(o)).collect();
            Some(format!("{mnem:<16} {}", ops.join(", ")))
        }
        Item::Insn { mnem, operands, .. } => Some(format!("{mnem:<16} {}", operands.join(", "))),
        Item::Unknown { len, .. } => Some(format!("{:<16} {len} bytes", "unknown")),
        Item::Gap { .. } => None,
    }
}

/// The listing text: the reference's lines (`'%4x:'`, the bytes as
/// upper-case hex left-justified to 42, the asm), `Length mismatch` lines,
/// empty lines at zero runs; where framing stopped, the reference's
/// `Unrecognized opcode` and the rest of the code as 16-byte hex rows.
/// `base`: the address of `code[0]`; `cryptic`: the reference's
/// `APPLEGPU_CRYPTIC` syntax.
pub fn write_listing(code: &[u8], base: u32, l: &Listing, cryptic: bool, out: &mut String) {
    use std::fmt::Write as _;
    for it in &l.items {
        let (addr, len) = match it {
            Item::Gap { .. } => {
                out.push('\n');
                continue;
            }
            Item::Insn { addr, len, .. } | Item::Unknown { addr, len } => (*addr, *len),
        };
        if let Some(got) = mismatch_of(it) {
            let _ = writeln!(out, "Length mismatch (expected {len}, got {got})");
        }
        let p = addr.wrapping_sub(base) as usize;
        let bytes = code.get(p..p + len as usize).unwrap_or(&[]);
        let _ = writeln!(
            out,
            "{addr:4x}: {:<42} {}",
            hex_upper(bytes),
            asm_text(it, cryptic).unwrap_or_default()
        );
    }
    if let Some(s) = &l.framing {
        out.push_str("Unrecognized opcode\n");
        for row in code[s.offset..].chunks(16) {
            out.push_str(&hex_upper(row));
            out.push('\n');
        }
    }
}

fn mismatch_of(it: &Item) -> Option<u8> {
    match it {
        Item::Insn { mismatch, .. } => *mismatch,
        _ => None,
    }
}

/// [`walk`] and [`write_listing`] in one: the listing text of `code`.
pub fn disassemble(code: &[u8], base: u32) -> (String, Listing) {
    disassemble_with(code, base, false)
}

/// [`disassemble`], in the cryptic syntax when `cryptic`.
pub fn disassemble_with(code: &[u8], base: u32, cryptic: bool) -> (String, Listing) {
    let l = walk(code, base);
    let mut s = String::new();
    write_listing(code, base, &l, cryptic, &mut s);
    (s, l)
}
