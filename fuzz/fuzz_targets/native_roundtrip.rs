//! Differential fuzz target for native syntax (issue #13): random bytes →
//! decode (applegpu's walk) → native text → assemble → decode must give the
//! same instruction: the form and operands native syntax shows, and
//! everything the analysis reads from the first-match decode (operands,
//! implicit operands, stack adjust, flow, exec-mask effect, memory space,
//! category, and the `raised` flag: native syntax appends the field bits of
//! encodings applegpu refuses to print as `raw(0x..)`; docs/decoder.md).
#![no_main]

use agx_isa::native::native_instruction;
use agx_isa::stream::walk;
use agx_isa::{decode, format_asm, Instruction, Syntax};
use libfuzzer_sys::fuzz_target;

fn view(i: &Instruction) -> String {
    let n = native_instruction(i);
    let s = n.as_ref().unwrap_or(i);
    format!(
        "{} {} {:?} {:?} | {} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} raised={}",
        s.form,
        s.mnemonic(),
        s.operands,
        s.implicit,
        i.form,
        i.operands,
        i.implicit,
        i.stack_adjust(),
        i.flow(),
        i.exec_op(),
        i.exec_count(),
        i.mem_space(),
        i.category(),
        i.raised
    )
}

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
            view(&back),
            view(i),
            "`{}` came back as `{}`",
            text.trim_end(),
            format_asm(&back, Syntax::Native).trim_end()
        );
    }
});
