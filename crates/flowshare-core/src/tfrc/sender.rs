//! The TFRC sender (RFC 5348 §4): a rate, not a window, set from the receiver's reports.
//!
//! - Before the first report the rate is one packet per second and the no-feedback timer is
//!   2 s (§4.2). The first report gives the RTT and the initial rate `W_init/R`, with
//!   `W_init = min(4s, max(2s, 4380 B))` (RFC 3390) or `rate_init` packets.
//! - Each report (§4.3): `R_sample = now − echo`; `R = q·R + (1−q)·R_sample` (`q = df`);
//!   `t_RTO = 4R` or TCP's estimator, at least `min_rto`; `X_recv_set` keeps the receive rates
//!   of the last two RTTs and `recv_limit = 2·max(X_recv_set)`. Without loss, slow start:
//!   `X = max(min(ss_mult·X, recv_limit), W_init/R)` at most once per RTT. With loss,
//!   `X = max(min(X_calc, recv_limit), s/t_mbi)`, `X_calc` from the [`Equation`]; or, with
//!   `rate_rule = "ns2"`, ns-2's additive increase towards `X_calc` ([`RateRule::Ns2`]).
//! - The no-feedback timer (§4.4) runs `max(4R, 2s/X)`; on expiry the rate is halved: without
//!   loss `X = max(X/2, s/t_mbi)`; with loss the receive-rate limit becomes `X_recv` if
//!   `X_calc > 2·X_recv`, else `X_calc/2`.
//! - Packets leave `s/X` apart (§4.6), or `s/X_inst` with `sqrt_rtt`, where
//!   `X_inst = X·R_sqmean/√R_sample` (§4.5).
//!
//! The sender always has data (bulk) until `size` bytes are sent or the flow stops; it is
//! never data-limited, so §4.3's data-limited branches and §4.4's idle rules do not arise.
//!
//! Differences from RFC 5348: no handshake (the first packet goes at the start time); no
//! oscillation-prevention beyond §4.5; `conservative` (ns-2's `conservative_`) caps the rate
//! at `X_recv` after a report with a new loss event and at 1.5·`X_recv` otherwise.
//!
//! [`Equation`]: super::equation::Equation

use super::config::{RateRule, TRto, TfrcConfig};
use super::equation::Inputs;
use crate::packet::{Kind, Packet};
use crate::tcp::SenderStats;
use crate::units::{secs, Time, NS_PER_SEC};
use std::collections::VecDeque;
use std::sync::Arc;

/// Maximum back-off interval: the rate never falls below one packet per 64 s (§4.3).
const T_MBI: f64 = 64.0;

/// Weight of the old value in the mean of √RTT (§4.5).
const Q2: f64 = 0.9;

/// Counters of a TFRC sender beyond the shared ones.
#[derive(Clone, Copy, Debug, Default)]
pub struct TfrcStats {
    /// Reports received.
    pub reports: u64,
    /// No-feedback timer expiries.
    pub no_feedback_expiries: u64,
}

/// The sending end of a TFRC flow.
#[derive(Clone, Debug)]
pub struct Sender {
    conn: u32,
    cfg: Arc<TfrcConfig>,
    /// Packets to send in all (`None`: bulk) and the payload of the last one.
    total: Option<u64>,
    last_payload: u32,
    stop: Time,
    seq: u64,
    /// Allowed rate, bytes/s.
    x: f64,
    /// The equation's rate at the latest report, bytes/s.
    x_calc: f64,
    /// Loss event rate and mean losses per event from the latest report.
    p: f64,
    j: f64,
    /// RTT estimate, s.
    r: Option<f64>,
    r_sample: f64,
    r_sqmean: f64,
    /// TCP-style estimator for `t_rto = "tcp"`, s.
    srtt: f64,
    rttvar: f64,
    /// ns-2's estimator for `t_rto = "ns2"`: SRTT and RTTVAR in ticks with 3 and 2 fraction
    /// bits (0 before the first sample).
    ns2_srtt: i64,
    ns2_rttvar: i64,
    t_rto: f64,
    /// When the rate last doubled in slow start.
    tld: Option<Time>,
    /// `rate_rule = "ns2"`: when a report last changed the rate after slow start (`None`
    /// while in slow start).
    last_change: Option<Time>,
    /// Receive rates of the last two RTTs: (time, bytes/s).
    x_recv_set: VecDeque<(Time, f64)>,
    /// Entries `x_recv_set` keeps at most (the oldest go first).
    recv_set_max: usize,
    loss_events: u64,
    last_sent: Time,
    next_send: Option<Time>,
    no_feedback_at: Option<Time>,
    /// Counters shared with TCP senders (packets and bytes sent, RTT samples).
    pub stats: SenderStats,
    /// TFRC's own counters.
    pub tfrc: TfrcStats,
}

impl Sender {
    /// The sender of connection `conn`: `total` packets (`None`: bulk), the last of
    /// `last_payload` bytes, sending nothing at or after `stop`.
    pub fn new(conn: u32, cfg: Arc<TfrcConfig>, total: Option<u64>, last_payload: u32, stop: Time) -> Self {
        Sender {
            conn,
            x: f64::from(cfg.payload),
            x_recv_set: VecDeque::with_capacity(2 * cfg.num_feedback as usize + 4),
            recv_set_max: 2 * cfg.num_feedback as usize + 4,
            cfg,
            total,
            last_payload,
            stop,
            seq: 0,
            x_calc: 0.0,
            p: 0.0,
            j: 0.0,
            r: None,
            r_sample: 0.0,
            r_sqmean: 0.0,
            srtt: 0.0,
            rttvar: 0.0,
            ns2_srtt: 0,
            ns2_rttvar: 0,
            t_rto: 0.0,
            tld: None,
            last_change: None,
            loss_events: 0,
            last_sent: 0,
            next_send: None,
            no_feedback_at: None,
            stats: SenderStats { rtt_min: u64::MAX, ..SenderStats::default() },
            tfrc: TfrcStats::default(),
        }
    }

    /// The allowed rate, bytes/s.
    pub fn rate(&self) -> f64 {
        self.x
    }

    /// The RTT estimate, s, once a report has arrived.
    pub fn rtt(&self) -> Option<f64> {
        self.r
    }

    /// The loss event rate of the latest report.
    pub fn loss_event_rate(&self) -> f64 {
        self.p
    }

    /// The packets lost per loss event of the latest report (0 before the first loss).
    pub fn j(&self) -> f64 {
        self.j
    }

    /// The equation's `t_RTO`, s (0 before the first report).
    pub fn t_rto(&self) -> f64 {
        self.t_rto
    }

    fn s(&self) -> f64 {
        f64::from(self.cfg.payload)
    }

    /// The initial rate `W_init/R`, bytes/s.
    fn initial_rate(&self, r: f64) -> f64 {
        let s = self.s();
        let w_init = match self.cfg.init_packets {
            Some(k) => k * s,
            None => (4.0 * s).min((2.0 * s).max(4380.0)),
        };
        w_init / r
    }

    /// Start sending at `now`.
    pub fn start(&mut self, now: Time) {
        self.stats.started_at = Some(now);
        self.next_send = (now < self.stop).then_some(now);
        self.no_feedback_at = Some(now + 2 * NS_PER_SEC);
    }

    /// Send nothing at or after `now`.
    pub fn stop(&mut self, now: Time) {
        self.stop = self.stop.min(now);
        if self.next_send.is_some_and(|t| t >= self.stop) {
            self.finish_sending();
        }
    }

    fn finish_sending(&mut self) {
        self.next_send = None;
        self.no_feedback_at = None;
    }

    /// When the sender next wants to run.
    #[inline]
    pub fn next_wake(&self) -> Option<Time> {
        match (self.next_send, self.no_feedback_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Its timers fired at `now`: the no-feedback timer, the send timer, or both.
    pub fn on_wake(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.no_feedback_at.is_some_and(|t| t <= now) {
            self.on_no_feedback(now);
        }
        while let Some(t) = self.next_send {
            if t > now {
                break;
            }
            self.send(now, t, out);
        }
    }

    /// Send the packet due at `due` (its nominal time, RFC 5348 §4.6's t_nom) at `now`. The
    /// next one is due `t_ipi` after `due`, not after `now`: a real clock that wakes a little
    /// late (a live endpoint) then keeps the rate X instead of losing the lateness on every
    /// packet; more than two intervals behind, the schedule restarts from `now` (a burst of at
    /// most three packets). In a simulation `now == due` and nothing changes.
    fn send(&mut self, now: Time, due: Time, out: &mut Vec<Packet>) {
        if now >= self.stop || self.total.is_some_and(|n| self.seq >= n) {
            self.finish_sending();
            return;
        }
        let last = self.total.is_some_and(|n| self.seq + 1 == n);
        let payload = if last { self.last_payload } else { self.cfg.payload };
        let mut p = Packet::new(self.conn, Kind::TfrcData, self.seq, payload + self.cfg.header, now);
        p.set_word(0, self.r.map_or(0, |r| (r * 1e9).round() as u64));
        out.push(p);
        self.seq += 1;
        self.stats.packets_sent += 1;
        self.stats.bytes_sent += u64::from(payload);
        self.last_sent = now;
        if last {
            self.finish_sending();
        } else {
            let ipi = self.interval();
            self.next_send = Some((due + ipi).max(now.saturating_sub(ipi)));
        }
    }

    /// The gap to the next packet, `s/X` (or `s/X_inst`, §4.5), ns.
    fn interval(&self) -> Time {
        let mut x = self.x;
        if self.cfg.sqrt_rtt && self.r_sample > 0.0 {
            x *= self.r_sqmean / self.r_sample.sqrt();
        }
        ((self.s() / x * 1e9).round() as Time).max(1)
    }

    /// The rate changed: the next packet leaves one new interval after the last one.
    fn reschedule(&mut self, now: Time) {
        if self.next_send.is_some() {
            self.next_send = Some((self.last_sent + self.interval()).max(now));
        }
    }

    fn arm_no_feedback(&mut self, now: Time) {
        if self.next_send.is_none() {
            return; // nothing more to send: the rate no longer matters
        }
        let by_rate = 2.0 * self.s() / self.x;
        let t = match self.r {
            Some(r) => (self.cfg.no_feedback_rtts * r).max(by_rate),
            None => by_rate.max(2.0),
        };
        self.no_feedback_at = Some(now + (t * 1e9).round() as Time);
    }

    /// Report `fb` arrived at `now` (RFC 5348 §4.3).
    pub fn on_feedback(&mut self, now: Time, fb: &Packet) {
        debug_assert_eq!(fb.kind, Kind::TfrcFeedback);
        self.tfrc.reports += 1;
        let sample_ns = now.saturating_sub(fb.ts).max(1);
        let st = &mut self.stats;
        st.rtt_n += 1;
        st.rtt_sum += sample_ns as f64;
        st.rtt_min = st.rtt_min.min(sample_ns);
        st.rtt_max = st.rtt_max.max(sample_ns);
        let sample = secs(sample_ns);
        let q = self.cfg.q;
        let r = match self.r {
            None => {
                self.r_sqmean = sample.sqrt();
                self.srtt = sample;
                self.rttvar = sample / 2.0;
                sample
            }
            Some(r) => {
                self.r_sqmean = Q2 * self.r_sqmean + (1.0 - Q2) * sample.sqrt();
                self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - sample).abs();
                self.srtt = 0.875 * self.srtt + 0.125 * sample;
                q * r + (1.0 - q) * sample
            }
        };
        self.r = Some(r);
        self.r_sample = sample;
        if self.cfg.t_rto == TRto::Ns2 {
            self.ns2_rtt_sample(sample);
        }
        self.t_rto = self.compute_t_rto(r);
        let x_recv = f64::from_bits(fb.word(0));
        self.p = f64::from_bits(fb.word(1));
        self.j = f64::from_bits(fb.word(2));
        let new_loss = fb.seq > self.loss_events;
        self.loss_events = self.loss_events.max(fb.seq);
        // X_recv_set: the receive rates of the last two RTTs.
        let horizon = (2.0 * r * 1e9) as Time;
        self.x_recv_set.retain(|&(t, _)| now.saturating_sub(t) <= horizon);
        if self.x_recv_set.len() >= self.recv_set_max {
            self.x_recv_set.pop_front();
        }
        self.x_recv_set.push_back((now, x_recv));
        let max_recv = match self.cfg.rate_rule {
            RateRule::Rfc5348 => self.x_recv_set.iter().fold(0.0f64, |m, &(_, x)| m.max(x)),
            RateRule::Ns2 => x_recv, // ns-2's maxrate_: the latest receive rate only
        };
        let recv_limit = match (self.cfg.conservative, new_loss) {
            (true, true) => max_recv,
            (true, false) => 1.5 * max_recv,
            (false, _) => 2.0 * max_recv,
        };
        let s = self.s();
        if self.p > 0.0 {
            self.x_calc = self.cfg.equation.rate(&Inputs { s, r, p: self.p, t_rto: self.t_rto, j: self.j });
            self.x = match self.cfg.rate_rule {
                RateRule::Rfc5348 => self.x_calc.min(recv_limit),
                RateRule::Ns2 => self.ns2_rate(now, r, recv_limit),
            }
            .max(s / T_MBI);
        } else if self.tld.is_none_or(|t| secs(now - t) >= r) {
            self.x = (self.cfg.ss_mult * self.x).min(recv_limit).max(self.initial_rate(r));
            self.tld = Some(now);
        }
        self.arm_no_feedback(now);
        self.reschedule(now);
    }

    /// The rate after a report with loss under ns-2's rule ([`RateRule::Ns2`]): the equation's
    /// rate when leaving slow start, then at most `s/R` per RTT and emulated flow up towards
    /// it (two RTTs' worth at most), and straight down to it, capped by `max(recv_limit, s/R)`.
    fn ns2_rate(&mut self, now: Time, r: f64, recv_limit: f64) -> f64 {
        let s = self.s();
        let cap = recv_limit.max(s / r);
        let x = match self.last_change {
            None => self.x_calc, // ns-2 leaves slow start at the equation's rate, uncapped
            Some(t) if self.x_calc > self.x => {
                let mult = (secs(now.saturating_sub(t)) / r).min(2.0);
                // One packet per RTT per TCP flow the equation stands for.
                let step = s / r * mult * self.cfg.equation.flows();
                (self.x + step).min(cap).min(self.x_calc)
            }
            Some(_) => self.x_calc.min(cap),
        };
        self.last_change = Some(now);
        x
    }

    /// ns-2's `TfrcAgent::update_rtt`, in ticks: the sample rounded to the nearest tick (at
    /// least one), then TCP's gains 1/8 and 1/4 in integer arithmetic.
    fn ns2_rtt_sample(&mut self, sample: f64) {
        let tick = secs(self.cfg.clock_tick);
        let t_rtt = ((sample / tick + 0.5) as i64).max(1);
        if self.ns2_srtt == 0 {
            self.ns2_srtt = t_rtt << 3;
            self.ns2_rttvar = t_rtt << 1;
            return;
        }
        let mut delta = t_rtt - (self.ns2_srtt >> 3);
        self.ns2_srtt = (self.ns2_srtt + delta).max(1);
        delta = delta.abs() - (self.ns2_rttvar >> 2);
        self.ns2_rttvar = (self.ns2_rttvar + delta).max(1);
    }

    fn compute_t_rto(&self, r: f64) -> f64 {
        let t = match self.cfg.t_rto {
            TRto::FourR => 4.0 * r,
            // SRTT + 2^2 · RTTVAR, both in eighths of a tick (ns-2's rttvar_exp_ = 2).
            TRto::Ns2 => ((((self.ns2_rttvar << 3) + self.ns2_srtt) >> 3) as f64) * secs(self.cfg.clock_tick),
            TRto::Tcp => {
                let tick = secs(self.cfg.clock_tick);
                let t = self.srtt + (4.0 * self.rttvar).max(tick);
                if tick > 0.0 {
                    (t / tick).ceil() * tick
                } else {
                    t
                }
            }
        };
        t.max(secs(self.cfg.min_rto))
    }

    /// The no-feedback timer expired at `now` (RFC 5348 §4.4): halve the rate.
    fn on_no_feedback(&mut self, now: Time) {
        self.tfrc.no_feedback_expiries += 1;
        let s = self.s();
        if self.r.is_none() || self.p == 0.0 || self.cfg.rate_rule == RateRule::Ns2 {
            self.x = (self.x / 2.0).max(s / T_MBI);
        } else {
            let max_recv = self.x_recv_set.iter().fold(0.0f64, |m, &(_, x)| m.max(x));
            let limit = if self.x_calc > 2.0 * max_recv { max_recv } else { self.x_calc / 2.0 };
            let limit = limit.max(s / T_MBI);
            self.x_recv_set.clear();
            self.x_recv_set.push_back((now, limit / 2.0));
            self.x = self.x_calc.min(limit).max(s / T_MBI);
        }
        self.no_feedback_at = None;
        self.arm_no_feedback(now);
        self.reschedule(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;

    fn report(echo: Time, x_recv: f64, p: f64, loss_events: u64) -> Packet {
        let mut fb = Packet::new(0, Kind::TfrcFeedback, loss_events, 40, echo);
        fb.set_word(0, x_recv.to_bits());
        fb.set_word(1, p.to_bits());
        fb.set_word(2, 1.0f64.to_bits());
        fb
    }

    fn sender() -> Sender {
        let mut s = Sender::new(0, Arc::new(TfrcConfig::rfc5348()), None, 1000, Time::MAX);
        s.start(0);
        s
    }

    #[test]
    fn first_report_sets_the_rfc3390_rate_and_slow_start_doubles_it() {
        let mut s = sender();
        let mut out = Vec::new();
        s.on_wake(0, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(s.next_wake(), Some(NS_PER_SEC), "one packet per second before any report");
        // RTT 100 ms: W_init = min(4000, max(2000, 4380)) = 4000 B, X = 40 kB/s.
        s.on_feedback(100 * MS, &report(0, 0.0, 0.0, 0));
        assert!((s.rate() - 40_000.0).abs() < 1e-6, "{}", s.rate());
        assert_eq!(s.next_wake(), Some(100 * MS), "the next packet at once");
        // One RTT later, 40 kB/s received: doubled to 80 kB/s (below 2·X_recv).
        s.on_feedback(201 * MS, &report(101 * MS, 40_000.0, 0.0, 0));
        assert!((s.rate() - 80_000.0).abs() < 1e-6, "{}", s.rate());
        // Within the same RTT nothing changes.
        s.on_feedback(250 * MS, &report(150 * MS, 40_000.0, 0.0, 0));
        assert!((s.rate() - 80_000.0).abs() < 1e-6);
        // Doubling is bounded by twice the receive rates of the last two RTTs.
        s.on_feedback(310 * MS, &report(210 * MS, 50_000.0, 0.0, 0));
        assert!((s.rate() - 100_000.0).abs() < 1e-6, "{}", s.rate());
    }

    #[test]
    fn with_loss_the_rate_follows_the_equation_and_the_receive_limit() {
        let mut s = sender();
        s.on_feedback(100 * MS, &report(0, 0.0, 0.0, 0));
        // p = 1 %, R = 100 ms, t_RTO = 4R: the equation gives 112332 B/s (see equation.rs).
        s.on_feedback(200 * MS, &report(100 * MS, 1e6, 0.01, 1));
        assert!((s.rate() - 112_332.234).abs() < 0.01, "{}", s.rate());
        assert!((s.t_rto() - 0.4).abs() < 1e-12);
        // A low receive rate caps it at 2·X_recv... but X_recv_set still holds 1e6 from the
        // previous report (within two RTTs), so the cap is 2e6.
        s.on_feedback(300 * MS, &report(200 * MS, 10_000.0, 0.01, 1));
        assert!((s.rate() - 112_332.234).abs() < 0.01);
        // Two RTTs later the old entry has expired: 2·10 kB/s.
        s.on_feedback(600 * MS, &report(500 * MS, 10_000.0, 0.01, 1));
        assert!((s.rate() - 20_000.0).abs() < 1e-6, "{}", s.rate());
    }

    #[test]
    fn the_ns2_t_rto_counts_whole_ticks_as_ns2_does() {
        let cfg: super::super::config::TfrcCfg = serde_json::from_str(r#"{"profile": "ns2"}"#).unwrap();
        let mut s = Sender::new(0, Arc::new(cfg.resolve("tfrc").unwrap()), None, 1000, Time::MAX);
        s.start(0);
        // 45 ms samples with a 100 ms tick: each counts one tick; SRTT = 8/8, RTTVAR = 2/4
        // ticks, and RTTVAR never decays (|1 - 1| - 2 >> 2 = 0): (2 << 3) + 8 >> 3 = 3 ticks.
        for k in 0..50u64 {
            s.on_feedback(k * 100 * MS + 45 * MS, &report(k * 100 * MS, 1e6, 0.01, 1));
            assert!((s.t_rto() - 0.3).abs() < 1e-12, "sample {k}: {}", s.t_rto());
        }
        // 450 ms samples: 5 ticks (4.5 rounds up), and the estimate climbs towards 5 + 4·var.
        s.on_feedback(5045 * MS, &report(4595 * MS, 1e6, 0.01, 1));
        // delta = 5 - 1 = 4: SRTT 12/8; |4| - 0 = 4: RTTVAR 6/4; (6 << 3) + 12 >> 3 = 7 ticks.
        assert!((s.t_rto() - 0.7).abs() < 1e-12, "{}", s.t_rto());
    }

    fn ns2_rule_sender(json: &str) -> Sender {
        let cfg: super::super::config::TfrcCfg = serde_json::from_str(json).unwrap();
        let mut cfg = cfg.resolve("tfrc").unwrap();
        cfg.t_rto = TRto::FourR; // the equation's rates of the RFC 5348 tests above
        let mut s = Sender::new(0, Arc::new(cfg), None, 1000, Time::MAX);
        s.start(0);
        s
    }

    #[test]
    fn the_ns2_rule_leaves_slow_start_at_the_equation_and_then_adds_a_packet_per_rtt() {
        let mut s = ns2_rule_sender(r#"{"profile": "ns2", "sqrt_rtt": false, "df": 0.9}"#);
        s.on_feedback(100 * MS, &report(0, 0.0, 0.0, 0));
        // The first loss: X = X_calc = 112332 B/s, even above 2·X_recv = 20 kB/s.
        s.on_feedback(200 * MS, &report(100 * MS, 10_000.0, 0.01, 1));
        assert!((s.rate() - 112_332.234).abs() < 0.01, "{}", s.rate());
        // A lower p (X_calc higher) one RTT later: + s/R = 10 kB/s, not a jump.
        s.on_feedback(300 * MS, &report(200 * MS, 1e6, 0.005, 1));
        assert!((s.rate() - 122_332.234).abs() < 0.01, "{}", s.rate());
        // Three RTTs later: at most two RTTs' worth, + 20 kB/s.
        s.on_feedback(600 * MS, &report(500 * MS, 1e6, 0.005, 1));
        assert!((s.rate() - 142_332.234).abs() < 0.01, "{}", s.rate());
        // The increase stops at twice the latest receive rate: 2 · 70 kB/s.
        s.on_feedback(700 * MS, &report(600 * MS, 70_000.0, 0.005, 1));
        assert!((s.rate() - 140_000.0).abs() < 1e-6, "{}", s.rate());
        // p back at 1 %: straight down to X_calc.
        s.on_feedback(800 * MS, &report(700 * MS, 1e6, 0.01, 1));
        assert!((s.rate() - 112_332.234).abs() < 0.01, "{}", s.rate());
        // The no-feedback timer halves X.
        let mut out = Vec::new();
        s.on_wake(s.no_feedback_at.unwrap(), &mut out);
        assert!((s.rate() - 56_166.117).abs() < 0.01, "{}", s.rate());
    }

    #[test]
    fn the_ns2_rule_adds_a_packet_per_rtt_per_emulated_flow() {
        let mut s = ns2_rule_sender(
            r#"{"profile": "ns2", "sqrt_rtt": false, "df": 0.9, "equation": "multfrc", "n": 4, "j": "one"}"#,
        );
        s.on_feedback(100 * MS, &report(0, 0.0, 0.0, 0));
        s.on_feedback(200 * MS, &report(100 * MS, 1e6, 0.01, 1));
        let x0 = s.rate();
        s.on_feedback(300 * MS, &report(200 * MS, 1e6, 0.005, 1));
        assert!((s.rate() - (x0 + 4.0 * 10_000.0)).abs() < 1e-6, "{} vs {x0}", s.rate());
    }

    #[test]
    fn no_feedback_halves_the_rate_each_time() {
        let mut s = sender();
        let mut out = Vec::new();
        s.on_feedback(100 * MS, &report(0, 0.0, 0.0, 0));
        s.on_feedback(200 * MS, &report(100 * MS, 1e6, 0.01, 1));
        let x0 = s.rate();
        // Timer: max(4R, 2s/X) = max(400 ms, 17.8 ms) after the report.
        assert_eq!(s.no_feedback_at, Some(600 * MS));
        s.on_wake(600 * MS, &mut out);
        // X_calc = 112 kB/s is not above 2·max(X_recv_set) = 2 MB/s: the limit is X_calc/2,
        // and X_recv_set becomes {X_calc/4}.
        assert!((s.rate() - x0 / 2.0).abs() < 1e-6, "{} vs {x0}", s.rate());
        assert_eq!(s.no_feedback_at, Some(1000 * MS));
        s.on_wake(1000 * MS, &mut out);
        // Now X_calc > 2·X_calc/4: the limit is X_recv = X_calc/4.
        assert!((s.rate() - x0 / 4.0).abs() < 1e-6, "{} vs {x0}", s.rate());
        assert_eq!(s.tfrc.no_feedback_expiries, 2);
    }

    #[test]
    fn no_feedback_in_slow_start_halves_and_packets_slow_down() {
        let mut s = sender();
        let mut out = Vec::new();
        s.on_feedback(100 * MS, &report(0, 0.0, 0.0, 0));
        let x0 = s.rate();
        while let Some(t) = s.next_wake().filter(|&t| t <= 1200 * MS) {
            s.on_wake(t, &mut out);
        }
        // Expiries at 500 ms (max(4R, 2s/X) after the report) and 900 ms: X/4.
        assert_eq!(s.tfrc.no_feedback_expiries, 2);
        assert!((s.rate() - x0 / 4.0).abs() < 1e-9);
        // Packets went out 25 ms apart, then 50 ms, then 100 ms.
        let gaps: Vec<Time> = out.windows(2).map(|w| (w[1].ts - w[0].ts) / MS).collect();
        assert_eq!(gaps.first(), Some(&25));
        assert!(gaps.contains(&50));
        assert_eq!(gaps.last(), Some(&100));
    }

    /// A clock that wakes the sender late (a live endpoint) keeps the rate: packets stay on
    /// their nominal schedule (RFC 5348 §4.6) instead of each losing the lateness.
    #[test]
    fn late_wake_ups_keep_the_rate() {
        let mut s = sender();
        let mut out = Vec::new();
        s.on_feedback(100 * MS, &report(0, 0.0, 0.0, 0));
        let ipi = (1000.0 / s.rate() * 1e9).round() as Time; // 25 ms at 40 kB/s
        let late = ipi / 5;
        while let Some(t) = s.next_wake().filter(|&t| t < 400 * MS) {
            s.on_wake(t + late, &mut out);
        }
        // 100..400 ms at 25 ms: 12 packets, each sent 5 ms after its nominal time.
        let sent: Vec<Time> = out.iter().map(|p| p.ts).filter(|&t| t >= 100 * MS).collect();
        assert_eq!(sent.len(), 12, "{sent:?}");
        assert!(sent.windows(2).all(|w| w[1] - w[0] == ipi), "{sent:?}");
        // A stall of ten intervals: at most three packets at once, then the rate again.
        let stall = s.next_wake().unwrap() + 10 * ipi;
        let before = out.len();
        s.on_wake(stall, &mut out);
        assert!((1..=3).contains(&(out.len() - before)), "{} packets after the stall", out.len() - before);
        assert!(s.next_wake().unwrap() > stall);
    }

    #[test]
    fn a_finite_flow_sends_its_size_and_stops_its_timers() {
        let mut s = Sender::new(0, Arc::new(TfrcConfig::rfc5348()), Some(3), 500, Time::MAX);
        s.start(0);
        let mut out = Vec::new();
        s.on_feedback(10 * MS, &report(0, 0.0, 0.0, 0));
        while let Some(t) = s.next_wake() {
            s.on_wake(t, &mut out);
        }
        let sizes: Vec<u32> = out.iter().map(|p| p.size).collect();
        assert_eq!(sizes, vec![1040, 1040, 540]);
        assert_eq!(s.stats.bytes_sent, 2500);
    }
}
