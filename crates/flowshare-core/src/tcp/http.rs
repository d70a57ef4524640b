//! HTTP/1.0 and HTTP/1.1 over one TCP connection (G. Hasegawa, "Congestion and Fairness Control
//! Mechanisms of TCP for the High-Speed Internet", PhD thesis, Osaka University, 2000,
//! chapter 5; ADR 0014).
//!
//! The connection's source is the server and its destination the client, so documents flow
//! forward (downstream) and everything the client says travels the reverse (upstream) path,
//! where an asymmetric link is slow. The client opens the connection: its SYN goes upstream,
//! the server's SYN-ACK downstream, and the request (which acknowledges the SYN-ACK) upstream;
//! only then may the server send the document. That is the 1.5 round trips of set-up of
//! Eq. (5.1), made of real packets that queue (and may be lost) on the links rather than added
//! as a constant. On a persistent (HTTP/1.1) connection each later document costs a request
//! alone, half a round trip. The client asks for the next document when it has received the
//! last byte of the previous one (no pipelining), as §5.2 assumes.
//!
//! The client's SYN and request travel upstream although their kinds (`Syn`, `Data`) travel
//! downstream on a server-initiated connection, so they are made with `dir` set to
//! [`Dir::Reverse`]; the server's SYN-ACK is set to [`Dir::Forward`]. A request is a `Data`
//! packet whose `seq` is the number of the document it asks for.

use crate::cc::RttEstimator;
use crate::packet::{Dir, Kind, Packet};
use crate::units::Time;

/// The documents of one connection, one after another in its sequence space: each starts on a
/// segment boundary and only its last segment may be short.
#[derive(Clone, Debug, PartialEq)]
pub struct Documents {
    /// One past each document's last segment.
    ends: Vec<u64>,
    /// Payload bytes of the documents up to and including each one.
    bytes: Vec<u64>,
    mss: u32,
}

impl Documents {
    /// Documents of `sizes` bytes (each at least 1) sent in segments of `mss` payload bytes.
    pub fn new(sizes: &[u64], mss: u32) -> Self {
        let (mut seg, mut byte) = (0, 0);
        let mut ends = Vec::with_capacity(sizes.len());
        let mut bytes = Vec::with_capacity(sizes.len());
        for &s in sizes {
            debug_assert!(s > 0, "a document holds at least one byte");
            seg += s.div_ceil(u64::from(mss));
            byte += s;
            ends.push(seg);
            bytes.push(byte);
        }
        Documents { ends, bytes, mss }
    }

    /// How many documents.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Segments of all the documents.
    pub fn total_segs(&self) -> u64 {
        self.ends.last().copied().unwrap_or(0)
    }

    /// First segment of document `i`.
    pub fn start(&self, i: usize) -> u64 {
        if i == 0 {
            0
        } else {
            self.ends[i - 1]
        }
    }

    /// One past the last segment of document `i`.
    pub fn end(&self, i: usize) -> u64 {
        self.ends[i]
    }

    /// Payload bytes of document `i`.
    pub fn size(&self, i: usize) -> u64 {
        self.bytes[i] - if i == 0 { 0 } else { self.bytes[i - 1] }
    }

    /// The document segment `seq` belongs to (`len()` past the end).
    fn index_of(&self, seq: u64) -> usize {
        self.ends.partition_point(|&e| e <= seq)
    }

    /// Payload bytes of segment `seq`.
    pub fn payload(&self, seq: u64) -> u32 {
        let i = self.index_of(seq);
        if i < self.len() && seq + 1 == self.ends[i] {
            (self.size(i) - (self.ends[i] - self.start(i) - 1) * u64::from(self.mss)) as u32
        } else {
            self.mss
        }
    }

    /// Payload bytes of the segments below `seq`.
    pub fn payload_below(&self, seq: u64) -> u64 {
        let i = self.index_of(seq).min(self.len());
        let before = if i == 0 { 0 } else { self.bytes[i - 1] };
        let start = self.start(i.min(self.len()));
        before + (seq - start) * u64::from(self.mss)
    }
}

/// The server's side: which documents it has been asked for, and the SYN-ACK it answered with.
#[derive(Clone, Debug)]
pub struct HttpServer {
    /// What the connection carries.
    pub docs: Documents,
    /// Documents requested so far: segments below `docs.end(requested − 1)` may be sent.
    pub requested: usize,
    /// Restart from the initial window for each later document (resolution `hasegawa:A35`).
    pub restart: bool,
    /// When the last SYN-ACK left, and whether one had left before it (Karn: no RTT sample).
    pub synack: Option<(Time, bool)>,
}

impl HttpServer {
    /// A server of `docs`; `restart` as [`HttpServer::restart`].
    pub fn new(docs: Documents, restart: bool) -> Self {
        HttpServer { docs, requested: 0, restart, synack: None }
    }

    /// One past the last segment it may send.
    #[inline]
    pub fn limit(&self) -> u64 {
        if self.requested == 0 {
            0
        } else {
            self.docs.end(self.requested - 1)
        }
    }

    /// Answer a client's SYN at `now` (again if it was retransmitted).
    pub fn synack(&mut self, conn: u32, size: u32, now: Time, syn: &Packet, out: &mut Vec<Packet>) {
        let again = self.synack.is_some() || syn.retx();
        let mut p = Packet::new(conn, Kind::SynAck, 0, size, now);
        p.dir = Dir::Forward;
        p.set_retx(again);
        out.push(p);
        self.synack = Some((now, again));
    }
}

/// Where the client is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ClientState {
    /// Before its SYN.
    Closed,
    /// SYN sent, waiting for the SYN-ACK.
    SynSent,
    /// Requested the current document, waiting for it.
    Fetching,
    /// Every document received.
    Done,
}

/// The client's side: it opens the connection, asks for each document in turn, and notes
/// when each was asked for and received.
#[derive(Clone, Debug)]
pub struct HttpClient {
    docs: Documents,
    conn: u32,
    /// Wire size of the SYN.
    syn_size: u32,
    /// Wire size of a request.
    request_size: u32,
    /// The client's own retransmission timer for its SYN and requests (a request is data on
    /// the client's half of the connection): the TCP's initial RTO until the SYN-ACK gives a
    /// sample, then Jacobson's estimate from the round trips of the SYN and of each request to
    /// its document's first segment (Karn's rule: none for a packet sent twice).
    rtt: RttEstimator,
    backoff: u32,
    /// When the packet being waited on (SYN or request) left, and whether it was sent again.
    sent: (Time, bool),
    state: ClientState,
    /// The document being fetched.
    current: usize,
    /// When the SYN or the request is sent again.
    pub deadline: Option<Time>,
    /// When each document was asked for: the SYN for a connection's first, the request
    /// otherwise.
    pub asked_at: Vec<Time>,
    /// When the first segment of each document arrived.
    pub first_byte_at: Vec<Time>,
    /// When the last byte of each document arrived.
    pub received_at: Vec<Time>,
    /// SYNs and requests sent, retransmissions included.
    pub packets_sent: u64,
}

impl HttpClient {
    /// A client of connection `conn` fetching `docs`, timing its retransmissions with `rtt`.
    pub fn new(conn: u32, docs: Documents, syn_size: u32, request_size: u32, rtt: RttEstimator) -> Self {
        HttpClient {
            docs,
            conn,
            syn_size,
            request_size,
            rtt,
            backoff: 1,
            sent: (0, false),
            state: ClientState::Closed,
            current: 0,
            deadline: None,
            asked_at: Vec::new(),
            first_byte_at: Vec::new(),
            received_at: Vec::new(),
            packets_sent: 0,
        }
    }

    /// The documents it fetches.
    pub fn docs(&self) -> &Documents {
        &self.docs
    }

    /// Open the connection: send the SYN upstream.
    pub fn start(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.state != ClientState::Closed {
            return;
        }
        self.state = ClientState::SynSent;
        self.asked_at.push(now);
        self.send_syn(now, false, out);
    }

    fn send_syn(&mut self, now: Time, retx: bool, out: &mut Vec<Packet>) {
        let mut p = Packet::new(self.conn, Kind::Syn, 0, self.syn_size, now);
        p.dir = Dir::Reverse;
        p.set_retx(retx);
        out.push(p);
        self.sent_now(now, retx);
    }

    /// A SYN or request left at `now`: time it.
    fn sent_now(&mut self, now: Time, retx: bool) {
        self.packets_sent += 1;
        self.sent = (now, retx);
        self.deadline = Some(now + self.rtt.timeout(self.backoff));
    }

    /// The answer to the SYN or request arrived at `now`: an RTT sample unless it was sent
    /// twice.
    fn answered(&mut self, now: Time) {
        if !self.sent.1 {
            self.rtt.sample(now - self.sent.0);
        }
        self.backoff = 1;
        self.deadline = None;
    }

    fn send_request(&mut self, now: Time, retx: bool, out: &mut Vec<Packet>) {
        self.send_request_echoing(now, (now, retx), retx, out);
    }

    /// Send the request for the current document; it echoes `echo` (a timestamp and whether
    /// it belongs to a retransmission) as the ACK it replaces would have; `again`: the request
    /// itself is sent again.
    fn send_request_echoing(&mut self, now: Time, echo: (Time, bool), again: bool, out: &mut Vec<Packet>) {
        let mut p = Packet::new(self.conn, Kind::Data, self.current as u64, self.request_size, echo.0);
        p.dir = Dir::Reverse;
        p.set_retx(echo.1);
        out.push(p);
        self.sent_now(now, again);
    }

    /// The server's SYN-ACK arrived: request the first document (the request acknowledges
    /// the SYN-ACK, as the third packet of the handshake).
    pub fn on_synack(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.state != ClientState::SynSent {
            return; // a duplicate: the request's own timer repairs a lost request
        }
        self.state = ClientState::Fetching;
        self.answered(now);
        self.send_request(now, false, out);
    }

    /// Data segment `seq` arrived and the next segment expected in order is now `rcv_nxt`:
    /// note the documents it completes and request the next one. The request carries the
    /// acknowledgement of the document's last segment, so it replaces the ACK the sink just
    /// pushed (from `acks` on in `out`): on a slow uplink a separate ACK ahead of it would
    /// delay it by a transmission time, and Eq. (5.1)'s half round trip assumes none.
    pub fn on_data(&mut self, now: Time, seq: u64, rcv_nxt: u64, acks: usize, out: &mut Vec<Packet>) {
        if self.state != ClientState::Fetching {
            return;
        }
        if self.first_byte_at.len() == self.current && seq >= self.docs.start(self.current) {
            // The server has the request: no need to send it again.
            self.first_byte_at.push(now);
            self.answered(now);
        }
        while self.current < self.docs.len() && rcv_nxt >= self.docs.end(self.current) {
            if self.first_byte_at.len() == self.current {
                self.first_byte_at.push(now);
            }
            self.received_at.push(now);
            self.current += 1;
            if self.current == self.docs.len() {
                self.state = ClientState::Done;
                self.deadline = None;
            } else {
                self.asked_at.push(now);
                let ack = out[acks..].iter().rposition(|p| p.kind == Kind::Ack).map(|i| out.remove(acks + i));
                // Without an ACK to stand for (a delayed ACK pending) it gives no RTT sample.
                self.send_request_echoing(now, ack.map_or((now, true), |a| (a.ts, a.retx())), false, out);
            }
        }
    }

    /// Its timer may have expired at `now`: send the SYN or the request again.
    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.deadline.is_none_or(|d| d > now) {
            return;
        }
        self.backoff = self.backoff.saturating_mul(2).min(64);
        self.sent.1 = true;
        match self.state {
            ClientState::SynSent => self.send_syn(now, true, out),
            ClientState::Fetching => self.send_request(now, true, out),
            ClientState::Closed | ClientState::Done => self.deadline = None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_lay_out_segments_and_payloads() {
        let d = Documents::new(&[2500, 1000, 1], 1000);
        assert_eq!((d.len(), d.total_segs()), (3, 5));
        assert_eq!((d.start(1), d.end(1), d.start(2), d.end(2)), (3, 4, 4, 5));
        let payloads: Vec<u32> = (0..5).map(|s| d.payload(s)).collect();
        assert_eq!(payloads, [1000, 1000, 500, 1000, 1]);
        let below: Vec<u64> = (0..=5).map(|s| d.payload_below(s)).collect();
        assert_eq!(below, [0, 1000, 2000, 2500, 3500, 3501]);
        assert_eq!((d.size(0), d.size(1), d.size(2)), (2500, 1000, 1));
    }

    #[test]
    fn the_client_asks_for_each_document_when_the_previous_one_is_in() {
        let rtt = RttEstimator::new(1_000, 1, 1, 1_000_000);
        let mut c = HttpClient::new(7, Documents::new(&[2000, 1000], 1000), 40, 40, rtt);
        let mut out = Vec::new();
        c.start(0, &mut out);
        assert_eq!((out[0].kind, out[0].dir), (Kind::Syn, Dir::Reverse));
        c.on_timer(1_000, &mut out);
        assert!(out[1].retx() && c.deadline == Some(3_000), "the SYN again, the timer backed off");
        c.on_synack(1_500, &mut out);
        assert_eq!((out[2].kind, out[2].dir, out[2].seq), (Kind::Data, Dir::Reverse, 0));
        c.on_data(2_000, 0, 1, 3, &mut out);
        assert_eq!((c.first_byte_at.clone(), c.deadline), (vec![2_000], None));
        // The sink's ACK of the document's last segment gives way to the request.
        out.push(Packet::new(7, Kind::Ack, 2, 40, 1_900));
        c.on_data(2_100, 1, 2, 3, &mut out);
        assert_eq!(c.received_at, [2_100]);
        assert_eq!((out.len(), out[3].kind, out[3].seq, out[3].ts), (4, Kind::Data, 1, 1_900));
        assert_eq!(c.asked_at, [0, 2_100]);
        c.on_data(2_600, 2, 3, 4, &mut out);
        assert_eq!((c.received_at.clone(), c.deadline, out.len()), (vec![2_100, 2_600], None, 4));
    }
}
