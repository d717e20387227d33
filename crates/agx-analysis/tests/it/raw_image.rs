//! Called functions of raw code found in one decode of the file (issue 21,
//! `agx_analysis::raw_image`): every function it hands out is the one the
//! helper's own walk from its entry gives ([`function_body`] over the
//! decode from the entry to the end), for every even target of real code —
//! before main, inside main, after main's `stop`, out of step with the
//! decode — and the guard on the instructions handed out holds.

use agx_analysis::program::{function_body, CodeSource, NoFunction};
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

/// Instruction starts and lengths of known code: main's walk from `start`,
/// restarted after each `stop` to the end (what the image trusts).
fn known_insns(buf: &[u8], start: usize) -> Vec<(usize, usize)> {
    let mut v = Vec::new();
    let mut from = start;
    while from < buf.len() {
        let mut next = None;
        for it in agx_isa::stream::walk_native(&buf[from..], 0) {
            if let agx_isa::stream::Item::Insn { insn, .. } = it {
                let p = from + insn.addr as usize;
                v.push((p, insn.len as usize));
                if insn.flow() == agx_isa::Flow::Stop {
                    next = Some(p + 2);
                }
            }
        }
        match next {
            Some(n) => from = n,
            None => break,
        }
    }
    v
}

/// Every even target of `buf` (main at `start`, printed from `addr`)
/// gives the same function from the image as from its own walk, or is
/// refused for a reason that holds: inside an instruction of known code
/// (checked against [`known_insns`]), on zero bytes or bytes that do not
/// decode (the walk from there starts so), not code, or cut. Returns the
/// functions handed out and the targets refused as inside an instruction.
fn check_every_target(buf: &[u8], start: usize, addr: u32) -> (usize, usize) {
    let img = RawImage::new(buf, start, addr);
    let known = known_insns(buf, start);
    let mut found = 0;
    let mut inside = 0;
    for p in (0..buf.len()).step_by(2) {
        let target = addr as i64 + (p as i64 - start as i64);
        let want = own_walk(buf, start, addr, target);
        match img.function_at(target) {
            Ok(f) => {
                assert_eq!(
                    Some(&f.insns),
                    want.as_ref(),
                    "target {target:#x} (file offset {p:#x})"
                );
                assert_eq!(f.entry, u32::try_from(target).unwrap_or(p as u32));
                found += 1;
            }
            Err(NoFunction::Malformed(m)) if m.starts_with("it is inside the ") => {
                assert!(
                    known.iter().any(|&(q, len)| q < p && p < q + len),
                    "target {target:#x}: {m}, but no known instruction holds it"
                );
                inside += 1;
            }
            Err(NoFunction::Malformed(m)) if m.contains("zero bytes") => {
                let first = agx_isa::stream::walk_native(&buf[p..], 0).next();
                assert!(
                    matches!(first, Some(agx_isa::stream::Item::Gap { .. })),
                    "target {target:#x}: {m}"
                );
            }
            Err(NoFunction::Malformed(m)) if m.contains("bytes that do not decode") => {
                let first = agx_isa::stream::walk_native(&buf[p..], 0).next();
                assert!(
                    matches!(first, Some(agx_isa::stream::Item::Failed { .. })),
                    "target {target:#x}: {m}"
                );
            }
            Err(NoFunction::Malformed(m)) => {
                assert!(m.contains("it is not code"), "target {target:#x}: {m}")
            }
            Err(NoFunction::Cut(_)) => {}
            Err(e) => panic!("target {target:#x}: {e:?}"),
        }
    }
    (found, inside)
}

#[test]
fn every_target_of_apple_simple_call_is_its_own_walk() {
    // helper at 0, main at 0x180: main printed from 0 (targets before it
    // are negative) and from its file offset
    let img = read("testdata/apple_stack/simple_call_TEXT_reconstructed_helper0_main0x180.binimg");
    let a = check_every_target(&img, 0x180, 0);
    let b = check_every_target(&img, 0x180, 0x180);
    let c = check_every_target(&img, 0, 0);
    // (where main starts decides what code is known: from 0 the helper is
    // main's own walk, so more targets are inside known instructions)
    assert!(a.0 > 50 && a == b && c.0 > 50, "{a:?} {b:?} {c:?}");
    // the helper's real entry (0x0, called from main at 0x180) is followed
    let f = RawImage::new(&img, 0x180, 0x180)
        .function_at(0)
        .expect("the helper");
    assert_eq!(f.unknown, 0);
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
    let (n, inside) = check_every_target(&buf, 4, 0x1000);
    assert!(n > 100 && inside > 100, "{n} {inside}");
    // main from byte 0 (the junk first): main's walk is out of step with
    // the Mesa code until it meets an instruction start of the decode
    let (n0, inside0) = check_every_target(&buf, 0, 0);
    assert!(n0 > 100 && inside0 > 100, "{n0} {inside0}");
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
            Ok(f) => handed += f.insns.len(),
            Err(e) => {
                refused = Some(e);
                break;
            }
        }
    }
    let why = refused.expect("the guard refused a function");
    assert!(handed <= total + SLACK, "{handed} > {total} + {SLACK}");
    assert!(
        matches!(&why, NoFunction::Guard(m) if m.contains("guard")),
        "{why:?}"
    );
    // an address with no code is not a guard refusal
    assert!(matches!(
        img.function_at(buf.len() as i64 + 2),
        Err(NoFunction::Missing(_))
    ));
}

#[test]
fn every_target_of_random_bytes_between_real_code() {
    // random bytes (unknown encodings, random branches, stray `stop`s and
    // zero runs) between copies of real code: the walks fall out of step
    // and back into it everywhere
    let mut next = crate::xorshift::xorshift64(0x2545_f491_4f6c_dd1d);
    let mut buf = Vec::new();
    let real = read("testdata/mesa/cf_bubble_sort8/cf_bubble_sort8.bin");
    for round in 0..6u32 {
        for _ in 0..700 {
            let x = next();
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
    let (n, inside) = check_every_target(&buf, 0x100, 0x100);
    assert!(n > 200 && inside > 200, "{n} {inside}");
}

/// Main (`call 0x40`, `stop`) at 0, zero padding to 0x40, then `helper`.
fn with_helper(helper: &[u8]) -> Vec<u8> {
    let mut buf = agx_isa::asm::assemble("mov_imm r0l, 0\ncall 0x40\nstop\n").unwrap();
    buf.resize(0x40, 0);
    buf.extend_from_slice(helper);
    buf
}

fn asm(text: &str) -> Vec<u8> {
    agx_isa::asm::assemble(text).unwrap()
}

/// Bytes no form matches (first byte 0x01: no form, length unknown): one
/// undecodable position per halfword.
const JUNK: [u8; 2] = [0x01, 0x01];

#[test]
fn call_targets_that_hold_no_code_say_why() {
    let helper = asm("mov_imm r4, 1, 0b0\niadd r4, r4.sx, 1\nret r1\n");
    let good = with_helper(&helper);
    let img = RawImage::new(&good, 0, 0);
    let f = img.function_at(0x40).expect("the helper");
    assert_eq!((f.entry, f.insns.len(), f.unknown), (0x40, 3, 0));
    let why = |buf: &[u8], start: usize, addr: u32, t: i64| {
        RawImage::new(buf, start, addr).function_at(t).unwrap_err()
    };
    // outside the input
    assert_eq!(
        why(&good, 0, 0, 0x400),
        NoFunction::Missing(format!(
            "it is past the end of the input (file offset 0x400, the input is {:#x} bytes)",
            good.len()
        ))
    );
    assert_eq!(
        why(&good, 0x10, 0x1000, 0xfee),
        NoFunction::Missing("it is before the start of the input (file offset -0x2)".into())
    );
    // not on an instruction
    assert_eq!(
        why(&good, 0, 0, 0x41),
        NoFunction::Malformed("it is not on a 2-byte boundary: no instruction starts there".into())
    );
    assert_eq!(
        why(&good, 0, 0, 0x2),
        NoFunction::Malformed("it is inside the 4-byte instruction at 0x0".into())
    );
    assert_eq!(
        why(&good, 0, 0, 0x42),
        NoFunction::Malformed(format!(
            "it is inside the {}-byte instruction at 0x40",
            f.insns[0].len
        ))
    );
    assert_eq!(
        why(&good, 0, 0, 0x20),
        NoFunction::Malformed("it holds zero bytes, no instruction".into())
    );
    // bytes that do not decode, at the target or in most of what it runs into
    let mut junk = JUNK.repeat(4);
    junk.extend_from_slice(&helper);
    assert_eq!(
        why(&with_helper(&junk), 0, 0, 0x40),
        NoFunction::Malformed("it holds bytes that do not decode".into())
    );
    let mut mostly = asm("mov_imm r4, 1, 0b0\n");
    mostly.extend(JUNK.repeat(6));
    mostly.extend(asm("ret r1\n"));
    assert_eq!(
        why(&with_helper(&mostly), 0, 0, 0x40),
        NoFunction::Malformed(
            "75% of the code it runs into does not decode: it is not code".into()
        )
    );
    // a few: handed out, counted
    let mut few = asm("mov_imm r4, 1, 0b0\niadd r4, r4.sx, 1\n");
    few.extend(JUNK);
    few.extend(asm("iadd r4, r4.sx, 1\niadd r4, r4.sx, 1\nret r1\n"));
    let f = RawImage::new(&with_helper(&few), 0, 0)
        .function_at(0x40)
        .expect("a few unknown encodings");
    assert_eq!((f.insns.len(), f.unknown), (5, 1));
    // bytes after the helper's `ret` are not its code
    let mut after = helper.clone();
    after.extend(JUNK.repeat(8));
    let f = RawImage::new(&with_helper(&after), 0, 0)
        .function_at(0x40)
        .unwrap();
    assert_eq!((f.insns.len(), f.unknown), (3, 0));
    // cut: the helper runs into the end of the input inside an instruction
    let mut cut = asm("mov_imm r4, 1, 0b0\n");
    cut.extend_from_slice(&asm("get_sr r1, sr80\n")[..2]);
    assert_eq!(
        why(&with_helper(&cut), 0, 0, 0x40),
        NoFunction::Cut(agx_isa::stream::Cut {
            addr: 0x40 + 6,
            have: 2,
            need: 4
        })
    );
    // ... at its first instruction, printed at the call's address space
    assert_eq!(
        why(
            &with_helper(&asm("get_sr r1, sr80\n")[..2]),
            0,
            0x1000,
            0x1040
        ),
        NoFunction::Cut(agx_isa::stream::Cut {
            addr: 0x1040,
            have: 2,
            need: 4
        })
    );
    // a cut the helper never runs into is not its problem
    let mut cut_after = helper.clone();
    cut_after.extend_from_slice(&asm("get_sr r1, sr80\n")[..2]);
    assert!(RawImage::new(&with_helper(&cut_after), 0, 0)
        .function_at(0x40)
        .is_ok());
}

#[test]
fn before_main_the_decode_is_a_guess() {
    // a helper before main whose bytes the walk from byte 0 reads out of
    // step (a 4-byte prefix that decodes as the start of a longer
    // instruction): the target is walked on its own, not refused
    let helper = asm("mov_imm r4, 1, 0b0\niadd r4, r4.sx, 1\nret r1\n");
    let mut buf = vec![0x0e, 0x15];
    buf.extend_from_slice(&helper);
    buf.resize(0x40, 0);
    let main = asm("mov_imm r0l, 0\ncall 0x2\nstop\n");
    buf.extend_from_slice(&main);
    let img = RawImage::new(&buf, 0x40, 0x40);
    let f = img.function_at(0x2).expect("the helper before main");
    assert_eq!(f.insns.len(), 3);
    assert_eq!(f.insns[0].addr, 0x2);
}
