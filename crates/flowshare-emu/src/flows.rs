//! Which flow of a live run a packet belongs to, and what it is in the simulator's terms
//! (the `packet`, `seq` and `retx` columns of the event trace, `docs/traces.md`).
//!
//! A live run tells the emulator each flow's ports ([`FlowPorts`]): a flow of flowshare's live
//! transport is one UDP port pair carrying datagrams of `docs/wire-format.md`, read by the
//! endpoints' own decoder (a reliable transfer's block ACK is an `ack` of its cumulative
//! block); a kernel TCP flow is one TCP connection, side a's port to side b's.
//!
//! A kernel connection numbers bytes from a random initial sequence number (ISN); the trace
//! numbers segments from 0, as the simulator does. Offsets count from the byte after the ISN
//! (the first data byte), unwrapped past 2³² against the highest offset seen, and the segment
//! size is the connection's full-segment payload: the smaller MSS option of the SYN and
//! SYN-ACK, less the 12 bytes of the timestamp option when both carry it ([`DEFAULT_MSS`]
//! without options). A data segment's number is that of the segment-sized block holding its
//! last byte, `⌊(end − 1) / mss⌋`, so that a stream that starts with a short write still
//! numbers its full segments 1, 2, …; an acknowledgement's is `⌈ack / mss⌉`, the next segment
//! expected (every segment below it is acknowledged whole). A data segment is taken for a
//! retransmission when it starts below the highest byte the link has seen of its stream: the
//! emulator sees every packet the sender puts on the link, including those it then drops.

use flowshare_core::packet::Kind;
use flowshare_core::trace::packet_code;
use flowshare_live::wire::{self, Datagram};
use serde::Deserialize;
use std::collections::HashMap;
use std::net::Ipv4Addr;

use crate::EmuError;

/// The segment payload assumed when neither side of a connection sent an MSS option: the
/// default MSS of RFC 879 (J. Postel, "The TCP Maximum Segment Size and Related Topics", 1983).
pub const DEFAULT_MSS: u64 = 536;
/// Bytes of the TCP timestamp option as it is padded in every segment (RFC 7323, §3).
const TIMESTAMP_OPTION: u64 = 12;

const TCP: u8 = 6;
const UDP: u8 = 17;

/// What runs a flow, and so what its packets are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stack {
    /// The kernel's TCP: one connection from side a's port to side b's.
    Kernel,
    /// flowshare's live transport: UDP datagrams in the wire format, both ways between the
    /// two ports, with the flow's number as their connection id.
    Flowshare,
}

/// One flow of a live run and the ports its packets carry.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowPorts {
    /// The flow's index in the scenario (`flow` column).
    pub flow: u32,
    /// What runs it.
    pub stack: Stack,
    /// Its port on side a (the senders' side).
    pub port_a: u16,
    /// Its port on side b.
    pub port_b: u16,
}

/// A packet of a flow, as the event trace names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Classified {
    /// Flow index.
    pub flow: u32,
    /// Code of the `packet` column ([`flowshare_core::trace::PACKET_NAMES`]).
    pub packet: u8,
    /// Segment (or packet) number; for an acknowledgement the cumulative ACK.
    pub seq: u64,
    /// A retransmission (for a datagram's ACK: it echoes one).
    pub retx: bool,
}

/// One direction of a kernel connection's byte stream, as far as the link has seen it.
#[derive(Clone, Copy, Debug, Default)]
struct Stream {
    /// Its initial sequence number, once known.
    isn: Option<u32>,
    /// One past the highest byte offset seen.
    high: u64,
    /// A SYN (or SYN-ACK) was seen.
    syn: bool,
    /// The MSS option of that SYN.
    mss: Option<u16>,
    /// That SYN carried the timestamp option.
    timestamps: bool,
}

/// A kernel connection: side a's stream and side b's.
#[derive(Clone, Copy, Debug, Default)]
struct Tcp {
    a: Stream,
    b: Stream,
}

impl Tcp {
    /// Payload bytes of a full segment.
    fn mss(&self) -> u64 {
        let announced = match (self.a.mss, self.b.mss) {
            (Some(x), Some(y)) => u64::from(x.min(y)),
            (Some(x), None) | (None, Some(x)) => u64::from(x),
            (None, None) => DEFAULT_MSS,
        };
        let options = if self.a.timestamps && self.b.timestamps { TIMESTAMP_OPTION } else { 0 };
        announced.saturating_sub(options).max(1)
    }

    /// Classify a TCP segment (header and payload) sent by side a (`from_a`) or b.
    fn classify(&mut self, flow: u32, seg: &[u8], from_a: bool) -> Option<Classified> {
        if seg.len() < 20 {
            return None;
        }
        let offset = usize::from(seg[12] >> 4) * 4;
        if offset < 20 || offset > seg.len() {
            return None;
        }
        let flags = seg[13];
        let (syn, ack_flag) = (flags & 0x02 != 0, flags & 0x10 != 0);
        let seq = u32::from_be_bytes([seg[4], seg[5], seg[6], seg[7]]);
        let ack = u32::from_be_bytes([seg[8], seg[9], seg[10], seg[11]]);
        let payload = (seg.len() - offset) as u64;
        let mss = self.mss();
        let (me, other) = if from_a { (&mut self.a, &mut self.b) } else { (&mut self.b, &mut self.a) };
        if syn {
            let retx = me.syn;
            me.syn = true;
            me.isn = Some(seq);
            (me.mss, me.timestamps) = options(&seg[20..offset]);
            let kind = if ack_flag { Kind::SynAck } else { Kind::Syn };
            return Some(Classified { flow, packet: packet_code(kind), seq: 0, retx });
        }
        if payload > 0 {
            let isn = *me.isn.get_or_insert(seq.wrapping_sub(1));
            let start = unwrap(me.high, seq.wrapping_sub(isn).wrapping_sub(1));
            let end = start + payload;
            let retx = start < me.high;
            me.high = me.high.max(end);
            return Some(Classified { flow, packet: packet_code(Kind::Data), seq: (end - 1) / mss, retx });
        }
        // No payload: a pure ACK (or a FIN or RST), numbered by what it acknowledges of the
        // other side's stream.
        let acked = match (ack_flag, other.isn) {
            (true, Some(isn)) => unwrap(other.high, ack.wrapping_sub(isn).wrapping_sub(1)).div_ceil(mss),
            _ => 0,
        };
        Some(Classified { flow, packet: packet_code(Kind::Ack), seq: acked, retx: false })
    }
}

/// The 64-bit offset nearest to `reference` whose low 32 bits are `low`.
fn unwrap(reference: u64, low: u32) -> u64 {
    let diff = i64::from(low.wrapping_sub(reference as u32) as i32);
    reference.saturating_add_signed(diff)
}

/// The MSS option and whether the timestamp option is present, from a SYN's options.
fn options(mut opts: &[u8]) -> (Option<u16>, bool) {
    let (mut mss, mut timestamps) = (None, false);
    while let Some(&kind) = opts.first() {
        match kind {
            0 => break,
            1 => opts = &opts[1..],
            _ => {
                let Some(&len) = opts.get(1) else { break };
                let len = usize::from(len);
                if len < 2 || len > opts.len() {
                    break;
                }
                match (kind, len) {
                    (2, 4) => mss = Some(u16::from_be_bytes([opts[2], opts[3]])),
                    (8, 10) => timestamps = true,
                    _ => {}
                }
                opts = &opts[len..];
            }
        }
    }
    (mss, timestamps)
}

/// The flows of a live run, by protocol and ports, with what their packets have shown so far.
#[derive(Clone, Debug)]
pub struct FlowMap {
    addr_a: [u8; 4],
    addr_b: [u8; 4],
    /// (protocol, port a, port b) to the index in `flows`.
    index: HashMap<(u8, u16, u16), usize>,
    flows: Vec<(FlowPorts, Tcp)>,
}

impl FlowMap {
    /// The map of `flows` between addresses `addr_a` and `addr_b`, for a scenario of
    /// `n_flows` flows. Two flows on the same ports, or a flow the scenario does not have,
    /// are a configuration error naming the entry.
    pub fn new(addr_a: Ipv4Addr, addr_b: Ipv4Addr, flows: &[FlowPorts], n_flows: usize) -> Result<FlowMap, EmuError> {
        let mut index = HashMap::new();
        for (i, f) in flows.iter().enumerate() {
            if f.flow as usize >= n_flows {
                return Err(EmuError::config(
                    format!("events.flows[{i}].flow"),
                    format!("flow {} does not exist; the scenario has {n_flows} flows", f.flow),
                ));
            }
            let proto = match f.stack {
                Stack::Kernel => TCP,
                Stack::Flowshare => UDP,
            };
            if let Some(j) = index.insert((proto, f.port_a, f.port_b), i) {
                return Err(EmuError::config(
                    format!("events.flows[{i}]"),
                    format!("uses the ports of events.flows[{j}] ({} to {})", f.port_a, f.port_b),
                ));
            }
        }
        let flows = flows.iter().map(|f| (f.clone(), Tcp::default())).collect();
        Ok(FlowMap { addr_a: addr_a.octets(), addr_b: addr_b.octets(), index, flows })
    }

    /// The flow and trace names of IPv4 `packet` (as the link model accepted it: a whole
    /// header, a total length within the bytes read), or `None` for a packet of no flow: another
    /// address pair, protocol or port, a fragment, a datagram the live transport's decoder
    /// refuses or that names another connection.
    pub fn classify(&mut self, packet: &[u8]) -> Option<Classified> {
        if packet.len() < 20 {
            return None;
        }
        let ihl = usize::from(packet[0] & 0x0f) * 4;
        let total = usize::from(u16::from_be_bytes([packet[2], packet[3]]));
        if ihl < 20 || total < ihl || total > packet.len() {
            return None;
        }
        // More fragments, or not the first: the transport header is not whole here.
        if u16::from_be_bytes([packet[6], packet[7]]) & 0x3fff != 0 {
            return None;
        }
        let (src, dst) = (&packet[12..16], &packet[16..20]);
        let from_a = if src == self.addr_a && dst == self.addr_b {
            true
        } else if src == self.addr_b && dst == self.addr_a {
            false
        } else {
            return None;
        };
        let body = &packet[ihl..total];
        if body.len() < 4 {
            return None;
        }
        let sport = u16::from_be_bytes([body[0], body[1]]);
        let dport = u16::from_be_bytes([body[2], body[3]]);
        let (port_a, port_b) = if from_a { (sport, dport) } else { (dport, sport) };
        let proto = packet[9];
        let &i = self.index.get(&(proto, port_a, port_b))?;
        let (ports, tcp) = &mut self.flows[i];
        match ports.stack {
            Stack::Kernel => tcp.classify(ports.flow, body, from_a),
            Stack::Flowshare => {
                let d = wire::decode(body.get(8..)?).ok()?;
                if d.conn_id() != ports.flow {
                    return None;
                }
                let (packet, seq, retx) = match &d {
                    Datagram::Packet(p) => (packet_code(p.packet.kind), p.packet.seq, p.packet.retx()),
                    // A reliable transfer's acknowledgement: its cumulative block number.
                    Datagram::BlockAck { ack, .. } => (packet_code(Kind::Ack), ack.cum, false),
                };
                Some(Classified { flow: ports.flow, packet, seq, retx })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flowshare_core::packet::Packet;

    const A: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 1);
    const B: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 2);

    fn code(kind: Kind) -> u8 {
        packet_code(kind)
    }

    /// An IPv4 packet from `src` to `dst` of protocol `proto` carrying `body`.
    fn ip(src: Ipv4Addr, dst: Ipv4Addr, proto: u8, body: &[u8]) -> Vec<u8> {
        let total = 20 + body.len();
        let mut p = vec![0u8; 20];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[6] = 0x40; // DF
        p[8] = 64;
        p[9] = proto;
        p[12..16].copy_from_slice(&src.octets());
        p[16..20].copy_from_slice(&dst.octets());
        let sum = crate::ipv4::header_checksum(&p);
        p[10..12].copy_from_slice(&sum.to_be_bytes());
        p.extend_from_slice(body);
        p
    }

    /// A TCP segment: ports, seq, ack, flags, options (a multiple of 4 bytes), payload length.
    fn tcp(sport: u16, dport: u16, seq: u32, ack: u32, flags: u8, opts: &[u8], payload: usize) -> Vec<u8> {
        let offset = 20 + opts.len();
        let mut s = vec![0u8; offset + payload];
        s[0..2].copy_from_slice(&sport.to_be_bytes());
        s[2..4].copy_from_slice(&dport.to_be_bytes());
        s[4..8].copy_from_slice(&seq.to_be_bytes());
        s[8..12].copy_from_slice(&ack.to_be_bytes());
        s[12] = ((offset / 4) as u8) << 4;
        s[13] = flags;
        s[20..offset].copy_from_slice(opts);
        s
    }

    const SYN: u8 = 0x02;
    const ACK: u8 = 0x10;
    const PSH_ACK: u8 = 0x18;
    /// MSS 1460, SACK permitted, timestamps, NOP, window scale: what Linux puts in a SYN.
    const SYN_OPTS: [u8; 20] = [2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7];

    fn kernel_map() -> FlowMap {
        let flows = [
            FlowPorts { flow: 0, stack: Stack::Kernel, port_a: 6000, port_b: 5001 },
            FlowPorts { flow: 1, stack: Stack::Kernel, port_a: 6001, port_b: 5001 },
            FlowPorts { flow: 2, stack: Stack::Flowshare, port_a: 6002, port_b: 6002 },
        ];
        FlowMap::new(A, B, &flows, 3).unwrap()
    }

    /// The handshake of flow 0 with ISNs `isn_a` and `isn_b`.
    fn handshake(m: &mut FlowMap, isn_a: u32, isn_b: u32) {
        let syn = m.classify(&ip(A, B, TCP, &tcp(6000, 5001, isn_a, 0, SYN, &SYN_OPTS, 0))).unwrap();
        assert_eq!(syn, Classified { flow: 0, packet: code(Kind::Syn), seq: 0, retx: false });
        let synack =
            m.classify(&ip(B, A, TCP, &tcp(5001, 6000, isn_b, isn_a.wrapping_add(1), SYN | ACK, &SYN_OPTS, 0)));
        assert_eq!(synack.unwrap().packet, code(Kind::SynAck));
    }

    fn data(m: &mut FlowMap, isn_a: u32, offset: u32, len: usize) -> Classified {
        let seq = isn_a.wrapping_add(1).wrapping_add(offset);
        m.classify(&ip(A, B, TCP, &tcp(6000, 5001, seq, 1, PSH_ACK, &[1, 1, 8, 10, 0, 0, 0, 0, 0, 0, 0, 0], len)))
            .unwrap()
    }

    fn ack(m: &mut FlowMap, isn_a: u32, isn_b: u32, offset: u32) -> Classified {
        let a = isn_a.wrapping_add(1).wrapping_add(offset);
        m.classify(&ip(B, A, TCP, &tcp(5001, 6000, isn_b.wrapping_add(1), a, ACK, &[], 0))).unwrap()
    }

    #[test]
    fn kernel_segments_are_numbered_from_the_isn_in_full_segments() {
        let (isn_a, isn_b) = (1_000_000, 77);
        let mut m = kernel_map();
        handshake(&mut m, isn_a, isn_b);
        // 1460 announced, timestamps on both sides: 1448 bytes a segment. A 4-byte write
        // first, then full segments: numbered 0, 1, 2 by their last byte.
        assert_eq!(data(&mut m, isn_a, 0, 4).seq, 0);
        let first = data(&mut m, isn_a, 4, 1448);
        assert_eq!((first.packet, first.seq, first.retx), (code(Kind::Data), 1, false));
        assert_eq!(data(&mut m, isn_a, 4 + 1448, 1448).seq, 2);
        // ACKs: the next segment expected, from the start of side a's stream.
        assert_eq!(ack(&mut m, isn_a, isn_b, 4), Classified { flow: 0, packet: code(Kind::Ack), seq: 1, retx: false });
        assert_eq!(ack(&mut m, isn_a, isn_b, 4 + 1448).seq, 2);
        assert_eq!(ack(&mut m, isn_a, isn_b, 0).seq, 0);
        // Resending segment 1: below the highest byte seen, so a retransmission.
        let again = data(&mut m, isn_a, 4, 1448);
        assert_eq!((again.seq, again.retx), (1, true));
        // New data again is not.
        assert!(!data(&mut m, isn_a, 4 + 2 * 1448, 1448).retx);
    }

    #[test]
    fn a_resent_syn_is_a_retransmission_and_mss_follows_the_options() {
        let mut m = kernel_map();
        let bare = tcp(6001, 5001, 5, 0, SYN, &[2, 4, 0x03, 0xe8], 0); // MSS 1000, no timestamps
        assert!(!m.classify(&ip(A, B, TCP, &bare)).unwrap().retx);
        assert!(m.classify(&ip(A, B, TCP, &bare)).unwrap().retx);
        let synack = tcp(5001, 6001, 9, 6, SYN | ACK, &SYN_OPTS, 0);
        m.classify(&ip(B, A, TCP, &synack)).unwrap();
        // min(1000, 1460), no timestamp deduction (only one side offered them).
        let seg = m.classify(&ip(A, B, TCP, &tcp(6001, 5001, 6 + 1000, 10, ACK, &[], 1000))).unwrap();
        assert_eq!((seg.flow, seg.seq), (1, 1));
    }

    #[test]
    fn sequence_numbers_wrap_past_two_to_the_32() {
        // The ISN just below 2³²: offsets keep growing as the 32-bit numbers wrap.
        let (isn_a, isn_b) = (u32::MAX - 2000, u32::MAX);
        let mut m = kernel_map();
        handshake(&mut m, isn_a, isn_b);
        let mut offset = 0u32;
        for k in 0..4 {
            let d = data(&mut m, isn_a, offset, 1448);
            assert_eq!((d.seq, d.retx), (k, false), "segment {k}");
            offset += 1448;
        }
        // The ACK field wrapped as well (and isn_b + 1 wraps to 0).
        assert_eq!(ack(&mut m, isn_a, isn_b, offset).seq, 4);
        assert_eq!(
            data(&mut m, isn_a, 1448, 1448),
            Classified { flow: 0, packet: code(Kind::Data), seq: 1, retx: true }
        );
        // Far past 4 GiB of stream: segment numbers go on.
        let mut s = Tcp::default();
        s.a.isn = Some(0);
        s.a.high = 5 << 32;
        let seg = tcp(6000, 5001, 1, 0, ACK, &[], 536);
        let c = s.classify(0, &seg, true).unwrap();
        assert_eq!(c.seq, ((5u64 << 32) + 536 - 1) / DEFAULT_MSS);
        assert!(!c.retx);
    }

    #[test]
    fn packets_of_no_flow_are_not_classified() {
        let mut m = kernel_map();
        let seg = tcp(6000, 5001, 1, 0, SYN, &[], 0);
        // Another address pair, another port, another protocol.
        assert_eq!(m.classify(&ip(A, Ipv4Addr::new(10, 77, 0, 3), TCP, &seg)), None);
        assert_eq!(m.classify(&ip(A, B, TCP, &tcp(6009, 5001, 1, 0, SYN, &[], 0))), None);
        assert_eq!(m.classify(&ip(A, B, UDP, &seg)), None);
        // ICMP (an echo request).
        assert_eq!(m.classify(&ip(A, B, 1, &[8, 0, 0, 0, 0, 1, 0, 1])), None);
        // A fragment; a TCP header cut short.
        let mut frag = ip(A, B, TCP, &seg);
        frag[6] = 0x20; // more fragments
        assert_eq!(m.classify(&frag), None);
        assert_eq!(m.classify(&ip(A, B, TCP, &seg[..12])), None);
    }

    fn udp(sport: u16, dport: u16, datagram: &[u8]) -> Vec<u8> {
        let mut u = vec![0u8; 8];
        u[0..2].copy_from_slice(&sport.to_be_bytes());
        u[2..4].copy_from_slice(&dport.to_be_bytes());
        u[4..6].copy_from_slice(&((8 + datagram.len()) as u16).to_be_bytes());
        u.extend_from_slice(datagram);
        u
    }

    fn datagram(p: &Packet, conn: u32) -> Vec<u8> {
        let mut out = Vec::new();
        wire::encode(p, conn, 0, &mut out).unwrap();
        out
    }

    #[test]
    fn live_transport_datagrams_are_read_from_their_header() {
        let mut m = kernel_map();
        let mut p = Packet::new(2, Kind::Data, 41, 1500, 7);
        p.flags |= flowshare_core::packet::flags::RETX;
        let c = m.classify(&ip(A, B, UDP, &udp(6002, 6002, &datagram(&p, 2)))).unwrap();
        assert_eq!(c, Classified { flow: 2, packet: code(Kind::Data), seq: 41, retx: true });
        let q = Packet::new(2, Kind::TfrcFeedback, 3, 92, 7);
        let c = m.classify(&ip(B, A, UDP, &udp(6002, 6002, &datagram(&q, 2)))).unwrap();
        assert_eq!((c.packet, c.seq, c.retx), (code(Kind::TfrcFeedback), 3, false));
        // Another connection id on the flow's ports, a datagram the decoder refuses, and a
        // datagram on no flow's ports.
        assert_eq!(m.classify(&ip(A, B, UDP, &udp(6002, 6002, &datagram(&p, 7)))), None);
        // A reliable transfer's block ACK: an ACK of its cumulative block.
        let mut block_ack = Vec::new();
        wire::encode_block_ack(&wire::BlockAck::new(9, 0, 60), 2, &mut block_ack).unwrap();
        let c = m.classify(&ip(B, A, UDP, &udp(6002, 6002, &block_ack))).unwrap();
        assert_eq!(c, Classified { flow: 2, packet: code(Kind::Ack), seq: 9, retx: false });
        let mut bad = datagram(&p, 2);
        bad[0] = b'X';
        assert_eq!(m.classify(&ip(A, B, UDP, &udp(6002, 6002, &bad))), None);
        assert_eq!(m.classify(&ip(A, B, UDP, &udp(6003, 6003, &datagram(&p, 2)))), None);
    }

    #[test]
    fn the_map_refuses_shared_ports_and_unknown_flows() {
        let two = [
            FlowPorts { flow: 0, stack: Stack::Kernel, port_a: 6000, port_b: 5001 },
            FlowPorts { flow: 1, stack: Stack::Kernel, port_a: 6000, port_b: 5001 },
        ];
        let e = FlowMap::new(A, B, &two, 2).unwrap_err().to_string();
        assert_eq!(e, "events.flows[1]: uses the ports of events.flows[0] (6000 to 5001)");
        // The same ports for UDP and TCP are two flows.
        let mixed = [
            FlowPorts { flow: 0, stack: Stack::Kernel, port_a: 6000, port_b: 6000 },
            FlowPorts { flow: 1, stack: Stack::Flowshare, port_a: 6000, port_b: 6000 },
        ];
        assert!(FlowMap::new(A, B, &mixed, 2).is_ok());
        let e = FlowMap::new(A, B, &two[..1], 0).unwrap_err().to_string();
        assert_eq!(e, "events.flows[0].flow: flow 0 does not exist; the scenario has 0 flows");
    }
}
