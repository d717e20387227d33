//! The code table: one ISA-neutral row per decoded instruction, filled by
//! each decoder module (G13 in [`g13`], Apple9 in [`apple9`]) and read by
//! the analysis passes (issue 36 item 1). A pass that reads a table never
//! names a form index, a mnemonic or a decoder type; a new GPU family is
//! one filler module here plus its model data (docs/design.md, "The code
//! table").
//!
//! Columns of a [`Row`]:
//!
//! | column | what |
//! |---|---|
//! | `addr`, `len` | where the instruction is, its size in bytes |
//! | `class` | operation class ([`Category`]: ALU, cross-lane, exec mask, control, load, store, atomic, texture, sync, graphics, unknown) |
//! | `op` | integer operation an address analysis follows ([`AluOp`]: immediate, move, add, sub, multiply-add) |
//! | `cost` | key into the GPU model's timing table ([`CostKey`]); `None` where no row is known for the family |
//! | `flow` | control flow with absolute targets ([`Flow`]) |
//! | `exec` | exec-mask stack effect and its count |
//! | `regs` | defined and used register ranges in 16-bit halves, GPR or uniform ([`RegRange`]) |
//! | `mem` | memory access descriptor ([`MemDesc`]: space, direction, element, components, base, index, shift, offset) |
//! | `special` | a special-register read and what it means ([`Special`]) |
//! | `wait` | scoreboard: the slot/group a result completes on, the groups waited on ([`Scoreboard`]) |
//! | `complete` | every operand decoded (false where the family's payload layout is not public) |
//!
//! The register and memory columns are stored apart (one `Vec` each, rows
//! index into them), so a row is small and a 1M-instruction table stays
//! compact.

pub mod apple9;
pub mod g13;

use crate::cost::CostKey;
use crate::isa::Isa;
use crate::model::{Category, Flow};
use crate::semantics::{ExecOp, MemDir, MemSpace};

/// A register operand, compact: `len` 16-bit halves from `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RegRange {
    pub start: u16,
    pub len: u16,
    /// [`RegRange::DEF`] | [`RegRange::USE`] | [`RegRange::UNIFORM`].
    pub bits: u8,
}

impl RegRange {
    pub const DEF: u8 = 1;
    pub const USE: u8 = 2;
    pub const UNIFORM: u8 = 4;
    pub fn range(&self) -> std::ops::Range<u32> {
        self.start as u32..self.start as u32 + self.len as u32
    }
    pub fn is_def(&self) -> bool {
        self.bits & Self::DEF != 0
    }
    pub fn is_use(&self) -> bool {
        self.bits & Self::USE != 0
    }
    pub fn is_uniform(&self) -> bool {
        self.bits & Self::UNIFORM != 0
    }
    /// The halves an allocator reserves for it: a GPR vector whose size in
    /// halves is not a power of two and whose start is aligned to the next
    /// power of two reserves that aligned group (`r4_r5_r6` → `r4`..`r7`;
    /// Mesa `agx_register_allocate.c`, see `Reg::allocated_half_range`),
    /// everything else what it spans.
    pub fn allocated_range(&self) -> std::ops::Range<u32> {
        let r = self.range();
        let group = (r.len() as u32).next_power_of_two();
        if self.is_uniform() || r.len() as u32 == group || !r.start.is_multiple_of(group) {
            r
        } else {
            r.start..r.start + group
        }
    }
}

/// The index operand of an address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemIndex {
    /// No index (the address is the base plus the offset).
    None,
    /// An immediate index (in elements, before the shift).
    Imm(i64),
    /// A register index.
    Reg(RegRange),
}

/// What memory an instruction touches and how: address = base + (index <<
/// shift) + offset, in bytes, where the family says so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemDesc {
    pub space: MemSpace,
    pub dir: MemDir,
    /// Bytes of one element (1, 2, 4, 8); 0 where not known.
    pub elem_bytes: u8,
    /// Components moved per lane (1–4); 0 where not known.
    pub components: u8,
    /// Bytes one lane moves.
    pub bytes_per_lane: u32,
    /// The data registers (loaded into or stored from).
    pub data: Option<RegRange>,
    /// The base address registers (a 64-bit pair), when a register.
    pub base: Option<RegRange>,
    pub index: MemIndex,
    /// Left shift applied to the index, in bits.
    pub shift: u8,
    /// Immediate byte offset.
    pub offset: i32,
}

impl MemDesc {
    /// Whether every lane computes the same address: base and index
    /// uniform registers or immediates (`None` base: not known).
    pub fn uniform_address(&self) -> Option<bool> {
        let base = self.base?;
        Some(
            base.is_uniform()
                && match self.index {
                    MemIndex::None | MemIndex::Imm(_) => true,
                    MemIndex::Reg(r) => r.is_uniform(),
                },
        )
    }
}

/// The integer operation of an ALU row, as far as address and uniformity
/// analyses need it: the result in terms of the row's used registers (in
/// their order) and immediates (uniform values).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum AluOp {
    /// Not an ALU operation the analyses follow.
    #[default]
    Other,
    /// An immediate: the same value in every lane.
    Imm,
    /// A copy of its one source.
    Move,
    /// The sum of its sources.
    Add,
    /// The first source minus the second.
    Sub,
    /// The first two sources' product plus the third.
    MulAdd,
    /// A compare-and-select: one of its last two sources (the earlier
    /// ones are compared).
    Select,
}

/// A three-component system value's dimension.
pub type Dim = u8;

/// What a special-register read yields, in Metal's kernel-attribute terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpecialValue {
    ThreadPositionInGrid(Dim),
    ThreadPositionInThreadgroup(Dim),
    ThreadgroupPositionInGrid(Dim),
    ThreadsPerThreadgroup(Dim),
    ThreadIndexInThreadgroup,
    ThreadIndexInSimdgroup,
    SimdgroupIndexInThreadgroup,
    /// A register whose meaning is named but not one of the above (core
    /// index, coverage masks, …).
    Other,
    /// A register whose meaning is not known for this family.
    Unknown,
}

impl SpecialValue {
    /// Whether the value is the same for every thread of a SIMD-group
    /// (Metal's attribute table; Mesa's NIR divergence analysis for the
    /// matching system values). `None` where not known: a pass treats
    /// that as divergent.
    pub fn simd_uniform(self) -> Option<bool> {
        use SpecialValue::*;
        match self {
            ThreadgroupPositionInGrid(_)
            | ThreadsPerThreadgroup(_)
            | SimdgroupIndexInThreadgroup => Some(true),
            ThreadPositionInGrid(_)
            | ThreadPositionInThreadgroup(_)
            | ThreadIndexInThreadgroup
            | ThreadIndexInSimdgroup => Some(false),
            Other | Unknown => None,
        }
    }
}

/// A special-register read: its number in the family and what it means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Special {
    pub number: u16,
    pub value: SpecialValue,
}

/// A predicate-bank effect: a compare writes bank `n` from its sources;
/// an exec-mask test reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pred {
    Write(u8),
    Read(u8),
}

/// What an integer compare tests (its first source against its second).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cond {
    /// Whether `a cond b` holds.
    pub fn holds(self, a: i64, b: i64) -> bool {
        match self {
            Cond::Eq => a == b,
            Cond::Ne => a != b,
            Cond::Lt => a < b,
            Cond::Le => a <= b,
            Cond::Gt => a > b,
            Cond::Ge => a >= b,
        }
    }
}

/// A compare's condition and polarity; on an exec-mask test, `invert` is
/// whether lanes whose predicate holds leave (a loop update) or stay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Compare {
    pub cond: Cond,
    pub signed: bool,
    pub invert: bool,
}

/// Scoreboard fields carried in the instruction bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scoreboard {
    /// The slot (G13) or output wait group (Apple9) the result completes on.
    pub completes_on: Option<u8>,
    /// Bit `k` set: waits on slot/group `k`.
    pub waits_on: u8,
}

/// Sentinel of the row's optional side-table indices.
const NONE: u32 = u32::MAX;

/// One instruction's row. Registers and memory are in the table's side
/// columns: read them through [`CodeTable::regs`] and [`CodeTable::mem`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    pub addr: u32,
    pub len: u8,
    pub class: Category,
    pub cost: Option<CostKey>,
    /// What an integer ALU row computes ([`AluOp::Other`] elsewhere).
    pub op: AluOp,
    pub flow: Flow,
    pub exec: Option<(ExecOp, u8)>,
    /// A predicate bank written or read (families whose exec-mask tests
    /// read a predicate a compare set, Apple9; `None` on G13, whose tests
    /// compare registers themselves).
    pub pred: Option<Pred>,
    /// An integer compare's condition (a predicate compare), or an exec
    /// test's polarity (`cond` unused there): families that say so.
    pub compare: Option<Compare>,
    /// The row's integer immediate source (an immediate moved, added or
    /// compared), where the family's filler reads one.
    pub imm: Option<i64>,
    pub special: Option<Special>,
    pub wait: Scoreboard,
    /// A stack-pointer adjustment and its signed amount as encoded (G13:
    /// Mesa's `stack_adjust`, dwords of scratch).
    pub stack_adjust: Option<i32>,
    pub complete: bool,
    regs_start: u32,
    mem: u32,
}

impl Row {
    /// A row with no registers, memory or special read yet (fillers add
    /// them with [`CodeTable::push`]).
    pub fn new(addr: u32, len: u8, class: Category, flow: Flow) -> Row {
        Row {
            addr,
            len,
            class,
            cost: None,
            op: AluOp::Other,
            flow,
            exec: None,
            pred: None,
            compare: None,
            imm: None,
            special: None,
            wait: Scoreboard::default(),
            stack_adjust: None,
            complete: true,
            regs_start: 0,
            mem: NONE,
        }
    }
}

/// The decoded code of one function or blob: rows in address order.
#[derive(Clone, Debug)]
pub struct CodeTable {
    pub isa: &'static Isa,
    pub rows: Vec<Row>,
    regs: Vec<RegRange>,
    mems: Vec<MemDesc>,
}

impl CodeTable {
    pub fn new(isa: &'static Isa) -> CodeTable {
        CodeTable {
            isa,
            rows: Vec::new(),
            regs: Vec::new(),
            mems: Vec::new(),
        }
    }

    pub fn with_capacity(isa: &'static Isa, n: usize) -> CodeTable {
        CodeTable {
            isa,
            rows: Vec::with_capacity(n),
            regs: Vec::with_capacity(3 * n),
            mems: Vec::new(),
        }
    }

    /// Appends `row` with its registers and memory access.
    pub fn push(&mut self, mut row: Row, regs: &[RegRange], mem: Option<MemDesc>) {
        row.regs_start = self.regs.len() as u32;
        self.regs.extend_from_slice(regs);
        row.mem = match mem {
            Some(m) => {
                self.mems.push(m);
                (self.mems.len() - 1) as u32
            }
            None => NONE,
        };
        self.rows.push(row);
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Register ranges of row `i`.
    pub fn regs(&self, i: usize) -> &[RegRange] {
        let start = self.rows[i].regs_start as usize;
        let end = self
            .rows
            .get(i + 1)
            .map_or(self.regs.len(), |r| r.regs_start as usize);
        &self.regs[start..end]
    }

    /// Registers row `i` defines.
    pub fn defs(&self, i: usize) -> impl Iterator<Item = &RegRange> {
        self.regs(i).iter().filter(|r| r.is_def())
    }

    /// Registers row `i` uses.
    pub fn uses(&self, i: usize) -> impl Iterator<Item = &RegRange> {
        self.regs(i).iter().filter(|r| r.is_use())
    }

    /// The memory access of row `i`.
    pub fn mem(&self, i: usize) -> Option<&MemDesc> {
        self.mems.get(self.rows[i].mem as usize)
    }

    /// Rows with a memory access, with their index.
    pub fn accesses(&self) -> impl Iterator<Item = (usize, &MemDesc)> {
        self.rows
            .iter()
            .enumerate()
            .filter_map(|(i, r)| self.mems.get(r.mem as usize).map(|m| (i, m)))
    }

    /// The row at address `addr`.
    pub fn index_of(&self, addr: u32) -> Option<usize> {
        self.rows.binary_search_by_key(&addr, |r| r.addr).ok()
    }
}

#[cfg(test)]
mod tests;
