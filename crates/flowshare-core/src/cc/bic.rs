//! BIC TCP (Xu, Harfoush, Rhee, "Binary increase congestion control for fast, long distance
//! networks", INFOCOM 2004): after a loss the window does a binary search towards the window
//! of the last loss, W_max, then probes beyond it, first slowly and then faster.
//!
//! Two variants:
//!
//! - `linux` (default): `tcp_bic.c` as in Linux 2.6.22, which ns-2.35's TCP-Linux runs, and
//!   unchanged in current Linux: β = 819/1024 of the window kept on a loss, the binary search
//!   closes 1/B = 1/4 of the gap to W_max per RTT, at most `s_max` = 16 segments per RTT, +0.2
//!   per RTT within one segment-per-B of W_max (`smooth_part` = 20, here `s_min` = B/20), max
//!   probing +(cwnd − W_max)/3 per RTT, at least cwnd/20 per RTT before the first loss, Reno at
//!   and below `low_window` = 14, and W_max forgotten after a retransmission timeout
//!   (`bictcp_state` resets on TCP_CA_Loss). Windows, cnt and the decrease use Linux's integer
//!   arithmetic.
//! - `paper`: the INFOCOM 2004 description: a loss keeps β = 0.875 (the paper's decrease
//!   fraction 0.125), binary search adds (W_max − cwnd)/2 per RTT (the midpoint of W_min = cwnd
//!   and W_max), max probing mirrors it with cwnd − W_max per RTT (S_min, then doubling), both
//!   clamped to [S_min, S_max] = [0.01, 32]; before the first loss it adds S_max per RTT. The
//!   step is decided at the start of each round (`AckSample::round_start`) and spread over the
//!   round's ACKs. These constants are the paper's as usually quoted, not checked against the
//!   paper's text.
//!
//! Both: fast convergence (a loss below the previous W_max sets W_max = cwnd·(1 + β)/2, the
//! paper's (2 − 0.125)/2 and Linux's (1024 + 819)/2048), Reno at and below `low_window`, and
//! the per-RTT increment spread over the ACKs of a window.
//!
//! Differences: the decrease and W_max apply to FlightSize (RFC 5681's convention, used by
//! every algorithm here) where Linux uses cwnd; they are equal while the flow is window-limited.
//! `linux` divides cnt by Linux's packets-per-ACK estimate ([`AckRatio`]), which its integer
//! arithmetic holds at 31/16 when every segment is acknowledged, so above `low_window` the
//! window grows about 1.9× faster than the unscaled cnt says, in 2.6.22 and in current Linux
//! alike (at and below it, `bictcp_update` returns Reno's cnt before scaling). cnt is recomputed
//! on every ACK (Linux: at most every HZ/32 while cwnd is unchanged), and the counter adds one
//! segment per cnt ACKs as current Linux's `tcp_cong_avoid_ai` does (2.6.22 takes cnt + 1). ns-3's `TcpBic` uses smooth_part 5 and
//! W_max = 0.8·cwnd under fast convergence; that is not offered.

use super::{in_slow_start, slow_start, AckSample, CcState, CongestionControl, LossKind, LossSignal, Phase};
use serde::{Deserialize, Serialize};

/// Paper or Linux rules.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BicVariant {
    /// `tcp_bic.c` (Linux 2.6.22 = ns-2.35 TCP-Linux = current Linux).
    #[default]
    Linux,
    /// Xu, Harfoush, Rhee 2004.
    Paper,
}

/// Linux `BICTCP_B`: the binary search closes 1/B of the distance to W_max per RTT.
const LINUX_B: f64 = 4.0;
/// Linux: cnt cap while W_max is 0 (no loss yet), i.e. at least cwnd/20 per RTT.
const LINUX_NO_LOSS_CNT: f64 = 20.0;
/// Linux `beta`: 819/1024 of the window is kept on a loss.
pub const LINUX_BETA: f64 = 819.0 / 1024.0;

/// BIC parameters (validated by `CcConfig`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BicParams {
    /// Rule set.
    pub variant: BicVariant,
    /// Fraction of the window kept on a loss (Linux 819/1024, paper 0.875).
    pub beta: f64,
    /// Largest increase per RTT, segments (Linux `max_increment` 16, paper S_max 32).
    pub s_max: f64,
    /// Smallest increase per RTT, segments (Linux B/`smooth_part` = 0.2, paper S_min 0.01).
    pub s_min: f64,
    /// Reno at and below this window (14 in both).
    pub low_window: f64,
    /// Fast convergence: a loss below W_max sets W_max = cwnd·(1 + β)/2.
    pub fast_convergence: bool,
}

impl BicParams {
    /// The defaults of a variant.
    pub fn defaults(variant: BicVariant) -> Self {
        match variant {
            BicVariant::Linux => BicParams {
                variant,
                beta: LINUX_BETA,
                s_max: 16.0,
                s_min: LINUX_B / 20.0,
                low_window: 14.0,
                fast_convergence: true,
            },
            BicVariant::Paper => {
                BicParams { variant, beta: 0.875, s_max: 32.0, s_min: 0.01, low_window: 14.0, fast_convergence: true }
            }
        }
    }
}

impl Default for BicParams {
    fn default() -> Self {
        BicParams::defaults(BicVariant::default())
    }
}

/// Linux's estimate of packets acknowledged per ACK in BIC and CUBIC (`delayed_ack`, in
/// sixteenths, `ACK_RATIO_SHIFT` = 4): it starts at 2 and moves by `acked − ⌊ratio⌋` on each ACK
/// in open operation, so with one ACK per segment integer truncation leaves it at 31/16; cnt is
/// divided by it (`bictcp_update`), and a timeout resets it (`bictcp_reset`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckRatio(u32);

impl Default for AckRatio {
    fn default() -> Self {
        AckRatio(2 << 4)
    }
}

impl AckRatio {
    /// `bictcp_acked`: an ACK of `acked` segments; counted only in open operation.
    pub fn on_ack(&mut self, acked: u64, phase: Phase) {
        if acked > 0 && phase == Phase::Open {
            let acked = u32::try_from(acked).unwrap_or(u32::MAX);
            self.0 = self.0.wrapping_add(acked).wrapping_sub(self.0 >> 4);
        }
    }

    /// `ca->cnt = (cnt << ACK_RATIO_SHIFT) / delayed_ack`, at least 1.
    pub fn scale(self, cnt: f64) -> f64 {
        (cnt * 16.0 / f64::from(self.0.max(1))).floor().max(1.0)
    }

    /// The estimate, packets per ACK.
    pub fn ratio(self) -> f64 {
        f64::from(self.0) / 16.0
    }
}

/// BIC state.
#[derive(Clone, Copy, Debug)]
pub struct Bic {
    p: BicParams,
    /// Window of the last loss (after fast convergence), segments; 0 before the first loss.
    w_max: f64,
    /// Linux: ACKs counted towards the next +1 segment.
    counter: f64,
    /// Paper: (increment, window) fixed at the start of the current round.
    round: Option<(f64, f64)>,
    /// Linux: packets per ACK.
    ack_ratio: AckRatio,
}

impl Bic {
    /// A fresh instance.
    pub fn new(p: BicParams) -> Self {
        Bic { p, w_max: 0.0, counter: 0.0, round: None, ack_ratio: AckRatio::default() }
    }

    /// W_max, segments (0 before the first loss).
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// Linux: ACKs per +1 segment at integer window `w` (`bictcp_update`'s cnt).
    pub fn linux_cnt(&self, w: f64) -> f64 {
        let (w, w_max) = (w.floor(), self.w_max.floor());
        let p = &self.p;
        let smooth = (w / p.s_min + 1e-9).floor();
        let mut cnt = if w <= p.low_window {
            w
        } else if w < w_max {
            let dist = ((w_max - w) / LINUX_B).floor();
            if dist > p.s_max {
                (w / p.s_max).floor()
            } else if dist <= 1.0 {
                smooth
            } else {
                (w / dist).floor()
            }
        } else if w < w_max + LINUX_B {
            smooth
        } else if w < w_max + p.s_max * (LINUX_B - 1.0) {
            (w * (LINUX_B - 1.0) / (w - w_max)).floor()
        } else {
            (w / p.s_max).floor()
        };
        if self.w_max == 0.0 {
            cnt = cnt.min(LINUX_NO_LOSS_CNT);
        }
        cnt.max(1.0)
    }

    /// Paper: segments added over the next RTT at window `w`.
    pub fn paper_increment(&self, w: f64) -> f64 {
        let p = &self.p;
        if w <= p.low_window {
            1.0
        } else if self.w_max == 0.0 {
            p.s_max
        } else if w < self.w_max {
            ((self.w_max - w) / 2.0).clamp(p.s_min, p.s_max)
        } else {
            (w - self.w_max).clamp(p.s_min, p.s_max)
        }
    }
}

impl CongestionControl for Bic {
    fn name(&self) -> &'static str {
        "bic"
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &AckSample) {
        if self.p.variant == BicVariant::Linux {
            self.ack_ratio.on_ack(ack.newly_acked, st.phase);
        }
        if in_slow_start(st) {
            slow_start(st);
            return;
        }
        match self.p.variant {
            BicVariant::Paper => {
                // the paper's per-RTT step, decided once per round and spread over its ACKs
                if ack.round_start || self.round.is_none() {
                    self.round = Some((self.paper_increment(st.cwnd), st.cwnd));
                }
                let (inc, w) = self.round.unwrap_or((1.0, st.cwnd));
                st.cwnd += inc / w;
            }
            BicVariant::Linux => {
                // bictcp_update returns Reno's cnt = cwnd at and below low_window before the
                // packets-per-ACK scaling, so only larger windows grow faster by it.
                let cnt = if st.cwnd.floor() <= self.p.low_window {
                    self.linux_cnt(st.cwnd)
                } else {
                    self.ack_ratio.scale(self.linux_cnt(st.cwnd))
                };
                self.counter += ack.newly_acked as f64;
                if self.counter >= cnt {
                    let steps = (self.counter / cnt).floor();
                    self.counter -= steps * cnt;
                    st.cwnd += steps;
                }
            }
        }
    }

    fn ssthresh_after(&mut self, _st: &CcState, loss: &LossSignal) -> f64 {
        let w = loss.flight_size as f64;
        let linux = self.p.variant == BicVariant::Linux;
        let int = |x: f64| if linux { x.floor() } else { x };
        self.counter = 0.0;
        self.round = None;
        self.w_max = if self.p.fast_convergence && w < self.w_max { int(w * (1.0 + self.p.beta) / 2.0) } else { w };
        let cut = if w <= self.p.low_window { int(w / 2.0) } else { int(w * self.p.beta) };
        if linux && loss.kind == LossKind::Timeout {
            // bictcp_state: entering TCP_CA_Loss resets W_max (and the no-loss cnt cap returns)
            // and the packets-per-ACK estimate
            self.w_max = 0.0;
            self.ack_ratio = AckRatio::default();
        }
        cut.max(2.0)
    }

    fn metrics(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("bic_w_max", self.w_max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Linux's `delayed_ack`: 2 at the start, 31/16 after one ACK per segment (integer
    /// truncation stops it there), 2 with two segments per ACK; only open operation counts.
    #[test]
    fn packets_per_ack_estimate() {
        let mut r = AckRatio::default();
        assert_eq!(r.ratio(), 2.0);
        for _ in 0..100 {
            r.on_ack(1, Phase::Open);
        }
        assert_eq!(r.ratio(), 31.0 / 16.0);
        assert_eq!(r.scale(20.0), 10.0, "cnt 20 -> 20*16/31");
        assert_eq!(r.scale(1.0), 1.0);
        r.on_ack(5, Phase::Recovery);
        assert_eq!(r.ratio(), 31.0 / 16.0);
        for _ in 0..100 {
            r.on_ack(2, Phase::Open);
        }
        assert_eq!(r.ratio(), 2.0);
    }
    use crate::cc::testing::{ack, loss};
    use crate::cc::LossKind;

    fn st(cwnd: f64) -> CcState {
        CcState::new(cwnd, 2.0, 1460)
    }

    /// Linux (`tcp_bic.c`) worked example: loss at 100, then cnt at several windows,
    /// then a second loss at 90 under fast convergence.
    #[test]
    fn linux_worked_example() {
        let mut b = Bic::new(BicParams::default());
        assert_eq!(b.ssthresh_after(&st(100.0), &loss(100)), 79.0, "floor(100·819/1024)");
        assert_eq!(b.w_max(), 100.0);
        let rows = [
            ("binary search: dist 5", 79.0, 15.0),
            ("near W_max: dist 1, smooth part", 96.0, 480.0),
            ("just above W_max", 102.0, 510.0),
            ("max probing: +(110 − 100)/3", 110.0, 33.0),
            ("max probing at s_max", 150.0, 9.0),
            ("far below W_max: +s_max per RTT", 32.0, 2.0),
            ("Reno at low_window", 14.0, 14.0),
        ];
        for (label, w, cnt) in rows {
            assert_eq!(b.linux_cnt(w), cnt, "{label}");
        }
        // far below with a small window: W_max 200, w 20: dist 45 > 16 -> cnt = floor(20/16) = 1
        let mut far = Bic::new(BicParams::default());
        far.ssthresh_after(&st(200.0), &loss(200));
        assert_eq!(far.linux_cnt(20.0), 1.0);
        assert_eq!(b.ssthresh_after(&st(90.0), &loss(90)), 71.0, "floor(90·819/1024)");
        assert_eq!(b.w_max(), 80.0, "fast convergence: floor(90·1843/2048)");
    }

    #[test]
    fn linux_before_the_first_loss_grows_at_least_five_percent_per_rtt() {
        let b = Bic::new(BicParams::default());
        // W_max = 0: max probing gives cwnd/16 = 62 at 1000, capped at 20
        assert_eq!(b.linux_cnt(1000.0), 20.0);
        assert_eq!(b.linux_cnt(30.0), 3.0, "30 < 0 + 48: 30·3/30");
    }

    /// One window of ACKs at cwnd 79 after a loss at 100 adds floor(79/15) = 5 segments.
    #[test]
    fn linux_counter_adds_one_segment_per_cnt_acks() {
        // cnt is divided by the packets-per-ACK estimate, 31/16 after the first ACK.
        let mut b = Bic::new(BicParams::default());
        b.ssthresh_after(&st(100.0), &loss(100));
        let mut s = CcState::new(79.0, 79.0, 1460);
        for _ in 0..7 {
            b.on_ack(&mut s, &ack());
        }
        assert_eq!(s.cwnd, 80.0, "cnt 15 at 79 -> 15·16/31 = 7 ACKs");
        // at 80: dist 5 -> cnt 16 -> 8 ACKs
        for _ in 0..7 {
            b.on_ack(&mut s, &ack());
        }
        assert_eq!(s.cwnd, 80.0, "still one ACK short");
        b.on_ack(&mut s, &ack());
        assert_eq!(s.cwnd, 81.0);
    }

    /// Paper variant: (label, W_max, w, increment per RTT).
    #[test]
    fn paper_increments() {
        let mut b = Bic::new(BicParams::defaults(BicVariant::Paper));
        assert_eq!(b.paper_increment(100.0), 32.0, "no loss yet: S_max");
        assert_eq!(b.ssthresh_after(&st(1000.0), &loss(1000)), 875.0);
        assert_eq!(b.w_max(), 1000.0);
        let rows = [
            ("binary search capped at S_max", 875.0, 32.0),
            ("binary search: half the gap", 960.0, 20.0),
            ("binary search near W_max: S_min", 999.995, 0.01),
            ("max probing starts at S_min", 1000.0, 0.01),
            ("max probing doubles the distance", 1004.0, 4.0),
            ("max probing capped at S_max", 1100.0, 32.0),
            ("Reno below low_window", 10.0, 1.0),
        ];
        for (label, w, inc) in rows {
            assert!((b.paper_increment(w) - inc).abs() < 1e-9, "{label}: {}", b.paper_increment(w));
        }
        // fast convergence: loss at 900 < 1000 -> W_max = 900·1.875/2 = 843.75
        assert_eq!(b.ssthresh_after(&st(900.0), &loss(900)), 787.5);
        assert_eq!(b.w_max(), 843.75);
        // one round of ACKs at 960 with W_max 1000 adds (1000 − 960)/2 = 20, the next 10
        let mut p = Bic::new(BicParams::defaults(BicVariant::Paper));
        p.ssthresh_after(&st(1000.0), &loss(1000));
        let mut s = CcState::new(960.0, 875.0, 1460);
        for (round, end) in [(960, 980.0), (980, 990.0)] {
            for i in 0..round {
                p.on_ack(&mut s, &AckSample { round_start: i == 0, ..ack() });
            }
            assert!((s.cwnd - end).abs() < 1e-9, "{}", s.cwnd);
        }
    }

    #[test]
    fn small_windows_halve_timeouts_reset_linux_and_fast_convergence_can_be_off() {
        for variant in [BicVariant::Linux, BicVariant::Paper] {
            let mut b = Bic::new(BicParams::defaults(variant));
            assert_eq!(b.ssthresh_after(&st(14.0), &loss(14)), 7.0, "{variant:?}");
            assert_eq!(b.ssthresh_after(&st(3.0), &loss(3)), 2.0, "{variant:?}");
        }
        // Linux forgets W_max after a timeout, the paper keeps it
        for (variant, w_max) in [(BicVariant::Linux, 0.0), (BicVariant::Paper, 100.0)] {
            let mut b = Bic::new(BicParams::defaults(variant));
            b.ssthresh_after(&st(100.0), &loss(100));
            let t = LossSignal { kind: LossKind::Timeout, ..loss(100) };
            assert_eq!(b.ssthresh_after(&st(100.0), &t), if w_max == 0.0 { 79.0 } else { 87.5 }, "{variant:?}");
            assert_eq!(b.w_max(), w_max, "{variant:?}");
        }
        let mut b = Bic::new(BicParams { fast_convergence: false, ..BicParams::default() });
        b.ssthresh_after(&st(100.0), &loss(100));
        b.ssthresh_after(&st(90.0), &loss(90));
        assert_eq!(b.w_max(), 90.0);
        let mut seen = Vec::new();
        b.metrics(&mut |k, v| seen.push((k, v)));
        assert_eq!(seen, vec![("bic_w_max", 90.0)]);
    }
}
