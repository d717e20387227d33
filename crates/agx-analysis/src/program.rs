//! The whole-program view of a kernel: its main body and every function
//! reachable from it through `call` (issue 12).
//!
//! The hardware runs the helpers with the kernel's register allocation, so
//! the kernel's figures are the program's:
//!
//! * **Registers and occupancy**: the highest half-register touched by any
//!   reachable function (the allocation covers the whole program;
//!   `timing.md`, "Occupancy and registers"), occupancy from that.
//! * **Spills, fills, scratch**: summed over the reachable functions, each
//!   counted once (static counts, like Mesa's `spills`/`fills`; the scratch
//!   sum is an upper bound of the deepest chain of nested frames).
//! * **Liveness across calls**: each function is solved after its callees;
//!   a callee's summary (registers it reads before writing them = uses at the
//!   call; registers it writes = definitions; the call's link register `r1`
//!   is written first; registers it saves to the stack and restores are
//!   neither) is applied at its call sites
//!   ([`crate::liveness::liveness_with_calls`]), so nothing a callee writes
//!   is live into the kernel's entry. The peak of a function is the larger
//!   of its own peak and, at each call, what the caller keeps live across
//!   the call plus the callee's (whole) peak.
//! * **Cost**: each call site costs the callee's whole cost (its loops and
//!   their trip counts, its own calls) times the number of times the call
//!   runs per execution of its caller (enclosing loops' trip counts); this is
//!   the `call` part of the caller's breakdown. The call and return overhead
//!   is the cost the timing table gives the `call` instruction (counted in
//!   the caller) and the `ret` (counted in the callee): no extra refill
//!   penalty is known for the modelled GPU, none is added (stated in
//!   [`Program::assumptions`]).
//! * **Recursion** (a call to a function already on the call chain, e.g.
//!   Apple's `simple_call` helper calls itself) is cut at one level: the
//!   recursive call costs the callee's own cost without its calls, and the
//!   peak uses the callee's own peak. **Unresolved** calls (through a
//!   register, or to an address outside the code given) add nothing but the
//!   `call` instruction. Both are listed as assumptions; neither is silently
//!   costed as one cycle.
//!
//! Functions are analysed alone ([`crate::analyze_detailed_calls`], timing
//! with the program's occupancy); their own figures are kept
//! ([`ProgramFunction`]) beside the inclusive ones ([`Inclusive`]).

use crate::divergence::{CalleeSummary, Divergence};
use crate::liveness::{half_names, DefUse, GprSet};
use crate::timing::{
    self, BreakdownPart, KernelTiming, ModelParams, Paths, Suggestion, UnitCycles,
};
use crate::{Analysis, CfgOptions};
use agx_isa::{Flow, Instruction};
use std::collections::HashMap;

/// At most this many functions are followed (a guard against garbage input
/// whose "calls" point everywhere); further targets count as unresolved.
pub const MAX_FUNCTIONS: usize = 256;

/// Instructions from which a function's suggestions and its branch arms'
/// cycles are computed on two cores at once (below, a thread costs more
/// than it saves).
const PARALLEL_FILL: usize = 50_000;

/// The code of one function, as the front end found it.
#[derive(Clone, Debug)]
pub struct FunctionCode {
    /// Address of the first instruction (the call target).
    pub entry: u32,
    /// Symbol name when known (archives).
    pub symbol: Option<String>,
    /// The name the views show (the demangled symbol, the kernel's Metal
    /// name), given by the front end; else the symbol.
    pub name: Option<String>,
    pub insns: Vec<Instruction>,
    /// Positions of its code that do not decode (encodings the G13 tables
    /// do not know: left out of the analysis, as main's are); a front end
    /// warns about them as about main's.
    pub unknown: usize,
}

impl FunctionCode {
    /// A function whose code decodes fully.
    pub fn new(entry: u32, symbol: Option<String>, insns: Vec<Instruction>) -> FunctionCode {
        FunctionCode {
            entry,
            symbol,
            name: None,
            insns,
            unknown: 0,
        }
    }
}

/// Why a call target gives no function to follow
/// ([`CodeSource::function_at`]); the call is then costed as the `call`
/// instruction only and the reason is stated ([`Program::assumptions`],
/// [`ProgramCall::unfollowed`]). The message says what is at the target, to
/// follow "the call at 0x10 to 0x80: ".
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoFunction {
    /// The input holds no code at the target: it lies outside the code
    /// given (raw code: before its first byte or past its last), or no
    /// function of the archive starts there.
    Missing(String),
    /// The target is inside the input but is not code to follow: not on a
    /// 2-byte boundary, inside an instruction, on zero bytes or on bytes that
    /// do not decode, or [`agx_isa::stream::NOT_CODE_PERCENT`] or more of
    /// the code it reaches does not decode.
    Malformed(String),
    /// The code the function reaches ends inside an instruction: the input
    /// is cut short (the cut at the function's addresses).
    Cut(agx_isa::stream::Cut),
    /// A guard on the work refused it (the input does hold code there).
    Guard(String),
}

impl NoFunction {
    /// Whether the input is at fault: the target holds no code to follow
    /// (missing, malformed, cut), as opposed to a guard of the tool.
    pub fn is_input_problem(&self) -> bool {
        !matches!(self, NoFunction::Guard(_))
    }
}

impl std::fmt::Display for NoFunction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoFunction::Missing(m) | NoFunction::Malformed(m) | NoFunction::Guard(m) => {
                f.write_str(m)
            }
            NoFunction::Cut(c) => write!(f, "{c}"),
        }
    }
}

/// Where the code of called functions comes from: an archive's `__text`
/// symbols, or the bytes of a raw file.
pub trait CodeSource {
    /// The function whose entry is `target` (an absolute address in the
    /// caller's address space), or why the input gives none there.
    fn function_at(&self, target: i64) -> Result<FunctionCode, NoFunction>;

    /// Called once every function is found (no more
    /// [`CodeSource::function_at`] follows): a source may free what it built
    /// to find them (raw code's one decode of the whole file,
    /// [`crate::raw_image::RawImage`]) before the analyses run. Default:
    /// nothing.
    fn release(&self) {}
}

/// No code besides main: every call is unresolved.
pub struct NoCode;

impl CodeSource for NoCode {
    fn function_at(&self, _target: i64) -> Result<FunctionCode, NoFunction> {
        Err(NoFunction::Missing(
            "no code besides main was given".to_string(),
        ))
    }
}

/// Figures of a function including everything it calls.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Inclusive {
    /// Highest GPR half index of the function and its callees.
    pub highest_half_index: u32,
    pub spills: u32,
    pub fills: u32,
    /// Scratch reserved by the function and its callees (summed).
    pub scratch_reserved: Option<i32>,
    /// Scheduler cycles per SIMD-group: own cost + every call part.
    pub total_cycles: f64,
    /// The function's breakdown with a `call` part per resolved call site.
    pub breakdown: Vec<BreakdownPart>,
    pub paths: Paths,
    /// Per-unit cycles, callees' weighted by their executions.
    pub cycles: UnitCycles,
    /// Peak live half-registers across calls (see the module docs).
    pub peak_live_half: u32,
    pub peak_live_offset: Option<u32>,
    pub peak_live_registers: Vec<String>,
    /// The headline of the function with its calls: its hot spot (the
    /// region with the largest self share, a call's callee included).
    pub bottleneck: String,
}

/// One function of the program, with its own figures.
#[derive(Clone, Debug)]
pub struct ProgramFunction {
    pub entry: u32,
    pub symbol: Option<String>,
    /// The name the views show ([`FunctionCode::name`]): see [`Self::label`].
    pub name: Option<String>,
    pub insns: Vec<Instruction>,
    /// The function alone (liveness with its callees' summaries applied).
    pub analysis: Analysis,
    /// Its control-flow graph and loops (from the same analysis).
    pub cfg: crate::cfg::Cfg,
    pub loops: crate::loops::LoopForest,
    /// Its own cost (callees not included), at the program's occupancy.
    pub timing: KernelTiming,
    pub suggestions: Vec<Suggestion>,
    /// Figures including its callees.
    pub inclusive: Inclusive,
    /// Whether it lies on a call cycle (calls itself, directly or not).
    pub recursive: bool,
    /// Positions of its code that do not decode ([`FunctionCode::unknown`]).
    pub unknown: usize,
    /// GPR halves live into its entry (its callees' reads included, their
    /// writes killing): the function's arguments.
    pub entry_live: GprSet,
    /// Which of its branches diverge (callees' summaries applied).
    pub divergence: Divergence,
    /// The access facts of its memory instructions ([`crate::address`]).
    pub access: crate::address::Addresses,
}

impl ProgramFunction {
    /// Names of the registers live into the entry (`r4`, `r0l`, ...).
    pub fn entry_live_registers(&self) -> Vec<String> {
        half_names(&self.entry_live, 'r')
    }

    /// The name every view shows: the front end's display name, else the
    /// symbol, else the entry address.
    pub fn label(&self) -> String {
        label_of(self.name.as_ref().or(self.symbol.as_ref()), self.entry)
    }
}

/// A function's name in the views ([`ProgramFunction::label`]): `name`, else
/// `function at 0x..` (its entry).
pub fn label_of(name: Option<&String>, entry: u32) -> String {
    name.cloned()
        .unwrap_or_else(|| format!("function at 0x{entry:x}"))
}

/// One `call` site of a reachable function.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgramCall {
    /// Index of the calling function in [`Program::functions`].
    pub caller: usize,
    /// Address of the `call`.
    pub at: u32,
    /// Absolute target (`None` for a call through a register).
    pub target: Option<i64>,
    pub symbol: Option<String>,
    /// Index of the callee in [`Program::functions`].
    pub callee: Option<usize>,
    pub resolved: bool,
    /// Why a direct call was not followed (its target gave no function).
    pub unfollowed: Option<NoFunction>,
    /// The callee is already on the call chain (cut at one level).
    pub recursive: bool,
    /// Times the call runs per execution of its caller (product of the
    /// enclosing loops' trip counts).
    pub executions: f64,
    /// Cost of one call: the callee's whole cost (its own cost when
    /// recursive; 0 when unresolved).
    pub callee_cycles: f64,
    /// `executions × callee_cycles`: the `call` part of the caller's cost.
    pub cycles: f64,
    /// Half-registers the caller keeps live across the call.
    pub live_across_half: u32,
}

/// A kernel's program.
#[derive(Clone, Debug)]
pub struct Program {
    /// Main first, then the others in discovery order.
    pub functions: Vec<ProgramFunction>,
    /// Every call site of every function, by caller then address.
    pub calls: Vec<ProgramCall>,
    /// Stated assumptions (recursion, unresolved targets, overhead).
    pub assumptions: Vec<String>,
    /// Occupancy of the program: (threads per core, percent).
    pub threads: u32,
    pub percent: f64,
}

/// The instructions of the function entered at `entry`: those reachable
/// from it without following calls (for raw code, where a helper's extent
/// is not recorded). Address order is kept.
pub fn function_body(insns: &[Instruction], entry: u32) -> Vec<Instruction> {
    let opts = CfgOptions {
        entry: Some(entry),
        helpers: Vec::new(),
    };
    let cfg = crate::Cfg::build_with(insns, &opts);
    let mut keep = vec![false; insns.len()];
    for b in &cfg.blocks {
        if b.function == Some(0) {
            for i in b.insns.clone() {
                keep[i] = true;
            }
        }
    }
    insns
        .iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(i, _)| i.clone())
        .collect()
}

/// A call site during discovery: (call address, target, callee index).
type Site = (u32, Option<i64>, Option<usize>);

/// A call target as applegpu prints it (`0x-180` for a negative one).
pub fn fmt_target(t: i64) -> String {
    if t < 0 {
        format!("0x-{:x}", t.unsigned_abs())
    } else {
        format!("0x{t:x}")
    }
}

fn call_sites(insns: &[Instruction]) -> Vec<(u32, Option<i64>)> {
    insns
        .iter()
        .filter_map(|i| match i.flow() {
            Flow::Call { target } => Some((i.addr, Some(target))),
            Flow::CallIndirect => Some((i.addr, None)),
            _ => None,
        })
        .collect()
}

/// A function's effect on its callers' registers.
#[derive(Clone, Copy, Default)]
struct Summary {
    effect: DefUse,
    /// Callee-saved halves: the caller's values there sit on the stack
    /// while the callee runs, so they do not add to the pressure inside it.
    saved: GprSet,
    /// Its effect on the divergence of its callers' registers.
    div: CalleeSummary,
}

/// Registers a function's code writes, its callees' writes included.
fn written(insns: &[Instruction], effects: &HashMap<u32, DefUse>) -> DefUse {
    let mut d = DefUse::default();
    for i in insns {
        let du = crate::liveness::def_use(i);
        d.def.union_with(&du.def);
        d.udef.union_with(&du.udef);
        if let Some(e) = effects.get(&i.addr) {
            d.def.union_with(&e.def);
            d.udef.union_with(&e.udef);
        }
    }
    d
}

/// GPR halves a function both stores to and loads from the stack
/// (stack adjusts excluded).
fn callee_saved(insns: &[Instruction]) -> GprSet {
    let (mut stored, mut loaded) = (GprSet::new(), GprSet::new());
    for i in insns {
        // (a stack adjust has no memory access: agx_isa::semantics)
        let Some(m) = i.mem_form().filter(|m| m.space == agx_isa::MemSpace::Stack) else {
            continue;
        };
        let du = crate::liveness::def_use(i);
        match m.dir {
            agx_isa::MemDir::Store => stored.union_with(&du.used),
            agx_isa::MemDir::Load => loaded.union_with(&du.def),
            agx_isa::MemDir::Atomic => {}
        }
    }
    let mut both = GprSet::new();
    for k in 0..4 {
        both.0[k] = stored.0[k] & loaded.0[k];
    }
    both
}

struct Solved {
    analysis: Analysis,
    cfg: crate::cfg::Cfg,
    loops: crate::loops::LoopForest,
    /// Loop membership (kept when the graphs are dropped: the model reads it).
    nest: crate::loops::LoopNest,
    summary: Summary,
    /// Live halves after each call (what the caller keeps across it), by
    /// call address.
    across: HashMap<u32, GprSet>,
    divergence: Divergence,
    /// The access facts ([`crate::address`]).
    access: crate::address::Addresses,
}

fn solve(insns: &[Instruction], callees: &HashMap<u32, Summary>) -> Solved {
    solve_with_access(insns, callees, None)
}

/// [`solve`], with the access facts of the memory instructions (issue 27)
/// when `access` gives the threadgroup shape and cache-line size: they
/// read only the facts, the CFG and the loops, so they are computed beside
/// the passes that follow those (see
/// [`crate::analyze_detailed_program_with`]), not after them.
fn solve_with_access(
    insns: &[Instruction],
    callees: &HashMap<u32, Summary>,
    access: Option<(crate::address::Shape, u32, &crate::address::UniformValues)>,
) -> Solved {
    let effects: HashMap<u32, DefUse> = callees.iter().map(|(a, s)| (*a, s.effect)).collect();
    let effects = &effects;
    let divs: HashMap<u32, CalleeSummary> = callees.iter().map(|(a, s)| (*a, s.div)).collect();
    let (d, access) = crate::analyze_detailed_program_with(
        insns,
        &CfgOptions::default(),
        effects,
        &divs,
        |facts, cfg, forest| {
            access.map(|(shape, line, known)| {
                crate::address::analyze_with(insns, facts, cfg, forest, &shape, line, known)
            })
        },
    );
    let mut summary = Summary::default();
    if let Some(f) = d.cfg.functions.first() {
        summary.effect.used = d.liveness.live_in[f.entry_block];
        summary.effect.uused = d.liveness.uniform_entry_live_in[0];
    }
    let w = written(insns, effects);
    summary.effect.def = w.def;
    summary.effect.udef = w.udef;
    // Callee-saved registers (spilled with `stack_store` and restored with
    // `stack_load`, as Apple's helpers do with r2 r23-r26 at entry and
    // before `ret`) keep the caller's value: neither an argument nor a result.
    let saved = callee_saved(insns);
    summary.effect.used.difference_with(&saved);
    summary.effect.def.difference_with(&saved);
    summary.saved = saved;
    summary.div = d.divergence.summary;
    summary.div.written.difference_with(&saved);
    summary.div.divergent.difference_with(&saved);
    let mut across = HashMap::new();
    for c in &d.cfg.calls {
        let mut live = d.liveness.live_out(&d.cfg, c.block);
        // what the call itself and the callee write is not kept across it
        let k = insns
            .binary_search_by_key(&c.addr, |i| i.addr)
            .ok()
            .filter(|&k| insns[k].addr == c.addr)
            .or_else(|| insns.iter().position(|i| i.addr == c.addr));
        if let Some(k) = k {
            live.difference_with(&crate::liveness::def_use(&insns[k]).def);
        }
        if let Some(e) = callees.get(&c.addr) {
            live.difference_with(&e.effect.def);
            live.difference_with(&e.saved);
        }
        across.insert(c.addr, live);
    }
    Solved {
        analysis: d.analysis,
        cfg: d.cfg,
        loops: d.loops,
        nest: d.nest,
        summary,
        across,
        divergence: d.divergence,
        access: access.unwrap_or_default(),
    }
}

/// Argument uniformity (issue 22): the callee summaries of [`solve`] take
/// every entry register as divergent. Here each non-recursive callee is
/// analysed again with the GPR halves that *every* one of its call sites
/// passes uniform (the intersection of its callers' [`Divergence::call_uniform`]),
/// callers before callees so a callee sees its callers' refined states;
/// then every function whose entry set or callees' summaries changed is
/// analysed again callees first, so callers apply the refined summaries.
///
/// Sound: a site's set comes from an analysis that was itself sound (the
/// caller analysed with its own such set and sound callee summaries), the
/// intersection holds at every site, and a summary computed with set `U` at
/// the entry holds wherever at least `U` is uniform. Cost: at most two more
/// divergence passes per function of a program with calls (none without).
/// Recursive functions keep their first analysis.
fn refine_divergence(
    codes: &[FunctionCode],
    sites: &[Vec<Site>],
    order: &[usize],
    recursive: &[bool],
    solved: &mut [Solved],
) {
    let n = codes.len();
    let mut callers: Vec<Vec<(usize, u32)>> = vec![Vec::new(); n];
    for (c, list) in sites.iter().enumerate() {
        for &(at, _, callee) in list {
            if let Some(f) = callee.filter(|&f| f != c) {
                callers[f].push((c, at));
            }
        }
    }
    let rerun = |f: usize, solved: &[Solved], entry: &GprSet| -> Divergence {
        let insns = &codes[f].insns;
        let facts = crate::facts::scan(insns);
        let divs: HashMap<u32, CalleeSummary> = sites[f]
            .iter()
            .filter_map(|&(at, _, c)| {
                let c = c.filter(|&c| c != f)?;
                Some((at, solved[c].summary.div))
            })
            .collect();
        crate::divergence::analyze_entry(
            insns,
            &facts,
            &solved[f].cfg,
            &solved[f].loops,
            &divs,
            entry,
        )
    };
    // callers first: the halves every call site passes uniform
    let mut entry: Vec<GprSet> = vec![GprSet::new(); n];
    for &f in order.iter().rev() {
        if f == 0 || recursive[f] || callers[f].is_empty() {
            continue;
        }
        let mut u: Option<GprSet> = None;
        for &(c, at) in &callers[f] {
            // call_uniform is in address order, one entry per call: a search,
            // not a scan (a caller with thousands of calls has as many sites)
            let cu = &solved[c].divergence.call_uniform;
            let site = cu
                .binary_search_by_key(&at, |x| x.0)
                .map(|k| cu[k].1)
                .unwrap_or_default();
            let x = u.get_or_insert(site);
            for k in 0..x.0.len() {
                x.0[k] &= site.0[k];
            }
        }
        let u = u.unwrap_or_default();
        if u.is_empty() {
            continue;
        }
        entry[f] = u;
        solved[f].divergence = rerun(f, solved, &u);
    }
    // callees first: summaries under those entries, applied by the callers
    let mut changed = vec![false; n];
    for &f in order {
        if recursive[f] {
            continue;
        }
        let callee_changed = sites[f]
            .iter()
            .any(|&(_, _, c)| c.is_some_and(|c| c != f && changed[c]));
        if entry[f].is_empty() && !callee_changed {
            continue;
        }
        let d = rerun(f, solved, &entry[f]);
        let mut div = d.summary;
        div.written.difference_with(&solved[f].summary.saved);
        div.divergent.difference_with(&solved[f].summary.saved);
        changed[f] = div != solved[f].summary.div;
        solved[f].summary.div = div;
        solved[f].divergence = d;
    }
}

/// Builds the program of the kernel whose main body is `main`, finding
/// called functions through `source`, and models every function with
/// `params` at the program's occupancy.
pub fn analyze_program(
    main: FunctionCode,
    source: &dyn CodeSource,
    params: &ModelParams,
) -> Program {
    analyze_program_keeping(main, source, params, true)
}

/// [`analyze_program`]; with `keep_graphs` false each function's control-flow
/// graph and loop forest ([`ProgramFunction::cfg`], [`ProgramFunction::loops`])
/// are dropped as soon as its structure is solved, before the timing model
/// runs, and are left empty. Nothing else in the program reads them (only the
/// graph views do: HTML and DOT), so every other figure is the same; a big
/// kernel's peak memory is lower by their size (~40 B per instruction of a
/// 1M-instruction kernel with a loop per 12 instructions).
pub fn analyze_program_keeping(
    main: FunctionCode,
    source: &dyn CodeSource,
    params: &ModelParams,
    keep_graphs: bool,
) -> Program {
    let mut assumptions = Vec::new();
    let Discovered {
        codes,
        sites,
        mut unfollowed,
    } = discover(main, source, &mut assumptions);
    let n = codes.len();
    let (order, back) = call_order(&sites, n);
    let back_set: std::collections::HashSet<(usize, u32)> = back.iter().copied().collect();
    let recursive = mark_recursive(&codes, &sites, &back, &mut assumptions);

    crate::time_passes::mark("called functions found");
    let mut solved = solve_all(&codes, &sites, &order, &recursive, params, keep_graphs);

    // --- program registers and occupancy ---
    let highest = solved
        .iter()
        .zip(&codes)
        .filter(|(_, c)| !c.insns.is_empty())
        .map(|(s, _)| s.analysis.registers.highest_half_index)
        .max()
        .unwrap_or(0);
    let (threads, percent) = params.gpu.occupancy_for_regs(highest);

    // --- timing of each function at the program's occupancy ---
    let mut p = params.clone();
    if threads > 0 {
        p.threads_per_core = p.threads_per_core.min(threads);
    }
    let mut functions = time_functions(codes, &mut solved, &p, (threads, percent), &recursive);

    // --- calls and inclusive figures, callees first ---
    let mut calls = sum_calls(
        &mut functions,
        &sites,
        &order,
        &solved,
        &back_set,
        &mut unfollowed,
    );
    calls.sort_by_key(|c| (c.caller, c.at));
    if !calls.is_empty() {
        assumptions.push(format!(
            "call/return overhead: the `call` instruction (in the caller) and `ret` (in the callee) as the timing table prices branches; no extra {} call penalty is known, none is added",
            params.gpu.short
        ));
    }
    Program {
        functions,
        calls,
        assumptions,
        threads,
        percent,
    }
}

/// The functions a program reaches from `main` (main first) and each one's
/// call sites; why a direct call's target gave no function, by (caller,
/// call address); the assumptions the calls not followed add.
fn discover(
    main: FunctionCode,
    source: &dyn CodeSource,
    assumptions: &mut Vec<String>,
) -> Discovered {
    let mut codes: Vec<FunctionCode> = vec![main];
    let mut by_entry: HashMap<u32, usize> = HashMap::new();
    by_entry.insert(codes[0].entry, 0);
    // per function: (call address, target, callee)
    let mut sites: Vec<Vec<Site>> = Vec::new();
    // why a direct call's target gave no function, by (caller, call address)
    let mut unfollowed: HashMap<(usize, u32), NoFunction> = HashMap::new();
    let mut k = 0;
    while k < codes.len() {
        let mut list = Vec::new();
        for (at, target) in call_sites(&codes[k].insns) {
            let callee = match target {
                Some(t)
                    if (0..=u32::MAX as i64).contains(&t) && by_entry.contains_key(&(t as u32)) =>
                {
                    by_entry.get(&(t as u32)).copied()
                }
                Some(t) if codes.len() < MAX_FUNCTIONS => match source.function_at(t) {
                    Ok(code) if !code.insns.is_empty() => {
                        let idx = codes.len();
                        by_entry.insert(code.entry, idx);
                        if code.entry as i64 != t {
                            by_entry.entry(t as u32).or_insert(idx);
                        }
                        codes.push(code);
                        Some(idx)
                    }
                    Ok(_) => {
                        unfollowed.insert(
                            (k, at),
                            NoFunction::Missing(format!("{} holds no instructions", fmt_target(t))),
                        );
                        None
                    }
                    Err(why) => {
                        unfollowed.insert((k, at), why);
                        None
                    }
                },
                Some(_) => {
                    unfollowed.insert(
                        (k, at),
                        NoFunction::Guard(format!(
                            "the program already has {MAX_FUNCTIONS} functions, the most followed"
                        )),
                    );
                    None
                }
                None => None,
            };
            match (target, callee) {
                (None, _) => assumptions.push(format!(
                    "the call at 0x{at:x} goes through a register: callee unknown, only the call instruction is costed and its registers/spills are not included"
                )),
                (Some(t), None) => {
                    let why = unfollowed
                        .get(&(k, at))
                        .map_or_else(|| "no code there".to_string(), |w| w.to_string());
                    assumptions.push(format!(
                        "the call at 0x{at:x} to {}: not followed ({why}), only the call instruction is costed and its registers/spills are not included",
                        fmt_target(t)
                    ));
                }
                _ => {}
            }
            list.push((at, target, callee));
        }
        sites.push(list);
        k += 1;
    }
    source.release();
    Discovered {
        codes,
        sites,
        unfollowed,
    }
}

/// What [`discover`] finds.
struct Discovered {
    codes: Vec<FunctionCode>,
    /// per function: (call address, target, callee)
    sites: Vec<Vec<Site>>,
    unfollowed: HashMap<(usize, u32), NoFunction>,
}

/// The functions in post-order of a DFS from main, and the calls to a
/// function on the stack (recursive: back edges) as (caller, call address).
fn call_order(sites: &[Vec<Site>], n: usize) -> (Vec<usize>, Vec<(usize, u32)>) {
    // --- order: post-order DFS from main; calls to a function on the
    // stack are recursive (back edges) ---
    let mut order = Vec::with_capacity(n);
    let mut back: Vec<(usize, u32)> = Vec::new(); // (caller, call address)
    {
        let mut state = vec![0u8; n]; // 0 new, 1 on stack, 2 done
        let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
        state[0] = 1;
        while let Some(&mut (f, ref mut s)) = stack.last_mut() {
            if *s < sites[f].len() {
                let (at, _, callee) = sites[f][*s];
                *s += 1;
                if let Some(c) = callee {
                    match state[c] {
                        0 => {
                            state[c] = 1;
                            stack.push((c, 0));
                        }
                        1 => back.push((f, at)),
                        _ => {}
                    }
                }
            } else {
                state[f] = 2;
                order.push(f);
                stack.pop();
            }
        }
    }
    (order, back)
}

/// The functions on a recursive call (either end of a back edge), with an
/// assumption per such call.
fn mark_recursive(
    codes: &[FunctionCode],
    sites: &[Vec<Site>],
    back: &[(usize, u32)],
    assumptions: &mut Vec<String>,
) -> Vec<bool> {
    let n = codes.len();
    let mut recursive = vec![false; n];
    for &(f, at) in back {
        recursive[f] = true;
        if let Some(&(_, Some(t), Some(c))) = sites[f].iter().find(|s| s.0 == at) {
            recursive[c] = true;
            let name = codes[c]
                .name
                .as_ref()
                .or(codes[c].symbol.as_ref())
                .map_or_else(|| fmt_target(t), String::clone);
            assumptions.push(format!(
                "the call at 0x{at:x} to {name} is recursive: costed as one more level (the callee's own cost, without its calls); the real depth is unknown"
            ));
        }
    }

    recursive
}

/// Each function's structure (facts, CFG, loops, liveness, divergence,
/// access facts), callees first, then the callers' argument uniformity.
fn solve_all(
    codes: &[FunctionCode],
    sites: &[Vec<Site>],
    order: &[usize],
    recursive: &[bool],
    params: &ModelParams,
    keep_graphs: bool,
) -> Vec<Solved> {
    let n = codes.len();
    // --- structure, callees first ---
    let mut solved: Vec<Option<Solved>> = (0..n).map(|_| None).collect();
    for &f in order {
        let effects_of = |solved: &[Option<Solved>], own: Option<&Summary>| {
            let mut m = HashMap::new();
            for &(at, _, callee) in &sites[f] {
                let Some(c) = callee else { continue };
                let s = if c == f {
                    // a recursive call: the function's own divergence summary
                    // is not final, its results count as divergent
                    own.map(|o| {
                        let mut all = GprSet::new();
                        all.set_range(1..256);
                        Summary {
                            div: CalleeSummary {
                                written: all,
                                divergent: all,
                                mask_changed: true,
                            },
                            ..*o
                        }
                    })
                } else {
                    solved[c].as_ref().map(|s| s.summary)
                };
                if let Some(s) = s {
                    m.insert(at, s);
                }
            }
            m
        };
        let shape = params.threadgroup.unwrap_or(crate::address::Shape::DEFAULT);
        let mut s = solve_with_access(
            &codes[f].insns,
            &effects_of(&solved, None),
            Some((
                shape,
                params.mem.cache_line_bytes as u32,
                &params.uniform_values,
            )),
        );
        // a function calling itself: iterate its own summary to a fixpoint
        if sites[f].iter().any(|x| x.2 == Some(f)) {
            for _ in 0..8 {
                let mut next = solve(&codes[f].insns, &effects_of(&solved, Some(&s.summary)));
                let same = next.summary.effect == s.summary.effect
                    && next.summary.saved == s.summary.saved;
                // (the access facts do not depend on the callees' summaries)
                next.access = std::mem::take(&mut s.access);
                s = next;
                if same {
                    break;
                }
            }
        }
        crate::time_passes::mark("divergence, registers, trip counts | access facts");
        crate::banks::annotate(
            &mut s.access,
            shape.threads().min(32),
            params.gpu.threadgroup_banks.as_ref(),
        );
        crate::atomics::annotate(&codes[f].insns, &mut s.access, shape.threads());
        // (a lone main needs its graphs no more: dropped now; with calls
        // the argument-uniformity pass below reads them first)
        if !keep_graphs && n == 1 {
            s.cfg = crate::cfg::Cfg::default();
            s.loops = crate::loops::LoopForest::default();
        }
        solved[f] = Some(s);
    }
    let mut solved: Vec<Solved> = solved
        .into_iter()
        .map(|s| s.unwrap_or_else(|| solve(&[], &HashMap::new())))
        .collect();
    if n > 1 {
        refine_divergence(codes, sites, order, recursive, &mut solved);
        if !keep_graphs {
            for s in &mut solved {
                s.cfg = crate::cfg::Cfg::default();
                s.loops = crate::loops::LoopForest::default();
            }
        }
    }
    solved
}

/// Each function timed at the program's occupancy (`p`, `threads`,
/// `percent`), with its suggestions and the arms' cycles.
fn time_functions(
    codes: Vec<FunctionCode>,
    solved: &mut [Solved],
    p: &ModelParams,
    (threads, percent): (u32, f64),
    recursive: &[bool],
) -> Vec<ProgramFunction> {
    let n = codes.len();
    let mut functions: Vec<ProgramFunction> = Vec::with_capacity(n);
    for (f, (code, s)) in codes.into_iter().zip(solved.iter_mut()).enumerate() {
        // the function's analysis at the program's occupancy, in place (a
        // copy would duplicate its loop list: ~83k loops at 1M instructions)
        let own_occupancy = std::mem::replace(
            &mut s.analysis.occupancy,
            crate::Occupancy { threads, percent },
        );
        let nest = std::mem::take(&mut s.nest);
        let mut access = std::mem::take(&mut s.access);
        // the cache model's per-access traffic at the program's occupancy
        // (the record's access.l1_bytes / dram_bytes; the timing model
        // computes the same figures)
        timing::cache::annotate(
            &mut access.accesses,
            &s.divergence.uniform_loads,
            &timing::cache::Geometry::of(p.gpu.table(), p),
        );
        // the loads the divergence analysis proved uniform-address: the
        // model charges them once per SIMD-group (it never re-derives them)
        crate::time_passes::mark("banks, atomics, cache");
        let t = timing::analyze_with_access(
            &code.insns,
            &s.analysis,
            &nest,
            &s.divergence.uniform_loads,
            &access.accesses,
            p,
        );
        drop(nest);
        // the suggestions and the arms' cycles read the timing only: for a
        // big function the arms are filled on another core meanwhile
        crate::time_passes::mark("timing model");
        let mut cx = crate::advice::Context::new(
            &code.insns,
            &t,
            Some(&s.analysis),
            Some(&access),
            None,
            p.mem.cache_line_bytes as u32,
        );
        let mut suggestions = if code.insns.len() >= PARALLEL_FILL && crate::par::threads() > 1 {
            let (t, divergence, cx) = (&t, &mut s.divergence, &cx);
            crate::par::join(
                || crate::advice::run_timing(cx),
                move || crate::divergence::fill_arms_cycles(divergence, t),
            )
            .0
        } else {
            let suggestions = crate::advice::run_timing(&cx);
            crate::divergence::fill_arms_cycles(&mut s.divergence, &t);
            suggestions
        };
        // the divergence rules read the arms' cycles; the memory advice
        // follows the access facts (issue 27)
        cx.divergence = Some(&s.divergence);
        crate::advice::run_after_timing(&cx, &mut suggestions);
        drop(cx);
        crate::time_passes::mark("advice");
        s.analysis.occupancy = own_occupancy;
        functions.push(ProgramFunction {
            entry: code.entry,
            symbol: code.symbol,
            name: code.name,
            insns: code.insns,
            analysis: std::mem::take(&mut s.analysis),
            cfg: std::mem::take(&mut s.cfg),
            loops: std::mem::take(&mut s.loops),
            timing: t,
            suggestions,
            inclusive: Inclusive::default(),
            recursive: recursive[f],
            unknown: code.unknown,
            entry_live: s.summary.effect.used,
            divergence: std::mem::take(&mut s.divergence),
            access,
        });
    }

    functions
}

/// The calls and each function's inclusive figures (its own with those of
/// the functions it calls), callees first.
fn sum_calls(
    functions: &mut [ProgramFunction],
    sites: &[Vec<Site>],
    order: &[usize],
    solved: &[Solved],
    back_set: &std::collections::HashSet<(usize, u32)>,
    unfollowed: &mut HashMap<(usize, u32), NoFunction>,
) -> Vec<ProgramCall> {
    let n = functions.len();
    let mut calls: Vec<ProgramCall> = Vec::new();
    for &f in order {
        let own = &functions[f];
        let mut inc = Inclusive {
            highest_half_index: own.analysis.registers.highest_half_index,
            spills: own.analysis.spills,
            fills: own.analysis.fills,
            scratch_reserved: own.analysis.stack.scratch_reserved,
            total_cycles: own.timing.total_cycles,
            breakdown: Vec::new(),
            paths: own.timing.paths,
            cycles: own.timing.cycles,
            peak_live_half: own.analysis.registers.peak_live_half,
            peak_live_offset: own.analysis.registers.peak_live_offset,
            peak_live_registers: own.analysis.registers.peak_live_registers.clone(),
            bottleneck: String::new(),
        };
        let mut counted = vec![false; n];
        counted[f] = true;
        // (the per-instruction and per-loop vectors move into `whole` and
        // back rather than being copied: the loop reads only totals of
        // `functions[f]`)
        let detail = std::mem::take(&mut functions[f].timing.instructions_detail);
        let executions = std::mem::take(&mut functions[f].timing.executions);
        let loops = std::mem::take(&mut functions[f].timing.loops);
        let regions = std::mem::take(&mut functions[f].timing.regions);
        let blocks = std::mem::take(&mut functions[f].timing.blocks);
        let insn_cycles = std::mem::take(&mut functions[f].timing.insn_cycles);
        let mut whole = functions[f].timing.clone();
        whole.instructions_detail = detail;
        whole.executions = executions;
        whole.loops = loops;
        whole.regions = regions;
        whole.blocks = blocks;
        whole.insn_cycles = insn_cycles;
        for &(at, target, callee) in &sites[f] {
            let executions = whole.executions_at(at);
            let across = solved[f].across.get(&at).copied().unwrap_or_default();
            let rec = back_set.contains(&(f, at));
            let (callee_cycles, callee_units) = match callee {
                Some(c) if rec => (functions[c].timing.total_cycles, functions[c].timing.cycles),
                Some(c) => (
                    functions[c].inclusive.total_cycles,
                    functions[c].inclusive.cycles,
                ),
                None => (0.0, UnitCycles::default()),
            };
            if let Some(c) = callee {
                let ci = if rec {
                    // the own figures of a function still being summed
                    let cf = &functions[c];
                    (
                        cf.analysis.registers.peak_live_half,
                        cf.analysis.registers.peak_live_offset,
                        cf.analysis.registers.peak_live_registers.clone(),
                    )
                } else {
                    let cf = &functions[c].inclusive;
                    (
                        cf.peak_live_half,
                        cf.peak_live_offset,
                        cf.peak_live_registers.clone(),
                    )
                };
                let peak = across.count() + ci.0;
                if peak > inc.peak_live_half {
                    inc.peak_live_half = peak;
                    inc.peak_live_offset = ci.1;
                    let mut names = half_names(&across, 'r');
                    names.extend(ci.2);
                    inc.peak_live_registers = names;
                }
                // each reachable function's registers and stack once (a
                // callee counted already had all it reaches counted with
                // it: only the caller itself is counted without its reach)
                let reach = if counted[c] && c != f {
                    Vec::new()
                } else {
                    reachable(sites, c)
                };
                for r in reach {
                    if !counted[r] {
                        counted[r] = true;
                        let a = &functions[r].analysis;
                        inc.highest_half_index =
                            inc.highest_half_index.max(a.registers.highest_half_index);
                        inc.spills += a.spills;
                        inc.fills += a.fills;
                        if let Some(s) = a.stack.scratch_reserved {
                            inc.scratch_reserved = Some(inc.scratch_reserved.unwrap_or(0) + s);
                        }
                    }
                }
            }
            let cycles = executions * callee_cycles;
            if let Some(c) = callee {
                whole.add_call_part(at, functions[c].entry, callee_cycles);
            }
            add_units(&mut inc.cycles, &callee_units, executions);
            calls.push(ProgramCall {
                caller: f,
                at,
                target,
                symbol: callee.and_then(|c| functions[c].symbol.clone()),
                callee,
                resolved: callee.is_some(),
                unfollowed: unfollowed.remove(&(f, at)),
                recursive: rec,
                executions,
                callee_cycles,
                cycles,
                live_across_half: across.count(),
            });
        }
        inc.total_cycles = whole.total_cycles;
        inc.paths = whole.paths;
        inc.breakdown = std::mem::take(&mut whole.breakdown);
        if !sites[f].is_empty() {
            // the regions, blocks and hot spot with the call regions
            whole.finish_regions();
            call_bottleneck(&mut whole, &calls, functions, f);
        }
        let t = &mut functions[f].timing;
        t.instructions_detail = whole.instructions_detail;
        t.executions = whole.executions;
        t.loops = whole.loops;
        t.regions = whole.regions;
        t.blocks = whole.blocks;
        t.insn_cycles = whole.insn_cycles;
        t.bottleneck_detail = whole.bottleneck_detail;
        inc.bottleneck = whole.bottleneck;
        functions[f].inclusive = inc;
    }
    calls
}

/// A function whose hot spot is a call: the bottleneck names the callee
/// and the callee's own hot spot.
fn call_bottleneck(
    whole: &mut crate::timing::KernelTiming,
    calls: &[ProgramCall],
    functions: &[ProgramFunction],
    f: usize,
) {
    let d = &whole.bottleneck_detail;
    if d.kind == "call" {
        let call = calls.iter().find(|c| c.caller == f && c.at == d.at);
        if let Some(cf) = call.and_then(|c| c.callee).map(|k| &functions[k]) {
            whole.bottleneck = format!(
                "call at 0x{:x} to {}, {} cy of {} cy ({:.0}%); inside it: {}",
                d.at,
                cf.label(),
                timing::model::fmt_cy(d.cycles),
                timing::model::fmt_cy(whole.total_cycles),
                100.0 * d.share,
                // the callee's hot spot with its own calls (its
                // own figures while it is still being summed)
                if cf.inclusive.bottleneck.is_empty() {
                    &cf.timing.bottleneck
                } else {
                    &cf.inclusive.bottleneck
                }
            );
        }
    }
}

fn add_units(to: &mut UnitCycles, u: &UnitCycles, times: f64) {
    to.f32 += u.f32 * times;
    to.f16 += u.f16 * times;
    to.scib += u.scib * times;
    to.ic += u.ic * times;
    to.mem += u.mem * times;
    to.memory_bandwidth += u.memory_bandwidth * times;
    to.device_bandwidth += u.device_bandwidth * times;
    to.alu = (to.f32 + to.f16 + to.scib).max(to.ic);
}

/// Functions reachable from `f` through calls, `f` included.
fn reachable(sites: &[Vec<Site>], f: usize) -> Vec<usize> {
    let mut seen = vec![false; sites.len()];
    let mut stack = vec![f];
    let mut out = Vec::new();
    seen[f] = true;
    while let Some(g) = stack.pop() {
        out.push(g);
        for &(_, _, c) in &sites[g] {
            if let Some(c) = c {
                if !seen[c] {
                    seen[c] = true;
                    stack.push(c);
                }
            }
        }
    }
    out
}

impl Program {
    /// The direct calls not followed because their target holds no code to
    /// follow ([`NoFunction::is_input_problem`]: missing, malformed or cut;
    /// not a guard's refusal), by caller then address, with the reason.
    pub fn unfollowed_calls(&self) -> impl Iterator<Item = (&ProgramCall, &NoFunction)> {
        self.calls.iter().filter_map(|c| {
            c.unfollowed
                .as_ref()
                .filter(|w| w.is_input_problem())
                .map(|w| (c, w))
        })
    }

    /// Main.
    pub fn main(&self) -> &ProgramFunction {
        &self.functions[0]
    }

    /// The kernel's analysis: main's, with the program's registers,
    /// occupancy, peak, spills, fills and scratch; main's calls into the
    /// program's functions count as resolved.
    pub fn kernel_analysis(&self) -> Analysis {
        let m = self.main();
        let inc = &m.inclusive;
        let mut a = m.analysis.clone();
        a.registers.highest_half_index = inc.highest_half_index;
        a.registers.allocated_half = if self
            .functions
            .iter()
            .any(|f| f.analysis.registers.allocated_half > 0)
        {
            inc.highest_half_index + 1
        } else {
            0
        };
        a.registers.uniform_half = self
            .functions
            .iter()
            .map(|f| f.analysis.registers.uniform_half)
            .max()
            .unwrap_or(0);
        a.registers.peak_live_half = inc.peak_live_half;
        a.registers.peak_live_offset = inc.peak_live_offset;
        a.registers.peak_live_registers = inc.peak_live_registers.clone();
        a.occupancy = crate::Occupancy {
            threads: self.threads,
            percent: self.percent,
        };
        a.spills = inc.spills;
        a.fills = inc.fills;
        a.stack.scratch_reserved = inc.scratch_reserved;
        // calls into the program's functions are resolved, not "outside"
        // (a set: main may hold thousands of calls)
        let resolved_at: std::collections::HashSet<u32> = self
            .main_calls()
            .filter(|c| c.resolved)
            .map(|c| c.at)
            .collect();
        let resolved = |at: u32| resolved_at.contains(&at);
        for c in &mut a.cfg.calls {
            c.resolved |= resolved(c.addr);
        }
        a.cfg.unresolved_targets.retain(|(at, _)| !resolved(*at));
        a
    }

    /// [`Program::kernel_analysis`] that moves main's loop list out instead
    /// of copying it (a 1M-instruction kernel can have ~83k loops): for a
    /// consumer (the report) that keeps the kernel analysis; main's own
    /// `analysis.loops` is empty afterwards.
    pub fn take_kernel_analysis(&mut self) -> Analysis {
        let loops = match self.functions.first_mut() {
            Some(m) => std::mem::take(&mut m.analysis.loops),
            None => Vec::new(),
        };
        let mut a = self.kernel_analysis();
        a.loops = loops;
        a
    }

    /// [`Program::kernel_timing`] that moves main's per-instruction and
    /// per-loop vectors (`instructions_detail`, `executions`, `loops`,
    /// `regions`, `blocks`, `insn_cycles`) out
    /// instead of copying them:
    /// for a consumer (the report) that keeps the kernel timing and no
    /// longer reads main's own. Main's inclusive breakdown moves too (it is
    /// the kernel's), and main's own breakdown is emptied (a part per
    /// outermost loop, ~48 B each: no copy of either is held). Main's timing
    /// keeps everything else.
    pub fn take_kernel_timing(&mut self) -> KernelTiming {
        let breakdown = std::mem::take(&mut self.functions[0].inclusive.breakdown);
        let m = &mut self.functions[0].timing;
        let detail = std::mem::take(&mut m.instructions_detail);
        let executions = std::mem::take(&mut m.executions);
        let loops = std::mem::take(&mut m.loops);
        let regions = std::mem::take(&mut m.regions);
        let blocks = std::mem::take(&mut m.blocks);
        let insn_cycles = std::mem::take(&mut m.insn_cycles);
        m.breakdown = Vec::new();
        let mut t = self.kernel_timing_with(breakdown);
        t.instructions_detail = detail;
        t.executions = executions;
        t.loops = loops;
        t.regions = regions;
        t.blocks = blocks;
        t.insn_cycles = insn_cycles;
        t
    }

    /// The kernel's timing: main's, with the program's total and per-unit
    /// cycles.
    pub fn kernel_timing(&self) -> KernelTiming {
        self.kernel_timing_with(self.main().inclusive.breakdown.clone())
    }

    /// [`Program::kernel_timing`] with main's inclusive `breakdown` given.
    fn kernel_timing_with(&self, breakdown: Vec<BreakdownPart>) -> KernelTiming {
        let m = self.main();
        let mut t = m.timing.clone();
        t.total_cycles = m.inclusive.total_cycles;
        t.breakdown = breakdown;
        t.paths = m.inclusive.paths;
        t.cycles = m.inclusive.cycles;
        t.bottleneck = m.inclusive.bottleneck.clone();
        t
    }

    /// The kernel's divergence-aware cost range: main's range
    /// ([`crate::divergence::DivergenceRange`]) with its calls' whole cost
    /// added as the inclusive uniform-path bounds add it.
    pub fn divergence_range(&self) -> crate::divergence::DivergenceRange {
        let m = self.main();
        let own = m.timing.paths;
        let inc = m.inclusive.paths;
        let r = m.divergence.range;
        let round = crate::round::r3;
        let total = m.inclusive.total_cycles;
        let longest = round(
            (inc.longest + r.longest - own.longest)
                .min(total)
                .max(inc.longest),
        );
        crate::divergence::DivergenceRange {
            shortest: round(
                (inc.shortest + r.shortest - own.shortest)
                    .min(longest)
                    .max(inc.shortest),
            ),
            longest,
        }
    }

    /// Branch divergence counts summed over the program's functions.
    pub fn divergence_counts(&self) -> crate::divergence::Counts {
        let mut c = crate::divergence::Counts::default();
        for f in &self.functions {
            let k = f.divergence.counts;
            c.if_uniform += k.if_uniform;
            c.if_divergent += k.if_divergent;
            c.loop_uniform += k.loop_uniform;
            c.loop_divergent += k.loop_divergent;
            c.uniform_loads += k.uniform_loads;
        }
        c
    }

    /// Call sites of main.
    pub fn main_calls(&self) -> impl Iterator<Item = &ProgramCall> {
        self.calls.iter().filter(|c| c.caller == 0)
    }
}
