//! The Apple9 instruction forms the M3 reference disassembler decodes
//! (TellowKrinkle/applegpu branch `M3` @ca77778, `applegpu.py`: 57
//! descriptors), as a table: each row has the reference's constant bits,
//! "unsure" constant bits, size(s) and an operand decoder written from its
//! field positions. Rows are in the reference's order: the first row whose
//! constants match decodes the word (as in the reference).

use super::fields::*;

/// What a form prints: mnemonic and operands (empty ones are left out).
pub type Asm = (String, Vec<String>);

pub struct Form {
    /// The reference's descriptor class, for tests and docs.
    pub class: &'static str,
    /// (start, size, value) constants that must match.
    pub consts: &'static [(u32, u32, u32)],
    /// Expected values of bits the reference is not sure of (a differing
    /// bit prints `.todo`, it does not stop a match).
    pub unsure: &'static [(u32, u32, u32)],
    /// Size in bytes: `sizes.0` when bit `len_bit` is clear, else `sizes.1`.
    pub sizes: (u8, u8),
    pub len_bit: u32,
    /// An extra matching condition on the word.
    pub also: Option<fn(u128) -> bool>,
    pub decode: fn(&mut Ctx) -> R<Asm>,
}

fn m(bits: &[(u32, u32, u32)]) -> (u128, u128) {
    let (mut mask, mut val) = (0u128, 0u128);
    for &(s, n, v) in bits {
        let f = ((1u128 << n) - 1) << s;
        mask |= f;
        val |= (v as u128) << s;
    }
    (mask, val)
}

impl Form {
    pub fn size(&self, n: u128) -> u8 {
        if (n >> self.len_bit) & 1 == 0 {
            self.sizes.0
        } else {
            self.sizes.1
        }
    }
    pub fn masked(&self, n: u128) -> u128 {
        let bytes = self.size(n) as u32;
        if bytes >= 16 {
            n
        } else {
            n & ((1u128 << (bytes * 8)) - 1)
        }
    }
    pub fn matches(&self, n: u128) -> bool {
        let x = self.masked(n);
        let (mask, bits) = m(self.consts);
        x & mask == bits & mask && self.also.is_none_or(|f| f(n))
    }
    /// The text: mnemonic (with `.todo` when a bit outside the known ones
    /// differs from what the form expects) and operands. `n` is the word
    /// the length rule framed (it may be longer than the form).
    pub fn asm(&self, n: u128) -> R<Asm> {
        let mut c = Ctx::new(self.masked(n));
        let (mut mnem, ops) = (self.decode)(&mut c)?;
        let (cmask, cbits) = m(self.consts);
        let (_, ubits) = m(self.unsure);
        let mut known = cmask | c.used;
        if self.sizes.0 != self.sizes.1 {
            known |= 1u128 << self.len_bit;
        }
        if (cbits | ubits) & !known != n & !known {
            mnem.push_str(".todo");
        }
        Ok((mnem, ops))
    }
}

/// The first form matching `n`, as the reference picks it.
pub fn find(n: u128) -> Option<(usize, &'static Form)> {
    FORMS.iter().enumerate().find(|(_, f)| f.matches(n))
}

fn ops(v: Vec<Op>) -> Vec<String> {
    v.into_iter().map(|o| o.text()).collect()
}

const ALU_UNSURE: (u32, u32, u32) = (18, 5, 0b10101);

// ---- moves -----------------------------------------------------------

fn mov_imm7(c: &mut Ctx) -> R<Asm> {
    let d = vdst(
        c,
        &VDst {
            bit: 4,
            x: None,
            c: None,
            ..VDST
        },
    )?;
    let i = c.f(8, 7);
    Ok(("mov_imm".into(), vec![d.text(), i.to_string()]))
}

fn mov_imm32(c: &mut Ctx) -> R<Asm> {
    let d = vdst(
        c,
        &VDst {
            l: Some(18),
            h: Some(60),
            ..VDST
        },
    )?;
    let i = c.merged(&[(8, 7), (33, 4), (42, 2), (48, 12), (25, 7)]);
    Ok(("mov_imm".into(), vec![d.text(), i.to_string()]))
}

fn get_sr(c: &mut Ctx) -> R<Asm> {
    let g = c.f(29, 3);
    let d = vdst(
        c,
        &VDst {
            l: Some(18),
            h: Some(60),
            ..VDST
        },
    )?;
    let sr = c.f(8, 7);
    Ok((
        "get_sr".into(),
        vec![g.to_string(), d.text(), format!("sr{sr}")],
    ))
}

// ---- device memory ---------------------------------------------------

const LS_MASK: [&str; 16] = [
    "", "x", "yw", "xyw", "zw", "xzw", "yzw", "xyzw", "y", "xy", "z", "xz", "yz", "xyz", "w", "xw",
];
const LS_TYPE: [&str; 4] = ["i16", "i32", "i8", "i32"];

/// The fields of a device load/store (the reference's
/// `DeviceLoadStoreInstructionDesc`; `hb` = 75 for loads, 73 for stores),
/// read once for its text ([`device_mem`]) and its facts
/// (`super::facts`).
pub(crate) struct DevMem {
    pub hb: u32,
    pub g: u32,
    pub ty: u32,
    pub mask: u32,
    pub rv: u32,
    pub bv: u32,
    pub br: u32,
    pub iv: u32,
    pub id: u32,
    pub iz: u32,
    pub ix: u32,
    pub is: u32,
    pub ih: u32,
    pub isx: u32,
    pub it: u32,
    pub shift: u32,
    pub off: u32,
}

impl DevMem {
    pub fn read(c: &mut Ctx, load: bool) -> DevMem {
        let hb = if load { 75 } else { 73 };
        let (g, ty, mask) = (c.f(70, 3), c.f(68, 2), c.f(64, 4));
        let rv = c.merged(&[(24, 1), (25, 7)]);
        let (bv, br) = (c.f(32, 7), c.f(hb + 26, 1));
        let iv = c.merged(&[(39, 1), (40, 7)]);
        let (id, iz) = if load {
            (c.f(47, 1), c.f(48, 1))
        } else {
            (c.f(48, 1), c.f(47, 1))
        };
        DevMem {
            hb,
            g,
            ty,
            mask,
            rv,
            bv,
            br,
            iv,
            id,
            iz,
            ix: c.f(49, 4),
            is: c.f(53, 1),
            ih: c.f(54, 1),
            isx: c.f(hb, 1),
            it: c.f(hb + 27, 2),
            shift: c.f(hb + 22, 3),
            off: c.f(hb + 2, 16),
        }
    }
    /// The immediate index (`it == 0`).
    pub fn index_imm(&self, load: bool) -> u32 {
        let (a, b) = if load {
            (self.id, self.iz)
        } else {
            (self.iz, self.id)
        };
        self.iv + (a << 8) + (b << 9) + (self.ix << 10) + (self.is << 14) + (self.ih << 15)
    }
    /// The index shift in bytes (`lsl N`).
    pub fn shift_bits(&self) -> u32 {
        if self.shift == 0 {
            4
        } else {
            self.shift - 1
        }
    }
}

fn device_mem(c: &mut Ctx, load: bool) -> R<Asm> {
    let m = DevMem::read(c, load);
    let DevMem {
        hb,
        g,
        ty,
        mask,
        rv,
        bv,
        br,
        iv,
        id,
        ix,
        is,
        ih,
        isx,
        it,
        off,
        ..
    } = m;
    let w = wait(c, 12, Some(15), true);
    let cache = c.f(hb + 19, 1);
    let q0 = c.f(20, 1);
    let q1 = if load { Some(c.f(74, 1)) } else { None };

    let ty_s = LS_TYPE[ty as usize];
    let count = LS_MASK[mask as usize].len() as u32;
    let r = match ty_s {
        "i8" => (0..count.div_ceil(2))
            .map(|i| reg_name(Kind::R16, rv + i))
            .collect::<R<Vec<_>>>()?,
        "i16" => (0..count)
            .map(|i| reg_name(Kind::R16, rv + i))
            .collect::<R<Vec<_>>>()?,
        _ => (0..count)
            .map(|i| reg_name(Kind::R32, (rv >> 1) + i))
            .collect::<R<Vec<_>>>()?,
    }
    .join("_");
    let base = if br != 0 {
        reg_name(Kind::R64, bv)?
    } else {
        reg_name(Kind::U64, bv << 1)?
    };
    if it == 3 {
        return Err(Bad("memory index type 3"));
    }
    if it != 0 && (ix != 0 || ih != 0) {
        return Err(Bad("memory index register with immediate bits"));
    }
    let index = match it {
        0 => m.index_imm(load).to_string(),
        _ => {
            let mut o = match (it, is) {
                (2, 1) => reg(Kind::U32, iv >> 1)?,
                (2, _) => reg(Kind::U16, iv)?,
                (_, 1) => reg(Kind::R32, iv >> 1)?,
                _ => reg(Kind::R16, iv)?,
            };
            if isx != 0 {
                o.flags.push("sx");
            }
            if id != 0 {
                o.flags.push("discard");
            }
            o.text()
        }
    };
    let sh = m.shift_bits();
    let sh = if sh != 0 {
        format!("lsl {sh}")
    } else {
        String::new()
    };
    let off = (off as u16 as i16).to_string();
    let mut v = vec![
        g.to_string(),
        ty_s.to_string(),
        LS_MASK[mask as usize].to_string(),
        r,
        base,
        index,
        sh,
        off,
        w,
        cache.to_string(),
        q0.to_string(),
    ];
    if let Some(q1) = q1 {
        v.push(q1.to_string());
    }
    Ok((if load { "device_load" } else { "device_store" }.into(), v))
}

// ---- bit operations --------------------------------------------------

fn bitop_mov(c: &mut Ctx) -> R<Asm> {
    let op = c.f(16, 3);
    let d = vdst(
        c,
        &VDst {
            l: Some(24),
            u: Some(26),
            ..VDST
        },
    )?;
    let ds = c.f(3, 1);
    let a = vsrc(
        c,
        &VSrc {
            bit: 9,
            l: Some(8),
            c: 15,
            d: 19,
            u: Some(27),
            ..VSrc::default()
        },
        Size::Fixed(ds),
        true,
        0,
    )?;
    let w = wait(c, 29, None, true);
    let name = match op {
        0 => "zero",
        1 => "mov",
        _ => "mov5",
    };
    if op == 1 {
        Ok(("mov".into(), vec![d.text(), a.text(), w]))
    } else {
        Ok((
            "bitop_unary".into(),
            vec![name.into(), d.text(), a.text(), w],
        ))
    }
}

fn bitop4(c: &mut Ctx) -> R<Asm> {
    let op = c.f(16, 3);
    let d = vdst(c, &VDST)?;
    let a = vsrc(
        c,
        &VSrc {
            bit: 9,
            s: Some(8),
            c: 15,
            d: 19,
            ..VSrc::default()
        },
        Size::Own,
        true,
        0,
    )?;
    let b = vsrc(
        c,
        &VSrc {
            bit: 25,
            s: Some(24),
            c: 31,
            d: 20,
            ..VSrc::default()
        },
        Size::Own,
        true,
        0,
    )?;
    let name = match op {
        2 => "and",
        3 => "xor",
        _ => "or",
    };
    Ok((name.into(), ops(vec![d, a, b])))
}

fn bitop10(c: &mut Ctx) -> R<Asm> {
    let tt = format!("{}{}{}{}", c.f(32, 1), c.f(33, 1), c.f(43, 1), c.f(16, 1));
    let d = vdst(
        c,
        &VDst {
            l: Some(34),
            h: Some(44),
            u: Some(38),
            z: Some(50),
            ..VDST
        },
    )?;
    let a = vsrc(c, &layout_l('A', 9, Some(35)), Size::Own, true, 0)?;
    let b = vsrc(c, &layout_l('B', 25, Some(36)), Size::Own, true, 0)?;
    let w = wait(c, 45, Some(61), true);
    let binary = match tt.as_str() {
        "0001" => Some("and"),
        "0010" => Some("andn1"),
        "0100" => Some("andn2"),
        "0110" => Some("xor"),
        "0111" => Some("or"),
        "1000" => Some("nor"),
        "1001" => Some("xnor"),
        "1011" => Some("orn1"),
        "1101" => Some("orn2"),
        "1110" => Some("nand"),
        _ => None,
    };
    if let Some(alias) = binary {
        return Ok((alias.into(), vec![d.text(), a.text(), b.text(), w]));
    }
    if b.text() == "r0l" {
        let unary = match tt.as_str() {
            "1010" => Some("not"),
            "0101" => Some("mov"),
            _ => None,
        };
        if let Some(alias) = unary {
            return Ok((alias.into(), vec![d.text(), a.text(), w]));
        }
    }
    Ok(("bitop".into(), vec![tt, d.text(), a.text(), b.text(), w]))
}

fn shape(size: u32) -> Shape {
    Shape {
        size,
        count: 1,
        float: false,
    }
}

fn unary_alu(c: &mut Ctx, name: &str) -> R<Asm> {
    let (dv, dr, ds, dc, di) = fdst_fields(
        c,
        &FDst {
            s: Some(50),
            r: Some(33),
            s_size: 1,
            ..FDst::default()
        },
    );
    let d = fdst_op(dv, dr, dc, di, shape(ds))?;
    let af = fsrc_fields(
        c,
        &FSrc {
            bit: 41,
            s: Some(51),
            d: Some(52),
            r: Some(58),
            ..FSrc::default()
        },
    );
    let a = fsrc_op(&af, shape(af.s))?;
    let w = wait(c, 12, Some(15), true);
    Ok((name.into(), vec![d.text(), a.text(), w]))
}

fn shift_op(c: &mut Ctx, name: &str) -> R<Asm> {
    let (dv, dr, ds, dc, di) = fdst_fields(
        c,
        &FDst {
            s: Some(59),
            r: Some(33),
            s_size: 1,
            ..FDst::default()
        },
    );
    let d = fdst_op(dv, dr, dc, di, shape(ds))?;
    let af = fsrc_fields(
        c,
        &FSrc {
            bit: 41,
            s: Some(60),
            d: Some(62),
            r: Some(69),
            sx: Some(70),
            ..FSrc::default()
        },
    );
    let a = fsrc_op(&af, shape(af.s))?;
    let bf = fsrc_fields(
        c,
        &FSrc {
            bit: 50,
            s: Some(61),
            d: Some(63),
            r: Some(71),
            ..FSrc::default()
        },
    );
    let b = fsrc_op(&bf, shape(bf.s))?;
    let w = wait(c, 12, Some(15), true);
    Ok((name.into(), vec![d.text(), a.text(), b.text(), w]))
}

fn bitfield(c: &mut Ctx, name: &str) -> R<Asm> {
    let (dv, dr, ds, dc, di) = fdst_fields(
        c,
        &FDst {
            s: Some(68),
            r: Some(33),
            s_size: 1,
            ..FDst::default()
        },
    );
    let d = fdst_op(dv, dr, dc, di, shape(ds))?;
    let af = fsrc_fields(
        c,
        &FSrc {
            bit: 59,
            s: Some(71),
            d: Some(74),
            r: Some(83),
            ..FSrc::default()
        },
    );
    let a = fsrc_op(&af, shape(af.s))?;
    let bf = fsrc_fields(
        c,
        &FSrc {
            bit: 41,
            s: Some(69),
            d: Some(72),
            r: Some(80),
            sx: Some(81),
            ..FSrc::default()
        },
    );
    let b = fsrc_op(&bf, shape(bf.s))?;
    let cf = fsrc_fields(
        c,
        &FSrc {
            bit: 50,
            s: Some(70),
            d: Some(73),
            r: Some(82),
            ..FSrc::default()
        },
    );
    let cc = fsrc_op(&cf, shape(cf.s))?;
    let mk = c.f(84, 5);
    let mk = if mk != 0 {
        format!("mask 0x{:X}", (1u64 << mk) - 1)
    } else {
        String::new()
    };
    let w = wait(c, 12, Some(15), true);
    Ok((
        name.into(),
        vec![d.text(), a.text(), b.text(), cc.text(), mk, w],
    ))
}

// ---- integer add -----------------------------------------------------

fn iadd_suffix(c: &mut Ctx, s: Option<u32>) -> String {
    let q1 = c.f(20, 1);
    let q2 = c.f(22, 1);
    let mut suffix = String::new();
    if s.unwrap_or(0) != 0 {
        suffix.push_str(".sat");
    }
    if q1 == 0 && q2 == 0 {
        suffix.push_str(".first");
    } else if q1 != q2 {
        if q1 != 0 {
            suffix.push_str(".q1");
        }
        if q2 != 0 {
            suffix.push_str(".q2");
        }
    }
    suffix
}

/// `kind`: 0 plain, 1 64-bit, 2 shifted.
fn iadd(c: &mut Ctx, kind: u32) -> R<Asm> {
    let p = c.f(7, 1);
    let (dv, dr, ds, dc, di) = fdst_fields(
        c,
        &FDst {
            s: Some(59),
            r: Some(33),
            s_size: 2,
            ..FDst::default()
        },
    );
    let s_size = if kind == 1 { 2 } else { 1 };
    let af = fsrc_fields(
        c,
        &FSrc {
            bit: 41,
            s: Some(61),
            s_size,
            d: Some(65),
            r: Some(72),
            sx: Some(73),
            ..FSrc::default()
        },
    );
    let bf = fsrc_fields(
        c,
        &FSrc {
            bit: 50,
            s: Some(63),
            s_size,
            d: Some(66),
            r: Some(74),
            sx: Some(75),
            ..FSrc::default()
        },
    );
    let mut extra = String::new();
    let mut sat = None;
    match kind {
        2 => {
            let sh = c.merged(&[(62, 1), (76, 1)]);
            extra = if sh != 0 {
                format!("lsl {sh}")
            } else {
                "lsl 4".into()
            };
        }
        0 => sat = Some(c.f(62, 1)),
        _ => {}
    }
    let w = wait(c, 12, Some(15), true);
    let suffix = iadd_suffix(c, sat);
    let d = fdst_op(dv, dr, dc, di, shape(ds))?;
    let a = fsrc_op(&af, shape(af.s))?;
    let b = fsrc_op(&bf, shape(bf.s))?;
    let base = if p != 0 { "iadd" } else { "isub" };
    let mut v = vec![d.text(), a.text(), b.text()];
    if kind == 2 {
        v.push(extra);
    }
    v.push(w);
    Ok((format!("{base}{suffix}"), v))
}

fn imadd(c: &mut Ctx) -> R<Asm> {
    let p = c.f(7, 1);
    let (dv, dr, ds, dc, di) = fdst_fields(
        c,
        &FDst {
            s: Some(68),
            r: Some(33),
            s_size: 2,
            ..FDst::default()
        },
    );
    let af = fsrc_fields(
        c,
        &FSrc {
            bit: 41,
            s: Some(70),
            d: Some(73),
            r: Some(81),
            sx: Some(82),
            ..FSrc::default()
        },
    );
    let bf = fsrc_fields(
        c,
        &FSrc {
            bit: 50,
            s: Some(71),
            d: Some(74),
            r: Some(83),
            sx: Some(84),
            ..FSrc::default()
        },
    );
    let cf = fsrc_fields(
        c,
        &FSrc {
            bit: 59,
            s: Some(72),
            d: Some(75),
            r: Some(85),
            sx: Some(86),
            ..FSrc::default()
        },
    );
    let s = c.f(87, 1);
    let w = wait(c, 12, Some(15), true);
    let suffix = iadd_suffix(c, Some(s));
    let d = fdst_op(dv, dr, dc, di, shape(ds))?;
    let a = fsrc_op(&af, shape(af.s))?;
    let b = fsrc_op(&bf, shape(bf.s))?;
    let cc = fsrc_op(&cf, shape(cf.s))?;
    let base = if p != 0 { "imadd" } else { "imsub" };
    Ok((
        format!("{base}{suffix}"),
        vec![d.text(), a.text(), b.text(), cc.text(), w],
    ))
}

// ---- float multiply/add ----------------------------------------------

fn fsuffix(s: u32, q0: u32) -> String {
    let mut x = String::new();
    if s != 0 {
        x.push_str(".sat");
    }
    if q0 != 0 {
        x.push_str(".first");
    }
    x
}

fn fsrc(c: &mut Ctx, o: VSrc) -> R<Op> {
    vsrc(c, &o, Size::Own, false, 0)
}

fn ffma4(c: &mut Ctx) -> R<Asm> {
    let d = vdst(c, &VDst { bit: 4, ..VDST })?;
    let a = fsrc(
        c,
        VSrc {
            bit: 9,
            s: Some(8),
            c: 15,
            d: 19,
            ..VSrc::default()
        },
    )?;
    let z = c.f(16, 1);
    let bs = c.f(24, 1);
    let b = vsrc(
        c,
        &VSrc {
            bit: 25,
            s: Some(24),
            c: 31,
            d: 20,
            ..VSrc::default()
        },
        Size::Fixed(if z != 0 { 1 } else { bs }),
        false,
        0,
    )?;
    let mut v = vec![d.text(), a.text(), b.text()];
    if z != 0 {
        v.insert(2, d.text());
    } else {
        v.insert(3, d.text());
    }
    Ok(("ffma".into(), v))
}

fn ffma6(c: &mut Ctx) -> R<Asm> {
    let d = vdst(
        c,
        &VDst {
            l: Some(34),
            ..VDST
        },
    )?;
    let a = fsrc(
        c,
        VSrc {
            bit: 9,
            l: Some(35),
            s: Some(8),
            c: 15,
            d: 19,
            ..VSrc::default()
        },
    )?;
    let b = fsrc(
        c,
        VSrc {
            bit: 25,
            l: Some(36),
            h: Some(38),
            s: Some(24),
            c: 31,
            d: 20,
            u: Some(37),
            ..VSrc::default()
        },
    )?;
    let cc = fsrc(
        c,
        VSrc {
            bit: 41,
            l: Some(40),
            c: 47,
            d: 39,
            ..VSrc::default()
        },
    )?;
    Ok(("ffma".into(), ops(vec![d, a, b, cc])))
}

fn ffma8(c: &mut Ctx) -> R<Asm> {
    let d = vdst(
        c,
        &VDst {
            l: Some(50),
            h: Some(60),
            u: Some(54),
            ..VDST
        },
    )?;
    let a = fsrc(c, layout('A', 9))?;
    let b = fsrc(
        c,
        VSrc {
            n: Some(59),
            ..layout('B', 25)
        },
    )?;
    let cc = fsrc(
        c,
        VSrc {
            s: Some(49),
            b: Some(34),
            ..layout('C', 41)
        },
    )?;
    let w = wait(c, 61, None, true);
    Ok((
        "ffma".into(),
        vec![d.text(), a.text(), b.text(), cc.text(), w],
    ))
}

fn ffma10(c: &mut Ctx) -> R<Asm> {
    let d = vdst(
        c,
        &VDst {
            l: Some(50),
            h: Some(60),
            z: Some(66),
            u: Some(54),
            b: Some(70),
            ..VDST
        },
    )?;
    let a = fsrc(
        c,
        VSrc {
            a: Some(80),
            b: Some(71),
            n: Some(65),
            ..layout('A', 9)
        },
    )?;
    let b = fsrc(
        c,
        VSrc {
            a: Some(81),
            b: Some(72),
            n: Some(59),
            ..layout('B', 25)
        },
    )?;
    let cc = fsrc(
        c,
        VSrc {
            s: Some(49),
            b: Some(34),
            ..layout('C', 41)
        },
    )?;
    let w = wait(c, 61, Some(77), true);
    let s = c.f(73, 1);
    let q0 = c.f(88, 1);
    Ok((
        format!("ffma{}", fsuffix(s, q0)),
        vec![d.text(), a.text(), b.text(), cc.text(), w],
    ))
}

fn fma4(c: &mut Ctx, name: &str) -> R<Asm> {
    let d = vdst(c, &VDst { bit: 4, ..VDST })?;
    let a = fsrc(
        c,
        VSrc {
            bit: 9,
            s: Some(8),
            c: 15,
            d: 19,
            ..VSrc::default()
        },
    )?;
    let b = fsrc(
        c,
        VSrc {
            bit: 25,
            s: Some(24),
            c: 31,
            d: 20,
            ..VSrc::default()
        },
    )?;
    Ok((name.into(), ops(vec![d, a, b])))
}

fn fma6(c: &mut Ctx, name: &str) -> R<Asm> {
    let d = vdst(
        c,
        &VDst {
            l: Some(34),
            h: Some(44),
            u: Some(38),
            ..VDST
        },
    )?;
    let a = fsrc(c, layout_l('A', 9, Some(35)))?;
    let b = fsrc(
        c,
        VSrc {
            n: Some(43),
            ..layout_l('B', 25, Some(36))
        },
    )?;
    let w = wait(c, 45, None, true);
    Ok((name.into(), vec![d.text(), a.text(), b.text(), w]))
}

fn fma8(c: &mut Ctx, name: &str, abs: bool) -> R<Asm> {
    let d = vdst(
        c,
        &VDst {
            l: Some(34),
            h: Some(44),
            u: Some(38),
            z: Some(50),
            b: Some(54),
            ..VDST
        },
    )?;
    let a = fsrc(
        c,
        VSrc {
            n: Some(49),
            b: Some(55),
            a: abs.then_some(64),
            ..layout_l('A', 9, Some(35))
        },
    )?;
    let b = fsrc(
        c,
        VSrc {
            n: Some(43),
            b: Some(56),
            a: abs.then_some(65),
            ..layout_l('B', 25, Some(36))
        },
    )?;
    let w = wait(c, 45, Some(61), true);
    let s = c.f(57, 1);
    Ok((
        format!("{name}{}", fsuffix(s, 0)),
        vec![d.text(), a.text(), b.text(), w],
    ))
}

// ---- float unary (SFU, rounding) -------------------------------------

/// `FUnaryDstDesc`: the size bit is 1 for 16-bit.
fn funary_with(c: &mut Ctx, name: &str, d: FDst, a: FSrc) -> R<Asm> {
    let (dv, dr, ds, dc, di) = fdst_fields(c, &d);
    let af = fsrc_fields(c, &a);
    let w = wait(c, 12, Some(15), true);
    let dsz = if ds != 0 { 0 } else { 1 };
    let dd = fdst_op(
        dv,
        dr,
        dc,
        di,
        Shape {
            size: dsz,
            count: 1,
            float: true,
        },
    )?;
    let aa = fsrc_op(
        &af,
        Shape {
            size: af.s,
            count: 1,
            float: true,
        },
    )?;
    Ok((name.into(), vec![dd.text(), aa.text(), w]))
}

fn funary(c: &mut Ctx, name: &str) -> R<Asm> {
    funary_with(
        c,
        name,
        FDst {
            s: Some(61),
            r: Some(33),
            i: Some(50),
            s_size: 1,
            ..FDst::default()
        },
        FSrc {
            bit: 41,
            i: Some(51),
            s: Some(52),
            d: Some(53),
            r: Some(62),
            a: Some(63),
            sx: Some(64),
            ..FSrc::default()
        },
    )
}

fn rcp(c: &mut Ctx) -> R<Asm> {
    funary_with(
        c,
        "rcp",
        FDst {
            s: Some(68),
            r: Some(33),
            i: Some(57),
            s_size: 1,
            ..FDst::default()
        },
        FSrc {
            bit: 41,
            i: Some(58),
            s: Some(59),
            d: Some(52),
            r: Some(69),
            a: Some(70),
            sx: Some(71),
            ..FSrc::default()
        },
    )
}

// ---- compare/select --------------------------------------------------

const CMPSEL_CC: [Option<&str>; 16] = [
    Some("fgtn"),
    Some("fltn"),
    Some("fgt"),
    Some("flt"),
    Some("ugt"),
    Some("ult"),
    Some("sgt"),
    Some("slt"),
    Some("feq"),
    None,
    Some("fge"),
    Some("fle"),
    None,
    None,
    Some("test"),
    Some("ieq"),
];

fn cc_name(v: u32) -> String {
    CMPSEL_CC
        .get(v as usize)
        .copied()
        .flatten()
        .map_or_else(|| v.to_string(), str::to_string)
}

fn invert(cc: &str) -> String {
    match cc {
        "ugt" => "ule".into(),
        "ult" => "uge".into(),
        "sgt" => "sle".into(),
        "slt" => "sge".into(),
        "feq" => "fne".into(),
        "test" => "testz".into(),
        "ieq" => "ine".into(),
        other => format!("!{other}"),
    }
}

/// Reads a variable source's fields without printing (for the cmpsel6
/// "cursed" check): (u, c, s, n).
fn peek(c: &Ctx, o: &VSrc) -> (u32, u32, u32, u32) {
    let b = |off: Option<u32>, d: u32| off.map_or(d, |o| ((c.n >> o) & 1) as u32);
    (b(o.u, 0), ((c.n >> o.c) & 1) as u32, b(o.s, 1), b(o.n, 0))
}

fn cmpsel6(c: &mut Ctx) -> R<Asm> {
    let di = c.f(18, 1);
    let cc = c.f(32, 3);
    let dst = VDst {
        l: Some(3),
        s: Some(17),
        u: Some(38),
        h: Some(44),
        ..VDST
    };
    let ds = ((c.n >> 17) & 1) as u32;
    let ao = layout_l('A', 9, Some(35));
    let bo = VSrc {
        n: Some(43),
        ..layout_l('B', 25, Some(36))
    };
    let cmp_int = cc & 4 != 0;
    let d = vdst(c, &dst)?;
    let a = vsrc(c, &ao, Size::Own, cmp_int, 0)?;
    let b = vsrc(c, &bo, Size::Own, cmp_int, 0)?;
    let w = wait(c, 45, None, true);
    let (au, ac, as_, _) = peek(c, &ao);
    let (bu, bc, bs, bn) = peek(c, &bo);
    let a_imm = au != 0 && ac != 0;
    let b_imm = bu != 0 && bc != 0;
    let mut cursed = (as_ != ds && !a_imm) || (bs != ds && !b_imm);
    if cmp_int != (di != 0) && (bn != 0 || a_imm || b_imm) {
        cursed = true;
    }
    if cursed {
        let sa = vsrc(c, &ao, Size::Fixed(ds), di != 0, 0)?;
        let sb = vsrc(c, &bo, Size::Fixed(ds), di != 0, 0)?;
        let name = CMPSEL_CC[cc as usize].unwrap_or("");
        Ok((
            "cmpsel".into(),
            vec![
                name.into(),
                d.text(),
                a.text(),
                b.text(),
                sa.text(),
                sb.text(),
                w,
            ],
        ))
    } else {
        let mm = [
            "fmax", "fmin", "fmaxsse", "fminsse", "umax", "umin", "smax", "smin",
        ][cc as usize];
        Ok((mm.into(), vec![d.text(), a.text(), b.text(), w]))
    }
}

fn cmpsel8(c: &mut Ctx) -> R<Asm> {
    let di = c.f(18, 1);
    let v = c.merged(&[(48, 3), (34, 1), (32, 1)]);
    let base = cc_name(v & 0xf);
    let known = CMPSEL_CC[(v & 0xf) as usize].is_some();
    let ccs = if !known {
        v.to_string()
    } else if v & 0x10 != 0 {
        base
    } else {
        invert(&base)
    };
    let cmp_int = (v & 0xf) & 4 != 0;
    let ds = ((c.n >> 17) & 1) as u32;
    let d = vdst(
        c,
        &VDst {
            l: Some(3),
            s: Some(17),
            u: Some(54),
            h: Some(60),
            ..VDST
        },
    )?;
    let a = vsrc(c, &layout('A', 9), Size::Own, cmp_int, 0)?;
    let b = vsrc(
        c,
        &VSrc {
            n: Some(59),
            ..layout('B', 25)
        },
        Size::Own,
        cmp_int,
        0,
    )?;
    let x = vsrc(c, &layout('X', 41), Size::Fixed(ds), di != 0, 0)?;
    let w = wait(c, 61, None, true);
    Ok((
        "cmov".into(),
        vec![ccs, d.text(), a.text(), b.text(), x.text(), w],
    ))
}

fn cmpsel_wide(c: &mut Ctx, fourteen: bool) -> R<Asm> {
    let di = c.f(18, 1);
    let v = c.merged(&[(48, 3), (34, 1)]);
    let cmp_int = (v & 0xf) & 4 != 0;
    let ds = ((c.n >> 17) & 1) as u32;
    let d = vdst(
        c,
        &VDst {
            l: Some(3),
            s: Some(17),
            u: Some(54),
            h: Some(60),
            z: fourteen.then_some(82),
            ..VDST
        },
    )?;
    let (ao, bo) = if fourteen {
        (
            VSrc {
                a: Some(96),
                b: Some(87),
                n: Some(65),
                ..layout('A', 9)
            },
            VSrc {
                a: Some(97),
                b: Some(88),
                n: Some(59),
                ..layout('B', 25)
            },
        )
    } else {
        (
            VSrc {
                n: Some(65),
                ..layout('A', 9)
            },
            VSrc {
                n: Some(59),
                ..layout('B', 25)
            },
        )
    };
    let a = vsrc(c, &ao, Size::Own, cmp_int, 0)?;
    let b = vsrc(c, &bo, Size::Own, cmp_int, 0)?;
    let x = vsrc(c, &layout('X', 41), Size::Fixed(ds), di != 0, 0)?;
    let y = vsrc(c, &layout('Y', 73), Size::Fixed(ds), di != 0, 0)?;
    let w = if fourteen {
        wait(c, 61, Some(93), true)
    } else {
        wait(c, 61, None, true)
    };
    Ok((
        "cmpsel".into(),
        vec![
            cc_name(v),
            d.text(),
            a.text(),
            b.text(),
            x.text(),
            y.text(),
            w,
        ],
    ))
}

// ---- conversions, packing --------------------------------------------

fn convert_f2i(c: &mut Ctx) -> R<Asm> {
    let mode = c.f(62, 3);
    let (dv, dr, ds, dc, di) = fdst_fields(
        c,
        &FDst {
            s: Some(50),
            r: Some(33),
            s_size: 1,
            ..FDst::default()
        },
    );
    let af = fsrc_fields(
        c,
        &FSrc {
            bit: 41,
            i: Some(51),
            s: Some(52),
            d: Some(53),
            r: Some(59),
            a: Some(60),
            sx: Some(61),
            ..FSrc::default()
        },
    );
    let w = wait(c, 12, Some(15), true);
    let d = fdst_op(dv, dr, dc, di, shape(ds))?;
    let a = fsrc_op(
        &af,
        Shape {
            size: af.s,
            count: 1,
            float: true,
        },
    )?;
    let names = [
        "f_to_u32",
        "f_to_s8",
        "f_to_u8",
        "f_to_s16",
        "f_to_u16",
        "f_to_s32",
        "f_to_u8_6",
        "f_to_s16_7",
    ];
    Ok((
        "convert".into(),
        vec![names[mode as usize].into(), d.text(), a.text(), w],
    ))
}

fn convert_i2f(c: &mut Ctx) -> R<Asm> {
    let mode = c.merged(&[(52, 1), (62, 1)]);
    let (dv, dr, ds, dc, di) = fdst_fields(
        c,
        &FDst {
            s: Some(50),
            r: Some(33),
            s_size: 1,
            ..FDst::default()
        },
    );
    let af = fsrc_fields(
        c,
        &FSrc {
            bit: 41,
            s: Some(51),
            d: Some(53),
            r: Some(61),
            ..FSrc::default()
        },
    );
    let rnd = c.f(60, 1);
    let w = wait(c, 12, Some(15), true);
    let m = if af.s != 0 {
        ["u32_to_f", "u32_to_f_1", "s32_to_f", "s32_to_f_1"][mode as usize]
    } else {
        ["u16_to_f", "u8_to_f", "s16_to_f", "s8_to_f"][mode as usize]
    };
    let d = fdst_op(dv, dr, dc, di, shape(ds))?;
    let a = fsrc_op(&af, shape(af.s))?;
    Ok((
        "convert".into(),
        vec![
            m.into(),
            d.text(),
            a.text(),
            if rnd != 0 { "rtz" } else { "rte" }.into(),
            w,
        ],
    ))
}

const TYPES_RG: [&str; 8] = [
    "rg8unorm_linear_srgb",
    "rg8unorm_srgb",
    "rg16snorm",
    "rg8snorm",
    "rg16unorm",
    "rg8unorm_srgb_linear",
    "rg8unorm",
    "rg8snorm_7",
];
const TYPES_R: [&str; 8] = [
    "r8unorm_0",
    "r8unorm_srgb",
    "r16snorm",
    "r8snorm",
    "r16unorm",
    "r8unorm_srgb_5",
    "r8unorm",
    "r8snorm_7",
];
const FLOAT_UNPACK: [&str; 8] = [
    "rgb10a2_unorm_to_half",
    "rgb10a2_unorm_to_float",
    "rgb9e5_to_float",
    "rg11b10f_to_float",
    "rgb9e5_to_half",
    "rg11b10f_to_half",
    "rgb9e5_to_half_6",
    "rg11b10f_to_half_7",
];

fn unpack_unorm(c: &mut Ctx) -> R<Asm> {
    let mode = c.f(60, 3);
    let n = c.f(63, 1);
    let (dv, dr, ds, dc, di) = fdst_fields(
        c,
        &FDst {
            s: Some(50),
            s_size: 1,
            ..FDst::default()
        },
    );
    let _ = ds;
    let af = fsrc_fields(
        c,
        &FSrc {
            bit: 41,
            d: Some(52),
            s: Some(51),
            ..FSrc::default()
        },
    );
    let w = wait(c, 12, Some(15), true);
    let count = 1 + n;
    let m = if count > 1 {
        TYPES_RG[mode as usize]
    } else {
        TYPES_R[mode as usize]
    };
    let dcount = if n != 0 { 2 } else { 1 };
    let d = fdst_op(
        dv,
        dr,
        dc,
        di,
        Shape {
            size: ds,
            count: dcount,
            float: false,
        },
    )?;
    let acount = if af.s != 0 { 2 } else { 1 };
    let a = fsrc_op(
        &af,
        Shape {
            size: 0,
            count: acount,
            float: false,
        },
    )?;
    Ok(("unpack".into(), vec![m.into(), d.text(), a.text(), w]))
}

fn unpack_float(c: &mut Ctx) -> R<Asm> {
    let mode = c.merged(&[(49, 2), (58, 1)]);
    let (dv, dr, _ds, dc, di) = fdst_fields(
        c,
        &FDst {
            no_l: true,
            r: Some(32),
            ..FDst::default()
        },
    );
    let af = fsrc_fields(
        c,
        &FSrc {
            bit: 41,
            no_l: true,
            d: Some(52),
            s: Some(51),
            ..FSrc::default()
        },
    );
    let w = wait(c, 12, Some(15), true);
    let name = FLOAT_UNPACK[mode as usize];
    let size = if name.contains("float") { 1 } else { 0 };
    let count = if name.starts_with("rgb10a2") { 4 } else { 3 };
    let d = fdst_op(
        dv,
        dr,
        dc,
        di,
        Shape {
            size,
            count,
            float: false,
        },
    )?;
    let a = fsrc_op(&af, shape(af.s))?;
    Ok(("unpack".into(), vec![name.into(), d.text(), a.text(), w]))
}

fn pack_unorm(c: &mut Ctx) -> R<Asm> {
    let mode = c.f(77, 3);
    let (dv, dr, _ds, dc, di) = fdst_fields(
        c,
        &FDst {
            r: Some(33),
            ..FDst::default()
        },
    );
    let af = fsrc_fields(
        c,
        &FSrc {
            bit: 41,
            d: Some(63),
            i: Some(59),
            s: Some(60),
            r: Some(70),
            sx: Some(72),
            a: Some(71),
            ..FSrc::default()
        },
    );
    let bf = fsrc_fields(
        c,
        &FSrc {
            bit: 50,
            d: Some(64),
            i: Some(61),
            s: Some(62),
            r: Some(73),
            sx: Some(76),
            a: Some(74),
            u: Some(75),
            ..FSrc::default()
        },
    );
    let w = wait(c, 12, Some(15), true);
    let two = bf.r != 0 || bf.u != 0;
    let m = if two {
        TYPES_RG[mode as usize]
    } else {
        TYPES_R[mode as usize]
    };
    let dcount = if bf.r == 0 && bf.u == 0 {
        1
    } else if TYPES_RG[mode as usize].starts_with("rg16") {
        2
    } else {
        1
    };
    let d = fdst_op(
        dv,
        dr,
        dc,
        di,
        Shape {
            size: 0,
            count: dcount,
            float: false,
        },
    )?;
    let a = fsrc_op(
        &af,
        Shape {
            size: af.s,
            count: 1,
            float: true,
        },
    )?;
    let b = fsrc_op(
        &bf,
        Shape {
            size: bf.s,
            count: 1,
            float: true,
        },
    )?;
    let mut v = vec![m.to_string(), d.text(), a.text(), b.text(), w];
    if !two && v[3] == "0.0" {
        v.remove(3);
    }
    Ok(("pack".into(), v))
}

fn pack_float(c: &mut Ctx) -> R<Asm> {
    let mode = c.f(107, 2);
    let (dv, dr, ds, dc, di) = fdst_fields(
        c,
        &FDst {
            r: Some(33),
            s: Some(77),
            s_size: 1,
            ..FDst::default()
        },
    );
    let mut srcs = Vec::new();
    for (bit, i, s, d, r, a, n) in [
        (41, 78, 79, 86, 95, 96, 97),
        (50, 80, 81, 87, 98, 99, 100),
        (59, 82, 83, 88, 101, 102, 103),
        (68, 84, 85, 89, 104, 105, 106),
    ] {
        srcs.push(fsrc_fields(
            c,
            &FSrc {
                bit,
                i: Some(i),
                s: Some(s),
                d: Some(d),
                r: Some(r),
                a: Some(a),
                sx: Some(n),
                ..FSrc::default()
            },
        ));
    }
    let w = wait(c, 12, Some(15), true);
    let names = ["rgb9e5", "rg11b10f", "rgb10a2_unorm", "rg11b10f_3"];
    let d = fdst_op(dv, dr, dc, di, shape(ds))?;
    let mut v = vec![names[mode as usize].to_string(), d.text()];
    for f in &srcs {
        v.push(
            fsrc_op(
                f,
                Shape {
                    size: f.s,
                    count: 1,
                    float: true,
                },
            )?
            .text(),
        );
    }
    v.push(w);
    if mode != 2 && v[5] == "0.0" {
        v.remove(5);
    }
    Ok(("pack".into(), v))
}

// ---- stop, nop, wait -------------------------------------------------

fn stop(_: &mut Ctx) -> R<Asm> {
    Ok(("stop".into(), vec![]))
}
fn nop(_: &mut Ctx) -> R<Asm> {
    Ok(("nop".into(), vec![]))
}
fn wait_insn(c: &mut Ctx) -> R<Asm> {
    Ok(("wait".into(), vec![wait(c, 10, Some(13), false)]))
}

macro_rules! form {
    ($class:expr, $consts:expr, $unsure:expr, $size:expr, $dec:expr) => {
        Form {
            class: $class,
            consts: $consts,
            unsure: $unsure,
            sizes: ($size, $size),
            len_bit: 127,
            also: None,
            decode: $dec,
        }
    };
}

fn op_in_mov(n: u128) -> bool {
    matches!((n >> 16) & 7, 0 | 1 | 5)
}
fn op_in_bitop4(n: u128) -> bool {
    matches!((n >> 16) & 7, 2..=4)
}

/// The 57 forms, in the reference's order (one row per line: a table).
#[rustfmt::skip]
pub static FORMS: [Form; 57] = [
    form!("MovImm7InstructionDesc", &[(0, 3, 4), (15, 1, 0)], &[], 2, mov_imm7),
    form!("MovImm32InstructionDesc", &[(0, 3, 4), (15, 1, 1), (16, 1, 0), (17, 1, 1), (20, 1, 0)], &[], 8, mov_imm32),
    Form {
        class: "MovFromSrInstructionDesc",
        consts: &[(0, 3, 4), (15, 1, 1), (20, 1, 1)],
        unsure: &[(24, 4, 6)],
        sizes: (4, 8),
        len_bit: 16,
        also: None,
        decode: get_sr,
    },
    form!("DeviceLoadInstructionDesc", &[(0, 12, 0x67)], &[(18, 2, 1), (21, 3, 2)], 14, |c| device_mem(c, true)),
    form!("DeviceStoreInstructionDesc", &[(0, 12, 0xe7)], &[(18, 2, 1), (21, 3, 2)], 14, |c| device_mem(c, false)),
    Form { class: "BitOpMovInstructionDesc", consts: &[(0, 3, 3)], unsure: &[], sizes: (4, 4), len_bit: 127, also: Some(op_in_mov), decode: bitop_mov },
    Form { class: "BitOp4InstructionDesc", consts: &[(0, 3, 3)], unsure: &[], sizes: (4, 4), len_bit: 127, also: Some(op_in_bitop4), decode: bitop4 },
    form!("BitOp10InstructionDesc", &[(0, 3, 3), (17, 2, 3)], &[], 10, bitop10),
    form!("BitRevInstructionDesc", &[(0, 12, 0x4a7)], &[(54, 1, 1), ALU_UNSURE], 8, |c| unary_alu(c, "bitrev")),
    form!("PopcountInstructionDesc", &[(0, 12, 0x527)], &[(54, 1, 1), ALU_UNSURE], 8, |c| unary_alu(c, "popcount")),
    form!("FFSInstructionDesc", &[(0, 12, 0x5a7)], &[(54, 1, 1), ALU_UNSURE], 8, |c| unary_alu(c, "ffs")),
    form!("BitfieldInsertInstructionDesc", &[(0, 12, 0x027)], &[(76, 1, 1), ALU_UNSURE], 12, |c| bitfield(c, "bfi")),
    form!("BitfieldExtractInstructionDesc", &[(0, 12, 0x0a7)], &[(76, 1, 1), ALU_UNSURE], 12, |c| bitfield(c, "bfeil")),
    form!("ExtractInstructionDesc", &[(0, 12, 0x127)], &[(76, 1, 1), ALU_UNSURE], 12, |c| bitfield(c, "extr")),
    form!("ShlhiInstructionDesc", &[(0, 12, 0x227)], &[(76, 1, 1), ALU_UNSURE], 12, |c| bitfield(c, "shlhi")),
    form!("ShrhiInstructionDesc", &[(0, 12, 0x2a7)], &[(76, 1, 1), ALU_UNSURE], 12, |c| bitfield(c, "shrhi")),
    form!("ArithmeticShiftRightInstructionDesc", &[(0, 12, 0x1a7)], &[(65, 1, 1), ALU_UNSURE], 10, |c| shift_op(c, "asr")),
    form!("ArithmeticShiftRightHighInstructionDesc", &[(0, 12, 0x3a7)], &[(65, 1, 1), ALU_UNSURE], 10, |c| shift_op(c, "asrh")),
    form!("IAddInstructionDesc", &[(0, 7, 0x1f), (8, 1, 1), (60, 1, 0), (64, 1, 1), (18, 1, 1), (68, 1, 1)], &[], 10, |c| iadd(c, 0)),
    form!("IAdd64InstructionDesc", &[(0, 7, 0x1f), (8, 1, 1), (59, 2, 2), (18, 1, 1), (68, 1, 1)], &[], 10, |c| iadd(c, 1)),
    form!("IAddShiftedInstructionDesc", &[(0, 7, 0x1f), (8, 1, 1), (60, 1, 0), (64, 1, 0), (18, 1, 1), (68, 1, 1)], &[], 10, |c| iadd(c, 2)),
    form!("IMAddSubInstructionDesc", &[(0, 7, 0x1f), (8, 1, 0), (18, 1, 1), (77, 1, 1)], &[], 12, imadd),
    form!("FFMA4InstructionDesc", &[(0, 3, 1), (17, 1, 1), (18, 1, 0)], &[], 4, ffma4),
    form!("FFMA6InstructionDesc", &[(0, 3, 1), (16, 2, 2), (18, 1, 1), (32, 2, 0)], &[], 6, ffma6),
    form!("FFMA8InstructionDesc", &[(0, 3, 1), (16, 2, 2), (18, 1, 1), (32, 2, 1)], &[], 8, ffma8),
    Form {
        class: "FFMA10InstructionDesc",
        consts: &[(0, 3, 1), (16, 2, 2), (18, 1, 1), (33, 1, 1)],
        unsure: &[],
        sizes: (10, 12),
        len_bit: 32,
        also: None,
        decode: ffma10,
    },
    form!("FMul4InstructionDesc", &[(0, 3, 1), (16, 2, 1), (18, 1, 0)], &[], 4, |c| fma4(c, "fmul")),
    form!("FMul6InstructionDesc", &[(0, 3, 1), (16, 2, 1), (18, 1, 1), (32, 2, 0)], &[], 6, |c| fma6(c, "fmul")),
    form!("FMul8InstructionDesc", &[(0, 3, 1), (16, 2, 1), (18, 1, 1), (32, 2, 1)], &[], 8, |c| fma8(c, "fmul", false)),
    form!("FMul12InstructionDesc", &[(0, 3, 1), (16, 2, 1), (18, 1, 1), (32, 2, 2)], &[], 12, |c| fma8(c, "fmul", true)),
    form!("FAdd4InstructionDesc", &[(0, 3, 1), (16, 2, 0), (18, 1, 0)], &[], 4, |c| fma4(c, "fadd")),
    form!("FAdd6InstructionDesc", &[(0, 3, 1), (16, 2, 0), (18, 1, 1), (32, 2, 0)], &[], 6, |c| fma6(c, "fadd")),
    form!("FAdd8InstructionDesc", &[(0, 3, 1), (16, 2, 0), (18, 1, 1), (32, 2, 1)], &[], 8, |c| fma8(c, "fadd", false)),
    form!("FAdd10InstructionDesc", &[(0, 3, 1), (16, 2, 0), (18, 1, 1), (32, 2, 2)], &[], 10, |c| fma8(c, "fadd", true)),
    form!("RintInstructionDesc", &[(0, 12, 0x02f), (65, 2, 0)], &[(55, 1, 1), ALU_UNSURE], 10, |c| funary(c, "rint")),
    form!("FloorInstructionDesc", &[(0, 12, 0x02f), (65, 2, 1)], &[(55, 1, 1), ALU_UNSURE], 10, |c| funary(c, "floor")),
    form!("CeilInstructionDesc", &[(0, 12, 0x02f), (65, 2, 2)], &[(55, 1, 1), ALU_UNSURE], 10, |c| funary(c, "ceil")),
    form!("TruncInstructionDesc", &[(0, 12, 0x02f), (65, 2, 3)], &[(55, 1, 1), ALU_UNSURE], 10, |c| funary(c, "trunc")),
    form!("ReciprocalInstructionDesc", &[(0, 12, 0x0af)], &[(62, 1, 1), ALU_UNSURE], 10, rcp),
    form!("RsqrtInstructionDesc", &[(0, 12, 0x1af)], &[(55, 1, 1), ALU_UNSURE], 10, |c| funary(c, "rsqrt")),
    form!("RsqrtSpecialInstructionDesc", &[(0, 12, 0x12f)], &[(55, 1, 1), ALU_UNSURE], 10, |c| funary(c, "rsqrt_special")),
    form!("SincInstructionDesc", &[(0, 12, 0x32f)], &[(55, 1, 1), ALU_UNSURE], 10, |c| funary(c, "sinc")),
    form!("Log2InstructionDesc", &[(0, 12, 0x22f)], &[(55, 1, 1), ALU_UNSURE], 10, |c| funary(c, "log2")),
    form!("Exp2InstructionDesc", &[(0, 12, 0x2af)], &[(55, 1, 1), ALU_UNSURE], 10, |c| funary(c, "exp2")),
    form!("CmpSel6InstructionDesc", &[(0, 3, 2), (16, 1, 0)], &[], 6, cmpsel6),
    form!("CmpSel8InstructionDesc", &[(0, 3, 2), (16, 1, 1), (33, 1, 0)], &[], 8, cmpsel8),
    form!("CmpSel10InstructionDesc", &[(0, 3, 2), (16, 1, 1), (32, 2, 2)], &[], 10, |c| cmpsel_wide(c, false)),
    form!("CmpSel14InstructionDesc", &[(0, 3, 2), (16, 1, 1), (32, 2, 3)], &[], 14, |c| cmpsel_wide(c, true)),
    form!("ConvertF2IInstructionDesc", &[(0, 12, 0x727)], &[(65, 1, 1), (55, 1, 1), ALU_UNSURE], 10, convert_f2i),
    form!("ConvertI2FInstructionDesc", &[(0, 12, 0x7a7)], &[(55, 1, 1), ALU_UNSURE], 8, convert_i2f),
    form!("UnpackUnormInstructionDesc", &[(0, 12, 0x417)], &[(56, 4, 0b1010), ALU_UNSURE], 8, unpack_unorm),
    form!("UnpackFloatInstructionDesc", &[(0, 12, 0x627)], &[(59, 1, 1), (54, 1, 1), ALU_UNSURE], 8, unpack_float),
    form!("PackUnormInstructionDesc", &[(0, 12, 0x497)], &[ALU_UNSURE, (66, 1, 1)], 10, pack_unorm),
    form!("PackFloatInstructionDesc", &[(0, 12, 0x6a7)], &[ALU_UNSURE, (91, 1, 1)], 14, pack_float),
    form!("StopInstructionDesc", &[(0, 4, 0xe), (4, 28, 0)], &[], 4, stop),
    form!("NopInstructionDesc", &[(0, 4, 6), (4, 12, 0)], &[], 2, nop),
    form!("WaitInstructionDesc", &[(0, 4, 6), (4, 6, 0), (16, 16, 6), (32, 16, 6), (48, 16, 6)], &[], 8, wait_insn),
];
