//! A little builder for hand-made instruction lists (no assembler yet).
//! Instructions start from a decoded `stop` and have their fields replaced,
//! so fields added to `Instruction` later need no change here.
#![allow(dead_code)]

use agx_isa::forms::FORMS;
use agx_isa::{Instruction, Operand, OperandKind, Reg, RegFile, Role, Width};
use std::collections::HashMap;

pub const R0L: Reg = Reg {
    file: RegFile::Gpr,
    width: Width::W16,
    half: 0,
    count: 1,
    flags: 0,
};

/// 32-bit GPR `rN`.
pub fn r(n: u16) -> Reg {
    Reg::gpr(Width::W32, 2 * n)
}
/// 16-bit GPR half `half` (`r0h` = 1).
pub fn h(half: u16) -> Reg {
    Reg::gpr(Width::W16, half)
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
    Reg::uniform(Width::W32, 2 * n)
}
/// 64-bit uniform starting at half `half`.
pub fn u64r(half: u16) -> Reg {
    Reg::uniform(Width::W64, half)
}

enum Tgt {
    None,
    Label(String),
    Abs(i64),
}

struct Pending {
    insn: Instruction,
    target: Tgt,
}

#[derive(Default)]
pub struct Prog {
    items: Vec<Pending>,
    labels: HashMap<String, u32>,
    pc: u32,
}

/// The PC-relative `call` form (6 bytes; the register form is 2).
fn call_form() -> u8 {
    FORMS
        .iter()
        .position(|f| f.name == "call" && f.sizes.0 == 6)
        .unwrap() as u8
}

fn form_by_name(name: &str) -> u8 {
    FORMS.iter().position(|f| f.name == name).unwrap() as u8
}

impl Prog {
    pub fn new() -> Prog {
        Prog::default()
    }

    /// An instruction of the form named `mnemonic`.
    fn push(&mut self, mnemonic: &'static str, len: u8, ops: &[Operand], target: Tgt) {
        self.push_raw(form_by_name(mnemonic), mnemonic, len, ops, &[], target, 0);
    }

    #[allow(clippy::too_many_arguments)]
    fn push_raw(
        &mut self,
        form: u8,
        mnemonic: &'static str,
        len: u8,
        ops: &[Operand],
        implicit: &[Operand],
        target: Tgt,
        raw: u128,
    ) {
        let mut i = agx_isa::decode(&[0x88, 0x00], 0).expect("stop decodes");
        i.addr = self.pc;
        i.len = len;
        i.form = form;
        i.set_mnemonic_str(mnemonic);
        i.operands.clear();
        i.implicit.clear();
        i.set_raw(raw);
        for o in ops {
            i.operands.push(*o);
        }
        for o in implicit {
            i.implicit.push(*o);
        }
        self.pc += len as u32;
        self.items.push(Pending { insn: i, target });
    }

    pub fn label(&mut self, name: &str) {
        self.labels.insert(name.to_string(), self.pc);
    }

    pub fn addr(&self, name: &str) -> u32 {
        self.labels[name]
    }

    /// Address of the first instruction with this mnemonic.
    pub fn addr_of(&self, mnemonic: &str) -> u32 {
        self.items
            .iter()
            .find(|p| p.insn.mnemonic() == mnemonic)
            .unwrap()
            .insn
            .addr
    }

    pub fn addr_of_nth_jmp(&self, k: usize) -> u32 {
        self.items
            .iter()
            .filter(|p| p.insn.mnemonic() == "jmp_exec_any")
            .nth(k)
            .unwrap()
            .insn
            .addr
    }

    pub fn addr_of_index(&self, k: usize) -> u32 {
        self.items[k].insn.addr
    }

    /// An ALU instruction writing `defs` and reading `uses`.
    pub fn alu(&mut self, defs: &[Reg], uses: &[Reg]) {
        let mut ops: Vec<Operand> = defs.iter().map(|&d| Operand::reg(d, Role::Def)).collect();
        ops.extend(uses.iter().map(|&s| Operand::reg(s, Role::Use)));
        self.push("iadd", 8, &ops, Tgt::None);
    }

    pub fn alu_u(&mut self, defs: &[Reg], uses: &[Reg]) {
        self.alu(defs, uses)
    }

    pub fn mov_imm(&mut self, d: Reg, v: i64) {
        self.push(
            "mov_imm",
            4,
            &[
                Operand::reg(d, Role::Def),
                Operand::new(OperandKind::imm(v)),
            ],
            Tgt::None,
        );
    }

    pub fn store(&mut self, uses: &[Reg]) {
        let ops: Vec<Operand> = uses.iter().map(|&s| Operand::reg(s, Role::Use)).collect();
        self.push("device_store", 8, &ops, Tgt::None);
    }

    fn branch(&mut self, name: &'static str, t: Tgt) {
        self.push(name, 6, &[Operand::new(OperandKind::target(0))], t);
    }

    pub fn jmp_any(&mut self, label: &str) {
        self.branch("jmp_exec_any", Tgt::Label(label.into()));
    }
    pub fn jmp_none(&mut self, label: &str) {
        self.branch("jmp_exec_none", Tgt::Label(label.into()));
    }
    pub fn jmp_any_abs(&mut self, target: i64) {
        self.branch("jmp_exec_any", Tgt::Abs(target));
    }

    fn call_t(&mut self, t: Tgt) {
        // `call` writes the link register r1 (ISA reference: `r1 = pc + 6`).
        self.push_raw(
            call_form(),
            "call",
            6,
            &[Operand::new(OperandKind::target(0))],
            &[Operand::reg(r(1), Role::Def)],
            t,
            0,
        );
    }
    pub fn call(&mut self, label: &str) {
        self.call_t(Tgt::Label(label.into()));
    }
    pub fn call_abs(&mut self, target: i64) {
        self.call_t(Tgt::Abs(target));
    }

    pub fn ret(&mut self) {
        self.push("ret", 2, &[Operand::reg(r(1), Role::Use)], Tgt::None);
    }
    pub fn stop(&mut self) {
        self.push("stop", 2, &[], Tgt::None);
    }
    pub fn trap(&mut self) {
        self.push("trap", 2, &[], Tgt::None);
    }

    /// `if_icmp`/`else_icmp`/`while_icmp`-like exec op: r0l (use+def),
    /// compared registers, then `n`.
    pub fn exec(&mut self, name: &'static str, n: i64, uses: &[Reg]) {
        let mut ops = vec![Operand::reg(R0L, Role::UseDef)];
        ops.extend(uses.iter().map(|&s| Operand::reg(s, Role::Use)));
        ops.push(Operand::new(OperandKind::imm(n)));
        self.push(name, 6, &ops, Tgt::None);
    }

    pub fn pop(&mut self, n: i64) {
        self.exec("pop_exec", n, &[]);
    }

    /// The stack-adjust encoding (applegpu `TODO.stack_adjust`, printed as
    /// `stack_store i8, 1, 2, 0, v, 0`).
    pub fn stack_adjust(&mut self, v: i32) {
        let v = (v as u32 & 0xFFFF) as u128;
        let raw = 0xB5u128
            | (0b0001 << 16)
            | (0b01 << 24)
            | ((v & 0xF) << 20)
            | (((v >> 4) & 0xF) << 32)
            | (((v >> 8) & 0xFF) << 56);
        self.push_raw(
            form_by_name("stack_store"),
            "stack_store",
            8,
            &[],
            &[],
            Tgt::None,
            raw,
        );
    }
    pub fn spill(&mut self, s: Reg) {
        self.push_raw(
            form_by_name("stack_store"),
            "stack_store",
            8,
            &[Operand::reg(s, Role::Use)],
            &[],
            Tgt::None,
            0x0012_c000_0500_22b5,
        );
    }
    pub fn fill(&mut self, d: Reg) {
        self.push_raw(
            form_by_name("stack_load"),
            "stack_load",
            8,
            &[Operand::reg(d, Role::Def)],
            &[],
            Tgt::None,
            0x0012_c000_0500_2235,
        );
    }

    /// Resolves targets and returns the instructions.
    pub fn build(&self) -> Vec<Instruction> {
        self.items
            .iter()
            .map(|p| {
                let mut i = p.insn.clone();
                let abs = match &p.target {
                    Tgt::None => None,
                    Tgt::Label(l) => Some(self.labels[l] as i64),
                    Tgt::Abs(a) => Some(*a),
                };
                if let Some(t) = abs {
                    let rel = (t - i.addr as i64) as i32;
                    for o in i.operands.as_mut_slice() {
                        if let OperandKind::Target(_) = o.kind {
                            o.kind = OperandKind::target(rel);
                        }
                    }
                }
                i
            })
            .collect()
    }
}

/// A code source over hand-assembled functions, found by entry address.
pub struct Funcs(pub Vec<agx_analysis::program::FunctionCode>);

impl agx_analysis::program::CodeSource for Funcs {
    fn function_at(
        &self,
        target: i64,
    ) -> Result<agx_analysis::program::FunctionCode, agx_analysis::program::NoFunction> {
        self.0
            .iter()
            .find(|f| f.entry as i64 == target)
            .cloned()
            .ok_or_else(|| agx_analysis::program::NoFunction::Missing("not given".into()))
    }
}

/// The kernels of a Mesa corpus folder (testdata/mesa, shared/corpus/mesa):
/// name and main's instructions (the walk of `<name>.bin`).
pub fn mesa_kernels(root: &std::path::Path) -> Vec<(String, Vec<agx_isa::Instruction>)> {
    let Ok(rd) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut v: Vec<_> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter_map(|d| {
            let name = d.file_name()?.to_string_lossy().to_string();
            let bin = std::fs::read(d.join(format!("{name}.bin"))).ok()?;
            let insns = agx_isa::stream::walk(&bin, 0)
                .filter_map(|it| it.into_insn())
                .collect();
            Some((name, insns))
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}
