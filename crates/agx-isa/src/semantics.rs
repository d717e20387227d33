//! What an instruction *does*, beyond how it prints: category, control flow,
//! exec-mask effect, memory space. Keyed by form; one source of truth used by
//! analysis and timing.

use crate::model::{Category, Flow, Instruction};

/// Effect on the structured exec-mask stack (held in `r0l`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecOp {
    /// `if_*cmp`: push a level, lanes failing the condition go inactive.
    If,
    /// `else_*cmp`: flip lanes within the current level.
    Else,
    /// `while_*cmp`: lanes failing the condition leave the loop level.
    While,
    /// `pop_exec n`: pop `n` levels.
    Pop(u8),
    /// Other forms that write the exec state (e.g. `update_exec`).
    Update,
}

/// Memory space touched by a load/store/atomic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemSpace {
    Device,
    Threadgroup,
    Stack,
    Uniform,
    Texture,
    Tile,
}

impl Instruction {
    /// Broad class of this instruction.
    pub fn category(&self) -> Category {
        crate::forms::FORMS
            .get(self.form as usize)
            .map(|f| f.category)
            .unwrap_or(Category::Unknown)
    }

    /// Control-flow effect.
    pub fn flow(&self) -> Flow {
        flow_of(self)
    }

    /// Exec-mask effect, if any.
    pub fn exec_op(&self) -> Option<ExecOp> {
        exec_op_of(self)
    }

    /// Memory space for loads/stores/atomics.
    pub fn mem_space(&self) -> Option<MemSpace> {
        mem_space_of(self)
    }
}

fn flow_of(insn: &Instruction) -> Flow {
    let _ = insn;
    Flow::Next
}

fn exec_op_of(insn: &Instruction) -> Option<ExecOp> {
    let _ = insn;
    None
}

fn mem_space_of(insn: &Instruction) -> Option<MemSpace> {
    let _ = insn;
    None
}
