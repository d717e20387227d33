//! Apple GPU names: the APPLEGPU cpusubtype of a slice, the `applegpu_*`
//! architecture names of Apple's tools and the chip family: the GPUs'
//! identity. Which GPUs' code decodes is not known here: the caller says it
//! ([`Decodes`], from the profiler's GPU models).
//!
//! Every row cites its source (see `shared/reference/gpu-targets.md` and
//! `archive-format.md`):
//! - [file] Apple's open-source `file(1)` Mach-O tables: cpusubtypes of
//!   `g13g` = 322, `g13s` = 530, `g13d` = 594.
//! - [fmt] the project's archive-format notes (same tables, more rows):
//!   G13P 290, G13C 562; G14P 370, G14G 402, G14S 434, G14D 498; G15P 610,
//!   G15G 275, G15S 419; G16P 435.
//! - [lipo] Apple's metal-lipo(1) example (macOS slices)
//!   `applegpu_g13g g13s g13d g14g g14s g14d g15g g15s`; [tc] metal-toolchain(7)
//!   adds `g13c`, `g13p`, `g14p`, `g15p`; [community] user reports add `g15d`,
//!   `g16g`, `g16s`, `g17g`, `g17s`, `g17p`, `g18p`.
//! - Families: Mesa `agx_device.c` names G13 = M1 and G14 = M2 (and gives G14
//!   the G13 shader library: one ISA); dougallj/applegpu issue #62 names
//!   M3 = G15 and M4 = G16; a community report names G17 = M5.
//! - `…P` parts are iPhone/iPad SoCs (metal-toolchain(7)); which phone chip
//!   each one is differs between sources, so none is named here. Which Mac
//!   chip each letter (`g`, `s`, `c`, `d`) names is not settled either (one
//!   report has an M1 Pro producing `g13g` and an M1 Max `g13s`), so only the
//!   family is given.

use std::fmt;

/// cputype of a slice holding Apple GPU machine code.
pub const CPU_TYPE_APPLEGPU: u32 = 0x0100_0013;
/// cputype of an AMD GPU slice (Intel Macs).
pub const CPU_TYPE_AMDGPU: u32 = 0x0100_0014;
/// cputype of an Intel GPU slice (Intel Macs).
pub const CPU_TYPE_INTELGPU: u32 = 0x0100_0015;
/// cputype of an AIR (LLVM bitcode) slice; its payload is a bare `MTLB` metallib.
pub const CPU_TYPE_AIR64: u32 = 0x0100_0017;

/// Label used for `…P` parts instead of a chip name.
pub const PHONE_FAMILY: &str = "iPhone/iPad SoC";

/// One known Apple GPU architecture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuRow {
    /// Upper-case name, e.g. "G14G" (the tools spell it `applegpu_g14g`).
    pub name: &'static str,
    /// The Mach-O cpusubtype, where a source gives it.
    pub cpusubtype: Option<u32>,
    /// AGX generation (13 = M1 family, 14 = M2, …).
    pub generation: u8,
    /// "M1" … for Mac parts, [`PHONE_FAMILY`] for `…P` parts.
    pub family: &'static str,
    /// Where the row comes from (see the module comment).
    pub source: &'static str,
}

const fn row(
    name: &'static str,
    cpusubtype: Option<u32>,
    generation: u8,
    family: &'static str,
    source: &'static str,
) -> GpuRow {
    GpuRow {
        name,
        cpusubtype,
        generation,
        family,
        source,
    }
}

/// Every architecture name seen in the sources, oldest generation first.
pub const GPUS: &[GpuRow] = &[
    row("G13G", Some(322), 13, "M1", "file, lipo"),
    row("G13S", Some(530), 13, "M1", "file, lipo"),
    row("G13C", Some(562), 13, "M1", "fmt, tc"),
    row("G13D", Some(594), 13, "M1", "file, lipo"),
    row("G13P", Some(290), 13, PHONE_FAMILY, "fmt, tc"),
    row("G14G", Some(402), 14, "M2", "fmt, lipo"),
    row("G14S", Some(434), 14, "M2", "fmt, lipo"),
    row("G14D", Some(498), 14, "M2", "fmt, lipo"),
    row("G14P", Some(370), 14, PHONE_FAMILY, "fmt, tc"),
    row("G15G", Some(275), 15, "M3", "fmt, lipo"),
    row("G15S", Some(419), 15, "M3", "fmt, lipo"),
    row("G15D", None, 15, "M3", "community"),
    row("G15P", Some(610), 15, PHONE_FAMILY, "fmt, tc"),
    row("G16G", None, 16, "M4", "community"),
    row("G16S", None, 16, "M4", "community"),
    row("G16P", Some(435), 16, PHONE_FAMILY, "fmt"),
    row("G17G", None, 17, "M5", "community"),
    row("G17S", None, 17, "M5", "community"),
    row("G17P", None, 17, PHONE_FAMILY, "community"),
    row("G18P", None, 18, PHONE_FAMILY, "community"),
];

/// Which GPUs' code the caller decodes: a predicate over the rows of
/// [`GPUS`]. The container owns the GPUs' identity and the archive format;
/// which code decodes is the caller's knowledge (the profiler's GPU models,
/// `agx_analysis::gpu::decodes`), passed in with
/// [`ReadOptions`](crate::ReadOptions).
pub type Decodes = fn(&GpuRow) -> bool;

impl GpuRow {
    /// Whether this is a phone/tablet part (`…P`, [`PHONE_FAMILY`]).
    pub fn is_phone(&self) -> bool {
        self.family == PHONE_FAMILY
    }

    /// The tools' architecture name, e.g. `applegpu_g14g`.
    pub fn arch(&self) -> String {
        format!("applegpu_{}", self.name.to_ascii_lowercase())
    }
}

/// The row for a name such as `g14g`, `G14G` or `applegpu_g14g` (case-insensitive).
pub fn gpu_row(name: &str) -> Option<&'static GpuRow> {
    let n = name.trim();
    let n = if n.len() > 9 && n[..9].eq_ignore_ascii_case("applegpu_") {
        &n[9..]
    } else {
        n
    };
    GPUS.iter().find(|r| r.name.eq_ignore_ascii_case(n))
}

/// Names of the Mac GPUs whose code `decodes`, e.g. "G13G, G13S, …".
pub fn decodable_names(decodes: Decodes) -> Vec<&'static str> {
    GPUS.iter().filter(|r| decodes(r)).map(|r| r.name).collect()
}

/// The Mac generations whose code a caller decodes, oldest first (the
/// generations of the non-phone rows of [`GPUS`] its predicate accepts):
/// what the reader's messages name ("decoding supports G13 and G14").
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Supported(pub Vec<u8>);

impl Supported {
    /// The generations `decodes` accepts a Mac part of.
    pub fn of(decodes: Decodes) -> Supported {
        let mut g: Vec<u8> = GPUS
            .iter()
            .filter(|r| !r.is_phone() && decodes(r))
            .map(|r| r.generation)
            .collect();
        g.sort_unstable();
        g.dedup();
        Supported(g)
    }

    /// "G13 and G14".
    pub fn generations(&self) -> String {
        and_list(self.0.iter().map(|g| format!("G{g}")))
    }

    /// "G13 (M1) and G14 (M2)": each generation with its Mac family.
    pub fn with_families(&self) -> String {
        and_list(self.0.iter().map(|&g| {
            let family = GPUS
                .iter()
                .find(|r| r.generation == g && !r.is_phone())
                .map_or("unknown", |r| r.family);
            format!("G{g} ({family})")
        }))
    }
}

/// "a", "a and b", "a, b and c"; "no GPU" when empty.
fn and_list(items: impl Iterator<Item = String>) -> String {
    let items: Vec<String> = items.collect();
    match items.split_last() {
        None => "no GPU".into(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// The row of an APPLEGPU slice's cpusubtype (its capability bits, the top
/// byte, ignored).
pub(crate) fn row_of(cpusubtype: u32) -> Option<&'static GpuRow> {
    let key = cpusubtype & 0x00ff_ffff;
    GPUS.iter().find(|r| r.cpusubtype == Some(key))
}

/// The GPU a slice of native code was compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Gpu {
    /// The raw cpusubtype from the file (0 for a GPU named on the command line
    /// whose subtype no source gives).
    pub cpusubtype: u32,
    /// e.g. "G13G"; "unknown" when the subtype is not in the table.
    pub name: &'static str,
    /// e.g. "M1", or [`PHONE_FAMILY`]; "unknown" when not in the table.
    pub family: &'static str,
    /// AGX generation; 0 when unknown.
    pub generation: u8,
    /// Whether this is G13 (M1 family) code, the ISA the tables were built on.
    pub is_g13: bool,
}

impl Gpu {
    fn from_row(r: &GpuRow, cpusubtype: u32) -> Gpu {
        Gpu {
            cpusubtype,
            name: r.name,
            family: r.family,
            generation: r.generation,
            is_g13: r.generation == 13 && !r.is_phone(),
        }
    }

    /// Names the GPU of an APPLEGPU slice. The top byte of a Mach-O
    /// cpusubtype holds capability bits (`CPU_SUBTYPE_MASK`), so it is ignored
    /// for the lookup.
    pub fn from_cpusubtype(cpusubtype: u32) -> Gpu {
        match row_of(cpusubtype) {
            Some(r) => Gpu::from_row(r, cpusubtype),
            None => Gpu {
                cpusubtype,
                name: "unknown",
                family: "unknown",
                generation: 0,
                is_g13: false,
            },
        }
    }

    /// A GPU named on the command line (`g14g`, `applegpu_g14g`, any case).
    pub fn from_name(name: &str) -> Option<Gpu> {
        gpu_row(name).map(|r| Gpu::from_row(r, r.cpusubtype.unwrap_or(0)))
    }

    /// The subtype for a GPU name such as "G13G" (case-insensitive).
    pub fn cpusubtype_of(name: &str) -> Option<u32> {
        gpu_row(name).and_then(|r| r.cpusubtype)
    }

    /// "G14G (M2)", "G16P (iPhone/iPad SoC)", or "unknown (APPLEGPU cpusubtype 123)".
    pub fn describe(&self) -> String {
        if self.name == "unknown" {
            format!("unknown (APPLEGPU cpusubtype {})", self.cpusubtype)
        } else {
            format!("{} ({})", self.name, self.family)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The container's tests' own predicate: Mac parts of generations 13
    /// and 14 (what the profiler's models decode today, stated here so the
    /// container is tested alone).
    fn g13_g14(r: &GpuRow) -> bool {
        !r.is_phone() && matches!(r.generation, 13 | 14)
    }

    #[test]
    fn names_are_unique_and_subtypes_too() {
        for (i, a) in GPUS.iter().enumerate() {
            for b in &GPUS[i + 1..] {
                assert_ne!(a.name, b.name);
                if a.cpusubtype.is_some() {
                    assert_ne!(a.cpusubtype, b.cpusubtype, "{} {}", a.name, b.name);
                }
            }
        }
    }

    #[test]
    fn phone_parts_are_not_macs() {
        for r in GPUS.iter().filter(|r| r.name.ends_with('P')) {
            assert_eq!(r.family, PHONE_FAMILY, "{}", r.name);
            assert!(r.is_phone(), "{}", r.name);
        }
        assert!(!gpu_row("g13g").unwrap().is_phone());
        assert_eq!(
            Gpu::from_cpusubtype(435).describe(),
            "G16P (iPhone/iPad SoC)"
        );
    }

    #[test]
    fn lookup_by_name_and_subtype() {
        assert_eq!(gpu_row("applegpu_g14g").unwrap().name, "G14G");
        assert_eq!(gpu_row("g14G").unwrap().cpusubtype, Some(402));
        assert!(gpu_row("g99x").is_none());
        let g = Gpu::from_cpusubtype(402);
        assert_eq!(g.describe(), "G14G (M2)");
        assert!(!g.is_g13);
        assert!(Gpu::from_cpusubtype(322).is_g13);
        assert!(!Gpu::from_cpusubtype(290).is_g13, "G13P is a phone part");
        assert_eq!(Gpu::from_cpusubtype(0x0100_0000 | 402).name, "G14G");
        assert_eq!(Gpu::from_name("G17S").unwrap().cpusubtype, 0);
        assert_eq!(Gpu::cpusubtype_of("applegpu_g15p"), Some(610));
    }

    #[test]
    fn what_decodes_is_the_callers_predicate() {
        assert_eq!(
            decodable_names(g13_g14),
            ["G13G", "G13S", "G13C", "G13D", "G14G", "G14S", "G14D"]
        );
        let s = Supported::of(g13_g14);
        assert_eq!(s, Supported(vec![13, 14]));
        assert_eq!(s.generations(), "G13 and G14");
        assert_eq!(s.with_families(), "G13 (M1) and G14 (M2)");
        // another caller's knowledge: the wording follows the predicate
        let s = Supported::of(|r| r.generation >= 15);
        assert_eq!(s.0, [15, 16, 17], "G18P is a phone part only");
        assert_eq!(s.with_families(), "G15 (M3), G16 (M4) and G17 (M5)");
        assert_eq!(Supported::of(|r| r.name == "G16P").generations(), "no GPU");
        assert_eq!(Supported(vec![13]).with_families(), "G13 (M1)");
    }
}
