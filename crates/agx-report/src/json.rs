//! The JSON document (schema `metal-profiler/1`, docs/schema.json).

use crate::Profile;

/// The versioned JSON document for these profiles.
pub fn document(profiles: &[Profile]) -> String {
    let kernels: Vec<serde_json::Value> = profiles
        .iter()
        .map(|p| serde_json::json!({"name": p.name, "gpu": p.gpu, "instructions": p.insns.len()}))
        .collect();
    let doc = serde_json::json!({"schema": "metal-profiler/1", "kernels": kernels});
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}
