//! Signature behaviour of Vegas, Enhanced Vegas and Vegas with a base-RTT refresh.

use flowshare_core::results::RunResults;

mod common;

use common::{bottleneck_queue, mean, run};

/// `flows` (TOML `[[flows]]` tables) over a 10 Mbps / 20 ms dumbbell with a 100-packet queue,
/// the bottleneck queue sampled every 10 ms.
fn dumbbell(duration: &str, flows: &str) -> RunResults {
    run(&format!(
        r#"
[simulation]
duration = "{duration}"
sample_interval = "10ms"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "10Mbps", delay = "20ms", queue = {{ limit = 100 }} }}
access = {{ rate = "1Gbps", delay = "1ms", queue = {{ limit = 10000 }} }}
{flows}
"#
    ))
}

/// Mean of a flow's sampled goodput from `from_s` on, bits/s.
fn late_goodput(r: &RunResults, flow: i64, from_s: f64) -> f64 {
    let t = r.flow_series.f64("time_s");
    let f = r.flow_series.i64("flow");
    let g = r.flow_series.f64("goodput_bps");
    mean(&(0..t.len()).filter(|&i| f[i] == flow && t[i] >= from_s).map(|i| g[i]).collect::<Vec<_>>())
}

fn range(x: &[f64]) -> f64 {
    x.iter().cloned().fold(f64::MIN, f64::max) - x.iter().cloned().fold(f64::MAX, f64::min)
}

fn lone(cc: &str) -> RunResults {
    dumbbell("20s", &format!("[[flows]]\ntcp = {{ cc = {cc} }}\n"))
}

/// Hasegawa (2000) Eq 2.15: a lone Vegas flow holds between α and β of its packets in the
/// bottleneck queue, keeps the link full and, once there, stops moving. With a slow start
/// that leaves on diff > γ (`brakmo`, `linux`) it never loses a packet; the thesis's
/// slow-slow-start has no such exit and overflows the 100-packet queue once.
#[test]
fn lone_vegas_settles_with_alpha_to_beta_packets_queued() {
    let cases = [
        // label, cc, α, β, loss-free
        ("defaults (thesis slow start)", "\"vegas\"", 2.0, 4.0, false),
        ("brakmo slow start", "{ algo = \"vegas\", slow_start = \"brakmo\" }", 2.0, 4.0, true),
        ("linux slow start", "{ algo = \"vegas\", slow_start = \"linux\" }", 2.0, 4.0, true),
        ("linux diff", "{ algo = \"vegas\", diff = \"linux\", slow_start = \"linux\" }", 2.0, 4.0, true),
        ("paper/ns-2 constants", "{ algo = \"vegas\", alpha = 1, beta = 3 }", 1.0, 3.0, false),
        ("a deeper band", "{ algo = \"vegas\", alpha = 6, beta = 8 }", 6.0, 8.0, false),
    ];
    for (label, cc, alpha, beta, loss_free) in cases {
        let r = lone(cc);
        let q = bottleneck_queue(&r, 10.0);
        let m = mean(&q);
        assert!(alpha <= m && m <= beta, "{label}: mean queue {m} outside [{alpha}, {beta}]");
        assert!(range(&q) <= 1.0, "{label}: the queue still moves over {}..{} packets", m - range(&q), m);
        let g = late_goodput(&r, 0, 10.0);
        assert!(g > 0.95 * 10e6 * 1460.0 / 1500.0, "{label}: goodput {g} leaves the link idle");
        if loss_free {
            assert_eq!(r.queues.i64("drops")[0], 0, "{label}: Vegas with a γ exit loses nothing");
        }
    }
}

/// Hasegawa (2000) Eqs 2.26–2.36: without a dead zone the window never settles; a lone
/// Enhanced Vegas flow keeps its diff around δ (its own share), and two flows that both measure
/// the true base RTT keep 2δ queued between them (Eq 2.36: l2 = 2δ) and share the link evenly.
/// A flow that starts over a standing queue takes that queue for part of the path (§2.2.4): it
/// underestimates its own backlog and ends up with the larger share, Vegas or not.
#[test]
fn enhanced_vegas_oscillates_around_delta_per_flow_and_is_fair() {
    for (label, cc, delta) in
        [("δ = 3", "\"vegas_enhanced\"", 3.0), ("δ = 6", "{ algo = \"vegas_enhanced\", delta = 6 }", 6.0)]
    {
        let q = bottleneck_queue(&lone(cc), 10.0);
        let m = mean(&q);
        // The sampled length counts the packet in transmission and the per-RTT decision lags
        // one round, so the centre sits up to two packets above δ.
        assert!(delta <= m && m <= delta + 2.0, "{label}: lone flow's mean queue {m}");
        assert!(range(&q) >= 3.0, "{label}: the queue should oscillate, range {}", range(&q));
    }
    let two = |cc: &str, second: &str| {
        dumbbell(
            "20s",
            &format!("[[flows]]\ntcp = {{ cc = {cc} }}\n[[flows]]\nstart = \"{second}\"\ntcp = {{ cc = {cc} }}\n"),
        )
    };
    let e = two("\"vegas_enhanced\"", "10ms");
    let m = mean(&bottleneck_queue(&e, 10.0));
    // Each flow's decision lags a round: up to three packets above 2δ in all.
    assert!((6.0..=9.0).contains(&m), "two Enhanced Vegas flows: mean queue {m}, expected about 2δ = 6");
    let (a, b) = (late_goodput(&e, 0, 10.0), late_goodput(&e, 1, 10.0));
    assert!((a / b - 1.0).abs() < 0.1, "Enhanced Vegas shares evenly: {a} vs {b}");
    for cc in ["\"vegas\"", "\"vegas_enhanced\""] {
        let late = two(cc, "3s");
        let (a, b) = (late_goodput(&late, 0, 10.0), late_goodput(&late, 1, 10.0));
        assert!(b / a > 1.5, "{cc}: the flow that started over a standing queue takes more: {a} vs {b}");
    }
}

/// Hasegawa (2000) §5.3.1: ACKs queued behind reverse traffic look like congestion to Vegas, which
/// then starves; refreshing baseRTT every 100 ms counts the standing ACK-path queue as part of
/// the path. Forward Vegas from 0 s, a reverse Reno flow (its data fills the queue the forward
/// ACKs wait in) from 3 s.
#[test]
fn base_rtt_refresh_rescues_vegas_from_reverse_path_queueing() {
    let forward = |vegas: &str| {
        let r = dumbbell(
            "30s",
            &format!(
                "[[flows]]\ntcp = {{ cc = {vegas} }}\n[[flows]]\ndirection = \"reverse\"\nstart = \"3s\"\ntcp = {{ cc = \"reno\" }}\n"
            ),
        );
        late_goodput(&r, 0, 10.0)
    };
    let plain = forward("\"vegas\"");
    let refreshed = forward("{ algo = \"vegas\", base_rtt_refresh = \"100ms\" }");
    let last = forward("{ algo = \"vegas\", base_rtt_refresh = \"100ms\", refresh_to = \"last_sample\" }");
    assert!(plain < 0.2 * 10e6, "plain Vegas should starve behind reverse traffic: {plain}");
    for (label, g) in [("interval_min", refreshed), ("last_sample", last)] {
        assert!(g > 0.5 * 10e6 && g > 4.0 * plain, "{label}: refreshed {g} vs plain {plain}");
    }
}
