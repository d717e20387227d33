//! `divergent-loop-exit`: a loop whose exit test is not uniform: its threads may leave at different iterations (not a grid- or block-stride loop's tail, nor a loop whose iteration count is what the kernel stores: [`count_is_stored`], nor a compare-and-swap retry loop: [`cas_retry`]).

use super::facts::innermost_loop;
use super::{Context, Need, Rule, TableContext};
use crate::divergence::{tail_only_exit, BranchKind};
use crate::timing::suggest::{severity_for_share, share_pct, Suggestion};

pub struct DivergentLoopExit;

impl Rule for DivergentLoopExit {
    fn id(&self) -> &'static str {
        "divergent-loop-exit"
    }
    fn help(&self) -> &'static str {
        "A loop with a non-uniform exit test: give the threads of a SIMD-group similar trip counts or make the bound uniform."
    }
    fn needs(&self) -> &'static [Need] {
        &[Need::Timing, Need::Divergence]
    }
    /// From the code table: a loop whose exit verdict is divergent, with
    /// its share of the issue slots. (The timed rule's exceptions, a grid-
    /// or block-stride tail, a stored count, a compare-and-swap retry, need
    /// facts the table does not give yet; docs/analysis.md says so.)
    fn evaluate_table(&self, cx: &TableContext<'_>, out: &mut Vec<Suggestion>) {
        for b in cx
            .branches
            .iter()
            .filter(|b| b.kind == BranchKind::Loop && b.uniform == Some(false))
        {
            let Some(l) = cx.loops.iter().find(|l| l.end == b.at) else {
                continue;
            };
            let share = l.share_pct;
            let reason = b.reason.clone();
            let header = l.header;
            out.push(
                Suggestion::new(
                    severity_for_share(share),
                    b.at,
                    "divergent-loop-exit",
                    &[("share_pct", share)],
                    |f| {
                        format!(
                            "Loop at 0x{header:x} has a divergent exit: {reason}. It holds {}% of the kernel's issue slots (issue slots, not cycles: a loop runs its proved trip count, else {} times, assumed); the SIMD-group runs until its last thread leaves, so give the threads of a SIMD-group similar trip counts (sort/bin the work) or make the bound uniform.",
                            f("share_pct"),
                            crate::timing::DEFAULT_TRIP_COUNT
                        )
                    },
                )
                .with_fact("the loop's exit test is not uniform: its threads may leave at different iterations"),
            );
        }
    }
    fn evaluate(&self, cx: &Context<'_>, out: &mut Vec<Suggestion>) {
        let (t, insns) = (cx.timing, cx.insns);
        let Some(d) = cx.divergence else { return };
        let total = t.total_cycles;
        if total <= 0.0 {
            return;
        }
        for b in d
            .branches
            .iter()
            .filter(|b| !b.uniform && b.kind == BranchKind::Loop)
        {
            let arms = b.arms_cycles.unwrap_or(0.0);

            if b.arms.is_some_and(|r| tail_only_exit(insns, r, &b.reason)) {
                continue;
            }
            // the per-thread trip count is the kernel's result (an
            // escape-time count stored after the loop): equal trip counts
            // would change the answer, there is nothing to even out
            if innermost_loop(t, b.at).is_some_and(|l| count_is_stored(insns, l.first, l.last)) {
                continue;
            }
            // a compare-and-swap retry loop: a lane leaves when its swap
            // succeeds, so contention sets the trip counts (privatise-atomics
            // is the advice, not evening out the work)
            if innermost_loop(t, b.at).is_some_and(|l| cas_retry(insns, l.first, l.last)) {
                continue;
            }
            let share = share_pct(arms, total);
            let reason = b.reason.clone();
            // the loop as the text report's sections name it: by its header
            // (the loop holding the back branch)
            let name = match innermost_loop(t, b.at) {
                Some(l) => format!("Loop at 0x{:x}", l.header),
                None => format!("The loop ending at 0x{:x}", b.at),
            };
            out.push(
                    Suggestion::new(
                        severity_for_share(share),
                        b.at,
                        "divergent-loop-exit",
                        &[("arms_cycles", arms), ("total_cycles", total), ("share_pct", share)],
                        |f| {
                            format!(
                            "{name} has a divergent exit: {reason}. Its body costs {} cy of {} cy ({}%) per pass of the slowest thread; give the threads of a SIMD-group similar trip counts (sort/bin the work) or make the bound uniform.",
                            f("arms_cycles"),
                            f("total_cycles"),
                            f("share_pct")
                        )
                        },
                    )
                    .with_fact("the loop's exit test is not uniform: its threads may leave at different iterations"),
                );
        }
    }
}

/// Whether the loop between `first` and `last` (addresses) counts its
/// iterations in a register (`iadd r, r, imm` in the loop, the register's
/// only write there) whose value a device store after the loop writes out
/// (its data operand, before any other write of it): the number of iterations
/// each thread runs is the result (`it[...] = k` of an escape-time loop).
fn count_is_stored(insns: &[agx_isa::Instruction], first: u32, last: u32) -> bool {
    use agx_isa::{MemDir, OperandKind, RegFile};
    let inside = |i: &agx_isa::Instruction| i.addr >= first && i.addr <= last;
    let same = |a: &agx_isa::Reg, b: &agx_isa::Reg| a.file == b.file && a.half == b.half;
    let counters: Vec<agx_isa::Reg> = insns
        .iter()
        .filter(|i| inside(i) && i.mnemonic() == "iadd")
        .filter_map(|i| {
            let ops = i.operands.as_slice();
            let (OperandKind::Reg(d), OperandKind::Reg(a)) = (ops.first()?.kind, ops.get(1)?.kind)
            else {
                return None;
            };
            let step = ops.get(2)?.kind.imm_value()?;
            let only_write = insns
                .iter()
                .filter(|j| inside(j) && j.defs().any(|x| same(x, &d)))
                .count()
                == 1;
            (d.file == RegFile::Gpr && same(&d, &a) && step != 0 && only_write).then_some(d)
        })
        .collect();
    for c in counters {
        for j in insns.iter().filter(|j| j.addr > last) {
            // (a device_store's data register is its fourth operand:
            // `device_store 0, i32, x, r5, u0_u1, r1, ...`)
            let stores_it = j
                .mem_access()
                .is_some_and(|m| m.dir == MemDir::Store && m.space == agx_isa::MemSpace::Device)
                && j.operands
                    .as_slice()
                    .get(3)
                    .is_some_and(|o| matches!(o.kind, OperandKind::Reg(r) if same(&r, &c)));
            if stores_it {
                return true;
            }
            if j.defs().any(|x| same(x, &c)) {
                break;
            }
        }
    }
    false
}

/// Whether the loop between `first` and `last` (addresses) holds an atomic
/// compare-and-swap (`atomic cmpxchg`, `threadgroup_atomic cmpxchg`).
fn cas_retry(insns: &[agx_isa::Instruction], first: u32, last: u32) -> bool {
    use agx_isa::{format::operand_texts, MemDir, Syntax};
    insns
        .iter()
        .filter(|i| i.addr >= first && i.addr <= last)
        .filter(|i| i.mem_access().is_some_and(|m| m.dir == MemDir::Atomic))
        .any(|i| {
            operand_texts(i, Syntax::Default)
                .first()
                .is_some_and(|o| o == "cmpxchg")
        })
}
