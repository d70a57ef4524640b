//! The event loop on datagrams in memory and clocks the test moves: a sender and a receiver
//! joined by a 10 ms link that loses one chosen packet, run deterministically, the receiver's
//! clock 5 s ahead of the sender's (each endpoint's clock starts when it starts). TCP repairs
//! the loss by SACK recovery; MulTFRC's receiver reports it; both measure the link's RTT.

use flowshare_core::agent::Agent;
use flowshare_core::packet::Kind;
use flowshare_core::scenario::from_toml;
use flowshare_core::units::Time;
use flowshare_live::wire;
use flowshare_live::{AgentReport, Clock, EndpointConfig, LiveEndpoint, Side, Transport};
use std::cell::{Cell, RefCell};
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

const MS: Time = 1_000_000;
const DELAY: Time = 10 * MS;
const LOST: u64 = 20;
/// How far the receiver's clock is ahead of the sender's.
const SKEW: Time = 5_000 * MS;

/// A datagram on its way: when it arrives, where, from where.
struct InFlight {
    at: Time,
    to: SocketAddr,
    from: SocketAddr,
    bytes: Vec<u8>,
}

#[derive(Default)]
struct Net {
    now: Cell<Time>,
    flying: RefCell<Vec<InFlight>>,
    lost: Cell<u64>,
    /// The RTT the latest data segment carried, ns.
    data_rtt: Cell<u64>,
}

impl Net {
    fn next_arrival(&self) -> Option<Time> {
        self.flying.borrow().iter().map(|d| d.at).min()
    }
}

struct Mem {
    net: Rc<Net>,
    addr: SocketAddr,
}

impl Transport for Mem {
    fn recv(&mut self, buf: &mut [u8]) -> io::Result<Option<(usize, SocketAddr)>> {
        let now = self.net.now.get();
        let mut flying = self.net.flying.borrow_mut();
        let Some(i) = flying.iter().position(|d| d.to == self.addr && d.at <= now) else { return Ok(None) };
        let d = flying.remove(i);
        buf[..d.bytes.len()].copy_from_slice(&d.bytes);
        Ok(Some((d.bytes.len(), d.from)))
    }

    fn send(&mut self, buf: &[u8], to: SocketAddr) -> io::Result<bool> {
        let p = *wire::decode(buf).expect("the endpoint writes valid datagrams").packet().expect("a packet");
        if p.kind == Kind::Data {
            self.net.data_rtt.set(p.word(0));
        }
        if matches!(p.kind, Kind::Data | Kind::TfrcData) && p.seq == LOST && !p.retx() {
            self.net.lost.set(self.net.lost.get() + 1);
            return Ok(true);
        }
        let at = self.net.now.get() + DELAY;
        self.net.flying.borrow_mut().push(InFlight { at, to, from: self.addr, bytes: buf.to_vec() });
        Ok(true)
    }

    fn wait(&mut self, _timeout: Option<Duration>) -> io::Result<()> {
        Ok(()) // the test moves the clock
    }
}

/// The network's time plus an offset.
struct Virtual(Rc<Net>, Time);

impl Clock for Virtual {
    fn now(&self) -> Time {
        self.0.now.get() + self.1
    }
}

const TOPOLOGY: &str = r#"
[simulation]
duration = "60s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "20ms", queue = { limit = 50 } }
access = { rate = "100Mbps", delay = "1ms" }
"#;

type Ep = LiveEndpoint<Mem, Virtual>;

/// Both ends of flow 0 of `flows`, run for `end` ns of network time.
fn run_pair(flows: &str, end: Time) -> (Rc<Net>, Ep, Ep) {
    let scenario = from_toml(&format!("{TOPOLOGY}{flows}")).unwrap();
    let (a, b): (SocketAddr, SocketAddr) = ("10.0.0.1:5000".parse().unwrap(), "10.0.0.2:5000".parse().unwrap());
    let net = Rc::new(Net::default());
    let d = Duration::from_secs(60);
    let src_cfg = EndpointConfig::new(scenario.clone(), 0, Side::Source, a, b, d);
    let dst_cfg = EndpointConfig::new(scenario, 0, Side::Destination, b, a, d);
    let mut src = LiveEndpoint::new(&src_cfg, Mem { net: net.clone(), addr: a }, Virtual(net.clone(), 0)).unwrap();
    let mut dst = LiveEndpoint::new(&dst_cfg, Mem { net: net.clone(), addr: b }, Virtual(net.clone(), SKEW)).unwrap();
    // Run each endpoint, then move the clock to the next deadline or arrival (the receiver's
    // deadlines are on its own clock). Work left due now (more datagrams than one step takes)
    // is run without moving the clock.
    let mut spins = 0;
    loop {
        let s = src.step().unwrap();
        let r = dst.step().unwrap().map(|t| t.saturating_sub(SKEW));
        let next = [s, r, net.next_arrival()].into_iter().flatten().min();
        match next {
            Some(t) if t <= end => {
                if t <= net.now.get() {
                    spins += 1;
                    assert!(spins < 1_000, "stuck at {t} ns");
                } else {
                    spins = 0;
                    net.now.set(t);
                }
            }
            _ => break,
        }
    }
    (net, src, dst)
}

#[test]
fn a_lost_segment_is_repaired_and_the_rtt_is_the_links() {
    let tcp = r#"
[[flows]]
name = "tcp"
[flows.tcp]
recovery = "sack"
cc = "reno"
mss = "1448B"
header = "52B"
rwnd = 32
"#;
    let end = 2_000 * MS;
    let (net, mut src, mut dst) = run_pair(tcp, end);
    assert_eq!(net.lost.get(), 1);
    assert_eq!(net.data_rtt.get(), 2 * DELAY, "segments carry the sender's smoothed RTT");
    let (rs, rd) = (src.report(end), dst.report(end));
    let b: SocketAddr = "10.0.0.2:5000".parse().unwrap();
    let AgentReport::TcpSender { retransmits, fast_retransmits, timeouts, rtt_min_ms, rtt_max_ms, bytes_acked, .. } =
        rs.agent
    else {
        panic!("a sender")
    };
    assert_eq!((retransmits, fast_retransmits, timeouts), (1, 1, 0), "{rs:?}");
    assert!(rtt_min_ms >= 20.0 && rtt_max_ms < 20.1, "RTT {rtt_min_ms}..{rtt_max_ms} ms");
    let Agent::TcpSink(k) = dst.agent() else { panic!("a sink") };
    assert!(k.rcv_nxt > 2 * 32 * 40, "a window of 32 per 20 ms for ~2 s: {}", k.rcv_nxt);
    assert_eq!(k.bytes_delivered, k.rcv_nxt * 1448);
    assert!(bytes_acked <= k.bytes_delivered && k.bytes_delivered - bytes_acked <= 32 * 1448);
    let in_flight = net.flying.borrow().iter().filter(|d| d.to == b).count() as u64;
    assert_eq!(rd.datagrams_received + 1 + in_flight, rs.datagrams_sent, "every segment arrived but the lost one");
    assert_eq!(rs.malformed_total + rd.malformed_total, 0);
}

#[test]
fn multfrc_reports_the_loss_and_its_sender_measures_the_links_rtt() {
    let multfrc = r#"
[[flows]]
name = "multfrc"
transport = "tfrc"
[flows.tfrc]
equation = "multfrc"
n = 2
packet_size = "1000B"
header = "40B"
"#;
    let end = 3_000 * MS;
    let (net, mut src, mut dst) = run_pair(multfrc, end);
    assert_eq!(net.lost.get(), 1);
    let (rs, rd) = (src.report(end), dst.report(end + SKEW));
    let AgentReport::TfrcSender { rtt_ms, p, reports, packets_sent, rate_bytes_per_s, .. } = rs.agent else {
        panic!("a sender")
    };
    let AgentReport::TfrcReceiver { packets, reports: sent, .. } = rd.agent else { panic!("a receiver") };
    // Every echo came back on the sender's clock: the RTT is the link's, not the skew.
    assert!((rtt_ms - 20.0).abs() < 0.01, "RTT {rtt_ms} ms");
    assert!(p > 0.0 && p < 0.1, "one loss event reported: p = {p}");
    assert!(reports > 10 && reports <= sent, "{reports} of {sent} reports");
    let b: SocketAddr = "10.0.0.2:5000".parse().unwrap();
    let in_flight = net.flying.borrow().iter().filter(|d| d.to == b).count() as u64;
    assert_eq!(packets + 1 + in_flight, packets_sent, "every packet arrived but the lost one");
    assert!(rate_bytes_per_s > 1000.0, "rate {rate_bytes_per_s}");
    assert_eq!(rs.malformed_total + rd.malformed_total, 0);
    assert!(rd.rejected.values().chain(rs.rejected.values()).all(|&n| n == 0));
}
