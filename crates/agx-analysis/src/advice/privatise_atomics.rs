//! `privatise-atomics` (issue 35 item 4): device atomics whose lanes share
//! an address (`uniform`: all 32; `shared`: runs of lanes) or whose
//! addresses come from loaded data (`data_dependent`: a histogram's bins),
//! in a kernel that does not already privatise them
//! ([`crate::atomics::AtomicFact`]). The fact is the atomics' lane sharing;
//! the advice is to accumulate per threadgroup (threadgroup atomics or a
//! SIMD-group reduction) and merge with one device atomic per threadgroup.
//! Silent for distinct or unproved addresses, and for a kernel that
//! already privatises (its record says `privatised: true`).

use crate::address::Addresses;
use crate::timing::model::KernelTiming;
use crate::timing::suggest::{loop_cycles, severity_for_share, share_pct, Suggestion};
use crate::Analysis;
use agx_isa::Instruction;
use std::collections::BTreeMap;

/// The rule's id.
pub const ID: &str = "privatise-atomics";

/// A contended atomic: address, lanes, lanes per address.
type Site = (u32, &'static str, Option<u32>);

/// Adds one suggestion per region for its contended device atomics.
fn evaluate_fn(
    insns: &[Instruction],
    timing: &KernelTiming,
    _analysis: Option<&Analysis>,
    access: &Addresses,
    _line_bytes: u32,
    out: &mut Vec<Suggestion>,
) {
    let detail = |at: u32| {
        timing
            .instructions_detail
            .binary_search_by_key(&at, |d| d.addr)
            .ok()
    };
    // (address, lanes, lanes per address)
    let mut groups: BTreeMap<Option<u32>, Vec<Site>> = BTreeMap::new();
    for a in &access.accesses {
        let Some(f) = a
            .atomic
            .as_deref()
            .filter(|f| a.space == "device" && !f.privatised)
        else {
            continue;
        };
        if !matches!(f.lanes, "uniform" | "shared" | "data_dependent") {
            continue;
        }
        let at = insns.get(a.index as usize).map_or(0, |i| i.addr);
        let region = detail(at).and_then(|k| timing.instructions_detail[k].loop_index);
        groups
            .entry(region)
            .or_default()
            .push((at, f.lanes, f.lanes_per_address));
    }
    let per_loop = loop_cycles(timing);
    for (region, sites) in groups {
        let part = match region {
            Some(l) => per_loop.get(l as usize).copied().unwrap_or(0.0),
            None => sites
                .iter()
                .filter_map(|s| detail(s.0).and_then(|k| timing.insn_cycles.get(k)))
                .sum(),
        };
        let pct = share_pct(part, timing.total_cycles);
        let most = sites.iter().filter_map(|s| s.2).max();
        let mut figs = vec![("sites", sites.len() as f64), ("share_pct", pct)];
        if let Some(m) = most {
            figs.push(("lanes_per_address", m as f64));
        }
        let list: Vec<String> = sites
            .iter()
            .map(|(at, lanes, per)| match per {
                Some(n) => format!("0x{at:x} ({lanes}: {n} lanes per address)"),
                None => format!("0x{at:x} ({lanes} addresses)"),
            })
            .collect();
        let place = region
            .and_then(|l| timing.loops.get(l as usize))
            .map_or("outside loops".to_string(), |l| {
                format!("in the loop at 0x{:x}", l.header)
            });
        let fact = format!(
            "the access analysis proves {} device atomic(s) {place} contend (lanes of a SIMD-group share an address, or the address comes from loaded data), and no threadgroup atomic and barrier precede them: {}",
            sites.len(),
            list.join(", ")
        );
        let s = Suggestion::new(severity_for_share(pct), sites[0].0, ID, &figs, |f| {
            format!(
                "{} device atomic(s) {place} serialise on shared addresses{}: {}. Privatise: accumulate per threadgroup (threadgroup atomics on a threadgroup copy, or a SIMD-group reduction such as simd_sum first), then merge with one device atomic per threadgroup after a barrier.",
                f("sites"),
                most.map_or(String::new(), |_| format!(
                    " (up to {} lanes per address)",
                    f("lanes_per_address")
                )),
                list.join(", ")
            )
        })
        .with_fact(fact)
        .with_sites(sites.iter().map(|s| s.0).collect());
        out.push(s);
    }
}

/// The rule in the registry ([`super::registry`]).
pub struct PrivatiseAtomics;

impl super::Rule for PrivatiseAtomics {
    fn id(&self) -> &'static str {
        ID
    }
    fn help(&self) -> &'static str {
        "Device atomics whose lanes share an address or take it from loaded data, in a kernel that does not already privatise them: accumulate per threadgroup (threadgroup atomics or a SIMD-group reduction) and merge with one device atomic per threadgroup."
    }
    fn needs(&self) -> &'static [super::Need] {
        &[super::Need::Timing, super::Need::Access]
    }
    fn evaluate(&self, cx: &super::Context<'_>, out: &mut Vec<Suggestion>) {
        if let Some(access) = cx.access {
            evaluate_fn(cx.insns, cx.timing, cx.analysis, access, cx.line_bytes, out);
        }
    }
}
