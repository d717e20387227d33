//! The untimed profile's front-end wiring (one place for the CLI and
//! Python): code of a GPU model without a timing table (G15/G16/G17P) goes
//! through the adapter its model names, the untimed analysis and the one
//! record type (`KernelRecord::build_untimed`, agx-report `untimed.rs`).

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
) -> agx_report::KernelRecord {
    // a model whose code decodes to typed instructions is profiled by the
    // timing pipeline, never here
    let decoded = model.walk(code, addr).unwrap_or_default();
    let analysis = agx_analysis::untimed::analyze(&decoded, model);
    let isa = model.isa;
    let gpu_name = gpu
        .and_then(agx_container::Gpu::from_name)
        .map(|g| g.describe());
    let gpu = gpu.map(|g| {
        agx_container::gpu_row(g).map_or_else(|| g.to_ascii_uppercase(), |r| r.name.to_string())
    });
    let mut r = agx_report::KernelRecord::build_untimed(name, gpu, isa, &decoded, &analysis);
    r.gpu_name = gpu_name;
    r
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

/// The slice for `gpu` of an archive read with every GPU's code (a family
/// other than G13: the G13 reader drops those slices): the archive and
/// the slice's index; an archive without that slice is refused naming
/// what it holds.
pub fn untimed_slice(
    bytes: &[u8],
    name: &str,
    gpu: &str,
) -> Result<(agx_container::Archive, usize), super::Error> {
    let archive = super::load_archive_all_gpus(bytes, name)?;
    let wanted = agx_container::gpu_row(gpu).map(|r| r.name);
    let Some(index) = archive
        .slices
        .iter()
        .position(|s| s.gpu().is_some_and(|g| Some(g.name) == wanted))
    else {
        // the archive's own message (what it holds)
        archive.choose_slice(Some(gpu))?;
        return Err(super::Error::input(format!(
            "{name}: no slice for GPU `{gpu}`"
        )));
    };
    Ok((archive, index))
}

/// The code of function `f` of a one-slice archive.
pub fn function_code<'a>(one: &'a agx_container::Archive, f: &agx_container::Function) -> &'a [u8] {
    let img = &one.images[f.image];
    let start = (f.text_offset as usize).min(img.text.len());
    let end = (start + f.code_size as usize).min(img.text.len());
    &img.text[start..end]
}

/// The record of function `f` of a one-slice archive of `gpu`, named `name`.
pub fn function_record(
    one: &agx_container::Archive,
    f: &agx_container::Function,
    name: String,
    gpu: &str,
    model: &'static agx_analysis::gpu::GpuModel,
) -> agx_report::KernelRecord {
    untimed_record(
        function_code(one, f),
        f.text_offset as u32,
        name,
        Some(gpu),
        model,
    )
}
