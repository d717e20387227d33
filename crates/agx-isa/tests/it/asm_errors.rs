//! Assembler errors (line, column, message) for the common mistakes, and the
//! small API used by other crates' tests.

use agx_isa::asm::{assemble, assemble_at, assemble_insns, AsmError};
use agx_isa::{format_asm, Syntax};

fn err(text: &str) -> AsmError {
    match assemble(text) {
        Ok(b) => panic!("{text:?} assembled to {b:02x?}"),
        Err(e) => e,
    }
}

/// The error of `text`, asserted to be at (line, column) `at`.
fn err_at(text: &str, at: (usize, usize)) -> AsmError {
    let e = err(text);
    assert_eq!((e.line, e.column), at, "{text:?}: {e}");
    e
}

fn texts(text: &str) -> Vec<String> {
    assemble_insns(text)
        .unwrap()
        .iter()
        .map(|i| format_asm(i, Syntax::Default).trim_end().to_string())
        .collect()
}

#[test]
fn unknown_mnemonic_suggests() {
    let e = err_at("stop\n  fad32 r0, r1, r2\n", (2, 3));
    assert!(e.message.contains("unknown mnemonic `fad32`"), "{e}");
    assert!(e.message.contains("`fadd32`"), "{e}");
}

#[test]
fn wrong_operand_count() {
    let e = err_at("fadd32 r0, r1", (1, 1));
    assert_eq!(
        e.message,
        "wrong operand count: `fadd32` takes 3 (D, A, B), found 2"
    );
}

#[test]
fn register_out_of_range() {
    let e = err_at("fadd32 r0, r200, r2", (1, 12));
    assert!(e.message.contains("register `r200` out of range"), "{e}");
    assert!(e.message.contains("r0..r127"), "{e}");
    let e = err_at(
        "mov_imm r0l, 1\nget_sr r1, sr80\ndevice_load 0, i32, x, r300, u0_u1, r0, unsigned",
        (3, 24),
    );
    assert!(e.message.contains("out of range"), "{e}");
}

#[test]
fn immediate_too_large() {
    let e = err_at("iadd r0, r1, 300", (1, 14));
    assert!(e.message.contains("immediate 300 out of range"), "{e}");
    assert!(e.message.contains("0..=255"), "{e}");
    // 32-bit mov_imm (applegpu prints its `kill` bit: `, 0b0`)
    let e = err("mov_imm r0, 5000000000, 0b0");
    assert!(e.message.contains("0..=4294967295"), "{e}");
    let e = err("wait 2");
    assert!(
        e.message
            .contains("immediate 2 out of range for `i` of wait: 0..=1"),
        "{e}"
    );
}

#[test]
fn unknown_label() {
    let e = err_at("top:\n  jmp_exec_any nowhere\n", (2, 16));
    assert_eq!(e.message, "unknown label `nowhere`");
}

#[test]
fn other_mistakes() {
    let e = err("a: stop\na: stop");
    assert!(
        e.message.contains("label `a` already defined on line 1"),
        "{e}"
    );
    let e = err("fadd32 r0, r1, 0.3");
    assert!(
        e.message
            .contains("not a register or an encodable float immediate"),
        "{e}"
    );
    let e = err("fadd32 r0, , r1");
    assert_eq!(e.message, "empty operand");
    let e = err("jmp_incomplete 0x1000");
    assert!(e.message.contains("out of range for jmp_incomplete"), "{e}");
    // an alias-only spelling: applegpu always prints this as `and`
    let e = err("bitop 0001, r0, r1, r2");
    assert!(e.message.contains("and              r0, r1, r2"), "{e}");
}

#[test]
fn kernels_read_like_text() {
    let k = "\
        ; a little loop
        mov_imm r0, 0, 0b0
loop:   fmadd32 r1, r2, r3, r1     # accumulate
        iadd    r0, r0, 1
        while_icmp r0l, ult, r0, 64, 1
        jmp_exec_any loop
        pop_exec r0l, 1
        stop
";
    let t = texts(k);
    assert_eq!(t[0], "mov_imm          r0, 0, 0b0");
    // applegpu's spelling is required: a 32-bit mov_imm prints its kill bit
    let e = err("mov_imm r0, 0");
    assert!(
        e.message
            .contains("nearest encoding prints `mov_imm          r0, 0, 0b0`"),
        "{e}"
    );
    assert_eq!(t[1], "fmadd32          r1, r2, r3, r1");
    assert!(t[4].starts_with("jmp_exec_any"), "{t:?}");
    let insns = assemble_insns(k).unwrap();
    // the branch goes back to `loop` (the fmadd32)
    assert_eq!(
        insns[4].operands[0].kind,
        agx_isa::OperandKind::target(insns[1].addr as i32 - insns[4].addr as i32)
    );
    assert_eq!(t.last().unwrap(), "stop");
}

#[test]
fn aliases_sat_and_cryptic() {
    let t = texts("and r0, r1, r2\nmov r3, r4\nisub.sat r5, r6, r7\nfadd32.sat $r1, r2.abs, 0.5\nupdate_exec r0l\npush_exec r0l, 2");
    assert_eq!(
        t,
        [
            "and              r0, r1, r2",
            "mov              r3, r4",
            "isub.sat         r5, r6, r7",
            "fadd32.sat       r1.cache, r2.abs, 0.5",
            "update_exec      r0l",
            "push_exec        r0l, 2",
        ]
    );
}

#[test]
fn shortest_form_and_listing_input() {
    // fadd32 has 4- and 6-byte forms: the short one holds no B register
    // (B = 0.0) and no register above r31
    assert_eq!(assemble("fadd32 r1, r2, 0.0").unwrap().len(), 4);
    assert_eq!(assemble("fadd32 r1, r2, r3").unwrap().len(), 6);
    assert_eq!(assemble("fadd32 r100, r2, 0.0").unwrap().len(), 6);
    // a pasted listing: address and hex columns are ignored, addresses place
    // the code and absolute targets resolve
    let listing = "\
  10: 2a8542020002         fadd32           r1, r1, -0.0
  16: 8800                 stop
";
    let p = agx_isa::asm::assemble_program(listing, 0).unwrap();
    assert_eq!(p.origin, 0x10);
    assert_eq!(p.bytes, [0x2a, 0x85, 0x42, 0x02, 0x00, 0x02, 0x88, 0x00]);
    // `.org` and absolute targets
    let b = assemble_at(".org 0x100\ncall 0x140", 0).unwrap();
    let i = agx_isa::decode(&b, 0x100).unwrap();
    assert_eq!(format_asm(&i, Syntax::Default), "call             0x140");
}
