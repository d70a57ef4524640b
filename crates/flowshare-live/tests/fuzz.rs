//! 100,000 malformed datagrams from a seeded generator into a live TCP sink, and as many into a
//! live TFRC receiver, on 127.0.0.1: each must survive, deliver none of them, and count every
//! one under the reason the wire format gives.
//!
//! Every candidate is decoded locally first: one that decodes (a bit flip can land in a field
//! where any value is valid, such as a sequence number) is not sent, so the expected counts are
//! exact. Datagrams are sent in small batches and the receiver is stepped until it has counted
//! each batch, so that no datagram is lost to a full socket buffer.

use flowshare_core::packet::{Kind, Packet};
use flowshare_core::scenario::from_toml;
use flowshare_live::wire::{self, BlockAck, WireError, MAX_BLOCK, MAX_DATAGRAM};
use flowshare_live::{EndpointConfig, LiveEndpoint, MonotonicClock, Side, Transport, UdpTransport};
use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::net::UdpSocket;
use std::time::{Duration, Instant};

const SCENARIO: &str = r#"
[simulation]
duration = "60s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "20ms", queue = { limit = 50 } }
access = { rate = "100Mbps", delay = "1ms" }
[[flows]]
name = "tcp"
[flows.tcp]
recovery = "sack"
[[flows]]
name = "tfrc"
transport = "tfrc"
"#;

const DATAGRAMS: u64 = 100_000;

/// Well-formed datagrams of every kind, for connection 0: the core's kinds (indices 0 to 7),
/// TFRC data carrying a block (8) and a block ACK with three ranges (9).
fn valid() -> Vec<Vec<u8>> {
    let mut data = Packet::new(0, Kind::Data, 5, 1040, 1_000);
    data.set_word(0, 40_000_000);
    let mut ack = Packet::new(0, Kind::Ack, 10, 52, 1_000);
    ack.push_sack_block(12, 14);
    ack.push_sack_block(16, 20);
    ack.push_sack_block(22, 23);
    let mut tfrc = Packet::new(0, Kind::TfrcData, 3, 1040, 1_000);
    tfrc.set_word(0, 40_000_000);
    let mut fb = Packet::new(0, Kind::TfrcFeedback, 2, 40, 1_000);
    fb.set_word(0, 125_000.0f64.to_bits());
    fb.set_word(1, 0.01f64.to_bits());
    fb.set_word(2, 1.5f64.to_bits());
    let packets = [
        data,
        ack,
        Packet::new(0, Kind::Ack, 10, 40, 1_000),
        Packet::new(0, Kind::Syn, 0, 40, 1_000),
        Packet::new(0, Kind::SynAck, 0, 40, 1_000),
        Packet::new(0, Kind::Udp, 7, 228, 1_000),
        tfrc,
        fb,
    ];
    let mut out: Vec<Vec<u8>> = packets
        .iter()
        .map(|p| {
            let mut b = Vec::new();
            wire::encode(p, 0, if p.kind == Kind::TfrcFeedback { 100 } else { 0 }, &mut b).unwrap();
            b
        })
        .collect();
    let mut block = tfrc;
    wire::set_block(&mut block, 77);
    let mut ack = BlockAck::new(40, 1_000, 116);
    ack.push_range(50, 60);
    ack.push_range(42, 45);
    ack.push_range(70, 71);
    let (mut b, mut a) = (Vec::new(), Vec::new());
    wire::encode(&block, 0, 0, &mut b).unwrap();
    wire::encode_block_ack(&ack, 0, &mut a).unwrap();
    out.extend([b, a]);
    out
}

struct Gen {
    rng: Xoshiro256PlusPlus,
    valid: Vec<Vec<u8>>,
}

impl Gen {
    fn below(&mut self, n: u64) -> u64 {
        self.rng.next_u64() % n
    }

    fn pick(&mut self) -> Vec<u8> {
        let i = self.below(self.valid.len() as u64) as usize;
        self.valid[i].clone()
    }

    fn put_f64(b: &mut [u8], at: usize, v: f64) {
        b[at..at + 8].copy_from_slice(&v.to_bits().to_be_bytes());
    }

    /// One candidate, of one of ten families.
    fn candidate(&mut self) -> Vec<u8> {
        match self.below(10) {
            // Truncation of a valid datagram.
            0 => {
                let mut b = self.pick();
                let n = self.below(b.len() as u64) as usize;
                b.truncate(n);
                b
            }
            // Random bytes.
            1 => {
                let n = self.below(256) as usize;
                let mut b = vec![0; n];
                self.rng.fill_bytes(&mut b);
                b
            }
            // Bit flips of a valid datagram.
            2 => {
                let mut b = self.pick();
                for _ in 0..1 + self.below(3) {
                    let at = self.below(b.len() as u64) as usize;
                    b[at] ^= 1 << self.below(8);
                }
                b
            }
            // Wrong magic or version.
            3 => {
                let mut b = self.pick();
                let at = self.below(3) as usize;
                b[at] = b[at].wrapping_add(1 + self.below(255) as u8);
                b
            }
            // Wrong length: bytes added or removed after the header.
            4 => {
                let mut b = self.pick();
                if self.below(2) == 0 {
                    let extra = 1 + self.below(64) as usize;
                    b.extend(std::iter::repeat_n(0u8, extra));
                } else {
                    let cut = 1 + self.below((b.len() - 32) as u64 + 1) as usize;
                    b.truncate(b.len().saturating_sub(cut).max(32));
                }
                b
            }
            // NaN, infinite, negative or too-large floats in a report.
            5 => {
                let mut b = self.valid[7].clone();
                let bad = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0, -1e-300, 1.5, 2e12, 1e300];
                let v = bad[self.below(bad.len() as u64) as usize];
                let field = 32 + 8 * self.below(3) as usize;
                Self::put_f64(&mut b, field, v);
                b
            }
            // Bad SACK blocks or counts.
            6 => {
                let mut b = self.valid[1].clone();
                match self.below(4) {
                    0 => b[32] = 4 + self.below(252) as u8,
                    1 => b[40..48].copy_from_slice(&(self.below(10)).to_be_bytes()), // below the cumulative ACK
                    2 => {
                        let start = u64::from_be_bytes(b[56..64].try_into().unwrap());
                        b[64..72].copy_from_slice(&(start - self.below(2)).to_be_bytes());
                        // empty or reversed
                    }
                    _ => b[40..48].copy_from_slice(&(10 + (1u64 << 33)).to_be_bytes()), // beyond 2^32
                }
                b
            }
            // A reliable transfer's fields: block flags, block numbers, range counts, ranges.
            8 => {
                let (mut data, mut ack) = (self.valid[8].clone(), self.valid[9].clone());
                let beyond = (MAX_BLOCK + 1 + self.below(1 << 20)).to_be_bytes();
                match self.below(7) {
                    0 => {
                        // The block flag on another kind, or any header bit on a block ACK.
                        let i = self.below(8) as usize;
                        let mut b = self.valid[i].clone();
                        b[4] |= 8;
                        if self.below(2) == 0 {
                            let (at, bit) = (4 + self.below(3) as usize, self.below(4));
                            ack[at] |= 1 << bit;
                            b = ack;
                        }
                        b
                    }
                    1 => {
                        data[40..48].copy_from_slice(&beyond);
                        data
                    }
                    2 => {
                        ack[16..24].copy_from_slice(&beyond);
                        ack
                    }
                    3 => {
                        ack[32] = 9 + self.below(247) as u8;
                        ack
                    }
                    4 => {
                        let (at, v) = (33 + self.below(7) as usize, 1 + self.below(255) as u8);
                        ack[at] = v;
                        ack
                    }
                    5 => {
                        // A left edge at or below the cumulative ACK, or inside another range.
                        let range = self.below(3) as usize;
                        let which = self.below(4) as usize;
                        let left: u64 = [40, 41, 55, 44][which];
                        ack[40 + 16 * range..48 + 16 * range].copy_from_slice(&u64::to_be_bytes(left));
                        ack
                    }
                    _ => {
                        // An empty, reversed or adjacent range, or one far beyond.
                        let which = self.below(4) as usize;
                        let right: u64 = [50, 49, 42, 1 << 40][which];
                        ack[48..56].copy_from_slice(&u64::to_be_bytes(right));
                        ack
                    }
                }
            }
            // Times beyond 10^9 s.
            7 => {
                let mut b = self.pick();
                let t = 1_000_000_000_000_000_001 + self.below(1 << 40);
                b[24..32].copy_from_slice(&t.to_be_bytes());
                b
            }
            // Oversized: a valid header with its size field and length disagreeing, or noise,
            // up to the largest UDP payload.
            _ => {
                let n = 1024 + self.below((MAX_DATAGRAM - 1024 + 1) as u64) as usize;
                if self.below(2) == 0 {
                    let mut b = self.pick();
                    b.resize(n, 0);
                    b
                } else {
                    let mut b = vec![0; n];
                    self.rng.fill_bytes(&mut b);
                    b
                }
            }
        }
    }
}

#[test]
fn a_live_tcp_sink_counts_every_malformed_datagram() {
    fuzz(0, 0x5EED_F022);
}

#[test]
fn a_live_tfrc_receiver_counts_every_malformed_datagram() {
    fuzz(1, 0x5EED_F023);
}

/// Send [`DATAGRAMS`] malformed datagrams, drawn with `seed`, to the receiver of flow `flow`.
fn fuzz(flow: usize, seed: u64) {
    let scenario = from_toml(SCENARIO).unwrap();
    let fuzzer = UdpSocket::bind("127.0.0.1:0").unwrap();
    let transport = UdpTransport::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let sink_addr = transport.local_addr().unwrap();
    let mut cfg = EndpointConfig::new(
        scenario,
        flow,
        Side::Destination,
        sink_addr,
        fuzzer.local_addr().unwrap(),
        Duration::from_secs(60),
    );
    // The generator writes connection id 0.
    cfg.conn_id = 0;
    let mut sink = LiveEndpoint::new(&cfg, transport, MonotonicClock::start()).unwrap();
    let mut gen = Gen { rng: Xoshiro256PlusPlus::seed_from_u64(seed), valid: valid() };
    for b in &gen.valid {
        assert!(wire::decode(b).is_ok(), "the seeds are valid");
    }

    let mut expected = [0u64; WireError::ALL.len()];
    let (mut sent, mut skipped_valid) = (0u64, 0u64);
    let started = Instant::now();
    while sent < DATAGRAMS {
        // A batch: at most 32 datagrams and 32 KB, or one large datagram alone.
        let mut batch_bytes = 0;
        let mut batch = 0;
        while sent < DATAGRAMS && batch < 32 {
            let b = gen.candidate();
            let Err(e) = wire::decode(&b) else {
                skipped_valid += 1;
                continue;
            };
            if b.len() > 16 * 1024 && batch > 0 {
                // A large datagram goes alone: this one is dropped unsent (only what is sent
                // is counted) and the batch ends.
                break;
            }
            fuzzer.send_to(&b, sink_addr).unwrap();
            expected[e.index()] += 1;
            sent += 1;
            batch += 1;
            batch_bytes += b.len();
            if b.len() > 16 * 1024 || batch_bytes > 32 * 1024 {
                break;
            }
        }
        let waiting = Instant::now();
        while sink.counters().malformed_total() < sent {
            sink.transport_mut().wait(Some(Duration::from_millis(10))).unwrap();
            sink.step().unwrap();
            assert!(
                waiting.elapsed() < Duration::from_secs(5),
                "the sink counted {} of {sent} datagrams",
                sink.counters().malformed_total()
            );
        }
    }
    let c = sink.counters();
    assert_eq!(c.malformed_total(), DATAGRAMS);
    for e in WireError::ALL {
        assert_eq!(c.malformed(e), expected[e.index()], "{}", e.name());
    }
    assert_eq!((c.datagrams_received, c.foreign_peer, c.foreign_connection), (0, 0, 0));
    assert!(c.rejected.iter().all(|&n| n == 0));
    assert_eq!(c.datagrams_sent, 0, "a receiver answers nothing malformed");
    // Every reason was hit, but too long: IPv4 cannot carry more than 65,507 bytes of UDP.
    for e in WireError::ALL.into_iter().filter(|&e| e != WireError::TooLong) {
        assert!(expected[e.index()] > 0, "no datagram was refused for {}", e.name());
    }
    eprintln!(
        "{DATAGRAMS} malformed datagrams counted in {:.2} s ({skipped_valid} valid candidates not sent): {:?}",
        started.elapsed().as_secs_f64(),
        WireError::ALL.iter().map(|e| (e.name(), expected[e.index()])).collect::<Vec<_>>()
    );
}

/// A sink also survives well-formed datagrams that no sender would send: other connections,
/// other peers, kinds for the other side, sequence numbers far ahead.
#[test]
fn a_live_sink_drops_foreign_and_inadmissible_datagrams() {
    let scenario = from_toml(SCENARIO).unwrap();
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    let stranger = UdpSocket::bind("127.0.0.1:0").unwrap();
    let transport = UdpTransport::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let sink_addr = transport.local_addr().unwrap();
    let cfg = EndpointConfig::new(
        scenario,
        0,
        Side::Destination,
        sink_addr,
        peer.local_addr().unwrap(),
        Duration::from_secs(60),
    );
    let mut sink = LiveEndpoint::new(&cfg, transport, MonotonicClock::start()).unwrap();
    let send = |from: &UdpSocket, p: &Packet, conn: u32| {
        let mut b = Vec::new();
        wire::encode(p, conn, 0, &mut b).unwrap();
        from.send_to(&b, sink_addr).unwrap();
    };
    let data = |seq| Packet::new(0, Kind::Data, seq, 1040, 1_000);
    send(&stranger, &data(0), 0);
    send(&peer, &data(0), 1);
    send(&peer, &Packet::new(0, Kind::Ack, 0, 40, 0), 0);
    send(&peer, &data(u64::MAX - 5), 0);
    send(&peer, &data(0), 0);
    send(&peer, &data(1), 0);
    let t = Instant::now();
    while sink.counters().datagrams_received < 2 {
        sink.transport_mut().wait(Some(Duration::from_millis(10))).unwrap();
        sink.step().unwrap();
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", sink.counters());
    }
    let c = sink.counters();
    assert_eq!((c.foreign_peer, c.foreign_connection), (1, 1));
    assert_eq!(c.rejected, [1, 1, 0, 0, 0, 0], "one unexpected kind, one beyond the window");
    assert_eq!(c.datagrams_sent, 2, "two data segments, two ACKs");
    let flowshare_core::agent::Agent::TcpSink(k) = sink.agent() else { panic!("a sink") };
    assert_eq!(k.rcv_nxt, 2);
}
