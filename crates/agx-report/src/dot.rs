//! `--format dot`: the control-flow graph as a Graphviz digraph, with the
//! HTML view's labels and colours (block fill = share of cycles, loops as
//! nested shaded clusters, fall-through / taken / back / call edges styled
//! apart). One output is one digraph (issue 29): several kernels or
//! functions (`--all`, `--part all`) are each a cluster of it, so `dot -Tsvg`
//! draws them all in one picture. Titles are wrapped; back and call edges do
//! not rank blocks, so each function's entry block is drawn at its top.

use crate::palette::{heat_color, text_on, TEXT_DARK};
use crate::record::{BlockOut, KernelRecord};
use crate::Profile;
use agx_analysis::cfg::EdgeKind;
use agx_analysis::timing::model::fmt_cy;
use std::fmt::Write as _;

/// A DOT double-quoted string.
fn q(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            _ => o.push(c),
        }
    }
    o.push('"');
    o
}

/// Title lines of at most this many characters (a longer clause keeps its
/// line): a one-line title made pictures 2,500-3,100 px wide.
const TITLE_WIDTH: usize = 64;

/// `text` wrapped at its clause boundaries (after "; ", ", " or ": ") into lines
/// of at most [`TITLE_WIDTH`] characters; never inside a clause, so a
/// figure keeps its unit on its line.
pub fn wrap_title(text: &str) -> String {
    let mut pieces: Vec<&str> = Vec::new();
    let mut start = 0;
    for (i, _) in text.match_indices([';', ',', ':']) {
        if text[i + 1..].starts_with(' ') {
            pieces.push(&text[start..i + 2]);
            start = i + 2;
        }
    }
    pieces.push(&text[start..]);
    let mut out = String::new();
    let mut line = 0;
    for piece in pieces {
        let n = piece.chars().count();
        if line > 0 && line + n > TITLE_WIDTH {
            let t = out.trim_end().len();
            out.truncate(t);
            out.push('\n');
            line = 0;
        }
        out.push_str(piece);
        line += n;
    }
    out.trim_end().to_string()
}

/// The whole output: one digraph. One profile is the graph itself; several
/// are a cluster each (`cluster_k0`, ...), their nodes named `k0b3`.
pub fn document(profiles: &[Profile]) -> String {
    // the figures are the record's, built once per kernel
    let recs: Vec<KernelRecord> = profiles.iter().map(KernelRecord::build).collect();
    digraph(
        profiles.len(),
        profiles.first().map_or("", |p| &p.name),
        |k| title(&recs[k]),
        |o, k, prefix, indent| body(o, &profiles[k], &recs[k], prefix, indent),
    )
}

/// One digraph of `n` kernels (`title(k)`, `body(o, k, node prefix,
/// indent)`): for one, the graph itself, named `name`; for several, a
/// cluster each.
fn digraph(
    n: usize,
    name: &str,
    title: impl Fn(usize) -> String,
    mut body: impl FnMut(&mut String, usize, &str, usize),
) -> String {
    let mut o = String::new();
    if n == 1 {
        let _ = writeln!(o, "digraph {} {{", q(name));
        let _ = writeln!(
            o,
            "  label={}; labelloc=t; fontname=\"Helvetica\";",
            q(&title(0))
        );
        o.push_str(NODE_STYLE);
        body(&mut o, 0, "", 1);
        o.push_str("}\n");
        return o;
    }
    let _ = writeln!(o, "digraph \"metal-profiler\" {{");
    o.push_str("  fontname=\"Helvetica\";\n");
    o.push_str(NODE_STYLE);
    for k in 0..n {
        let _ = writeln!(o, "  subgraph cluster_k{k} {{");
        let _ = writeln!(
            o,
            "    label={}; labelloc=t; style=solid; color=\"#9ca3af\";",
            q(&title(k))
        );
        body(&mut o, k, &format!("k{k}"), 2);
        o.push_str("  }\n");
    }
    o.push_str("}\n");
    o
}

const NODE_STYLE: &str =
    "  node [shape=box, style=\"rounded,filled\", fontname=\"Menlo\", fontsize=10];\n";

/// A kernel's title, wrapped.
fn title(rec: &KernelRecord) -> String {
    match &rec.timing {
        Some(t) => wrap_title(&format!(
            "{}: ~{} cy per SIMD-group; {}; {}",
            rec.name,
            fmt_cy(t.total_cycles),
            t.bottleneck,
            rec.trip_count_summary()
        )),
        None => rec.name.clone(),
    }
}

/// One profile's blocks, loops (clusters) and edges; node names start with
/// `prefix`.
fn body(o: &mut String, p: &Profile, rec: &KernelRecord, prefix: &str, indent: usize) {
    let pad = "  ".repeat(indent);
    // the record's blocks by index
    let mut blocks: Vec<Option<&BlockOut>> = vec![None; p.graph.cfg.blocks.len()];
    for b in rec.timing.iter().flat_map(|t| &t.blocks) {
        if let Some(x) = blocks.get_mut(b.index) {
            *x = Some(b);
        }
    }
    let max_share = blocks.iter().flatten().map(|c| c.share).fold(0.0, f64::max);
    let forest = &p.graph.loops;
    // children of each loop, and blocks directly in each loop
    let nl = forest.loops.len();
    let mut sub: Vec<Vec<usize>> = vec![Vec::new(); nl + 1];
    for (l, lp) in forest.loops.iter().enumerate() {
        sub[lp.parent.unwrap_or(nl)].push(l);
    }
    let mut own: Vec<Vec<usize>> = vec![Vec::new(); nl + 1];
    for b in 0..p.graph.cfg.blocks.len() {
        own[forest.loop_of.get(b).copied().flatten().unwrap_or(nl)].push(b);
    }
    let div = p.divergent_blocks();
    let g = Region {
        p,
        rec,
        blocks: &blocks,
        prefix,
        sub: &sub,
        own: &own,
        max_share,
        div: &div,
    };
    write_region(o, &g, nl, indent);
    let back: std::collections::HashSet<(usize, usize)> =
        forest.back_edges.iter().copied().collect();
    for (u, blk) in p.graph.cfg.blocks.iter().enumerate() {
        for e in &blk.succs {
            // back edges and calls (a recursion goes to the entry) do not
            // rank: the entry stays on top, loops read downwards
            let attrs = if back.contains(&(u, e.to)) {
                "color=\"#c0262d\", style=dashed, penwidth=2, label=\"back\", constraint=false"
            } else {
                match e.kind {
                    EdgeKind::Fallthrough => "color=\"#6b7280\"",
                    EdgeKind::Taken => "color=\"#2563eb\", label=\"taken\"",
                    EdgeKind::Call => {
                        "color=\"#7c3aed\", style=dotted, label=\"call\", constraint=false"
                    }
                    EdgeKind::CallReturn => "color=\"#6b7280\", style=dotted",
                }
            };
            let _ = writeln!(o, "{pad}{prefix}b{u} -> {prefix}b{} [{attrs}];", e.to);
        }
    }
}

/// What every region of one graph reads.
struct Region<'a> {
    p: &'a Profile,
    rec: &'a KernelRecord,
    /// The record's `blocks`, by block index.
    blocks: &'a [Option<&'a BlockOut>],
    prefix: &'a str,
    sub: &'a [Vec<usize>],
    own: &'a [Vec<usize>],
    max_share: f64,
    div: &'a [String],
}

fn write_region(o: &mut String, g: &Region<'_>, r: usize, indent: usize) {
    let Region {
        p,
        rec,
        prefix,
        sub,
        own,
        max_share,
        div,
        ..
    } = *g;
    let pad = "  ".repeat(indent);
    for &b in &own[r] {
        let blk = &p.graph.cfg.blocks[b];
        let (insns, cycles, share, per, n) = g.blocks[b].map_or((0, 0.0, 0.0, 0.0, 0.0), |c| {
            (
                c.instructions,
                c.cycles,
                c.share,
                c.cycles_per_execution,
                c.executions,
            )
        });
        let t = if max_share > 0.0 {
            share / max_share
        } else {
            0.0
        };
        let mut label = format!(
            "B{b} 0x{:x}–0x{:x}\n{} insn · {} cy · {:.1}%",
            blk.start,
            blk.last,
            insns,
            crate::html::short_cy(cycles),
            share * 100.0
        );
        let mut tip = format!("{} cy per execution × {}", fmt_cy(per), fmt_cy(n));
        // a divergent branch: both sides run for the SIMD-group (issue 22)
        let d = div.get(b).map(String::as_str).unwrap_or("");
        let extra = if d.is_empty() {
            ""
        } else {
            label.push_str("\n◆ divergent branch");
            tip.push('\n');
            tip.push_str(d);
            ", color=\"#d97706\", penwidth=2.5"
        };
        // (Graphviz's text is black: named only where white reads better)
        let fill = heat_color(t);
        let font = match text_on(&fill) {
            TEXT_DARK => String::new(),
            c => format!(", fontcolor=\"{c}\""),
        };
        let _ = writeln!(
            o,
            "{pad}{prefix}b{b} [label={}, fillcolor=\"{fill}\"{font}, tooltip={}{extra}];",
            q(&label),
            q(&tip)
        );
    }
    for &l in &sub[r] {
        let lp = &p.graph.loops.loops[l];
        // (the model's loop of forest loop `l`, by its record `index`)
        let trip = rec
            .trip_of_timed_loop(p.graph.loop_timing.get(l).copied().flatten())
            .map(|n| format!(", × {n}"))
            .unwrap_or_default();
        let _ = writeln!(o, "{pad}subgraph cluster_{prefix}loop{l} {{");
        let _ = writeln!(
            o,
            "{pad}  label={}; style=\"filled,dashed\"; color=\"#6366f1\"; fillcolor=\"#6366f112\"; fontsize=10;",
            q(&format!(
                "loop 0x{:x}–0x{:x} (depth {}{trip})",
                lp.start, lp.end, lp.depth
            ))
        );
        write_region(o, g, l, indent + 1);
        let _ = writeln!(o, "{pad}}}");
    }
}

// ---- fold: the graph of a kernel no timing model applies to ----

/// The DOT of kernels no timing model applies to (Apple9; records with
/// `untimed` sections): main's CFG blocks with their address ranges and
/// instruction counts (the record's `blocks[]`), loops as nested clusters
/// (`loops[]`), no cycle figure. One record is the graph itself; several
/// are a cluster each, as [`document`] draws timed kernels.
pub fn untimed_document(records: &[KernelRecord]) -> String {
    digraph(
        records.len(),
        records.first().map_or("", |r| &r.name),
        |k| untimed_title(&records[k]),
        |o, k, prefix, indent| untimed_body(o, &records[k], prefix, indent),
    )
}

fn untimed_title(r: &KernelRecord) -> String {
    let Some(u) = r.untimed.as_deref() else {
        return r.name.clone();
    };
    wrap_title(&format!(
        "{}: {} code{}; {} instructions, {} code bytes; no timing model: counts and structure, no cycle figure",
        r.name,
        u.isa_name,
        r.gpu.as_deref().map_or(String::new(), |g| format!(" ({g})")),
        r.instructions,
        r.code_bytes
    ))
}

fn untimed_body(o: &mut String, r: &KernelRecord, prefix: &str, indent: usize) {
    let Some(u) = r.untimed.as_deref() else {
        return;
    };
    // blocks directly in each loop (the last slot: outside loops), and the
    // loops directly inside each
    let nl = u.loops.len();
    let mut own: Vec<Vec<usize>> = vec![Vec::new(); nl + 1];
    for b in &u.blocks {
        own[b.in_loop.filter(|&l| l < nl).unwrap_or(nl)].push(b.index);
    }
    let mut sub: Vec<Vec<usize>> = vec![Vec::new(); nl + 1];
    for l in &u.loops {
        sub[l.parent.filter(|&p| p < nl).unwrap_or(nl)].push(l.index);
    }
    untimed_region(o, u, prefix, &own, &sub, nl, indent);
    let pad = "  ".repeat(indent);
    for b in &u.blocks {
        for &t in &b.successors {
            // a back edge does not rank, so the entry stays on top
            let attrs = if b.back_successors.contains(&t) {
                "color=\"#c0262d\", style=dashed, penwidth=2, label=\"back\", constraint=false"
            } else {
                "color=\"#6b7280\""
            };
            let _ = writeln!(o, "{pad}{prefix}b{} -> {prefix}b{t} [{attrs}];", b.index);
        }
    }
}

fn untimed_region(
    o: &mut String,
    u: &crate::untimed::UntimedSections,
    prefix: &str,
    own: &[Vec<usize>],
    sub: &[Vec<usize>],
    r: usize,
    indent: usize,
) {
    let pad = "  ".repeat(indent);
    for &k in &own[r] {
        let b = &u.blocks[k];
        let mut label = format!(
            "B{k} 0x{:x}–0x{:x}\n{} insn",
            b.start, b.end, b.instructions
        );
        // a divergent branch ends the block: both sides run (as the timed
        // view marks it)
        let divergent = u
            .functions
            .iter()
            .flat_map(|f| &f.branches)
            .find(|x| x.at == b.end && x.uniform == Some(false));
        let extra = match divergent {
            Some(x) => {
                label.push_str("\n◆ divergent branch");
                format!(
                    ", tooltip={}, color=\"#d97706\", penwidth=2.5",
                    q(&x.reason)
                )
            }
            None => String::new(),
        };
        let _ = writeln!(
            o,
            "{pad}{prefix}b{k} [label={}, fillcolor=\"#f3f4f6\"{extra}];",
            q(&label)
        );
    }
    for &l in &sub[r] {
        let lp = &u.loops[l];
        let _ = writeln!(o, "{pad}subgraph cluster_{prefix}loop{l} {{");
        let _ = writeln!(
            o,
            "{pad}  label={}; style=\"filled,dashed\"; color=\"#6366f1\"; fillcolor=\"#6366f112\"; fontsize=10;",
            q(&format!(
                "loop {l} 0x{:x}–0x{:x} (depth {}, {} insn)",
                lp.start, lp.end, lp.depth, lp.instructions
            ))
        );
        untimed_region(o, u, prefix, own, sub, l, indent + 1);
        let _ = writeln!(o, "{pad}}}");
    }
}

// ---- end fold ----
