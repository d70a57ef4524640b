//! Linux 2.6.22's `tcp_vegas.c` as ns-2.35's TCP-Linux runs it (`cc = { algo = "vegas",
//! variant = "linux" }`), after Brakmo and Peterson, "TCP Vegas: end to end congestion
//! avoidance on a global Internet", IEEE JSAC 13(8), 1995, with the module's own choices:
//!
//! - RTT samples in whole microseconds plus one, from the send time of the last segment each
//!   new ACK covers; baseRTT is their minimum for ever, the round's RTT the minimum of the round.
//! - A round ends with the first ACK beyond `beg_snd_nxt` (snd_nxt when the round began), and
//!   judges the round before it: `old_wnd` = the segments sent in that round, `old_snd_cwnd` =
//!   the window when it began. With fewer than three samples the round grows as Reno.
//! - diff in fixed point with one fractional bit (`V_PARAM_SHIFT`), all in 32-bit unsigned
//!   arithmetic: target = ⌊(old_wnd·baseRTT ≪ 1) / rtt⌋, diff = (old_wnd ≪ 1) − target, compared
//!   with 2α, 2β, 2γ (α = 2, β = 4, γ = 1 by default).
//! - Slow start (cwnd ≤ ssthresh) grows every round, as Reno; diff > 2γ ends it: ssthresh = 2,
//!   cwnd = min(cwnd, ⌊target/2⌋ + 1), then that ACK's slow-start increase.
//! - Congestion avoidance steps cwnd by one segment per round towards old_snd_cwnd − 1
//!   (diff > 2β), old_snd_cwnd + 1 (diff < 2α) or old_snd_cwnd; never below 2.
//! - Leaving the Open state (a recovery, a timeout) stops the rule; coming back to it waits a
//!   round (`vegas_enable`: beg_snd_nxt = snd_nxt, no samples), which keeps the stale
//!   `beg_snd_una` and `beg_snd_cwnd` of the round before the loss for its first decision, as
//!   the module does.
//! - ssthresh after a loss: ⌊cwnd/2⌋, at least 2 (`tcp_reno_ssthresh`); the module registers
//!   `min_cwnd` (ssthresh / 2), which the `rate_halving` recovery uses.

use super::{AckSample, CcState, CongestionControl, LossSignal, Phase};
use serde::Serialize;

/// Thresholds of Linux's Vegas, in segments (multiples of ½: the module keeps them in fixed
/// point with one fractional bit).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinuxVegasParams {
    /// Below this many segments queued, +1 per round (module default 2).
    pub alpha: f64,
    /// Above this, −1 per round (default 4).
    pub beta: f64,
    /// Above this, slow start ends (default 1).
    pub gamma: f64,
}

/// Linux 2.6.22's defaults (`alpha = 2<<V_PARAM_SHIFT`, `beta = 4<<…`, `gamma = 1<<…`).
pub const LINUX_PARAMS: LinuxVegasParams = LinuxVegasParams { alpha: 2.0, beta: 4.0, gamma: 1.0 };

impl Serialize for LinuxVegasParams {
    /// As written in a scenario: `variant = "linux"` and the thresholds.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("LinuxVegasParams", 4)?;
        st.serialize_field("variant", "linux")?;
        st.serialize_field("alpha", &self.alpha)?;
        st.serialize_field("beta", &self.beta)?;
        st.serialize_field("gamma", &self.gamma)?;
        st.end()
    }
}

/// A threshold in the module's fixed point (segments × 2), or the error naming the field.
pub fn fixed_point(name: &str, segments: f64) -> Result<u32, String> {
    let twice = segments * 2.0;
    if !(twice.is_finite() && twice >= 0.0 && twice.fract() == 0.0 && twice <= f64::from(u32::MAX)) {
        return Err(format!(
            "{name}: the linux variant keeps thresholds in half segments (V_PARAM_SHIFT 1); give a multiple of 0.5 >= 0, got {segments}"
        ));
    }
    Ok(twice as u32)
}

/// The module's state (`struct vegas`), windows and sequence numbers in segments.
#[derive(Clone, Copy, Debug)]
pub struct LinuxVegas {
    params: LinuxVegasParams,
    alpha: u32,
    beta: u32,
    gamma: u32,
    doing_vegas_now: bool,
    beg_snd_una: u32,
    beg_snd_nxt: u32,
    beg_snd_cwnd: u32,
    cnt_rtt: u32,
    /// Microseconds (+1), `u32::MAX` = none yet.
    min_rtt: u32,
    base_rtt: u32,
    /// Reno's congestion-avoidance counter (`snd_cwnd_cnt`).
    cwnd_cnt: u32,
    /// Last decision, for the metrics (segments; NaN before the first).
    diff: f64,
}

impl LinuxVegas {
    /// The module with thresholds `params`, validated by [`fixed_point`].
    pub fn new(params: LinuxVegasParams) -> Self {
        let fp = |x: f64| fixed_point("", x).unwrap_or(0);
        LinuxVegas {
            params,
            alpha: fp(params.alpha),
            beta: fp(params.beta),
            gamma: fp(params.gamma),
            // tcp_vegas_init: vegas_enable with snd_nxt = 0.
            doing_vegas_now: true,
            beg_snd_una: 0,
            beg_snd_nxt: 0,
            beg_snd_cwnd: 0,
            cnt_rtt: 0,
            min_rtt: u32::MAX,
            base_rtt: u32::MAX,
            cwnd_cnt: 0,
            diff: f64::NAN,
        }
    }

    /// `tcp_reno_cong_avoid` (2.6.22): +1 per ACK in slow start (cwnd ≤ ssthresh), else +1
    /// once the counter has seen cwnd + 1 ACKs.
    fn reno(&mut self, st: &mut CcState, cwnd: u32) {
        if f64::from(cwnd) <= st.ssthresh {
            st.cwnd = f64::from(cwnd) + 1.0;
        } else if self.cwnd_cnt >= cwnd {
            st.cwnd = f64::from(cwnd) + 1.0;
            self.cwnd_cnt = 0;
        } else {
            self.cwnd_cnt += 1;
        }
    }

    /// `vegas_enable` at the sequence state now in `st`.
    fn enable(&mut self, st: &CcState) {
        self.doing_vegas_now = true;
        self.beg_snd_nxt = st.snd_nxt as u32;
        self.cnt_rtt = 0;
        self.min_rtt = u32::MAX;
    }
}

impl CongestionControl for LinuxVegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &AckSample) {
        // tcp_vegas_pkts_acked
        if let Some(rtt) = ack.rtt {
            let vrtt = (rtt / 1_000).min(u64::from(u32::MAX - 1)) as u32 + 1;
            self.base_rtt = self.base_rtt.min(vrtt);
            self.min_rtt = self.min_rtt.min(vrtt);
            self.cnt_rtt += 1;
        }
        let cwnd = st.cwnd.max(1.0) as u32;
        if !self.doing_vegas_now {
            return self.reno(st, cwnd);
        }
        let ack_seq = st.snd_una as u32;
        if ack_seq > self.beg_snd_nxt {
            let old_wnd = self.beg_snd_nxt.wrapping_sub(self.beg_snd_una);
            let old_snd_cwnd = self.beg_snd_cwnd;
            self.beg_snd_una = self.beg_snd_nxt;
            self.beg_snd_nxt = st.snd_nxt as u32;
            self.beg_snd_cwnd = cwnd;
            if self.cnt_rtt <= 2 {
                self.reno(st, cwnd);
            } else {
                let rtt = self.min_rtt;
                let target = (old_wnd.wrapping_mul(self.base_rtt) << 1) / rtt;
                let diff = (old_wnd << 1).wrapping_sub(target);
                self.diff = f64::from(diff) / 2.0;
                let mut w = cwnd;
                if f64::from(w) <= st.ssthresh {
                    if diff > self.gamma {
                        st.ssthresh = 2.0;
                        w = w.min((target >> 1) + 1);
                    }
                    w += 1; // tcp_slow_start
                } else {
                    let next = if diff > self.beta {
                        old_snd_cwnd.wrapping_sub(1)
                    } else if diff < self.alpha {
                        old_snd_cwnd.wrapping_add(1)
                    } else {
                        old_snd_cwnd
                    };
                    if next > w {
                        w += 1;
                    } else if next < w {
                        w -= 1;
                    }
                }
                st.cwnd = f64::from(w.max(2));
            }
            self.cnt_rtt = 0;
            self.min_rtt = u32::MAX;
        } else if f64::from(cwnd) <= st.ssthresh {
            st.cwnd = f64::from(cwnd) + 1.0;
        }
    }

    fn ssthresh_after(&mut self, _st: &CcState, loss: &LossSignal) -> f64 {
        ((loss.flight_size >> 1).max(2)) as f64
    }

    /// `tcp_vegas_state`: Open enables (at the sequence state the sender reported for the ACK
    /// that ends the recovery), every other state disables.
    fn on_phase(&mut self, st: &mut CcState, _from: Phase, to: Phase) {
        if to == Phase::Open {
            self.enable(st);
        } else {
            self.doing_vegas_now = false;
        }
    }

    fn metrics(&self, out: &mut dyn FnMut(&'static str, f64)) {
        let s = |us: u32| if us == u32::MAX { f64::NAN } else { f64::from(us) / 1e6 };
        out("vegas_base_rtt_s", s(self.base_rtt));
        out("vegas_diff", self.diff);
        out("vegas_alpha", self.params.alpha);
        out("vegas_beta", self.params.beta);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::ack;

    const MS: u64 = 1_000_000;

    /// A flow with window 10 (ssthresh `ssthresh`) whose first ACK (snd_una 1, 10 sent) gives
    /// a 50 ms sample, then nine ACKs of the round at `rtt_ms` and the ACK that ends it.
    fn one_round(ssthresh: f64, rtt_ms: u64) -> (LinuxVegas, CcState) {
        let mut v = LinuxVegas::new(LINUX_PARAMS);
        let mut st = CcState::new(10.0, ssthresh, 1460);
        let at = |v: &mut LinuxVegas, st: &mut CcState, una: u64, rtt: u64| {
            (st.snd_una, st.snd_nxt) = (una, 10);
            v.on_ack(st, &AckSample { rtt: Some(rtt * MS), ..ack() });
            st.cwnd = 10.0; // the round is judged on the window it began with
        };
        at(&mut v, &mut st, 1, 50);
        for una in 2..=10 {
            at(&mut v, &mut st, una, rtt_ms);
        }
        (st.snd_una, st.snd_nxt) = (11, 20);
        v.on_ack(&mut st, &AckSample { rtt: Some(rtt_ms * MS), ..ack() });
        (v, st)
    }

    /// old_wnd 10, baseRTT 50 001 µs: target = ⌊20·50 001 / rtt⌋ and diff = 20 − target in
    /// half segments, against 2α = 4 and 2β = 8: +1 below, −1 above, hold between.
    #[test]
    fn congestion_avoidance_steps_towards_the_previous_window_by_the_fixed_point_diff() {
        for (rtt, diff, cwnd) in [(55, 1.0, 11.0), (60, 2.0, 10.0), (80, 4.0, 10.0), (90, 4.5, 9.0)] {
            let (v, st) = one_round(2.0, rtt);
            assert_eq!((v.diff, st.cwnd), (diff, cwnd), "rtt {rtt} ms");
        }
    }

    /// diff > 2γ in slow start: ssthresh 2, cwnd = min(cwnd, ⌊target/2⌋ + 1), then +1.
    #[test]
    fn slow_start_ends_at_the_actual_rate_plus_one() {
        let (_, st) = one_round(f64::INFINITY, 80); // target 12, diff 8 > 2
        assert_eq!((st.ssthresh, st.cwnd), (2.0, 8.0));
        let (_, st) = one_round(f64::INFINITY, 51); // target 19, diff 1: still slow start
        assert_eq!((st.ssthresh, st.cwnd), (f64::INFINITY, 11.0));
    }

    #[test]
    fn thresholds_are_half_segments() {
        assert_eq!(fixed_point("alpha", 2.5), Ok(5));
        let e = fixed_point("beta", 2.3).unwrap_err();
        assert!(e.starts_with("beta: the linux variant keeps thresholds in half segments"), "{e}");
    }
}
