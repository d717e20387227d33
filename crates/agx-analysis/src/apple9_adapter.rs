//! Fills the analysis facts (from the Apple9 code table,
//! `agx_isa::table::apple9`) and the untimed profile's per-instruction
//! [`Insn`]s from an Apple9 walk (`agx_isa::apple9`); the analysis passes
//! then run unchanged (docs/architecture.md,
//! "Adding an instruction-set family").

use crate::untimed::{Decoded, FramingStop, Insn, MemSite};
use agx_isa::apple9::facts::{facts, Index};
use agx_isa::apple9::{self, Item};

/// The decoded facts of Apple9 `code` placed at `base`.
pub fn decode(code: &[u8], base: u32) -> Decoded {
    from_listing(code, base, &apple9::walk(code, base))
}

/// [`decode`] of a walk already made (`l = apple9::walk(code, base)`).
pub fn from_listing(code: &[u8], base: u32, l: &apple9::Listing) -> Decoded {
    let mut d = Decoded {
        input_bytes: code.len(),
        stop: l.stop,
        framing_stop: l.framing.as_ref().map(|s| FramingStop {
            offset: s.offset,
            addr: s.addr,
            reason: s.reason.clone(),
        }),
        ..Decoded::default()
    };
    // registers, control flow and stack from the code table (the one
    // reading of Apple9 operands the passes share with every family)
    let table = agx_isa::table::apple9::table(code, base, l);
    d.facts = crate::facts::from_table(&table);
    d.table = Some(table);
    for it in &l.items {
        let Some((addr, len, bytes)) = it.framed(code, base) else {
            continue;
        };
        let Some(x) = facts(it, bytes) else { continue };
        // whether its operands are known: the table's column (one source)
        let complete = d
            .table
            .as_ref()
            .and_then(|t| t.rows.get(d.insns.len()))
            .map_or(x.complete, |r| r.complete);
        d.framed_bytes += len as usize;
        let (mnemonic, text) = match it {
            Item::Insn { mnem, .. } => (
                Some(mnem.clone()),
                apple9::asm_text(it, false).unwrap_or_default(),
            ),
            _ => (None, apple9::asm_text(it, false).unwrap_or_default()),
        };
        let mem = x.mem.as_ref().map(|m| {
            let (index, index_reg) = match &m.index {
                Index::Imm(v) => (v.to_string(), None),
                Index::Reg { reg, name } => (name.clone(), Some((reg, name))),
            };
            let mut lane_registers = Vec::new();
            if !m.base.uniform {
                lane_registers.push(m.base_name.clone());
            }
            if let Some((r, n)) = index_reg {
                if !r.uniform {
                    lane_registers.push(n.clone());
                }
            }
            MemSite {
                space: m.space,
                dir: m.dir,
                elem: m.elem,
                components: m.components,
                bytes_per_lane: m.bytes_per_lane,
                data: m.data_name.clone(),
                base: m.base_name.clone(),
                index,
                shift: m.shift,
                offset: m.offset,
                uniform_address: m.uniform_address(),
                lane_registers,
            }
        });
        d.insns.push(Insn {
            addr,
            len,
            mnemonic,
            text: text.trim_end().to_string(),
            complete,
            mem,
            wait_group: x.wait_group,
            waits_on: x.waits_on,
        });
    }
    // the code's extent: to the end of the `stop` that ended the walk,
    // else all of it; gaps are the zero runs skipped inside it
    d.code_bytes = l.stop.map_or(code.len(), |s| {
        (s.wrapping_sub(base) as usize + 4).min(code.len())
    });
    let walked = l.framing.as_ref().map_or(d.code_bytes, |s| s.offset);
    d.gap_bytes = walked.saturating_sub(d.framed_bytes);
    d
}
