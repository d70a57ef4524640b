//! Congestion-control policy behind one interface.
//!
//! The TCP sender ([`crate::tcp::sender`]) owns mechanism: sequence numbers, the scoreboard,
//! loss detection and recovery, the retransmission timer. An algorithm owns policy: how the
//! window grows on an ACK and what ssthresh becomes after a loss. The sender builds an
//! [`AckSample`] or a [`LossSignal`], calls the algorithm, and applies what it returns.
//! Windows are `f64` segments because the literature reasons in fractional packets; the
//! sender floors them when it decides whether a segment may go.
//!
//! Every connection runs through one host ([`host::CcHost`]): the state an algorithm reads
//! and writes ([`CcState`]) lives in the host's arena, not inside the sender, and every
//! connection belongs to a group controller ([`host::GroupControl`]), a plain algorithm being a
//! group of one ([`host::Solo`]). So an ensemble controller can update several connections'
//! windows and RTT estimates at once and let an ACK on one clock sending on the others, and a
//! multi-loop controller can tag each segment to a loop (see
//! `docs/adr/0001-congestion-control-interface.md`).

pub mod aggregate;
pub mod bbr;
pub mod bic;
pub mod catalog;
pub mod compound;
mod config;
pub mod cubic;
pub mod dctcp;
pub mod efcm;
pub mod fast;
pub mod highspeed;
pub mod host;
pub mod htcp;
pub mod loops;
pub mod mpat;
pub mod multcp;
pub mod pamultcp;
mod reno;
pub mod rtt;
pub mod scalable;
pub mod stochastic;
pub mod tcb;
pub mod vegas;
pub mod vegas_linux;

pub use config::{CcConfig, ALGORITHMS};
pub use host::{Caps, CcHost, Delivered, GroupControl, LostSegment, MemberId, Members, Pacing, Solo, Tag};
pub use reno::Aimd;
pub use rtt::RttEstimator;

use crate::units::Time;

/// Where the sender's loss recovery is, written only by the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Normal operation: slow start or congestion avoidance.
    Open,
    /// Fast recovery after duplicate ACKs.
    Recovery,
    /// After a retransmission timeout, until the data outstanding then is acknowledged.
    Loss,
}

/// Per-connection congestion state shared between the sender and its algorithm.
#[derive(Clone, Copy, Debug)]
pub struct CcState {
    /// Congestion window, segments.
    pub cwnd: f64,
    /// Slow-start threshold, segments.
    pub ssthresh: f64,
    /// Payload bytes per segment.
    pub mss: u32,
    /// Recovery phase.
    pub phase: Phase,
    /// Segments sent and not yet cumulatively acknowledged.
    pub in_flight: u64,
    /// The sender's oldest unacknowledged segment as of the ACK being processed (for
    /// algorithms that delimit rounds by sequence numbers, such as Linux's Vegas).
    pub snd_una: u64,
    /// The sender's next segment to send, as of the ACK being processed.
    pub snd_nxt: u64,
    /// SRTT, RTTVAR and the RTO they give (SRTT is 0 before the first sample).
    pub rtt: RttEstimator,
    /// Smallest RTT sample seen, nanoseconds (`u64::MAX` before the first sample).
    pub min_rtt: Time,
    /// Limited slow start (RFC 3742): above this window, slow start adds at most
    /// `max_ssthresh / 2` segments per RTT. `None` = ordinary slow start.
    pub max_ssthresh: Option<f64>,
    /// Slow start at cwnd = ssthresh as well as below it (see [`in_slow_start`]).
    pub slow_start_at_ssthresh: bool,
}

impl CcState {
    /// Fresh state with the given initial window and threshold, and RFC 6298's timer
    /// constants (initial RTO 1 s, minimum 1 s, maximum 60 s, 1 ms ticks) until the sender
    /// sets its own.
    pub fn new(cwnd: f64, ssthresh: f64, mss: u32) -> Self {
        const MS: Time = 1_000_000;
        CcState {
            cwnd,
            ssthresh,
            mss,
            phase: Phase::Open,
            in_flight: 0,
            snd_una: 0,
            snd_nxt: 0,
            rtt: RttEstimator::new(1000 * MS, MS, 1000 * MS, 60_000 * MS),
            min_rtt: u64::MAX,
            max_ssthresh: None,
            slow_start_at_ssthresh: false,
        }
    }
}

/// Whether an ACK falls in slow start: cwnd below ssthresh, or at it with
/// `slow_start_at_ssthresh`. RFC 5681 §3.1 lets the sender choose when the two are equal; ns-2's
/// native agents and RFC 9438 take congestion avoidance, Linux 2.6.22 (`snd_cwnd <=
/// snd_ssthresh` in every module, as ns-2's TCP-Linux runs them) slow start, which after each
/// reduction to cwnd = ssthresh adds one segment on the first ACK.
#[inline]
pub fn in_slow_start(st: &CcState) -> bool {
    st.cwnd < st.ssthresh || (st.slow_start_at_ssthresh && st.cwnd <= st.ssthresh)
}

/// One ACK's worth of slow start, shared by every algorithm: +1 segment (RFC 5681 eq. 2), or,
/// with limited slow start above `max_ssthresh`, +1/K with K = ⌊cwnd / (max_ssthresh/2)⌋
/// (RFC 3742 §2), which caps growth at max_ssthresh/2 segments per RTT.
#[inline]
pub fn slow_start(st: &mut CcState) {
    match st.max_ssthresh {
        Some(m) if st.cwnd > m => st.cwnd += 1.0 / (st.cwnd / (0.5 * m)).floor(),
        _ => st.cwnd += 1.0,
    }
}

/// What one ACK of new data tells the algorithm.
#[derive(Clone, Copy, Debug)]
pub struct AckSample {
    /// Arrival time of the ACK.
    pub now: Time,
    /// Segments newly acknowledged (cumulatively).
    pub newly_acked: u64,
    /// RTT sample, `None` under Karn's rule.
    pub rtt: Option<Time>,
    /// The ACK closes a round: it covers the highest segment sent when the previous round
    /// closed. Per-RTT algorithms (Vegas, FAST) act on these.
    pub round_start: bool,
    /// Segments in flight before this ACK.
    pub in_flight_before: u64,
    /// The ACK arrived in fast recovery, or carried an ECN echo the sender has just reacted
    /// to: the window is the loss reaction's, and algorithms must not grow it. Group
    /// controllers still see the ACK (to account it per member or per loop).
    pub in_recovery: bool,
    /// The ACK carried an ECN echo (ECE).
    pub ece: bool,
    /// A delivery-rate sample, for controllers with [`Caps::rate`] (else `None`).
    pub rate: Option<RateSample>,
}

/// A delivery-rate sample (Linux `tcp_rate.c`; Cheng, Cardwell, Yeganeh, Jacobson, "Delivery
/// Rate Estimation", IETF draft-cheng-iccrg-delivery-rate-estimation-01, 2021): segments
/// delivered between the send of the segment this ACK newly delivers last and this ACK, over
/// the longer of the send and the ACK interval.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateSample {
    /// Segments delivered over the interval (`rs->delivered`).
    pub delivered: u64,
    /// The interval, ns (`rs->interval_us`); 0 when the sample is not valid (shorter than the
    /// min RTT, or no segment sent since the connection's delivery count was last taken).
    pub interval: Time,
    /// The connection's delivered count when the segment was sent (`rs->prior_delivered`).
    pub prior_delivered: u64,
    /// The connection's delivered count after this ACK (`tp->delivered`).
    pub total_delivered: u64,
    /// When the connection's delivered count last changed before this ACK's segment was sent
    /// (`rs->prior_mstamp`), ns.
    pub prior_time: Time,
    /// The segment was sent while the sender was application-limited.
    pub app_limited: bool,
    /// Segments newly delivered by this ACK (cumulatively or by SACK).
    pub acked: u64,
    /// Segments in flight before this ACK (`rs->prior_in_flight`).
    pub prior_in_flight: u64,
    /// Segments in flight after it (outstanding, not SACKed).
    pub in_flight: u64,
}

impl RateSample {
    /// Delivery rate, segments per second; `None` for an invalid sample.
    pub fn rate(&self) -> Option<f64> {
        (self.interval > 0).then(|| self.delivered as f64 * 1e9 / self.interval as f64)
    }
}

/// How a loss was detected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossKind {
    /// Duplicate ACKs or SACK information (fast retransmit).
    DupAcks,
    /// The retransmission timer expired.
    Timeout,
    /// The receiver echoed a congestion mark (RFC 3168): nothing was lost.
    Ecn,
}

/// A congestion signal.
#[derive(Clone, Copy, Debug)]
pub struct LossSignal {
    /// How it was detected.
    pub kind: LossKind,
    /// When.
    pub now: Time,
    /// Segments outstanding when it was detected (RFC 5681 FlightSize).
    pub flight_size: u64,
}

/// A per-connection congestion-control algorithm.
///
/// One virtual call per ACK or loss; no hook allocates. Algorithms never record results:
/// the sender samples `CcState` and [`CongestionControl::metrics`]. An algorithm is a plain
/// value (`Copy`): to undo a reduction that proved spurious, its host restores the copy taken
/// just before [`CongestionControl::ssthresh_after`] ([`host::Solo`]).
pub trait CongestionControl: Send + Sync + std::fmt::Debug {
    /// Name recorded in results.
    fn name(&self) -> &'static str;
    /// Window growth on an ACK of new data outside loss recovery.
    fn on_ack(&mut self, st: &mut CcState, ack: &AckSample);
    /// The slow-start threshold after a loss. The sender applies it (and sets cwnd according
    /// to its recovery variant); the algorithm only returns it.
    fn ssthresh_after(&mut self, st: &CcState, loss: &LossSignal) -> f64;
    /// Notification of a phase change; the sender has already changed `st.phase`.
    fn on_phase(&mut self, _st: &mut CcState, _from: Phase, _to: Phase) {}
    /// Algorithm-specific state for time series, as (name, value) pairs.
    fn metrics(&self, _out: &mut dyn FnMut(&'static str, f64)) {}
    /// Optional hooks the algorithm uses ([`Caps`]), asked once when the connection starts.
    fn caps(&self) -> Caps {
        Caps::default()
    }
    /// With [`Caps::pacing`]: the pacing now (`None`: unpaced).
    fn pacing(&self, _st: &CcState) -> Option<Pacing> {
        None
    }
    /// With [`Caps::ack_events`]: every ACK of new data, before the sender reacts to it (to a
    /// loss, an ECN echo or recovery), as Linux's `in_ack_event`.
    fn on_ack_event(&mut self, _st: &CcState, _ack: &AckSample) {}
    /// The algorithm sets the window on every ACK, in recovery too (Linux's `cong_control`,
    /// as BBR has): [`CongestionControl::on_ack`] is called with `in_recovery` set instead of
    /// being skipped.
    fn controls_recovery(&self) -> bool {
        false
    }
}

/// Hand-made inputs for algorithm unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::{AckSample, LossKind, LossSignal};

    /// An ACK of one new segment at time 0, without an RTT sample.
    pub(crate) fn ack() -> AckSample {
        AckSample {
            now: 0,
            newly_acked: 1,
            rtt: None,
            round_start: false,
            in_flight_before: 0,
            in_recovery: false,
            ece: false,
            rate: None,
        }
    }

    /// A loss of `kind` at time 0 with `flight` segments outstanding.
    pub(crate) fn loss_of(kind: LossKind, flight: u64) -> LossSignal {
        LossSignal { kind, now: 0, flight_size: flight }
    }

    /// A loss detected by duplicate ACKs with `flight` segments outstanding.
    pub(crate) fn loss(flight: u64) -> LossSignal {
        loss_of(LossKind::DupAcks, flight)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 3742 §2: with max_ssthresh 100, +1 at 50, +1/3 at 150, +1/20 at 1000.
    #[test]
    fn limited_slow_start_table() {
        for (cwnd, gain) in [(50.0, 1.0), (100.0, 1.0), (150.0, 1.0 / 3.0), (1000.0, 1.0 / 20.0)] {
            let mut st = CcState::new(cwnd, f64::INFINITY, 1460);
            st.max_ssthresh = Some(100.0);
            slow_start(&mut st);
            assert!((st.cwnd - cwnd - gain).abs() < 1e-12, "cwnd {cwnd}: gain {}", st.cwnd - cwnd);
        }
        let mut plain = CcState::new(1000.0, f64::INFINITY, 1460);
        slow_start(&mut plain);
        assert_eq!(plain.cwnd, 1001.0);
    }

    /// At cwnd = ssthresh the first ACK adds a segment only with `slow_start_at_ssthresh`
    /// (Linux 2.6.22); otherwise it is congestion avoidance's, for every algorithm.
    #[test]
    fn slow_start_at_ssthresh_adds_one_segment_after_a_reduction() {
        fn make(name: &str) -> Box<dyn CongestionControl> {
            match name {
                "reno" => Box::new(reno::Aimd::reno()),
                "bic" => Box::new(bic::Bic::new(bic::BicParams::defaults(bic::BicVariant::Linux))),
                "cubic" => Box::new(cubic::Cubic::new(cubic::CubicParams::defaults(cubic::CubicVariant::Ns2))),
                "highspeed" => Box::new(highspeed::HighSpeed::new(highspeed::HighSpeedVariant::Linux)),
                "htcp" => Box::new(htcp::Htcp::new(htcp::HtcpParams::defaults(htcp::HtcpVariant::Linux))),
                _ => Box::new(scalable::Scalable::new(scalable::ScalableVariant::Linux)),
            }
        }
        for name in ["reno", "bic", "cubic", "highspeed", "htcp", "scalable"] {
            for at in [false, true] {
                let mut cc = make(name);
                let mut st = CcState::new(10.0, 10.0, 1460);
                st.slow_start_at_ssthresh = at;
                cc.on_ack(&mut st, &testing::ack());
                if at {
                    assert_eq!(st.cwnd, 11.0, "{name}: slow start at ssthresh");
                } else {
                    assert!(st.cwnd < 11.0, "{name}: congestion avoidance at ssthresh: {}", st.cwnd);
                }
            }
        }
    }
}
