//! `subgroup-reduction` (issue 35 item 5): a threadgroup tree reduction or
//! scan written as barrier-separated steps, each reading threadgroup memory
//! and writing it back (`if (t < w) red[t] += red[t + w]; barrier();`, the
//! Hillis-Steele scan). SIMD-group reductions and prefix sums (`simd_sum`,
//! `simd_max`, `simd_prefix_inclusive_sum`, shuffles) do the first
//! log2(32) = 5 steps inside each SIMD-group without threadgroup memory or
//! barriers; one threadgroup step then combines the SIMD-groups.
//!
//! The fact: the steps, counted in address order as the stretches between
//! two `threadgroup_barrier`s that hold a threadgroup load and a
//! threadgroup store (atomics are not steps), at least [`MIN_STEPS`] of
//! them; the figures: steps, barriers, and the share of the estimate spent
//! on the instructions from the first step's start to its last barrier.
//! Silent without such steps (a tile fill then reads, a privatised
//! histogram, a kernel already using SIMD-group reductions).

use super::{Context, Need, Rule};
use crate::timing::suggest::{severity_for_share, Suggestion};
use crate::timing::sync::is_barrier;
use agx_isa::{Instruction, MemDir, MemSpace};

pub struct SubgroupReduction;

/// Fewest barrier-separated steps that make a tree: a tree over one
/// SIMD-group's 32 values has 5; fewer than 3 is not a reduction tree.
pub const MIN_STEPS: usize = 3;

/// The steps of `insns`: (first instruction index, its closing barrier's
/// index) per step, and the barriers in all.
pub fn steps(insns: &[Instruction]) -> (Vec<(usize, usize)>, usize) {
    let mut out = Vec::new();
    let (mut start, mut load, mut store, mut barriers) = (0, false, false, 0);
    for (j, i) in insns.iter().enumerate() {
        if is_barrier(i) {
            barriers += 1;
            if load && store {
                out.push((start, j));
            }
            (start, load, store) = (j + 1, false, false);
            continue;
        }
        if let Some(m) = i.mem_access().filter(|m| m.space == MemSpace::Threadgroup) {
            load |= m.dir == MemDir::Load;
            store |= m.dir == MemDir::Store;
        }
    }
    (out, barriers)
}

impl Rule for SubgroupReduction {
    fn id(&self) -> &'static str {
        "subgroup-reduction"
    }
    fn help(&self) -> &'static str {
        "A threadgroup tree reduction or scan in barrier-separated steps: reduce inside each SIMD-group with SIMD-group reductions or shuffles, then combine the SIMD-groups in one threadgroup step."
    }
    fn needs(&self) -> &'static [Need] {
        &[Need::Timing]
    }
    fn evaluate(&self, cx: &Context<'_>, out: &mut Vec<Suggestion>) {
        let (st, barriers) = steps(cx.insns);
        if st.len() < MIN_STEPS {
            return;
        }
        let (first, last) = (st[0].0, st[st.len() - 1].1);
        let sites: Vec<u32> = st.iter().map(|&(_, b)| cx.insns[b].addr).collect();
        let share = cx.facts.share_of_range(first..=last);
        let at = cx.insns[first].addr;
        let s = Suggestion::new(
            severity_for_share(share),
            at,
            self.id(),
            &[
                ("steps", st.len() as f64),
                ("barriers", barriers as f64),
                ("share_pct", share),
            ],
            |f| {
                format!(
                    "{} barrier-separated threadgroup-memory steps from 0x{at:x} to 0x{:x} ({} barriers in the kernel), {}% of the estimate: a tree reduction or scan through threadgroup memory. Reduce inside each SIMD-group first (simd_sum / simd_max / simd_prefix_inclusive_sum or shuffles: no threadgroup memory, no barrier), then combine the per-SIMD-group results in one threadgroup step.",
                    f("steps"),
                    cx.insns[last].addr,
                    f("barriers"),
                    f("share_pct")
                )
            },
        );
        out.push(
            s.with_fact(
                "threadgroup loads and stores between consecutive threadgroup barriers, step after step",
            )
            .with_sites(sites),
        );
    }
}
