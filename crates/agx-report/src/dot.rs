//! `--format dot`: the control-flow graph as a Graphviz digraph, with the
//! HTML view's labels and colours (block fill = share of cycles, loops as
//! nested shaded clusters, fall-through / taken / back / call edges styled
//! apart). Several kernels give one digraph each, one after another
//! (`dot` renders each; `gvpack` can merge them).

use crate::layout::heat_color;
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

/// Every profile's digraph.
pub fn document(profiles: &[Profile]) -> String {
    let mut o = String::new();
    for p in profiles {
        digraph(&mut o, p);
    }
    o
}

/// One kernel's CFG.
pub fn digraph(o: &mut String, p: &Profile) {
    let _ = writeln!(o, "digraph {} {{", q(&p.name));
    let _ = writeln!(
        o,
        "  label={}; labelloc=t; fontname=\"Helvetica\";",
        q(&format!(
            "{}: ~{} cy per SIMD-group; {}; unknown trip counts = {}",
            p.name,
            fmt_cy(p.timing.total_cycles),
            p.timing.bottleneck,
            p.options.trip_count
        ))
    );
    o.push_str("  node [shape=box, style=\"rounded,filled\", fontname=\"Menlo\", fontsize=10];\n");
    let max_share = p
        .graph
        .block_costs
        .iter()
        .map(|c| c.share)
        .fold(0.0, f64::max);
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
    write_region(o, p, nl, &sub, &own, (max_share, &div), 1);
    let back: std::collections::HashSet<(usize, usize)> =
        forest.back_edges.iter().copied().collect();
    for (u, blk) in p.graph.cfg.blocks.iter().enumerate() {
        for e in &blk.succs {
            let attrs = if back.contains(&(u, e.to)) {
                "color=\"#c0262d\", style=dashed, penwidth=2, label=\"back\""
            } else {
                match e.kind {
                    EdgeKind::Fallthrough => "color=\"#6b7280\"",
                    EdgeKind::Taken => "color=\"#2563eb\", label=\"taken\"",
                    EdgeKind::Call => "color=\"#7c3aed\", style=dotted, label=\"call\"",
                    EdgeKind::CallReturn => "color=\"#6b7280\", style=dotted",
                }
            };
            let _ = writeln!(o, "  b{u} -> b{} [{attrs}];", e.to);
        }
    }
    o.push_str("}\n");
}

fn write_region(
    o: &mut String,
    p: &Profile,
    r: usize,
    sub: &[Vec<usize>],
    own: &[Vec<usize>],
    (max_share, div): (f64, &[String]),
    indent: usize,
) {
    let pad = "  ".repeat(indent);
    for &b in &own[r] {
        let blk = &p.graph.cfg.blocks[b];
        let c = p.graph.block_costs.get(b).copied().unwrap_or_default();
        let t = if max_share > 0.0 {
            c.share / max_share
        } else {
            0.0
        };
        let mut label = format!(
            "B{b} 0x{:x}–0x{:x}\n{} insn · {} cy · {:.1}%",
            blk.start,
            blk.last,
            c.instructions,
            crate::html::short_cy(c.cycles),
            c.share * 100.0
        );
        let mut tip = format!(
            "{} cy per execution × {}",
            fmt_cy(c.cycles_per_execution),
            fmt_cy(c.executions)
        );
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
        let _ = writeln!(
            o,
            "{pad}b{b} [label={}, fillcolor=\"{}\", tooltip={}{extra}];",
            q(&label),
            heat_color(t),
            q(&tip)
        );
    }
    for &l in &sub[r] {
        let lp = &p.graph.loops.loops[l];
        let trip = p
            .graph
            .timing_of_loop(&p.timing, l)
            .map(|t| format!(", × {}", t.trip_count))
            .unwrap_or_default();
        let _ = writeln!(o, "{pad}subgraph cluster_loop{l} {{");
        let _ = writeln!(
            o,
            "{pad}  label={}; style=\"filled,dashed\"; color=\"#6366f1\"; fillcolor=\"#6366f112\"; fontsize=10;",
            q(&format!(
                "loop 0x{:x}–0x{:x} (depth {}{trip})",
                lp.start, lp.end, lp.depth
            ))
        );
        write_region(o, p, l, sub, own, (max_share, div), indent + 1);
        let _ = writeln!(o, "{pad}}}");
    }
}
