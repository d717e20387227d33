//! `agx-isa`: the Apple GPU instruction sets: G13 (M1/M2) and, in
//! [`apple9`], Apple9 (M3/M4/A18 Pro); [`isa`] holds one value per family.
//!
//! bytes → [`Instruction`] (typed operands with def/use roles, register
//! file, width and count) → text in applegpu's syntax. The instruction forms
//! are data ([`forms`]), generated from applegpu's descriptor tables; the
//! formatter is separate from the decoder, as in `iced-x86`/`yaxpeax`.

pub mod apple9;
pub mod asm;
pub mod cost;
pub mod decode;
pub mod format;
pub mod forms;
mod group_alu;
mod group_ctrl;
mod group_mem;
pub mod isa;
pub mod model;
pub mod native;
mod operands;
pub mod semantics;
pub mod stream;
pub mod table;
#[cfg(test)]
#[path = "../../../testdata/xorshift.rs"]
mod xorshift;

pub use cost::{CostKey, CostRule, Transcendental};
pub use decode::{decode, DecodeError};
pub use format::{format_asm, format_line, Syntax};
pub use model::*;
pub use semantics::{ExecKind, ExecOp, FlowKind, MemAccess, MemDir, MemForm, MemSpace};
pub use stream::{disassemble_listing, walk, Item};
