//! `int64-emulation-in-loop`: 64-bit integer arithmetic in a loop (emulated adds, slow multiplies).
//!
//! Not the compiler's multiply-high of a division by a constant (issue 35):
//! `x / c` and `x % c` for a constant `c` become a 32x32=64 multiply by a
//! magic constant whose high half is the quotient (Granlund and Montgomery,
//! "Division by invariant integers using multiplication", PLDI 1994; Mesa's
//! `nir_opt_idiv_const`). That 64-bit result comes from 32-bit indices:
//! "use 32-bit indices" is wrong advice there, so such a multiply is no
//! fact of this rule.

use super::{Context, Need, Rule};
use crate::timing::suggest::{severity_for_share, Suggestion};
use agx_isa::{CostKey, Instruction, RegFile, Width};

/// Whether `insns[j]` is a 32x32=64 multiply with a constant multiplicand
/// (one of its first two sources an immediate, or a register whose nearest
/// earlier writer is a `mov_imm`): the multiply-high of a division by a
/// constant. (The later sources are the addend and its shift.)
pub fn is_multiply_high_by_constant(insns: &[Instruction], j: usize) -> bool {
    let i = &insns[j];
    if i.cost_key() != CostKey::Imad32x32_64 {
        return false;
    }
    let constant = |o: &agx_isa::Operand| {
        if o.kind.imm_value().is_some() {
            return true;
        }
        let Some(u) = o.as_reg().filter(|u| u.file == RegFile::Gpr) else {
            return false;
        };
        insns[..j]
            .iter()
            .rev()
            .find(|w| w.defs().any(|d| d.file == u.file && d.half == u.half))
            .is_some_and(|w| w.mnemonic() == "mov_imm")
    };
    i.operands
        .iter()
        .filter(|o| o.role == agx_isa::Role::Use)
        .take(2)
        .any(constant)
}

pub struct Int64EmulationInLoop;

impl Rule for Int64EmulationInLoop {
    fn id(&self) -> &'static str {
        "int64-emulation-in-loop"
    }
    fn help(&self) -> &'static str {
        "64-bit integer arithmetic in a loop: use 32-bit indices and offsets."
    }
    fn needs(&self) -> &'static [Need] {
        &[Need::Timing]
    }
    fn evaluate(&self, cx: &Context<'_>, out: &mut Vec<Suggestion>) {
        let fx = &cx.facts;

        cx.per_loop(out, &|l| {
            let super::facts::LoopView { own_idx, own, .. } = fx.view(l);
        // --- 64-bit integer emulation ---
        let int64: Vec<&Instruction> = own_idx
            .iter()
            .zip(&own)
            .filter(|&(&j, i)| {
                fx.key_of(j as usize).is_integer_arith()
                    && i.defs()
                        .any(|r| r.file == RegFile::Gpr && r.width == Width::W64)
                    && !is_multiply_high_by_constant(cx.insns, j as usize)
            })
            .map(|(_, i)| i)
            .collect();
        if let Some(first) = int64.first() {
            let sites: Vec<u32> = int64.iter().map(|i| i.addr).collect();
            let share = fx.share_of(&sites);
            return Some(
                Suggestion::new(
                    severity_for_share(share),
                    first.addr,
                    "int64-emulation-in-loop",
                    &[
                        ("int64_ops", int64.len() as f64),
                        ("add64_instructions", 4.0),
                        ("mul64_ic_cycles", 8.0),
                        ("share_pct", share),
                    ],
                    |f| {
                        format!(
                    "Loop at 0x{:x}: {} 64-bit integer op(s) (first {} at 0x{:x}), {}% of the estimate; 64-bit adds are emulated (~{} instructions) and 32x32=64 multiplies take {} IC cycles. Use 32-bit indices/offsets in the loop.",
                    l.header,
                    f("int64_ops"),
                    first.mnemonic(),
                    first.addr,
                    f("share_pct"),
                    f("add64_instructions"),
                    f("mul64_ic_cycles")
                )
                    },
                )
                .with_fact("integer arithmetic in the loop writes 64-bit registers")
                .with_sites(sites),
            );
        }

            None
        });
    }
}
