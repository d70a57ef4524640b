//! HyStart for CUBIC (Ha and Rhee, Computer Networks 55(9), 2011; Linux `tcp_cubic.c`): slow
//! start ends when the queue starts to build, before the buffer overflows.

use flowshare_core::results::RunResults;

mod common;

use common::run;

/// One CUBIC flow over 50 Mbit/s, 40 ms RTT (a BDP of 167 packets) and a 400-packet buffer
/// for 3 s: without HyStart slow start overshoots until the buffer overflows.
fn cubic(extra: &str) -> RunResults {
    run(&format!(
        r#"
[simulation]
duration = "3s"
seed = 1
sample_interval = "10ms"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "50Mbps", delay = "18ms", queue = {{ limit = 400 }} }}
access = {{ rate = "1Gbps", delay = "1ms", queue = {{ limit = 100000 }} }}
[[flows]]
tcp = {{ cc = {{ algo = "cubic"{extra} }}, recovery = "sack", initial_window = 10, rto_min = "200ms" }}
"#
    ))
}

#[test]
fn hystart_leaves_slow_start_before_the_buffer_overflows() {
    let plain = cubic("");
    let hy = cubic(", hystart = true");
    let (d_plain, d_hy) = (plain.queues.i64("drops")[0], hy.queues.i64("drops")[0]);
    let (w_plain, w_hy) = (plain.flows.f64("cwnd_max")[0], hy.flows.f64("cwnd_max")[0]);
    eprintln!("drops: plain {d_plain}, HyStart {d_hy}; largest cwnd {w_plain} vs {w_hy}");
    // Slow start alone reaches BDP + buffer (about 567) and loses a large part of a window.
    assert!(d_plain > 50, "plain slow start dropped {d_plain}");
    assert!(w_plain > 500.0, "{w_plain}");
    // HyStart stops near the BDP, before the 400-packet buffer fills.
    assert_eq!(d_hy, 0, "HyStart dropped {d_hy}");
    assert!(w_hy > 100.0 && w_hy < 400.0, "{w_hy}");
    assert!(hy.queues.f64("utilization")[0] > 0.8);
}

/// Each detector alone also ends slow start early; off is the default and changes nothing.
/// Without pacing the ACK train fires first: the queue a slow-start round builds drains before
/// the next round's first samples, so the delay test only sees a standing queue late, once the
/// window is well beyond the BDP (still before plain slow start's overshoot).
#[test]
fn each_detector_works_and_off_is_the_default() {
    let w_plain = cubic("").flows.f64("cwnd_max")[0];
    let largest = |detect: &str| {
        let r = cubic(&format!(", hystart = true, hystart_detect = \"{detect}\""));
        r.flows.f64("cwnd_max")[0]
    };
    let (w_train, w_delay) = (largest("ack_train"), largest("delay"));
    eprintln!("largest cwnd: plain {w_plain}, ACK train {w_train}, delay {w_delay}");
    assert!(w_train < 400.0, "ACK train: largest cwnd {w_train}");
    assert!(w_delay < 0.75 * w_plain, "delay: largest cwnd {w_delay} vs plain {w_plain}");
    let a = cubic("");
    let b = cubic(", hystart = false");
    assert_eq!(a.flows.f64("goodput_bps"), b.flows.f64("goodput_bps"));
    assert_eq!(a.flows.f64("cwnd_mean"), b.flows.f64("cwnd_mean"));
}
