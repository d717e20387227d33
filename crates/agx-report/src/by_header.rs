//! Loops looked up by header address.

/// Positions of items by a `u32` key (a loop's header address), in item
/// order within a key: (key, position) pairs sorted, searched by halving.
/// Holds 8 bytes an item; a map with a vector per key held ~60 (a
/// 1M-instruction kernel has ~83k loops, indexed while the report is
/// written, at the run's peak memory).
pub(crate) struct ByHeader(Vec<(u32, u32)>);

impl ByHeader {
    /// Indexes `keys` (the key of each item, in item order).
    pub(crate) fn new(keys: impl Iterator<Item = u32>) -> Self {
        let mut v: Vec<(u32, u32)> = keys
            .enumerate()
            .map(|(i, k)| (k, u32::try_from(i).expect("fewer than 2^32 items")))
            .collect();
        // (key, position) pairs are distinct: the order is total and keeps
        // item order within a key
        v.sort_unstable();
        ByHeader(v)
    }

    /// Positions of the items with key `k`, in item order.
    pub(crate) fn get(&self, k: u32) -> impl Iterator<Item = usize> + '_ {
        let lo = self.0.partition_point(|x| x.0 < k);
        self.0[lo..]
            .iter()
            .take_while(move |x| x.0 == k)
            .map(|x| x.1 as usize)
    }

    /// The first of `items` with key `k` that `pred` accepts, else the
    /// first with key `k` (a loop matched by header, then by latch).
    pub(crate) fn pick<'a, T>(
        &self,
        items: &'a [T],
        k: u32,
        pred: impl Fn(&T) -> bool,
    ) -> Option<&'a T> {
        let mut all = self.get(k).map(|i| &items[i]);
        let first = all.next()?;
        if pred(first) {
            return Some(first);
        }
        Some(all.find(|x| pred(x)).unwrap_or(first))
    }
}

#[cfg(test)]
mod tests {
    use super::ByHeader;

    #[test]
    fn positions_in_item_order_per_key() {
        let idx = ByHeader::new([7u32, 3, 7, 9, 3, 7].into_iter());
        assert_eq!(idx.get(7).collect::<Vec<_>>(), vec![0, 2, 5]);
        assert_eq!(idx.get(3).collect::<Vec<_>>(), vec![1, 4]);
        assert_eq!(idx.get(9).collect::<Vec<_>>(), vec![3]);
        assert_eq!(idx.get(5).count(), 0);
        assert_eq!(idx.get(10).count(), 0);
        let items = ["a7", "b3", "c7", "d9", "e3", "f7"];
        assert_eq!(idx.pick(&items, 7, |s| s.starts_with('c')), Some(&"c7"));
        assert_eq!(idx.pick(&items, 7, |s| s.starts_with('z')), Some(&"a7"));
        assert_eq!(idx.pick(&items, 5, |_| true), None);
    }
}
