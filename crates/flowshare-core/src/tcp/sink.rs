//! The receiving end: cumulative ACKs, optional delayed ACKs and SACK blocks.

use super::http::HttpClient;
use super::TcpConfig;
use crate::packet::{ecn, Kind, Packet, MAX_SACK_BLOCKS};
use crate::units::Time;
use std::collections::VecDeque;

/// A TCP sink in the style of ns-2's `TCPSink`/`DelAckSink`, with SACK (RFC 2018) when the
/// connection uses SACK recovery.
#[derive(Debug)]
pub struct Sink {
    conn: u32,
    mss: u32,
    ack_size: u32,
    sack: bool,
    /// Bytes an ACK grows by per SACK block it carries.
    sack_block_bytes: u32,
    delayed_ack: Option<(u32, Time)>,
    /// Segments in the transfer, for sizing the last one; `None` for bulk data.
    total_segs: Option<u64>,
    last_payload: u32,
    /// Segment 0 is a SYN stand-in without payload.
    syn_segment: bool,
    /// Next segment expected in order.
    pub rcv_nxt: u64,
    /// `ooo[i]`: segment `rcv_nxt + i` has arrived (index 0 is always false).
    ooo: VecDeque<bool>,
    /// The first SACK blocks of earlier ACKs as they were reported, newest first.
    reported: [(u64, u64); MAX_SACK_BLOCKS],
    /// (A byte, which keeps a sink small enough to sit unboxed in an endpoint slot.)
    n_reported: u8,
    /// In-order segments not yet acknowledged, and the timestamp to echo for them.
    pending: u32,
    pending_echo: (Time, bool),
    /// When the delayed ACK is due.
    pub delack_deadline: Option<Time>,
    /// Payload bytes delivered in order to the application.
    pub bytes_delivered: u64,
    /// ACKs sent.
    pub acks_sent: u64,
    /// Echo congestion marks (RFC 3168).
    ecn: bool,
    /// A CE mark arrived and no CWR since: every ACK carries ECE. With `dctcp`, DCTCP.CE of
    /// RFC 8257 §3.2: whether the last segment that arrived was marked.
    ece: bool,
    /// Echo per segment (DCTCP, RFC 8257 §3.2).
    dctcp: bool,
    /// Data segments that arrived marked CE.
    pub ce_received: u64,
    /// An HTTP client (`tcp::http`): it opens the connection and asks for each document.
    http: Option<Box<HttpClient>>,
}

impl Sink {
    /// A sink for connection `conn`; `total_segs` and `last_payload` describe a finite transfer.
    pub fn new(conn: u32, cfg: &TcpConfig, total_segs: Option<u64>, last_payload: u32) -> Self {
        Sink {
            conn,
            mss: cfg.mss,
            ack_size: cfg.ack_size,
            sack: cfg.recovery == super::Recovery::Sack,
            sack_block_bytes: cfg.sack_block_bytes,
            delayed_ack: cfg.delayed_ack,
            total_segs: total_segs.map(|t| t + u64::from(cfg.syn_segment)),
            syn_segment: cfg.syn_segment,
            last_payload,
            rcv_nxt: 0,
            ooo: VecDeque::new(),
            reported: [(0, 0); MAX_SACK_BLOCKS],
            n_reported: 0,
            pending: 0,
            pending_echo: (0, false),
            delack_deadline: None,
            bytes_delivered: 0,
            acks_sent: 0,
            ecn: cfg.ecn,
            ece: false,
            dctcp: cfg.dctcp,
            ce_received: 0,
            http: None,
        }
    }

    /// Fetch documents as an HTTP client (before the connection starts); the transfer becomes
    /// the client's documents.
    pub fn fetch_http(&mut self, client: HttpClient) {
        self.total_segs = Some(client.docs().total_segs());
        self.http = Some(Box::new(client));
    }

    /// The HTTP client, if this sink is one.
    pub fn http(&self) -> Option<&HttpClient> {
        self.http.as_deref()
    }

    /// The connection starts at `now`: an HTTP client sends its SYN; a plain sink waits.
    pub fn start(&mut self, now: Time, out: &mut Vec<Packet>) {
        if let Some(c) = self.http.as_deref_mut() {
            c.start(now, out);
        }
    }

    fn payload_of_range(&self, from: u64, to: u64) -> u64 {
        if let Some(c) = &self.http {
            return c.docs().payload_below(to) - c.docs().payload_below(from);
        }
        let mut bytes = (to - from) * u64::from(self.mss);
        if self.syn_segment && from == 0 && to > 0 {
            bytes -= u64::from(self.mss); // the SYN stand-in carries no payload
        }
        if let Some(total) = self.total_segs {
            if from < total && to >= total {
                bytes -= u64::from(self.mss - self.last_payload);
            }
        }
        bytes
    }

    /// A packet arrived from the sender (a data segment or a SYN).
    #[inline]
    pub fn on_packet(&mut self, now: Time, p: &Packet, out: &mut Vec<Packet>) {
        match p.kind {
            Kind::Data => {
                let acks = out.len();
                self.on_data(now, p, out);
                if let Some(c) = self.http.as_deref_mut() {
                    c.on_data(now, p.seq, self.rcv_nxt, acks, out);
                }
            }
            Kind::SynAck => {
                if let Some(c) = self.http.as_deref_mut() {
                    c.on_synack(now, out);
                }
            }
            _ => {
                debug_assert_eq!(p.kind, Kind::Syn, "a TCP sink receives data");
                self.on_syn(now, p, out);
            }
        }
    }

    /// When the sink next needs to run: its delayed-ACK timer, or an HTTP client's timer.
    #[inline]
    pub fn next_wake(&self) -> Option<Time> {
        match self.http.as_deref().and_then(|c| c.deadline) {
            None => self.delack_deadline,
            Some(h) => Some(self.delack_deadline.map_or(h, |d| d.min(h))),
        }
    }

    /// Answer a SYN with a SYN-ACK.
    pub fn on_syn(&mut self, now: Time, syn: &Packet, out: &mut Vec<Packet>) {
        let _ = now;
        let mut p = Packet::new(self.conn, Kind::SynAck, 0, self.ack_size, syn.ts);
        p.set_retx(syn.retx());
        out.push(p);
    }

    /// A data segment arrived. ACKs to send are pushed to `out`.
    pub fn on_data(&mut self, now: Time, seg: &Packet, out: &mut Vec<Packet>) {
        if self.dctcp {
            self.dctcp_ce(seg.ecn & ecn::CE != 0, out);
        } else if self.ecn && seg.ecn & (ecn::CE | ecn::CWR) != 0 {
            self.note_ecn(seg.ecn);
        }
        let seq = seg.seq;
        let echo = (seg.ts, seg.retx());
        if seq < self.rcv_nxt {
            // Duplicate: acknowledge at once so the sender learns where we are.
            self.send_ack(echo, None, out);
            return;
        }
        let offset = (seq - self.rcv_nxt) as usize;
        if offset > 0 {
            // Out of order: store, and send an immediate (duplicate) ACK (RFC 5681 §4.2).
            if self.ooo.len() <= offset {
                self.ooo.resize(offset + 1, false);
            }
            self.ooo[offset] = true;
            self.send_ack(echo, Some(seq), out);
            return;
        }
        // In order: deliver it and whatever it makes contiguous.
        let filled_gap = self.ooo.len() > 1;
        let before = self.rcv_nxt;
        self.rcv_nxt += 1;
        if !self.ooo.is_empty() {
            self.ooo.pop_front();
            while self.ooo.front() == Some(&true) {
                self.ooo.pop_front();
                self.rcv_nxt += 1;
            }
        }
        self.bytes_delivered += self.payload_of_range(before, self.rcv_nxt);
        match self.delayed_ack {
            Some((count, timeout)) if !filled_gap => {
                if self.pending == 0 {
                    self.pending_echo = echo;
                }
                self.pending += 1;
                if self.pending >= count {
                    self.send_ack(self.pending_echo, None, out);
                } else if self.delack_deadline.is_none() {
                    self.delack_deadline = Some(now + timeout);
                }
            }
            _ => self.send_ack(echo, None, out),
        }
    }

    /// The delayed-ACK timer fired.
    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Packet>) {
        if let Some(d) = self.delack_deadline {
            if d <= now && self.pending > 0 {
                self.send_ack(self.pending_echo, None, out);
            }
        }
        if let Some(c) = self.http.as_deref_mut() {
            c.on_timer(now, out);
        }
    }

    /// RFC 3168 §6.1.3: echo from the first CE until a segment with CWR arrives (a segment
    /// with both starts the echo again).
    #[cold]
    fn note_ecn(&mut self, bits: u8) {
        if bits & ecn::CWR != 0 {
            self.ece = false;
        }
        if bits & ecn::CE != 0 {
            self.ece = true;
            self.ce_received += 1;
        }
    }

    /// RFC 8257 §3.2 (and the DCTCP paper's two-state machine): when a segment's CE mark
    /// differs from DCTCP.CE, the segments held for a delayed ACK are acknowledged at once
    /// with the old state's ECE, then DCTCP.CE takes the new value; every ACK echoes DCTCP.CE.
    /// Without delayed ACKs each ACK echoes its own segment's mark.
    #[cold]
    fn dctcp_ce(&mut self, ce: bool, out: &mut Vec<Packet>) {
        if ce {
            self.ce_received += 1;
        }
        if ce != self.ece {
            if self.pending > 0 {
                self.send_ack(self.pending_echo, None, out);
            }
            self.ece = ce;
        }
    }

    fn received(&self, seq: u64) -> bool {
        seq < self.rcv_nxt || self.ooo.get((seq - self.rcv_nxt) as usize) == Some(&true)
    }

    /// RFC 2018 §4 as ns-2's `Sacker` builds it: first the block holding the segment that
    /// `arrived` out of order (none for one in order or a duplicate), then the first blocks of
    /// earlier ACKs as they were reported, newest first, leaving out those that block (or, for
    /// an arrival in order, the cumulative ACK) covers; at most three. Once every segment seen
    /// is acknowledged cumulatively, the history is forgotten.
    fn add_sack_blocks(&mut self, p: &mut Packet, arrived: Option<u64>) {
        if self.ooo.is_empty() {
            self.n_reported = 0;
            return;
        }
        let first = arrived.map(|s| {
            // A segment extending the last block reported: everything from that block's start
            // up to it has arrived, so the walk down starts there.
            let mut lo = match self.reported[..usize::from(self.n_reported)].first() {
                Some(&(a, b)) if b == s => a.max(self.rcv_nxt).min(s),
                _ => s,
            };
            while lo > self.rcv_nxt && self.received(lo - 1) {
                lo -= 1;
            }
            let mut hi = s + 1;
            while self.received(hi) {
                hi += 1;
            }
            p.push_sack_block(lo, hi);
            (lo, hi)
        });
        let cover = first.unwrap_or((0, self.rcv_nxt));
        let mut k = 0;
        while usize::from(p.n_sack) < MAX_SACK_BLOCKS && k < usize::from(self.n_reported) {
            let (a, b) = self.reported[k];
            // Covered, or wholly acknowledged since (possible with delayed ACKs).
            if (cover.0 <= a && b <= cover.1) || b <= self.rcv_nxt {
                self.reported.copy_within(k + 1..usize::from(self.n_reported), k);
                self.n_reported -= 1;
                continue;
            }
            p.push_sack_block(a, b);
            k += 1;
        }
        if let Some(block) = first {
            let n = usize::from(self.n_reported).min(MAX_SACK_BLOCKS - 1);
            self.reported.copy_within(0..n, 1);
            self.reported[0] = block;
            self.n_reported = (n + 1) as u8;
        }
    }

    fn send_ack(&mut self, echo: (Time, bool), arrived: Option<u64>, out: &mut Vec<Packet>) {
        let mut p = Packet::new(self.conn, Kind::Ack, self.rcv_nxt, self.ack_size, echo.0);
        p.set_retx(echo.1);
        if self.ece {
            p.ecn = ecn::ECE;
        }
        if self.sack {
            self.add_sack_blocks(&mut p, arrived);
            if self.sack_block_bytes > 0 {
                p.size += u32::from(p.n_sack) * self.sack_block_bytes;
            }
        }
        out.push(p);
        self.acks_sent += 1;
        self.pending = 0;
        self.delack_deadline = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::Recovery;

    fn cfg(recovery: Recovery, delayed_ack: Option<(u32, Time)>) -> TcpConfig {
        TcpConfig {
            recovery,
            mss: 1000,
            header: 40,
            ack_size: 40,
            initial_window: 3.0,
            initial_ssthresh: f64::INFINITY,
            max_ssthresh: None,
            slow_start_at_ssthresh: false,
            rwnd: u64::MAX,
            max_burst: 0,
            delayed_ack,
            handshake: false,
            syn_segment: false,
            rto_initial: 1_000_000_000,
            rto_min: 1_000_000_000,
            rto_max: 60_000_000_000,
            timer_tick: 1_000_000,
            max_backoff: 64,
            rto_enabled: true,
            misrx: None,
            force_timeout: None,
            ecn: false,
            dctcp: false,
            send_jitter: 0,
            limited_transmit: true,
            byte_counting: false,
            sack_recovery: crate::tcp::SackRecovery::Rfc6675,
            min_cwnd_half: false,
            ns2_vegas: None,
            recover: crate::tcp::RecoverRule::Careful,
            rto_restart: crate::tcp::RtoRestart::NewData,
            rtt_timing: crate::tcp::RttTiming::EveryAck,
            dupack_burst: 0,
            sack_block_bytes: 0,
            decrease: crate::tcp::Decrease::Flight,
        }
    }

    fn data(seq: u64) -> Packet {
        Packet::new(0, Kind::Data, seq, 1040, seq * 10)
    }

    #[test]
    fn an_arrival_next_to_the_last_one_still_leaves_room_for_three_blocks() {
        // RFC 2018 §4 (and ns-2's Sacker): after the newest block come the first blocks of
        // earlier ACKs, so two arrivals in one block do not crowd out an older block.
        let mut s = Sink::new(0, &cfg(Recovery::Sack, None), None, 1000);
        let mut out = Vec::new();
        for seq in [0, 2, 4, 6, 7] {
            s.on_data(0, &data(seq), &mut out);
        }
        let blocks: Vec<_> = out.last().unwrap().sack_blocks().collect();
        assert_eq!(blocks, vec![(6, 8), (4, 5), (2, 3)]);
    }

    #[test]
    fn cumulative_ack_with_a_hole_and_its_repair() {
        let mut s = Sink::new(0, &cfg(Recovery::Sack, None), None, 1000);
        let mut out = Vec::new();
        for seq in [0, 1, 3, 5, 6] {
            s.on_data(0, &data(seq), &mut out);
        }
        let acks: Vec<u64> = out.iter().map(|p| p.seq).collect();
        assert_eq!(acks, vec![1, 2, 2, 2, 2]);
        // The last ACK reports [5,7) first (newest), then [3,4).
        let last = out.last().unwrap();
        assert_eq!(last.sack_blocks().collect::<Vec<_>>(), vec![(5, 7), (3, 4)]);
        out.clear();
        s.on_data(0, &data(2), &mut out);
        assert_eq!(out[0].seq, 4);
        assert_eq!(out[0].sack_blocks().collect::<Vec<_>>(), vec![(5, 7)]);
        s.on_data(0, &data(4), &mut out);
        assert_eq!(out[1].seq, 7);
        assert_eq!(out[1].n_sack, 0);
        assert_eq!(s.bytes_delivered, 7000);
    }

    /// ns-2.35's Sack1 sink adds 8 bytes per SACK block to the ACK (`append_ack`).
    #[test]
    fn sack_blocks_add_their_bytes_to_the_ack() {
        for (per_block, sizes) in [(0, [40, 40, 40]), (8, [40, 48, 56])] {
            let c = TcpConfig { sack_block_bytes: per_block, ..cfg(Recovery::Sack, None) };
            let mut s = Sink::new(0, &c, None, 1000);
            let mut out = Vec::new();
            for seq in [0, 2, 4] {
                s.on_data(0, &data(seq), &mut out);
            }
            assert_eq!(out.iter().map(|p| p.size).collect::<Vec<_>>(), sizes);
        }
    }

    #[test]
    fn delayed_ack_every_second_segment_or_on_timeout() {
        let mut s = Sink::new(0, &cfg(Recovery::Newreno, Some((2, 100_000_000))), None, 1000);
        let mut out = Vec::new();
        s.on_data(0, &data(0), &mut out);
        assert!(out.is_empty());
        assert_eq!(s.delack_deadline, Some(100_000_000));
        s.on_data(5, &data(1), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].seq, 2);
        assert_eq!(out[0].ts, 0, "echoes the first segment of the batch");
        s.on_data(10, &data(2), &mut out);
        s.on_timer(100_000_010, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].seq, 3);
    }

    /// RFC 8257 §3.2 with an ACK every 2 segments and marks on segments 2, 3 and 6 of 0..8:
    /// a change of state acknowledges what is held at once, with the old state's echo.
    #[test]
    fn dctcp_echo_follows_the_two_state_machine() {
        let c = TcpConfig { ecn: true, dctcp: true, ..cfg(Recovery::Newreno, Some((2, 100_000_000))) };
        let mut s = Sink::new(0, &c, None, 1000);
        let mut out = Vec::new();
        let marked = [false, false, true, true, false, false, true, false];
        for (seq, &ce) in marked.iter().enumerate() {
            let mut p = data(seq as u64);
            p.ecn = ecn::ECT | if ce { ecn::CE } else { 0 };
            s.on_data(0, &p, &mut out);
        }
        let acks: Vec<(u64, bool)> = out.iter().map(|p| (p.seq, p.ecn & ecn::ECE != 0)).collect();
        // 0,1 → ACK 2 (no ECE, by count); 2,3 → ACK 4 (ECE); 4 changes the state with
        // nothing held; 4,5 → ACK 6 (no ECE); 6 changes it (nothing held); 7 changes it back
        // with 6 held → ACK 7 with ECE at once, then 7 waits for the timer.
        assert_eq!(acks, vec![(2, false), (4, true), (6, false), (7, true)]);
        assert_eq!(s.ce_received, 3);
        s.on_timer(100_000_000, &mut out);
        assert_eq!((out[4].seq, out[4].ecn & ecn::ECE != 0), (8, false));
        // Without delayed ACKs each ACK echoes its own segment's mark.
        let c = TcpConfig { ecn: true, dctcp: true, ..cfg(Recovery::Newreno, None) };
        let mut s = Sink::new(0, &c, None, 1000);
        let mut out = Vec::new();
        for (seq, &ce) in marked.iter().enumerate() {
            let mut p = data(seq as u64);
            p.ecn = ecn::ECT | if ce { ecn::CE } else { 0 };
            s.on_data(0, &p, &mut out);
        }
        let echoes: Vec<bool> = out.iter().map(|p| p.ecn & ecn::ECE != 0).collect();
        assert_eq!(echoes, marked.to_vec());
    }

    #[test]
    fn last_segment_of_a_finite_transfer_is_short() {
        let mut s = Sink::new(0, &cfg(Recovery::Newreno, None), Some(3), 500);
        let mut out = Vec::new();
        for seq in 0..3 {
            s.on_data(0, &data(seq), &mut out);
        }
        assert_eq!(s.bytes_delivered, 2500);
    }
}
