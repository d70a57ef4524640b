//! Constant bit rate: fixed-size packets evenly spaced at a rate that may follow a schedule
//! (ns-2's `Application/Traffic/CBR` with `random_ 0`).

use super::schedule::RateProfile;
use crate::units::Time;

/// A CBR source. Packet `k` (from 0) leaves when the rate integral since the start reaches
/// `k` packets' worth of bits, so at a constant rate packets are exactly `size·8/rate` apart
/// from the start time on.
#[derive(Clone, Debug)]
pub struct Cbr {
    profile: RateProfile,
    bits: f64,
    k: u64,
    payload: u32,
}

impl Cbr {
    /// A source of `payload`-byte packets following `profile` (bits counted from the start).
    pub fn new(profile: RateProfile, payload: u32) -> Self {
        Cbr { profile, bits: f64::from(payload) * 8.0, k: 0, payload }
    }

    /// The next packet: nominal send time and payload bytes; `None` if the rate stays zero.
    #[inline]
    pub fn next_packet(&mut self) -> Option<(Time, u32)> {
        let t = self.profile.time_at(self.k as f64 * self.bits)?;
        self.k += 1;
        Some((t, self.payload))
    }
}

#[cfg(test)]
mod tests {
    use super::super::schedule::Point;
    use super::*;

    #[test]
    fn evenly_spaced_at_the_rate_and_rescheduled_at_a_step() {
        let pts = [Point { at: 1_000_000_000, rate_bps: 16_000_000, ramp: false }];
        let mut c = Cbr::new(RateProfile::new(8_000_000, &pts, 0), 1000);
        let times: Vec<Time> = (0..1500).map(|_| c.next_packet().unwrap().0).collect();
        // 1 ms apart for the first second (1000 packets), then 0.5 ms apart.
        assert_eq!(times[0], 0);
        assert!(times[..1001].windows(2).all(|w| w[1] - w[0] == 1_000_000));
        assert_eq!(times[1000], 1_000_000_000);
        assert!(times[1000..].windows(2).all(|w| w[1] - w[0] == 500_000));
    }
}
