//! `tile-global-loads`: a memory-bound loop loading per-thread device values, in a kernel that does not stage data through threadgroup memory; kept only where the access facts show the loads re-read ([`refine`]).

use super::{Context, Need, Rule};
use crate::timing::suggest::stores_to_threadgroup;
use crate::timing::suggest::{severity_for_share, Suggestion};
use agx_isa::{Instruction, MemDir, MemSpace};
use std::collections::HashSet;

pub struct TileGlobalLoads;

impl Rule for TileGlobalLoads {
    fn id(&self) -> &'static str {
        "tile-global-loads"
    }
    fn help(&self) -> &'static str {
        "A loop bound by memory that loads per-thread device values re-read by other threads or iterations: tile the data into threadgroup memory."
    }
    fn needs(&self) -> &'static [Need] {
        &[Need::Timing]
    }
    fn evaluate(&self, cx: &Context<'_>, out: &mut Vec<Suggestion>) {
        let fx = &cx.facts;
        let timing = cx.timing;
        cx.per_loop(out, &|l| {
            let super::facts::LoopView { range, own, .. } = fx.view(l);
            let body = || fx.body(l, &range);
        // --- tile global loads ---
        // (a load whose address is uniform reads one value for the whole
        // SIMD-group: tiling would not share it further, it is not blamed)
        let dev_loads: Vec<&Instruction> = own
            .iter()
            .filter(|i| {
                i.mem_access().is_some_and(|m| {
                    m.dir == MemDir::Load && matches!(m.space, MemSpace::Device | MemSpace::Texture)
                }) && !fx.uniform_at(i.addr)
            })
            .collect();
        let dev_addrs: HashSet<u32> = dev_loads.iter().map(|i| i.addr).collect();
        let dev_stall: f64 = l
            .body
            .waits
            .iter()
            .filter(|w| w.loads.iter().any(|a| dev_addrs.contains(a)))
            .map(|w| w.exposed)
            .sum();
        let mem_bound = matches!(
            l.body.bound.by,
            "memory_bandwidth" | "device_bandwidth" | "memory_latency"
        );
        let loop_share = fx.loop_share(l);
        if !dev_loads.is_empty() && mem_bound && !fx.stages && !stores_to_threadgroup(&body()) {
            let sites: Vec<u32> = dev_loads.iter().map(|i| i.addr).collect();
            return Some(
                Suggestion::new(
                    severity_for_share(loop_share),
                    dev_loads[0].addr,
                    "tile-global-loads",
                    &[
                        ("cycles_per_iteration", l.body.bound.cycles),
                        ("global_loads", dev_loads.len() as f64),
                        ("exposed_wait_stall", dev_stall),
                        ("simds_per_scheduler", timing.simds_per_scheduler),
                        ("share_pct", loop_share),
                    ],
                    |f| {
                        format!(
                    "Loop at 0x{:x} is bound by {} ({} cy/iter, {}% of the estimate; {} global loads/iter, ~{} cy/iter of wait stall exposed at {} SIMD-groups/scheduler). Tile the data into threadgroup memory and reuse it across iterations.",
                    l.header,
                    crate::timing::model::bound_label(l.body.bound.by),
                    f("cycles_per_iteration"),
                    f("share_pct"),
                    f("global_loads"),
                    f("exposed_wait_stall"),
                    f("simds_per_scheduler")
                )
                    },
                )
                .with_fact(format!(
                    "the loop is bound by memory, loads {} per-thread device values per iteration, and the kernel does not stage data through threadgroup memory",
                    dev_loads.len()
                ))
                .with_sites(sites),
            );
        }

            None
        });
    }
}

/// Applies the access facts to the tiling advice (issue 27 item 5): kept
/// only for a loop whose device loads are re-read, by other threads of the
/// threadgroup, by every thread along a grid dimension the address does
/// not depend on (a shape-independent fact), or by later iterations, and
/// only when the kernel does not
/// already stage data through threadgroup memory; its message then names
/// those loads.
pub(super) fn refine(cx: &Context<'_>, out: &mut Vec<Suggestion>) {
    use super::memory::{device_load, loop_of};
    use crate::address::{Access, Pattern};
    let (insns, t, access) = (
        cx.insns,
        cx.timing,
        cx.access.expect("run only with the access facts"),
    );
    let addr_of = |a: &Access| insns.get(a.index as usize).map_or(0, |i| i.addr);
    let staged = cx.facts.stages;
    // the re-read device loads by their innermost loop's header (one pass:
    // a kernel can have a loop per dozen instructions)
    let mut reused_by_loop: std::collections::HashMap<u32, Vec<&Access>> = Default::default();
    for a in &access.accesses {
        // (a uniform-address load is one value for the SIMD-group: tiling
        // would not share it further)
        if device_load(a)
            && a.lane_pattern != Pattern::Uniform
            && (a.reuse.threads || a.reuse.iterations || a.reuse.grid_dimension.is_some())
        {
            if let Some(l) = loop_of(t, addr_of(a)) {
                reused_by_loop.entry(l.header).or_default().push(a);
            }
        }
    }
    // --- tiling: only where the loads' data is re-read ---
    out.retain_mut(|s| {
        if s.rule != "tile-global-loads" {
            return true;
        }
        if staged {
            return false;
        }
        let Some(l) = loop_of(t, s.offset) else {
            return false;
        };
        let Some(reused) = reused_by_loop.get(&l.header) else {
            return false;
        };
        if reused.is_empty() {
            return false;
        }
        let sites: Vec<String> = reused
            .iter()
            .map(|a| {
                let mut who: Vec<String> = Vec::new();
                if a.reuse.threads {
                    who.push("other threads of the threadgroup".into());
                }
                if let Some(d) = a.reuse.grid_dimension {
                    who.push(format!(
                        "every thread along {d}: the address does not depend on the thread's {d} position, whatever the threadgroup shape"
                    ));
                }
                if a.reuse.iterations {
                    who.push("later iterations".into());
                }
                format!("0x{:x} (re-read by {})", addr_of(a), who.join("; "))
            })
            .collect();
        s.offset = addr_of(reused[0]);
        s.fact = format!(
            "its device loads {} read elements that are read again; the kernel does not stage data through threadgroup memory",
            sites.join(", ")
        );
        let at: Vec<u32> = reused.iter().map(|a| addr_of(a)).collect();
        s.set_sites(at);
        true
    });
}
