//! `--format sarif`: the kernels' suggestions as one SARIF 2.1.0 log
//! (OASIS Static Analysis Results Interchange Format), the format GitHub
//! code scanning and most CI systems read (issue 37 item 5; docs/ci.md).
//!
//! Printed from the record only ([`KernelRecord::all_suggestions`]: main's
//! suggestions, then each called function's): one `result` per
//! suggestion. `tool.driver.rules` lists every rule of the advice registry
//! with its help text ([`agx_analysis::advice::registry`]); a result names
//! its rule by `ruleId` and `ruleIndex`. Its `level` comes from the
//! severity ([`level`]). Its location is the input file
//! (`physicalLocation.artifactLocation.uri`, the record's `source` as a
//! relative URI) and two logical locations: the function
//! (`fullyQualifiedName` `kernel::function`) and the instruction at its
//! address (`0x…`, as the listings print it; `kernel::function+0x…`). Machine code has no source lines, so there is no `region`.
//! `partialFingerprints` (rule, function, address) let code scanning
//! follow a finding across runs.

use crate::record::{KernelRecord, SuggestionOut};
use agx_analysis::advice;
use agx_analysis::timing::suggest::{Figures, Severity};
use serde::Serialize;
use std::collections::BTreeMap;

/// The SARIF version written.
pub const VERSION: &str = "2.1.0";

/// The `$schema` of the log: the OASIS SARIF 2.1.0 schema (errata 01).
pub const SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The key of `partialFingerprints` (versioned: a change of what it hashes
/// gets a new key, not a silently different value).
pub const FINGERPRINT_KEY: &str = "metalProfilerFinding/v1";

/// A result's `level` from the suggestion's severity: 🔴 `error`,
/// 🟡 `warning`, 🟢 `note`.
pub fn level(s: Severity) -> &'static str {
    match s {
        Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low => "note",
    }
}

#[derive(Serialize)]
struct Log<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [Run<'a>; 1],
}

#[derive(Serialize)]
struct Run<'a> {
    tool: Tool,
    results: Vec<SarifResult<'a>>,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    semantic_version: &'static str,
    rules: Vec<RuleDescriptor>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RuleDescriptor {
    id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    short_description: Option<Text>,
    #[serde(skip_serializing_if = "Option::is_none")]
    full_description: Option<Text>,
    #[serde(skip_serializing_if = "Option::is_none")]
    help: Option<Text>,
    properties: RuleProperties,
}

#[derive(Serialize)]
struct RuleProperties {
    tags: [&'static str; 1],
}

#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    rule_id: &'a str,
    rule_index: usize,
    level: &'static str,
    message: Text,
    locations: [Location; 1],
    partial_fingerprints: BTreeMap<&'static str, String>,
    properties: ResultProperties<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    #[serde(skip_serializing_if = "Option::is_none")]
    physical_location: Option<PhysicalLocation>,
    logical_locations: [LogicalLocation; 2],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
}

#[derive(Serialize)]
struct ArtifactLocation {
    uri: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LogicalLocation {
    name: String,
    fully_qualified_name: String,
    kind: &'static str,
}

#[derive(Serialize)]
struct ResultProperties<'a> {
    severity: Severity,
    kernel: &'a str,
    function: &'a str,
    offset: String,
    fact: &'a str,
    figures: &'a Figures,
    sites: Vec<String>,
}

/// The SARIF log of `records` (one run; results in the order given,
/// each kernel's as [`KernelRecord::all_suggestions`] lists them), pretty
/// printed with a final newline.
pub fn document<'a>(records: impl IntoIterator<Item = &'a KernelRecord>) -> String {
    let mut rules = registered_rules();
    let mut results = Vec::new();
    for r in records {
        for (function, s) in r.all_suggestions() {
            let index = rule_index(&mut rules, s.rule);
            results.push(result(r, function, s, index));
        }
    }
    let log = Log {
        schema: SCHEMA_URI,
        version: VERSION,
        runs: [Run {
            tool: Tool {
                driver: Driver {
                    name: "metal-profiler",
                    semantic_version: env!("CARGO_PKG_VERSION"),
                    rules,
                },
            },
            results,
        }],
    };
    let mut s = serde_json::to_string_pretty(&log).expect("a SARIF log serializes");
    s.push('\n');
    s
}

/// Every rule of the advice registry, with its help text.
fn registered_rules() -> Vec<RuleDescriptor> {
    advice::registry()
        .iter()
        .map(|r| {
            let help = || Some(text(r.help()));
            // the help is "what the rule checks: what it advises"; the
            // short description is its first part
            let short = r.help().split_once(": ").map_or(r.help(), |(what, _)| what);
            RuleDescriptor {
                id: r.id().to_string(),
                short_description: Some(text(&format!("{}.", short.trim_end_matches('.')))),
                full_description: help(),
                help: help(),
                properties: RuleProperties {
                    tags: ["performance"],
                },
            }
        })
        .collect()
}

/// The index of rule `id` in `rules`; a rule the registry does not hold
/// (none today) is appended without help text, so that every result
/// still names a descriptor.
fn rule_index(rules: &mut Vec<RuleDescriptor>, id: &str) -> usize {
    if let Some(k) = rules.iter().position(|d| d.id == id) {
        return k;
    }
    rules.push(RuleDescriptor {
        id: id.to_string(),
        short_description: None,
        full_description: None,
        help: None,
        properties: RuleProperties {
            tags: ["performance"],
        },
    });
    rules.len() - 1
}

fn text(s: &str) -> Text {
    Text {
        text: s.to_string(),
    }
}

/// One suggestion of kernel `r` (in `function`, `None`: main) as a result.
fn result<'a>(
    r: &'a KernelRecord,
    function: Option<&'a str>,
    s: &'a SuggestionOut,
    rule_index: usize,
) -> SarifResult<'a> {
    let function = function.unwrap_or(&r.name);
    let qualified = format!("{}::{function}", r.name);
    let at = format!("0x{:x}", s.offset);
    let mut message = s.message.trim_end().to_string();
    if !s.fact.is_empty() {
        message.push_str(&format!(" Fact: {}.", s.fact.trim_end_matches('.')));
    }
    message.push_str(&format!(" In {qualified} at {at}."));
    SarifResult {
        rule_id: s.rule,
        rule_index,
        level: level(s.severity),
        message: Text { text: message },
        locations: [Location {
            physical_location: r.source.as_deref().map(|p| PhysicalLocation {
                artifact_location: ArtifactLocation { uri: uri_of(p) },
            }),
            logical_locations: [
                LogicalLocation {
                    name: function.to_string(),
                    fully_qualified_name: qualified.clone(),
                    kind: "function",
                },
                LogicalLocation {
                    name: at.clone(),
                    fully_qualified_name: format!("{qualified}+{at}"),
                    kind: "instruction",
                },
            ],
        }],
        partial_fingerprints: BTreeMap::from([(
            FINGERPRINT_KEY,
            format!("{}:{qualified}:{at}", s.rule),
        )]),
        properties: ResultProperties {
            severity: s.severity,
            kernel: &r.name,
            function,
            offset: at,
            fact: &s.fact,
            figures: &s.figures,
            sites: s.sites.iter().map(|a| format!("0x{a:x}")).collect(),
        },
    }
}

/// A file path as given, as a relative URI reference: `\` becomes `/` and
/// every byte outside the unreserved characters and `/` is
/// percent-encoded (RFC 3986), so `my dir/k.archive` is
/// `my%20dir/k.archive`.
pub fn uri_of(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(b as char)
            }
            b'\\' => out.push('/'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}
