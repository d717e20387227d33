//! Cost keys: which timing-table row prices an instruction.
//!
//! The key is a fact about the instruction, the same for every GPU
//! generation; each generation's timing table (agx-analysis
//! `timing::table`) has exactly one row per key, which the table's index
//! checks at compile time. The per-form rule ([`CostRule`]) is a column of
//! the generated form table (tools/gen_forms.py); [`crate::Instruction::cost_key`]
//! applies it to the instruction's operands.

macro_rules! cost_keys {
    ($($(#[$doc:meta])* $v:ident = $s:literal,)*) => {
        /// A timing-table row. The spelling ([`CostKey::name`]) is the
        /// `key` of the JSON `instructions_detail` and of `--explain-model`.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum CostKey { $($(#[$doc])* $v,)* }

        impl CostKey {
            /// Every key, in declaration order.
            pub const ALL: &'static [CostKey] = &[$(CostKey::$v,)*];
            /// Number of keys.
            pub const COUNT: usize = Self::ALL.len();
            /// The key's stable spelling (`"fadd32"`, `"imad32x32_64"`, ...).
            pub const fn name(self) -> &'static str {
                match self { $(CostKey::$v => $s,)* }
            }
        }
    };
}

cost_keys! {
    Fadd32 = "fadd32",
    Fmul32 = "fmul32",
    Fma32 = "fma32",
    Fadd16 = "fadd16",
    Fmul16 = "fmul16",
    Fma16 = "fma16",
    Fcmpsel32 = "fcmpsel32",
    Fcmpsel16 = "fcmpsel16",
    MovImm = "mov_imm",
    GetSr = "get_sr",
    Iadd32 = "iadd32",
    Iadd16 = "iadd16",
    IaddSat32 = "iaddsat32",
    Iadd64 = "iadd64",
    Icmpsel32 = "icmpsel32",
    Icmpsel16 = "icmpsel16",
    Bitop = "bitop",
    Imad16 = "imad16",
    Imad32 = "imad32",
    Imad32x32_64 = "imad32x32_64",
    Bfi = "bfi",
    BfeilConst = "bfeil_const",
    BfeilDynamic = "bfeil_dynamic",
    ShiftHi = "shift_hi",
    Bitrev = "bitrev",
    Popcount = "popcount",
    Ffs = "ffs",
    Intl = "intl",
    Iunop = "iunop",
    Convert = "convert",
    Rint = "rint",
    Trunc = "trunc",
    Rcp = "rcp",
    Rsqrt16 = "rsqrt16",
    Rsqrt32 = "rsqrt32",
    Exp2_32 = "exp2_32",
    Exp2_16 = "exp2_16",
    Log2_32 = "log2_32",
    Log2_16 = "log2_16",
    SinPt1 = "sin_pt_1",
    SinPt2 = "sin_pt_2",
    Dfdxy = "dfdxy",
    Funop = "funop",
    SimdBallot = "simd_ballot",
    QuadBallot = "quad_ballot",
    SimdShuffle = "simd_shuffle",
    QuadShuffle = "quad_shuffle",
    SimdReduceF32 = "simd_reduce_f32",
    SimdReduceF16 = "simd_reduce_f16",
    SimdReduceI32 = "simd_reduce_i32",
    SimdReduceI16 = "simd_reduce_i16",
    SimdReduceBit = "simd_reduce_bit",
    SimdPrefixF = "simd_prefix_f",
    SimdPrefixI = "simd_prefix_i",
    QuadReduceF = "quad_reduce_f",
    QuadReduceI = "quad_reduce_i",
    QuadPrefixF = "quad_prefix_f",
    QuadPrefixI = "quad_prefix_i",
    SimdMatrix = "simd_matrix",
    SimdGeneric = "simd_generic",
    DeviceLoad = "device_load",
    ThreadgroupLoad = "threadgroup_load",
    StackLoad = "stack_load",
    Store = "store",
    Atomic = "atomic",
    Texture = "texture",
    Wait = "wait",
    Branch = "branch",
    Exec = "exec",
    Barrier = "barrier",
    /// Forms no timing source prices (graphics, `TODO.*`, the stack-pointer
    /// forms), each named by tools/gen_forms.py.
    Other = "other",
}

/// The IC sub-pipeline of a transcendental, as metal-benchmarks' ALU
/// Layout lists them ("Integer and complex math pipeline": EXP2, LOG2 on
/// one line; RECIP; RSQRT; SIN_PT_1 + SIN_PT_2). Transcendentals on
/// different sub-pipelines overlap; two on the same one do not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Transcendental {
    Exp2Log2,
    Rcp,
    Rsqrt,
    SinPt,
}

impl CostKey {
    /// The transcendental sub-pipeline of the key, `None` for every other
    /// key (the other IC keys are integer/conversion work).
    pub const fn transcendental(self) -> Option<Transcendental> {
        use CostKey::*;
        Some(match self {
            Exp2_32 | Exp2_16 | Log2_32 | Log2_16 => Transcendental::Exp2Log2,
            Rcp => Transcendental::Rcp,
            Rsqrt16 | Rsqrt32 => Transcendental::Rsqrt,
            SinPt1 | SinPt2 => Transcendental::SinPt,
            _ => return None,
        })
    }

    /// A SIMD/quad reduction or prefix (scan) across lanes.
    pub const fn is_cross_lane_reduction(self) -> bool {
        use CostKey::*;
        matches!(
            self,
            SimdReduceF32
                | SimdReduceF16
                | SimdReduceI32
                | SimdReduceI16
                | SimdReduceBit
                | SimdPrefixF
                | SimdPrefixI
                | QuadReduceF
                | QuadReduceI
                | QuadPrefixF
                | QuadPrefixI
        )
    }

    /// Integer arithmetic, compare-select, bitfield and shift keys: the
    /// work a 64-bit integer value makes the compiler emulate.
    pub const fn is_integer_arith(self) -> bool {
        use CostKey::*;
        matches!(
            self,
            Iadd32
                | Iadd16
                | IaddSat32
                | Iadd64
                | Imad16
                | Imad32
                | Imad32x32_64
                | Icmpsel32
                | Icmpsel16
                | Bfi
                | BfeilConst
                | BfeilDynamic
                | ShiftHi
        )
    }

    /// 32-bit float add, multiply or fused multiply-add.
    pub const fn is_fp32_arith(self) -> bool {
        matches!(self, CostKey::Fadd32 | CostKey::Fmul32 | CostKey::Fma32)
    }

    /// 16-bit float add, multiply or fused multiply-add.
    pub const fn is_fp16_arith(self) -> bool {
        matches!(self, CostKey::Fadd16 | CostKey::Fmul16 | CostKey::Fma16)
    }

    /// A float multiply or fused multiply-add (either width).
    pub const fn is_fmul(self) -> bool {
        matches!(
            self,
            CostKey::Fmul32 | CostKey::Fmul16 | CostKey::Fma32 | CostKey::Fma16
        )
    }
}

/// How a form's cost key is chosen (a column of the form table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CostRule {
    /// One key whatever the operands.
    Fixed(CostKey),
    /// `iadd`/`isub`: `.sat` (field `S`) → `iaddsat32`; else by the
    /// destination width (16, 64, otherwise 32).
    Iadd,
    /// `imadd`: by the first destination's width (16, 64 = 32x32=64,
    /// otherwise 32).
    Imad,
    /// `bfeil`/`extr`: a register shift/offset (operand 3) is a dynamic
    /// shift (RSHIFT32), an immediate one a constant extract.
    Bfe,
    /// By the destination width: `w16` for 16-bit, `w32` otherwise.
    ByWidth { w16: CostKey, w32: CostKey },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut n: Vec<&str> = CostKey::ALL.iter().map(|k| k.name()).collect();
        n.sort();
        n.dedup();
        assert_eq!(n.len(), CostKey::COUNT);
    }
}
