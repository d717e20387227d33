//! The terminal report, in the seed tool's layout: header box, Registers &
//! Occupancy (with a bar), Pipeline cycles per unit, Critical path, one
//! section per loop, Instruction mix, Annotated disassembly, Suggestions.

use crate::Profile;
use agx_analysis::timing::model::fmt_cy;
use agx_analysis::timing::{InsnDetail, LoopTiming, Unit};
use agx_analysis::LoopSummary;
use agx_isa::format::{write_addr, write_asm, write_line};
use agx_isa::Syntax;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// ANSI styling, or none.
#[derive(Clone, Copy)]
struct Style {
    on: bool,
}

impl Style {
    fn wrap(&self, code: &str, s: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn head(&self, s: &str) -> String {
        self.wrap("1;36", s)
    }
    fn bad(&self, s: &str) -> String {
        self.wrap("31", s)
    }
    fn warn(&self, s: &str) -> String {
        self.wrap("33", s)
    }
    fn good(&self, s: &str) -> String {
        self.wrap("32", s)
    }
    fn dim(&self, s: &str) -> String {
        self.wrap("2", s)
    }
}

const BOX_WIDTH: usize = 62;

/// Stalls shorter than this are latency the scheduler hides routinely; only
/// longer ones get a `◀◀◀ STALL` mark.
const STALL_MARK_CYCLES: f64 = 8.0;

fn section(out: &mut String, st: Style, title: &str) {
    let _ = writeln!(out, "\n  {}", st.head(&format!("── {title} ──")));
}

fn kv(out: &mut String, key: &str, value: &str) {
    let _ = writeln!(out, "  {:<18}{}", format!("{key}:"), value);
}

fn reg_name(half: u32) -> String {
    format!("r{}{}", half / 2, if half & 1 == 0 { "l" } else { "h" })
}

/// The full text report.
pub fn report(p: &Profile, color: bool) -> String {
    let st = Style { on: color };
    let mut out = String::with_capacity(4096 + p.insns.len() * 100);
    header(&mut out, st, p);
    registers(&mut out, st, p);
    pipeline(&mut out, st, p);
    critical_path(&mut out, st, p);
    let idx = loop_index(p);
    for (i, l) in p.timing.loops.iter().enumerate() {
        loop_section(&mut out, st, &idx, i, l);
    }
    mix(&mut out, st, p);
    annotated(&mut out, st, p);
    suggestions(&mut out, st, p);
    out
}

fn header(out: &mut String, st: Style, p: &Profile) {
    let title = format!("  metal-profiler: {}", p.name);
    let title: String = title.chars().take(BOX_WIDTH).collect();
    let pad = BOX_WIDTH.saturating_sub(title.chars().count());
    let _ = writeln!(out, "╔{}╗", "═".repeat(BOX_WIDTH));
    let _ = writeln!(out, "║{}{}║", st.head(&title), " ".repeat(pad));
    let _ = writeln!(out, "╚{}╝", "═".repeat(BOX_WIDTH));
    let a = &p.analysis;
    let gpu = p.gpu.as_deref().unwrap_or("G13 (assumed)");
    let _ = writeln!(
        out,
        "  {} instructions, {} bytes · GPU {} · timing model {} · unknown loop trip counts = {} (--trip-count)",
        a.instructions, a.code_bytes, gpu, p.timing.gpu, p.options.trip_count
    );
    if let Some(pr) = &p.prolog {
        let _ = writeln!(
            out,
            "  prolog: {} instructions ({} bytes, {} state stores), runs once per dispatch, not per thread (--part prolog)",
            pr.instructions, pr.code_bytes, pr.state_stores
        );
    }
    let raised = p.insns.iter().filter(|i| i.raised).count();
    if raised > 0 {
        let _ = writeln!(
            out,
            "  {}",
            st.warn(&format!(
                "note: {raised} instruction(s) use encodings applegpu cannot print; shown with our best rendering"
            ))
        );
    }
    if !p.analysis.cfg.unresolved_targets.is_empty() {
        let _ = writeln!(
            out,
            "  {}",
            st.warn(&format!(
                "note: {} branch/call target(s) lie outside the code analysed",
                p.analysis.cfg.unresolved_targets.len()
            ))
        );
    }
}

fn bar(st: Style, pct: f64) -> String {
    let n = ((pct / 100.0) * 40.0).round().clamp(0.0, 40.0) as usize;
    let s = format!("[{}{}]", "█".repeat(n), "░".repeat(40 - n));
    let (label, s) = if pct >= 75.0 {
        ("good", st.good(&s))
    } else if pct >= 50.0 {
        ("fair", st.warn(&s))
    } else {
        ("poor", st.bad(&s))
    };
    format!("{s} ({label})")
}

fn registers(out: &mut String, st: Style, p: &Profile) {
    section(out, st, "Registers & Occupancy");
    let r = &p.analysis.registers;
    let o = &p.analysis.occupancy;
    if r.allocated_half > 0 {
        kv(
            out,
            "Highest register",
            &format!(
                "{} (half-register index {})",
                reg_name(r.highest_half_index),
                r.highest_half_index
            ),
        );
    }
    kv(
        out,
        "Half-regs",
        &format!(
            "{} / 256 allocated ({} GPRs; the hardware allocates up to the highest register used)",
            r.allocated_half,
            r.allocated_half.div_ceil(2)
        ),
    );
    let peak_at = r
        .peak_live_offset
        .map(|a| format!(" at 0x{a:x}"))
        .unwrap_or_default();
    kv(
        out,
        "Peak live",
        &format!(
            "{} half-regs ({} GPRs){}",
            r.peak_live_half,
            r.peak_live_half.div_ceil(2),
            peak_at
        ),
    );
    if !r.peak_live_registers.is_empty() {
        let shown: Vec<&str> = r
            .peak_live_registers
            .iter()
            .take(16)
            .map(|s| s.as_str())
            .collect();
        let more = r.peak_live_registers.len().saturating_sub(shown.len());
        let tail = if more > 0 {
            format!(" … +{more}")
        } else {
            String::new()
        };
        kv(out, "Live at peak", &format!("{}{}", shown.join(" "), tail));
    }
    kv(out, "Uniforms", &format!("{} half-regs", r.uniform_half));
    kv(
        out,
        "Occupancy",
        &format!("{:.0}% ({} threads per core)", o.percent, o.threads),
    );
    let _ = writeln!(out, "  {:<18}{}", "", bar(st, o.percent));
    let a = &p.analysis;
    if a.spills > 0 || a.fills > 0 || a.stack.scratch_reserved.is_some() {
        let scratch = a
            .stack
            .scratch_reserved
            .map(|s| format!(", scratch reserved {s}"))
            .unwrap_or_default();
        kv(
            out,
            "Stack",
            &st.bad(&format!(
                "{} spills, {} fills{}",
                a.spills, a.fills, scratch
            )),
        );
    }
}

fn pipeline(out: &mut String, st: Style, p: &Profile) {
    section(
        out,
        st,
        "Pipeline cycles (per SIMD-group, loops weighted by trip count)",
    );
    let c = &p.timing.cycles;
    let _ = writeln!(
        out,
        "  F32 {:>8}   F16 {:>8}   SCIB {:>8}   IC {:>8}",
        fmt_cy(c.f32),
        fmt_cy(c.f16),
        fmt_cy(c.scib),
        fmt_cy(c.ic)
    );
    let _ = writeln!(
        out,
        "  ALU {:>8}   MEM {:>8} (exposed stall)",
        fmt_cy(c.alu),
        fmt_cy(c.mem)
    );
    let m = &p.timing.mesa_estimate;
    let _ = writeln!(
        out,
        "  {}",
        st.dim(&format!(
            "Mesa agx_estimate_cycles (unweighted): alu {} fscib {} ic {}",
            m.alu, m.fscib, m.ic
        ))
    );
}

fn critical_path(out: &mut String, st: Style, p: &Profile) {
    section(out, st, "Critical path");
    kv(out, "Bottleneck", &p.timing.bottleneck);
    kv(
        out,
        "Estimate",
        &format!(
            "~{} cy per SIMD-group for the whole kernel",
            fmt_cy(p.timing.total_cycles)
        ),
    );
    let o = &p.timing.outside_loops;
    if o.instructions > 0 {
        kv(
            out,
            "Outside loops",
            &format!(
                "{} instructions, {} cy issue, {} cy latency-bound",
                o.instructions,
                fmt_cy(o.cycles_per_iteration),
                fmt_cy(o.latency_bound_cycles)
            ),
        );
    }
}

/// Analysis loops by header address.
type LoopIndex<'a> = std::collections::HashMap<u32, Vec<&'a LoopSummary>>;

fn loop_index(p: &Profile) -> LoopIndex<'_> {
    let mut m: LoopIndex<'_> = std::collections::HashMap::new();
    for s in &p.analysis.loops {
        m.entry(s.header).or_default().push(s);
    }
    m
}

fn summary_for<'a>(idx: &LoopIndex<'a>, l: &LoopTiming) -> Option<&'a LoopSummary> {
    let c = idx.get(&l.header)?;
    c.iter()
        .find(|s| s.latches.contains(&l.latch))
        .or(c.first())
        .copied()
}

fn loop_section(out: &mut String, st: Style, idx: &LoopIndex<'_>, i: usize, l: &LoopTiming) {
    let s = summary_for(idx, l);
    let range = s
        .map(|s| format!("0x{:x}–0x{:x}", s.start, s.end))
        .unwrap_or_else(|| format!("0x{:x}–0x{:x}", l.header, l.latch));
    section(out, st, &format!("Loop {i} ({range}, depth {})", l.depth));
    let b = &l.body;
    let n = s.map(|s| s.instructions).unwrap_or(b.instructions);
    kv(
        out,
        "Instructions",
        &format!("{n} ({} in its own body)", b.instructions),
    );
    kv(
        out,
        "Trip count",
        &format!("{} ({})", l.trip_count, l.trip_count_source),
    );
    kv(out, "ALU/iter", &format!("{} cy", fmt_cy(b.alu_per_iter)));
    kv(out, "Loads/iter", &b.loads.to_string());
    kv(out, "Stores/iter", &b.stores.to_string());
    if b.wait_stall > 0.0 {
        let loads: usize = b.waits.iter().map(|w| w.loads.len()).sum();
        let msg = format!(
            "~{} cy ({} load{} before wait; ~{} cy exposed at this occupancy)",
            fmt_cy(b.wait_stall),
            loads,
            if loads == 1 { "" } else { "s" },
            fmt_cy(b.exposed_stall)
        );
        kv(out, "Wait stall", &st.bad(&msg));
    }
    kv(
        out,
        "Total/iter",
        &format!(
            "{} cy throughput-bound, {} cy latency-bound (one SIMD-group alone: {} cy)",
            fmt_cy(l.cycles_per_iteration),
            fmt_cy(l.latency_bound_cycles),
            fmt_cy(b.single_simd_iteration_cycles)
        ),
    );
    if b.recurrence_cycles > 0.0 {
        kv(
            out,
            "Loop-carried",
            &format!(
                "{} cy dependency chain per iteration",
                fmt_cy(b.recurrence_cycles)
            ),
        );
    }
    kv(out, "Bottleneck", &l.bottleneck);
}

fn mix(out: &mut String, st: Style, p: &Profile) {
    section(out, st, "Instruction mix");
    let mut by_unit: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut by_mnem: BTreeMap<&'static str, usize> = BTreeMap::new();
    for d in &p.timing.instructions_detail {
        *by_unit.entry(d.unit.name()).or_default() += 1;
        *by_mnem.entry(d.mnemonic).or_default() += 1;
    }
    let units: Vec<String> = by_unit.iter().map(|(u, n)| format!("{u} {n}")).collect();
    let _ = writeln!(out, "  by unit: {}", units.join(" · "));
    let mut m: Vec<(&&str, &usize)> = by_mnem.iter().collect();
    m.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let top: Vec<String> = m.iter().take(12).map(|(k, v)| format!("{k} {v}")).collect();
    let _ = writeln!(out, "  top:     {}", top.join(" · "));
}

fn detail_for(p: &Profile, addr: u32) -> Option<&InsnDetail> {
    let d = &p.timing.instructions_detail;
    d.binary_search_by_key(&addr, |x| x.addr)
        .ok()
        .map(|i| &d[i])
        .or_else(|| d.iter().find(|x| x.addr == addr))
}

fn annotated(out: &mut String, st: Style, p: &Profile) {
    section(out, st, "Annotated disassembly");
    let mut asm = String::new();
    for insn in &p.insns {
        let d = detail_for(p, insn.addr);
        let depth = d.map(|d| d.loop_depth).unwrap_or(0) as usize;
        let bars = "│ ".repeat(depth.min(8));
        let mut line = String::new();
        let _ = write!(line, "  {bars:<8}");
        write_addr(&mut line, insn.addr);
        line.push(' ');
        asm.clear();
        // native syntax: a stack adjust reads as one, not as a spill
        write_asm(&mut asm, insn, Syntax::Native);
        let (mnem, ops) = asm.split_once(' ').unwrap_or((asm.as_str(), ""));
        let unit = match d {
            Some(d) if d.unit != Unit::Ctrl || d.cycles > 0.0 => {
                format!("[{:<4} {:>4}cy]", d.unit.name(), fmt_cy(d.cycles))
            }
            Some(_) => format!("[{:<4} {:>4}  ]", "CTRL", ""),
            None => "[           ]".to_string(),
        };
        let _ = write!(line, "{mnem:<18} {unit} {}", ops.trim());
        let mut marks = Vec::new();
        if let Some(sym) = p.call_symbol(insn.addr) {
            marks.push(format!("; -> {sym}"));
        }
        if let Some(d) = d {
            if let Some(dep) = &d.raw_dep {
                if dep.penalty > 0.0 {
                    marks.push(st.warn(&format!(
                        "◀ RAW dep +{:.2} cy (on 0x{:x})",
                        dep.penalty, dep.producer
                    )));
                }
            }
            if d.stall_single >= STALL_MARK_CYCLES {
                marks.push(st.bad(&format!(
                    "◀◀◀ STALL ~{} cy (~{} exposed)",
                    fmt_cy(d.stall_single),
                    fmt_cy(d.stall)
                )));
            }
        }
        if !marks.is_empty() {
            let w = line.chars().count();
            if w < 86 {
                line.push_str(&" ".repeat(86 - w));
            } else {
                line.push_str("  ");
            }
            line.push_str(&marks.join("  "));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

fn suggestions(out: &mut String, st: Style, p: &Profile) {
    section(out, st, "Suggestions");
    if p.suggestions.is_empty() {
        let _ = writeln!(
            out,
            "  {}",
            st.good("No problems found by the rules (see --explain-model for what they check).")
        );
        return;
    }
    for s in &p.suggestions {
        let _ = writeln!(
            out,
            "  {} {} {}",
            s.severity.icon(),
            s.message,
            st.dim(&format!("[0x{:x}]", s.offset))
        );
    }
}

/// The plain disassembly (`--show-disasm`).
pub fn plain_disassembly(p: &Profile, syntax: Syntax) -> String {
    let mut s = String::from("\n  ── Disassembly ──\n");
    for i in &p.insns {
        write_line(&mut s, i, syntax);
        s.push('\n');
    }
    s
}
