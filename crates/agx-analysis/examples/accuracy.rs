//! Generates docs/accuracy.md (`tools/accuracy.sh` builds the CLI and runs
//! this):
//!
//! `cargo run -q -p agx-analysis --example accuracy -- [--mixes FILE] [--cli PATH] > docs/accuracy.md`
//!
//! Mixed-workload rows are read from FILE (default
//! `data/metal-benchmarks-mixes.tsv`) and scored through the `metal-profile`
//! binary at PATH (default `$METAL_PROFILE`, else `target/debug/metal-profile`).
//!
//! For every single-instruction throughput row of metal-benchmarks (the
//! table in shared/reference/timing.md), a loop kernel whose body is N
//! independent copies of the instruction (distinct destinations, sources
//! never written in the loop) plus the back-edge `jmp_exec_any`. The
//! instructions are decoded from real encodings (see `timing::build`) with
//! their registers replaced. Predicted cycles per instruction is the slope
//! `(cycles_per_iteration(2N) - cycles_per_iteration(N)) / N`, the quantity a
//! throughput benchmark measures with large unrolls.

use agx_analysis::timing::build::{h, r, r64, u, Builder};
use agx_analysis::timing::{analyze_kernel, mesa_estimate, ModelParams};
use agx_isa::Reg;

#[derive(Clone, Copy)]
enum D {
    W16,
    W32,
    W64,
}

struct Row {
    name: &'static str,
    op: &'static str,
    dest: D,
    /// Number of register sources (r2, r3, r4 ...).
    srcs: usize,
    measured: f64,
    /// Whether `measured` is exact (false: an upper bound, excluded from MAPE).
    exact: bool,
    note: &'static str,
    /// Second instruction of a pair (SIN_PT_1 + SIN_PT_2).
    pair: Option<&'static str>,
}

const fn row(name: &'static str, op: &'static str, dest: D, srcs: usize, measured: f64) -> Row {
    Row {
        name,
        op,
        dest,
        srcs,
        measured,
        exact: true,
        note: "",
        pair: None,
    }
}

fn rows() -> Vec<Row> {
    use D::*;
    vec![
        row("FADD16", "fadd16", W16, 2, 1.0),
        row("FMUL16", "fmul16", W16, 2, 1.0),
        row("FFMA16", "fmadd16", W16, 3, 1.0),
        row("FADD32", "fadd32", W32, 2, 1.0),
        row("FMUL32", "fmul32", W32, 2, 1.0),
        row("FFMA32", "fmadd32", W32, 3, 1.0),
        row("FMAX32 / FMIN32 / FCMPSEL32", "fcmpsel", W32, 4, 1.0),
        row("FCMPSEL16", "fcmpsel", W16, 4, 1.0),
        row("ICMPSEL16", "icmpsel", W16, 4, 1.0),
        row("CONVERT(F->I32)", "convert", W32, 1, 4.0),
        row("RINT32", "rint", W32, 1, 4.0),
        row("TRUNC32", "trunc", W32, 1, 4.0),
        row("RECIP16", "rcp", W16, 1, 6.0),
        row("RECIP32", "rcp", W32, 1, 6.0),
        row("RSQRT16", "rsqrt", W16, 1, 8.0),
        row("RSQRT32", "rsqrt", W32, 1, 8.0),
        row("EXP2_16", "exp2", W16, 1, 4.0),
        row("LOG2_16", "log2", W16, 1, 4.0),
        row("EXP2_32", "exp2", W32, 1, 4.0),
        row("LOG2_32", "log2", W32, 1, 4.0),
        Row {
            note: "metal-benchmarks gives only \"< 10\" for the pair; not in the MAPE",
            exact: false,
            pair: Some("sin_pt_2"),
            ..row("SIN_PT_1 + SIN_PT_2", "sin_pt_1", W32, 1, 10.0)
        },
        row("IADD16", "iadd", W16, 2, 1.0),
        row("IADD32", "iadd", W32, 2, 1.0),
        row("IMUL16 / IMAD16", "imadd", W16, 3, 4.0),
        row("IMUL(16x16=32)", "imadd", W32, 3, 4.0),
        row("IMUL32 / IMAD32", "imadd", W32, 3, 4.0),
        row("IMULHI32 / IMUL(32x32=64)", "imadd", W64, 3, 8.01),
        row("IADDSAT32", "iadd.sat", W32, 2, 1.02),
        row("BITEXTRACT32 (constant width)", "bfeil", W32, 2, 4.01),
        row("BITWISE32", "mov", W32, 1, 1.06),
        row("BITREV32", "bitrev", W32, 1, 4.0),
        row("POPCOUNT32", "popcount", W32, 1, 4.0),
        row("IMAX32 / IMIN32 / ICMPSEL32", "icmpsel", W32, 4, 1.0),
        row("LSHIFT32", "bfi", W32, 3, 4.01),
        row("RSHIFT32 (register shift)", "bfeil", W32, 3, 7.89),
        row("SIMD ICMP_BALLOT", "icmp_ballot", W32, 2, 2.04),
        row("SIMD FCMP_BALLOT", "fcmp_ballot", W32, 2, 2.04),
        row("SIMD SHUFFLE32 / BROADCAST32", "simd_shuffle", W32, 2, 2.04),
        row("SIMD SUM<F32>", "simd_fadd", W32, 1, 14.54),
        row("SIMD SUM<F16>", "simd_fadd", W16, 1, 17.10),
        row("SIMD SUM<I32>", "simd_iadd", W32, 1, 16.64),
        row("SIMD SUM<I16>", "simd_iadd", W16, 1, 17.16),
        row("SIMD PREFIX_ISUM<F32>", "simd_prefix_fadd", W32, 1, 12.60),
        row("SIMD PREFIX_ISUM<I32>", "simd_prefix_iadd", W32, 1, 13.01),
        row("QUAD SHUFFLE32 / BROADCAST32", "quad_shuffle", W32, 2, 2.01),
        row("QUAD SUM<F32>", "quad_fadd", W32, 1, 6.02),
        row("QUAD SUM<I32>", "quad_iadd", W32, 1, 6.78),
        row("QUAD PREFIX_ISUM<F32>", "quad_prefix_fadd", W32, 1, 3.19),
        row("QUAD PREFIX_ISUM<I32>", "quad_prefix_iadd", W32, 1, 3.81),
    ]
}

fn dest(d: D, i: u16) -> Reg {
    match d {
        D::W16 => h(40 + i / 2, i % 2 == 1),
        D::W32 => r(40 + i),
        D::W64 => r64(40 + 2 * i),
    }
}

/// A loop of `n` copies (+ back-edge, + stop after it).
fn kernel(rw: &Row, n: u16) -> Vec<agx_isa::Instruction> {
    let mut b = Builder::new();
    let srcs: Vec<Reg> = [r(2), r(3), u(4), r(5)].into_iter().take(rw.srcs).collect();
    for i in 0..n {
        b.op(rw.op, &[dest(rw.dest, i)], &srcs);
    }
    // a pair's second instruction after all first ones (as the mixes are
    // laid out), so none follows its own producer
    if let Some(p) = rw.pair {
        for i in 0..n {
            b.op(p, &[dest(rw.dest, i)], &[dest(rw.dest, i)]);
        }
    }
    b.jmp_exec_any(0);
    b.raw("stop");
    b.finish()
}

fn main() {
    const N: u16 = 32;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut mixes = root.join("data/metal-benchmarks-mixes.tsv");
    let mut cli = std::env::var_os("METAL_PROFILE")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root.join("target/debug/metal-profile"));
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--mixes" => mixes = args.next().expect("--mixes FILE").into(),
            "--cli" => cli = args.next().expect("--cli PATH").into(),
            _ => {
                eprintln!("usage: accuracy [--mixes FILE] [--cli PATH]");
                std::process::exit(2);
            }
        }
    }
    if !cli.exists() {
        eprintln!(
            "accuracy: {} not found; build it first (cargo build -p metal-profiler) or pass --cli PATH",
            cli.display()
        );
        std::process::exit(1);
    }
    let p = ModelParams::default();
    println!("# Accuracy vs metal-benchmarks\n");
    println!("Generated by `tools/accuracy.sh` (= `cargo build -p metal-profiler && cargo run -q -p agx-analysis --example accuracy > docs/accuracy.md`); do not edit by hand. \
Score another copy of the mix table (same format, see `data/metal-benchmarks-mixes.tsv`) with \
`cargo run -q -p agx-analysis --example accuracy -- --mixes FILE`.\n");
    println!("## Single instructions\n");
    println!("Each row is a loop kernel whose body holds N = {N} (and 2N) independent copies of the instruction \
(distinct destinations, sources never written in the loop) plus the back-edge `jmp_exec_any`, built from real \
encodings with `timing::build`. *Predicted* is the slope of `loops[0].cycles_per_iteration` between the 2N- and \
the N-copy kernels, divided by N: the cycles per instruction per SIMD-group a throughput benchmark with a large \
unroll measures. *Measured* is the throughput column of metal-benchmarks (M1 Max column where two are given). \
*Mesa* is the same slope of Mesa's `agx_estimate_cycles` `alu` (its IC entries count 2×tp; instructions it does not \
model count 0), shown for comparison.\n");
    println!(
        "| instruction | machine form | measured | predicted | error | Mesa alu | Mesa error |"
    );
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: |");
    let (mut sum, mut cnt, mut msum, mut max) = (0.0, 0, 0.0, 0.0f64);
    let mut notes = Vec::new();
    for rw in rows() {
        let (kn, k2n) = (kernel(&rw, N), kernel(&rw, 2 * N));
        let k1 = analyze_kernel(&kn, &p);
        let k2 = analyze_kernel(&k2n, &p);
        let pred = (k2.loops[0].cycles_per_iteration - k1.loops[0].cycles_per_iteration) / N as f64;
        let m1 = mesa_estimate(&kn).alu as f64;
        let m2 = mesa_estimate(&k2n).alu as f64;
        let mesa = (m2 - m1) / N as f64;
        let err = (pred - rw.measured).abs() / rw.measured * 100.0;
        let merr = (mesa - rw.measured).abs() / rw.measured * 100.0;
        let form = kn[0].mnemonic();
        let key = k1.instructions_detail[0].key();
        let form = match rw.pair {
            Some(p2) => format!("`{form}` + `{p2}`"),
            None => format!("`{form}` ({key})"),
        };
        let mark = if rw.exact {
            sum += err;
            max = max.max(err);
            msum += merr;
            cnt += 1;
            ""
        } else {
            notes.push(format!("- {}: {}", rw.name, rw.note));
            " †"
        };
        println!(
            "| {}{mark} | {form} | {:.2} | {:.2} | {:.1}% | {:.2} | {:.1}% |",
            rw.name, rw.measured, pred, err, mesa, merr
        );
    }
    println!();
    println!("**Mean absolute percentage error over {cnt} rows: {:.2}%, max {:.2}%** (Mesa's `agx_estimate_cycles`: {:.1}%). \
The fitted IC parameters (below) cannot change these rows (every IC throughput is at least 4 cycles, \
more than any dispatch value of the grid, and a single-instruction loop has neither an integer/transcendental pair nor two transcendental kinds), so \
their cross-validated error is the same.\n", sum / cnt as f64, max, msum / cnt as f64);
    if !notes.is_empty() {
        println!("† excluded from the mean:\n");
        for n in notes {
            println!("{n}");
        }
        println!();
    }
    println!("Rows not reproduced: exclusive prefix sums (ESUM) and PRODUCT/BITWISE reductions (no corpus encoding of those \
sub-operations), and instruction *sequences* (DIV32, FRACT32, IADD64, ...), which are compositions of the rows above \
and are scored with the mixes below.\n");
    let mix_rows = read_mixes(&mixes);
    mixes_section(&mix_rows, &mixes, &cli);
    limits_section(&mix_rows);
}

// ---------------------------------------------------------------------------
// Mixed workloads (metal-benchmarks "Mixed workload performance")
// ---------------------------------------------------------------------------

/// One machine instruction of a vocabulary word: assembly template with
/// `{d}` (destination), `{p}` (the previous instruction's destination of
/// the same word, for compositions) and fixed sources r2..r5 that nothing
/// writes.
struct Part {
    asm: &'static str,
    /// Destination width: 16, 32 or 64 bits.
    bits: u32,
}

/// Our vocabulary for the mixes' instruction names (the words of the
/// `mix` column of the data file). Compositions follow how Metal lowers
/// them on AGX: fract(x) = x - floor(x) (Mesa lowers ffract to a floor and
/// an fadd), fast division = rcp + fmul.
fn word(name: &str) -> Option<Vec<Part>> {
    let p = |asm, bits| Part { asm, bits };
    Some(match name {
        "FADD16" => vec![p("fadd16 {d}, r2l, r3l", 16)],
        "FFMA16" => vec![p("fmadd16 {d}, r2l, r3l, r4l", 16)],
        "IADD16" => vec![p("iadd {d}, r2l, r3l", 16)],
        "FADD32" => vec![p("fadd32 {d}, r2, r3", 32)],
        "FMUL32" => vec![p("fmul32 {d}, r2, r3", 32)],
        "FFMA32" => vec![p("fmadd32 {d}, r2, r3, r4", 32)],
        "IADD32" => vec![p("iadd {d}, r2, r3", 32)],
        "IMAD16" => vec![p("imadd {d}, r2l, r3l, r4l", 16)],
        "IMAD32" => vec![p("imadd {d}, r2, r3, r4", 32)],
        "IMUL64" => vec![p("imadd {d}, r2, r3, r4", 64)],
        // metal-benchmarks: IADD64 = IADD32 + ICMPSEL32 + IADD32 + IADD32,
        // IADD(32+32=64) = IADD32 + ICMPSEL32 + IMMEDIATE_MOVE32
        "IADD64" => vec![
            p("iadd {d}, r2, r3", 32),
            p("icmpsel ult, {d}, {p}, r2, r4, r5", 32),
            p("iadd {d}, r3, r4", 32),
            p("iadd {d}, {p}, r5", 32),
        ],
        "IADD32_64" => vec![
            p("iadd {d}, r2, r3", 32),
            p("icmpsel ult, {d}, {p}, r2, r4, r5", 32),
            p("mov_imm {d}, 0, 0b0", 32),
        ],
        // IMAD((32x32=32)+64): the 32-bit product plus a 64-bit addend is
        // metal-benchmarks' IADD(64+32=64) = IADD32 + ICMPSEL32 + IADD32
        // after the multiply; the low IADD32 folds into the multiply-add
        // (IMAD32 computes a*b + c.lo; metal-benchmarks: a 64-bit addition
        // fuses into the multiply at zero amortized cost), leaving the carry
        // compare and the high add.
        "IMAD32_ADD64" => vec![
            p("imadd {d}, r2, r3, r4", 32),
            p("icmpsel ult, {d}, {p}, r4, r5, r2", 32),
            p("iadd {d}, r3, {p}", 32),
        ],
        "LSHIFT32" => vec![p("bfi {d}, r2, r3, r4, mask 0xFF", 32)],
        "BITREV32" => vec![p("bitrev {d}, r2", 32)],
        "POPCOUNT32" => vec![p("popcount {d}, r2", 32)],
        "BITWISE32" => vec![p("mov {d}, r2", 32)],
        "RINT32" => vec![p("rint {d}, r2", 32)],
        // metal-benchmarks: FRACT32 = TRUNC32 + FADD32, DIV32 = RECIP32 + FMUL32
        "FRACT32" => vec![p("trunc {d}, r2", 32), p("fadd32 {d}, r2, {p}.neg", 32)],
        "EXP2_32" => vec![p("exp2 {d}, r2", 32)],
        "LOG2_32" => vec![p("log2 {d}, r2", 32)],
        "RECIP32" => vec![p("rcp {d}, r2", 32)],
        "RSQRT32" => vec![p("rsqrt {d}, r2", 32)],
        "DIV32" => vec![p("rcp {d}, r3", 32), p("fmul32 {d}, r2, {p}", 32)],
        // metal-benchmarks: SIN32 = TRIG_REDUCE + SIN_PT_1 + SIN_PT_2,
        // TRIG_REDUCE = FMUL32 + FRACT32 + FFMA32, FRACT32 = TRUNC32 + FADD32
        "SIN32" => vec![
            p("fmul32 {d}, r2, r3", 32),
            p("trunc {d}, {p}", 32),
            p("fadd32 {d}, r2, {p}.neg", 32),
            p("fmadd32 {d}, {p}, r3, r4", 32),
            p("sin_pt_1 {d}, {p}", 32),
            p("sin_pt_2 {d}, {p}", 32),
        ],
        _ => return None,
    })
}

/// The words of a mix (`"IMAD32 + 3 IADD32"`), counts expanded.
fn parse_mix(mix: &str) -> Result<Vec<&str>, String> {
    let mut out = Vec::new();
    for term in mix.split('+') {
        let t: Vec<&str> = term.split_whitespace().collect();
        let (n, w) = match t.as_slice() {
            [w] => (1, *w),
            [n, w] => (
                n.parse::<usize>()
                    .map_err(|_| format!("bad count in {term:?}"))?,
                *w,
            ),
            _ => return Err(format!("cannot read {term:?}")),
        };
        word(w).ok_or_else(|| format!("unknown word {w:?} in {mix:?}"))?;
        out.extend(std::iter::repeat_n(w, n));
    }
    Ok(out)
}

/// Assembly of a loop whose body holds `copies` independent copies of the
/// mix, instruction-major (each instruction of the mix for every copy, then
/// the next), so that no copy's instruction follows its own producer.
fn mix_asm(words: &[&str], copies: usize) -> String {
    // (part, word index, part index) slots
    let mut slots: Vec<(usize, usize)> = Vec::new();
    for (wi, w) in words.iter().enumerate() {
        for pi in 0..word(w).unwrap().len() {
            slots.push((wi, pi));
        }
    }
    let mut next = 6u32; // r6.. (r2..r5 are the never-written sources)
    let mut dest_of = std::collections::HashMap::new();
    let mut s = String::from("loop:\n");
    for &(wi, pi) in &slots {
        for c in 0..copies {
            let part = &word(words[wi]).unwrap()[pi];
            let d = match part.bits {
                16 => {
                    let r = format!("r{}l", next);
                    next += 1;
                    r
                }
                32 => {
                    let r = format!("r{}", next);
                    next += 1;
                    r
                }
                _ => {
                    next += next % 2;
                    let r = format!("r{}_r{}", next, next + 1);
                    next += 2;
                    r
                }
            };
            let prev = if pi > 0 {
                dest_of.get(&(wi, pi - 1, c)).cloned().unwrap_or_default()
            } else {
                String::new()
            };
            let line = part.asm.replace("{d}", &d).replace("{p}", &prev);
            dest_of.insert((wi, pi, c), d);
            s.push_str(&line);
            s.push('\n');
        }
    }
    assert!(next <= 127, "mix needs more registers than r127");
    s.push_str("jmp_exec_any loop\nstop\n");
    s
}

struct MixRow {
    sequence: String,
    measured: f64,
    words: Option<Vec<&'static str>>,
}

fn read_mixes(path: &std::path::Path) -> Vec<MixRow> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read the mix table {}: {e}", path.display()));
    let mut out = Vec::new();
    for (ln, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() != 3 {
            panic!(
                "{}:{}: expected 3 tab-separated columns",
                path.display(),
                ln + 1
            );
        }
        let measured: f64 = cols[1]
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{}:{}: bad measured value", path.display(), ln + 1));
        let words = if cols[2].trim() == "-" {
            None
        } else {
            let w = parse_mix(cols[2].trim())
                .unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), ln + 1));
            // leak: the words live for the whole run
            Some(
                w.into_iter()
                    .map(|s| &*Box::leak(s.to_string().into_boxed_str()))
                    .collect(),
            )
        };
        out.push(MixRow {
            sequence: cols[0].trim().to_string(),
            measured,
            words,
        });
    }
    out
}

const MIX_COPIES: usize = 4;

/// A mix's two kernels, assembled and analysed once.
struct MixKernels {
    k: [(Vec<agx_isa::Instruction>, agx_analysis::Analysis); 2],
}

fn mix_kernels(words: &[&str]) -> MixKernels {
    let one = |copies: usize| {
        let insns = agx_isa::asm::assemble_insns(&mix_asm(words, copies)).expect("mix assembles");
        let a = agx_analysis::analyze(&insns);
        (insns, a)
    };
    MixKernels {
        k: [one(MIX_COPIES), one(2 * MIX_COPIES)],
    }
}

/// Predicted cycles per mix, in-process with cost table `gpu`.
fn predict_in_process(gpu: &'static agx_analysis::timing::GpuTiming, m: &MixKernels) -> f64 {
    let cpi = |(insns, a): &(Vec<agx_isa::Instruction>, agx_analysis::Analysis)| {
        let t =
            agx_analysis::timing::analyze_with_analysis_on(gpu, insns, a, &ModelParams::default());
        t.loops[0].cycles_per_iteration
    };
    (cpi(&m.k[1]) - cpi(&m.k[0])) / MIX_COPIES as f64
}

/// Predicted cycles per mix through the `metal-profile` CLI (`asm`, then
/// `--binary ... --format json`, `loops[0].cycles_per_iteration`).
fn predict_cli(cli: &std::path::Path, dir: &std::path::Path, words: &[&str], tag: usize) -> f64 {
    use std::process::Command;
    let cpi = |copies: usize| {
        let s = dir.join(format!("mix{tag}_{copies}.s"));
        let b = dir.join(format!("mix{tag}_{copies}.bin"));
        std::fs::write(&s, mix_asm(words, copies)).unwrap();
        // `metal-profile ARGS`, which must succeed: its standard output
        let run = |args: &[&std::ffi::OsStr]| {
            let o = Command::new(cli)
                .args(args)
                .output()
                .expect("run metal-profile");
            assert!(
                o.status.success(),
                "metal-profile {args:?} failed: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            o.stdout
        };
        run(&["asm".as_ref(), s.as_os_str(), "-o".as_ref(), b.as_os_str()]);
        let out = run(&[
            "--binary".as_ref(),
            b.as_os_str(),
            "--format".as_ref(),
            "json".as_ref(),
        ]);
        let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
        doc["kernels"][0]["loops"][0]["cycles_per_iteration"]
            .as_f64()
            .unwrap()
    };
    (cpi(2 * MIX_COPIES) - cpi(MIX_COPIES)) / MIX_COPIES as f64
}

fn err_pct(pred: f64, measured: f64) -> f64 {
    (pred - measured).abs() / measured * 100.0
}

/// Candidate values of the fitted parameters: (IC dispatch cycles, IC
/// integer/transcendental pair cycles).
fn grid() -> Vec<(f64, f64, f64)> {
    let mut g = Vec::new();
    for i in 0..=8 {
        for j in 0..=12 {
            for o in 0..=6 {
                g.push((1.0 + 0.25 * i as f64, 0.25 * j as f64, 0.5 * o as f64));
            }
        }
    }
    g
}
const FOLDS: usize = 5;

fn table_with(
    (ic_issue, ic_switch, ic_overlap): (f64, f64, f64),
) -> &'static agx_analysis::timing::GpuTiming {
    let mut g = agx_analysis::timing::table::G13.clone();
    g.ic_issue_cycles = ic_issue;
    g.ic_switch_cycles = ic_switch;
    g.ic_overlap_cycles = ic_overlap;
    Box::leak(Box::new(g))
}

fn mixes_section(rows: &[MixRow], path: &std::path::Path, cli: &std::path::Path) {
    let built: Vec<(usize, &MixRow)> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.words.is_some())
        .collect();
    // predictions per grid value (in-process), for the cross-validation
    let grid = grid();
    let tables: Vec<_> = grid.iter().map(|&v| table_with(v)).collect();
    let preds: Vec<Vec<f64>> = built
        .iter()
        .map(|(_, r)| {
            let m = mix_kernels(r.words.as_ref().unwrap());
            tables.iter().map(|g| predict_in_process(g, &m)).collect()
        })
        .collect();
    let mae = |idx: &[usize], gi: usize| -> f64 {
        idx.iter()
            .map(|&i| err_pct(preds[i][gi], built[i].1.measured))
            .sum::<f64>()
            / idx.len().max(1) as f64
    };
    let best = |idx: &[usize]| -> usize {
        (0..grid.len())
            .min_by(|&a, &b| mae(idx, a).total_cmp(&mae(idx, b)))
            .unwrap()
    };
    // k-fold: row i is in fold i % FOLDS
    let mut cv_pred = vec![0.0; built.len()];
    let mut fold_fits = Vec::new();
    for f in 0..FOLDS {
        let train: Vec<usize> = (0..built.len()).filter(|i| i % FOLDS != f).collect();
        let g = best(&train);
        fold_fits.push(grid[g]);
        for i in (0..built.len()).filter(|i| i % FOLDS == f) {
            cv_pred[i] = preds[i][g];
        }
    }
    let all: Vec<usize> = (0..built.len()).collect();
    let fit_all = grid[best(&all)];
    // the shipped model, through the CLI
    let dir = std::env::temp_dir().join(format!("metal-profiler-accuracy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shipped = (
        agx_analysis::timing::IC_ISSUE_CYCLES,
        agx_analysis::timing::IC_SWITCH_CYCLES,
        agx_analysis::timing::IC_OVERLAP_CYCLES,
    );
    let shipped_gi = grid.iter().position(|&v| v == shipped);
    // the path as given relative to the repository when it is inside it
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let shown = match (path.canonicalize(), root.canonicalize()) {
        (Ok(p), Ok(r)) => p
            .strip_prefix(&r)
            .map(|x| x.display().to_string())
            .unwrap_or_else(|_| p.display().to_string()),
        _ => path.display().to_string(),
    };
    println!("## Mixed workloads\n");
    println!("Rows: `{}` ({} rows, {} built; a row marked `-` in the table's third column is not built). \
Each row is a loop whose body holds {MIX_COPIES} (and {}) independent copies of the sequence, written as assembly \
(instruction-major: each instruction of the sequence for every copy, then the next, so no instruction follows its \
own producer), assembled with `metal-profile asm` and profiled with `metal-profile --binary FILE --format json`; \
*predicted* is the slope of `loops[0].cycles_per_iteration` per copy. Vocabulary: FADD16 FFMA16 IADD16 FADD32 \
FMUL32 FFMA32 IADD32 IMAD16 IMAD32 (also IMUL) IMUL64 (32x32=64) IADD64 LSHIFT32 BITREV32 POPCOUNT32 BITWISE32 \
RINT32 FRACT32 (trunc + fadd) EXP2_32 LOG2_32 RECIP32 RSQRT32 DIV32 (rcp + fmul) SIN32 (fmul + trunc + fadd + fmadd + \
sin_pt_1 + sin_pt_2); IADD64 (iadd + icmpsel + iadd + iadd), IADD32_64 (iadd + icmpsel + mov_imm) and SIN32 \
(TRIG_REDUCE = FMUL32 + FRACT32 + FFMA32, then SIN_PT_1 + SIN_PT_2) are the sequences metal-benchmarks gives for \
them; IMAD32_ADD64 (imadd + icmpsel + iadd), for IMAD((32x32=32)+64), is metal-benchmarks' IADD(64+32=64) = \
IADD32 + ICMPSEL32 + IADD32 after the product, with the low add folded into the multiply-add.\n",
        shown, rows.len(), built.len(), 2 * MIX_COPIES);
    println!("Three parameters are fitted to this table: the dispatch cycles of an IC-pipe instruction \
(`ic_issue_cycles`, 1 to 3 by 0.25), the extra IC cycles per pair of an integer and a transcendental IC \
instruction in one pass (`ic_switch_cycles`, 0 to 3 by 0.25) and the IC cycles saved per transcendental on \
another IC sub-pipeline (exp2/log2, rcp, rsqrt, sin_pt) than the pass's most used one (`ic_overlap_cycles`, 0 to 3 by 0.5), by {FOLDS}-fold \
cross-validation (row i in fold i mod {FOLDS}; each fold's values minimise the mean absolute error on the other \
folds). Fold values: {fold_fits:?}; fitted on all rows: {fit_all:?}; shipped in the cost table \
(`IC_ISSUE_CYCLES`, `IC_SWITCH_CYCLES`, `IC_OVERLAP_CYCLES`): {shipped:?}. *CV* is each row's prediction by \
the values fitted without its fold (the held-out error).\n");
    println!("| sequence | measured | predicted (CLI) | error | CV predicted | CV error | Mesa alu | Mesa error |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    let mut mesa_sum = 0.0;
    let (mut s_in, mut m_in, mut s_cv, mut m_cv) = (0.0, 0.0f64, 0.0, 0.0f64);
    for (i, (ri, r)) in built.iter().enumerate() {
        let p = predict_cli(cli, &dir, r.words.as_ref().unwrap(), *ri);
        if let Some(gi) = shipped_gi {
            assert!(
                (p - preds[i][gi]).abs() < 1e-6,
                "CLI and in-process disagree on {}",
                r.sequence
            );
        }
        let e = err_pct(p, r.measured);
        let ecv = err_pct(cv_pred[i], r.measured);
        // Mesa's agx_estimate_cycles on the same kernels, same slope
        let mk = mix_kernels(r.words.as_ref().unwrap());
        let mesa = (mesa_estimate(&mk.k[1].0).alu as f64 - mesa_estimate(&mk.k[0].0).alu as f64)
            / MIX_COPIES as f64;
        let emesa = err_pct(mesa, r.measured);
        mesa_sum += emesa;
        s_in += e;
        m_in = m_in.max(e);
        s_cv += ecv;
        m_cv = m_cv.max(ecv);
        println!(
            "| {} | {:.2} | {:.2} | {:.1}% | {:.2} | {:.1}% | {:.2} | {:.1}% |",
            r.sequence, r.measured, p, e, cv_pred[i], ecv, mesa, emesa
        );
    }
    let n = built.len().max(1) as f64;
    println!();
    println!("**Mixes, shipped model through the CLI (in-sample for the table the parameters were fitted to): mean absolute error {:.1}%, max {:.1}%.**  ", s_in / n, m_in);
    println!("**Mixes, {FOLDS}-fold cross-validated (held-out): mean absolute error {:.1}%, max {:.1}%.**  ", s_cv / n, m_cv);
    println!(
        "Mesa's `agx_estimate_cycles` on the same kernels: mean absolute error {:.1}%.\n",
        mesa_sum / n
    );
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------
// What no model of our class can reach on this table

/// The built row whose words are those of `mix` (our vocabulary, any order).
fn find_row<'a>(rows: &'a [MixRow], mix: &str) -> Option<&'a MixRow> {
    let mut want = parse_mix(mix).ok()?;
    want.sort_unstable();
    rows.iter().find(|r| {
        r.words.as_ref().is_some_and(|w| {
            let mut w = w.clone();
            w.sort_unstable();
            w == want
        })
    })
}

/// Smallest e such that a linear bound with non-negative weights a (per
/// IADD64) and b (per X) can give row C = 2 IADD64 + 2 X within e while rows
/// A = IADD64 + M (any M) and B = IADD64 + 3 X are not overestimated by more
/// than e: a <= A(1+e), a + 3b <= B(1+e), 2a + 2b >= C(1-e). For fixed e the
/// largest a + b is at a = A(1+e), b = (B - A)(1+e)/3 (b >= 0 when B >= A),
/// so e is where (2A + B)(1+e)/3 = C(1-e)/2.
fn max_of_linear_floor(a: f64, b: f64, c: f64) -> f64 {
    let k = (2.0 * a + b) / 3.0;
    ((c / 2.0 - k) / (c / 2.0 + k)).max(0.0)
}

fn limits_section(rows: &[MixRow]) {
    println!("## Limits: rows that leave a throughput model little room\n");
    println!("Our model, like Mesa's and every throughput model, takes the maximum of bounds that are each linear in the \
counts of the sequence's instructions (apart from the IC pair terms, which none of the rows below use): adding an \
instruction never lowers the cost, and k copies of a sequence cost k times one copy. The rows below leave any such \
model little room, whatever its parameters: they are the main part of the remaining error (the figures are computed \
from the table each time this page is generated; a check whose rows are missing is skipped).\n");
    let mut any = false;
    for x in ["FADD32", "IADD32"] {
        let (Some(ra), Some(rb), Some(rc)) = (
            find_row(rows, "IADD64 + IMAD32"),
            find_row(rows, &format!("IADD64 + 3 {x}")),
            find_row(rows, &format!("2 IADD64 + 2 {x}")),
        ) else {
            continue;
        };
        any = true;
        let e = max_of_linear_floor(ra.measured, rb.measured, rc.measured);
        println!(
            "- `{}` ({:.2}), `{}` ({:.2}) and `{}` ({:.2}): the bound that gives the third row its cost charges \
one IADD64 at most the first row's cost and three {x} plus one IADD64 at most the second's, so it reaches at most \
{:.2} for the third: **some model error is at least {:.1}%** on these three rows. The third row differs from the \
second by one IADD64 in place of one {x} (three more instructions on the same pipe) yet costs {:.2} cycles more: \
it is most likely latency-bound in its benchmark kernel (the 64-bit add's carry chain, iadd -> icmpsel -> iadd), \
whose dependency structure metal-benchmarks does not publish per row.",
            ra.sequence,
            ra.measured,
            rb.sequence,
            rb.measured,
            rc.sequence,
            rc.measured,
            2.0 * (2.0 * ra.measured + rb.measured) / 3.0,
            100.0 * e,
            rc.measured - rb.measured
        );
    }
    // the same instructions, with and without a dependency
    for k in 0..4usize {
        let (Some(rd), Some(rr)) = (
            find_row(rows, &format!("DIV32 + {k} FMUL32")),
            find_row(rows, &format!("RECIP32 + {} FMUL32", k + 1)),
        ) else {
            continue;
        };
        any = true;
        let (hi, lo) = (rd.measured.max(rr.measured), rd.measured.min(rr.measured));
        println!(
            "- `{}` ({:.2}) and `{}` ({:.2}) run the same instructions (DIV32 = RECIP32 + a dependent FMUL32): a model that \
sees only the instruction mix errs by at least {:.1}% on one of them; the difference is the exposed rcp -> fmul latency \
in the benchmark's kernel, which our loop of independent copies does not have.",
            rd.sequence,
            rd.measured,
            rr.sequence,
            rr.measured,
            100.0 * (hi - lo) / (hi + lo)
        );
    }
    if !any {
        println!("(none of the rows these checks use are in this table)");
    }
    println!();
}
