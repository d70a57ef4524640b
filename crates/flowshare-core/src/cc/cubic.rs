//! CUBIC (RFC 9438; Ha, Rhee, Xu, "CUBIC: a new TCP-friendly high-speed TCP variant", SIGOPS
//! OSR 42(5), 2008): the window follows W_cubic(t) = C·(t − K)³ + W_max, a cubic of the time
//! since the last reduction with its plateau at the window of the last loss, K seconds later.
//!
//! Two variants:
//!
//! - `rfc` (default): RFC 9438 §4 with C = 0.4, β_cubic = 0.7, fast convergence and the
//!   Reno-friendly region. An epoch starts at the first ACK in congestion avoidance after a
//!   reduction: K = ∛((W_max − cwnd_epoch)/C) (negative when cwnd_epoch > W_max: the curve is
//!   then convex from the start); per ACK cwnd += (target − cwnd)/cwnd with target =
//!   W_cubic(t + SRTT) clamped to [cwnd, 1.5·cwnd]; W_est += α·acked/cwnd with α = 3(1 − β)/(1 +
//!   β), 1 once W_est ≥ cwnd_prior, and cwnd = W_est while W_cubic(t) < W_est. Without an
//!   earlier loss, and after a timeout, the epoch starts with W_max = cwnd and K = 0 (§4.8,
//!   §4.10). Slow start is Reno's (§4.10 allows it; HyStart++ is not implemented) unless
//!   `hystart` is on (below).
//!
//! HyStart (S. Ha, I. Rhee, "Taming the elephants: New TCP slow start", Computer Networks
//! 55(9), 2011; Linux `tcp_cubic.c` from 2.6.29 to 5.5) is an option of both variants, off by
//! default here (Linux turns it on by default). In slow start, from cwnd ≥ `hystart_low_window`
//! (16), it ends slow start (ssthresh = cwnd) when either detector fires in a round (a round
//! starts at the first ACK beyond the `snd_nxt` of the previous round's start):
//! - ACK train: ACKs arrive at most `hystart_ack_delta` (2 ms) apart, and the train has lasted
//!   more than half the min RTT since the round started;
//! - delay increase: the smallest of the round's first 8 RTT samples exceeds the min RTT by
//!   more than clamp(min RTT / 8, 4 ms, 16 ms).
//!
//! A timeout re-arms it (Linux's `bictcp_reset` on TCP_CA_Loss). Times are in nanoseconds, not
//! Linux's milliseconds (`bictcp_clock`, before 5.6), and the min RTT is the sender's.
//! - `ns2`: ns-2.35 TCP-Linux `cubic`, i.e. Linux 2.6.22's CUBIC v2.1: β = 819/1024, no
//!   HyStart, the target taken at t + min RTT, at most `16 segments per 100 ms of min RTT` once
//!   t ≥ K, +cwnd/50 per RTT (cnt = 50) in congestion avoidance before the first loss, a Reno
//!   estimate that limits cnt (cnt ≤ cwnd/(W_est − cwnd)) rather than replacing cwnd, and a
//!   full reset of W_max after a timeout (`bictcp_state` on TCP_CA_Loss).
//!
//! Differences: the decrease and W_max apply to FlightSize (RFC 5681's convention, used by
//! every algorithm here; RFC 9438 also reduces ssthresh from flight_size but sets W_max and
//! cwnd_prior from cwnd, Linux uses cwnd for all three); they are equal while the flow is
//! window-limited. Time and K are real numbers, not Linux's 1/1024 s fixed point, and C = 0.4
//! exactly (Linux `bic_scale` 41 gives 0.4004). The `ns2` Reno estimate grows at the ideal
//! 3(1 − β)/(1 + β) = 1/3 segment per RTT where Linux's integer `beta_scale` gives 8/23 ≈ 0.348.
//! `ns2` divides cnt by 2.6.22's packets-per-ACK estimate ([`super::bic::AckRatio`], 31/16
//! with one ACK per segment). Other 2.6.22 details not reproduced by `ns2`: one increment per
//! cnt + 1 ACKs, and a min RTT taken from timestamps and only outside the first second of an
//! epoch; here the sender's min RTT is used. ns-3.37's
//! `TcpCubic` has no Reno-friendly region; `tcp_friendliness = false` gives that.

use super::bic::AckRatio;
use super::{in_slow_start, slow_start, AckSample, CcState, CongestionControl, LossKind, LossSignal};
use crate::units::{Dur, Time, NS_PER_SEC};
use serde::{Deserialize, Serialize};

/// RFC 9438 or ns-2.35 TCP-Linux.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CubicVariant {
    /// RFC 9438.
    #[default]
    Rfc,
    /// ns-2.35 TCP-Linux `cubic` (Linux 2.6.22, CUBIC v2.1).
    Ns2,
}

/// ns-2 (Linux 2.6.22) `beta`: 819/1024 of the window is kept on a loss.
pub const NS2_BETA: f64 = 819.0 / 1024.0;
/// ns-2: cnt in congestion avoidance before the first loss (+2 % per RTT).
const NS2_NO_LOSS_CNT: f64 = 50.0;
/// ns-2 `max_increment`: at most this many segments per 100 ms of min RTT once t ≥ K.
const NS2_MAX_INCREMENT_PER_100MS: f64 = 16.0;
/// ns-2: cnt when the target is at or below cwnd ("very small increment", per cwnd).
const NS2_IDLE_CNT: f64 = 100.0;
/// RFC 9438 §4.4: the target is at most 1.5·cwnd.
const MAX_TARGET_RATIO: f64 = 1.5;

/// Which HyStart detectors run (Linux `hystart_detect`: 1, 2 or 3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HystartDetect {
    /// ACK train and delay increase (3).
    #[default]
    Both,
    /// ACK train only (1).
    AckTrain,
    /// Delay increase only (2).
    Delay,
}

/// HyStart: RTT samples per round before the delay test (`HYSTART_MIN_SAMPLES`).
pub const HYSTART_MIN_SAMPLES: u32 = 8;
/// HyStart: the delay threshold is min RTT / 8 clamped to 4–16 ms (`HYSTART_DELAY_MIN/MAX`).
pub const HYSTART_DELAY_MIN: Time = 4_000_000;
/// See [`HYSTART_DELAY_MIN`].
pub const HYSTART_DELAY_MAX: Time = 16_000_000;

/// CUBIC parameters (validated by `CcConfig`).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
pub struct CubicParams {
    /// Rule set.
    pub variant: CubicVariant,
    /// C, segments/s³ (0.4 in both).
    pub c: f64,
    /// β_cubic: fraction of the window kept on a loss (RFC 0.7, ns-2 819/1024).
    pub beta: f64,
    /// A loss below W_max sets W_max = cwnd·(1 + β)/2.
    pub fast_convergence: bool,
    /// The Reno-friendly region (Linux `tcp_friendliness`).
    pub tcp_friendliness: bool,
    /// HyStart in slow start (off by default here; on by default in Linux).
    #[serde(default)]
    pub hystart: bool,
    /// HyStart's detectors.
    #[serde(default)]
    pub hystart_detect: HystartDetect,
    /// HyStart acts from this window on, segments (16).
    #[serde(default = "low_window")]
    pub hystart_low_window: f64,
    /// Largest gap between ACKs of a train (2 ms).
    #[serde(default = "ack_delta")]
    pub hystart_ack_delta: Dur,
}

fn low_window() -> f64 {
    16.0
}
/// The normalized form: HyStart's options are written only when HyStart is on (then all of
/// them, defaults included), so that a scenario without HyStart normalizes as it always has.
impl Serialize for CubicParams {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("variant", &self.variant)?;
        m.serialize_entry("c", &self.c)?;
        m.serialize_entry("beta", &self.beta)?;
        m.serialize_entry("fast_convergence", &self.fast_convergence)?;
        m.serialize_entry("tcp_friendliness", &self.tcp_friendliness)?;
        if self.hystart {
            m.serialize_entry("hystart", &true)?;
            m.serialize_entry("hystart_detect", &self.hystart_detect)?;
            m.serialize_entry("hystart_low_window", &self.hystart_low_window)?;
            m.serialize_entry("hystart_ack_delta", &self.hystart_ack_delta)?;
        }
        m.end()
    }
}

fn ack_delta() -> Dur {
    Dur::from_millis(2)
}

impl CubicParams {
    /// The defaults of a variant.
    pub fn defaults(variant: CubicVariant) -> Self {
        let beta = match variant {
            CubicVariant::Rfc => 0.7,
            CubicVariant::Ns2 => NS2_BETA,
        };
        CubicParams {
            variant,
            c: 0.4,
            beta,
            fast_convergence: true,
            tcp_friendliness: true,
            hystart: false,
            hystart_detect: HystartDetect::Both,
            hystart_low_window: low_window(),
            hystart_ack_delta: ack_delta(),
        }
    }
}

impl Default for CubicParams {
    fn default() -> Self {
        CubicParams::defaults(CubicVariant::default())
    }
}

/// CUBIC state: everything needed to resume the curve, in one copyable struct.
#[derive(Clone, Copy, Debug)]
pub struct Cubic {
    p: CubicParams,
    /// Window at the last loss (after fast convergence); 0 = none yet or reset by a timeout.
    w_max: f64,
    /// Window before the last reduction (RFC 9438 cwnd_prior).
    cwnd_prior: f64,
    /// Seconds from the epoch start to the plateau.
    k: f64,
    /// Start of the current congestion-avoidance epoch; `None` until its first ACK.
    t_epoch: Option<Time>,
    /// Reno-friendly estimate, segments.
    w_est: f64,
    /// A loss has happened (ns-2 `loss_cwnd != 0`).
    lost: bool,
    /// The last reduction was a retransmission timeout.
    after_timeout: bool,
    /// `ns2`: packets per ACK.
    ack_ratio: AckRatio,
    /// HyStart's state.
    hy: Hystart,
}

/// HyStart's per-round state (Linux's `bictcp` fields of the same names).
#[derive(Clone, Copy, Debug, Default)]
pub struct Hystart {
    /// Slow start was ended by a detector (`found`).
    pub found: bool,
    /// A round has started (the state is set up).
    started: bool,
    /// Start of the current round and time of the last ACK of the train.
    round_start: Time,
    last_ack: Time,
    /// The round ends with the first ACK beyond this segment (`end_seq`).
    end_seq: u64,
    /// Smallest RTT sample of the round so far (`curr_rtt`, `u64::MAX` before one).
    curr_rtt: Time,
    /// RTT samples of the round so far.
    sample_cnt: u32,
}

impl Cubic {
    /// A fresh instance.
    pub fn new(p: CubicParams) -> Self {
        Cubic {
            p,
            w_max: 0.0,
            cwnd_prior: 0.0,
            k: 0.0,
            t_epoch: None,
            w_est: 0.0,
            lost: false,
            after_timeout: false,
            ack_ratio: AckRatio::default(),
            hy: Hystart::default(),
        }
    }

    /// HyStart's state.
    pub fn hystart(&self) -> &Hystart {
        &self.hy
    }

    /// A new HyStart round at `now` (`bictcp_hystart_reset`).
    fn hystart_reset(&mut self, now: Time, snd_nxt: u64) {
        let hy = &mut self.hy;
        hy.started = true;
        hy.round_start = now;
        hy.last_ack = now;
        hy.end_seq = snd_nxt;
        hy.curr_rtt = u64::MAX;
        hy.sample_cnt = 0;
    }

    /// One RTT sample `delay` in slow start (`hystart_update`): either detector may end slow
    /// start by setting ssthresh to cwnd.
    pub fn hystart_update(&mut self, st: &mut CcState, now: Time, delay: Time) {
        let p = self.p;
        let hy = &mut self.hy;
        if hy.found || st.min_rtt == u64::MAX {
            return;
        }
        let delay_min = st.min_rtt;
        if p.hystart_detect != HystartDetect::Delay && now.saturating_sub(hy.last_ack) <= p.hystart_ack_delta.0 {
            hy.last_ack = now;
            if now.saturating_sub(hy.round_start) > delay_min / 2 {
                hy.found = true;
            }
        }
        if p.hystart_detect != HystartDetect::AckTrain {
            if hy.sample_cnt < HYSTART_MIN_SAMPLES {
                hy.curr_rtt = hy.curr_rtt.min(delay);
                hy.sample_cnt += 1;
            } else if hy.curr_rtt > delay_min + (delay_min / 8).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX) {
                hy.found = true;
            }
        }
        if hy.found {
            st.ssthresh = st.cwnd;
        }
    }

    /// W_max, segments (0 before the first loss).
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// K of the current epoch, seconds.
    pub fn k(&self) -> f64 {
        self.k
    }

    /// W_cubic(t) of the current epoch, t in seconds since the epoch start (RFC 9438 eq. 1).
    pub fn w_cubic(&self, t: f64) -> f64 {
        self.p.c * (t - self.k).powi(3) + self.w_max
    }

    fn start_epoch(&mut self, st: &CcState, now: Time) {
        self.t_epoch = Some(now);
        self.w_est = st.cwnd;
        if self.w_max <= 0.0 || (self.after_timeout && self.p.variant == CubicVariant::Rfc) {
            // no loss yet, or the first epoch after a timeout: plateau where we are
            self.w_max = st.cwnd;
            if self.cwnd_prior <= 0.0 {
                self.cwnd_prior = st.cwnd;
            }
            self.k = 0.0;
        } else if self.p.variant == CubicVariant::Ns2 && self.w_max <= st.cwnd {
            // Linux: the origin moves up to cwnd, K = 0
            self.w_max = st.cwnd;
            self.k = 0.0;
        } else {
            self.k = ((self.w_max - st.cwnd) / self.p.c).cbrt();
        }
        self.after_timeout = false;
    }
}

fn secs(t: Time) -> f64 {
    t as f64 / NS_PER_SEC as f64
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &AckSample) {
        if self.p.variant == CubicVariant::Ns2 {
            self.ack_ratio.on_ack(ack.newly_acked, st.phase);
        }
        if self.p.hystart && in_slow_start(st) {
            // Linux: `hystart_update` runs from `pkts_acked`, before `cong_avoid` starts a
            // new round.
            if let Some(rtt) = ack.rtt {
                if self.hy.started && st.cwnd >= self.p.hystart_low_window {
                    self.hystart_update(st, ack.now, rtt);
                }
            }
            if in_slow_start(st) && (!self.hy.started || st.snd_una > self.hy.end_seq) {
                self.hystart_reset(ack.now, st.snd_nxt);
            }
        }
        if in_slow_start(st) {
            slow_start(st);
            return;
        }
        let t0 = match self.t_epoch {
            Some(t0) => t0,
            None => {
                self.start_epoch(st, ack.now);
                ack.now
            }
        };
        let t = secs(ack.now.saturating_sub(t0));
        let acked = ack.newly_acked as f64;
        let min_rtt = if st.min_rtt == u64::MAX { 0.0 } else { secs(st.min_rtt) };
        let alpha = 3.0 * (1.0 - self.p.beta) / (1.0 + self.p.beta);
        match self.p.variant {
            CubicVariant::Rfc => {
                let rtt = if st.rtt.srtt > 0.0 { st.rtt.srtt / NS_PER_SEC as f64 } else { min_rtt };
                let target = self.w_cubic(t + rtt).clamp(st.cwnd, MAX_TARGET_RATIO * st.cwnd);
                if self.p.tcp_friendliness {
                    let a = if self.w_est >= self.cwnd_prior { 1.0 } else { alpha };
                    self.w_est += a * acked / st.cwnd;
                    if self.w_cubic(t) < self.w_est {
                        st.cwnd = st.cwnd.max(self.w_est);
                        return;
                    }
                }
                st.cwnd += (target - st.cwnd) / st.cwnd;
            }
            CubicVariant::Ns2 => {
                let target = self.w_cubic(t + min_rtt);
                let mut cnt = if target > st.cwnd { st.cwnd / (target - st.cwnd) } else { NS2_IDLE_CNT * st.cwnd };
                if min_rtt > 0.0 && t >= self.k {
                    let min_cnt = st.cwnd * 0.1 / (NS2_MAX_INCREMENT_PER_100MS * min_rtt);
                    cnt = cnt.max(min_cnt);
                }
                if !self.lost {
                    cnt = NS2_NO_LOSS_CNT;
                }
                if self.p.tcp_friendliness {
                    self.w_est += alpha * acked / st.cwnd;
                    if self.w_est > st.cwnd {
                        cnt = cnt.min(st.cwnd / (self.w_est - st.cwnd));
                    }
                }
                st.cwnd += acked / (cnt / self.ack_ratio.ratio()).max(1.0);
            }
        }
    }

    fn ssthresh_after(&mut self, _st: &CcState, loss: &LossSignal) -> f64 {
        let w = loss.flight_size as f64;
        let b = self.p.beta;
        self.t_epoch = None;
        self.w_max = if self.p.fast_convergence && w < self.w_max { w * (1.0 + b) / 2.0 } else { w };
        self.cwnd_prior = w;
        self.lost = true;
        self.after_timeout = loss.kind == LossKind::Timeout;
        if self.after_timeout {
            // HyStart runs again in the slow start after a timeout.
            self.hy = Hystart::default();
        }
        if self.after_timeout && self.p.variant == CubicVariant::Ns2 {
            // bictcp_reset on entering TCP_CA_Loss
            *self = Cubic::new(self.p);
        }
        (w * b).max(2.0)
    }

    fn metrics(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("cubic_w_max", self.w_max);
        out("cubic_k", self.k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::loss_of;

    const MS: Time = 1_000_000;

    fn ack_at(now: Time) -> AckSample {
        AckSample { now, ..crate::cc::testing::ack() }
    }

    /// Congestion-avoidance state after a reduction to ssthresh, with the given RTTs.
    fn ca_state(cwnd: f64, srtt_ms: f64, min_rtt_ms: u64) -> CcState {
        let mut st = CcState::new(cwnd, cwnd, 1460);
        st.rtt.srtt = srtt_ms * MS as f64;
        st.min_rtt = min_rtt_ms * MS;
        st
    }

    /// RFC 9438 §4: W_max = 100, β = 0.7, C = 0.4 -> cwnd_epoch 70, K = ∛75.
    #[test]
    fn the_curve_after_a_loss_at_100() {
        let mut c = Cubic::new(CubicParams::default());
        let st = ca_state(100.0, 100.0, 100);
        assert!((c.ssthresh_after(&st, &loss_of(LossKind::DupAcks, 100)) - 70.0).abs() < 1e-9);
        let mut st = ca_state(70.0, 100.0, 100);
        c.on_ack(&mut st, &ack_at(0));
        assert!((c.k() - 4.2172).abs() < 1e-4, "K = {}", c.k());
        let rows = [
            ("t = 0: cwnd_epoch", 0.0, 70.0),
            ("t = 1", 1.0, 86.681),
            ("t = 2", 2.0, 95.640),
            ("t = K: plateau", 4.2172, 100.0),
            ("t = 5", 5.0, 100.192),
            ("t = 6", 6.0, 102.267),
        ];
        for (label, t, w) in rows {
            assert!((c.w_cubic(t) - w).abs() < 2e-3, "{label}: {}", c.w_cubic(t));
        }
    }

    /// K for the other worked cases: (label, params, W_max, K).
    #[test]
    fn k_values() {
        let rows = [
            ("β = 0.8 (ns-2): ∛50", CubicParams { beta: 0.8, ..CubicParams::default() }, 100, 3.6840),
            ("W_max = 1000, β = 0.7: ∛750", CubicParams::default(), 1000, 9.0856),
        ];
        for (label, p, w_max, k) in rows {
            let mut c = Cubic::new(p);
            let cut = c.ssthresh_after(&ca_state(w_max as f64, 50.0, 50), &loss_of(LossKind::DupAcks, w_max));
            let mut st = ca_state(cut, 50.0, 50);
            c.on_ack(&mut st, &ack_at(0));
            assert!((c.k() - k).abs() < 1e-4, "{label}: {}", c.k());
        }
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        let mut c = Cubic::new(CubicParams::default());
        c.ssthresh_after(&ca_state(100.0, 50.0, 50), &loss_of(LossKind::DupAcks, 100));
        let cut = c.ssthresh_after(&ca_state(90.0, 50.0, 50), &loss_of(LossKind::DupAcks, 90));
        assert!((cut - 63.0).abs() < 1e-9, "0.7·90: {cut}");
        assert!((c.w_max() - 76.5).abs() < 1e-9, "90·1.7/2: {}", c.w_max());
        let mut off = Cubic::new(CubicParams { fast_convergence: false, ..CubicParams::default() });
        off.ssthresh_after(&ca_state(100.0, 50.0, 50), &loss_of(LossKind::DupAcks, 100));
        off.ssthresh_after(&ca_state(90.0, 50.0, 50), &loss_of(LossKind::DupAcks, 90));
        assert_eq!(off.w_max(), 90.0);
    }

    /// Drive one ACK per segment, `rtt_ms` apart per window, for `secs` seconds.
    fn run_ca(c: &mut Cubic, st: &mut CcState, rtt_ms: u64, secs: u64) {
        let mut now = 0;
        while now < secs * 1000 * MS {
            let n = st.cwnd.floor() as u64;
            for i in 0..n {
                c.on_ack(st, &ack_at(now + i * rtt_ms * MS / n));
            }
            now += rtt_ms * MS;
        }
    }

    /// RFC 9438's Reno-friendly region after a loss at 100. With a 10 ms RTT the Reno estimate
    /// governs: it grows 0.529 per RTT up to cwnd_prior = 100 (56.7 RTTs), then 1 per RTT
    /// (RFC 9438 §4.3), so 100 + 43.3 ≈ 143 after 100 RTTs (keeping α = 0.529 throughout would
    /// give 122.9); W_cubic(1) = 86.7 is far below. With 100 ms the curve governs:
    /// W_est(1 s) = 70 + 10·0.529 = 75.3, while cwnd tracks W_cubic(t + RTT), 86.7–87.9.
    #[test]
    fn reno_friendly_region_governs_on_short_rtts() {
        for (label, rtt, lo, hi) in [("10 ms", 10, 138.0, 146.0), ("100 ms", 100, 84.0, 90.0)] {
            let mut c = Cubic::new(CubicParams::default());
            c.ssthresh_after(&ca_state(100.0, rtt as f64, rtt), &loss_of(LossKind::DupAcks, 100));
            let mut st = ca_state(70.0, rtt as f64, rtt);
            run_ca(&mut c, &mut st, rtt, 1);
            assert!(st.cwnd > lo && st.cwnd < hi, "{label}: cwnd after 1 s = {}", st.cwnd);
        }
        // without the Reno-friendly region the 10 ms flow follows the curve: W_cubic(1 s) = 86.7
        let p = CubicParams { tcp_friendliness: false, ..CubicParams::default() };
        let mut c = Cubic::new(p);
        c.ssthresh_after(&ca_state(100.0, 10.0, 10), &loss_of(LossKind::DupAcks, 100));
        let mut st = ca_state(70.0, 10.0, 10);
        run_ca(&mut c, &mut st, 10, 1);
        assert!((st.cwnd - 86.7).abs() < 1.5, "{}", st.cwnd);
    }

    #[test]
    fn target_is_capped_at_one_and_a_half_windows() {
        // far below W_max, a 2 s RTT: W_cubic(t + RTT) is far above; one ACK adds at most 0.5
        let mut c = Cubic::new(CubicParams { tcp_friendliness: false, ..CubicParams::default() });
        c.ssthresh_after(&ca_state(10_000.0, 2000.0, 2000), &loss_of(LossKind::DupAcks, 10_000));
        let mut st = ca_state(100.0, 2000.0, 2000);
        c.on_ack(&mut st, &ack_at(0));
        assert!((st.cwnd - 100.5).abs() < 1e-9, "{}", st.cwnd);
    }

    #[test]
    fn after_a_timeout_the_epoch_restarts_at_the_current_window() {
        let mut c = Cubic::new(CubicParams::default());
        c.ssthresh_after(&ca_state(100.0, 50.0, 50), &loss_of(LossKind::DupAcks, 100));
        assert_eq!(c.ssthresh_after(&ca_state(80.0, 50.0, 50), &loss_of(LossKind::Timeout, 80)), 56.0);
        let mut st = ca_state(56.0, 50.0, 50);
        c.on_ack(&mut st, &ack_at(0));
        assert_eq!((c.k(), c.w_max()), (0.0, 56.0), "K = 0, W_max = cwnd at the epoch start");
    }

    /// A slow-start state for HyStart: cwnd 20 (above the low window 16), min RTT 40 ms.
    fn hystart_state() -> (Cubic, CcState) {
        let c = Cubic::new(CubicParams { hystart: true, ..CubicParams::default() });
        let mut st = CcState::new(20.0, f64::INFINITY, 1460);
        st.min_rtt = 40 * MS;
        (c, st)
    }

    fn rtt_ack(now: Time, rtt: Time, snd_una: u64, st: &mut CcState) -> AckSample {
        st.snd_una = snd_una;
        st.snd_nxt = snd_una + 40;
        AckSample { now, rtt: Some(rtt), ..crate::cc::testing::ack() }
    }

    /// Delay increase: min RTT 40 ms gives a threshold of clamp(5 ms, 4, 16) = 5 ms. The
    /// first ACK starts a round; if its next 8 samples are all above 45 ms, the 9th ends slow
    /// start; at 45 ms exactly it goes on.
    #[test]
    fn hystart_delay_increase_exits_above_the_threshold() {
        for (rtt, exits) in [(45 * MS + 1, true), (45 * MS, false)] {
            let (mut c, mut st) = hystart_state();
            // Samples 10 ms apart: no ACK train.
            for k in 0..10u64 {
                let a = rtt_ack(k * 10 * MS, rtt, k + 1, &mut st);
                c.on_ack(&mut st, &a);
            }
            assert_eq!(c.hystart().found, exits, "rtt {rtt}");
            if exits {
                // ssthresh = cwnd when found (20 + 9 slow-start ACKs); this ACK's growth is
                // congestion avoidance's.
                assert_eq!(st.ssthresh, 29.0);
                assert!(st.cwnd > 29.0 && st.cwnd < 29.1, "no more slow start: {}", st.cwnd);
            } else {
                assert_eq!((st.cwnd, st.ssthresh), (30.0, f64::INFINITY));
            }
        }
        // The threshold is clamped: min RTT 200 ms gives 16 ms (not 25), 10 ms gives 4 ms.
        for (min_rtt, rtt, exits) in [(200, 216 * MS + 1, true), (200, 216 * MS, false), (10, 14 * MS + 1, true)] {
            let (mut c, mut st) = hystart_state();
            st.min_rtt = min_rtt * MS;
            for k in 0..10u64 {
                let a = rtt_ack(k * 100 * MS, rtt, k + 1, &mut st);
                c.on_ack(&mut st, &a);
            }
            assert_eq!(c.hystart().found, exits, "min RTT {min_rtt} ms, rtt {rtt}");
        }
    }

    /// ACK train: ACKs 1 ms apart (within 2 ms) end slow start once the train has lasted more
    /// than min RTT / 2 = 20 ms from the round's start; a 3 ms gap breaks the train.
    #[test]
    fn hystart_ack_train_exits_after_half_the_min_rtt() {
        let p = CubicParams { hystart: true, hystart_detect: HystartDetect::AckTrain, ..CubicParams::default() };
        let (_, mut st) = hystart_state();
        let mut c = Cubic::new(p);
        let mut exit_at = None;
        for k in 0..40u64 {
            let a = rtt_ack(k * MS, 40 * MS, k + 1, &mut st);
            c.on_ack(&mut st, &a);
            if c.hystart().found && exit_at.is_none() {
                exit_at = Some(k);
            }
        }
        // The round starts at the first ACK (t = 0); t = 21 ms is the first beyond 20 ms.
        assert_eq!(exit_at, Some(21));
        assert_eq!(st.ssthresh, 41.0, "cwnd 20 + 21 slow-start ACKs");
        let (_, mut st) = hystart_state();
        let mut c = Cubic::new(p);
        for k in 0..40u64 {
            let a = rtt_ack(k * 3 * MS, 40 * MS, k + 1, &mut st);
            c.on_ack(&mut st, &a);
        }
        assert!(!c.hystart().found, "3 ms gaps are not a train");
        // Below the low window nothing is tested.
        let mut st = CcState::new(4.0, f64::INFINITY, 1460);
        st.min_rtt = 40 * MS;
        let mut c = Cubic::new(p);
        for k in 0..10u64 {
            let a = rtt_ack(k * MS, 40 * MS, k + 1, &mut st);
            c.on_ack(&mut st, &a);
        }
        assert!(!c.hystart().found && st.cwnd == 14.0);
    }

    #[test]
    fn ns2_variant() {
        let mut c = Cubic::new(CubicParams::defaults(CubicVariant::Ns2));
        // before any loss: +1 per 50 ACKs, divided by the packets-per-ACK estimate (31/16)
        let mut st = ca_state(100.0, 100.0, 100);
        for i in 0..50 {
            c.on_ack(&mut st, &ack_at(i * MS));
        }
        assert!((st.cwnd - 101.9375).abs() < 1e-6, "{}", st.cwnd);
        // a loss at 100 keeps 819/1024; K = ∛((100 − 79.98)/0.4)
        let cut = c.ssthresh_after(&st, &loss_of(LossKind::DupAcks, 100));
        assert!((cut - 79.98046875).abs() < 1e-9, "{cut}");
        let mut st = ca_state(cut, 100.0, 100);
        c.on_ack(&mut st, &ack_at(0));
        assert!((c.k() - (20.01953125f64 / 0.4).cbrt()).abs() < 1e-9, "{}", c.k());
        // well past K the growth is capped at 16 segments per 100 ms of min RTT: 1.6 per 10 ms
        let mut fast = Cubic::new(CubicParams { tcp_friendliness: false, ..CubicParams::defaults(CubicVariant::Ns2) });
        fast.ssthresh_after(&ca_state(100.0, 10.0, 10), &loss_of(LossKind::DupAcks, 100));
        let mut st = ca_state(80.0, 10.0, 10);
        fast.on_ack(&mut st, &ack_at(0));
        let before = st.cwnd;
        for _ in 0..80 {
            fast.on_ack(&mut st, &ack_at(20_000 * MS));
        }
        assert!(
            (st.cwnd - before - 1.6 * 31.0 / 16.0).abs() < 0.1,
            "one window of ACKs at t = 20 s: +{}",
            st.cwnd - before
        );
        // a timeout forgets W_max
        fast.ssthresh_after(&st, &loss_of(LossKind::Timeout, 80));
        assert_eq!(fast.w_max(), 0.0);
    }
}
