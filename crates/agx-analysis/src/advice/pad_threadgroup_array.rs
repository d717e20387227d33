//! `pad-threadgroup-array` (issue 35 item 3): threadgroup accesses whose
//! SIMD-group request has an N-way bank conflict
//! ([`crate::address::Access::bank_conflict_ways`] > 1) because the lanes
//! walk an array at a pitch that maps them to the same banks (a column of a
//! row-major tile, a transpose, a tree step). The fact is the ways and the
//! pitch; the advice is the smallest padding of that pitch, in bank words,
//! that makes the request conflict-free under the GPU model's bank model
//! (found by trying each padding with [`crate::banks::ways_of`]). Silent
//! when no access conflicts, when the pitch is not a known constant, or
//! when no padding up to one word per bank removes the conflict.
//!
//! Machine code names no arrays: the array is named by its access (address,
//! pattern, pitch).

use crate::address::{Access, Addresses, Pattern};
use crate::banks::{ways_of, BankModel};
use crate::timing::model::KernelTiming;
use crate::timing::suggest::{loop_cycles, severity_for_share, share_pct, Suggestion};
use crate::Analysis;
use agx_isa::Instruction;
use std::collections::BTreeMap;

/// The rule's id.
pub const ID: &str = "pad-threadgroup-array";

/// A conflicting site: address, ways, pitch (bytes), padding (bytes).
type Site = (u32, u32, i64, i64);

/// The lanes' byte offsets for `access` with its pitch replaced by
/// `pitch`: (offsets, which pitch was padded). Strided: the lane stride;
/// rows: the jump between runs when the runs conflict, else the stride.
fn offsets(a: &Access, stride: i64, jump: Option<i64>) -> Vec<i64> {
    match (a.lane_pattern, a.run, jump) {
        (Pattern::Rows, Some(run), Some(j)) if run > 0 => {
            let run = run as i64;
            (0..32).map(|l| l / run * j + l % run * stride).collect()
        }
        _ => (0..32).map(|l| l * stride).collect(),
    }
}

/// The pitch of a conflicting access and the smallest padding (bytes, a
/// multiple of the bank word) that makes it conflict-free.
fn padding(a: &Access, m: &BankModel) -> Option<(i64, i64)> {
    let wb = m.word_bytes as i64;
    let s = a.lane_stride?;
    let cands: Vec<(i64, bool)> = match a.lane_pattern {
        Pattern::Strided if s != 0 => vec![(s, false)],
        Pattern::Rows => {
            let j = a.jump?;
            vec![(j, true), (s, false)]
        }
        _ => return None,
    };
    for (pitch, is_jump) in cands {
        for k in 1..=m.banks as i64 {
            let p = pitch + pitch.signum().max(1) * k * wb;
            let (st, jp) = if is_jump { (s, Some(p)) } else { (p, a.jump) };
            if ways_of(&offsets(a, st, jp), a.bytes_per_lane, m) == Some(1) {
                return Some((pitch, k * wb));
            }
        }
    }
    None
}

/// Adds one suggestion per region (loop, or outside loops) for its
/// threadgroup accesses with a bank conflict a padding removes.
fn evaluate_fn(
    insns: &[Instruction],
    timing: &KernelTiming,
    _analysis: Option<&Analysis>,
    access: &Addresses,
    _line_bytes: u32,
    out: &mut Vec<Suggestion>,
) {
    let Some(m) = timing.params.gpu.threadgroup_banks else {
        return;
    };
    let addr_of = |a: &Access| insns.get(a.index as usize).map_or(0, |i| i.addr);
    let detail = |at: u32| {
        timing
            .instructions_detail
            .binary_search_by_key(&at, |d| d.addr)
            .ok()
    };
    let mut groups: BTreeMap<Option<u32>, Vec<Site>> = BTreeMap::new();
    for a in &access.accesses {
        let Some(w) = a.bank_conflict_ways.filter(|&w| w > 1) else {
            continue;
        };
        let Some((pitch, pad)) = padding(a, &m) else {
            continue;
        };
        let at = addr_of(a);
        let region = detail(at).and_then(|k| timing.instructions_detail[k].loop_index);
        groups.entry(region).or_default().push((at, w, pitch, pad));
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
        let worst = sites.iter().max_by_key(|s| s.1).copied().expect("a site");
        let figs = [
            ("sites", sites.len() as f64),
            ("bank_conflict_ways", worst.1 as f64),
            ("pitch_bytes", worst.2 as f64),
            ("padding_bytes", worst.3 as f64),
            ("banks", m.banks as f64),
            ("bank_word_bytes", m.word_bytes as f64),
            ("share_pct", pct),
        ];
        let list: Vec<String> = sites
            .iter()
            .map(|(at, w, p, _)| format!("0x{at:x} ({w}-way, pitch {p} B)"))
            .collect();
        let place = region
            .and_then(|l| timing.loops.get(l as usize))
            .map_or("outside loops".to_string(), |l| {
                format!("in the loop at 0x{:x}", l.header)
            });
        let fact = format!(
            "the access analysis proves {} threadgroup access(es) {place} serve their SIMD-group in {}-way bank conflicts ({} banks x {} B, {}): {}",
            sites.len(),
            worst.1,
            m.banks,
            m.word_bytes,
            if m.source.starts_with("assumption") { "assumed" } else { "the GPU model's" },
            list.join(", ")
        );
        let s = Suggestion::new(severity_for_share(pct), worst.0, ID, &figs, |f| {
            format!(
                "The threadgroup array accessed at 0x{:x} is walked at a pitch of {} B, so a SIMD-group's lanes fall into the same banks ({}-way conflict, {} replays per request): {}. Pad each row of the array by {} B ({} word(s) of {} B: a pitch of {} B) so consecutive lanes land in different banks.",
                worst.0,
                f("pitch_bytes"),
                f("bank_conflict_ways"),
                worst.1 - 1,
                list.join(", "),
                f("padding_bytes"),
                worst.3 / m.word_bytes as i64,
                f("bank_word_bytes"),
                worst.2 + worst.3,
            )
        })
        .with_fact(fact)
        .with_sites(sites.iter().map(|s| s.0).collect());
        out.push(s);
    }
}

/// The rule in the registry ([`super::registry`]).
pub struct PadThreadgroupArray;

impl super::Rule for PadThreadgroupArray {
    fn id(&self) -> &'static str {
        ID
    }
    fn help(&self) -> &'static str {
        "Threadgroup accesses whose SIMD-group request has an N-way bank conflict (lanes walking an array at a pitch that maps them to the same banks): pad the array's row pitch by the named number of words."
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
