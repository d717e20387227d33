//! Assembler: applegpu-syntax text back to bytes, sharing the decoder's form
//! tables (one source of truth, two directions).
//!
//! Input: one instruction per line in the syntax the disassembler prints
//! (`.cache` or cryptic `$` register hints), `;` or `#` comments, labels
//! (`loop:`) usable as branch/call targets, blank lines, and pasted listings
//! (`  4c: 0a05...   fadd32 r1, r2, r3`: the address column places the
//! instruction, the hex column is ignored; a `<disassembly failed>` line
//! re-emits its hex column). Directives: `.org ADDR` sets the address of the
//! next instruction, `.hex 0800...` emits raw bytes.
//!
//! Addresses: the first instruction is at `base` (0 for [`assemble`]) unless
//! a listing address or `.org` says otherwise; the output's byte 0 is the
//! first placed item. Forward address jumps are zero-filled; going backwards
//! is an error. Branch targets print (and are written) as absolute `0x..`
//! addresses; a label operand becomes its address.
//!
//! Every instruction is verified: the bytes are decoded with
//! [`crate::decode_word`] and formatted, and the text must equal the input.
//! Encoding picks the shortest size that holds every field; bits no field
//! covers are 0. See `encode.rs` for the method.

mod encode;
mod parse;

use crate::model::Instruction;
use parse::{Body, Line, Tok};
use std::collections::HashMap;
use std::fmt;

pub use encode::dont_care_mask;

/// An assembly error at a line and column (1-based).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsmError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for AsmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

impl std::error::Error for AsmError {}

/// One placed item of an assembled program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    /// 1-based source line.
    pub line: usize,
    /// Absolute address.
    pub addr: u32,
    /// Length in bytes.
    pub len: u32,
    /// True for an instruction, false for raw bytes (`.hex`,
    /// `<disassembly failed>`).
    pub insn: bool,
}

/// An assembled program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// Address of `bytes[0]`.
    pub origin: u32,
    pub bytes: Vec<u8>,
    /// Instructions and raw items in address order.
    pub items: Vec<Placed>,
    /// Label addresses.
    pub labels: HashMap<String, u32>,
    /// Lines whose applegpu-syntax text also fits a form applegpu shadows
    /// (see [`crate::native`]): what was chosen, one message per line.
    pub warnings: Vec<AsmWarning>,
}

/// A line whose meaning the text does not settle, and what the assembler
/// chose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsmWarning {
    /// 1-based source line.
    pub line: usize,
    pub message: String,
}

impl fmt::Display for AsmWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Instructions written in applegpu syntax that a shadowed form prints the
/// same way: the text was assembled as the first-match form (what applegpu
/// means by it); say so, and how to write the other.
fn ambiguity_warnings(prog: &Program) -> Vec<AsmWarning> {
    use crate::decode::{decode_word, read_word, size_mask};
    use crate::forms::FORMS;
    let mut out = Vec::new();
    for it in prog.items.iter().filter(|i| i.insn) {
        let off = (it.addr - prog.origin) as usize;
        let word = read_word(&prog.bytes[off..off + it.len as usize]);
        let Some(insn) = decode_word(word, it.addr) else {
            continue;
        };
        if crate::native::native_instruction(&insn).is_some() {
            continue; // written with the shadowed form's own name
        }
        let text = crate::format_asm(&insn, crate::Syntax::Default);
        for &(_, later) in crate::native::shadowed_forms()
            .iter()
            .filter(|(e, _)| *e == insn.form)
        {
            let f = &FORMS[later as usize];
            let other = ((word & !f.mask) | f.bits) & size_mask(it.len as u8);
            let Some(o) = decode_word(other, it.addr) else {
                continue;
            };
            if o.form == insn.form && crate::format_asm(&o, crate::Syntax::Default) == text {
                let squash = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
                out.push(AsmWarning {
                    line: it.line,
                    message: format!(
                        "`{}` is also applegpu's text for `{}`; assembled as {} \
                         (in native syntax each has its own name; see docs/decoder.md)",
                        squash(&text),
                        squash(&crate::format_asm(&o, crate::Syntax::Native)),
                        insn.mnemonic(),
                    ),
                });
            }
        }
    }
    out
}

/// Assembles `text` into machine code, the first instruction at address 0.
pub fn assemble(text: &str) -> Result<Vec<u8>, AsmError> {
    assemble_at(text, 0)
}

/// Assembles `text` with the first instruction at `base` (branch targets are
/// absolute addresses; listing addresses and `.org` override `base`).
pub fn assemble_at(text: &str, base: u32) -> Result<Vec<u8>, AsmError> {
    Ok(assemble_program(text, base)?.bytes)
}

/// Assembles `text` and decodes the result: the instructions, at their
/// addresses (raw items are skipped). For tests that read like kernels.
pub fn assemble_insns(text: &str) -> Result<Vec<Instruction>, AsmError> {
    assemble_insns_at(text, 0)
}

/// As [`assemble_insns`], the first instruction at `base`.
pub fn assemble_insns_at(text: &str, base: u32) -> Result<Vec<Instruction>, AsmError> {
    let p = assemble_program(text, base)?;
    let mut out = Vec::new();
    for it in p.items.iter().filter(|i| i.insn) {
        let off = (it.addr - p.origin) as usize;
        let insn =
            crate::decode::decode(&p.bytes[off..off + it.len as usize], it.addr).map_err(|e| {
                AsmError {
                    line: it.line,
                    column: 1,
                    message: format!("internal: assembled bytes do not decode ({e})"),
                }
            })?;
        out.push(insn);
    }
    Ok(out)
}

/// Encodes a single instruction (no labels) at `pc`.
pub fn assemble_line(line: &str, pc: u32) -> Result<Vec<u8>, AsmError> {
    assemble_at(line, pc)
}

/// Every mnemonic the assembler accepts (form names and the spellings the
/// decoder prints: `.sat`, `isub`, `and`, `update_exec`, `ld_tile`...).
pub fn mnemonics() -> Vec<&'static str> {
    encode::mnemonics()
}

fn err(line: usize, column: usize, message: impl Into<String>) -> AsmError {
    AsmError {
        line,
        column,
        message: message.into(),
    }
}

/// Token texts that reference labels are replaced by the label's address
/// (`None` in the layout pass: the instruction's own address).
fn resolve(
    ops: &[Tok],
    labels: Option<&HashMap<String, u32>>,
    names: &HashMap<String, usize>,
    pc: u32,
) -> Vec<Tok> {
    ops.iter()
        .map(|t| {
            if names.contains_key(&t.text) {
                let a = labels.and_then(|l| l.get(&t.text).copied()).unwrap_or(pc);
                Tok {
                    text: format!("0x{a:X}"),
                    col: t.col,
                }
            } else {
                t.clone()
            }
        })
        .collect()
}

/// In a stream the decoder reads up to 12 bytes, so an earlier, longer form
/// can claim an instruction (or a `<disassembly failed>` halfword) through
/// the bytes of the next instruction. Where that happens, flip don't-care
/// bits of the next instruction (bits no field covers) that the claiming
/// form tests, keeping that instruction's own text.
fn fix_context(prog: &mut Program, lines: &[Line]) {
    use crate::decode::{decode_word, match_form, read_word, size_mask};
    let failed_line = |no: usize| {
        lines
            .get(no - 1)
            .is_some_and(|l| matches!(l.body, Body::Raw(_)) && l.hexlen.is_some())
    };
    for i in 0..prog.items.len() {
        let it = prog.items[i].clone();
        let Some(next) = prog.items.get(i + 1).cloned() else {
            break;
        };
        if !next.insn || next.addr != it.addr + it.len {
            continue;
        }
        let expect_fail = !it.insn && failed_line(it.line);
        if !it.insn && !expect_fail {
            continue;
        }
        let off = (it.addr - prog.origin) as usize;
        let noff = (next.addr - prog.origin) as usize;
        let nlen = next.len as usize;
        let next_word = read_word(&prog.bytes[noff..noff + nlen]);
        let Some(next_insn) = decode_word(next_word, next.addr) else {
            continue;
        };
        let next_text = crate::format_asm(&next_insn, crate::Syntax::Native);
        // bits of the next instruction outside its fixed pattern and length
        // bit (the text check below keeps its printing unchanged)
        let nf = &crate::forms::FORMS[next_insn.form as usize];
        let mut dc = size_mask(next.len as u8) & !nf.mask;
        if nf.sizes.0 != nf.sizes.1 {
            dc &= !(1u128 << nf.length_bit);
        }
        let shift = it.len * 8;
        for _ in 0..8 {
            let ctx_word = read_word(&prog.bytes[off..]);
            let own = size_mask(it.len as u8);
            let ok = match match_form(ctx_word) {
                None => expect_fail,
                Some(g) => {
                    !expect_fail
                        && g.size_of(ctx_word) as u32 == it.len
                        && match_form(ctx_word & own).map(|f| f.idx) == Some(g.idx)
                }
            };
            if ok {
                break;
            }
            let Some(g) = match_form(ctx_word) else {
                break;
            };
            // don't-care bits of the next instruction that `g` tests
            let cand = (g.mask >> shift) & dc;
            let mut flipped = false;
            let mut c = cand;
            while c != 0 {
                let bit = c & c.wrapping_neg();
                c &= !bit;
                let w = read_word(&prog.bytes[noff..noff + nlen]) ^ bit;
                let same = decode_word(w, next.addr)
                    .map(|d| crate::format_asm(&d, crate::Syntax::Native) == next_text)
                    .unwrap_or(false);
                if same {
                    let b = w.to_le_bytes();
                    prog.bytes[noff..noff + nlen].copy_from_slice(&b[..nlen]);
                    flipped = true;
                    break;
                }
            }
            if !flipped {
                break;
            }
        }
    }
}

/// Places the next item at `at`: sets the origin, or zero-fills a gap.
fn place(
    prog: &mut Program,
    origin: &mut Option<u32>,
    at: u32,
    cur: &mut u32,
    line: usize,
) -> Result<(), AsmError> {
    match *origin {
        None => {
            *origin = Some(at);
            prog.origin = at;
            *cur = at;
            Ok(())
        }
        Some(_) if at < *cur => Err(err(
            line,
            1,
            format!(
                "address 0x{at:x} is below the current address 0x{:x} (addresses must not go backwards)",
                *cur
            ),
        )),
        Some(o) => {
            prog.bytes.resize((at - o) as usize, 0);
            *cur = at;
            Ok(())
        }
    }
}

/// Assembles `text` into a [`Program`] (bytes, placement, labels).
pub fn assemble_program(text: &str, base: u32) -> Result<Program, AsmError> {
    let mut lines: Vec<Line> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let l = parse::parse_line(i + 1, raw).map_err(|(c, m)| err(i + 1, c, m))?;
        lines.push(l);
    }
    // Label names (known before their addresses).
    let mut names: HashMap<String, usize> = HashMap::new();
    for l in &lines {
        for (n, c) in &l.labels {
            if let Some(prev) = names.insert(n.clone(), l.no) {
                return Err(err(
                    l.no,
                    *c,
                    format!("label `{n}` already defined on line {prev}"),
                ));
            }
        }
    }
    let mut sizes: HashMap<usize, u32> = HashMap::new();
    let mut labels: Option<HashMap<String, u32>> = None;
    for _pass in 0..4 {
        let mut prog = Program {
            origin: base,
            bytes: Vec::new(),
            items: Vec::new(),
            labels: HashMap::new(),
            warnings: Vec::new(),
        };
        let mut origin: Option<u32> = None;
        let mut cur = base;
        let mut changed = false;
        for l in &lines {
            if let Body::Org(a) = l.body {
                if origin.is_none() {
                    cur = a;
                } else {
                    place(&mut prog, &mut origin, a, &mut cur, l.no)?;
                }
                for (n, _) in &l.labels {
                    prog.labels.insert(n.clone(), cur);
                }
                continue;
            }
            let at = l.addr.unwrap_or(cur);
            if !matches!(l.body, Body::Empty) || l.addr.is_some() {
                place(&mut prog, &mut origin, at, &mut cur, l.no)?;
            } else {
                cur = at;
            }
            for (n, _) in &l.labels {
                prog.labels.insert(n.clone(), cur);
            }
            match &l.body {
                Body::Empty | Body::Org(_) => {}
                Body::Raw(b) => {
                    prog.items.push(Placed {
                        line: l.no,
                        addr: cur,
                        len: b.len() as u32,
                        insn: false,
                    });
                    prog.bytes.extend_from_slice(b);
                    cur += b.len() as u32;
                }
                Body::Insn { mnemonic, col, ops } => {
                    let toks = resolve(ops, labels.as_ref(), &names, cur);
                    let (word, size) = match encode::encode(mnemonic, &toks, *col, cur, l.hexlen) {
                        Ok(r) => r,
                        Err(e) => {
                            // In the layout pass a label may still be unknown
                            // to the encoder's range checks: report only in
                            // the final pass.
                            let column = if e.tok == usize::MAX || e.tok >= toks.len() {
                                *col
                            } else {
                                toks[e.tok].col
                            };
                            return Err(err(l.no, column, e.msg));
                        }
                    };
                    let size = size as u32;
                    if sizes.insert(l.no, size) != Some(size) {
                        changed = true;
                    }
                    prog.items.push(Placed {
                        line: l.no,
                        addr: cur,
                        len: size,
                        insn: true,
                    });
                    prog.bytes
                        .extend_from_slice(&word.to_le_bytes()[..size as usize]);
                    cur += size;
                }
            }
        }
        if (labels.is_some() && !changed) || names.is_empty() {
            fix_context(&mut prog, &lines);
            prog.warnings = ambiguity_warnings(&prog);
            return Ok(prog);
        }
        labels = Some(prog.labels);
    }
    Err(err(1, 1, "label layout did not converge"))
}
