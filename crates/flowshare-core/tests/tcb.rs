//! TCB interdependence and E-TCP end to end (`tcp.ensemble`, controllers `tcb` and `etcp`,
//! ADR 0010): a second transfer to the same receiver, opened after the first completed,
//! starts from the window and RTT the first left and completes sooner than a fresh one.

mod common;

use flowshare_core::results::RunResults;

/// Sender S, routers A and B joined by a 10 Mbps, 20 ms link with a queue too long to
/// overflow, receiver R behind B; two 300 KB transfers from S to R at 0 s and 2 s.
fn scenario(ensemble: &str) -> String {
    format!(
        r#"
[simulation]
duration = "4s"
seed = 3
sample_interval = "10ms"
[topology]
kind = "graph"
nodes = ["S", "A", "B", "R"]
links = [
  {{ from = "S", to = "A", rate = "1Gbps", delay = "1ms", queue = {{ limit = 10000 }} }},
  {{ from = "A", to = "B", rate = "10Mbps", delay = "20ms", queue = {{ limit = 10000 }} }},
  {{ from = "B", to = "R", rate = "1Gbps", delay = "1ms", queue = {{ limit = 10000 }} }},
]
[[flows]]
name = "pages"
src = "S"
dst = "R"
tcp = {{ recovery = "newreno", initial_window = 3, initial_ssthresh = 44{ensemble} }}
[flows.arrivals]
process = "trace"
transfers = [["0s", "300KB"], ["2s", "300KB"]]
"#
    )
}

/// Completion times of the transfers, s.
fn completions(r: &RunResults) -> Vec<f64> {
    r.transfers.f64("completion_time_s").to_vec()
}

/// The first sampled cwnd of the second transfer (flow 1).
fn first_cwnd_of_second(r: &RunResults) -> f64 {
    let s = &r.flow_series;
    let (f, w) = (s.i64("flow"), s.f64("cwnd"));
    (0..f.len()).find(|&i| f[i] == 1).map(|i| w[i]).expect("samples of the second transfer")
}

#[test]
fn a_later_transfer_inherits_the_closed_ones_state_and_completes_sooner() {
    let plain = common::run(&scenario(""));
    let tcb = common::run(&scenario(", ensemble = { controller = \"tcb\", key = \"receiver\" }"));
    common::assert_conservation(&tcb);
    let (p, t) = (completions(&plain), completions(&tcb));
    assert_eq!((p.len(), t.len()), (2, 2));
    // The first transfer has nothing to inherit: the same run either way.
    assert_eq!(p[0], t[0]);
    assert!(p[0] < 2.0, "the first transfer completed before the second opened");
    // 300 KB is 206 segments: from cwnd 3 the transfer takes 0.418 s; from the inherited
    // window (47.6 segments) and RTT, 0.291 s.
    assert_eq!(p[1], p[0], "without sharing the second is a fresh start like the first");
    assert!(t[1] < 0.8 * p[1], "inherited state: {} s, fresh: {} s", t[1], p[1]);
    assert!(first_cwnd_of_second(&tcb) > 44.0, "started above the initial ssthresh");
    assert!(first_cwnd_of_second(&plain) < 10.0);
    // With max_age shorter than the gap the state is discarded: a fresh start again.
    let aged = common::run(&scenario(", ensemble = { controller = \"tcb\", key = \"receiver\", max_age = \"1s\" }"));
    assert_eq!(completions(&aged), p);
    // E-TCP with no member open shares temporally too.
    let etcp = common::run(&scenario(", ensemble = { controller = \"etcp\", key = \"receiver\" }"));
    assert_eq!(completions(&etcp), t);
}

/// The one-line error a scenario is refused with, at loading or at building.
fn error(toml: &str) -> String {
    match flowshare_core::scenario::from_toml(toml) {
        Err(e) => e.to_string(),
        Ok(s) => flowshare_core::Simulation::new(&s).err().expect("refused").to_string(),
    }
}

#[test]
fn bad_options_are_one_line_errors_naming_the_field() {
    let cases = [
        (
            ", ensemble = { controller = \"tcb\", max_age = \"0s\" }",
            "tcp.ensemble.max_age: must be a duration > 0, got 0",
        ),
        (
            ", ensemble = { controller = \"tcb\", temporal = false, max_age = \"5s\" }",
            "tcp.ensemble.max_age: only used with temporal = true",
        ),
        (
            ", ensemble = { controller = \"etcp\", pacing = false }",
            "tcp.ensemble.pacing: only used with controller = \"efcm\", got controller = \"etcp\"",
        ),
        (
            ", ensemble = { controller = \"efcm\", cwnd = false }",
            "tcp.ensemble.cwnd: only used with controller = \"tcb\" or \"etcp\", got controller = \"efcm\"",
        ),
    ];
    for (ens, want) in cases {
        let msg = error(&scenario(ens));
        assert!(msg.contains(want) && !msg.contains('\n'), "{msg}");
    }
    let cubic = scenario(", ensemble = { controller = \"tcb\" }").replace("recovery = \"newreno\"", "cc = \"cubic\"");
    let msg = error(&cubic);
    assert!(msg.contains("TCB interdependence runs NewReno's window rules"), "{msg}");
}
