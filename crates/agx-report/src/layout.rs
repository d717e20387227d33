//! A compact layered (Sugiyama-style) layout of a profile's control-flow
//! graph, shared by the HTML view.
//!
//! Loops are laid out as compound nodes, innermost first: inside a loop its
//! own blocks and its child loops (each already laid out, as one box) are
//! layered by longest path from the header with the loop's back edges set
//! aside; long edges get dummy nodes; the order inside each layer comes from
//! barycenter sweeps; x positions are the least-squares fit to the
//! neighbours' centres under the order and spacing constraints (isotonic
//! regression, pool-adjacent-violators). The laid-out loop then becomes one
//! box of its parent. So a loop's blocks always stay inside its own shaded
//! region, regions nest, and no two boxes overlap by construction. Back
//! edges run up a lane on the right-hand side of their loop.

use agx_analysis::cfg::EdgeKind;
use agx_analysis::loops::LoopForest;
use agx_analysis::Cfg;
use std::collections::{HashMap, HashSet};

/// Size of one basic-block box.
pub const BLOCK_W: f64 = 184.0;
pub const BLOCK_H: f64 = 40.0;
const H_GAP: f64 = 24.0;
const V_GAP: f64 = 34.0;
const DUMMY_W: f64 = 8.0;
/// Padding inside a loop region (the top one holds the region's label).
const PAD: f64 = 12.0;
const PAD_TOP: f64 = 26.0;
/// Lane for back edges on the right of a region.
const BACK_LANE: f64 = 22.0;
const MARGIN: f64 = 10.0;

/// A rectangle, absolute coordinates.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    pub fn cx(&self) -> f64 {
        self.x + self.w / 2.0
    }
    pub fn bottom(&self) -> f64 {
        self.y + self.h
    }
    pub fn right(&self) -> f64 {
        self.x + self.w
    }
    fn overlaps(&self, o: &Rect) -> bool {
        self.x < o.right() && o.x < self.right() && self.y < o.bottom() && o.y < self.bottom()
    }
}

/// How an edge is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeStyle {
    Fallthrough,
    Taken,
    /// A retreating edge (loop back edge), drawn up the lane on the right
    /// of its loop.
    Back,
    Call,
    CallReturn,
}

impl EdgeStyle {
    pub fn name(self) -> &'static str {
        match self {
            EdgeStyle::Fallthrough => "fallthrough",
            EdgeStyle::Taken => "taken",
            EdgeStyle::Back => "back",
            EdgeStyle::Call => "call",
            EdgeStyle::CallReturn => "call-return",
        }
    }
}

/// One drawn edge: CFG block indices and a polyline.
#[derive(Clone, Debug)]
pub struct EdgePath {
    pub from: usize,
    pub to: usize,
    pub style: EdgeStyle,
    pub points: Vec<(f64, f64)>,
}

/// A laid-out CFG.
#[derive(Clone, Debug, Default)]
pub struct Layout {
    pub width: f64,
    pub height: f64,
    /// Box of each basic block (index = `cfg.blocks` index).
    pub blocks: Vec<Rect>,
    /// Region of each loop (index = `LoopForest::loops` index).
    pub loops: Vec<Rect>,
    pub edges: Vec<EdgePath>,
}

impl Layout {
    /// Whether any two block boxes overlap (they never should).
    pub fn has_overlaps(&self) -> bool {
        let mut v: Vec<&Rect> = self.blocks.iter().collect();
        v.sort_by(|a, b| a.y.total_cmp(&b.y));
        for i in 0..v.len() {
            for j in i + 1..v.len() {
                if v[j].y >= v[i].bottom() {
                    break;
                }
                if v[i].overlaps(v[j]) {
                    return true;
                }
            }
        }
        false
    }
}

/// An item of a region: a block or a child loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Item {
    Block(usize),
    Loop(usize),
}

/// A region laid out in its own coordinates.
#[derive(Clone, Debug, Default)]
struct Placed {
    w: f64,
    h: f64,
    /// Item positions (top-left) relative to the region's origin.
    pos: HashMap<Item, (f64, f64)>,
    /// Dummy-node centres of each item edge, relative.
    routes: HashMap<(Item, Item), Vec<(f64, f64)>>,
}

struct Ctx<'a> {
    cfg: &'a Cfg,
    forest: &'a LoopForest,
    /// Loop size once laid out.
    size: Vec<(f64, f64)>,
    placed: Vec<Placed>,
}

impl Ctx<'_> {
    /// The item standing for block `b` among the children of `region`
    /// (`None` = the whole graph), or `None` when `b` is not inside it.
    fn item_in(&self, region: Option<usize>, b: usize) -> Option<Item> {
        let mut cur = self.forest.loop_of.get(b).copied().flatten();
        if cur == region {
            return Some(Item::Block(b));
        }
        while let Some(l) = cur {
            let p = self.forest.loops[l].parent;
            if p == region {
                return Some(Item::Loop(l));
            }
            cur = p;
        }
        None
    }

    fn item_size(&self, it: Item) -> (f64, f64) {
        match it {
            Item::Block(_) => (BLOCK_W, BLOCK_H),
            Item::Loop(l) => self.size[l],
        }
    }

    fn item_addr(&self, it: Item) -> u32 {
        match it {
            Item::Block(b) => self.cfg.blocks[b].start,
            Item::Loop(l) => self.forest.loops[l].start,
        }
    }
}

/// Every CFG edge (a call to a helper in the same code places the helper
/// below the call; a call that goes up is set aside like a back edge).
fn layout_edges(cfg: &Cfg) -> impl Iterator<Item = (usize, usize, EdgeKind)> + '_ {
    cfg.blocks
        .iter()
        .enumerate()
        .flat_map(|(u, b)| b.succs.iter().map(move |e| (u, e.to, e.kind)))
}

/// Lays out `cfg` with its loop forest.
pub fn layout(cfg: &Cfg, forest: &LoopForest) -> Layout {
    let nb = cfg.blocks.len();
    let nl = forest.loops.len();
    if nb == 0 {
        return Layout::default();
    }
    let mut ctx = Ctx {
        cfg,
        forest,
        size: vec![(0.0, 0.0); nl],
        placed: vec![Placed::default(); nl],
    };
    // children of each region (index nl = the whole graph)
    let mut children: Vec<Vec<Item>> = vec![Vec::new(); nl + 1];
    for b in 0..nb {
        let r = forest.loop_of.get(b).copied().flatten().unwrap_or(nl);
        children[r].push(Item::Block(b));
    }
    for (l, lp) in forest.loops.iter().enumerate() {
        children[lp.parent.unwrap_or(nl)].push(Item::Loop(l));
    }
    // item edges of each region: the owner is the innermost region holding
    // both ends
    let mut region_edges: Vec<Vec<(Item, Item)>> = vec![Vec::new(); nl + 1];
    let mut seen: HashSet<(usize, Item, Item)> = HashSet::new();
    for (u, v, _) in layout_edges(cfg) {
        let r = owner(forest, u, v);
        let ri = r.unwrap_or(nl);
        if let (Some(a), Some(b)) = (ctx.item_in(r, u), ctx.item_in(r, v)) {
            if a != b && seen.insert((ri, a, b)) {
                region_edges[ri].push((a, b));
            }
        }
    }
    // inner loops first (the forest lists them before their parents)
    let mut back: Vec<HashSet<(Item, Item)>> = vec![HashSet::new(); nl + 1];
    for l in 0..nl {
        let head = Item::Block(forest.loops[l].header);
        let (p, b) = place_region(&ctx, &children[l], &region_edges[l], Some(head), true);
        ctx.size[l] = (p.w, p.h);
        ctx.placed[l] = p;
        back[l] = b;
    }
    let (root, root_back) = place_region(&ctx, &children[nl], &region_edges[nl], None, false);
    back[nl] = root_back;

    // absolute positions
    let mut out = Layout {
        width: root.w + 2.0 * MARGIN,
        height: root.h + 2.0 * MARGIN,
        blocks: vec![Rect::default(); nb],
        loops: vec![Rect::default(); nl],
        edges: Vec::new(),
    };
    let mut origin: Vec<(f64, f64)> = vec![(0.0, 0.0); nl + 1];
    origin[nl] = (MARGIN, MARGIN);
    // outer loops first: reverse of the forest order
    let mut stack: Vec<(usize, (f64, f64))> = vec![(nl, (MARGIN, MARGIN))];
    while let Some((r, o)) = stack.pop() {
        let p = if r == nl { &root } else { &ctx.placed[r] };
        for (it, &(x, y)) in &p.pos {
            let (w, h) = ctx.item_size(*it);
            let rect = Rect {
                x: o.0 + x,
                y: o.1 + y,
                w,
                h,
            };
            match *it {
                Item::Block(b) => out.blocks[b] = rect,
                Item::Loop(l) => {
                    out.loops[l] = rect;
                    origin[l] = (rect.x, rect.y);
                    stack.push((l, (rect.x, rect.y)));
                }
            }
        }
    }

    // edges
    let mut lane_used: Vec<usize> = vec![0; nl + 1];
    for (u, v, kind) in layout_edges(cfg) {
        let r = owner(forest, u, v);
        let ri = r.unwrap_or(nl);
        let (ru, rv) = (out.blocks[u], out.blocks[v]);
        let (Some(a), Some(b)) = (ctx.item_in(r, u), ctx.item_in(r, v)) else {
            continue;
        };
        let is_back = u == v || back[ri].contains(&(a, b));
        // a call stays a call even when it goes up (routed like a back edge)
        let style = match kind {
            EdgeKind::Call => EdgeStyle::Call,
            _ if is_back => EdgeStyle::Back,
            EdgeKind::Fallthrough => EdgeStyle::Fallthrough,
            EdgeKind::Taken => EdgeStyle::Taken,
            EdgeKind::CallReturn => EdgeStyle::CallReturn,
        };
        let points = if is_back {
            // up the lane on the right of the owning region
            let right = if ri == nl {
                out.width - MARGIN
            } else {
                out.loops[ri].right()
            };
            let k = lane_used[ri] as f64;
            lane_used[ri] += 1;
            let lane = right - BACK_LANE / 2.0 + (k % 3.0 - 1.0) * 5.0;
            let y0 = ru.y + ru.h * 0.7;
            let y1 = rv.y + rv.h * 0.3;
            vec![(ru.right(), y0), (lane, y0), (lane, y1), (rv.right(), y1)]
        } else {
            let o = origin[ri];
            let mut pts = vec![(ru.cx(), ru.bottom())];
            if let Item::Loop(l) = a {
                // leave the loop's region straight down
                pts.push((ru.cx(), out.loops[l].bottom()));
            }
            let p = if ri == nl { &root } else { &ctx.placed[ri] };
            if let Some(route) = p.routes.get(&(a, b)) {
                pts.extend(route.iter().map(|&(x, y)| (o.0 + x, o.1 + y)));
            }
            if let Item::Loop(l) = b {
                pts.push((rv.cx(), out.loops[l].y));
            }
            pts.push((rv.cx(), rv.y));
            pts
        };
        out.edges.push(EdgePath {
            from: u,
            to: v,
            style,
            points,
        });
    }
    out
}

/// Innermost loop containing both blocks (`None` = the whole graph).
fn owner(forest: &LoopForest, u: usize, v: usize) -> Option<usize> {
    let mut cur = forest.loop_of.get(u).copied().flatten();
    while let Some(l) = cur {
        if forest.contains(l, v) {
            return Some(l);
        }
        cur = forest.loops[l].parent;
    }
    None
}

/// Node of a region's layered graph: an item or a dummy on a long edge.
#[derive(Clone, Copy, Debug)]
struct Node {
    item: Option<Item>,
    w: f64,
    h: f64,
    layer: usize,
}

/// Lays out one region; returns it and the item edges set aside as back
/// edges.
fn place_region(
    ctx: &Ctx<'_>,
    items: &[Item],
    edges: &[(Item, Item)],
    head: Option<Item>,
    is_loop: bool,
) -> (Placed, HashSet<(Item, Item)>) {
    // items in address order
    let mut items: Vec<Item> = items.to_vec();
    items.sort_by_key(|&it| (ctx.item_addr(it), matches!(it, Item::Block(_))));
    if let Some(h) = head {
        if let Some(i) = items.iter().position(|&x| x == h) {
            let h = items.remove(i);
            items.insert(0, h);
        }
    }
    let n = items.len();
    let idx: HashMap<Item, usize> = items.iter().enumerate().map(|(i, &x)| (x, i)).collect();
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in edges {
        if let (Some(&i), Some(&j)) = (idx.get(&a), idx.get(&b)) {
            succ[i].push(j);
        }
    }
    // cycle breaking: DFS from the head, then the rest in address order;
    // an edge to a node on the DFS stack is a back edge
    let mut state = vec![0u8; n]; // 0 new, 1 on stack, 2 done
    let mut back_set: HashSet<(usize, usize)> = HashSet::new();
    let mut topo: Vec<usize> = Vec::with_capacity(n);
    for s in 0..n {
        if state[s] != 0 {
            continue;
        }
        let mut st: Vec<(usize, usize)> = vec![(s, 0)];
        state[s] = 1;
        while let Some(&mut (x, ref mut k)) = st.last_mut() {
            if *k < succ[x].len() {
                let y = succ[x][*k];
                *k += 1;
                match state[y] {
                    0 => {
                        state[y] = 1;
                        st.push((y, 0));
                    }
                    1 => {
                        back_set.insert((x, y));
                    }
                    _ => {}
                }
            } else {
                state[x] = 2;
                topo.push(x);
                st.pop();
            }
        }
    }
    topo.reverse();
    let fwd: Vec<(usize, usize)> = (0..n)
        .flat_map(|i| succ[i].iter().map(move |&j| (i, j)))
        .filter(|e| !back_set.contains(e))
        .collect();
    // longest-path layering
    let mut layer = vec![0usize; n];
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(i, j) in &fwd {
        preds[j].push(i);
    }
    for &x in &topo {
        layer[x] = preds[x].iter().map(|&p| layer[p] + 1).max().unwrap_or(0);
    }
    // nodes and dummies
    let mut nodes: Vec<Node> = items
        .iter()
        .zip(&layer)
        .map(|(&it, &l)| {
            let (w, h) = ctx.item_size(it);
            Node {
                item: Some(it),
                w,
                h,
                layer: l,
            }
        })
        .collect();
    let mut links: Vec<(usize, usize)> = Vec::new();
    let mut chains: Vec<((Item, Item), Vec<usize>)> = Vec::new();
    for &(i, j) in &fwd {
        let mut prev = i;
        let mut chain = Vec::new();
        for l in layer[i] + 1..layer[j] {
            nodes.push(Node {
                item: None,
                w: DUMMY_W,
                h: 0.0,
                layer: l,
            });
            let d = nodes.len() - 1;
            links.push((prev, d));
            chain.push(d);
            prev = d;
        }
        links.push((prev, j));
        chains.push(((items[i], items[j]), chain));
    }
    let nlayers = nodes.iter().map(|n| n.layer + 1).max().unwrap_or(0);
    let mut layers: Vec<Vec<usize>> = vec![Vec::new(); nlayers];
    // initial order: address order of items, dummies after their source
    for i in 0..nodes.len() {
        layers[nodes[i].layer].push(i);
    }
    let mut up: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    let mut down: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for &(a, b) in &links {
        down[a].push(b);
        up[b].push(a);
    }
    // barycenter sweeps
    let mut pos = vec![0.0f64; nodes.len()];
    let set_pos = |layers: &Vec<Vec<usize>>, pos: &mut Vec<f64>| {
        for l in layers {
            for (k, &x) in l.iter().enumerate() {
                pos[x] = k as f64;
            }
        }
    };
    set_pos(&layers, &mut pos);
    for round in 0..6 {
        let downward = round % 2 == 0;
        let order: Vec<usize> = if downward {
            (1..nlayers).collect()
        } else {
            (0..nlayers.saturating_sub(1)).rev().collect()
        };
        for l in order {
            let nb = if downward { &up } else { &down };
            let mut keyed: Vec<(f64, usize)> = layers[l]
                .iter()
                .map(|&x| {
                    let ns = &nb[x];
                    let key = if ns.is_empty() {
                        pos[x]
                    } else {
                        ns.iter().map(|&y| pos[y]).sum::<f64>() / ns.len() as f64
                    };
                    (key, x)
                })
                .collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
            layers[l] = keyed.into_iter().map(|(_, x)| x).collect();
            for (k, &x) in layers[l].iter().enumerate() {
                pos[x] = k as f64;
            }
        }
    }
    // y: layers stacked, each as tall as its tallest node
    let top = if is_loop { PAD_TOP } else { 0.0 };
    let mut ly = vec![0.0f64; nlayers];
    let mut y = top;
    for l in 0..nlayers {
        ly[l] = y;
        let h = layers[l].iter().map(|&x| nodes[x].h).fold(0.0, f64::max);
        y += h + V_GAP;
    }
    let height = (y - V_GAP).max(top) + if is_loop { PAD } else { 0.0 };
    // x: centres; start packed, then fit to neighbours' centres
    let mut cx = vec![0.0f64; nodes.len()];
    for l in &layers {
        let mut x = 0.0;
        for &i in l {
            cx[i] = x + nodes[i].w / 2.0;
            x += nodes[i].w + H_GAP;
        }
    }
    for round in 0..8 {
        let downward = round % 2 == 0;
        let order: Vec<usize> = if downward {
            (0..nlayers).collect()
        } else {
            (0..nlayers).rev().collect()
        };
        for l in order {
            let want: Vec<f64> = layers[l]
                .iter()
                .map(|&i| {
                    let ns: Vec<usize> = if downward {
                        up[i].clone()
                    } else {
                        down[i].clone()
                    };
                    let ns = if ns.is_empty() {
                        up[i].iter().chain(&down[i]).copied().collect()
                    } else {
                        ns
                    };
                    if ns.is_empty() {
                        cx[i]
                    } else {
                        ns.iter().map(|&j| cx[j]).sum::<f64>() / ns.len() as f64
                    }
                })
                .collect();
            let widths: Vec<f64> = layers[l].iter().map(|&i| nodes[i].w).collect();
            let got = fit_row(&want, &widths, H_GAP);
            for (k, &i) in layers[l].iter().enumerate() {
                cx[i] = got[k];
            }
        }
    }
    let min_x = (0..nodes.len())
        .map(|i| cx[i] - nodes[i].w / 2.0)
        .fold(f64::INFINITY, f64::min);
    let max_x = (0..nodes.len())
        .map(|i| cx[i] + nodes[i].w / 2.0)
        .fold(f64::NEG_INFINITY, f64::max);
    let left = if is_loop { PAD } else { 0.0 };
    let shift = left - min_x;
    let mut placed = Placed {
        w: (max_x - min_x) + left + BACK_LANE + if is_loop { PAD } else { 0.0 },
        h: height,
        ..Default::default()
    };
    for (i, node) in nodes.iter().enumerate() {
        if let Some(it) = node.item {
            placed
                .pos
                .insert(it, (cx[i] + shift - node.w / 2.0, ly[node.layer]));
        }
    }
    for (key, chain) in chains {
        if chain.is_empty() {
            continue;
        }
        let mut pts = Vec::new();
        for d in chain {
            let x = cx[d] + shift;
            let l = nodes[d].layer;
            let lh = layers[l].iter().map(|&x| nodes[x].h).fold(0.0, f64::max);
            pts.push((x, ly[l]));
            pts.push((x, ly[l] + lh));
        }
        placed.routes.insert(key, pts);
    }
    let back = back_set
        .iter()
        .map(|&(i, j)| (items[i], items[j]))
        .collect();
    (placed, back)
}

/// Centres for a row of boxes of `widths`, in this order, at least `gap`
/// apart, as close as possible (least squares) to `want`: with
/// `y_i = x_i - offset_i` the constraints become `y` non-decreasing, which
/// pool-adjacent-violators solves exactly.
fn fit_row(want: &[f64], widths: &[f64], gap: f64) -> Vec<f64> {
    let n = want.len();
    let mut offset = vec![0.0; n];
    for i in 1..n {
        offset[i] = offset[i - 1] + (widths[i - 1] + widths[i]) / 2.0 + gap;
    }
    // blocks of (sum, count)
    let mut blocks: Vec<(f64, usize)> = Vec::with_capacity(n);
    for i in 0..n {
        blocks.push((want[i] - offset[i], 1));
        while blocks.len() > 1 {
            let (s1, c1) = blocks[blocks.len() - 1];
            let (s0, c0) = blocks[blocks.len() - 2];
            if s0 / c0 as f64 > s1 / c1 as f64 {
                blocks.pop();
                let last = blocks.len() - 1;
                blocks[last] = (s0 + s1, c0 + c1);
            } else {
                break;
            }
        }
    }
    let mut out = Vec::with_capacity(n);
    for (s, c) in blocks {
        let v = s / c as f64;
        for _ in 0..c {
            let i = out.len();
            out.push(v + offset[i]);
        }
    }
    out
}

/// Fill colour for a block with `t` (0..1) of the hottest block's cycles:
/// pale yellow to deep red. Shared by the HTML and Graphviz views.
pub fn heat_color(t: f64) -> String {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let lerp = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    format!(
        "#{:02x}{:02x}{:02x}",
        lerp(255.0, 222.0),
        lerp(250.0, 45.0),
        lerp(230.0, 38.0)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_row_keeps_order_and_gap() {
        let got = fit_row(&[0.0, 0.0, 0.0], &[10.0, 10.0, 10.0], 2.0);
        assert!((got[1] - got[0] - 12.0).abs() < 1e-9);
        assert!((got[2] - got[1] - 12.0).abs() < 1e-9);
        // centred on the wanted point
        assert!((got[1]).abs() < 1e-9);
        let free = fit_row(&[0.0, 100.0], &[10.0, 10.0], 2.0);
        assert_eq!(free, vec![0.0, 100.0]);
    }

    #[test]
    fn heat_color_ends() {
        assert_eq!(heat_color(0.0), "#fffae6");
        assert_eq!(heat_color(1.0), "#de2d26");
        assert_eq!(heat_color(f64::NAN), "#fffae6");
    }
}
