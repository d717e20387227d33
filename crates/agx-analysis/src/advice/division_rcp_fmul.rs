//! `division-rcp-fmul`: an rcp whose result is multiplied within the next 6 instructions (a division), one per region.

use super::facts::innermost_loop;
use super::{Context, Need, Rule};
#[allow(unused_imports)]
use crate::timing::suggest::{severity_for_share, share_pct, Severity, Suggestion};
use agx_isa::{Instruction, RegFile};

pub struct DivisionRcpFmul;

impl Rule for DivisionRcpFmul {
    fn id(&self) -> &'static str {
        "division-rcp-fmul"
    }
    fn help(&self) -> &'static str {
        "A division (rcp then multiply): compute the reciprocal of a reused or loop-invariant divisor once and multiply."
    }
    fn needs(&self) -> &'static [Need] {
        &[Need::Timing]
    }
    fn evaluate(&self, cx: &Context<'_>, out: &mut Vec<Suggestion>) {
        let fx = &cx.facts;
        let (insns, timing, analysis) = (cx.insns, cx.timing, cx.analysis);
        let _ = (insns, timing, analysis, fx);
        // --- division: rcp feeding fmul (one per region) ---
        // (region: innermost loop header, None outside loops; the rcp and its
        // consumer)
        let mut divs: Vec<(Option<u32>, u32, &Instruction)> = Vec::new();
        for (idx, i) in insns.iter().enumerate() {
            if fx.key_of(idx) != agx_isa::CostKey::Rcp {
                continue;
            }
            let defs: Vec<u32> = i
                .defs()
                .filter(|r| r.file == RegFile::Gpr)
                .flat_map(|r| r.half_range())
                .collect();
            if defs.is_empty() {
                continue;
            }
            let consumer = insns[idx + 1..].iter().take(6).find(|j| {
                j.cost_key().is_fmul()
                    && j.uses().any(|r| {
                        r.file == RegFile::Gpr && r.half_range().any(|h| defs.contains(&h))
                    })
            });
            if let Some(c) = consumer {
                divs.push((
                    innermost_loop(cx.timing, i.addr).map(|l| l.header),
                    i.addr,
                    c,
                ));
            }
        }
        divs.sort_by_key(|d| (d.0, d.1));
        for group in divs.chunk_by(|a, b| a.0 == b.0) {
            let (lp, at, c) = group[0];
            let sites: Vec<u32> = group.iter().map(|d| d.1).collect();
            let share = fx.share_of(&sites);
            out.push(
            Suggestion::new(
                severity_for_share(share),
                at,
                "division-rcp-fmul",
                &[
                    ("divisions", group.len() as f64),
                    ("rcp_ic_cycles", fx.cycles_at(at, 6.0)),
                    ("share_pct", share),
                ],
                |f| {
                    format!(
                    "{} division(s){}: rcp at 0x{at:x} ({} IC cy) feeds {} at 0x{:x}; {}% of the estimate. If the divisor is reused or loop-invariant, compute its reciprocal once and multiply.",
                    f("divisions"),
                    lp.map(|h| format!(" inside the loop at 0x{h:x}")).unwrap_or_default(),
                    f("rcp_ic_cycles"),
                    c.mnemonic(),
                    c.addr,
                    f("share_pct")
                )
                },
            )
            .with_fact("an rcp's result is multiplied within the next 6 instructions (a division)")
            .with_sites(sites),
        );
        }
    }
}
