//! The JSON document, schema `metal-profiler/1` (docs/schema.json).
//!
//! Field names spelled out by the issues are contracts: `schema`, `kernels`,
//! `name`, `gpu`, `instructions`, `code_bytes`, `registers{highest_half_index,
//! allocated_half, peak_live_half, peak_live_offset, uniform_half}`,
//! `occupancy{threads, percent}`, `spills`, `fills`, `loops[{start, end,
//! depth, instructions, cycles_per_iteration, latency_bound_cycles,
//! bottleneck}]`, `cycles{f32, f16, scib, ic, mem, alu}`,
//! `mesa_estimate{alu, fscib, ic}`, `bottleneck`, `suggestions[{severity,
//! offset, message}]`, `instructions_detail[]`. New fields may be added;
//! none is renamed.

use crate::record::{FunctionRows, KernelRecord};
use crate::Profile;
use agx_analysis::timing::MemParams;
use serde::Serialize;

/// Documents describing more instructions than this are written compact.
pub const PRETTY_LIMIT: usize = 50_000;

/// Schema identifier of the document.
pub const SCHEMA: &str = "metal-profiler/1";

#[derive(Serialize)]
struct Document<'a> {
    schema: &'static str,
    tool: Tool,
    kernels: Vec<KernelJson<'a>>,
}

#[derive(Serialize)]
struct Tool {
    name: &'static str,
    version: &'static str,
}

/// One kernel of the document: its record, then its
/// `instructions_detail` rows streamed from the profile one at a time
/// ([`FunctionRows`]: no vector of a million rows in memory).
#[derive(Serialize)]
struct KernelJson<'a> {
    #[serde(flatten)]
    record: &'a KernelRecord,
    instructions_detail: FunctionRows<'a>,
}

/// The kernel object of one profile, as a JSON value.
pub fn kernel_value(p: &Profile) -> serde_json::Value {
    let r = KernelRecord::build(p);
    serde_json::to_value(KernelJson {
        record: &r,
        instructions_detail: FunctionRows::main(p),
    })
    .unwrap_or(serde_json::Value::Null)
}

/// Writes one kernel object (compact, no newline) with its `source` file,
/// as `metal-profile batch` streams them into its document.
pub fn write_kernel<W: std::io::Write>(
    w: W,
    p: &Profile,
    source: Option<&str>,
) -> std::io::Result<()> {
    let mut r = KernelRecord::build(p);
    r.source = source.map(str::to_string);
    write_record(w, &r, p)
}

/// Writes the kernel object of record `r` of profile `p` (compact, no
/// newline).
pub fn write_record<W: std::io::Write>(w: W, r: &KernelRecord, p: &Profile) -> std::io::Result<()> {
    let k = KernelJson {
        record: r,
        instructions_detail: FunctionRows::main(p),
    };
    serde_json::to_writer(w, &k).map_err(std::io::Error::other)
}

/// Writes the versioned JSON document for these profiles to `w` (pretty
/// for up to [`PRETTY_LIMIT`] instructions, compact beyond), with a trailing
/// newline. Streaming: the rows of `instructions_detail` are written one at
/// a time.
pub fn write_document<W: std::io::Write>(mut w: W, profiles: &[Profile]) -> std::io::Result<()> {
    let records: Vec<KernelRecord> = profiles.iter().map(KernelRecord::build).collect();
    write_records(&mut w, &records, profiles)
}

/// [`write_document`] of records already built (`records[i]` of
/// `profiles[i]`).
pub fn write_records<W: std::io::Write>(
    mut w: W,
    records: &[KernelRecord],
    profiles: &[Profile],
) -> std::io::Result<()> {
    let doc = Document {
        schema: SCHEMA,
        tool: Tool {
            name: "metal-profiler",
            version: env!("CARGO_PKG_VERSION"),
        },
        kernels: records
            .iter()
            .zip(profiles)
            .map(|(record, p)| KernelJson {
                record,
                instructions_detail: FunctionRows::main(p),
            })
            .collect(),
    };
    let insns: usize = profiles.iter().map(|p| p.insns.len()).sum();
    // Pretty-printed for people; past PRETTY_LIMIT instructions compact,
    // which halves the size and the time of very large documents.
    if insns <= PRETTY_LIMIT {
        serde_json::to_writer_pretty(&mut w, &doc)?;
    } else {
        serde_json::to_writer(&mut w, &doc)?;
    }
    w.write_all(b"\n")
}

/// The versioned JSON document for these profiles, as a string (see
/// [`write_document`]).
pub fn document(profiles: &[Profile]) -> String {
    let insns: usize = profiles.iter().map(|p| p.insns.len()).sum();
    let mut buf = Vec::with_capacity(256 + insns * 300);
    if let Err(e) = write_document(&mut buf, profiles) {
        return format!("{{\"error\": \"{e}\"}}\n");
    }
    String::from_utf8(buf).unwrap_or_default()
}

/// The `--explain-model --format json` document: the same facts as
/// [`crate::explain_model`] (the default model's cost table with each row's source,
/// model rules, memory-parameter defaults), under the same schema id, with
/// `model` in place of `kernels`.
pub fn model_document() -> String {
    let t = agx_analysis::gpu::default_model().table();
    let doc = serde_json::json!({
        "schema": SCHEMA,
        "tool": { "name": "metal-profiler", "version": env!("CARGO_PKG_VERSION") },
        "model": {
            "gpu": t.name,
            "schedulers_per_core": t.schedulers_per_core,
            "simd_width": t.simd_width,
            "issue_cycles": t.issue_cycles,
            "raw_penalty_32": t.raw_penalty_32,
            "raw_penalty_16": t.raw_penalty_16,
            "entries": t.entries.iter().map(|e| serde_json::json!({
                "key": e.key.name(),
                "covers": e.covers,
                "unit": e.unit.name(),
                "latency": e.latency,
                "throughput": e.throughput,
                "source": e.source,
                "assumption": e.is_assumption(),
            })).collect::<Vec<_>>(),
            "rules": t.notes.iter().map(|(rule, source)| serde_json::json!({
                "rule": rule, "source": source,
            })).collect::<Vec<_>>(),
            "memory_parameters": MemParams::default().documented().into_iter().map(|(name, value, source)| serde_json::json!({
                "name": name, "value": value, "source": source,
            })).collect::<Vec<_>>(),
        }
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_and_pretty_documents_hold_the_same_values() {
        let p = crate::record::tests::matmul();
        let pretty: serde_json::Value =
            serde_json::from_str(&document(std::slice::from_ref(&p))).unwrap();
        let mut compact = Vec::new();
        write_kernel(&mut compact, &p, None).unwrap();
        let compact: serde_json::Value = serde_json::from_slice(&compact).unwrap();
        assert_eq!(pretty["kernels"][0], compact);
        assert_eq!(compact, kernel_value(&p));
        assert!(compact["instructions_detail"].as_array().unwrap().len() > 10);
    }
}
