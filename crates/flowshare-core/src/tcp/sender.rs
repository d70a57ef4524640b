//! The sending end: sequence numbers, loss detection and recovery, the retransmission timer.
//!
//! Sequence numbers count segments from 0, as in ns-2; an ACK carries the next segment
//! expected. The sender is sans-IO: it is handed `now` and a packet, pushes the packets it
//! sends into `out`, and exposes its timer deadline for the simulation to schedule.
//!
//! Loss recovery follows the variant chosen ([`Recovery`]); the window policy is asked of the
//! connection's group controller through the congestion-control host ([`CcHost`]), where the
//! connection is a member from its start until its transfer completes. Every variant refuses a
//! second fast retransmit for losses from a window that is already being recovered (RFC 6582 §4
//! with `recover`; ns-2's `bug_fix_`).
//!
//! Controllers with optional capabilities ([`Caps`]) are served here too: with `tags` the
//! controller admits each new segment under a loop tag, kept in a send record beside the
//! scoreboard and reported back per tag on delivery and loss; with `pacing` segments leave no
//! faster than the controller's pacing, released by the sender's pacing timer.

mod ns2_vegas;

use super::http::{Documents, HttpServer};
use super::lost::LostMarks;
use super::{Decrease, MisRxReference, RecoverRule, Recovery, RtoRestart, RttTiming, SackRecovery, TcpConfig};
use crate::cc::host::GroupId;
use crate::cc::{
    AckSample, Caps, CcHost, CcState, Delivered, GroupControl, LossKind, LossSignal, LostSegment, MemberId, Pacing,
    Phase, RateSample, RttEstimator, Tag,
};
use crate::packet::{ecn, Kind, Packet, MAX_SACK_BLOCKS};
use crate::units::Time;
use std::collections::VecDeque;

/// Duplicate ACKs that trigger fast retransmit.
const DUP_THRESH: u32 = 3;

/// Connection life cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Before the start time.
    Idle,
    /// An HTTP server waiting for its client's SYN, or for the request after its SYN-ACK.
    Listen,
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
    /// Data segments and SYNs sent, retransmissions included (everything the sender puts on
    /// the network, so that sent = received + dropped + lost + still in the network).
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
    /// Congestion episodes the window was reduced for: fast-recovery entries that cut the
    /// window, ECN reductions, and timeouts outside an episode already counted (a timeout in
    /// fast recovery, or a backed-off one, is not a new episode).
    pub loss_events: u64,
    /// Largest retransmission-timer backoff multiplier reached (1: never backed off).
    pub backoff_max: u32,
    /// cwnd and ssthresh when it joined its controller, segments: what it starts sending with
    /// (an ensemble's join rule may have re-shared them).
    pub initial_cwnd: f64,
    /// See `initial_cwnd`; infinite when unbounded.
    pub initial_ssthresh: f64,
    /// SRTT and RTTVAR it started with, ns, if it started with an estimate (inherited from an
    /// ensemble or a closed connection).
    pub initial_rtt: Option<(f64, f64)>,
}

/// `Sender::member` of a sender that is not in the congestion-control host.
const NOT_A_MEMBER: MemberId = MemberId::MAX;

/// Where a sender's congestion control comes from.
#[derive(Debug)]
pub enum Controller {
    /// A group of its own, run by this controller (a plain algorithm).
    Solo(Box<dyn GroupControl>),
    /// A member of an existing group.
    Group(GroupId),
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
    /// Serving HTTP documents (`tcp::http`): the client opens the connection and asks for
    /// each document.
    http: Option<Box<HttpServer>>,
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
    /// Segments marked in `sacked`.
    sacked_count: u64,
    /// The SACK blocks of the last ACK, as marked (clamped to the window then): a block that
    /// grows from one ACK to the next is marked only where it grew.
    sack_marked: [(u64, u64); MAX_SACK_BLOCKS],
    /// Linux accounting (`rate_halving`, `prr`): the segments held lost.
    lost: LostMarks,
    /// Segments newly delivered, cumulatively or by SACK, by the ACK being processed.
    delivered_now: u64,
    /// Rate halving: the pipe target, falling from the window before recovery (ns-2's
    /// `next_pkts_in_flight_`).
    rh_next: u64,
    /// The window the last cut left (ssthresh, or with `decrease = "window"` ns-2's real
    /// half window): cwnd when a Reno or NewReno recovery ends, or a SACK one begins.
    cut_cwnd: f64,
    /// PRR (RFC 6937): prr_delivered, prr_out and RecoverFS of the current recovery.
    prr: (u64, u64, u64),
    /// Segments sent by limited transmit since the last new ACK: they do not count in the
    /// FlightSize a reduction is taken from (RFC 5681 §3.2, as RFC 6675 §5 recalls).
    limited_sent: u64,
    high_sacked: u64,
    /// One past the highest segment retransmitted in this recovery (RFC 6675 HighRxt + 1).
    high_rxt: u64,
    /// Segments SACKed in [snd_una, high_rxt): with it SetPipe needs no scan of the window.
    rxt_sacked: u64,
    backoff: u32,
    /// When the retransmission (or SYN) timer expires.
    pub rto_deadline: Option<Time>,
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
    /// The controller until the sender starts (and joins the host).
    controller: Option<Controller>,
    /// Member of the congestion-control host from the start until the transfer completes
    /// ([`NOT_A_MEMBER`] otherwise).
    member: MemberId,
    /// The member's controller's optional hooks.
    caps: Caps,
    /// The congestion state when the sender left the host (a completed transfer).
    last_state: Option<CcState>,
    /// With tags: (loop tag, last send time) of each segment from `snd_una` to `snd_max`.
    record: VecDeque<(Tag, Time)>,
    /// With tags: segments newly acknowledged per tag, reused from ACK to ACK.
    delivered: Vec<u32>,
    /// With tags: the segments newly acknowledged, (seq, tag), reused from ACK to ACK.
    delivered_segs: Vec<(u64, Tag)>,
    /// How the losses being repaired were found (reported with each retransmission).
    loss_kind: LossKind,
    /// Pacing: segments left in the current burst, and when the next burst may start.
    pace_left: u32,
    pace_next: Time,
    /// When the pacing timer releases the next segment.
    pace_wake: Option<Time>,
    /// The sending host's interface ([`Sender::set_interface_rate`]): segments leave no
    /// faster than it sends them, whatever the controller paces.
    interface: Option<Pacing>,
    /// ns-2's Vegas agent (`vegas` variant `ns2`), which does its own ACK processing.
    vegas: Option<Box<ns2_vegas::Ns2VegasState>>,
    /// `rtt_timing = "ns2"`: the segment being timed and when it left (ns-2's `rtt_seq_`,
    /// `rtt_ts_`; `rtt_active_` is `timing`), and the phase of the connection's clock.
    timing: bool,
    timed: Option<(u64, Time)>,
    /// `rtt_timing = "ns2"`.
    ns2_timing: bool,
    /// Linux's accounting of what is in flight ([`Sender::linux_pipe`]).
    linux: bool,
    /// Something beyond the common path wants to hear of each segment sent.
    send_hooks: bool,
    /// `rto_restart = "oldest_sent"`: the last send time of each segment from `snd_una` to
    /// `snd_max` (empty otherwise).
    sent_times: VecDeque<Time>,
    clock_phase: Time,
    /// With [`Caps::rate`]: delivery-rate estimation (Linux `tcp_rate.c`).
    rate: Option<Box<RateState>>,
    /// The rate sample of the ACK being processed.
    rate_now: Option<RateSample>,
}

/// What is remembered of a segment when it is (re)sent, for delivery-rate samples (Linux's
/// `tcp_skb_cb.tx`).
#[derive(Clone, Copy, Debug, Default)]
struct SendRec {
    /// The connection's delivered count at the send.
    delivered: u64,
    /// When that count last changed.
    delivered_time: Time,
    /// Send time of the first segment of the current flight.
    first_tx_time: Time,
    /// Sent while application-limited.
    app_limited: bool,
    /// Send time.
    sent: Time,
}

/// Delivery-rate estimation of one connection (Linux `tcp_rate.c`, in segments).
#[derive(Clone, Debug, Default)]
struct RateState {
    /// Segments delivered (cumulatively or by SACK) so far (`tp->delivered`).
    delivered: u64,
    /// When `delivered` last changed (`tp->delivered_mstamp`).
    delivered_time: Time,
    /// Send time of the segment the last sample started from (`tp->first_tx_mstamp`).
    first_tx_time: Time,
    /// Non-zero while the connection is application-limited: the delivered count at which
    /// that ends (`tp->app_limited`).
    app_limited: u64,
    /// One record per segment from `snd_una` to `snd_max`.
    recs: VecDeque<SendRec>,
    /// The record of the segment newly delivered by the current ACK that was sent last, and
    /// how many were delivered.
    best: Option<SendRec>,
    newly: u64,
}

impl RateState {
    /// Segment at index `k` (from `snd_una`) was delivered by the ACK being processed
    /// (`tcp_rate_skb_delivered`): the sample starts from the one sent last.
    fn delivered(&mut self, k: usize) {
        let r = self.recs[k];
        self.newly += 1;
        if self.best.is_none_or(|b| r.sent > b.sent || (r.sent == b.sent && r.delivered > b.delivered)) {
            self.best = Some(r);
        }
    }

    /// The sample of the ACK being processed at `now` (`tcp_rate_gen`), once every segment it
    /// delivered has been counted.
    fn sample(&mut self, now: Time, min_rtt: Time, prior_in_flight: u64, in_flight: u64) -> RateSample {
        let newly = std::mem::take(&mut self.newly);
        self.delivered += newly;
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let mut rs = RateSample {
            total_delivered: self.delivered,
            acked: newly,
            prior_in_flight,
            in_flight,
            ..RateSample::default()
        };
        if newly > 0 {
            self.delivered_time = now;
        }
        let Some(b) = self.best.take() else {
            return rs;
        };
        self.first_tx_time = b.sent;
        rs.prior_delivered = b.delivered;
        rs.prior_time = b.delivered_time;
        rs.app_limited = b.app_limited;
        rs.delivered = self.delivered - b.delivered;
        let send_elapsed = b.sent.saturating_sub(b.first_tx_time);
        let ack_elapsed = now.saturating_sub(b.delivered_time);
        let interval = send_elapsed.max(ack_elapsed);
        // An interval shorter than the min RTT would over-estimate the rate (ACK compression).
        rs.interval = if interval >= min_rtt && min_rtt != u64::MAX { interval } else { 0 };
        rs
    }
}

impl Sender {
    /// A sender for connection `conn` under `controller`. `total_segs`/`last_payload` describe
    /// a finite transfer.
    pub fn new(conn: u32, cfg: TcpConfig, total_segs: Option<u64>, last_payload: u32, controller: Controller) -> Self {
        let vegas = cfg.ns2_vegas.map(|p| Box::new(ns2_vegas::Ns2VegasState::new(p)));
        let ns2_timing = cfg.rtt_timing == RttTiming::Ns2;
        Sender {
            ns2_timing,
            linux: cfg.recovery == Recovery::Sack && cfg.sack_recovery.linux_pipe(),
            send_hooks: ns2_timing || vegas.is_some() || cfg.rto_restart == RtoRestart::OldestSent,
            sent_times: VecDeque::new(),
            vegas,
            timing: false,
            timed: None,
            clock_phase: 0,
            conn,
            cfg,
            state: State::Idle,
            stopped: false,
            total_segs: total_segs.map(|t| t + u64::from(cfg.syn_segment)),
            last_payload,
            http: None,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            recover: None,
            dupacks: 0,
            first_partial: true,
            sacked: VecDeque::new(),
            sacked_count: 0,
            sack_marked: [(0, 0); MAX_SACK_BLOCKS],
            lost: LostMarks::new(cfg.sack_recovery == SackRecovery::RateHalving),
            delivered_now: 0,
            rh_next: 0,
            cut_cwnd: 0.0,
            prr: (0, 0, 0),
            limited_sent: 0,
            high_sacked: 0,
            high_rxt: 0,
            rxt_sacked: 0,
            backoff: 1,
            rto_deadline: None,
            round_end: 0,
            last_cwnd_t: 0,
            last_rtt: None,
            misrx_check: None,
            forced_deadline: None,
            ecn_recover: None,
            cwr_pending: false,
            stats: SenderStats { rtt_min: u64::MAX, backoff_max: 1, ..SenderStats::default() },
            controller: Some(controller),
            member: NOT_A_MEMBER,
            caps: Caps::default(),
            last_state: None,
            record: VecDeque::new(),
            delivered: Vec::new(),
            delivered_segs: Vec::new(),
            loss_kind: LossKind::DupAcks,
            pace_left: 0,
            pace_next: 0,
            pace_wake: None,
            interface: None,
            rate: None,
            rate_now: None,
        }
    }

    /// Put the sender under `controller` instead of the one it was made with; refused (false)
    /// once it has started.
    pub fn set_controller(&mut self, controller: Controller) -> bool {
        if self.controller.is_none() {
            return false;
        }
        self.controller = Some(controller);
        true
    }

    /// Serve `docs` to an HTTP client instead of sending at once (before it starts): the
    /// transfer becomes the documents, and each is sent once the client has asked for it.
    /// `restart`: each later document starts from the initial window and ssthresh, as a new
    /// connection would (resolution `hasegawa:A35`); otherwise the window carries over.
    pub fn serve_http(&mut self, docs: Documents, restart: bool) {
        debug_assert!(self.state == State::Idle && !self.cfg.handshake && !self.cfg.syn_segment);
        self.total_segs = Some(docs.total_segs());
        self.http = Some(Box::new(HttpServer::new(docs, restart)));
    }

    /// The group it was put in with [`Sender::set_controller`], before it starts.
    pub fn group(&self) -> Option<GroupId> {
        match self.controller {
            Some(Controller::Group(g)) => Some(g),
            _ => None,
        }
    }

    /// The congestion state the connection starts with.
    fn initial_state(&self) -> CcState {
        let c = &self.cfg;
        // ns-2's Vegas agent starts from one segment (`delay_growth_`; ns2_vegas.rs).
        let window = if self.vegas.is_some() { 1.0 } else { c.initial_window };
        let mut st = CcState::new(window, c.initial_ssthresh, c.mss);
        st.max_ssthresh = c.max_ssthresh;
        st.slow_start_at_ssthresh = c.slow_start_at_ssthresh;
        st.rtt = match c.rtt_timing {
            RttTiming::EveryAck => RttEstimator::new(c.rto_initial, c.timer_tick, c.rto_min, c.rto_max),
            RttTiming::Ns2 => RttEstimator::new_ns2(c.rto_initial, c.timer_tick, c.rto_min, c.rto_max),
        };
        st
    }

    /// The connection's congestion state: in the host while it is a member, the initial state
    /// before it starts, the state it left with after its transfer completed.
    pub fn cc_state(&self, cc: &CcHost) -> CcState {
        match (self.member(), self.last_state) {
            (Some(m), _) => *cc.state(m),
            (None, Some(st)) => st,
            (None, None) => self.initial_state(),
        }
    }

    /// Its member id in the congestion-control host while it has one.
    pub fn member(&self) -> Option<MemberId> {
        (self.member != NOT_A_MEMBER).then_some(self.member)
    }

    /// The member id of a started sender (only called while it is one).
    #[inline]
    fn m(&self) -> MemberId {
        debug_assert!(self.member != NOT_A_MEMBER, "a started sender is a member of the congestion-control host");
        self.member
    }

    /// Send from a host whose interface runs at `rate_bps` bits per second: segments of the
    /// full size leave at most at that rate (a host's NIC, as the MesoNet populations of Mills
    /// et al. (2010) have). Set before [`Sender::start`].
    pub fn set_interface_rate(&mut self, rate_bps: f64) {
        debug_assert!(self.member == NOT_A_MEMBER, "the interface is set before the sender starts");
        self.interface = Some(Pacing::rate(rate_bps, self.cfg.mss + self.cfg.header));
    }

    /// Begin: join the congestion-control host, send a SYN or the first window.
    pub fn start(&mut self, now: Time, cc: &mut CcHost, out: &mut Vec<Packet>) {
        let (group, solo) = match self.controller.take().expect("a sender starts once") {
            Controller::Solo(ctl) => (None, Some(ctl)),
            Controller::Group(g) => (Some(g), None),
        };
        let m = cc.join(self.initial_state(), group, solo, now);
        self.member = m;
        let st = cc.state(m);
        self.stats.initial_cwnd = st.cwnd;
        self.stats.initial_ssthresh = st.ssthresh;
        self.stats.initial_rtt = (st.rtt.samples > 0).then_some((st.rtt.srtt, st.rtt.rttvar));
        self.caps = cc.caps(m);
        self.caps.pacing |= self.interface.is_some();
        if self.caps.rate {
            self.rate = Some(Box::default());
        }
        self.stats.started_at = Some(now);
        self.last_cwnd_t = now;
        self.stats.cwnd_max = cc.state(m).cwnd;
        if self.http.is_some() {
            self.state = State::Listen; // the client opens the connection
        } else if self.cfg.handshake {
            self.state = State::SynSent;
            out.push(Packet::new(self.conn, Kind::Syn, 0, self.cfg.ack_size, now));
            self.stats.packets_sent += 1;
            self.arm_timer(now, cc);
        } else {
            self.state = State::Open;
            self.send_available(now, cc, out);
        }
    }

    /// The congestion-control host asked this sender to send what its window allows (an
    /// ACK on another member of its group).
    pub fn clock(&mut self, now: Time, cc: &mut CcHost, out: &mut Vec<Packet>) {
        if self.member != NOT_A_MEMBER {
            self.send_available(now, cc, out);
        }
    }

    /// When the sender next needs to run: its retransmission timer or its pacing timer.
    #[inline]
    pub fn next_wake(&self) -> Option<Time> {
        match self.pace_wake {
            None => self.rto_deadline,
            Some(p) => Some(self.rto_deadline.map_or(p, |r| r.min(p))),
        }
    }

    /// Stop offering new data (retransmissions of data already sent continue).
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// The retransmission timer's backoff multiplier now (1 until a timeout; reset by a valid
    /// RTT sample).
    pub fn backoff(&self) -> u32 {
        self.backoff
    }

    /// Segments sent and not yet acknowledged.
    pub fn in_flight(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// FlightSize for a window decrease, at most the [`window_in_force`]. In fast recovery that
    /// window is ssthresh: the inflation only stands for segments that have left the network,
    /// and with snd_una pinned by a hole FlightSize grows with every duplicate ACK. Otherwise it
    /// is cwnd: snd_max − snd_una can exceed cwnd just after a SACK recovery (data sent while
    /// holes and SACKed segments stayed below snd_max) or after a timeout (go-back-N), and a
    /// decrease taken from that would raise the window, which a factor above 1/2 (Scalable's
    /// 7/8) turns into a ratchet. ns-2 and Linux decrease from the window, not from snd_max.
    fn flight_for_decrease(&self, st: &CcState) -> u64 {
        let window = window_in_force(st);
        match self.cfg.decrease {
            Decrease::Flight => self.in_flight().saturating_sub(self.limited_sent).min(window.ceil() as u64),
            Decrease::Window => (window as u64).min(self.cfg.rwnd),
        }
    }

    /// Ask the controller for the ssthresh after a congestion signal of `kind`, taken from
    /// [`Sender::flight_for_decrease`] (whole segments with [`Decrease::Window`]), and note in
    /// `cut_cwnd` the window the cut leaves. That is the ssthresh, except with
    /// [`Decrease::Window`]: ns-2's `slowdown` halves the window as a real number, so ssthresh
    /// is the integer part and cwnd keeps the fraction (`cwnd_ = halfwin`), with the
    /// controller's factor while its floor of 2 segments is not what decided.
    fn ssthresh_after(&mut self, kind: LossKind, now: Time, flight: u64, cc: &mut CcHost) -> f64 {
        let ss = cc.on_loss(self.m(), &LossSignal { kind, now, flight_size: flight });
        match self.cfg.decrease {
            Decrease::Flight => {
                self.cut_cwnd = ss;
                ss
            }
            Decrease::Window => {
                let st = cc.state(self.m());
                let window = window_in_force(st).min(self.cfg.rwnd as f64);
                let factor = if ss > 2.0 && flight > 0 { ss / flight as f64 } else { 0.5 };
                self.cut_cwnd = (factor * window).max(1.0);
                ss.floor().max(2.0)
            }
        }
    }

    fn payload(&self, seq: u64) -> u32 {
        if let Some(h) = &self.http {
            return h.docs.payload(seq);
        }
        match self.total_segs {
            _ if seq == 0 && self.cfg.syn_segment => 0,
            Some(t) if seq + 1 == t => self.last_payload,
            _ => self.cfg.mss,
        }
    }

    /// Payload bytes of the segments below `seq`: every one full but a finite transfer's last
    /// (and the SYN stand-in, which carries none).
    fn payload_below(&self, seq: u64) -> u64 {
        if let Some(h) = &self.http {
            return h.docs.payload_below(seq);
        }
        let syn = u64::from(self.cfg.syn_segment);
        let data = seq.saturating_sub(syn);
        let full = u64::from(self.cfg.mss);
        match self.total_segs {
            Some(t) if seq == t && data > 0 => (data - 1) * full + u64::from(self.last_payload),
            _ => data * full,
        }
    }

    /// Distinct payload bytes sent so far (the highest byte first sent; retransmissions do not
    /// count).
    pub fn sent_bytes(&self) -> u64 {
        self.payload_below(self.snd_max)
    }

    /// Payload bytes cumulatively acknowledged.
    pub fn acked_bytes(&self) -> u64 {
        self.payload_below(self.snd_una)
    }

    fn has_data(&self, seq: u64) -> bool {
        seq < self.snd_max
            || (!self.stopped
                && self.total_segs.is_none_or(|t| seq < t)
                && self.http.as_ref().is_none_or(|h| seq < h.limit()))
    }

    /// Segment `seq` left at `now`, with ns-2's Vegas, `rtt_timing = "ns2"` or `rto_restart =
    /// "oldest_sent"` (out of the common path, which tests one flag). Called before `snd_max`
    /// moves.
    #[inline(never)]
    fn on_send_hooks(&mut self, now: Time, seq: u64, cc: &CcHost) {
        if self.cfg.rto_restart == RtoRestart::OldestSent {
            if seq >= self.snd_max {
                debug_assert_eq!(seq, self.snd_una + self.sent_times.len() as u64, "send times out of step");
                self.sent_times.push_back(now);
            } else {
                self.sent_times[(seq - self.snd_una) as usize] = now;
                if seq == self.snd_una && self.rto_deadline.is_some() {
                    // A timer per packet: resending the oldest segment restarts its timer.
                    self.arm_timer(now, cc);
                }
            }
        }
        if let Some(v) = self.vegas.as_deref_mut() {
            v.on_send(now, seq);
        }
        // ns-2's `output`: a new segment while nothing is timed starts timing; one at or below
        // the last segment timed restarts timing without a new send time.
        if self.ns2_timing && seq >= self.snd_max && !self.timing {
            self.timing = true;
            if self.timed.is_none_or(|(timed, _)| seq > timed) {
                self.timed = Some((seq, now));
            }
        }
    }

    /// A timeout or retransmission abandons the RTT measurement (ns-2's `reset_rtx_timer`),
    /// and the backed-off timer may fold SRTT into RTTVAR.
    fn abandon_timing(&mut self, cc: &mut CcHost) {
        if self.ns2_timing {
            self.timing = false;
            let backoff = self.backoff;
            cc.state_mut(self.m()).rtt.backed_off(backoff);
        }
    }

    /// `rtt_timing = "ns2"`: the phase of this connection's clock ticks (ns-2's `boot_time_`,
    /// uniform over one tick), drawn by the simulation from its seed.
    pub fn set_clock_phase(&mut self, phase: Time) {
        self.clock_phase = phase;
    }

    fn is_sacked(&self, seq: u64) -> bool {
        seq >= self.snd_una && self.sacked.get((seq - self.snd_una) as usize) == Some(&true)
    }

    /// Send segment `seq`; a new one under loop `tag` (with tags).
    fn emit(&mut self, now: Time, seq: u64, tag: Tag, cc: &mut CcHost, out: &mut Vec<Packet>) {
        let retx = seq < self.snd_max;
        let payload = self.payload(seq);
        let mut p = Packet::new(self.conn, Kind::Data, seq, payload + self.cfg.header, now);
        p.set_retx(retx);
        if self.caps.tags {
            p.tag = self.note_sent(now, seq, tag, cc);
        }
        // Retransmissions are not ECN-capable (RFC 3168 §6.1.5); CWR rides on new data.
        if self.cfg.ecn && !retx {
            p.ecn = ecn::ECT;
            if self.cwr_pending {
                p.ecn |= ecn::CWR;
                self.cwr_pending = false;
            }
        }
        out.push(p);
        if self.send_hooks {
            self.on_send_hooks(now, seq, cc);
        }
        if let Some(r) = self.rate.as_deref_mut() {
            Self::rate_sent(r, now, seq, self.snd_una, self.snd_max);
        }
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
                    self.arm_timer(now, cc);
                }
            }
        }
        if self.rto_deadline.is_none() {
            self.arm_timer(now, cc);
        }
    }

    /// With rate estimation: segment `seq` leaves at `now` (`tcp_rate_skb_sent`).
    #[cold]
    fn rate_sent(r: &mut RateState, now: Time, seq: u64, snd_una: u64, snd_max: u64) {
        if snd_max == snd_una {
            // Nothing in flight: the first segment of a flight starts the send and ACK clocks.
            r.first_tx_time = now;
            r.delivered_time = now;
        }
        let rec = SendRec {
            delivered: r.delivered,
            delivered_time: r.delivered_time,
            first_tx_time: r.first_tx_time,
            app_limited: r.app_limited != 0,
            sent: now,
        };
        let k = (seq - snd_una) as usize;
        if k < r.recs.len() {
            r.recs[k] = rec;
        } else {
            debug_assert_eq!(k, r.recs.len(), "rate records out of step");
            r.recs.push_back(rec);
        }
    }

    /// With rate estimation: the sample of the ACK being processed, from the segments it
    /// delivered.
    #[cold]
    fn rate_sample(&mut self, now: Time, prior_in_flight: u64, cc: &CcHost) -> Option<RateSample> {
        let in_flight = self.snd_max - self.snd_una - self.sacked_count;
        let min_rtt = cc.state(self.m()).min_rtt;
        self.rate.as_deref_mut().map(|r| r.sample(now, min_rtt, prior_in_flight, in_flight))
    }

    /// With rate estimation: when the window has room but there is nothing to send, the
    /// connection is application-limited until what is in flight now is delivered
    /// (`tcp_rate_check_app_limited`).
    #[cold]
    fn rate_check_app_limited(&mut self, cwnd: f64) {
        let in_flight = self.in_flight();
        let idle = !self.has_data(self.snd_nxt.max(self.snd_max)) && (in_flight as f64) < cwnd;
        if let Some(r) = self.rate.as_deref_mut() {
            if idle {
                r.app_limited = (r.delivered + in_flight).max(1);
            }
        }
    }

    /// With tags: record segment `seq` as sent at `now` and return its tag (`tag` for a new
    /// segment, the original one for a retransmission, which is reported as a lost segment).
    #[cold]
    fn note_sent(&mut self, now: Time, seq: u64, tag: Tag, cc: &mut CcHost) -> Tag {
        if seq >= self.snd_max {
            debug_assert_eq!(seq, self.snd_una + self.record.len() as u64, "send record out of step");
            self.record.push_back((tag, now));
            return tag;
        }
        let entry = &mut self.record[(seq - self.snd_una) as usize];
        let (tag, sent_at) = *entry;
        entry.1 = now;
        let lost = LostSegment { now, seq, tag, sent_at, kind: self.loss_kind };
        cc.on_lost_segment(self.m(), &lost);
        tag
    }

    /// With pacing: whether a segment may leave now. If not, the pacing timer is set for the
    /// start of the next burst.
    #[inline(always)]
    fn pace_ready(&mut self, now: Time, cc: &mut CcHost) -> bool {
        !self.caps.pacing || self.paced_ready(now, cc)
    }

    #[inline(never)]
    fn paced_ready(&mut self, now: Time, cc: &mut CcHost) -> bool {
        if self.pace_left > 0 || now >= self.pace_next || self.pacing(cc).is_none() {
            return true;
        }
        self.pace_wake = Some(self.pace_next);
        false
    }

    /// The pacing in force: the controller's or the interface's, whichever spaces segments
    /// further apart.
    fn pacing(&self, cc: &mut CcHost) -> Option<Pacing> {
        match (cc.pacing(self.m()), self.interface) {
            (Some(p), Some(i)) => Some(if i.gap * u64::from(p.burst) > p.gap { i } else { p }),
            (p, i) => p.or(i),
        }
    }

    /// With pacing: a segment left at `now`; a new burst starts if the last one is used up.
    #[inline(always)]
    fn pace_sent(&mut self, now: Time, cc: &mut CcHost) {
        if self.caps.pacing {
            self.paced_sent(now, cc);
        }
    }

    #[inline(never)]
    fn paced_sent(&mut self, now: Time, cc: &mut CcHost) {
        if let Some(p) = self.pacing(cc) {
            if self.pace_left == 0 {
                self.pace_left = p.burst.max(1);
                self.pace_next = now + p.gap;
            }
            self.pace_left -= 1;
        }
    }

    /// Send what the window allows.
    fn send_available(&mut self, now: Time, cc: &mut CcHost, out: &mut Vec<Packet>) {
        let m = self.m();
        let st = cc.state(m);
        let cwnd = st.cwnd;
        self.send_with(now, m, st.phase, cwnd, cc, out);
        if self.rate.is_some() {
            self.rate_check_app_limited(cwnd);
        }
        let in_flight = self.in_flight();
        cc.state_mut(m).in_flight = in_flight;
    }

    /// [`Sender::send_available`] with member `m`'s phase and window at hand; the caller
    /// updates the member's in-flight count.
    fn send_with(&mut self, now: Time, m: MemberId, phase: Phase, cwnd: f64, cc: &mut CcHost, out: &mut Vec<Packet>) {
        if self.state != State::Open {
            return;
        }
        if self.cfg.recovery == Recovery::Sack && phase == Phase::Recovery {
            self.send_sack_recovery(now, cc, out);
        } else if phase == Phase::Loss && self.linux_pipe() {
            // Linux after a timeout: the segments held lost first, then new data, while the
            // pipe is below cwnd (`tcp_xmit_retransmit_queue`; ns-2's `send_much`).
            self.send_linux_recovery(now, cc, out);
        } else {
            // cwnd ≥ 1, so truncation is floor (and avoids a libm call on the per-ACK path).
            let win = (cwnd as u64).max(1).min(self.cfg.rwnd);
            // ns-2's NewReno sends at most `dupack_burst` segments per duplicate ACK from the
            // third on (its `send_much(0, 0, 2)` while counting them).
            let dup_burst = self.cfg.dupack_burst > 0 && phase == Phase::Recovery && self.dupacks >= DUP_THRESH;
            let max_burst = if dup_burst { self.capped_burst() } else { self.cfg.max_burst };
            let (tags, pacing) = (self.caps.tags, self.caps.pacing);
            // Linux accounting: the window limits the pipe (SACKed segments have left it), not
            // the data outstanding.
            let linux = self.linux_pipe();
            let mut pipe = if linux { self.linux_open_pipe() } else { 0 };
            let mut burst = 0;
            loop {
                while self.snd_nxt < self.snd_max && self.is_sacked(self.snd_nxt) {
                    self.snd_nxt += 1;
                }
                let seq = self.snd_nxt;
                // With tags the controller admits new segments; the receiver window holds.
                let new_tagged = tags && seq >= self.snd_max;
                let used = if linux { pipe } else { seq - self.snd_una };
                if (!new_tagged && used >= win) || seq - self.snd_una >= self.cfg.rwnd || !self.has_data(seq) {
                    break;
                }
                if max_burst > 0 && burst >= max_burst {
                    break;
                }
                if pacing && !self.paced_ready(now, cc) {
                    break;
                }
                let tag = if new_tagged {
                    match cc.admit(m, now) {
                        Some(tag) => tag,
                        None => break,
                    }
                } else {
                    0
                };
                self.emit(now, seq, tag, cc, out);
                if pacing {
                    self.paced_sent(now, cc);
                }
                self.snd_nxt = seq + 1;
                burst += 1;
                pipe += 1;
            }
        }
    }

    /// The burst limit with `dupack_burst` in force.
    #[cold]
    fn capped_burst(&self) -> u32 {
        match self.cfg.max_burst {
            0 => self.cfg.dupack_burst,
            a => a.min(self.cfg.dupack_burst),
        }
    }

    /// Linux's accounting of what is in flight (`sack_recovery` `rate_halving` or `prr`).
    #[inline]
    fn linux_pipe(&self) -> bool {
        self.linux
    }

    /// In the Open state, segments in flight by Linux's accounting: those outstanding and not
    /// SACKed. (Linux never goes back N: its retransmissions come from the scoreboard, so
    /// `snd_nxt` stays at `snd_max`.)
    fn linux_open_pipe(&self) -> u64 {
        debug_assert_eq!(self.snd_nxt, self.snd_max, "Linux accounting does not go back N");
        self.snd_max - self.snd_una - self.sacked_count
    }

    /// With Linux accounting: the highest segment the loss marking holds lost, if any. For
    /// `rate_halving`, ns-2's ScoreBoard1: a segment is lost once a segment four or more above
    /// it is SACKed (FACK with a reordering threshold of 3, plus one). For `prr`, RFC 6675's
    /// IsLost: three SACKed segments above it.
    fn lost_bound(&self) -> Option<u64> {
        match self.cfg.sack_recovery {
            SackRecovery::RateHalving => {
                self.high_sacked.checked_sub(u64::from(DUP_THRESH) + 2).filter(|&b| b >= self.snd_una)
            }
            _ => self.below_third_sacked(),
        }
    }

    /// With Linux accounting, whether this ACK showed a segment lost that was not held lost
    /// before: a retransmission lost again, or one never retransmitted that the loss bound
    /// has passed. In the Loss state after a timeout this starts a recovery (Linux's and ns-2's
    /// `FLAG_DATA_LOST`); without it a lost retransmission would wait for the next timeout,
    /// which duplicate ACKs keep postponing when every ACK restarts the timer.
    fn new_loss_marked(&mut self) -> bool {
        let bound = self.lost_bound();
        self.lost.refresh(bound, self.high_sacked, &self.sacked) > 0
    }

    /// Whether an ACK with Linux accounting starts a recovery: in the Open state, a segment
    /// below the loss bound; in the Loss state, a newly marked loss.
    fn linux_loss_seen(&mut self, phase: Phase) -> bool {
        match phase {
            Phase::Open => self.lost_bound().is_some(),
            Phase::Loss => self.new_loss_marked(),
            _ => false,
        }
    }

    /// The DupThresh-th highest SACKed segment, if that many are SACKed: RFC 6675 IsLost holds
    /// for every segment below it that is not SACKed and for none above it. SACKed segments
    /// cluster at the top, so the walk down is short.
    fn third_sacked(&self) -> Option<u64> {
        if self.sacked_count < u64::from(DUP_THRESH) {
            return None;
        }
        let mut found = 0;
        let mut seq = self.high_sacked;
        while found < DUP_THRESH && seq > self.snd_una {
            seq -= 1;
            found += u32::from(self.is_sacked(seq));
        }
        (found == DUP_THRESH).then_some(seq)
    }

    /// Segments below the DupThresh-th highest SACKed one that are not SACKed: those IsLost
    /// holds for.
    fn lost_below(&self, third: u64) -> u64 {
        (third - self.snd_una) - (self.sacked_count - u64::from(DUP_THRESH))
    }

    /// RFC 6675 IsLost without a scan of the window: one below the DupThresh-th highest SACKed
    /// segment, if a segment there is not SACKed.
    fn below_third_sacked(&self) -> Option<u64> {
        let third = self.third_sacked()?;
        (self.lost_below(third) > 0).then(|| third - 1)
    }

    /// Move HighRxt + 1 to `to`, keeping the count of SACKed segments below it.
    fn set_high_rxt(&mut self, to: u64) {
        let (old, new) = (self.high_rxt.max(self.snd_una), to.max(self.snd_una));
        if new == self.snd_una {
            self.rxt_sacked = 0;
        } else if new > old {
            self.rxt_sacked += (old..new).filter(|&s| self.is_sacked(s)).count() as u64;
        } else {
            self.rxt_sacked -= (new..old).filter(|&s| self.is_sacked(s)).count() as u64;
        }
        self.high_rxt = to;
    }

    /// With Linux accounting: (pipe, first segment to retransmit). The pipe holds every
    /// segment not SACKed and not lost: a retransmission replaces its lost original.
    fn linux_scan(&mut self, bound: Option<u64>) -> (u64, Option<u64>) {
        self.lost.refresh(bound, self.high_sacked, &self.sacked);
        #[cfg(debug_assertions)]
        self.lost.check(bound, self.high_sacked, &self.sacked, self.snd_max);
        let pipe = self.snd_max - self.snd_una - self.sacked_count - self.lost.count();
        (pipe, self.lost.next_lost(self.snd_una, self.snd_max))
    }

    /// Recovery with Linux accounting: lost segments first, then new data, while the pipe is
    /// below the window (rate halving: below the falling target, while it exceeds cwnd).
    fn send_linux_recovery(&mut self, now: Time, cc: &mut CcHost, out: &mut Vec<Packet>) {
        let bound = self.lost_bound();
        let (mut pipe, first) = self.linux_scan(bound);
        let cwnd = (cc.state(self.m()).cwnd as u64).max(1);
        let halving = self.cfg.sack_recovery == SackRecovery::RateHalving;
        if halving {
            self.rh_next = self.rh_next.min(pipe + 1);
        }
        let mut cursor = first.unwrap_or(self.snd_max);
        let mut burst = 0;
        loop {
            let limit = if halving { cwnd.max(self.rh_next) } else { cwnd };
            if pipe >= limit || (self.cfg.max_burst > 0 && burst >= self.cfg.max_burst) || !self.pace_ready(now, cc) {
                break;
            }
            cursor = self.lost.next_lost(cursor, self.snd_max).unwrap_or(self.snd_max);
            if cursor < self.snd_max {
                let s = cursor;
                self.emit(now, s, 0, cc, out);
                self.lost.retransmitted(s, self.snd_max);
                self.set_high_rxt(self.high_rxt.max(s + 1));
            } else if self.has_data(self.snd_max) && self.snd_max - self.snd_una < self.cfg.rwnd {
                let tag = if self.caps.tags {
                    match cc.admit(self.m(), now) {
                        Some(tag) => tag,
                        None => break,
                    }
                } else {
                    0
                };
                let seq = self.snd_max;
                self.emit(now, seq, tag, cc, out);
                self.snd_nxt = self.snd_max;
                cursor = self.snd_max;
            } else {
                break;
            }
            self.pace_sent(now, cc);
            pipe += 1;
            burst += 1;
            self.prr.1 += 1;
            if halving {
                self.rh_next = self.rh_next.min(pipe.saturating_sub(1).max(1));
            }
        }
    }

    /// PRR (RFC 6937 §3, with the slow-start reduction bound): this ACK's share of the
    /// reduction sets cwnd = pipe + sndcnt.
    fn prr_update(&mut self, cc: &mut CcHost) {
        let bound = self.lost_bound();
        let (pipe, _) = self.linux_scan(bound);
        let (delivered, prr_out, recover_fs) = &mut self.prr;
        *delivered += self.delivered_now;
        let st = cc.state_mut(self.member);
        let ssthresh = st.ssthresh.max(1.0);
        let sndcnt = if pipe as f64 > ssthresh {
            ((*delivered as f64 * ssthresh / (*recover_fs).max(1) as f64).ceil() - *prr_out as f64).max(0.0)
        } else {
            let limit = (*delivered as f64 - *prr_out as f64).max(self.delivered_now as f64) + 1.0;
            (ssthresh - pipe as f64).min(limit).max(0.0)
        };
        // The fast retransmit always goes (Linux: at least one segment while prr_out is 0).
        let sndcnt = if *prr_out == 0 { sndcnt.max(1.0) } else { sndcnt };
        st.cwnd = (pipe as f64 + sndcnt).max(1.0);
    }

    /// RFC 6675 §5: while cwnd − pipe ≥ 1, send NextSeg().
    fn send_sack_recovery(&mut self, now: Time, cc: &mut CcHost, out: &mut Vec<Packet>) {
        if self.cfg.sack_recovery.linux_pipe() {
            return self.send_linux_recovery(now, cc, out);
        }
        let (mut pipe, third) = self.set_pipe();
        let cwnd = (cc.state(self.m()).cwnd as u64).max(1);
        let mut burst = 0;
        // The first un-SACKed segment not yet retransmitted in this recovery, for HighRxt.
        let mut next_hole: Option<(u64, u64)> = None;
        while pipe < cwnd {
            if self.cfg.max_burst > 0 && burst >= self.cfg.max_burst {
                break;
            }
            if !self.pace_ready(now, cc) {
                break;
            }
            let from = self.high_rxt.max(self.snd_una);
            let s = match next_hole {
                Some((f, s)) if f == from => s,
                _ => {
                    let mut s = from;
                    while s < self.high_sacked && self.is_sacked(s) {
                        s += 1;
                    }
                    next_hole = Some((from, s));
                    s
                }
            };
            let hole = s < self.high_sacked;
            // Rule 2 sends new data; with tags only when the controller admits it.
            let new_data = self.has_data(self.snd_max) && self.snd_max - self.snd_una < self.cfg.rwnd;
            let admitted = |this: &mut Self, cc: &mut CcHost| {
                if this.caps.tags {
                    cc.admit(this.m(), now)
                } else {
                    Some(0)
                }
            };
            if hole && third.is_some_and(|t| s < t) {
                self.emit(now, s, 0, cc, out); // rule 1: a lost segment
                self.set_high_rxt(s + 1);
            } else if let Some(tag) = if new_data { admitted(self, cc) } else { None } {
                let seq = self.snd_max; // rule 2: new data
                self.emit(now, seq, tag, cc, out);
                self.snd_nxt = self.snd_max;
            } else if hole {
                self.emit(now, s, 0, cc, out); // rule 3: a hole not yet deemed lost
                self.set_high_rxt(s + 1);
            } else {
                break;
            }
            self.pace_sent(now, cc);
            pipe += 1;
            burst += 1;
        }
    }

    /// RFC 6675 SetPipe() and the DupThresh-th highest SACKed segment (below it every segment
    /// not SACKed is lost). The pipe counts each segment not SACKed once unless it is lost, and
    /// once more if it was retransmitted (below HighRxt): from counts, without a scan.
    fn set_pipe(&self) -> (u64, Option<u64>) {
        let third = self.third_sacked();
        let unsacked = self.snd_max - self.snd_una - self.sacked_count;
        let lost = third.map_or(0, |t| self.lost_below(t));
        let retransmitted = self.high_rxt.clamp(self.snd_una, self.snd_max) - self.snd_una - self.rxt_sacked;
        #[cfg(debug_assertions)]
        self.check_pipe(unsacked - lost + retransmitted);
        (unsacked - lost + retransmitted, third)
    }

    /// The pipe by RFC 6675's scan of the window, against the one from counts.
    #[cfg(debug_assertions)]
    fn check_pipe(&self, pipe: u64) {
        let mut scanned = 0;
        let mut sacked_above = 0;
        for seq in (self.snd_una..self.snd_max).rev() {
            if self.is_sacked(seq) {
                sacked_above += 1;
                continue;
            }
            scanned += u64::from(sacked_above < DUP_THRESH) + u64::from(seq < self.high_rxt);
        }
        debug_assert_eq!(pipe, scanned, "SetPipe from counts");
    }

    /// ns-2's TCP-Linux (`rate_halving`) leaving a recovery or the Loss state
    /// (`tcp_fastretrans_alert`): cwnd rises to ssthresh, but to at most three segments beyond
    /// what is outstanding (`tcp_moderate_cwnd`), and the scoreboard is cleared, holes above
    /// or not: what was SACKed is forgotten until ACKs report it again (each carries at most
    /// three blocks), and until then it counts as in flight.
    fn end_linux_episode(&mut self, m: MemberId, cc: &mut CcHost) {
        let outstanding = (self.snd_max - self.snd_una) as f64;
        let st = cc.state_mut(m);
        if st.cwnd < st.ssthresh {
            st.cwnd = st.ssthresh.min(outstanding + 3.0);
        }
        self.rh_next = 0;
        self.sacked.clear();
        self.sacked_count = 0;
        self.sack_marked = [(0, 0); MAX_SACK_BLOCKS];
        self.rxt_sacked = 0;
        self.high_sacked = self.snd_una;
        self.lost.clear();
    }

    fn update_scoreboard(&mut self, ack: &Packet) {
        let una = self.snd_una;
        let len = (self.snd_max - una) as usize;
        let linux = self.linux_pipe();
        if linux {
            self.lost.next_ack();
        }
        self.sacked.resize(len, false);
        let before = self.sack_marked;
        self.sack_marked = [(0, 0); MAX_SACK_BLOCKS];
        for (i, (a, b)) in ack.sack_blocks().enumerate() {
            let (a, b) = (a.max(una), b.min(self.snd_max));
            // What the last ACK's blocks cover is marked already.
            let mut from = a;
            for _ in 0..MAX_SACK_BLOCKS {
                match before.iter().find(|&&(x, y)| x <= from && from < y) {
                    Some(&(_, y)) => from = y,
                    None => break,
                }
            }
            if let Some(slot) = self.sack_marked.get_mut(i) {
                *slot = (a, b.max(a));
            }
            for seq in from..b {
                let k = (seq - una) as usize;
                if !self.sacked[k] {
                    self.sacked_count += 1;
                    self.rxt_sacked += u64::from(seq < self.high_rxt);
                    if linux {
                        self.lost.sacked(seq);
                    }
                    self.delivered_now += 1;
                    if let Some(r) = self.rate.as_deref_mut() {
                        r.delivered(k);
                    }
                    if self.caps.tags {
                        Self::count(&mut self.delivered, self.record[k].0);
                        self.delivered_segs.push((seq, self.record[k].0));
                    }
                }
                self.sacked[k] = true;
            }
            self.high_sacked = self.high_sacked.max(b.min(self.snd_max));
        }
    }

    /// One more segment of loop `tag` left the network.
    #[inline]
    fn count(delivered: &mut Vec<u32>, tag: Tag) {
        let t = usize::from(tag);
        if delivered.len() <= t {
            delivered.resize(t + 1, 0);
        }
        delivered[t] += 1;
    }

    /// With tags: report the segments this ACK (at `now`, leaving `snd_una`) delivered, and
    /// reset the counts.
    #[cold]
    fn report_delivered(&mut self, now: Time, snd_una: u64, cc: &mut CcHost) {
        if !self.delivered_segs.is_empty() {
            let d = Delivered { now, snd_una, by_tag: &self.delivered, segments: &self.delivered_segs };
            cc.on_delivered(self.m(), &d);
            self.delivered.iter_mut().for_each(|n| *n = 0);
            self.delivered_segs.clear();
        }
    }

    fn account_cwnd(&mut self, now: Time, st: &CcState) {
        self.stats.cwnd_integral += self.reported_cwnd(st) * (now - self.last_cwnd_t) as f64;
        self.last_cwnd_t = now;
    }

    /// The window results report (`cwnd_mean`, `cwnd_max`, `cwnd_final`, the `cwnd` series):
    /// the window on the network. In Reno and NewReno fast recovery that is cwnd without its
    /// inflation (RFC 5681 §3.2 steps 4–5: the extra segments stand for segments that have
    /// left the network), at most what the cut left (ssthresh, or ns-2's real half window);
    /// in TCP-Linux rate halving it is the falling pipe target while that is above cwnd. ns-2 samples the same as `cwnd_` (it keeps the
    /// inflation apart in `dupwnd_`, and TCP-Linux's `save_from_linux` reports
    /// `next_pkts_in_flight_`), and Linux shows it as snd_cwnd. ns-2's Vegas inflates `cwnd_`
    /// itself, so its mirror reports cwnd as it is.
    pub fn reported_cwnd(&self, st: &CcState) -> f64 {
        if st.phase != Phase::Recovery {
            return st.cwnd;
        }
        match self.cfg.recovery {
            Recovery::Reno | Recovery::Newreno if self.vegas.is_none() => st.cwnd.min(self.cut_cwnd),
            Recovery::Sack if self.cfg.sack_recovery == SackRecovery::RateHalving => st.cwnd.max(self.rh_next as f64),
            _ => st.cwnd,
        }
    }

    /// (Re)start the retransmission timer: RTO from now, or earlier if a forced timeout is
    /// pending; never when the timer is disabled (unless forced).
    fn arm_timer(&mut self, now: Time, cc: &CcHost) {
        self.arm_timer_from(now, &cc.state(self.m()).rtt);
    }

    /// [`Sender::arm_timer`] with the member's RTT estimator at hand.
    #[inline]
    fn arm_timer_from(&mut self, now: Time, rtt: &RttEstimator) {
        let rto = self.cfg.rto_enabled.then(|| match self.cfg.rto_restart {
            RtoRestart::OldestSent => self.oldest_sent_deadline(now, rtt),
            _ => now + rtt.timeout(self.backoff),
        });
        self.rto_deadline = match (rto, self.forced_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }

    /// `rto_restart = "oldest_sent"`: the RTO from the oldest unacknowledged segment's last
    /// send (from `now` with nothing outstanding), never before `now`.
    #[cold]
    fn oldest_sent_deadline(&self, now: Time, rtt: &RttEstimator) -> Time {
        let from = self.sent_times.front().copied().unwrap_or(now);
        (from + rtt.timeout(self.backoff)).max(now)
    }

    /// A packet arrived from the receiver (an ACK or a SYN-ACK; an HTTP client's SYN or
    /// request).
    #[inline]
    pub fn on_packet(&mut self, now: Time, p: &Packet, cc: &mut CcHost, out: &mut Vec<Packet>) {
        match p.kind {
            Kind::Ack => self.on_ack(now, p, cc, out),
            Kind::SynAck => self.on_synack(now, p, cc, out),
            Kind::Syn => self.on_client_syn(now, p, out),
            _ => {
                debug_assert_eq!(p.kind, Kind::Data, "a TCP sender receives ACKs and HTTP requests");
                self.on_request(now, p, cc, out);
            }
        }
    }

    /// An HTTP client's SYN arrived: answer with a SYN-ACK (again for a retransmitted SYN,
    /// whose SYN-ACK may have been lost).
    #[cold]
    fn on_client_syn(&mut self, now: Time, p: &Packet, out: &mut Vec<Packet>) {
        let Some(h) = self.http.as_deref_mut() else { return };
        if self.state != State::Listen {
            return;
        }
        h.synack(self.conn, self.cfg.ack_size, now, p, out);
        self.stats.packets_sent += 1;
    }

    /// An HTTP client's request for document `p.seq` arrived. The first completes the
    /// handshake (its round trip from the SYN-ACK is the first RTT sample, unless a SYN-ACK
    /// was sent twice); each releases its document. A later request acknowledges everything
    /// before its document: it stands for the ACK of the previous document's last segment.
    #[cold]
    fn on_request(&mut self, now: Time, p: &Packet, cc: &mut CcHost, out: &mut Vec<Packet>) {
        let Some(h) = self.http.as_deref() else { return };
        let doc = p.seq as usize;
        if self.state == State::Listen {
            let Some((sent, again)) = h.synack else { return }; // no SYN seen yet
            if !again && !p.retx() {
                cc.state_mut(self.m()).rtt.sample(now - sent);
            }
            self.state = State::Open;
            self.stats.established_at = Some(now);
        }
        if self.state != State::Open || doc != h.requested || doc >= h.docs.len() {
            return; // a request repeated, or after the end
        }
        if doc > 0 {
            let before = h.docs.end(doc - 1);
            if self.snd_una < before {
                // The request echoes the timestamp of the segment it acknowledges.
                let mut ack = Packet::new(self.conn, Kind::Ack, before, self.cfg.ack_size, p.ts);
                ack.set_retx(p.retx());
                self.on_ack(now, &ack, cc, out);
            }
        }
        let h = self.http.as_deref_mut().expect("serving HTTP");
        h.requested = doc + 1;
        if doc > 0 && h.restart {
            let init = self.initial_state();
            let st = cc.state_mut(self.m());
            st.cwnd = init.cwnd;
            st.ssthresh = init.ssthresh;
        }
        self.send_available(now, cc, out);
    }

    /// The handshake's SYN-ACK arrived.
    pub fn on_synack(&mut self, now: Time, p: &Packet, cc: &mut CcHost, out: &mut Vec<Packet>) {
        if self.state != State::SynSent {
            return;
        }
        if !p.retx() {
            cc.state_mut(self.m()).rtt.sample(now - p.ts);
        }
        self.backoff = 1;
        self.state = State::Open;
        self.stats.established_at = Some(now);
        self.rto_deadline = None;
        self.send_available(now, cc, out);
    }

    /// An ACK arrived.
    pub fn on_ack(&mut self, now: Time, p: &Packet, cc: &mut CcHost, out: &mut Vec<Packet>) {
        if self.state != State::Open {
            return;
        }
        let m = self.m();
        let ack = p.seq;
        self.delivered_now = 0;
        if self.cfg.recovery == Recovery::Sack {
            self.update_scoreboard(p);
        }
        if ack > self.snd_una && ack <= self.snd_max {
            self.on_new_ack(now, p, cc, out);
        } else {
            self.account_cwnd(now, cc.state(m));
            if self.caps.tags {
                let una = self.snd_una;
                self.report_delivered(now, una, cc);
            }
            if ack == self.snd_una && self.snd_una < self.snd_max {
                if self.cfg.rto_restart == RtoRestart::EveryAck && self.member != NOT_A_MEMBER {
                    self.arm_timer(now, cc);
                }
                if self.rate.is_some() && self.delivered_now > 0 {
                    self.rate_dup_ack(now, p, cc);
                }
                self.on_dup_ack(now, cc, out);
            }
        }
        if self.member == NOT_A_MEMBER {
            return; // the transfer completed and left the host
        }
        let in_flight = self.in_flight();
        let st = cc.state_mut(m);
        st.in_flight = in_flight;
        let w = self.reported_cwnd(st);
        self.stats.cwnd_max = self.stats.cwnd_max.max(w);
    }

    fn on_new_ack(&mut self, now: Time, p: &Packet, cc: &mut CcHost, out: &mut Vec<Packet>) {
        let m = self.m();
        let st = cc.state_mut(m);
        self.account_cwnd(now, st);
        let mut vegas_last = None;
        let st = if self.vegas.is_some() {
            vegas_last = Some(self.vegas_before_new_ack(now, p.seq, cc));
            cc.state_mut(m)
        } else {
            st
        };
        // Only the sender changes the phase, so it holds through the hooks below.
        let phase = st.phase;
        let ack = p.seq;
        let newly = ack - self.snd_una;
        let in_flight_before = self.in_flight();
        // Karn's rule: no sample from an ACK echoing a retransmitted segment.
        let rtt = (!p.retx()).then(|| now - p.ts);
        let ns2_timing = self.ns2_timing;
        if ns2_timing {
            // ns-2's newack: the timed segment's ACK gives the timer its sample.
            if let Some((_, sent)) = self.timed.filter(|&(seq, _)| self.timing && ack > seq) {
                self.timing = false;
                self.backoff = 1;
                st.rtt.sample_ns2(now - sent, sent, self.clock_phase);
            }
        }
        if let Some(r) = rtt {
            if !ns2_timing {
                st.rtt.sample(r);
                self.backoff = 1;
            }
            st.min_rtt = st.min_rtt.min(r);
            self.last_rtt = Some(r);
            let s = &mut self.stats;
            s.rtt_n += 1;
            s.rtt_sum += r as f64;
            s.rtt_min = s.rtt_min.min(r);
            s.rtt_max = s.rtt_max.max(r);
        }
        if self.caps.tags {
            for k in 0..newly as usize {
                if !self.sacked.get(k).copied().unwrap_or(false) {
                    Self::count(&mut self.delivered, self.record[k].0);
                    self.delivered_segs.push((self.snd_una + k as u64, self.record[k].0));
                }
            }
            self.record.drain(..newly as usize);
            // Before anything is sent: the loops' windows have room again.
            self.report_delivered(now, ack, cc);
        }
        if !self.sent_times.is_empty() {
            self.sent_times.drain(..newly as usize);
        }
        self.snd_una = ack;
        self.limited_sent = 0;
        if self.forced_deadline.is_some() && self.cfg.force_timeout.is_some_and(|(seg, _)| ack > seg) {
            self.forced_deadline = None;
        }
        // Hasegawa Eq 3.16: the first ACK after a timeout, back sooner than k·RTT, acknowledges
        // the original transmission: undo the controller's reduction, restore ssthresh to the
        // window before the timeout and cancel the go-back-N by restoring snd_nxt.
        let mut spurious_snd_nxt = None;
        if let (Some(rec), Some(cfg)) = (self.misrx_check.take(), self.cfg.misrx) {
            if ((now - rec.at) as f64) < cfg.k * rec.rtt {
                cc.undo(m);
                cc.state_mut(m).ssthresh = rec.cwnd;
                spurious_snd_nxt = Some(rec.snd_nxt);
                self.stats.misrx_detected += 1;
            }
        }
        if let Some(r) = self.rate.as_deref_mut() {
            for k in 0..newly as usize {
                if !self.sacked.get(k).copied().unwrap_or(false) {
                    r.delivered(k);
                }
            }
        }
        let mut sacked_acked = 0;
        let old_una = self.snd_una - newly;
        for k in 0..newly.min(self.sacked.len() as u64) {
            let sacked = self.sacked.pop_front() == Some(true);
            sacked_acked += u64::from(sacked);
            self.rxt_sacked -= u64::from(sacked && old_una + k < self.high_rxt);
        }
        self.sacked_count -= sacked_acked;
        self.delivered_now += newly - sacked_acked;
        if self.rate.is_some() {
            self.rate_now = self.rate_sample(now, in_flight_before, cc);
            if let Some(r) = self.rate.as_deref_mut() {
                r.recs.drain(..newly as usize);
            }
        }
        if self.linux_pipe() {
            self.lost.acked(ack);
        }
        if self.snd_nxt < self.snd_una {
            self.snd_nxt = self.snd_una;
        }
        if let Some(nxt) = spurious_snd_nxt {
            self.snd_nxt = self.snd_nxt.max(nxt);
        }
        if self.high_rxt < self.snd_una {
            self.set_high_rxt(self.snd_una);
        }
        let round_start = ack >= self.round_end;
        if round_start {
            self.round_end = self.snd_max;
        }
        self.dupacks = 0;
        let full = self.recover.is_none_or(|r| ack >= r);
        let mut restart_timer = true;
        let st = cc.state_mut(m);
        (st.snd_una, st.snd_nxt) = (self.snd_una, self.snd_nxt);
        let echo = p.ecn & ecn::ECE != 0;
        let rate = self.rate_now.take();
        let sample = |in_recovery| AckSample {
            now,
            newly_acked: newly,
            rtt,
            round_start,
            in_flight_before,
            in_recovery,
            ece: echo,
            rate,
        };
        if self.caps.ack_events {
            cc.on_ack_event(m, &sample(false));
        }
        match phase {
            Phase::Recovery => {
                match self.cfg.recovery {
                    Recovery::Newreno if !full => {
                        // RFC 6582 §3.2 step 5, partial ACK: retransmit the next hole, deflate
                        // by the amount acknowledged, add back one segment; reset the timer on
                        // the first partial ACK only (the "impatient" variant).
                        self.emit(now, self.snd_una, 0, cc, out);
                        let st = cc.state_mut(m);
                        st.cwnd = (st.cwnd - newly as f64 + 1.0).max(1.0);
                        restart_timer = self.first_partial;
                        self.first_partial = false;
                    }
                    Recovery::Sack if !full => {
                        if self.cfg.sack_recovery == SackRecovery::Prr {
                            self.prr_update(cc);
                        }
                    }
                    Recovery::Sack if self.cfg.sack_recovery == SackRecovery::RateHalving => {
                        self.end_linux_episode(m, cc);
                        cc.set_phase(m, Phase::Open);
                    }
                    _ => {
                        // Full ACK (or Reno's first new ACK): deflate to what the cut left
                        // (ssthresh), leave recovery.
                        let cut = self.cut_cwnd;
                        let st = cc.state_mut(m);
                        st.cwnd = cut;
                        cc.set_phase(m, Phase::Open);
                        if full && self.cfg.recover == RecoverRule::AfterTimeout {
                            self.recover = None;
                        }
                    }
                }
                cc.on_ack(m, &sample(true));
            }
            Phase::Loss | Phase::Open => {
                if phase == Phase::Loss && full {
                    cc.set_phase(m, Phase::Open);
                }
                let st = cc.state_mut(m);
                st.in_flight = self.in_flight();
                if echo && st.phase == Phase::Open && self.ecn_may_reduce(ack) {
                    self.reduce_for_ecn(now, cc);
                    cc.on_ack(m, &sample(true));
                } else if self.cfg.dctcp {
                    // DCTCP (Linux's CWR state): no growth for the window after a reduction;
                    // outside it, ACKs grow the window whether or not they echo a mark.
                    let cwr = self.ecn_recover.is_some_and(|r| ack <= r);
                    cc.on_ack(m, &sample(cwr));
                } else if self.cfg.byte_counting && newly > 1 && !echo && !self.caps.rate {
                    self.credit_each_segment(m, &sample(false), cc);
                } else {
                    // An ACK that still echoes congestion does not grow the window (ns-2 with
                    // `old_ecn_` 0; Linux in congestion avoidance).
                    cc.on_ack(m, &sample(echo));
                }
                if phase == Phase::Loss && full && self.cfg.sack_recovery == SackRecovery::RateHalving {
                    self.end_linux_episode(m, cc);
                }
            }
        }
        if let Some(last) = vegas_last {
            self.vegas_after_new_ack(now, ack, last, cc, out);
        }
        if self.total_segs == Some(self.snd_una) {
            self.complete(now, cc);
            return;
        }
        let st = cc.state(m);
        if self.snd_una == self.snd_max {
            self.rto_deadline = None;
        } else if restart_timer {
            self.arm_timer_from(now, &st.rtt);
        }
        // Linux accounting: a new ACK whose SACK blocks show a loss starts recovery too, unless
        // it is the ACK that ended one (or the Loss state): ns-2's TCP-Linux returns from
        // `tcp_fastretrans_alert` after the exit, and the next ACK looks again.
        let now_phase = st.phase;
        let ended = phase != Phase::Open && now_phase == Phase::Open;
        if !ended && self.sacked_count > 0 && self.linux_pipe() && self.linux_loss_seen(now_phase) {
            return self.fast_retransmit(now, cc, out);
        }
        let st = cc.state(m);
        let cwnd = st.cwnd;
        self.send_with(now, m, st.phase, cwnd, cc, out);
        if self.rate.is_some() {
            self.rate_check_app_limited(cwnd);
        }
    }

    /// Byte counting (RFC 3465 with no limit L, as Linux credits `acked` segments): an ACK of
    /// `k` new segments is given to the controller as `k` ACKs of one segment each, the first
    /// carrying the RTT sample, the round start and the rate sample, so that delayed ACKs do
    /// not slow the window's growth and every per-ACK rule (Reno's 1/cwnd, CUBIC's step toward
    /// its target) is applied per segment.
    #[cold]
    fn credit_each_segment(&mut self, m: MemberId, ack: &AckSample, cc: &mut CcHost) {
        let mut one = AckSample { newly_acked: 1, ..*ack };
        cc.on_ack(m, &one);
        one.rtt = None;
        one.round_start = false;
        one.rate = None;
        for i in 1..ack.newly_acked {
            one.in_flight_before = ack.in_flight_before.saturating_sub(i);
            cc.on_ack(m, &one);
        }
    }

    /// Every byte of the finite transfer is acknowledged: leave the congestion-control host,
    /// keeping the final state for the results.
    fn complete(&mut self, now: Time, cc: &mut CcHost) {
        let m = self.m();
        self.state = State::Finished;
        self.stats.completed_at = Some(now);
        self.rto_deadline = None;
        self.pace_wake = None;
        let in_flight = self.in_flight();
        let st = cc.state_mut(m);
        st.in_flight = in_flight;
        let w = self.reported_cwnd(st);
        self.stats.cwnd_max = self.stats.cwnd_max.max(w);
        self.last_state = Some(*st);
        cc.leave(m, now);
        self.member = NOT_A_MEMBER;
    }

    /// With rate estimation: a duplicate ACK that SACKed new data gives the controller a
    /// rate sample (Linux runs `cong_control` on every ACK).
    #[cold]
    fn rate_dup_ack(&mut self, now: Time, p: &Packet, cc: &mut CcHost) {
        let m = self.m();
        let in_flight_before = self.in_flight();
        let rate = self.rate_sample(now, in_flight_before, cc);
        let st = cc.state_mut(m);
        st.in_flight = self.snd_max - self.snd_una - self.sacked_count;
        let in_recovery = st.phase != Phase::Open;
        let sample = AckSample {
            now,
            newly_acked: 0,
            rtt: None,
            round_start: false,
            in_flight_before,
            in_recovery,
            ece: p.ecn & ecn::ECE != 0,
            rate,
        };
        cc.on_ack(m, &sample);
    }

    fn on_dup_ack(&mut self, now: Time, cc: &mut CcHost, out: &mut Vec<Packet>) {
        if self.vegas.is_some() {
            return self.vegas_dup_ack(now, cc, out);
        }
        let m = self.m();
        self.dupacks += 1;
        let phase = cc.state(m).phase;
        if phase == Phase::Recovery {
            if self.cfg.recovery != Recovery::Sack {
                cc.state_mut(m).cwnd += 1.0; // window inflation (RFC 5681 §3.2 step 4)
            } else if self.cfg.sack_recovery == SackRecovery::Prr {
                self.prr_update(cc);
            }
            self.send_available(now, cc, out);
            return;
        }
        if self.linux_pipe() {
            // Linux: the SACK marking, not a count of duplicate ACKs, finds losses; until it
            // does, the segments SACKed have left the pipe and new data takes their place.
            if self.linux_loss_seen(phase) {
                self.fast_retransmit(now, cc, out);
            } else {
                self.send_available(now, cc, out);
            }
            return;
        }
        let lost_by_sack = self.cfg.recovery == Recovery::Sack && self.below_third_sacked().is_some();
        if self.dupacks < DUP_THRESH && !lost_by_sack {
            if self.cfg.limited_transmit {
                self.limited_transmit(now, cc, out);
            }
            return;
        }
        // A new fast retransmit needs an ACK beyond every segment sent when the last loss
        // episode began (RFC 6582 §4; ns-2's `bug_fix_`): duplicate ACKs at exactly `recover`
        // are echoes of the go-back-N resending after a timeout, not a new loss. The less
        // careful variant accepts them.
        let refused = match self.cfg.recover {
            RecoverRule::Careful | RecoverRule::AfterTimeout => self.recover.is_some_and(|r| self.snd_una <= r),
            RecoverRule::LessCareful => self.recover.is_some_and(|r| self.snd_una < r),
        };
        if refused {
            return;
        }
        self.fast_retransmit(now, cc, out);
    }

    /// Fast retransmit and the recovery of the variant chosen.
    fn fast_retransmit(&mut self, now: Time, cc: &mut CcHost, out: &mut Vec<Packet>) {
        let m = self.m();
        let after_timeout = cc.state(m).phase == Phase::Loss;
        // After an ECN reduction in this window the loss is repaired without a second cut.
        if self.ecn_recover.is_none_or(|r| self.snd_una >= r) {
            let flight = self.flight_for_decrease(cc.state(m));
            let ss = self.ssthresh_after(LossKind::DupAcks, now, flight, cc);
            cc.state_mut(m).ssthresh = ss;
            self.stats.loss_events += 1;
        }
        self.recover = Some(self.snd_max);
        self.limited_sent = 0;
        self.stats.fast_retransmits += 1;
        self.abandon_timing(cc);
        self.first_partial = true;
        self.loss_kind = LossKind::DupAcks;
        match self.cfg.recovery {
            Recovery::Tahoe => {
                // No fast recovery: slow start again from one segment, going back N.
                cc.state_mut(m).cwnd = 1.0;
                self.snd_nxt = self.snd_una;
                self.arm_timer(now, cc);
                self.send_available(now, cc, out);
            }
            Recovery::Reno | Recovery::Newreno => {
                self.emit(now, self.snd_una, 0, cc, out);
                let st = cc.state_mut(m);
                st.cwnd = st.ssthresh + f64::from(DUP_THRESH);
                cc.set_phase(m, Phase::Recovery);
                self.arm_timer(now, cc);
                self.send_available(now, cc, out);
            }
            Recovery::Sack => {
                let st = cc.state_mut(m);
                let before = st.cwnd;
                match self.cfg.sack_recovery {
                    SackRecovery::Rfc6675 => st.cwnd = self.cut_cwnd,
                    SackRecovery::RateHalving => {
                        st.cwnd =
                            if self.cfg.min_cwnd_half { (st.ssthresh / 2.0).floor().max(1.0) } else { st.ssthresh };
                        self.rh_next = before as u64;
                    }
                    SackRecovery::Prr => self.prr = (0, 0, self.snd_max - self.snd_una),
                }
                cc.set_phase(m, Phase::Recovery);
                self.set_high_rxt(self.snd_una);
                if self.cfg.sack_recovery.linux_pipe() {
                    // From the Loss state the timeout's marks stand: what it held lost and
                    // has not resent is still lost, and its retransmissions are in flight.
                    if !after_timeout {
                        self.lost.reset(&self.sacked);
                    }
                    if self.cfg.sack_recovery == SackRecovery::Prr {
                        self.prr_update(cc);
                    }
                } else {
                    self.emit(now, self.snd_una, 0, cc, out);
                    self.set_high_rxt(self.snd_una + 1);
                }
                self.arm_timer(now, cc);
                self.send_available(now, cc, out);
            }
        }
    }

    /// Limited transmit (RFC 3042): on each of the first two duplicate ACKs, one segment
    /// that keeps the data outstanding within cwnd + the duplicate ACKs counted (ns-2's
    /// `send_one`), so that a window too small for three duplicate ACKs still gets them.
    fn limited_transmit(&mut self, now: Time, cc: &mut CcHost, out: &mut Vec<Packet>) {
        if self.state != State::Open {
            return;
        }
        let m = self.m();
        while self.snd_nxt < self.snd_max && self.is_sacked(self.snd_nxt) {
            self.snd_nxt += 1;
        }
        let seq = self.snd_nxt;
        let outstanding = seq - self.snd_una + 1;
        let allowed = cc.state(m).cwnd + f64::from(self.dupacks);
        if outstanding as f64 > allowed || outstanding > self.cfg.rwnd || !self.has_data(seq) {
            return;
        }
        if !self.pace_ready(now, cc) {
            return;
        }
        let tag = if self.caps.tags && seq >= self.snd_max {
            match cc.admit(m, now) {
                Some(tag) => tag,
                None => return,
            }
        } else {
            0
        };
        self.emit(now, seq, tag, cc, out);
        self.pace_sent(now, cc);
        self.snd_nxt = seq + 1;
        self.limited_sent += 1;
    }

    /// Whether an ECN echo on an ACK of `ack` may reduce the window: not twice for one window
    /// of data, nor inside a window already cut for a loss.
    fn ecn_may_reduce(&self, ack: u64) -> bool {
        self.recover.is_none_or(|r| ack > r) && self.ecn_recover.is_none_or(|r| ack > r)
    }

    /// React to an ECN echo as to a loss found by duplicate ACKs, without retransmitting:
    /// ssthresh from the controller, cwnd down to it, CWR on the next new segment.
    fn reduce_for_ecn(&mut self, now: Time, cc: &mut CcHost) {
        let m = self.m();
        let flight = self.flight_for_decrease(cc.state(m));
        let ss = self.ssthresh_after(LossKind::Ecn, now, flight, cc);
        let cut = self.cut_cwnd;
        let st = cc.state_mut(m);
        st.ssthresh = ss;
        st.cwnd = cut.max(1.0);
        self.ecn_recover = Some(self.snd_max);
        self.cwr_pending = true;
        self.stats.ecn_reductions += 1;
        self.stats.loss_events += 1;
    }

    /// A wake-up at `now`: the pacing timer releases what may go, the retransmission timer
    /// acts if its deadline has really passed.
    pub fn on_wake(&mut self, now: Time, cc: &mut CcHost, out: &mut Vec<Packet>) {
        if self.pace_wake.is_some_and(|t| t <= now) {
            self.pace_wake = None;
            self.send_available(now, cc, out);
        }
        self.on_timer(now, cc, out);
    }

    /// The retransmission timer may have expired at `now`; acts only if the deadline has
    /// really passed.
    fn on_timer(&mut self, now: Time, cc: &mut CcHost, out: &mut Vec<Packet>) {
        match self.rto_deadline {
            Some(d) if d <= now => {}
            _ => return,
        }
        if self.forced_deadline.is_some_and(|f| f <= now) {
            self.forced_deadline = None;
        }
        self.backoff = (self.backoff * 2).min(self.cfg.max_backoff);
        self.stats.backoff_max = self.stats.backoff_max.max(self.backoff);
        if self.state == State::SynSent {
            let mut syn = Packet::new(self.conn, Kind::Syn, 0, self.cfg.ack_size, now);
            syn.set_retx(true);
            out.push(syn);
            self.stats.packets_sent += 1;
            self.stats.timeouts += 1;
            self.arm_timer(now, cc);
            return;
        }
        if self.state != State::Open || self.snd_una >= self.snd_max {
            self.rto_deadline = None;
            return;
        }
        let m = self.m();
        self.account_cwnd(now, cc.state(m));
        self.stats.timeouts += 1;
        if cc.state(m).phase == Phase::Open {
            self.stats.loss_events += 1;
        }
        self.abandon_timing(cc);
        let flight = self.flight_for_decrease(cc.state(m));
        if let Some(cfg) = self.cfg.misrx {
            let st = cc.state(m);
            let rtt = match cfg.reference {
                MisRxReference::LastSample => self.last_rtt.map(|r| r as f64),
                MisRxReference::Srtt => (st.rtt.samples > 0).then_some(st.rtt.srtt),
            };
            let window = window_in_force(st);
            self.misrx_check = rtt.map(|rtt| TimeoutRecord { at: now, cwnd: window, snd_nxt: self.snd_nxt, rtt });
        }
        let again = cc.state(m).phase == Phase::Loss;
        let ss = self.ssthresh_after(LossKind::Timeout, now, flight, cc);
        let st = cc.state_mut(m);
        st.ssthresh = ss;
        st.cwnd = 1.0;
        if again {
            // No phase change for the controller to see: tell it of the new window.
            cc.on_repeated_timeout(m);
        } else {
            cc.set_phase(m, Phase::Loss);
        }
        self.recover = Some(self.snd_max);
        self.dupacks = 0;
        self.loss_kind = LossKind::Timeout;
        self.set_high_rxt(self.snd_una);
        self.rh_next = 0;
        if self.linux_pipe() {
            // Linux: every segment outstanding is lost; they go again from the scoreboard.
            self.lost.timeout(&self.sacked, self.snd_max);
        } else {
            // Go back N: resend from the first unacknowledged segment (skipping SACKed ones).
            self.snd_nxt = self.snd_una;
        }
        if self.vegas.is_some() {
            self.vegas_timeout(now, cc);
        }
        self.arm_timer(now, cc);
        self.send_available(now, cc, out);
    }

    /// Close the books at `now` (end of the run).
    pub fn finish(&mut self, now: Time, cc: &CcHost) {
        if self.stats.started_at.is_some() {
            let end = self.stats.completed_at.unwrap_or(now);
            if end > self.last_cwnd_t {
                self.stats.cwnd_integral += self.reported_cwnd(&self.cc_state(cc)) * (end - self.last_cwnd_t) as f64;
                self.last_cwnd_t = end;
            }
        }
    }
}

/// The window a decrease is taken from: ssthresh in fast recovery (the rest of cwnd is
/// inflation), cwnd otherwise.
fn window_in_force(st: &CcState) -> f64 {
    if st.phase == Phase::Recovery {
        st.ssthresh
    } else {
        st.cwnd
    }
}

#[cfg(test)]
mod rate_tests {
    use super::*;

    const MS: Time = 1_000_000;

    /// Four segments leave at 0, one more when the first is acknowledged at 40 ms. The first
    /// ACK's sample is 1 segment over 40 ms; the ACK of the fifth segment at 80 ms covers the
    /// 4 segments delivered since it was sent, over 40 ms: 100 segments/s (`tcp_rate.c`).
    #[test]
    fn delivery_rate_samples_from_the_send_records() {
        let mut r = RateState::default();
        for seq in 0..4 {
            Sender::rate_sent(&mut r, 0, seq, 0, seq);
        }
        r.delivered(0);
        r.recs.pop_front();
        let s = r.sample(40 * MS, 40 * MS, 4, 3);
        assert_eq!((s.delivered, s.interval, s.acked, s.total_delivered), (1, 40 * MS, 1, 1));
        assert_eq!(s.rate(), Some(25.0));
        Sender::rate_sent(&mut r, 40 * MS, 4, 1, 4);
        for (k, t) in [(41, 41), (42, 42), (43, 43)] {
            r.delivered(0);
            r.recs.pop_front();
            let s = r.sample(t * MS, 40 * MS, 4, 3);
            // Segments sent at 0: 2, 3 and 4 delivered over 41, 42 and 43 ms.
            assert_eq!((s.delivered, s.interval), (k - 39, k * MS), "ACK at {t} ms");
        }
        r.delivered(0);
        r.recs.pop_front();
        let s = r.sample(80 * MS, 40 * MS, 1, 0);
        assert_eq!((s.prior_delivered, s.delivered, s.interval), (1, 4, 40 * MS));
        assert_eq!(s.rate(), Some(100.0));
        // A sample shorter than the min RTT is not valid (ACK compression).
        Sender::rate_sent(&mut r, 80 * MS, 5, 5, 5);
        r.delivered(0);
        let s = r.sample(81 * MS, 40 * MS, 1, 0);
        assert_eq!((s.interval, s.rate()), (0, None));
    }

    /// Segments sent while application-limited give app-limited samples; the mark ends once
    /// more than the data in flight at the time has been delivered.
    #[test]
    fn app_limited_marks_and_clears() {
        let mut r = RateState { app_limited: 2, ..RateState::default() };
        Sender::rate_sent(&mut r, 0, 0, 0, 0);
        Sender::rate_sent(&mut r, 0, 1, 0, 1);
        r.delivered(0);
        let s = r.sample(40 * MS, 40 * MS, 2, 1);
        assert!(s.app_limited);
        assert_eq!(r.app_limited, 2, "1 delivered, not beyond 2");
        r.delivered(1);
        r.sample(41 * MS, 40 * MS, 1, 0);
        r.delivered(1);
        r.sample(42 * MS, 40 * MS, 1, 0);
        assert_eq!(r.app_limited, 0, "3 delivered > 2: no longer application-limited");
    }
}
