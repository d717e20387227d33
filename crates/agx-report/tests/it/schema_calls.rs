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
    let doc: serde_json::Value =
        serde_json::from_str(&json::document(std::slice::from_ref(&p))).unwrap();
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

    // The helper's entry ends with its own rows (the rows its listing
    // prints, `FunctionRows::function`), main's has none (the kernel's
    // `instructions_detail` is main's); without them the document is the
    // record's own serialization.
    let fs = k["functions"].as_array().unwrap();
    assert!(fs[0].get("instructions_detail").is_none());
    let helper = fs[1].as_object().unwrap();
    assert_eq!(helper.keys().next_back().unwrap(), "instructions_detail");
    let rows = helper["instructions_detail"].as_array().unwrap();
    let wanted = agx_report::record::FunctionRows::function(&p, 1).unwrap();
    assert_eq!(rows.len(), wanted.len());
    assert_eq!(rows.len() as u64, helper["instructions"].as_u64().unwrap());
    for (j, r) in rows.iter().enumerate() {
        assert_eq!(*r, serde_json::to_value(wanted.row(j)).unwrap(), "row {j}");
    }
    assert!(rows.iter().any(|r| r["stack_kind"] == "save"));
    // (the stall marks are rows' fields too: under the cache model the
    // helper's load stalls hide behind its DRAM-bandwidth bound, issue 35)
    assert!(
        rows.iter()
            .any(|r| r["stall_mark"] == "exposed" || r["stall_mark"] == "hidden"),
        "{rows:?}"
    );
    let mut without = k.clone();
    without["functions"][1]
        .as_object_mut()
        .unwrap()
        .remove("instructions_detail");
    without
        .as_object_mut()
        .unwrap()
        .remove("instructions_detail");
    let record = agx_report::record::KernelRecord::build(&p);
    assert_eq!(without, serde_json::to_value(&record).unwrap());
}
