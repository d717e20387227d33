//! Command-line definition of `metal-profile` (clap derive).
//!
//! Flags named by the issues and the seed tool are contracts: `--binary`,
//! `--disasm-only`, `--offset`, `--base`, `-f/--function`, `--syntax`,
//! `--list`, `--part`, `--format` (text, json, html, dot, sarif), `-o/--output`, `--show-disasm`, `--color`,
//! `--trip-count`, `--explain-model`, `--source`, `--keep-archive`, and the
//! subcommands `asm`, `export`, `batch` (`--jobs`, `--format text|json|csv|html|sarif`)
//! and `diff` (`--fail-on`, `--format text|markdown|json`).

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// A `--gpu` help text: `what`, the GPUs whose code a timed model profiles
/// and, with `untimed`, those an untimed one does (from the GPU models,
/// `agx_analysis::gpu::GPU_MODELS`, of agx-container's rows), then
/// `default`.
fn gpu_help(what: &str, untimed: bool, default: &str) -> String {
    let gpus = |timed: bool| -> String {
        let names: Vec<String> = agx_container::GPUS
            .iter()
            .filter(|r| agx_analysis::gpu::model_of(r).is_some_and(|m| m.timed() == timed))
            .map(|r| r.name.to_ascii_lowercase())
            .collect();
        names.join(", ")
    };
    let untimed = if untimed {
        format!("; untimed, counts and structure: {}", gpus(false))
    } else {
        String::new()
    };
    format!(
        "{what} (case-insensitive; timed: {}{untimed}); {default}",
        gpus(true)
    )
}

/// Static profiler for Apple GPU (AGX G13/G14: M1 and M2 family) compute shaders.
///
/// Give it a serialized Metal binary archive (or `-` for one on stdin), a raw
/// dump of machine code (`--binary FILE`), or on macOS a `.metal` source, and
/// it reports where the time goes without running the kernel.
#[derive(Parser, Debug, Clone)]
#[command(
    name = "metal-profile",
    version,
    args_conflicts_with_subcommands = true
)]
#[command(after_help = "Examples (files shipped in examples/):\n  \
metal-profile examples/kernels.archive --list\n  \
metal-profile examples/kernels.archive -f matmul_naive\n  \
metal-profile examples/kernels.archive -f mandelbrot --format json\n  \
metal-profile examples/kernels.archive -f matmul_naive --gpu g13g --format html -o report.html\n  \
metal-profile examples/simple_call.archive -f simple_call --part all\n  \
metal-profile examples/texread.archive -f texread --part prolog\n  \
metal-profile --binary examples/matmul_naive.bin --disasm-only --syntax native\n  \
metal-profile examples/matmul.metal -f matmul_naive --target g13g,g14g          (macOS)\n  \
metal-profile asm examples/matmul_naive.s -o matmul_naive.bin\n  \
metal-profile batch examples --format csv\n  \
metal-profile diff examples/kernels.archive examples/kernels.archive --fail-on cycles:5% --format markdown\n\n\
Exit codes: 0 done; 1 bad input; 2 bad usage; 3 diff: a gate tripped; 4 the output is written but the \
code holds encodings the G13 tables do not know (--allow-unknown: 0).")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub profile: ProfileArgs,
}

#[derive(Subcommand, Debug, Clone)]
pub enum Command {
    /// Assemble applegpu-syntax or native-syntax text into machine code.
    Asm(AsmArgs),
    /// Compile a .metal kernel into a binary archive for any Apple GPU (needs Xcode's xcrun).
    Export(ExportArgs),
    /// Profile every kernel of many archives in parallel; one summary.
    Batch(BatchArgs),
    /// Compare two batch results (JSON documents or archives); gate CI.
    Diff(DiffArgs),
}

/// `metal-profile batch` (issue 15; see `batch.rs`).
#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Directories are walked recursively; files are recognised by content \
(non-archives inside a directory are skipped and counted, a named non-archive file is an error). \
A bad file never stops the batch; the exit code is 1 at the end if any input failed. \
Output is byte-identical for any --jobs."
)]
pub struct BatchArgs {
    /// Archives and directories of archives.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Worker threads (default: all cores).
    #[arg(short = 'j', long, value_name = "N", value_parser = parse_jobs, allow_hyphen_values = true)]
    pub jobs: Option<usize>,
    /// Output: summary table, one metal-profiler/1 document, CSV, one HTML page, or a SARIF log.
    #[arg(long, value_enum, default_value_t)]
    pub format: BatchFormat,
    /// Write the output to FILE instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub model: ModelFlags,
    // help: the timed models' GPUs (gpu_help)
    #[arg(long, value_name = "NAME", help = gpu_help(
        "Profile each archive's slice for this GPU",
        false,
        "default: the newest decodable slice of each archive",
    ))]
    pub gpu: Option<String>,
    /// Exit 0 when kernels hold encodings the G13 tables do not know (the
    /// warning stays); without it such a batch exits 4.
    #[arg(long)]
    pub allow_unknown: bool,
}

/// The timing model's assumptions a user can change: one definition shared by
/// a single profile and `batch`.
#[derive(Args, Debug, Clone, Default, PartialEq)]
pub struct ModelFlags {
    // `--trip-count N`: iterations assumed for loops whose trip count the
    // code does not give (the report says whether a count was given, never
    // guessing it from the value); `--trip-count ADDR=N` (repeatable): the
    // loop whose header is at ADDR runs N times (issue 35). The help reads
    // as the default's did. A negative value reaches `parse_trip_count`,
    // which names it (issue 21).
    #[arg(
        long = "trip-count",
        value_name = "N",
        value_parser = parse_trip_count,
        allow_hyphen_values = true,
        help = "Iterations assumed for loops whose trip count is unknown [default: 16]; ADDR=N: the loop headed at ADDR (repeatable)",
        long_help = "Iterations assumed for loops whose trip count is unknown\n\nADDR=N (repeatable): the loop whose header is at ADDR (e.g. 0x30=1024) runs N times\n\n[default: 16]"
    )]
    pub trip_counts: Vec<TripCount>,
    /// Device-load latency on an L1 hit, in cycles (timing-model assumption).
    #[arg(long, value_name = "CYCLES", allow_hyphen_values = true)]
    pub l1_hit_latency: Option<f64>,
    /// Device-load latency on an L1 miss, in cycles (timing-model assumption).
    #[arg(long, value_name = "CYCLES", allow_hyphen_values = true)]
    pub l1_miss_latency: Option<f64>,
    /// Override, 0..1: the share of the cache model's DRAM first touches
    /// that still hit a cache (default: the cache model alone; the
    /// load-latency mix then assumes 0.5).
    #[arg(long, value_name = "FRACTION", allow_hyphen_values = true)]
    pub l1_hit_rate: Option<f64>,
    /// Chip whose DRAM bandwidth bounds device memory: M1 (default), M1 Pro,
    /// M1 Max or M1 Ultra.
    #[arg(long, value_name = "CHIP")]
    pub chip: Option<String>,
    /// Threadgroup shape the access patterns lay lanes over, WxHxD (x
    /// fastest, 32 consecutive threads per SIMD-group). Default: the shape
    /// recorded with the input (a Mesa corpus `layout.json` next to a
    /// `--binary` file), else 32x1x1.
    #[arg(long, value_name = "WxHxD", value_parser = parse_threadgroup)]
    pub threadgroup: Option<agx_analysis::address::Shape>,
}

/// Parses `--threadgroup WxHxD` (also `WxH`, `W`).
pub fn parse_threadgroup(s: &str) -> Result<agx_analysis::address::Shape, String> {
    agx_analysis::address::Shape::parse(s, "flag")
}

// the help text states the default
const _: () = assert!(agx_analysis::timing::DEFAULT_TRIP_COUNT == 16);

/// One `--trip-count`: for every unknown loop, or for the loop at a header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TripCount {
    All(u32),
    Loop { header: u32, count: u32 },
}

impl ModelFlags {
    /// `--trip-count N` (the last one given), `None` when not given.
    pub fn given_trip_count(&self) -> Option<u32> {
        self.trip_counts.iter().rev().find_map(|t| match t {
            TripCount::All(n) => Some(*n),
            TripCount::Loop { .. } => None,
        })
    }

    /// The trip count in effect: the one given, else the model's default.
    pub fn trip_count(&self) -> u32 {
        self.given_trip_count()
            .unwrap_or(agx_analysis::timing::DEFAULT_TRIP_COUNT)
    }

    /// The per-loop counts (`--trip-count ADDR=N`), by header address (the
    /// last one given for an address).
    pub fn loop_trip_counts(&self) -> std::collections::BTreeMap<u32, u32> {
        self.trip_counts
            .iter()
            .filter_map(|t| match t {
                TripCount::Loop { header, count } => Some((*header, *count)),
                TripCount::All(_) => None,
            })
            .collect()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum BatchFormat {
    /// A table sorted by estimated cycles.
    #[default]
    Text,
    /// One metal-profiler/1 document (kernels[] carry `source`; `errors`).
    Json,
    /// The table as CSV.
    Csv,
    /// One self-contained HTML page with every kernel and an index.
    Html,
    /// Every kernel's suggestions as one SARIF 2.1.0 log (docs/ci.md).
    Sarif,
}

/// `metal-profile diff` (issue 15; see `diff.rs`).
#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Gates (--fail-on, may repeat): METRIC[:LIMIT] where METRIC is one of \
cycles, occupancy, registers, spills, fills, instructions, high-findings, removed. \
LIMIT is N% (relative to the old value) or N (absolute, in the metric's unit: cycles, \
percentage points, GPRs, count); without a limit any worsening trips. Worsening is an increase, \
except occupancy (a drop). `high-findings` counts a kernel's 🔴 suggestions. \
`removed` trips when a kernel of OLD is missing in NEW. \
Examples: --fail-on cycles:5% --fail-on occupancy --fail-on spills. \
Exit codes: 0 no gate tripped, 3 a gate tripped, 4 no gate tripped but kernels hold encodings \
the G13 tables do not know (--allow-unknown: 0), 1 bad input, 2 bad usage."
)]
pub struct DiffArgs {
    /// Baseline: a JSON document (`batch --format json` or a single profile), an archive or a directory.
    pub old: PathBuf,
    /// Candidate, same kinds as OLD.
    pub new: PathBuf,
    /// Regression gate METRIC[:LIMIT] (may repeat), e.g. cycles:5%.
    #[arg(long = "fail-on", value_name = "SPEC")]
    pub fail_on: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: DiffFormat,
    /// Write the output to FILE instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Worker threads when OLD/NEW are archives (default: all cores).
    #[arg(short = 'j', long, value_name = "N", value_parser = parse_jobs, allow_hyphen_values = true)]
    pub jobs: Option<usize>,
    /// Also list kernels whose numbers did not change.
    #[arg(long)]
    pub all: bool,
    /// Exit 0 (when no gate trips) although kernels profiled from archives
    /// hold encodings the G13 tables do not know; without it: exit 4.
    #[arg(long)]
    pub allow_unknown: bool,
    /// Profile each archive's slice for this GPU (as `batch --gpu`; e.g.
    /// g15g for M3 code, compared on the figures it has: no cycles).
    #[arg(long, value_name = "NAME")]
    pub gpu: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum DiffFormat {
    /// A table for the terminal.
    #[default]
    Text,
    /// GitHub-flavoured markdown for a pull request.
    Markdown,
    /// A JSON document.
    Json,
}

#[derive(Args, Debug, Clone)]
pub struct AsmArgs {
    /// Assembly source file (`-` for stdin).
    pub file: PathBuf,
    /// Output file for the machine code (`-` for stdout).
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    /// Only check the source; write nothing.
    #[arg(long)]
    pub check: bool,
    /// Syntax of the source. Every syntax's text is accepted; with `native`
    /// a first-match name (`stack_store`) means that form, while in applegpu
    /// syntax (default, cryptic) lines a shadowed form would print the same
    /// way get a warning naming what was chosen.
    #[arg(long, value_enum, default_value_t)]
    pub syntax: SyntaxArg,
}

#[derive(Args, Debug, Clone)]
pub struct ExportArgs {
    /// The .metal source file.
    pub source: PathBuf,
    /// Kernel function(s) to build (may repeat).
    #[arg(short = 'f', long = "function")]
    pub functions: Vec<String>,
    /// Every kernel function in the source.
    #[arg(long)]
    pub all: bool,
    /// Where to write the serialized archive.
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    #[command(flatten)]
    pub compile: CompileFlags,
}

/// How a .metal source is compiled, and flags passed through to `xcrun metal`.
#[derive(Args, Debug, Clone, Default)]
pub struct CompileFlags {
    /// GPU architecture(s) to build offline with metal-tt, e.g. g13g,g14g
    /// (comma-separated or repeated; default: this Mac's GPU if decodable, else g14g).
    #[arg(long = "target", value_name = "GPU[,GPU…]", value_delimiter = ',')]
    pub target: Vec<String>,
    /// Let the Metal driver compile for this Mac's own GPU (MTLBinaryArchive)
    /// instead of the offline metal-tt build (macOS only).
    #[arg(long, conflicts_with = "target")]
    pub jit: bool,
    /// Build the AIR for this macOS version (`-target air64-apple-macosVER`),
    /// the fix for metal-tt's "AIR version … is bigger than … target".
    #[arg(long = "min-macos", value_name = "VER")]
    pub min_macos: Option<String>,
    /// Include directory for the Metal compiler (may repeat).
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// Preprocessor definition NAME or NAME=VALUE (may repeat).
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    pub define: Vec<String>,
    /// Metal language standard, e.g. metal3.0.
    #[arg(long = "std", value_name = "STD")]
    pub std: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum SyntaxArg {
    /// `r0.cache` (applegpu's default).
    #[default]
    Default,
    /// `$r0` (applegpu with APPLEGPU_CRYPTIC).
    Cryptic,
    /// applegpu's text, except encodings applegpu prints as another form
    /// (stack adjusts, stack_get_ptr, ...) get their own names; assembles
    /// back to the same instructions (`metal-profile asm` reads it).
    Native,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum PartArg {
    /// The kernel body (the prolog is summarised).
    #[default]
    Main,
    /// The constant program that runs once per dispatch.
    Prolog,
    /// Prolog, main and helpers.
    All,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum FormatArg {
    /// The terminal report.
    #[default]
    Text,
    /// A versioned JSON document (schema metal-profiler/1).
    Json,
    /// One self-contained HTML page: report, control-flow graph, annotated
    /// disassembly.
    Html,
    /// The control-flow graph as a Graphviz digraph.
    Dot,
    /// The suggestions as a SARIF 2.1.0 log for code scanning (docs/ci.md).
    Sarif,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum ColorArg {
    /// Colour when writing to a terminal and NO_COLOR is unset.
    #[default]
    Auto,
    Always,
    Never,
}

#[derive(Args, Debug, Clone)]
pub struct ProfileArgs {
    /// Input: a Metal binary archive (fat or thin Mach-O with GPU code), `-`
    /// for an archive on stdin, or (macOS) a .metal source. Raw machine code
    /// goes through --binary.
    pub input: Option<PathBuf>,
    /// Raw machine code to profile or disassemble, `-` for stdin (no archive
    /// around it: the code starts at --offset).
    #[arg(long, value_name = "FILE", conflicts_with = "input")]
    pub binary: Option<PathBuf>,
    /// Metal source text to compile (macOS).
    #[arg(long, value_name = "TEXT", conflicts_with_all = ["input", "binary"])]
    pub source: Option<String>,
    /// Function to profile: Metal name (e.g. matmul_naive) or full symbol.
    /// For raw code it names the kernel in reports.
    #[arg(short = 'f', long = "function", value_name = "NAME")]
    pub function: Option<String>,
    /// Print only the disassembly, exactly as applegpu's disassemble.py.
    #[arg(long)]
    pub disasm_only: bool,
    /// Exit 0 when the code holds encodings the G13 tables do not know (the
    /// warning stays); without it the output is written and the exit code
    /// is 4.
    #[arg(long)]
    pub allow_unknown: bool,
    /// Append the plain disassembly (applegpu's text) after the report.
    #[arg(long)]
    pub show_disasm: bool,
    /// Also list the findings that concern less than 1% of the estimate
    /// (hidden by default).
    #[arg(long)]
    pub all_findings: bool,
    /// Byte offset into a raw file where code starts (decimal or 0x hex).
    #[arg(long, value_name = "N", value_parser = parse_u64, allow_hyphen_values = true)]
    pub offset: Option<u64>,
    /// Address of the first byte, added to printed addresses and targets.
    #[arg(long, value_name = "ADDR", value_parser = parse_u64, allow_hyphen_values = true)]
    pub base: Option<u64>,
    /// Text syntax: applegpu's (default), cryptic, or native (unambiguous).
    #[arg(long, value_enum, default_value_t)]
    pub syntax: SyntaxArg,
    /// List the slices (GPU, decodable, chosen) and the shaders of the chosen one.
    #[arg(long)]
    pub list: bool,
    // help: every model's GPUs (gpu_help)
    #[arg(long, value_name = "NAME", help = gpu_help(
        "GPU slice to profile",
        true,
        "default: the newest decodable. With --binary: the GPU the raw code is for",
    ))]
    pub gpu: Option<String>,
    /// Which part of the function to show.
    #[arg(long, value_enum, default_value_t)]
    pub part: PartArg,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: FormatArg,
    /// Write the output to FILE instead of stdout (any format).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Colour in the text report.
    #[arg(long, value_enum, default_value_t)]
    pub color: ColorArg,
    #[command(flatten)]
    pub model: ModelFlags,
    /// Print the timing model: every cost-table entry, source and assumption.
    #[arg(long)]
    pub explain_model: bool,
    /// Cores one profile may use (default: all, at most 8); the output is
    /// the same for any N. `--jobs 1` keeps a shared CI runner's other
    /// cores free.
    #[arg(short = 'j', long, value_name = "N", value_parser = parse_jobs, allow_hyphen_values = true)]
    pub jobs: Option<usize>,
    /// Save the serialized archive built from a .metal source (macOS).
    #[arg(long, value_name = "PATH")]
    pub keep_archive: Option<PathBuf>,
    /// Build every kernel function of a .metal source (macOS).
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub compile: CompileFlags,
}

/// `s` trimmed, refused when it is negative: "-4 is negative; give `give`".
fn not_negative<'a>(s: &'a str, give: &str) -> Result<&'a str, String> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err(format!("{t} is negative; give {give}"));
    }
    Ok(t)
}

/// Parses `123` or `0x7b`.
pub fn parse_u64(s: &str) -> Result<u64, String> {
    let t = not_negative(s, "0 or more (decimal or 0x-prefixed hex)")?;
    let r = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16)
    } else {
        t.parse::<u64>()
    };
    r.map_err(|_| format!("'{s}' is not a number (use decimal or 0x-prefixed hex)"))
}

/// Parses a count of loop iterations (`--trip-count`): 1 or more.
/// Parses `--trip-count`: `N`, or `ADDR=N` (ADDR hexadecimal `0x..` or
/// decimal).
pub fn parse_trip_count(s: &str) -> Result<TripCount, String> {
    let Some((addr, n)) = s.split_once('=') else {
        return parse_count(s).map(TripCount::All);
    };
    let a = addr.trim();
    let header = match a.strip_prefix("0x").or_else(|| a.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16).ok(),
        None => a.parse::<u32>().ok(),
    }
    .ok_or_else(|| format!("'{addr}' is not a loop header address (e.g. 0x30=1024)"))?;
    Ok(TripCount::Loop {
        header,
        count: parse_count(n)?,
    })
}

pub fn parse_count(s: &str) -> Result<u32, String> {
    not_negative(s, "the iterations assumed per loop, 1 or more")?
        .parse::<u32>()
        .map_err(|_| format!("'{s}' is not a whole number of iterations (1 to 4294967295)"))
}

/// Parses `--jobs`: a whole number of threads (0 is refused by the run).
pub fn parse_jobs(s: &str) -> Result<usize, String> {
    not_negative(s, "a number of threads, 1 or more")?
        .parse::<usize>()
        .map_err(|_| format!("'{s}' is not a whole number of threads"))
}

/// clap's error (usage) for command line `argv` as the one line every
/// error of `metal-profile` is, without the `metal-profile: error: `
/// prefix: clap's message, its tips and context lines folded in, then where
/// help is (`--help` of the subcommand `argv` names).
pub fn usage_error_line(e: &clap::Error, argv: &[String]) -> String {
    use clap::error::{ContextKind, ContextValue};
    use clap::CommandFactory;
    // a second input is parsed as a subcommand name: clap says "the
    // subcommand 'b.archive' cannot be used with '[INPUT]'"
    if let (Some(ContextValue::String(second)), Some(ContextValue::String(prior))) = (
        e.get(ContextKind::InvalidSubcommand),
        e.get(ContextKind::PriorArg),
    ) {
        if prior == "[INPUT]" {
            return format!(
                "more than one input ({second} after the first): a profile takes one input; \
                 to profile many archives use `metal-profile batch PATH...`"
            );
        }
    }
    let text = e.render().to_string();
    let mut main = String::new();
    let mut tips: Vec<String> = Vec::new();
    let cmd = Cli::command();
    let sub = argv
        .iter()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .filter(|a| cmd.get_subcommands().any(|c| c.get_name() == a.as_str()));
    let mut command = match sub {
        Some(s) => format!("metal-profile {s}"),
        None => "metal-profile".to_string(),
    };
    for line in text.lines() {
        let l = line.trim();
        if l.is_empty() || l.starts_with("For more information") {
            continue;
        }
        if let Some(u) = l.strip_prefix("Usage:") {
            // `Usage: metal-profile batch [OPTIONS] <PATH>...`
            let words: Vec<&str> = u
                .split_whitespace()
                .take_while(|w| !w.starts_with(['[', '<', '-']))
                .collect();
            if !words.is_empty() {
                command = words.join(" ");
            }
            continue;
        }
        if let Some(t) = l.strip_prefix("tip:") {
            tips.push(t.trim().to_string());
        } else if let Some(m) = l.strip_prefix("error:") {
            main.push_str(m.trim());
        } else {
            if !main.is_empty() {
                main.push(' ');
            }
            main.push_str(l);
        }
    }
    let mut out = main.trim_end_matches(':').to_string();
    for t in tips {
        out.push_str(" (");
        out.push_str(&t);
        out.push(')');
    }
    out.push_str(&format!("; see `{command} --help`"));
    out
}

impl Default for ProfileArgs {
    /// The values clap gives when no flag is passed (not Rust's zeroes).
    fn default() -> Self {
        Cli::try_parse_from(["metal-profile"])
            .map(|c| c.profile)
            .unwrap_or_else(|_| ProfileArgs {
                input: None,
                binary: None,
                source: None,
                function: None,
                disasm_only: false,
                allow_unknown: false,
                show_disasm: false,
                all_findings: false,
                offset: None,
                base: None,
                syntax: SyntaxArg::Default,
                list: false,
                gpu: None,
                part: PartArg::Main,
                format: FormatArg::Text,
                output: None,
                color: ColorArg::Auto,
                model: ModelFlags::default(),
                explain_model: false,
                jobs: None,
                keep_archive: None,
                all: false,
                compile: CompileFlags::default(),
            })
    }
}
