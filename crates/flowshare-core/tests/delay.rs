//! One-way delay statistics and histograms, flow-completion times and the warm-up, checked
//! against hand computations on small dumbbells.
//!
//! The dumbbell of these tests: 100 Mbps / 2 ms access links and a 10 Mbps / 10 ms
//! bottleneck. A CBR packet of 1000 payload bytes is 1028 bytes on the wire: 82.24 µs on an
//! access link and 822.4 µs on the bottleneck, so without a queue its one-way delay is
//! 2 + 10 + 2 ms of propagation plus 2 · 82.24 + 822.4 µs = 14.98688 ms exactly.

use flowshare_core::results::{Column, RunResults, Table};

mod common;

use common::run;

/// One-way delay of a 1028-byte packet through the empty dumbbell, ns.
const CBR_OWD_NS: u64 = 14_986_880;

fn dumbbell(duration: &str, warmup: &str, limit: u32, rest: &str) -> String {
    format!(
        r#"
[simulation]
duration = "{duration}"
warmup = "{warmup}"
seed = 3
sample_interval = "100ms"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "10Mbps", delay = "10ms", queue = {{ limit = {limit} }} }}
access = {{ rate = "100Mbps", delay = "2ms", queue = {{ limit = 10000 }} }}
{rest}
"#
    )
}

const CBR: &str = r#"
[[flows]]
name = "cbr"
transport = "udp"
source = { kind = "cbr", rate = "1Mbps" }
"#;

const RENO: &str = r#"
[[flows]]
name = "bulk"
start = "0s"
[flows.tcp]
recovery = "newreno"
mss = "1460B"
header = "40B"
ack_size = "40B"
initial_window = 2
delayed_ack = false
"#;

/// The delay histogram rows of flow `f`: (lo, hi, count), seconds.
fn bins(r: &RunResults, f: i64) -> Vec<(f64, f64, i64)> {
    let d = &r.delays;
    (0..d.rows())
        .filter(|&i| d.i64("flow")[i] == f)
        .map(|i| (d.f64("bin_lo_s")[i], d.f64("bin_hi_s")[i], d.i64("count")[i]))
        .collect()
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn cbr_below_capacity_has_propagation_plus_serialization_delay_and_no_jitter() {
    let r = run(&dumbbell("2s", "0s", 100, CBR));
    let f = &r.flows;
    let owd = CBR_OWD_NS as f64 / 1e9;
    for col in ["delay_mean_s", "delay_min_s", "delay_max_s", "delay_p50_s", "delay_p95_s", "delay_p99_s"] {
        assert!(close(f.f64(col)[0], owd, 1e-12), "{col} = {} != {owd}", f.f64(col)[0]);
    }
    assert_eq!(f.f64("jitter_s")[0], 0.0);
    assert_eq!(f.f64("ipdv_mean_s")[0], 0.0);
    // One packet each 8 ms from 0: those sent at 0, 8, …, 1984 ms have arrived by 2 s.
    assert_eq!(f.i64("delay_packets")[0], 249);
    assert_eq!(f.i64("delay_packets")[0], f.i64("packets_received")[0]);
    // Every delay is the same: one bin, which holds 14.98688 ms and is at most 1/32 wide.
    let b = bins(&r, 0);
    assert_eq!(b.len(), 1);
    let (lo, hi, n) = b[0];
    assert!(lo <= owd && owd < hi && (hi - lo) <= lo / 32.0 + 1e-15, "[{lo}, {hi})");
    assert_eq!(n, 249);
    assert_eq!(f.f64("loss_rate")[0], 0.0);
}

#[test]
fn queueing_behind_a_tcp_flow_shows_in_the_tail() {
    let r = run(&dumbbell("6s", "0s", 60, &format!("{CBR}{RENO}")));
    let f = &r.flows;
    let owd = CBR_OWD_NS as f64 / 1e9;
    let (min, p50, p95, p99, max) = (
        f.f64("delay_min_s")[0],
        f.f64("delay_p50_s")[0],
        f.f64("delay_p95_s")[0],
        f.f64("delay_p99_s")[0],
        f.f64("delay_max_s")[0],
    );
    // Never less than the empty path; TCP keeps the 60-packet queue busy, and a full queue
    // (about 60 · 1.2 ms = 72 ms) shows in the tail.
    assert!(min >= owd - 1e-12, "min {min}");
    assert!(min <= p50 && p50 <= p95 && p95 <= p99 && p99 <= max, "{min} {p50} {p95} {p99} {max}");
    assert!(p99 > owd + 0.040, "p99 {p99} shows no queueing");
    assert!(max <= owd + 61.0 * 1.2e-3 + 1e-3, "max {max} beyond a full queue");
    assert!(f.f64("jitter_s")[0] > 0.0 && f.f64("ipdv_mean_s")[0] > 0.0);
    // TCP's data packets are measured too: 1500 bytes, so at least 2 · 0.12 + 1.2 ms + 14 ms.
    let tcp_base = 0.014 + 2.0 * 1500.0 * 8.0 / 100e6 + 1500.0 * 8.0 / 10e6;
    assert!(f.f64("delay_min_s")[1] >= tcp_base - 1e-12, "{}", f.f64("delay_min_s")[1]);
    assert!(f.f64("delay_p99_s")[1] > tcp_base + 0.040);
    // Histograms hold every packet counted, flow by flow.
    for flow in 0..2 {
        let total: i64 = bins(&r, flow).iter().map(|b| b.2).sum();
        assert_eq!(total, f.i64("delay_packets")[flow as usize], "flow {flow}");
        assert_eq!(total, f.i64("packets_received")[flow as usize], "flow {flow}");
    }
}

/// The exact one-way delays of flow 0's packets, from a trace of sends and receptions, ns.
fn traced_delays(r: &RunResults) -> Vec<i64> {
    let e: &Table = r.trace.events.as_ref().expect("events traced");
    let kinds = &flowshare_core::trace::code_names()[0].1;
    let code = |name: &str| kinds.iter().position(|k| *k == name).unwrap() as i64;
    let (send, recv) = (code("send"), code("receive"));
    let (kind, flow, seq, time) = (e.i64("kind"), e.i64("flow"), e.i64("seq"), e.i64("time_ns"));
    let mut sent = std::collections::HashMap::new();
    let mut delays = Vec::new();
    for i in 0..e.rows() {
        if flow[i] != 0 {
            continue;
        }
        if kind[i] == send {
            sent.insert(seq[i], time[i]);
        } else if kind[i] == recv {
            delays.push(time[i] - sent[&seq[i]]);
        }
    }
    delays.sort_unstable();
    delays
}

#[test]
fn percentiles_from_the_histogram_are_within_half_a_bin_of_the_exact_ones() {
    let rest = format!("{CBR}{RENO}\n[trace]\nevents = true\nkinds = [\"send\", \"receive\"]\n");
    let r = run(&dumbbell("4s", "0s", 60, &rest));
    let exact = traced_delays(&r);
    let f = &r.flows;
    assert_eq!(exact.len() as i64, f.i64("delay_packets")[0]);
    assert_eq!(*exact.first().unwrap() as f64 / 1e9, f.f64("delay_min_s")[0]);
    assert_eq!(*exact.last().unwrap() as f64 / 1e9, f.f64("delay_max_s")[0]);
    let mean = exact.iter().sum::<i64>() as f64 / exact.len() as f64 / 1e9;
    assert!(close(f.f64("delay_mean_s")[0], mean, 1e-12));
    for (p, col) in [(50.0, "delay_p50_s"), (95.0, "delay_p95_s"), (99.0, "delay_p99_s")] {
        // Nearest rank.
        let rank = (p / 100.0 * exact.len() as f64).ceil() as usize;
        let x = exact[rank - 1] as f64 / 1e9;
        let got = f.f64(col)[0];
        assert!((got - x).abs() <= x / 64.0 + 1e-9, "{col}: {got} vs exact {x}");
    }
    assert!(f.f64("jitter_s")[0] > 0.0);
}

#[test]
fn warmup_keeps_histogram_and_counts_to_packets_delivered_after_it() {
    let r = run(&dumbbell("4s", "2s", 100, CBR));
    let f = &r.flows;
    // Packets sent at k · 8 ms arrive at k · 8 ms + 14.98688 ms: those arriving in [2 s, 4 s]
    // are k = 249 … 498.
    assert_eq!(f.i64("delay_packets")[0], 250);
    assert_eq!(bins(&r, 0).iter().map(|b| b.2).sum::<i64>(), 250);
    assert_eq!(f.i64("steady_bytes_delivered")[0], 250 * 1000);
    // Whole-run counts are unchanged by the warm-up.
    assert_eq!(f.i64("packets_received")[0], 499);
    // Goodput over [2 s, 4 s]: 250 packets of 1000 bytes.
    assert!(close(f.f64("goodput_bps")[0], 250.0 * 8000.0 / 2.0, 1e-6));
    assert!(close(f.f64("delay_mean_s")[0], CBR_OWD_NS as f64 / 1e9, 1e-12));
    assert_eq!(r.summary.warmup_s, 2.0);
}

/// A late flow alone on the bottleneck after an early one has stopped.
fn early_and_late(warmup: &str) -> RunResults {
    let flows = r#"
[[flows]]
name = "early"
start = "0s"
stop = "1s"
[flows.tcp]
initial_window = 2
delayed_ack = false
[[flows]]
name = "late"
start = "2.5s"
[flows.tcp]
initial_window = 2
delayed_ack = false
"#;
    run(&dumbbell("4s", warmup, 40, flows))
}

#[test]
fn a_flow_that_starts_after_the_warmup_is_unaffected() {
    let (plain, warm) = (early_and_late("0s"), early_and_late("2s"));
    for col in [
        "goodput_bps",
        "cwnd_mean",
        "cwnd_max",
        "rtt_mean_s",
        "rtt_min_s",
        "rtt_max_s",
        "delay_mean_s",
        "delay_p99_s",
        "jitter_s",
        "loss_rate",
    ] {
        assert_eq!(plain.flows.f64(col)[1].to_bits(), warm.flows.f64(col)[1].to_bits(), "{col}");
    }
    assert_eq!(plain.flows.i64("delay_packets")[1], warm.flows.i64("delay_packets")[1]);
    // The early flow was done (its data delivered) before the warm-up ended: no steady state.
    assert!(warm.flows.f64("goodput_bps")[0].is_nan());
    assert!(warm.flows.f64("cwnd_mean")[0].is_nan());
    assert_eq!(warm.flows.i64("delay_packets")[0], 0);
    assert!(plain.flows.f64("goodput_bps")[0] > 0.0);
    // Time series cover the whole run either way.
    assert_eq!(plain.flow_series.rows(), warm.flow_series.rows());
}

fn bulk(duration: &str, warmup: &str) -> RunResults {
    run(&dumbbell(duration, warmup, 100, RENO))
}

#[test]
fn warmup_excludes_the_slow_start_spike_from_the_window_figures() {
    // Slow start overshoots the 100-packet queue (BDP ≈ 24 packets) and halves; the warm-up
    // of 1.5 s covers the overshoot.
    let (full, warm, first) = (bulk("6s", "0s"), bulk("6s", "1.5s"), bulk("1.5s", "0s"));
    let f = |r: &RunResults, col: &str| r.flows.f64(col)[0];
    assert!(f(&warm, "cwnd_max") < f(&full, "cwnd_max"), "{} {}", f(&warm, "cwnd_max"), f(&full, "cwnd_max"));
    assert!(f(&warm, "cwnd_mean") < f(&full, "cwnd_mean"), "{} {}", f(&warm, "cwnd_mean"), f(&full, "cwnd_mean"));
    // Hand computation: the window integral over [1.5 s, 6 s] is the whole run's less that of
    // a run that ends at 1.5 s (the same first 1.5 s: runs are deterministic).
    let expect = (f(&full, "cwnd_mean") * 6.0 - f(&first, "cwnd_mean") * 1.5) / 4.5;
    assert!(close(f(&warm, "cwnd_mean"), expect, 1e-9 * expect), "{} vs {expect}", f(&warm, "cwnd_mean"));
    // The same for goodput (bytes) and the mean RTT (sum over samples).
    let bytes = |r: &RunResults| r.flows.i64("bytes_delivered")[0];
    assert_eq!(warm.flows.i64("steady_bytes_delivered")[0], bytes(&full) - bytes(&first));
    let goodput = (bytes(&full) - bytes(&first)) as f64 * 8.0 / 4.5;
    assert!(close(f(&warm, "goodput_bps"), goodput, 1e-6));
    let samples = |r: &RunResults| r.flows.i64("rtt_samples")[0];
    assert_eq!(samples(&warm), samples(&full) - samples(&first));
    let rtt = (f(&full, "rtt_mean_s") * samples(&full) as f64 - f(&first, "rtt_mean_s") * samples(&first) as f64)
        / samples(&warm) as f64;
    assert!(close(f(&warm, "rtt_mean_s"), rtt, 1e-9));
    // Queue means over the steady state.
    let q = |r: &RunResults, col: &str| r.queues.f64(col)[0];
    let len = (q(&full, "mean_len_pkts") * 6.0 - q(&first, "mean_len_pkts") * 1.5) / 4.5;
    assert!(close(q(&warm, "mean_len_pkts"), len, 1e-6), "{} vs {len}", q(&warm, "mean_len_pkts"));
    let util = (q(&full, "utilization") * 6.0 - q(&first, "utilization") * 1.5) / 4.5;
    assert!(close(q(&warm, "utilization"), util, 1e-9));
    // Drop counts are whole-run; the drop rate is the steady state's.
    assert_eq!(warm.queues.i64("drops")[0], full.queues.i64("drops")[0]);
    let rate = (full.queues.i64("drops")[0] - first.queues.i64("drops")[0]) as f64
        / (full.queues.i64("arrivals")[0] - first.queues.i64("arrivals")[0]) as f64;
    assert!(close(q(&warm, "drop_rate"), rate, 1e-12));
}

#[test]
fn fct_of_one_transfer_over_an_idle_path_is_handshake_plus_rounds() {
    // 10 segments of 1460 bytes (1500 on the wire, 1.2 ms on the bottleneck; 40-byte SYN,
    // SYN-ACK and ACKs), window 2, no delayed ACKs. A small packet crosses one way in
    // 2 · (0.0032 + 2000) + 10000 + 32 µs = 14.0384 ms (40 bytes: 3.2 µs on an access link,
    // 32 µs on the bottleneck).
    // Handshake: 2 · 14.0384 = 28.0768 ms. Round 1 (segments 1–2): the first reaches the
    // receiver after 2 · 120 µs + 14 ms + 1.2 ms; its ACK returns 14.0384 ms later: the
    // first ACK is at A = 29.4784 ms after the handshake. Each ACK then releases two segments,
    // which queue at the bottleneck, so every later round leaves it back to back: round 2
    // (segments 3–6) returns its first ACK at 2A, round 3 (7–10) sends two at each of its
    // first two ACKs and the fourth of its segments leaves the bottleneck 3 · 1.2 ms after
    // the first: the last ACK is at 3A + 3.6 ms.
    let a = 2.0 * 120e-6 + 14e-3 + 1.2e-3 + 14.0384e-3;
    let expect = 2.0 * 14.0384e-3 + 3.0 * a + 3.6e-3;
    let flows = r#"
[[flows]]
name = "transfer"
size = "14600B"
[flows.tcp]
handshake = true
mss = "1460B"
header = "40B"
ack_size = "40B"
initial_window = 2
delayed_ack = false
"#;
    let r = run(&dumbbell("1s", "0s", 100, flows));
    let got = r.flows.f64("completion_time_s")[0];
    assert!((got - expect).abs() <= 1.2e-3, "FCT {got} vs {expect}");
    let t = &r.fct;
    assert_eq!(t.rows(), 2, "all sizes and the 10kB-100kB bucket");
    let text = |col: &str, i: usize| match t.get(col) {
        Some(Column::Str(v)) => v[i].clone(),
        _ => panic!("{col}"),
    };
    assert_eq!((text("size_bucket", 0), text("size_bucket", 1)), ("all".to_string(), "10kB-100kB".to_string()));
    assert_eq!(text("name", 0), "transfer");
    for i in 0..2 {
        assert_eq!(t.i64("transfers")[i], 1);
        assert_eq!(t.i64("unfinished")[i], 0);
        for col in ["fct_mean_s", "fct_min_s", "fct_p50_s", "fct_p90_s", "fct_p99_s", "fct_max_s"] {
            assert!(close(t.f64(col)[i], got, 1e-12), "{col} {}", t.f64(col)[i]);
        }
    }
    assert_eq!((t.i64("size_min_bytes")[1], t.i64("size_max_bytes")[1]), (10_000, 100_000));
}

#[test]
fn fct_summary_of_arrivals_counts_transfers_started_after_the_warmup() {
    let flows = r#"
[[flows]]
name = "web"
[flows.arrivals]
process = "poisson"
rate = 20
size = { dist = "constant", mean = "20000B" }
"#;
    let plain = run(&dumbbell("5s", "0s", 100, flows));
    let warm = run(&dumbbell("5s", "2s", 100, flows));
    let tr = &plain.transfers;
    let starts = tr.f64("start_s");
    let done = tr.f64("completion_time_s");
    let n = |from: f64| (0..tr.rows()).filter(|&i| starts[i] >= from && !done[i].is_nan()).count() as i64;
    let open = |from: f64| (0..tr.rows()).filter(|&i| starts[i] >= from && done[i].is_nan()).count() as i64;
    assert_eq!(plain.fct.i64("transfers")[0], n(0.0));
    assert_eq!(plain.fct.i64("unfinished")[0], open(0.0));
    assert_eq!(warm.fct.i64("transfers")[0], n(2.0));
    assert!(n(2.0) < n(0.0) && n(2.0) > 20);
    let max = (0..tr.rows()).filter(|&i| !done[i].is_nan()).map(|i| done[i]).fold(0.0, f64::max);
    assert!(close(plain.fct.f64("fct_max_s")[0], max, 1e-9));
    let mean = (0..tr.rows()).filter(|&i| !done[i].is_nan()).map(|i| done[i]).sum::<f64>() / n(0.0) as f64;
    assert!(close(plain.fct.f64("fct_mean_s")[0], mean, 1e-9));
}

#[test]
fn warmup_is_validated() {
    let bad = |w: &str| {
        let text = dumbbell("2s", w, 100, CBR);
        let s = flowshare_core::scenario::from_toml(&text);
        match s {
            Err(e) => e.to_string(),
            Ok(s) => match s.build() {
                Err(e) => e.to_string(),
                Ok(_) => panic!("warmup = {w} accepted"),
            },
        }
    };
    let e = bad("2s");
    assert!(e.starts_with("simulation.warmup") && e.contains("less than simulation.duration"), "{e}");
    assert!(!e.contains('\n'));
    let e = bad("10");
    assert!(e.starts_with("simulation.warmup"), "{e}");
    assert!(flowshare_core::scenario::from_toml(&dumbbell("2s", "1999ms", 100, CBR)).unwrap().build().is_ok());
}
