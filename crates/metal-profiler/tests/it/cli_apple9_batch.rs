//! `batch` and `diff` over archives holding Apple9 code (a G15G slice,
//! `--gpu g15g`): a row per kernel with its counts and registers and `-`
//! for the figures only a timing model gives (table, CSV), the kernels'
//! `untimed_kernel` records in the JSON document (valid against
//! docs/schema.json), and `diff` comparing instructions, registers, code
//! bytes and loops and saying cycles are not compared.

use crate::common::*;
use serde_json::Value;

/// Two nested loops around a device load (6 instructions, 50 bytes;
/// testdata/apple9-cases/NOTE.md).
fn nested_kernel() -> Vec<u8> {
    std::fs::read(repo().join("testdata/apple9-cases/nested_loops.a9bin")).unwrap()
}

fn sides(tag: &str) -> (Tmp, String, String) {
    let t = tmp(tag);
    let old = t.0.join("old.archive");
    let new = t.0.join("new.archive");
    std::fs::write(
        &old,
        g15_archive(&[
            ("loop_a", apple9_example_kernel()),
            ("loop_b", apple9_example_kernel()),
        ]),
    )
    .unwrap();
    std::fs::write(
        &new,
        g15_archive(&[
            ("loop_a", nested_kernel()),
            ("loop_b", apple9_example_kernel()),
        ]),
    )
    .unwrap();
    let (o, n) = (
        old.to_str().unwrap().to_string(),
        new.to_str().unwrap().to_string(),
    );
    (t, o, n)
}

/// Asserts that `v` is valid against docs/schema.json's `def` (`#`: the
/// whole schema).
fn assert_valid(v: &Value, def: &str) {
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join("docs/schema.json")).unwrap())
            .unwrap();
    let schema = match def {
        "#" => s,
        _ => serde_json::json!({ "$defs": s["$defs"], "$ref": def }),
    };
    let val = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = val.iter_errors(v).map(|e| e.to_string()).take(3).collect();
    assert!(errors.is_empty(), "{errors:?}");
}

/// The index of `loop_a` in the document's `kernels`.
fn loop_a_index(v: &Value) -> usize {
    let names: Vec<&str> = v["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|k| k["name"].as_str())
        .collect();
    names.iter().position(|n| *n == "loop_a").unwrap()
}

#[test]
fn batch_rows_of_apple9_kernels() {
    let (_t, old, _) = sides("apple9-batch");
    let o = run(&["batch", &old, "--gpu", "g15g"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let t = out(&o);
    let row = t
        .lines()
        .find(|l| l.starts_with("loop_a"))
        .unwrap_or_else(|| panic!("{t}"));
    let cols: Vec<&str> = row.split_whitespace().collect();
    // kernel, source, insns, regs (r4: 5 GPRs), occupancy, cycles, bound, top
    assert_eq!(cols[2..], ["9", "5", "-", "-", "-", "-"], "{t}");
    assert!(t.contains("2 kernel(s) from 1 archive(s)"), "{t}");
    // CSV: the priced figures are `-` too
    let o = run(&["batch", &old, "--gpu", "g15g", "--format", "csv"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let csv = out(&o);
    let row = csv.lines().find(|l| l.starts_with("loop_a,")).unwrap();
    let f: Vec<&str> = row.split(',').collect();
    assert_eq!(
        f[2..],
        ["9", "10", "-", "-", "-", "-", "-", "-", ""],
        "{csv}"
    );
    // JSON: each kernel's untimed record with its source, schema-valid
    let o = run(&["batch", &old, "--gpu", "g15g", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let v: Value = serde_json::from_str(&out(&o)).unwrap();
    assert_valid(&v, "#");
    let k = &v["kernels"][0];
    assert_eq!(k["name"], "loop_a");
    assert_eq!(k["source"], old.as_str());
    assert_eq!(k["timing"]["model"], Value::Null);
    assert!(k["total_cycles"].is_null());
    assert_eq!(
        (k["instructions"].as_u64(), k["code_bytes"].as_u64()),
        (Some(9), Some(66))
    );
    assert_eq!(v["summary"]["kernels"], 2);
    // one HTML page of a batch is the timed report's: refused in one line
    let o = run(&["batch", &old, "--gpu", "g15g", "--format", "html"]);
    assert_one_line_error(&o, 2, "batch --format html: Apple9 kernels");
}

#[test]
fn diff_compares_apple9_kernels_on_their_figures() {
    let (t, old, new) = sides("apple9-diff");
    let o = run(&["diff", &old, &new, "--gpu", "g15g"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let s = out(&o);
    assert!(
        s.contains("2 kernel(s) compared: 1 changed, 1 unchanged"),
        "{s}"
    );
    let row = s
        .lines()
        .find(|l| l.starts_with("loop_a"))
        .unwrap_or_else(|| panic!("{s}"));
    // cycles and occupancy `-`; registers 5 → 5; instructions 9 → 6
    assert!(
        row.contains("9 → 6 (-33.3%)") && row.contains("- / -"),
        "{row}"
    );
    assert!(
        s.contains("cycles, occupancy, spills and fills are not compared"),
        "{s}"
    );
    // (`cell`'s sign: a growth prints without `+`, as for registers)
    assert!(
        s.contains("loop_a: code bytes 66 → 50 (-16), loops 1 → 2 (1)"),
        "{s}"
    );
    // gates on priced figures never trip on them; on instructions they do
    let o = run(&["diff", &old, &new, "--gpu", "g15g", "--fail-on", "cycles"]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    let o = run(&[
        "diff",
        &new,
        &old,
        "--gpu",
        "g15g",
        "--fail-on",
        "instructions",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}{}", out(&o), err(&o));
    // the same comparison from batch JSON documents, and as JSON
    let docs: Vec<String> = [&old, &new]
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let o = run(&["batch", a, "--gpu", "g15g", "--format", "json"]);
            let p = t.0.join(format!("{i}.json"));
            std::fs::write(&p, o.stdout).unwrap();
            p.to_str().unwrap().to_string()
        })
        .collect();
    let o = run(&["diff", &docs[0], &docs[1], "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let v: Value = serde_json::from_str(&out(&o)).unwrap();
    let k = &v["kernels"][loop_a_index(&v)];
    assert_eq!(k["status"], "changed");
    assert_eq!(k["old"]["cycles"], Value::Null);
    assert_eq!(k["cycles_change_percent"], Value::Null);
    assert_eq!(
        (
            k["old"]["code_bytes"].as_u64(),
            k["new"]["code_bytes"].as_u64()
        ),
        (Some(66), Some(50))
    );
    assert_eq!(
        (k["old"]["loops"].as_u64(), k["new"]["loops"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(k["new"]["instructions"], 6);
    assert_valid(&v, "#/$defs/diff_document");
}
