//! The graph model of one function, read by the graph views (HTML, DOT):
//! the control-flow graph and loop forest the analysis computed, and what
//! each block and instruction costs according to the timing model. Built
//! once per profile from those two results; nothing is re-derived.

use agx_analysis::loops::LoopForest;
use agx_analysis::timing::{KernelTiming, LoopTiming};
use agx_analysis::Cfg;
use agx_isa::Instruction;

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

/// CFG, loops and costs of one function.
#[derive(Clone, Debug, Default)]
pub struct FunctionGraph {
    /// The analysis' control-flow graph and loop forest.
    pub cfg: Cfg,
    pub loops: LoopForest,
    /// Cost of each basic block (index = `cfg.blocks` index).
    pub block_costs: Vec<BlockCost>,
    /// Cycles of each instruction weighted by its executions (issue +
    /// exposed stall × executions; index = instruction index): the heat
    /// column.
    pub insn_cycles: Vec<f64>,
    /// The timing model's loop (index into `KernelTiming::loops`) of each
    /// loop of `loops`, matched by header address.
    pub loop_timing: Vec<Option<usize>>,
}

impl FunctionGraph {
    /// Joins the analysis' `cfg` and `loops` of `insns` with the model's
    /// `timing` of the same instructions.
    pub fn new(cfg: Cfg, loops: LoopForest, insns: &[Instruction], t: &KernelTiming) -> Self {
        let detail = &t.instructions_detail;
        // (cycles per execution, executions) of each instruction
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
                        d.cycles() + d.stall,
                        t.executions.get(j).copied().unwrap_or(1.0),
                    )
                })
            })
            .collect();
        let mut block_costs: Vec<BlockCost> = cfg
            .blocks
            .iter()
            .map(|b| {
                let mut c = BlockCost {
                    executions: 1.0,
                    ..Default::default()
                };
                for &(cy, w) in per.get(b.insns.clone()).unwrap_or(&[]) {
                    c.cycles_per_execution += cy;
                    c.executions = c.executions.max(w);
                }
                c.cycles = c.cycles_per_execution * c.executions;
                c
            })
            .collect();
        let total: f64 = block_costs.iter().map(|c| c.cycles).sum();
        if total > 0.0 {
            for c in &mut block_costs {
                c.share = c.cycles / total;
            }
        }
        let by_header: std::collections::HashMap<u32, usize> = t
            .loops
            .iter()
            .enumerate()
            .map(|(i, l)| (l.header, i))
            .collect();
        let loop_timing = loops
            .loops
            .iter()
            .map(|l| by_header.get(&cfg.blocks[l.header].start).copied())
            .collect();
        FunctionGraph {
            cfg,
            loops,
            block_costs,
            insn_cycles: per.iter().map(|&(c, w)| c * w).collect(),
            loop_timing,
        }
    }

    /// The timing model's record of loop `l` (index into `loops`).
    pub fn timing_of_loop<'a>(&self, t: &'a KernelTiming, l: usize) -> Option<&'a LoopTiming> {
        self.loop_timing
            .get(l)
            .copied()
            .flatten()
            .and_then(|i| t.loops.get(i))
    }
}
