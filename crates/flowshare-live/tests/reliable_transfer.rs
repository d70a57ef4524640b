//! Reliable MulTFRC transfers end to end through the event loop: over a virtual link that
//! loses and reorders datagrams in both directions (deterministic, clocks the test moves), and
//! over 127.0.0.1 with real sockets. Every block must reach the receiving application once and
//! in order, and both ends must report the transfer complete; datagrams a reliable endpoint
//! cannot take are counted and dropped.

mod common;

use common::{InFlight, Link, Net, MS};
use flowshare_core::packet::Kind;
use flowshare_core::scenario::from_toml;
use flowshare_core::units::Time;
use flowshare_live::wire::{self, BlockAck, Datagram};
use flowshare_live::{run, AgentReport, EndpointConfig, EndpointReport, LiveEndpoint, ReliableReport, Side};
use flowshare_live::{MonotonicClock, Transport, UdpTransport};
use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

const SIZE: u64 = 300_000;

fn scenario(size: &str) -> String {
    format!(
        r#"
[simulation]
duration = "60s"
seed = 3
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "10Mbps", delay = "20ms", queue = {{ limit = 50 }} }}
access = {{ rate = "100Mbps", delay = "1ms" }}
[[flows]]
name = "multfrc"
transport = "tfrc"
{size}
[flows.tfrc]
equation = "multfrc"
n = 2
packet_size = "1000B"
header = "40B"
"#
    )
}

/// A link with a one-way delay, a uniform jitter (which reorders) and Bernoulli loss, the same
/// in both directions, drawn from a seeded generator.
struct Lossy {
    rng: Xoshiro256PlusPlus,
    loss: f64,
    delay: Time,
    jitter: Time,
    /// Data packets lost, block ACKs lost.
    lost_data: u64,
    lost_acks: u64,
    /// The data packets in sending order: when each left, its block, its retransmission flag.
    data: Vec<(Time, Option<u64>, bool)>,
    /// The blocks that reached the receiver.
    arrived: BTreeSet<u64>,
    block_acks: u64,
}

impl Lossy {
    fn new(seed: u64, loss: f64, delay: Time, jitter: Time) -> Self {
        Lossy {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            loss,
            delay,
            jitter,
            lost_data: 0,
            lost_acks: 0,
            data: Vec::new(),
            arrived: BTreeSet::new(),
            block_acks: 0,
        }
    }

    fn unit(&mut self) -> f64 {
        (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

impl Link for Lossy {
    fn carry(&mut self, now: Time, bytes: &[u8]) -> Option<Time> {
        match wire::decode(bytes).expect("the endpoint writes valid datagrams") {
            Datagram::Packet(d) if d.packet.kind == Kind::TfrcData => {
                self.data.push((now, wire::block_of(&d.packet), d.packet.retx()));
                if self.unit() < self.loss {
                    self.lost_data += 1;
                    return None;
                }
            }
            Datagram::BlockAck { .. } => {
                self.block_acks += 1;
                if self.unit() < self.loss {
                    self.lost_acks += 1;
                    return None;
                }
            }
            Datagram::Packet(_) => {}
        }
        Some(now + self.delay + (self.unit() * self.jitter as f64) as Time)
    }

    fn arrived(&mut self, _now: Time, bytes: &[u8]) {
        if let Ok(Datagram::Packet(d)) = wire::decode(bytes) {
            self.arrived.extend(wire::block_of(&d.packet));
        }
    }
}

type Ep = common::Ep<Lossy>;
const SKEW: Time = 3_000 * MS;

/// Both ends of the scenario's flow over a link losing `loss` of the packets each way, run
/// until `end` ns of network time. After each step of the receiver, what it delivered since
/// the step before must be the blocks following those, each once, and must have reached it.
fn run_virtual(loss: f64, jitter: Time, seed: u64, end: Time) -> (Rc<Net<Lossy>>, Ep, Ep) {
    let s = from_toml(&scenario(&format!("size = \"{SIZE}B\""))).unwrap();
    let addrs = ("10.0.0.1:6000".parse().unwrap(), "10.0.0.2:6000".parse().unwrap());
    let net = Net::new(Lossy::new(seed, loss, 10 * MS, jitter));
    let mut delivered = 0;
    let watch = |_: &Ep, dst: &Ep| {
        let r = dst.reliable_receiver().expect("a reliable receiver");
        let upto = r.cumulative();
        assert!(upto >= delivered, "delivered in order");
        assert_eq!(r.stats.delivered_blocks, upto, "each block delivered once");
        let link = net.link.borrow();
        let missing: Vec<u64> = (delivered..upto).filter(|b| !link.arrived.contains(b)).collect();
        assert!(missing.is_empty(), "delivered without reaching the receiver: {missing:?}");
        delivered = upto;
    };
    let (src, dst) = common::run_flow(s, addrs, &net, SKEW, end, watch);
    assert_eq!(delivered, SIZE.div_ceil(1_000), "every block delivered");
    (net, src, dst)
}

fn halves(src: &EndpointReport, dst: &EndpointReport) -> (ReliableReport, ReliableReport) {
    (src.reliable.clone().expect("a reliable sender"), dst.reliable.clone().expect("a reliable receiver"))
}

#[test]
fn a_reliable_multfrc_transfer_over_a_lossy_reordering_link_delivers_every_byte_once_in_order() {
    let end = 20_000 * MS;
    for seed in [1, 2] {
        let (net, mut src, mut dst) = run_virtual(0.03, 3 * MS, seed, end);
        let (rs, rd) = (src.report(end), dst.report(end + SKEW));
        eprintln!("{}\n{}", serde_json::to_string(&rs).unwrap(), serde_json::to_string(&rd).unwrap());
        let (tx, rx) = halves(&rs, &rd);
        let ReliableReport::Sender {
            blocks, blocks_sent, retransmits, losses, completion_s: tx_done, acked_bytes, ..
        } = tx
        else {
            panic!("{tx:?}")
        };
        let ReliableReport::Receiver {
            delivered_blocks,
            delivered_bytes,
            duplicates,
            completion_s: rx_done,
            out_of_order,
            ..
        } = rx
        else {
            panic!("{rx:?}")
        };
        assert_eq!(blocks, 300);
        // Every block delivered to the application once, in order, after it reached the
        // receiver: `run_virtual` watched each delivery.
        assert_eq!((delivered_blocks, delivered_bytes, acked_bytes), (blocks, SIZE, SIZE));
        assert_eq!(rd.goodput_bytes, SIZE);
        // Both ends completed; the receiver first (the final ACK still had to travel), and
        // within a few seconds of a 20 ms path.
        let (tx_done, rx_done) = (tx_done.expect("the sender completed"), rx_done.expect("the receiver completed"));
        // The receiver counts from the first packet's arrival, the sender until the final ACK's:
        // two one-way delays apart at least.
        assert!(rx_done + 0.02 <= tx_done && tx_done < 10.0, "receiver {rx_done} s, sender {tx_done} s");
        // The link lost data, the sender repaired it: no fewer retransmissions than blocks lost,
        // and not many more.
        let data = net.link.borrow().data.clone();
        let (lost_data, lost_acks) = (net.link.borrow().lost_data, net.link.borrow().lost_acks);
        let with_block = data.iter().filter(|d| d.1.is_some()).count() as u64;
        assert_eq!(with_block, blocks_sent + retransmits);
        assert_eq!(blocks_sent, blocks);
        // A block's first transmission is unmarked, every later one carries the retransmission
        // flag; a packet without a block is never marked.
        let mut seen = BTreeSet::new();
        for &(at, block, retx) in &data {
            let again = block.is_some_and(|b| !seen.insert(b));
            assert_eq!(retx, again, "block {block:?} sent at {at} ns");
        }
        assert_eq!(data.iter().filter(|d| d.2).count() as u64, retransmits);
        assert!(lost_data > 0 && lost_acks > 0 && out_of_order > 0);
        assert!(losses > 0 && retransmits >= losses, "{losses} lost, {retransmits} re-sent");
        assert!(retransmits <= 2 * lost_data + 10, "{retransmits} re-sent, {lost_data} lost");
        assert!(duplicates <= retransmits);
        // The sender stopped its agent on completion: no data packet left after it (the
        // sender's clock is the network's).
        let done_at = src.reliable_sender().unwrap().completed_at().expect("the sender completed");
        let last = data.iter().map(|d| d.0).max().unwrap();
        assert!(last <= done_at, "data sent at {last} ns, completed at {done_at} ns");
        let AgentReport::TfrcSender { packets_sent, .. } = rs.agent else { panic!("a TFRC sender") };
        assert_eq!(packets_sent as usize, data.len());
        assert_eq!(src.next_deadline(), None, "the sender's agent is stopped");
        for r in [&rs, &rd] {
            assert_eq!(r.malformed_total, 0);
            assert!(r.rejected.values().all(|&n| n == 0), "{r:?}");
        }
        let a: SocketAddr = "10.0.0.1:6000".parse().unwrap();
        assert_eq!(rs.datagrams_received, rd.datagrams_sent - lost_acks - net.in_flight_to(a));
        let json = serde_json::to_string(&rs).unwrap();
        assert!(json.contains("\"reliable\":{\"half\":\"sender\""), "{json}");
    }
}

#[test]
fn without_a_size_a_tfrc_flow_stays_unreliable() {
    let s = from_toml(&scenario("")).unwrap();
    let a = "127.0.0.1:1".parse().unwrap();
    let cfg = EndpointConfig::new(s, 0, Side::Source, a, a, Duration::from_secs(1));
    assert_eq!(cfg.transfer().unwrap(), None);
    let s = from_toml(&scenario("size = \"2500B\"")).unwrap();
    let cfg = EndpointConfig::new(s, 0, Side::Destination, a, a, Duration::from_secs(1));
    let t = cfg.transfer().unwrap().unwrap();
    assert_eq!((t.size, t.block_bytes, t.blocks()), (2_500, 1_000, 3));
}

/// Hand `datagrams` from `peer` to endpoint `ep` at `to`, and let it take them all.
fn feed(ep: &mut Ep, net: &Net<Lossy>, peer: SocketAddr, to: SocketAddr, datagrams: &[Vec<u8>]) {
    for bytes in datagrams {
        net.flying.borrow_mut().push(InFlight { at: net.now.get(), to, from: peer, bytes: bytes.clone() });
    }
    ep.step().unwrap();
    assert!(net.flying.borrow().iter().all(|d| d.to != to), "all taken");
}

/// A link that loses nothing and delays by 1 ms.
fn quiet_net() -> Rc<Net<Lossy>> {
    Net::new(Lossy::new(0, 0.0, MS, 0))
}

fn block_data(seq: u64, block: Option<u64>) -> Vec<u8> {
    let mut p = flowshare_core::packet::Packet::new(0, Kind::TfrcData, seq, 1040, 0);
    if let Some(b) = block {
        wire::set_block(&mut p, b);
    }
    let mut out = Vec::new();
    wire::encode(&p, 0, 0, &mut out).unwrap();
    out
}

fn block_ack(cum: u64, ranges: &[(u64, u64)], echo: Time) -> Vec<u8> {
    let mut a = BlockAck::new(cum, echo, 68);
    for &(l, r) in ranges {
        a.push_range(l, r);
    }
    let mut out = Vec::new();
    wire::encode_block_ack(&a, 0, &mut out).unwrap();
    out
}

#[test]
fn inadmissible_blocks_and_block_acks_are_counted_and_dropped() {
    let (a, b): (SocketAddr, SocketAddr) = ("10.0.0.1:6000".parse().unwrap(), "10.0.0.2:6000".parse().unwrap());
    let rejected = |ep: &Ep, name: &str| {
        ep.counters().rejected[flowshare_live::admit::Rejection::ALL.iter().position(|r| r.name() == name).unwrap()]
    };
    let endpoint = |size: &str, side: Side, net: &Rc<Net<Lossy>>| {
        let s = from_toml(&scenario(size)).unwrap();
        let (me, peer) = if side == Side::Source { (a, b) } else { (b, a) };
        let mut cfg = EndpointConfig::new(s, 0, side, me, peer, Duration::from_secs(60));
        cfg.conn_id = 0;
        common::endpoint(&cfg, net, 0)
    };

    // A reliable receiver of 3 blocks.
    let net = quiet_net();
    net.now.set(10 * MS);
    let mut rx = endpoint("size = \"2500B\"", Side::Destination, &net);
    feed(
        &mut rx,
        &net,
        a,
        b,
        &[
            block_ack(0, &[], 0),                // a block ACK at a receiver
            block_data(0, Some(3)),              // beyond the transfer's 3 blocks
            block_data(1, Some(u64::MAX >> 16)), // far beyond it
            block_data(2, Some(1)),
            block_data(3, None), // a packet without a block: TFRC only
        ],
    );
    assert_eq!(rejected(&rx, "unexpected_kind"), 1);
    assert_eq!(rejected(&rx, "beyond_transfer"), 2);
    assert_eq!(rx.counters().datagrams_received, 2);
    let r = rx.reliable_receiver().unwrap();
    assert_eq!((r.cumulative(), r.stats.arrivals, r.stats.out_of_order), (0, 1, 1));
    // Block 1 arrived above the hole at 0: a block ACK went back at once.
    let acks: Vec<BlockAck> = net
        .flying
        .borrow()
        .iter()
        .filter_map(|d| match wire::decode(&d.bytes) {
            Ok(Datagram::BlockAck { ack, .. }) => Some(ack),
            _ => None,
        })
        .collect();
    let last = acks.last().expect("a block ACK");
    assert_eq!((last.cum, last.ranges()), (0, &[(1, 2)][..]));

    // An unreliable TFRC receiver and sender.
    let net = quiet_net();
    let mut plain = endpoint("", Side::Destination, &net);
    feed(&mut plain, &net, a, b, &[block_data(0, Some(0)), block_data(1, None)]);
    assert_eq!((rejected(&plain, "not_reliable"), plain.counters().datagrams_received), (1, 1));
    let net = quiet_net();
    let mut plain_tx = endpoint("", Side::Source, &net);
    feed(&mut plain_tx, &net, b, a, &[block_ack(0, &[], 0)]);
    assert_eq!(rejected(&plain_tx, "not_reliable"), 1);

    // A reliable sender of 300 blocks that has sent a few.
    let net = quiet_net();
    let mut tx = endpoint(&format!("size = \"{SIZE}B\""), Side::Source, &net);
    tx.step().unwrap();
    net.now.set(5 * MS);
    let sent = tx.reliable_sender().unwrap().stats.blocks_sent;
    assert!(sent >= 1, "the first packet went at the start");
    feed(
        &mut tx,
        &net,
        b,
        a,
        &[
            block_ack(0, &[(sent + 1, 301)], 0), // beyond the transfer
            block_ack(sent + 1, &[], 0),         // beyond what was sent
            block_ack(0, &[], 6 * MS),           // an echo from the future
            block_data(0, Some(0)),              // data at a sender
            block_ack(1, &[], 0),
        ],
    );
    assert_eq!(rejected(&tx, "beyond_transfer"), 1);
    assert_eq!(rejected(&tx, "beyond_window"), 1);
    assert_eq!(rejected(&tx, "echo_from_future"), 1);
    assert_eq!(rejected(&tx, "unexpected_kind"), 1);
    assert_eq!(tx.counters().datagrams_received, 1);
    assert_eq!(tx.reliable_sender().unwrap().cumulative(), 1);
}

#[test]
fn a_reliable_transfer_over_loopback_completes_and_stops_its_sender() {
    let s = from_toml(&scenario("size = \"200KB\"")).unwrap();
    let any = "127.0.0.1:0".parse().unwrap();
    let (ta, tb) = (UdpTransport::bind(any).unwrap(), UdpTransport::bind(any).unwrap());
    let (addr_a, addr_b) = (ta.local_addr().unwrap(), tb.local_addr().unwrap());
    let d = Duration::from_millis(1_500);
    let src_cfg = EndpointConfig::new(s.clone(), 0, Side::Source, addr_a, addr_b, d);
    let dst_cfg = EndpointConfig::new(s, 0, Side::Destination, addr_b, addr_a, d);
    let stop = AtomicBool::new(false);
    // The source runs until its transfer completes, notes what its agent had sent, and runs on
    // until the end.
    let run_src = || {
        let mut ep = LiveEndpoint::new(&src_cfg, ta, MonotonicClock::start()).unwrap();
        let end = d.as_nanos() as Time;
        let mut sent_at_completion = None;
        while sent_at_completion.is_none() && ep.now() < end {
            let next = ep.step().unwrap();
            if ep.reliable_sender().unwrap().completed_at().is_some() {
                let AgentReport::TfrcSender { packets_sent, .. } = ep.report(ep.now()).agent else {
                    panic!("a TFRC sender")
                };
                sent_at_completion = Some(packets_sent);
            }
            let wait = next.unwrap_or(end).min(end).saturating_sub(ep.now());
            ep.transport_mut().wait(Some(Duration::from_nanos(wait))).unwrap();
        }
        (run(&mut ep, d, &stop).unwrap(), sent_at_completion)
    };
    let ((rs, sent_at_completion), rd) = std::thread::scope(|sc| {
        let dst = sc.spawn(|| run(&mut LiveEndpoint::new(&dst_cfg, tb, MonotonicClock::start()).unwrap(), d, &stop));
        let src = sc.spawn(run_src);
        (src.join().unwrap(), dst.join().unwrap().unwrap())
    });
    eprintln!("{}\n{}", serde_json::to_string(&rs).unwrap(), serde_json::to_string(&rd).unwrap());
    let (tx, rx) = halves(&rs, &rd);
    let ReliableReport::Sender { completion_s: Some(tx_done), acked_bytes, blocks_sent, .. } = tx else {
        panic!("the sender did not complete: {tx:?}")
    };
    let ReliableReport::Receiver { completion_s: Some(rx_done), delivered_blocks, delivered_bytes, .. } = rx else {
        panic!("the receiver did not complete: {rx:?}")
    };
    assert_eq!((acked_bytes, delivered_bytes, delivered_blocks, blocks_sent), (200_000, 200_000, 200, 200));
    assert!(rx_done > 0.0 && rx_done <= tx_done + 0.01 && tx_done < 1.4, "{rx_done} {tx_done}");
    // After the completion the sender sent nothing more, though it ran on.
    let AgentReport::TfrcSender { packets_sent, .. } = rs.agent else { panic!("a TFRC sender") };
    assert_eq!(Some(packets_sent), sent_at_completion, "data sent after the completion");
    assert_eq!(rs.datagrams_sent + rs.send_dropped, packets_sent);
    assert!(rs.malformed_total + rd.malformed_total == 0);
}
