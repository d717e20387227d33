//! Generates docs/accuracy.md:
//!
//! `cargo run -q -p agx-analysis --example accuracy > docs/accuracy.md`
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
        if let Some(p) = rw.pair {
            b.op(p, &[dest(rw.dest, i)], &[dest(rw.dest, i)]);
        }
    }
    b.jmp_exec_any(0);
    b.raw("stop");
    b.finish()
}

fn main() {
    const N: u16 = 32;
    let p = ModelParams::default();
    println!("# Accuracy: single-instruction throughput vs metal-benchmarks\n");
    println!("Generated by `cargo run -q -p agx-analysis --example accuracy > docs/accuracy.md`; do not edit by hand.\n");
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
    let (mut sum, mut cnt, mut msum) = (0.0, 0, 0.0);
    let mut notes = Vec::new();
    for rw in rows() {
        let k1 = analyze_kernel(&kernel(&rw, N), &p);
        let k2 = analyze_kernel(&kernel(&rw, 2 * N), &p);
        let pred = (k2.loops[0].cycles_per_iteration - k1.loops[0].cycles_per_iteration) / N as f64;
        let m1 = mesa_estimate(&kernel(&rw, N)).alu as f64;
        let m2 = mesa_estimate(&kernel(&rw, 2 * N)).alu as f64;
        let mesa = (m2 - m1) / N as f64;
        let err = (pred - rw.measured).abs() / rw.measured * 100.0;
        let merr = (mesa - rw.measured).abs() / rw.measured * 100.0;
        let form = k1.instructions_detail[0].mnemonic;
        let key = k1.instructions_detail[0].key;
        let form = match rw.pair {
            Some(p2) => format!("`{form}` + `{p2}`"),
            None => format!("`{form}` ({key})"),
        };
        let mark = if rw.exact {
            sum += err;
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
    println!("**Mean absolute percentage error over {cnt} rows: {:.2}%** (Mesa's `agx_estimate_cycles`: {:.1}%).\n", sum / cnt as f64, msum / cnt as f64);
    if !notes.is_empty() {
        println!("† excluded from the mean:\n");
        for n in notes {
            println!("{n}");
        }
        println!();
    }
    println!("Rows not reproduced: exclusive prefix sums (ESUM) and PRODUCT/BITWISE reductions (no corpus encoding of those \
sub-operations), and instruction *sequences* (DIV32, FRACT32, IADD64, ...), which are compositions of the rows above.");
}
