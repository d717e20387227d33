//! Loading inputs and selecting code: the shared front half of every mode;
//! [`kernel`]: the one wiring from an input to its analysed profile.

pub mod kernel;
pub mod untimed;
pub use kernel::{
    check_model_flags, decode_function, decode_raw, profile_instructions, program_checks,
    raw_input, report_options, report_options_for, select_functions, unknown_warning, Decoded,
    Kernel,
};

use agx_container::{Archive, ContainerError, Function, Gpu, Input, ReadOptions, SliceKind};
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
    /// The run wrote its output, but the code holds encodings the G13
    /// tables do not know ([`EXIT_UNKNOWN`]); the warning naming them is
    /// already on stderr, so the message is empty (nothing more is printed).
    pub fn unknown_encodings() -> Error {
        Error {
            message: String::new(),
            code: EXIT_UNKNOWN,
        }
    }
}

/// Exit code of a run whose output was written although the code holds
/// encodings the G13 tables do not know (left out of the analysis);
/// `--allow-unknown` makes it 0. Distinct from 1 (bad input), 2 (bad usage)
/// and 3 (`diff`: a gate tripped), so scripts can tell "profiled, but not
/// all of it" from a failure.
pub const EXIT_UNKNOWN: i32 = 4;

/// The share of undecodable positions at which code is refused as not
/// machine code (defined beside the decoder: the raw-code front end and the
/// called functions of raw code, `agx_analysis::raw_image`, apply one rule).
pub use agx_isa::stream::NOT_CODE_PERCENT;

/// Where decoded code came from, for the checks' messages
/// ([`check_decoded`]).
#[derive(Clone, Copy, Debug)]
pub enum Origin<'a> {
    /// Raw machine code (`--binary FILE`), `name` as printed; `archive`:
    /// the bytes are a Metal binary archive.
    Raw { name: &'a str, archive: bool },
    /// A function of an archive: its symbol.
    Function { symbol: &'a str },
}

impl Origin<'_> {
    fn name(&self) -> String {
        match self {
            Origin::Raw { name, .. } => name.to_string(),
            Origin::Function { symbol } => format!("`{symbol}`"),
        }
    }
}

/// The checks of decoded code every front end makes (CLI, batch, diff,
/// Python), in this order: code with no instruction at all, code of which
/// [`NOT_CODE_PERCENT`] or more of the positions do not decode, and code
/// that ends inside an instruction ([`agx_isa::stream::Cut`]) are refused,
/// each with one line naming the problem and what to do.
pub fn check_decoded(
    origin: Origin<'_>,
    insns: usize,
    failed: usize,
    cut: Option<agx_isa::stream::Cut>,
) -> Result<(), Error> {
    let name = origin.name();
    let total = insns + failed;
    let cut_error = |c: agx_isa::stream::Cut| {
        Error::input(match origin {
            Origin::Raw { .. } => format!(
                "{name}: {c}; the input is cut short or --offset is wrong: give the whole code"
            ),
            Origin::Function { .. } => {
                format!("{name}: {c}; the archive is cut short or damaged: rebuild it")
            }
        })
    };
    if total == 0 {
        if let Some(c) = cut {
            return Err(cut_error(c));
        }
        return Err(Error::input(match origin {
            Origin::Raw { .. } => format!(
                "{name} holds no G13 instructions (only zero bytes); check the file and --offset"
            ),
            Origin::Function { .. } => {
                format!("{name} holds no G13 instructions (only zero bytes); check the archive with --list")
            }
        }));
    }
    if let Some(pct) = agx_isa::stream::not_code_percent(insns, failed) {
        let hint = match origin {
            Origin::Raw { archive: true, .. } => "it is a Metal binary archive: drop --binary",
            Origin::Raw { .. } => "is it an archive? drop --binary",
            Origin::Function { .. } => {
                "is the slice for a GPU we do not decode? see --list and --gpu"
            }
        };
        return Err(Error::input(format!(
            "{name} does not look like G13 machine code: {pct}% of it does not decode ({hint})"
        )));
    }
    match cut {
        Some(c) => Err(cut_error(c)),
        None => Ok(()),
    }
}

/// [`decode_code`] and [`check_decoded`]: the instructions and the number
/// of unknown encodings of code that passes the checks.
pub fn decode_code_checked(
    code: &CodeRef<'_>,
    origin: Origin<'_>,
) -> Result<(Vec<Instruction>, usize), Error> {
    let d = agx_isa::stream::decode_checked(code.bytes(), code.addr);
    check_decoded(origin, d.insns.len(), d.failed, d.cut)?;
    Ok((d.insns, d.failed))
}

/// One decode of a kernel's code: what [`decode_code_checked`] gives and,
/// from the same walk, each unknown encoding (what [`unknown_lines`] walks
/// the code again for).
pub struct MainDecode {
    pub insns: Vec<Instruction>,
    /// `<disassembly failed>` positions.
    pub failed: usize,
    /// Where the code ended inside an instruction (refused by the checks:
    /// `None` in a decode that passed them).
    pub cut: Option<agx_isa::stream::Cut>,
    /// The undecodable steps, in address order (formatted by
    /// [`MainDecode::unknown_lines`] when the report needs them).
    failed_steps: Vec<agx_isa::stream::Step>,
}

impl MainDecode {
    /// Addresses of the undecodable positions, increasing.
    pub fn failed_addrs(&self) -> impl Iterator<Item = u32> + '_ {
        self.failed_steps.iter().filter_map(|s| match *s {
            agx_isa::stream::Step::Failed { addr, .. } => Some(addr),
            _ => None,
        })
    }

    /// [`unknown_lines`] of the decoded code: each unknown encoding's
    /// address and native text.
    pub fn unknown_lines(&self) -> Vec<(u32, String)> {
        self.failed_steps.iter().filter_map(unknown_line).collect()
    }
}

/// An undecodable step's address and native text (`None` for the others):
/// one line of [`unknown_lines`].
fn unknown_line(step: &agx_isa::stream::Step) -> Option<(u32, String)> {
    match *step {
        agx_isa::stream::Step::Failed {
            addr,
            bytes,
            shown,
            unknown,
        } => Some((
            addr,
            agx_isa::stream::unknown_text(&bytes[..shown as usize], unknown),
        )),
        _ => None,
    }
}

/// Steps per batch of the parallel decode ([`decode_main_checked`]): ~100 KB
/// of scanned steps, under glibc's mmap threshold (a batch's buffer is heap
/// memory, reused).
const DECODE_BATCH: usize = 2048;

/// [`decode_code_checked`] in one walk that also keeps the unknown
/// encodings ([`MainDecode::unknown_lines`]). On several cores (big code,
/// [`listing_threads`], not in a serial batch worker) this thread scans the
/// code ([`agx_isa::stream::Walk::skim`]: the same steps at a fraction of
/// the decoding cost) and hands batches of instructions to workers that
/// decode them straight into their places in the one vector (this thread
/// decodes batches too when the workers are behind). The instructions are
/// those of the serial decode, in the same order: each is decoded from its
/// own scanned step (`Skim::decode`) into a fresh `Instruction::default()`,
/// as the serial decode does.
pub fn decode_main_checked(code: &CodeRef<'_>, origin: Origin<'_>) -> Result<MainDecode, Error> {
    let threads = listing_threads(code.bytes().len() as u64).min(agx_analysis::par::threads());
    let (d, failed_steps) = decode_parallel(code.bytes(), code.addr, threads);
    check_decoded(origin, d.insns.len(), d.failed, d.cut)?;
    Ok(MainDecode {
        insns: d.insns,
        failed: d.failed,
        cut: d.cut,
        failed_steps,
    })
}

/// The decode of [`agx_isa::stream::decode_checked`] on `threads` threads,
/// with the undecodable steps.
fn decode_parallel(
    bytes: &[u8],
    base: u32,
    threads: usize,
) -> (agx_isa::stream::Decoded, Vec<agx_isa::stream::Step>) {
    use agx_isa::stream::{Skim, Step};
    use std::mem::MaybeUninit;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{mpsc, Mutex};
    let mut w = agx_isa::stream::walk_native(bytes, base);
    let mut failed_steps: Vec<Step> = Vec::new();
    if threads < 2 {
        let mut out: Vec<Instruction> = Vec::with_capacity(bytes.len() / 6 + 16);
        let mut failed = 0;
        let mut insn = Instruction::default();
        while let Some(step) = w.next_into(&mut insn) {
            match step {
                Step::Insn { .. } => out.push(std::mem::take(&mut insn)),
                Step::Failed { .. } => {
                    failed += 1;
                    failed_steps.push(step);
                }
                Step::Gap { .. } => {}
            }
        }
        out.shrink_to_fit();
        let d = agx_isa::stream::Decoded {
            insns: out,
            failed,
            cut: w.cut(),
        };
        return (d, failed_steps);
    }
    /// Decodes a batch of scanned instructions into its places.
    fn decode_into(steps: &[Skim], slots: &mut [MaybeUninit<Instruction>]) {
        for (s, slot) in steps.iter().zip(slots) {
            s.decode(slot.write(Instruction::default()));
        }
    }
    // the capacity guess of the serial decode; instructions past it (code
    // of mostly 2-byte instructions) are decoded here and appended
    let mut out: Vec<Instruction> = Vec::with_capacity(bytes.len() / 6 + 16);
    let mut overflow: Vec<Instruction> = Vec::new();
    let mut failed = 0;
    let mut placed = 0;
    {
        type Job<'s> = (Vec<Skim>, &'s mut [MaybeUninit<Instruction>]);
        let mut spare: &mut [MaybeUninit<Instruction>] = out.spare_capacity_mut();
        let (work_tx, work_rx) = mpsc::channel::<Job<'_>>();
        let (free_tx, free_rx) = mpsc::channel::<Vec<Skim>>();
        let work_rx = Mutex::new(work_rx);
        // batches sent and not yet taken by a decoder
        let queued = AtomicUsize::new(0);
        let run = |job: Job<'_>| {
            decode_into(&job.0, job.1);
            let _ = free_tx.send(job.0);
        };
        std::thread::scope(|sc| {
            for _ in 1..threads {
                let (work_rx, queued, run) = (&work_rx, &queued, &run);
                sc.spawn(move || loop {
                    let job = match work_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok(job) = job else { return };
                    queued.fetch_sub(1, Ordering::Relaxed);
                    run(job);
                });
            }
            let mut insn = Instruction::default();
            let mut ended = false;
            while !ended {
                let mut batch = free_rx
                    .try_recv()
                    .unwrap_or_else(|_| Vec::with_capacity(DECODE_BATCH));
                batch.clear();
                while batch.len() < DECODE_BATCH {
                    match w.skim() {
                        Some(s @ Skim::Insn { .. }) => batch.push(s),
                        Some(Skim::Other(step @ Step::Failed { .. })) => {
                            failed += 1;
                            failed_steps.push(step);
                        }
                        Some(Skim::Other(_)) => {}
                        None => {
                            ended = true;
                            break;
                        }
                    }
                }
                if !overflow.is_empty() || batch.len() > spare.len() {
                    for s in &batch {
                        s.decode(&mut insn);
                        overflow.push(std::mem::take(&mut insn));
                    }
                    continue;
                }
                let (slots, rest) = std::mem::take(&mut spare).split_at_mut(batch.len());
                spare = rest;
                placed += batch.len();
                queued.fetch_add(1, Ordering::Relaxed);
                if let Err(mpsc::SendError(job)) = work_tx.send((batch, slots)) {
                    // (no receiver: cannot happen while `work_rx` lives
                    // here; decoded in place so every placed slot is
                    // initialised all the same)
                    queued.fetch_sub(1, Ordering::Relaxed);
                    run(job);
                }
                // the workers are behind: decode one queued batch here
                if queued.load(Ordering::Relaxed) > 1 {
                    if let Ok(rx) = work_rx.try_lock() {
                        if let Ok(job) = rx.try_recv() {
                            drop(rx);
                            queued.fetch_sub(1, Ordering::Relaxed);
                            run(job);
                        }
                    }
                }
            }
            drop(work_tx);
            // help with what is left, then the scope waits for the workers
            loop {
                let job = match work_rx.try_lock() {
                    Ok(rx) => rx.try_recv(),
                    Err(_) => break,
                };
                let Ok(job) = job else { break };
                queued.fetch_sub(1, Ordering::Relaxed);
                run(job);
            }
        });
    }
    // SAFETY: the first `placed` places of the spare capacity were handed
    // out, in order and each once, as the slices of the batches sent, and
    // every batch sent was decoded (by a worker or this thread) before the
    // scope ended: each of those places holds an initialised instruction
    // (`MaybeUninit::write`). A panic in a decoder ends the scope with a
    // panic, before this line.
    unsafe { out.set_len(placed) };
    out.append(&mut overflow);
    out.shrink_to_fit();
    let d = agx_isa::stream::Decoded {
        insns: out,
        failed,
        cut: w.cut(),
    };
    (d, failed_steps)
}

/// The origin of raw code read from `name` whose file starts with `head`:
/// whether it starts as a Metal binary archive does
/// ([`agx_container::looks_like_archive`]), for the not-code hint.
pub fn raw_origin<'a>(name: &'a str, head: &[u8]) -> Origin<'a> {
    Origin::Raw {
        name,
        archive: agx_container::looks_like_archive(head),
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
    std::fs::read(path).map_err(|e| read_error(path, &e))
}

/// The error for a file that cannot be read.
pub fn read_error(path: &Path, e: &std::io::Error) -> Error {
    let why = match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    };
    Error::input(format!(
        "cannot read {}: {why}; check the path",
        path.display()
    ))
}

/// Opens a file to read it in pieces: the file and its length.
pub fn open_path(path: &Path) -> Result<(std::fs::File, u64), Error> {
    let f = std::fs::File::open(path).map_err(|e| read_error(path, &e))?;
    let len = f.metadata().map_err(|e| read_error(path, &e))?.len();
    Ok((f, len))
}

/// What the profile pipeline decodes, for agx-container's reader: the GPU
/// models' predicate ([`agx_analysis::gpu::decodes`]: a timed model covers
/// the GPU), with the reader's other options off.
pub fn read_options() -> ReadOptions {
    ReadOptions::new(agx_analysis::gpu::decodes)
}

/// `bytes` read as [`agx_container::read`] reads them, the slices the
/// profile pipeline decodes ([`read_options`]) read.
pub fn read_input(bytes: &[u8]) -> Result<Input, ContainerError> {
    agx_container::read_with(bytes, &read_options())
}

/// How the CLI tells a user where raw machine code goes.
pub const RAW_HINT_CLI: &str = "for raw machine code use --binary FILE";

/// The positional input (or Python's archive functions) as a Metal binary
/// archive: a fat or thin Mach-O holding GPU code. Anything else is refused
/// with one line naming `name`, what the bytes are (empty, too short, a PNG,
/// text, unknown magic 0x…, AIR only, …) and `raw_hint` (where raw code goes:
/// [`RAW_HINT_CLI`] for the CLI).
pub fn load_archive(bytes: &[u8], name: &str, raw_hint: &str) -> Result<Archive, Error> {
    // Undecodable slices are kept so `--list` shows them and `choose_slice`
    // explains a refusal.
    let opts = ReadOptions {
        keep_undecodable: true,
        ..read_options()
    };
    match agx_container::read_with(bytes, &opts) {
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

/// [`load_archive`] also reading the code of slices for GPUs the G13
/// decoder does not apply to (for another family's decoder).
pub fn load_archive_all_gpus(bytes: &[u8], name: &str) -> Result<Archive, Error> {
    let opts = ReadOptions {
        keep_undecodable: true,
        allow_other_gpus: true,
        ..read_options()
    };
    match agx_container::read_with(bytes, &opts) {
        Ok(Input::Archive(a)) => Ok(a),
        Ok(Input::Raw(_)) => Err(Error::input(format!(
            "{name} is not a Metal binary archive: {}; {RAW_HINT_CLI}",
            agx_container::describe_non_archive(bytes)
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

/// The archive reduced to the slice to profile ([`Archive::choose_slice`]:
/// `gpu`, or the newest decodable), and a note naming the choice when
/// several slices could have been profiled.
pub fn choose_slice(
    archive: &Archive,
    gpu: Option<&str>,
) -> Result<(Archive, Option<String>), Error> {
    let index = archive.choose_slice(gpu)?;
    let decodable: Vec<String> = archive
        .slices
        .iter()
        .filter(|s| s.decodable())
        .filter_map(|s| s.gpu().map(|g| g.describe()))
        .collect();
    let note = (gpu.is_none() && decodable.len() > 1).then(|| {
        format!(
            "note: profiling the {} slice, the newest decodable of {}; pick another with --gpu",
            archive.slices[index]
                .gpu()
                .map_or_else(String::new, |g| g.describe()),
            decodable.join(", ")
        )
    });
    Ok((archive.only_slice(index), note))
}

/// The GPU model of code named by `--gpu` when it has no timing table
/// (G15/G16 Macs, G17P: the untimed profile); `None` for a timed model's
/// GPU (G13/G14), no `--gpu` (the default model is timed) or a GPU
/// [`raw_gpu`] reports on. M5 code is refused with the reason.
pub fn untimed_model(
    name: Option<&str>,
) -> Result<Option<&'static agx_analysis::gpu::GpuModel>, Error> {
    let Some(row) = name.and_then(agx_container::gpu_row) else {
        return Ok(None);
    };
    if let Some(why) = agx_analysis::gpu::refusal(row) {
        return Err(Error::input(format!(
            "--gpu {}: {why}; it cannot be decoded",
            name.unwrap_or_default()
        )));
    }
    Ok(agx_analysis::gpu::model_of(row).filter(|m| !m.timed()))
}

/// The GPU named by `--gpu` for raw code: decodable ones only.
pub fn raw_gpu(name: &str) -> Result<Gpu, Error> {
    let (Some(g), Some(row)) = (Gpu::from_name(name), agx_container::gpu_row(name)) else {
        let known: Vec<String> = agx_container::GPUS
            .iter()
            .map(|r| r.name.to_ascii_lowercase())
            .collect();
        return Err(Error::usage(format!(
            "--gpu {name}: not a known Apple GPU; use one of: {}",
            known.join(", ")
        )));
    };
    if !agx_analysis::gpu::decodes(row) {
        return Err(Error::input(format!(
            "--gpu {name}: {} code cannot be decoded (decoding supports {}); get such code with \
             `metal-profile export KERNEL.metal -f NAME --target g14g -o out.archive` on a Mac",
            g.describe(),
            agx_container::decodable_names(agx_analysis::gpu::decodes).join(", ")
        )));
    }
    Ok(g)
}

/// The `--list` "decodable" column: `yes` (G13 family: profiled), the
/// family's name for another decoded family (Apple9: listings), `no (M5)`
/// for a generation known to be another encoding, else `no`.
fn decodable_column(s: &agx_container::Slice) -> String {
    if s.decodable() {
        return "yes".into();
    }
    let row = s.gpu().and_then(|g| agx_container::gpu_row(g.name));
    match row {
        Some(r) if agx_analysis::gpu::model_of(r).is_some() => agx_analysis::gpu::model_of(r)
            .map_or("no", |m| m.isa.name)
            .to_string(),
        Some(r) if agx_analysis::gpu::refusal(r).is_some() => format!("no ({})", r.family),
        _ => "no".into(),
    }
}

/// One line per slice for `--list`: index, kind, GPU, decodable, chosen.
pub fn list_slices(archive: &Archive, chosen: Option<usize>) -> String {
    let mut out = String::new();
    let mut line = |cols: [&str; 5]| {
        let l = format!(
            "{:<5} {:<9} {:<24} {:<9} {}",
            cols[0], cols[1], cols[2], cols[3], cols[4]
        );
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(["slice", "kind", "gpu", "decodable", "chosen"]);
    for (i, s) in archive.slices.iter().enumerate() {
        let gpu = match &s.kind {
            SliceKind::AppleGpu(g) => g.describe(),
            SliceKind::Air { .. } => "AIR bitcode".into(),
            SliceKind::AmdGpu => "AMD GPU".into(),
            SliceKind::IntelGpu => "Intel GPU".into(),
            SliceKind::Unknown => "-".into(),
        };
        line([
            &i.to_string(),
            &s.kind_name(),
            &gpu,
            &decodable_column(s),
            if chosen == Some(i) { "*" } else { "" },
        ]);
    }
    out
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
    /// The GPU itself, when known (from the slice, or `--gpu` for raw code).
    pub gpu_info: Option<Gpu>,
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
    let addr = raw_placement(bytes.len() as u64, offset, base)?;
    Ok(CodeRef {
        name: name.unwrap_or("kernel").to_string(),
        buffer: bytes,
        start: offset as usize,
        end: bytes.len(),
        addr,
        gpu: None,
        gpu_info: None,
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
        gpu_info: f.gpu,
    }
}

/// Walks the code as applegpu does (stops after the first `stop`).
pub fn walk_code<'a>(code: &'a CodeRef<'a>) -> impl Iterator<Item = Item> + 'a {
    walk(code.bytes(), code.addr)
}

/// The decoded instructions (unknown encodings and gaps dropped), with a
/// count of unknown encodings. The walk is the length-aware one of native
/// syntax (`agx_isa::stream::walk_native`): an unknown encoding of known
/// length counts once and is skipped whole (docs/decoder.md).
pub fn decode_code(code: &CodeRef<'_>) -> (Vec<Instruction>, usize) {
    agx_isa::stream::decode_all_native(code.bytes(), code.addr)
}

/// Each unknown encoding of the length-aware walk (the one of
/// [`decode_code`]): its address and native text, for the report.
pub fn unknown_lines(code: &CodeRef<'_>) -> Vec<(u32, String)> {
    let mut w = agx_isa::stream::walk_native(code.bytes(), code.addr);
    let mut insn = Instruction::default();
    std::iter::from_fn(|| w.next_into(&mut insn))
        .filter_map(|s| unknown_line(&s))
        .collect()
}

/// Writes the applegpu-identical listing of `code` to `w` as it decodes, in
/// constant memory whatever the code size. On several cores this thread
/// only scans the code ([`agx_isa::stream::Walk::skim`]: each step's form
/// and length, no operands, a fraction of the decoding cost) in batches of
/// [`LISTING_BATCH`] steps, and writes their text in order; worker threads
/// decode (with the forms the scan found) and format the batches, at most
/// `2 × workers` batches in flight, their buffers reused. Returns (instructions,
/// `<disassembly failed>` positions) for [`raw_code_warning`].
pub fn write_listing(
    w: &mut dyn std::io::Write,
    code: &CodeRef<'_>,
    syntax: Syntax,
) -> std::io::Result<Listed> {
    let threads = listing_threads(code.bytes().len() as u64);
    write_listing_with(w, code, syntax, threads)
}

/// What a listing counted: (instructions, `<disassembly failed>`
/// positions, where the code ended inside an instruction: the listing
/// stops before it).
pub type Listed = (usize, usize, Option<agx_isa::stream::Cut>);

/// Steps (lines) per batch of the parallel listing.
pub const LISTING_BATCH: usize = 4096;

/// [`write_listing`] on `threads` decoding-and-formatting threads (1 = this
/// thread only).
pub fn write_listing_with(
    w: &mut dyn std::io::Write,
    code: &CodeRef<'_>,
    syntax: Syntax,
    threads: usize,
) -> std::io::Result<Listed> {
    let mut walk = if syntax == Syntax::Native {
        agx_isa::stream::walk_native(code.bytes(), code.addr)
    } else {
        walk(code.bytes(), code.addr)
    };
    let (n, failed) = write_batches(w, syntax, threads, &mut |steps| {
        while steps.len() < LISTING_BATCH {
            match walk.skim() {
                Some(s) => steps.push(s),
                None => return Ok(false),
            }
        }
        Ok(true)
    })?;
    Ok((n, failed, walk.cut()))
}

/// The listing of raw code read from `input` (a file from the code's first
/// byte on; the first byte has address `addr`), streamed: the input is read
/// in pieces of 256 KiB as the scan goes, so memory stays constant however
/// large the file. The same text and counts as [`write_listing_with`] on the
/// whole file. Errors of `input` and of `w` both come back as `Err`.
pub fn write_listing_stream(
    w: &mut dyn std::io::Write,
    input: &mut dyn Read,
    addr: u32,
    syntax: Syntax,
    threads: usize,
) -> std::io::Result<Listed> {
    stream_listing(w, input, addr, syntax, threads, 1 << 18)
}

/// [`write_listing_stream`] reading pieces of `piece` bytes.
fn stream_listing(
    w: &mut dyn std::io::Write,
    input: &mut dyn Read,
    addr: u32,
    syntax: Syntax,
    threads: usize,
    piece: usize,
) -> std::io::Result<Listed> {
    let start = if syntax == Syntax::Native {
        agx_isa::stream::walk_native(&[], addr)
    } else {
        walk(&[], addr)
    };
    // the walk's state (over no bytes: its address is that of buf[pos])
    let mut state = start.continue_on(&[], false);
    let mut buf: Vec<u8> = Vec::with_capacity(piece + 64);
    let (mut pos, mut eof) = (0usize, false);
    let (n, failed) = write_batches(w, syntax, threads, &mut |steps| loop {
        let mut part = state.continue_on(&buf[pos..], eof);
        while steps.len() < LISTING_BATCH {
            match part.skim() {
                Some(s) => steps.push(s),
                None => break,
            }
        }
        pos += part.position();
        let ended = part.ended();
        state = part.continue_on(&[], false);
        if steps.len() >= LISTING_BATCH {
            return Ok(true);
        }
        if ended || eof {
            return Ok(false);
        }
        // the rest of this piece (under the walk's lookahead) and the next
        buf.drain(..pos);
        pos = 0;
        let got = (&mut *input).take(piece as u64).read_to_end(&mut buf)?;
        eof = got < piece;
    })?;
    Ok((n, failed, state.cut()))
}

/// Raw input `name` of `len` bytes must hold code from `offset` on: an
/// empty input, or `--offset` at its end, is an error naming it (code of
/// the default model's family).
pub fn check_raw_extent(name: &str, len: u64, offset: u64) -> Result<(), Error> {
    check_raw_extent_of(name, len, offset, agx_analysis::gpu::default_model().isa)
}

/// [`check_raw_extent`] for code of the family `isa` (its name in the
/// message).
pub fn check_raw_extent_of(
    name: &str,
    len: u64,
    offset: u64,
    isa: &agx_isa::isa::Isa,
) -> Result<(), Error> {
    if len == 0 {
        return Err(Error::input(format!(
            "{name} is empty: no machine code to disassemble or profile; give a file of {} machine code",
            isa.name
        )));
    }
    if offset == len {
        return Err(Error::input(format!(
            "--offset {offset:#x} is the end of {name} ({len} bytes): no code after it; pick an offset inside the file"
        )));
    }
    Ok(())
}

/// Checks `--offset`/`--base` for raw input of `len` bytes: the address of
/// the byte at `offset`.
pub fn raw_placement(len: u64, offset: u64, base: u64) -> Result<u32, Error> {
    if len == 0 {
        return Err(Error::input(
            "the input is empty: no machine code to disassemble or profile; give a file of G13 machine code",
        ));
    }
    if offset == len {
        return Err(Error::input(format!(
            "--offset {offset:#x} is the end of the input ({len} bytes): no code after it; pick an offset inside the file"
        )));
    }
    if offset > len {
        return Err(Error::input(format!(
            "--offset {offset:#x} is past the end of the input ({len} bytes); pick an offset inside the file"
        )));
    }
    if !offset.is_multiple_of(2) {
        return Err(Error::usage(format!(
            "--offset {offset:#x} is odd; G13 instructions are 2-byte aligned, pick an even offset"
        )));
    }
    if !base.is_multiple_of(2) {
        return Err(Error::usage(format!(
            "--base {base:#x} is odd; G13 instructions are 2-byte aligned, pick an even address"
        )));
    }
    u32::try_from(base)
        .map_err(|_| Error::usage(format!("--base {base:#x} does not fit in 32 bits")))
}

/// Threads for the listing of `bytes` bytes of code: the helpers' cores
/// (all, at most 8, or the `--jobs` cap: `agx_analysis::par::threads`), or
/// 1 for small code (a thread costs more than it saves).
pub fn listing_threads(bytes: u64) -> usize {
    if bytes < 1 << 18 {
        return 1;
    }
    agx_analysis::par::threads()
}

/// The parallel listing's engine: `fill` appends the next steps of the scan
/// to a batch (up to [`LISTING_BATCH`]; false when the scan is over); with
/// several `threads` the workers decode and format the batches and this
/// thread writes them in order, else this thread does it all. Returns
/// (instructions, `<disassembly failed>` positions).
fn write_batches(
    w: &mut dyn std::io::Write,
    syntax: Syntax,
    threads: usize,
    fill: &mut dyn FnMut(&mut Vec<agx_isa::stream::Skim>) -> std::io::Result<bool>,
) -> std::io::Result<(usize, usize)> {
    use agx_isa::stream::{write_step, Skim, Step};
    use std::sync::{mpsc, Mutex};
    let (mut n, mut failed) = (0, 0);
    let mut count = |steps: &[Skim]| {
        for s in steps {
            match s {
                Skim::Insn { .. } => n += 1,
                Skim::Other(Step::Failed { .. }) => failed += 1,
                Skim::Other(_) => {}
            }
        }
    };
    // sized for a batch (~75 bytes of text a line): no regrowth
    let new_buffers = || {
        (
            Vec::with_capacity(LISTING_BATCH),
            Vec::with_capacity(LISTING_BATCH * 96),
        )
    };
    let format = |steps: &[Skim], text: &mut Vec<u8>, insn: &mut Instruction| {
        text.clear();
        for s in steps {
            let step = s.decode(insn);
            write_step(text, &step, insn, syntax);
        }
    };
    if threads <= 1 {
        let (mut steps, mut text): (Vec<Skim>, Vec<u8>) = new_buffers();
        let mut insn = Instruction::default();
        loop {
            steps.clear();
            let more = fill(&mut steps)?;
            count(&steps);
            format(&steps, &mut text, &mut insn);
            w.write_all(&text)?;
            if !more {
                return Ok((n, failed));
            }
        }
    }
    // a batch: (sequence number, its steps, text buffer)
    type Job = (usize, Vec<Skim>, Vec<u8>);
    let window = 2 * threads;
    let (work_tx, work_rx) = mpsc::channel::<Job>();
    let work_rx = Mutex::new(work_rx);
    let (done_tx, done_rx) = mpsc::channel::<Job>();
    std::thread::scope(|sc| -> std::io::Result<()> {
        for _ in 0..threads {
            let done_tx = done_tx.clone();
            let work_rx = &work_rx;
            let format = &format;
            sc.spawn(move || {
                let mut insn = Instruction::default();
                loop {
                    let job = work_rx.lock().map(|rx| rx.recv());
                    let Ok(Ok((seq, steps, mut text))) = job else {
                        return;
                    };
                    format(&steps, &mut text, &mut insn);
                    if done_tx.send((seq, steps, text)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(done_tx);
        type Done = (Vec<Skim>, Vec<u8>);
        let mut pending: std::collections::BTreeMap<usize, Done> = Default::default();
        let mut spare: Vec<Done> = Vec::new();
        let (mut sent, mut written) = (0usize, 0usize);
        // writes finished batches in order and keeps their buffers; waits
        // for one result when `block`
        let mut drain = |pending: &mut std::collections::BTreeMap<usize, Done>,
                         spare: &mut Vec<Done>,
                         written: &mut usize,
                         block: bool|
         -> std::io::Result<()> {
            let got = if block {
                done_rx.recv().ok()
            } else {
                done_rx.try_recv().ok()
            };
            if let Some((seq, steps, text)) = got {
                pending.insert(seq, (steps, text));
            }
            while let Some(done) = pending.remove(written) {
                w.write_all(&done.1)?;
                *written += 1;
                spare.push(done);
            }
            Ok(())
        };
        let mut result = Ok(());
        let mut more = true;
        while more && result.is_ok() {
            let (mut steps, text) = spare.pop().unwrap_or_else(new_buffers);
            steps.clear();
            match fill(&mut steps) {
                Ok(m) => more = m,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
            count(&steps);
            if !steps.is_empty() {
                if work_tx.send((sent, steps, text)).is_err() {
                    break;
                }
                sent += 1;
            }
            result = drain(&mut pending, &mut spare, &mut written, false);
            while result.is_ok() && sent - written >= window {
                result = drain(&mut pending, &mut spare, &mut written, true);
            }
        }
        drop(work_tx);
        while result.is_ok() && written < sent {
            result = drain(&mut pending, &mut spare, &mut written, true);
        }
        result
    })?;
    Ok((n, failed))
}

/// applegpu-identical listing of `code`.
pub fn listing(code: &CodeRef<'_>, syntax: Syntax) -> String {
    agx_isa::disassemble_listing(code.bytes(), code.addr, syntax)
}

/// The warning for raw code some of whose positions do not decode (fewer
/// than [`NOT_CODE_PERCENT`]: more is refused by [`check_decoded`]).
pub fn raw_code_warning(insns: usize, failed: usize) -> Option<String> {
    let total = insns + failed;
    (failed > 0).then(|| {
        format!(
            "warning: {failed} of {total} positions did not decode (<disassembly failed>); \
             this may be code for another GPU generation (decoding supports G13/M1 and G14/M2 code), data, \
             or the wrong --offset"
        )
    })
}

/// A warning about unknown encodings, with the exit code they give unless
/// `--allow-unknown` ([`EXIT_UNKNOWN`]).
pub fn with_exit_note(warning: String, allow_unknown: bool) -> String {
    if allow_unknown {
        warning
    } else {
        format!("{warning}; exit code {EXIT_UNKNOWN} (--allow-unknown: 0)")
    }
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

/// The `--list --format json` document: `{"schema", "tool", "slices":
/// [...], "functions": [...], "warnings": [...]}` (docs/schema.json): every
/// slice with its GPU, whether we decode it and whether it is `chosen`, then
/// the functions of the chosen slice (none when no slice can be profiled).
pub fn list_document(archive: &Archive, chosen: Option<usize>) -> String {
    let slices: Vec<serde_json::Value> = archive
        .slices
        .iter()
        .enumerate()
        .map(|(i, s)| {
            serde_json::json!({
                "index": i,
                "kind": s.kind_name(),
                "gpu": s.gpu().map(|g| g.name),
                "gpu_name": s.gpu().map(|g| g.describe()),
                "decodable": s.decodable(),
                "chosen": chosen == Some(i),
            })
        })
        .collect();
    let shown = chosen.map(|i| archive.only_slice(i));
    let functions: Vec<serde_json::Value> = shown
        .iter()
        .flat_map(|a| a.functions.iter())
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
        "slices": slices,
        "functions": functions,
        "warnings": archive.warnings,
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mesa's matmul with zero runs (blank lines) and undecodable halfwords
    /// (`<disassembly failed>`) between copies, over several batches.
    fn mixed_code() -> Vec<u8> {
        let m = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/matmul_naive.bin"
        ))
        .expect("examples/matmul_naive.bin");
        let (prefix, body, suffix) = (&m[..0x2e], &m[0x2e..0x7a], &m[0x7a..]);
        let mut code = prefix.to_vec();
        for i in 0..3000 {
            code.extend_from_slice(body);
            match i % 7 {
                0 => code.extend_from_slice(&[0; 10]),
                3 => code.extend_from_slice(&[0xff, 0xff]),
                _ => {}
            }
        }
        code.extend_from_slice(suffix);
        code
    }

    /// A reader handing out at most `step` bytes a call.
    struct Dribble<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl std::io::Read for Dribble<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let k = buf.len().min(self.step).min(self.data.len());
            buf[..k].copy_from_slice(&self.data[..k]);
            self.data = &self.data[k..];
            Ok(k)
        }
    }

    #[test]
    fn streamed_listing_is_the_listing() {
        let code = mixed_code();
        for syntax in [Syntax::Default, Syntax::Native] {
            let want = agx_isa::disassemble_listing(&code, 0x1000, syntax);
            let (n1, f1) = if syntax == Syntax::Native {
                agx_isa::stream::decode_all_native(&code, 0x1000)
            } else {
                agx_isa::stream::decode_all(&code, 0x1000)
            };
            let cases = [
                (1, 1 << 20, 1 << 18),
                (2, 7, 1 << 18),
                (3, 4093, 1000),
                (2, 1 << 20, 13),
                (1, 5, 64),
                (2, 1 << 20, 4096),
            ];
            for (threads, step, piece) in cases {
                let mut out = Vec::new();
                let mut input = Dribble { data: &code, step };
                let (n, failed, _) =
                    stream_listing(&mut out, &mut input, 0x1000, syntax, threads, piece).unwrap();
                assert!(
                    out == want.as_bytes(),
                    "{threads} threads, reads of {step}, pieces of {piece}"
                );
                assert_eq!((n, failed), (n1.len(), f1), "{threads} threads");
            }
        }
    }

    #[test]
    fn parallel_listing_is_the_sequential_listing() {
        let code = mixed_code();
        let c = CodeRef {
            name: "k".into(),
            buffer: &code,
            start: 0,
            end: code.len(),
            addr: 0x1000,
            gpu: None,
            gpu_info: None,
        };
        let want = agx_isa::disassemble_listing(&code, 0x1000, Syntax::Default);
        assert!(want.contains("<disassembly failed>") && want.contains("\n\n"));
        let (n1, f1) = agx_isa::stream::decode_all(&code, 0x1000);
        assert!(n1.len() > 3 * LISTING_BATCH, "several batches");
        for threads in [1, 2, 3, 8] {
            let mut out = Vec::new();
            let (n, failed, _) =
                write_listing_with(&mut out, &c, Syntax::Default, threads).unwrap();
            assert!(out == want.as_bytes(), "{threads} threads differ");
            assert_eq!((n, failed), (n1.len(), f1), "{threads} threads");
        }
    }
}
