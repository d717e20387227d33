//! The typed instruction model: what the decoder produces and every later
//! stage (formatter, analysis, timing, assembler) consumes.
//!
//! An [`Instruction`] is a small `Copy`-free value with a compact operand
//! store (7 operands inline; only the rare wider forms and the ~2% of
//! instructions with implicit operands allocate). Operands carry their
//! *role* (def/use), register file, element width and count, so liveness and
//! timing never re-parse text.

/// Maximum number of operands any G13 form declares (some print as nothing;
/// texture forms declare 16).
pub const MAX_OPERANDS: usize = 16;
/// Maximum number of implicit (unprinted) operands.
pub const MAX_IMPLICIT: usize = 2;

/// Whether an operand is read, written, or both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Role {
    #[default]
    Use,
    Def,
    /// Read and written (e.g. atomic compare-exchange data, r0l exec stack).
    UseDef,
}

impl Role {
    pub fn is_def(self) -> bool {
        matches!(self, Role::Def | Role::UseDef)
    }
    pub fn is_use(self) -> bool {
        matches!(self, Role::Use | Role::UseDef)
    }
}

/// Register file of a register operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegFile {
    /// General-purpose registers `r0..r127` (256 16-bit halves).
    Gpr,
    /// Uniform registers `u0..u255` (512 16-bit halves).
    Uniform,
}

/// Element width of a register operand, as printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Width {
    /// `r0l` / `r0h`
    W16,
    /// `r0`
    W32,
    /// `r0_r1` printed as one 64-bit register
    W64,
}

impl Width {
    /// Number of 16-bit halves one element occupies.
    pub fn halves(self) -> u16 {
        match self {
            Width::W16 => 1,
            Width::W32 => 2,
            Width::W64 => 4,
        }
    }
    pub fn bits(self) -> u32 {
        match self {
            Width::W16 => 16,
            Width::W32 => 32,
            Width::W64 => 64,
        }
    }
}

/// Operand modifier flags (bit set). Printing order follows applegpu: flags
/// are appended in the order the decoder adds them, which for every G13 form
/// is: `cache`/`discard` (hint), then `sx`, then `abs`, then `neg`.
pub mod flags {
    pub const CACHE: u8 = 1 << 0;
    pub const DISCARD: u8 = 1 << 1;
    pub const ABS: u8 = 1 << 2;
    pub const NEG: u8 = 1 << 3;
    pub const SX: u8 = 1 << 4;
}

/// A register operand: `count` consecutive elements of `width`, starting at
/// 16-bit half-register index `half` of `file`.
///
/// Examples: `r3` = {Gpr, W32, half 6, count 1}; `r0h` = {Gpr, W16, half 1,
/// count 1}; `r4_r5_r6_r7` = {Gpr, W32, half 8, count 4}; `u2_u3` as a 64-bit
/// base = {Uniform, W64, half 4, count 1}; `r0h_r1l` = {Gpr, W16, half 1, count 2}.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reg {
    pub file: RegFile,
    pub width: Width,
    /// First 16-bit half-register index.
    pub half: u16,
    /// Number of consecutive elements (tuple/vector length), at least 1.
    pub count: u8,
    /// [`flags`] bits.
    pub flags: u8,
}

impl Reg {
    pub fn gpr(width: Width, half: u16) -> Reg {
        Reg {
            file: RegFile::Gpr,
            width,
            half,
            count: 1,
            flags: 0,
        }
    }
    pub fn uniform(width: Width, half: u16) -> Reg {
        Reg {
            file: RegFile::Uniform,
            width,
            half,
            count: 1,
            flags: 0,
        }
    }
    /// Number of 16-bit halves this operand spans.
    pub fn halves(&self) -> u16 {
        self.width.halves() * self.count as u16
    }
    /// Half-open range of half-register indices spanned.
    pub fn half_range(&self) -> std::ops::Range<u32> {
        let s = self.half as u32;
        s..s + self.halves() as u32
    }
    /// The half-registers an allocator reserves for this operand: its
    /// [`Reg::half_range`], except that a GPR vector whose size in halves is
    /// not a power of two (`r4_r5_r6`, a 3-component load or store: 6
    /// halves) and whose first half is aligned to the next power of two
    /// (8) reserves that aligned group (halves 8..16, `r4`..`r7`).
    ///
    /// Source: Mesa's register allocator (src/asahi/compiler/
    /// agx_register_allocate.c, `agx_ra`): every SSA value gets
    /// `ncomps = util_next_power_of_two(size in halves)` registers, and
    /// `pick_regs` places it at a multiple of that count (`align = count`);
    /// the shader's register count is the highest reserved register + 1
    /// (`reg_count`, `max_reg`), which is what Mesa's `regs` statistic and
    /// the occupancy read. The hardware itself does not write the padding:
    /// `agx_write_registers` gives a `device_load` `popcount(mask) × size`
    /// registers (texture loads/samples clobber all 4: implicit defs,
    /// `group_mem::touched_data`), so liveness
    /// keeps [`Reg::half_range`] and only the register footprint
    /// (`highest_half_index`) counts this range. A vector at an unaligned
    /// base was not placed by such an allocator and reserves what it spans.
    /// docs/analysis.md, "Register footprint of vectors".
    pub fn allocated_half_range(&self) -> std::ops::Range<u32> {
        let r = self.half_range();
        if self.file != RegFile::Gpr || self.count < 2 {
            return r;
        }
        let group = (r.len() as u32).next_power_of_two();
        if r.start.is_multiple_of(group) {
            r.start..r.start + group
        } else {
            r
        }
    }
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

/// An 8-byte value stored with 4-byte alignment, so that [`OperandKind`] is
/// 12 bytes and [`Operand`] 16 (instructions are stored by the million).
/// Read with [`Packed::get`]; compares and prints as the value.
#[derive(Clone, Copy)]
#[repr(C, packed(4))]
pub struct Packed<T: Copy>(T);

impl<T: Copy> Packed<T> {
    pub const fn new(v: T) -> Packed<T> {
        Packed(v)
    }
    #[inline]
    pub fn get(self) -> T {
        self.0
    }
}

impl<T: Copy + PartialEq> PartialEq for Packed<T> {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl<T: Copy + std::fmt::Debug> std::fmt::Debug for Packed<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = self.0;
        v.fmt(f)
    }
}

/// What an operand is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OperandKind {
    /// A general-purpose or uniform register (or tuple of them).
    Reg(Reg),
    /// An integer immediate, printed in decimal (applegpu `Immediate`).
    /// Build with [`OperandKind::imm`], read with [`OperandKind::imm_value`].
    Imm(Packed<i64>),
    /// An integer immediate printed in hexadecimal `0x..` form.
    HexImm(Packed<u64>),
    /// An 8-bit encoded float immediate, printed as Python prints the float.
    FloatImm(u8),
    /// A branch/call target: byte offset relative to the instruction's own
    /// address. Printed as `0x%X` of the absolute address.
    Target(i32),
    /// Special register `srN` (name printed in parentheses when known).
    SpecialReg(u16),
    /// Texture state slot `tsN`.
    TexState(u16),
    /// Sampler state slot `ssN`.
    SamplerState(u16),
    /// Coefficient register `cfN`.
    Cf(u16),
    /// A binary field printed as `0b` and `bits` binary digits.
    Binary { value: u32, bits: u8 },
    /// A keyword: condition code, memory format, mask, mode... (`unsigned`,
    /// `xyzw`, `i32`, `ult`, `lsl 2` ...). A thin pointer to the spelling;
    /// build with [`OperandKind::keyword`], read with
    /// [`OperandKind::keyword_text`].
    Keyword(Packed<&'static &'static str>),
}

impl OperandKind {
    /// An integer immediate.
    pub const fn imm(v: i64) -> OperandKind {
        OperandKind::Imm(Packed::new(v))
    }
    /// A keyword (`&"eq"`: a reference to a static spelling).
    pub const fn keyword(s: &'static &'static str) -> OperandKind {
        OperandKind::Keyword(Packed::new(s))
    }
    /// The value of an [`OperandKind::Imm`].
    pub fn imm_value(&self) -> Option<i64> {
        match *self {
            OperandKind::Imm(v) => Some(v.get()),
            _ => None,
        }
    }
    /// The spelling of an [`OperandKind::Keyword`].
    pub fn keyword_text(&self) -> Option<&'static str> {
        match *self {
            OperandKind::Keyword(s) => Some(*s.get()),
            _ => None,
        }
    }
}

/// One operand of an instruction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Operand {
    pub kind: OperandKind,
    pub role: Role,
    /// Modifier flags ([`flags`]); for registers these live in `Reg::flags`
    /// and this field mirrors them; for immediates it carries `abs`/`neg`/`sx`.
    pub flags: u8,
}

impl Operand {
    pub const fn new(kind: OperandKind) -> Operand {
        Operand {
            kind,
            role: Role::Use,
            flags: 0,
        }
    }
    pub fn reg(r: Reg, role: Role) -> Operand {
        Operand {
            kind: OperandKind::Reg(r),
            role,
            flags: r.flags,
        }
    }
    pub fn as_reg(&self) -> Option<&Reg> {
        match &self.kind {
            OperandKind::Reg(r) => Some(r),
            _ => None,
        }
    }
}

/// Broad class of an instruction form: what later stages switch on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Category {
    /// Moves, integer and float ALU, conversions, compares, selects.
    Alu,
    /// SIMD/quad cross-lane ops (shuffles, reductions, ballots).
    CrossLane,
    /// Exec-mask manipulation (`if_*`, `else_*`, `while_*`, `pop_exec`).
    ExecMask,
    /// Branches, calls, returns, `stop`, `trap`.
    Control,
    /// Loads from device/threadgroup/stack/uniform memory.
    Load,
    /// Stores.
    Store,
    /// Atomics.
    Atomic,
    /// Texture sample/load, image writes.
    Texture,
    /// `wait`, barriers, doorbells, and similar synchronisation.
    Sync,
    /// Varyings/interpolation, tile ops and other graphics-only forms.
    Graphics,
    /// Forms whose purpose is unknown (`TODO.*`).
    Unknown,
}

impl Category {
    /// Lower-case name (`alu`, `cross_lane`, `load`, ...), as native syntax
    /// names the group of an unknown encoding (`unknown.load`).
    pub fn group_name(self) -> &'static str {
        match self {
            Category::Alu => "alu",
            Category::CrossLane => "cross_lane",
            Category::ExecMask => "exec_mask",
            Category::Control => "control",
            Category::Load => "load",
            Category::Store => "store",
            Category::Atomic => "atomic",
            Category::Texture => "texture",
            Category::Sync => "sync",
            Category::Graphics => "graphics",
            Category::Unknown => "todo",
        }
    }
}

/// Control-flow effect of an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Falls through to the next instruction.
    Next,
    /// Conditional branch on the exec mask: taken to `target` (absolute byte
    /// address) or falls through. `any = true` for `jmp_exec_any`.
    BranchExec { target: i64, any: bool },
    /// Unconditional branch.
    Jump { target: i64 },
    /// Call to an absolute address, returning to the next instruction.
    Call { target: i64 },
    /// Indirect call through a register.
    CallIndirect,
    /// Return through the link register.
    Ret,
    /// End of the shader for this thread.
    Stop,
    /// Trap (padding / abort).
    Trap,
}

/// A decoded instruction.
///
/// `repr(C)` keeps the fields every pass reads (mnemonic, address, form,
/// operand count, first operands) in the first cache line; by default the
/// compiler puts the small fields after the operand array. 176 bytes: 7
/// operands inline (wider forms spill to the heap), implicit operands behind
/// one pointer.
#[derive(Clone, PartialEq, Default)]
#[repr(C)]
pub struct Instruction {
    /// Mnemonic as printed (with suffixes such as `.sat`).
    pub mnemonic: &'static str,
    /// Address as printed (byte offset + any base).
    pub addr: u32,
    /// Length in bytes: 2, 4, 6, 8, 10 or 12.
    pub len: u8,
    /// Index of the matching form (applegpu descriptor index, 0..=160).
    pub form: u8,
    /// applegpu raises an exception on this (valid) encoding; we still decode
    /// it and print our best rendering (see docs/decoder.md).
    pub raised: bool,
    /// Printed operands, in print order.
    pub operands: arrayvec_lite::OperandVec,
    /// Implicit operands (not printed): exec-mask stack in `r0l`, link
    /// register, etc.
    pub implicit: arrayvec_lite::ImplicitVec,
    /// Raw little-endian instruction word (zero-extended).
    pub raw: u128,
}

// Written out to keep the field order of the Debug text independent of
// the memory layout above.
impl std::fmt::Debug for Instruction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instruction")
            .field("addr", &self.addr)
            .field("len", &self.len)
            .field("form", &self.form)
            .field("mnemonic", &self.mnemonic)
            .field("operands", &self.operands)
            .field("implicit", &self.implicit)
            .field("raw", &self.raw)
            .field("raised", &self.raised)
            .finish()
    }
}

impl Instruction {
    /// All operands, printed then implicit.
    pub fn all_operands(&self) -> impl Iterator<Item = &Operand> {
        self.operands.iter().chain(self.implicit.iter())
    }
    /// Register operands written.
    pub fn defs(&self) -> impl Iterator<Item = &Reg> {
        self.all_operands()
            .filter(|o| o.role.is_def())
            .filter_map(|o| o.as_reg())
    }
    /// Register operands read.
    pub fn uses(&self) -> impl Iterator<Item = &Reg> {
        self.all_operands()
            .filter(|o| o.role.is_use())
            .filter_map(|o| o.as_reg())
    }
    /// The instruction's bytes (`len` of them).
    pub fn bytes(&self) -> [u8; 12] {
        let b = self.raw.to_le_bytes();
        let mut out = [0u8; 12];
        out.copy_from_slice(&b[..12]);
        out
    }
    /// End address (address of the next instruction).
    pub fn end(&self) -> u32 {
        self.addr + self.len as u32
    }
}

/// Compact operand vectors: instructions are stored by the million, so the
/// common case lives inline and the rare wide forms spill to the heap.
pub mod arrayvec_lite {
    use super::{Operand, OperandKind, MAX_IMPLICIT, MAX_OPERANDS};

    /// Operands held inside the instruction. 7 covers every instruction of
    /// Mesa's matmul loop and ~89% of the decoded corpus in testdata (13%
    /// of it has 7 or more, 5.4% more than 8: the texture and wide memory
    /// forms declare up to 16); wider instructions move all their operands to
    /// one heap block of [`MAX_OPERANDS`].
    pub const INLINE_OPERANDS: usize = 7;

    const EMPTY: Operand = Operand::new(OperandKind::imm(0));

    /// Printed operands: up to [`INLINE_OPERANDS`] inline, up to
    /// [`MAX_OPERANDS`] in all; pushes past that are ignored (never happens
    /// for the G13 tables, checked by a test). The spill block exists exactly
    /// when the length is over the inline capacity.
    // repr(C): the length before the items (read first, same cache line)
    #[derive(Clone)]
    #[repr(C)]
    pub struct OperandVec {
        len: u8,
        items: [Operand; INLINE_OPERANDS],
        spill: Option<Box<[Operand; MAX_OPERANDS]>>,
    }

    impl Default for OperandVec {
        fn default() -> Self {
            OperandVec {
                len: 0,
                items: [EMPTY; INLINE_OPERANDS],
                spill: None,
            }
        }
    }

    impl OperandVec {
        pub fn new() -> Self {
            Self::default()
        }
        /// Appends; silently ignores operands past capacity.
        #[inline]
        pub fn push(&mut self, o: Operand) {
            let l = self.len as usize;
            if l >= MAX_OPERANDS {
                return;
            }
            if l < INLINE_OPERANDS {
                self.items[l] = o;
            } else {
                self.push_spilled(l, o);
            }
            self.len += 1;
        }
        #[cold]
        #[inline(never)]
        fn push_spilled(&mut self, l: usize, o: Operand) {
            let s = self.spill.get_or_insert_with(|| {
                let mut b = Box::new([EMPTY; MAX_OPERANDS]);
                b[..INLINE_OPERANDS].copy_from_slice(&self.items);
                b
            });
            s[l] = o;
        }
        #[inline]
        pub fn len(&self) -> usize {
            self.len as usize
        }
        #[inline]
        pub fn is_empty(&self) -> bool {
            self.len == 0
        }
        #[inline]
        pub fn clear(&mut self) {
            self.len = 0;
            self.spill = None;
        }
        #[inline]
        pub fn as_slice(&self) -> &[Operand] {
            let l = self.len as usize;
            match &self.spill {
                None => &self.items[..l],
                Some(s) => &s[..l],
            }
        }
        #[inline]
        pub fn as_mut_slice(&mut self) -> &mut [Operand] {
            let l = self.len as usize;
            match &mut self.spill {
                None => &mut self.items[..l],
                Some(s) => &mut s[..l],
            }
        }
        #[inline]
        pub fn iter(&self) -> std::slice::Iter<'_, Operand> {
            self.as_slice().iter()
        }
    }

    impl PartialEq for OperandVec {
        fn eq(&self, other: &Self) -> bool {
            self.as_slice() == other.as_slice()
        }
    }

    impl std::ops::Deref for OperandVec {
        type Target = [Operand];
        #[inline]
        fn deref(&self) -> &[Operand] {
            self.as_slice()
        }
    }

    impl std::fmt::Debug for OperandVec {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_list().entries(self.iter()).finish()
        }
    }

    /// Implicit operands (calls' link register, texture compare sources,
    /// bit-packed loads' extra registers): ~2% of instructions have any, so
    /// they live on the heap and an instruction without pays one pointer.
    #[derive(Clone, Default, PartialEq)]
    pub struct ImplicitVec {
        items: Option<Box<(u8, [Operand; MAX_IMPLICIT])>>,
    }

    impl ImplicitVec {
        pub fn new() -> Self {
            Self::default()
        }
        /// Appends; silently ignores operands past [`MAX_IMPLICIT`].
        pub fn push(&mut self, o: Operand) {
            let b = self
                .items
                .get_or_insert_with(|| Box::new((0, [EMPTY; MAX_IMPLICIT])));
            if (b.0 as usize) < MAX_IMPLICIT {
                b.1[b.0 as usize] = o;
                b.0 += 1;
            }
        }
        #[inline]
        pub fn len(&self) -> usize {
            self.items.as_ref().map_or(0, |b| b.0 as usize)
        }
        #[inline]
        pub fn is_empty(&self) -> bool {
            self.len() == 0
        }
        #[inline]
        pub fn clear(&mut self) {
            self.items = None;
        }
        #[inline]
        pub fn as_slice(&self) -> &[Operand] {
            match &self.items {
                None => &[],
                Some(b) => &b.1[..b.0 as usize],
            }
        }
        #[inline]
        pub fn as_mut_slice(&mut self) -> &mut [Operand] {
            match &mut self.items {
                None => &mut [],
                Some(b) => &mut b.1[..b.0 as usize],
            }
        }
        #[inline]
        pub fn iter(&self) -> std::slice::Iter<'_, Operand> {
            self.as_slice().iter()
        }
    }

    impl std::ops::Deref for ImplicitVec {
        type Target = [Operand];
        #[inline]
        fn deref(&self) -> &[Operand] {
            self.as_slice()
        }
    }

    impl std::fmt::Debug for ImplicitVec {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_list().entries(self.iter()).finish()
        }
    }
}

#[cfg(test)]
mod size_tests {
    use super::*;

    /// Instructions are stored by the million: keep the operand compact.
    #[test]
    fn operand_layout_stays_compact() {
        assert_eq!(std::mem::size_of::<OperandKind>(), 12);
        assert_eq!(std::mem::size_of::<Operand>(), 16);
        assert!(std::mem::size_of::<Instruction>() <= 176);
    }

    /// Wide forms spill past the inline capacity and read back the same.
    #[test]
    fn operand_vec_spills_and_clears() {
        use arrayvec_lite::{ImplicitVec, OperandVec, INLINE_OPERANDS};
        let op = |v: i64| Operand::new(OperandKind::imm(v));
        let mut v = OperandVec::new();
        for i in 0..MAX_OPERANDS as i64 + 3 {
            v.push(op(i));
        }
        assert_eq!(v.len(), MAX_OPERANDS);
        assert!(v.iter().enumerate().all(|(i, o)| *o == op(i as i64)));
        v.as_mut_slice()[INLINE_OPERANDS + 1] = op(-1);
        assert_eq!(v[INLINE_OPERANDS + 1], op(-1));
        let w = v.clone();
        assert_eq!(v, w);
        v.clear();
        assert!(v.is_empty());
        v.push(op(5));
        assert_eq!(v.as_slice(), &[op(5)]);
        let mut im = ImplicitVec::new();
        assert!(im.is_empty());
        for i in 0..4 {
            im.push(op(i));
        }
        assert_eq!(im.as_slice(), &[op(0), op(1)]);
        im.clear();
        assert_eq!(im, ImplicitVec::default());
    }
}
