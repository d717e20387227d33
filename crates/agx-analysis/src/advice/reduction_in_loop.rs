//! `reduction-in-loop`: a SIMD-group or quad reduction executed on every
//! iteration of a loop.

use super::{Context, Need, Rule};
use crate::timing::suggest::{severity_for_share, Suggestion};

pub struct ReductionInLoop;

impl Rule for ReductionInLoop {
    fn id(&self) -> &'static str {
        "reduction-in-loop"
    }
    fn help(&self) -> &'static str {
        "A cross-lane reduction on every iteration of a loop: accumulate per lane and reduce once after the loop."
    }
    fn needs(&self) -> &'static [Need] {
        &[Need::Timing]
    }
    fn evaluate(&self, cx: &Context<'_>, out: &mut Vec<Suggestion>) {
        let fx = &cx.facts;
        // one suggestion per loop, the loops on all cores
        cx.per_loop(out, &|l| {
            let super::facts::LoopView { own_idx, own, .. } = fx.view(l);
            // the fact: the loop's own cross-lane reductions
            let reds: Vec<_> = own_idx
                .iter()
                .zip(&own)
                .filter(|&(&j, _)| fx.key_of(j as usize).is_cross_lane_reduction())
                .map(|(_, i)| i)
                .collect();
            let i = reds.first()?;
            let sites: Vec<u32> = reds.iter().map(|i| i.addr).collect();
            let share = fx.share_of(&sites);
            let s = Suggestion::new(
                severity_for_share(share),
                i.addr,
                self.id(),
                &[
                    ("reductions", reds.len() as f64),
                    ("cycles", fx.cycles_at(i.addr, 14.5)),
                    ("share_pct", share),
                ],
                |f| {
                    format!(
                        "{} cross-lane reduction(s) inside the loop at 0x{:x} (first {} at 0x{:x}, ~{} cy each), {}% of the estimate. Accumulate per lane in the loop and reduce once after it.",
                        f("reductions"),
                        l.header,
                        i.mnemonic(),
                        i.addr,
                        f("cycles"),
                        f("share_pct")
                    )
                },
            );
            Some(
                s.with_fact("a SIMD-group or quad reduction executes on every iteration")
                    .with_sites(sites),
            )
        });
    }
}
