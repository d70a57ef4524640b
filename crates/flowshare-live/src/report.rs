//! What a live endpoint counted, and the report it gives at the end of a run.

use crate::admit::Rejection;
use crate::reliable;
use crate::wire::WireError;
use flowshare_core::agent::{Agent, Side};
use flowshare_core::cc::CcHost;
use flowshare_core::units::{secs, Time};
use serde::Serialize;
use std::collections::BTreeMap;

/// Counters of the datagrams an endpoint sent, took and dropped.
#[derive(Clone, Debug, Default)]
pub struct Counters {
    /// Datagrams handed to the socket, and their bytes (UDP payload).
    pub datagrams_sent: u64,
    /// See `datagrams_sent`.
    pub bytes_sent: u64,
    /// Datagrams the local send buffer had no room for.
    pub send_dropped: u64,
    /// Datagrams delivered to the agent, and their bytes.
    pub datagrams_received: u64,
    /// See `datagrams_received`.
    pub bytes_received: u64,
    /// Datagrams refused by the wire format, by [`WireError::index`].
    pub malformed: [u64; WireError::ALL.len()],
    /// Datagrams from an address other than the peer's.
    pub foreign_peer: u64,
    /// Well-formed datagrams of another connection id.
    pub foreign_connection: u64,
    /// Well-formed datagrams of this connection the agent cannot take, by [`Rejection`].
    pub rejected: [u64; Rejection::ALL.len()],
}

impl Counters {
    /// Datagrams refused by the wire format, all reasons.
    pub fn malformed_total(&self) -> u64 {
        self.malformed.iter().sum()
    }

    /// Datagrams refused for `e`.
    pub fn malformed(&self, e: WireError) -> u64 {
        self.malformed[e.index()]
    }
}

/// The statistics the core keeps for the agent, by its kind.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "agent", rename_all = "snake_case")]
pub enum AgentReport {
    /// A TCP sender.
    TcpSender {
        /// Congestion control, as scenarios name it.
        cc: &'static str,
        /// Segments (and SYNs) sent, retransmissions included.
        packets_sent: u64,
        /// Payload bytes sent, retransmissions included.
        bytes_sent: u64,
        /// Payload bytes cumulatively acknowledged.
        bytes_acked: u64,
        /// Segments retransmitted.
        retransmits: u64,
        /// Fast-retransmit events.
        fast_retransmits: u64,
        /// Retransmission timeouts.
        timeouts: u64,
        /// Window reductions.
        loss_events: u64,
        /// RTT samples and their mean, min and max, ms (NaN without samples).
        rtt_samples: u64,
        /// See `rtt_samples`.
        rtt_mean_ms: f64,
        /// See `rtt_samples`.
        rtt_min_ms: f64,
        /// See `rtt_samples`.
        rtt_max_ms: f64,
        /// Congestion window at the end, segments.
        cwnd: f64,
        /// Largest congestion window, segments.
        cwnd_max: f64,
    },
    /// A TCP sink.
    TcpSink {
        /// Next segment expected in order.
        rcv_nxt: u64,
        /// Payload bytes delivered in order.
        bytes_delivered: u64,
        /// ACKs sent.
        acks_sent: u64,
        /// Segments that arrived marked CE.
        ce_received: u64,
    },
    /// A TFRC (or MulTFRC, CP) sender.
    TfrcSender {
        /// Packets and payload bytes sent.
        packets_sent: u64,
        /// See `packets_sent`.
        bytes_sent: u64,
        /// Allowed rate at the end, bytes/s.
        rate_bytes_per_s: f64,
        /// RTT estimate at the end, ms (NaN before the first report).
        rtt_ms: f64,
        /// Loss event rate and packets lost per event of the last report.
        p: f64,
        /// See `p`.
        j: f64,
        /// Reports received.
        reports: u64,
        /// No-feedback timer expiries.
        no_feedback_expiries: u64,
    },
    /// A TFRC receiver.
    TfrcReceiver {
        /// Distinct data packets received.
        packets: u64,
        /// Payload bytes received (duplicates included).
        bytes: u64,
        /// Reports sent.
        reports: u64,
        /// Loss event rate now.
        p: f64,
    },
    /// A UDP traffic source.
    UdpSource {
        /// Packets and payload bytes sent.
        packets_sent: u64,
        /// See `packets_sent`.
        bytes_sent: u64,
    },
    /// A UDP sink.
    UdpSink {
        /// Packets and payload bytes received.
        packets: u64,
        /// See `packets`.
        bytes: u64,
    },
}

/// What a live endpoint did over its run.
#[derive(Clone, Debug, Serialize)]
pub struct EndpointReport {
    /// The flow's index among the scenario's listed flows.
    pub flow: usize,
    /// `"source"` or `"destination"`.
    pub side: &'static str,
    /// `"tcp"`, `"tfrc"` or `"udp"`.
    pub transport: &'static str,
    /// Time the endpoint ran, s.
    pub duration_s: f64,
    /// Datagrams and bytes (UDP payload) sent.
    pub datagrams_sent: u64,
    /// See `datagrams_sent`.
    pub bytes_sent: u64,
    /// Datagrams dropped because the local send buffer was full.
    pub send_dropped: u64,
    /// Datagrams and bytes delivered to the agent.
    pub datagrams_received: u64,
    /// See `datagrams_received`.
    pub bytes_received: u64,
    /// Payload bytes delivered to the application (destination) or acknowledged as delivered
    /// (TCP source, reliable TFRC source); 0 where this end cannot know (other TFRC and UDP
    /// sources). A reliable transfer counts what was delivered in order.
    pub goodput_bytes: u64,
    /// `goodput_bytes` over the run, bit/s.
    pub goodput_bps: f64,
    /// Datagrams refused by the wire format, by reason ([`WireError::name`]), and their sum.
    pub malformed: BTreeMap<&'static str, u64>,
    /// See `malformed`.
    pub malformed_total: u64,
    /// Datagrams from an address other than the peer's.
    pub foreign_peer: u64,
    /// Well-formed datagrams of another connection id.
    pub foreign_connection: u64,
    /// Well-formed datagrams the agent could not take, by reason ([`Rejection::name`]).
    pub rejected: BTreeMap<&'static str, u64>,
    /// The agent's own statistics.
    pub agent: AgentReport,
    /// A reliable transfer's half (a sized TFRC or MulTFRC flow); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reliable: Option<ReliableReport>,
}

/// What one half of a reliable transfer ([`crate::reliable`]) did.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "half", rename_all = "snake_case")]
pub enum ReliableReport {
    /// The sending half.
    Sender {
        /// Bytes of the transfer, bytes of a block and the number of blocks.
        size_bytes: u64,
        /// See `size_bytes`.
        block_bytes: u32,
        /// See `size_bytes`.
        blocks: u64,
        /// Distinct blocks sent.
        blocks_sent: u64,
        /// Blocks known to have arrived, and the bytes of those acknowledged in order.
        blocks_acked: u64,
        /// See `blocks_acked`.
        acked_bytes: u64,
        /// Transmissions of a block after its first: loss repairs and tail probes.
        retransmits: u64,
        /// The tail probes among them.
        probes: u64,
        /// Times a block was declared lost.
        losses: u64,
        /// Data packets that carried no block.
        empty_packets: u64,
        /// Block ACKs taken.
        acks_received: u64,
        /// From the flow's start until the sender knew every block had arrived, s (`null`
        /// if not by the end).
        completion_s: Option<f64>,
    },
    /// The receiving half.
    Receiver {
        /// Bytes of the transfer, bytes of a block and the number of blocks.
        size_bytes: u64,
        /// See `size_bytes`.
        block_bytes: u32,
        /// See `size_bytes`.
        blocks: u64,
        /// Blocks and bytes delivered to the application in order, each once.
        delivered_blocks: u64,
        /// See `delivered_blocks`.
        delivered_bytes: u64,
        /// Data packets that carried a block; blocks that arrived again; blocks that arrived
        /// above a hole.
        arrivals: u64,
        /// See `arrivals`.
        duplicates: u64,
        /// See `arrivals`.
        out_of_order: u64,
        /// Block ACKs sent.
        acks_sent: u64,
        /// From the flow's start as this end sees it (the arrival of its first packet: the
        /// sender's start time on this clock through that packet's timestamp) until the last
        /// block was delivered, s (`null` if not by the end).
        completion_s: Option<f64>,
    },
}

impl ReliableReport {
    /// The sending half `s`, whose flow started at `start`.
    pub fn sender(s: &reliable::Sender, start: Time) -> Self {
        let t = s.transfer();
        ReliableReport::Sender {
            size_bytes: t.size,
            block_bytes: t.block_bytes,
            blocks: t.blocks(),
            blocks_sent: s.stats.blocks_sent,
            blocks_acked: s.stats.blocks_acked,
            acked_bytes: t.bytes_below(s.cumulative()),
            retransmits: s.stats.retransmits,
            probes: s.stats.probes,
            losses: s.stats.losses,
            empty_packets: s.stats.empty_packets,
            acks_received: s.stats.acks,
            completion_s: s.completed_at().map(|c| secs(c.saturating_sub(start))),
        }
    }

    /// The receiving half `r`; `start` is the flow's start on this clock, once known.
    pub fn receiver(r: &reliable::Receiver, start: Option<Time>) -> Self {
        let t = r.transfer();
        let st = &r.stats;
        ReliableReport::Receiver {
            size_bytes: t.size,
            block_bytes: t.block_bytes,
            blocks: t.blocks(),
            delivered_blocks: st.delivered_blocks,
            delivered_bytes: st.delivered_bytes,
            arrivals: st.arrivals,
            duplicates: st.duplicates,
            out_of_order: st.out_of_order,
            acks_sent: st.acks,
            completion_s: r.completed_at().zip(start).map(|(c, s)| secs(c.saturating_sub(s))),
        }
    }

    /// Bytes delivered in order (receiver) or acknowledged in order (sender).
    pub fn goodput_bytes(&self) -> u64 {
        match *self {
            ReliableReport::Sender { acked_bytes, .. } => acked_bytes,
            ReliableReport::Receiver { delivered_bytes, .. } => delivered_bytes,
        }
    }
}

fn ms(ns: f64) -> f64 {
    ns / 1e6
}

impl AgentReport {
    /// The statistics of `agent`, whose congestion state lives in `cc` and whose congestion
    /// control is called `cc_name`.
    pub fn of(agent: &Agent, cc: &CcHost, cc_name: &'static str) -> AgentReport {
        match agent {
            Agent::TcpSender(s) => {
                let st = &s.stats;
                let n = st.rtt_n;
                let stat = |v: f64| if n > 0 { v } else { f64::NAN };
                AgentReport::TcpSender {
                    cc: cc_name,
                    packets_sent: st.packets_sent,
                    bytes_sent: st.bytes_sent,
                    bytes_acked: s.acked_bytes(),
                    retransmits: st.retransmits,
                    fast_retransmits: st.fast_retransmits,
                    timeouts: st.timeouts,
                    loss_events: st.loss_events,
                    rtt_samples: n,
                    rtt_mean_ms: stat(ms(st.rtt_sum / n.max(1) as f64)),
                    rtt_min_ms: stat(ms(st.rtt_min as f64)),
                    rtt_max_ms: stat(ms(st.rtt_max as f64)),
                    cwnd: s.reported_cwnd(&s.cc_state(cc)),
                    cwnd_max: st.cwnd_max,
                }
            }
            Agent::TcpSink(k) => AgentReport::TcpSink {
                rcv_nxt: k.rcv_nxt,
                bytes_delivered: k.bytes_delivered,
                acks_sent: k.acks_sent,
                ce_received: k.ce_received,
            },
            Agent::TfrcSender(s) => AgentReport::TfrcSender {
                packets_sent: s.stats.packets_sent,
                bytes_sent: s.stats.bytes_sent,
                rate_bytes_per_s: s.rate(),
                rtt_ms: s.rtt().map_or(f64::NAN, |r| r * 1e3),
                p: s.loss_event_rate(),
                j: s.j(),
                reports: s.tfrc.reports,
                no_feedback_expiries: s.tfrc.no_feedback_expiries,
            },
            Agent::TfrcReceiver(k) => AgentReport::TfrcReceiver {
                packets: k.packets,
                bytes: k.bytes,
                reports: k.reports,
                p: k.loss_event_rate(),
            },
            Agent::UdpSource(s) => {
                AgentReport::UdpSource { packets_sent: s.stats.packets_sent, bytes_sent: s.stats.bytes_sent }
            }
            Agent::UdpSink(k) => AgentReport::UdpSink { packets: k.packets, bytes: k.bytes },
            Agent::Vacant => unreachable!("a live endpoint is built from a listed flow, never a free slot"),
        }
    }

    /// Payload bytes delivered, as this end knows it.
    pub fn goodput_bytes(&self) -> u64 {
        match *self {
            AgentReport::TcpSender { bytes_acked, .. } => bytes_acked,
            AgentReport::TcpSink { bytes_delivered, .. } => bytes_delivered,
            AgentReport::TfrcReceiver { bytes, .. } | AgentReport::UdpSink { bytes, .. } => bytes,
            AgentReport::TfrcSender { .. } | AgentReport::UdpSource { .. } => 0,
        }
    }
}

impl EndpointReport {
    /// The report of an endpoint that ran for `elapsed` ns.
    pub(crate) fn new(
        flow: usize,
        side: Side,
        transport: &'static str,
        elapsed: Time,
        counters: &Counters,
        agent: AgentReport,
        reliable: Option<ReliableReport>,
    ) -> Self {
        // A reliable transfer's goodput is what it delivered in order (or had acknowledged).
        let goodput_bytes = reliable.as_ref().map_or_else(|| agent.goodput_bytes(), ReliableReport::goodput_bytes);
        let duration_s = secs(elapsed);
        EndpointReport {
            flow,
            side: match side {
                Side::Source => "source",
                Side::Destination => "destination",
            },
            transport,
            duration_s,
            datagrams_sent: counters.datagrams_sent,
            bytes_sent: counters.bytes_sent,
            send_dropped: counters.send_dropped,
            datagrams_received: counters.datagrams_received,
            bytes_received: counters.bytes_received,
            goodput_bytes,
            goodput_bps: if duration_s > 0.0 { goodput_bytes as f64 * 8.0 / duration_s } else { 0.0 },
            malformed: WireError::ALL.iter().map(|e| (e.name(), counters.malformed(*e))).collect(),
            malformed_total: counters.malformed_total(),
            foreign_peer: counters.foreign_peer,
            foreign_connection: counters.foreign_connection,
            rejected: Rejection::ALL.iter().map(|r| (r.name(), counters.rejected[*r as usize])).collect(),
            agent,
            reliable,
        }
    }
}
