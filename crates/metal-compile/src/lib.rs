//! metal-compile: the macOS front end of metal-profiler.
//!
//! On a Mac this crate compiles a `.metal` source with `xcrun -sdk macosx metal`, loads the
//! resulting `.metallib` through the Metal API, adds a compute pipeline for each requested
//! kernel to an `MTLBinaryArchive` (which makes the driver JIT the native AGX code) and returns
//! the serialized archive bytes. Everywhere else [`default_compiler`] returns
//! [`UnsupportedCompiler`], whose error tells the user how to export an archive on a Mac and
//! profile it here.
//!
//! The platform-independent parts (command lines, diagnostics parsing, temporary files, the
//! source-string path and the whole driver sequence with a pluggable tool runner and archive
//! harvester) are ordinary Rust and tested on every platform.

use std::path::PathBuf;

mod command;
mod diagnostics;
mod driver;
mod error;
mod gpu;
mod offline;
mod source;
mod tempdir;

#[cfg(target_os = "macos")]
mod macos;

pub use command::{metal_commands, BuildMode, ToolCommand};
pub use diagnostics::{parse_diagnostics, Diagnostic, Severity};
pub use driver::{
    jit_device_note, tool_timeout, ArchiveHarvester, FunctionSelection, SystemRunner, ToolOutput,
    ToolRunner, XcrunCompiler, DEFAULT_TIMEOUT_SECS, SOURCE_TEXT_LABEL, TIMEOUT_ENV,
};
pub use error::{CompileError, UNSUPPORTED_MESSAGE};
pub use gpu::{device_generation, host_code, is_g13_device, HostCode};
pub use offline::{
    default_target, host_chip, offline_commands, parse_targets, pipeline_script, OfflineCompiler,
    FALLBACK_TARGET, SCRIPT_NAME,
};
pub use source::{materialize_source, MaterializedSource, SOURCE_FILE_NAME};
pub use tempdir::TempDir;

#[cfg(target_os = "macos")]
pub use macos::MetalApiHarvester;

/// Where the Metal source comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A `.metal` file on disk (compiled in place; its directory is searched for includes).
    File(PathBuf),
    /// Source text (`--source "kernel void …"`); written to a temporary `kernel.metal`.
    Text(String),
}

/// Everything needed to turn Metal source into a serialized binary archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileRequest {
    pub source: Source,
    /// Kernel function names (`-f`, may repeat). Ignored when `all` is set.
    pub functions: Vec<String>,
    /// Every kernel function in the library (`--all`).
    pub all: bool,
    /// `-I` include directories, passed to the compiler in order.
    pub include_dirs: Vec<PathBuf>,
    /// `-D` macro definitions, `NAME` or `NAME=VALUE` (a leading `-D` is tolerated).
    pub defines: Vec<String>,
    /// Metal language standard for `-std=`, e.g. `metal3.0` (a leading `-std=` is tolerated).
    pub std: Option<String>,
    /// Also save the serialized archive here (`--keep-archive PATH`, `export -o PATH`).
    pub keep_archive: Option<PathBuf>,
    /// Offline path: GPU architectures to build (`g13g`, `applegpu_g14g`, …;
    /// comma-separated values allowed). Empty: the host's if decodable, else
    /// `g14g` ([`default_target`]).
    pub targets: Vec<String>,
    /// Offline path: build the AIR for this macOS version
    /// (`-target air64-apple-macos<VER>`), the fix for metal-tt's "AIR version
    /// is bigger than the target" error.
    pub min_macos: Option<String>,
}

impl CompileRequest {
    /// A request for the given source with no functions selected and no extra flags.
    pub fn new(source: Source) -> Self {
        CompileRequest {
            source,
            functions: Vec::new(),
            all: false,
            include_dirs: Vec::new(),
            defines: Vec::new(),
            std: None,
            keep_archive: None,
            targets: Vec::new(),
            min_macos: None,
        }
    }
}

/// The result of a successful compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompiledArchive {
    /// The serialized `MTLBinaryArchive` file, to be handed to the archive reader.
    pub bytes: Vec<u8>,
    /// `MTLDevice.name` of the GPU the archive was built for, e.g. `Apple M1 Pro`.
    pub device_name: String,
    /// The kernel functions that were added to the archive, in order.
    pub functions: Vec<String>,
    /// Where the archive was saved, when `keep_archive` was requested.
    pub kept_at: Option<PathBuf>,
    /// What the compiler printed although it succeeded (warnings), verbatim; often empty.
    pub compiler_output: String,
    /// The architectures built by the offline path (`g14g`, …); empty for the JIT path.
    pub targets: Vec<String>,
    /// One-line notes for the user (the default target's reason, a target
    /// metal-tt left out).
    pub notes: Vec<String>,
}

/// Compiles Metal source into a serialized binary archive.
pub trait MetalCompiler {
    fn compile(&self, req: &CompileRequest) -> Result<CompiledArchive, CompileError>;
}

/// The compiler for platforms without Metal: every request fails with
/// [`CompileError::Unsupported`].
#[derive(Debug, Clone, Copy, Default)]
pub struct UnsupportedCompiler;

impl MetalCompiler for UnsupportedCompiler {
    fn compile(&self, _req: &CompileRequest) -> Result<CompiledArchive, CompileError> {
        Err(CompileError::Unsupported)
    }
}

/// The compiler for this platform: `xcrun metal` plus the Metal API on macOS,
/// [`UnsupportedCompiler`] elsewhere.
pub fn default_compiler() -> Box<dyn MetalCompiler> {
    #[cfg(target_os = "macos")]
    {
        Box::new(XcrunCompiler::new(SystemRunner, MetalApiHarvester))
    }
    #[cfg(not(target_os = "macos"))]
    {
        Box::new(UnsupportedCompiler)
    }
}

/// The offline compiler (`metal` → `metallib` → `metal-tt`) with the real
/// tools: works wherever `xcrun` is on `PATH` (any Mac with Xcode 14+).
pub fn offline_compiler() -> Box<dyn MetalCompiler> {
    Box::new(OfflineCompiler::system())
}

/// The compiler the front ends use: with `jit`, the Metal driver for this
/// Mac's GPU ([`default_compiler`]); otherwise the offline path wherever
/// `xcrun` is on `PATH` (or on macOS, where its absence gets Xcode advice),
/// else [`UnsupportedCompiler`] with the export-on-a-Mac advice.
pub fn compiler_for(jit: bool) -> Box<dyn MetalCompiler> {
    if jit {
        default_compiler()
    } else if xcrun_on_path() || compiling_supported() {
        offline_compiler()
    } else {
        Box::new(UnsupportedCompiler)
    }
}

/// Whether an `xcrun` is on `PATH` (the offline path's requirement).
pub fn xcrun_on_path() -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join("xcrun").is_file()))
}

/// Whether [`default_compiler`] can actually compile on this platform.
pub const fn compiling_supported() -> bool {
    cfg!(target_os = "macos")
}
