//! The JSON document validates against docs/schema.json for every Mesa
//! kernel in testdata (and the full shared corpus when present).

use agx_isa::stream::walk;
use agx_report::{json, Options, Profile};

use crate::common::repo;
use crate::shared_data;

fn kernels() -> Vec<(String, Vec<u8>, usize)> {
    let mut out = Vec::new();
    let mut dirs = vec![repo().join("testdata/mesa")];
    dirs.extend(shared_data::shared("corpus/mesa"));
    for dir in dirs {
        for d in shared_data::subdirs(&dir) {
            let name = d.file_name().unwrap().to_string_lossy().to_string();
            let Ok(bin) = std::fs::read(d.join(format!("{name}.bin"))) else {
                continue;
            };
            let layout: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(d.join("layout.json")).unwrap())
                    .unwrap();
            let size = layout["main"]["size"].as_u64().unwrap() as usize;
            out.push((name, bin, size));
        }
    }
    out
}

#[test]
fn json_validates_against_schema() {
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join("docs/schema.json")).unwrap())
            .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let ks = kernels();
    assert!(ks.len() >= 37, "expected the Mesa kernels in testdata/mesa");
    for (name, bin, size) in ks {
        let insns: Vec<_> = walk(&bin[..size.min(bin.len())], 0)
            .filter_map(|i| i.into_insn())
            .collect();
        let p = Profile::build(
            name.clone(),
            Some("G13G".into()),
            insns,
            None,
            vec![],
            &Options::default(),
        );
        let doc: serde_json::Value = serde_json::from_str(&json::document(&[p])).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&doc)
            .map(|e| format!("{} at {}", e, e.instance_path))
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
        assert_eq!(doc["schema"], "metal-profiler/1");
    }
}

#[test]
fn schema_rejects_a_broken_document() {
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join("docs/schema.json")).unwrap())
            .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let bad = serde_json::json!({"schema": "metal-profiler/1", "kernels": [{"name": "x"}]});
    assert!(!validator.is_valid(&bad));
}

/// `--explain-model` as text and as JSON list the same memory parameters
/// with the same values (one list serves both).
#[test]
fn explain_model_text_and_json_list_the_same_memory_parameters() {
    let doc: serde_json::Value = serde_json::from_str(&agx_report::json::model_document()).unwrap();
    let params = doc["model"]["memory_parameters"].as_array().unwrap();
    let names: Vec<&str> = params.iter().map(|p| p["name"].as_str().unwrap()).collect();
    let expected: Vec<&str> = agx_analysis::timing::table::MEM_PARAM_SOURCES
        .iter()
        .map(|(n, _)| *n)
        .collect();
    assert_eq!(names, expected);
    assert!(names.contains(&"dram_bytes_per_cycle_per_core"));
    let text = agx_report::explain_model();
    for p in params {
        let value = p["value"].as_f64().unwrap();
        let line = format!("- {} = {value} [", p["name"].as_str().unwrap());
        assert!(text.contains(&line), "text lacks `{line}`");
    }
}
