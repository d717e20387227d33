//! Threadgroup-memory bank conflicts (issue 35, item 3): from the lane
//! pattern of each threadgroup access ([`crate::address::Access`]), the
//! largest number of distinct words one bank serves for one SIMD-group
//! request, under the GPU model's [`BankModel`].
//!
//! The lanes' byte offsets are rebuilt from the access facts (uniform,
//! contiguous, strided, rows with a known jump): lane `l` of a `rows`
//! access is at `(l / run) * jump + (l % run) * lane_stride`. The common
//! base cancels out (a word-aligned base only rotates the banks). Lanes that
//! read one word are served together (the broadcast rule). A lane moving
//! more than one word needs `ceil(words / banks)` passes anyway; the ways
//! are the largest bank's words over those passes (so a contiguous `vec4`
//! request is 1, not 4). `None` when the pattern does not give the offsets
//! (gather, unknown, a runtime stride or jump).

use crate::address::{Access, Addresses, Pattern};

/// How threadgroup memory is banked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BankModel {
    /// Number of banks.
    pub banks: u32,
    /// Bytes per bank word (consecutive words go to consecutive banks).
    pub word_bytes: u32,
    /// Lanes reading the same word are served at once (broadcast).
    pub broadcast: bool,
    /// Where the numbers come from (or that they are an assumption).
    pub source: &'static str,
}

/// The conventional banking of GPU shared memory (32 banks of 4 bytes,
/// same-word broadcast). ASSUMPTION for Apple GPUs: no source in
/// `shared/reference/` or metal-benchmarks states Apple's threadgroup
/// banking; this is the layout of the GPUs the advice is usually written
/// for (e.g. CUDA's shared memory), and the report says so.
pub const CONVENTIONAL_32X4: BankModel = BankModel {
    banks: 32,
    word_bytes: 4,
    broadcast: true,
    source: "assumption: 32 banks x 4 B with same-word broadcast (the conventional GPU shared-memory layout); no public Apple source states the threadgroup banking",
};

/// Lanes of one SIMD-group request.
const LANES: i64 = 32;

/// The byte offset of each lane (relative to lane 0), when the pattern
/// gives it.
fn lane_offsets(a: &Access, lanes: i64) -> Option<Vec<i64>> {
    let s = a.lane_stride;
    let offs = match a.lane_pattern {
        Pattern::Uniform => vec![0; lanes as usize],
        Pattern::Contiguous | Pattern::Strided => {
            let s = s?;
            (0..lanes).map(|l| l * s).collect()
        }
        Pattern::Rows => {
            let (s, run, jump) = (s?, a.run? as i64, a.jump?);
            if run == 0 {
                return None;
            }
            (0..lanes).map(|l| l / run * jump + l % run * s).collect()
        }
        Pattern::Gather | Pattern::Unknown => return None,
    };
    Some(offs)
}

/// The bank-conflict ways of one request whose lanes start at `offs` and
/// each move `bytes` bytes.
pub fn ways_of(offs: &[i64], bytes: u32, m: &BankModel) -> Option<u32> {
    let wb = m.word_bytes.max(1) as i64;
    let nb = m.banks.max(1) as i64;
    let per_lane = (bytes as i64 + wb - 1) / wb;
    let mut words: Vec<i64> = Vec::with_capacity(offs.len() * per_lane.max(1) as usize);
    for &o in offs {
        let w0 = o.div_euclid(wb);
        words.extend((0..per_lane.max(1)).map(|k| w0 + k));
    }
    if !m.broadcast {
        // every lane's word is a separate access
        let mut per_bank = vec![0u32; nb as usize];
        for w in &words {
            per_bank[w.rem_euclid(nb) as usize] += 1;
        }
        let passes = (words.len() as i64 + nb - 1) / nb;
        let max = *per_bank.iter().max()? as i64;
        return Some(((max + passes - 1) / passes.max(1)) as u32);
    }
    words.sort_unstable();
    words.dedup();
    let mut per_bank = vec![0u32; nb as usize];
    for w in &words {
        per_bank[w.rem_euclid(nb) as usize] += 1;
    }
    let passes = ((words.len() as i64 + nb - 1) / nb).max(1);
    let max = *per_bank.iter().max()? as i64;
    Some(((max + passes - 1) / passes) as u32)
}

/// The bank-conflict ways of a threadgroup access (`None` for other spaces
/// or when the pattern does not give the lanes' offsets). `lanes`: the
/// lanes of a request (32, fewer when the threadgroup is smaller).
pub fn ways(a: &Access, lanes: u32, m: &BankModel) -> Option<u32> {
    if a.space != "threadgroup" {
        return None;
    }
    let offs = lane_offsets(a, (lanes as i64).clamp(1, LANES))?;
    ways_of(&offs, a.bytes_per_lane, m)
}

/// Sets `bank_conflict_ways` on every threadgroup access of `addrs`
/// (`model`: the GPU model's banking; `None`: unknown, every value null).
pub fn annotate(addrs: &mut Addresses, lanes: u32, model: Option<&BankModel>) {
    for a in &mut addrs.accesses {
        a.bank_conflict_ways = model.and_then(|m| ways(a, lanes, m));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offs(s: i64) -> Vec<i64> {
        (0..32).map(|l| l * s).collect()
    }

    #[test]
    fn tgmem_strides_under_32x4() {
        let m = CONVENTIONAL_32X4;
        // stride in words -> ways: gcd(stride, 32) for scalar words
        for (s, w) in [
            (4, 1),
            (8, 2),
            (16, 4),
            (32, 8),
            (64, 16),
            (128, 32),
            (132, 1),
            (12, 1),
        ] {
            assert_eq!(ways_of(&offs(s), 4, &m), Some(w), "stride {s}");
        }
        // every lane one word: broadcast
        assert_eq!(ways_of(&[0; 32], 4, &m), Some(1));
        // contiguous vec4 needs 4 passes anyway: no conflict
        assert_eq!(ways_of(&offs(16), 16, &m), Some(1));
        // vec4 at a 32 B stride: half the banks, twice the words
        assert_eq!(ways_of(&offs(32), 16, &m), Some(2));
        // rows: 8 lanes contiguous, rows 128 B apart (a 32-wide float
        // tile read by an 8-wide threadgroup's columns): 4 ways
        let rows: Vec<i64> = (0..32).map(|l| l / 8 * 128 + l % 8 * 4).collect();
        assert_eq!(ways_of(&rows, 4, &m), Some(4));
        // one word of padding (132 B rows) does not help 8-lane rows;
        // 8 words (160 B) do
        let rows: Vec<i64> = (0..32).map(|l| l / 8 * 132 + l % 8 * 4).collect();
        assert_eq!(ways_of(&rows, 4, &m), Some(4));
        let rows: Vec<i64> = (0..32).map(|l| l / 8 * 160 + l % 8 * 4).collect();
        assert_eq!(ways_of(&rows, 4, &m), Some(1));
    }

    #[test]
    fn tgmem_no_broadcast_counts_lanes() {
        let m = BankModel {
            broadcast: false,
            ..CONVENTIONAL_32X4
        };
        assert_eq!(ways_of(&[0; 32], 4, &m), Some(32));
    }
}
