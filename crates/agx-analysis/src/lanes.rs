//! Lane patterns of memory accesses from the code table alone (any GPU
//! family): how the address of a SIMD-group's request varies across its 32
//! lanes. The pass reads only `agx_isa::table` rows (special-register
//! meanings, integer operations, memory descriptors); it is what Apple9
//! code gets today, where the G13 address analysis (`crate::address`) does
//! not run yet.
//!
//! A register's value is followed only where the register has one
//! definition in the code (so every use reads that value): a special
//! register whose value is linear in the lane (thread position in the grid
//! or threadgroup along x, thread index in the threadgroup or SIMD-group:
//! one step per lane, assuming, as the G13 analysis does by default, a
//! threadgroup whose x extent is a multiple of 32), a SIMD-uniform special
//! register, an immediate, a uniform register, a load from a uniform
//! address, and moves, sums, differences and multiply-adds of those. Any
//! other value, and any register written more than once, is unknown, with
//! the reason. Assumed (labelled in docs/analysis.md): control-flow and
//! exec-mask instructions whose payload is not decoded write no register
//! an address reads.

use agx_isa::table::{AluOp, CodeTable, MemDesc, MemIndex, RegRange, SpecialValue};
use agx_isa::Category;
use std::collections::HashMap;

/// A value across the lanes of a SIMD-group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lanes {
    /// The same in every lane.
    Uniform,
    /// A uniform value plus `k` times the lane index.
    Linear(i64),
    /// Not proved; why.
    Unknown(Why),
}

/// Why a value is not known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// The register is written more than once in the code.
    Redefined,
    /// No definition in the code reads it (set before the code starts).
    Undefined,
    /// A special register whose lane behaviour is not documented, or that
    /// depends on the threadgroup shape (y and z positions).
    Special,
    /// Data loaded from a per-lane address.
    Loaded,
    /// An operation this pass does not follow.
    Operation,
}

impl Why {
    pub fn text(self) -> &'static str {
        match self {
            Why::Redefined => "a register of the address is written more than once",
            Why::Undefined => "a register of the address has no definition in the code",
            Why::Special => {
                "the address reads a special register whose lane pattern is not known (an undocumented number, or a y/z position that depends on the threadgroup shape)"
            }
            Why::Loaded => "the address is computed from loaded data",
            Why::Operation => "the address goes through an operation the lane analysis does not follow",
        }
    }
}

/// The lane pattern of one memory row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaneFact {
    /// `uniform`, `contiguous`, `strided` or `unknown` (the names of the
    /// G13 access facts).
    pub pattern: &'static str,
    /// Bytes between consecutive lanes' addresses (contiguous and strided).
    pub lane_stride: Option<i64>,
    pub reason: Option<&'static str>,
}

struct Values<'a> {
    t: &'a CodeTable,
    /// The one defining row of each GPR half (`None`: several).
    def: HashMap<u32, Option<usize>>,
    memo: HashMap<usize, Lanes>,
}

impl Values<'_> {
    fn of_reg(&mut self, r: &RegRange, depth: u32) -> Lanes {
        if r.is_uniform() {
            return Lanes::Uniform;
        }
        // every half of the use written by one and the same row
        let mut row = None;
        for h in r.range() {
            match self.def.get(&h) {
                None => return Lanes::Unknown(Why::Undefined),
                Some(None) => return Lanes::Unknown(Why::Redefined),
                Some(Some(d)) if row.is_some_and(|x| x != *d) => {
                    return Lanes::Unknown(Why::Redefined)
                }
                Some(Some(d)) => row = Some(*d),
            }
        }
        match row {
            Some(d) => self.of_row(d, depth),
            None => Lanes::Unknown(Why::Undefined),
        }
    }

    fn of_row(&mut self, i: usize, depth: u32) -> Lanes {
        if let Some(v) = self.memo.get(&i) {
            return *v;
        }
        let v = if depth > 64 {
            Lanes::Unknown(Why::Operation)
        } else {
            self.compute(i, depth + 1)
        };
        self.memo.insert(i, v);
        v
    }

    fn compute(&mut self, i: usize, depth: u32) -> Lanes {
        let row = self.t.rows[i];
        if let Some(s) = row.special {
            return special(s.value);
        }
        if row.class == Category::Load {
            return match self.t.mem(i).copied() {
                Some(m) if self.address(&m, depth) == Lanes::Uniform => Lanes::Uniform,
                _ => Lanes::Unknown(Why::Loaded),
            };
        }
        let uses: Vec<RegRange> = self.t.uses(i).copied().collect();
        let vals: Vec<Lanes> = uses.iter().map(|u| self.of_reg(u, depth)).collect();
        if let Some(w) = vals.iter().find_map(|v| match v {
            Lanes::Unknown(w) => Some(*w),
            _ => None,
        }) {
            return Lanes::Unknown(w);
        }
        let k = |v: &Lanes| match v {
            Lanes::Linear(k) => *k,
            _ => 0,
        };
        let lin = |k: i64| {
            if k == 0 {
                Lanes::Uniform
            } else {
                Lanes::Linear(k)
            }
        };
        match row.op {
            AluOp::Imm => Lanes::Uniform,
            AluOp::Move if vals.len() == 1 => vals[0],
            AluOp::Add => lin(vals.iter().map(k).sum()),
            AluOp::Sub if vals.len() == 2 => lin(k(&vals[0]) - k(&vals[1])),
            AluOp::Sub if vals.len() == 1 => vals[0],
            // a·b + c: linear only when the product is uniform
            AluOp::MulAdd if vals.len() == 3 && k(&vals[0]) == 0 && k(&vals[1]) == 0 => vals[2],
            _ if row.class == Category::Alu && vals.iter().all(|v| *v == Lanes::Uniform) => {
                Lanes::Uniform
            }
            _ => Lanes::Unknown(Why::Operation),
        }
    }

    /// The lane behaviour of `m`'s address (in bytes).
    fn address(&mut self, m: &MemDesc, depth: u32) -> Lanes {
        let base = match m.base {
            Some(b) => self.of_reg(&b, depth),
            None => return Lanes::Unknown(Why::Operation),
        };
        let index = match m.index {
            MemIndex::None | MemIndex::Imm(_) => Lanes::Uniform,
            MemIndex::Reg(r) => match self.of_reg(&r, depth) {
                Lanes::Linear(k) => Lanes::Linear(k << m.shift),
                v => v,
            },
        };
        match (base, index) {
            (Lanes::Unknown(w), _) | (_, Lanes::Unknown(w)) => Lanes::Unknown(w),
            (Lanes::Uniform, v) | (v, Lanes::Uniform) => v,
            (Lanes::Linear(a), Lanes::Linear(b)) => match a + b {
                0 => Lanes::Uniform,
                k => Lanes::Linear(k),
            },
        }
    }
}

fn special(v: SpecialValue) -> Lanes {
    use SpecialValue::*;
    match v {
        ThreadPositionInGrid(0)
        | ThreadPositionInThreadgroup(0)
        | ThreadIndexInThreadgroup
        | ThreadIndexInSimdgroup => Lanes::Linear(1),
        v if v.simd_uniform() == Some(true) => Lanes::Uniform,
        _ => Lanes::Unknown(Why::Special),
    }
}

/// The lane pattern of every memory row of `t`, by row index.
pub fn lane_facts(t: &CodeTable) -> Vec<(usize, LaneFact)> {
    let mut def: HashMap<u32, Option<usize>> = HashMap::new();
    for i in 0..t.len() {
        for d in t.defs(i).filter(|d| !d.is_uniform()) {
            for h in d.range() {
                def.entry(h).and_modify(|e| *e = None).or_insert(Some(i));
            }
        }
        // a row with undecoded operands may write any register, except
        // control flow and exec-mask rows (an assumption where their
        // payload is not public, Apple9: G13's write only the exec-stack
        // counter r0l, applegpu's implicit operand; no compiler uses it in
        // an address)
        let r = t.rows[i];
        let control = matches!(r.class, Category::Control | Category::ExecMask);
        if !r.complete && t.regs(i).is_empty() && !control {
            for h in 0..crate::untimed::ALL_HALVES {
                def.insert(h, None);
            }
        }
    }
    let mut v = Values {
        t,
        def,
        memo: HashMap::new(),
    };
    t.accesses()
        .map(|(i, m)| (i, *m))
        .collect::<Vec<_>>()
        .into_iter()
        .map(|(i, m)| {
            let f = match v.address(&m, 0) {
                Lanes::Uniform => LaneFact {
                    pattern: "uniform",
                    lane_stride: Some(0),
                    reason: None,
                },
                Lanes::Linear(k) => LaneFact {
                    pattern: if k == m.bytes_per_lane as i64 {
                        "contiguous"
                    } else {
                        "strided"
                    },
                    lane_stride: Some(k),
                    reason: None,
                },
                Lanes::Unknown(w) => LaneFact {
                    pattern: "unknown",
                    lane_stride: None,
                    reason: Some(w.text()),
                },
            };
            (i, f)
        })
        .collect()
}
