//! `register-pressure`: occupancy below the whole core, from the allocated registers.

use super::facts::highest_gpr;
use super::{Context, Need, Rule};
use crate::timing::suggest::{Severity, Suggestion};

pub struct RegisterPressure;

impl Rule for RegisterPressure {
    fn id(&self) -> &'static str {
        "register-pressure"
    }
    fn help(&self) -> &'static str {
        "Occupancy limited by the registers allocated: shorten live ranges at the peak to reach the next occupancy step."
    }
    fn needs(&self) -> &'static [Need] {
        &[Need::Timing]
    }
    fn evaluate(&self, cx: &Context<'_>, out: &mut Vec<Suggestion>) {
        let (insns, timing, analysis) = (cx.insns, cx.timing, cx.analysis);
        // the highest GPR half touched, where no analysis gives the
        // registers (one scan of the instructions, read twice below)
        let highest = std::cell::OnceCell::new();
        let highest = || *highest.get_or_init(|| highest_gpr(insns));
        // --- register pressure / occupancy ---
        let threads = timing.params.threads_per_core;
        // (address of the peak, its figures, their words)
        type Desc = Box<dyn Fn(&dyn Fn(&str) -> String) -> String>;
        let (peak_addr, peak_figs, peak_desc): (Option<u32>, Vec<(&'static str, f64)>, Desc) =
            match analysis {
                Some(a) => (
                    a.registers.peak_live_offset,
                    vec![
                        ("allocated_half", a.registers.allocated_half as f64),
                        ("highest_half_index", a.registers.highest_half_index as f64),
                        ("peak_live_half", a.registers.peak_live_half as f64),
                    ],
                    Box::new(|f: &dyn Fn(&str) -> String| {
                        format!(
                        "{} half-registers allocated (highest index {}), peak liveness {} halves",
                        f("allocated_half"),
                        f("highest_half_index"),
                        f("peak_live_half")
                    )
                    }),
                ),
                None => match highest() {
                    Some((hi, addr)) => (
                        Some(addr),
                        vec![],
                        Box::new(move |_: &dyn Fn(&str) -> String| {
                            format!(
                                "highest register half r{}{} touched",
                                hi / 2,
                                if hi % 2 == 0 { "l" } else { "h" }
                            )
                        }),
                    ),
                    None => (
                        None,
                        vec![],
                        Box::new(|_: &dyn Fn(&str) -> String| String::new()),
                    ),
                },
            };
        let derived_threads = analysis
            .map(|a| a.occupancy.threads)
            .filter(|&t| t > 0)
            .or_else(|| highest().map(|(hi, _)| threads_for(timing.params.gpu, hi + 1)));
        let occ = derived_threads.unwrap_or(threads).min(threads.max(1));
        if occ < 1024 {
            let sev = if occ < 640 {
                Severity::High
            } else {
                Severity::Medium
            };
            let at = peak_addr.unwrap_or(0);
            let mut figs = vec![
                ("threads_per_core", occ as f64),
                // (rounded as `{:.0}` rounds, half to even)
                (
                    "occupancy_percent",
                    format!("{:.0}", occ as f64 / 1024.0 * 100.0)
                        .parse()
                        .unwrap_or(0.0),
                ),
            ];
            figs.extend(peak_figs);
            out.push(Suggestion::new(sev, at, "register-pressure", &figs, |f| {
            format!(
                "Occupancy limited to {} threads/core ({}%): {}; the peak is at 0x{at:x}. Shorten live ranges there (recompute cheap values, narrow to 16-bit) to reach the next occupancy step.",
                f("threads_per_core"),
                f("occupancy_percent"),
                peak_desc(f)
            )
        }));
        }
    }
}

/// Threads per core for `halfregs` allocated half-registers (the one
/// occupancy rule of the GPU model the timing used).
fn threads_for(gpu: &crate::gpu::GpuModel, halfregs: u32) -> u32 {
    match gpu.occupancy_for_regs(halfregs).0 {
        0 => 384,
        t => t,
    }
}
