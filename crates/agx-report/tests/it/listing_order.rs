//! The annotated listing of a function with undecoded positions: each
//! `[not decoded]` line sits before the first instruction past its address
//! (the rest after the last instruction), and the listing has the same
//! bytes whether its lines are formatted on one core or on all of them (a
//! listing of at least 4096 lines is formatted in batches on every core,
//! each batch finding its own undecoded lines).

use agx_isa::asm::assemble_insns;
use agx_report::{text, Options, Profile};

const LINES: usize = 20_000;

fn profile() -> Profile {
    let mut s = String::new();
    for k in 0..LINES {
        s.push_str(&format!("fadd32 r{}, r1, r2\n", 4 + k % 8));
    }
    s.push_str("stop\n");
    let insns = assemble_insns(&s).expect("assembles");
    let mut p = Profile::build("k".into(), None, insns, None, vec![], &Options::default());
    // before the first, between lines across batch boundaries (8192 lines
    // a batch), two at one place, and past the last
    let last = p.insns.last().expect("code").addr;
    let at = |k: usize| p.insns[k].addr;
    let mut unknown = vec![(0u32, "before-all".to_string())];
    for k in [1usize, 4095, 8191, 8192, 12_000, 16_384, 19_999] {
        unknown.push((at(k) + 1, format!("after-{k}")));
    }
    unknown.push((at(12_000) + 2, "after-12000-second".to_string()));
    unknown.push((last + 40, "past-the-end".to_string()));
    unknown.sort_by_key(|u| u.0);
    // (instruction 0 is at address 0: the first unknown goes after it)
    p.unknown_lines = unknown;
    p
}

fn report(p: &Profile, serial: bool) -> String {
    agx_analysis::par::set_serial(serial);
    let mut out = Vec::new();
    text::write_report(&mut out, p, false).expect("written");
    agx_analysis::par::set_serial(false);
    String::from_utf8(out).expect("UTF-8")
}

#[test]
fn undecoded_lines_sit_in_place_on_any_number_of_cores() {
    let p = profile();
    let serial = report(&p, true);
    let parallel = report(&p, false);
    assert!(
        serial == parallel,
        "the listing differs between one core and all cores"
    );
    // each undecoded line follows the last instruction before its address
    // and precedes the first after it
    let lines: Vec<&str> = serial.lines().collect();
    let addr_of = |l: &str| -> Option<u32> {
        let t = l.trim_start();
        let (a, _) = t.split_once(':')?;
        u32::from_str_radix(a.trim_start_matches("0x"), 16).ok()
    };
    for (a, name) in &p.unknown_lines {
        let k = lines
            .iter()
            .position(|l| l.contains(name.as_str()))
            .unwrap_or_else(|| panic!("{name} not in the listing"));
        let prev = lines[..k]
            .iter()
            .rev()
            .find(|l| !l.contains("[not decoded]"))
            .and_then(|l| addr_of(l));
        let next = lines[k + 1..]
            .iter()
            .find(|l| !l.contains("[not decoded]"))
            .and_then(|l| addr_of(l));
        if let Some(prev) = prev {
            assert!(prev <= *a, "{name} at 0x{a:x} after the line of 0x{prev:x}");
        }
        if let Some(next) = next {
            assert!(next > *a, "{name} at 0x{a:x} before the line of 0x{next:x}");
        }
    }
}
