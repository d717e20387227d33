//! `hoist-invariant-transcendental`: a transcendental in a loop reading only values the loop never writes.

use super::{Context, Need, Rule};
use crate::timing::suggest::{severity_for_share, Suggestion};
use agx_isa::{Instruction, RegFile};
use std::collections::HashSet;

pub struct HoistInvariantTranscendental;

impl Rule for HoistInvariantTranscendental {
    fn id(&self) -> &'static str {
        "hoist-invariant-transcendental"
    }
    fn help(&self) -> &'static str {
        "A transcendental in a loop whose sources the loop never writes: hoist it out of the loop."
    }
    fn needs(&self) -> &'static [Need] {
        &[Need::Timing]
    }
    fn evaluate(&self, cx: &Context<'_>, out: &mut Vec<Suggestion>) {
        let fx = &cx.facts;

        cx.per_loop(out, &|l| {
            let super::facts::LoopView { range, own_idx, own } = fx.view(l);
            let body = || fx.body(l, &range);
        // --- hoist invariant transcendentals ---
        // built on the first transcendental only (most loops have none)
        let mut written_set: Option<HashSet<u32>> = None;
        let mut hoist: Vec<&Instruction> = Vec::new();
        for (&j, i) in own_idx.iter().zip(&own) {
            if fx.key_of(j as usize).transcendental().is_none() {
                continue;
            }
            let written = written_set.get_or_insert_with(|| {
                body()
                    .iter()
                    .flat_map(|i| {
                        i.defs()
                            .filter(|r| r.file == RegFile::Gpr)
                            .flat_map(|r| r.half_range())
                            .collect::<Vec<_>>()
                    })
                    .collect()
            });
            let srcs: Vec<_> = i.uses().collect();
            let invariant = !srcs.is_empty()
                && srcs.iter().all(|r| {
                    r.file == RegFile::Uniform || r.half_range().all(|h| !written.contains(&h))
                });
            if invariant {
                hoist.push(i);
            }
        }
        if let Some(i) = hoist.first() {
            let sites: Vec<u32> = hoist.iter().map(|i| i.addr).collect();
            let share = fx.share_of(&sites);
            let ic: f64 = hoist.iter().map(|i| fx.cycles_at(i.addr, 4.0)).sum();
            return Some(
                Suggestion::new(
                    severity_for_share(share),
                    i.addr,
                    "hoist-invariant-transcendental",
                    &[
                        ("transcendentals", hoist.len() as f64),
                        ("ic_cycles", ic),
                        ("share_pct", share),
                    ],
                    |f| {
                        format!(
                        "{} transcendental(s) in the loop at 0x{:x} (first {} at 0x{:x}) read only values the loop never writes: hoist them out of the loop (saves {} IC cy/iter, {}% of the estimate).",
                        f("transcendentals"),
                        l.header,
                        i.mnemonic(),
                        i.addr,
                        f("ic_cycles"),
                        f("share_pct")
                    )
                    },
                )
                .with_fact("its sources are uniform registers or registers no instruction of the loop writes")
                .with_sites(sites),
            );
        }

            None
        });
    }
}
