//! Signature behaviour of DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257): with step marking at
//! K, several flows hold the queue near K, keep the link busy and lose nothing.

use flowshare_core::results::RunResults;

mod common;

use common::{bottleneck_queue, mean, run};

const SCENARIO: &str = include_str!("../../../scenarios/dctcp-marking.toml");
const K: f64 = 20.0;

fn flow_mean(r: &RunResults, column: &str, from_s: f64) -> f64 {
    let s = &r.flow_series;
    let (t, v) = (s.f64("time_s"), s.f64(column));
    mean(&(0..t.len()).filter(|&i| t[i] >= from_s).map(|i| v[i]).collect::<Vec<_>>())
}

#[test]
fn dctcp_holds_the_queue_near_k_without_drops() {
    let r = run(SCENARIO);
    let q = mean(&bottleneck_queue(&r, 1.0));
    let util = r.queues.f64("utilization")[0];
    // Payload delivered over the whole run (per-flow goodput counts from each flow's start).
    let goodput = r.flows.i64("bytes_delivered").iter().sum::<i64>() as f64 * 8.0 / 10.0;
    let marks = r.queues.i64("ecn_marks")[0];
    let alpha = flow_mean(&r, "dctcp_alpha", 1.0);
    eprintln!(
        "DCTCP: mean queue {q:.1} pkts (K = {K}), max {}, utilization {util:.4}, goodput {:.2} Mbit/s, \
         drops {}, marks {marks}, mean alpha {alpha:.3}",
        r.queues.i64("max_len_pkts")[0],
        goodput / 1e6,
        r.queues.i64("drops")[0]
    );
    assert!(q > 0.5 * K && q < 1.6 * K, "mean queue {q} packets, K = {K}");
    assert!(r.queues.i64("max_len_pkts")[0] < 100, "the 200-packet buffer is never close to full");
    assert_eq!(r.queues.i64("drops")[0], 0);
    assert!(util > 0.98, "utilization {util}");
    assert!(goodput > 0.97 * 100e6 * 1460.0 / 1500.0, "goodput {goodput}");
    assert!(marks > 100);
    // Every flow reacted to marks, and α settled well below its initial 1.
    for i in 0..4 {
        assert!(r.flows.i64("ecn_reductions")[i] > 10, "flow {i}");
    }
    assert!(alpha > 0.01 && alpha < 0.5, "mean α {alpha}");
    // The flows share the link fairly (Jain's index over goodput).
    let g = r.flows.f64("goodput_bps");
    let jain = g.iter().sum::<f64>().powi(2) / (4.0 * g.iter().map(|x| x * x).sum::<f64>());
    assert!(jain > 0.95, "Jain's index {jain}");
    common::assert_conservation(&r);
}

/// The same flows with classic ECN and Reno halve on every mark: the queue empties and the
/// link idles, where DCTCP's proportional cut keeps it busy (the paper's Figure 1 argument).
#[test]
fn reno_with_ecn_underuses_the_link_at_the_same_threshold() {
    let reno = SCENARIO.replace("cc = \"dctcp\"", "cc = \"reno\"\necn = true");
    let r = run(&reno);
    let d = run(SCENARIO);
    let (u_reno, u_dctcp) = (r.queues.f64("utilization")[0], d.queues.f64("utilization")[0]);
    let (q_reno, q_dctcp) = (mean(&bottleneck_queue(&r, 1.0)), mean(&bottleneck_queue(&d, 1.0)));
    eprintln!("utilization: Reno+ECN {u_reno:.4}, DCTCP {u_dctcp:.4}; mean queue {q_reno:.1} vs {q_dctcp:.1}");
    assert!(u_reno < u_dctcp, "Reno+ECN {u_reno} vs DCTCP {u_dctcp}");
    assert!(q_reno < q_dctcp);
}

/// K in bytes marks the same as K in packets of that size; RED with the threshold marks at K
/// too (its own early marking never starts with thresholds far above).
#[test]
fn threshold_in_bytes_and_on_red() {
    let bytes = SCENARIO.replace("ecn_threshold = 20", "ecn_threshold = \"30000B\"");
    let r = run(&bytes);
    let q = mean(&bottleneck_queue(&r, 1.0));
    assert!(q > 0.5 * K && q < 1.6 * K, "bytes: mean queue {q}");
    assert_eq!(r.queues.i64("drops")[0], 0);
    let red = SCENARIO.replace(
        "queue = { limit = 200, ecn_threshold = 20 }",
        "queue = { kind = \"red\", limit = 200, min_th = 150, max_th = 190, ecn = true, mode = \"packets\", ecn_threshold = 20 }",
    );
    let r = run(&red);
    let q = mean(&bottleneck_queue(&r, 1.0));
    assert!(q > 0.5 * K && q < 1.6 * K, "red: mean queue {q}");
    assert_eq!(r.queues.i64("drops")[0], 0);
}

#[test]
fn threshold_errors_name_the_field() {
    let cases = [
        (
            "queue = { limit = 200, ecn_threshold = 0 }",
            "topology.bottleneck.queue.ecn_threshold: must be at least 1 packet",
        ),
        (
            "queue = { kind = \"fq_codel\", limit = 200, ecn_threshold = 20 }",
            "topology.bottleneck.queue.ecn_threshold: is not a field of kind \"fq_codel\"",
        ),
        ("queue = { limit = 200, ecn_threshold = \"lots\" }", "ecn_threshold"),
    ];
    for (queue, expected) in cases {
        let text = SCENARIO.replace("queue = { limit = 200, ecn_threshold = 20 }", queue);
        let err = flowshare_core::scenario::from_toml(&text).and_then(|s| s.build().map(|_| ())).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(expected) && !msg.contains('\n'), "{queue}: {msg}");
    }
}
