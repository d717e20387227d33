//! Called functions of raw code found in one decode of the file (issue 21,
//! `agx_analysis::raw_image`): every function it hands out is the one the
//! helper's own walk from its entry gives ([`function_body`] over the
//! decode from the entry to the end), for every even target of real code —
//! before main, inside main, after main's `stop`, out of step with the
//! decode — and the guard on the instructions handed out holds.

use agx_analysis::program::{function_body, CodeSource};
use agx_analysis::raw_image::{RawImage, SLACK};
use std::path::PathBuf;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> Vec<u8> {
    std::fs::read(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The function at `target` as a helper's own walk finds it: the decode
/// from its file position to its first `stop` (the profile's length-aware
/// walk), reduced to what the entry reaches.
fn own_walk(buf: &[u8], start: usize, addr: u32, target: i64) -> Option<Vec<agx_isa::Instruction>> {
    let pos = start as i64 + (target - addr as i64);
    if pos < 0 || pos >= buf.len() as i64 || pos % 2 != 0 {
        return None;
    }
    let entry = u32::try_from(target).unwrap_or(pos as u32);
    let (insns, _) = agx_isa::stream::decode_all_native(&buf[pos as usize..], entry);
    let body = function_body(&insns, entry);
    (body.first().map(|i| i.addr) == Some(entry)).then_some(body)
}

/// Every even target of `buf` (main at `start`, printed from `addr`)
/// gives the same function from the image as from its own walk.
fn check_every_target(buf: &[u8], start: usize, addr: u32) -> usize {
    let img = RawImage::new(buf, start, addr);
    let mut found = 0;
    for p in (0..buf.len()).step_by(2) {
        let target = addr as i64 + (p as i64 - start as i64);
        let want = own_walk(buf, start, addr, target);
        let got = img.function_at(target);
        assert_eq!(
            got.as_ref().map(|f| &f.insns),
            want.as_ref(),
            "target {target:#x} (file offset {p:#x})"
        );
        if let Some(f) = got {
            assert_eq!(f.entry, u32::try_from(target).unwrap_or(p as u32));
            found += 1;
        }
    }
    found
}

#[test]
fn every_target_of_apple_simple_call_is_its_own_walk() {
    // helper at 0, main at 0x180: main printed from 0 (targets before it
    // are negative) and from its file offset
    let img = read("testdata/apple_stack/simple_call_TEXT_reconstructed_helper0_main0x180.binimg");
    let a = check_every_target(&img, 0x180, 0);
    let b = check_every_target(&img, 0x180, 0x180);
    let c = check_every_target(&img, 0, 0);
    assert!(a > 50 && a == b && b == c, "{a} {b} {c}");
}

#[test]
fn every_target_of_mesa_code_with_gaps_and_several_stops() {
    // three Mesa kernels one after the other (each ends in `stop` and trap
    // padding), zero runs between them, an odd-length junk prefix that puts
    // the walk from byte 0 out of step with main's
    let mut buf = vec![0x0eu8, 0x15, 0x44, 0x46];
    for k in ["matmul_naive_16x16", "cf_bubble_sort8", "laplacian3d_7pt"] {
        buf.extend(read(&format!("testdata/mesa/{k}/{k}.bin")));
        buf.extend([0u8; 10]);
    }
    let n = check_every_target(&buf, 4, 0x1000);
    assert!(n > 100, "{n}");
    let n0 = check_every_target(&buf, 0, 0);
    assert!(n0 > 100, "{n0}");
}

#[test]
fn the_guard_stops_following_once_the_input_is_spent() {
    // a straight-line run ending in `stop`: a function at every instruction
    // reaches the rest of the run; handing them all out would cost
    // functions × file
    let m = read("examples/matmul_naive.bin");
    let mut buf = m[..0x2e].to_vec();
    let body = &m[0x3a..0x5a]; // imadd, device_load, imadd, device_load
    for _ in 0..(3 * SLACK / 4) {
        buf.extend_from_slice(body);
    }
    buf.extend_from_slice(&[0x88, 0x00]);
    let img = RawImage::new(&buf, 0, 0);
    let total = img.len();
    let mut handed = 0;
    let mut refused = None;
    for p in (0x2e..buf.len()).step_by(body.len()).take(64) {
        match img.function_at(p as i64) {
            Some(f) => handed += f.insns.len(),
            None => {
                refused = Some(p as i64);
                break;
            }
        }
    }
    let t = refused.expect("the guard refused a function");
    assert!(handed <= total + SLACK, "{handed} > {total} + {SLACK}");
    let why = img.not_followed(t).expect("a reason");
    assert!(why.contains("guard"), "{why}");
    // an address with no code is not a guard refusal
    assert!(img.function_at(buf.len() as i64 + 2).is_none());
    assert!(img.not_followed(buf.len() as i64 + 2).is_none());
}

#[test]
fn every_target_of_random_bytes_between_real_code() {
    // random bytes (unknown encodings, random branches, stray `stop`s and
    // zero runs) between copies of real code: the walks fall out of step
    // and back into it everywhere
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut buf = Vec::new();
    let real = read("testdata/mesa/cf_bubble_sort8/cf_bubble_sort8.bin");
    for round in 0..6u32 {
        for _ in 0..700 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            buf.push(if x.is_multiple_of(11) {
                0
            } else {
                (x >> 24) as u8
            });
        }
        if round.is_multiple_of(2) {
            buf.extend_from_slice(&real);
        }
    }
    if !buf.len().is_multiple_of(2) {
        buf.push(0);
    }
    let n = check_every_target(&buf, 0x100, 0x100);
    assert!(n > 200, "{n}");
}
