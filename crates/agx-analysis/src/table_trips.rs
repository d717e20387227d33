//! Trip counts from the code table (any family whose filler gives integer
//! compares, immediates and exec tests: Apple9 today; G13 loops keep
//! `crate::trip_count`, which reads its instructions). A loop's exit tests
//! are its `while` rows; each reads a predicate bank, set by an integer
//! compare (`uniformity::Uniformity::pred_source`) of a counter against an
//! immediate or a uniform register. The counter is proved when it has one
//! definition inside the loop, `c = c + step` (an immediate), and one
//! outside it, before the loop, an immediate `c0`; the compare sees
//! `c0 + k·step` on iteration k (or `c0 + (k-1)·step` when it comes before
//! the step). Lanes leave when the compare (after its invert bit) equals
//! the test's polarity (docs/apple9-exec-mask.md: inferred direction).
//!
//! One test proved and no other: `code`. Several tests, one proved:
//! `bounded` (at most that many). A test against a uniform register:
//! `argument` (its name). Anything else: `default`.

use crate::cfg::Cfg;
use crate::loops::{LoopForest, LoopNest};
use crate::uniformity::Uniformity;
use agx_isa::table::{AluOp, CodeTable, Pred, RegRange};
use agx_isa::ExecOp;

/// The most iterations a proved count may have (a bound past it is taken
/// as not proved).
const MAX_COUNT: i64 = 1 << 24;

/// What the code proves of one loop's trip count.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableTrip {
    /// `code`, `bounded`, `argument` or `default`.
    pub source: &'static str,
    /// The proved count (`code`) or maximum (`bounded`).
    pub count: Option<u32>,
    /// The uniform register an `argument` bound is (`u5`).
    pub bound: Option<String>,
}

/// One exit test's fact.
enum Test {
    Count(u32),
    Argument(String),
    Unknown,
}

fn same(a: &RegRange, b: &RegRange) -> bool {
    a.start == b.start && a.len == b.len && a.is_uniform() == b.is_uniform()
}

/// The rows defining `r` (any overlap), in row order.
fn defs_of(t: &CodeTable, r: &RegRange) -> Vec<usize> {
    (0..t.rows.len())
        .filter(|&i| {
            !t.rows[i].complete
                || t.defs(i).any(|d| {
                    d.is_uniform() == r.is_uniform()
                        && d.range().start < r.range().end
                        && r.range().start < d.range().end
                })
        })
        .collect()
}

/// The fact of the exit test at row `w` of the loop whose rows are `inside`.
fn test_fact(
    t: &CodeTable,
    u: &Uniformity,
    w: usize,
    inside: &dyn Fn(usize) -> bool,
    header: u32,
) -> Test {
    let (Some(Pred::Read(bank)), Some(pol)) = (t.rows[w].pred, t.rows[w].compare) else {
        return Test::Unknown;
    };
    let Some(c) = u.pred_source(w, bank) else {
        return Test::Unknown;
    };
    let Some(cmp) = t.rows[c].compare else {
        return Test::Unknown;
    };
    let uses: Vec<RegRange> = t.uses(c).copied().collect();
    let Some(a) = uses.first().filter(|a| !a.is_uniform()).copied() else {
        return Test::Unknown;
    };
    let bound = match (t.rows[c].imm, uses.get(1)) {
        (Some(v), None) => v,
        (None, Some(b)) if b.is_uniform() => {
            return if counter(t, &a, inside, header).is_some() {
                Test::Argument(crate::uniformity::reg_text(b))
            } else {
                Test::Unknown
            };
        }
        _ => return Test::Unknown,
    };
    let Some((c0, step, d)) = counter(t, &a, inside, header) else {
        return Test::Unknown;
    };
    // the compare sees the stepped value when it comes after the step
    let after = t.rows[c].addr > t.rows[d].addr;
    for k in 1..=MAX_COUNT {
        let v = c0 + step * if after { k } else { k - 1 };
        let holds = cmp.cond.holds(v, bound) != cmp.invert;
        if holds == pol.invert {
            return Test::Count(k as u32);
        }
    }
    Test::Unknown
}

/// `a`'s start value, step and stepping row, when its only definitions are
/// `a = a + step` inside the loop and one immediate before the header.
fn counter(
    t: &CodeTable,
    a: &RegRange,
    inside: &dyn Fn(usize) -> bool,
    header: u32,
) -> Option<(i64, i64, usize)> {
    let defs = defs_of(t, a);
    let (ins, outs): (Vec<usize>, Vec<usize>) = defs.into_iter().partition(|&i| inside(i));
    let (&[d], &[i0]) = (ins.as_slice(), outs.as_slice()) else {
        return None;
    };
    let step_row = &t.rows[d];
    let reads_itself = t.uses(d).any(|x| same(x, a)) && t.uses(d).count() == 1;
    let step = match step_row.op {
        AluOp::Add if reads_itself => step_row.imm?,
        AluOp::Sub if reads_itself => -step_row.imm?,
        _ => return None,
    };
    let init = &t.rows[i0];
    if init.op != AluOp::Imm || init.addr >= header || !t.defs(i0).any(|x| same(x, a)) {
        return None;
    }
    (step != 0).then_some((init.imm?, step, d))
}

/// The trip facts of every loop of `nest` (same order).
pub fn analyze(
    t: &CodeTable,
    cfg: &Cfg,
    forest: &LoopForest,
    nest: &LoopNest,
    u: &Uniformity,
) -> Vec<TableTrip> {
    // each loop's own rows (its exit tests are among them), in one pass
    let mut own: Vec<Vec<usize>> = vec![Vec::new(); nest.loops.len()];
    for (i, o) in nest.owner.iter().enumerate() {
        if let Some(l) = o {
            own[*l as usize].push(i);
        }
    }
    nest.loops
        .iter()
        .enumerate()
        .map(|(l, nl)| {
            let header = cfg.blocks[forest.loops[nl.forest].header].start;
            // its own exit tests (a nested loop's tests are the nested loop's)
            let tests: Vec<Test> = own[l]
                .iter()
                .copied()
                .filter(|&i| matches!(t.rows[i].exec, Some((ExecOp::While, _))))
                .map(|w| test_fact(t, u, w, &|i| nest.contains(l, i), header))
                .collect();
            trip_of(&tests)
        })
        .collect()
}

fn trip_of(tests: &[Test]) -> TableTrip {
    let counts: Vec<u32> = tests
        .iter()
        .filter_map(|x| match x {
            Test::Count(k) => Some(*k),
            _ => None,
        })
        .collect();
    match (counts.iter().min(), tests.len()) {
        (Some(&k), 1) => TableTrip {
            source: "code",
            count: Some(k),
            bound: None,
        },
        (Some(&k), _) => TableTrip {
            source: "bounded",
            count: Some(k),
            bound: None,
        },
        (None, _) => match tests.iter().find_map(|x| match x {
            Test::Argument(n) => Some(n.clone()),
            _ => None,
        }) {
            Some(n) => TableTrip {
                source: "argument",
                count: None,
                bound: Some(n),
            },
            None => TableTrip {
                source: "default",
                count: None,
                bound: None,
            },
        },
    }
}
