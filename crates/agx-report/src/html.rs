//! The HTML report (`--format html`): one self-contained page (inline CSS,
//! JS and SVG; nothing fetched) with, per kernel, the header and timing
//! table, an occupancy gauge, per-pipe bars, the bound and the cost
//! breakdown, the control-flow graph (see [`crate::layout`]), the
//! suggestions and the annotated disassembly. Several kernels share one
//! page with an index. Like the other views it prints the kernel's
//! [`KernelRecord`] (its instructions' rows: [`crate::record::FunctionRows`])
//! and computes nothing itself; the [`Profile`] gives the instructions'
//! text and the graph's layout (CFG, loop forest, the bars' unrounded
//! lengths).
//!
//! Anchors (stable, used by the tests): kernel `k{K}`, graph node
//! `k{K}-n{B}`, block in the listing `k{K}-b{B}`, instruction `k{K}-a{ADDR:x}`.

use crate::layout::{self, Layout};
use crate::palette;
use crate::record::{FunctionRows, KernelRecord, Loop, StallMark, Timed};
use crate::Profile;
use agx_analysis::timing::model::fmt_cy;
use agx_analysis::timing::{bound_label, PartKind, Severity};
use std::fmt::Write as _;

const CSS: &str = r#"
:root{--fg:#1d2330;--dim:#6b7280;--line:#d9dde5;--bg:#fbfbfd;--acc:#2563eb;--bad:#c0262d;--warn:#b45309;--good:#15803d}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header.page{padding:14px 24px;background:#1d2330;color:#fff}
header.page h1{margin:0;font-size:18px;font-weight:600}
header.page .sub{color:#c7cbd4;font-size:12px}
nav.index{padding:10px 24px;background:#eef1f6;border-bottom:1px solid var(--line)}
nav.index ol{margin:4px 0;padding-left:22px}
section.kernel{padding:8px 24px 28px;border-bottom:3px solid var(--line)}
h2{font-size:20px;margin:14px 0 6px}
h3{font-size:15px;margin:18px 0 6px;color:#374151}
table{border-collapse:collapse}
table.meta td{padding:1px 12px 1px 0;vertical-align:top}
table.meta td:first-child{color:var(--dim);white-space:nowrap}
table.grid{font-size:13px}
table.grid th,table.grid td{border:1px solid var(--line);padding:3px 8px;text-align:right}
table.grid th{background:#eef1f6}
table.grid td.l,table.grid th.l{text-align:left}
.cards{display:flex;flex-wrap:wrap;gap:14px;margin-top:10px}
.card{background:#fff;border:1px solid var(--line);border-radius:8px;padding:10px 14px;min-width:260px}
.card h4{margin:0 0 6px;font-size:13px;color:var(--dim);font-weight:600;text-transform:uppercase;letter-spacing:.04em}
.pipe{display:grid;grid-template-columns:46px 220px 70px;align-items:center;gap:6px;font-size:13px}
.pipe .bar{height:12px;background:#eef1f6;border-radius:3px;overflow:hidden}
.pipe .bar i{display:block;height:100%;background:var(--acc)}
.pipe.top .bar i{background:var(--bad)}
.stack{display:flex;height:14px;width:300px;border-radius:3px;overflow:hidden;background:#eef1f6;margin:4px 0 8px}
.stack i{display:block;height:100%;border-right:1px solid #fff}
.bound{font-weight:600}
.graph{overflow:auto;max-height:85vh;width:fit-content;max-width:100%;border:1px solid var(--line);background:#fff;border-radius:8px}
.graph svg{display:block}
h3 .zoom{margin-left:12px;font-weight:400}
h3 .zoom button{font:12px system-ui,sans-serif;margin-right:4px;padding:0 8px;border:1px solid var(--line);background:#fff;color:var(--fg);border-radius:4px;cursor:pointer}
svg.cfg text{font:11px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
svg.cfg .blk rect{stroke:#4b5563;stroke-width:1}
svg.cfg .blk[data-divergent] rect{stroke:#d97706;stroke-width:2.5;stroke-dasharray:5 2}
svg.cfg a:hover rect,svg.cfg .blk.hl rect{stroke:var(--acc);stroke-width:3}
svg.cfg .loop{stroke:#6366f1;stroke-opacity:.55;stroke-dasharray:4 3}
svg.cfg .loop-label{font-size:10px}
svg.cfg path.e{fill:none;stroke-width:1.4}
svg.cfg path.fallthrough{stroke:#6b7280}
svg.cfg path.taken{stroke:#2563eb}
svg.cfg path.back{stroke:#c0262d;stroke-width:2;stroke-dasharray:6 3}
svg.cfg path.call{stroke:#7c3aed;stroke-dasharray:2 3}
svg.cfg path.call-return{stroke:#6b7280;stroke-dasharray:2 3}
.legend{font-size:12px;color:var(--dim);margin:4px 0}
.legend span{margin-right:14px}
.legend b{display:inline-block;width:22px;height:0;border-top:2px solid;vertical-align:middle;margin-right:4px}
table.asm{font:12px/1.35 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;width:100%}
table.asm td{padding:0 8px 0 0;white-space:pre;vertical-align:top}
table.asm tr.bh td{padding-top:8px;color:var(--acc);font-weight:600;font-family:system-ui,sans-serif;font-size:12px}
table.asm tr.bh a{color:var(--acc);font-weight:400;margin-left:10px}
table.asm td.heat{width:64px}
table.asm td.heat i{display:inline-block;height:10px;background:#de2d26;vertical-align:middle}
table.asm td.addr{color:var(--dim)}
table.asm td.unit{color:#374151}
table.asm td.depth{color:#6366f1}
table.asm .raw{color:var(--warn)}
table.asm .stall{color:var(--bad);font-weight:600}
table.asm tr:target td,table.asm tr.hl td{background:#fde68a}
ul.sugg{padding-left:18px}
.sev{display:inline-block;min-width:54px;text-align:center;border-radius:3px;font-size:11px;font-weight:600;text-transform:uppercase;color:#fff}
.sev.high{background:var(--bad)}.sev.medium{background:#b45309}.sev.low{background:var(--good)}
a{color:var(--acc)}
.dim{color:var(--dim)}
"#;

const JS: &str = r#"
(function(){
  function mark(){
    document.querySelectorAll('.hl').forEach(function(e){e.classList.remove('hl');});
    var id=decodeURIComponent(location.hash.slice(1));
    if(!id)return;
    var m=/^(k\d+)-[bn](\d+)$/.exec(id);
    if(!m)return;
    var n=document.getElementById(m[1]+'-n'+m[2]);
    if(n)n.classList.add('hl');
    document.querySelectorAll('tr[data-block="'+m[1]+'-'+m[2]+'"]').forEach(function(r){r.classList.add('hl');});
  }
  window.addEventListener('hashchange',mark);
  mark();
  // the graph scaled to its panel: the section's width, between ZMIN and
  // ZMAX of its natural size (wider graphs scroll); − fit + zoom
  var ZMIN=0.6,ZMAX=1.6;
  function size(g){
    var s=g.querySelector('svg.cfg');
    if(!s||!s.viewBox.baseVal)return;
    var w=s.viewBox.baseVal.width,h=s.viewBox.baseVal.height,z=g.zoom;
    if(!z){
      var p=g.parentElement,cs=getComputedStyle(p);
      var avail=p.clientWidth-parseFloat(cs.paddingLeft)-parseFloat(cs.paddingRight)-2;
      z=Math.max(ZMIN,Math.min(ZMAX,avail/w));
    }
    s.setAttribute('width',(w*z).toFixed(0));
    s.setAttribute('height',(h*z).toFixed(0));
  }
  document.querySelectorAll('div.graph').forEach(function(g){
    var bar=document.createElement('span');
    bar.className='zoom';
    [['\u2212',0.8],['fit',0],['+',1.25]].forEach(function(b){
      var e=document.createElement('button');
      e.type='button';
      e.textContent=b[0];
      e.addEventListener('click',function(){
        var s=g.querySelector('svg.cfg');
        var cur=s.getAttribute('width')/s.viewBox.baseVal.width;
        g.zoom=b[1]?Math.max(0.2,Math.min(4,cur*b[1])):0;
        size(g);
      });
      bar.appendChild(e);
    });
    var h=g.previousElementSibling;
    while(h&&h.tagName!=='H3')h=h.previousElementSibling;
    if(h)h.appendChild(bar);
    size(g);
  });
  window.addEventListener('resize',function(){document.querySelectorAll('div.graph').forEach(size);});
  document.documentElement.setAttribute('data-ready','1');
})();
"#;

/// Escapes text for HTML (element content and quoted attributes).
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

/// The page's title.
fn title(profiles: &[Profile]) -> String {
    match profiles {
        [p] => format!("metal-profiler: {}", p.name),
        _ => format!(
            "metal-profiler: {}",
            crate::profile::count_title(profiles.iter().map(|p| p.part))
        ),
    }
}

/// The whole page for `profiles` (one section each; an index when more
/// than one).
pub fn document(profiles: &[Profile]) -> String {
    let n_insns: usize = profiles.iter().map(|p| p.insns.len()).sum();
    let mut o = String::with_capacity(16384 + n_insns * 400);
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        esc(&title(profiles))
    );
    body(&mut o, profiles);
    let _ = write!(o, "<script>{JS}</script>\n</body>\n</html>\n");
    o
}

/// The report as a fragment for another page (a notebook's output:
/// Python's `_repr_html_`): the body of [`document`] in one `div` whose
/// `id` (a hash of its content) scopes every style rule ([`scoped_css`]),
/// so nothing outside it is restyled; no `<html>`, `<head>`, `<body>` or
/// script (the page's hash highlighting is left out: the notebook owns
/// the page).
pub fn fragment(profiles: &[Profile]) -> String {
    let n_insns: usize = profiles.iter().map(|p| p.insns.len()).sum();
    let mut b = String::with_capacity(16384 + n_insns * 400);
    body(&mut b, profiles);
    // FNV-1a: the same report gets the same id (same rules, harmless)
    let hash = b.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, c| {
        (h ^ c as u64).wrapping_mul(0x0100_0000_01b3)
    });
    let id = format!("metal-profiler-report-{hash:016x}");
    let css = scoped_css(&format!("#{id}"), &format!("{FRAGMENT_RESET}{CSS}"));
    format!("<div class=\"metal-profiler-report\" id=\"{id}\">\n<style>{css}</style>\n{b}</div>\n")
}

/// What a host page's stylesheet (Jupyter's) sets on the elements the
/// report uses and the report's own rules leave to the browser: back to
/// the browser's defaults inside a [`fragment`] (e.g. JupyterLab centres
/// output tables and right-aligns their cells).
const FRAGMENT_RESET: &str = r#"
table{margin:0;table-layout:auto;font-size:inherit;color:inherit;border:none;border-spacing:0}
td,th{text-align:left;padding:1px;vertical-align:inherit;line-height:inherit;white-space:inherit;max-width:none;border:none}
th{font-weight:bold}
tr,tbody tr{background:none}
p{margin:1em 0;text-align:inherit}
pre{font-family:monospace;font-size:13px;line-height:normal;margin:1em 0;padding:0;border:none;background:none;color:inherit}
code{font-family:monospace;font-size:inherit;background:none;padding:0;color:inherit}
a:not(svg *){text-decoration:underline}
svg{max-width:none}
"#;

/// `css` with every selector scoped under `scope` (an `#id`): `:root` and
/// `body` become the scope element itself, `*` the element and everything
/// in it, any other selector its descendants. `css` is plain rules
/// (`selectors{declarations}`, no at-rules).
pub fn scoped_css(scope: &str, css: &str) -> String {
    let mut out = String::with_capacity(css.len() * 2);
    let mut rest = css;
    while let Some(open) = rest.find('{') {
        let close = rest[open..].find('}').map_or(rest.len(), |c| open + c + 1);
        let selectors: Vec<String> = rest[..open]
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| match s {
                ":root" | "body" => scope.to_string(),
                "*" => format!("{scope},{scope} *"),
                _ => format!("{scope} {s}"),
            })
            .collect();
        out.push_str(&selectors.join(","));
        out.push_str(&rest[open..close]);
        out.push('\n');
        rest = &rest[close..];
    }
    out
}

/// The page's content: its header, the index (several kernels) and one
/// section per kernel.
fn body(o: &mut String, profiles: &[Profile]) {
    let title = title(profiles);
    // the figures are the records', built once per kernel
    let records: Vec<KernelRecord> = profiles.iter().map(KernelRecord::build).collect();
    let _ = writeln!(
        o,
        "<header class=\"page\"><h1>{}</h1><div class=\"sub\">static profile of Apple GPU (AGX) machine code; estimates from the timing model ({}), see <code>metal-profile --explain-model</code></div></header>",
        esc(&title),
        esc(records
            .first()
            .and_then(|r| r.timing.as_ref())
            .map_or(agx_analysis::gpu::default_model().short, |t| t.model.gpu))
    );
    if profiles.len() > 1 {
        o.push_str("<nav class=\"index\"><b>Kernels</b><ol>\n");
        for (k, r) in records.iter().enumerate() {
            let (cy, bottleneck) = r
                .timing
                .as_ref()
                .map_or((0.0, ""), |t| (t.total_cycles, t.bottleneck.as_str()));
            let _ = writeln!(
                o,
                "<li><a href=\"#k{k}\">{}</a> <span class=\"dim\">— {} instructions, ~{} cy, {}</span></li>",
                esc(&r.name),
                r.instructions,
                fmt_cy(cy),
                esc(bottleneck)
            );
        }
        o.push_str("</ol></nav>\n");
    }
    for (k, (p, rec)) in profiles.iter().zip(&records).enumerate() {
        kernel(o, k, p, rec, profiles);
    }
}

fn kernel(o: &mut String, k: usize, p: &Profile, rec: &KernelRecord, all: &[Profile]) {
    let _ = writeln!(o, "<section class=\"kernel\" id=\"k{k}\">");
    let _ = writeln!(o, "<h2>{}</h2>", esc(&rec.name));
    header(o, p, rec);
    o.push_str("<div class=\"cards\">\n");
    occupancy(o, k, rec);
    if let Some(t) = &rec.timing {
        pipes(o, k, t, &p.timing.cycles, p.options.gpu.table());
        breakdown(o, k, rec, t);
    }
    o.push_str("</div>\n");
    loops_table(o, k, rec);
    graph(o, k, p, rec);
    memory(o, k, rec, FunctionRows::main(p));
    calls(o, k, rec);
    suggestions(o, k, rec);
    listing(o, k, p, rec, all);
    o.push_str("</section>\n");
}

fn header(o: &mut String, p: &Profile, rec: &KernelRecord) {
    o.push_str("<table class=\"meta\">\n");
    let row = |o: &mut String, k: &str, v: &str| {
        let _ = writeln!(o, "<tr><td>{k}</td><td>{v}</td></tr>");
    };
    let assumed = format!("{} (assumed)", p.options.gpu.short);
    row(o, "GPU", &esc(rec.gpu.as_deref().unwrap_or(&assumed)));
    row(
        o,
        "Code",
        &format!(
            "{} instructions, {} bytes, {} basic blocks, {} loops",
            rec.instructions,
            rec.code_bytes,
            rec.cfg.blocks,
            rec.loops.iter().filter(|l| l.index.is_some()).count()
        ),
    );
    if let Some(t) = &rec.timing {
        row(o, "Timing model", &esc(t.model.gpu));
        row(o, "Chip", &esc(t.model.chip));
        row(
            o,
            "Trip counts",
            &esc(rec.trip_count_summary().trim_start_matches("trip counts: ")),
        );
        row(
            o,
            "Estimate",
            &format!(
                "<b>~{} cy</b> per SIMD-group for the whole kernel",
                fmt_cy(t.total_cycles)
            ),
        );
        row(
            o,
            "Bound",
            &format!("<span class=\"bound\">{}</span>", esc(&t.bottleneck)),
        );
    }
    if let Some(pr) = &rec.prolog {
        row(
            o,
            "Prolog",
            &format!(
                "{} instructions ({} bytes, {} state stores), once per dispatch",
                pr.instructions, pr.code_bytes, pr.state_stores
            ),
        );
    }
    let raised = rec.raised_instructions;
    if raised > 0 {
        row(
            o,
            "Note",
            &format!("{raised} instruction(s) use encodings applegpu cannot print; shown with our best rendering"),
        );
    }
    if rec.cfg.outside_targets > 0 {
        row(
            o,
            "Note",
            &format!(
                "{} branch/call target(s) lie outside the code analysed",
                rec.cfg.outside_targets
            ),
        );
    }
    o.push_str("</table>\n");
}

/// The occupancy card: the record's `occupancy` and `registers`.
fn occupancy(o: &mut String, k: usize, rec: &KernelRecord) {
    let occ = &rec.occupancy;
    let r = &rec.registers;
    let pct = occ.percent.clamp(0.0, 100.0);
    let color = if pct >= 75.0 {
        "#15803d"
    } else if pct >= 50.0 {
        "#d97706"
    } else {
        "#c0262d"
    };
    // a half-circle gauge: radius 50, centre (60,60)
    let ang = std::f64::consts::PI * (1.0 - pct / 100.0);
    let (ex, ey) = (60.0 + 50.0 * ang.cos(), 60.0 - 50.0 * ang.sin());
    let _ = writeln!(
        o,
        "<div class=\"card\" id=\"k{k}-occupancy\"><h4>Occupancy</h4>\
         <svg class=\"gauge\" width=\"120\" height=\"72\" viewBox=\"0 0 120 72\" role=\"img\" aria-label=\"occupancy {pct:.0}%\">\
         <path d=\"M10 60 A50 50 0 0 1 110 60\" fill=\"none\" stroke=\"#eef1f6\" stroke-width=\"12\"/>\
         <path d=\"M10 60 A50 50 0 0 1 {ex:.2} {ey:.2}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"12\"/>\
         <text x=\"60\" y=\"58\" text-anchor=\"middle\" font-size=\"18\" font-weight=\"600\">{pct:.0}%</text></svg>\
         <div>{} threads per core</div><div class=\"dim\">{} half-regs allocated ({} GPRs), peak live {}</div></div>",
        occ.threads,
        r.allocated_half,
        r.allocated_gprs,
        r.peak_live_half
    );
}

/// The pipes card: the figures are the record's `cycles` (each pipe the
/// timing table lists, in its order, then the bandwidth bounds and the
/// memory stall); the bars' lengths (drawing, no printed figure) are the
/// model's unrounded `bars`.
fn pipes(
    o: &mut String,
    k: usize,
    t: &Timed,
    bars: &agx_analysis::timing::model::UnitCycles,
    table: &agx_analysis::timing::GpuTiming,
) {
    let c = &t.cycles;
    let mut rows: Vec<(&str, f64, f64)> = table
        .pipes
        .iter()
        .map(|p| (p.name(), c.pipe(p.unit), bars.pipe(p.unit)))
        .collect();
    rows.extend([
        ("L1", c.memory_bandwidth, bars.memory_bandwidth),
        ("DRAM", c.device_bandwidth, bars.device_bandwidth),
        ("MEM", c.mem, bars.mem),
    ]);
    let max = rows.iter().map(|r| r.2).fold(0.0, f64::max);
    let _ = writeln!(
        o,
        "<div class=\"card\" id=\"k{k}-pipes\"><h4>Pipes (cy per SIMD-group, loops weighted)</h4>"
    );
    for (name, v, bar) in rows {
        let w = if max > 0.0 { bar / max * 100.0 } else { 0.0 };
        let top = if max > 0.0 && bar >= max { " top" } else { "" };
        let _ = writeln!(
            o,
            "<div class=\"pipe{top}\"><span>{name}</span><span class=\"bar\"><i style=\"width:{w:.1}%\"></i></span><span>{}</span></div>",
            fmt_cy(v)
        );
    }
    let _ = writeln!(
        o,
        "<div class=\"dim\">ALU {} = {} cy; L1 / DRAM = memory-pipe / device-memory bandwidth bound; MEM = exposed memory stall</div></div>",
        table.alu_bound_label(),
        fmt_cy(c.alu)
    );
}

/// The model's breakdown of the total (straight-line code, each outer
/// loop, each call), as a stacked bar and a table.
fn breakdown(o: &mut String, k: usize, rec: &KernelRecord, t: &Timed) {
    let parts: Vec<(String, Option<String>, f64, f64)> = t
        .breakdown
        .iter()
        .map(|b| {
            let (name, href) = match b.part {
                PartKind::StraightLine => (
                    format!(
                        "straight-line code ({} instructions), {}",
                        t.straight_line.instructions,
                        bound_label(t.straight_line.bound.by)
                    ),
                    None,
                ),
                PartKind::Loop => match b.loop_index.and_then(|i| rec.timed_loop(i)) {
                    Some(Loop {
                        index: Some(i),
                        header,
                        cycles_per_iteration: Some(cpi),
                        trip_count: Some(n),
                        ..
                    }) => (
                        format!("loop {i} at 0x{header:x}: {} cy/iter × {n}", fmt_cy(*cpi)),
                        Some(format!("#k{k}-a{header:x}")),
                    ),
                    _ => (format!("loop at 0x{:x}", b.at), None),
                },
                PartKind::Call => (
                    format!(
                        "call at 0x{:x} to {} × {}",
                        b.at,
                        rec.calls
                            .iter()
                            .find(|c| c.at == b.at)
                            .and_then(|c| c.display_name.clone())
                            .unwrap_or_else(|| format!("0x{:x}", b.callee.unwrap_or(0))),
                        fmt_cy(b.executions)
                    ),
                    Some(format!("#k{k}-a{:x}", b.at)),
                ),
            };
            (name, href, b.cycles, b.share * 100.0)
        })
        .collect();
    const COLORS: [&str; 6] = [
        "#94a3b8", "#2563eb", "#d97706", "#7c3aed", "#059669", "#db2777",
    ];
    let _ = write!(
        o,
        "<div class=\"card\" id=\"k{k}-breakdown\"><h4>Cost breakdown</h4><div class=\"stack\">"
    );
    for (i, (name, _, _, w)) in parts.iter().enumerate() {
        let _ = write!(
            o,
            "<i style=\"width:{w:.2}%;background:{}\" title=\"{}\"></i>",
            COLORS[i % COLORS.len()],
            esc(name)
        );
    }
    o.push_str("</div><table class=\"grid\">\n");
    for (i, (name, href, v, pct)) in parts.iter().enumerate() {
        let name = match href {
            Some(h) => format!("<a href=\"{h}\">{}</a>", esc(name)),
            None => esc(name),
        };
        let _ = writeln!(
            o,
            "<tr><td class=\"l\"><span style=\"color:{}\">■</span> {name}</td><td>{} cy</td><td>{pct:.1}%</td></tr>",
            COLORS[i % COLORS.len()],
            fmt_cy(*v)
        );
    }
    let _ = writeln!(
        o,
        "<tr><th class=\"l\">total (estimate)</th><th>{} cy</th><th></th></tr></table>",
        fmt_cy(t.total_cycles)
    );
    let _ = writeln!(
        o,
        "<div class=\"dim\">uniform paths: {} – {} cy</div></div>",
        fmt_cy(t.paths.shortest),
        fmt_cy(t.paths.longest)
    );
}

fn loops_table(o: &mut String, k: usize, rec: &KernelRecord) {
    let Some(t) = &rec.timing else {
        return;
    };
    let _ = writeln!(o, "<h3>Timing</h3>\n<table class=\"grid\" id=\"k{k}-timing\"><tr><th class=\"l\">region</th><th>depth</th><th>instructions</th><th>trip count</th><th>cy/iter (throughput)</th><th>cy/iter (latency)</th><th>wait stall</th><th class=\"l\">bound</th></tr>");
    let r = &t.straight_line;
    // (a pass's cycles and its latency view are its bound: one figure)
    let _ = writeln!(
        o,
        "<tr><td class=\"l\">straight-line</td><td>0</td><td>{}</td><td>1</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>",
        r.instructions,
        fmt_cy(r.bound.cycles),
        fmt_cy(r.bound.cycles),
        fmt_cy(r.stall.exposed),
        esc(&r.bottleneck)
    );
    for l in &rec.loops {
        let (Some(i), Some(b), Some(n), Some(src), Some(cpi), Some(lat), Some(bn)) = (
            l.index,
            &l.body,
            l.trip_count,
            l.trip_count_source,
            l.cycles_per_iteration,
            l.latency_bound_cycles,
            &l.bottleneck,
        ) else {
            continue;
        };
        let _ = writeln!(
            o,
            "<tr><td class=\"l\"><a href=\"#k{k}-a{:x}\">loop {}</a> 0x{:x}–0x{:x}</td><td>{}</td><td>{}</td><td>{} ({})</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>",
            l.header,
            i,
            l.header,
            l.end,
            l.depth,
            b.instructions,
            n,
            esc(src),
            fmt_cy(cpi),
            fmt_cy(lat),
            fmt_cy(b.exposed_stall),
            esc(bn)
        );
    }
    o.push_str("</table>\n");
}

/// Each loop's label in the graph (index = forest loop).
fn loop_labels(p: &Profile, rec: &KernelRecord) -> Vec<String> {
    p.graph
        .loops
        .loops
        .iter()
        .enumerate()
        .map(|(l, lp)| {
            // (the model's loop of forest loop `l`, by its record `index`)
            let trip = rec
                .trip_of_timed_loop(p.graph.loop_timing.get(l).copied().flatten())
                .map(|n| format!(", × {n}"))
                .unwrap_or_default();
            format!(
                "loop 0x{:x}–0x{:x} (depth {}{trip})",
                lp.start, lp.end, lp.depth
            )
        })
        .collect()
}

/// The graph's layout as the page draws it (its loop labels sized to
/// their text) and the labels.
pub fn graph_layout(p: &Profile, rec: &KernelRecord) -> (Layout, Vec<String>) {
    let labels = loop_labels(p, rec);
    let chars: Vec<usize> = labels.iter().map(|s| s.chars().count()).collect();
    (layout::layout(&p.graph.cfg, &p.graph.loops, &chars), labels)
}

fn graph(o: &mut String, k: usize, p: &Profile, rec: &KernelRecord) {
    let (lay, labels) = graph_layout(p, rec);
    // the record's blocks by index (the figures of the block labels)
    let mut blocks: Vec<Option<&crate::record::BlockOut>> = vec![None; p.graph.cfg.blocks.len()];
    for b in rec.timing.iter().flat_map(|t| &t.blocks) {
        if let Some(x) = blocks.get_mut(b.index) {
            *x = Some(b);
        }
    }
    let max_share = blocks.iter().flatten().map(|c| c.share).fold(0.0, f64::max);
    let _ = writeln!(
        o,
        "<h3>Control-flow graph</h3>\n<div class=\"legend\"><span><b style=\"border-color:#6b7280\"></b>fall-through</span><span><b style=\"border-color:#2563eb\"></b>taken</span><span><b style=\"border-color:#c0262d;border-top-style:dashed\"></b>back edge</span><span><b style=\"border-color:#7c3aed;border-top-style:dotted\"></b>call / return</span><span>shaded: loops (nested)</span><span>block cycles: issue + exposed stall × executions; colour: its share (white → red = hottest block); a loop's bound can be higher (see Timing)</span><span>click a block for its instructions</span></div>"
    );
    let _ = writeln!(
        o,
        "<div class=\"graph\"><svg class=\"cfg\" id=\"k{k}-cfg\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0}\" height=\"{:.0}\" viewBox=\"0 0 {:.0} {:.0}\">",
        lay.width.max(1.0),
        lay.height.max(1.0),
        lay.width.max(1.0),
        lay.height.max(1.0)
    );
    let _ = writeln!(
        o,
        "<defs><marker id=\"k{k}-arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0 0L10 5L0 10z\" fill=\"#4b5563\"/></marker></defs>"
    );
    // loop regions, outer first so inner ones are drawn on top
    let mut order: Vec<usize> = (0..lay.loops.len()).collect();
    order.sort_by_key(|&l| p.graph.loops.loops[l].depth);
    for l in order {
        let (r, lb) = (lay.loops[l], lay.labels[l]);
        let _ = writeln!(
            o,
            "<g class=\"region\"><rect class=\"loop\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"8\" fill=\"{}\" fill-opacity=\"{}\"/><text class=\"loop-label\" x=\"{:.1}\" y=\"{:.1}\" fill=\"{}\">{}</text></g>",
            r.x,
            r.y,
            r.w,
            r.h,
            palette::LOOP_TINT,
            palette::LOOP_OPACITY,
            lb.x,
            lb.y + layout::LABEL_BASELINE,
            palette::LOOP_LABEL,
            esc(&labels[l])
        );
    }
    for e in &lay.edges {
        let mut d = String::new();
        for (i, (x, y)) in e.points.iter().enumerate() {
            let _ = write!(d, "{}{x:.1} {y:.1}", if i == 0 { "M" } else { " L" });
        }
        let _ = writeln!(
            o,
            "<path class=\"e {}\" d=\"{d}\" marker-end=\"url(#k{k}-arrow)\" data-from=\"{}\" data-to=\"{}\"/>",
            e.style.name(),
            e.from,
            e.to
        );
    }
    let div = p.divergent_blocks();
    for (b, blk) in p.graph.cfg.blocks.iter().enumerate() {
        let r = lay.blocks[b];
        let (insns, cycles, share, per, n) = blocks[b].map_or((0, 0.0, 0.0, 0.0, 0.0), |c| {
            (
                c.instructions,
                c.cycles,
                c.share,
                c.cycles_per_execution,
                c.executions,
            )
        });
        // a divergent branch: both sides run for the SIMD-group (issue 22)
        let d = div.get(b).map(String::as_str).unwrap_or("");
        let (cls, note) = if d.is_empty() {
            ("", String::new())
        } else {
            (" data-divergent=\"1\"", format!("; {}", esc(d)))
        };
        let t = if max_share > 0.0 {
            share / max_share
        } else {
            0.0
        };
        let fill = palette::heat_color(t);
        let ink = palette::text_on(&fill);
        let _ = writeln!(
            o,
            "<a href=\"#k{k}-b{b}\"><g class=\"blk\" id=\"k{k}-n{b}\" data-block=\"{b}\"{cls}><title>block {b}: 0x{:x}–0x{:x}, {} instructions, {} cy per execution × {} = {} cy ({:.1}% of cycles){note}</title><rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"4\" fill=\"{fill}\"/><text x=\"{:.1}\" y=\"{:.1}\" fill=\"{ink}\">B{b} 0x{:x}–0x{:x}</text><text x=\"{:.1}\" y=\"{:.1}\" fill=\"{ink}\">{} insn · {} cy · {:.1}%</text></g></a>",
            blk.start,
            blk.last,
            insns,
            fmt_cy(per),
            fmt_cy(n),
            fmt_cy(cycles),
            share * 100.0,
            r.x,
            r.y,
            r.w,
            r.h,
            r.x + 6.0,
            r.y + 16.0,
            blk.start,
            blk.last,
            r.x + 6.0,
            r.y + 31.0,
            insns,
            short_cy(cycles),
            share * 100.0
        );
    }
    o.push_str("</svg></div>\n");
}

/// The "Memory" section (issue 27): per loop with memory instructions
/// (hottest first), each access's pattern, bytes and lines per iteration:
/// the record's regions, each access the row of its instruction.
fn memory(o: &mut String, k: usize, rec: &KernelRecord, rows: FunctionRows<'_>) {
    let m = &rec.memory;
    if m.regions.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "<h3>Memory</h3>\n<p class=\"dim\">lanes over a {} threadgroup ({}); lines: cache lines one SIMD-group request touches (cache_line_bytes, --explain-model); lines ?: not counted (device memory only, and only where the lane pattern is known)</p>\n<pre id=\"k{k}-memory\">",
        esc(&m.shape_text()),
        m.shape.source_text()
    );
    for r in m.regions.iter().take(12) {
        let _ = writeln!(o, "{}", esc(&rec.memory_title(r)));
        for &i in r.rows.iter().take(16) {
            if let Some(a) = crate::record::memory_line(&rows.row(i)) {
                let _ = writeln!(o, "  {}", esc(&a));
            }
        }
    }
    o.push_str("</pre>\n");
}

/// The called functions (the text report's Calls): each one's call sites,
/// cycles, registers and stack, from the record's `functions` and `calls`;
/// nothing when the kernel calls nothing.
fn calls(o: &mut String, k: usize, rec: &crate::KernelRecord) {
    if rec.calls.is_empty() {
        return;
    }
    o.push_str("<h3>Calls</h3>\n");
    // (a function calling only itself has no other function to list)
    if rec.functions.len() > 1 {
        calls_table(o, k, rec);
    }
    for a in &rec.call_assumptions {
        let _ = writeln!(o, "<div class=\"dim\">assumption: {}</div>", esc(a));
    }
}

/// The Calls table: one row per called function.
fn calls_table(o: &mut String, k: usize, rec: &crate::KernelRecord) {
    let _ = writeln!(
        o,
        "<table class=\"grid\" id=\"k{k}-calls\"><tr><th class=\"l\">function</th><th class=\"l\">called at</th><th>cy per call</th><th>own cy</th><th>instructions</th><th>cy from main's calls</th><th>highest half-reg</th><th>spills</th><th>fills</th><th>suggestions</th></tr>"
    );
    for f in rec.functions.iter().skip(1) {
        let at = rec.call_sites_of(f.entry);
        let stack = if f.spills > 0 || f.fills > 0 {
            " style=\"color:var(--bad);font-weight:600\""
        } else {
            ""
        };
        let _ = writeln!(
            o,
            "<tr><td class=\"l\">{} at 0x{:x}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td{stack}>{}</td><td{stack}>{}</td><td>{}</td></tr>",
            esc(&f.display_name),
            f.entry,
            at,
            fmt_cy(f.total_cycles),
            fmt_cy(f.own_cycles),
            f.instructions,
            fmt_cy(f.timing.as_ref().map_or(0.0, |t| t.cycles_from_main)),
            f.highest_half_index,
            f.spills,
            f.fills,
            f.suggestions.len()
        );
    }
    o.push_str("</table>\n");
}

/// Every function's suggestions: main's, then each called function's
/// (named); "No problems" only when no function has one.
fn suggestions(o: &mut String, k: usize, rec: &crate::KernelRecord) {
    o.push_str("<h3>Suggestions</h3>\n");
    if !rec.has_findings() {
        o.push_str("<p class=\"dim\">No problems found by the rules (see <code>--explain-model</code> for what they check).</p>\n");
        return;
    }
    o.push_str("<ul class=\"sugg\">\n");
    for (function, s) in rec.all_suggestions() {
        // an address of main links to its listing row; a called
        // function's addresses are not in main's listing: plain text
        let addr = |a: u32| match function {
            None => format!("<a href=\"#k{k}-a{a:x}\">0x{a:x}</a>"),
            Some(_) => format!("0x{a:x}"),
        };
        let _ = write!(
            o,
            "<li><span class=\"sev {}\">{}</span> {} {} <span class=\"dim\">{}</span>",
            severity_name(s.severity),
            severity_name(s.severity),
            esc(&s.message),
            match function {
                None => format!("<a href=\"#k{k}-a{:x}\">[0x{:x}]</a>", s.offset, s.offset),
                Some(_) => format!("[0x{:x}]", s.offset),
            },
            esc(s.rule)
        );
        if let Some(f) = function {
            let _ = write!(
                o,
                " <span class=\"dim\">in called function {}</span>",
                esc(f)
            );
        }
        // the fact it rests on and its sites (issue 27 item 5)
        if !s.fact.is_empty() || s.sites.len() > 1 {
            let _ = write!(o, "<div class=\"dim\">fact: {}", esc(&s.fact));
            if s.sites.len() > 1 {
                o.push_str("; sites:");
                for &a in &s.sites {
                    let _ = write!(o, " {}", addr(a));
                }
            }
            o.push_str("</div>");
        }
        o.push_str("</li>\n");
    }
    o.push_str("</ul>\n");
}

fn severity_name(s: Severity) -> &'static str {
    match s {
        Severity::High => "high",
        Severity::Medium => "medium",
        Severity::Low => "low",
    }
}

/// Cycles for a box label: whole cycles from 100 up (fits the box).
pub(crate) fn short_cy(x: f64) -> String {
    // (of the record's rounding: the whole cycles of the record's figure)
    let x = agx_analysis::timing::model::r2(x);
    if x >= 100.0 {
        format!("{x:.0}")
    } else {
        fmt_cy(x)
    }
}

/// Where a call to `sym` leads on this page: another kernel's section, or
/// the callee's block in this kernel.
fn call_link(
    k: usize,
    p: &Profile,
    addr: u32,
    sym: Option<&str>,
    all: &[Profile],
) -> Option<String> {
    if let Some(s) = sym {
        // the kernel's name, or a mangled symbol naming it (`_Z6helper…`)
        let named = |q: &Profile| {
            !q.name.is_empty()
                && (q.name == s || s.contains(&format!("{}{}", q.name.len(), q.name)))
        };
        if let Some(j) = all.iter().position(named) {
            return Some(format!("#k{j}"));
        }
    }
    let site = p.graph.cfg.calls.iter().find(|c| c.addr == addr)?;
    site.callee_block.map(|b| format!("#k{k}-b{b}"))
}

fn listing(o: &mut String, k: usize, p: &Profile, rec: &KernelRecord, all: &[Profile]) {
    let _ = writeln!(
        o,
        "<h3>Annotated disassembly</h3>\n<table class=\"asm\" id=\"k{k}-asm\">"
    );
    if p.lists_stack_adjust() {
        let _ = writeln!(
            o,
            "<caption class=\"dim\">{}</caption>",
            esc(crate::profile::STACK_ADJUST_LEGEND)
        );
    }
    // (the heat bars' widths are layout: the model's unrounded cycles)
    let max_heat = p.graph.insn_cycles.iter().copied().fold(0.0, f64::max);
    let rows = FunctionRows::main(p);
    // the record's blocks by index (the figures of the block headers)
    let mut blocks: Vec<Option<&crate::record::BlockOut>> = vec![None; p.graph.cfg.blocks.len()];
    for b in rec.timing.iter().flat_map(|t| &t.blocks) {
        if let Some(x) = blocks.get_mut(b.index) {
            *x = Some(b);
        }
    }
    let mut asm = String::new();
    for (b, blk) in p.graph.cfg.blocks.iter().enumerate() {
        let (instructions, cycles, share) =
            blocks[b].map_or((0, 0.0, 0.0), |c| (c.instructions, c.cycles, c.share));
        let _ = writeln!(
            o,
            "<tr class=\"bh\" id=\"k{k}-b{b}\" data-block=\"k{k}-{b}\"><td colspan=\"6\">B{b} 0x{:x}–0x{:x} · {} instructions · {} cy ({:.1}%)<a href=\"#k{k}-n{b}\">↑ graph</a></td></tr>",
            blk.start,
            blk.last,
            instructions,
            fmt_cy(cycles),
            share * 100.0
        );
        for i in blk.insns.clone() {
            let insn = &p.insns[i];
            // every figure and mark of the line is the row's
            let row = rows.row(i);
            let heat = p.graph.insn_cycles.get(i).copied().unwrap_or(0.0);
            let hw = if max_heat > 0.0 {
                (heat / max_heat * 60.0).round()
            } else {
                0.0
            };
            asm.clear();
            crate::profile::write_listing_asm(&mut asm, insn);
            let unit = match (row.unit, row.cycles) {
                (Some(u), Some(c)) if u != "CTRL" || c > 0.0 => {
                    format!("{u:<4} {:>4}cy", fmt_cy(c))
                }
                (Some(_), _) => "CTRL".to_string(),
                _ => String::new(),
            };
            let depth = row.loop_depth.unwrap_or(0) as usize;
            let mut marks = Vec::new();
            let sym = row.call_target;
            let is_call = sym.is_some()
                || matches!(p.graph.cfg.flows.get(i), Some(agx_isa::Flow::Call { .. }));
            if is_call {
                let label = sym.map_or_else(|| "→ callee".to_string(), |s| format!("→ {}", esc(s)));
                match call_link(k, p, insn.addr, sym, all) {
                    Some(href) => marks.push(format!("<a href=\"{href}\">{label}</a>")),
                    None => marks.push(label),
                }
            }
            if row.unit.is_some() {
                // what a stack access is for (issue 27 item 4)
                if let Some(sk) = row.stack_kind {
                    marks.push(format!("<span class=\"dim\">◇ stack: {sk}</span>"));
                }
                if let Some(dep) = &row.raw_dep {
                    if dep.penalty > 0.0 {
                        marks.push(format!(
                            "<span class=\"raw\">◀ RAW dep +{:.2} cy (on <a href=\"#k{k}-a{:x}\">0x{:x}</a>)</span>",
                            dep.penalty, dep.producer, dep.producer
                        ));
                    }
                }
                // the access pattern of a memory instruction (issue 27)
                if let (Some(a), Some(m)) = (row.access, row.access_words()) {
                    marks.push(format!(
                        "<span class=\"dim\" title=\"{}\">{}</span>",
                        esc(&a.reason),
                        esc(&m)
                    ));
                }
                match row.stall_words() {
                    Some((StallMark::Exposed, m)) => {
                        marks.push(format!("<span class=\"stall\">{m}</span>"))
                    }
                    Some((StallMark::Hidden, m)) => {
                        marks.push(format!("<span class=\"dim\">{m}</span>"))
                    }
                    None => {}
                }
            }
            let _ = writeln!(
                o,
                "<tr id=\"k{k}-a{:x}\" data-block=\"k{k}-{b}\"><td class=\"heat\" title=\"{} cy weighted\"><i style=\"width:{hw:.0}px\"></i></td><td class=\"depth\">{}</td><td class=\"addr\">{}:</td><td>{}</td><td class=\"unit\">{}</td><td>{}</td></tr>",
                insn.addr,
                fmt_cy(row.self_cycles.unwrap_or(0.0)),
                "│".repeat(depth.min(8)),
                crate::profile::Addr {
                    addr: insn.addr,
                    width: 6
                },
                esc(&asm),
                unit,
                marks.join("  ")
            );
        }
    }
    o.push_str("</table>\n");
}

#[cfg(test)]
mod tests {
    use super::CSS;
    use crate::palette::{contrast, AA};

    /// The value of CSS property `prop` in the rule of `selector`, with
    /// `var(--x)` resolved from `:root`.
    fn css_value(selector: &str, prop: &str) -> Option<String> {
        let rule = |sel: &str| {
            let i = CSS.find(&format!("{sel}{{"))? + sel.len() + 1;
            Some(&CSS[i..i + CSS[i..].find('}')?])
        };
        let decl = rule(selector)?
            .split(';')
            .find_map(|d| d.strip_prefix(&format!("{prop}:")))?;
        match decl.strip_prefix("var(").and_then(|v| v.strip_suffix(')')) {
            Some(var) => css_value(":root", var),
            None => Some(decl.to_string()),
        }
    }

    #[test]
    fn severity_badges_meet_wcag_aa() {
        for sev in ["high", "medium", "low"] {
            let bg = css_value(&format!(".sev.{sev}"), "background").expect(sev);
            let c = contrast("#ffffff", &bg);
            assert!(c >= AA, "{sev}: white on {bg} is {c:.2}:1");
        }
    }
}
