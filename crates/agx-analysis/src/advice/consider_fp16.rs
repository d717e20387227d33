//! `consider-fp16`: a loop whose FP32 pipe takes at least half its cycles, with no FP16 arithmetic and no memory stall.
//! Only on the kernel's hot region (issue 35: "consider fp16" where FP32 does not
//! bound the time the kernel spends is advice about nothing), and stated without a
//! hedge: the fact is the bound; what half precision saves is the figures.
//! Silent where a float the loop computes decides when it exits (an
//! escape or convergence test: `while (dot(z, z) < 4.0)` of an escape-time
//! fractal): half precision changes the iteration count, not only the
//! rounding of the result ([`float_exit_test`]).

use super::{Context, Need, Rule};
use crate::timing::suggest::{severity_for_share, Suggestion};

pub struct ConsiderFp16;

impl Rule for ConsiderFp16 {
    fn id(&self) -> &'static str {
        "consider-fp16"
    }
    fn help(&self) -> &'static str {
        "The hot loop is bound by FP32 arithmetic with no FP16: half precision halves register use and RAW penalties for the values that tolerate it."
    }
    fn needs(&self) -> &'static [Need] {
        &[Need::Timing]
    }
    fn evaluate(&self, cx: &Context<'_>, out: &mut Vec<Suggestion>) {
        let fx = &cx.facts;
        let timing = cx.timing;
        cx.per_loop(out, &|l| {
            let super::facts::LoopView { own_idx, own, .. } = fx.view(l);
            let no_mem_stall = l.body.wait_stall <= 0.0;
        // --- FP16 ---
        let own_keys = || own_idx.iter().map(|&j| fx.key_of(j as usize));
        let f32_ops = own_keys().filter(|k| k.is_fp32_arith()).count();
        let f16_ops = own_keys().filter(|k| k.is_fp16_arith()).count();
        // FP32 throughput is the region's bound: the F32 pipe, or the pipe
        // it shares with F16 and SCIB (the headline's bound), not dispatch,
        // a chain or memory
        let by = l.body.bound.by;
        let hot = &timing.bottleneck_detail;
        let is_hot = hot.kind == "loop" && hot.at == l.header;
        let f_bound = is_hot && no_mem_stall && matches!(by, "f32" | "fscib");
        if f32_ops >= 4
            && f16_ops == 0
            && f_bound
            && !float_exit_test(own)
            && l.body.pipes.f32 * 2.0 >= l.body.cycles_per_iteration
        {
            let f32_insns: Vec<u32> = own_idx
                .iter()
                .zip(&own)
                .filter(|&(&j, _)| fx.key_of(j as usize).is_fp32_arith())
                .map(|(_, i)| i.addr)
                .collect();
            let share = fx.share_of(&f32_insns);
            let g = timing.params.gpu.table();
            return Some(
                Suggestion::new(
                    severity_for_share(share),
                    f32_insns[0],
                    "consider-fp16",
                    &[
                        ("f32_ops", f32_ops as f64),
                        ("f32_cycles", l.body.pipes.f32),
                        ("cycles_per_iteration", l.body.cycles_per_iteration),
                        ("raw_penalty_16", g.raw_penalty_16),
                        ("raw_penalty_32", g.raw_penalty_32),
                        ("share_pct", share),
                    ],
                    |f| {
                        format!(
                    "Loop at 0x{:x} is bound by {} ({} FP32 ops, {} of {} cy/iter, {}% of the estimate): half-precision arithmetic halves register use and RAW penalties (+{} vs +{} cy) for the values that tolerate its precision.",
                    l.header,
                    crate::timing::model::bound_label(by),
                    f("f32_ops"),
                    f("f32_cycles"),
                    f("cycles_per_iteration"),
                    f("share_pct"),
                    f("raw_penalty_16"),
                    f("raw_penalty_32")
                )
                    },
                )
                .with_fact("the loop is the kernel's hot region, bound by the FP32 pipe (or the pipe it shares) and FP32 takes at least half its cycles, with no FP16 arithmetic and no memory stall")
                .with_sites(f32_insns),
            );
        }
            None
        });
    }
}

/// Whether a float compare of a value the loop computes decides an exec-mask
/// instruction of the loop (its exit or a break): the compare is an exec op
/// itself (`while_fcmp`, `if_fcmp`, ...), or its result reaches one through
/// selects (`fcmpsel` into `icmpsel` into `while_icmp`). `own`: the loop's
/// own instructions in address order.
fn float_exit_test(own: super::facts::Own<'_>) -> bool {
    use agx_isa::{Category, Reg, RegFile};
    let overlaps = |a: &Reg, b: &Reg| {
        let span = |r: &Reg| {
            let n = (r.width.halves() * r.count as u16).max(1);
            (r.half, r.half + n)
        };
        let ((a0, a1), (b0, b1)) = (span(a), span(b));
        a.file == RegFile::Gpr && b.file == RegFile::Gpr && a0 < b1 && b0 < a1
    };
    let written_in_loop = |r: &Reg| own.iter().any(|i| i.defs().any(|d| overlaps(d, r)));
    let mut tainted: Vec<Reg> = Vec::new();
    for i in &own {
        let m = i.mnemonic();
        let float_cmp = m.contains("fcmp");
        let reads_loop_value = || i.uses().any(&written_in_loop);
        let reads_taint = i.uses().any(|r| tainted.iter().any(|t| overlaps(t, r)));
        if i.category() == Category::ExecMask && (reads_taint || float_cmp && reads_loop_value()) {
            return true;
        }
        if (float_cmp && reads_loop_value()) || (reads_taint && m.contains("cmpsel")) {
            tainted.extend(i.defs().filter(|d| d.file == RegFile::Gpr).copied());
        }
    }
    false
}
