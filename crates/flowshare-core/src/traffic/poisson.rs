//! Poisson packets: exponential gaps at a mean rate, which may follow a schedule.

use super::schedule::RateProfile;
use super::{exponential, Stream};
use crate::units::Time;

/// A Poisson source of fixed-size packets. The gaps between packets, measured in bits of the
/// rate profile, are exponential with a mean of one packet, so at a constant rate the
/// inter-packet times are exponential with mean `size·8/rate`, and under a schedule the
/// packets form a Poisson process whose intensity follows the rate. The first packet leaves
/// one such gap after the start.
#[derive(Clone, Debug)]
pub struct Poisson {
    profile: RateProfile,
    bits: f64,
    position: f64,
    payload: u32,
    rng: Stream,
}

impl Poisson {
    /// A source of `payload`-byte packets following `profile`, drawing from `rng`.
    pub fn new(profile: RateProfile, payload: u32, rng: Stream) -> Self {
        Poisson { profile, bits: f64::from(payload) * 8.0, position: 0.0, payload, rng }
    }

    /// The next packet: nominal send time and payload bytes; `None` if the rate stays zero.
    #[inline]
    pub fn next_packet(&mut self) -> Option<(Time, u32)> {
        self.position += exponential(&mut self.rng, self.bits);
        let t = self.profile.time_at(self.position)?;
        Some((t, self.payload))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    #[test]
    fn gaps_are_exponential_with_the_mean_of_the_rate() {
        // 1 Mbps of 1000-byte packets: mean gap 8 ms, coefficient of variation 1.
        let mut p = Poisson::new(RateProfile::new(1_000_000, &[], 0), 1000, stream(5, "poisson"));
        let n = 200_000;
        let mut last = 0;
        let gaps: Vec<f64> = (0..n)
            .map(|_| {
                let t = p.next_packet().unwrap().0;
                let g = (t - last) as f64;
                last = t;
                g
            })
            .collect();
        let mean = gaps.iter().sum::<f64>() / n as f64;
        let var = gaps.iter().map(|g| (g - mean) * (g - mean)).sum::<f64>() / (n - 1) as f64;
        let cv = var.sqrt() / mean;
        // Standard error of the mean is 8 ms / sqrt(n) = 0.22 %; allow 4 of them.
        assert!((mean / 8e6 - 1.0).abs() < 0.009, "mean gap {mean}");
        assert!((cv - 1.0).abs() < 0.02, "cv {cv}");
    }
}
