//! ATM cell links (ADR 0013): AAL5 segmentation and reassembly in whole simulations.

use flowshare_core::results::RunResults;
use flowshare_core::{scenario, Simulation};

mod common;

use common::{assert_conservation, run};

/// A dumbbell whose bottleneck `bottleneck` (an inline table's fields) and access links
/// (`access`) may be cell links, with the flow groups of `flows`.
fn network(seconds: u32, bottleneck: &str, access: &str, flows: &str) -> String {
    format!(
        r#"
[simulation]
duration = "{seconds}s"
seed = 3
[topology]
kind = "dumbbell"
bottleneck = {{ {bottleneck} }}
access = {{ {access} }}
{flows}
"#
    )
}

const CBR: &str =
    "[[flows]]\ntransport = \"udp\"\nsource = { kind = \"cbr\", rate = \"2Mbps\", packet_size = \"1000B\" }";

#[test]
fn a_packet_crosses_a_cell_link_as_its_aal5_cells() {
    // 1000-byte datagrams with UDP/IP's 28 bytes: 1028 + 8 bytes of trailer, 22 cells.
    let r = run(&network(
        2,
        r#"rate = "10Mbps", delay = "5ms", cells = true, queue = { limit = 10000 }"#,
        r#"rate = "100Mbps", delay = "1ms", queue = { limit = 10000 }"#,
        CBR,
    ));
    assert_conservation(&r);
    let (f, q) = (&r.flows, &r.queues);
    let sent = f.i64("packets_sent")[0];
    let size = f.i64("bytes_sent")[0] / sent; // payload
    assert_eq!(size, 1000);
    assert!(sent > 400, "{sent} datagrams");
    // 1000 bytes of payload and 28 of UDP/IP headers, with the 8-byte trailer: 22 cells.
    let cells_per_packet = 22;
    // The bottleneck's forward queue sees cells, the access links packets.
    let b = 0; // the bottleneck's forward direction
    let arrivals = q.i64("arrivals")[b];
    assert_eq!(arrivals % cells_per_packet, 0, "whole frames of cells");
    let delivered = f.i64("packets_received")[0];
    assert_eq!(f.i64("drops")[0], 0);
    // Every frame that entered the cell link was delivered or is still on its way.
    let framed = arrivals / cells_per_packet;
    assert!(
        framed >= delivered && framed <= delivered + f.i64("in_network_end")[0],
        "{framed} frames, {delivered} delivered"
    );
    // 2 Mbit/s of 1028-byte packets is 2.29 Mbit/s of cells on the wire: 22 × 53 / 1028.
    let wire = q.f64("utilization")[b] * 10e6;
    let expected = 2e6 * 1028.0 / 1000.0 * (22.0 * 53.0) / 1028.0;
    println!("cell bits on the wire {wire:.0} bit/s, expected {expected:.0}");
    assert!((wire / expected - 1.0).abs() < 0.001, "cell bits on the wire {wire} vs {expected}");
}

#[test]
fn a_lost_cell_loses_its_frame_at_reassembly() {
    // 4 Mbit/s of datagrams into a 2 Mbit/s cell link with a 30-cell buffer: cells are
    // dropped, and every frame that lost one is discarded at the far end.
    let r = run(&network(
        5,
        r#"rate = "2Mbps", delay = "5ms", cells = true, queue = { limit = 30 }"#,
        r#"rate = "100Mbps", delay = "1ms", queue = { limit = 10000 }"#,
        "[[flows]]\ntransport = \"udp\"\nsource = { kind = \"cbr\", rate = \"4Mbps\", packet_size = \"1000B\" }",
    ));
    assert_conservation(&r);
    let (f, q) = (&r.flows, &r.queues);
    let b = 0; // the bottleneck's forward direction
    let (sent, received, lost) = (f.i64("packets_sent")[0], f.i64("packets_received")[0], f.i64("drops")[0]);
    let cells_dropped = q.i64("drops")[b];
    assert!(cells_dropped > 0 && lost > 0);
    // A frame is lost for one cell or several, so fewer frames than cells are lost.
    assert!(lost <= cells_dropped, "{lost} frames for {cells_dropped} cells");
    // What reaches the receiver is whole frames at most the link's share of cells allows.
    let departures = q.i64("departures")[b];
    assert!(received * 22 <= departures, "{received} frames from {departures} cells");
    // Cells of lost frames still use the link: goodput falls below the cell rate's.
    let goodput = f.f64("goodput_bps")[0];
    assert!(goodput < 2e6 * 1000.0 / (22.0 * 53.0), "goodput {goodput}");
    assert!(sent > received + lost, "some frames are still in the network at the end");
}

#[test]
fn tcp_runs_over_atm_end_to_end_with_the_cell_tax() {
    // The thesis's 4,352-byte packets (4,312 bytes of payload): 91 cells, 4,823 bytes on the
    // wire; goodput at most 4,312 / 4,823 = 0.894 of the bottleneck.
    let r = run(&network(
        10,
        r#"rate = "20Mbps", delay = "2ms", cells = true, queue = { limit = 2000 }"#,
        r#"rate = "150Mbps", delay = "0.5ms", cells = true, queue = { limit = 100000 }"#,
        "[[flows]]\ntcp = { mss = \"4312B\", rwnd = 15 }",
    ));
    assert_conservation(&r);
    let f = &r.flows;
    let goodput = f.f64("goodput_bps")[0];
    let ceiling = 20e6 * 4312.0 / (91.0 * 53.0);
    println!("goodput {goodput:.0} bit/s, ceiling {ceiling:.0}");
    assert!(goodput <= ceiling * 1.0001 && goodput > 0.8 * ceiling, "goodput {goodput} vs {ceiling}");
    // An ACK of 40 bytes and its 8-byte trailer fill one cell: the reverse bottleneck sees one
    // cell per ACK, one ACK per segment received, less those still on the destination's link.
    let acks = r.queues.i64("arrivals")[1];
    let received = f.i64("packets_received")[0];
    assert!(acks <= received && acks >= received - 2, "{acks} ACK cells for {received} segments");
}

#[test]
fn cell_links_refuse_what_they_cannot_do() {
    let cell_bottleneck = r#"rate = "10Mbps", delay = "5ms", cells = true"#;
    let cases = [
        (
            network(
                1,
                cell_bottleneck,
                r#"rate = "100Mbps", delay = "1ms""#,
                &format!("{CBR}\n[trace]\npcap = [\"bottleneck\"]"),
            ),
            "trace.pcap[0]",
            "cell link",
        ),
        (
            network(
                1,
                cell_bottleneck,
                r#"rate = "100Mbps", delay = "1ms""#,
                &format!(
                    "{CBR}\n[[changes]]\nat = \"0.5s\"\nlink = \"r0-r1\"\ndirection = \"forward\"\nrate = \"5Mbps\""
                ),
            ),
            "changes",
            "cell links",
        ),
        (
            graph(
                r#"{ from = "a", to = "b", rate = "10Mbps", delay = "1ms", cells = true },
  { from = "b", to = "c", rate = "10Mbps", delay = "1ms" },
  { from = "c", to = "d", rate = "10Mbps", delay = "1ms", cells = true },"#,
                "d",
            ),
            "topology",
            "a -> b -> c -> d enters the cell network",
        ),
        (
            network(
                1,
                r#"rate = "10Mbps", delay = "5ms", queue = { kind = "epd" }"#,
                r#"rate = "100Mbps", delay = "1ms""#,
                CBR,
            ),
            "topology.bottleneck.queue.kind",
            "needs cells = true",
        ),
        (
            network(
                1,
                &format!(r#"{cell_bottleneck}, queue = {{ kind = "epd", limit = "5000B" }}"#),
                "rate = \"100Mbps\", delay = \"1ms\"",
                CBR,
            ),
            "topology.bottleneck.queue.limit",
            "in cells",
        ),
        (
            network(
                1,
                &format!(r#"{cell_bottleneck}, queue = {{ kind = "epd", limit = 100, threshold = 101 }}"#),
                "rate = \"100Mbps\", delay = \"1ms\"",
                CBR,
            ),
            "topology.bottleneck.queue.threshold",
            "at most the limit (100 cells)",
        ),
        (
            network(
                1,
                &format!(r#"{cell_bottleneck}, queue = {{ kind = "droptail", ppd = true }}"#),
                "rate = \"100Mbps\", delay = \"1ms\"",
                CBR,
            ),
            "topology.bottleneck.queue.ppd",
            "needs kind = \"epd\"",
        ),
        (
            network(
                1,
                r#"rate = "10Mbps", delay = "5ms""#,
                r#"rate = "100Mbps", delay = "1ms""#,
                &format!("{CBR}\nabr = {{}}"),
            ),
            "flows[0].abr",
            "crosses no cell link",
        ),
        (
            network(1, cell_bottleneck, r#"rate = "100Mbps", delay = "1ms""#, &format!("{CBR}\ncount = 2\nabr = {{}}")),
            "flows[0].abr",
            "r0 -> r1, which other routes cross too",
        ),
        (
            network(
                1,
                cell_bottleneck,
                r#"rate = "100Mbps", delay = "1ms", cells = true"#,
                &format!("{CBR}\nabr = {{ airf = 0.01, rif = 0.01 }}"),
            ),
            "flows[0].abr.rif",
            "give airf or rif, not both",
        ),
        (
            network(
                1,
                cell_bottleneck,
                r#"rate = "100Mbps", delay = "1ms", cells = true"#,
                &format!("{CBR}\nabr = {{ icr = 0.01, mcr = 0.02 }}"),
            ),
            "flows[0].abr.mcr",
            "at most icr",
        ),
        (
            network(
                1,
                cell_bottleneck,
                r#"rate = "100Mbps", delay = "1ms", cells = true, queue = { kind = "red" }"#,
                &format!("{CBR}\nabr = {{}}"),
            ),
            "flows[0].abr",
            "whose queue is not \"droptail\"",
        ),
        (
            network(
                1,
                r#"rate = "10Mbps", delay = "5ms", queue = { kind = "priority", classes = [{ flows = ["flow"], epd = {} }] }"#,
                r#"rate = "100Mbps", delay = "1ms""#,
                CBR,
            ),
            "topology.bottleneck.queue.classes",
            "needs cells = true",
        ),
        (
            network(
                1,
                &format!(
                    r#"{cell_bottleneck}, queue = {{ kind = "priority", limit = 100, classes = [{{ flows = ["flow"], epd = {{ threshold = 200 }} }}] }}"#
                ),
                "rate = \"100Mbps\", delay = \"1ms\"",
                CBR,
            ),
            "topology.bottleneck.queue.classes[0].epd.threshold",
            "at most the limit (100 cells)",
        ),
        (
            network(
                1,
                &format!(
                    r#"{cell_bottleneck}, queue = {{ kind = "drr", queues = [{{ flows = ["flow"], ecn_threshold = 5 }}] }}"#
                ),
                "rate = \"100Mbps\", delay = \"1ms\"",
                CBR,
            ),
            "topology.bottleneck.queue.queues[0].ecn_threshold",
            "only priority classes",
        ),
        (
            network(
                1,
                &format!(
                    r#"{cell_bottleneck}, queue = {{ kind = "priority", classes = [{{ flows = ["flow"], mark = "departure" }}] }}"#
                ),
                "rate = \"100Mbps\", delay = \"1ms\"",
                CBR,
            ),
            "topology.bottleneck.queue.classes[0].mark",
            "needs ecn_threshold",
        ),
    ];
    for (toml, field, what) in cases {
        let e = match Simulation::new(&scenario::from_toml(&toml).expect("parses")) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("accepted: {toml}"),
        };
        assert!(e.starts_with(field) && e.contains(what), "{e}");
    }
}

/// A chain graph `a - b - …` with `links`, one UDP flow from `a` to `dst` for 2 s.
fn graph(links: &str, dst: &str) -> String {
    format!(
        r#"
[simulation]
duration = "2s"
[topology]
kind = "graph"
nodes = ["a", "b", "c", "d"]
links = [
  {links}
]
[[flows]]
src = "a"
dst = "{dst}"
transport = "udp"
source = {{ kind = "cbr", rate = "2Mbps", packet_size = "1000B" }}
"#
    )
}

#[test]
fn a_lost_last_cell_merges_its_frame_with_the_next_as_aal5_does() {
    // 22-cell frames; the link's periodic loss takes the last cell of every other frame. Each
    // such frame is lost, and so is the whole frame after it, merged with its remains: nothing
    // arrives. A loss of every other frame's first cell loses only those frames.
    let run_with = |offset: u32| {
        let r = run(&graph(
            &format!(
                r#"{{ from = "a", to = "b", rate = "10Mbps", delay = "1ms", cells = true, queue = {{ limit = 10000 }}, loss = {{ model = "periodic", every = 44, offset = {offset} }} }},"#
            ),
            "b",
        ));
        let f = &r.flows;
        let (sent, received, lost) = (f.i64("packets_sent")[0], f.i64("packets_received")[0], f.i64("drops")[0]);
        assert_eq!(sent, received + lost + f.i64("in_network_end")[0]);
        assert_eq!(r.queues.i64("link_losses")[0], (r.queues.i64("departures")[0] + 44 - 1 - i64::from(offset)) / 44);
        (sent, received, lost)
    };
    let (sent, received, lost) = run_with(21);
    assert!(
        sent > 400 && received == 0 && lost >= sent - 2,
        "last cells: {sent} sent, {received} received, {lost} lost"
    );
    let (sent, received, lost) = run_with(0);
    assert!(
        (lost - sent / 2).abs() <= 1 && (received - sent / 2).abs() <= 2,
        "first cells: {sent} sent, {received} received, {lost} lost"
    );
}

#[test]
fn cells_cross_scheduled_queues_and_end_their_route_in_the_cell_network() {
    // A two-node graph whose only link is a cell link with a DRR queue: the route starts and
    // ends in the cell network, and its last (and only) hop is scheduled.
    let toml = r#"
[simulation]
duration = "5s"
seed = 2
[topology]
kind = "graph"
nodes = ["a", "b"]
links = [
  { from = "a", to = "b", rate = "10Mbps", delay = "5ms", cells = true, queue = { kind = "drr", limit = 1000, quantum = "53B" } },
]
[[flows]]
src = "a"
dst = "b"
tcp = { mss = "1460B", rwnd = 30 }
"#;
    let r = run(toml);
    assert_conservation(&r);
    let f = &r.flows;
    let total: f64 = f.f64("goodput_bps").iter().sum();
    // 1,500-byte packets are 32 cells, 1,696 bytes on the wire.
    let ceiling = 10e6 * 1460.0 / (32.0 * 53.0);
    println!("goodput {total:.0} bit/s, ceiling {ceiling:.0}");
    assert!(total > 0.8 * ceiling && total <= ceiling * 1.0001, "goodput {total} vs {ceiling}");
    assert!(f.i64("packets_received")[0] > 3000, "{} packets", f.i64("packets_received")[0]);
}

/// Ten Reno flows of the thesis's 4,352-byte packets (64 KB windows, started 1 ms apart) over
/// a 20 Mbit/s cell bottleneck whose queue is `queue`: total goodput (bit/s), frames lost at
/// reassembly, and the bottleneck's cell drops and early (EPD/PPD) drops.
fn ten_flows_over(queue: &str) -> (f64, i64, i64, i64) {
    let r = run(&network(
        10,
        &format!(r#"rate = "20Mbps", delay = "1ms", cells = true, queue = {{ {queue} }}"#),
        r#"rate = "150Mbps", delay = "0.1ms", cells = true, queue = { limit = 100000 }"#,
        "[[flows]]\ncount = 10\nstart_spacing = \"1ms\"\ntcp = { mss = \"4312B\", rwnd = 15, recovery = \"reno\", rto_min = \"10ms\" }",
    ));
    assert_conservation(&r);
    let (f, q) = (&r.flows, &r.queues);
    let goodput = f.f64("goodput_bps").iter().sum();
    (goodput, f.i64("drops").iter().sum(), q.i64("drops")[0], q.i64("early_drops")[0])
}

#[test]
fn epd_discards_whole_frames_and_keeps_the_goodput_that_tail_drop_wastes() {
    // A 1,000-cell buffer (11 frames) for ten 15-frame windows: tail drop (UBR) cuts cells out
    // of many frames, whose other cells still cross the link; EPD (threshold 500 cells)
    // refuses whole frames at their first cell. Fine-grained timers (10 ms minimum RTO), as
    // in the thesis.
    let ubr = ten_flows_over("limit = 1000");
    let epd = ten_flows_over(r#"kind = "epd", limit = 1000"#);
    let epd_a = ten_flows_over(r#"kind = "epd", limit = 1000, accounting = true"#);
    let ppd = ten_flows_over(r#"kind = "epd", limit = 1000, threshold = 1000, ppd = true"#);
    for (name, (g, frames, cells, early)) in [("UBR", ubr), ("EPD", epd), ("EPD/A", epd_a), ("PPD", ppd)] {
        println!("{name}: goodput {g:.0} bit/s, {frames} frames lost, {cells} cells dropped ({early} early)");
    }
    let ceiling = 20e6 * 4312.0 / (91.0 * 53.0);
    assert_eq!(ubr.3, 0, "tail drop discards nothing early");
    assert!(epd.0 > 1.08 * ubr.0 && epd.0 <= ceiling, "EPD {} vs UBR {}", epd.0, ubr.0);
    // EPD/A admits frames of circuits below their share over the threshold, so more frames meet
    // a full buffer: between UBR and EPD (Hasegawa (2000) §4.3.2: 0.898 against EPD's 0.934).
    assert!(epd_a.0 > ubr.0 && epd_a.0 < epd.0, "EPD/A {} vs UBR {} and EPD {}", epd_a.0, ubr.0, epd.0);
    // EPD drops frames whole: nearly every dropped cell belongs to a frame dropped whole
    // (a frame's 91 cells), so cells per lost frame is close to 91, against a few under UBR.
    let per_frame = |(_, frames, cells, _): (f64, i64, i64, i64)| cells as f64 / frames as f64;
    assert!(per_frame(epd) > 80.0 && per_frame(ubr) < 40.0, "{} and {}", per_frame(epd), per_frame(ubr));
    // PPD keeps the rest of a damaged frame off the link: better than UBR, short of EPD.
    assert!(ppd.3 > 0 && ppd.0 > ubr.0 && ppd.0 < epd.0, "PPD {} vs UBR {} and EPD {}", ppd.0, ubr.0, epd.0);
}

/// The single-hop network of Hasegawa (2000) §4.3.1 at a tenth of its size: `n` greedy Reno
/// flows of 4,352-byte packets (64 KB windows) started 1 ms apart, every link 149.76 Mbit/s
/// (353.2 cells/ms), the switch's output buffer `buffer` cells and `queue` its other fields,
/// the flows' table `flow` (e.g. an `abr` table). Returns the run.
fn single_hop(n: u32, tau_ms: f64, buffer: u32, queue: &str, flow: &str, seconds: f64) -> RunResults {
    let toml = format!(
        r#"
[simulation]
duration = "{seconds}s"
seed = 1
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "149.76Mbps", delay = "{tau_ms}ms", cells = true, queue = {{ limit = {buffer}{queue} }} }}
access = {{ rate = "149.76Mbps", delay = "0ms", cells = true, queue = {{ limit = 1000000 }} }}
[[flows]]
count = {n}
start_spacing = "1ms"
tcp = {{ mss = "4312B", rwnd = 15, recovery = "reno", rto_min = "10ms" }}
{flow}
"#
    );
    run(&toml)
}

/// A UDP CBR source of `rate` (1,000-byte datagrams, 22 cells each) until `stop`, over
/// 149.76 Mbit/s cell access links and a 20 Mbit/s cell bottleneck of 1,000 cells with the
/// extra queue fields `queue`, and the flow's extra fields `flow` (its `abr` table), for 4 s.
fn cbr_over_cells(rate: &str, stop: &str, queue: &str, flow: &str) -> RunResults {
    run(&format!(
        r#"
[simulation]
duration = "4s"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "20Mbps", delay = "1ms", cells = true, queue = {{ limit = 1000{queue} }} }}
access = {{ rate = "149.76Mbps", delay = "0.1ms", cells = true, queue = {{ limit = 1000000 }} }}
[[flows]]
transport = "udp"
source = {{ kind = "cbr", rate = "{rate}", packet_size = "1000B" }}
stop = "{stop}"
{flow}
"#
    ))
}

#[test]
fn an_abr_source_sends_one_rm_cell_in_32_and_the_destination_returns_each() {
    // 10 Mbit/s fit the 20 Mbit/s bottleneck: nothing is lost, every forward RM cell comes
    // back. Each datagram is 22 cells; the source sends an RM cell before its 1st, 32nd, 63rd
    // ... cell, so D data cells bring ⌈D / 31⌉ RM cells.
    let r = cbr_over_cells("10Mbps", "1s", ", ecn_threshold = 500", "abr = {}");
    let (f, q) = (&r.flows, &r.queues);
    let sent = f.i64("packets_sent")[0];
    assert_eq!(sent, 1250);
    assert_eq!((f.i64("packets_received")[0], f.i64("drops")[0]), (sent, 0));
    let data = 22 * sent;
    let rm = (data + 30) / 31;
    assert_eq!(q.i64("arrivals")[0], data + rm, "forward cells at the switch");
    assert_eq!(q.i64("arrivals")[1], rm, "backward RM cells");
    assert_eq!(q.i64("ecn_marks")[0], 0, "the queue never reached the threshold");
}

#[test]
fn abr_feedback_keeps_an_overloaded_switch_from_dropping_most_cells() {
    // 100 Mbit/s offered to a 20 Mbit/s cell bottleneck for 3 s. Without rate control (UBR)
    // the switch drops four cells in five and almost no datagram arrives whole. An ABR source
    // whose forward RM cells the switch marks (EFCI) above 500 cells holds the excess in its
    // own interface: the switch drops far fewer cells and most of what it carries arrives
    // whole. Without marking, ABR climbs to PCR and is no better than UBR.
    let ubr = cbr_over_cells("100Mbps", "3s", ", ecn_threshold = 500", "");
    let abr = cbr_over_cells("100Mbps", "3s", ", ecn_threshold = 500", "abr = {}");
    let unmarked = cbr_over_cells("100Mbps", "3s", "", "abr = {}");
    let line = |name: &str, r: &RunResults| {
        let (f, q) = (&r.flows, &r.queues);
        println!(
            "{name}: {} datagrams received of {}, switch {} of {} cells dropped, {} RM cells marked, utilization {:.3}",
            f.i64("packets_received")[0],
            f.i64("packets_sent")[0],
            q.i64("drops")[0],
            q.i64("arrivals")[0],
            q.i64("ecn_marks")[0],
            q.f64("utilization")[0]
        );
        (f.i64("packets_received")[0], q.i64("drops")[0], q.i64("arrivals")[0])
    };
    let (u, a, n) = (line("UBR", &ubr), line("ABR", &abr), line("ABR unmarked", &unmarked));
    assert!(u.0 < 200 && u.1 * 10 > u.2 * 7, "UBR {u:?}");
    assert!(a.0 > 20 * u.0 && a.1 * 2 < a.2 && a.1 * 4 < u.1, "ABR {a:?} vs UBR {u:?}");
    assert!(n.0 < a.0 / 10, "unmarked ABR {n:?} vs ABR {a:?}");
    assert!(abr.queues.i64("ecn_marks")[0] > 0 && ubr.queues.i64("ecn_marks")[0] == 0);
}

#[test]
fn the_flow_series_carries_the_abr_sources_allowed_cell_rate() {
    // PCR 353,207.5 cells/s (149.76 Mbit/s of 53-byte cells), ICR = PCR/20, MCR = PCR/1000.
    // Offered 100 Mbit/s into a 20 Mbit/s switch that marks above 500 cells, the source's ACR
    // first climbs from ICR, then the marks bring it down near the bottleneck's 47,170 cells/s.
    let abr = cbr_over_cells("100Mbps", "3s", ", ecn_threshold = 500", "abr = {}");
    let unmarked = cbr_over_cells("100Mbps", "3s", "", "abr = {}");
    let ubr = cbr_over_cells("100Mbps", "3s", "", "");
    assert!(ubr.flow_series.get("acr_cells_s").is_none(), "no ABR source, no ACR column");
    let pcr = 149.76e6 / 424.0;
    let acr = abr.flow_series.f64("acr_cells_s");
    let time = abr.flow_series.f64("time_s");
    assert!(acr.iter().all(|&a| (pcr / 1000.0..=pcr).contains(&a)), "within [MCR, PCR]");
    let late: Vec<f64> = time.iter().zip(acr).filter(|(t, _)| (1.0..3.0).contains(*t)).map(|(_, &a)| a).collect();
    let mean = late.iter().sum::<f64>() / late.len() as f64;
    assert!((20_000.0..90_000.0).contains(&mean), "ACR {mean:.0} cells/s against 47,170 at the bottleneck");
    // Never marked, the source climbs to PCR and stays there.
    assert_eq!(*unmarked.flow_series.f64("acr_cells_s").last().unwrap(), pcr);
}

#[test]
fn tcp_over_abr_with_the_tuned_factors_loses_nothing_and_shares_fairly() {
    // Hasegawa (2000) §4.2.3, τ = 0.01 ms, 10 Kbyte (190 cells) at the switch, marking above
    // half of it: with Table 4.1's factors (AIRF 1/64, RDF factor 16) the sources overshoot
    // and the switch loses cells; with the tuned AIRF 1/256 and RDF factor 2 it loses none
    // and the ten connections share evenly (the thesis: 9,598 → 51 lost packets in 50 s).
    let goodputs = |flow: &str| {
        let r = single_hop(10, 0.01, 190, ", ecn_threshold = 95", flow, 5.0);
        let f = &r.flows;
        let g: Vec<f64> = f.f64("goodput_bps").to_vec();
        let total: f64 = g.iter().sum();
        let jain = total * total / (g.len() as f64 * g.iter().map(|x| x * x).sum::<f64>());
        let lost: i64 = f.i64("drops").iter().sum();
        println!(
            "{flow}: {:.3} of the cell ceiling, Jain {jain:.3}, {lost} packets lost",
            total / (149.76e6 * 4312.0 / (91.0 * 53.0))
        );
        (lost, jain)
    };
    let default = goodputs("abr = {}");
    let tuned = goodputs("abr = { airf = 0.00390625, rdff = 2 }");
    assert!(default.0 > 100, "Table 4.1's factors: {default:?}");
    assert!(tuned.0 == 0 && tuned.1 > 0.99, "tuned: {tuned:?}");
}

#[test]
fn vbr_cells_go_first_and_the_data_class_discards_frames_or_marks() {
    // Hasegawa (2000) §4.3.3 at a small scale: an MPEG-like VBR source (mean 4.5 Mbit/s, peak
    // 14.84) with strict priority over ten TCP connections at a 20 Mbit/s cell switch. The data
    // class (1,000 cells) either discards whole frames (EPD) or marks forward RM cells of ABR
    // sources above 500 cells (EFCI); the VBR class loses nothing either way.
    let run_with = |class: &str, abr: &str| {
        let r = run(&network(
            5,
            &format!(
                r#"rate = "20Mbps", delay = "1ms", cells = true, queue = {{ kind = "priority", limit = 100000, classes = [ {{ flows = ["vbr"] }}, {{ flows = ["data"], limit = 1000{class} }} ] }}"#
            ),
            r#"rate = "149.76Mbps", delay = "0.1ms", cells = true, queue = { limit = 1000000 }"#,
            &format!(
                "[[flows]]\nname = \"vbr\"\ntransport = \"udp\"\nsource = {{ kind = \"vbr\", rate = \"4.5Mbps\", peak = \"14.84Mbps\" }}\n\
                 [[flows]]\nname = \"data\"\ncount = 10\nstart_spacing = \"1ms\"\ntcp = {{ mss = \"4312B\", rwnd = 15, recovery = \"reno\", rto_min = \"10ms\" }}\n{abr}"
            ),
        ));
        assert_conservation(&r);
        let (f, q) = (&r.flows, &r.queues);
        let data_lost: i64 = f.i64("drops")[1..].iter().sum();
        let data_goodput: f64 = f.f64("goodput_bps")[1..].iter().sum();
        println!(
            "{class} {abr}: VBR {} of {} lost; data {data_goodput:.0} bit/s, {data_lost} packets lost; switch {} cells dropped ({} early), {} marked",
            f.i64("drops")[0],
            f.i64("packets_sent")[0],
            q.i64("drops")[0],
            q.i64("early_drops")[0],
            q.i64("ecn_marks")[0]
        );
        (f.i64("drops")[0], data_lost, q.i64("drops")[0], q.i64("early_drops")[0], q.i64("ecn_marks")[0])
    };
    let epd = run_with(", epd = {}", "");
    assert_eq!(epd.0, 0, "VBR lost nothing");
    assert!(epd.3 > 0 && epd.2 as f64 > 80.0 * epd.1 as f64, "EPD discards whole frames: {epd:?}");
    let abr = run_with(", ecn_threshold = 500", "abr = {}");
    assert_eq!(abr.0, 0, "VBR lost nothing");
    assert!(abr.4 > 0 && abr.3 == 0, "EFCI marks, nothing is discarded early: {abr:?}");
}

#[test]
fn efci_marking_as_cells_leave_feeds_back_without_the_queueing_delay() {
    // τ = 1 ms, 300 Kbyte (5,796 cells) and the text's tuned factors (AIRF 1/128, RDF factor
    // 2): marked as they arrive, forward RM cells wait behind the 2,898 cells that made the
    // switch mark them (8.2 ms against a 2-ms round trip), and the loop overshoots and
    // undershoots; marked as they leave, the sources see the queue as it is (the thesis: 0.9588
    // and no loss).
    let run_marking = |mark: &str| {
        let q = format!(
            r#", kind = "priority", classes = [{{ flows = ["flow"], ecn_threshold = 2898, mark = "{mark}" }}]"#
        );
        let r = single_hop(10, 1.0, 5796, &q, "abr = { airf = 0.0078125, rdff = 2 }", 5.0);
        let f = &r.flows;
        let throughput = f.f64("goodput_bps").iter().sum::<f64>() / (149.76e6 * 4312.0 / (91.0 * 53.0));
        let lost: i64 = f.i64("drops").iter().sum();
        println!(
            "marking on {mark}: {throughput:.3} of the cell ceiling, {lost} packets lost, {} marks",
            r.queues.i64("ecn_marks")[0]
        );
        (throughput, lost, r.queues.i64("ecn_marks")[0])
    };
    let arrival = run_marking("arrival");
    let departure = run_marking("departure");
    assert!(departure.2 > 0 && arrival.2 > 0);
    assert!(departure.0 > 0.9 && departure.1 == 0, "departure {departure:?}");
    assert!(arrival.0 < 0.75, "arrival {arrival:?}");
}
