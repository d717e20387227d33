//! The SARIF 2.1.0 JSON schema check shared by the test suites
//! (`testdata/sarif/sarif-2.1.0.json`, origin in `testdata/sarif/NOTE.md`),
//! with `format` checked (`uri-reference`, `uri`, `date-time`, `uuid`).

use serde_json::Value;
use std::path::Path;

/// The validator of the committed SARIF 2.1.0 schema.
pub fn validator() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/sarif/sarif-2.1.0.json");
    let schema: Value = serde_json::from_slice(&std::fs::read(&path).expect("the SARIF schema"))
        .expect("the SARIF schema is JSON");
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the SARIF schema compiles")
}

/// Every schema violation of `log`, with where it is.
pub fn errors(v: &jsonschema::Validator, log: &Value) -> Vec<String> {
    v.iter_errors(log)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect()
}
