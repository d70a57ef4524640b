//! Stochastic TCP (Hacker and Smith, PFLDnet 2008) in whole simulations: under random loss
//! n virtual streams get about n times one NewReno flow's goodput, n = 1 is NewReno exactly,
//! needing more ACKs per increment makes it less aggressive, it takes from a NewReno flow on a
//! dumbbell what MulTCP(n) takes, runs repeat exactly, and bad parameters name the field.

use flowshare_core::results::RunResults;
use flowshare_core::scenario;

mod common;

use common::{assert_conservation, lossy_dumbbell, run};

/// One TCP flow (NewReno recovery, `cc`) over a 100 Mbps, 20 ms bottleneck that loses 1 % of
/// the data packets (Bernoulli, forward direction only), measured from 5 s.
fn lossy(seconds: u32, seed: u64, cc: &str) -> String {
    lossy_dumbbell(seconds, seed, 20, &format!("tcp = {{ cc = {cc}, recovery = \"newreno\" }}"))
}

/// Goodput of flow 0, bits/s.
fn goodput(r: &RunResults) -> f64 {
    r.flows.f64("goodput_bps")[0]
}

/// Goodput of `cc` over that of NewReno under the same 1 % loss, summed over seeds 1 to 3.
fn ratio_to_reno(cc: &str) -> f64 {
    let (mut x, mut x1) = (0.0, 0.0);
    for seed in 1..=3 {
        let r = run(&lossy(60, seed, cc));
        assert_conservation(&r);
        x += goodput(&r);
        x1 += goodput(&run(&lossy(60, seed, "\"reno\"")));
    }
    eprintln!("{cc}: {:.0} b/s against NewReno {:.0} b/s: {:.3}", x / 3.0, x1 / 3.0, x / x1);
    x / x1
}

#[test]
fn four_streams_get_about_four_newreno_rates() {
    let k = ratio_to_reno("{ algo = \"stochastic\", n = 4 }");
    assert!((2.5..5.5).contains(&k), "{k}");
}

#[test]
fn fewer_increments_make_it_less_aggressive() {
    // With four ACKs per increment four streams add about one segment per RTT together, but
    // a loss still halves only one of them: AIMD(1, 1/8), about 2.2 NewReno rates.
    let k = ratio_to_reno("{ algo = \"stochastic\", n = 4, acks_per_increase = 4 }");
    assert!((1.4..3.2).contains(&k), "{k}");
}

#[test]
fn one_stream_is_newreno_exactly() {
    for seed in [1, 2] {
        let (s, r) = (run(&lossy(30, seed, "{ algo = \"stochastic\", n = 1 }")), run(&lossy(30, seed, "\"reno\"")));
        match s.flows.get("cc") {
            Some(flowshare_core::results::Column::Str(v)) => assert_eq!(v[0], "stochastic"),
            other => panic!("cc column: {other:?}"),
        }
        for col in ["bytes_delivered", "packets_sent", "retransmits", "timeouts"] {
            assert_eq!(s.flows.i64(col), r.flows.i64(col), "{col}");
        }
        assert_eq!(s.flow_series.f64("cwnd"), r.flow_series.f64("cwnd"));
    }
}

/// Flow group `cc` (SACK) against one NewReno flow on a 20 Mbps, 20 ms, 100-packet DropTail
/// dumbbell for 60 s.
fn duel(cc: &str) -> RunResults {
    let r = run(&common::dumbbell(
        60,
        r#"rate = "20Mbps", delay = "20ms", queue = { limit = 100 }"#,
        &format!(
            r#"
[[flows]]
name = "x"
tcp = {{ cc = {cc}, recovery = "sack" }}
[[flows]]
name = "reno"
start = "10ms"
tcp = {{ cc = "reno", recovery = "sack" }}
"#
        ),
    ));
    assert_conservation(&r);
    r
}

#[test]
fn takes_what_multcp_takes_from_newreno() {
    let (st, mul) = (duel("{ algo = \"stochastic\", n = 4 }"), duel("{ algo = \"multcp\", n = 4 }"));
    let (g, m) = (st.flows.f64("goodput_bps"), mul.flows.f64("goodput_bps"));
    eprintln!(
        "stochastic(4) {:.0} b/s, reno {:.0} b/s: {:.2}; multcp(4) {:.0} b/s, reno {:.0} b/s: {:.2}",
        g[0],
        g[1],
        g[0] / g[1],
        m[0],
        m[1],
        m[0] / m[1]
    );
    assert!(g[0] > 2.5 * g[1], "stochastic(4) {} vs reno {}", g[0], g[1]);
    // Four streams that halve one at a time are, on average, MulTCP(4)'s AIMD(4, 1/8).
    assert!((g[0] / m[0] - 1.0).abs() < 0.15, "stochastic(4) {} vs multcp(4) {}", g[0], m[0]);
    // Its state reaches the flow series: n, and the smallest and largest stream once split.
    let s = &st.flow_series;
    let (flow, n, lo, hi) =
        (s.i64("flow"), s.f64("stochastic_n"), s.f64("stochastic_w_min"), s.f64("stochastic_w_max"));
    let late: Vec<usize> = (0..flow.len()).filter(|&i| flow[i] == 0).skip(10).collect();
    assert!(late.iter().all(|&i| n[i] == 4.0));
    let split: Vec<usize> = late.iter().copied().filter(|&i| lo[i].is_finite()).collect();
    assert!(split.len() * 2 > late.len(), "{} of {} samples split", split.len(), late.len());
    assert!(split.iter().all(|&i| lo[i] > 0.0 && lo[i] <= hi[i]));
    assert!((0..flow.len()).filter(|&i| flow[i] == 1).all(|i| n[i].is_nan()), "reno reports no stochastic_n");
}

#[test]
fn same_seed_same_results() {
    let text = lossy(20, 3, "{ algo = \"stochastic\", n = 5 }");
    let (a, b) = (run(&text), run(&text));
    for col in ["bytes_delivered", "packets_sent", "retransmits", "timeouts"] {
        assert_eq!(a.flows.i64(col), b.flows.i64(col), "{col}");
    }
    assert_eq!(a.flow_series.f64("cwnd"), b.flow_series.f64("cwnd"));
    // Another seed draws other streams (and other losses).
    let other = run(&text.replace("seed = 3", "seed = 4"));
    assert_ne!(a.flow_series.f64("cwnd"), other.flow_series.f64("cwnd"));
}

#[test]
fn errors_name_the_field() {
    let err = |cc: &str| match scenario::from_toml(&lossy(10, 1, cc)).and_then(|s| s.build().map(|_| ())) {
        Ok(()) => panic!("accepted {cc}"),
        Err(e) => e.to_string(),
    };
    for (cc, expected) in [
        ("{ algo = \"stochastic\", n = 0 }", "n: must be a whole number of virtual streams from 1 to 64, got 0"),
        ("{ algo = \"stochastic\", n = 2.5 }", "n: must be a whole number of virtual streams from 1 to 64, got 2.5"),
        ("{ algo = \"stochastic\", n = 100 }", "n: must be a whole number of virtual streams from 1 to 64, got 100"),
        ("{ algo = \"stochastic\", acks_per_increase = 0 }", "acks_per_increase: must be a whole number of ACKs"),
        ("{ algo = \"stochastic\", m = 2 }", "unknown field `m`"),
    ] {
        let e = err(cc);
        assert!(e.starts_with("flows[0].tcp.cc") && e.contains(expected) && !e.contains('\n'), "{cc}: {e}");
    }
    // Written out in the normalized scenario, and read back the same.
    let json = scenario::from_toml(&lossy(10, 1, "{ algo = \"stochastic\", n = 3 }")).unwrap().to_json();
    assert!(json.contains(r#"{"algo":"stochastic","n":3,"acks_per_increase":1}"#), "{json}");
    assert_eq!(scenario::from_json(&json).unwrap().to_json(), json);
}
