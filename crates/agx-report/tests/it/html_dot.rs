//! The HTML page and the Graphviz output on every kernel of the corpus:
//! the page is self-contained (nothing fetched), has one SVG box per basic
//! block, one region per loop, every instruction address as an anchor, and
//! a layout without overlapping boxes; Graphviz `dot` accepts every DOT
//! graph. Structure snapshots (insta) of a few pages.
//!
//! Kernels: testdata/mesa, testdata/archives/real, and the full shared
//! corpus (`../shared/corpus/{mesa,real}` next to the repo). Under `CI=true`
//! a missing shared corpus or a missing `dot` binary fails the test.

use agx_isa::asm::assemble_insns;
use agx_report::{dot, html, layout, Options, Profile};
use std::path::{Path, PathBuf};

use crate::common::{profile, repo};
use crate::shared_data;

/// (name, code) of every corpus kernel available.
fn corpus() -> Vec<(String, Vec<u8>)> {
    let mut v = Vec::new();
    let add_mesa = |dir: &Path, v: &mut Vec<(String, Vec<u8>)>| {
        for d in shared_data::subdirs(dir) {
            let n = d.file_name().unwrap().to_string_lossy().into_owned();
            if let Ok(b) = std::fs::read(d.join(format!("{n}.bin"))) {
                v.push((format!("mesa/{n}"), b));
            }
        }
        dir.is_dir()
    };
    add_mesa(&repo().join("testdata/mesa"), &mut v);
    let add_bins = |dir: &Path, v: &mut Vec<(String, Vec<u8>)>| {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        let mut files: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        files.sort();
        for f in files {
            if f.extension().is_some_and(|e| e == "bin") {
                let name = f.file_stem().unwrap().to_string_lossy().into_owned();
                v.push((format!("real/{name}"), std::fs::read(&f).unwrap()));
            }
        }
    };
    add_bins(&repo().join("testdata/archives/real"), &mut v);
    let shared = shared_data::shared_root().join("corpus");
    let have_shared = add_mesa(&shared.join("mesa"), &mut v);
    if let Ok(rd) = std::fs::read_dir(shared.join("real")) {
        let mut dirs: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        dirs.sort();
        for d in dirs {
            add_bins(&d, &mut v);
        }
    }
    if !have_shared {
        // a panic under CI=true; else the testdata kernels only
        shared_data::skip("../shared/corpus/mesa is missing: checked the in-repo kernels only");
    }
    v
}

fn count(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

/// The checks every page must pass, for any kernel.
fn check_page(name: &str, p: &Profile, page: &str) {
    assert!(page.starts_with("<!DOCTYPE html>"), "{name}");
    assert!(page.trim_end().ends_with("</html>"), "{name}");
    // self-contained: no external resources, no URL but the SVG namespace
    for bad in ["<link", " src=", "@import", "url(http", "https://"] {
        assert!(!page.contains(bad), "{name}: page contains {bad:?}");
    }
    assert_eq!(
        count(page, "http://"),
        count(page, "xmlns=\"http://www.w3.org/2000/svg\""),
        "{name}: a URL other than the SVG namespace"
    );
    assert!(page.contains("<svg class=\"cfg\""), "{name}: no CFG");
    assert_eq!(
        count(page, "<g class=\"blk\""),
        p.graph.cfg.blocks.len(),
        "{name}: one box per basic block"
    );
    assert_eq!(
        count(page, "<rect class=\"loop\""),
        p.graph.loops.loops.len(),
        "{name}: one region per loop"
    );
    for i in &p.insns {
        assert!(
            page.contains(&format!("<tr id=\"k0-a{:x}\"", i.addr)),
            "{name}: instruction 0x{:x} missing",
            i.addr
        );
    }
    for s in &p.suggestions {
        assert!(
            page.contains(&format!("href=\"#k0-a{:x}\"", s.offset)),
            "{name}: suggestion link"
        );
    }
    let (lay, _) = html::graph_layout(p, &agx_report::KernelRecord::build(p));
    assert!(!lay.has_overlaps(), "{name}: overlapping boxes");
    // edges routed around labels and boxes, labels clear of everything
    let broken = lay.crossings();
    assert!(broken.is_empty(), "{name}: {broken:#?}");
    // every loop back edge is drawn as one, and every CFG edge is drawn
    for &(u, v) in &p.graph.loops.back_edges {
        assert!(
            lay.edges
                .iter()
                .any(|e| e.from == u && e.to == v && e.style == layout::EdgeStyle::Back),
            "{name}: back edge {u}->{v}"
        );
    }
    assert_eq!(
        lay.edges.len(),
        p.graph.cfg.edge_count(),
        "{name}: edges drawn"
    );
    // every block inside the region of each loop containing it
    for (l, r) in lay.loops.iter().enumerate() {
        for (b, br) in lay.blocks.iter().enumerate() {
            if p.graph.loops.contains(l, b) {
                assert!(
                    br.x >= r.x
                        && br.right() <= r.right()
                        && br.y >= r.y
                        && br.bottom() <= r.bottom(),
                    "{name}: block {b} outside its loop {l}"
                );
            } else {
                let inside =
                    br.x < r.right() && r.x < br.right() && br.y < r.bottom() && r.y < br.bottom();
                assert!(
                    !inside,
                    "{name}: block {b} drawn over loop {l} it is not in"
                );
            }
        }
    }
}

#[test]
fn every_corpus_kernel_renders_a_complete_page() {
    let kernels = corpus();
    assert!(kernels.len() >= 37, "{} kernels", kernels.len());
    for (name, code) in &kernels {
        let p = profile(name, code);
        let page = html::document(std::slice::from_ref(&p));
        check_page(name, &p, &page);
    }
}

/// A branchy kernel much larger than the corpus ones: 40 nested and
/// sequential loops with if/else diamonds.
fn big_kernel() -> Vec<agx_isa::Instruction> {
    let mut s = String::new();
    for i in 0..20 {
        s.push_str(&format!("outer{i}:\nfadd32 r4, r1, r2\n"));
        s.push_str(&format!("jmp_exec_none skip{i}\nfmul32 r5, r4, r4\n"));
        s.push_str(&format!("skip{i}:\ninner{i}:\nfadd32 r6, r5, r1\n"));
        s.push_str(&format!("jmp_exec_none other{i}\nfmul32 r7, r6, r6\n"));
        s.push_str(&format!("other{i}:\njmp_exec_any inner{i}\n"));
        s.push_str(&format!("fadd32 r8, r7, r1\njmp_exec_any outer{i}\n"));
    }
    s.push_str("stop\n");
    assemble_insns(&s).unwrap()
}

#[test]
fn large_branchy_kernel_lays_out_without_overlaps() {
    let insns = big_kernel();
    let p = Profile::build("big".into(), None, insns, None, vec![], &Options::default());
    assert!(
        p.graph.cfg.blocks.len() >= 100,
        "{} blocks",
        p.graph.cfg.blocks.len()
    );
    assert_eq!(p.graph.loops.loops.len(), 40);
    let page = html::document(std::slice::from_ref(&p));
    check_page("big", &p, &page);
    let (lay, _) = html::graph_layout(&p, &agx_report::KernelRecord::build(&p));
    // layered: sequential loops stack, so the graph is taller than wide
    assert!(lay.height > lay.width, "{} x {}", lay.width, lay.height);
    let backs = lay
        .edges
        .iter()
        .filter(|e| e.style == layout::EdgeStyle::Back)
        .count();
    assert_eq!(backs, 40, "one back edge per loop");
}

/// Arbitrary bytes decode to arbitrary control flow (branches into the
/// middle of blocks, irreducible regions, code without `stop`): the views
/// must still render complete pages and never panic. Corpus kernels spliced
/// with random bytes, from a fixed-seed generator.
#[test]
fn random_code_renders_without_panics() {
    let mut next = crate::xorshift::xorshift64(0x9e37_79b9_7f4a_7c15);
    let base = std::fs::read(repo().join("testdata/mesa/cf_mandelbrot/cf_mandelbrot.bin")).unwrap();
    let mut irreducible = 0;
    for round in 0..300 {
        let mut code = base.clone();
        let n = 1 + (next() % 24) as usize;
        for _ in 0..n {
            let i = (next() as usize) % code.len();
            code[i] = next() as u8;
        }
        if round % 3 == 0 {
            code.extend((0..(next() % 200)).map(|_| next() as u8));
        }
        let p = profile(&format!("random{round}"), &code);
        if !p.graph.loops.irreducible.is_empty() {
            irreducible += 1;
        }
        let page = html::document(std::slice::from_ref(&p));
        check_page(&format!("random{round}"), &p, &page);
        let text = dot::document(std::slice::from_ref(&p));
        assert!(text.starts_with("digraph "));
    }
    eprintln!("{irreducible} of 300 random kernels had irreducible regions");
}

#[test]
fn irreducible_cycle_is_laid_out_and_its_retreating_edge_drawn_up() {
    let insns = assemble_insns(
        "jmp_exec_none b\na:\nfadd32 r4, r1, r2\nb:\nfadd32 r5, r1, r2\njmp_exec_any a\nstop\n",
    )
    .unwrap();
    let p = Profile::build("irr".into(), None, insns, None, vec![], &Options::default());
    assert_eq!(p.graph.loops.irreducible.len(), 1, "an irreducible region");
    let page = html::document(std::slice::from_ref(&p));
    check_page("irr", &p, &page);
    let (lay, _) = html::graph_layout(&p, &agx_report::KernelRecord::build(&p));
    let up: Vec<_> = lay
        .edges
        .iter()
        .filter(|e| e.style == layout::EdgeStyle::Back)
        .collect();
    assert_eq!(up.len(), 1, "{:?}", lay.edges);
    // drawn upwards: it ends above where it starts
    let e = up[0];
    assert!(e.points.last().unwrap().1 < e.points[0].1);
}

#[test]
fn empty_code_renders() {
    let p = Profile::build(
        "empty".into(),
        None,
        vec![],
        None,
        vec![],
        &Options::default(),
    );
    let page = html::document(std::slice::from_ref(&p));
    check_page("empty", &p, &page);
    assert!(dot::document(&[p]).starts_with("digraph \"empty\" {"));
}

#[test]
fn several_kernels_share_one_page_with_an_index() {
    let a = profile(
        "first",
        &std::fs::read(repo().join("testdata/mesa/cf_mandelbrot/cf_mandelbrot.bin")).unwrap(),
    );
    let b = profile(
        "second",
        &std::fs::read(repo().join("testdata/mesa/ew_relu_f32/ew_relu_f32.bin")).unwrap(),
    );
    let page = html::document(&[a.clone(), b.clone()]);
    assert!(page.contains("<nav class=\"index\">"));
    assert!(page.contains("<a href=\"#k0\">first</a>"));
    assert!(page.contains("<a href=\"#k1\">second</a>"));
    assert_eq!(
        count(&page, "<g class=\"blk\""),
        a.graph.cfg.blocks.len() + b.graph.cfg.blocks.len()
    );
    assert_eq!(count(&page, "<section class=\"kernel\""), 2);
    // ids are unique on the page, and every in-page link has its target
    let ids: Vec<&str> = page
        .split(" id=\"")
        .skip(1)
        .map(|x| &x[..x.find('"').unwrap()])
        .collect();
    let unique: std::collections::HashSet<&str> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "duplicate ids");
    assert!(ids.iter().all(|i| !i.contains('{')), "unformatted id");
    for link in page.split("href=\"#").skip(1) {
        let id = &link[..link.find('"').unwrap()];
        assert!(unique.contains(id), "link to #{id} has no target");
    }
    // one kernel: no index
    assert!(!html::document(&[a]).contains("<nav class=\"index\">"));
}

/// Kind of an anchor id: `k3-a1c0` → `k-a`, `k0-b2` → `k-b`, `k0-cfg` → `k-cfg`.
fn id_kind(id: &str) -> String {
    let Some(rest) = id.strip_prefix('k') else {
        return id.to_string();
    };
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return id.to_string();
    }
    let tail = &rest[digits..];
    match tail.strip_prefix('-') {
        Some(t) if t.len() > 1 && t[1..].chars().all(|c| c.is_ascii_hexdigit()) => {
            format!("k-{}", &t[..1])
        }
        Some(t) => format!("k-{t}"),
        None => "k".to_string(),
    }
}

/// An element of the outline: its label and children.
#[derive(PartialEq)]
struct El {
    label: String,
    kids: Vec<El>,
}

/// Tag outline of a page: element names with id kind and class, text
/// dropped, CSS and JS bodies elided, runs of identical sibling subtrees
/// folded (`×N`). What the structure snapshots store.
fn outline(page: &str) -> String {
    let mut stack: Vec<El> = vec![El {
        label: String::new(),
        kids: Vec::new(),
    }];
    let mut rest = page;
    while let Some(i) = rest.find('<') {
        rest = &rest[i..];
        let end = rest.find('>').unwrap_or(rest.len() - 1);
        let tag = &rest[1..end];
        rest = &rest[end + 1..];
        if tag.starts_with('!') {
            continue;
        }
        if tag.starts_with('/') {
            if stack.len() > 1 {
                let el = stack.pop().unwrap();
                stack.last_mut().unwrap().kids.push(el);
            }
            continue;
        }
        let name = tag
            .split_whitespace()
            .next()
            .unwrap_or("")
            .trim_end_matches('/');
        let attr = |key: &str| -> Option<String> {
            let k = format!(" {key}=\"");
            tag.find(&k).map(|p| {
                let v = &tag[p + k.len()..];
                v[..v.find('"').unwrap_or(v.len())].to_string()
            })
        };
        let mut label = name.to_string();
        if let Some(id) = attr("id") {
            label.push_str(&format!("#{}", id_kind(&id)));
        }
        if let Some(c) = attr("class") {
            label.push_str(&format!(".{}", c.replace(' ', ".")));
        }
        let el = El {
            label,
            kids: Vec::new(),
        };
        if matches!(name, "style" | "script") {
            let close = format!("</{name}>");
            let p = rest.find(&close).map_or(rest.len(), |p| p + close.len());
            rest = &rest[p..];
            stack.last_mut().unwrap().kids.push(el);
            continue;
        }
        let void = tag.ends_with('/') || matches!(name, "meta" | "br" | "img" | "hr" | "input");
        if void {
            stack.last_mut().unwrap().kids.push(el);
        } else {
            stack.push(el);
        }
    }
    while stack.len() > 1 {
        let el = stack.pop().unwrap();
        stack.last_mut().unwrap().kids.push(el);
    }
    fn write(out: &mut String, kids: &[El], depth: usize) {
        let mut i = 0;
        while i < kids.len() {
            let mut j = i + 1;
            while j < kids.len() && kids[j] == kids[i] {
                j += 1;
            }
            out.push_str(&"  ".repeat(depth));
            out.push_str(&kids[i].label);
            if j - i > 1 {
                out.push_str(&format!("  ×{}", j - i));
            }
            out.push('\n');
            write(out, &kids[i].kids, depth + 1);
            i = j;
        }
    }
    let mut out = String::new();
    write(&mut out, &stack[0].kids, 0);
    out
}

#[test]
fn html_structure_snapshots() {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path(repo().join("crates/agx-report/tests/snapshots"));
    s.set_prepend_module_to_snapshot(false);
    s.bind(|| {
        for name in ["conv2d_kxk_nested", "cf_early_return"] {
            let code =
                std::fs::read(repo().join(format!("testdata/mesa/{name}/{name}.bin"))).unwrap();
            let p = profile(name, &code);
            insta::assert_snapshot!(format!("html__{name}"), outline(&html::document(&[p])));
        }
    });
}

#[test]
fn dot_output_of_every_corpus_kernel_is_accepted_by_graphviz() {
    if !crate::graphviz::have_dot() {
        return;
    }
    let kernels = corpus();
    for (name, code) in &kernels {
        let p = profile(name, code);
        let text = dot::document(std::slice::from_ref(&p));
        assert_eq!(
            count(&text, " [label=\"B"),
            p.graph.cfg.blocks.len(),
            "{name}"
        );
        assert_eq!(
            count(&text, "subgraph cluster_loop"),
            p.graph.loops.loops.len(),
            "{name}"
        );
        let svg = crate::graphviz::graphviz("svg", &text);
        let svg = String::from_utf8_lossy(&svg);
        assert_eq!(
            count(&svg, "class=\"node\""),
            p.graph.cfg.blocks.len(),
            "{name}"
        );
    }
}
