//! `divergent-loop-exit`: a loop whose exit test is not uniform: its threads may leave at different iterations (not a grid- or block-stride loop's tail).

use super::facts::innermost_loop;
use super::{Context, Need, Rule};
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
