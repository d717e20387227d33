//! Symbol → part (prolog / main / helper) and display ("Metal") names.
//!
//! Symbol shapes (shared/reference/archive-format.md): `_agc.main`,
//! `_agc.main.constant_program`, helpers such as `l__Z6helperPU9MTLdeviceKjj`,
//! and, in multi-function archives, name-prefixed `__gbuf_fragment_agc.main`
//! (seen in `metal-nm` output, not verified on a file).

use crate::Part;

const PROLOG_SUFFIX: &str = "agc.main.constant_program";
const MAIN_SUFFIX: &str = "agc.main";

/// The part a symbol names and, for prolog/main, the kernel name encoded in
/// its prefix (None for the unprefixed `_agc.main`).
pub(crate) fn classify(symbol: &str) -> (Part, Option<String>) {
    if let Some(prefix) = symbol.strip_suffix(PROLOG_SUFFIX) {
        (Part::Prolog, kernel_from_prefix(prefix))
    } else if let Some(prefix) = symbol.strip_suffix(MAIN_SUFFIX) {
        (Part::Main, kernel_from_prefix(prefix))
    } else {
        (Part::Helper, None)
    }
}

/// `_` → None; `__gbuf_fragment_` → `gbuf_fragment`; `__Z3fooPf_` → `foo`.
fn kernel_from_prefix(prefix: &str) -> Option<String> {
    let p = prefix.strip_suffix('_').unwrap_or(prefix);
    let trimmed = p.trim_start_matches('_');
    if trimmed.is_empty() {
        return None;
    }
    if trimmed.starts_with('Z') && p.len() > trimmed.len() {
        if let Some(d) = demangle_name(&p[p.len() - trimmed.len() - 1..]) {
            return Some(d);
        }
    }
    Some(trimmed.to_string())
}

/// Display name of a helper symbol: `l__Z6helperPU9MTLdeviceKjj` → `helper`,
/// `_foo` → `foo`.
pub(crate) fn helper_name(symbol: &str) -> String {
    // `l` / `L` mark assembler-local symbols; then the C `_` prefix.
    let s = symbol
        .strip_prefix("l_")
        .or_else(|| symbol.strip_prefix("L_"))
        .unwrap_or(symbol);
    if let Some(d) = demangle_name(s) {
        return d;
    }
    if s.starts_with("_Z") {
        // Mangled but not of a shape we shorten: show it whole.
        return s.to_string();
    }
    let t = s.strip_prefix('_').unwrap_or(s);
    if t.is_empty() {
        symbol.to_string()
    } else {
        t.to_string()
    }
}

/// Just the (possibly qualified) name of an Itanium-mangled symbol
/// (`_Z6helperPU9MTLdeviceKjj` → `helper`, `_ZN2ns3fooEv` → `ns::foo`),
/// demangled by `cpp_demangle`; parameter types and return type are
/// dropped (the Metal source's name, as kernels are shown). Mach-O's extra
/// C underscore (`__Z…`) is accepted. None if `s` does not demangle.
pub(crate) fn demangle_name(s: &str) -> Option<String> {
    let s = s
        .strip_prefix('_')
        .filter(|r| r.starts_with("_Z"))
        .unwrap_or(s);
    if !s.starts_with("_Z") {
        return None;
    }
    let sym = cpp_demangle::Symbol::new(s).ok()?;
    let opts = cpp_demangle::DemangleOptions::new()
        .no_params()
        .no_return_type();
    let name = sym.demangle_with_options(&opts).ok()?;
    (!name.is_empty()).then_some(name)
}

/// The name every view shows for a function's symbol: a kernel's Metal
/// name for `…agc.main` symbols, a helper's demangled name
/// (`l__Z6helperPU9MTLdeviceKjj` → `helper`), else the symbol less its C
/// underscore.
pub fn display_name(symbol: &str) -> String {
    match classify(symbol) {
        (Part::Helper, _) => helper_name(symbol),
        (_, Some(kernel)) => kernel,
        (_, None) => symbol.to_string(),
    }
}

/// Function names in a metallib (`MTLB`) blob: each function entry of the
/// function list carries a `NAME` tag (4-byte tag, u16 little-endian size,
/// NUL-terminated string), per the public metallib descriptions (e.g.
/// YuAo/MetalLibraryArchive). This is a tolerant scan for such tags, not a
/// full metallib parser; names are returned once each, in order.
pub(crate) fn metallib_names(b: &[u8]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0usize;
    while let Some(pos) = b
        .get(i..)
        .and_then(|r| r.windows(4).position(|w| w == b"NAME"))
    {
        let at = i + pos;
        i = at + 4;
        let Some(sz) = b.get(at + 4..at + 6) else {
            break;
        };
        let n = usize::from(u16::from_le_bytes([sz[0], sz[1]]));
        let Some(s) = b.get(at + 6..at + 6 + n) else {
            continue;
        };
        let Some((&0, name)) = s.split_last() else {
            continue;
        };
        let ident = !name.is_empty()
            && name.len() <= 256
            && name
                .iter()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.'));
        if ident {
            let name = String::from_utf8_lossy(name).into_owned();
            if !out.contains(&name) {
                out.push(name);
            }
        }
        if out.len() >= 4096 {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts() {
        assert_eq!(classify("_agc.main"), (Part::Main, None));
        assert_eq!(classify("_agc.main.constant_program"), (Part::Prolog, None));
        assert_eq!(
            classify("__gbuf_fragment_agc.main"),
            (Part::Main, Some("gbuf_fragment".into()))
        );
        assert_eq!(
            classify("__lighting_fragment_agc.main.constant_program"),
            (Part::Prolog, Some("lighting_fragment".into()))
        );
        assert_eq!(classify("l__Z6helperPU9MTLdeviceKjj").0, Part::Helper);
    }

    #[test]
    fn helpers() {
        assert_eq!(helper_name("l__Z6helperPU9MTLdeviceKjj"), "helper");
        assert_eq!(helper_name("_ZN2ns3fooEv"), "ns::foo");
        assert_eq!(helper_name("_plain"), "plain");
        assert_eq!(helper_name("_Z99x"), "_Z99x");
        assert_eq!(helper_name("_"), "_");
        // what a hand-written demangler got wrong: templates, nested
        // templates, operators (cpp_demangle)
        assert_eq!(helper_name("l__Z3addIfET_S0_S0_"), "add<float>");
        assert_eq!(
            helper_name("__ZN5metal6detail4dot2ERKDv2_fS3_"),
            "metal::detail::dot2"
        );
        assert_eq!(helper_name("_ZplRK1VS1_"), "operator+");
    }

    #[test]
    fn display_names() {
        assert_eq!(display_name("l__Z6helperPU9MTLdeviceKjj"), "helper");
        assert_eq!(display_name("__gbuf_fragment_agc.main"), "gbuf_fragment");
        assert_eq!(display_name("_agc.main"), "_agc.main");
    }

    #[test]
    fn metallib_scan() {
        let mut b = b"MTLB....NAME".to_vec();
        b.extend_from_slice(&7u16.to_le_bytes());
        b.extend_from_slice(b"matmul\0NAME\xff\xff");
        assert_eq!(metallib_names(&b), vec!["matmul".to_string()]);
    }
}
