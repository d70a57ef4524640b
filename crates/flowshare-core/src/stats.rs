//! Statistics of samples kept in bounded memory: a log-linear histogram, the one-way delay of
//! a flow's packets and the completion times of finite transfers.
//!
//! The histogram is in the style of HDR histograms: values below 64 have a bin each; above,
//! every power of two `[2^e, 2^(e+1))` is split into 32 bins of equal width, so a bin is at
//! most 1/32 (3.125 %) of its lower bound wide. Values are nanoseconds, so bins are exact up
//! to 64 ns and about 3 % wide from there to centuries. A histogram stores the counts of the
//! bins between the lowest and the highest bin it has seen, at most 1,920 (15 KiB) and for
//! the delays of one flow typically a few dozen, so memory stays bounded however many samples
//! there are.

use crate::units::Time;

/// Bins per power of two: 2^`SUB_BITS`.
pub const SUB_BITS: u32 = 5;
const SUB: u32 = 1 << SUB_BITS;
/// Values below this have a bin of their own.
const LINEAR: u32 = 2 * SUB;

/// The bin holding value `v`.
#[inline]
pub fn bin_of(v: u64) -> u32 {
    if v < u64::from(LINEAR) {
        return v as u32;
    }
    let e = 63 - v.leading_zeros(); // ≥ 6
    let shift = e - SUB_BITS; // ≥ 1
    let m = (v >> shift) as u32; // in [SUB, 2·SUB)
    LINEAR + (e - SUB_BITS - 1) * SUB + (m - SUB)
}

/// The values bin `b` holds: `[lo, hi)` (`hi` saturates at `u64::MAX` for the last bin).
pub fn bin_bounds(b: u32) -> (u64, u64) {
    if b < LINEAR {
        return (u64::from(b), u64::from(b) + 1);
    }
    let k = b - LINEAR;
    let shift = k / SUB + 1;
    let m = u128::from(SUB + k % SUB);
    let lo = (m << shift).min(u128::from(u64::MAX)) as u64;
    let hi = ((m + 1) << shift).min(u128::from(u64::MAX)) as u64;
    (lo, hi)
}

/// A log-linear histogram of `u64` values (see the module documentation).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Histogram {
    /// The bin of `counts[0]`.
    first: u32,
    /// Counts of bins `first..first + counts.len()`.
    counts: Vec<u64>,
}

impl Histogram {
    /// Count value `v`.
    #[inline]
    pub fn record(&mut self, v: u64) {
        let b = bin_of(v);
        let i = b.wrapping_sub(self.first) as usize;
        if i >= self.counts.len() {
            self.widen(b);
            return self.record(v);
        }
        self.counts[i] += 1;
    }

    /// Make room for bin `b`.
    #[cold]
    #[inline(never)]
    fn widen(&mut self, b: u32) {
        if self.counts.is_empty() {
            self.first = b;
            self.counts.push(0);
        } else if b < self.first {
            let more = (self.first - b) as usize;
            self.counts.splice(0..0, std::iter::repeat_n(0, more));
            self.first = b;
        } else {
            self.counts.resize((b - self.first) as usize + 1, 0);
        }
    }

    /// Values counted.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The bins that hold values, in increasing order: `(lo, hi, count)`, values in `[lo, hi)`.
    pub fn bins(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.counts.iter().enumerate().filter(|(_, &n)| n > 0).map(|(i, &n)| {
            let (lo, hi) = bin_bounds(self.first + i as u32);
            (lo, hi, n)
        })
    }

    /// The bin holding the `p`-th percentile (0 < `p` ≤ 100) by the nearest-rank method: the
    /// smallest value with at least ⌈p/100 · n⌉ values at or below it lies in it. `None` when
    /// empty.
    pub fn percentile_bin(&self, p: f64) -> Option<(u64, u64)> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let rank = ((p / 100.0 * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        for (i, &n) in self.counts.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Some(bin_bounds(self.first + i as u32));
            }
        }
        unreachable!("the counts add up to the total")
    }

    /// The `p`-th percentile as the middle of its bin ([`Histogram::percentile_bin`]) clamped
    /// to `[min, max]`, the exact extremes of the values: off by at most half a bin (1.6 %),
    /// and exact when every value is the same. NaN when empty.
    pub fn percentile(&self, p: f64, min: u64, max: u64) -> f64 {
        match self.percentile_bin(p) {
            None => f64::NAN,
            Some((lo, hi)) => {
                let mid = (lo as f64 + (hi - 1) as f64) / 2.0;
                mid.clamp(min as f64, max as f64)
            }
        }
    }

    /// Memory held by the counts, bytes.
    pub fn heap_bytes(&self) -> usize {
        self.counts.capacity() * std::mem::size_of::<u64>()
    }
}

/// One-way delays of a flow's delivered packets (ns): exact count, sum, extremes and jitter,
/// and a [`Histogram`] for percentiles.
#[derive(Clone, Debug, PartialEq)]
pub struct DelayStats {
    /// Packets counted.
    pub n: u64,
    /// Sum of delays, ns.
    pub sum: u128,
    /// Smallest delay, ns (`u64::MAX` before the first packet).
    pub min: u64,
    /// Largest delay, ns.
    pub max: u64,
    /// Delay of the previous packet, ns.
    prev: u64,
    /// RFC 3550 §6.4.1 interarrival jitter estimate J in the integer form of its Appendix A.8:
    /// 16 · J, ns (see [`DelayStats::jitter`]).
    pub jitter16: u64,
    /// Sum of |D(i−1, i)|, the absolute differences of consecutive delays, ns.
    pub ipdv_sum: u128,
    /// The delays binned.
    pub hist: Histogram,
}

impl Default for DelayStats {
    fn default() -> Self {
        DelayStats {
            n: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
            prev: 0,
            jitter16: 0,
            ipdv_sum: 0,
            hist: Histogram::default(),
        }
    }
}

impl DelayStats {
    /// A packet sent at `sent` arrived at `now`.
    #[inline]
    pub fn record(&mut self, sent: Time, now: Time) {
        let d = now - sent;
        if self.n > 0 {
            // RFC 3550 §6.4.1: D(i−1, i) is the difference of the two packets' transit times;
            // J += (|D| − J) / 16, kept as 16 · J in integers as Appendix A.8 does (never
            // negative: (16J + 8) / 16 ≤ 16J once 16J ≥ 1).
            let diff = d.abs_diff(self.prev);
            self.jitter16 = self.jitter16 + diff - ((self.jitter16 + 8) >> 4);
            self.ipdv_sum += u128::from(diff);
        }
        self.prev = d;
        self.n += 1;
        self.sum += u128::from(d);
        self.min = self.min.min(d);
        self.max = self.max.max(d);
        self.hist.record(d);
    }

    /// The RFC 3550 interarrival jitter J after the last packet, ns: the integer recursion's
    /// 16 · J over 16, within about 1 ns of the floating-point recursion; NaN with fewer than
    /// two packets.
    pub fn jitter(&self) -> f64 {
        if self.n < 2 {
            f64::NAN
        } else {
            self.jitter16 as f64 / 16.0
        }
    }

    /// Mean delay, ns; NaN without packets.
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            f64::NAN
        } else {
            self.sum as f64 / self.n as f64
        }
    }

    /// The `p`-th percentile, ns ([`Histogram::percentile`]); NaN without packets.
    pub fn percentile(&self, p: f64) -> f64 {
        self.hist.percentile(p, self.min, self.max)
    }

    /// Mean absolute difference of consecutive delays, ns; NaN with fewer than two packets.
    pub fn ipdv_mean(&self) -> f64 {
        if self.n < 2 {
            f64::NAN
        } else {
            self.ipdv_sum as f64 / (self.n - 1) as f64
        }
    }
}

/// Completion times of finite transfers (ns): exact count, sum and extremes, and a histogram.
#[derive(Clone, Debug, PartialEq)]
pub struct FctStats {
    /// Transfers completed.
    pub n: u64,
    /// Transfers started and not completed by the end of the run.
    pub unfinished: u64,
    /// Sum of completion times, ns.
    pub sum: u128,
    /// Shortest, ns (`u64::MAX` before the first).
    pub min: u64,
    /// Longest, ns.
    pub max: u64,
    /// The completion times binned.
    pub hist: Histogram,
}

impl Default for FctStats {
    fn default() -> Self {
        FctStats { n: 0, unfinished: 0, sum: 0, min: u64::MAX, max: 0, hist: Histogram::default() }
    }
}

impl FctStats {
    /// A transfer completed in `fct` ns.
    pub fn record(&mut self, fct: u64) {
        self.n += 1;
        self.sum += u128::from(fct);
        self.min = self.min.min(fct);
        self.max = self.max.max(fct);
        self.hist.record(fct);
    }

    /// Mean, ns; NaN without transfers.
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            f64::NAN
        } else {
            self.sum as f64 / self.n as f64
        }
    }
}

/// Size buckets of the completion-time summary: transfers of `[lo, hi)` payload bytes.
pub const SIZE_BUCKETS: [(u64, u64); 5] =
    [(0, 10_000), (10_000, 100_000), (100_000, 1_000_000), (1_000_000, 10_000_000), (10_000_000, u64::MAX)];

/// The size bucket of a transfer of `size` bytes.
pub fn size_bucket(size: u64) -> usize {
    SIZE_BUCKETS.iter().position(|&(lo, hi)| size >= lo && size < hi).unwrap_or(SIZE_BUCKETS.len() - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_contiguous_and_narrow() {
        let mut prev_hi = 0;
        for b in 0..bin_of(u64::MAX) {
            let (lo, hi) = bin_bounds(b);
            assert_eq!(lo, prev_hi, "bin {b}");
            assert!(hi > lo);
            assert!(lo < 64 || (hi - lo) as f64 <= lo as f64 / 32.0, "bin {b} [{lo}, {hi})");
            assert_eq!(bin_of(lo), b);
            assert_eq!(bin_of(hi - 1), b);
            prev_hi = hi;
        }
        assert_eq!(bin_of(u64::MAX), 1919);
    }

    #[test]
    fn histogram_grows_both_ways_and_ranks() {
        let mut h = Histogram::default();
        for v in [1_000_000u64, 5, 2_000_000, 1_000_000] {
            h.record(v);
        }
        assert_eq!(h.total(), 4);
        assert_eq!(h.bins().map(|b| b.2).sum::<u64>(), 4);
        assert_eq!(h.percentile_bin(25.0), Some((5, 6)));
        let (lo, hi) = h.percentile_bin(50.0).unwrap();
        assert!(lo <= 1_000_000 && 1_000_000 < hi);
        assert!(h.percentile(100.0, 5, 2_000_000) <= 2_000_000.0);
        assert!(h.heap_bytes() <= 1920 * 8);
    }

    #[test]
    fn rfc3550_jitter_of_alternating_delays() {
        let mut d = DelayStats::default();
        // Transit alternates 10 and 14 µs: |D| = 4 µs from the second packet on, and J tends
        // to it.
        for i in 0..400u64 {
            let transit = if i % 2 == 0 { 10_000 } else { 14_000 };
            d.record(100_000 * i, 100_000 * i + transit);
        }
        assert!((d.jitter() - 4_000.0).abs() < 1.0, "{}", d.jitter());
        assert_eq!(d.ipdv_mean(), 4_000.0);
        assert_eq!((d.min, d.max, d.mean()), (10_000, 14_000, 12_000.0));
        // Three packets, |D| = 4 µs twice: J = 4000/16, then J + (4000 − J)/16.
        let mut e = DelayStats::default();
        for (i, transit) in [10_000u64, 14_000, 10_000].into_iter().enumerate() {
            e.record(i as u64, i as u64 + transit);
        }
        let exact = 4000.0 / 16.0 + (4000.0 - 4000.0 / 16.0) / 16.0;
        assert!((e.jitter() - exact).abs() <= 1.0, "{} vs {exact}", e.jitter());
        assert!(DelayStats::default().jitter().is_nan());
    }
}
