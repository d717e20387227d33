//! The advice registry's contract (issue 35 item 6, issue 36 item 2, issue
//! 37 item 1): every severity says its share with the thresholds of
//! docs/analysis.md, one name per loop, the headline's bound name, no advice
//! whose condition the code does not show.

use crate::common::*;
use serde_json::Value;

/// Every suggestion of a JSON document (kernels' and functions').
fn suggestions(v: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    for k in v["kernels"].as_array().unwrap() {
        out.extend(k["suggestions"].as_array().unwrap().iter().cloned());
        for f in k["functions"].as_array().into_iter().flatten().skip(1) {
            out.extend(f["suggestions"].as_array().into_iter().flatten().cloned());
        }
    }
    out
}

/// The severity thresholds of docs/analysis.md's table (`| >= 30% | 🔴 high |`),
/// highest first.
fn thresholds() -> Vec<(f64, String)> {
    let doc = std::fs::read_to_string(path("docs/analysis.md")).unwrap();
    let mut t: Vec<(f64, String)> = doc
        .lines()
        .filter_map(|l| {
            let l = l.strip_prefix("| >= ")?;
            let (pct, rest) = l.split_once("% | ")?;
            let sev = rest.split_whitespace().nth(1)?;
            Some((pct.parse().ok()?, sev.to_string()))
        })
        .collect();
    t.sort_by(|a, b| b.0.total_cmp(&a.0));
    assert_eq!(t.len(), 2, "{t:?}");
    t
}

fn severity_of(share: f64, t: &[(f64, String)]) -> &str {
    t.iter()
        .find(|(p, _)| share >= *p)
        .map_or("low", |(_, s)| s.as_str())
}

/// The inputs the checks run on: the examples and the Mesa kernels.
fn documents() -> Vec<(String, Value)> {
    let a = path("examples/kernels.archive");
    let mut out: Vec<(String, Value)> = ["matmul_naive", "mandelbrot"]
        .iter()
        .map(|f| (f.to_string(), json(&[&a, "-f", f, "--all-findings"])))
        .collect();
    let dir = std::path::Path::new(&path("testdata/mesa")).to_path_buf();
    let mut ks: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    ks.sort();
    for k in ks {
        let p = dir.join(&k).join(format!("{k}.bin"));
        if p.exists() {
            let v = json(&["--binary", p.to_str().unwrap(), "--all-findings"]);
            out.push((k, v));
        }
    }
    out
}

/// No rule sets a severity its share contradicts (was: consider-fp16 and
/// uniform-address-loads always 🟢, divergent-loop-exit at most 🟡).
#[test]
fn every_severity_follows_its_share() {
    let t = thresholds();
    let mut checked = 0;
    for (name, v) in documents() {
        for s in suggestions(&v) {
            let Some(share) = s["figures"]["share_pct"].as_f64() else {
                continue;
            };
            assert_eq!(s["severity"], severity_of(share, &t), "{name}: {s}");
            checked += 1;
        }
    }
    assert!(checked > 20, "{checked}");
}

/// A loop whose trip count each thread loads (`for (i = 0; i < n[gid];
/// i++)`, two dependent FMAs a pass, a value stored after it that is not
/// the count): a divergent exit that is neither a grid-stride tail, a
/// stored count nor a CAS retry. Assembled into `dir`; the path of the code.
fn data_bound_loop(dir: &std::path::Path) -> String {
    let s = dir.join("k.s");
    let bin = dir.join("k.bin");
    std::fs::write(
        &s,
        "get_sr r1, sr80\n\
         device_load 0, i32, x, r2, u0_u1, r1, unsigned\n\
         wait 0\n\
         mov_imm r0l, 0\n\
         mov_imm r3, 0, 0b0\n\
         mov_imm r4, 0, 0b0\n\
         while_icmp r0l, ult, r3, r2, 1\n\
         fmadd32 r4, r4, r4, r1\n\
         fmadd32 r4, r4, r4, r1\n\
         iadd r3, r3, 1\n\
         jmp_exec_any 0x1E\n\
         pop_exec r0l, 1\n\
         device_store 0, i32, x, r4, u2_u3, r1, unsigned, 0\n\
         stop\n",
    )
    .unwrap();
    let o = run(&["asm", s.to_str().unwrap(), "-o", bin.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
    bin.to_str().unwrap().to_string()
}

/// A divergent loop exit's severity follows its share, in the text report
/// as in JSON: the data-bound loop above is 🔴. mandelbrot's escape-time
/// loop gets none: the iteration count is what it stores (`it[...] = k`),
/// the divergence is the result (expert label `none`); nor does
/// `atomic_cas_float_add`'s CAS retry loop, whose trip counts contention
/// sets (expert: privatise-atomics).
#[test]
fn divergent_loop_exit_is_high_in_every_view() {
    let t = tmp("divergent-exit");
    let bin = data_bound_loop(&t.0);
    let v = json(&["--binary", &bin]);
    let exit: Vec<Value> = suggestions(&v)
        .into_iter()
        .filter(|s| s["rule"] == "divergent-loop-exit")
        .collect();
    assert_eq!(exit.len(), 1, "{exit:?}");
    assert_eq!(exit[0]["severity"], "high", "{}", exit[0]);
    let text = ok_out(&["--binary", &bin]);
    let line = text
        .lines()
        .find(|l| l.contains("has a divergent exit"))
        .unwrap();
    assert!(line.trim_start().starts_with('🔴'), "{line}");
    let m = json(&[&path("examples/kernels.archive"), "-f", "mandelbrot"]);
    assert!(
        suggestions(&m)
            .iter()
            .all(|s| s["rule"] != "divergent-loop-exit"),
        "mandelbrot's count is its output"
    );
    let cas = path("testdata/mesa/atomic_cas_float_add/atomic_cas_float_add.bin");
    let c = json(&["--binary", &cas]);
    let rules: Vec<String> = suggestions(&c)
        .iter()
        .filter_map(|s| s["rule"].as_str().map(str::to_string))
        .collect();
    assert_eq!(
        rules.first().map(String::as_str),
        Some("privatise-atomics"),
        "{rules:?}"
    );
    assert!(
        rules.iter().all(|r| r != "divergent-loop-exit"),
        "{rules:?}"
    );
}

/// One name per loop, as the text report's sections name it: "loop at
/// 0x…" by its header (was: "Loop ending at 0x19e" for mandelbrot's loop at
/// 0x140, "loop 0x…" in five rules).
#[test]
fn every_message_names_a_loop_by_its_header() {
    let mut loops = 0;
    for (name, v) in documents() {
        for s in suggestions(&v) {
            let m = s["message"].as_str().unwrap();
            assert!(!m.contains("oop 0x"), "{name}: {m}");
            assert!(!m.contains("oop ending at"), "{name}: {m}");
            loops += m.matches("oop at 0x").count();
        }
    }
    assert!(loops > 5, "{loops}");
    let t = tmp("loop-name");
    let bin = data_bound_loop(&t.0);
    let v = json(&["--binary", &bin]);
    let exit = suggestions(&v)
        .into_iter()
        .find(|s| s["rule"] == "divergent-loop-exit")
        .unwrap();
    let m = exit["message"].as_str().unwrap();
    assert!(m.starts_with("Loop at 0x1e has a divergent exit"), "{m}");
}

/// The headline names mandelbrot's loop bound as the F+SCIB pipe (was:
/// "FP32-bound"); `consider-fp16` stays silent there: the loop's exit is an
/// escape test on the floats it computes (`dot(z, z) < 4.0`), which half
/// precision would move (expert label `none`). The rule's message naming
/// the headline bound is checked on a synthetic FP32-bound loop
/// (agx-analysis `timing_suggest::consider_fp16`).
#[test]
fn fp16_silent_on_an_escape_test_and_the_headline_bound() {
    let v = json(&[&path("examples/kernels.archive"), "-f", "mandelbrot"]);
    let k = &v["kernels"][0];
    let by = k["loops"][0]["body"]["bound"]["by"].as_str().unwrap();
    assert_eq!(by, "fscib");
    assert!(suggestions(&v).iter().all(|s| s["rule"] != "consider-fp16"));
    let text = ok_out(&[&path("examples/kernels.archive"), "-f", "mandelbrot"]);
    assert!(text.contains("bound by F+SCIB pipe"), "headline");
}
