//! Address analysis (issue 27 item 1): for every memory instruction, its
//! address as a polynomial of degree at most two in symbols (thread position
//! in the threadgroup x/y/z, linear thread index, lane, the iteration
//! counter of each loop, uniform registers, uniform values the analysis does
//! not follow, per-lane loaded data), or unknown with the reason. A forward
//! pass of its own over the shared dataflow framework ([`crate::dataflow`]).
//!
//! # Values
//!
//! Each GPR half holds a [`Val`]: a polynomial ([`Poly`]) with the exec-mask
//! depth it was written at, or unknown. `get_sr` gives symbols:
//! `thread_position_in_grid.d` is `thread_position_in_threadgroup.d` plus a
//! uniform (the threadgroup's origin), the threadgroup position, SIMD-group
//! index and dispatch sizes are uniform symbols; a uniform register `uN` is
//! its own symbol. `mov_imm`, `mov`, `iadd`/`isub` (with the `lsl n` shift of
//! the second source), `imadd` (`a*b + (c << n)`) and `bfi d, 0, b, n`
//! (`b << n`) are followed exactly (addresses are assumed not to wrap).
//! Anything else writes a uniform opaque symbol when every source is
//! uniform, per-lane data (`Data`) for a load, or unknown.
//!
//! # Loops
//!
//! At a loop header the value arriving along a back edge is compared with
//! the header's: a register that grows by a loop-invariant amount `D` each
//! iteration (`x = x0 + D*K`, `K` the loop's iteration counter, the same for
//! every lane running the loop) is an induction variable; any other change
//! makes it an opaque symbol of the header (uniform if both sides are).
//! Values carrying `K` are unknown once they leave the loop.
//!
//! # Exec masks (soundness)
//!
//! A write under an exec mask reaches only the running lanes. The pass keeps
//! the nesting depth (`if`/`push` add levels, `pop` removes them, `while n`
//! may raise it to `n`) and each value's write depth; whenever lanes waiting
//! at level `k` can come back (`pop` to below `k`, `else`, a `while` that
//! reactivates levels above its own), every value written at depth `>= k` is
//! unknown ("mixed"), as it is not the value the returning lanes hold. An
//! `r0l` write the model does not follow, or a call, makes everything unknown
//! from there on. Unknown is always allowed; a wrong pattern never is.

use crate::cfg::{Cfg, Edge};
use crate::dataflow::{self, is_back, Forward};
use crate::facts::Facts;
use crate::loops::LoopForest;
use agx_isa::forms::idx;
use agx_isa::{ExecOp, Flow, Instruction, MemDir, MemSpace, OperandKind, Reg, RegFile, Width};
use serde::Serialize;
use std::rc::Rc;

// ---------------------------------------------------------------------------
// Symbols and polynomials
// ---------------------------------------------------------------------------

/// A symbol of an address polynomial.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Sym {
    /// `thread_position_in_threadgroup.{x,y,z}` (per lane).
    Lid(u8),
    /// `thread_index_in_threadgroup` (per lane).
    Tix,
    /// `thread_index_in_simdgroup` (per lane).
    Lane,
    /// Per-lane data: component `c` of the value loaded by the instruction
    /// at this index.
    Data(u32, u8),
    /// A uniform special register (by number); the threadgroup origin
    /// `thread_position_in_grid.d - thread_position_in_threadgroup.d` is
    /// `Sr(1000 + d)`.
    Sr(u16),
    /// A uniform register (first half, width in halves).
    U(u16, u8),
    /// The iteration counter of loop `l` (forest index).
    K(u32),
    /// A uniform value the analysis does not follow, made by the
    /// instruction at this index.
    Op(u32),
    /// A uniform value at a join or loop header: (block, half).
    Join(u32, u16),
    /// 0 in the first iteration of loop `l` (forest index), 1 in every
    /// later one: a register set to one constant before the loop and to
    /// another in its body (Mesa's "not the first iteration" flag of a
    /// rotated loop with `continue`) is `c0 + (c1 - c0) * NotFirst(l)`.
    NotFirst(u32),
    /// `thread_position_in_threadgroup.d mod m` (per lane; `m` a power of
    /// two dividing the threadgroup's extent along `d`): a grid position
    /// masked with `m - 1`, the threadgroup origin being a multiple of `m`.
    LidMod(u8, u32),
}

impl Sym {
    /// Whether it has a name a programmer can look up in the listing: a
    /// uniform register (`u6`, `u6l`) or a special register.
    pub fn named(self) -> bool {
        matches!(self, Sym::U(..) | Sym::Sr(_))
    }
    /// Its name in an expression: a uniform register as the listing names
    /// it (`u6`; a 16-bit half `u6l`/`u6h`), a special register `sr{n}`
    /// (the threadgroup origin along d: `tg_origin.x`), else `?`.
    pub fn name(self) -> String {
        match self {
            Sym::U(h, 1) => format!("u{}{}", h / 2, if h % 2 == 0 { "l" } else { "h" }),
            Sym::U(h, _) => format!("u{}", h / 2),
            Sym::Sr(n) if (1000..1003).contains(&n) => {
                format!("tg_origin.{}", ["x", "y", "z"][(n - 1000) as usize])
            }
            Sym::Sr(n) => format!("sr{n}"),
            _ => "?".to_string(),
        }
    }
    /// Whether its value can differ between the lanes of a SIMD-group.
    pub fn per_lane(self) -> bool {
        matches!(
            self,
            Sym::Lid(_) | Sym::Tix | Sym::Lane | Sym::Data(..) | Sym::LidMod(..)
        )
    }
    /// Whether it depends on the thread's position along `d` in its
    /// threadgroup.
    fn on_lid(self, d: u8) -> bool {
        matches!(self, Sym::Lid(x) | Sym::LidMod(x, _) if x == d)
    }
}

/// A monomial: one symbol, or the product of two.
pub type Mono = (Sym, Option<Sym>);

/// A polynomial: a constant and up to [`MAX_TERMS`] monomials with nonzero
/// integer coefficients, sorted by monomial.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Poly {
    pub c: i64,
    pub t: Vec<(Mono, i64)>,
}

const MAX_TERMS: usize = 12;

impl Poly {
    fn konst(c: i64) -> Poly {
        Poly { c, t: Vec::new() }
    }
    fn sym(s: Sym) -> Poly {
        Poly {
            c: 0,
            t: vec![((s, None), 1)],
        }
    }
    fn add(&self, o: &Poly, k: i64) -> Option<Poly> {
        let mut t: Vec<(Mono, i64)> = Vec::with_capacity(self.t.len() + o.t.len());
        let (mut i, mut j) = (0, 0);
        while i < self.t.len() || j < o.t.len() {
            let pick = if j >= o.t.len() {
                0
            } else if i >= self.t.len() {
                1
            } else if self.t[i].0 < o.t[j].0 {
                0
            } else if self.t[i].0 > o.t[j].0 {
                1
            } else {
                2
            };
            match pick {
                0 => {
                    t.push(self.t[i]);
                    i += 1;
                }
                1 => {
                    // a zero coefficient (k = 0) is no term: kept, it
                    // would count against MAX_TERMS and name a symbol
                    // the value does not depend on
                    let v = o.t[j].1.checked_mul(k)?;
                    if v != 0 {
                        t.push((o.t[j].0, v));
                    }
                    j += 1;
                }
                _ => {
                    let v = self.t[i].1.checked_add(o.t[j].1.checked_mul(k)?)?;
                    if v != 0 {
                        t.push((self.t[i].0, v));
                    }
                    i += 1;
                    j += 1;
                }
            }
        }
        if t.len() > MAX_TERMS {
            return None;
        }
        Some(Poly {
            c: self.c.checked_add(o.c.checked_mul(k)?)?,
            t,
        })
    }
    fn scale(&self, k: i64) -> Option<Poly> {
        if k == 0 {
            return Some(Poly::konst(0));
        }
        let mut t = Vec::with_capacity(self.t.len());
        for &(m, v) in &self.t {
            t.push((m, v.checked_mul(k)?));
        }
        Some(Poly {
            c: self.c.checked_mul(k)?,
            t,
        })
    }
    /// `c * u`: no constant, one term, one named uniform symbol.
    fn one_uniform_term(&self) -> Option<(i64, Sym)> {
        match self.t.as_slice() {
            [((u, None), c)] if self.c == 0 && u.named() => Some((*c, *u)),
            _ => None,
        }
    }
    fn as_const(&self) -> Option<i64> {
        self.t.is_empty().then_some(self.c)
    }
    fn degree(&self) -> u8 {
        self.t
            .iter()
            .map(|(m, _)| if m.1.is_some() { 2 } else { 1 })
            .max()
            .unwrap_or(0)
    }
    fn mul(&self, o: &Poly) -> Option<Poly> {
        if let Some(k) = o.as_const() {
            return self.scale(k);
        }
        if let Some(k) = self.as_const() {
            return o.scale(k);
        }
        if self.degree() > 1 || o.degree() > 1 {
            return None;
        }
        // (c1 + Σa) (c2 + Σb) = c1c2 + c1Σb + c2Σa + ΣΣ ab
        let mut r = Poly::konst(self.c.checked_mul(o.c)?);
        r = r.add(
            &Poly {
                c: 0,
                t: o.t.clone(),
            },
            self.c,
        )?;
        r = r.add(
            &Poly {
                c: 0,
                t: self.t.clone(),
            },
            o.c,
        )?;
        for &((a, _), x) in &self.t {
            for &((b, _), y) in &o.t {
                let m = if a <= b { (a, Some(b)) } else { (b, Some(a)) };
                let p = Poly {
                    c: 0,
                    t: vec![(m, x.checked_mul(y)?)],
                };
                r = r.add(&p, 1)?;
            }
        }
        Some(r)
    }
    pub(crate) fn syms(&self) -> impl Iterator<Item = Sym> + '_ {
        self.t
            .iter()
            .flat_map(|((a, b), _)| std::iter::once(*a).chain(*b))
    }
    /// The polynomial with symbol `s` replaced by `v` (None past the term
    /// limit or a product of degree above two).
    fn subst(&self, s: Sym, v: &Poly) -> Option<Poly> {
        let mut out = Poly::konst(self.c);
        for &((a, b), k) in &self.t {
            let fa = if a == s { v.clone() } else { Poly::sym(a) };
            let term = match b {
                None => fa,
                Some(b) => fa.mul(&if b == s { v.clone() } else { Poly::sym(b) })?,
            };
            out = out.add(&term, k)?;
        }
        Some(out)
    }
    /// Whether no symbol differs between lanes.
    pub fn uniform(&self) -> bool {
        self.syms().all(|s| !s.per_lane())
    }
    /// The coefficient polynomial of `K(l)` (terms `K(l)` and `K(l)*x`), and
    /// the rest.
    fn split_k(&self, l: u32) -> (Poly, Poly) {
        self.split_sym(Sym::K(l))
    }
    /// The coefficient polynomial of `k` (terms `k` and `k*x`), and the
    /// rest.
    fn split_sym(&self, k: Sym) -> (Poly, Poly) {
        let rest = Poly {
            c: self.c,
            t: self
                .t
                .iter()
                .filter(|((a, b), _)| *a != k && *b != Some(k))
                .copied()
                .collect(),
        };
        (self.coef(k), rest)
    }
    /// The coefficient polynomial of `k` ([`Poly::split_sym`]'s first part).
    fn coef(&self, k: Sym) -> Poly {
        let mut coef = Poly::default();
        for &((a, b), v) in &self.t {
            if a == k || b == Some(k) {
                let other = if a == k { b } else { Some(a) };
                match other {
                    None => coef.c += v,
                    Some(s) => coef.t.push(((s, None), v)),
                }
            }
        }
        coef.t.sort_by_key(|x| x.0);
        coef
    }
}

/// The integer `r` with `q == r * p` (both polynomials), if any.
fn ratio(q: &Poly, p: &Poly) -> Option<i64> {
    let (a, b) = if p.c != 0 {
        (q.c, p.c)
    } else {
        let &(m, v) = p.t.first()?;
        let w = q.t.iter().find(|x| x.0 == m).map_or(0, |x| x.1);
        (w, v)
    };
    if b == 0 || a % b != 0 {
        return None;
    }
    let r = a / b;
    (r != 0 && p.scale(r).as_ref() == Some(q)).then_some(r)
}

/// The coefficient polynomials of the thread position along x, y, z in
/// address `p` (the flattened thread index counts as x in a 1-D
/// threadgroup); None through a lane index or another per-lane value.
fn position_coefficients(p: &Poly, shape: &Shape) -> Option<[Poly; 3]> {
    let one_d = shape.h <= 1 && shape.d <= 1;
    if p.syms().any(|s| {
        matches!(s, Sym::Lane | Sym::Data(..) | Sym::LidMod(..)) || (s == Sym::Tix && !one_d)
    }) {
        return None;
    }
    let mut out: [Poly; 3] = Default::default();
    for (d, o) in out.iter_mut().enumerate() {
        let mut c = p.coef(Sym::Lid(d as u8));
        if d == 0 && one_d {
            c = c.add(&p.coef(Sym::Tix), 1)?;
        }
        if c.syms().any(Sym::per_lane) {
            return None;
        }
        *o = c;
    }
    Some(out)
}

/// Why a value or address is unknown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// Not affine in the thread position (the instruction at this index).
    NotAffine(u32),
    /// Written under an exec mask and read by lanes that did not write it
    /// (the exec op at this index brought them back).
    Mixed(u32),
    /// Different values of lane-varying registers meet at this block.
    Merge(u32),
    /// Carries a loop's iteration count out of the loop (its header block).
    LoopExit(u32),
    /// A call (at this index) may have changed it.
    Call(u32),
    /// Not written before it is read.
    Undefined,
    /// Exec-mask code the pass does not follow (at this index).
    Unmodelled(u32),
}

/// A register's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    /// A polynomial, written at exec depth `wd`.
    P(Rc<Poly>, u16),
    /// The 16-bit half above a 32-bit value (read through the low half).
    Hi,
    Unk(Why),
}

// ---------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------

/// Registers per shared chunk of [`Regs`].
const CHUNK: usize = 16;
const _: () = assert!(258usize.div_ceil(CHUNK) <= 64, "join's chunk mask is a u64");

/// The register values of a state, in chunks of [`CHUNK`] shared between
/// states until one of them writes (copy on write): the walk copies a state
/// along every CFG edge and stores one per join, and most chunks are the
/// same on both sides (issue 29: a `Vec<Val>` of up to 258 values copied per
/// edge, each `Rc` polynomial touched, was most of the analysis' time and
/// memory at 1M instructions). Same values, same results.
#[derive(Clone, Debug)]
struct Regs {
    len: usize,
    chunks: Vec<Rc<[Val; CHUNK]>>,
}

impl Regs {
    fn new(len: usize, v: Val) -> Regs {
        let one = Rc::new(std::array::from_fn(|_| v.clone()));
        Regs {
            len,
            chunks: vec![one; len.div_ceil(CHUNK)],
        }
    }
    fn len(&self) -> usize {
        self.len
    }
    fn get(&self, h: usize) -> Option<&Val> {
        (h < self.len).then(|| &self.chunks[h / CHUNK][h % CHUNK])
    }
    fn set(&mut self, h: usize, v: Val) {
        assert!(h < self.len, "register half {h} out of range");
        let c = &mut self.chunks[h / CHUNK];
        if c[h % CHUNK] != v {
            Rc::make_mut(c)[h % CHUNK] = v;
        }
    }
    fn swap(&mut self, a: usize, b: usize) {
        let (x, y) = (self[a].clone(), self[b].clone());
        self.set(a, y);
        self.set(b, x);
    }
    /// Every value `f` gives a replacement for is replaced (chunks without
    /// one stay shared).
    fn update(&mut self, mut f: impl FnMut(&Val) -> Option<Val>) {
        let len = self.len;
        for (ci, c) in self.chunks.iter_mut().enumerate() {
            let n = (len - ci * CHUNK).min(CHUNK);
            for k in 0..n {
                if let Some(v) = f(&c[k]) {
                    Rc::make_mut(c)[k] = v;
                }
            }
        }
    }
    /// Every value set to `v` (one chunk shared by all).
    fn fill(&mut self, v: Val) {
        *self = Regs::new(self.len, v);
    }
}

impl std::ops::Index<usize> for Regs {
    type Output = Val;
    fn index(&self, h: usize) -> &Val {
        self.get(h).expect("register half in range")
    }
}

#[derive(Clone, Debug)]
pub struct State {
    regs: Regs,
    depth: u16,
    /// Something the pass does not follow happened: every value unknown.
    broken: Option<u32>,
    /// Values spilled to the thread's stack at constant offsets (a fill
    /// reads back what the same thread stored), by byte offset.
    slots: Vec<(i64, Val)>,
    /// Inside an `if` of one level opened in the current block (its depth),
    /// the values the registers it wrote held before it: what the lanes the
    /// `if` left waiting hold ([`Flowing::leave`]). None outside one, or
    /// after anything else touched the exec state; reset at every block.
    undo: Option<(u16, Vec<(usize, Val)>)>,
}

impl State {
    fn entry(n: usize) -> State {
        State {
            regs: Regs::new(n, Val::Unk(Why::Undefined)),
            depth: 0,
            broken: None,
            slots: Vec::new(),
            undo: None,
        }
    }
    fn kill_from(&mut self, k: u16, at: u32) {
        self.regs.update(|v| match v {
            Val::P(_, d) if *d >= k => Some(Val::Unk(Why::Mixed(at))),
            _ => None,
        });
        self.slots
            .retain(|(_, v)| !matches!(v, Val::P(_, d) if *d >= k));
    }
    fn kill_all(&mut self, w: Why) {
        self.regs.fill(Val::Unk(w));
        self.slots.clear();
    }
    fn slot(&self, o: i64) -> Option<&Val> {
        self.slots
            .binary_search_by_key(&o, |x| x.0)
            .ok()
            .map(|k| &self.slots[k].1)
    }
    fn set_slot(&mut self, o: i64, v: Option<Val>) {
        match (self.slots.binary_search_by_key(&o, |x| x.0), v) {
            (Ok(k), Some(v)) => self.slots[k].1 = v,
            (Ok(k), None) => {
                self.slots.remove(k);
            }
            (Err(k), Some(v)) => self.slots.insert(k, (o, v)),
            (Err(_), None) => {}
        }
    }
}

// ---------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------

/// The threadgroup shape lanes are laid out over (x fastest).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Shape {
    pub w: u32,
    pub h: u32,
    pub d: u32,
    /// Where it came from: `"input"` (recorded with the code), `"flag"`
    /// (`--threadgroup`), or `"default"` ([`Shape::DEFAULT`]).
    pub source: &'static str,
}

impl Default for Shape {
    fn default() -> Shape {
        Shape::DEFAULT
    }
}

impl Shape {
    /// The default: 32x1x1, one SIMD-group per row. Every lane has its own
    /// x and shares y and z, which is what any threadgroup whose width is a
    /// multiple of 32 gives (the usual 1-D dispatch), so patterns over x
    /// hold for all of them; a kernel with a narrower threadgroup should be
    /// given its shape (`--threadgroup WxHxD`).
    pub const DEFAULT: Shape = Shape {
        w: 32,
        h: 1,
        d: 1,
        source: "default",
    };
    /// Where the shape came from, in words.
    pub fn source_text(&self) -> &'static str {
        match self.source {
            "input" => "recorded with the input",
            "flag" => "given with --threadgroup",
            _ => "assumed: none recorded, set with --threadgroup",
        }
    }
    pub fn threads(&self) -> u32 {
        self.w.saturating_mul(self.h).saturating_mul(self.d)
    }
    /// Parses `WxHxD` (or `WxH`, `W`).
    pub fn parse(s: &str, source: &'static str) -> Result<Shape, String> {
        let parts: Vec<&str> = s.split(['x', 'X']).collect();
        if parts.is_empty() || parts.len() > 3 {
            return Err(format!("threadgroup shape `{s}`: expected WxHxD"));
        }
        let mut v = [1u32; 3];
        for (k, p) in parts.iter().enumerate() {
            v[k] = p
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| {
                    format!("threadgroup shape `{s}`: `{p}` is not a positive integer")
                })?;
        }
        let sh = Shape {
            w: v[0],
            h: v[1],
            d: v[2],
            source,
        };
        if sh.threads() > 1024 {
            return Err(format!(
                "threadgroup shape `{s}`: {} threads, more than 1024",
                sh.threads()
            ));
        }
        Ok(sh)
    }
}

/// Lane pattern of a SIMD-group request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    Uniform,
    Contiguous,
    Strided,
    Rows,
    Gather,
    Unknown,
}

impl Pattern {
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Uniform => "uniform",
            Pattern::Contiguous => "contiguous",
            Pattern::Strided => "strided",
            Pattern::Rows => "rows",
            Pattern::Gather => "gather",
            Pattern::Unknown => "unknown",
        }
    }
}

/// Reuse of the bytes an access reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Reuse {
    /// The same element is read by other threads of the threadgroup.
    pub threads: bool,
    /// The same element is read again by later iterations of its loop.
    pub iterations: bool,
    /// A thread-position dimension (`"x"`, `"y"`, `"z"`) the kernel reads
    /// but the address does not depend on: every thread along it reads the
    /// same element, whatever the threadgroup shape (issue 35: B's column
    /// in a naive matmul does not depend on the thread's row). None when
    /// there is no such dimension.
    pub grid_dimension: Option<&'static str>,
    /// SIMD-groups of the threadgroup whose requests read the same lines
    /// (1: each SIMD-group reads its own): the first brings them into L1,
    /// the others hit (the address does not depend on the dimensions that
    /// tell the threadgroup's SIMD-groups apart).
    pub simd_groups: u32,
    /// Whether the analysis decides the reuse of this load: false when its
    /// address is not followed or goes through loaded data (a gather),
    /// where `threads`/`iterations` false and `grid_dimension` null mean
    /// "not proved", not "absent" (a table indexed by data may well be
    /// shared). True for every other access.
    pub known: bool,
}

/// The access facts of one memory instruction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Access {
    /// Index of the instruction.
    #[serde(skip)]
    pub index: u32,
    /// `device`, `threadgroup`, `stack`, `texture`, `uniform`, `tile`.
    pub space: &'static str,
    /// `load`, `store` or `atomic`.
    #[serde(skip)]
    pub dir: &'static str,
    pub lane_pattern: Pattern,
    /// Bytes between consecutive lanes (within a run for `rows`); null when
    /// not a known constant.
    pub lane_stride: Option<i64>,
    /// `rows`: lanes per run, and bytes between the first lanes of
    /// consecutive runs (null when not a known constant).
    pub run: Option<u32>,
    pub jump: Option<i64>,
    /// A lane stride that is a known factor times one runtime uniform
    /// value (issue 35: a row-wise mat-vec's `4*cols`): `"4*u6"` (bytes),
    /// the uniform named as the listing names it (a uniform register,
    /// filled from a kernel argument or push constant; `sr` a special
    /// register); absent when the stride is a number or not followed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lane_stride_expr: Option<String>,
    /// Bytes per iteration of its innermost loop (0: loop-invariant); null
    /// when not in a loop or not a known constant.
    pub loop_stride: Option<i64>,
    /// A loop stride that is a known factor times one runtime uniform
    /// value, as [`Access::lane_stride_expr`] (`"128*u5"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loop_stride_expr: Option<String>,
    /// Forest index of its innermost loop.
    #[serde(skip)]
    pub in_loop: Option<usize>,
    /// Bytes one lane moves.
    pub bytes_per_lane: u32,
    /// Bytes one SIMD-group request moves: bytes per lane x 32, or x 1 when
    /// every lane reads one address.
    pub bytes_per_request: u32,
    /// Cache lines one SIMD-group request touches (device and texture
    /// spaces, when the pattern is known).
    pub lines_per_request: Option<u32>,
    /// Device memory with a symbolic lane stride
    /// ([`Access::lane_stride_expr`]): the cache lines one SIMD-group
    /// request touches for any value of the stride of a line or more (each
    /// lane its own lines); with `wide_from`, the least value of the
    /// uniform that makes the stride a line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines_per_request_if_wide: Option<u32>,
    /// The least value of the stride's uniform for which
    /// `lines_per_request_if_wide` holds (stride >= one cache line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wide_from: Option<i64>,
    /// Threadgroup memory: the largest number of distinct words one bank
    /// serves for one request (1: no conflict), under the GPU model's bank
    /// model ([`crate::banks`]); null when unknown or another space.
    pub bank_conflict_ways: Option<u32>,
    /// Atomics: how the lanes share addresses and whether the kernel
    /// privatises ([`crate::atomics`]); absent on other accesses.
    #[serde(skip_serializing_if = "Option::is_none")]
    /// Boxed: most accesses are not atomics, and the record is copied per
    /// access (an inline fact made every `Access` 48 bytes larger).
    pub atomic: Option<Box<crate::atomics::AtomicFact>>,
    pub reuse: Reuse,
    /// Device and texture memory: bytes one execution by one SIMD-group
    /// moves through L1, from the cache model ([`crate::timing::cache`]);
    /// null for other spaces or before the timing model runs.
    pub l1_bytes: Option<f64>,
    /// The first touches of them that reach DRAM (the cache model).
    pub dram_bytes: Option<f64>,
    /// Why the pattern or the loop stride is what it is (or unknown).
    pub reason: Text,
    /// The byte address as a polynomial of the thread position, uniform
    /// registers and loop counters (None: not followed): two accesses
    /// whose polynomials differ by a constant are that many bytes apart in
    /// every thread (the `vectorise-loads` rule reads it).
    #[serde(skip)]
    pub address: Option<Poly>,
}

/// Text shared between its copies (the reason of an access: unrolled code
/// repeats a handful over ~250k accesses, each stored once); serialised and
/// displayed as the plain string.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Text(Option<std::sync::Arc<str>>);

impl Text {
    /// Appends `s` (a new string: the shared one is left as it is).
    pub fn push_str(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        let mut t = String::with_capacity(self.len() + s.len());
        t.push_str(self);
        t.push_str(s);
        self.0 = Some(t.into());
    }
}

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        self.0.as_deref().unwrap_or("")
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text((!s.is_empty()).then(|| s.into()))
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text((!s.is_empty()).then(|| s.into()))
    }
}

impl std::fmt::Display for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self)
    }
}

impl Serialize for Text {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self)
    }
}

impl Access {
    /// An access of `bytes` per lane whose pattern is not known yet (every
    /// fact unknown, one SIMD-group reading its own bytes).
    pub fn unknown(index: u32, space: &'static str, dir: &'static str, bytes: u32) -> Access {
        Access {
            index,
            space,
            dir,
            lane_pattern: Pattern::Unknown,
            lane_stride: None,
            run: None,
            jump: None,
            lane_stride_expr: None,
            loop_stride: None,
            loop_stride_expr: None,
            in_loop: None,
            bytes_per_lane: bytes,
            bytes_per_request: bytes * 32,
            lines_per_request: None,
            lines_per_request_if_wide: None,
            wide_from: None,
            bank_conflict_ways: None,
            atomic: None,
            reuse: Reuse {
                simd_groups: 1,
                ..Reuse::default()
            },
            l1_bytes: None,
            dram_bytes: None,
            reason: Text::default(),
            address: None,
        }
    }
}

/// The address analysis of one function.
#[derive(Clone, Debug, Default)]
pub struct Addresses {
    /// One entry per memory instruction, by instruction index.
    pub accesses: Vec<Access>,
    /// Why the whole function was not followed, if so.
    pub unknown: Option<String>,
    /// Per instruction, the position of its access in `accesses`
    /// (`NO_SLOT`: none); empty where the analysis did not fill it
    /// (then [`Addresses::get`] searches). The report reads every row's
    /// access: a binary search over a million rows was 2.6% of a
    /// call-dense 1M profile.
    slot: Vec<u32>,
}

impl Addresses {
    /// The access of instruction `i`.
    pub fn get(&self, i: usize) -> Option<&Access> {
        if let Some(&s) = self.slot.get(i) {
            return self.accesses.get(s as usize);
        }
        self.accesses
            .binary_search_by_key(&(i as u32), |a| a.index)
            .ok()
            .map(|k| &self.accesses[k])
    }
}

// ---------------------------------------------------------------------------
// The pass
// ---------------------------------------------------------------------------

/// What an address operand resolved to.
#[derive(Clone, Debug)]
enum Addr {
    P(Poly),
    Unk(Why),
}

struct Flowing<'a> {
    insns: &'a [Instruction],
    facts: &'a Facts,
    cfg: &'a Cfg,
    forest: &'a LoopForest,
    nregs: usize,
    /// Per memory instruction (by index), the address seen at its last
    /// visit (the fixpoint state's).
    addr: Vec<Option<(Addr, u32)>>,
    mem_slot: Vec<u32>,
    /// The thread-position dimensions the kernel reads (a position in the
    /// threadgroup, in the grid, or the threadgroup's position).
    dims_used: [bool; 3],
    /// Per loop (forest index): it, or a loop nested in it, stores to
    /// threadgroup memory (refills a tile every iteration).
    refills: Vec<bool>,
    /// Uniform registers with a known value (a preamble's).
    known: &'a [(u16, u8, Poly)],
    /// Addresses of the `icmpsel` min/max taken as their per-lane value
    /// (clamps assumed inactive).
    clamps: std::sync::Mutex<Vec<u32>>,
    /// The threadgroup shape (a mask of a grid position is followed only
    /// over a shape the input or the user gave).
    shape: Shape,
}

const NO_SLOT: u32 = u32::MAX;

fn is_gpr(r: &Reg) -> bool {
    r.file == RegFile::Gpr
}

impl Flowing<'_> {
    fn read(&self, s: &State, r: &Reg, i: usize) -> Addr {
        if r.file == RegFile::Uniform {
            let w = r.width.halves() as u8;
            if let Some(k) = self.known.iter().find(|k| k.0 == r.half && k.1 == w) {
                return Addr::P(k.2.clone());
            }
            return Addr::P(Poly::sym(Sym::U(r.half, w)));
        }
        if let Some(at) = s.broken {
            return Addr::Unk(Why::Unmodelled(at));
        }
        let h = r.half as usize;
        if h >= s.regs.len() || r.count > 1 {
            return Addr::Unk(Why::NotAffine(i as u32));
        }
        match (&s.regs[h], r.width) {
            (Val::P(p, _), Width::W16) => Addr::P((**p).clone()),
            (Val::P(p, _), Width::W32) => {
                if s.regs.get(h + 1) == Some(&Val::Hi) {
                    Addr::P((**p).clone())
                } else {
                    Addr::Unk(Why::NotAffine(i as u32))
                }
            }
            (Val::Unk(w), _) => Addr::Unk(*w),
            _ => Addr::Unk(Why::NotAffine(i as u32)),
        }
    }

    fn operand(&self, s: &State, k: usize, i: usize) -> Option<Addr> {
        let o = self.insns[i].operands.as_slice().get(k)?;
        Some(match o.kind {
            OperandKind::Reg(r) => {
                if o.flags & agx_isa::flags::NEG != 0 || o.flags & agx_isa::flags::ABS != 0 {
                    return Some(Addr::Unk(Why::NotAffine(i as u32)));
                }
                self.read(s, &r, i)
            }
            OperandKind::Imm(v) => Addr::P(Poly::konst(v.get())),
            OperandKind::HexImm(v) => Addr::P(Poly::konst(v.get() as i64)),
            _ => return None,
        })
    }

    fn write(&self, s: &mut State, r: &Reg, v: Addr, at: u32) {
        if !is_gpr(r) {
            return;
        }
        let h = r.half as usize;
        let n = (r.width.halves() as usize) * (r.count as usize);
        let d = s.depth;
        if h >= s.regs.len() {
            return;
        }
        // each half written once: the value, the high half of a 32-bit
        // one, the rest unknown
        s.regs.set(
            h,
            match v {
                Addr::P(p) if r.count == 1 && r.width != Width::W64 => Val::P(Rc::new(p), d),
                Addr::P(_) => Val::Unk(Why::NotAffine(at)),
                Addr::Unk(w) => Val::Unk(w),
            },
        );
        let hi = r.width == Width::W32 && r.count == 1;
        for k in h + 1..(h + n.max(1)).min(s.regs.len()) {
            let v = if hi && k == h + 1 {
                Val::Hi
            } else {
                Val::Unk(Why::NotAffine(at))
            };
            s.regs.set(k, v);
        }
        // a 16-bit write into the high half breaks the 32-bit value below
        if r.width == Width::W16 && h % 2 == 1 {
            if let Val::P(..) = s.regs[h - 1] {
                if s.regs[h] != Val::Hi {
                    s.regs.set(h - 1, Val::Unk(Why::NotAffine(at)));
                }
            }
        }
    }

    /// The value an instruction writes, from what it reads.
    fn eval(&self, s: &State, i: usize) -> Option<Addr> {
        let insn = &self.insns[i];
        let ops = insn.operands.as_slice();
        let un = |w| Some(Addr::Unk(w));
        let na = Why::NotAffine(i as u32);
        let get = |k: usize| self.operand(s, k, i);
        let shift_of = |k: usize| -> Option<i64> {
            match ops.get(k).and_then(|o| o.kind.keyword_text()) {
                None => Some(0),
                Some(t) => t.strip_prefix("lsl ").and_then(|n| n.parse().ok()),
            }
        };
        let both = |a: Addr, b: Addr, f: &dyn Fn(&Poly, &Poly) -> Option<Poly>| -> Addr {
            match (a, b) {
                (Addr::P(x), Addr::P(y)) => f(&x, &y).map_or(Addr::Unk(na), Addr::P),
                (Addr::Unk(w), _) | (_, Addr::Unk(w)) => Addr::Unk(w),
            }
        };
        match insn.mnemonic() {
            "mov_imm" => {
                let v = ops.iter().skip(1).find_map(|o| o.kind.imm_value())?;
                Some(Addr::P(Poly::konst(v)))
            }
            "mov" if ops.len() == 2 => get(1),
            "iadd" | "isub" if ops.len() >= 3 => {
                let sh = shift_of(3)?;
                let (a, b) = (get(1)?, get(2)?);
                let sign = if insn.mnemonic() == "isub" { -1 } else { 1 };
                Some(both(a, b, &|x, y| x.add(&y.scale(1i64 << sh)?, sign)))
            }
            "imadd" if ops.len() >= 4 => {
                let sh = shift_of(4)?;
                let (a, b, c) = (get(1)?, get(2)?, get(3)?);
                let ab = both(a, b, &|x, y| x.mul(y));
                Some(both(ab, c, &|x, y| x.add(&y.scale(1i64 << sh)?, 1)))
            }
            // icmpsel cc, d, a, b, t, f on a first-iteration flag
            // (`a` = c0 + D * NotFirst(l), `b` a constant): t or f in the
            // first iteration, the other after it
            "icmpsel" if ops.len() == 6 => {
                let cc = ops[0].kind.keyword_text()?;
                let (Addr::P(a), Addr::P(b)) = (self.operand(s, 2, i)?, self.operand(s, 3, i)?)
                else {
                    return None;
                };
                // min/max of a per-lane value and a uniform bound (the arms
                // are the compared values: `clamp(x + i - r, 0, W - 1)`):
                // the value itself, exact where the bound does not bite
                // (interior threads), as the access labels read clamps
                if let (Some(Addr::P(t)), Some(Addr::P(f))) = (get(4), get(5)) {
                    let minmax = (t == a && f == b) || (t == b && f == a);
                    if minmax && a.uniform() != b.uniform() {
                        self.clamps.lock().expect("clamps").push(insn.addr);
                        return Some(Addr::P(if a.uniform() { b } else { a }));
                    }
                }
                let b = b.as_const()?;
                let holds = |v: i64| -> Option<bool> {
                    let (x, y) = (v, b);
                    let (ux, uy) = (x as u32, y as u32);
                    Some(match cc {
                        "ueq" | "seq" => x == y,
                        "nueq" | "nseq" => x != y,
                        "ult" => ux < uy,
                        "slt" => x < y,
                        "ulte" => ux <= uy,
                        "slte" => x <= y,
                        "ugt" => ux > uy,
                        "sgt" => x > y,
                        "ugte" => ux >= uy,
                        "sgte" => x >= y,
                        _ => return None,
                    })
                };
                if a.as_const().is_some() {
                    // a known comparison: the arm it picks
                    return if holds(a.c)? { get(4) } else { get(5) };
                }
                // `a` is c0 in the first iteration and another value in
                // every later one: a NotFirst flag, or (before the flag is
                // told from a counter) c0 + K*D tested for equality with c0
                let (l, later) = match a.t.as_slice() {
                    [((Sym::NotFirst(l), None), dv)] => (*l, holds(a.c + dv)?),
                    [((Sym::K(l), None), _)]
                        if b == a.c && matches!(cc, "ueq" | "seq" | "nueq" | "nseq") =>
                    {
                        (*l, !holds(a.c)?)
                    }
                    _ => return None,
                };
                let first = holds(a.c)?;
                let (Addr::P(t), Addr::P(f)) = (get(4)?, get(5)?) else {
                    return un(na);
                };
                let pick = |c: bool| if c { t.clone() } else { f.clone() };
                let (v0, v1) = (pick(first), pick(later));
                let d = v1.add(&v0, -1)?;
                let nf = Poly::sym(Sym::NotFirst(l));
                Some(
                    d.mul(&nf)
                        .and_then(|x| v0.add(&x, 1))
                        .map_or(Addr::Unk(na), Addr::P),
                )
            }
            // and d, x, m - 1 of a thread position (in the grid or the
            // threadgroup) along d, m a power of two dividing the
            // threadgroup's extent there: the origin is a multiple of m,
            // the value the position in the threadgroup mod m
            "and" if ops.len() == 3 => {
                let (x, k) = match (get(1)?, get(2)?) {
                    (Addr::P(x), Addr::P(k)) if k.as_const().is_some() => (x, k.c),
                    (Addr::P(k), Addr::P(x)) if k.as_const().is_some() => (x, k.c),
                    _ => return un(na),
                };
                let m = k.checked_add(1)?;
                let extent = |d: u8| [self.shape.w, self.shape.h, self.shape.d][d as usize] as i64;
                let dim = (0..3u8).find(|&d| {
                    let lid = Poly::sym(Sym::Lid(d));
                    let gid = lid.add(&Poly::sym(Sym::Sr(1000 + d as u16)), 1);
                    x == lid || Some(&x) == gid.as_ref()
                });
                match dim {
                    Some(d)
                        if m > 1
                            && m & (m - 1) == 0
                            && self.shape.source != "default"
                            && extent(d) % m == 0 =>
                    {
                        Some(Addr::P(Poly::sym(Sym::LidMod(d, m as u32))))
                    }
                    _ => un(na),
                }
            }
            // bfi d, a, b, n (no mask operand): a with b inserted at bit n;
            // with a = 0, b << n
            "bfi" if ops.len() == 4 => {
                let base = get(1)?;
                let sh = ops[3].kind.imm_value();
                match (base, sh) {
                    (Addr::P(p), Some(n)) if p.as_const() == Some(0) && (0..32).contains(&n) => {
                        let b = get(2)?;
                        Some(both(b, Addr::P(Poly::konst(1i64 << n)), &|x, y| x.mul(y)))
                    }
                    _ => un(na),
                }
            }
            _ => None,
        }
    }

    /// `mov_imm r0l, c` (c >= 1) inside a one-level `if` of this block: every
    /// running lane stops (a `break`: Mesa's `r0l = 2` leaves the loop), so
    /// the lanes that run on after the `if` are the ones it left waiting,
    /// which hold the values from before it: those are restored. The
    /// stopped lanes hold the written ones and come back `c` levels up:
    /// the restored values are marked as written at a depth above that
    /// (`depth - c + 1`), so the pop that returns them makes the values
    /// unknown ("mixed"), as any value written inside would be.
    fn leave(&self, s: &mut State, c: i64) {
        let Some((d, log)) = s.undo.take() else {
            return;
        };
        if d != s.depth || s.broken.is_some() {
            return;
        }
        let back = (i64::from(d) - c + 1).clamp(0, i64::from(d)) as u16;
        for (h, v) in log {
            let v = match v {
                Val::P(p, wd) => Val::P(p, wd.max(back)),
                v => v,
            };
            s.regs.set(h, v);
        }
    }

    fn get_sr(&self, i: usize) -> Addr {
        let n = self.insns[i].operands.iter().find_map(|o| match o.kind {
            OperandKind::SpecialReg(n) => Some(n),
            _ => None,
        });
        let Some(n) = n else {
            return Addr::Unk(Why::NotAffine(i as u32));
        };
        Addr::P(match n {
            48..=50 => Poly::sym(Sym::Lid((n - 48) as u8)),
            80..=82 => {
                let d = (n - 80) as u8;
                Poly::sym(Sym::Lid(d))
                    .add(&Poly::sym(Sym::Sr(1000 + d as u16)), 1)
                    .expect("two terms")
            }
            51 => Poly::sym(Sym::Tix),
            52 => Poly::sym(Sym::Lane),
            _ => match crate::special_regs::sr_class(n) {
                crate::special_regs::SrClass::Uniform => Poly::sym(Sym::Sr(n)),
                _ => return Addr::Unk(Why::NotAffine(i as u32)),
            },
        })
    }

    fn step(&mut self, i: usize, xop: Option<(ExecOp, u8)>, s: &mut State) {
        let insn = &self.insns[i];
        let at = i as u32;
        // memory instructions: record the address first
        if self.mem_slot[i] != NO_SLOT {
            let a = self.address(s, i);
            self.addr[self.mem_slot[i] as usize] = Some(a);
        }
        if let Some((op, n)) = xop {
            exec_step(s, at, op, n as u16);
        }
        match self.cfg.flows[i] {
            Flow::Call { .. } | Flow::CallIndirect => {
                s.kill_all(Why::Call(at));
                return;
            }
            _ => {}
        }
        // r0l written other than by an exec op
        // (r0l is the exec counter only in code with exec-mask ops)
        let writes_r0l =
            !self.facts.exec.is_empty() && insn.defs().any(|r| is_gpr(r) && r.half == 0);
        if xop.is_none() && writes_r0l {
            self.r0l_written(s, i);
        }
        if let Some(m) = insn.mem_access().filter(|m| m.space == MemSpace::Stack) {
            s.undo = None;
            self.stack(s, i, m);
            return;
        }
        let defs: Vec<Reg> = insn.defs().filter(|r| is_gpr(r)).copied().collect();
        if defs.is_empty() {
            return;
        }
        log_undo(s, &defs);
        let v = if insn.form == idx::GET_SR {
            Some(self.get_sr(i))
        } else {
            self.eval(s, i)
        };
        let v = v.unwrap_or_else(|| self.opaque(s, i));
        // a loaded vector: each component its own data
        if let (Addr::P(p), [r]) = (&v, defs.as_slice()) {
            if r.count > 1 && p.t.len() == 1 && matches!(p.t[0].0 .0, Sym::Data(..)) {
                let step = r.width.halves();
                for c in 0..r.count {
                    let one = Reg {
                        half: r.half + c as u16 * step,
                        count: 1,
                        ..*r
                    };
                    self.write(s, &one, Addr::P(Poly::sym(Sym::Data(at, c))), at);
                }
                return;
            }
        }
        for (k, r) in defs.iter().enumerate() {
            let vk = if k == 0 {
                v.clone()
            } else {
                Addr::Unk(Why::NotAffine(at))
            };
            self.write(s, r, vk, at);
        }
    }

    /// Instruction `i` writes r0l (the exec counter) other than by an exec
    /// op: a constant of at least 1 leaves that many levels, anything else
    /// breaks the state.
    fn r0l_written(&mut self, s: &mut State, i: usize) {
        let insn = &self.insns[i];
        let k = (insn.form == idx::MOV_IMM || insn.form == idx::MOV_IMM_1)
            .then(|| {
                insn.operands
                    .iter()
                    .skip(1)
                    .find_map(|o| o.kind.imm_value())
            })
            .flatten();
        if k.is_none() {
            s.broken.get_or_insert(i as u32);
            s.undo = None;
        } else if let Some(c) = k.filter(|&c| c >= 1) {
            self.leave(s, c);
        }
    }

    /// The value of an instruction [`Flowing::eval`] does not follow:
    /// uniform opaque if every source is uniform, data for a load.
    fn opaque(&self, s: &State, i: usize) -> Addr {
        let insn = &self.insns[i];
        let at = i as u32;
        let mem = insn.mem_access();
        if let Some(m) = mem {
            if matches!(m.dir, MemDir::Load | MemDir::Atomic) {
                // (the address recorded above, not computed again)
                let a = &self.addr[self.mem_slot[i] as usize];
                return match a {
                    Some((Addr::P(p), _)) if p.uniform() && m.space != MemSpace::Stack => {
                        Addr::P(Poly::sym(Sym::Op(at)))
                    }
                    _ => Addr::P(Poly::sym(Sym::Data(at, 0))),
                };
            }
        }
        let mut uniform = true;
        for r in insn.uses() {
            if r.file == RegFile::Uniform {
                continue;
            }
            if r.half == 0 && r.width == Width::W16 {
                // r0l: the exec counter
                uniform = false;
                continue;
            }
            match self.read(s, r, i) {
                Addr::P(p) if p.uniform() => {}
                _ => uniform = false,
            }
        }
        if insn.category() == agx_isa::Category::CrossLane || !uniform {
            Addr::Unk(Why::NotAffine(at))
        } else {
            Addr::P(Poly::sym(Sym::Op(at)))
        }
    }

    /// A stack store or load: spill slots at constant offsets are followed.
    fn stack(&self, s: &mut State, i: usize, m: agx_isa::MemAccess) {
        let at = i as u32;
        let (addr, bytes) = self.address(s, i);
        let off = match &addr {
            Addr::P(p) => p.as_const(),
            Addr::Unk(_) => None,
        };
        let Some(r) = m.data.filter(is_gpr) else {
            return;
        };
        let per = r.width.halves() as i64 * 2;
        let comps = (r.count as i64).max(1);
        let _ = bytes;
        let one = |k: i64| Reg {
            half: r.half + (k * per / 2) as u16,
            count: 1,
            ..r
        };
        match m.dir {
            MemDir::Store => {
                let Some(o) = off else {
                    // a store to an unknown slot may overwrite any
                    s.slots.clear();
                    return;
                };
                for k in 0..comps {
                    let v = match self.read(s, &one(k), i) {
                        Addr::P(p) => Some(Val::P(Rc::new(p), s.depth)),
                        Addr::Unk(_) => None,
                    };
                    s.set_slot(o + k * per, v);
                }
            }
            _ => {
                for k in 0..comps {
                    let v = match off.and_then(|o| s.slot(o + k * per)) {
                        Some(Val::P(p, _)) => Addr::P((**p).clone()),
                        _ => Addr::Unk(Why::NotAffine(at)),
                    };
                    self.write(s, &one(k), v, at);
                }
            }
        }
    }

    /// The byte address of memory instruction `i` and its bytes per lane.
    fn address(&self, s: &State, i: usize) -> (Addr, u32) {
        let insn = &self.insns[i];
        let na = Addr::Unk(Why::NotAffine(i as u32));
        let Some(m) = insn.mem_access() else {
            return (na, 4);
        };
        let ops = insn.operands.as_slice();
        // bytes per lane: the format's element size times the components
        // (`i8, x` moves 1 byte into a wider register), else the registers'
        let comps = ops
            .iter()
            .filter_map(|o| o.kind.keyword_text())
            .find(|t| !t.is_empty() && t.len() <= 4 && t.chars().all(|c| "xyzw".contains(c)))
            .map(|t| t.len() as u32);
        let fmt_bytes = ops.iter().find_map(|o| match o.kind.keyword_text() {
            Some("i8" | "u8" | "unorm8" | "snorm8") => Some(1),
            Some("i16" | "f16" | "unorm16" | "snorm16") => Some(2),
            Some("i32" | "f32") => Some(4),
            _ => None,
        });
        let bytes = match (fmt_bytes, comps) {
            (Some(e), Some(c)) => e * c,
            _ => m.bytes_per_lane(),
        };
        let mnem = insn.mnemonic();
        // the element size the format names (as the code table reads it)
        let elem = |ops: &[agx_isa::Operand]| agx_isa::semantics::format_bytes(ops) as i64;
        match (mnem, m.space) {
            ("device_load" | "device_store", _) => {
                // mask, format, comps, D, A (base pair), O, signed|unsigned[, shift][, ...]
                let e = elem(ops);
                let base = ops.get(4).and_then(|o| o.as_reg());
                let (Some(base), true) = (base, e > 0) else {
                    return (na, bytes);
                };
                let mut sh = 0;
                for o in ops.iter().skip(6) {
                    if let Some(t) = o.kind.keyword_text() {
                        if let Some(n) = t.strip_prefix("lsl ") {
                            sh = n.parse().unwrap_or(0);
                        }
                    }
                }
                let b = if base.file == RegFile::Uniform {
                    Addr::P(Poly::sym(Sym::U(base.half, 4)))
                } else {
                    return (Addr::Unk(Why::NotAffine(i as u32)), bytes);
                };
                let Some(off) = self.operand(s, 5, i) else {
                    return (na, bytes);
                };
                let a = match (b, off) {
                    (Addr::P(b), Addr::P(o)) => o
                        .scale(e << sh)
                        .and_then(|o| b.add(&o, 1))
                        .map_or(na, Addr::P),
                    (Addr::Unk(w), _) | (_, Addr::Unk(w)) => Addr::Unk(w),
                };
                (a, bytes)
            }
            ("threadgroup_load" | "threadgroup_store", _) => {
                // format, comps, R, A (byte address), O (elements)
                let e = elem(ops);
                let (Some(a), Some(o)) = (self.operand(s, 3, i), self.operand(s, 4, i)) else {
                    return (na, bytes);
                };
                if e == 0 {
                    return (na, bytes);
                }
                let a = match (a, o) {
                    (Addr::P(a), Addr::P(o)) => {
                        o.scale(e).and_then(|o| a.add(&o, 1)).map_or(na, Addr::P)
                    }
                    (Addr::Unk(w), _) | (_, Addr::Unk(w)) => Addr::Unk(w),
                };
                (a, bytes)
            }
            (_, MemSpace::Uniform) => (Addr::P(Poly::konst(0)), bytes),
            ("atomic", MemSpace::Device) => {
                // op, ?, D, A (64-bit base), O (32-bit words), ...
                let k = ops.iter().position(|o| {
                    o.as_reg().is_some_and(|r| {
                        r.width == Width::W64 || r.count == 2 && r.file == RegFile::Uniform
                    })
                });
                let Some(k) = k else { return (na, bytes) };
                let base = ops[k].as_reg().copied().expect("a register");
                if base.file != RegFile::Uniform {
                    return (na, bytes);
                }
                let b = Poly::sym(Sym::U(base.half, 4));
                let a = match self.operand(s, k + 1, i) {
                    Some(Addr::P(o)) => o.scale(4).and_then(|o| b.add(&o, 1)).map_or(na, Addr::P),
                    Some(Addr::Unk(w)) => Addr::Unk(w),
                    None => na,
                };
                (a, 4)
            }
            ("stack_load" | "stack_store", _) => {
                // the offset (immediate or register) is the operand before
                // the last (`stack_store i32, 1, 0, x, 4, r4, 8, 0`,
                // `stack_load r1, i32, 1, 0, x, 4, r1, 0`)
                match ops.len().checked_sub(2).and_then(|k| self.operand(s, k, i)) {
                    Some(a) => (a, bytes),
                    None => (na, bytes),
                }
            }
            _ => (na, bytes),
        }
    }

    fn block(&mut self, b: usize, s: &mut State) {
        let blk = &self.cfg.blocks[b];
        let exec = &self.facts.exec;
        let mut xk = exec.partition_point(|x| x.0 < blk.insns.start);
        let mut skip = 0;
        s.undo = None;
        for i in blk.insns.clone() {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            // a register swap by three xors (Mesa's parallel copies)
            if i + 2 < blk.insns.end && self.insns[i].mnemonic() == "xor" {
                if let Some((a, c)) = crate::divergence::xor_swap(&self.insns[i..i + 3]) {
                    s.undo = None;
                    let n = (a.width.halves() as usize) * (a.count as usize);
                    let (ha, hc) = (a.half as usize, c.half as usize);
                    if a.width == c.width
                        && a.count == c.count
                        && ha + n <= s.regs.len()
                        && hc + n <= s.regs.len()
                    {
                        for k in 0..n {
                            s.regs.swap(ha + k, hc + k);
                        }
                        skip = 2;
                        continue;
                    }
                }
            }
            while xk < exec.len() && exec[xk].0 < i {
                xk += 1;
            }
            let xop = exec.get(xk).filter(|x| x.0 == i).map(|&(_, op, n)| (op, n));
            self.step(i, xop, s);
        }
    }

    /// Loop of block `b` (innermost), and whether `l` contains `b`.
    fn contains(&self, l: usize, b: usize) -> bool {
        self.forest.contains(l, b)
    }

    /// Whether symbol `x` may change from one iteration of loop `l` to the
    /// next.
    fn varies_in(&self, x: Sym, l: usize) -> bool {
        match x {
            Sym::K(k) | Sym::NotFirst(k) => self.loop_inside(k as usize, l),
            Sym::Op(i) | Sym::Data(i, _) => {
                self.contains(l, self.cfg.block_of[i as usize] as usize)
            }
            Sym::Join(b, _) => self.contains(l, b as usize),
            _ => false,
        }
    }

    /// Whether loop `a` is `l` or nested in it.
    fn loop_inside(&self, a: usize, l: usize) -> bool {
        let mut c = Some(a);
        while let Some(x) = c {
            if x == l {
                return true;
            }
            c = self.forest.loops[x].parent;
        }
        false
    }

    /// The loop whose header is block `b`.
    fn header_loop(&self, b: usize) -> Option<usize> {
        self.forest.loop_of[b].filter(|&l| self.forest.loops[l].header == b)
    }
}

impl Forward for Flowing<'_> {
    type State = State;
    fn block(&mut self, b: usize, s: &mut State) {
        Flowing::block(self, b, s);
    }
    fn edge(&mut self, b: usize, s: &mut State, e: &Edge) {
        // leaving loops: values carrying their iteration count are unknown
        let mut l = self.forest.loop_of[b];
        while let Some(x) = l {
            if self.contains(x, e.to) {
                break;
            }
            let k = Sym::K(x as u32);
            let nf = Sym::NotFirst(x as u32);
            let hdr = self.forest.loops[x].header as u32;
            s.regs.update(|v| match v {
                Val::P(p, _) if p.syms().any(|y| y == k || y == nf) => {
                    Some(Val::Unk(Why::LoopExit(hdr)))
                }
                _ => None,
            });
            l = self.forest.loops[x].parent;
        }
    }
    fn join(&mut self, pred: usize, to: usize, into: &mut State, from: &State) -> bool {
        let mut changed = false;
        // a loop header's entry depth may differ along its back edges (a
        // `while` at the top raises it to the loop level on every path):
        // the deeper one is kept; elsewhere different depths are not
        // followed
        let loop_top = dataflow::has_back_pred(self.cfg, to);
        if into.depth != from.depth && loop_top && into.broken.is_none() {
            if from.depth > into.depth {
                into.depth = from.depth;
                changed = true;
            }
        } else if into.depth != from.depth || into.broken != from.broken && from.broken.is_some() {
            let at = self.cfg.blocks[to].insns.start as u32;
            if into.broken.is_none() {
                into.broken = Some(from.broken.unwrap_or(at));
                changed = true;
            }
        }
        if into.broken.is_some() {
            return changed;
        }
        // spill slots: kept where both sides hold the same value
        let before = into.slots.len();
        into.slots
            .retain(|(o, v)| from.slot(*o).is_some_and(|w| w == v));
        changed |= into.slots.len() != before;
        let back = is_back(self.cfg, pred, to);
        let hl = if back { self.header_loop(to) } else { None };
        let n = into.regs.len().min(from.regs.len());
        // the chunks that differ (a chunk both sides share holds the same
        // values); at most 258 / CHUNK + 1 of them
        let mut differ = 0u64;
        for c in 0..n.div_ceil(CHUNK) {
            if !Rc::ptr_eq(&into.regs.chunks[c], &from.regs.chunks[c]) {
                differ |= 1 << c;
            }
        }
        for h in (0..n.div_ceil(CHUNK))
            .filter(|c| differ & (1 << c) != 0)
            .flat_map(|c| c * CHUNK..((c + 1) * CHUNK).min(n))
        {
            let (a, b) = (&into.regs[h], &from.regs[h]);
            if a == b {
                continue;
            }
            let new = match (a, b) {
                (Val::Unk(_), _) => continue,
                (_, Val::Unk(w)) => Val::Unk(*w),
                (Val::Hi, _) | (_, Val::Hi) => Val::Unk(Why::Merge(to as u32)),
                (Val::P(x, dx), Val::P(y, dy)) => {
                    let wd = (*dx).max(*dy);
                    if x == y {
                        if dx == &wd {
                            continue;
                        }
                        Val::P(x.clone(), wd)
                    } else {
                        self.merge(to, h, hl, x, y, wd)
                    }
                }
            };
            if into.regs[h] != new {
                into.regs.set(h, new);
                changed = true;
            }
        }
        changed
    }
}

impl Flowing<'_> {
    /// Two different polynomials meeting at block `to` (`hl`: the loop whose
    /// back edge this is).
    fn merge(&self, to: usize, h: usize, hl: Option<usize>, x: &Poly, y: &Poly, wd: u16) -> Val {
        let join_sym = Sym::Join(to as u32, h as u16);
        if let Some(l) = hl {
            let nf = Sym::NotFirst(l as u32);
            // steady state of the forms below: the back edge brings the
            // header's value of the next iteration (K + 1, NotFirst 1)
            if x.syms().any(|s| s == nf) {
                let k1 = Poly {
                    c: 1,
                    t: vec![((Sym::K(l as u32), None), 1)],
                };
                let next = x
                    .subst(Sym::K(l as u32), &k1)
                    .and_then(|p| p.subst(nf, &Poly::konst(1)));
                if next.as_ref() == Some(y) {
                    return Val::P(Rc::new(x.clone()), wd);
                }
            }
            // a value the body moves by D from the second iteration on
            // (`j = first ? j : j + 1`): x0 + (K - NotFirst) * D
            if let Some(diff) = y.add(x, -1) {
                let (d, rest) = diff.split_sym(nf);
                let inv = |p: &Poly| p.syms().all(|s| !self.varies_in(s, l));
                let k = Sym::K(l as u32);
                if rest == Poly::default()
                    && d != Poly::default()
                    && d.degree() <= 1
                    && inv(&d)
                    && !x.syms().any(|s| s == k || s == nf)
                    && inv(x)
                {
                    let step = Poly::sym(k)
                        .add(&Poly::sym(nf), -1)
                        .and_then(|kn| kn.mul(&d));
                    if let Some(p) = step.and_then(|kd| x.add(&kd, 1)) {
                        return Val::P(Rc::new(p), wd);
                    }
                }
            }
            // x: the header's value (x0 + K*D), y: the back edge's
            let (coef, rest) = x.split_k(l as u32);
            let inv = |p: &Poly| p.syms().all(|s| !self.varies_in(s, l));
            if let Some(diff) = y.add(x, -1) {
                if diff.degree() <= 1 && inv(&diff) && inv(&rest) {
                    if coef == Poly::default() {
                        if let Some(p) = Poly::sym(Sym::K(l as u32))
                            .mul(&diff)
                            .and_then(|kd| rest.add(&kd, 1))
                        {
                            return Val::P(Rc::new(p), wd);
                        }
                    } else if coef == diff {
                        return Val::P(Rc::new(x.clone()), wd);
                    }
                }
            }
            // a first-iteration flag: one constant on entry, another from
            // the body (first taken for a counter `c0 + K*D`, which the
            // body's constant contradicts)
            let k = Sym::K(l as u32);
            if let (Some(c0), Some(c1)) = (
                x.subst(k, &Poly::konst(0)).and_then(|p| p.as_const()),
                y.as_const(),
            ) {
                if c1 != c0 {
                    return Val::P(
                        Rc::new(Poly {
                            c: c0,
                            t: vec![((nf, None), c1 - c0)],
                        }),
                        wd,
                    );
                }
            }
        }
        if x.syms().any(|s| s == join_sym) && y.uniform() {
            return Val::P(Rc::new(x.clone()), wd);
        }
        // one side is the other in an enclosing loop's first iteration
        let entry = hl.is_none();
        if self.covers(to, entry, y, x) {
            return Val::P(Rc::new(y.clone()), wd);
        }
        if self.covers(to, entry, x, y) {
            return Val::P(Rc::new(x.clone()), wd);
        }
        if x.uniform() && y.uniform() {
            Val::P(Rc::new(Poly::sym(join_sym)), wd)
        } else {
            Val::Unk(Why::Merge(to as u32))
        }
    }

    /// Whether `g` describes every value `x` does at block `to`: `x` is
    /// `g` with the iteration counters (and first-iteration flags) of
    /// loops enclosing `to` set to 0, their first iteration. An inner
    /// loop's header first sees an outer loop's first-iteration values
    /// (`j = 0`); once the outer header holds `j = K`, the value arriving
    /// is `g`, which covers the stale one. `entry`: the edge enters the
    /// loop headed at `to` (not a back edge), so that loop's own counter
    /// is 0 along it too (the header's `x0 + K*D` met by `x0` again, from
    /// the next iteration of an outer loop).
    fn covers(&self, to: usize, entry: bool, g: &Poly, x: &Poly) -> bool {
        // (nothing to set to 0: nothing moved)
        // the loops whose counters `g` holds (a substitution only removes
        // symbols: a loop not among them has nothing to set to 0 at any
        // step, so the walk up a deep nest skips it without a scan of `p`)
        let mut held: Vec<u32> = Vec::new();
        for s in g.syms() {
            if let Sym::K(o) | Sym::NotFirst(o) = s {
                held.push(o);
            }
        }
        if held.is_empty() {
            return false;
        }
        let mut p = g.clone();
        let mut moved = false;
        let mut l = self.forest.loop_of[to];
        while let Some(o) = l {
            if held.contains(&(o as u32)) && (entry || self.forest.loops[o].header != to) {
                for s in [Sym::K(o as u32), Sym::NotFirst(o as u32)] {
                    if p.syms().any(|y| y == s) {
                        match p.subst(s, &Poly::konst(0)) {
                            Some(q) => p = q,
                            None => return false,
                        }
                        moved = true;
                    }
                }
            }
            l = self.forest.loops[o].parent;
        }
        moved && p == *x
    }
}

/// Uniform registers with a known value: (first half, width in halves,
/// the value over other uniforms), from a preamble.
pub type UniformValues = std::sync::Arc<Vec<(u16, u8, Poly)>>;

/// The uniform registers a Mesa preamble fills (`uniform_store` of a value
/// computed from immediates and the uniforms it reads: push constants),
/// followed through `mov_imm`, `mov`, `iadd`/`isub` (negated operands
/// included) and `imadd` of 32-bit registers, up to the first
/// control-flow or exec-mask instruction. A value of degree two or more
/// (`X*Y`) stays that uniform's own symbol, and a later value built from
/// it refers to it (`-X*Y` as minus that uniform), so main's addresses,
/// affine in one runtime factor per term, stay so. Mesa's preamble runs
/// once per dispatch before main and main reads what it stored (Mesa
/// `agx_nir_opt_preamble`; the corpus' layout.json gives its offset).
pub fn preamble_uniforms(insns: &[Instruction]) -> Vec<(u16, u8, Poly)> {
    use std::collections::HashMap;
    let mut regs: HashMap<u16, Poly> = HashMap::new();
    let mut out: Vec<(u16, u8, Poly)> = Vec::new();
    let val = |regs: &HashMap<u16, Poly>, o: &agx_isa::Operand| -> Option<Poly> {
        let neg = o.flags & agx_isa::flags::NEG != 0;
        if o.flags & agx_isa::flags::ABS != 0 {
            return None;
        }
        let p = match o.kind {
            OperandKind::Reg(r) if r.count == 1 && r.width == Width::W32 => match r.file {
                RegFile::Uniform => Some(Poly::sym(Sym::U(r.half, 2))),
                RegFile::Gpr => regs.get(&r.half).cloned(),
            },
            OperandKind::Imm(v) => Some(Poly::konst(v.get())),
            OperandKind::HexImm(v) => Some(Poly::konst(v.get() as i64)),
            _ => None,
        }?;
        if neg {
            p.scale(-1)
        } else {
            Some(p)
        }
    };
    for insn in insns {
        let ops = insn.operands.as_slice();
        let mn = insn.mnemonic();
        if matches!(
            insn.category(),
            agx_isa::Category::Control | agx_isa::Category::ExecMask
        ) {
            break;
        }
        if mn == "uniform_store" {
            let src = ops.iter().find_map(|o| match o.kind {
                OperandKind::Reg(r) if r.file == RegFile::Gpr => Some(r),
                _ => None,
            });
            let at = ops.iter().rev().find_map(|o| o.kind.imm_value());
            let (Some(r), Some(h)) = (src, at) else {
                continue;
            };
            // a 32-bit value: one 32-bit register, or two 16-bit halves
            let halves = r.width.halves() as u32 * r.count as u32;
            if halves != 2 || !(0..512).contains(&h) {
                out.retain(|x| !(x.0 as i64 <= h + 1 && h < x.0 as i64 + 2));
                continue;
            }
            let h = h as u16;
            out.retain(|x| x.0 != h);
            if let Some(p) = regs.get(&r.half).cloned() {
                if p.degree() > 1 {
                    // kept as the uniform's own symbol
                    regs.insert(r.half, Poly::sym(Sym::U(h, 2)));
                } else {
                    out.push((h, 2, p));
                }
            }
            continue;
        }
        let Some(OperandKind::Reg(d)) = ops.first().map(|o| o.kind) else {
            continue;
        };
        if d.file != RegFile::Gpr {
            continue;
        }
        let shift = |k: usize| -> Option<i64> {
            match ops.get(k).and_then(|o| o.kind.keyword_text()) {
                None => Some(0),
                Some(t) => t.strip_prefix("lsl ").and_then(|n| n.parse().ok()),
            }
        };
        let v: Option<Poly> = match mn {
            "mov_imm" if d.width == Width::W32 => ops
                .iter()
                .skip(1)
                .find_map(|o| o.kind.imm_value())
                .map(|v| Poly::konst(v as u32 as i32 as i64)),
            "mov" if ops.len() == 2 => val(&regs, &ops[1]),
            "iadd" | "isub" if ops.len() >= 3 => (|| {
                let (a, b) = (val(&regs, &ops[1])?, val(&regs, &ops[2])?);
                let b = b.scale(1i64 << shift(3)?)?;
                a.add(&b, if mn == "isub" { -1 } else { 1 })
            })(),
            "imadd" if ops.len() >= 4 => (|| {
                let ab = val(&regs, &ops[1])?.mul(&val(&regs, &ops[2])?)?;
                ab.add(&val(&regs, &ops[3])?.scale(1i64 << shift(4)?)?, 1)
            })(),
            _ => None,
        };
        // every register the instruction writes is unknown, but the value
        for r in insn.defs() {
            if r.file == RegFile::Gpr {
                let n = (r.width.halves() * r.count as u16).max(1);
                for k in r.half.saturating_sub(1)..r.half + n {
                    regs.remove(&k);
                }
            }
        }
        if let (Some(p), Width::W32, 1) = (v, d.width, d.count) {
            regs.insert(d.half, p);
        }
    }
    out
}

/// Analyses the addresses of function `insns` and derives the access facts
/// over threadgroup `shape` (`line_bytes`: the cache line size).
pub fn analyze(
    insns: &[Instruction],
    facts: &Facts,
    cfg: &Cfg,
    forest: &LoopForest,
    shape: &Shape,
    line_bytes: u32,
) -> Addresses {
    analyze_with(
        insns,
        facts,
        cfg,
        forest,
        shape,
        line_bytes,
        &UniformValues::default(),
    )
}

/// [`analyze`], with the uniform registers a preamble fills read as their
/// values (`known`, [`preamble_uniforms`]).
pub fn analyze_with(
    insns: &[Instruction],
    facts: &Facts,
    cfg: &Cfg,
    forest: &LoopForest,
    shape: &Shape,
    line_bytes: u32,
    known: &[(u16, u8, Poly)],
) -> Addresses {
    let mut mem_slot = vec![NO_SLOT; insns.len()];
    let mut mem: Vec<u32> = Vec::new();
    for (i, insn) in insns.iter().enumerate() {
        if insn.mem_access().is_some() {
            mem_slot[i] = mem.len() as u32;
            mem.push(i as u32);
        }
    }
    if mem.is_empty() || cfg.blocks.is_empty() {
        return Addresses::default();
    }
    let nregs = facts
        .highest_gpr
        .map_or(2, |h| h as usize + 2)
        .clamp(2, 258);
    let mut fl = Flowing {
        insns,
        facts,
        cfg,
        forest,
        nregs,
        addr: vec![None; mem.len()],
        mem_slot,
        dims_used: dims_used(insns),
        refills: refilling_loops(insns, cfg, forest),
        known,
        clamps: Default::default(),
        shape: *shape,
    };
    let entries: Vec<(usize, State)> = cfg
        .functions
        .iter()
        .map(|f| (f.entry_block, State::entry(fl.nregs)))
        .collect();
    let mut out = dataflow::forward(cfg, &mut fl, entries);
    let mut unknown = None;
    if !out.settled {
        unknown = Some("address fixpoint did not settle".to_string());
        dataflow::replay(cfg, &mut fl, &mut out);
    }
    drop(out);
    // each access's facts are a pure function of the settled states: big
    // functions compute them on every core (in order: the same facts)
    let mut accesses = Vec::with_capacity(mem.len());
    let fl = &fl;
    let unknown_ref = &unknown;
    crate::par::map_ordered(
        mem.len(),
        &|k| {
            let i = mem[k] as usize;
            let m = insns[i].mem_access().expect("memory instruction");
            let b = cfg.block_of[i] as usize;
            let in_loop = if b < forest.loop_of.len() {
                forest.loop_of[b]
            } else {
                None
            };
            let unmodelled = Addr::Unk(Why::Unmodelled(i as u32));
            let (addr, bytes) = match (&fl.addr[k], unknown_ref) {
                (Some((a, bytes)), None) => (a, *bytes),
                _ => (&unmodelled, m.bytes_per_lane()),
            };
            facts_of(fl, i, m, addr, bytes, in_loop, shape, line_bytes)
        },
        |_, a| accesses.push(a),
    );
    // accesses after a clamp taken as its value: say so
    let mut clamps = std::mem::take(&mut *fl.clamps.lock().expect("clamps"));
    clamps.sort_unstable();
    clamps.dedup();
    if let Some(&first) = clamps.first() {
        for a in accesses.iter_mut() {
            let at = insns[a.index as usize].addr;
            let lane = a.address.as_ref().is_some_and(|p| !p.uniform());
            if at > first && lane {
                a.reason.push_str(&format!(
                    "; through min/max with a uniform bound (clamp at 0x{first:x}) taken as inactive: exact for interior threads"
                ));
            }
        }
    }
    block_neighbours(insns, cfg, &mut accesses, shape);
    walk_covers(insns, &mut accesses);
    let mut slot = vec![NO_SLOT; insns.len()];
    for (k, a) in accesses.iter().enumerate() {
        slot[a.index as usize] = k as u32;
    }
    Addresses {
        accesses,
        unknown,
        slot,
    }
}

/// An access's space: [`MemSpace::name`], texture state counted with the
/// texture accesses it describes.
fn space_name(s: MemSpace) -> &'static str {
    match s {
        MemSpace::TextureState => MemSpace::Texture.name(),
        s => s.name(),
    }
}

fn why_text(fl: &Flowing, w: Why) -> String {
    let a = |i: u32| fl.insns.get(i as usize).map_or(0, |x| x.addr);
    let blk = |b: u32| fl.cfg.blocks.get(b as usize).map_or(0, |x| x.start);
    match w {
        Why::NotAffine(i) => format!(
            "the address is not affine in the thread position (`{}` at 0x{:x})",
            fl.insns.get(i as usize).map_or("?", |x| x.mnemonic()),
            a(i)
        ),
        Why::Mixed(i) => format!(
            "the address was written under an exec mask and read by lanes that did not write it (after 0x{:x})",
            a(i)
        ),
        Why::Merge(b) => format!("per-lane values meet where paths join at 0x{:x}", blk(b)),
        Why::LoopExit(b) => format!("the address carries the iteration count of the loop at 0x{:x} out of it", blk(b)),
        Why::Call(i) => format!("a call at 0x{:x} may change the address registers", a(i)),
        Why::Undefined => "an address register is not written before it is read".to_string(),
        Why::Unmodelled(i) => format!("exec-mask code not followed (at 0x{:x})", a(i)),
    }
}

/// What exec op `op` (of `n` levels) at instruction `at` does to the
/// state's depth, its undo log and the values of the lanes it disables.
fn exec_step(s: &mut State, at: u32, op: ExecOp, n16: u16) {
    // an `if` of one level starts a fresh undo log; anything else
    // ends it
    s.undo = None;
    match op {
        ExecOp::If | ExecOp::Update => {
            s.depth = s.depth.saturating_add(n16);
            if op == ExecOp::If && n16 == 1 && s.broken.is_none() {
                s.undo = Some((s.depth, Vec::new()));
            }
        }
        ExecOp::Else => {
            let b = (s.depth + 1).saturating_sub(n16).min(s.depth);
            s.kill_from(b, at);
        }
        ExecOp::While => {
            let d2 = s.depth.max(n16);
            let b = (d2 + 1).saturating_sub(n16);
            if b < d2 || d2 > s.depth {
                s.kill_from(b + 1, at);
            }
            s.depth = d2;
        }
        ExecOp::Pop(_) => {
            if n16 > s.depth {
                s.kill_all(Why::Mixed(at));
                s.depth = 0;
            } else {
                s.depth -= n16;
                s.kill_from(s.depth + 1, at);
            }
        }
    }
}

/// The undo log: the first write of each half inside the `if`.
fn log_undo(s: &mut State, defs: &[Reg]) {
    if let Some((d, log)) = s.undo.as_mut() {
        if *d == s.depth {
            for r in defs {
                let h = r.half as usize;
                let n = (r.width.halves() as usize) * (r.count as usize) + 1;
                for k in h..(h + n).min(s.regs.len()) {
                    if !log.iter().any(|x| x.0 == k) {
                        log.push((k, s.regs[k].clone()));
                    }
                }
            }
        } else {
            s.undo = None;
        }
    }
}

/// Per-lane position in the threadgroup of lane `l` of SIMD-group `g`.
fn lane_pos(shape: &Shape, g: u32, l: u32) -> Option<[i64; 5]> {
    let lin = g * 32 + l;
    if lin >= shape.threads() {
        return None;
    }
    let x = lin % shape.w;
    let y = (lin / shape.w) % shape.h;
    let z = lin / (shape.w * shape.h);
    Some([x as i64, y as i64, z as i64, lin as i64, l as i64])
}

fn sym_value(s: Sym, pos: &[i64; 5]) -> Option<i64> {
    match s {
        Sym::Lid(d) => Some(pos[d as usize]),
        Sym::LidMod(d, m) => Some(pos[d as usize].rem_euclid(m as i64)),
        Sym::Tix => Some(pos[3]),
        Sym::Lane => Some(pos[4]),
        _ => None,
    }
}

/// [`lane_pattern`], reusing one of this thread's last [`RECENT`] results
/// when `p`'s per-lane terms, `width` and `shape` are that call's: the
/// result depends on nothing else (terms without a per-lane symbol are
/// skipped, loaded data is per-lane), and unrolled code repeats a few lane
/// parts with other constants and uniforms (a million-instruction
/// straight-line kernel: its ~250k loads alternate between two, which a
/// single remembered result missed every time).
fn lane_pattern_reused(
    p: &Poly,
    width: i64,
    shape: &Shape,
) -> (Pattern, Option<i64>, Option<u32>, Option<i64>, Text) {
    type Last = (i64, Shape, Vec<(Mono, i64)>, Lanes, Text);
    thread_local! {
        static LAST: std::cell::RefCell<Vec<Last>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let lane = |t: &&(Mono, i64)| t.0 .0.per_lane() || t.0 .1.is_some_and(|s| s.per_lane());
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        let hit = last.iter().position(|(w, sh, terms, _, _)| {
            *w == width && sh == shape && p.t.iter().filter(lane).eq(terms.iter())
        });
        if let Some(k) = hit {
            // most recent first
            last[..=k].rotate_right(1);
            let (_, _, _, r, why) = &last[0];
            return (r.0, r.1, r.2, r.3, why.clone());
        }
        let (pat, st, run, jump, why) = lane_pattern(p, width, shape);
        let why = Text::from(why);
        let terms = p.t.iter().filter(lane).copied().collect();
        last.truncate(RECENT - 1);
        last.insert(0, (width, *shape, terms, (pat, st, run, jump), why.clone()));
        (pat, st, run, jump, why)
    })
}

/// Lane-pattern results [`lane_pattern_reused`] keeps per thread.
const RECENT: usize = 4;

/// The lane pattern of a polynomial address over the SIMD-groups of
/// `shape`: (pattern, lane_stride, run, jump, reason).
fn lane_pattern(
    p: &Poly,
    width: i64,
    shape: &Shape,
) -> (Pattern, Option<i64>, Option<u32>, Option<i64>, String) {
    if p.syms().any(|s| matches!(s, Sym::Data(..))) {
        return (
            Pattern::Gather,
            None,
            None,
            None,
            "the address depends on per-lane loaded data".to_string(),
        );
    }
    // per-lane part: numeric terms, and at most one term with a uniform
    // unknown factor (`g(lane) * U`)
    let mut numeric: Vec<(Mono, i64)> = Vec::new();
    let mut symbolic: Vec<(Mono, i64)> = Vec::new();
    for &(m, v) in &p.t {
        let lane_a = m.0.per_lane();
        let lane_b = m.1.is_some_and(|s| s.per_lane());
        match (lane_a, lane_b, m.1) {
            (false, false, _) => {}
            (true, _, None) | (true, true, _) => numeric.push((m, v)),
            _ => symbolic.push((m, v)),
        }
    }
    let eval_mono = |m: &Mono, pos: &[i64; 5]| -> i64 {
        let a = sym_value(m.0, pos).unwrap_or(1);
        let b = m.1.map_or(1, |s| sym_value(s, pos).unwrap_or(1));
        a * b
    };
    let groups = shape.threads().div_ceil(32).max(1);
    // the symbolic terms by their runtime factor (`y*U + y0*U` is one);
    // a factor whose lane part is the same on every lane of each
    // SIMD-group (`z*X*Y` in an 8x8x4 threadgroup: a SIMD-group is one z)
    // moves no lane against another and is dropped
    let mut factors: Vec<Sym> = symbolic
        .iter()
        .map(|(m, _)| {
            if m.0.per_lane() {
                m.1.unwrap_or(m.0)
            } else {
                m.0
            }
        })
        .collect();
    factors.sort();
    factors.dedup();
    let lane_varying = |u: Sym| {
        (0..groups).any(|g| {
            let vals: Vec<i64> = (0..32)
                .map_while(|l| lane_pos(shape, g, l))
                .map(|pos| {
                    symbolic
                        .iter()
                        .filter(|(m, _)| m.0 == u || m.1 == Some(u))
                        .map(|(m, v)| v * eval_mono(m, &pos))
                        .sum::<i64>()
                })
                .collect();
            vals.windows(2).any(|w| w[0] != w[1])
        })
    };
    factors.retain(|&u| lane_varying(u));
    if factors.len() > 1 {
        return (
            Pattern::Unknown,
            None,
            None,
            None,
            "the lane stride is a product of several runtime values".to_string(),
        );
    }
    symbolic.retain(|(m, _)| factors.first().is_some_and(|&u| m.0 == u || m.1 == Some(u)));
    let mut found: Option<Lanes> = None;
    for g in 0..groups {
        let mut num = Vec::with_capacity(32);
        let mut sym = Vec::with_capacity(32);
        for l in 0..32 {
            let Some(pos) = lane_pos(shape, g, l) else {
                break;
            };
            num.push(
                numeric
                    .iter()
                    .map(|(m, v)| v * eval_mono(m, &pos))
                    .sum::<i64>(),
            );
            sym.push(
                symbolic
                    .iter()
                    .map(|(m, v)| v * eval_mono(m, &pos))
                    .sum::<i64>(),
            );
        }
        let r = classify(&num, &sym, width);
        match (&found, r) {
            (_, None) => {
                return (
                    Pattern::Unknown,
                    None,
                    None,
                    None,
                    "the lanes' addresses follow no stride or row pattern".to_string(),
                )
            }
            (None, Some(r)) => found = Some(r),
            (Some(f), Some(r)) if *f == r => {}
            (Some(_), Some(_)) => {
                return (
                    Pattern::Unknown,
                    None,
                    None,
                    None,
                    "the pattern differs between the SIMD-groups of the threadgroup".to_string(),
                )
            }
        }
    }
    let (pat, st, run, jump) = found.unwrap_or((Pattern::Uniform, Some(0), None, None));
    let why = match pat {
        Pattern::Uniform => "every lane computes the same address".to_string(),
        _ => format!(
            "affine in the thread position over a {}x{}x{} threadgroup ({})",
            shape.w,
            shape.h,
            shape.d,
            shape.source_text()
        ),
    };
    (pat, st, run, jump, why)
}

/// A SIMD-group's lanes: pattern, lane stride, run, jump.
type Lanes = (Pattern, Option<i64>, Option<u32>, Option<i64>);

/// Classifies one SIMD-group: `num[l]` the known per-lane offset, `sym[l]`
/// the factor of the one runtime uniform (0 when none).
fn classify(num: &[i64], sym: &[i64], width: i64) -> Option<Lanes> {
    let n = num.len();
    if n <= 1 {
        return Some((Pattern::Uniform, Some(0), None, None));
    }
    let sym_const = sym.iter().all(|&v| v == sym[0]);
    // runs: maximal spans where the symbolic factor is constant and the
    // numeric part moves by one stride
    let d0 = num[1] - num[0];
    if sym_const {
        if num.windows(2).all(|w| w[1] - w[0] == d0) {
            return Some(match d0 {
                0 => (Pattern::Uniform, Some(0), None, None),
                d if d == width => (Pattern::Contiguous, Some(d), None, None),
                d => (Pattern::Strided, Some(d), None, None),
            });
        }
    } else if sym.windows(2).all(|w| w[1] - w[0] == sym[1] - sym[0])
        && num.windows(2).all(|w| w[1] - w[0] == d0)
        && d0 == 0
    {
        // a runtime stride on every lane
        return Some((Pattern::Strided, None, None, None));
    }
    // rows: the first run's length R, stride s inside runs, the same R and
    // s in every run, and the same jump between run starts
    let mut r = 1;
    let s = d0;
    while r < n && num[r] - num[r - 1] == s && sym[r] == sym[r - 1] {
        r += 1;
    }
    if r == n || r < 2 && s != 0 {
        return None;
    }
    let r = if r == 1 {
        // runs of one lane each cannot be told from a stride
        return None;
    } else {
        r
    };
    let jump_num = num[r] - num[0];
    let jump_sym = sym[r] - sym[0];
    for start in (0..n).step_by(r) {
        for k in start + 1..(start + r).min(n) {
            if num[k] - num[k - 1] != s || sym[k] != sym[k - 1] {
                return None;
            }
        }
        if start >= r
            && (num[start] - num[start - r] != jump_num || sym[start] - sym[start - r] != jump_sym)
        {
            return None;
        }
    }
    let jump = (jump_sym == 0).then_some(jump_num);
    Some((Pattern::Rows, Some(s), Some(r as u32), jump))
}

#[allow(clippy::too_many_arguments)]
fn facts_of(
    fl: &Flowing,
    i: usize,
    m: agx_isa::MemAccess,
    addr: &Addr,
    bytes: u32,
    in_loop: Option<usize>,
    shape: &Shape,
    line_bytes: u32,
) -> Access {
    let space = space_name(m.space);
    let dir = m.dir.name();
    let mut a = Access::unknown(i as u32, space, dir, bytes);
    a.in_loop = in_loop;
    a.reuse.known = !(m.dir == MemDir::Load && m.space != MemSpace::Stack);
    let p = match addr {
        Addr::Unk(w) => {
            a.reason = why_text(fl, *w).into();
            return a;
        }
        Addr::P(p) => p,
    };
    a.address = Some(p.clone());
    let is_stack = m.space == MemSpace::Stack;
    let (pat, st, run, jump, why) = lane_pattern_reused(p, bytes as i64, shape);
    a.lane_pattern = pat;
    if pat == Pattern::Uniform {
        a.bytes_per_request = bytes;
    }
    a.lane_stride = st;
    a.run = run;
    a.jump = jump;
    a.reason = why;
    if pat == Pattern::Strided && st.is_none() {
        if let Some((c, u)) = symbolic_lane_stride(p, shape) {
            a.lane_stride_expr = Some(format!("{c}*{}", u.name()));
            if matches!(m.space, MemSpace::Device) && c != 0 {
                let lb = i64::from(line_bytes.max(1));
                let per_lane = (i64::from(bytes) + lb - 1) / lb;
                let lanes = i64::from(shape.threads().min(32));
                a.lines_per_request_if_wide = Some((lanes * per_lane) as u32);
                a.wide_from = Some((lb + c.abs() - 1) / c.abs());
            }
        }
    }
    if is_stack && !matches!(pat, Pattern::Uniform | Pattern::Unknown) {
        // a lane-varying slot of each thread's own stack
        a.lane_pattern = Pattern::Gather;
        a.lane_stride = None;
        a.run = None;
        a.jump = None;
        a.reason = "the stack slot differs between lanes".into();
    }
    // loop stride: the coefficient of the innermost loop's counter
    if let Some(l) = in_loop {
        let (coef, rest) = p.split_k(l as u32);
        let rest_inv = rest.syms().all(|s| !fl.varies_in(s, l));
        if rest_inv {
            a.loop_stride = coef.as_const();
            if a.loop_stride.is_none() {
                a.loop_stride_expr = coef
                    .one_uniform_term()
                    .map(|(c, u)| format!("{c}*{}", u.name()));
                a.reason.push_str("; the loop stride is a runtime value");
            }
        } else {
            a.reason
                .push_str("; the address changes across iterations by a value not followed");
        }
    }
    // cache lines per request (device and texture memory)
    if matches!(m.space, MemSpace::Device) {
        a.lines_per_request = lines(&a, shape, line_bytes);
    }
    // reuse: the same element read by other threads / later iterations
    if m.dir == MemDir::Load && !is_stack {
        a.reuse.known = !p.syms().any(|s| matches!(s, Sym::Data(..)));
        let lanes_free = |d: u8, extent: u32| {
            extent > 1
                && !p.syms().any(|s| {
                    s.on_lid(d) || s == Sym::Tix || s == Sym::Lane || matches!(s, Sym::Data(..))
                })
        };
        a.reuse.threads = !p.syms().any(|s| matches!(s, Sym::Data(..)))
            && (lanes_free(0, shape.w) || lanes_free(1, shape.h) || lanes_free(2, shape.d));
        if !a.reuse.threads && a.lane_pattern == Pattern::Rows && a.jump == Some(0) {
            // the runs of one request read the same elements
            a.reuse.threads = true;
            a.reason
                .push_str("; the runs of lanes of one request read the same elements");
        }
        if !a.reuse.threads && a.reuse.known {
            if let Some(m) = loop_neighbour(fl, p, in_loop, shape) {
                a.reuse.threads = true;
                a.reason.push_str(&format!(
                    "; a neighbouring thread reads the same element {m} iteration(s) away \
                     (the loop walks the address by a multiple of the thread's step)"
                ));
            }
        }
        a.reuse.iterations = a.loop_stride == Some(0);
        if a.reuse.iterations
            && m.space == MemSpace::Threadgroup
            && in_loop.is_some_and(|l| fl.refills.get(l).copied().unwrap_or(false))
        {
            // the same threadgroup address holds new data each iteration
            // (issue 35: tile reads are not re-reads across iterations)
            a.reuse.iterations = false;
            a.reason.push_str(
                "; the loop refills threadgroup memory, so a later iteration reads new data",
            );
        }
        // (threadgroup memory is per threadgroup: another threadgroup's
        // thread reads its own copy)
        if m.space != MemSpace::Threadgroup {
            a.reuse.grid_dimension = grid_dimension(fl, p);
        }
        a.reuse.simd_groups = simd_sharers(p, shape);
    }
    a
}

/// A symbolic lane stride: the address's only lane-varying term is a
/// per-lane position times one uniform symbol with a name (a uniform or
/// special register), so consecutive lanes of the first SIMD-group are
/// `c * u` bytes apart: `(c, u)`.
fn symbolic_lane_stride(p: &Poly, shape: &Shape) -> Option<(i64, Sym)> {
    let mut lane_terms =
        p.t.iter()
            .filter(|(m, v)| *v != 0 && (m.0.per_lane() || m.1.is_some_and(Sym::per_lane)));
    let &((a, b), v) = lane_terms.next()?;
    if lane_terms.next().is_some() {
        return None;
    }
    let (lane, u) = match (a.per_lane(), b) {
        (true, Some(u)) if !u.per_lane() => (a, u),
        (false, Some(l)) if l.per_lane() => (l, a),
        _ => return None,
    };
    if !u.named() {
        return None;
    }
    let (p0, p1) = (lane_pos(shape, 0, 0)?, lane_pos(shape, 0, 1)?);
    let step = sym_value(lane, &p1)? - sym_value(lane, &p0)?;
    let c = v.checked_mul(step)?;
    (c != 0).then_some((c, u))
}

/// Iterations `r` (0 < |r| < the threadgroup's extent along a dimension)
/// such that a loop enclosing the access moves its address by exactly `r`
/// times the step of one thread along that dimension: then the thread `r`
/// positions further reads, one iteration earlier, the element this one
/// reads (the taps of a convolution walking `x[i + j]`). The rest of the
/// address must not change in the loop. None without such a loop.
fn loop_neighbour(fl: &Flowing, p: &Poly, in_loop: Option<usize>, shape: &Shape) -> Option<i64> {
    in_loop?;
    let coef = position_coefficients(p, shape)?;
    let extent = [shape.w, shape.h, shape.d];
    let mut cur = in_loop;
    while let Some(l) = cur {
        let (ck, rest) = p.split_k(l as u32);
        let invariant =
            rest.syms().all(|s| !fl.varies_in(s, l)) && ck.syms().all(|s| !fl.varies_in(s, l));
        if invariant && (ck.c != 0 || !ck.t.is_empty()) {
            for d in 0..3 {
                let cd = &coef[d];
                if extent[d] <= 1 || (cd.c == 0 && cd.t.is_empty()) {
                    continue;
                }
                if let Some(r) = ratio(&ck, cd) {
                    if r.unsigned_abs() < extent[d] as u64 {
                        return Some(r.abs());
                    }
                }
            }
        }
        cur = fl.forest.loops[l].parent;
    }
    None
}

/// Loads of one basic block that read the same elements as a neighbouring
/// thread's load of that block: where two device/texture load addresses
/// `p`, `q` in the same block (the same threads run both) have the same
/// thread-position coefficients and differ by exactly `r` steps of one
/// thread along a dimension (0 < |r| < the threadgroup's extent there),
/// the thread `r` positions away reads with one what this thread reads
/// with the other (the taps of a stencil, `u[i - 1]`, `u[i]`, `u[i + X]`).
/// Both are marked `reuse.threads`.
fn block_neighbours(insns: &[Instruction], cfg: &Cfg, acc: &mut [Access], shape: &Shape) {
    let extent = [shape.w, shape.h, shape.d];
    let mut hit = vec![None; acc.len()];
    // by block and coefficients; each load is paired with the next
    // NEIGHBOUR_WINDOW loads of its group (a stencil's taps sit together):
    // linear in the loads of a function (the groups are built directly:
    // one coefficient triple per group, not per load)
    let mut groups: std::collections::HashMap<(u32, [Poly; 3]), Vec<usize>> = Default::default();
    for (k, a) in acc.iter().enumerate() {
        if a.dir != MemDir::Load.name() || !a.reuse.known {
            continue;
        }
        if !matches!(a.space, "device" | "texture") {
            continue;
        }
        let Some(p) = a.address.as_ref() else {
            continue;
        };
        // no thread-position term: every coefficient is 0, and so is every
        // coefficient of its group, which then pairs nothing
        if !p.syms().any(|s| matches!(s, Sym::Lid(_) | Sym::Tix)) {
            continue;
        }
        let Some(c) = position_coefficients(p, shape) else {
            continue;
        };
        if (0..3).all(|d| extent[d] <= 1 || (c[d].c == 0 && c[d].t.is_empty())) {
            continue;
        }
        if insns.get(a.index as usize).is_none() {
            continue;
        }
        groups
            .entry((cfg.block_of[a.index as usize], c))
            .or_default()
            .push(k);
    }
    for ((_, ci), members) in &groups {
        for (x, i) in members.iter().enumerate() {
            for j in members[x + 1..].iter().take(NEIGHBOUR_WINDOW) {
                let (Some(p), Some(q)) = (&acc[*i].address, &acc[*j].address) else {
                    continue;
                };
                // (the same address: no difference to find)
                if p == q {
                    continue;
                }
                let Some(diff) = p.add(q, -1) else {
                    continue;
                };
                if diff.c == 0 && diff.t.is_empty() {
                    continue;
                }
                let found = (0..3).find_map(|d| {
                    let cd = &ci[d];
                    if extent[d] <= 1 || (cd.c == 0 && cd.t.is_empty()) {
                        return None;
                    }
                    let r = ratio(&diff, cd)?;
                    (r.unsigned_abs() < extent[d] as u64).then_some((d, r.abs()))
                });
                if let Some(f) = found {
                    hit[*i].get_or_insert((acc[*j].index, f));
                    hit[*j].get_or_insert((acc[*i].index, f));
                }
            }
        }
    }
    for (a, h) in acc.iter_mut().zip(hit) {
        if let (Some((other, (d, r))), false) = (h, a.reuse.threads) {
            a.reuse.threads = true;
            let at = insns.get(other as usize).map_or(0, |i| i.addr);
            a.reason.push_str(&format!(
                "; the thread {r} position(s) away along {} reads this element with the load at 0x{at:x} of the same block",
                ["x", "y", "z"][d]
            ));
        }
    }
}

/// Loads of one block and thread-position coefficients each is compared
/// with (the next ones in program order): bounds [`block_neighbours`] to
/// linear work on unrolled code.
const NEIGHBOUR_WINDOW: usize = 8;

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

/// Per-thread loads whose elements a uniform walk of the same buffer reads:
/// loads of one loop whose addresses do not depend on the thread (`pos[j +
/// k]`, `k` = 0..11, `j += 12`) read, over the iterations, every address
/// `base + c + stride * n` for their offsets `c`; a per-thread load `base +
/// c0 + g * position` (numeric, positive position coefficients of gcd `g`)
/// whose every residue class `c0 + g*t` modulo the loop stride holds one
/// of those offsets at or below `c0 + g*t` reads an element the walk brings
/// to every thread (the n-body's own `pos[i]`). Marked `reuse.threads`;
/// as the labels, for threads whose element the loop reaches (its trip
/// count is the code's).
fn walk_covers(insns: &[Instruction], acc: &mut [Access]) {
    // the walks: (loop, stride, base without constant) -> offsets, loads
    let mut walks: Vec<(usize, i64, Poly, Vec<i64>, u32)> = Vec::new();
    let mut slot: std::collections::HashMap<(usize, i64, Poly), usize> = Default::default();
    for a in acc.iter() {
        let (Some(l), Some(st), Some(p)) = (a.in_loop, a.loop_stride, a.address.as_ref()) else {
            continue;
        };
        if a.dir != MemDir::Load.name() || a.space != "device" || st <= 0 || !p.uniform() {
            continue;
        }
        let (_, mut rest) = p.split_k(l as u32);
        let c = rest.c;
        rest.c = 0;
        match slot.get(&(l, st, rest.clone())) {
            Some(&k) => walks[k].3.push(c),
            None => {
                slot.insert((l, st, rest.clone()), walks.len());
                walks.push((l, st, rest, vec![c], a.index));
            }
        }
    }
    if walks.is_empty() {
        return;
    }
    let mut by_rest: std::collections::HashMap<Poly, Vec<usize>> = Default::default();
    for (k, w) in walks.iter().enumerate() {
        by_rest.entry(w.2.clone()).or_default().push(k);
    }
    for a in acc.iter_mut() {
        if a.reuse.threads || !a.reuse.known || a.dir != MemDir::Load.name() || a.space != "device"
        {
            continue;
        }
        let Some(p) = a.address.as_ref() else {
            continue;
        };
        if p.uniform() {
            continue;
        }
        // split into the thread-position terms (numeric, positive) and the
        // rest
        let mut g = 0i64;
        let mut rest = Poly::konst(0);
        let mut ok = true;
        for &(m, v) in &p.t {
            let pos = |s: Sym| {
                matches!(
                    s,
                    Sym::Lid(_) | Sym::Tix | Sym::Sr(0..=2) | Sym::Sr(1000..=1002)
                )
            };
            if m.1.is_none() && pos(m.0) {
                ok &= v > 0;
                g = gcd(g, v);
            } else if m.0.per_lane() || m.1.is_some_and(|s| s.per_lane() || pos(s)) || pos(m.0) {
                ok = false;
            } else {
                rest.t.push((m, v));
            }
        }
        if !ok || g == 0 {
            continue;
        }
        let c0 = p.c;
        let Some(ws) = by_rest.get(&rest) else {
            continue;
        };
        let hit = ws.iter().map(|&k| &walks[k]).find(|w| {
            let residue = |c: i64| c.rem_euclid(w.1);
            w.1 % g == 0
                && w.3.len() as i64 >= w.1 / g
                && (0..w.1 / g).all(|t| {
                    // the walk reaches the class of c0 + g*t at or below it
                    let at = c0 + g * t;
                    w.3.iter().any(|&c| residue(c) == residue(at) && c <= at)
                })
        });
        if let Some(w) = hit {
            a.reuse.threads = true;
            let at = insns.get(w.4 as usize).map_or(0, |i| i.addr);
            a.reason.push_str(&format!(
                "; every thread reads this element again through the uniform walk of the same buffer by the loop's load at 0x{at:x} and its neighbours ({} loads, {} B per iteration)",
                w.3.len(),
                w.1
            ));
        }
    }
}

/// SIMD-groups of a `shape` threadgroup that read the same elements at `p`:
/// lanes are numbered x fastest, 32 to a SIMD-group, so the SIMD-groups
/// differ in the dimensions above the first 32 lanes; those the address
/// does not depend on multiply the sharers. 1 for a shape whose
/// SIMD-groups do not split along whole rows or planes, or an address
/// through per-lane data or the flattened thread index.
fn simd_sharers(p: &Poly, shape: &Shape) -> u32 {
    if p.syms()
        .any(|s| matches!(s, Sym::Data(..) | Sym::Tix | Sym::Lane))
    {
        return 1;
    }
    let free = |d: u8| !p.syms().any(|s| s.on_lid(d));
    let (w, h, d) = (shape.w.max(1), shape.h.max(1), shape.d.max(1));
    // SIMD-group positions along x, y, z
    let along: [u32; 3] = if w % 32 == 0 {
        [w / 32, h, d]
    } else if 32 % w == 0 && h % (32 / w) == 0 {
        [1, h / (32 / w), d]
    } else if 32 % (w * h) == 0 && d % (32 / (w * h)) == 0 {
        [1, 1, d / (32 / (w * h))]
    } else {
        return 1;
    };
    (0..3u8)
        .filter(|&k| free(k))
        .map(|k| along[k as usize])
        .product::<u32>()
        .max(1)
}

/// Per loop of `forest`: whether it or a loop nested in it stores to
/// threadgroup memory.
fn refilling_loops(insns: &[Instruction], cfg: &Cfg, forest: &LoopForest) -> Vec<bool> {
    let mut out = vec![false; forest.loops.len()];
    for (i, insn) in insns.iter().enumerate() {
        let Some(m) = insn.mem_access() else {
            continue;
        };
        if m.space != MemSpace::Threadgroup || m.dir != MemDir::Store {
            continue;
        }
        let b = cfg.block_of[i] as usize;
        let mut cur = forest.loop_of.get(b).copied().flatten();
        while let Some(l) = cur {
            if out[l] {
                break;
            }
            out[l] = true;
            cur = forest.loops[l].parent;
        }
    }
    out
}

/// The dimensions whose thread position the kernel reads: special
/// registers 0-2 (threadgroup_position_in_grid), 48-50
/// (thread_position_in_threadgroup), 80-82 (thread_position_in_grid)
/// ([`crate::special_regs`]).
fn dims_used(insns: &[Instruction]) -> [bool; 3] {
    let mut used = [false; 3];
    for i in insns {
        for o in i.operands.iter() {
            if let OperandKind::SpecialReg(n) = o.kind {
                let d = match n {
                    0..=2 => n,
                    48..=50 => n - 48,
                    80..=82 => n - 80,
                    _ => continue,
                };
                used[d as usize] = true;
            }
        }
    }
    used
}

/// The first dimension the kernel reads whose thread position the address
/// `p` does not depend on (no per-lane data, no flattened thread index):
/// the threads along it read the same element.
fn grid_dimension(fl: &Flowing, p: &Poly) -> Option<&'static str> {
    if p.syms()
        .any(|s| matches!(s, Sym::Data(..) | Sym::Tix | Sym::Lane))
    {
        return None;
    }
    // an address through no thread or threadgroup position at all: every
    // thread of the dispatch reads it, along x first (a prolog, which reads
    // no position)
    if !p
        .syms()
        .any(|s| s.per_lane() || matches!(s, Sym::Sr(0..=2) | Sym::Sr(1000..=1002)))
    {
        return Some("x");
    }
    (0..3u8)
        .find(|&d| {
            fl.dims_used[d as usize]
                && !p
                    .syms()
                    .any(|s| s.on_lid(d) || s == Sym::Sr(1000 + d as u16) || s == Sym::Sr(d as u16))
        })
        .map(|d| ["x", "y", "z"][d as usize])
}

/// Distinct `line_bytes` lines one SIMD-group's request touches, when the
/// pattern gives it (lines are counted from an aligned start).
fn lines(a: &Access, shape: &Shape, line_bytes: u32) -> Option<u32> {
    let lanes = shape.threads().min(32) as i64;
    let w = a.bytes_per_lane as i64;
    let lb = line_bytes as i64;
    let span = |n: i64, s: i64| -> i64 {
        // n lanes s apart, each w bytes
        if s == 0 {
            (w + lb - 1) / lb
        } else if s.abs() >= lb {
            n * ((w + lb - 1) / lb)
        } else {
            ((n - 1) * s.abs() + w + lb - 1) / lb
        }
    };
    match a.lane_pattern {
        Pattern::Uniform => Some(span(1, 0) as u32),
        Pattern::Contiguous | Pattern::Strided => a.lane_stride.map(|s| span(lanes, s) as u32),
        Pattern::Rows => {
            let (run, s) = (a.run? as i64, a.lane_stride?);
            let runs = (lanes + run - 1) / run;
            match a.jump {
                Some(0) => Some(span(run.min(lanes), s) as u32),
                _ => Some((runs * span(run.min(lanes), s)) as u32),
            }
        }
        // per-lane data decides: between 1 and 32 lines, not known
        Pattern::Gather | Pattern::Unknown => None,
    }
}
