//! Decoder fuzz target: arbitrary bytes through the applegpu-compatible walk,
//! single-instruction decode at every even offset, and both formatters.
//! Invariants: no panic; every decoded length is 2..=12 and even.
#![no_main]

use agx_isa::stream::{walk, write_item};
use agx_isa::{decode, format_asm, Syntax};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut out = String::new();
    for item in walk(data, 0) {
        if let Some(i) = item.insn() {
            assert!(i.len >= 2 && i.len <= 12 && i.len % 2 == 0);
        }
        write_item(&mut out, &item, Syntax::Default);
        write_item(&mut out, &item, Syntax::Cryptic);
        if out.len() > 1 << 16 {
            out.clear();
        }
    }
    for off in (0..data.len()).step_by(2) {
        if let Ok(i) = decode(&data[off..], off as u32) {
            assert!(i.len >= 2 && i.len <= 12 && i.len % 2 == 0);
            let _ = format_asm(&i, Syntax::Default);
            let _ = i.flow();
            let _ = i.exec_op();
            let _ = i.mem_space();
            let _ = i.defs().count() + i.uses().count();
        }
    }
});
