//! `--format sarif` (main command and `batch`; issue 37 item 5): every
//! example's log validates against the SARIF 2.1.0 JSON schema, holds one
//! result per suggestion of the JSON document of the same run, each at its
//! input file with the level of its severity; Apple9 (untimed) kernels too;
//! and the CI recipe's gate on 🔴 findings (`diff --fail-on high-findings`).

use crate::common::{
    apple9_example_kernel, assert_one_line_error, err, g15_archive, json, out, run, tmp,
};
use crate::sarif_schema;
use serde_json::Value;

/// The SARIF log `metal-profile ARGS --format sarif` prints (the run must
/// succeed), checked against the schema.
fn sarif(args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend(["--format", "sarif"]);
    let o = run(&a);
    assert!(o.status.success(), "{a:?}: {}", err(&o));
    let log: Value = serde_json::from_slice(&o.stdout).expect("a SARIF log is JSON");
    let errors = sarif_schema::errors(&sarif_schema::validator(), &log);
    assert!(errors.is_empty(), "{a:?}: {errors:?}");
    log
}

/// The suggestions of a metal-profiler/1 document as (source, rule,
/// severity, kernel::function, offset): each kernel's own, then each
/// called function's (`functions[0]` is main: its suggestions are the
/// kernel's).
fn json_findings(doc: &Value, source: Option<&str>) -> Vec<(String, String, String, String, u64)> {
    let mut v = Vec::new();
    for k in doc["kernels"].as_array().unwrap() {
        let name = k["name"].as_str().unwrap();
        let src = k["source"].as_str().or(source).unwrap_or("").to_string();
        let mut add = |function: &str, list: &Value| {
            for s in list.as_array().into_iter().flatten() {
                v.push((
                    src.clone(),
                    s["rule"].as_str().unwrap().to_string(),
                    s["severity"].as_str().unwrap().to_string(),
                    format!("{name}::{function}"),
                    s["offset"].as_u64().unwrap(),
                ));
            }
        };
        add(name, &k["suggestions"]);
        for f in k["functions"].as_array().into_iter().flatten().skip(1) {
            add(
                f["display_name"]
                    .as_str()
                    .or(f["symbol"].as_str())
                    .unwrap_or("?"),
                &f["suggestions"],
            );
        }
    }
    v
}

/// The same tuples read from a SARIF log's results, after checking what
/// every result must hold: its rule's descriptor (with help text), the
/// level of its severity, a fingerprint, the offset in three places.
fn sarif_findings(log: &Value) -> Vec<(String, String, String, String, u64)> {
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let mut v = Vec::new();
    for r in run["results"].as_array().unwrap() {
        let rule = &rules[r["ruleIndex"].as_u64().unwrap() as usize];
        assert_eq!(rule["id"], r["ruleId"]);
        assert!(!rule["help"]["text"].as_str().unwrap().is_empty(), "{rule}");
        let severity = r["properties"]["severity"].as_str().unwrap();
        let level = match severity {
            "high" => "error",
            "medium" => "warning",
            "low" => "note",
            s => panic!("severity {s}"),
        };
        assert_eq!(r["level"], level, "{r}");
        let loc = &r["locations"][0];
        let function = loc["logicalLocations"][0]["fullyQualifiedName"]
            .as_str()
            .unwrap();
        let at = loc["logicalLocations"][1]["name"].as_str().unwrap();
        assert_eq!(r["properties"]["offset"], at);
        assert!(r["message"]["text"].as_str().unwrap().contains(at), "{r}");
        let fp = r["partialFingerprints"]["metalProfilerFinding/v1"]
            .as_str()
            .unwrap();
        assert_eq!(
            fp,
            format!("{}:{function}:{at}", r["ruleId"].as_str().unwrap())
        );
        let fact = r["properties"]["fact"].as_str().unwrap();
        assert!(r["message"]["text"].as_str().unwrap().contains(fact), "{r}");
        v.push((
            loc["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap_or("")
                .to_string(),
            r["ruleId"].as_str().unwrap().to_string(),
            severity.to_string(),
            function.to_string(),
            u64::from_str_radix(at.trim_start_matches("0x"), 16).unwrap(),
        ));
    }
    v
}

/// The examples' archives and their kernels (main bodies), by Metal name.
fn example_kernels() -> Vec<(String, Vec<String>)> {
    let mut v = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(crate::common::repo().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "archive"))
        .collect();
    files.sort();
    for p in files {
        let path = format!("examples/{}", p.file_name().unwrap().to_str().unwrap());
        let list = json(&[&path, "--list"]);
        let mains = list["functions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["part"] == "main")
            .map(|f| f["name"].as_str().unwrap().to_string())
            .collect();
        v.push((path, mains));
    }
    v
}

#[test]
fn every_example_kernel_has_one_result_per_suggestion_at_its_file() {
    let mut total = 0;
    let examples = example_kernels();
    assert!(examples.len() >= 3, "{examples:?}");
    for (path, kernels) in &examples {
        assert!(!kernels.is_empty(), "{path}");
        for k in kernels {
            for part in ["main", "all"] {
                let args = [path.as_str(), "-f", k, "--part", part];
                let from_json = json_findings(&json(&args), Some(path));
                let from_sarif = sarif_findings(&sarif(&args));
                assert_eq!(from_sarif, from_json, "{args:?}");
                total += from_sarif.len();
            }
        }
    }
    // the examples do have findings (a log of none would pass the above)
    assert!(total >= 4, "{total} results over the examples");
}

#[test]
fn batch_over_the_examples_is_one_run_with_every_kernels_results() {
    let o = run(&["batch", "examples", "--format", "sarif", "--jobs", "2"]);
    assert!(o.status.success(), "{}", err(&o));
    let log: Value = serde_json::from_slice(&o.stdout).unwrap();
    let errors = sarif_schema::errors(&sarif_schema::validator(), &log);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(log["runs"].as_array().unwrap().len(), 1);
    let from_sarif = sarif_findings(&log);
    let doc = {
        let o = run(&["batch", "examples", "--format", "json"]);
        assert!(o.status.success(), "{}", err(&o));
        serde_json::from_slice::<Value>(&o.stdout).unwrap()
    };
    assert_eq!(from_sarif, json_findings(&doc, None));
    let files: std::collections::BTreeSet<&str> = from_sarif.iter().map(|f| f.0.as_str()).collect();
    assert!(
        files.contains("examples/kernels.archive")
            && files.contains("examples/simple_call.archive"),
        "{files:?}"
    );
    // the same log for any --jobs
    let one = run(&["batch", "examples", "--format", "sarif", "--jobs", "1"]);
    assert_eq!(out(&one), out(&o));
}

#[test]
fn untimed_apple9_kernels_give_a_valid_log_in_both_commands() {
    let log = sarif(&[
        "--binary",
        "examples/apple9_loop.a9bin",
        "--gpu",
        "g16g",
        "--offset",
        "0x40",
    ]);
    assert_eq!(
        sarif_findings(&log).len(),
        json_findings(
            &json(&[
                "--binary",
                "examples/apple9_loop.a9bin",
                "--gpu",
                "g16g",
                "--offset",
                "0x40"
            ]),
            None
        )
        .len()
    );
    let t = tmp("sarif-g15");
    let a = t.0.join("m3.archive");
    std::fs::write(&a, g15_archive(&[("loop_a", apple9_example_kernel())])).unwrap();
    let a = a.to_str().unwrap();
    let o = run(&["batch", a, "--gpu", "g15g", "--format", "sarif"]);
    assert!(o.status.success(), "{}", err(&o));
    let log: Value = serde_json::from_slice(&o.stdout).unwrap();
    let errors = sarif_schema::errors(&sarif_schema::validator(), &log);
    assert!(errors.is_empty(), "{errors:?}");
    let j = run(&["batch", a, "--gpu", "g15g", "--format", "json"]);
    let doc: Value = serde_json::from_slice(&j.stdout).unwrap();
    assert_eq!(sarif_findings(&log), json_findings(&doc, None));
}

#[test]
fn sarif_refuses_the_flags_that_print_no_profile() {
    for extra in [&["--list"][..], &["--disasm-only"], &["--show-disasm"]] {
        let mut args = vec!["examples/kernels.archive", "--format", "sarif"];
        args.extend_from_slice(extra);
        assert_one_line_error(&run(&args), 2, "--format sarif");
    }
    assert_one_line_error(
        &run(&["--explain-model", "--format", "sarif"]),
        2,
        "--format sarif",
    );
}

/// The 🔴 findings of each kernel of a metal-profiler/1 document.
fn high_counts(doc: &Value) -> Vec<usize> {
    let mut per: std::collections::BTreeMap<String, usize> = Default::default();
    for (_, _, sev, function, _) in json_findings(doc, None) {
        let kernel = function.split("::").next().unwrap().to_string();
        *per.entry(kernel).or_default() += usize::from(sev == "high");
    }
    doc["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| per.get(k["name"].as_str().unwrap()).copied().unwrap_or(0))
        .collect()
}

/// `diff --fail-on high-findings` (the CI recipe's gate on new 🔴
/// findings): trips when a kernel has more 🔴 suggestions than before,
/// its own or a called function's, and not when it has fewer.
#[test]
fn diff_gates_on_more_high_findings_of_a_kernel_or_its_callees() {
    let t = tmp("sarif-gate");
    let write = |name: &str, v: &Value| {
        let p = t.0.join(name);
        std::fs::write(&p, serde_json::to_vec(v).unwrap()).unwrap();
        p.to_str().unwrap().to_string()
    };
    let diff = |old: &str, new: &str| {
        run(&[
            "diff",
            old,
            new,
            "--fail-on",
            "high-findings",
            "--format",
            "json",
        ])
    };
    // main's findings: matmul_naive with its 🔴 suggestion dropped (was
    // mandelbrot, which now has none: its divergence and FP32 bound are
    // the algorithm's, docs/analysis.md "Expert labels")
    let full = json(&["examples/kernels.archive", "-f", "matmul_naive"]);
    assert_eq!(high_counts(&full), [1]);
    let mut fewer = full.clone();
    fewer["kernels"][0]["suggestions"]
        .as_array_mut()
        .unwrap()
        .pop();
    // a called function's: simple_call's helper without its 🔴 suggestion
    let call = json(&["examples/simple_call.archive", "-f", "simple_call"]);
    assert_eq!(high_counts(&call), [1]);
    let mut quiet = call.clone();
    quiet["kernels"][0]["functions"][1]["suggestions"] = serde_json::json!([]);
    for (before, after, name) in [
        (&fewer, &full, "matmul_naive"),
        (&quiet, &call, "simple_call"),
    ] {
        let (b, a) = (write("before.json", before), write("after.json", after));
        let o = diff(&b, &a);
        assert_eq!(o.status.code(), Some(3), "{name}: {}", err(&o));
        let d: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(d["gates"][0]["kernels"], serde_json::json!([name]));
        let k = &d["kernels"][0];
        assert_eq!(
            k["new"]["high_findings"].as_u64().unwrap(),
            k["old"]["high_findings"].as_u64().unwrap() + 1
        );
        // fewer 🔴 findings: no gate trips
        let o = diff(&a, &b);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", err(&o));
    }
    // archives (profiled as batch rows) count what their documents do
    let o = diff("examples/kernels.archive", "examples/kernels.archive");
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let d: Value = serde_json::from_slice(&o.stdout).unwrap();
    let batch = {
        let o = run(&["batch", "examples/kernels.archive", "--format", "json"]);
        serde_json::from_slice::<Value>(&o.stdout).unwrap()
    };
    let by_name = |doc: &Value, counts: Vec<usize>| -> Vec<(String, usize)> {
        let mut v: Vec<(String, usize)> = doc["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["name"].as_str().unwrap().to_string())
            .zip(counts)
            .collect();
        v.sort();
        v
    };
    let from_diff: Vec<usize> = d["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["new"]["high_findings"].as_u64().unwrap() as usize)
        .collect();
    assert_eq!(by_name(&d, from_diff), by_name(&batch, high_counts(&batch)));
}

/// Raw code (`--binary FILE`) is located at its file; an archive on stdin
/// has no file: its results keep their logical locations only.
#[test]
fn raw_code_is_at_its_file_and_stdin_at_no_file() {
    let raw = [
        "--binary",
        "examples/matmul_naive.bin",
        "--threadgroup",
        "16x16x1",
    ];
    let log = sarif(&raw);
    let found = sarif_findings(&log);
    assert!(!found.is_empty());
    assert!(
        found.iter().all(|f| f.0 == "examples/matmul_naive.bin"),
        "{found:?}"
    );
    assert_eq!(found.len(), json_findings(&json(&raw), None).len());
    let bytes = std::fs::read(crate::common::repo().join("examples/kernels.archive")).unwrap();
    let o = crate::common::run_stdin(&["-", "-f", "matmul_naive", "--format", "sarif"], &bytes);
    assert!(o.status.success(), "{}", err(&o));
    let log: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(sarif_schema::errors(&sarif_schema::validator(), &log).is_empty());
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for r in results {
        let loc = &r["locations"][0];
        assert!(loc.get("physicalLocation").is_none(), "{loc}");
        assert_eq!(
            loc["logicalLocations"][0]["fullyQualifiedName"],
            "matmul_naive::matmul_naive"
        );
    }
}
