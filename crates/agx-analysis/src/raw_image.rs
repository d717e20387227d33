//! Called functions of raw code, found in one decode of the file (issue 21).
//!
//! A `call` in raw code (`--binary`) may target any even byte of the file:
//! a helper before main (`--offset`), after main's `stop`, or inside main's
//! own code. The file is walked once ([`RawImage::new`]: the length-aware
//! walk of the profile, [`agx_isa::stream::walk_native`], from byte 0,
//! restarted after each `stop`), keeping for each instruction only
//! its file position and control flow (20 B, not the 176 B of an
//! [`Instruction`]), and the positions that do not decode. A function
//! entered at a target is then the part of that decode its entry reaches
//! without following calls — the same instructions the helper's own walk
//! from its entry to its first `stop` would give
//! ([`crate::program::function_body`]): the reach walk runs on the decode
//! from the entry to the first `stop` at or after it, and only the reached
//! instructions are decoded into [`Instruction`]s, at the function's
//! addresses. A function's cost is bounded by the code it reaches, never by
//! the rest of the file.
//!
//! A target that is not an instruction start of the one decode (the bytes
//! before it decode out of step with the bytes from it) is walked on its
//! own until it meets an instruction start of the decode (from there on the
//! two walks are the same: a step depends only on the bytes at its position
//! when their first halfword is not zero) or its `stop`.
//!
//! **A target that holds no code to follow** gives no function, and says why
//! ([`NoFunction`]; docs/decoder.md, "Call targets in raw code"):
//!
//! * outside the input, or not on a 2-byte boundary;
//! * inside an instruction of *known* code: main's own walk (from its first
//!   byte, the one entry the user gave, to its `stop`) and the decode after
//!   main's `stop` when that decode restarts there (in step with main).
//!   Before main the decode from byte 0 is a guess (the bytes there may be
//!   data), so a target there is walked on its own and judged by what it
//!   decodes to;
//! * on zero bytes or on bytes that do not decode;
//! * code of which [`agx_isa::stream::NOT_CODE_PERCENT`] or more of the
//!   positions the function runs into (falls through to) do not decode: not
//!   code ([`NoFunction::Malformed`]); fewer are counted
//!   ([`FunctionCode::unknown`]) and warned about like main's;
//! * code the function runs into that ends inside an instruction (the end
//!   of the input): the input is cut ([`NoFunction::Cut`]).
//!
//! Guard: the functions handed out hold at most as many instructions, in
//! all, as the file decodes to, plus [`SLACK`] (real helpers are disjoint
//! code, so they fit; code whose calls land everywhere would otherwise cost
//! `functions × file`); past it a target is not followed
//! ([`NoFunction::Guard`]).

use crate::program::{fmt_target, CodeSource, FunctionCode, NoFunction};
use agx_isa::stream::{not_code_percent, walk_native, Cut, Step};
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
    /// File positions that did not decode (increasing).
    failed: Vec<u32>,
    /// Where the decode's last walk ended inside an instruction (the end
    /// of the input): file position, bytes held, bytes needed.
    cut: Option<(usize, u8, u8)>,
    /// The file position of main's first byte, and its address: a target
    /// address `t` is at file position `start + (t - addr)`.
    start: usize,
    addr: u32,
    /// Main's own walk where it is out of step with the decode (file
    /// position, length; usually empty), then the decode from index
    /// `main_join` on; main ends before file position `main_end`.
    main_own: Vec<(u32, u8)>,
    main_join: Option<usize>,
    main_end: usize,
    /// From this file position on the decode continues main's walk (it
    /// restarts after main's `stop`): known code.
    known_from: usize,
    /// Instructions handed out so far, and the most allowed.
    spent: Cell<usize>,
    budget: usize,
    /// Per instruction: the number of the reach walk that last saw it
    /// (one array for every walk: no per-function allocation of the file's
    /// size).
    seen: RefCell<Vec<u32>>,
    walks: Cell<u32>,
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

/// One step of [`walk_from`], at a file position.
#[derive(Clone, Copy)]
enum Seen {
    Insn { len: u8, flow: Flow },
    Failed,
    Gap,
}

/// How [`walk_from`] ended.
enum Ended {
    /// At the `stop` at this file position.
    Stop(usize),
    /// At the end of the input; inside an instruction there when the cut
    /// (file position, bytes held, bytes needed) is given.
    End(Option<(usize, u8, u8)>),
    /// `each` asked to stop.
    Asked,
}

/// Walks `bytes[from..]` (file positions), calling `each(pos, step)` for
/// every step, until `stop` (included) or the end, or until `each` returns
/// false.
fn walk_from(
    bytes: &[u8],
    from: usize,
    insn: &mut Instruction,
    each: &mut dyn FnMut(usize, Seen) -> bool,
) -> Ended {
    let mut w = walk_native(&bytes[from..], 0);
    loop {
        let Some(step) = w.next_into(insn) else {
            return Ended::End(w.cut().map(|c| (from + c.addr as usize, c.have, c.need)));
        };
        let (pos, seen) = match step {
            Step::Insn { .. } => (
                from + insn.addr as usize,
                Seen::Insn {
                    len: insn.len,
                    flow: shifted(insn.flow(), from as i64),
                },
            ),
            Step::Failed { addr, .. } => (from + addr as usize, Seen::Failed),
            Step::Gap { addr } => (from + addr as usize, Seen::Gap),
        };
        let stop = matches!(
            seen,
            Seen::Insn {
                flow: Flow::Stop,
                ..
            }
        );
        if !each(pos, seen) {
            return Ended::Asked;
        }
        if stop {
            return Ended::Stop(pos);
        }
    }
}

/// Why the walk from a target gave no function (the front of
/// [`NoFunction`], before the messages are made).
enum Refused {
    /// Not code to follow: the message.
    Malformed(String),
    /// The function runs into the end of the input inside an instruction
    /// (file position, bytes held, bytes needed).
    Cut((usize, u8, u8)),
    /// The guard on the instructions handed out.
    Budget,
}

/// The first walk of [`RawImage::new`]'s decode (from byte 0 to its first
/// `stop`, or to the end of the input) when the caller made it already:
/// main's own decode when main starts at byte 0 ([`FirstWalk::of_main`]).
pub struct FirstWalk {
    /// File position of each instruction, and its control flow (targets as
    /// file positions).
    pos: Vec<u32>,
    flow: Vec<Flow>,
    /// File positions that did not decode.
    failed: Vec<u32>,
    /// Where the walk ended inside an instruction (the end of the input).
    cut: Option<Cut>,
}

impl FirstWalk {
    /// The walk of main's code when main starts at byte 0 of the input with
    /// address `addr`: its decoded instructions (the length-aware walk,
    /// [`agx_isa::stream::decode_checked`], of the whole input), the
    /// addresses of its undecodable positions (increasing) and where it was
    /// cut. `None` when the addresses would not fit in 32 bits from `addr`
    /// on (the walk from byte 0 is then made again).
    pub fn of_main(
        insns: &[Instruction],
        failed: impl Iterator<Item = u32>,
        cut: Option<Cut>,
        addr: u32,
        input_len: usize,
    ) -> Option<FirstWalk> {
        if addr as u64 + input_len as u64 > u32::MAX as u64 {
            return None;
        }
        let back = -(addr as i64);
        Some(FirstWalk {
            pos: insns.iter().map(|i| i.addr - addr).collect(),
            flow: insns.iter().map(|i| shifted(i.flow(), back)).collect(),
            failed: failed.map(|a| a - addr).collect(),
            cut: cut.map(|c| Cut {
                addr: c.addr - addr,
                ..c
            }),
        })
    }
}

impl<'a> RawImage<'a> {
    /// The decode of `bytes`, main's first byte at file position `start`
    /// with address `addr`.
    pub fn new(bytes: &'a [u8], start: usize, addr: u32) -> RawImage<'a> {
        RawImage::with_first_walk(bytes, start, addr, None)
    }

    /// [`RawImage::new`], its first walk (from byte 0) taken from `first`
    /// when given: the same image, without decoding that part of the input
    /// again. `first` must be the length-aware walk of `bytes` from byte 0
    /// ([`FirstWalk::of_main`] of main's decode when main starts there).
    pub fn with_first_walk(
        bytes: &'a [u8],
        start: usize,
        addr: u32,
        first: Option<FirstWalk>,
    ) -> RawImage<'a> {
        let mut pos: Vec<u32> = Vec::new();
        let mut flow: Vec<Flow> = Vec::new();
        let mut stops = Vec::new();
        let mut failed = Vec::new();
        let mut cut = None;
        let mut insn = Instruction::default();
        let start = start.min(bytes.len());
        // one walk from byte 0, restarted after every `stop` (a `stop` is 2
        // bytes): from any instruction start of it on, the walk is the one a
        // fresh walk from there makes (after its first instruction both are
        // in the same state at the same byte), and a fresh walk never runs
        // past its first `stop`
        let mut from = 0;
        if let Some(w) = first {
            // the walk ends at its first `stop` (its last instruction) or at
            // the end of the input
            (pos, flow, failed) = (w.pos, w.flow, w.failed);
            match flow.last() {
                Some(Flow::Stop) => {
                    stops.push(pos.len() as u32 - 1);
                    from = pos[pos.len() - 1] as usize + 2;
                }
                _ => {
                    cut = w.cut.map(|c| (c.addr as usize, c.have, c.need));
                    from = bytes.len();
                }
            }
        } else {
            pos.reserve(bytes.len() / 6 + 16);
            flow.reserve(bytes.len() / 6 + 16);
        }
        while from < bytes.len() {
            let ended = walk_from(bytes, from, &mut insn, &mut |p, s| {
                match s {
                    Seen::Insn { flow: f, .. } => {
                        if matches!(f, Flow::Stop) {
                            stops.push(pos.len() as u32);
                        }
                        pos.push(p as u32);
                        flow.push(f);
                    }
                    Seen::Failed => failed.push(p as u32),
                    Seen::Gap => {}
                }
                true
            });
            match ended {
                Ended::Stop(s) => from = s + 2,
                Ended::End(c) => {
                    cut = c;
                    break;
                }
                Ended::Asked => break,
            }
        }
        pos.shrink_to_fit();
        flow.shrink_to_fit();
        let n = pos.len();
        let mut img = RawImage {
            bytes,
            pos,
            flow,
            stops,
            failed,
            cut,
            start,
            addr,
            main_own: Vec::new(),
            main_join: None,
            main_end: start,
            known_from: bytes.len(),
            spent: Cell::new(0),
            budget: n + SLACK,
            seen: RefCell::new(vec![0; n]),
            walks: Cell::new(0),
        };
        img.find_main();
        img
    }

    /// Main's walk: its own steps until it meets an instruction start of
    /// the decode, then the decode to the first `stop`; and whether the
    /// decode restarts right after that `stop` (the code after main is
    /// then known).
    fn find_main(&mut self) {
        let p = self.start;
        if p >= self.bytes.len() {
            return;
        }
        let mut join = self.index_at(p);
        let mut own: Vec<(u32, u8)> = Vec::new();
        let mut end = self.bytes.len();
        if join.is_none() {
            let (joined, ended) = self.walk_alone(p, &mut |q, s| {
                if let Seen::Insn { len, .. } = s {
                    own.push((q as u32, len));
                }
                true
            });
            join = joined;
            if let Ended::Stop(s) = ended {
                end = s + 2;
            }
        }
        if let Some(k) = join {
            let s = self.stops.partition_point(|&s| (s as usize) < k);
            if let Some(&s) = self.stops.get(s) {
                end = self.pos[s as usize] as usize + 2;
                // the decode restarts after this `stop`: in step with main
                self.known_from = end;
            }
        }
        self.main_own = own;
        self.main_join = join;
        self.main_end = end;
    }

    /// The walk from file position `p` on its own (`each` sees its steps),
    /// until it meets an instruction start of the decode — from there on
    /// the two walks are the same (a step depends only on the bytes at its
    /// position when their first halfword is not zero) — whose index it
    /// returns, or until it ends.
    fn walk_alone(
        &self,
        p: usize,
        each: &mut dyn FnMut(usize, Seen) -> bool,
    ) -> (Option<usize>, Ended) {
        let bytes = self.bytes;
        let mut join = None;
        let mut insn = Instruction::default();
        let ended = walk_from(bytes, p, &mut insn, &mut |q, s| {
            if matches!(s, Seen::Insn { .. }) && q != p && (bytes[q] | bytes[q + 1]) != 0 {
                if let Some(k) = self.index_at(q) {
                    join = Some(k);
                    return false;
                }
            }
            each(q, s)
        });
        (join, ended)
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

    /// The length of the decode's instruction at index `k`.
    fn len_at(&self, k: usize) -> u8 {
        let mut i = Instruction::default();
        let p = self.pos[k] as usize;
        match walk_native(&self.bytes[p..], 0).next_into(&mut i) {
            Some(Step::Insn { .. }) => i.len,
            _ => 2,
        }
    }

    /// The instruction of known code (main's walk, or the decode after
    /// main's `stop`) that `p` lies strictly inside: its file position and
    /// length.
    fn known_insn_around(&self, p: usize) -> Option<(usize, u8)> {
        let in_main = p >= self.start && p < self.main_end;
        if in_main {
            let joined = self
                .main_join
                .map_or(self.main_end, |k| self.pos[k] as usize);
            if p < joined || self.main_join.is_none() {
                let i = self.main_own.partition_point(|&(q, _)| (q as usize) <= p);
                let &(q, len) = self.main_own.get(i.checked_sub(1)?)?;
                let q = q as usize;
                return (q < p && p < q + len as usize).then_some((q, len));
            }
        } else if p < self.known_from {
            return None;
        }
        let k = self
            .pos
            .partition_point(|&q| (q as usize) <= p)
            .checked_sub(1)?;
        let q = self.pos[k] as usize;
        if q == p {
            return None;
        }
        let len = self.len_at(k);
        (p < q + len as usize).then_some((q, len))
    }

    /// Positions of `failed` strictly between file positions `lo` and `hi`.
    fn failed_between(failed: &[u32], lo: usize, hi: usize) -> usize {
        let a = failed.partition_point(|&q| (q as usize) <= lo);
        let b = failed.partition_point(|&q| (q as usize) < hi);
        b.saturating_sub(a)
    }

    /// The function entered at file position `p`, its instructions at
    /// `entry` + their offset from `p`, with the number of positions that
    /// do not decode among the code it runs into; or why there is none.
    fn function(&self, p: usize, entry: u32) -> Result<(Vec<Instruction>, usize), Refused> {
        let left = self.budget.saturating_sub(self.spent.get());
        if let Some((q, len)) = self.known_insn_around(p) {
            let addr_of = |q: usize| fmt_target(entry as i64 + (q as i64 - p as i64));
            return Err(Refused::Malformed(format!(
                "it is inside the {len}-byte instruction at {}",
                addr_of(q)
            )));
        }
        let seq = self.sequence(p, left)?;
        let (reached, unknown, runs_off) = self.reach(&seq, left)?;
        if let Some(pct) = not_code_percent(reached.len(), unknown) {
            return Err(Refused::Malformed(format!(
                "{pct}% of the code it runs into does not decode: it is not code"
            )));
        }
        if runs_off {
            if let Some(c) = seq.cut {
                return Err(Refused::Cut(c));
            }
        }
        Ok((self.decode_reached(&seq, reached, entry), unknown))
    }

    /// The walk's sequence from file position `p` (at most `left`
    /// instructions decoded on their own), or why the entry holds no code.
    fn sequence(&self, p: usize, left: usize) -> Result<Sequence<'_, 'a>, Refused> {
        let mut own: Vec<(u32, Flow)> = Vec::new();
        let mut own_failed: Vec<u32> = Vec::new();
        // how the own walk ended when it did not join: a `stop` (in `own`),
        // or the end of the input (maybe inside an instruction)
        let mut own_cut = None;
        let mut join: Option<usize> = self.index_at(p);
        if join.is_none() {
            let mut over = false;
            let mut first: Option<Seen> = None;
            let (joined, ended) = self.walk_alone(p, &mut |q, s| {
                if first.is_none() {
                    first = Some(s);
                    if !matches!(s, Seen::Insn { .. }) {
                        return false;
                    }
                }
                match s {
                    Seen::Insn { flow: f, .. } => {
                        if own.len() >= left {
                            over = true;
                            return false;
                        }
                        own.push((q as u32, f));
                    }
                    Seen::Failed => own_failed.push(q as u32),
                    Seen::Gap => {}
                }
                true
            });
            join = joined;
            match first {
                Some(Seen::Gap) => {
                    return Err(Refused::Malformed(
                        "it holds zero bytes, no instruction".to_string(),
                    ))
                }
                Some(Seen::Failed) => {
                    return Err(Refused::Malformed(
                        "it holds bytes that do not decode".to_string(),
                    ))
                }
                _ => {}
            }
            if over {
                return Err(Refused::Budget);
            }
            if let Ended::End(c) = ended {
                own_cut = c;
            }
            if own.is_empty() {
                // the walk ended at once: the end of the input inside the
                // first instruction
                return match own_cut {
                    Some(c) => Err(Refused::Cut(c)),
                    None => Err(Refused::Malformed("it holds no instruction".to_string())),
                };
            }
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
        // how the sequence ends when its last instruction falls through:
        // the end of the input, maybe inside an instruction
        let cut = if tail.start < tail.end {
            (tail.end == self.pos.len() && !matches!(self.flow[tail.end - 1], Flow::Stop))
                .then_some(self.cut)
                .flatten()
        } else {
            own_cut
        };
        let tail_from = (tail.start < tail.end).then(|| self.pos[tail.start] as usize);
        Ok(Sequence {
            img: self,
            p,
            own,
            own_failed,
            tail,
            tail_from,
            cut,
        })
    }

    /// Reach from the entry, calls not followed: the steps reached, the
    /// positions that do not decode they fall into, and whether the walk
    /// runs off the sequence's end.
    fn reach(&self, seq: &Sequence, left: usize) -> Result<(Vec<usize>, usize, bool), Refused> {
        let n_own = seq.own.len();
        let len = seq.len();
        let walk = self.walks.get() + 1;
        self.walks.set(walk);
        let mut seen = self.seen.borrow_mut();
        let mut own_seen = vec![false; n_own];
        let mut mark = |v: usize, seen: &mut Vec<u32>| -> bool {
            if v < n_own {
                !std::mem::replace(&mut own_seen[v], true)
            } else {
                let k = seq.tail.start + (v - n_own);
                seen[k] != walk && {
                    seen[k] = walk;
                    true
                }
            }
        };
        let mut reached: Vec<usize> = Vec::new();
        let mut unknown = 0;
        let mut runs_off = false;
        let mut stack = vec![0usize];
        mark(0, &mut seen);
        while let Some(v) = stack.pop() {
            reached.push(v);
            if reached.len() > left {
                return Err(Refused::Budget);
            }
            let (_, f) = seq.at(v);
            let falls = matches!(
                f,
                Flow::Next | Flow::Call { .. } | Flow::CallIndirect | Flow::BranchExec { .. }
            );
            if falls {
                unknown += seq.failed_after(v);
                runs_off |= v + 1 == len;
            }
            let next = (v + 1 < len).then_some(v + 1);
            let (a, b) = match f {
                Flow::Next | Flow::Call { .. } | Flow::CallIndirect => (next, None),
                Flow::BranchExec { target, .. } => (seq.find(target), next),
                Flow::Jump { target } => (seq.find(target), None),
                Flow::Ret | Flow::Stop | Flow::Trap => (None, None),
            };
            for s in [a, b].into_iter().flatten() {
                if mark(s, &mut seen) {
                    stack.push(s);
                }
            }
        }
        Ok((reached, unknown, runs_off))
    }

    /// Decodes the `reached` steps of `seq` at the function's addresses
    /// (`entry` + their offset from the entry), in address order.
    fn decode_reached(
        &self,
        seq: &Sequence,
        mut reached: Vec<usize>,
        entry: u32,
    ) -> Vec<Instruction> {
        reached.sort_unstable();
        let mut out = Vec::with_capacity(reached.len());
        for v in reached {
            let (q, _) = seq.at(v);
            let a = entry.wrapping_add((q - seq.p) as u32);
            let mut w = walk_native(&self.bytes[q..], a);
            let mut i = Instruction::default();
            if let Some(Step::Insn { .. }) = w.next_into(&mut i) {
                out.push(i);
            }
        }
        out
    }
}

/// The walk's sequence from an entry at file position `p`: instructions
/// decoded on their own from `p` (`own`) until one starts at an
/// instruction of the decode (the join), then the decode from there
/// (`tail`, up to the first `stop`). Its steps are numbered own first.
struct Sequence<'s, 'a> {
    img: &'s RawImage<'a>,
    p: usize,
    own: Vec<(u32, Flow)>,
    own_failed: Vec<u32>,
    tail: std::ops::Range<usize>,
    /// The file position of the tail's first instruction.
    tail_from: Option<usize>,
    /// How the sequence ends when its last instruction falls through: the
    /// end of the input inside an instruction.
    cut: Option<(usize, u8, u8)>,
}

impl Sequence<'_, '_> {
    fn len(&self) -> usize {
        self.own.len() + self.tail.len()
    }

    /// Step `v`'s file position and flow.
    fn at(&self, v: usize) -> (usize, Flow) {
        let n_own = self.own.len();
        if v < n_own {
            (self.own[v].0 as usize, self.own[v].1)
        } else {
            let k = self.tail.start + (v - n_own);
            (self.img.pos[k] as usize, self.img.flow[k])
        }
    }

    /// The step at file position `t`, if the sequence has one there
    /// (targets before the entry are outside the function's walk).
    fn find(&self, t: i64) -> Option<usize> {
        if t < self.p as i64 || t > u32::MAX as i64 {
            return None;
        }
        let t = t as usize;
        match self.tail_from {
            Some(f) if t >= f => {
                let k = self.img.pos[self.tail.clone()]
                    .binary_search(&(t as u32))
                    .ok()?;
                Some(self.own.len() + k)
            }
            _ => self.own.binary_search_by_key(&(t as u32), |o| o.0).ok(),
        }
    }

    /// Positions that do not decode between the step `v` and the next
    /// one of the sequence (what `v` falls through into).
    fn failed_after(&self, v: usize) -> usize {
        let n_own = self.own.len();
        let (q, _) = self.at(v);
        if v + 1 < n_own || (v + 1 == n_own && self.tail_from.is_none()) {
            let hi = self.own.get(v + 1).map_or(usize::MAX, |o| o.0 as usize);
            RawImage::failed_between(&self.own_failed, q, hi)
        } else if v + 1 == n_own {
            RawImage::failed_between(&self.own_failed, q, self.tail_from.unwrap_or(usize::MAX))
        } else {
            let hi = if v + 1 < self.len() {
                self.at(v + 1).0
            } else {
                usize::MAX
            };
            RawImage::failed_between(&self.img.failed, q, hi)
        }
    }
}

impl CodeSource for RawImage<'_> {
    fn function_at(&self, target: i64) -> Result<FunctionCode, NoFunction> {
        let pos = self.start as i64 + (target - self.addr as i64);
        let len = self.bytes.len();
        if pos < 0 {
            return Err(NoFunction::Missing(format!(
                "it is before the start of the input (file offset -{:#x})",
                pos.unsigned_abs()
            )));
        }
        if pos >= len as i64 {
            return Err(NoFunction::Missing(format!(
                "it is past the end of the input (file offset {pos:#x}, the input is {len:#x} bytes)"
            )));
        }
        if pos % 2 != 0 {
            return Err(NoFunction::Malformed(
                "it is not on a 2-byte boundary: no instruction starts there".to_string(),
            ));
        }
        // printed at its address in main's space, or at its file offset
        // when that address would be negative
        let entry = u32::try_from(target).unwrap_or(pos as u32);
        let p = pos as usize;
        let guard = || {
            NoFunction::Guard(format!(
                "the functions followed already hold {} instructions, about as many as the whole input decodes to ({}): a guard against code whose calls land everywhere",
                self.spent.get(),
                self.pos.len()
            ))
        };
        let (insns, unknown) = match self.function(p, entry) {
            Ok((insns, _)) if self.spent.get() + insns.len() > self.budget => return Err(guard()),
            Ok(found) => found,
            Err(Refused::Budget) => return Err(guard()),
            Err(Refused::Malformed(m)) => return Err(NoFunction::Malformed(m)),
            Err(Refused::Cut((q, have, need))) => {
                return Err(NoFunction::Cut(Cut {
                    addr: entry.wrapping_add((q - p) as u32),
                    have,
                    need,
                }))
            }
        };
        self.spent.set(self.spent.get() + insns.len());
        Ok(FunctionCode {
            entry,
            symbol: None,
            name: None,
            insns,
            unknown,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field of the decode, for comparing two images.
    fn fields(i: &RawImage<'_>) -> String {
        format!(
            "{:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {} {}",
            i.pos,
            i.flow,
            i.stops,
            i.failed,
            i.cut,
            i.main_own,
            i.main_join,
            i.main_end,
            i.known_from,
            i.budget,
            i.seen.borrow().len()
        )
    }

    /// The image made with main's decode as its first walk is the image
    /// made by walking the input again: on bytes with unknown encodings,
    /// zero runs, `stop`s anywhere (or none) and cut-off tails, with main
    /// at any address.
    #[test]
    fn first_walk_from_main_gives_the_same_image() {
        let mut next = crate::xorshift::xorshift64(0x9E37_79B9_7F4A_7C15);
        for round in 0..300 {
            let n = 2 + (next() % 3000) as usize;
            let mut b: Vec<u8> = (0..n).map(|_| next() as u8).collect();
            for i in 0..n {
                if next().is_multiple_of(31) {
                    for v in b.iter_mut().skip(i).take((next() % 10) as usize) {
                        *v = 0;
                    }
                }
                if round % 3 != 0 && i + 1 < n && next().is_multiple_of(400) {
                    (b[i], b[i + 1]) = (0x88, 0x00);
                }
                if round % 5 == 0 && next().is_multiple_of(40) {
                    // a `call`
                    b[i] = 0x10;
                }
            }
            let addr = [0u32, 0x100, 0x7fff_0000][round % 3];
            let d = agx_isa::stream::decode_checked(&b, addr);
            let mut failed = Vec::new();
            let mut w = agx_isa::stream::walk_native(&b, addr);
            let mut insn = Instruction::default();
            while let Some(s) = w.next_into(&mut insn) {
                if let Step::Failed { addr, .. } = s {
                    failed.push(addr);
                }
            }
            assert_eq!(failed.len(), d.failed);
            let first = FirstWalk::of_main(&d.insns, failed.into_iter(), d.cut, addr, b.len())
                .expect("fits");
            let again = RawImage::new(&b, 0, addr);
            let reused = RawImage::with_first_walk(&b, 0, addr, Some(first));
            assert_eq!(fields(&again), fields(&reused), "round {round}");
        }
        // addresses past 32 bits: no first walk
        assert!(FirstWalk::of_main(&[], std::iter::empty(), None, u32::MAX - 4, 16).is_none());
    }
}
