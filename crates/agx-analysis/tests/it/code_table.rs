//! The code table carries everything the register, control-flow and stack
//! passes read (issue 36 item 1): the facts made from a G13 table
//! (`facts::from_table`) equal the facts scanned from the G13 instructions
//! (`facts::scan`) on every Mesa kernel (testdata/mesa and the shared
//! corpus), the shipped raw example and random streams; and an Apple9
//! table gives the same facts as the Apple9 adapter.

use agx_analysis::facts::{from_table, scan};
use std::path::Path;

fn same_facts(insns: &[agx_isa::Instruction], what: &str) {
    let want = scan(insns);
    let got = from_table(&agx_isa::table::g13::table(insns));
    assert_eq!(got, want, "{what}");
}

fn mesa_root(root: &Path) -> usize {
    let kernels = crate::common::mesa_kernels(root);
    for (name, insns) in &kernels {
        same_facts(insns, name);
    }
    kernels.len()
}

#[test]
fn g13_table_facts_equal_scanned_facts() {
    let repo = crate::shared_data::repo_root();
    assert!(mesa_root(&repo.join("testdata/mesa")) >= 30);
    if let Some(shared) = crate::shared_data::shared("corpus/mesa") {
        assert!(mesa_root(&shared) >= 30);
    }
    let bin = std::fs::read(repo.join("examples/matmul_naive.bin")).unwrap();
    let insns: Vec<_> = agx_isa::stream::walk(&bin, 0)
        .filter_map(|it| it.into_insn())
        .collect();
    same_facts(&insns, "matmul_naive.bin");
    // random words: every form, odd operands, stack adjusts
    let mut rng = crate::xorshift::Rng(0x7ab1e);
    for round in 0..20 {
        let bytes: Vec<u8> = (0..4096).map(|_| rng.next() as u8).collect();
        let insns: Vec<_> = agx_isa::stream::walk(&bytes, 0)
            .filter_map(|it| it.into_insn())
            .collect();
        same_facts(&insns, &format!("random round {round}"));
    }
}

/// Apple9: the facts from the table hold exactly the registers the
/// Apple9 decoder's own per-instruction facts name (`apple9::facts`),
/// definitions first, and every unknown position defines everything; a
/// predicate compare reads its two compared operands and writes no GPR;
/// a documented exec-mask form has no register operand.
#[test]
fn apple9_table_facts_hold_the_decoders_registers() {
    use agx_analysis::facts::RegRange;
    let repo = crate::shared_data::repo_root();
    for f in [
        "examples/apple9_loop.a9bin",
        "testdata/apple9/stream06_pad0600.a9bin",
        "testdata/apple9/stream10_wait.a9bin",
        "testdata/apple9-cases/nested_loops.a9bin",
    ] {
        let mut code = std::fs::read(repo.join(f)).unwrap();
        if f.starts_with("examples/") {
            code.drain(..0x40); // main (the preamble is one `stop`)
        }
        let l = agx_isa::apple9::walk(&code, 0);
        let decoded = agx_analysis::apple9_adapter::from_listing(&code, 0, &l);
        let table = decoded.table.unwrap();
        let got = decoded.facts;
        let mut k = 0;
        for it in &l.items {
            let (addr, len) = match it {
                agx_isa::apple9::Item::Gap { .. } => continue,
                agx_isa::apple9::Item::Insn { addr, len, .. }
                | agx_isa::apple9::Item::Unknown { addr, len } => (*addr, *len),
            };
            let bytes = &code[addr as usize..addr as usize + len as usize];
            let x = agx_isa::apple9::facts::facts(it, bytes).unwrap();
            assert_eq!((got.addr[k], got.flow[k]), (addr, x.flow), "{f} 0x{addr:x}");
            let compare = matches!(table.rows[k].pred, Some(agx_isa::table::Pred::Write(_)));
            let want: Vec<(u32, u32, bool, bool)> = if compare {
                // a predicate compare (docs/apple9-exec-mask.md): no GPR
                // written, the two compared operands read
                let agx_isa::apple9::Item::Insn { operands, .. } = it else {
                    unreachable!()
                };
                operands[2..4]
                    .iter()
                    .filter_map(|o| agx_isa::apple9::facts::parse_reg(o))
                    .flatten()
                    .map(|r| (r.range().start, r.range().end, false, r.uniform))
                    .collect()
            } else if table.rows[k].exec.is_some() {
                // a documented exec-mask form: no register operand
                Vec::new()
            } else if x.complete {
                x.defs
                    .iter()
                    .map(|r| (r.range().start, r.range().end, true, r.uniform))
                    .chain(
                        x.uses
                            .iter()
                            .map(|r| (r.range().start, r.range().end, false, r.uniform)),
                    )
                    .collect()
            } else {
                vec![(0, 256, true, false), (0, 512, true, true)]
            };
            let have: Vec<(u32, u32, bool, bool)> = got
                .regs(k)
                .iter()
                .map(|r| {
                    (
                        r.range().start,
                        r.range().end,
                        r.bits & RegRange::DEF != 0,
                        r.bits & RegRange::UNIFORM != 0,
                    )
                })
                .collect();
            assert_eq!(have, want, "{f} 0x{addr:x}");
            k += 1;
        }
        assert_eq!(k, got.len(), "{f}");
        assert!(k > 3, "{f}: {k} rows");
    }
}
