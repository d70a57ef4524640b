//! TCP Vegas (Brakmo and Peterson, "TCP Vegas: end to end congestion avoidance on a global
//! Internet", IEEE JSAC 13(8), 1995), Enhanced Vegas (Hasegawa, PhD thesis, Osaka University
//! 2000, §2.3 Eq 2.26) and Vegas with a periodic base-RTT refresh (the same thesis, §5.3.1).
//!
//! Once per round (an ACK with `round_start`), with baseRTT the smallest RTT seen and rtt the
//! smallest RTT sample of the round that just closed (Brakmo and Peterson 1995):
//!
//! - diff = cwnd·(1 − baseRTT/rtt) packets, the paper's (Expected − Actual)·baseRTT and the
//!   thesis's Eq 1.4 multiplied by baseRTT (`diff = "linux"` uses cwnd·(rtt − baseRTT)/baseRTT,
//!   larger by rtt/baseRTT).
//! - Congestion avoidance, `vegas`: +1 if diff < α, −1 if diff > β, unchanged otherwise; a tie
//!   leaves cwnd unchanged (resolution hasegawa:A6). `vegas_enhanced` (Eq 2.26): +1 if diff < δ, −1
//!   otherwise, so there is no dead zone and a lone flow oscillates around 2δ queued packets
//!   (Eq 2.36 for two flows; one flow centres where its own diff equals δ).
//! - cwnd never goes below 2; a decrease lowers ssthresh to cwnd, so Vegas's own decrease never
//!   restarts slow start.
//! - A round with fewer than 3 RTT samples makes no delay decision and adds one segment, as
//!   Reno would over the round (Linux's `cntRTT <= 2` rule).
//! - Slow start (`slow_start`): `thesis` (the default; Hasegawa (2000) §1.2.3, resolution
//!   hasegawa:A5: "slow-slow-start", +1 segment every other ACK, ×1.5 per RTT, left only at
//!   ssthresh or on a loss), `brakmo` (+1 per ACK in every other round, i.e. doubling every other
//!   RTT, and left when diff > γ: cwnd = min(cwnd, ⌊cwnd·baseRTT/rtt⌋ + 1), ssthresh = cwnd), or
//!   `linux` (+1 per ACK every round, the same γ exit).
//! - Loss: Reno's, ssthresh = max(FlightSize/2, 2) (Hasegawa (2000) assumes fast retransmit halves
//!   the window, §6.3.2; Linux `tcp_vegas.c` also uses `tcp_reno_ssthresh`). The per-round state
//!   restarts when the sender returns to open operation, as Linux's `vegas_enable` does.
//! - Base-RTT refresh (`base_rtt_refresh`, Hasegawa (2000) §5.3.1, resolution hasegawa:A36): at
//!   every period boundary (counted from the first RTT sample, read from `ack.now`) baseRTT becomes
//!   the smallest RTT seen during the period that just ended (`refresh_to = "interval_min"`) or the
//!   latest sample (`"last_sample"`), so that a standing queue on the ACK path stops counting as
//!   congestion.
//!
//! Differences: the paper times one marked segment per RTT with a coarse clock, ns-2's
//! `Agent/TCP/Vegas` uses ⌊diff + 0.5⌋ on the window sent in the last round, cuts cwnd by 1/4 on a
//! loss (1/2 if the segment had been retransmitted) and has a fine-grained retransmission timeout
//! of its own, and Linux keeps ssthresh ≥ ¾·cwnd every round (`tcp_current_ssthresh`); none of
//! those is modelled here. Defaults follow the thesis (α = 2, β = 4, δ = 3; resolution hasegawa:A7,
//! §2.3); the paper and ns-2 use α = 1, β = 3, γ = 1, Linux α = 2, β = 4, γ = 1.

use super::{in_slow_start, slow_start, AckSample, CcState, CongestionControl, LossSignal, Phase};
use crate::units::Time;
use serde::{Deserialize, Serialize};

/// Slow-start rule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VegasSlowStart {
    /// Hasegawa's "slow-slow-start": +1 segment every other ACK, no γ exit.
    #[default]
    Thesis,
    /// Brakmo and Peterson: double every other RTT, leave when diff > γ.
    Brakmo,
    /// Linux `tcp_vegas.c`: +1 segment per ACK, leave when diff > γ.
    Linux,
}

/// How diff, the estimated number of queued segments, is computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VegasDiff {
    /// cwnd·(1 − baseRTT/rtt): the paper's (Expected − Actual)·baseRTT and the thesis's Eq 1.4.
    #[default]
    Paper,
    /// cwnd·(rtt − baseRTT)/baseRTT, current Linux.
    Linux,
}

/// What baseRTT becomes at a refresh boundary (resolution hasegawa:A36).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefreshTo {
    /// The smallest RTT sample of the period that just ended.
    #[default]
    IntervalMin,
    /// The RTT sample that crosses the boundary.
    LastSample,
}

/// The window rule applied once per round in congestion avoidance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum VegasRule {
    /// Brakmo's: +1 below α, −1 above β, hold in between.
    DeadZone {
        /// Lower threshold, segments.
        alpha: f64,
        /// Upper threshold, segments.
        beta: f64,
    },
    /// Hasegawa's Enhanced Vegas (Eq 2.26): +1 below δ, −1 at or above δ.
    Enhanced {
        /// Target, segments.
        delta: f64,
    },
}

/// Thesis defaults (resolution hasegawa:A7): α, segments.
pub const ALPHA: f64 = 2.0;
/// Thesis defaults (resolution hasegawa:A7): β, segments.
pub const BETA: f64 = 4.0;
/// Slow-start exit threshold γ, segments (paper, ns-2 and Linux all use 1).
pub const GAMMA: f64 = 1.0;
/// Enhanced Vegas target δ, segments (Hasegawa (2000) §2.3, Fig 2.7).
pub const DELTA: f64 = 3.0;
/// Base-RTT refresh period of the thesis's asymmetric-link Vegas (Hasegawa (2000) §5.3.1): 100 ms.
pub const REFRESH_NS: Time = 100_000_000;
/// Fewest RTT samples in a round for a delay decision (Linux `cntRTT > 2`).
const MIN_SAMPLES: u32 = 3;
/// Smallest window Vegas leaves.
const MIN_CWND: f64 = 2.0;

/// Vegas state.
#[derive(Clone, Copy, Debug)]
pub struct Vegas {
    rule: VegasRule,
    gamma: f64,
    slow_start: VegasSlowStart,
    diff_form: VegasDiff,
    refresh: Option<Time>,
    refresh_to: RefreshTo,
    /// Smallest RTT seen (since the last refresh), ns; `u64::MAX` before the first sample.
    base_rtt: Time,
    /// Smallest RTT sample of the current round, ns.
    round_min: Time,
    /// RTT samples in the current round.
    round_samples: u32,
    /// Start of the current refresh period, ns (`None` before the first sample).
    period_start: Option<Time>,
    /// Smallest RTT sample of the current refresh period, ns.
    period_min: Time,
    /// Thesis slow start: ACKs counted towards the next increment.
    ss_acks: u32,
    /// Brakmo slow start: this round grows.
    ss_grow: bool,
    /// Last round's diff, segments (NaN before the first decision).
    diff: f64,
    /// Last round's minimum RTT, ns (0 before the first decision).
    last_round_rtt: Time,
}

impl Vegas {
    /// Vegas (dead zone [α, β]) or Enhanced Vegas, with the given options. Parameters are
    /// validated by [`super::CcConfig`].
    pub fn new(
        rule: VegasRule,
        gamma: f64,
        slow_start: VegasSlowStart,
        diff_form: VegasDiff,
        refresh: Option<Time>,
        refresh_to: RefreshTo,
    ) -> Self {
        Vegas {
            rule,
            gamma,
            slow_start,
            diff_form,
            refresh,
            refresh_to,
            base_rtt: u64::MAX,
            round_min: u64::MAX,
            round_samples: 0,
            period_start: None,
            period_min: u64::MAX,
            ss_acks: 0,
            ss_grow: true,
            diff: f64::NAN,
            last_round_rtt: 0,
        }
    }

    /// Thesis-default Vegas: α = 2, β = 4, γ = 1, slow-slow-start, paper diff, no refresh.
    pub fn thesis() -> Self {
        Vegas::new(
            VegasRule::DeadZone { alpha: ALPHA, beta: BETA },
            GAMMA,
            VegasSlowStart::Thesis,
            VegasDiff::Paper,
            None,
            RefreshTo::IntervalMin,
        )
    }

    /// Base RTT in nanoseconds (`u64::MAX` before the first sample).
    pub fn base_rtt(&self) -> Time {
        self.base_rtt
    }

    /// Last round's diff in segments (NaN before the first decision).
    pub fn diff(&self) -> f64 {
        self.diff
    }

    /// diff for a window and two RTTs, in segments.
    fn diff_of(&self, cwnd: f64, base: Time, rtt: Time) -> f64 {
        let (base, rtt) = (base as f64, rtt as f64);
        match self.diff_form {
            VegasDiff::Paper => cwnd * (1.0 - base / rtt),
            VegasDiff::Linux => cwnd * (rtt - base) / base,
        }
    }

    /// Fold an RTT sample into the base, round and refresh-period minima.
    fn sample(&mut self, now: Time, rtt: Time) {
        if let Some(period) = self.refresh {
            match self.period_start {
                None => self.period_start = Some(now),
                Some(start) if now >= start + period => {
                    let new_base = match self.refresh_to {
                        RefreshTo::IntervalMin => self.period_min,
                        RefreshTo::LastSample => rtt,
                    };
                    if new_base != u64::MAX && new_base > 0 {
                        self.base_rtt = new_base;
                    }
                    self.period_start = Some(start + (now - start) / period * period);
                    self.period_min = u64::MAX;
                }
                Some(_) => {}
            }
            self.period_min = self.period_min.min(rtt);
        }
        self.base_rtt = self.base_rtt.min(rtt);
        self.round_min = self.round_min.min(rtt);
        self.round_samples += 1;
    }

    /// The once-per-round decision.
    fn end_round(&mut self, st: &mut CcState) {
        let in_ss = in_slow_start(st);
        if self.round_samples < MIN_SAMPLES || self.base_rtt == u64::MAX {
            if !in_ss {
                st.cwnd += 1.0;
            }
        } else {
            let rtt = self.round_min;
            let diff = self.diff_of(st.cwnd, self.base_rtt, rtt);
            self.diff = diff;
            self.last_round_rtt = rtt;
            if in_ss {
                if self.slow_start != VegasSlowStart::Thesis && diff > self.gamma {
                    let target = (st.cwnd * self.base_rtt as f64 / rtt as f64).floor() + 1.0;
                    st.cwnd = st.cwnd.min(target).max(MIN_CWND);
                    st.ssthresh = st.ssthresh.min(st.cwnd);
                }
            } else {
                let step = match self.rule {
                    VegasRule::DeadZone { alpha, .. } if diff < alpha => 1.0,
                    VegasRule::DeadZone { beta, .. } if diff > beta => -1.0,
                    VegasRule::DeadZone { .. } => 0.0,
                    VegasRule::Enhanced { delta } if diff < delta => 1.0,
                    VegasRule::Enhanced { .. } => -1.0,
                };
                st.cwnd = (st.cwnd + step).max(MIN_CWND);
                st.ssthresh = st.ssthresh.min(st.cwnd);
            }
        }
        self.ss_grow = !self.ss_grow;
        self.round_min = u64::MAX;
        self.round_samples = 0;
    }

    /// Restart the per-round measurement (baseRTT is kept).
    fn reset_round(&mut self) {
        self.round_min = u64::MAX;
        self.round_samples = 0;
        self.ss_acks = 0;
        self.ss_grow = true;
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        match self.rule {
            VegasRule::DeadZone { .. } => "vegas",
            VegasRule::Enhanced { .. } => "vegas_enhanced",
        }
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &AckSample) {
        if let Some(rtt) = ack.rtt {
            self.sample(ack.now, rtt);
        }
        if ack.round_start {
            self.end_round(st);
        }
        if in_slow_start(st) {
            match self.slow_start {
                VegasSlowStart::Thesis => {
                    self.ss_acks += 1;
                    if self.ss_acks >= 2 {
                        self.ss_acks = 0;
                        slow_start(st);
                    }
                }
                VegasSlowStart::Brakmo if self.ss_grow => slow_start(st),
                VegasSlowStart::Brakmo => {}
                VegasSlowStart::Linux => slow_start(st),
            }
        }
    }

    fn ssthresh_after(&mut self, _st: &CcState, loss: &LossSignal) -> f64 {
        (0.5 * loss.flight_size as f64).max(2.0)
    }

    fn on_phase(&mut self, _st: &mut CcState, _from: Phase, to: Phase) {
        if to == Phase::Open {
            self.reset_round();
        }
    }

    fn metrics(&self, out: &mut dyn FnMut(&'static str, f64)) {
        let s = |t: Time| if t == u64::MAX || t == 0 { f64::NAN } else { t as f64 / 1e9 };
        out("vegas_base_rtt_s", s(self.base_rtt));
        out("vegas_rtt_s", s(self.last_round_rtt));
        out("vegas_diff", self.diff);
        match self.rule {
            VegasRule::DeadZone { alpha, beta } => {
                out("vegas_alpha", alpha);
                out("vegas_beta", beta);
            }
            VegasRule::Enhanced { delta } => out("vegas_delta", delta),
        }
    }
}

/// Which Vegas: flowshare's configurable one (`paper`, the default), ns-2.35's
/// `Agent/TCP/Vegas` (`ns2`) or Linux 2.6.22's module (`linux`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VegasVariant {
    /// Brakmo and Peterson's rule with the slow start, diff and refresh options above.
    #[default]
    Paper,
    /// ns-2.35's agent: its own loss recovery and fine-grained timeout (see [`Ns2Vegas`]).
    Ns2,
    /// Linux 2.6.22's module as ns-2.35's TCP-Linux runs it (see
    /// [`super::vegas_linux::LinuxVegas`]).
    Linux,
}

/// Thresholds of ns-2's Vegas, in segments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ns2VegasParams {
    /// `v_alpha_`: below this, +1/cwnd per ACK in congestion avoidance (ns-2 default 1).
    pub alpha: f64,
    /// `v_beta_`: above this, −1 per round (default 3).
    pub beta: f64,
    /// `v_gamma_`: above this, slow start ends with a ⅛ cut (default 1).
    pub gamma: f64,
}

impl Serialize for Ns2VegasParams {
    /// As written in a scenario: `variant = "ns2"` and the thresholds.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Ns2VegasParams", 4)?;
        st.serialize_field("variant", &VegasVariant::Ns2)?;
        st.serialize_field("alpha", &self.alpha)?;
        st.serialize_field("beta", &self.beta)?;
        st.serialize_field("gamma", &self.gamma)?;
        st.end()
    }
}

/// ns-2.35's defaults: `v_alpha_` 1, `v_beta_` 3, `v_gamma_` 1.
pub const NS2_PARAMS: Ns2VegasParams = Ns2VegasParams { alpha: 1.0, beta: 3.0, gamma: 1.0 };

/// The controller side of ns-2.35's `Agent/TCP/Vegas` (`tcp/tcp-vegas.cc`). That agent takes
/// over the ACK processing of its TCP: the per-round rule (average RTT of the round, ⌊diff +
/// ½⌋ on the window outstanding, a ⅛ cut leaving slow start), the ¾ cut on a duplicate ACK
/// with window inflation, its fine-grained retransmission timer and the window of 2 after a
/// timeout all need each segment's send time and count, so the sender runs them (module
/// `tcp::sender::ns2_vegas`). What is left here is the ssthresh of a timeout, half the window
/// (ns-2's `slowdown(CLOSE_SSTHRESH_HALF)`).
#[derive(Clone, Copy, Debug)]
pub struct Ns2Vegas {
    /// The thresholds, reported as metrics.
    pub params: Ns2VegasParams,
}

impl CongestionControl for Ns2Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn on_ack(&mut self, _st: &mut CcState, _ack: &AckSample) {}

    fn ssthresh_after(&mut self, _st: &CcState, loss: &LossSignal) -> f64 {
        (0.5 * loss.flight_size as f64).max(2.0)
    }

    fn metrics(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("vegas_alpha", self.params.alpha);
        out("vegas_beta", self.params.beta);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::LossKind;

    const MS: Time = 1_000_000;

    fn ack(now: Time, rtt: Option<Time>, round_start: bool) -> AckSample {
        AckSample { now, rtt, round_start, ..crate::cc::testing::ack() }
    }

    /// Feed one round of `n` ACKs with RTT `rtt` (the last one closes the round).
    fn round(v: &mut Vegas, st: &mut CcState, now: Time, rtt: Time, n: u32) {
        for i in 0..n {
            v.on_ack(st, &ack(now, Some(rtt), i + 1 == n));
        }
    }

    fn enhanced(delta: f64) -> Vegas {
        Vegas::new(
            VegasRule::Enhanced { delta },
            GAMMA,
            VegasSlowStart::Thesis,
            VegasDiff::Paper,
            None,
            RefreshTo::IntervalMin,
        )
    }

    /// Worked example of Brakmo and Peterson's rule with α = 2, β = 4, baseRTT 100 ms: every row is
    /// a window in congestion avoidance, one round at 100 ms to learn baseRTT, then one round
    /// at `rtt`.
    #[test]
    fn congestion_avoidance_decisions() {
        let paper = Vegas::thesis();
        let linux = Vegas { diff_form: VegasDiff::Linux, ..Vegas::thesis() };
        let cases = [
            // label, algorithm, cwnd, rtt ms, expected diff, expected cwnd after
            ("paper 30 @120: diff 30·20/120 = 5 > 4, decrease", paper, 30.0, 120, 5.0, 29.0),
            ("linux 30 @120: diff 30·20/100 = 6 > 4, decrease", linux, 30.0, 120, 6.0, 29.0),
            ("paper 20 @120: diff 3.33 in [2, 4], hold", paper, 20.0, 120, 20.0 / 6.0, 20.0),
            ("linux 20 @120: diff 4, a tie with β holds", linux, 20.0, 120, 4.0, 20.0),
            ("paper 10 @110: diff 10·10/110 = 0.91 < 2, increase", paper, 10.0, 110, 10.0 / 11.0, 11.0),
            ("paper 4 @200: diff 4·0.5 = 2, a tie with α holds", paper, 4.0, 200, 2.0, 4.0),
            ("enhanced δ=3, 6 @200: diff 3 = δ, decrease", enhanced(3.0), 6.0, 200, 3.0, 5.0),
            ("enhanced δ=3, 12 @120: diff 2 < δ, increase", enhanced(3.0), 12.0, 120, 2.0, 13.0),
            ("enhanced δ=3, 30 @120: diff 5 > δ, decrease", enhanced(3.0), 30.0, 120, 5.0, 29.0),
            ("enhanced δ=3, 2 @200: diff 1 < δ, increase", enhanced(3.0), 2.0, 200, 1.0, 3.0),
        ];
        for (label, v0, cwnd, rtt_ms, diff, after) in cases {
            let mut v = v0;
            // Learn baseRTT = 100 ms in a round whose decision (diff 0 < α) is then undone.
            let mut st = CcState::new(cwnd - 1.0, 1.0, 1460);
            round(&mut v, &mut st, 0, 100 * MS, 3);
            assert_eq!(st.cwnd, cwnd, "{label}: warm-up round");
            round(&mut v, &mut st, 200 * MS, rtt_ms * MS, 3);
            assert!((v.diff() - diff).abs() < 1e-9, "{label}: diff {}", v.diff());
            assert_eq!(st.cwnd, after, "{label}");
            assert!(st.cwnd >= st.ssthresh, "{label}: stays in congestion avoidance");
        }
    }

    #[test]
    fn window_never_drops_below_two_and_decrease_keeps_congestion_avoidance() {
        let mut v = Vegas::thesis();
        let mut st = CcState::new(2.0, 2.0, 1460);
        round(&mut v, &mut st, 0, 100 * MS, 3); // diff 0: +1 -> 3
        round(&mut v, &mut st, 0, 1000 * MS, 3); // diff 3·0.9 = 2.7: hold
        assert_eq!(st.cwnd, 3.0);
        let mut st = CcState::new(2.0, 2.0, 1460);
        let mut e = enhanced(1.0);
        round(&mut e, &mut st, 0, 100 * MS, 3); // +1 -> 3
        round(&mut e, &mut st, 0, 1000 * MS, 3); // diff 2.7 >= 1: -1 -> 2
        round(&mut e, &mut st, 0, 1000 * MS, 3); // diff 1.8 >= 1: would be 1, floor 2
        assert_eq!((st.cwnd, st.ssthresh), (2.0, 2.0));
    }

    #[test]
    fn rounds_with_few_samples_add_one_segment_like_reno() {
        let mut v = Vegas::thesis();
        let mut st = CcState::new(10.0, 5.0, 1460);
        round(&mut v, &mut st, 0, 100 * MS, 2);
        assert_eq!(st.cwnd, 11.0, "2 samples: no delay decision");
        assert!(v.diff().is_nan());
        // Three samples at 200 ms against 100 ms: diff = 11·0.5 = 5.5 > 4.
        round(&mut v, &mut st, 0, 200 * MS, 3);
        assert_eq!(st.cwnd, 10.0);
        assert_eq!(v.diff(), 5.5);
    }

    /// Slow-start variants, one row per (variant, ACKs, expected cwnd) starting at cwnd 4 with
    /// no RTT samples (so no γ exit can fire): thesis +1 per 2 ACKs; Brakmo +1 per ACK in the
    /// first round, nothing in the second; Linux +1 per ACK.
    #[test]
    fn slow_start_variants() {
        let cases = [
            ("thesis: 4 ACKs in one round, +2", VegasSlowStart::Thesis, vec![4], 6.0),
            ("thesis: 5 then 3 ACKs, +4", VegasSlowStart::Thesis, vec![5, 3], 8.0),
            (
                "brakmo: 3 ACKs grow, the closing ACK opens a rest round, whose closing ACK grows",
                VegasSlowStart::Brakmo,
                vec![4, 4],
                8.0,
            ),
            ("brakmo: the third round grows on 6 ACKs, then rests", VegasSlowStart::Brakmo, vec![4, 4, 7], 14.0),
            ("linux: 4 + 8 ACKs, +12", VegasSlowStart::Linux, vec![4, 8], 16.0),
        ];
        for (label, ss, rounds, expected) in cases {
            let mut v = Vegas { slow_start: ss, ..Vegas::thesis() };
            let mut st = CcState::new(4.0, 1000.0, 1460);
            for n in rounds {
                for i in 0..n {
                    v.on_ack(&mut st, &ack(0, None, i + 1 == n));
                }
            }
            assert_eq!(st.cwnd, expected, "{label}");
        }
    }

    /// γ exit, starting at cwnd 6 with ssthresh 1000: a round of 3 ACKs at 100 ms (baseRTT),
    /// then a round of 3 ACKs at 150 ms decided on the window reached by its last ACK.
    /// - linux: 6 → 9 in round A, 9 → 11 before the decision; diff = 11·(1 − 100/150) = 3.67
    ///   > γ = 1, cwnd = min(11, ⌊11·100/150⌋ + 1) = 8, ssthresh = 8.
    /// - brakmo: 6 → 8 (the closing ACK opens a round without growth); diff = 8/3 = 2.67 > 1,
    ///   cwnd = ⌊5.33⌋ + 1 = 6, ssthresh = 6.
    /// - thesis: +1 on ACKs 2, 4, 6: 6 → 9; diff 8/3 at the decision, no γ exit.
    #[test]
    fn slow_start_exits_when_diff_exceeds_gamma() {
        for (label, ss, diff, cwnd, ssthresh) in [
            ("linux", VegasSlowStart::Linux, 11.0 / 3.0, 8.0, 8.0),
            ("brakmo", VegasSlowStart::Brakmo, 8.0 / 3.0, 6.0, 6.0),
            ("thesis", VegasSlowStart::Thesis, 8.0 / 3.0, 9.0, 1000.0),
        ] {
            let mut v = Vegas { slow_start: ss, ..Vegas::thesis() };
            let mut st = CcState::new(6.0, 1000.0, 1460);
            round(&mut v, &mut st, 0, 100 * MS, 3);
            round(&mut v, &mut st, 0, 150 * MS, 3);
            assert!((v.diff() - diff).abs() < 1e-9, "{label}: diff {}", v.diff());
            assert_eq!((st.cwnd, st.ssthresh), (cwnd, ssthresh), "{label}");
        }
    }

    #[test]
    fn loss_is_renos_and_restarts_the_round() {
        let mut v = Vegas::thesis();
        let st = CcState::new(20.0, 10.0, 1460);
        let loss = |flight| LossSignal { kind: LossKind::DupAcks, now: 0, flight_size: flight };
        assert_eq!(v.ssthresh_after(&st, &loss(20)), 10.0);
        assert_eq!(v.ssthresh_after(&st, &loss(3)), 2.0);
        // Two samples before recovery do not count towards the next round after it.
        let mut st = CcState::new(10.0, 5.0, 1460);
        v.on_ack(&mut st, &ack(0, Some(100 * MS), false));
        v.on_ack(&mut st, &ack(0, Some(100 * MS), false));
        v.on_phase(&mut st, Phase::Recovery, Phase::Open);
        v.on_ack(&mut st, &ack(0, Some(300 * MS), true));
        assert_eq!(st.cwnd, 11.0, "one sample: Reno's round, no decision");
        assert_eq!(v.base_rtt(), 100 * MS, "baseRTT survives recovery");
    }

    /// Hasegawa (2000) §5.3.1 (resolution hasegawa:A36), period 100 ms: samples 50 ms at t = 10 ms
    /// (period starts), 80 ms at 60 ms, 90 ms at 120 ms (boundary at 110 ms: base = min of [10,
    /// 110) = 50, then min(50, 90) = 50), 85 ms at 150 ms, 95 ms at 215 ms (boundary 210: base =
    /// min of [110, 210) = 85), 120 ms at 330 ms (boundary 310: base = 95). With `last_sample` each
    /// boundary sets base to the sample that crosses it (90, 95, 120), and smaller samples in
    /// between still lower it (85).
    #[test]
    fn base_rtt_refresh_takes_the_last_period_minimum() {
        let samples = [(10, 50), (60, 80), (120, 90), (150, 85), (215, 95), (330, 120)];
        let cases = [
            ("no refresh: min ever", None, RefreshTo::IntervalMin, [50, 50, 50, 50, 50, 50]),
            ("interval_min", Some(100 * MS), RefreshTo::IntervalMin, [50, 50, 50, 50, 85, 95]),
            ("last_sample", Some(100 * MS), RefreshTo::LastSample, [50, 50, 90, 85, 95, 120]),
        ];
        for (label, refresh, to, expected) in cases {
            let mut v = Vegas { refresh, refresh_to: to, ..Vegas::thesis() };
            let mut st = CcState::new(10.0, 5.0, 1460);
            for (i, (t, rtt)) in samples.iter().enumerate() {
                v.on_ack(&mut st, &ack(t * MS, Some(rtt * MS), false));
                assert_eq!(v.base_rtt(), expected[i] * MS, "{label}: after sample {i}");
            }
        }
    }

    #[test]
    fn metrics_name_base_rtt_and_diff() {
        let mut v = Vegas::thesis();
        let mut st = CcState::new(10.0, 5.0, 1460);
        round(&mut v, &mut st, 0, 100 * MS, 3);
        round(&mut v, &mut st, 0, 200 * MS, 3);
        let mut m = Vec::new();
        v.metrics(&mut |k, x| m.push((k, x)));
        assert_eq!(m[0], ("vegas_base_rtt_s", 0.1));
        assert_eq!(m[1], ("vegas_rtt_s", 0.2));
        assert_eq!(m[2], ("vegas_diff", 5.5), "cwnd 11 · (1 − 100/200)");
    }
}
