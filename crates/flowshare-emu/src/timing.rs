//! How late packets are written: a histogram of (actual write time − due time), bounded in
//! memory whatever the run's length, fine where it matters (100 ns steps below 1 ms, 10 µs
//! steps up to 100 ms) and exact at the maximum.

use serde::Serialize;

const FINE_NS: u64 = 100;
const FINE_BUCKETS: usize = 10_000;
const COARSE_NS: u64 = 10_000;
const COARSE_BUCKETS: usize = 10_000;

/// Write-time errors seen so far.
#[derive(Clone, Debug)]
pub struct Lateness {
    counts: Vec<u64>,
    samples: u64,
    max: u64,
}

/// Summary of write-time errors, in nanoseconds; percentiles are the upper edge of their
/// histogram step (100 ns below 1 ms, 10 µs above).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LatenessSummary {
    /// Packets written.
    pub samples: u64,
    /// Median.
    pub p50_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// Largest.
    pub max_ns: u64,
}

impl Default for Lateness {
    fn default() -> Self {
        Lateness { counts: vec![0; FINE_BUCKETS + COARSE_BUCKETS + 1], samples: 0, max: 0 }
    }
}

impl Lateness {
    /// Record one write `late_ns` after its due time.
    pub fn record(&mut self, late_ns: u64) {
        let fine = FINE_NS * FINE_BUCKETS as u64;
        let i = if late_ns < fine {
            (late_ns / FINE_NS) as usize
        } else {
            (FINE_BUCKETS + ((late_ns - fine) / COARSE_NS) as usize).min(FINE_BUCKETS + COARSE_BUCKETS)
        };
        self.counts[i] += 1;
        self.samples += 1;
        self.max = self.max.max(late_ns);
    }

    /// Upper edge of bucket `i`, clipped to the maximum seen.
    fn edge(&self, i: usize) -> u64 {
        let e = if i < FINE_BUCKETS {
            (i as u64 + 1) * FINE_NS
        } else if i == FINE_BUCKETS + COARSE_BUCKETS {
            // Beyond the histogram: only the maximum is known.
            self.max
        } else {
            FINE_NS * FINE_BUCKETS as u64 + (i - FINE_BUCKETS + 1) as u64 * COARSE_NS
        };
        e.min(self.max)
    }

    /// The `q`-quantile (0 < q ≤ 1).
    fn quantile(&self, q: f64) -> u64 {
        if self.samples == 0 {
            return 0;
        }
        let rank = ((q * self.samples as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return self.edge(i);
            }
        }
        self.max
    }

    /// Median, 99th percentile and maximum.
    pub fn summary(&self) -> LatenessSummary {
        LatenessSummary {
            samples: self.samples,
            p50_ns: self.quantile(0.5),
            p99_ns: self.quantile(0.99),
            max_ns: self.max,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_come_from_the_histogram() {
        let mut l = Lateness::default();
        for i in 0..100 {
            l.record(i * 1_000); // 0, 1 µs, ..., 99 µs
        }
        let s = l.summary();
        assert_eq!((s.samples, s.max_ns), (100, 99_000));
        assert_eq!(s.p50_ns, 49_100);
        assert_eq!(s.p99_ns, 98_100);
    }

    #[test]
    fn large_values_land_in_coarse_steps_and_the_maximum_is_exact() {
        let mut l = Lateness::default();
        l.record(5_000_123);
        l.record(10_000_000_000);
        let s = l.summary();
        assert_eq!(s.p50_ns, 5_010_000);
        assert_eq!(s.max_ns, 10_000_000_000);
        assert_eq!(s.p99_ns, 10_000_000_000);
    }

    #[test]
    fn empty_summary_is_zero() {
        assert_eq!(Lateness::default().summary(), LatenessSummary::default());
    }
}
