//! `hoist-invariant-loads`: a device load in a loop whose address does not move across the iterations (loop stride 0).

use super::memory::{device_load, loop_of, region_share};
use super::{Context, Need, Rule};
use crate::address::Access;
use crate::timing::suggest::{severity_for_share, Suggestion};

pub struct HoistInvariantLoads;

impl Rule for HoistInvariantLoads {
    fn id(&self) -> &'static str {
        "hoist-invariant-loads"
    }
    fn help(&self) -> &'static str {
        "Device loads whose address does not change across the iterations of their loop: load them once before the loop."
    }
    fn needs(&self) -> &'static [Need] {
        &[Need::Timing, Need::Access]
    }
    fn evaluate(&self, cx: &Context<'_>, out: &mut Vec<Suggestion>) {
        let (insns, t) = (cx.insns, cx.timing);
        let Some(access) = cx.access else { return };
        let addr_of = |a: &Access| insns.get(a.index as usize).map_or(0, |i| i.addr);
        let share = |region: Option<u32>, sites: &[u32]| region_share(cx, region, sites);
        // --- hoisting loop-invariant loads: one per loop ---
        let mut hoist: std::collections::BTreeMap<u32, (u32, Vec<u32>)> = Default::default();
        for a in &access.accesses {
            if !device_load(a) || a.loop_stride != Some(0) {
                continue;
            }
            let at = addr_of(a);
            let Some(l) = loop_of(t, at) else {
                continue;
            };
            hoist
                .entry(l.header)
                .or_insert_with(|| (l.trip_count, Vec::new()))
                .1
                .push(at);
        }
        for (header, (trips, sites)) in hoist {
            let list: Vec<String> = sites.iter().map(|a| format!("0x{a:x}")).collect();
            let pct = share(Some(header), &sites);
            let fact = format!(
            "the access analysis proves the address of {} device load(s) does not change across the iterations of the loop at 0x{header:x} (loop stride 0)",
            sites.len()
        );
            out.push(
            Suggestion::new(
            severity_for_share(pct),
            sites[0],
            "hoist-invariant-loads",
            &[
                ("sites", sites.len() as f64),
                ("iterations", trips as f64),
                ("loop_stride", 0.0),
                ("share_pct", pct),
            ],
            |f| {
                format!(
                    "Device loads {} read the same address every iteration of the loop at 0x{header:x} (loop stride {}, {} iterations): load them once before the loop.",
                    list.join(", "),
                    f("loop_stride"),
                    f("iterations")
                )
            },
        )
            .with_fact(fact)
            .with_sites(sites),
        );
        }
    }
}
