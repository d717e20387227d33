//! Facts the access rules share: a device load, a loop by address, the
//! lines of a contiguous request, the share of a region.

use super::Context;
use crate::address::Access;
use crate::timing::model::{KernelTiming, LoopTiming};
use crate::timing::suggest::share_pct;

/// The innermost loop record holding the instruction at `addr` (the
/// model's record of it: its detail's loop).
pub fn loop_of(t: &KernelTiming, addr: u32) -> Option<&LoopTiming> {
    let d = &t.instructions_detail;
    let k = d.binary_search_by_key(&addr, |x| x.addr).ok()?;
    d[k].loop_index.and_then(|l| t.loops.get(l as usize))
}

pub fn device_load(a: &Access) -> bool {
    a.space == "device" && a.dir == "load"
}

/// Lines a contiguous request of the same width would touch.
pub fn contiguous_lines(a: &Access, line: u32) -> u32 {
    (32 * a.bytes_per_lane).div_ceil(line.max(1)).max(1)
}

/// A coalescing site: address, what its pattern is, lines, contiguous
/// lines, lane stride.
pub type Site = (u32, String, u32, u32, Option<i64>);

/// The share of the estimate a finding concerns: its loop's part (nested
/// loops included), or outside loops its sites' own part.
pub fn region_share(cx: &Context<'_>, region: Option<u32>, sites: &[u32]) -> f64 {
    let t = cx.timing;
    match region.and_then(|h| t.loops.iter().find(|l| l.header == h)) {
        Some(l) => cx.facts.loop_share(l),
        None => share_pct(
            sites.iter().map(|&a| cx.facts.cy_at(a)).sum(),
            t.total_cycles,
        ),
    }
}
