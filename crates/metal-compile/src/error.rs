use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::diagnostics::{Diagnostic, Severity};

/// The message for `.metal` input on a platform without Metal.
pub const UNSUPPORTED_MESSAGE: &str =
    "compiling .metal needs macOS with the Xcode command-line tools (`xcrun metal`); \
to profile on Linux, run `metal-profile export kernel.metal -f NAME -o kernel.archive` on a Mac \
and then `metal-profile kernel.archive -f NAME` here";

/// Why a compile failed. `Display` gives one line; for [`CompileError::CompilerFailed`] the
/// compiler's own output follows verbatim on the next lines.
#[derive(Debug)]
#[non_exhaustive]
pub enum CompileError {
    /// This platform has no Metal compiler (not macOS).
    Unsupported,
    /// The request names no function and does not ask for `--all`.
    NoFunctionsRequested,
    /// The request is malformed (e.g. an empty function name).
    InvalidRequest(String),
    /// The `.metal` file does not exist.
    SourceNotFound(PathBuf),
    /// A file-system operation failed.
    Io { context: String, source: io::Error },
    /// A compiler tool could not be started (`xcrun` missing, or no `metal` in the toolchain).
    ToolNotFound { tool: String, hint: String },
    /// The compiler ran and failed; `output` is its stderr (and stdout) verbatim.
    CompilerFailed {
        command: String,
        status: Option<i32>,
        diagnostics: Vec<Diagnostic>,
        output: String,
    },
    /// `MTLCreateSystemDefaultDevice` returned nil.
    NoMetalDevice,
    /// A requested function is not in the compiled library.
    FunctionNotFound {
        name: String,
        available: Vec<String>,
    },
    /// A requested function exists but is not a `kernel` function.
    NotAKernel { name: String },
    /// `--all` was given but the library has no kernel functions.
    NoKernels,
    /// A Metal API call failed; `message` is the `NSError` description.
    Metal { operation: String, message: String },
    /// A tool ran longer than the limit ([`crate::tool_timeout`]) and was stopped.
    Timeout { command: String, seconds: u64 },
    /// A tool other than the compiler failed (e.g. `metal-tt`): its first
    /// meaningful output line, and what to do.
    ToolFailed {
        command: String,
        status: Option<i32>,
        message: String,
        fix: String,
    },
    /// `--target` names an architecture no source lists.
    UnknownTarget { name: String, known: Vec<String> },
}

impl CompileError {
    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> Self {
        CompileError::Io {
            context: context.into(),
            source,
        }
    }

    /// The parsed diagnostics of a compiler failure (empty for other errors).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            CompileError::CompilerFailed { diagnostics, .. } => diagnostics,
            _ => &[],
        }
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompileError::Unsupported => f.write_str(UNSUPPORTED_MESSAGE),
            CompileError::NoFunctionsRequested => {
                f.write_str("no kernel function selected: pass -f NAME (repeatable) or --all")
            }
            CompileError::InvalidRequest(msg) => write!(f, "invalid compile request: {msg}"),
            CompileError::SourceNotFound(path) => {
                write!(f, "Metal source not found: {}", path.display())
            }
            CompileError::Io { context, source } => write!(f, "{context}: {source}"),
            CompileError::ToolNotFound { tool, hint } => {
                write!(f, "cannot run `{tool}`: {hint}")
            }
            CompileError::CompilerFailed {
                command,
                status,
                diagnostics,
                output,
            } => {
                let errors = diagnostics
                    .iter()
                    .filter(|d| matches!(d.severity, Severity::Error | Severity::Fatal))
                    .count();
                write!(f, "Metal compilation failed")?;
                match errors {
                    0 => {}
                    1 => write!(f, " with 1 error")?,
                    n => write!(f, " with {n} errors")?,
                }
                match status {
                    Some(code) => write!(f, " (exit status {code}): {command}")?,
                    None => write!(f, " (killed by a signal): {command}")?,
                }
                let output = output.trim_end();
                if !output.is_empty() {
                    write!(f, "\n{output}")?;
                }
                Ok(())
            }
            CompileError::NoMetalDevice => {
                f.write_str(
                "no Metal device available (MTLCreateSystemDefaultDevice and MTLCopyAllDevices found none); \
                 --jit needs a Mac with a Metal GPU: drop --jit to compile offline with metal-tt",
            )
            }
            CompileError::FunctionNotFound { name, available } => {
                write!(f, "function `{name}` not found in the compiled library")?;
                if available.is_empty() {
                    f.write_str(" (it has no functions)")
                } else {
                    write!(f, " (available: {})", available.join(", "))
                }
            }
            CompileError::NotAKernel { name } => write!(
                f,
                "function `{name}` is not a kernel function; only compute kernels can be profiled"
            ),
            CompileError::NoKernels => {
                f.write_str("--all: the compiled library contains no kernel functions")
            }
            CompileError::Metal { operation, message } => {
                write!(f, "Metal {operation} failed: {message}")
            }
            CompileError::Timeout { command, seconds } => write!(
                f,
                "`{command}` did not finish within {seconds} s and was stopped; if Xcode waits for a \
                 first-launch step run `sudo xcodebuild -runFirstLaunch` (and `-license accept`), or \
                 allow more time with {}=SECONDS",
                crate::TIMEOUT_ENV
            ),
            CompileError::ToolFailed {
                command,
                status,
                message,
                fix,
            } => {
                write!(f, "`{command}` failed")?;
                match status {
                    Some(code) => write!(f, " (exit status {code})")?,
                    None => write!(f, " (killed by a signal)")?,
                }
                if !message.is_empty() {
                    write!(f, ": {message}")?;
                }
                write!(f, "; {fix}")
            }
            CompileError::UnknownTarget { name, known } => write!(
                f,
                "--target {name}: not a known Apple GPU architecture; use one of: {}",
                known.join(", ")
            ),
        }
    }
}

impl std::error::Error for CompileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CompileError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
