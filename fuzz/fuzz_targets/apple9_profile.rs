//! Fuzz target for the Apple9 profile: arbitrary bytes at an arbitrary base
//! go through the whole untimed pipeline (the walk, the instruction facts,
//! the adapter filling the analysis facts, CFG, loops, liveness, the
//! record and its text/JSON/HTML views); nothing may panic and the record's
//! counts agree with the walk's.
#![no_main]

use agx_analysis::{apple9_adapter, untimed};
use agx_isa::apple9;
use agx_isa::isa::APPLE9;
use agx_report::untimed::{html_document, json_document, text, UntimedRecord};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (base, code) = match data.split_first_chunk::<4>() {
        Some((b, rest)) => (u32::from_le_bytes(*b) & 0xf_fffe, rest),
        None => (0, data),
    };
    let l = apple9::walk(code, base);
    let d = apple9_adapter::from_listing(code, base, &l);
    let (named, unknown, framed) = l.counts();
    assert_eq!((d.named(), d.unknown(), d.framed_bytes), (named, unknown, framed));
    assert_eq!(d.facts.len(), d.insns.len());
    assert_eq!(d.facts.range_start.len(), d.insns.len() + 1);
    let u = untimed::analyze(&d, &APPLE9);
    let r = UntimedRecord::build("fuzz".into(), None, &APPLE9, &d, &u);
    assert_eq!(r.instructions, named + unknown);
    assert!(r.framing.framed_bytes + r.framing.gap_bytes <= r.code_bytes);
    assert_eq!(
        r.registers.lower_bound,
        r.framing.operands_incomplete > 0 || r.framing.stopped.is_some()
    );
    for lp in &r.loops {
        assert!(lp.start <= lp.end);
    }
    let one = std::slice::from_ref(&r);
    let _ = text(&r);
    let _ = html_document(one);
    let j = json_document(one);
    assert!(j.contains("\"untimed\"") || j.contains("\"timing\""));
});
