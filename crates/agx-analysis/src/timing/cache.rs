//! The cache model (issue 35 item 2): per device/texture access, the bytes
//! one SIMD-group's execution of the instruction moves through L1
//! (`l1_bytes`) and the first touches of them that reach DRAM
//! (`dram_bytes`), from the access facts ([`crate::address::Access`]).
//!
//! - `l1_bytes`: the distinct cache lines the request touches x the line
//!   size ([`super::MemParams::cache_line_bytes`], 128 B: metal-benchmarks'
//!   "Global Cache Line 128 B" for Apple 7/8, the size the access facts
//!   count lines in), or the broadcast bytes of a uniform address (one
//!   value for the whole SIMD-group), or 32 lanes x the lane's bytes when
//!   the pattern does not give the lines.
//! - `dram_bytes`: `l1_bytes` less what earlier touches already brought in:
//!   a loop-invariant load (loop stride 0) reads lines its first iteration
//!   fetched (0 per execution after it); a loop stride smaller than the
//!   lines touched brings in `|stride|` new bytes per line per iteration;
//!   lines the other SIMD-groups of the threadgroup read
//!   (`reuse.simd_groups`) and, along grid dimension `x` (the dimension
//!   threadgroups are assumed to be dispatched along first, an
//!   assumption), the other threadgroups resident on the core, are
//!   fetched once for all of them; so are lines the SIMD-groups next along
//!   x read other parts of (a request reading less than a line of a row:
//!   `row_sharers`).
//! - All that reuse holds while the reuse window fits the GPU model's L1
//!   data cache ([`super::GpuTiming::l1_data_bytes_per_core`], 8 KB for
//!   G13 from metal-benchmarks' ~8-12 KB): the distinct bytes every
//!   resident SIMD-group of the core brings in over one iteration of the
//!   access's innermost loop (its straight-line code outside loops; a
//!   broadcast load holds its whole line there). Past
//!   it the lines are evicted before they are read again and every
//!   execution is charged `l1_bytes` again.
//!
//! Stores and atomics reach DRAM whole (`dram_bytes = l1_bytes`).

use super::model::ModelParams;
use super::GpuTiming;
use crate::address::{Access, Poly, Sym};
use serde::Serialize;

/// Traffic of one execution of a memory instruction by one SIMD-group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Traffic {
    /// Bytes the request moves through L1.
    pub l1_bytes: f64,
    /// Bytes of them that are first touches reaching DRAM.
    pub dram_bytes: f64,
}

impl Traffic {
    /// The traffic [`annotate`] set on `a` (`None`: not covered, or not
    /// annotated).
    pub fn of_access(a: &Access) -> Option<Traffic> {
        let (l1_bytes, dram_bytes) = a.l1_bytes.zip(a.dram_bytes)?;
        Some(Traffic {
            l1_bytes,
            dram_bytes,
        })
    }
}

/// What the model needs of the GPU and the launch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Geometry {
    /// Cache line, bytes.
    pub line_bytes: f64,
    /// L1 data cache per core, bytes.
    pub l1_bytes_per_core: f64,
    /// SIMD-groups resident per core.
    pub resident_simds: f64,
    /// SIMD-groups per threadgroup.
    pub simds_per_threadgroup: f64,
    /// Threads of the threadgroup along x.
    pub threadgroup_width: u32,
    /// `--l1-hit-rate`: the fraction of the first touches that still hit a
    /// cache (None: the model alone).
    pub hit_rate: Option<f64>,
}

impl Geometry {
    /// The geometry of `params` on `gpu` (occupancy: `params.threads_per_core`).
    pub fn of(gpu: &GpuTiming, params: &ModelParams) -> Geometry {
        let shape = params.threadgroup.unwrap_or(crate::address::Shape::DEFAULT);
        let simd = gpu.simd_width.max(1) as f64;
        Geometry {
            line_bytes: params.mem.cache_line_bytes,
            l1_bytes_per_core: gpu.l1_data_bytes_per_core as f64,
            resident_simds: params.simds_per_scheduler(gpu) * gpu.schedulers_per_core as f64,
            simds_per_threadgroup: (shape.threads().max(1) as f64 / simd).ceil(),
            threadgroup_width: shape.w.max(1),
            hit_rate: params.mem.l1_hit_rate,
        }
    }
}

/// Whether the model covers `a` (device and texture memory).
pub fn covered(a: &Access) -> bool {
    matches!(a.space, "device" | "texture")
}

/// Bytes one execution moves through L1 (`uniform`: the divergence
/// analysis proved the address uniform, as the timing model's broadcast
/// rule reads it; a lane pattern `uniform` alone touches its one line).
fn l1_of(a: &Access, uniform: bool, g: &Geometry) -> f64 {
    if uniform && a.dir == "load" {
        a.bytes_per_lane as f64
    } else if let (Some(l), "device") = (a.lines_per_request, a.space) {
        l as f64 * g.line_bytes
    } else {
        a.bytes_per_lane as f64 * 32.0
    }
}

/// Resident SIMD-groups that read the lines of one request of `a` (1: its
/// own only).
fn sharers(a: &Access, g: &Geometry) -> f64 {
    if a.dir != "load" {
        return 1.0;
    }
    let mut k = a.reuse.simd_groups.max(1) as f64;
    // the other threadgroups of the core, taken as neighbours along x
    // (dispatched x first: an assumption)
    let resident_groups = (g.resident_simds / g.simds_per_threadgroup.max(1.0))
        .floor()
        .max(1.0);
    if a.reuse.grid_dimension == Some("x") {
        k *= resident_groups;
    } else if let Some(n) = (a.address.as_ref()).and_then(|p| row_sharers(p, g, resident_groups)) {
        k *= n;
    }
    k.clamp(1.0, g.resident_simds.max(1.0))
}

/// SIMD-groups whose requests read parts of the same cache lines, one
/// after another along x: the address `p` steps by `c` bytes per thread
/// along x (`c * lid.x`), so one SIMD-group's run of `min(width, 32)`
/// threads along x reads a `chunk = c * min(width, 32)` byte segment of a
/// row and the SIMD-group next along x the segment after it, `line /
/// chunk` of them per line (u8 lanes: 4 SIMD-groups per 128 B line; a
/// 16-wide threadgroup of 4-byte elements: 2 threadgroups). The next one
/// along x is in the same threadgroup while the threadgroup's row holds
/// it; past that it is the threadgroup one further along x, which starts
/// `c * width` bytes on only when its origin enters the address so
/// (through the threadgroup origin `Sr(1000)` or position `Sr(0)`, no
/// product with either), and only the resident threadgroups share
/// (dispatched along x first: the assumption of [`sharers`]). None when
/// that does not hold or nothing is shared.
fn row_sharers(p: &Poly, g: &Geometry, resident_groups: f64) -> Option<f64> {
    let origin = |s: Sym| {
        matches!(
            s,
            Sym::Sr(0) | Sym::Sr(1000) | Sym::Lid(0) | Sym::LidMod(0, _)
        )
    };
    let w = g.threadgroup_width.max(1) as i64;
    let (mut step, mut per_x) = (0i64, 0i64);
    for &((a, b), v) in &p.t {
        match (a, b) {
            (Sym::Sr(1000), None) => step = step.checked_add(v.checked_mul(w)?)?,
            (Sym::Sr(0), None) => step = step.checked_add(v)?,
            (Sym::Lid(0), None) => per_x = v,
            // a masked position wraps within the row: not one run
            (Sym::LidMod(0, _), None) => return None,
            (a, Some(b)) if origin(a) || origin(b) => return None,
            _ => {}
        }
    }
    let line = g.line_bytes as i64;
    let chunk = per_x.checked_mul(w.min(32))?;
    if per_x <= 0 || chunk >= line || (w > 32 && w % 32 != 0) {
        return None;
    }
    let n = (line / chunk) as f64;
    // SIMD-groups along x within one threadgroup's row
    let in_group = (w / 32).max(1) as f64;
    if n <= in_group {
        return Some(n);
    }
    (step == per_x.checked_mul(w)?).then(|| n.min(in_group * resident_groups))
}

/// The traffic of every covered access of `access` (`None` for the
/// others), in `access` order; `uniform[i]`: instruction `i`'s address is
/// proved uniform (empty: none).
pub fn traffic(access: &[Access], uniform: &[bool], g: &Geometry) -> Vec<Option<Traffic>> {
    let is_uniform = |a: &Access| uniform.get(a.index as usize).copied().unwrap_or(false);
    let l1: Vec<f64> = access
        .iter()
        .map(|a| {
            if covered(a) {
                l1_of(a, is_uniform(a), g)
            } else {
                0.0
            }
        })
        .collect();
    let share: Vec<f64> = access.iter().map(|a| sharers(a, g)).collect();
    // the reuse window of each loop (None: outside loops): the distinct
    // bytes all resident SIMD-groups bring in per iteration (a broadcast
    // moves one value but holds its whole line in L1)
    let mut window: std::collections::HashMap<Option<usize>, f64> = Default::default();
    for (i, a) in access.iter().enumerate() {
        if covered(a) {
            let held = if is_uniform(a) && a.dir == "load" {
                l1[i].max(g.line_bytes)
            } else {
                l1[i]
            };
            *window.entry(a.in_loop).or_default() += held * g.resident_simds.max(1.0) / share[i];
        }
    }
    let miss = g.hit_rate.map_or(1.0, |h| 1.0 - h.clamp(0.0, 1.0));
    access
        .iter()
        .enumerate()
        .map(|(i, a)| {
            if !covered(a) {
                return None;
            }
            let l1b = l1[i];
            let fits = window.get(&a.in_loop).copied().unwrap_or(0.0) <= g.l1_bytes_per_core;
            if a.dir != "load" || !fits {
                return Some(Traffic {
                    l1_bytes: l1b,
                    dram_bytes: l1b * miss,
                });
            }
            let new = match (a.in_loop, a.loop_stride) {
                (Some(_), Some(0)) => 0.0,
                (Some(_), Some(s)) => {
                    let lines = a.lines_per_request.unwrap_or(1).max(1) as f64;
                    l1b.min(s.unsigned_abs() as f64 * lines)
                }
                _ => l1b,
            };
            Some(Traffic {
                l1_bytes: l1b,
                dram_bytes: new / share[i] * miss,
            })
        })
        .collect()
}

/// Fills `l1_bytes`/`dram_bytes` of the covered accesses of `access`.
pub fn annotate(access: &mut [Access], uniform_loads: &[usize], g: &Geometry) {
    let n = access
        .iter()
        .map(|a| a.index as usize + 1)
        .max()
        .unwrap_or(0);
    let mut uniform = vec![false; n];
    for &i in uniform_loads {
        if let Some(u) = uniform.get_mut(i) {
            *u = true;
        }
    }
    let t = traffic(access, &uniform, g);
    for (a, t) in access.iter_mut().zip(t) {
        a.l1_bytes = t.map(|t| t.l1_bytes);
        a.dram_bytes = t.map(|t| t.dram_bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::Pattern;

    /// A device load of 4 B per lane touching `lines` lines, in loop 0
    /// (`stride`: its loop stride) or outside loops.
    fn load(index: u32, lines: u32, in_loop: bool, stride: Option<i64>) -> Access {
        let mut a = Access::unknown(index, "device", "load", 4);
        a.lane_pattern = Pattern::Contiguous;
        a.lane_stride = Some(4);
        a.loop_stride = stride;
        a.in_loop = in_loop.then_some(0);
        a.lines_per_request = Some(lines);
        a
    }

    /// 32 SIMD-groups resident, one per threadgroup, 128 B lines, 8 KB L1.
    fn geometry() -> Geometry {
        Geometry {
            line_bytes: 128.0,
            l1_bytes_per_core: 8192.0,
            resident_simds: 32.0,
            simds_per_threadgroup: 1.0,
            threadgroup_width: 32,
            hit_rate: None,
        }
    }

    fn one(a: Access, g: &Geometry) -> Traffic {
        traffic(&[a], &[], g)[0].expect("a device access is covered")
    }

    #[test]
    fn a_streaming_access_reaches_dram_whole() {
        // a new line per iteration (stride 128 B = the lines touched)
        let t = one(load(0, 1, true, Some(128)), &geometry());
        assert_eq!(t.l1_bytes, 128.0);
        assert_eq!(t.dram_bytes, t.l1_bytes);
        // outside loops, and with a stride not known
        let t = one(load(0, 2, false, None), &geometry());
        assert_eq!((t.l1_bytes, t.dram_bytes), (256.0, 256.0));
        let t = one(load(0, 1, true, None), &geometry());
        assert_eq!(t.dram_bytes, 128.0);
    }

    #[test]
    fn a_loop_invariant_access_reaches_dram_only_on_the_first_iteration() {
        let t = one(load(0, 1, true, Some(0)), &geometry());
        assert_eq!(t.l1_bytes, 128.0);
        assert_eq!(t.dram_bytes, 0.0);
        // a stride below the lines touched: |stride| new bytes per line
        let t = one(load(0, 2, true, Some(4)), &geometry());
        assert_eq!((t.l1_bytes, t.dram_bytes), (256.0, 8.0));
    }

    #[test]
    fn shared_lines_reach_dram_once_for_their_readers() {
        // along x: the other threadgroups resident on the core (32 of one
        // SIMD-group each) read the same line
        let mut a = load(0, 1, false, None);
        a.reuse.grid_dimension = Some("x");
        let t = one(a.clone(), &geometry());
        assert_eq!((t.l1_bytes, t.dram_bytes), (128.0, 4.0));
        // 4 SIMD-groups per threadgroup: 8 threadgroups resident; 4
        // SIMD-groups of one threadgroup share too: all 32 (the cap)
        let g4 = Geometry {
            simds_per_threadgroup: 4.0,
            ..geometry()
        };
        assert_eq!(one(a.clone(), &g4).dram_bytes, 128.0 / 8.0);
        a.reuse.simd_groups = 4;
        assert_eq!(one(a.clone(), &g4).dram_bytes, 128.0 / 32.0);
        // along y (not the dispatch order's first dimension): only the
        // threadgroup's own SIMD-groups
        a.reuse.grid_dimension = Some("y");
        assert_eq!(one(a, &g4).dram_bytes, 128.0 / 4.0);
    }

    /// `c * (Sr(1000) + lid.x)` (a grid position along x times `c`).
    fn along_x(c: i64) -> Poly {
        Poly {
            c: 0,
            t: vec![((Sym::Lid(0), None), c), ((Sym::Sr(1000), None), c)],
        }
    }

    #[test]
    fn parts_of_one_line_are_fetched_once_for_the_simd_groups_along_x() {
        // u8 lanes: a request reads 32 B, the next 3 SIMD-groups along x
        // (the same 128-wide threadgroup) the rest of the line
        let mut a = load(0, 1, false, None);
        a.bytes_per_lane = 1;
        a.address = Some(along_x(1));
        let g = Geometry {
            threadgroup_width: 128,
            simds_per_threadgroup: 4.0,
            ..geometry()
        };
        assert_eq!(one(a.clone(), &g).dram_bytes, 32.0);
        // 32 wide: the next 3 threadgroups along x
        assert_eq!(one(a.clone(), &geometry()).dram_bytes, 32.0);
        // a 16-wide row of 4-byte elements: half a line, 2 threadgroups
        let mut r = load(0, 2, false, None);
        r.address = Some(along_x(4));
        let g16 = Geometry {
            threadgroup_width: 16,
            simds_per_threadgroup: 4.0,
            ..geometry()
        };
        assert_eq!(one(r.clone(), &g16).dram_bytes, 128.0);
        // the threadgroup origin not entering so (a tile index `lid.x`
        // only): the next threadgroup reads the same part, not the next
        r.address = Some(Poly {
            c: 0,
            t: vec![((Sym::Lid(0), None), 4)],
        });
        assert_eq!(one(r.clone(), &g16).dram_bytes, 256.0);
        // 4-byte lanes over a 32-wide row fill their line: nothing shared
        a.bytes_per_lane = 4;
        a.address = Some(along_x(4));
        assert_eq!(one(a, &geometry()).dram_bytes, 128.0);
    }

    #[test]
    fn a_reuse_window_larger_than_l1_is_charged_again() {
        // 2 lines x 32 resident SIMD-groups = 8 KB: fits, invariant
        let fits = one(load(0, 2, true, Some(0)), &geometry());
        assert_eq!(fits.dram_bytes, 0.0);
        // 4 lines x 32 = 16 KB > 8 KB: evicted before the next iteration
        let big = one(load(0, 4, true, Some(0)), &geometry());
        assert_eq!((big.l1_bytes, big.dram_bytes), (512.0, 512.0));
        // the window is the loop's: a streaming neighbour evicts it too
        let t = traffic(
            &[load(0, 1, true, Some(0)), load(1, 2, true, Some(256))],
            &[],
            &geometry(),
        );
        assert_eq!(t[0].unwrap().dram_bytes, 128.0);
        // shared lines past the window are fetched by every reader
        let mut a = load(0, 4, false, None);
        a.reuse.simd_groups = 2;
        let g = Geometry {
            simds_per_threadgroup: 2.0,
            ..geometry()
        };
        // 512 B x 32 / 2 = 8 KB: fits, shared
        assert_eq!(one(a.clone(), &g).dram_bytes, 256.0);
        a.lines_per_request = Some(8);
        assert_eq!(one(a, &g).dram_bytes, 1024.0);
    }

    #[test]
    fn the_override_scales_the_first_touches_and_other_spaces_are_not_covered() {
        let g = Geometry {
            hit_rate: Some(0.25),
            ..geometry()
        };
        assert_eq!(one(load(0, 1, false, None), &g).dram_bytes, 96.0);
        let mut tg = load(0, 1, false, None);
        tg.space = "threadgroup";
        assert_eq!(traffic(&[tg], &[], &g), vec![None]);
        // a uniform-address load (the divergence analysis) is a broadcast
        let t = traffic(&[load(0, 1, false, None)], &[true], &geometry())[0].unwrap();
        assert_eq!((t.l1_bytes, t.dram_bytes), (4.0, 4.0));
    }

    /// Nothing the facts can hold panics (zero lines, huge strides, no
    /// resident SIMD-group).
    #[test]
    fn degenerate_facts_do_not_panic() {
        let g = Geometry {
            resident_simds: 0.0,
            simds_per_threadgroup: 0.0,
            ..geometry()
        };
        let mut a = load(0, 0, true, Some(i64::MIN));
        a.reuse.simd_groups = 0;
        a.reuse.grid_dimension = Some("x");
        let t = one(a, &g);
        assert!(t.dram_bytes.is_finite() && t.dram_bytes >= 0.0);
    }
}
