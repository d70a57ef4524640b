//! The sending end: sequence numbers, loss detection and recovery, the retransmission timer.
//!
//! Sequence numbers count segments from 0, as in ns-2; an ACK carries the next segment
//! expected. The sender is sans-IO: it is handed `now` and a packet, pushes the packets it
//! sends into `out`, and exposes its timer deadline for the simulation to schedule.
//!
//! Loss recovery follows the variant chosen ([`Recovery`]); the window policy is delegated to
//! a [`CongestionControl`]. Every variant refuses a second fast retransmit for losses from a
//! window that is already being recovered (RFC 6582 §4 with `recover`; ns-2's `bug_fix_`).

use super::{MisRxReference, Recovery, RttEstimator, TcpConfig};
use crate::cc::{AckSample, CcState, CongestionControl, LossKind, LossSignal, Phase};
use crate::packet::{ecn, Kind, Packet};
use crate::units::Time;
use std::collections::VecDeque;

/// Duplicate ACKs that trigger fast retransmit.
const DUP_THRESH: u32 = 3;

/// Connection life cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Before the start time.
    Idle,
    /// SYN sent, waiting for the SYN-ACK.
    SynSent,
    /// Sending data.
    Open,
    /// Every byte of a finite transfer is acknowledged.
    Finished,
}

/// Counters of one sender.
#[derive(Clone, Copy, Debug, Default)]
pub struct SenderStats {
    /// Data segments sent, retransmissions included.
    pub packets_sent: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// Segments retransmitted.
    pub retransmits: u64,
    /// Fast-retransmit events.
    pub fast_retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// RTT samples: count, sum, min, max (ns).
    pub rtt_n: u64,
    /// Sum of RTT samples, ns.
    pub rtt_sum: f64,
    /// Smallest RTT sample, ns.
    pub rtt_min: Time,
    /// Largest RTT sample, ns.
    pub rtt_max: Time,
    /// Integral of cwnd over time, segment-nanoseconds.
    pub cwnd_integral: f64,
    /// Largest cwnd.
    pub cwnd_max: f64,
    /// When the last byte of a finite transfer was acknowledged.
    pub completed_at: Option<Time>,
    /// When the handshake completed.
    pub established_at: Option<Time>,
    /// Timeouts found to be spurious by mis-retransmission detection.
    pub misrx_detected: u64,
    /// When the flow started.
    pub started_at: Option<Time>,
    /// Window reductions in response to ECN echoes.
    pub ecn_reductions: u64,
}

/// What the sender remembers at a timeout to undo it if it proves spurious.
#[derive(Clone, Copy, Debug)]
struct TimeoutRecord {
    at: Time,
    cwnd: f64,
    snd_nxt: u64,
    rtt: f64,
}

/// A TCP sender.
#[derive(Debug)]
pub struct Sender {
    conn: u32,
    cfg: TcpConfig,
    /// Life-cycle state.
    pub state: State,
    stopped: bool,
    total_segs: Option<u64>,
    last_payload: u32,
    /// Oldest unacknowledged segment.
    pub snd_una: u64,
    /// Next segment to send.
    pub snd_nxt: u64,
    /// One past the highest segment ever sent.
    pub snd_max: u64,
    /// `snd_max` when the last loss episode began; a new fast retransmit needs an ACK at or
    /// beyond it.
    recover: Option<u64>,
    dupacks: u32,
    first_partial: bool,
    /// SACK scoreboard: `sacked[i]` for segment `snd_una + i`.
    sacked: VecDeque<bool>,
    high_sacked: u64,
    /// One past the highest segment retransmitted in this recovery (RFC 6675 HighRxt + 1).
    high_rxt: u64,
    /// RTT estimator.
    pub rtt: RttEstimator,
    backoff: u32,
    /// When the retransmission (or SYN) timer expires.
    pub rto_deadline: Option<Time>,
    /// Time of the timer event already in the event queue, if any.
    pub rto_entry: Option<Time>,
    round_end: u64,
    last_cwnd_t: Time,
    /// Last valid RTT sample, ns.
    last_rtt: Option<Time>,
    /// Pending mis-retransmission check: set at a timeout, consumed by the next new ACK.
    misrx_check: Option<TimeoutRecord>,
    /// Deadline of a forced timeout, once its segment has been sent.
    forced_deadline: Option<Time>,
    /// `snd_max` at the last ECN reduction: no second reduction for the same window, and a
    /// loss found in it is repaired without cutting the window again (RFC 3168 §6.1.2).
    ecn_recover: Option<u64>,
    /// The next new data segment carries CWR.
    cwr_pending: bool,
    /// Counters.
    pub stats: SenderStats,
}

impl Sender {
    /// A sender for connection `conn`. `total_segs`/`last_payload` describe a finite transfer.
    pub fn new(conn: u32, cfg: TcpConfig, total_segs: Option<u64>, last_payload: u32) -> Self {
        Sender {
            conn,
            cfg,
            state: State::Idle,
            stopped: false,
            total_segs,
            last_payload,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            recover: None,
            dupacks: 0,
            first_partial: true,
            sacked: VecDeque::new(),
            high_sacked: 0,
            high_rxt: 0,
            rtt: RttEstimator::new(&cfg),
            backoff: 1,
            rto_deadline: None,
            rto_entry: None,
            round_end: 0,
            last_cwnd_t: 0,
            last_rtt: None,
            misrx_check: None,
            forced_deadline: None,
            ecn_recover: None,
            cwr_pending: false,
            stats: SenderStats { rtt_min: u64::MAX, ..SenderStats::default() },
        }
    }

    /// Begin: send a SYN or the first window.
    pub fn start(&mut self, now: Time, st: &mut CcState, out: &mut Vec<Packet>) {
        self.stats.started_at = Some(now);
        self.last_cwnd_t = now;
        self.stats.cwnd_max = st.cwnd;
        if self.cfg.handshake {
            self.state = State::SynSent;
            out.push(Packet::new(self.conn, Kind::Syn, 0, self.cfg.ack_size, now));
            self.arm_timer(now);
        } else {
            self.state = State::Open;
            self.send_available(now, st, out);
        }
    }

    /// Stop offering new data (retransmissions of data already sent continue).
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// Segments sent and not yet acknowledged.
    pub fn in_flight(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// FlightSize for a window decrease, at most the window in force. In fast recovery that
    /// window is ssthresh: the inflation only stands for segments that have left the network,
    /// and with snd_una pinned by a hole FlightSize grows with every duplicate ACK. Otherwise it
    /// is cwnd: snd_max − snd_una can exceed cwnd just after a SACK recovery (data sent while
    /// holes and SACKed segments stayed below snd_max) or after a timeout (go-back-N), and a
    /// decrease taken from that would raise the window, which a factor above 1/2 (Scalable's
    /// 7/8) turns into a ratchet. ns-2 and Linux decrease from the window, not from snd_max.
    fn flight_for_decrease(&self, st: &CcState) -> u64 {
        let window = if st.phase == Phase::Recovery { st.ssthresh } else { st.cwnd };
        self.in_flight().min(window.ceil() as u64)
    }

    fn payload(&self, seq: u64) -> u32 {
        match self.total_segs {
            Some(t) if seq + 1 == t => self.last_payload,
            _ => self.cfg.mss,
        }
    }

    fn has_data(&self, seq: u64) -> bool {
        seq < self.snd_max || (!self.stopped && self.total_segs.is_none_or(|t| seq < t))
    }

    fn is_sacked(&self, seq: u64) -> bool {
        seq >= self.snd_una && self.sacked.get((seq - self.snd_una) as usize) == Some(&true)
    }

    fn emit(&mut self, now: Time, seq: u64, out: &mut Vec<Packet>) {
        let retx = seq < self.snd_max;
        let payload = self.payload(seq);
        let mut p = Packet::new(self.conn, Kind::Data, seq, payload + self.cfg.header, now);
        p.retx = retx;
        // Retransmissions are not ECN-capable (RFC 3168 §6.1.5); CWR rides on new data.
        if self.cfg.ecn && !retx {
            p.ecn = ecn::ECT;
            if self.cwr_pending {
                p.ecn |= ecn::CWR;
                self.cwr_pending = false;
            }
        }
        out.push(p);
        let s = &mut self.stats;
        s.packets_sent += 1;
        s.bytes_sent += u64::from(payload);
        if retx {
            s.retransmits += 1;
        }
        if seq >= self.snd_max {
            self.snd_max = seq + 1;
            if let Some((forced, after)) = self.cfg.force_timeout {
                if seq == forced {
                    self.forced_deadline = Some(now + after);
                    self.arm_timer(now);
                }
            }
        }
        if self.rto_deadline.is_none() {
            self.arm_timer(now);
        }
    }

    fn window(&self, st: &CcState) -> u64 {
        // cwnd ≥ 1, so truncation is floor (and avoids a libm call on the per-ACK path).
        (st.cwnd as u64).max(1).min(self.cfg.rwnd)
    }

    /// Send what the window allows.
    fn send_available(&mut self, now: Time, st: &mut CcState, out: &mut Vec<Packet>) {
        if self.state != State::Open {
            return;
        }
        if self.cfg.recovery == Recovery::Sack && st.phase == Phase::Recovery {
            self.send_sack_recovery(now, st, out);
        } else {
            let win = self.window(st);
            let mut burst = 0;
            loop {
                while self.snd_nxt < self.snd_max && self.is_sacked(self.snd_nxt) {
                    self.snd_nxt += 1;
                }
                let seq = self.snd_nxt;
                if seq - self.snd_una >= win || !self.has_data(seq) {
                    break;
                }
                if self.cfg.max_burst > 0 && burst >= self.cfg.max_burst {
                    break;
                }
                self.emit(now, seq, out);
                self.snd_nxt = seq + 1;
                burst += 1;
            }
        }
        st.in_flight = self.in_flight();
    }

    /// RFC 6675 §5: while cwnd − pipe ≥ 1, send NextSeg().
    fn send_sack_recovery(&mut self, now: Time, st: &mut CcState, out: &mut Vec<Packet>) {
        let (mut pipe, highest_lost) = self.set_pipe();
        let cwnd = (st.cwnd as u64).max(1);
        let mut burst = 0;
        while pipe < cwnd {
            if self.cfg.max_burst > 0 && burst >= self.cfg.max_burst {
                break;
            }
            // First un-SACKed segment not yet retransmitted in this recovery.
            let mut s = self.high_rxt.max(self.snd_una);
            while s < self.high_sacked && self.is_sacked(s) {
                s += 1;
            }
            let hole = s < self.high_sacked;
            if hole && highest_lost.is_some_and(|l| s <= l) {
                self.emit(now, s, out); // rule 1: a lost segment
                self.high_rxt = s + 1;
            } else if self.has_data(self.snd_max) && self.snd_max - self.snd_una < self.cfg.rwnd {
                let seq = self.snd_max; // rule 2: new data
                self.emit(now, seq, out);
                self.snd_nxt = self.snd_max;
            } else if hole {
                self.emit(now, s, out); // rule 3: a hole not yet deemed lost
                self.high_rxt = s + 1;
            } else {
                break;
            }
            pipe += 1;
            burst += 1;
        }
    }

    /// RFC 6675 SetPipe() and the highest segment IsLost() holds for. A segment is lost when
    /// at least DupThresh SACKed segments lie above it.
    fn set_pipe(&self) -> (u64, Option<u64>) {
        let mut pipe = 0;
        let mut sacked_above = 0;
        let mut highest_lost = None;
        for seq in (self.snd_una..self.snd_max).rev() {
            if self.is_sacked(seq) {
                sacked_above += 1;
                continue;
            }
            let lost = sacked_above >= DUP_THRESH;
            if lost && highest_lost.is_none() {
                highest_lost = Some(seq);
            }
            if !lost {
                pipe += 1;
            }
            if seq < self.high_rxt {
                pipe += 1;
            }
        }
        (pipe, highest_lost)
    }

    fn update_scoreboard(&mut self, ack: &Packet) {
        let una = self.snd_una;
        let len = (self.snd_max - una) as usize;
        self.sacked.resize(len, false);
        for (a, b) in ack.sack_blocks() {
            for seq in a.max(una)..b.min(self.snd_max) {
                self.sacked[(seq - una) as usize] = true;
            }
            self.high_sacked = self.high_sacked.max(b.min(self.snd_max));
        }
    }

    fn account_cwnd(&mut self, now: Time, st: &CcState) {
        self.stats.cwnd_integral += st.cwnd * (now - self.last_cwnd_t) as f64;
        self.last_cwnd_t = now;
    }

    fn set_phase(&mut self, st: &mut CcState, cc: &mut dyn CongestionControl, to: Phase) {
        let from = st.phase;
        if from != to {
            st.phase = to;
            cc.on_phase(st, from, to);
        }
    }

    /// (Re)start the retransmission timer: RTO from now, or earlier if a forced timeout is
    /// pending; never when the timer is disabled (unless forced).
    fn arm_timer(&mut self, now: Time) {
        let rto = self.cfg.rto_enabled.then(|| now + self.rtt.timeout(self.backoff));
        self.rto_deadline = match (rto, self.forced_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }

    /// The handshake's SYN-ACK arrived.
    pub fn on_synack(&mut self, now: Time, p: &Packet, st: &mut CcState, out: &mut Vec<Packet>) {
        if self.state != State::SynSent {
            return;
        }
        if !p.retx {
            self.rtt.sample(now - p.ts);
            st.srtt = self.rtt.srtt;
        }
        self.backoff = 1;
        self.state = State::Open;
        self.stats.established_at = Some(now);
        self.rto_deadline = None;
        self.send_available(now, st, out);
    }

    /// An ACK arrived.
    pub fn on_ack(
        &mut self,
        now: Time,
        p: &Packet,
        st: &mut CcState,
        cc: &mut dyn CongestionControl,
        out: &mut Vec<Packet>,
    ) {
        if self.state != State::Open {
            return;
        }
        self.account_cwnd(now, st);
        let ack = p.seq;
        if self.cfg.recovery == Recovery::Sack {
            self.update_scoreboard(p);
        }
        if ack > self.snd_una && ack <= self.snd_max {
            self.on_new_ack(now, p, st, cc, out);
        } else if ack == self.snd_una && self.snd_una < self.snd_max {
            self.on_dup_ack(now, st, cc, out);
        }
        st.in_flight = self.in_flight();
        self.stats.cwnd_max = self.stats.cwnd_max.max(st.cwnd);
    }

    fn on_new_ack(
        &mut self,
        now: Time,
        p: &Packet,
        st: &mut CcState,
        cc: &mut dyn CongestionControl,
        out: &mut Vec<Packet>,
    ) {
        let ack = p.seq;
        let newly = ack - self.snd_una;
        let in_flight_before = self.in_flight();
        // Karn's rule: no sample from an ACK echoing a retransmitted segment.
        let rtt = (!p.retx).then(|| now - p.ts);
        if let Some(r) = rtt {
            self.rtt.sample(r);
            self.last_rtt = Some(r);
            self.backoff = 1;
            st.srtt = self.rtt.srtt;
            st.min_rtt = st.min_rtt.min(r);
            let s = &mut self.stats;
            s.rtt_n += 1;
            s.rtt_sum += r as f64;
            s.rtt_min = s.rtt_min.min(r);
            s.rtt_max = s.rtt_max.max(r);
        }
        self.snd_una = ack;
        if self.forced_deadline.is_some() && self.cfg.force_timeout.is_some_and(|(seg, _)| ack > seg) {
            self.forced_deadline = None;
        }
        // Hasegawa Eq 3.16: the first ACK after a timeout, back sooner than k·RTT, acknowledges
        // the original transmission: restore ssthresh to the window before the timeout and
        // cancel the go-back-N by restoring snd_nxt.
        let mut spurious_snd_nxt = None;
        if let (Some(rec), Some(cfg)) = (self.misrx_check.take(), self.cfg.misrx) {
            if ((now - rec.at) as f64) < cfg.k * rec.rtt {
                st.ssthresh = rec.cwnd;
                spurious_snd_nxt = Some(rec.snd_nxt);
                self.stats.misrx_detected += 1;
            }
        }
        for _ in 0..newly.min(self.sacked.len() as u64) {
            self.sacked.pop_front();
        }
        if self.snd_nxt < self.snd_una {
            self.snd_nxt = self.snd_una;
        }
        if let Some(nxt) = spurious_snd_nxt {
            self.snd_nxt = self.snd_nxt.max(nxt);
        }
        if self.high_rxt < self.snd_una {
            self.high_rxt = self.snd_una;
        }
        let round_start = ack >= self.round_end;
        if round_start {
            self.round_end = self.snd_max;
        }
        self.dupacks = 0;
        let full = self.recover.is_none_or(|r| ack >= r);
        let mut restart_timer = true;
        match st.phase {
            Phase::Recovery => match self.cfg.recovery {
                Recovery::Newreno if !full => {
                    // RFC 6582 §3.2 step 5, partial ACK: retransmit the next hole, deflate by
                    // the amount acknowledged, add back one segment; reset the timer on the
                    // first partial ACK only (the "impatient" variant).
                    self.emit(now, self.snd_una, out);
                    st.cwnd = (st.cwnd - newly as f64 + 1.0).max(1.0);
                    restart_timer = self.first_partial;
                    self.first_partial = false;
                }
                Recovery::Sack if !full => {}
                _ => {
                    // Full ACK (or Reno's first new ACK): deflate to ssthresh, leave recovery.
                    st.cwnd = st.ssthresh;
                    self.set_phase(st, cc, Phase::Open);
                }
            },
            Phase::Loss | Phase::Open => {
                if st.phase == Phase::Loss && full {
                    self.set_phase(st, cc, Phase::Open);
                }
                st.in_flight = self.in_flight();
                if p.ecn & ecn::ECE != 0 && st.phase == Phase::Open && self.ecn_may_reduce(ack) {
                    self.reduce_for_ecn(now, st, cc);
                } else {
                    let sample = AckSample { now, newly_acked: newly, rtt, round_start, in_flight_before };
                    cc.on_ack(st, &sample);
                }
            }
        }
        if self.total_segs == Some(self.snd_una) {
            self.state = State::Finished;
            self.stats.completed_at = Some(now);
            self.rto_deadline = None;
            return;
        }
        if self.snd_una == self.snd_max {
            self.rto_deadline = None;
        } else if restart_timer {
            self.arm_timer(now);
        }
        self.send_available(now, st, out);
    }

    fn on_dup_ack(&mut self, now: Time, st: &mut CcState, cc: &mut dyn CongestionControl, out: &mut Vec<Packet>) {
        self.dupacks += 1;
        if st.phase == Phase::Recovery {
            if self.cfg.recovery != Recovery::Sack {
                st.cwnd += 1.0; // window inflation (RFC 5681 §3.2 step 4)
            }
            self.send_available(now, st, out);
            return;
        }
        let lost_by_sack = self.cfg.recovery == Recovery::Sack && self.set_pipe().1.is_some_and(|l| l >= self.snd_una);
        if self.dupacks < DUP_THRESH && !lost_by_sack {
            return;
        }
        if self.recover.is_some_and(|r| self.snd_una < r) {
            return; // losses of a window already being recovered (RFC 6582 §4, ns-2 bug_fix_)
        }
        // After an ECN reduction in this window the loss is repaired without a second cut.
        if self.ecn_recover.is_none_or(|r| self.snd_una >= r) {
            let flight = self.flight_for_decrease(st);
            st.ssthresh = cc.ssthresh_after(st, &LossSignal { kind: LossKind::DupAcks, now, flight_size: flight });
        }
        self.recover = Some(self.snd_max);
        self.stats.fast_retransmits += 1;
        self.first_partial = true;
        match self.cfg.recovery {
            Recovery::Tahoe => {
                // No fast recovery: slow start again from one segment, going back N.
                st.cwnd = 1.0;
                self.snd_nxt = self.snd_una;
                self.arm_timer(now);
                self.send_available(now, st, out);
            }
            Recovery::Reno | Recovery::Newreno => {
                self.emit(now, self.snd_una, out);
                st.cwnd = st.ssthresh + f64::from(DUP_THRESH);
                self.set_phase(st, cc, Phase::Recovery);
                self.arm_timer(now);
                self.send_available(now, st, out);
            }
            Recovery::Sack => {
                st.cwnd = st.ssthresh;
                self.set_phase(st, cc, Phase::Recovery);
                self.high_rxt = self.snd_una;
                self.emit(now, self.snd_una, out);
                self.high_rxt = self.snd_una + 1;
                self.arm_timer(now);
                self.send_available(now, st, out);
            }
        }
    }

    /// Whether an ECN echo on an ACK of `ack` may reduce the window: not twice for one window
    /// of data, nor inside a window already cut for a loss.
    fn ecn_may_reduce(&self, ack: u64) -> bool {
        self.recover.is_none_or(|r| ack > r) && self.ecn_recover.is_none_or(|r| ack > r)
    }

    /// React to an ECN echo as to a loss found by duplicate ACKs, without retransmitting:
    /// ssthresh from the algorithm, cwnd down to it, CWR on the next new segment.
    fn reduce_for_ecn(&mut self, now: Time, st: &mut CcState, cc: &mut dyn CongestionControl) {
        let flight = self.flight_for_decrease(st);
        st.ssthresh = cc.ssthresh_after(st, &LossSignal { kind: LossKind::DupAcks, now, flight_size: flight });
        st.cwnd = st.ssthresh.max(1.0);
        self.ecn_recover = Some(self.snd_max);
        self.cwr_pending = true;
        self.stats.ecn_reductions += 1;
    }

    /// The timer event fired at `now`; acts only if the deadline has really passed.
    pub fn on_timer(&mut self, now: Time, st: &mut CcState, cc: &mut dyn CongestionControl, out: &mut Vec<Packet>) {
        match self.rto_deadline {
            Some(d) if d <= now => {}
            _ => return,
        }
        if self.forced_deadline.is_some_and(|f| f <= now) {
            self.forced_deadline = None;
        }
        self.backoff = (self.backoff * 2).min(self.cfg.max_backoff);
        if self.state == State::SynSent {
            let mut syn = Packet::new(self.conn, Kind::Syn, 0, self.cfg.ack_size, now);
            syn.retx = true;
            out.push(syn);
            self.stats.timeouts += 1;
            self.arm_timer(now);
            return;
        }
        if self.state != State::Open || self.snd_una >= self.snd_max {
            self.rto_deadline = None;
            return;
        }
        self.account_cwnd(now, st);
        self.stats.timeouts += 1;
        let flight = self.flight_for_decrease(st);
        if let Some(cfg) = self.cfg.misrx {
            let rtt = match cfg.reference {
                MisRxReference::LastSample => self.last_rtt.map(|r| r as f64),
                MisRxReference::Srtt => (self.rtt.samples > 0).then_some(self.rtt.srtt),
            };
            let window = if st.phase == Phase::Recovery { st.ssthresh } else { st.cwnd };
            self.misrx_check = rtt.map(|rtt| TimeoutRecord { at: now, cwnd: window, snd_nxt: self.snd_nxt, rtt });
        }
        st.ssthresh = cc.ssthresh_after(st, &LossSignal { kind: LossKind::Timeout, now, flight_size: flight });
        st.cwnd = 1.0;
        self.set_phase(st, cc, Phase::Loss);
        self.recover = Some(self.snd_max);
        self.dupacks = 0;
        // Go back N: resend from the first unacknowledged segment (skipping SACKed ones).
        self.snd_nxt = self.snd_una;
        self.high_rxt = self.snd_una;
        self.arm_timer(now);
        self.send_available(now, st, out);
    }

    /// Close the books at `now` (end of the run).
    pub fn finish(&mut self, now: Time, st: &CcState) {
        if self.stats.started_at.is_some() {
            let end = self.stats.completed_at.unwrap_or(now);
            if end > self.last_cwnd_t {
                self.stats.cwnd_integral += st.cwnd * (end - self.last_cwnd_t) as f64;
                self.last_cwnd_t = end;
            }
        }
    }
}
