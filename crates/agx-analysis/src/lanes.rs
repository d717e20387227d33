//! Lane patterns of memory accesses from the code table alone (any GPU
//! family): how the address of a SIMD-group's request varies across its 32
//! lanes. The pass reads only `agx_isa::table` rows (special-register
//! meanings, integer operations, memory descriptors); it is what Apple9
//! code gets today, where the G13 address analysis (`crate::address`) does
//! not run yet.
//!
//! A register's value is followed where one definition reaches the use
//! (reaching definitions over the CFG): a special
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
    /// Several definitions reach the use (a loop-carried or merged value).
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
            Why::Redefined => "several definitions of an address register reach it (a value carried around a loop or merged from branches)",
            Why::Undefined => "an address register has no definition before it in the code",
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

/// What reaches a register half at a point: one defining row, or several.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Def {
    Row(usize),
    Many,
}

/// Reaching definitions per GPR half (absent: none, the entry value).
type State = HashMap<u32, Def>;

fn meet(into: &mut State, from: &State) -> bool {
    let mut changed = false;
    for (h, d) in from {
        match into.get(h) {
            // undefined (the entry value) on the paths merged so far
            None => {
                into.insert(*h, Def::Many);
                changed = true;
            }
            Some(x) if x != d && *x != Def::Many => {
                into.insert(*h, Def::Many);
                changed = true;
            }
            _ => {}
        }
    }
    // a half defined on one path and not on another: several values
    for (h, x) in into.iter_mut() {
        if !from.contains_key(h) && *x != Def::Many {
            *x = Def::Many;
            changed = true;
        }
    }
    changed
}

/// The effect of row `i` on the state.
fn transfer(t: &CodeTable, i: usize, st: &mut State) {
    // a select of a register with itself, or a move to itself, leaves it
    // as it is (compilers write the loop condition so: `cmpsel ieq, r0, r3,
    // 50, r0, r0`)
    if selected(t, i)
        .is_some_and(|(x, y)| x == y && t.defs(i).all(|d| d.start == x.start && d.len == x.len))
    {
        return;
    }
    for d in t.defs(i).filter(|d| !d.is_uniform()) {
        for h in d.range() {
            st.insert(h, Def::Row(i));
        }
    }
    // a row with undecoded operands may write any register, except
    // control flow and exec-mask rows (an assumption where their payload is
    // not public, Apple9: G13's write only the exec-stack counter r0l,
    // applegpu's implicit operand; no compiler uses it in an address)
    let r = t.rows[i];
    let control = matches!(r.class, Category::Control | Category::ExecMask);
    if !r.complete && t.regs(i).is_empty() && !control {
        for h in 0..crate::untimed::ALL_HALVES {
            st.insert(h, Def::Many);
        }
    }
}

/// The two selected sources of a select row, or the one source of a move
/// (twice).
fn selected(t: &CodeTable, i: usize) -> Option<(RegRange, RegRange)> {
    let uses: Vec<RegRange> = t.uses(i).copied().collect();
    match (t.rows[i].op, uses.as_slice()) {
        (AluOp::Select, [.., x, y]) => Some((*x, *y)),
        (AluOp::Move, [x]) => Some((*x, *x)),
        _ => None,
    }
}

/// The definition reaching each used GPR range of each row, by
/// (row, first half of the use): forward dataflow over the CFG's blocks.
fn reaching(t: &CodeTable, cfg: &crate::cfg::Cfg) -> HashMap<(usize, u16), Option<Def>> {
    let n = cfg.blocks.len();
    let mut ins: Vec<Option<State>> = vec![None; n];
    // every function starts with nothing defined
    for f in &cfg.functions {
        if let Some(slot) = ins.get_mut(f.entry_block) {
            *slot = Some(State::new());
        }
    }
    if n > 0 && cfg.functions.is_empty() {
        ins[0] = Some(State::new());
    }
    let mut work: Vec<usize> = (0..n).collect();
    let mut queued = vec![true; n];
    let mut rounds = 0;
    while let Some(b) = work.pop() {
        queued[b] = false;
        rounds += 1;
        if rounds > 64 * n.max(1) {
            // no fixed point within the bound: nothing is claimed
            return HashMap::new();
        }
        let Some(mut st) = ins[b].clone() else {
            continue;
        };
        for i in cfg.blocks[b].insns.clone() {
            transfer(t, i, &mut st);
        }
        for s in cfg.blocks[b].succs.intra() {
            let changed = match &mut ins[s] {
                Some(x) => meet(x, &st),
                slot @ None => {
                    *slot = Some(st.clone());
                    true
                }
            };
            if changed && !queued[s] {
                queued[s] = true;
                work.push(s);
            }
        }
    }
    let mut out = HashMap::new();
    for (b, blk) in cfg.blocks.iter().enumerate() {
        let Some(mut st) = ins[b].clone() else {
            continue;
        };
        for i in blk.insns.clone() {
            for u in t.uses(i).filter(|u| !u.is_uniform()) {
                let mut found: Option<Option<Def>> = None;
                for h in u.range() {
                    let d = st.get(&h).copied();
                    found = Some(match found {
                        None => d,
                        Some(x) if x == d => x,
                        Some(_) => Some(Def::Many),
                    });
                }
                out.insert((i, u.start), found.flatten());
            }
            transfer(t, i, &mut st);
        }
    }
    out
}

struct Values<'a> {
    t: &'a CodeTable,
    /// The table's uniformity analysis: a register redefined on merged
    /// paths whose every value is uniform is uniform.
    uniform: Option<&'a crate::uniformity::Uniformity>,
    /// The definition reaching each (row, used range).
    reach: HashMap<(usize, u16), Option<Def>>,
    memo: HashMap<usize, Lanes>,
}

impl Values<'_> {
    fn of_reg(&mut self, at: usize, r: &RegRange, depth: u32) -> Lanes {
        if r.is_uniform() {
            return Lanes::Uniform;
        }
        match self.reach.get(&(at, r.start)).copied().flatten() {
            None => Lanes::Unknown(Why::Undefined),
            Some(Def::Many) if self.uniform.is_some_and(|u| u.uniform_at(at, r)) => Lanes::Uniform,
            Some(Def::Many) => Lanes::Unknown(Why::Redefined),
            Some(Def::Row(d)) => self.of_row(d, depth),
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
                Some(m) if self.address(i, &m, depth) == Lanes::Uniform => Lanes::Uniform,
                _ => Lanes::Unknown(Why::Loaded),
            };
        }
        if row.op == AluOp::Imm {
            // an immediate (or a constant truth table): no source matters
            return Lanes::Uniform;
        }
        let mut uses: Vec<RegRange> = self.t.uses(i).copied().collect();
        if row.op == AluOp::Select {
            // only the selected values matter, not the compared ones
            uses.drain(..uses.len().saturating_sub(2));
        }
        let vals: Vec<Lanes> = uses.iter().map(|u| self.of_reg(i, u, depth)).collect();
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
            // either selected value: known when both are the same
            AluOp::Select if vals.len() >= 2 && vals[vals.len() - 1] == vals[vals.len() - 2] => {
                vals[vals.len() - 1]
            }
            _ if row.class == Category::Alu && vals.iter().all(|v| *v == Lanes::Uniform) => {
                Lanes::Uniform
            }
            _ => Lanes::Unknown(Why::Operation),
        }
    }

    /// The lane behaviour of `m`'s address (in bytes).
    fn address(&mut self, at: usize, m: &MemDesc, depth: u32) -> Lanes {
        let base = match m.base {
            Some(b) => self.of_reg(at, &b, depth),
            None => return Lanes::Unknown(Why::Operation),
        };
        let index = match m.index {
            MemIndex::None | MemIndex::Imm(_) => Lanes::Uniform,
            MemIndex::Reg(r) => match self.of_reg(at, &r, depth) {
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
    let facts = crate::facts::from_table(t);
    let cfg = crate::cfg::Cfg::from_facts(&facts, &Default::default());
    lane_facts_with(t, &cfg, None)
}

/// [`lane_facts`] over the CFG `cfg` of `t` the caller already built,
/// with the table's uniformity analysis when there is one (a loop-carried
/// uniform value, such as a uniform counter, is then uniform).
pub fn lane_facts_with(
    t: &CodeTable,
    cfg: &crate::cfg::Cfg,
    uniform: Option<&crate::uniformity::Uniformity>,
) -> Vec<(usize, LaneFact)> {
    let mut v = Values {
        t,
        uniform,
        reach: reaching(t, cfg),
        memo: HashMap::new(),
    };
    t.accesses()
        .map(|(i, m)| {
            let f = match v.address(i, m, 0) {
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
