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

use crate::cli::{BatchArgs, BatchFormat, ProfileArgs};
use crate::pipeline::{self, check_model_flags, Error};
use agx_container::{Archive, Input, Part};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Condvar, Mutex};

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
    /// Allocated 32-bit GPRs (`registers.allocated_gprs`).
    pub gprs: u32,
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
    /// 🔴 (high-severity) suggestions over every function (`diff
    /// --fail-on high-findings`; not a table column).
    pub high_findings: usize,
    /// Positions of main holding encodings the G13 tables do not know
    /// (`unknown_encodings`; not a table column).
    pub unknown_encodings: usize,
    /// Warnings about its called functions ([`pipeline::program_checks`]:
    /// calls with no code to follow, unknown encodings in callees); each
    /// counts as unknown code for the exit code. For a kernel without a
    /// timing model: its untimed profile's warnings (framing, unknowns).
    pub call_warnings: Vec<String>,
    /// A kernel without a timing model (Apple9): its code bytes and
    /// loops, which `diff` compares; its occupancy, cycles, bound, spills
    /// and fills are not known and print as `-` (`None`: a timed kernel).
    pub untimed: Option<(u64, usize)>,
}

impl Row {
    pub fn of(source: &str, p: &agx_report::Profile) -> Row {
        Row::of_record(source, &agx_report::KernelRecord::build(p))
    }

    /// The row of a kernel's record: its figures as the record holds them
    /// (nothing computed here). The top suggestion is the first of the
    /// highest severity over every function's (main's first, then each
    /// called function's, named: `helper: message`).
    pub fn of_record(source: &str, r: &agx_report::KernelRecord) -> Row {
        if let Some(u) = r.untimed.as_deref() {
            return Row::of_untimed(source, r, u);
        }
        let top = r
            .all_suggestions()
            .min_by_key(|(_, s)| s.severity)
            .map(|(f, s)| match f {
                None => s.message.clone(),
                Some(f) => format!("{f}: {}", s.message),
            });
        Row {
            source: source.to_string(),
            name: r.name.clone(),
            instructions: r.instructions,
            registers_half: r.registers.allocated_half,
            gprs: r.registers.allocated_gprs,
            occupancy_threads: r.occupancy.threads,
            occupancy_percent: r.occupancy.percent,
            cycles: r.timing.as_ref().map_or(0.0, |t| t.total_cycles),
            // the bound component of the kernel's dearest part (`ic`,
            // `memory_latency`, `call`, ...), as JSON `loops[].bound.by` names it
            bound: r.timing.as_ref().map_or("none", |t| t.bound_by).to_string(),
            spills: r.spills,
            fills: r.fills,
            top_suggestion: top,
            high_findings: high_findings(r),
            unknown_encodings: r.unknown_encodings,
            call_warnings: Vec::new(),
            untimed: None,
        }
    }

    /// The row of a kernel without a timing model (Apple9): its counts,
    /// registers from decoded operands (the highest GPR + 1, a lower bound
    /// when the record says so), code bytes and loops; nothing priced.
    fn of_untimed(
        source: &str,
        r: &agx_report::KernelRecord,
        u: &agx_report::untimed::UntimedSections,
    ) -> Row {
        let g = &u.registers;
        Row {
            source: source.to_string(),
            name: r.name.clone(),
            instructions: r.instructions,
            registers_half: g.highest_half_index.map_or(0, |h| h + 1),
            gprs: g.highest_gpr.map_or(0, |h| h + 1),
            occupancy_threads: 0,
            occupancy_percent: 0.0,
            cycles: 0.0,
            bound: "-".into(),
            spills: 0,
            fills: 0,
            top_suggestion: None,
            high_findings: high_findings(r),
            // (its unknowns are in its warnings, worded for its family)
            unknown_encodings: 0,
            call_warnings: crate::pipeline::untimed::untimed_warnings(r, &format!("`{}`", r.name)),
            untimed: Some((r.code_bytes, u.loops.len())),
        }
    }

    /// What the row holds of code not analysed, one line each without the
    /// `warning: ` prefix: main's unknown encodings, then the warnings about
    /// its called functions.
    pub fn unknown_lines(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.unknown_encodings > 0 {
            v.push(format!(
                "{}: `{}`: {} position(s) hold encodings the G13 tables do not know; left out of the analysis",
                self.source, self.name, self.unknown_encodings
            ));
        }
        for w in &self.call_warnings {
            let w = w.strip_prefix("warning: ").unwrap_or(w);
            v.push(format!("{}: {w}", self.source));
        }
        v
    }

    /// Registers in 32-bit GPRs (`registers.allocated_gprs`).
    pub fn gprs(&self) -> u32 {
        self.gprs
    }
}

/// How many of the record's suggestions (every function's) are 🔴.
fn high_findings(r: &agx_report::KernelRecord) -> usize {
    r.all_suggestions()
        .filter(|(_, s)| s.severity == agx_analysis::timing::suggest::Severity::High)
        .count()
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
    // the entry's type comes with the directory listing: no `stat` per
    // file, only per symlink (followed; loops are cut in `walk_dir`)
    let mut entries: Vec<(PathBuf, Option<std::fs::FileType>)> = rd
        .filter_map(|e| e.ok().map(|e| (e.path(), e.file_type().ok())))
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (p, ty) in entries {
        let kind = match ty {
            Some(t) if !t.is_symlink() => Ok((t.is_dir(), t.is_file())),
            _ => std::fs::metadata(&p).map(|m| (m.is_dir(), m.is_file())),
        };
        match kind {
            Ok((true, _)) => walk_dir(&p, files, errors, seen),
            Ok((_, true)) => files.push(SourceFile {
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
    // a family without a timing model (`--gpu g16g`): its slice, read
    // with every GPU's code
    if let (Some(g), Ok(Some(_))) = (gpu, pipeline::untimed_model(gpu)) {
        return match pipeline::read_input(&bytes) {
            Ok(Input::Raw(_)) => Ok(Opened::NotArchive),
            _ => pipeline::untimed::untimed_slice(&bytes, &pipeline::display_name(path), g)
                .map(|(a, i)| Opened::Archive(a.only_slice(i)))
                .map_err(|e| e.message),
        };
    }
    match pipeline::read_input(&bytes) {
        // one slice per archive, chosen as a single run chooses it (`--gpu`,
        // else the newest decodable)
        Ok(Input::Archive(a)) => pipeline::choose_slice(&a, gpu)
            .map(|(a, _)| Opened::Archive(a))
            .map_err(|e| e.message),
        Ok(Input::Raw(_)) => Ok(Opened::NotArchive),
        Err(e) => Err(e.to_string()),
    }
}

/// The plan of a batch: the files found by walking the inputs, then — once
/// [`execute`] has read them — what they held and what failed on the way.
#[derive(Debug, Default)]
pub struct Plan {
    files: Vec<SourceFile>,
    /// Errors of the walk and of reading the files, by file order.
    pub errors: Vec<BatchError>,
    /// Non-archive files skipped inside directories.
    pub skipped: usize,
    /// Archives that contributed kernels.
    pub archives: usize,
    /// Warnings of the archive reader, as `source: warning`.
    pub warnings: Vec<String>,
    /// Kernels found.
    kernels: usize,
}

impl Plan {
    pub fn kernels(&self) -> usize {
        self.kernels
    }
}

/// Walks `paths` for the files to read (reading them is the workers' job:
/// [`execute`]).
pub fn plan(paths: &[PathBuf]) -> Plan {
    let (files, errors) = discover(paths);
    Plan {
        files,
        errors,
        ..Plan::default()
    }
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
    /// The kernel's record too, with `source` (`--format sarif`).
    Record,
}

/// The result of one task.
pub struct KernelResult {
    pub row: Row,
    /// The kernel's JSON object (with `source`), when asked for.
    pub json: Option<Vec<u8>>,
    /// The profile, when asked for (its name prefixed by the source file).
    pub profile: Option<Box<agx_report::Profile>>,
    /// The record (with `source`), when asked for.
    pub record: Option<Box<agx_report::KernelRecord>>,
}

/// What reading one file found.
#[derive(Default)]
struct FileOutcome {
    /// Main bodies (function indices) to profile.
    kernels: usize,
    warnings: Vec<String>,
    error: Option<BatchError>,
    skipped: bool,
}

/// Reads file `fi` of the plan: its outcome, and the archive with the
/// indices of its kernel main bodies.
fn read_file(
    plan: &Plan,
    fi: usize,
    gpu: Option<&str>,
) -> (FileOutcome, Option<(Archive, Vec<usize>)>) {
    let f = &plan.files[fi];
    let fail = |error: String| FileOutcome {
        error: Some(BatchError {
            source: f.display.clone(),
            error,
        }),
        ..FileOutcome::default()
    };
    match open(&f.path, gpu) {
        Ok(Opened::Archive(a)) => {
            let warnings = a
                .warnings
                .iter()
                .map(|w| format!("{}: {w}", f.display))
                .collect();
            let mains: Vec<usize> = a
                .functions
                .iter()
                .enumerate()
                .filter(|(_, func)| func.part == Part::Main)
                .map(|(k, _)| k)
                .collect();
            let mut out = if mains.is_empty() {
                fail("archive has no kernel main body (_agc.main); try `metal-profile FILE --list`".into())
            } else {
                FileOutcome::default()
            };
            out.warnings = warnings;
            out.kernels = mains.len();
            (out, (!mains.is_empty()).then_some((a, mains)))
        }
        Ok(Opened::NotArchive) if !f.explicit => (
            FileOutcome {
                skipped: true,
                ..FileOutcome::default()
            },
            None,
        ),
        Ok(Opened::NotArchive) => (
            fail("not a Metal binary archive; for raw machine code use `metal-profile --binary FILE`".into()),
            None,
        ),
        Err(e) => (fail(e), None),
    }
}

/// Profiles one kernel: function `function` of the archive of file `file`.
fn run_task(
    plan: &Plan,
    file: usize,
    archive: &Archive,
    function: usize,
    a: &ProfileArgs,
    want: Want,
) -> Result<KernelResult, BatchError> {
    let file = &plan.files[file];
    let fail = |error: String| BatchError {
        source: file.display.clone(),
        error,
    };
    let f = &archive.functions[function];
    if let Ok(Some(model)) = pipeline::untimed_model(a.gpu.as_deref()) {
        return untimed_task(file, archive, f, a, model, want);
    }
    let k = pipeline::decode_function(archive, f, a)
        .and_then(|d| d.profile(a, true))
        .map_err(|e| fail(e.message))?;
    let (prof, call_warnings) = (k.profile, k.call_warnings);
    // (the kernel's record, built once: the row and the JSON read it)
    let mut record = agx_report::KernelRecord::build(&prof);
    let mut row = Row::of_record(&file.display, &record);
    row.call_warnings = call_warnings;
    let json = if want == Want::Json {
        let mut buf = Vec::new();
        record.source = Some(file.display.clone());
        agx_report::json::write_record(&mut buf, &record, &prof)
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
    let record = (want == Want::Record).then(|| {
        record.source = Some(file.display.clone());
        Box::new(record)
    });
    Ok(KernelResult {
        row,
        json,
        profile,
        record,
    })
}

/// [`run_task`] for a kernel without a timing model (Apple9): its record,
/// row and JSON object (`$defs/untimed_kernel`); no profile (no HTML).
fn untimed_task(
    file: &SourceFile,
    archive: &Archive,
    f: &agx_container::Function,
    a: &ProfileArgs,
    model: &'static agx_analysis::gpu::GpuModel,
    want: Want,
) -> Result<KernelResult, BatchError> {
    let gpu = a.gpu.as_deref().unwrap_or_default();
    let mut record = pipeline::untimed::function_record(archive, f, f.name.clone(), gpu, model);
    let row = Row::of_record(&file.display, &record);
    let json = if want == Want::Json {
        record.source = Some(file.display.clone());
        Some(serde_json::to_vec(&record).map_err(|e| BatchError {
            source: file.display.clone(),
            error: format!("cannot serialize: {e}"),
        })?)
    } else {
        None
    };
    let record = (want == Want::Record).then(|| {
        record.source = Some(file.display.clone());
        Box::new(record)
    });
    Ok(KernelResult {
        row,
        json,
        profile: None,
        record,
    })
}

/// Number of worker threads for `--jobs` (default: all cores).
pub fn jobs_or_default(jobs: Option<usize>) -> usize {
    jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    })
}

/// What [`execute`] tells its caller as the batch goes: a warning of the
/// archive reader as its file is reached, kernels written so far of those
/// found so far.
pub enum Note<'a> {
    Warning(&'a str),
    Progress(usize, usize),
}

/// A unit of work: read a file, or profile a kernel of a file read.
enum Work {
    Read(usize),
    Kernel {
        file: usize,
        /// Its place among the file's kernels.
        k: usize,
        archive: Arc<Archive>,
        function: usize,
    },
}

/// What a worker hands the writer.
enum Done {
    Read(usize, FileOutcome),
    Kernel(usize, usize, Result<KernelResult, BatchError>),
}

/// The work queue shared by the workers.
struct Queue {
    /// Kernels of the files read, by (file, kernel): the earliest is taken
    /// first (files finish reading out of order).
    kernels: BTreeMap<(usize, usize), Work>,
    /// The kernel the writer waits for: it may be taken whatever is in
    /// flight (else a full window of later kernels would wait for it
    /// forever).
    next: (usize, usize),
    /// The next file to read.
    next_file: usize,
    /// Files being read.
    reading: usize,
    /// Kernels handed out and not yet written.
    in_flight: usize,
    /// Stop handing out work (the writer failed).
    stop: bool,
}

/// Reads every file of `plan` and profiles every kernel on `jobs` worker
/// threads — reading and parsing a file is work a worker takes like
/// profiling a kernel (the kernels of the files read first are taken
/// first) — and hands the results to `sink` in (file, kernel) order, files
/// in walk order (with `want_json` at most `4 × jobs` kernels are handed
/// out and not yet written). Fills the plan's counts, warnings and read
/// errors (each warning also goes to `note` as its file is reached).
/// Returns the kernel errors in task order.
pub fn execute(
    plan: &mut Plan,
    a: &ProfileArgs,
    jobs: usize,
    want: Want,
    note: &mut dyn FnMut(Note<'_>),
    sink: &mut dyn FnMut(KernelResult) -> Result<(), Error>,
) -> Result<Vec<BatchError>, Error> {
    let n_files = plan.files.len();
    let jobs = jobs.max(1);
    // JSON results hold a kernel's document: keep few in flight (memory is
    // then bounded by jobs × the largest kernel); table rows are tiny, so a
    // slow kernel never holds the other workers back.
    let window = if want == Want::Json {
        4 * jobs
    } else {
        usize::MAX
    };
    let queue = Mutex::new(Queue {
        kernels: BTreeMap::new(),
        next: (0, 0),
        next_file: 0,
        reading: 0,
        in_flight: 0,
        stop: false,
    });
    let cv = Condvar::new();
    let (tx, rx) = mpsc::channel::<Done>();
    let workers = Workers {
        plan,
        a,
        want,
        window,
        queue: &queue,
        cv: &cv,
    };
    let mut outcomes: Vec<Option<FileOutcome>> = (0..n_files).map(|_| None).collect();
    let (errors, sink_error) = std::thread::scope(|s| {
        for _ in 0..jobs {
            let tx = tx.clone();
            let workers = &workers;
            s.spawn(move || workers.run(tx));
        }
        drop(tx);
        write_in_order(rx, &mut outcomes, &queue, &cv, note, sink)
    });
    add_outcomes(plan, outcomes);
    match sink_error {
        Some(e) => Err(e),
        None => Ok(errors),
    }
}

/// What the worker threads of [`execute`] share.
struct Workers<'a> {
    plan: &'a Plan,
    a: &'a ProfileArgs,
    want: Want,
    /// The most kernels handed out and not yet written.
    window: usize,
    queue: &'a Mutex<Queue>,
    cv: &'a Condvar,
}

impl Workers<'_> {
    /// One worker: takes work until there is none (or the writer stops),
    /// sending each result to the writer.
    fn run(&self, tx: mpsc::Sender<Done>) {
        // one kernel per worker and a worker per job: no helper
        // threads inside a kernel (they would only compete)
        agx_analysis::par::set_serial(true);
        while let Some(work) = self.next_work() {
            let done = match work {
                Work::Read(fi) => self.read(fi),
                Work::Kernel {
                    file,
                    k,
                    archive,
                    function,
                } => Done::Kernel(file, k, self.profile(file, &archive, function)),
            };
            if tx.send(done).is_err() {
                return;
            }
        }
    }

    /// The next work (None: no more, or stop), waiting for it.
    fn next_work(&self) -> Option<Work> {
        let n_files = self.plan.files.len();
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if q.stop {
                return None;
            }
            let first = q.kernels.keys().next().copied();
            if let Some(key) = first.filter(|&key| q.in_flight < self.window || key == q.next) {
                let w = q.kernels.remove(&key).expect("a key of the map");
                q.in_flight += 1;
                return Some(w);
            }
            // a file is read when no kernel waits (its
            // kernels then keep the workers busy)
            if q.kernels.is_empty() && q.next_file < n_files {
                q.next_file += 1;
                q.reading += 1;
                return Some(Work::Read(q.next_file - 1));
            }
            if q.kernels.is_empty() && q.reading == 0 {
                return None;
            }
            q = self.cv.wait(q).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Reads file `fi` and queues its kernels.
    fn read(&self, fi: usize) -> Done {
        let shared = self.plan;
        let (outcome, found) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            read_file(shared, fi, self.a.gpu.as_deref())
        }))
        .unwrap_or_else(|_| {
            let error = BatchError {
                source: shared.files[fi].display.clone(),
                error: "internal error while reading this file (please report it)".into(),
            };
            (
                FileOutcome {
                    error: Some(error),
                    ..FileOutcome::default()
                },
                None,
            )
        });
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((archive, mains)) = found {
            let archive = Arc::new(archive);
            for (k, function) in mains.into_iter().enumerate() {
                q.kernels.insert(
                    (fi, k),
                    Work::Kernel {
                        file: fi,
                        k,
                        archive: Arc::clone(&archive),
                        function,
                    },
                );
            }
        }
        q.reading -= 1;
        self.cv.notify_all();
        Done::Read(fi, outcome)
    }

    /// Profiles kernel `function` of file `file`.
    fn profile(
        &self,
        file: usize,
        archive: &Archive,
        function: usize,
    ) -> Result<KernelResult, BatchError> {
        let shared = self.plan;
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_task(shared, file, archive, function, self.a, self.want)
        }))
        .unwrap_or_else(|_| {
            Err(BatchError {
                source: shared.files[file].display.clone(),
                error: "internal error while profiling this kernel (please report it)".into(),
            })
        })
    }
}

/// The writer: hands the results to `sink` as they come, files in order,
/// each file's kernels in order (each file's warnings to `note` as it is
/// reached), and tells the workers what was written. Fills `outcomes`;
/// returns the kernel errors and the sink's error.
fn write_in_order(
    rx: mpsc::Receiver<Done>,
    outcomes: &mut [Option<FileOutcome>],
    queue: &Mutex<Queue>,
    cv: &Condvar,
    note: &mut dyn FnMut(Note<'_>),
    sink: &mut dyn FnMut(KernelResult) -> Result<(), Error>,
) -> (Vec<BatchError>, Option<Error>) {
    let mut errors = Vec::new();
    let mut sink_error: Option<Error> = None;
    let mut kernels_done: BTreeMap<(usize, usize), Result<KernelResult, BatchError>> =
        BTreeMap::new();
    // the file being written, its next kernel, whether its warnings
    // are out
    let (mut file, mut k, mut warned) = (0usize, 0usize, false);
    let (mut written, mut total) = (0usize, 0usize);
    for d in rx.iter() {
        match d {
            Done::Read(fi, o) => {
                total += o.kernels;
                outcomes[fi] = Some(o);
            }
            Done::Kernel(fi, ki, r) => {
                kernels_done.insert((fi, ki), r);
            }
        }
        let before = written;
        while let Some(o) = outcomes.get(file).and_then(|o| o.as_ref()) {
            if !warned {
                for w in &o.warnings {
                    note(Note::Warning(w));
                }
                warned = true;
            }
            if k < o.kernels {
                let Some(r) = kernels_done.remove(&(file, k)) else {
                    break;
                };
                match r {
                    Ok(kr) => {
                        if sink_error.is_none() {
                            if let Err(e) = sink(kr) {
                                sink_error = Some(e);
                            }
                        }
                    }
                    Err(e) => errors.push(e),
                }
                k += 1;
                written += 1;
                note(Note::Progress(written, total));
                continue;
            }
            file += 1;
            k = 0;
            warned = false;
        }
        let mut q = queue.lock().unwrap_or_else(|e| e.into_inner());
        if written > before || sink_error.is_some() || q.next != (file, k) {
            q.in_flight -= written - before;
            q.next = (file, k);
            q.stop |= sink_error.is_some();
            cv.notify_all();
        }
    }
    (errors, sink_error)
}

/// The plan's counts, warnings and read errors from the files' outcomes.
fn add_outcomes(plan: &mut Plan, outcomes: Vec<Option<FileOutcome>>) {
    let mut read_errors = Vec::new();
    for o in outcomes.into_iter().flatten() {
        plan.kernels += o.kernels;
        plan.skipped += o.skipped as usize;
        if o.kernels > 0 {
            plan.archives += 1;
        }
        plan.warnings.extend(o.warnings);
        read_errors.extend(o.error);
    }
    plan.errors.extend(read_errors);
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
    let mut plan = plan(paths);
    let mut rows = Vec::new();
    let task_errors = execute(&mut plan, a, jobs, Want::Row, &mut |_| {}, &mut |k| {
        rows.push(k.row);
        Ok(())
    })?;
    let mut errors = plan.errors.clone();
    errors.extend(task_errors);
    Ok((rows, errors, plan))
}

/// `metal-profile batch`.
pub fn run_batch(b: &BatchArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<(), Error> {
    let a = model_args(b);
    check_batch_args(b, &a)?;
    let jobs = jobs_or_default(b.jobs);
    let mut plan = plan(&b.paths);
    if plan.files.is_empty() {
        // nothing to read (missing paths, empty directories): one error line
        // and nothing on stdout, as the main command fails (issue 37 item 4)
        return Err(Error::input(nothing_to_read(b, &plan)));
    }
    let bar = use_progress_bar();
    let mut progress = |n: Note<'_>| match n {
        Note::Warning(w) => {
            let _ = writeln!(err, "warning: {w}");
        }
        // (the total grows as the files are read)
        Note::Progress(done, total) if bar => {
            let _ = write!(err, "\r[{done}/{total}] kernels profiled");
            let _ = err.flush();
        }
        Note::Progress(..) => {}
    };
    let mut run = BatchRun {
        plan: &mut plan,
        a: &a,
        jobs,
        progress: &mut progress,
        out,
    };
    let (rows, task_errors) = match b.format {
        BatchFormat::Json => run.json()?,
        BatchFormat::Html => run.html()?,
        BatchFormat::Sarif => run.sarif()?,
        _ => run.table(b.format == BatchFormat::Csv)?,
    };
    if bar && plan.kernels() > 0 {
        let _ = writeln!(err);
    }
    let mut errors = plan.errors.clone();
    errors.extend(task_errors);
    batch_outcome(b, &plan, &rows, &errors, err)
}

/// The batch's usage errors: no path, `--jobs 0`, HTML of an untimed GPU,
/// model flags that do not fit.
fn check_batch_args(b: &BatchArgs, a: &ProfileArgs) -> Result<(), Error> {
    if b.paths.is_empty() {
        return Err(Error::usage(
            "batch: give at least one archive or directory (see metal-profile batch --help)",
        ));
    }
    if b.jobs == Some(0) {
        return Err(Error::usage("--jobs must be at least 1"));
    }
    check_model_flags(a)?;
    if b.format == BatchFormat::Html {
        if let Some(model) = pipeline::untimed_model(a.gpu.as_deref())? {
            return Err(Error::usage(format!(
                "batch --format html: {} kernels have text, csv and json summaries (one HTML page per kernel: metal-profile FILE --gpu {} --format html)",
                model.isa.name,
                a.gpu.as_deref().unwrap_or_default()
            )));
        }
    }
    Ok(())
}

/// A batch being run and written in one of its formats; each format
/// returns the rows (for the warnings and the outcome) and the kernel
/// errors.
struct BatchRun<'a> {
    plan: &'a mut Plan,
    a: &'a ProfileArgs,
    jobs: usize,
    progress: &'a mut dyn FnMut(Note<'_>),
    out: &'a mut dyn Write,
}

type Rows = (Vec<Row>, Vec<BatchError>);

impl BatchRun<'_> {
    /// One JSON document, its kernels written as they are profiled.
    fn json(&mut self) -> Result<Rows, Error> {
        let mut rows = Vec::new();
        let head = format!(
            "{{\n  \"schema\": \"{}\",\n  \"tool\": {{\"name\": \"metal-profiler\", \"version\": \"{}\"}},\n  \"kernels\": [",
            agx_report::json::SCHEMA,
            env!("CARGO_PKG_VERSION")
        );
        // the document starts with its first kernel: a batch that profiles
        // none writes nothing to stdout (its error line says why)
        let mut first = true;
        let out = &mut *self.out;
        let task_errors = execute(
            self.plan,
            self.a,
            self.jobs,
            Want::Json,
            &mut *self.progress,
            &mut |k| {
                if first {
                    out.write_all(head.as_bytes()).map_err(io_err)?;
                }
                out.write_all(if first { b"\n    " } else { b",\n    " })
                    .map_err(io_err)?;
                first = false;
                out.write_all(k.json.as_deref().unwrap_or(b"null"))
                    .map_err(io_err)?;
                rows.push(k.row);
                Ok(())
            },
        )?;
        let plan = &*self.plan;
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
        if !rows.is_empty() {
            self.out.write_all(tail.as_bytes()).map_err(io_err)?;
        }
        Ok((rows, task_errors))
    }

    /// One HTML page, kernels in task order (every profile is held until
    /// the page is written: memory grows with the number of kernels here).
    fn html(&mut self) -> Result<Rows, Error> {
        let mut rows = Vec::new();
        let mut profiles = Vec::new();
        let task_errors = execute(
            self.plan,
            self.a,
            self.jobs,
            Want::Profile,
            &mut *self.progress,
            &mut |k| {
                profiles.extend(k.profile.map(|p| *p));
                rows.push(k.row);
                Ok(())
            },
        )?;
        if !profiles.is_empty() {
            self.out
                .write_all(agx_report::html::document(&profiles).as_bytes())
                .map_err(io_err)?;
        }
        Ok((rows, task_errors))
    }

    /// One SARIF run: every kernel's results in task order, each located
    /// at its input file (the records are held until the log is written).
    fn sarif(&mut self) -> Result<Rows, Error> {
        let mut rows = Vec::new();
        let mut records = Vec::new();
        let task_errors = execute(
            self.plan,
            self.a,
            self.jobs,
            Want::Record,
            &mut *self.progress,
            &mut |k| {
                records.extend(k.record.map(|r| *r));
                rows.push(k.row);
                Ok(())
            },
        )?;
        if !rows.is_empty() {
            self.out
                .write_all(agx_report::sarif::document(&records).as_bytes())
                .map_err(io_err)?;
        }
        Ok((rows, task_errors))
    }

    /// The table (or CSV) of the rows, sorted, written at the end.
    fn table(&mut self, csv_format: bool) -> Result<Rows, Error> {
        let mut rows = Vec::new();
        let task_errors = execute(
            self.plan,
            self.a,
            self.jobs,
            Want::Row,
            &mut *self.progress,
            &mut |k| {
                rows.push(k.row);
                Ok(())
            },
        )?;
        rows.sort_by(row_order);
        let mut errors = self.plan.errors.clone();
        errors.extend(task_errors.iter().cloned());
        let text = if csv_format {
            csv(&rows)
        } else {
            table(&rows, self.plan, errors.len())
        };
        if !rows.is_empty() {
            self.out.write_all(text.as_bytes()).map_err(io_err)?;
        }
        Ok((rows, task_errors))
    }
}

/// How a batch ends: the unknown-encoding warnings, then the one error
/// line when no kernel was profiled, or each error and their count, or
/// nothing profiled, or unknown encodings not allowed.
fn batch_outcome(
    b: &BatchArgs,
    plan: &Plan,
    rows: &[Row],
    errors: &[BatchError],
    err: &mut dyn Write,
) -> Result<(), Error> {
    let unknown = unknown_warnings(rows, b.allow_unknown, err);
    if rows.is_empty() && !errors.is_empty() {
        // no kernel profiled: the failures are the one error line
        let each: Vec<String> = errors
            .iter()
            .map(|e| format!("{}: {}", e.source, e.error))
            .collect();
        return Err(Error::input(match each.as_slice() {
            [one] => one.clone(),
            _ => format!("no kernel was profiled: {}", each.join("; ")),
        }));
    }
    for e in errors {
        let _ = writeln!(err, "error: {}: {}", e.source, e.error);
    }
    if !errors.is_empty() {
        Err(Error::input(format!(
            "{} input(s) failed (listed above); the other kernels were profiled",
            errors.len()
        )))
    } else if rows.is_empty() {
        // an empty batch would pass a CI step unnoticed (issue 29)
        Err(Error::input(format!(
            "nothing to profile: no kernel in {} ({} non-archive file(s) skipped); give Metal binary archives or directories holding them",
            b.paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            plan.skipped
        )))
    } else if unknown > 0 && !b.allow_unknown {
        Err(Error::unknown_encodings())
    } else {
        Ok(())
    }
}

/// The one error line of a batch with no file to read: the path's own
/// problem when one path was given, else each path's problem in turn.
fn nothing_to_read(b: &BatchArgs, plan: &Plan) -> String {
    match plan.errors.as_slice() {
        [] => format!(
            "nothing to profile: no file in {}; give Metal binary archives or directories holding them",
            b.paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        [e] => format!("{}: {}", e.source, e.error),
        errs => format!(
            "nothing to profile: {}",
            errs.iter()
                .map(|e| format!("{}: {}", e.source, e.error))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    }
}

/// One warning per kernel holding unknown encodings (as a single profile
/// prints it, with the source file); returns how many kernels.
pub fn unknown_warnings(rows: &[Row], allow_unknown: bool, err: &mut dyn Write) -> usize {
    let mut n = 0;
    for r in rows {
        let lines = r.unknown_lines();
        n += usize::from(!lines.is_empty());
        for w in lines {
            let _ = writeln!(
                err,
                "{}",
                pipeline::with_exit_note(format!("warning: {w}"), allow_unknown)
            );
        }
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
        // (a kernel without a timing model: `-` where a figure is priced)
        let (occ, cycles) = if r.untimed.is_none() {
            (
                format!("{:.0}% ({})", r.occupancy_percent, r.occupancy_threads),
                format!("{:.1}", r.cycles),
            )
        } else {
            ("-".into(), "-".into())
        };
        s.push_str(&format!(
            "{:<kw$}  {:<sw$}  {:>8}  {:>4}  {:>12}  {:>12}  {:<16}  {}\n",
            clip(&r.name, kw),
            clip(&r.source, sw),
            r.instructions,
            r.gprs(),
            occ,
            cycles,
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
        // (a kernel without a timing model: `-` where a figure is priced)
        let (occ_cycles, stack) = match r.untimed {
            None => (
                format!(
                    "{},{},{}",
                    r.occupancy_threads, r.occupancy_percent, r.cycles
                ),
                format!("{},{}", r.spills, r.fills),
            ),
            Some(_) => ("-,-,-".to_string(), "-,-".to_string()),
        };
        s.push_str(&format!(
            "{},{},{},{},{occ_cycles},{},{stack},{}\n",
            csv_field(&r.name),
            csv_field(&r.source),
            r.instructions,
            r.registers_half,
            csv_field(&r.bound),
            csv_field(r.top_suggestion.as_deref().unwrap_or(""))
        ));
    }
    s
}
