//! UDP flows and their sources in whole simulations: rates delivered, schedules, sharing a
//! bottleneck with TCP, accounting and determinism.

use flowshare_core::results::{Column, RunResults};
use flowshare_core::scenario;

mod common;

use common::run;

/// An uncongested dumbbell (100 Mbps everywhere) unless `bottleneck` says otherwise.
fn dumbbell(duration: &str, bottleneck: &str, flows: &str) -> String {
    format!(
        r#"
[simulation]
duration = "{duration}"
[topology]
kind = "dumbbell"
bottleneck = {bottleneck}
access = {{ rate = "100Mbps", delay = "1ms", queue = {{ limit = 1000 }} }}
{flows}
"#
    )
}

const FAST: &str = r#"{ rate = "100Mbps", delay = "5ms", queue = { limit = 1000 } }"#;

fn conservation(r: &RunResults) {
    let f = &r.flows;
    for i in 0..f.rows() {
        let sent = f.i64("packets_sent")[i];
        let accounted = f.i64("packets_received")[i] + f.i64("drops")[i] + f.i64("in_network_end")[i];
        assert_eq!(sent, accounted, "flow {i}: sent != received + dropped + in network");
    }
}

fn text(r: &RunResults, col: &str, i: usize) -> String {
    match r.flows.get(col) {
        Some(Column::Str(v)) => v[i].clone(),
        _ => panic!("no text column {col}"),
    }
}

/// Goodput samples of flow `flow` as (time, bps).
fn series(r: &RunResults, flow: i64) -> Vec<(f64, f64)> {
    let s = &r.flow_series;
    (0..s.rows()).filter(|&i| s.i64("flow")[i] == flow).map(|i| (s.f64("time_s")[i], s.f64("goodput_bps")[i])).collect()
}

#[test]
fn cbr_delivers_rate_times_time_evenly_spaced() {
    // 8 Mbps of 1000-byte payloads: one packet per ms, from 1 s to 9 s = 8000 packets.
    let r = run(&dumbbell(
        "10s",
        FAST,
        r#"[[flows]]
name = "cbr"
transport = "udp"
start = "1s"
stop = "9s"
source = { kind = "cbr", rate = "8Mbps" }"#,
    ));
    conservation(&r);
    let f = &r.flows;
    assert_eq!(f.i64("packets_sent")[0], 8000);
    assert_eq!(f.i64("packets_received")[0], 8000);
    assert_eq!(f.i64("drops")[0], 0);
    assert_eq!(f.i64("bytes_delivered")[0], 8_000_000);
    assert_eq!(f.i64("bytes_sent")[0], 8_000_000);
    assert!((f.f64("goodput_bps")[0] - 8e6).abs() < 1.0);
    assert_eq!(text(&r, "transport", 0), "udp");
    assert_eq!(text(&r, "source", 0), "cbr");
    assert_eq!(text(&r, "cc", 0), "");
    assert!(f.f64("cwnd_final")[0].is_nan() && f.f64("rtt_mean_s")[0].is_nan());
    // One-way delay: 1 + 5 + 1 ms of propagation plus three serializations of 1028 bytes.
    let owd = 7e-3 + 1028.0 * 8.0 / 100e6 * 3.0;
    assert!((f.f64("delay_mean_s")[0] - owd).abs() < 1e-6, "{}", f.f64("delay_mean_s")[0]);
    assert!((f.f64("delay_max_s")[0] - owd).abs() < 1e-6);
    // Evenly spaced: every 100 ms sample inside the active period holds 100 packets.
    for (t, g) in series(&r, 0) {
        if t > 1.15 && t < 8.95 {
            assert!((g - 8e6).abs() < 1.0, "sample at {t}: {g}");
        }
        if !(1.0..=9.1).contains(&t) {
            assert_eq!(g, 0.0, "sample at {t}");
        }
    }
    let s = &r.flow_series;
    assert!(s.f64("cwnd").iter().all(|c| c.is_nan()) && s.f64("srtt_s").iter().all(|c| c.is_nan()));
}

#[test]
fn a_schedule_steps_and_ramps_the_rate_at_the_given_times() {
    // 2 Mbps, 4 Mbps from 1 s, ramp from 4 Mbps at 2 s to 8 Mbps at 3 s, hold to 4 s.
    let r = run(&dumbbell(
        "4s",
        FAST,
        r#"[[flows]]
transport = "udp"
[flows.source]
kind = "cbr"
rate = "2Mbps"
schedule = [["1s", "4Mbps"], ["2s", "4Mbps"], ["3s", "8Mbps", "ramp"]]"#,
    ));
    conservation(&r);
    let packet = 8000.0 / 0.1; // one packet in a 100 ms sample
    for (t, g) in series(&r, 0) {
        // Samples cover (t - 0.1, t]; packets arrive about 7 ms after they leave.
        let mid = t - 0.05 - 0.007;
        let want = match mid {
            m if m < 0.95 => 2e6,
            m if (1.05..1.95).contains(&m) => 4e6,
            m if (2.05..2.95).contains(&m) => 4e6 + 4e6 * (m - 2.0),
            m if m > 3.05 => 8e6,
            _ => continue,
        };
        assert!((g - want).abs() <= packet + 1.0, "sample at {t}: {g} vs {want}");
    }
    // The integral: 2 + 4 + 6 + 8 Mbit = 20 Mbit = 2500 packets; the last ones may be in flight.
    let f = &r.flows;
    assert!((f.i64("packets_sent")[0] - 2500).abs() <= 1, "{}", f.i64("packets_sent")[0]);
    assert!(f.i64("packets_received")[0] >= 2500 - 10);
}

#[test]
fn udp_cbr_takes_its_rate_and_tcp_gets_the_rest() {
    // Damjanović (2010), S6, shortened: 15 Mbps / 20 ms shared link, UDP CBR 10 Mbps from 8 s.
    let r = run(&dumbbell(
        "18s",
        r#"{ rate = "15Mbps", delay = "20ms", queue = { limit = 60 } }"#,
        r#"[[flows]]
name = "tcp"
tcp = { recovery = "sack" }
[[flows]]
name = "udp"
transport = "udp"
start = "8s"
source = { kind = "cbr", rate = "10Mbps" }"#,
    ));
    conservation(&r);
    let late = |flow: i64, from: f64| {
        let v: Vec<f64> = series(&r, flow).into_iter().filter(|&(t, _)| t > from).map(|p| p.1).collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let tcp_alone = (0..r.flow_series.rows())
        .filter(|&i| r.flow_series.i64("flow")[i] == 0)
        .filter(|&i| (5.05..=8.0).contains(&r.flow_series.f64("time_s")[i]))
        .map(|i| r.flow_series.f64("goodput_bps")[i])
        .sum::<f64>()
        / 30.0;
    let (tcp, udp) = (late(0, 10.0), late(1, 10.0));
    // Alone, TCP fills the link (payload share 1460/1500).
    assert!(tcp_alone > 0.9 * 15e6 * 1460.0 / 1500.0, "TCP alone {tcp_alone}");
    // With the CBR on: UDP keeps (nearly) its rate, TCP gets what is left of the wire.
    assert!(udp > 0.95 * 10e6 && udp <= 10e6 + 1e5, "UDP {udp}");
    let rest = (15e6 - udp * 1028.0 / 1000.0) * 1460.0 / 1500.0;
    assert!(tcp > 0.8 * rest && tcp < 1.05 * rest, "TCP {tcp} of {rest}");
    let f = &r.flows;
    assert_eq!(text(&r, "transport", 0), "tcp");
    assert_eq!(text(&r, "source", 0), "");
    // TCP's data segments have one-way delays too, at least the empty path's.
    assert!(f.f64("delay_mean_s")[0] >= f.f64("delay_min_s")[0] && f.f64("delay_min_s")[0] > 0.0);
    assert!(f.i64("drops")[1] > 0, "the CBR loses packets to TCP's overshoots");
}

#[test]
fn vbr_long_run_mean_rate() {
    // Hasegawa (2000) §4.3.3's VBR background: 4.5 Mbit/s mean, 14.84 Mbit/s peak, 30 frames/s.
    let r = run(&dumbbell(
        "20s",
        FAST,
        r#"[[flows]]
transport = "udp"
count = 2
start_spacing = "10ms"
source = { kind = "vbr", rate = "4.5Mbps", peak = "14.84Mbps" }"#,
    ));
    conservation(&r);
    for i in 0..2 {
        let g = r.flows.f64("goodput_bps")[i];
        assert!((g / 4.5e6 - 1.0).abs() < 0.03, "flow {i}: {g}");
        assert_eq!(r.flows.i64("drops")[i], 0);
    }
    // The two flows draw from their own streams.
    assert_ne!(r.flows.i64("packets_sent")[0], r.flows.i64("packets_sent")[1]);
}

#[test]
fn poisson_and_on_off_long_run_rates() {
    let r = run(&dumbbell(
        "30s",
        FAST,
        r#"[[flows]]
name = "poisson"
transport = "udp"
source = { kind = "poisson", rate = "4Mbps", packet_size = "500B" }
[[flows]]
name = "expoo"
transport = "udp"
source = { kind = "on_off", rate = "8Mbps", on = "100ms", off = "100ms" }
[[flows]]
name = "poo"
transport = "udp"
source = { kind = "on_off", rate = "8Mbps", on = "50ms", off = "150ms", periods = "pareto", shape = 2.5 }"#,
    ));
    conservation(&r);
    let g = r.flows.f64("goodput_bps");
    // Poisson: 30 000 packets, relative standard error 0.6 %.
    assert!((g[0] / 4e6 - 1.0).abs() < 0.025, "poisson {}", g[0]);
    // On/off: 150 cycles; exponential cycles have a CV near 0.7 (s.e. 6 %), Pareto more.
    assert!((g[1] / 4e6 - 1.0).abs() < 0.2, "exponential on/off {}", g[1]);
    assert!((g[2] / 2e6 - 1.0).abs() < 0.3, "pareto on/off {}", g[2]);
}

#[test]
fn jitter_breaks_phase_locking_but_keeps_the_rate() {
    // Two identical CBR flows whose packets reach the 10 Mbps bottleneck at the same instants:
    // without jitter the second of each pair always waits the same time behind the first, so
    // every packet of a flow sees the same delay; jitter varies the phases and the delays.
    let flows = |jitter: &str| {
        dumbbell(
            "5s",
            r#"{ rate = "10Mbps", delay = "5ms", queue = { limit = 100 } }"#,
            &format!(
                r#"[[flows]]
count = 2
transport = "udp"
source = {{ kind = "cbr", rate = "4Mbps", jitter = "{jitter}" }}"#
            ),
        )
    };
    let (a, b) = (run(&flows("0s")), run(&flows("1ms")));
    conservation(&a);
    conservation(&b);
    for i in 0..2 {
        let (fa, fb) = (&a.flows, &b.flows);
        let spread = |f: &flowshare_core::results::Table| f.f64("delay_max_s")[i] - f.f64("delay_mean_s")[i];
        assert!(spread(fa) < 1e-9, "flow {i}: delays vary without jitter");
        assert!(spread(fb) > 100e-6, "flow {i}: jitter leaves the delays constant");
        let (ga, gb) = (fa.i64("bytes_delivered")[i], fb.i64("bytes_delivered")[i]);
        assert!((ga - gb).abs() <= 1000, "flow {i}: {ga} vs {gb}");
        assert_eq!(fb.i64("drops")[i], 0);
    }
}

#[test]
fn runs_are_deterministic_and_streams_are_named_by_flow() {
    let text = dumbbell(
        "3s",
        r#"{ rate = "10Mbps", delay = "10ms", queue = { limit = 30 } }"#,
        r#"[[flows]]
name = "tcp"
[[flows]]
name = "bursts"
transport = "udp"
source = { kind = "on_off", rate = "6Mbps", on = "50ms", off = "50ms", jitter = "1ms" }
[[flows]]
name = "video"
transport = "udp"
source = { kind = "vbr", rate = "2Mbps", peak = "6Mbps", spread = false }"#,
    );
    let (a, b) = (run(&text), run(&text));
    assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));
    assert_eq!(format!("{:?}", a.flow_series), format!("{:?}", b.flow_series));
    assert_eq!(format!("{:?}", a.queues), format!("{:?}", b.queues));
    // Another seed changes the random sources.
    let c = run(&text.replace("duration = \"3s\"", "duration = \"3s\"\nseed = 2"));
    assert_ne!(a.flows.i64("packets_sent")[1], c.flows.i64("packets_sent")[1]);
    // Adding a group with another name does not change the numbers the sources draw.
    let d = run(&text.replace("[[flows]]\nname = \"tcp\"", "[[flows]]\nname = \"tcp\"\n[[flows]]\nname = \"other\""));
    assert_eq!(a.flows.i64("packets_sent")[1], d.flows.i64("packets_sent")[2]);
}

#[test]
fn transport_and_source_errors_name_the_field() {
    let err = |flows: &str| match scenario::from_toml(&dumbbell("1s", FAST, flows)).and_then(|s| s.build()) {
        Ok(_) => panic!("accepted: {flows}"),
        Err(e) => e.to_string(),
    };
    assert_eq!(err("[[flows]]\ntransport = \"udp\""), "flows[0].source: is required with transport = \"udp\"");
    assert_eq!(
        err("[[flows]]\nsource = { kind = \"cbr\", rate = \"1Mbps\" }"),
        "flows[0].source: only allowed with transport = \"udp\""
    );
    assert_eq!(
        err("[[flows]]\ntransport = \"udp\"\nsource = { kind = \"cbr\", rate = \"1Mbps\" }\ntcp = { mss = \"1000B\" }"),
        "flows[0].tcp: not used with transport = \"udp\""
    );
    assert!(err("[[flows]]\ntransport = \"quic\"").starts_with("flows[0].transport: unknown variant `quic`"));
    let e = err("[[flows]]\ntransport = \"udp\"\nsource = { kind = \"cbr\", schedule = [[\"1s\"]] }");
    assert!(e.starts_with("flows[0].source.schedule[0]: invalid length 1"), "{e}");
    let e = err("[[flows]]\ntransport = \"udp\"\nsource = { kind = \"cbr\", rate = \"1Mbps\", ratee = 3 }");
    assert!(e.starts_with("flows[0].source.ratee: unknown field `ratee`"), "{e}");
}

#[test]
fn tcp_only_scenarios_normalize_as_before() {
    let s = scenario::from_toml(&dumbbell("1s", FAST, "[[flows]]\ncount = 2")).unwrap();
    let j = s.to_json();
    assert!(!j.contains("transport") && !j.contains("source"), "{j}");
    let u = scenario::from_toml(&dumbbell(
        "1s",
        FAST,
        "[[flows]]\ntransport = \"udp\"\nsource = { kind = \"cbr\", schedule = [[\"0s\", \"1Mbps\"], [\"1s\", \"2Mbps\", \"ramp\"]] }",
    ))
    .unwrap();
    let j = u.to_json();
    assert!(j.contains(r#""transport":"udp""#) && j.contains(r#"["1s","2Mbps","ramp"]"#), "{j}");
    assert_eq!(scenario::from_json(&j).unwrap().to_json(), j);
}
