//! Admission: what a well-formed packet must also satisfy before an agent sees it.
//!
//! The core's agents trust their input, as a simulation may: a sink makes room for every
//! segment up to the one that arrived, a TFRC receiver walks every sequence number it skipped,
//! a sender subtracts an echoed timestamp from its clock. A datagram from the network may carry
//! anything the wire format allows, so a packet is delivered only if it is of a kind this side
//! receives, its sequence number lies within [`MAX_AHEAD`] of what has arrived, an echoed
//! timestamp is not in the future, and a UDP packet is at least its header. A reliable
//! transfer ([`crate::reliable`]) adds its own rules on block numbers and block ACKs, with the
//! reasons [`Rejection::NotReliable`] and [`Rejection::BeyondTransfer`] (and
//! [`Rejection::BeyondWindow`], [`Rejection::EchoFromFuture`] and
//! [`Rejection::UnexpectedKind`] in their senses for blocks).

use flowshare_core::agent::Agent;
use flowshare_core::packet::{Kind, Packet};
use flowshare_core::units::Time;

/// The furthest a data packet's sequence number may lie beyond the next one expected (or the
/// highest seen, for TFRC): 2²⁰ packets, about 1.5 GB of 1500-byte packets lost in a row, and
/// 1 MiB of out-of-order bookkeeping at most.
pub const MAX_AHEAD: u64 = 1 << 20;

/// Why a well-formed packet was not delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rejection {
    /// A kind this side never receives (data at a sender, reports at a TCP sink).
    UnexpectedKind,
    /// A sequence number more than [`MAX_AHEAD`] beyond what has arrived.
    BeyondWindow,
    /// An acknowledgement or report echoing a time later than now.
    EchoFromFuture,
    /// A UDP packet smaller than the flow's header.
    TooSmall,
    /// A block number or a block ACK on a flow that is not a reliable transfer.
    NotReliable,
    /// A block number at or beyond the transfer's block count, or a block ACK acknowledging
    /// blocks beyond it.
    BeyondTransfer,
}

impl Rejection {
    /// Every reason, in declaration order.
    pub const ALL: [Rejection; 6] = [
        Rejection::UnexpectedKind,
        Rejection::BeyondWindow,
        Rejection::EchoFromFuture,
        Rejection::TooSmall,
        Rejection::NotReliable,
        Rejection::BeyondTransfer,
    ];

    /// A short stable name, for counters and reports.
    pub fn name(self) -> &'static str {
        match self {
            Rejection::UnexpectedKind => "unexpected_kind",
            Rejection::BeyondWindow => "beyond_window",
            Rejection::EchoFromFuture => "echo_from_future",
            Rejection::TooSmall => "too_small",
            Rejection::NotReliable => "not_reliable",
            Rejection::BeyondTransfer => "beyond_transfer",
        }
    }
}

/// What admission remembers between packets.
#[derive(Clone, Copy, Debug, Default)]
pub struct Admission {
    /// The highest TFRC data sequence number admitted.
    highest: u64,
    /// The UDP flow's header bytes (a UDP sink's packets must be at least this).
    udp_header: u32,
}

impl Admission {
    /// Admission for a flow whose UDP packets have `udp_header` header bytes.
    pub fn new(udp_header: u32) -> Self {
        Admission { highest: 0, udp_header }
    }

    /// Whether `agent` may be handed `p` at `now`.
    pub fn check(&mut self, agent: &Agent, p: &Packet, now: Time) -> Result<(), Rejection> {
        let ahead = |seq: u64, base: u64| seq.saturating_sub(base) > MAX_AHEAD;
        match (agent, p.kind) {
            (Agent::TcpSender(_), Kind::Ack | Kind::SynAck) | (Agent::TfrcSender(_), Kind::TfrcFeedback) => {
                if p.ts > now {
                    return Err(Rejection::EchoFromFuture);
                }
            }
            (Agent::TcpSink(k), Kind::Data) => {
                if ahead(p.seq, k.rcv_nxt) {
                    return Err(Rejection::BeyondWindow);
                }
            }
            (Agent::TcpSink(_), Kind::Syn) => {}
            (Agent::TfrcReceiver(_), Kind::TfrcData) => {
                if ahead(p.seq, self.highest) {
                    return Err(Rejection::BeyondWindow);
                }
                self.highest = self.highest.max(p.seq);
            }
            (Agent::UdpSink(_), Kind::Udp) => {
                if p.size < self.udp_header {
                    return Err(Rejection::TooSmall);
                }
            }
            _ => return Err(Rejection::UnexpectedKind),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flowshare_core::scenario::from_toml;
    use flowshare_core::sim::connection_agents;

    /// Both agents of each flow: TCP, TFRC, UDP with a 28-byte header.
    fn agents() -> Vec<(Agent, Agent)> {
        let s = from_toml(
            r#"
[simulation]
duration = "10s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "20ms", queue = { limit = 50 } }
access = { rate = "100Mbps", delay = "1ms" }
[[flows]]
name = "tcp"
[[flows]]
name = "tfrc"
transport = "tfrc"
[[flows]]
name = "udp"
transport = "udp"
source = { kind = "cbr", rate = "1Mbps", packet_size = "500B", header = "28B" }
"#,
        )
        .unwrap();
        let built = s.build().unwrap();
        built.conns.iter().enumerate().map(|(i, c)| connection_agents(c, i as u32, 10, 1)).collect()
    }

    #[test]
    fn each_rule_refuses_what_it_should_and_no_more() {
        let a = agents();
        let mut adm = Admission::new(28);
        let pkt = |kind, seq, size, ts| Packet::new(0, kind, seq, size, ts);
        let (tcp_src, tcp_dst) = (&a[0].0, &a[0].1);
        assert_eq!(adm.check(tcp_src, &pkt(Kind::Ack, 1, 40, 100), 100), Ok(()));
        assert_eq!(adm.check(tcp_src, &pkt(Kind::Ack, 1, 40, 101), 100), Err(Rejection::EchoFromFuture));
        assert_eq!(adm.check(tcp_src, &pkt(Kind::Data, 1, 40, 0), 100), Err(Rejection::UnexpectedKind));
        assert_eq!(adm.check(tcp_dst, &pkt(Kind::Data, MAX_AHEAD, 1040, 0), 0), Ok(()));
        assert_eq!(adm.check(tcp_dst, &pkt(Kind::Data, MAX_AHEAD + 1, 1040, 0), 0), Err(Rejection::BeyondWindow));
        assert_eq!(adm.check(tcp_dst, &pkt(Kind::TfrcData, 0, 1040, 0), 0), Err(Rejection::UnexpectedKind));
        let (tfrc_src, tfrc_dst) = (&a[1].0, &a[1].1);
        assert_eq!(adm.check(tfrc_src, &pkt(Kind::TfrcFeedback, 0, 40, 7), 6), Err(Rejection::EchoFromFuture));
        assert_eq!(adm.check(tfrc_dst, &pkt(Kind::TfrcData, 10, 1040, 0), 0), Ok(()));
        assert_eq!(adm.check(tfrc_dst, &pkt(Kind::TfrcData, 10 + MAX_AHEAD, 1040, 0), 0), Ok(()));
        assert_eq!(
            adm.check(tfrc_dst, &pkt(Kind::TfrcData, 11 + 2 * MAX_AHEAD, 1040, 0), 0),
            Err(Rejection::BeyondWindow)
        );
        let (udp_src, udp_dst) = (&a[2].0, &a[2].1);
        assert_eq!(adm.check(udp_dst, &pkt(Kind::Udp, 0, 28, 0), 0), Ok(()));
        assert_eq!(adm.check(udp_dst, &pkt(Kind::Udp, 0, 27, 0), 0), Err(Rejection::TooSmall));
        assert_eq!(adm.check(udp_src, &pkt(Kind::Udp, 0, 528, 0), 0), Err(Rejection::UnexpectedKind));
    }
}
