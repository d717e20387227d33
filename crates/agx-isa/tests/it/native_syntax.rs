//! Native syntax (issue #13): finds, over random encodings of every form,
//! the instructions whose applegpu text does not determine them (assembling
//! the text gives a different instruction), and checks native syntax has none.

use agx_isa::asm::{assemble_at, assemble_program};
use agx_isa::forms::FORMS;
use agx_isa::stream::walk_native;
use agx_isa::{decode, disassemble_listing, format_asm, Instruction, Syntax};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::native_signature::signature;
use crate::shared_data;

fn strict_raised() -> bool {
    std::env::var("SURVEY_RAISED").is_ok()
}

use crate::xorshift::Rng;

/// Random words of form `f` (fixed bits set, both sizes), decoded as `f`.
fn samples(f: &agx_isa::forms::Form, n: usize, rng: &mut Rng) -> Vec<Instruction> {
    let mut out = Vec::new();
    for k in 0..n * 4 {
        if out.len() >= n {
            break;
        }
        let mut w = (rng.word() & !f.mask) | f.bits;
        if f.sizes.0 != f.sizes.1 {
            if k % 2 == 0 {
                w |= 1u128 << f.length_bit;
            } else {
                w &= !(1u128 << f.length_bit);
            }
        }
        let bytes = w.to_le_bytes();
        if let Ok(i) = decode(&bytes[..12], 0x100) {
            if i.form == f.idx {
                out.push(i);
            }
        }
    }
    out
}

/// Per form: (cases, mismatches, an example).
fn collisions(syntax: Syntax, per_form: usize) -> BTreeMap<String, (usize, usize, String)> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut out = BTreeMap::new();
    for f in FORMS.iter() {
        for i in samples(f, per_form, &mut rng) {
            let text = format_asm(&i, syntax);
            let e = out
                .entry(format!("{:3} {}", f.idx, f.name))
                .or_insert((0, 0, String::new()));
            e.0 += 1;
            let back = assemble_at(&text, i.addr)
                .map_err(|e| e.to_string())
                .and_then(|b| decode(&b, i.addr).map_err(|e| e.to_string()));
            // native syntax keeps `raised` too (raw(0x..)); the applegpu
            // survey leaves it aside unless SURVEY_RAISED is set
            let strict = strict_raised() || syntax == Syntax::Native;
            let ok = match &back {
                Ok(b) => signature(b, strict) == signature(&i, strict),
                Err(_) => false,
            };
            if !ok {
                e.1 += 1;
                if e.2.is_empty() {
                    let hex: String = i.bytes()[..i.len as usize]
                        .iter()
                        .map(|b| format!("{b:02x}"))
                        .collect();
                    e.2 = match back {
                        Ok(b) => format!(
                            "{hex} `{}` -> `{}`\n      {}\n      {}",
                            text.trim_end(),
                            format_asm(&b, syntax).trim_end(),
                            signature(&i, true),
                            signature(&b, true)
                        ),
                        Err(m) => format!("{hex} `{}`: {m}", text.trim_end()),
                    };
                }
            }
        }
    }
    out
}

#[test]
#[ignore = "survey: prints which forms applegpu's text does not determine"]
fn survey_default_syntax_collisions() {
    let n: usize = std::env::var("SURVEY_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let t = collisions(Syntax::Default, n);

    for (k, (cases, bad, ex)) in &t {
        if *bad > 0 {
            eprintln!("{k}: {bad}/{cases} e.g. {ex}");
        }
    }
}

/// Survey in applegpu syntax: the forms whose text does not determine the
/// instruction are exactly forms that shadow another (what native syntax
/// exists for); stack adjusts printed as `stack_store` among them.
#[test]
fn applegpu_text_loses_only_the_shadowed_forms() {
    let t = collisions(Syntax::Default, 300);
    let shadowing: Vec<u8> = agx_isa::native::shadowed_forms()
        .iter()
        .map(|p| p.0)
        .collect();
    let bad: Vec<(&String, &(usize, usize, String))> = t.iter().filter(|(_, v)| v.1 > 0).collect();
    for (k, v) in &bad {
        let idx: u8 = k.trim()[..k.trim().find(' ').unwrap()].parse().unwrap();
        assert!(shadowing.contains(&idx), "{k}: {v:?}");
    }
    assert!(
        bad.iter().any(|(k, _)| k.ends_with("stack_store")),
        "{bad:?}"
    );
}

/// Native syntax: random encodings of every form come back as the same
/// instruction, `raised` ones included (their field bits follow as
/// `raw(0x..)`; see docs/decoder.md).
#[test]
fn native_text_determines_every_instruction() {
    let t = collisions(Syntax::Native, 300);
    let cases: usize = t.values().map(|v| v.0).sum();
    let bad: Vec<String> = t
        .iter()
        .filter(|(_, v)| v.1 > 0)
        .map(|(k, v)| format!("{k}: {}/{} e.g. {}", v.1, v.0, v.2))
        .collect();
    eprintln!(
        "native syntax: {cases} random encodings over {} forms",
        t.len()
    );
    assert!(cases > 40_000, "{cases}");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Found by the `native_roundtrip` fuzz target: a `TODO.stack_adjust2`
/// whose first-match `stack_store` reading is one applegpu refuses to print
/// (`raised`); native text must keep that too.
const FUZZ_FOUND: &[&str] = &["b500d100c030"];

#[test]
fn fuzz_regressions() {
    for hex in FUZZ_FOUND.iter() {
        let b: Vec<u8> = (0..hex.len() / 2)
            .map(|k| u8::from_str_radix(&hex[2 * k..2 * k + 2], 16).unwrap())
            .collect();
        let i = decode(&b, 0x4e).unwrap();
        let text = format_asm(&i, Syntax::Native);
        let back = decode(&assemble_at(&text, 0x4e).unwrap(), 0x4e).unwrap();
        assert_eq!(signature(&back, true), signature(&i, true), "{text}");
    }
}

/// Code blobs to round-trip: (kind, name, bytes).
fn kernels(out: &mut Vec<(&'static str, String, Vec<u8>)>, dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if p.is_dir() {
            let bin = p.join(format!("{name}.bin"));
            let layout = p.join("layout.json");
            if bin.exists() && layout.exists() {
                // a Mesa kernel: main, and the preamble when there is one
                let code = std::fs::read(&bin).unwrap();
                let l: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(&layout).unwrap()).unwrap();
                let main = l["main"]["offset"].as_u64().unwrap_or(0) as usize;
                out.push((
                    "mesa",
                    format!("{}/main", p.display()),
                    code[main..].to_vec(),
                ));
                if let Some(off) = l["preamble"]["offset"].as_u64() {
                    let pre = code[off as usize..].to_vec();
                    out.push(("mesa", format!("{}/preamble", p.display()), pre));
                }
            } else {
                kernels(out, &p);
            }
        } else if name.ends_with(".bin") {
            let kind = if p.to_string_lossy().contains("streams") {
                "stream"
            } else {
                "real"
            };
            out.push((kind, p.display().to_string(), std::fs::read(&p).unwrap()));
        }
    }
}

/// Disassemble → assemble → disassemble in native syntax: the same text
/// (address and asm columns) and, instruction by instruction, the same
/// [`signature`] (form, operands, every fact the analysis reads, `raised`).
fn fixpoint(code: &[u8]) -> Result<usize, String> {
    let t1 = disassemble_listing(code, 0, Syntax::Native);
    let p = assemble_program(&t1, 0).map_err(|e| format!("assemble: {e}"))?;
    let t2 = disassemble_listing(&p.bytes, p.origin, Syntax::Native);
    let cols = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let (a, rest) = l.split_once(':').unwrap_or(("", l));
                let asm = rest.trim_start().split_once(' ').map_or("", |x| x.1);
                format!("{}:{}", a.trim(), asm.trim())
            })
            .collect()
    };
    let (c1, c2) = (cols(&t1), cols(&t2));
    if c1 != c2 {
        let k = c1.iter().zip(&c2).position(|(a, b)| a != b).unwrap_or(0);
        return Err(format!(
            "text differs at line {}: {:?} vs {:?}",
            k + 1,
            c1.get(k),
            c2.get(k)
        ));
    }
    // the walk of native syntax: an unknown encoding of known length is
    // skipped whole (applegpu's walk would read its tail as halfwords)
    let a: Vec<Instruction> = walk_native(code, 0)
        .filter_map(|i| i.insn().cloned())
        .collect();
    let b: Vec<Instruction> = walk_native(&p.bytes, p.origin)
        .filter_map(|i| i.insn().cloned())
        .collect();
    if a.len() != b.len() {
        return Err(format!("{} instructions became {}", a.len(), b.len()));
    }
    for (x, y) in a.iter().zip(&b) {
        if signature(x, true) != signature(y, true) {
            return Err(format!(
                "at {:#x}: {}\n  vs {}",
                x.addr,
                signature(x, true),
                signature(y, true)
            ));
        }
    }
    Ok(a.len())
}

fn check_all(dirs: &[PathBuf]) -> BTreeMap<&'static str, (usize, usize)> {
    let mut ks = Vec::new();
    for d in dirs {
        kernels(&mut ks, d);
    }
    let mut tally: BTreeMap<&'static str, (usize, usize)> = BTreeMap::new();
    let mut bad = Vec::new();
    for (kind, name, code) in &ks {
        match fixpoint(code) {
            Ok(n) => {
                let e = tally.entry(kind).or_default();
                e.0 += 1;
                e.1 += n;
            }
            Err(e) => bad.push(format!("{name}: {e}")),
        }
    }
    for (k, (n, i)) in &tally {
        eprintln!("native fixpoint: {n} {k} kernels, {i} instructions");
    }
    assert!(
        bad.is_empty(),
        "{} of {} kernels:\n{}",
        bad.len(),
        ks.len(),
        bad.join("\n")
    );
    tally
}

#[test]
fn native_round_trip_is_a_fixpoint_on_in_repo_kernels() {
    let r = shared_data::repo_root().join("testdata");
    let t = check_all(&[
        r.join("real"),
        r.join("archives/real"),
        r.join("apple_stack"),
        r.join("mesa"),
        r.join("applegpu/streams"),
    ]);
    assert!(
        t["real"].0 >= 40 && t["mesa"].0 >= 37 && t["stream"].0 >= 1,
        "{t:?}"
    );
}

#[test]
fn native_round_trip_is_a_fixpoint_on_the_shared_corpus() {
    let Some(c) = shared_data::shared("corpus") else {
        return;
    };
    let t = check_all(&[c.join("real"), c.join("mesa"), c.join("applegpu/streams")]);
    assert!(
        t["real"].0 >= 40 && t["mesa"].0 >= 37 && t["stream"].0 >= 10,
        "{t:?}"
    );
}

/// An unknown encoding whose opcode group fixes its length (first byte
/// 0x0e, the `iadd` group: 8 bytes, but bit 15 set matches no form), then
/// `stop`.
fn unknown_known_length() -> Vec<u8> {
    let mut code = vec![0x0e, 0x80, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66];
    code.extend(assemble_at("stop", 8).unwrap());
    code
}

#[test]
fn unknown_encoding_of_known_length_is_one_native_line() {
    let code = unknown_known_length();
    let w = agx_isa::decode::read_word(&code);
    assert!(agx_isa::decode::match_form(w).is_none());
    let u = agx_isa::decode::unknown_encoding(w);
    assert_eq!((u.group, u.len), (Some("alu"), Some(8)));
    let native = disassemble_listing(&code, 0, Syntax::Native);
    let lines: Vec<&str> = native.lines().collect();
    assert_eq!(lines.len(), 2, "{native}");
    assert!(
        lines[0].ends_with(" unknown.alu (8 bytes) 0x0e80112233445566"),
        "{native}"
    );
    assert!(lines[0].starts_with("   0: 0e80112233445566"), "{native}");
    assert!(
        lines[1].starts_with("   8: ") && lines[1].contains("stop"),
        "{native}"
    );
    // applegpu's walk is unchanged: a failed halfword at a time, and here it
    // falls out of step (0x06 reads `55 66` + `stop` as an `atomic`)
    let default = disassemble_listing(&code, 0, Syntax::Default);
    assert!(
        default.starts_with("   0: 0e80                 <disassembly failed>\n"),
        "{default}"
    );
    assert_eq!(
        default.matches("<disassembly failed>").count(),
        3,
        "{default}"
    );
    assert!(!default.contains("stop"), "{default}");
    // counted once by the length-aware walk, per halfword by applegpu's
    let (insns, failed) = agx_isa::stream::decode_all_native(&code, 0);
    assert_eq!((insns.len(), failed), (1, 1));
    assert_eq!(agx_isa::stream::decode_all(&code, 0).1, 3);
    // the native text assembles back to exactly these bytes
    assert_eq!(assemble_program(&native, 0).unwrap().bytes, code);
    assert_eq!(
        assemble_at("unknown.alu (8 bytes) 0x0e80112233445566", 0).unwrap(),
        code[..8]
    );
    fixpoint(&code).unwrap();
}

#[test]
fn unknown_encoding_of_unknown_length_advances_two_bytes() {
    // no form has first byte 0x01: length unknown
    let mut code = vec![0x01, 0x23];
    code.extend(assemble_at("stop", 2).unwrap());
    let u = agx_isa::decode::unknown_encoding(agx_isa::decode::read_word(&code));
    assert_eq!((u.group, u.len), (None, None));
    let native = disassemble_listing(&code, 0, Syntax::Native);
    let lines: Vec<&str> = native.lines().collect();
    assert_eq!(lines.len(), 2, "{native}");
    assert_eq!(
        lines[0],
        "   0: 0123                 unknown (length unknown) 0x0123"
    );
    assert!(
        lines[1].starts_with("   2: ") && lines[1].contains("stop"),
        "{native}"
    );
    assert_eq!(agx_isa::stream::decode_all_native(&code, 0).1, 1);
    assert_eq!(assemble_program(&native, 0).unwrap().bytes, code);
    fixpoint(&code).unwrap();
    // an unknown encoding of known length cut off by the end of the code:
    // the walk stops before it (never reads past the input) and says so,
    // in both syntaxes
    let cut = [0x0e, 0x80, 0x11, 0x22];
    for syntax in [Syntax::Native, Syntax::Default] {
        let t = disassemble_listing(&cut, 0, syntax);
        assert_eq!(t, "", "{t}");
    }
    let mut w = agx_isa::stream::walk(&cut, 0);
    assert!(w.next().is_none());
    let c = w.cut().expect("cut");
    assert_eq!((c.addr, c.have, c.need), (0, 4, 8));
    assert_eq!(
        c.to_string(),
        "the code ends inside an instruction at 0x0: 4 of 8 bytes"
    );
}

#[test]
fn unknown_lines_that_contradict_themselves_are_refused() {
    for (text, want) in [
        ("unknown.alu (8 bytes) 0x0e80", "the length says 8 bytes"),
        (
            "unknown (length unknown) 0x0e801122",
            "the length says 2 bytes",
        ),
        ("unknown.alu (7 bytes) 0x0e80112233445566", "N even"),
        ("unknown.alu 0x0e80", "needs `(N bytes)`"),
        ("unknown.alu (8 bytes) 0e80112233445566", "expected `0x`"),
    ] {
        let e = assemble_at(text, 0).unwrap_err();
        assert!(e.message.contains(want), "{text}: {e}");
    }
}

/// Code made of random unknown encodings (of known length, and halfwords
/// whose first byte no form has), ending in `stop`: the native listing has
/// one line per encoding and assembles back to exactly the same bytes.
#[test]
fn native_round_trip_keeps_random_unknown_encodings() {
    use agx_isa::decode::{match_form, read_word, unknown_encoding};
    let mut next = crate::xorshift::xorshift64(0x9E37_79B9_7F4A_7C15);
    let (mut known, mut halves) = (0, 0);
    for _ in 0..200 {
        let mut code = Vec::new();
        let mut pieces = 0;
        while pieces < 12 {
            let mut w = [0u8; 12];
            for b in w.iter_mut() {
                *b = (next() >> 24) as u8;
            }
            if next().is_multiple_of(4) {
                // a first byte no form has: length unknown, 2 bytes
                w[0] = 0x01;
            }
            let word = read_word(&w);
            if match_form(word).is_some() {
                continue;
            }
            let u = unknown_encoding(word);
            let n = match (u.len, u.group) {
                (Some(n), _) => {
                    known += 1;
                    n
                }
                (None, None) => {
                    halves += 1;
                    2
                }
                // a group whose forms disagree on the length: the bytes
                // after it could make another form match; left out
                (None, Some(_)) => continue,
            };
            code.extend_from_slice(&w[..n as usize]);
            pieces += 1;
        }
        let end = code.len() as u32;
        code.extend(assemble_at("stop", end).unwrap());
        let t = disassemble_listing(&code, 0, Syntax::Native);
        assert_eq!(t.lines().count(), 13, "{t}");
        let unknown_lines = t.lines().filter(|l| l.contains(" unknown")).count();
        assert_eq!(unknown_lines, 12, "{t}");
        assert_eq!(assemble_program(&t, 0).unwrap().bytes, code, "{t}");
        fixpoint(&code).unwrap();
        assert_eq!(agx_isa::stream::decode_all_native(&code, 0).1, 12);
    }
    assert!(
        known > 200 && halves > 200,
        "{known} known, {halves} halfwords"
    );
}

/// Random bytes (unknown encodings of known and unknown length among
/// instructions): the native listing is a fixpoint of assemble → disassemble.
#[test]
fn native_round_trip_is_a_fixpoint_on_random_bytes() {
    let mut next = crate::xorshift::xorshift64(0x9E37_79B9_7F4A_7C15);
    let mut unknown = 0;
    for _ in 0..300 {
        let mut code: Vec<u8> = (0..96).map(|_| (next() >> 24) as u8).collect();
        // zeros after: no encoding is cut off by the end of the buffer (its
        // listing line would show only part of it)
        code.extend([0; 12]);
        let t = disassemble_listing(&code, 0, Syntax::Native);
        unknown += t.matches(" bytes) 0x").count();
        if let Err(e) = fixpoint(&code) {
            panic!("{e}\n{t}");
        }
    }
    assert!(unknown > 0, "no unknown encoding of known length was drawn");
}
