//! Signature behaviour of Compound TCP: the delay window grows only while the path's queue is
//! near empty and gives way once the flow's own queue passes γ, and on an empty path with a
//! large bandwidth-delay product the window opens far faster than Reno's.

use flowshare_core::results::RunResults;

mod common;

use common::{bottleneck_queue, run};

const PAPER: &str = "\"compound\"";
const NS2: &str = "{ algo = \"compound\", variant = \"ns2\" }";

/// One flow over a dumbbell with a 20 ms bottleneck of `rate` and 1 ms access links (RTT 44 ms
/// plus queueing), starting in congestion avoidance at 20 segments, sampled every 10 ms: every
/// round lasts at least one RTT, so a sampling interval holds at most one delay decision.
fn lone(cc: &str, rate: &str, delay: &str, queue: u32, duration: &str) -> RunResults {
    run(&format!(
        r#"
[simulation]
duration = "{duration}"
sample_interval = "10ms"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "{rate}", delay = "{delay}", queue = {{ limit = {queue} }} }}
access = {{ rate = "10Gbps", delay = "1ms", queue = {{ limit = 100000 }} }}
[[flows]]
tcp = {{ cc = {cc}, initial_ssthresh = 20 }}
"#
    ))
}

fn max(x: &[f64]) -> f64 {
    x.iter().cloned().fold(f64::MIN, f64::max)
}

/// The last sampled value of a flow-series column.
fn last(r: &RunResults, column: &str) -> f64 {
    *r.flow_series.f64(column).last().expect("samples")
}

/// 50 Mbps × 44 ms holds about 183 segments and the queue 300 more, so a lone flow never
/// loses a packet in 8 s. CTCP's delay window grows in every round whose queue estimate is
/// below γ = 30 and shrinks in every round whose estimate is at or above it; it does shrink,
/// repeatedly, each time shortly after the bottleneck queue has passed γ.
#[test]
fn delay_window_grows_only_while_the_queue_estimate_is_below_gamma() {
    let gamma = 30.0;
    for (label, cc) in [("paper", PAPER), ("ns2", NS2)] {
        let r = lone(cc, "50Mbps", "20ms", 300, "8s");
        assert_eq!(r.queues.i64("drops")[0], 0, "{label}: no loss on this path");
        let dwnd = r.flow_series.f64("ctcp_dwnd");
        let diff = r.flow_series.f64("ctcp_diff");
        let queue = bottleneck_queue(&r, 0.0);
        assert_eq!(queue.len(), dwnd.len());
        let (mut grew, mut shrank) = (0, 0);
        for i in 1..dwnd.len() {
            if dwnd[i].is_nan() || dwnd[i - 1].is_nan() {
                continue;
            }
            if dwnd[i] > dwnd[i - 1] {
                grew += 1;
                assert!(diff[i] < gamma, "{label}: dwnd grew at sample {i} with a queue estimate of {}", diff[i]);
            } else if dwnd[i] < dwnd[i - 1] {
                shrank += 1;
                assert!(diff[i] >= gamma, "{label}: dwnd shrank at sample {i} with a queue estimate of {}", diff[i]);
                let recent = max(&queue[i.saturating_sub(10)..=i]);
                assert!(recent >= gamma, "{label}: dwnd shrank at sample {i}, the queue was at most {recent}");
            }
        }
        assert!(grew >= 50, "{label}: dwnd grew in only {grew} samples");
        assert!(shrank >= 4, "{label}: dwnd shrank in only {shrank} samples");
        assert!(max(dwnd) > 100.0, "{label}: dwnd peaked at {}", max(dwnd));
        // the Reno part alone would not fill the pipe in 8 s (20 + 8/0.044 ≈ 200 segments
        // with the queue); the delay window holds the queue near γ, well short of the 300
        // the buffer would allow
        let q_max = max(&queue);
        assert!((gamma..3.0 * gamma).contains(&q_max), "{label}: bottleneck queue peaked at {q_max}");
    }
}

/// γ sets how much queue CTCP tolerates: with γ = 10 the bottleneck queue peaks far lower than
/// with the default 30.
#[test]
fn gamma_bounds_the_standing_queue() {
    for (label, variant) in [("paper", "paper"), ("ns2", "ns2")] {
        let peak = |gamma: f64| {
            let cc = format!("{{ algo = \"compound\", variant = \"{variant}\", gamma = {gamma} }}");
            max(&bottleneck_queue(&lone(&cc, "50Mbps", "20ms", 300, "6s"), 0.0))
        };
        let (low, high) = (peak(10.0), peak(30.0));
        assert!(low < 0.6 * high && low >= 10.0, "{label}: queue peak {low} with γ = 10, {high} with γ = 30");
    }
}

/// An empty 1 Gbps path with a 104 ms RTT (a pipe of about 8700 segments, so nothing queues):
/// Reno adds one segment per RTT, CTCP adds α·win^0.75 more through its delay window (from
/// win = 41 in the paper variant, the draft's low_wnd). After 10 s CTCP's window is several
/// times Reno's, its Reno part has grown like Reno itself, and the rest is delay window.
#[test]
fn ctcp_opens_a_large_window_faster_than_reno_on_an_empty_path() {
    let reno = lone("\"reno\"", "1Gbps", "50ms", 100000, "10s");
    let w_reno = last(&reno, "cwnd");
    assert!((100.0..120.0).contains(&w_reno), "reno: {w_reno} after about 95 RTTs");
    for (label, cc) in [("paper", PAPER), ("ns2", NS2)] {
        let r = lone(cc, "1Gbps", "50ms", 100000, "10s");
        let w = last(&r, "cwnd");
        let (reno_part, dwnd) = (last(&r, "ctcp_cwnd_reno"), last(&r, "ctcp_dwnd"));
        assert!(w > 3.0 * w_reno, "{label}: window {w} vs Reno's {w_reno}");
        assert!((reno_part - w_reno).abs() < 0.1 * w_reno, "{label}: Reno part {reno_part} vs Reno {w_reno}");
        assert!((w - reno_part - dwnd).abs() < 1e-6, "{label}: window = Reno part + dwnd");
        assert!(max(r.flow_series.f64("ctcp_diff")) < 1.0, "{label}: the path stays empty");
        let base = last(&r, "ctcp_base_rtt_s");
        assert!((0.104..0.106).contains(&base), "{label}: baseRTT {base}");
    }
}

/// Losses under every recovery variant: on a 10 Mbps path with a 20-packet queue (a pipe of
/// about 37 segments) the queue overflows before the flow's estimate reaches γ, so CTCP halves
/// on losses like Reno. Each variant recovers, keeps the link busy, and never holds a negative
/// window part; outside recovery (most of the time) the window is the sum of its parts. (Classic Reno recovery is
/// left out: the delay window adds more than one segment per RTT, so overflows drop several
/// segments of a window and Reno recovery waits for the retransmission timer, as it does for
/// any algorithm that loses more than one segment per window.)
#[test]
fn losses_split_the_window_and_recovery_keeps_the_link_busy() {
    for variant in ["paper", "ns2"] {
        for recovery in ["tahoe", "newreno", "sack"] {
            let r = run(&format!(
                r#"
[simulation]
duration = "20s"
sample_interval = "10ms"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "10Mbps", delay = "20ms", queue = {{ limit = 20 }} }}
access = {{ rate = "10Gbps", delay = "1ms", queue = {{ limit = 100000 }} }}
[[flows]]
tcp = {{ cc = {{ algo = "compound", variant = "{variant}", low_wnd = 0 }}, recovery = "{recovery}" }}
"#
            ));
            let what = format!("{variant}/{recovery}");
            assert!(r.flows.i64("fast_retransmits")[0] >= 5, "{what}: losses expected");
            let g = r.flows.f64("goodput_bps")[0];
            assert!(g > 0.7 * 10e6, "{what}: goodput {g}");
            let s = &r.flow_series;
            let (cwnd, reno, dwnd) = (s.f64("cwnd"), s.f64("ctcp_cwnd_reno"), s.f64("ctcp_dwnd"));
            let (mut summed, mut rows) = (0, 0);
            for i in (0..cwnd.len()).filter(|&i| !reno[i].is_nan()) {
                rows += 1;
                assert!(reno[i] >= 0.0 && dwnd[i] >= 0.0, "{what}: sample {i}: {} + {}", reno[i], dwnd[i]);
                if (cwnd[i] - reno[i] - dwnd[i]).abs() < 1e-6 {
                    summed += 1;
                }
            }
            assert!(summed as f64 > 0.6 * rows as f64, "{what}: window = parts in only {summed} of {rows} samples");
        }
    }
}
