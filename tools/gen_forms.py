#!/usr/bin/env python3
"""Generate crates/agx-isa/src/forms.rs from applegpu-forms.json.

The JSON is the introspected descriptor table of dougallj/applegpu (commit
4c5bae61, BSD-3-Clause): fixed bits, sizes, length bit, field bit ranges and
operand kinds in print order. These are facts about the encoding; the decode
and print logic lives in hand-written Rust (decode.rs, operands.rs).

usage: python3 tools/gen_forms.py ../shared/reference/applegpu-forms.json > crates/agx-isa/src/forms.rs
"""
import json
import re
import sys

CATEGORY = {}
def cat(names, c):
    for n in names.split():
        CATEGORY[n] = c

cat("mov_imm get_sr iadd imadd convert bfi bfeil extr shlhi shrhi asr asrh bitop bitrev popcount intl ffs iunop "
    "fmadd32 fmadd16 fadd32 fadd16 fmul32 fmul16 floor ceil trunc rint rcp rsqrt rsqrt_special sin_pt_1 sin_pt_2 "
    "log2 exp2 dfdx dfdy funop icmpsel fcmpsel stack_get_ptr", "Alu")
cat("ret stop trap call jmp_incomplete jmp_exec_any jmp_exec_none jmp_if_skipping_doorbell", "Control")
cat("pop_exec if_icmp if_fcmp while_icmp while_fcmp else_icmp else_fcmp TODO.pop_exec2", "ExecMask")
for n in ["icmp_ballot", "icmp_quad_ballot", "fcmp_ballot", "fcmp_quad_ballot", "simd_shuffle", "simd_shuffle_down",
          "simd_shuffle_up", "simd_shuffle_rotate_up", "simd_shuffle_xor", "simd_matrix_fmadd32", "simd_matrix_fmadd16",
          "simd_shuf_op", "simd_op"]:
    CATEGORY[n] = "CrossLane"
cat("device_load device_load.TODO stack_load threadgroup_load async_load TODO.ldcf", "Load")
cat("device_store device_store.TODO stack_store threadgroup_store async_store uniform_store tex_state_store "
    "sampler_state_store", "Store")
cat("atomic threadgroup_atomic", "Atomic")
cat("texture_sample texture_load image_write image_write_block", "Texture")
cat("wait wait_pix signal_pix threadgroup_barrier memory_barrier doorbell TODO.stack_adjust TODO.stack_adjust2", "Sync")
cat("TODO.ld/st_tile iter iterproj no_var st_var st_var_final sample_mask zs_emit map", "Graphics")

# --- per-form facts (columns of the form table) ----------------------------
# Sources: applegpu's descriptors and pseudocode (dougallj/applegpu
# @4c5bae61) for memory spaces, control flow and scoreboard fields; the cost
# keys are the rows of the timing tables (crates/agx-analysis/src/timing/
# table.rs), whose sources are cited there. Every form must have a cost rule:
# the generator fails on a form this table does not name.

# memory access: form -> (space, op)
MEM = {}
def mem(names, space, op):
    for n in names.split():
        MEM[n] = (space, op)
mem("device_load device_load.TODO", "Device", "Load")
mem("device_store device_store.TODO", "Device", "Store")
mem("atomic", "Device", "Atomic")
# async_load/async_store copy between device and threadgroup memory (seen in
# Apple's MPS kernels); the device side is the costly one.
mem("async_load", "Device", "Load")
mem("async_store", "Device", "Store")
mem("threadgroup_load", "Threadgroup", "Load")
mem("threadgroup_store", "Threadgroup", "Store")
mem("threadgroup_atomic", "Threadgroup", "Atomic")
mem("stack_load", "Stack", "Load")
mem("stack_store", "Stack", "Store")
mem("uniform_store", "Uniform", "Store")
mem("tex_state_store sampler_state_store", "TextureState", "Store")
mem("image_write image_write_block", "Texture", "Store")
mem("texture_sample texture_load", "Texture", "Load")
# ld_tile/st_tile: the direction is the `load` field (Instruction::semantics)
mem("TODO.ld/st_tile", "Tile", "Load")

# control flow: form -> FlowKind
FLOW = {}
def flow(names, k):
    for n in names.split():
        FLOW[n] = k
flow("jmp_exec_any", "JmpExecAny")
flow("jmp_exec_none", "JmpExecNone")
# conditional by their names, condition unknown (pseudocode TODO()): 8-bit offset
flow("jmp_incomplete jmp_if_skipping_doorbell", "JmpCond")
flow("ret", "Ret")
flow("stop", "Stop")
flow("trap", "Trap")
flow("pop_exec TODO.pop_exec2", "Exec(ExecKind::Pop)")
flow("if_icmp if_fcmp", "Exec(ExecKind::If)")
flow("else_icmp else_fcmp", "Exec(ExecKind::Else)")
flow("while_icmp while_fcmp", "Exec(ExecKind::While)")
def flow_of(f):
    if f["name"] == "call":
        # CallInstructionDesc (PC-relative `off`) or CallRegInstructionDesc
        return "Call" if f["class"] == "CallInstructionDesc" else "CallIndirect"
    return FLOW.get(f["name"], "None")

# scoreboard slot field: the `wait` slot `i`, the load/atomic slot `g`
SLOT = {"wait": "i"}
for n in "device_load device_load.TODO texture_sample texture_load atomic".split():
    SLOT[n] = "g"

# cost rule: form -> CostRule (the key of a timing-table row, or how the
# operands pick one)
COST = {}
def cost(names, rule):
    for n in names.split():
        assert n not in COST, n
        COST[n] = rule
def fixed(names, key):
    cost(names, "CostRule::Fixed(CostKey::%s)" % key)
def by_width(names, k16, k32):
    cost(names, "CostRule::ByWidth { w16: CostKey::%s, w32: CostKey::%s }" % (k16, k32))
fixed("mov_imm", "MovImm")
fixed("get_sr", "GetSr")
cost("iadd", "CostRule::Iadd")
cost("imadd", "CostRule::Imad")
fixed("convert", "Convert")
fixed("bfi", "Bfi")
cost("bfeil extr", "CostRule::Bfe")
fixed("shlhi shrhi asr asrh", "ShiftHi")
fixed("bitop", "Bitop")
fixed("bitrev", "Bitrev")
fixed("popcount", "Popcount")
fixed("intl", "Intl")
fixed("ffs", "Ffs")
fixed("iunop", "Iunop")
fixed("fmadd32", "Fma32")
fixed("fmadd16", "Fma16")
fixed("fadd32", "Fadd32")
fixed("fadd16", "Fadd16")
fixed("fmul32", "Fmul32")
fixed("fmul16", "Fmul16")
fixed("floor ceil rint", "Rint")
fixed("trunc", "Trunc")
fixed("rcp", "Rcp")
by_width("rsqrt rsqrt_special", "Rsqrt16", "Rsqrt32")
fixed("sin_pt_1", "SinPt1")
fixed("sin_pt_2", "SinPt2")
by_width("log2", "Log2_16", "Log2_32")
by_width("exp2", "Exp2_16", "Exp2_32")
fixed("dfdx dfdy", "Dfdxy")
fixed("funop", "Funop")
fixed("ret stop trap call jmp_incomplete jmp_exec_any jmp_exec_none jmp_if_skipping_doorbell", "Branch")
fixed("pop_exec if_icmp if_fcmp while_icmp while_fcmp else_icmp else_fcmp TODO.pop_exec2", "Exec")
by_width("icmpsel", "Icmpsel16", "Icmpsel32")
by_width("fcmpsel", "Fcmpsel16", "Fcmpsel32")
fixed("icmp_ballot fcmp_ballot", "SimdBallot")
fixed("icmp_quad_ballot fcmp_quad_ballot", "QuadBallot")
fixed("simd_shuffle simd_shuffle_down simd_shuffle_up simd_shuffle_rotate_up simd_shuffle_xor", "SimdShuffle")
fixed("simd_matrix_fmadd32 simd_matrix_fmadd16", "SimdMatrix")
fixed("quad_shuffle quad_shuffle_down quad_shuffle_up quad_shuffle_rotate_up quad_shuffle_xor", "QuadShuffle")
fixed("simd_shuf_op simd_op", "SimdGeneric")
fixed("quad_and quad_or quad_xor quad_iadd quad_min.u quad_max.u quad_min.s quad_max.s quad_min.f quad_max.f", "QuadReduceI")
fixed("quad_fadd quad_fmul", "QuadReduceF")
fixed("quad_prefix_iadd", "QuadPrefixI")
fixed("quad_prefix_fadd quad_prefix_fmul", "QuadPrefixF")
fixed("simd_and simd_or simd_xor simd_min.u simd_max.u simd_min.s simd_max.s simd_min.f simd_max.f", "SimdReduceBit")
by_width("simd_iadd", "SimdReduceI16", "SimdReduceI32")
by_width("simd_fadd simd_fmul", "SimdReduceF16", "SimdReduceF32")
fixed("simd_prefix_iadd simd_prefix_and simd_prefix_or simd_prefix_xor simd_prefix_min.s simd_prefix_min.u "
      "simd_prefix_max.s simd_prefix_max.u", "SimdPrefixI")
fixed("simd_prefix_fadd simd_prefix_fmul", "SimdPrefixF")
fixed("wait", "Wait")
fixed("threadgroup_barrier memory_barrier", "Barrier")
fixed("device_load device_load.TODO async_load", "DeviceLoad")
fixed("threadgroup_load", "ThreadgroupLoad")
fixed("stack_load", "StackLoad")
fixed("device_store device_store.TODO threadgroup_store stack_store uniform_store async_store tex_state_store "
      "sampler_state_store", "Store")
fixed("atomic threadgroup_atomic", "Atomic")
fixed("texture_sample texture_load image_write image_write_block", "Texture")
# forms no timing source prices: the `other` row (one dispatch cycle), named
# here one by one so that a new form needs a decision. stack_get_ptr and the
# stack adjusts move no data (they compute / move the stack pointer).
fixed("stack_get_ptr TODO.stack_adjust TODO.stack_adjust2 wait_pix signal_pix TODO.ld/st_tile iter iterproj "
      "TODO.ldcf no_var st_var st_var_final TODO.after_sampling1 TODO.after_sampling2 TODO.unk30C0 TODO.unk40C0 "
      "TODO.unkC0000000 TODO.unk51 TODO.unkE800 TODO.unk0C00 doorbell TODO.sr_thing map TODO.unk75_alt "
      "sample_mask zs_emit", "Other")

def category(name):
    if name in CATEGORY:
        return CATEGORY[name]
    if name.startswith("quad_") or name.startswith("simd_"):
        return "CrossLane"
    return "Unknown"

def rust_str(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"') + '"'

def main():
    data = json.load(open(sys.argv[1]))
    forms = data["forms"]
    names = {f["name"] for f in forms}
    # (earlier, later) pairs: the earlier form's fixed bits are a subset of
    # the later one's, with equal values and the same sizes (native.rs)
    shadows = {}
    for j, later in enumerate(forms):
        lm, lb = int(later["mask"], 16), int(later["bits"], 16)
        for e in forms[:j]:
            em, eb = int(e["mask"], 16), int(e["bits"], 16)
            if em & ~lm == 0 and (eb ^ lb) & em == 0 and e["sizes"] == later["sizes"] \
                    and e["length_bit"] == later["length_bit"]:
                shadows.setdefault(e["idx"], []).append(later["idx"])
                break
    for table in (MEM, FLOW, SLOT, COST):
        for n in table:
            assert n in names, "no form called %s" % n
    out = []
    w = out.append
    w("// @generated by tools/gen_forms.py from applegpu-forms.json")
    w("// (dougallj/applegpu commit 4c5bae61086b8067231120c98b4756d7696d399c, BSD-3-Clause).")
    w("// Do not edit by hand: change the generator and re-run it.")
    w("#![allow(clippy::all)]")
    w("")
    w("use crate::cost::{CostKey, CostRule};")
    w("use crate::model::Category;")
    w("use crate::semantics::{ExecKind, FlowKind, MemDir, MemForm, MemSpace};")
    w("")
    w("/// One bit range of a merged field: (start bit, width, shift into the merged value).")
    w("pub type Part = (u8, u8, u8);")
    w("")
    w("/// A named field assembled from one or more bit ranges.")
    w("#[derive(Debug)]")
    w("pub struct Field { pub name: &'static str, pub parts: &'static [Part] }")
    w("")
    w("/// An operand descriptor: its applegpu kind, name, and the indices (into the")
    w("/// form's `fields`) of the fields it owns: merged fields first, then plain")
    w("/// fields, each in applegpu's declaration order.")
    w("#[derive(Debug)]")
    w("pub struct OperandDesc { pub kind: OpKind, pub name: &'static str, pub fields: &'static [u8] }")
    w("")
    w("/// An instruction form (applegpu `InstructionDesc`), in first-match order.")
    w("#[derive(Debug)]")
    w("pub struct Form {")
    w("    pub idx: u8,")
    w("    pub name: &'static str,")
    w("    pub class: Class,")
    w("    pub mask: u128,")
    w("    pub bits: u128,")
    w("    /// (short, long) sizes in bytes; equal when the form has one size.")
    w("    pub sizes: (u8, u8),")
    w("    pub length_bit: u8,")
    w("    pub fields: &'static [Field],")
    w("    pub operands: &'static [OperandDesc],")
    w("    pub category: Category,")
    w("    /// Memory access (space, load/store/atomic) of the form, if any.")
    w("    pub mem: Option<MemForm>,")
    w("    /// Control-flow kind (branch, call, ret, exec-mask op, ...).")
    w("    pub flow: FlowKind,")
    w("    /// How the timing-table key of an instruction of this form is chosen.")
    w("    pub cost: CostRule,")
    w("    /// The field holding the scoreboard slot (`g` of loads, `i` of `wait`).")
    w("    pub slot: Option<&'static str>,")
    w("    /// Later forms this one shadows: every word they match, this form")
    w("    /// matches first (see `native::shadowed_forms`).")
    w("    pub shadows: &'static [u8],")
    w("}")
    w("")
    w("impl Form {")
    w("    /// Size selected by the length bit of `word`.")
    w("    #[inline]")
    w("    pub fn size_of(&self, word: u128) -> u8 {")
    w("        if (word >> self.length_bit) & 1 == 1 { self.sizes.1 } else { self.sizes.0 }")
    w("    }")
    w("    /// Index of the field called `name`.")
    w("    #[inline(always)]")
    w("    pub fn field_index(&self, name: &str) -> Option<usize> {")
    w("        self.fields.iter().position(|f| f.name == name)")
    w("    }")
    w("}")
    w("")
    classes = []
    for f in forms:
        if f["class"] not in classes:
            classes.append(f["class"])
    kinds = []
    for f in forms:
        for o in f["operands"]:
            if o["kind"] not in kinds:
                kinds.append(o["kind"])
    w("/// applegpu descriptor classes (one per instruction family).")
    w("#[allow(non_camel_case_types)]")
    w("#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]")
    w("pub enum Class { %s }" % ", ".join(classes))
    w("")
    w("/// applegpu operand-descriptor kinds.")
    w("#[allow(non_camel_case_types)]")
    w("#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]")
    w("pub enum OpKind { %s }" % ", ".join(kinds))
    w("")
    def fimm(n):
        sign = -1.0 if n & 0x80 else 1.0
        e = (n & 0x70) >> 4
        fr = n & 0xF
        if e == 0:
            return sign * fr / 64.0
        return sign * float(0x10 | fr) * (2.0 ** (e - 7))
    w("/// How applegpu prints each 8-bit float immediate (Python's `str(float)`).")
    w("pub static FLOAT_IMM: [&str; 256] = [%s];" % ", ".join(rust_str(str(fimm(i))) for i in range(256)))
    w("")
    w('\n/// Special-register names (applegpu `SR_NAMES`), indexed by number.\npub static SR_NAMES: [Option<&str>; 148] = [Some("threadgroup_position_in_grid.x"), Some("threadgroup_position_in_grid.y"), Some("threadgroup_position_in_grid.z"), None, Some("threads_per_threadgroup.x"), Some("threads_per_threadgroup.y"), Some("threads_per_threadgroup.z"), None, Some("dispatch_threads_per_threadgroup.x"), Some("dispatch_threads_per_threadgroup.y"), Some("dispatch_threads_per_threadgroup.z"), None, None, None, None, None, None, None, None, None, Some("core_index"), Some("vm_slot"), None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, Some("thread_position_in_threadgroup.x"), Some("thread_position_in_threadgroup.y"), Some("thread_position_in_threadgroup.z"), Some("thread_index_in_threadgroup"), Some("thread_index_in_simdgroup"), Some("simdgroup_index_in_threadgroup"), None, None, Some("active_thread_index_in_quadgroup"), None, Some("active_thread_index_in_simdgroup"), None, Some("internal_coverage_mask"), None, Some("backfacing"), Some("is_active_thread"), None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, Some("thread_position_in_grid.x"), Some("thread_position_in_grid.y"), Some("thread_position_in_grid.z"), None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, Some("input_sample_mask"), None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, Some("opfifo_cmd"), None, Some("opfifo_data_l"), Some("opfifo_data_h")];\n')
    w("pub static FORMS: [Form; %d] = [" % len(forms))
    for f in forms:
        assert f["idx"] == len([1 for _ in range(f["idx"])])
        fields = f["merged_fields"]
        raw = {r["name"]: (r["start"], r["width"]) for r in f["fields"]}
        names = [m["name"] for m in fields]
        fl = []
        for m in fields:
            parts = []
            for p in m["parts"]:
                st, wd = raw[p["name"]]
                parts.append("(%d, %d, %d)" % (st, wd, p["shift"]))
            fl.append("Field { name: %s, parts: &[%s] }" % (rust_str(m["name"]), ", ".join(parts)))
        ops = []
        for o in f["operands"]:
            idxs = []
            for m in o["merged_fields"]:
                idxs.append(names.index(m["name"]))
            for r in o["fields"]:
                # a plain field declared by the operand is a merged field of one part
                idxs.append(names.index(r["name"]))
            ops.append("OperandDesc { kind: OpKind::%s, name: %s, fields: &[%s] }" % (
                o["kind"], rust_str(o["name"]), ", ".join(map(str, idxs))))
        w("    Form {")
        w("        idx: %d," % f["idx"])
        w("        name: %s," % rust_str(f["name"]))
        w("        class: Class::%s," % f["class"])
        w("        mask: %s," % f["mask"])
        w("        bits: %s," % f["bits"])
        w("        sizes: (%d, %d)," % tuple(f["sizes"]))
        w("        length_bit: %d," % f["length_bit"])
        w("        fields: &[%s]," % ", ".join(fl))
        w("        operands: &[%s]," % ", ".join(ops))
        w("        category: Category::%s," % category(f["name"]))
        m = MEM.get(f["name"])
        w("        mem: %s," % ("Some(MemForm { space: MemSpace::%s, dir: MemDir::%s })" % m if m else "None"))
        w("        flow: FlowKind::%s," % flow_of(f))
        assert f["name"] in COST, "form %s has no cost rule (tools/gen_forms.py COST)" % f["name"]
        w("        cost: %s," % COST[f["name"]])
        sl = SLOT.get(f["name"])
        w("        slot: %s," % ("Some(%s)" % rust_str(sl) if sl else "None"))
        w("        shadows: &[%s]," % ", ".join(str(x) for x in shadows.get(f["idx"], [])))
        w("    },")
    w("];")
    w("")
    # Dispatch on the low byte: for each value, the forms (in first-match
    # order) whose fixed bits in the low byte agree with it.
    w("/// For each value of an instruction's first byte, the indices of the forms")
    w("/// that can match it, in first-match order.")
    w("pub static DISPATCH: [&[u8]; 256] = [")
    for b in range(256):
        cands = []
        for f in forms:
            m = int(f["mask"], 16) & 0xFF
            v = int(f["bits"], 16) & 0xFF
            if (b & m) == v:
                cands.append(str(f["idx"]))
        w("    &[%s]," % ", ".join(cands))
    w("];")
    w("")
    # Named form indices, so that hand-written code never writes a form
    # index as a number: the upper-cased form name (non-alphanumerics ->
    # '_'); a name that repeats gets its index appended after the first.
    w("/// Form indices by name (`FORMS[i].idx`): the upper-cased form name, non-alphanumerics")
    w("/// as `_`; a repeated name gets `_<index>` after its first form.")
    w("pub mod idx {")
    seen = set()
    for f in forms:
        n = re.sub(r"[^A-Za-z0-9]+", "_", f["name"]).strip("_").upper()
        if n in seen:
            n = "%s_%d" % (n, f["idx"])
        seen.add(n)
        w("    pub const %s: u8 = %d;" % (n, f["idx"]))
    w("}")
    w("")
    # One decoder per form: the operand descriptors in print order with the
    # form constant, so the per-kind and per-group dispatch of operands.rs
    # folds at compile time (one indirect call per instruction instead of a
    # data-dependent branch per operand).
    w("use crate::operands::{begin, end, operand};")
    w("")
    w("/// Per-form decoders, by form index: mnemonic, operands, finish.")
    w("pub(crate) static DECODERS: [fn(u128, &mut crate::model::Instruction); %d] = [" % len(forms))
    for f in forms:
        w("    decode_%d," % f["idx"])
    w("];")
    for f in forms:
        i = f["idx"]
        w("")
        w("fn decode_%d(raw: u128, insn: &mut crate::model::Instruction) {" % i)
        w("    let f = &FORMS[%d];" % i)
        w("    let %sc = begin(f, raw, insn);" % ("mut " if f["operands"] else ""))
        for j in range(len(f["operands"])):
            w("    operand(&mut c, insn, &f.operands[%d]);" % j)
        w("    end(c, insn);")
        w("}")
    print("\n".join(out))

main()
