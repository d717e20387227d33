//! A loop counter followed through the parallel-copy shuffle (issue 35,
//! must-show 2: the register-blocked GEMMs). When the register allocator
//! runs out of registers, the counter `r` of a loop leaves its register for
//! a while: it is copied (`mov`), exchanged with another register by an
//! xor-swap triple (`x ^= r; r ^= x; x ^= r`), stored to a stack slot and
//! filled back, stepped in whatever register holds it at the time, and
//! comes back to `r` before the latch. One symbolic walk over a loop body
//! that is straight-line code (every instruction runs on every iteration)
//! follows it: each register and constant stack slot holds the xor of
//! opaque values and at most one `r_header + c`; `iadd` of an immediate
//! moves `c`, `mov` and stack store/fill pairs copy, `xor` cancels equal
//! terms (so a swap triple exchanges), anything else writing a register
//! makes it opaque, and a stack store to an address not a constant forgets
//! every slot. If `r` holds `r_header + step` at the latch, `r` moves by
//! `step` an iteration, as one `r = r + step` would; anything less proved
//! gives nothing.

use super::{classify, gpr32, Op, Src};
use crate::loops::LoopNest;
use agx_isa::{Flow, Instruction, Reg, RegFile, Width};
use std::collections::{BTreeSet, HashMap};

/// The xor of `atoms` (opaque values) and, when `counter` is set, of
/// `r_header + counter`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
struct Val {
    counter: Option<i64>,
    atoms: BTreeSet<u64>,
}

impl Val {
    fn opaque(id: u64) -> Val {
        Val {
            counter: None,
            atoms: [id].into(),
        }
    }
    fn xor(&self, o: &Val, fresh: u64) -> Val {
        let counter = match (self.counter, o.counter) {
            (Some(a), Some(b)) if a == b => None,
            // two different counter values: their xor is not followed
            (Some(_), Some(_)) => return Val::opaque(fresh),
            (a, b) => a.or(b),
        };
        Val {
            counter,
            atoms: self.atoms.symmetric_difference(&o.atoms).copied().collect(),
        }
    }
}

/// The walk's state: 32-bit GPRs (by first half) and constant stack slots.
struct State {
    regs: HashMap<u16, Val>,
    slots: HashMap<i64, Val>,
}

/// Atom ids: a register's value at the header, or instruction `i`'s write.
const AT_HEADER: u64 = 1 << 40;

impl State {
    fn get(&self, r: &Reg) -> Val {
        self.regs
            .get(&r.half)
            .cloned()
            .unwrap_or_else(|| Val::opaque(AT_HEADER + r.half as u64))
    }
    fn src(&self, s: Src, fresh: u64) -> Option<Val> {
        match s {
            Src::Reg(r) if r.file == RegFile::Gpr => Some(self.get(&r)),
            Src::Reg(_) => Some(Val::opaque(fresh)),
            Src::Imm(_) => None,
        }
    }
    /// Makes every 32-bit register `insn` writes opaque.
    fn clobber(&mut self, insn: &Instruction, fresh: u64) {
        for d in insn.defs().filter(|d| d.file == RegFile::Gpr) {
            let n = d.width.halves() * d.count.max(1) as u16;
            let (lo, hi) = (d.half & !1, d.half + n);
            for h in (lo..hi).step_by(2) {
                self.regs.insert(h, Val::opaque(fresh + h as u64));
            }
        }
    }
}

/// A constant stack slot of `stack_store`/`stack_load` (the offset operand
/// before the last) and the 32-bit register stored or filled.
fn slot(insn: &Instruction) -> Option<(i64, Reg)> {
    let ops = insn.operands.as_slice();
    let off = ops.get(ops.len().checked_sub(2)?)?.kind.imm_value()?;
    let reg = match insn.mnemonic() {
        "stack_store" => ops.get(ops.len().checked_sub(3)?).and_then(gpr32),
        _ => ops.first().and_then(gpr32),
    }?;
    Some((off, reg))
}

/// `xor d, a, b` of 32-bit GPRs.
fn xor_of(insn: &Instruction) -> Option<(Reg, Reg, Reg)> {
    let ops = insn.operands.as_slice();
    if insn.mnemonic() != "xor" || ops.len() != 3 {
        return None;
    }
    let plain = |o: &agx_isa::Operand| {
        (o.flags & (agx_isa::flags::NEG | agx_isa::flags::ABS) == 0)
            .then(|| gpr32(o))
            .flatten()
    };
    Some((plain(&ops[0])?, plain(&ops[1])?, plain(&ops[2])?))
}

/// Whether loop `li`'s body is straight-line code: its own instructions
/// from the header to the latch in layout order, none of another loop, no
/// exec-mask change but the header's, no branch but the latch's and exits
/// leaving the loop.
fn straight_line(insns: &[Instruction], nest: &LoopNest, li: usize) -> bool {
    let nl = &nest.loops[li];
    if nl.first != nl.header || nl.last != nl.latch || nl.latch >= insns.len() {
        return false;
    }
    let (lo, hi) = (insns[nl.first].addr as i64, insns[nl.last].addr as i64);
    (nl.header..=nl.latch).all(|i| {
        let insn = &insns[i];
        let exits = |t: i64| t < lo || t > hi;
        nest.owner[i] == Some(li as u32)
            && (i == nl.header || insn.exec_op().is_none())
            && match insn.flow() {
                Flow::Next => true,
                Flow::BranchExec { target, .. } | Flow::Jump { target } => {
                    i == nl.latch || exits(target)
                }
                _ => false,
            }
    })
}

/// `Some(step)` when loop `li`'s straight-line body leaves `r` at the
/// latch holding its header value plus `step` (nonzero), with the index of
/// the body's last write of `r`.
pub(super) fn traced_step(
    insns: &[Instruction],
    nest: &LoopNest,
    li: usize,
    r: &Reg,
) -> Option<(i64, usize)> {
    if r.file != RegFile::Gpr || r.width != Width::W32 || !straight_line(insns, nest, li) {
        return None;
    }
    let nl = &nest.loops[li];
    let mut st = State {
        regs: HashMap::from([(
            r.half,
            Val {
                counter: Some(0),
                atoms: BTreeSet::new(),
            },
        )]),
        slots: HashMap::new(),
    };
    let mut last_write = None;
    for (i, insn) in insns.iter().enumerate().take(nl.latch + 1).skip(nl.header) {
        let fresh = (i as u64) << 8;
        let wrote_r = insn.defs().any(|d| {
            d.file == RegFile::Gpr && {
                let n = d.width.halves() * d.count.max(1) as u16;
                d.half < r.half + 2 && r.half < d.half + n
            }
        });
        if wrote_r {
            last_write = Some(i);
        }
        let m = insn.mnemonic();
        if m == "stack_store" {
            match slot(insn) {
                Some((off, s)) => {
                    let v = st.get(&s);
                    // (a 4-byte store: slots it overlaps at other offsets
                    // are no longer known)
                    st.slots
                        .retain(|&o, _| o == off || o + 4 <= off || off + 4 <= o);
                    st.slots.insert(off, v);
                }
                None => st.slots.clear(),
            }
            continue;
        }
        let new = match (m, classify(insn)) {
            ("stack_load", _) => slot(insn).map(|(off, d)| {
                let v = st.slots.get(&off).cloned().unwrap_or(Val::opaque(fresh));
                (d, v)
            }),
            (_, Op::Mov { d, s }) => st.src(s, fresh).map(|v| (d, v)),
            (_, Op::Add { d, a, b, sign }) => {
                let moved = match (st.src(a, fresh), b, st.src(b, fresh), a) {
                    (Some(v), Src::Imm(k), _, _) => Some((v, sign * k)),
                    (_, _, Some(v), Src::Imm(k)) if sign == 1 => Some((v, k)),
                    _ => None,
                };
                match moved {
                    Some((v, k)) if v.atoms.is_empty() && v.counter.is_some() => Some((
                        d,
                        Val {
                            counter: v.counter.and_then(|c| c.checked_add(k)),
                            atoms: BTreeSet::new(),
                        },
                    )),
                    _ => Some((d, Val::opaque(fresh))),
                }
            }
            _ => xor_of(insn).map(|(d, a, b)| (d, st.get(&a).xor(&st.get(&b), fresh))),
        };
        st.clobber(insn, fresh);
        if let Some((d, v)) = new {
            st.regs.insert(d.half, v);
        }
    }
    let end = st.get(r);
    match (end.counter, end.atoms.is_empty(), last_write) {
        (Some(step), true, Some(w)) if step != 0 => Some((step, w)),
        _ => None,
    }
}
