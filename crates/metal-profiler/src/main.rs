//! `metal-profile`: the command-line front end.

use clap::Parser;
use std::io::IsTerminal;
use std::process::ExitCode;

/// glibc's allocator, set before any allocation of ours (issue 21): one
/// arena. The modelling threads (`agx_analysis::par`, the listing) otherwise
/// allocate in arenas of their own, whose freed memory the main thread does
/// not reuse. Measured on the six 1M-instruction shapes (2-core AMD EPYC VM,
/// loaded; peak RSS, 3 runs each, same binary): loop-nest 460..479 ->
/// 421..439 MB, call-dense 407..417 -> 406..412, branch-dense 433 -> 426,
/// one-block 340 -> 332, loop-dense 410 -> 397, straight-line 349 -> 349;
/// CPU time the same within the noise (8.59 -> 8.54 s summed, page faults
/// -2..-6%). Rejected by the same runs: `M_MMAP_THRESHOLD` 32 MB (-15%
/// faults, +12..+17 MB peak), with `M_TRIM_THRESHOLD` 256 MB too (-20%
/// faults, up to +60 MB peak), `M_TRIM_THRESHOLD` alone (+25% faults), one
/// arena with `M_TOP_PAD` 64 MB (-11..-19% faults on five shapes but +11% on
/// call-dense, loop-nest's peak 15 MB above one arena alone). One arena
/// serialises the threads' allocations: for one profile (its helper threads
/// allocate little) that cost nothing measurable, but `batch` and `diff` run
/// whole kernels on `--jobs` workers, and with one arena `batch --jobs 2`
/// over 3,000 small archives took 0.91x the time of one job (1.70x with
/// glibc's default arenas), so they keep the default.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn tune_allocator() {
    // SAFETY: mallopt only sets parameters of the allocator, here before
    // this process starts a thread (the command line is parsed on the main
    // thread only); a value it refuses is left as it was.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_allocator() {}

/// When stdout is a pipe, asks for a 1 MiB pipe buffer instead of Linux's
/// 64 KiB (issue 29 item 10): a 200,000-line `--disasm-only` listing (~8 MB)
/// then crosses to the reading process in ~8 fills instead of ~130, each of
/// which waits for the reader to be scheduled (on a loaded 2-core machine
/// that wait, not our formatting, was most of the wall time). Nothing else
/// changes: the bytes are the same; a refused size (above
/// /proc/sys/fs/pipe-max-size) leaves the pipe as it was.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn widen_stdout_pipe() {
    // SAFETY: fstat fills a plain struct for fd 1; fcntl(F_SETPIPE_SZ) only
    // resizes the pipe's buffer (or fails, changing nothing).
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(1, &mut st) == 0 && st.st_mode & libc::S_IFMT == libc::S_IFIFO {
            for size in [1 << 20, 1 << 18] {
                if libc::fcntl(1, libc::F_SETPIPE_SZ, size) >= 0 {
                    break;
                }
            }
        }
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn widen_stdout_pipe() {}

fn main() -> ExitCode {
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
    // one profile (no subcommand): one arena; batch and diff: the default
    if cli.command.is_none() {
        tune_allocator();
        if cli.profile.disasm_only {
            widen_stdout_pipe();
        }
    }
    let stdout = std::io::stdout();
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
