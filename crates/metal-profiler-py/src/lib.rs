//! `metal_profiler._native`: the PyO3 binding of the metal-profiler pipeline.
//!
//! Thin by design: every function here loads input, calls the same pipeline
//! functions as the `metal-profile` CLI (`metal_profiler::pipeline`, whose
//! `kernel` module is the one wiring from input to profile; `run_cli` runs
//! `metal_profiler::app` as the binary does) and converts the result to
//! Python objects. The Python-facing API (names
//! and shapes of the seed tool) lives in `python/metal_profiler/`.
//!
//! Errors become Python exceptions carrying the CLI's one-line message:
//! `FileNotFoundError`/`PermissionError`/`OSError` for unreadable files,
//! `RuntimeError` for compiling `.metal` (unsupported platform, compiler
//! diagnostics), `ValueError` for everything wrong with the input. A panic
//! in Rust never unwinds into the interpreter: [`guard`] turns it into a
//! `RuntimeError`.

mod introspect;
mod options;

use agx_container::Archive;
use agx_isa::format::{format_asm, format_line, write_reg};
use agx_isa::{Instruction, Syntax};
use metal_profiler::cli::{Cli, ProfileArgs};
use metal_profiler::pipeline::{self, CodeRef};
use options::Options;
use pyo3::exceptions::{
    PyFileNotFoundError, PyOSError, PyPermissionError, PyRuntimeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// Runs `f`, turning a Rust panic into a `RuntimeError`.
fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let what = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(PyRuntimeError::new_err(format!(
                "internal error in metal-profiler (please report): {what}"
            )))
        }
    }
}

/// Runs `f` without the GIL (and without panicking into Python).
fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> Result<T, Fail> + Send) -> PyResult<T> {
    let r = py.detach(|| catch_unwind(AssertUnwindSafe(f)));
    match r {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(e.into()),
        Err(p) => guard(|| std::panic::resume_unwind(p)),
    }
}

/// An error before it becomes a Python exception (built without the GIL).
#[derive(Debug)]
enum Fail {
    /// Bad input or usage: `ValueError`.
    Value(String),
    /// A file that cannot be read: the `OSError` subclass for `kind`.
    Io(std::io::ErrorKind, String),
    /// Compiling `.metal` failed or is unsupported here: `RuntimeError`.
    Runtime(String),
}

impl From<pipeline::Error> for Fail {
    fn from(e: pipeline::Error) -> Fail {
        Fail::Value(e.message)
    }
}

impl From<agx_container::ContainerError> for Fail {
    fn from(e: agx_container::ContainerError) -> Fail {
        Fail::from(pipeline::Error::from(e))
    }
}

impl From<Fail> for PyErr {
    fn from(f: Fail) -> PyErr {
        match f {
            Fail::Value(m) => PyValueError::new_err(python_terms(&m)),
            Fail::Runtime(m) => PyRuntimeError::new_err(python_terms(&m)),
            Fail::Io(kind, m) => match kind {
                std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(m),
                std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(m),
                _ => PyOSError::new_err(m),
            },
        }
    }
}

/// The pipeline's message (written for the command line) in Python's
/// terms: the arguments and functions of this package instead of flags
/// (issue 29: "pick one with -f", "check the file and --offset").
#[pyfunction]
fn python_terms(m: &str) -> String {
    const WORDS: &[(&str, &str)] = &[
        ("pick one with -f", "pick one with function_name="),
        ("check the file and --offset", "check the data and offset="),
        ("use `metal-profile --binary FILE`", "use profile_binary()"),
        ("use --binary FILE", "use profile_binary()"),
        ("see --list and --gpu", "see list_functions() and gpu="),
        ("with --gpu", "with gpu="),
        ("drop --binary", "use profile_archive()"),
        // `--trip-count 0x30=N: ... has no loop headed at 0x30`
        ("--trip-count 0x", "trip_counts key 0x"),
        ("=N: ", ": "),
        ("--trip-count", "trip_count"),
        // metal-compile's advice on an AIR version metal-tt cannot read
        ("`--min-macos 14.0`", "min_macos=\"14.0\""),
        ("use --part main", "use part='main'"),
        ("--part", "part="),
        ("--chip '", "chip='"),
        ("--threadgroup '", "threadgroup='"),
        ("--fail-on '", "fail_on='"),
        ("--l1-hit-rate", "l1_hit_rate"),
        ("--l1-hit-latency", "l1_hit_latency"),
        ("--l1-miss-latency", "l1_miss_latency"),
        ("--chip", "chip="),
        ("--threadgroup", "threadgroup="),
        ("--fail-on", "fail_on="),
        ("--jobs", "jobs"),
        ("--offset", "offset"),
        ("--base", "base"),
        ("--gpu", "gpu"),
        ("try --list", "try list_functions()"),
    ];
    let mut out = m.to_string();
    for (cli, py) in WORDS {
        out = out.replace(cli, py);
    }
    out
}

/// Reads a file with the CLI's message; the exception type follows the
/// underlying I/O error.
fn read_file(path: &Path) -> Result<Vec<u8>, Fail> {
    pipeline::read_path(path).map_err(|e| {
        let kind = std::fs::metadata(path)
            .and_then(|_| std::fs::read(path).map(|_| ()))
            .err()
            .map_or(std::io::ErrorKind::Other, |io| io.kind());
        Fail::Io(kind, e.message)
    })
}

/// `offset`/`base` as the CLI's `--offset`/`--base` take them: 0 or more.
fn non_negative(what: &str, v: i64) -> Result<u64, Fail> {
    u64::try_from(v).map_err(|_| {
        Fail::Value(format!(
            "{what}={v} is negative; give 0 or more (a byte position in the data)"
        ))
    })
}

/// A profiled function (the report model) with the warnings met on the way.
#[pyclass(frozen, module = "metal_profiler._native", name = "Profile")]
struct PyProfile {
    profile: agx_report::Profile,
    /// The applegpu listing of the profiled code (as `--disasm-only`).
    listing: String,
    warnings: Vec<String>,
}

impl PyProfile {
    /// The document `view` makes of this one profile (a CLI `--format`).
    fn document(
        &self,
        py: Python<'_>,
        view: fn(&[agx_report::Profile]) -> String,
    ) -> PyResult<String> {
        let p = &self.profile;
        detached(py, || Ok(view(std::slice::from_ref(p))))
    }
}

#[pymethods]
impl PyProfile {
    /// Kernel name shown in reports.
    #[getter]
    fn name(&self) -> String {
        self.profile.name.clone()
    }
    /// GPU name when known (e.g. "G13G").
    #[getter]
    fn gpu(&self) -> Option<String> {
        self.profile.gpu.clone()
    }
    /// Warnings met while loading (archive warnings, undecodable code).
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
    /// The applegpu listing of the profiled code.
    #[getter]
    fn listing(&self) -> String {
        self.listing.clone()
    }
    /// The CLI's `--format json` document for this one profile.
    fn json(&self, py: Python<'_>) -> PyResult<String> {
        self.document(py, agx_report::json::document)
    }
    /// The CLI's `--format html` page for this one profile.
    fn html(&self, py: Python<'_>) -> PyResult<String> {
        self.document(py, agx_report::html::document)
    }
    /// The `--format html` report as a fragment whose styles apply only
    /// inside it (`_repr_html_`: a notebook keeps its own look).
    fn html_fragment(&self, py: Python<'_>) -> PyResult<String> {
        self.document(py, agx_report::html::fragment)
    }
    /// The CLI's `--format dot` graph for this one profile.
    fn dot(&self, py: Python<'_>) -> PyResult<String> {
        self.document(py, agx_report::dot::document)
    }
    /// The CLI's text report; `name` replaces the kernel name shown.
    #[pyo3(signature = (name=None, color=false, show_disasm=false))]
    fn text(
        &self,
        py: Python<'_>,
        name: Option<String>,
        color: bool,
        show_disasm: bool,
    ) -> PyResult<String> {
        let p = &self.profile;
        detached(py, move || {
            let renamed;
            let p = match name {
                Some(n) => {
                    let mut q = p.clone();
                    q.name = n;
                    renamed = q;
                    &renamed
                }
                None => p,
            };
            let mut s = agx_report::text::report(p, color);
            if show_disasm {
                s.push_str(&agx_report::text::plain_disassembly(p, Syntax::Default));
            }
            Ok(s)
        })
    }
    /// The analysed instructions, as dicts (see [`insn_dict`]).
    fn instructions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        guard(|| {
            let items = self
                .profile
                .insns
                .iter()
                .map(|i| insn_dict(py, i, None))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)
        })
    }
    fn __repr__(&self) -> String {
        format!(
            "<metal_profiler._native.Profile {:?} ({} instructions)>",
            self.profile.name,
            self.profile.insns.len()
        )
    }
}

fn reg_name(r: &agx_isa::Reg) -> String {
    let mut plain = *r;
    plain.flags = 0;
    let mut s = String::new();
    write_reg(&mut s, &plain, Syntax::Default);
    s
}

/// One instruction as a dict: addr, size, bytes (as shown), mnemonic,
/// operands (printed strings), asm (mnemonic + operands, applegpu spacing),
/// line (the whole listing line), defs/uses (register names, implicit ones
/// included), category, form, raised.
fn insn_dict<'py>(
    py: Python<'py>,
    i: &Instruction,
    shown: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let all = i.bytes();
    let n = shown.unwrap_or(i.len as usize).min(i.len as usize);
    let asm = format_asm(i, Syntax::Default);
    // (each operand from the formatter: no split of the joined text)
    let operands = agx_isa::format::operand_texts(i, Syntax::Default);
    d.set_item("addr", i.addr)?;
    d.set_item("size", i.len)?;
    d.set_item("bytes", PyBytes::new(py, &all[..n]))?;
    d.set_item("mnemonic", i.mnemonic())?;
    d.set_item("operands", operands)?;
    d.set_item("asm", asm.trim_end())?;
    d.set_item("line", format_line(i, Syntax::Default))?;
    d.set_item("defs", i.defs().map(reg_name).collect::<Vec<_>>())?;
    d.set_item("uses", i.uses().map(reg_name).collect::<Vec<_>>())?;
    d.set_item("category", format!("{:?}", i.category()))?;
    d.set_item("form", i.form)?;
    d.set_item("raised", i.raised)?;
    Ok(d)
}

/// Builds the profile of raw code exactly as `metal-profile --binary
/// [--offset N]`: the CLI's own wiring ([`pipeline::kernel`]).
fn profile_raw(
    name: &str,
    bytes: &[u8],
    offset: u64,
    mut args: ProfileArgs,
) -> Result<PyProfile, Fail> {
    args.offset = Some(offset);
    let code = pipeline::raw_input(name, bytes, &args)?;
    // empty, cut or not code: ValueError naming the problem, as the CLI
    let d = pipeline::decode_raw(name, code)?;
    let listing = pipeline::listing(d.code(), Syntax::Default);
    // called functions: cut code is a ValueError, the rest warnings
    let k = d.profile(&args, true)?;
    let warnings = k.warnings().cloned().collect();
    Ok(PyProfile {
        profile: k.profile,
        listing,
        warnings,
    })
}

/// Builds the profile of one archive function exactly as `metal-profile
/// ARCHIVE -f NAME [--gpu GPU] [--part main|prolog]` (the main part with
/// its prolog summarised, or the prolog): the CLI's own wiring
/// ([`pipeline::kernel`]).
fn profile_in_archive(
    archive: &Archive,
    function: Option<String>,
    gpu: Option<&str>,
    part: Option<&str>,
    options: Options,
) -> Result<PyProfile, Fail> {
    let mut args = options.args(function)?;
    args.part = options::part(part)?;
    if let Some(g) = gpu {
        options::gpu(g)?;
    }
    let (one, note) = pipeline::choose_slice(archive, gpu)?;
    let archive = &one;
    // (no --all; `part` main or prolog: the one function -f selects)
    let f = pipeline::select_functions(archive, &args)?[0];
    let d = pipeline::decode_function(archive, f, &args)?;
    let listing = pipeline::listing(d.code(), Syntax::Default);
    let k = d.profile(&args, true)?;
    let mut warnings = archive.warnings.clone();
    warnings.extend(note);
    warnings.extend(k.warnings().cloned());
    Ok(PyProfile {
        profile: k.profile,
        listing,
        warnings,
    })
}

/// Input given as a path or as bytes.
#[derive(FromPyObject)]
enum Input {
    Bytes(Vec<u8>),
    Path(PathBuf),
}

/// Where raw code goes, in Python's terms (the CLI says `--binary FILE`).
const RAW_HINT_PY: &str = "for raw machine code use profile_binary()";

impl Input {
    /// How the input is named in messages.
    fn name(&self) -> String {
        match self {
            Input::Bytes(_) => "the data".into(),
            Input::Path(p) => pipeline::display_name(p),
        }
    }

    /// The input as a Metal binary archive, refused with the CLI's message
    /// when it is anything else ([`pipeline::load_archive`]).
    fn archive(self) -> Result<agx_container::Archive, Fail> {
        let name = self.name();
        let bytes = self.read()?;
        Ok(pipeline::load_archive(&bytes, &name, RAW_HINT_PY)?)
    }

    fn read(self) -> Result<Vec<u8>, Fail> {
        match self {
            Input::Bytes(b) => Ok(b),
            Input::Path(p) => read_file(&p),
        }
    }
}

/// Profiles raw machine code (`metal-profile --binary FILE [--offset N]
/// [--base B] [--gpu GPU]`, `options`: the model flags, see
/// [`Options`]). A `gpu` whose code has no timing model goes through
/// `profile_untimed_code`.
#[pyfunction]
#[pyo3(signature = (data, function_name=None, offset=0, base=0, gpu=None, options=None))]
fn profile_raw_code(
    py: Python<'_>,
    data: Input,
    function_name: Option<String>,
    offset: i64,
    base: i64,
    gpu: Option<String>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyProfile> {
    let options = Options::from_dict(options)?;
    detached(py, move || {
        let offset = non_negative("offset", offset)?;
        let base = non_negative("base", base)?;
        if let Some(g) = &gpu {
            if options::gpu(g)?.is_some() {
                return Err(Fail::Value(format!(
                    "gpu='{g}': its code has no timing model; profile_binary() profiles it untimed"
                )));
            }
        }
        let name = data.name();
        let path = match &data {
            Input::Path(p) => Some(p.clone()),
            Input::Bytes(_) => None,
        };
        let mut args = options.args(function_name)?;
        args.base = (base != 0).then_some(base);
        args.gpu = gpu;
        // a file's path, as `--binary FILE` gives it: the threadgroup shape
        // recorded beside it is read the same way (issue 27)
        args.binary = path;
        let bytes = data.read()?;
        profile_raw(&name, &bytes, offset, args)
    })
}

/// Profiles one function of a Metal binary archive (`metal-profile ARCHIVE
/// -f NAME`). Input that is not an archive is refused as the CLI refuses it
/// (raw code goes through `profile_raw_code`). `gpu` picks the slice
/// (`--gpu`; default the newest decodable), `part` the part (`--part`),
/// `options` the model flags ([`Options`]).
#[pyfunction]
#[pyo3(signature = (data, function_name=None, gpu=None, part=None, options=None))]
fn profile_archive_input(
    py: Python<'_>,
    data: Input,
    function_name: Option<String>,
    gpu: Option<String>,
    part: Option<String>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyProfile> {
    let options = Options::from_dict(options)?;
    detached(py, move || {
        let a = data.archive()?;
        profile_in_archive(&a, function_name, gpu.as_deref(), part.as_deref(), options)
    })
}

/// Whether a timing model profiles the code of GPU `name` (`gpu=`):
/// `False` for one the untimed profile covers; `ValueError` for a name no
/// GPU model knows (listing the known ones) or code that cannot be decoded.
#[pyfunction]
fn gpu_timed(name: &str) -> PyResult<bool> {
    Ok(options::gpu(name)?.is_none())
}

/// The functions of an archive: dicts of stage, part, symbol, name, size,
/// code_size, text_offset, file_offset, gpu, gpu_family; and the warnings.
/// `gpu`: the slice (`--list --gpu`; default the one the profile functions
/// would choose).
#[pyfunction]
#[pyo3(signature = (data, gpu=None))]
fn archive_functions<'py>(
    py: Python<'py>,
    data: Input,
    gpu: Option<String>,
) -> PyResult<(Bound<'py, PyList>, Vec<String>, String)> {
    let archive = detached(py, move || {
        if let Some(g) = gpu.as_deref() {
            if options::gpu(g)?.is_some() {
                // a family the G13 reader drops: read with every GPU's code
                let name = data.name();
                let bytes = data.read()?;
                let (all, index) =
                    metal_profiler::pipeline::untimed::untimed_slice(&bytes, &name, g)?;
                // (the CLI's `--list --gpu` drops the "read anyway" warnings)
                return Ok(Archive {
                    warnings: Vec::new(),
                    ..all.only_slice(index)
                });
            }
        }
        Ok(pipeline::choose_slice(&data.archive()?, gpu.as_deref())?.0)
    })?;
    guard(|| {
        let mut items = Vec::new();
        for f in &archive.functions {
            let d = PyDict::new(py);
            d.set_item("stage", f.stage.as_str())?;
            d.set_item("part", f.part.as_str())?;
            d.set_item("symbol", &f.symbol)?;
            d.set_item("name", &f.name)?;
            d.set_item("size", f.size)?;
            d.set_item("code_size", f.code_size)?;
            d.set_item("text_offset", f.text_offset)?;
            d.set_item("file_offset", f.file_offset)?;
            d.set_item("gpu", f.gpu.map(|g| g.name.to_string()))?;
            d.set_item("gpu_family", f.gpu.map(|g| g.family.to_string()))?;
            items.push(d);
        }
        let text = pipeline::list_functions(&archive);
        Ok((PyList::new(py, items)?, archive.warnings.clone(), text))
    })
}

/// applegpu-identical listing of raw code from byte `offset`, addresses
/// starting at `base` (as `metal-profile --binary F --offset N --base B
/// --disasm-only`).
/// `native` selects native syntax (`--syntax native`).
/// `gpu` (`--gpu`): a GPU whose code is another family (Apple9) is listed
/// with that family's decoder.
#[pyfunction]
#[pyo3(signature = (data, offset=0, base=0, cryptic=false, native=false, gpu=None))]
fn disassemble(
    py: Python<'_>,
    data: Input,
    offset: i64,
    base: i64,
    cryptic: bool,
    native: bool,
    gpu: Option<String>,
) -> PyResult<String> {
    detached(py, move || {
        let (offset, base) = (non_negative("offset", offset)?, non_negative("base", base)?);
        if cryptic && native {
            return Err(Fail::Value(
                "cryptic and native are two syntaxes; pick one".into(),
            ));
        }
        let syntax = if cryptic {
            Syntax::Cryptic
        } else if native {
            Syntax::Native
        } else {
            Syntax::Default
        };
        let name = data.name();
        let model = match gpu.as_deref() {
            Some(g) => options::gpu(g)?,
            None => None,
        };
        let bytes = data.read()?;
        if let Some(model) = model {
            return other_isa_listing(&name, &bytes, offset, base, syntax, model);
        }
        pipeline::check_raw_extent(&name, bytes.len() as u64, offset)?;
        let code = pipeline::raw_code(&bytes, offset, base, None)?;
        let mut text = Vec::new();
        let (n, failed, cut) = pipeline::write_listing(&mut text, &code, syntax)
            .map_err(|e| Fail::Value(e.to_string()))?;
        // empty, cut or not code: ValueError, as the CLI's error
        pipeline::check_decoded(pipeline::raw_origin(&name, &bytes), n, failed, cut)?;
        Ok(String::from_utf8_lossy(&text).into_owned())
    })
}

/// The listing of raw code of another family than G13 (`--binary FILE
/// --gpu g16g --disasm-only`; checks and messages as the CLI's
/// `run_raw_other_isa`, in Python's terms).
fn other_isa_listing(
    name: &str,
    bytes: &[u8],
    offset: u64,
    base: u64,
    syntax: Syntax,
    model: &'static agx_analysis::gpu::GpuModel,
) -> Result<String, Fail> {
    let isa = model.isa;
    if syntax == Syntax::Native && !isa.native {
        return Err(Fail::Value(format!(
            "native=True: {} code has no native (assemblable) syntax",
            isa.name
        )));
    }
    pipeline::check_raw_extent_of(name, bytes.len() as u64, offset, isa)?;
    let addr = pipeline::raw_placement(bytes.len() as u64, offset, base)?;
    let (text, sum) = (isa.listing)(&bytes[offset as usize..], addr, syntax);
    if sum.named + sum.unknown == 0 && sum.framing_stop.is_none() {
        return Err(Fail::Value(format!(
            "{name} holds no {} instructions (only zero bytes); check the data and offset=",
            isa.name
        )));
    }
    Ok(text)
}

/// Checks profile options (`options`, see [`Options`]) as the CLI checks
/// its flags: `ValueError`/`TypeError` in Python's terms, else `None`
/// (for the functions that run the command line: `profile_many`).
#[pyfunction]
#[pyo3(signature = (options=None))]
fn check_options(options: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
    Options::from_dict(options)?.args(None)?;
    Ok(())
}

/// Decodes the one instruction at the start of `data`, printed at `addr`.
/// Raises `ValueError` when no instruction form matches.
#[pyfunction]
#[pyo3(signature = (data, addr=0))]
fn decode<'py>(py: Python<'py>, data: &[u8], addr: u32) -> PyResult<Bound<'py, PyDict>> {
    guard(|| match agx_isa::decode(data, addr) {
        Ok(i) => insn_dict(py, &i, Some(data.len())),
        Err(e) => Err(PyValueError::new_err(format!(
            "cannot decode {} at {addr:#x}: {e}",
            hex(data)
        ))),
    })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Decodes every instruction as the CLI's walk does (applegpu's rules:
/// stop after the first `stop`, skip zero runs and undecodable halfwords).
#[pyfunction]
#[pyo3(signature = (data, offset=0, base=0))]
fn decode_all<'py>(
    py: Python<'py>,
    data: &[u8],
    offset: u64,
    base: u64,
) -> PyResult<Bound<'py, PyList>> {
    pipeline::check_raw_extent("the data", data.len() as u64, offset).map_err(Fail::from)?;
    let code = pipeline::raw_code(data, offset, base, None).map_err(Fail::from)?;
    guard(|| {
        let mut items = Vec::new();
        let mut walk = agx_isa::walk(code.bytes(), code.addr);
        for item in walk.by_ref() {
            if let agx_isa::Item::Insn { insn, shown } = item {
                items.push(insn_dict(py, &insn, Some(shown as usize))?);
            }
        }
        if let Some(c) = walk.cut() {
            return Err(PyValueError::new_err(format!(
                "the data: {c}; the input is cut short or the offset is wrong: give the whole code"
            )));
        }
        PyList::new(py, items)
    })
}

/// Profiles instructions given as `(addr, bytes)` pairs (each decoded at its
/// address), named `name` — what `analyze()` of parsed disassembly uses.
#[pyfunction]
#[pyo3(signature = (words, name=None, options=None))]
fn profile_words(
    py: Python<'_>,
    words: Vec<(u32, Vec<u8>)>,
    name: Option<String>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyProfile> {
    let options = Options::from_dict(options)?;
    detached(py, move || {
        let args = options.args(name)?;
        let mut insns = Vec::with_capacity(words.len());
        let mut listing = String::new();
        for (addr, bytes) in &words {
            let i = agx_isa::decode(bytes, *addr).map_err(|e| {
                Fail::Value(format!("cannot decode {} at {addr:#x}: {e}", hex(bytes)))
            })?;
            listing.push_str(&format_line(&i, Syntax::Default));
            listing.push('\n');
            insns.push(i);
        }
        let code = CodeRef {
            name: args.function.clone().unwrap_or_else(|| "kernel".into()),
            buffer: &[],
            start: 0,
            end: 0,
            addr: insns.first().map_or(0, |i| i.addr),
            gpu: None,
            gpu_info: None,
        };
        let profile = pipeline::profile_instructions(&code, insns, &args, None, None);
        Ok(PyProfile {
            profile,
            listing,
            warnings: Vec::new(),
        })
    })
}

/// Assembles applegpu-syntax text into machine code.
#[pyfunction]
fn assemble<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyBytes>> {
    let r =
        guard(|| agx_isa::asm::assemble(text).map_err(|e| PyValueError::new_err(e.to_string())))?;
    if r.is_empty() {
        // as `metal-profile asm`: no instruction is an error
        return Err(PyValueError::new_err(
            "the text holds no instructions: nothing to assemble; give applegpu- or native-syntax lines",
        ));
    }
    Ok(PyBytes::new(py, &r))
}

/// (threads per core, percent of 1024) for `half_regs` half-registers.
#[pyfunction]
fn occupancy_for_regs(half_regs: i64) -> PyResult<(u32, f64)> {
    guard(|| {
        let h = u32::try_from(half_regs.max(0)).unwrap_or(u32::MAX);
        Ok(agx_analysis::occupancy::occupancy_for_regs(h))
    })
}

/// Compiles Metal source (a file path, or text) with the platform's
/// compiler, as the CLI does for `.metal` inputs and `--source`; returns the
/// archive bytes and the compiler's own output. `RuntimeError` with the
/// CLI's message where Metal is not available.
#[pyfunction]
#[pyo3(signature = (source, is_path, function_name=None, include_dirs=Vec::new(), targets=Vec::new(), jit=false, flags=None))]
#[allow(clippy::too_many_arguments)] // the CLI's compile flags, one each
fn compile_metal<'py>(
    py: Python<'py>,
    source: String,
    is_path: bool,
    function_name: Option<String>,
    include_dirs: Vec<PathBuf>,
    targets: Vec<String>,
    jit: bool,
    flags: Option<CompileExtras>,
) -> PyResult<(Bound<'py, PyBytes>, String, String, Vec<String>)> {
    let flags = flags.unwrap_or_default();
    let out = detached(py, move || {
        let src = if is_path {
            metal_compile::Source::File(PathBuf::from(source))
        } else {
            metal_compile::Source::Text(source)
        };
        let mut req = metal_compile::CompileRequest::new(src);
        req.functions = function_name.into_iter().collect();
        req.include_dirs = include_dirs;
        req.targets = targets;
        req.defines = flags.defines;
        req.std = flags.std;
        req.min_macos = flags.min_macos;
        req.keep_archive = flags.keep_archive;
        metal_compile::compiler_for(jit)
            .compile(&req)
            .map_err(|e| Fail::Runtime(e.to_string()))
    })?;
    Ok((
        PyBytes::new(py, &out.bytes),
        out.compiler_output,
        out.device_name,
        out.notes,
    ))
}

/// The compile flags past the first ones (`-D`, `--std`, `--min-macos`,
/// `--keep-archive`), as a dict with those four keys.
#[derive(Default, FromPyObject)]
#[pyo3(from_item_all)]
struct CompileExtras {
    defines: Vec<String>,
    std: Option<String>,
    min_macos: Option<String>,
    keep_archive: Option<PathBuf>,
}

/// Whether the CLI would treat `device_name` as an M1-family GPU.
#[pyfunction]
fn is_g13_device(device_name: &str) -> bool {
    metal_compile::is_g13_device(device_name)
}

/// Runs the `metal-profile` command line exactly as the Rust binary does:
/// returns (exit code, stdout bytes, stderr bytes).
#[pyfunction]
#[pyo3(signature = (argv, stdout_is_tty=false, stderr_is_tty=false))]
fn run_cli(
    py: Python<'_>,
    argv: Vec<String>,
    stdout_is_tty: bool,
    stderr_is_tty: bool,
) -> PyResult<(i32, Vec<u8>, Vec<u8>)> {
    detached(py, move || {
        use clap::Parser;
        let mut out = Vec::new();
        let mut err = Vec::new();
        let cli = match Cli::try_parse_from(&argv) {
            Ok(c) => c,
            Err(e) if e.use_stderr() => {
                // a usage error: the binary's one line, exit 2
                let line = metal_profiler::cli::usage_error_line(&e, &argv);
                err.extend_from_slice(format!("metal-profile: error: {line}\n").as_bytes());
                return Ok((2, out, err));
            }
            Err(e) => {
                // --help/--version exit 0 on stdout.
                let to_err = e.use_stderr();
                let tty = if to_err { stderr_is_tty } else { stdout_is_tty };
                let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
                let styled = e.render();
                let text = if tty && !no_color {
                    styled.ansi().to_string()
                } else {
                    styled.to_string()
                };
                let code = if to_err { 2 } else { 0 };
                if to_err {
                    err.extend_from_slice(text.as_bytes());
                } else {
                    out.extend_from_slice(text.as_bytes());
                }
                return Ok((code, out, err));
            }
        };
        let res = metal_profiler::app::run(&cli, &mut out, &mut err, stdout_is_tty);
        let code = match res {
            Ok(()) => 0,
            Err(e) => {
                if let Some(line) = metal_profiler::app::error_line(&e) {
                    err.extend_from_slice(format!("{line}\n").as_bytes());
                }
                e.code
            }
        };
        Ok((code, out, err))
    })
}

/// An untimed record as Python receives it: (JSON document, text report,
/// HTML page, warnings).
type Untimed = (String, String, String, Vec<String>);

fn untimed_out(r: &agx_report::KernelRecord, who: &str) -> Untimed {
    let one = std::slice::from_ref(r);
    (
        agx_report::untimed::json_document(one),
        agx_report::untimed::text(r),
        agx_report::untimed::html_document(one),
        metal_profiler::pipeline::untimed::untimed_warnings(r, who),
    )
}

/// The untimed model of `gpu` (`gpu=`), after the options are checked as
/// the CLI checks its flags before it profiles untimed (they change no
/// untimed figure); a GPU with a timing model is refused naming
/// `profile_binary()`/`profile_archive()`, which profile it.
fn untimed_gpu(
    gpu: &str,
    options: Options,
    timed_hint: &str,
) -> Result<&'static agx_analysis::gpu::GpuModel, Fail> {
    options.args(None)?;
    options::gpu(gpu)?.ok_or_else(|| {
        Fail::Value(format!(
            "gpu='{gpu}': its code has a timing model; {timed_hint} profiles it"
        ))
    })
}

/// Profiles raw code of a family no timing model applies to (`metal-profile
/// --binary FILE --gpu NAME [--offset N] [--base B]` for Apple9 GPUs:
/// g15g, g16g, g17p …): the untimed record ([`Untimed`]).
#[pyfunction]
#[pyo3(signature = (data, gpu, offset=0, base=0, options=None))]
fn profile_untimed_code(
    py: Python<'_>,
    data: Input,
    gpu: String,
    offset: i64,
    base: i64,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Untimed> {
    let options = Options::from_dict(options)?;
    detached(py, move || {
        let offset = non_negative("offset", offset)?;
        let base = non_negative("base", base)?;
        let model = untimed_gpu(&gpu, options, "profile_binary()")?;
        let name = data.name();
        let bytes = data.read()?;
        pipeline::check_raw_extent_of(&name, bytes.len() as u64, offset, model.isa)?;
        let addr = pipeline::raw_placement(bytes.len() as u64, offset, base)?;
        let r = metal_profiler::pipeline::untimed::untimed_record(
            &bytes[offset as usize..],
            addr,
            name.clone(),
            Some(&gpu),
            model,
        );
        let stopped = r.untimed.as_ref().and_then(|u| u.framing.stopped.as_ref());
        if r.instructions == 0 && stopped.is_none() {
            // the CLI's refusal (app.rs run_raw_other_isa), in Python's terms
            return Err(Fail::Value(format!(
                "{name} holds no {} instructions (only zero bytes); check the data and offset=",
                model.isa.name
            )));
        }
        Ok(untimed_out(&r, &name))
    })
}

/// Profiles one function of an archive's slice for a GPU no timing model
/// applies to (`metal-profile ARCHIVE --gpu g15g -f NAME [--part P]`): the
/// untimed record ([`Untimed`]).
#[pyfunction]
#[pyo3(signature = (data, gpu, function_name=None, part=None, options=None))]
fn profile_untimed_archive(
    py: Python<'_>,
    data: Input,
    gpu: String,
    function_name: Option<String>,
    part: Option<String>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Untimed> {
    let options = Options::from_dict(options)?;
    detached(py, move || {
        let model = untimed_gpu(&gpu, options, "profile_archive()")?;
        let part = options::part(part.as_deref())?;
        let name = data.name();
        let bytes = data.read()?;
        let (archive, index) =
            metal_profiler::pipeline::untimed::untimed_slice(&bytes, &name, &gpu)?;
        let one = archive.only_slice(index);
        let selected = one.select(function_name.as_deref())?;
        let shown = match part {
            metal_profiler::cli::PartArg::Prolog => one.prolog_of(selected).ok_or_else(|| {
                Fail::Value(format!(
                    "'{}' has no prolog in this archive; use part='main'",
                    selected.name
                ))
            })?,
            _ => one.main_of(selected).unwrap_or(selected),
        };
        let r = metal_profiler::pipeline::untimed::function_record(
            &one,
            shown,
            shown.symbol.clone(),
            &gpu,
            model,
        );
        Ok(untimed_out(&r, &format!("`{}`", shown.symbol)))
    })
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyProfile>()?;
    m.add_function(wrap_pyfunction!(run_cli, m)?)?;
    m.add_function(wrap_pyfunction!(profile_raw_code, m)?)?;
    m.add_function(wrap_pyfunction!(profile_archive_input, m)?)?;
    m.add_function(wrap_pyfunction!(profile_words, m)?)?;
    m.add_function(wrap_pyfunction!(profile_untimed_code, m)?)?;
    m.add_function(wrap_pyfunction!(profile_untimed_archive, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_timed, m)?)?;
    m.add_function(wrap_pyfunction!(check_options, m)?)?;
    m.add_function(wrap_pyfunction!(introspect::cli_options, m)?)?;
    m.add_function(wrap_pyfunction!(introspect::gpus, m)?)?;
    m.add_function(wrap_pyfunction!(introspect::chips, m)?)?;
    m.add_function(wrap_pyfunction!(archive_functions, m)?)?;
    m.add_function(wrap_pyfunction!(disassemble, m)?)?;
    m.add_function(wrap_pyfunction!(decode, m)?)?;
    m.add_function(wrap_pyfunction!(decode_all, m)?)?;
    m.add_function(wrap_pyfunction!(assemble, m)?)?;
    m.add_function(wrap_pyfunction!(occupancy_for_regs, m)?)?;
    m.add_function(wrap_pyfunction!(compile_metal, m)?)?;
    m.add_function(wrap_pyfunction!(is_g13_device, m)?)?;
    // (tests: the CLI's message in Python's terms)
    m.add_function(wrap_pyfunction!(python_terms, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
