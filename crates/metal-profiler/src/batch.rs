//! `metal-profile batch PATH...`: every kernel of every archive, profiled in
//! parallel, summarised in one table (text / CSV) or one `metal-profiler/1`
//! document (JSON).
//!
//! Design (issue 15):
//! - Inputs: files are recognised by content. Directories are walked
//!   recursively in name order; a non-archive found inside a directory is
//!   skipped and counted, an explicit non-archive file is an error.
//! - Work: one task per kernel main body. Workers take tasks in order from a
//!   shared counter and re-read the archive of a task (cached per worker), so
//!   memory does not grow with the number of files.
//! - Output: results are written in task order through a re-order buffer;
//!   a worker may run at most `window` tasks ahead of the writer, so peak
//!   memory is bounded by jobs × the largest kernel. The text/CSV tables are
//!   sorted with a total order. Output is byte-identical for any `--jobs`.
//! - A bad file never stops the batch: it becomes an entry of `errors` and
//!   the exit code is 1 at the end.

use crate::app::{check_model_flags, profile_one};
use crate::cli::{BatchArgs, BatchFormat, ProfileArgs};
use crate::pipeline::{self, Error};
use agx_container::{Archive, Input, Part};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Condvar, Mutex};

/// One input file of the batch.
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub path: PathBuf,
    /// As printed in reports and `source` fields (the path as given or walked).
    pub display: String,
    /// Named on the command line (not found by walking a directory).
    pub explicit: bool,
}

/// A file (or path) that could not be profiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchError {
    pub source: String,
    pub error: String,
}

/// The one-line summary of a profiled kernel (the table row; `diff` reads
/// the same numbers from JSON documents).
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub source: String,
    /// Metal name (e.g. `matmul_naive`).
    pub name: String,
    pub instructions: usize,
    /// Allocated half-registers (`registers.allocated_half`).
    pub registers_half: u32,
    pub occupancy_threads: u32,
    pub occupancy_percent: f64,
    /// Estimated cycles (`total_cycles`).
    pub cycles: f64,
    /// What the model says bounds the kernel (`bottleneck`).
    pub bound: String,
    pub spills: u32,
    pub fills: u32,
    /// The first (most severe) suggestion, if any.
    pub top_suggestion: Option<String>,
    /// Positions of main holding encodings the G13 tables do not know
    /// (`unknown_encodings`; not a table column).
    pub unknown_encodings: usize,
}

/// Rounds as the JSON document does, so a row equals what its document says.
fn r2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

impl Row {
    pub fn of(source: &str, p: &agx_report::Profile) -> Row {
        let a = &p.analysis;
        Row {
            source: source.to_string(),
            name: p.name.clone(),
            instructions: a.instructions,
            registers_half: a.registers.allocated_half,
            occupancy_threads: a.occupancy.threads,
            occupancy_percent: r2(a.occupancy.percent),
            cycles: r2(p.timing.total_cycles),
            // the bound component of the kernel's dearest part (`ic`,
            // `memory_latency`, `call`, ...), as JSON `loops[].bound.by` names it
            bound: p.timing.dominant_bound().to_string(),
            spills: a.spills,
            fills: a.fills,
            top_suggestion: p.suggestions.first().map(|s| s.message.clone()),
            unknown_encodings: p.unknown_encodings,
        }
    }

    /// Registers in 32-bit GPRs (two half-registers each).
    pub fn gprs(&self) -> u32 {
        self.registers_half.div_ceil(2)
    }
}

/// The whole table order: most cycles first, then source, name.
fn row_order(a: &Row, b: &Row) -> std::cmp::Ordering {
    b.cycles
        .total_cmp(&a.cycles)
        .then_with(|| a.source.cmp(&b.source))
        .then_with(|| a.name.cmp(&b.name))
}

/// Walks `paths`: files as given, directories recursively in name order.
/// Paths that do not exist become errors.
pub fn discover(paths: &[PathBuf]) -> (Vec<SourceFile>, Vec<BatchError>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for p in paths {
        let display = p.display().to_string();
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => walk_dir(p, &mut files, &mut errors, &mut Vec::new()),
            Ok(_) => files.push(SourceFile {
                path: p.clone(),
                display,
                explicit: true,
            }),
            Err(e) => errors.push(BatchError {
                source: display,
                error: match e.kind() {
                    std::io::ErrorKind::NotFound => {
                        "no such file or directory; check the path".into()
                    }
                    _ => format!("cannot read: {e}"),
                },
            }),
        }
    }
    (dedup(files), errors)
}

/// Each file once: a file named twice, or reached through a directory and
/// by name (or through two paths), is profiled once, where it first
/// appears (by canonical path); named anywhere makes it explicit.
fn dedup(files: Vec<SourceFile>) -> Vec<SourceFile> {
    let mut seen: std::collections::HashMap<PathBuf, usize> = Default::default();
    let mut out: Vec<SourceFile> = Vec::with_capacity(files.len());
    for f in files {
        let key = std::fs::canonicalize(&f.path).unwrap_or_else(|_| f.path.clone());
        match seen.get(&key) {
            Some(&i) => out[i].explicit |= f.explicit,
            None => {
                seen.insert(key, out.len());
                out.push(f);
            }
        }
    }
    out
}

/// `seen`: the canonical directories on the current path, so a symlink back
/// to an ancestor is not walked again (and again).
fn walk_dir(
    dir: &Path,
    files: &mut Vec<SourceFile>,
    errors: &mut Vec<BatchError>,
    seen: &mut Vec<PathBuf>,
) {
    let canon = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    if seen.contains(&canon) {
        return;
    }
    seen.push(canon);
    walk_entries(dir, files, errors, seen);
    seen.pop();
}

fn walk_entries(
    dir: &Path,
    files: &mut Vec<SourceFile>,
    errors: &mut Vec<BatchError>,
    seen: &mut Vec<PathBuf>,
) {
    let rd = match std::fs::read_dir(dir) {
        Ok(r) => r,
        Err(e) => {
            errors.push(BatchError {
                source: dir.display().to_string(),
                error: format!("cannot read directory: {e}"),
            });
            return;
        }
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        // follows symlinks (loops are cut in `walk_dir`)
        match std::fs::metadata(&p) {
            Ok(m) if m.is_dir() => walk_dir(&p, files, errors, seen),
            Ok(m) if m.is_file() => files.push(SourceFile {
                display: p.display().to_string(),
                path: p,
                explicit: false,
            }),
            Ok(_) => {}
            Err(e) => errors.push(BatchError {
                source: p.display().to_string(),
                error: format!("cannot read: {e}"),
            }),
        }
    }
}

/// What reading a file gave.
enum Opened {
    Archive(Archive),
    NotArchive,
}

fn open(path: &Path, gpu: Option<&str>) -> Result<Opened, String> {
    let bytes = pipeline::read_path(path).map_err(|e| e.message)?;
    match agx_container::read(&bytes) {
        // one slice per archive, chosen as a single run chooses it (`--gpu`,
        // else the newest decodable)
        Ok(Input::Archive(a)) => pipeline::choose_slice(&a, gpu)
            .map(|(a, _)| Opened::Archive(a))
            .map_err(|e| e.message),
        Ok(Input::Raw(_)) => Ok(Opened::NotArchive),
        Err(e) => Err(e.to_string()),
    }
}

/// One kernel to profile: the `index`-th function of file `file`.
#[derive(Clone, Debug)]
struct Task {
    file: usize,
    function: usize,
}

/// The plan of a batch: the kernels to profile and what failed on the way.
#[derive(Debug, Default)]
pub struct Plan {
    files: Vec<SourceFile>,
    tasks: Vec<Task>,
    /// Errors by file order (each tagged with the file index for ordering).
    pub errors: Vec<BatchError>,
    /// Non-archive files skipped inside directories.
    pub skipped: usize,
    /// Archives that contributed kernels.
    pub archives: usize,
    /// Warnings of the archive reader, as `source: warning`.
    pub warnings: Vec<String>,
}

impl Plan {
    pub fn kernels(&self) -> usize {
        self.tasks.len()
    }
}

/// Reads every file once to find its kernels (then drops it).
pub fn plan(paths: &[PathBuf], gpu: Option<&str>) -> Plan {
    let (files, mut errors) = discover(paths);
    let mut plan = Plan::default();
    for (fi, f) in files.iter().enumerate() {
        match open(&f.path, gpu) {
            Ok(Opened::Archive(a)) => {
                for w in &a.warnings {
                    plan.warnings.push(format!("{}: {w}", f.display));
                }
                let before = plan.tasks.len();
                for (k, func) in a.functions.iter().enumerate() {
                    if func.part == Part::Main {
                        plan.tasks.push(Task {
                            file: fi,
                            function: k,
                        });
                    }
                }
                if plan.tasks.len() == before {
                    errors.push(BatchError {
                        source: f.display.clone(),
                        error: "archive has no kernel main body (_agc.main); try `metal-profile FILE --list`".into(),
                    });
                } else {
                    plan.archives += 1;
                }
            }
            Ok(Opened::NotArchive) if !f.explicit => plan.skipped += 1,
            Ok(Opened::NotArchive) => errors.push(BatchError {
                source: f.display.clone(),
                error: "not a Metal binary archive; for raw machine code use `metal-profile --binary FILE`".into(),
            }),
            Err(e) => errors.push(BatchError {
                source: f.display.clone(),
                error: e,
            }),
        }
    }
    plan.files = files;
    plan.errors = errors;
    plan
}

/// What a task hands back besides its table row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Want {
    /// The row only (text and CSV tables).
    Row,
    /// The kernel's JSON object too (`--format json`).
    Json,
    /// The whole profile too (`--format html`: one page holds every kernel).
    Profile,
}

/// The result of one task.
pub struct KernelResult {
    pub row: Row,
    /// The kernel's JSON object (with `source`), when asked for.
    pub json: Option<Vec<u8>>,
    /// The profile, when asked for (its name prefixed by the source file).
    pub profile: Option<Box<agx_report::Profile>>,
}

/// Profiles one task (re-reading its archive unless the worker's cache
/// holds it).
fn run_task(
    plan: &Plan,
    t: &Task,
    a: &ProfileArgs,
    want: Want,
    cache: &mut Option<(usize, Archive)>,
) -> Result<KernelResult, BatchError> {
    let file = &plan.files[t.file];
    let fail = |error: String| BatchError {
        source: file.display.clone(),
        error,
    };
    if cache.as_ref().map(|c| c.0) != Some(t.file) {
        *cache = None;
        match open(&file.path, a.gpu.as_deref()).map_err(&fail)? {
            Opened::Archive(ar) => *cache = Some((t.file, ar)),
            Opened::NotArchive => return Err(fail("file changed during the batch".into())),
        }
    }
    let archive = &cache.as_ref().expect("cached above").1;
    let f = archive
        .functions
        .get(t.function)
        .ok_or_else(|| fail("file changed during the batch".into()))?;
    let code = pipeline::function_code(archive, f);
    let origin = pipeline::Origin::Function { symbol: &f.symbol };
    let (insns, failed) =
        pipeline::decode_code_checked(&code, origin).map_err(|e| fail(e.message))?;
    let prolog = archive.prolog_of(f).map(|p| {
        let pc = pipeline::function_code(archive, p);
        pipeline::decode_code(&pc).0
    });
    let mut prof = profile_one(&code, insns, a, Some((archive, f)), prolog);
    prof.unknown_encodings = failed;
    let row = Row::of(&file.display, &prof);
    let json = if want == Want::Json {
        let mut buf = Vec::new();
        agx_report::json::write_kernel(&mut buf, &prof, Some(&file.display))
            .map_err(|e| fail(format!("cannot serialize: {e}")))?;
        Some(buf)
    } else {
        None
    };
    let profile = (want == Want::Profile).then(|| {
        let mut prof = prof;
        prof.name = format!("{} ({})", prof.name, file.display);
        Box::new(prof)
    });
    Ok(KernelResult { row, json, profile })
}

/// Number of worker threads for `--jobs` (default: all cores).
pub fn jobs_or_default(jobs: Option<usize>) -> usize {
    jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    })
}

/// Runs every task of `plan` on `jobs` threads and hands the results to
/// `sink` in task order (with `want_json` the re-order buffer keeps at
/// most `4 × jobs` results). Returns the task errors in task order.
pub fn execute(
    plan: &Plan,
    a: &ProfileArgs,
    jobs: usize,
    want: Want,
    progress: &mut dyn FnMut(usize, usize),
    sink: &mut dyn FnMut(KernelResult) -> Result<(), Error>,
) -> Result<Vec<BatchError>, Error> {
    let n = plan.tasks.len();
    let jobs = jobs.max(1).min(n.max(1));
    // JSON results hold a kernel's document: keep few in flight (memory is
    // then bounded by jobs × the largest kernel); table rows are tiny, so a
    // slow kernel never holds the other workers back.
    let window = if want == Want::Json {
        4 * jobs
    } else {
        n.max(1)
    };
    // (next task to hand out, tasks written so far)
    let state = Mutex::new((0usize, 0usize));
    let cv = Condvar::new();
    let (tx, rx) = mpsc::channel::<(usize, Result<KernelResult, BatchError>)>();
    let mut errors = Vec::new();
    let mut sink_error: Option<Error> = None;
    std::thread::scope(|s| {
        for _ in 0..jobs {
            let tx = tx.clone();
            let state = &state;
            let cv = &cv;
            s.spawn(move || {
                // one kernel per worker and a worker per job: no helper
                // threads inside a kernel (they would only compete)
                agx_analysis::par::set_serial(true);
                let mut cache = None;
                loop {
                    let i = {
                        let mut g = state.lock().unwrap_or_else(|e| e.into_inner());
                        loop {
                            if g.0 >= n {
                                return;
                            }
                            if g.0 < g.1 + window {
                                break;
                            }
                            g = cv.wait(g).unwrap_or_else(|e| e.into_inner());
                        }
                        g.0 += 1;
                        g.0 - 1
                    };
                    let t = &plan.tasks[i];
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        run_task(plan, t, a, want, &mut cache)
                    }))
                    .unwrap_or_else(|_| {
                        cache = None;
                        Err(BatchError {
                            source: plan.files[t.file].display.clone(),
                            error: "internal error while profiling this kernel (please report it)"
                                .into(),
                        })
                    });
                    if tx.send((i, r)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        let mut pending: BTreeMap<usize, Result<KernelResult, BatchError>> = BTreeMap::new();
        let mut next = 0usize;
        for (i, r) in rx.iter() {
            pending.insert(i, r);
            while let Some(r) = pending.remove(&next) {
                match r {
                    Ok(k) => {
                        if sink_error.is_none() {
                            if let Err(e) = sink(k) {
                                sink_error = Some(e);
                            }
                        }
                    }
                    Err(e) => errors.push(e),
                }
                next += 1;
                progress(next, n);
                let mut g = state.lock().unwrap_or_else(|e| e.into_inner());
                g.1 = next;
                if sink_error.is_some() {
                    g.0 = n; // stop handing out work
                }
                cv.notify_all();
            }
        }
    });
    match sink_error {
        Some(e) => Err(e),
        None => Ok(errors),
    }
}

/// The model flags of `batch` as the profile arguments the model reads.
fn model_args(b: &BatchArgs) -> ProfileArgs {
    ProfileArgs {
        model: b.model.clone(),
        gpu: b.gpu.clone(),
        ..ProfileArgs::default()
    }
}

fn io_err(e: std::io::Error) -> Error {
    Error::input(format!("cannot write output: {e}"))
}

/// Profiles `paths` and returns the rows (sorted as the table), the errors
/// and the plan's counts; used by `diff` for archive inputs and by Python.
pub fn collect_rows(
    paths: &[PathBuf],
    a: &ProfileArgs,
    jobs: usize,
) -> Result<(Vec<Row>, Vec<BatchError>, Plan), Error> {
    let plan = plan(paths, a.gpu.as_deref());
    let mut rows = Vec::new();
    let task_errors = execute(&plan, a, jobs, Want::Row, &mut |_, _| {}, &mut |k| {
        rows.push(k.row);
        Ok(())
    })?;
    let mut errors = plan.errors.clone();
    errors.extend(task_errors);
    Ok((rows, errors, plan))
}

/// `metal-profile batch`.
pub fn run_batch(b: &BatchArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<(), Error> {
    if b.paths.is_empty() {
        return Err(Error::usage(
            "batch: give at least one archive or directory (see metal-profile batch --help)",
        ));
    }
    if b.jobs == Some(0) {
        return Err(Error::usage("--jobs must be at least 1"));
    }
    let a = model_args(b);
    check_model_flags(&a)?;
    let jobs = jobs_or_default(b.jobs);
    let plan = plan(&b.paths, b.gpu.as_deref());
    for w in &plan.warnings {
        let _ = writeln!(err, "warning: {w}");
    }
    let bar = use_progress_bar();
    let mut progress = |done: usize, total: usize| {
        if bar {
            let _ = write!(err, "\r[{done}/{total}] kernels profiled");
            if done == total {
                let _ = writeln!(err);
            }
            let _ = err.flush();
        }
    };
    let want_json = b.format == BatchFormat::Json;
    let mut rows = Vec::new();
    let task_errors;
    if want_json {
        out.write_all(
            format!(
                "{{\n  \"schema\": \"{}\",\n  \"tool\": {{\"name\": \"metal-profiler\", \"version\": \"{}\"}},\n  \"kernels\": [",
                agx_report::json::SCHEMA,
                env!("CARGO_PKG_VERSION")
            )
            .as_bytes(),
        )
        .map_err(io_err)?;
        let mut first = true;
        task_errors = execute(&plan, &a, jobs, Want::Json, &mut progress, &mut |k| {
            out.write_all(if first { b"\n    " } else { b",\n    " })
                .map_err(io_err)?;
            first = false;
            out.write_all(k.json.as_deref().unwrap_or(b"null"))
                .map_err(io_err)?;
            rows.push(k.row);
            Ok(())
        })?;
        let mut errors = plan.errors.clone();
        errors.extend(task_errors.iter().cloned());
        let errs: Vec<serde_json::Value> = errors
            .iter()
            .map(|e| serde_json::json!({"source": e.source, "error": e.error}))
            .collect();
        let tail = format!(
            "{}],\n  \"errors\": {},\n  \"summary\": {{\"files\": {}, \"archives\": {}, \"kernels\": {}, \"skipped\": {}, \"failed\": {}}}\n}}\n",
            if rows.is_empty() { "" } else { "\n  " },
            serde_json::to_string(&errs).unwrap_or_else(|_| "[]".into()),
            plan.files.len(),
            plan.archives,
            rows.len(),
            plan.skipped,
            errors.len()
        );
        out.write_all(tail.as_bytes()).map_err(io_err)?;
    } else if b.format == BatchFormat::Html {
        // one page, kernels in task order (every profile is held until the
        // page is written: memory grows with the number of kernels here)
        let mut profiles = Vec::new();
        task_errors = execute(&plan, &a, jobs, Want::Profile, &mut progress, &mut |k| {
            profiles.extend(k.profile.map(|p| *p));
            rows.push(k.row);
            Ok(())
        })?;
        out.write_all(agx_report::html::document(&profiles).as_bytes())
            .map_err(io_err)?;
    } else {
        task_errors = execute(&plan, &a, jobs, Want::Row, &mut progress, &mut |k| {
            rows.push(k.row);
            Ok(())
        })?;
        rows.sort_by(row_order);
        let mut errors = plan.errors.clone();
        errors.extend(task_errors.iter().cloned());
        let text = if b.format == BatchFormat::Csv {
            csv(&rows)
        } else {
            table(&rows, &plan, errors.len())
        };
        out.write_all(text.as_bytes()).map_err(io_err)?;
    }
    let mut errors = plan.errors.clone();
    errors.extend(task_errors);
    let unknown = unknown_warnings(&rows, b.allow_unknown, err);
    for e in &errors {
        let _ = writeln!(err, "error: {}: {}", e.source, e.error);
    }
    if !errors.is_empty() {
        Err(Error::input(format!(
            "{} input(s) failed (listed above); the other kernels were profiled",
            errors.len()
        )))
    } else if unknown > 0 && !b.allow_unknown {
        Err(Error::unknown_encodings())
    } else {
        Ok(())
    }
}

/// One warning per kernel holding unknown encodings (as a single profile
/// prints it, with the source file); returns how many kernels.
pub fn unknown_warnings(rows: &[Row], allow_unknown: bool, err: &mut dyn Write) -> usize {
    let mut n = 0;
    for r in rows.iter().filter(|r| r.unknown_encodings > 0) {
        n += 1;
        let w = format!(
            "warning: {}: `{}`: {} position(s) hold encodings the G13 tables do not know; left out of the analysis",
            r.source, r.name, r.unknown_encodings
        );
        let _ = writeln!(err, "{}", pipeline::with_exit_note(w, allow_unknown));
    }
    n
}

/// A progress bar only when stderr is a terminal (never in pipes, CI logs
/// or tests).
fn use_progress_bar() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal()
}

/// Shortens `s` to `n` characters with an ellipsis.
fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// The text summary table.
pub fn table(rows: &[Row], plan: &Plan, failed: usize) -> String {
    let kw = rows
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(6, 32);
    let sw = rows
        .iter()
        .map(|r| r.source.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(6, 40);
    let mut s = format!(
        "{:<kw$}  {:<sw$}  {:>8}  {:>4}  {:>12}  {:>12}  {:<16}  {}\n",
        "kernel", "source", "insns", "regs", "occupancy", "cycles", "bound", "top suggestion"
    );
    for r in rows {
        let occ = format!("{:.0}% ({})", r.occupancy_percent, r.occupancy_threads);
        s.push_str(&format!(
            "{:<kw$}  {:<sw$}  {:>8}  {:>4}  {:>12}  {:>12.1}  {:<16}  {}\n",
            clip(&r.name, kw),
            clip(&r.source, sw),
            r.instructions,
            r.gprs(),
            occ,
            r.cycles,
            clip(&r.bound, 16),
            clip(r.top_suggestion.as_deref().unwrap_or("-"), 72)
        ));
    }
    s.push_str(&format!(
        "\n{} kernel(s) from {} archive(s); {} non-archive file(s) skipped; {} failed\n",
        rows.len(),
        plan.archives,
        plan.skipped,
        failed
    ));
    s
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The CSV table (RFC 4180 quoting), same rows and order as the text table.
pub fn csv(rows: &[Row]) -> String {
    let mut s = String::from(
        "kernel,source,instructions,registers_half,occupancy_threads,occupancy_percent,cycles,bound,spills,fills,top_suggestion\n",
    );
    for r in rows {
        s.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{}\n",
            csv_field(&r.name),
            csv_field(&r.source),
            r.instructions,
            r.registers_half,
            r.occupancy_threads,
            r.occupancy_percent,
            r.cycles,
            csv_field(&r.bound),
            r.spills,
            r.fills,
            csv_field(r.top_suggestion.as_deref().unwrap_or(""))
        ));
    }
    s
}
