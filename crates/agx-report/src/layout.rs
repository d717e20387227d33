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
//! region, regions nest, and no two boxes overlap by construction.
//!
//! Edges are routed in channels, never through a box or a loop label:
//! an edge leaves its block straight down to the bottom of its layer, then
//! crosses the gap between two layers (no box lies there) or runs down a
//! dummy node's column; an edge leaving a loop is routed inside the loop to
//! its exit port (a dummy below the loop's last layer, on its bottom edge);
//! an edge entering a loop goes to its header (a natural loop's one entry)
//! straight down through the loop's top band, and the loop's label sits in
//! that band beside the header's column. Back edges run below their source's
//! layer to a lane on the right-hand side of their loop and up it.
//! [`Layout::crossings`] checks all of this on the geometry.

use agx_analysis::cfg::EdgeKind;
use agx_analysis::loops::LoopForest;
use agx_analysis::Cfg;
use std::collections::{HashMap, HashSet};

/// An edge by its two ends (the second absent for an edge leaving the graph).
type EdgeKey = (Item, Option<Item>);

/// Size of one basic-block box. The HTML view writes two lines of 11 px
/// monospace text 6 px inside it; 210 px holds 30 characters (advance
/// 6.62 px in DejaVu Sans Mono, the Linux fallback), the longest second
/// line of a block under 10,000 instructions and a million cycles
/// ("1234 insn · 123456 cy · 100.0%"); the browser geometry test
/// (tests/it/html_chromium.rs) checks that no block text leaves its box.
pub const BLOCK_W: f64 = 210.0;
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
/// A loop label's box inside its region's top band: left inset, top, height
/// (the HTML view sets 10 px text with its baseline [`LABEL_BASELINE`]
/// below the box's top), and the width of one character of that
/// monospace text (0.6 em, the advance of DejaVu Sans Mono / Menlo).
const LABEL_X: f64 = 8.0;
const LABEL_Y: f64 = 4.0;
const LABEL_H: f64 = 14.0;
pub const LABEL_BASELINE: f64 = 11.0;
pub const LABEL_CHAR_W: f64 = 6.0;
/// Clearance between a label and the header's entry line.
const LABEL_CLEAR: f64 = 6.0;

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
    /// Whether the segment `p`–`q` enters this rectangle's interior
    /// (shrunk by `inset`: touching the border is not crossing it);
    /// Liang–Barsky clipping.
    pub fn hit_by(&self, p: (f64, f64), q: (f64, f64), inset: f64) -> bool {
        let (x0, x1) = (self.x + inset, self.right() - inset);
        let (y0, y1) = (self.y + inset, self.bottom() - inset);
        if x0 >= x1 || y0 >= y1 {
            return false;
        }
        let (dx, dy) = (q.0 - p.0, q.1 - p.1);
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        for (pk, qk) in [
            (-dx, p.0 - x0),
            (dx, x1 - p.0),
            (-dy, p.1 - y0),
            (dy, y1 - p.1),
        ] {
            if pk == 0.0 {
                if qk <= 0.0 {
                    return false;
                }
            } else {
                let t = qk / pk;
                if pk < 0.0 {
                    t0 = t0.max(t);
                } else {
                    t1 = t1.min(t);
                }
            }
        }
        t0 < t1
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
    /// Box of each loop's label, in its region's top band (index = loop).
    pub labels: Vec<Rect>,
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

    /// Every place where the drawing is broken: an edge segment through a
    /// loop label or through a block box other than its two ends, a label
    /// over a block or another label, a label outside its region. Empty
    /// for every layout this module makes.
    pub fn crossings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for e in &self.edges {
            for (s, w) in e.points.windows(2).enumerate() {
                let (p, q) = (w[0], w[1]);
                for (l, r) in self.labels.iter().enumerate() {
                    if r.hit_by(p, q, 0.0) {
                        out.push(format!(
                            "edge {}->{} segment {s} crosses the label of loop {l}",
                            e.from, e.to
                        ));
                    }
                }
                for (b, r) in self.blocks.iter().enumerate() {
                    if b != e.from && b != e.to && r.hit_by(p, q, 0.5) {
                        out.push(format!(
                            "edge {}->{} segment {s} crosses block {b}",
                            e.from, e.to
                        ));
                    }
                }
            }
        }
        for (l, r) in self.labels.iter().enumerate() {
            for (b, br) in self.blocks.iter().enumerate() {
                if r.overlaps(br) {
                    out.push(format!("label of loop {l} overlaps block {b}"));
                }
            }
            for (m, o) in self.labels.iter().enumerate().skip(l + 1) {
                if r.overlaps(o) {
                    out.push(format!("labels of loops {l} and {m} overlap"));
                }
            }
            let lr = self.loops[l];
            if r.x < lr.x || r.right() > lr.right() || r.y < lr.y || r.bottom() > lr.bottom() {
                out.push(format!("label of loop {l} outside its region"));
            }
        }
        out
    }
}

/// An item of a region: a block or a child loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Item {
    Block(usize),
    Loop(usize),
}

/// Where an item's layer is, in its region's coordinates.
#[derive(Clone, Copy, Debug, Default)]
struct Band {
    layer: usize,
    /// Bottom of the layer (its tallest item's).
    bottom: f64,
    /// Middle of the gap below the layer / above it (channels free of
    /// boxes).
    below: f64,
    above: f64,
}

/// A region laid out in its own coordinates.
#[derive(Clone, Debug, Default)]
struct Placed {
    w: f64,
    h: f64,
    /// Item positions (top-left) relative to the region's origin.
    pos: HashMap<Item, (f64, f64)>,
    band: HashMap<Item, Band>,
    /// Dummy-node points of each item edge (`None`: to the exit port),
    /// relative.
    routes: HashMap<EdgeKey, Vec<(f64, f64)>>,
    /// x of the exit port on the region's bottom edge (a loop left by an
    /// edge).
    sink_x: Option<f64>,
    /// The label's box (a loop), relative.
    label: Rect,
}

struct Ctx<'a> {
    cfg: &'a Cfg,
    forest: &'a LoopForest,
    /// Width of each loop's label.
    label_w: Vec<f64>,
    /// Loop size once laid out.
    size: Vec<(f64, f64)>,
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

/// Lays out `cfg` with its loop forest, each loop's label `labels[l]`
/// characters wide (missing: none).
pub fn layout(cfg: &Cfg, forest: &LoopForest, labels: &[usize]) -> Layout {
    let nb = cfg.blocks.len();
    let nl = forest.loops.len();
    if nb == 0 {
        return Layout::default();
    }
    let mut ctx = Ctx {
        cfg,
        forest,
        label_w: (0..nl)
            .map(|l| labels.get(l).map_or(0.0, |&n| n as f64 * LABEL_CHAR_W))
            .collect(),
        size: vec![(0.0, 0.0); nl],
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
    let region_edges = region_edges(&ctx, nl);
    // inner loops first (the forest lists them before their parents)
    let mut placed: Vec<Placed> = Vec::with_capacity(nl + 1);
    let mut back: Vec<HashSet<(Item, Item)>> = Vec::with_capacity(nl + 1);
    for l in 0..=nl {
        let r = (l < nl).then_some(l);
        let (p, b) = place_region(&ctx, r, &children[l], &region_edges[l]);
        if l < nl {
            ctx.size[l] = (p.w, p.h);
        }
        placed.push(p);
        back.push(b);
    }
    let mut out = absolute(&ctx, &placed, nb);
    let origin: Vec<(f64, f64)> = (0..=nl)
        .map(|r| {
            if r == nl {
                (MARGIN, MARGIN)
            } else {
                (out.loops[r].x, out.loops[r].y)
            }
        })
        .collect();
    let g = Geometry {
        ctx: &ctx,
        placed: &placed,
        origin: &origin,
        back: &back,
        out: &out,
    };
    let mut lane_used: Vec<usize> = vec![0; nl + 1];
    let edges: Vec<EdgePath> = layout_edges(cfg)
        .filter_map(|(u, v, kind)| g.route(u, v, kind, &mut lane_used))
        .collect();
    out.edges = edges;
    out
}

/// The item edges of each region (index `nl` = the whole graph): the owner
/// of an edge is the innermost region holding both ends; an edge leaving
/// a loop is also an edge of that loop to its exit port (`None`).
fn region_edges(ctx: &Ctx<'_>, nl: usize) -> Vec<Vec<(Item, Option<Item>)>> {
    let forest = ctx.forest;
    let mut edges: Vec<Vec<(Item, Option<Item>)>> = vec![Vec::new(); nl + 1];
    let mut seen: HashSet<(usize, Item, Option<Item>)> = HashSet::new();
    for (u, v, _) in layout_edges(ctx.cfg) {
        let r = owner(forest, u, v);
        let ri = r.unwrap_or(nl);
        if let (Some(a), Some(b)) = (ctx.item_in(r, u), ctx.item_in(r, v)) {
            if a != b && seen.insert((ri, a, Some(b))) {
                edges[ri].push((a, Some(b)));
            }
        }
        let mut cur = forest.loop_of.get(u).copied().flatten();
        while let Some(l) = cur {
            if l == ri || r == Some(l) {
                break;
            }
            if let Some(c) = ctx.item_in(Some(l), u) {
                if seen.insert((l, c, None)) {
                    edges[l].push((c, None));
                }
            }
            cur = forest.loops[l].parent;
        }
    }
    edges
}

/// Absolute boxes of blocks, loops and labels, outer regions first.
fn absolute(ctx: &Ctx<'_>, placed: &[Placed], nb: usize) -> Layout {
    let nl = placed.len() - 1;
    let root = &placed[nl];
    let mut out = Layout {
        width: root.w + 2.0 * MARGIN,
        height: root.h + 2.0 * MARGIN,
        blocks: vec![Rect::default(); nb],
        loops: vec![Rect::default(); nl],
        labels: vec![Rect::default(); nl],
        edges: Vec::new(),
    };
    let mut stack: Vec<(usize, (f64, f64))> = vec![(nl, (MARGIN, MARGIN))];
    while let Some((r, o)) = stack.pop() {
        let p = &placed[r];
        if r < nl {
            let lb = p.label;
            out.labels[r] = Rect {
                x: o.0 + lb.x,
                y: o.1 + lb.y,
                ..lb
            };
        }
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
                    stack.push((l, (rect.x, rect.y)));
                }
            }
        }
    }
    out
}

/// What the edge router reads: the regions, their origins and back edges.
struct Geometry<'a> {
    ctx: &'a Ctx<'a>,
    placed: &'a [Placed],
    origin: &'a [(f64, f64)],
    back: &'a [HashSet<(Item, Item)>],
    out: &'a Layout,
}

impl Geometry<'_> {
    /// Region `r`'s route of item edge `key`, in absolute coordinates.
    fn route_points(&self, r: usize, key: (Item, Option<Item>)) -> Vec<(f64, f64)> {
        let o = self.origin[r];
        self.placed[r]
            .routes
            .get(&key)
            .map(|v| v.iter().map(|&(x, y)| (o.0 + x, o.1 + y)).collect())
            .unwrap_or_default()
    }

    /// The polyline of CFG edge `u -> v`.
    fn route(
        &self,
        u: usize,
        v: usize,
        kind: EdgeKind,
        lane_used: &mut [usize],
    ) -> Option<EdgePath> {
        let forest = self.ctx.forest;
        let nl = self.placed.len() - 1;
        let r = owner(forest, u, v);
        let ri = r.unwrap_or(nl);
        let (ru, rv) = (self.out.blocks[u], self.out.blocks[v]);
        let a = self.ctx.item_in(r, u)?;
        let b = self.ctx.item_in(r, v)?;
        let is_back = u == v || self.back[ri].contains(&(a, b));
        // a call stays a call even when it goes up (routed like a back edge)
        let style = match kind {
            EdgeKind::Call => EdgeStyle::Call,
            _ if is_back => EdgeStyle::Back,
            EdgeKind::Fallthrough => EdgeStyle::Fallthrough,
            EdgeKind::Taken => EdgeStyle::Taken,
            EdgeKind::CallReturn => EdgeStyle::CallReturn,
        };
        let mut pts = vec![(ru.cx(), ru.bottom())];
        let mut x = ru.cx();
        // out of the loops inside the owner, each through its exit port
        let mut cur = forest.loop_of.get(u).copied().flatten();
        while let Some(l) = cur.filter(|&l| Some(l) != r) {
            let c = self.ctx.item_in(Some(l), u)?;
            let pl = &self.placed[l];
            let o = self.origin[l];
            pts.push((x, o.1 + pl.band.get(&c)?.bottom));
            pts.extend(self.route_points(l, (c, None)));
            x = o.0 + pl.sink_x?;
            pts.push((x, o.1 + pl.h));
            cur = forest.loops[l].parent;
        }
        let pl = &self.placed[ri];
        let o = self.origin[ri];
        let band_a = *pl.band.get(&a)?;
        pts.push((x, o.1 + band_a.bottom));
        if is_back {
            // below the source's layer to the lane on the right, up it
            let k = lane_used[ri] as f64;
            lane_used[ri] += 1;
            let lane = o.0 + pl.w - BACK_LANE / 2.0 + (k % 3.0 - 1.0) * 5.0;
            let yb = o.1 + band_a.below;
            pts.push((x, yb));
            pts.push((lane, yb));
            let band_b = *pl.band.get(&b)?;
            if band_b.layer == 0 && ri < nl && matches!(b, Item::Block(_)) {
                // a loop's header: alone in its layer, entered from the right
                let y1 = rv.y + rv.h * 0.3;
                pts.push((lane, y1));
                pts.push((rv.right(), y1));
            } else {
                let ya = o.1 + band_b.above;
                pts.push((lane, ya));
                pts.push((rv.cx(), ya));
                pts.push((rv.cx(), rv.y));
            }
        } else {
            pts.extend(self.route_points(ri, (a, Some(b))));
            if let Item::Loop(l) = b {
                pts.push((rv.cx(), self.out.loops[l].y));
            }
            pts.push((rv.cx(), rv.y));
        }
        pts.dedup();
        Some(EdgePath {
            from: u,
            to: v,
            style,
            points: pts,
        })
    }
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

/// Node of a region's layered graph: an item, a dummy on a long edge, or
/// the exit port (`item` `None`).
#[derive(Clone, Copy, Debug)]
struct Node {
    item: Option<Item>,
    w: f64,
    h: f64,
    layer: usize,
}

/// The nodes of one region's layered graph and their links.
struct Layered {
    nodes: Vec<Node>,
    links: Vec<(usize, usize)>,
    /// Dummy nodes of each item edge (`None`: to the exit port).
    chains: Vec<(EdgeKey, Vec<usize>)>,
    nlayers: usize,
    /// The exit port's node.
    sink: Option<usize>,
}

/// Cycle breaking: DFS from node 0 (the head), then the rest in order; an
/// edge to a node on the DFS stack is a back edge. Returns the back edges
/// and a topological order of the rest.
fn break_cycles(succ: &[Vec<usize>]) -> (HashSet<(usize, usize)>, Vec<usize>) {
    let n = succ.len();
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
    (back_set, topo)
}

/// Longest-path layers of `items` over the forward edges `fwd`, the exit
/// port one layer below all of them, and dummy nodes on every long edge.
fn build_layers(
    ctx: &Ctx<'_>,
    items: &[Item],
    fwd: &[(usize, usize)],
    exits: &[usize],
    topo: &[usize],
) -> Layered {
    let n = items.len();
    let mut layer = vec![0usize; n];
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(i, j) in fwd {
        preds[j].push(i);
    }
    for &x in topo {
        layer[x] = preds[x].iter().map(|&p| layer[p] + 1).max().unwrap_or(0);
    }
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
    let sink = (!exits.is_empty()).then(|| {
        nodes.push(Node {
            item: None,
            w: DUMMY_W,
            h: 0.0,
            layer: layer.iter().max().map_or(0, |m| m + 1),
        });
        n
    });
    let mut links: Vec<(usize, usize)> = Vec::new();
    let mut chains = Vec::new();
    let ends = fwd
        .iter()
        .map(|&(i, j)| (i, j, Some(items[j])))
        .chain(exits.iter().filter_map(|&i| sink.map(|s| (i, s, None))));
    for (i, j, key) in ends {
        let mut prev = i;
        let mut chain = Vec::new();
        for l in nodes[i].layer + 1..nodes[j].layer {
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
        chains.push(((items[i], key), chain));
    }
    let nlayers = nodes.iter().map(|n| n.layer + 1).max().unwrap_or(0);
    Layered {
        nodes,
        links,
        chains,
        nlayers,
        sink,
    }
}

/// The order inside each layer: address order of the items, dummies after
/// them, then barycenter sweeps.
fn order_layers(g: &Layered, up: &[Vec<usize>], down: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let nlayers = g.nlayers;
    let mut layers: Vec<Vec<usize>> = vec![Vec::new(); nlayers];
    for (i, node) in g.nodes.iter().enumerate() {
        layers[node.layer].push(i);
    }
    let mut pos = vec![0.0f64; g.nodes.len()];
    for l in &layers {
        for (k, &x) in l.iter().enumerate() {
            pos[x] = k as f64;
        }
    }
    for round in 0..6 {
        let downward = round % 2 == 0;
        let order: Vec<usize> = if downward {
            (1..nlayers).collect()
        } else {
            (0..nlayers.saturating_sub(1)).rev().collect()
        };
        for l in order {
            let nb = if downward { up } else { down };
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
    layers
}

/// x centres: packed, then fitted to the neighbours' centres.
fn place_x(g: &Layered, layers: &[Vec<usize>], up: &[Vec<usize>], down: &[Vec<usize>]) -> Vec<f64> {
    let nodes = &g.nodes;
    let mut cx = vec![0.0f64; nodes.len()];
    for l in layers {
        let mut x = 0.0;
        for &i in l {
            cx[i] = x + nodes[i].w / 2.0;
            x += nodes[i].w + H_GAP;
        }
    }
    for round in 0..8 {
        let downward = round % 2 == 0;
        let order: Vec<usize> = if downward {
            (0..layers.len()).collect()
        } else {
            (0..layers.len()).rev().collect()
        };
        for l in order {
            let want: Vec<f64> = layers[l]
                .iter()
                .map(|&i| {
                    let ns = if downward { &up[i] } else { &down[i] };
                    let ns: Vec<usize> = if ns.is_empty() {
                        up[i].iter().chain(&down[i]).copied().collect()
                    } else {
                        ns.clone()
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
    cx
}

/// Lays out one region (`region` `None`: the whole graph) of `items` and
/// item edges `edges` (`None` target: out of the region); returns it and
/// the item edges set aside as back edges.
fn place_region(
    ctx: &Ctx<'_>,
    region: Option<usize>,
    items: &[Item],
    edges: &[(Item, Option<Item>)],
) -> (Placed, HashSet<(Item, Item)>) {
    // items in address order, the header first
    let mut items: Vec<Item> = items.to_vec();
    items.sort_by_key(|&it| (ctx.item_addr(it), matches!(it, Item::Block(_))));
    if let Some(l) = region {
        let h = Item::Block(ctx.forest.loops[l].header);
        if let Some(i) = items.iter().position(|&x| x == h) {
            let h = items.remove(i);
            items.insert(0, h);
        }
    }
    let n = items.len();
    let idx: HashMap<Item, usize> = items.iter().enumerate().map(|(i, &x)| (x, i)).collect();
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut exits: Vec<usize> = Vec::new();
    for &(a, b) in edges {
        match (idx.get(&a), b.map(|b| idx.get(&b))) {
            (Some(&i), Some(Some(&j))) => succ[i].push(j),
            (Some(&i), None) => exits.push(i),
            _ => {}
        }
    }
    let (back_set, topo) = break_cycles(&succ);
    let fwd: Vec<(usize, usize)> = (0..n)
        .flat_map(|i| succ[i].iter().map(move |&j| (i, j)))
        .filter(|e| !back_set.contains(e))
        .collect();
    let g = build_layers(ctx, &items, &fwd, &exits, &topo);
    let mut up: Vec<Vec<usize>> = vec![Vec::new(); g.nodes.len()];
    let mut down: Vec<Vec<usize>> = vec![Vec::new(); g.nodes.len()];
    for &(a, b) in &g.links {
        down[a].push(b);
        up[b].push(a);
    }
    let layers = order_layers(&g, &up, &down);
    let cx = place_x(&g, &layers, &up, &down);
    let mut placed = assemble(ctx, region, &g, &layers, &cx);
    for (key, chain) in &g.chains {
        if !chain.is_empty() {
            let pts = chain
                .iter()
                .flat_map(|&d| {
                    let x = cx[d] + placed.w_shift;
                    let (top, bottom) = placed.layer_y[g.nodes[d].layer];
                    [(x, top), (x, bottom)]
                })
                .collect();
            placed.p.routes.insert(*key, pts);
        }
    }
    let back = back_set
        .iter()
        .map(|&(i, j)| (items[i], items[j]))
        .collect();
    (placed.p, back)
}

/// A region's placement before its routes: the region, the x shift from
/// the fitted centres and each layer's (top, bottom).
struct Assembled {
    p: Placed,
    w_shift: f64,
    layer_y: Vec<(f64, f64)>,
}

/// Stacks the layers, shifts the centres to the region's padding, sizes
/// the region (wide enough for its label beside the header's entry line)
/// and records each item's position and layer band.
fn assemble(
    ctx: &Ctx<'_>,
    region: Option<usize>,
    g: &Layered,
    layers: &[Vec<usize>],
    cx: &[f64],
) -> Assembled {
    let is_loop = region.is_some();
    let nodes = &g.nodes;
    let top = if is_loop { PAD_TOP } else { 0.0 };
    let mut layer_y: Vec<(f64, f64)> = Vec::with_capacity(layers.len());
    let mut y = top;
    for l in layers {
        let h = l.iter().map(|&x| nodes[x].h).fold(0.0, f64::max);
        layer_y.push((y, y + h));
        y += h + V_GAP;
    }
    // the exit port lies on the bottom edge; else a padding below
    let height = match g.sink {
        Some(s) => layer_y[nodes[s].layer].0,
        None => (y - V_GAP).max(top) + PAD,
    };
    let min_x = (0..nodes.len())
        .map(|i| cx[i] - nodes[i].w / 2.0)
        .fold(f64::INFINITY, f64::min);
    let max_x = (0..nodes.len())
        .map(|i| cx[i] + nodes[i].w / 2.0)
        .fold(f64::NEG_INFINITY, f64::max);
    let left = if is_loop { PAD } else { 0.0 };
    let shift = left - min_x;
    let mut p = Placed {
        w: (max_x - min_x) + left + BACK_LANE + if is_loop { PAD } else { 0.0 },
        h: height,
        sink_x: g.sink.map(|s| cx[s] + shift),
        ..Default::default()
    };
    for (i, node) in nodes.iter().enumerate() {
        let Some(it) = node.item else { continue };
        let l = node.layer;
        let (lt, lb) = layer_y[l];
        let next = layer_y.get(l + 1).map_or(height, |t| t.0);
        let prev = if l == 0 {
            lt - if is_loop { PAD_TOP / 2.0 } else { MARGIN }
        } else {
            layer_y[l - 1].1
        };
        p.pos.insert(it, (cx[i] + shift - node.w / 2.0, lt));
        p.band.insert(
            it,
            Band {
                layer: l,
                bottom: lb,
                below: (lb + next) / 2.0,
                above: (prev + lt) / 2.0,
            },
        );
    }
    if let Some(l) = region {
        // the label in the top band, clear of the header's entry line
        let lw = ctx.label_w[l];
        let hx = cx[0] + shift;
        let x = if LABEL_X + lw + LABEL_CLEAR <= hx {
            LABEL_X
        } else {
            hx + LABEL_CLEAR
        };
        p.w = p.w.max(x + lw + PAD);
        p.label = Rect {
            x,
            y: LABEL_Y,
            w: lw,
            h: LABEL_H,
        };
    }
    Assembled {
        p,
        w_shift: shift,
        layer_y,
    }
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
    fn hit_by_is_interior_crossing() {
        let r = Rect {
            x: 0.0,
            y: 0.0,
            w: 10.0,
            h: 10.0,
        };
        assert!(r.hit_by((-5.0, 5.0), (15.0, 5.0), 0.5));
        assert!(r.hit_by((-5.0, -5.0), (15.0, 15.0), 0.5));
        // along the border, beside it, ending at it
        assert!(!r.hit_by((0.0, -5.0), (0.0, 15.0), 0.5));
        assert!(!r.hit_by((11.0, -5.0), (11.0, 15.0), 0.5));
        assert!(!r.hit_by((5.0, -5.0), (5.0, 0.0), 0.5));
    }
}
