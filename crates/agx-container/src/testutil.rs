//! Writers for test archives (feature `testutil`, off by default).
//!
//! Builds the layouts `read` understands, from the facts in
//! `shared/reference/archive-format.md`: a 64-bit little-endian Mach-O with
//! one `LC_SEGMENT_64` (all sections in order) and optionally an `LC_SYMTAB`;
//! the Metal fat header with 20-byte big-endian records. The output is meant
//! for tests, not for Metal: section addresses equal file offsets within the
//! image, and [`metallib`] is only a stand-in carrying `NAME` tags.
//!
//! ```
//! use agx_container::testutil::*;
//! use agx_container::Stage;
//! // helper at 0, main at 8, in a G13G compute image inside a fat file.
//! let text = [0x14, 0x02, 0x08, 0x00, 0x08, 0x00, 0x08, 0x00, 0x88, 0x00];
//! let bytes = build_test_archive(
//!     G13G,
//!     Stage::Compute,
//!     &text,
//!     &[("l__Z6helperv", 0), ("_agc.main", 8)],
//! );
//! // the caller says which GPUs' code it decodes: here G13 Macs
//! let decodes = |gpu: &agx_container::GpuRow| gpu.generation == 13 && !gpu.is_phone();
//! let agx_container::Input::Archive(a) = agx_container::read(&bytes, decodes).unwrap() else {
//!     panic!()
//! };
//! assert_eq!(a.functions.len(), 2);
//! ```

use crate::{Stage, CPU_TYPE_AIR64, CPU_TYPE_APPLEGPU};

/// APPLEGPU cpusubtypes, for convenience.
pub const G13G: u32 = 322;
pub const G13S: u32 = 530;
pub const G14G: u32 = 402;
pub const G16P: u32 = 435;
pub const G15G: u32 = 275;

/// `MH_OBJECT`; Apple's archive images use 13 (see the A18 notes), which
/// the reader does not care about.
pub const MH_OBJECT: u32 = 1;

/// One section of a [`MachOWriter`] image.
#[derive(Clone, Debug)]
pub struct SectionSpec {
    pub segname: String,
    pub sectname: String,
    pub data: Vec<u8>,
}

/// One `nlist_64` entry.
#[derive(Clone, Debug)]
pub struct SymbolSpec {
    pub name: String,
    /// `n_type`: 0x0e (`N_SECT`) for a local symbol, 0x0f for a global one.
    pub n_type: u8,
    /// 1-based section index (`n_sect`).
    pub n_sect: u8,
    /// `n_value`: the section's address plus the offset in it. In images
    /// from [`MachOWriter`], a section's address is its offset in the image.
    pub value: u64,
}

/// A minimal 64-bit little-endian Mach-O writer.
#[derive(Clone, Debug)]
pub struct MachOWriter {
    pub cputype: u32,
    pub cpusubtype: u32,
    pub filetype: u32,
    pub sections: Vec<SectionSpec>,
    /// `None`: no `LC_SYMTAB` at all.
    pub symbols: Option<Vec<SymbolSpec>>,
}

impl MachOWriter {
    pub fn new(cputype: u32, cpusubtype: u32) -> Self {
        MachOWriter {
            cputype,
            cpusubtype,
            filetype: MH_OBJECT,
            sections: Vec::new(),
            symbols: None,
        }
    }

    /// Adds a section; returns its 1-based index.
    pub fn section(&mut self, segname: &str, sectname: &str, data: Vec<u8>) -> u8 {
        self.sections.push(SectionSpec {
            segname: segname.into(),
            sectname: sectname.into(),
            data,
        });
        self.sections.len() as u8
    }

    /// The address (= image offset) a section will get, for symbol values.
    pub fn section_addr(&self, index: u8) -> u64 {
        self.layout().0[usize::from(index) - 1]
    }

    fn header_len(&self) -> usize {
        let seg = 72 + 80 * self.sections.len();
        32 + seg + if self.symbols.is_some() { 24 } else { 0 }
    }

    /// Offsets of each section's data, and the end of the data.
    fn layout(&self) -> (Vec<u64>, usize) {
        let mut off = align(self.header_len(), 16);
        let mut offs = Vec::new();
        for s in &self.sections {
            offs.push(off as u64);
            off = align(off + s.data.len(), 16);
        }
        (offs, off)
    }

    /// Serializes the image.
    pub fn build(&self) -> Vec<u8> {
        let (offs, data_end) = self.layout();
        let syms = self.symbols.as_deref().unwrap_or(&[]);
        let mut strtab = vec![0u8]; // index 0 = empty name
        let mut strx = Vec::new();
        for s in syms {
            strx.push(strtab.len() as u32);
            strtab.extend_from_slice(s.name.as_bytes());
            strtab.push(0);
        }
        let symoff = data_end;
        let stroff = symoff + 16 * syms.len();

        let ncmds = 1 + u32::from(self.symbols.is_some());
        let sizeofcmds = (self.header_len() - 32) as u32;
        let mut o = Vec::new();
        for v in [
            0xfeed_facf,
            self.cputype,
            self.cpusubtype,
            self.filetype,
            ncmds,
            sizeofcmds,
            0,
            0,
        ] {
            o.extend_from_slice(&v.to_le_bytes());
        }
        // LC_SEGMENT_64 "__TEXT" holding every section.
        let segsize = (data_end - offs.first().map_or(data_end as u64, |&x| x) as usize) as u64;
        let segoff = offs.first().copied().unwrap_or(data_end as u64);
        o.extend_from_slice(&0x19u32.to_le_bytes());
        o.extend_from_slice(&((72 + 80 * self.sections.len()) as u32).to_le_bytes());
        o.extend_from_slice(&name16("__TEXT"));
        for v in [segoff, segsize, segoff, segsize] {
            o.extend_from_slice(&v.to_le_bytes()); // vmaddr, vmsize, fileoff, filesize
        }
        for v in [5u32, 5, self.sections.len() as u32, 0] {
            o.extend_from_slice(&v.to_le_bytes()); // maxprot, initprot, nsects, flags
        }
        for (s, &off) in self.sections.iter().zip(&offs) {
            o.extend_from_slice(&name16(&s.sectname));
            o.extend_from_slice(&name16(&s.segname));
            o.extend_from_slice(&off.to_le_bytes()); // addr
            o.extend_from_slice(&(s.data.len() as u64).to_le_bytes());
            o.extend_from_slice(&(off as u32).to_le_bytes());
            let flags: u32 = if s.sectname == "__text" {
                0x8000_0400 // S_ATTR_PURE_INSTRUCTIONS | S_ATTR_SOME_INSTRUCTIONS
            } else {
                0
            };
            for v in [4u32, 0, 0, flags, 0, 0, 0] {
                o.extend_from_slice(&v.to_le_bytes()); // align, reloff, nreloc, flags, reserved1-3
            }
        }
        if self.symbols.is_some() {
            for v in [
                0x2u32,
                24,
                symoff as u32,
                syms.len() as u32,
                stroff as u32,
                strtab.len() as u32,
            ] {
                o.extend_from_slice(&v.to_le_bytes());
            }
        }
        for (s, &off) in self.sections.iter().zip(&offs) {
            o.resize(off as usize, 0);
            o.extend_from_slice(&s.data);
        }
        o.resize(data_end, 0);
        for (s, x) in syms.iter().zip(&strx) {
            o.extend_from_slice(&x.to_le_bytes());
            o.push(s.n_type);
            o.push(s.n_sect);
            o.extend_from_slice(&0u16.to_le_bytes());
            o.extend_from_slice(&s.value.to_le_bytes());
        }
        o.extend_from_slice(&strtab);
        o
    }
}

fn align(x: usize, a: usize) -> usize {
    x.div_ceil(a) * a
}

fn name16(s: &str) -> [u8; 16] {
    let mut b = [0u8; 16];
    let n = s.len().min(16);
    b[..n].copy_from_slice(&s.as_bytes()[..n]);
    b
}

/// A nested code image (what `__TEXT,__compute` holds): `__TEXT,__text` =
/// `text`, and an `LC_SYMTAB` with `(symbol, offset in __text)` pairs, or no
/// `LC_SYMTAB` at all when `symbols` is `None`. Symbols starting with `l`
/// are written as local, others as external.
pub fn code_image(text: &[u8], symbols: Option<&[(&str, u64)]>) -> Vec<u8> {
    let mut w = MachOWriter::new(CPU_TYPE_APPLEGPU, G13G);
    let idx = w.section("__TEXT", "__text", text.to_vec());
    if let Some(syms) = symbols {
        w.symbols = Some(Vec::new());
        let base = w.section_addr(idx);
        w.symbols = Some(
            syms.iter()
                .map(|&(name, off)| SymbolSpec {
                    name: name.into(),
                    n_type: if name.starts_with('l') { 0x0e } else { 0x0f },
                    n_sect: idx,
                    value: base + off,
                })
                .collect(),
        );
    }
    w.build()
}

/// An APPLEGPU image: one `__TEXT,<section>` per entry (e.g. `__compute`
/// with a [`code_image`], `__metallib` with a [`metallib`]).
pub fn gpu_image(cpusubtype: u32, sections: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut w = MachOWriter::new(CPU_TYPE_APPLEGPU, cpusubtype);
    w.filetype = 13; // as in the A18 example
    for (name, data) in sections {
        w.section("__TEXT", name, data.clone());
    }
    w.build()
}

/// An APPLEGPU image with one stage section per entry.
pub fn gpu_image_stages(cpusubtype: u32, stages: &[(Stage, Vec<u8>)]) -> Vec<u8> {
    let secs: Vec<(&str, Vec<u8>)> = stages
        .iter()
        .map(|(s, d)| (s.section_name(), d.clone()))
        .collect();
    gpu_image(cpusubtype, &secs)
}

/// A Metal fat file: `cb fe ba be`, nfat_arch, 20-byte big-endian records
/// `(cputype, cpusubtype, offset, size, align)`, then each slice aligned to
/// 16 bytes. With `swapped`, the magic and every field are little-endian
/// (`be ba fe cb`).
pub fn fat(slices: &[(u32, u32, Vec<u8>)], swapped: bool) -> Vec<u8> {
    let put = |o: &mut Vec<u8>, v: u32| {
        if swapped {
            o.extend_from_slice(&v.to_le_bytes())
        } else {
            o.extend_from_slice(&v.to_be_bytes())
        }
    };
    let mut o = Vec::new();
    put(&mut o, 0xcafe_babe_u32 ^ 0x0100_0000); // 0xcbfebabe
    put(&mut o, slices.len() as u32);
    let mut off = align(8 + 20 * slices.len(), 16);
    let mut offs = Vec::new();
    for (cputype, sub, data) in slices {
        put(&mut o, *cputype);
        put(&mut o, *sub);
        put(&mut o, off as u32);
        put(&mut o, data.len() as u32);
        put(&mut o, 4); // align 2^4
        offs.push(off);
        off = align(off + data.len(), 16);
    }
    for ((_, _, data), off) in slices.iter().zip(offs) {
        o.resize(off, 0);
        o.extend_from_slice(data);
    }
    o
}

/// A stand-in for an AIR metallib: the `MTLB` magic, padding, and one
/// function-list-style `NAME` tag per name (u16 LE size, NUL-terminated).
/// Not a loadable metallib.
pub fn metallib(names: &[&str]) -> Vec<u8> {
    let mut o = b"MTLB".to_vec();
    o.resize(88, 0);
    o.extend_from_slice(&(names.len() as u32).to_le_bytes());
    for n in names {
        o.extend_from_slice(b"NAME");
        o.extend_from_slice(&((n.len() + 1) as u16).to_le_bytes());
        o.extend_from_slice(n.as_bytes());
        o.push(0);
        o.extend_from_slice(b"ENDT");
    }
    o
}

/// `(CPU_TYPE_AIR64, 1, metallib(names))`, a fat slice entry.
pub fn air_slice(names: &[&str]) -> (u32, u32, Vec<u8>) {
    (CPU_TYPE_AIR64, 10, metallib(names))
}

/// The common case: a fat file with one APPLEGPU slice for `cpusubtype`
/// whose `stage` section holds `text` named by `symbols`
/// (`(symbol, offset in text)`).
pub fn build_test_archive(
    cpusubtype: u32,
    stage: Stage,
    text: &[u8],
    symbols: &[(&str, u64)],
) -> Vec<u8> {
    let image = gpu_image_stages(cpusubtype, &[(stage, code_image(text, Some(symbols)))]);
    fat(&[(CPU_TYPE_APPLEGPU, cpusubtype, image)], false)
}

/// Lays functions out in a `__text` section: each `(symbol, code)` starts at
/// the next multiple of `align` (at least 2) after the previous one, the gaps
/// filled with `trap` halfwords (`08 00`) as the Metal compiler does. Returns
/// the section bytes and the symbol table for [`code_image`].
pub fn layout_text(functions: &[(&str, &[u8])], align: usize) -> (Vec<u8>, Vec<(String, u64)>) {
    let align = align.max(2);
    let mut text = Vec::new();
    let mut syms = Vec::new();
    for (name, code) in functions {
        pad_traps(&mut text, align);
        syms.push((name.to_string(), text.len() as u64));
        text.extend_from_slice(code);
    }
    pad_traps(&mut text, align);
    (text, syms)
}

/// Places `code` at the given offsets (gaps trap-filled); offsets must
/// increase and not overlap.
pub fn place_text(functions: &[(&str, u64, &[u8])]) -> (Vec<u8>, Vec<(String, u64)>) {
    let mut text = Vec::new();
    let mut syms = Vec::new();
    for (name, off, code) in functions {
        while (text.len() as u64) < *off {
            text.push(if text.len() % 2 == 0 { 0x08 } else { 0x00 });
        }
        syms.push((name.to_string(), text.len() as u64));
        text.extend_from_slice(code);
    }
    pad_traps(&mut text, 16);
    (text, syms)
}

fn pad_traps(text: &mut Vec<u8>, align: usize) {
    if text.len() % 2 == 1 {
        text.push(0);
    }
    while text.len() % align != 0 {
        text.extend_from_slice(&[0x08, 0x00]);
    }
}

/// Borrowing view of owned symbol pairs, for [`code_image`].
pub fn sym_refs(syms: &[(String, u64)]) -> Vec<(&str, u64)> {
    syms.iter().map(|(n, o)| (n.as_str(), *o)).collect()
}
