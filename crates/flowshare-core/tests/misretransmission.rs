//! Mis-retransmission (Hasegawa, ch. 3): a spurious timeout forced on one segment, the
//! detection that undoes it, and TCP without timeout as the ideal.

use flowshare_core::results::RunResults;
use flowshare_core::{scenario, Simulation};

/// Experiment 1's setting: one connection over 150 Mbps with 1 ms one-way delay, 4 KB packets,
/// a 64 KB window (16 segments), 1000 segments to send. The thesis's TCP Reno fast-retransmits
/// on the duplicate ACKs for the last segment sent before the timeout (its Fig 3.1: packet
/// 519 at t2), RFC 6582's less careful variant.
fn experiment_1(tcp_extra: &str) -> RunResults {
    run(16, "", tcp_extra)
}

fn run(rwnd: u32, flow_extra: &str, tcp_extra: &str) -> RunResults {
    let text = format!(
        r#"
[simulation]
duration = "3s"
sample_interval = "0s"
[topology]
kind = "graph"
nodes = ["a", "b"]
links = [ {{ from = "a", to = "b", rate = "150Mbps", delay = "1ms", queue = {{ limit = 100 }} }} ]
[[flows]]
src = "a"
dst = "b"
size = "4096000B"
{flow_extra}
tcp = {{ recovery = "reno", recover = "less_careful", mss = "4096B", rwnd = {rwnd}, rto_min = "1ms", timer_tick = "10us" {tcp_extra} }}
"#
    );
    let s = scenario::from_toml(&text).unwrap_or_else(|e| panic!("{e}"));
    Simulation::new(&s).unwrap().finish()
}

struct Outcome {
    completion: f64,
    retransmits: i64,
    timeouts: i64,
    detected: i64,
}

fn outcome(r: &RunResults) -> Outcome {
    let f = &r.flows;
    assert_eq!(f.i64("bytes_delivered")[0], 4_096_000, "transfer incomplete");
    Outcome {
        completion: f.f64("completion_time_s")[0],
        retransmits: f.i64("retransmits")[0],
        timeouts: f.i64("timeouts")[0],
        detected: f.i64("misrx_detected")[0],
    }
}

const FORCED: &str = r#", force_timeout = { segment = 503, after = "1ms" }"#;

#[test]
fn a_forced_timeout_on_a_stable_path_is_a_mis_retransmission() {
    let ideal = outcome(&experiment_1(", rto_enabled = false"));
    assert_eq!((ideal.timeouts, ideal.retransmits), (0, 0), "nothing is lost on this path");

    let original = outcome(&experiment_1(FORCED));
    assert_eq!(original.timeouts, 1);
    assert!(original.retransmits >= 8, "go-back-N resends the window: {}", original.retransmits);
    assert_eq!(original.detected, 0, "detection is off");
    assert!(original.completion > ideal.completion, "the spurious timeout costs time");
}

#[test]
fn detection_restores_the_window_and_cancels_go_back_n() {
    let ideal = outcome(&experiment_1(", rto_enabled = false"));
    let original = outcome(&experiment_1(FORCED));
    let enhanced = outcome(&experiment_1(&format!("{FORCED}, misrx_detection = true")));
    assert_eq!((enhanced.timeouts, enhanced.detected), (1, 1));
    assert!(enhanced.retransmits < original.retransmits / 2, "{} vs {}", enhanced.retransmits, original.retransmits);
    let lost = |o: &Outcome| o.completion - ideal.completion;
    assert!(
        lost(&enhanced) < 0.5 * lost(&original),
        "extra delay: enhanced {} s, original {} s",
        lost(&enhanced),
        lost(&original)
    );
}

#[test]
fn a_real_loss_repaired_by_the_timer_is_not_undone() {
    // With a window of 3 segments a loss cannot raise three duplicate ACKs, so the timer
    // repairs it; the first ACK after the timeout acknowledges the retransmission a full RTT
    // later, so k = 0.5 keeps the timeout.
    let clean = outcome(&run(3, "", ", misrx_detection = true"));
    assert_eq!(clean.timeouts, 0, "no loss, no timeout");
    let lossy = outcome(&run(3, "drop_segments = [503]", ", misrx_detection = true"));
    assert_eq!(lossy.timeouts, 1);
    assert_eq!(lossy.detected, 0, "a real loss must not be taken for a mis-retransmission");
}

/// The detection undoes the algorithm's reduction too: CUBIC's W_max, set by the spurious
/// timeout, goes back to what it was (0: there has been no real loss on this path).
#[test]
fn a_detected_mis_retransmission_restores_the_algorithms_state() {
    let w_max_after_timeout = |detect: bool| {
        let text = format!(
            r#"
[simulation]
duration = "1s"
sample_interval = "2ms"
[topology]
kind = "graph"
nodes = ["a", "b"]
links = [ {{ from = "a", to = "b", rate = "150Mbps", delay = "1ms", queue = {{ limit = 100 }} }} ]
[[flows]]
src = "a"
dst = "b"
size = "4096000B"
tcp = {{ cc = "cubic", recover = "less_careful", mss = "4096B", rwnd = 16, rto_min = "1ms", timer_tick = "10us", misrx_detection = {detect} {FORCED} }}
"#
        );
        let r = Simulation::new(&scenario::from_toml(&text).unwrap()).unwrap().finish();
        assert_eq!(r.flows.i64("misrx_detected")[0], i64::from(detect));
        assert_eq!(r.flows.i64("timeouts")[0], 1);
        // 10 ms after the timeout (the sample where cwnd dropped), still in slow start.
        let (cwnd, w_max) = (r.flow_series.f64("cwnd"), r.flow_series.f64("cubic_w_max"));
        let timeout = (1..cwnd.len()).find(|&i| cwnd[i] < cwnd[i - 1]).expect("the timeout cut the window");
        w_max[timeout + 5]
    };
    assert!(w_max_after_timeout(false) > 10.0, "the timeout sets W_max to the flight size");
    assert_eq!(w_max_after_timeout(true), 0.0, "the undo restores it");
}
