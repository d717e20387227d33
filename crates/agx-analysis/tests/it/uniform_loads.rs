//! Issue 22, item 4: loads whose address is uniform (one value for the
//! whole SIMD-group) in the memory model. The divergence analysis proves the
//! address uniform (`Divergence::uniform_loads`); the timing model takes that
//! set and charges such a load's bytes once per SIMD-group, and a device one
//! stalls as an L1 hit. Every expected figure is computed here from the GPU
//! model's parameters, none is copied from a run.

use agx_analysis::program::{analyze_program, FunctionCode, NoCode, Program};
use agx_analysis::timing::{KernelTiming, ModelParams, RegionTiming, Suggestion};
use agx_isa::asm::assemble_insns_at;
use agx_isa::{Instruction, MemDir, MemSpace};

/// The suggestions of rule `rule`.
fn of_rule<'a>(all: &'a [Suggestion], rule: &str) -> Vec<&'a Suggestion> {
    all.iter().filter(|s| s.rule == rule).collect()
}

fn asm(text: &str) -> Vec<Instruction> {
    assemble_insns_at(text, 0).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn program(text: &str) -> Program {
    let main = FunctionCode::new(0, None, asm(text));
    analyze_program(main, &NoCode, &ModelParams::default())
}

fn julia_vadd() -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/uniform/julia_vadd_bounds.s");
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Addresses of the device loads (in order).
fn device_loads(insns: &[Instruction]) -> Vec<u32> {
    insns
        .iter()
        .filter(|i| {
            i.mem_access()
                .is_some_and(|m| m.dir == MemDir::Load && m.space == MemSpace::Device)
        })
        .map(|i| i.addr)
        .collect()
}

/// Addresses the timing record marks `uniform_address`.
fn marked(t: &KernelTiming) -> Vec<u32> {
    t.instructions_detail
        .iter()
        .filter(|d| d.uniform_address)
        .map(|d| d.addr)
        .collect()
}

/// Each device access's access facts by address: (lines per request,
/// loop-invariant load) (issue 27), and the cache model's DRAM bytes
/// (issue 35: what the record says one execution brings from DRAM).
fn facts(
    insns: &[Instruction],
    a: &agx_analysis::address::Addresses,
) -> Vec<(u32, Option<u32>, bool, Option<f64>)> {
    a.accesses
        .iter()
        .map(|x| {
            (
                insns[x.index as usize].addr,
                x.lines_per_request,
                x.loop_stride == Some(0) && x.in_loop.is_some() && x.dir == "load",
                x.dram_bytes,
            )
        })
        .collect()
}

/// The region's memory_bandwidth and device_bandwidth from the model's
/// parameters (the memory rule of docs/analysis.md): a load in `uniform`
/// its bytes per lane once; else the cache lines its access facts give x
/// the line size; else bytes per lane x the SIMD width; a loop-invariant
/// load no DRAM bytes. The DRAM share: the record's `dram_bytes` where the
/// cache model gave it (the model charges what the record says), else
/// every byte but a loop-invariant load's (less an explicit hit rate).
fn expected_bandwidth(
    insns: &[Instruction],
    uniform: &[u32],
    p: &ModelParams,
    facts: &[(u32, Option<u32>, bool, Option<f64>)],
) -> (f64, f64) {
    let gpu = p.gpu.table();
    let sched = gpu.schedulers_per_core as f64;
    let l1 = p.mem.l1_bytes_per_cycle_per_core / sched;
    let dram = p.mem.dram_bytes_per_cycle_per_core / sched;
    let miss = 1.0 - p.mem.l1_hit_rate.unwrap_or(0.0);
    let (mut bytes, mut dram_bytes) = (0.0, 0.0);
    for i in insns {
        let Some(m) = i.mem_access().filter(|m| m.space == MemSpace::Device) else {
            continue;
        };
        let f = facts.iter().find(|x| x.0 == i.addr);
        let b = if m.dir == MemDir::Load && uniform.contains(&i.addr) {
            m.bytes_per_lane() as f64
        } else if let Some(l) = f.and_then(|x| x.1) {
            l as f64 * p.mem.cache_line_bytes
        } else {
            m.bytes_per_lane() as f64 * gpu.simd_width as f64
        };
        bytes += b;
        if let Some(d) = f.and_then(|x| x.3) {
            dram_bytes += d;
        } else if !f.is_some_and(|x| x.2) {
            dram_bytes += b * miss;
        }
    }
    (bytes / l1, dram_bytes / dram)
}

fn close(a: f64, b: f64, what: &str) {
    assert!(
        (a - b).abs() <= 1e-3 * b.abs().max(1.0),
        "{what}: {a} vs {b}"
    );
}

fn wait_of(r: &RegionTiming, load: u32) -> &agx_analysis::timing::model::WaitStall {
    r.waits
        .iter()
        .find(|w| w.loads.contains(&load))
        .unwrap_or_else(|| panic!("no wait for 0x{load:x}: {:?}", r.waits))
}

#[test]
fn julia_vadd_length_loads_are_uniform_address() {
    let text = julia_vadd();
    let p = program(&text);
    let f = p.main();
    assert!(f.divergence.unknown.is_none(), "{:?}", f.divergence.unknown);
    let loads = device_loads(&f.insns);
    // a's dimensions, b's and c's lengths, then a[i] and b[i]
    assert_eq!(loads.len(), 5, "{loads:x?}");
    let (lengths, per_thread) = loads.split_at(3);
    // the analysis' set, as indices; the record's flag, as addresses
    let by_index: Vec<u32> = f
        .divergence
        .uniform_loads
        .iter()
        .map(|&i| f.insns[i].addr)
        .collect();
    assert_eq!(by_index, lengths);
    assert_eq!(marked(&f.timing), lengths);
    assert_eq!(f.divergence.counts.uniform_loads, 3);
    assert_eq!(p.divergence_counts().uniform_loads, 3);
    for a in per_thread {
        assert!(!marked(&f.timing).contains(a), "0x{a:x} is thread-indexed");
    }
    // the bounds checks are divergent (the thread index against a length)
    assert_eq!(f.divergence.counts.if_divergent, 3, "{:?}", f.divergence);
}

#[test]
fn julia_vadd_bandwidth_charges_the_lengths_once_per_simd_group() {
    let text = julia_vadd();
    let p = program(&text);
    let f = p.main();
    let params = &f.timing.params;
    let lengths = &device_loads(&f.insns)[..3];
    let r = &f.timing.outside_loops;
    let (l1, dram) = expected_bandwidth(&f.insns, lengths, params, &facts(&f.insns, &f.access));
    close(
        r.bound.components["memory_bandwidth"],
        l1,
        "memory_bandwidth",
    );
    close(
        r.bound.components["device_bandwidth"],
        dram,
        "device_bandwidth",
    );
    close(
        f.timing.cycles.device_bandwidth,
        dram,
        "cycles.device_bandwidth",
    );
    // what the lengths would have cost per thread (the model before issue
    // 22): their share was simd_width times larger
    // (the per-thread rows keep their line charges; the lengths are charged
    // per thread)
    let per_row: Vec<_> = facts(&f.insns, &f.access)
        .into_iter()
        .filter(|x| !lengths.contains(&x.0))
        .collect();
    let (_, per_thread) = expected_bandwidth(&f.insns, &[], params, &per_row);
    let simd = params.gpu.table().simd_width as f64;
    let len_bytes: f64 = f
        .insns
        .iter()
        .filter(|i| lengths.contains(&i.addr))
        .map(|i| i.mem_access().unwrap().bytes_per_lane() as f64)
        .sum();
    let sched = params.gpu.table().schedulers_per_core as f64;
    let dram_bw = params.mem.dram_bytes_per_cycle_per_core / sched;
    // (at least the broadcast's saving: the cache model may share the
    // lengths' line further, between SIMD-groups)
    let saved = len_bytes * (simd - 1.0) / dram_bw;
    assert!(
        per_thread - dram >= saved * (1.0 - 1e-9),
        "the lengths' share saved: {} vs {saved}",
        per_thread - dram
    );
    assert!(dram < per_thread);
    // the 16-byte dimension vector and two 4-byte lengths
    assert_eq!(len_bytes, 24.0);
}

#[test]
fn julia_vadd_length_loads_stall_as_l1_hits() {
    let p = program(&julia_vadd());
    let f = p.main();
    let mem = &f.timing.params.mem;
    let loads = device_loads(&f.insns);
    let r = &f.timing.outside_loops;
    for &a in &loads[..3] {
        assert_eq!(wait_of(r, a).latency, mem.l1_hit_latency, "0x{a:x}");
    }
    for &a in &loads[3..] {
        assert_eq!(wait_of(r, a).latency, mem.device_latency(), "0x{a:x}");
    }
    assert!(mem.l1_hit_latency < mem.device_latency());
}

#[test]
fn julia_vadd_bottleneck_and_suggestions_do_not_blame_the_bounds_checks() {
    let p = program(&julia_vadd());
    let f = p.main();
    let lengths = device_loads(&f.insns)[..3].to_vec();
    let t = &f.timing;
    let r = &t.outside_loops;
    // still DRAM-bound: on the thread-indexed loads and the store, whose
    // bytes are most of the charge
    assert_eq!(r.bound.by, "device_bandwidth", "{}", r.bottleneck);
    let (_, only_per_thread) = {
        // the bytes of the per-thread accesses alone
        let without: Vec<Instruction> = f
            .insns
            .iter()
            .filter(|i| !lengths.contains(&i.addr))
            .cloned()
            .collect();
        expected_bandwidth(&without, &[], &t.params, &facts(&f.insns, &f.access))
    };
    assert!(only_per_thread > 0.9 * r.bound.components["device_bandwidth"]);
    for s in &f.suggestions {
        if s.rule == "uniform-address-loads" {
            continue;
        }
        assert!(
            !lengths.contains(&s.offset),
            "{} blames a length load: {}",
            s.rule,
            s.message
        );
        for a in &lengths {
            assert!(
                !s.message.contains(&format!("0x{a:x} ")),
                "{}: {}",
                s.rule,
                s.message
            );
        }
    }
    // named once, with their bytes per SIMD-group and what they would be
    // per thread
    let u = of_rule(&f.suggestions, "uniform-address-loads");
    assert_eq!(u.len(), 1, "{:?}", f.suggestions);
    let simd = t.params.gpu.table().simd_width as f64;
    assert_eq!(u[0].offset, lengths[0]);
    assert_eq!(u[0].figures.get("uniform_loads"), 3.0);
    assert_eq!(u[0].figures.get("bytes_per_simd_group"), 24.0);
    assert_eq!(u[0].figures.get("bytes_if_per_thread"), 24.0 * simd);
    assert!(
        u[0].message.contains("once per SIMD-group"),
        "{}",
        u[0].message
    );
}

/// `if_on`-style snippets: a load whose address comes from `setup`'s r1.
fn load_from_r1(setup: &str) -> Program {
    program(&format!(
        "{setup}\ndevice_load 0, i32, x, r2, u0_u1, r1, unsigned, lsl 2\nwait 0\n\
         fadd32 r3, r2, r2\ndevice_store 0, i32, x, r3, u2_u3, r4, unsigned, lsl 2, 0\nstop\n"
    ))
}

fn first_load_uniform(p: &Program) -> bool {
    let f = p.main();
    let a = device_loads(&f.insns)[0];
    marked(&f.timing).contains(&a)
}

#[test]
fn a_load_at_the_thread_position_stays_per_thread() {
    let p = load_from_r1(
        "get_sr r1, sr80 (thread_position_in_grid.x)\nget_sr r4, sr80 (thread_position_in_grid.x)",
    );
    let f = p.main();
    assert!(!first_load_uniform(&p));
    assert!(f.divergence.uniform_loads.is_empty());
    assert_eq!(f.divergence.counts.uniform_loads, 0);
    // every byte per thread
    let (l1, dram) =
        expected_bandwidth(&f.insns, &[], &f.timing.params, &facts(&f.insns, &f.access));
    let c = &f.timing.outside_loops.bound.components;
    close(c["memory_bandwidth"], l1, "memory_bandwidth");
    close(c["device_bandwidth"], dram, "device_bandwidth");
    let w = wait_of(&f.timing.outside_loops, device_loads(&f.insns)[0]);
    assert_eq!(w.latency, f.timing.params.mem.device_latency());
    // derived from the thread position: still divergent
    assert!(!first_load_uniform(&load_from_r1(
        "get_sr r5, sr80 (thread_position_in_grid.x)\niadd r1, r5, 4"
    )));
    // lane number
    assert!(!first_load_uniform(&load_from_r1(
        "get_sr r1, sr52 (thread_index_in_simdgroup)"
    )));
    // a register never written (undefined at entry: divergent)
    assert!(!first_load_uniform(&load_from_r1("")));
}

#[test]
fn uniform_sources_give_a_uniform_address() {
    // threadgroup position: the same for the SIMD-group
    let p = load_from_r1("get_sr r1, sr0 (threadgroup_position_in_grid.x)");
    assert!(first_load_uniform(&p));
    let f = p.main();
    let u = &device_loads(&f.insns)[..1];
    let (l1, dram) = expected_bandwidth(&f.insns, u, &f.timing.params, &facts(&f.insns, &f.access));
    let c = &f.timing.outside_loops.bound.components;
    close(c["memory_bandwidth"], l1, "memory_bandwidth");
    close(c["device_bandwidth"], dram, "device_bandwidth");
    // a uniform register plus an immediate
    assert!(first_load_uniform(&load_from_r1("iadd r1, u6, 8")));
    // a value loaded from a uniform address (a pointer or a length)
    assert!(first_load_uniform(&load_from_r1(
        "device_load 1, i32, x, r1, u4_u5, 3, unsigned\nwait 1"
    )));
}

#[test]
fn a_uniform_load_under_a_divergent_branch_is_uniform_among_its_lanes() {
    // the active lanes of the arm all read the one address
    let p = program(
        "get_sr r1, sr80 (thread_position_in_grid.x)\n\
         mov_imm r0l, 0\n\
         if_icmp r0l, ult, r1, 7, 1\n\
         device_load 0, i32, x, r2, u0_u1, 5, unsigned\n\
         wait 0\n\
         pop_exec r0l, 1\n\
         stop\n",
    );
    assert!(first_load_uniform(&p));
    // a value written under the divergent branch is divergent after it
    let p = program(
        "get_sr r1, sr80 (thread_position_in_grid.x)\n\
         mov_imm r3, 0, 0b0\n\
         mov_imm r0l, 0\n\
         if_icmp r0l, ult, r1, 7, 1\n\
         mov_imm r3, 4, 0b0\n\
         pop_exec r0l, 1\n\
         device_load 0, i32, x, r2, u0_u1, r3, unsigned\n\
         wait 0\n\
         stop\n",
    );
    assert!(!first_load_uniform(&p));
}

#[test]
fn nothing_is_uniform_when_the_analysis_gives_up() {
    // r0l (the exec-mask counter) written with a register: the analysis
    // does not follow it and declares the function divergent
    let p = program(
        "device_load 0, i32, x, r2, u0_u1, 5, unsigned\n\
         wait 0\n\
         iadd r0l, r2l, 0\n\
         stop\n",
    );
    let f = p.main();
    assert!(f.divergence.unknown.is_some(), "{:?}", f.divergence);
    assert!(f.divergence.uniform_loads.is_empty());
    assert!(marked(&f.timing).is_empty());
    let (_, dram) =
        expected_bandwidth(&f.insns, &[], &f.timing.params, &facts(&f.insns, &f.access));
    close(
        f.timing.outside_loops.bound.components["device_bandwidth"],
        dram,
        "device_bandwidth",
    );
}

#[test]
fn tile_suggestion_counts_only_the_per_thread_loads_of_a_loop() {
    // a grid-stride loop that re-reads the length every iteration (uniform
    // address) beside its thread-indexed load: memory-bound, and the tile
    // suggestion names one global load, not two
    let p = program(
        "get_sr r1, sr80 (thread_position_in_grid.x)\n\
         loop:\n\
         device_load 0, i32, x, r2, u0_u1, 2, unsigned\n\
         device_load 1, i32, x, r3, u2_u3, r1, unsigned, lsl 2\n\
         wait 0\n\
         wait 1\n\
         fadd32 r4, r3, r3\n\
         device_store 0, i32, x, r4, u4_u5, r1, unsigned, lsl 2, 0\n\
         iadd r1, r1, u8\n\
         jmp_exec_any loop\n\
         stop\n",
    );
    let f = p.main();
    let loads = device_loads(&f.insns);
    assert_eq!(marked(&f.timing), vec![loads[0]]);
    let l = &f.timing.loops[0];
    assert!(
        matches!(
            l.body.bound.by,
            "device_bandwidth" | "memory_bandwidth" | "memory_latency"
        ),
        "{}",
        l.body.bottleneck
    );
    // (issue 27) the thread-indexed load streams: no thread and no later
    // iteration reads its element again, so tiling would not help and the
    // rule is silent; the length, read at one address every iteration, is
    // the loop-invariant load to hoist
    let tile = of_rule(&f.suggestions, "tile-global-loads");
    assert!(tile.is_empty(), "{:?}", f.suggestions);
    let hoist = of_rule(&f.suggestions, "hoist-invariant-loads");
    assert_eq!(hoist.len(), 1, "{:?}", f.suggestions);
    assert_eq!(hoist[0].offset, loads[0]);
    let (l1, dram) = expected_bandwidth(
        &f.insns[1..],
        &loads[..1],
        &f.timing.params,
        &facts(&f.insns, &f.access),
    );
    close(
        l.body.bound.components["memory_bandwidth"],
        l1,
        "loop memory_bandwidth",
    );
    close(
        l.body.bound.components["device_bandwidth"],
        dram,
        "loop device_bandwidth",
    );
}

/// The per-instruction detail stays small with its `uniform_address` flag
/// (one per instruction of a kernel: a million-instruction kernel holds a
/// million of them).
#[test]
fn insn_detail_stays_small() {
    assert!(std::mem::size_of::<agx_analysis::timing::InsnDetail>() <= 72);
}
