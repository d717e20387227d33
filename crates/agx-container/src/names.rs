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
/// (`_Z6helperPU9MTLdeviceKjj` → `helper`, `_ZN2ns3fooEv` → `ns::foo`);
/// parameter types are dropped. None if `s` is not of that shape.
pub(crate) fn demangle_name(s: &str) -> Option<String> {
    let rest = s.strip_prefix("__Z").or_else(|| s.strip_prefix("_Z"))?;
    let bytes = rest.as_bytes();
    if let Some(nested) = rest.strip_prefix('N') {
        // Skip CV qualifiers of a member function.
        let mut b = nested.trim_start_matches(['K', 'V', 'r']).as_bytes();
        let mut parts = Vec::new();
        while let Some((name, after)) = source_name(b) {
            parts.push(name);
            b = after;
        }
        if parts.is_empty() || b.first() != Some(&b'E') {
            return None;
        }
        return Some(parts.join("::"));
    }
    source_name(bytes).map(|(n, _)| n)
}

/// `<length><identifier>` at the start of `b`.
fn source_name(b: &[u8]) -> Option<(String, &[u8])> {
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 || digits > 4 {
        return None;
    }
    let len: usize = std::str::from_utf8(&b[..digits]).ok()?.parse().ok()?;
    let name = b.get(digits..digits + len)?;
    if len == 0 || !name.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_') {
        return None;
    }
    Some((
        String::from_utf8_lossy(name).into_owned(),
        &b[digits + len..],
    ))
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
    }

    #[test]
    fn metallib_scan() {
        let mut b = b"MTLB....NAME".to_vec();
        b.extend_from_slice(&7u16.to_le_bytes());
        b.extend_from_slice(b"matmul\0NAME\xff\xff");
        assert_eq!(metallib_names(&b), vec!["matmul".to_string()]);
    }
}
