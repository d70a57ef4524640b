//! Explicit Congestion Notification end to end (RFC 3168) and the TCP send jitter (ns-2's
//! `overhead_`).

mod common;

use flowshare_core::cc::{CcConfig, CcHost};
use flowshare_core::packet::{ecn, Kind, Packet};
use flowshare_core::tcp::{Controller, Sender, Sink, TcpConfig};

const RED: &str =
    r#"{ kind = "red", limit = 60, min_th = 5, max_th = 15, max_p = 0.1, w_q = 0.002, mode = "packets", ecn = true }"#;

fn dumbbell(queue: &str, groups: &str, seconds: u32) -> String {
    common::dumbbell(seconds, &format!(r#"rate = "10Mbps", delay = "20ms", queue = {queue}"#), groups)
}

fn group(name: &str, count: u32, tcp: &str) -> String {
    format!("[[flows]]\nname = \"{name}\"\ncount = {count}\nstart_spacing = \"10ms\"\ntcp = {{ initial_window = 2{tcp} }}\n")
}

#[test]
fn marks_replace_early_drops_and_senders_back_off() {
    let ecn_run = common::run(&dumbbell(RED, &group("e", 16, ", ecn = true"), 20));
    let drop_run = common::run(&dumbbell(RED, &group("e", 16, ""), 20));
    let (q, f) = (&ecn_run.queues, &ecn_run.flows);
    let marks = q.i64("ecn_marks")[0];
    assert!(marks > 200, "marks {marks}");
    // Only retransmissions (not ECN-capable) can still be dropped early.
    let early = q.i64("early_drops")[0];
    assert!(early * 20 < marks, "early drops {early} vs marks {marks}");
    assert!(drop_run.queues.i64("early_drops")[0] > 200 && drop_run.queues.i64("ecn_marks")[0] == 0);
    // Every mark reaches a sink (the access links do not drop), except those still in flight.
    let seen: i64 = f.i64("ecn_marks").iter().sum();
    let in_net: i64 = f.i64("in_network_end").iter().sum();
    assert!(seen <= marks && seen + in_net >= marks, "sinks saw {seen} of {marks} marks");
    // Each sender reduces at most once per window: fewer reductions than marks, but many.
    let reductions: i64 = f.i64("ecn_reductions").iter().sum();
    assert!(reductions > 100 && reductions < marks, "{reductions} reductions for {marks} marks");
    // Marking instead of dropping saves most retransmissions (those left follow the start-up
    // overshoot and forced drops).
    let retx = |r: &flowshare_core::results::RunResults| r.flows.i64("retransmits").iter().sum::<i64>();
    assert!(retx(&ecn_run) * 4 < retx(&drop_run), "retransmits {} vs {}", retx(&ecn_run), retx(&drop_run));
    // Marked packets stay in the queue, so the average sits higher than with drops, but below
    // gentle RED's drop-all ceiling (2 max_th), and the link stays busy.
    let avg = q.f64("red_avg_pkts")[0];
    assert!(avg > 5.0 && avg < 30.0, "RED average {avg}");
    assert!(q.f64("utilization")[0] > 0.9);
    common::assert_conservation(&ecn_run);
}

#[test]
fn flows_without_ecn_are_dropped_not_marked() {
    let groups = group("ecn", 4, ", ecn = true") + &group("plain", 4, "");
    let r = common::run(&dumbbell(RED, &groups, 20));
    let f = &r.flows;
    for i in 0..8 {
        let (marks, reductions) = (f.i64("ecn_marks")[i], f.i64("ecn_reductions")[i]);
        if i < 4 {
            assert!(marks > 0 && reductions > 0, "flow {i}: {marks} marks, {reductions} reductions");
        } else {
            assert_eq!((marks, reductions), (0, 0), "flow {i} is not ECN-capable");
            assert!(f.i64("drops")[i] > 0);
        }
    }
    assert!(r.queues.i64("ecn_marks")[0] > 0 && r.queues.i64("early_drops")[0] > 0);
    common::assert_conservation(&r);
}

#[test]
fn ecn_needs_a_red_queue() {
    let text = dumbbell(r#"{ kind = "droptail", limit = 60, ecn = true }"#, &group("e", 1, ""), 1);
    let err = flowshare_core::scenario::from_toml(&text).and_then(|s| s.build().map(|_| ())).unwrap_err();
    assert_eq!(err.to_string(), "topology.bottleneck.queue.ecn: is a RED parameter; it needs kind = \"red\"");
}

fn tcp(ecn: bool) -> flowshare_core::tcp::TcpConfig {
    let groups = format!("[[flows]]\ntcp = {{ ecn = {ecn} }}\n");
    let s = flowshare_core::scenario::from_toml(&dumbbell("{ limit = 10 }", &groups, 1)).unwrap();
    s.build().unwrap().conns[0].tcp
}

fn ack(seq: u64, bits: u8) -> Packet {
    let mut p = Packet::new(0, Kind::Ack, seq, 40, 0);
    p.ecn = bits;
    p
}

/// A Reno sender of `cfg` joined to a fresh congestion-control host.
fn reno_sender(cfg: TcpConfig) -> Sender {
    Sender::new(0, cfg, None, cfg.mss, Controller::Solo(CcConfig::Reno.build_solo()))
}

#[test]
fn sender_halves_once_per_window_and_signals_cwr() {
    let mut cfg = tcp(true);
    cfg.initial_window = 10.0;
    cfg.initial_ssthresh = 5.0; // congestion avoidance
    let mut cc = CcHost::new();
    let mut s = reno_sender(cfg);
    let mut out = Vec::new();
    s.start(0, &mut cc, &mut out);
    let m = s.member().unwrap();
    assert_eq!(out.len(), 10);
    assert!(out.iter().all(|p| p.ecn == ecn::ECT), "new data is ECN-capable, without CWR");
    out.clear();
    // The first echo halves the window: Reno's ssthresh = FlightSize / 2 (9 segments still
    // out), and cwnd = ssthresh (RFC 3168 §6.1.2).
    s.on_ack(1_000, &ack(1, ecn::ECE), &mut cc, &mut out);
    let st = cc.state(m);
    assert_eq!((st.cwnd, st.ssthresh, s.stats.ecn_reductions), (4.5, 4.5, 1));
    // The first new segment after the reduction carries CWR, the next ones do not.
    let sent: Vec<u8> = out.iter().map(|p| p.ecn).collect();
    out.clear();
    // More echoes for the same window change nothing.
    for a in 2..=10 {
        s.on_ack(1_000 + a, &ack(a, ecn::ECE), &mut cc, &mut out);
    }
    assert_eq!(s.stats.ecn_reductions, 1);
    let cwr: Vec<u8> = sent.iter().chain(out.iter().map(|p| &p.ecn)).copied().filter(|b| b & ecn::CWR != 0).collect();
    assert_eq!(cwr.len(), 1, "exactly one segment carries CWR");
    // An echo for data sent after the reduction reduces again.
    let beyond = s.snd_max;
    out.clear();
    s.on_ack(5_000, &ack(beyond - 1, 0), &mut cc, &mut out);
    let before = cc.state(m).cwnd;
    s.on_ack(6_000, &ack(s.snd_una + 1, ecn::ECE), &mut cc, &mut out);
    assert_eq!(s.stats.ecn_reductions, 2);
    assert!(cc.state(m).cwnd < before);
}

#[test]
fn retransmissions_are_not_ecn_capable_and_ecn_off_sends_plain_packets() {
    let mut cfg = tcp(true);
    cfg.initial_window = 10.0;
    let mut cc = CcHost::new();
    let mut s = reno_sender(cfg);
    let mut out = Vec::new();
    s.start(0, &mut cc, &mut out);
    out.clear();
    for t in 1..=3 {
        s.on_ack(t, &ack(0, 0), &mut cc, &mut out);
    }
    let retx: Vec<&Packet> = out.iter().filter(|p| p.retx()).collect();
    assert_eq!(retx.len(), 1, "fast retransmit");
    assert_eq!(retx[0].ecn, 0);

    let plain = tcp(false);
    let mut s = reno_sender(plain);
    out.clear();
    s.start(0, &mut cc, &mut out);
    assert!(out.iter().all(|p| p.ecn == 0));
}

#[test]
fn sink_echoes_from_ce_until_cwr() {
    let cfg = tcp(true);
    let mut k = Sink::new(0, &cfg, None, cfg.mss);
    let mut out = Vec::new();
    let seg = |seq: u64, bits: u8| {
        let mut p = Packet::new(0, Kind::Data, seq, 1500, 0);
        p.ecn = bits;
        p
    };
    k.on_data(0, &seg(0, ecn::ECT), &mut out);
    k.on_data(1, &seg(1, ecn::ECT | ecn::CE), &mut out);
    k.on_data(2, &seg(2, ecn::ECT), &mut out);
    k.on_data(3, &seg(3, ecn::ECT | ecn::CWR), &mut out);
    k.on_data(4, &seg(4, ecn::ECT), &mut out);
    let echoes: Vec<bool> = out.iter().map(|a| a.ecn & ecn::ECE != 0).collect();
    assert_eq!(echoes, [false, true, true, false, false]);
    assert_eq!(k.ce_received, 1);
    // A sink of a connection without ECN never echoes.
    let mut plain = Sink::new(0, &tcp(false), None, cfg.mss);
    out.clear();
    plain.on_data(0, &seg(0, ecn::ECT | ecn::CE), &mut out);
    assert_eq!(out[0].ecn, 0);
}

fn jitter_run(jitter: &str, seconds: u32) -> flowshare_core::results::RunResults {
    let groups = format!("[[flows]]\ncount = 2\ntcp = {{ initial_window = 2, rwnd = 400{jitter} }}\n");
    common::run(&dumbbell("{ limit = 50 }", &groups, seconds).replace("10Mbps", "100Mbps"))
}

#[test]
fn send_jitter_spaces_segments_as_ns2_overhead_does() {
    // Each segment leaves U(0, 2 ms) after the previous one: at most one segment per 1 ms on
    // average, 1500 B each, whatever the window: 12 Mbit/s per flow on a 100 Mbit/s path.
    let r = jitter_run(", send_jitter = \"2ms\"", 20);
    for g in r.flows.f64("goodput_bps") {
        let expected = 1460.0 * 8.0 / 1e-3;
        assert!((g / expected - 1.0).abs() < 0.05, "goodput {g}, expected about {expected}");
    }
    assert_eq!(r.queues.i64("drops")[0], 0);
    common::assert_conservation(&r);
    // Deterministic, and without jitter the same flows fill the link.
    assert_eq!(format!("{:?}", r.flows), format!("{:?}", jitter_run(", send_jitter = \"2ms\"", 20).flows));
    let plain = jitter_run("", 20);
    let (fast, slow) = (plain.flows.f64("goodput_bps"), r.flows.f64("goodput_bps"));
    assert!(fast.iter().sum::<f64>() > 2.0 * slow.iter().sum::<f64>(), "{fast:?} vs {slow:?}");
}

#[test]
fn send_jitter_rtt_excludes_the_wait_before_sending() {
    // Segments are stamped when they leave, as in ns-2. The window lets the sender produce
    // far more than one segment per ms, so segments wait at the sender for hundreds of ms;
    // the RTT samples must still be the path's 44 ms (the path itself is not congested).
    let r = jitter_run(", send_jitter = \"2ms\"", 5);
    let f = &r.flows;
    let (mean, max) = (f.f64("rtt_mean_s")[0], f.f64("rtt_max_s")[0]);
    assert!((0.044..0.046).contains(&mean) && max < 0.047, "RTT mean {mean}, max {max}");
    // Segments do wait: the sender has produced well over what has left by the end.
    let held = f.i64("in_network_end")[0];
    assert!(held > 100, "{held} segments held or in flight at the end");
}

#[test]
fn acks_that_still_echo_congestion_do_not_grow_the_window() {
    let mut cfg = tcp(true);
    cfg.initial_window = 10.0;
    cfg.initial_ssthresh = 5.0; // congestion avoidance
    let grow = |echo: u8| {
        let mut cc = CcHost::new();
        let mut s = reno_sender(cfg);
        let mut out = Vec::new();
        s.start(0, &mut cc, &mut out);
        let m = s.member().unwrap();
        s.on_ack(1_000, &ack(1, ecn::ECE), &mut cc, &mut out); // the one reduction
        let after_cut = cc.state(m).cwnd;
        for a in 2..=10 {
            s.on_ack(1_000 + a, &ack(a, echo), &mut cc, &mut out);
        }
        cc.state(m).cwnd - after_cut
    };
    assert_eq!(grow(ecn::ECE), 0.0, "echoing ACKs leave cwnd alone");
    assert!(grow(0) > 1.0, "plain ACKs grow it (Reno: +1/cwnd each)");
}
