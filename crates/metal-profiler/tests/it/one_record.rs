//! One record, every view (issue 20, "Must show" 1): every figure the text
//! report, the HTML page and the DOT graph print, and every figure inside a
//! suggestion message or a bottleneck sentence of the JSON record, is a
//! number of that kernel's JSON record at the printed precision.
//!
//! Kernels: every `.bin` under `testdata/` and `examples/` (profiled with
//! `--binary`), every kernel of the shipped archives (main, `--part all`,
//! `--part prolog`), the example with a given `--trip-count` and another
//! `--chip`; the Mesa kernels of the shared corpus (`shared/corpus/mesa`)
//! when present; and every `.bin` under `$METAL_PROFILER_HELDOUT` when set
//! (the held-out set is checked the same way).
//!
//! # What is a figure (the extraction rules)
//!
//! A figure is a run of decimal digits with an optional fraction
//! (`12`, `76.70`), optionally followed by `%`, that is not part of a
//! word: the character before it is not a letter, digit, `_` or `.`, and
//! the character after it is not a letter, digit or `_` (a `.` after it is
//! allowed only when no digit follows), except that a glued `cy` unit
//! (`2cy/op`) is allowed. So register names (`r6h`, `u17`, `sr80`), hex
//! addresses (`0x34`), mnemonics (`fmadd32`), symbols (`_Z6helper…`) and
//! kernel names (`matmul_naive_16x16`) hold no figure, nor does a negative
//! address (`0x-180`).
//!
//! Where the figures are read from:
//! - text: every line, except that in the annotated disassembly only the
//!   unit column (`[SCIB 2cy/op]`) and the marks after `◀` are read (the
//!   address, the mnemonic and the operand text are instruction text);
//! - HTML: the page's text (tags removed, entities decoded) and its
//!   `title` / `aria-label` attributes (tooltips are printed figures too);
//!   `<style>` and `<script>` are not read, nor other attributes (SVG
//!   geometry, colours, bar widths), nor the address and assembly cells of
//!   the listing;
//! - DOT: the `label` and `tooltip` strings;
//! - JSON: the `message` of every suggestion (the kernel's, each
//!   function's) and every `bottleneck` sentence (the kernel's and each
//!   loop's).
//!
//! Every mismatch is reported (kernel, view, figure, the text around it),
//! with a count by kind of context, and fails the test.
//!
//! # When a figure is a number of the record
//!
//! The record's numbers are every numeric leaf of the kernel objects of the
//! `--format json` document of the same run. A figure printed with `d`
//! decimals matches a number `x` when `x` printed with `d` decimals is the
//! figure; a percentage matches `x` or `x × 100` (shares are fractions).

use crate::common;
use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::shared_data;

/// One run of the profiler: a name for the report and its arguments.
struct Case {
    name: String,
    args: Vec<String>,
}

fn bin_cases(files: &[PathBuf], cases: &mut Vec<Case>) {
    for f in files {
        let stem = f.file_stem().unwrap().to_string_lossy().to_string();
        cases.push(Case {
            name: f.display().to_string(),
            args: vec![
                "--binary".into(),
                f.display().to_string(),
                "-f".into(),
                stem,
            ],
        });
    }
}

fn cases() -> Vec<Case> {
    let root = repo();
    let mut files = shared_data::files_with_ext(&root.join("testdata"), "bin");
    files.extend(shared_data::files_with_ext(&root.join("examples"), "bin"));
    assert!(files.len() > 100, "{} kernels in testdata", files.len());
    let mut cases = Vec::new();
    bin_cases(&files, &mut cases);
    let archive = |name: &str, args: &[&str]| Case {
        name: format!("{name} {}", args.join(" ")),
        args: std::iter::once(root.join(name).display().to_string())
            .chain(args.iter().map(|s| s.to_string()))
            .collect(),
    };
    for c in [
        archive("examples/kernels.archive", &["-f", "matmul_naive"]),
        archive("examples/kernels.archive", &["-f", "mandelbrot"]),
        archive("examples/simple_call.archive", &["-f", "simple_call"]),
        archive(
            "examples/simple_call.archive",
            &["-f", "simple_call", "--part", "all"],
        ),
        archive("examples/texread.archive", &["-f", "texread"]),
        archive(
            "examples/texread.archive",
            &["-f", "texread", "--part", "prolog"],
        ),
        archive(
            "examples/kernels.archive",
            &["-f", "matmul_naive", "--trip-count", "8"],
        ),
        archive(
            "examples/kernels.archive",
            &["-f", "matmul_naive", "--trip-count", "16"],
        ),
        archive(
            "examples/kernels.archive",
            &["-f", "matmul_naive", "--chip", "M1-Max"],
        ),
    ] {
        cases.push(c);
    }
    if let Some(mesa) = shared_data::shared("corpus/mesa") {
        let more = shared_data::files_with_ext(&mesa, "bin");
        bin_cases(&more, &mut cases);
    }
    if let Some(dir) = std::env::var_os("METAL_PROFILER_HELDOUT") {
        let more = shared_data::files_with_ext(Path::new(&dir), "bin");
        assert!(!more.is_empty(), "no .bin under METAL_PROFILER_HELDOUT");
        bin_cases(&more, &mut cases);
    }
    cases
}

fn run(c: &Case, format: &str) -> String {
    let o = bin()
        .args(&c.args)
        .args(["--format", format])
        // streams with a few unknown encodings still get their report
        // (exit 4 without this flag, issue 21)
        .arg("--allow-unknown")
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{} --format {format}: {}",
        c.name,
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// A figure a view printed, with the line around it.
#[derive(Debug)]
struct Figure {
    digits: String,
    decimals: usize,
    percent: bool,
    context: String,
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The figures of `s` (see the module documentation).
fn figures(s: &str, out: &mut Vec<Figure>) {
    let cs: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < cs.len() {
        let address = i >= 3 && cs[i - 3..i] == ['0', 'x', '-'];
        if !cs[i].is_ascii_digit() || (i > 0 && (is_word(cs[i - 1]) || cs[i - 1] == '.')) || address
        {
            i += 1;
            continue;
        }
        let start = i;
        while i < cs.len() && cs[i].is_ascii_digit() {
            i += 1;
        }
        let mut decimals = 0;
        if i + 1 < cs.len() && cs[i] == '.' && cs[i + 1].is_ascii_digit() {
            i += 1;
            while i < cs.len() && cs[i].is_ascii_digit() {
                i += 1;
                decimals += 1;
            }
        }
        let end = i;
        let glued_cy =
            cs[end..].starts_with(&['c', 'y']) && cs.get(end + 2).is_none_or(|&c| !is_word(c));
        if end < cs.len() && is_word(cs[end]) && !glued_cy {
            // part of a word (`16x16`, `0x34`)
            while i < cs.len() && is_word(cs[i]) {
                i += 1;
            }
            continue;
        }
        let percent = cs.get(end) == Some(&'%');
        let a = start.saturating_sub(40);
        let b = (end + 30).min(cs.len());
        out.push(Figure {
            digits: cs[start..end].iter().collect(),
            decimals,
            percent,
            context: cs[a..b].iter().collect::<String>().trim().to_string(),
        });
    }
}

/// The text report's figures: every line, the annotated disassembly's
/// unit column and marks only.
fn text_figures(text: &str) -> Vec<Figure> {
    let mut out = Vec::new();
    let mut in_listing = false;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("── ") {
            in_listing =
                t.starts_with("── Annotated disassembly") || t.starts_with("── Disassembly");
            figures(line, &mut out);
            continue;
        }
        if in_listing {
            if let Some((unit, marks)) = listing_line(line) {
                figures(unit, &mut out);
                if let Some(m) = marks {
                    figures(m, &mut out);
                }
                continue;
            }
        }
        figures(line, &mut out);
    }
    out
}

/// An annotated-disassembly line's unit column and marks (`None` for
/// other lines).
fn listing_line(line: &str) -> Option<(&str, Option<&str>)> {
    let t = line.trim_start_matches([' ', '│']);
    let (addr, rest) = t.split_once(": ")?;
    if addr.is_empty() || !addr.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let open = rest.find('[')?;
    let close = open + rest[open..].find(']')?;
    let unit = &rest[open..=close];
    let marks = rest[close..].find('◀').map(|k| &rest[close + k..]);
    Some((unit, marks))
}

fn decode_entities(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// Removes every `<tag>…</tag>` element.
fn drop_elements(s: &str, tag: &str) -> String {
    let (open, close) = (format!("<{tag}"), format!("</{tag}>"));
    let mut out = String::new();
    let mut rest = s;
    while let Some(a) = rest.find(&open) {
        out.push_str(&rest[..a]);
        match rest[a..].find(&close) {
            Some(b) => rest = &rest[a + b + close.len()..],
            None => {
                rest = "";
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The HTML page's figures: its text and tooltips.
fn html_figures(html: &str) -> Vec<Figure> {
    let mut page = drop_elements(html, "style");
    page = drop_elements(&page, "script");
    // the listing's address and assembly cells
    let mut kept = String::new();
    let mut rest = page.as_str();
    while let Some(a) = rest.find("<td class=\"addr\">") {
        kept.push_str(&rest[..a]);
        let after_addr = &rest[a..];
        let e1 = after_addr.find("</td>").map_or(after_addr.len(), |e| e + 5);
        let after = &after_addr[e1..];
        // the next cell is the assembly text
        let e2 = after.find("</td>").map_or(after.len(), |e| e + 5);
        rest = &after[e2..];
    }
    kept.push_str(rest);
    let mut out = Vec::new();
    let mut text = String::new();
    let mut rest = kept.as_str();
    while let Some(a) = rest.find('<') {
        text.push_str(&rest[..a]);
        text.push(' ');
        let Some(b) = rest[a..].find('>') else {
            break;
        };
        let tag = &rest[a..a + b];
        for attr in ["title=\"", "aria-label=\""] {
            let mut t = tag;
            while let Some(k) = t.find(attr) {
                let v = &t[k + attr.len()..];
                let e = v.find('"').unwrap_or(v.len());
                figures(&decode_entities(&v[..e]), &mut out);
                t = &v[e..];
            }
        }
        rest = &rest[a + b + 1..];
    }
    text.push_str(rest);
    // `<title>` elements (SVG tooltips) are text already
    for line in decode_entities(&text).lines() {
        figures(line, &mut out);
    }
    out
}

/// The DOT graph's figures: its labels and tooltips.
fn dot_figures(dot: &str) -> Vec<Figure> {
    let mut out = Vec::new();
    for attr in ["label=\"", "tooltip=\""] {
        let mut rest = dot;
        while let Some(k) = rest.find(attr) {
            // (` label=` / `,label=` only, not `xlabel=`)
            let ok = k == 0 || !is_word(rest[..k].chars().last().unwrap_or(' '));
            let v = &rest[k + attr.len()..];
            let mut end = v.len();
            let mut esc = false;
            for (j, c) in v.char_indices() {
                match c {
                    '\\' if !esc => esc = true,
                    '"' if !esc => {
                        end = j;
                        break;
                    }
                    _ => esc = false,
                }
            }
            if ok {
                for piece in v[..end].split("\\n") {
                    figures(&piece.replace("\\\"", "\""), &mut out);
                }
            }
            rest = &v[end..];
        }
    }
    out
}

/// The JSON record's sentences: suggestion messages and bottlenecks.
fn record_sentence_figures(k: &Value) -> Vec<Figure> {
    let mut out = Vec::new();
    let mut sentence = |v: &Value| {
        if let Some(s) = v.as_str() {
            figures(s, &mut out);
        }
    };
    sentence(&k["bottleneck"]);
    for l in k["loops"].as_array().into_iter().flatten() {
        sentence(&l["bottleneck"]);
    }
    for s in k["suggestions"].as_array().into_iter().flatten() {
        sentence(&s["message"]);
    }
    for f in k["functions"].as_array().into_iter().flatten() {
        for s in f["suggestions"].as_array().into_iter().flatten() {
            sentence(&s["message"]);
        }
    }
    out
}

fn numbers(v: &Value, out: &mut Vec<f64>) {
    match v {
        Value::Number(n) => out.extend(n.as_f64()),
        Value::Array(a) => a.iter().for_each(|x| numbers(x, out)),
        Value::Object(o) => o.values().for_each(|x| numbers(x, out)),
        _ => {}
    }
}

/// Whether `f` is one of `nums` at its printed precision.
fn in_record(f: &Figure, nums: &[f64]) -> bool {
    let d = f.decimals;
    nums.iter().any(|&x| {
        let x = x.abs();
        format!("{x:.d$}") == f.digits || (f.percent && format!("{:.d$}", x * 100.0) == f.digits)
    })
}

/// The figure's kind of context, for the summary: its line's words up to
/// the figure, digits dropped.
fn kind(view: &str, f: &Figure) -> String {
    let before = f.context.split(&f.digits).next().unwrap_or("");
    let words: String = before
        .chars()
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
        .collect();
    let tail: String = words
        .chars()
        .rev()
        .take(24)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("{view}: …{}", tail.trim())
}

#[test]
fn every_printed_figure_is_a_number_of_the_record() {
    let cases = cases();
    let mut mismatches: Vec<String> = Vec::new();
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    let mut checked = 0usize;
    let mut clean = 0usize;
    for c in &cases {
        let doc: Value = serde_json::from_str(&run(c, "json")).unwrap();
        let kernels = doc["kernels"].as_array().unwrap();
        assert!(!kernels.is_empty(), "{}", c.name);
        let mut nums = Vec::new();
        let mut sentences = Vec::new();
        for k in kernels {
            numbers(k, &mut nums);
            sentences.extend(record_sentence_figures(k));
        }
        let views = [
            ("text", text_figures(&run(c, "text"))),
            ("html", html_figures(&run(c, "html"))),
            ("dot", dot_figures(&run(c, "dot"))),
            ("json sentence", sentences),
        ];
        let before = mismatches.len();
        for (view, figs) in &views {
            assert!(
                *view == "json sentence" || *view == "dot" || !figs.is_empty(),
                "{}: no figures read from {view}",
                c.name
            );
            for f in figs {
                checked += 1;
                if !in_record(f, &nums) {
                    *kinds.entry(kind(view, f)).or_default() += 1;
                    mismatches.push(format!(
                        "{} | {view} | {}{} | {}",
                        c.name,
                        f.digits,
                        if f.percent { "%" } else { "" },
                        f.context
                    ));
                }
            }
        }
        if mismatches.len() == before {
            clean += 1;
        }
    }
    if !mismatches.is_empty() {
        let mut msg = format!(
            "{} of {checked} printed figures are not numbers of their kernel's JSON record ({clean} of {} runs clean).\nBy kind:\n",
            mismatches.len(),
            cases.len()
        );
        let mut ks: Vec<_> = kinds.into_iter().collect();
        ks.sort_by_key(|k| std::cmp::Reverse(k.1));
        for (k, n) in ks {
            msg.push_str(&format!("  {n:>5}  {k}\n"));
        }
        msg.push_str("Every mismatch (kernel | view | figure | context):\n");
        for m in &mismatches {
            msg.push_str(m);
            msg.push('\n');
        }
        panic!("{msg}");
    }
    assert!(checked > 10_000, "{checked} figures checked");
}

#[test]
fn figures_are_read_as_documented() {
    let mut f = Vec::new();
    figures(
        "r6h (half-register index 13) 0x34 matmul_naive_16x16 ~76.70 cy 97% [SCIB    2cy/op] u17 fmadd32 x 16.",
        &mut f,
    );
    let got: Vec<(&str, bool)> = f.iter().map(|f| (f.digits.as_str(), f.percent)).collect();
    assert_eq!(
        got,
        [
            ("13", false),
            ("76.70", false),
            ("97", true),
            ("2", false),
            ("16", false)
        ]
    );
    assert!(in_record(&f[1], &[76.7]));
    assert!(!in_record(&f[1], &[76.71]));
    assert!(in_record(&f[2], &[0.9697]));
    let line = "  │         42: device_load        [MEM     1cy/op] 0, i32, x, r5, u0_u1, r5, unsigned  ◀ RAW dep +0.84 cy (on 0x3a)";
    let (unit, marks) = listing_line(line).unwrap();
    assert_eq!(unit, "[MEM     1cy/op]");
    assert_eq!(marks, Some("◀ RAW dep +0.84 cy (on 0x3a)"));
    let h = html_figures("<style>a{width:10px}</style><tr><td class=\"heat\" title=\"3.5 cy weighted\"><i style=\"width:7px\"></i></td><td class=\"addr\">    42:</td><td>device_load 0, i32</td><td class=\"unit\">MEM 1cy</td></tr>");
    let got: Vec<&str> = h.iter().map(|f| f.digits.as_str()).collect();
    assert_eq!(got, ["3.5", "1"]);
    let d = dot_figures("  b0 [label=\"B0 0x0–0x2e\\n9 insn · 20 cy · 7.3%\", fillcolor=\"#fee\", tooltip=\"2.5 cy\"];");
    let got: Vec<&str> = d.iter().map(|f| f.digits.as_str()).collect();
    assert_eq!(got, ["9", "20", "7.3", "2.5"]);
}

/// The matmul_naive example: the pipes panels show the memory
/// bandwidth the model bounds the kernel by (DRAM the busiest, not IC), and
/// the stall at `wait 0` reads the same in text and HTML.
#[test]
fn matmul_views_agree_on_pipes_and_the_hidden_stall() {
    let c = Case {
        name: "matmul_naive".into(),
        args: vec![
            repo()
                .join("examples/kernels.archive")
                .display()
                .to_string(),
            "-f".into(),
            "matmul_naive".into(),
        ],
    };
    let doc: Value = serde_json::from_str(&run(&c, "json")).unwrap();
    let k = &doc["kernels"][0];
    let dram = k["cycles"]["device_bandwidth"].as_f64().unwrap();
    assert!(dram > k["cycles"]["alu"].as_f64().unwrap());
    assert_eq!(k["bound_by"], "device_bandwidth");
    let text = run(&c, "text");
    assert!(
        text.contains(&format!("DRAM bandwidth {dram:.2}")),
        "{text}"
    );
    let html = run(&c, "html");
    let top = html
        .lines()
        .find(|l| l.starts_with("<div class=\"pipe top\">"))
        .unwrap();
    assert!(top.contains("<span>DRAM</span>"), "{top}");
    let wait = |s: &str| -> String {
        s.lines()
            .find(|l| l.contains("5a:") && l.contains("wait"))
            .unwrap()
            .to_string()
    };
    assert!(wait(&text).contains("◀ stall hidden by the other SIMD-groups"));
    let h = html.lines().find(|l| l.contains("id=\"k0-a5a\"")).unwrap();
    assert!(h.contains("◀ stall hidden by the other SIMD-groups"), "{h}");
    assert!(!h.contains("192.30"), "{h}");
}
