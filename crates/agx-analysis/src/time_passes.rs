//! `METAL_PROFILE_TIME_PASSES=1`: each pass of a profile prints when it
//! ends, to standard error (`metal-profile: time-passes: 0.412 s structure
//! (cfg, loops, liveness)`), seconds since the first mark of the process.
//! For finding where the wall time of a big kernel goes before a flame
//! graph says why (docs/performance-history.md); off, a mark is one load of
//! a flag. Not part of any report: the figures depend on the machine.

use std::sync::OnceLock;
use std::time::Instant;

/// The first mark's time, when the variable is set.
fn start() -> Option<Instant> {
    static T0: OnceLock<Option<Instant>> = OnceLock::new();
    *T0.get_or_init(|| std::env::var_os("METAL_PROFILE_TIME_PASSES").map(|_| Instant::now()))
}

/// Marks the end of pass `name` (prints it when the variable is set),
/// with the process's resident memory then and at its peak so far (Linux:
/// `VmRSS`, `VmHWM` of /proc/self/status), so that a pass that builds the
/// peak is seen as one that takes the time.
pub fn mark(name: &str) {
    if let Some(t0) = start() {
        eprintln!(
            "metal-profile: time-passes: {:.3} s{} {name}",
            t0.elapsed().as_secs_f64(),
            memory()
        );
    }
}

/// `, RSS N MB (peak M MB)` where the system says, else nothing.
fn memory() -> String {
    let Ok(s) = std::fs::read_to_string("/proc/self/status") else {
        return String::new();
    };
    let mb = |key: &str| -> Option<u64> {
        let l = s.lines().find(|l| l.starts_with(key))?;
        let kb: u64 = l.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb / 1024)
    };
    match (mb("VmRSS:"), mb("VmHWM:")) {
        (Some(now), Some(peak)) => format!(", RSS {now} MB (peak {peak} MB)"),
        _ => String::new(),
    }
}
