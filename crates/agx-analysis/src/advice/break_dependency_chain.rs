//! `break-dependency-chain`: a loop bound by its dependency chain that accumulates across iterations through a sum or product.

use super::{Context, Need, Rule};
use crate::timing::suggest::accumulators;
use crate::timing::suggest::{severity_for_share, Suggestion};
use std::collections::HashSet;

pub struct BreakDependencyChain;

impl Rule for BreakDependencyChain {
    fn id(&self) -> &'static str {
        "break-dependency-chain"
    }
    fn help(&self) -> &'static str {
        "A loop bound by its dependency chain through an accumulator: split it into independent partial accumulators."
    }
    fn needs(&self) -> &'static [Need] {
        &[Need::Timing]
    }
    fn evaluate(&self, cx: &Context<'_>, out: &mut Vec<Suggestion>) {
        let fx = &cx.facts;

        cx.per_loop(out, &|l| {
            let super::facts::LoopView { range, .. } = fx.view(l);
            let body = || fx.body(l, &range);
            let loop_share = fx.loop_share(l);
        // --- break dependency chains ---
        // (the one dependency-chain figure: the bound component)
        let chain_bound = l.body.bound.components["dependency_chain"];
        let no_mem_stall = l.body.wait_stall <= 0.0;
        // the RAW penalties the loop's own body pays (a nested loop's are
        // in its own bound)
        let ds = fx.own_details(l);
        let paid =
            |d: &&crate::timing::model::InsnDetail| d.raw_dep().map(|r| r.penalty > 0.0).unwrap_or(false);
        let raw_count = ds.clone().filter(paid).count();
        let first_raw = ds.clone().find(paid);
        let latency_bound = no_mem_stall && l.body.bound.by == "dependency_chain";
        // the fact splitting rests on: a value carried across iterations
        // through an associative operation (a sum or a product)
        // (only where the chain is the loop's bound: a loop bound by a pipe
        // or by memory does not get faster by splitting its chain)
        let accs = if latency_bound {
            accumulators(&body())
        } else {
            Vec::new()
        };
        if let Some(&(acc, _)) = accs.first() {
            let values = accs.iter().map(|a| a.1).collect::<HashSet<u16>>().len();
            let accs: Vec<u32> = accs.iter().map(|a| a.0).collect();
            let at = first_raw.map(|d| d.addr).unwrap_or(l.header);
            return Some(
                Suggestion::new(
                    severity_for_share(loop_share),
                    at,
                    "break-dependency-chain",
                    &[
                        ("dependency_chain", chain_bound),
                        ("raw_dependencies", raw_count as f64),
                        ("cycles_per_iteration", l.body.cycles_per_iteration),
                        ("throughput_bound", l.body.bound.throughput()),
                        ("accumulators", values as f64),
                        ("share_pct", loop_share),
                    ],
                    |f| {
                        format!(
                    "Loop at 0x{:x}: dependency chain of {} cy/iter and {} back-to-back RAW dependencies (first at 0x{at:x}); the loop costs {} cy/iter, bound by {} (largest throughput bound {} cy), {}% of the estimate. {} value(s) accumulate across iterations through a sum or product (first at 0x{acc:x}): split each into independent partial accumulators and combine them after the loop.",
                    l.header,
                    f("dependency_chain"),
                    f("raw_dependencies"),
                    f("cycles_per_iteration"),
                    crate::timing::model::bound_label(l.body.bound.by),
                    f("throughput_bound"),
                    f("share_pct"),
                    f("accumulators")
                )
                    },
                )
                .with_fact(format!(
                    "the instruction at 0x{acc:x} adds (or multiplies) into a register it carries across iterations, with operands that do not depend on that register"
                ))
                .with_sites(accs.clone()),
            );
        }

            None
        });
    }
}
