//! `uniform-address-loads`: loads the divergence analysis proved uniform, in a region bound by memory, named so that the bound is not read as theirs.

use super::{Context, Need, Rule};
use crate::timing::suggest::{severity_for_share, Suggestion};
use agx_isa::{MemDir, MemSpace};

pub struct UniformAddressLoads;

impl Rule for UniformAddressLoads {
    fn id(&self) -> &'static str {
        "uniform-address-loads"
    }
    fn help(&self) -> &'static str {
        "Device loads of one address for the whole SIMD-group in a memory-bound region: charged once per SIMD-group, nothing to do there."
    }
    fn needs(&self) -> &'static [Need] {
        &[Need::Timing]
    }
    fn evaluate(&self, cx: &Context<'_>, out: &mut Vec<Suggestion>) {
        let fx = &cx.facts;
        let (insns, timing) = (cx.insns, cx.timing);
        let details = &timing.instructions_detail;
        // --- uniform-address loads in a memory-bound region ---
        // Loads the divergence analysis proved uniform (kernel arguments, array
        // lengths, constants) read one value for the whole SIMD-group: named
        // where the region is bound by memory so that the bound is not read as
        // theirs.
        {
            let region_by = |d: &crate::timing::model::InsnDetail| match d.loop_index {
                Some(l) => timing.loops.get(l as usize).map(|l| l.body.bound.by),
                None => Some(timing.outside_loops.bound.by),
            };
            let mut first: Option<u32> = None;
            let mut usites: Vec<u32> = Vec::new();
            let (mut n, mut bytes) = (0usize, 0u32);
            for (j, i) in insns.iter().enumerate() {
                let Some(m) = i
                    .mem_access()
                    .filter(|m| m.dir == MemDir::Load && m.space == MemSpace::Device)
                else {
                    continue;
                };
                let d = match details.get(j).filter(|d| d.addr == i.addr) {
                    Some(d) => d,
                    None => match details.binary_search_by_key(&i.addr, |d| d.addr) {
                        Ok(k) => &details[k],
                        Err(_) => continue,
                    },
                };
                let mem_bound = matches!(
                    region_by(d),
                    Some("memory_bandwidth" | "device_bandwidth" | "memory_latency")
                );
                if d.uniform_address && mem_bound {
                    first.get_or_insert(i.addr);
                    usites.push(i.addr);
                    n += 1;
                    bytes += m.bytes_per_lane();
                }
            }
            if let Some(at) = first {
                let simd = timing.params.gpu.table().simd_width as f64;
                let share = fx.share_of(&usites);
                out.push(Suggestion::new(
                severity_for_share(share),
                at,
                "uniform-address-loads",
                &[
                    ("uniform_loads", n as f64),
                    ("bytes_per_simd_group", bytes as f64),
                    ("bytes_if_per_thread", bytes as f64 * simd),
                    ("l1_hit_latency", timing.params.mem.l1_hit_latency),
                    ("share_pct", share),
                ],
                |f| {
                    let (what, verb, it) = if n == 1 {
                        ("device load", "reads", "it is")
                    } else {
                        ("device loads", "read", "they are")
                    };
                    format!(
                    "{} {what} (first at 0x{at:x}) {verb} the same address for the whole SIMD-group (kernel arguments, lengths, constants): {it} charged once per SIMD-group ({} bytes, not {}) at the L1-hit latency ({} cy), so the memory bound is the per-thread accesses'. Nothing to do there; look at the thread-indexed loads and stores.",
                    f("uniform_loads"),
                    f("bytes_per_simd_group"),
                    f("bytes_if_per_thread"),
                    f("l1_hit_latency")
                )
                },
            )
            .with_fact("the divergence analysis proved these loads' addresses uniform, in a region bound by memory")
            .with_sites(usites));
            }
        }
    }
}
