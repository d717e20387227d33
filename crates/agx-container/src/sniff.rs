//! Naming what a file is when it is not a Metal binary archive, so the
//! front ends can refuse it with one line that says what they were given.
//!
//! Only a description: [`crate::read`] decides what is an archive.

/// A short description of `bytes`, which [`crate::read`] did not recognise
/// as an archive: "empty", "too short", a well-known file type by its magic
/// number, text, or the unknown magic itself.
pub fn describe_non_archive(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "the input is empty".into();
    }
    if bytes.len() < 4 {
        return format!(
            "only {} byte{}, too short for an archive header",
            bytes.len(),
            if bytes.len() == 1 { "" } else { "s" }
        );
    }
    // Well-known magics (file(1)'s magic database is the usual reference).
    const KNOWN: &[(&[u8], &str)] = &[
        (b"\x89PNG\r\n\x1a\n", "a PNG image"),
        (b"\xff\xd8\xff", "a JPEG image"),
        (b"GIF8", "a GIF image"),
        (b"%PDF", "a PDF document"),
        (b"PK\x03\x04", "a zip archive"),
        (b"\x1f\x8b", "gzip-compressed data"),
        (b"\x7fELF", "an ELF executable or object (CPU code)"),
        (b"BC\xc0\xde", "LLVM bitcode (not compiled for a GPU)"),
        (b"\xde\xc0\x17\x0b", "LLVM bitcode (not compiled for a GPU)"),
        (b"\xce\xfa\xed\xfe", "a 32-bit Mach-O file (no GPU code)"),
        (b"\xfe\xed\xfa\xce", "a 32-bit Mach-O file (no GPU code)"),
        (
            b"\xfe\xed\xfa\xcf",
            "a big-endian 64-bit Mach-O file (no GPU code)",
        ),
        (b"!<arch>\n", "a static library (ar archive)"),
    ];
    for (magic, what) in KNOWN {
        if bytes.starts_with(magic) {
            return (*what).to_string();
        }
    }
    if let Some(t) = as_text(bytes) {
        let first = t
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("");
        let shown: String = first.chars().take(40).collect();
        let more = if first.chars().count() > 40 {
            "…"
        } else {
            ""
        };
        // a pasted disassembly listing starts `   4c: 0a05...`
        let listing = first
            .split_once(':')
            .is_some_and(|(a, _)| !a.is_empty() && a.chars().all(|c| c.is_ascii_hexdigit()));
        let hint = if t.contains("<metal_stdlib>") || t.contains("using namespace metal;") {
            " (Metal source? name it .metal)"
        } else if listing {
            " (a disassembly listing? assemble it with `metal-profile asm`)"
        } else {
            ""
        };
        return format!("text starting \"{shown}{more}\"{hint}");
    }
    format!(
        "unknown magic 0x{:02x}{:02x}{:02x}{:02x}",
        bytes[0], bytes[1], bytes[2], bytes[3]
    )
}

/// `bytes` as text when the start is UTF-8 without control characters
/// other than whitespace.
fn as_text(bytes: &[u8]) -> Option<&str> {
    let head = &bytes[..bytes.len().min(4096)];
    let s = match std::str::from_utf8(head) {
        Ok(s) => s,
        // a multi-byte character cut at the 4096-byte window
        Err(e) if e.error_len().is_none() && e.valid_up_to() > 0 => {
            std::str::from_utf8(&head[..e.valid_up_to()]).ok()?
        }
        Err(_) => return None,
    };
    s.chars()
        .all(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t' | '\x0c'))
        .then_some(s)
}

#[cfg(test)]
mod tests {
    use super::describe_non_archive as d;

    #[test]
    fn names_what_it_sees() {
        assert_eq!(d(b""), "the input is empty");
        assert_eq!(d(b"\xcf"), "only 1 byte, too short for an archive header");
        assert_eq!(
            d(b"\xcf\xfa\xed"),
            "only 3 bytes, too short for an archive header"
        );
        assert_eq!(d(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"), "a PNG image");
        assert!(
            d(b"# metal-profiler\n\nA static").starts_with("text starting \"# metal-profiler\"")
        );
        assert!(d(b"#include <metal_stdlib>\nkernel void f()").contains("name it .metal"));
        assert_eq!(
            d(b"# notes\nkernel void f() is how"),
            "text starting \"# notes\""
        );
        assert!(d(b"   0: 8800   stop\n").contains("metal-profile asm"));
        assert_eq!(
            d(&[0x0e, 0x15, 0x80, 0xd2, 0x00]),
            "unknown magic 0x0e1580d2"
        );
        assert_eq!(d(b"\x00\x00\x00\x00"), "unknown magic 0x00000000");
    }
}
