//! Decoder throughput: decode-only and decode+format over a blob of
//! ≥ 1,000,000 instructions built from the corpus slice in testdata/, with
//! peak memory at two blob sizes (memory must stay flat: the walk allocates
//! nothing per instruction and the formatted text goes to a reused buffer).
//!
//! `cargo bench -p agx-isa --bench decode` prints a table. With
//! `APPLEGPU_DIR=/path/to/applegpu` it also times applegpu's Python
//! `disassemble.py` on a 20,000-instruction blob in the same run and prints
//! the speed ratio against it.

#[path = "../../../testdata/machine.rs"]
mod machine;
use agx_isa::stream::{walk, write_step, Step};
use agx_isa::{Instruction, Syntax};
use std::hint::black_box;
use std::time::Instant;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap_or(0))
        .collect()
}

/// Instructions from the corpus slice that decode the same in any context and
/// do not end the walk (`stop`) or look like padding.
fn corpus_instructions() -> Vec<Vec<u8>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/applegpu/encodings.slice.jsonl"
    );
    let text = std::fs::read_to_string(path).expect("testdata slice");
    let mut v = Vec::new();
    for line in text.lines() {
        let field = |k: &str| -> Option<&str> {
            let key = format!("\"{k}\": ");
            let i = line.find(&key)? + key.len();
            let rest = &line[i..];
            let end = rest.find([',', '}'])?;
            Some(rest[..end].trim_matches('"'))
        };
        if field("ctx_free") != Some("true") || field("form") == Some("stop") {
            continue;
        }
        if let Some(h) = field("hex") {
            v.push(hex(h));
        }
    }
    v
}

fn blob(insns: &[Vec<u8>], n: usize) -> (Vec<u8>, usize) {
    // reserve once (pages never written are not resident), so the peak RSS
    // is not inflated by the blob's own regrowth
    let mut out = Vec::with_capacity(n * 12);
    let mut count = 0;
    while count < n {
        for i in insns {
            out.extend_from_slice(i);
            count += 1;
            if count == n {
                break;
            }
        }
    }
    (out, count)
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

fn best_of<F: FnMut() -> usize>(runs: usize, mut f: F) -> (f64, usize) {
    let mut best = f64::MAX;
    let mut n = 0;
    for _ in 0..runs {
        let t = Instant::now();
        n = f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    (best, n)
}

/// Decode-only: the applegpu-compatible walk, decoding each instruction into
/// one reused buffer (`Walk::next_into`).
fn decode_only(code: &[u8]) -> usize {
    let mut n = 0;
    let mut insn = Instruction::default();
    let mut w = walk(code, 0);
    while let Some(step) = w.next_into(&mut insn) {
        if let Step::Insn { .. } = step {
            black_box(&insn);
            n += 1;
        }
    }
    n
}

/// Decode + format every line into a reused byte buffer (as the CLI's
/// listing does).
fn decode_format(code: &[u8]) -> usize {
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    let mut n = 0;
    let mut insn = Instruction::default();
    let mut w = walk(code, 0);
    while let Some(step) = w.next_into(&mut insn) {
        write_step(&mut buf, &step, &insn, Syntax::Default);
        n += 1;
        if buf.len() > 60_000 {
            black_box(&buf);
            buf.clear();
        }
    }
    black_box(&buf);
    n
}

fn main() {
    let insns = corpus_instructions();
    let cpu = machine::cpu();
    println!(
        "machine: {cpu}, {} logical cores (single-threaded benchmark)",
        machine::cores()
    );
    println!(
        "corpus: {} distinct instructions from testdata/applegpu/encodings.slice.jsonl",
        insns.len()
    );
    println!();
    println!("| blob instructions | blob bytes | decode-only insn/s | decode+format lines/s | peak RSS (MiB) | peak RSS minus blob (MiB) |");
    println!("|---:|---:|---:|---:|---:|---:|");
    let mut rates = (0.0, 0.0);
    for &n in &[1_000_000usize, 4_000_000] {
        let (code, count) = blob(&insns, n);
        let (t1, d) = best_of(3, || decode_only(&code));
        let (t2, f) = best_of(3, || decode_format(&code));
        assert_eq!(d, count, "walk must decode every instruction");
        assert_eq!(f, count);
        let r1 = count as f64 / t1;
        let r2 = count as f64 / t2;
        if n == 1_000_000 {
            rates = (r1, r2);
        }
        let rss = peak_rss_kib() as f64 / 1024.0;
        println!(
            "| {count} | {} | {:.1} M | {:.2} M | {:.1} | {:.1} |",
            code.len(),
            r1 / 1e6,
            r2 / 1e6,
            rss,
            rss - code.len() as f64 / (1024.0 * 1024.0)
        );
    }
    if let Ok(dir) = std::env::var("APPLEGPU_DIR") {
        let (code, count) = blob(&insns, 20_000);
        let path = std::env::temp_dir().join("agx_bench_blob.bin");
        std::fs::write(&path, &code).expect("write blob");
        let t = Instant::now();
        let st = std::process::Command::new("python3")
            .arg(format!("{dir}/disassemble.py"))
            .arg(&path)
            .stdout(std::process::Stdio::null())
            .status();
        let secs = t.elapsed().as_secs_f64();
        if st.map(|s| s.success()).unwrap_or(false) {
            let py = count as f64 / secs;
            println!();
            println!("baseline (same run): applegpu disassemble.py, {count} instructions in {secs:.1} s = {py:.0} lines/s");
            println!("ratio: decode+format {:.0}x applegpu", rates.1 / py);
        } else {
            println!("baseline: could not run python3 {dir}/disassemble.py");
        }
    }
}
