//! `metal-profile`: the command-line front end.

use clap::Parser;
use std::io::IsTerminal;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match metal_profiler::cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // clap's own messages (usage errors exit 2, --help/--version exit 0)
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
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
                    eprintln!("metal-profile: cannot write output: {e}");
                    return ExitCode::from(1);
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("metal-profile: error: {}", e.message);
            ExitCode::from(e.code as u8)
        }
    }
}
