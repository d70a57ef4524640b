//! Rate profiles: a rate that is constant, steps at given times, or ramps linearly between
//! given points.
//!
//! A source driven by a profile sends its `k`-th bit when the integral of the rate from the
//! source's start reaches `k`; [`RateProfile::time_at`] inverts that integral. Packet times are
//! computed from the absolute position of each packet in the integral, never by adding up
//! intervals, so a long run does not drift and a rate change takes effect at its exact time
//! without resetting the phase of the packets.

use crate::units::Time;

/// One piece of a profile: from `start` the rate is `rate + slope · (t − start)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Piece {
    /// Start of the piece, ns.
    pub start: Time,
    /// Rate at the start, bits per ns.
    pub rate: f64,
    /// Change of the rate per ns, bits per ns²; 0 for a constant piece.
    pub slope: f64,
}

/// A piecewise constant or linear rate, starting at time 0.
#[derive(Clone, Debug)]
pub struct RateProfile {
    pieces: Vec<Piece>,
    /// Piece the last query ended in.
    cursor: usize,
    /// Bits sent from the origin to the start of piece `cursor` (may be negative before the
    /// origin).
    bits_at_cursor: f64,
    /// Where bits are counted from; no time returned is earlier.
    origin: Time,
}

/// A schedule point: from `at`, the rate is `rate` (a step), or the rate reaches `rate` at
/// `at` linearly from the previous point (a ramp).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// Time, ns.
    pub at: Time,
    /// Rate, bits per second.
    pub rate_bps: u64,
    /// Linear ramp from the previous point rather than a step.
    pub ramp: bool,
}

impl RateProfile {
    /// A profile with rate `base_bps` from time 0 until the first point, then following
    /// `points` (sorted by time, the first one not a ramp), with bits counted from `origin`.
    pub fn new(base_bps: u64, points: &[Point], origin: Time) -> Self {
        let per_ns = |bps: u64| bps as f64 / 1e9;
        let mut pieces = vec![Piece { start: 0, rate: per_ns(base_bps), slope: 0.0 }];
        for (i, p) in points.iter().enumerate() {
            let slope = match points.get(i + 1) {
                Some(next) if next.ramp && next.at > p.at => {
                    (per_ns(next.rate_bps) - per_ns(p.rate_bps)) / (next.at - p.at) as f64
                }
                _ => 0.0,
            };
            let piece = Piece { start: p.at, rate: per_ns(p.rate_bps), slope };
            if pieces.last().is_some_and(|l| l.start == p.at) {
                *pieces.last_mut().expect("not empty") = piece;
            } else {
                pieces.push(piece);
            }
        }
        let mut profile = RateProfile { pieces, cursor: 0, bits_at_cursor: 0.0, origin };
        // Count bits from the origin: the bits of [0, origin) are below zero.
        profile.bits_at_cursor = -profile.bits_between(0, origin);
        profile
    }

    /// The rate at time `t`, bits per second.
    pub fn rate_at(&self, t: Time) -> f64 {
        let k = self.pieces.partition_point(|p| p.start <= t).saturating_sub(1);
        let p = self.pieces[k];
        (p.rate + p.slope * (t - p.start) as f64) * 1e9
    }

    /// Bits sent in `[from, to)` (from the first piece on, ignoring the cursor).
    fn bits_between(&self, from: Time, to: Time) -> f64 {
        let mut bits = 0.0;
        for (k, p) in self.pieces.iter().enumerate() {
            let end = self.pieces.get(k + 1).map_or(Time::MAX, |n| n.start);
            let (a, b) = (from.max(p.start), to.min(end));
            if a < b {
                let (ta, tb) = ((a - p.start) as f64, (b - p.start) as f64);
                bits += p.rate * (tb - ta) + p.slope * (tb * tb - ta * ta) / 2.0;
            }
        }
        bits
    }

    /// The earliest time at which `bits` bits (counted from the origin) have been sent;
    /// `None` if the rate stays at zero before that. Queries must not decrease.
    pub fn time_at(&mut self, bits: f64) -> Option<Time> {
        loop {
            let p = self.pieces[self.cursor];
            let len = self.pieces.get(self.cursor + 1).map(|n| (n.start - p.start) as f64);
            let need = bits - self.bits_at_cursor;
            let in_piece = len.map(|l| p.rate * l + p.slope * l * l / 2.0);
            // A piece with no rate at its start sends nothing there; the next bit waits for a
            // piece (or the part of a ramp) with a positive rate.
            let idle = p.rate <= 0.0 && p.slope <= 0.0;
            if in_piece.is_none_or(|b| need <= b) && !(need <= 0.0 && idle) {
                if need <= 0.0 {
                    return Some(p.start.max(self.origin));
                }
                // Solve rate·τ + slope·τ²/2 = need in its cancellation-free form.
                let disc = p.rate * p.rate + 2.0 * p.slope * need;
                let tau = if disc < 0.0 { f64::INFINITY } else { 2.0 * need / (p.rate + disc.sqrt()) };
                if !tau.is_finite() {
                    return None;
                }
                let t = p.start as f64 + tau;
                return (t < Time::MAX as f64).then(|| (t.round() as Time).max(self.origin));
            }
            len?;
            self.bits_at_cursor += in_piece.expect("checked");
            self.cursor += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Time = 1_000_000_000;

    #[test]
    fn constant_rate_gives_exact_times_without_drift() {
        let mut p = RateProfile::new(10_000_000, &[], 2 * S);
        // 8000-bit packets at 10 Mbps: one every 800 us from the origin on.
        assert_eq!(p.time_at(0.0), Some(2 * S));
        assert_eq!(p.time_at(8000.0), Some(2 * S + 800_000));
        assert_eq!(p.time_at(8000.0 * 1_000_000.0), Some(2 * S + 800 * S));
    }

    #[test]
    fn steps_change_the_rate_at_their_time_without_resetting_the_phase() {
        let pts = [Point { at: S, rate_bps: 2_000_000, ramp: false }];
        let mut p = RateProfile::new(1_000_000, &pts, 0);
        // 1 Mbit in the first second, then 2 Mbps.
        assert_eq!(p.time_at(1e6), Some(S));
        assert_eq!(p.time_at(1.5e6), Some(S + S / 4));
        assert_eq!(p.rate_at(S - 1), 1e6);
        assert_eq!(p.rate_at(S), 2e6);
    }

    #[test]
    fn a_ramp_integrates_to_the_trapezoid() {
        // 0 at 1 s rising to 2 Mbps at 3 s: 2 Mbit sent by 3 s, 0.5 Mbit by 2 s.
        let pts = [Point { at: S, rate_bps: 0, ramp: false }, Point { at: 3 * S, rate_bps: 2_000_000, ramp: true }];
        let mut p = RateProfile::new(0, &pts, 0);
        assert_eq!(p.time_at(0.5e6), Some(2 * S));
        assert_eq!(p.time_at(2e6), Some(3 * S));
        // After the ramp the rate holds.
        assert_eq!(p.time_at(4e6), Some(4 * S));
        assert!((p.rate_at(2 * S) - 1e6).abs() < 1e-6);
    }

    #[test]
    fn zero_rate_forever_never_sends_and_a_pause_delays() {
        let mut p = RateProfile::new(0, &[], 0);
        assert_eq!(p.time_at(1.0), None);
        let pts = [Point { at: S, rate_bps: 0, ramp: false }, Point { at: 2 * S, rate_bps: 1_000_000, ramp: false }];
        let mut p = RateProfile::new(1_000_000, &pts, 0);
        assert_eq!(p.time_at(1e6), Some(S));
        assert_eq!(p.time_at(1e6 + 1.0), Some(2 * S + 1000));
        // Silent until a step: the first bit goes at the step, not at the origin.
        let pts = [Point { at: 3 * S, rate_bps: 1_000_000, ramp: false }];
        let mut p = RateProfile::new(0, &pts, S);
        assert_eq!(p.time_at(0.0), Some(3 * S));
        assert_eq!(p.time_at(1000.0), Some(3 * S + 1_000_000));
    }
}
