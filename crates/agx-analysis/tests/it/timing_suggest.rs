//! Each suggestion rule: one kernel that makes it fire, one that keeps it
//! silent.

use agx_analysis::timing::build::{r, r64, u, Builder};
use agx_analysis::timing::suggest::severity_for_share;
use agx_analysis::timing::{analyze_kernel, suggest, ModelParams, Severity, Suggestion};
use agx_isa::Instruction;

fn run(insns: &[Instruction], threads: u32) -> Vec<Suggestion> {
    let p = ModelParams {
        threads_per_core: threads,
        ..ModelParams::default()
    };
    let k = analyze_kernel(insns, &p);
    suggest(insns, &k, None)
}

fn fired(s: &[Suggestion], rule: &str) -> Option<Suggestion> {
    s.iter().find(|x| x.rule == rule).cloned()
}

/// `body`, followed by stop.
fn straight(body: impl Fn(&mut Builder)) -> Vec<Instruction> {
    let mut b = Builder::new();
    body(&mut b);
    b.raw("stop");
    b.finish()
}

/// A loop around `body`, followed by stop.
fn looped(body: impl Fn(&mut Builder)) -> Vec<Instruction> {
    let mut b = Builder::new();
    b.op("mov_imm", &[r(1)], &[]);
    let head = b.addr;
    body(&mut b);
    b.jmp_exec_any(head);
    b.raw("stop");
    b.finish()
}

#[test]
fn tile_global_loads() {
    let fire = looped(|b| {
        b.op("device_load", &[r(4)], &[r(2)]);
        b.op("device_load", &[r(5)], &[r(3)]);
        b.raw("wait");
        b.op("fmadd32", &[r(6)], &[r(4), r(5), r(6)]);
    });
    let s = run(&fire, 256);
    let t = fired(&s, "tile-global-loads").expect("fires");
    assert_eq!(t.severity, Severity::High);
    assert_eq!(t.offset, 4);
    let silent = looped(|b| {
        b.op("fmadd32", &[r(6)], &[r(4), r(5), r(6)]);
    });
    assert!(fired(&run(&silent, 256), "tile-global-loads").is_none());
}

#[test]
fn independent_work_before_wait() {
    let fire = looped(|b| {
        b.op("device_load", &[r(4)], &[r(2)]);
        b.raw("wait");
        b.op("fadd32", &[r(6)], &[r(4), r(6)]);
    });
    let s = fired(&run(&fire, 256), "independent-work-before-wait").expect("fires");
    // severity from the share of the estimate (issue 27 item 5)
    assert_eq!(s.severity, severity_for_share(s.share_pct().unwrap()));
    assert!(!s.fact.is_empty());
    assert!(s.message.contains("device_load at 0x4"), "{}", s.message);
    // Plenty of independent work between the load and the wait: silent.
    let silent = looped(|b| {
        b.op("threadgroup_load", &[r(4)], &[r(2)]);
        for i in 0..40 {
            b.op("fadd32", &[r(10 + i)], &[r(3)]);
        }
        b.raw("wait");
        b.op("fadd32", &[r(6)], &[r(4), r(6)]);
    });
    assert!(fired(&run(&silent, 1024), "independent-work-before-wait").is_none());
}

#[test]
fn break_dependency_chain() {
    let fire = looped(|b| {
        for _ in 0..8 {
            b.op("fmadd32", &[r(6)], &[r(7), r(8), r(6)]);
        }
    });
    let s = fired(&run(&fire, 128), "break-dependency-chain").expect("fires");
    assert!(s.message.contains("RAW"));
    assert_eq!(s.figures.get("accumulators"), 1.0);
    assert_eq!(s.sites.len(), 8);
    // a recurrence through a multiply by itself (z = z*z + c, issue 27:
    // cf_mandelbrot) is not an accumulation: silent
    let recurrence = looped(|b| {
        for _ in 0..8 {
            b.op("fmadd32", &[r(6)], &[r(6), r(6), r(8)]);
        }
    });
    assert!(fired(&run(&recurrence, 128), "break-dependency-chain").is_none());
    let silent = looped(|b| {
        for i in 0..8 {
            b.op("fmadd32", &[r(10 + i)], &[r(6), r(7), r(8)]);
        }
    });
    assert!(fired(&run(&silent, 128), "break-dependency-chain").is_none());
}

#[test]
fn hoist_invariant_transcendental() {
    let fire = looped(|b| {
        b.op("rsqrt", &[r(5)], &[u(3)]);
        b.op("fmul32", &[r(6)], &[r(5), r(6)]);
    });
    let s = fired(&run(&fire, 1024), "hoist-invariant-transcendental").expect("fires");
    assert_eq!(s.offset, 4);
    let silent = looped(|b| {
        b.op("rsqrt", &[r(5)], &[r(6)]);
        b.op("fmul32", &[r(6)], &[r(5), r(6)]);
    });
    assert!(fired(&run(&silent, 1024), "hoist-invariant-transcendental").is_none());
}

#[test]
fn register_pressure() {
    let fire = straight(|b| {
        b.op("fadd32", &[r(100)], &[r(2)]);
    });
    let s = fired(&run(&fire, 1024), "register-pressure").expect("fires");
    assert_eq!(s.offset, 0);
    assert!(s.message.contains("0x0"));
    let silent = straight(|b| {
        b.op("fadd32", &[r(10)], &[r(2)]);
    });
    assert!(fired(&run(&silent, 1024), "register-pressure").is_none());
}

#[test]
fn consider_fp16() {
    // pairs of dependent FP32 ops: their RAW penalties make the F+SCIB
    // pipe the loop's bound, above dispatch
    let fire = looped(|b| {
        for i in 0..4 {
            b.op("fmadd32", &[r(10 + 2 * i)], &[r(2), r(3), r(4)]);
            b.op("fmadd32", &[r(11 + 2 * i)], &[r(10 + 2 * i), r(3), r(4)]);
        }
    });
    let k = analyze_kernel(&fire, &ModelParams::default());
    let by = k.loops[0].body.bound.by;
    assert!(matches!(by, "f32" | "fscib"), "{by}");
    let s = fired(&run(&fire, 1024), "consider-fp16").expect("fires");
    // the bound as the headline names it
    let label = agx_analysis::timing::model::bound_label(by);
    assert!(
        s.message.contains(&format!("is bound by {label} (")),
        "{}",
        s.message
    );
    // eight independent FP32 ops: the loop is bound by dispatch, not by the
    // FP32 pipe; half precision would not make it faster (was: fired)
    let dispatch = looped(|b| {
        for i in 0..8 {
            b.op("fmadd32", &[r(10 + i)], &[r(2), r(3), r(4)]);
        }
    });
    assert!(fired(&run(&dispatch, 1024), "consider-fp16").is_none());
    let silent = looped(|b| {
        for i in 0..8 {
            b.op(
                "fmadd16",
                &[agx_analysis::timing::build::h(10 + i, false)],
                &[r(2), r(3), r(4)],
            );
        }
    });
    assert!(fired(&run(&silent, 1024), "consider-fp16").is_none());
    // no hedge (issue 35): the fact is the bound
    assert!(!s.message.contains("if "), "{}", s.message);
}

/// The same FP32-bound loop before straight-line code that costs more
/// (DRAM-bound loads): FP32 does not bound the hot region, silent (issue 35).
#[test]
fn consider_fp16_only_on_the_hot_region() {
    let mut b = agx_analysis::timing::build::Builder::new();
    b.op("mov_imm", &[r(1)], &[]);
    let head = b.addr;
    for i in 0..4 {
        b.op("fmadd32", &[r(10 + 2 * i)], &[r(2), r(3), r(4)]);
        b.op("fmadd32", &[r(11 + 2 * i)], &[r(10 + 2 * i), r(3), r(4)]);
    }
    b.jmp_exec_any(head);
    for i in 0..200 {
        b.op("device_load", &[r(20 + (i % 40))], &[r(6)]);
    }
    b.raw("wait");
    b.raw("stop");
    let insns = b.finish();
    let k = analyze_kernel(&insns, &ModelParams::default());
    assert!(matches!(k.loops[0].body.bound.by, "f32" | "fscib"));
    assert_ne!(k.bottleneck_detail.kind, "loop");
    assert!(fired(&run(&insns, 1024), "consider-fp16").is_none());
}

#[test]
fn spills() {
    let fire = straight(|b| {
        b.op("stack_store", &[], &[r(4)]);
        b.op("stack_load", &[r(4)], &[]);
        b.raw("wait");
    });
    let s = fired(&run(&fire, 1024), "spills").expect("fires");
    assert_eq!(s.severity, severity_for_share(s.share_pct().unwrap()));
    assert_eq!(s.sites.len(), 2);
    let silent = straight(|b| {
        b.op("fadd32", &[r(4)], &[r(2)]);
    });
    assert!(fired(&run(&silent, 1024), "spills").is_none());
}

#[test]
fn int64_emulation_in_loop() {
    let fire = looped(|b| {
        b.op("iadd", &[r64(4)], &[r64(4), r(2)]);
    });
    assert!(fired(&run(&fire, 1024), "int64-emulation-in-loop").is_some());
    let silent = looped(|b| {
        b.op("iadd", &[r(4)], &[r(4), r(2)]);
    });
    assert!(fired(&run(&silent, 1024), "int64-emulation-in-loop").is_none());
}

/// The compiler's multiply-high of a division by a constant (a 32x32=64
/// multiply by a magic number from `mov_imm`) is no 64-bit index (issue
/// 35): silent; the same multiply of two loaded values fires.
#[test]
fn int64_rule_skips_the_multiply_high_of_a_division_by_a_constant() {
    let magic = looped(|b| {
        b.op("mov_imm", &[r(3)], &[]);
        b.op("imadd", &[r64(4)], &[r(2), r(3), r(0)]);
    });
    let i = magic.iter().find(|i| i.mnemonic() == "imadd").unwrap();
    assert_eq!(i.cost_key(), agx_isa::CostKey::Imad32x32_64);
    assert!(fired(&run(&magic, 1024), "int64-emulation-in-loop").is_none());
    let data = looped(|b| {
        b.op("device_load", &[r(3)], &[r(6)]);
        b.raw("wait");
        b.op("imadd", &[r64(4)], &[r(2), r(3), r(0)]);
    });
    assert!(fired(&run(&data, 1024), "int64-emulation-in-loop").is_some());
}

#[test]
fn reduction_in_loop() {
    let fire = looped(|b| {
        b.op("simd_fadd", &[r(4)], &[r(5)]);
    });
    assert!(fired(&run(&fire, 1024), "reduction-in-loop").is_some());
    // Outside any loop: silent.
    let silent = straight(|b| {
        b.op("simd_fadd", &[r(4)], &[r(5)]);
    });
    assert!(fired(&run(&silent, 1024), "reduction-in-loop").is_none());
}

#[test]
fn division_rcp_fmul() {
    // one divisor, two divisions: its reciprocal is worth keeping
    let fire = straight(|b| {
        b.op("rcp", &[r(4)], &[r(2)]);
        b.op("fmul32", &[r(5)], &[r(3), r(4)]);
        b.op("rcp", &[r(6)], &[r(2)]);
        b.op("fmul32", &[r(7)], &[r(8), r(6)]);
    });
    let s = fired(&run(&fire, 1024), "division-rcp-fmul").expect("fires");
    assert_eq!(s.severity, severity_for_share(s.share_pct().unwrap()));
    assert_eq!(s.sites.len(), 2, "{s:?}");
    assert!(s.message.contains("feeds 2 rcps"), "{}", s.message);
    assert!(!s.message.contains("If the divisor"), "{}", s.message);
    // a loop-invariant divisor in a loop
    let invariant = looped(|b| {
        b.op("rcp", &[r(4)], &[r(2)]);
        b.op("fmul32", &[r(5)], &[r(3), r(4)]);
    });
    let s = fired(&run(&invariant, 1024), "division-rcp-fmul").expect("fires");
    assert!(s.message.contains("loop-invariant"), "{}", s.message);
    // one division of a value computed once: no reuse shown, no advice
    // (was: the hedged "if the divisor is reused or loop-invariant")
    let once = straight(|b| {
        b.op("rcp", &[r(4)], &[r(2)]);
        b.op("fmul32", &[r(5)], &[r(3), r(4)]);
    });
    assert!(fired(&run(&once, 1024), "division-rcp-fmul").is_none());
    // in a loop that writes the divisor: silent
    let varying = looped(|b| {
        b.op("fadd32", &[r(2)], &[r(2), r(3)]);
        b.op("rcp", &[r(4)], &[r(2)]);
        b.op("fmul32", &[r(5)], &[r(3), r(4)]);
    });
    assert!(fired(&run(&varying, 1024), "division-rcp-fmul").is_none());
    let silent = straight(|b| {
        b.op("rcp", &[r(4)], &[r(2)]);
        b.op("fadd32", &[r(5)], &[r(3), r(4)]);
    });
    assert!(fired(&run(&silent, 1024), "division-rcp-fmul").is_none());
}

#[test]
fn suggestion_serializes_with_lowercase_severity() {
    let s = Suggestion {
        severity: Severity::High,
        offset: 12,
        message: "m".into(),
        rule: "spills",
        figures: agx_analysis::timing::suggest::Figures(vec![("fills", 1.0)]),
        fact: "f".into(),
        sites: vec![12, 20],
    };
    let j = serde_json::to_value(&s).unwrap();
    assert_eq!(j["fact"], "f");
    assert_eq!(j["sites"], serde_json::json!([12, 20]));
    assert_eq!(j["figures"]["fills"], 1.0);
    assert_eq!(j["severity"], "high");
    assert_eq!(j["offset"], 12);
    assert_eq!(j["message"], "m");
}

/// The one test of "the kernel stages data through threadgroup memory"
/// (read by the tiling rule and by the access-fact refinement): a
/// threadgroup store, a `threadgroup_barrier` and a threadgroup load; a
/// `memory_barrier` does not synchronise the threadgroup, and a store never
/// read back stages nothing.
#[test]
fn staging_through_threadgroup_is_store_barrier_and_load() {
    use agx_analysis::timing::suggest::stages_through_threadgroup;
    let code = |lines: &[&str]| {
        let mut text = lines.join("\n");
        text.push_str("\nstop\n");
        agx_isa::asm::assemble_insns(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    };
    let store = "threadgroup_store i32, x, r3, r2l, 0";
    let load = "threadgroup_load i32, x, r2, r2l, 0";
    let barrier = "threadgroup_barrier";
    let fence = "memory_barrier 1, 2, 9";
    assert!(stages_through_threadgroup(&code(&[store, barrier, load])));
    assert!(!stages_through_threadgroup(&code(&[store, barrier])));
    assert!(!stages_through_threadgroup(&code(&[store, load])));
    assert!(!stages_through_threadgroup(&code(&[store, fence, load])));
    assert!(!stages_through_threadgroup(&code(&[barrier, load])));
}
