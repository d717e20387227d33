//! The forward dataflow framework the per-register analyses share: the
//! divergence analysis ([`crate::divergence`]) and the address analysis
//! ([`crate::address`]) each give a [`Forward`] domain (a state, what a block
//! does to it, what an edge does to it, how two states join) and
//! [`forward`] runs it to a fixpoint over the CFG.
//!
//! The walk: a worklist of blocks popped lowest index first (code order,
//! so a loop body is revisited after its header settles); only blocks with
//! several intra-function predecessors (joins, loop headers) or none
//! (function entries) keep an entry state, a block with one forward
//! predecessor is run straight from that predecessor's exit state (a
//! chain), and spent states are pooled so that a copy along an edge
//! allocates nothing once warm. Linear in the code for a bounded number of
//! passes per loop nest; a budget of `64 * blocks + 1024` block visits ends
//! a walk that does not settle ([`Outcome::settled`] false), after which
//! [`replay`] runs every stored state once more so that the domain can
//! record from the states as they stand.

use crate::cfg::{Cfg, Edge};

/// A forward dataflow domain.
pub trait Forward {
    /// The state at a program point.
    type State: Clone;
    /// Applies block `b`'s instructions to `s` (its entry state).
    fn block(&mut self, b: usize, s: &mut Self::State);
    /// What edge `e` out of block `b` does to the state leaving `b` (by
    /// default nothing).
    fn edge(&mut self, _b: usize, _s: &mut Self::State, _e: &Edge) {}
    /// Joins `from` (along the edge `pred -> to`) into `into`, block `to`'s
    /// stored entry state; true when `into` changed.
    fn join(&mut self, pred: usize, to: usize, into: &mut Self::State, from: &Self::State) -> bool;
}

/// The entry states of the blocks that keep one (joins, loop headers,
/// entries): a slot per block into a list of the states stored, not an
/// `Option<State>` per block (most of them empty).
pub struct Stored<S> {
    slot: Vec<u32>,
    states: Vec<Option<S>>,
}

impl<S> Stored<S> {
    const NONE: u32 = u32::MAX;
    pub fn new(blocks: usize) -> Stored<S> {
        Stored {
            slot: vec![Self::NONE; blocks],
            states: Vec::new(),
        }
    }
    /// Block `b`'s stored state.
    pub fn get(&self, b: usize) -> Option<&S> {
        let k = self.slot[b];
        if k == Self::NONE {
            None
        } else {
            self.states[k as usize].as_ref()
        }
    }
    fn get_mut(&mut self, b: usize) -> Option<&mut S> {
        let k = self.slot[b];
        if k == Self::NONE {
            None
        } else {
            self.states[k as usize].as_mut()
        }
    }
    /// Stores `s` for block `b` (which has none).
    pub fn insert(&mut self, b: usize, s: S) {
        debug_assert_eq!(self.slot[b], Self::NONE);
        self.slot[b] = self.states.len() as u32;
        self.states.push(Some(s));
    }
    /// Block `b`'s state, taken out (its buffers move to the caller).
    pub fn take(&mut self, b: usize) -> Option<S> {
        let k = std::mem::replace(&mut self.slot[b], Self::NONE);
        if k == Self::NONE {
            None
        } else {
            self.states[k as usize].take()
        }
    }
}

/// What [`forward`] leaves: the stored entry states and whether the walk
/// settled within its budget.
pub struct Outcome<S> {
    pub stored: Stored<S>,
    pub settled: bool,
    /// Blocks run straight from their single forward predecessor.
    chained: Vec<bool>,
}

/// Whether the edge `from -> to` goes back in the code (a loop's back edge).
pub fn is_back(cfg: &Cfg, from: usize, to: usize) -> bool {
    cfg.blocks[to].start <= cfg.blocks[from].last
}

/// Whether block `b` has a predecessor along a back edge.
pub fn has_back_pred(cfg: &Cfg, b: usize) -> bool {
    cfg.blocks[b].preds.iter().any(|p| is_back(cfg, p.to, b))
}

fn copy<S: Clone>(pool: &mut Vec<S>, s: &S) -> S {
    match pool.pop() {
        Some(mut t) => {
            t.clone_from(s);
            t
        }
        None => s.clone(),
    }
}

/// Runs domain `d` to a fixpoint from the `entries` (block, state) pairs
/// (a block given twice keeps its first state).
pub fn forward<D: Forward>(
    cfg: &Cfg,
    d: &mut D,
    entries: impl IntoIterator<Item = (usize, D::State)>,
) -> Outcome<D::State> {
    let nb = cfg.blocks.len();
    let mut inb: Stored<D::State> = Stored::new(nb);
    let mut queued = vec![false; nb];
    let mut work = std::collections::BinaryHeap::new();
    for (b, st) in entries {
        if inb.get(b).is_none() {
            inb.insert(b, st);
            work.push(std::cmp::Reverse(b));
            queued[b] = true;
        }
    }
    let mut is_entry = vec![false; nb];
    for f in &cfg.functions {
        is_entry[f.entry_block] = true;
    }
    let chained: Vec<bool> = (0..nb)
        .map(|b| {
            let mut preds = cfg.blocks[b].preds.iter().filter(|e| e.kind.is_intra());
            match (preds.next(), preds.next()) {
                (Some(p), None) => !is_entry[b] && !is_back(cfg, p.to, b),
                _ => false,
            }
        })
        .collect();
    let mut pool: Vec<D::State> = Vec::new();
    let mut guard = 0usize;
    let mut chain: Vec<(usize, D::State)> = Vec::new();
    let mut settled = true;
    while let Some(std::cmp::Reverse(b0)) = work.pop() {
        queued[b0] = false;
        guard += 1;
        if guard > 64 * nb + 1024 {
            settled = false;
            break;
        }
        let s0 = copy(&mut pool, inb.get(b0).expect("queued with a state"));
        chain.push((b0, s0));
        while let Some((b, s)) = chain.pop() {
            let mut s = Some(s);
            d.block(b, s.as_mut().expect("state"));
            let succs = &cfg.blocks[b].succs;
            let last = succs.iter().rposition(|e| e.kind.is_intra());
            for (k, e) in succs.iter().enumerate() {
                if !e.kind.is_intra() {
                    continue;
                }
                // the last edge takes the state itself
                let mut out = if Some(k) == last {
                    s.take().expect("state")
                } else {
                    copy(&mut pool, s.as_ref().expect("state"))
                };
                d.edge(b, &mut out, e);
                if chained[e.to] {
                    chain.push((e.to, out));
                    continue;
                }
                let changed = match inb.get_mut(e.to) {
                    None => {
                        // stored exactly sized
                        inb.insert(e.to, out.clone());
                        true
                    }
                    Some(t) => d.join(b, e.to, t, &out),
                };
                pool.push(out);
                if changed && !queued[e.to] {
                    queued[e.to] = true;
                    work.push(std::cmp::Reverse(e.to));
                }
            }
            if let Some(s) = s {
                pool.push(s);
            }
        }
    }
    Outcome {
        stored: inb,
        settled,
        chained,
    }
}

/// Runs every stored state of an unsettled walk once more, in block
/// order, with the chains that follow it (the stored states are taken).
pub fn replay<D: Forward>(cfg: &Cfg, d: &mut D, out: &mut Outcome<D::State>) {
    let mut chain: Vec<(usize, D::State)> = Vec::new();
    let mut pool: Vec<D::State> = Vec::new();
    for b0 in 0..cfg.blocks.len() {
        let Some(s0) = out.stored.take(b0) else {
            continue;
        };
        chain.push((b0, s0));
        while let Some((b, mut s)) = chain.pop() {
            d.block(b, &mut s);
            for e in &cfg.blocks[b].succs {
                if e.kind.is_intra() && out.chained[e.to] {
                    let mut o = copy(&mut pool, &s);
                    d.edge(b, &mut o, e);
                    chain.push((e.to, o));
                }
            }
            pool.push(s);
        }
    }
}
