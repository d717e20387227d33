//! `metal-profile`: the command-line front end.

/// mimalloc, not the system allocator (issue 37 item 7): the analysis runs
/// its independent passes on two cores (the access facts beside the
/// divergence, register and trip-count passes), and both allocate heavily;
/// glibc's allocator with one arena (what this binary set before) made each
/// of the two take ~1.8x as long side by side as alone, glibc's default
/// arenas ~1.1x (METAL_PROFILE_TIME_PASSES on loop-nest at 1M
/// instructions). mimalloc keeps per-thread heaps. Figures: the scale bench
/// table in docs/performance-history.md.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay` (its place in `mi_option_e`,
/// include/mimalloc.h of mimalloc v2 and v3 alike; libmimalloc-sys names
/// the options around it, 14 and 16, but not this one).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// A profile is one short process: memory it frees is soon wanted again,
/// so it is never handed back to the system. With mimalloc's default
/// (purge after 10 ms) a 1M-instruction call-dense profile gave freed pages
/// back between passes and the kernel zeroed them again on the next touch:
/// 0.56-1.22 s of system time and ~4,000-6,000 page faults against
/// 0.10-0.19 s and ~640 with no purge, for ~5% more peak memory
/// (`/usr/bin/time`, 2-core VM, load ~1.5).
fn keep_freed_memory() {
    // SAFETY: sets one integer option of the allocator; mimalloc reads
    // options each time it considers a purge, and any value is valid.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
}

use clap::Parser;
use std::io::IsTerminal;
use std::process::ExitCode;

/// A pipe on standard output gets the largest buffer the system allows
/// (`/proc/sys/fs/pipe-max-size`, 1 MiB by default; 64 KiB otherwise):
/// a listing or report is written in pieces of a few hundred KB, and with
/// the default buffer each piece waits for the reader several times
/// (`--disasm-only | cat`: issue 37 item 7). Nothing changes when it is not
/// a pipe or the call is refused.
#[cfg(target_os = "linux")]
fn widen_pipe(out: &std::io::Stdout) {
    use std::os::fd::AsRawFd;
    let fd = out.as_raw_fd();
    let max = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
        .ok()
        .and_then(|s| s.trim().parse::<libc::c_int>().ok())
        .unwrap_or(1 << 20)
        .min(1 << 20);
    // SAFETY: fcntl on our own standard output descriptor with integer
    // arguments; it fails harmlessly (EBADF, EINVAL, EPERM) when the
    // descriptor is not a pipe or the size is refused.
    unsafe {
        libc::fcntl(fd, libc::F_SETPIPE_SZ, max);
    }
}

#[cfg(not(target_os = "linux"))]
fn widen_pipe(_: &std::io::Stdout) {}

/// No transparent huge pages for this process: mimalloc asks for them on
/// its arenas (`madvise(MADV_HUGEPAGE)`, its `allow_thp` default), and the
/// kernel then zeroes a whole 2 MiB page at the first touch of any byte of
/// it, and may compact memory to find one. A 1M-instruction call-dense
/// profile spent 0.53-1.23 s of system time so (~590 faults) against
/// 0.32-0.33 s with 4 KiB pages (~138k faults), user time alike
/// (`/usr/bin/time`, 2-core VM, load ~0.5). The flag is read at each
/// fault, so it covers the arena mimalloc reserved before `main`.
#[cfg(target_os = "linux")]
fn no_huge_pages() {
    // SAFETY: a prctl with integer arguments on this process; it fails
    // harmlessly (EINVAL on kernels without it).
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

#[cfg(not(target_os = "linux"))]
fn no_huge_pages() {}

fn main() -> ExitCode {
    keep_freed_memory();
    no_huge_pages();
    agx_analysis::time_passes::mark("started");
    let cli = match metal_profiler::cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) if !e.use_stderr() => {
            // --help / --version: clap prints them, exit 0
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            // a usage error: one line, as every other error, exit 2
            let argv: Vec<String> = std::env::args().collect();
            eprintln!(
                "metal-profile: error: {}",
                metal_profiler::cli::usage_error_line(&e, &argv)
            );
            return ExitCode::from(2);
        }
    };
    let stdout = std::io::stdout();
    widen_pipe(&stdout);
    let tty = stdout.is_terminal();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut err = std::io::stderr();
    let res = metal_profiler::app::run(&cli, &mut out, &mut err, tty);
    use std::io::Write;
    let flushed = out.flush();
    match res {
        Ok(()) => {
            if let Err(e) = flushed {
                if e.kind() != std::io::ErrorKind::BrokenPipe {
                    eprintln!("metal-profile: error: cannot write output: {e}; check the disk or the pipe");
                    return ExitCode::from(1);
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            // exit 4 (unknown encodings) carries no message: its warning is out
            if let Some(line) = metal_profiler::app::error_line(&e) {
                eprintln!("{line}");
            }
            ExitCode::from(e.code as u8)
        }
    }
}
