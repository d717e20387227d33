//! Arbitrary bytes → archive reader → G13 decoder walk over every function.
#![no_main]

use agx_container::{read_with, Input, ReadOptions};
use libfuzzer_sys::fuzz_target;

/// Bounds the work per input; walk() itself must stop on its own.
const MAX_ITEMS: usize = 1 << 16;

fn walk(code: &[u8], base: u64) {
    let base = u32::try_from(base).unwrap_or(0);
    for item in agx_isa::stream::walk(code, base).take(MAX_ITEMS) {
        std::hint::black_box(item);
    }
}

fuzz_target!(|data: &[u8]| {
    // the profiler's decode predicate (the GPU models), every slice read
    let opts = ReadOptions {
        allow_other_gpus: true,
        ..ReadOptions::new(agx_analysis::gpu::decodes)
    };
    match read_with(data, &opts) {
        Ok(Input::Archive(a)) => {
            // Per-function work is bounded so that inputs with thousands of
            // symbols exercise the reader, not this loop.
            for f in a.functions.iter().take(64) {
                // The function alone, as --disasm-only of a blob would.
                walk(a.function_code(f), 0);
                // And in place in __text, as the CLI disassembles it so that
                // call targets resolve.
                let text = a.code(f);
                let start = (f.text_offset as usize).min(text.len());
                walk(&text[start..], f.text_offset);
                let _ = a.symbol_at(f, 0);
                let _ = a.prolog_of(f);
                let _ = a.select(Some(&f.name));
            }
            let _ = a.select(None);
            let _ = a.available_names();
        }
        Ok(Input::Raw(code)) => walk(&code, 0),
        Err(e) => {
            std::hint::black_box(e.to_string());
        }
    }
});
