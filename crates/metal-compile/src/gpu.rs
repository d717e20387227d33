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
