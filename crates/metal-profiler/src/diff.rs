//! `metal-profile diff OLD NEW`: per-kernel before → after of the numbers
//! a CI cares about, and regression gates (`--fail-on`) that exit 3.
//!
//! OLD and NEW are `metal-profiler/1` JSON documents (from `batch --format
//! json` or a single profile), archives, or directories of archives (then
//! profiled like `batch`). Kernels are matched by (source, name); what is
//! left is matched by (source relative to that side's common directory,
//! name), then by name alone when it is unique on both sides — so
//! `diff old/k.archive new/k.archive` and `diff base/ head/` pair up.
//!
//! Gate grammar (`--fail-on SPEC`, may repeat):
//!
//! ```text
//! SPEC   := METRIC [ ":" LIMIT ]
//! METRIC := cycles | occupancy | registers | spills | fills | instructions | high-findings | removed
//! LIMIT  := NUMBER "%"      growth relative to the old value beyond NUMBER percent
//!         | NUMBER          growth beyond NUMBER in the metric's unit
//!                           (cycles, occupancy percentage points, GPRs, count)
//! ```
//!
//! Without a limit any worsening trips. Worsening is an increase, except for
//! occupancy where it is a drop. `high-findings` is the number of 🔴
//! suggestions of a kernel (every function's). `removed` (no limit) trips
//! when a kernel of OLD has no match in NEW.

use crate::batch::{self, Row};
use crate::cli::{DiffArgs, DiffFormat, ProfileArgs};
use crate::pipeline::{self, Error};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

/// The compared numbers of one kernel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Metrics {
    pub cycles: f64,
    /// Occupancy, percent of the maximum threads per core.
    pub occupancy: f64,
    /// 32-bit GPRs allocated.
    pub registers: f64,
    pub spills: f64,
    pub fills: f64,
    pub instructions: f64,
    /// 🔴 (high-severity) suggestions, every function's.
    pub high_findings: f64,
    /// Whether a timing model applies. Without one (Apple9) cycles,
    /// occupancy, spills and fills are not known (0 here, `-` and `null`
    /// in the outputs) and not compared; code bytes and loops are
    /// (0 for a timed kernel, which compares its six figures as before).
    pub timed: bool,
    pub code_bytes: f64,
    pub loops: f64,
}

/// One kernel of one side.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub source: String,
    pub name: String,
    pub m: Metrics,
}

impl Entry {
    fn of_row(r: &Row) -> Entry {
        Entry {
            source: r.source.clone(),
            name: r.name.clone(),
            m: Metrics {
                cycles: r.cycles,
                occupancy: r.occupancy_percent,
                registers: f64::from(r.gprs()),
                spills: f64::from(r.spills),
                fills: f64::from(r.fills),
                instructions: r.instructions as f64,
                high_findings: r.high_findings as f64,
                timed: r.untimed.is_none(),
                code_bytes: r.untimed.map_or(0.0, |(b, _)| b as f64),
                loops: r.untimed.map_or(0.0, |(_, l)| l as f64),
            },
        }
    }
}

/// A metric a gate can watch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    Cycles,
    Occupancy,
    Registers,
    Spills,
    Fills,
    Instructions,
    HighFindings,
    Removed,
}

const METRICS: &[(&str, Metric)] = &[
    ("cycles", Metric::Cycles),
    ("occupancy", Metric::Occupancy),
    ("registers", Metric::Registers),
    ("spills", Metric::Spills),
    ("fills", Metric::Fills),
    ("instructions", Metric::Instructions),
    ("high-findings", Metric::HighFindings),
    ("removed", Metric::Removed),
];

impl Metric {
    /// Whether the metric is known only with a timing model.
    fn priced(self) -> bool {
        matches!(
            self,
            Metric::Cycles | Metric::Occupancy | Metric::Spills | Metric::Fills
        )
    }
    fn value(self, m: &Metrics) -> f64 {
        match self {
            Metric::Cycles => m.cycles,
            Metric::Occupancy => m.occupancy,
            Metric::Registers => m.registers,
            Metric::Spills => m.spills,
            Metric::Fills => m.fills,
            Metric::Instructions => m.instructions,
            Metric::HighFindings => m.high_findings,
            Metric::Removed => 0.0,
        }
    }
    /// How much worse `new` is than `old` (positive = worse).
    fn worsening(self, old: &Metrics, new: &Metrics) -> f64 {
        let d = self.value(new) - self.value(old);
        if self == Metric::Occupancy {
            -d
        } else {
            d
        }
    }
}

/// How far a metric may worsen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Limit {
    Any,
    Percent(f64),
    Absolute(f64),
}

/// A parsed `--fail-on` spec.
#[derive(Clone, Debug, PartialEq)]
pub struct Gate {
    pub spec: String,
    pub metric: Metric,
    pub limit: Limit,
}

/// Values are rounded to 2 decimals in documents; smaller differences are noise.
const EPS: f64 = 1e-6;

impl Gate {
    pub fn parse(spec: &str) -> Result<Gate, Error> {
        let s = spec.trim();
        let (m, lim) = match s.split_once(':') {
            Some((m, l)) => (m.trim(), Some(l.trim())),
            None => (s, None),
        };
        let metric = METRICS
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(m))
            .map(|(_, x)| *x)
            .ok_or_else(|| {
                Error::usage(format!(
                    "--fail-on '{spec}': unknown metric '{m}'; use one of {} (e.g. cycles:5%)",
                    METRICS
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
        let bad_limit = || {
            Error::usage(format!(
                "--fail-on '{spec}': the limit must be a non-negative number, optionally with %, e.g. {m}:5% or {m}:100"
            ))
        };
        let limit = match lim {
            None => Limit::Any,
            Some(l) => {
                if metric == Metric::Removed {
                    return Err(Error::usage(format!(
                        "--fail-on '{spec}': `removed` takes no limit"
                    )));
                }
                let (num, pct) = match l.strip_suffix('%') {
                    Some(n) => (n.trim(), true),
                    None => (l, false),
                };
                let v: f64 = num.parse().map_err(|_| bad_limit())?;
                if !(v.is_finite() && v >= 0.0) {
                    return Err(bad_limit());
                }
                if pct {
                    Limit::Percent(v)
                } else {
                    Limit::Absolute(v)
                }
            }
        };
        Ok(Gate {
            spec: s.to_string(),
            metric,
            limit,
        })
    }

    /// Whether this change of one kernel trips the gate.
    pub fn trips(&self, old: &Metrics, new: &Metrics) -> bool {
        if self.metric == Metric::Removed {
            return false;
        }
        // (a kernel without a timing model has no such figure to compare)
        if self.metric.priced() && !(old.timed && new.timed) {
            return false;
        }
        let w = self.metric.worsening(old, new);
        match self.limit {
            Limit::Any => w > EPS,
            Limit::Absolute(a) => w > a + EPS,
            Limit::Percent(p) => {
                let base = self.metric.value(old).abs();
                if base <= EPS {
                    w > EPS // from zero, any growth is unbounded growth
                } else {
                    w / base * 100.0 > p + EPS
                }
            }
        }
    }
}

/// Status of a kernel in the comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    Changed,
    Added,
    Removed,
    Unchanged,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Changed => "changed",
            Status::Added => "added",
            Status::Removed => "removed",
            Status::Unchanged => "unchanged",
        }
    }
}

/// A kernel of OLD, NEW or both.
#[derive(Clone, Debug)]
pub struct Pair {
    pub source: String,
    pub name: String,
    pub old: Option<Metrics>,
    pub new: Option<Metrics>,
}

impl Pair {
    pub fn status(&self) -> Status {
        match (&self.old, &self.new) {
            (Some(a), Some(b)) if a == b => Status::Unchanged,
            (Some(_), Some(_)) => Status::Changed,
            (None, _) => Status::Added,
            (_, None) => Status::Removed,
        }
    }
    fn cycles_change(&self) -> f64 {
        match (&self.old, &self.new) {
            (Some(a), Some(b)) if a.timed && b.timed => {
                pct(a.cycles, b.cycles).unwrap_or(f64::INFINITY)
            }
            _ => 0.0,
        }
    }
}

/// Relative change in percent (None from zero).
fn pct(old: f64, new: f64) -> Option<f64> {
    if old.abs() <= EPS {
        if (new - old).abs() <= EPS {
            Some(0.0)
        } else {
            None
        }
    } else {
        Some((new - old) / old * 100.0)
    }
}

/// The result of comparing two sides.
#[derive(Clone, Debug)]
pub struct Comparison {
    pub pairs: Vec<Pair>,
    /// Per gate: the kernels that tripped it.
    pub gates: Vec<(Gate, Vec<String>)>,
}

impl Comparison {
    pub fn tripped(&self) -> bool {
        self.gates.iter().any(|(_, k)| !k.is_empty())
    }
}

/// Directory part of a source path, as components.
fn dir_components(s: &str) -> Vec<String> {
    let p = Path::new(s);
    p.parent()
        .map(|d| {
            d.components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Each source relative to the longest directory all sources of the side share.
fn relative_sources(entries: &[Entry]) -> Vec<String> {
    let mut common: Option<Vec<String>> = None;
    for e in entries.iter().filter(|e| !e.source.is_empty()) {
        let d = dir_components(&e.source);
        common = Some(match common {
            None => d,
            Some(c) => c
                .into_iter()
                .zip(d)
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| a)
                .collect(),
        });
    }
    let skip = common.map_or(0, |c| c.len());
    entries
        .iter()
        .map(|e| {
            let comps: Vec<String> = Path::new(&e.source)
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            comps.get(skip..).unwrap_or(&[]).join("/")
        })
        .collect()
}

/// Matches the kernels of two sides (see the module comment) and applies
/// the gates.
pub fn compare(old: &[Entry], new: &[Entry], gates: &[Gate]) -> Comparison {
    let mut old_used = vec![false; old.len()];
    let mut new_match: Vec<Option<usize>> = vec![None; new.len()];
    let rel_old = relative_sources(old);
    let rel_new = relative_sources(new);
    let exact = |v: &'_ [Entry]| -> Vec<(String, String)> {
        v.iter()
            .map(|e| (e.source.clone(), e.name.clone()))
            .collect()
    };
    let relative = |v: &[Entry], rel: &[String]| -> Vec<(String, String)> {
        v.iter()
            .zip(rel)
            .map(|(e, r)| (r.clone(), e.name.clone()))
            .collect()
    };
    let passes = [
        (exact(old), exact(new)),
        (relative(old, &rel_old), relative(new, &rel_new)),
    ];
    for (ko, kn) in &passes {
        let mut index: HashMap<&(String, String), Vec<usize>> = HashMap::new();
        for i in (0..old.len()).rev().filter(|&i| !old_used[i]) {
            index.entry(&ko[i]).or_default().push(i);
        }
        for j in 0..new.len() {
            if new_match[j].is_some() {
                continue;
            }
            if let Some(i) = index.get_mut(&kn[j]).and_then(|v| v.pop()) {
                old_used[i] = true;
                new_match[j] = Some(i);
            }
        }
    }
    // by name alone when unique among the rest on both sides
    let mut count_old: HashMap<&str, (usize, usize)> = HashMap::new();
    for i in (0..old.len()).filter(|&i| !old_used[i]) {
        let c = count_old.entry(old[i].name.as_str()).or_insert((0, i));
        c.0 += 1;
    }
    let mut count_new: HashMap<&str, usize> = HashMap::new();
    for j in (0..new.len()).filter(|&j| new_match[j].is_none()) {
        *count_new.entry(new[j].name.as_str()).or_default() += 1;
    }
    for j in 0..new.len() {
        if new_match[j].is_some() || count_new.get(new[j].name.as_str()) != Some(&1) {
            continue;
        }
        if let Some(&(1, i)) = count_old.get(new[j].name.as_str()) {
            old_used[i] = true;
            new_match[j] = Some(i);
        }
    }

    let mut pairs: Vec<Pair> = new
        .iter()
        .zip(&new_match)
        .map(|(e, m)| Pair {
            source: e.source.clone(),
            name: e.name.clone(),
            old: m.map(|i| old[i].m),
            new: Some(e.m),
        })
        .collect();
    pairs.extend(
        old.iter()
            .zip(&old_used)
            .filter(|(_, u)| !**u)
            .map(|(e, _)| Pair {
                source: e.source.clone(),
                name: e.name.clone(),
                old: Some(e.m),
                new: None,
            }),
    );
    // changed first, worst cycles change first; then added, removed, unchanged
    pairs.sort_by(|a, b| {
        a.status()
            .cmp(&b.status())
            .then_with(|| b.cycles_change().total_cmp(&a.cycles_change()))
            .then_with(|| a.source.cmp(&b.source))
            .then_with(|| a.name.cmp(&b.name))
    });
    let gates = gates
        .iter()
        .map(|g| {
            let hit = pairs
                .iter()
                .filter(|p| match (&p.old, &p.new) {
                    (Some(a), Some(b)) => g.trips(a, b),
                    (Some(_), None) => g.metric == Metric::Removed,
                    _ => false,
                })
                .map(|p| p.name.clone())
                .collect();
            (g.clone(), hit)
        })
        .collect();
    Comparison { pairs, gates }
}

/// Reads one side: a JSON document, or archives profiled like `batch`.
pub fn load_side(
    path: &Path,
    jobs: usize,
    warnings: &mut Vec<String>,
) -> Result<Vec<Entry>, Error> {
    load_side_counted(path, &ProfileArgs::default(), jobs, warnings, &mut 0)
}

/// [`load_side`], adding to `unknown` the kernels profiled from archives
/// that hold encodings the G13 tables do not know (each also a warning).
fn load_side_counted(
    path: &Path,
    a: &ProfileArgs,
    jobs: usize,
    warnings: &mut Vec<String>,
    unknown: &mut usize,
) -> Result<Vec<Entry>, Error> {
    let label = path.display().to_string();
    let is_dir = std::fs::metadata(path).map(|m| m.is_dir()).unwrap_or(false);
    if !is_dir {
        let bytes = pipeline::read_path(path)?;
        let first = bytes.iter().find(|b| !b.is_ascii_whitespace()).copied();
        if first == Some(b'{') {
            return entries_from_json(&label, &bytes, warnings);
        }
    }
    let (rows, errors, _) = batch::collect_rows(&[path.to_path_buf()], a, jobs)?;
    if rows.is_empty() && !errors.is_empty() {
        // the error's source is the path itself when `path` is a file: name it once
        let e = &errors[0];
        return Err(Error::input(if e.source == label {
            format!("{label}: {}", e.error)
        } else {
            format!("{label}: {}: {}", e.source, e.error)
        }));
    }
    for e in errors {
        warnings.push(format!("{label}: {}: {}", e.source, e.error));
    }
    for r in &rows {
        let lines = r.unknown_lines();
        *unknown += usize::from(!lines.is_empty());
        warnings.extend(lines.into_iter().map(|w| format!("{label}: {w}")));
    }
    Ok(rows.iter().map(Entry::of_row).collect())
}

/// The kernels of a `metal-profiler/1` document.
pub fn entries_from_json(
    label: &str,
    bytes: &[u8],
    warnings: &mut Vec<String>,
) -> Result<Vec<Entry>, Error> {
    let doc: Value = serde_json::from_slice(bytes).map_err(|e| {
        Error::input(format!(
            "{label}: not valid JSON ({e}); give a metal-profiler/1 document or an archive"
        ))
    })?;
    if doc.get("schema").and_then(Value::as_str) != Some(agx_report::json::SCHEMA) {
        return Err(Error::input(format!(
            "{label}: not a {} document (no matching \"schema\" field); produce one with `metal-profile batch --format json`",
            agx_report::json::SCHEMA
        )));
    }
    if let Some(errs) = doc.get("errors").and_then(Value::as_array) {
        for e in errs {
            warnings.push(format!(
                "{label}: recorded error: {}: {}",
                e.get("source").and_then(Value::as_str).unwrap_or("?"),
                e.get("error").and_then(Value::as_str).unwrap_or("?")
            ));
        }
    }
    let kernels = doc
        .get("kernels")
        .and_then(Value::as_array)
        .ok_or_else(|| Error::input(format!("{label}: the document has no \"kernels\" array")))?;
    kernels
        .iter()
        .enumerate()
        .map(|(k, v)| {
            let num = |ptr: &str| -> Result<f64, Error> {
                v.pointer(ptr).and_then(Value::as_f64).ok_or_else(|| {
                    Error::input(format!(
                        "{label}: kernels[{k}] has no number at {ptr}; is the document complete?"
                    ))
                })
            };
            let name = v
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| Error::input(format!("{label}: kernels[{k}] has no \"name\"")))?;
            // a kernel without a timing model (`untimed_kernel`: Apple9)
            let untimed = v.pointer("/timing/model").is_some_and(Value::is_null);
            Ok(Entry {
                source: v
                    .get("source")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                name: name.to_string(),
                m: if untimed {
                    untimed_metrics(v, &num)?
                } else {
                    Metrics {
                        cycles: num("/total_cycles")?,
                        occupancy: num("/occupancy/percent")?,
                        // (documents written before `allocated_gprs` existed:
                        // the half-registers in whole registers)
                        registers: match v
                            .pointer("/registers/allocated_gprs")
                            .and_then(Value::as_f64)
                        {
                            Some(g) => g,
                            None => (num("/registers/allocated_half")? / 2.0).ceil(),
                        },
                        spills: num("/spills")?,
                        fills: num("/fills")?,
                        instructions: num("/instructions")?,
                        high_findings: high_findings(v),
                        timed: true,
                        code_bytes: 0.0,
                        loops: 0.0,
                    }
                },
            })
        })
        .collect()
}

/// The metrics of an `untimed_kernel` object (no timing model: Apple9):
/// instructions, registers (the highest GPR + 1, from decoded operands),
/// code bytes and loops.
fn untimed_metrics(v: &Value, num: &dyn Fn(&str) -> Result<f64, Error>) -> Result<Metrics, Error> {
    Ok(Metrics {
        cycles: 0.0,
        occupancy: 0.0,
        registers: v
            .pointer("/registers/highest_gpr")
            .and_then(Value::as_f64)
            .map_or(0.0, |h| h + 1.0),
        spills: 0.0,
        fills: 0.0,
        instructions: num("/instructions")?,
        high_findings: high_findings(v),
        timed: false,
        code_bytes: num("/code_bytes")?,
        loops: v.get("loops").and_then(Value::as_array).map_or(0, Vec::len) as f64,
    })
}

/// The 🔴 (`"severity": "high"`) suggestions of a kernel object: its
/// own `suggestions` and those of `functions[1..]` (`functions[0]` is
/// main, whose suggestions are the kernel's); none when absent.
fn high_findings(v: &Value) -> f64 {
    let high = |list: Option<&Value>| {
        list.and_then(Value::as_array)
            .map_or(0, |l| l.iter().filter(|s| s["severity"] == "high").count())
    };
    let callees: usize = v.get("functions").and_then(Value::as_array).map_or(0, |f| {
        f.iter().skip(1).map(|f| high(f.get("suggestions"))).sum()
    });
    (high(v.get("suggestions")) + callees) as f64
}

/// `metal-profile diff`.
pub fn run_diff(d: &DiffArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<(), Error> {
    let gates = d
        .fail_on
        .iter()
        .map(|s| Gate::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    if d.jobs == Some(0) {
        return Err(Error::usage("--jobs must be at least 1"));
    }
    let jobs = batch::jobs_or_default(d.jobs);
    let mut warnings = Vec::new();
    let mut unknown = 0;
    let a = ProfileArgs {
        gpu: d.gpu.clone(),
        ..ProfileArgs::default()
    };
    let old = load_side_counted(&d.old, &a, jobs, &mut warnings, &mut unknown)?;
    let new = load_side_counted(&d.new, &a, jobs, &mut warnings, &mut unknown)?;
    for w in &warnings {
        let _ = writeln!(err, "warning: {w}");
    }
    // nothing to compare: a gate would pass unnoticed (issue 29)
    if old.is_empty() && new.is_empty() {
        return Err(Error::input(format!(
            "nothing to compare: neither {} nor {} holds a kernel; give archives, directories of archives or metal-profiler/1 documents",
            d.old.display(),
            d.new.display()
        )));
    }
    let c = compare(&old, &new, &gates);
    let text = match d.format {
        DiffFormat::Text => text(&c, &d.old, &d.new, d.all),
        DiffFormat::Markdown => markdown(&c, d.all),
        DiffFormat::Json => {
            let mut s = serde_json::to_string_pretty(&to_json(&c, &d.old, &d.new))
                .map_err(|e| Error::input(format!("cannot serialize: {e}")))?;
            s.push('\n');
            s
        }
    };
    out.write_all(text.as_bytes())
        .map_err(|e| Error::input(format!("cannot write output: {e}")))?;
    if c.tripped() {
        let which: Vec<String> = c
            .gates
            .iter()
            .filter(|(_, k)| !k.is_empty())
            .map(|(g, k)| format!("{} ({} kernel(s))", g.spec, k.len()))
            .collect();
        return Err(Error {
            message: format!("regression gate tripped: {}", which.join(", ")),
            code: 3,
        });
    }
    if unknown > 0 && !d.allow_unknown {
        let _ = writeln!(
            err,
            "{}",
            pipeline::with_exit_note(
                format!("warning: {unknown} kernel(s) hold encodings the G13 tables do not know (listed above); their figures leave them out"),
                false
            )
        );
        return Err(Error::unknown_encodings());
    }
    Ok(())
}

fn fmt_num(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{}", x.round() as i64)
    } else {
        format!("{x:.2}")
    }
}

/// `old → new (+x%)`, or the value when unchanged, or one side.
fn cell(old: Option<f64>, new: Option<f64>, unit: &str, percent: bool) -> String {
    match (old, new) {
        (Some(a), Some(b)) if (a - b).abs() <= EPS => format!("{}{unit}", fmt_num(b)),
        (Some(a), Some(b)) => {
            let ch = if percent {
                match pct(a, b) {
                    Some(p) => format!(" ({p:+.1}%)"),
                    None => " (new)".to_string(),
                }
            } else {
                format!(" ({:+})", fmt_num(b - a))
            };
            format!("{}{unit} → {}{unit}{ch}", fmt_num(a), fmt_num(b))
        }
        (Some(a), None) => format!("{}{unit}", fmt_num(a)),
        (None, Some(b)) => format!("{}{unit}", fmt_num(b)),
        (None, None) => "-".into(),
    }
}

/// The five columns of a pair.
fn cells(p: &Pair) -> [String; 5] {
    let g = |f: fn(&Metrics) -> f64| (p.old.as_ref().map(f), p.new.as_ref().map(f));
    // figures only a timing model gives: `-` for a side without one
    let priced = |f: fn(&Metrics) -> f64| {
        let side = |m: &Option<Metrics>| m.as_ref().filter(|m| m.timed).map(f);
        (side(&p.old), side(&p.new))
    };
    let (c0, c1) = priced(|m| m.cycles);
    let (o0, o1) = priced(|m| m.occupancy);
    let (r0, r1) = g(|m| m.registers);
    let (s0, s1) = priced(|m| m.spills);
    let (f0, f1) = priced(|m| m.fills);
    let (i0, i1) = g(|m| m.instructions);
    [
        cell(c0, c1, "", true),
        cell(o0, o1, "%", false),
        cell(r0, r1, "", false),
        format!("{} / {}", cell(s0, s1, "", false), cell(f0, f1, "", false)),
        cell(i0, i1, "", true),
    ]
}

const HEADERS: [&str; 7] = [
    "kernel",
    "source",
    "cycles",
    "occupancy",
    "registers",
    "spills / fills",
    "instructions",
];

fn counts(c: &Comparison) -> [usize; 4] {
    let mut n = [0; 4];
    for p in &c.pairs {
        n[p.status() as usize] += 1;
    }
    n
}

fn summary_line(c: &Comparison) -> String {
    let [changed, added, removed, unchanged] = counts(c);
    format!(
        "{} kernel(s) compared: {changed} changed, {unchanged} unchanged, {added} added, {removed} removed",
        changed + unchanged,
    )
}

fn shown(c: &Comparison, all: bool) -> impl Iterator<Item = &Pair> {
    c.pairs
        .iter()
        .filter(move |p| all || p.status() != Status::Unchanged)
}

/// The terminal table.
pub fn text(c: &Comparison, old: &Path, new: &Path, all: bool) -> String {
    let mut rows: Vec<[String; 7]> = Vec::new();
    for p in shown(c, all) {
        let [a, b, r, s, i] = cells(p);
        let name = match p.status() {
            Status::Added => format!("+ {}", p.name),
            Status::Removed => format!("- {}", p.name),
            _ => p.name.clone(),
        };
        rows.push([name, p.source.clone(), a, b, r, s, i]);
    }
    let mut w = HEADERS.map(|h| h.chars().count());
    for r in &rows {
        for (k, x) in r.iter().enumerate() {
            w[k] = w[k].max(x.chars().count());
        }
    }
    let line = |cols: &[String; 7]| {
        let mut s = String::new();
        for (k, x) in cols.iter().enumerate() {
            let pad = w[k] - x.chars().count();
            s.push_str(x);
            if k + 1 < cols.len() {
                s.push_str(&" ".repeat(pad + 2));
            }
        }
        s.push('\n');
        s
    };
    let mut s = format!(
        "metal-profile diff: {} → {}\n",
        old.display(),
        new.display()
    );
    let _ = writeln!(s, "{}\n", summary_line(c));
    if !rows.is_empty() {
        s.push_str(&line(&HEADERS.map(String::from)));
        for r in &rows {
            s.push_str(&line(r));
        }
        s.push('\n');
    }
    s.push_str(&untimed_note(c, all));
    for (g, k) in &c.gates {
        if k.is_empty() {
            let _ = writeln!(s, "gate {}: ok", g.spec);
        } else {
            let _ = writeln!(s, "gate {}: TRIPPED by {}", g.spec, k.join(", "));
        }
    }
    s
}

/// For kernels without a timing model (Apple9): their code bytes and
/// loops, and that cycles (occupancy, spills, fills) are not compared.
/// Empty when every kernel compared has a timing model.
fn untimed_note(c: &Comparison, all: bool) -> String {
    let untimed = |m: &Option<Metrics>| m.as_ref().is_some_and(|m| !m.timed);
    let pairs: Vec<&Pair> = shown(c, all)
        .filter(|p| untimed(&p.old) || untimed(&p.new))
        .collect();
    if pairs.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "{} kernel(s) without a timing model (no cycle figure): cycles, occupancy, spills and fills are not compared; instructions, registers (from decoded operands, a lower bound where operands are unknown), code bytes and loops are\n",
        pairs.len()
    );
    for p in pairs {
        let side =
            |m: &Option<Metrics>, f: fn(&Metrics) -> f64| m.as_ref().filter(|m| !m.timed).map(f);
        let _ = writeln!(
            s,
            "  {}: code bytes {}, loops {}",
            p.name,
            cell(
                side(&p.old, |m| m.code_bytes),
                side(&p.new, |m| m.code_bytes),
                "",
                false
            ),
            cell(
                side(&p.old, |m| m.loops),
                side(&p.new, |m| m.loops),
                "",
                false
            )
        );
    }
    s.push('\n');
    s
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|")
}

/// GitHub-flavoured markdown for a pull request.
pub fn markdown(c: &Comparison, all: bool) -> String {
    let mut s = String::from("### metal-profiler: kernel changes\n\n");
    let _ = writeln!(s, "{}\n", summary_line(c));
    if !c.gates.is_empty() {
        for (g, k) in &c.gates {
            if k.is_empty() {
                let _ = writeln!(s, "- ✅ `{}` passed", g.spec);
            } else {
                let names: Vec<String> = k.iter().map(|n| format!("`{}`", md_escape(n))).collect();
                let _ = writeln!(s, "- ❌ `{}` tripped by {}", g.spec, names.join(", "));
            }
        }
        s.push('\n');
    }
    let rows: Vec<&Pair> = shown(c, all).collect();
    if rows.is_empty() {
        s.push_str("No kernel changed.\n");
        return s;
    }
    let _ = writeln!(s, "| {} |", HEADERS.join(" | "));
    let _ = writeln!(
        s,
        "|{}",
        ["---|", "---|", "---:|", "---:|", "---:|", "---:|", "---:|"].concat()
    );
    for p in rows {
        let [a, b, r, sp, i] = cells(p);
        let name = match p.status() {
            Status::Added => format!("🆕 `{}`", md_escape(&p.name)),
            Status::Removed => format!("🗑️ ~~`{}`~~", md_escape(&p.name)),
            _ => format!("`{}`", md_escape(&p.name)),
        };
        let _ = writeln!(
            s,
            "| {name} | {} | {} | {} | {} | {} | {} |",
            md_escape(&p.source),
            a,
            b,
            r,
            sp,
            i
        );
    }
    s
}

fn metrics_json(m: &Option<Metrics>) -> Value {
    match m {
        None => Value::Null,
        Some(m) if m.timed => json!({
            "cycles": m.cycles,
            "occupancy_percent": m.occupancy,
            "registers": m.registers as u64,
            "spills": m.spills as u64,
            "fills": m.fills as u64,
            "instructions": m.instructions as u64,
            "high_findings": m.high_findings as u64,
        }),
        // no timing model: the priced figures are null, not compared
        Some(m) => json!({
            "cycles": null,
            "occupancy_percent": null,
            "registers": m.registers as u64,
            "spills": null,
            "fills": null,
            "instructions": m.instructions as u64,
            "high_findings": m.high_findings as u64,
            "timed": false,
            "code_bytes": m.code_bytes as u64,
            "loops": m.loops as u64,
        }),
    }
}

/// The JSON document (`schema: metal-profiler-diff/1`, docs/schema.json).
pub fn to_json(c: &Comparison, old: &Path, new: &Path) -> Value {
    let [changed, added, removed, unchanged] = counts(c);
    json!({
        "schema": "metal-profiler-diff/1",
        "tool": {"name": "metal-profiler", "version": env!("CARGO_PKG_VERSION")},
        "old": old.display().to_string(),
        "new": new.display().to_string(),
        "summary": {"changed": changed, "unchanged": unchanged, "added": added, "removed": removed},
        "kernels": c.pairs.iter().map(|p| json!({
            "name": p.name,
            "source": p.source,
            "status": p.status().as_str(),
            "old": metrics_json(&p.old),
            "new": metrics_json(&p.new),
            "cycles_change_percent": match (&p.old, &p.new) {
                (Some(a), Some(b)) if a.timed && b.timed => {
                    pct(a.cycles, b.cycles).map(agx_analysis::round::r2)
                }
                _ => None,
            },
        })).collect::<Vec<_>>(),
        "gates": c.gates.iter().map(|(g, k)| json!({
            "spec": g.spec,
            "tripped": !k.is_empty(),
            "kernels": k,
        })).collect::<Vec<_>>(),
        "tripped": c.tripped(),
    })
}
