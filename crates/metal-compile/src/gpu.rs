//! Which AGX generation a Metal device name implies. The authoritative answer is the APPLEGPU
//! cpusubtype inside the archive (read by the archive reader); this is a hint for messages.

/// The AGX generation for an Apple-silicon Mac GPU name (`MTLDevice.name`): `Apple M1…` → 13,
/// `Apple M2…` → 14, `Apple M3…` → 15, `Apple M4…` → 16, later `Apple Mn` → n + 12.
/// `None` for anything else (e.g. AMD or Intel GPUs, the paravirtual device).
pub fn device_generation(device_name: &str) -> Option<u32> {
    let rest = device_name.trim().strip_prefix("Apple M")?;
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    // `Apple M1`, `Apple M1 Pro`, `Apple M1 Max`, …; not `Apple Mx…` with letters glued on.
    if digits.is_empty() || rest[digits.len()..].starts_with(|c: char| c.is_alphanumeric()) {
        return None;
    }
    let m: u32 = digits.parse().ok()?;
    (m >= 1).then_some(m + 12)
}

/// Whether the device name is an M1-family (G13) GPU, the generation this project decodes.
pub fn is_g13_device(device_name: &str) -> bool {
    device_generation(device_name) == Some(13)
}

/// How this project profiles the code of a Mac of AGX generation `g` (its
/// `gGg` GPU), from the GPU models (`agx_analysis::gpu`): the one answer
/// the default target and the JIT note read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostCode {
    /// A timing model covers it (M1, M2).
    Timed,
    /// Decoded and profiled without cycles (M3, M4: Apple9 code).
    Untimed,
    /// Not decoded (M5 and unknown generations).
    NotDecoded,
}

/// [`HostCode`] of a Mac of AGX generation `generation`.
pub fn host_code(generation: u32) -> HostCode {
    let model =
        agx_container::gpu_row(&format!("g{generation}g")).and_then(agx_analysis::gpu::model_of);
    match model {
        Some(m) if m.timed() => HostCode::Timed,
        Some(_) => HostCode::Untimed,
        None => HostCode::NotDecoded,
    }
}
