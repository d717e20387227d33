//! `independent-work-before-wait`: waits whose loads are issued less than a quarter of their latency before them (one per region).

use super::{Context, Need, Rule};
use crate::timing::suggest::{severity_for_share, Suggestion};

pub struct IndependentWorkBeforeWait;

impl Rule for IndependentWorkBeforeWait {
    fn id(&self) -> &'static str {
        "independent-work-before-wait"
    }
    fn help(&self) -> &'static str {
        "Waits with little independent work before them: issue the loads earlier or unroll so independent work covers their latency."
    }
    fn needs(&self) -> &'static [Need] {
        &[Need::Timing]
    }
    fn evaluate(&self, cx: &Context<'_>, out: &mut Vec<Suggestion>) {
        let fx = &cx.facts;
        let (insns, timing) = (cx.insns, cx.timing);
        let addrs = &fx.addrs;
        // --- more independent work between loads and wait (one per region) ---
        // A wait waits for the loads of its scoreboard slot (all loads for a
        // wait without one): the loads named are those, not every load the
        // model lets complete there (loads without a slot, e.g. threadgroup
        // loads issued after the wait, complete at any wait).
        let slot_loads = |w: &crate::timing::model::WaitStall| -> Vec<u32> {
            w.loads
                .iter()
                .copied()
                .filter(|&a| {
                    w.slot.is_none()
                        || addrs
                            .binary_search(&a)
                            .ok()
                            .is_some_and(|k| insns[k].scoreboard_slot() == w.slot)
                })
                .collect()
        };
        let mut regions: Vec<(Option<u32>, Vec<&crate::timing::model::WaitStall>)> =
            vec![(None, timing.outside_loops.waits.iter().collect())];
        for l in &timing.loops {
            regions.push((Some(l.header), l.body.waits.iter().collect()));
        }
        for (header, waits) in regions {
            // (the wait, the loads of its slot)
            let short: Vec<(&crate::timing::model::WaitStall, Vec<u32>)> = waits
                .into_iter()
                .filter(|w| {
                    w.exposed > 0.0 && w.latency > 0.0 && w.independent_work < 0.25 * w.latency
                })
                .map(|w| (w, slot_loads(w)))
                .filter(|(_, l)| !l.is_empty())
                .collect();
            // the wait that exposes most stall speaks for the region
            let Some((w, loads)) = short.iter().max_by(|a, b| {
                a.0.exposed
                    .total_cmp(&b.0.exposed)
                    .then(b.0.addr.cmp(&a.0.addr))
            }) else {
                continue;
            };
            let sites: Vec<u32> = short.iter().map(|(w, _)| w.addr).collect();
            let share = fx.share_of(&sites);
            let exposed: f64 = short.iter().map(|(w, _)| w.exposed).sum();
            let names: Vec<String> = loads
                .iter()
                .take(3)
                .map(|&a| {
                    let m = addrs
                        .binary_search(&a)
                        .map_or("load", |k| insns[k].mnemonic());
                    let when = if a > w.addr && header.is_some() {
                        " (previous iteration)"
                    } else {
                        ""
                    };
                    format!("{m} at 0x{a:x}{when}")
                })
                .collect();
            let more = loads.len().saturating_sub(3);
            let slot = w.slot.map(|s| format!(" (slot {s})")).unwrap_or_default();
            let region = header
                .map(|h| format!("the loop at 0x{h:x}"))
                .unwrap_or_else(|| "the straight-line code".to_string());
            out.push(
            Suggestion::new(
                severity_for_share(share),
                w.addr,
                "independent-work-before-wait",
                &[
                    ("waits", short.len() as f64),
                    ("slot", w.slot.map_or(0.0, |s| s as f64)),
                    ("more_loads", more as f64),
                    ("independent_work", w.independent_work),
                    ("latency", w.latency),
                    ("exposed_stall", exposed),
                    ("share_pct", share),
                ],
                |f| {
                    format!(
                    "{} wait(s) in {region} have little work before them; the wait at 0x{:x}{slot} waits for the {}{} after only {} cy of work (assumed load latency {} cy; ~{} cy exposed in all at this occupancy, {}% of the estimate). Issue loads earlier / unroll so independent work covers them.",
                    f("waits"),
                    w.addr,
                    names.join(", "),
                    if more > 0 { format!(" and {} more", f("more_loads")) } else { String::new() },
                    f("independent_work"),
                    f("latency"),
                    f("exposed_stall"),
                    f("share_pct")
                )
                },
            )
            .with_fact(format!(
                "the loads of the wait's scoreboard slot are issued less than a quarter of their latency before it (wait at 0x{:x})",
                w.addr
            ))
            .with_sites(sites),
        );
        }
    }
}
