use super::*;
use crate::asm::assemble_insns;

/// The `hex` byte strings of a committed JSON-lines slice under testdata/.
fn hex_cases(rel: &str) -> Vec<(String, Vec<u8>)> {
    let path = format!("{}/../../testdata/{rel}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("testdata slice");
    text.lines()
        .filter_map(|line| {
            let hex = line.split("\"hex\": \"").nth(1)?.split('"').next()?;
            let bytes = (0..hex.len() / 2)
                .filter_map(|k| u8::from_str_radix(&hex[2 * k..2 * k + 2], 16).ok())
                .collect();
            Some((hex.to_string(), bytes))
        })
        .collect()
}

fn g13(text: &str) -> CodeTable {
    g13::table(&assemble_insns(text).unwrap_or_else(|e| panic!("{e}\n{text}")))
}

#[test]
fn g13_rows_carry_class_cost_flow_and_special_meaning() {
    let t = g13("get_sr r0, sr80\n\
         get_sr r1, sr52\n\
         get_sr r2, sr2\n\
         device_load 0, i32, xyz, r4_r5_r6, u0_u1, r0, unsigned, lsl 2\n\
         wait 0\n\
         fmadd32 r1, r4, r5, r6\n\
         stop\n");
    assert_eq!(t.len(), 7);
    assert_eq!(t.isa.family, crate::isa::Family::G13);
    let sp: Vec<_> = t.rows[..3]
        .iter()
        .map(|r| r.special.unwrap().value)
        .collect();
    assert_eq!(
        sp,
        [
            SpecialValue::ThreadPositionInGrid(0),
            SpecialValue::ThreadIndexInSimdgroup,
            SpecialValue::ThreadgroupPositionInGrid(2),
        ]
    );
    assert_eq!(
        sp.iter().map(|v| v.simd_uniform()).collect::<Vec<_>>(),
        [Some(false), Some(false), Some(true)]
    );
    assert_eq!(t.rows[3].class, Category::Load);
    assert_eq!(t.rows[3].cost, Some(CostKey::DeviceLoad));
    assert_eq!(t.rows[4].wait.waits_on, 1);
    assert_eq!(t.rows[3].wait.completes_on, Some(0));
    assert_eq!(t.rows[5].cost, Some(CostKey::Fma32));
    assert_eq!(t.rows[6].flow, Flow::Stop);
    // fmadd32 r1, r4, r5, r6: one def, three uses, in halves
    let defs: Vec<_> = t.defs(5).map(|r| r.range()).collect();
    let uses: Vec<_> = t.uses(5).map(|r| r.range()).collect();
    assert_eq!(defs, vec![2..4]);
    assert_eq!(uses, vec![8..10, 10..12, 12..14]);
    assert_eq!(t.index_of(t.rows[5].addr), Some(5));
}

#[test]
fn g13_memory_descriptor_names_base_index_and_shift() {
    let t = g13("get_sr r0, sr80\n\
         device_load 0, i32, xyz, r4_r5_r6, u0_u1, r0, unsigned, lsl 2\n\
         wait 0\n\
         device_store 1, i16, x, r1l, u2_u3, 5, unsigned, 0\n\
         stop\n");
    let m = t.mem(1).expect("a load");
    assert_eq!((m.space, m.dir), (MemSpace::Device, MemDir::Load));
    assert_eq!((m.elem_bytes, m.components, m.bytes_per_lane), (4, 3, 12));
    assert_eq!(m.base.unwrap().range(), 0..4);
    assert!(m.base.unwrap().is_uniform());
    assert!(matches!(m.index, MemIndex::Reg(r) if r.range() == (0..2) && !r.is_uniform()));
    // element size (4 bytes: 2) plus the printed `lsl 2`
    assert_eq!(m.shift, 4);
    assert_eq!(m.uniform_address(), Some(false));
    let s = t.mem(3).expect("a store");
    assert_eq!(
        (s.dir, s.elem_bytes, s.bytes_per_lane),
        (MemDir::Store, 2, 2)
    );
    assert_eq!(s.index, MemIndex::Imm(5));
    assert_eq!(s.uniform_address(), Some(true));
    assert_eq!(t.accesses().map(|(i, _)| i).collect::<Vec<_>>(), vec![1, 3]);
    assert!(t.mem(0).is_none());
}

/// Every instruction of the committed applegpu slice fills a row that
/// agrees with the G13 semantics it came from.
#[test]
fn g13_rows_agree_with_the_decoder_on_the_corpus_slice() {
    let mut n = 0;
    for (hex, bytes) in hex_cases("applegpu/encodings.slice.jsonl") {
        let Ok(i) = crate::decode(&bytes, 0) else {
            continue;
        };
        let t = g13::table(std::slice::from_ref(&i));
        let r = &t.rows[0];
        assert_eq!(r.class, i.category(), "{hex}");
        assert_eq!(r.flow, i.flow(), "{hex}");
        assert_eq!(
            t.mem(0).map(|m| (m.space, m.dir)),
            i.mem_access().map(|m| (m.space, m.dir)),
            "{hex}"
        );
        assert_eq!(
            t.defs(0).count(),
            i.defs().filter(|r| !r.half_range().is_empty()).count(),
            "{hex}"
        );
        n += 1;
    }
    assert!(n > 1000, "only {n} cases read");
}

fn apple9(code: &[u8]) -> CodeTable {
    apple9::table(code, 0, &crate::apple9::walk(code, 0))
}

#[test]
fn apple9_rows_from_the_example_kernel() {
    // examples/apple9_loop.a9bin's load and an fadd (Mesa packer vectors)
    let load = [0x67, 0, 0x54, 4, 3, 1, 0x20, 0, 0x51, 1, 0, 0x40, 0x46, 0];
    let t = apple9(&load);
    assert_eq!(t.isa.family, crate::isa::Family::Apple9);
    let r = &t.rows[0];
    assert_eq!(
        (r.class, r.cost),
        (Category::Load, Some(CostKey::DeviceLoad))
    );
    assert_eq!(r.wait.completes_on, Some(5));
    let m = t.mem(0).unwrap();
    assert_eq!(
        (m.elem_bytes, m.components, m.bytes_per_lane, m.shift),
        (4, 1, 4, 2)
    );
    assert!(m.base.unwrap().is_uniform());
    assert!(matches!(m.index, MemIndex::Reg(x) if x.range() == (2..4)));
    assert_eq!(m.uniform_address(), Some(false));
    assert_eq!(t.defs(0).map(|r| r.range()).collect::<Vec<_>>(), vec![4..6]);
    let fadd = [0x49, 5, 0x3c, 7, 0, 0];
    let t = apple9(&fadd);
    assert_eq!(
        (t.rows[0].class, t.rows[0].cost),
        (Category::Alu, Some(CostKey::Fadd32))
    );
    assert_eq!(
        t.uses(0).map(|r| r.range()).collect::<Vec<_>>(),
        vec![4..6, 6..8]
    );
}

/// Every Apple9 case of the committed reference slice fills rows without
/// a panic, one per framed position, with the form's class.
#[test]
fn apple9_rows_for_every_reference_case() {
    let (mut n, mut mems, mut specials) = (0, 0, 0);
    for (hex, mut bytes) in hex_cases("apple9/tk-single.jsonl") {
        bytes.extend([0x0e, 0, 0, 0]); // stop
        let l = crate::apple9::walk(&bytes, 0);
        let t = apple9::table(&bytes, 0, &l);
        let framed = l
            .items
            .iter()
            .filter(|i| !matches!(i, crate::apple9::Item::Gap { .. }))
            .count();
        assert_eq!(t.len(), framed, "{hex}");
        mems += t.accesses().count();
        specials += t.rows.iter().filter(|r| r.special.is_some()).count();
        n += 1;
    }
    assert!(n >= 300, "only {n} cases read");
    assert!(
        mems > 0 && specials > 0,
        "{mems} accesses, {specials} special reads"
    );
}

#[test]
fn apple9_form_columns_match_the_roles() {
    use crate::apple9::facts::{Role, ROLES};
    for (k, (role, (class, _))) in ROLES.iter().zip(&FORM_COLUMNS_REF).enumerate() {
        match role {
            Role::Mem(_, MemDir::Load) => assert_eq!(*class, Category::Load, "form {k}"),
            Role::Mem(_, MemDir::Store) => assert_eq!(*class, Category::Store, "form {k}"),
            Role::End => assert_eq!(*class, Category::Control, "form {k}"),
            Role::Wait => assert_eq!(*class, Category::Sync, "form {k}"),
            _ => assert_eq!(*class, Category::Alu, "form {k}"),
        }
    }
}

use apple9::FORM_COLUMNS as FORM_COLUMNS_REF;

#[test]
fn apple9_special_registers_from_the_documented_table() {
    // `get_sr 0, r0, sr32` (Apple-compiled bytes, docs/apple9-special-registers.md)
    let t = apple9(&[0x0c, 0xa0, 0x10, 0x06, 0x0e, 0, 0, 0]);
    let s = t.rows[0].special.expect("a special read");
    assert_eq!(
        (s.number, s.value),
        (32, SpecialValue::ThreadPositionInGrid(0))
    );
    assert_eq!(s.value.simd_uniform(), Some(false));
    assert_eq!(t.defs(0).map(|r| r.range()).collect::<Vec<_>>(), vec![0..2]);
    // lane (sr2, the 16-bit form) and SIMD-group index (sr5)
    let t = apple9(&[
        0x04, 0x82, 0x10, 0x06, 0x04, 0x85, 0x10, 0x06, 0x0e, 0, 0, 0,
    ]);
    let v: Vec<_> = t.rows[..2]
        .iter()
        .map(|r| r.special.unwrap().value)
        .collect();
    assert_eq!(
        v,
        [
            SpecialValue::ThreadIndexInSimdgroup,
            SpecialValue::SimdgroupIndexInThreadgroup
        ]
    );
    assert_eq!(v[1].simd_uniform(), Some(true));
    // an undocumented number stays unknown (a pass treats it as divergent)
    assert_eq!(apple9::sr_value(40), SpecialValue::Unknown);
    assert_eq!(SpecialValue::Unknown.simd_uniform(), None);
}
