//! A live sender and receiver of one flow over 127.0.0.1 for about a second: data arrives in
//! order, feedback flows back, and the two ends' reports agree with each other.

use flowshare_core::scenario::from_toml;
use flowshare_live::{run, run_endpoint, AgentReport, EndpointConfig, EndpointReport, LiveEndpoint};
use flowshare_live::{MonotonicClock, Side, UdpTransport};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

const TOPOLOGY: &str = r#"
[simulation]
duration = "60s"
seed = 1

[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "20ms", queue = { limit = 50 } }
access = { rate = "100Mbps", delay = "1ms" }
"#;

const TCP: &str = r#"
[[flows]]
name = "tcp"
[flows.tcp]
recovery = "sack"
cc = { algo = "cubic" }
mss = "1448B"
header = "52B"
ack_size = "52B"
rwnd = 64
"#;

const TFRC: &str = r#"
[[flows]]
name = "tfrc"
transport = "tfrc"
[flows.tfrc]
packet_size = "1000B"
header = "40B"
"#;

/// Run both ends of flow 0 of `flows` for `secs` seconds, each on its own thread and socket.
fn pair(flows: &str, secs: f64) -> (EndpointReport, EndpointReport) {
    let scenario = from_toml(&format!("{TOPOLOGY}{flows}")).unwrap();
    let any = "127.0.0.1:0".parse().unwrap();
    let (a, b) = (UdpTransport::bind(any).unwrap(), UdpTransport::bind(any).unwrap());
    let (addr_a, addr_b) = (a.local_addr().unwrap(), b.local_addr().unwrap());
    let d = Duration::from_secs_f64(secs);
    let src_cfg = EndpointConfig::new(scenario.clone(), 0, Side::Source, addr_a, addr_b, d);
    let dst_cfg = EndpointConfig::new(scenario, 0, Side::Destination, addr_b, addr_a, d);
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let dst = s.spawn(|| {
            let mut ep = LiveEndpoint::new(&dst_cfg, b, MonotonicClock::start()).unwrap();
            run(&mut ep, d, &stop).unwrap()
        });
        let src = s.spawn(|| {
            let mut ep = LiveEndpoint::new(&src_cfg, a, MonotonicClock::start()).unwrap();
            run(&mut ep, d, &stop).unwrap()
        });
        let (src, dst) = (src.join().unwrap(), dst.join().unwrap());
        eprintln!("{}\n{}", serde_json::to_string(&src).unwrap(), serde_json::to_string(&dst).unwrap());
        (src, dst)
    })
}

fn clean(r: &EndpointReport) {
    assert_eq!(r.malformed_total, 0, "{r:?}");
    assert_eq!((r.foreign_peer, r.foreign_connection), (0, 0), "{r:?}");
    assert!(r.rejected.values().all(|&n| n == 0), "{r:?}");
    assert!(r.duration_s > 0.9 && r.duration_s < 1.5, "ran about a second: {}", r.duration_s);
}

#[test]
fn tcp_cubic_over_loopback_delivers_in_order() {
    let (src, dst) = pair(TCP, 1.0);
    clean(&src);
    clean(&dst);
    let AgentReport::TcpSender { cc, bytes_sent, bytes_acked, rtt_samples, rtt_mean_ms, .. } = src.agent else {
        panic!("a TCP sender: {src:?}")
    };
    let AgentReport::TcpSink { rcv_nxt, bytes_delivered, acks_sent, .. } = dst.agent else {
        panic!("a TCP sink: {dst:?}")
    };
    assert_eq!(cc, "cubic");
    // In order: everything below rcv_nxt, in full segments of a bulk transfer, and nothing else.
    assert_eq!(bytes_delivered, rcv_nxt * 1448);
    assert!(bytes_delivered > 1_000_000, "at least 1 MB in a second over loopback: {bytes_delivered}");
    assert!(bytes_acked > 0 && bytes_acked <= bytes_delivered, "acked {bytes_acked}, delivered {bytes_delivered}");
    assert!(bytes_delivered <= bytes_sent, "delivered {bytes_delivered}, sent {bytes_sent}");
    assert!(rtt_samples > 0 && rtt_mean_ms > 0.0 && rtt_mean_ms < 200.0, "RTT {rtt_mean_ms} ms");
    // What one end received the other sent; each ACK is a datagram.
    assert!(dst.datagrams_received <= src.datagrams_sent && src.datagrams_received <= dst.datagrams_sent);
    assert_eq!(dst.datagrams_sent + dst.send_dropped, acks_sent);
    assert!(dst.datagrams_received * 1472 == dst.bytes_received, "data datagrams are 1500 - 28 bytes");
    assert_eq!(dst.goodput_bytes, bytes_delivered);
    let bps = dst.goodput_bytes as f64 * 8.0 / dst.duration_s;
    assert!((dst.goodput_bps - bps).abs() < 1e-6 * bps);
    let json = serde_json::to_string(&dst).unwrap();
    assert!(json.contains("\"agent\":\"tcp_sink\"") && json.contains("\"goodput_bps\""), "{json}");
}

#[test]
fn tfrc_over_loopback_exchanges_feedback_and_raises_its_rate() {
    let (src, dst) = pair(TFRC, 1.0);
    clean(&src);
    clean(&dst);
    let AgentReport::TfrcSender { packets_sent, rate_bytes_per_s, reports, rtt_ms, p, .. } = src.agent else {
        panic!("a TFRC sender: {src:?}")
    };
    let AgentReport::TfrcReceiver { packets, bytes, reports: sent_reports, .. } = dst.agent else {
        panic!("a TFRC receiver: {dst:?}")
    };
    // The rate starts at one packet per second (RFC 5348 §4.2) and must have risen.
    assert!(rate_bytes_per_s > 10.0 * 1000.0, "rate {rate_bytes_per_s} B/s");
    assert!(reports > 1 && reports <= sent_reports, "sender got {reports} of {sent_reports} reports");
    assert_eq!(src.datagrams_received, reports);
    assert!(rtt_ms > 0.0 && rtt_ms < 200.0, "RTT {rtt_ms} ms");
    assert!((0.0..=1.0).contains(&p));
    assert!(packets > 10 && packets <= packets_sent, "received {packets} of {packets_sent}");
    assert_eq!(bytes, dst.datagrams_received * 1000, "payload bytes of distinct packets");
    assert_eq!(dst.bytes_received, dst.datagrams_received * 1012, "data datagrams are 1040 - 28 bytes");
    assert_eq!(dst.goodput_bytes, bytes);
}

#[test]
fn run_endpoint_stops_at_its_duration_or_its_flag() {
    let scenario = from_toml(&format!("{TOPOLOGY}{TCP}")).unwrap();
    let bind = "127.0.0.1:0".parse().unwrap();
    // Nobody listens at the peer: the sender sends its initial window and times out.
    let peer = UdpTransport::bind(bind).unwrap();
    let cfg =
        EndpointConfig::new(scenario, 0, Side::Source, bind, peer.local_addr().unwrap(), Duration::from_millis(300));
    let t = std::time::Instant::now();
    let r = run_endpoint(&cfg, &AtomicBool::new(false)).unwrap();
    assert!(t.elapsed() >= Duration::from_millis(300) && t.elapsed() < Duration::from_secs(2));
    assert_eq!(r.datagrams_sent, 3, "the initial window of 3 left, nothing more: {r:?}");
    assert_eq!(r.datagrams_received, 0);
    let t = std::time::Instant::now();
    let r = run_endpoint(&cfg, &AtomicBool::new(true)).unwrap();
    assert!(t.elapsed() < Duration::from_millis(200) && r.datagrams_sent == 0);
}

#[test]
fn configuration_errors_name_the_field() {
    let scenario = from_toml(&format!("{TOPOLOGY}{TCP}")).unwrap();
    let a = "127.0.0.1:0".parse().unwrap();
    let b = "127.0.0.1:9".parse().unwrap();
    let err = |cfg: &EndpointConfig| -> String {
        match run_endpoint(cfg, &AtomicBool::new(false)) {
            Err(e) => e.to_string(),
            Ok(r) => panic!("accepted: {r:?}"),
        }
    };
    let mut cfg = EndpointConfig::new(scenario, 3, Side::Source, a, b, Duration::from_secs(1));
    assert_eq!(err(&cfg), "flow: 3 is not a listed flow: the scenario lists 1 (0..=0)");
    cfg.flow = 0;
    cfg.duration = Duration::ZERO;
    assert!(err(&cfg).starts_with("duration: must be above 0s"));
    cfg.duration = Duration::from_secs(1);
    cfg.peer = "0.0.0.0:9".parse().unwrap();
    assert!(err(&cfg).starts_with("peer: 0.0.0.0:9 is not a destination"));
    cfg.peer = b;
    cfg.bind = "192.0.2.1:0".parse().unwrap();
    let e = err(&cfg);
    assert!(e.starts_with("bind: cannot bind 192.0.2.1:0: ") && !e.contains('\n'), "{e}");

    let tcp =
        |options: &str| from_toml(&format!("{TOPOLOGY}[[flows]]\nname = \"t\"\n[flows.tcp]\n{options}\n")).unwrap();
    let cfg = EndpointConfig::new(tcp("mss = \"65535B\""), 0, Side::Source, a, b, Duration::from_secs(1));
    let e = err(&cfg);
    assert!(e.starts_with("flows[0].tcp.mss: packets of 65575 bytes do not fit one IPv4 datagram"), "{e}");
    let ensemble = "cc = \"reno\"\nensemble = { controller = \"tcb\", key = \"receiver\" }";
    let cfg = EndpointConfig::new(tcp(ensemble), 0, Side::Source, a, b, Duration::from_secs(1));
    let e = err(&cfg);
    assert!(e.starts_with("flows[0].tcp.ensemble: an ensemble shares one controller"), "{e}");

    let multfrc = |n: f64| {
        from_toml(&format!(
            "{TOPOLOGY}[[flows]]\nname = \"m\"\ntransport = \"tfrc\"\n[flows.tfrc]\nequation = \"multfrc\"\nn = {n}\nmax_n = 10\n"
        ))
    };
    // The scenario's own system-wide cap refuses n = 8 before the endpoint's caps are asked.
    let e = multfrc(8.0).unwrap().build().unwrap_err().to_string();
    assert!(e.starts_with("simulation.multfrc_max_total_n"), "{e}");
    let mut cfg = EndpointConfig::new(multfrc(5.0).unwrap(), 0, Side::Source, a, b, Duration::from_secs(1));
    cfg.multfrc_max_n = 4.0;
    let e = err(&cfg);
    assert!(e.starts_with("multfrc_max_n: flows[0].tfrc.n = 5 exceeds the per-connection cap 4"), "{e}");
    cfg.multfrc_max_n = 6.0;
    cfg.multfrc_host_n_other = 2.0;
    let e = err(&cfg);
    assert!(e.starts_with("multfrc_max_host_n: the MulTFRC connections of this host add up to n = 7"), "{e}");
    cfg.multfrc_host_n_other = -1.0;
    assert!(err(&cfg).starts_with("multfrc_host_n_other: expected a number at least 0"));
    cfg.multfrc_host_n_other = 0.0;
    cfg.multfrc_max_host_n = f64::NAN;
    assert!(err(&cfg).starts_with("multfrc_max_host_n: expected a number above 0"));
}

#[test]
fn udp_cbr_over_loopback_sends_between_its_start_and_stop() {
    // 8 Mbit/s of 1000-byte packets: 1000 packets/s, from 100 ms to 400 ms.
    let udp = r#"
[[flows]]
name = "cbr"
transport = "udp"
start = "100ms"
stop = "400ms"
[flows.source]
kind = "cbr"
rate = "8Mbps"
packet_size = "1000B"
"#;
    let (src, dst) = pair(udp, 0.6);
    assert_eq!((src.malformed_total, dst.malformed_total), (0, 0));
    let AgentReport::UdpSource { packets_sent, .. } = src.agent else { panic!("a UDP source: {src:?}") };
    let AgentReport::UdpSink { packets, bytes } = dst.agent else { panic!("a UDP sink: {dst:?}") };
    assert!((280..=320).contains(&packets_sent), "about 300 packets in 300 ms: {packets_sent}");
    assert_eq!(packets, packets_sent, "loopback loses nothing at 8 Mbit/s");
    assert_eq!((src.datagrams_sent, dst.datagrams_received), (packets_sent, packets));
    assert_eq!(dst.goodput_bytes, bytes);
    assert_eq!(src.datagrams_received, 0, "a UDP sink answers nothing");
}
