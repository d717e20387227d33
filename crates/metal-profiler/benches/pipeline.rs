//! End to end on synthetic kernels: decode → analysis (CFG, loops,
//! liveness, occupancy) → timing model + suggestions → JSON, for 10k, 100k
//! and 1M instructions, straight-line and loop-heavy. Target (issue 5): the
//! 1M-instruction kernel under 2 s. Prints a table; the machine is noted.
//!
//! The kernels are built from real Mesa-compiled code (examples/
//! matmul_naive.bin): its loop region (push_exec … while_icmp … two device
//! loads, waits, fmadd32 … jmp_exec_any … pop_exec) is repeated; branch
//! offsets are relative, so every copy stays a well-formed loop.

#[path = "../../../testdata/machine.rs"]
mod machine;
use agx_report::{json, Options, Profile};
use std::time::Instant;

fn matmul() -> Vec<u8> {
    std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/matmul_naive.bin"
    ))
    .expect("example")
}

/// `prefix` + `copies` × `body` + `suffix`, until about `n` instructions.
fn build(n: usize, looped: bool) -> Vec<u8> {
    let m = matmul();
    let (prefix, body, suffix) = if looped {
        // 0x2e..0x7a: push_exec, the loop, pop_exec (12 instructions)
        (&m[..0x2e], &m[0x2e..0x7a], &m[0x7a..0x94])
    } else {
        // 0x3a..0x5a minus loads: imadd, device_load, imadd, device_load (4)
        (&m[..0x2e], &m[0x3a..0x5a], &m[0x7a..0x94])
    };
    let per = if looped { 12 } else { 4 };
    let mut code = prefix.to_vec();
    let copies = n / per;
    for _ in 0..copies {
        code.extend_from_slice(body);
    }
    code.extend_from_slice(suffix);
    code
}

/// Counts the bytes written to it.
struct CountingSink(usize);

impl std::io::Write for CountingSink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0 += b.len();
        std::hint::black_box(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn run(code: &[u8]) -> (usize, [f64; 4], usize) {
    let t0 = Instant::now();
    let (insns, _) = agx_isa::stream::decode_all(code, 0);
    let t1 = Instant::now();
    let analysis = agx_analysis::analyze(&insns);
    let t2 = Instant::now();
    let n = insns.len();
    let loops = analysis.loops.len();
    let p = Profile::build(
        "synthetic".into(),
        None,
        insns,
        None,
        vec![],
        &Options::default(),
    );
    let t3 = Instant::now();
    // streamed, as the CLI writes it to stdout
    let mut sink = CountingSink(0);
    json::write_document(std::io::BufWriter::with_capacity(1 << 16, &mut sink), &[p])
        .expect("write");
    let t4 = Instant::now();
    let doc_len = sink.0;
    let _ = loops;
    (
        n,
        [
            (t1 - t0).as_secs_f64(),
            (t2 - t1).as_secs_f64(),
            (t3 - t2).as_secs_f64(),
            (t4 - t3).as_secs_f64(),
        ],
        doc_len,
    )
}

fn main() {
    let cpu = machine::cpu();
    println!(
        "machine: {cpu}, {} logical cores (single-threaded)",
        machine::cores()
    );
    println!();
    println!("| kernel | instructions | decode s | analysis s | profile (analysis+model+suggestions) s | JSON s | end-to-end s | JSON MB |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for looped in [false, true] {
        for n in [10_000usize, 100_000, 1_000_000] {
            let code = build(n, looped);
            let (count, t, bytes) = run(&code);
            // end to end = decode + profile (which re-runs the analysis) + JSON
            let e2e = t[0] + t[2] + t[3];
            println!(
                "| {} | {count} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.1} |",
                if looped {
                    "loops (1 per 12 insns)"
                } else {
                    "straight-line"
                },
                t[0],
                t[1],
                t[2],
                t[3],
                e2e,
                bytes as f64 / 1e6
            );
        }
    }
}
