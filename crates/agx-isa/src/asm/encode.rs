//! One instruction: mnemonic + operand tokens → bytes, by inverting the
//! decoder over the shared form table, then verifying with the decoder.
//!
//! * Candidate forms come from a mnemonic map built from the form table plus
//!   the spellings the group modules print (`.sat`, `isub`, the `bitop`
//!   aliases, `update_exec`/`push_exec`, `ld_tile`/`st_tile`, `map`/`unmap`).
//! * Operand descriptors are aligned with the tokens (descriptors that can
//!   print as nothing may be absent), then each descriptor's fields are
//!   solved: the shared ALU kinds by explicit inversion of operands.rs, every
//!   other kind by a small search driven by the decoder's own per-operand
//!   function (group modules), with candidate values taken from the numbers
//!   in the token. Context-dependent kinds (tuple sizes from `mask`, `n`,
//!   `Dt`...) are solved after the kinds they read.
//! * The word is built with the shortest size whose bits hold every field,
//!   decoded with [`crate::decode_word`] and formatted: the text must equal
//!   the input, else the next candidate is tried.

use super::parse::{numbers_in, parse_int, parse_reg, reg_range_error, RegTok, Tok};
use crate::decode::{decode_word, match_form, size_mask};
use crate::format::{format_asm, Syntax};
use crate::forms::{Form, OpKind, OperandDesc, FLOAT_IMM, FORMS};
use crate::model::{flags, Instruction, Operand, RegFile};
use crate::operands::{Ctx, Out};
use std::collections::HashMap;
use std::sync::OnceLock;

/// An encoding error at operand token `tok` (`usize::MAX`: the mnemonic;
/// `ops.len()`: the instruction as a whole).
#[derive(Clone, Debug)]
pub(crate) struct EncErr {
    pub tok: usize,
    pub msg: String,
}

/// How a mnemonic spelling maps onto a form.
#[derive(Clone, Copy, Debug)]
enum Alias {
    Plain,
    /// Insert this token before the written operands.
    Prepend(&'static str),
    /// `not`/`mov`: truth table first, immediate 0 last.
    BitopUnary(&'static str),
    /// `update_exec r0l` / `push_exec r0l, n` (an unconditional `if_fcmp`).
    UpdateExec,
    PushExec,
}

#[derive(Clone, Copy, Debug)]
struct Variant {
    form: u8,
    /// Named fields set by the spelling (`S` for `.sat`, `N` for `isub`).
    set: &'static [(&'static str, u64)],
    alias: Alias,
}

const SAT: &[(&str, u64)] = &[("S", 1)];
const NEG: &[(&str, u64)] = &[("N", 1)];
const SAT_NEG: &[(&str, u64)] = &[("S", 1), ("N", 1)];

fn mnemonic_map() -> &'static HashMap<String, Vec<Variant>> {
    static MAP: OnceLock<HashMap<String, Vec<Variant>>> = OnceLock::new();
    MAP.get_or_init(|| {
        let mut m: HashMap<String, Vec<Variant>> = HashMap::new();
        let mut add = |name: &str, form: u8, set: &'static [(&'static str, u64)], alias| {
            m.entry(name.to_string())
                .or_default()
                .push(Variant { form, set, alias });
        };
        for f in FORMS.iter() {
            match f.idx {
                114 => {
                    add("ld_tile", 114, &[], Alias::Prepend("1"));
                    add("st_tile", 114, &[], Alias::Prepend("0"));
                }
                156 => {
                    add("map", 156, &[], Alias::Prepend("map"));
                    add("unmap", 156, &[], Alias::Prepend("unmap"));
                    add("TODO.map", 156, &[], Alias::Plain);
                }
                3 | 4 => {
                    let (a, s) = if f.idx == 3 {
                        ("iadd", "isub")
                    } else {
                        ("imadd", "imsub")
                    };
                    add(a, f.idx, &[], Alias::Plain);
                    add(&format!("{a}.sat"), f.idx, SAT, Alias::Plain);
                    add(s, f.idx, NEG, Alias::Plain);
                    add(&format!("{s}.sat"), f.idx, SAT_NEG, Alias::Plain);
                }
                13 => {
                    add("bitop", 13, &[], Alias::Plain);
                    add("bitop_mov_a", 13, &[], Alias::Plain);
                    for (n, tt) in [
                        ("and", "0001"),
                        ("or", "0111"),
                        ("xor", "0110"),
                        ("nand", "1110"),
                        ("nor", "1000"),
                        ("xnor", "1001"),
                    ] {
                        add(n, 13, &[], Alias::Prepend(tt));
                    }
                    add("not", 13, &[], Alias::BitopUnary("1010"));
                    add("mov", 13, &[], Alias::BitopUnary("0101"));
                }
                49 => {
                    add("if_fcmp", 49, &[], Alias::Plain);
                    add("update_exec", 49, &[], Alias::UpdateExec);
                    add("push_exec", 49, &[], Alias::PushExec);
                }
                19..=38 => {
                    add(f.name, f.idx, &[], Alias::Plain);
                    add(&format!("{}.sat", f.name), f.idx, SAT, Alias::Plain);
                }
                _ => add(f.name, f.idx, &[], Alias::Plain),
            }
            // native syntax's name for a `TODO.*` form (both spellings read)
            if let Some((_, n)) = crate::native::NATIVE_NAMES
                .iter()
                .find(|(t, _)| *t == f.name)
            {
                add(n, f.idx, &[], Alias::Plain);
            }
        }
        m
    })
}

/// Every mnemonic the assembler accepts, sorted.
pub(crate) fn mnemonics() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = mnemonic_map().keys().map(|s| s.as_str()).collect();
    v.sort_unstable();
    v
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// `unknown mnemonic` message with suggestions.
fn unknown_mnemonic(m: &str) -> String {
    let mut best: Vec<(usize, &str)> = mnemonics()
        .into_iter()
        .map(|k| (edit_distance(m, k), k))
        .filter(|(d, _)| *d <= 2)
        .collect();
    best.sort();
    if best.is_empty() {
        format!("unknown mnemonic `{m}`")
    } else {
        let s: Vec<String> = best.iter().take(4).map(|(_, k)| format!("`{k}`")).collect();
        format!("unknown mnemonic `{m}` (did you mean {}?)", s.join(", "))
    }
}

// ---------------------------------------------------------------------------
// Word building
// ---------------------------------------------------------------------------

fn field_width(form: &Form, fi: usize) -> u32 {
    form.fields[fi].parts.iter().map(|p| p.1 as u32).sum()
}

fn set_field(form: &Form, word: u128, fi: usize, v: u64) -> u128 {
    let mut w = word;
    for &(start, width, shift) in form.fields[fi].parts {
        let m = ((1u128 << width) - 1) << start;
        let bits = (((v >> shift) as u128) & ((1u128 << width) - 1)) << start;
        w = (w & !m) | bits;
    }
    w
}

fn field_bits(form: &Form) -> u128 {
    let mut m = 0u128;
    for f in form.fields {
        for &(start, width, _) in f.parts {
            m |= ((1u128 << width) - 1) << start;
        }
    }
    m
}

/// Bits of `form` that neither a field, the fixed pattern nor the length
/// bit cover (within `size` bytes): don't-care bits.
pub fn dont_care_mask(form: &Form, size: u8) -> u128 {
    let mut covered = field_bits(form) | form.mask;
    if form.sizes.0 != form.sizes.1 {
        covered |= 1u128 << form.length_bit;
    }
    size_mask(size) & !covered
}

type Assign = Vec<(u8, u64)>;

fn apply(form: &Form, word: u128, a: &Assign) -> u128 {
    a.iter()
        .fold(word, |w, &(fi, v)| set_field(form, w, fi as usize, v))
}

// ---------------------------------------------------------------------------
// Single-operand decoding through the decoder's own functions
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum Group {
    Alu,
    Ctrl,
    Mem,
}

fn group_of(form: &Form) -> Group {
    match form.idx {
        0..=38 => Group::Alu,
        39..=113 => Group::Ctrl,
        _ => Group::Mem,
    }
}

/// The printed text of descriptor `op` of `form` in `word` (decoded by the
/// group module that owns the kind; enums through its spelling table).
fn group_op_text(form: &'static Form, op: &'static OperandDesc, word: u128, pc: u32) -> String {
    let mut ctx = Ctx {
        form,
        word,
        raised: false,
        todo: false,
    };
    let out = if op.kind == OpKind::EnumDesc {
        let v = ctx.op(op, 0);
        match crate::operands::group_enum(&ctx, op, v) {
            Some(s) => crate::operands::kw(s),
            None => crate::operands::imm(v as i64),
        }
    } else {
        match group_of(form) {
            Group::Alu => crate::group_alu::operand(&mut ctx, op),
            Group::Ctrl => crate::group_ctrl::operand(&mut ctx, op),
            Group::Mem => crate::group_mem::operand(&mut ctx, op),
        }
    };
    match out {
        Out::Skip => String::new(),
        Out::Op(o) => operand_text(o, pc),
    }
}

/// Formats one operand as the formatter prints it inside an instruction.
fn operand_text(o: Operand, pc: u32) -> String {
    let mut insn = Instruction::default();
    (insn.addr, insn.len) = (pc, 2);
    insn.operands.push(o);
    let s = format_asm(&insn, Syntax::Default);
    s.get(17..).unwrap_or("").to_string()
}

/// Whether the written token `a` denotes the printed operand `b`.
pub(crate) fn tok_eq(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    // `sr80` for `sr80 (thread_position_in_grid.x)`
    if a.starts_with("sr") && b.starts_with(a) && b[a.len()..].starts_with(" (") {
        return true;
    }
    // Integers written in another base (or hex in another case).
    if let (Some(x), Some(y)) = (parse_int(a), parse_int(b)) {
        if !b.starts_with("0b") {
            return x == y;
        }
    }
    if a.contains("0x") && a.eq_ignore_ascii_case(b) {
        return true;
    }
    false
}

// ---------------------------------------------------------------------------
// Descriptor classes
// ---------------------------------------------------------------------------

/// Kinds that may print as nothing (absent from the written operands).
fn may_be_empty(form: &'static Form, op: &'static OperandDesc) -> bool {
    use OpKind::*;
    match op.kind {
        ShiftDesc
        | MaskDesc
        | MemoryShiftDesc
        | MemoryRegDesc
        | SampleRegDesc
        | ThreadgroupMemoryRegDesc
        | SampleCompareOffDesc
        | IterSampleID
        | ZSDesc => true,
        EnumDesc => enum_spellings(form, op).iter().any(|s| s.is_empty()),
        _ => false,
    }
}

/// Solve order: 0 = reads only its own fields; 1 = reads fields of tier-0
/// descriptors; 2 = reads fields of tier-1 descriptors.
fn tier(op: &OperandDesc) -> u8 {
    use OpKind::*;
    match op.kind {
        CmpselSrcDesc
        | MemoryRegDesc
        | SampleRegDesc
        | ThreadgroupMemoryRegDesc
        | AsyncMemoryBaseDesc
        | AtomicSourceDesc
        | CoordsDesc
        | LodDesc
        | SampleCompareOffDesc
        | IterSampleID => 1,
        SampleURegDesc => 2,
        _ => 0,
    }
}

fn enum_spellings(form: &'static Form, op: &'static OperandDesc) -> &'static [String] {
    static CACHE: OnceLock<Vec<Vec<Vec<String>>>> = OnceLock::new();
    let all = CACHE.get_or_init(|| {
        FORMS
            .iter()
            .map(|f| {
                f.operands
                    .iter()
                    .map(|o| {
                        if o.kind != OpKind::EnumDesc {
                            return Vec::new();
                        }
                        let fi = o.fields[0] as usize;
                        let w = field_width(f, fi);
                        (0..1u64 << w.min(8))
                            .map(|v| group_op_text(f, o, set_field(f, f.bits, fi, v), 0))
                            .collect()
                    })
                    .collect()
            })
            .collect()
    });
    let oi = form
        .operands
        .iter()
        .position(|o| std::ptr::eq(o, op))
        .unwrap_or(0);
    &all[form.idx as usize][oi]
}

// ---------------------------------------------------------------------------
// Explicit inverses of the shared kinds (operands.rs)
// ---------------------------------------------------------------------------

type EncResult = Result<Vec<Assign>, String>;

fn reg_tok(t: &str) -> Result<Option<RegTok>, String> {
    match parse_reg(t) {
        Some(r) => {
            if let Some(e) = reg_range_error(&r, t) {
                return Err(e);
            }
            Ok(Some(r))
        }
        None => Ok(None),
    }
}

fn hint_bits(fl: u8) -> u64 {
    if fl & flags::CACHE != 0 {
        2
    } else if fl & flags::DISCARD != 0 {
        3
    } else {
        1
    }
}

fn fits(v: u64, w: u32) -> bool {
    w >= 64 || v < (1u64 << w)
}

/// ALU destinations (ALUDst, ALUDst64, PairedALUDst, FloatDst, FloatDst16).
fn enc_dst(form: &Form, op: &OperandDesc, t: &str) -> EncResult {
    use OpKind::*;
    let r = reg_tok(t)?.ok_or_else(|| format!("expected a destination register, found `{t}`"))?;
    if r.file != RegFile::Gpr {
        return Err(format!(
            "`{t}`: a destination must be a general-purpose register (r0..r127)"
        ));
    }
    if r.flags & !flags::CACHE != 0 {
        return Err(format!("`{t}`: a destination takes only the `.cache` hint"));
    }
    let c = u64::from(r.flags & flags::CACHE != 0);
    let (allow32, allow64, paired) = match op.kind {
        ALUDst64Desc => (true, true, false),
        PairedALUDstDesc => (true, false, true),
        FloatDst16Desc => (false, false, false),
        _ => (true, false, false),
    };
    let want_count = if paired { 2 } else { 1 };
    let (value, ty) = if r.w16 && r.count == want_count {
        (r.first as u64, c)
    } else if !r.w16 && allow32 && r.count == want_count {
        (2 * r.first as u64, 2 | c)
    } else if !r.w16 && allow64 && r.count == 2 {
        (2 * r.first as u64 + 1, 2 | c)
    } else {
        let what = match (allow32, allow64, paired) {
            (false, _, _) => "a 16-bit register (rNl/rNh)",
            (_, true, _) => "a 16-, 32- or 64-bit register (rNl, rN, rN_rN+1)",
            (_, _, true) => "a register pair (rNl_rNh or rN_rN+1)",
            _ => "a 16- or 32-bit register (rNl/rNh or rN)",
        };
        return Err(format!("`{t}`: {} takes {what}", form.name));
    };
    let _ = form;
    Ok(vec![vec![(op.fields[0], value), (op.fields[1], ty)]])
}

/// Parses a float immediate with optional `.abs`/`.neg` suffixes.
fn float_imm(t: &str) -> Option<(u64, u64)> {
    let mut base = t;
    let mut m = 0;
    loop {
        if let Some(b) = base.strip_suffix(".neg") {
            base = b;
            m |= 2;
        } else if let Some(b) = base.strip_suffix(".abs") {
            base = b;
            m |= 1;
        } else {
            break;
        }
    }
    let v = FLOAT_IMM.iter().position(|s| *s == base)?;
    Some((v as u64, m))
}

/// ALU sources (ALUSrc, ALUSrc64, ALUSrc16, MulSrc, AddSrc, FloatSrc,
/// FloatSrc16, PairedFloatSrc).
fn enc_src(op: &OperandDesc, form: &Form, t: &str) -> EncResult {
    use OpKind::*;
    let (allow32, allow64, paired, float, sx) = match op.kind {
        ALUSrc64Desc => (true, true, false, false, false),
        ALUSrc16Desc => (false, false, false, false, false),
        MulSrcDesc => (true, false, false, false, true),
        AddSrcDesc => (true, true, false, false, true),
        FloatSrcDesc => (true, false, false, true, false),
        FloatSrc16Desc => (false, false, false, true, false),
        PairedFloatSrcDesc => (true, false, true, true, false),
        _ => (true, false, false, false, false),
    };
    let tw = field_width(form, op.fields[1] as usize);
    let mk = |value: u64, ty: u64, extra: u64| -> Assign {
        let mut a = vec![(op.fields[0], value), (op.fields[1], ty)];
        if let Some(&e) = op.fields.get(2) {
            a.push((e, extra));
        }
        a
    };
    if t == "None" {
        return if tw == 4 {
            Ok(vec![mk(0, 0b1000, 0)])
        } else {
            Err("`None` cannot be encoded in a 16-bit float source".into())
        };
    }
    if let Some(r) = reg_tok(t)? {
        let mut allowed = 0u8;
        if sx {
            allowed |= flags::SX;
        }
        if float {
            allowed |= flags::ABS | flags::NEG;
        }
        let mut extra = 0u64;
        if r.flags & flags::SX != 0 {
            extra |= 1;
        }
        if r.flags & flags::ABS != 0 {
            extra |= 1;
        }
        if r.flags & flags::NEG != 0 {
            extra |= 2;
        }
        if r.file == RegFile::Uniform {
            if r.flags & !allowed != 0 {
                return Err(format!("`{t}`: uniform registers take no cache hint"));
            }
            let (v9, ty) = if r.w16 && r.count == 1 {
                (r.first as u64, 0b0100)
            } else if !r.w16 && r.count == 1 {
                (2 * r.first as u64, 0b0110)
            } else {
                return Err(format!("`{t}`: a uniform source is one register"));
            };
            return Ok(vec![mk(v9 & 0xFF, ty | (v9 >> 8), extra)]);
        }
        if r.flags & !(allowed | flags::CACHE | flags::DISCARD) != 0 {
            return Err(format!("`{t}`: modifier not allowed on this source"));
        }
        let h = hint_bits(r.flags);
        let want = if paired { 2 } else { 1 };
        let (value, ty) = if r.w16 && r.count == want {
            (r.first as u64, h)
        } else if !r.w16 && allow32 && r.count == want {
            (2 * r.first as u64, 0b1000 | h)
        } else if !r.w16 && allow64 && !paired && r.count == 2 {
            (2 * r.first as u64, 0b1100 | h)
        } else {
            return Err(format!(
                "`{t}`: this source takes {}",
                match (allow32, allow64, paired) {
                    (false, _, _) => "a 16-bit register or an immediate",
                    (_, true, _) => "a 16-, 32- or 64-bit register or an immediate",
                    (_, _, true) => "a register pair or an immediate",
                    _ => "a 16- or 32-bit register or an immediate",
                }
            ));
        };
        if value > 255 {
            return Err(format!("`{t}`: register out of range for this source"));
        }
        if op.kind == ALUSrc16Desc && r.w16 && value & 1 == 0 {
            // 16-bit-only sources ignore the width bits; Mesa sets them as
            // for a 32-bit register when the half is a low half.
            return Ok(vec![mk(value, 0b1000 | ty, extra), mk(value, ty, extra)]);
        }
        return Ok(vec![mk(value, ty, extra)]);
    }
    if float {
        return match float_imm(t) {
            Some((v, m)) => Ok(vec![mk(v, 0, m)]),
            None => Err(format!(
                "`{t}` is not a register or an encodable float immediate (the 256 values \
                 ±0.0 .. ±31.0 applegpu prints, e.g. 0.5, 1.0, 2.0, -0.25)"
            )),
        };
    }
    match parse_int(t) {
        Some(v) if (0..=255).contains(&v) => Ok(vec![mk(v as u64, 0, 0)]),
        Some(v) => Err(format!(
            "immediate {v} out of range: an ALU source immediate is 0..=255 (use mov_imm)"
        )),
        None => Err(format!("expected a register or an immediate, found `{t}`")),
    }
}

/// CmpselSrcDesc: width from the destination's `Dt` (already set in `word`).
fn enc_cmpsel(form: &Form, op: &OperandDesc, t: &str, word: u128) -> EncResult {
    let dt = form
        .field_index("Dt")
        .map(|i| {
            let mut v = 0u64;
            for &(s, w, sh) in form.fields[i].parts {
                v |= (((word >> s) & ((1u128 << w) - 1)) as u64) << sh;
            }
            v
        })
        .unwrap_or(0);
    let is32 = dt & 2 != 0;
    let mk = |v: u64, ty: u64| vec![vec![(op.fields[0], v), (op.fields[1], ty)]];
    if t == "None" {
        return Ok(mk(0, 0));
    }
    if let Some(r) = reg_tok(t)? {
        let width_ok = if is32 { !r.w16 } else { r.w16 };
        if r.count != 1 || !width_ok {
            return Err(format!(
                "`{t}`: the select operands have the destination's width ({})",
                if is32 { "32-bit" } else { "16-bit" }
            ));
        }
        let v = if is32 {
            2 * r.first as u64
        } else {
            r.first as u64
        };
        if v > 255 {
            return Err(format!("`{t}`: register out of range for a select operand"));
        }
        return Ok(if r.file == RegFile::Uniform {
            if r.flags != 0 {
                return Err(format!("`{t}`: uniform registers take no modifier"));
            }
            mk(v, 0b110)
        } else {
            if r.flags & !(flags::CACHE | flags::DISCARD) != 0 {
                return Err(format!("`{t}`: only `.cache`/`.discard` allowed here"));
            }
            mk(v, hint_bits(r.flags))
        });
    }
    match parse_int(t) {
        Some(v) if (0..=255).contains(&v) => Ok(mk(v as u64, 0b100)),
        Some(v) => Err(format!(
            "immediate {v} out of range: a select immediate is 0..=255"
        )),
        None => Err(format!("expected a register or an immediate, found `{t}`")),
    }
}

fn enc_imm(form: &Form, op: &OperandDesc, t: &str) -> EncResult {
    let fi = op.fields[0];
    let w = field_width(form, fi as usize);
    let max = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
    match parse_int(t) {
        Some(v) if v >= 0 && fits(v as u64, w) => Ok(vec![vec![(fi, v as u64)]]),
        Some(v) => Err(format!(
            "immediate {v} out of range for `{}` of {}: 0..={max}",
            op.name, form.name
        )),
        None => Err(format!(
            "expected an integer for `{}` of {} (0..={max}), found `{t}`",
            op.name, form.name
        )),
    }
}

fn enc_binary(form: &Form, op: &OperandDesc, t: &str) -> EncResult {
    let fi = op.fields[0];
    let w = field_width(form, fi as usize);
    let digits = t.strip_prefix("0b").filter(|d| {
        !d.is_empty() && d.len() as u32 == w.max(1) && d.bytes().all(|c| c == b'0' || c == b'1')
    });
    match digits.and_then(|d| u64::from_str_radix(d, 2).ok()) {
        Some(v) => Ok(vec![vec![(fi, v)]]),
        None => Err(format!(
            "`{}` of {} is a {w}-bit binary field written 0b{}, found `{t}`",
            op.name,
            form.name,
            "0".repeat(w.max(1) as usize)
        )),
    }
}

/// A register operand whose one field holds the first register's number:
/// `count` 32-bit registers of `file` with no flags (`what` names them in
/// the error; `range` spells the registers the field reaches, from the
/// largest number it holds).
struct WholeReg {
    file: RegFile,
    count: u32,
    what: &'static str,
    range: fn(u64) -> String,
}

const GPR32: WholeReg = WholeReg {
    file: RegFile::Gpr,
    count: 1,
    what: "a 32-bit register (rN)",
    range: |m| format!("r0..r{m}"),
};

const UNIFORM64: WholeReg = WholeReg {
    file: RegFile::Uniform,
    count: 2,
    what: "a 64-bit uniform pair (uN_uN+1)",
    range: |m| format!("u0_u1..u{m}_u{}", m + 1),
};

fn enc_whole_reg(form: &Form, op: &OperandDesc, t: &str, k: &WholeReg) -> EncResult {
    let fi = op.fields[0];
    let w = field_width(form, fi as usize);
    match reg_tok(t)? {
        Some(r) if r.file == k.file && !r.w16 && r.count == k.count && r.flags == 0 => {
            if fits(r.first as u64, w) {
                Ok(vec![vec![(fi, r.first as u64)]])
            } else {
                Err(format!(
                    "register `{t}` out of range: {}",
                    (k.range)((1u64 << w) - 1)
                ))
            }
        }
        _ => Err(format!("expected {}, found `{t}`", k.what)),
    }
}

fn enc_truth(op: &OperandDesc, t: &str) -> EncResult {
    if t.len() != 4 || !t.bytes().all(|c| c == b'0' || c == b'1') || op.fields.len() != 4 {
        return Err(format!(
            "expected a 4-digit truth table (e.g. 0110), found `{t}`"
        ));
    }
    Ok(vec![t
        .bytes()
        .enumerate()
        .map(|(i, c)| (op.fields[i], u64::from(c == b'1')))
        .collect()])
}

fn enc_branch(form: &Form, op: &OperandDesc, t: &str, pc: u32) -> EncResult {
    let fi = op.fields[0];
    let w = field_width(form, fi as usize);
    let abs = t
        .strip_prefix("0x-")
        .and_then(|h| i64::from_str_radix(h, 16).ok())
        .map(|v| -v)
        .or_else(|| {
            if t.starts_with("0x") {
                parse_int(t)
            } else {
                None
            }
        });
    let Some(abs) = abs else {
        return Err(
            if t.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            {
                format!("unknown label `{t}`")
            } else {
                format!("expected a branch target (a label or a 0x.. address), found `{t}`")
            },
        );
    };
    let rel = abs - pc as i64;
    let lo = -(1i64 << (w - 1));
    let hi = (1i64 << (w - 1)) - 1;
    if rel < lo || rel > hi {
        return Err(format!(
            "branch target {t} out of range for {}: offset {rel} not in {lo}..={hi} bytes",
            form.name
        ));
    }
    Ok(vec![vec![(fi, (rel as u64) & ((1u64 << w) - 1))]])
}

// ---------------------------------------------------------------------------
// Generic search (group kinds)
// ---------------------------------------------------------------------------

fn enc_generic(
    form: &'static Form,
    op: &'static OperandDesc,
    t: &str,
    word: u128,
    pc: u32,
) -> EncResult {
    let widths: Vec<u32> = op
        .fields
        .iter()
        .map(|&f| field_width(form, f as usize))
        .collect();
    let full_log: u32 = widths.iter().sum();
    let nums = numbers_in(t);
    let lists = |full: bool| -> Vec<Vec<u64>> {
        widths
            .iter()
            .map(|&w| {
                if full || w <= 4 {
                    (0..1u64 << w).collect()
                } else {
                    let mask = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
                    let mut v: Vec<u64> = Vec::new();
                    for &n in &nums {
                        for c in [n, 2 * n, 2 * n + 1, n - 2] {
                            let c = (c as u64) & mask;
                            if !v.contains(&c) {
                                v.push(c);
                            }
                        }
                    }
                    if !v.contains(&0) {
                        v.push(0);
                    }
                    v
                }
            })
            .collect()
    };
    let search = |lists: &[Vec<u64>]| -> Vec<Assign> {
        let mut found = Vec::new();
        let mut idx = vec![0usize; lists.len()];
        if lists.iter().any(|l| l.is_empty()) {
            return found;
        }
        loop {
            let a: Assign = op
                .fields
                .iter()
                .zip(&idx)
                .zip(lists)
                .map(|((&f, &i), l)| (f, l[i]))
                .collect();
            let w = apply(form, word, &a);
            if tok_eq(t, &group_op_text(form, op, w, pc)) {
                found.push(a);
                if found.len() >= 4 {
                    return found;
                }
            }
            // odometer
            let mut k = 0;
            loop {
                if k == idx.len() {
                    return found;
                }
                idx[k] += 1;
                if idx[k] < lists[k].len() {
                    break;
                }
                idx[k] = 0;
                k += 1;
            }
        }
    };
    let full = full_log <= 6;
    let mut found = search(&lists(full));
    if found.is_empty() && !full && full_log <= 11 {
        found = search(&lists(true));
    }
    if found.is_empty() {
        if let Some(r) = parse_reg(t) {
            if let Some(e) = reg_range_error(&r, t) {
                return Err(e);
            }
        }
        let what = match op.kind {
            OpKind::EnumDesc => {
                let sp: Vec<String> = enum_spellings(form, op)
                    .iter()
                    .filter(|s| !s.is_empty())
                    .map(|s| format!("`{s}`"))
                    .collect();
                format!("one of {}", sp.join(", "))
            }
            k => format!("{}", KindName(k)),
        };
        return Err(if t.is_empty() {
            format!("operand `{}` of {} cannot be omitted", op.name, form.name)
        } else {
            format!(
                "`{t}` cannot be encoded as operand `{}` of {} (expected {what})",
                op.name, form.name
            )
        });
    }
    Ok(found)
}

struct KindName(OpKind);

impl std::fmt::Display for KindName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use OpKind::*;
        let s = match self.0 {
            FConditionDesc => "a float condition (eq, lt, gt, ltn, gte, lte, gtn, neq, ...)",
            IConditionDesc => {
                "an integer condition (ueq, ult, ugt, seq, slt, sgt, nueq, ugte, ...)"
            }
            ImplicitR0LDesc => "r0l",
            ShiftDesc | MemoryShiftDesc => "`lsl N`",
            MaskDesc => "`mask 0x..` (a low-bit mask)",
            SReg32Desc => "a special register srN",
            MemoryRegDesc | SampleRegDesc | ThreadgroupMemoryRegDesc => {
                "a register tuple sized by the mask"
            }
            MemoryBaseDesc => "a 64-bit base (rN_rN+1 or uN_uN+1)",
            MemoryIndexDesc | ThreadgroupIndexDesc => "a register or a 16-bit signed immediate",
            TextureDesc => "a texture state tsN or a register",
            SamplerDesc => "a sampler state ssN or a register",
            CoordsDesc => "a coordinate register tuple sized by the texture type",
            _ => "an operand of this kind",
        };
        f.write_str(s)
    }
}

// ---------------------------------------------------------------------------
// Per-form solving
// ---------------------------------------------------------------------------

fn enc_desc(
    form: &'static Form,
    op: &'static OperandDesc,
    t: &str,
    word: u128,
    pc: u32,
) -> EncResult {
    use OpKind::*;
    match op.kind {
        ALUDstDesc | ALUDst64Desc | PairedALUDstDesc | FloatDstDesc | FloatDst16Desc => {
            enc_dst(form, op, t)
        }
        ALUSrcDesc | ALUSrc64Desc | ALUSrc16Desc | MulSrcDesc | AddSrcDesc | FloatSrcDesc
        | FloatSrc16Desc | PairedFloatSrcDesc => enc_src(op, form, t),
        CmpselSrcDesc => enc_cmpsel(form, op, t, word),
        ImmediateDesc => enc_imm(form, op, t),
        BinaryDesc => enc_binary(form, op, t),
        Reg32Desc => enc_whole_reg(form, op, t, &GPR32),
        UReg64Desc => enc_whole_reg(form, op, t, &UNIFORM64),
        TruthTableDesc => enc_truth(op, t),
        BranchOffsetDesc => enc_branch(form, op, t, pc),
        _ => enc_generic(form, op, t, word, pc),
    }
}

/// Splits asm text into (mnemonic, operands).
pub(crate) fn split_asm(s: &str) -> (&str, Vec<&str>) {
    let s = s.trim();
    let (m, rest) = match s.find(char::is_whitespace) {
        Some(p) => (&s[..p], s[p..].trim()),
        None => (s, ""),
    };
    let ops = if rest.is_empty() {
        Vec::new()
    } else {
        rest.split(',').map(|x| x.trim()).collect()
    };
    (m, ops)
}

/// Whether the decoded text equals the written instruction.
fn text_matches(mnemonic: &str, toks: &[Tok], printed: &str) -> bool {
    let (m, ops) = split_asm(printed);
    if m != mnemonic || ops.len() != toks.len() {
        return false;
    }
    ops.iter().zip(toks).all(|(o, t)| {
        let norm: Vec<&str> = o.split_whitespace().collect();
        tok_eq(&t.text, &norm.join(" "))
    })
}

struct Solver<'a> {
    form: &'static Form,
    variant: Variant,
    mnemonic: &'a str,
    /// Tokens as written (what the decode must print).
    written: &'a [Tok],
    pc: u32,
    budget: usize,
    /// Use the long size even when the short one holds every field.
    force_long: bool,
    best: Option<EncErr>,
    /// Printed text of the last verified-but-different encoding.
    near: Option<String>,
    /// Native syntax's trailing `raw(0x..)`: bits set as written.
    extra: u128,
}

impl Solver<'_> {
    fn note(&mut self, e: EncErr) {
        let keep_old = matches!(&self.best, Some(b) if e.tok < b.tok);
        if !keep_old {
            self.best = Some(e);
        }
    }

    /// Builds, sizes and verifies a complete word.
    fn finish(&mut self, word: u128) -> Option<(u128, u8)> {
        let f = self.form;
        let mut w = word | self.extra;
        for &(name, v) in self.variant.set {
            if let Some(i) = f.field_index(name) {
                w = set_field(f, w, i, v);
            }
        }
        let (short, long) = f.sizes;
        let size = if short != long && (self.force_long || w & !size_mask(short) != 0) {
            w |= 1u128 << f.length_bit;
            long
        } else {
            short
        };
        // An earlier form may claim the word through bits we left 0: flip
        // don't-care bits it tests.
        for _ in 0..4 {
            match match_form(w) {
                Some(g) if g.idx < f.idx => {
                    let dc = dont_care_mask(f, size) & g.mask;
                    if dc == 0 {
                        break;
                    }
                    w ^= dc & dc.wrapping_neg();
                }
                _ => break,
            }
        }
        // A form applegpu shadows may claim the word through bits we left 0
        // (`no_var` with every field 0 is the `TODO.unk51` word): when the
        // text names the first-match form, flip a don't-care bit it tests.
        if let Some(sf) = decode_word(w, self.pc)
            .as_ref()
            .and_then(crate::native::shadowed_form)
        {
            let dc = dont_care_mask(f, size) & sf.mask;
            if sf.idx != f.idx && dc != 0 {
                w ^= dc & dc.wrapping_neg();
            }
        }
        let insn = decode_word(w, self.pc)?;
        // native syntax: applegpu's text, or a shadowed form's own name
        let printed = format_asm(&insn, Syntax::Native);
        // text without `raw(..)` for an encoding applegpu refuses to print
        // (`raised`) means our best rendering of it, as in applegpu syntax
        let best_rendering = || {
            self.extra == 0
                && insn.raised
                && crate::native::native_instruction(&insn).is_none()
                && text_matches(
                    self.mnemonic,
                    self.written,
                    &format_asm(&insn, Syntax::Default),
                )
        };
        if insn.len == size
            && (text_matches(self.mnemonic, self.written, &printed) || best_rendering())
        {
            Some((w, size))
        } else {
            self.near = Some(printed.trim_end().to_string());
            None
        }
    }

    fn dfs(
        &mut self,
        order: &[usize],
        k: usize,
        assigned: &[Option<usize>],
        toks: &[Tok],
        word: u128,
    ) -> Option<(u128, u8)> {
        if self.budget == 0 {
            return None;
        }
        if k == order.len() {
            self.budget -= 1;
            return self.finish(word);
        }
        let di = order[k];
        let op = &self.form.operands[di];
        let (text, ti) = match assigned[di] {
            Some(ti) => (toks[ti].text.as_str(), ti),
            None => ("", usize::MAX),
        };
        match enc_desc(self.form, op, text, word, self.pc) {
            Ok(cands) => {
                for a in cands {
                    let w = apply(self.form, word, &a);
                    if let Some(r) = self.dfs(order, k + 1, assigned, toks, w) {
                        return Some(r);
                    }
                }
                None
            }
            Err(msg) => {
                let tok = if ti == usize::MAX {
                    // an omitted operand: blame the position it would take
                    assigned[..di].iter().flatten().count()
                } else {
                    ti
                };
                self.note(EncErr { tok, msg });
                None
            }
        }
    }
}

/// Expands an alias spelling into the operand tokens of the form.
fn expand(variant: &Variant, toks: &[Tok], col: usize) -> Option<Vec<Tok>> {
    let mk = |s: &str| Tok {
        text: s.to_string(),
        col,
    };
    Some(match variant.alias {
        Alias::Plain => toks.to_vec(),
        Alias::Prepend(s) => std::iter::once(mk(s)).chain(toks.iter().cloned()).collect(),
        Alias::BitopUnary(tt) => {
            if toks.len() != 2 {
                return None;
            }
            vec![mk(tt), toks[0].clone(), toks[1].clone(), mk("0")]
        }
        Alias::UpdateExec => {
            if toks.len() != 1 {
                return None;
            }
            vec![toks[0].clone(), mk("eq"), mk("0.0"), mk("0.0"), mk("0")]
        }
        Alias::PushExec => {
            if toks.len() != 2 {
                return None;
            }
            vec![
                toks[0].clone(),
                mk("eq"),
                mk("0.0"),
                mk("0.0"),
                toks[1].clone(),
            ]
        }
    })
}

/// Number of written operands a variant takes: (min, max).
fn arity(variant: &Variant) -> (usize, usize) {
    let f = &FORMS[variant.form as usize];
    let n = f.operands.len();
    let opt = f.operands.iter().filter(|o| may_be_empty(f, o)).count();
    match variant.alias {
        Alias::Plain => (n - opt, n),
        Alias::Prepend(_) => ((n - opt).saturating_sub(1), n - 1),
        Alias::BitopUnary(_) => (2, 2),
        Alias::UpdateExec => (1, 1),
        Alias::PushExec => (2, 2),
    }
}

fn operand_names(variant: &Variant) -> String {
    let f = &FORMS[variant.form as usize];
    let skip = usize::from(matches!(variant.alias, Alias::Prepend(_)));
    let names: Vec<&str> = match variant.alias {
        Alias::BitopUnary(_) => vec!["D", "A"],
        Alias::UpdateExec => vec!["r0l"],
        Alias::PushExec => vec!["r0l", "n"],
        _ => f.operands.iter().skip(skip).map(|o| o.name).collect(),
    };
    names.join(", ")
}

/// Encodes one instruction at `pc`: (word, size in bytes). The shortest
/// encoding is chosen, unless `prefer` names a size some candidate form can
/// take (a pasted listing's printed length), which is then used.
pub(crate) fn encode(
    mnemonic: &str,
    toks: &[Tok],
    col: usize,
    pc: u32,
    prefer: Option<u8>,
) -> Result<(u128, u8), EncErr> {
    let Some(variants) = mnemonic_map().get(mnemonic) else {
        return Err(EncErr {
            tok: usize::MAX,
            msg: unknown_mnemonic(mnemonic),
        });
    };
    let written = toks;
    // native syntax: a shadowed form's trailing `raw(0x..)` (see crate::native)
    let (toks, extra) = match toks.split_last() {
        Some((last, rest)) if last.text.starts_with("raw(") && last.text.ends_with(')') => {
            let body = &last.text[4..last.text.len() - 1];
            match body
                .strip_prefix("0x")
                .and_then(|h| u128::from_str_radix(h, 16).ok())
            {
                Some(v) => (rest, v),
                None => {
                    return Err(EncErr {
                        tok: toks.len() - 1,
                        msg: format!("`{}`: expected raw(0xHEX)", last.text),
                    })
                }
            }
        }
        _ => (toks, 0),
    };
    let m = toks.len();
    let fitting: Vec<&Variant> = variants
        .iter()
        .filter(|v| {
            let (lo, hi) = arity(v);
            (lo..=hi).contains(&m)
        })
        .collect();
    if fitting.is_empty() {
        let forms: Vec<String> = variants
            .iter()
            .map(|v| {
                let (lo, hi) = arity(v);
                let n = if lo == hi {
                    format!("{lo}")
                } else {
                    format!("{lo} to {hi}")
                };
                format!("{n} ({})", operand_names(v))
            })
            .collect();
        return Err(EncErr {
            tok: usize::MAX,
            msg: format!(
                "wrong operand count: `{mnemonic}` takes {}, found {m}",
                forms.join(" or ")
            ),
        });
    }
    let mut best: Option<(u128, u8)> = None;
    let mut err: Option<EncErr> = None;
    let mut near: Option<String> = None;
    for v in fitting {
        let Some(ftoks) = expand(v, toks, col) else {
            continue;
        };
        let prepended = ftoks.len() - m;
        let form: &'static Form = &FORMS[v.form as usize];
        let mut solver = Solver {
            form,
            variant: *v,
            mnemonic,
            written,
            pc,
            budget: 256,
            force_long: prefer.is_some_and(|p| p == form.sizes.1 && p != form.sizes.0),
            best: None,
            near: None,
            extra,
        };
        let r = solve_form(&mut solver, &ftoks);
        match r {
            Some(r) => {
                let better = match best {
                    None => true,
                    Some(b) => match prefer {
                        Some(p) if b.1 == p => false,
                        Some(p) if r.1 == p => true,
                        _ => r.1 < b.1,
                    },
                };
                if better {
                    best = Some(r);
                }
            }
            None => {
                if let Some(mut e) = solver.best.take() {
                    e.tok = e.tok.saturating_sub(prepended).min(m.saturating_sub(1));
                    let keep_old = matches!(&err, Some(b) if e.tok < b.tok);
                    if !keep_old {
                        err = Some(e);
                    }
                }
                if solver.near.is_some() {
                    near = solver.near;
                }
            }
        }
    }
    if let Some(b) = best {
        return Ok(b);
    }
    if let Some(e) = err {
        return Err(e);
    }
    Err(EncErr {
        tok: m,
        msg: match near {
            Some(p) => format!(
                "no encoding of `{mnemonic}` prints these operands (nearest encoding prints `{p}`)"
            ),
            None => format!("no encoding of `{mnemonic}` prints these operands"),
        },
    })
}

/// Tries every alignment of tokens with descriptors (absent ones print as
/// nothing), solving each.
fn solve_form(s: &mut Solver<'_>, toks: &[Tok]) -> Option<(u128, u8)> {
    let form = s.form;
    let n = form.operands.len();
    let m = toks.len();
    if m > n {
        return None;
    }
    let optional: Vec<usize> = (0..n)
        .filter(|&i| may_be_empty(form, &form.operands[i]))
        .collect();
    let k = n - m;
    if k > optional.len() {
        return None;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| tier(&form.operands[i]));
    // combinations of k absent descriptors among the optional ones
    let mut comb: Vec<usize> = (0..k).collect();
    let mut tried = 0;
    loop {
        let absent: Vec<usize> = comb.iter().map(|&c| optional[c]).collect();
        let mut assigned = vec![None; n];
        let mut ti = 0;
        for (i, a) in assigned.iter_mut().enumerate() {
            if !absent.contains(&i) {
                *a = Some(ti);
                ti += 1;
            }
        }
        if let Some(r) = s.dfs(&order, 0, &assigned, toks, form.bits) {
            return Some(r);
        }
        tried += 1;
        if tried > 64 || s.budget == 0 {
            return None;
        }
        // next combination
        let mut i = k;
        loop {
            if i == 0 {
                return None;
            }
            i -= 1;
            if comb[i] < optional.len() - k + i {
                comb[i] += 1;
                for j in i + 1..k {
                    comb[j] = comb[j - 1] + 1;
                }
                break;
            }
        }
    }
}
