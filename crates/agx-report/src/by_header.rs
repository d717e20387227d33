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
    }
}
