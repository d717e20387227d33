//! Differential fuzz target for native syntax (issue #13): random bytes →
//! decode (applegpu's walk) → native text → assemble → decode must give the
//! same instruction: the form and operands native syntax shows, and
//! everything the analysis reads from the first-match decode (operands,
//! implicit operands, stack adjust, flow, exec-mask effect, memory space,
//! category, the scoreboard fields `g`/`i`, and the `raised` flag: native
//! syntax appends the field bits of encodings applegpu refuses to print as
//! `raw(0x..)`; docs/decoder.md). The comparison is the native-syntax
//! test's (testdata/native_signature.rs).
#![no_main]

use agx_isa::stream::walk;
use agx_isa::{decode, format_asm, Syntax};
use libfuzzer_sys::fuzz_target;

#[path = "../../testdata/native_signature.rs"]
mod native_signature;
use native_signature::signature;

fuzz_target!(|data: &[u8]| {
    for item in walk(data, 0) {
        let Some(i) = item.insn() else { continue };
        let text = format_asm(i, Syntax::Native);
        let bytes = match agx_isa::asm::assemble_at(&text, i.addr) {
            Ok(b) => b,
            Err(e) => panic!("native text does not assemble: `{text}`: {e}"),
        };
        let back = decode(&bytes, i.addr).expect("assembled bytes decode");
        assert_eq!(
            signature(&back, true),
            signature(i, true),
            "`{}` came back as `{}`",
            text.trim_end(),
            format_asm(&back, Syntax::Native).trim_end()
        );
    }
});
