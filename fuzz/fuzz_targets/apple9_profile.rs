//! Fuzz target for the Apple9 profile: arbitrary bytes at an arbitrary base
//! go through the whole untimed pipeline (the walk, the instruction facts,
//! the adapter filling the analysis facts, CFG, loops, liveness, the
//! record and its text/JSON/HTML views); nothing may panic and the record's
//! counts agree with the walk's.
#![no_main]

use agx_analysis::{apple9_adapter, gpu, untimed};
use agx_isa::apple9;
use agx_report::record::KernelRecord;
use agx_report::untimed::{html_document, json_document, text};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (base, code) = match data.split_first_chunk::<4>() {
        Some((b, rest)) => (u32::from_le_bytes(*b) & 0xf_fffe, rest),
        None => (0, data),
    };
    let l = apple9::walk(code, base);
    let d = apple9_adapter::from_listing(code, base, &l);
    let (named, unknown, framed) = l.counts();
    assert_eq!(
        (d.named(), d.unknown(), d.framed_bytes),
        (named, unknown, framed)
    );
    assert_eq!(d.facts.len(), d.insns.len());
    assert_eq!(d.facts.range_start.len(), d.insns.len() + 1);
    // an Apple9 model (M4, G16): the untimed profile
    let model = gpu::model_for_gpu(16, "G16G", false).expect("an Apple9 model");
    let u = untimed::analyze(&d, model);
    let r = KernelRecord::build_untimed("fuzz".into(), None, model.isa, &d, &u);
    let s = r.untimed.as_deref().expect("an untimed record");
    assert_eq!(r.instructions, named + unknown);
    assert!((s.framing.framed_bytes + s.framing.gap_bytes) as u64 <= r.code_bytes);
    assert_eq!(
        s.registers.lower_bound,
        s.framing.operands_incomplete > 0 || s.framing.stopped.is_some()
    );
    for lp in &s.loops {
        assert!(lp.start <= lp.end);
    }
    let one = std::slice::from_ref(&r);
    let _ = text(&r);
    let _ = html_document(one);
    let j = json_document(one);
    assert!(j.contains("\"untimed\"") || j.contains("\"timing\""));
});
