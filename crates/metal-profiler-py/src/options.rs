//! The options of a profile that change its result, as Python gives them
//! (issue 37 item 3): one dict of keyword arguments, turned into the CLI's
//! [`ProfileArgs`] with the CLI's limits and Python's words. The keys are
//! the CLI's flags spelled as Python names (`--l1-hit-rate` ->
//! `l1_hit_rate`); `python/tests/test_cli_parity.py` walks the CLI's
//! options ([`super::introspect::cli_options`]) against them.

use crate::Fail;
use metal_profiler::cli::{parse_count, parse_threadgroup, Cli, PartArg, ProfileArgs, TripCount};
use metal_profiler::pipeline;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::BTreeMap;

/// The keys [`Options`] reads (`trip_count`: `--trip-count N`,
/// `trip_counts`: `--trip-count ADDR=N`, the rest: the flag of that name).
pub const KEYS: &[&str] = &[
    "trip_count",
    "trip_counts",
    "all_findings",
    "threadgroup",
    "chip",
    "l1_hit_rate",
    "l1_hit_latency",
    "l1_miss_latency",
];

/// The model options of one profile, extracted with the GIL held and
/// applied without it ([`Options::args`]).
#[derive(Debug, Default, Clone)]
pub struct Options {
    trip_count: Option<i64>,
    trip_counts: BTreeMap<i64, i64>,
    all_findings: bool,
    threadgroup: Option<String>,
    chip: Option<String>,
    l1_hit_rate: Option<f64>,
    l1_hit_latency: Option<f64>,
    l1_miss_latency: Option<f64>,
}

/// `d[key]` as a `T`, `None` when absent or `None`; a value of the wrong
/// type is a `TypeError` naming the keyword.
fn item<'py, T: FromPyObjectOwned<'py>>(
    d: &Bound<'py, PyDict>,
    key: &str,
    what: &str,
) -> PyResult<Option<T>> {
    match d.get_item(key)? {
        Some(v) if !v.is_none() => v.extract::<T>().map(Some).map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err(format!(
                "{key}= takes {what}, got {}",
                v.get_type()
                    .name()
                    .map_or_else(|_| "?".into(), |n| n.to_string())
            ))
        }),
        _ => Ok(None),
    }
}

impl Options {
    /// Reads the options from a dict of keyword arguments (`None`: no
    /// option). An unknown key is a `TypeError`, as Python's own for an
    /// unexpected keyword argument.
    pub fn from_dict(d: Option<&Bound<'_, PyDict>>) -> PyResult<Options> {
        let Some(d) = d else {
            return Ok(Options::default());
        };
        for k in d.keys() {
            let k: String = k.extract()?;
            if !KEYS.contains(&k.as_str()) {
                return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                    "unexpected keyword argument '{k}'; the profile options are {}",
                    KEYS.join(", ")
                )));
            }
        }
        Ok(Options {
            trip_count: item(d, "trip_count", "an int")?,
            trip_counts: item(d, "trip_counts", "a dict {header address: count}")?
                .unwrap_or_default(),
            all_findings: item(d, "all_findings", "a bool")?.unwrap_or(false),
            threadgroup: item(d, "threadgroup", "a shape such as \"16x16x1\"")?,
            chip: item(d, "chip", "a chip name such as \"M1 Max\"")?,
            l1_hit_rate: item(d, "l1_hit_rate", "a number")?,
            l1_hit_latency: item(d, "l1_hit_latency", "a number")?,
            l1_miss_latency: item(d, "l1_miss_latency", "a number")?,
        })
    }

    /// Profile arguments as the CLI parses them with no flags (its
    /// defaults), then `function` and these options, checked as the CLI
    /// checks its flags ([`pipeline::check_model_flags`]) with the
    /// keyword's name in the message.
    pub fn args(self, function: Option<String>) -> Result<ProfileArgs, Fail> {
        use clap::Parser;
        let cli = Cli::try_parse_from(["metal-profile"])
            .map_err(|e| Fail::Value(e.render().to_string()))?;
        let mut a = cli.profile;
        a.function = function;
        a.all_findings = self.all_findings;
        let m = &mut a.model;
        if let Some(n) = self.trip_count {
            // the CLI's limits and reasons (--trip-count's parser, then its check of 0)
            let n = parse_count(&n.to_string())
                .map_err(|e| Fail::Value(format!("trip_count={n}: {e}")))?;
            m.trip_counts.push(TripCount::All(n));
        }
        for (h, n) in self.trip_counts {
            let key = if h < 0 {
                h.to_string()
            } else {
                format!("{h:#x}")
            };
            let bad = |e: String| Fail::Value(format!("trip_counts={{{key}: {n}}}: {e}"));
            let header =
                u32::try_from(h).map_err(|_| bad(format!("{h} is not a loop header address")))?;
            let count = parse_count(&n.to_string()).map_err(bad)?;
            if count == 0 {
                return Err(bad(
                    "the iterations assumed per loop must be at least 1".into()
                ));
            }
            m.trip_counts.push(TripCount::Loop { header, count });
        }
        if let Some(s) = &self.threadgroup {
            let shape =
                parse_threadgroup(s).map_err(|e| Fail::Value(format!("threadgroup='{s}': {e}")))?;
            m.threadgroup = Some(shape);
        }
        if let Some(c) = &self.chip {
            if !chips().iter().any(|k| chip_matches(k, c)) {
                return Err(Fail::Value(format!(
                    "unknown chip '{c}'; known: {}",
                    chips().join(", ")
                )));
            }
        }
        m.chip = self.chip;
        m.l1_hit_rate = self.l1_hit_rate;
        m.l1_hit_latency = self.l1_hit_latency;
        m.l1_miss_latency = self.l1_miss_latency;
        pipeline::check_model_flags(&a)?;
        Ok(a)
    }
}

/// Whether `given` names the chip `known` (the GPU models' lookup:
/// [`agx_analysis::gpu::GpuModel::chip`]).
fn chip_matches(known: &str, given: &str) -> bool {
    agx_analysis::gpu::GPU_MODELS
        .iter()
        .filter_map(|m| m.chip(given))
        .any(|v| v.chip == known)
}

/// The chips `chip=` accepts: those of the GPU models (the CLI's `--chip`).
pub fn chips() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for m in agx_analysis::gpu::GPU_MODELS {
        for v in m.chips {
            if !out.contains(&v.chip) {
                out.push(v.chip);
            }
        }
    }
    out
}

/// `part=` as the CLI's `--part` (any case): `main` or `prolog`; `all`
/// (several profiles) has no one-result form.
pub fn part(p: Option<&str>) -> Result<PartArg, Fail> {
    use clap::ValueEnum;
    let Some(p) = p else {
        return Ok(PartArg::Main);
    };
    match PartArg::from_str(p, true) {
        Ok(PartArg::All) => Err(Fail::Value(
            "part='all' gives several profiles (prolog, main, helpers) and profile_archive() returns \
             one: use part='main' (its helpers are in result.functions) or part='prolog'"
                .into(),
        )),
        Ok(part) => Ok(part),
        Err(_) => Err(Fail::Value(format!(
            "part='{p}': use 'main' (the kernel body) or 'prolog' (the constant program)"
        ))),
    }
}

/// What `gpu=` names: `Some(model)` for a GPU whose code has no timing
/// model (profiled untimed), `None` for a timed one; a name no GPU model
/// knows is a `ValueError` listing the known ones, a GPU whose code cannot
/// be decoded one saying why.
pub fn gpu(name: &str) -> Result<Option<&'static agx_analysis::gpu::GpuModel>, Fail> {
    let Some(row) = agx_container::gpu_row(name) else {
        return Err(Fail::Value(format!(
            "unknown GPU '{name}'; known: {}",
            known_gpus().join(", ")
        )));
    };
    // a refused family (M5) says why (the CLI's message)
    let untimed = pipeline::untimed_model(Some(name)).map_err(|e| {
        Fail::Value(
            e.message
                .replacen(&format!("--gpu {name}"), &format!("gpu='{name}'"), 1),
        )
    })?;
    if agx_analysis::gpu::model_of(row).is_none() {
        return Err(Fail::Value(format!(
            "gpu='{name}': no GPU model reads {} code; give one of: {}",
            row.name,
            known_gpus().join(", ")
        )));
    }
    Ok(untimed)
}

/// The GPUs `gpu=` accepts: every row of agx-container's table with a GPU
/// model (`agx_analysis::gpu::model_of`), lower case as the CLI spells
/// them.
pub fn known_gpus() -> Vec<String> {
    agx_container::GPUS
        .iter()
        .filter(|r| agx_analysis::gpu::model_of(r).is_some())
        .map(|r| r.name.to_ascii_lowercase())
        .collect()
}
