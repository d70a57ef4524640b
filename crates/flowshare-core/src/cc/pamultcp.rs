//! PA-MulTCP (Kuo and Fu, "Probe-Aided MulTCP: An Aggregate Congestion Control Mechanism",
//! ACM SIGCOMM Computer Communication Review 38(1), 2008): one connection carrying N flows'
//! data through two window loops.
//!
//! - The probe loop is AIMD(1, 1/2), a standard TCP flow; its loss-event rate p is estimated at
//!   the sender by TFRC's average-loss-interval method ([`ProbeLossRate`]).
//! - The adjusting loop is AIMD(√N', 2/(1 + 3N'^1.5)), capped at
//!   W_max = sqrt(2a/(b(2 − b)p)), the window N' TCP flows would reach at that loss rate
//!   (eq. (9)). N' is N − 1 by default, so the aggregate takes N flowshares with the probe loop
//!   (resolution pamultcp:A6).
//! - New segments are assigned to an open loop (in-flight < ⌊cwnd⌋) consecutively or
//!   interleaved (§4.3); retransmissions keep their loop. A loss reduces only its loop, once
//!   per loop recovery episode; a timeout collapses the loop owning the oldest outstanding
//!   segment (or both). The connection's cwnd is the loops' sum, so the sender's SACK recovery
//!   paces retransmissions over both.
//! - When a member joins or leaves, a, b and W_max follow the new N at once and the adjusting
//!   loop's ssthresh and cwnd are clamped to W_max.

use super::aggregate::{loop_sum_callbacks, Join, Roster, SegmentLog};
use super::host::{Delivered, GroupControl, LostSegment, MemberId, Members, Tag};
use super::loops::Loop;
use super::{AckSample, CcState, LossKind, LossSignal};
use crate::tfrc::loss_history::wali_weights;
use crate::units::Time;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Tag of the probe loop.
pub const PROBE: Tag = 0;
/// Tag of the adjusting loop.
pub const ADJUST: Tag = 1;
/// Loss intervals averaged (RFC 5348's eight).
const INTERVALS: usize = 8;

/// How new segments are spread over the two loops (§4.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Assignment {
    /// A loop gets consecutive segments until it is closed, then the other.
    #[default]
    Consecutive,
    /// Segments alternate between the loops while both are open.
    Interleave,
}

/// Which loop a retransmission timeout collapses (resolution pamultcp:A10).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeoutRule {
    /// The loop owning the oldest outstanding segment, the one the timer was for.
    #[default]
    Owner,
    /// Both loops.
    Both,
}

/// The adjusting loop's weight N' (resolution pamultcp:A6).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AdjustWeight {
    /// N − 1: with the probe loop the aggregate takes N flowshares.
    #[default]
    #[serde(rename = "n_minus_1")]
    NMinus1,
    /// N, as eqs. (9) and (10) are written.
    N,
}

/// PA-MulTCP's options (`tcp.cc = { algo = "pamultcp", n = 10 }`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PaMulTcpParams {
    /// Members at the start (long-lived flows of the aggregate).
    pub n: u32,
    /// Segment assignment.
    pub assignment: Assignment,
    /// Timeout rule.
    pub timeout: TimeoutRule,
    /// The adjusting loop's weight.
    pub adjust_weight: AdjustWeight,
}

/// The adjusting loop's a = √N' and b = 2/(1 + 3N'^1.5) (§4.2).
pub fn adjust_aimd(weight: f64) -> (f64, f64) {
    (weight.sqrt(), 2.0 / (1.0 + 3.0 * weight.powf(1.5)))
}

/// W_max = sqrt(2a/(b(2 − b)p)) (eq. (9)).
pub fn w_max(a: f64, b: f64, p: f64) -> f64 {
    (2.0 * a / (b * (2.0 - b) * p)).sqrt()
}

/// The probe loop's loss-event rate by TFRC's average loss interval (RFC 5348 §5.4), at the
/// sender, in probe-loop packets (resolutions pamultcp:A12 and A13).
#[derive(Clone, Debug, Default)]
pub struct ProbeLossRate {
    /// Closed intervals, most recent first.
    closed: VecDeque<f64>,
    /// Probe packet index and send time of the first loss of the current event.
    event: Option<(u64, Time)>,
    /// Probe packets sent so far.
    sent: u64,
    /// Loss events so far.
    events: u64,
}

impl ProbeLossRate {
    /// One more probe packet sent.
    pub fn on_sent(&mut self) {
        self.sent += 1;
    }

    /// Probe packet number `index` (sent at `sent_at`) was lost; `srtt` is the connection's
    /// smoothed RTT and `window` the probe loop's cwnd. A loss sent more than one SRTT after
    /// the first loss of the current event starts a new event; the first event's interval is
    /// 3W²/8, the interval at which AIMD(1, 1/2) peaks at this window. True for a new event.
    pub fn on_lost(&mut self, index: u64, sent_at: Time, srtt: f64, window: f64) -> bool {
        match self.event {
            Some((_, first)) if sent_at as f64 <= first as f64 + srtt => return false,
            Some((start, _)) => {
                self.closed.push_front(index.saturating_sub(start).max(1) as f64);
                self.closed.truncate(INTERVALS);
            }
            None => self.closed.push_front((3.0 * window * window / 8.0).max(1.0)),
        }
        self.event = Some((index, sent_at));
        self.events += 1;
        true
    }

    /// Loss events so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The loss-event rate, `None` before the first loss: 1 over the larger of the weighted
    /// means with and without the open interval, weights 1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2
    /// renormalised over the intervals there are.
    pub fn p(&self) -> Option<f64> {
        let (start, _) = self.event?;
        let w = wali_weights(INTERVALS);
        let open = self.sent.saturating_sub(start) as f64;
        let k = self.closed.len();
        let (mut i0, mut w0) = (open * w[0], w[0]);
        let (mut i1, mut w1) = (0.0, 0.0);
        for (idx, &iv) in self.closed.iter().enumerate() {
            if idx + 1 < k.min(INTERVALS) {
                i0 += iv * w[idx + 1];
                w0 += w[idx + 1];
            }
            i1 += iv * w[idx];
            w1 += w[idx];
        }
        let mean = (i0 / w0).max(i1 / w1);
        Some(1.0 / mean.max(1.0))
    }
}

/// A PA-MulTCP connection's controller (a group of one).
#[derive(Debug)]
pub struct PaMulTcp {
    params: PaMulTcpParams,
    roster: Roster,
    log: SegmentLog,
    /// The probe loop and the adjusting loop.
    pub loops: [Loop; 2],
    /// The probe loop's loss history.
    pub probe_loss: ProbeLossRate,
    /// The adjusting loop's a, b and cap, and the probe loop's loss-event rate the cap was
    /// computed from.
    a: f64,
    b: f64,
    cap: f64,
    p: Option<f64>,
    /// The loop given the last segment.
    last: Tag,
    /// The oldest outstanding segment at a timeout and the probe window then, until its
    /// retransmission is reported.
    timed_out: Option<(u64, f64)>,
}

impl PaMulTcp {
    /// PA-MulTCP for connection `flow` with `joins` members joining at run time.
    pub fn new(params: PaMulTcpParams, flow: u32, joins: &[Join]) -> Self {
        let mut p = PaMulTcp {
            params,
            roster: Roster::new(flow, params.n, joins),
            log: SegmentLog::default(),
            loops: [Loop::new(1.0, f64::INFINITY); 2],
            probe_loss: ProbeLossRate::default(),
            a: 1.0,
            b: 0.5,
            cap: f64::INFINITY,
            p: None,
            last: PROBE,
            timed_out: None,
        };
        p.set_weight();
        p
    }

    /// The adjusting loop's weight N' for the members now.
    pub fn weight(&self) -> f64 {
        let n = f64::from(self.roster.n());
        match self.params.adjust_weight {
            AdjustWeight::NMinus1 => n - 1.0,
            AdjustWeight::N => n,
        }
    }

    /// The adjusting loop's (a, b).
    pub fn adjust_ab(&self) -> (f64, f64) {
        (self.a, self.b)
    }

    /// The cap on the adjusting loop (infinite before the probe loop's first loss).
    pub fn w_max(&self) -> f64 {
        self.cap
    }

    /// Members now.
    pub fn members(&self) -> u32 {
        self.roster.n()
    }

    /// a and b for the members now, then the cap.
    fn set_weight(&mut self) {
        (self.a, self.b) = adjust_aimd(self.weight());
        self.update_cap();
    }

    /// W_max from the probe loop's loss-event rate; the adjusting loop's ssthresh and cwnd are
    /// clamped to it (resolution pamultcp:A15).
    fn update_cap(&mut self) {
        self.p = self.probe_loss.p();
        self.cap = self.p.map_or(f64::INFINITY, |p| w_max(self.a, self.b, p));
        let l = &mut self.loops[ADJUST as usize];
        l.ssthresh = l.ssthresh.min(self.cap);
        l.cwnd = l.cwnd.min(self.cap).max(1.0);
    }

    /// The connection's window is the loops' sum.
    fn sync(&self, st: &mut CcState) {
        let [p, a] = &self.loops;
        st.cwnd = (p.cwnd + a.cwnd).max(1.0);
        st.ssthresh = (p.ssthresh + a.ssthresh).max(2.0);
    }

    fn decrease_of(&self, tag: Tag) -> f64 {
        if tag == PROBE {
            0.5
        } else {
            self.b
        }
    }

    /// Probe-loop packet number of segment `seq` (counted in the order they were assigned).
    fn probe_index(&self, seq: u64) -> u64 {
        self.log.get(seq).map_or(self.probe_loss.sent, |s| s.index)
    }

    /// A probe segment `seq` sent at `sent_at` was lost while the probe window was `window`:
    /// note it in the loss history.
    fn probe_lost(&mut self, seq: u64, sent_at: Time, srtt: f64, window: f64) {
        let index = self.probe_index(seq);
        if self.probe_loss.on_lost(index, sent_at, srtt, window) {
            self.update_cap();
        }
    }

    /// Members joining now, if any: N grows, a, b and W_max follow.
    fn admit_joins(&mut self, now: Time) {
        if !self.roster.join_due(now).is_empty() {
            self.set_weight();
        }
    }
}

impl GroupControl for PaMulTcp {
    fn name(&self) -> &'static str {
        "pamultcp"
    }

    loop_sum_callbacks!();

    fn on_join(&mut self, m: MemberId, g: &mut Members<'_>, now: Time) {
        let st = *g.get(m);
        self.loops = [Loop::new(st.cwnd, st.ssthresh); 2];
        self.admit_joins(now);
        self.update_cap();
        self.sync(g.get_mut(m));
    }

    fn admit(&mut self, _m: MemberId, _g: &mut Members<'_>, _now: Time) -> Option<Tag> {
        let [p, a] = &self.loops;
        let (other, same) = (1 - self.last, self.last);
        let open = |t: Tag| if t == PROBE { p.open() } else { a.open() };
        let tag = match self.params.assignment {
            Assignment::Consecutive if open(same) => same,
            Assignment::Interleave if open(other) => other,
            _ if open(other) => other,
            _ if open(same) => same,
            _ => return None,
        };
        self.last = tag;
        let member = self.roster.next_turn();
        let index = if tag == PROBE { self.probe_loss.sent } else { 0 };
        self.log.push(tag, member, index);
        self.loops[tag as usize].sent();
        if tag == PROBE {
            self.probe_loss.on_sent();
        }
        Some(tag)
    }

    fn on_delivered(&mut self, m: MemberId, d: &Delivered<'_>, g: &mut Members<'_>) {
        let mut probe_acked = false;
        for &(seq, _) in d.segments {
            let Some(s) = self.log.deliver(seq) else { continue };
            let a = if s.tag == PROBE { 1.0 } else { self.a };
            self.loops[s.tag as usize].delivered(a, d.snd_una);
            probe_acked |= s.tag == PROBE;
            if self.roster.delivered(s.member, d.now) {
                self.set_weight();
            }
        }
        self.log.trim(d.snd_una);
        if probe_acked {
            self.update_cap();
        } else {
            let l = &mut self.loops[ADJUST as usize];
            l.cwnd = l.cwnd.min(self.cap);
        }
        self.sync(g.get_mut(m));
    }

    fn on_lost_segment(&mut self, m: MemberId, lost: &LostSegment, g: &mut Members<'_>) {
        let srtt = g.get(m).rtt.srtt;
        if lost.kind == LossKind::Timeout {
            // The timeout itself was handled in `on_loss`; its first retransmission is the
            // oldest outstanding segment, a probe loss if the probe loop owned it.
            if self.timed_out.is_some_and(|(seq, _)| seq == lost.seq) {
                let (_, window) = self.timed_out.take().expect("a timeout");
                if lost.tag == PROBE {
                    self.probe_lost(lost.seq, lost.sent_at, srtt, window);
                }
            }
            return;
        }
        let next = self.log.next_seq();
        let b = self.decrease_of(lost.tag);
        let window = self.loops[PROBE as usize].cwnd;
        self.loops[lost.tag as usize].lost(lost.seq, b, next);
        if lost.tag == PROBE {
            self.probe_lost(lost.seq, lost.sent_at, srtt, window);
        }
        self.sync(g.get_mut(m));
    }

    fn on_ack(&mut self, _m: MemberId, _ack: &AckSample, _g: &mut Members<'_>) {
        // The loops grow per delivered segment (`on_delivered`).
    }

    /// Losses found by ACKs are reduced per loop as their segments are reported; a timeout
    /// collapses the owner of the oldest outstanding segment (or both loops) at once. The
    /// connection's ssthresh stays the loops' sum.
    fn on_loss(&mut self, m: MemberId, loss: &LossSignal, g: &mut Members<'_>) -> f64 {
        if loss.kind == LossKind::Timeout {
            let una = g.get(m).snd_una;
            let next = self.log.next_seq();
            let owner = self.log.get(una).map_or(PROBE, |s| s.tag);
            self.timed_out = Some((una, self.loops[PROBE as usize].cwnd));
            for tag in [PROBE, ADJUST] {
                if self.params.timeout == TimeoutRule::Both || tag == owner {
                    let b = self.decrease_of(tag);
                    self.loops[tag as usize].collapse(b, next);
                }
            }
        }
        self.sync(g.get_mut(m));
        g.get(m).ssthresh
    }

    fn metrics(&self, _m: MemberId, out: &mut dyn FnMut(&'static str, f64)) {
        out("probe_cwnd", self.loops[PROBE as usize].cwnd);
        out("adjust_cwnd", self.loops[ADJUST as usize].cwnd);
        let ss = self.loops[ADJUST as usize].ssthresh;
        out("adjust_ssthresh", if ss.is_finite() { ss } else { f64::NAN });
        out("w_max", if self.cap.is_finite() { self.cap } else { f64::NAN });
        out("p_probe", self.p.unwrap_or(f64::NAN));
        out("weight_n", self.weight());
        out("members_n", f64::from(self.roster.n()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::host::CcHost;

    const S: Time = 1_000_000_000;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-12)
    }

    /// Kuo and Fu (2008) §4.2: a, b and W_max·√p for N' = 2, 10, 30, and W_max at p = 0.01
    /// from eq. (9) against the closed form (1 + 3N'^1.5)/sqrt(6N'p).
    #[test]
    fn adjusting_loop_parameters_worked_numbers() {
        for (weight, a, b, wmax_sqrt_p) in [
            (2.0, std::f64::consts::SQRT_2, 0.210_863, 2.738_17),
            (10.0, 3.162_278, 0.020_862, 12.376_5),
            (30.0, 5.477_226, 0.004_049, 36.816_9),
        ] {
            let (ga, gb) = adjust_aimd(weight);
            assert!(close(ga, a, 1e-6) && close(gb, b, 1e-4), "N' = {weight}: a = {ga}, b = {gb}");
            let w = w_max(ga, gb, 0.01);
            let closed = (1.0 + 3.0 * f64::powf(weight, 1.5)) / (6.0 * weight * 0.01).sqrt();
            assert!(close(w, closed, 1e-12), "N' = {weight}: {w} vs {closed}");
            assert!(close(w, 10.0 * wmax_sqrt_p, 1e-5), "N' = {weight}: W_max = {w}");
        }
        // The default weight is N − 1; `adjust_weight = "n"` takes N.
        let params = |adjust_weight| PaMulTcpParams {
            n: 11,
            assignment: Assignment::Consecutive,
            timeout: TimeoutRule::Owner,
            adjust_weight,
        };
        let p = PaMulTcp::new(params(AdjustWeight::NMinus1), 0, &[]);
        assert_eq!(p.weight(), 10.0);
        assert_eq!(p.adjust_ab(), adjust_aimd(10.0));
        assert_eq!(PaMulTcp::new(params(AdjustWeight::N), 0, &[]).weight(), 11.0);
    }

    /// RFC 5348 §5.4's average loss interval on a hand-made sequence of probe losses.
    #[test]
    fn average_loss_interval_on_a_hand_made_history() {
        let mut h = ProbeLossRate::default();
        let srtt = 0.1e9;
        let send = |h: &mut ProbeLossRate, upto: u64| {
            while h.sent < upto {
                h.on_sent();
            }
        };
        send(&mut h, 100);
        assert_eq!(h.p(), None, "no loss yet: W_max is infinite");
        // First loss: packet 50 at a probe window of 8, the interval 3·8²/8 = 24 is made up.
        assert!(h.on_lost(50, S, srtt, 8.0));
        // I_0 = 100 − 50 = 50 > 24: p = 1/50.
        assert!(close(h.p().unwrap(), 1.0 / 50.0, 1e-12));
        // Packet 60, sent 10 ms after the first loss, is in the same event.
        assert!(!h.on_lost(60, S + S / 100, srtt, 8.0));
        // Packet 150, sent a second later, starts the next: I_1 = 100, I_2 = 24.
        send(&mut h, 200);
        assert!(h.on_lost(150, 2 * S, srtt, 8.0));
        // I_0 = 50: with it (50 + 100)/2 = 75, without (100 + 24)/2 = 62: p = 1/75.
        assert!(close(h.p().unwrap(), 1.0 / 75.0, 1e-12));
        // Eight more events 10 packets apart: only the eight newest intervals (all 10) stay.
        for k in 1..=8 {
            assert!(h.on_lost(150 + 10 * k, (2 + k) * S, srtt, 8.0));
        }
        send(&mut h, 270);
        // I_0 = 40: (40·1 + 10·(1+1+1+0.8+0.6+0.4+0.2))/6 = 15 > 10: p = 1/15.
        assert!(close(h.p().unwrap(), 1.0 / 15.0, 1e-12));
        assert_eq!(h.events(), 10);
    }

    /// Drives a PA-MulTCP connection by hand: every segment the loops admit, then one ACK
    /// delivering all that is outstanding.
    struct Driver {
        host: CcHost,
        m: MemberId,
        outstanding: Vec<(u64, Tag)>,
        next: u64,
        now: Time,
    }

    impl Driver {
        fn new(n: u32, joins: &[Join]) -> Self {
            let params = PaMulTcpParams {
                n,
                assignment: Assignment::Consecutive,
                timeout: TimeoutRule::Owner,
                adjust_weight: AdjustWeight::NMinus1,
            };
            let mut host = CcHost::new();
            let mut st = CcState::new(2.0, f64::INFINITY, 1460);
            st.rtt.sample(100_000_000);
            let m = host.join(st, None, Some(Box::new(PaMulTcp::new(params, 0, joins))), 0);
            Driver { host, m, outstanding: Vec::new(), next: 0, now: 0 }
        }

        fn send(&mut self) {
            while let Some(tag) = self.host.admit(self.m, self.now) {
                self.outstanding.push((self.next, tag));
                self.next += 1;
            }
        }

        fn deliver_all(&mut self) {
            self.now += 100_000_000;
            let segs = std::mem::take(&mut self.outstanding);
            let mut by_tag = [0u32; 2];
            for &(_, t) in &segs {
                by_tag[t as usize] += 1;
            }
            let d = Delivered { now: self.now, snd_una: self.next, by_tag: &by_tag, segments: &segs };
            self.host.on_delivered(self.m, &d);
            self.host.state_mut(self.m).snd_una = self.next;
        }

        fn metric(&self, name: &str) -> f64 {
            let mut v = f64::NAN;
            self.host.metrics(self.m, &mut |n, x| {
                if n == name {
                    v = x;
                }
            });
            v
        }

        fn lose(&mut self, tag: Tag) -> u64 {
            let seq = self.outstanding.iter().find(|s| s.1 == tag).expect("a segment of the loop").0;
            let lost = LostSegment { now: self.now, seq, tag, sent_at: self.now, kind: LossKind::DupAcks };
            self.host.on_lost_segment(self.m, &lost);
            seq
        }

        /// Fire the join timer if it is due by `at`.
        fn run_timer(&mut self, at: Time) {
            let mut ev = Vec::new();
            self.host.timer_events(&mut ev);
            for (t, gid, gen) in ev {
                assert!(t <= at, "the join timer is set for {t}");
                self.host.fire_timer(crate::engine::WakeTag::new(gid, gen), t);
            }
        }
    }

    /// W_max follows the probe loop's first loss (I = 3W²/8) and the members: when a member
    /// leaves, the adjusting loop's ssthresh and cwnd come down to the new, lower cap. A loss
    /// reduces only its loop, once per episode.
    #[test]
    fn the_cap_follows_losses_and_members_and_losses_stay_in_their_loop() {
        let join = Join { at: S, bytes: 400 * 1460, segments: 400 };
        let mut d = Driver::new(3, &[join]);
        assert_eq!(d.host.state(d.m).cwnd, 4.0, "two loops of two segments");
        for _ in 0..5 {
            d.send();
            d.deliver_all();
        }
        assert_eq!((d.metric("probe_cwnd"), d.metric("adjust_cwnd")), (64.0, 64.0));
        assert!(d.metric("w_max").is_nan(), "no probe loss yet");
        // A member joins: N = 4, N' = 3.
        d.now = S;
        d.run_timer(S);
        assert_eq!((d.metric("members_n"), d.metric("weight_n")), (4.0, 3.0));
        // A probe loss halves the probe loop alone and sets W_max from p = 8/(3·64²).
        d.send();
        d.lose(PROBE);
        assert_eq!((d.metric("probe_cwnd"), d.metric("adjust_cwnd")), (32.0, 64.0));
        let p = 8.0 / (3.0 * 64.0 * 64.0);
        assert!(close(d.metric("p_probe"), p, 1e-12));
        let (a3, b3) = adjust_aimd(3.0);
        let (a2, b2) = adjust_aimd(2.0);
        let (cap3, cap2) = (w_max(a3, b3, p), w_max(a2, b2, p));
        assert!(close(d.metric("w_max"), cap3, 1e-12), "{} vs {cap3}", d.metric("w_max"));
        assert!(close(d.metric("adjust_ssthresh"), cap3, 1e-12), "ssthresh clamped to W_max");
        assert_eq!(d.host.state(d.m).cwnd, 96.0, "the connection holds the sum");
        // The adjusting loop slow-starts up to the cap; when the member completes the cap
        // falls (N' = 2) and the adjusting loop's ssthresh and cwnd are clamped to it.
        let mut before = (0.0, 0.0);
        for _ in 0..40 {
            d.deliver_all();
            if d.metric("weight_n") == 2.0 {
                break;
            }
            before = (d.metric("adjust_cwnd"), d.metric("adjust_ssthresh"));
            d.send();
        }
        assert_eq!(d.metric("weight_n"), 2.0, "the member completed");
        assert!(close(d.metric("w_max"), cap2, 1e-9), "p unchanged: {}", d.metric("p_probe"));
        assert!(close(before.0, cap3, 1e-9) && close(before.1, cap3, 1e-9), "at the cap before: {before:?}");
        assert!(close(d.metric("adjust_cwnd"), cap2, 1e-9) && close(d.metric("adjust_ssthresh"), cap2, 1e-9));
        // An adjusting loss cuts only the adjusting loop, by b = 0.2109 for N' = 2, once per
        // episode.
        d.send();
        let probe = d.metric("probe_cwnd");
        let seq = d.lose(ADJUST);
        assert!(close(d.metric("adjust_cwnd"), cap2 * (1.0 - b2), 1e-12));
        let again = LostSegment { now: d.now, seq: seq + 1, tag: ADJUST, sent_at: d.now, kind: LossKind::DupAcks };
        d.host.on_lost_segment(d.m, &again);
        assert!(close(d.metric("adjust_cwnd"), cap2 * (1.0 - b2), 1e-12));
        assert_eq!(d.metric("probe_cwnd"), probe);
    }

    /// A timeout collapses the loop owning the oldest outstanding segment (A10), or both.
    #[test]
    fn a_timeout_collapses_the_owner_of_the_oldest_segment() {
        for timeout in [TimeoutRule::Owner, TimeoutRule::Both] {
            let mut d = Driver::new(3, &[]);
            let params = PaMulTcpParams {
                n: 3,
                assignment: Assignment::Consecutive,
                timeout,
                adjust_weight: AdjustWeight::NMinus1,
            };
            d.host = CcHost::new();
            d.m = d.host.join(
                CcState::new(2.0, f64::INFINITY, 1460),
                None,
                Some(Box::new(PaMulTcp::new(params, 0, &[]))),
                0,
            );
            for _ in 0..3 {
                d.send();
                d.deliver_all();
            }
            d.send();
            // Consecutive assignment: the loop that had the last segment goes on first.
            let owner = d.outstanding[0].1;
            assert_eq!(owner, ADJUST);
            let ss = d.host.on_loss(d.m, &LossSignal { kind: LossKind::Timeout, now: d.now, flight_size: 32 });
            assert_eq!(d.metric("adjust_cwnd"), 1.0);
            let both = timeout == TimeoutRule::Both;
            assert_eq!(d.metric("probe_cwnd") == 1.0, both);
            assert_eq!(d.host.state(d.m).cwnd, if both { 2.0 } else { 17.0 });
            // ssthresh = max(2, (1 − b)·16) for the adjusting loop (b = 0.2109).
            let (_, b) = adjust_aimd(2.0);
            assert!(close(d.metric("adjust_ssthresh"), 16.0 * (1.0 - b), 1e-12));
            assert_eq!(ss, d.host.state(d.m).ssthresh);
        }
    }

    /// Consecutive assignment fills one loop before the other; interleaving alternates.
    #[test]
    fn consecutive_and_interleaved_assignment() {
        for (assignment, want) in
            [(Assignment::Consecutive, vec![0, 0, 1, 1]), (Assignment::Interleave, vec![1, 0, 1, 0])]
        {
            let params =
                PaMulTcpParams { n: 2, assignment, timeout: TimeoutRule::Owner, adjust_weight: AdjustWeight::NMinus1 };
            let mut host = CcHost::new();
            let m = host.join(
                CcState::new(2.0, f64::INFINITY, 1460),
                None,
                Some(Box::new(PaMulTcp::new(params, 0, &[]))),
                0,
            );
            let tags: Vec<Tag> = std::iter::from_fn(|| host.admit(m, 0)).collect();
            assert_eq!(tags, want, "{assignment:?}");
        }
    }
}
