//! The JSON document of a kernel that calls a helper (Apple's `simple_call`,
//! testdata/apple_stack) validates against docs/schema.json, with its
//! `calls`, `functions` and a `call` part in the breakdown. The helper is
//! read from the `__text` image as the CLI reads raw code (`RawImage`).

use crate::common::repo;
use agx_analysis::raw_image::RawImage;
use agx_report::{json, Options, Profile};

#[test]
fn simple_call_document_validates() {
    let img = std::fs::read(
        repo().join("testdata/apple_stack/simple_call_TEXT_reconstructed_helper0_main0x180.binimg"),
    )
    .unwrap();
    let main = agx_isa::stream::decode_all(&img[0x180..], 0x180).0;
    let p = Profile::build_program(
        "simple_call".into(),
        None,
        main,
        None,
        vec![],
        &Options::default(),
        &RawImage::new(&img, 0x180, 0x180),
    );
    let doc: serde_json::Value = serde_json::from_str(&json::document(&[p])).unwrap();
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join("docs/schema.json")).unwrap())
            .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let k = &doc["kernels"][0];
    assert_eq!(
        k["calls"].as_array().unwrap().len(),
        2,
        "main's call and the helper's"
    );
    assert_eq!(k["functions"].as_array().unwrap().len(), 2);
    let parts = k["breakdown"].as_array().expect("breakdown");
    let call = parts
        .iter()
        .find(|b| b["part"] == "call")
        .expect("a call part");
    assert_eq!(call["at"], 0x1b6);
    let total: f64 = parts.iter().map(|b| b["cycles"].as_f64().unwrap()).sum();
    let t = k["total_cycles"].as_f64().unwrap();
    assert!((total - t).abs() < 0.05, "breakdown {total} vs total {t}");
}
