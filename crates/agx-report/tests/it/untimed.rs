//! The profile of code no timing model applies to (Apple9, issue 28 item
//! 4): the example kernel's record (its loop, memory instructions,
//! register lower bound, no cycle figure in any view), every Apple9 stream
//! and single-instruction case of testdata (and the shared corpus when
//! present) profiled without a panic, every document valid against
//! docs/schema.json, and the record's own invariants.

use agx_analysis::{apple9_adapter, untimed};
use agx_isa::isa::APPLE9;
use agx_report::untimed::{html_document, json_document, text};
use agx_report::KernelRecord;
use std::path::{Path, PathBuf};

use crate::shared_data;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn record(name: &str, code: &[u8], base: u32) -> KernelRecord {
    let d = apple9_adapter::decode(code, base);
    let model = agx_analysis::gpu::model_for_gpu(16, "G16G", false).expect("a G16 model");
    let u = untimed::analyze(&d, model);
    KernelRecord::build_untimed(name.into(), Some("G16G".into()), &APPLE9, &d, &u)
}

fn validator() -> jsonschema::Validator {
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join("docs/schema.json")).unwrap())
            .unwrap();
    jsonschema::validator_for(&schema).expect("schema compiles")
}

fn check_schema(v: &jsonschema::Validator, name: &str, r: &KernelRecord) {
    let doc: serde_json::Value =
        serde_json::from_str(&json_document(std::slice::from_ref(r))).unwrap();
    let errors: Vec<String> = v
        .iter_errors(&doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .take(5)
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:?}");
}

/// A number followed by a cycle unit (`12 cy`, `3.5 cycles`): none may
/// appear in an untimed view.
fn cycle_figures(s: &str) -> Vec<String> {
    let mut found = Vec::new();
    let words: Vec<&str> = s
        .split(|c: char| c.is_whitespace() || c == '<' || c == '>')
        .filter(|w| !w.is_empty())
        .collect();
    for w in words.windows(2) {
        let num = w[0].trim_start_matches('~');
        let unit = w[1].trim_end_matches([',', '.', ';', ')']);
        if !num.is_empty()
            && num.chars().all(|c| c.is_ascii_digit() || c == '.')
            && matches!(unit, "cy" | "cycle" | "cycles" | "cy/iter")
        {
            found.push(format!("{} {}", w[0], w[1]));
        }
    }
    for w in &words {
        if w.ends_with("cy") && w[..w.len() - 2].parse::<f64>().is_ok() {
            found.push(w.to_string());
        }
    }
    found
}

/// Invariants every record keeps, whatever the code.
fn check_invariants(name: &str, r: &KernelRecord) {
    let u = r.untimed.as_deref().expect("untimed sections");
    assert!(r.timing.is_none(), "{name}");
    let f = &u.framing;
    assert_eq!(f.named + f.unknown, r.instructions, "{name}");
    assert!(
        (f.framed_bytes + f.gap_bytes) as u64 <= r.code_bytes,
        "{name}"
    );
    assert!(f.unknown <= f.operands_incomplete, "{name}");
    assert_eq!(u.unknowns.len(), f.operands_incomplete, "{name}");
    assert_eq!(
        u.registers.lower_bound,
        f.operands_incomplete > 0 || f.stopped.is_some(),
        "{name}"
    );
    assert_eq!(u.registers.file_gprs, APPLE9.gprs, "{name}");
    assert_eq!(u.mix.values().sum::<usize>(), r.instructions, "{name}");
    if let (Some(p), Some(_)) = (u.registers.peak_live_half, u.registers.highest_half_index) {
        assert!(p <= 256, "{name}");
    }
    for m in &u.memory {
        assert!(m.in_loop.is_none_or(|l| l < u.loops.len()), "{name}");
        // the access facts (from the bits) name the registers the listing
        // prints (from the operand decoders)
        for reg in [&m.site.data, &m.site.base, &m.site.index] {
            assert!(m.text.contains(reg.as_str()), "{name}: {reg} in {}", m.text);
        }
        assert_eq!(
            m.site.bytes_per_lane,
            m.site.components as u32
                * if m.site.elem == "i32" {
                    4
                } else if m.site.elem == "i16" {
                    2
                } else {
                    1
                },
            "{name}"
        );
    }
    for l in &u.loops {
        assert!(l.start <= l.header && l.header <= l.end, "{name}");
        for off in &l.memory {
            assert!(u.memory.iter().any(|m| m.offset == *off), "{name}");
        }
    }
    let t = text(r);
    assert!(
        cycle_figures(&t).is_empty(),
        "{name}: {:?}",
        cycle_figures(&t)
    );
    let h = html_document(std::slice::from_ref(r));
    assert!(
        cycle_figures(&h).is_empty(),
        "{name}: {:?}",
        cycle_figures(&h)
    );
}

#[test]
fn example_kernel_profile() {
    let bytes = std::fs::read(repo().join("examples/apple9_loop.a9bin")).unwrap();
    let r = record("apple9_loop", &bytes[0x40..], 0);
    let u = r.untimed.as_deref().unwrap();
    check_invariants("example", &r);
    check_schema(&validator(), "example", &r);
    assert_eq!((r.instructions, r.code_bytes), (9, 0x42));
    assert_eq!(u.framing.framed_fraction, 1.0);
    assert_eq!(u.framing.stop_offset, Some(0x3e));
    // the loop: from the device_load to the jmp_exec_any back to it
    assert_eq!(u.loops.len(), 1, "{r:#?}");
    let l = &u.loops[0];
    assert_eq!((l.start, l.end, l.depth, l.instructions), (0x8, 0x2e, 1, 5));
    assert_eq!(l.memory, vec![0x8, 0x1c]);
    assert_eq!(r.backward_branches, 1);
    // its memory: a 4-byte load into r2 and an 8-byte store from r0_r1
    let (ld, st) = (&u.memory[0], &u.memory[1]);
    assert_eq!(
        (
            ld.site.dir.name(),
            ld.site.bytes_per_lane,
            ld.site.data.as_str()
        ),
        ("load", 4, "r2")
    );
    assert_eq!(
        (ld.site.base.as_str(), ld.site.index.as_str(), ld.site.shift),
        ("u6_u7", "r1", 2)
    );
    assert_eq!(
        (
            st.site.dir.name(),
            st.site.bytes_per_lane,
            st.site.data.as_str()
        ),
        ("store", 8, "r0_r1")
    );
    assert!(u
        .memory
        .iter()
        .all(|m| m.site.space.name() == "device" && m.in_loop == Some(0)));
    assert!(u.memory.iter().all(|m| m.lane_pattern == "unknown"
        && m.lane_pattern_reason
            .as_deref()
            .is_some_and(|s| s.contains("per-lane"))));
    // registers: r0..r4 decoded; the exec-mask instructions have no
    // register operand (docs/apple9-exec-mask.md), so the figures are exact
    let g = &u.registers;
    assert_eq!((g.highest_gpr, g.gprs_touched), (Some(4), 5));
    assert!(!g.lower_bound, "{g:?}");
    assert_eq!(g.peak_live_gprs, Some(5), "{g:?}");
    // the wait group fields as decoded (get_sr 0, load 5, store 0)
    let groups: Vec<(u32, Option<u8>)> = u.waits.iter().map(|w| (w.offset, w.wait_group)).collect();
    assert_eq!(groups, vec![(0, Some(0)), (0x8, Some(5)), (0x1c, Some(0))]);
    assert!(u.timing.model.is_none());
    let t = text(&r);
    for want in [
        "Loop 0  0x8–0x2e",
        "device load 1×i32 = 4 B/lane",
        "highest          r4 (5 of 96 GPRs",
        "timing: none",
    ] {
        assert!(t.contains(want), "{want} in\n{t}");
    }
}

/// A `wait` mask carried in an instruction is reported as decoded.
#[test]
fn waits_carried_in_bits() {
    let dir = repo().join("testdata/apple9");
    let bytes = std::fs::read(dir.join("stream10_wait.a9bin")).unwrap();
    let r = record("stream10_wait", &bytes, 0);
    let u = r.untimed.as_deref().unwrap();
    let listing = std::fs::read_to_string(dir.join("stream10_wait.expected.txt")).unwrap();
    let printed = listing.matches("wait ").count();
    assert!(printed > 0);
    // every listing line with a `wait N` operand has its groups in waits[]
    let with_mask = u.waits.iter().filter(|w| !w.waits_on.is_empty()).count();
    assert!(with_mask > 0, "{r:#?}");
    for w in u.waits.iter().filter(|w| !w.waits_on.is_empty()) {
        assert!(w.waits_on.iter().all(|&g| g < 6), "{w:?}");
    }
}

/// Every Apple9 stream of testdata (and the shared corpus's tk-streams
/// when present) and every single-instruction case profiles without a
/// panic, with a schema-valid document and the record's invariants.
#[test]
fn every_stream_and_case_profiles() {
    let v = validator();
    let mut dirs = vec![repo().join("testdata/apple9")];
    dirs.extend(shared_data::shared("corpus/apple9/tk-streams"));
    let mut n = 0;
    for dir in &dirs {
        for p in shared_data::files_with_exts(dir, &["bin", "a9bin"]) {
            let bytes = std::fs::read(&p).unwrap();
            let name = p.display().to_string();
            let r = record(&name, &bytes, 0);
            check_invariants(&name, &r);
            check_schema(&v, &name, &r);
            n += 1;
        }
    }
    assert!(n >= 2);
    let mut cases = vec![repo().join("testdata/apple9/tk-single.jsonl")];
    cases.extend(shared_data::shared(
        "corpus/apple9/tk-single/encodings.jsonl",
    ));
    let mut k = 0;
    for file in cases {
        for line in std::fs::read_to_string(&file).unwrap().lines() {
            let c: serde_json::Value = serde_json::from_str(line).unwrap();
            let Some(hex) = c["hex"].as_str() else {
                continue;
            };
            let mut code: Vec<u8> = (0..hex.len() / 2)
                .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
                .collect();
            code.extend_from_slice(&[0x0e, 0, 0, 0]);
            let r = record("case", &code, c["pc"].as_u64().unwrap_or(0) as u32);
            check_invariants(hex, &r);
            // a sample through the schema (all of them: ~6k validations)
            if k % 16 == 0 {
                check_schema(&v, hex, &r);
            }
            k += 1;
        }
    }
    assert!(k >= 330, "{k}");
}

/// Nested loops from two backward jumps (`jmp_exec_any`, Mesa's encoding
/// with our offsets): the forest, depths, parents and the memory and
/// register facts of each.
#[test]
fn nested_loops() {
    let code = std::fs::read(repo().join("testdata/apple9-cases/nested_loops.a9bin")).unwrap();
    let r = record("nested", &code, 0);
    let u = r.untimed.as_deref().unwrap();
    check_invariants("nested", &r);
    check_schema(&validator(), "nested", &r);
    let shape: Vec<(u32, u32, u32, Option<usize>)> = u
        .loops
        .iter()
        .map(|l| (l.start, l.end, l.depth, l.parent))
        .collect();
    assert_eq!(
        shape,
        vec![(0x0, 0x24, 1, None), (0x6, 0x14, 2, Some(0))],
        "{r:#?}"
    );
    assert_eq!(r.backward_branches, 2);
    // the load is in both loops; its innermost is the inner one
    assert_eq!(u.loops[0].memory, vec![0x6]);
    assert_eq!(u.loops[1].memory, vec![0x6]);
    assert_eq!(u.memory[0].in_loop, Some(1));
    // every operand decoded: exact figures, not a lower bound
    assert!(!u.registers.lower_bound, "{:?}", u.registers);
    assert_eq!(u.registers.highest_register.as_deref(), Some("r4"));
    let t = text(&r);
    assert!(
        t.contains("Loop 1  0x6–0x14  depth 2") && !t.contains("LOWER BOUND"),
        "{t}"
    );
    // the CFG's blocks (the graph view's nodes): address ranges and
    // instruction counts covering the code once, each in its innermost
    // loop, the loop heads' blocks with a back edge to them
    let b: Vec<String> = u
        .blocks
        .iter()
        .map(|b| {
            format!(
                "{:#x}-{:#x} {} in {:?}",
                b.start, b.end, b.instructions, b.in_loop
            )
        })
        .collect();
    let want = [
        "0x0-0x0 1 in Some(0)",
        "0x6-0x14 2 in Some(1)",
        "0x1e-0x24 2 in Some(0)",
        "0x2e-0x2e 1 in None",
    ];
    assert_eq!(b, want, "{:#?}", u.blocks);
    assert_eq!(
        u.blocks.iter().map(|b| b.instructions).sum::<usize>(),
        r.instructions
    );
    assert!(u.blocks[1].successors.contains(&1) && u.blocks[2].successors.contains(&0));
    // the back edges are the loop forest's: to each loop's header only
    let back: Vec<&[usize]> = u.blocks.iter().map(|b| &b.back_successors[..]).collect();
    assert_eq!(back, [&[][..], &[1], &[0], &[]], "{:#?}", u.blocks);
    // the graph: one digraph, loops as nested clusters, no cycle figure
    let dot = agx_report::dot::untimed_document(std::slice::from_ref(&r));
    assert!(dot.starts_with("digraph \"nested\" {"), "{dot}");
    let outer = dot.find("subgraph cluster_loop0").unwrap();
    let inner = dot.find("subgraph cluster_loop1").unwrap();
    assert!(
        outer < inner && dot.contains("B1 0x6–0x14\\n2 insn"),
        "{dot}"
    );
    assert_eq!(dot.matches("label=\"back\"").count(), 2, "{dot}");
    assert!(cycle_figures(&dot).is_empty(), "{dot}");
}
