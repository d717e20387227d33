//! Work spread over the cores with results taken in order (deterministic
//! output whatever the core count).

use std::cell::Cell;

thread_local! {
    static SERIAL: Cell<bool> = const { Cell::new(false) };
}

/// Keeps the work started on this thread on this thread (no helper
/// threads): for callers that already run one task per core, such as the
/// workers of `metal-profile batch`.
pub fn set_serial(on: bool) {
    SERIAL.with(|s| s.set(on));
}

/// Threads the helpers may use for work started on this thread: 1 after
/// [`set_serial`]`(true)`, else the cores (at most 8).
pub fn threads() -> usize {
    if SERIAL.with(|s| s.get()) {
        return 1;
    }
    std::thread::available_parallelism()
        .map(|t| t.get())
        .unwrap_or(1)
        .min(8)
}

/// `f(0..n)` handed to `sink` in index order; with many items they are
/// computed in batches on all cores (`f` must be a pure function of its
/// index: the results, and so the reports, are the same whatever the cores).
pub fn map_ordered<T: Send>(
    n: usize,
    f: &(dyn Fn(usize) -> T + Sync),
    mut sink: impl FnMut(usize, T),
) {
    /// Items per batch (bounds the results held at once).
    const BATCH: usize = 2048;
    let threads = threads();
    if threads < 2 || n < 256 {
        for i in 0..n {
            sink(i, f(i));
        }
        return;
    }
    let mut start = 0;
    while start < n {
        let end = (start + BATCH).min(n);
        let per = (end - start).div_ceil(threads);
        let parts: Vec<Vec<T>> = std::thread::scope(|sc| {
            let handles: Vec<_> = (1..threads)
                .map(|t| {
                    let (a, b) = (start + t * per, (start + (t + 1) * per).min(end));
                    sc.spawn(move || (a..b).map(f).collect::<Vec<T>>())
                })
                .collect();
            let mut parts = vec![(start..(start + per).min(end)).map(f).collect::<Vec<T>>()];
            for h in handles {
                parts.push(h.join().expect("a modelling thread panicked"));
            }
            parts
        });
        let mut i = start;
        for part in parts {
            for x in part {
                sink(i, x);
                i += 1;
            }
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
}
