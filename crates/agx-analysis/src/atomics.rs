//! Atomics facts (issue 35 item 4): per atomic instruction, how the 32
//! lanes of a SIMD-group share addresses (from its lane pattern,
//! [`crate::address::Access`]), and whether a device atomic merges a
//! threadgroup-privatised result (a threadgroup atomic earlier in the
//! code, a `threadgroup_barrier` between them: the privatised histogram).
//!
//! `lanes`: `uniform` (every lane one address: the atomics serialise on
//! it), `distinct` (a constant nonzero lane stride: one lane per address),
//! `shared` (rows whose lanes in a run read one address: `run` lanes per
//! address), `data_dependent` (addresses from loaded data: contention
//! unknown), `unknown` (the pattern was not proved), `one_lane` (issued
//! under an `if` that keeps one lane, `active_thread_index_in_simdgroup ==
//! 0`: `subgroupElect()`/`simd_is_first()`, one atomic per SIMD-group —
//! the SIMD-group already aggregated).

use crate::address::{Access, Addresses, Pattern};
use agx_isa::format::operand_texts;
use agx_isa::{Instruction, MemSpace, Syntax};
use serde::Serialize;

/// The atomics fact of one atomic instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct AtomicFact {
    /// How the lanes share addresses (see the module doc).
    pub lanes: &'static str,
    /// Lanes of a SIMD-group per address (32 uniform, 1 distinct); null
    /// when not known.
    pub lanes_per_address: Option<u32>,
    /// A device atomic after a threadgroup atomic and a barrier: the
    /// kernel already privatises in threadgroup memory.
    pub privatised: bool,
}

fn lanes_of(a: &Access) -> (&'static str, Option<u32>) {
    match a.lane_pattern {
        Pattern::Uniform => ("uniform", Some(32)),
        Pattern::Contiguous => ("distinct", Some(1)),
        Pattern::Strided => match a.lane_stride {
            Some(s) if s != 0 => ("distinct", Some(1)),
            _ => ("unknown", None),
        },
        Pattern::Rows => match (a.lane_stride, a.run, a.jump) {
            (Some(0), Some(r), Some(j)) if j != 0 => ("shared", Some(r)),
            (Some(s), Some(_), Some(j)) if s != 0 && j != 0 => ("distinct", Some(1)),
            _ => ("unknown", None),
        },
        Pattern::Gather => ("data_dependent", None),
        Pattern::Unknown => ("unknown", None),
    }
}

/// Whether the `if` at `k` compares a lane index (sr58
/// `active_thread_index_in_simdgroup`, sr52 `thread_index_in_simdgroup`,
/// written by the nearest `get_sr` of its register) for equality with an
/// immediate: it keeps one lane.
fn one_lane_if(insns: &[Instruction], k: usize) -> bool {
    let ops = operand_texts(&insns[k], Syntax::Default);
    if insns[k].mnemonic() != "if_icmp" || ops.len() < 4 || ops[1] != "ueq" {
        return false;
    }
    let (reg, imm) = if ops[3].parse::<i64>().is_ok() {
        (&ops[2], true)
    } else {
        (&ops[3], ops[2].parse::<i64>().is_ok())
    };
    if !imm {
        return false;
    }
    let writer = insns[..k].iter().rev().find(|i| {
        operand_texts(i, Syntax::Default)
            .first()
            .is_some_and(|d| d.split('.').next() == Some(reg.as_str()))
    });
    writer.is_some_and(|w| {
        w.mnemonic() == "get_sr"
            && operand_texts(w, Syntax::Default)
                .get(1)
                .is_some_and(|s| s.starts_with("sr58") || s.starts_with("sr52"))
    })
}

/// Whether the innermost open `if` around instruction `i` keeps one lane
/// (see [`one_lane_if`]); an `else` arm or a loop in between: no.
fn elected(insns: &[Instruction], i: usize) -> bool {
    let mut closed = 0u32;
    for k in (0..i).rev() {
        let m = insns[k].mnemonic();
        if m == "pop_exec" {
            closed += 1;
        } else if m.starts_with("else_") {
            if closed == 0 {
                return false;
            }
        } else if m.starts_with("if_") || m.starts_with("while_") {
            if closed > 0 {
                closed -= 1;
                continue;
            }
            return one_lane_if(insns, k);
        }
    }
    false
}

/// Sets `atomic` on every atomic access of `addrs`.
pub fn annotate(insns: &[Instruction], addrs: &mut Addresses) {
    let is_barrier = |i: &Instruction| i.mnemonic() == "threadgroup_barrier";
    // index of the first threadgroup atomic, and of the first barrier after it
    let tg_atomic = addrs
        .accesses
        .iter()
        .find(|a| a.dir == "atomic" && a.space == MemSpace::Threadgroup.name())
        .map(|a| a.index as usize);
    let barrier_after = tg_atomic.and_then(|t| {
        insns
            .iter()
            .enumerate()
            .skip(t + 1)
            .find(|(_, i)| is_barrier(i))
            .map(|(k, _)| k)
    });
    for a in &mut addrs.accesses {
        if a.dir != "atomic" {
            continue;
        }
        let (lanes, per) = if elected(insns, a.index as usize) {
            ("one_lane", Some(1))
        } else {
            lanes_of(a)
        };
        let privatised = a.space == MemSpace::Device.name()
            && barrier_after.is_some_and(|b| (a.index as usize) > b);
        a.atomic = Some(AtomicFact {
            lanes,
            lanes_per_address: per,
            privatised,
        });
    }
}
