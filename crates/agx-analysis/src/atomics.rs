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

mod range;

use crate::address::{Access, Addresses, Pattern, Sym};
use agx_isa::format::operand_texts;
use agx_isa::{Instruction, MemSpace, Syntax};
use serde::Serialize;
use std::collections::HashMap;

/// The atomics fact of one atomic instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct AtomicFact {
    /// How the lanes share addresses (see the module doc).
    pub lanes: &'static str,
    /// Lanes of a SIMD-group per address (32 uniform, 1 distinct); null
    /// when not known.
    pub lanes_per_address: Option<u32>,
    /// Distinct words one SIMD-group request updates (1 uniform, 32
    /// distinct, `32 / lanes_per_address` for shared runs); null when not
    /// known (data-dependent or unproved addresses).
    pub words: Option<u32>,
    /// Who else updates those same words: `grid` (a device atomic whose
    /// address depends on no position but the lane's `lid.x mod m`, `m`
    /// dividing 32, and kernel arguments: every SIMD-group of the grid
    /// updates the same words), `threadgroup` (the same for a threadgroup
    /// atomic: every SIMD-group of the threadgroup), `simdgroup` (other
    /// SIMD-groups may update other words); null when `words` is.
    pub words_scope: Option<&'static str>,
    /// A device atomic after a threadgroup atomic and a barrier: the
    /// kernel already privatises in threadgroup memory.
    pub privatised: bool,
    /// A threadgroup atomic: the distinct words its address can reach at
    /// all, whatever the data (a clamp of a data-dependent index:
    /// [`range`]); null when not bounded.
    pub words_reached: Option<u32>,
    /// The fewest updates the busiest of those words gets per threadgroup:
    /// every thread of the threadgroup runs the atomic once (outside loops
    /// and `if`s) on one of `words_reached` words, so one word gets at
    /// least `ceil(threads / words_reached)` (pigeonhole); null when not
    /// proved or not above 1.
    pub min_updates_per_word: Option<u32>,
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
            // runs of distinct words, every run the same words (`gid & 15`
            // over 32 lanes): each word hit by 32 / run lanes
            (Some(s), Some(r), Some(0)) if s != 0 && r > 0 && 32 % r == 0 => {
                ("shared", Some(32 / r))
            }
            _ => ("unknown", None),
        },
        Pattern::Gather => ("data_dependent", None),
        Pattern::Unknown => ("unknown", None),
    }
}

/// Whether every SIMD-group's request updates the same words: the
/// address's symbols are kernel arguments (uniform registers) and
/// `lid.x mod m` with `m` dividing 32 (32 consecutive thread indices
/// cover every residue, the threadgroup's width being a multiple of `m`),
/// nothing that tells SIMD-groups or threadgroups apart.
fn same_words_everywhere(a: &Access) -> bool {
    a.address.as_ref().is_some_and(|p| {
        p.syms()
            .all(|s| matches!(s, Sym::U(..)) || matches!(s, Sym::LidMod(0, m) if 32 % m == 0))
    })
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
    // (the first operand of each instruction back, formatted alone into
    // one buffer: the walk back is a few hundred instructions per `if`)
    let mut first = String::new();
    let writer = insns[..k].iter().rev().find(|i| {
        agx_isa::format::first_operand_text(i, Syntax::Default, &mut first);
        !first.is_empty() && first.split('.').next() == Some(reg.as_str())
    });
    writer.is_some_and(|w| {
        w.mnemonic() == "get_sr"
            && operand_texts(w, Syntax::Default)
                .get(1)
                .is_some_and(|s| s.starts_with("sr58") || s.starts_with("sr52"))
    })
}

/// For each index of `at` (ascending), the innermost open `if`/`while`
/// around that instruction: `Some(k)` for the opener at `k`, `None` when
/// there is none or an `else` arm of it comes first. One forward pass
/// with a stack (it replaced a backward walk per atomic, quadratic on code
/// dense in atomics: half the time of the 1M call-dense scale shape). The
/// stack holds, innermost on top, what a backward walk from here would
/// meet first with 0, 1, 2… `pop_exec`s left to match; below it, nothing.
fn innermost_openers(insns: &[Instruction], at: &[usize]) -> Vec<Option<usize>> {
    let mut stack: Vec<Option<usize>> = Vec::new();
    let mut out = Vec::with_capacity(at.len());
    let mut want = at.iter().copied().peekable();
    for (k, insn) in insns.iter().enumerate() {
        while want.next_if(|&i| i <= k).is_some() {
            out.push(stack.last().copied().flatten());
        }
        if want.peek().is_none() {
            break;
        }
        let m = insn.mnemonic();
        if m == "pop_exec" {
            stack.pop();
        } else if m.starts_with("else_") {
            if let Some(top) = stack.last_mut() {
                *top = None;
            }
        } else if m.starts_with("if_") || m.starts_with("while_") {
            stack.push(Some(k));
        }
    }
    // indices at or past the end see the whole code
    for _ in want {
        out.push(stack.last().copied().flatten());
    }
    out
}

/// The exec-mask nesting depth before each instruction (`if_*`,
/// `while_*`, `push_exec` push their count, `pop_exec` pops its count);
/// the code after an early exit is nested too, so depth 0 is code every
/// thread runs.
fn exec_depths(insns: &[Instruction]) -> Vec<i64> {
    let mut depth = 0i64;
    insns
        .iter()
        .map(|insn| {
            let here = depth;
            let m = insn.mnemonic();
            let count = || {
                insn.operands
                    .iter()
                    .rev()
                    .find_map(|o| o.kind.imm_value())
                    .unwrap_or(1)
            };
            if m.starts_with("if_") || m.starts_with("while_") || m == "push_exec" {
                depth += count();
            } else if m == "pop_exec" {
                depth -= count();
            }
            here
        })
        .collect()
}

/// Sets `atomic` on every atomic access of `addrs`; `threads`: threads per
/// threadgroup.
pub fn annotate(insns: &[Instruction], addrs: &mut Addresses, threads: u32) {
    let depths = exec_depths(insns);
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
    // whether the innermost open `if` around an atomic keeps one lane (see
    // [`one_lane_if`]); an `else` arm or a loop in between: no
    let mut at: Vec<usize> = (addrs.accesses.iter())
        .filter(|a| a.dir == "atomic")
        .map(|a| a.index as usize)
        .collect();
    at.sort_unstable();
    at.dedup();
    let openers = innermost_openers(insns, &at);
    let mut one_lane: HashMap<usize, bool> = HashMap::new();
    let mut elected = |i: usize| {
        let Ok(p) = at.binary_search(&i) else {
            return false;
        };
        openers[p].is_some_and(|k| *one_lane.entry(k).or_insert_with(|| one_lane_if(insns, k)))
    };
    for a in &mut addrs.accesses {
        if a.dir != "atomic" {
            continue;
        }
        let (lanes, per) = if elected(a.index as usize) {
            ("one_lane", Some(1))
        } else {
            lanes_of(a)
        };
        let privatised = a.space == MemSpace::Device.name()
            && barrier_after.is_some_and(|b| (a.index as usize) > b);
        let words = if lanes == "one_lane" {
            Some(1)
        } else {
            per.filter(|&n| n > 0 && 32 % n == 0).map(|n| 32 / n)
        };
        let words_scope = words.map(|_| match (same_words_everywhere(a), a.space) {
            (true, "threadgroup") => "threadgroup",
            (true, _) => "grid",
            (false, _) => "simdgroup",
        });
        let words_reached = (a.space == MemSpace::Threadgroup.name())
            .then(|| range::words_reached(insns, a.index as usize, a.bytes_per_lane))
            .flatten();
        let every_thread_once =
            a.in_loop.is_none() && depths.get(a.index as usize).copied() == Some(0);
        let min_updates_per_word = words_reached
            .filter(|&w| every_thread_once && w > 0 && w < threads)
            .map(|w| threads.div_ceil(w));
        a.atomic = Some(Box::new(AtomicFact {
            lanes,
            lanes_per_address: per,
            words,
            words_scope,
            privatised,
            words_reached,
            min_updates_per_word,
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The backward walk `innermost_openers` replaced, kept as the
    /// reference: from `i` back to the start, counting `pop_exec`s.
    fn walk_back(insns: &[Instruction], i: usize) -> Option<usize> {
        let mut closed = 0u32;
        for k in (0..i.min(insns.len())).rev() {
            let m = insns[k].mnemonic();
            if m == "pop_exec" {
                closed += 1;
            } else if m.starts_with("else_") {
                if closed == 0 {
                    return None;
                }
            } else if m.starts_with("if_") || m.starts_with("while_") {
                if closed > 0 {
                    closed -= 1;
                    continue;
                }
                return Some(k);
            }
        }
        None
    }

    /// Real control flow (the repo's Mesa slice) and shuffles of it, which
    /// put `if`/`else`/`while`/`pop_exec` in every order: the forward pass
    /// gives the backward walk's answer at every instruction.
    #[test]
    fn forward_pass_agrees_with_the_backward_walk() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/mesa");
        let mut all = Vec::new();
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let bin = e.path().join(format!("{name}.bin"));
            if let Ok(code) = std::fs::read(&bin) {
                all.extend(agx_isa::stream::decode_all(&code, 0).0);
            }
        }
        let flow = |i: &Instruction| {
            let m = i.mnemonic();
            m == "pop_exec"
                || m.starts_with("else_")
                || m.starts_with("if_")
                || m.starts_with("while_")
        };
        let structured = all.iter().filter(|i| flow(i)).count();
        assert!(
            structured > 50,
            "only {structured} exec-mask instructions in the slice"
        );
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for round in 0..40 {
            let mut v = all.clone();
            if round > 0 {
                // Fisher-Yates with xorshift64
                for j in (1..v.len()).rev() {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    v.swap(j, (seed % (j as u64 + 1)) as usize);
                }
                v.truncate(400 + round * 37);
            }
            let at: Vec<usize> = (0..=v.len()).collect();
            let fwd = innermost_openers(&v, &at);
            for &i in &at {
                assert_eq!(fwd[i], walk_back(&v, i), "round {round}, instruction {i}");
            }
        }
    }
}
