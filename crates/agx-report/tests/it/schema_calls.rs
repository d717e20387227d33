//! The JSON document of a kernel that calls a helper (Apple's `simple_call`,
//! testdata/apple_stack) validates against docs/schema.json, with its
//! `calls`, `functions` and a `call` part in the breakdown.

use crate::common::repo;
use agx_analysis::program::{function_body, CodeSource, FunctionCode, NoFunction};
use agx_report::{json, Options, Profile};

/// Every function of a `__text` image at its offset.
struct Image(Vec<u8>);

impl CodeSource for Image {
    fn function_at(&self, target: i64) -> Result<FunctionCode, NoFunction> {
        let t = usize::try_from(target)
            .ok()
            .filter(|&t| t < self.0.len())
            .ok_or_else(|| NoFunction::Missing("outside the image".into()))?;
        let (insns, _) = agx_isa::stream::decode_all(&self.0[t..], t as u32);
        Ok(FunctionCode::new(
            t as u32,
            Some("helper".into()),
            function_body(&insns, t as u32),
        ))
    }
}

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
        &Image(img),
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
