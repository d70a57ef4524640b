//! HTTP clients (`process = "http"`, ADR 0014) on the asymmetric link of Table 5.1 of
//! G. Hasegawa, "Congestion and Fairness Control Mechanisms of TCP for the High-Speed
//! Internet", PhD thesis, Osaka University, 2000: μ_f = 4000 packets/s of 1040 B downstream
//! (1000 B of payload), μ_r = 1000 ACKs/s of 40 B upstream, τ_f = τ_r = 1 ms, B_f = 8, B_r = 5.
//! The set-up of Eq. (5.1) comes out of the packets: the SYN and the request each cross the
//! uplink (1 ms of transmission, 1 ms of propagation), the SYN-ACK the downlink (40 B take
//! 9.615 µs, plus 1 ms).

use flowshare_core::results::Table;
use flowshare_core::{scenario, Simulation};

/// Transmission of 40 B at 33.28 Mbit/s, seconds.
const SYNACK_TX: f64 = 40.0 * 8.0 / 33.28e6;
/// Uplink leg of a 40-byte packet: 1 ms transmission + 1 ms propagation.
const UP: f64 = 2e-3;
/// Downlink leg of a data packet: 0.25 ms + 1 ms.
const DOWN: f64 = 1.25e-3;
/// Eq. (5.4): rtt = 1/μ_f + τ_f + 1/μ_r + τ_r.
const RTT: f64 = 3.25e-3;

fn scenario_toml(seed: u64, cc: &str, arrivals: &str) -> String {
    format!(
        r#"
[simulation]
duration = "60s"
seed = {seed}
sample_interval = "0s"
[topology]
kind = "graph"
nodes = ["server", "client"]
links = [
  {{ from = "server", to = "client", rate = "33.28Mbps", delay = "1ms", queue = {{ limit = 8 }},
     reverse = {{ rate = "320kbps", delay = "1ms", queue = {{ limit = 5 }} }} }},
]
[[flows]]
name = "web"
src = "server"
dst = "client"
tcp = {{ recovery = "tahoe", cc = {cc}, mss = "1000B", header = "40B", ack_size = "40B",
        initial_window = 1, rwnd = 1000, rto_min = "1us", timer_tick = "1us" }}
[flows.arrivals]
process = "http"
{arrivals}
"#
    )
}

fn run(toml: &str) -> Table {
    let s = scenario::from_toml(toml).unwrap_or_else(|e| panic!("bad test scenario: {e}"));
    let mut sim = Simulation::new(&s).unwrap();
    sim.run_until(sim.end());
    sim.finish().transfers
}

/// (document, completion time) of each row, in order of the documents.
fn documents(t: &Table) -> Vec<(i64, f64)> {
    let mut rows: Vec<(i64, f64)> =
        (0..t.rows()).map(|i| (t.i64("document")[i], t.f64("completion_time_s")[i])).collect();
    rows.sort_by_key(|r| r.0);
    rows
}

/// Document sizes by client, session and document.
fn sizes(t: &Table) -> Vec<(i64, i64, i64, i64)> {
    let mut v: Vec<_> = (0..t.rows())
        .map(|i| (t.i64("user")[i], t.i64("session")[i], t.i64("document")[i], t.i64("size_bytes")[i]))
        .collect();
    v.sort_unstable();
    v
}

fn refusal(arrivals: &str) -> String {
    refused(&scenario_toml(1, "\"reno\"", arrivals))
}

fn refused(toml: &str) -> String {
    match scenario::from_toml(toml).map(|s| Simulation::new(&s)) {
        Err(e) | Ok(Err(e)) => e.to_string(),
        Ok(Ok(_)) => panic!("accepted: {toml}"),
    }
}

#[test]
fn one_segment_over_http_1_0_takes_the_handshake_and_one_packet() {
    let t = run(&scenario_toml(1, "\"reno\"", "version = \"1.0\"\ndocuments = [\"1000B\"]"));
    assert_eq!(t.rows(), 1);
    let got = t.f64("completion_time_s")[0];
    // SYN up, SYN-ACK down, request up, the document down.
    let want = UP + (SYNACK_TX + 1e-3) + UP + DOWN;
    assert!((got - want).abs() < 1e-9, "{got} s, not {want} s");
    // Eq. (5.1) + (5.11): 1.5 rtt + one packet = 6.125 ms; the simulated set-up has two
    // uplink legs (2 ms each) and a SYN-ACK smaller than a data packet: 6.2596 ms.
    assert!((got / (1.5 * RTT + DOWN) - 1.0).abs() < 0.025, "{got}");
    assert_eq!((t.i64("session")[0], t.i64("document")[0], t.i64("size_bytes")[0]), (0, 0, 1000));
}

#[test]
fn http_1_1_saves_the_handshake_and_http_1_0_waits_for_the_last_ack() {
    let t11 = documents(&run(&scenario_toml(1, "\"reno\"", "version = \"1.1\"\ndocuments = [\"1KB\", \"1KB\"]")));
    let first = UP + (SYNACK_TX + 1e-3) + UP + DOWN;
    assert!((t11[0].1 - first).abs() < 1e-9, "{t11:?}");
    // The request (which carries the ACK of the first document) up, the document down:
    // Eq. (5.1)'s half round trip on the uplink, 2 ms, plus 1.25 ms.
    assert!((t11[1].1 - (UP + DOWN)).abs() < 1e-9, "{t11:?}");
    let t10 = documents(&run(&scenario_toml(1, "\"reno\"", "version = \"1.0\"\ndocuments = [\"1KB\", \"1KB\"]")));
    assert!((t10[0].1 - first).abs() < 1e-9, "{t10:?}");
    // A new connection: its SYN waits on the uplink for the old connection's last ACK (1 ms).
    assert!((t10[1].1 - (first + 1e-3)).abs() < 1e-9, "{t10:?}");
}

#[test]
fn a_persistent_window_shortens_later_documents_when_the_buffer_takes_its_burst() {
    // With B_f = 8 a kept window of 20 segments leaves in one burst and overflows the buffer
    // (Tahoe then times out), so the buffer here holds 100 packets.
    let docs = "documents = [\"20KB\", \"20KB\", \"20KB\"]";
    let big = |a: String| a.replace("queue = { limit = 8 }", "queue = { limit = 100 }");
    let restart = documents(&run(&big(scenario_toml(1, "\"reno\"", &format!("version = \"1.1\"\n{docs}")))));
    let keep = documents(&run(&big(scenario_toml(
        1,
        "\"reno\"",
        &format!("version = \"1.1\"\npersistent_cwnd = true\n{docs}"),
    ))));
    assert!((restart[0].1 - keep[0].1).abs() < 1e-12, "the first document is the same");
    for k in 1..3 {
        assert!(keep[k].1 < restart[k].1, "document {k}: kept {} s, restarted {} s", keep[k].1, restart[k].1);
    }
}

#[test]
fn sessions_of_a_mix_complete_every_document_despite_losses_and_are_deterministic() {
    // k = 8 > B_r: ACKs are lost upstream and data bursts overflow B_f.
    let arr = "version = \"1.1\"\nusers = 2\nsessions = 3\nthink = \"10ms\"\n\
        documents = { sizes = [\"2KB\", \"33KB\", \"200KB\"], weights = [40, 6, 1], count = 10 }";
    let toml = scenario_toml(7, "\"reno\"", arr).replace("rate = \"320kbps\"", "rate = \"166.4kbps\"");
    let a = run(&toml);
    assert_eq!(a.rows(), 2 * 3 * 10);
    assert!(a.f64("completion_time_s").iter().all(|c| c.is_finite() && *c > 0.0));
    assert!(a.i64("retransmits").iter().sum::<i64>() > 0, "losses happened");
    let b = run(&toml);
    assert_eq!(a.f64("completion_time_s"), b.f64("completion_time_s"));
    assert_eq!(a.i64("size_bytes"), b.i64("size_bytes"));
    let c = run(&scenario_toml(8, "\"reno\"", arr).replace("rate = \"320kbps\"", "rate = \"166.4kbps\""));
    assert_ne!(sizes(&a), sizes(&c), "another seed, other documents");
    // HTTP/1.0 and Vegas with the base-RTT refresh too.
    let v = run(&toml
        .replace("version = \"1.1\"", "version = \"1.0\"")
        .replace("cc = \"reno\"", "cc = { algo = \"vegas\", base_rtt_refresh = \"100ms\" }"));
    assert_eq!(v.rows(), 60);
    assert!(v.f64("completion_time_s").iter().all(|c| c.is_finite() && *c > 0.0));
    assert_eq!(sizes(&v), sizes(&a), "the same documents whatever the TCP");
}

#[test]
fn bad_input_is_refused_with_the_field_and_what_is_allowed() {
    assert_eq!(refusal("documents = [\"1KB\"]"), "flows[0].arrivals.version: is required: \"1.0\" or \"1.1\"");
    assert!(
        refusal("version = \"2.0\"\ndocuments = [\"1KB\"]").contains("unknown variant `2.0`, expected `1.0` or `1.1`")
    );
    assert!(refusal("version = \"1.0\"").starts_with("flows[0].arrivals.documents: is required"));
    assert_eq!(
        refusal("version = \"1.0\"\npersistent_cwnd = true\ndocuments = [\"1KB\"]"),
        "flows[0].arrivals.persistent_cwnd: applies to version = \"1.1\" (HTTP/1.0 opens a new connection per document)"
    );
    assert_eq!(
        refusal("version = \"1.1\"\ndocuments = []"),
        "flows[0].arrivals.documents: holds no document; give at least one size"
    );
    assert_eq!(
        refusal("version = \"1.1\"\nsessions = 0\ndocuments = [\"1KB\"]"),
        "flows[0].arrivals.sessions: must be at least 1"
    );
    assert!(refusal("version = \"1.1\"\nrate = 3\ndocuments = [\"1KB\"]")
        .starts_with("flows[0].arrivals.rate: not a field of process \"http\"; its fields are users, think"));
    let toml = scenario_toml(1, "\"reno\"", "version = \"1.1\"\ndocuments = [\"1KB\"]")
        .replace("initial_window = 1,", "initial_window = 1, handshake = true,");
    let e = refused(&toml);
    assert!(e.starts_with("flows[0].tcp.handshake: must be false with process = \"http\""), "{e}");
}
