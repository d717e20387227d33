//! Scale benchmark of the `metal-profile` binary (issue 15), one command:
//!
//! ```text
//! cargo bench -p metal-profiler --bench scale [-- /path/to/applegpu]
//! ```
//!
//! (or `APPLEGPU_DIR=/path/to/applegpu`; add `--only-disasm` for row 3 alone). It measures, through the real CLI
//! (the release binary cargo builds for benches), each run in a child
//! process with its wall time and peak resident memory (VmHWM polled from
//! /proc every 2 ms, Linux only):
//!
//! 1. `batch` over 300 kernels (60 archives of 5 real Mesa-compiled kernels
//!    from testdata/mesa) with `--jobs 1` and `--jobs 2`: the speed-up;
//! 2. a 1,000,000-instruction kernel (Mesa's matmul loop body repeated, as
//!    benches/pipeline.rs builds it) profiled to text and to JSON;
//! 3. `--disasm-only` on a 200,000-instruction input, and — given an
//!    applegpu checkout — applegpu's `disassemble.py` on the same file in
//!    the same run: the ratio.
//!
//! Prints a markdown table and the machine (CPU, cores, load average: other
//! work on the machine slows every number; re-run when it is quiet).

use agx_container::testutil::*;
use agx_container::Stage;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_metal-profile");

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Main bodies of the Mesa kernels in testdata/mesa: (name, code).
fn mesa_kernels() -> Vec<(String, Vec<u8>)> {
    let dir = repo().join("testdata/mesa");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("testdata/mesa")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
        .into_iter()
        .filter_map(|n| {
            let d = dir.join(&n);
            let bin = std::fs::read(d.join(format!("{n}.bin"))).ok()?;
            let layout: serde_json::Value =
                serde_json::from_slice(&std::fs::read(d.join("layout.json")).ok()?).ok()?;
            let off = layout["main"]["offset"].as_u64()? as usize;
            let size = layout["main"]["size"].as_u64()? as usize;
            Some((n, bin.get(off..off + size)?.to_vec()))
        })
        .collect()
}

/// Writes `archives` archives of `per` kernels each into `dir`.
fn write_corpus(dir: &Path, archives: usize, per: usize) -> usize {
    let mut ks = mesa_kernels();
    assert!(!ks.is_empty(), "no kernels in testdata/mesa");
    // Mesa's kernels are small (20..300 instructions); real collections also
    // hold big ones: add loop-heavy kernels of 2,000..24,000 instructions
    for i in 0..12 {
        ks.push((format!("big{i}"), synthetic(2_000 * (i + 1), i % 2 == 0)));
    }
    let mut k = 0;
    for a in 0..archives {
        let funcs: Vec<(String, &[u8])> = (0..per)
            .map(|_| {
                let (n, c) = &ks[k % ks.len()];
                k += 1;
                (format!("{n}_{k}_agc.main"), c.as_slice())
            })
            .collect();
        let refs: Vec<(&str, &[u8])> = funcs.iter().map(|(n, c)| (n.as_str(), *c)).collect();
        let (text, syms) = layout_text(&refs, 256);
        let bytes = build_test_archive(G13G, Stage::Compute, &text, &sym_refs(&syms));
        let sub = dir.join(format!("set{}", a % 6));
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join(format!("a{a:03}.archive")), bytes).unwrap();
    }
    k
}

/// `prefix` + copies of the loop (12 instructions) or of a straight-line
/// run (4 instructions) of Mesa's matmul + `suffix`, about `n` instructions.
fn synthetic(n: usize, looped: bool) -> Vec<u8> {
    let m = std::fs::read(repo().join("examples/matmul_naive.bin")).expect("example");
    let (prefix, body, suffix, per) = if looped {
        (&m[..0x2e], &m[0x2e..0x7a], &m[0x7a..0x94], 12)
    } else {
        (&m[..0x2e], &m[0x3a..0x5a], &m[0x7a..0x94], 4)
    };
    let mut code = prefix.to_vec();
    for _ in 0..n / per {
        code.extend_from_slice(body);
    }
    code.extend_from_slice(suffix);
    code
}

fn vm_hwm_kb(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let l = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    l.split_whitespace().nth(1)?.parse().ok()
}

/// Runs a command with stdout discarded: (wall seconds, peak RSS in MB).
/// This thread blocks in `wait` (the wall time is exact: polling for the
/// exit every few milliseconds added up to a tick to every run, much of a
/// ~15 ms `--disasm-only` run) while another thread samples VmHWM each
/// millisecond until the exit.
fn measure(cmd: &mut Command) -> (f64, Option<f64>) {
    use std::sync::atomic::{AtomicBool, Ordering};
    let t0 = Instant::now();
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let pid = child.id();
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let poll = s.spawn(|| {
            let mut peak: Option<u64> = None;
            while !done.load(Ordering::Relaxed) {
                if let Some(kb) = vm_hwm_kb(pid) {
                    peak = Some(peak.map_or(kb, |p| p.max(kb)));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            peak
        });
        child.wait().expect("wait");
        let t = t0.elapsed().as_secs_f64();
        done.store(true, Ordering::Relaxed);
        let peak = poll.join().expect("poll thread");
        (t, peak.map(|kb| kb as f64 / 1024.0))
    })
}

/// Best wall time of `reps` runs (and the peak of the best run).
fn best(reps: usize, mut make: impl FnMut() -> Command) -> (f64, Option<f64>) {
    (0..reps)
        .map(|_| measure(&mut make()))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .unwrap()
}

fn mb(x: Option<f64>) -> String {
    x.map_or("n/a".into(), |m| format!("{m:.0}"))
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let load = std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into());
    format!("{cpu}, {cores} logical cores, load average at start {load}")
}

fn main() {
    let applegpu: Option<PathBuf> = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("APPLEGPU_DIR").map(PathBuf::from));
    // `-- --only-disasm`: the disassembly rows alone
    let only_disasm = std::env::args().any(|a| a == "--only-disasm");
    let tmp = std::env::temp_dir().join(format!("mp-scale-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();

    println!("machine: {}", machine());
    println!();
    println!("| measurement | input | wall s | peak MB | note |");
    println!("|---|---|---:|---:|---|");

    if !only_disasm {
        batch_and_profile(&tmp);
    }
    disasm(&tmp, applegpu.as_deref());
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Rows 1 and 2: batch with 1 and 2 jobs; the 1M-instruction profile.
fn batch_and_profile(tmp: &Path) {
    // 1. batch, 1 and 2 jobs
    let corpus = tmp.join("corpus");
    let kernels = write_corpus(&corpus, 60, 5);
    let batch = |jobs: &str| {
        let corpus = corpus.clone();
        let jobs = jobs.to_string();
        move || {
            let mut c = Command::new(BIN);
            c.arg("batch").arg(&corpus).args(["--jobs", &jobs]);
            c
        }
    };
    // the batch must succeed, or the timings mean nothing
    let st = batch("1")()
        .stdout(Stdio::null())
        .status()
        .expect("run batch");
    assert!(st.success(), "batch over the corpus failed: {st}");
    let (t1, m1) = best(3, batch("1"));
    let (t2, m2) = best(3, batch("2"));
    println!(
        "| batch --jobs 1 | {kernels} kernels in 60 archives (37 Mesa kernels + 12 of 2k..24k instructions, cycled) | {t1:.3} | {} | |",
        mb(m1)
    );
    println!(
        "| batch --jobs 2 | same | {t2:.3} | {} | speed-up {:.2}× |",
        mb(m2),
        t1 / t2
    );

    // 2. one 1,000,000-instruction kernel
    let big = tmp.join("loop1m.bin");
    std::fs::write(&big, synthetic(1_000_000, true)).unwrap();
    for fmt in ["text", "json"] {
        let (t, m) = best(2, || {
            let mut c = Command::new(BIN);
            c.arg("--binary").arg(&big).args(["--format", fmt]);
            c
        });
        println!(
            "| profile --format {fmt} | 1,000,000 instructions (1 loop per 12) | {t:.3} | {} | |",
            mb(m)
        );
    }
}

/// Row 3: disassembly against applegpu, same input, same run.
fn disasm(tmp: &Path, applegpu: Option<&Path>) {
    let n = 200_000;
    let dis = tmp.join("line200k.bin");
    std::fs::write(&dis, synthetic(n, false)).unwrap();
    // ~15 ms a run: best of 15 (one applegpu run takes seconds)
    let (td, md) = best(15, || {
        let mut c = Command::new(BIN);
        c.arg("--binary").arg(&dis).arg("--disasm-only");
        c
    });
    println!(
        "| --disasm-only | {n} instructions | {td:.4} | {} | {:.2} M lines/s |",
        mb(md),
        n as f64 / td / 1e6
    );
    match applegpu {
        Some(dir) if dir.join("disassemble.py").exists() => {
            let (ta, _) = measure(
                Command::new("python3")
                    .arg(dir.join("disassemble.py"))
                    .arg(&dis),
            );
            println!(
                "| applegpu disassemble.py | same file | {ta:.3} | | ours is {:.0}× faster |",
                ta / td
            );
        }
        Some(dir) => println!(
            "| applegpu | {} has no disassemble.py | | | not measured |",
            dir.display()
        ),
        None => println!(
            "| applegpu | pass a checkout: `cargo bench -p metal-profiler --bench scale -- /path/to/applegpu` | | | not measured |"
        ),
    }
}
