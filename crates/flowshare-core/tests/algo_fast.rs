//! Signature behaviour of FAST and FAST-AT: a delay-based equilibrium with α segments queued
//! per flow, and (FAST-AT) an α that follows the flow's rate.

use flowshare_core::results::RunResults;

mod common;

use common::{bottleneck_queue, mean, run};

/// `n` flows of `cc` starting together over a 10 Mbps / 20 ms dumbbell with a `limit`-packet
/// queue, sampled every 10 ms.
fn dumbbell(n: usize, cc: &str, limit: u32, duration: &str) -> RunResults {
    let flows: String = (0..n).map(|i| format!("[[flows]]\nname = \"f{i}\"\ntcp = {{ cc = {cc} }}\n")).collect();
    run(&format!(
        r#"
[simulation]
duration = "{duration}"
sample_interval = "10ms"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "10Mbps", delay = "20ms", queue = {{ limit = {limit} }} }}
access = {{ rate = "1Gbps", delay = "1ms", queue = {{ limit = 10000 }} }}
{flows}
"#
    ))
}

/// A flow's sampled `column` from `from_s` on.
fn late(r: &RunResults, column: &str, flow: i64, from_s: f64) -> Vec<f64> {
    let s = &r.flow_series;
    let (t, f, v) = (s.f64("time_s"), s.i64("flow"), s.f64(column));
    (0..t.len()).filter(|&i| f[i] == flow && t[i] >= from_s).map(|i| v[i]).collect()
}

fn total_goodput(r: &RunResults, n: i64, from_s: f64) -> f64 {
    (0..n).map(|f| mean(&late(r, "goodput_bps", f, from_s))).sum()
}

/// FAST's equilibrium (Jin, Wei and Low 2004): each flow keeps α segments queued, so two
/// flows with α = 20 hold about 40 in the bottleneck, keep the link full and, being
/// delay-based, never fill a 200-packet buffer.
#[test]
fn fast_settles_with_alpha_packets_queued_per_flow() {
    let r = dumbbell(2, "{ algo = \"fast\", alpha = 20 }", 200, "30s");
    let q = mean(&bottleneck_queue(&r, 15.0));
    assert!((q - 40.0).abs() <= 6.0, "mean bottleneck queue {q}, expected about 2α = 40");
    for f in 0..2 {
        let own = mean(&late(&r, "fast_queued", f, 15.0));
        assert!((own - 20.0).abs() <= 3.0, "flow {f}: own queue estimate {own}, expected α = 20");
        assert_eq!(mean(&late(&r, "fast_alpha", f, 15.0)), 20.0);
    }
    let g = total_goodput(&r, 2, 15.0);
    assert!(g > 0.95 * 10e6 * 1460.0 / 1500.0, "goodput {g} leaves the link idle");
    assert_eq!(r.queues.i64("drops")[0], 0, "FAST overflowed a buffer five times its target");
}

/// The window the equilibrium predicts: w = α / (1 − baseRTT/avgRTT), read from the flow's
/// own estimates, matches its actual window within a few segments.
#[test]
fn fast_window_matches_its_equilibrium() {
    let r = dumbbell(1, "{ algo = \"fast\", alpha = 30 }", 200, "20s");
    let base = mean(&late(&r, "fast_base_rtt_s", 0, 10.0));
    let avg = mean(&late(&r, "fast_avg_rtt_s", 0, 10.0));
    let w = mean(&late(&r, "cwnd", 0, 10.0));
    let predicted = 30.0 / (1.0 - base / avg);
    assert!((w - predicted).abs() <= 0.1 * predicted, "cwnd {w} vs α/(1 − base/avg) = {predicted}");
    // base RTT = 2 × (20 + 1 + 1) ms plus serialisation
    assert!((0.044..0.047).contains(&base), "base RTT {base}");
}

/// FAST-AT with the rate tiers: two flows at 5 Mbit/s each use α = 8, not the configured 100,
/// and queue about 16 segments; plain FAST with α = 100 per flow overflows the same buffer.
#[test]
fn fast_at_lowers_alpha_when_its_rate_is_low() {
    let at = dumbbell(2, "\"fast_at\"", 150, "30s");
    for f in 0..2 {
        let alpha = late(&at, "fast_alpha", f, 15.0);
        assert!(alpha.iter().all(|&a| a == 8.0), "flow {f}: α {:?}", &alpha[..5]);
    }
    let q = mean(&bottleneck_queue(&at, 15.0));
    assert!((q - 16.0).abs() <= 4.0, "FAST-AT mean queue {q}, expected about 2 × 8");
    assert_eq!(at.queues.i64("drops")[0], 0);

    let fast = dumbbell(2, "\"fast\"", 150, "30s");
    assert!(fast.queues.i64("drops")[0] > 0, "FAST with α = 100 per flow must overflow 150 packets");
}

/// The default MI mode ramps one segment per ACK whatever ssthresh says, and RFC 3742's limit
/// slows it like any slow start; `slow_start = "standard"` stops at ssthresh and leaves the
/// rest to FAST's updates (Mills et al. (2010) run every algorithm this way).
#[test]
fn slow_start_modes() {
    // time at which the window first reaches 1000 segments, and the window after 3 s
    let run_with = |tcp: &str| {
        let r = run(&format!(
            r#"
[simulation]
duration = "3s"
sample_interval = "10ms"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "1Gbps", delay = "50ms", queue = {{ limit = 100000 }} }}
access = {{ rate = "10Gbps", delay = "1ms", queue = {{ limit = 100000 }} }}
[[flows]]
tcp = {tcp}
"#
        ));
        let (t, w) = (r.flow_series.f64("time_s"), r.flow_series.f64("cwnd"));
        ((0..t.len()).find(|&i| w[i] >= 1000.0).map(|i| t[i]), *w.last().unwrap())
    };
    let (mi, _) = run_with("{ cc = { algo = \"fast\", alpha = 2000 }, initial_ssthresh = 50 }");
    let mi = mi.expect("MI mode ignores ssthresh and reaches 1000 segments");
    assert!(mi < 1.2, "MI mode doubles every RTT of about 102 ms: 1000 segments at {mi} s");
    let (limited, _) = run_with("{ cc = { algo = \"fast\", alpha = 2000 }, max_ssthresh = 100 }");
    let limited = limited.expect("limited MI reaches 1000 segments");
    // above 100 segments, +50 per RTT: about 18 RTTs from 100 to 1000
    assert!(limited > mi + 1.0, "RFC 3742 reached 1000 at {limited} s, plain MI at {mi} s");
    let (standard, w) =
        run_with("{ cc = { algo = \"fast\", alpha = 20, slow_start = \"standard\" }, initial_ssthresh = 50 }");
    // from 50, +γα = 10 segments every other RTT
    assert!(standard.is_none() && (100.0..250.0).contains(&w), "standard slow start: {standard:?}, cwnd {w} after 3 s");
}
