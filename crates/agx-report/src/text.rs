//! The terminal report, in the seed tool's layout: header box, Registers &
//! Occupancy (with a bar), Pipeline cycles per unit, Critical path, one
//! section per loop, Instruction mix, Annotated disassembly, Suggestions.

use crate::Profile;
use agx_analysis::divergence::Branch;
use agx_analysis::timing::model::{fmt_cy, push_cy};
use agx_analysis::timing::{self, InsnDetail, LoopTiming, Unit};
use agx_analysis::LoopSummary;
use agx_isa::format::{write_addr, write_asm, write_line};
use agx_isa::Syntax;
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
    kv_key(out, key);
    out.push_str(value);
    out.push('\n');
}

/// The start of a [`kv`] line, `"  {key}:"` padded to 18 characters as
/// `{:<18}` pads (by characters), for a value written in place.
fn kv_key(out: &mut String, key: &str) {
    out.push_str("  ");
    out.push_str(key);
    out.push(':');
    for _ in key.chars().count() + 1..18 {
        out.push(' ');
    }
}

/// The full text report.
pub fn report(p: &Profile, color: bool) -> String {
    let mut buf = Vec::with_capacity(4096 + p.insns.len() * 100);
    // writing to a Vec cannot fail; every piece is UTF-8
    let _ = write_report(&mut buf, p, color);
    String::from_utf8(buf).unwrap_or_default()
}

/// Text is handed to the writer in pieces of about this size.
const PIECE: usize = 1 << 16;

/// Hands a piece of text to the writer (and empties it).
type Flush<'a> = dyn FnMut(&mut String) -> std::io::Result<()> + 'a;

/// Passes `out` on to `flush` once it holds a piece.
fn piece(out: &mut String, flush: &mut Flush<'_>) -> std::io::Result<()> {
    if out.len() >= PIECE {
        flush(out)?;
    }
    Ok(())
}

/// Writes the full text report to `w` piece by piece (the CLI's path: no
/// string of the whole report, which is ~100 bytes per instruction).
pub fn write_report(w: &mut dyn std::io::Write, p: &Profile, color: bool) -> std::io::Result<()> {
    let st = Style { on: color };
    let mut out = String::with_capacity(PIECE + 4096);
    let mut flush = |out: &mut String| -> std::io::Result<()> {
        w.write_all(out.as_bytes())?;
        out.clear();
        Ok(())
    };
    header(&mut out, st, p);
    registers(&mut out, st, p);
    pipeline(&mut out, st, p);
    critical_path(&mut out, st, p, &mut flush)?;
    let idx = loop_index(p);
    let loops = &p.timing.loops;
    // (a loop's section is ~700 bytes: ~1 MB of text per batch)
    par_write(&mut out, loops.len(), 1 << 10, &mut flush, &|i, o| {
        loop_section(o, st, &idx, i, &loops[i])
    })?;
    calls(&mut out, st, p);
    mix(&mut out, st, p);
    annotated(&mut out, st, p, &mut flush)?;
    suggestions(&mut out, st, p, &mut flush)?;
    flush(&mut out)
}

/// One row per callee of the program: its call sites, the cycles its calls
/// add, its registers, stack use and suggestions (addresses inside it).
fn calls(out: &mut String, st: Style, p: &Profile) {
    let prog = &p.program;
    if prog.calls.is_empty() {
        return;
    }
    section(out, st, "Calls");
    for (k, f) in prog.functions.iter().enumerate().skip(1) {
        let sites: Vec<_> = prog.calls.iter().filter(|c| c.callee == Some(k)).collect();
        let at: Vec<String> = sites
            .iter()
            .map(|c| {
                let n = if c.executions != 1.0 {
                    format!(" ×{}", fmt_cy(c.executions))
                } else {
                    String::new()
                };
                let r = if c.recursive { " (recursive)" } else { "" };
                format!("0x{:x}{n}{r}", c.at)
            })
            .collect();
        let inc = &f.inclusive;
        let from_main: f64 = sites
            .iter()
            .filter(|c| c.caller == 0)
            .map(|c| c.cycles)
            .sum();
        let _ = writeln!(out, "  {} at 0x{:x}", f.label(), f.entry);
        kv(out, "  Called at", &at.join(", "));
        kv(
            out,
            "  Cycles",
            &format!(
                "~{} cy per call ({} cy own, {} instructions); {} cy of the kernel's total from main's calls",
                fmt_cy(inc.total_cycles),
                fmt_cy(f.timing.total_cycles),
                f.analysis.instructions,
                fmt_cy(from_main)
            ),
        );
        kv(
            out,
            "  Registers",
            &format!(
                "highest {} (half-register index {}), peak live {} half-regs",
                f.analysis.registers.highest_register(),
                f.analysis.registers.highest_half_index,
                f.analysis.registers.peak_live_half
            ),
        );
        if f.analysis.spills > 0 || f.analysis.fills > 0 {
            kv(
                out,
                "  Stack",
                &st.bad(&format!(
                    "{} spills, {} fills",
                    f.analysis.spills, f.analysis.fills
                )),
            );
        }
        for s in &f.suggestions {
            suggestion_line(out, st, "    ", s);
        }
    }
    for a in &prog.assumptions {
        let _ = writeln!(out, "  {}", st.dim(&format!("assumption: {a}")));
    }
}

fn header(out: &mut String, st: Style, p: &Profile) {
    let title = format!("  metal-profiler: {}", p.name);
    let title: String = title.chars().take(BOX_WIDTH).collect();
    let pad = BOX_WIDTH.saturating_sub(title.chars().count());
    let _ = writeln!(out, "╔{}╗", "═".repeat(BOX_WIDTH));
    let _ = writeln!(out, "║{}{}║", st.head(&title), " ".repeat(pad));
    let _ = writeln!(out, "╚{}╝", "═".repeat(BOX_WIDTH));
    let a = &p.analysis;
    let gpu = p.gpu_label.as_deref().or(p.gpu.as_deref()).map_or_else(
        || format!("{} (assumed)", p.options.gpu.short),
        str::to_string,
    );
    let _ = writeln!(
        out,
        "  {} instructions, {} bytes · GPU {} · timing model {} · chip {} · unknown loop trip counts = {} ({})",
        a.instructions,
        a.code_bytes,
        gpu,
        p.timing.gpu,
        p.options.chip.chip,
        p.options.trip_count,
        if p.options.trip_count_given {
            "given with --trip-count"
        } else {
            "default; set with --trip-count"
        }
    );
    if let Some(pr) = &p.prolog {
        let _ = writeln!(
            out,
            "  prolog: {} instructions ({} bytes, {} state stores), runs once per dispatch, not per thread (--part prolog)",
            pr.instructions, pr.code_bytes, pr.state_stores
        );
    }
    if let Some(note) = &p.timing_note {
        let _ = writeln!(out, "  {}", st.warn(&format!("note: {note}")));
    }
    if p.unknown_encodings > 0 {
        let _ = writeln!(
            out,
            "  {}",
            st.warn(&format!(
                "warning: {} encoding(s) the {} tables do not know (marked not decoded below; <disassembly failed> in applegpu syntax); left out of the profile",
                p.unknown_encodings,
                p.options.gpu.short
            ))
        );
    }
    let raised = p.raised;
    if raised > 0 {
        let _ = writeln!(
            out,
            "  {}",
            st.warn(&format!(
                "note: {raised} instruction(s) use encodings applegpu cannot print; shown with our best rendering"
            ))
        );
    }
    let outside = p.outside_targets;
    if outside > 0 {
        let _ = writeln!(
            out,
            "  {}",
            st.warn(&format!(
                "note: {outside} branch/call target(s) lie outside the code analysed"
            ))
        );
    }
    let helpers = p.program.functions.len() - 1;
    if helpers > 0 {
        let _ = writeln!(
            out,
            "  whole program: main + {helpers} called function(s); registers, occupancy, stack and cycles below cover them all (see Calls)"
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
                r.highest_register(),
                r.highest_half_index
            ),
        );
    }
    kv(
        out,
        "Half-regs",
        &format!(
            "{} / {} allocated ({} GPRs; the hardware allocates up to the highest register used)",
            r.allocated_half,
            agx_analysis::Registers::FILE_HALF,
            r.allocated_gprs()
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
            r.peak_live_gprs(),
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
        // (the count is the peak above: no second count of the names)
        let tail = if r.peak_live_registers.len() > shown.len() {
            " …"
        } else {
            ""
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
        "Pipe cycles (per SIMD-group, loops weighted by trip count)",
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
        "  L1 bandwidth {}   DRAM bandwidth {}",
        fmt_cy(c.memory_bandwidth),
        fmt_cy(c.device_bandwidth)
    );
    let _ = writeln!(
        out,
        "  busiest ALU pipe max(F32+F16+SCIB, IC) {}   exposed memory stall {}",
        fmt_cy(c.alu),
        fmt_cy(c.mem)
    );
    let m = &p.timing.mesa_estimate;
    let _ = writeln!(
        out,
        "  {}",
        st.dim(&format!(
            "Mesa-compatible estimate (Mesa's agx_estimate_cycles: every instruction counted once, loops not repeated, no memory): alu {} = max(F+SCIB {}, IC {})",
            m.alu, m.fscib, m.ic
        ))
    );
}

fn critical_path(
    out: &mut String,
    st: Style,
    p: &Profile,
    flush: &mut Flush<'_>,
) -> std::io::Result<()> {
    section(out, st, "Critical path");
    let t = &p.timing;
    kv(out, "Bottleneck", &t.bottleneck);
    kv(
        out,
        "Estimate",
        &format!(
            "~{} cy per SIMD-group for the whole kernel (every branch arm charged, as a divergent SIMD-group runs them)",
            fmt_cy(t.total_cycles)
        ),
    );
    kv(
        out,
        "Uniform paths",
        &format!(
            "{} cy shortest, {} cy longest (branches taken the same way by the whole SIMD-group)",
            fmt_cy(t.paths.shortest),
            fmt_cy(t.paths.longest)
        ),
    );
    let r = p.program.divergence_range();
    let c = p.program.divergence_counts();
    kv(
        out,
        "Divergence-aware",
        &format!(
            "{} cy shortest, {} cy longest ({} of {} ifs and {} of {} loops divergent: those charge every arm / run to the slowest thread, uniform ones one arm)",
            fmt_cy(r.shortest),
            fmt_cy(r.longest),
            c.if_divergent,
            c.if_uniform + c.if_divergent,
            c.loop_divergent,
            c.loop_uniform + c.loop_divergent
        ),
    );
    for b in &t.breakdown {
        let what = match b.part {
            timing::PartKind::StraightLine => {
                let o = &t.outside_loops;
                format!(
                    "straight-line code ({} instructions), bound by {}",
                    o.instructions,
                    timing::bound_label(o.bound.by)
                )
            }
            timing::PartKind::Loop => {
                let l = b.loop_index.and_then(|i| t.loops.get(i));
                match l {
                    Some(l) => format!(
                        "loop {}: {} cy/iter x {} iterations",
                        l.index,
                        fmt_cy(l.cycles_per_iteration),
                        l.trip_count
                    ),
                    None => "loop".to_string(),
                }
            }
            timing::PartKind::Call => format!(
                "call to {} x {} (its whole cost, see Calls)",
                p.call_symbol(b.at)
                    .map_or_else(|| format!("0x{:x}", b.callee.unwrap_or(0)), str::to_string),
                fmt_cy(b.executions)
            ),
        };
        kv(
            out,
            &format!("  0x{:x}", b.at),
            &format!("{} cy  {what}", fmt_cy(b.cycles)),
        );
        // (one row per outermost loop: written out in pieces)
        piece(out, flush)?;
    }
    Ok(())
}

/// The analysis' loops: loop `i` of the timing model is loop `i` there
/// (both are the loop forest's, in one order).
struct LoopIndex<'a> {
    loops: &'a [LoopSummary],
}

fn loop_index(p: &Profile) -> LoopIndex<'_> {
    LoopIndex {
        loops: &p.analysis.loops[..],
    }
}

fn summary_for<'a>(idx: &LoopIndex<'a>, l: &LoopTiming) -> Option<&'a LoopSummary> {
    idx.loops.get(l.index)
}

fn loop_section(out: &mut String, st: Style, idx: &LoopIndex<'_>, i: usize, l: &LoopTiming) {
    let s = summary_for(idx, l);
    let range = s
        .map(|s| format!("0x{:x}–0x{:x}", s.start, s.end))
        .unwrap_or_else(|| format!("0x{:x}–0x{:x}", l.header, l.latch));
    section(out, st, &format!("Loop {i} ({range}, depth {})", l.depth));
    // (each line written in place: ~80k loops in a 1M-instruction kernel)
    let b = &l.body;
    let n = s.map(|s| s.instructions).unwrap_or(b.instructions);
    kv_key(out, "Instructions");
    let _ = writeln!(out, "{n} ({} in its own body)", b.instructions);
    let src = match l.trip_count_source {
        "default" => "default; set with --trip-count",
        "given" => "given with --trip-count",
        other => other,
    };
    kv_key(out, "Trip count");
    let _ = writeln!(out, "{} ({src})", l.trip_count);
    kv_key(out, "Loads/iter");
    let _ = writeln!(out, "{}", b.loads);
    kv_key(out, "Stores/iter");
    let _ = writeln!(out, "{}", b.stores);
    kv_key(out, "Cost/iter");
    push_cy(out, l.cycles_per_iteration);
    let _ = writeln!(out, " cy, bound by {}", timing::bound_label(l.bound.by));
    let nested = l.cycles_per_iteration - b.cycles_per_iteration;
    kv_key(out, "Bounds/iter");
    for (k, n) in timing::BOUND_NAMES.iter().enumerate() {
        if k > 0 {
            out.push_str(" · ");
        }
        out.push_str(n);
        out.push(' ');
        push_cy(out, l.bound.components.get(n).copied().unwrap_or(0.0));
    }
    if nested > 0.005 {
        out.push_str(" (each includes ");
        push_cy(out, nested);
        out.push_str(" cy of nested loops)");
    }
    out.push('\n');
    if b.exposed_stall > 0.0 {
        let msg = format!(
            "~{} cy/iter exposed at this occupancy ({} of it at memory waits)",
            fmt_cy(b.exposed_stall),
            fmt_cy(b.memory_stall)
        );
        kv(out, "Stall", &st.bad(&msg));
    }
    kv(out, "Bottleneck", l.bottleneck());
}

fn mix(out: &mut String, st: Style, p: &Profile) {
    section(out, st, "Instruction mix");
    let units: Vec<String> = p
        .mix
        .by_unit
        .iter()
        .map(|(u, n)| format!("{u} {n}"))
        .collect();
    let _ = writeln!(out, "  by unit: {}", units.join(" · "));
    let top: Vec<String> = p
        .mix
        .by_mnemonic
        .iter()
        .take(12)
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let _ = writeln!(out, "  top:     {}", top.join(" · "));
}

fn annotated(
    out: &mut String,
    st: Style,
    p: &Profile,
    flush: &mut Flush<'_>,
) -> std::io::Result<()> {
    section(out, st, "Annotated disassembly");
    let _ = writeln!(
        out,
        "  {}",
        st.dim("[UNIT N cy/op] = the pipe and its reciprocal throughput (cycles per instruction per SIMD-group); STALL = cycles left exposed at this occupancy")
    );
    let prog = &p.program;
    let marks = p.annotate_callees && prog.functions.len() > 1;
    if marks {
        let _ = writeln!(out, "  {}", st.head(&format!("; ── main ({}) ──", p.name)));
    }
    let main_branches = prog
        .functions
        .first()
        .map_or(&[][..], |f| &f.divergence.branches[..]);
    annotated_function(
        out,
        st,
        p,
        &p.insns,
        &p.timing.instructions_detail,
        main_branches,
        flush,
    )?;
    if marks {
        for f in prog.functions.iter().skip(1) {
            let _ = writeln!(
                out,
                "  {}",
                st.head(&format!(
                    "; ── {} at 0x{:x} (called function) ──",
                    f.label(),
                    f.entry
                ))
            );
            annotated_function(
                out,
                st,
                p,
                &f.insns,
                &f.timing.instructions_detail,
                &f.divergence.branches,
                flush,
            )?;
        }
    }
    Ok(())
}

fn detail_in(d: &[InsnDetail], addr: u32) -> Option<&InsnDetail> {
    d.binary_search_by_key(&addr, |x| x.addr)
        .ok()
        .map(|i| &d[i])
        .or_else(|| d.iter().find(|x| x.addr == addr))
}

fn annotated_function(
    out: &mut String,
    st: Style,
    p: &Profile,
    insns: &[agx_isa::Instruction],
    details: &[InsnDetail],
    branches: &[Branch],
    flush: &mut Flush<'_>,
) -> std::io::Result<()> {
    // unknown encodings print in place, before the first instruction after them
    let unknown_line = |out: &mut String, (addr, text): &(u32, String)| {
        let mut line = format!("  {:<8}", "");
        write_addr(&mut line, *addr);
        line.push(' ');
        let (mnem, rest) = text.split_once(' ').unwrap_or((text.as_str(), ""));
        let _ = writeln!(
            out,
            "{}",
            st.warn(&format!("{line}{mnem:<18} {:<22} {rest}", "[not decoded]"))
        );
    };
    // (all with main's instructions: in place, the rest after them)
    let is_main = std::ptr::eq(insns.as_ptr(), p.insns.as_ptr());
    let none: &[(u32, String)] = &[];
    let unknown = if is_main { &p.unknown_lines[..] } else { none };
    let listing = Listing::new(insns, details, branches);
    if unknown.is_empty() {
        // every line depends on its instruction only: formatted on all cores
        // (~120 bytes a line: ~1 MB of text per batch)
        return par_write(out, insns.len(), 1 << 13, flush, &|k, o| {
            annotated_line(o, st, p, &insns[k], k, &listing)
        });
    }
    let mut pending = unknown.iter().peekable();
    for (k, insn) in insns.iter().enumerate() {
        while let Some(u) = pending.next_if(|(a, _)| *a < insn.addr) {
            unknown_line(out, u);
        }
        annotated_line(out, st, p, insn, k, &listing);
        piece(out, flush)?;
    }
    for u in pending {
        unknown_line(out, u);
    }
    Ok(())
}

/// Items `0..n` written by `one`, in order, as a sequential loop would write
/// them; big runs are formatted in batches on all cores (each thread into its
/// own buffer, appended in item order: the same bytes whatever the cores).
fn par_write(
    out: &mut String,
    n: usize,
    batch: usize,
    flush: &mut Flush<'_>,
    one: &(dyn Fn(usize, &mut String) + Sync),
) -> std::io::Result<()> {
    let threads = agx_analysis::par::threads();
    if threads < 2 || n < 4096 {
        for i in 0..n {
            one(i, out);
            piece(out, flush)?;
        }
        return Ok(());
    }
    let mut bufs: Vec<String> = vec![String::new(); threads];
    let mut start = 0;
    while start < n {
        let end = (start + batch.max(1)).min(n);
        let per = (end - start).div_ceil(threads);
        std::thread::scope(|sc| {
            let mut rest = bufs.iter_mut().enumerate();
            let (_, mine) = rest.next().expect("one buffer");
            for (t, buf) in rest {
                let (a, b) = (start + t * per, (start + (t + 1) * per).min(end));
                sc.spawn(move || {
                    buf.clear();
                    for i in a..b {
                        one(i, buf);
                    }
                });
            }
            mine.clear();
            for i in start..(start + per).min(end) {
                one(i, mine);
            }
        });
        for buf in &bufs {
            out.push_str(buf);
            piece(out, flush)?;
        }
        start = end;
    }
    Ok(())
}

/// `"│ "` per loop level (at most 8), padded to 8 characters.
const BARS: [&str; 9] = [
    "        ",
    "│       ",
    "│ │     ",
    "│ │ │   ",
    "│ │ │ │ ",
    "│ │ │ │ │ ",
    "│ │ │ │ │ │ ",
    "│ │ │ │ │ │ │ ",
    "│ │ │ │ │ │ │ │ ",
];

/// The stall mark of an instruction, the same words in every view:
/// `(true, "◀◀◀ STALL ~N cy exposed")` when at least half a cycle is left
/// exposed at occupancy (the record's `stall`), else `(false, "◀ stall
/// hidden by the other SIMD-groups")` for a stall of one SIMD-group alone
/// (`stall_single`) of [`STALL_MARK_CYCLES`] or more (one stall figure per
/// instruction: the exposed one).
pub(crate) fn stall_mark(d: &InsnDetail) -> Option<(bool, String)> {
    if d.stall >= 0.5 {
        Some((
            true,
            format!(
                "◀◀◀ STALL ~{} cy exposed{}",
                fmt_cy(d.stall),
                if d.loop_depth > 0 { "/iter" } else { "" }
            ),
        ))
    } else if d.stall_single >= STALL_MARK_CYCLES {
        Some((false, "◀ stall hidden by the other SIMD-groups".to_string()))
    } else {
        None
    }
}

/// The `[UNIT N cy/op]` column of a detail: a function of its cost-table
/// row alone.
fn bracket_of(d: &InsnDetail) -> String {
    if d.unit() != Unit::Ctrl || d.cycles() > 0.0 {
        format!("[{:<4} {:>4}cy/op]", d.unit().name(), fmt_cy(d.cycles()))
    } else {
        format!("[{:<4} {:>4}     ]", "CTRL", "")
    }
}

/// The `[UNIT N cy/op]` column of every cost-table row a function's details
/// use, made once per row (a listing of 1M lines has ~100 distinct ones:
/// formatting the figure per line was a fifth of the listing).
struct Brackets {
    by_key: Vec<Option<(&'static timing::CostEntry, String)>>,
}

impl Brackets {
    fn of(details: &[InsnDetail]) -> Brackets {
        let mut by_key: Vec<Option<(&'static timing::CostEntry, String)>> =
            vec![None; agx_isa::CostKey::COUNT];
        for d in details {
            let slot = &mut by_key[d.entry.key as usize];
            if slot.is_none() {
                *slot = Some((d.entry, bracket_of(d)));
            }
        }
        Brackets { by_key }
    }

    /// Appends `d`'s column to `out` (a row of another table than the one
    /// first seen for its key is formatted in place).
    fn push(&self, out: &mut String, d: &InsnDetail) {
        match self.by_key.get(d.entry.key as usize) {
            Some(Some((e, s))) if std::ptr::eq(*e, d.entry) => out.push_str(s),
            _ => out.push_str(&bracket_of(d)),
        }
    }
}

/// What the lines of one function's listing share: its details, their
/// columns, its branches.
struct Listing<'a> {
    details: &'a [InsnDetail],
    /// `details[k]` is the detail of the `k`-th instruction (addresses
    /// strictly increasing, one detail per instruction): no search.
    by_index: bool,
    brackets: Brackets,
    branches: &'a [Branch],
}

impl<'a> Listing<'a> {
    fn new(
        insns: &[agx_isa::Instruction],
        details: &'a [InsnDetail],
        branches: &'a [Branch],
    ) -> Self {
        let by_index = details.len() == insns.len()
            && details.windows(2).all(|w| w[0].addr < w[1].addr)
            && insns.iter().zip(details).all(|(i, d)| i.addr == d.addr);
        Listing {
            details,
            by_index,
            brackets: Brackets::of(details),
            branches,
        }
    }

    /// The detail of instruction `k` (at `addr`), as [`detail_in`] finds it.
    fn detail(&self, k: usize, addr: u32) -> Option<&'a InsnDetail> {
        if self.by_index {
            self.details.get(k)
        } else {
            detail_in(self.details, addr)
        }
    }
}

/// `s.trim()`, without the Unicode scan when both ends are visible ASCII.
fn trim_fast(s: &str) -> &str {
    match (s.as_bytes().first(), s.as_bytes().last()) {
        (Some(&a), Some(&b)) if (0x21..0x7f).contains(&a) && (0x21..0x7f).contains(&b) => s,
        _ => s.trim(),
    }
}

/// Pads `out` with spaces from `w` characters to `to` (as `{:<to}` pads).
fn pad_to(out: &mut String, w: usize, to: usize) {
    for _ in w..to {
        out.push(' ');
    }
}

/// One line of the annotated disassembly (with its newline), the `k`-th
/// instruction of the function `l` lists, written straight into `out`.
fn annotated_line(
    out: &mut String,
    st: Style,
    p: &Profile,
    insn: &agx_isa::Instruction,
    k: usize,
    l: &Listing<'_>,
) {
    thread_local! {
        static ASM: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
    }
    ASM.with(|b| {
        let asm = &mut *b.borrow_mut();
        let start = out.len();
        let d = l.detail(k, insn.addr);
        let depth = d.map(|d| d.loop_depth).unwrap_or(0) as usize;
        out.push_str("  ");
        out.push_str(BARS[depth.min(8)]);
        write_addr(out, insn.addr);
        out.push(' ');
        asm.clear();
        // native syntax: a stack adjust reads as one, not as a spill
        write_asm(asm, insn, Syntax::Native);
        let (mnem, ops) = asm.split_once(' ').unwrap_or((asm.as_str(), ""));
        out.push_str(mnem);
        pad_to(out, mnem.chars().count(), 18);
        out.push(' ');
        match d {
            Some(d) => l.brackets.push(out, d),
            None => out.push_str("[              ]"),
        }
        out.push(' ');
        out.push_str(trim_fast(ops));
        let mut marks = Vec::new();
        if let Some(sym) = p.call_symbol(insn.addr) {
            marks.push(format!("; -> {sym}"));
        }
        // a divergent branch: both sides run for the SIMD-group (issue 22)
        let branches = l.branches;
        let k = branches.partition_point(|b| b.at < insn.addr);
        for b in branches[k..].iter().take_while(|b| b.at == insn.addr) {
            if !b.uniform {
                marks.push(st.warn(&format!("◆ divergent {}: {}", b.kind.name(), b.reason)));
            }
        }
        if let Some(d) = d {
            // one address for the whole SIMD-group: charged once (issue 22)
            if d.uniform_address {
                marks.push(st.dim("◇ uniform address"));
            }
            if let Some(dep) = &d.raw_dep() {
                if dep.penalty > 0.0 {
                    marks.push(st.warn(&format!(
                        "◀ RAW dep +{:.2} cy (on 0x{:x})",
                        agx_analysis::timing::model::r2(dep.penalty),
                        dep.producer
                    )));
                }
            }
            match stall_mark(d) {
                Some((true, m)) => marks.push(st.bad(&m)),
                Some((false, m)) => marks.push(st.dim(&m)),
                None => {}
            }
        }
        if !marks.is_empty() {
            let w = out[start..].chars().count();
            if w < 86 {
                pad_to(out, w, 86);
            } else {
                out.push_str("  ");
            }
            for (j, m) in marks.iter().enumerate() {
                if j > 0 {
                    out.push_str("  ");
                }
                out.push_str(m);
            }
        }
        let kept = out[start..].trim_end().len();
        out.truncate(start + kept);
        out.push('\n');
    })
}

fn suggestions(
    out: &mut String,
    st: Style,
    p: &Profile,
    flush: &mut Flush<'_>,
) -> std::io::Result<()> {
    section(out, st, "Suggestions");
    let in_callees: usize = p
        .program
        .functions
        .iter()
        .skip(1)
        .map(|f| f.suggestions.len())
        .sum();
    if p.suggestions.is_empty() && in_callees == 0 {
        let _ = writeln!(
            out,
            "  {}",
            st.good("No problems found by the rules (see --explain-model for what they check).")
        );
        return Ok(());
    }
    if in_callees > 0 {
        let _ = writeln!(
            out,
            "  {}",
            st.warn(&format!(
                "{in_callees} suggestion(s) in called functions, listed under Calls with their addresses"
            ))
        );
    }
    par_write(out, p.suggestions.len(), 1 << 13, flush, &|k, o| {
        suggestion_line(o, st, "  ", &p.suggestions[k])
    })
}

/// One suggestion: severity, message, its address.
fn suggestion_line(out: &mut String, st: Style, indent: &str, s: &timing::Suggestion) {
    let _ = writeln!(
        out,
        "{indent}{} {} {}",
        s.severity.icon(),
        s.message,
        st.dim(&format!("[0x{:x}]", s.offset))
    );
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
