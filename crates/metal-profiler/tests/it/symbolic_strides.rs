//! Symbolic strides (issue 35 item 5): a lane or loop stride that is a
//! runtime uniform times a known factor is carried as an expression
//! (`access.lane_stride_expr` `"32*u16"`, `loop_stride_expr`), with the
//! lines a SIMD-group request touches for any value of a cache line or
//! more, and the coalescing advice cites it. Checked against the hand
//! labels' `*_stride_expr` (testdata/access_labels: the source's names, e.g.
//! `"32*K"`): where the profiler gives an expression its factor is the
//! label's; a label whose stride has two runtime factors (`4*n*n`) is
//! beyond the degree-2 address polynomials and must stay unknown or
//! without an expression.

use crate::access_labels::{label_files, shared_input};
use crate::common;
use serde_json::Value;

/// The numeric factor and the count of runtime factors of `"32*K"`-style
/// expressions.
fn factors(e: &str) -> (i64, usize) {
    let mut parts = e.split('*');
    let c = parts.next().and_then(|c| c.parse().ok()).unwrap_or(1);
    (c, parts.count())
}

/// Every `shared:` labelled input with an expression label: (kernel, the
/// access rows of the profile by offset, the labels).
fn labelled() -> Vec<(String, Value, Vec<Value>)> {
    let mut out = Vec::new();
    for f in label_files() {
        let label: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let acc: Vec<Value> = label["accesses"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a.get("lane_stride_expr").is_some() || a.get("loop_stride_expr").is_some())
            .cloned()
            .collect();
        let Some(rel) = label["input"]
            .as_str()
            .and_then(|i| i.strip_prefix("shared:"))
        else {
            continue;
        };
        if acc.is_empty() {
            continue;
        }
        let Some(file) = shared_input(rel) else {
            continue;
        };
        let mut args = vec!["--binary".to_string(), file.display().to_string()];
        let recorded = file
            .parent()
            .is_some_and(|d| d.join("layout.json").is_file());
        if let (false, Some(tg)) = (recorded, label["threadgroup"].as_array()) {
            let dims: Vec<String> = tg.iter().map(|v| v.to_string()).collect();
            args.extend(["--threadgroup".to_string(), dims.join("x")]);
        }
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let doc = common::json(&a);
        let name = f.file_stem().unwrap().to_string_lossy().into_owned();
        out.push((name, doc, acc));
    }
    out
}

fn access_at(doc: &Value, off: u64) -> Option<&Value> {
    doc["kernels"][0]["instructions_detail"]
        .as_array()?
        .iter()
        .find(|r| r["offset"] == off)
        .and_then(|r| r.get("access"))
}

#[test]
fn symbolic_strides_agree_with_the_labels() {
    let (mut given, mut agree, mut wrong) = (0, 0, Vec::new());
    let mut lane_labels = 0;
    for (name, doc, labels) in labelled() {
        for l in labels {
            let off = l["offset"].as_str().unwrap().trim_start_matches("0x");
            let off = u64::from_str_radix(off, 16).unwrap();
            let Some(acc) = access_at(&doc, off) else {
                continue;
            };
            for key in ["lane_stride_expr", "loop_stride_expr"] {
                let Some(want) = l[key].as_str() else {
                    continue;
                };
                if key == "lane_stride_expr" {
                    lane_labels += 1;
                }
                let Some(got) = acc[key].as_str() else {
                    continue;
                };
                given += 1;
                let (wc, wn) = factors(want);
                let (gc, gn) = factors(got);
                if wn == 1 && gn == 1 && wc == gc {
                    agree += 1;
                } else {
                    wrong.push(format!("{name} 0x{off:x} {key}: {got}, label {want}"));
                }
                // a runtime lane stride is no constant stride
                if key == "lane_stride_expr" {
                    assert!(acc["lane_stride"].is_null(), "{name} 0x{off:x}: {acc}");
                }
            }
        }
    }
    eprintln!("symbolic strides: {given} given, {agree} agree with the labels ({lane_labels} lane-stride labels)");
    assert!(
        wrong.is_empty(),
        "expressions that differ from the labels:\n{}",
        wrong.join("\n")
    );
    // the register-blocked GEMMs' A rows (32*K and 48*K bytes between lanes)
    assert!(given >= 10, "{given} expressions given");
}

/// `regpressure_gemm8x8_wg640`: each thread reads its own row of A
/// (`a[(t*K + k)*2 + c]`, vec4): lanes `32*K` bytes apart, K the push
/// constant the preamble puts in u16. For K >= 4 every lane reads its own
/// line: 32 lines per request where a contiguous vec4 request needs 4.
#[test]
fn runtime_lane_stride_gets_its_lines_and_the_coalescing_advice() {
    let bin = common::repo()
        .join("testdata/mesa/regpressure_gemm8x8_wg640/regpressure_gemm8x8_wg640.bin");
    let doc = common::json(&["--binary", bin.to_str().unwrap()]);
    let a = access_at(&doc, 0x1fc).expect("the A load at 0x1fc");
    assert_eq!(a["lane_pattern"], "strided");
    assert_eq!(a["lane_stride_expr"], "32*u16");
    assert_eq!(a["lines_per_request_if_wide"], 32);
    assert_eq!(a["wide_from"], 4, "32*K >= 128 B from K = 4");
    let s: Vec<&Value> = doc["kernels"][0]["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["rule"] == "coalesce-strided-loads")
        .collect();
    assert_eq!(s.len(), 1, "{s:?}");
    let msg = s[0]["message"].as_str().unwrap();
    assert!(msg.contains("0x1fc (lanes 32*u16 B apart)"), "{msg}");
    assert!(
        msg.contains("for any u16 >= 4 (a stride of 128 B or more) each lane reads its own line: 32 lines per request"),
        "{msg}"
    );
    assert!(s[0]["fact"]
        .as_str()
        .unwrap()
        .contains("runtime stride (32*u16)"));
    // the text listing's mark and the Memory section print the same fields
    let text = common::ok_out(&["--binary", bin.to_str().unwrap(), "--color", "never"]);
    assert!(
        text.contains("▤ strided 32*u16 B, 32 lines if u16 >= 4"),
        "{text}"
    );
}
