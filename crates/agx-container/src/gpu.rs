//! Apple GPU names: the APPLEGPU cpusubtype of a slice, the `applegpu_*`
//! architecture names of Apple's tools, the chip family, and whether this
//! project's decoder applies.
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

/// Mac generations whose code this project decodes and profiles with a
/// timing model (G13 and G14, which Mesa compiles with the same backend and
/// ISA): derived from the GPU models
/// ([`agx_analysis::gpu::timed_generations`]), not a second list.
pub fn decodable_generations() -> Vec<u8> {
    agx_analysis::gpu::timed_generations()
}

impl GpuRow {
    /// The GPU model of this GPU's code, if one decodes it (an entry of
    /// [`agx_analysis::gpu::GPU_MODELS`]).
    pub fn model(&self) -> Option<&'static agx_analysis::gpu::GpuModel> {
        agx_analysis::gpu::model_for_gpu(self.generation, self.name, self.family == PHONE_FAMILY)
    }

    /// Whether the profiler's decoder and timing model apply to code for
    /// this GPU (a timed model; see [`GpuRow::model`] for every model).
    pub fn decodable(&self) -> bool {
        self.model().is_some_and(|m| m.timed())
    }

    /// The instruction-set family of this GPU's code, if one is decoded
    /// here (its model's).
    pub fn isa(&self) -> Option<&'static agx_isa::isa::Isa> {
        self.model().map(|m| m.isa)
    }

    /// Why this GPU's code is refused when it is known to be an encoding
    /// no decoder here reads (M5), one line.
    pub fn refusal(&self) -> Option<&'static str> {
        agx_isa::isa::refusal(self.generation, self.family == PHONE_FAMILY)
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

/// Names of the decodable Mac GPUs, e.g. "G13G, G13S, …".
pub fn decodable_names() -> Vec<&'static str> {
    GPUS.iter()
        .filter(|r| r.decodable())
        .map(|r| r.name)
        .collect()
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
    /// Whether this project's decoder applies (G13 and G14 Mac parts).
    pub decodable: bool,
    /// The instruction-set family of its code when one is decoded here
    /// (G13 for G13/G14 Mac parts, Apple9 for G15/G16 Macs and G17P).
    pub isa: Option<agx_isa::isa::Family>,
}

impl Gpu {
    fn from_row(r: &GpuRow, cpusubtype: u32) -> Gpu {
        Gpu {
            cpusubtype,
            name: r.name,
            family: r.family,
            generation: r.generation,
            is_g13: r.generation == 13 && r.family != PHONE_FAMILY,
            decodable: r.decodable(),
            isa: r.isa().map(|i| i.family),
        }
    }

    /// Names the GPU of an APPLEGPU slice. The top byte of a Mach-O
    /// cpusubtype holds capability bits (`CPU_SUBTYPE_MASK`), so it is ignored
    /// for the lookup.
    pub fn from_cpusubtype(cpusubtype: u32) -> Gpu {
        let key = cpusubtype & 0x00ff_ffff;
        match GPUS.iter().find(|r| r.cpusubtype == Some(key)) {
            Some(r) => Gpu::from_row(r, cpusubtype),
            None => Gpu {
                cpusubtype,
                name: "unknown",
                family: "unknown",
                generation: 0,
                is_g13: false,
                decodable: false,
                isa: None,
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
            assert!(!r.decodable(), "{}", r.name);
        }
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
        assert!(g.decodable && !g.is_g13);
        assert!(Gpu::from_cpusubtype(322).is_g13);
        assert!(!Gpu::from_name("g16g").unwrap().decodable);
        use agx_isa::isa::Family;
        assert_eq!(Gpu::from_name("g16g").unwrap().isa, Some(Family::Apple9));
        assert_eq!(Gpu::from_name("g15s").unwrap().isa, Some(Family::Apple9));
        assert_eq!(Gpu::from_name("g17p").unwrap().isa, Some(Family::Apple9));
        assert_eq!(Gpu::from_name("g14g").unwrap().isa, Some(Family::G13));
        assert_eq!(Gpu::from_name("g17g").unwrap().isa, None);
        assert!(gpu_row("g17s").unwrap().refusal().unwrap().contains("M5"));
        assert_eq!(decodable_generations(), [13, 14]);
        assert_eq!(
            decodable_names(),
            ["G13G", "G13S", "G13C", "G13D", "G14G", "G14S", "G14D"]
        );
    }
}
