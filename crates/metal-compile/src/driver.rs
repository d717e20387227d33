//! The compile sequence, independent of the platform: validate the request, put the source on
//! disk, run the compiler command(s), let an [`ArchiveHarvester`] build and serialize the binary
//! archive, read it back. All intermediate files live in one [`crate::TempDir`] that is removed on
//! every exit path.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::command::{metal_commands, BuildMode, ToolCommand};
use crate::diagnostics::parse_diagnostics;
use crate::source::{keep_archive, prepare};
use crate::{CompileError, CompileRequest, CompiledArchive, MetalCompiler, Source};

/// What a finished tool process reported.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolOutput {
    /// Exit code; `None` when killed by a signal.
    pub status: Option<i32>,
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Runs external commands (a seam for tests).
pub trait ToolRunner {
    /// Run to completion. An `Err` means the program could not be started.
    fn run(&self, cmd: &ToolCommand) -> io::Result<ToolOutput>;
}

/// Runs commands with `std::process::Command`.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemRunner;

/// Environment variable that sets the limit on every tool run, in seconds.
pub const TIMEOUT_ENV: &str = "METAL_PROFILE_TOOL_TIMEOUT";
/// Default limit on one tool run (a cold `metal-tt` for several targets can
/// take a while; a hung first-launch prompt must not hang the profiler).
pub const DEFAULT_TIMEOUT_SECS: u64 = 300;

/// The limit on one tool run: `METAL_PROFILE_TOOL_TIMEOUT` seconds if set to
/// a positive number, else [`DEFAULT_TIMEOUT_SECS`].
pub fn tool_timeout() -> Duration {
    let secs = std::env::var(TIMEOUT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&s| s > 0)
        .unwrap_or(DEFAULT_TIMEOUT_SECS);
    Duration::from_secs(secs)
}

impl ToolRunner for SystemRunner {
    /// Runs with the [`tool_timeout`] limit: past it the process is killed and
    /// the error's kind is `TimedOut`.
    fn run(&self, cmd: &ToolCommand) -> io::Result<ToolOutput> {
        run_with_timeout(cmd, tool_timeout())
    }
}

fn run_with_timeout(cmd: &ToolCommand, limit: Duration) -> io::Result<ToolOutput> {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = cmd
        .to_command()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    // Drain both pipes on threads so a chatty tool cannot block on a full pipe.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if start.elapsed() >= limit {
            let _ = child.kill();
            let _ = child.wait();
            // The reader threads are left to finish on their own: a grandchild
            // may still hold the pipes open.
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("did not finish within {} s", limit.as_secs()),
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    Ok(ToolOutput {
        status: status.code(),
        success: status.success(),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    })
}

/// Which functions go into the archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FunctionSelection {
    /// These kernels, in this order.
    Named(Vec<String>),
    /// Every function of type kernel in the library.
    AllKernels,
}

/// Turns a `.metallib` into a serialized binary archive (on macOS: the Metal API).
pub trait ArchiveHarvester {
    /// Load `metallib`, add a compute pipeline for each selected kernel to a new binary archive
    /// and serialize it to `archive_out`. Returns the device name and the functions added.
    fn harvest(
        &self,
        metallib: &Path,
        selection: &FunctionSelection,
        archive_out: &Path,
    ) -> Result<(String, Vec<String>), CompileError>;
}

/// `xcrun metal` + an archive harvester. On macOS `default_compiler()` is
/// `XcrunCompiler::new(SystemRunner, MetalApiHarvester)`.
#[derive(Debug, Clone)]
pub struct XcrunCompiler<R, H> {
    runner: R,
    harvester: H,
    mode: BuildMode,
    temp_parent: Option<PathBuf>,
}

const TEMP_PREFIX: &str = "metal-compile";
const METALLIB_NAME: &str = "kernel.metallib";
const ARCHIVE_NAME: &str = "kernel.archive";

/// Shown in place of the temporary file's path in diagnostics for `--source` text.
pub const SOURCE_TEXT_LABEL: &str = "<source>";

impl<R: ToolRunner, H: ArchiveHarvester> XcrunCompiler<R, H> {
    pub fn new(runner: R, harvester: H) -> Self {
        XcrunCompiler {
            runner,
            harvester,
            mode: BuildMode::default(),
            temp_parent: None,
        }
    }

    /// One-step (`metal -o x.metallib`, the default) or two-step (`.air`, then `metallib`).
    pub fn with_mode(mut self, mode: BuildMode) -> Self {
        self.mode = mode;
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

    pub fn harvester(&self) -> &H {
        &self.harvester
    }

    fn run_tool(
        &self,
        cmd: &ToolCommand,
        text_source: Option<&Path>,
    ) -> Result<String, CompileError> {
        run_tool(&self.runner, cmd, text_source)
    }
}

/// Runs `cmd` and maps every failure to one [`CompileError`]: the program
/// missing, the `metal` toolchain missing, a timeout, or the tool's own
/// failure (with its output verbatim). Returns what it printed on success.
pub(crate) fn run_tool<R: ToolRunner + ?Sized>(
    runner: &R,
    cmd: &ToolCommand,
    text_source: Option<&Path>,
) -> Result<String, CompileError> {
    let tool = cmd.args.get(2).map_or_else(
        || cmd.program.to_string_lossy().into_owned(),
        |t| format!("{} {}", cmd.program.to_string_lossy(), t.to_string_lossy()),
    );
    let out = match runner.run(cmd) {
        Ok(out) => out,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(CompileError::ToolNotFound {
                tool,
                hint: "not found; install Xcode and its command-line tools \
                       (`xcode-select --install`)"
                    .to_string(),
            })
        }
        Err(e) if e.kind() == io::ErrorKind::TimedOut => {
            return Err(CompileError::Timeout {
                command: cmd.to_string(),
                seconds: tool_timeout().as_secs(),
            })
        }
        Err(e) => return Err(CompileError::io(format!("cannot run `{tool}`"), e)),
    };
    let mut output = out.stderr;
    if !out.stdout.trim().is_empty() {
        if !output.is_empty() && !output.ends_with('\n') {
            output.push('\n');
        }
        output.push_str(&out.stdout);
    }
    if let Some(tmp_src) = text_source {
        output = output.replace(&*tmp_src.to_string_lossy(), SOURCE_TEXT_LABEL);
    }
    if out.success {
        return Ok(output);
    }
    if missing_metal_toolchain(&output) {
        return Err(CompileError::ToolNotFound {
            tool,
            hint: format!(
                "{}; the Metal compiler{} comes with Xcode: install it, select it with \
                 `sudo xcode-select --switch /Applications/Xcode.app/Contents/Developer`, \
                 and on Xcode 26 or later run `xcodebuild -downloadComponent MetalToolchain`",
                output.trim().replace('\n', " "),
                if output.contains("\"metal-tt") {
                    " (metal-tt: Xcode 14 or later)"
                } else {
                    ""
                }
            ),
        });
    }
    Err(CompileError::CompilerFailed {
        command: cmd.to_string(),
        status: out.status,
        diagnostics: parse_diagnostics(&output),
        output,
    })
}

/// The note for a JIT build on a GPU whose code cannot be decoded (M3 and
/// later): the driver only builds for the Mac's own GPU.
pub fn jit_device_note(device_name: &str) -> Option<String> {
    let code =
        crate::device_generation(device_name).map_or(crate::HostCode::NotDecoded, crate::host_code);
    match code {
        crate::HostCode::Timed => None,
        // its own code is profiled, without cycles
        crate::HostCode::Untimed => Some(format!(
            "the driver built code for '{device_name}': its own Apple9 code, profiled without cycle \
             figures (counts and structure); drop --jit to compile offline for M2 (--target g14g) for cycles"
        )),
        crate::HostCode::NotDecoded => Some(format!(
            "the driver built code for '{device_name}', whose GPU this profiler cannot decode \
             (it reads M1/G13 and M2/G14 code); drop --jit to compile offline for M2 (--target g14g)"
        )),
    }
}

/// `xcrun` output meaning the `metal` tool itself is absent (Command Line Tools only, or
/// Xcode 26+ without the separately downloaded Metal Toolchain).
fn missing_metal_toolchain(output: &str) -> bool {
    output.contains("unable to find utility \"metal")
        || output.contains("unable to find utility \"metallib")
        || output.contains("missing Metal Toolchain")
}

/// Check the function selection of a request.
pub(crate) fn selection(req: &CompileRequest) -> Result<FunctionSelection, CompileError> {
    if req.all {
        return Ok(FunctionSelection::AllKernels);
    }
    if req.functions.is_empty() {
        return Err(CompileError::NoFunctionsRequested);
    }
    let mut names: Vec<String> = Vec::with_capacity(req.functions.len());
    for f in &req.functions {
        let f = f.trim();
        if f.is_empty() {
            return Err(CompileError::InvalidRequest(
                "empty function name".to_string(),
            ));
        }
        if !names.iter().any(|n| n == f) {
            names.push(f.to_string());
        }
    }
    Ok(FunctionSelection::Named(names))
}

impl<R: ToolRunner, H: ArchiveHarvester> MetalCompiler for XcrunCompiler<R, H> {
    fn compile(&self, req: &CompileRequest) -> Result<CompiledArchive, CompileError> {
        let selection = selection(req)?;
        let (tmp, source) = prepare(&req.source, self.temp_parent.as_deref(), TEMP_PREFIX)?;
        let text_source = matches!(req.source, Source::Text(_)).then_some(source.path.as_path());
        let metallib = tmp.join(METALLIB_NAME);
        let mut compiler_output = String::new();
        for cmd in metal_commands(req, &source.path, &metallib, self.mode) {
            compiler_output.push_str(&self.run_tool(&cmd, text_source)?);
        }
        if !metallib.is_file() {
            return Err(CompileError::io(
                format!(
                    "the compiler reported success but wrote no {}",
                    metallib.display()
                ),
                io::Error::from(io::ErrorKind::NotFound),
            ));
        }

        let archive_path = tmp.join(ARCHIVE_NAME);
        let (device_name, functions) =
            self.harvester
                .harvest(&metallib, &selection, &archive_path)?;
        let bytes = std::fs::read(&archive_path).map_err(|e| {
            CompileError::io(
                format!(
                    "cannot read the serialized archive {}",
                    archive_path.display()
                ),
                e,
            )
        })?;

        let kept_at = keep_archive(req, &bytes)?;
        // Dropping `tmp` removes the directory; do it explicitly so the success path has no
        // leftovers even if the caller leaks the result.
        let _ = tmp.close();
        Ok(CompiledArchive {
            bytes,
            functions,
            kept_at,
            compiler_output,
            targets: Vec::new(),
            notes: jit_device_note(&device_name).into_iter().collect(),
            device_name,
        })
    }
}
