//! The words a threadgroup atomic's address can reach at all, whatever the
//! data (issue 35 item 4, must-show 1: the histogram's `atomicAdd(lb[clamp(b,
//! 0, 63)], 1u)` reaches 64 words although `b` comes from loaded data).
//!
//! A backward walk over the straight-line code before the atomic (no
//! branch, no exec-mask change in between) gives the address register a
//! signed 32-bit interval: an immediate is itself; `icmpsel` selecting
//! between its two compared operands is their minimum (`slt`/`slte`, or
//! `ult`/`ulte` of non-negative intervals) or maximum (`sgt`/`sgte`,
//! `ugt`/`ugte`), any other `icmpsel` the union of its two arms; `iadd`
//! (optionally `lsl n` on the second source) adds the intervals; anything
//! else, or a value the walk does not reach, is any 32-bit value. Only an
//! interval the walk proves on every path bounds the words.

use agx_isa::format::operand_texts;
use agx_isa::{Flow, Instruction, RegFile, Syntax};

/// A signed 32-bit interval, `lo <= hi`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Iv {
    lo: i64,
    hi: i64,
}

const ANY: Iv = Iv {
    lo: i32::MIN as i64,
    hi: i32::MAX as i64,
};

impl Iv {
    fn of(v: i64) -> Iv {
        Iv { lo: v, hi: v }
    }
    /// Clamped to the 32-bit range: wider means any value (a wrap).
    fn checked(lo: i64, hi: i64) -> Iv {
        if lo < ANY.lo || hi > ANY.hi {
            ANY
        } else {
            Iv { lo, hi }
        }
    }
}

/// A register operand's text without its modifiers (`r2.sx` -> `r2`), and
/// the 32-bit register holding it (`r2l` -> `r2`).
fn reg_name(t: &str) -> Option<(&str, &str)> {
    let base = t.split('.').next()?;
    let digits = base.strip_prefix('r')?;
    let full = base.trim_end_matches(['l', 'h']);
    (digits.starts_with(|c: char| c.is_ascii_digit())).then_some((base, full))
}

/// Whether `insn` writes any half of the 32-bit register named `full`
/// (`r2`: halves 4 and 5).
fn writes(insn: &Instruction, full: &str) -> bool {
    let Some(h) = full.strip_prefix('r').and_then(|n| n.parse::<u16>().ok()) else {
        return true;
    };
    let h = h * 2;
    insn.defs().any(|d| {
        d.file == RegFile::Gpr && {
            let n = d.width.halves() * d.count.max(1) as u16;
            d.half < h + 2 && h < d.half + n
        }
    })
}

/// The interval of operand text `t` read by instruction `at`.
fn operand(insns: &[Instruction], at: usize, t: &str, depth: u8) -> Iv {
    if let Ok(v) = t.parse::<i64>() {
        return Iv::of(v);
    }
    match reg_name(t) {
        Some((base, full)) if depth > 0 => {
            let v = register(insns, at, full, depth - 1);
            // a 16-bit half holds the low 16 bits: the same value when the
            // register's interval fits them
            if base != full && (v.lo < 0 || v.hi > 0xffff) {
                ANY
            } else {
                v
            }
        }
        _ => ANY,
    }
}

/// The interval of the 32-bit register `full` just before instruction `at`.
fn register(insns: &[Instruction], at: usize, full: &str, depth: u8) -> Iv {
    for k in (at.saturating_sub(64)..at).rev() {
        let insn = &insns[k];
        if insn.flow() != Flow::Next || insn.exec_op().is_some() {
            return ANY;
        }
        if !writes(insn, full) {
            continue;
        }
        let ops = operand_texts(insn, Syntax::Default);
        // only a def of exactly this register is followed
        let dest = ops.get((insn.mnemonic() == "icmpsel") as usize);
        if insn.defs().count() != 1 || dest.map(String::as_str) != Some(full) {
            return ANY;
        }
        return match (insn.mnemonic(), ops.as_slice()) {
            ("mov_imm", [_, v, ..]) => v.parse().map_or(ANY, Iv::of),
            ("iadd", [_, a, b]) => sum(insns, k, a, b, 0, depth),
            ("iadd", [_, a, b, s]) => match s.strip_prefix("lsl ").map(str::parse::<u32>) {
                Some(Ok(n)) if n < 31 => sum(insns, k, a, b, n, depth),
                _ => ANY,
            },
            ("icmpsel", [cc, _, a, b, x, y]) => select(insns, k, cc, [a, b, x, y], depth),
            _ => ANY,
        };
    }
    ANY
}

/// `a + (b << n)`.
fn sum(insns: &[Instruction], k: usize, a: &str, b: &str, n: u32, depth: u8) -> Iv {
    let (a, b) = (operand(insns, k, a, depth), operand(insns, k, b, depth));
    if b.lo < 0 {
        return ANY;
    }
    let m = 1i64 << n;
    Iv::checked(a.lo + b.lo * m, a.hi + b.hi * m)
}

/// `cc(a, b) ? x : y`.
fn select(insns: &[Instruction], k: usize, cc: &str, [a, b, x, y]: [&String; 4], depth: u8) -> Iv {
    let iv = |t: &str| operand(insns, k, t, depth);
    let (va, vb) = (iv(a), iv(b));
    let unsigned_ok = va.lo >= 0 && vb.lo >= 0;
    let min = Iv::checked(va.lo.min(vb.lo), va.hi.min(vb.hi));
    let max = Iv::checked(va.lo.max(vb.lo), va.hi.max(vb.hi));
    let less = matches!(cc, "slt" | "slte") || unsigned_ok && matches!(cc, "ult" | "ulte");
    let more = matches!(cc, "sgt" | "sgte") || unsigned_ok && matches!(cc, "ugt" | "ugte");
    match ((x == a && y == b), (x == b && y == a)) {
        (true, _) if less => min,
        (true, _) if more => max,
        (_, true) if less => max,
        (_, true) if more => min,
        _ => {
            let (vx, vy) = (iv(x), iv(y));
            Iv::checked(vx.lo.min(vy.lo), vx.hi.max(vy.hi))
        }
    }
}

/// The distinct `width`-byte words the threadgroup atomic at `at` can
/// update: its address operand (applegpu's `A`, the third operand, with an
/// index `O` of 0) bounded by the walk. None when not bounded or not that
/// form.
pub fn words_reached(insns: &[Instruction], at: usize, width: u32) -> Option<u32> {
    let insn = insns.get(at)?;
    let ops = operand_texts(insn, Syntax::Default);
    if insn.mnemonic() != "threadgroup_atomic" || ops.get(3).map(String::as_str) != Some("0") {
        return None;
    }
    let v = operand(insns, at, ops.get(2)?, 8);
    let w = width.max(1) as i64;
    if v == ANY || v.lo < 0 {
        return None;
    }
    u32::try_from(v.hi / w - v.lo / w + 1).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reached(pre: &str) -> Option<u32> {
        let text = format!("{pre}threadgroup_atomic add, None, r2l, 0, r3, 0, 2, 128, 0\n");
        let insns = agx_isa::asm::assemble_insns(&text).unwrap();
        words_reached(&insns, insns.len() - 1, 4)
    }

    /// The histogram's bin: `4 * clamp(b, 0, 63)` of a value from data
    /// reaches 64 words; an unclamped, half-clamped or branched-over
    /// address nothing.
    #[test]
    fn a_clamped_index_bounds_the_words() {
        let clamp = "convert f_to_s32, r2, r2, rtz\n\
                     icmpsel sgt, r2, r2, 0, r2, 0\n\
                     icmpsel slt, r2, r2, 63, r2, 63\n";
        let shift = "iadd r2, 0, r2.sx, lsl 2\n";
        assert_eq!(
            reached(&format!("{clamp}{shift}mov_imm r3, 1, 0b0\n")),
            Some(64)
        );
        // an offset of 4 bytes: still 64 words
        assert_eq!(
            reached(&format!("{clamp}{shift}iadd r2, r2, 4\n")),
            Some(64)
        );
        // min only: negative values stay possible
        assert_eq!(
            reached(&clamp.replace("icmpsel sgt, r2, r2, 0, r2, 0\n", "")),
            None
        );
        assert_eq!(reached("convert f_to_s32, r2, r2, rtz\n"), None);
        // a branch between: not followed
        let branched = format!("{clamp}jmp_exec_none 0x40\n{shift}");
        assert_eq!(reached(&branched), None);
        // a select between other values: their union
        assert_eq!(
            reached("mov_imm r4, 8, 0b0\nmov_imm r5, 12, 0b0\nicmpsel slt, r2, r6, r7, r4, r5\n"),
            Some(2)
        );
    }
}
