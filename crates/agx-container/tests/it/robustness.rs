//! Any truncation or byte change of a valid archive gives `Ok` or a clean
//! one-line error, never a panic; `Ok` archives keep their invariants.

use crate::common;

use agx_container::{read_with, Archive, Input};
use common::*;
use proptest::prelude::*;

fn valid_archives() -> Vec<Vec<u8>> {
    vec![simple_call_archive(), texread_archive(), render_archive()]
}

fn check(bytes: &[u8]) {
    for opts in [options(false, false), options(true, true)] {
        match read_with(bytes, &opts) {
            Ok(Input::Archive(a)) => exercise(&a),
            Ok(Input::Raw(r)) => assert_eq!(r, bytes),
            Err(e) => {
                let s = e.to_string();
                assert!(s.starts_with("archive: "), "{s}");
                assert!(!s.contains('\n'), "{s}");
            }
        }
    }
}

fn exercise(a: &Archive) {
    assert!(!a.functions.is_empty());
    let _ = a.select(None);
    let _ = a.available_names();
    for f in &a.functions {
        let text = a.code(f);
        assert!(f.text_offset + f.size <= text.len() as u64);
        assert!(f.code_size <= f.size);
        assert_eq!(a.function_code(f).len() as u64, f.code_size);
        let _ = a.symbol_at(f, 0);
        let _ = a.prolog_of(f);
        assert!(a.select(Some(&f.symbol)).is_ok() || a.select(Some(&f.symbol)).is_err());
        let _ = a.select(Some(&f.name));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn truncation_never_panics(which in 0usize..3, cut in 0.0f64..1.0) {
        let a = &valid_archives()[which];
        let n = (a.len() as f64 * cut) as usize;
        check(&a[..n]);
    }

    #[test]
    fn byte_changes_never_panic(
        which in 0usize..3,
        changes in proptest::collection::vec((0.0f64..1.0, any::<u8>()), 1..8),
    ) {
        let mut a = valid_archives()[which].clone();
        let len = a.len();
        for (pos, byte) in changes {
            a[((len as f64 * pos) as usize).min(len - 1)] = byte;
        }
        check(&a);
    }

    #[test]
    fn header_field_changes_never_panic(
        which in 0usize..3,
        field in 0usize..160,
        value in prop_oneof![Just(0u32), Just(u32::MAX), Just(0x8000_0000u32), any::<u32>()],
    ) {
        // Overwrite one aligned u32 in the first 640 bytes (fat header,
        // Mach-O headers, load commands), both byte orders.
        for le in [false, true] {
            let mut a = valid_archives()[which].clone();
            let at = field * 4;
            if at + 4 <= a.len() {
                let b = if le { value.to_le_bytes() } else { value.to_be_bytes() };
                a[at..at + 4].copy_from_slice(&b);
            }
            check(&a);
        }
    }
}

#[test]
fn every_single_truncation() {
    for a in valid_archives() {
        for n in 0..=a.len() {
            check(&a[..n]);
        }
    }
}

#[test]
fn read_is_deterministic_on_valid_archives() {
    for a in valid_archives() {
        assert_eq!(read(&a).unwrap(), read(&a).unwrap());
    }
}

/// Writes the fuzz seed corpus: `cargo test -p agx-container --test
/// robustness -- --ignored write_fuzz_seeds`.
#[test]
#[ignore]
fn write_fuzz_seeds() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/corpus/archive");
    std::fs::create_dir_all(dir).unwrap();
    let names = ["simple_call.fat", "texread.fat", "render_swapped.fat"];
    for (name, bytes) in names.iter().zip(valid_archives()) {
        std::fs::write(format!("{dir}/{name}"), bytes).unwrap();
    }
}
