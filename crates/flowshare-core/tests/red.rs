//! RED on a bottleneck: the average stays between the thresholds with long-lived TCP flows,
//! early drops replace overflow drops, and the automatic parameters are ns-2's.

mod common;

use flowshare_core::net::Aqm;
use flowshare_core::scenario;

fn dumbbell(queue: &str, flows: u32, seconds: u32) -> String {
    format!(
        r#"
[simulation]
duration = "{seconds}s"
seed = 3
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "10Mbps", delay = "20ms", queue = {queue} }}
access = {{ rate = "1Gbps", delay = "1ms", queue = {{ limit = 100000 }} }}
[[flows]]
count = {flows}
start_spacing = "10ms"
tcp = {{ initial_window = 2 }}
"#
    )
}

const RED: &str =
    r#"{ kind = "red", limit = 60, min_th = 5, max_th = 15, max_p = 0.1, w_q = 0.002, mode = "packets" }"#;

#[test]
fn red_keeps_the_average_between_the_thresholds() {
    let r = common::run(&dumbbell(RED, 16, 30));
    let q = &r.queues;
    // Row 0 is the bottleneck r0 -> r1.
    let avg = q.f64("red_avg_pkts")[0];
    assert!(avg > 5.0 && avg < 15.0, "time-averaged RED average {avg}");
    let early = q.i64("early_drops")[0];
    let forced = q.i64("forced_drops")[0];
    assert!(early > 100, "early drops {early}");
    assert_eq!(forced + early, q.i64("drops")[0]);
    assert!(q.f64("utilization")[0] > 0.9, "{}", q.f64("utilization")[0]);
    // Sampled after the start-up, the average stays within the band nearly all the time.
    let s = &r.queue_series;
    let (t, queue, avg_t) = (s.f64("time_s"), s.i64("queue"), s.f64("red_avg_pkts"));
    let samples: Vec<f64> = (0..t.len()).filter(|&i| queue[i] == 0 && t[i] >= 5.0).map(|i| avg_t[i]).collect();
    let inside = samples.iter().filter(|&&a| (4.0..=16.0).contains(&a)).count();
    assert!(inside as f64 >= 0.9 * samples.len() as f64, "{inside} of {} samples in band", samples.len());
    // Access links are DropTail: NaN.
    assert!(q.f64("red_avg_pkts")[1] >= 0.0, "the reverse direction is RED too");
    assert!(q.f64("red_avg_pkts")[2].is_nan());
}

#[test]
fn red_has_fewer_forced_drops_than_droptail_with_the_same_limit() {
    let red = common::run(&dumbbell(RED, 16, 30));
    let dt = common::run(&dumbbell("{ kind = \"droptail\", limit = 60 }", 16, 30));
    let red_forced = red.queues.i64("forced_drops")[0];
    let dt_forced = dt.queues.i64("forced_drops")[0];
    assert_eq!(dt.queues.i64("early_drops")[0], 0);
    assert!(dt_forced > 100, "{dt_forced}");
    assert!(red_forced * 5 < dt_forced, "RED forced {red_forced}, DropTail {dt_forced}");
    // And a shorter queue: RED's mean occupancy is well below DropTail's.
    let (rq, dq) = (red.queues.f64("mean_len_pkts")[0], dt.queues.f64("mean_len_pkts")[0]);
    assert!(rq < 0.6 * dq, "RED {rq}, DropTail {dq}");
    assert!(red.queues.get("red_avg_pkts").is_some() && dt.queues.get("red_avg_pkts").is_none());
}

#[test]
fn automatic_parameters_on_a_built_link_are_ns2s() {
    // ns-2.35 values for 10 Mb / 20 ms and 1 Gb / 20 ms links with mean_pktsize_ 1000
    // (see net::red's automatic_parameters_equal_ns2).
    for (rate, w_q, min_th, max_th) in
        [("10Mbps", 0.000799680085316, 5.0, 15.0), ("1Gbps", 7.99996800005e-06, 312.5, 937.5)]
    {
        let text = dumbbell(
            r#"{ kind = "red", mean_pktsize = "1000B", w_q = "auto", min_th = "auto", max_th = "auto" }"#,
            1,
            1,
        )
        .replace("\"10Mbps\"", &format!("\"{rate}\""));
        let b = scenario::from_toml(&text).unwrap().build().unwrap();
        for dir in 0..2 {
            let Some(r) = b.net.links[dir].red() else { panic!("not RED") };
            assert!((r.params.w_q / w_q - 1.0).abs() < 1e-9, "{rate}: {}", r.params.w_q);
            assert_eq!((r.params.min_th, r.params.max_th), (min_th, max_th));
            assert!(r.params.bytes && r.params.gentle && r.params.wait, "ns-2 defaults");
            assert_eq!(r.params.max_p, 0.1);
        }
        assert!(matches!(b.net.links[2].aqm(), Some(Aqm::DropTail)));
    }
}

#[test]
fn adaptive_red_raises_max_p_under_heavy_load() {
    // 32 flows on a 10 Mbps link with max_p starting at 0.02: the average sits above the
    // target band, so Adaptive RED raises max_p.
    let q = r#"{ kind = "red", limit = 100, min_th = 5, max_th = 15, max_p = 0.02, w_q = 0.002, mode = "packets", adaptive = true }"#;
    let r = common::run(&dumbbell(q, 32, 20));
    let max_p = r.queues.f64("red_max_p")[0];
    assert!(max_p > 0.05, "max_p {max_p}");
    let fixed = common::run(&dumbbell(&q.replace("adaptive = true", "adaptive = false"), 32, 20));
    assert_eq!(fixed.queues.f64("red_max_p")[0], 0.02);
    // Adapting keeps the average lower than with the fixed max_p.
    let (a, f) = (r.queues.f64("red_avg_pkts")[0], fixed.queues.f64("red_avg_pkts")[0]);
    assert!(a < f, "adaptive {a}, fixed {f}");
}

#[test]
fn red_runs_are_deterministic_and_seeded() {
    let a = common::run(&dumbbell(RED, 4, 5));
    let b = common::run(&dumbbell(RED, 4, 5));
    assert_eq!(format!("{:?}", a.queues), format!("{:?}", b.queues));
    let c = common::run(&dumbbell(RED, 4, 5).replace("seed = 3", "seed = 4"));
    assert_ne!(a.queues.i64("early_drops")[0], 0);
    assert_ne!(format!("{:?}", a.queues), format!("{:?}", c.queues));
}
