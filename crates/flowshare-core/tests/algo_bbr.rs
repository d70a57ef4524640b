//! Signature behaviour of BBR v1 (Cardwell et al., ACM Queue 14(5), 2016): over a deep buffer it
//! keeps the queue near or below one bandwidth-delay product where a loss-based flow fills the
//! buffer, and it still uses the link.

use flowshare_core::results::RunResults;

mod common;

use common::{bottleneck_queue, mean, run};

const SCENARIO: &str = include_str!("../../../scenarios/bbr-deep-buffer.toml");
/// 50 Mbit/s × 40 ms in 1500-byte packets.
const BDP_PKTS: f64 = 50e6 * 0.040 / (8.0 * 1500.0);
/// The buffer, packets.
const BUFFER: f64 = 670.0;

fn with_cc(cc: &str) -> RunResults {
    with_cc_table(&format!("\"{cc}\""))
}

/// The scenario with `cc = <value>`.
fn with_cc_table(value: &str) -> RunResults {
    assert_eq!(SCENARIO.matches("cc = \"bbr\"").count(), 1, "the scenario names its algorithm once");
    run(&SCENARIO.replace("cc = \"bbr\"", &format!("cc = {value}")))
}

/// A flow's sampled `column`, with the sample times.
fn series(r: &RunResults, column: &str) -> Vec<(f64, f64)> {
    let s = &r.flow_series;
    let (t, v) = (s.f64("time_s"), s.f64(column));
    (0..t.len()).map(|i| (t[i], v[i])).collect()
}

#[test]
fn bbr_keeps_the_deep_buffer_nearly_empty_where_cubic_fills_it() {
    let bbr = with_cc("bbr");
    let cubic = with_cc("cubic");
    // After STARTUP (the first seconds), BBR's mean queue is well under one BDP; CUBIC's is
    // more than two BDPs and it overflows the buffer.
    let q_bbr = mean(&bottleneck_queue(&bbr, 3.0));
    let q_cubic = mean(&bottleneck_queue(&cubic, 3.0));
    let max_bbr = bottleneck_queue(&bbr, 3.0).into_iter().fold(0.0, f64::max);
    eprintln!(
        "BBR: mean queue {q_bbr:.1} pkts (max {max_bbr}), goodput {:.2} Mbit/s, drops {}; \
         CUBIC: mean queue {q_cubic:.1} pkts, goodput {:.2} Mbit/s, drops {}",
        bbr.flows.f64("goodput_bps")[0] / 1e6,
        bbr.queues.i64("drops")[0],
        cubic.flows.f64("goodput_bps")[0] / 1e6,
        cubic.queues.i64("drops")[0],
    );
    assert!(q_bbr < 0.5 * BDP_PKTS, "BBR's mean queue {q_bbr} packets, BDP {BDP_PKTS}");
    assert!(max_bbr < BDP_PKTS, "BBR's largest sampled queue {max_bbr} packets");
    assert!(q_cubic > 2.0 * BDP_PKTS, "CUBIC's mean queue {q_cubic} packets");
    assert_eq!(cubic.queues.i64("max_len_pkts")[0] as f64, BUFFER, "CUBIC fills the buffer");
    assert!(cubic.queues.i64("drops")[0] > 0);
    // BBR's only losses can come from STARTUP's overshoot, which 4 BDPs of buffer absorb.
    assert_eq!(bbr.queues.i64("drops")[0], 0);
    // Both keep the link busy: BBR's goodput is at least 90 % of the payload rate.
    let payload_rate = 50e6 * 1460.0 / 1500.0;
    let g = bbr.flows.f64("goodput_bps")[0];
    assert!(g > 0.9 * payload_rate, "BBR goodput {g}");
    // RTTs: BBR's stay near the 40 ms propagation delay, CUBIC's reach the buffer's 160 ms.
    let rtt_bbr = bbr.flows.f64("rtt_mean_s")[0];
    let rtt_cubic = cubic.flows.f64("rtt_mean_s")[0];
    eprintln!("mean RTT: BBR {rtt_bbr:.4} s, CUBIC {rtt_cubic:.4} s");
    assert!(rtt_bbr < 0.050 && rtt_cubic > 0.100, "{rtt_bbr} {rtt_cubic}");
    common::assert_conservation(&bbr);
}

/// CUBIC with HyStart (Linux's and ns-3's default) leaves slow start before overflowing the
/// buffer, but its cubic growth still fills it: the queue stays far above BBR's.
#[test]
fn cubic_with_hystart_still_fills_the_buffer() {
    let r = with_cc_table("{ algo = \"cubic\", hystart = true }");
    let q = mean(&bottleneck_queue(&r, 3.0));
    let drops = r.queues.i64("drops")[0];
    eprintln!(
        "CUBIC with HyStart: mean queue {q:.1} pkts, goodput {:.2} Mbit/s, drops {drops}",
        r.flows.f64("goodput_bps")[0] / 1e6
    );
    assert!(q > 2.0 * BDP_PKTS, "mean queue {q}");
    let plain = with_cc("cubic");
    assert!(drops < plain.queues.i64("drops")[0], "HyStart avoids slow start's overshoot losses");
}

/// The state machine as the run shows it: STARTUP, DRAIN, PROBE_BW with its gain cycle, and
/// PROBE_RTT about 10 s in with the window at 4 segments.
#[test]
fn bbr_goes_through_its_modes() {
    let r = with_cc("bbr");
    let mode = series(&r, "bbr_mode");
    assert_eq!(mode[0].1, 0.0, "STARTUP first");
    let first = |m: f64| mode.iter().find(|(_, x)| *x == m).map(|(t, _)| *t);
    let (drain, probe_bw, probe_rtt) = (first(1.0), first(2.0), first(3.0));
    eprintln!("DRAIN at {drain:?} s, PROBE_BW at {probe_bw:?} s, PROBE_RTT at {probe_rtt:?} s");
    assert!(probe_bw.is_some_and(|t| t < 2.0), "PROBE_BW at {probe_bw:?}");
    // The min RTT was last refreshed during STARTUP or DRAIN; 10 s later it expires.
    assert!(probe_rtt.is_some_and(|t| (10.0..11.5).contains(&t)), "PROBE_RTT at {probe_rtt:?}");
    let t_rtt = probe_rtt.unwrap();
    let cwnd = series(&r, "cwnd");
    let dip = cwnd.iter().filter(|(t, _)| (t_rtt..t_rtt + 0.2).contains(t)).map(|(_, w)| *w).fold(f64::MAX, f64::min);
    assert_eq!(dip, 4.0, "PROBE_RTT caps the window at 4 segments");
    // Every pacing gain of the cycle shows in PROBE_BW.
    let gains: std::collections::BTreeSet<u64> =
        series(&r, "bbr_pacing_gain").iter().filter(|(t, _)| *t > 3.0).map(|(_, g)| (g * 100.0) as u64).collect();
    assert!(gains.contains(&125) && gains.contains(&75) && gains.contains(&100), "{gains:?}");
    // The bandwidth estimate is the bottleneck's packet rate (50 Mbit/s / 1500 B).
    let bw = mean(&series(&r, "bbr_bw_pps").iter().filter(|(t, _)| *t > 3.0).map(|(_, b)| *b).collect::<Vec<_>>());
    let pps = 50e6 / (8.0 * 1500.0);
    assert!((bw - pps).abs() < 0.03 * pps, "bandwidth estimate {bw} pkts/s vs {pps}");
    // PROBE_BW's window is 2 × BDP plus the allowance; the sampled mean sits between 1 and
    // 2.5 BDPs (the PROBE_RTT dip and the cycle included).
    let w = mean(&cwnd.iter().filter(|(t, _)| *t > 3.0).map(|(_, w)| *w).collect::<Vec<_>>());
    assert!(w > BDP_PKTS && w < 2.5 * BDP_PKTS, "mean cwnd {w}");
}

/// Same scenario and seed, same results (BBR's random start phase comes from the seed).
#[test]
fn bbr_runs_are_deterministic() {
    let a = with_cc("bbr");
    let b = with_cc("bbr");
    assert_eq!(a.flows.f64("goodput_bps"), b.flows.f64("goodput_bps"));
    assert_eq!(bottleneck_queue(&a, 0.0), bottleneck_queue(&b, 0.0));
}
