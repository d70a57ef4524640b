//! Compound TCP (Tan, Song, Zhang, Sridharan, "A Compound TCP approach for high-speed and long
//! distance networks", INFOCOM 2006; draft-sridharan-tcpm-ctcp-02): a Reno window `cwnd_reno`
//! plus a delay window `dwnd` that grows while the path's queue is near empty and shrinks by
//! the estimated queue once it builds. The sender sends with win = cwnd_reno + dwnd, which is
//! what this algorithm writes to `st.cwnd`.
//!
//! Two variants:
//!
//! - `paper` (default): per ACK in congestion avoidance cwnd_reno += 1/win. Once per round (an
//!   ACK with `round_start`, at least 3 RTT samples in the round), with baseRTT the smallest RTT
//!   seen and RTT the smallest sample of the round, diff = (win/baseRTT − win/RTT)·baseRTT
//!   = win·(1 − baseRTT/RTT) segments; if diff < γ and win ≥ `low_wnd`, dwnd += max(α·win^k − 1,
//!   0); if diff ≥ γ, dwnd = max(dwnd − ζ·diff, 0). On duplicate ACKs win' = win·(1 − β),
//!   dwnd = max(win' − cwnd_reno/2, 0), cwnd_reno = cwnd_reno/2 (so ssthresh = cwnd_reno/2 +
//!   dwnd, which is win' for β = 1/2); on a timeout dwnd = 0 and ssthresh = win·(1 − β).
//!   `low_wnd` defaults to the draft's 41 segments (recalled, not checked against the draft).
//! - `ns2`: ns-2.35 TCP-Linux `compound` (Castellani and Hemminger, on Linux 2.6.22 Vegas):
//!   integer windows; cwnd_reno += 1 once ⌊win⌋ ACKs have been counted; the round's window is
//!   the number of segments acknowledged during the round (`old_wnd`); diff is kept in half
//!   segments, diff₂ = 2·old_wnd − ⌊2·old_wnd·baseRTT/RTT⌋; below 2γ dwnd += max(⌊α·qroot(old_wnd³)⌋
//!   − 1, 0) with qroot the port's integer Newton quartic root (⌊α·⌊old_wnd^k⌋⌋ − 1 when k ≠ 0.75);
//!   otherwise dwnd = max(⌊(2·dwnd − ζ·diff₂)/2⌋, 0). A loss sets ssthresh = max(⌊win·(1 − β)⌋,
//!   2) on the total (Linux `tcp_reno_ssthresh`: win/2), and the split is reconciled with the
//!   window the sender leaves: if cwnd_reno + dwnd > win, then cwnd_reno = win and dwnd = 0
//!   when either part alone exceeds win, else cwnd_reno = win − dwnd. No `low_wnd` (default 0).
//!
//! Both: slow start is the shared [`slow_start`] on the total window while win < ssthresh,
//! credited to the Reno part; dwnd only acts in congestion avoidance. The per-round state
//! restarts when the sender returns to open operation (the port's `vegas_enable`); baseRTT is
//! kept. "win" at a loss is FlightSize, the convention of every algorithm here. After any
//! change the sender makes to the window (recovery, timeout, Tahoe's restart), the next ACK or
//! the return to open operation reconciles the split: `ns2` by the port's rule above; `paper`
//! keeps dwnd and gives the rest to the Reno part, unless that would leave it below one
//! segment, in which case dwnd = 0.
//!
//! Differences from the port not reproduced: its slow start tests cwnd_reno ≤ ssthresh (not
//! the total) and its dwnd update also runs in slow start; the Linux cwnd-limited gate; RTTs in
//! microseconds + 1 (here nanoseconds). The draft's γ auto-tuning (TUBE) is not implemented.

use super::{in_slow_start, slow_start, AckSample, CcState, CongestionControl, LossKind, LossSignal, Phase};
use crate::units::{Time, NS_PER_SEC};
use serde::{Deserialize, Serialize};

/// The paper's rules or the ns-2.35 TCP-Linux port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompoundVariant {
    /// Tan et al. 2006 in real arithmetic, with the draft's `low_wnd`.
    #[default]
    Paper,
    /// ns-2.35 TCP-Linux `compound` (Castellani and Hemminger).
    Ns2,
}

/// The draft's smallest window at which the delay window grows, segments (recalled, not checked
/// against the draft's text).
pub const LOW_WND: f64 = 41.0;
/// Fewest RTT samples in a round for a delay decision (the port's `cntRTT > 2`).
const MIN_SAMPLES: u32 = 3;

/// Compound TCP parameters (validated by `CcConfig`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompoundParams {
    /// Rule set.
    pub variant: CompoundVariant,
    /// α: gain of the delay window's increase α·win^k (1/8).
    pub alpha: f64,
    /// β: fraction of the window removed on a loss (1/2).
    pub beta: f64,
    /// k: exponent of the increase (0.75).
    pub k: f64,
    /// ζ: segments of dwnd removed per segment of estimated queue (1).
    pub zeta: f64,
    /// γ: queue estimate, segments, at and above which dwnd shrinks (30).
    pub gamma: f64,
    /// The delay window grows only at or above this window, segments; 0 = always.
    pub low_wnd: f64,
}

impl CompoundParams {
    /// The defaults of a variant: `low_wnd` 41 for `paper`, 0 for `ns2`.
    pub fn defaults(variant: CompoundVariant) -> Self {
        let low_wnd = match variant {
            CompoundVariant::Paper => LOW_WND,
            CompoundVariant::Ns2 => 0.0,
        };
        CompoundParams { variant, alpha: 0.125, beta: 0.5, k: 0.75, zeta: 1.0, gamma: 30.0, low_wnd }
    }
}

impl Default for CompoundParams {
    fn default() -> Self {
        CompoundParams::defaults(CompoundVariant::default())
    }
}

/// The port's integer quartic root: Newton's iteration x ← (3x + a/x³)/4 from 2^⌊bits(a)/4⌋,
/// stopped once a step moves by at most 1 (so it may stop one above the true root).
pub fn qroot(a: u128) -> u64 {
    if a == 0 {
        return 0;
    }
    let bits = 128 - a.leading_zeros();
    let mut x: u128 = 1 << (bits / 4);
    loop {
        let prev = x;
        x = (3 * x + a / (x * x * x)) / 4;
        if prev.abs_diff(x) <= 1 || x == 0 {
            return x as u64;
        }
    }
}

/// The paper's dwnd increase at window `win`: max(α·win^k − 1, 0).
pub fn paper_increment(win: f64, alpha: f64, k: f64) -> f64 {
    (alpha * win.powf(k) - 1.0).max(0.0)
}

/// The port's dwnd increase for `old_wnd` segments: max(⌊α·qroot(old_wnd³)⌋ − 1, 0), with
/// ⌊old_wnd^k⌋ for the root when k is not 0.75.
pub fn ns2_increment(old_wnd: u64, alpha: f64, k: f64) -> f64 {
    let root = if k == 0.75 {
        let w = u128::from(old_wnd);
        qroot(w * w * w) as f64
    } else {
        (old_wnd as f64).powf(k).floor()
    };
    ((alpha * root).floor() - 1.0).max(0.0)
}

/// Compound TCP state.
#[derive(Clone, Copy, Debug)]
pub struct Compound {
    p: CompoundParams,
    /// Loss-based (Reno) window, segments.
    cwnd_reno: f64,
    /// Delay window, segments.
    dwnd: f64,
    /// The split has been taken from the sender's window at least once.
    synced: bool,
    /// Smallest RTT seen, ns; `u64::MAX` before the first sample.
    base_rtt: Time,
    /// Smallest RTT sample of the current round, ns.
    round_min: Time,
    /// RTT samples in the current round.
    round_samples: u32,
    /// Segments acknowledged in the current round (the port's `old_wnd` at its end).
    round_acked: u64,
    /// `ns2`: ACKs counted towards the next +1 of the Reno part.
    ack_cnt: f64,
    /// Last round's queue estimate, segments (NaN before the first).
    diff: f64,
}

impl Compound {
    /// A fresh instance.
    pub fn new(p: CompoundParams) -> Self {
        Compound {
            p,
            cwnd_reno: 0.0,
            dwnd: 0.0,
            synced: false,
            base_rtt: u64::MAX,
            round_min: u64::MAX,
            round_samples: 0,
            round_acked: 0,
            ack_cnt: 0.0,
            diff: f64::NAN,
        }
    }

    /// The delay window, segments.
    pub fn dwnd(&self) -> f64 {
        self.dwnd
    }

    /// The Reno window, segments.
    pub fn cwnd_reno(&self) -> f64 {
        self.cwnd_reno
    }

    /// Last round's queue estimate, segments (NaN before the first).
    pub fn diff(&self) -> f64 {
        self.diff
    }

    /// Base RTT, ns (`u64::MAX` before the first sample).
    pub fn base_rtt(&self) -> Time {
        self.base_rtt
    }

    /// Bring the split in line with the window the sender now holds.
    fn reconcile(&mut self, st: &CcState) {
        let win = st.cwnd;
        if !self.synced {
            self.synced = true;
            self.cwnd_reno = win;
            self.dwnd = 0.0;
            return;
        }
        let sum = self.cwnd_reno + self.dwnd;
        if (sum - win).abs() <= 1e-9 * win.max(1.0) {
            return;
        }
        match self.p.variant {
            CompoundVariant::Ns2 if sum > win && (self.cwnd_reno > win || self.dwnd > win) => {
                self.cwnd_reno = win;
                self.dwnd = 0.0;
            }
            CompoundVariant::Ns2 => self.cwnd_reno = win - self.dwnd,
            CompoundVariant::Paper if win - self.dwnd >= 1.0 => self.cwnd_reno = win - self.dwnd,
            CompoundVariant::Paper => {
                self.cwnd_reno = win;
                self.dwnd = 0.0;
            }
        }
    }

    fn reset_round(&mut self) {
        self.round_min = u64::MAX;
        self.round_samples = 0;
        self.round_acked = 0;
    }

    /// The once-per-round delay decision; dwnd changes only in congestion avoidance.
    fn end_round(&mut self, in_ca: bool) {
        if self.round_samples >= MIN_SAMPLES && self.base_rtt != u64::MAX && self.round_min != u64::MAX {
            let (base, rtt) = (self.base_rtt, self.round_min);
            let p = self.p;
            match p.variant {
                CompoundVariant::Paper => {
                    let win = self.cwnd_reno + self.dwnd;
                    let diff = win * (1.0 - base as f64 / rtt as f64);
                    self.diff = diff;
                    if in_ca {
                        if diff < p.gamma {
                            if win >= p.low_wnd {
                                self.dwnd += paper_increment(win, p.alpha, p.k);
                            }
                        } else {
                            self.dwnd = (self.dwnd - p.zeta * diff).max(0.0);
                        }
                    }
                }
                CompoundVariant::Ns2 => {
                    let w = self.round_acked;
                    let two_w = 2 * u128::from(w);
                    let diff2 = (two_w - two_w * u128::from(base) / u128::from(rtt)) as f64;
                    self.diff = diff2 / 2.0;
                    if in_ca {
                        if diff2 < 2.0 * p.gamma {
                            if w as f64 >= p.low_wnd {
                                self.dwnd += ns2_increment(w, p.alpha, p.k);
                            }
                        } else {
                            self.dwnd = ((2.0 * self.dwnd - p.zeta * diff2) / 2.0).floor().max(0.0);
                        }
                    }
                }
            }
        }
        self.reset_round();
    }
}

impl CongestionControl for Compound {
    fn name(&self) -> &'static str {
        "compound"
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &AckSample) {
        if let Some(rtt) = ack.rtt {
            self.base_rtt = self.base_rtt.min(rtt);
            self.round_min = self.round_min.min(rtt);
            self.round_samples += 1;
        }
        self.round_acked += ack.newly_acked;
        self.reconcile(st);
        let in_ca = !in_slow_start(st);
        if in_ca {
            match self.p.variant {
                CompoundVariant::Paper => self.cwnd_reno += 1.0 / st.cwnd,
                CompoundVariant::Ns2 => {
                    self.ack_cnt += 1.0;
                    if self.ack_cnt >= st.cwnd.floor() {
                        self.ack_cnt = 0.0;
                        self.cwnd_reno += 1.0;
                    }
                }
            }
        } else {
            slow_start(st);
            self.cwnd_reno = st.cwnd - self.dwnd;
        }
        if ack.round_start {
            self.end_round(in_ca);
        }
        st.cwnd = self.cwnd_reno + self.dwnd;
    }

    fn ssthresh_after(&mut self, _st: &CcState, loss: &LossSignal) -> f64 {
        let w = loss.flight_size as f64;
        let kept = 1.0 - self.p.beta;
        self.ack_cnt = 0.0;
        if loss.kind == LossKind::Timeout {
            self.dwnd = 0.0;
        }
        match self.p.variant {
            CompoundVariant::Ns2 => (w * kept).floor().max(2.0),
            CompoundVariant::Paper if loss.kind == LossKind::Timeout => (w * kept).max(2.0),
            CompoundVariant::Paper => {
                let half = self.cwnd_reno / 2.0;
                self.dwnd = (w * kept - half).max(0.0);
                self.cwnd_reno = half;
                (half + self.dwnd).max(2.0)
            }
        }
    }

    fn on_phase(&mut self, st: &mut CcState, _from: Phase, to: Phase) {
        if to == Phase::Open {
            if self.synced {
                self.reconcile(st);
            }
            self.reset_round();
        }
    }

    fn metrics(&self, out: &mut dyn FnMut(&'static str, f64)) {
        let synced = |x: f64| if self.synced { x } else { f64::NAN };
        out("ctcp_dwnd", synced(self.dwnd));
        out("ctcp_cwnd_reno", synced(self.cwnd_reno));
        let base = if self.base_rtt == u64::MAX { f64::NAN } else { self.base_rtt as f64 / NS_PER_SEC as f64 };
        out("ctcp_base_rtt_s", base);
        out("ctcp_diff", self.diff);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::{ack, loss, loss_of};

    const MS: Time = 1_000_000;

    fn paper() -> Compound {
        Compound::new(CompoundParams::defaults(CompoundVariant::Paper))
    }

    fn ns2() -> Compound {
        Compound::new(CompoundParams::defaults(CompoundVariant::Ns2))
    }

    /// A CTCP in congestion avoidance with the given split and baseRTT 100 ms, and the
    /// sender's state holding its total.
    fn split(mut c: Compound, cwnd: f64, dwnd: f64) -> (Compound, CcState) {
        c.synced = true;
        c.cwnd_reno = cwnd;
        c.dwnd = dwnd;
        c.base_rtt = 100 * MS;
        (c, CcState::new(cwnd + dwnd, 2.0, 1460))
    }

    /// One round of three ACKs with RTT `rtt`, acknowledging `acked` segments between them;
    /// the last closes the round.
    fn round(c: &mut Compound, st: &mut CcState, rtt: Time, acked: u64) {
        let parts = [acked / 3, acked / 3, acked - 2 * (acked / 3)];
        for (i, n) in parts.into_iter().enumerate() {
            let a = AckSample { newly_acked: n, rtt: Some(rtt), round_start: i == 2, ..ack() };
            c.on_ack(st, &a);
        }
    }

    /// Tan et al. (2006) and the ns-2.35 port: win 100 → paper α·100^0.75 − 1 = 2.953; the port's
    /// qroot(10⁶) = 31 (Newton from 32 stops after one step), 31 >> 3 = 3, minus 1 = 2.
    #[test]
    fn increments_at_win_100() {
        assert!((paper_increment(100.0, 0.125, 0.75) - 2.9528).abs() < 1e-4);
        assert_eq!(qroot(1_000_000), 31);
        assert_eq!(ns2_increment(100, 0.125, 0.75), 2.0);
        // the draft's low_wnd: α·41^0.75 = 2.025, the first window with an increment ≥ 1
        assert!((paper_increment(41.0, 0.125, 0.75) - 1.0253).abs() < 1e-4);
        assert_eq!(qroot(41 * 41 * 41), 16);
        assert_eq!(ns2_increment(41, 0.125, 0.75), 1.0);
        // small windows add nothing; k ≠ 0.75 uses a floored power
        assert_eq!(paper_increment(10.0, 0.125, 0.75), 0.0);
        assert_eq!(ns2_increment(8, 0.125, 0.75), 0.0);
        assert_eq!(ns2_increment(100, 0.125, 0.8), 3.0, "⌊100^0.8⌋ = 39, ⌊39/8⌋ = 4, minus 1");
        for a in [1u128, 15, 16, 81, 10_000, 1 << 40, 123_456_789_012_345] {
            let r = (a as f64).powf(0.25);
            assert!((qroot(a) as f64 - r).abs() <= 1.5, "qroot({a}) = {} vs {r}", qroot(a));
        }
    }

    /// §14: baseRTT 100 ms, RTT 110 ms, win 100 → diff = 100·(1 − 100/110) = 9.09 < γ = 30, so
    /// the delay window grows (paper +2.953, port +2 with diff 9.5 in half-segment fixed point:
    /// 200 − ⌊200·100/110⌋ = 19 half-segments).
    #[test]
    fn a_small_queue_estimate_grows_dwnd() {
        // the round's three ACKs add about 3/100 to the Reno part first (the port's counter
        // needs 100 ACKs, so its Reno part stays at 90)
        let (mut c, mut st) = split(paper(), 100.0 - 0.03, 0.0);
        round(&mut c, &mut st, 110 * MS, 3);
        assert!((c.diff() - 100.0 / 11.0).abs() < 1e-4, "diff {}", c.diff());
        assert!((c.dwnd() - 2.953).abs() < 1e-3, "dwnd {}", c.dwnd());
        assert!((st.cwnd - c.cwnd_reno() - c.dwnd()).abs() < 1e-12);

        let (mut c, mut st) = split(ns2(), 90.0, 10.0);
        round(&mut c, &mut st, 110 * MS, 100);
        assert_eq!(c.diff(), 9.5);
        assert_eq!((c.cwnd_reno(), c.dwnd(), st.cwnd), (90.0, 12.0, 102.0));
    }

    /// A queue estimate at or above γ removes ζ·diff from dwnd, never below 0; the Reno part is
    /// untouched.
    #[test]
    fn a_large_queue_estimate_shrinks_dwnd() {
        // paper, win ≈ 100 at RTT 160 ms: diff = win·(1 − 100/160) ≈ 37.5 ≥ 30
        let (mut c, mut st) = split(paper(), 60.0, 40.0);
        round(&mut c, &mut st, 160 * MS, 3);
        let reno = c.cwnd_reno();
        assert!((reno - 60.03).abs() < 1e-3, "three ACKs of +1/win: {reno}");
        let diff = (reno + 40.0) * 0.375;
        assert!((c.diff() - diff).abs() < 1e-9, "diff {}", c.diff());
        assert!((c.dwnd() - (40.0 - diff)).abs() < 1e-9, "dwnd {}", c.dwnd());
        // an estimate larger than dwnd empties it
        round(&mut c, &mut st, 400 * MS, 3);
        assert_eq!(c.dwnd(), 0.0);
        assert!((st.cwnd - c.cwnd_reno()).abs() < 1e-12);

        // port, 60 segments acknowledged at 160 ms: diff₂ = 120 − ⌊120·100/160⌋ = 45
        // half-segments, 22.5 < 30: grows by ⌊qroot(216000)/8⌋ − 1 = ⌊21/8⌋ − 1 = 1
        let (mut c, mut st) = split(ns2(), 60.0, 40.0);
        round(&mut c, &mut st, 160 * MS, 60);
        assert_eq!((c.diff(), c.dwnd()), (22.5, 41.0));
        // 100 segments at 250 ms: diff₂ = 200 − 80 = 120, dwnd = ⌊(80 − 120)/2⌋ → 0
        let (mut c, mut st) = split(ns2(), 60.0, 40.0);
        round(&mut c, &mut st, 250 * MS, 100);
        assert_eq!((c.diff(), c.dwnd()), (60.0, 0.0));
        // 200 segments at 125 ms: diff₂ = 400 − 320 = 80 ≥ 60, dwnd = ⌊(80 − 80)/2⌋ = 0; with
        // ζ = 1/2, ⌊(80 − 40)/2⌋ = 20
        let (mut c, mut st) = split(ns2(), 60.0, 40.0);
        round(&mut c, &mut st, 125 * MS, 200);
        assert_eq!((c.diff(), c.dwnd()), (40.0, 0.0));
        let (mut c, mut st) = split(ns2(), 60.0, 40.0);
        c.p.zeta = 0.5;
        round(&mut c, &mut st, 125 * MS, 200);
        assert_eq!((c.cwnd_reno(), c.dwnd(), st.cwnd), (60.0, 20.0, 80.0));
    }

    /// §14: loss by duplicate ACKs with cwnd 60, dwnd 40 (win 100). Paper: cwnd 30, dwnd =
    /// max(50 − 30, 0) = 20, win 50. Port: ssthresh 50, and cwnd 60 > 50 → cwnd 50, dwnd 0.
    #[test]
    fn loss_splits_the_window_per_variant() {
        let (mut c, mut st) = split(paper(), 60.0, 40.0);
        assert_eq!(c.ssthresh_after(&st, &loss(100)), 50.0);
        assert_eq!((c.cwnd_reno(), c.dwnd()), (30.0, 20.0));
        // the sender deflates to ssthresh and leaves recovery: nothing to reconcile
        st.cwnd = 50.0;
        c.on_phase(&mut st, Phase::Recovery, Phase::Open);
        assert_eq!((c.cwnd_reno(), c.dwnd()), (30.0, 20.0));

        let (mut c, mut st) = split(ns2(), 60.0, 40.0);
        assert_eq!(c.ssthresh_after(&st, &loss(100)), 50.0);
        st.cwnd = 50.0;
        c.on_phase(&mut st, Phase::Recovery, Phase::Open);
        assert_eq!((c.cwnd_reno(), c.dwnd()), (50.0, 0.0));
        // the port keeps dwnd when neither part alone exceeds the new window: cwnd 30 and
        // dwnd 40 into 50 give cwnd 10; 40 and 40 halved to 40 leave the Reno part empty
        let (mut c, mut st) = split(ns2(), 30.0, 40.0);
        st.cwnd = 50.0;
        c.on_phase(&mut st, Phase::Loss, Phase::Open);
        assert_eq!((c.cwnd_reno(), c.dwnd()), (10.0, 40.0));
        let (mut c, mut st) = split(ns2(), 40.0, 40.0);
        st.cwnd = c.ssthresh_after(&st, &loss(80));
        c.on_phase(&mut st, Phase::Recovery, Phase::Open);
        assert_eq!((st.cwnd, c.cwnd_reno(), c.dwnd()), (40.0, 0.0, 40.0));
        // paper after Tahoe's restart at 1: dwnd cannot be kept
        let (mut c, mut st) = split(paper(), 60.0, 40.0);
        c.ssthresh_after(&st, &loss(100));
        st.cwnd = 1.0;
        c.on_phase(&mut st, Phase::Recovery, Phase::Open);
        assert_eq!((c.cwnd_reno(), c.dwnd()), (1.0, 0.0));
        // paper with a Reno part larger than win·(1 − β): dwnd 0, ssthresh = cwnd/2
        let (mut c, st) = split(paper(), 80.0, 0.0);
        assert_eq!(c.ssthresh_after(&st, &loss(60)), 40.0);
        assert_eq!(c.dwnd(), 0.0);
        // never below 2
        let (mut c, st) = split(paper(), 2.0, 0.0);
        assert_eq!(c.ssthresh_after(&st, &loss(2)), 2.0);
    }

    /// A timeout empties dwnd; the Reno part follows the sender's window of 1 on the next ACK
    /// and slow-starts from there.
    #[test]
    fn timeout_empties_dwnd() {
        for c0 in [paper(), ns2()] {
            let (mut c, mut st) = split(c0, 60.0, 40.0);
            let ss = c.ssthresh_after(&st, &loss_of(LossKind::Timeout, 100));
            assert_eq!(ss, 50.0);
            assert_eq!(c.dwnd(), 0.0);
            st.ssthresh = ss;
            st.cwnd = 1.0;
            c.on_ack(&mut st, &ack());
            assert_eq!((c.cwnd_reno(), c.dwnd(), st.cwnd), (2.0, 0.0, 2.0), "{:?}", c.p.variant);
        }
    }

    /// Slow start is shared and credited to the Reno part; rounds in slow start record diff but
    /// never touch dwnd.
    #[test]
    fn slow_start_leaves_dwnd_alone() {
        for c0 in [paper(), ns2()] {
            let mut c = c0;
            let mut st = CcState::new(2.0, f64::INFINITY, 1460);
            round(&mut c, &mut st, 100 * MS, 3);
            round(&mut c, &mut st, 100 * MS, 6);
            assert_eq!((st.cwnd, c.cwnd_reno(), c.dwnd()), (8.0, 8.0, 0.0));
            assert_eq!(c.diff(), 0.0);
            assert_eq!(c.base_rtt(), 100 * MS);
        }
    }

    /// Congestion avoidance: paper +1/win per ACK; port +1 per ⌊win⌋ ACKs.
    #[test]
    fn reno_part_grows_one_segment_per_window() {
        let (mut c, mut st) = split(paper(), 8.0, 2.0);
        c.on_ack(&mut st, &ack());
        assert!((c.cwnd_reno() - 8.1).abs() < 1e-12 && (st.cwnd - 10.1).abs() < 1e-12);
        let (mut c, mut st) = split(ns2(), 8.0, 2.0);
        for i in 1..=10 {
            c.on_ack(&mut st, &ack());
            assert_eq!(c.cwnd_reno(), if i < 10 { 8.0 } else { 9.0 }, "ACK {i}");
        }
        assert_eq!(st.cwnd, 11.0);
    }

    /// The draft's low_wnd: below it the paper variant's dwnd does not grow; 0 disables it.
    /// The port needs more than 2 RTT samples per round.
    #[test]
    fn low_wnd_and_sample_count_gate_the_increase() {
        let (mut c, mut st) = split(paper(), 30.0, 0.0);
        round(&mut c, &mut st, 100 * MS, 3);
        assert_eq!(c.dwnd(), 0.0, "win 30 < 41");
        let (mut c, mut st) = split(paper(), 30.0, 0.0);
        c.p.low_wnd = 0.0;
        round(&mut c, &mut st, 100 * MS, 3);
        assert!((c.dwnd() - paper_increment(30.0 + 0.1, 0.125, 0.75)).abs() < 1e-3, "{}", c.dwnd());
        let (mut c, mut st) = split(ns2(), 100.0, 0.0);
        c.on_ack(&mut st, &AckSample { newly_acked: 50, rtt: Some(100 * MS), ..ack() });
        c.on_ack(&mut st, &AckSample { newly_acked: 50, rtt: Some(100 * MS), round_start: true, ..ack() });
        assert_eq!(c.dwnd(), 0.0, "two samples: no decision");
        assert!(c.diff().is_nan());
    }

    #[test]
    fn metrics_name_the_split_base_rtt_and_diff() {
        let c = paper();
        let mut m = Vec::new();
        c.metrics(&mut |k, x| m.push((k, x)));
        assert!(m.iter().all(|(_, x)| x.is_nan()), "{m:?}");
        let (mut c, mut st) = split(paper(), 100.0 - 0.03, 0.0);
        round(&mut c, &mut st, 110 * MS, 3);
        let mut m = Vec::new();
        c.metrics(&mut |k, x| m.push((k, x)));
        let names: Vec<_> = m.iter().map(|(k, _)| *k).collect();
        assert_eq!(names, ["ctcp_dwnd", "ctcp_cwnd_reno", "ctcp_base_rtt_s", "ctcp_diff"]);
        assert!((m[0].1 - 2.953).abs() < 1e-3);
        assert!((m[1].1 - 100.0).abs() < 1e-3);
        assert_eq!(m[2].1, 0.1);
        assert!((m[3].1 - 9.09).abs() < 1e-2);
    }
}
