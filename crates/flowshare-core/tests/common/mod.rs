//! Shared by the integration tests: run a scenario written inline, and read its results.

use flowshare_core::results::RunResults;
use flowshare_core::{scenario, Simulation};

/// Parse, build and run a TOML scenario; a malformed test scenario panics with the loader's
/// one-line error.
#[allow(dead_code)]
pub fn run(toml: &str) -> RunResults {
    let s = scenario::from_toml(toml).unwrap_or_else(|e| panic!("bad test scenario: {e}"));
    Simulation::new(&s).unwrap_or_else(|e| panic!("bad test scenario: {e}")).finish()
}

/// A dumbbell (seed 5, 1 Gbps / 1 ms access links) whose bottleneck is the inline table
/// `bottleneck` (e.g. `rate = "10Mbps", delay = "20ms", queue = { limit = 60 }`), with the
/// flow groups (and other sections) of `rest`, simulated for `seconds`.
#[allow(dead_code)]
pub fn dumbbell(seconds: u32, bottleneck: &str, rest: &str) -> String {
    format!(
        r#"
[simulation]
duration = "{seconds}s"
seed = 5
[topology]
kind = "dumbbell"
bottleneck = {{ {bottleneck} }}
access = {{ rate = "1Gbps", delay = "1ms", queue = {{ limit = 100000 }} }}
{rest}
"#
    )
}

/// Arithmetic mean.
#[allow(dead_code)]
pub fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// The sampled length of queue 0 (the forward bottleneck of a dumbbell) from `from_s` on,
/// packets.
#[allow(dead_code)]
pub fn bottleneck_queue(r: &RunResults, from_s: f64) -> Vec<f64> {
    let s = &r.queue_series;
    let (t, q, len) = (s.f64("time_s"), s.i64("queue"), s.i64("len_pkts"));
    (0..t.len()).filter(|&i| q[i] == 0 && t[i] >= from_s).map(|i| len[i] as f64).collect()
}

/// Every packet is accounted for: per flow, sent = received + dropped + lost on a link + in
/// the network; per queue, arrivals = departures + drops + held, link losses are departures,
/// utilization is a fraction; link losses of the queues and of the flows agree (losses of
/// packets still in transmission at the end count for the flow only).
#[allow(dead_code)]
pub fn assert_conservation(r: &RunResults) {
    let f = &r.flows;
    for i in 0..f.rows() {
        let accounted =
            f.i64("packets_received")[i] + f.i64("drops")[i] + f.i64("link_losses")[i] + f.i64("in_network_end")[i];
        assert_eq!(f.i64("packets_sent")[i], accounted, "flow {i}: sent != received + dropped + lost + in network");
    }
    let q = &r.queues;
    for i in 0..q.rows() {
        let accounted = q.i64("departures")[i] + q.i64("drops")[i] + q.i64("len_end_pkts")[i];
        assert_eq!(q.i64("arrivals")[i], accounted, "queue {i}: arrivals != departures + drops + held");
        assert!(q.i64("link_losses")[i] <= q.i64("departures")[i], "queue {i}: more losses than departures");
        let u = q.f64("utilization")[i];
        assert!((0.0..=1.0 + 1e-9).contains(&u), "queue {i}: utilization {u}");
    }
    let link_total: i64 = q.i64("link_losses").iter().sum();
    let flow_total: i64 = f.i64("link_losses").iter().chain(f.i64("ack_link_losses")).sum();
    assert!(flow_total >= link_total && flow_total - link_total <= 2, "{flow_total} vs {link_total}");
}

/// A 100 Mbps bottleneck of one-way delay `delay_ms` that loses 1 % of the packets
/// (Bernoulli, forward direction only), measured from 5 s, carrying the flow group `flow`
/// (the lines of one `[[flows]]` table after its name).
#[allow(dead_code)]
pub fn lossy_dumbbell(seconds: u32, seed: u64, delay_ms: u32, flow: &str) -> String {
    format!(
        r#"
[simulation]
duration = "{seconds}s"
seed = {seed}
warmup = "5s"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "100Mbps", delay = "{delay_ms}ms", queue = {{ limit = 10000 }}, loss = {{ model = "bernoulli", p = 0.01 }}, reverse = {{ loss = {{ model = "bernoulli", p = 0.0 }} }} }}
access = {{ rate = "1Gbps", delay = "1ms", queue = {{ limit = 100000 }} }}
[[flows]]
name = "f"
{flow}
"#
    )
}

/// One TFRC flow (`[flows.tfrc]` options `tfrc`) on [`lossy_dumbbell`].
#[allow(dead_code)]
pub fn lossy_tfrc(seconds: u32, seed: u64, delay_ms: u32, tfrc: &str) -> String {
    lossy_dumbbell(seconds, seed, delay_ms, &format!("transport = \"tfrc\"\n[flows.tfrc]\n{tfrc}"))
}
