//! Fuzz target for the Apple9 decoder: arbitrary bytes at an arbitrary
//! base are walked and listed; nothing may panic, and the walk's invariants
//! hold (items in address order inside the code, each framed length the
//! length rule's, the listing one line per item).
#![no_main]

use agx_isa::apple9::{self, Item, Len};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (base, code) = match data.split_first_chunk::<4>() {
        Some((b, rest)) => (u32::from_le_bytes(*b) & 0xf_fffe, rest),
        None => (0, data),
    };
    let (text, l) = apple9::disassemble(code, base);
    let mut next = 0usize;
    let mut lines = 0usize;
    for it in &l.items {
        match it {
            Item::Insn { addr, len, .. } | Item::Unknown { addr, len } => {
                let p = addr.wrapping_sub(base) as usize;
                assert!(p >= next && p + *len as usize <= code.len());
                assert_eq!(apple9::length(&code[p..]), Len::Known(*len));
                next = p + *len as usize;
                lines += 1;
            }
            Item::Gap { .. } => lines += 1,
        }
    }
    assert!(text.lines().count() >= lines);
    if let Some(s) = &l.framing {
        assert!(s.offset >= next && s.offset < code.len());
    }
    // every form's decoder on the raw word, whatever the length rule says
    let mut n = 0u128;
    for (i, &b) in code.iter().take(16).enumerate() {
        n |= (b as u128) << (8 * i);
    }
    for f in apple9::forms::FORMS.iter() {
        if f.matches(n) {
            let _ = f.asm(n);
        }
    }
});
