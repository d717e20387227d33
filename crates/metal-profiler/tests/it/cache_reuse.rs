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
        assert!(
            fact.contains("0x52 (re-read by every thread along y"),
            "{fact}"
        );
    }
    // the text report of the README's first command gives it
    let t = ok_out(&[&a, "-f", "matmul_naive", "--color", "never"]);
    assert!(t.contains("Tile the data into threadgroup memory"), "{t}");
}
