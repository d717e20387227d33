//! The bit-field reader and operand formatters of the Apple9 forms
//! ([`super::forms`]). An operand's text follows the M3 reference
//! disassembler's syntax (TellowKrinkle/applegpu, branch `M3`, BSD-3: the
//! facts are its field positions and printed syntax; this is our code).
//!
//! Every field an operand declares is read through [`Ctx::f`], which also
//! records the bits read: a form's "known bits" (for the reference's `.todo`
//! suffix, set when a bit outside the constants and the fields differs from
//! the form's expected value) are its constants plus the bits its decoding
//! read. Operand decoders therefore read every field they declare, whatever
//! the values.

/// Why an operand cannot be printed (the reference raises there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bad(pub &'static str);

pub type R<T> = Result<T, Bad>;

/// An instruction word (up to 16 bytes, little-endian) and the bits read.
pub struct Ctx {
    pub n: u128,
    pub used: u128,
}

impl Ctx {
    pub fn new(n: u128) -> Ctx {
        Ctx { n, used: 0 }
    }
    /// `size` bits from bit `start`.
    pub fn f(&mut self, start: u32, size: u32) -> u32 {
        let mask = if size >= 32 {
            u32::MAX as u128
        } else {
            (1u128 << size) - 1
        };
        self.used |= mask << start;
        ((self.n >> start) & mask) as u32
    }
    /// A field made of pieces (first piece lowest).
    pub fn merged(&mut self, parts: &[(u32, u32)]) -> u32 {
        let (mut v, mut shift) = (0u32, 0u32);
        for &(start, size) in parts {
            v |= self.f(start, size) << shift;
            shift += size;
        }
        v
    }
    pub fn opt(&mut self, off: Option<u32>, default: u32) -> u32 {
        off.map_or(default, |o| self.f(o, 1))
    }
}

/// A register or immediate operand: a base text and its flags.
#[derive(Clone, Debug, Default)]
pub struct Op {
    pub base: String,
    pub flags: Vec<&'static str>,
}

impl Op {
    pub fn text(&self) -> String {
        let mut s = self.base.clone();
        for f in &self.flags {
            s.push('.');
            s.push_str(f);
        }
        s
    }
    fn reg(base: String) -> Op {
        Op {
            base,
            flags: Vec::new(),
        }
    }
}

/// Register kinds as the reference names them.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    R16,
    R32,
    R64,
    U16,
    U32,
    U64,
}

/// The reference's name tables: `r0l..r127h`, `r0..r127`, `r0_r1..r127_r128`,
/// `u0l..u255h`, `u0..u255`, `u0_u1..u255_u256`; a number outside its
/// table is an error (the reference raises `IndexError`).
pub fn reg_name(kind: Kind, n: u32) -> R<String> {
    let (limit, s) = match kind {
        Kind::R16 => (
            256,
            format!("r{}{}", n >> 1, if n & 1 == 0 { 'l' } else { 'h' }),
        ),
        Kind::R32 => (128, format!("r{n}")),
        Kind::R64 => (128, format!("r{}_r{}", n, n + 1)),
        Kind::U16 => (
            512,
            format!("u{}{}", n >> 1, if n & 1 == 0 { 'l' } else { 'h' }),
        ),
        Kind::U32 => (256, format!("u{n}")),
        Kind::U64 => (256, format!("u{}_u{}", n, n + 1)),
    };
    if n >= limit {
        return Err(Bad("register number out of range"));
    }
    Ok(s)
}

pub fn reg(kind: Kind, n: u32) -> R<Op> {
    Ok(Op::reg(reg_name(kind, n)?))
}

/// A 16-bit register (`v` counts halves) or, when `wide`, the 32-bit one
/// at that half (`v >> 1`), of the uniform or the general register file.
fn reg16_or_32(uniform: bool, wide: bool, v: u32) -> R<Op> {
    let kind = match (uniform, wide) {
        (false, false) => Kind::R16,
        (false, true) => Kind::R32,
        (true, false) => Kind::U16,
        (true, true) => Kind::U32,
    };
    reg(kind, if wide { v >> 1 } else { v })
}

/// The reference's `register_from_fields`.
pub fn from_fields(
    value: u32,
    size_bits: u32,
    uniform: bool,
    count: u32,
    cache: bool,
    discard: bool,
) -> R<Op> {
    let (shift, kind) = match (size_bits, uniform) {
        (0, false) => (0, Kind::R16),
        (0, true) => (0, Kind::U16),
        (1, false) => (1, Kind::R32),
        (1, true) => (1, Kind::U32),
        (2, false) => (1, Kind::R64),
        (2, true) => (1, Kind::U64),
        _ => return Err(Bad("bad register size")),
    };
    let advance = 1u32 << size_bits;
    let mut op = if count == 1 {
        reg(kind, value >> shift)?
    } else {
        let mut names = Vec::new();
        for i in 0..count {
            names.push(reg_name(kind, (value + i * advance) >> shift)?);
        }
        Op::reg(names.join("_"))
    };
    if cache {
        op.flags.push("cache");
    }
    if discard {
        op.flags.push("discard");
    }
    Ok(op)
}

/// The reference's 8-bit float immediate, printed as Python prints a float.
pub fn float_imm(n: u32) -> String {
    let sign = if n & 0x80 != 0 { -1.0 } else { 1.0 };
    let e = (n & 0x70) >> 4;
    let f = n & 0xf;
    let v: f64 = if e == 0 {
        sign * f as f64 / 64.0
    } else {
        sign * (0x10 | f) as f64 * 2f64.powi(e as i32 - 7)
    };
    format!("{v:?}")
}

pub fn imm(v: impl std::fmt::Display) -> Op {
    Op::reg(v.to_string())
}

/// A wait operand: one slot (3 bits, value-1 is the slot) or a 6-bit mask
/// (contiguous at `lo` when `hi == lo + 3`, else 3 bits at `lo` and 3 at
/// `hi`). `label`: printed as `wait 01` (empty when none), else the digits
/// or `none`.
pub fn wait(c: &mut Ctx, lo: u32, hi: Option<u32>, label: bool) -> String {
    let value = match hi {
        Some(h) if h == lo + 3 => c.f(lo, 6),
        Some(h) => c.merged(&[(lo, 3), (h, 3)]),
        None => {
            let v = c.f(lo, 3);
            if v != 0 {
                1 << (v - 1)
            } else {
                0
            }
        }
    };
    if value == 0 {
        return if label { String::new() } else { "none".into() };
    }
    let mut s = if label {
        "wait ".to_string()
    } else {
        String::new()
    };
    for i in 0..6 {
        if value & (1 << i) != 0 {
            s.push(char::from(b'0' + i as u8));
        }
    }
    s
}

/// Offsets of a "variable" source operand (the reference's `VariableSrcDesc`).
#[derive(Clone, Copy, Default)]
pub struct VSrc {
    pub bit: u32,
    pub l: Option<u32>,
    pub c: u32,
    pub d: u32,
    pub s: Option<u32>,
    pub h: Option<u32>,
    pub u: Option<u32>,
    pub n: Option<u32>,
    pub a: Option<u32>,
    pub b: Option<u32>,
}

/// Common layouts: `A` (sources at 9), `B` (at 25), and the rest (`C`, `X`,
/// `Y`: the flag bits just below the register bits).
pub fn layout(which: char, bit: u32) -> VSrc {
    layout_l(which, bit, None)
}

/// [`layout`] with an explicit low-bit offset: in layouts `A` and `B` the
/// `u` and `h` bits follow the low bit (`l + 4`/`l + 5`, `l + 5`/`l + 6`).
pub fn layout_l(which: char, bit: u32, l: Option<u32>) -> VSrc {
    let c = bit + 6;
    match which {
        'A' | 'B' => {
            // (default low bit, discard bit, `u` after the low bit); `h`
            // follows `u`
            let (l0, d, u) = if which == 'A' {
                (51, 19, 4)
            } else {
                (52, 20, 5)
            };
            let l = l.unwrap_or(l0);
            VSrc {
                bit,
                c,
                s: Some(bit - 1),
                d,
                l: Some(l),
                u: Some(l + u),
                h: Some(l + u + 1),
                ..VSrc::default()
            }
        }
        _ => VSrc {
            bit,
            c,
            l: Some(l.unwrap_or(bit - 1)),
            d: bit - 2,
            h: Some(bit - 3),
            u: Some(bit - 4),
            n: Some(bit - 5),
            a: Some(bit - 6),
            ..VSrc::default()
        },
    }
}

/// How a variable source's size is found.
#[derive(Clone, Copy)]
pub enum Size {
    /// Its own `s` bit, or 32-bit when it has none.
    Own,
    /// Always this.
    Fixed(u32),
}

/// A variable source: `int` chooses integer immediates and `sx` for the
/// `n` bit (else float immediates and `bfloat`/`abs`/`neg`).
pub fn vsrc(c: &mut Ctx, o: &VSrc, size: Size, int: bool, u_default: u32) -> R<Op> {
    let raw = match o.l {
        Some(l) => c.merged(&[(l, 1), (o.bit, 6)]),
        None => c.f(o.bit, 6) << 1,
    };
    let high = c.opt(o.h, 0);
    let cache = c.f(o.c, 1);
    let discard = c.f(o.d, 1);
    let s_own = c.opt(o.s, 1);
    let uniform = c.opt(o.u, u_default);
    let neg = c.opt(o.n, 0);
    let abs = c.opt(o.a, 0);
    let bf = c.opt(o.b, 0);
    let size_bit = match size {
        Size::Own => s_own,
        Size::Fixed(v) => v,
    };
    let mut value = raw;
    let mut r;
    if uniform != 0 {
        value |= (discard << 7) | (high << 8);
        if cache != 0 {
            return Ok(if int {
                imm(value & 0xff)
            } else {
                imm(float_imm(value))
            });
        }
        r = reg16_or_32(true, size_bit != 0, value)?;
    } else {
        value |= high << 7;
        r = reg16_or_32(false, size_bit != 0, value)?;
        if cache != 0 {
            r.flags.push("cache");
        }
        if discard != 0 {
            r.flags.push("discard");
        }
    }
    if int {
        if neg != 0 {
            r.flags.push("sx");
        }
    } else {
        if bf != 0 {
            r.flags.push("bfloat");
        }
        if abs != 0 {
            r.flags.push("abs");
        }
        if neg != 0 {
            r.flags.push("neg");
        }
    }
    Ok(r)
}

/// Offsets of a variable destination (`VariableDstDesc`).
#[derive(Clone, Copy)]
pub struct VDst {
    pub bit: u32,
    pub l: Option<u32>,
    pub x: Option<u32>,
    pub h: Option<u32>,
    pub z: Option<u32>,
    pub s: Option<u32>,
    pub c: Option<u32>,
    pub u: Option<u32>,
    pub b: Option<u32>,
}

pub const VDST: VDst = VDst {
    bit: 4,
    l: None,
    x: Some(22),
    h: None,
    z: None,
    s: Some(3),
    c: Some(21),
    u: None,
    b: None,
};

pub fn vdst(c: &mut Ctx, o: &VDst) -> R<Op> {
    let mut parts: Vec<(u32, u32)> = Vec::new();
    if let Some(l) = o.l {
        parts.push((l, 1));
    }
    parts.push((o.bit, 4));
    if let Some(x) = o.x {
        parts.push((x, 2));
    }
    if let Some(h) = o.h {
        parts.push((h, 1));
    }
    let raw = c.merged(&parts);
    let value = if o.l.is_none() { raw << 1 } else { raw };
    let size_bit = c.opt(o.s, 1);
    let cache = c.opt(o.c, 0);
    let uniform = c.opt(o.u, 0);
    let high = c.opt(o.z, 0);
    let bf = c.opt(o.b, 0);
    let mut r = if uniform != 0 {
        reg16_or_32(true, size_bit != 0, value | (high << 8))?
    } else {
        reg16_or_32(false, size_bit != 0, value)?
    };
    if bf != 0 {
        r.flags.push("bfloat");
    }
    if cache != 0 {
        r.flags.push("cache");
    }
    Ok(r)
}

/// Offsets of a fixed-layout destination (`FixedDstDesc`): register bits
/// at 24 (with a low bit) or at 24 without one (`has_l == false`).
#[derive(Clone, Copy, Default)]
pub struct FDst {
    pub no_l: bool,
    pub r: Option<u32>,
    pub s: Option<u32>,
    pub s_size: u32,
    pub i: Option<u32>,
}

/// How a fixed operand's size and count are found (the reference's
/// per-descriptor `get_size`/`get_count`).
#[derive(Clone, Copy)]
pub struct Shape {
    pub size: u32,
    pub count: u32,
    pub float: bool,
}

/// Reads a fixed destination's fields; returns `(value, r, s, cache, i)`.
pub fn fdst_fields(c: &mut Ctx, o: &FDst) -> (u32, u32, u32, u32, u32) {
    let (value, cache) = if o.no_l {
        let v = c.f(24, 7) << 1;
        (v, c.f(31, 1))
    } else {
        let v = c.merged(&[(24, 1), (25, 7)]);
        (v, c.f(32, 1))
    };
    let r = c.opt(o.r, 1);
    let s = o.s.map_or(0, |s| c.f(s, o.s_size.max(1)));
    let i = c.opt(o.i, 0);
    (value, r, s, cache, i)
}

pub fn fdst_op(value: u32, r: u32, cache: u32, i: u32, shape: Shape) -> R<Op> {
    let mut value = value;
    if shape.size == 0 && shape.count > 1 {
        value &= !1;
    }
    let uniform = r == 0;
    let mut op = if uniform {
        value |= cache << 8;
        from_fields(value, shape.size, true, shape.count, false, false)?
    } else {
        from_fields(value, shape.size, false, shape.count, cache != 0, false)?
    };
    if shape.float && shape.size == 0 && i == 0 {
        op.flags.push("bfloat");
    }
    Ok(op)
}

/// Offsets of a fixed-layout source (`FixedSrcDesc`).
#[derive(Clone, Copy, Default)]
pub struct FSrc {
    pub bit: u32,
    pub no_l: bool,
    pub s: Option<u32>,
    pub s_size: u32,
    pub d: Option<u32>,
    pub r: Option<u32>,
    /// sign-extend bit (integer) or negate bit (float)
    pub sx: Option<u32>,
    pub a: Option<u32>,
    pub i: Option<u32>,
    /// extra `u` bit (pack sources)
    pub u: Option<u32>,
}

pub struct FSrcFields {
    pub value: u32,
    pub cache: u32,
    pub s: u32,
    pub r: u32,
    pub d: u32,
    pub sx: u32,
    pub a: u32,
    pub i: u32,
    pub u: u32,
}

pub fn fsrc_fields(c: &mut Ctx, o: &FSrc) -> FSrcFields {
    let (value, cache) = if o.no_l {
        let v = c.f(o.bit, 7) << 1;
        (v, c.f(o.bit + 7, 1))
    } else {
        let v = c.merged(&[(o.bit, 1), (o.bit + 1, 7)]);
        (v, c.f(o.bit + 8, 1))
    };
    let s = o.s.map_or(0, |s| c.f(s, o.s_size.max(1)));
    let r = c.opt(o.r, 1);
    let d = c.opt(o.d, 0);
    let sx = c.opt(o.sx, 0);
    let a = c.opt(o.a, 0);
    let i = c.opt(o.i, 0);
    let u = c.opt(o.u, 0);
    FSrcFields {
        value,
        cache,
        s,
        r,
        d,
        sx,
        a,
        i,
        u,
    }
}

pub fn fsrc_op(f: &FSrcFields, shape: Shape) -> R<Op> {
    let mut value = f.value;
    if shape.size == 0 && shape.count > 1 {
        value &= !1;
    }
    let mut op = if f.r != 0 {
        from_fields(
            value,
            shape.size,
            false,
            shape.count,
            f.cache != 0,
            f.d != 0,
        )?
    } else {
        value |= f.cache << 8;
        if f.d != 0 {
            from_fields(value, shape.size, true, shape.count, false, false)?
        } else if shape.float {
            return Ok(imm(float_imm(value & 0xff)));
        } else {
            return Ok(imm(value & 0xff));
        }
    };
    if !shape.float && f.sx != 0 {
        op.flags.push("sx");
    }
    if shape.float {
        if shape.size == 0 && f.i == 0 {
            op.flags.push("bfloat");
        } else if shape.size != 0 && f.i != 0 {
            // the reference asserts: one kind of 32-bit float only
            return Err(Bad("32-bit bfloat source"));
        }
    }
    if f.a != 0 {
        op.flags.push("abs");
    }
    if shape.float && f.sx != 0 {
        op.flags.push("neg");
    }
    Ok(op)
}
