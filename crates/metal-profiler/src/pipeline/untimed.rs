//! The untimed profile's front-end wiring (one place for the CLI and
//! Python): code of a GPU model without a timing table (G15/G16/G17P) goes
//! through the adapter its model names, the untimed analysis and one
//! record (agx-report `untimed.rs`).

/// The profile of code no timing model applies to (`model.timing` `None`:
/// G15/G16/G17P): the model's adapter fills the analysis facts, the
/// untimed analysis runs the CFG, loop and liveness passes, and one record
/// holds the result (counts and structure, no cycle figure). `gpu`: the
/// `--gpu` name given (its row's name labels the record).
pub fn untimed_record(
    code: &[u8],
    addr: u32,
    name: String,
    gpu: Option<&str>,
    model: &'static agx_analysis::gpu::GpuModel,
) -> agx_report::untimed::UntimedRecord {
    // a model whose code decodes to typed instructions is profiled by the
    // timing pipeline, never here
    let decoded = model.walk(code, addr).unwrap_or_default();
    let analysis = agx_analysis::untimed::analyze(&decoded, model);
    let isa = model.isa;
    let gpu = gpu.map(|g| {
        agx_container::gpu_row(g).map_or_else(|| g.to_ascii_uppercase(), |r| r.name.to_string())
    });
    agx_report::untimed::UntimedRecord::build(name, gpu, isa, &decoded, &analysis)
}

/// The warnings of an untimed profile (`who`: the file or function):
/// framing that stopped, unknown encodings.
pub fn untimed_warnings(r: &agx_report::untimed::UntimedRecord, who: &str) -> Vec<String> {
    let mut w = Vec::new();
    if let Some(s) = &r.framing.stopped {
        w.push(format!(
            "warning: {who}: {} framing stops at 0x{:x}: {}; the profile covers the code before it",
            r.isa, s.offset, s.reason
        ));
    }
    if r.framing.unknown > 0 {
        w.push(format!(
            "warning: {who}: {} of {} positions hold {} encodings no source decodes (counted as unknown; registers are a lower bound)",
            r.framing.unknown, r.instructions, r.isa
        ));
    }
    w
}
