//! The one wiring of a profile (issue 29): input (raw bytes, or a function
//! of an archive) with the parsed options → the chosen function(s) →
//! decoded code (checked) → the analysed profile of the whole program, with
//! its warnings and checks. The CLI's profile command (`app`), `batch`
//! (and through it `diff`) and the Python module call these functions; none
//! of them wires the stages again.
//!
//! The stages, each a function here:
//! - [`select_functions`]: which functions of an archive a run shows
//!   (`--all`, `-f`, `--part`);
//! - [`raw_input`]: raw code placed at `--offset`/`--base`, for `--gpu`;
//! - [`decode_function`] / [`decode_raw`]: main's code decoded and checked
//!   (empty, cut, not code: errors), its prolog, the warning about unknown
//!   encodings;
//! - [`Decoded::profile`]: the whole program (called functions from the
//!   archive's `__text` or the raw file) analysed and modelled, the checks
//!   of called functions ([`program_checks`]).
//!
//! The parsed options are the command line's [`ProfileArgs`] (`cli` holds
//! only option types and their parsers: the bottom of the crate, as
//! docs/architecture.md "Front-end layers" says); Python builds the same
//! struct ([`check_model_flags`] checks it for both).

use super::{CodeRef, Error, Origin};
use crate::cli::{PartArg, ProfileArgs};
use agx_analysis::raw_image::FirstWalk;
use agx_container::{Archive, Function, Part};
use agx_isa::Flow;

/// A kernel through the whole pipeline: its profile and the warnings about
/// code left out of it (full lines, `warning: …`, without the exit-code
/// note).
pub struct Kernel {
    /// (main's undecodable positions: its `unknown_encodings`)
    pub profile: agx_report::Profile,
    /// The warning about main's code (unknown encodings), if any.
    pub main_warning: Option<String>,
    /// The warnings about its called functions ([`program_checks`]).
    pub call_warnings: Vec<String>,
}

impl Kernel {
    /// Every warning, main's first.
    pub fn warnings(&self) -> impl Iterator<Item = &String> {
        self.main_warning.iter().chain(&self.call_warnings)
    }
}

/// Main's code decoded and checked, before the analysis.
pub struct Decoded<'a> {
    code: CodeRef<'a>,
    /// How the code is named in warnings: the raw file, or the archive
    /// function's symbol in backticks.
    name: String,
    decode: super::MainDecode,
    prolog: Option<Vec<agx_isa::Instruction>>,
    /// The archive function, or `None` for raw code.
    function: Option<(&'a Archive, &'a Function)>,
}

impl<'a> Decoded<'a> {
    /// The code decoded.
    pub fn code(&self) -> &CodeRef<'a> {
        &self.code
    }

    /// Main's undecodable positions.
    pub fn failed(&self) -> usize {
        self.decode.failed
    }

    /// The warning about main's unknown encodings, if any (raw code:
    /// [`super::raw_code_warning`]; an archive function:
    /// [`unknown_warning`]).
    pub fn warning(&self) -> Option<String> {
        let failed = self.decode.failed;
        match self.function {
            None => super::raw_code_warning(self.decode.insns.len(), failed),
            Some((_, f)) => (failed > 0).then(|| unknown_warning(&f.symbol, failed)),
        }
    }

    /// The analysed profile of the whole program (main, its prolog, every
    /// function it reaches through `call`), with the checks of its called
    /// functions: a called function cut short is an error, the rest
    /// warnings. `graph`: build the graph model (see
    /// [`agx_report::Options::graph`]; the HTML and DOT views read it).
    pub fn profile(self, a: &ProfileArgs, graph: bool) -> Result<Kernel, Error> {
        let main_warning = self.warning();
        let Decoded {
            code,
            name,
            mut decode,
            prolog,
            function,
        } = self;
        let failed = decode.failed;
        let insns = std::mem::take(&mut decode.insns);
        // raw main starting at byte 0: its decode is the first walk of the
        // file's decode that finds called functions (not walked again)
        let first = if function.is_none()
            && code.start == 0
            && insns.iter().any(|i| matches!(i.flow(), Flow::Call { .. }))
        {
            FirstWalk::of_main(
                &insns,
                decode.failed_addrs(),
                decode.cut,
                code.addr,
                code.buffer.len(),
            )
        } else {
            None
        };
        agx_analysis::time_passes::mark("main decoded");
        let mut profile = build_profile(&code, insns, a, function, prolog, graph, first);
        check_loop_headers(&name, a, &profile)?;
        // called functions: cut code is an error (no report), the rest warnings
        let call_warnings = program_checks(&name, &profile.program, function.is_none())?;
        profile.unknown_encodings = failed;
        if failed > 0 {
            profile.unknown_lines = decode.unknown_lines();
        }
        if let Some((_, f)) = function {
            if a.part != PartArg::Main {
                profile.part = Some(f.part.as_str());
            }
        }
        Ok(Kernel {
            profile,
            main_warning,
            call_warnings,
        })
    }
}

/// The functions of `archive` (one slice) a run shows: with `--all` every
/// kernel's main body in archive order; else the function `-f` selects (the
/// only one when not given), as `--part` asks: its main body, its prolog,
/// or every function of its image in `__text` order.
pub fn select_functions<'a>(
    archive: &'a Archive,
    a: &ProfileArgs,
) -> Result<Vec<&'a Function>, Error> {
    if a.all {
        let mains: Vec<&Function> = archive
            .functions
            .iter()
            .filter(|f| f.part == Part::Main)
            .collect();
        if mains.is_empty() {
            return Err(Error::input(
                "--all: this archive has no kernel main body (_agc.main); try --list",
            ));
        }
        return Ok(mains);
    }
    let selected = archive.select(a.function.as_deref())?;
    Ok(match a.part {
        PartArg::Main => {
            vec![archive.main_of(selected).unwrap_or(selected)]
        }
        PartArg::Prolog => match archive.prolog_of(selected) {
            Some(p) => vec![p],
            None => {
                return Err(Error::input(format!(
                "'{}' has no prolog (_agc.main.constant_program) in this archive; use --part main",
                selected.name
            )))
            }
        },
        PartArg::All => {
            let mut v: Vec<&Function> = archive
                .functions
                .iter()
                .filter(|f| f.image == selected.image)
                .collect();
            v.sort_by_key(|f| f.text_offset);
            v
        }
    })
}

/// Decodes function `f` of `archive` (checked: empty, cut or not code is
/// an error naming its symbol) and, when the main body is shown (`--part
/// main`), its prolog (summarised in the report).
pub fn decode_function<'a>(
    archive: &'a Archive,
    f: &'a Function,
    a: &ProfileArgs,
) -> Result<Decoded<'a>, Error> {
    let code = super::function_code(archive, f);
    let origin = Origin::Function { symbol: &f.symbol };
    let decode = super::decode_main_checked(&code, origin)?;
    let prolog = if a.part == PartArg::Main && f.part == Part::Main {
        archive.prolog_of(f).map(|p| {
            let pc = super::function_code(archive, p);
            super::decode_code(&pc).0
        })
    } else {
        None
    };
    Ok(Decoded {
        code,
        name: format!("`{}`", f.symbol),
        decode,
        prolog,
        function: Some((archive, f)),
    })
}

/// Raw machine code (`--binary`) named `name`: checked to lie in `bytes`
/// from `--offset`, placed at `--base`, named by `-f` (else "kernel"),
/// labelled with `--gpu`'s GPU (which picks its timing table).
pub fn raw_input<'a>(name: &str, bytes: &'a [u8], a: &ProfileArgs) -> Result<CodeRef<'a>, Error> {
    let offset = a.offset.unwrap_or(0);
    super::check_raw_extent(name, bytes.len() as u64, offset)?;
    let mut code = super::raw_code(bytes, offset, a.base.unwrap_or(0), a.function.as_deref())?;
    if let Some(gpu) = &a.gpu {
        let g = super::raw_gpu(gpu)?;
        code.gpu = Some(g.name.to_string());
        code.gpu_info = Some(g);
    }
    Ok(code)
}

/// Decodes raw code (from [`raw_input`]; `name` as the file is printed),
/// checked: empty, cut or not code is an error naming the file (and
/// whether it is an archive).
pub fn decode_raw<'a>(name: &str, code: CodeRef<'a>) -> Result<Decoded<'a>, Error> {
    let origin = super::raw_origin(name, code.buffer);
    let decode = super::decode_main_checked(&code, origin)?;
    Ok(Decoded {
        code,
        name: name.to_string(),
        decode,
        prolog: None,
        function: None,
    })
}

/// `--trip-count ADDR=N` names loop headers of the kernel: one that is not
/// is an error naming the headers there are.
fn check_loop_headers(name: &str, a: &ProfileArgs, p: &agx_report::Profile) -> Result<(), Error> {
    let heads: Vec<u32> = p.analysis.loops.iter().map(|l| l.header).collect();
    for (&h, _) in a.model.loop_trip_counts().iter() {
        if !heads.contains(&h) {
            let list = if heads.is_empty() {
                "it has no loops".to_string()
            } else {
                let l: Vec<String> = heads.iter().map(|h| format!("0x{h:x}")).collect();
                format!("its loop headers: {}", l.join(", "))
            };
            return Err(Error::usage(format!(
                "--trip-count 0x{h:x}=N: {name} has no loop headed at 0x{h:x} ({list})"
            )));
        }
    }
    Ok(())
}

/// Checks the timing model's flags (the CLI's and Python's arguments alike):
/// each error names the flag and the accepted values.
pub fn check_model_flags(a: &ProfileArgs) -> Result<(), Error> {
    let zero = |t: &crate::cli::TripCount| match t {
        crate::cli::TripCount::All(n) | crate::cli::TripCount::Loop { count: n, .. } => *n == 0,
    };
    if a.model.trip_counts.iter().any(zero) {
        return Err(Error::usage("--trip-count must be at least 1"));
    }
    for (flag, v) in [
        ("--l1-hit-latency", a.model.l1_hit_latency),
        ("--l1-miss-latency", a.model.l1_miss_latency),
    ] {
        if let Some(v) = v {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::usage(format!(
                    "{flag} must be a non-negative number of cycles"
                )));
            }
        }
    }
    if let Some(r) = a.model.l1_hit_rate {
        if !(0.0..=1.0).contains(&r) {
            return Err(Error::usage("--l1-hit-rate must be between 0 and 1"));
        }
    }
    if let Some(c) = &a.model.chip {
        let models = agx_analysis::gpu::GPU_MODELS;
        if !models.iter().any(|m| m.chip(c).is_some()) {
            let known: Vec<&str> = models
                .iter()
                .flat_map(|m| m.chips.iter().map(|v| v.chip))
                .collect();
            return Err(Error::usage(format!(
                "--chip '{c}' is not a known M1-family chip (use one of: {})",
                known.join(", ")
            )));
        }
    }
    Ok(())
}

/// The warning for a function of an archive with `failed` unknown
/// encodings.
pub fn unknown_warning(symbol: &str, failed: usize) -> String {
    format!(
        "warning: `{symbol}`: {failed} position(s) hold encodings the G13 tables do not know; shown as <disassembly failed> (native syntax: `unknown.<group> (N bytes)`) and left out of the analysis"
    )
}

/// What the whole program adds to the checks of main's code (issue 21;
/// docs/decoder.md, "Call targets"): a called function whose code ends
/// inside an instruction is an error (exit 1: the input is cut short); a
/// direct call whose target holds no code to follow (outside the input,
/// not on an instruction, zero bytes or bytes that do not decode, not code)
/// and encodings the G13 tables do not know in called functions are
/// warnings, one line each (the output is written; each makes the run exit
/// [`super::EXIT_UNKNOWN`] unless `--allow-unknown`). `name` is how the
/// code is named (the file, or an archive function's symbol in backticks);
/// `raw`: raw code (`--binary`), for the hints.
pub fn program_checks(
    name: &str,
    program: &agx_analysis::program::Program,
    raw: bool,
) -> Result<Vec<String>, Error> {
    use agx_analysis::program::{fmt_target, NoFunction};
    let mut first = None;
    let mut more = 0;
    for (c, why) in program.unfollowed_calls() {
        let t = fmt_target(c.target.unwrap_or(0));
        if let NoFunction::Cut(cut) = why {
            let fix = if raw {
                "the input is cut short: give the whole code"
            } else {
                "the archive is cut short or damaged: rebuild it"
            };
            return Err(Error::input(format!(
                "{name}: the function at {t} (called at 0x{:x}): {cut}; {fix}",
                c.at
            )));
        }
        if first.is_none() {
            first = Some(format!(
                "the call at 0x{:x} to {t} is not followed: {why}",
                c.at
            ));
        } else {
            more += 1;
        }
    }
    let mut warnings = Vec::new();
    if let Some(first) = first {
        let more = if more > 0 {
            format!(" (and {more} more call(s) with no code to follow)")
        } else {
            String::new()
        };
        let hint = if raw {
            " (check --offset and --base)"
        } else {
            ""
        };
        warnings.push(format!(
            "warning: {name}: {first}{more}; only the call instruction is costed{hint}"
        ));
    }
    let called: Vec<_> = program.functions[1..]
        .iter()
        .filter(|f| f.unknown > 0)
        .collect();
    if let Some(f) = called.first() {
        let n: usize = called.iter().map(|f| f.unknown).sum();
        let which = if called.len() == 1 {
            format!("the function at 0x{:x}", f.entry)
        } else {
            format!(
                "{} called functions (the first at 0x{:x})",
                called.len(),
                f.entry
            )
        };
        warnings.push(format!(
            "warning: {name}: {which}: {n} position(s) hold encodings the G13 tables do not know; left out of the analysis"
        ));
    }
    Ok(warnings)
}

/// Model options from the command line, for code of the default GPU.
pub fn report_options(a: &ProfileArgs) -> agx_report::Options {
    report_options_for(a, None)
}

/// Model options from the command line for code of the slice GPU
/// `slice_gpu` (e.g. `G13G`): the one place the GPU model
/// (`agx_analysis::gpu::model_for_slice`) and the chip (`--chip`, else the
/// model's default) are chosen; everything below reads them from the options.
pub fn report_options_for(a: &ProfileArgs, slice_gpu: Option<&str>) -> agx_report::Options {
    let gpu = agx_analysis::gpu::model_for_slice(slice_gpu);
    let chip = a
        .model
        .chip
        .as_deref()
        .and_then(|c| gpu.chip(c))
        .unwrap_or_else(|| gpu.default_chip());
    let mut o = agx_report::Options {
        trip_count: a.model.trip_count(),
        trip_count_given: a.model.given_trip_count().is_some(),
        loop_trip_counts: a.model.loop_trip_counts(),
        mem: gpu.mem_params(chip),
        gpu,
        chip,
        all_findings: a.all_findings,
        ..Default::default()
    };
    if let Some(v) = a.model.l1_hit_latency {
        o.mem.l1_hit_latency = v;
    }
    if let Some(v) = a.model.l1_miss_latency {
        o.mem.l1_miss_latency = v;
    }
    if let Some(v) = a.model.l1_hit_rate {
        o.mem.l1_hit_rate = Some(v);
    }
    o.threadgroup = a
        .model
        .threadgroup
        .or_else(|| a.binary.as_deref().and_then(recorded_threadgroup));
    if let Some(bin) = a.binary.as_deref() {
        o.uniform_values = recorded_preamble_uniforms(bin, a.offset.unwrap_or(0));
    }
    o
}

/// The uniform registers the preamble of raw Mesa code fills: the
/// `preamble.offset` of a `layout.json` beside it (the shared Mesa corpus
/// layout), decoded and followed by
/// [`agx_analysis::address::preamble_uniforms`], when the profiled code is
/// the layout's main (`--offset` at `main.offset`); empty otherwise.
fn recorded_preamble_uniforms(
    bin: &std::path::Path,
    offset: u64,
) -> agx_analysis::address::UniformValues {
    let read = || -> Option<Vec<(u16, u8, agx_analysis::address::Poly)>> {
        let text = std::fs::read_to_string(bin.parent()?.join("layout.json")).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        if v.pointer("/main/offset")?.as_u64()? != offset {
            return None;
        }
        let start = v.pointer("/preamble/offset")?.as_u64()? as usize;
        let bytes = std::fs::read(bin).ok()?;
        let mut insns = Vec::new();
        let mut at = start;
        while at < bytes.len() {
            let Ok(i) = agx_isa::decode(&bytes[at..], (at - start) as u32) else {
                break;
            };
            at += i.len as usize;
            let stop = i.mnemonic() == "stop";
            insns.push(i);
            if stop {
                break;
            }
        }
        Some(agx_analysis::address::preamble_uniforms(&insns))
    };
    std::sync::Arc::new(read().unwrap_or_default())
}

/// The threadgroup shape recorded with raw code: the `workgroup_size` of a
/// `layout.json` beside it (the shared Mesa corpus layout); `None` when
/// there is none or it does not read.
fn recorded_threadgroup(bin: &std::path::Path) -> Option<agx_analysis::address::Shape> {
    let layout = bin.parent()?.join("layout.json");
    let text = std::fs::read_to_string(layout).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let ws = v.get("workgroup_size")?.as_array()?;
    let dims: Vec<String> = ws
        .iter()
        .map(|x| x.as_u64().map(|n| n.to_string()))
        .collect::<Option<_>>()?;
    agx_analysis::address::Shape::parse(&dims.join("x"), "input").ok()
}

/// Called functions of an archive kernel: `call` targets are `__text`
/// offsets of the same image, resolved through its symbols.
struct ArchiveCode<'a> {
    archive: &'a Archive,
    function: &'a Function,
}

impl agx_analysis::program::CodeSource for ArchiveCode<'_> {
    fn function_at(
        &self,
        target: i64,
    ) -> Result<agx_analysis::program::FunctionCode, agx_analysis::program::NoFunction> {
        use agx_analysis::program::NoFunction;
        let missing = || {
            NoFunction::Missing(format!(
                "no function of the archive starts at {}",
                agx_analysis::program::fmt_target(target)
            ))
        };
        let t = u64::try_from(target).map_err(|_| missing())?;
        let g = self
            .archive
            .function_at(self.function, t)
            .ok_or_else(missing)?;
        let code = super::function_code(self.archive, g);
        // the checks of main's code (super::check_decoded)
        let d = agx_isa::stream::decode_checked(code.bytes(), code.addr);
        if let Some(pct) = agx_isa::stream::not_code_percent(d.insns.len(), d.failed) {
            return Err(NoFunction::Malformed(format!(
                "`{}`: {pct}% of its code does not decode",
                g.symbol
            )));
        }
        if let Some(c) = d.cut {
            return Err(NoFunction::Cut(c));
        }
        Ok(agx_analysis::program::FunctionCode {
            entry: g.text_offset as u32,
            symbol: Some(g.symbol.clone()),
            name: Some(g.name.clone()),
            insns: d.insns,
            unknown: d.failed,
        })
    }
}

/// Called functions of raw code: targets that fall inside the given file
/// (e.g. `--binary text.bin --offset 0x540` with the helper at 0x0), found
/// in one decode of the file made at the first call
/// ([`agx_analysis::raw_image::RawImage`]: a helper is the part of it its
/// entry reaches without following calls). A helper is printed at its
/// address in main's address space, or at its file offset when that address
/// would be negative (`--offset` without `--base`).
/// The image is freed once every function is found
/// ([`agx_analysis::program::CodeSource::release`]): ~24 B per instruction of
/// the file, held otherwise through the analyses of the whole program.
struct RawCode<'a> {
    code: &'a CodeRef<'a>,
    image: std::cell::RefCell<Option<agx_analysis::raw_image::RawImage<'a>>>,
    /// Main's decode as the image's first walk, when main starts at byte 0.
    first: std::cell::Cell<Option<FirstWalk>>,
}

impl agx_analysis::program::CodeSource for RawCode<'_> {
    fn function_at(
        &self,
        target: i64,
    ) -> Result<agx_analysis::program::FunctionCode, agx_analysis::program::NoFunction> {
        let c = self.code;
        self.image
            .borrow_mut()
            .get_or_insert_with(|| {
                agx_analysis::raw_image::RawImage::with_first_walk(
                    c.buffer,
                    c.start,
                    c.addr,
                    self.first.take(),
                )
            })
            .function_at(target)
    }

    fn release(&self) {
        self.image.borrow_mut().take();
        self.first.take();
    }
}

/// Builds the report model of one kernel from its decoded instructions
/// (Python's `analyze()` of parsed disassembly decodes them itself): its
/// main body and every function it reaches through `call` (in the
/// archive's `__text`, or in the raw file), with the graph model.
pub fn profile_instructions(
    code: &CodeRef<'_>,
    insns: Vec<agx_isa::Instruction>,
    a: &ProfileArgs,
    archive: Option<(&Archive, &Function)>,
    prolog: Option<Vec<agx_isa::Instruction>>,
) -> agx_report::Profile {
    build_profile(code, insns, a, archive, prolog, true, None)
}

/// [`profile_instructions`], with the graph model built only when `graph`
/// is set (see [`agx_report::Options::graph`]) and, for raw code, main's
/// decode as the first walk of the file's.
fn build_profile(
    code: &CodeRef<'_>,
    insns: Vec<agx_isa::Instruction>,
    a: &ProfileArgs,
    archive: Option<(&Archive, &Function)>,
    prolog: Option<Vec<agx_isa::Instruction>>,
    graph: bool,
    first: Option<FirstWalk>,
) -> agx_report::Profile {
    // raw code: `-f` or "kernel" (see `super::raw_code`); archives: the function's name
    let name = archive.map_or_else(|| code.name.clone(), |(_, f)| f.name.clone());
    let mut opts = report_options_for(a, code.gpu.as_deref());
    opts.graph = graph;
    // called functions: `__text` symbols in an archive, the same file for raw code
    let archive_code;
    let raw_code;
    let source: &dyn agx_analysis::program::CodeSource = match archive {
        Some((archive, function)) => {
            archive_code = ArchiveCode { archive, function };
            &archive_code
        }
        None => {
            raw_code = RawCode {
                code,
                image: std::cell::RefCell::new(None),
                first: std::cell::Cell::new(first),
            };
            &raw_code
        }
    };
    let mut prof = agx_report::Profile::build_program(
        name,
        code.gpu.clone(),
        insns,
        prolog,
        Vec::new(),
        &opts,
        source,
    );
    prof.annotate_callees = a.part == PartArg::All;
    if let Some(g) = code.gpu_info {
        prof.gpu_label = Some(g.describe());
        let own = agx_container::gpu_row(g.name).and_then(agx_analysis::gpu::model_of);
        prof.timing_note = opts.gpu.timing_note(g.generation, own);
    }
    prof
}
