//! Timed link changes: rate, delay and up/down with rerouting (`[[changes]]`).

use flowshare_core::results::{Column, RunResults, Table};
use flowshare_core::trace::{EventKind, Reason};
use flowshare_core::{scenario, Simulation};

mod common;

use common::{assert_conservation, mean, run};

fn dumbbell(bottleneck: &str, flows: &str, changes: &str) -> String {
    format!(
        r#"
[simulation]
duration = "20s"
[topology]
kind = "dumbbell"
bottleneck = {bottleneck}
access = {{ rate = "1Gbps", delay = "1ms", queue = {{ limit = 10000 }} }}
{flows}
{changes}
"#
    )
}

/// Mean of flow `flow`'s sampled `col` over samples taken in `(from, to]` seconds.
fn series_mean(r: &RunResults, flow: i64, col: &str, from: f64, to: f64) -> f64 {
    let s = &r.flow_series;
    let (t, f, v) = (s.f64("time_s"), s.i64("flow"), s.f64(col));
    let x: Vec<f64> = (0..t.len()).filter(|&i| f[i] == flow && t[i] > from && t[i] <= to).map(|i| v[i]).collect();
    mean(&x)
}

fn strs<'a>(t: &'a Table, name: &str) -> &'a [String] {
    match t.get(name) {
        Some(Column::Str(v)) => v,
        _ => panic!("no text column {name}"),
    }
}

/// Queue id of the direction of link `link` leaving node `from`.
fn queue_of(r: &RunResults, link: &str, from: &str) -> i64 {
    let q = &r.queues;
    let (l, f) = (strs(q, "link"), strs(q, "from"));
    (0..q.rows()).find(|&i| l[i] == link && f[i] == from).unwrap_or_else(|| panic!("no queue {link} from {from}"))
        as i64
}

#[test]
fn a_rate_change_shows_in_the_throughput() {
    // 10 Mbps, then 4 Mbps from 10 s on; a queue of one BDP keeps the link busy.
    let r = run(&dumbbell(
        r#"{ rate = "10Mbps", delay = "10ms", queue = { limit = 30 } }"#,
        "[[flows]]\ntcp = { rto_min = \"200ms\" }",
        "[[changes]]\nat = \"10s\"\nlink = \"bottleneck\"\ndirection = \"forward\"\nrate = \"4Mbps\"",
    ));
    assert_conservation(&r);
    let before = series_mean(&r, 0, "goodput_bps", 3.0, 10.0);
    let after = series_mean(&r, 0, "goodput_bps", 12.0, 20.0);
    println!("goodput {before:.0} bit/s before, {after:.0} bit/s after the change to 4 Mbps");
    // Payload is 1460 of 1500 bytes on the wire.
    let payload = 1460.0 / 1500.0;
    assert!(before > 0.9 * 10e6 * payload && before <= 10e6 * payload, "{before}");
    assert!(after > 0.9 * 4e6 * payload && after <= 4e6 * payload * 1.001, "{after}");
    // The reverse direction kept its rate.
    assert_eq!(r.queues.f64("rate_bps")[1], 10e6);
    assert_eq!(r.queues.f64("rate_bps")[0], 4e6);
}

#[test]
fn a_delay_change_shows_in_the_rtt_and_packets_never_overtake() {
    // A window of 4 segments never fills the queue: the RTT is propagation and transmission.
    // The forward delay drops from 40 ms to 5 ms at 5 s and rises to 25 ms at 10 s.
    let mut text = dumbbell(
        r#"{ rate = "10Mbps", delay = "40ms", queue = { limit = 100 } }"#,
        "[[flows]]\ntcp = { rwnd = 4 }\n[[flows]]\ntransport = \"udp\"\nsource = { kind = \"cbr\", rate = \"2Mbps\" }",
        "[[changes]]\nat = \"5s\"\nlink = \"r0-r1\"\ndirection = \"forward\"\ndelay = \"5ms\"\n\
         [[changes]]\nat = \"10s\"\nlink = \"r0-r1\"\ndirection = \"forward\"\ndelay = \"25ms\"",
    );
    text.push_str("[trace]\nevents = true\nkinds = [\"receive\"]\nflows = [1]\n");
    let r = run(&text);
    assert_conservation(&r);
    // RTT = 2 × 1 ms access × 2 + forward + reverse (40 ms) + transmissions (≈ 1.3 ms).
    let srtt = |a: f64, b: f64| series_mean(&r, 0, "srtt_s", a, b);
    let (s1, s2, s3) = (srtt(3.0, 5.0), srtt(8.0, 10.0), srtt(13.0, 20.0));
    println!("srtt {s1:.4} s, {s2:.4} s, {s3:.4} s");
    for (s, fwd) in [(s1, 0.040), (s2, 0.005), (s3, 0.025)] {
        let base = 0.004 + fwd + 0.040;
        assert!(s > base && s < base + 0.003, "srtt {s} vs propagation {base}");
    }
    // The UDP flow's packets reach the sink in sequence: after the delay drop, new packets
    // wait for those already on the wire.
    let ev = r.trace.events.as_ref().unwrap();
    let seq = ev.i64("seq");
    assert!(seq.len() > 4000);
    assert!(seq.windows(2).all(|w| w[0] < w[1]), "UDP packets overtook each other");
    assert_eq!(r.flows.i64("drops")[1], 0);
}

/// Two paths from `s` to `d`: the primary `s–p–d` is declared first, the backup `s–b–d`
/// second, so routes take the primary while it is up.
fn two_paths(changes: &str, trace: &str) -> String {
    format!(
        r#"
[simulation]
duration = "15s"
[topology]
kind = "graph"
nodes = ["s", "p", "b", "d"]
links = [
  {{ from = "s", to = "p", name = "sp", rate = "100Mbps", delay = "1ms", queue = {{ limit = 1000 }} }},
  {{ from = "p", to = "d", name = "pd", rate = "10Mbps", delay = "10ms", queue = {{ limit = 50 }} }},
  {{ from = "s", to = "b", name = "sb", rate = "100Mbps", delay = "1ms", queue = {{ limit = 1000 }} }},
  {{ from = "b", to = "d", name = "bd", rate = "5Mbps", delay = "20ms", queue = {{ limit = 50 }} }},
]
[[flows]]
src = "s"
dst = "d"
tcp = {{ rto_min = "200ms", recovery = "sack" }}
[[flows]]
transport = "udp"
src = "s"
dst = "d"
source = {{ kind = "cbr", rate = "1Mbps" }}
{changes}
{trace}
"#
    )
}

#[test]
fn a_link_going_down_reroutes_traffic_and_back_when_it_comes_up() {
    let r = run(&two_paths(
        "[[changes]]\nat = \"5s\"\nlink = \"pd\"\nup = false\n[[changes]]\nat = \"10s\"\nlink = \"pd\"\nup = true",
        "[trace]\nevents = true\nkinds = [\"enqueue\", \"drop\"]",
    ));
    assert_conservation(&r);
    let (primary, backup) = (queue_of(&r, "pd", "p"), queue_of(&r, "bd", "b"));
    let ev = r.trace.events.as_ref().unwrap();
    let (t, kind, link, reason) = (ev.i64("time_ns"), ev.i64("kind"), ev.i64("link"), ev.i64("reason"));
    let enq = |q: i64| -> Vec<f64> {
        (0..ev.rows())
            .filter(|&i| kind[i] == EventKind::Enqueue as i64 && link[i] == q)
            .map(|i| t[i] as f64 / 1e9)
            .collect()
    };
    let (on_p, on_b) = (enq(primary), enq(backup));
    println!("primary: {} enqueues, backup: {}", on_p.len(), on_b.len());
    // Data reaches the primary's bottleneck only while it is up, and the backup's only while
    // the primary is down (packets on their way when it comes back up continue on the backup
    // from the node they reach, s or b, for at most a few milliseconds).
    assert!(on_p.iter().all(|&x| !(5.0..10.0).contains(&x)), "primary used while down");
    assert!(on_b.iter().all(|&x| (5.0..10.01).contains(&x)), "backup used while the primary is up");
    for (from, to) in [(1.0, 5.0), (10.5, 15.0)] {
        assert!(on_p.iter().filter(|&&x| x >= from && x < to).count() > 1000, "primary idle in [{from}, {to})");
    }
    assert!(on_b.iter().filter(|&&x| (5.5..10.0).contains(&x)).count() > 1000);
    // The packets queued on or crossing the primary when it went down are lost there.
    let down: Vec<usize> = (0..ev.rows()).filter(|&i| reason[i] == Reason::LinkDown as i64).collect();
    assert!(!down.is_empty());
    assert!(down.iter().all(|&i| t[i] == 5_000_000_000));
    let f = &r.flows;
    let route_drops: i64 = f.i64("route_drops").iter().chain(f.i64("ack_route_drops")).sum();
    assert_eq!(route_drops, down.len() as i64 + count_reason(ev, Reason::NoRoute));
    let q = &r.queues;
    let lost_on_p = q.i64("down_drops")[primary as usize] + q.i64("down_losses")[primary as usize];
    let lost_on_p_rev = q.i64("down_drops")[primary as usize + 1] + q.i64("down_losses")[primary as usize + 1];
    assert_eq!(lost_on_p + lost_on_p_rev, down.len() as i64);
    // The TCP flow keeps going over each path at about its capacity.
    let g = |a: f64, b: f64| series_mean(&r, 0, "goodput_bps", a, b);
    let (g1, g2, g3) = (g(2.0, 5.0), g(6.0, 10.0), g(12.0, 15.0));
    println!("TCP goodput {g1:.0}, {g2:.0}, {g3:.0} bit/s");
    assert!(g1 > 7e6 && g2 > 3e6 && g2 < 4.1e6 && g3 > 7e6, "{g1} {g2} {g3}");
}

#[test]
fn a_scheduled_link_going_down_loses_its_queue_and_reroutes() {
    // The primary bottleneck is DRR (per-flow queues) in both directions; FQ-CoDel on the
    // backup. Packets waiting in the schedulers are lost when the primary goes down, traffic
    // moves to the backup and back, and every packet is accounted for.
    let text = two_paths(
        "[[changes]]\nat = \"5s\"\nlink = \"pd\"\nup = false\n[[changes]]\nat = \"10s\"\nlink = \"pd\"\nup = true",
        "[trace]\nevents = true\nkinds = [\"drop\"]",
    )
    .replace(
        "name = \"pd\", rate = \"10Mbps\", delay = \"10ms\", queue = { limit = 50 }",
        "name = \"pd\", rate = \"10Mbps\", delay = \"10ms\", queue = { kind = \"drr\", limit = 50 }",
    )
    .replace(
        "name = \"bd\", rate = \"5Mbps\", delay = \"20ms\", queue = { limit = 50 }",
        "name = \"bd\", rate = \"5Mbps\", delay = \"20ms\", queue = { kind = \"fq_codel\", limit = 50 }",
    );
    assert!(text.contains("kind = \"drr\"") && text.contains("kind = \"fq_codel\""));
    let r = run(&text);
    assert_conservation(&r);
    let (primary, backup) = (queue_of(&r, "pd", "p") as usize, queue_of(&r, "bd", "b") as usize);
    let q = &r.queues;
    assert!(q.i64("down_drops")[primary] > 0, "packets waiting in DRR are lost");
    assert!(q.i64("arrivals")[backup] > 1000 && q.i64("arrivals")[primary] > 5000);
    let g = |a: f64, b: f64| series_mean(&r, 0, "goodput_bps", a, b);
    let (g1, g2, g3) = (g(2.0, 5.0), g(6.0, 10.0), g(12.0, 15.0));
    assert!(g1 > 7e6 && g2 > 3e6 && g3 > 7e6, "{g1} {g2} {g3}");
    // Deterministic.
    assert_eq!(format!("{:?}", r.queues), format!("{:?}", run(&text).queues));
}

fn count_reason(ev: &Table, reason: Reason) -> i64 {
    ev.i64("reason").iter().filter(|&&x| x == reason as i64).count() as i64
}

#[test]
fn without_a_route_packets_are_dropped_at_the_first_hop() {
    // Both paths down from 4 s to 6 s: nothing gets through, every packet sent is dropped at
    // the sender for want of a route, and the flows recover afterwards.
    let changes = "[[changes]]\nat = \"4s\"\nlink = \"pd\"\nup = false\n[[changes]]\nat = \"4s\"\nlink = \"bd\"\nup = false\n\
                   [[changes]]\nat = \"6s\"\nlink = \"bd\"\nup = true\n[[changes]]\nat = \"6s\"\nlink = \"pd\"\nup = true";
    let r = run(&two_paths(changes, "[trace]\nevents = true"));
    assert_conservation(&r);
    let ev = r.trace.events.as_ref().unwrap();
    let (t, kind, reason, flow) = (ev.i64("time_ns"), ev.i64("kind"), ev.i64("reason"), ev.i64("flow"));
    let received = |a: f64, b: f64| {
        (0..ev.rows())
            .filter(|&i| kind[i] == EventKind::Receive as i64 && (t[i] as f64 / 1e9) >= a && (t[i] as f64 / 1e9) < b)
            .count()
    };
    assert_eq!(received(4.05, 6.0), 0, "delivered without a route");
    assert!(received(7.0, 15.0) > 1000);
    let no_route: Vec<usize> = (0..ev.rows()).filter(|&i| reason[i] == Reason::NoRoute as i64).collect();
    // The CBR source keeps sending: 1 Mbps of 1000-byte payloads, 250 packets in 2 s.
    let udp = no_route.iter().filter(|&&i| flow[i] == 1).count();
    println!("no-route drops: {} ({udp} UDP)", no_route.len());
    assert!((249..=251).contains(&udp), "{udp}");
    assert!(no_route.iter().all(|&i| (4e9 as i64..6e9 as i64).contains(&t[i])));
    assert!(r.flows.i64("route_drops")[1] >= udp as i64);
}

#[test]
fn changes_leave_runs_deterministic_and_tables_without_changes_unchanged() {
    let text = two_paths("[[changes]]\nat = \"5s\"\nlink = \"pd\"\nup = false", "");
    let (a, b) = (run(&text), run(&text));
    assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));
    assert_eq!(format!("{:?}", a.queues), format!("{:?}", b.queues));
    assert_eq!(format!("{:?}", a.flow_series), format!("{:?}", b.flow_series));
    let plain = run(&two_paths("", ""));
    assert!(plain.flows.get("route_drops").is_none() && plain.queues.get("down_drops").is_none());
}

#[test]
fn bad_changes_name_the_field() {
    let err = |changes: &str| {
        let s = scenario::from_toml(&two_paths(changes, "")).and_then(|s| s.build().map(|_| ()));
        match s {
            Ok(()) => panic!("accepted {changes}"),
            Err(e) => e.to_string(),
        }
    };
    assert_eq!(
        err("[[changes]]\nat = \"1s\"\nlink = \"xy\"\nup = false"),
        "changes[0].link: unknown link \"xy\"; links are \"sp\", \"pd\", \"sb\", \"bd\""
    );
    assert_eq!(
        err("[[changes]]\nat = \"16s\"\nlink = \"pd\"\nup = false"),
        "changes[0].at: 16s is beyond the end of the run (simulation.duration = 15s)"
    );
    assert_eq!(
        err("[[changes]]\nat = \"1s\"\nlink = \"pd\""),
        "changes[0]: changes nothing; give at least one of rate, delay, up"
    );
    assert_eq!(
        err("[[changes]]\nat = \"1s\"\nlink = \"pd\"\nrate = \"0bps\""),
        "changes[0].rate: must be greater than 0bps (use up = false)"
    );
    let e = err("[[changes]]\nat = \"1s\"\nlink = \"pd\"\nrat = \"1Mbps\"");
    assert!(e.starts_with("changes[0].rat: unknown field `rat`"), "{e}");
    let e = err("[[changes]]\nat = \"1s\"\nlink = \"pd\"\nup = false\ndirection = \"sideways\"");
    assert!(e.starts_with("changes[0].direction: unknown variant `sideways`"), "{e}");
    // A negative time is a parse error naming the entry's field.
    let e = err("[[changes]]\nat = \"1s\"\nlink = \"pd\"\nup = false\n[[changes]]\nat = \"-1s\"\nlink = \"pd\"");
    assert!(e.starts_with("changes[1].at:") && !e.contains('\n'), "{e}");
}

/// Damjanović (2010), S7 (`scenarios/s7-route-change.toml`), shortened: the TCP flows move onto
/// path A at 10 s and back at 20 s instead of 20 s and 50 s.
#[test]
fn s7_route_change_moves_the_tcp_flows_onto_path_a_and_back() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/s7-route-change.toml"))
        .expect("the example exists");
    let mut s = scenario::from_toml(&text).unwrap();
    s.simulation.duration = flowshare_core::units::Dur::from_millis(30_000);
    s.changes[0].at = flowshare_core::units::Dur::from_millis(10_000);
    s.changes[1].at = flowshare_core::units::Dur::from_millis(20_000);
    let r = Simulation::new(&s).unwrap().finish();
    assert_conservation(&r);
    let g = |flow: i64, a: f64, b: f64| series_mean(&r, flow, "goodput_bps", a, b);
    let tcp = |a: f64, b: f64| g(1, a, b) + g(2, a, b);
    let (agg_alone, agg_shared, agg_back) = (g(0, 5.0, 10.0), g(0, 13.0, 20.0), g(0, 25.0, 30.0));
    let (tcp_b, tcp_a, tcp_b2) = (tcp(5.0, 10.0), tcp(13.0, 20.0), tcp(25.0, 30.0));
    println!("aggregate {agg_alone:.0} / {agg_shared:.0} / {agg_back:.0}; TCP {tcp_b:.0} / {tcp_a:.0} / {tcp_b2:.0}");
    let cap = 15e6 * 1460.0 / 1500.0;
    // Alone on its path, each side fills it; sharing path A, the two together fill it. Goodput
    // counts in-order delivery, so a retransmission that fills a hole inside the window also
    // releases data that crossed the link before it: up to 1 % above the link over 7 s.
    assert!(agg_alone > 0.85 * cap && tcp_b > 0.85 * cap);
    assert!(agg_shared + tcp_a > 0.85 * cap && agg_shared + tcp_a <= 1.01 * cap);
    assert!(agg_shared < 0.85 * cap && tcp_a > 0.1 * cap, "path A is shared");
    assert!(agg_back > 0.8 * cap && tcp_b2 > 0.8 * cap, "the TCP flows left path A");
    let q = &r.queues;
    let path_b = queue_of(&r, "path_b", "b0") as usize;
    assert!(q.i64("down_drops").iter().sum::<i64>() + q.i64("down_losses").iter().sum::<i64>() > 0);
    assert!(q.f64("utilization")[path_b] < 0.9, "path B idle while the TCP flows are away");
}
