//! Synchronisation as bounds of their own (issue 35 items 4 and 5): the
//! `barrier` and `atomic` components of a region's [`super::model::Bound`],
//! in cycles per SIMD-group pass on one scheduler like the others.
//!
//! **Barrier model** (an assumption; no measured barrier cost is known for
//! these GPUs: `shared/reference/timing.md` has none, the cost table charges
//! a barrier one dispatch cycle). A `threadgroup_barrier` lets no SIMD-group
//! of the threadgroup pass before the slowest one arrives and the
//! threadgroup stores before it are visible: each barrier exposes one
//! threadgroup-memory round trip (`MemParams::threadgroup_latency`, itself
//! an assumption) to every SIMD-group of the threadgroup at once. The `g`
//! SIMD-groups of one threadgroup on a scheduler wait together, so only the
//! other threadgroups resident on it hide the wait: with `k` SIMD-groups
//! resident per scheduler, a pass costs `barriers x latency x g / k`
//! (`g = ceil(threadgroup SIMD-groups / schedulers per core)`, `1 <= g <= k`).
//! A barrier closing a phase that reads threadgroup memory (a threadgroup
//! load or atomic since the previous barrier of the region) counts twice:
//! **assumption**, the slowest SIMD-group's read must return before it
//! arrives, and the stores the barrier orders then become visible, two
//! round trips on the wait's path instead of one (a read-then-write step
//! of a threadgroup scan or reduction).
//!
//! **Atomic model** (an assumption; no source measures atomics on these
//! GPUs: metal-benchmarks gives no atomic or shared-memory throughput for
//! Apple 7/8, Mesa's `agx_performance.c` models no memory instruction).
//! An atomic is a read-modify-write of one word where the word lives, and
//! updates of one word are applied one after another (atomicity: the next
//! reads what the previous wrote), so each serialised update costs a round
//! trip to that memory: `MemParams::threadgroup_latency` for a
//! threadgroup atomic, the device latency for a device atomic (both
//! themselves assumptions). Atomics whose lanes share an address (the
//! access facts' `atomic.lanes_per_address`, [`crate::atomics`]) cost `n`
//! serialised updates per request with `n` lanes per address; addresses
//! shared by every SIMD-group (uniform) are not hidden by the other
//! SIMD-groups (they wait on the same address), other shared addresses are
//! (divided by `k`). Across the SIMD-groups of a threadgroup: when every
//! thread updates one of `W` words once (`atomic.min_updates_per_word`,
//! the pigeonhole `ceil(threads / W)`: the histogram's 1024 threads on 64
//! bins give 16), the busiest word's updates are a chain of that many round
//! trips on the threadgroup's path, a wait counted as a barrier's (`x g /
//! k`: only other threadgroups hide it); the larger of the two is charged.
//! Atomics whose contention is not known (data-dependent or unproved
//! addresses, no bound on their words) add nothing: the bound is silent
//! without the fact.

use super::model::ModelParams;
use super::table::GpuTiming;
use agx_isa::{Instruction, MemDir, MemSpace};

/// Whether `insn` is a threadgroup barrier.
pub fn is_barrier(insn: &Instruction) -> bool {
    insn.mnemonic() == "threadgroup_barrier"
}

/// SIMD-groups of one threadgroup sharing a scheduler (`g` of the module
/// doc), at least 1 and at most the resident `k`.
fn group_simds_per_scheduler(gpu: &GpuTiming, params: &ModelParams, k: f64) -> f64 {
    let shape = params.threadgroup.unwrap_or_default();
    let threads = (shape.w as u64 * shape.h as u64 * shape.d as u64).max(1) as f64;
    let simds = (threads / gpu.simd_width.max(1) as f64).ceil();
    (simds / gpu.schedulers_per_core.max(1) as f64)
        .ceil()
        .clamp(1.0, k.max(1.0))
}

/// The barrier component of a region with `barriers` barriers per pass.
pub fn barrier_cycles(gpu: &GpuTiming, params: &ModelParams, barriers: usize) -> f64 {
    if barriers == 0 {
        return 0.0;
    }
    let k = params.simds_per_scheduler(gpu);
    let g = group_simds_per_scheduler(gpu, params, k);
    barriers as f64 * params.mem.threadgroup_latency * g / k
}

/// [`atomic_ways`]'s flag: every SIMD-group updates the same words
/// (`atomic.words_scope` `grid` or `threadgroup`).
pub const SHARED_WORDS: u8 = 0x80;

/// Lanes per address of an atomic, from the access facts (0: not known or
/// not an atomic; 1: no contention), packed per instruction for the model,
/// with [`SHARED_WORDS`] set when every SIMD-group updates the same words.
pub fn atomic_ways(access: &crate::address::Access) -> u8 {
    match access.atomic.as_deref() {
        Some(f) if f.lanes != "one_lane" => {
            let n = f.lanes_per_address.map_or(0, |n| n.min(0x7f) as u8);
            let shared = matches!(f.words_scope, Some("grid" | "threadgroup"));
            if shared && n > 0 {
                n | SHARED_WORDS
            } else {
                n
            }
        }
        _ => 0,
    }
}

/// The cost of one atomic request with `ways` lanes per address (`> 1`,
/// packed by [`atomic_ways`]). Device updates of words every SIMD-group
/// shares (all lanes on one address, or [`SHARED_WORDS`]) are not hidden
/// by the other SIMD-groups: they queue on the same words.
pub fn atomic_request_cycles(
    gpu: &GpuTiming,
    params: &ModelParams,
    dir: MemDir,
    space: MemSpace,
    ways: u8,
) -> f64 {
    let shared = ways & SHARED_WORDS != 0;
    let ways = ways & !SHARED_WORDS;
    if dir != MemDir::Atomic || ways <= 1 {
        return 0.0;
    }
    let n = ways as f64;
    let trip = match space {
        MemSpace::Threadgroup => params.mem.threadgroup_latency,
        MemSpace::Device => params.mem.device_latency(),
        _ => return 0.0,
    };
    if shared || ways as u32 >= gpu.simd_width {
        n * trip
    } else {
        n * trip / params.simds_per_scheduler(gpu)
    }
}

/// The wait of a threadgroup atomic whose busiest word gets `updates`
/// serialised updates per threadgroup (`atomic.min_updates_per_word`; 0
/// or 1: nothing): a chain of that many threadgroup round trips, hidden
/// only by the other threadgroups, as a barrier's wait.
pub fn atomic_chain_cycles(gpu: &GpuTiming, params: &ModelParams, updates: u16) -> f64 {
    if updates <= 1 {
        return 0.0;
    }
    let k = params.simds_per_scheduler(gpu);
    let g = group_simds_per_scheduler(gpu, params, k);
    updates as f64 * params.mem.threadgroup_latency * g / k
}

/// [`crate::atomics::AtomicFact::min_updates_per_word`] per kernel
/// instruction (`n` instructions; empty when there are no access facts;
/// 0 when not known).
pub fn atomic_chains_by_insn(access: &[crate::address::Access], n: usize) -> Vec<u16> {
    let mut chains = vec![0u16; if access.is_empty() { 0 } else { n }];
    for a in access {
        let updates = a.atomic.as_deref().and_then(|f| f.min_updates_per_word);
        if let (Some(c), Some(u)) = (chains.get_mut(a.index as usize), updates) {
            *c = u.min(u16::MAX as u32) as u16;
        }
    }
    chains
}

/// [`atomic_ways`] per kernel instruction (`n` instructions; empty when
/// there are no access facts).
pub fn atomic_ways_by_insn(access: &[crate::address::Access], n: usize) -> Vec<u8> {
    let mut ways = vec![0u8; if access.is_empty() { 0 } else { n }];
    for a in access {
        if let Some(w) = ways.get_mut(a.index as usize) {
            *w = atomic_ways(a);
        }
    }
    ways
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomics_serialise_only_where_lanes_share_an_address() {
        let p = ModelParams::default();
        let gpu = p.gpu.table();
        let lat = p.mem.device_latency();
        let k = p.simds_per_scheduler(gpu);
        let c = |space, ways| atomic_request_cycles(gpu, &p, MemDir::Atomic, space, ways);
        // every lane on one address: 32 updates, not hidden
        assert_eq!(c(MemSpace::Device, 32), 32.0 * lat);
        // runs of 4 lanes per address: hidden by the other SIMD-groups
        assert_eq!(c(MemSpace::Device, 4), 4.0 * lat / k);
        // the same 16 words in every SIMD-group of the grid: not hidden
        assert_eq!(c(MemSpace::Device, 2 | SHARED_WORDS), 2.0 * lat);
        // threadgroup: a threadgroup round trip per serialised update
        let tg = p.mem.threadgroup_latency;
        assert_eq!(c(MemSpace::Threadgroup, 8), 8.0 * tg / k);
        assert_eq!(c(MemSpace::Threadgroup, 32), 32.0 * tg);
        // distinct addresses, unknown contention, a load: nothing
        assert_eq!(c(MemSpace::Device, 1), 0.0);
        assert_eq!(c(MemSpace::Device, 0), 0.0);
        assert_eq!(
            atomic_request_cycles(gpu, &p, MemDir::Load, MemSpace::Device, 32),
            0.0
        );
    }

    #[test]
    fn a_chain_of_updates_on_one_word_waits_like_a_barrier() {
        let mut p = ModelParams::default();
        let gpu = p.gpu.table();
        assert_eq!(atomic_chain_cycles(gpu, &p, 0), 0.0);
        assert_eq!(atomic_chain_cycles(gpu, &p, 1), 0.0);
        // 1024 threads (g = k): 16 updates of the busiest word, in full
        p.threadgroup = Some(crate::address::Shape::parse("1024x1x1", "flag").unwrap());
        let tg = p.mem.threadgroup_latency;
        assert_eq!(atomic_chain_cycles(gpu, &p, 16), 16.0 * tg);
        assert_eq!(
            atomic_chain_cycles(gpu, &p, 16),
            barrier_cycles(gpu, &p, 16)
        );
    }

    #[test]
    fn barriers_are_hidden_only_by_other_threadgroups() {
        let mut p = ModelParams::default();
        let gpu = p.gpu.table();
        let k = p.simds_per_scheduler(gpu);
        assert_eq!(barrier_cycles(gpu, &p, 0), 0.0);
        // one SIMD-group per threadgroup (the default shape): g = 1
        let one = barrier_cycles(gpu, &p, 3);
        assert_eq!(one, 3.0 * p.mem.threadgroup_latency / k);
        // 256 threads = 8 SIMD-groups over 4 schedulers: g = 2, twice the cost
        p.threadgroup = Some(crate::address::Shape::parse("256x1x1", "flag").unwrap());
        assert_eq!(barrier_cycles(gpu, &p, 3), 2.0 * one);
    }
}
