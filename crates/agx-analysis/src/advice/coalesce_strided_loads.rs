//! `coalesce-strided-loads`: a device access whose SIMD-group request touches more cache lines than a contiguous one of the same width would (strided, rows with a jump; not a gather, whose lines are no fact), with the stride and the lines wasted.

use super::memory::{contiguous_lines, loop_of, region_share, Site};
use super::{Context, Need, Rule};
use crate::address::{Access, Pattern};
use crate::timing::suggest::{severity_for_share, Suggestion};
use std::collections::BTreeMap;

pub struct CoalesceStridedLoads;

impl Rule for CoalesceStridedLoads {
    fn id(&self) -> &'static str {
        "coalesce-strided-loads"
    }
    fn help(&self) -> &'static str {
        "Device accesses that touch more cache lines per SIMD-group than contiguous ones would: have consecutive threads read consecutive elements."
    }
    fn needs(&self) -> &'static [Need] {
        &[Need::Timing, Need::Access]
    }
    fn evaluate(&self, cx: &Context<'_>, out: &mut Vec<Suggestion>) {
        let Some(access) = cx.access else { return };
        // --- coalescing: one suggestion per region, listing its sites ---
        let (groups, wide) = strided_sites(cx, &access.accesses);
        for (region, sites) in groups {
            out.push(region_suggestion(cx, region, &sites, &wide));
        }
    }
}

/// A runtime-stride site: (address, stride, lines if wide, from).
type Wide = (u32, String, u32, i64);

/// The device accesses that touch more lines than contiguous ones would,
/// by region (the header of their loop), and the runtime-stride sites.
fn strided_sites(
    cx: &Context<'_>,
    accesses: &[Access],
) -> (BTreeMap<Option<u32>, Vec<Site>>, Vec<Wide>) {
    let (insns, t, line_bytes) = (cx.insns, cx.timing, cx.line_bytes);
    let addr_of = |a: &Access| insns.get(a.index as usize).map_or(0, |i| i.addr);
    let mut groups: BTreeMap<Option<u32>, Vec<Site>> = Default::default();
    let mut wide: Vec<Wide> = Vec::new();
    for a in accesses {
        if a.space != "device" {
            continue;
        }
        let best = contiguous_lines(a, line_bytes);
        let (fact, lines) = match (a.lane_pattern, a.lines_per_request) {
            // a gather (per-lane addresses from loaded data) is not
            // advised: its lines are not a fact (32 is only the worst
            // case) and no thread order makes data-dependent indices
            // consecutive (issue 35: a bone-table lookup was told to
            // coalesce)
            (Pattern::Gather, _) => continue,
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
            // a lane stride that is a runtime uniform times a known
            // factor (issue 35: a row-wise mat-vec's `4*cols`): for any
            // value of a line or more each lane reads its own lines
            (Pattern::Strided, None) => match (
                &a.lane_stride_expr,
                a.lines_per_request_if_wide,
                a.wide_from,
            ) {
                (Some(e), Some(l), Some(from)) if l > best => {
                    wide.push((addr_of(a), e.clone(), l, from));
                    (format!("lanes {e} B apart"), l)
                }
                _ => continue,
            },
            // runs of one element each (lane stride 0) are broadcasts, not waste
            (Pattern::Rows, Some(l))
                if l > best
                    && a.lane_stride != Some(0)
                    && !(x_neighbours_fill_lines(a, line_bytes)
                        && region_bound(t, addr_of(a)) != "memory_bandwidth") =>
            {
                (
                    "rows: a threadgroup narrower than the SIMD-group".to_string(),
                    l,
                )
            }
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
    (groups, wide)
}

/// The suggestion for one region's strided `sites`.
fn region_suggestion(
    cx: &Context<'_>,
    region: Option<u32>,
    sites: &[Site],
    wide: &[Wide],
) -> Suggestion {
    let line_bytes = cx.line_bytes;
    let lines: u32 = sites.iter().map(|s| s.2).sum();
    let best: u32 = sites.iter().map(|s| s.3).sum();
    let list: Vec<String> = sites
        .iter()
        .map(|(at, fact, _, _, _)| format!("0x{at:x} ({fact})"))
        .collect();
    // the stride of the first site that has a known one
    let stride = sites.iter().find_map(|s| s.4);
    let mut figs = vec![
        ("sites", sites.len() as f64),
        ("lines_per_request", lines as f64),
        ("lines_contiguous", best as f64),
        ("lines_wasted", lines.saturating_sub(best) as f64),
        ("line_bytes", line_bytes as f64),
    ];
    // the first runtime-stride site of the region: its lines for
    // every value of a line or more, and from which value
    let first_wide = wide.iter().find(|w| sites.iter().any(|s| s.0 == w.0));
    if let Some(w) = first_wide {
        figs.push(("lines_if_wide", w.2 as f64));
        figs.push(("wide_from", w.3 as f64));
    }
    let wide_note = first_wide.map(|(at, e, _, _)| {
        let u = e.split_once('*').map_or(e.as_str(), |x| x.1);
        (format!("0x{at:x}"), u.to_string())
    });
    if let Some(x) = stride {
        figs.push(("lane_stride", x as f64));
    }
    let at: Vec<u32> = sites.iter().map(|s| s.0).collect();
    let pct = region_share(cx, region, &at);
    figs.push(("share_pct", pct));
    let place = region.map_or("outside loops".to_string(), |h| {
        format!("in the loop at 0x{h:x}")
    });
    let fact = region_fact(sites, &place);
    Suggestion::new(
        severity_for_share(pct),
        sites[0].0,
        "coalesce-strided-loads",
        &figs,
        |f| {
            format!(
                "{} device accesses {place} touch {} cache lines of {} B per SIMD-group where contiguous ones would touch {} ({} wasted): {}{}{}. Have consecutive threads read consecutive elements (transpose the layout, make the threadgroup at least a SIMD-group wide, or stage through threadgroup memory).",
                f("sites"),
                f("lines_per_request"),
                f("line_bytes"),
                f("lines_contiguous"),
                f("lines_wasted"),
                list.join(", "),
                match &wide_note {
                    Some((at, u)) => format!(
                        "; at {at}, for any {u} >= {} (a stride of {} B or more) each lane reads its own line: {} lines per request",
                        f("wide_from"),
                        f("line_bytes"),
                        f("lines_if_wide")
                    ),
                    None => String::new(),
                },
                if stride.is_some() {
                    format!("; lane stride {} B", f("lane_stride"))
                } else {
                    String::new()
                }
            )
        },
    )
    .with_fact(fact)
    .with_sites(at)
}

/// What the access analysis proves of a region's `sites` (at `place`),
/// naming the runtime strides (`lanes 4*u6 B apart: …`).
fn region_fact(sites: &[Site], place: &str) -> String {
    let mut exprs: Vec<&str> = sites
        .iter()
        .filter_map(|s| {
            s.1.strip_prefix("lanes ")?
                .split_once(" B apart")
                .map(|x| x.0)
        })
        .collect();
    let symbolic = exprs.len();
    exprs.sort_unstable();
    exprs.dedup();
    if symbolic == 0 {
        format!(
            "the access analysis proves {} of these device accesses {place} stride across the lanes",
            sites.len(),
        )
    } else {
        format!(
            "the access analysis proves {} of these device accesses {place} stride across the lanes, {symbolic} by a runtime stride ({}) whose lines are counted for every value of a cache line or more",
            sites.len(),
            exprs.join(", ")
        )
    }
}

/// Whether the rest of each line a `rows` request touches is read by the
/// next threadgroups along x: the address moves with the thread's grid x
/// position (`thread_position_in_grid.x`: the same coefficient on the
/// position in the threadgroup and on the threadgroup's origin, the lane
/// stride) and a run's bytes tile the line. The cache model assumes
/// threadgroups dispatched x first (docs/analysis.md, Cache model), so
/// those lines reach DRAM once for the neighbours: what is left is L1
/// transactions per request, which matter only where L1 bandwidth bounds
/// the region (laplacian3d_7pt's 8-wide threadgroup, its 32 B row pieces
/// of 128 B lines).
fn x_neighbours_fill_lines(a: &Access, line_bytes: u32) -> bool {
    use crate::address::Sym;
    let (Some(p), Some(s), Some(run)) = (a.address.as_ref(), a.lane_stride, a.run) else {
        return false;
    };
    let coef = |x: Sym| {
        p.t.iter()
            .find(|(m, _)| *m == (x, None))
            .map_or(0, |&(_, v)| v)
    };
    let piece = s.abs() * i64::from(run);
    s > 0
        && coef(Sym::Lid(0)) == s
        && coef(Sym::Sr(1000)) == s
        && piece > 0
        && piece <= i64::from(line_bytes)
        && i64::from(line_bytes) % piece == 0
}

/// The bound of the region holding the instruction at `addr`: its loop's
/// body, or the code outside loops.
fn region_bound(t: &crate::timing::KernelTiming, addr: u32) -> &'static str {
    loop_of(t, addr).map_or(t.outside_loops.bound.by, |l| l.body.bound.by)
}
