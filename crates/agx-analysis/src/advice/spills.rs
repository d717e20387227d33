//! `spills`: true spills and fills (crate::stack_kind) speak of register
//! pressure; saves and restores around a call are the calling convention
//! (no advice); a private array has its own rule.

use super::facts::innermost_loop;
use super::{Context, Need, Rule};
use crate::stack_kind::StackKind;
use crate::timing::suggest::{severity_for_share, Suggestion};

pub struct Spills;

impl Rule for Spills {
    fn id(&self) -> &'static str {
        "spills"
    }
    fn help(&self) -> &'static str {
        "Stack stores and loads of fixed slots with no call between (spills and fills): reduce the live values or the workgroup so the register budget grows."
    }
    fn needs(&self) -> &'static [Need] {
        &[Need::Timing]
    }
    fn evaluate(&self, cx: &Context<'_>, out: &mut Vec<Suggestion>) {
        let f = &cx.facts;
        let spills = f.stack_of(&[StackKind::Spill, StackKind::Fill]);
        let Some(&first) = spills.first() else {
            return;
        };
        let stores = f.stack_of(&[StackKind::Spill]).len();
        let loads = spills.len() - stores;
        let in_loops = spills
            .iter()
            .filter(|&&a| innermost_loop(cx.timing, a).is_some())
            .count();
        let share = f.share_of(&spills);
        out.push(
            Suggestion::new(
                severity_for_share(share),
                first,
                self.id(),
                &[
                    ("spill_stores", stores as f64),
                    ("fills", loads as f64),
                    ("in_loops", in_loops as f64),
                    ("share_pct", share),
                ],
                |f| {
                    format!(
                "{} spill stores and {} fills (stack_store/stack_load of fixed slots), {} of them inside loops, {}% of the estimate; first at 0x{:x}. Reduce live values (smaller tiles, fewer accumulators) or a smaller workgroup so the register budget grows.",
                f("spill_stores"), f("fills"), f("in_loops"), f("share_pct"),
                first
            )
                },
            )
            .with_fact(format!(
                "{} stack accesses move registers to fixed stack slots and back with no call between (spill/fill)",
                spills.len()
            ))
            .with_sites(spills),
        );
    }
}
