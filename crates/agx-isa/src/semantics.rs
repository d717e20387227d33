//! What an instruction *does*, beyond how it prints: category, control flow,
//! exec-mask effect, memory space. Keyed by form; one source of truth used by
//! analysis and timing.
//!
//! Sources of the facts used here:
//! * applegpu `applegpu.py` (dougallj/applegpu @ 4c5bae61) instruction
//!   descriptors and their pseudocode, and the generated ISA page
//!   (`shared/reference/applegpu-isa-docs.html`, "Flow Control Instructions"
//!   and "Execution Mask Stack Instructions").
//! * Mesa's AGX backend as summarised in `shared/corpus/mesa/README.md`
//!   (the stack-adjust instruction that applegpu mislabels `stack_store`).

use crate::cost::{CostKey, CostRule};
use crate::forms::{Form, FORMS};
use crate::model::{Category, Flow, Instruction, OperandKind, Reg, RegFile, Width};

/// Effect on the structured exec-mask stack (held in `r0l`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecOp {
    /// `if_*cmp` / `push_exec`: push a level, lanes failing the condition go
    /// inactive.
    If,
    /// `else_*cmp` / `else_exec`: flip lanes within the current level.
    Else,
    /// `while_*cmp`: lanes failing the condition leave the loop level.
    While,
    /// `pop_exec n`: pop `n` levels.
    Pop(u8),
    /// Other forms that write the exec state (e.g. `update_exec`).
    Update,
}

/// Memory space touched by a load/store/atomic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemSpace {
    /// Device (global) memory, through L1.
    Device,
    /// Threadgroup (local, on-core) memory.
    Threadgroup,
    /// The stack (spill/fill scratch).
    Stack,
    /// Uniform registers' backing store (`uniform_store`).
    Uniform,
    /// Texture and image data (`texture_sample`, `image_write`, ...).
    Texture,
    /// Texture/sampler descriptor state (`tex_state_store`,
    /// `sampler_state_store`).
    TextureState,
    /// Tile memory (`ld_tile`/`st_tile`).
    Tile,
}

impl MemSpace {
    /// The space's name in records and reports (`device`, `threadgroup`,
    /// `stack`, `uniform`, `texture`, `texture_state`, `tile`).
    pub fn name(self) -> &'static str {
        match self {
            MemSpace::Device => "device",
            MemSpace::Threadgroup => "threadgroup",
            MemSpace::Stack => "stack",
            MemSpace::Uniform => "uniform",
            MemSpace::Texture => "texture",
            MemSpace::TextureState => "texture_state",
            MemSpace::Tile => "tile",
        }
    }
}

/// Direction of a memory access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemDir {
    /// Reads memory into registers (completes at a `wait`).
    Load,
    /// Writes memory.
    Store,
    /// Read-modify-write (returns the old value at a `wait`).
    Atomic,
}

impl MemDir {
    /// The direction's name in records and reports (`load`, `store`,
    /// `atomic`).
    pub fn name(self) -> &'static str {
        match self {
            MemDir::Load => "load",
            MemDir::Store => "store",
            MemDir::Atomic => "atomic",
        }
    }
}

/// The memory column of a form (tools/gen_forms.py): space and direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemForm {
    pub space: MemSpace,
    pub dir: MemDir,
}

/// What memory an instruction touches and how: the one classification every
/// layer (statistics, timing, suggestions) reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemAccess {
    pub space: MemSpace,
    pub dir: MemDir,
    /// The data registers moved (the first GPR operand: the loaded or
    /// stored tuple), when the decoder provided operands.
    pub data: Option<Reg>,
}

impl MemAccess {
    /// Bytes one lane moves: the data tuple's size (its width times its
    /// components), 4 when the operands are unknown.
    pub fn bytes_per_lane(&self) -> u32 {
        self.data.map_or(4, |r| r.halves() as u32 * 2)
    }
}

/// Bytes of the element a memory form's format keyword names (`i8`, `f16`,
/// `i32`, …); 0 when none does.
pub fn format_bytes(ops: &[crate::model::Operand]) -> u8 {
    for o in ops {
        match o.kind.keyword_text() {
            Some("i8" | "u8" | "unorm8" | "snorm8" | "srgba8") => return 1,
            Some("i16" | "f16" | "unorm16" | "snorm16") => return 2,
            Some("i32" | "f32") => return 4,
            _ => {}
        }
    }
    0
}

/// Exec-mask stack kind of a form (a column of the form table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecKind {
    If,
    Else,
    While,
    Pop,
}

/// Control-flow kind of a form (a column of the form table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowKind {
    /// Falls through (no control effect).
    None,
    /// `jmp_exec_any`: branch if any lane is active (32-bit offset).
    JmpExecAny,
    /// `jmp_exec_none`: branch if no lane is active (32-bit offset).
    JmpExecNone,
    /// `jmp_incomplete` / `jmp_if_skipping_doorbell`: conditional, condition
    /// unknown (8-bit offset).
    JmpCond,
    /// PC-relative call.
    Call,
    /// Call through a register.
    CallIndirect,
    Ret,
    Stop,
    Trap,
    /// An exec-mask stack instruction.
    Exec(ExecKind),
}

impl Instruction {
    /// The form whose facts (the generated columns) describe this
    /// instruction: the one ISA refinement of applegpu's first-match decode.
    /// An encoding applegpu shadows (a stack adjust decoded as `stack_store`,
    /// a `stack_get_ptr` decoded as `stack_load`, see [`crate::native`]) is
    /// described by the form it really matches, which is also the name the
    /// native-syntax listing prints. `None` for a form index out of range.
    #[inline]
    pub fn semantic_form(&self) -> Option<&'static Form> {
        crate::native::shadowed_form(self).or_else(|| FORMS.get(self.form as usize))
    }

    /// The mnemonic the report's listing (native syntax) prints: the
    /// shadowed form's for an encoding applegpu prints as another form
    /// (`TODO.stack_adjust`, `stack_get_ptr`), else the decoded mnemonic.
    pub fn display_mnemonic(&self) -> &'static str {
        if crate::native::shadowed_form(self).is_none() {
            return self.mnemonic();
        }
        match crate::native::native_instruction(self) {
            Some(n) => n.mnemonic(),
            None => self.mnemonic(),
        }
    }

    /// Broad class of this instruction.
    pub fn category(&self) -> Category {
        self.semantic_form()
            .map(|f| f.category)
            .unwrap_or(Category::Unknown)
    }

    /// Control-flow effect.
    pub fn flow(&self) -> Flow {
        flow_of(self)
    }

    /// Exec-mask effect, if any.
    pub fn exec_op(&self) -> Option<ExecOp> {
        exec_op_of(self)
    }

    /// Memory space for loads/stores/atomics.
    pub fn mem_space(&self) -> Option<MemSpace> {
        mem_form_of(self).map(|m| m.space)
    }

    /// Memory space and direction (the form's memory column, refined): the
    /// part of [`Instruction::mem_access`] that needs no operand.
    pub fn mem_form(&self) -> Option<MemForm> {
        mem_form_of(self)
    }

    /// Memory space, direction and data registers of a load/store/atomic
    /// (`None` for everything else, including the stack adjust and
    /// `stack_get_ptr`, which share the `stack_*` opcodes but move no data).
    pub fn mem_access(&self) -> Option<MemAccess> {
        mem_access_of(self)
    }

    /// The timing-table row that prices this instruction: its form's cost
    /// rule ([`CostRule`]) applied to its operands.
    pub fn cost_key(&self) -> CostKey {
        let Some(f) = self.semantic_form() else {
            return CostKey::Other;
        };
        match f.cost {
            CostRule::Fixed(k) => k,
            CostRule::Iadd => {
                if self.field("S").unwrap_or(0) & 1 != 0 {
                    CostKey::IaddSat32
                } else {
                    match dest_width(self) {
                        Some(Width::W16) => CostKey::Iadd16,
                        Some(Width::W64) => CostKey::Iadd64,
                        _ => CostKey::Iadd32,
                    }
                }
            }
            CostRule::Imad => match self.defs().next().map(|r| r.width) {
                Some(Width::W16) => CostKey::Imad16,
                Some(Width::W64) => CostKey::Imad32x32_64,
                _ => CostKey::Imad32,
            },
            CostRule::Bfe => {
                // Operands: D, A, B, shift/offset, mask. A register shift
                // (operand 3) is a dynamic shift (RSHIFT32), twice the cost.
                let dynamic = self
                    .operands
                    .get(3)
                    .is_some_and(|o| matches!(o.kind, OperandKind::Reg(_)));
                if dynamic {
                    CostKey::BfeilDynamic
                } else {
                    CostKey::BfeilConst
                }
            }
            CostRule::ByWidth { w16, w32 } => {
                if dest_width(self) == Some(Width::W16) {
                    w16
                } else {
                    w32
                }
            }
        }
    }

    /// Value of the named encoding field of the instruction's (first-match)
    /// form, `None` when the form has no such field.
    pub fn field(&self, name: &str) -> Option<u64> {
        let f = FORMS.get(self.form as usize)?;
        let fi = f.fields.iter().find(|x| x.name == name)?;
        let (raw, mut v) = (self.raw(), 0u64);
        for &(start, width, shift) in fi.parts {
            v |= (((raw >> start) & ((1u128 << width) - 1)) as u64) << shift;
        }
        Some(v)
    }

    /// Scoreboard slot of a load, atomic or `wait`, when the encoding has
    /// one (the form's slot column names the field).
    pub fn scoreboard_slot(&self) -> Option<u32> {
        let f = self.semantic_form()?;
        self.field(f.slot?).map(|v| v as u32)
    }

    /// Target of a relative branch or call (absolute byte address), decoded
    /// once here for every layer.
    pub fn branch_target(&self) -> Option<i64> {
        match self.flow() {
            Flow::BranchExec { target, .. } | Flow::Jump { target } => Some(target),
            Flow::Call { target } => Some(target),
            _ => None,
        }
    }

    /// The `n` immediate of an exec-mask stack instruction (`if_*`, `else_*`,
    /// `while_*`, `push_exec`, `pop_exec`): levels pushed/popped or the loop
    /// level. `None` for other instructions.
    pub fn exec_count(&self) -> Option<u8> {
        self.exec_op()?;
        exec_count_of(self)
    }

    /// If this is the stack-adjust instruction (Mesa's `stack_adjust`, which
    /// applegpu decodes as a `stack_store` with no register), the signed
    /// adjustment it encodes, else `None`. Mesa emits it at entry with the
    /// scratch size in dwords (equal to `layout.json` `scratch_size_dwords`);
    /// Apple's helpers emit `+n` at entry and `-n` before `ret`.
    pub fn stack_adjust(&self) -> Option<i32> {
        stack_adjust_of(self)
    }
}

/// Width of the first GPR destination (or first GPR source), if the
/// decoder provided operands.
pub fn dest_width(insn: &Instruction) -> Option<Width> {
    insn.defs()
        .find(|r| r.file == RegFile::Gpr)
        .map(|r| r.width)
        .or_else(|| {
            insn.uses()
                .find(|r| r.file == RegFile::Gpr)
                .map(|r| r.width)
        })
}

fn sign_extend(v: u128, bits: u32) -> i64 {
    let v = (v & ((1u128 << bits) - 1)) as i64;
    let sh = 64 - bits;
    (v << sh) >> sh
}

/// Relative branch offset: from the `Target` operand when the decoder
/// provided one, else from the raw `off` field (applegpu `BranchOffsetDesc`:
/// bits 16.. of width `bits`, signed, bytes from the instruction start).
fn rel_offset(insn: &Instruction, raw_bits: u32) -> i64 {
    for o in insn.operands.iter() {
        if let OperandKind::Target(r) = o.kind {
            return r.get() as i64;
        }
    }
    sign_extend(insn.raw() >> 16, raw_bits)
}

fn flow_kind(insn: &Instruction) -> FlowKind {
    insn.semantic_form().map_or(FlowKind::None, |f| f.flow)
}

pub(crate) fn flow_of(insn: &Instruction) -> Flow {
    let a = insn.addr as i64;
    match flow_kind(insn) {
        // applegpu JmpAnyInstructionDesc / JmpNoneInstructionDesc:
        // `if any(exec_mask): next_pc = pc + sign_extend(off, 32)`.
        FlowKind::JmpExecAny => Flow::BranchExec {
            target: a + rel_offset(insn, 32),
            any: true,
        },
        FlowKind::JmpExecNone => Flow::BranchExec {
            target: a + rel_offset(insn, 32),
            any: false,
        },
        // CallInstructionDesc (`10c0 off32`, PC-relative, `r1 = pc + 6` for
        // active threads); CallRegInstructionDesc (`call reg32`) is indirect.
        FlowKind::Call => Flow::Call {
            target: a + rel_offset(insn, 32),
        },
        FlowKind::CallIndirect => Flow::CallIndirect,
        FlowKind::Ret => Flow::Ret,
        FlowKind::Stop => Flow::Stop,
        FlowKind::Trap => Flow::Trap,
        // JumpIncompleteInstructionDesc and JumpNoDoorbellInstructionDesc:
        // 8-bit signed offset, condition unknown (pseudocode `TODO()`). Both
        // are conditional by their names ("incomplete", "if skipping
        // doorbell"), so the only safe model is taken-or-fall-through. `Flow`
        // has no generic conditional branch, so they are reported as
        // `BranchExec { any: false }`; analyses only use the two edges.
        FlowKind::JmpCond => Flow::BranchExec {
            target: a + rel_offset(insn, 8),
            any: false,
        },
        FlowKind::None | FlowKind::Exec(_) => Flow::Next,
    }
}

pub(crate) fn exec_op_of(insn: &Instruction) -> Option<ExecOp> {
    let FlowKind::Exec(k) = flow_kind(insn) else {
        return None;
    };
    Some(match k {
        // applegpu PopExecInstructionDesc: `v -= n; exec = (v == 0)`.
        // TODO.pop_exec2 has the same ImplicitR0L + n operand shape.
        ExecKind::Pop => ExecOp::Pop(exec_count_of(insn).unwrap_or(0)),
        // if_*cmp: `if v != 0: v += n elif !cond: v = 1`. applegpu aliases
        // an unconditional if_fcmp (eq 0.0, 0.0): `push_exec r0l, n` for
        // n != 0, `update_exec r0l` (the operand `r0l` alone) for n == 0.
        ExecKind::If => {
            if insn.form == crate::forms::idx::IF_FCMP && insn.operands.len() == 1 {
                ExecOp::Update
            } else {
                ExecOp::If
            }
        }
        // else_*cmp: `if v == 0: v = n elif v == 1: v = !cond`; `else_exec`
        // is the unconditional alias.
        ExecKind::Else => ExecOp::Else,
        // while_*cmp: `if v < n: v = cond ? 0 : n`.
        ExecKind::While => ExecOp::While,
    })
}

/// `n` of an exec-mask stack instruction: the last decimal immediate operand
/// (applegpu prints `n` last for every one of these forms), or the raw `n`
/// field (bits 11..13) when operands were not decoded.
fn exec_count_of(insn: &Instruction) -> Option<u8> {
    let printed = insn.operands.iter().rev().find_map(|o| match o.kind {
        OperandKind::Imm(v) => Some(v.get()),
        _ => None,
    });
    match printed {
        Some(v) => Some(v.clamp(0, 255) as u8),
        None => Some(((insn.raw() >> 11) & 0b11) as u8),
    }
}

fn mem_form_of(insn: &Instruction) -> Option<MemForm> {
    let f = insn.semantic_form()?;
    let m = f.mem?;
    // ld_tile / st_tile share one form: the `load` field is the direction
    if f.idx == crate::forms::idx::TODO_LD_ST_TILE && insn.field("load") == Some(0) {
        return Some(MemForm {
            dir: MemDir::Store,
            ..m
        });
    }
    Some(m)
}

pub(crate) fn mem_access_of(insn: &Instruction) -> Option<MemAccess> {
    let MemForm { space, dir } = mem_form_of(insn)?;
    let gprs = || {
        insn.operands
            .iter()
            .filter_map(|o| o.as_reg().map(|r| (o, r)))
            .filter(|(_, r)| r.file == RegFile::Gpr)
    };
    let data = if dir == MemDir::Atomic {
        // applegpu's atomic operands: op, [g,] R (the returned value, absent
        // without a return), A (base), O (index), [Ou,] S (the source):
        // the word is the returned register's, else the source's, the last
        // GPR (a compare-and-swap's source is the compare/new pair: one
        // word of it). Not the first GPR: without a return that is the
        // address (`threadgroup_atomic add, None, r2l, 0, r3` moves r3's
        // 4 bytes, not r2l's 2).
        gprs()
            .find(|(o, _)| o.role.is_def())
            .or_else(|| gprs().next_back())
            .map(|(o, r)| {
                let mut r = *r;
                if !o.role.is_def() && insn.field("op") == Some(3) {
                    if r.width == Width::W64 {
                        r.width = Width::W32;
                    } else if r.count > 1 {
                        r.count /= 2;
                    }
                }
                r
            })
    } else {
        insn.all_operands()
            .filter_map(|o| o.as_reg())
            .find(|r| r.file == RegFile::Gpr)
            .copied()
    };
    Some(MemAccess { space, dir, data })
}

/// The stack-adjust encoding (applegpu `StackAdjustInstructionDesc`,
/// `TODO.stack_adjust`): byte 0 = 0xB5, bits 16..20 = 0b0001, bits 24..26 =
/// 0b01. `stack_store` (byte 0 = 0xB5 too) never sets bits 16..20 (its fields
/// leave them unused; every spill in the Mesa and Apple corpora has 0), but
/// comes first in applegpu's first-match order, so the adjust prints as
/// `stack_store i8, 1, 2, 0, <v>, 0` with an empty register tuple (mask 0).
/// The amount `v` (applegpu `StackAdjustmentDesc`) is bits 20..24 | 32..36 <<
/// 4 | 56..64 << 8, sign-extended from 16 bits.
fn stack_adjust_of(insn: &Instruction) -> Option<i32> {
    // One definition of the encoding (bits 16..19 == 0b0001, immediate form
    // bits 24..25 == 0b01, amount in bits 20..23/32..35/56..63), next to the
    // decoder of the form it shadows. `TODO.stack_adjust` itself never
    // decodes: `stack_store` comes first in first-match order.
    crate::group_mem::stack_adjust_amount(insn)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Operand, Reg, Role, Width};

    fn form_idx(name: &str) -> u8 {
        FORMS.iter().position(|f| f.name == name).unwrap() as u8
    }

    /// A hand-built instruction. Starts from a decoded `stop` so that fields
    /// added to `Instruction` later need no change here.
    fn insn(addr: u32, len: u8, form: &str, mnemonic: &'static str, raw: u128) -> Instruction {
        let mut i = crate::decode::decode(&[0x88, 0x00], addr).expect("stop decodes");
        i.addr = addr;
        i.len = len;
        i.form = form_idx(form);
        i.set_mnemonic_str(mnemonic);
        i.operands.clear();
        i.implicit.clear();
        i.set_raw(raw);
        i
    }

    fn with(mut i: Instruction, ops: &[Operand]) -> Instruction {
        for o in ops {
            i.operands.push(*o);
        }
        i
    }

    fn imm(v: i64) -> Operand {
        Operand::new(OperandKind::imm(v))
    }

    fn r0l() -> Operand {
        Operand::reg(Reg::gpr(Width::W16, 0), Role::UseDef)
    }

    #[test]
    fn branches_with_target_operand() {
        // `9e: jmp_exec_any 0x40` (cf_mandelbrot): offset -0x5e.
        let j = with(
            insn(0x9e, 6, "jmp_exec_any", "jmp_exec_any", 0xffffffa2c000),
            &[Operand::new(OperandKind::target(-0x5e))],
        );
        assert_eq!(
            j.flow(),
            Flow::BranchExec {
                target: 0x40,
                any: true
            }
        );
        let n = with(
            insn(0x24e, 6, "jmp_exec_none", "jmp_exec_none", 0),
            &[Operand::new(OperandKind::target(0x978 - 0x24e))],
        );
        assert_eq!(
            n.flow(),
            Flow::BranchExec {
                target: 0x978,
                any: false
            }
        );
    }

    #[test]
    fn branch_target_from_raw_when_operands_missing() {
        // `84: 00c090ffffff jmp_exec_any 0x14` (cf_triangular_loops).
        let raw = u128::from_le_bytes({
            let mut b = [0u8; 16];
            b[..6].copy_from_slice(&[0x00, 0xc0, 0x90, 0xff, 0xff, 0xff]);
            b
        });
        let j = insn(0x84, 6, "jmp_exec_any", "jmp_exec_any", raw);
        assert_eq!(
            j.flow(),
            Flow::BranchExec {
                target: 0x14,
                any: true
            }
        );
    }

    #[test]
    fn calls_and_terminators() {
        // `36: 10c04afeffff call 0x-180` (marysaka simple_call main alone).
        // the PC-relative call is the second `call` form (CallInstructionDesc)
        let call_rel = |addr, raw| {
            let mut i = insn(addr, 6, "call", "call", raw);
            i.form = crate::forms::idx::CALL_46;
            i
        };
        let c = with(
            call_rel(0x36, 0),
            &[Operand::new(OperandKind::target(-0x1b6))],
        );
        assert_eq!(c.flow(), Flow::Call { target: -0x180 });
        let raw = u128::from_le_bytes({
            let mut b = [0u8; 16];
            b[..6].copy_from_slice(&[0x10, 0xc0, 0x4a, 0xfe, 0xff, 0xff]);
            b
        });
        let c2 = call_rel(0x36, raw);
        assert_eq!(c2.flow(), Flow::Call { target: -0x180 });
        let ci = with(
            insn(0, 2, "call", "call", 0),
            &[Operand::reg(Reg::gpr(Width::W32, 30), Role::Use)],
        );
        assert_eq!(ci.flow(), Flow::CallIndirect);
        assert_eq!(insn(0, 2, "ret", "ret", 0x0214).flow(), Flow::Ret);
        assert_eq!(insn(0, 2, "stop", "stop", 0x88).flow(), Flow::Stop);
        assert_eq!(insn(0, 2, "trap", "trap", 0x08).flow(), Flow::Trap);
        assert_eq!(insn(0, 4, "iadd", "iadd", 0).flow(), Flow::Next);
        let ji = with(
            insn(0x10, 4, "jmp_incomplete", "jmp_incomplete", 0),
            &[Operand::new(OperandKind::target(-8))],
        );
        assert_eq!(
            ji.flow(),
            Flow::BranchExec {
                target: 8,
                any: false
            }
        );
    }

    #[test]
    fn exec_ops() {
        let pop = with(insn(0, 6, "pop_exec", "pop_exec", 0), &[r0l(), imm(2)]);
        assert_eq!(pop.exec_op(), Some(ExecOp::Pop(2)));
        assert_eq!(pop.exec_count(), Some(2));
        // `520e00000000 pop_exec r0l, 1` with no operands: n from bits 11..13.
        let pop_raw = insn(0, 6, "pop_exec", "pop_exec", 0x0e52);
        assert_eq!(pop_raw.exec_op(), Some(ExecOp::Pop(1)));
        let iff = with(
            insn(0, 6, "if_icmp", "if_icmp", 0),
            &[
                r0l(),
                Operand::new(OperandKind::keyword(&"seq")),
                imm(0),
                imm(1),
            ],
        );
        assert_eq!(iff.exec_op(), Some(ExecOp::If));
        assert_eq!(iff.exec_count(), Some(1));
        let push = with(insn(0, 6, "if_fcmp", "push_exec", 0), &[r0l(), imm(2)]);
        assert_eq!(push.exec_op(), Some(ExecOp::If));
        assert_eq!(push.exec_count(), Some(2));
        assert_eq!(
            with(insn(0, 6, "if_fcmp", "update_exec", 0), &[r0l()]).exec_op(),
            Some(ExecOp::Update)
        );
        assert_eq!(
            insn(0, 6, "else_icmp", "else_exec", 0).exec_op(),
            Some(ExecOp::Else)
        );
        assert_eq!(
            insn(0, 6, "else_fcmp", "else_fcmp", 0).exec_op(),
            Some(ExecOp::Else)
        );
        assert_eq!(
            insn(0, 6, "while_icmp", "while_icmp", 0).exec_op(),
            Some(ExecOp::While)
        );
        assert_eq!(insn(0, 4, "iadd", "iadd", 0).exec_op(), None);
        assert_eq!(insn(0, 4, "iadd", "iadd", 0).exec_count(), None);
    }

    fn raw_of(bytes: &[u8]) -> u128 {
        let mut b = [0u8; 16];
        b[..bytes.len()].copy_from_slice(bytes);
        u128::from_le_bytes(b)
    }

    #[test]
    fn stack_adjust_vs_stack_store() {
        // Mesa regpressure_gemm8x8_wg1024 `0: b500c10522800000
        // stack_store i8, 1, 2, 0, 44, 0` = stack_adjust 44 (its
        // layout.json scratch_size_dwords is 44).
        let adj = insn(
            0,
            8,
            "stack_store",
            "stack_store",
            raw_of(&[0xb5, 0x00, 0xc1, 0x05, 0x22, 0x80, 0x00, 0x00]),
        );
        assert_eq!(adj.stack_adjust(), Some(44));
        assert_eq!(adj.mem_space(), None);
        // Apple helper: `c: b50081052000` (+8, 6 bytes) and
        // `10c: b50081052f8000ff` (-8).
        let a6 = insn(
            0xc,
            6,
            "stack_store",
            "stack_store",
            raw_of(&[0xb5, 0x00, 0x81, 0x05, 0x20, 0x00]),
        );
        assert_eq!(a6.stack_adjust(), Some(8));
        let m8 = insn(
            0x10c,
            8,
            "stack_store",
            "stack_store",
            raw_of(&[0xb5, 0x00, 0x81, 0x05, 0x2f, 0x80, 0x00, 0xff]),
        );
        assert_eq!(m8.stack_adjust(), Some(-8));
        // Apple `simple_s32`: `6: b500c10520800001 ... 268`.
        let a268 = insn(
            6,
            8,
            "stack_store",
            "stack_store",
            raw_of(&[0xb5, 0x00, 0xc1, 0x05, 0x20, 0x80, 0x00, 0x01]),
        );
        assert_eq!(a268.stack_adjust(), Some(268));
        // A real spill `e: b522000500c01200 stack_store i32, 1, 0, x, 4, r4, 0, 0`.
        let spill = insn(
            0xe,
            8,
            "stack_store",
            "stack_store",
            raw_of(&[0xb5, 0x22, 0x00, 0x05, 0x00, 0xc0, 0x12, 0x00]),
        );
        assert_eq!(spill.stack_adjust(), None);
        assert_eq!(spill.mem_space(), Some(MemSpace::Stack));
        // Apple spill with register index `b529800403c0f000`.
        let spill2 = insn(
            0x1f2,
            8,
            "stack_store",
            "stack_store",
            raw_of(&[0xb5, 0x29, 0x80, 0x04, 0x03, 0xc0, 0xf0, 0x00]),
        );
        assert_eq!(spill2.stack_adjust(), None);
        let fill = insn(
            0,
            8,
            "stack_load",
            "stack_load",
            raw_of(&[0x35, 0x6a, 0x40, 0x05, 0x00, 0xc1, 0x12, 0x00]),
        );
        assert_eq!(fill.stack_adjust(), None);
        assert_eq!(fill.mem_space(), Some(MemSpace::Stack));
    }

    #[test]
    fn memory_spaces() {
        let cases = [
            ("device_load", Some(MemSpace::Device)),
            ("device_store", Some(MemSpace::Device)),
            ("atomic", Some(MemSpace::Device)),
            ("threadgroup_load", Some(MemSpace::Threadgroup)),
            ("threadgroup_store", Some(MemSpace::Threadgroup)),
            ("threadgroup_atomic", Some(MemSpace::Threadgroup)),
            ("uniform_store", Some(MemSpace::Uniform)),
            ("texture_sample", Some(MemSpace::Texture)),
            ("image_write", Some(MemSpace::Texture)),
            ("TODO.ld/st_tile", Some(MemSpace::Tile)),
            ("iadd", None),
            ("wait", None),
        ];
        for (f, want) in cases {
            let i = insn(0, 8, f, FORMS[form_idx(f) as usize].name, 0);
            assert_eq!(i.mem_space(), want, "{f}");
        }
    }

    /// An atomic's bytes per lane are its word's (the returned register's,
    /// else the source's), not its first GPR's: without a return that is
    /// the 16-bit threadgroup address (Mesa corpus hist_shared_atomic_1024).
    #[test]
    fn an_atomic_moves_its_source_word_not_its_address() {
        let hex = |s: &str| -> Vec<u8> {
            (0..s.len())
                .step_by(2)
                .map(|k| u8::from_str_radix(&s[k..k + 2], 16).unwrap())
                .collect()
        };
        for (code, text, half) in [
            // threadgroup_atomic add, None, r2l, 0, r3, 0, 2, 128, 0
            ("19800400148000000600", "r2l", 6),
            // atomic add, 0, None, u2_u3, r1, signed, r2, 1, 0, 1, 4, 2
            ("1500248c00500400", "r1", 4),
        ] {
            let i = crate::decode::decode(&hex(code), 0).expect("decodes");
            let m = i.mem_access().expect("an atomic");
            assert_eq!(m.dir, MemDir::Atomic, "{code}");
            assert_eq!(m.bytes_per_lane(), 4, "{code}: not {text}'s width");
            // the source: r3 (half 6), r2 (half 4)
            assert_eq!(m.data.map(|r| r.half), Some(half), "{code}");
        }
    }
}
