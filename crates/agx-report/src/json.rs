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

use crate::record::{KernelRecord, StallMark};
use crate::Profile;
use agx_analysis::timing::MemParams;
use agx_isa::format::write_asm;
use agx_isa::Syntax;
use serde::Serialize;

/// Documents describing more instructions than this are written compact.
pub const PRETTY_LIMIT: usize = 50_000;

/// Schema identifier of the document.
pub const SCHEMA: &str = "metal-profiler/1";

/// Per-instruction figures are rounded by the one rule, as the record's.
use agx_analysis::round::r2;

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
/// `instructions_detail` rows streamed from the profile (no vector of a
/// million rows in memory).
#[derive(Serialize)]
struct KernelJson<'a> {
    #[serde(flatten)]
    record: &'a KernelRecord,
    instructions_detail: DetailSeq<'a>,
}

#[derive(Serialize)]
struct RawDep {
    producer: u32,
    penalty: f64,
    bits: u32,
}

/// The asm text of an instruction, serialized without an intermediate
/// `String` per instruction.
struct AsmText<'a>(&'a agx_isa::Instruction, Syntax);

thread_local! {
    /// The asm text being written (one buffer per thread, reused).
    static ASM: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

impl AsmText<'_> {
    /// `f` of the instruction's asm text (trailing blanks trimmed).
    fn with<R>(&self, f: impl FnOnce(&str) -> R) -> R {
        ASM.with(|b| {
            let mut b = b.borrow_mut();
            b.clear();
            write_asm(&mut *b, self.0, self.1);
            f(b.trim_end())
        })
    }
}

impl std::fmt::Display for AsmText<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.with(|s| f.write_str(s))
    }
}

impl Serialize for AsmText<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[derive(Serialize)]
struct Detail<'a> {
    offset: u32,
    size: u8,
    mnemonic: &'static str,
    text: AsmText<'a>,
    /// Native syntax, only where it differs from `text` (an encoding
    /// applegpu prints as another form, e.g. a stack adjust).
    #[serde(skip_serializing_if = "Option::is_none")]
    native: Option<AsmText<'a>>,
    unit: Option<&'static str>,
    cycles: Option<f64>,
    latency: Option<f64>,
    loop_depth: Option<u32>,
    stall: Option<f64>,
    stall_single: Option<f64>,
    raw_dep: Option<RawDep>,
    call_target: Option<&'a str>,
    raised: bool,
    /// Issue cycles of one execution (pipe throughput + RAW penalty, at
    /// least a dispatch slot).
    issue_cycles: Option<f64>,
    /// Its share of its region's cost × executions (the heat column; they
    /// sum to `total_cycles`).
    self_cycles: Option<f64>,
    executions: Option<f64>,
    /// Present (true) on a load whose address the divergence analysis
    /// proved uniform: one value for the whole SIMD-group, charged once per
    /// SIMD-group (issue 22).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    uniform_address: bool,
    /// On a stack access: `spill`, `fill`, `save`, `restore` or
    /// `private_array` (issue 27 item 4).
    #[serde(skip_serializing_if = "Option::is_none")]
    stack_kind: Option<&'static str>,
    /// The access facts of a memory instruction (issue 27): what its
    /// addresses are across the lanes and the iterations.
    #[serde(skip_serializing_if = "Option::is_none")]
    access: Option<&'a agx_analysis::address::Access>,
    /// The listing's stall mark (`exposed` or `hidden`, thresholds
    /// [`crate::record::STALL_EXPOSED_CYCLES`] and
    /// [`crate::record::STALL_HIDDEN_CYCLES`]); absent when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    stall_mark: Option<StallMark>,
}

/// `instructions_detail`, serialized one instruction at a time (no vector
/// of a million records in memory).
struct DetailSeq<'a>(&'a Profile);

impl Serialize for DetailSeq<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let p = self.0;
        let details = &p.timing.instructions_detail;
        let mut seq = s.serialize_seq(Some(p.insns.len()))?;
        for (k, i) in p.insns.iter().enumerate() {
            seq.serialize_element(&detail(p, details, k, i))?;
        }
        seq.end()
    }
}

fn detail<'a>(
    p: &'a Profile,
    details: &'a [agx_analysis::timing::InsnDetail],
    k: usize,
    i: &'a agx_isa::Instruction,
) -> Detail<'a> {
    // details follow the instructions; fall back to a search by address
    let d = match details.get(k) {
        Some(d) if d.addr == i.addr => Some(d),
        _ => details
            .binary_search_by_key(&i.addr, |d| d.addr)
            .ok()
            .map(|x| &details[x]),
    };
    Detail {
        offset: i.addr,
        size: i.len,
        mnemonic: i.mnemonic(),
        text: AsmText(i, Syntax::Default),
        native: agx_isa::native::shadowed_form(i).map(|_| AsmText(i, Syntax::Native)),
        unit: d.map(|d| d.unit().name()),
        cycles: d.map(|d| r2(d.cycles())),
        latency: d.map(|d| r2(d.latency())),
        loop_depth: d.map(|d| d.loop_depth),
        stall: d.map(|d| r2(d.stall)),
        stall_single: d.map(|d| r2(d.stall_single)),
        raw_dep: d.and_then(|d| d.raw_dep()).map(|r| RawDep {
            producer: r.producer,
            penalty: r2(r.penalty),
            bits: r.bits,
        }),
        call_target: p.call_symbol(i.addr),
        raised: i.raised,
        issue_cycles: d.map(|d| r2(d.issue_cycles(p.options.gpu.table()))),
        self_cycles: d.map(|_| r2(p.timing.insn_cycles.get(k).copied().unwrap_or(0.0))),
        executions: d.map(|_| p.timing.executions.get(k).copied().unwrap_or(1.0)),
        uniform_address: d.is_some_and(|d| d.uniform_address),
        stack_kind: d.and_then(|d| d.stack_kind).map(|k| k.name()),
        access: p.program.functions.first().and_then(|f| f.access.get(k)),
        stall_mark: d.and_then(|d| StallMark::of(d.stall, d.stall_single)),
    }
}

/// The kernel object of one profile, as a JSON value.
pub fn kernel_value(p: &Profile) -> serde_json::Value {
    let r = KernelRecord::build(p);
    serde_json::to_value(KernelJson {
        record: &r,
        instructions_detail: DetailSeq(p),
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
        instructions_detail: DetailSeq(p),
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
                instructions_detail: DetailSeq(p),
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
