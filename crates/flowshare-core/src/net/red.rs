//! Random Early Detection (Floyd and Jacobson, "Random Early Detection Gateways for Congestion
//! Avoidance", IEEE/ACM ToN 1(4), 1993), with the refinements of ns-2.35's `Queue/RED`
//! (`queue/red.cc`): gentle mode, the "wait" spacing of drops, byte mode, automatic parameters,
//! and Adaptive RED (Floyd, Gummadi and Shenker, "Adaptive RED", 2001).
//!
//! RED decides on arrival, so a link with RED keeps the FIFO fast path of ADR 0003: the link
//! asks [`Red::early_drop`] before its hard limit check and otherwise precomputes the departure
//! as for DropTail.
//!
//! On every arrival:
//!
//! 1. The average follows an EWMA of the instantaneous queue `q` (packets waiting, not counting
//!    the one in transmission, as in ns-2; bytes in byte mode):
//!    `avg ← (1 − w_q)^(m+1) · avg + w_q · q`, where `m = ⌊C · idle⌋` is the number of
//!    typical packets the link could have sent while it was idle (0 unless the arrival finds
//!    the link idle; C is the capacity in `mean_pktsize` packets per second). This is
//!    Floyd–Jacobson's idle-time correction, applied as ns-2 applies it.
//! 2. `count` (packets since the last drop; bytes / `mean_pktsize` in byte mode) grows by one.
//! 3. If `avg < min_th` or at most one packet (byte) waits, the packet is accepted.
//!    If `avg ≥ max_th` (`2·max_th` in gentle mode), it is dropped. The first arrival after the
//!    average crosses `min_th` is accepted and restarts `count` at 1 (ns-2's `old` flag).
//!    Otherwise
//!    `p_b = max_p (avg − min_th)/(max_th − min_th)` below `max_th`, and in gentle mode
//!    `p_b = max_p + (1 − max_p)(avg − max_th)/max_th` between `max_th` and `2·max_th`;
//!    then the count-based spacing gives `p_a = p_b / (1 − count·p_b)` (1 once
//!    `count·p_b ≥ 1`), or with `wait` (ns-2's default) `p_a = 0` while `count·p_b < 1`,
//!    `p_b / (2 − count·p_b)` while it is below 2 and 1 after; in byte mode
//!    `p_a ← p_a · size / mean_pktsize`. The packet is dropped with probability `p_a`, drawn
//!    from the queue's own random stream, and a drop resets `count` to 0.
//!
//! Adaptive RED: at the first arrival at least `interval` (0.5 s) after the last adaptation,
//! if `avg` is below `min_th + 0.4 (max_th − min_th)` and `max_p > bottom`, then
//! `max_p ← β · max_p` (β = 0.9); if it is above `min_th + 0.6 (max_th − min_th)` and
//! `max_p < top` (0.5), then `max_p ← max_p + min(α, max_p / 4)` (α = 0.01).

use crate::engine::{uniform, Stream};
use crate::units::{Time, NS_PER_SEC};

/// Adaptive RED's constants (ns-2.35 `alpha_`, `beta_`, `interval_`, `top_`, `bottom_`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Adaptive {
    /// Time between adaptations, ns.
    pub interval: Time,
    /// Additive increase of `max_p` (capped at `max_p / 4`).
    pub alpha: f64,
    /// Multiplicative decrease of `max_p`.
    pub beta: f64,
    /// `max_p` is not increased beyond this.
    pub top: f64,
    /// `max_p` is not decreased below this.
    pub bottom: f64,
}

impl Adaptive {
    /// ns-2.35's defaults for a link of `rate_bps`: α = 0.01, β = 0.9, 0.5 s, top 0.5, and
    /// bottom = min(0.01, 80000 / rate) (ns-2 `bottom_ 0`: at most 1/W for the window W of a
    /// 100 ms, 1000-byte-packet flow at the link rate).
    pub fn ns2(rate_bps: f64) -> Self {
        Adaptive { interval: NS_PER_SEC / 2, alpha: 0.01, beta: 0.9, top: 0.5, bottom: (80_000.0 / rate_bps).min(0.01) }
    }
}

/// RED's resolved parameters (no "automatic" values left).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedParams {
    /// Lower threshold of the average, in packets (of `mean_pktsize` bytes in byte mode).
    pub min_th: f64,
    /// Upper threshold, same unit.
    pub max_th: f64,
    /// Drop probability at `max_th` (the initial value under Adaptive RED).
    pub max_p: f64,
    /// EWMA weight.
    pub w_q: f64,
    /// Probability rises from `max_p` to 1 between `max_th` and `2·max_th`.
    pub gentle: bool,
    /// Uniform spacing of drops between 1/p_b and 2/p_b arrivals (ns-2 `wait_`).
    pub wait: bool,
    /// Byte mode: the queue is measured in bytes and p_b scales with the packet size.
    pub bytes: bool,
    /// Mark ECN-capable packets (set CE) instead of dropping them early; forced drops (the
    /// average beyond the drop-all threshold) stay drops, as in ns-2's `setbit_`.
    pub ecn: bool,
    /// ns-2.35's `use_mark_p_` with this `mark_p_`: no drop-all threshold (beyond it p_b is 1
    /// and the count spacing still decides), and with `ecn` a packet is marked only while p_b
    /// is below `mark_p`, dropped above it. `None`: the threshold forces drops and every early
    /// drop of an ECN-capable packet is a mark.
    pub mark_p: Option<f64>,
    /// Typical packet size, bytes.
    pub mean_pktsize: u32,
    /// Link capacity in `mean_pktsize` packets per second (ns-2 `ptc`).
    pub ptc: f64,
    /// Adaptive RED, if on.
    pub adaptive: Option<Adaptive>,
}

/// ns-2.35's automatic EWMA weight for `q_weight_ = -1` (`REDQueue::initialize_params`):
/// `w_q = 1 − exp(−1 / (10 · rtt · C))` with `rtt = max(0.1 s, 3 (delay + 1/C))` and C the
/// capacity in packets per second. For links with `rtt` = 0.1 s this is `1 − exp(−1/C)`.
pub fn auto_w_q(ptc: f64, delay_s: f64) -> f64 {
    let rtt = (3.0 * (delay_s + 1.0 / ptc)).max(0.1);
    1.0 - (-1.0 / (10.0 * rtt * ptc)).exp()
}

/// ns-2.35's automatic lower threshold for `thresh_ = 0`: `max(5, target_delay · C / 2)`
/// packets. The automatic upper threshold (`maxthresh_ = 0`) is three times the lower one.
pub fn auto_min_th(ptc: f64, target_delay_s: f64) -> f64 {
    (target_delay_s * ptc / 2.0).max(5.0)
}

/// State of one RED queue.
#[derive(Clone, Debug)]
pub struct Red {
    /// Parameters.
    pub params: RedParams,
    /// Thresholds in queue units (bytes in byte mode).
    th_min: f64,
    th_max: f64,
    /// Current `max_p` (changes under Adaptive RED).
    max_p: f64,
    /// Average queue, queue units.
    avg: f64,
    count: u64,
    count_bytes: u64,
    /// The average was at or above `min_th` with a non-empty queue at the previous arrival.
    old: bool,
    last_adapt: Time,
    rng: Stream,
    /// Time of the last update of `avg` and the integral of `avg` over time up to it.
    last_t: Time,
    avg_integral: f64,
    /// Updates after this time are not integrated (the end of the run).
    horizon: Time,
    /// The last positive decision was a forced drop (average beyond the drop-all threshold).
    forced: bool,
    /// p_b of the last early decision.
    last_p_b: f64,
}

/// What RED does with an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Queue it (the limit may still refuse it).
    Accept,
    /// Queue it with its CE bit set.
    Mark,
    /// Drop it.
    Drop,
}

impl Red {
    /// A RED queue with an empty average, drawing from `rng`.
    pub fn new(params: RedParams, rng: Stream) -> Self {
        let unit = if params.bytes { f64::from(params.mean_pktsize) } else { 1.0 };
        Red {
            params,
            th_min: params.min_th * unit,
            th_max: params.max_th * unit,
            max_p: params.max_p,
            avg: 0.0,
            count: 0,
            count_bytes: 0,
            old: false,
            last_adapt: 0,
            rng,
            last_t: 0,
            avg_integral: 0.0,
            horizon: Time::MAX,
            forced: false,
            last_p_b: 0.0,
        }
    }

    /// Stop integrating the average after `t` (the end of the run).
    pub fn set_horizon(&mut self, t: Time) {
        self.horizon = t;
    }

    /// Current `max_p`.
    pub fn max_p(&self) -> f64 {
        self.max_p
    }

    fn unit(&self) -> f64 {
        if self.params.bytes {
            f64::from(self.params.mean_pktsize)
        } else {
            1.0
        }
    }

    /// The average, in packets (in byte mode: bytes / `mean_pktsize`).
    pub fn avg_pkts(&self) -> f64 {
        self.avg / self.unit()
    }

    /// Time average of the average from 0 to `end`, in packets as [`Red::avg_pkts`].
    pub fn mean_avg_pkts(&self, end: Time) -> f64 {
        if end == 0 {
            return f64::NAN;
        }
        let tail = end.saturating_sub(self.last_t) as f64 * self.avg;
        (self.avg_integral + tail) / end as f64 / self.unit()
    }

    /// Drop probability before count spacing, `p_b`, for an average `avg` (queue units).
    pub fn p_b(&self, avg: f64) -> f64 {
        let p = if avg >= self.th_max {
            if self.params.gentle {
                self.max_p + (1.0 - self.max_p) * (avg - self.th_max) / self.th_max
            } else {
                1.0
            }
        } else {
            self.max_p * (avg - self.th_min) / (self.th_max - self.th_min)
        };
        p.clamp(0.0, 1.0)
    }

    /// Drop probability of an arrival of `size` bytes with the current count: `p_a`.
    pub fn p_a(&self, p_b: f64, size: u32) -> f64 {
        let n = if self.params.bytes {
            (self.count_bytes / u64::from(self.params.mean_pktsize)) as f64
        } else {
            self.count as f64
        };
        let mut p = if self.params.wait {
            if n * p_b < 1.0 {
                0.0
            } else if n * p_b < 2.0 {
                p_b / (2.0 - n * p_b)
            } else {
                1.0
            }
        } else if n * p_b < 1.0 {
            p_b / (1.0 - n * p_b)
        } else {
            1.0
        };
        if self.params.bytes && p < 1.0 {
            p = p * f64::from(size) / f64::from(self.params.mean_pktsize);
        }
        p.min(1.0)
    }

    /// Set the average (queue units), for tests.
    #[cfg(test)]
    pub(crate) fn set_avg(&mut self, avg: f64) {
        self.avg = avg;
    }

    /// Update the average for an arrival at `at` that finds `q_pkts` packets (`q_bytes`
    /// bytes) waiting behind the one in transmission; `idle_since` is the end of the last
    /// transmission when the link is idle.
    pub fn update_avg(&mut self, at: Time, q_pkts: u32, q_bytes: u64, idle_since: Option<Time>) {
        let until = at.min(self.horizon);
        if until > self.last_t {
            self.avg_integral += (until - self.last_t) as f64 * self.avg;
            self.last_t = until;
        }
        let w = self.params.w_q;
        let mut decay = 1.0 - w;
        if let Some(since) = idle_since {
            let idle_s = at.saturating_sub(since) as f64 / NS_PER_SEC as f64;
            let m = (self.params.ptc * idle_s).floor();
            decay *= (1.0 - w).powf(m);
        }
        let q = if self.params.bytes { q_bytes as f64 } else { f64::from(q_pkts) };
        self.avg = decay * self.avg + w * q;
        if let Some(a) = self.params.adaptive {
            if at > self.last_adapt + a.interval {
                self.adapt(a);
                self.last_adapt = at;
            }
        }
    }

    fn adapt(&mut self, a: Adaptive) {
        let part = 0.4 * (self.th_max - self.th_min);
        if self.avg < self.th_min + part && self.max_p > a.bottom {
            self.max_p *= a.beta;
        } else if self.avg > self.th_max - part && self.max_p < a.top {
            self.max_p += a.alpha.min(self.max_p / 4.0);
        }
    }

    /// Decide on an arrival at `at` of `size` bytes that finds `q_pkts` packets (`q_bytes`
    /// bytes) waiting behind the one in transmission; `idle_since` is the end of the last
    /// transmission when the link is idle. Returns true when RED drops the packet.
    pub fn early_drop(&mut self, at: Time, size: u32, q_pkts: u32, q_bytes: u64, idle_since: Option<Time>) -> bool {
        self.verdict(at, size, q_pkts, q_bytes, idle_since, false) == Verdict::Drop
    }

    /// [`Red::early_drop`] for a packet that is ECN-capable (`ect`) or not: with `ecn` on, an
    /// early drop of an ECN-capable packet becomes a mark.
    pub fn verdict(
        &mut self,
        at: Time,
        size: u32,
        q_pkts: u32,
        q_bytes: u64,
        idle_since: Option<Time>,
        ect: bool,
    ) -> Verdict {
        if !self.decide(at, size, q_pkts, q_bytes, idle_since) {
            return Verdict::Accept;
        }
        let mark_p_exceeded = self.params.mark_p.is_some_and(|m| self.last_p_b >= m);
        if self.forced || !(ect && self.params.ecn) || mark_p_exceeded {
            Verdict::Drop
        } else {
            Verdict::Mark
        }
    }

    fn decide(&mut self, at: Time, size: u32, q_pkts: u32, q_bytes: u64, idle_since: Option<Time>) -> bool {
        self.forced = false;
        self.update_avg(at, q_pkts, q_bytes, idle_since);
        self.count += 1;
        self.count_bytes += u64::from(size);
        let q = if self.params.bytes { q_bytes } else { u64::from(q_pkts) };
        if self.avg < self.th_min || q <= 1 {
            self.old = false;
            return false;
        }
        let ceiling = if self.params.gentle { 2.0 * self.th_max } else { self.th_max };
        if self.avg >= ceiling && self.params.mark_p.is_none() {
            self.reset_count();
            self.forced = true;
            return true;
        }
        if !self.old {
            self.old = true;
            self.count = 1;
            self.count_bytes = u64::from(size);
            return false;
        }
        self.last_p_b = self.p_b(self.avg);
        let p = self.p_a(self.last_p_b, size);
        if p <= 0.0 {
            return false;
        }
        let u = uniform(&mut self.rng);
        if u < p {
            self.reset_count();
            return true;
        }
        false
    }

    /// The packet was dropped because the queue was full: the count restarts (ns-2).
    pub fn reset_count(&mut self) {
        self.count = 0;
        self.count_bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    fn params() -> RedParams {
        RedParams {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            w_q: 0.002,
            gentle: false,
            wait: false,
            bytes: false,
            ecn: false,
            mark_p: None,
            mean_pktsize: 1000,
            ptc: 1250.0,
            adaptive: None,
        }
    }

    fn red(p: RedParams) -> Red {
        Red::new(p, stream(1, "test/red"))
    }

    /// ns-2.35's `use_mark_p_` (`mark_p = 0.1`): between max_th and 2·max_th (p_b ≥ max_p =
    /// 0.1) ECN-capable packets are dropped, not marked; beyond 2·max_th there is no forced
    /// drop, so in byte mode a small packet right after a drop still passes the count spacing.
    #[test]
    fn mark_p_drops_ecn_packets_above_it_and_has_no_drop_all_threshold() {
        let base = RedParams { w_q: 1.0, gentle: true, wait: true, ecn: true, ..params() };
        let count = |r: &mut Red, q: u32| {
            let mut v = (0, 0, 0);
            for _ in 0..400 {
                match r.verdict(0, 1000, q, u64::from(q) * 1000, None, true) {
                    Verdict::Accept => v.0 += 1,
                    Verdict::Mark => v.1 += 1,
                    Verdict::Drop => v.2 += 1,
                }
            }
            v
        };
        // q = 20: p_b = 0.1 + 0.9·5/15 = 0.4.
        let (_, marks, drops) = count(&mut red(base), 20);
        assert!(marks > 0 && drops == 0, "marks {marks}, drops {drops}");
        let (_, marks, drops) = count(&mut red(RedParams { mark_p: Some(0.1), ..base }), 20);
        assert!(marks == 0 && drops > 0, "marks {marks}, drops {drops}");
        // q = 40 ≥ 2·max_th, byte mode: a 100-byte arrival right after a drop.
        let bytes = RedParams { bytes: true, ..base };
        for (mark_p, passes) in [(None, false), (Some(0.1), true)] {
            let mut r = red(RedParams { mark_p, ..bytes });
            for _ in 0..3 {
                r.verdict(0, 1000, 40, 40_000, None, true);
            }
            assert_eq!(r.verdict(0, 1000, 40, 40_000, None, true), Verdict::Drop, "{mark_p:?}");
            let small = r.verdict(0, 100, 40, 40_000, None, true);
            assert_eq!(small == Verdict::Accept, passes, "{mark_p:?}: {small:?}");
        }
    }

    #[test]
    fn p_b_is_the_linear_ramp_then_one() {
        let r = red(params());
        assert_eq!(r.p_b(4.0), 0.0);
        assert!((r.p_b(5.0) - 0.0).abs() < 1e-12);
        assert!((r.p_b(10.0) - 0.05).abs() < 1e-12);
        assert!((r.p_b(14.0) - 0.09).abs() < 1e-12);
        assert_eq!(r.p_b(15.0), 1.0);
        assert_eq!(r.p_b(40.0), 1.0);
    }

    #[test]
    fn gentle_rises_from_max_p_to_one_between_max_th_and_twice_it() {
        let r = red(RedParams { gentle: true, ..params() });
        assert!((r.p_b(10.0) - 0.05).abs() < 1e-12);
        assert!((r.p_b(15.0) - 0.1).abs() < 1e-12);
        // Half-way: 0.1 + 0.9 * 7.5 / 15 = 0.55.
        assert!((r.p_b(22.5) - 0.55).abs() < 1e-12);
        assert!((r.p_b(30.0) - 1.0).abs() < 1e-12);
        assert_eq!(r.p_b(45.0), 1.0);
    }

    #[test]
    fn count_spacing_follows_the_formula() {
        let mut r = red(params());
        r.count = 5;
        // p_a = 0.05 / (1 - 5 * 0.05) = 0.0667
        assert!((r.p_a(0.05, 1000) - 0.05 / 0.75).abs() < 1e-12);
        r.count = 20;
        assert_eq!(r.p_a(0.05, 1000), 1.0);
        let mut w = red(RedParams { wait: true, ..params() });
        w.count = 10;
        assert_eq!(w.p_a(0.05, 1000), 0.0, "wait: no drop while count * p_b < 1");
        w.count = 30;
        assert!((w.p_a(0.05, 1000) - 0.05 / 0.5).abs() < 1e-12);
        w.count = 40;
        assert_eq!(w.p_a(0.05, 1000), 1.0);
    }

    #[test]
    fn byte_mode_scales_with_size_and_counts_bytes() {
        let mut r = red(RedParams { bytes: true, mean_pktsize: 500, ..params() });
        // Thresholds are in bytes: 5 and 15 mean-size packets.
        assert!((r.p_b(10.0 * 500.0) - 0.05).abs() < 1e-12);
        r.count_bytes = 2_750; // 5 mean-size packets (integer division, as ns-2)
        let base = 0.05 / (1.0 - 5.0 * 0.05);
        assert!((r.p_a(0.05, 1500) - base * 3.0).abs() < 1e-12);
        assert!((r.p_a(0.05, 40) - base * 40.0 / 500.0).abs() < 1e-12);
    }

    #[test]
    fn ewma_and_idle_time_correction() {
        let mut r = red(RedParams { w_q: 0.1, ..params() });
        r.update_avg(0, 10, 0, None);
        assert!((r.avg - 1.0).abs() < 1e-12);
        r.update_avg(1, 10, 0, None);
        assert!((r.avg - 1.9).abs() < 1e-12);
        // Idle for 8 ms at 1250 packets/s: m = 10 packet times, avg ← 0.9^11 · avg.
        r.update_avg(9_000_000, 0, 0, Some(1_000_000));
        assert!((r.avg - 1.9 * 0.9f64.powi(11)).abs() < 1e-12, "{}", r.avg);
        // A fraction of a packet time does not count.
        let before = r.avg;
        r.update_avg(9_000_500, 0, 0, Some(9_000_000));
        assert!((r.avg - before * 0.9).abs() < 1e-15);
    }

    #[test]
    fn arrivals_below_min_th_are_never_dropped_and_above_max_th_always() {
        let mut r = red(params());
        r.set_avg(4.0);
        for i in 0..1000 {
            assert!(!r.early_drop(i, 1000, 4, 4000, None));
        }
        let mut r = red(RedParams { w_q: 1e-9, ..params() });
        r.set_avg(15.5);
        for i in 0..100 {
            assert!(r.early_drop(i, 1000, 16, 16000, None));
        }
        // Gentle: above max_th some arrivals still pass.
        let mut g = red(RedParams { w_q: 1e-9, gentle: true, ..params() });
        g.set_avg(20.0);
        let drops = (0..1000).filter(|&i| g.early_drop(i, 1000, 20, 20000, None)).count();
        assert!(drops > 300 && drops < 1000, "{drops}");
    }

    /// Expected drops per arrival at a fixed `p_b`, from the renewal argument of Floyd and
    /// Jacobson §7: the k-th arrival after a drop (count = k) is dropped with hazard
    /// `h(k) = p_b / (1 − k·p_b)` (or, with `wait`, 0 while `k·p_b < 1` and
    /// `p_b / (2 − k·p_b)` after), scaled by size / mean in byte mode where k counts
    /// mean-size packets; the rate is 1 / E[gap]. Written out independently of `Red::p_a`.
    fn expected_rate(p_b: f64, size: f64, mean: f64, bytes: bool, wait: bool) -> f64 {
        let (mut survive, mut mean_gap) = (1.0, 0.0);
        for k in 1..100_000u64 {
            let n = if bytes { (k as f64 * size / mean).floor() } else { k as f64 };
            let mut h = match (wait, n * p_b) {
                (false, x) if x < 1.0 => p_b / (1.0 - x),
                (true, x) if x < 1.0 => 0.0,
                (true, x) if x < 2.0 => p_b / (2.0 - x),
                _ => 1.0,
            };
            if bytes && h < 1.0 {
                h = (h * size / mean).min(1.0);
            }
            mean_gap += k as f64 * survive * h;
            survive *= 1.0 - h;
            if survive == 0.0 {
                break;
            }
        }
        1.0 / mean_gap
    }

    #[test]
    fn drop_rate_matches_count_spacing_statistically() {
        // With 1/p_b = N the gaps are uniform on 1..N−1 (rate 2 p_b), and with `wait` on
        // N..2N−1 (rate 2 p_b / (3 − p_b)).
        assert!((expected_rate(0.05, 1000.0, 1000.0, false, false) - 0.1).abs() < 1e-12);
        assert!((expected_rate(0.05, 1000.0, 1000.0, false, true) - 1.0 / 29.5).abs() < 1e-12);
        for (wait, bytes, size, avg) in [
            (false, false, 1000, 10.0),
            (false, false, 1000, 7.0),
            (true, false, 1000, 10.0),
            (true, false, 1000, 6.3),
            (false, true, 1500, 10.0),
            (false, true, 400, 10.0),
            (true, true, 1500, 12.0),
        ] {
            let unit = if bytes { 1000.0 } else { 1.0 };
            let mut r = red(RedParams { w_q: 1e-12, wait, bytes, mean_pktsize: 1000, ..params() });
            r.set_avg(avg * unit);
            r.old = true;
            let p_b = r.p_b(avg * unit);
            let expect = expected_rate(p_b, f64::from(size), 1000.0, bytes, wait);
            let n = 200_000;
            let drops = (0..n).filter(|&i| r.early_drop(i, size, 10, 10_000, None)).count();
            let rate = drops as f64 / n as f64;
            // Drops are more regular than Bernoulli trials, so the binomial standard error is
            // an upper bound; 4 of them is far outside chance.
            let se = (expect * (1.0 - expect) / n as f64).sqrt();
            assert!(
                (rate - expect).abs() < 4.0 * se,
                "wait {wait} bytes {bytes} size {size} avg {avg}: rate {rate} expected {expect} (se {se})"
            );
        }
    }

    #[test]
    fn byte_mode_drops_large_packets_more() {
        // Per packet, a 1500-byte packet is dropped more often than a 500-byte one; per byte
        // the rates are close (RED's byte mode aims at equal drop rates per byte).
        let rate = |size: u32| {
            let mut r = red(RedParams { bytes: true, mean_pktsize: 1000, w_q: 1e-12, ..params() });
            r.set_avg(10_000.0);
            r.old = true;
            (0..200_000u64).filter(|&i| r.early_drop(i, size, 10, 10_000, None)).count() as f64 / 200_000.0
        };
        let (big, small) = (rate(1500), rate(500));
        assert!(big > 2.0 * small, "{big} {small}");
        let per_byte = (big / 1500.0) / (small / 500.0);
        assert!((per_byte - 1.0).abs() < 0.35, "{per_byte}");
    }

    #[test]
    fn no_early_drop_with_at_most_one_packet_waiting() {
        let mut r = red(RedParams { w_q: 1e-12, ..params() });
        r.set_avg(14.0);
        r.old = true;
        assert!((0..1000).all(|i| !r.early_drop(i, 1000, 1, 1000, None)));
    }

    #[test]
    fn automatic_parameters_equal_ns2() {
        // `ns` 2.35, Queue/RED with mean_pktsize_ 1000 and defaults (q_weight_ -1, thresh_ 0,
        // maxthresh_ 0, targetdelay_ 0.005) on a duplex link; values read back from the queue
        // (docs/queues.md, "Automatic parameters"):
        // 10Mb 20ms  -> q_weight_ 0.000799680085316  thresh_ 5      maxthresh_ 15    bottom_ 0.008
        // 1Gb 20ms   -> q_weight_ 7.99996800005e-06  thresh_ 312.5  maxthresh_ 937.5 bottom_ 8e-05
        // 100Mb 1ms  -> q_weight_ 7.99968000853e-05  thresh_ 31.25  maxthresh_ 93.75
        // 1Gb 100ms  -> q_weight_ 2.66644979541e-06  thresh_ 312.5
        // 1.5Mb 10ms -> q_weight_ 0.00531913636139   thresh_ 5                       bottom_ 0.01
        // 10Mb 20ms, mean_pktsize_ 500 -> q_weight_ 0.000399920010666 thresh_ 6.25
        let cases = [
            (10e6, 0.020, 1000.0, 0.000799680085316, 5.0, 0.008),
            (1e9, 0.020, 1000.0, 7.99996800005e-06, 312.5, 8e-05),
            (100e6, 0.001, 1000.0, 7.99968000853e-05, 31.25, 0.0008),
            (1e9, 0.100, 1000.0, 2.66644979541e-06, 312.5, 8e-05),
            (1.5e6, 0.010, 1000.0, 0.00531913636139, 5.0, 0.01),
            (10e6, 0.020, 500.0, 0.000399920010666, 6.25, 0.008),
        ];
        for (bw, delay, pkt, w_q, th, bottom) in cases {
            let ptc = bw / (8.0 * pkt);
            let w = auto_w_q(ptc, delay);
            assert!((w / w_q - 1.0).abs() < 1e-9, "{bw} {delay}: {w} vs {w_q}");
            assert_eq!(auto_min_th(ptc, 0.005), th);
            assert!((Adaptive::ns2(bw).bottom - bottom).abs() < 1e-15);
        }
    }

    #[test]
    fn adaptive_red_moves_max_p_towards_the_target_band() {
        let a = Adaptive::ns2(10e6);
        let mut r = red(RedParams { w_q: 1e-12, adaptive: Some(a), ..params() });
        // Average above the band: max_p grows by min(0.01, max_p/4) each 0.5 s.
        r.set_avg(14.0);
        let mut t = 0;
        let mut last = r.max_p();
        for _ in 0..10 {
            t += 600_000_000;
            r.update_avg(t, 14, 0, None);
            assert!(r.max_p() > last);
            last = r.max_p();
        }
        assert!((last - 0.2).abs() < 1e-9, "{last}");
        // Within the band (10 ± 2): no change.
        r.set_avg(10.0);
        t += 600_000_000;
        r.update_avg(t, 10, 0, None);
        assert_eq!(r.max_p(), last);
        // Below the band: ×0.9 per interval, not below bottom (the last step may cross it).
        r.set_avg(6.0);
        for _ in 0..100 {
            t += 600_000_000;
            r.update_avg(t, 6, 0, None);
        }
        assert!(r.max_p() < a.bottom && r.max_p() > a.bottom * 0.9, "{}", r.max_p());
        // Only once per interval.
        let before = r.max_p();
        r.set_avg(14.0);
        r.update_avg(t + 100_000_000, 14, 0, None);
        assert_eq!(r.max_p(), before);
    }
}
