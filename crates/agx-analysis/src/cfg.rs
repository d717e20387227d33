//! Control-flow graph of decoded AGX machine code.
//!
//! Blocks are split at branch/call targets and function entries, and after
//! every instruction whose [`Flow`] is not `Next` (branches, calls, `ret`,
//! `stop`, `trap`). Edges:
//!
//! * `jmp_exec_any` / `jmp_exec_none` (and the two other conditional jumps):
//!   [`EdgeKind::Taken`] to the target and [`EdgeKind::Fallthrough`].
//! * `call`: [`EdgeKind::Call`] to the helper when its target lies inside the
//!   code given, and [`EdgeKind::CallReturn`] to the next instruction.
//! * `ret`, `stop`, `trap`: no successor.
//!
//! The structured exec-mask ops (`if_*`, `else_*`, `while_*`, `push_exec`,
//! `pop_exec`) only change which lanes run (ISA reference, "Conditional
//! Execution": they "are the only known way to manipulate exec_mask"); they
//! do not split blocks. Their nesting is recorded per instruction, see
//! [`Cfg::exec_depth`].
//!
//! Robustness: empty input, branch targets outside the code or inside an
//! instruction (recorded in [`Cfg::unresolved`]), unsorted or overlapping
//! addresses (instructions are used in the order given; targets resolve to
//! the first instruction at that address), code without `stop` (the last
//! block simply has no successor).

use crate::facts::Facts;
use agx_isa::{ExecOp, Flow, Instruction};
use serde::Serialize;
use std::ops::Range;

/// Kind of a CFG edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// To the next instruction (no control transfer, or a branch not taken).
    Fallthrough,
    /// A taken branch.
    Taken,
    /// From a `call` to the called helper's entry.
    Call,
    /// From a `call` to the instruction after it (where `ret` comes back).
    CallReturn,
}

impl EdgeKind {
    /// Edges that stay inside one function (everything but `Call`).
    pub fn is_intra(self) -> bool {
        !matches!(self, EdgeKind::Call)
    }
}

/// A successor edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Edge {
    pub to: usize,
    pub kind: EdgeKind,
}

/// A block's successor or predecessor edges, read as a slice of [`Edge`].
///
/// A block has at most two successors and most have one or two
/// predecessors, so up to two edges live inline and only longer lists (a
/// join of many branches, a helper called from many sites) take a heap
/// block: a 1M-instruction kernel of small blocks has ~450k blocks, and
/// two `Vec`s each were ~900k allocations and ~70 bytes a block of heap.
#[derive(Clone, Default)]
pub struct Edges(EdgeStore);

#[derive(Clone)]
enum EdgeStore {
    Inline(u8, [Edge; 2]),
    Heap(Vec<Edge>),
}

impl Default for EdgeStore {
    fn default() -> Self {
        const NONE: Edge = Edge {
            to: 0,
            kind: EdgeKind::Fallthrough,
        };
        EdgeStore::Inline(0, [NONE; 2])
    }
}

impl Edges {
    /// Appends an edge.
    pub fn push(&mut self, e: Edge) {
        match &mut self.0 {
            EdgeStore::Inline(n, items) if (*n as usize) < items.len() => {
                items[*n as usize] = e;
                *n += 1;
            }
            EdgeStore::Inline(_, items) => {
                let mut v = Vec::with_capacity(4);
                v.extend_from_slice(items);
                v.push(e);
                self.0 = EdgeStore::Heap(v);
            }
            EdgeStore::Heap(v) => v.push(e),
        }
    }
    #[inline]
    pub fn as_slice(&self) -> &[Edge] {
        match &self.0 {
            EdgeStore::Inline(n, items) => &items[..*n as usize],
            EdgeStore::Heap(v) => v,
        }
    }
    /// The blocks at the other end of the intra-procedural edges (every
    /// edge but a `Call`).
    pub fn intra(&self) -> impl Iterator<Item = usize> + '_ {
        self.iter().filter(|e| e.kind.is_intra()).map(|e| e.to)
    }
    /// Frees a heap list's growth slack.
    fn shrink_to_fit(&mut self) {
        if let EdgeStore::Heap(v) = &mut self.0 {
            v.shrink_to_fit();
        }
    }
}

impl std::ops::Deref for Edges {
    type Target = [Edge];
    #[inline]
    fn deref(&self) -> &[Edge] {
        self.as_slice()
    }
}

impl<'a> IntoIterator for &'a Edges {
    type Item = &'a Edge;
    type IntoIter = std::slice::Iter<'a, Edge>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl From<Vec<Edge>> for Edges {
    fn from(v: Vec<Edge>) -> Edges {
        let mut e = Edges::default();
        for x in v {
            e.push(x);
        }
        e
    }
}

impl std::fmt::Debug for Edges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl Serialize for Edges {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize(s)
    }
}

/// How a block ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Terminator {
    /// Falls into the next block (split because the next is a target).
    Fallthrough,
    /// Conditional branch.
    Branch,
    /// Unconditional jump.
    Jump,
    Call,
    CallIndirect,
    Ret,
    Stop,
    Trap,
    /// Last instruction of the code, with no `stop`.
    End,
}

/// A basic block: instructions `insns` (indices into the input slice).
#[derive(Clone, Debug, Serialize)]
pub struct Block {
    pub insns: Range<usize>,
    /// Address of the first instruction.
    pub start: u32,
    /// Address of the last instruction.
    pub last: u32,
    pub succs: Edges,
    pub preds: Edges,
    pub term: Terminator,
    /// Function this block belongs to (index into [`Cfg::functions`]), or
    /// `None` when no function entry reaches it.
    pub function: Option<usize>,
}

impl Block {
    pub fn len(&self) -> usize {
        self.insns.len()
    }
    pub fn is_empty(&self) -> bool {
        self.insns.is_empty()
    }
}

/// A function: main (index 0) or a helper reached by `call` / given as an
/// extra code range.
#[derive(Clone, Debug, Serialize)]
pub struct Function {
    pub entry_block: usize,
    pub entry: u32,
    /// Blocks reachable from the entry by intra-procedural edges.
    pub blocks: usize,
    pub instructions: usize,
}

/// A `call` site.
#[derive(Clone, Debug, Serialize)]
pub struct CallSite {
    pub addr: u32,
    pub block: usize,
    /// Absolute target (`None` for a call through a register).
    pub target: Option<i64>,
    /// Entry block of the callee when the target is inside the code given.
    pub callee_block: Option<usize>,
}

/// A branch or call whose target is not the address of an instruction given.
#[derive(Clone, Debug, Serialize)]
pub struct Unresolved {
    pub addr: u32,
    pub target: i64,
}

/// One exec-mask stack instruction and the static nesting around it.
#[derive(Clone, Debug, Serialize)]
pub struct ExecEvent {
    pub index: usize,
    pub addr: u32,
    pub op: &'static str,
    /// The instruction's `n` immediate.
    pub n: u8,
    /// Nesting depth before / after the instruction (see [`Cfg::exec_depth`]).
    pub depth_before: u16,
    pub depth_after: u16,
}

/// Options for [`Cfg::build_with`].
#[derive(Clone, Debug, Default)]
pub struct CfgOptions {
    /// Entry address of main (default: the first instruction).
    pub entry: Option<u32>,
    /// Code ranges of helper functions included in the instructions given;
    /// each range's first instruction is a function entry.
    pub helpers: Vec<Range<u32>>,
}

/// The control-flow graph.
#[derive(Clone, Debug, Default)]
pub struct Cfg {
    pub blocks: Vec<Block>,
    /// Block of each instruction.
    pub block_of: Vec<u32>,
    /// Index 0 is main (if there is any code).
    pub functions: Vec<Function>,
    pub calls: Vec<CallSite>,
    pub unresolved: Vec<Unresolved>,
    /// Static exec-mask nesting depth in effect at each instruction, scanning
    /// each function in address order: `if_*`/`push_exec` `n` add `n`
    /// (always 1 in Mesa code, 1 or 2 in Apple's), `pop_exec n` subtracts
    /// `n` (floored at 0), `else_*` keeps the level, and `while_* n` (the
    /// loop condition: failing lanes get `r0l = n`, i.e. leave `n` levels)
    /// raises the depth to at least `n`. This balances to zero on every
    /// Mesa and Apple kernel of the corpus (e.g. Mesa `while 1 … pop 1`,
    /// Apple `push_exec 2 … while 2 … pop_exec 2`). Code at the head of a
    /// Mesa loop before its `while` is counted at the outer level.
    pub exec_depth: Vec<u16>,
    pub exec_events: Vec<ExecEvent>,
    /// Control-flow effect of each instruction.
    pub flows: Vec<Flow>,
    backward: usize,
}

/// Sorted (address, index) pairs for resolving targets.
struct AddrMap(Vec<(u32, u32)>);

impl AddrMap {
    fn new(addrs: &[u32]) -> AddrMap {
        let mut v: Vec<(u32, u32)> = addrs
            .iter()
            .enumerate()
            .map(|(i, &a)| (a, i as u32))
            .collect();
        // Stable: the first instruction given at an address wins.
        v.sort_by_key(|&(a, _)| a);
        v.dedup_by_key(|&mut (a, _)| a);
        AddrMap(v)
    }
    fn find(&self, target: i64) -> Option<usize> {
        if target < 0 || target > u32::MAX as i64 {
            return None;
        }
        let t = target as u32;
        self.0
            .binary_search_by_key(&t, |&(a, _)| a)
            .ok()
            .map(|k| self.0[k].1 as usize)
    }
}

fn exec_op_name(op: ExecOp) -> &'static str {
    match op {
        ExecOp::If => "if",
        ExecOp::Else => "else",
        ExecOp::While => "while",
        ExecOp::Pop(_) => "pop",
        ExecOp::Update => "update",
    }
}

impl Cfg {
    /// CFG of `insns` with main's entry at the first instruction.
    pub fn build(insns: &[Instruction]) -> Cfg {
        Cfg::build_with(insns, &CfgOptions::default())
    }

    pub fn build_with(insns: &[Instruction], opts: &CfgOptions) -> Cfg {
        let mut facts = crate::facts::scan(insns);
        Cfg::from_facts_taking_flows(&mut facts, opts)
    }

    /// CFG from the facts of one [`crate::facts::scan`].
    pub fn from_facts(facts: &Facts, opts: &CfgOptions) -> Cfg {
        Cfg::from_parts(facts, facts.flow.clone(), opts)
    }

    /// [`Cfg::from_facts`] that moves the facts' control-flow column into
    /// [`Cfg::flows`] rather than copying it (`facts.flow` is left empty:
    /// read `flows` from here on). 16 bytes an instruction fewer.
    pub fn from_facts_taking_flows(facts: &mut Facts, opts: &CfgOptions) -> Cfg {
        let flows = std::mem::take(&mut facts.flow);
        Cfg::from_parts(facts, flows, opts)
    }

    /// The CFG of `facts` with their control-flow column `flows`.
    fn from_parts(facts: &Facts, flows: Vec<Flow>, opts: &CfgOptions) -> Cfg {
        let n = facts.len();
        if n == 0 {
            return Cfg::default();
        }
        let addrs = &facts.addr;
        let map = AddrMap::new(addrs);

        // Function entries (instruction indices): main first.
        let main_entry = opts.entry.and_then(|a| map.find(a as i64)).unwrap_or(0);
        let mut entries: Vec<usize> = vec![main_entry];
        for r in &opts.helpers {
            if let Some(k) = map.find(r.start as i64) {
                entries.push(k);
            }
        }
        let (leader, target_of, unresolved) = leaders(&flows, addrs, &map, &mut entries);
        entries.sort_unstable();
        entries.dedup();
        // Keep main first.
        if let Some(p) = entries.iter().position(|&e| e == main_entry) {
            entries.remove(p);
        }
        entries.insert(0, main_entry);

        let (mut blocks, block_of) = split_blocks(&flows, addrs, &leader);
        let calls = link_edges(&mut blocks, &flows, addrs, &block_of, &target_of);
        let functions = assign_functions(&mut blocks, &entries, &block_of, addrs);
        let (exec_depth, mut exec_events) = exec_nesting(facts, &entries);

        let backward = flows
            .iter()
            .zip(addrs)
            .filter(|(f, &a)| match **f {
                Flow::BranchExec { target, .. } | Flow::Jump { target } => target <= a as i64,
                _ => false,
            })
            .count();

        // growth slack freed: the CFG lives as long as the report (a 1M-insn
        // kernel of small loops has ~170k blocks)
        blocks.shrink_to_fit();
        for b in &mut blocks {
            b.succs.shrink_to_fit();
            b.preds.shrink_to_fit();
        }
        exec_events.shrink_to_fit();
        Cfg {
            blocks,
            block_of,
            functions,
            calls,
            unresolved,
            exec_depth,
            exec_events,
            flows,
            backward,
        }
    }

    /// Number of edges.
    pub fn edge_count(&self) -> usize {
        self.blocks.iter().map(|b| b.succs.len()).sum()
    }

    /// Block indices not reached from any function entry.
    pub fn unreachable_blocks(&self) -> usize {
        self.blocks.iter().filter(|b| b.function.is_none()).count()
    }

    /// Mesa's `loops` stat as measured on machine code: the number of branch
    /// instructions whose target is at or before their own address (every
    /// NIR loop leaves one backward `jmp_exec_any`; `shared/corpus/mesa/
    /// README.md`, "Loops"). Calls are not branches and are not counted.
    pub fn backward_branches(&self) -> usize {
        self.backward
    }

    /// Maximum static exec-mask nesting depth.
    pub fn max_exec_depth(&self) -> u16 {
        self.exec_events
            .iter()
            .map(|e| e.depth_after.max(e.depth_before))
            .max()
            .unwrap_or(0)
    }

    /// Block containing the instruction at `addr`.
    pub fn block_at(&self, insns: &[Instruction], addr: u32) -> Option<usize> {
        insns
            .iter()
            .position(|i| i.addr == addr)
            .map(|k| self.block_of[k] as usize)
    }
}

// the target instruction of each branch or call (NO_TARGET: none);
// u32 (instruction indices fit: block_of is u32 too), not
// Option<usize> (16 bytes an instruction)
const NO_TARGET: u32 = u32::MAX;

/// Leaders: which instructions start a block (the first, each entry, each
/// branch or call target, each instruction after a control transfer).
/// Also the target instruction of each branch or call (`NO_TARGET`: none)
/// and the targets outside the code; call targets join `entries`.
fn leaders(
    flows: &[Flow],
    addrs: &[u32],
    map: &AddrMap,
    entries: &mut Vec<usize>,
) -> (Vec<bool>, Vec<u32>, Vec<Unresolved>) {
    let n = flows.len();
    let mut leader = vec![false; n];
    leader[0] = true;
    for &e in entries.iter() {
        leader[e] = true;
    }
    let mut target_of: Vec<u32> = vec![NO_TARGET; n];
    let mut unresolved = Vec::new();
    for (i, f) in flows.iter().enumerate() {
        let t = match *f {
            Flow::Next => continue,
            Flow::BranchExec { target, .. } | Flow::Jump { target } | Flow::Call { target } => {
                Some(target)
            }
            _ => None,
        };
        if i + 1 < n {
            leader[i + 1] = true;
        }
        if let Some(t) = t {
            match map.find(t) {
                Some(k) => {
                    leader[k] = true;
                    target_of[i] = k as u32;
                    if matches!(f, Flow::Call { .. }) {
                        entries.push(k);
                    }
                }
                None => unresolved.push(Unresolved {
                    addr: addrs[i],
                    target: t,
                }),
            }
        }
    }
    (leader, target_of, unresolved)
}

/// The blocks (no edges yet) between the leaders, and the block of each
/// instruction.
fn split_blocks(flows: &[Flow], addrs: &[u32], leader: &[bool]) -> (Vec<Block>, Vec<u32>) {
    let n = flows.len();
    let mut blocks: Vec<Block> = Vec::new();
    let mut block_of = vec![0u32; n];
    let mut s = 0;
    for i in 0..n {
        if i + 1 == n || leader[i + 1] {
            let term = match flows[i] {
                Flow::Next => {
                    if i + 1 == n {
                        Terminator::End
                    } else {
                        Terminator::Fallthrough
                    }
                }
                Flow::BranchExec { .. } => Terminator::Branch,
                Flow::Jump { .. } => Terminator::Jump,
                Flow::Call { .. } => Terminator::Call,
                Flow::CallIndirect => Terminator::CallIndirect,
                Flow::Ret => Terminator::Ret,
                Flow::Stop => Terminator::Stop,
                Flow::Trap => Terminator::Trap,
            };
            let b = blocks.len() as u32;
            for slot in &mut block_of[s..=i] {
                *slot = b;
            }
            blocks.push(Block {
                insns: s..i + 1,
                start: addrs[s],
                last: addrs[i],
                succs: Edges::default(),
                preds: Edges::default(),
                term,
                function: None,
            });
            s = i + 1;
        }
    }
    (blocks, block_of)
}

/// Edges: each block's successors from its last instruction's flow, then
/// the predecessors from them. Returns the call sites.
fn link_edges(
    blocks: &mut [Block],
    flows: &[Flow],
    addrs: &[u32],
    block_of: &[u32],
    target_of: &[u32],
) -> Vec<CallSite> {
    let n = flows.len();
    let mut calls = Vec::new();
    for (b, blk) in blocks.iter_mut().enumerate() {
        let last = blk.insns.end - 1;
        let next = (last + 1 < n).then(|| block_of[last + 1] as usize);
        let tgt =
            (target_of[last] != NO_TARGET).then(|| block_of[target_of[last] as usize] as usize);
        let mut succs = Edges::default();
        // an edge to `to` when there is a block there
        let mut edge = |to: Option<usize>, kind: EdgeKind| {
            if let Some(to) = to {
                succs.push(Edge { to, kind });
            }
        };
        match flows[last] {
            Flow::Next => edge(next, EdgeKind::Fallthrough),
            Flow::BranchExec { .. } => {
                edge(tgt, EdgeKind::Taken);
                edge(next, EdgeKind::Fallthrough);
            }
            Flow::Jump { .. } => edge(tgt, EdgeKind::Taken),
            Flow::Call { target } => {
                edge(tgt, EdgeKind::Call);
                edge(next, EdgeKind::CallReturn);
                calls.push(CallSite {
                    addr: addrs[last],
                    block: b,
                    target: Some(target),
                    callee_block: tgt,
                });
            }
            Flow::CallIndirect => {
                edge(next, EdgeKind::CallReturn);
                calls.push(CallSite {
                    addr: addrs[last],
                    block: b,
                    target: None,
                    callee_block: None,
                });
            }
            Flow::Ret | Flow::Stop | Flow::Trap => {}
        }
        blk.succs = succs;
    }
    for b in 0..blocks.len() {
        for k in 0..blocks[b].succs.len() {
            let e = blocks[b].succs[k];
            blocks[e.to].preds.push(Edge {
                to: b,
                kind: e.kind,
            });
        }
    }
    calls
}

/// Functions: intra-procedural reachability from each entry, in
/// order (main first; a block reachable from several keeps the first).
fn assign_functions(
    blocks: &mut [Block],
    entries: &[usize],
    block_of: &[u32],
    addrs: &[u32],
) -> Vec<Function> {
    let mut functions = Vec::new();
    let mut stack = Vec::new();
    for &e in entries {
        let eb = block_of[e] as usize;
        // A call into code already owned by an earlier function still
        // gets a Function record (sharing those blocks).
        let fi = functions.len();
        let mut nb = 0;
        let mut ni = 0;
        if blocks[eb].function.is_none() {
            blocks[eb].function = Some(fi);
            stack.push(eb);
        }
        while let Some(x) = stack.pop() {
            nb += 1;
            ni += blocks[x].len();
            for k in 0..blocks[x].succs.len() {
                let ed = blocks[x].succs[k];
                if ed.kind.is_intra() && blocks[ed.to].function.is_none() {
                    blocks[ed.to].function = Some(fi);
                    stack.push(ed.to);
                }
            }
        }
        functions.push(Function {
            entry_block: eb,
            entry: addrs[e],
            blocks: nb,
            instructions: ni,
        });
    }
    functions
}

/// Exec-mask nesting, in address (= list) order, reset at entries: the
/// depth before each instruction, and each exec op's change.
fn exec_nesting(facts: &Facts, entries: &[usize]) -> (Vec<u16>, Vec<ExecEvent>) {
    let n = facts.len();
    let addrs = &facts.addr;
    let mut exec_depth = vec![0u16; n];
    let mut exec_events = Vec::new();
    let mut is_entry = vec![false; n];
    for &e in entries {
        is_entry[e] = true;
    }
    let mut depth: u16 = 0;
    let mut ev = facts.exec.iter().peekable();
    for (i, slot) in exec_depth.iter_mut().enumerate() {
        if is_entry[i] {
            depth = 0;
        }
        *slot = depth;
        while let Some(&&(k, op, cnt)) = ev.peek() {
            if k != i {
                break;
            }
            ev.next();
            let before = depth;
            depth = match op {
                ExecOp::If => depth.saturating_add(cnt as u16),
                ExecOp::Pop(p) => depth.saturating_sub(p as u16),
                ExecOp::While => depth.max(cnt as u16),
                ExecOp::Else | ExecOp::Update => depth,
            };
            exec_events.push(ExecEvent {
                index: i,
                addr: addrs[i],
                op: exec_op_name(op),
                n: cnt,
                depth_before: before,
                depth_after: depth,
            });
        }
    }
    (exec_depth, exec_events)
}
