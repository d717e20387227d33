//! Operand decoding: the shared core kinds (ALU destinations and sources,
//! float sources with modifiers, immediates) live here; kinds and mnemonic
//! rules specific to one family of forms live in the group modules
//! (`group_alu`, `group_ctrl`, `group_mem`), routed by form index.
//!
//! Each form has a generated decoder (`forms::DECODERS`, tools/gen_forms.py)
//! that calls [`begin`], [`operand`] for each of its operand descriptors and
//! [`end`] with the form and descriptors as constants; everything below is
//! inlined into it, so the group, kind and field-name dispatch fold at
//! compile time and only the data-dependent branches remain.
//!
//! Bit meanings follow applegpu's `applegpu.py` (ALUDstDesc, ALUSrcDesc,
//! FloatSrcDesc, CmpselSrcDesc ...) and the ISA pseudocode in
//! `shared/reference/applegpu-isa-docs.html`. Where applegpu raises on a valid
//! encoding (e.g. an odd register number where a 64-bit register is required,
//! or float modifiers on an undefined source type), we still produce an
//! operand: see [`Ctx::raised`] and docs/decoder.md.

use crate::forms::{Form, OpKind, OperandDesc, FLOAT_IMM};
use crate::model::*;

/// Decoding context for one instruction.
pub(crate) struct Ctx {
    pub form: &'static Form,
    pub word: u128,
    /// Set when applegpu would have raised an exception on this encoding.
    pub raised: bool,
    /// Set when applegpu prints `TODO:` debug lines while decoding.
    pub todo: bool,
}

impl Ctx {
    /// Value of the form's merged field `i`.
    #[inline(always)]
    pub fn field(&self, i: usize) -> u64 {
        let f = &self.form.fields[i];
        let mut v = 0u64;
        for &(start, width, shift) in f.parts {
            v |= (((self.word >> start) & ((1u128 << width) - 1)) as u64) << shift;
        }
        v
    }
    /// Value of the form's field called `name` (0 if the form has none).
    #[inline(always)]
    pub fn named(&self, name: &str) -> u64 {
        self.form
            .field_index(name)
            .map(|i| self.field(i))
            .unwrap_or(0)
    }
    /// Whether the form has a field called `name`.
    #[allow(dead_code)]
    pub fn has(&self, name: &str) -> bool {
        self.form.field_index(name).is_some()
    }
    /// The `k`-th field owned by operand `op` (merged fields first, then plain
    /// fields, in applegpu's declaration order).
    #[inline(always)]
    pub fn op(&self, op: &OperandDesc, k: usize) -> u64 {
        op.fields
            .get(k)
            .map(|&i| self.field(i as usize))
            .unwrap_or(0)
    }
    /// Total bit width of the operand's `k`-th field.
    #[inline(always)]
    pub fn op_width(&self, op: &OperandDesc, k: usize) -> u8 {
        op.fields
            .get(k)
            .map(|&i| self.form.fields[i as usize].parts.iter().map(|p| p.1).sum())
            .unwrap_or(0)
    }
}

/// Result of decoding one operand descriptor.
pub(crate) enum Out {
    /// A printed operand.
    Op(Operand),
    /// Prints as the empty string (applegpu filters it out).
    Skip,
}

pub(crate) fn kw(s: &'static &'static str) -> Out {
    Out::Op(Operand::new(OperandKind::keyword(s)))
}

pub(crate) fn imm(v: i64) -> Out {
    Out::Op(Operand::new(OperandKind::imm(v)))
}

/// What applegpu prints for a Python `None` operand.
pub(crate) fn none() -> Out {
    kw(&"None")
}

pub(crate) fn gpr16(n: u32) -> Reg {
    Reg {
        file: RegFile::Gpr,
        width: Width::W16,
        half: n as u16,
        count: 1,
        flags: 0,
    }
}
pub(crate) fn gpr32(n: u32) -> Reg {
    Reg {
        file: RegFile::Gpr,
        width: Width::W32,
        half: (n * 2) as u16,
        count: 1,
        flags: 0,
    }
}
pub(crate) fn gpr64(n: u32) -> Reg {
    Reg {
        file: RegFile::Gpr,
        width: Width::W64,
        half: (n * 2) as u16,
        count: 1,
        flags: 0,
    }
}
pub(crate) fn ureg16(n: u32) -> Reg {
    Reg {
        file: RegFile::Uniform,
        width: Width::W16,
        half: n as u16,
        count: 1,
        flags: 0,
    }
}
pub(crate) fn ureg32(n: u32) -> Reg {
    Reg {
        file: RegFile::Uniform,
        width: Width::W32,
        half: (n * 2) as u16,
        count: 1,
        flags: 0,
    }
}
pub(crate) fn ureg64(n: u32) -> Reg {
    Reg {
        file: RegFile::Uniform,
        width: Width::W64,
        half: (n * 2) as u16,
        count: 1,
        flags: 0,
    }
}

pub(crate) fn out_reg(r: Reg, role: Role) -> Out {
    Out::Op(Operand::reg(r, role))
}

/// applegpu `add_hint_modifier`: 0b10 = cache, 0b11 = discard, 0b01 = none.
#[inline]
pub(crate) fn hint_flags(bits: u64) -> u8 {
    match bits & 3 {
        2 => flags::CACHE,
        3 => flags::DISCARD,
        _ => 0,
    }
}

/// ALU destination (applegpu ALUDstDesc and its 64/16/paired/float variants).
/// Fields: value (6+2 bits), type `t` (2 bits: bit0 cache, bit1 32-bit).
#[inline(always)]
fn alu_dst(ctx: &Ctx, op: &OperandDesc, allow32: bool, allow64: bool, paired: bool) -> Out {
    let value = ctx.op(op, 0) as u32;
    let t = ctx.op(op, 1);
    let f = if t & 1 != 0 { flags::CACHE } else { 0 };
    let mut r = if t & 2 != 0 && allow32 {
        if value & 1 != 0 && allow64 {
            gpr64(value >> 1)
        } else if paired {
            Reg {
                count: 2,
                ..gpr32(value >> 1)
            }
        } else {
            gpr32(value >> 1)
        }
    } else if paired {
        Reg {
            count: 2,
            ..gpr16(value)
        }
    } else {
        gpr16(value)
    };
    r.flags = f;
    out_reg(r, Role::Def)
}

/// Shape of an ALU source descriptor.
#[derive(Clone, Copy)]
struct SrcShape {
    allow32: bool,
    allow64: bool,
    paired: bool,
    float: bool,
}

/// ALU source (applegpu ALUSrcDesc, ALUSrc64/16, MulSrc/AddSrc (sign-extend
/// bit), FloatSrc/FloatSrc16/PairedFloatSrc (abs/neg modifier bits)).
/// Fields: value (6+2 bits), type `t` (4 bits, 3 for FloatSrc16), then `s`
/// (sign extend) or `m` (float modifier).
#[inline(always)]
fn alu_src(ctx: &mut Ctx, op: &OperandDesc, sh: SrcShape, sx_field: bool) -> Out {
    let mut value = ctx.op(op, 0) as u32;
    let t = ctx.op(op, 1);
    let extra = if sx_field || sh.float {
        ctx.op(op, 2)
    } else {
        0
    };
    let mut o: Operand;
    if t == 0 {
        o = if sh.float {
            Operand::new(OperandKind::FloatImm(value as u8))
        } else {
            Operand::new(OperandKind::imm(value as i64))
        };
    } else if t & 0b1100 == 0b0100 {
        value |= ((t & 1) as u32) << 8;
        let r = if t & 2 != 0 {
            ureg32(value >> 1)
        } else {
            ureg16(value)
        };
        o = Operand::reg(r, Role::Use);
    } else if t & 0b11 != 0 {
        let hi = t & 0b1100;
        let mut r = if sh.allow64 && hi == 0b1100 {
            if value & 1 != 0 {
                ctx.raised = true; // applegpu: assert (value & 1) == 0
            }
            gpr64(value >> 1)
        } else if sh.allow32 && (hi == 0b1000 || hi == 0b1100) {
            if sh.paired {
                Reg {
                    count: 2,
                    ..gpr32(value >> 1)
                }
            } else {
                gpr32(value >> 1)
            }
        } else if sh.paired {
            Reg {
                count: 2,
                ..gpr16(value)
            }
        } else {
            gpr16(value)
        };
        r.flags = hint_flags(t);
        o = Operand::reg(r, Role::Use);
    } else {
        // applegpu prints "TODO: <flags>" and the operand is None.
        ctx.todo = true;
        if sh.float && extra != 0 {
            ctx.raised = true; // add_float_modifier(None, m) raises
        }
        return none();
    }
    // MulSrcDesc/AddSrcDesc: sign-extend applies to single registers
    // (GPR or uniform), not to tuples or immediates.
    if sx_field && extra & 1 != 0 {
        if let OperandKind::Reg(r) = &mut o.kind {
            if r.count == 1 {
                r.flags |= flags::SX;
            }
        }
    }
    if sh.float {
        let mut add = 0;
        if extra & 1 != 0 {
            add |= flags::ABS;
        }
        if extra & 2 != 0 {
            add |= flags::NEG;
        }
        match &mut o.kind {
            OperandKind::Reg(r) => r.flags |= add,
            _ => o.flags |= add,
        }
    }
    if let OperandKind::Reg(r) = &o.kind {
        o.flags = r.flags;
    }
    Out::Op(o)
}

/// CmpselSrcDesc: 3-bit type, width from the destination's `Dt` field.
#[inline(always)]
fn cmpsel_src(ctx: &mut Ctx, op: &OperandDesc) -> Out {
    let value = ctx.op(op, 0) as u32;
    let t = ctx.op(op, 1);
    let is32 = ctx.named("Dt") & 2 != 0;
    match t {
        0b100 => imm(value as i64),
        1..=3 => {
            if is32 && value & 1 != 0 {
                ctx.raised = true;
            }
            let mut r = if is32 {
                gpr32(value >> 1)
            } else {
                gpr16(value)
            };
            r.flags = hint_flags(t);
            out_reg(r, Role::Use)
        }
        0b110 | 0b111 => {
            if is32 && value & 1 != 0 {
                ctx.raised = true;
            }
            let r = if is32 {
                ureg32(value >> 1)
            } else {
                ureg16(value)
            };
            out_reg(r, Role::Use)
        }
        _ => {
            ctx.todo = true;
            none()
        }
    }
}

/// The 16 truth-table spellings of `bitop` (fields tt0..tt3 printed in order).
static TRUTH_TABLES: [&str; 16] = [
    "0000", "1000", "0100", "1100", "0010", "1010", "0110", "1110", "0001", "1001", "0101", "1101",
    "0011", "1011", "0111", "1111",
];

/// Decodes one operand descriptor of the shared kinds; others go to the
/// group module of the form.
#[inline(always)]
fn decode_operand(ctx: &mut Ctx, op: &'static OperandDesc) -> Out {
    use OpKind::*;
    const ALU: SrcShape = SrcShape {
        allow32: true,
        allow64: false,
        paired: false,
        float: false,
    };
    match op.kind {
        ALUDstDesc => alu_dst(ctx, op, true, false, false),
        ALUDst64Desc => alu_dst(ctx, op, true, true, false),
        PairedALUDstDesc => alu_dst(ctx, op, true, false, true),
        FloatDstDesc => alu_dst(ctx, op, true, false, false),
        FloatDst16Desc => alu_dst(ctx, op, false, false, false),
        ALUSrcDesc => alu_src(ctx, op, ALU, false),
        ALUSrc64Desc => alu_src(
            ctx,
            op,
            SrcShape {
                allow64: true,
                ..ALU
            },
            false,
        ),
        ALUSrc16Desc => alu_src(
            ctx,
            op,
            SrcShape {
                allow32: false,
                ..ALU
            },
            false,
        ),
        MulSrcDesc => alu_src(ctx, op, ALU, true),
        AddSrcDesc => alu_src(
            ctx,
            op,
            SrcShape {
                allow64: true,
                ..ALU
            },
            true,
        ),
        FloatSrcDesc => alu_src(ctx, op, SrcShape { float: true, ..ALU }, false),
        FloatSrc16Desc => alu_src(
            ctx,
            op,
            SrcShape {
                allow32: false,
                float: true,
                ..ALU
            },
            false,
        ),
        PairedFloatSrcDesc => alu_src(
            ctx,
            op,
            SrcShape {
                paired: true,
                float: true,
                ..ALU
            },
            false,
        ),
        CmpselSrcDesc => cmpsel_src(ctx, op),
        ImmediateDesc => imm(ctx.op(op, 0) as i64),
        BinaryDesc => Out::Op(Operand::new(OperandKind::Binary {
            value: Packed::new(ctx.op(op, 0) as u32),
            bits: ctx.op_width(op, 0),
        })),
        Reg32Desc => out_reg(gpr32(ctx.op(op, 0) as u32), Role::Use),
        UReg64Desc => out_reg(ureg64(ctx.op(op, 0) as u32), Role::Use),
        TruthTableDesc => {
            let v = (ctx.named("tt0") | ctx.named("tt1") << 1 | ctx.named("tt2") << 2)
                | ctx.named("tt3") << 3;
            kw(&TRUTH_TABLES[v as usize & 15])
        }
        EnumDesc => {
            let v = ctx.op(op, 0);
            match group_enum(ctx, op, v) {
                Some(s) => kw(s),
                None => imm(v as i64),
            }
        }
        _ => group_operand(ctx, op),
    }
}

/// Which group module handles a form.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Group {
    Alu,
    Ctrl,
    Mem,
}

#[inline]
fn group_of(form: &Form) -> Group {
    match form.idx {
        // the descriptor table orders the forms ALU (from mov_imm), control
        // (from ret), memory (from TODO.ld/st_tile)
        i if i < crate::forms::idx::RET => Group::Alu,
        i if i < crate::forms::idx::TODO_LD_ST_TILE => Group::Ctrl,
        _ => Group::Mem,
    }
}

#[inline(always)]
fn group_operand(ctx: &mut Ctx, op: &'static OperandDesc) -> Out {
    match group_of(ctx.form) {
        Group::Alu => crate::group_alu::operand(ctx, op),
        Group::Ctrl => crate::group_ctrl::operand(ctx, op),
        Group::Mem => crate::group_mem::operand(ctx, op),
    }
}

/// Spelling of an `EnumDesc` value by the group that owns the form (None:
/// printed as the number).
#[inline(always)]
pub(crate) fn group_enum(
    ctx: &Ctx,
    op: &'static OperandDesc,
    v: u64,
) -> Option<&'static &'static str> {
    match group_of(ctx.form) {
        Group::Alu => crate::group_alu::enum_value(ctx, op, v),
        // no form of the control group has an `EnumDesc` operand
        Group::Ctrl => None,
        Group::Mem => crate::group_mem::enum_value(ctx, op, v),
    }
}

/// Starts decoding `insn` (whose `form` and `raw` are set) as `form`: the
/// mnemonic. Together with [`operand`] and [`end`], called by the generated
/// per-form decoders (`forms::DECODERS`) with a constant `form`, so that the
/// group and kind dispatch below folds away.
#[inline(always)]
pub(crate) fn begin(form: &'static Form, raw: u128, insn: &mut Instruction) -> Ctx {
    let ctx = Ctx {
        form,
        word: raw,
        raised: false,
        todo: false,
    };
    insn.set_mnem(match group_of(form) {
        Group::Alu => crate::group_alu::mnemonic(&ctx),
        Group::Ctrl => crate::group_ctrl::mnemonic(&ctx),
        Group::Mem => crate::group_mem::mnemonic(&ctx),
    });
    ctx
}

/// Decodes the operand descriptor `op` of the form and appends it.
#[inline(always)]
pub(crate) fn operand(ctx: &mut Ctx, insn: &mut Instruction, op: &'static OperandDesc) {
    if let Out::Op(o) = decode_operand(ctx, op) {
        insn.operands.push(o);
    }
}

/// Finishes `insn`: aliases, roles, implicit operands.
#[inline(always)]
pub(crate) fn end(mut ctx: Ctx, insn: &mut Instruction) {
    match group_of(ctx.form) {
        Group::Alu => crate::group_alu::finish(&mut ctx, insn),
        Group::Ctrl => crate::group_ctrl::finish(&mut ctx, insn),
        Group::Mem => crate::group_mem::finish(&mut ctx, insn),
    }
    insn.raised = ctx.raised;
}

/// Decodes the operands and mnemonic of `insn` (whose `form` and `raw` are
/// set) and fills roles and implicit operands.
#[inline]
pub(crate) fn decode_into(form: &'static Form, raw: u128, insn: &mut Instruction) {
    crate::forms::DECODERS[form.idx as usize](raw, insn)
}

/// Text of a float immediate as applegpu prints it.
pub(crate) fn float_imm_text(v: u8) -> &'static str {
    FLOAT_IMM[v as usize]
}
