//! Scale benchmark of the `metal-profile` binary (issues 15 and 21), one
//! command:
//!
//! ```text
//! cargo bench -p metal-profiler --bench scale [-- /path/to/applegpu]
//! ```
//!
//! (or `APPLEGPU_DIR=/path/to/applegpu`). Options after `--`: `--only
//! shapes|batch|disasm` for one table, `--shape NAME` for one shape,
//! `--write DIR` to write the shape inputs there and exit. Every run is a
//! child process of the real CLI (the release binary cargo builds for
//! benches): wall time, CPU time (user + system, from `wait4`) and peak
//! resident memory (VmHWM polled from /proc each millisecond; Linux):
//!
//! 1. **Shapes** (issue 21): the default profile of six shapes of code at
//!    200,000 and 1,000,000 instructions — loop-dense, straight-line,
//!    branch-dense if/else ladders, loop nests of depth 10, call-dense raw
//!    code (a `call` every ~50 instructions to anywhere in the file) and one
//!    huge basic block of dependency chains — with the 1M/200k ratios and
//!    the JSON report's bytes per instruction (issue 37 item 7)
//!    (linear cost: 5), and the CPU time of the same profile pinned to one
//!    CPU (the work itself, without what running on two cores adds: the
//!    measure of issue 35's "the analysis costs ≤ 10% more", for any
//!    `SCALE_BIN`, a baseline's too). With `SCALE_BASELINE=/path/to/
//!    metal-profile`, a second table (`--only versus` alone) measures that
//!    baseline and this binary in turns on each input (best of 5; pinned
//!    to one CPU, best of 3) and prints main / baseline.
//! 2. **Batch**: `batch --jobs 1` and `--jobs 2` over 3,000 small one-kernel
//!    archives and over 300 kernels of ~5,000 instructions (generated here,
//!    in a temporary directory); both outputs must be byte-identical.
//! 3. **Disassembly**: `--disasm-only` on a 200,000-instruction input with
//!    its stdout read through a pipe by another process (`cat`, as a script
//!    reads it), and — given an applegpu checkout — applegpu's
//!    `disassemble.py` on the same file the same way, in the same run.
//!
//! Prints markdown tables and the machine (CPU, cores, memory, load average
//! at start and end: other work on the machine slows the wall times; the CPU
//! times are much less affected; re-run when it is quiet).

#[path = "../../../testdata/machine.rs"]
mod machine;
#[path = "../../../testdata/xorshift.rs"]
mod xorshift;
use agx_container::testutil::*;
use agx_container::Stage;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const BUILT: &str = env!("CARGO_BIN_EXE_metal-profile");

/// The binary measured: the one cargo built for the bench, or
/// `SCALE_BIN=/path/to/metal-profile` (e.g. a copy of the previous tree's,
/// for a before/after table measured in one session).
static BIN: std::sync::LazyLock<PathBuf> = std::sync::LazyLock::new(|| {
    std::env::var_os("SCALE_BIN").map_or_else(|| PathBuf::from(BUILT), PathBuf::from)
});

/// `SCALE_BASELINE=/path/to/metal-profile`: a baseline binary (e.g. the
/// tree an issue was filed against) measured in the same run, interleaved
/// with [`BIN`] on each input ([`versus`]).
fn baseline() -> Option<PathBuf> {
    std::env::var_os("SCALE_BASELINE").map(PathBuf::from)
}

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

/// Assembles generated text (labels resolve; every line is verified by the
/// assembler against the decoder).
fn assemble(text: &str) -> Vec<u8> {
    agx_isa::asm::assemble(text).unwrap_or_else(|e| panic!("bench shape does not assemble: {e}"))
}

// a small deterministic generator, so every run profiles the same bytes
use xorshift::Rng;

/// `prefix`, then copies of `unit` (assembled once: its branches are
/// relative, so every copy stays well formed) up to about `n` instructions,
/// then `stop`.
fn repeat(prefix: &str, unit: &str, n: usize) -> Vec<u8> {
    let head = assemble(prefix);
    let body = assemble(unit);
    let per = agx_isa::stream::decode_all_native(&body, 0).0.len();
    let mut code = head;
    for _ in 0..(n / per).max(1) {
        code.extend_from_slice(&body);
    }
    code.extend_from_slice(&[0x88, 0x00]); // stop
    code
}

/// Branch-dense: if/else ladders as Mesa emits them (`if_icmp` +
/// `jmp_exec_none` over the then-part, `else_fcmp` + `jmp_exec_none` over
/// the else-part, `pop_exec`), each rung nested in the previous rung's else
/// for 8 rungs, then closed: 3 blocks per 8 instructions.
fn branch_ladder(n: usize) -> Vec<u8> {
    let mut unit = String::new();
    for r in 0..8 {
        unit.push_str(&format!(
            "if_icmp r0l, ult, r1, u{}, 1\njmp_exec_none e{r}\nfadd32 r2, r2, r3\nfmul32 r3, r3, r2\niadd r4, r4.sx, 1\n\
             e{r}:\nelse_fcmp r0l, eq, 0.0, 0.0, 1\njmp_exec_none x{r}\nfadd32 r3, r3, r2\n",
            16 + r
        ));
    }
    for r in (0..8).rev() {
        unit.push_str(&format!("x{r}:\npop_exec r0l, 1\n"));
    }
    repeat(
        "get_sr r1, sr80 (thread_position_in_grid.x)\nmov_imm r0l, 0\nmov_imm r3, 0, 0b0\n",
        &unit,
        n,
    )
}

/// A loop nest of depth `depth` (Mesa's loop form: `push_exec`, head
/// `while_icmp`, body, `jmp_exec_any` back, `pop_exec`) with work at every
/// level, repeated to about `n` instructions.
fn loop_nest(n: usize, depth: usize) -> Vec<u8> {
    fn level(s: &mut String, d: usize, depth: usize) {
        let c = 3 + d; // the level's counter register
        s.push_str(&format!(
            "mov_imm r{c}, 0, 0b0\npush_exec r0l, 1\nh{d}:\nwhile_icmp r0l, ult, r{c}, u18, 1\n\
             fmadd32 r20, r21, r22, r20\nfadd32 r21, r21, r20\n"
        ));
        if d + 1 < depth {
            level(s, d + 1, depth);
        } else {
            s.push_str("device_load 0, i32, x, r23, u0_u1, r20, unsigned\nwait 0\nfmadd32 r20, r23, r22, r20\n");
        }
        s.push_str(&format!(
            "iadd r{c}, r{c}.sx, 1\njmp_exec_any h{d}\npop_exec r0l, 1\n"
        ));
    }
    let mut unit = String::new();
    level(&mut unit, 0, depth);
    repeat(
        "get_sr r1, sr80 (thread_position_in_grid.x)\nmov_imm r0l, 0\n",
        &unit,
        n,
    )
}

/// One basic block of about `n` instructions: four interleaved dependency
/// chains of `fmadd32`/`fadd32` (each instruction waits for the previous
/// one of its chain), with a device load every 64 instructions whose `wait`
/// comes 48 instructions later.
fn dependency_block(n: usize) -> Vec<u8> {
    let mut unit = String::new();
    for i in 0..64 {
        let r = 4 + (i % 4) * 2;
        match i {
            0 => unit.push_str("device_load 0, i32, x, r20, u0_u1, r1, unsigned\n"),
            48 => unit.push_str("wait 0\n"),
            49 => unit.push_str("fmadd32 r4, r20, r20, r4\n"),
            _ if i % 2 == 0 => unit.push_str(&format!("fmadd32 r{r}, r{}, r{r}, r{r}\n", r + 1)),
            _ => unit.push_str(&format!("fadd32 r{}, r{r}, r{}\n", r + 1, r + 1)),
        }
    }
    repeat("get_sr r1, sr80 (thread_position_in_grid.x)\n", &unit, n)
}

/// Instructions of the Mesa kernels in testdata/mesa that fall through
/// (no branch, call, `ret`, `stop`): their bytes.
fn real_pool() -> Vec<Vec<u8>> {
    let mut pool = Vec::new();
    for (_, code) in mesa_kernels() {
        let (insns, _) = agx_isa::stream::decode_all_native(&code, 0);
        for i in insns {
            if matches!(i.flow(), agx_isa::Flow::Next) {
                pool.push(i.bytes()[..i.len as usize].to_vec());
            }
        }
    }
    pool
}

/// Call-dense raw code (the shape of issue 21): a stream of real Mesa
/// instructions mixed with random encodings (random words that decode to a
/// falling-through instruction), a `call` every ~50 instructions to an
/// instruction anywhere in the file, a `ret` after every fourth call.
fn call_dense(n: usize) -> Vec<u8> {
    let pool = real_pool();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut code: Vec<u8> = Vec::with_capacity(n * 6);
    let mut starts: Vec<usize> = Vec::with_capacity(n);
    let mut calls: Vec<usize> = Vec::new(); // offsets of the `call`s
    let mut count = 0;
    while count < n {
        starts.push(code.len());
        if count % 50 == 49 {
            calls.push(code.len());
            code.extend_from_slice(&[0x10, 0xc0, 0, 0, 0, 0]);
            if calls.len().is_multiple_of(4) {
                code.extend_from_slice(&[0x14, 0x02]); // ret r1
                count += 1;
            }
        } else if rng.below(5) == 0 {
            // a random encoding of a falling-through instruction
            loop {
                let mut w = [0u8; 12];
                for b in w.iter_mut() {
                    *b = rng.next() as u8;
                }
                let Ok(i) = agx_isa::decode(&w, 0) else {
                    continue;
                };
                if matches!(i.flow(), agx_isa::Flow::Next) && i.mnemonic() != "stop" {
                    code.extend_from_slice(&w[..i.len as usize]);
                    break;
                }
            }
        } else {
            code.extend_from_slice(&pool[rng.below(pool.len())]);
        }
        count += 1;
    }
    code.extend_from_slice(&[0x88, 0x00]); // stop
    for at in calls {
        let t = starts[rng.below(starts.len())];
        let rel = (t as i64 - at as i64) as i32;
        code[at + 2..at + 6].copy_from_slice(&rel.to_le_bytes());
    }
    code
}

/// The shapes of the table: (name, what it is, generator).
type Shape = (&'static str, &'static str, fn(usize) -> Vec<u8>);

const SHAPES: &[Shape] = &[
    (
        "loop-dense",
        "Mesa's matmul loop repeated: a loop per 12 instructions",
        |n| synthetic(n, true),
    ),
    (
        "straight-line",
        "Mesa's matmul loop body (imadd, device_load) repeated, no branch",
        |n| synthetic(n, false),
    ),
    (
        "branch-dense",
        "if/else ladders 8 rungs deep (jmp_exec_none over each part)",
        branch_ladder,
    ),
    (
        "loop-nest",
        "loop nests of depth 10, work at every level",
        |n| loop_nest(n, 10),
    ),
    (
        "call-dense",
        "real + random encodings, a call per 50 instructions to anywhere, ret per 4 calls",
        call_dense,
    ),
    (
        "one-block",
        "one basic block, 4 interleaved fmadd32/fadd32 chains, loads waited on 48 later",
        dependency_block,
    ),
];

fn vm_hwm_kb(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let l = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    l.split_whitespace().nth(1)?.parse().ok()
}

/// What one run of a child process cost.
#[derive(Clone, Copy, Debug)]
struct Cost {
    /// Wall seconds.
    wall: f64,
    /// CPU seconds (user + system) of the child and what it waited for.
    cpu: f64,
    /// Peak resident memory (MB): the measured process's VmHWM.
    peak_mb: f64,
}

/// Waits for `pid` with `wait4`: its exit status and resource usage (exact
/// CPU time).
fn wait_usage(pid: u32) -> (bool, libc::rusage) {
    // SAFETY: rusage is plain data; wait4 fills it for our own child.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let mut status = 0;
    let r = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut ru) };
    assert_eq!(r, pid as libc::pid_t, "wait4");
    (
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        ru,
    )
}

fn secs(t: libc::timeval) -> f64 {
    t.tv_sec as f64 + t.tv_usec as f64 / 1e6
}

/// Runs `cmd` with stdout discarded, or — `piped` — read through a pipe by
/// another process (`cat`, as a script's pipeline reads it; its CPU time is
/// counted, its memory is not), and the stderr discarded. Panics when it fails: a failed run's time means
/// nothing.
// both children are reaped by `wait4` (for their CPU time), not `wait()`
#[allow(clippy::zombie_processes)]
fn measure(cmd: &mut Command, piped: bool) -> Cost {
    use std::sync::atomic::{AtomicBool, Ordering};
    let t0 = Instant::now();
    let mut child = cmd
        .stdout(if piped { Stdio::piped() } else { Stdio::null() })
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let reader = piped.then(|| {
        Command::new("cat")
            .stdin(Stdio::from(child.stdout.take().expect("piped stdout")))
            .stdout(Stdio::null())
            .spawn()
            .expect("spawn cat")
    });
    // the peak is VmHWM polled each millisecond: `ru_maxrss` of a child
    // counts this (large) process's pages it shared before `exec`
    let pid = child.id();
    let done = AtomicBool::new(false);
    let (ok, ru, peak_kb) = std::thread::scope(|s| {
        let poll = s.spawn(|| {
            let mut peak = 0u64;
            while !done.load(Ordering::Relaxed) {
                peak = peak.max(vm_hwm_kb(pid).unwrap_or(0));
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            peak
        });
        let (ok, ru) = wait_usage(pid);
        done.store(true, Ordering::Relaxed);
        (ok, ru, poll.join().expect("poll thread"))
    });
    let mut cpu = secs(ru.ru_utime) + secs(ru.ru_stime);
    let peak = peak_kb as f64 / 1024.0;
    if let Some(r) = reader {
        let (rok, rru) = wait_usage(r.id());
        assert!(rok, "cat failed");
        cpu += secs(rru.ru_utime) + secs(rru.ru_stime);
    }
    let wall = t0.elapsed().as_secs_f64();
    assert!(ok, "{cmd:?} failed");
    Cost {
        wall,
        cpu,
        peak_mb: peak,
    }
}

/// Best wall time of `reps` runs (with that run's CPU time and peak).
fn best(reps: usize, piped: bool, mut make: impl FnMut() -> Command) -> Cost {
    (0..reps)
        .map(|_| measure(&mut make(), piped))
        .min_by(|a, b| a.wall.total_cmp(&b.wall))
        .unwrap()
}

/// `cmd` pinned to one CPU (Linux `sched_setaffinity` before exec; the
/// binary then sees one core, as on a one-core runner or a `batch` worker):
/// its CPU time there is the profile's work without the cost of running it
/// on two cores (threads waiting, caches shared, more memory touched). Any
/// binary is measured the same way, a baseline's too. `None` elsewhere.
#[cfg(target_os = "linux")]
fn one_core(mut cmd: Command) -> Option<Command> {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec only async-signal-safe calls are made
    // (sched_getcpu, the CPU_* set macros and sched_setaffinity, syscalls).
    unsafe {
        cmd.pre_exec(|| {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            let cpu = libc::sched_getcpu().max(0) as usize;
            libc::CPU_SET(cpu, &mut set);
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Some(cmd)
}

#[cfg(not(target_os = "linux"))]
fn one_core(_: Command) -> Option<Command> {
    None
}

fn machine() -> String {
    let cpu = machine::cpu();
    let cores = machine::cores();
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            let l = s.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kb: f64 = l.split_whitespace().nth(1)?.parse().ok()?;
            Some(format!(", {:.0} GiB", kb / 1024.0 / 1024.0))
        })
        .unwrap_or_default();
    format!(
        "{cpu}, {cores} logical cores{mem}, load average at start {}",
        load()
    )
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// Command-line options of the bench (after `--`).
struct Opts {
    applegpu: Option<PathBuf>,
    /// Only these rows: `shapes`, `batch`, `disasm` (default: all).
    only: Option<String>,
    /// Only the shape of this name.
    shape: Option<String>,
    /// Write the shape inputs to this directory and exit.
    write: Option<PathBuf>,
}

fn opts() -> Opts {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|k| args.get(k + 1).cloned())
    };
    let flags_with_values = ["--only", "--shape", "--write"];
    let positional = args
        .iter()
        .enumerate()
        .find(|(k, a)| {
            !a.starts_with('-') && (*k == 0 || !flags_with_values.contains(&args[k - 1].as_str()))
        })
        .map(|(_, a)| PathBuf::from(a));
    let mut only = value("--only");
    if args.iter().any(|a| a == "--only-disasm") {
        only = Some("disasm".into());
    }
    Opts {
        applegpu: positional.or_else(|| std::env::var_os("APPLEGPU_DIR").map(PathBuf::from)),
        only,
        shape: value("--shape"),
        write: value("--write").map(PathBuf::from),
    }
}

const SIZES: [usize; 2] = [200_000, 1_000_000];

fn main() {
    let o = opts();
    if let Some(dir) = &o.write {
        std::fs::create_dir_all(dir).unwrap();
        for (name, _, make) in SHAPES {
            if o.shape.as_deref().is_some_and(|s| s != *name) {
                continue;
            }
            for n in SIZES {
                let f = dir.join(format!("{name}-{n}.bin"));
                std::fs::write(&f, make(n)).unwrap();
                println!("{}", f.display());
            }
        }
        if o.shape.is_none() {
            let (small, big) = batch_inputs(dir);
            println!("{}\n{}", small.0.display(), big.0.display());
        }
        return;
    }
    let tmp = std::env::temp_dir().join(format!("mp-scale-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let want = |row: &str| o.only.as_deref().is_none_or(|x| x == row);

    println!("machine: {}", machine());
    println!("binary: {}", BIN.display());
    println!();
    println!(
        "CPU s is user + system time of the processes measured (on a loaded machine the wall time"
    );
    println!("grows with the load, the CPU time much less); peak MB is the measured process's peak resident set.");
    if want("shapes") {
        shapes(&tmp, o.shape.as_deref());
    }
    if let (true, Some(base)) = (want("versus"), baseline()) {
        versus(&tmp, &base, o.shape.as_deref());
    }
    if want("batch") {
        batch(&tmp);
    }
    if want("disasm") {
        disasm(&tmp, o.applegpu.as_deref());
    }
    println!();
    println!("load average at the end: {}", load());
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Runs the default profile of `f` with `bin`, pinned to one CPU when
/// `solo` (None where pinning is not available).
fn profile_cmd(bin: &Path, f: &Path, solo: bool) -> Option<Command> {
    let mut c = Command::new(bin);
    // call-dense mixes in random encodings: a few positions do not
    // decode, which exits 4 without --allow-unknown
    c.arg("--binary").arg(f).arg("--allow-unknown");
    if solo {
        one_core(c)
    } else {
        Some(c)
    }
}

/// Every shape against the baseline of `SCALE_BASELINE`, in one table:
/// the two binaries take turns on each input (best of 5, and of 3 pinned
/// to one CPU), so that a change of the machine's load falls on both; the
/// ratios are main / baseline.
fn versus(tmp: &Path, base: &Path, only: Option<&str>) {
    println!();
    println!("baseline: {}", base.display());
    println!();
    println!("| shape | baseline: wall s / CPU s / peak MB | main: wall s / CPU s / peak MB | CPU main / baseline | one core, CPU s: baseline / main | one core, main / baseline |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (name, _, make) in SHAPES {
        if only.is_some_and(|s| s != *name) {
            continue;
        }
        for n in SIZES {
            let f = tmp.join(format!("{name}-{n}.bin"));
            std::fs::write(&f, make(n)).unwrap();
            let best = |v: &[Cost]| Cost {
                wall: v.iter().map(|c| c.wall).fold(f64::INFINITY, f64::min),
                cpu: v.iter().map(|c| c.cpu).fold(f64::INFINITY, f64::min),
                peak_mb: v.iter().map(|c| c.peak_mb).fold(0.0, f64::max),
            };
            let (mut m, mut b) = (Vec::new(), Vec::new());
            for _ in 0..5 {
                m.push(measure(&mut profile_cmd(&BIN, &f, false).unwrap(), false));
                b.push(measure(&mut profile_cmd(base, &f, false).unwrap(), false));
            }
            let (mut m1, mut b1) = (Vec::new(), Vec::new());
            for _ in 0..3 {
                if let (Some(mut x), Some(mut y)) =
                    (profile_cmd(&BIN, &f, true), profile_cmd(base, &f, true))
                {
                    m1.push(measure(&mut x, false));
                    b1.push(measure(&mut y, false));
                }
            }
            let (m, b) = (best(&m), best(&b));
            let solo = if m1.is_empty() {
                "n/a | n/a".to_string()
            } else {
                let (m1, b1) = (best(&m1), best(&b1));
                format!("{:.3} / {:.3} | {:.2}", b1.cpu, m1.cpu, m1.cpu / b1.cpu)
            };
            println!(
                "| {name} {}k | {:.3} / {:.3} / {:.0} | {:.3} / {:.3} / {:.0} | {:.2} | {solo} |",
                n / 1000,
                b.wall,
                b.cpu,
                b.peak_mb,
                m.wall,
                m.cpu,
                m.peak_mb,
                m.cpu / b.cpu
            );
            let _ = std::fs::remove_file(&f);
        }
    }
}

/// The profile (default text report) of every shape at 200k and 1M
/// instructions.
fn shapes(tmp: &Path, only: Option<&str>) {
    println!();
    println!(
        "| shape | instructions | wall s | CPU s | peak MB | 1M/200k wall | 1M/200k CPU | one-core CPU s | JSON bytes/insn |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut notes = Vec::new();
    for (name, what, make) in SHAPES {
        if only.is_some_and(|s| s != *name) {
            continue;
        }
        let mut costs = Vec::new();
        for n in SIZES {
            let f = tmp.join(format!("{name}-{n}.bin"));
            let code = make(n);
            let (insns, _) = agx_isa::stream::decode_all_native(&code, 0);
            std::fs::write(&f, &code).unwrap();
            let c = best(if n < 500_000 { 3 } else { 2 }, false, || {
                profile_cmd(&BIN, &f, false).expect("an unpinned command")
            });
            // the same run pinned to one CPU: the work alone (best of as many)
            let solo = (|| {
                let mut runs = Vec::new();
                for _ in 0..if n < 500_000 { 3 } else { 2 } {
                    runs.push(measure(&mut profile_cmd(&BIN, &f, true)?, false).cpu);
                }
                runs.into_iter().min_by(f64::total_cmp)
            })()
            .map_or_else(|| "n/a".to_string(), |cpu| format!("{cpu:.3}"));
            let ratio = match costs.first() {
                Some(small) => {
                    let s: &Cost = small;
                    format!("{:.2} | {:.2}", c.wall / s.wall, c.cpu / s.cpu)
                }
                None => " | ".into(),
            };
            // the size of the JSON report (`--format json`, one run, not
            // timed): what a CI job stores and a script parses per insn
            let json = tmp.join(format!("{name}-{n}.json"));
            let ok = Command::new(&*BIN)
                .arg("--binary")
                .arg(&f)
                .arg("--allow-unknown")
                .args(["--format", "json", "-o"])
                .arg(&json)
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            let json_bytes = std::fs::metadata(&json).map_or(0, |m| m.len());
            let _ = std::fs::remove_file(&json);
            let per_insn = if ok && !insns.is_empty() {
                format!("{:.0}", json_bytes as f64 / insns.len() as f64)
            } else {
                "failed".into()
            };
            println!(
                "| {name} | {} | {:.3} | {:.3} | {:.0} | {ratio} | {solo} | {per_insn} |",
                insns.len(),
                c.wall,
                c.cpu,
                c.peak_mb
            );
            costs.push(c);
        }
        notes.push(format!("- {name}: {what}"));
        let _ = std::fs::remove_file(tmp.join(format!("{name}-200000.bin")));
        let _ = std::fs::remove_file(tmp.join(format!("{name}-1000000.bin")));
    }
    println!();
    for n in notes {
        println!("{n}");
    }
}

/// Writes one archive per entry of `kernels` (cycled `count` times), `per`
/// kernels each, into subdirectories of `dir` of 500 archives.
fn write_archives(dir: &Path, kernels: &[(String, Vec<u8>)], count: usize, per: usize) -> usize {
    let mut k = 0;
    for a in 0..count {
        let funcs: Vec<(String, &[u8])> = (0..per)
            .map(|_| {
                let (n, c) = &kernels[k % kernels.len()];
                k += 1;
                (format!("{n}_{k}_agc.main"), c.as_slice())
            })
            .collect();
        let refs: Vec<(&str, &[u8])> = funcs.iter().map(|(n, c)| (n.as_str(), *c)).collect();
        let (text, syms) = layout_text(&refs, 256);
        let bytes = build_test_archive(G13G, Stage::Compute, &text, &sym_refs(&syms));
        let sub = dir.join(format!("set{}", a / 500));
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join(format!("a{a:04}.archive")), bytes).unwrap();
    }
    k
}

/// The two batch inputs, written under `tmp`: (directory, kernels, Mesa
/// kernels cycled) of the small archives, and of the ~5k-instruction ones.
fn batch_inputs(tmp: &Path) -> ((PathBuf, usize, usize), (PathBuf, usize)) {
    let small = tmp.join("small");
    let ks = mesa_kernels();
    assert!(!ks.is_empty(), "no kernels in testdata/mesa");
    let n_small = write_archives(&small, &ks, 3000, 1);
    let big = tmp.join("big");
    let mids: Vec<(String, Vec<u8>)> = vec![
        ("loops".into(), synthetic(5_000, true)),
        ("line".into(), synthetic(5_000, false)),
        ("ladder".into(), branch_ladder(5_000)),
        ("nest".into(), loop_nest(5_000, 10)),
        ("block".into(), dependency_block(5_000)),
    ];
    let n_big = write_archives(&big, &mids, 60, 5);
    ((small, n_small, ks.len()), (big, n_big))
}

/// `batch` with 1 and 2 jobs over ~3,000 small one-kernel archives and over
/// 300 kernels of ~5,000 instructions (timed with the default text table);
/// the text and JSON outputs of both must be equal.
fn batch(tmp: &Path) {
    let ((small, n_small, n_mesa), (big, n_big)) = batch_inputs(tmp);
    println!();
    println!("| batch | jobs | wall s | CPU s | peak MB | speed-up (wall) |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (dir, what) in [
        (
            &small,
            format!(
                "{n_small} one-kernel archives (the {n_mesa} Mesa kernels of testdata/mesa, cycled)"
            ),
        ),
        (
            &big,
            format!("{n_big} kernels of ~5,000 instructions in 60 archives (5 shapes)"),
        ),
    ] {
        let run = |jobs: &str, format: &str| {
            let out = Command::new(&*BIN)
                .arg("batch")
                .arg(dir)
                .args(["--jobs", jobs, "--format", format])
                .output()
                .expect("run batch");
            assert!(
                out.status.success(),
                "batch failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            out.stdout
        };
        for format in ["text", "json"] {
            assert!(
                run("1", format) == run("2", format),
                "batch --format {format} differs between --jobs 1 and 2"
            );
        }
        let mut one = None;
        for jobs in ["1", "2"] {
            let c = best(3, false, || {
                let mut c = Command::new(&*BIN);
                c.arg("batch").arg(dir).args(["--jobs", jobs]);
                c
            });
            let speed = one.map_or(String::new(), |o: Cost| format!("{:.2}×", o.wall / c.wall));
            println!(
                "| {what} | {jobs} | {:.3} | {:.3} | {:.0} | {speed} |",
                c.wall, c.cpu, c.peak_mb
            );
            one.get_or_insert(c);
        }
    }
}

/// `--disasm-only` against applegpu, same input, same run, both read
/// through a pipe by another process.
fn disasm(tmp: &Path, applegpu: Option<&Path>) {
    let n = 200_000;
    let dis = tmp.join("line200k.bin");
    std::fs::write(&dis, synthetic(n, false)).unwrap();
    println!();
    println!("| disassembly (stdout read through a pipe by `cat`) | input | wall s | CPU s | peak MB | note |");
    println!("|---|---|---:|---:|---:|---|");
    // ~20 ms a run: best of 15 (one applegpu run takes many seconds)
    let d = best(15, true, || {
        let mut c = Command::new(&*BIN);
        c.arg("--binary").arg(&dis).arg("--disasm-only");
        c
    });
    println!(
        "| metal-profile --disasm-only | {n} instructions | {:.4} | {:.4} | {:.0} | {:.2} M lines/s |",
        d.wall,
        d.cpu,
        d.peak_mb,
        n as f64 / d.wall / 1e6
    );
    match applegpu {
        Some(dir) if dir.join("disassemble.py").exists() => {
            let a = measure(
                Command::new("python3")
                    .arg(dir.join("disassemble.py"))
                    .arg(&dis),
                true,
            );
            println!(
                "| applegpu disassemble.py | same file | {:.3} | {:.3} | {:.0} | ours is {:.0}× faster (wall), {:.0}× (CPU) |",
                a.wall,
                a.cpu,
                a.peak_mb,
                a.wall / d.wall,
                a.cpu / d.cpu
            );
        }
        Some(dir) => println!(
            "| applegpu | {} has no disassemble.py | | | | not measured |",
            dir.display()
        ),
        None => println!(
            "| applegpu | pass a checkout: `cargo bench -p metal-profiler --bench scale -- /path/to/applegpu` | | | | not measured |"
        ),
    }
}
