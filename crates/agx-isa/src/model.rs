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
///
/// `repr(C)` puts `file` first: [`OperandKind`] keeps its tag in the
/// values `file` never takes, and its other payloads in the 5 bytes after.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(C)]
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
        // one rule for both: a single register spans 1, 2 or 4 halves, a
        // power of two, so only a vector can reserve more than it spans
        let r = self.half_range();
        crate::table::RegRange {
            start: r.start as u16,
            len: r.len() as u16,
            bits: if self.file == RegFile::Uniform {
                crate::table::RegRange::UNIFORM
            } else {
                0
            },
        }
        .allocated_range()
    }
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

/// A 4-byte value stored with 1-byte alignment, so that every
/// [`OperandKind`] payload fits the 5 bytes after the tag (the kind is 6
/// bytes, [`Operand`] 8: instructions are stored by the million). Read with
/// [`Packed::get`]; compares and prints as the value.
#[derive(Clone, Copy)]
#[repr(C, packed(1))]
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

/// Smallest and largest value an [`OperandKind::Imm`] holds (40-bit
/// two's complement). The decoder's immediates are fields of at most 32
/// bits, zero- or sign-extended: -2^15..2^32.
pub const IMM_MIN: i64 = -(1 << 39);
pub const IMM_MAX: i64 = (1 << 39) - 1;

/// A 40-bit signed immediate in 5 bytes (1-byte alignment): the payload of
/// [`OperandKind::Imm`]. Read with [`Imm40::get`].
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(C, packed(1))]
pub struct Imm40 {
    lo: u32,
    hi: i8,
}

impl Imm40 {
    /// `v`, which must lie in [`IMM_MIN`]..=[`IMM_MAX`] (checked in debug
    /// builds; higher bits are dropped).
    pub const fn new(v: i64) -> Imm40 {
        debug_assert!(v >= IMM_MIN && v <= IMM_MAX, "immediate wider than 40 bits");
        Imm40 {
            lo: v as u32,
            hi: (v >> 32) as i8,
        }
    }
    #[inline]
    pub fn get(self) -> i64 {
        (self.hi as i64) << 32 | self.lo as i64
    }
}

impl std::fmt::Debug for Imm40 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

/// A 40-bit unsigned value in 5 bytes: the payload of
/// [`OperandKind::HexImm`]. Read with [`Hex40::get`].
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(C, packed(1))]
pub struct Hex40 {
    lo: u32,
    hi: u8,
}

impl Hex40 {
    /// `v`, which must be below 2^40 (checked in debug builds; higher bits
    /// are dropped).
    pub const fn new(v: u64) -> Hex40 {
        debug_assert!(v < 1 << 40, "hex immediate wider than 40 bits");
        Hex40 {
            lo: v as u32,
            hi: (v >> 32) as u8,
        }
    }
    #[inline]
    pub fn get(self) -> u64 {
        (self.hi as u64) << 32 | self.lo as u64
    }
}

impl std::fmt::Debug for Hex40 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

/// The spelling of a keyword in 4 bytes: the payload of
/// [`OperandKind::Keyword`], read with [`KeywordRef::get`].
///
/// It is the distance from a fixed static of this crate to the keyword's
/// `&'static str`: every spelling the decoder uses is a static of the
/// program, so the distance fits 32 bits (a program's static data is far
/// smaller than 2 GiB); the pointer is rebuilt from the address with the
/// provenance [`KeywordRef::new`] exposed. A spelling elsewhere (leaked on
/// the heap, say) is first copied into a static slot ([`static_slot`]).
#[derive(Clone, Copy)]
#[repr(C, packed(1))]
pub struct KeywordRef(i32);

/// The fixed point keyword distances are measured from.
static ANCHOR: u8 = 0;

#[inline]
fn anchor_addr() -> usize {
    (&raw const ANCHOR).addr()
}

impl KeywordRef {
    #[inline]
    pub fn new(s: &'static &'static str) -> KeywordRef {
        let p = (s as *const &'static str).expose_provenance();
        match i32::try_from(p.wrapping_sub(anchor_addr()) as isize) {
            Ok(d) => KeywordRef(d),
            Err(_) => KeywordRef::new(static_slot(s)),
        }
    }
    #[inline]
    pub fn get(self) -> &'static &'static str {
        let d = self.0;
        let p = anchor_addr().wrapping_add(d as isize as usize);
        // SAFETY: `p` is the address of a `&'static str` that lives for the
        // whole program (a static, or a slot of `static_slot`) and whose
        // provenance `new` exposed.
        unsafe { &*std::ptr::with_exposed_provenance::<&'static str>(p) }
    }
}

impl PartialEq for KeywordRef {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl std::fmt::Debug for KeywordRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

/// Slots of [`static_slot`] in use.
static SLOTS_USED: std::sync::Mutex<usize> = std::sync::Mutex::new(0);

/// A static slot holding `s`'s spelling (one per distinct spelling, for
/// the life of the process): for spellings that are not statics.
#[cold]
pub fn static_slot(s: &'static str) -> &'static &'static str {
    const SLOTS: usize = 4096;
    static SLOT: [std::sync::OnceLock<&'static str>; SLOTS] =
        [const { std::sync::OnceLock::new() }; SLOTS];
    let mut used = SLOTS_USED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(slot) = SLOT[..*used]
        .iter()
        .find_map(|c| c.get().filter(|t| **t == s))
    {
        return slot;
    }
    assert!(*used < SLOTS, "more than {SLOTS} non-static spellings");
    let slot = SLOT[*used].get_or_init(|| s);
    *used += 1;
    slot
}

/// What an operand is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OperandKind {
    /// A general-purpose or uniform register (or tuple of them).
    Reg(Reg),
    /// An integer immediate, printed in decimal (applegpu `Immediate`), of
    /// 40 bits ([`IMM_MIN`]..=[`IMM_MAX`]). Build with [`OperandKind::imm`],
    /// read with [`OperandKind::imm_value`].
    Imm(Imm40),
    /// An integer immediate printed in hexadecimal `0x..` form (40 bits).
    HexImm(Hex40),
    /// An 8-bit encoded float immediate, printed as Python prints the float.
    FloatImm(u8),
    /// A branch/call target: byte offset relative to the instruction's own
    /// address. Printed as `0x%X` of the absolute address. Build with
    /// [`OperandKind::target`], read with [`OperandKind::target_offset`].
    Target(Packed<i32>),
    /// Special register `srN` (name printed in parentheses when known).
    SpecialReg(u16),
    /// Texture state slot `tsN`.
    TexState(u16),
    /// Sampler state slot `ssN`.
    SamplerState(u16),
    /// Coefficient register `cfN`.
    Cf(u16),
    /// A binary field printed as `0b` and `bits` binary digits.
    Binary { value: Packed<u32>, bits: u8 },
    /// A keyword: condition code, memory format, mask, mode... (`unsigned`,
    /// `xyzw`, `i32`, `ult`, `lsl 2` ...): a 4-byte reference to the
    /// spelling; build with [`OperandKind::keyword`], read with
    /// [`OperandKind::keyword_text`].
    Keyword(KeywordRef),
}

impl OperandKind {
    /// An integer immediate.
    pub const fn imm(v: i64) -> OperandKind {
        OperandKind::Imm(Imm40::new(v))
    }
    /// A keyword (`&"eq"`: a reference to a static spelling).
    #[inline]
    pub fn keyword(s: &'static &'static str) -> OperandKind {
        OperandKind::Keyword(KeywordRef::new(s))
    }
    /// A branch/call target `rel` bytes from the instruction's address.
    pub const fn target(rel: i32) -> OperandKind {
        OperandKind::Target(Packed::new(rel))
    }
    /// The offset of an [`OperandKind::Target`].
    pub fn target_offset(&self) -> Option<i32> {
        match *self {
            OperandKind::Target(r) => Some(r.get()),
            _ => None,
        }
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

/// Mnemonic spellings that are not a form's name: applegpu's aliases and
/// suffixed names (`.sat`, `isub`, the `bitop` aliases ...), and `""`.
const EXTRA_MNEMONICS: [&str; 45] = [
    "",
    "fmadd32.sat",
    "fmadd16.sat",
    "fadd32.sat",
    "fadd16.sat",
    "fmul32.sat",
    "fmul16.sat",
    "floor.sat",
    "ceil.sat",
    "trunc.sat",
    "rint.sat",
    "rcp.sat",
    "rsqrt.sat",
    "rsqrt_special.sat",
    "sin_pt_1.sat",
    "sin_pt_2.sat",
    "log2.sat",
    "exp2.sat",
    "dfdx.sat",
    "dfdy.sat",
    "funop.sat",
    "iadd",
    "iadd.sat",
    "isub",
    "isub.sat",
    "imadd",
    "imadd.sat",
    "imsub",
    "imsub.sat",
    "and",
    "or",
    "xor",
    "nand",
    "nor",
    "xnor",
    "not",
    "mov",
    "bitop_mov_a",
    "update_exec",
    "push_exec",
    "ld_tile",
    "st_tile",
    "unmap",
    "map",
    "TODO.map",
];

/// Number of forms (the first mnemonic numbers are the forms' names).
const NFORMS: usize = crate::forms::FORMS.len();

/// Mnemonics past the static ones: spellings given by hand
/// ([`Instruction::set_mnemonic_str`]), one slot each for the life of the
/// process.
const DYN_MNEMONICS: usize = 4096;
static DYN_MNEMONIC: [std::sync::OnceLock<&'static str>; DYN_MNEMONICS] =
    [const { std::sync::OnceLock::new() }; DYN_MNEMONICS];

/// A mnemonic spelling by number: `0..161` the forms' names
/// (`FORMS[i].name`), then [`EXTRA_MNEMONICS`], then spellings given by
/// hand. The decoder picks the number of a form or of an extra spelling at
/// compile time ([`Mnem::form`], [`Mnem::named`]); [`Mnem::of`] finds or
/// makes the number of any spelling. Two numbers may spell the same (forms
/// share names): compare [`Mnem::text`].
#[derive(Clone, Copy, Debug)]
pub struct Mnem(u16);

impl Mnem {
    /// `""`.
    pub const EMPTY: Mnem = Mnem::named("");

    /// The name of form `idx`.
    #[inline]
    pub const fn form(idx: u8) -> Mnem {
        Mnem(idx as u16)
    }

    /// An extra spelling ([`EXTRA_MNEMONICS`]); fails to compile (in a
    /// `const`) for any other.
    pub const fn named(s: &str) -> Mnem {
        let mut i = 0;
        while i < EXTRA_MNEMONICS.len() {
            if str_eq(EXTRA_MNEMONICS[i], s) {
                return Mnem((NFORMS + i) as u16);
            }
            i += 1;
        }
        panic!("not an extra mnemonic spelling")
    }

    /// The spelling.
    #[inline]
    pub fn text(self) -> &'static str {
        let i = self.0 as usize;
        match crate::forms::FORMS.get(i) {
            Some(f) => f.name,
            None => Self::text_past_forms(i),
        }
    }

    #[inline]
    fn text_past_forms(i: usize) -> &'static str {
        match EXTRA_MNEMONICS.get(i - NFORMS) {
            Some(s) => s,
            None => DYN_MNEMONIC[i - NFORMS - EXTRA_MNEMONICS.len()]
                .get()
                .copied()
                .unwrap_or(""),
        }
    }

    /// The number of spelling `s`: the first form of that name, else the
    /// extra spelling, else a slot for it (made once per spelling).
    pub fn of(s: &str) -> Mnem {
        type Map = std::collections::HashMap<&'static str, u16>;
        static STATIC: std::sync::OnceLock<Map> = std::sync::OnceLock::new();
        static DYN: std::sync::Mutex<Option<Map>> = std::sync::Mutex::new(None);
        let st = STATIC.get_or_init(|| {
            let mut m = Map::new();
            let names = crate::forms::FORMS.iter().map(|f| f.name);
            for (i, n) in names.chain(EXTRA_MNEMONICS.iter().copied()).enumerate() {
                m.entry(n).or_insert(i as u16);
            }
            m
        });
        if let Some(&i) = st.get(s) {
            return Mnem(i);
        }
        let mut d = DYN.lock().unwrap_or_else(|e| e.into_inner());
        let d = d.get_or_insert_with(Map::new);
        if let Some(&i) = d.get(s) {
            return Mnem(i);
        }
        let k = d.len();
        assert!(
            k < DYN_MNEMONICS,
            "more than {DYN_MNEMONICS} hand-made mnemonics"
        );
        let t: &'static str = DYN_MNEMONIC[k].get_or_init(|| String::from(s).leak());
        let i = (NFORMS + EXTRA_MNEMONICS.len() + k) as u16;
        d.insert(t, i);
        Mnem(i)
    }
}

impl PartialEq for Mnem {
    fn eq(&self, other: &Self) -> bool {
        self.text() == other.text()
    }
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// A decoded instruction.
///
/// `repr(C)` keeps the fields every pass reads (address, mnemonic, form,
/// operand count, first operands) at the front, and the layout free of
/// padding but for 1 byte: 88 bytes (96 with an 8-byte mnemonic pointer,
/// 136 with 12-byte operands and a separate spill pointer, 176 before
/// that): 7 operands of 8 bytes inline
/// (wider forms spill to the heap), implicit operands behind one pointer,
/// the instruction word as 12 bytes (an encoding is at most 12 bytes; a
/// `u128` field would add 4 bytes and 16-byte alignment).
#[derive(Clone)]
#[repr(C)]
pub struct Instruction {
    /// Address as printed (byte offset + any base).
    pub addr: u32,
    /// Mnemonic as printed (with suffixes such as `.sat`), as its
    /// [`Mnem`] number (2 bytes, not an 8-byte pointer). Read with
    /// [`Instruction::mnemonic`], set with [`Instruction::set_mnem`].
    mnem: Mnem,
    /// Length in bytes: 2, 4, 6, 8, 10 or 12.
    pub len: u8,
    /// Index of the matching form (applegpu descriptor index, 0..=160).
    pub form: u8,
    /// Printed operands, in print order.
    pub operands: arrayvec_lite::OperandVec,
    /// applegpu raises an exception on this (valid) encoding; we still decode
    /// it and print our best rendering (see docs/decoder.md).
    pub raised: bool,
    /// Raw little-endian instruction word, its `len` bytes then zeros:
    /// read with [`Instruction::raw`], set with [`Instruction::set_raw`].
    word: [u8; 12],
    /// Implicit operands (not printed): exec-mask stack in `r0l`, link
    /// register, etc.
    pub implicit: arrayvec_lite::ImplicitVec,
}

impl Default for Instruction {
    fn default() -> Self {
        Instruction {
            mnem: Mnem::EMPTY,
            addr: 0,
            len: 0,
            form: 0,
            raised: false,
            operands: Default::default(),
            implicit: Default::default(),
            word: [0; 12],
        }
    }
}

impl PartialEq for Instruction {
    fn eq(&self, other: &Self) -> bool {
        self.addr == other.addr
            && self.mnemonic() == other.mnemonic()
            && self.len == other.len
            && self.form == other.form
            && self.operands == other.operands
            && self.raised == other.raised
            && self.word == other.word
            && self.implicit == other.implicit
    }
}

// Written out to keep the field order of the Debug text independent of
// the memory layout above.
impl std::fmt::Debug for Instruction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instruction")
            .field("addr", &self.addr)
            .field("len", &self.len)
            .field("form", &self.form)
            .field("mnemonic", &self.mnemonic())
            .field("operands", &self.operands)
            .field("implicit", &self.implicit)
            .field("raw", &self.raw())
            .field("raised", &self.raised)
            .finish()
    }
}

impl Instruction {
    /// The instruction-set family it belongs to: this type is the G13
    /// decoder's (its form indexes the G13 form table).
    pub fn isa(&self) -> &'static crate::isa::Isa {
        &crate::isa::G13
    }
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
    /// Mnemonic as printed (with suffixes such as `.sat`).
    #[inline]
    pub fn mnemonic(&self) -> &'static str {
        self.mnem.text()
    }
    /// The mnemonic's number.
    #[inline]
    pub fn mnem(&self) -> Mnem {
        self.mnem
    }
    /// Sets the mnemonic by number (what the decoder does).
    #[inline]
    pub fn set_mnem(&mut self, m: Mnem) {
        self.mnem = m;
    }
    /// Sets the mnemonic (`&"name"`, or a reference into a static table):
    /// [`Mnem::of`] its spelling.
    #[inline]
    pub fn set_mnemonic(&mut self, m: &'static &'static str) {
        self.mnem = Mnem::of(m);
    }
    /// Sets the mnemonic from any static spelling, for instructions built by
    /// hand (tests, benchmarks): [`Mnem::of`] it.
    pub fn set_mnemonic_str(&mut self, m: &'static str) {
        self.mnem = Mnem::of(m);
    }
    /// Raw little-endian instruction word (zero-extended past `len`).
    #[inline]
    pub fn raw(&self) -> u128 {
        let mut b = [0u8; 16];
        b[..12].copy_from_slice(&self.word);
        u128::from_le_bytes(b)
    }
    /// Sets the raw word (bits past 96 are dropped: no encoding has them).
    #[inline]
    pub fn set_raw(&mut self, raw: u128) {
        let b = raw.to_le_bytes();
        self.word.copy_from_slice(&b[..12]);
    }
    /// The instruction's bytes (`len` of them, then zeros).
    #[inline]
    pub fn bytes(&self) -> [u8; 12] {
        self.word
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
    /// for the G13 tables, checked by a test). Past the inline capacity all
    /// the operands move to one heap block, whose pointer then takes the
    /// place of the inline ones: 58 bytes (2-byte alignment), where a
    /// separate `Option<Box>` made it 66 and 8-byte aligned.
    #[repr(C)]
    pub struct OperandVec {
        len: u8,
        store: Store,
    }

    /// The inline operands (`len <= INLINE_OPERANDS`; those past `len` may
    /// be uninitialised) or the heap block (`len > INLINE_OPERANDS`).
    #[derive(Clone, Copy)]
    #[repr(C)]
    union Store {
        inline: [Operand; INLINE_OPERANDS],
        heap: HeapPtr,
    }

    /// The heap block's pointer at 2-byte alignment (so that the operand
    /// vector is not 8-byte aligned).
    #[derive(Clone, Copy)]
    #[repr(C, packed(2))]
    struct HeapPtr(*mut [Operand; MAX_OPERANDS]);

    // SAFETY: the vector owns its heap block alone (as a `Box` would).
    unsafe impl Send for OperandVec {}
    unsafe impl Sync for OperandVec {}

    impl Default for OperandVec {
        #[inline]
        fn default() -> Self {
            OperandVec {
                len: 0,
                store: Store {
                    heap: HeapPtr(std::ptr::null_mut()),
                },
            }
        }
    }

    impl Drop for OperandVec {
        #[inline]
        fn drop(&mut self) {
            self.free();
        }
    }

    impl Clone for OperandVec {
        #[inline]
        fn clone(&self) -> Self {
            if !self.spilled() {
                return OperandVec {
                    len: self.len,
                    store: self.store,
                };
            }
            let b: Box<[Operand; MAX_OPERANDS]> = Box::new(*self.heap());
            OperandVec {
                len: self.len,
                store: Store {
                    heap: HeapPtr(Box::into_raw(b)),
                },
            }
        }
    }

    impl OperandVec {
        pub fn new() -> Self {
            Self::default()
        }
        #[inline]
        fn spilled(&self) -> bool {
            self.len as usize > INLINE_OPERANDS
        }
        /// The heap block (only when spilled).
        #[inline]
        fn heap(&self) -> &[Operand; MAX_OPERANDS] {
            debug_assert!(self.spilled());
            // SAFETY: spilled: `heap` is the live block this vector owns.
            unsafe { &*{ self.store.heap }.0 }
        }
        #[inline]
        fn heap_mut(&mut self) -> &mut [Operand; MAX_OPERANDS] {
            debug_assert!(self.spilled());
            // SAFETY: as `heap`, and `&mut self` is unique.
            unsafe { &mut *{ self.store.heap }.0 }
        }
        #[inline]
        fn inline_ptr(&self) -> *const Operand {
            (&raw const self.store).cast()
        }
        #[inline]
        fn free(&mut self) {
            if self.spilled() {
                // SAFETY: the block came from `Box::into_raw` and is
                // released once: `len` is reset by every caller.
                drop(unsafe { Box::from_raw({ self.store.heap }.0) });
            }
        }
        /// Appends; silently ignores operands past capacity.
        #[inline]
        pub fn push(&mut self, o: Operand) {
            let l = self.len as usize;
            if l < INLINE_OPERANDS {
                // SAFETY: slot `l` of the inline array.
                unsafe { (&raw mut self.store).cast::<Operand>().add(l).write(o) };
                self.len += 1;
            } else if l < MAX_OPERANDS {
                self.push_spilled(l, o);
            }
        }
        #[cold]
        #[inline(never)]
        fn push_spilled(&mut self, l: usize, o: Operand) {
            if l == INLINE_OPERANDS {
                let mut b = Box::new([EMPTY; MAX_OPERANDS]);
                b[..INLINE_OPERANDS].copy_from_slice(self.as_slice());
                self.store.heap = HeapPtr(Box::into_raw(b));
            }
            self.len += 1;
            self.heap_mut()[l] = o;
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
            self.free();
            self.len = 0;
        }
        #[inline]
        pub fn as_slice(&self) -> &[Operand] {
            let l = self.len as usize;
            if l > INLINE_OPERANDS {
                &self.heap()[..l]
            } else {
                // SAFETY: the first `l` inline slots were written by `push`.
                unsafe { std::slice::from_raw_parts(self.inline_ptr(), l) }
            }
        }
        #[inline]
        pub fn as_mut_slice(&mut self) -> &mut [Operand] {
            let l = self.len as usize;
            if l > INLINE_OPERANDS {
                &mut self.heap_mut()[..l]
            } else {
                // SAFETY: as `as_slice`, and `&mut self` is unique.
                unsafe {
                    std::slice::from_raw_parts_mut((&raw mut self.store).cast::<Operand>(), l)
                }
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
        assert_eq!(std::mem::size_of::<OperandKind>(), 6);
        assert_eq!(std::mem::size_of::<Operand>(), 8);
        assert_eq!(std::mem::size_of::<arrayvec_lite::OperandVec>(), 58);
        assert_eq!(std::mem::size_of::<Instruction>(), 88);
    }

    /// Every keyword the decoder produces is a static: none goes through
    /// the slow path of [`static_slot`] (random words on every form), and
    /// keywords read back their spelling.
    #[test]
    fn decoded_keywords_are_statics() {
        let mut next = crate::xorshift::xorshift64(0x9E37_79B9_7F4A_7C15);
        let mut seen = 0;
        for f in crate::forms::FORMS.iter() {
            for _ in 0..3000 {
                let w = ((next() as u128) | (next() as u128) << 64) & ((1u128 << 96) - 1);
                let w = (w & !f.mask) | f.bits;
                if let Some(i) = crate::decode::decode_word(w, 0) {
                    for o in i.all_operands() {
                        if let OperandKind::Keyword(k) = o.kind {
                            assert_eq!(OperandKind::keyword(k.get()), o.kind);
                            seen += 1;
                        }
                    }
                }
            }
        }
        assert!(seen > 10_000);
        assert_eq!(*SLOTS_USED.lock().unwrap(), 0);
        let leaked: &'static &'static str = Box::leak(Box::new(&*String::from("xyzw").leak()));
        let k = OperandKind::keyword(leaked);
        assert_eq!(k.keyword_text(), Some("xyzw"));
        assert_eq!(k, OperandKind::keyword(&"xyzw"));
    }

    /// Mnemonic numbers spell their names; hand-made spellings get one
    /// number each.
    #[test]
    fn mnemonic_numbers() {
        for f in crate::forms::FORMS.iter() {
            assert_eq!(Mnem::form(f.idx).text(), f.name);
            assert_eq!(Mnem::of(f.name).text(), f.name);
        }
        for s in EXTRA_MNEMONICS {
            assert_eq!(Mnem::of(s).text(), s);
            assert_eq!(Mnem::named(s).text(), s);
        }
        assert_eq!(Mnem::EMPTY.text(), "");
        assert_eq!(Instruction::default().mnemonic(), "");
        let mut i = Instruction::default();
        i.set_mnemonic_str("not.a.mnemonic");
        assert_eq!(i.mnemonic(), "not.a.mnemonic");
        assert_eq!(Mnem::of("not.a.mnemonic"), i.mnem());
        i.set_mnemonic(&"xor");
        assert_eq!(i.mnem(), Mnem::named("xor"));
    }

    /// Immediates keep 40 bits, signed.
    #[test]
    fn immediates_round_trip() {
        for v in [
            0,
            1,
            -1,
            -32768,
            0xFFFF_FFFF,
            0x1_0000_0000,
            IMM_MIN,
            IMM_MAX,
        ] {
            assert_eq!(OperandKind::imm(v).imm_value(), Some(v));
        }
        for v in [0, 0xFFFF_FFFF, (1 << 40) - 1] {
            assert_eq!(Hex40::new(v).get(), v);
        }
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
