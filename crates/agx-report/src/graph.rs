//! The graph model of one function, read by the graph views (HTML, DOT):
//! the control-flow graph and loop forest the analysis computed, and what
//! each block and instruction costs according to the timing model. Built
//! once per profile from those two results; nothing is re-derived.

use agx_analysis::loops::LoopForest;
use agx_analysis::timing::{KernelTiming, LoopTiming};
use agx_analysis::Cfg;
use agx_isa::Instruction;

/// What one basic block costs: the timing model's `blocks` record (its
/// instructions' share of their region's cost, × executions).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BlockCost {
    /// `cycles / executions`.
    pub cycles_per_execution: f64,
    /// Executions per SIMD-group (1 outside loops).
    pub executions: f64,
    /// `cycles_per_execution × executions`.
    pub cycles: f64,
    /// Fraction (0..1) of the kernel's `total_cycles` (the blocks sum to it).
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
    /// The model's cycles of each instruction (`timing.insn_cycles`; index
    /// = instruction index): the heat column.
    pub insn_cycles: Vec<f64>,
    /// The timing model's loop (index into `KernelTiming::loops`) of each
    /// loop of `loops` (by the model's `forest` index).
    pub loop_timing: Vec<Option<usize>>,
}

impl FunctionGraph {
    /// The analysis' `cfg` and `loops` of `insns` with the model's block
    /// and instruction cycles (`timing.blocks`, `timing.insn_cycles`) and
    /// its loops by forest index: nothing is costed here.
    pub fn new(cfg: Cfg, loops: LoopForest, insns: &[Instruction], t: &KernelTiming) -> Self {
        let mut block_costs = vec![BlockCost::default(); cfg.blocks.len()];
        for b in &t.blocks {
            if let Some(c) = block_costs.get_mut(b.index) {
                *c = BlockCost {
                    cycles_per_execution: if b.executions > 0.0 {
                        b.cycles / b.executions
                    } else {
                        b.cycles
                    },
                    executions: b.executions,
                    cycles: b.cycles,
                    share: b.share,
                };
            }
        }
        let mut loop_timing = vec![None; loops.loops.len()];
        for (i, l) in t.loops.iter().enumerate() {
            if let Some(x) = loop_timing.get_mut(l.forest) {
                *x = Some(i);
            }
        }
        let mut insn_cycles = t.insn_cycles.clone();
        insn_cycles.resize(insns.len(), 0.0);
        FunctionGraph {
            cfg,
            loops,
            block_costs,
            insn_cycles,
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
