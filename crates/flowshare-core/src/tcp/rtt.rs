//! Retransmission-timeout estimation (RFC 6298) with ns-2-compatible options.

use super::TcpConfig;
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
    /// Before any sample the RTO is the configured initial value (RFC 6298 §2.1).
    pub fn new(cfg: &TcpConfig) -> Self {
        RttEstimator {
            srtt: 0.0,
            rttvar: 0.0,
            rto: cfg.rto_initial,
            samples: 0,
            tick: cfg.timer_tick.max(1),
            rto_min: cfg.rto_min,
            rto_max: cfg.rto_max,
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
        let raw = self.srtt + (self.tick as f64).max(4.0 * self.rttvar);
        self.rto = if raw <= self.rto_min as f64 {
            self.rto_min // the common case: no need to round to a tick
        } else {
            let ticks = (raw / self.tick as f64).ceil() as u64;
            (ticks * self.tick).clamp(self.rto_min, self.rto_max)
        };
    }

    /// The timeout to arm with backoff multiplier `backoff`.
    pub fn timeout(&self, backoff: u32) -> Time {
        self.rto.saturating_mul(u64::from(backoff)).min(self.rto_max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::Recovery;

    fn cfg(tick_ms: u64, min_ms: u64) -> TcpConfig {
        TcpConfig {
            recovery: Recovery::Newreno,
            mss: 1460,
            header: 40,
            ack_size: 40,
            initial_window: 3.0,
            initial_ssthresh: f64::INFINITY,
            max_ssthresh: None,
            rwnd: u64::MAX,
            max_burst: 0,
            delayed_ack: None,
            handshake: false,
            rto_initial: 1_000_000_000,
            rto_min: min_ms * 1_000_000,
            rto_max: 60_000_000_000,
            timer_tick: tick_ms * 1_000_000,
            max_backoff: 64,
            rto_enabled: true,
            misrx: None,
            force_timeout: None,
            ecn: false,
            send_jitter: 0,
        }
    }

    #[test]
    fn rfc6298_worked_example() {
        // algorithms_reference §2: R1 = 100 ms -> RTO 300 ms; R2 = 120 ms -> 272.5 ms.
        let mut e = RttEstimator::new(&cfg(1, 200));
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
        let mut e = RttEstimator::new(&cfg(10, 1000));
        e.sample(100_000_000);
        assert_eq!(e.rto, 1_000_000_000, "raised to the RFC minimum of 1 s");
        assert_eq!(e.timeout(4), 4_000_000_000);
        assert_eq!(e.timeout(1 << 20), 60_000_000_000);
    }
}
