//! Properties over random input: decoding and printing never panic, every
//! decoded length is even and 2..=12, the walk always advances, and decoding
//! is independent of the address except for printed addresses/targets.

use agx_isa::stream::{walk, write_item, Item};
use agx_isa::{decode, format_asm, Syntax};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64), pc in 0u32..0x10000) {
        match decode(&bytes, pc & !1) {
            Ok(i) => {
                prop_assert!(i.len >= 2 && i.len <= 12 && i.len % 2 == 0, "len {}", i.len);
                // never past the input
                prop_assert!(i.len as usize <= bytes.len(), "len {} of {} bytes", i.len, bytes.len());
                let _ = format_asm(&i, Syntax::Default);
                let _ = format_asm(&i, Syntax::Cryptic);
                let _ = (i.flow(), i.exec_op(), i.category());
                // the first operand text alone is operand_texts' first
                let mut first = String::new();
                agx_isa::format::first_operand_text(&i, Syntax::Default, &mut first);
                let all = agx_isa::format::operand_texts(&i, Syntax::Default);
                prop_assert_eq!(first.as_str(), all.first().map_or("", |s| s.as_str()));
                // one memory classification: mem_space is mem_access's space
                prop_assert_eq!(i.mem_space(), i.mem_access().map(|m| m.space));
                // trailing bytes after the instruction do not change it
                let mut padded = bytes.clone();
                padded.resize(bytes.len().max(12) + 4, 0);
                let j = decode(&padded, pc & !1).expect("padded decodes too");
                prop_assert_eq!((j.form, j.len, j.raw()), (i.form, i.len, i.raw()));
                for r in i.defs().chain(i.uses()) {
                    prop_assert!(r.count >= 1);
                }
            }
            // Truncated exactly when fewer than 2 bytes; NoMatch only with 2+
            // bytes, and the same bytes padded with zeros fail the same way
            Err(agx_isa::DecodeError::Truncated) => prop_assert!(bytes.len() < 2, "truncated with {} bytes", bytes.len()),
            // cut: the instruction (as the bytes padded with zeros decode)
            // is longer than the bytes given
            Err(agx_isa::DecodeError::Cut { have, need }) => {
                prop_assert_eq!(have as usize, bytes.len());
                let mut padded = bytes.clone();
                padded.resize(bytes.len().max(12) + 4, 0);
                let j = decode(&padded, pc & !1).expect("padded decodes");
                prop_assert_eq!(j.len, need);
                prop_assert!(need as usize > bytes.len());
            }
            Err(agx_isa::DecodeError::NoMatch) => {
                prop_assert!(bytes.len() >= 2);
                let mut padded = bytes.clone();
                padded.resize(bytes.len().max(12) + 4, 0);
                prop_assert!(matches!(decode(&padded, pc & !1), Err(agx_isa::DecodeError::NoMatch)));
            }
        }
    }

    #[test]
    fn walk_terminates_and_covers(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let mut out = String::new();
        let mut last = None;
        let mut steps = 0usize;
        for item in walk(&bytes, 0) {
            steps += 1;
            prop_assert!(steps <= bytes.len() + 1);
            let addr = match &item {
                Item::Insn { insn, shown } => {
                    prop_assert!(insn.len >= 2 && insn.len <= 12 && insn.len % 2 == 0);
                    prop_assert!(*shown as usize <= insn.len as usize);
                    insn.addr
                }
                Item::Gap { addr } => *addr,
                Item::Failed { addr, .. } => *addr,
            };
            if let (Some(l), false) = (last, matches!(item, Item::Gap { .. })) {
                prop_assert!(addr >= l);
            }
            last = Some(addr);
            write_item(&mut out, &item, Syntax::Default);
        }
    }

    #[test]
    fn decoding_does_not_depend_on_pc(bytes in proptest::collection::vec(any::<u8>(), 12..13), a in 0u32..0x8000, b in 0u32..0x8000) {
        let x = decode(&bytes, a * 2);
        let y = decode(&bytes, b * 2);
        match (x, y) {
            (Ok(x), Ok(y)) => {
                prop_assert_eq!(x.len, y.len);
                prop_assert_eq!(x.form, y.form);
                prop_assert_eq!(x.mnemonic(), y.mnemonic());
                prop_assert_eq!(x.operands.len(), y.operands.len());
            }
            (Err(e1), Err(e2)) => prop_assert_eq!(e1, e2),
            _ => prop_assert!(false, "decode depends on pc"),
        }
    }
}
