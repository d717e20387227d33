//! `divergent-branch`: an if/else whose condition is not uniform: the SIMD-group runs both arms.

use super::{Context, Need, Rule, TableContext};
use crate::divergence::{only_moves, BranchKind};
use crate::timing::suggest::{severity_for_share, share_pct, Suggestion};

pub struct DivergentBranch;

/// A row that moves a value or controls flow and does no work.
fn only_a_move(t: &agx_isa::table::CodeTable, i: usize) -> bool {
    use agx_isa::table::AluOp;
    let r = &t.rows[i];
    matches!(r.op, AluOp::Move | AluOp::Imm)
        || matches!(
            r.class,
            agx_isa::Category::ExecMask | agx_isa::Category::Control
        )
}

impl Rule for DivergentBranch {
    fn id(&self) -> &'static str {
        "divergent-branch"
    }
    fn help(&self) -> &'static str {
        "An if/else with a non-uniform condition runs both arms: make the condition uniform, move the work out of the arms, or sort the work."
    }
    fn needs(&self) -> &'static [Need] {
        &[Need::Timing, Need::Divergence]
    }
    /// From the code table: an `if` with a divergent verdict and an
    /// `else` in its region, both arms weighed in issue slots (not cycles);
    /// an else that only moves values is the compiler's merge, not work.
    fn evaluate_table(&self, cx: &TableContext<'_>, out: &mut Vec<Suggestion>) {
        let slots = |r: std::ops::Range<usize>| -> u64 {
            r.map(|i| cx.executions.get(i).copied().unwrap_or(1)).sum()
        };
        for b in cx
            .branches
            .iter()
            .filter(|b| b.kind == BranchKind::If && b.uniform == Some(false))
        {
            let Some((s, e)) = b.arms else { continue };
            let Some(els) = cx.branches.iter().find(|x| {
                x.kind == BranchKind::Else && x.index > s && x.arms.is_some_and(|(_, xe)| xe == e)
            }) else {
                continue;
            };
            let else_rows = els.index + 1..e;
            if else_rows.clone().all(|i| only_a_move(cx.table, i)) {
                continue;
            }
            let (then_s, else_s) = (slots(s..els.index), slots(else_rows));
            let extra = then_s.min(else_s);
            if extra == 0 {
                continue;
            }
            let share = share_pct(extra as f64, cx.total_slots as f64);
            let reason = b.reason.clone();
            let (at, else_at) = (b.at, els.at);
            out.push(
                Suggestion::new(
                    severity_for_share(share),
                    at,
                    "divergent-branch",
                    &[
                        ("then_issue_slots", then_s as f64),
                        ("else_issue_slots", else_s as f64),
                        ("share_pct", share),
                    ],
                    |f| {
                        format!(
                            "Divergent if/else at 0x{at:x} ({reason}): the SIMD-group runs both arms ({} issue slots then, {} else at 0x{else_at:x}; issue slots, not cycles), the shorter arm {}% of the kernel's. Make the condition uniform (branch on threadgroup or SIMD-group values), move the work out of the arms, or sort/bin the work so a SIMD-group's threads agree.",
                            f("then_issue_slots"),
                            f("else_issue_slots"),
                            f("share_pct")
                        )
                    },
                )
                .with_fact(format!(
                    "the if at 0x{at:x} has an else (0x{else_at:x}) and its condition is not uniform"
                ))
                .with_sites(vec![else_at]),
            );
        }
    }
    fn evaluate(&self, cx: &Context<'_>, out: &mut Vec<Suggestion>) {
        let (t, insns) = (cx.timing, cx.insns);
        let Some(d) = cx.divergence else { return };
        let total = t.total_cycles;
        if total <= 0.0 {
            return;
        }
        for (k, b) in d
            .branches
            .iter()
            .enumerate()
            .filter(|(_, b)| !b.uniform && b.kind == BranchKind::If)
        {
            let arms = b.arms_cycles.unwrap_or(0.0);

            let Some((_, e)) = b.arms else { continue };
            // its else: the next else branch inside its arms ending where it ends
            let Some(els) = d.branches[k + 1..]
                .iter()
                .take_while(|x| x.arms.is_none_or(|(xs, _)| xs < e))
                .find(|x| x.kind == BranchKind::Else && x.arms.is_some_and(|(_, xe)| xe == e))
            else {
                continue;
            };
            // an else that only moves values into registers is the
            // compiler's merge of a value (`x = c ? f() : 0`), not a
            // second arm of work
            if els.arms.is_some_and(|r| only_moves(insns, r)) {
                continue;
            }
            let else_cy = els.arms_cycles.unwrap_or(0.0);
            let then_cy = (arms - else_cy).max(0.0);
            let extra = then_cy.min(else_cy);
            let share = share_pct(extra, total);
            if extra <= 0.0 {
                continue;
            }
            let reason = b.reason.clone();
            out.push(
                    Suggestion::new(
                        severity_for_share(share),
                        b.at,
                        "divergent-branch",
                        &[
                            ("then_cycles", then_cy),
                            ("else_cycles", else_cy),
                            ("extra_cycles", extra),
                            ("total_cycles", total),
                            ("share_pct", share),
                        ],
                        |f| {
                            format!(
                            "Divergent if/else at 0x{:x} ({reason}): the SIMD-group runs both arms ({} cy then, {} cy else at 0x{:x}), {} cy more than one arm, of {} cy ({}%). Make the condition uniform (branch on threadgroup or SIMD-group values), move the work out of the arms, or sort/bin the work so a SIMD-group's threads agree.",
                            b.at,
                            f("then_cycles"),
                            f("else_cycles"),
                            els.at,
                            f("extra_cycles"),
                            f("total_cycles"),
                            f("share_pct")
                        )
                        },
                    )
                    .with_fact(format!(
                        "the if at 0x{:x} has an else (0x{:x}) and its condition is not uniform",
                        b.at, els.at
                    ))
                    .with_sites(vec![els.at]),
                );
        }
    }
}
