//! The offline front end: native code for any Apple GPU target, on any Mac,
//! without running anything on the GPU.
//!
//! `.metal` → `xcrun -sdk macosx metal -c` → `.air` → `xcrun -sdk macosx
//! metallib` → `.metallib`, then a pipeline script (`.mtlp-json`) naming the
//! kernels and `xcrun -sdk macosx metal-tt -arch applegpu_… -o out k.metallib
//! k.mtlp-json`, whose output is the archive (a fat file with one slice per
//! architecture, or a thin Mach-O for one). Sources: Xcode man pages
//! metal-tt(1), metal-pipelines-script(5); Apple's "Compiling binary archives
//! from a custom configuration script" (see shared/reference/gpu-targets.md).
//!
//! Nothing here is macOS-specific: it runs wherever an `xcrun` is on `PATH`
//! (on Linux only a stand-in, as the tests use), so every step is tested
//! everywhere.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::command::{air_then_metallib, compiler_flags, xcrun, ToolCommand};
use crate::driver::{run_tool, selection, FunctionSelection, SystemRunner, ToolRunner};
use crate::source::{keep_archive, prepare, write_file};
use crate::{CompileError, CompileRequest, CompiledArchive, MetalCompiler, Source};

const TEMP_PREFIX: &str = "metal-compile-tt";
const AIR_NAME: &str = "kernel.air";
const METALLIB_NAME: &str = "kernel.metallib";
/// metal-pipelines-script(5): the extension must be `.mtlp-json`; a `.json`
/// file is read as a FlatBuffer and fails.
pub const SCRIPT_NAME: &str = "pipelines.mtlp-json";
const OUTPUT_NAME: &str = "kernel.archive";

/// The target used when the host's GPU cannot be decoded (or is unknown).
pub const FALLBACK_TARGET: &str = "g14g";

/// Checks `--target` values (comma-separated and/or repeated; `g14g`,
/// `G14G` and `applegpu_g14g` all work) against the names the sources list;
/// returns them lower-case without the `applegpu_` prefix, duplicates removed.
pub fn parse_targets(values: &[String]) -> Result<Vec<String>, CompileError> {
    let mut out: Vec<String> = Vec::new();
    for v in values.iter().flat_map(|v| v.split(',')) {
        let v = v.trim();
        if v.is_empty() {
            continue;
        }
        let Some(row) = agx_container::gpu_row(v) else {
            return Err(CompileError::UnknownTarget {
                name: v.to_string(),
                known: agx_container::GPUS
                    .iter()
                    .map(|r| r.name.to_ascii_lowercase())
                    .collect(),
            });
        };
        let name = row.name.to_ascii_lowercase();
        if !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

/// The target to build when none is given, and the note to show: the host
/// GPU's own when this project decodes it (`g13g` for M1, `g14g` for M2),
/// else `g14g`. `host` is the Mac's chip name (`Apple M4 Pro`), if known.
pub fn default_target(host: Option<&str>) -> (String, Option<String>) {
    match host.and_then(|h| crate::device_generation(h).map(|g| (h, g))) {
        Some((h, g)) => {
            let own = format!("g{g}g");
            match crate::host_code(g) {
                crate::HostCode::Timed => (own, None),
                // profiled without a timing model (Apple9: counts and
                // structure, no cycles): the default stays the M2 build,
                // which has cycle figures, until the untimed profile covers
                // real code well (issue 28 item 3); the note says how to
                // profile the GPU's own code
                crate::HostCode::Untimed => (
                    FALLBACK_TARGET.into(),
                    Some(format!(
                        "your GPU ({h}, G{g}) has no cycle model yet; profiling the same kernel compiled for M2 (G14G) (--target {own} profiles your GPU's own code: counts and structure, no cycles)"
                    )),
                ),
                crate::HostCode::NotDecoded => (
                    FALLBACK_TARGET.into(),
                    Some(format!(
                        "your GPU ({h}, G{g}) is not decodable yet; profiling the same kernel compiled for M2 (G14G)"
                    )),
                ),
            }
        }
        None => (
            FALLBACK_TARGET.into(),
            Some(
                "cannot tell this machine's Apple GPU; profiling the kernel compiled for M2 (G14G)"
                    .into(),
            ),
        ),
    }
}

/// The Mac's chip name (`sysctl -n machdep.cpu.brand_string`, e.g.
/// `Apple M2 Pro`); `None` off macOS or when it cannot be read.
pub fn host_chip() -> Option<String> {
    if !cfg!(target_os = "macos") {
        return None;
    }
    let cmd = ToolCommand::new("sysctl")
        .arg("-n")
        .arg("machdep.cpu.brand_string");
    let out = SystemRunner.run(&cmd).ok()?;
    let s = out.stdout.trim();
    (out.success && !s.is_empty()).then(|| s.to_string())
}

/// `{"pipelines":{"compute_pipelines":[{"compute_function":"foo"},…]}}`: the
/// shortest script form, with the metallib named on the command line.
pub fn pipeline_script(functions: &[String]) -> String {
    let items: Vec<String> = functions
        .iter()
        .map(|f| format!("{{\"compute_function\":{}}}", json_string(f)))
        .collect();
    format!(
        "{{\"pipelines\":{{\"compute_pipelines\":[{}]}}}}\n",
        items.join(",")
    )
}

fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The four steps' command lines: `metal -c`, `metallib`, and `metal-tt`
/// for `targets` (lower-case names such as `g14g`).
pub fn offline_commands(
    req: &CompileRequest,
    source: &Path,
    dir: &Path,
    targets: &[String],
) -> Vec<ToolCommand> {
    let air = dir.join(AIR_NAME);
    let metallib = dir.join(METALLIB_NAME);
    let mut flags = compiler_flags(req);
    if let Some(v) = &req.min_macos {
        // gpu-targets.md: the "AIR version is bigger than the target" fix
        flags.push("-target".into());
        flags.push(format!("air64-apple-macos{}", v.trim()).into());
    }
    let [compile, link] = air_then_metallib(flags, source, &air, &metallib);
    let mut tt = xcrun("metal-tt");
    for t in targets {
        tt = tt.arg("-arch").arg(format!("applegpu_{t}"));
    }
    let tt = tt
        .arg("-o")
        .arg(dir.join(OUTPUT_NAME).as_os_str())
        .arg(metallib.as_os_str())
        .arg(dir.join(SCRIPT_NAME).as_os_str());
    vec![compile, link, tt]
}

/// The first line of a tool's output that says something (an `error:` line
/// if there is one).
fn first_message(output: &str) -> String {
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines
        .iter()
        .find(|l| l.contains("error"))
        .or(lines.first())
        .map(|l| l.to_string())
        .unwrap_or_default()
}

/// What to do about a `metal-tt` failure, from its output.
fn metal_tt_fix(output: &str) -> String {
    if output.contains("AIR version") && output.contains("bigger") {
        // gpu-targets.md: fixed with -platform_version or -target air64-apple-macosNN
        "the library was built for a newer macOS than metal-tt targets: build it for an older one \
         with `--min-macos 14.0` (passes `-target air64-apple-macos14.0` to `metal -c`), or update Xcode"
            .into()
    } else {
        "check the -f kernel names and the --target architectures (`xcrun metal-tt --help` lists \
         what this Xcode supports; metal-tt needs Xcode 14 or later)"
            .into()
    }
}

/// The offline compiler: `xcrun` tools only, no Metal device.
#[derive(Debug, Clone)]
pub struct OfflineCompiler<R> {
    runner: R,
    temp_parent: Option<PathBuf>,
    host: Option<String>,
}

impl OfflineCompiler<SystemRunner> {
    /// The real tools (with the [`crate::tool_timeout`] limit), and the
    /// host chip from `sysctl` for the default target.
    pub fn system() -> Self {
        OfflineCompiler::new(SystemRunner).with_host(host_chip())
    }
}

impl<R: ToolRunner> OfflineCompiler<R> {
    pub fn new(runner: R) -> Self {
        OfflineCompiler {
            runner,
            temp_parent: None,
            host: None,
        }
    }

    /// The Mac's chip name used to pick the default target.
    pub fn with_host(mut self, host: Option<String>) -> Self {
        self.host = host;
        self
    }

    /// Create the temporary directory under `parent` instead of `std::env::temp_dir()`.
    pub fn with_temp_parent(mut self, parent: impl Into<PathBuf>) -> Self {
        self.temp_parent = Some(parent.into());
        self
    }

    pub fn runner(&self) -> &R {
        &self.runner
    }
}

impl<R: ToolRunner> MetalCompiler for OfflineCompiler<R> {
    fn compile(&self, req: &CompileRequest) -> Result<CompiledArchive, CompileError> {
        let functions =
            match selection(req)? {
                FunctionSelection::Named(n) => n,
                FunctionSelection::AllKernels => return Err(CompileError::InvalidRequest(
                    "--all needs the driver path (--jit, on a Mac) to list a library's kernels; \
                     name the kernels with -f (repeatable)"
                        .into(),
                )),
            };
        let mut notes = Vec::new();
        let mut targets = parse_targets(&req.targets)?;
        if targets.is_empty() {
            let (t, note) = default_target(self.host.as_deref());
            notes.extend(note);
            targets.push(t);
        }
        let (tmp, source) = prepare(&req.source, self.temp_parent.as_deref(), TEMP_PREFIX)?;
        let text_source = matches!(req.source, Source::Text(_)).then_some(source.path.as_path());
        write_file(
            &tmp.join(SCRIPT_NAME),
            pipeline_script(&functions).as_bytes(),
        )?;
        let cmds = offline_commands(req, &source.path, tmp.path(), &targets);
        let mut compiler_output = String::new();
        for (i, cmd) in cmds.iter().enumerate() {
            let tt = i == cmds.len() - 1;
            match run_tool(&self.runner, cmd, text_source) {
                Ok(out) => compiler_output.push_str(&out),
                Err(CompileError::CompilerFailed { status, output, .. }) if tt => {
                    return Err(CompileError::ToolFailed {
                        command: cmd.to_string(),
                        status,
                        message: first_message(&output),
                        fix: metal_tt_fix(&output),
                    })
                }
                Err(e) => return Err(e),
            }
            // each step must leave its output file
            let produced = cmd.args.iter().position(|a| a == "-o").and_then(|k| {
                cmd.args
                    .get(k + 1)
                    .map(|p| PathBuf::from(OsString::from(p)))
            });
            if let Some(p) = produced.filter(|p| !p.is_file()) {
                return Err(CompileError::ToolFailed {
                    command: cmd.to_string(),
                    status: Some(0),
                    message: format!("it reported success but wrote no {}", p.display()),
                    fix: "check the Xcode installation (`xcrun -sdk macosx metal --version`)"
                        .into(),
                });
            }
        }
        let out_path = tmp.join(OUTPUT_NAME);
        let bytes = std::fs::read(&out_path)
            .map_err(|e| CompileError::io(format!("cannot read {}", out_path.display()), e))?;
        if !is_archive(&bytes) {
            return Err(CompileError::ToolFailed {
                command: cmds[cmds.len() - 1].to_string(),
                status: Some(0),
                message: format!(
                    "it wrote {} bytes that are not a Metal binary archive (no fat or Mach-O header)",
                    bytes.len()
                ),
                fix: "check the Xcode installation; metal-tt needs Xcode 14 or later".into(),
            });
        }
        notes.extend(missing_targets(&bytes, &targets));
        let kept_at = keep_archive(req, &bytes)?;
        let _ = tmp.close();
        Ok(CompiledArchive {
            bytes,
            device_name: String::new(),
            functions,
            kept_at,
            compiler_output,
            targets,
            notes,
        })
    }
}

/// Whether `bytes` start like an archive with machine code: what
/// [`agx_container::looks_like_archive`] accepts (the Metal fat header or
/// its universal twin, either byte order, or a 64-bit Mach-O), but not an
/// AIR-only `MTLB` library, which holds no GPU code.
fn is_archive(bytes: &[u8]) -> bool {
    agx_container::looks_like_archive(bytes) && !bytes.starts_with(b"MTLB")
}

/// Notes for requested targets that have no slice in what metal-tt wrote.
fn missing_targets(bytes: &[u8], targets: &[String]) -> Vec<String> {
    // the profiler's decode predicate (the GPU models), as the profile of
    // these bytes reads them
    let opts = agx_container::ReadOptions {
        keep_undecodable: true,
        ..agx_container::ReadOptions::new(agx_analysis::gpu::decodes)
    };
    let Ok(agx_container::Input::Archive(a)) = agx_container::read_with(bytes, &opts) else {
        // the reader reports what is wrong with the file when it is profiled
        return Vec::new();
    };
    targets
        .iter()
        .filter(|t| agx_container::gpu_row(t).is_some_and(|r| r.cpusubtype.is_some()))
        .filter(|t| {
            !a.slices
                .iter()
                .any(|s| s.gpu().is_some_and(|g| g.name.eq_ignore_ascii_case(t)))
        })
        .map(|t| format!("metal-tt wrote no applegpu_{t} slice"))
        .collect()
}
