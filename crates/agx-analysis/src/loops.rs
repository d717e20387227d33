//! Dominators, natural loops and irreducible regions.
//!
//! * Dominators: Cooper, Harvey & Kennedy, "A Simple, Fast Dominance
//!   Algorithm" (2001), iterative over reverse postorder, on the
//!   intra-procedural edges (everything but [`crate::cfg::EdgeKind::Call`]) with a
//!   virtual root whose successors are the entries of all functions (main
//!   and each helper), so each function's blocks get their own dominator
//!   tree.
//! * Retreating edges: `u → v` with `rpo(v) <= rpo(u)` in the DFS order.
//!   A retreating edge whose target dominates its source is a *back edge*
//!   and defines a natural loop (header `v`, latch `u`); one that is not is
//!   the mark of an *irreducible* region, reported with its strongly
//!   connected component and never turned into a loop.
//! * Natural loops: back edges grouped by header; bodies and the loop
//!   forest are found in one pass, inner headers first (decreasing RPO),
//!   collapsing already-discovered inner loops to their header (the scheme
//!   of LLVM's `LoopInfoBase::analyze`), so the cost is near-linear.

use crate::cfg::Cfg;
use serde::Serialize;

/// Dominator information.
#[derive(Clone, Debug, Default)]
pub struct Dominators {
    /// Immediate dominator of each block; `None` for unreachable blocks and
    /// for function entries (dominated only by the virtual root).
    pub idom: Vec<Option<usize>>,
    /// Reverse-postorder index of each block (`usize::MAX` if unreachable).
    pub rpo_index: Vec<usize>,
    /// Blocks in reverse postorder (reachable ones only).
    pub rpo: Vec<usize>,
    pre: Vec<u32>,
    post: Vec<u32>,
}

impl Dominators {
    pub fn reachable(&self, b: usize) -> bool {
        self.rpo_index[b] != usize::MAX
    }

    /// Whether `a` dominates `b` (reflexive). O(1) with dominator-tree
    /// DFS intervals.
    pub fn dominates(&self, a: usize, b: usize) -> bool {
        if !self.reachable(a) || !self.reachable(b) {
            return false;
        }
        self.pre[a] <= self.pre[b] && self.post[b] <= self.post[a]
    }
}

/// Computes dominators.
pub fn dominators(cfg: &Cfg) -> Dominators {
    let nb = cfg.blocks.len();
    if nb == 0 {
        return Dominators::default();
    }
    let root = nb;
    let entries: Vec<usize> = cfg.functions.iter().map(|f| f.entry_block).collect();
    let mut is_entry = vec![false; nb];
    for &e in &entries {
        is_entry[e] = true;
    }

    // Iterative DFS postorder from the virtual root.
    let mut visited = vec![false; nb];
    let mut post_order: Vec<usize> = Vec::with_capacity(nb);
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for &e in &entries {
        if visited[e] {
            continue;
        }
        visited[e] = true;
        stack.push((e, 0));
        while let Some(&mut (b, ref mut k)) = stack.last_mut() {
            let succs = &cfg.blocks[b].succs;
            let mut pushed = false;
            while *k < succs.len() {
                let e = succs[*k];
                *k += 1;
                if e.kind.is_intra() && !visited[e.to] {
                    visited[e.to] = true;
                    stack.push((e.to, 0));
                    pushed = true;
                    break;
                }
            }
            if !pushed {
                post_order.push(b);
                stack.pop();
            }
        }
    }
    let rpo: Vec<usize> = post_order.iter().rev().copied().collect();
    let mut rpo_index = vec![usize::MAX; nb];
    for (i, &b) in rpo.iter().enumerate() {
        rpo_index[b] = i;
    }
    // Postorder number for intersect: root gets the highest.
    let po = |b: usize| -> usize {
        if b == root {
            usize::MAX
        } else {
            nb - 1 - rpo_index[b]
        }
    };

    let mut idom = vec![usize::MAX; nb + 1];
    idom[root] = root;
    let mut changed = true;
    while changed {
        changed = false;
        for &b in &rpo {
            let mut new_idom = usize::MAX;
            if is_entry[b] {
                new_idom = root;
            }
            for p in cfg.blocks[b].preds.intra() {
                if idom[p] == usize::MAX {
                    continue;
                }
                if new_idom == usize::MAX {
                    new_idom = p;
                    continue;
                }
                // intersect(p, new_idom)
                let (mut x, mut y) = (p, new_idom);
                while x != y {
                    while po(x) < po(y) {
                        x = idom[x];
                    }
                    while po(y) < po(x) {
                        y = idom[y];
                    }
                }
                new_idom = x;
            }
            if new_idom != usize::MAX && idom[b] != new_idom {
                idom[b] = new_idom;
                changed = true;
            }
        }
    }

    // Dominator tree intervals.
    let mut children: Vec<Vec<u32>> = vec![Vec::new(); nb + 1];
    for &b in &rpo {
        if idom[b] != usize::MAX {
            children[idom[b]].push(b as u32);
        }
    }
    let mut pre = vec![0u32; nb + 1];
    let mut post = vec![0u32; nb + 1];
    let mut clock = 0u32;
    let mut st: Vec<(usize, usize)> = vec![(root, 0)];
    pre[root] = clock;
    clock += 1;
    while let Some(&mut (b, ref mut k)) = st.last_mut() {
        if *k < children[b].len() {
            let c = children[b][*k] as usize;
            *k += 1;
            pre[c] = clock;
            clock += 1;
            st.push((c, 0));
        } else {
            post[b] = clock;
            clock += 1;
            st.pop();
        }
    }

    Dominators {
        idom: (0..nb)
            .map(|b| {
                let d = idom[b];
                (d != usize::MAX && d != root).then_some(d)
            })
            .collect(),
        rpo_index,
        rpo,
        pre,
        post,
    }
}

/// A natural loop.
#[derive(Clone, Debug, Serialize)]
pub struct Loop {
    /// Header block index.
    pub header: usize,
    /// Latch block indices (sources of back edges to the header).
    pub latches: Vec<usize>,
    /// Enclosing loop (index into [`LoopForest::loops`]).
    pub parent: Option<usize>,
    /// 1 for an outermost loop.
    pub depth: u32,
    /// Function (index into `Cfg::functions`) of the header.
    pub function: Option<usize>,
    /// Number of blocks, nested loops included.
    pub blocks: usize,
    /// Number of instructions, nested loops included.
    pub instructions: usize,
    /// Lowest block start address / highest last-instruction address.
    pub start: u32,
    pub end: u32,
    /// Exit edges `(from block, to block)`: from inside to outside.
    pub exits: Vec<(usize, usize)>,
}

/// An irreducible region: a strongly connected component entered by a
/// retreating edge whose target does not dominate its source.
#[derive(Clone, Debug, Serialize)]
pub struct IrreducibleRegion {
    /// Blocks of the strongly connected component.
    pub blocks: Vec<usize>,
    /// Blocks of the component with a predecessor outside it (or that are
    /// a function entry): more than one for a truly irreducible region.
    pub entries: Vec<usize>,
    /// The offending retreating edges `(from block, to block)`.
    pub retreating_edges: Vec<(usize, usize)>,
    pub instructions: usize,
}

/// Loops of a CFG.
#[derive(Clone, Debug, Default)]
pub struct LoopForest {
    /// Inner loops come before the loops that contain them.
    pub loops: Vec<Loop>,
    /// Innermost loop of each block.
    pub loop_of: Vec<Option<usize>>,
    /// All back edges `(latch, header)`.
    pub back_edges: Vec<(usize, usize)>,
    pub irreducible: Vec<IrreducibleRegion>,
}

impl LoopForest {
    /// Whether block `b` is in loop `l` (nested loops included).
    pub fn contains(&self, l: usize, b: usize) -> bool {
        let mut cur = self.loop_of[b];
        while let Some(x) = cur {
            if x == l {
                return true;
            }
            cur = self.loops[x].parent;
        }
        false
    }

    /// Loop nesting depth of block `b` (0 outside loops).
    pub fn depth_of(&self, b: usize) -> u32 {
        self.loop_of[b].map(|l| self.loops[l].depth).unwrap_or(0)
    }
}

/// One loop of a [`LoopNest`], in instruction indices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NestLoop {
    /// Index into [`LoopForest::loops`].
    pub forest: usize,
    /// First instruction of the header block.
    pub header: usize,
    /// Last instruction of the last latch block (the back-edge branch with
    /// the highest address).
    pub latch: usize,
    /// First instruction of the loop's lowest block (`Loop::start`).
    pub first: usize,
    /// Last instruction of the loop's highest block (`Loop::end`).
    pub last: usize,
    /// Enclosing loop (index into [`LoopNest::loops`]).
    pub parent: Option<usize>,
    /// 1 for an outermost loop.
    pub depth: u32,
}

/// Loop membership of every instruction, read from the loop forest: the one
/// definition of which instructions a loop holds (its blocks), that the
/// timing model, the suggestions and the views take loops by. Loops are in
/// the order of [`crate::Analysis::loops`] (by start address, outer before
/// inner), so loop `i` here is loop `i` there.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoopNest {
    pub loops: Vec<NestLoop>,
    /// Innermost loop (index into `loops`) of each instruction.
    pub owner: Vec<Option<u32>>,
    /// Instruction ranges `[start, end)` of the CFG's blocks (index = block).
    pub blocks: Vec<(u32, u32)>,
    /// What the code proves of each loop's trip count
    /// ([`crate::trip_count`]; empty: not analysed).
    pub trips: Vec<Option<crate::trip_count::TripFact>>,
}

impl LoopNest {
    /// The nest of `cfg`'s `forest`.
    pub fn new(cfg: &Cfg, forest: &LoopForest) -> LoopNest {
        let n = cfg.block_of.len();
        let mut order: Vec<usize> = (0..forest.loops.len()).collect();
        // (stable: the order `Analysis::loops` is sorted into)
        order.sort_by_key(|&l| (forest.loops[l].start, forest.loops[l].depth));
        let mut pos = vec![0u32; forest.loops.len()];
        for (i, &l) in order.iter().enumerate() {
            pos[l] = i as u32;
        }
        // first instruction index of each loop's lowest block, and last of
        // its highest: each block counts for its innermost loop, then each
        // loop for its parent (a parent comes after its children in the
        // forest), linear whatever the nesting depth
        let mut first = vec![usize::MAX; forest.loops.len()];
        let mut last = vec![0usize; forest.loops.len()];
        for (b, blk) in cfg.blocks.iter().enumerate() {
            if let Some(l) = forest.loop_of.get(b).copied().flatten() {
                first[l] = first[l].min(blk.insns.start);
                last[l] = last[l].max(blk.insns.end.saturating_sub(1));
            }
        }
        for l in 0..forest.loops.len() {
            if let Some(p) = forest.loops[l].parent {
                debug_assert!(p > l, "a parent loop after its children");
                first[p] = first[p].min(first[l]);
                last[p] = last[p].max(last[l]);
            }
        }
        let loops = order
            .iter()
            .map(|&l| {
                let lp = &forest.loops[l];
                let latch = lp
                    .latches
                    .iter()
                    .map(|&b| cfg.blocks[b].insns.end.saturating_sub(1))
                    .max()
                    .unwrap_or(cfg.blocks[lp.header].insns.start);
                NestLoop {
                    forest: l,
                    header: cfg.blocks[lp.header].insns.start,
                    latch,
                    first: if first[l] == usize::MAX {
                        cfg.blocks[lp.header].insns.start
                    } else {
                        first[l]
                    },
                    last: last[l].max(latch),
                    parent: lp.parent.map(|p| pos[p] as usize),
                    depth: lp.depth,
                }
            })
            .collect();
        let mut owner = vec![None; n];
        for (i, o) in owner.iter_mut().enumerate() {
            let b = cfg.block_of[i] as usize;
            *o = forest.loop_of.get(b).copied().flatten().map(|l| pos[l]);
        }
        LoopNest {
            loops,
            owner,
            blocks: cfg
                .blocks
                .iter()
                .map(|b| (b.insns.start as u32, b.insns.end as u32))
                .collect(),
            trips: Vec::new(),
        }
    }

    /// Whether loop `l` holds instruction `i` (nested loops included).
    pub fn contains(&self, l: usize, i: usize) -> bool {
        let mut cur = self.owner.get(i).copied().flatten().map(|x| x as usize);
        while let Some(x) = cur {
            if x == l {
                return true;
            }
            cur = self.loops[x].parent;
        }
        false
    }
}

/// Finds natural loops and irreducible regions.
pub fn find_loops(cfg: &Cfg, dom: &Dominators) -> LoopForest {
    let (mut back_edges, bad_edges) = retreating_edges(cfg, dom);
    let (mut loops, loop_of) = natural_loops(cfg, dom, &back_edges);
    aggregate(cfg, &mut loops, &loop_of);
    find_exits(cfg, &mut loops, &loop_of);
    loops.shrink_to_fit();

    let irreducible = irreducible_regions(cfg, dom, &bad_edges);
    back_edges.sort_unstable();
    LoopForest {
        loops,
        loop_of,
        back_edges,
        irreducible,
    }
}

/// A CFG edge (from block, to block).
type Edge = (usize, usize);

/// The retreating edges (u, v) (v no later than u in RPO): back edges (v
/// dominates u), and the others, which make a region irreducible.
fn retreating_edges(cfg: &Cfg, dom: &Dominators) -> (Vec<Edge>, Vec<Edge>) {
    let mut back_edges = Vec::new();
    let mut bad_edges = Vec::new();
    for &u in &dom.rpo {
        for v in cfg.blocks[u].succs.intra() {
            if dom.reachable(v) && dom.rpo_index[v] <= dom.rpo_index[u] {
                if dom.dominates(v, u) {
                    back_edges.push((u, v));
                } else {
                    bad_edges.push((u, v));
                }
            }
        }
    }
    (back_edges, bad_edges)
}

/// Outermost discovered ancestor, with path halving.
fn top(loops: &mut [Loop], mut l: usize) -> usize {
    while let Some(p) = loops[l].parent {
        if let Some(g) = loops[p].parent {
            loops[l].parent = Some(g);
        }
        l = p;
    }
    l
}

/// The natural loop of each header (inner first), nested, with the
/// innermost loop of each block; sizes, depths and exits not yet filled.
fn natural_loops(
    cfg: &Cfg,
    dom: &Dominators,
    back_edges: &[Edge],
) -> (Vec<Loop>, Vec<Option<usize>>) {
    let nb = cfg.blocks.len();
    // Headers, inner first.
    let mut headers: Vec<usize> = back_edges.iter().map(|&(_, h)| h).collect();
    headers.sort_unstable_by_key(|&h| std::cmp::Reverse(dom.rpo_index[h]));
    headers.dedup();
    // the latches of each header: the back edges by header (a slice each)
    let mut by_header: Vec<(usize, usize)> = back_edges.iter().map(|&(u, h)| (h, u)).collect();
    by_header.sort_unstable();
    by_header.dedup();

    let mut loop_of: Vec<Option<usize>> = vec![None; nb];
    let mut loops: Vec<Loop> = Vec::new();
    let mut work: Vec<usize> = Vec::new();

    // Path halving in `top` rewrites parent links, which would lose the
    // nesting: keep the true parents separately.
    let mut true_parent: Vec<Option<usize>> = Vec::new();

    for &h in &headers {
        let li = loops.len();
        let from = by_header.partition_point(|&(x, _)| x < h);
        let to = by_header.partition_point(|&(x, _)| x <= h);
        let lat: Vec<usize> = by_header[from..to].iter().map(|&(_, u)| u).collect();
        loops.push(Loop {
            header: h,
            latches: lat,
            parent: None,
            depth: 0,
            function: cfg.blocks[h].function,
            blocks: 0,
            instructions: 0,
            start: u32::MAX,
            end: 0,
            exits: Vec::new(),
        });
        true_parent.push(None);
        match loop_of[h] {
            None => loop_of[h] = Some(li),
            Some(inner) => {
                // Cannot happen: a block of an earlier (inner) loop is
                // dominated by that loop's header, which comes later in RPO
                // than `h`. Nest defensively rather than panic.
                let t = top(&mut loops, inner);
                if t != li {
                    loops[t].parent = Some(li);
                    true_parent[t] = Some(li);
                }
            }
        }
        work.clear();
        work.extend(loops[li].latches.iter().copied());
        while let Some(x) = work.pop() {
            if !dom.reachable(x) {
                continue;
            }
            match loop_of[x] {
                None => {
                    loop_of[x] = Some(li);
                    if x != h {
                        work.extend(cfg.blocks[x].preds.intra().filter(|&p| dom.reachable(p)));
                    }
                }
                Some(l) => {
                    let t = top(&mut loops, l);
                    if t == li {
                        continue;
                    }
                    loops[t].parent = Some(li);
                    true_parent[t] = Some(li);
                    let sh = loops[t].header;
                    work.extend(cfg.blocks[sh].preds.intra().filter(|&p| dom.reachable(p)));
                }
            }
        }
    }
    for (l, p) in true_parent.iter().enumerate() {
        loops[l].parent = *p;
    }
    (loops, loop_of)
}

/// Aggregates: own blocks first, then children into parents (a parent
/// always has a larger index than its children); then the depths.
fn aggregate(cfg: &Cfg, loops: &mut [Loop], loop_of: &[Option<usize>]) {
    for (b, lo) in loop_of.iter().enumerate() {
        if let Some(l) = *lo {
            let blk = &cfg.blocks[b];
            let lp = &mut loops[l];
            lp.blocks += 1;
            lp.instructions += blk.len();
            lp.start = lp.start.min(blk.start);
            lp.end = lp.end.max(blk.last);
        }
    }
    for l in 0..loops.len() {
        if let Some(p) = loops[l].parent {
            let (b, i, s, e) = (
                loops[l].blocks,
                loops[l].instructions,
                loops[l].start,
                loops[l].end,
            );
            let pp = &mut loops[p];
            pp.blocks += b;
            pp.instructions += i;
            pp.start = pp.start.min(s);
            pp.end = pp.end.max(e);
        }
    }
    for l in (0..loops.len()).rev() {
        loops[l].depth = loops[l].parent.map(|p| loops[p].depth + 1).unwrap_or(1);
    }
}

/// Exits: for each edge b → s, every loop containing b but not s.
fn find_exits(cfg: &Cfg, loops: &mut [Loop], loop_of: &[Option<usize>]) {
    for b in 0..loop_of.len() {
        let Some(lb) = loop_of[b] else { continue };
        for s in cfg.blocks[b].succs.intra() {
            let mut x = Some(lb);
            let mut y = loop_of[s];
            let d = |l: Option<usize>| l.map(|l| loops[l].depth).unwrap_or(0);
            let mut exited = Vec::new();
            while d(x) > d(y) {
                let xl = x.unwrap();
                exited.push(xl);
                x = loops[xl].parent;
            }
            while d(y) > d(x) {
                y = loops[y.unwrap()].parent;
            }
            while x != y {
                let xl = x.unwrap();
                exited.push(xl);
                x = loops[xl].parent;
                y = loops[y.unwrap()].parent;
            }
            for l in exited {
                loops[l].exits.push((b, s));
            }
        }
    }
    for l in loops.iter_mut() {
        l.exits.sort_unstable();
        l.exits.dedup();
        // (kept with the report: a 1M-insn kernel can have ~83k loops)
        l.exits.shrink_to_fit();
    }
}

/// Groups retreating non-back edges by strongly connected component
/// (Tarjan, iterative) and describes each component.
fn irreducible_regions(
    cfg: &Cfg,
    dom: &Dominators,
    bad_edges: &[(usize, usize)],
) -> Vec<IrreducibleRegion> {
    if bad_edges.is_empty() {
        return Vec::new();
    }
    let nb = cfg.blocks.len();
    const UNSEEN: u32 = u32::MAX;
    let mut index = vec![UNSEEN; nb];
    let mut low = vec![0u32; nb];
    let mut on_stack = vec![false; nb];
    let mut comp = vec![u32::MAX; nb];
    let mut ncomp = 0u32;
    let mut stack: Vec<usize> = Vec::new();
    let mut next = 0u32;
    for &s in &dom.rpo {
        if index[s] != UNSEEN {
            continue;
        }
        let mut call: Vec<(usize, usize)> = vec![(s, 0)];
        index[s] = next;
        low[s] = next;
        next += 1;
        stack.push(s);
        on_stack[s] = true;
        while let Some(&mut (v, ref mut k)) = call.last_mut() {
            let succs: Vec<usize> = cfg.blocks[v].succs.intra().collect();
            if *k < succs.len() {
                let w = succs[*k];
                *k += 1;
                if index[w] == UNSEEN {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    call.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                call.pop();
                if let Some(&(p, _)) = call.last() {
                    low[p] = low[p].min(low[v]);
                }
                if low[v] == index[v] {
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        comp[w] = ncomp;
                        if w == v {
                            break;
                        }
                    }
                    ncomp += 1;
                }
            }
        }
    }

    let mut by_comp: std::collections::BTreeMap<u32, Vec<(usize, usize)>> = Default::default();
    for &(u, v) in bad_edges {
        by_comp.entry(comp[v]).or_default().push((u, v));
    }
    let is_entry: Vec<bool> = {
        let mut e = vec![false; nb];
        for f in &cfg.functions {
            e[f.entry_block] = true;
        }
        e
    };
    by_comp
        .into_iter()
        .map(|(c, mut edges)| {
            edges.sort_unstable();
            edges.dedup();
            let blocks: Vec<usize> = (0..nb).filter(|&b| comp[b] == c).collect();
            let entries = blocks
                .iter()
                .copied()
                .filter(|&b| is_entry[b] || cfg.blocks[b].preds.intra().any(|p| comp[p] != c))
                .collect();
            let instructions = blocks.iter().map(|&b| cfg.blocks[b].len()).sum();
            IrreducibleRegion {
                blocks,
                entries,
                retreating_edges: edges,
                instructions,
            }
        })
        .collect()
}
