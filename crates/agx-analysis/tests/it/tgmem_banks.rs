//! Threadgroup bank conflicts (issue 35 item 3) on assembled kernels: the
//! ways of a store at `thread_position_in_threadgroup.x * S` bytes follow
//! from the stride under the GPU model's bank model (32 banks x 4 B, an
//! assumption: banks.rs), computed here from that model, not copied from a
//! run.

use agx_analysis::program::{analyze_program, FunctionCode, NoCode};
use agx_analysis::timing::ModelParams;
use agx_isa::asm::assemble_insns_at;

/// The bank-conflict ways of the one threadgroup store of a kernel storing
/// at `lid.x * stride` bytes (`lid.x` from sr48).
fn ways_at_stride(stride: i64) -> Option<u32> {
    let p = program_at_stride(stride);
    let acc = &p.main().access.accesses;
    let tg: Vec<_> = acc.iter().filter(|a| a.space == "threadgroup").collect();
    assert_eq!(tg.len(), 1, "{acc:?}");
    assert_eq!(tg[0].lane_stride, Some(stride), "{:?}", tg[0]);
    tg[0].bank_conflict_ways
}

fn program_at_stride(stride: i64) -> agx_analysis::program::Program {
    let text = format!(
        "get_sr r1, sr48\nimadd r2, r1, {stride}, 0\nthreadgroup_store i32, x, r3, r2l, 0\nstop\n"
    );
    let insns = assemble_insns_at(&text, 0).unwrap_or_else(|e| panic!("{e}\n{text}"));
    analyze_program(
        FunctionCode::new(0, None, insns),
        &NoCode,
        &ModelParams::default(),
    )
}

/// Distinct words per bank for 32 lanes `stride` bytes apart under the
/// default model's banking, counted directly.
fn expected(stride: i64) -> u32 {
    let m = ModelParams::default()
        .gpu
        .threadgroup_banks
        .expect("the default model has a bank model");
    let mut words: Vec<i64> = (0..32).map(|l| l * stride / m.word_bytes as i64).collect();
    words.sort_unstable();
    words.dedup();
    let mut per = vec![0u32; m.banks as usize];
    for w in words {
        per[w.rem_euclid(m.banks as i64) as usize] += 1;
    }
    *per.iter().max().unwrap()
}

#[test]
fn tgmem_bank_ways_follow_the_stride() {
    for stride in [4, 8, 12, 16, 64, 128, 132] {
        let got = ways_at_stride(stride);
        assert_eq!(got, Some(expected(stride)), "stride {stride}");
    }
    // the column walk of an unpadded 32-float row conflicts 32 ways; one
    // word of padding removes it
    assert_eq!(ways_at_stride(128), Some(32));
    assert_eq!(ways_at_stride(132), Some(1));
}

#[test]
fn tgmem_a_conflict_costs_its_replays_on_the_memory_pipe() {
    let mem = |stride| {
        program_at_stride(stride)
            .kernel_timing()
            .outside_loops
            .pipes
            .mem
    };
    let p = ModelParams::default();
    let gpu = p.gpu.table();
    let l1_bw = p.mem.l1_bytes_per_cycle_per_core / gpu.schedulers_per_core as f64;
    // a conflict-free request is charged nothing beyond what it was before
    // (the same as a 12 B stride, also conflict-free)
    assert_eq!(mem(4), mem(12));
    // 32 ways: 31 replays of 32 lanes x 4 B through the on-core data path
    let want = 31.0 * 4.0 * gpu.simd_width as f64 / l1_bw;
    assert!(
        (mem(128) - mem(4) - want).abs() < 1e-9,
        "{} vs {} + {want}",
        mem(128),
        mem(4)
    );
}
