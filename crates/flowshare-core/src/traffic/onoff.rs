//! On/off bursts: CBR at a peak rate during on periods, silence during off periods, with
//! exponential or Pareto period lengths (ns-2's `Application/Traffic/Exponential` and
//! `Application/Traffic/Pareto`).

use super::{exponential, pareto, Stream};
use crate::units::Time;
use serde::{Deserialize, Serialize};

/// Distribution of the on and off periods.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Periods {
    /// Exponential with the given means.
    #[default]
    Exponential,
    /// Pareto with the given means and shape.
    Pareto,
}

impl Periods {
    /// The name used in scenarios.
    pub fn as_str(self) -> &'static str {
        match self {
            Periods::Exponential => "exponential",
            Periods::Pareto => "pareto",
        }
    }
}

/// An on/off source. As in ns-2, a burst is a whole number of packets `interval` apart: its
/// length is drawn (mean `on`), divided by the interval and rounded, at least one packet; the
/// silence after it is drawn (mean `off`) and added to the interval after the burst's last
/// packet. The long-run rate is therefore `peak · on / (on + off)` (up to the rounding of
/// bursts to packets). The first burst begins at the start.
#[derive(Clone, Debug)]
pub struct OnOff {
    periods: Periods,
    /// Gap between packets of a burst, ns.
    interval: f64,
    on: f64,
    off: f64,
    shape: f64,
    /// Nominal time of the next packet, ns.
    t: f64,
    /// Packets left in the current burst.
    left: u64,
    payload: u32,
    rng: Stream,
}

impl OnOff {
    /// A source of `payload`-byte packets at `peak_bps` during on periods of mean `on` ns and
    /// off periods of mean `off` ns, from `start`. `shape` is the Pareto shape (> 1).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        periods: Periods,
        peak_bps: u64,
        on: Time,
        off: Time,
        shape: f64,
        payload: u32,
        start: Time,
        rng: Stream,
    ) -> Self {
        OnOff {
            periods,
            interval: f64::from(payload) * 8.0 * 1e9 / peak_bps as f64,
            on: on as f64,
            off: off as f64,
            shape,
            t: start as f64,
            left: 0,
            payload,
            rng,
        }
    }

    fn draw(&mut self, mean: f64) -> f64 {
        match self.periods {
            Periods::Exponential => exponential(&mut self.rng, mean),
            Periods::Pareto => pareto(&mut self.rng, mean, self.shape),
        }
    }

    /// The next packet: nominal send time and payload bytes.
    #[inline]
    pub fn next_packet(&mut self) -> Option<(Time, u32)> {
        if self.left == 0 {
            let on = self.draw(self.on);
            self.left = ((on / self.interval).round() as u64).max(1);
        }
        let at = self.t.round() as Time;
        self.left -= 1;
        self.t += self.interval;
        if self.left == 0 {
            let off = self.draw(self.off);
            self.t += off;
        }
        Some((at, self.payload))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    fn long_run_rate(periods: Periods, n: usize) -> f64 {
        // Peak 1 Mbps of 125-byte packets (1 ms apart), on 100 ms, off 300 ms: 250 kbps.
        let mut s = OnOff::new(periods, 1_000_000, 100_000_000, 300_000_000, 2.5, 125, 0, stream(9, "onoff"));
        let last = (0..n).map(|_| s.next_packet().unwrap().0).last().unwrap();
        n as f64 * 1000.0 / (last as f64 / 1e9)
    }

    #[test]
    fn exponential_long_run_rate_is_peak_times_on_fraction() {
        let r = long_run_rate(Periods::Exponential, 2_000_000);
        // 20 000 cycles; the cycle length has a CV near 0.8, so the standard error is 0.6 %.
        assert!((r / 250_000.0 - 1.0).abs() < 0.025, "rate {r}");
    }

    #[test]
    fn pareto_long_run_rate_is_peak_times_on_fraction() {
        // Shape 2.5 (finite variance; below 2 the sample means converge too slowly for a
        // test): 20 000 cycles, the cycle length has a CV near 1.
        let r = long_run_rate(Periods::Pareto, 2_000_000);
        assert!((r / 250_000.0 - 1.0).abs() < 0.03, "rate {r}");
    }

    #[test]
    fn pareto_periods_have_the_mean_and_the_minimum_of_the_shape() {
        let mut rng = stream(3, "p");
        let xs: Vec<f64> = (0..400_000).map(|_| super::super::pareto(&mut rng, 10.0, 3.0)).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        assert!((mean / 10.0 - 1.0).abs() < 0.01, "mean {mean}");
        let min = xs.iter().cloned().fold(f64::INFINITY, f64::min);
        let scale = 10.0 * 2.0 / 3.0;
        assert!((scale..scale * 1.001).contains(&min), "min {min}");
    }

    #[test]
    fn bursts_are_spaced_at_the_peak_interval() {
        let mut s = OnOff::new(Periods::Exponential, 1_000_000, 100_000_000, 300_000_000, 1.5, 125, 0, stream(9, "b"));
        let times: Vec<Time> = (0..10_000).map(|_| s.next_packet().unwrap().0).collect();
        let gaps: Vec<Time> = times.windows(2).map(|w| w[1] - w[0]).collect();
        // Every gap is the interval, or the interval plus a silence.
        assert!(gaps.iter().all(|&g| g >= 999_999));
        let in_burst = gaps.iter().filter(|&&g| g <= 1_000_001).count();
        assert!(in_burst > 9000, "{in_burst} gaps inside bursts");
    }
}
