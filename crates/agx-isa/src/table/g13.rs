//! The G13 (M1/M2) filler of the code table: the one place besides the
//! G13 decoder that reads a G13 [`Instruction`]. Every column comes from
//! the form table's generated columns (`crate::semantics`: category,
//! control flow, exec effect, memory space and direction, cost rule,
//! scoreboard slot) and from the typed operands; the memory descriptor's
//! operand positions are applegpu's operand order of each memory form
//! (dougallj/applegpu @ 4c5bae61 `applegpu.py`: `DeviceLoadInstructionDesc`
//! "mask, format, comps, D, A, O, signed, shift", `ThreadgroupLoadDesc`
//! "format, comps, R, A, O", `AtomicInstructionDesc` "op, ?, D, A, O").

use super::{
    AluOp, CodeTable, MemDesc, MemIndex, RegRange, Row, Scoreboard, Special, SpecialValue,
};
use crate::forms::SR_NAMES;
use crate::model::{Instruction, Operand, OperandKind, Reg, RegFile, Width};
use crate::semantics::MemSpace;

/// The table of `insns` (in address order).
pub fn table(insns: &[Instruction]) -> CodeTable {
    let mut t = CodeTable::with_capacity(&crate::isa::G13, insns.len());
    let mut regs: Vec<RegRange> = Vec::with_capacity(8);
    for i in insns {
        regs.clear();
        regs.extend(i.all_operands().filter_map(reg_range));
        t.push(row(i), &regs, mem(i));
    }
    t
}

/// The row of one instruction (registers and memory go in side columns).
pub fn row(i: &Instruction) -> Row {
    let mut r = Row::new(i.addr, i.len, i.category(), i.flow());
    r.cost = Some(i.cost_key());
    r.op = alu_op(i);
    r.exec = i.exec_op().map(|op| (op, i.exec_count().unwrap_or(0)));
    r.special = special(i);
    r.wait = Scoreboard {
        completes_on: i.scoreboard_slot().map(|s| s.min(255) as u8),
        waits_on: wait_mask(i),
    };
    r.stack_adjust = i.stack_adjust();
    r
}

fn range_of(r: &Reg, bits: u8) -> RegRange {
    let rg = r.half_range();
    let uniform = if r.file == RegFile::Uniform {
        RegRange::UNIFORM
    } else {
        0
    };
    RegRange {
        start: rg.start.min(u16::MAX as u32) as u16,
        len: rg.len().min(u16::MAX as usize) as u16,
        bits: bits | uniform,
    }
}

fn reg_range(o: &Operand) -> Option<RegRange> {
    let r = o.as_reg()?;
    if r.half_range().is_empty() {
        return None;
    }
    let mut bits = 0;
    if o.role.is_def() {
        bits |= RegRange::DEF;
    }
    if o.role.is_use() {
        bits |= RegRange::USE;
    }
    Some(range_of(r, bits))
}

/// The meaning of a `get_sr` read, from applegpu's register names.
fn special(i: &Instruction) -> Option<Special> {
    let number = i.operands.iter().find_map(|o| match o.kind {
        OperandKind::SpecialReg(n) => Some(n),
        _ => None,
    })?;
    Some(Special {
        number,
        value: sr_value(number),
    })
}

/// What G13 special register `n` holds (applegpu `SR_NAMES`, Metal's names).
pub fn sr_value(n: u16) -> SpecialValue {
    let Some(Some(name)) = SR_NAMES.get(n as usize) else {
        return SpecialValue::Unknown;
    };
    let (base, dim) = match name.rsplit_once('.') {
        Some((b, d)) => (b, "xyz".find(d).map(|k| k as u8)),
        None => (*name, None),
    };
    match (base, dim) {
        ("thread_position_in_grid", Some(d)) => SpecialValue::ThreadPositionInGrid(d),
        ("thread_position_in_threadgroup", Some(d)) => SpecialValue::ThreadPositionInThreadgroup(d),
        ("threadgroup_position_in_grid", Some(d)) => SpecialValue::ThreadgroupPositionInGrid(d),
        ("threads_per_threadgroup", Some(d)) => SpecialValue::ThreadsPerThreadgroup(d),
        ("thread_index_in_threadgroup", None) => SpecialValue::ThreadIndexInThreadgroup,
        ("thread_index_in_simdgroup", None) => SpecialValue::ThreadIndexInSimdgroup,
        ("simdgroup_index_in_threadgroup", None) => SpecialValue::SimdgroupIndexInThreadgroup,
        _ => SpecialValue::Other,
    }
}

/// The slots a `wait` instruction waits on (its immediate operand is the
/// slot number; applegpu `WaitInstructionDesc`).
fn wait_mask(i: &Instruction) -> u8 {
    if i.cost_key() != crate::CostKey::Wait {
        return 0;
    }
    match i.operands.iter().find_map(|o| o.kind.imm_value()) {
        Some(s) if (0..8).contains(&s) => 1 << s,
        _ => 0,
    }
}

fn index_of(o: Option<&Operand>) -> MemIndex {
    match o.map(|o| &o.kind) {
        Some(OperandKind::Reg(r)) => MemIndex::Reg(range_of(r, RegRange::USE)),
        Some(k) => k.imm_value().map_or(MemIndex::None, MemIndex::Imm),
        None => MemIndex::None,
    }
}

/// The memory descriptor of `i`.
pub fn mem(i: &Instruction) -> Option<MemDesc> {
    let m = i.mem_access()?;
    let ops = i.operands.as_slice();
    let data = m.data.map(|r| range_of(&r, 0));
    let elem = crate::semantics::format_bytes(ops);
    // components: the mask keyword (`x`, `xyz`), as the address analysis
    // reads it; bytes per lane: element size × components (`i8, x` moves
    // one byte into a 16-bit register), else the data registers' size
    let comps = ops
        .iter()
        .filter_map(|o| o.kind.keyword_text())
        .find(|t| !t.is_empty() && t.len() <= 4 && t.chars().all(|c| "xyzw".contains(c)))
        .map(|t| t.len() as u8);
    let (components, bytes) = match (elem, comps) {
        (0, _) => (0, m.bytes_per_lane()),
        (e, Some(c)) => (c, e as u32 * c as u32),
        (e, None) => (
            (m.bytes_per_lane() / e as u32).min(255) as u8,
            m.bytes_per_lane(),
        ),
    };
    let mut d = MemDesc {
        space: m.space,
        dir: m.dir,
        elem_bytes: elem,
        components,
        bytes_per_lane: bytes,
        data,
        base: None,
        index: MemIndex::None,
        shift: 0,
        offset: 0,
    };
    let reg_at = |k: usize| {
        ops.get(k)
            .and_then(|o| o.as_reg())
            .map(|r| range_of(r, RegRange::USE))
    };
    match (i.cost_key(), m.space) {
        (_, MemSpace::Device) if matches!(i.mnemonic(), "device_load" | "device_store") => {
            d.base = reg_at(4);
            d.index = index_of(ops.get(5));
            d.shift = ops
                .iter()
                .skip(6)
                .filter_map(|o| o.kind.keyword_text()?.strip_prefix("lsl ")?.parse().ok())
                .next()
                .unwrap_or(0);
            // the index counts elements: the shift is on top of the size
            d.shift += elem.max(1).trailing_zeros() as u8;
        }
        (_, MemSpace::Threadgroup)
            if matches!(i.mnemonic(), "threadgroup_load" | "threadgroup_store") =>
        {
            d.base = reg_at(3);
            d.index = index_of(ops.get(4));
            d.shift = elem.max(1).trailing_zeros() as u8;
        }
        (crate::CostKey::Atomic, _) => {
            let k = ops.iter().position(|o| {
                o.as_reg().is_some_and(|r| {
                    r.width == Width::W64 || r.count == 2 && r.file == RegFile::Uniform
                })
            });
            if let Some(k) = k {
                d.base = reg_at(k);
                d.index = index_of(ops.get(k + 1));
                d.shift = 2;
            }
        }
        _ => {}
    }
    Some(d)
}

/// The integer operation of `i` (applegpu's mnemonics, `.sat` variants
/// excluded: a saturating add is not a sum).
fn alu_op(i: &Instruction) -> AluOp {
    // a shifted source (`iadd r3, 0, r1.sx, lsl 2`) is not a plain sum
    let shifted = i
        .operands
        .iter()
        .any(|o| o.kind.keyword_text().is_some_and(|t| t.starts_with("lsl")));
    if shifted {
        return AluOp::Other;
    }
    match i.mnemonic() {
        "mov_imm" => AluOp::Imm,
        "mov" => AluOp::Move,
        "iadd" => AluOp::Add,
        "isub" => AluOp::Sub,
        "imadd" => AluOp::MulAdd,
        "icmpsel" | "fcmpsel" => AluOp::Select,
        _ => AluOp::Other,
    }
}
