//! A GPU generation is data (docs/architecture.md, "Adding a GPU family";
//! issue 28 item 1): no analysis pass, report view or front-end module
//! names an instruction-set family (`Family::…`) or a generation (`G13`,
//! `g16g`, `APPLE9`, `apple9_…`) in its code. The GPU models
//! (`agx-analysis/src/gpu.rs`), the timing tables (`timing/table.rs`) and
//! each family's own adapter module (`*_adapter.rs`, as
//! `apple9_adapter.rs`) are the tables such names belong to. The test reads the sources as text: comments,
//! string literals (messages), module declarations and the `#[cfg(test)]`
//! part of a file are left aside; every other identifier is checked.

use std::path::{Path, PathBuf};

/// Directories scanned (from the repository root) and the files in them
/// that are the model tables (besides every `*_adapter.rs`).
const SCANNED: &[(&str, &[&str])] = &[
    ("crates/agx-analysis/src", &["gpu.rs", "timing/table.rs"]),
    ("crates/agx-report/src", &[]),
    ("crates/metal-profiler/src", &[]),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The code of `text` with comments and string/char literals blanked, up to
/// its `#[cfg(test)]` part.
fn code_of(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            while i + 1 < b.len() && !(b[i] == '*' && b[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !ident_before(&b, i) {
            // raw string r"…" / r#"…"#
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' && b.get(i + 2) == Some(&'\'') {
            out.push_str("' '");
            i += 3;
        } else if c == '\'' && next == Some('\\') {
            // '\n', '\u{…}'
            let mut j = i + 2;
            while j < b.len() && b[j] != '\'' {
                j += 1;
            }
            out.push_str("' '");
            i = j + 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_before(b: &[char], i: usize) -> bool {
    i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_')
}

/// The generation or family names among the identifiers of `code`.
fn generation_names(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in code.lines() {
        let t = line.trim_start();
        if t.starts_with("pub mod ") || t.starts_with("mod ") {
            continue;
        }
        if line.contains("Family::") {
            found.push(line.trim().to_string());
            continue;
        }
        let named = line
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .flat_map(|ident| ident.split('_'))
            .any(is_generation);
        if named {
            found.push(line.trim().to_string());
        }
    }
    found
}

/// `G13`, `g14g`, `G17P`, `apple9`, any case.
fn is_generation(word: &str) -> bool {
    let w = word.to_ascii_lowercase();
    if w == "apple9" {
        return true;
    }
    let Some(rest) = w.strip_prefix('g') else {
        return false;
    };
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    let tail = &rest[digits.len()..];
    digits.len() == 2 && digits.as_str() >= "13" && tail.len() <= 1
}

#[test]
fn the_reader_sees_code_only() {
    let text = "let a = \"G13 tables\"; // G14\n/* APPLE9 */ let b = 'x';\n\
                #[cfg(test)]\nmod tests { use agx_isa::isa::G13; }";
    let code = code_of(text);
    assert!(generation_names(&code).is_empty(), "{code}");
    let bad = "match isa.family { Family::G13 => 1 }\nlet m = &isa::APPLE9;\nlet g = g16g;\n";
    assert_eq!(generation_names(&code_of(bad)).len(), 3);
    assert!(!is_generation("g1") && !is_generation("gprs") && !is_generation("g9"));
    assert!(is_generation("G17P") && is_generation("g13") && is_generation("Apple9"));
}

#[test]
fn no_pass_view_or_front_end_names_a_generation() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut bad = Vec::new();
    let mut files = 0;
    for (dir, tables) in SCANNED {
        let base = root.join(dir);
        let mut all = Vec::new();
        rust_files(&base, &mut all);
        for f in all {
            let rel = f
                .strip_prefix(&base)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if tables.contains(&rel.as_str()) || rel.ends_with("_adapter.rs") {
                continue;
            }
            files += 1;
            let text = std::fs::read_to_string(&f).unwrap();
            for line in generation_names(&code_of(&text)) {
                bad.push(format!("{dir}/{rel}: {line}"));
            }
        }
    }
    assert!(files > 30, "only {files} files read");
    assert!(
        bad.is_empty(),
        "generation or family names outside the model tables:\n{}",
        bad.join("\n")
    );
}
