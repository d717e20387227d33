//! `stack_kind::classify` against its definition, written out the slow way
//! (every store × every load × every call), on random functions of fixed
//! stack slots and calls. The classifier answers with one binary search an
//! access (call-dense code at 1M instructions took minutes when it scanned
//! loads × calls); this checks the fast rule is the same rule.

use crate::xorshift::Rng;
use agx_analysis::stack_kind::{classify, StackKind};
use agx_isa::asm::assemble_insns;

/// One random function: stores/loads of 4 slots and calls, as text, with
/// what each line is (`Some((slot, is_store))` for an access, `None` for a call).
fn random_function(rng: &mut Rng, n: usize) -> (String, Vec<Option<(u32, bool)>>) {
    let mut text = String::new();
    let mut what = Vec::new();
    for _ in 0..n {
        let slot = 4 * rng.below(4) as u32;
        match rng.below(5) {
            0 => {
                text.push_str("call 0x0\n");
                what.push(None);
            }
            1 | 2 => {
                text += &format!("stack_store i16, 1, 0, xy, 4, r2l_r2h, {slot}, 0\n");
                what.push(Some((slot, true)));
            }
            _ => {
                text += &format!("stack_load r2l_r2h, i16, 1, 0, xy, 4, {slot}, 0\n");
                what.push(Some((slot, false)));
            }
        }
    }
    (text, what)
}

/// The definition (module docs of `stack_kind`): a fixed slot stored before
/// a call and loaded after it is a save/restore, otherwise a spill/fill.
fn by_definition(what: &[Option<(u32, bool)>]) -> Vec<(u32, StackKind)> {
    let call_between = |a: usize, b: usize| (a + 1..b).any(|k| what[k].is_none());
    let mut out = Vec::new();
    for (k, w) in what.iter().enumerate() {
        let Some((slot, store)) = *w else { continue };
        let around = what.iter().enumerate().any(|(j, o)| match o {
            Some((s, st)) if *s == slot && *st != store => {
                if store {
                    call_between(k, j)
                } else {
                    call_between(j, k)
                }
            }
            _ => false,
        });
        let kind = match (around, store) {
            (true, true) => StackKind::Save,
            (true, false) => StackKind::Restore,
            (false, true) => StackKind::Spill,
            (false, false) => StackKind::Fill,
        };
        out.push((k as u32, kind));
    }
    out
}

#[test]
fn save_restore_and_spill_fill_follow_the_definition() {
    let mut rng = Rng(0x5eed_57ac);
    let mut saves = 0;
    let mut spills = 0;
    for round in 0..300 {
        let (text, what) = random_function(&mut rng, 1 + round % 40);
        let insns = assemble_insns(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(insns.len(), what.len());
        let got = classify(&insns);
        let want = by_definition(&what);
        assert_eq!(got, want, "round {round}:\n{text}");
        saves += got.iter().filter(|g| g.1 == StackKind::Save).count();
        spills += got.iter().filter(|g| g.1 == StackKind::Spill).count();
    }
    // both answers occur often enough for the comparison to mean something
    assert!(
        saves > 100 && spills > 100,
        "saves {saves}, spills {spills}"
    );
}
