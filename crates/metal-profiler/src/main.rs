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

use clap::Parser;
use std::io::IsTerminal;
use std::process::ExitCode;

fn main() -> ExitCode {
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
