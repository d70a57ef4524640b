//! FAST TCP (Jin, Wei, Low, "FAST TCP: motivation, architecture, algorithms, performance",
//! INFOCOM 2004; Wei, Jin, Low, Hegde, IEEE/ACM ToN 14(6), 2006) and FAST with α-tuning
//! (FAST-AT, the variant Mills et al. (2010) compare).
//!
//! FAST steers every flow towards α segments queued in the network. With baseRTT the smallest
//! RTT seen and avgRTT an average of the RTT samples, at most once per `update_period` and (by
//! default) every other round:
//!
//! ```text
//! w ← min{ 2w, (1 − γ)·w + γ·(baseRTT/avgRTT · w_sent + α) }
//! ```
//!
//! where w_sent is the window of the round whose ACKs are arriving (ns-2's `old_cwnd`: the
//! packets in flight when the acknowledged segment was sent). In equilibrium
//! w·(1 − baseRTT/avgRTT) = α. Rules follow the Melbourne ns-2 module (v1.1.3, Cui and Andrew)
//! that the FAST papers' simulations used:
//!
//! - avgRTT is an EWMA of per-ACK samples with weight min(1/256, 3/w) (`avg_weight = "ns2"`;
//!   ToN gives min(3/w, 1/4), `"ton"`); ACKs under Karn's rule bring no sample.
//! - `slow_start = "mi"` (default): while avgRTT − baseRTT < `mi_threshold` (0.75 ms) the
//!   window grows by one segment per ACK ("multiplicative increase"), at any time, ssthresh or
//!   not. `"standard"`: the shared slow start below ssthresh and no MI mode, as Mills et al. (2010)
//!   run every algorithm (limited slow start until the first loss).
//! - An update that raises the window is paced: the whole-segment increase is spread over the
//!   ACKs of the next `update_period` (ns-2 `fast_pace`; a window of 4 or less takes it at once,
//!   at most doubling). Decreases apply at once. Pacing is skipped, as in ns-2, when baseRTT
//!   is below 4 ms. The window never falls below 2.
//! - `beta` gates updates: the window changes only when w·q < α·avgRTT or w·q ≥ β·avgRTT
//!   (q = avgRTT − baseRTT). β = α (the default) always updates.
//! - Loss: halve the window (ns-2 `slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_HALF)`), so
//!   ssthresh = max(cwnd/2, 2) from the window, not from FlightSize; recovery is the sender's.
//!   No window update happens during recovery, and the first one after it waits a full
//!   `update_period`.
//!
//! FAST-AT (`alpha_tuning`). Nothing public defines it (resolution nist:A14): the
//! chapter of NIST SP 500-282 that would is not available, and the ns-2 module's
//! `alpha_tuning_` is declared but never used. Two labelled assumptions are offered:
//!
//! - `"rate"` (the default of `fast_at`): at every update α is chosen from the achieved rate
//!   x = w·MSS·8/avgRTT: 8 segments below 10 Mbit/s, 20 below 100 Mbit/s, the configured α
//!   above (the Caltech prototype's tiers as recalled; each tier capped at the configured α, so
//!   FAST-AT equals FAST on an uncongested fast path). Congestion lowers x and so α, and the
//!   flow re-ramps less forcefully, which is what NIST reports.
//! - `"loss"`: α ← max(`alpha_min`, α/2) at each loss, α ← min(configured α, α + 1) at each
//!   loss-free update.
//!
//! Differences from ns-2: w_sent is the number of segments in flight at the start of the
//! current round, taken once per round instead of stored per segment; rounds are counted in
//! ACKs (a round ends when the segment that was highest when it began is acknowledged) instead
//! of elapsed avgRTT; the window is a real number (ns-2 `high_accuracy_cwnd_ 2`); ns-2's
//! fine-grained 2·avgRTT retransmission of the oldest segment is not modelled. After a timeout
//! the sender restarts from its loss window, ns-2 FAST from 2.

use super::{in_slow_start, slow_start, AckSample, CcState, CongestionControl, LossSignal, Phase};
use crate::units::{Dur, Time, NS_PER_SEC};
use serde::{Deserialize, Serialize};

/// How FAST leaves its initial window behind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FastSlowStart {
    /// One segment per ACK whenever the queueing delay is below `mi_threshold` (ns-2).
    #[default]
    Mi,
    /// The shared slow start below ssthresh (RFC 5681, or RFC 3742 if configured); no MI mode.
    Standard,
}

/// Weight of a new RTT sample in avgRTT.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AvgWeight {
    /// min(1/256, 3/w), the ns-2 module.
    #[default]
    Ns2,
    /// min(3/w, 1/4), ToN 2006.
    Ton,
}

/// How α changes over time (FAST-AT); see the module documentation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlphaTuning {
    /// Fixed α: FAST.
    #[default]
    None,
    /// α from the achieved rate: 8 / 20 / α segments below 10 / 100 / above 100 Mbit/s.
    Rate,
    /// α halves on a loss (not below `alpha_min`) and grows by 1 per loss-free update.
    Loss,
}

/// Rate tiers of `AlphaTuning::Rate`: (upper bound in bit/s, α in segments).
pub const RATE_TIERS: [(f64, f64); 2] = [(10e6, 8.0), (100e6, 20.0)];
/// Smallest window FAST sets.
const MIN_CWND: f64 = 2.0;
/// ns-2 paces increases only when baseRTT is at least this long.
const PACE_MIN_BASE_RTT: Time = 4_000_000;
/// ns-2 increments a window of this size or less at once.
const PACE_SMALL_CWND: f64 = 4.0;

/// FAST and FAST-AT parameters (validated by `CcConfig`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct FastParams {
    /// Target segments queued per flow (ns-2 `alpha_` 100; Caltech used 200 at Gbit/s).
    pub alpha: f64,
    /// Upper edge of the no-update band, segments (`None`: equal to α, always update).
    pub beta: Option<f64>,
    /// Step size γ in (0, 1] (0.5).
    pub gamma: f64,
    /// Shortest time between window updates (ns-2 10 ms).
    pub update_period: Dur,
    /// Update every other round (ns-2 v1.1.3 and the Linux prototype) or every round.
    pub every_other_rtt: bool,
    /// Spread increases over the next update period.
    pub pace: bool,
    /// Queueing delay below which MI mode grows one segment per ACK (ns-2 0.75 ms).
    pub mi_threshold: Dur,
    /// `mi` or `standard`.
    pub slow_start: FastSlowStart,
    /// avgRTT weight rule.
    pub avg_weight: AvgWeight,
    /// FAST-AT rule (`none` for FAST).
    pub alpha_tuning: AlphaTuning,
    /// Floor of α under `alpha_tuning = "loss"`, segments (8).
    pub alpha_min: f64,
}

impl FastParams {
    /// FAST with the ns-2 module's defaults.
    pub fn fast() -> Self {
        FastParams {
            alpha: 100.0,
            beta: None,
            gamma: 0.5,
            update_period: Dur::from_millis(10),
            every_other_rtt: true,
            pace: true,
            mi_threshold: Dur(750_000),
            slow_start: FastSlowStart::Mi,
            avg_weight: AvgWeight::Ns2,
            alpha_tuning: AlphaTuning::None,
            alpha_min: 8.0,
        }
    }

    /// FAST-AT: FAST with the rate-tiered α of the module documentation.
    pub fn fast_at() -> Self {
        FastParams { alpha_tuning: AlphaTuning::Rate, ..FastParams::fast() }
    }
}

/// FAST state.
#[derive(Clone, Copy, Debug)]
pub struct Fast {
    p: FastParams,
    /// α in use, segments (differs from `p.alpha` only under α-tuning).
    alpha: f64,
    /// Smallest RTT seen, ns (`u64::MAX` before the first sample).
    base_rtt: Time,
    /// Average RTT, ns (0 before the first sample).
    avg_rtt: f64,
    /// Segments in flight when the current round began.
    w_sent: f64,
    /// This round may update the window (toggles each round under `every_other_rtt`).
    update_round: bool,
    /// Time of the last update, or of leaving recovery; `None` = take the next ACK's time.
    last_update: Option<Time>,
    /// ACKs in the current and in the last round (for pacing).
    acks_round: u32,
    acks_last_round: u32,
    /// Paced whole-segment increments still to apply.
    pending: u32,
    /// ACKs between paced increments, and ACKs since the last one.
    spacing: u32,
    since_inc: u32,
    /// A loss since the last update (for `alpha_tuning = "loss"`).
    lost: bool,
}

impl Fast {
    /// A fresh instance.
    pub fn new(p: FastParams) -> Self {
        Fast {
            p,
            alpha: p.alpha,
            base_rtt: u64::MAX,
            avg_rtt: 0.0,
            w_sent: 0.0,
            update_round: false,
            last_update: None,
            acks_round: 0,
            acks_last_round: 0,
            pending: 0,
            spacing: 0,
            since_inc: 0,
            lost: false,
        }
    }

    /// α in use, segments.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Average RTT, ns (0 before the first sample).
    pub fn avg_rtt(&self) -> f64 {
        self.avg_rtt
    }

    /// The window an update moves towards, before the 2w cap:
    /// (1 − γ)·w + γ·(baseRTT/avgRTT·w_sent + α).
    pub fn target(&self, w: f64, w_sent: f64) -> f64 {
        let g = self.p.gamma;
        (1.0 - g) * w + g * (self.base_rtt as f64 / self.avg_rtt * w_sent + self.alpha)
    }

    /// The own queue estimate w·(1 − baseRTT/avgRTT), segments (NaN before a sample).
    pub fn queued(&self, w: f64) -> f64 {
        if self.avg_rtt > 0.0 {
            w * (1.0 - self.base_rtt as f64 / self.avg_rtt)
        } else {
            f64::NAN
        }
    }

    fn sample(&mut self, rtt: Time, w: f64) {
        self.base_rtt = self.base_rtt.min(rtt);
        let r = rtt as f64;
        if self.avg_rtt == 0.0 {
            self.avg_rtt = r;
            return;
        }
        let weight = match self.p.avg_weight {
            AvgWeight::Ns2 => (3.0 / w).min(1.0 / 256.0),
            AvgWeight::Ton => (3.0 / w).min(0.25),
        };
        self.avg_rtt += weight * (r - self.avg_rtt);
    }

    /// Re-evaluate α before an update (FAST-AT).
    fn tune_alpha(&mut self, st: &CcState) {
        match self.p.alpha_tuning {
            AlphaTuning::None => {}
            AlphaTuning::Rate => {
                let rate = st.cwnd * f64::from(st.mss) * 8.0 * NS_PER_SEC as f64 / self.avg_rtt;
                self.alpha = RATE_TIERS.iter().find(|(below, _)| rate < *below).map_or(self.p.alpha, |t| t.1);
                self.alpha = self.alpha.min(self.p.alpha);
            }
            AlphaTuning::Loss => {
                if !self.lost {
                    self.alpha = (self.alpha + 1.0).min(self.p.alpha);
                }
            }
        }
        self.lost = false;
    }

    /// One update: move towards the target, pacing increases.
    fn update(&mut self, st: &mut CcState) {
        self.tune_alpha(st);
        let q = self.avg_rtt - self.base_rtt as f64;
        let wq = self.w_sent * q;
        let beta = self.p.beta.unwrap_or(self.alpha).max(self.alpha);
        if wq >= self.alpha * self.avg_rtt && wq < beta * self.avg_rtt {
            return; // inside the no-update band
        }
        let target = self.target(st.cwnd, self.w_sent).min(2.0 * st.cwnd).max(MIN_CWND);
        self.pending = 0;
        if target >= st.cwnd && self.p.pace && self.base_rtt >= PACE_MIN_BASE_RTT {
            self.pending = (target - st.cwnd) as u32;
            if self.pending > 0 {
                let period = self.p.update_period.0 as f64;
                let acks_per_period = f64::from(self.acks_last_round) * period / self.avg_rtt;
                self.spacing = (acks_per_period / f64::from(self.pending)) as u32;
                self.since_inc = 0;
            }
        } else {
            st.cwnd = target;
        }
    }

    /// One ACK's worth of a paced increase.
    fn pace_step(&mut self, st: &mut CcState) {
        if self.pending == 0 {
            return;
        }
        self.since_inc += 1;
        if st.cwnd <= PACE_SMALL_CWND {
            let step = f64::from(self.pending).min(st.cwnd.floor());
            st.cwnd += step;
            self.pending -= step as u32;
            self.since_inc = 0;
        } else if self.since_inc >= self.spacing {
            st.cwnd += 1.0;
            self.pending -= 1;
            self.since_inc = 0;
        }
    }
}

impl CongestionControl for Fast {
    fn name(&self) -> &'static str {
        if self.p.alpha_tuning == AlphaTuning::None {
            "fast"
        } else {
            "fast_at"
        }
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &AckSample) {
        if let Some(r) = ack.rtt {
            self.sample(r, st.cwnd);
        }
        if ack.round_start || self.w_sent == 0.0 {
            self.w_sent = (st.in_flight + ack.newly_acked) as f64;
            self.acks_last_round = self.acks_round;
            self.acks_round = 0;
            self.update_round = !self.p.every_other_rtt || !self.update_round;
        }
        self.acks_round += 1;
        let now = ack.now;
        let last = *self.last_update.get_or_insert(now);
        match self.p.slow_start {
            FastSlowStart::Standard if in_slow_start(st) => {
                slow_start(st);
                self.last_update = Some(now);
                return;
            }
            FastSlowStart::Mi
                if self.avg_rtt == 0.0 || self.avg_rtt - (self.base_rtt as f64) < self.p.mi_threshold.0 as f64 =>
            {
                slow_start(st);
                self.last_update = Some(now);
                return;
            }
            _ => {}
        }
        if self.avg_rtt > 0.0 && now >= last + self.p.update_period.0 && self.update_round {
            self.update(st);
            self.last_update = Some(now);
        }
        self.pace_step(st);
    }

    fn ssthresh_after(&mut self, st: &CcState, _loss: &LossSignal) -> f64 {
        self.pending = 0;
        self.lost = true;
        if self.p.alpha_tuning == AlphaTuning::Loss {
            self.alpha = (self.alpha / 2.0).max(self.p.alpha_min);
        }
        (st.cwnd / 2.0).max(MIN_CWND)
    }

    fn on_phase(&mut self, _st: &mut CcState, _from: Phase, to: Phase) {
        if to == Phase::Open {
            self.last_update = None; // the next update waits a full period after recovery
        }
    }

    fn metrics(&self, out: &mut dyn FnMut(&'static str, f64)) {
        let base = if self.base_rtt == u64::MAX { f64::NAN } else { self.base_rtt as f64 / NS_PER_SEC as f64 };
        out("fast_base_rtt_s", base);
        out("fast_avg_rtt_s", if self.avg_rtt > 0.0 { self.avg_rtt / NS_PER_SEC as f64 } else { f64::NAN });
        out("fast_alpha", self.alpha);
        out("fast_queued", self.queued(self.w_sent));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::{ack, loss};

    const MS: Time = 1_000_000;

    fn at(now: Time, rtt: Time, round_start: bool) -> AckSample {
        AckSample { now, rtt: Some(rtt), round_start, ..ack() }
    }

    /// The update rule of Jin, Wei and Low (2004): w = 1000, baseRTT 100 ms, avgRTT 120 ms,
    /// α = 200, γ = 0.5: target 833.3 + 200 = 1033.3, new w 1016.7; equilibrium 1200 at that RTT.
    #[test]
    fn worked_example() {
        let mut f = Fast::new(FastParams { alpha: 200.0, ..FastParams::fast() });
        f.base_rtt = 100 * MS;
        f.avg_rtt = (120 * MS) as f64;
        assert!((f.target(1000.0, 1000.0) - 1016.667).abs() < 1e-3);
        assert!((f.target(1200.0, 1200.0) - 1200.0).abs() < 1e-9, "1200 is the fixed point");
        assert!((f.queued(1200.0) - 200.0).abs() < 1e-9);
        // no queueing: +γα = 100 per update
        f.avg_rtt = (100 * MS) as f64;
        assert!((f.target(1000.0, 1000.0) - 1100.0).abs() < 1e-9);
    }

    #[test]
    fn avg_rtt_weights() {
        let mut ns2 = Fast::new(FastParams::fast());
        ns2.sample(100 * MS, 30.0);
        ns2.sample(200 * MS, 30.0); // min(1/256, 3/30) = 1/256
        assert!((ns2.avg_rtt - (100.0 + 100.0 / 256.0) * MS as f64).abs() < 1.0);
        let mut big = Fast::new(FastParams::fast());
        big.sample(100 * MS, 3000.0);
        big.sample(200 * MS, 3000.0); // min(1/256, 3/3000) = 1/1000
        assert!((big.avg_rtt - 100.1 * MS as f64).abs() < 1.0);
        let mut ton = Fast::new(FastParams { avg_weight: AvgWeight::Ton, ..FastParams::fast() });
        ton.sample(100 * MS, 30.0);
        ton.sample(200 * MS, 30.0); // min(3/30, 1/4) = 1/10
        assert!((ton.avg_rtt - 110.0 * MS as f64).abs() < 1.0);
        assert_eq!(ton.base_rtt, 100 * MS);
    }

    #[test]
    fn mi_mode_grows_per_ack_until_queueing_delay_appears() {
        let mut f = Fast::new(FastParams::fast());
        let mut st = CcState::new(2.0, f64::INFINITY, 1460);
        for i in 0..10 {
            f.on_ack(&mut st, &at(i * MS, 40 * MS, false));
        }
        assert_eq!(st.cwnd, 12.0, "one segment per ACK while q < 0.75 ms");
        // MI ignores ssthresh (ns-2): still +1 with cwnd above it
        st.ssthresh = 5.0;
        f.on_ack(&mut st, &at(11 * MS, 40 * MS, false));
        assert_eq!(st.cwnd, 13.0);
        // a large queueing delay: avgRTT moves by 1/256 of (1 s − 40 ms) = 3.75 ms > 0.75 ms
        f.on_ack(&mut st, &at(12 * MS, 1000 * MS, false));
        assert_eq!(st.cwnd, 13.0, "no MI once avgRTT − baseRTT ≥ mi_threshold");
    }

    #[test]
    fn standard_slow_start_stops_at_ssthresh() {
        let mut f = Fast::new(FastParams { slow_start: FastSlowStart::Standard, ..FastParams::fast() });
        let mut st = CcState::new(2.0, 4.0, 1460);
        for i in 0..5 {
            f.on_ack(&mut st, &at(i * MS, 40 * MS, false));
        }
        assert_eq!(st.cwnd, 4.0, "slow start to ssthresh, then no per-ACK growth without an update");
    }

    /// Feed `rounds` rounds of `n` ACKs 1 ms apart with RTT 40 ms and no queueing; the window at
    /// the end of each round.
    fn drive(f: &mut Fast, st: &mut CcState, rounds: usize, n: u64) -> Vec<f64> {
        let mut now = 0;
        (0..rounds)
            .map(|_| {
                for i in 0..n {
                    f.on_ack(st, &at(now, 40 * MS, i == 0));
                    now += MS;
                }
                st.cwnd
            })
            .collect()
    }

    fn ca(p: FastParams) -> (Fast, CcState) {
        let mut st = CcState::new(40.0, 10.0, 1460);
        st.in_flight = 39; // + the ACK's segment: 40 sent in the round
        (Fast::new(FastParams { alpha: 20.0, slow_start: FastSlowStart::Standard, ..p }), st)
    }

    /// Updates only in every other round, each towards w_sent·baseRTT/avgRTT + α = 60.
    #[test]
    fn updates_every_other_round() {
        let (mut f, mut st) = ca(FastParams::fast());
        let w = drive(&mut f, &mut st, 6, 40);
        assert!(w[0] > 50.0 && w[0] < 60.0, "{w:?}");
        for r in [1, 3, 5] {
            assert_eq!(w[r], w[r - 1], "round {r} does not update: {w:?}");
        }
        assert!(w[2] > w[1] && w.iter().all(|&x| x <= 60.0), "{w:?}");
    }

    /// Without pacing and with a 100 ms period, 40 ms rounds update at 100 ms and 200 ms only,
    /// each by γ·(60 − w).
    #[test]
    fn updates_respect_the_period() {
        let p = FastParams {
            update_period: Dur::from_millis(100),
            every_other_rtt: false,
            pace: false,
            ..FastParams::fast()
        };
        let (mut f, mut st) = ca(p);
        let w = drive(&mut f, &mut st, 6, 40);
        assert_eq!(w, [40.0, 40.0, 50.0, 50.0, 50.0, 55.0]);
    }

    /// An increase is spread over the ACKs of one update period (10 of the 40 per round).
    #[test]
    fn increases_are_paced() {
        let p = FastParams { update_period: Dur::from_millis(10), every_other_rtt: false, ..FastParams::fast() };
        let (mut f, mut st) = ca(p);
        f.acks_last_round = 40;
        f.base_rtt = 40 * MS;
        f.avg_rtt = (40 * MS) as f64;
        f.w_sent = 40.0;
        f.update(&mut st); // target 50: 10 increments, one every 1 ACK of the 10 per period
        assert_eq!((f.pending, f.spacing, st.cwnd), (10, 1, 40.0));
        // 4 increments over 12 ACKs: one every third ACK
        (f.pending, f.spacing, f.since_inc) = (4, 3, 0);
        let seen: Vec<f64> = (0..13)
            .map(|_| {
                f.pace_step(&mut st);
                st.cwnd
            })
            .collect();
        assert_eq!(seen, [40.0, 40.0, 41.0, 41.0, 41.0, 42.0, 42.0, 42.0, 43.0, 43.0, 43.0, 44.0, 44.0]);
    }

    #[test]
    fn loss_halves_the_window_and_clears_pacing() {
        let mut f = Fast::new(FastParams::fast());
        f.pending = 7;
        let st = CcState::new(100.0, f64::INFINITY, 1460);
        assert_eq!(f.ssthresh_after(&st, &loss(60)), 50.0, "from cwnd, not FlightSize");
        assert_eq!(f.pending, 0);
        let small = CcState::new(3.0, f64::INFINITY, 1460);
        assert_eq!(f.ssthresh_after(&small, &loss(3)), 2.0);
    }

    #[test]
    fn rate_tuned_alpha_follows_the_tiers() {
        let mut f = Fast::new(FastParams::fast_at());
        f.base_rtt = 100 * MS;
        f.avg_rtt = (100 * MS) as f64;
        // x = w·1500·8/0.1 s: 50 → 6 Mbit/s, 500 → 60 Mbit/s, 5000 → 600 Mbit/s
        for (w, alpha) in [(50.0, 8.0), (500.0, 20.0), (5000.0, 100.0)] {
            let st = CcState::new(w, 1.0, 1500);
            f.tune_alpha(&st);
            assert_eq!(f.alpha(), alpha, "w {w}");
        }
        // a tier never exceeds the configured α
        let mut low = Fast::new(FastParams { alpha: 10.0, ..FastParams::fast_at() });
        low.avg_rtt = (100 * MS) as f64;
        low.tune_alpha(&CcState::new(500.0, 1.0, 1500));
        assert_eq!(low.alpha(), 10.0);
    }

    #[test]
    fn loss_tuned_alpha_halves_and_recovers() {
        let mut f = Fast::new(FastParams { alpha_tuning: AlphaTuning::Loss, ..FastParams::fast() });
        let st = CcState::new(100.0, 1.0, 1460);
        for expected in [50.0, 25.0, 12.5, 8.0, 8.0] {
            f.ssthresh_after(&st, &loss(100));
            assert_eq!(f.alpha(), expected);
        }
        f.tune_alpha(&st); // the update right after a loss does not grow α
        assert_eq!(f.alpha(), 8.0);
        f.tune_alpha(&st);
        assert_eq!(f.alpha(), 9.0);
    }

    #[test]
    fn beta_band_holds_the_window() {
        let p = FastParams { alpha: 10.0, beta: Some(30.0), every_other_rtt: false, pace: false, ..FastParams::fast() };
        let mut f = Fast::new(p);
        f.base_rtt = 100 * MS;
        f.avg_rtt = (120 * MS) as f64;
        f.w_sent = 100.0; // queued 100·20/120 = 16.7, inside [10, 30)
        let mut st = CcState::new(100.0, 1.0, 1460);
        f.update(&mut st);
        assert_eq!(st.cwnd, 100.0);
        f.w_sent = 300.0; // 50 queued: above β, move
        f.update(&mut st);
        // 0.5·100 + 0.5·(100/120·300 + 10) = 180, unpaced
        assert!((st.cwnd - 180.0).abs() < 1e-9, "{}", st.cwnd);
    }
}
