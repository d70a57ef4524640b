//! Replications that vary: TCP draws no random numbers, so only the random elements of a
//! scenario (here the start-time jitter of a flow group) make runs with different seeds differ.

mod common;

use flowshare_core::results::RunResults;

fn dumbbell(seed: u64, jitter: &str) -> String {
    format!(
        r#"
[simulation]
duration = "3s"
seed = {seed}
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "10Mbps", delay = "20ms", queue = {{ limit = 30 }} }}
access = {{ rate = "1Gbps", delay = "1ms" }}
[[flows]]
name = "bulk"
count = 4
start = "100ms"
start_spacing = "10ms"{jitter}
"#
    )
}

fn starts(r: &RunResults) -> Vec<f64> {
    r.flows.f64("start_s").to_vec()
}

#[test]
fn without_a_random_element_every_seed_gives_the_same_run() {
    let (a, b) = (common::run(&dumbbell(1, "")), common::run(&dumbbell(2, "")));
    assert_eq!(a.flows.i64("bytes_delivered"), b.flows.i64("bytes_delivered"));
    assert_eq!(starts(&a), [0.1, 0.11, 0.12, 0.13]);
}

#[test]
fn start_jitter_draws_each_start_from_the_seed() {
    let jitter = "\nstart_jitter = \"500ms\"";
    let runs: Vec<RunResults> = (1..=4).map(|seed| common::run(&dumbbell(seed, jitter))).collect();
    for r in &runs {
        for (k, s) in starts(r).iter().enumerate() {
            let spaced = 0.1 + 0.01 * k as f64;
            assert!(*s >= spaced - 1e-12 && *s <= spaced + 0.5 + 1e-12, "flow {k} starts at {s}");
        }
    }
    // Different seeds: different starts and different results; the same seed: the same run.
    for pair in runs.windows(2) {
        assert_ne!(starts(&pair[0]), starts(&pair[1]));
        assert_ne!(pair[0].flows.i64("bytes_delivered"), pair[1].flows.i64("bytes_delivered"));
    }
    let again = common::run(&dumbbell(3, jitter));
    assert_eq!(starts(&again), starts(&runs[2]));
    assert_eq!(again.flows.i64("bytes_delivered"), runs[2].flows.i64("bytes_delivered"));
    // Spread over the whole interval, not bunched at one end.
    let all: Vec<f64> = runs.iter().flat_map(starts).collect();
    let offsets: Vec<f64> = all.iter().enumerate().map(|(i, s)| s - 0.1 - 0.01 * (i % 4) as f64).collect();
    let mean = common::mean(&offsets);
    assert!(mean > 0.1 && mean < 0.4, "mean offset {mean} of {offsets:?}");
}

#[test]
fn start_jitter_is_refused_with_arrivals() {
    let text = r#"
[simulation]
duration = "1s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "20ms" }
access = { rate = "1Gbps", delay = "1ms" }
[[flows]]
name = "web"
start_jitter = "1s"
arrivals = { process = "poisson", rate = 10, size = "10KB" }
"#;
    let err = flowshare_core::scenario::from_toml(text).and_then(|s| s.build().map(|_| ())).unwrap_err();
    assert_eq!(
        err.to_string(),
        "flows[0].start_jitter: not used with arrivals; the arrival process spaces the connections"
    );
}

/// `rtt_timing = "ns2"`: each connection's clock ticks at a phase drawn from the seed, so the
/// RTT samples (whole ticks) and the retransmission timers of replications differ.
#[test]
fn ns2_rtt_timing_draws_each_clock_phase_from_the_seed() {
    let tcp = "\ntcp = { rtt_timing = \"ns2\", timer_tick = \"10ms\", rto_min = \"10ms\" }";
    let runs: Vec<RunResults> = (1..=4).map(|seed| common::run(&dumbbell(seed, tcp))).collect();
    let srtt = |r: &RunResults| r.flows.f64("srtt_final_s").to_vec();
    assert!(runs.windows(2).any(|p| srtt(&p[0]) != srtt(&p[1])), "the phase changes the samples");
    assert_eq!(srtt(&runs[0]), srtt(&common::run(&dumbbell(1, tcp))), "the same seed: the same run");
    for s in srtt(&runs[0]) {
        // Whole ticks: SRTT is a multiple of 10 ms / 8.
        let eighths = s / 0.010 * 8.0;
        assert!((eighths - eighths.round()).abs() < 1e-6, "srtt {s} is not in ticks/8");
    }
}
