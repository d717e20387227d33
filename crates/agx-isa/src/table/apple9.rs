//! The Apple9 (M3/M4/A18 Pro) filler of the code table: reads an Apple9
//! walk ([`crate::apple9::walk`]) and its per-instruction facts
//! ([`crate::apple9::facts`]) and nothing else. The class and cost key of
//! each of the reference's 57 forms are the columns of [`FORM_COLUMNS`]
//! (same order as `apple9::forms::FORMS`); a form with no timing row here
//! (bit-field extracts, packs) has cost `None`, which the analysis reports
//! as "no cost known", never as zero.
//!
//! Special registers: [`SR_VALUES`], from docs/apple9-special-registers.md
//! (hardware splices, Apple compiler output and Mesa's Apple9 backend, with
//! their limits); any other number is [`SpecialValue::Unknown`].

use super::{
    AluOp, CodeTable, MemDesc, MemIndex, Pred, RegRange, Row, Scoreboard, Special, SpecialValue,
};
use crate::apple9::facts::{facts, parse_reg, Index, Reg, ROLES};
use crate::apple9::{Item, Kind, Listing};
use crate::cost::CostKey;
use crate::model::{Category, Flow};
use crate::semantics::ExecOp;

use Category::*;
use CostKey as K;

/// Class and cost key (its 32-bit variant; a 16-bit destination takes the
/// 16-bit key, see [`narrow`]) of each form, in `FORMS` order.
pub static FORM_COLUMNS: [(Category, Option<CostKey>); 57] = [
    (Alu, Some(K::MovImm)),      // mov_imm (7-bit)
    (Alu, Some(K::MovImm)),      // mov_imm (32-bit)
    (Alu, Some(K::GetSr)),       // get_sr
    (Load, Some(K::DeviceLoad)), // device_load
    (Store, Some(K::Store)),     // device_store
    (Alu, Some(K::Bitop)),       // bitop mov
    (Alu, Some(K::Bitop)),       // bitop 4
    (Alu, Some(K::Bitop)),       // bitop 10
    (Alu, Some(K::Bitrev)),      // bitrev
    (Alu, Some(K::Popcount)),    // popcount
    (Alu, Some(K::Ffs)),         // ffs
    (Alu, Some(K::Bfi)),         // bfi
    (Alu, Some(K::BfeilConst)),  // bfeil
    (Alu, None),                 // extr
    (Alu, Some(K::ShiftHi)),     // shlhi
    (Alu, Some(K::ShiftHi)),     // shrhi
    (Alu, None),                 // asr
    (Alu, None),                 // asrh
    (Alu, Some(K::Iadd32)),      // iadd
    (Alu, Some(K::Iadd64)),      // iadd64
    (Alu, Some(K::Iadd32)),      // iadd shifted
    (Alu, Some(K::Imad32)),      // imadd/imsub
    (Alu, Some(K::Fma32)),       // ffma 4
    (Alu, Some(K::Fma32)),       // ffma 6
    (Alu, Some(K::Fma32)),       // ffma 8
    (Alu, Some(K::Fma32)),       // ffma 10
    (Alu, Some(K::Fmul32)),      // fmul 4
    (Alu, Some(K::Fmul32)),      // fmul 6
    (Alu, Some(K::Fmul32)),      // fmul 8
    (Alu, Some(K::Fmul32)),      // fmul 12
    (Alu, Some(K::Fadd32)),      // fadd 4
    (Alu, Some(K::Fadd32)),      // fadd 6
    (Alu, Some(K::Fadd32)),      // fadd 8
    (Alu, Some(K::Fadd32)),      // fadd 10
    (Alu, Some(K::Rint)),        // rint
    (Alu, Some(K::Rint)),        // floor
    (Alu, Some(K::Rint)),        // ceil
    (Alu, Some(K::Trunc)),       // trunc
    (Alu, Some(K::Rcp)),         // rcp
    (Alu, Some(K::Rsqrt32)),     // rsqrt
    (Alu, Some(K::Rsqrt32)),     // rsqrt_special
    (Alu, None),                 // sinc
    (Alu, Some(K::Log2_32)),     // log2
    (Alu, Some(K::Exp2_32)),     // exp2
    (Alu, Some(K::Fcmpsel32)),   // cmpsel 6
    (Alu, Some(K::Fcmpsel32)),   // cmpsel 8 (cmov)
    (Alu, Some(K::Fcmpsel32)),   // cmpsel 10
    (Alu, Some(K::Fcmpsel32)),   // cmpsel 14
    (Alu, Some(K::Convert)),     // convert f2i
    (Alu, Some(K::Convert)),     // convert i2f
    (Alu, None),                 // unpack unorm
    (Alu, None),                 // unpack float
    (Alu, None),                 // pack unorm
    (Alu, None),                 // pack float
    (Control, Some(K::Branch)),  // stop
    (Alu, None),                 // nop
    (Sync, Some(K::Wait)),       // wait
];

/// What the documented Apple9 special registers hold
/// (docs/apple9-special-registers.md has the evidence for each row).
pub static SR_VALUES: &[(u16, SpecialValue)] = {
    use SpecialValue::*;
    &[
        (2, ThreadIndexInSimdgroup),
        (5, SimdgroupIndexInThreadgroup),
        (24, ThreadsPerThreadgroup(0)),
        (25, ThreadsPerThreadgroup(1)),
        (26, ThreadsPerThreadgroup(2)),
        (28, ThreadgroupPositionInGrid(0)),
        (29, ThreadgroupPositionInGrid(1)),
        (30, ThreadgroupPositionInGrid(2)),
        (32, ThreadPositionInGrid(0)),
        (33, ThreadPositionInGrid(1)),
        (34, ThreadPositionInGrid(2)),
        (36, ThreadPositionInThreadgroup(0)),
        (37, ThreadPositionInThreadgroup(1)),
        (38, ThreadPositionInThreadgroup(2)),
        (39, ThreadIndexInThreadgroup),
    ]
};

/// What Apple9 special register `n` holds.
pub fn sr_value(n: u16) -> SpecialValue {
    SR_VALUES
        .iter()
        .find(|r| r.0 == n)
        .map_or(SpecialValue::Unknown, |r| r.1)
}

/// The integer operation of a form as the reference prints it: `mov_imm`,
/// `mov` (the `bitop` move), `iadd`/`isub` without saturation or a shifted
/// operand, `imadd`, `cmpsel` (its last two register sources are the
/// selected values: the reference prints `cmpsel cc, d, a, b, x, y`). A source printed with a modifier (`.sx`, a shift) is
/// not followed.
fn alu_op(mnem: &str, operands: &[String]) -> AluOp {
    let plain = || {
        operands.iter().skip(1).all(|o| {
            !o.starts_with("lsl")
                && !o.contains(".sx")
                && !o.contains(".abs")
                && !o.starts_with('-')
        })
    };
    match mnem {
        "mov_imm" => AluOp::Imm,
        "mov" if plain() => AluOp::Move,
        "iadd" if plain() => AluOp::Add,
        "isub" if plain() => AluOp::Sub,
        "imadd" if plain() => AluOp::MulAdd,
        "cmpsel" => AluOp::Select,
        // the constant-zero truth table: no source is read
        "bitop_unary" if operands.first().is_some_and(|o| o == "zero") => AluOp::Imm,
        _ => AluOp::Other,
    }
}

/// The 16-bit key of a 32-bit ALU key, for a one-half destination.
fn narrow(k: CostKey) -> CostKey {
    match k {
        K::Fma32 => K::Fma16,
        K::Fmul32 => K::Fmul16,
        K::Fadd32 => K::Fadd16,
        K::Iadd32 => K::Iadd16,
        K::Imad32 => K::Imad16,
        K::Fcmpsel32 => K::Fcmpsel16,
        K::Rsqrt32 => K::Rsqrt16,
        K::Exp2_32 => K::Exp2_16,
        K::Log2_32 => K::Log2_16,
        k => k,
    }
}

/// The exec and predicate columns of an Apple9 instruction (`mnem`, its
/// `bytes`), from the facts in docs/apple9-exec-mask.md (Mesa's Apple9
/// encoder tests and hardware experiments, read as facts; a selector those
/// do not document gets no exec column, and its branch no verdict):
/// - a `cmpsel` whose first byte's low nibble is 0xA is a predicate
///   compare writing bank `byte0 >> 5` (the reference prints the bank
///   field as a destination register);
/// - `push_exec` (`0f 05 54 sel`): an if (`sel & 3 == 1`) or loop scope
///   (`2`) whose condition is bank `(sel >> 2) & 7` (6, 7: constant);
/// - `else_exec` flips within its level (selector 0x19 reads nothing);
/// - `pop_exec` pops one scope; `while_exec` (`8f 04 54 sel`) reads bank
///   `(sel >> 2) & 7`; `break_exec` unwinds and reads nothing.
fn exec_columns(mnem: &str, bytes: &[u8]) -> (Option<(ExecOp, u8)>, Option<Pred>) {
    let b = |k: usize| bytes.get(k).copied().unwrap_or(0);
    let bank = |sel: u8| match (sel >> 2) & 7 {
        n @ 0..=5 => Some(Pred::Read(n)),
        _ => None,
    };
    match mnem {
        "cmpsel" if b(0) & 0x0f == 0x0a => (None, Some(Pred::Write(b(0) >> 5))),
        // kind 1: an if scope, 2: a loop scope
        "push_exec" if matches!(b(3) & 3, 1 | 2) => (Some((ExecOp::If, 1)), bank(b(3))),
        // the canonical else (selector 0x19: constant source); other
        // selectors are not documented
        "else_exec" if b(3) == 0x19 => (Some((ExecOp::Else, 0)), None),
        "pop_exec" if matches!(b(3), 1 | 2) => (Some((ExecOp::Pop(1), 1)), None),
        "while_exec" if b(3) & 3 == 2 => (Some((ExecOp::While, 0)), bank(b(3))),
        "break_exec" => (Some((ExecOp::Update, 0)), None),
        _ => (None, None),
    }
}

/// An integer operand as the reference prints it (`50`, `-3`, `0x1f`).
fn int_operand(o: &str) -> Option<i64> {
    let (neg, digits) = match o.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, o),
    };
    let v = match digits.strip_prefix("0x") {
        Some(h) => i64::from_str_radix(h, 16).ok()?,
        None if !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) => {
            digits.parse().ok()?
        }
        None => return None,
    };
    Some(if neg { -v } else { v })
}

/// The compare and immediate columns: a predicate compare's condition
/// (its first operand: `ieq`, `slt`, `ugt`, …; float and `test` compares
/// have none), its invert bit (byte 0 bit 4) and an immediate second
/// source; an exec test's polarity (selector bit 5: for a loop update,
/// lanes whose predicate holds leave; docs/apple9-exec-mask.md, inferred);
/// the immediate of `mov_imm`, `iadd`/`isub` and the constant-zero bitop.
fn compare_columns(
    mnem: &str,
    operands: &[String],
    bytes: &[u8],
    pred: Option<Pred>,
    exec: Option<(ExecOp, u8)>,
) -> (Option<super::Compare>, Option<i64>) {
    use super::{Compare, Cond};
    let b0 = bytes.first().copied().unwrap_or(0);
    match (pred, exec) {
        (Some(Pred::Write(_)), _) => {
            let cc = operands.first().map(String::as_str).unwrap_or("");
            let signed = match cc.as_bytes().first() {
                Some(b'i' | b's') => true,
                Some(b'u') => false,
                _ => return (None, None),
            };
            let cond = match &cc[1..] {
                "eq" => Cond::Eq,
                "ne" => Cond::Ne,
                "lt" => Cond::Lt,
                "le" => Cond::Le,
                "gt" => Cond::Gt,
                "ge" => Cond::Ge,
                _ => return (None, None),
            };
            let compare = Compare {
                cond,
                signed,
                invert: b0 & 0x10 != 0,
            };
            (Some(compare), operands.get(3).and_then(|o| int_operand(o)))
        }
        (Some(Pred::Read(_)), Some(_)) => {
            let sel = bytes.get(3).copied().unwrap_or(0);
            let polarity = Compare {
                cond: Cond::Eq,
                signed: false,
                invert: sel & 0x20 != 0,
            };
            (Some(polarity), None)
        }
        _ => match mnem {
            "mov_imm" => (None, operands.get(1).and_then(|o| int_operand(o))),
            "iadd" | "isub" => (None, operands.iter().skip(1).find_map(|o| int_operand(o))),
            "bitop_unary" if operands.first().is_some_and(|o| o == "zero") => (None, Some(0)),
            _ => (None, None),
        },
    }
}

fn range(r: &Reg, bits: u8) -> RegRange {
    RegRange {
        start: r.half,
        len: r.halves,
        bits: bits | if r.uniform { RegRange::UNIFORM } else { 0 },
    }
}

/// The table of Apple9 `code` at `base`, walked as `l`
/// (`l = apple9::walk(code, base)`): one row per instruction and per
/// `unknown` position (class `Unknown`, `complete: false`); gaps have none.
pub fn table(code: &[u8], base: u32, l: &Listing) -> CodeTable {
    let mut t = CodeTable::with_capacity(&crate::isa::APPLE9, l.items.len());
    let mut regs: Vec<RegRange> = Vec::with_capacity(8);
    for it in &l.items {
        let Some((addr, len, bytes)) = it.framed(code, base) else {
            continue;
        };
        let Some(x) = facts(it, bytes) else { continue };
        let (class, cost) = match it {
            Item::Insn {
                kind: Kind::Form(i),
                ..
            } => FORM_COLUMNS
                .get(*i as usize)
                .copied()
                .unwrap_or((Unknown, None)),
            Item::Insn {
                kind: Kind::Flow { .. },
                mnem,
                ..
            } => match x.flow {
                Flow::Next if mnem.contains("exec") => (ExecMask, Some(K::Exec)),
                _ => (Control, Some(K::Branch)),
            },
            _ => (Unknown, None),
        };
        let half_dest = x.defs.first().is_some_and(|d| d.halves == 1);
        let mut row = Row::new(addr, len, class, x.flow);
        if let Item::Insn {
            kind: Kind::Form(_),
            mnem,
            operands,
            ..
        } = it
        {
            row.op = alu_op(mnem, operands);
        }
        row.cost = cost.map(|k| if half_dest { narrow(k) } else { k });
        row.complete = x.complete;
        row.wait = Scoreboard {
            completes_on: x.wait_group,
            waits_on: x
                .waits_on
                .iter()
                .filter(|&&g| g < 8)
                .fold(0, |m, &g| m | 1 << g),
        };
        if let Item::Insn {
            kind: Kind::Form(i),
            operands,
            ..
        } = it
        {
            if ROLES
                .get(*i as usize)
                .is_some_and(|r| *r == crate::apple9::facts::Role::DestGroup)
            {
                row.special = operands
                    .iter()
                    .find_map(|o| o.strip_prefix("sr")?.parse().ok())
                    .map(|number| Special {
                        number,
                        value: sr_value(number),
                    });
            }
        }
        regs.clear();
        let (exec, pred) = match it {
            Item::Insn { mnem, .. } => exec_columns(mnem, bytes),
            _ => (None, None),
        };
        row.exec = exec;
        row.pred = pred;
        if let Item::Insn { mnem, operands, .. } = it {
            (row.compare, row.imm) = compare_columns(mnem, operands, bytes, pred, exec);
        }
        if exec.is_some() {
            // a documented exec-mask form: it has no register operand
            // (docs/apple9-exec-mask.md), so nothing about its operands is
            // unknown; the payload's other bits do not touch registers
            row.complete = true;
        }
        if let (Some(Pred::Write(_)), Item::Insn { operands, .. }) = (pred, it) {
            // a predicate compare: it writes no GPR (the decoded
            // destination is the bank field) and reads the two compared
            // operands (`cc, dest, a, b, …`: what follows are other fields)
            regs.extend(
                operands
                    .iter()
                    .skip(2)
                    .take(2)
                    .filter_map(|o| parse_reg(o))
                    .flatten()
                    .map(|r| range(&r, RegRange::USE)),
            );
            row.op = AluOp::Other;
        } else {
            regs.extend(x.defs.iter().map(|r| range(r, RegRange::DEF)));
            regs.extend(x.uses.iter().map(|r| range(r, RegRange::USE)));
        }
        let mem = x.mem.as_ref().map(|m| MemDesc {
            space: m.space,
            dir: m.dir,
            elem_bytes: m.elem_bytes,
            components: m.components,
            bytes_per_lane: m.bytes_per_lane,
            data: m.data.map(|r| range(&r, 0)),
            base: Some(range(&m.base, RegRange::USE)),
            index: match &m.index {
                Index::Imm(v) => MemIndex::Imm(*v as i64),
                Index::Reg { reg, .. } => MemIndex::Reg(range(reg, RegRange::USE)),
            },
            shift: m.shift,
            offset: m.offset as i32,
        });
        t.push(row, &regs, mem);
    }
    t
}
