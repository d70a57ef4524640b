//! The TFRC receiver (RFC 5348 §6): it measures the loss event rate and the receive rate and
//! reports them to the sender.
//!
//! - Each data packet goes into the [`LossHistory`]. A packet that reveals a new loss event
//!   which raises `p` triggers a report at once (§6.1 step 4).
//! - Otherwise a report goes out once per RTT (`num_feedback` times per RTT), the RTT being the
//!   one the sender wrote into the latest data packet, if data arrived since the last report
//!   (§6.2). The first data packet is reported at once (§6.3). While the sender has no RTT
//!   estimate, every packet is reported.
//! - A report echoes the latest data packet's timestamp plus the time it was held, so that the
//!   sender's RTT sample is `now − echo` (§3.2.2's `t_recvdata` and `t_delay` in one field);
//!   it carries `X_recv`, the payload rate received since the previous report, `p`, and `j`,
//!   the mean packets lost per loss event (for MulTFRC; 0 before the first loss,
//!   draft-welzl-multfrc-01 §6.3).
//! - At the first loss event the history gets a synthetic first interval, `1/p` for the `p`
//!   at which the equation gives the receive rate `X_target` (§6.3.1); `X_target` is the
//!   larger of the last reported rate and the rate since, and at least half a packet per RTT.
//!   The equation is inverted with `j = 1`, and the interval holds one lost packet
//!   (draft-welzl-multfrc-01 §6.3.1).
//!
//! - CP ([`super::Equation::Cp`]): `p`, `j`, the loss events a report counts and the seeded
//!   interval are those of the 1/n sample of the packets ([`CpFilter`]); the history of all
//!   packets still counts what arrived and the loss events of the whole flow.
//!
//! Not modelled: ECN marks as losses (§6.1 note), the data-limited corrections of §6.3.1.

use super::config::TfrcConfig;
use super::cp::CpFilter;
use super::equation::{Equation, Inputs};
use super::loss_history::LossHistory;
use crate::packet::{Kind, Packet};
use crate::units::{secs, Time};
use std::sync::Arc;

/// The receiving end of a TFRC flow.
#[derive(Clone, Debug)]
pub struct Receiver {
    conn: u32,
    cfg: Arc<TfrcConfig>,
    history: LossHistory,
    /// CP's filter and the loss history of its sample.
    cp: Option<CpFilter>,
    /// The latest data packet: send time, arrival time.
    last: Option<(Time, Time)>,
    /// The sender's RTT estimate carried by the latest data packet, ns (0: none yet).
    rtt: Time,
    bytes_since: u64,
    last_report: Option<Time>,
    x_recv_last: f64,
    p_prev: f64,
    /// The time integral of the loss event rate reported, up to the last report
    /// (rate · seconds): the mean reported rate over a window is what ns-2's `printLoss_`
    /// output gives when averaged over time.
    p_integral: f64,
    next_report: Option<Time>,
    /// When the report of the first loss event left (MulTFRC with `first_event_lost = "one"`):
    /// the losses revealed by packets sent before then belong to that event.
    first_report: Option<Time>,
    /// Distinct data packets received.
    pub packets: u64,
    /// Payload bytes received (duplicates included).
    pub bytes: u64,
    /// Reports sent.
    pub reports: u64,
}

impl Receiver {
    /// The receiver of connection `conn`.
    pub fn new(conn: u32, cfg: Arc<TfrcConfig>) -> Self {
        Receiver {
            conn,
            history: LossHistory::new(cfg.weights.clone(), cfg.discount),
            cp: match cfg.equation {
                Equation::Cp { n, .. } => Some(CpFilter::new(n, cfg.weights.clone(), cfg.discount)),
                _ => None,
            },
            cfg,
            last: None,
            rtt: 0,
            bytes_since: 0,
            last_report: None,
            x_recv_last: 0.0,
            p_prev: 0.0,
            p_integral: 0.0,
            next_report: None,
            first_report: None,
            packets: 0,
            bytes: 0,
            reports: 0,
        }
    }

    /// The loss history of all packets (for CP, not the sample its `p` is measured on).
    pub fn history(&self) -> &LossHistory {
        &self.history
    }

    /// The history `p` is measured on: all packets, or CP's sample.
    fn measured(&self) -> &LossHistory {
        self.cp.as_ref().map_or(&self.history, CpFilter::history)
    }

    /// The loss event rate now (0 before the first loss event); CP's is its sample's.
    pub fn loss_event_rate(&self) -> f64 {
        self.measured().estimate().map_or(0.0, |e| e.p)
    }

    /// The time integral of the reported loss event rate from the first report to `now`
    /// (each reported value holds until the next report).
    pub fn reported_p_integral(&self, now: Time) -> f64 {
        self.p_integral + self.last_report.map_or(0.0, |t| self.p_prev * secs(now.saturating_sub(t)))
    }

    /// The latest data packet: its send time (the sender's clock) and its arrival time. A
    /// report's timestamp is the first plus the time since the second (RFC 5348 §6.2's
    /// `t_recvdata` and `t_delay`), which a wire format may carry apart.
    pub fn last_data(&self) -> Option<(Time, Time)> {
        self.last
    }

    /// When the feedback timer fires next.
    pub fn next_wake(&self) -> Option<Time> {
        self.next_report
    }

    fn report_interval(&self) -> Time {
        (self.rtt / Time::from(self.cfg.num_feedback)).max(1)
    }

    /// Data packet `p` arrived at `now`; reports go to `out`.
    pub fn on_packet(&mut self, now: Time, p: &Packet, out: &mut Vec<Packet>) {
        debug_assert_eq!(p.kind, Kind::TfrcData);
        let payload = p.size.saturating_sub(self.cfg.header);
        self.bytes += u64::from(payload);
        self.bytes_since += u64::from(payload);
        let first = self.last.is_none();
        self.last = Some((p.ts, now));
        self.rtt = p.word(0);
        if self.history.holding() && self.first_report.is_some_and(|t| p.ts >= t) {
            // The sender had the first loss report when it sent this packet: the slow-start
            // overshoot is over.
            self.history.release();
        }
        let before = self.history.packets_received();
        let mut new_event = self.history.on_packet(p.seq, now, self.rtt);
        self.packets += self.history.packets_received() - before;
        if let Some(cp) = &mut self.cp {
            new_event = cp.on_packet(p.seq, now, self.rtt);
        }
        if new_event && self.measured().intervals().next().is_none() {
            self.seed_history(now);
            if self.cfg.first_event_lost_one {
                self.history.pin_lost();
                self.first_report = Some(now);
            }
        }
        let raised = new_event && self.loss_event_rate() > self.p_prev;
        if first || raised || self.rtt == 0 {
            self.report(now, out);
        }
        if self.next_report.is_none() && self.rtt > 0 {
            self.next_report = Some(now + self.report_interval());
        }
    }

    /// The feedback timer fired at `now` (RFC 5348 §6.2).
    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Packet>) {
        match self.next_report {
            Some(t) if t <= now => {}
            _ => return,
        }
        if self.bytes_since > 0 {
            self.report(now, out);
            self.next_report = Some(now + self.report_interval());
        } else {
            // Nothing arrived: no report, and the timer waits for the next packet.
            self.next_report = None;
        }
    }

    /// The rate received since the last report, bytes/s (0 if no time has passed).
    fn rate_since_report(&self, now: Time) -> f64 {
        match self.last_report {
            Some(t) if now > t => self.bytes_since as f64 / secs(now - t),
            _ => 0.0,
        }
    }

    /// RFC 5348 §6.3.1: a first interval that makes the equation give the receive rate.
    fn seed_history(&mut self, now: Time) {
        let s = f64::from(self.cfg.payload);
        let r = if self.rtt > 0 { secs(self.rtt) } else { self.last_report.map_or(0.1, |t| secs(now - t).max(1e-6)) };
        let target = self.x_recv_last.max(self.rate_since_report(now)).max(0.5 * s / r);
        let p = self.cfg.equation.invert(target, &Inputs { s, r, p: 0.0, t_rto: 4.0 * r, j: 1.0 });
        match &mut self.cp {
            Some(cp) => cp.history_mut().seed(1.0 / p),
            None => self.history.seed(1.0 / p),
        }
    }

    fn report(&mut self, now: Time, out: &mut Vec<Packet>) {
        let (ts, at) = self.last.expect("a report follows a data packet");
        let x_recv = self.rate_since_report(now);
        let est = self.measured().estimate();
        let (p, j) = est.map_or((0.0, 0.0), |e| (e.p, e.j));
        let mut fb = Packet::new(
            self.conn,
            Kind::TfrcFeedback,
            self.measured().loss_events(),
            self.cfg.feedback_size,
            ts + (now - at),
        );
        fb.set_word(0, x_recv.to_bits());
        fb.set_word(1, p.to_bits());
        fb.set_word(2, j.to_bits());
        out.push(fb);
        self.p_integral = self.reported_p_integral(now);
        self.reports += 1;
        self.bytes_since = 0;
        self.last_report = Some(now);
        self.x_recv_last = x_recv;
        self.p_prev = p;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;

    fn data(seq: u64, ts: Time, rtt: Time) -> Packet {
        let mut p = Packet::new(0, Kind::TfrcData, seq, 1040, ts);
        p.set_word(0, rtt);
        p
    }

    fn words(p: &Packet) -> (f64, f64) {
        (f64::from_bits(p.word(0)), f64::from_bits(p.word(1)))
    }

    #[test]
    fn reports_the_first_packet_then_once_per_rtt_with_the_receive_rate() {
        let mut r = Receiver::new(0, Arc::new(TfrcConfig::rfc5348()));
        let mut out = Vec::new();
        // A packet every 10 ms, sent 5 ms before it arrives; the sender's RTT is 100 ms.
        r.on_packet(5 * MS, &data(0, 0, 100 * MS), &mut out);
        assert_eq!(out.len(), 1, "the first packet is reported at once");
        assert_eq!(out[0].ts, 0, "nothing held: the echo is the send time");
        assert_eq!(r.next_wake(), Some(105 * MS));
        out.clear();
        for k in 1..=10u64 {
            r.on_packet(5 * MS + k * 10 * MS, &data(k, k * 10 * MS, 100 * MS), &mut out);
        }
        assert!(out.is_empty());
        r.on_timer(105 * MS, &mut out);
        assert_eq!(out.len(), 1);
        // Ten 1000-byte packets in 100 ms: 100 kB/s; no loss.
        let (x_recv, p) = words(&out[0]);
        assert!((x_recv - 100_000.0).abs() < 1e-6, "{x_recv}");
        assert_eq!(p, 0.0);
        // The latest packet (sent at 100 ms) arrived at 105 ms and was held until 105 ms.
        assert_eq!(out[0].ts, 100 * MS);
        // No data in the next RTT: no report, the timer stops.
        out.clear();
        r.on_timer(205 * MS, &mut out);
        assert!(out.is_empty() && r.next_wake().is_none());
    }

    #[test]
    fn a_new_loss_event_is_reported_at_once_with_a_seeded_history() {
        let mut r = Receiver::new(0, Arc::new(TfrcConfig::rfc5348()));
        let mut out = Vec::new();
        for k in 0..=40u64 {
            if k == 30 {
                continue;
            }
            r.on_packet(k * MS + 5 * MS, &data(k, k * MS, 50 * MS), &mut out);
            if k == 33 {
                // Packet 33 is the third above the gap: the loss is found and reported.
                let fb = out.last().unwrap();
                assert_eq!(fb.seq, 1, "one loss event");
                let (_, p) = words(fb);
                assert!(p > 0.0 && p < 0.05, "{p}");
            }
        }
        assert_eq!(r.history().loss_events(), 1);
        assert_eq!(r.history().intervals().count(), 1, "the synthetic first interval");
    }

    #[test]
    fn multfrc_j_is_zero_at_start_and_one_over_the_seeded_interval() {
        // draft-welzl-multfrc-01 §6.3: j = 0 until a loss; §6.3.1: the synthetic first
        // interval, found with j = 1, holds one lost packet.
        let cfg: super::super::TfrcCfg = serde_json::from_str(r#"{"equation": "multfrc", "n": 4}"#).unwrap();
        let mut r = Receiver::new(0, Arc::new(cfg.resolve("tfrc").unwrap()));
        let mut out = Vec::new();
        let j = |p: &Packet| f64::from_bits(p.word(2));
        for k in 0..=40u64 {
            if k == 30 || k == 31 {
                continue;
            }
            r.on_packet(k * MS + 5 * MS, &data(k, k * MS, 50 * MS), &mut out);
            if k == 0 {
                assert_eq!(j(&out[0]), 0.0, "no loss yet");
            }
        }
        // 30 and 31 lie within one RTT: one loss event of two packets, which counts as one
        // (the first event, `first_event_lost = "one"`); the seeded interval holds one too.
        let fb = out.iter().find(|p| p.seq == 1).expect("the loss event is reported");
        assert_eq!(j(fb), 1.0);
        assert_eq!(r.history().lost_in_current_event(), 1);
        let seeded: Vec<_> = r.history().intervals().map(|i| (i.length > 40.0, i.lost)).collect();
        assert_eq!(seeded, vec![(true, 1)]);
    }

    /// Receive packets `0..=last` sent 1 ms apart (arriving 5 ms later, RTT 2 ms) except
    /// `lost`; the loss events counted and the packets lost in the last one.
    fn first_event(option: &str, lost: &[u64], last: u64) -> (u64, u32) {
        let json = format!(r#"{{"equation": "multfrc", "n": 4, "first_event_lost": "{option}"}}"#);
        let cfg: super::super::TfrcCfg = serde_json::from_str(&json).unwrap();
        let mut r = Receiver::new(0, Arc::new(cfg.resolve("tfrc").unwrap()));
        let mut out = Vec::new();
        for k in (0..=last).filter(|k| !lost.contains(k)) {
            r.on_packet(k * MS + 5 * MS, &data(k, k * MS, 2 * MS), &mut out);
        }
        (r.history().loss_events(), r.history().lost_in_current_event())
    }

    #[test]
    fn the_first_loss_event_holds_the_losses_sent_before_its_report() {
        // 10 is found lost when 13 arrives (18 ms): the report leaves then. 14 (sent at 14 ms,
        // more than an RTT after 10) is revealed by 17, sent before the report: it joins the
        // first event. 25 is revealed by packets sent after the report: a new event.
        assert_eq!(first_event("one", &[10, 14], 20), (1, 1));
        assert_eq!(first_event("one", &[10, 14, 25, 26], 40), (2, 2));
        assert_eq!(first_event("counted", &[10, 14], 20), (2, 1));
        assert_eq!(first_event("counted", &[10, 11, 12], 20).1, 3);
        assert_eq!(first_event("one", &[10, 11, 12], 20).1, 1);
    }
}
