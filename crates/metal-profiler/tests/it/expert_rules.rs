//! The rules and bounds of issue 35 items 4-5 on Mesa corpus kernels whose
//! sources show the fact (`shared/corpus/mesa/<kernel>/<kernel>.comp`),
//! and on kernels where it must stay silent.

use crate::common;
use serde_json::Value;

fn kernel(k: &str) -> Value {
    let bin = common::repo()
        .join("testdata/mesa")
        .join(k)
        .join(format!("{k}.bin"));
    let doc = common::json(&["--binary", bin.to_str().unwrap()]);
    doc["kernels"][0].clone()
}

fn suggestion<'a>(k: &'a Value, rule: &str) -> Option<&'a Value> {
    k["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["rule"] == rule)
}

fn fig(s: &Value, name: &str) -> f64 {
    s["figures"][name]
        .as_f64()
        .unwrap_or_else(|| panic!("no figure {name} in {s}"))
}

/// The softmax's two trees of 8 steps (source: `for (w = 128; w > 0; w >>= 1)`
/// twice, 19 `barrier()` calls), the scan's 8 steps and 9 barriers, the
/// unrolled 64-thread tree's 5 steps and 6 barriers.
#[test]
fn subgroup_reduction_counts_the_steps_and_barriers() {
    for (k, steps, barriers) in [
        ("math_softmax_row", 16.0, 19.0),
        ("scan_hillis_steele_256", 8.0, 9.0),
        ("reduce_max_unrolled_64", 5.0, 6.0),
        ("matvec_shared_reduce", 7.0, 8.0),
    ] {
        let j = kernel(k);
        let s = suggestion(&j, "subgroup-reduction").unwrap_or_else(|| panic!("{k}: silent"));
        assert_eq!(fig(s, "steps"), steps, "{k}");
        assert_eq!(fig(s, "barriers"), barriers, "{k}");
        assert!(!s["fact"].as_str().unwrap().is_empty(), "{k}");
    }
    // a tile fill then reads, a privatised histogram, SIMD-group reductions
    for k in [
        "stencil1d_shared_halo",
        "hist_shared_atomic_1024",
        "reduce_subgroup_minmax",
        "matmul_tiled_32x8",
    ] {
        assert!(
            suggestion(&kernel(k), "subgroup-reduction").is_none(),
            "{k}"
        );
    }
}

/// `x[b + i]` for i < 8, loaded and stored one float at a time: two runs of
/// 8 adjacent 4-byte accesses, 4 float4 accesses in all.
#[test]
fn vectorise_loads_on_adjacent_scalar_accesses_only() {
    let j = kernel("cf_bubble_sort8");
    let s = suggestion(&j, "vectorise-loads").expect("bubble sort: vectorise-loads");
    assert_eq!(fig(s, "accesses"), 16.0);
    assert_eq!(fig(s, "runs"), 2.0);
    assert_eq!(fig(s, "wide_accesses"), 4.0);
    assert_eq!(j["suggestions"][0]["rule"], "vectorise-loads");
    // one access per thread, or already vec4 accesses
    for k in [
        "ew_relu_f32",
        "matmul_naive_16x16",
        "regpressure_gemm8x8_wg640",
        "cf_loop_const4_unrolled",
        // the 7-point stencil's x taps `u[i-1]`, `u[i]`, `u[i+1]`: adjacent
        // in each thread, but contiguous across the lanes, so the requests
        // already move whole lines (a wider access would overlap the
        // neighbours'; the expert label says nothing to advise)
        "laplacian3d_7pt",
    ] {
        assert!(suggestion(&kernel(k), "vectorise-loads").is_none(), "{k}");
    }
}

/// The 32x8 tiled matmul's loop: 32 x (1 + 4) threadgroup loads for 32 x 4
/// FMAs (source: `Bs[k][tx]` and `As[ty * 4 + r][k]` for r < 4).
#[test]
fn register_blocking_on_the_tiled_matmul_only() {
    let j = kernel("matmul_tiled_32x8");
    let s = suggestion(&j, "register-blocking").expect("tiled matmul: register-blocking");
    assert_eq!(fig(s, "threadgroup_loads"), 160.0);
    assert_eq!(fig(s, "fmas"), 128.0);
    assert_eq!(j["suggestions"][0]["rule"], "register-blocking");
    // not tiled (tile first), or no multiply-adds on the tile
    for k in [
        "matmul_naive_16x16",
        "stencil1d_shared_halo",
        "math_softmax_row",
    ] {
        assert!(suggestion(&kernel(k), "register-blocking").is_none(), "{k}");
    }
}

/// Barriers are a bound of their own: the softmax's 19 barriers bound it;
/// a kernel without barriers has a zero barrier component; no corpus
/// kernel has an atomic whose contention is proved, so the atomic
/// component is zero on them (silent without the fact).
#[test]
fn barriers_bound_the_softmax() {
    let j = kernel("math_softmax_row");
    assert_eq!(j["bound_by"], "barrier");
    let r = &j["regions"][0];
    assert_eq!(r["by"], "barrier");
    for k in ["ew_relu_f32", "matmul_naive_16x16"] {
        let j = kernel(k);
        assert_ne!(j["bound_by"], "barrier", "{k}");
        for l in j["loops"].as_array().unwrap() {
            let c = &l["body"]["bound"]["components"];
            assert_eq!(c["barrier"].as_f64(), Some(0.0), "{k}");
            assert_eq!(c["atomic"].as_f64(), Some(0.0), "{k}");
        }
    }
}

/// No hedged advice (issue 35 item 6): no message of any testdata kernel
/// advises under a condition the code does not show ("if the divisor is
/// reused", "if the precision allows", "if the threads ... share it").
#[test]
fn no_suggestion_is_hedged() {
    let mut n = 0;
    for args in crate::cli_record::every_kernel() {
        let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
        a.extend(["--format", "json"]);
        let o = common::run(&a);
        if !o.status.success() {
            continue;
        }
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        for k in doc["kernels"].as_array().unwrap() {
            for s in k["suggestions"].as_array().unwrap() {
                n += 1;
                let m = s["message"].as_str().unwrap();
                let lower = m.to_lowercase();
                assert!(
                    !lower.contains(", if ")
                        && !lower.contains("; if ")
                        && !lower.starts_with("if "),
                    "{args:?}: hedged: {m}"
                );
            }
        }
    }
    assert!(n >= 20, "{n} suggestions");
}
