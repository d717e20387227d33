//! `division-rcp-fmul`: an rcp whose result is multiplied within the next 6
//! instructions (a division), one per region, where the code shows the
//! divisor reused: several rcps of one register with no write between, or a
//! loop-invariant divisor in a loop (issue 35 item 6: no hedged "if the
//! divisor is reused" advice).

use super::facts::innermost_loop;
use super::{Context, Need, Rule};
use crate::timing::suggest::{severity_for_share, Suggestion};
use agx_isa::RegFile;
use std::collections::HashSet;

pub struct DivisionRcpFmul;

impl Rule for DivisionRcpFmul {
    fn id(&self) -> &'static str {
        "division-rcp-fmul"
    }
    fn help(&self) -> &'static str {
        "A division (rcp then multiply) whose divisor is reused (several rcps of one register, or loop-invariant): compute its reciprocal once and multiply."
    }
    fn needs(&self) -> &'static [Need] {
        &[Need::Timing]
    }
    fn evaluate(&self, cx: &Context<'_>, out: &mut Vec<Suggestion>) {
        let (fx, insns) = (&cx.facts, cx.insns);
        let divs = divisions(cx);
        for group in divs.chunk_by(|a, b| a.region == b.region) {
            // the advice only where the code shows the reciprocal reused
            let kept: Vec<&Division> = group.iter().filter(|d| d.why.is_some()).collect();
            let Some(d) = kept.first() else {
                continue;
            };
            let (lp, at, c) = (d.region, d.at, &insns[d.consumer]);
            let why = d.why.clone().unwrap_or_default();
            let sites: Vec<u32> = kept.iter().map(|d| d.at).collect();
            let share = fx.share_of(&sites);
            out.push(
                Suggestion::new(
                    severity_for_share(share),
                    at,
                    self.id(),
                    &[
                        ("divisions", kept.len() as f64),
                        ("rcp_ic_cycles", fx.cycles_at(at, 6.0)),
                        ("share_pct", share),
                    ],
                    |f| {
                        format!(
                    "{} division(s){}: rcp at 0x{at:x} ({} IC cy) feeds {} at 0x{:x}; {}% of the estimate. Its divisor {why}: compute its reciprocal once and multiply.",
                    f("divisions"),
                    lp.map(|h| format!(" inside the loop at 0x{h:x}")).unwrap_or_default(),
                    f("rcp_ic_cycles"),
                    c.mnemonic(),
                    c.addr,
                    f("share_pct")
                )
                    },
                )
                .with_fact(format!(
                    "an rcp's result is multiplied within the next 6 instructions (a division) and its divisor {why}"
                ))
                .with_sites(sites),
            );
        }
    }
}

/// One division: an rcp whose result a multiply within the next 6
/// instructions reads.
struct Division {
    /// innermost loop header (None outside loops)
    region: Option<u32>,
    at: u32,
    /// index of the multiply
    consumer: usize,
    /// what shows the divisor reused, if the code does
    why: Option<String>,
}

/// The divisions of the function by region then address.
fn divisions(cx: &Context<'_>) -> Vec<Division> {
    let (fx, insns) = (&cx.facts, cx.insns);
    let mut divs: Vec<Division> = Vec::new();
    let mut rcps: Vec<usize> = Vec::new();
    for (idx, i) in insns.iter().enumerate() {
        if fx.key_of(idx) != agx_isa::CostKey::Rcp {
            continue;
        }
        rcps.push(idx);
        let defs = gpr_halves(i.defs());
        if defs.is_empty() {
            continue;
        }
        let consumer = insns[idx + 1..].iter().take(6).position(|j| {
            j.cost_key().is_fmul()
                && j.uses()
                    .any(|r| r.file == RegFile::Gpr && r.half_range().any(|h| defs.contains(&h)))
        });
        if let Some(c) = consumer {
            let l = innermost_loop(cx.timing, i.addr);
            divs.push(Division {
                region: l.map(|l| l.header),
                at: i.addr,
                consumer: idx + 1 + c,
                why: None,
            });
        }
    }
    for d in &mut divs {
        d.why = reuse(cx, &rcps, d);
    }
    divs.sort_by_key(|d| (d.region, d.at));
    divs
}

fn gpr_halves<'r>(regs: impl Iterator<Item = &'r agx_isa::Reg>) -> Vec<u32> {
    regs.filter(|r| r.file == RegFile::Gpr)
        .flat_map(|r| r.half_range())
        .collect()
}

/// What shows the division's divisor reused: another rcp of the same
/// register with no write of it between, or, in a loop, a divisor the loop
/// never writes (a uniform register, or a register no instruction of the
/// loop writes).
fn reuse(cx: &Context<'_>, rcps: &[usize], d: &Division) -> Option<String> {
    let insns = cx.insns;
    let k = cx.facts.addrs.binary_search(&d.at).ok()?;
    let srcs: Vec<&agx_isa::Reg> = insns[k].uses().collect();
    let gprs = gpr_halves(srcs.iter().copied());
    if let Some(l) = innermost_loop(cx.timing, d.at) {
        let v = cx.facts.view(l);
        let written: HashSet<u32> = cx
            .facts
            .body(l, &v.range)
            .iter()
            .flat_map(|i| gpr_halves(i.defs()))
            .collect();
        if !srcs.is_empty() && gprs.iter().all(|h| !written.contains(h)) {
            return Some("is loop-invariant (the loop never writes it)".to_string());
        }
    }
    if gprs.is_empty() {
        return None;
    }
    let writes = |a: usize, b: usize| {
        insns[a + 1..b]
            .iter()
            .any(|i| gpr_halves(i.defs()).iter().any(|h| gprs.contains(h)))
    };
    let same = rcps
        .iter()
        .filter(|&&j| j != k && gpr_halves(insns[j].uses()) == gprs)
        .filter(|&&j| !writes(j.min(k), j.max(k)))
        .count();
    (same > 0).then(|| format!("feeds {} rcps with no write of it between", same + 1))
}
