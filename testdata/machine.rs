//! The machine a bench runs on, as every bench prints it (one copy,
//! included by each bench as `mod machine;`): the CPU's model name and the
//! logical cores.
#![allow(dead_code)]

/// The CPU's model name (`/proc/cpuinfo`), or "unknown CPU".
pub fn cpu() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

/// The logical cores this process may use (1 when not known).
pub fn cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}
