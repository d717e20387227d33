//! Memory, texture, varying and miscellaneous forms (descriptor indices
//! 114..=160): `ld_tile`/`st_tile`, `iter`/`iterproj`, `TODO.ldcf`,
//! `uniform_store`, `tex_state_store`, `sampler_state_store`, the varying
//! stores, `async_*`, `device_*`, `stack_*`, `threadgroup_*`,
//! `texture_sample`/`texture_load`, barriers, atomics, the unknown `TODO.*`
//! forms, `doorbell`, `jmp_if_skipping_doorbell`, `image_write(_block)`,
//! `TODO.sr_thing`, `TODO.pop_exec2`, `map`/`unmap`, `sample_mask`,
//! `zs_emit` and `memory_barrier`.
//!
//! Every operand kind of these forms except the shared ones (immediates,
//! binaries, enums, `Reg32Desc`, `UReg64Desc`, `ALUDstDesc`) is decoded here,
//! with its role set when it is built: the data registers of loads,
//! `iter`/`ldcf`, texture sample/load and atomics are `Def`, everything else
//! (store data, bases, offsets, coordinates, LOD, sample masks...) is `Use`,
//! and the `r0l` of `TODO.pop_exec2` is `UseDef`.
//!
//! Register tuples keep applegpu's printed shape: `count` = popcount of the
//! memory mask (or the `iter` count, x3 for `ldcf`, the texture dimension's
//! coordinate count...), `width` from the register-type bit. An empty tuple
//! (a memory mask of 0, no compare/offset) prints as nothing and produces no
//! operand. Where the registers printed differ from what the hardware
//! touches, the print is kept:
//!
//! * Bit-packed memory formats (`rgb10a2`, `rg11b10f`, `rgb9e5` and the
//!   `.rtz` variants) on `device_load`: applegpu documents that they ignore
//!   the mask and always write the format's channel count (4 / 3 / 3); the
//!   printed tuple has popcount(mask) registers. [`touched_data`] gives the
//!   real range.
//! * `stack_get_ptr` (shadowed by `stack_load`) writes one 32-bit register;
//!   the printed tuple has popcount(mask) registers ([`touched_data`]).
//! * The texture compare + offset operand `rN_rMl` (32-bit compare value and
//!   16-bit packed offset; mixed widths cannot be one [`Reg`]) is printed as
//!   a keyword, and its two registers are added as implicit `Use` operands.
//!
//! # Where applegpu raises on valid bytes (our rendering)
//!
//! The instruction gets `raised = true` and prints as follows:
//!
//! * A register name past applegpu's name tables (`r127` for 32-bit,
//!   `r127h` for 16-bit, `u255` for 32-bit uniforms; IndexError): tuples
//!   simply continue, e.g. `r126_r127_r128`.
//! * Memory base (`A` of device loads/stores, atomics) with an odd number:
//!   the 64-bit pair `value >> 1` is printed.
//! * Memory index (`O`) register with an odd number or a number >= 0x100:
//!   the 32-bit register `value >> 1` is printed.
//! * Threadgroup index register number >= 0x100: `r(value & 0xFF)` as a
//!   16-bit register (what applegpu computes after its assertion).
//! * Atomic source/destination with an odd number: register `value >> 1`
//!   (a 64-bit pair for `cmpxchg` sources).
//! * `image_write` 32-bit source with an odd number: the four 32-bit
//!   registers from `value >> 1`.
//! * `ld_tile`/`st_tile` sample-mask type 2 or 3: printed as the 16-bit
//!   register (types 0 = immediate, 1 = register are normal).
//! * `iter`/`iterproj` sample index with a non-zero value while the
//!   interpolation mode has no sample operand: printed as the immediate.
//! * `zs_emit` with neither z nor s: the register tuple is empty (prints
//!   nothing).
//! * Texture/image dimension `n` outside 0..=8 (KeyError): coordinates and
//!   gradients are sized as `tex_2d`; the enum prints the number.
//! * Texture LOD modes 3 and 7 (Mesa's `auto_lod_bias_min`, uniform and
//!   register variants): the enum prints `auto_lod_bias_min` and the LOD
//!   operand is the two 16-bit halves (bias, min) `u..l_u..h` / `rNl_rNh`
//!   (uniform for 3, register for 7). Other unknown modes (8-11, 13-15)
//!   print the number and a single 16-bit register (uniform when bit 2 is
//!   clear).
//!
//! # Stack adjust vs. spill
//!
//! Mesa's `stack_adjust` (stack frame allocation at entry) has the
//! `stack_store` opcode byte 0xb5 and is printed by applegpu as a
//! `stack_store` with mask 0 (so no data register) and the frame size as the
//! immediate offset, e.g. `stack_store i8, 1, 2, 0, 80, 0`. What sets it
//! apart is bits 16..19 == 0b0001 (always zero in a real spill); bits
//! 24..25 then tell the immediate form (0b01, applegpu's shadowed
//! `TODO.stack_adjust`) from a register form (0b00, `TODO.stack_adjust2`).
//! See [`is_stack_adjust`] / [`stack_adjust_amount`]. Likewise a
//! `stack_load` with bits 16..19 == 0b0001 and bits 48..49 == 0b10 is the
//! shadowed `stack_get_ptr` ([`is_stack_get_ptr`]).

use crate::forms::{OpKind, OperandDesc};
use crate::model::arrayvec_lite::OperandVec;
use crate::model::*;
use crate::operands::{gpr16, gpr32, imm, kw, none, out_reg, Ctx, Out};
use std::sync::OnceLock;

// ---------------------------------------------------------------------------
// Spelling tables
// ---------------------------------------------------------------------------

static MEMORY_FORMATS: [Option<&str>; 16] = [
    Some("i8"),
    Some("i16"),
    Some("i32"),
    Some("f16"),
    Some("u8norm"),
    Some("s8norm"),
    Some("u16norm"),
    Some("s16norm"),
    Some("rgb10a2"),
    None,
    Some("srgba8"),
    None,
    Some("rg11b10f"),
    Some("rgb9e5"),
    Some("rg11b10f.rtz"),
    Some("rgb9e5.rtz"),
];

/// Component masks (`x`, `y`, `z`, `w` for bits 0..3), mask 0 is empty.
static MASKS: [&str; 16] = [
    "", "x", "y", "xy", "z", "xz", "yz", "xyz", "w", "xw", "yw", "xyw", "zw", "xzw", "yzw", "xyzw",
];

static TEX_TYPES: [&str; 9] = [
    "tex_1d",
    "tex_1d_array",
    "tex_2d",
    "tex_2d_array",
    "tex_2d_ms",
    "tex_3d",
    "tex_cube",
    "tex_cube_array",
    "tex_2d_ms_array",
];

/// (coordinate count, extra 16-bit components) per texture dimension.
static TEX_SIZES: [(u32, u32); 9] = [
    (1, 0),
    (1, 1),
    (2, 0),
    (2, 1),
    (2, 1),
    (3, 0),
    (3, 0),
    (3, 1),
    (2, 2),
];

static ATOMIC_OPS: [&str; 11] = [
    "add", "sub", "xchg", "cmpxchg", "umin", "imin", "umax", "imax", "and", "or", "xor",
];

#[inline(always)]
fn tex_size(ctx: &mut Ctx) -> (u32, u32) {
    match TEX_SIZES.get(ctx.named("n") as usize) {
        Some(&s) => s,
        None => {
            ctx.raised = true;
            (2, 0)
        }
    }
}

// ---------------------------------------------------------------------------
// Stack helpers for analysis
// ---------------------------------------------------------------------------

use crate::forms::idx;

const STACK_STORE_FORM: u8 = idx::STACK_STORE;
const STACK_LOAD_FORM: u8 = idx::STACK_LOAD;

/// True for Mesa's `stack_adjust` (frame allocation), which applegpu prints
/// as a `stack_store` without data registers: bits 16..19 are 0b0001.
#[allow(dead_code)]
pub(crate) fn is_stack_adjust(insn: &Instruction) -> bool {
    insn.form == STACK_STORE_FORM && (insn.raw() >> 16) & 0xF == 1
}

/// Signed byte amount of an immediate `stack_adjust` (bits 24..25 == 0b01):
/// the 16-bit value in bits 20..23, 32..35, 56..63.
pub(crate) fn stack_adjust_amount(insn: &Instruction) -> Option<i32> {
    if !is_stack_adjust(insn) || (insn.raw() >> 24) & 3 != 1 {
        return None;
    }
    let w = insn.raw();
    let v = ((w >> 20) & 0xF) | ((w >> 32) & 0xF) << 4 | ((w >> 56) & 0xFF) << 8;
    Some(v as u16 as i16 as i32)
}

/// The data registers a memory instruction really touches when that differs
/// from the printed tuple (see the module docs); `None` when the printed
/// data operand is exact. Bit-packed `device_load`s get the difference as an
/// implicit def ([`finish`]).
pub(crate) fn touched_data(insn: &Instruction) -> Option<Reg> {
    let first_def = || {
        insn.operands
            .iter()
            .find(|o| o.role == Role::Def)
            .and_then(|o| o.as_reg())
            .copied()
    };
    match insn.form {
        idx::DEVICE_LOAD | idx::DEVICE_LOAD_TODO => {
            // F: bits 7..9 and 48
            let f = ((insn.raw() >> 7) & 7) | ((insn.raw() >> 48) & 1) << 3;
            let channels = match f {
                8 => 4,
                12..=15 => 3,
                _ => return None,
            };
            let r = first_def()?;
            Some(Reg {
                count: channels,
                ..r
            })
        }
        // Texture loads and samples write the enabled channels contiguously
        // from the data register but clobber a group of 4 whatever the mask
        // (Mesa, src/asahi/compiler/agx_validate.c `agx_write_registers`:
        // IMAGE_LOAD/TEXTURE_LOAD/TEXTURE_SAMPLE "Even when masked out,
        // these clobber 4 registers", `4 * size`, and `agx_validate_width`
        // requires the destination to be that wide, so the allocator,
        // agx_register_allocate.c, reserves and aligns all 4:
        // docs/analysis.md, "Register footprint of vectors").
        idx::TEXTURE_SAMPLE | idx::TEXTURE_LOAD => {
            let r = first_def()?;
            (r.count < 4).then_some(Reg { count: 4, ..r })
        }
        STACK_LOAD_FORM if is_stack_get_ptr(insn) => {
            let n = ((insn.raw() >> 10) & 0x3F) | ((insn.raw() >> 40) & 3) << 6;
            Some(gpr32((n >> 1) as u32))
        }
        _ => None,
    }
}

/// True for `stack_get_ptr` (shadowed by `stack_load` in applegpu): not a
/// fill ([`crate::semantics`] gives it no memory access).
pub(crate) fn is_stack_get_ptr(insn: &Instruction) -> bool {
    insn.form == STACK_LOAD_FORM && (insn.raw() >> 16) & 0xF == 1 && (insn.raw() >> 48) & 3 == 2
}

// ---------------------------------------------------------------------------
// Hooks
// ---------------------------------------------------------------------------

/// Mnemonic of the instruction (applegpu `fields_to_mnem` + aliases).
#[inline(always)]
pub(crate) fn mnemonic(ctx: &Ctx) -> crate::model::Mnem {
    match ctx.form.idx {
        idx::TODO_LD_ST_TILE => {
            if ctx.named("load") != 0 {
                const { crate::model::Mnem::named("ld_tile") }
            } else {
                const { crate::model::Mnem::named("st_tile") }
            }
        }
        idx::MAP => match ctx.named("op") {
            0 => const { crate::model::Mnem::named("unmap") },
            1 => const { crate::model::Mnem::named("map") },
            _ => const { crate::model::Mnem::named("TODO.map") },
        },
        _ => crate::model::Mnem::form(ctx.form.idx),
    }
}

/// Spelling of an `EnumDesc` value (None: printed as the number).
#[inline(always)]
pub(crate) fn enum_value(
    ctx: &Ctx,
    op: &'static OperandDesc,
    v: u64,
) -> Option<&'static &'static str> {
    let form = ctx.form.idx;
    let v = v as usize;
    match op.name {
        "F" if form == idx::ASYNC_STORE || form == idx::ASYNC_LOAD => ["copy_1d", "copy_2d"].get(v),
        "F" => MEMORY_FORMATS.get(v).and_then(|o| o.as_ref()),
        "mask" if form == idx::TEXTURE_SAMPLE || form == idx::TEXTURE_LOAD => match v {
            1..=15 => Some(&MASKS[v]),
            _ => None,
        },
        "mask" => MASKS.get(v),
        "n" => TEX_TYPES.get(v),
        "Ou" => ["signed", "unsigned"].get(v),
        "op" if form == idx::MAP => ["unmap", "map"].get(v),
        "op" => ATOMIC_OPS.get(v),
        "target" => ["target0", "target1"].get(v),
        "round" => ["rte", "rtz"].get(v),
        "forwarding" => ["", "forward"].get(v),
        "elide" => ["", "elide"].get(v),
        "interpolation" => ["center", "sample", "centroid", "sample"].get(v),
        "mode" => match v {
            0 => Some(&""),
            2 => Some(&"query_lod"),
            _ => None,
        },
        "q6" => match v {
            0 => Some(&"none"),
            1 => Some(&"compare"),
            2 => Some(&"gather_r"),
            3 => Some(&"gather_depth"),
            6 => Some(&"gather_g"),
            10 => Some(&"gather_b"),
            14 => Some(&"gather_a"),
            _ => None,
        },
        "lod" => match v {
            0 => Some(&"auto_lod"),
            1 | 5 => Some(&"auto_lod_bias"),
            2 | 6 => Some(&"lod_min"),
            // not in applegpu's table (its LOD operand raises): Mesa's name
            3 | 7 => Some(&"auto_lod_bias_min"),
            4 => Some(&"lod_grad"),
            12 => Some(&"lod_grad_min"),
            _ => None,
        },
        _ => None,
    }
}

/// Whether the data register of the form is written (loads) or read.
#[inline(always)]
fn data_role(ctx: &Ctx) -> Role {
    match ctx.form.idx {
        idx::TODO_LD_ST_TILE => {
            if ctx.named("load") != 0 {
                Role::Def
            } else {
                Role::Use
            }
        }
        idx::ITER
        | idx::ITERPROJ
        | idx::TODO_LDCF
        | idx::DEVICE_LOAD
        | idx::DEVICE_LOAD_TODO
        | idx::STACK_LOAD
        | idx::THREADGROUP_LOAD
        | idx::TEXTURE_SAMPLE
        | idx::TEXTURE_LOAD
        | idx::THREADGROUP_ATOMIC => Role::Def,
        _ => Role::Use,
    }
}

/// A tuple of `count` consecutive registers of `width` in `file`, the first
/// being element `first` (register number in that width). Empty tuples
/// print nothing. Names past applegpu's tables set `raised`.
fn tuple(
    ctx: &mut Ctx,
    file: RegFile,
    width: Width,
    first: u32,
    count: u32,
    flags: u8,
    role: Role,
) -> Out {
    if count == 0 {
        return Out::Skip;
    }
    let limit = match (file, width) {
        (RegFile::Gpr, Width::W16) => 256,
        (RegFile::Gpr, _) => 128,
        (RegFile::Uniform, Width::W16) => 512,
        (RegFile::Uniform, _) => 256,
    };
    if first.saturating_add(count) > limit {
        ctx.raised = true;
    }
    let half = match width {
        Width::W16 => first,
        _ => first.saturating_mul(2),
    };
    let r = Reg {
        file,
        width,
        half: u16::try_from(half).unwrap_or(u16::MAX),
        count: u8::try_from(count).unwrap_or(u8::MAX),
        flags,
    };
    out_reg(r, role)
}

fn g16(ctx: &mut Ctx, n: u32, count: u32, role: Role) -> Out {
    tuple(ctx, RegFile::Gpr, Width::W16, n, count, 0, role)
}
fn g32(ctx: &mut Ctx, n: u32, count: u32, role: Role) -> Out {
    tuple(ctx, RegFile::Gpr, Width::W32, n, count, 0, role)
}
fn g64(ctx: &mut Ctx, n: u32, role: Role) -> Out {
    tuple(ctx, RegFile::Gpr, Width::W64, n, 1, 0, role)
}
fn u16r(ctx: &mut Ctx, n: u32, role: Role) -> Out {
    tuple(ctx, RegFile::Uniform, Width::W16, n, 1, 0, role)
}
fn u64r(ctx: &mut Ctx, n: u32, role: Role) -> Out {
    tuple(ctx, RegFile::Uniform, Width::W64, n, 1, 0, role)
}

fn sext16(v: u64) -> i64 {
    v as u16 as i16 as i64
}

/// `rN_rMl`: a 32-bit compare value followed by a 16-bit offset
/// (SampleCompareOffDesc with both present), for every 8-bit field value.
///
/// The table is a static (not a `Vec`): a keyword operand refers to its
/// spelling by its distance from the program's statics
/// ([`crate::model::KeywordRef`]).
fn compare_offset_text(value: u32) -> &'static &'static str {
    static TABLE: OnceLock<[&'static str; 256]> = OnceLock::new();
    let t = TABLE.get_or_init(|| {
        std::array::from_fn(|v| {
            let v = v as u32;
            let h = v + 2;
            let s = format!(
                "r{}_r{}{}",
                v >> 1,
                h >> 1,
                if h & 1 == 0 { 'l' } else { 'h' }
            );
            &*Box::leak(s.into_boxed_str())
        })
    });
    t.get(value as usize).unwrap_or(&"")
}

/// Name of the type/flags field of operand `n` (applegpu appends `t`).
#[inline(always)]
fn type_field(n: &str) -> &'static str {
    match n {
        "R" => "Rt",
        "O" => "Ot",
        "A" => "At",
        "T" => "Tt",
        "S" => "St",
        "C" => "Ct",
        "D" => "Dt",
        "M" => "Mt",
        "I" => "It",
        _ => "",
    }
}

/// Operand kinds specific to this group.
#[inline(always)]
pub(crate) fn operand(ctx: &mut Ctx, op: &'static OperandDesc) -> Out {
    use OpKind::*;
    let n = op.name;
    let value = ctx.named(n) as u32;
    let tname = type_field(n);
    match op.kind {
        // --- memory data registers -------------------------------------------
        MemoryRegDesc
        | SampleRegDesc
        | ThreadgroupMemoryRegDesc
        | TileToMemoryRegDesc
        | PBESourceRegDesc
        | VarRegisterDesc
        | VarTripleRegisterDesc => data_reg_operand(ctx, op.kind, value, tname),
        // --- addresses -------------------------------------------------------
        MemoryBaseDesc
        | MemoryIndexDesc
        | MemoryShiftDesc
        | ThreadgroupMemoryBaseDesc
        | ThreadgroupIndexDesc
        | AsyncMemoryRegDesc
        | AsyncMemoryBaseDesc
        | StackAdjustmentDesc
        | StackReg32Desc
        | Reg32_4_4_Desc
        | ExReg32Desc => address_operand(ctx, op.kind, value, tname),
        // --- atomics ---------------------------------------------------------
        AtomicSourceDesc | AtomicDestinationDesc => atomic_operand(ctx, op.kind, value, tname),
        // --- texture / image -------------------------------------------------
        SampleURegDesc | TextureDesc | SamplerDesc | CoordsDesc | LodDesc
        | SampleCompareOffDesc | PBELodDesc | TextureStateDestDesc | SamplerStateDestDesc => {
            texture_operand(ctx, op.kind, value, tname)
        }
        // --- varyings --------------------------------------------------------
        CFDesc | CFPerspectiveDesc | IterSampleID | UVSIndexDesc | DiscardMaskDesc => {
            varying_operand(ctx, op.kind, value, tname)
        }
        // --- fragment output -------------------------------------------------
        SampleMaskDesc | ZSDesc => fragment_output_operand(ctx, op.kind, value, tname),
        // --- misc ------------------------------------------------------------
        SReg32Desc => Out::Op(Operand::new(OperandKind::SpecialReg(value as u16))),
        ImplicitR0LDesc => {
            let mut r = gpr16(0);
            if ctx.named("Dt") & 1 != 0 {
                r.flags = flags::CACHE;
            }
            out_reg(r, Role::UseDef)
        }
        BranchOffsetDesc => {
            let w = ctx.op_width(op, 0) as u32;
            let v = ctx.op(op, 0);
            let rel = if w > 0 && w < 64 && (v >> (w - 1)) & 1 != 0 {
                (v as i64) - (1i64 << w)
            } else {
                v as i64
            };
            Out::Op(Operand::new(OperandKind::target(rel as i32)))
        }
        _ => kw(&"<TODO>"),
    }
}

/// Data registers: of memory and sample accesses, tile and PBE writes, and
/// register ranges of a given count.
#[inline(always)]
fn data_reg_operand(ctx: &mut Ctx, kind: OpKind, value: u32, tname: &'static str) -> Out {
    use OpKind::*;
    let t = |ctx: &Ctx| -> u64 { ctx.named(tname) };
    match kind {
        MemoryRegDesc | SampleRegDesc => {
            let count = (ctx.named("mask") & 0xF).count_ones();
            let role = data_role(ctx);
            if t(ctx) == 0 {
                g16(ctx, value, count, role)
            } else {
                g32(ctx, value >> 1, count, role)
            }
        }
        ThreadgroupMemoryRegDesc => {
            let optional = ctx.form.idx == idx::THREADGROUP_ATOMIC;
            if optional && ctx.named("Ra") == 0 {
                return none();
            }
            let count = if optional {
                1
            } else {
                (ctx.named("mask") & 0xF).count_ones()
            };
            let role = data_role(ctx);
            if t(ctx) == 0 {
                g16(ctx, value, count, role)
            } else {
                g32(ctx, value >> 1, count, role)
            }
        }
        TileToMemoryRegDesc => g16(ctx, value, 1, Role::Use),
        PBESourceRegDesc => {
            if t(ctx) == 0 {
                g16(ctx, value, 4, Role::Use)
            } else {
                if value & 1 != 0 {
                    ctx.raised = true;
                }
                g32(ctx, value >> 1, 4, Role::Use)
            }
        }
        VarRegisterDesc | VarTripleRegisterDesc => {
            let mut count = match ctx.named("count") {
                0 => 4,
                c => c as u32,
            };
            if kind == VarTripleRegisterDesc {
                count *= 3;
            }
            if t(ctx) == 0 {
                g16(ctx, value, count, Role::Def)
            } else {
                g32(ctx, value >> 1, count, Role::Def)
            }
        }
        _ => unreachable!("not a data register kind"),
    }
}

/// Addresses: bases, indices, shifts, stack adjustments.
#[inline(always)]
fn address_operand(ctx: &mut Ctx, kind: OpKind, value: u32, tname: &'static str) -> Out {
    use OpKind::*;
    let t = |ctx: &Ctx| -> u64 { ctx.named(tname) };
    match kind {
        MemoryBaseDesc => {
            if value & 1 != 0 {
                ctx.raised = true;
            }
            if t(ctx) != 0 {
                u64r(ctx, value >> 1, Role::Use)
            } else {
                g64(ctx, value >> 1, Role::Use)
            }
        }
        MemoryIndexDesc => {
            if t(ctx) != 0 {
                imm(sext16(value as u64))
            } else {
                if value & 1 != 0 || value >= 0x100 {
                    ctx.raised = true;
                }
                g32(ctx, value >> 1, 1, Role::Use)
            }
        }
        MemoryShiftDesc => match value {
            0 => Out::Skip,
            1 => kw(&"lsl 1"),
            2 => kw(&"lsl 2"),
            _ => kw(&"lsl 3"),
        },
        ThreadgroupMemoryBaseDesc => match t(ctx) {
            0 => g16(ctx, value, 1, Role::Use),
            2 => imm(0),
            f => u16r(ctx, value | ((f as u32 >> 1) << 8), Role::Use),
        },
        ThreadgroupIndexDesc => {
            if t(ctx) != 0 {
                imm(sext16(value as u64))
            } else {
                if value >= 0x100 {
                    ctx.raised = true;
                }
                g16(ctx, value & 0xFF, 1, Role::Use)
            }
        }
        AsyncMemoryRegDesc => {
            if t(ctx) != 0 {
                u64r(ctx, value >> 1, Role::Use)
            } else {
                g64(ctx, value >> 1, Role::Use)
            }
        }
        AsyncMemoryBaseDesc => {
            let count = if ctx.named("F") != 0 { 5 } else { 3 };
            let file = if t(ctx) != 0 {
                RegFile::Uniform
            } else {
                RegFile::Gpr
            };
            tuple(ctx, file, Width::W32, value, count, 0, Role::Use)
        }
        StackAdjustmentDesc => imm(sext16(value as u64)),
        StackReg32Desc => g32(ctx, value >> 1, 1, Role::Def),
        Reg32_4_4_Desc => g32(ctx, value >> 1, 1, Role::Use),
        ExReg32Desc => g32(ctx, value, 1, Role::Use),
        _ => unreachable!("not an address kind"),
    }
}

/// Atomics: the source and the returned old value.
#[inline(always)]
fn atomic_operand(ctx: &mut Ctx, kind: OpKind, value: u32, tname: &'static str) -> Out {
    use OpKind::*;
    let t = |ctx: &Ctx| -> u64 { ctx.named(tname) };
    match kind {
        AtomicSourceDesc => {
            if value & 1 != 0 {
                ctx.raised = true;
            }
            if ctx.named("op") == 3 {
                g64(ctx, value >> 1, Role::Use)
            } else {
                g32(ctx, value >> 1, 1, Role::Use)
            }
        }
        AtomicDestinationDesc => {
            if t(ctx) == 1 {
                if value & 1 != 0 {
                    ctx.raised = true;
                }
                g32(ctx, value >> 1, 1, Role::Def)
            } else {
                none()
            }
        }
        _ => unreachable!("not an atomic kind"),
    }
}

/// Texture and image operands: registers, states, coordinates, LOD, compare/offset.
#[inline(always)]
fn texture_operand(ctx: &mut Ctx, kind: OpKind, value: u32, tname: &'static str) -> Out {
    use OpKind::*;
    let t = |ctx: &Ctx| -> u64 { ctx.named(tname) };
    match kind {
        SampleURegDesc => {
            if ctx.named("Tt") & 2 != 0 {
                u64r(ctx, value * 2, Role::Use)
            } else {
                none()
            }
        }
        TextureDesc => match t(ctx) {
            0 => Out::Op(Operand::new(OperandKind::TexState(value as u16))),
            1 => g16(ctx, value, 1, Role::Use),
            2 if value == 0 => imm(0),
            2 => g16(ctx, value, 1, Role::Use),
            _ => g32(ctx, value >> 1, 1, Role::Use),
        },
        SamplerDesc => {
            if t(ctx) == 0 {
                Out::Op(Operand::new(OperandKind::SamplerState(value as u16)))
            } else {
                g16(ctx, value, 1, Role::Use)
            }
        }
        CoordsDesc => {
            let (count, extra) = tex_size(ctx);
            let discard = if t(ctx) != 0 { flags::DISCARD } else { 0 };
            let (w, first, count) = if ctx.named("Cs") != 0 {
                (Width::W16, value, count + extra)
            } else if extra != 0 {
                (Width::W16, value, count * 2 + 1)
            } else {
                (Width::W32, value >> 1, count)
            };
            tuple(ctx, RegFile::Gpr, w, first, count, discard, Role::Use)
        }
        LodDesc => match ctx.named("lod") {
            0 => imm(0),
            l @ (4 | 12) => {
                let (dims, _) = tex_size(ctx);
                let count = dims * 2 + u32::from(l == 12);
                g32(ctx, value >> 1, count, Role::Use)
            }
            1 | 2 => u16r(ctx, value, Role::Use),
            5 | 6 => g16(ctx, value, 1, Role::Use),
            l => {
                ctx.raised = true;
                let count = if l & 3 == 3 { 2 } else { 1 };
                let file = if l & 4 != 0 {
                    RegFile::Gpr
                } else {
                    RegFile::Uniform
                };
                tuple(ctx, file, Width::W16, value, count, 0, Role::Use)
            }
        },
        SampleCompareOffDesc => {
            let has_offset = t(ctx) != 0;
            let has_compare = ctx.named("compare") != 0;
            match (has_compare, has_offset) {
                (false, false) => Out::Skip,
                (true, false) => g32(ctx, value >> 1, 1, Role::Use),
                (false, true) => g16(ctx, value, 1, Role::Use),
                (true, true) => {
                    if value + 2 >= 256 {
                        ctx.raised = true;
                    }
                    // the registers themselves are implicit operands (finish)
                    kw(compare_offset_text(value))
                }
            }
        }
        PBELodDesc => {
            if t(ctx) == 0 {
                g16(ctx, value, 1, Role::Use)
            } else {
                imm(value as i64)
            }
        }
        TextureStateDestDesc => Out::Op(Operand::new(OperandKind::TexState(value as u16))),
        SamplerStateDestDesc => Out::Op(Operand::new(OperandKind::SamplerState(value as u16))),
        _ => unreachable!("not a texture kind"),
    }
}

/// Varyings: coefficient registers, sample IDs, indices.
#[inline(always)]
fn varying_operand(ctx: &mut Ctx, kind: OpKind, value: u32, tname: &'static str) -> Out {
    use OpKind::*;
    let t = |ctx: &Ctx| -> u64 { ctx.named(tname) };
    match kind {
        CFDesc => {
            if t(ctx) == 0 {
                Out::Op(Operand::new(OperandKind::Cf(value as u16)))
            } else {
                g16(ctx, value, 1, Role::Use)
            }
        }
        CFPerspectiveDesc => Out::Op(Operand::new(OperandKind::Cf(value as u16))),
        IterSampleID => {
            let interp = ctx.named("interpolation");
            if interp & 1 != 0 {
                if interp & 2 != 0 {
                    g16(ctx, value, 1, Role::Use)
                } else {
                    imm(value as i64)
                }
            } else if value == 0 {
                Out::Skip
            } else {
                ctx.raised = true;
                imm(value as i64)
            }
        }
        // type 0: a 16-bit register, else an immediate (the discard mask is
        // a fragment output read the same way)
        UVSIndexDesc | DiscardMaskDesc => {
            if t(ctx) == 0 {
                g16(ctx, value, 1, Role::Use)
            } else {
                imm(value as i64)
            }
        }
        _ => unreachable!("not a varying kind"),
    }
}

/// Fragment output: sample masks, depth/stencil.
#[inline(always)]
fn fragment_output_operand(ctx: &mut Ctx, kind: OpKind, value: u32, tname: &'static str) -> Out {
    use OpKind::*;
    let t = |ctx: &Ctx| -> u64 { ctx.named(tname) };
    match kind {
        SampleMaskDesc => {
            let f = t(ctx);
            // ld/st_tile: 2-bit type, 0 = immediate; sample_mask/zs_emit:
            // 1-bit type, 1 = immediate.
            let immediate = if ctx.form.idx == idx::TODO_LD_ST_TILE {
                f == 0
            } else {
                f == 1
            };
            if f >= 2 {
                ctx.raised = true;
            }
            if immediate {
                imm(value as i64)
            } else {
                g16(ctx, value, 1, Role::Use)
            }
        }
        ZSDesc => {
            let count = 2 * (ctx.named("z") as u32 & 1) + (ctx.named("s") as u32 & 1);
            if count == 0 {
                ctx.raised = true;
            }
            g16(ctx, value, count, Role::Use)
        }
        _ => unreachable!("not a fragment output kind"),
    }
}

/// Post-processing: aliases, operand roles, implicit operands.
#[inline(always)]
pub(crate) fn finish(ctx: &mut Ctx, insn: &mut Instruction) {
    match ctx.form.idx {
        // ld_tile/st_tile: the direction immediate becomes the mnemonic.
        idx::TODO_LD_ST_TILE => drop_first(insn),
        idx::MAP if ctx.named("op") <= 1 => drop_first(insn),
        idx::TEXTURE_SAMPLE | idx::TEXTURE_LOAD
            if ctx.named("compare") != 0 && ctx.named("Ot") != 0 =>
        {
            let v = ctx.named("O") as u32;
            insn.implicit.push(Operand::reg(gpr32(v >> 1), Role::Use));
            let mut r = gpr16(0);
            r.half = u16::try_from(v + 2).unwrap_or(u16::MAX);
            insn.implicit.push(Operand::reg(r, Role::Use));
        }
        _ => {}
    }
    // Bit-packed formats write the format's channel count whatever the
    // mask, texture loads and samples clobber 4 channels: the registers
    // beyond the printed tuple are implicit defs.
    if matches!(
        ctx.form.idx,
        idx::DEVICE_LOAD | idx::DEVICE_LOAD_TODO | idx::TEXTURE_SAMPLE | idx::TEXTURE_LOAD
    ) {
        let printed = insn.defs().next().map_or(0, |r| r.count);
        if let Some(r) = touched_data(insn) {
            if r.count > printed {
                insn.implicit.push(Operand::reg(r, Role::Def));
            }
        }
    }
}

fn drop_first(insn: &mut Instruction) {
    let mut v = OperandVec::new();
    for o in insn.operands.iter().skip(1) {
        v.push(*o);
    }
    insn.operands = v;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode;
    use crate::format::{format_asm, Syntax};
    use crate::forms::FORMS;

    /// Random words with each form's fixed bits: decoding and printing never
    /// panics, and register operands stay within sane bounds.
    #[test]
    fn no_panic_on_random_words() {
        let mut next = crate::xorshift::xorshift64(0x9E37_79B9_7F4A_7C15);
        for f in &FORMS[114..=160] {
            for i in 0..4000 {
                let mut w = (next() as u128) | (next() as u128) << 64;
                if i % 3 == 0 {
                    w &= (next() as u128) | (next() as u128) << 64;
                }
                w = (w & !f.mask) | f.bits;
                let bytes = w.to_le_bytes();
                let Ok(insn) = decode(&bytes[..12], 0x100) else {
                    continue;
                };
                let _ = format_asm(&insn, Syntax::Default);
                let _ = format_asm(&insn, Syntax::Cryptic);
                for r in insn.defs().chain(insn.uses()) {
                    assert!(r.count >= 1 && r.count <= 12, "{insn:?}");
                }
                let _ = touched_data(&insn);
                let _ = stack_adjust_amount(&insn);
            }
        }
    }

    fn with_bits(hex: &str, set: &[(u32, u32, u128)]) -> Instruction {
        let mut b: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        let mut w = 0u128;
        for (i, x) in b.iter().enumerate() {
            w |= (*x as u128) << (8 * i);
        }
        for &(start, width, v) in set {
            w = (w & !(((1u128 << width) - 1) << start)) | (v << start);
        }
        for (i, x) in b.iter_mut().enumerate() {
            *x = (w >> (8 * i)) as u8;
        }
        decode(&b, 0).unwrap()
    }

    #[test]
    fn bit_packed_device_load_defines_all_its_channels() {
        // mask x (bits 52..55 = 1): i32 prints and writes one register;
        // rgb10a2 (F = 8: bits 7..9 = 0, Fx bit 48 = 1) still writes 4, the
        // 3 beyond the printed one being an implicit def
        let x = |f: u128, fx: u128| {
            with_bits("0521000e00c8f200", &[(52, 4, 1), (7, 3, f), (48, 1, fx)])
        };
        let halves = |i: &Instruction| -> std::collections::BTreeSet<u32> {
            i.defs().flat_map(|r| r.half_range()).collect()
        };
        let plain = x(2, 0);
        assert_eq!(plain.form, crate::forms::idx::DEVICE_LOAD);
        assert_eq!(halves(&plain).len(), 2, "{plain:?}");
        assert!(plain.implicit.is_empty());
        let packed = x(0, 1);
        assert_eq!(packed.form, crate::forms::idx::DEVICE_LOAD);
        assert_eq!(touched_data(&packed).map(|r| r.count), Some(4));
        assert_eq!(halves(&packed).len(), 8, "{packed:?}");
    }

    #[test]
    fn stack_get_ptr_is_not_a_memory_access() {
        let fill = dec("3572400500c11200");
        assert_eq!(fill.form, crate::forms::idx::STACK_LOAD);
        assert!(fill.mem_access().is_some());
        let gp = with_bits("3572400500c11200", &[(16, 4, 1), (48, 2, 2)]);
        assert_eq!(gp.form, crate::forms::idx::STACK_LOAD);
        assert!(is_stack_get_ptr(&gp));
        assert_eq!(gp.mem_access(), None);
        assert_eq!(gp.mem_space(), None);
    }

    fn dec(hex: &str) -> Instruction {
        let b: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        decode(&b, 0).unwrap()
    }

    #[test]
    fn stack_adjust_is_not_a_spill() {
        let adj = dec("b500010525800000");
        assert_eq!(
            format_asm(&adj, Syntax::Default).trim_end(),
            "stack_store      i8, 1, 2, 0, 80, 0"
        );
        assert!(is_stack_adjust(&adj));
        assert_eq!(stack_adjust_amount(&adj), Some(80));
        assert_eq!(adj.defs().count() + adj.uses().count(), 0);
        let spill = dec("b522000500c01200");
        assert_eq!(
            format_asm(&spill, Syntax::Default).trim_end(),
            "stack_store      i32, 1, 0, x, 4, r4, 0, 0"
        );
        assert!(!is_stack_adjust(&spill));
        let u: Vec<_> = spill.uses().copied().collect();
        assert_eq!(u, vec![gpr32(4)]);
        assert_eq!(spill.defs().count(), 0);
    }

    #[test]
    fn load_store_roles() {
        // device_load with a 4-wide mask: the data tuple is one Def of 4
        let mut w: u128 = 0x05 | 2 << 7 | 1 << 26 | 4 << 44 | 0xF << 52 | 1 << 49 | 1 << 47;
        w |= 8 << 10; // R = r4
        let insn = decode(&w.to_le_bytes()[..12], 0).unwrap();
        let d: Vec<_> = insn.defs().copied().collect();
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].width, d[0].half, d[0].count), (Width::W32, 8, 4));
        assert!(insn.uses().all(|r| r.width == Width::W64 || r.count == 1));
    }
}
