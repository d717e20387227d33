//! The terminal report, in the seed tool's layout: header box, Registers &
//! Occupancy (with a bar), Pipeline cycles per unit, Critical path, one
//! section per loop, Instruction mix, Annotated disassembly, Suggestions.

use crate::record::{
    FunctionRows, InsnRow, KernelRecord, Loop, StallMark, SuggestionOut, Timed, STALL_HIDDEN_WORDS,
};
use crate::Profile;
use agx_analysis::divergence::Branch;
use agx_analysis::timing;
use agx_analysis::timing::model::{fmt_cy, push_cy};
use agx_isa::format::write_line;
use agx_isa::Syntax;
use std::fmt::Write as _;

/// The report's styles (`anstyle`, issue 36 item 5: named styles instead of
/// hand-written SGR codes; rendered only when colour is on).
mod styles {
    use anstyle::{AnsiColor, Style};
    pub const HEAD: Style = Style::new()
        .bold()
        .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Cyan)));
    pub const BAD: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Red)));
    pub const WARN: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Yellow)));
    pub const GOOD: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Green)));
    pub const INFO: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Cyan)));
    pub const DIM: Style = Style::new().dimmed();
}
use styles::{BAD, DIM, GOOD, HEAD, INFO, WARN};

/// ANSI styling, or none.
#[derive(Clone, Copy)]
struct Style {
    on: bool,
}

impl Style {
    fn wrap(&self, style: anstyle::Style, s: &str) -> String {
        if self.on {
            format!("{}{s}{}", style.render(), style.render_reset())
        } else {
            s.to_string()
        }
    }
    fn head(&self, s: &str) -> String {
        self.wrap(HEAD, s)
    }
    fn bad(&self, s: &str) -> String {
        self.wrap(BAD, s)
    }
    fn warn(&self, s: &str) -> String {
        self.wrap(WARN, s)
    }
    fn good(&self, s: &str) -> String {
        self.wrap(GOOD, s)
    }
    fn dim(&self, s: &str) -> String {
        self.wrap(DIM, s)
    }
    /// The start of [`Style::wrap`]'s text, written in place.
    fn open(&self, out: &mut Vec<u8>, style: anstyle::Style) {
        if self.on {
            let _ = style.write_to(out);
        }
    }
    /// The end of [`Style::wrap`]'s text.
    fn close(&self, out: &mut Vec<u8>) {
        if self.on {
            out.extend_from_slice(anstyle::Reset.render().to_string().as_bytes());
        }
    }
    /// [`Style::wrap`] of `s`, written in place.
    fn put(&self, out: &mut Vec<u8>, style: anstyle::Style, s: &str) {
        self.open(out, style);
        out.extend_from_slice(s.as_bytes());
        self.close(out);
    }
}

const BOX_WIDTH: usize = 62;

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

/// Hands a piece of text to the writer.
type Flush<'a> = dyn FnMut(&[u8]) -> std::io::Result<()> + 'a;

/// Passes `out` on to `flush` (and empties it) once it holds a piece.
fn piece(out: &mut String, flush: &mut Flush<'_>) -> std::io::Result<()> {
    if out.len() >= PIECE {
        flush_all(out, flush)?;
    }
    Ok(())
}

/// Passes all of `out` on to `flush` and empties it.
fn flush_all(out: &mut String, flush: &mut Flush<'_>) -> std::io::Result<()> {
    if !out.is_empty() {
        flush(out.as_bytes())?;
        out.clear();
    }
    Ok(())
}

/// Writes the full text report to `w` piece by piece (the CLI's path: no
/// string of the whole report, which is ~100 bytes per instruction).
pub fn write_report(w: &mut dyn std::io::Write, p: &Profile, color: bool) -> std::io::Result<()> {
    let st = Style { on: color };
    let mut out = String::with_capacity(PIECE + 4096);
    let mut flush = |b: &[u8]| w.write_all(b);
    let rec = KernelRecord::build(p);
    header(&mut out, st, p, &rec);
    registers(&mut out, st, &rec);
    if let Some(t) = &rec.timing {
        pipeline(&mut out, st, t, p.options.gpu.table());
        critical_path(&mut out, st, &rec, t, &mut flush)?;
    }
    // the timed loops, in the model's order (`Loop N` is their `index`)
    let loops: Vec<&Loop> = rec.loops.iter().filter(|l| l.index.is_some()).collect();
    // (a loop's section is ~700 bytes: ~1 MB of text per batch)
    par_write(&mut out, loops.len(), 1 << 10, &mut flush, &|r, o| {
        for i in r {
            loop_section(o, st, loops[i]);
        }
    })?;
    calls(&mut out, st, &rec);
    mix(&mut out, st, &rec);
    memory(&mut out, st, &rec, FunctionRows::main(p));
    annotated(&mut out, st, p, &rec, &mut flush)?;
    suggestions(&mut out, st, &rec, &mut flush)?;
    flush_all(&mut out, &mut flush)
}

/// One row per callee of the program: its call sites, the cycles its calls
/// add, its registers, stack use and suggestions (addresses inside it),
/// each the record's `functions[k]`.
fn calls(out: &mut String, st: Style, rec: &KernelRecord) {
    if rec.calls.is_empty() {
        return;
    }
    section(out, st, "Calls");
    for fr in rec.functions.iter().skip(1) {
        let at = rec.call_sites_of(fr.entry);
        let from_main = fr.timing.as_ref().map_or(0.0, |t| t.cycles_from_main);
        let _ = writeln!(out, "  {} at 0x{:x}", fr.label(), fr.entry);
        kv(out, "  Called at", &at);
        kv(
            out,
            "  Cycles",
            &format!(
                "~{} cy per call ({} cy own, {} instructions); {} cy of the kernel's total from main's calls",
                fmt_cy(fr.total_cycles),
                fmt_cy(fr.own_cycles),
                fr.instructions,
                fmt_cy(from_main)
            ),
        );
        kv(
            out,
            "  Registers",
            &format!(
                "highest {} (half-register index {}), peak live {} half-regs",
                fr.highest_register(),
                fr.highest_half_index,
                fr.peak_live_half
            ),
        );
        if fr.spills > 0 || fr.fills > 0 {
            kv(
                out,
                "  Stack",
                &st.bad(&format!("{} spills, {} fills", fr.spills, fr.fills)),
            );
        }
        for s in &fr.suggestions {
            suggestion_line(out, st, "    ", s);
        }
    }
    for a in &rec.call_assumptions {
        let _ = writeln!(out, "  {}", st.dim(&format!("assumption: {a}")));
    }
}

fn header(out: &mut String, st: Style, p: &Profile, rec: &KernelRecord) {
    let title = match p.part {
        Some(part) => format!(
            "  metal-profiler: {} ({})",
            rec.name,
            crate::profile::part_label(part)
        ),
        None => format!("  metal-profiler: {}", rec.name),
    };
    let title: String = title.chars().take(BOX_WIDTH).collect();
    let pad = BOX_WIDTH.saturating_sub(title.chars().count());
    let _ = writeln!(out, "╔{}╗", "═".repeat(BOX_WIDTH));
    let _ = writeln!(out, "║{}{}║", st.head(&title), " ".repeat(pad));
    let _ = writeln!(out, "╚{}╝", "═".repeat(BOX_WIDTH));
    let gpu = rec.gpu_name.as_deref().or(rec.gpu.as_deref()).map_or_else(
        || format!("{} (assumed)", p.options.gpu.short),
        str::to_string,
    );
    if let Some(m) = rec.timing.as_ref().map(|t| &t.model) {
        let _ = writeln!(
            out,
            "  {} instructions, {} bytes · GPU {} · timing model {} · chip {} · {}",
            rec.instructions,
            rec.code_bytes,
            gpu,
            m.gpu,
            m.chip,
            rec.trip_count_summary()
        );
    }
    if let Some(pr) = &rec.prolog {
        let _ = writeln!(
            out,
            "  prolog: {} instructions ({} bytes, {} state stores), runs once per dispatch, not per thread (--part prolog)",
            pr.instructions, pr.code_bytes, pr.state_stores
        );
    }
    if let Some(note) = &rec.timing_note {
        let _ = writeln!(out, "  {}", st.warn(&format!("note: {note}")));
    }
    if rec.unknown_encodings > 0 {
        let _ = writeln!(
            out,
            "  {}",
            st.warn(&format!(
                "warning: {} encoding(s) the {} tables do not know (marked not decoded below; <disassembly failed> in applegpu syntax); left out of the profile",
                rec.unknown_encodings,
                p.options.gpu.short
            ))
        );
    }
    let raised = rec.raised_instructions;
    if raised > 0 {
        let _ = writeln!(
            out,
            "  {}",
            st.warn(&format!(
                "note: {raised} instruction(s) use encodings applegpu cannot print; shown with our best rendering"
            ))
        );
    }
    let outside = rec.cfg.outside_targets;
    if outside > 0 {
        let _ = writeln!(
            out,
            "  {}",
            st.warn(&format!(
                "note: {outside} branch/call target(s) lie outside the code analysed"
            ))
        );
    }
    let helpers = rec.functions.len().saturating_sub(1);
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

fn registers(out: &mut String, st: Style, rec: &KernelRecord) {
    section(out, st, "Registers & Occupancy");
    let r = &rec.registers;
    let o = &rec.occupancy;
    if r.allocated_half > 0 {
        kv(
            out,
            "Highest register",
            &format!(
                "{} (half-register index {})",
                r.highest_register, r.highest_half_index
            ),
        );
    }
    kv(
        out,
        "Half-regs",
        &format!(
            "{} / {} allocated ({} GPRs; the hardware allocates up to the highest register used)",
            r.allocated_half, r.file_half, r.allocated_gprs
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
            r.peak_live_half, r.peak_live_gprs, peak_at
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
    kv(
        out,
        "Uniforms",
        &format!(
            "{} half-regs (u registers: values shared by the whole dispatch, such as buffer addresses; they do not limit occupancy)",
            r.uniform_half
        ),
    );
    kv(
        out,
        "Occupancy",
        &format!("{:.0}% ({} threads per core)", o.percent, o.threads),
    );
    let _ = writeln!(out, "  {:<18}{}", "", bar(st, o.percent));
    if rec.spills > 0 || rec.fills > 0 || rec.scratch_reserved.is_some() {
        let scratch = rec
            .scratch_reserved
            .map(|s| format!(", scratch reserved {s}"))
            .unwrap_or_default();
        kv(
            out,
            "Stack",
            &st.bad(&format!(
                "{} spills, {} fills{}",
                rec.spills, rec.fills, scratch
            )),
        );
        let k = &rec.stack_kinds;
        if k.total() > 0 {
            kv(
                out,
                "Stack by kind",
                &format!(
                    "{} spill, {} fill, {} save, {} restore, {} private array",
                    k.spill, k.fill, k.save, k.restore, k.private_array
                ),
            );
        }
    }
}

/// The Pipe cycles section: the record's `cycles` of each pipe the timing
/// table lists (`pipes`, in its order).
fn pipeline(out: &mut String, st: Style, t: &Timed, table: &agx_analysis::timing::GpuTiming) {
    section(
        out,
        st,
        "Pipe cycles (per SIMD-group, loops weighted by trip count)",
    );
    let c = &t.cycles;
    let pipes: Vec<String> = table
        .pipes
        .iter()
        .map(|p| format!("{} {:>8}", p.name(), fmt_cy(c.pipe(p.unit))))
        .collect();
    let _ = writeln!(out, "  {}", pipes.join("   "));
    let _ = writeln!(
        out,
        "  L1 bandwidth {}   DRAM bandwidth {}",
        fmt_cy(c.memory_bandwidth),
        fmt_cy(c.device_bandwidth)
    );
    let _ = writeln!(
        out,
        "  busiest ALU pipe {} {}   exposed memory stall {}",
        table.alu_bound_label(),
        fmt_cy(c.alu),
        fmt_cy(c.mem)
    );
    let m = &t.mesa_estimate;
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
    rec: &KernelRecord,
    t: &Timed,
    flush: &mut Flush<'_>,
) -> std::io::Result<()> {
    section(out, st, "Critical path");
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
    let c = &rec.divergence;
    if let Some(r) = &rec.divergence_paths {
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
    }
    for b in &t.breakdown {
        let what = match b.part {
            timing::PartKind::StraightLine => {
                let o = &t.straight_line;
                format!(
                    "straight-line code ({} instructions), bound by {}",
                    o.instructions,
                    timing::bound_label(o.bound.by)
                )
            }
            timing::PartKind::Loop => {
                let l = b.loop_index.and_then(|i| rec.timed_loop(i));
                match l {
                    Some(Loop {
                        index: Some(i),
                        cycles_per_iteration: Some(cpi),
                        trip_count: Some(n),
                        ..
                    }) => format!("loop {i}: {} cy/iter x {n} iterations", fmt_cy(*cpi)),
                    _ => "loop".to_string(),
                }
            }
            timing::PartKind::Call => format!(
                "call to {} x {} (its whole cost, see Calls)",
                rec.calls
                    .iter()
                    .find(|c| c.at == b.at)
                    .and_then(|c| c.display_name.as_deref())
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

/// One loop's section (the record's `loops[]` entry of a timed loop),
/// written straight into `out` (~120k loops in a 1M-instruction kernel: no
/// `format!` per row).
fn loop_section(out: &mut Vec<u8>, st: Style, l: &Loop) {
    let (Some(i), Some(b), Some(bound)) = (l.index, &l.body, &l.bound) else {
        return;
    };
    // section(): "\n  " + head("── Loop {i} (0x{from:x}–0x{to:x}, depth {d}) ──")
    out.extend_from_slice(b"\n  ");
    st.open(out, HEAD);
    out.extend_from_slice("── Loop ".as_bytes());
    put_u(out, i as u64);
    out.extend_from_slice(b" (0x");
    put_hex(out, l.start);
    out.extend_from_slice("–0x".as_bytes());
    put_hex(out, l.end);
    out.extend_from_slice(b", depth ");
    put_u(out, l.depth as u64);
    out.extend_from_slice(") ──".as_bytes());
    st.close(out);
    out.push(b'\n');
    put_key(out, "Instructions");
    put_u(out, l.instructions as u64);
    out.extend_from_slice(b" (");
    put_u(out, b.instructions as u64);
    out.extend_from_slice(b" in its own body)\n");
    let src = match (l.trip_count_source.unwrap_or("default"), l.trip_count_max) {
        ("default", _) => "default; set with --trip-count".to_string(),
        ("given", _) => "given with --trip-count".to_string(),
        ("code", _) => "proved by the code".to_string(),
        ("bounded", Some(m)) => format!("bounded: at most {m} by the code, the most assumed"),
        ("argument", _) => format!(
            "argument: bound by the kernel argument in {}; set with --trip-count",
            l.trip_count_bound
                .as_deref()
                .unwrap_or("a uniform register")
        ),
        ("user", _) => "user: set with --trip-count ADDR=N".to_string(),
        (other, _) => other.to_string(),
    };
    put_key(out, "Trip count");
    put_u(out, l.trip_count.unwrap_or(0) as u64);
    out.extend_from_slice(b" (");
    out.extend_from_slice(src.as_bytes());
    out.extend_from_slice(b")\n");
    put_key(out, "Loads/iter");
    put_u(out, b.loads as u64);
    out.push(b'\n');
    put_key(out, "Stores/iter");
    put_u(out, b.stores as u64);
    out.push(b'\n');
    put_key(out, "Cost/iter");
    put_cy(out, l.cycles_per_iteration.unwrap_or(0.0));
    out.extend_from_slice(b" cy, bound by ");
    out.extend_from_slice(timing::bound_label(bound.by).as_bytes());
    out.push(b'\n');
    put_key(out, "Bounds/iter");
    let nested_cy = l.nested_cycles.unwrap_or(0.0);
    for (k, n) in timing::BOUND_NAMES.iter().enumerate() {
        let v = bound.components.get(n).copied().unwrap_or(0.0);
        // the synchronisation bounds only where the loop's own code has them
        if (v - nested_cy).abs() < 1e-9 && matches!(*n, "barrier" | "atomic") {
            continue;
        }
        if k > 0 {
            out.extend_from_slice(" · ".as_bytes());
        }
        out.extend_from_slice(n.as_bytes());
        out.push(b' ');
        put_cy(out, bound.components.get(n).copied().unwrap_or(0.0));
    }
    // (printed from a hundredth on)
    if let Some(nested) = l.nested_cycles.filter(|&c| c > 0.0) {
        out.extend_from_slice(b" (each includes ");
        put_cy(out, nested);
        out.extend_from_slice(b" cy of nested loops)");
    }
    out.push(b'\n');
    if b.exposed_stall > 0.0 {
        // kv("Stall", bad("~{} cy/iter exposed at this occupancy ({} of it at memory waits)"))
        put_key(out, "Stall");
        st.open(out, BAD);
        out.push(b'~');
        put_cy(out, b.exposed_stall);
        out.extend_from_slice(b" cy/iter exposed at this occupancy (");
        put_cy(out, b.memory_stall);
        out.extend_from_slice(b" of it at memory waits)");
        st.close(out);
        out.push(b'\n');
    }
    put_key(out, "Bottleneck");
    out.extend_from_slice(l.bottleneck.as_deref().unwrap_or("").as_bytes());
    out.push(b'\n');
}

/// The "Memory" section (issue 27): per loop holding memory instructions
/// (hottest first; then the code outside loops), each access with its lane
/// pattern, the bytes and cache lines one SIMD-group moves per iteration:
/// the record's regions ([`crate::record::MemorySection`]), each access
/// the row of its instruction ([`crate::record::memory_line`]).
fn memory(out: &mut String, st: Style, rec: &KernelRecord, rows: FunctionRows<'_>) {
    let m = &rec.memory;
    if m.regions.is_empty() {
        return;
    }
    section(out, st, "Memory");
    let _ = writeln!(
        out,
        "  lanes over a {} threadgroup ({}); lines: cache lines one SIMD-group request touches (cache_line_bytes, --explain-model); lines ?: not counted (device memory only, and only where the lane pattern is known)",
        m.shape_text(),
        m.shape.source_text()
    );
    const MAX_REGIONS: usize = 12;
    const MAX_ROWS: usize = 16;
    for (g, r) in m.regions.iter().enumerate() {
        if g == MAX_REGIONS {
            let _ = writeln!(out, "  ... more regions: JSON instructions_detail[].access");
            break;
        }
        let _ = writeln!(out, "  {}", rec.memory_title(r));
        for (k, &i) in r.rows.iter().enumerate() {
            if k == MAX_ROWS {
                let _ = writeln!(out, "      ... more: JSON instructions_detail[].access");
                break;
            }
            if let Some(a) = crate::record::memory_line(&rows.row(i)) {
                let _ = writeln!(out, "    {}", a);
            }
        }
    }
}

fn mix(out: &mut String, st: Style, rec: &KernelRecord) {
    section(out, st, "Instruction mix");
    let units: Vec<String> = rec
        .mix
        .by_unit
        .iter()
        .map(|(u, n)| format!("{u} {n}"))
        .collect();
    let _ = writeln!(out, "  by unit: {}", units.join(" · "));
    let top: Vec<String> = rec
        .mix
        .by_mnemonic
        .iter()
        .take(12)
        .map(|m| format!("{} {}", m.mnemonic, m.count))
        .collect();
    let _ = writeln!(out, "  top:     {}", top.join(" · "));
}

fn annotated(
    out: &mut String,
    st: Style,
    p: &Profile,
    rec: &KernelRecord,
    flush: &mut Flush<'_>,
) -> std::io::Result<()> {
    section(out, st, "Annotated disassembly");
    let _ = writeln!(
        out,
        "  {}",
        st.dim("[UNIT N cy/op] = the pipe and its reciprocal throughput (cycles per instruction per SIMD-group); STALL = cycles left exposed at this occupancy")
    );
    if p.lists_stack_adjust() {
        let _ = writeln!(out, "  {}", st.dim(crate::profile::STACK_ADJUST_LEGEND));
    }
    let marks = p.annotate_callees && rec.functions.len() > 1;
    if marks {
        let _ = writeln!(
            out,
            "  {}",
            st.head(&format!("; ── main ({}) ──", rec.name))
        );
    }
    let branches = |k: usize| rec.functions.get(k).map_or(&[][..], |f| &f.branches[..]);
    annotated_function(
        out,
        st,
        FunctionRows::main(p),
        &p.unknown_lines,
        branches(0),
        flush,
    )?;
    if marks {
        for (k, f) in rec.functions.iter().enumerate().skip(1) {
            let _ = writeln!(
                out,
                "  {}",
                st.head(&format!(
                    "; ── {} at 0x{:x} (called function) ──",
                    f.label(),
                    f.entry
                ))
            );
            let Some(rows) = FunctionRows::function(p, k) else {
                continue;
            };
            annotated_function(out, st, rows, &[], branches(k), flush)?;
        }
    }
    Ok(())
}

/// One function's annotated listing: its rows, with the unknown encodings
/// `unknown` (main's) printed in place.
fn annotated_function(
    out: &mut String,
    st: Style,
    rows: FunctionRows<'_>,
    unknown: &[(u32, String)],
    branches: &[Branch],
    flush: &mut Flush<'_>,
) -> std::io::Result<()> {
    // unknown encodings print in place, before the first instruction after them
    let unknown_line = |out: &mut Vec<u8>, (addr, text): &(u32, String)| {
        let mut line = format!("  {:<8}", "");
        let _ = write!(
            line,
            "{}:",
            crate::profile::Addr {
                addr: *addr,
                width: 6
            }
        );
        line.push(' ');
        let (mnem, rest) = text.split_once(' ').unwrap_or((text.as_str(), ""));
        let s = st.warn(&format!("{line}{mnem:<18} {:<22} {rest}", "[not decoded]"));
        out.extend_from_slice(s.as_bytes());
        out.push(b'\n');
    };
    let insns = rows.insns();
    let listing = Listing::new(rows, branches);
    if unknown.is_empty() || (listing.walk && unknown.windows(2).all(|w| w[0].0 <= w[1].0)) {
        // Every line depends on its instruction only: formatted on all
        // cores (~120 bytes a line: ~1 MB of text per batch). With the
        // addresses ascending, the unknown encodings printed before line k
        // are those at or after line k-1's address and before line k's,
        // so each batch finds its own from its first line (a kernel with
        // one undecoded position formatted its whole listing on one core)
        let before = |addr: u32| unknown.partition_point(|u| u.0 < addr);
        par_write(out, insns.len(), 1 << 13, flush, &|r, o| {
            let mut j = if r.start == 0 {
                0
            } else {
                before(insns[r.start - 1].addr)
            };
            let mut k = r.start;
            while k < r.end {
                while j < unknown.len() && unknown[j].0 < insns[k].addr {
                    unknown_line(o, &unknown[j]);
                    j += 1;
                }
                // the lines up to the next unknown encoding's place
                let stop = match unknown.get(j) {
                    Some(u) => k + insns[k..r.end].partition_point(|i| i.addr <= u.0),
                    None => r.end,
                };
                let stop = stop.max(k + 1);
                annotated_lines(o, st, k..stop, &listing);
                k = stop;
            }
        })?;
        let mut buf = Vec::new();
        let tail = insns.last().map_or(0, |i| before(i.addr));
        for u in &unknown[tail..] {
            unknown_line(&mut buf, u);
        }
        return flush(&buf);
    }
    flush_all(out, flush)?;
    let mut buf = Vec::with_capacity(PIECE + 4096);
    let mut pending = unknown.iter().peekable();
    for (k, insn) in insns.iter().enumerate() {
        while let Some(u) = pending.next_if(|(a, _)| *a < insn.addr) {
            unknown_line(&mut buf, u);
        }
        annotated_lines(&mut buf, st, k..k + 1, &listing);
        if buf.len() >= PIECE {
            flush(&buf)?;
            buf.clear();
        }
    }
    for u in pending {
        unknown_line(&mut buf, u);
    }
    flush(&buf)
}

/// Items `0..n` written by `one` (a run of items at a time, in order), as a
/// sequential loop would write them; big runs are formatted in batches on
/// all cores (each thread into its own buffer, handed to `flush` in item
/// order: the same bytes whatever the cores). `out` is flushed first.
fn par_write(
    out: &mut String,
    n: usize,
    batch: usize,
    flush: &mut Flush<'_>,
    one: &(dyn Fn(std::ops::Range<usize>, &mut Vec<u8>) + Sync),
) -> std::io::Result<()> {
    flush_all(out, flush)?;
    let threads = agx_analysis::par::threads();
    if threads < 2 || n < 4096 {
        // runs of items small enough to hand on about a piece at a time
        const RUN: usize = 64;
        let mut buf = Vec::with_capacity(PIECE + (PIECE >> 2));
        let mut start = 0;
        while start < n {
            let end = (start + RUN).min(n);
            one(start..end, &mut buf);
            if buf.len() >= PIECE {
                flush(&buf)?;
                buf.clear();
            }
            start = end;
        }
        if !buf.is_empty() {
            flush(&buf)?;
        }
        return Ok(());
    }
    let mut bufs: Vec<Vec<u8>> = vec![Vec::new(); threads];
    let mut start = 0;
    while start < n {
        let end = (start + batch.max(1)).min(n);
        let per = (end - start).div_ceil(threads);
        agx_analysis::par::install(|| {
            use rayon::prelude::*;
            bufs.par_iter_mut().enumerate().for_each(|(t, buf)| {
                let (a, b) = (start + t * per, (start + (t + 1) * per).min(end));
                // the thread writes into a buffer whose header (pointer,
                // length) is its own, on its stack: the headers side by
                // side in `bufs` share a cache line, and every byte pushed
                // moved that line between the cores (false sharing: the
                // listing took 5x the CPU of one core's)
                let mut own = std::mem::take(buf);
                own.clear();
                if a < b {
                    one(a..b, &mut own);
                }
                *buf = own;
            })
        });
        for buf in &bufs {
            if !buf.is_empty() {
                flush(buf)?;
            }
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

/// The `[UNIT N cy/op]` column of a row (`[CTRL          ]` for a
/// control instruction of no cost, blank without a detail), written in
/// place: the unit padded to 4, the row's `cycles` right-aligned in 4.
fn put_bracket(out: &mut Vec<u8>, r: &InsnRow<'_>) {
    match (r.unit, r.cycles) {
        (Some(u), Some(c)) if u != "CTRL" || c > 0.0 => {
            out.push(b'[');
            out.extend_from_slice(u.as_bytes());
            pad_bytes(out, u.len(), 4);
            out.push(b' ');
            let s = out.len();
            put_cy(out, c);
            let n = out.len() - s;
            if n < 4 {
                pad_bytes(out, n, 4);
                out[s..].rotate_right(4 - n);
            }
            out.extend_from_slice(b"cy/op]");
        }
        (Some(_), _) => out.extend_from_slice(b"[CTRL          ]"),
        _ => out.extend_from_slice(b"[              ]"),
    }
}

/// What the lines of one function's listing share: its rows, its
/// branches.
struct Listing<'a> {
    rows: FunctionRows<'a>,
    branches: &'a [Branch],
    /// `branches` in address order and the instructions in strictly
    /// increasing address order: a run of lines walks the branches once.
    walk: bool,
}

impl<'a> Listing<'a> {
    fn new(rows: FunctionRows<'a>, branches: &'a [Branch]) -> Self {
        let walk = branches.windows(2).all(|w| w[0].at <= w[1].at)
            && rows.insns().windows(2).all(|w| w[0].addr < w[1].addr);
        Listing {
            rows,
            branches,
            walk,
        }
    }
}

/// Whether `str::trim` trims this ASCII byte.
fn is_blank(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// `s.trim()` (`s` UTF-8), the ASCII blanks cut without a Unicode scan.
fn trim_bytes(s: &[u8]) -> &[u8] {
    let a = s.iter().take_while(|&&c| is_blank(c)).count();
    let s = &s[a..];
    let s = &s[..s.len() - s.iter().rev().take_while(|&&c| is_blank(c)).count()];
    match (s.first(), s.last()) {
        (Some(&a), Some(&b)) if a >= 0x80 || b >= 0x80 => {
            // (a character past ASCII at an end: Unicode's blanks)
            std::str::from_utf8(s).map_or(s, |t| t.trim().as_bytes())
        }
        _ => s,
    }
}

/// `s.trim_end()` (`s` UTF-8), the ASCII blanks cut without a Unicode scan.
fn trim_end_bytes(s: &[u8]) -> &[u8] {
    let s = &s[..s.len() - s.iter().rev().take_while(|&&c| is_blank(c)).count()];
    match s.last() {
        Some(&b) if b >= 0x80 => std::str::from_utf8(s).map_or(s, |t| t.trim_end().as_bytes()),
        _ => s,
    }
}

/// Lines `r` of the annotated disassembly of the function `l` lists (each
/// with its newline), written straight into `out`.
fn annotated_lines(out: &mut Vec<u8>, st: Style, r: std::ops::Range<usize>, l: &Listing<'_>) {
    thread_local! {
        static ASM: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    ASM.with(|b| {
        let asm = &mut *b.borrow_mut();
        let insns = l.rows.insns();
        let branches = l.branches;
        // the first branch at or after the line's address
        let mut j = match insns.get(r.start) {
            Some(i) => branches.partition_point(|b| b.at < i.addr),
            None => return,
        };
        for k in r {
            let insn = &insns[k];
            if l.walk {
                while j < branches.len() && branches[j].at < insn.addr {
                    j += 1;
                }
            } else {
                j = branches.partition_point(|b| b.at < insn.addr);
            }
            annotated_line(out, asm, st, insn, &l.rows.row(k), &branches[j..]);
        }
    })
}

/// One line of the annotated disassembly (with its newline): the
/// instruction `insn` and its row `row` (every figure and mark is the
/// row's), written straight into `out` (`asm` is scratch space; `branches`
/// start at the first at or after the instruction).
fn annotated_line(
    out: &mut Vec<u8>,
    asm: &mut Vec<u8>,
    st: Style,
    insn: &agx_isa::Instruction,
    row: &InsnRow<'_>,
    branches: &[Branch],
) {
    let start = out.len();
    let depth = row.loop_depth.unwrap_or(0) as usize;
    out.extend_from_slice(b"  ");
    out.extend_from_slice(BARS[depth.min(8)].as_bytes());
    write_listing_addr(out, insn.addr);
    out.push(b' ');
    asm.clear();
    crate::profile::write_listing_asm(asm, insn);
    let (mnem, ops) = match asm.iter().position(|&c| c == b' ') {
        Some(i) => (&asm[..i], &asm[i + 1..]),
        None => (&asm[..], &[][..]),
    };
    out.extend_from_slice(mnem);
    pad_bytes(out, char_count(mnem), 18);
    out.push(b' ');
    put_bracket(out, row);
    out.push(b' ');
    out.extend_from_slice(trim_bytes(ops));
    // the marks: the first after padding to column 86, the others two
    // spaces apart
    let mut marked = false;
    let mut mark = |out: &mut Vec<u8>| {
        if marked {
            out.extend_from_slice(b"  ");
        } else {
            marked = true;
            let w = char_count(&out[start..]);
            if w < 86 {
                pad_bytes(out, w, 86);
            } else {
                out.extend_from_slice(b"  ");
            }
        }
    };
    if let Some(sym) = row.call_target {
        mark(out);
        out.extend_from_slice(b"; -> ");
        out.extend_from_slice(sym.as_bytes());
    }
    // a divergent branch: both sides run for the SIMD-group (issue 22)
    for b in branches.iter().take_while(|b| b.at == insn.addr) {
        if !b.uniform {
            mark(out);
            st.open(out, WARN);
            out.extend_from_slice("◆ divergent ".as_bytes());
            out.extend_from_slice(b.kind.name().as_bytes());
            out.extend_from_slice(b": ");
            let _ = std::io::Write::write_fmt(out, format_args!("{}", b.reason));
            st.close(out);
        }
    }
    if row.unit.is_some() {
        // one address for the whole SIMD-group: charged once (issue 22)
        if row.uniform_address {
            mark(out);
            st.put(out, DIM, "◇ uniform address");
        }
        // what a stack access is for (issue 27 item 4)
        if let Some(k) = row.stack_kind {
            mark(out);
            st.put(out, DIM, &["◇ stack: ", k].concat());
        }
        // the access pattern of a memory instruction (issue 27)
        if let Some(a) = row.access_words() {
            mark(out);
            st.put(out, INFO, &a);
        }
        if let Some(dep) = &row.raw_dep {
            if dep.penalty > 0.0 {
                mark(out);
                st.open(out, WARN);
                out.extend_from_slice("◀ RAW dep +".as_bytes());
                put_fixed2(out, dep.penalty);
                out.extend_from_slice(b" cy (on 0x");
                put_hex(out, dep.producer);
                out.push(b')');
                st.close(out);
            }
        }
        // the row's stall mark (`InsnRow::stall_words`), written in place
        match row.stall_mark {
            Some(StallMark::Exposed) => {
                mark(out);
                st.open(out, BAD);
                out.extend_from_slice("◀◀◀ STALL ~".as_bytes());
                put_cy(out, row.stall.unwrap_or(0.0));
                out.extend_from_slice(b" cy exposed");
                if depth > 0 {
                    out.extend_from_slice(b"/iter");
                }
                st.close(out);
            }
            Some(StallMark::Hidden) => {
                mark(out);
                st.put(out, DIM, STALL_HIDDEN_WORDS);
            }
            None => {}
        }
    }
    // trailing blanks trimmed, as `str::trim_end` trims them
    let kept = trim_end_bytes(&out[start..]).len();
    out.truncate(start + kept);
    out.push(b'\n');
}

fn suggestions(
    out: &mut String,
    st: Style,
    rec: &KernelRecord,
    flush: &mut Flush<'_>,
) -> std::io::Result<()> {
    section(out, st, "Suggestions");
    let in_callees: usize = rec
        .functions
        .iter()
        .skip(1)
        .map(|f| f.suggestions.len())
        .sum();
    if !rec.has_findings() {
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
    par_write(out, rec.suggestions.len(), 1 << 13, flush, &|r, o| {
        for k in r {
            suggestion_bytes(o, st, "  ", &rec.suggestions[k]);
        }
    })
}

/// One suggestion as the text report prints it, without colour (the
/// untimed report's Suggestions section).
pub(crate) fn plain_suggestion_line(out: &mut String, indent: &str, s: &SuggestionOut) {
    suggestion_line(out, Style { on: false }, indent, s);
}

/// One suggestion: severity, message, its address.
fn suggestion_line(out: &mut String, st: Style, indent: &str, s: &SuggestionOut) {
    let mut b = Vec::new();
    suggestion_bytes(&mut b, st, indent, s);
    out.push_str(std::str::from_utf8(&b).unwrap_or_default());
}

/// [`suggestion_line`], written to bytes.
fn suggestion_bytes(out: &mut Vec<u8>, st: Style, indent: &str, s: &SuggestionOut) {
    out.extend_from_slice(indent.as_bytes());
    out.extend_from_slice(s.severity.icon().as_bytes());
    out.push(b' ');
    out.extend_from_slice(s.message.as_bytes());
    out.push(b' ');
    st.open(out, DIM);
    out.extend_from_slice(b"[0x");
    put_hex(out, s.offset);
    out.push(b']');
    st.close(out);
    out.push(b'\n');
    // the fact it rests on and its sites (issue 27 item 5)
    if !s.fact.is_empty() || s.sites.len() > 1 {
        out.extend_from_slice(indent.as_bytes());
        st.open(out, DIM);
        out.extend_from_slice(b"   fact: ");
        out.extend_from_slice(s.fact.as_bytes());
        if s.sites.len() > 1 {
            out.extend_from_slice(b"; sites:");
            for &a in s.sites.iter().take(8) {
                out.extend_from_slice(b" 0x");
                put_hex(out, a);
            }
            if s.sites.len() > 8 {
                out.extend_from_slice(" …".as_bytes());
            }
        }
        st.close(out);
        out.push(b'\n');
    }
}

// ── byte writers for the rows written per loop / per instruction ──

/// Spaces for padding.
const SPACES: &[u8; 64] = b"                                                                ";

/// Pads `out` with spaces from `w` characters to `to` (as `{:<to}` pads).
fn pad_bytes(out: &mut Vec<u8>, w: usize, to: usize) {
    let mut n = to.saturating_sub(w);
    while n > 0 {
        let k = n.min(SPACES.len());
        out.extend_from_slice(&SPACES[..k]);
        n -= k;
    }
}

/// Characters of UTF-8 text (its bytes but continuation bytes).
fn char_count(b: &[u8]) -> usize {
    b.iter().filter(|&&c| (c & 0xc0) != 0x80).count()
}

/// [`kv_key`], written to bytes.
fn put_key(out: &mut Vec<u8>, key: &str) {
    out.extend_from_slice(b"  ");
    out.extend_from_slice(key.as_bytes());
    out.push(b':');
    let w = if key.is_ascii() {
        key.len()
    } else {
        key.chars().count()
    };
    pad_bytes(out, w + 1, 18);
}

/// `"00"` to `"99"`.
const PAIRS: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

/// `{}` of an unsigned integer (the text rows' and the JSON rows').
pub(crate) fn put_u(out: &mut Vec<u8>, v: u64) {
    if v < 10 {
        out.push(b'0' + v as u8);
        return;
    }
    let n = v.ilog10() as usize + 1;
    let mut buf = [0u8; 20];
    let mut i = n;
    let mut v = v;
    while v >= 100 {
        let r = (v % 100) as usize;
        v /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&PAIRS[2 * r..2 * r + 2]);
    }
    if v >= 10 {
        buf[..2].copy_from_slice(&PAIRS[2 * v as usize..2 * v as usize + 2]);
    } else {
        buf[0] = b'0' + v as u8;
    }
    // a copy of fixed size, then the length cut: no call to `memcpy`
    let len = out.len();
    out.extend_from_slice(&buf);
    out.truncate(len + n);
}

/// The annotated listing's address column: `0x1c:`, right-aligned to 6.
fn write_listing_addr(out: &mut Vec<u8>, addr: u32) {
    crate::profile::Addr { addr, width: 6 }.write_to(out);
    out.push(b':');
}

/// `{:x}` of a `u32` (the formatter's hex writer).
fn put_hex(out: &mut Vec<u8>, v: u32) {
    agx_isa::format::write_lower_hex(out, v);
}

/// The hundredths `k` of `x` (`(x * 100).round()`, the rounding of
/// [`agx_analysis::timing::model::r2`]) when `|k| < 1e15`, else `None`.
/// Below that `r2(x)` is within 0.004 of `k / 100` (half its ulp), so it is
/// whole exactly when `k` is a multiple of 100, and `{:.2}` of it prints `k`
/// with the point put in.
fn hundredths(x: f64) -> Option<i64> {
    let k = (x * 100.0).round();
    (k.abs() < 1e15).then_some(k as i64)
}

/// `push_cy` (agx-analysis' cycle figure: `12`, `5.84`), the same
/// characters: `r2(x)` is `k / 100` for the hundredths `k`, whole exactly
/// when `k` is a multiple of 100 (test `put_cy_spells_as_push_cy`).
fn put_cy(out: &mut Vec<u8>, x: f64) {
    match hundredths(x) {
        Some(k) => {
            if k < 0 {
                out.push(b'-');
            }
            let a = k.unsigned_abs();
            put_u(out, a / 100);
            let f = a % 100;
            if f != 0 {
                out.extend_from_slice(&[b'.', b'0' + (f / 10) as u8, b'0' + (f % 10) as u8]);
            }
        }
        None => {
            let mut s = String::new();
            push_cy(&mut s, x);
            out.extend_from_slice(s.as_bytes());
        }
    }
}

/// `{:.2}` of `r2(x)`, the same characters (test
/// `put_fixed2_spells_as_format`).
fn put_fixed2(out: &mut Vec<u8>, x: f64) {
    match hundredths(x) {
        Some(k) if k >= 0 && !(k == 0 && x.is_sign_negative()) => {
            let a = k as u64;
            put_u(out, a / 100);
            let f = a % 100;
            out.extend_from_slice(&[b'.', b'0' + (f / 10) as u8, b'0' + (f % 10) as u8]);
        }
        _ => {
            let _ = std::io::Write::write_fmt(
                out,
                format_args!("{:.2}", agx_analysis::timing::model::r2(x)),
            );
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Figures across every magnitude the model prints (deep loop nests
    /// reach 1e13 cycles), on and off the hundredths, and the odd ones.
    fn figures() -> Vec<f64> {
        let mut v = vec![
            0.0,
            -0.0,
            0.004,
            -0.004,
            0.005,
            -0.005,
            0.0049999,
            0.015,
            0.125,
            1.005,
            2.675,
            99.995,
            1e9,
            1e12,
            1e12 - 0.01,
            1e12 + 0.01,
            2f64.powi(40) + 0.25,
            2f64.powi(45),
            1e13 + 0.5,
            9.999_999_999_999e12,
            1e15,
            1e16,
            1e20,
            -1e20,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        for k in -2000i64..20000 {
            v.push(k as f64 / 100.0);
            v.push(k as f64 / 1000.0);
        }
        let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let m = (s >> 11) as f64 / (1u64 << 53) as f64;
            let e = (s % 19) as i32 - 4;
            let x = m * 10f64.powi(e);
            v.push(if s & 1 == 0 { x } else { -x });
            // near a hundredth's half
            let h = ((x * 100.0).trunc() + 0.5) / 100.0;
            v.push(h);
            v.push(f64::from_bits(h.to_bits() + 1));
            v.push(f64::from_bits(h.to_bits().saturating_sub(1)));
        }
        v
    }

    #[test]
    fn put_cy_spells_as_push_cy() {
        for x in figures() {
            let mut a = String::new();
            push_cy(&mut a, x);
            let mut b = Vec::new();
            put_cy(&mut b, x);
            assert_eq!(a.as_bytes(), &b[..], "{x:e}");
        }
    }

    #[test]
    fn put_fixed2_spells_as_format() {
        for x in figures() {
            let a = format!("{:.2}", agx_analysis::timing::model::r2(x));
            let mut b = Vec::new();
            put_fixed2(&mut b, x);
            assert_eq!(a.as_bytes(), &b[..], "{x:e}");
        }
    }

    #[test]
    fn integers_spell_as_format() {
        let mut v: Vec<u64> = (0..1000).collect();
        v.extend([u64::MAX, u64::MAX - 1, 1 << 32, 1 << 53, 10u64.pow(19)]);
        for x in v {
            let mut b = Vec::new();
            put_u(&mut b, x);
            assert_eq!(format!("{x}").as_bytes(), &b[..]);
            let h = x as u32;
            let mut b = Vec::new();
            put_hex(&mut b, h);
            assert_eq!(format!("{h:x}").as_bytes(), &b[..]);
        }
    }

    #[test]
    fn trims_as_str_trims() {
        for t in [
            "",
            " ",
            "  a b  ",
            "\t\x0b\x0c\r\n x",
            "a\u{a0}",
            "\u{a0} a \u{2003}",
            " é ",
            "◀ x",
            "x \u{85} ",
            "\u{1680}",
            "a\u{a0} \t",
        ] {
            assert_eq!(trim_bytes(t.as_bytes()), t.trim().as_bytes(), "{t:?}");
            assert_eq!(
                trim_end_bytes(t.as_bytes()),
                t.trim_end().as_bytes(),
                "{t:?}"
            );
        }
    }

    #[test]
    fn keys_pad_as_format() {
        for k in [
            "Stall",
            "Instructions",
            "Trip count",
            "a-very-long-key-indeed",
            "é",
        ] {
            let mut a = String::new();
            kv_key(&mut a, k);
            let mut b = Vec::new();
            put_key(&mut b, k);
            assert_eq!(a.as_bytes(), &b[..]);
            assert_eq!(a, format!("  {:<18}", format!("{k}:")));
        }
    }
}
