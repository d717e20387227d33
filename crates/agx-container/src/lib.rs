//! `agx-container`: serialized Metal binary archives → named code blobs.
//!
//! Reads what `shared/reference/archive-format.md` describes: the "Metal fat"
//! header (`cb fe ba be`, and its byte-swapped variant), thin 64-bit Mach-O
//! files, the APPLEGPU slice (cputype `0x01000013`) with its `__TEXT,__compute`
//! / `__vertex` / `__fragment` sections, each a nested Mach-O whose
//! `__TEXT,__text` holds the code and whose `LC_SYMTAB` names the functions.
//! Anything that does not start with a known magic number is a raw code dump
//! ([`Input::Raw`]).
//!
//! ```no_run
//! let bytes = std::fs::read("kernels.metallib-archive").unwrap();
//! // Which GPUs' code the caller decodes is its own knowledge (the profiler
//! // passes `agx_analysis::gpu::decodes`): here G13 and G14 Macs.
//! let decodes = |gpu: &agx_container::GpuRow| matches!(gpu.generation, 13 | 14) && !gpu.is_phone();
//! match agx_container::read(&bytes, decodes).unwrap() {
//!     agx_container::Input::Archive(a) => {
//!         let f = a.select(Some("matmul_naive")).unwrap();
//!         // Disassemble the whole __text at f.text_offset so calls resolve.
//!         let _text = a.code(f);
//!     }
//!     agx_container::Input::Raw(_code) => {}
//! }
//! ```
//!
//! Not handled: the driver's shader cache (`functions.data`, concatenated
//! Mach-O images with a `__GPU_LD_MD` segment and `MTLPSBIN` blobs).

mod buf;
mod error;
mod gpu;
mod macho;
mod names;
pub use names::display_name;
mod sniff;
#[cfg(feature = "testutil")]
pub mod testutil;

use std::collections::{HashMap, HashSet};
use std::fmt;

use buf::{Buf, Result};
pub use error::ContainerError;
pub use gpu::{
    decodable_names, gpu_row, Decodes, Gpu, GpuRow, Supported, CPU_TYPE_AIR64, CPU_TYPE_AMDGPU,
    CPU_TYPE_APPLEGPU, CPU_TYPE_INTELGPU, GPUS, PHONE_FAMILY,
};
use macho::{MachO, MH_MAGIC_64_BYTES};
pub use sniff::describe_non_archive;

/// Pipeline stage, from the name of the APPLEGPU image's section.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    /// `__TEXT,__compute`
    Compute,
    /// `__TEXT,__vertex`
    Vertex,
    /// `__TEXT,__fragment`
    Fragment,
}

impl Stage {
    /// "compute", "vertex", "fragment".
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Compute => "compute",
            Stage::Vertex => "vertex",
            Stage::Fragment => "fragment",
        }
    }

    /// The `__TEXT` section that holds this stage's image.
    pub fn section_name(self) -> &'static str {
        match self {
            Stage::Compute => "__compute",
            Stage::Vertex => "__vertex",
            Stage::Fragment => "__fragment",
        }
    }

    fn from_section(name: &str) -> Option<Stage> {
        [Stage::Compute, Stage::Vertex, Stage::Fragment]
            .into_iter()
            .find(|s| s.section_name() == name)
    }

    fn parse(s: &str) -> Option<Stage> {
        [Stage::Compute, Stage::Vertex, Stage::Fragment]
            .into_iter()
            .find(|st| st.as_str().eq_ignore_ascii_case(s))
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which piece of a shader a symbol names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Part {
    /// `…agc.main.constant_program`: runs once per dispatch and fills uniform
    /// registers (`uniform_store`, `tex_state_store`, …).
    Prolog,
    /// `…agc.main`: the per-thread body.
    Main,
    /// Any other symbol: a function reached with `call`.
    Helper,
}

impl Part {
    /// "prolog", "main", "helper".
    pub fn as_str(self) -> &'static str {
        match self {
            Part::Prolog => "prolog",
            Part::Main => "main",
            Part::Helper => "helper",
        }
    }
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One named piece of machine code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub stage: Stage,
    /// The full symbol, e.g. `_agc.main`, `l__Z6helperPU9MTLdeviceKjj`.
    pub symbol: String,
    /// Display ("Metal") name: the kernel name for prolog and main (from the
    /// symbol prefix, else from the archive's metallib when unambiguous, else
    /// `main`), the demangled name for helpers (`helper`).
    pub name: String,
    pub part: Part,
    /// Offset of the function in its image's `__text`.
    pub text_offset: u64,
    /// Bytes up to the next symbol (or the end of `__text`).
    pub size: u64,
    /// `size` without trailing `trap` (0x0008) padding after `stop` / `ret`.
    pub code_size: u64,
    /// The GPU of the slice (None only for images read without one).
    pub gpu: Option<Gpu>,
    /// Index into [`Archive::images`].
    pub image: usize,
    /// Absolute offset of the function's first byte in the input file.
    pub file_offset: u64,
}

/// One nested code image (one stage section of one APPLEGPU slice).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    pub stage: Stage,
    pub gpu: Option<Gpu>,
    /// The whole `__TEXT,__text` section.
    pub text: Vec<u8>,
    /// Absolute offset of `text[0]` in the input file.
    pub text_file_offset: u64,
    /// Whether the image had an `LC_SYMTAB` naming code in `__text`.
    pub has_symbols: bool,
    /// Index into [`Archive::slices`].
    pub slice: usize,
}

/// What a fat slice (or the thin file) holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SliceKind {
    /// Native Apple GPU code.
    AppleGpu(Gpu),
    /// AIR bitcode (`MTLB` metallib), with the function names found in it.
    Air {
        names: Vec<String>,
    },
    AmdGpu,
    IntelGpu,
    Unknown,
}

/// One slice of the container.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slice {
    pub cputype: u32,
    pub cpusubtype: u32,
    /// Absolute offset and size in the input.
    pub offset: u64,
    pub size: u64,
    pub kind: SliceKind,
    /// Whether its code was read (false for skipped slices, e.g. G16G).
    pub decoded: bool,
    /// Whether the caller decodes its GPU's code ([`ReadOptions::decodes`]);
    /// false for a slice that is not Apple GPU code.
    pub decodes: bool,
}

/// A parsed archive.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Archive {
    /// Every function of every decoded image, in file order (per image: by
    /// offset in `__text`).
    pub functions: Vec<Function>,
    pub images: Vec<Image>,
    pub slices: Vec<Slice>,
    /// Things the reader tolerated (skipped slices, missing symbols, …).
    pub warnings: Vec<String>,
    /// True for a thin Mach-O file (no fat header).
    pub thin: bool,
    /// The Mac generations the reader was told decode
    /// ([`ReadOptions::decodes`]): what [`Archive::choose_slice`]'s refusals
    /// name.
    pub supported: Supported,
}

/// What [`read`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    Archive(Archive),
    /// Not a recognised container: the bytes themselves (a raw code dump).
    Raw(Vec<u8>),
}

/// Knobs for [`read_with`].
#[derive(Clone, Debug)]
pub struct ReadOptions {
    /// Which GPUs' code the caller decodes (the profiler passes
    /// `agx_analysis::gpu::decodes`, from its GPU models): the slices whose
    /// code is read, [`Slice::decodes`], what [`Archive::choose_slice`]
    /// picks from, and the GPUs the messages name ([`Supported`]).
    pub decodes: Decodes,
    /// Also read slices for GPUs `decodes` rejects (another family, phone
    /// parts, unknown subtypes) instead of skipping them; each gets a
    /// warning.
    pub allow_other_gpus: bool,
    /// Return the archive even when no slice can be decoded (its `slices`
    /// list them), so that `--list` can show them and
    /// [`Archive::choose_slice`] can explain; without it such an archive is
    /// [`ContainerError::UnsupportedGpu`].
    pub keep_undecodable: bool,
}

impl ReadOptions {
    /// Reads the slices of the GPUs `decodes` accepts, nothing else.
    pub fn new(decodes: Decodes) -> ReadOptions {
        ReadOptions {
            decodes,
            allow_other_gpus: false,
            keep_undecodable: false,
        }
    }
}

/// Reads an archive or recognises a raw dump, reading the code of the
/// slices whose GPU `decodes` accepts.
pub fn read(bytes: &[u8], decodes: Decodes) -> std::result::Result<Input, ContainerError> {
    read_with(bytes, &ReadOptions::new(decodes))
}

/// Whether bytes starting with `head` (4 bytes are enough) begin as an
/// input [`read`] treats as an archive does: the Metal or universal fat
/// header (either byte order), a 64-bit Mach-O, or `MTLB` (AIR only). For
/// hints ("drop --binary") without reading the whole input.
pub fn looks_like_archive(head: &[u8]) -> bool {
    matches!(
        head.get(0..4),
        Some(
            [0xcb, 0xfe, 0xba, 0xbe]
                | [0xca, 0xfe, 0xba, 0xbe]
                | [0xbe, 0xba, 0xfe, 0xcb]
                | [0xbe, 0xba, 0xfe, 0xca]
                | [0xcf, 0xfa, 0xed, 0xfe]
                | [b'M', b'T', b'L', b'B']
        )
    )
}

/// [`read`] with options.
pub fn read_with(bytes: &[u8], opts: &ReadOptions) -> std::result::Result<Input, ContainerError> {
    let Some(magic) = bytes.get(0..4) else {
        return Ok(Input::Raw(bytes.to_vec()));
    };
    let file = Buf::new(bytes, 0, "the file");
    let mut b = Builder {
        opts,
        a: Archive {
            supported: Supported::of(opts.decodes),
            ..Archive::default()
        },
        unsupported: Vec::new(),
        pending: Vec::new(),
        image_hints: Vec::new(),
    };
    match magic {
        // Metal fat header (big-endian records) and Apple's universal header,
        // which has the same 20-byte record layout; then their byte-swapped forms.
        [0xcb, 0xfe, 0xba, 0xbe] | [0xca, 0xfe, 0xba, 0xbe] => b.fat(file, true)?,
        [0xbe, 0xba, 0xfe, 0xcb] | [0xbe, 0xba, 0xfe, 0xca] => b.fat(file, false)?,
        m if m == MH_MAGIC_64_BYTES => b.thin(file)?,
        b"MTLB" => return Err(ContainerError::AirOnly),
        _ => return Ok(Input::Raw(bytes.to_vec())),
    }
    b.finish().map(Input::Archive)
}

/// Length of `code` without trailing `trap` halfwords (bytes `08 00`), when
/// that run follows a `stop` (0x0088) or a 2-byte `ret` (low 7 bits 0x14).
/// Apple and Mesa pad after `stop` with 0x0008 (shared/corpus/real/README.md
/// §3); the terminator check keeps a longer instruction that happens to end
/// in `08 00` intact.
pub fn trim_trap_padding(code: &[u8]) -> usize {
    if code.len() % 2 != 0 {
        return code.len();
    }
    let mut end = code.len();
    while end >= 2 && code[end - 2..end] == [0x08, 0x00] {
        end -= 2;
    }
    if end == code.len() || end < 2 {
        return code.len();
    }
    let hw = u16::from_le_bytes([code[end - 2], code[end - 1]]);
    if hw == 0x0088 || hw & 0x7f == 0x14 {
        end
    } else {
        code.len()
    }
}

impl Slice {
    /// The GPU of an Apple GPU slice.
    pub fn gpu(&self) -> Option<Gpu> {
        match self.kind {
            SliceKind::AppleGpu(g) => Some(g),
            _ => None,
        }
    }

    /// Whether this slice's code was read and the caller decodes it
    /// ([`ReadOptions::decodes`]).
    pub fn decodable(&self) -> bool {
        self.decoded && self.decodes
    }

    /// "APPLEGPU", "AIR64", "AMDGPU", "INTELGPU" or the raw cputype.
    pub fn kind_name(&self) -> String {
        cputype_name(self.cputype)
    }
}

impl Archive {
    /// The slice to profile: the one for GPU `gpu` (`g14g`, `G14G`,
    /// `applegpu_g14g`; case-insensitive), or by default the newest decodable
    /// one (highest generation; the first in file order among equals).
    ///
    /// Errors: a GPU name that has no slice here ([`ContainerError::NoSuchGpu`],
    /// naming what the archive holds), a slice that cannot be decoded
    /// ([`ContainerError::UndecodableGpu`], naming the decodable ones), and no
    /// decodable slice at all ([`ContainerError::UnsupportedGpu`]).
    pub fn choose_slice(&self, gpu: Option<&str>) -> std::result::Result<usize, ContainerError> {
        let decodable: Vec<String> = self
            .slices
            .iter()
            .filter(|s| s.decodable())
            .filter_map(|s| s.gpu().map(|g| g.describe()))
            .collect();
        let Some(name) = gpu else {
            let best = self
                .slices
                .iter()
                .enumerate()
                .filter(|(_, s)| s.decodable())
                .filter_map(|(i, s)| s.gpu().map(|g| (i, g.generation)))
                .fold(None, |best: Option<(usize, u8)>, (i, g)| match best {
                    Some((_, bg)) if bg >= g => best,
                    _ => Some((i, g)),
                });
            return match best {
                Some((i, _)) => Ok(i),
                None => match self.slices.iter().find_map(|s| s.gpu()) {
                    Some(gpu) => Err(ContainerError::UnsupportedGpu {
                        gpu,
                        supported: self.supported.clone(),
                    }),
                    None => Err(ContainerError::NoNativeCode {
                        found: summarize(&self.slices),
                    }),
                },
            };
        };
        let wanted = gpu_row(name).map(|r| r.name);
        let found = self.slices.iter().enumerate().find(|(_, s)| {
            s.gpu().is_some_and(|g| {
                Some(g.name) == wanted
                    || (g.name == "unknown"
                        && name.trim().eq_ignore_ascii_case(&g.cpusubtype.to_string()))
            })
        });
        match found {
            Some((i, s)) if s.decodable() => Ok(i),
            Some((_, s)) => Err(ContainerError::UndecodableGpu {
                gpu: s.gpu().expect("an Apple GPU slice"),
                decodable,
                supported: self.supported.clone(),
            }),
            None => Err(ContainerError::NoSuchGpu {
                requested: name.trim().to_string(),
                present: self
                    .slices
                    .iter()
                    .filter_map(|s| s.gpu().map(|g| g.describe()))
                    .collect(),
            }),
        }
    }

    /// This archive with only the functions and images of slice `index`
    /// (image indices renumbered; `slices` and `warnings` kept whole).
    pub fn only_slice(&self, index: usize) -> Archive {
        let mut map = vec![usize::MAX; self.images.len()];
        let mut images = Vec::new();
        for (i, img) in self.images.iter().enumerate() {
            if img.slice == index {
                map[i] = images.len();
                images.push(img.clone());
            }
        }
        let functions = self
            .functions
            .iter()
            .filter(|f| map.get(f.image).is_some_and(|&m| m != usize::MAX))
            .map(|f| Function {
                image: map[f.image],
                ..f.clone()
            })
            .collect();
        Archive {
            functions,
            images,
            slices: self.slices.clone(),
            warnings: self.warnings.clone(),
            thin: self.thin,
            supported: self.supported.clone(),
        }
    }

    /// The whole `__text` of `f`'s image: disassemble it at `f.text_offset`
    /// so that `call` targets resolve within the section.
    pub fn code(&self, f: &Function) -> &[u8] {
        self.images.get(f.image).map_or(&[], |i| &i.text[..])
    }

    /// Just `f`'s bytes, without trailing trap padding.
    pub fn function_code(&self, f: &Function) -> &[u8] {
        self.slice_of(f, f.code_size)
    }

    /// `f`'s bytes including trailing padding (its whole symbol extent).
    pub fn function_bytes(&self, f: &Function) -> &[u8] {
        self.slice_of(f, f.size)
    }

    fn slice_of(&self, f: &Function, len: u64) -> &[u8] {
        let text = self.code(f);
        let start = f.text_offset.min(text.len() as u64) as usize;
        let end = f.text_offset.saturating_add(len).min(text.len() as u64) as usize;
        &text[start..end.max(start)]
    }

    /// The function of `f`'s image that starts at `text_offset` (a `call`
    /// target), if any.
    pub fn function_at(&self, f: &Function, text_offset: u64) -> Option<&Function> {
        self.functions
            .iter()
            .find(|g| g.image == f.image && g.text_offset == text_offset && g.size > 0)
    }

    /// The symbol starting at `text_offset` in `f`'s image, for `; -> name`
    /// annotations of `call` targets.
    pub fn symbol_at(&self, f: &Function, text_offset: u64) -> Option<&str> {
        self.function_at(f, text_offset).map(|g| g.symbol.as_str())
    }

    /// The prolog (`…agc.main.constant_program`) belonging to `f`'s kernel.
    pub fn prolog_of(&self, f: &Function) -> Option<&Function> {
        self.functions
            .iter()
            .find(|g| g.image == f.image && g.part == Part::Prolog && g.name == f.name)
    }

    /// The main body belonging to `f`'s kernel.
    pub fn main_of(&self, f: &Function) -> Option<&Function> {
        self.functions
            .iter()
            .find(|g| g.image == f.image && g.part == Part::Main && g.name == f.name)
    }

    /// Picks a function by Metal name (`simple_call`, `helper`), full symbol
    /// (`_agc.main`, `l__Z6helperPU9MTLdeviceKjj`) or `stage:name`. With
    /// `None`, the main body when the archive has exactly one kernel. When a
    /// name fits a kernel's prolog and main, the main wins; when several
    /// slices hold the same function, the first slice wins (pick a slice
    /// first with [`Archive::choose_slice`] and [`Archive::only_slice`]).
    pub fn select(&self, name: Option<&str>) -> std::result::Result<&Function, ContainerError> {
        let Some(name) = name else {
            let mains: Vec<&Function> =
                dedup(self.functions.iter().filter(|f| f.part == Part::Main));
            return match mains.as_slice() {
                [one] => Ok(one),
                [] if self.functions.len() == 1 => Ok(&self.functions[0]),
                [] => Err(ContainerError::Ambiguous {
                    requested: None,
                    candidates: self.available_names(),
                }),
                many => Err(ContainerError::Ambiguous {
                    requested: None,
                    candidates: labels(many),
                }),
            };
        };
        let (stage, bare) = match name.split_once(':') {
            Some((s, rest)) => match Stage::parse(s) {
                Some(st) => (Some(st), rest),
                None => (None, name),
            },
            None => (None, name),
        };
        let in_stage = |f: &&Function| match stage {
            Some(s) => f.stage == s,
            None => true,
        };
        let by_symbol: Vec<&Function> = self
            .functions
            .iter()
            .filter(in_stage)
            .filter(|f| f.symbol == bare)
            .collect();
        let pool: Vec<&Function> = if by_symbol.is_empty() {
            self.functions
                .iter()
                .filter(in_stage)
                .filter(|f| f.name == bare)
                .collect()
        } else {
            by_symbol
        };
        // Preference when a name fits several parts: main, then prolog, then helper.
        let rank = |p: Part| match p {
            Part::Main => 0,
            Part::Prolog => 1,
            Part::Helper => 2,
        };
        let Some(best) = pool.iter().map(|f| f.part).min_by_key(|&p| rank(p)) else {
            return Err(ContainerError::NoSuchFunction {
                requested: name.to_string(),
                available: self.available_names(),
            });
        };
        let picked = dedup(pool.into_iter().filter(|f| f.part == best));
        match picked.as_slice() {
            [one] => Ok(one),
            many => Err(ContainerError::Ambiguous {
                requested: Some(name.to_string()),
                candidates: labels(many),
            }),
        }
    }

    /// One entry per selectable function (prologs are reached through their
    /// kernel): `name (symbol)`, or `stage:name (symbol)` when the name is
    /// not unique.
    pub fn available_names(&self) -> Vec<String> {
        let fs: Vec<&Function> = dedup(self.functions.iter().filter(|f| f.part != Part::Prolog));
        let mut count: HashMap<&str, usize> = HashMap::new();
        for f in &fs {
            *count.entry(f.name.as_str()).or_default() += 1;
        }
        let mut seen = HashSet::new();
        let mut out: Vec<String> = Vec::new();
        for f in &fs {
            let label = if count[f.name.as_str()] > 1 {
                format!("{}:{} ({})", f.stage, f.name, f.symbol)
            } else {
                format!("{} ({})", f.name, f.symbol)
            };
            if seen.insert(label.clone()) {
                out.push(label);
            }
        }
        out
    }
}

/// Drops functions that repeat an earlier one's (stage, part, name, symbol),
/// i.e. the same function in a second G13 slice.
fn dedup<'a>(it: impl Iterator<Item = &'a Function>) -> Vec<&'a Function> {
    let mut seen = HashSet::new();
    it.filter(|f| seen.insert((f.stage, f.part, f.name.as_str(), f.symbol.as_str())))
        .collect()
}

fn labels(fs: &[&Function]) -> Vec<String> {
    fs.iter()
        .map(|f| format!("{}:{} ({})", f.stage, f.name, f.symbol))
        .collect()
}

/// Collects the archive while slices are read.
struct Builder<'o> {
    opts: &'o ReadOptions,
    a: Archive,
    /// GPUs of slices skipped because they are not G13.
    unsupported: Vec<Gpu>,
    /// Per function: whether it is an unprefixed prolog/main still called
    /// `main` (named later, see `name_unprefixed`).
    pending: Vec<bool>,
    /// Per image: the names in its APPLEGPU image's `__metallib` section.
    image_hints: Vec<std::rc::Rc<Vec<String>>>,
}

impl Builder<'_> {
    fn warn(&mut self, w: String) {
        if self.a.warnings.len() < 1000 {
            self.a.warnings.push(w);
        }
    }

    fn fat(&mut self, file: Buf<'_>, big: bool) -> Result<()> {
        let mut big = big;
        let room = file.len().saturating_sub(8) / 20;
        let mut nfat = u64::from(file.u32e(4, big, "the fat header slice count")?);
        if nfat > room || nfat == 0 {
            // Tolerate a writer that swapped the magic but not the records.
            let other = u64::from(file.u32e(4, !big, "the fat header slice count")?);
            if other != 0 && other <= room {
                self.warn(format!(
                    "the fat header's byte order does not match its magic; reading its records as {}-endian",
                    if big { "little" } else { "big" }
                ));
                big = !big;
                nfat = other;
            }
        }
        if nfat == 0 {
            return Err(ContainerError::at(
                4,
                "the fat header lists no slices (nfat_arch 0), expected at least one",
            ));
        }
        if nfat > room {
            return Err(ContainerError::at(
                4,
                format!(
                    "the fat header lists {nfat} slices, but the file has room for only {room} 20-byte records ({} bytes)",
                    file.len()
                ),
            ));
        }
        for i in 0..nfat {
            let r = 8 + i * 20;
            let cputype = file.u32e(r, big, "fat record cputype")?;
            let cpusubtype = file.u32e(r + 4, big, "fat record cpusubtype")?;
            let offset = u64::from(file.u32e(r + 8, big, "fat record offset")?);
            let size = u64::from(file.u32e(r + 12, big, "fat record size")?);
            if offset.saturating_add(size) > file.len() {
                return Err(ContainerError::at(
                    r,
                    format!(
                        "fat record {i} ({}) places its slice at {offset:#x}..{:#x}, past the end of the file ({} bytes)",
                        cputype_name(cputype),
                        offset.saturating_add(size),
                        file.len()
                    ),
                ));
            }
            if offset < 8 + nfat * 20 && size > 0 {
                self.warn(format!(
                    "at offset {r:#x}: fat record {i} places its slice at {offset:#x}, inside the fat header"
                ));
            }
            let what = format!("slice {i} ({})", cputype_name(cputype));
            let data = file.sub(offset, size, "slice", &what)?;
            self.slice(data, cputype, cpusubtype)?;
        }
        Ok(())
    }

    fn thin(&mut self, file: Buf<'_>) -> Result<()> {
        self.a.thin = true;
        // Parsed here only for its cputype; an APPLEGPU image is parsed again
        // (with its warnings) by `gpu_image`.
        let m = macho::parse(file, &mut Vec::new())?;
        self.slice(file, m.cputype, m.cpusubtype)
    }

    fn slice(&mut self, data: Buf<'_>, cputype: u32, cpusubtype: u32) -> Result<()> {
        let index = self.a.slices.len();
        let mut slice = Slice {
            cputype,
            cpusubtype,
            offset: data.base,
            size: data.len(),
            kind: SliceKind::Unknown,
            decoded: false,
            decodes: false,
        };
        match cputype {
            CPU_TYPE_APPLEGPU => {
                let gpu = Gpu::from_cpusubtype(cpusubtype);
                slice.kind = SliceKind::AppleGpu(gpu);
                // an unknown subtype has no row: no caller decodes it
                slice.decodes = gpu::row_of(cpusubtype).is_some_and(self.opts.decodes);
                if slice.decodes || self.opts.allow_other_gpus {
                    if !slice.decodes {
                        self.warn(format!(
                            "slice {index} at {:#x}: native code for GPU {}: decoding supports {} only; read anyway",
                            data.base,
                            gpu.describe(),
                            self.a.supported.generations()
                        ));
                    }
                    slice.decoded = true;
                    self.a.slices.push(slice);
                    return self.gpu_image(data, gpu, index);
                }
                // Not decoded; listed by `slices`, explained by `choose_slice`.
                self.unsupported.push(gpu);
            }
            CPU_TYPE_AIR64 => {
                if !data.data.starts_with(b"MTLB") && !data.data.starts_with(&MH_MAGIC_64_BYTES) {
                    self.warn(format!(
                        "slice {index} at {:#x}: AIR64 slice does not start with the MTLB magic",
                        data.base
                    ));
                }
                slice.kind = SliceKind::Air {
                    names: names::metallib_names(data.data),
                };
            }
            CPU_TYPE_AMDGPU | CPU_TYPE_INTELGPU => {
                slice.kind = if cputype == CPU_TYPE_AMDGPU {
                    SliceKind::AmdGpu
                } else {
                    SliceKind::IntelGpu
                };
                self.warn(format!(
                    "skipped slice {index} at {:#x}: {} code, not Apple GPU code",
                    data.base,
                    cputype_name(cputype)
                ));
            }
            _ => self.warn(format!(
                "skipped slice {index} at {:#x}: unknown cputype {cputype:#x}",
                data.base
            )),
        }
        self.a.slices.push(slice);
        Ok(())
    }

    /// An APPLEGPU Mach-O: read each stage section's nested image.
    fn gpu_image(&mut self, data: Buf<'_>, gpu: Gpu, slice: usize) -> Result<()> {
        let mut w = Vec::new();
        let m = macho::parse(data, &mut w)?;
        self.a.warnings.extend(w);
        if m.cputype != CPU_TYPE_APPLEGPU {
            self.warn(format!(
                "at offset {:#x}: the APPLEGPU slice's Mach-O says cputype {:#x}",
                data.base + 4,
                m.cputype
            ));
        }
        let mut hints: Vec<String> = Vec::new();
        for s in m
            .sections
            .iter()
            .filter(|s| s.segname == "__TEXT" && s.sectname == "__metallib")
        {
            if let Some(d) = macho::section_data(data, s, "the __metallib section")? {
                // Only "exactly one name" matters: keep at most two.
                for n in names::metallib_names(d.data) {
                    if hints.len() < 2 && !hints.contains(&n) {
                        hints.push(n);
                    }
                }
            }
        }
        let hints = std::rc::Rc::new(hints);
        let mut stages = 0;
        for s in &m.sections {
            let Some(stage) = Stage::from_section(&s.sectname).filter(|_| s.segname == "__TEXT")
            else {
                continue;
            };
            stages += 1;
            let what = format!("the __TEXT,{} section", s.sectname);
            let Some(nested) = macho::section_data(data, s, &what)? else {
                self.warn(format!(
                    "at offset {:#x}: the __TEXT,{} section has no file data; skipped",
                    data.abs(s.header_off),
                    s.sectname
                ));
                continue;
            };
            let mut w = Vec::new();
            let inner = macho::parse(nested, &mut w)?;
            self.a.warnings.extend(w);
            self.code_image(nested, &inner, stage, gpu, slice, &hints)?;
        }
        if stages == 0 {
            if m.sections
                .iter()
                .any(|s| s.segname == "__TEXT" && s.sectname == "__text")
            {
                self.warn(format!(
                    "at offset {:#x}: the APPLEGPU image has no __compute/__vertex/__fragment section; reading its own __TEXT,__text as compute code",
                    data.base
                ));
                self.code_image(data, &m, Stage::Compute, gpu, slice, &hints)?;
            } else {
                let names: Vec<String> = m
                    .sections
                    .iter()
                    .map(|s| format!("{},{}", s.segname, s.sectname))
                    .collect();
                self.warn(format!(
                    "at offset {:#x}: the APPLEGPU image has no __compute/__vertex/__fragment section (sections: {})",
                    data.base,
                    if names.is_empty() { "none".to_string() } else { names.join(" ") }
                ));
            }
        }
        Ok(())
    }

    /// A Mach-O whose `__TEXT,__text` holds code named by `LC_SYMTAB`.
    fn code_image(
        &mut self,
        buf: Buf<'_>,
        m: &MachO,
        stage: Stage,
        gpu: Gpu,
        slice: usize,
        hints: &std::rc::Rc<Vec<String>>,
    ) -> Result<()> {
        let Some(sect) = m
            .sections
            .iter()
            .find(|s| s.segname == "__TEXT" && s.sectname == "__text")
        else {
            self.warn(format!(
                "at offset {:#x}: the {stage} image has no __TEXT,__text section; skipped",
                buf.base
            ));
            return Ok(());
        };
        let Some(text) = macho::section_data(buf, sect, "the __text section")? else {
            self.warn(format!(
                "at offset {:#x}: the {stage} image's __text has no file data; skipped",
                buf.abs(sect.header_off)
            ));
            return Ok(());
        };
        let image = self.a.images.len();
        let len = text.len();

        // (offset in __text, symbol), sorted by offset.
        let mut syms: Vec<(u64, String)> = Vec::new();
        if let Some(symbols) = &m.symbols {
            for s in symbols {
                if !s.is_section_symbol()
                    || usize::from(s.n_sect) != sect.index
                    || s.name.is_empty()
                    || s.name.starts_with("ltmp")
                {
                    continue;
                }
                match s.value.checked_sub(sect.addr).filter(|&o| o < len) {
                    Some(o) => syms.push((o, s.name.clone())),
                    None => self.warn(format!(
                        "symbol {} (value {:#x}) lies outside __text ({:#x}..{:#x}); ignored",
                        s.name,
                        s.value,
                        sect.addr,
                        sect.addr.saturating_add(len)
                    )),
                }
            }
        }
        syms.sort_by_key(|(o, _)| *o);
        let has_symbols = !syms.is_empty();
        if !has_symbols {
            let why = if m.symbols.is_some() {
                "its LC_SYMTAB names nothing in __text"
            } else {
                "it has no LC_SYMTAB"
            };
            self.warn(format!(
                "the {stage} image at {:#x}: {why}; treating the whole __text ({len} bytes) as the main body",
                buf.base
            ));
            syms.push((0, "_agc.main".to_string()));
        } else if syms[0].0 > 0 {
            self.warn(format!(
                "the {stage} image at {:#x}: __text bytes 0..{:#x} precede the first symbol and belong to no function",
                buf.base, syms[0].0
            ));
        }
        self.image_hints.push(hints.clone());
        self.a.images.push(Image {
            stage,
            gpu: Some(gpu),
            text: text.data.to_vec(),
            text_file_offset: text.base,
            has_symbols,
            slice,
        });
        // End of each symbol = the next strictly greater offset (symbols at
        // the same offset are aliases), computed back to front in O(n).
        let mut ends = vec![len; syms.len()];
        let mut next = len;
        for k in (0..syms.len()).rev() {
            ends[k] = next;
            if k > 0 && syms[k - 1].0 < syms[k].0 {
                next = syms[k].0;
            }
        }
        for (k, (off, symbol)) in syms.iter().enumerate() {
            let end = ends[k];
            let bytes = &text.data[*off as usize..end as usize];
            let (part, kernel) = names::classify(symbol);
            let (name, pending) = match (part, kernel) {
                (Part::Helper, _) => (names::helper_name(symbol), false),
                (_, Some(k)) => (k, false),
                (_, None) => ("main".to_string(), true),
            };
            self.pending.push(pending);
            self.a.functions.push(Function {
                stage,
                symbol: symbol.clone(),
                name,
                part,
                text_offset: *off,
                size: end - off,
                code_size: trim_trap_padding(bytes) as u64,
                gpu: Some(gpu),
                image,
                file_offset: text.abs(*off),
            });
        }
        Ok(())
    }

    fn finish(mut self) -> Result<Archive> {
        self.name_unprefixed();
        let a = &self.a;
        if a.functions.is_empty() {
            if let Some(gpu) = self.unsupported.first() {
                if self.opts.keep_undecodable {
                    return Ok(self.a);
                }
                return Err(ContainerError::UnsupportedGpu {
                    gpu: *gpu,
                    supported: self.a.supported.clone(),
                });
            }
            if a.slices
                .iter()
                .any(|s| matches!(s.kind, SliceKind::Air { .. }))
            {
                return Err(ContainerError::AirOnly);
            }
            return Err(ContainerError::NoNativeCode {
                found: summarize(&a.slices),
            });
        }
        Ok(self.a)
    }

    /// Gives unprefixed `_agc.main` kernels a name from a metallib when that
    /// is unambiguous: the image's own `__metallib` section, else the AIR
    /// slices, when there is one such kernel per slice.
    fn name_unprefixed(&mut self) {
        // Only "exactly one name" matters: keep at most two distinct ones.
        let mut air: Vec<String> = Vec::new();
        for s in &self.a.slices {
            if let SliceKind::Air { names } = &s.kind {
                for n in names {
                    if air.len() < 2 && !air.contains(n) {
                        air.push(n.clone());
                    }
                }
            }
        }
        let mut unnamed_images_per_slice = HashMap::new();
        let mut seen = HashSet::new();
        for (f, &p) in self.a.functions.iter().zip(&self.pending) {
            if p && seen.insert(f.image) {
                let slice = self.a.images.get(f.image).map_or(0, |i| i.slice);
                *unnamed_images_per_slice.entry(slice).or_insert(0usize) += 1;
            }
        }
        for (f, &p) in self.a.functions.iter_mut().zip(&self.pending) {
            if !p {
                continue;
            }
            let hints = match self.image_hints.get(f.image) {
                Some(h) => &h[..],
                None => &[],
            };
            let slice = self.a.images.get(f.image).map_or(0, |i| i.slice);
            let alone = unnamed_images_per_slice.get(&slice) == Some(&1);
            let name = match (hints, air.as_slice()) {
                ([one], _) => Some(one),
                ([], [one]) if alone => Some(one),
                _ => None,
            };
            if let Some(n) = name {
                f.name = n.clone();
            }
        }
    }
}

fn cputype_name(cputype: u32) -> String {
    match cputype {
        CPU_TYPE_APPLEGPU => "APPLEGPU".into(),
        CPU_TYPE_AMDGPU => "AMDGPU".into(),
        CPU_TYPE_INTELGPU => "INTELGPU".into(),
        CPU_TYPE_AIR64 => "AIR64".into(),
        other => format!("cputype {other:#x}"),
    }
}

fn summarize(slices: &[Slice]) -> String {
    if slices.is_empty() {
        return "no slices".into();
    }
    let parts: Vec<String> = slices
        .iter()
        .map(|s| match &s.kind {
            SliceKind::AppleGpu(g) => format!("an APPLEGPU {g} slice without shader code sections"),
            SliceKind::Air { .. } => "an AIR64 slice".into(),
            SliceKind::AmdGpu => "an AMDGPU slice".into(),
            SliceKind::IntelGpu => "an INTELGPU slice".into(),
            SliceKind::Unknown => format!("a slice of unknown cputype {:#x}", s.cputype),
        })
        .collect();
    parts.join(", ")
}
