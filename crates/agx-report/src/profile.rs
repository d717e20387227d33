//! The report model: one analysed function — instructions, structure and
//! registers (agx-analysis), timing and suggestions (agx-analysis::timing).
//! Every view (text, JSON, annotated disassembly, Python) reads this one
//! simulation, in the manner of llvm-mca's views.

use agx_analysis::loops::LoopForest;
use agx_analysis::timing::{self, KernelTiming, MemParams, ModelParams, Suggestion};
use agx_analysis::{Analysis, Cfg, CfgOptions};
use agx_isa::Instruction;

/// Knobs of the analysis that reports state.
#[derive(Clone, Debug)]
pub struct Options {
    /// Iterations assumed for loops whose trip count is unknown.
    pub trip_count: u32,
    /// Memory-latency assumptions (documented defaults, overridable).
    pub mem: MemParams,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            trip_count: timing::DEFAULT_TRIP_COUNT,
            mem: MemParams::default(),
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

/// One analysed function, ready to render.
#[derive(Clone, Debug)]
pub struct Profile {
    pub name: String,
    /// GPU the code was built for, when known (e.g. "G13G").
    pub gpu: Option<String>,
    pub insns: Vec<Instruction>,
    pub prolog: Option<PrologSummary>,
    /// `call` sites resolved to symbol names: (address, symbol).
    pub calls: Vec<(u32, String)>,
    pub options: Options,
    pub analysis: Analysis,
    /// The control-flow graph and loop forest the analysis computed (read
    /// by the graph views: HTML and Graphviz).
    pub cfg: Cfg,
    pub loop_forest: LoopForest,
    pub timing: KernelTiming,
    pub suggestions: Vec<Suggestion>,
    /// Cost of each basic block (index = `cfg.blocks` index).
    pub block_costs: Vec<BlockCost>,
    /// Cycles of each instruction weighted by its executions (issue +
    /// exposed stall, × enclosing trip counts; index = `insns` index): the
    /// heat column.
    pub insn_cycles: Vec<f64>,
    /// The timing model's loop (index into `timing.loops`) of each loop of
    /// `loop_forest`, matched by header address.
    pub loop_timing: Vec<Option<usize>>,
}

/// What one basic block costs, from the timing model's per-instruction
/// detail: issue cycles plus exposed stall per execution, times the model's
/// executions (product of the enclosing loops' trip counts).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BlockCost {
    /// Issue cycles + exposed stall cycles for one execution of the block.
    pub cycles_per_execution: f64,
    /// Executions per SIMD-group (1 outside loops).
    pub executions: f64,
    /// `cycles_per_execution × executions`.
    pub cycles: f64,
    /// Fraction (0..1) of the sum of all blocks' `cycles`.
    pub share: f64,
}

impl Profile {
    /// Runs the analyses and the timing model over `insns` (one function,
    /// entry at the first instruction).
    pub fn build(
        name: String,
        gpu: Option<String>,
        insns: Vec<Instruction>,
        prolog: Option<Vec<Instruction>>,
        mut calls: Vec<(u32, String)>,
        options: &Options,
    ) -> Profile {
        calls.sort_by_key(|(a, _)| *a);
        let detailed = agx_analysis::analyze_detailed(&insns, &CfgOptions::default());
        let analysis = detailed.analysis;
        let params = ModelParams {
            trip_count: options.trip_count.max(1),
            mem: options.mem,
            ..Default::default()
        };
        let timing = timing::analyze_with_analysis(&insns, &analysis, &params);
        let suggestions = timing::suggest(&insns, &timing, Some(&analysis));
        let prolog = prolog.map(|p| PrologSummary {
            instructions: p.len(),
            code_bytes: p.iter().map(|i| i.len as u64).sum(),
            state_stores: p
                .iter()
                .filter(|i| {
                    matches!(
                        i.mnemonic,
                        "uniform_store" | "tex_state_store" | "sampler_state_store"
                    )
                })
                .count(),
        });
        let (block_costs, insn_cycles) = block_costs(&detailed.cfg, &insns, &timing);
        let by_header: std::collections::HashMap<u32, usize> = timing
            .loops
            .iter()
            .enumerate()
            .map(|(i, l)| (l.header, i))
            .collect();
        let loop_timing = detailed
            .loops
            .loops
            .iter()
            .map(|l| by_header.get(&detailed.cfg.blocks[l.header].start).copied())
            .collect();
        Profile {
            name,
            gpu,
            insns,
            prolog,
            calls,
            options: options.clone(),
            analysis,
            cfg: detailed.cfg,
            loop_forest: detailed.loops,
            timing,
            suggestions,
            block_costs,
            insn_cycles,
            loop_timing,
        }
    }

    /// The timing model's record of loop `l` of `loop_forest`.
    pub fn timing_of_loop(&self, l: usize) -> Option<&timing::LoopTiming> {
        self.loop_timing
            .get(l)
            .copied()
            .flatten()
            .map(|i| &self.timing.loops[i])
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

/// Per-block costs (see [`BlockCost`]) and weighted per-instruction cycles.
fn block_costs(cfg: &Cfg, insns: &[Instruction], t: &KernelTiming) -> (Vec<BlockCost>, Vec<f64>) {
    let detail = &t.instructions_detail;
    // (cycles per execution, executions) of each instruction; executions
    // are the model's (product of enclosing trip counts)
    let per: Vec<(f64, f64)> = insns
        .iter()
        .enumerate()
        .map(|(i, insn)| {
            // the detail is in instruction order; search only if it is not
            let j = match detail.get(i) {
                Some(d) if d.addr == insn.addr => Some(i),
                _ => detail.binary_search_by_key(&insn.addr, |x| x.addr).ok(),
            };
            j.map_or((0.0, 1.0), |j| {
                let d = &detail[j];
                (
                    d.cycles + d.stall,
                    t.executions.get(j).copied().unwrap_or(1.0),
                )
            })
        })
        .collect();
    let mut out: Vec<BlockCost> = cfg
        .blocks
        .iter()
        .map(|b| {
            let mut c = BlockCost {
                executions: 1.0,
                ..Default::default()
            };
            for &(cy, w) in &per[b.insns.clone()] {
                c.cycles_per_execution += cy;
                c.executions = c.executions.max(w);
            }
            c.cycles = c.cycles_per_execution * c.executions;
            c
        })
        .collect();
    let total: f64 = out.iter().map(|c| c.cycles).sum();
    if total > 0.0 {
        for c in &mut out {
            c.share = c.cycles / total;
        }
    }
    (out, per.iter().map(|&(c, w)| c * w).collect())
}
