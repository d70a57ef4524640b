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
    /// ns-2's integer filter (`rtt_timing = "ns2"`): t_srtt_ (8 × SRTT) and t_rttvar_
    /// (4 × RTTVAR), in ticks.
    ns2: Option<(i64, i64)>,
}

impl RttEstimator {
    /// Before any sample the RTO is `initial` (RFC 6298 §2.1); it is a whole number of `tick`s
    /// within [`min`, `max`] once measured.
    pub fn new(initial: Time, tick: Time, min: Time, max: Time) -> Self {
        RttEstimator {
            srtt: 0.0,
            rttvar: 0.0,
            rto: initial,
            samples: 0,
            tick: tick.max(1),
            rto_min: min,
            rto_max: max,
            ns2: None,
        }
    }

    /// The estimator of ns-2.35's `TcpAgent` (`rtt_update`, `rtt_timeout`): samples in whole
    /// ticks, SRTT and RTTVAR as scaled integers, RTO = SRTT + 4·RTTVAR ticks, at least
    /// `min` and two ticks.
    pub fn new_ns2(initial: Time, tick: Time, min: Time, max: Time) -> Self {
        RttEstimator { ns2: Some((0, 0)), ..RttEstimator::new(initial, tick, min, max) }
    }

    /// ns-2's `rtt_update` for a segment sent at `sent_at` and acknowledged `tao` later, on a
    /// clock whose ticks fall at `phase` + k·tick: the sample counts the tick boundaries
    /// crossed (at least 1).
    pub fn sample_ns2(&mut self, tao: Time, sent_at: Time, phase: Time) {
        let Some((mut srtt8, mut var4)) = self.ns2 else {
            return self.sample(tao);
        };
        let tick = self.tick;
        let tickoff = (sent_at + phase) % tick;
        let t_rtt = (((tao + tickoff) / tick) as i64).max(1);
        if srtt8 != 0 {
            // ns-2 keeps delta in a C short; samples here are far inside its range.
            let mut delta = t_rtt - (srtt8 >> 3);
            srtt8 += delta;
            if srtt8 <= 0 {
                srtt8 = 1;
            }
            delta = delta.abs() - (var4 >> 2);
            var4 += delta;
            if var4 <= 0 {
                var4 = 1;
            }
        } else {
            srtt8 = t_rtt << 3;
            var4 = t_rtt << 1;
        }
        self.ns2 = Some((srtt8, var4));
        self.samples += 1;
        self.srtt = srtt8 as f64 / 8.0 * tick as f64;
        self.rttvar = var4 as f64 / 4.0 * tick as f64;
        let rtxcur = (((var4 << 3) + srtt8) >> 3) as u64 * tick;
        self.rto = rtxcur.max(self.rto_min).min(self.rto_max).max(2 * tick);
    }

    /// The timer backed off to `backoff`: in ns-2, beyond 8 SRTT is folded into RTTVAR and the
    /// next sample starts the filter afresh (`rtt_backoff`).
    pub fn backed_off(&mut self, backoff: u32) {
        if let Some((srtt8, var4)) = &mut self.ns2 {
            if backoff > 8 {
                *var4 += *srtt8 >> 3;
                *srtt8 = 0;
            }
        }
    }

    /// Set SRTT and RTTVAR (an ensemble controller's shared values) and recompute the RTO as a
    /// sample would; counts as having samples from now on.
    /// With ns-2's integer filter the values are rounded into its scaled ticks, so that its
    /// next sample continues from them.
    pub fn set(&mut self, srtt: f64, rttvar: f64) {
        self.samples = self.samples.max(1);
        if let Some(ints) = &mut self.ns2 {
            let tick = self.tick as f64;
            let srtt8 = ((srtt / tick * 8.0).round() as i64).max(1);
            let var4 = ((rttvar / tick * 4.0).round() as i64).max(1);
            *ints = (srtt8, var4);
            self.srtt = srtt8 as f64 / 8.0 * tick;
            self.rttvar = var4 as f64 / 4.0 * tick;
            let rtxcur = (((var4 << 3) + srtt8) >> 3) as u64 * self.tick;
            self.rto = rtxcur.max(self.rto_min).min(self.rto_max).max(2 * self.tick);
            return;
        }
        self.srtt = srtt;
        self.rttvar = rttvar;
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

    /// ns-2.35's `rtt_update` and `rtt_timeout` with a 10 ms tick: a 45 ms sample counts the
    /// tick boundaries it crosses, 4 or 5 by the clock's phase; the first sets SRTT = RTT and
    /// RTTVAR = RTT/2, so RTO = 3 RTT in ticks; then SRTT moves by 1/8 of the error and RTTVAR
    /// by 1/4, in integers.
    #[test]
    fn ns2_integer_filter_in_ticks() {
        let mut e = RttEstimator::new_ns2(3000 * MS, 10 * MS, 100 * MS, 60_000 * MS);
        // Sent at 3 ms on a clock ticking at 5 ms + k·10 ms: offset 8 ms, 53 ms → 5 ticks.
        e.sample_ns2(45 * MS, 3 * MS, 5 * MS);
        assert_eq!((e.srtt, e.rttvar, e.rto), (50.0 * MS as f64, 25.0 * MS as f64, 150 * MS));
        // Same flight with phase 0: offset 3 ms, 48 ms → 4 ticks. t_srtt 40 → 40 + (4 − 5) = 39,
        // t_rttvar 10 → 10 + (1 − 2) = 9; RTO = ((9 << 3) + 39) >> 3 = 13 ticks.
        e.sample_ns2(45 * MS, 3 * MS, 0);
        assert_eq!(e.rto, 130 * MS);
        assert_eq!((e.srtt, e.rttvar), (39.0 / 8.0 * 10.0 * MS as f64, 9.0 / 4.0 * 10.0 * MS as f64));
        // rto_min holds, and a backoff past 8 restarts the filter at the next sample.
        let mut f = RttEstimator::new_ns2(3000 * MS, 10 * MS, 200 * MS, 60_000 * MS);
        f.sample_ns2(45 * MS, 3 * MS, 5 * MS);
        assert_eq!(f.rto, 200 * MS);
        f.backed_off(8);
        f.sample_ns2(95 * MS, 3 * MS, 5 * MS);
        assert_eq!(f.rto, 200 * MS, "10 ticks: t_srtt 40 + 5 = 45, under rto_min still");
        f.backed_off(16);
        f.sample_ns2(95 * MS, 3 * MS, 5 * MS);
        assert_eq!(f.srtt, 100.0 * MS as f64, "after the fold the sample is taken as the first");
        assert_eq!(f.rto, 300 * MS);
    }

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
        // ns-2's filter continues from set values: 50 ms and 25 ms are t_srtt 40, t_rttvar 10
        // at a 10 ms tick, as after a first 5-tick sample.
        let mut c = RttEstimator::new_ns2(3000 * MS, 10 * MS, 100 * MS, 60_000 * MS);
        c.set(50.0 * MS as f64, 25.0 * MS as f64);
        assert_eq!(c.rto, 150 * MS);
        c.sample_ns2(45 * MS, 3 * MS, 0);
        assert_eq!(c.rto, 130 * MS, "as in ns2_integer_filter_in_ticks");
    }
}
