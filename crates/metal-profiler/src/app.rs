//! Running a parsed command line. Output goes to the given writers so tests
//! and the Python module can capture it; errors come back as [`Error`].

use crate::cli::{
    AsmArgs, Cli, ColorArg, Command, ExportArgs, FormatArg, PartArg, ProfileArgs, SyntaxArg,
};
use crate::pipeline::{self, check_model_flags, Error};
use agx_container::{Archive, Function};
use agx_isa::Syntax;
use std::io::Write;
use std::path::Path;

/// What a failed run prints on stderr: `metal-profile: error: ` and the
/// message (one line; only a compiler's own diagnostics follow it,
/// verbatim); `None` when the message is empty (exit 4: the warning about
/// unknown encodings is already out).
pub fn error_line(e: &Error) -> Option<String> {
    (!e.message.is_empty()).then(|| format!("metal-profile: error: {}", e.message))
}

/// Runs `cli`, writing results to `out` and warnings to `err`.
pub fn run(
    cli: &Cli,
    out: &mut dyn Write,
    err: &mut dyn Write,
    stdout_is_tty: bool,
) -> Result<(), Error> {
    match &cli.command {
        Some(Command::Asm(a)) => run_asm(a, out, err, stdout_is_tty),
        Some(Command::Export(e)) => run_export(e, err),
        Some(Command::Batch(b)) => to_output(b.output.as_deref(), out, err, |o, e| {
            crate::batch::run_batch(b, o, e)
        }),
        Some(Command::Diff(d)) => to_output(d.output.as_deref(), out, err, |o, e| {
            crate::diff::run_diff(d, o, e)
        }),
        None => match &cli.profile.output {
            Some(path) if path.as_os_str() != "-" => {
                let run =
                    |o: &mut dyn Write, e: &mut dyn Write| run_profile(&cli.profile, o, e, false);
                if cli.profile.disasm_only {
                    to_file_streamed(path, cli.profile.binary.as_deref(), out, err, run)
                } else {
                    to_output(Some(path), out, err, run)
                }
            }
            _ => run_profile(&cli.profile, out, err, stdout_is_tty),
        },
    }
}

/// Runs `f` writing to stdout (`out`), or with `-o FILE` (not `-`) to that
/// file, without colour. The bytes are gathered first and written only when
/// `f` produced them, so a failed run never leaves a half-written file behind
/// (batch and diff, whose exit codes 1 and 3 still carry complete results,
/// write theirs as well), and a line on stderr says where they went.
fn to_output(
    path: Option<&Path>,
    out: &mut dyn Write,
    err: &mut dyn Write,
    f: impl FnOnce(&mut dyn Write, &mut dyn Write) -> Result<(), Error>,
) -> Result<(), Error> {
    let Some(path) = path.filter(|p| p.as_os_str() != "-") else {
        return f(out, err);
    };
    let mut buf: Vec<u8> = Vec::new();
    let result = f(&mut buf, err);
    if result.is_ok() || !buf.is_empty() {
        std::fs::write(path, &buf)
            .map_err(|e| Error::input(format!("cannot write {}: {e}", path.display())))?;
        let _ = writeln!(err, "wrote {} bytes to {}", buf.len(), path.display());
    }
    result
}

/// `--disasm-only -o FILE`: as [`to_output`], except that the listing goes
/// to FILE as it is made, so memory stays constant as on stdout (issue 15).
/// FILE is created (or truncated) at the first byte: a run that fails before
/// printing anything leaves it untouched, one that fails later leaves what it
/// printed (as `to_output` writes what it gathered).
fn to_file_streamed(
    path: &Path,
    input: Option<&Path>,
    out: &mut dyn Write,
    err: &mut dyn Write,
    f: impl FnOnce(&mut dyn Write, &mut dyn Write) -> Result<(), Error>,
) -> Result<(), Error> {
    // the raw listing reads its input as it goes: writing over the input
    // would cut it short, so that case gathers the text first
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if input.is_some_and(|i| same(i, path)) {
        return to_output(Some(path), out, err, f);
    }
    /// The file, created at the first write; its first error kept.
    struct Lazy<'p> {
        path: &'p Path,
        file: Option<std::io::BufWriter<std::fs::File>>,
        bytes: u64,
        failed: Option<std::io::Error>,
    }
    impl Lazy<'_> {
        fn file(&mut self) -> std::io::Result<&mut std::io::BufWriter<std::fs::File>> {
            if self.file.is_none() {
                let f = std::fs::File::create(self.path)?;
                self.file = Some(std::io::BufWriter::with_capacity(1 << 16, f));
            }
            Ok(self.file.as_mut().expect("created"))
        }
        fn note<T>(&mut self, r: std::io::Result<T>) -> std::io::Result<T> {
            r.inspect_err(|e| {
                if self.failed.is_none() {
                    self.failed = Some(std::io::Error::new(e.kind(), e.to_string()));
                }
            })
        }
    }
    impl Write for Lazy<'_> {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let r = self.file().and_then(|f| f.write(buf));
            let n = self.note(r)?;
            self.bytes += n as u64;
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            match self.file.as_mut() {
                Some(f) => {
                    let r = f.flush();
                    self.note(r)
                }
                None => Ok(()),
            }
        }
    }
    let mut sink = Lazy {
        path,
        file: None,
        bytes: 0,
        failed: None,
    };
    let result = f(&mut sink, err);
    let keep = result.is_ok() || sink.bytes > 0;
    if keep && sink.failed.is_none() {
        // an empty listing still makes an (empty) file
        let r = sink.file().map(|_| ());
        let _ = sink.note(r);
        let _ = sink.flush();
    }
    if let Some(e) = sink.failed.take() {
        return Err(Error::input(format!(
            "cannot write {}: {e}",
            path.display()
        )));
    }
    if keep {
        let _ = writeln!(err, "wrote {} bytes to {}", sink.bytes, path.display());
    }
    result
}

fn write_all(out: &mut dyn Write, s: &str) -> Result<(), Error> {
    out.write_all(s.as_bytes())
        .map_err(|e| Error::input(format!("cannot write output: {e}")))
}

fn syntax(a: &ProfileArgs) -> Syntax {
    match a.syntax {
        SyntaxArg::Default => Syntax::Default,
        SyntaxArg::Cryptic => Syntax::Cryptic,
        SyntaxArg::Native => Syntax::Native,
    }
}

/// Whether the text report should use colour.
pub fn use_color(choice: ColorArg, is_tty: bool) -> bool {
    match choice {
        ColorArg::Always => true,
        ColorArg::Never => false,
        // the environment as anstyle-query reads it for anstream (issue 36
        // item 5): CLICOLOR_FORCE forces colour; NO_COLOR, CLICOLOR=0 and
        // TERM=dumb turn it off; else colour on a terminal only (`-o` files
        // and pipes stay plain)
        ColorArg::Auto => {
            anstyle_query::clicolor_force()
                || (is_tty
                    && !anstyle_query::no_color()
                    && anstyle_query::clicolor() != Some(false)
                    && std::env::var_os("TERM").is_none_or(|t| t != "dumb"))
        }
    }
}

fn is_metal_source(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("metal"))
}

fn compile_request(
    a: &ProfileArgs,
    source: metal_compile::Source,
) -> metal_compile::CompileRequest {
    let mut req = metal_compile::CompileRequest::new(source);
    req.functions = a.function.iter().cloned().collect();
    req.all = a.all;
    req.include_dirs = a.compile.include.clone();
    req.defines = a.compile.define.clone();
    req.std = a.compile.std.clone();
    req.keep_archive = a.keep_archive.clone();
    req.targets = a.compile.target.clone();
    req.min_macos = a.compile.min_macos.clone();
    req
}

/// Compiles a .metal source: offline with metal-tt for the requested targets
/// (wherever `xcrun` is on PATH), or with `--jit` through the Metal driver
/// for this Mac's GPU (macOS only). Returns the archive bytes and, for the
/// JIT path, the device's name.
fn compile(
    req: &metal_compile::CompileRequest,
    jit: bool,
    err: &mut dyn Write,
) -> Result<(Vec<u8>, Option<String>), Error> {
    let archive = metal_compile::compiler_for(jit)
        .compile(req)
        .map_err(|e| Error::input(e.to_string()))?;
    if !archive.compiler_output.trim().is_empty() {
        let _ = writeln!(err, "{}", archive.compiler_output.trim_end());
    }
    for n in &archive.notes {
        let _ = writeln!(err, "note: {n}");
    }
    Ok((archive.bytes, jit.then_some(archive.device_name)))
}

/// Compiles `src` as the profile's flags ask ([`compile`]) and reads the
/// archive made; with the device's name on the JIT path.
/// What a `.metal` build gives: the archive to profile, or (a GPU profiled
/// without a timing model, issue 28 item 3) the untimed profile, done.
enum Compiled {
    Archive(Archive, Option<String>),
    Done,
}

fn compiled_archive(
    a: &ProfileArgs,
    src: metal_compile::Source,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Compiled, Error> {
    let (b, device) = compile(&compile_request(a, src), a.compile.jit, err)?;
    if let Some((model, gpu)) = untimed_build(a, &b)? {
        // its own code, natively: the slice of that GPU, untimed
        let mut a = a.clone();
        a.gpu = Some(gpu);
        run_archive_other_isa(&b, "the compiled archive", model, &a, out)?;
        return Ok(Compiled::Done);
    }
    let archive = pipeline::load_archive(&b, "the compiled archive", pipeline::RAW_HINT_CLI)?;
    Ok(Compiled::Archive(archive, device))
}

/// The GPU model and slice to profile a build with when that GPU has no
/// timing model: `--gpu` naming one, or (no `--gpu`) a build with no slice
/// the timing model reads and one or more it profiles untimed (`--target
/// g16g`, or `--jit` on an M3/M4 Mac): the newest of them, as the slice
/// choice takes the newest.
fn untimed_build(
    a: &ProfileArgs,
    bytes: &[u8],
) -> Result<Option<(&'static agx_analysis::gpu::GpuModel, String)>, Error> {
    if let Some(m) = pipeline::untimed_model(a.gpu.as_deref())? {
        return Ok(a.gpu.clone().map(|g| (m, g)));
    }
    if a.gpu.is_some() {
        return Ok(None);
    }
    let Ok(all) = pipeline::load_archive_all_gpus(bytes, "the compiled archive") else {
        return Ok(None);
    };
    if all.slices.iter().any(|s| s.decodable()) {
        return Ok(None);
    }
    Ok(all
        .slices
        .iter()
        .filter_map(|s| s.gpu())
        .filter_map(|g| {
            let row = agx_container::gpu_row(g.name)?;
            let m = agx_analysis::gpu::model_of(row).filter(|m| !m.timed())?;
            Some((m, g.name.to_ascii_lowercase(), g.generation))
        })
        .max_by_key(|x| x.2)
        .map(|(m, n, _)| (m, n)))
}

fn run_export(e: &ExportArgs, err: &mut dyn Write) -> Result<(), Error> {
    let mut req = metal_compile::CompileRequest::new(metal_compile::Source::File(e.source.clone()));
    req.functions = e.functions.clone();
    req.all = e.all;
    req.include_dirs = e.compile.include.clone();
    req.defines = e.compile.define.clone();
    req.std = e.compile.std.clone();
    req.keep_archive = Some(e.output.clone());
    req.targets = e.compile.target.clone();
    req.min_macos = e.compile.min_macos.clone();
    compile(&req, e.compile.jit, err)?;
    let _ = writeln!(err, "wrote {}", e.output.display());
    Ok(())
}

fn run_asm(
    a: &AsmArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
    stdout_is_tty: bool,
) -> Result<(), Error> {
    // machine code is bytes, not text: never onto a terminal unless asked
    // for with `-o -` (checked before reading, as a usage error)
    if a.output.is_none() && !a.check && stdout_is_tty {
        return Err(Error::usage(
            "asm: stdout is a terminal and machine code is binary; give -o FILE (or -o - to write the bytes to stdout anyway, or --check)",
        ));
    }
    let text = pipeline::read_path(&a.file)?;
    let text = String::from_utf8(text)
        .map_err(|_| Error::input(format!("{} is not UTF-8 text", a.file.display())))?;
    let name = pipeline::display_name(&a.file);
    let program = agx_isa::asm::assemble_program(&text, 0)
        .map_err(|e| Error::input(format!("{name}: {e}")))?;
    if program.bytes.is_empty() {
        return Err(Error::input(format!(
            "{name} holds no instructions: nothing to assemble; give applegpu- or native-syntax lines (e.g. a --disasm-only listing)"
        )));
    }
    if a.syntax != SyntaxArg::Native {
        for w in &program.warnings {
            let _ = writeln!(err, "{name}: warning: {w}");
        }
    }
    if a.check {
        let _ = writeln!(
            err,
            "{name}: ok ({} instructions, {} bytes)",
            program.items.len(),
            program.bytes.len()
        );
        return Ok(());
    }
    match &a.output {
        Some(p) if p.as_os_str() != "-" => {
            std::fs::write(p, &program.bytes)
                .map_err(|e| Error::input(format!("cannot write {}: {e}", p.display())))?;
            let _ = writeln!(
                err,
                "wrote {} bytes to {}",
                program.bytes.len(),
                p.display()
            );
            Ok(())
        }
        _ => out
            .write_all(&program.bytes)
            .map_err(|e| Error::input(format!("cannot write output: {e}"))),
    }
}

fn run_profile(
    a: &ProfileArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
    tty: bool,
) -> Result<(), Error> {
    check_flag_conflicts(a)?;
    match a.jobs {
        Some(0) => return Err(Error::usage("--jobs must be at least 1")),
        Some(n) => agx_analysis::par::limit_threads(n),
        None => {}
    }
    if a.explain_model {
        return match a.format {
            FormatArg::Json => write_all(out, &agx_report::json::model_document()),
            // html/dot are refused by check_flag_conflicts
            _ => write_all(out, &agx_report::explain_model()),
        };
    }
    check_model_flags(a)?;
    // Obtain the code: raw (--binary), an archive (a file or `-`), or compiled source.
    let mut device: Option<String> = None;
    let archive = if let Some(src) = &a.source {
        match compiled_archive(a, metal_compile::Source::Text(src.clone()), out, err)? {
            Compiled::Archive(archive, d) => {
                device = d;
                archive
            }
            Compiled::Done => return Ok(()),
        }
    } else if let Some(b) = &a.binary {
        if let Some(model) = pipeline::untimed_model(a.gpu.as_deref())? {
            return run_raw_other_isa(b, model, a, out, err);
        }
        if a.disasm_only && b.as_os_str() != "-" {
            return run_raw_listing(b, a, out, err);
        }
        let bytes = pipeline::read_path(b)?;
        return run_raw(&bytes, a, out, err, tty);
    } else if let Some(p) = &a.input {
        if is_metal_source(p) {
            match compiled_archive(a, metal_compile::Source::File(p.clone()), out, err)? {
                Compiled::Archive(archive, d) => {
                    device = d;
                    archive
                }
                Compiled::Done => return Ok(()),
            }
        } else {
            let bytes = pipeline::read_path(p)?;
            if let Some(model) = pipeline::untimed_model(a.gpu.as_deref())? {
                return run_archive_other_isa(&bytes, &pipeline::display_name(p), model, a, out);
            }
            pipeline::load_archive(&bytes, &pipeline::display_name(p), pipeline::RAW_HINT_CLI)?
        }
    } else {
        return Err(Error::usage(
            "no input: give an archive, `--binary FILE` for raw machine code, or `-` for an archive on stdin (see --help)",
        ));
    };
    if a.list {
        return list_archive(&archive, a, out, err);
    }
    let (archive, note) = pipeline::choose_slice(&archive, a.gpu.as_deref())?;
    if let Some(n) = note {
        let _ = writeln!(err, "{n}");
    }
    run_archive(&archive, a, device.as_deref(), out, err, tty)
}

/// `--binary FILE --disasm-only`: the listing streamed from the file, read
/// in pieces (constant memory whatever its size; issue 15). Checks and
/// messages as [`run_raw`]'s.
fn run_raw_listing(
    path: &Path,
    a: &ProfileArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), Error> {
    use std::io::{Read, Seek};
    let (mut file, len) = pipeline::open_path(path)?;
    let offset = a.offset.unwrap_or(0);
    let name = pipeline::display_name(path);
    pipeline::check_raw_extent(&name, len, offset)?;
    let addr = pipeline::raw_placement(len, offset, a.base.unwrap_or(0))?;
    if let Some(name) = &a.gpu {
        pipeline::raw_gpu(name)?;
    }
    // the file's first bytes, for the not-code hint (is it an archive?)
    let mut head = [0u8; 4];
    let got = file
        .read(&mut head)
        .map_err(|e| pipeline::read_error(path, &e))?;
    file.seek(std::io::SeekFrom::Start(offset))
        .map_err(|e| pipeline::read_error(path, &e))?;
    /// Keeps the reader's error apart from the writer's.
    struct Noted<R> {
        r: R,
        err: Option<std::io::Error>,
    }
    impl<R: Read> Read for Noted<R> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.r.read(buf).inspect_err(|e| {
                self.err = Some(std::io::Error::new(e.kind(), e.to_string()));
            })
        }
    }
    let mut input = Noted { r: file, err: None };
    let threads = pipeline::listing_threads(len - offset);
    let res = pipeline::write_listing_stream(out, &mut input, addr, syntax(a), threads);
    if let Some(e) = input.err {
        return Err(pipeline::read_error(path, &e));
    }
    let (n, failed, cut) = res.map_err(|e| Error::input(format!("cannot write output: {e}")))?;
    // the listing is streamed: it is printed up to the problem, then the error
    let origin = pipeline::raw_origin(&name, &head[..got]);
    finish_raw_listing(origin, n, failed, cut, a, err)
}

/// The `--binary` file of [`run_raw_other_isa`]: its bytes, display name,
/// where its code starts (`--offset`, checked against its length) and the
/// address that code is placed at (`--base`).
fn raw_other_isa_code(
    path: &Path,
    a: &ProfileArgs,
    isa: &agx_isa::isa::Isa,
) -> Result<(Vec<u8>, String, usize, u32), Error> {
    let bytes = pipeline::read_path(path)?;
    let name = pipeline::display_name(path);
    let offset = a.offset.unwrap_or(0);
    pipeline::check_raw_extent_of(&name, bytes.len() as u64, offset, isa)?;
    let addr = pipeline::raw_placement(bytes.len() as u64, offset, a.base.unwrap_or(0))?;
    Ok((bytes, name, offset as usize, addr))
}

/// `--binary FILE --gpu NAME` where NAME's code is another family than
/// G13 (Apple9: G15/G16/G17P): its listing with `--disasm-only`; no
/// profile (that family has no cycle model). Framing that stops (unknown
/// length, documented conflict, cut code) and `unknown` positions are
/// warnings naming the offset, exit [`pipeline::EXIT_UNKNOWN`] unless
/// `--allow-unknown`.
fn run_raw_other_isa(
    path: &Path,
    model: &'static agx_analysis::gpu::GpuModel,
    a: &ProfileArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), Error> {
    let isa = model.isa;
    if !a.disasm_only {
        let (bytes, name, offset, addr) = raw_other_isa_code(path, a, model.isa)?;
        let code = &bytes[offset..];
        let r = crate::pipeline::untimed::untimed_record(
            code,
            addr,
            name.clone(),
            a.gpu.as_deref(),
            model,
        );
        let stopped = r.untimed.as_ref().and_then(|u| u.framing.stopped.as_ref());
        if r.instructions == 0 && stopped.is_none() {
            return Err(Error::input(format!(
                "{name} holds no {} instructions (only zero bytes); check the file and --offset",
                isa.name
            )));
        }
        let listing = a
            .show_disasm
            .then(|| (isa.listing)(code, addr, syntax(a)).0);
        return write_untimed(&r, listing, &name, a, out, err);
    }
    if a.syntax == SyntaxArg::Native && !isa.native {
        return Err(Error::usage(format!(
            "--syntax native: {} code has no native (assemblable) syntax; use --syntax default or cryptic",
            isa.name
        )));
    }
    let (bytes, name, offset, addr) = raw_other_isa_code(path, a, model.isa)?;
    let code = &bytes[offset..];
    let (text, sum) = (isa.listing)(code, addr, syntax(a));
    if sum.named + sum.unknown == 0 && sum.framing_stop.is_none() {
        return Err(Error::input(format!(
            "{name} holds no {} instructions (only zero bytes); check the file and --offset",
            isa.name
        )));
    }
    write_all(out, &text)?;
    let mut warnings = Vec::new();
    if let Some((_, why)) = &sum.framing_stop {
        warnings.push(format!(
            "warning: {name}: {why}; the rest is shown as `Unrecognized opcode` hex rows"
        ));
    }
    if sum.unknown > 0 {
        warnings.push(format!(
            "warning: {name}: {} of {} positions hold {} encodings no source decodes (shown as `unknown`)",
            sum.unknown,
            sum.named + sum.unknown,
            isa.name
        ));
    }
    warn_all(&warnings, a.allow_unknown, err)
}

/// An archive with `--gpu NAME` where NAME's code is another family than
/// G13 (Apple9): `--list` (slices, the chosen slice's functions and how
/// much of each the family's decoder frames and names) or `--disasm-only`
/// (the selected function's listing); no profile.
fn run_archive_other_isa(
    bytes: &[u8],
    name: &str,
    model: &'static agx_analysis::gpu::GpuModel,
    a: &ProfileArgs,
    out: &mut dyn Write,
) -> Result<(), Error> {
    let isa = model.isa;
    let gpu = a.gpu.as_deref().unwrap_or_default();
    if a.syntax == SyntaxArg::Native && !isa.native {
        return Err(Error::usage(format!(
            "--syntax native: {} code has no native (assemblable) syntax; use --syntax default or cryptic",
            isa.name
        )));
    }
    let (archive, index) = crate::pipeline::untimed::untimed_slice(bytes, name, gpu)?;
    let one = archive.only_slice(index);
    let listing_of = |f: &Function| {
        (isa.listing)(
            crate::pipeline::untimed::function_code(&one, f),
            f.text_offset as u32,
            syntax(a),
        )
    };
    if a.list {
        if a.format == FormatArg::Json {
            return write_all(out, &pipeline::list_document(&archive, Some(index)));
        }
        let mut text = pipeline::list_slices(&archive, Some(index));
        text.push('\n');
        let mut table = pipeline::list_functions(&Archive {
            warnings: Vec::new(),
            ..one.clone()
        });
        table.push_str(&format!("\n{} decoding of each function:\n", isa.name));
        for f in &one.functions {
            let (_, s) = listing_of(f);
            let stop = s
                .framing_stop
                .as_ref()
                .map_or(String::new(), |(_, w)| format!("; {w}"));
            table.push_str(&format!(
                "  {}: {} of {} bytes framed, {} instructions named, {} unknown{stop}\n",
                f.symbol, s.framed_bytes, f.code_size, s.named, s.unknown
            ));
        }
        text.push_str(&table);
        return write_all(out, &text);
    }
    let selected = one.select(a.function.as_deref())?;
    let shown = match a.part {
        PartArg::Main => one.main_of(selected).unwrap_or(selected),
        PartArg::Prolog => one.prolog_of(selected).ok_or_else(|| {
            Error::input(format!(
                "'{}' has no prolog in this archive; use --part main",
                selected.name
            ))
        })?,
        PartArg::All => {
            return Err(Error::usage(format!(
                "--part all: {} listings show one part at a time; use --part main or --part prolog",
                isa.name
            )))
        }
    };
    if !a.disasm_only {
        let r = crate::pipeline::untimed::function_record(
            &one,
            shown,
            shown.symbol.clone(),
            gpu,
            model,
        );
        let who = format!("`{}`", shown.symbol);
        let listing = a.show_disasm.then(|| listing_of(shown).0);
        return write_untimed(&r, listing, &who, a, out, &mut std::io::stderr());
    }
    let (text, s) = listing_of(shown);
    write_all(out, &text)?;
    let mut warnings = Vec::new();
    if let Some((_, why)) = &s.framing_stop {
        warnings.push(format!(
            "warning: `{}`: {why}; the rest is shown as `Unrecognized opcode` hex rows",
            shown.symbol
        ));
    }
    if s.unknown > 0 {
        warnings.push(format!(
            "warning: `{}`: {} of {} positions hold {} encodings no source decodes (shown as `unknown`)",
            shown.symbol,
            s.unknown,
            s.named + s.unknown,
            isa.name
        ));
    }
    warn_all(&warnings, a.allow_unknown, &mut std::io::stderr())
}

/// Prints an untimed profile ([`crate::pipeline::untimed::untimed_record`]) in the format
/// asked (text, JSON, HTML, DOT: its CFG), then its warnings (exit
/// [`pipeline::EXIT_UNKNOWN`] unless `--allow-unknown`). `listing`
/// (`--show-disasm`): the family's listing, after the text report.
fn write_untimed(
    r: &agx_report::KernelRecord,
    listing: Option<String>,
    who: &str,
    a: &ProfileArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), Error> {
    use agx_report::untimed;
    let isa = r.untimed.as_ref().map_or("", |u| u.isa);
    let doc = match a.format {
        FormatArg::Text => match listing {
            Some(l) => format!("{}\nDisassembly ({isa})\n{l}", untimed::text(r)),
            None => untimed::text(r),
        },
        FormatArg::Json => untimed::json_document(std::slice::from_ref(r)),
        FormatArg::Html => untimed::html_document(std::slice::from_ref(r)),
        FormatArg::Dot => agx_report::dot::untimed_document(std::slice::from_ref(r)),
        FormatArg::Sarif => agx_report::sarif::document([&sarif_record(r.clone(), a)]),
    };
    write_all(out, &doc)?;
    warn_all(
        &crate::pipeline::untimed::untimed_warnings(r, who),
        a.allow_unknown,
        err,
    )
}

/// After a raw listing: the checks of [`pipeline::check_decoded`] (the
/// listing is out already: it stops before the problem), then the
/// warning about unknown encodings and its exit code.
fn finish_raw_listing(
    origin: pipeline::Origin<'_>,
    n: usize,
    failed: usize,
    cut: Option<agx_isa::stream::Cut>,
    a: &ProfileArgs,
    err: &mut dyn Write,
) -> Result<(), Error> {
    pipeline::check_decoded(origin, n, failed, cut)?;
    let warning: Vec<String> = pipeline::raw_code_warning(n, failed).into_iter().collect();
    warn_all(&warning, a.allow_unknown, err)
}

/// Raw machine code (`--binary`): one kernel, placed at `--offset`/`--base`.
fn run_raw(
    bytes: &[u8],
    a: &ProfileArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
    tty: bool,
) -> Result<(), Error> {
    let name = a
        .binary
        .as_deref()
        .map_or_else(|| "<stdin>".to_string(), pipeline::display_name);
    let code = pipeline::raw_input(&name, bytes, a)?;
    if a.disasm_only {
        // streamed: constant memory for any code size (issue 15)
        let origin = pipeline::raw_origin(&name, bytes);
        let (n, failed, cut) = pipeline::write_listing(out, &code, syntax(a))
            .map_err(|e| Error::input(format!("cannot write output: {e}")))?;
        return finish_raw_listing(origin, n, failed, cut, a, err);
    }
    let k = pipeline::decode_raw(&name, code)?.profile(a, format_reads_graph(a))?;
    let warnings: Vec<String> = k.warnings().cloned().collect();
    // the report is written first; the warnings and exit code follow
    render_and_release(a, vec![k.profile], out, tty)?;
    warn_all(&warnings, a.allow_unknown, err)
}

/// Every combination of flags where one cannot apply, as a usage error
/// (exit 2) naming the conflict. One table, checked before any input is read.
pub fn check_flag_conflicts(a: &ProfileArgs) -> Result<(), Error> {
    let has_input = a.input.is_some() || a.binary.is_some() || a.source.is_some();
    let raw = a.binary.is_some();
    let compiles = a.source.is_some() || a.input.as_deref().is_some_and(is_metal_source);
    let json = a.format == FormatArg::Json;
    let picture = matches!(a.format, FormatArg::Html | FormatArg::Dot);
    let sarif = a.format == FormatArg::Sarif;
    let part = a.part != PartArg::Main;
    let offset = a.offset.is_some() || a.base.is_some();
    let mem_flags = a.model.l1_hit_latency.is_some()
        || a.model.l1_miss_latency.is_some()
        || a.model.l1_hit_rate.is_some();
    let compile_flags = a.keep_archive.is_some()
        || !a.compile.include.is_empty()
        || !a.compile.define.is_empty()
        || a.compile.std.is_some()
        || !a.compile.target.is_empty()
        || a.compile.min_macos.is_some()
        || a.compile.jit;
    let conflicts: &[(bool, &str)] = &[
        (a.explain_model && has_input,
         "--explain-model prints the timing model and reads no input; drop the input or --explain-model"),
        (a.explain_model && (a.list || a.disasm_only || a.show_disasm || a.all || a.function.is_some() || part || offset),
         "--explain-model prints the timing model only; it cannot be combined with --list, --disasm-only, --show-disasm, --all, -f, --part, --offset or --base"),
        (a.explain_model && (a.gpu.is_some() || a.model.chip.is_some()),
         "--explain-model prints the G13 table and its defaults; --gpu and --chip choose what a profile uses"),
        (a.explain_model && picture,
         "--explain-model prints text or JSON; --format html/dot draw a kernel's profile"),
        (picture && (a.disasm_only || a.list || a.show_disasm),
         "--format html/dot draw a kernel's profile; --disasm-only, --list and --show-disasm print text (use --format text)"),
        (a.explain_model && mem_flags,
         "--explain-model prints the model's defaults; --l1-hit-latency/--l1-miss-latency/--l1-hit-rate change a profile, not the table"),
        (json && a.disasm_only,
         "--disasm-only prints applegpu text and has no JSON form; drop --format json (the JSON report carries the instructions in instructions_detail)"),
        (json && a.show_disasm,
         "--show-disasm appends text to the text report; with --format json the instructions are in instructions_detail"),
        (sarif && (a.explain_model || a.disasm_only || a.show_disasm || a.list),
         "--format sarif writes a profile's suggestions; --explain-model, --disasm-only, --show-disasm and --list print text or JSON (use --format text or json)"),
        (a.disasm_only && a.show_disasm,
         "--disasm-only already prints only the disassembly; drop --show-disasm"),
        (a.list && (a.disasm_only || a.show_disasm || a.all || a.function.is_some() || part),
         "--list prints the archive's functions; it cannot be combined with --disasm-only, --show-disasm, --all, -f or --part"),
        (a.list && raw,
         "--list needs a Metal binary archive; --binary is raw machine code"),
        (a.all && raw,
         "--all profiles every kernel of an archive or .metal source; --binary is raw machine code holding one kernel"),
        (a.all && a.function.is_some(),
         "--all and -f both choose kernels; give one of them"),
        (a.all && part,
         "--all shows every kernel's main body; --part applies to one kernel chosen with -f"),
        (raw && part,
         "--part needs a Metal binary archive; --binary is raw machine code (no prolog or helpers)"),
        (offset && !raw && has_input,
         "--offset/--base apply to raw code (--binary); functions in an archive are placed at their __text offset"),
        ((a.disasm_only || a.list) && mem_flags,
         "--l1-hit-latency/--l1-miss-latency/--l1-hit-rate change the timing model; --disasm-only and --list print none"),
        (compile_flags && has_input && !compiles,
         "-I, -D, --std, --keep-archive, --target, --min-macos and --jit apply when compiling a .metal source or --source; this input is not compiled"),
    ];
    match conflicts.iter().find(|(hit, _)| *hit) {
        Some((_, msg)) => Err(Error::usage(*msg)),
        None => Ok(()),
    }
}

/// `--list`: every slice (which one is chosen), then the chosen slice's
/// functions. `--gpu` naming a slice that cannot be profiled is an error;
/// without `--gpu` an archive with nothing decodable is still listed.
fn list_archive(
    archive: &Archive,
    a: &ProfileArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), Error> {
    let chosen = match archive.choose_slice(a.gpu.as_deref()) {
        Ok(i) => Some(i),
        Err(e) if a.gpu.is_some() => return Err(e.into()),
        Err(e) => {
            let _ = writeln!(err, "note: {e}");
            None
        }
    };
    if a.format == FormatArg::Json {
        return write_all(out, &pipeline::list_document(archive, chosen));
    }
    let mut text = pipeline::list_slices(archive, chosen);
    if let Some(i) = chosen {
        text.push('\n');
        text.push_str(&pipeline::list_functions(&archive.only_slice(i)));
    } else {
        for w in &archive.warnings {
            text.push_str(&format!("warning: {w}\n"));
        }
    }
    write_all(out, &text)
}

fn run_archive(
    archive: &Archive,
    a: &ProfileArgs,
    device: Option<&str>,
    out: &mut dyn Write,
    err: &mut dyn Write,
    tty: bool,
) -> Result<(), Error> {
    for w in &archive.warnings {
        let _ = writeln!(err, "warning: {w}");
    }
    // --all (every kernel's main body, prologs summarised), or -f and --part
    let shown = pipeline::select_functions(archive, a)?;
    show_functions(archive, a, &shown, device, out, err, tty)
}

/// Whether `--format` renders the graph model ([`agx_report::Profile::graph`]):
/// only the HTML and DOT views read it.
fn format_reads_graph(a: &ProfileArgs) -> bool {
    matches!(a.format, FormatArg::Html | FormatArg::Dot)
}

/// Disassembles or profiles `shown` (functions of `archive`).
fn show_functions(
    archive: &Archive,
    a: &ProfileArgs,
    shown: &[&Function],
    device: Option<&str>,
    out: &mut dyn Write,
    err: &mut dyn Write,
    tty: bool,
) -> Result<(), Error> {
    let mut unknown = 0;
    if a.disasm_only {
        for f in shown {
            let code = pipeline::function_code(archive, f);
            if shown.len() > 1 {
                write_all(
                    out,
                    &format!(
                        "; {} ({}) at {:#x}\n",
                        f.symbol,
                        f.part.as_str(),
                        f.text_offset
                    ),
                )?;
            }
            let (n, failed, cut) = pipeline::write_listing(out, &code, syntax(a))
                .map_err(|e| Error::input(format!("cannot write output: {e}")))?;
            let origin = pipeline::Origin::Function { symbol: &f.symbol };
            pipeline::check_decoded(origin, n, failed, cut)?;
            unknown += warn_unknown(err, &f.symbol, failed, a.allow_unknown);
        }
        return unknown_exit(unknown, a.allow_unknown);
    }
    let mut profiles = Vec::new();
    for f in shown {
        let d = pipeline::decode_function(archive, f, a)?;
        unknown += warn_unknown(err, &f.symbol, d.failed(), a.allow_unknown);
        let k = d.profile(a, format_reads_graph(a))?;
        for w in &k.call_warnings {
            let _ = writeln!(
                err,
                "{}",
                pipeline::with_exit_note(w.clone(), a.allow_unknown)
            );
        }
        unknown += k.call_warnings.len();
        let mut prof = k.profile;
        if let Some(d) = device {
            // built on this Mac: name the device beside the APPLEGPU subtype
            prof.gpu = Some(format!("{} ({d})", prof.gpu.as_deref().unwrap_or("?")));
            prof.gpu_label = Some(format!(
                "{} on {d}",
                prof.gpu_label.as_deref().unwrap_or("?")
            ));
        }
        profiles.push(prof);
    }
    render_and_release(a, profiles, out, tty)?;
    unknown_exit(unknown, a.allow_unknown)
}

/// Writes [`unknown_warning`] (with the exit-code note) to `err` when
/// `failed > 0`; returns `failed`.
fn warn_unknown(err: &mut dyn Write, symbol: &str, failed: usize, allow: bool) -> usize {
    if failed > 0 {
        let _ = writeln!(
            err,
            "{}",
            pipeline::with_exit_note(pipeline::unknown_warning(symbol, failed), allow)
        );
    }
    failed
}

/// The outcome of a run that wrote its output after warning about
/// `unknown` unknown encodings: [`pipeline::EXIT_UNKNOWN`] unless
/// `--allow-unknown`.
fn unknown_exit(unknown: usize, allow_unknown: bool) -> Result<(), Error> {
    if unknown > 0 && !allow_unknown {
        Err(Error::unknown_encodings())
    } else {
        Ok(())
    }
}

/// Writes each warning with the exit-code note; the run's outcome:
/// [`pipeline::EXIT_UNKNOWN`] when there is any, unless `--allow-unknown`.
fn warn_all(warnings: &[String], allow_unknown: bool, err: &mut dyn Write) -> Result<(), Error> {
    for w in warnings {
        let _ = writeln!(
            err,
            "{}",
            pipeline::with_exit_note(w.clone(), allow_unknown)
        );
    }
    unknown_exit(warnings.len(), allow_unknown)
}

/// [`render`], then the profiles are freed on another thread: a big
/// kernel's profile is millions of allocations (~4% of a 1M-instruction
/// run), and the CLI exits without waiting for them.
fn render_and_release(
    a: &ProfileArgs,
    mut profiles: Vec<agx_report::Profile>,
    out: &mut dyn Write,
    tty: bool,
) -> Result<(), Error> {
    if a.format == FormatArg::Text {
        for p in &mut profiles {
            release_for_text(p);
        }
    }
    agx_analysis::time_passes::mark("record (the profile built)");
    let r = render(a, &profiles, out, tty);
    agx_analysis::time_passes::mark("report written");
    if profiles.iter().map(|p| p.insns.len()).sum::<usize>() >= 100_000 {
        std::thread::spawn(move || drop(profiles));
    }
    r
}

/// Frees what the text report does not print before it is written (a big
/// kernel's peak memory is reached while its listing is written): the
/// per-block, per-region and per-instruction cycle and execution vectors
/// that only the JSON and graph views read (~40 B per instruction of a
/// kernel with a loop per 12 instructions). Every figure the text prints
/// was computed from them already.
fn release_for_text(p: &mut agx_report::Profile) {
    let callees = p.program.functions.iter_mut().map(|f| &mut f.timing);
    for t in std::iter::once(&mut p.timing).chain(callees) {
        t.blocks = Vec::new();
        t.regions = Vec::new();
        t.insn_cycles = Vec::new();
        t.executions = Vec::new();
    }
}

fn render(
    a: &ProfileArgs,
    profiles: &[agx_report::Profile],
    out: &mut dyn Write,
    tty: bool,
) -> Result<(), Error> {
    match a.format {
        FormatArg::Json => {
            // serde writes token by token: a concrete buffer in front of the
            // `dyn Write` turns each into a memcpy, not a virtual call
            let mut bw = std::io::BufWriter::with_capacity(1 << 16, &mut *out);
            agx_report::json::write_document(&mut bw, profiles)
                .and_then(|()| bw.flush())
                .map_err(|e| Error::input(format!("cannot write output: {e}")))
        }
        FormatArg::Text => {
            let color = use_color(a.color, tty);
            // each piece written as it is made: no copy of the whole report
            for p in profiles {
                agx_report::text::write_report(out, p, color)
                    .map_err(|e| Error::input(format!("cannot write output: {e}")))?;
                if a.show_disasm {
                    write_all(out, &agx_report::text::plain_disassembly(p, syntax(a)))?;
                }
            }
            Ok(())
        }
        FormatArg::Html => write_all(out, &agx_report::html::document(profiles)),
        FormatArg::Dot => write_all(out, &agx_report::dot::document(profiles)),
        FormatArg::Sarif => {
            let records: Vec<agx_report::KernelRecord> = profiles
                .iter()
                .map(|p| sarif_record(agx_report::KernelRecord::build(p), a))
                .collect();
            write_all(out, &agx_report::sarif::document(&records))
        }
    }
}

/// `r` with its `source` set to the input file as given (the SARIF
/// results' artifact); none for stdin or `--source` text.
fn sarif_record(mut r: agx_report::KernelRecord, a: &ProfileArgs) -> agx_report::KernelRecord {
    r.source = a
        .input
        .as_deref()
        .or(a.binary.as_deref())
        .filter(|p| p.as_os_str() != "-")
        .map(|p| p.to_string_lossy().into_owned());
    r
}
