//! A small builder of instruction sequences for tests, the accuracy table and
//! examples: each op is decoded from a real encoding (taken from the corpus:
//! Mesa kernels' machine code or applegpu's encodings), then its register
//! operands are replaced by the ones given, so dependencies are exactly what
//! the caller states.

use agx_isa::{Instruction, Operand, Reg, RegFile, Role, Width};

/// Encodings per form (hex, little-endian bytes as applegpu prints them).
pub const TEMPLATES: &[(&str, &str)] = &[
    ("fadd32", "2a8948060300"),
    ("fmul32", "1a8542422400"),
    ("fmadd32", "3ab148a21a420200"),
    ("fadd16", "26104140"),
    ("fmul16", "16004204"),
    ("fmadd16", "360000100000"),
    ("fcmpsel", "020000fc35c009dc"),
    ("icmpsel", "1209410000448004"),
    ("iadd", "0e11441600000000"),
    ("iadd.sat", "4e7e40f753c2c4a0"),
    ("isub", "0e09002864000000"),
    ("imadd", "1e0548c65a000000"),
    ("mov_imm", "62140100"),
    ("mov", "7e09a8098000"),
    ("get_sr", "72011004"),
    ("convert", "3e8d0a242400"),
    ("rint", "0a8120000300"),
    ("trunc", "0a9c4a000200"),
    ("floor", "0a175000"),
    ("rcp", "0a054282"),
    ("rsqrt", "0a0d4492"),
    ("exp2", "0a0548de"),
    ("log2", "0a0944c2"),
    ("sin_pt_1", "0a5347ae"),
    ("sin_pt_2", "0a7742e3"),
    ("bfi", "2e0d001000460200"),
    ("bfeil", "2e89004024110000"),
    ("extr", "2e05422624130000"),
    ("bitrev", "3e0450040006"),
    ("popcount", "3e00400a0082"),
    ("icmp_ballot", "320045c024110100"),
    ("fcmp_ballot", "2200000000000100"),
    ("simd_shuffle", "6f0944160400"),
    ("quad_shuffle", "6f0004100000"),
    ("simd_iadd", "6f80512000cc"),
    ("simd_fadd", "6f9840300030"),
    ("simd_min.f", "6f9146328000"),
    ("simd_prefix_iadd", "6f80406000c4"),
    ("simd_prefix_fadd", "6f9240710070"),
    ("quad_fadd", "6f904d100000"),
    ("quad_iadd", "6f903f000080"),
    ("quad_prefix_fadd", "6fc540500054"),
    ("quad_prefix_iadd", "6fc076400084"),
    ("device_load", "0521000e00c8f200"),
    ("device_store", "4561000e00c8f200"),
    ("threadgroup_load", "6989040214000000"),
    ("threadgroup_store", "298d040214000000"),
    ("stack_load", "3572400500c11200"),
    ("stack_store", "b522000500c01200"),
    ("wait", "3800"),
    ("if_icmp", "520944020000"),
    ("pop_exec", "520e00000000"),
    ("while_icmp", "52ada2412400"),
    ("stop", "8800"),
];

fn hex_bytes(hex: &str) -> Vec<u8> {
    (0..hex.len() / 2)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex"))
        .collect()
}

/// Decodes `hex` at `addr`.
pub fn decode_hex(hex: &str, addr: u32) -> Instruction {
    agx_isa::decode(&hex_bytes(hex), addr).expect("template decodes")
}

/// 32-bit GPR `rN`.
pub fn r(n: u16) -> Reg {
    Reg::gpr(Width::W32, 2 * n)
}
/// 16-bit GPR half `rNl` (`hi = false`) / `rNh`.
pub fn h(n: u16, hi: bool) -> Reg {
    Reg::gpr(Width::W16, 2 * n + hi as u16)
}
/// 64-bit GPR pair `rN_rN+1`.
pub fn r64(n: u16) -> Reg {
    Reg::gpr(Width::W64, 2 * n)
}
/// `count` consecutive 32-bit GPRs from `rN`.
pub fn rv(n: u16, count: u8) -> Reg {
    Reg {
        count,
        ..Reg::gpr(Width::W32, 2 * n)
    }
}
/// 32-bit uniform `uN`.
pub fn u(n: u16) -> Reg {
    Reg {
        file: RegFile::Uniform,
        ..Reg::gpr(Width::W32, 2 * n)
    }
}

/// Builds a straight-line sequence (addresses assigned in order).
#[derive(Default)]
pub struct Builder {
    pub insns: Vec<Instruction>,
    pub addr: u32,
}

impl Builder {
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Appends the template `op` with the given register defs and uses (all
    /// decoded register operands are replaced; other operands kept).
    pub fn op(&mut self, op: &str, defs: &[Reg], uses: &[Reg]) -> &mut Builder {
        let hex = TEMPLATES
            .iter()
            .find(|t| t.0 == op)
            .unwrap_or_else(|| panic!("no template for {op}"))
            .1;
        let mut insn = decode_hex(hex, self.addr);
        let keep: Vec<Operand> = insn
            .operands
            .iter()
            .filter(|o| o.as_reg().is_none())
            .cloned()
            .collect();
        insn.operands.clear();
        for d in defs {
            insn.operands.push(Operand::reg(*d, Role::Def));
        }
        for s in uses {
            insn.operands.push(Operand::reg(*s, Role::Use));
        }
        for o in keep {
            insn.operands.push(o);
        }
        self.addr += insn.len as u32;
        self.insns.push(insn);
        self
    }

    /// Appends the template as decoded (its own operands).
    pub fn raw(&mut self, op: &str) -> &mut Builder {
        let hex = TEMPLATES.iter().find(|t| t.0 == op).expect("template").1;
        let insn = decode_hex(hex, self.addr);
        self.addr += insn.len as u32;
        self.insns.push(insn);
        self
    }

    /// Appends `jmp_exec_any` to the absolute address `target` (a back-edge
    /// when `target` is not after it).
    pub fn jmp_exec_any(&mut self, target: u32) -> &mut Builder {
        let off = (target as i64 - self.addr as i64) as i32;
        let mut b = vec![0x00u8, 0xC0];
        b.extend_from_slice(&off.to_le_bytes());
        let insn = agx_isa::decode(&b, self.addr).expect("jmp decodes");
        self.addr += insn.len as u32;
        self.insns.push(insn);
        self
    }

    pub fn finish(&mut self) -> Vec<Instruction> {
        std::mem::take(&mut self.insns)
    }
}
