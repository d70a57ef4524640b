//! Retransmission-timeout estimation (RFC 6298) with ns-2-compatible options.
//!
//! The estimator is part of a connection's congestion state ([`super::CcState`]) rather than of
//! the sender, so that an ensemble controller can read and set its members' SRTT, RTTVAR and
//! RTO (EFCM shares them across an ensemble).

use crate::units::Time;

/// SRTT/RTTVAR filter and the RTO it gives.
#[derive(Clone, Copy, Debug)]
pub struct RttEstimator {
    /// Smoothed RTT, ns (0 before the first sample).
    pub srtt: f64,
    /// RTT variation, ns.
    pub rttvar: f64,
    /// Current RTO before backoff, ns.
    pub rto: Time,
    /// Samples taken.
    pub samples: u64,
    tick: Time,
    rto_min: Time,
    rto_max: Time,
}

impl RttEstimator {
    /// Before any sample the RTO is `initial` (RFC 6298 §2.1); it is a whole number of `tick`s
    /// within [`min`, `max`] once measured.
    pub fn new(initial: Time, tick: Time, min: Time, max: Time) -> Self {
        RttEstimator { srtt: 0.0, rttvar: 0.0, rto: initial, samples: 0, tick: tick.max(1), rto_min: min, rto_max: max }
    }

    /// Set SRTT and RTTVAR (an ensemble controller's shared values) and recompute the RTO as a
    /// sample would; counts as having samples from now on.
    pub fn set(&mut self, srtt: f64, rttvar: f64) {
        self.srtt = srtt;
        self.rttvar = rttvar;
        self.samples = self.samples.max(1);
        self.rto = self.rto_of(srtt, rttvar);
    }

    fn rto_of(&self, srtt: f64, rttvar: f64) -> Time {
        let raw = srtt + (self.tick as f64).max(4.0 * rttvar);
        if raw <= self.rto_min as f64 {
            self.rto_min // the common case: no need to round to a tick
        } else {
            let ticks = (raw / self.tick as f64).ceil() as u64;
            (ticks * self.tick).clamp(self.rto_min, self.rto_max)
        }
    }

    /// Take one measurement `r` (ns): RFC 6298 §2.2 for the first, §2.3 afterwards (RTTVAR is
    /// updated with the old SRTT). RTO = SRTT + max(G, 4·RTTVAR), rounded up to a whole tick,
    /// clamped to [rto_min, rto_max] (§2.4, §2.5).
    pub fn sample(&mut self, r: Time) {
        let r = r as f64;
        if self.samples == 0 {
            self.srtt = r;
            self.rttvar = r / 2.0;
        } else {
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - r).abs();
            self.srtt = 0.875 * self.srtt + 0.125 * r;
        }
        self.samples += 1;
        self.rto = self.rto_of(self.srtt, self.rttvar);
    }

    /// The timeout to arm with backoff multiplier `backoff`.
    pub fn timeout(&self, backoff: u32) -> Time {
        self.rto.saturating_mul(u64::from(backoff)).min(self.rto_max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;

    #[test]
    fn rfc6298_worked_example() {
        // RFC 6298 §2: R1 = 100 ms -> RTO 300 ms; R2 = 120 ms -> 272.5 ms.
        let mut e = RttEstimator::new(1000 * MS, MS, 200 * MS, 60_000 * MS);
        assert_eq!(e.rto, 1_000_000_000);
        e.sample(100_000_000);
        assert_eq!(e.rto, 300_000_000);
        e.sample(120_000_000);
        assert_eq!(e.srtt, 102_500_000.0);
        assert_eq!(e.rttvar, 42_500_000.0);
        assert_eq!(e.rto, 273_000_000, "272.5 ms rounded up to the 1 ms tick");
    }

    #[test]
    fn minimum_rto_and_backoff_cap() {
        let mut e = RttEstimator::new(1000 * MS, 10 * MS, 1000 * MS, 60_000 * MS);
        e.sample(100_000_000);
        assert_eq!(e.rto, 1_000_000_000, "raised to the RFC minimum of 1 s");
        assert_eq!(e.timeout(4), 4_000_000_000);
        assert_eq!(e.timeout(1 << 20), 60_000_000_000);
    }

    #[test]
    fn set_values_give_the_rto_a_sample_would() {
        let mut a = RttEstimator::new(1000 * MS, MS, 200 * MS, 60_000 * MS);
        a.sample(100 * MS);
        a.sample(120 * MS);
        let mut b = RttEstimator::new(1000 * MS, MS, 200 * MS, 60_000 * MS);
        b.set(a.srtt, a.rttvar);
        assert_eq!((b.srtt, b.rttvar, b.rto), (a.srtt, a.rttvar, a.rto));
        assert_eq!(b.samples, 1);
    }
}
