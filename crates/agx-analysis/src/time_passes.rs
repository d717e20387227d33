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

/// Marks the end of pass `name` (prints it when the variable is set).
pub fn mark(name: &str) {
    if let Some(t0) = start() {
        eprintln!(
            "metal-profile: time-passes: {:.3} s {name}",
            t0.elapsed().as_secs_f64()
        );
    }
}
