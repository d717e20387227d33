//! `metal-profile batch` and `metal-profile diff` (issue 15) on archives
//! built in code around real Mesa-compiled G13 kernels (testdata/mesa):
//! errors never stop a batch, output is identical for any `--jobs`, every
//! `--fail-on` gate trips on a real change and stays quiet without one, and
//! the markdown report is ready for a pull request.

use crate::common;
use agx_container::testutil::*;
use agx_container::Stage;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// The main body of a Mesa kernel of testdata/mesa (layout.json's extent).
fn mesa_main(kernel: &str) -> Vec<u8> {
    let dir = repo().join("testdata/mesa").join(kernel);
    let bin = std::fs::read(dir.join(format!("{kernel}.bin"))).unwrap();
    let layout: Value =
        serde_json::from_slice(&std::fs::read(dir.join("layout.json")).unwrap()).unwrap();
    let off = layout["main"]["offset"].as_u64().unwrap() as usize;
    let size = layout["main"]["size"].as_u64().unwrap() as usize;
    bin[off..off + size].to_vec()
}

/// An archive holding `(metal name, mesa kernel)` pairs.
fn archive(kernels: &[(&str, &str)]) -> Vec<u8> {
    let codes: Vec<(String, Vec<u8>)> = kernels
        .iter()
        .map(|(n, k)| (format!("{n}_agc.main"), mesa_main(k)))
        .collect();
    let refs: Vec<(&str, &[u8])> = codes
        .iter()
        .map(|(n, c)| (n.as_str(), c.as_slice()))
        .collect();
    let (text, syms) = layout_text(&refs, 256);
    build_test_archive(G13G, Stage::Compute, &text, &sym_refs(&syms))
}

fn write(p: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A small collection: two archives at the top, one nested, a raw dump
/// (skipped inside a directory), and a README.
/// The kernels [`corpus`] writes, in the order it writes them.
const KERNELS: [&str; 7] = [
    "matmul",
    "mandelbrot",
    "relu",
    "softmax",
    "gemm",
    "scan",
    "conv",
];

fn corpus(dir: &Path) {
    write(
        &dir.join("a.archive"),
        &archive(&[
            ("matmul", "matmul_naive_16x16"),
            ("mandelbrot", "cf_mandelbrot"),
        ]),
    );
    write(
        &dir.join("b.archive"),
        &archive(&[("relu", "ew_relu_f32"), ("softmax", "math_softmax_row")]),
    );
    write(
        &dir.join("nested/deeper/c.metallib"),
        &archive(&[
            ("gemm", "regpressure_gemm8x8_wg640"),
            ("scan", "scan_hillis_steele_256"),
            ("conv", "conv2d_kxk_nested"),
        ]),
    );
    write(
        &dir.join("nested/raw.bin"),
        &mesa_main("matmul_naive_16x16"),
    );
    write(&dir.join("README.md"), b"# kernels\n");
}

#[test]
fn batch_profiles_every_kernel_and_sorts_by_cycles() {
    let t = tmp("all");
    corpus(&t.0);
    let text = ok_out(&["batch", s(&t.0), "--jobs", "2"]);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("kernel"), "{text}");
    for col in [
        "source",
        "insns",
        "regs",
        "occupancy",
        "cycles",
        "bound",
        "top suggestion",
    ] {
        assert!(lines[0].contains(col), "missing column {col}: {}", lines[0]);
    }
    // 7 kernels, then a blank line and the footer
    let rows = &lines[1..8];
    for k in KERNELS {
        assert!(
            rows.iter().any(|r| r.split_whitespace().next() == Some(k)),
            "{k} missing:\n{text}"
        );
    }
    assert!(
        text.contains("7 kernel(s) from 3 archive(s); 2 non-archive file(s) skipped; 0 failed"),
        "{text}"
    );
    // sorted by cycles, descending: compare with the JSON numbers
    let j = run(&["batch", s(&t.0), "--format", "json"]);
    let doc: Value = serde_json::from_slice(&j.stdout).unwrap();
    let mut by_cycles: Vec<(f64, String)> = doc["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["total_cycles"].as_f64().unwrap(),
                k["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    by_cycles.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let table_order: Vec<&str> = rows
        .iter()
        .map(|r| r.split_whitespace().next().unwrap())
        .collect();
    let json_order: Vec<&str> = by_cycles.iter().map(|(_, n)| n.as_str()).collect();
    assert_eq!(table_order, json_order);
    assert_ne!(by_cycles[0].0, by_cycles[6].0, "cycles must differ");
}

#[test]
fn batch_html_is_one_page_with_every_kernel_and_an_index() {
    let t = tmp("html");
    corpus(&t.0);
    let page = ok_out(&["batch", s(&t.0), "--format", "html", "--jobs", "2"]);
    assert!(page.starts_with("<!DOCTYPE html>") && page.trim_end().ends_with("</html>"));
    assert_eq!(page.matches("<!DOCTYPE html>").count(), 1, "one page");
    assert!(
        page.contains("metal-profiler: 7 kernels"),
        "title counts the kernels"
    );
    let index = page
        .split("<nav class=\"index\">")
        .nth(1)
        .and_then(|r| r.split("</nav>").next())
        .expect("an index of kernels");
    for (k, name) in KERNELS.iter().enumerate() {
        assert!(
            index.contains(&format!("href=\"#k{k}\"")),
            "index entry {k}"
        );
        assert!(index.contains(name), "{name} in the index");
        assert!(
            page.contains(&format!("id=\"k{k}\"")),
            "section of kernel {k}"
        );
    }
    // one CFG drawing per kernel, and the file each kernel came from is named
    assert_eq!(page.matches("<svg class=\"cfg\"").count(), 7);
    assert!(page.contains("c.metallib"));
}

#[test]
fn batch_json_document_carries_source_name_errors() {
    let t = tmp("json");
    corpus(&t.0);
    let raw = t.0.join("nested/raw.bin");
    let trunc = t.0.join("bad/truncated.archive");
    let full = archive(&[("x", "ew_relu_f32")]);
    write(&trunc, &full[..full.len() / 2]);
    let missing = t.0.join("no-such-file.archive");
    let o = run(&[
        "batch",
        s(&t.0),
        s(&raw),
        s(&missing),
        "--format",
        "json",
        "-j",
        "3",
    ]);
    // bad inputs never stop the batch, but the exit code says so
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("one valid JSON document");
    assert_eq!(doc["schema"], "metal-profiler/1");
    let kernels = doc["kernels"].as_array().unwrap();
    assert_eq!(kernels.len(), 7);
    let gemm = kernels.iter().find(|k| k["name"] == "gemm").unwrap();
    assert_eq!(
        gemm["source"].as_str().unwrap(),
        s(&t.0.join("nested/deeper/c.metallib"))
    );
    // a full kernel object, the same as a single profile's
    assert!(gemm["spills"].as_u64().unwrap() > 0, "gemm8x8_wg640 spills");
    assert!(gemm["instructions_detail"].as_array().unwrap().len() > 10);
    let errors = doc["errors"].as_array().unwrap();
    let sources: Vec<&str> = errors
        .iter()
        .map(|e| e["source"].as_str().unwrap())
        .collect();
    // the truncated archive (walked), the explicit raw file, the missing path
    assert_eq!(sources.len(), 3, "{errors:?}");
    assert!(sources.contains(&s(&trunc)));
    assert!(sources.contains(&s(&raw)));
    assert!(sources.contains(&s(&missing)));
    let err_of = |p: &Path| {
        errors.iter().find(|e| e["source"] == s(p)).unwrap()["error"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(err_of(&raw).contains("not a Metal binary archive"));
    assert!(err_of(&raw).contains("--binary"));
    assert!(err_of(&trunc).contains("truncated"), "{}", err_of(&trunc));
    assert!(err_of(&missing).contains("no such file"));
    // inside the directory the README is skipped, counted; the raw dump is
    // named too: one file, an explicit one (an error), not also a skip
    assert_eq!(doc["summary"]["skipped"], 1);
    assert_eq!(doc["summary"]["kernels"], 7);
    assert_eq!(doc["summary"]["failed"], 3);
    let e = err(&o);
    assert!(e.contains("3 input(s) failed"), "{e}");
    assert!(!e.contains("panicked"), "{e}");
}

#[test]
fn batch_output_is_identical_for_any_jobs() {
    let t = tmp("det");
    corpus(&t.0);
    // more kernels than workers, several per archive, so the workers interleave
    for i in 0..6 {
        write(
            &t.0.join(format!("many/{i}.archive")),
            &archive(&[
                ("a", "math_exp_log"),
                ("b", "reduce_max_unrolled_64"),
                ("c", "laplacian3d_7pt"),
                ("d", "cf_bubble_sort8"),
            ]),
        );
    }
    for fmt in ["json", "text", "csv", "html"] {
        let one = run(&["batch", s(&t.0), "--format", fmt, "--jobs", "1"]);
        assert!(one.status.success(), "{}", err(&one));
        assert!(one.stdout.len() > 500);
        for jobs in ["2", "3", "8"] {
            let n = run(&["batch", s(&t.0), "--format", fmt, "--jobs", jobs]);
            assert!(
                n.stdout == one.stdout,
                "--format {fmt}: --jobs {jobs} differs from --jobs 1"
            );
        }
    }
    // files read by the workers (issue 21): a broken archive, one without
    // symbols (a warning) and an explicit non-archive between good ones give
    // the same errors and warnings, in the same order, with any number of
    // workers
    let good = archive(&[("a", "math_exp_log"), ("b", "cf_bubble_sort8")]);
    write(&t.0.join("many/0b_cut.archive"), &good[..good.len() / 3]);
    write(&t.0.join("many/2b_empty.archive"), &archive(&[]));
    let readme = t.0.join("README.md");
    for fmt in ["json", "text"] {
        let args = |jobs| {
            [
                "batch",
                s(&t.0),
                s(&readme),
                "--format",
                fmt,
                "--jobs",
                jobs,
            ]
        };
        let one = run(&args("1"));
        assert_eq!(one.status.code(), Some(1), "{}", err(&one));
        let e = err(&one);
        let lines: Vec<&str> = e.lines().filter(|l| l.starts_with("error:")).collect();
        // the empty archive's main body holds no code: an error too (issue 21 item 1)
        assert_eq!(lines.len(), 3, "{e}");
        for name in ["0b_cut", "README.md", "2b_empty"] {
            assert!(lines.iter().any(|l| l.contains(name)), "{name}: {e}");
        }
        assert!(e.starts_with("warning: ") && e.contains("2b_empty"), "{e}");
        for jobs in ["2", "3", "8"] {
            let n = run(&args(jobs));
            assert!(
                n.stdout == one.stdout && n.stderr == one.stderr,
                "--format {fmt}: --jobs {jobs} differs from --jobs 1 with failing files"
            );
            assert_eq!(n.status.code(), Some(1));
        }
    }
}

#[test]
fn batch_csv_quotes_fields() {
    let t = tmp("csv");
    corpus(&t.0);
    let o = run(&["batch", s(&t.0), "--format", "csv"]);
    assert!(o.status.success());
    let text = out(&o);
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "kernel,source,instructions,registers_half,occupancy_threads,occupancy_percent,cycles,bound,spills,fills,top_suggestion"
    );
    assert_eq!(lines.count(), 7);
    // suggestions contain commas: quoted, so every record parses to 11 fields
    for line in text.lines().skip(1) {
        let mut fields = 0;
        let mut quoted = false;
        for c in line.chars() {
            match c {
                '"' => quoted = !quoted,
                ',' if !quoted => fields += 1,
                _ => {}
            }
        }
        assert_eq!(fields + 1, 11, "{line}");
    }
}

#[test]
fn batch_usage_errors() {
    let o = run(&["batch"]);
    assert_eq!(o.status.code(), Some(2));
    let t = tmp("use");
    corpus(&t.0);
    let o = run(&["batch", s(&t.0), "--jobs", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("--jobs must be at least 1"));
    let o = run(&["batch", s(&t.0), "--trip-count", "0"]);
    assert_eq!(o.status.code(), Some(2));
    // an archive with no kernel main body is an error of that file
    let empty = t.0.join("x/empty.archive");
    write(
        &empty,
        &build_test_archive(G13G, Stage::Compute, &[0u8; 16], &[("_helper", 0)]),
    );
    let o = run(&["batch", s(&empty)]);
    assert_fails(&o, 1, "no kernel main body");
}

/// Two batch documents of the same kernels, NEW with `extra` flags.
fn docs(dir: &Path, old_args: &[&str], new_args: &[&str]) -> (PathBuf, PathBuf) {
    let old = dir.join("old.json");
    let new = dir.join("new.json");
    let kernels = dir.join("kernels");
    for (p, extra) in [(&old, old_args), (&new, new_args)] {
        let mut args = vec!["batch", s(&kernels), "--format", "json"];
        args.extend_from_slice(extra);
        let o = run(&args);
        // 1 when an input failed: the document is still written
        assert!(matches!(o.status.code(), Some(0 | 1)), "{}", err(&o));
        std::fs::write(p, &o.stdout).unwrap();
    }
    (old, new)
}

fn diff(old: &Path, new: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["diff", s(old), s(new)];
    args.extend_from_slice(extra);
    run(&args)
}

#[test]
fn diff_cycles_gate_trips_on_growth_beyond_the_limit() {
    let t = tmp("dcyc");
    corpus(&t.0.join("kernels"));
    // doubling the assumed trip count roughly doubles looping kernels' cycles
    let (old, new) = docs(&t.0, &[], &["--trip-count", "32"]);
    let o = diff(&old, &new, &["--fail-on", "cycles:5%"]);
    assert_eq!(o.status.code(), Some(3), "{}", out(&o));
    let text = out(&o);
    assert!(text.contains("gate cycles:5%: TRIPPED by"), "{text}");
    assert!(text.contains("matmul"), "{text}");
    assert!(err(&o).contains("regression gate tripped: cycles:5%"));
    // a generous limit holds; so does an absolute one above the growth
    let o = diff(&old, &new, &["--fail-on", "cycles:1000%"]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    assert!(out(&o).contains("gate cycles:1000%: ok"));
    let o = diff(&old, &new, &["--fail-on", "cycles:1000000"]);
    assert_eq!(o.status.code(), Some(0));
    // an improvement never trips
    let o = diff(&new, &old, &["--fail-on", "cycles"]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    // same inputs: nothing changed
    let o = diff(&old, &old, &["--fail-on", "cycles", "--fail-on", "removed"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(out(&o).contains("0 changed, 7 unchanged, 0 added, 0 removed"));
}

/// OLD: `gemm` = Mesa's gemm8x8_wg640 (5 spills); NEW: `gemm` =
/// gemm12x8_wg1024 (156 spills); `relu` in both, `gone` only in OLD, `fresh`
/// only in NEW. The direction of each metric is read from the model's own
/// documents in the test.
fn spill_pair(dir: &Path) -> (PathBuf, PathBuf) {
    let old = dir.join("old/k.archive");
    let new = dir.join("new/k.archive");
    write(
        &old,
        &archive(&[
            ("gemm", "regpressure_gemm8x8_wg640"),
            ("relu", "ew_relu_f32"),
            ("gone", "ew_copy_grid_stride"),
        ]),
    );
    write(
        &new,
        &archive(&[
            ("gemm", "regpressure_gemm12x8_wg1024"),
            ("relu", "ew_relu_f32"),
            ("fresh", "ew_u8_unpack"),
        ]),
    );
    (old, new)
}

fn numbers(p: &Path, kernel: &str) -> Value {
    let o = run(&["batch", s(p), "--format", "json"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    doc["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == kernel)
        .unwrap()
        .clone()
}

#[test]
fn diff_every_gate_on_archives() {
    let t = tmp("dgates");
    let (old, new) = spill_pair(&t.0);
    let a = numbers(&old, "gemm");
    let b = numbers(&new, "gemm");
    let f = |k: &Value, p: &str| k.pointer(p).unwrap().as_f64().unwrap();
    // the premises of the assertions below, from the model itself
    assert!(f(&b, "/spills") > f(&a, "/spills"));
    assert!(f(&b, "/fills") > f(&a, "/fills"));
    assert!(f(&b, "/instructions") > f(&a, "/instructions"));
    assert!(f(&b, "/total_cycles") > f(&a, "/total_cycles"));
    let occ_drops = f(&b, "/occupancy/percent") < f(&a, "/occupancy/percent");
    let regs_grow = f(&b, "/registers/allocated_half") > f(&a, "/registers/allocated_half");

    let gate = |spec: &str| diff(&old, &new, &["--fail-on", spec]).status.code();
    assert_eq!(gate("spills"), Some(3));
    assert_eq!(gate("fills"), Some(3));
    assert_eq!(gate("instructions"), Some(3));
    assert_eq!(gate("instructions:10000%"), Some(0));
    assert_eq!(gate("cycles"), Some(3));
    assert_eq!(gate("removed"), Some(3)); // `gone` is not in NEW
    assert_eq!(gate("occupancy"), Some(if occ_drops { 3 } else { 0 }));
    assert_eq!(gate("registers"), Some(if regs_grow { 3 } else { 0 }));
    // reversed: nothing got worse except that `fresh` is now removed
    let back = |spec: &str| diff(&new, &old, &["--fail-on", spec]).status.code();
    for spec in ["spills", "fills", "instructions", "cycles"] {
        assert_eq!(back(spec), Some(0), "{spec}");
    }
    assert_eq!(back("removed"), Some(3));
    // kernels matched across old/ and new/ by relative source and name
    let o = diff(&old, &new, &[]);
    assert_eq!(o.status.code(), Some(0));
    let text = out(&o);
    assert!(
        text.contains("2 kernel(s) compared: 1 changed, 1 unchanged, 1 added, 1 removed"),
        "{text}"
    );
    assert!(text.contains("+ fresh"), "{text}");
    assert!(text.contains("- gone"), "{text}");
}

#[test]
fn diff_occupancy_and_registers_gates_on_documents() {
    // A document edited where the model has no pair of kernels that differ
    // only so: occupancy drops 100 -> 50, registers 20 -> 60 half-registers.
    let t = tmp("docc");
    corpus(&t.0.join("kernels"));
    let (old, _) = docs(&t.0, &[], &[]);
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&old).unwrap()).unwrap();
    let k = doc["kernels"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|k| k["name"] == "relu")
        .unwrap();
    let occ = k["occupancy"]["percent"].as_f64().unwrap();
    let regs = k["registers"]["allocated_half"].as_u64().unwrap();
    k["occupancy"]["percent"] = Value::from(occ / 2.0);
    k["registers"]["allocated_half"] = Value::from(regs + 40);
    // (diff reads the record's GPR count)
    let gprs = k["registers"]["allocated_gprs"].as_u64().unwrap();
    k["registers"]["allocated_gprs"] = Value::from(gprs + 20);
    let new = t.0.join("edited.json");
    std::fs::write(&new, serde_json::to_vec(&doc).unwrap()).unwrap();
    let gate = |spec: &str| diff(&old, &new, &["--fail-on", spec]).status.code();
    assert_eq!(gate("occupancy"), Some(3));
    assert_eq!(gate(&format!("occupancy:{}", occ / 2.0 - 1.0)), Some(3));
    assert_eq!(gate(&format!("occupancy:{}", occ / 2.0 + 1.0)), Some(0));
    assert_eq!(gate("occupancy:60%"), Some(0));
    assert_eq!(gate("registers"), Some(3));
    assert_eq!(gate("registers:20"), Some(0)); // +40 half = +20 GPRs
    assert_eq!(gate("registers:19"), Some(3));
    assert_eq!(gate("spills"), Some(0));
    assert_eq!(gate("cycles"), Some(0));
    // the other direction is an improvement
    assert_eq!(
        diff(
            &new,
            &old,
            &["--fail-on", "occupancy", "--fail-on", "registers"]
        )
        .status
        .code(),
        Some(0)
    );
}

#[test]
fn diff_bad_specs_and_inputs() {
    let t = tmp("dbad");
    corpus(&t.0.join("kernels"));
    let (old, new) = docs(&t.0, &[], &[]);
    for (spec, msg) in [
        ("cyc:5%", "unknown metric 'cyc'"),
        ("cycles:x", "non-negative number"),
        ("cycles:-5%", "non-negative number"),
        ("removed:3", "takes no limit"),
    ] {
        let o = diff(&old, &new, &["--fail-on", spec]);
        assert_eq!(o.status.code(), Some(2), "{spec}");
        assert!(err(&o).contains(msg), "{spec}: {}", err(&o));
    }
    let junk = t.0.join("junk.json");
    std::fs::write(&junk, b"{\"hello\": 1}").unwrap();
    let o = diff(&old, &junk, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(err(&o).contains("not a metal-profiler/1 document"));
    let o = diff(&old, &t.0.join("missing.json"), &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!err(&o).contains("panicked"));
}

#[test]
fn diff_markdown_is_a_pull_request_comment() {
    let t = tmp("dmd");
    let (old, new) = spill_pair(&t.0);
    let o = diff(
        &old,
        &new,
        &[
            "--format",
            "markdown",
            "--fail-on",
            "spills",
            "--fail-on",
            "cycles:100000%",
        ],
    );
    assert_eq!(o.status.code(), Some(3));
    let md = out(&o);
    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(lines[0], "### metal-profiler: kernel changes");
    assert!(md.contains("- ❌ `spills` tripped by `gemm`"), "{md}");
    assert!(md.contains("- ✅ `cycles:100000%` passed"), "{md}");
    let header =
        "| kernel | source | cycles | occupancy | registers | spills / fills | instructions |";
    let h = lines.iter().position(|l| *l == header).expect(header);
    assert_eq!(lines[h + 1], "|---|---|---:|---:|---:|---:|---:|");
    // every table row has the header's 7 cells
    let rows: Vec<&&str> = lines[h + 2..]
        .iter()
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert_eq!(rows.len(), 3, "{md}"); // gemm changed, fresh added, gone removed
    for r in &rows {
        assert_eq!(r.matches(" | ").count(), 6, "{r}");
    }
    let gemm = rows.iter().find(|r| r.contains("`gemm`")).unwrap();
    assert!(gemm.contains(" → "), "{gemm}");
    assert!(gemm.contains("(+"), "{gemm}");
    assert!(rows.iter().any(|r| r.contains("🆕 `fresh`")));
    assert!(rows.iter().any(|r| r.contains("~~`gone`~~")));
    // JSON says the same
    let j = diff(&old, &new, &["--format", "json", "--fail-on", "spills"]);
    let doc: Value = serde_json::from_slice(&j.stdout).unwrap();
    assert_eq!(doc["schema"], "metal-profiler-diff/1");
    assert_eq!(doc["tripped"], true);
    assert_eq!(doc["gates"][0]["kernels"][0], "gemm");
    assert_eq!(doc["summary"]["added"], 1);
}

fn schema() -> Value {
    serde_json::from_slice(&std::fs::read(repo().join("docs/schema.json")).unwrap()).unwrap()
}

#[test]
fn batch_and_diff_documents_validate_against_the_schema() {
    let t = tmp("schema");
    corpus(&t.0.join("kernels"));
    let bad = t.0.join("kernels/bad.archive");
    let full = archive(&[("x", "ew_relu_f32")]);
    write(&bad, &full[..full.len() / 3]);
    let (old, new) = docs(&t.0, &[], &["--trip-count", "4"]);
    let s = schema();
    let v = jsonschema::validator_for(&s).expect("schema compiles");
    for p in [&old, &new] {
        let doc: Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
        assert_eq!(doc["errors"].as_array().unwrap().len(), 1);
        let errs: Vec<String> = v.iter_errors(&doc).map(|e| e.to_string()).collect();
        assert!(errs.is_empty(), "{errs:?}");
    }
    let o = diff(&old, &new, &["--format", "json", "--fail-on", "cycles"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let dv = jsonschema::validator_for(&serde_json::json!({
        "$defs": s["$defs"],
        "$ref": "#/$defs/diff_document"
    }))
    .expect("diff schema compiles");
    let errs: Vec<String> = dv.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errs.is_empty(), "{errs:?}");
    assert!(!dv.is_valid(&serde_json::json!({"schema": "metal-profiler-diff/1"})));
}

#[cfg(unix)]
#[test]
fn batch_does_not_walk_a_symlink_loop_forever() {
    let t = tmp("loop");
    corpus(&t.0);
    std::os::unix::fs::symlink(&t.0, t.0.join("nested/back")).unwrap();
    let o = run(&["batch", s(&t.0), "--format", "csv"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(out(&o).lines().count(), 1 + 7, "{}", out(&o));
}

/// Runs `metal-profile ARGS`, killed after `secs` (a hang is a failure).
fn run_within(args: &[&str], secs: u64) -> Output {
    let mut child = bin()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut { out }, &mut v).map(|_| v)
    });
    let t0 = std::time::Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if t0.elapsed().as_secs() > secs {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?} did not finish in {secs} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let mut o = child.wait_with_output().unwrap();
    o.stdout = reader.join().unwrap().unwrap();
    o
}

#[test]
fn batch_json_of_many_one_kernel_archives_finishes_in_order() {
    // files are read by the workers and finish reading out of order; with
    // JSON at most 4 × jobs kernels wait for the writer, and the one it
    // waits for is always taken (a full window of later kernels once
    // deadlocked here)
    let t = tmp("many1");
    let kernels = [
        "ew_relu_f32",
        "math_exp_log",
        "cf_early_return",
        "bits_popcount_reverse_msb",
    ];
    for i in 0..600 {
        write(
            &t.0.join(format!("d{}/{i:03}.archive", i / 100)),
            &archive(&[("k", kernels[i % kernels.len()])]),
        );
    }
    let one = run_within(&["batch", s(&t.0), "--format", "json", "--jobs", "1"], 120);
    assert!(one.status.success(), "{}", err(&one));
    let v: Value = serde_json::from_slice(&one.stdout).unwrap();
    assert_eq!(v["kernels"].as_array().unwrap().len(), 600);
    for jobs in ["2", "3", "8"] {
        let n = run_within(&["batch", s(&t.0), "--format", "json", "--jobs", jobs], 120);
        assert!(n.status.success(), "{}", err(&n));
        assert!(
            n.stdout == one.stdout,
            "--jobs {jobs} differs from --jobs 1"
        );
    }
}

/// A file named twice, or reached through a directory and by name, is
/// profiled once (issue 21 item 7).
#[test]
fn batch_profiles_a_file_named_twice_once() {
    let kernels = |args: &[&str]| -> Vec<(String, String)> {
        let o = run(args);
        assert!(o.status.success(), "{args:?}: {}", err(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        v["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| {
                (
                    k["source"].as_str().unwrap().to_string(),
                    k["name"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let ex = repo().join("examples");
    let ex = ex.to_str().unwrap();
    let ka = format!("{ex}/kernels.archive");
    let again = format!("{ex}/../examples");
    let once = kernels(&["batch", ex, "--format", "json"]);
    assert!(once.len() >= 4, "{once:?}");
    let mut names = once.clone();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), once.len(), "{once:?}");
    for args in [
        &["batch", ex, &ka, "--format", "json"][..],
        &["batch", &ka, &ka, ex, "--format", "json"][..],
        &["batch", ex, &again, "--format", "json"][..],
    ] {
        let got = kernels(args);
        assert_eq!(got.len(), once.len(), "{args:?}: {got:?}");
    }
}
