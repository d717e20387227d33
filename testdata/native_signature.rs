//! The round-trip identity of a G13 instruction: what the native-syntax
//! test (`crates/agx-isa/tests/it/native_syntax.rs`) and the differential
//! fuzz target (`fuzz/fuzz_targets/native_roundtrip.rs`) compare between
//! an instruction and the decode of its assembled native text. One copy,
//! included as `mod native_signature;`.

use agx_isa::forms::FORMS;
use agx_isa::native::native_instruction;
use agx_isa::Instruction;

/// Everything about an instruction that later stages read: the form and
/// operands native syntax prints (role, register file, width, count, hints),
/// implicit operands, and what the analysis takes from the first-match
/// decode: its operands (defs/uses), stack adjust, flow, exec-mask effect,
/// memory space, category and the scoreboard fields (`g` of loads, `i` of
/// `wait`). `raised` only with `with_raised`.
pub fn signature(i: &Instruction, with_raised: bool) -> String {
    let n = native_instruction(i);
    let shown = n.as_ref().unwrap_or(i);
    let field = |name: &str| {
        let f = &FORMS[i.form as usize];
        f.fields.iter().find(|x| x.name == name).map(|x| {
            x.parts.iter().fold(0u64, |v, &(start, width, shift)| {
                v | ((((i.raw() >> start) & ((1u128 << width) - 1)) as u64) << shift)
            })
        })
    };
    format!(
        "{} {} {:?} {:?} | {} {:?} {:?} adj={:?} flow={:?} exec={:?}/{:?} mem={:?} cat={:?} g={:?} i={:?}{}",
        shown.form,
        shown.mnemonic(),
        shown.operands,
        shown.implicit,
        i.form,
        i.operands,
        i.implicit,
        i.stack_adjust(),
        i.flow(),
        i.exec_op(),
        i.exec_count(),
        i.mem_space(),
        i.category(),
        field("g"),
        field("i"),
        if with_raised {
            format!(" raised={}", i.raised)
        } else {
            String::new()
        }
    )
}
