//! `private-array`: a private array the compiler keeps in stack memory
//! (stack accesses the stack-kind classification calls an array).

use super::facts::innermost_loop;
use super::{Context, Need, Rule};
use crate::stack_kind::StackKind;
use crate::timing::suggest::{severity_for_share, Suggestion};
use agx_isa::{MemDir, MemSpace, RegFile};

pub struct PrivateArray;

impl Rule for PrivateArray {
    fn id(&self) -> &'static str {
        "private-array"
    }
    fn help(&self) -> &'static str {
        "A private array kept in stack memory (stack accesses at run-time addresses): index it with compile-time constants so it stays in registers, or share it through threadgroup memory."
    }
    fn needs(&self) -> &'static [Need] {
        &[Need::Timing]
    }
    fn evaluate(&self, cx: &Context<'_>, out: &mut Vec<Suggestion>) {
        let (f, insns) = (&cx.facts, cx.insns);
        let arrays = f.stack_of(&[StackKind::PrivateArray]);
        let Some(&first) = arrays.first() else {
            return;
        };
        // the stack accesses the analysis counts (Instruction::mem_access:
        // stack adjusts and stack_get_ptr move no data)
        let stack_dir = |i: &agx_isa::Instruction| {
            i.mem_access()
                .filter(|m| m.space == MemSpace::Stack)
                .map(|m| m.dir)
        };
        let indexed = f
            .stack_sites
            .iter()
            .filter(|(j, k)| {
                *k == StackKind::PrivateArray
                    && insns[*j as usize]
                        .uses()
                        .filter(|r| r.file == RegFile::Gpr)
                        .count()
                        > usize::from(stack_dir(&insns[*j as usize]) == Some(MemDir::Store))
            })
            .count();
        let in_loops = arrays
            .iter()
            .filter(|&&a| innermost_loop(cx.timing, a).is_some())
            .count();
        let frame = cx
            .analysis
            .and_then(|a| a.stack.scratch_reserved)
            .unwrap_or(0)
            .max(0);
        let share = f.share_of(&arrays);
        out.push(
            Suggestion::new(
                severity_for_share(share),
                first,
                self.id(),
                &[
                    ("accesses", arrays.len() as f64),
                    ("indexed_accesses", indexed as f64),
                    ("in_loops", in_loops as f64),
                    ("stack_frame", frame as f64),
                    ("share_pct", share),
                ],
                |f| {
                    format!(
                "A private array lives in stack memory: {} stack accesses (first at 0x{first:x}), {} of them at an address computed in a register, {} inside loops, in a stack frame of {} (entry stack adjust), {}% of the estimate. Registers cannot be indexed at run time, so the compiler keeps the array in memory. Index it only with compile-time constants (unroll the loops over it) so it can stay in registers.",
                f("accesses"), f("indexed_accesses"), f("in_loops"), f("stack_frame"), f("share_pct")
            )
                },
            )
            .with_fact(format!(
                "{indexed} stack accesses address the stack through a register (an array indexed at run time)"
            ))
            .with_sites(arrays),
        );
    }
}
