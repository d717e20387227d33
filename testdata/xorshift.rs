//! The small deterministic generators (xorshift64*, xorshift64) of the
//! tests and benches that make random inputs: every run makes the same
//! ones. One copy, included as `mod xorshift;` (in a library crate's unit
//! tests too, under `#[cfg(test)]`).
#![allow(dead_code)]

/// Marsaglia's xorshift64 (shifts 13, 7, 17; "Xorshift RNGs", 2003) seeded
/// with `seed` (nonzero): each call returns the next value. The randomized
/// tests written before [`Rng`] keep their inputs with it.
pub fn xorshift64(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

/// xorshift64* (Vigna), seeded with a nonzero state.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// 128 random bits.
    pub fn word(&mut self) -> u128 {
        (self.next() as u128) | ((self.next() as u128) << 64)
    }

    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}
