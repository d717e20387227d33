//! Just enough of 64-bit little-endian Mach-O: header, load commands,
//! `LC_SEGMENT_64` sections and `LC_SYMTAB` (`nlist_64` + string table).
//!
//! Layouts from Apple's `<mach-o/loader.h>` and `<mach-o/nlist.h>`
//! (mach_header_64 = 32 bytes, segment_command_64 = 72, section_64 = 80,
//! symtab_command = 24, nlist_64 = 16).

use crate::buf::{Buf, Result};
use crate::error::ContainerError;

/// `MH_MAGIC_64` as it appears in the file (little-endian): `cf fa ed fe`.
pub const MH_MAGIC_64_BYTES: [u8; 4] = [0xcf, 0xfa, 0xed, 0xfe];
pub const LC_SYMTAB: u32 = 0x2;
pub const LC_SEGMENT_64: u32 = 0x19;
const HEADER_SIZE: u64 = 32;
const SEGMENT_SIZE: u64 = 72;
const SECTION_SIZE: u64 = 80;
const NLIST_SIZE: u64 = 16;
/// `N_STAB` bits of `n_type`: debugger entries, not symbols.
const N_STAB: u8 = 0xe0;
/// `N_TYPE` mask and its `N_SECT` value (defined in section `n_sect`).
const N_TYPE: u8 = 0x0e;
pub const N_SECT: u8 = 0x0e;

#[derive(Clone, Debug)]
pub(crate) struct Section {
    pub segname: String,
    pub sectname: String,
    pub addr: u64,
    pub size: u64,
    pub offset: u32,
    pub flags: u32,
    /// 1-based index over all sections of the image (what `n_sect` counts).
    pub index: usize,
    /// Offset of this section's header in the image (for messages).
    pub header_off: u64,
}

impl Section {
    fn is_zerofill(&self) -> bool {
        // S_ZEROFILL, S_GB_ZEROFILL, S_THREAD_LOCAL_ZEROFILL.
        matches!(self.flags & 0xff, 0x01 | 0x0c | 0x12)
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Symbol {
    pub name: String,
    pub n_type: u8,
    pub n_sect: u8,
    pub value: u64,
}

impl Symbol {
    /// A symbol defined in a section (not a debugger entry, not undefined).
    pub fn is_section_symbol(&self) -> bool {
        self.n_type & N_STAB == 0 && self.n_type & N_TYPE == N_SECT
    }
}

pub(crate) struct MachO {
    pub cputype: u32,
    pub cpusubtype: u32,
    pub sections: Vec<Section>,
    /// `None` when the image has no `LC_SYMTAB`.
    pub symbols: Option<Vec<Symbol>>,
}

/// Parses the Mach-O image that fills `buf`.
pub(crate) fn parse(buf: Buf<'_>, warnings: &mut Vec<String>) -> Result<MachO> {
    let magic = buf.bytes(0, 4, "Mach-O magic")?;
    if magic != MH_MAGIC_64_BYTES {
        let what = match magic {
            [0xce, 0xfa, 0xed, 0xfe] => "a 32-bit Mach-O (feedface), which Metal does not produce",
            [0xfe, 0xed, 0xfa, 0xcf] | [0xfe, 0xed, 0xfa, 0xce] => "a big-endian Mach-O",
            _ => "no Mach-O magic",
        };
        return Err(ContainerError::at(
            buf.abs(0),
            format!(
                "expected a 64-bit little-endian Mach-O (cf fa ed fe) at the start of {}, found {} ({:02x} {:02x} {:02x} {:02x})",
                buf.what, what, magic[0], magic[1], magic[2], magic[3]
            ),
        ));
    }
    buf.bytes(0, HEADER_SIZE, "the Mach-O header (32 bytes)")?;
    let cputype = buf.u32le(4, "Mach-O cputype")?;
    let cpusubtype = buf.u32le(8, "Mach-O cpusubtype")?;
    let ncmds = buf.u32le(16, "Mach-O ncmds")?;
    let sizeofcmds = u64::from(buf.u32le(20, "Mach-O sizeofcmds")?);
    let cmds_end = HEADER_SIZE + sizeofcmds;
    if cmds_end > buf.len() {
        return Err(ContainerError::at(
            buf.abs(20),
            format!(
                "Mach-O load commands (sizeofcmds {sizeofcmds}) run past the end of {} ({} bytes left after the header)",
                buf.what,
                buf.len().saturating_sub(HEADER_SIZE)
            ),
        ));
    }

    let mut sections = Vec::new();
    let mut symbols = None;
    let mut off = HEADER_SIZE;
    // Each command is at least 8 bytes and must fit in sizeofcmds, so this
    // loop ends after at most sizeofcmds / 8 rounds whatever ncmds says.
    for i in 0..ncmds {
        if off + 8 > cmds_end {
            return Err(ContainerError::at(
                buf.abs(off),
                format!(
                    "Mach-O load command {i} of {ncmds} starts past the end of the load commands (sizeofcmds {sizeofcmds}, {} bytes left)",
                    cmds_end - off
                ),
            ));
        }
        let cmd = buf.u32le(off, "load command")?;
        let cmdsize = u64::from(buf.u32le(off + 4, "load command size")?);
        if cmdsize < 8 {
            return Err(ContainerError::at(
                buf.abs(off + 4),
                format!("Mach-O load command {i} has cmdsize {cmdsize}, expected at least 8"),
            ));
        }
        if off + cmdsize > cmds_end {
            return Err(ContainerError::at(
                buf.abs(off),
                format!(
                    "Mach-O load command {i} runs past the end of the load commands (cmdsize {cmdsize}, {} bytes left)",
                    cmds_end - off
                ),
            ));
        }
        match cmd {
            LC_SEGMENT_64 => parse_segment(buf, off, cmdsize, i, &mut sections)?,
            LC_SYMTAB => {
                if symbols.is_some() {
                    warnings.push(format!(
                        "at offset {:#x}: second LC_SYMTAB in {} ignored",
                        buf.abs(off),
                        buf.what
                    ));
                } else {
                    symbols = Some(parse_symtab(buf, off, cmdsize, warnings)?);
                }
            }
            _ => {}
        }
        off += cmdsize;
    }
    Ok(MachO {
        cputype,
        cpusubtype,
        sections,
        symbols,
    })
}

fn parse_segment(
    buf: Buf<'_>,
    off: u64,
    cmdsize: u64,
    i: u32,
    sections: &mut Vec<Section>,
) -> Result<()> {
    if cmdsize < SEGMENT_SIZE {
        return Err(ContainerError::at(
            buf.abs(off),
            format!("LC_SEGMENT_64 (load command {i}) has cmdsize {cmdsize}, expected at least {SEGMENT_SIZE}"),
        ));
    }
    let nsects = u64::from(buf.u32le(off + 64, "LC_SEGMENT_64 nsects")?);
    let need = SEGMENT_SIZE + nsects * SECTION_SIZE;
    if need > cmdsize {
        return Err(ContainerError::at(
            buf.abs(off + 64),
            format!(
                "LC_SEGMENT_64 (load command {i}) lists {nsects} sections ({need} bytes of headers) but its cmdsize is {cmdsize}"
            ),
        ));
    }
    for s in 0..nsects {
        let h = off + SEGMENT_SIZE + s * SECTION_SIZE;
        sections.push(Section {
            sectname: buf.name16(h, "section name")?,
            segname: buf.name16(h + 16, "section segment name")?,
            addr: buf.u64le(h + 32, "section addr")?,
            size: buf.u64le(h + 40, "section size")?,
            offset: buf.u32le(h + 48, "section offset")?,
            flags: buf.u32le(h + 64, "section flags")?,
            index: sections.len() + 1,
            header_off: h,
        });
    }
    Ok(())
}

fn parse_symtab(
    buf: Buf<'_>,
    off: u64,
    cmdsize: u64,
    warnings: &mut Vec<String>,
) -> Result<Vec<Symbol>> {
    if cmdsize < 24 {
        return Err(ContainerError::at(
            buf.abs(off),
            format!("LC_SYMTAB has cmdsize {cmdsize}, expected 24"),
        ));
    }
    let symoff = u64::from(buf.u32le(off + 8, "LC_SYMTAB symoff")?);
    let nsyms = u64::from(buf.u32le(off + 12, "LC_SYMTAB nsyms")?);
    let stroff = u64::from(buf.u32le(off + 16, "LC_SYMTAB stroff")?);
    let strsize = u64::from(buf.u32le(off + 20, "LC_SYMTAB strsize")?);
    // Check both tables against the input before allocating anything.
    let table = buf.bytes(
        symoff,
        nsyms * NLIST_SIZE,
        &format!("the symbol table ({nsyms} nlist_64 entries at symoff {symoff:#x})"),
    )?;
    let strings = buf.bytes(
        stroff,
        strsize,
        &format!("the string table ({strsize} bytes at stroff {stroff:#x})"),
    )?;
    let mut out = Vec::with_capacity(nsyms as usize);
    for (k, e) in table.chunks_exact(NLIST_SIZE as usize).enumerate() {
        let strx = u32::from_le_bytes([e[0], e[1], e[2], e[3]]) as usize;
        let mut v = [0u8; 8];
        v.copy_from_slice(&e[8..16]);
        let name = match strings.get(strx..) {
            Some(rest) => {
                let end = rest.iter().position(|&c| c == 0).unwrap_or(rest.len());
                String::from_utf8_lossy(&rest[..end]).into_owned()
            }
            None => {
                warnings.push(format!(
                    "at offset {:#x}: symbol {k} has string index {strx} past the string table ({strsize} bytes); ignored",
                    buf.abs(symoff + k as u64 * NLIST_SIZE)
                ));
                String::new()
            }
        };
        out.push(Symbol {
            name,
            n_type: e[4],
            n_sect: e[5],
            value: u64::from_le_bytes(v),
        });
    }
    Ok(out)
}

/// The file bytes of `sect` (None for zero-fill sections).
pub(crate) fn section_data<'a>(
    buf: Buf<'a>,
    sect: &Section,
    what: &'a str,
) -> Result<Option<Buf<'a>>> {
    if sect.is_zerofill() {
        return Ok(None);
    }
    let item = format!(
        "section {},{} ({} bytes at offset {:#x}, header at {:#x})",
        sect.segname,
        sect.sectname,
        sect.size,
        sect.offset,
        buf.abs(sect.header_off)
    );
    buf.sub(u64::from(sect.offset), sect.size, &item, what)
        .map(Some)
}
