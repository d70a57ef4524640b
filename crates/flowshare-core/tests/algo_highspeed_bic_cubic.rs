//! Signature behaviour of HighSpeed TCP, BIC and CUBIC in short scenarios.

use flowshare_core::results::RunResults;

mod common;

use common::run;

/// A dumbbell with a 20 ms bottleneck and 1 ms access links (RTT 44 ms plus queueing), one
/// SACK flow per `cc` entry, each starting 10 ms after the previous one.
fn dumbbell(duration: &str, rate: &str, queue: u32, sample: &str, ccs: &[&str]) -> RunResults {
    let mut flows = String::new();
    for (i, cc) in ccs.iter().enumerate() {
        flows.push_str(&format!(
            "[[flows]]\nname = \"f{i}\"\nstart = \"{}ms\"\ntcp = {{ cc = {cc}, recovery = \"sack\" }}\n",
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
bottleneck = {{ rate = "{rate}", delay = "20ms", queue = {{ limit = {queue} }} }}
access = {{ rate = "10Gbps", delay = "1ms", queue = {{ limit = 100000 }} }}
{flows}
"#
    ))
}

/// Mean of a flow-series column for one flow after `after` seconds.
fn late_mean(r: &RunResults, column: &str, flow: i64, after: f64) -> f64 {
    let s = &r.flow_series;
    let v: Vec<f64> = (0..s.rows())
        .filter(|&i| s.i64("flow")[i] == flow && s.f64("time_s")[i] > after)
        .map(|i| s.f64(column)[i])
        .collect();
    v.iter().sum::<f64>() / v.len() as f64
}

/// 100 Mbps with a 44 ms RTT holds about 367 segments of 1500 B; with the 100-packet queue a
/// flow loses at about 467, so windows live far above HighSpeed's Low_Window of 38, where
/// HSTCP adds a(w) ≈ 2.5–3 segments per RTT and gives back b(w) ≈ 0.37, and BIC searches back
/// to W_max in a few RTTs and gives back 20 %. Reno, adding 1 and giving back half, loses out.
#[test]
fn highspeed_and_bic_take_more_than_renos_share_on_a_large_bdp_path() {
    let rows = [
        ("highspeed rfc", "\"highspeed\"", 2.5),
        ("highspeed linux", "{ algo = \"highspeed\", variant = \"linux\" }", 2.5),
        ("bic linux", "\"bic\"", 3.0),
        ("bic paper", "{ algo = \"bic\", variant = \"paper\" }", 3.0),
    ];
    for (label, cc, ratio) in rows {
        let r = dumbbell("60s", "100Mbps", 100, "1s", &[cc, "\"reno\""]);
        let g = r.flows.f64("goodput_bps");
        assert!(g[0] > ratio * g[1], "{label}: {} vs reno {}", g[0], g[1]);
        assert!(g[0] + g[1] > 0.9 * 100e6 * 1460.0 / 1500.0, "{label}: the pair fills the link");
        let w = late_mean(&r, "cwnd", 0, 10.0);
        assert!(w > 3.0 * 38.0, "{label}: mean window {w} should be well above Low_Window");
        // the sampled algorithm state agrees: HSTCP adds more than Reno's 1 per RTT, BIC's W_max
        // sits in the same range as its window
        if label.starts_with("highspeed") {
            let a = late_mean(&r, "hstcp_a", 0, 10.0);
            assert!(a > 1.5, "{label}: mean a(w) {a}");
        } else {
            let w_max = late_mean(&r, "bic_w_max", 0, 10.0);
            assert!(w_max > 3.0 * 38.0, "{label}: mean W_max {w_max}");
        }
    }
}

/// On a 2 Mbps path (a pipe of 7 segments, a 20-packet queue) no window reaches 38, where
/// HighSpeed TCP is Reno. The simulation is deterministic, so the RFC variant against Reno
/// gives exactly what Reno against Reno gives (an unequal split, from the drop-tail phase
/// effect of the 10 ms head start). The Linux variant credits growth with its integer counter,
/// so it differs in detail but not in share.
#[test]
fn highspeed_is_reno_below_low_window() {
    let reno = dumbbell("60s", "2Mbps", 20, "1s", &["\"reno\"", "\"reno\""]);
    let hs = dumbbell("60s", "2Mbps", 20, "1s", &["\"highspeed\"", "\"reno\""]);
    let (gr, gh) = (reno.flows.f64("goodput_bps"), hs.flows.f64("goodput_bps"));
    assert_eq!(gh, gr, "highspeed (rfc) vs reno must equal reno vs reno below Low_Window");
    let s = &hs.flow_series;
    let max_w = (0..s.rows()).map(|i| s.f64("cwnd")[i]).fold(0.0, f64::max);
    assert!(max_w < 38.0, "a window reached {max_w}");
    let linux = dumbbell("60s", "2Mbps", 20, "1s", &["{ algo = \"highspeed\", variant = \"linux\" }", "\"reno\""]);
    let g = linux.flows.f64("goodput_bps");
    assert!((g[0] / g[1] - 1.0).abs() < 0.3, "linux: {} vs reno {}", g[0], g[1]);
}

/// Alone on the 100 Mbps path each algorithm keeps the link busy after the slow-start
/// overshoot: its decrease leaves a window near or above the pipe (BIC 0.8·467 = 374,
/// CUBIC 0.7·467 = 327 and back within seconds, HSTCP (1 − b(467)) ≈ 0.63·467 = 294 but +2.7
/// per RTT), where Reno's halving to 233 leaves the link idle for part of every cycle.
#[test]
fn each_alone_fills_the_link() {
    let ceiling = 100e6 * 1460.0 / 1500.0;
    let ccs = [
        "\"highspeed\"",
        "{ algo = \"highspeed\", variant = \"linux\" }",
        "\"bic\"",
        "{ algo = \"bic\", variant = \"paper\" }",
        "\"cubic\"",
        "{ algo = \"cubic\", variant = \"ns2\" }",
    ];
    for cc in ccs {
        let r = dumbbell("30s", "100Mbps", 100, "1s", &[cc]);
        let late = late_mean(&r, "goodput_bps", 0, 10.0);
        assert!(late >= 0.93 * ceiling, "{cc}: goodput after 10 s {late} < 93% of {ceiling}");
        assert!(r.queues.f64("utilization")[0] >= 0.9, "{cc}: utilization {}", r.queues.f64("utilization")[0]);
    }
}

/// A lone CUBIC flow on the 100 Mbps path loses at W_max ≈ 467 segments every cycle. With
/// fast convergence off, W_max = ssthresh/0.7 and cwnd restarts at ssthresh = cwnd_epoch, so
/// K = ∛((W_max − cwnd_epoch)/0.4) ≈ 7 s. Sampled every 100 ms, the window must follow
/// W_cubic(t) = 0.4·(t − K)³ + W_max: steep just after the loss, flat near W_max at K (concave),
/// which linear (Reno-like) growth of a few segments per RTT could not do.
#[test]
fn cubic_window_follows_the_cubic_curve_after_a_loss() {
    let r = dumbbell("40s", "100Mbps", 100, "100ms", &["{ algo = \"cubic\", fast_convergence = false }"]);
    let s = &r.flow_series;
    let (t, w, ssth) = (s.f64("time_s"), s.f64("cwnd"), s.f64("ssthresh"));
    // reductions after the slow-start episode: cwnd falls by more than 20 % between samples
    let drops: Vec<usize> = (1..s.rows()).filter(|&i| t[i] > 5.0 && w[i] < 0.8 * w[i - 1]).collect();
    assert!(drops.len() >= 3, "expected several loss cycles, got drops at {drops:?}");
    for (j, &d) in drops[..drops.len() - 1].iter().enumerate() {
        let w_max = ssth[d] / 0.7;
        let k = ((w_max - ssth[d]) / 0.4).cbrt();
        assert!(k > 5.0 && k < 9.0, "K = {k} for W_max {w_max}");
        // the algorithm's own W_max and (one second into the epoch) K, as sampled
        let reported = s.f64("cubic_w_max")[d];
        assert!((reported - w_max).abs() < 1e-6 * w_max, "cubic_w_max {reported} vs ssthresh/0.7 = {w_max}");
        let k_reported = s.f64("cubic_k")[d + 10];
        assert!((k_reported - k).abs() < 0.02 * k, "cubic_k {k_reported} vs {k}");
        // the loss happened between the two samples
        let t_loss = 0.5 * (t[d - 1] + t[d]);
        let w_cubic = |x: f64| 0.4 * (x - k).powi(3) + w_max;
        let mut checked = 0;
        // up to K, or up to the next loss if the path's limit lies just below W_max
        for i in d..drops[j + 1] {
            let x = t[i] - t_loss;
            if x > k {
                break;
            }
            if x < 0.3 {
                continue;
            }
            let err = w[i] - w_cubic(x);
            assert!(
                err.abs() < 0.025 * w_max,
                "t_loss {t_loss:.2} + {x:.2} s: cwnd {} vs W_cubic {}",
                w[i],
                w_cubic(x)
            );
            checked += 1;
        }
        assert!(checked >= 40, "the next loss came {checked} samples after {t_loss}, before K = {k}");
        // concave: half-way to K the window has made up 7/8 of the reduction
        let half = (d..s.rows()).find(|&i| t[i] - t_loss >= k / 2.0).unwrap();
        let made_up = (w[half] - ssth[d]) / (w_max - ssth[d]);
        assert!(made_up > 0.8 && made_up < 1.0, "fraction regained at K/2: {made_up}");
    }
}
