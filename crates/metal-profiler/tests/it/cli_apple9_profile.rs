//! `metal-profile --binary F --gpu g16g` (no `--disasm-only`): the
//! profile of Apple9 code in text, JSON and HTML (issue 28 item 4): counts,
//! framing, the loop, memory per loop, registers as a lower bound, wait
//! fields, no cycle figure; JSON valid against docs/schema.json.

use crate::common::{assert_prints, err, out, repo, run};

const EXAMPLE: [&str; 6] = [
    "--binary",
    "examples/apple9_loop.a9bin",
    "--gpu",
    "g16g",
    "--offset",
    "0x40",
];

fn with(extra: &[&'static str]) -> Vec<&'static str> {
    let mut v = EXAMPLE.to_vec();
    v.extend_from_slice(extra);
    v
}

/// Any `N cy` / `N cycles` figure.
fn has_cycle_figure(s: &str) -> bool {
    let w: Vec<&str> = s.split_whitespace().collect();
    w.windows(2).any(|p| {
        p[0].trim_start_matches('~')
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.')
            && !p[0].is_empty()
            && ["cy", "cycles", "cycle"].contains(&p[1].trim_end_matches([',', '.', ';', ')']))
    })
}

/// Asserts that `t` holds every string of `wants`.
fn assert_has_all(t: &str, wants: &[&str]) {
    for want in wants {
        assert!(t.contains(want), "missing {want:?} in\n{t}");
    }
}

#[test]
fn example_profile_text() {
    let o = run(&with(&[]));
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(err(&o).is_empty(), "{}", err(&o));
    let t = out(&o);
    assert_has_all(
        &t,
        &[
            "Apple9 (M3/M4/A18 Pro) code (G16G)",
            "timing: none",
            "instructions     9 (9 named, 0 unknown: 100.0% named)",
            "code bytes       66 (66 framed: 100.0%); walk ended by the stop at 0x3e",
            "1 backward branch",
            "register file 96 GPRs per thread",
            // the exec-mask instructions have no register operand
            // (docs/apple9-exec-mask.md): exact figures, no lower bound
            "highest          r4 (5 of 96 GPRs; 5 touched)",
            "peak live        5 GPRs (10 halves) at 0x16",
            "every instruction framed, named and its operands decoded",
            "0x2a  while  unknown   predicate 2",
            "Loop 0  0x8–0x2e  depth 1, 5 instructions",
            "device load 1×i32 = 4 B/lane, data r2, base u6_u7, index r1 << 2",
            "device store 2×i32 = 8 B/lane, data r0_r1",
            "device_load    wait group field g=5  (loop 0)",
            "push_exec",
            // the relative cost without a timing model: 5 loop instructions
            // × 16 against 4 outside (issue slots, labelled so)
            "hot region: loop at 0x8, 95.24% of issue slots (issue slots, not cycles; a loop runs its proved trip count, else 16 times, assumed)",
            "trip count: 16 assumed (not proved by the code)",
            "loop at 0x8         95.24%  5 instructions × 16 = 80 issue slots",
            "outside loops        4.76%  4 instructions × 1 = 4 issue slots",
        ],
    );
    assert!(!has_cycle_figure(&t), "{t}");
    // --show-disasm: the listing after the report
    let o = run(&with(&["--show-disasm"]));
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let listing = std::fs::read_to_string(repo().join("examples/apple9_loop.txt")).unwrap();
    assert!(
        out(&o).ends_with(&format!("Disassembly (Apple9)\n{listing}")),
        "{}",
        out(&o)
    );
    // the preamble alone (offset 0): one stop, no loop
    let o = run(&["--binary", "examples/apple9_loop.a9bin", "--gpu", "g16g"]);
    assert_prints(&o, "instructions     1 (1 named");
}

#[test]
fn example_profile_json_and_html() {
    let o = run(&with(&["--format", "json"]));
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let v: serde_json::Value = serde_json::from_str(&out(&o)).unwrap();
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join("docs/schema.json")).unwrap())
            .unwrap();
    let val = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = val.iter_errors(&v).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let k = &v["kernels"][0];
    assert_eq!(k["timing"]["model"], serde_json::Value::Null);
    // every cycle-bearing key kept, with null (issue 36: one record shape)
    assert!(k["cycles"].is_null() && k["total_cycles"].is_null() && k["bound_by"].is_null());
    assert_eq!(k["gpu_name"], "G16G (M4)");
    assert_eq!(k["loops"][0]["start"], 8);
    assert_eq!(k["loops"][0]["end"], 0x2e);
    assert_eq!(k["loops"][0]["memory"], serde_json::json!([8, 0x1c]));
    assert_eq!(k["registers"]["lower_bound"], false);
    assert_eq!(k["registers"]["file_gprs"], 96);
    // r1 has no definition in the example (a hand-made loop body)
    assert_eq!(k["memory"][0]["lane_pattern"], "unknown");
    assert!(k["memory"][0]["lane_pattern_reason"]
        .as_str()
        .unwrap()
        .contains("no definition"));
    // one row per instruction, with the table's class and cost key
    let rows = k["instructions_detail"].as_array().unwrap();
    assert_eq!(rows.len(), 9);
    assert_eq!(rows[2]["offset"], 8);
    assert_eq!(rows[2]["class"], "load");
    assert_eq!(rows[2]["cost_key"], "device_load");
    assert_eq!(rows[2]["loop"], 0);
    assert_eq!(rows[3]["cost_key"], "fadd32");
    assert_eq!(rows[2]["cycles"], serde_json::Value::Null);
    assert_eq!(k["occupancy"]["threads"], serde_json::Value::Null);
    assert!(k["occupancy"]["reason"]
        .as_str()
        .unwrap()
        .contains("Dynamic Caching"));
    assert_eq!(k["regions"][0]["loop"], 0);
    assert_eq!(k["regions"][0]["issue_slots"], 80);
    assert_eq!(k["regions"][1]["loop"], serde_json::Value::Null);
    let total: f64 = k["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["share_pct"].as_f64().unwrap())
        .sum();
    assert!((total - 100.0).abs() < 0.02, "{total}");
    let o = run(&with(&["--format", "html"]));
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let h = out(&o);
    assert!(h.starts_with("<!DOCTYPE html>") && h.contains("Loop 0") && h.contains("Branches ("));
    assert!(!has_cycle_figure(&h));
}

/// `--format dot`: the kernel's CFG as one graph (blocks with their
/// address ranges and instruction counts, the loop as a cluster, no cycle
/// figure), which Graphviz renders.
#[test]
fn example_profile_dot() {
    let o = run(&with(&["--format", "dot"]));
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let d = out(&o);
    assert!(
        d.starts_with("digraph \"examples/apple9_loop.a9bin\" {"),
        "{d}"
    );
    assert_eq!(d.matches("digraph").count(), 1, "{d}");
    // the record's blocks: 0x0–0x4 (2), the loop 0x8–0x2e (5), 0x38–0x3e (2)
    assert_has_all(
        &d,
        &[
            "b0 [label=\"B0 0x0–0x4\\n2 insn\"",
            "subgraph cluster_loop0 {",
            "loop 0 0x8–0x2e (depth 1, 5 insn)",
            "b1 [label=\"B1 0x8–0x2e\\n5 insn\"",
            "b2 [label=\"B2 0x38–0x3e\\n2 insn\"",
            "b1 -> b1 [color=\"#c0262d\", style=dashed",
            "b1 -> b2 [",
        ],
    );
    assert!(!has_cycle_figure(&d), "{d}");
    // the block and loop figures are the JSON record's
    let v: serde_json::Value =
        serde_json::from_str(&out(&run(&with(&["--format", "json"])))).unwrap();
    let blocks = v["kernels"][0]["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 3);
    assert_eq!(blocks[1]["loop"], 0);
    assert_eq!(blocks[1]["instructions"], 5);
    if !crate::graphviz::have_dot() {
        return;
    }
    let svg = String::from_utf8(crate::graphviz::graphviz("svg", &d)).unwrap();
    assert!(svg.contains("<svg") && svg.contains("B1 0x8–0x2e"), "{svg}");
    assert_eq!(svg.matches("class=\"cluster\"").count(), 1, "{svg}");
}

/// Framing that stops and unknown encodings: the profile covers what was
/// framed, warns (exit 4, --allow-unknown 0) and says so in the record.
#[test]
fn framing_stop_profile_warns() {
    let t = crate::common::tmp("apple9-profile");
    let f = t.0.join("a.a9bin");
    // mov_imm, then an iadd key no source sizes (0x31f), then a stop
    std::fs::write(&f, [0x04, 0x00, 0x1f, 0x03, 0, 0, 0, 0, 0x0e, 0, 0, 0]).unwrap();
    let p = f.to_str().unwrap();
    let o = run(&["--binary", p, "--gpu", "g16g", "--format", "json"]);
    assert_eq!(o.status.code(), Some(4), "{}", err(&o));
    assert!(err(&o).contains("framing stops at 0x2"), "{}", err(&o));
    let v: serde_json::Value = serde_json::from_str(&out(&o)).unwrap();
    let k = &v["kernels"][0];
    assert_eq!(k["framing"]["stopped"]["offset"], 2);
    assert_eq!(k["instructions"], 1);
    assert_eq!(k["registers"]["lower_bound"], true);
    let o = run(&["--binary", p, "--gpu", "g16g", "--allow-unknown"]);
    assert_prints(&o, "code from 0x2 on: not framed");
}

/// Issue 36, must-show 1: an Apple9 kernel's JSON has every top-level key
/// an M1 kernel's has, in the same order, and the keys both records hold
/// as objects have the M1 object's keys (the Apple9 record adds its own).
#[test]
fn apple9_record_has_every_key_of_the_m1_record() {
    let keys =
        |v: &serde_json::Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    let a9 = run(&with(&["--format", "json"]));
    let a9: serde_json::Value = serde_json::from_str(&out(&a9)).unwrap();
    let m1 = run(&[
        "examples/kernels.archive",
        "-f",
        "matmul_naive",
        "--format",
        "json",
    ]);
    assert_eq!(m1.status.code(), Some(0), "{}", err(&m1));
    let m1: serde_json::Value = serde_json::from_str(&out(&m1)).unwrap();
    let (a, m) = (&a9["kernels"][0], &m1["kernels"][0]);
    let (ka, km) = (keys(a), keys(m));
    assert_eq!(&ka[..km.len()], &km[..], "the M1 keys first, in order");
    for k in &km {
        if let (Some(x), Some(y)) = (a[k].as_object(), m[k].as_object()) {
            for f in y.keys() {
                assert!(x.contains_key(f), "{k}.{f} missing");
            }
        }
    }
    for (k, item) in [("loops", 0), ("functions", 0)] {
        let (x, y) = (&a[k][item], &m[k][item]);
        for f in keys(y).iter().filter(|f| f.as_str() != "timing") {
            assert!(x.get(f).is_some(), "{k}[].{f} missing");
        }
    }
    assert!(a["functions"][0]["branches"]
        .as_array()
        .is_some_and(|b| !b.is_empty()));
}

/// A loop whose exit test compares the grid position (the fuzz seed
/// `exec_loop_pred.bin`, built from the documented encodings after a 4-byte
/// base): every view carries the divergent verdict and the advice.
#[test]
fn divergent_loop_in_every_view() {
    let seed = "fuzz/corpus/apple9/exec_loop_pred.bin";
    let base = ["--binary", seed, "--gpu", "g16g", "--offset", "4"];
    let o = run(&base);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_has_all(
        &out(&o),
        &[
            "Branches (from the code table: 1 uniform, 2 divergent, 0 unknown)",
            "loop   divergent its exit test at 0x12",
            "🔴 Loop at 0x8 has a divergent exit",
        ],
    );
    let j = run(&[&base[..], &["--format", "json"]].concat());
    let v: serde_json::Value = serde_json::from_str(&out(&j)).unwrap();
    let k = &v["kernels"][0];
    assert_eq!(k["suggestions"][0]["rule"], "divergent-loop-exit");
    assert_eq!(k["divergence"]["loop_divergent"], 1);
    let d = run(&[&base[..], &["--format", "dot"]].concat());
    assert!(out(&d).contains("◆ divergent branch"), "{}", out(&d));
    let s = run(&[&base[..], &["--format", "sarif"]].concat());
    let s: serde_json::Value = serde_json::from_str(&out(&s)).unwrap();
    assert_eq!(s["runs"][0]["results"][0]["ruleId"], "divergent-loop-exit");
}
