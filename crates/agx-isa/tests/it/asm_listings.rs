//! Assembler round trip over whole listings: applegpu's reference
//! disassembly of real (Apple/Mesa) code and of the corpus streams.
//! Assembling the listing text must give bytes that disassemble to the same
//! listing; we also count how many reproduce the original bytes exactly.
//!
//! In-repo copies (fresh clones): `testdata/asm/` (see its NOTE.md) and
//! `testdata/applegpu/streams/`. The shared corpus (`../shared/corpus/real`,
//! `../shared/corpus/mesa`, `../shared/corpus/applegpu/streams`) is used
//! when present.

use agx_isa::asm::assemble_program;
use agx_isa::{disassemble_listing, Syntax};
use std::path::{Path, PathBuf};

use crate::shared_data;

/// One listing: text and the original code it was printed from (the
/// listing covers a prefix of `code`).
struct Case {
    name: String,
    text: String,
    code: Vec<u8>,
    syntax: Syntax,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `NAME.applegpu.txt` next to `NAME.bin` (any depth under `dir`).
fn real_cases(dir: &Path, out: &mut Vec<Case>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            real_cases(&p, out);
            continue;
        }
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let Some(stem) = name.strip_suffix(".applegpu.txt") else {
            continue;
        };
        let bin = p.with_file_name(format!("{stem}.bin"));
        if let (Ok(text), Ok(code)) = (std::fs::read_to_string(&p), std::fs::read(&bin)) {
            out.push(Case {
                name: p.display().to_string(),
                text,
                code,
                syntax: Syntax::Default,
            });
        }
    }
}

/// Mesa kernels: `main.applegpu.txt` (offset 0) and `preamble.applegpu.txt`
/// (at `layout.json` preamble offset) against `NAME.bin`.
fn mesa_cases(dir: &Path, out: &mut Vec<Case>) {
    for d in shared_data::subdirs(dir) {
        let name = d.file_name().unwrap().to_string_lossy().to_string();
        let Ok(code) = std::fs::read(d.join(format!("{name}.bin"))) else {
            continue;
        };
        if let Ok(text) = std::fs::read_to_string(d.join("main.applegpu.txt")) {
            out.push(Case {
                name: format!("{}/main", d.display()),
                text,
                code: code.clone(),
                syntax: Syntax::Default,
            });
        }
        let layout: serde_json::Value = std::fs::read_to_string(d.join("layout.json"))
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default();
        if let (Some(off), Ok(text)) = (
            layout["preamble"]["offset"].as_u64(),
            std::fs::read_to_string(d.join("preamble.applegpu.txt")),
        ) {
            out.push(Case {
                name: format!("{}/preamble", d.display()),
                text,
                code: code[off as usize..].to_vec(),
                syntax: Syntax::Default,
            });
        }
    }
}

/// Corpus streams: `NAME.expected.txt` / `.expected.cryptic.txt` vs `NAME.bin`.
fn stream_cases(dir: &Path, out: &mut Vec<Case>) {
    for b in shared_data::files_with_ext(dir, "bin") {
        let code = std::fs::read(&b).unwrap();
        for (suffix, syntax) in [
            ("expected.txt", Syntax::Default),
            ("expected.cryptic.txt", Syntax::Cryptic),
        ] {
            let t = b.with_extension(suffix);
            if let Ok(text) = std::fs::read_to_string(&t) {
                out.push(Case {
                    name: t.display().to_string(),
                    text,
                    code: code.clone(),
                    syntax,
                });
            }
        }
    }
}

/// Instruction lines of a listing (no `TODO:` debug lines), right-trimmed.
fn listing_lines(s: &str) -> Vec<String> {
    s.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("TODO:"))
        .map(|l| l.trim_end().to_string())
        .collect()
}

#[derive(Default)]
struct Tally {
    listings: usize,
    insns: usize,
    identical: usize,
    text_only: Vec<String>,
    failed: Vec<String>,
}

fn check(cases: &[Case]) -> Tally {
    let mut t = Tally::default();
    for c in cases {
        t.listings += 1;
        let p = match assemble_program(&c.text, 0) {
            Ok(p) => p,
            Err(e) => {
                t.failed.push(format!("{}: {e}", c.name));
                continue;
            }
        };
        t.insns += p.items.iter().filter(|i| i.insn).count();
        let back = disassemble_listing(&p.bytes, p.origin, c.syntax);
        let want = listing_lines(&c.text);
        let got = listing_lines(&back);
        // The reference lines show the original hex column; compare the
        // address and asm text only.
        let strip = |l: &String| -> String {
            let (a, rest) = l.split_once(':').unwrap_or(("", l));
            let rest = rest.trim_start();
            let asm = rest.split_once(' ').map(|x| x.1).unwrap_or("").trim_start();
            format!("{}:{}", a.trim(), asm)
        };
        let w: Vec<String> = want.iter().map(strip).collect();
        let g: Vec<String> = got.iter().map(strip).collect();
        if w != g {
            let i = w
                .iter()
                .zip(&g)
                .position(|(a, b)| a != b)
                .unwrap_or(w.len().min(g.len()));
            t.failed.push(format!(
                "{}: listing differs at line {}: want {:?}, got {:?}",
                c.name,
                i + 1,
                w.get(i),
                g.get(i)
            ));
            continue;
        }
        let start = p.origin as usize;
        let orig = c.code.get(start..start + p.bytes.len());
        if orig == Some(&p.bytes[..]) {
            t.identical += 1;
        } else {
            t.text_only.push(c.name.clone());
        }
    }
    t
}

fn report(name: &str, t: &Tally) {
    eprintln!(
        "{name}: {} listings ({} instructions): {} reproduce the original bytes, {} the same text \
         only, {} failed",
        t.listings,
        t.insns,
        t.identical,
        t.text_only.len(),
        t.failed.len()
    );
    for n in &t.text_only {
        eprintln!("  text only: {n}");
    }
    for f in &t.failed {
        eprintln!("  FAILED: {f}");
    }
}

#[test]
fn asm_listings_in_repo() {
    let mut cases = Vec::new();
    real_cases(&root().join("testdata/asm"), &mut cases);
    let t = check(&cases);
    report("testdata/asm", &t);
    assert!(t.listings >= 8);
    assert!(t.failed.is_empty());
    assert!(
        t.text_only.is_empty(),
        "testdata/asm listings reproduce their bytes"
    );
    // Random streams: the text round-trips; bytes differ in bits the text
    // does not show (the generator filled them at random).
    let mut streams = Vec::new();
    stream_cases(&root().join("testdata/applegpu/streams"), &mut streams);
    let t = check(&streams);
    report("testdata/applegpu/streams", &t);
    assert!(t.failed.is_empty());
}

#[test]
fn asm_listings_shared_corpus() {
    let Some(shared) = shared_data::shared("corpus") else {
        return;
    };
    let mut real = Vec::new();
    real_cases(&shared.join("real"), &mut real);
    let mut mesa = Vec::new();
    mesa_cases(&shared.join("mesa"), &mut mesa);
    let mut streams = Vec::new();
    stream_cases(&shared.join("applegpu/streams"), &mut streams);
    let (tr, tm, ts) = (check(&real), check(&mesa), check(&streams));
    report("real", &tr);
    report("mesa", &tm);
    report("applegpu streams", &ts);
    for t in [&tr, &tm, &ts] {
        assert!(t.failed.is_empty());
    }
    // Byte identity where the text determines the bytes: the remaining real
    // and Mesa listings differ only in bits applegpu's text does not show
    // (e.g. Mesa's `stack_adjust` prints exactly as a `stack_store`).
    assert!(tr.identical >= 36 && tm.identical >= 38);
}
