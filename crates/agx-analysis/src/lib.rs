//! `agx-analysis`: structure and cost of AGX machine code.
//!
//! Pipeline: decoded instructions → [`cfg`] (basic blocks, edges, exec-mask
//! nesting) → [`loops`] (dominators, natural loops, irreducible regions) →
//! [`liveness`] (half-register dataflow) → [`occupancy`] (registers allocated,
//! threads per core) → [`timing`] (cost tables, Mesa-compatible estimate,
//! steady-state loop model, suggestions).
//!
//! [`analyze`] runs the structural analyses and returns an [`Analysis`] whose
//! serde form carries the JSON report fields of issue 4 (`instructions`,
//! `code_bytes`, `registers{highest_half_index, allocated_half,
//! peak_live_half, peak_live_offset, uniform_half}`, `occupancy{threads,
//! percent}`, `spills`, `fills`, `loops[{start, end, depth, instructions}]`),
//! plus extra fields (never renamed, only added to).

pub mod address;
pub mod advice;
pub mod apple9_adapter;
pub mod atomics;
pub mod banks;
pub mod cfg;
pub mod dataflow;
pub mod divergence;
pub mod facts;
pub mod gpu;
pub mod lanes;
pub mod liveness;
pub mod loops;
pub mod occupancy;
pub mod par;
pub mod program;
pub mod raw_image;
pub mod round;
pub mod special_regs;
pub mod stack_kind;
pub mod table_trips;
pub mod time_passes;
pub mod timing;
pub mod trip_count;
pub mod uniformity;
pub mod untimed;
#[cfg(test)]
#[path = "../../../testdata/xorshift.rs"]
mod xorshift;

use agx_isa::Instruction;
use serde::Serialize;

pub use cfg::{Cfg, CfgOptions};
pub use occupancy::occupancy_for_regs;

/// Register summary.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Registers {
    /// Highest GPR 16-bit half-register index touched (Mesa's `regs`); 0
    /// when no GPR is touched.
    pub highest_half_index: u32,
    /// Half-registers allocated by the hardware: highest index + 1 (0 when
    /// no GPR is touched).
    pub allocated_half: u32,
    /// Peak number of simultaneously live half-registers (what an ideal
    /// allocator could reach).
    pub peak_live_half: u32,
    /// Byte address of the first instruction where the peak occurs.
    pub peak_live_offset: Option<u32>,
    /// Registers live at the peak (`r3`, `r0l`, ...).
    pub peak_live_registers: Vec<String>,
    /// Highest uniform half index touched + 1.
    pub uniform_half: u32,
}

impl Registers {
    /// 32-bit GPRs allocated: `allocated_half` rounded up to whole
    /// registers (the one place this count is made; every view prints it).
    pub fn allocated_gprs(&self) -> u32 {
        self.allocated_half.div_ceil(2)
    }

    /// 32-bit GPRs the peak of live half-registers needs.
    pub fn peak_live_gprs(&self) -> u32 {
        self.peak_live_half.div_ceil(2)
    }

    /// Number of the highest 32-bit GPR touched (`r6` for `r6h`).
    pub fn highest_gpr(&self) -> u32 {
        self.highest_half_index / 2
    }

    /// The highest register touched by name (`r6h`, `r0l`).
    pub fn highest_register(&self) -> String {
        let h = self.highest_half_index;
        format!("r{}{}", h / 2, if h & 1 == 0 { "l" } else { "h" })
    }

    /// Uniform half-registers in 32-bit uniform registers.
    pub fn uniform_gprs(&self) -> u32 {
        self.uniform_half.div_ceil(2)
    }
}

/// Occupancy from the allocation.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Occupancy {
    /// Threads per core (`timing.md` table applied to `highest_half_index`).
    pub threads: u32,
    /// `threads` as a percent of 1024.
    pub percent: f64,
}

/// One natural loop.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LoopSummary {
    /// Lowest instruction address in the loop.
    pub start: u32,
    /// Address of the highest instruction in the loop (usually the
    /// backward `jmp_exec_any`).
    pub end: u32,
    /// 1 for an outermost loop.
    pub depth: u32,
    /// Instructions in the loop, nested loops included.
    pub instructions: usize,
    /// Address of the header (the backward branch's target).
    pub header: u32,
    /// Addresses of the latches' last instructions (the backward branches).
    pub latches: Addrs,
    /// Addresses execution continues at when it leaves the loop.
    pub exits: Addrs,
    /// Basic blocks in the loop, nested loops included.
    pub blocks: usize,
    /// Entry address of the function containing the loop.
    pub function: Option<u32>,
}

/// A short list of addresses, read as a `[u32]` slice: up to two inline
/// (a loop usually has one latch and one or two exits), more on the heap.
/// A 1M-instruction kernel can have ~120k loops: two `Vec`s each were 48
/// bytes and two heap blocks a loop.
#[derive(Clone, PartialEq, Eq)]
pub struct Addrs(AddrsRepr);

#[derive(Clone, PartialEq, Eq)]
enum AddrsRepr {
    Inline(u8, [u32; 2]),
    // (a thin pointer on purpose: it keeps the list 16 bytes)
    #[allow(clippy::box_collection)]
    Heap(Box<Vec<u32>>),
}

impl Addrs {
    #[inline]
    pub fn as_slice(&self) -> &[u32] {
        match &self.0 {
            AddrsRepr::Inline(n, a) => &a[..*n as usize],
            AddrsRepr::Heap(v) => v,
        }
    }
}

impl Default for Addrs {
    fn default() -> Addrs {
        Addrs(AddrsRepr::Inline(0, [0; 2]))
    }
}

impl From<Vec<u32>> for Addrs {
    fn from(v: Vec<u32>) -> Addrs {
        if v.len() <= 2 {
            let mut a = [0; 2];
            a[..v.len()].copy_from_slice(&v);
            Addrs(AddrsRepr::Inline(v.len() as u8, a))
        } else {
            Addrs(AddrsRepr::Heap(Box::new(v)))
        }
    }
}

impl std::ops::Deref for Addrs {
    type Target = [u32];
    #[inline]
    fn deref(&self) -> &[u32] {
        self.as_slice()
    }
}

impl PartialEq<Vec<u32>> for Addrs {
    fn eq(&self, o: &Vec<u32>) -> bool {
        self.as_slice() == o.as_slice()
    }
}

impl std::fmt::Debug for Addrs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice().fmt(f)
    }
}

impl Serialize for Addrs {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize(s)
    }
}

/// A function found in the code.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FunctionSummary {
    pub entry: u32,
    pub blocks: usize,
    pub instructions: usize,
}

/// A call site.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CallSummary {
    pub addr: u32,
    /// Absolute target; `None` for a call through a register.
    pub target: Option<i64>,
    /// Whether the target is an instruction of the code analysed.
    pub resolved: bool,
}

/// CFG summary.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CfgSummary {
    pub blocks: usize,
    pub edges: usize,
    pub functions: Vec<FunctionSummary>,
    pub calls: Vec<CallSummary>,
    /// Branch/call targets that are not instruction addresses of the code.
    pub unresolved_targets: Vec<(u32, i64)>,
    pub unreachable_blocks: usize,
    /// Maximum static exec-mask nesting depth (see `Cfg::exec_depth`).
    pub max_exec_depth: u16,
    /// Number of exec-mask stack instructions.
    pub exec_ops: usize,
}

/// An irreducible region.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IrreducibleSummary {
    /// Start addresses of the region's blocks with an outside predecessor.
    pub entries: Vec<u32>,
    /// Start addresses of the region's blocks.
    pub blocks: Vec<u32>,
    /// Retreating edges whose target does not dominate their source:
    /// (address of the branch, target address).
    pub retreating_edges: Vec<(u32, u32)>,
    pub instructions: usize,
}

/// Stack summary.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StackSummary {
    /// Scratch reserved by the entry stack-adjust (Mesa: dwords).
    pub scratch_reserved: Option<i32>,
    pub adjusts: Vec<occupancy::StackAdjust>,
}

/// The analysis of one kernel's code.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Analysis {
    /// Instructions analysed (for main alone: Mesa's `inst`).
    pub instructions: usize,
    /// Sum of instruction lengths.
    pub code_bytes: u64,
    pub registers: Registers,
    pub occupancy: Occupancy,
    /// `stack_store` count, stack adjusts excluded (Mesa's `spills`).
    pub spills: u32,
    /// `stack_load` count (Mesa's `fills`).
    pub fills: u32,
    /// The stack accesses by kind ([`stack_kind`]): spills and fills,
    /// saves and restores around calls, private-array elements.
    pub stack_kinds: stack_kind::StackKinds,
    /// Each stack access's kind: (instruction index, kind), ascending.
    #[serde(skip)]
    pub stack_sites: Vec<(u32, stack_kind::StackKind)>,
    pub stack: StackSummary,
    /// Natural loops, by start address (outer before inner at equal start).
    pub loops: Vec<LoopSummary>,
    /// Backward branches in the machine code: Mesa's `loops` stat.
    pub backward_branches: usize,
    pub cfg: CfgSummary,
    pub irreducible: Vec<IrreducibleSummary>,
}

/// Everything computed, for callers that need more than the summary.
#[derive(Clone, Debug)]
pub struct Detailed {
    pub cfg: Cfg,
    pub dominators: loops::Dominators,
    pub loops: loops::LoopForest,
    /// Loop membership of each instruction (from `loops`).
    pub nest: loops::LoopNest,
    pub liveness: liveness::Liveness,
    pub analysis: Analysis,
    /// Which branches the SIMD-group can disagree on ([`divergence`]).
    pub divergence: divergence::Divergence,
}

/// Analyses `insns` (main at the first instruction).
pub fn analyze(insns: &[Instruction]) -> Analysis {
    analyze_detailed(insns, &CfgOptions::default()).analysis
}

/// Analyses `insns` with an explicit entry and helper ranges.
pub fn analyze_with(insns: &[Instruction], opts: &CfgOptions) -> Analysis {
    analyze_detailed(insns, opts).analysis
}

/// Runs every analysis and keeps the intermediate results.
pub fn analyze_detailed(insns: &[Instruction], opts: &CfgOptions) -> Detailed {
    analyze_detailed_calls(insns, opts, &std::collections::HashMap::new())
}

/// [`analyze_detailed`] with callee summaries applied at `call`
/// instructions (keyed by the call's address; see [`program`]).
pub fn analyze_detailed_calls(
    insns: &[Instruction],
    opts: &CfgOptions,
    call_effects: &std::collections::HashMap<u32, liveness::DefUse>,
) -> Detailed {
    analyze_detailed_program(insns, opts, call_effects, &std::collections::HashMap::new())
}

/// [`analyze_detailed_calls`] with the callees' divergence summaries (by
/// call address) applied at `call` instructions.
pub fn analyze_detailed_program(
    insns: &[Instruction],
    opts: &CfgOptions,
    call_effects: &std::collections::HashMap<u32, liveness::DefUse>,
    call_divergence: &std::collections::HashMap<u32, divergence::CalleeSummary>,
) -> Detailed {
    analyze_detailed_program_with(insns, opts, call_effects, call_divergence, |_, _, _| ()).0
}

/// The loops of `forest` as the record lists them, by (start, depth).
pub fn loop_summaries(cfg: &Cfg, forest: &loops::LoopForest) -> Vec<LoopSummary> {
    let mut loop_sums: Vec<LoopSummary> =
        forest.loops.iter().map(|l| loop_summary(cfg, l)).collect();
    loop_sums.sort_by_key(|l| (l.start, l.depth));
    loop_sums
}

/// One loop of the forest as the record lists it.
pub fn loop_summary(cfg: &Cfg, l: &loops::Loop) -> LoopSummary {
    let bstart = |b: usize| cfg.blocks[b].start;
    let mut latches: Vec<u32> = l.latches.iter().map(|&b| cfg.blocks[b].last).collect();
    latches.sort_unstable();
    let mut exits: Vec<u32> = l.exits.iter().map(|&(_, t)| bstart(t)).collect();
    exits.sort_unstable();
    exits.dedup();
    LoopSummary {
        start: l.start,
        end: l.end,
        depth: l.depth,
        instructions: l.instructions,
        header: bstart(l.header),
        latches: latches.into(),
        exits: exits.into(),
        blocks: l.blocks,
        function: l.function.map(|f| cfg.functions[f].entry),
    }
}

/// The irreducible regions of `forest`, by address.
pub fn irreducible_summaries(cfg: &Cfg, forest: &loops::LoopForest) -> Vec<IrreducibleSummary> {
    let bstart = |b: usize| cfg.blocks[b].start;
    let blast = |b: usize| cfg.blocks[b].last;
    forest
        .irreducible
        .iter()
        .map(|r| IrreducibleSummary {
            entries: r.entries.iter().map(|&b| bstart(b)).collect(),
            blocks: r.blocks.iter().map(|&b| bstart(b)).collect(),
            retreating_edges: r
                .retreating_edges
                .iter()
                .map(|&(u, v)| (blast(u), bstart(v)))
                .collect(),
            instructions: r.instructions,
        })
        .collect()
}

/// The CFG's summary (any family: it reads the CFG only).
pub fn cfg_summary(cfg: &Cfg) -> CfgSummary {
    CfgSummary {
        blocks: cfg.blocks.len(),
        edges: cfg.edge_count(),
        functions: cfg
            .functions
            .iter()
            .map(|f| FunctionSummary {
                entry: f.entry,
                blocks: f.blocks,
                instructions: f.instructions,
            })
            .collect(),
        calls: cfg
            .calls
            .iter()
            .map(|c| CallSummary {
                addr: c.addr,
                target: c.target,
                resolved: c.callee_block.is_some(),
            })
            .collect(),
        unresolved_targets: cfg.unresolved.iter().map(|u| (u.addr, u.target)).collect(),
        unreachable_blocks: cfg.unreachable_blocks(),
        max_exec_depth: cfg.max_exec_depth(),
        exec_ops: cfg.exec_events.len(),
    }
}

/// [`analyze_detailed_program`], and `side` run on the facts, the CFG and
/// the loop forest as soon as they exist: on a second core, beside the
/// divergence, register and trip-count passes, for big functions (the
/// access facts of [`program`] need only those three, and take as long as
/// the passes they overlap on loop- and call-dense code).
pub fn analyze_detailed_program_with<R: Send>(
    insns: &[Instruction],
    opts: &CfgOptions,
    call_effects: &std::collections::HashMap<u32, liveness::DefUse>,
    call_divergence: &std::collections::HashMap<u32, divergence::CalleeSummary>,
    side: impl FnOnce(&facts::Facts, &Cfg, &loops::LoopForest) -> R + Send,
) -> (Detailed, R) {
    time_passes::mark("decoded");
    let mut facts = facts::scan(insns);
    // (the control-flow column moves into the CFG: one copy, not two)
    let cfg = Cfg::from_facts_taking_flows(&mut facts, opts);
    let effects: liveness::CallEffects = if call_effects.is_empty() {
        liveness::CallEffects::new()
    } else {
        facts
            .addr
            .iter()
            .enumerate()
            .filter_map(|(i, a)| call_effects.get(a).map(|e| (i, *e)))
            .collect()
    };
    // loops and liveness only read the CFG: big functions get both at once
    let loops_of = |cfg: &Cfg| {
        let dom = loops::dominators(cfg);
        let forest = loops::find_loops(cfg, &dom);
        (dom, forest)
    };
    time_passes::mark("facts and CFG");
    let big = insns.len() >= 50_000 && par::threads() > 1;
    let ((dom, forest), live) = if big {
        par::join(
            || loops_of(&cfg),
            || liveness::liveness_with_calls(&cfg, &facts, &effects),
        )
    } else {
        let l = loops_of(&cfg);
        (l, liveness::liveness_with_calls(&cfg, &facts, &effects))
    };
    let rest = || {
        let div = divergence::analyze(insns, &facts, &cfg, &forest, call_divergence);
        let stack = facts.stack.clone();
        let highest = facts.highest_gpr.unwrap_or(0);
        let regs = occupancy::RegisterUse {
            highest_half_index: facts.highest_gpr,
            allocated_half: facts.highest_gpr.map_or(0, |h| h + 1),
            uniform_half: facts.highest_uniform.map_or(0, |h| h + 1),
        };
        // The entry adjust of main (function 0), if main has one.
        let main_scratch = stack
            .adjusts
            .iter()
            .find(|a| {
                a.amount > 0 && cfg.blocks[cfg.block_of[a.index] as usize].function == Some(0)
            })
            .map(|a| a.amount);
        let (threads, percent) = occupancy_for_regs(highest);
        let loop_sums = loop_summaries(&cfg, &forest);
        let irreducible = irreducible_summaries(&cfg, &forest);

        let peak = live.peak_info(&facts.addr);
        let stack_sites = stack_kind::classify(insns);
        let analysis = Analysis {
            instructions: insns.len(),
            code_bytes: facts.len.iter().map(|&l| l as u64).sum(),
            registers: Registers {
                highest_half_index: highest,
                allocated_half: regs.allocated_half,
                peak_live_half: peak.live_half,
                peak_live_offset: peak.offset,
                peak_live_registers: peak.registers,
                uniform_half: regs.uniform_half,
            },
            occupancy: Occupancy { threads, percent },
            spills: stack.spills,
            fills: stack.fills,
            stack_kinds: stack_kind::StackKinds::of(&stack_sites),
            stack_sites,
            stack: StackSummary {
                scratch_reserved: main_scratch.or(stack.scratch_reserved),
                adjusts: stack.adjusts,
            },
            loops: loop_sums,
            backward_branches: cfg.backward_branches(),
            cfg: cfg_summary(&cfg),
            irreducible,
        };
        let mut nest = loops::LoopNest::new(&cfg, &forest);
        nest.trips = trip_count::analyze(insns, &facts, &cfg, &dom, &forest, &nest);
        (div, analysis, nest)
    };
    let (side_out, (div, analysis, nest)) = if big {
        time_passes::mark("loops and liveness");
        par::join(|| side(&facts, &cfg, &forest), rest)
    } else {
        let r = rest();
        (side(&facts, &cfg, &forest), r)
    };
    (
        Detailed {
            cfg,
            dominators: dom,
            nest,
            loops: forest,
            liveness: live,
            analysis,
            divergence: div,
        },
        side_out,
    )
}
