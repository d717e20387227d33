//! Called functions of raw code, found in one decode of the file (issue 21).
//!
//! A `call` in raw code (`--binary`) may target any even byte of the file:
//! a helper before main (`--offset`), after main's `stop`, or inside main's
//! own code. The file is walked once ([`RawImage::new`]: the length-aware
//! walk of the profile, [`agx_isa::stream::walk_native`], from byte 0,
//! restarted after each `stop`), keeping for each instruction only
//! its file position and control flow (20 B, not the 176 B of an
//! [`Instruction`]). A function entered at a target is then the part of
//! that decode its entry reaches without following calls — the same
//! instructions the helper's own walk from its entry to its first `stop`
//! would give ([`crate::program::function_body`]): the reach walk runs on
//! the decode from the entry to the first `stop` at or after it, and only
//! the reached instructions are decoded into [`Instruction`]s, at the
//! function's addresses. A function's cost is bounded by the code it
//! reaches, never by the rest of the file.
//!
//! A target that is not an instruction start of the one decode (the bytes
//! before it decode out of step with the bytes from it) is walked on its
//! own until it meets an instruction start of the decode (from there on the
//! two walks are the same: a step depends only on the bytes at its position
//! when their first halfword is not zero) or its `stop`.
//!
//! Guard: the functions handed out hold at most as many instructions, in
//! all, as the file decodes to, plus [`SLACK`] (real helpers are disjoint
//! code, so they fit; code whose calls land everywhere would otherwise cost
//! `functions × file`); past it a target is not followed and
//! [`CodeSource::not_followed`] says why.

use crate::program::{CodeSource, FunctionCode};
use agx_isa::stream::{walk_native, Step};
use agx_isa::{Flow, Instruction};
use std::cell::{Cell, RefCell};

/// Instructions the called functions may hold beyond the file's own count.
pub const SLACK: usize = 65_536;

/// One decode of a raw code buffer, in file positions.
pub struct RawImage<'a> {
    bytes: &'a [u8],
    /// File position of each decoded instruction (increasing).
    pos: Vec<u32>,
    /// Its control flow, targets as file positions.
    flow: Vec<Flow>,
    /// Indices of the `stop`s (increasing).
    stops: Vec<u32>,
    /// The file position of main's first byte, and its address: a target
    /// address `t` is at file position `start + (t - addr)`.
    start: usize,
    addr: u32,
    /// Instructions handed out so far, and the most allowed.
    spent: Cell<usize>,
    budget: usize,
    /// Per instruction: the number of the reach walk that last saw it
    /// (one array for every walk: no per-function allocation of the file's
    /// size).
    seen: RefCell<Vec<u32>>,
    walks: Cell<u32>,
    /// Targets refused by the guard.
    refused: RefCell<Vec<i64>>,
}

/// A step's flow with its targets moved by `delta` bytes.
fn shifted(f: Flow, delta: i64) -> Flow {
    match f {
        Flow::BranchExec { target, any } => Flow::BranchExec {
            target: target + delta,
            any,
        },
        Flow::Jump { target } => Flow::Jump {
            target: target + delta,
        },
        Flow::Call { target } => Flow::Call {
            target: target + delta,
        },
        f => f,
    }
}

/// Walks `bytes[from..]` (file positions), calling `each(pos, flow)` for
/// every instruction, until `stop` (included) or the end, or until `each`
/// returns false. Returns the position of the `stop` that ended it.
fn walk_from(
    bytes: &[u8],
    from: usize,
    insn: &mut Instruction,
    each: &mut dyn FnMut(usize, Flow) -> bool,
) -> Option<usize> {
    let mut w = walk_native(&bytes[from..], 0);
    loop {
        if let Step::Insn { .. } = w.next_into(insn)? {
            let pos = from + insn.addr as usize;
            let f = shifted(insn.flow(), from as i64);
            let stop = matches!(f, Flow::Stop);
            if !each(pos, f) {
                return None;
            }
            if stop {
                return Some(pos);
            }
        }
    }
}

/// Why a target gave no function.
enum Refused {
    /// No instruction starts there.
    NoCode,
    /// The guard on the instructions handed out.
    Budget,
}

impl<'a> RawImage<'a> {
    /// The decode of `bytes`, main's first byte at file position `start`
    /// with address `addr`.
    pub fn new(bytes: &'a [u8], start: usize, addr: u32) -> RawImage<'a> {
        let mut pos: Vec<u32> = Vec::with_capacity(bytes.len() / 6 + 16);
        let mut flow: Vec<Flow> = Vec::with_capacity(bytes.len() / 6 + 16);
        let mut stops = Vec::new();
        let mut insn = Instruction::default();
        let start = start.min(bytes.len());
        // one walk from byte 0, restarted after every `stop` (a `stop` is 2
        // bytes): from any instruction start of it on, the walk is the one a
        // fresh walk from there makes (after its first instruction both are
        // in the same state at the same byte), and a fresh walk never runs
        // past its first `stop`
        let mut from = 0;
        while from < bytes.len() {
            let stopped = walk_from(bytes, from, &mut insn, &mut |p, f| {
                if matches!(f, Flow::Stop) {
                    stops.push(pos.len() as u32);
                }
                pos.push(p as u32);
                flow.push(f);
                true
            });
            match stopped {
                Some(s) => from = s + 2,
                None => break,
            }
        }
        pos.shrink_to_fit();
        flow.shrink_to_fit();
        let n = pos.len();
        RawImage {
            bytes,
            pos,
            flow,
            stops,
            start,
            addr,
            spent: Cell::new(0),
            budget: n + SLACK,
            seen: RefCell::new(vec![0; n]),
            walks: Cell::new(0),
            refused: RefCell::new(Vec::new()),
        }
    }

    /// Instructions of the decode.
    pub fn len(&self) -> usize {
        self.pos.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pos.is_empty()
    }

    /// Index of the instruction at file position `p`, if one starts there.
    fn index_at(&self, p: usize) -> Option<usize> {
        self.pos.binary_search(&(p as u32)).ok()
    }

    /// The function entered at file position `p`, its instructions at
    /// `entry` + their offset from `p`: `None` when no instruction starts
    /// at `p` or the guard refuses it.
    fn function(&self, p: usize, entry: u32) -> Result<Vec<Instruction>, Refused> {
        let left = self.budget.saturating_sub(self.spent.get());
        // the walk's sequence: instructions decoded on their own from `p`
        // (`own`) until one starts at an instruction of the decode
        // (`join`), then the decode from there
        let mut own: Vec<(u32, Flow)> = Vec::new();
        let mut join: Option<usize> = self.index_at(p);
        let mut insn = Instruction::default();
        if join.is_none() {
            let bytes = self.bytes;
            let mut over = false;
            walk_from(bytes, p, &mut insn, &mut |q, f| {
                if q != p && bytes[q..].len() >= 2 && (bytes[q] | bytes[q + 1]) != 0 {
                    if let Some(k) = self.index_at(q) {
                        join = Some(k);
                        return false;
                    }
                }
                if own.len() >= left {
                    over = true;
                    return false;
                }
                own.push((q as u32, f));
                true
            });
            if over {
                return Err(Refused::Budget);
            }
        }
        let first = own.first().map(|o| o.0 as usize);
        if first.or(join.map(|k| self.pos[k] as usize)) != Some(p) {
            return Err(Refused::NoCode);
        }
        let own_stops = own.last().is_some_and(|o| matches!(o.1, Flow::Stop));
        // the sequence ends at the first `stop` from the entry on
        let tail: std::ops::Range<usize> = match join {
            Some(k) if !own_stops => {
                let s = self.stops.partition_point(|&s| (s as usize) < k);
                let end = self
                    .stops
                    .get(s)
                    .map_or(self.pos.len(), |&s| s as usize + 1);
                k..end
            }
            _ => 0..0,
        };
        let n_own = own.len();
        let len = n_own + tail.len();
        let at = |v: usize| -> (usize, Flow) {
            if v < n_own {
                (own[v].0 as usize, own[v].1)
            } else {
                let k = tail.start + (v - n_own);
                (self.pos[k] as usize, self.flow[k])
            }
        };
        let tail_from = (tail.start < tail.end).then(|| self.pos[tail.start] as usize);
        // the step at file position `t`, if the sequence has one there
        // (targets before the entry are outside the function's walk)
        let find = |t: i64| -> Option<usize> {
            if t < p as i64 || t > u32::MAX as i64 {
                return None;
            }
            let t = t as usize;
            match tail_from {
                Some(f) if t >= f => {
                    let k = self.pos[tail.clone()].binary_search(&(t as u32)).ok()?;
                    Some(n_own + k)
                }
                _ => own.binary_search_by_key(&(t as u32), |o| o.0).ok(),
            }
        };
        // reach from the entry, calls not followed
        let walk = self.walks.get() + 1;
        self.walks.set(walk);
        let mut seen = self.seen.borrow_mut();
        let mut own_seen = vec![false; n_own];
        let mut mark = |v: usize, seen: &mut Vec<u32>| -> bool {
            if v < n_own {
                !std::mem::replace(&mut own_seen[v], true)
            } else {
                let k = tail.start + (v - n_own);
                seen[k] != walk && {
                    seen[k] = walk;
                    true
                }
            }
        };
        let mut reached: Vec<usize> = Vec::new();
        let mut stack = vec![0usize];
        mark(0, &mut seen);
        while let Some(v) = stack.pop() {
            reached.push(v);
            if reached.len() > left {
                return Err(Refused::Budget);
            }
            let (_, f) = at(v);
            let next = (v + 1 < len).then_some(v + 1);
            let (a, b) = match f {
                Flow::Next | Flow::Call { .. } | Flow::CallIndirect => (next, None),
                Flow::BranchExec { target, .. } => (find(target), next),
                Flow::Jump { target } => (find(target), None),
                Flow::Ret | Flow::Stop | Flow::Trap => (None, None),
            };
            for s in [a, b].into_iter().flatten() {
                if mark(s, &mut seen) {
                    stack.push(s);
                }
            }
        }
        drop(seen);
        reached.sort_unstable();
        // decode the reached instructions at the function's addresses
        let mut out = Vec::with_capacity(reached.len());
        for v in reached {
            let (q, _) = at(v);
            let a = entry.wrapping_add((q - p) as u32);
            let mut w = walk_native(&self.bytes[q..], a);
            let mut i = Instruction::default();
            if let Some(Step::Insn { .. }) = w.next_into(&mut i) {
                out.push(i);
            }
        }
        Ok(out)
    }
}

impl CodeSource for RawImage<'_> {
    fn function_at(&self, target: i64) -> Option<FunctionCode> {
        let pos = self.start as i64 + (target - self.addr as i64);
        if pos < 0 || pos >= self.bytes.len() as i64 || pos % 2 != 0 {
            return None;
        }
        // printed at its address in main's space, or at its file offset
        // when that address would be negative
        let entry = u32::try_from(target).unwrap_or(pos as u32);
        let insns = match self.function(pos as usize, entry) {
            Ok(insns) if self.spent.get() + insns.len() <= self.budget => insns,
            Err(Refused::NoCode) => return None,
            _ => {
                self.refused.borrow_mut().push(target);
                return None;
            }
        };
        self.spent.set(self.spent.get() + insns.len());
        Some(FunctionCode {
            entry,
            symbol: None,
            insns,
        })
    }

    fn not_followed(&self, target: i64) -> Option<String> {
        self.refused.borrow().contains(&target).then(|| {
            format!(
                "the functions followed already hold {} instructions, about as many as the whole input decodes to ({}): a guard against code whose calls land everywhere",
                self.spent.get(),
                self.pos.len()
            )
        })
    }
}
