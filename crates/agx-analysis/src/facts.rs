//! One pass over the decoded instructions, extracting the compact facts
//! every analysis needs: address, control flow, exec-mask op, register
//! ranges with their roles, stack use.
//!
//! An `Instruction` is large (a fixed array of operands, ~640 bytes), so
//! reading the input once and working on these compact arrays afterwards
//! keeps the analyses linear in practice, not just in theory (a 1M
//! instruction kernel is ~640 MB of `Instruction`s).

use crate::occupancy::{StackAdjust, StackUse};
use agx_isa::{ExecOp, Flow, Instruction, MemDir, MemSpace, RegFile};

/// A register operand, compact: the code table's (`agx_isa::table::RegRange`).
pub use agx_isa::table::RegRange;

/// Facts about every instruction, in input order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Facts {
    pub addr: Vec<u32>,
    pub len: Vec<u8>,
    /// Control-flow effect of each instruction (empty once moved into a
    /// CFG by [`crate::Cfg::from_facts_taking_flows`]: `Cfg::flows` then).
    pub flow: Vec<Flow>,
    /// Exec-mask ops: (instruction index, op, n).
    pub exec: Vec<(usize, ExecOp, u8)>,
    /// Register ranges of instruction `i`: `ranges[range_start[i]..range_start[i + 1]]`.
    pub ranges: Vec<RegRange>,
    pub range_start: Vec<u32>,
    /// Highest GPR / uniform half index touched.
    pub highest_gpr: Option<u32>,
    pub highest_uniform: Option<u32>,
    pub stack: StackUse,
}

impl Facts {
    /// Empty facts with room for `n` instructions (about 3 register ranges
    /// each).
    fn with_capacity(n: usize) -> Facts {
        Facts {
            addr: Vec::with_capacity(n),
            len: Vec::with_capacity(n),
            flow: Vec::with_capacity(n),
            ranges: Vec::with_capacity(n * 3),
            range_start: Vec::with_capacity(n + 1),
            ..Facts::default()
        }
    }
    pub fn len(&self) -> usize {
        self.addr.len()
    }
    pub fn is_empty(&self) -> bool {
        self.addr.is_empty()
    }
    /// Register ranges of instruction `i`.
    #[inline]
    pub fn regs(&self, i: usize) -> &[RegRange] {
        &self.ranges[self.range_start[i] as usize..self.range_start[i + 1] as usize]
    }
}

/// Counts instruction `k`'s stack use: a stack adjust (the first positive
/// one is the scratch reserved), else a stack store (spill) or load (fill).
fn note_stack(
    st: &mut StackUse,
    k: usize,
    addr: u32,
    adjust: Option<i32>,
    mem: Option<(MemSpace, MemDir)>,
) {
    if let Some(amount) = adjust {
        st.adjusts.push(StackAdjust {
            index: k,
            addr,
            amount,
        });
        if st.scratch_reserved.is_none() && amount > 0 {
            st.scratch_reserved = Some(amount);
        }
    } else if let Some((MemSpace::Stack, dir)) = mem {
        match dir {
            MemDir::Store => st.spills += 1,
            MemDir::Load => st.fills += 1,
            MemDir::Atomic => {}
        }
    }
}

/// Scans `insns` once.
pub fn scan(insns: &[Instruction]) -> Facts {
    let mut f = Facts::with_capacity(insns.len());
    let mut hi: Option<u32> = None;
    let mut uhi: Option<u32> = None;
    for (k, i) in insns.iter().enumerate() {
        f.addr.push(i.addr);
        f.len.push(i.len);
        f.range_start.push(f.ranges.len() as u32);
        // control flow, exec-mask effect and memory access are columns of
        // the instruction's (refined) form: agx_isa::semantics
        f.flow.push(i.flow());
        if let Some(op) = i.exec_op() {
            f.exec.push((k, op, i.exec_count().unwrap_or(0)));
        }
        note_stack(
            &mut f.stack,
            k,
            i.addr,
            i.stack_adjust(),
            i.mem_form().map(|m| (m.space, m.dir)),
        );
        for o in i.all_operands() {
            let Some(r) = o.as_reg() else { continue };
            let rg = r.half_range();
            if rg.is_empty() {
                continue;
            }
            let last = rg.end - 1;
            let mut bits = 0u8;
            if o.role.is_def() {
                bits |= RegRange::DEF;
            }
            if o.role.is_use() {
                bits |= RegRange::USE;
            }
            match r.file {
                RegFile::Gpr => {
                    // the footprint counts the aligned group an allocator
                    // reserves for a vector (Reg::allocated_half_range);
                    // liveness the registers touched
                    let top = r.allocated_half_range().end - 1;
                    hi = Some(hi.map_or(top, |h| h.max(top)))
                }
                RegFile::Uniform => {
                    bits |= RegRange::UNIFORM;
                    uhi = Some(uhi.map_or(last, |h| h.max(last)));
                }
            }
            f.ranges.push(RegRange {
                start: rg.start as u16,
                len: rg.len().min(u16::MAX as usize) as u16,
                bits,
            });
        }
    }
    f.range_start.push(f.ranges.len() as u32);
    // the guess of 3 ranges an instruction may have doubled (most code has
    // 3–4): up to ~3 ranges × 6 bytes an instruction of slack otherwise
    f.ranges.shrink_to_fit();
    f.highest_gpr = hi;
    f.highest_uniform = uhi;
    f
}

/// The facts of a code table (any family): the same columns [`scan`]
/// reads from G13 instructions, read from the table's rows instead. A row
/// whose operands are not all decoded (`complete: false`, no registers)
/// defines every register and uses none, so liveness stays a lower bound
/// (`crate::untimed`).
pub fn from_table(t: &agx_isa::table::CodeTable) -> Facts {
    let mut f = Facts::with_capacity(t.len());
    let (mut hi, mut uhi): (Option<u32>, Option<u32>) = (None, None);
    let widen = |h: &mut Option<u32>, v: u32| *h = Some(h.map_or(v, |x| x.max(v)));
    for (k, r) in t.rows.iter().enumerate() {
        f.addr.push(r.addr);
        f.len.push(r.len);
        f.flow.push(r.flow);
        f.range_start.push(f.ranges.len() as u32);
        if let Some((op, count)) = r.exec {
            f.exec.push((k, op, count));
        }
        note_stack(
            &mut f.stack,
            k,
            r.addr,
            r.stack_adjust,
            t.mem(k).map(|m| (m.space, m.dir)),
        );
        let regs = t.regs(k);
        if !r.complete && regs.is_empty() {
            let all = |len: u32, bits| RegRange {
                start: 0,
                len: len as u16,
                bits,
            };
            f.ranges
                .push(all(crate::untimed::ALL_HALVES, RegRange::DEF));
            f.ranges.push(all(
                crate::untimed::ALL_UNIFORM_HALVES,
                RegRange::DEF | RegRange::UNIFORM,
            ));
            continue;
        }
        for g in regs {
            if g.is_uniform() {
                widen(&mut uhi, g.range().end - 1);
            } else {
                widen(&mut hi, g.allocated_range().end - 1);
            }
            f.ranges.push(*g);
        }
    }
    f.range_start.push(f.ranges.len() as u32);
    f.ranges.shrink_to_fit();
    f.highest_gpr = hi;
    f.highest_uniform = uhi;
    f
}
