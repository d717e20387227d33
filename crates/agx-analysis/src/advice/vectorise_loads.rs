//! `vectorise-loads` (issue 35 item 5): scalar device accesses of one
//! thread that sit next to each other in memory (`x[b + 0]`, `x[b + 1]`,
//! ... of the same `b`), which one wider access (a `float2`/`float4`, up
//! to [`WIDEST`] bytes a lane) would cover: fewer requests for the same
//! bytes.
//!
//! The fact: accesses of one direction, in the same loop (or outside
//! loops), whose address polynomials ([`crate::address::Access::address`])
//! differ only in their constant, by exactly the access width, narrower
//! than [`WIDEST`] bytes each; a run of at least two. The figures: the
//! accesses, the wide accesses that cover them, and the share of the
//! estimate spent on them. Silent where the addresses are not followed or
//! not adjacent (a gather, different buffers, a lane-stride pattern only),
//! and where the run is not the thread's own: the next lane's first
//! element lies inside it (a lane stride below the run's bytes: a
//! stencil's `u[i]`, `u[i + 1]` over contiguous lanes, whose request
//! already moves the neighbour's element), or the lane stride is not known.

use super::{Context, Need, Rule};
use crate::address::{Access, Poly};
use crate::timing::suggest::{severity_for_share, Suggestion};
use std::collections::BTreeMap;

pub struct VectoriseLoads;

/// The widest access of one lane, bytes (a 4 x 32-bit vector: the widest
/// `device_load`/`device_store` form of applegpu's ISA notes, mask 0xf).
pub const WIDEST: u32 = 16;

/// Runs of adjacent accesses: per run, (instruction indices in address
/// order, bytes per lane).
pub fn runs(accesses: &[Access]) -> Vec<(Vec<u32>, u32)> {
    // group by (loop, direction, width, the polynomial's variable part)
    type Key<'a> = (
        Option<usize>,
        &'a str,
        u32,
        &'a [(crate::address::Mono, i64)],
    );
    // (constant, instruction index, lane stride)
    let mut groups: BTreeMap<Key<'_>, Vec<(i64, u32, Option<i64>)>> = BTreeMap::new();
    for a in accesses {
        let Some(Poly { c, t }) = a.address.as_ref() else {
            continue;
        };
        if a.space != "device" || a.dir == "atomic" || a.bytes_per_lane >= WIDEST {
            continue;
        }
        let key = (a.in_loop, a.dir, a.bytes_per_lane, t.as_slice());
        groups
            .entry(key)
            .or_default()
            .push((*c, a.index, a.lane_stride));
    }
    let mut out = Vec::new();
    // A run is worth a wider access only where each thread's elements are
    // its own: lanes reading one address (stride 0) or lanes at least the
    // run's bytes apart (`x[4*t + 0..3]`). Where the lanes are closer (a
    // contiguous `u[i-1]`, `u[i]` of neighbouring threads: a stencil's taps)
    // the requests already move whole lines and the wider accesses would
    // overlap the neighbours' (issue 35: no advice an expert labels wrong).
    let own = |run: &[(u32, Option<i64>)], w: u32| {
        let bytes = run.len() as u64 * u64::from(w);
        run.iter()
            .all(|(_, s)| s.is_some_and(|s| s == 0 || s.unsigned_abs() >= bytes))
    };
    let mut push = |run: &mut Vec<(u32, Option<i64>)>, w: u32| {
        if run.len() >= 2 && own(run, w) {
            out.push((run.iter().map(|x| x.0).collect(), w));
        }
        run.clear();
    };
    for ((_, _, w, _), mut v) in groups {
        v.sort();
        v.dedup_by_key(|e| e.0);
        let mut run: Vec<(u32, Option<i64>)> = Vec::new();
        let mut prev: Option<i64> = None;
        for (c, i, st) in v {
            if prev.is_none_or(|p| c - p != w as i64) {
                push(&mut run, w);
            }
            run.push((i, st));
            prev = Some(c);
        }
        push(&mut run, w);
    }
    out.sort();
    out
}

impl Rule for VectoriseLoads {
    fn id(&self) -> &'static str {
        "vectorise-loads"
    }
    fn help(&self) -> &'static str {
        "Scalar device loads or stores of one thread at adjacent addresses: one wider vector access (float2/float4) covers them with fewer requests."
    }
    fn needs(&self) -> &'static [Need] {
        &[Need::Timing, Need::Access]
    }
    fn evaluate(&self, cx: &Context<'_>, out: &mut Vec<Suggestion>) {
        let Some(acc) = cx.access else {
            return;
        };
        let found = runs(&acc.accesses);
        if found.is_empty() {
            return;
        }
        let addr = |i: u32| cx.insns.get(i as usize).map_or(0, |x| x.addr);
        let sites: Vec<u32> = found
            .iter()
            .flat_map(|(r, _)| r.iter().map(|&i| addr(i)))
            .collect();
        let n = sites.len();
        let wide: usize = found
            .iter()
            .map(|(r, w)| (r.len() as u32 * w).div_ceil(WIDEST) as usize)
            .sum();
        let share = cx.facts.share_of(&sites);
        let first = sites.iter().copied().min().unwrap_or(0);
        let (r0, w0) = &found[0];
        let s = Suggestion::new(
            severity_for_share(share),
            first,
            self.id(),
            &[
                ("accesses", n as f64),
                ("runs", found.len() as f64),
                ("first_run", r0.len() as f64),
                ("wide_accesses", wide as f64),
                ("bytes_per_lane", *w0 as f64),
                ("widest_bytes", WIDEST as f64),
                ("share_pct", share),
            ],
            |f| {
                format!(
                    "{} scalar device accesses in {} run(s) of adjacent addresses per thread (the first: {} accesses of {} B from 0x{first:x}), {}% of the estimate: {} vector access(es) of up to {} B per lane cover them. Load and store them as float2/float4 (or packed vectors) instead of one element at a time.",
                    f("accesses"),
                    f("runs"),
                    f("first_run"),
                    f("bytes_per_lane"),
                    f("share_pct"),
                    f("wide_accesses"),
                    f("widest_bytes"),
                )
            },
        );
        out.push(
            s.with_fact(
                "the accesses' addresses differ only by a constant equal to their width, in every thread",
            )
            .with_sites(sites),
        );
    }
}
