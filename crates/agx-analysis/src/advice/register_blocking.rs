//! `register-blocking` (issue 35 item 5): an already tiled kernel (it
//! stages data through threadgroup memory) whose loop does few
//! multiply-adds per threadgroup load: each thread computes too few
//! outputs, so every operand it reads from the tile feeds one or two FMAs.
//! Computing an `a x b` block of outputs per thread reads `a + b` operands
//! for `a * b` FMAs; a 4 x 4 block does 16 FMAs per 8 loads, [`TARGET`]
//! per load (the blocking of the classic register-tiled SGEMM; more needs
//! more registers, which the register-pressure rule watches).
//!
//! The fact: in one loop, the threadgroup loads and the multiply-adds
//! (`fmadd`), with fewer than [`TARGET`] multiply-adds per threadgroup
//! load, in a kernel that stages through threadgroup memory. The figures:
//! loads, FMAs, FMAs per load, and the share of the estimate spent on the
//! loop's threadgroup loads and FMAs. Silent in kernels that do not stage
//! (the advice would be to tile first: `tile-global-loads`), in loops
//! without FMAs, and at [`TARGET`] or more.

use super::{Context, Need, Rule};
use crate::timing::suggest::{severity_for_share, Suggestion};
use agx_isa::{Instruction, MemDir, MemSpace};

pub struct RegisterBlocking;

/// Multiply-adds per threadgroup load a 4 x 4 register block reaches.
pub const TARGET: f64 = 2.0;

fn is_tg_load(i: &Instruction) -> bool {
    i.mem_access()
        .is_some_and(|m| m.space == MemSpace::Threadgroup && m.dir == MemDir::Load)
}

fn is_fma(i: &Instruction) -> bool {
    i.mnemonic().starts_with("fmadd")
}

impl Rule for RegisterBlocking {
    fn id(&self) -> &'static str {
        "register-blocking"
    }
    fn help(&self) -> &'static str {
        "A tiled kernel whose loop does few multiply-adds per threadgroup load: compute a larger block of outputs per thread (e.g. 4x4) so each operand read from the tile feeds more FMAs."
    }
    fn needs(&self) -> &'static [Need] {
        &[Need::Timing]
    }
    fn evaluate(&self, cx: &Context<'_>, out: &mut Vec<Suggestion>) {
        let fx = &cx.facts;
        if !fx.stages {
            return;
        }
        cx.per_loop(out, &|l| {
            let own = fx.view(l).own;
            let loads: Vec<u32> = own
                .iter()
                .filter(|i| is_tg_load(i))
                .map(|i| i.addr)
                .collect();
            let fmas: Vec<u32> = own.iter().filter(|i| is_fma(i)).map(|i| i.addr).collect();
            if loads.is_empty() || fmas.is_empty() {
                return None;
            }
            let ratio = fmas.len() as f64 / loads.len() as f64;
            if ratio >= TARGET {
                return None;
            }
            let mut sites = loads.clone();
            sites.extend(&fmas);
            let share = fx.share_of(&sites);
            let s = Suggestion::new(
                severity_for_share(share),
                loads[0],
                self.id(),
                &[
                    ("threadgroup_loads", loads.len() as f64),
                    ("fmas", fmas.len() as f64),
                    ("fmas_per_load", ratio),
                    ("target_fmas_per_load", TARGET),
                    ("share_pct", share),
                ],
                |f| {
                    format!(
                        "The loop at 0x{:x} reads the threadgroup tile {} times for {} multiply-adds ({} FMA per threadgroup load), {}% of the estimate: each thread computes too few outputs. Compute a larger block of outputs per thread (a 4x4 block does {} FMAs per load): keep the block's accumulators in registers and reuse each operand read from the tile for a whole row or column of the block.",
                        l.header,
                        f("threadgroup_loads"),
                        f("fmas"),
                        f("fmas_per_load"),
                        f("share_pct"),
                        f("target_fmas_per_load"),
                    )
                },
            );
            Some(
                s.with_fact(
                    "the kernel stages through threadgroup memory and the loop does fewer multiply-adds than threadgroup loads x 2",
                )
                .with_sites(sites),
            )
        });
    }
}
