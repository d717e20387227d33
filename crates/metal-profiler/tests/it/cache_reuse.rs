//! Shape-independent reuse (issue 35 item 6, must-show 3): an address that
//! does not depend on a thread-position dimension the kernel reads is
//! re-read by every thread along it, whatever the threadgroup shape, and
//! the tiling advice rests on that fact by default.

use crate::common::*;
use serde_json::Value;

fn access_at(v: &Value, offset: u64) -> Value {
    v["kernels"][0]["instructions_detail"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["offset"] == offset)
        .and_then(|d| d.get("access").cloned())
        .unwrap_or_else(|| panic!("no access at 0x{offset:x}"))
}

fn tiling(v: &Value) -> Vec<Value> {
    v["kernels"][0]["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["rule"] == "tile-global-loads")
        .cloned()
        .collect()
}

/// `matmul_naive`: B (`b[k*N + col]`, 0x52) does not depend on the row
/// (gid.y), A (`a[row*K + k]`, 0x42) not on the column; the store
/// (`c[row*N + col]`) depends on both. The README's first command advises
/// tiling with B's fact, at the default 32x1x1 shape and at 16x16x1.
#[test]
fn matmul_naive_tiles_by_default_on_the_reuse_fact() {
    let a = path("examples/kernels.archive");
    for shape in [None, Some("16x16x1")] {
        let mut args = vec![a.as_str(), "-f", "matmul_naive"];
        if let Some(s) = shape {
            args.extend(["--threadgroup", s]);
        }
        let v = json(&args);
        assert_eq!(
            access_at(&v, 0x52)["reuse"]["grid_dimension"],
            "y",
            "{shape:?}"
        );
        assert_eq!(
            access_at(&v, 0x42)["reuse"]["grid_dimension"],
            "x",
            "{shape:?}"
        );
        assert!(access_at(&v, 0x82)["reuse"]["grid_dimension"].is_null());
        let t = tiling(&v);
        assert_eq!(t.len(), 1, "{shape:?}: {t:?}");
        let fact = t[0]["fact"].as_str().unwrap();
        assert!(fact.contains("0x52 (re-read by"), "{fact}");
        assert!(fact.contains("every thread along y"), "{fact}");
    }
    // the text report of the README's first command gives it
    let t = ok_out(&[&a, "-f", "matmul_naive", "--color", "never"]);
    assert!(t.contains("Tile the data into threadgroup memory"), "{t}");
}

/// The DRAM bound charges the lines the SIMD-groups of a threadgroup share
/// once (the cache model, issue 35): at 16x16x1 B's request (0x52,
/// independent of the row) is read by all 8 SIMD-groups, A's (0x42, one
/// row pair per SIMD-group) by one; at 32x1x1 nothing is shared within the
/// threadgroup. A moves 4 B per iteration (loop stride 4 B: `|stride|` new
/// bytes per line) and, independent of the column (grid dimension x), is
/// shared by the resident threadgroups of the core (32 resident
/// SIMD-groups at 1024 threads / the threadgroup's); B's stride is a
/// runtime value: a whole first touch per line, but at 16x16x1 its 16-wide
/// row of 4-byte elements is half a line whose other half the threadgroup
/// next along x reads (the cache model's parts of one line): 2 more
/// sharers. With `--l1-hit-rate 0.25`
/// DRAM gets 0.75 of the first touches. The loop's `device_bandwidth`
/// component is those bytes over the DRAM bytes per scheduler.
#[test]
fn shared_lines_reach_dram_once_per_threadgroup() {
    let a = path("examples/kernels.archive");
    for (shape, b_sharers, b_rows, tg_simds) in [("16x16x1", 8, 2.0, 8.0), ("32x1x1", 1, 1.0, 1.0)]
    {
        let v = json(&[
            &a,
            "-f",
            "matmul_naive",
            "--threadgroup",
            shape,
            "--l1-hit-rate",
            "0.25",
        ]);
        let k = &v["kernels"][0];
        assert_eq!(
            access_at(&v, 0x52)["reuse"]["simd_groups"],
            b_sharers,
            "{shape}"
        );
        assert_eq!(access_at(&v, 0x42)["reuse"]["simd_groups"], 1, "{shape}");
        assert_eq!(access_at(&v, 0x42)["reuse"]["grid_dimension"], "x");
        assert_eq!(access_at(&v, 0x42)["loop_stride"], 4);
        let mem = &k["model"]["mem"];
        let line = mem["cache_line_bytes"].as_f64().unwrap();
        let dram = mem["dram_bytes_per_cycle_per_core"].as_f64().unwrap() / 4.0;
        let resident_tgs = 32.0 / tg_simds;
        let b = access_at(&v, 0x52);
        let b_l1 = b["lines_per_request"].as_f64().unwrap() * line;
        let b_dram = b_l1 / (b_sharers as f64 * b_rows) * 0.75;
        let x = access_at(&v, 0x42);
        let a_lines = x["lines_per_request"].as_f64().unwrap();
        // (A's address is uniform over a 32x1x1 SIMD-group but depends on
        // the thread's y: not a divergence-uniform broadcast, its lines)
        let a_l1 = a_lines * line;
        let a_dram = (4.0 * a_lines).min(a_l1) / resident_tgs * 0.75;
        for (acc, l1, d) in [(&b, b_l1, b_dram), (&x, a_l1, a_dram)] {
            assert_eq!(acc["l1_bytes"].as_f64().unwrap(), l1, "{shape}: {acc}");
            let got = acc["dram_bytes"].as_f64().unwrap();
            assert!((got - d).abs() < 1e-9, "{shape}: {got} vs {d}");
        }
        let want = (a_dram + b_dram) / dram;
        let got = k["loops"][0]["bound"]["components"]["device_bandwidth"]
            .as_f64()
            .unwrap();
        assert!((got - want).abs() < 0.01 * want, "{shape}: {got} vs {want}");
    }
}

/// `matmul_tiled_32x8` refills its tiles every iteration (threadgroup
/// stores and a barrier in the loop): its tile reads have loop stride 0
/// but are not re-read across iterations, and threadgroup reads have no
/// grid dimension (another threadgroup reads its own tile).
#[test]
fn refilled_tiles_are_not_reused_across_iterations() {
    let b = path("testdata/mesa/matmul_tiled_32x8/matmul_tiled_32x8.bin");
    let v = json(&["--binary", &b]);
    let mut tile_reads = 0;
    for d in v["kernels"][0]["instructions_detail"].as_array().unwrap() {
        let Some(a) = d.get("access") else { continue };
        if d["mnemonic"] == "threadgroup_load" && a["loop_stride"] == 0 {
            tile_reads += 1;
            assert_eq!(a["reuse"]["iterations"], false, "{d}");
            assert!(a["reuse"]["grid_dimension"].is_null(), "{d}");
            assert!(a["reason"].as_str().unwrap().contains("refills"), "{d}");
        }
    }
    assert!(tile_reads > 0);
}
