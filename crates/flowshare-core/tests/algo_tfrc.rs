//! TFRC (RFC 5348) in whole simulations: the rate follows the throughput equation at the loss
//! event rate it measures, it shares a bottleneck with TCP, runs are deterministic, and the
//! no-feedback timer cuts the rate when reports stop.

use flowshare_core::results::RunResults;
use flowshare_core::tfrc::equation::tcp_rate;

mod common;

use common::{assert_conservation, run};

/// One TFRC flow (1000-byte payloads) over a 100 Mbps, 20 ms bottleneck that loses packets
/// with probability `p` (Bernoulli, forward direction only), for `seconds`.
fn lossy(p: f64, seconds: u32, extra: &str) -> String {
    format!(
        r#"
[simulation]
duration = "{seconds}s"
seed = 3
warmup = "5s"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "100Mbps", delay = "20ms", queue = {{ limit = 10000 }}, loss = {{ model = "bernoulli", p = {p} }}, reverse = {{ loss = {{ model = "bernoulli", p = 0.0 }} }} }}
access = {{ rate = "1Gbps", delay = "1ms", queue = {{ limit = 100000 }} }}
[[flows]]
name = "tfrc"
transport = "tfrc"
{extra}
"#
    )
}

/// (goodput B/s, equation B/s at the measured p and mean RTT, loss event rate, packet loss
/// rate) of flow 0. The loss event rate is the long-run one, loss events over packets
/// received (the receiver's `p` at the end averages only the last eight intervals).
fn rate_vs_equation(r: &RunResults) -> (f64, f64, f64, f64) {
    let f = &r.flows;
    let goodput = f.f64("goodput_bps")[0] / 8.0;
    let p = f.i64("loss_events")[0] as f64 / f.i64("packets_received")[0] as f64;
    let rtt = f.f64("rtt_mean_s")[0];
    (goodput, tcp_rate(1000.0, rtt, p, 4.0 * rtt, 1.0), p, f.f64("loss_rate")[0])
}

#[test]
fn rate_follows_the_equation_at_one_and_five_percent_loss() {
    // About 11 packets per RTT at 1 % and 4 at 5 %: a second loss within the RTT after a
    // loss has probability 1 − 0.99^11 ≈ 0.1 and 1 − 0.95^4 ≈ 0.19, so the loss event rate
    // is about 0.9 and 0.8 times the packet loss rate.
    for (loss, merged) in [(0.01, 0.9), (0.05, 0.8)] {
        let r = run(&lossy(loss, 120, ""));
        assert_conservation(&r);
        let (x, eq, p, p_pkt) = rate_vs_equation(&r);
        eprintln!("loss {loss}: goodput {x:.0} B/s, equation {eq:.0} B/s, p {p:.5}, packet loss {p_pkt:.5}");
        assert!((p_pkt - loss).abs() < 0.1 * loss, "loss {loss}: packet loss {p_pkt}");
        assert!((p / (merged * p_pkt) - 1.0).abs() < 0.1, "loss {loss}: p {p} vs packet loss {p_pkt}");
        assert!((x / eq - 1.0).abs() < 0.2, "loss {loss}: goodput {x} vs equation {eq}");
    }
}

#[test]
fn tfrc_shares_a_bottleneck_with_newreno() {
    for n_tcp in [1, 4] {
        let r = run(&common::dumbbell(
            40,
            r#"rate = "10Mbps", delay = "20ms", queue = { limit = 60 }"#,
            &format!(
                r#"
[simulation.warmup]
[[flows]]
name = "tfrc"
transport = "tfrc"
[[flows]]
name = "reno"
count = {n_tcp}
start_spacing = "100ms"
"#
            ),
        )
        .replace("[simulation.warmup]\n", ""));
        assert_conservation(&r);
        let g = r.flows.f64("goodput_bps");
        let total: f64 = g.iter().sum();
        let fair = total / g.len() as f64;
        eprintln!("TFRC vs {n_tcp} NewReno: {g:?}");
        assert!(total > 0.85 * 10e6, "the link is used: {total}");
        for (i, &x) in g.iter().enumerate() {
            assert!(x > 0.25 * fair && x < 3.0 * fair, "flow {i} gets {x} of a fair {fair}");
        }
        assert!(r.flows.f64("loss_event_rate")[0] > 0.0);
    }
}

#[test]
fn same_seed_same_results() {
    let text = lossy(0.02, 20, "[flows.tfrc]\nsqrt_rtt = true\ndiscount = true");
    let (a, b) = (run(&text), run(&text));
    for col in ["bytes_delivered", "packets_sent", "link_losses"] {
        assert_eq!(a.flows.i64(col), b.flows.i64(col), "{col}");
    }
    for col in ["loss_event_rate", "tfrc_rate_final_bps", "rtt_mean_s"] {
        assert_eq!(a.flows.f64(col)[0].to_bits(), b.flows.f64(col)[0].to_bits(), "{col}");
    }
    let other = run(&text.replace("seed = 3", "seed = 4"));
    assert_ne!(a.flows.i64("packets_sent"), other.flows.i64("packets_sent"), "another seed, another run");
}

#[test]
fn losing_every_report_halves_the_rate_every_no_feedback_interval() {
    // Reports are all lost from 10 s to 12 s: with R ≈ 44 ms the timer (4R) expires about
    // every 180 ms, halving the rate each time; when reports return, it recovers.
    let text = r#"
[simulation]
duration = "20s"
seed = 3
sample_interval = "250ms"
[topology]
kind = "dumbbell"
bottleneck = { rate = "100Mbps", delay = "20ms", queue = { limit = 10000 }, loss = { model = "bernoulli", p = 0.01 }, reverse = { loss = { model = "schedule", steps = [["0s", 0.0], ["10s", 1.0], ["12s", 0.0]], pattern = "random" } } }
access = { rate = "1Gbps", delay = "1ms", queue = { limit = 100000 } }
[[flows]]
transport = "tfrc"
"#;
    let r = run(text);
    let s = &r.flow_series;
    let rate_in = |a: f64, b: f64| {
        let rows: Vec<usize> = (0..s.rows()).filter(|&i| s.f64("time_s")[i] > a && s.f64("time_s")[i] <= b).collect();
        rows.iter().map(|&i| s.f64("send_rate_bps")[i]).sum::<f64>() / rows.len() as f64
    };
    let (before, silent_end, after) = (rate_in(7.0, 10.0), rate_in(11.5, 12.0), rate_in(17.0, 20.0));
    eprintln!("send rate before {before:.0}, end of the silence {silent_end:.0}, after {after:.0}");
    // Halvings every max(4R, 2s/X): 4R at first, longer as the rate falls; six or so in 2 s.
    assert!(silent_end < before / 32.0, "{silent_end} vs {before}");
    assert!(after > 0.5 * before, "it recovers: {after} vs {before}");
    assert!(r.flows.i64("ack_link_losses")[0] > 0);
}

#[test]
fn scenario_errors_name_the_field_and_defaults_are_written_out() {
    use flowshare_core::scenario;
    let base = lossy(0.01, 10, "");
    let err = |extra: &str| match scenario::from_toml(&format!("{base}{extra}")).and_then(|s| s.build().map(|_| ())) {
        Ok(()) => panic!("accepted {extra}"),
        Err(e) => e.to_string(),
    };
    assert_eq!(
        err("[flows.tfrc]\nss_mult = 0.5\n"),
        "flows[0].tfrc.ss_mult: expected a number > 1 and at most 100, got 0.5"
    );
    assert!(err("[flows.tfrc]\nss_mult = \"fast\"\n").starts_with("flows[0].tfrc.ss_mult:"));
    assert!(err("[flows.tfrc]\nssmult = 2\n").contains("unknown field `ssmult`"));
    assert!(err("[flows.tcp]\nmss = \"500B\"\n").starts_with("flows[0].tcp: not used with transport = \"tfrc\""));
    let tcp_with_tfrc = base.replace("transport = \"tfrc\"", "[flows.tfrc]\nsqrt_rtt = true");
    let e = scenario::from_toml(&tcp_with_tfrc).unwrap().build().map(|_| ()).unwrap_err().to_string();
    assert_eq!(e, "flows[0].tfrc: only allowed with transport = \"tfrc\"");
    // Left out, the table is written in full in the normalized scenario.
    let json = scenario::from_toml(&base).unwrap().to_json();
    assert!(json.contains("\"tfrc\":{\"profile\":\"rfc5348\",\"packet_size\":\"1KB\""), "{json}");
    let again = scenario::from_json(&json).unwrap();
    assert_eq!(again.to_json(), json, "the normalized form reads back the same");
}

#[test]
fn dropped_packets_make_the_loss_events_the_receiver_counts() {
    // No random loss; packets 2000 and 2001 (one RTT apart at most) are one loss event,
    // 5000 another.
    let base = lossy(0.0, 10, "drop_segments = [2000, 2001, 5000]");
    let r = run(&base.replace("warmup = \"5s\"\n", ""));
    assert_conservation(&r);
    let f = &r.flows;
    assert_eq!(f.i64("drops")[0], 3);
    assert_eq!(f.i64("loss_events")[0], 2);
    assert!(f.f64("loss_event_rate")[0] > 0.0);
}

#[test]
fn the_ns2_profile_runs_and_still_follows_the_equation_roughly() {
    let r = run(&lossy(0.01, 60, "[flows.tfrc]\nprofile = \"ns2\""));
    assert_conservation(&r);
    let (x, eq, p, _) = rate_vs_equation(&r);
    eprintln!("ns2 profile: goodput {x:.0} B/s, equation (4R) {eq:.0} B/s, p {p:.5}");
    // t_RTO is TCP's estimator on a 100 ms grid (above 4R here), so the rate is at most the 4R
    // equation's, and not far below at 1 % loss.
    assert!(x < 1.1 * eq && x > 0.6 * eq, "{x} vs {eq}");
}
