//! Work spread over the cores with results taken in order (deterministic
//! output whatever the core count), on a `rayon` pool (issue 36 item 5:
//! the well-kept work-stealing pool replaces our own scoped threads; the
//! order of results stays ours to keep).

use std::cell::Cell;
use std::sync::OnceLock;

thread_local! {
    static SERIAL: Cell<bool> = const { Cell::new(false) };
}

/// Keeps the work started on this thread on this thread (no helper
/// threads): for callers that already run one task per core, such as the
/// workers of `metal-profile batch`.
pub fn set_serial(on: bool) {
    SERIAL.with(|s| s.set(on));
}

/// A cap on the cores set by [`limit_threads`] (0: none).
static LIMIT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Caps the cores the helpers of every thread use at `n` (at least 1), for
/// the rest of the process: `metal-profile --jobs N` on a shared machine. A
/// cap of 1 runs everything on the calling thread, as [`set_serial`] does;
/// the results are the same whatever the cap. Takes effect for the pool
/// only before its first use (the front end sets it first).
pub fn limit_threads(n: usize) {
    LIMIT.store(n.max(1), std::sync::atomic::Ordering::Relaxed);
}

/// The cores the helpers may use (at most 8: past that the kernels we
/// profile gain nothing measurable and memory per thread grows; at most
/// the cap of [`limit_threads`]).
fn cores() -> usize {
    let n = std::thread::available_parallelism()
        .map(|t| t.get())
        .unwrap_or(1)
        .min(8);
    match LIMIT.load(std::sync::atomic::Ordering::Relaxed) {
        0 => n,
        cap => n.min(cap),
    }
}

/// The pool every helper task runs on, built once with [`cores`] threads
/// (a pool of our own, so that a host program's global rayon pool is left
/// as it configured it).
fn pool() -> &'static rayon::ThreadPool {
    static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(cores())
            .thread_name(|i| format!("metal-profiler-{i}"))
            .build()
            .expect("a rayon pool of at most 8 threads")
    })
}

/// Threads the helpers may use for work started on this thread: 1 after
/// [`set_serial`]`(true)`, else the cores (at most 8).
pub fn threads() -> usize {
    if SERIAL.with(|s| s.get()) {
        return 1;
    }
    cores()
}

/// `a()` and `b()`, on two cores when this thread may use helpers (else
/// one after the other, `a` first).
pub fn join<A: Send, B: Send>(
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if threads() < 2 {
        let x = a();
        return (x, b());
    }
    pool().install(|| rayon::join(a, b))
}

/// Runs `f` on the pool (so that the rayon calls inside it use the pool's
/// threads): for callers that split their own work with `rayon` directly.
pub fn install<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    pool().install(f)
}

/// `f(0..n)` handed to `sink` in index order; with many items they are
/// computed in batches on all cores (`f` must be a pure function of its
/// index: the results, and so the reports, are the same whatever the cores).
pub fn map_ordered<T: Send>(
    n: usize,
    f: &(dyn Fn(usize) -> T + Sync),
    mut sink: impl FnMut(usize, T),
) {
    use rayon::prelude::*;
    /// Items per batch (bounds the results held at once).
    const BATCH: usize = 2048;
    if threads() < 2 || n < 256 {
        for i in 0..n {
            sink(i, f(i));
        }
        return;
    }
    let mut start = 0;
    while start < n {
        let end = (start + BATCH).min(n);
        // rayon's indexed collect keeps the items in index order
        let part: Vec<T> = pool().install(|| (start..end).into_par_iter().map(f).collect());
        for (i, x) in (start..end).zip(part) {
            sink(i, x);
        }
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Results come in index order whatever the threads, serial or not.
    #[test]
    fn map_ordered_keeps_order() {
        for serial in [false, true] {
            set_serial(serial);
            for n in [0, 1, 255, 256, 5000] {
                let mut got = Vec::new();
                map_ordered(n, &|i| i * 3, |i, x| got.push((i, x)));
                assert_eq!(got, (0..n).map(|i| (i, i * 3)).collect::<Vec<_>>());
            }
            assert_eq!(threads() == 1, serial || threads() == 1);
        }
        set_serial(false);
    }

    /// A cap of one core keeps the work on the calling thread.
    #[test]
    fn a_cap_of_one_core_is_serial() {
        let before = LIMIT.load(std::sync::atomic::Ordering::Relaxed);
        limit_threads(1);
        assert_eq!(threads(), 1);
        let caller = std::thread::current().id();
        let (a, b) = join(
            || std::thread::current().id(),
            || std::thread::current().id(),
        );
        assert_eq!((a, b), (caller, caller));
        LIMIT.store(before, std::sync::atomic::Ordering::Relaxed);
    }

    /// `join` returns both results in place, serial or not.
    #[test]
    fn join_returns_both() {
        for serial in [false, true] {
            set_serial(serial);
            let (a, b) = join(|| (0..1000u64).sum::<u64>(), || "b".to_string());
            assert_eq!((a, b.as_str()), (499_500, "b"));
        }
        set_serial(false);
    }
}
