//! Real compiler output reproduces exactly: every `.bin` of the real corpus
//! (Apple- and Mesa-compiled, testdata/real and ../shared/corpus/real) prints
//! its `.applegpu.txt`, and every Mesa kernel (testdata/mesa and
//! ../shared/corpus/mesa) prints its `main.applegpu.txt` (and
//! `preamble.applegpu.txt` from the preamble's offset).

use agx_isa::{disassemble_listing, Syntax};
use std::path::{Path, PathBuf};

use crate::shared_data;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn without_todo(s: &str) -> String {
    s.lines()
        .filter(|l| !l.starts_with("TODO:"))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn check_real(dir: &Path) -> (usize, Vec<String>) {
    let bins = shared_data::files_with_ext(dir, "bin");
    let mut bad = Vec::new();
    let mut n = 0;
    for b in bins {
        let txt = b.with_extension("applegpu.txt");
        let Ok(want) = std::fs::read_to_string(&txt) else {
            continue;
        };
        n += 1;
        let got = disassemble_listing(&std::fs::read(&b).unwrap(), 0, Syntax::Default);
        if got != without_todo(&want) {
            bad.push(b.display().to_string());
        }
    }
    (n, bad)
}

fn check_mesa(dir: &Path) -> (usize, Vec<String>) {
    let (mut n, mut bad) = (0, Vec::new());
    for d in shared_data::subdirs(dir) {
        let name = d.file_name().unwrap().to_string_lossy().to_string();
        let Ok(bin) = std::fs::read(d.join(format!("{name}.bin"))) else {
            continue;
        };
        let layout: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(d.join("layout.json")).unwrap()).unwrap();
        let mut parts = vec![("main", 0usize)];
        if let Some(off) = layout["preamble"]["offset"].as_u64() {
            parts.push(("preamble", off as usize));
        }
        for (part, off) in parts {
            let Ok(want) = std::fs::read_to_string(d.join(format!("{part}.applegpu.txt"))) else {
                continue;
            };
            n += 1;
            if disassemble_listing(&bin[off.min(bin.len())..], 0, Syntax::Default)
                != without_todo(&want)
            {
                bad.push(format!("{name} {part}"));
            }
        }
    }
    (n, bad)
}

#[test]
fn real_corpus_in_repo_reproduces() {
    let (n, bad) = check_real(&repo().join("testdata/real"));
    eprintln!("testdata/real: {n} listings, {} differ", bad.len());
    assert!(n >= 40, "expected the real corpus copy in testdata/real");
    assert!(bad.is_empty(), "{bad:?}");
}

#[test]
fn real_corpus_shared_reproduces() {
    let Some(dir) = shared_data::shared("corpus/real") else {
        return;
    };
    let (n, bad) = check_real(&dir);
    eprintln!("shared real: {n} listings, {} differ", bad.len());
    assert!(n > 0, "no listings under {}", dir.display());
    assert!(bad.is_empty(), "{bad:?}");
}

#[test]
fn mesa_listings_reproduce() {
    let (n, bad) = check_mesa(&repo().join("testdata/mesa"));
    eprintln!("testdata/mesa: {n} listings, {} differ", bad.len());
    assert!(n >= 37);
    assert!(bad.is_empty(), "{bad:?}");
    let Some(shared_mesa) = shared_data::shared("corpus/mesa") else {
        return;
    };
    let (n2, bad2) = check_mesa(&shared_mesa);
    assert!(n2 >= 37, "{n2} shared Mesa listings");
    eprintln!("shared mesa: {n2} listings, {} differ", bad2.len());
    assert!(bad2.is_empty(), "{bad2:?}");
}
