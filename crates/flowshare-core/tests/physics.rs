//! Whole-simulation tests: short scenarios that still assert physics.

use flowshare_core::results::RunResults;

mod common;

use common::{assert_conservation, run};

fn jain(x: &[f64]) -> f64 {
    let sum: f64 = x.iter().sum();
    let sq: f64 = x.iter().map(|v| v * v).sum();
    sum * sum / (x.len() as f64 * sq)
}

fn dumbbell(duration: &str, rate: &str, queue: u32, flows: &str) -> String {
    format!(
        r#"
[simulation]
duration = "{duration}"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "{rate}", delay = "20ms", queue = {{ limit = {queue} }} }}
access = {{ rate = "100Mbps", delay = "1ms", queue = {{ limit = 1000 }} }}
{flows}
"#
    )
}

#[test]
fn a_lone_flow_fills_the_bottleneck() {
    // The queue (100 packets) exceeds the bandwidth-delay product (about 37 packets), so after
    // the slow-start overshoot has been repaired the link never idles.
    let r = run(&dumbbell("40s", "10Mbps", 100, "[[flows]]\ncount = 1"));
    let s = &r.flow_series;
    let late: Vec<f64> =
        (0..s.rows()).filter(|&i| s.f64("time_s")[i] > 20.0).map(|i| s.f64("goodput_bps")[i]).collect();
    let goodput = late.iter().sum::<f64>() / late.len() as f64;
    // Payload share of the wire with 1460 B segments and 40 B headers.
    let ceiling = 10e6 * 1460.0 / 1500.0;
    assert!(goodput >= 0.95 * ceiling, "goodput {goodput} < 95% of {ceiling}");
    assert!(r.flows.f64("goodput_bps")[0] >= 0.8 * ceiling, "whole-run goodput");
    assert!(r.queues.f64("utilization")[0] >= 0.9);
    assert_conservation(&r);
}

#[test]
fn four_equal_rtt_newreno_flows_share_fairly() {
    let r = run(&dumbbell("60s", "10Mbps", 50, "[[flows]]\ncount = 4\nstart_spacing = \"10ms\""));
    let g = r.flows.f64("goodput_bps");
    let j = jain(g);
    assert!(j >= 0.95, "Jain index {j} for {g:?}");
    let total: f64 = g.iter().sum();
    assert!(total > 0.9 * 10e6 * 1460.0 / 1500.0, "aggregate goodput {total}");
    assert!(r.queues.i64("drops")[0] > 0, "a 50-packet queue must overflow");
    assert_conservation(&r);
}

#[test]
fn longer_rtt_flows_get_less() {
    let flows = r#"
[[flows]]
name = "short"
[[flows]]
name = "long"
src_access = { delay = "40ms" }
"#;
    let r = run(&dumbbell("60s", "10Mbps", 50, flows));
    let g = r.flows.f64("goodput_bps");
    let rtt = r.flows.f64("rtt_min_s");
    assert!(rtt[1] > rtt[0] + 0.07, "RTTs {rtt:?}");
    assert!(g[0] > 1.3 * g[1], "short-RTT {} vs long-RTT {}", g[0], g[1]);
}

#[test]
fn r1_conserves_packets_and_is_deterministic() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/r1-dumbbell.toml"))
        .unwrap()
        .replace("duration = \"60s\"", "duration = \"5s\"");
    let a = run(&text);
    let b = run(&text);
    assert_conservation(&a);
    // Debug output compares floats bit for bit, NaN included.
    assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));
    assert_eq!(format!("{:?}", a.queues), format!("{:?}", b.queues));
    assert_eq!(format!("{:?}", a.flow_series), format!("{:?}", b.flow_series));
    assert_eq!(format!("{:?}", a.queue_series), format!("{:?}", b.queue_series));
    assert_eq!(a.summary.events, b.summary.events);
    assert_eq!(a.flow_series.rows(), 16 * 50);
}

/// One flow on an uncongested path (the queue never overflows) with chosen segments lost.
fn recovery_run(recovery: &str, drops: &[u64]) -> (i64, i64, i64, f64) {
    let drops: Vec<String> = drops.iter().map(u64::to_string).collect();
    let flows = format!(
        "[[flows]]\nsize = \"400KB\"\ndrop_segments = [{}]\ntcp = {{ recovery = \"{recovery}\", initial_window = 2, rto_min = \"200ms\", rto_initial = \"1s\" }}",
        drops.join(", ")
    );
    let r = run(&dumbbell("30s", "10Mbps", 1000, &flows));
    let f = &r.flows;
    assert_eq!(f.i64("bytes_delivered")[0], 400_000, "{recovery} {drops:?}: transfer incomplete");
    assert_conservation(&r);
    (f.i64("fast_retransmits")[0], f.i64("timeouts")[0], f.i64("retransmits")[0], f.f64("completion_time_s")[0])
}

#[test]
fn loss_recovery_variants_on_crafted_drop_patterns() {
    // Segments 40.. are sent in slow start with cwnd about 40, so 40, 42, 44 fall in one window.
    struct Case {
        recovery: &'static str,
        drops: &'static [u64],
        fast_retransmits: i64,
        timeouts: i64,
        /// Exact retransmission count, or None where go-back-N resends more.
        retransmits: Option<i64>,
    }
    let cases = [
        Case { recovery: "tahoe", drops: &[40], fast_retransmits: 1, timeouts: 0, retransmits: None },
        Case { recovery: "reno", drops: &[40], fast_retransmits: 1, timeouts: 0, retransmits: Some(1) },
        Case { recovery: "newreno", drops: &[40], fast_retransmits: 1, timeouts: 0, retransmits: Some(1) },
        Case { recovery: "sack", drops: &[40], fast_retransmits: 1, timeouts: 0, retransmits: Some(1) },
        // Two losses: Tahoe goes back N; Reno leaves recovery on the partial ACK and, barred
        // from a second fast retransmit in the same window, waits for the timer; NewReno
        // repairs the second hole on the partial ACK; SACK repairs both at once.
        Case { recovery: "tahoe", drops: &[40, 42], fast_retransmits: 1, timeouts: 0, retransmits: None },
        Case { recovery: "reno", drops: &[40, 42], fast_retransmits: 1, timeouts: 1, retransmits: None },
        Case { recovery: "newreno", drops: &[40, 42], fast_retransmits: 1, timeouts: 0, retransmits: Some(2) },
        Case { recovery: "sack", drops: &[40, 42], fast_retransmits: 1, timeouts: 0, retransmits: Some(2) },
        Case { recovery: "tahoe", drops: &[40, 42, 44], fast_retransmits: 1, timeouts: 0, retransmits: None },
        Case { recovery: "reno", drops: &[40, 42, 44], fast_retransmits: 1, timeouts: 1, retransmits: None },
        Case { recovery: "newreno", drops: &[40, 42, 44], fast_retransmits: 1, timeouts: 0, retransmits: Some(3) },
        Case { recovery: "sack", drops: &[40, 42, 44], fast_retransmits: 1, timeouts: 0, retransmits: Some(3) },
    ];
    let mut failures = Vec::new();
    for c in &cases {
        let (fr, to, rx, _) = recovery_run(c.recovery, c.drops);
        let rx_ok = c.retransmits.is_none_or(|n| n == rx) && rx >= c.drops.len() as i64;
        if fr != c.fast_retransmits || to != c.timeouts || !rx_ok {
            failures.push(format!(
                "{} {:?}: fast_retransmits {fr} (want {}), timeouts {to} (want {}), retransmits {rx} (want {:?})",
                c.recovery, c.drops, c.fast_retransmits, c.timeouts, c.retransmits
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn sack_and_newreno_finish_a_three_loss_window_sooner_than_reno() {
    let (.., reno) = recovery_run("reno", &[40, 42, 44]);
    let (.., newreno) = recovery_run("newreno", &[40, 42, 44]);
    let (.., sack) = recovery_run("sack", &[40, 42, 44]);
    assert!(sack <= newreno && newreno < reno, "completion: sack {sack}, newreno {newreno}, reno {reno}");
}

#[test]
fn handshake_adds_one_round_trip_to_a_short_transfer() {
    let base = "[[flows]]\nsize = \"14600B\"\ntcp = { initial_window = 10 }";
    let plain = run(&dumbbell("5s", "10Mbps", 100, base));
    let shake = run(&dumbbell(
        "5s",
        "10Mbps",
        100,
        &base.replace("initial_window = 10", "initial_window = 10, handshake = true"),
    ));
    let setup = shake.flows.f64("setup_time_s")[0];
    assert!(setup > 0.044 && setup < 0.05, "setup {setup}");
    let extra = shake.flows.f64("completion_time_s")[0] - plain.flows.f64("completion_time_s")[0];
    assert!((extra - setup).abs() < 1e-3, "handshake costs {extra}, setup {setup}");
    assert!(plain.flows.f64("setup_time_s")[0].is_nan());
}

#[test]
fn delayed_acks_halve_the_ack_count() {
    let base = "[[flows]]\nsize = \"1460000B\"";
    // A queue large enough that nothing is lost: every ACK is an in-order one.
    let plain = run(&dumbbell("10s", "10Mbps", 2000, base));
    let delayed = run(&dumbbell("10s", "10Mbps", 2000, &format!("{base}\ntcp = {{ delayed_ack = true }}")));
    // ACK arrivals at the sender's access link (reverse direction of link 1, the s0 access).
    let acks = |r: &RunResults| r.queues.i64("arrivals")[3];
    let ratio = acks(&delayed) as f64 / acks(&plain) as f64;
    assert!((0.45..0.6).contains(&ratio), "ACK ratio {ratio}");
    assert_eq!(delayed.flows.i64("bytes_delivered")[0], 1_460_000);
}

/// RFC 3465 byte counting: with delayed ACKs (one ACK per two segments) a sender that credits
/// growth per ACK grows half as fast, in slow start (×1.5 per round trip instead of ×2) and in
/// congestion avoidance (half a segment per round trip instead of one); `byte_counting`
/// credits every acknowledged segment, as Linux does, and gives back the growth of a sender
/// whose every segment is acknowledged.
#[test]
fn byte_counting_gives_delayed_ack_senders_the_growth_of_per_segment_acks() {
    for phase in ["", "initial_window = 2, initial_ssthresh = 2"] {
        let time = |opts: &str| {
            let tcp = [phase, opts].iter().filter(|s| !s.is_empty()).cloned().collect::<Vec<_>>().join(", ");
            let r =
                run(&dumbbell("60s", "100Mbps", 2000, &format!("[[flows]]\nsize = \"1460000B\"\ntcp = {{ {tcp} }}")));
            assert_eq!(r.flows.i64("bytes_delivered")[0], 1_460_000);
            r.flows.f64("completion_time_s")[0]
        };
        let every = time("");
        let delayed = time("delayed_ack = true");
        let counted = time("delayed_ack = true, byte_counting = true");
        assert!(
            delayed > 1.15 * every,
            "{phase:?}: per-ACK growth with delayed ACKs {delayed} s, every segment ACKed {every} s"
        );
        assert!(
            counted < 1.08 * every && counted < 0.9 * delayed,
            "{phase:?}: byte counting {counted} s, every {every} s, per-ACK {delayed} s"
        );
    }
}

#[test]
fn parking_lot_long_flow_gets_less_than_one_hop_flows() {
    let text = r#"
[simulation]
duration = "30s"
[topology]
kind = "parking_lot"
routers = 4
link = { rate = "10Mbps", delay = "5ms", queue = { limit = 50 } }
access = { rate = "100Mbps", delay = "1ms" }
[[flows]]
name = "long"
[[flows]]
name = "hop1"
from = 0
to = 1
[[flows]]
name = "hop2"
from = 1
to = 2
[[flows]]
name = "hop3"
from = 2
to = 3
"#;
    let r = run(text);
    let g = r.flows.f64("goodput_bps");
    for (i, hop) in g.iter().enumerate().skip(1) {
        assert!(g[0] < *hop, "long flow {} vs hop{i} {}", g[0], hop);
    }
    assert_conservation(&r);
}

#[test]
fn a_timeout_during_recovery_halves_the_window_in_force_not_the_inflated_one() {
    // Slow start overshoots a 60-packet queue by far; NewReno then spends many RTTs in
    // recovery while duplicate ACKs inflate cwnd and FlightSize. ssthresh must stay within
    // what the path holds (about 20 packets in flight plus 60 queued), before and after timeouts.
    let text = dumbbell("20s", "10Mbps", 60, "[[flows]]\ntcp = { rto_min = \"200ms\" }")
        .replace("delay = \"20ms\"", "delay = \"10ms\"");
    let r = run(&text);
    let s = &r.flow_series;
    let max_ssthresh = s.f64("ssthresh").iter().copied().filter(|v| v.is_finite()).fold(0.0, f64::max);
    assert!(r.flows.i64("fast_retransmits")[0] > 0);
    assert!(max_ssthresh <= 85.0, "ssthresh reached {max_ssthresh}");
}
