//! Signature behaviour of H-TCP in short scenarios.

use flowshare_core::results::RunResults;

mod common;

use common::run;

const VARIANTS: [(&str, &str); 2] = [("linux", "\"htcp\""), ("paper", "{ algo = \"htcp\", variant = \"paper\" }")];

/// A dumbbell with a `delay` bottleneck and 1 ms access links, one SACK flow per entry, each
/// starting 10 ms after the previous one. An entry is the `cc` value, further TCP options and
/// further lines of the flow group (such as `drop_segments`).
fn dumbbell(
    duration: &str,
    rate: &str,
    delay: &str,
    queue: u32,
    sample: &str,
    flows: &[(&str, &str, &str)],
) -> RunResults {
    let mut groups = String::new();
    for (i, (cc, tcp, extra)) in flows.iter().enumerate() {
        groups.push_str(&format!(
            "[[flows]]\nname = \"f{i}\"\nstart = \"{}ms\"\n{extra}\ntcp = {{ cc = {cc}, recovery = \"sack\"{tcp} }}\n",
            10 * i
        ));
    }
    run(&format!(
        r#"
[simulation]
duration = "{duration}"
sample_interval = "{sample}"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "{rate}", delay = "{delay}", queue = {{ limit = {queue} }} }}
access = {{ rate = "10Gbps", delay = "1ms", queue = {{ limit = 100000 }} }}
{groups}
"#
    ))
}

/// One flow's samples of a flow-series column.
fn column(r: &RunResults, name: &str, flow: i64) -> Vec<f64> {
    let s = &r.flow_series;
    (0..s.rows()).filter(|&i| s.i64("flow")[i] == flow).map(|i| s.f64(name)[i]).collect()
}

/// A lone flow on a 1 Gbps path with a 98 ms RTT (a pipe of 8000 segments, never full) leaves
/// slow start at 20 segments and loses segment 200 at about 0.9 s, its only loss (before Δ,
/// counted from the start, reaches Δ_L). Returns the
/// run and the index of the first sample (every 100 ms, about one RTT) after the loss.
fn one_loss(cc: &str) -> (RunResults, usize) {
    let r =
        dumbbell("6s", "1Gbps", "47ms", 100_000, "100ms", &[(cc, ", initial_ssthresh = 20", "drop_segments = [200]")]);
    assert_eq!(r.flows.i64("drops")[0], 1, "{cc}: exactly the crafted loss");
    let w = column(&r, "cwnd", 0);
    let d = (1..w.len()).find(|&i| w[i] < 0.8 * w[i - 1]).expect("the crafted loss reduces cwnd");
    (r, d)
}

/// Leith and Shorten (2004): for Δ_L = 1 s after a congestion event H-TCP adds α = 2(1 − β)
/// segments per RTT: 1 like Reno in `linux`, whose first event backs off by β = 0.5, and 0.4 in
/// `paper`, whose β = RTT_min/RTT_max is clamped to 0.8 on this queue-free path (the AIMD pair
/// (0.4, 0.8) is the Reno-compatible one). After that α_raw(Δ) = 1 + 10(Δ − 1) + ((Δ − 1)/2)²,
/// 22–35 in the fourth second, where Reno still adds one segment per RTT.
#[test]
fn reno_like_for_one_second_after_a_loss_then_faster() {
    let (reno, dr) = one_loss("\"reno\"");
    let rw = column(&reno, "cwnd", 0);
    let reno_gain = |a: usize, b: usize| rw[dr + b] - rw[dr + a];
    for (label, cc, beta) in [("linux", VARIANTS[0].1, 0.5), ("paper", VARIANTS[1].1, 0.8)] {
        let (r, d) = one_loss(cc);
        let (t, w) = (column(&r, "time_s", 0), column(&r, "cwnd", 0));
        assert_eq!(d, dr, "{label}: the loss at {} s is in reno's sample", t[d]);
        let gain = |a: usize, b: usize| w[d + b] - w[d + a];
        let sampled_beta = column(&r, "htcp_beta", 0)[d + 5];
        assert!((sampled_beta - beta).abs() < 1e-9, "{label}: β {sampled_beta}");
        let a0 = 2.0 * (1.0 - beta);
        // first second: recovery ends within the first sample, then α = a0 per RTT ≈ 100 ms
        let first = gain(1, 9);
        assert!(first >= 0.75 * 8.0 * a0 && first <= 8.0 * a0 + 0.5, "{label}: +{first} in 0.8 s of the first second");
        if label == "linux" {
            assert!((first - reno_gain(1, 9)).abs() <= 1.5, "{label}: +{first} vs reno +{}", reno_gain(1, 9));
        }
        // fourth second: α = a0·(22..35) per RTT
        let fourth = gain(30, 40);
        assert!(
            fourth > 0.8 * 10.0 * a0 * 22.0 && fourth < 1.2 * 10.0 * a0 * 35.0,
            "{label}: +{fourth} in the fourth second"
        );
        assert!(fourth > 8.0 * reno_gain(30, 40), "{label}: +{fourth} vs reno +{}", reno_gain(30, 40));
        // the sampled α agrees: a0 within Δ_L, a0·22 (± RTT scaling and rounding) at Δ ≈ 3 s
        let (alpha, delta) = (column(&r, "htcp_alpha", 0), column(&r, "htcp_delta_s", 0));
        assert!(alpha[d + 5] <= a0 + 1e-9, "{label}: α {} half a second after the loss", alpha[d + 5]);
        let i3 = (d..delta.len()).find(|&i| delta[i] >= 3.0).unwrap();
        let raw = alpha[i3] / a0;
        assert!((19.0..=26.0).contains(&raw), "{label}: α_raw {raw} at Δ = {}", delta[i3]);
    }
}

/// Mean of a flow-series column for one flow after `after` seconds.
fn late_mean(r: &RunResults, name: &str, flow: i64, after: f64) -> f64 {
    let (t, v) = (column(r, "time_s", flow), column(r, name, flow));
    let late: Vec<f64> = (0..t.len()).filter(|&i| t[i] > after).map(|i| v[i]).collect();
    late.iter().sum::<f64>() / late.len() as f64
}

/// 100 Mbps with a 98 ms RTT holds about 817 segments of 1500 B, and the 200-packet queue adds
/// 24 ms at most. Reno needs ~400 RTTs (40 s) to regain a halving; H-TCP, once Δ passes 1 s,
/// adds tens of segments per RTT, and backs off by β = minRTT/maxRTT ≈ 0.8 rather than 0.5 once
/// its throughput is steady between events. It must take several times Reno's share (about 10×:
/// linux 82.1 vs 8.1 Mbps, paper 86.1 vs 8.3), and the pair must keep the link busy.
#[test]
fn htcp_takes_more_than_renos_share_on_a_large_bdp_path() {
    let ceiling = 100e6 * 1460.0 / 1500.0;
    for (label, cc) in VARIANTS {
        let r = dumbbell("40s", "100Mbps", "47ms", 200, "1s", &[(cc, "", ""), ("\"reno\"", "", "")]);
        let g = r.flows.f64("goodput_bps");
        assert!(g[0] > 4.0 * g[1], "{label}: {} vs reno {}", g[0], g[1]);
        assert!(g[0] + g[1] > 0.9 * ceiling, "{label}: the pair fills the link: {}", g[0] + g[1]);
        let beta = late_mean(&r, "htcp_beta", 0, 10.0);
        assert!(beta > 0.6, "{label}: mean β {beta}: adaptive backoff should be in use");
    }
}

/// On a 2 Mbps path with a 44 ms RTT (a pipe of 7 segments, a 20-packet queue) losses come
/// every few hundred milliseconds, so Δ never passes Δ_L and H-TCP stays in its low-speed mode:
/// α = 2(1 − β) with β = 0.5 (linux: the 120 ms of queue make minRTT/maxRTT < 0.5; paper: the
/// same, clamped). That is Reno's AIMD, so the two share the link about evenly (linux 0.89 vs
/// 1.06 Mbps, paper 1.01 vs 0.93).
#[test]
fn htcp_shares_evenly_with_reno_when_losses_are_frequent() {
    for (label, cc) in VARIANTS {
        let r = dumbbell("60s", "2Mbps", "20ms", 20, "1s", &[(cc, "", ""), ("\"reno\"", "", "")]);
        let g = r.flows.f64("goodput_bps");
        assert!((g[0] / g[1] - 1.0).abs() < 0.3, "{label}: {} vs reno {}", g[0], g[1]);
        let (beta, alpha) = (late_mean(&r, "htcp_beta", 0, 10.0), late_mean(&r, "htcp_alpha", 0, 10.0));
        assert!((beta - 0.5).abs() < 1e-9, "{label}: mean β {beta}");
        assert!(alpha < 1.5, "{label}: mean α {alpha}: Δ should rarely pass Δ_L");
    }
}
