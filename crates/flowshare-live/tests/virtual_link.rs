//! The event loop on datagrams in memory and clocks the test moves: a sender and a receiver
//! joined by a 10 ms link that loses one chosen packet, run deterministically, the receiver's
//! clock 5 s ahead of the sender's (each endpoint's clock starts when it starts). TCP repairs
//! the loss by SACK recovery; MulTFRC's receiver reports it; both measure the link's RTT.

mod common;

use common::{Link, Net, MS};
use flowshare_core::agent::Agent;
use flowshare_core::packet::Kind;
use flowshare_core::scenario::from_toml;
use flowshare_core::units::Time;
use flowshare_live::wire;
use flowshare_live::AgentReport;
use std::net::SocketAddr;
use std::rc::Rc;

const DELAY: Time = 10 * MS;
const LOST: u64 = 20;
/// How far the receiver's clock is ahead of the sender's.
const SKEW: Time = 5_000 * MS;

/// A link of one-way delay `DELAY` that loses the first transmission of packet `LOST`.
#[derive(Default)]
struct OneLoss {
    lost: u64,
    /// The RTT the latest data segment carried, ns.
    data_rtt: u64,
}

impl Link for OneLoss {
    fn carry(&mut self, now: Time, bytes: &[u8]) -> Option<Time> {
        let p = *wire::decode(bytes).expect("the endpoint writes valid datagrams").packet().expect("a packet");
        if p.kind == Kind::Data {
            self.data_rtt = p.word(0);
        }
        if matches!(p.kind, Kind::Data | Kind::TfrcData) && p.seq == LOST && !p.retx() {
            self.lost += 1;
            return None;
        }
        Some(now + DELAY)
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

type Ep = common::Ep<OneLoss>;

/// Both ends of flow 0 of `flows`, run for `end` ns of network time.
fn run_pair(flows: &str, end: Time) -> (Rc<Net<OneLoss>>, Ep, Ep) {
    let scenario = from_toml(&format!("{TOPOLOGY}{flows}")).unwrap();
    let addrs = ("10.0.0.1:5000".parse().unwrap(), "10.0.0.2:5000".parse().unwrap());
    let net = Net::new(OneLoss::default());
    let (src, dst) = common::run_flow(scenario, addrs, &net, SKEW, end, |_, _| {});
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
    assert_eq!(net.link.borrow().lost, 1);
    assert_eq!(net.link.borrow().data_rtt, 2 * DELAY, "segments carry the sender's smoothed RTT");
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
    let in_flight = net.in_flight_to(b);
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
    assert_eq!(net.link.borrow().lost, 1);
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
    let in_flight = net.in_flight_to(b);
    assert_eq!(packets + 1 + in_flight, packets_sent, "every packet arrived but the lost one");
    assert!(rate_bytes_per_s > 1000.0, "rate {rate_bytes_per_s}");
    assert_eq!(rs.malformed_total + rd.malformed_total, 0);
    assert!(rd.rejected.values().chain(rs.rejected.values()).all(|&n| n == 0));
}
