//! Shared-medium LANs (`topology.lans`): one channel for every station and both directions.

use flowshare_core::results::{Column, RunResults, Table};
use flowshare_core::scenario;
use flowshare_core::trace::EventKind;

mod common;

use common::{assert_conservation, run};

/// A server `srv` behind router `r`; `r`, `h1` and `h2` share a 10 Mbps LAN. `lan` is the
/// rest of the LAN table, `flows` the flow groups.
fn lan_scenario(duration: &str, lan: &str, flows: &str, extra: &str) -> String {
    format!(
        r#"
[simulation]
duration = "{duration}"
[topology]
kind = "graph"
nodes = ["srv", "r", "h1", "h2"]
links = [{{ from = "srv", to = "r", rate = "1Gbps", delay = "5ms", queue = {{ limit = 1000 }} }}]
lans = [{{ name = "lan", nodes = ["r", "h1", "h2"], rate = "10Mbps", delay = "0.5us"{lan} }}]
{flows}
{extra}
"#
    )
}

fn strs<'a>(t: &'a Table, name: &str) -> &'a [String] {
    match t.get(name) {
        Some(Column::Str(v)) => v,
        _ => panic!("no text column {name}"),
    }
}

/// Queue ids of the LAN's station directions, in station order.
fn lan_queues(r: &RunResults) -> Vec<usize> {
    queues_of(r, "lan")
}

fn queues_of(r: &RunResults, name: &str) -> Vec<usize> {
    let l = strs(&r.queues, "link");
    (0..r.queues.rows()).filter(|&i| l[i] == name).collect()
}

#[test]
fn the_lan_never_carries_more_than_its_capacity_over_both_directions() {
    // Data from the server to h1 and from h2 to the server: each crosses the LAN once, and
    // its ACKs cross it the other way, so r, h1 and h2 all transmit on the one channel.
    let flows = "[[flows]]\nsrc = \"srv\"\ndst = \"h1\"\ntcp = { rto_min = \"200ms\" }\n\
                 [[flows]]\nsrc = \"h2\"\ndst = \"srv\"\ntcp = { rto_min = \"200ms\" }";
    let r = run(&lan_scenario(
        "10s",
        ", queue = { limit = 50 }",
        flows,
        "[trace]\nevents = true\nkinds = [\"dequeue\"]\nlinks = [\"lan\"]",
    ));
    assert_conservation(&r);
    let q = &r.queues;
    let lan = lan_queues(&r);
    assert_eq!(
        strs(q, "from")
            .iter()
            .enumerate()
            .filter(|(i, _)| lan.contains(i))
            .map(|(_, s)| s.as_str())
            .collect::<Vec<_>>(),
        ["r", "h1", "h2"]
    );
    assert!(lan.iter().all(|&i| strs(q, "to")[i] == "lan"));
    let util: Vec<f64> = lan.iter().map(|&i| q.f64("utilization")[i]).collect();
    let total: f64 = util.iter().sum();
    println!("LAN utilization per station {util:?}, total {total:.4}");
    assert!(total <= 1.0 + 1e-9, "the LAN carried {total} of its capacity");
    assert!(total > 0.95, "two saturating flows should fill the LAN: {total}");
    // h1 sends only ACKs: 40 of every 1500 bytes it receives.
    assert!(util.iter().all(|&u| u > 0.002), "every station transmits");
    // Transmissions never overlap: each ends at least its own serialization time after the
    // previous one on the channel, whichever station sent it.
    let ev = r.trace.events.as_ref().unwrap();
    let (t, size) = (ev.i64("time_ns"), ev.i64("size"));
    let mut overlaps = 0;
    for i in 1..ev.rows() {
        let tx = size[i] * 8 * 1_000_000_000 / 10_000_000;
        if t[i] - tx < t[i - 1] - 1 {
            overlaps += 1;
        }
    }
    assert!(ev.rows() > 10_000);
    assert_eq!(overlaps, 0);
    // Goodput of both flows together stays below the LAN's payload capacity, ACKs included.
    let g: f64 = r.flows.f64("goodput_bps").iter().sum();
    println!("goodput sum {g:.0} bit/s");
    assert!(g < 10e6 * 1460.0 / 1500.0 && g > 0.85 * 10e6 * 1460.0 / 1540.0, "{g}");
}

#[test]
fn two_stations_sending_at_once_share_the_channel() {
    // h1 and h2 each offer 8 Mbps to a 10 Mbps LAN: first come first served gives each half.
    let flows = "[[flows]]\nname = \"a\"\ntransport = \"udp\"\nsrc = \"h1\"\ndst = \"srv\"\nsource = { kind = \"cbr\", rate = \"8Mbps\" }\n\
                 [[flows]]\nname = \"b\"\ntransport = \"udp\"\nsrc = \"h2\"\ndst = \"srv\"\nstart = \"1ms\"\nsource = { kind = \"cbr\", rate = \"8Mbps\" }";
    let r = run(&lan_scenario("5s", ", queue = { limit = 20 }", flows, ""));
    assert_conservation(&r);
    let g = r.flows.f64("goodput_bps");
    // 1028-byte packets: 10 Mbps carries 9.73 Mbit/s of payload.
    let cap = 10e6 * 1000.0 / 1028.0;
    println!("goodputs {:.0} and {:.0} bit/s of {cap:.0}", g[0], g[1]);
    assert!(g[0] + g[1] <= cap * 1.0001 && g[0] + g[1] > 0.99 * cap);
    assert!((g[0] / g[1] - 1.0).abs() < 0.02, "unequal shares {} {}", g[0], g[1]);
    // Each station's own queue overflows.
    let lan = lan_queues(&r);
    assert!(r.queues.i64("drops")[lan[1]] > 0 && r.queues.i64("drops")[lan[2]] > 0);
}

#[test]
fn each_station_has_its_own_queue_and_limit() {
    // h2 alone offers more than the channel carries, so its queue fills whatever h1 does.
    let flows = "[[flows]]\ntransport = \"udp\"\nsrc = \"h1\"\ndst = \"srv\"\nsource = { kind = \"cbr\", rate = \"8Mbps\" }\n\
                 [[flows]]\ntransport = \"udp\"\nsrc = \"h2\"\ndst = \"srv\"\nsource = { kind = \"cbr\", rate = \"12Mbps\" }";
    let r = run(&lan_scenario("3s", ", queue = { limit = 40 }, queues = { h1 = { limit = 5 } }", flows, ""));
    assert_conservation(&r);
    let lan = lan_queues(&r);
    let (max, limit) = (r.queues.i64("max_len_pkts"), r.queues.i64("limit"));
    assert_eq!((limit[lan[0]], limit[lan[1]], limit[lan[2]]), (40, 5, 40));
    assert_eq!((max[lan[1]], max[lan[2]]), (5, 40));
    assert_eq!(max[lan[0]], 0, "the router sends nothing");
}

#[test]
fn routes_cross_a_lan_between_routers() {
    // a – r1 ═ LAN(r1, r2, r3) ═ r3 – b, and r2 – c: a's flow to b crosses the LAN once each
    // way, from r1 and from r3; r2 transmits only for the flow to c.
    let text = r#"
[simulation]
duration = "3s"
[topology]
kind = "graph"
nodes = ["a", "r1", "r2", "r3", "b", "c"]
links = [
  { from = "a", to = "r1", rate = "100Mbps", delay = "1ms" },
  { from = "r3", to = "b", rate = "100Mbps", delay = "1ms" },
  { from = "r2", to = "c", rate = "100Mbps", delay = "1ms" },
]
lans = [{ name = "core", nodes = ["r1", "r2", "r3"], rate = "20Mbps", delay = "1ms", queue = { limit = 50 } }]
[[flows]]
src = "a"
dst = "b"
[[flows]]
src = "c"
dst = "a"
start = "1s"
size = "100KB"
"#;
    let r = run(text);
    assert_conservation(&r);
    let q = &r.queues;
    let (from, arr) = (strs(q, "from"), q.i64("arrivals"));
    let lan = queues_of(&r, "core");
    let on = |node: &str| arr[*lan.iter().find(|&&i| from[i] == node).unwrap()];
    let f = &r.flows;
    println!("LAN arrivals r1 {}, r2 {}, r3 {}", on("r1"), on("r2"), on("r3"));
    // r1 carries flow 0's data and flow 1's ACKs, r3 flow 0's ACKs, r2 flow 1's data.
    // Each data packet received gets an ACK; those of the last millisecond are still on b's link.
    let acks = f.i64("packets_received")[0];
    assert!(on("r3") <= acks && on("r3") > acks - 20, "{} vs {acks}", on("r3"));
    assert_eq!(on("r2"), f.i64("packets_sent")[1]);
    assert!(on("r1") > acks);
    assert_eq!(f.i64("bytes_delivered")[1], 100_000);
    assert!(f.f64("goodput_bps")[0] > 15e6);
}

#[test]
fn a_lossy_lan_loses_on_every_station_with_its_own_stream() {
    let flows = "[[flows]]\ntransport = \"udp\"\nsrc = \"h1\"\ndst = \"h2\"\nsource = { kind = \"cbr\", rate = \"2Mbps\" }\n\
                 [[flows]]\ntransport = \"udp\"\nsrc = \"h2\"\ndst = \"h1\"\nsource = { kind = \"cbr\", rate = \"2Mbps\" }";
    let lossy = ", loss = { model = \"bernoulli\", p = 0.05 }";
    let r = run(&lan_scenario("20s", lossy, flows, ""));
    assert_conservation(&r);
    let lan = lan_queues(&r);
    let q = &r.queues;
    for &i in &lan[1..] {
        let (lost, n) = (q.i64("link_losses")[i] as f64, q.i64("departures")[i] as f64);
        let half = 3.29 * (0.05 * 0.95 / n).sqrt();
        println!("station {}: loss rate {:.4} ± {half:.4} over {n}", strs(q, "from")[i], lost / n);
        assert!((lost / n - 0.05).abs() < half);
    }
    // Separate streams: the two stations do not lose the same packet numbers.
    let losses: Vec<i64> = lan[1..].iter().map(|&i| q.i64("link_losses")[i]).collect();
    assert_ne!(losses[0], losses[1]);
}

#[test]
fn bad_lans_name_the_field() {
    let err = |lan: &str| {
        let text = format!(
            "[simulation]\nduration = \"1s\"\n[topology]\nkind = \"graph\"\nnodes = [\"a\", \"b\", \"c\"]\nlinks = []\nlans = [{lan}]\n[[flows]]\nsrc = \"a\"\ndst = \"b\"\n"
        );
        match scenario::from_toml(&text).and_then(|s| s.build().map(|_| ())) {
            Ok(()) => panic!("accepted {lan}"),
            Err(e) => e.to_string(),
        }
    };
    let ok = r#"name = "l", rate = "10Mbps", delay = "1us""#;
    assert_eq!(
        err(&format!("{{ {ok}, nodes = [\"a\", \"x\"] }}")),
        "topology.lans[0].nodes[1]: unknown node \"x\"; nodes are a, b, c"
    );
    assert_eq!(err(&format!("{{ {ok}, nodes = [\"a\"] }}")), "topology.lans[0].nodes: a LAN needs at least two nodes");
    assert_eq!(
        err(&format!("{{ {ok}, nodes = [\"a\", \"b\", \"a\"] }}")),
        "topology.lans[0].nodes[2]: node \"a\" is listed twice"
    );
    assert_eq!(
        err(&format!("{{ {ok}, nodes = [\"a\", \"b\"] }}, {{ {ok}, nodes = [\"b\", \"c\"] }}")),
        "topology.lans[1].name: another link or LAN is also called \"l\"; a LAN needs a unique name"
    );
    assert_eq!(
        err(&format!("{{ {ok}, nodes = [\"a\", \"b\"], queues = {{ c = {{ limit = 5 }} }} }}")),
        "topology.lans[0].queues.c: \"c\" is not a node of this LAN; its nodes are a, b"
    );
    assert_eq!(
        err(&format!("{{ {ok}, nodes = [\"a\", \"b\"], queue = {{ kind = \"drr\" }} }}")),
        "topology.lans[0].queue.kind: a LAN station's queue is \"droptail\" or \"red\", not \"drr\""
    );
    assert_eq!(
        err(&format!("{{ {ok}, nodes = [\"a\", \"b\"], queues = {{ b = {{ kind = \"fq_codel\" }} }} }}")),
        "topology.lans[0].queues.b.kind: a LAN station's queue is \"droptail\" or \"red\", not \"fq_codel\""
    );
    assert_eq!(
        err(&format!("{{ {ok}, nodes = [\"a\", \"b\"], queues = {{ b = {{ limit = 0 }} }} }}")),
        "topology.lans[0].queues.b.limit: must be at least 1 packet or 1 byte"
    );
    assert_eq!(
        err(r#"{ name = "l", rate = "0bps", delay = "1us", nodes = ["a", "b"] }"#),
        "topology.lans[0].rate: must be greater than 0bps"
    );
    assert!(err(&format!("{{ {ok}, nodes = [\"a\", \"b\"], speed = 1 }}")).starts_with("topology.lans[0]"));
    // A LAN has no direction to change.
    let text = format!(
        "[simulation]\nduration = \"1s\"\n[topology]\nkind = \"graph\"\nnodes = [\"a\", \"b\"]\nlinks = []\nlans = [{{ {ok}, nodes = [\"a\", \"b\"] }}]\n[[flows]]\nsrc = \"a\"\ndst = \"b\"\n[[changes]]\nat = \"0.5s\"\nlink = \"l\"\ndirection = \"forward\"\nrate = \"1Mbps\""
    );
    let e = scenario::from_toml(&text).and_then(|s| s.build().map(|_| ())).unwrap_err().to_string();
    assert_eq!(e, "changes[0].direction: \"l\" is a LAN, whose channel both directions share; omit direction");
    // LANs belong to graphs.
    let text = "[simulation]\nduration = \"1s\"\n[topology]\nkind = \"dumbbell\"\nbottleneck = { rate = \"1Mbps\", delay = \"1ms\" }\naccess = { rate = \"1Mbps\", delay = \"1ms\" }\nlans = []\n[[flows]]\n";
    let e = scenario::from_toml(text).and_then(|s| s.build().map(|_| ())).unwrap_err().to_string();
    assert_eq!(e, "topology.lans: only allowed with kind \"graph\", this is \"dumbbell\"");
}

#[test]
fn a_lan_going_down_and_changing_rate() {
    // The LAN drops to 2 Mbps at 2 s, goes down at 4 s and comes back at 5 s.
    let flows =
        "[[flows]]\ntransport = \"udp\"\nsrc = \"h1\"\ndst = \"srv\"\nsource = { kind = \"cbr\", rate = \"4Mbps\" }";
    let changes = "[[changes]]\nat = \"2s\"\nlink = \"lan\"\nrate = \"2Mbps\"\n\
                   [[changes]]\nat = \"4s\"\nlink = \"lan\"\nup = false\n[[changes]]\nat = \"5s\"\nlink = \"lan\"\nup = true";
    let r = run(&lan_scenario(
        "6s",
        ", queue = { limit = 20 }",
        flows,
        &format!("{changes}\n[trace]\nevents = true\nkinds = [\"receive\", \"drop\"]"),
    ));
    assert_conservation(&r);
    let ev = r.trace.events.as_ref().unwrap();
    let (t, kind) = (ev.i64("time_ns"), ev.i64("kind"));
    let got = |a: f64, b: f64| {
        (0..ev.rows())
            .filter(|&i| kind[i] == EventKind::Receive as i64 && t[i] as f64 >= a * 1e9 && (t[i] as f64) < b * 1e9)
            .count() as f64
    };
    // 4 Mbps of 1000-byte payloads is 500 packets/s; 2 Mbps of 1028-byte packets 243/s.
    let (fast, slow, down, back) = (got(1.0, 2.0), got(3.0, 4.0), got(4.01, 5.0), got(5.1, 6.0));
    println!("received per second: {fast}, {slow}, {down}, {back:.0}");
    assert!((fast - 500.0).abs() <= 1.0);
    assert!((slow - 2e6 / 8.0 / 1028.0).abs() <= 1.0);
    assert_eq!(down, 0.0);
    assert!(back > 200.0);
    assert!(r.flows.i64("route_drops")[0] > 0);
}

#[test]
fn a_station_queue_may_be_red() {
    let flows =
        "[[flows]]\ntransport = \"udp\"\nsrc = \"h2\"\ndst = \"srv\"\nsource = { kind = \"cbr\", rate = \"12Mbps\" }";
    let lan = ", queue = { limit = 50 }, queues = { h2 = { kind = \"red\", limit = 50, min_th = 5, max_th = 15 } }";
    let r = run(&lan_scenario("3s", lan, flows, ""));
    assert_conservation(&r);
    let (lan, q) = (lan_queues(&r), &r.queues);
    assert!(q.i64("early_drops")[lan[2]] > 0, "RED drops early on h2");
    assert!(q.f64("red_avg_pkts")[lan[2]] > 5.0 && q.f64("red_avg_pkts")[lan[0]].is_nan());
}

#[test]
fn trace_selectors_and_pcap_name_a_lan_and_its_stations() {
    let flows = "[[flows]]\nsrc = \"srv\"\ndst = \"h1\"";
    let trace = "[trace]\nevents = true\nkinds = [\"enqueue\"]\nlinks = [\"h1->lan\"]\npcap = [\"lan\"]";
    let s = scenario::from_toml(&lan_scenario("1s", "", flows, trace)).unwrap();
    let dir = std::env::temp_dir().join(format!("flowshare-lan-pcap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut sim = flowshare_core::Simulation::new(&s).unwrap();
    let paths = sim.set_pcap_dir(&dir).unwrap();
    let names: Vec<String> = paths.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["r-lan.pcap", "h1-lan.pcap", "h2-lan.pcap"]);
    let r = sim.finish();
    let h1 = lan_queues(&r)[1] as i64;
    let ev = r.trace.events.as_ref().unwrap();
    assert!(ev.rows() > 100 && ev.i64("link").iter().all(|&l| l == h1), "only h1's ACKs onto the LAN");
    let pcap = &r.trace.pcap;
    assert_eq!(
        pcap.iter().map(|p| p.packets).sum::<u64>() as i64,
        lan_queues(&r).iter().map(|&q| r.queues.i64("departures")[q]).sum::<i64>()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
