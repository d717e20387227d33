//! Work spread over the cores with results taken in order (deterministic
//! output whatever the core count).

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
    let threads = std::thread::available_parallelism()
        .map(|t| t.get())
        .unwrap_or(1)
        .min(8);
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
