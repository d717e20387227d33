//! Command lines for `xcrun -sdk macosx metal` / `metallib`.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::Path;
use std::process::Command;

use crate::CompileRequest;

/// How to get from `.metal` to `.metallib`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BuildMode {
    /// `xcrun -sdk macosx metal [flags] src.metal -o out.metallib` (one process).
    #[default]
    OneStep,
    /// `xcrun -sdk macosx metal -c [flags] src.metal -o out.air`, then
    /// `xcrun -sdk macosx metallib out.air -o out.metallib`.
    TwoStep,
}

/// One program invocation: a program name and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCommand {
    pub program: OsString,
    pub args: Vec<OsString>,
}

impl ToolCommand {
    pub fn new(program: impl Into<OsString>) -> Self {
        ToolCommand {
            program: program.into(),
            args: Vec::new(),
        }
    }

    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// The arguments as (lossy) strings, for tests and messages.
    pub fn args_lossy(&self) -> Vec<String> {
        self.args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    /// A `std::process::Command` for this invocation.
    pub fn to_command(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args);
        cmd
    }
}

/// Shell-like rendering (arguments with spaces or quotes are single-quoted), for messages.
impl fmt::Display for ToolCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", shell_word(&self.program))?;
        for a in &self.args {
            write!(f, " {}", shell_word(a))?;
        }
        Ok(())
    }
}

fn shell_word(s: &OsStr) -> String {
    let s = s.to_string_lossy();
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// `xcrun -sdk macosx TOOL`: every toolchain step goes through it.
pub(crate) fn xcrun(tool: &str) -> ToolCommand {
    ToolCommand::new("xcrun")
        .arg("-sdk")
        .arg("macosx")
        .arg(tool)
}

/// The compiler flags derived from a request: `-std=`, `-I dir`…, `-DNAME[=VALUE]`….
pub(crate) fn compiler_flags(req: &CompileRequest) -> Vec<OsString> {
    let mut flags = Vec::new();
    if let Some(std) = &req.std {
        let std = std.trim();
        let std = std.strip_prefix("-std=").unwrap_or(std);
        if !std.is_empty() {
            flags.push(OsString::from(format!("-std={std}")));
        }
    }
    for dir in &req.include_dirs {
        flags.push(OsString::from("-I"));
        flags.push(dir.as_os_str().to_owned());
    }
    for def in &req.defines {
        let def = def.strip_prefix("-D").unwrap_or(def);
        if !def.is_empty() {
            flags.push(OsString::from(format!("-D{def}")));
        }
    }
    flags
}

/// The command(s) that compile `source` into `metallib`, in order. In two-step mode the
/// intermediate `.air` file is `metallib` with its extension replaced by `air` (so it lands in
/// the same temporary directory).
pub fn metal_commands(
    req: &CompileRequest,
    source: &Path,
    metallib: &Path,
    mode: BuildMode,
) -> Vec<ToolCommand> {
    let flags = compiler_flags(req);
    match mode {
        BuildMode::OneStep => {
            let mut cmd = xcrun("metal");
            cmd.args.extend(flags);
            vec![cmd
                .arg(source.as_os_str())
                .arg("-o")
                .arg(metallib.as_os_str())]
        }
        BuildMode::TwoStep => {
            let air = metallib.with_extension("air");
            air_then_metallib(flags, source, &air, metallib).to_vec()
        }
    }
}

/// `metal -c FLAGS SOURCE -o AIR`, then `metallib AIR -o METALLIB`: the two
/// steps shared by the two-step JIT build and the offline (metal-tt) build.
pub(crate) fn air_then_metallib(
    flags: Vec<OsString>,
    source: &Path,
    air: &Path,
    metallib: &Path,
) -> [ToolCommand; 2] {
    let mut compile = xcrun("metal").arg("-c");
    compile.args.extend(flags);
    let compile = compile
        .arg(source.as_os_str())
        .arg("-o")
        .arg(air.as_os_str());
    let link = xcrun("metallib")
        .arg(air.as_os_str())
        .arg("-o")
        .arg(metallib.as_os_str());
    [compile, link]
}
