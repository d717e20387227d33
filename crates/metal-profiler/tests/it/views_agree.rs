//! Every view shows what every function found (issue 29 item 2), on the
//! shipped `simple_call` example: main calls a helper that spills (5
//! spills, 5 fills) and has findings. Text, HTML, `batch` and JSON agree on
//! the calls, the helper's stack use and suggestions, and the annotated
//! listings (text and HTML) spell the stack adjust the same way.

use crate::common::*;

fn args(format: &str) -> Vec<String> {
    vec![
        path("examples/simple_call.archive"),
        "-f".into(),
        "simple_call".into(),
        "--format".into(),
        format.into(),
        "--color".into(),
        "never".into(),
    ]
}

fn view(format: &str) -> String {
    let a = args(format);
    ok_out(&a.iter().map(String::as_str).collect::<Vec<_>>())
}

fn helper(doc: &serde_json::Value) -> serde_json::Value {
    doc["kernels"][0]["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["main"] == false)
        .unwrap()
        .clone()
}

#[test]
fn html_shows_the_helpers_findings_and_stack() {
    let doc: serde_json::Value = serde_json::from_str(&view("json")).unwrap();
    let h = helper(&doc);
    let sugg = h["suggestions"].as_array().unwrap();
    assert!(!sugg.is_empty() && h["spills"] == 5 && h["fills"] == 5);
    let html = view("html");
    assert!(
        !html.contains("No problems found by the rules"),
        "the helper has findings"
    );
    for s in sugg {
        let m = s["message"].as_str().unwrap();
        let esc = agx_report::html::esc(m);
        assert!(html.contains(&esc), "{m}");
    }
    assert!(html.contains("in called function helper"));
    // the Calls table: the helper with its spills and fills
    let calls = html
        .split("id=\"k0-calls\"")
        .nth(1)
        .and_then(|t| t.split("</table>").next())
        .expect("a Calls table");
    assert!(calls.contains("helper at 0x0"), "{calls}");
    assert!(calls.contains(">5</td><td"), "{calls}");
}

#[test]
fn text_call_cycles_are_the_records() {
    let doc: serde_json::Value = serde_json::from_str(&view("json")).unwrap();
    let h = helper(&doc);
    let from_main = h["timing"]["cycles_from_main"].as_f64().unwrap();
    let calls: f64 = doc["kernels"][0]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["caller"] == doc["kernels"][0]["functions"][0]["entry"])
        .map(|c| c["cycles"].as_f64().unwrap())
        .sum();
    assert!((from_main - calls).abs() < 0.011, "{from_main} vs {calls}");
    let text = view("text");
    let line = text
        .lines()
        .find(|l| l.contains("of the kernel's total from main's calls"))
        .unwrap();
    let shown = agx_analysis::timing::model::fmt_cy(from_main);
    assert!(
        line.contains(&format!("; {shown} cy of the kernel's total")),
        "{line}"
    );
    assert!(text.contains("5 spills, 5 fills"), "{text}");
}

#[test]
fn batch_top_suggestion_considers_the_helper() {
    let doc: serde_json::Value = serde_json::from_str(&view("json")).unwrap();
    let k = &doc["kernels"][0];
    let h = helper(&doc);
    assert!(k["suggestions"].as_array().unwrap().is_empty());
    let first = h["suggestions"][0]["message"].as_str().unwrap();
    let o = ok_out(&[
        "batch",
        &path("examples/simple_call.archive"),
        "--format",
        "csv",
    ]);
    let row = o
        .lines()
        .find(|l| l.starts_with("simple_call,"))
        .unwrap_or_else(|| panic!("{o}"));
    assert!(
        row.contains(&format!("helper: {first}").replace('"', "\"\"")),
        "{row}"
    );
}

#[test]
fn listings_spell_the_stack_adjust_alike() {
    let text = view("text");
    let html = view("html");
    let t = text
        .lines()
        .find(|l| l.contains("18e: "))
        .expect("text listing line at 0x18e");
    assert!(t.contains("stack_adjust"), "{t}");
    let h = html
        .lines()
        .find(|l| l.contains("id=\"k0-a18e\""))
        .expect("HTML listing row at 0x18e");
    assert!(h.contains("stack_adjust     0, 1, 2, 0, 0, 8"), "{h}");
    assert!(!h.contains("stack_store"), "{h}");
    // --disasm-only keeps applegpu's spelling
    let d = ok_out(&[
        &path("examples/simple_call.archive"),
        "-f",
        "simple_call",
        "--disasm-only",
    ]);
    assert!(d.contains("stack_store      i8, 1, 2, 0, 8, 0"), "{d}");
}
