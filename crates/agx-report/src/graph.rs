//! The graph model of one function, read by the graph views (HTML, DOT):
//! the control-flow graph and loop forest the analysis computed, the
//! model's loop of each forest loop and each instruction's unrounded
//! cycles (the heat bars' lengths: layout). The figures the views print of
//! a block are the record's `blocks[]`, of an instruction its row's. Built
//! once per profile from those two results; nothing is re-derived.

use agx_analysis::loops::LoopForest;
use agx_analysis::timing::{KernelTiming, LoopTiming};
use agx_analysis::Cfg;
use agx_isa::Instruction;

/// CFG, loops and costs of one function.
#[derive(Clone, Debug, Default)]
pub struct FunctionGraph {
    /// The analysis' control-flow graph and loop forest.
    pub cfg: Cfg,
    pub loops: LoopForest,
    /// The model's cycles of each instruction (`timing.insn_cycles`; index
    /// = instruction index): the heat column.
    pub insn_cycles: Vec<f64>,
    /// The timing model's loop (index into `KernelTiming::loops`) of each
    /// loop of `loops` (by the model's `forest` index).
    pub loop_timing: Vec<Option<usize>>,
}

impl FunctionGraph {
    /// The analysis' `cfg` and `loops` of `insns` with the model's
    /// instruction cycles (`timing.insn_cycles`) and its loops by forest
    /// index: nothing is costed here.
    pub fn new(cfg: Cfg, loops: LoopForest, insns: &[Instruction], t: &KernelTiming) -> Self {
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
