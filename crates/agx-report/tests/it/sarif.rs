//! `agx_report::sarif`: the SARIF 2.1.0 log of records (issue 37 item 5),
//! checked against the SARIF 2.1.0 JSON schema and field by field.

use crate::sarif_schema;
use agx_analysis::timing::suggest::{Figures, Severity};
use agx_report::record::SuggestionOut;
use agx_report::{sarif, KernelRecord};
use serde_json::Value;

fn suggestion(severity: Severity, offset: u32, rule: &'static str) -> SuggestionOut {
    SuggestionOut {
        severity,
        offset,
        message: format!("{rule} message at 0x{offset:x}."),
        rule,
        figures: Figures(vec![("share_pct", 12.5)]),
        fact: format!("the fact of {rule}"),
        sites: vec![offset, offset + 4],
    }
}

/// A record with one suggestion of each severity, read from `dir/k 1.archive`.
fn record() -> KernelRecord {
    KernelRecord {
        name: "k".into(),
        source: Some("dir/k 1.archive".into()),
        suggestions: vec![
            suggestion(Severity::High, 0x34, "tile-global-loads"),
            suggestion(Severity::Medium, 0x40, "consider-fp16"),
            suggestion(Severity::Low, 0x8, "divergent-branch"),
        ],
        ..KernelRecord::default()
    }
}

fn log(records: &[KernelRecord]) -> Value {
    serde_json::from_str(&sarif::document(records)).expect("the SARIF log is JSON")
}

#[test]
fn a_log_of_three_severities_validates_with_one_level_each() {
    let v = log(&[record()]);
    let errors = sarif_schema::errors(&sarif_schema::validator(), &v);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(v["version"], "2.1.0");
    let results = v["runs"][0]["results"].as_array().unwrap();
    let levels: Vec<&str> = results
        .iter()
        .map(|r| r["level"].as_str().unwrap())
        .collect();
    assert_eq!(levels, ["error", "warning", "note"]);
    let sev: Vec<&str> = results
        .iter()
        .map(|r| r["properties"]["severity"].as_str().unwrap())
        .collect();
    assert_eq!(sev, ["high", "medium", "low"]);
}

#[test]
fn rules_are_the_registry_with_help_and_results_point_at_theirs() {
    let v = log(&[record()]);
    let rules = v["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, agx_analysis::advice::rule_ids());
    for r in rules {
        let help = agx_analysis::advice::rule(r["id"].as_str().unwrap())
            .unwrap()
            .help();
        assert_eq!(r["help"]["text"], help);
        assert_eq!(r["fullDescription"]["text"], help);
        let short = r["shortDescription"]["text"].as_str().unwrap();
        assert!(!short.is_empty() && help.starts_with(short.trim_end_matches('.')));
    }
    for res in v["runs"][0]["results"].as_array().unwrap() {
        let k = res["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[k]["id"], res["ruleId"]);
    }
}

#[test]
fn a_result_carries_message_fact_figures_location_and_fingerprint() {
    let v = log(&[record()]);
    let r = &v["runs"][0]["results"][0];
    assert_eq!(r["ruleId"], "tile-global-loads");
    let text = r["message"]["text"].as_str().unwrap();
    assert!(
        text.starts_with("tile-global-loads message at 0x34."),
        "{text}"
    );
    assert!(
        text.contains("Fact: the fact of tile-global-loads."),
        "{text}"
    );
    assert!(text.contains("k::k at 0x34"), "{text}");
    let loc = &r["locations"][0];
    // the path as given, as a relative URI reference
    assert_eq!(
        loc["physicalLocation"]["artifactLocation"]["uri"],
        "dir/k%201.archive"
    );
    assert_eq!(loc["logicalLocations"][0]["fullyQualifiedName"], "k::k");
    assert_eq!(loc["logicalLocations"][0]["kind"], "function");
    assert_eq!(loc["logicalLocations"][1]["name"], "0x34");
    assert_eq!(
        loc["logicalLocations"][1]["fullyQualifiedName"],
        "k::k+0x34"
    );
    assert_eq!(
        r["partialFingerprints"][sarif::FINGERPRINT_KEY],
        "tile-global-loads:k::k:0x34"
    );
    assert_eq!(r["properties"]["fact"], "the fact of tile-global-loads");
    assert_eq!(r["properties"]["figures"]["share_pct"], 12.5);
    assert_eq!(
        r["properties"]["sites"],
        serde_json::json!(["0x34", "0x38"])
    );
}

#[test]
fn no_source_means_no_physical_location_and_still_valid() {
    let mut r = record();
    r.source = None;
    let v = log(&[r, KernelRecord::default()]);
    let errors = sarif_schema::errors(&sarif_schema::validator(), &v);
    assert!(errors.is_empty(), "{errors:?}");
    let results = v["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert!(results[0]["locations"][0].get("physicalLocation").is_none());
}

/// A change that breaks one field of a log.
type Break = fn(&mut Value);

/// The schema check has teeth: each broken field of a valid log is refused.
#[test]
fn the_schema_refuses_a_broken_field() {
    let val = sarif_schema::validator();
    let good = log(&[record()]);
    assert!(val.is_valid(&good));
    let breaks: &[(&str, Break)] = &[
        ("level from the severity's name", |v| {
            v["runs"][0]["results"][0]["level"] = "high".into()
        }),
        ("no message", |v| {
            v["runs"][0]["results"][0]
                .as_object_mut()
                .unwrap()
                .remove("message");
        }),
        ("ruleIndex below -1 (the schema's \"none\")", |v| {
            v["runs"][0]["results"][0]["ruleIndex"] = (-2).into()
        }),
        ("uri with a space", |v| {
            v["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
                ["uri"] = "dir/k 1.archive".into()
        }),
        ("version 2.0", |v| v["version"] = "2.0.0".into()),
        ("unknown result field", |v| {
            v["runs"][0]["results"][0]["severity"] = "high".into()
        }),
    ];
    for (what, f) in breaks {
        let mut bad = good.clone();
        f(&mut bad);
        assert!(!val.is_valid(&bad), "{what}: accepted");
    }
}

#[test]
fn uris_are_percent_encoded_relative_references() {
    assert_eq!(
        sarif::uri_of("examples/kernels.archive"),
        "examples/kernels.archive"
    );
    assert_eq!(sarif::uri_of("a b/ü#.archive"), "a%20b/%C3%BC%23.archive");
    assert_eq!(sarif::uri_of(r"dir\k.archive"), "dir/k.archive");
}
