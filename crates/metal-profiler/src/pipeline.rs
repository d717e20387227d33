//! Loading inputs and selecting code: the shared front half of every mode.

use agx_container::{Archive, ContainerError, Function, Input};
use agx_isa::stream::{walk, Item};
use agx_isa::{Instruction, Syntax};
use std::fmt;
use std::io::Read;
use std::path::Path;

/// A user-facing error: one line naming the problem and what to do, and the
/// process exit code (2 = bad usage, 1 = bad input / failed operation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub message: String,
    pub code: i32,
}

impl Error {
    pub fn input(msg: impl Into<String>) -> Error {
        Error {
            message: msg.into(),
            code: 1,
        }
    }
    pub fn usage(msg: impl Into<String>) -> Error {
        Error {
            message: msg.into(),
            code: 2,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<ContainerError> for Error {
    fn from(e: ContainerError) -> Error {
        Error::input(e.to_string())
    }
}

/// Reads a file, or stdin for `-`.
pub fn read_path(path: &Path) -> Result<Vec<u8>, Error> {
    if path.as_os_str() == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .read_to_end(&mut buf)
            .map_err(|e| Error::input(format!("cannot read standard input: {e}")))?;
        return Ok(buf);
    }
    std::fs::read(path).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_string(),
            std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
            _ => e.to_string(),
        };
        Error::input(format!(
            "cannot read {}: {why}; check the path",
            path.display()
        ))
    })
}

/// How the CLI tells a user where raw machine code goes.
pub const RAW_HINT_CLI: &str = "for raw machine code use --binary FILE";

/// The positional input (or Python's archive functions) as a Metal binary
/// archive: a fat or thin Mach-O holding GPU code. Anything else is refused
/// with one line naming `name`, what the bytes are (empty, too short, a PNG,
/// text, unknown magic 0x…, AIR only, …) and `raw_hint` (where raw code goes:
/// [`RAW_HINT_CLI`] for the CLI).
pub fn load_archive(bytes: &[u8], name: &str, raw_hint: &str) -> Result<Archive, Error> {
    match agx_container::read(bytes) {
        Ok(Input::Archive(a)) => Ok(a),
        Ok(Input::Raw(_)) => Err(Error::input(format!(
            "{name} is not a Metal binary archive: {}; {raw_hint}",
            agx_container::describe_non_archive(bytes)
        ))),
        Err(ContainerError::AirOnly) => Err(Error::input(format!(
            "{name} is not a Metal binary archive with GPU code: it holds AIR bitcode only, no GPU machine code; \
             build it for a device (an MTLBinaryArchive serialized on an M1 Mac); {raw_hint}"
        ))),
        Err(e) => Err(Error::input(format!("{name}: {e}"))),
    }
}

/// How `path` is named in messages (`<stdin>` for `-`).
pub fn display_name(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "<stdin>".into()
    } else {
        path.display().to_string()
    }
}

/// A piece of code to disassemble or profile.
#[derive(Debug, Clone)]
pub struct CodeRef<'a> {
    /// Display name of the kernel.
    pub name: String,
    /// The buffer (whole `__text` for archives, so call targets resolve).
    pub buffer: &'a [u8],
    /// Where the function starts in `buffer`.
    pub start: usize,
    /// Where it ends (exclusive) in `buffer`.
    pub end: usize,
    /// Address of `buffer[start]` as printed.
    pub addr: u32,
    /// GPU name when known (e.g. "G13G").
    pub gpu: Option<String>,
}

impl CodeRef<'_> {
    pub fn bytes(&self) -> &[u8] {
        &self.buffer[self.start..self.end]
    }
}

/// Raw code from byte `offset`, printed from address `base` (defaults: 0).
pub fn raw_code<'a>(
    bytes: &'a [u8],
    offset: u64,
    base: u64,
    name: Option<&str>,
) -> Result<CodeRef<'a>, Error> {
    if offset > bytes.len() as u64 {
        return Err(Error::input(format!(
            "--offset {offset:#x} is past the end of the input ({} bytes); pick an offset inside the file",
            bytes.len()
        )));
    }
    if !offset.is_multiple_of(2) {
        return Err(Error::usage(format!(
            "--offset {offset:#x} is odd; G13 instructions are 2-byte aligned, pick an even offset"
        )));
    }
    let addr = u32::try_from(base)
        .map_err(|_| Error::usage(format!("--base {base:#x} does not fit in 32 bits")))?;
    Ok(CodeRef {
        name: name.unwrap_or("kernel").to_string(),
        buffer: bytes,
        start: offset as usize,
        end: bytes.len(),
        addr,
        gpu: None,
    })
}

/// The code of an archive function, placed at its `__text` offset.
pub fn function_code<'a>(archive: &'a Archive, f: &Function) -> CodeRef<'a> {
    let text = archive.code(f);
    let start = (f.text_offset as usize).min(text.len());
    // the symbol's extent without trailing trap padding
    let end = (f.text_offset.saturating_add(f.code_size) as usize)
        .min(text.len())
        .max(start);
    CodeRef {
        name: f.name.clone(),
        buffer: text,
        start,
        end,
        addr: f.text_offset as u32,
        gpu: f.gpu.map(|g| g.name.to_string()),
    }
}

/// Walks the code as applegpu does (stops after the first `stop`).
pub fn walk_code<'a>(code: &'a CodeRef<'a>) -> impl Iterator<Item = Item> + 'a {
    walk(code.bytes(), code.addr)
}

/// The decoded instructions (failed halfwords and gaps dropped), with a count
/// of `<disassembly failed>` items.
pub fn decode_code(code: &CodeRef<'_>) -> (Vec<Instruction>, usize) {
    agx_isa::stream::decode_all(code.bytes(), code.addr)
}

/// applegpu-identical listing of `code`.
pub fn listing(code: &CodeRef<'_>, syntax: Syntax) -> String {
    agx_isa::disassemble_listing(code.bytes(), code.addr, syntax)
}

/// A warning when raw input does not look like G13 code: many undecodable
/// halfwords, or no instruction at all.
pub fn raw_code_warning(insns: usize, failed: usize) -> Option<String> {
    let total = insns + failed;
    if total == 0 {
        return Some(
            "warning: no instructions decoded; the input may be empty or not G13 machine code"
                .into(),
        );
    }
    if failed * 10 >= total.max(1) && failed >= 2 {
        return Some(format!(
            "warning: {failed} of {total} positions did not decode (<disassembly failed>); \
             this may be code for another GPU generation (decoding supports G13/M1 only), data, \
             or the wrong --offset"
        ));
    }
    None
}

/// One line per function for `--list`: stage, symbol, size, offset, GPU.
pub fn list_functions(archive: &Archive) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "{:<9} {:<7} {:<40} {:>8} {:>10}  {}\n",
        "stage", "part", "symbol", "bytes", "offset", "gpu"
    ));
    for f in &archive.functions {
        let gpu = f
            .gpu
            .map(|g| format!("{} ({})", g.name, g.family))
            .unwrap_or_else(|| "?".into());
        out.push_str(&format!(
            "{:<9} {:<7} {:<40} {:>8} {:>#10x}  {}\n",
            f.stage.as_str(),
            f.part.as_str(),
            f.symbol,
            f.code_size,
            f.text_offset,
            gpu
        ));
    }
    for w in &archive.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}

/// The `--list --format json` document: `{"schema", "tool", "functions":
/// [...], "warnings": [...]}` (docs/schema.json). Per-slice facts can be
/// added beside `functions` without changing it.
pub fn list_document(archive: &Archive) -> String {
    let functions: Vec<serde_json::Value> = archive
        .functions
        .iter()
        .map(|f| {
            serde_json::json!({
                "stage": f.stage.as_str(),
                "part": f.part.as_str(),
                "symbol": f.symbol,
                "name": f.name,
                "size": f.size,
                "code_size": f.code_size,
                "text_offset": f.text_offset,
                "file_offset": f.file_offset,
                "gpu": f.gpu.map(|g| g.name),
                "gpu_family": f.gpu.map(|g| g.family),
            })
        })
        .collect();
    let doc = serde_json::json!({
        "schema": agx_report::json::SCHEMA,
        "tool": { "name": "metal-profiler", "version": env!("CARGO_PKG_VERSION") },
        "functions": functions,
        "warnings": archive.warnings,
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}
