//! What each stack access is for (issue 27 item 4): a register spill or
//! fill, a save or restore of a register around a call, or an element of a
//! private array. Only spills and fills say the compiler ran out of
//! registers; a save/restore is the calling convention, a private array is
//! data the source keeps in thread memory.
//!
//! Facts read (per function, from the instructions alone):
//! * the address of a `stack_load`/`stack_store` is its second-to-last
//!   printed operand (applegpu `StackLoad/StoreInstructionDesc`: `..., R,
//!   offset, 0`): an immediate (a fixed slot) or a register (an index
//!   computed at run time: only an array is addressed so);
//! * a fixed slot stored before a `call` and loaded back after it is a
//!   save/restore (the helper of `examples/simple_call.archive`);
//! * a fixed slot both stored and loaded otherwise is a spill/fill;
//! * in a function that also indexes the stack through registers, a fixed
//!   slot only stored or only loaded is an element of that array (its
//!   initialisation, or a read at a constant index: marysaka `testing`
//!   loads element 0 after indexed stores).
//!
//! Stack adjusts and `stack_get_ptr` move no data ([`Instruction::mem_access`])
//! and have no kind.

use agx_isa::{Instruction, MemDir, MemSpace, OperandKind, RegFile};
use serde::Serialize;
use std::collections::HashMap;

/// Kind of one stack access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StackKind {
    /// A register stored because registers ran out.
    Spill,
    /// A spilled register loaded back.
    Fill,
    /// A register stored before a call, to survive it.
    Save,
    /// A saved register loaded back after the call.
    Restore,
    /// An element of an array kept in thread (stack) memory.
    PrivateArray,
}

impl StackKind {
    /// The record's spelling (`stack_kind`).
    pub fn name(self) -> &'static str {
        match self {
            StackKind::Spill => "spill",
            StackKind::Fill => "fill",
            StackKind::Save => "save",
            StackKind::Restore => "restore",
            StackKind::PrivateArray => "private_array",
        }
    }
}

/// Counts per kind (`stack_kinds` in the record).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StackKinds {
    pub spill: u32,
    pub fill: u32,
    pub save: u32,
    pub restore: u32,
    pub private_array: u32,
}

impl StackKinds {
    /// The counts of `kinds`.
    pub fn of(kinds: &[(u32, StackKind)]) -> StackKinds {
        let mut c = StackKinds::default();
        for &(_, k) in kinds {
            match k {
                StackKind::Spill => c.spill += 1,
                StackKind::Fill => c.fill += 1,
                StackKind::Save => c.save += 1,
                StackKind::Restore => c.restore += 1,
                StackKind::PrivateArray => c.private_array += 1,
            }
        }
        c
    }

    /// Sum of the counts.
    pub fn total(&self) -> u32 {
        self.spill + self.fill + self.save + self.restore + self.private_array
    }
}

/// Where a stack access's address comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Addr {
    Slot(i64),
    Register,
    Unknown,
}

fn address(i: &Instruction) -> Addr {
    let ops = &i.operands;
    match ops.len().checked_sub(2).and_then(|k| ops.get(k)) {
        Some(o) => match &o.kind {
            OperandKind::Reg(r) if r.file == RegFile::Gpr => Addr::Register,
            k => k.imm_value().map_or(Addr::Unknown, Addr::Slot),
        },
        None => Addr::Unknown,
    }
}

/// The kind of every stack access of one function's code (`insns`, in
/// address order), as (index into `insns`, kind), ascending.
pub fn classify(insns: &[Instruction]) -> Vec<(u32, StackKind)> {
    let accesses: Vec<(usize, MemDir, Addr)> = insns
        .iter()
        .enumerate()
        .filter_map(|(k, i)| {
            let m = i.mem_access().filter(|m| m.space == MemSpace::Stack)?;
            (m.dir != MemDir::Atomic).then(|| (k, m.dir, address(i)))
        })
        .collect();
    if accesses.is_empty() {
        return Vec::new();
    }
    let mut calls: Vec<u32> = insns
        .iter()
        .filter(|i| {
            matches!(
                i.flow(),
                agx_isa::Flow::Call { .. } | agx_isa::Flow::CallIndirect
            )
        })
        .map(|i| i.addr)
        .collect();
    let indexed = accesses.iter().any(|a| a.2 == Addr::Register);
    // per fixed slot: its first store's and last load's addresses (a call
    // lies between a store at `a` and some load of its slot iff the first
    // call after `a` comes before the slot's last load; likewise for a
    // load and the slot's first store): one binary search an access, not
    // a scan of loads × calls (quadratic on call-dense code)
    let mut slots: HashMap<i64, (Option<u32>, Option<u32>)> = HashMap::new();
    for &(k, dir, a) in &accesses {
        if let Addr::Slot(o) = a {
            let at = insns[k].addr;
            let e = slots.entry(o).or_default();
            match dir {
                MemDir::Store => e.0 = Some(e.0.map_or(at, |s| s.min(at))),
                _ => e.1 = Some(e.1.map_or(at, |l| l.max(at))),
            }
        }
    }
    calls.sort_unstable();
    let first_call_after = |a: u32| calls.get(calls.partition_point(|&c| c <= a)).copied();
    let last_call_before = |a: u32| {
        let n = calls.partition_point(|&c| c < a);
        n.checked_sub(1).map(|i| calls[i])
    };
    accesses
        .iter()
        .map(|&(k, dir, a)| {
            let store = dir == MemDir::Store;
            let kind = match a {
                Addr::Register => StackKind::PrivateArray,
                Addr::Slot(o) => {
                    let (first_store, last_load) = slots[&o];
                    let at = insns[k].addr;
                    let around_call = if store {
                        first_call_after(at)
                            .zip(last_load)
                            .is_some_and(|(c, l)| c < l)
                    } else {
                        last_call_before(at)
                            .zip(first_store)
                            .is_some_and(|(c, s)| s < c)
                    };
                    if around_call {
                        if store {
                            StackKind::Save
                        } else {
                            StackKind::Restore
                        }
                    } else if indexed && (first_store.is_none() || last_load.is_none()) {
                        StackKind::PrivateArray
                    } else if store {
                        StackKind::Spill
                    } else {
                        StackKind::Fill
                    }
                }
                Addr::Unknown if store => StackKind::Spill,
                Addr::Unknown => StackKind::Fill,
            };
            (k as u32, kind)
        })
        .collect()
}
