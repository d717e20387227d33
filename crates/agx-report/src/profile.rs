//! The report model: one analysed function — instructions, structure and
//! registers (agx-analysis), timing and suggestions (agx-analysis::timing).
//! Every view (text, JSON, annotated disassembly, Python) reads this one
//! simulation, in the manner of llvm-mca's views.

use crate::graph::FunctionGraph;
use agx_analysis::gpu::GpuModel;
use agx_analysis::program::{self, CodeSource, FunctionCode, NoCode, Program};
use agx_analysis::timing::{self, DramVariant, KernelTiming, MemParams, ModelParams, Suggestion};
use agx_analysis::Analysis;
use agx_isa::Instruction;

/// Knobs of the analysis that reports state.
#[derive(Clone, Debug)]
pub struct Options {
    /// Iterations assumed for loops whose trip count is unknown.
    pub trip_count: u32,
    /// Whether `trip_count` was given (`--trip-count`), not the default.
    pub trip_count_given: bool,
    /// Per-loop trip counts by header address (`--trip-count ADDR=N`).
    pub loop_trip_counts: std::collections::BTreeMap<u32, u32>,
    /// Memory-latency assumptions (documented defaults, overridable).
    pub mem: MemParams,
    /// Build [`Profile::graph`] (read by the HTML and DOT views only).
    /// `false` leaves it empty and lets the analysis drop each function's
    /// CFG and loop forest before the timing model runs (lower peak memory;
    /// every other part of the profile is the same). Default `true`.
    pub graph: bool,
    /// The GPU model (ISA, timing table, occupancy rule), chosen once by the
    /// front end (`agx_analysis::gpu::model_for_slice`). Default: the
    /// default model.
    pub gpu: &'static GpuModel,
    /// The chip whose memory parameters `mem` starts from (`--chip`).
    /// Default: the model's default chip.
    pub chip: &'static DramVariant,
    /// Keep the findings that concern less than 1% of the estimate
    /// (`--all-findings`; `Suggestion::is_minor`). Default `false`: hidden.
    pub all_findings: bool,
    /// The threadgroup shape lanes are laid out over for the access
    /// patterns (issue 27): from the input or `--threadgroup`; `None`: the
    /// documented default ([`agx_analysis::address::Shape::DEFAULT`]).
    pub threadgroup: Option<agx_analysis::address::Shape>,
    /// Uniform registers the kernel's preamble fills, with their values
    /// over the uniforms it reads ([`agx_analysis::address::preamble_uniforms`]);
    /// empty when the input records no preamble.
    pub uniform_values: agx_analysis::address::UniformValues,
}

impl Default for Options {
    fn default() -> Self {
        let gpu = agx_analysis::gpu::default_model();
        let chip = gpu.default_chip();
        Options {
            trip_count: timing::DEFAULT_TRIP_COUNT,
            trip_count_given: false,
            loop_trip_counts: Default::default(),
            mem: gpu.mem_params(chip),
            graph: true,
            gpu,
            chip,
            all_findings: false,
            threadgroup: None,
            uniform_values: Default::default(),
        }
    }
}

/// A short summary of the prolog (`_agc.main.constant_program`), which runs
/// once per dispatch rather than per thread.
#[derive(Clone, Debug)]
pub struct PrologSummary {
    pub instructions: usize,
    pub code_bytes: u64,
    /// Uniform/texture/sampler state stores it performs.
    pub state_stores: usize,
}

/// The instruction mix of main: how many instructions go to each unit and
/// use each mnemonic. Counted once here; the text view, the JSON record
/// (`mix`) and Python print it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mix {
    /// (unit, instructions), by unit name.
    pub by_unit: Vec<(&'static str, usize)>,
    /// (mnemonic, instructions), most used first, then by name.
    pub by_mnemonic: Vec<(&'static str, usize)>,
}

impl Mix {
    /// The mix of `insns` with their timing `details` (one per instruction).
    pub fn of(insns: &[Instruction], details: &[timing::InsnDetail]) -> Mix {
        let by_unit = count_names(details.iter().map(|d| d.unit().name()));
        // The names the annotated listing prints (native syntax, e.g.
        // `stack_adjust` where applegpu prints `stack_store`).
        let by_mnem = count_names(insns.iter().map(|i| i.display_mnemonic()));
        let mut by_mnemonic: Vec<(&'static str, usize)> = by_mnem.into_iter().collect();
        by_mnemonic.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        Mix {
            by_unit: by_unit.into_iter().collect(),
            by_mnemonic,
        }
    }
}

/// How many times each name occurs, by name. The names are static strings
/// from a few tables, each met many times (a 1M-instruction kernel has ~100
/// distinct mnemonics): they are counted by address first (a hash of two
/// words, the last one remembered, not a string comparison per item), then
/// merged by text (names of equal text at two addresses count as one).
fn count_names(
    names: impl Iterator<Item = &'static str>,
) -> std::collections::BTreeMap<&'static str, usize> {
    let mut by_addr: std::collections::HashMap<(usize, usize), usize> = Default::default();
    let mut seen: Vec<(&'static str, usize)> = Vec::new();
    let mut last: Option<(&'static str, usize)> = None;
    for n in names {
        let k = match last {
            Some((m, k)) if std::ptr::eq(m, n) => k,
            _ => {
                let k = *by_addr
                    .entry((n.as_ptr() as usize, n.len()))
                    .or_insert_with(|| {
                        seen.push((n, 0));
                        seen.len() - 1
                    });
                last = Some((n, k));
                k
            }
        };
        seen[k].1 += 1;
    }
    let mut out = std::collections::BTreeMap::new();
    for (n, c) in seen {
        *out.entry(n).or_default() += c;
    }
    out
}

/// One analysed function, ready to render.
#[derive(Clone, Debug)]
pub struct Profile {
    pub name: String,
    /// GPU the code was built for, when known (e.g. "G13G").
    pub gpu: Option<String>,
    /// The GPU with its family, e.g. "G14G (M2)" (set by the front end).
    pub gpu_label: Option<String>,
    /// Said when the timing table was not measured on this GPU, e.g. for G14
    /// code profiled with the M1 (G13) table.
    pub timing_note: Option<String>,
    /// Positions the decoder did not know (`<disassembly failed>`), left out
    /// of the analysis (set by the front end).
    pub unknown_encodings: usize,
    /// Each unknown encoding's address and native text
    /// (`unknown.load (8 bytes) 0x...`, `agx_isa::stream::unknown_text`):
    /// the annotated disassembly prints them in place, with no analysis
    /// (set by the front end).
    pub unknown_lines: Vec<(u32, String)>,
    pub insns: Vec<Instruction>,
    pub prolog: Option<PrologSummary>,
    /// `call` sites resolved to symbol names: (address, symbol).
    pub calls: Vec<(u32, String)>,
    pub options: Options,
    /// The kernel's analysis: main's structure with the whole program's
    /// registers, occupancy, peak, spills and fills (see
    /// [`agx_analysis::program`]).
    pub analysis: Analysis,
    /// The kernel's timing: main's, with a `call` part per call site in
    /// the breakdown and the total covering the whole program.
    pub timing: KernelTiming,
    /// Main's own suggestions (the callees' are in `program.functions`).
    pub suggestions: Vec<Suggestion>,
    /// The whole program: main (index 0, its instructions are `insns`, its
    /// suggestions `suggestions` and its loop list `analysis.loops`) and
    /// every function reachable through `call`, the call sites and the
    /// assumptions made.
    pub program: Program,
    /// Show the callees' annotated disassembly after main's (`--part all`).
    pub annotate_callees: bool,
    /// The part of the archive's function this profile shows ("prolog",
    /// "main", "helper") when the user picked parts (`--part prolog|all`):
    /// the text report's title names it; `None` for the default main body.
    pub part: Option<&'static str>,
    /// CFG, loops and per-block costs (the HTML and DOT views).
    pub graph: FunctionGraph,
    /// Main's instruction mix.
    pub mix: Mix,
    /// Branch/call targets outside the code analysed (unresolved targets
    /// less the calls the program resolved to a helper).
    pub outside_targets: usize,
    /// Instructions using encodings applegpu cannot print.
    pub raised: usize,
}

impl Profile {
    /// Per block of [`Profile::graph`]: the divergent branches it holds
    /// (`"divergent if at 0x1c: r2 ← …"`, one per line), for the graph views;
    /// empty when none.
    pub fn divergent_blocks(&self) -> Vec<String> {
        let cfg = &self.graph.cfg;
        let mut v = vec![String::new(); cfg.blocks.len()];
        let Some(main) = self.program.functions.first() else {
            return v;
        };
        for b in main.divergence.branches.iter().filter(|b| !b.uniform) {
            if let Some(&k) = cfg.block_of.get(b.index as usize) {
                let s = &mut v[k as usize];
                if !s.is_empty() {
                    s.push('\n');
                }
                s.push_str(&format!(
                    "divergent {} at 0x{:x}: {}",
                    b.kind.name(),
                    b.at,
                    b.reason
                ));
            }
        }
        v
    }

    /// Runs the analyses and the timing model over `insns` (one function,
    /// entry at the first instruction; calls are left unresolved).
    pub fn build(
        name: String,
        gpu: Option<String>,
        insns: Vec<Instruction>,
        prolog: Option<Vec<Instruction>>,
        calls: Vec<(u32, String)>,
        options: &Options,
    ) -> Profile {
        Profile::build_program(name, gpu, insns, prolog, calls, options, &NoCode)
    }

    /// Runs the whole-program analysis of the kernel whose main body is
    /// `insns` (entry at the first instruction), finding called functions
    /// through `source`.
    pub fn build_program(
        name: String,
        gpu: Option<String>,
        insns: Vec<Instruction>,
        prolog: Option<Vec<Instruction>>,
        mut calls: Vec<(u32, String)>,
        options: &Options,
        source: &dyn CodeSource,
    ) -> Profile {
        let params = ModelParams {
            trip_count: options.trip_count.max(1),
            trip_count_given: options.trip_count_given,
            loop_trip_counts: options.loop_trip_counts.clone(),
            mem: options.mem,
            gpu: options.gpu,
            chip: options.chip,
            threadgroup: options.threadgroup,
            uniform_values: options.uniform_values.clone(),
            ..Default::default()
        };
        let mut main = FunctionCode::new(insns.first().map_or(0, |i| i.addr), None, insns);
        main.name = Some(name.clone());
        let mut program = program::analyze_program_keeping(main, source, &params, options.graph);
        if !options.all_findings {
            for f in &mut program.functions {
                f.suggestions.retain(|s| !s.is_minor());
            }
        }
        // (main's loop list and per-instruction vectors move, not copied:
        // one copy held)
        let analysis = program.take_kernel_analysis();
        let timing = program.take_kernel_timing();
        let insns = std::mem::take(&mut program.functions[0].insns);
        let suggestions = std::mem::take(&mut program.functions[0].suggestions);
        // symbols of the call sites the program resolved
        // (the symbols given first: a stable sort keeps them ahead)
        calls.extend(program.calls.iter().filter_map(|c| match c.callee {
            // the callee's one display name (demangled; main's name)
            Some(k) => Some((c.at, program.functions[k].label())),
            None => c.symbol.as_ref().map(|s| (c.at, s.clone())),
        }));
        calls.sort_by_key(|(a, _)| *a);
        calls.dedup_by_key(|(a, _)| *a);
        let graph = if !options.graph {
            FunctionGraph::default()
        } else {
            let main = &mut program.functions[0];
            FunctionGraph::new(
                std::mem::take(&mut main.cfg),
                std::mem::take(&mut main.loops),
                &insns,
                &timing,
            )
        };
        let prolog = prolog.map(|p| PrologSummary {
            instructions: p.len(),
            code_bytes: p.iter().map(|i| i.len as u64).sum(),
            state_stores: p
                .iter()
                .filter(|i| {
                    i.mem_form().is_some_and(|m| {
                        m.dir == agx_isa::MemDir::Store
                            && matches!(
                                m.space,
                                agx_isa::MemSpace::Uniform | agx_isa::MemSpace::TextureState
                            )
                    })
                })
                .count(),
        });
        let mix = Mix::of(&insns, &timing.instructions_detail);
        let raised = insns.iter().filter(|i| i.raised).count();
        // call targets the program resolved (helpers) are not "outside"
        // (a set: main may hold thousands of calls and targets)
        let resolved: std::collections::HashSet<u32> = program
            .calls
            .iter()
            .filter(|c| c.resolved)
            .map(|c| c.at)
            .collect();
        let outside_targets = analysis
            .cfg
            .unresolved_targets
            .iter()
            .filter(|(at, _)| !resolved.contains(at))
            .count();
        Profile {
            name,
            gpu,
            gpu_label: None,
            timing_note: None,
            unknown_encodings: 0,
            unknown_lines: Vec::new(),
            insns,
            prolog,
            calls,
            options: options.clone(),
            analysis,
            timing,
            suggestions,
            program,
            annotate_callees: false,
            part: None,
            graph,
            mix,
            outside_targets,
            raised,
        }
    }

    /// Symbol a `call` at `addr` resolves to.
    pub fn call_symbol(&self, addr: u32) -> Option<&str> {
        // `calls` is sorted by address in `build`
        self.calls
            .binary_search_by_key(&addr, |(a, _)| *a)
            .ok()
            .map(|i| self.calls[i].1.as_str())
    }
}

/// The asm text of an instruction in the annotated listings (text and
/// HTML: one formatter). Native syntax: applegpu's text, except for an
/// encoding applegpu prints as an earlier form that matches first
/// (`agx_isa::native`): a stack adjust reads `stack_adjust 0, 1, 2, 0,
/// 0, 8` (the form it matches, as the mix and the stack analysis count it),
/// not `stack_store i8, 1, 2, 0, 8, 0` (applegpu's text, which assembles
/// back to a spill). `--disasm-only` and JSON `text` keep applegpu's
/// spelling; JSON `native` holds this one where it differs.
pub fn write_listing_asm<S: agx_isa::format::Sink + ?Sized>(out: &mut S, insn: &Instruction) {
    agx_isa::format::write_asm(out, insn, agx_isa::Syntax::Native);
}

/// A part's name in titles: `helper` is a called function.
pub fn part_label(part: &str) -> &str {
    match part {
        "helper" => "called function",
        p => p,
    }
}

/// What a view of several profiles holds, counted by kind (issue 37: a
/// kernel shown with its helper is "1 kernel, 1 called function", not
/// "2 kernels"): main bodies (`part` `None` or `main`) are kernels, then
/// called functions and prologs.
pub fn count_title<'a>(parts: impl IntoIterator<Item = Option<&'a str>>) -> String {
    let (mut kernels, mut helpers, mut prologs) = (0usize, 0usize, 0usize);
    for p in parts {
        match p {
            Some("helper") => helpers += 1,
            Some("prolog") => prologs += 1,
            _ => kernels += 1,
        }
    }
    let plural = |n: usize, one: &str, many: &str| match n {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    };
    let mut v = vec![plural(kernels, "kernel", "kernels")];
    if helpers > 0 {
        v.push(plural(helpers, "called function", "called functions"));
    }
    if prologs > 0 {
        v.push(plural(prologs, "prolog", "prologs"));
    }
    v.join(", ")
}

#[cfg(test)]
mod title_tests {
    use super::*;

    #[test]
    fn titles_count_kernels_and_helpers_apart() {
        assert_eq!(
            count_title([Some("helper"), Some("main")]),
            "1 kernel, 1 called function"
        );
        assert_eq!(count_title([None, None]), "2 kernels");
        assert_eq!(
            count_title([Some("prolog"), Some("main")]),
            "1 kernel, 1 prolog"
        );
        assert_eq!(part_label("helper"), "called function");
    }
}

/// The listings' legend line for the stack adjust (native syntax names it;
/// applegpu's text for the same word is a `stack_store`, docs/decoder.md).
pub const STACK_ADJUST_LEGEND: &str = "stack_adjust = the stack-pointer adjust (a function's frame allocated at entry, released before return; its last operand is the signed byte amount); applegpu prints it as a stack_store";

impl Profile {
    /// Whether the annotated listing shows a stack adjust (main's code,
    /// and the callees' when they are annotated too).
    pub fn lists_stack_adjust(&self) -> bool {
        let has = |insns: &[Instruction]| insns.iter().any(|i| i.stack_adjust().is_some());
        has(&self.insns)
            || (self.annotate_callees
                && self.program.functions.iter().skip(1).any(|f| has(&f.insns)))
    }
}

/// An address as every profile view prints it (`0x1c`), right-aligned to
/// `width` columns: the annotated listings' address column (text, HTML),
/// in the format the rest of the report uses (issue 37: one address
/// format). `--disasm-only` keeps applegpu's bare hex.
pub struct Addr {
    pub addr: u32,
    pub width: usize,
}

impl Addr {
    /// The address as [`Addr`]'s `Display` prints it, written to `out`
    /// (the text listing's million lines write it so, not through
    /// `core::fmt`).
    pub fn write_to<S: agx_isa::format::Sink + ?Sized>(&self, out: &mut S) {
        let digits = (32 - (self.addr | 1).leading_zeros()).div_ceil(4) as usize;
        for _ in digits + 2..self.width {
            out.put(b' ');
        }
        out.put_ascii(b"0x");
        agx_isa::format::write_lower_hex(out, self.addr);
    }
}

impl std::fmt::Display for Addr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = String::with_capacity(self.width.max(10));
        self.write_to(&mut s);
        f.write_str(&s)
    }
}

#[cfg(test)]
mod addr_tests {
    #[test]
    fn addresses_print_with_0x_right_aligned() {
        let a = |addr, width| super::Addr { addr, width }.to_string();
        assert_eq!(a(0, 6), "   0x0");
        assert_eq!(a(0x1c2, 6), " 0x1c2");
        assert_eq!(a(0x123456, 6), "0x123456");
    }
}
