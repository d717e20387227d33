//! What an Apple9 instruction *does*, as later layers need it: registers
//! read and written (16-bit halves, GPR or uniform), control flow, memory
//! access (space, direction, bytes per lane, address registers) and the
//! wait fields carried in the instruction bits.
//!
//! Each of the 57 reference forms has one row in [`ROLES`] (same order as
//! [`super::forms::FORMS`]): which operands it writes. Register operands
//! are read back from the names [`super::fields::reg_name`] makes (the
//! only producer of register text here; [`parse_reg`] is its inverse,
//! tested on every name): in the reference's syntax an ALU form prints its
//! destination first, so its first register operand is the one written
//! and every other register operand is read. Memory forms are read from
//! their bits, read by the same [`DevMem`] the listing prints from (the
//! reference's `DeviceLoadStoreInstructionDesc`: `g` "output wait group",
//! type, mask, data register, base with its file bit, index with its kind;
//! address = base + index << shift + offset, in bytes).
//!
//! What is not decoded is said: the exec-mask instructions' payload
//! (`push_exec`, `pop_exec`, …) has no public field layout, and an
//! `unknown` position has no operands at all; both are `complete: false`.

use super::fields::{reg_name, Ctx, Kind as RegKind};
use super::forms::DevMem;
use super::{Item, Kind};
use crate::{Flow, MemDir, MemSpace};

/// Which operands a form writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The first register operand is written, the others read.
    Dest,
    /// [`Role::Dest`] whose first operand is its output wait group
    /// (`get_sr`: the reference's `G`, "output wait group").
    DestGroup,
    /// A memory access (its registers from its bits).
    Mem(MemSpace, MemDir),
    /// Ends the thread (`stop`).
    End,
    /// Its operand is a wait mask (`wait`).
    Wait,
    /// No register operands (`nop`).
    NoRegs,
}

use Role::*;

/// One row per form of [`super::forms::FORMS`], in its order.
pub static ROLES: [Role; 57] = [
    Dest,                                 // mov_imm (7-bit)
    Dest,                                 // mov_imm (32-bit)
    DestGroup,                            // get_sr
    Mem(MemSpace::Device, MemDir::Load),  // device_load
    Mem(MemSpace::Device, MemDir::Store), // device_store
    Dest,                                 // bitop mov
    Dest,                                 // bitop 4
    Dest,                                 // bitop 10
    Dest,                                 // bitrev
    Dest,                                 // popcount
    Dest,                                 // ffs
    Dest,                                 // bfi
    Dest,                                 // bfeil
    Dest,                                 // extr
    Dest,                                 // shlhi
    Dest,                                 // shrhi
    Dest,                                 // asr
    Dest,                                 // asrh
    Dest,                                 // iadd
    Dest,                                 // iadd64
    Dest,                                 // iadd shifted
    Dest,                                 // imadd/imsub
    Dest,                                 // ffma 4
    Dest,                                 // ffma 6
    Dest,                                 // ffma 8
    Dest,                                 // ffma 10
    Dest,                                 // fmul 4
    Dest,                                 // fmul 6
    Dest,                                 // fmul 8
    Dest,                                 // fmul 12
    Dest,                                 // fadd 4
    Dest,                                 // fadd 6
    Dest,                                 // fadd 8
    Dest,                                 // fadd 10
    Dest,                                 // rint
    Dest,                                 // floor
    Dest,                                 // ceil
    Dest,                                 // trunc
    Dest,                                 // rcp
    Dest,                                 // rsqrt
    Dest,                                 // rsqrt_special
    Dest,                                 // sinc
    Dest,                                 // log2
    Dest,                                 // exp2
    Dest,                                 // cmpsel 6
    Dest,                                 // cmpsel 8 (cmov)
    Dest,                                 // cmpsel 10
    Dest,                                 // cmpsel 14
    Dest,                                 // convert f2i
    Dest,                                 // convert i2f
    Dest,                                 // unpack unorm
    Dest,                                 // unpack float
    Dest,                                 // pack unorm
    Dest,                                 // pack float
    End,                                  // stop
    NoRegs,                               // nop
    Wait,                                 // wait
];

/// A register operand: `halves` 16-bit halves from half `half` (`r3` =
/// halves 6..8, `r3h` = 7..8) of the GPR or uniform file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reg {
    pub uniform: bool,
    pub half: u16,
    pub halves: u16,
}

impl Reg {
    pub fn range(&self) -> std::ops::Range<u32> {
        self.half as u32..self.half as u32 + self.halves as u32
    }
}

/// Registers of an operand text made by `reg_name` (flags after `.`
/// ignored): `r3`, `r3l`, `u6_u7`, `r0_r1_r2`; `None` for anything else
/// (immediates, `sr32`, type and mode names such as `u32_to_f`).
pub fn parse_reg(text: &str) -> Option<Vec<Reg>> {
    let base = text.split('.').next()?;
    let mut out: Vec<Reg> = Vec::new();
    for part in base.split('_') {
        let (uniform, rest) = match part.as_bytes().first()? {
            b'r' => (false, &part[1..]),
            b'u' => (true, &part[1..]),
            _ => return None,
        };
        let (digits, half) = match rest.as_bytes().last()? {
            b'l' => (&rest[..rest.len() - 1], Some(0)),
            b'h' => (&rest[..rest.len() - 1], Some(1)),
            _ => (rest, None),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 3 {
            return None;
        }
        let n: u16 = digits.parse().ok()?;
        let r = match half {
            Some(h) => Reg {
                uniform,
                half: 2 * n + h,
                halves: 1,
            },
            None => Reg {
                uniform,
                half: 2 * n,
                halves: 2,
            },
        };
        // a contiguous run (a vector or a 64-bit pair) is one range
        match out.last_mut() {
            Some(p) if p.uniform == r.uniform && p.half + p.halves == r.half => {
                p.halves += r.halves
            }
            _ => out.push(r),
        }
    }
    Some(out)
}

/// The index of a memory access: an immediate or a register.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Index {
    Imm(u32),
    Reg { reg: Reg, name: String },
}

/// A memory access, from the instruction's bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mem {
    pub space: MemSpace,
    pub dir: MemDir,
    /// Element type as the reference prints it (`i8`, `i16`, `i32`).
    pub elem: &'static str,
    pub elem_bytes: u8,
    /// Components (the mask's set bits: `xy` = 2).
    pub components: u8,
    /// Bytes each lane reads or writes (`i8` data is two elements a half).
    pub bytes_per_lane: u32,
    /// Data registers (loaded into or stored from) and their text.
    pub data: Option<Reg>,
    pub data_name: String,
    /// 64-bit base address: register pair and its text (`u6_u7`).
    pub base: Reg,
    pub base_name: String,
    pub index: Index,
    /// Index shift (`lsl N`), bytes.
    pub shift: u8,
    pub offset: i16,
}

impl Mem {
    /// Whether every lane of a SIMD-group computes the same address: base
    /// and index uniform registers or immediates.
    pub fn uniform_address(&self) -> bool {
        self.base.uniform
            && match &self.index {
                Index::Imm(_) => true,
                Index::Reg { reg, .. } => reg.uniform,
            }
    }
}

/// Facts of one instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Facts {
    /// Every operand decoded (false for an `unknown` position and for the
    /// exec-mask instructions whose payload has no public layout).
    pub complete: bool,
    pub defs: Vec<Reg>,
    pub uses: Vec<Reg>,
    /// Control flow with absolute targets (`addr + offset`).
    pub flow: Flow,
    pub mem: Option<Mem>,
    /// The `g` field ("output wait group", as the reference prints it) of
    /// a device load/store or `get_sr`.
    pub wait_group: Option<u8>,
    /// The wait mask carried in the instruction (its `wait 01` operand, or
    /// a `wait` instruction's digits): the groups waited on, as printed.
    pub waits_on: Vec<u8>,
}

fn reg_of(kind: RegKind, n: u32) -> Option<(Reg, String)> {
    let name = reg_name(kind, n).ok()?;
    let r = parse_reg(&name)?;
    (r.len() == 1).then(|| (r[0], name))
}

/// The memory facts of a device load/store word `n` (`load`: which).
fn device_mem(n: u128, load: bool) -> Option<Mem> {
    const MASK_COUNT: [u8; 16] = [0, 1, 2, 3, 2, 3, 3, 4, 1, 2, 1, 2, 2, 3, 1, 2];
    let mut c = Ctx::new(n);
    let m = DevMem::read(&mut c, load);
    let (ty, mask, rv, bv, br, iv, is, it) = (m.ty, m.mask, m.rv, m.bv, m.br, m.iv, m.is, m.it);
    let (elem, elem_bytes) = match ty {
        0 => ("i16", 2u8),
        2 => ("i8", 1),
        _ => ("i32", 4),
    };
    let components = MASK_COUNT[mask as usize];
    let (data, data_name) = if components == 0 {
        (None, String::new())
    } else {
        let (kind, first, regs) = match elem {
            "i8" => (RegKind::R16, rv, components.div_ceil(2) as u32),
            "i16" => (RegKind::R16, rv, components as u32),
            _ => (RegKind::R32, rv >> 1, components as u32),
        };
        let names: Vec<String> = (0..regs)
            .map(|i| reg_name(kind, first + i).ok())
            .collect::<Option<_>>()?;
        let name = names.join("_");
        let r = parse_reg(&name)?;
        (r.first().copied(), name)
    };
    let (base, base_name) = if br != 0 {
        let name = reg_name(RegKind::R64, bv).ok()?;
        (parse_reg(&name)?.first().copied()?, name)
    } else {
        let name = reg_name(RegKind::U64, bv << 1).ok()?;
        (parse_reg(&name)?.first().copied()?, name)
    };
    let index = match it {
        0 => Index::Imm(m.index_imm(load)),
        1 | 2 => {
            let (kind, v) = match (it, is) {
                (2, 1) => (RegKind::U32, iv >> 1),
                (2, _) => (RegKind::U16, iv),
                (_, 1) => (RegKind::R32, iv >> 1),
                _ => (RegKind::R16, iv),
            };
            let (reg, name) = reg_of(kind, v)?;
            Index::Reg { reg, name }
        }
        _ => return None,
    };
    let bytes_per_lane = components as u32 * elem_bytes as u32;
    Some(Mem {
        space: MemSpace::Device,
        dir: if load { MemDir::Load } else { MemDir::Store },
        elem,
        elem_bytes,
        components,
        bytes_per_lane,
        data,
        data_name,
        base,
        base_name,
        index,
        shift: m.shift_bits() as u8,
        offset: m.off as u16 as i16,
    })
}

/// The wait groups of a wait operand's text (`wait 01` → 0, 1; a `wait`
/// instruction's `01` or `none`).
fn wait_digits(s: &str) -> Vec<u8> {
    s.bytes()
        .filter(|b| b.is_ascii_digit())
        .map(|b| b - b'0')
        .collect()
}

/// The facts of `item` (`bytes`: the item's own bytes, as framed). `None`
/// for a [`Item::Gap`].
pub fn facts(item: &Item, bytes: &[u8]) -> Option<Facts> {
    let mut f = Facts {
        complete: true,
        defs: Vec::new(),
        uses: Vec::new(),
        flow: Flow::Next,
        mem: None,
        wait_group: None,
        waits_on: Vec::new(),
    };
    match item {
        Item::Gap { .. } => return None,
        Item::Unknown { .. } => f.complete = false,
        Item::Insn {
            addr,
            mnem,
            operands,
            kind: Kind::Flow { offset },
            ..
        } => {
            let target = offset.map(|o| *addr as i64 + o);
            f.flow = match (mnem.as_str(), target) {
                ("jmp_exec_any", Some(t)) => Flow::BranchExec {
                    target: t,
                    any: true,
                },
                ("jmp_exec_none", Some(t)) => Flow::BranchExec {
                    target: t,
                    any: false,
                },
                ("call", Some(t)) => Flow::Call { target: t },
                ("ret", _) => Flow::Ret,
                _ => Flow::Next,
            };
            // the exec-mask instructions print their payload raw: its
            // registers (if any) are not known
            f.complete = !operands.iter().any(|o| o.starts_with("0x"));
        }
        Item::Insn {
            operands,
            kind: Kind::Form(i),
            ..
        } => {
            let role = ROLES.get(*i as usize).copied().unwrap_or(NoRegs);
            for o in operands {
                if let Some(w) = o.strip_prefix("wait ") {
                    f.waits_on = wait_digits(w);
                }
            }
            match role {
                NoRegs => {}
                End => f.flow = Flow::Stop,
                Wait => {
                    f.waits_on = operands.first().map(|o| wait_digits(o)).unwrap_or_default();
                }
                Dest | DestGroup => {
                    let mut regs = operands.iter().filter_map(|o| parse_reg(o));
                    if let Some(d) = regs.next() {
                        f.defs = d;
                    }
                    for u in regs {
                        f.uses.extend(u);
                    }
                    if role == DestGroup {
                        f.wait_group = operands.first().and_then(|g| g.parse().ok());
                    }
                }
                Mem(_, dir) => {
                    let n = super::word(bytes);
                    f.wait_group = Some(((n >> 70) & 7) as u8);
                    match device_mem(n, dir == MemDir::Load) {
                        Some(m) => {
                            match (m.data, dir) {
                                (Some(d), MemDir::Load) => f.defs.push(d),
                                (Some(d), _) => f.uses.push(d),
                                (None, _) => {}
                            }
                            f.uses.push(m.base);
                            if let Index::Reg { reg, .. } = &m.index {
                                f.uses.push(*reg);
                            }
                            f.mem = Some(m);
                        }
                        None => f.complete = false,
                    }
                }
            }
        }
    }
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_reg_inverts_reg_name() {
        let kinds = [
            (RegKind::R16, 256),
            (RegKind::R32, 128),
            (RegKind::R64, 127),
            (RegKind::U16, 512),
            (RegKind::U32, 256),
            (RegKind::U64, 255),
        ];
        for (k, limit) in kinds {
            for n in 0..limit {
                let name = reg_name(k, n).unwrap();
                let r = parse_reg(&name).unwrap_or_else(|| panic!("{name}"));
                assert_eq!(r.len(), 1, "{name}");
                let (half, halves) = match k {
                    RegKind::R16 | RegKind::U16 => (n, 1),
                    RegKind::R32 | RegKind::U32 => (2 * n, 2),
                    RegKind::R64 | RegKind::U64 => (2 * n, 4),
                };
                assert_eq!(
                    (r[0].half as u32, r[0].halves as u32),
                    (half, halves),
                    "{name}"
                );
                assert_eq!(
                    r[0].uniform,
                    matches!(k, RegKind::U16 | RegKind::U32 | RegKind::U64)
                );
                assert!(parse_reg(&format!("{name}.cache.discard")).is_some());
            }
        }
        for not in [
            "sr32", "u32_to_f", "i32", "x", "xyzw", "0", "1.5", "wait 01", "lsl 2", "ult", "r", "u",
        ] {
            assert!(parse_reg(not).is_none(), "{not}");
        }
    }

    #[test]
    fn example_kernel_facts() {
        // examples/apple9_loop.a9bin's main (Mesa packer vectors)
        let load = [0x67, 0, 0x54, 4, 3, 1, 0x20, 0, 0x51, 1, 0, 0x40, 0x46, 0];
        let l = super::super::walk(&load, 0);
        let it = &l.items[0];
        let f = facts(it, &load).unwrap();
        let m = f.mem.as_ref().unwrap();
        assert_eq!((m.elem, m.components, m.bytes_per_lane), ("i32", 1, 4));
        assert_eq!(
            (m.data_name.as_str(), m.base_name.as_str()),
            ("r2", "u6_u7")
        );
        assert!(matches!(&m.index, Index::Reg { name, .. } if name == "r1"));
        assert_eq!(m.shift, 2);
        assert!(!m.uniform_address());
        assert_eq!(f.wait_group, Some(5));
        assert_eq!(f.defs, parse_reg("r2").unwrap());
        assert!(f.complete);
        let fadd = [0x49, 5, 0x3c, 7, 0, 0];
        let l = super::super::walk(&fadd, 0);
        let f = facts(&l.items[0], &fadd).unwrap();
        assert_eq!(f.defs, parse_reg("r4").unwrap());
        let uses: Vec<_> = f.uses.iter().map(|r| r.range()).collect();
        assert_eq!(uses, vec![4..6, 6..8]);
    }
}
