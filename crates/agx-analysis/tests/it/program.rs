//! The whole-program view (issue 12): a kernel with the helpers it calls.
//! Apple's `simple_call` (testdata/apple_stack, marysaka/applegpu
//! `stack_tests/simple`): main at 0x180 of `__text` calls
//! `l__Z6helperPU9MTLdeviceKjj` at 0x0, which loops, spills r2 r23-r26 and
//! calls itself.

use crate::common;
use agx_analysis::program::{
    analyze_program, function_body, CodeSource, FunctionCode, NoCode, NoFunction,
};
use agx_analysis::timing::{ModelParams, PartKind};
use agx_isa::asm::assemble_insns;
use agx_isa::Instruction;
use common::Funcs;
use std::path::PathBuf;

use crate::shared_data;

/// Code source over one buffer holding every function at its address.
struct Image(Vec<u8>);

impl CodeSource for Image {
    fn function_at(&self, target: i64) -> Result<FunctionCode, NoFunction> {
        let t = usize::try_from(target)
            .ok()
            .filter(|&t| t < self.0.len())
            .ok_or_else(|| NoFunction::Missing("outside the image".into()))?;
        let (insns, _) = agx_isa::stream::decode_all(&self.0[t..], t as u32);
        let body = function_body(&insns, t as u32);
        Ok(FunctionCode::new(t as u32, Some(format!("f{t:x}")), body))
    }
}

fn image(path: &std::path::Path) -> Option<Vec<u8>> {
    match std::fs::read(path) {
        Ok(b) => Some(b),
        Err(e) => {
            // a panic under CI=true
            shared_data::skip(&format!("{}: {e}", path.display()));
            None
        }
    }
}

fn main_at(img: &[u8], at: usize) -> Vec<Instruction> {
    agx_isa::stream::decode_all(&img[at..], at as u32).0
}

fn names(v: &[String]) -> String {
    v.join(" ")
}

/// The checks of issue 12 "Must show" 1 on one `__text` image.
fn check_simple_call(img: Vec<u8>) {
    let main = main_at(&img, 0x180);
    let src = Image(img);
    let params = ModelParams::default();
    let p = analyze_program(FunctionCode::new(0x180, None, main), &src, &params);
    // main + the helper (found once, although it also calls itself)
    assert_eq!(p.functions.len(), 2, "{:?}", p.assumptions);
    let helper = &p.functions[1];
    assert_eq!(helper.entry, 0);
    // helper: `0: iadd r10, 8, r10` … `122: ret r1`
    assert_eq!(helper.insns.first().map(|i| i.addr), Some(0));
    assert_eq!(helper.insns.last().map(|i| i.mnemonic()), Some("ret"));
    // `32: stack_store … r26l_r26h` → r26h = half 53; five spill stores
    // (`12`-`32`) and five fills (`e4`-`104`)
    assert_eq!(helper.analysis.registers.highest_half_index, 53);
    assert_eq!((helper.analysis.spills, helper.analysis.fills), (5, 5));
    assert!(
        helper.recursive,
        "`96: call 0x0` is the helper calling itself"
    );

    let a = p.kernel_analysis();
    let t = p.kernel_timing();
    assert!(a.registers.highest_half_index >= helper.analysis.registers.highest_half_index);
    assert_eq!(a.registers.allocated_half, 54);
    assert!(a.spills >= helper.analysis.spills && a.fills >= helper.analysis.fills);
    assert_eq!(a.occupancy.threads, 1024, "54 half-regs fit the 104 row");
    // the helper alone, as its own program (it calls itself)
    let alone = analyze_program(
        FunctionCode::new(0, None, helper.insns.clone()),
        &NoCode,
        &params,
    );
    let helper_total = alone.kernel_timing().total_cycles;
    assert!(
        t.total_cycles >= helper_total,
        "kernel {} < helper {helper_total}",
        t.total_cycles
    );
    assert!(t.total_cycles > p.main().timing.total_cycles + helper.timing.total_cycles - 1e-9);

    // call records: main's call resolves to the helper; the helper's own
    // call is recursive
    let main_call = p.calls.iter().find(|c| c.caller == 0).expect("main's call");
    assert_eq!(main_call.at, 0x1b6);
    assert_eq!(main_call.target, Some(0));
    assert!(main_call.resolved && !main_call.recursive);
    assert_eq!(main_call.callee, Some(1));
    assert_eq!(main_call.executions, 1.0);
    let rec = p
        .calls
        .iter()
        .find(|c| c.caller == 1)
        .expect("helper's call");
    assert_eq!(rec.at, 0x96);
    assert!(rec.recursive);
    // `96: call` sits in the loop 0x74–0xc4: it runs trip-count times
    assert_eq!(rec.executions, params.trip_count as f64);
    assert!(
        p.assumptions.iter().any(|s| s.contains("recursive")),
        "{:?}",
        p.assumptions
    );
    // the breakdown has one call part, main's call, costing the helper's whole cost
    let parts: Vec<_> = t
        .breakdown
        .iter()
        .filter(|b| b.part == PartKind::Call)
        .collect();
    assert_eq!(parts.len(), 1);
    assert_eq!(parts[0].at, 0x1b6);
    assert!((parts[0].cycles - helper.inclusive.total_cycles).abs() < 0.01);
    let sum: f64 = t.breakdown.iter().map(|b| b.cycles).sum();
    assert!(
        (sum - t.total_cycles).abs() < 0.01,
        "{sum} vs {}",
        t.total_cycles
    );

    // liveness: the helper writes r11 (`d6: iadd r11, r3, r25`), main
    // stores it after the call (`1c2: device_store … r11`): not live into
    // main's entry. What main sets before the call (r0l, r10, r11 …) is
    // not either; nothing at all is live into a kernel's entry here.
    let entry = p.main().entry_live_registers();
    let written = agx_analysis::liveness::half_names(
        &{
            let mut d = agx_analysis::liveness::GprSet::new();
            for i in &helper.insns {
                d.union_with(&agx_analysis::liveness::def_use(i).def);
            }
            d
        },
        'r',
    );
    assert!(written.iter().any(|r| r == "r11"), "{}", names(&written));
    for r in &entry {
        assert!(
            !written.contains(r),
            "callee-written {r} live into entry: {}",
            names(&entry)
        );
    }
    // the peak counts what main keeps across the call plus the helper's peak
    assert!(a.registers.peak_live_half >= helper.analysis.registers.peak_live_half);
    assert!(a.registers.peak_live_half > p.main().analysis.registers.peak_live_half);
}

#[test]
fn apple_simple_call_testdata() {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/apple_stack/simple_call_TEXT_reconstructed_helper0_main0x180.binimg");
    check_simple_call(std::fs::read(&p).expect("testdata/apple_stack image"));
}

#[test]
fn apple_simple_call_shared_corpus() {
    // the shared corpus wherever it is ($METAL_PROFILER_SHARED or ../shared)
    let Some(dir) = shared_data::shared("corpus/real/marysaka_applegpu_stack_tests") else {
        return;
    };
    let p = dir.join("simple_call_TEXT_reconstructed_helper0_main0x180.binimg");
    if let Some(img) = image(&p) {
        check_simple_call(img);
    }
}

fn asm_at(text: &str, at: u32) -> Vec<Instruction> {
    let mut v = assemble_insns(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    for i in &mut v {
        i.addr += at;
    }
    v
}

#[test]
fn callee_written_register_is_not_live_into_the_entry() {
    // helper at 0x100: reads r2 (argument), writes r4 (result) and r6
    // (scratch it clobbers), returns through r1.
    let helper = asm_at(
        "iadd r6, r2, 1\n\
         iadd r4, r6, r2\n\
         ret r1\n",
        0x100,
    );
    // main: r2 = 7; call helper; store r4 (the helper's result).
    let main_text = "mov_imm r2, 7, 0b0\n\
         call 0x100\n\
         iadd r8, r4, 1\n\
         stop\n";
    let main = assemble_insns(main_text).unwrap_or_else(|e| panic!("{e}"));
    // before issue 12 (main alone): r4 looked live into the entry
    let alone = agx_analysis::analyze_detailed(&main, &agx_analysis::CfgOptions::default());
    let entry_block = alone.cfg.functions[0].entry_block;
    assert!(
        alone.liveness.live_in[entry_block].contains(8),
        "r4l read after the call"
    );

    let p = analyze_program(
        FunctionCode::new(0, None, main),
        &Funcs(vec![FunctionCode::new(
            0x100,
            Some("helper".into()),
            helper,
        )]),
        &ModelParams::default(),
    );
    assert_eq!(p.functions.len(), 2);
    assert!(
        p.main().entry_live.is_empty(),
        "{:?}",
        p.main().entry_live_registers()
    );
    // the helper's summary: r2 read before written (and r1 for `ret`)
    let h = p.functions[1].entry_live_registers();
    assert!(h.contains(&"r2".to_string()), "{h:?}");
    // registers over the program: the helper touches r6 (half 13), main r8
    // (half 17)
    assert_eq!(p.kernel_analysis().registers.highest_half_index, 17);
    let c = &p.calls[0];
    assert!(c.resolved && c.symbol.as_deref() == Some("helper"));
    assert!(
        p.assumptions.iter().all(|s| !s.contains("no code")),
        "{:?}",
        p.assumptions
    );
}

#[test]
fn unresolved_and_indirect_calls_are_stated() {
    let main = assemble_insns("call 0x400\nstop\n").unwrap_or_else(|e| panic!("{e}"));
    let p = analyze_program(
        FunctionCode::new(0, None, main),
        &NoCode,
        &ModelParams::default(),
    );
    assert_eq!(p.calls.len(), 1);
    assert!(!p.calls[0].resolved);
    assert_eq!(p.calls[0].cycles, 0.0);
    assert!(
        p.assumptions
            .iter()
            .any(|s| s.contains("0x400") && s.contains("no code")),
        "{:?}",
        p.assumptions
    );
}

#[test]
fn call_in_a_loop_multiplies() {
    let helper = asm_at("iadd r4, r2, 1\nret r1\n", 0x200);
    let main = assemble_insns(
        "mov_imm r2, 7, 0b0\n\
         loop:\n\
         call 0x200\n\
         iadd r2, r4, r2\n\
         jmp_exec_any loop\n\
         stop\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let params = ModelParams::default();
    let p = analyze_program(
        FunctionCode::new(0, None, main),
        &Funcs(vec![FunctionCode::new(0x200, None, helper)]),
        &params,
    );
    let c = &p.calls[0];
    assert_eq!(c.executions, params.trip_count as f64);
    let h = p.functions[1].inclusive.total_cycles;
    assert!(h > 0.0);
    assert!((c.cycles - h * params.trip_count as f64).abs() < 0.01);
    let t = p.kernel_timing();
    assert!((t.total_cycles - (p.main().timing.total_cycles + c.cycles)).abs() < 0.01);
}
