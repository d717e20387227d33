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

use crate::record::{FunctionOut, FunctionRows, KernelRecord};
use crate::Profile;
use agx_analysis::timing::MemParams;
use serde::ser::{Impossible, SerializeMap, SerializeSeq, SerializeStruct, Serializer};
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
/// ([`FunctionRows`]: no vector of a million rows in memory). The record's
/// fields are written as they are (what `#[serde(flatten)]` would do),
/// except `functions`: each called function's entry ends with its own
/// `instructions_detail` ([`FunctionsJson`]).
struct KernelJson<'a> {
    record: &'a KernelRecord,
    p: &'a Profile,
}

impl<'a> KernelJson<'a> {
    fn new(record: &'a KernelRecord, p: &'a Profile) -> Self {
        KernelJson { record, p }
    }
}

impl Serialize for KernelJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        self.record.serialize(RecordFields {
            map: &mut map,
            record: self.record,
            p: self.p,
            functions_next: false,
        })?;
        map.serialize_entry("instructions_detail", &FunctionRows::main(self.p))?;
        map.end()
    }
}

/// `kernels[].functions[]` with each called function's rows: the
/// record's entry (unchanged), then, for a called function,
/// `instructions_detail` (its rows from [`FunctionRows::function`], the
/// rows its annotated listing prints) as the entry's last field. Main's
/// entry (`functions[0]`) has none: the kernel's `instructions_detail` is
/// main's.
struct FunctionsJson<'a> {
    functions: &'a [FunctionOut],
    p: &'a Profile,
}

#[derive(Serialize)]
struct FunctionJson<'a> {
    #[serde(flatten)]
    function: &'a FunctionOut,
    instructions_detail: FunctionRows<'a>,
}

impl Serialize for FunctionsJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.functions.len()))?;
        for (k, function) in self.functions.iter().enumerate() {
            match FunctionRows::function(self.p, k).filter(|_| k > 0) {
                Some(instructions_detail) => seq.serialize_element(&FunctionJson {
                    function,
                    instructions_detail,
                })?,
                None => seq.serialize_element(function)?,
            }
        }
        seq.end()
    }
}

/// The serializer the record writes its fields through into the kernel
/// object's map `M` (as `#[serde(flatten)]` does), writing `functions` as
/// [`FunctionsJson`]. The record is a map or a struct; anything else is an
/// error.
struct RecordFields<'m, 'a, M> {
    map: &'m mut M,
    record: &'a KernelRecord,
    p: &'a Profile,
    /// The key just written is `functions`.
    functions_next: bool,
}

impl<M: SerializeMap> RecordFields<'_, '_, M> {
    fn value<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), M::Error> {
        if std::mem::take(&mut self.functions_next) {
            self.map.serialize_value(&FunctionsJson {
                functions: &self.record.functions,
                p: self.p,
            })
        } else {
            self.map.serialize_value(v)
        }
    }
}

fn not_fields<E: serde::ser::Error>() -> E {
    E::custom("a kernel record serializes as a map of fields")
}

macro_rules! not_fields {
    ($($f:ident($($t:ty),*)),* $(,)?) => {$(
        fn $f(self, $(_: $t),*) -> Result<(), M::Error> {
            Err(not_fields())
        }
    )*};
}

impl<'m, 'a, M: SerializeMap> Serializer for RecordFields<'m, 'a, M> {
    type Ok = ();
    type Error = M::Error;
    type SerializeSeq = Impossible<(), M::Error>;
    type SerializeTuple = Impossible<(), M::Error>;
    type SerializeTupleStruct = Impossible<(), M::Error>;
    type SerializeTupleVariant = Impossible<(), M::Error>;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Impossible<(), M::Error>;

    not_fields!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_char(char),
        serialize_str(&str),
        serialize_bytes(&[u8]),
        serialize_unit(),
        serialize_unit_struct(&'static str),
        serialize_unit_variant(&'static str, u32, &'static str),
    );

    fn serialize_none(self) -> Result<(), M::Error> {
        Ok(())
    }

    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<(), M::Error> {
        v.serialize(self)
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), M::Error> {
        v.serialize(self)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), M::Error> {
        Err(not_fields())
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, M::Error> {
        Err(not_fields())
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, M::Error> {
        Err(not_fields())
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, M::Error> {
        Err(not_fields())
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, M::Error> {
        Err(not_fields())
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self, M::Error> {
        Ok(self)
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, M::Error> {
        Ok(self)
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, M::Error> {
        Err(not_fields())
    }
}

impl<M: SerializeMap> SerializeMap for RecordFields<'_, '_, M> {
    type Ok = ();
    type Error = M::Error;

    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), M::Error> {
        // (the record's keys are field names: a string each)
        self.functions_next = matches!(
            serde_json::to_value(key),
            Ok(serde_json::Value::String(k)) if k == "functions"
        );
        self.map.serialize_key(key)
    }

    fn serialize_value<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), M::Error> {
        self.value(v)
    }

    fn end(self) -> Result<(), M::Error> {
        Ok(())
    }
}

impl<M: SerializeMap> SerializeStruct for RecordFields<'_, '_, M> {
    type Ok = ();
    type Error = M::Error;

    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), M::Error> {
        self.functions_next = key == "functions";
        self.map.serialize_key(key)?;
        self.value(v)
    }

    fn end(self) -> Result<(), M::Error> {
        Ok(())
    }
}

/// The kernel object of one profile, as a JSON value.
pub fn kernel_value(p: &Profile) -> serde_json::Value {
    let r = KernelRecord::build(p);
    serde_json::to_value(KernelJson::new(&r, p)).unwrap_or(serde_json::Value::Null)
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
    serde_json::to_writer(w, &KernelJson::new(r, p)).map_err(std::io::Error::other)
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
            .map(|(record, p)| KernelJson::new(record, p))
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
