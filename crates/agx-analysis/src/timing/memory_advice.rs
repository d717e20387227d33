//! Memory advice from access facts (issue 27 item 5): each rule states the
//! fact it rests on ([`crate::address::Access`]) and is silent when the
//! fact is absent.
//!
//! * `tile-global-loads` (the loop rule of [`super::suggest`]) is kept only
//!   for a loop whose device loads are re-read, by other threads of the
//!   threadgroup, by every thread along a grid dimension the address does
//!   not depend on (a shape-independent fact), or by later iterations, and only when the kernel does not
//!   already stage data through threadgroup memory
//!   ([`super::suggest::stages_through_threadgroup`]: a threadgroup store,
//!   a `threadgroup_barrier` and a threadgroup load); its message then
//!   names those loads.
//! * `coalesce-strided-loads`: a device access whose SIMD-group request
//!   touches more cache lines than a contiguous one of the same width would
//!   (strided, rows with a jump, gather), with the stride and the lines
//!   wasted.
//! * `hoist-invariant-loads`: a device load in a loop whose address does
//!   not move across the iterations (loop stride 0).

use super::model::{KernelTiming, LoopTiming};
use super::suggest::{
    loop_cycles, severity_for_share, share_pct, stages_through_threadgroup, Suggestion,
};
use crate::address::{Access, Addresses, Pattern};
use agx_isa::Instruction;

/// The rule ids this module adds.
pub const MEMORY_RULES: &[&str] = &["coalesce-strided-loads", "hoist-invariant-loads"];

/// The innermost loop record holding the instruction at `addr` (the
/// model's record of it: its detail's loop).
fn loop_of(t: &KernelTiming, addr: u32) -> Option<&LoopTiming> {
    let d = &t.instructions_detail;
    let k = d.binary_search_by_key(&addr, |x| x.addr).ok()?;
    d[k].loop_index.and_then(|l| t.loops.get(l as usize))
}

fn device_load(a: &Access) -> bool {
    a.space == "device" && a.dir == "load"
}

/// Lines a contiguous request of the same width would touch.
fn contiguous_lines(a: &Access, line: u32) -> u32 {
    (32 * a.bytes_per_lane).div_ceil(line.max(1)).max(1)
}

/// A coalescing site: address, what its pattern is, lines, contiguous
/// lines, lane stride.
type Site = (u32, String, u32, u32, Option<i64>);

/// Applies the access facts to the suggestions of `suggest` for one
/// function: the tiling advice kept only where its fact holds, the
/// coalescing and hoisting advice added.
pub fn refine(
    out: &mut Vec<Suggestion>,
    insns: &[Instruction],
    t: &KernelTiming,
    access: &Addresses,
    line_bytes: u32,
) {
    if access.accesses.is_empty() {
        return;
    }
    let addr_of = |a: &Access| insns.get(a.index as usize).map_or(0, |i| i.addr);
    let staged = stages_through_threadgroup(insns);
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
    // the share of the estimate a finding concerns: its loop's part (nested
    // loops included), or outside loops its sites' own part
    let total = t.total_cycles;
    let per_loop = loop_cycles(t);
    let insn_cy = |at: u32| {
        t.instructions_detail
            .binary_search_by_key(&at, |d| d.addr)
            .ok()
            .and_then(|k| t.insn_cycles.get(k).copied())
            .unwrap_or(0.0)
    };
    let share = |region: Option<u32>, sites: &[u32]| match region
        .and_then(|h| t.loops.iter().find(|l| l.header == h))
    {
        Some(l) => share_pct(per_loop.get(l.index).copied().unwrap_or(0.0), total),
        None => share_pct(sites.iter().map(|&a| insn_cy(a)).sum(), total),
    };
    // --- coalescing: one suggestion per region, listing its sites ---
    let mut groups: std::collections::BTreeMap<Option<u32>, Vec<Site>> = Default::default();
    for a in &access.accesses {
        if a.space != "device" {
            continue;
        }
        let best = contiguous_lines(a, line_bytes);
        let (fact, lines) = match (a.lane_pattern, a.lines_per_request) {
            (Pattern::Gather, _) => (
                "gather (per-lane addresses from loaded data)".to_string(),
                32,
            ),
            // a vector padded to its alignment (`v[i].xyz` of a vec4 array:
            // 12 bytes at a 16-byte stride) touches the lines of a
            // contiguous read of the padded element: nothing to coalesce
            (Pattern::Strided, Some(l))
                if l > best
                    && a.lane_stride.is_some_and(|x| {
                        x.unsigned_abs() > u64::from(a.bytes_per_lane.next_power_of_two())
                    }) =>
            {
                ("strided".to_string(), l)
            }
            // runs of one element each (lane stride 0) are broadcasts, not waste
            (Pattern::Rows, Some(l)) if l > best && a.lane_stride != Some(0) => (
                "rows: a threadgroup narrower than the SIMD-group".to_string(),
                l,
            ),
            _ => continue,
        };
        let at = addr_of(a);
        let region = loop_of(t, at).map(|l| l.header);
        groups.entry(region).or_default().push((
            at,
            fact,
            lines,
            best,
            a.lane_stride.filter(|&x| x != 0),
        ));
    }
    for (region, sites) in groups {
        let lines: u32 = sites.iter().map(|s| s.2).sum();
        let best: u32 = sites.iter().map(|s| s.3).sum();
        let list: Vec<String> = sites
            .iter()
            .map(|(at, fact, _, _, _)| format!("0x{at:x} ({fact})"))
            .collect();
        let gather = sites.iter().any(|s| s.1.starts_with("gather"));
        // the stride of the first site that has a known one
        let stride = sites.iter().find_map(|s| s.4);
        let mut figs = vec![
            ("sites", sites.len() as f64),
            ("lines_per_request", lines as f64),
            ("lines_contiguous", best as f64),
            ("lines_wasted", lines.saturating_sub(best) as f64),
            ("line_bytes", line_bytes as f64),
        ];
        if let Some(x) = stride {
            figs.push(("lane_stride", x as f64));
        }
        let at: Vec<u32> = sites.iter().map(|s| s.0).collect();
        let pct = share(region, &at);
        figs.push(("share_pct", pct));
        let place = region.map_or("outside loops".to_string(), |h| {
            format!("in the loop at 0x{h:x}")
        });
        let fact = format!(
            "the access analysis proves {} of these device accesses {place} {}",
            sites.len(),
            if gather {
                "gather or stride across the lanes"
            } else {
                "stride across the lanes"
            }
        );
        out.push(
            Suggestion::new(
            severity_for_share(pct),
            sites[0].0,
            "coalesce-strided-loads",
            &figs,
            |f| {
                format!(
                    "{} device accesses {place} touch {}{} cache lines of {} B per SIMD-group where contiguous ones would touch {} ({} wasted): {}{}. Have consecutive threads read consecutive elements (transpose the layout, make the threadgroup at least a SIMD-group wide, or stage through threadgroup memory).",
                    f("sites"),
                    if gather { "up to " } else { "" },
                    f("lines_per_request"),
                    f("line_bytes"),
                    f("lines_contiguous"),
                    f("lines_wasted"),
                    list.join(", "),
                    if stride.is_some() {
                        format!("; lane stride {} B", f("lane_stride"))
                    } else {
                        String::new()
                    }
                )
            },
        )
            .with_fact(fact)
            .with_sites(at),
        );
    }
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
