//! Threadgroup bank conflicts (issue 35 item 3) on assembled kernels: the
//! ways of a store at `thread_position_in_threadgroup.x * S` bytes follow
//! from the stride under the GPU model's bank model (32 banks x 4 B, an
//! assumption: banks.rs), computed here from that model, not copied from a
//! run.

use agx_analysis::program::{analyze_program, FunctionCode, NoCode};
use agx_analysis::timing::suggest::severity_for_share;
use agx_analysis::timing::{ModelParams, Suggestion};
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
    program(&text, &ModelParams::default())
}

fn program(text: &str, p: &ModelParams) -> agx_analysis::program::Program {
    let insns = assemble_insns_at(text, 0).unwrap_or_else(|e| panic!("{e}\n{text}"));
    analyze_program(FunctionCode::new(0, None, insns), &NoCode, p)
}

fn pad_rule(p: &agx_analysis::program::Program) -> Vec<&Suggestion> {
    p.main()
        .suggestions
        .iter()
        .filter(|s| s.rule == "pad-threadgroup-array")
        .collect()
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

#[test]
fn tgmem_pad_threadgroup_array_states_the_pitch_and_the_padding() {
    // a column walk of 32-float rows: 32 ways, one word of padding
    let p = program_at_stride(128);
    let s = pad_rule(&p);
    assert_eq!(s.len(), 1, "{s:?}");
    let s = s[0];
    assert_eq!(s.figures.get("bank_conflict_ways"), 32.0);
    assert_eq!(s.figures.get("pitch_bytes"), 128.0);
    assert_eq!(s.figures.get("padding_bytes"), 4.0);
    assert!(!s.fact.is_empty());
    assert_eq!(s.severity, severity_for_share(s.share_pct().unwrap()));
    assert!(s.message.contains("132 B"), "{}", s.message);
    // conflict-free strides: silent
    for stride in [4, 12, 132] {
        assert!(
            pad_rule(&program_at_stride(stride)).is_empty(),
            "stride {stride}"
        );
    }
    // rows: an 8x4 threadgroup storing tile[x][y] (lid.x * 128 + lid.y * 4):
    // runs of 8 lanes 128 B apart share a bank (8 ways); padding the 128 B
    // pitch by one word leaves 4 ways, by four words (144 B) none
    let params = ModelParams {
        threadgroup: Some(agx_analysis::address::Shape::parse("8x4x1", "test").unwrap()),
        ..ModelParams::default()
    };
    let text = "get_sr r1, sr48\nget_sr r4, sr49\nimadd r2, r1, 128, 0\nimadd r2, r4, 4, r2\nthreadgroup_store i32, x, r3, r2l, 0\nstop\n";
    let p = program(text, &params);
    let a = p
        .main()
        .access
        .accesses
        .iter()
        .find(|a| a.space == "threadgroup")
        .unwrap();
    assert_eq!(a.bank_conflict_ways, Some(8), "{a:?}");
    let s = pad_rule(&p);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].figures.get("pitch_bytes"), 128.0);
    assert_eq!(s[0].figures.get("padding_bytes"), 16.0);
}

/// The `privatise-atomics` suggestions of a kernel.
fn atomics_rule(p: &agx_analysis::program::Program) -> Vec<&Suggestion> {
    p.main()
        .suggestions
        .iter()
        .filter(|s| s.rule == "privatise-atomics")
        .collect()
}

/// A device atomic add at `bins[r1]` after `setup`.
fn device_atomic(setup: &str) -> agx_analysis::program::Program {
    let text = format!(
        "{setup}\natomic add, 0, None, u2_u3, r1, signed, r2, 1, 0, 1, 4, 2\nwait 0\nstop\n"
    );
    program(&text, &ModelParams::default())
}

fn atomic_fact(p: &agx_analysis::program::Program) -> agx_analysis::atomics::AtomicFact {
    p.main()
        .access
        .accesses
        .iter()
        .filter(|a| a.space == "device")
        .find_map(|a| a.atomic.as_deref().copied())
        .expect("a device atomic fact")
}

#[test]
fn tgmem_privatise_atomics_fires_on_a_shared_device_address_only() {
    // every lane adds to bins[0]: 32 lanes per address
    let p = device_atomic("mov_imm r1, 0, 0b0");
    let f = atomic_fact(&p);
    assert_eq!(
        (f.lanes, f.lanes_per_address, f.privatised),
        ("uniform", Some(32), false)
    );
    // one word, the same in every SIMD-group of the grid
    assert_eq!((f.words, f.words_scope), (Some(1), Some("grid")));
    let s = atomics_rule(&p);
    assert_eq!(s.len(), 1, "{:?}", p.main().suggestions);
    assert_eq!(s[0].figures.get("lanes_per_address"), 32.0);
    assert!(!s[0].fact.is_empty());
    assert_eq!(s[0].severity, severity_for_share(s[0].share_pct().unwrap()));
    // bins[lid.x]: one lane per address, silent
    let p = device_atomic("get_sr r1, sr48");
    let f = atomic_fact(&p);
    assert_eq!(f.lanes, "distinct");
    // 32 words, each SIMD-group its own
    assert_eq!((f.words, f.words_scope), (Some(32), Some("simdgroup")));
    assert!(atomics_rule(&p).is_empty());
    // a threadgroup atomic and a barrier before it: privatised, silent
    let p = device_atomic(
        "mov_imm r1, 0, 0b0\nthreadgroup_atomic add, None, r2l, 0, r3, 0, 2, 128, 0\nthreadgroup_barrier",
    );
    assert!(atomic_fact(&p).privatised);
    assert!(atomics_rule(&p).is_empty());
    // one elected lane per SIMD-group issues it (subgroupElect, as in
    // stream_compact_ballot): already aggregated, silent
    let text = "mov_imm r1, 0, 0b0\nget_sr r4l, sr58\nif_icmp r0l, ueq, r4l, 0, 1\natomic add, 0, None, u2_u3, r1, signed, r2, 1, 0, 1, 4, 2\nwait 0\npop_exec r0l, 1\nstop\n";
    let p = program(text, &ModelParams::default());
    assert_eq!(atomic_fact(&p).lanes, "one_lane");
    assert!(atomics_rule(&p).is_empty());
}
