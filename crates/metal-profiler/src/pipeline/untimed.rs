//! The untimed profile's front-end wiring (one place for the CLI and
//! Python): code of a family no timing model applies to (Apple9 for
//! G15/G16/G17P) goes through the family's adapter, the untimed analysis
//! and the one record type (`KernelRecord::build_untimed`, agx-report
//! `untimed.rs`).

/// The profile of code no timing model applies to (`Isa::timed` false:
/// Apple9 for G15/G16/G17P): the family's adapter fills the analysis
/// facts, the untimed analysis runs the CFG, loop and liveness passes, and
/// one record holds the result (counts and structure, no cycle figure).
/// `gpu`: the `--gpu` name given (its row's name labels the record).
pub fn untimed_record(
    code: &[u8],
    addr: u32,
    name: String,
    gpu: Option<&str>,
    isa: &'static agx_isa::isa::Isa,
) -> agx_report::KernelRecord {
    let decoded = match isa.family {
        agx_isa::isa::Family::Apple9 => agx_analysis::apple9_adapter::decode(code, addr),
        // a timed family is profiled by the timing pipeline
        agx_isa::isa::Family::G13 => agx_analysis::untimed::Decoded::default(),
    };
    let analysis = agx_analysis::untimed::analyze(&decoded, isa);
    let gpu = gpu.map(|g| {
        agx_container::gpu_row(g).map_or_else(|| g.to_ascii_uppercase(), |r| r.name.to_string())
    });
    agx_report::KernelRecord::build_untimed(name, gpu, isa, &decoded, &analysis)
}

/// The warnings of an untimed profile (`who`: the file or function):
/// framing that stopped, unknown encodings.
pub fn untimed_warnings(r: &agx_report::KernelRecord, who: &str) -> Vec<String> {
    let mut w = Vec::new();
    let Some(u) = r.untimed.as_deref() else {
        return w;
    };
    if let Some(s) = &u.framing.stopped {
        w.push(format!(
            "warning: {who}: {} framing stops at 0x{:x}: {}; the profile covers the code before it",
            u.isa, s.offset, s.reason
        ));
    }
    if u.framing.unknown > 0 {
        w.push(format!(
            "warning: {who}: {} of {} positions hold {} encodings no source decodes (counted as unknown; registers are a lower bound)",
            u.framing.unknown, r.instructions, u.isa
        ));
    }
    w
}
