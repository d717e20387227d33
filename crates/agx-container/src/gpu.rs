//! Apple GPU names from the APPLEGPU cpusubtype.
//!
//! Table from Apple's open-source `file` Mach-O tables, as collected in
//! `shared/reference/archive-format.md` ("APPLEGPU cpusubtypes name the GPU").

use std::fmt;

/// cputype of a slice holding Apple GPU machine code.
pub const CPU_TYPE_APPLEGPU: u32 = 0x0100_0013;
/// cputype of an AMD GPU slice (Intel Macs).
pub const CPU_TYPE_AMDGPU: u32 = 0x0100_0014;
/// cputype of an Intel GPU slice (Intel Macs).
pub const CPU_TYPE_INTELGPU: u32 = 0x0100_0015;
/// cputype of an AIR (LLVM bitcode) slice; its payload is a bare `MTLB` metallib.
pub const CPU_TYPE_AIR64: u32 = 0x0100_0017;

/// The GPU a slice of native code was compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Gpu {
    /// The raw cpusubtype from the file.
    pub cpusubtype: u32,
    /// e.g. "G13G"; "unknown" when the subtype is not in the table.
    pub name: &'static str,
    /// e.g. "M1"; "unknown" when the subtype is not in the table.
    pub family: &'static str,
    /// Whether this project's decoder (G13 ISA) applies.
    pub is_g13: bool,
}

const TABLE: &[(u32, &str, &str)] = &[
    (290, "G13P", "M1"),
    (322, "G13G", "M1"),
    (530, "G13S", "M1"),
    (562, "G13C", "M1"),
    (594, "G13D", "M1"),
    (370, "G14P", "M2"),
    (402, "G14G", "M2"),
    (434, "G14S", "M2"),
    (498, "G14D", "M2"),
    (610, "G15P", "M3"),
    (275, "G15G", "M3"),
    (419, "G15S", "M3"),
    (435, "G16P", "M4"),
];

impl Gpu {
    /// Names the GPU of an APPLEGPU slice. The top byte of a Mach-O
    /// cpusubtype holds capability bits (`CPU_SUBTYPE_MASK`), so it is ignored
    /// for the lookup.
    pub fn from_cpusubtype(cpusubtype: u32) -> Gpu {
        let key = cpusubtype & 0x00ff_ffff;
        match TABLE.iter().find(|(s, _, _)| *s == key) {
            Some(&(_, name, family)) => Gpu {
                cpusubtype,
                name,
                family,
                is_g13: family == "M1",
            },
            None => Gpu {
                cpusubtype,
                name: "unknown",
                family: "unknown",
                is_g13: false,
            },
        }
    }

    /// The subtype for a GPU name such as "G13G" (case-insensitive).
    pub fn cpusubtype_of(name: &str) -> Option<u32> {
        TABLE
            .iter()
            .find(|(_, n, _)| n.eq_ignore_ascii_case(name))
            .map(|&(s, _, _)| s)
    }

    /// "G16P (M4 family)", or "unknown (APPLEGPU cpusubtype 123)".
    pub fn describe(&self) -> String {
        if self.name == "unknown" {
            format!("unknown (APPLEGPU cpusubtype {})", self.cpusubtype)
        } else {
            format!("{} ({} family)", self.name, self.family)
        }
    }
}

impl fmt::Display for Gpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.name == "unknown" {
            write!(f, "applegpu subtype {}", self.cpusubtype)
        } else {
            f.write_str(self.name)
        }
    }
}
