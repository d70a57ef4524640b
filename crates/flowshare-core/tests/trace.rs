//! Event traces and pcap captures: complete, ordered, filtered, and invisible when off.

mod common;

use flowshare_core::results::{RunResults, Table};
use flowshare_core::trace::{EventKind, Reason, PACKET_NAMES};
use flowshare_core::{scenario, Simulation};

/// Four flows through a 10 Mbps bottleneck with a 20-packet queue: overflow drops, forced
/// drops, a handshake and SACK recovery on some flows.
const BASE: &str = r#"
[simulation]
duration = "8s"
sample_interval = "50ms"
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "10ms", queue = { limit = 20 } }
access = { rate = "100Mbps", delay = "1ms", queue = { limit = 1000 } }
[[flows]]
name = "newreno"
count = 2
start_spacing = "100ms"
drop_segments = [30, 31, 90]
[[flows]]
name = "sack"
count = 2
start = "0.3s"
size = "2MB"
tcp = { recovery = "sack", handshake = true, delayed_ack = true }
"#;

fn with_trace(section: &str) -> String {
    format!("{BASE}\n[trace]\n{section}\n")
}

fn ints<'a>(t: &'a Table, name: &str) -> &'a [i64] {
    t.i64(name)
}

fn code(name: &str) -> i64 {
    PACKET_NAMES.iter().position(|n| *n == name).unwrap() as i64
}

/// Number of events of `kind` matching `pred(row)`.
fn count(ev: &Table, kind: EventKind, pred: impl Fn(usize) -> bool) -> i64 {
    let kinds = ints(ev, "kind");
    (0..ev.rows()).filter(|&i| kinds[i] == kind as i64 && pred(i)).count() as i64
}

fn events(r: &RunResults) -> &Table {
    r.trace.events.as_ref().expect("events traced")
}

#[test]
fn tracing_leaves_every_result_unchanged() {
    let plain = common::run(BASE);
    let again = common::run(BASE);
    let traced = common::run(&with_trace("events = true"));
    // Debug output compares NaN equal to NaN and shows every digit.
    let text = |t: &Table| format!("{t:?}");
    for r in [&again, &traced] {
        assert_eq!(text(&plain.flows), text(&r.flows));
        assert_eq!(text(&plain.queues), text(&r.queues));
        assert_eq!(text(&plain.flow_series), text(&r.flow_series));
        assert_eq!(text(&plain.queue_series), text(&r.queue_series));
        assert_eq!(plain.summary.events, r.summary.events);
    }
    assert!(plain.trace.events.is_none() && plain.trace.pcap.is_empty());
    // The normalized scenario of a run without [trace] has no trace key (same hash as before).
    let s = scenario::from_toml(BASE).unwrap();
    assert!(!s.to_json().contains("trace"));
}

#[test]
fn the_trace_is_complete_and_sorted() {
    let r = common::run(&with_trace("events = true"));
    let ev = events(&r);
    let (flow, packet, link, reason, time) =
        (ints(ev, "flow"), ints(ev, "packet"), ints(ev, "link"), ints(ev, "reason"), ints(ev, "time_ns"));
    assert!(ev.rows() > 10_000, "{} events", ev.rows());
    assert!(time.windows(2).all(|w| w[0] <= w[1]), "sorted by time");
    assert!(*time.last().unwrap() <= 8_000_000_000, "nothing after the end");
    let is_data = |i: usize| packet[i] == code("data") || packet[i] == code("syn");
    let is_ack = |i: usize| !is_data(i);
    let f = &r.flows;
    let mut total_overflow = 0;
    let mut total_forced = 0;
    for c in 0..f.rows() {
        let of = |i: usize| flow[i] == c as i64;
        let sent_data = count(ev, EventKind::Send, |i| of(i) && is_data(i));
        assert_eq!(sent_data, ints(f, "packets_sent")[c], "flow {c}: sends");
        let retx = count(ev, EventKind::Send, |i| of(i) && packet[i] == code("data") && ints(ev, "retx")[i] == 1);
        assert_eq!(retx, ints(f, "retransmits")[c], "flow {c}: retransmissions");
        assert_eq!(count(ev, EventKind::Receive, of), ints(f, "packets_received")[c], "flow {c}: receives");
        assert_eq!(count(ev, EventKind::Drop, |i| of(i) && is_data(i)), ints(f, "drops")[c], "flow {c}: drops");
        assert_eq!(count(ev, EventKind::Drop, |i| of(i) && is_ack(i)), ints(f, "ack_drops")[c], "flow {c}: ack drops");
        // Every data packet sent was received, dropped or is still in the network.
        let sent_all = count(ev, EventKind::Send, |i| of(i) && is_data(i));
        let gone = count(ev, EventKind::Receive, of) + count(ev, EventKind::Drop, |i| of(i) && is_data(i));
        assert_eq!(sent_all, gone + ints(f, "in_network_end")[c], "flow {c}: conservation");
        // ACKs: what the sink sent reached the sender, was dropped or is on its way.
        let acks_sent = count(ev, EventKind::Send, |i| of(i) && is_ack(i));
        let acks_in = count(ev, EventKind::Ack, of) + count(ev, EventKind::Drop, |i| of(i) && is_ack(i));
        assert!(acks_sent >= acks_in && acks_sent - acks_in < 200, "flow {c}: {acks_sent} acks sent, {acks_in} in");
        // The cumulative ACKs add up to what the sender has had acknowledged.
        let acked: i64 = (0..ev.rows())
            .filter(|&i| of(i) && ints(ev, "kind")[i] == EventKind::Ack as i64)
            .map(|i| ints(ev, "acked")[i])
            .sum();
        let delivered = ints(f, "bytes_delivered")[c];
        assert!(acked * 1460 >= delivered - 2 * 1460 * 50 && acked * 1460 <= delivered + 1460, "flow {c}");
        total_forced += count(ev, EventKind::Drop, |i| of(i) && reason[i] == Reason::Forced as i64);
        total_overflow += count(ev, EventKind::Drop, |i| of(i) && reason[i] == Reason::Overflow as i64);
    }
    assert_eq!(total_forced, 6, "three crafted losses for each of the two newreno flows");
    let q = &r.queues;
    let mut queue_drops = 0;
    for k in 0..q.rows() {
        let at = |i: usize| link[i] == k as i64;
        let enq = count(ev, EventKind::Enqueue, at);
        let drops = count(ev, EventKind::Drop, at);
        assert_eq!(enq + drops, ints(q, "arrivals")[k], "queue {k}: arrivals");
        assert_eq!(drops, ints(q, "drops")[k], "queue {k}: drops");
        assert_eq!(count(ev, EventKind::Dequeue, at), ints(q, "departures")[k], "queue {k}: departures");
        queue_drops += drops;
    }
    assert_eq!(queue_drops, total_overflow);
    assert!(total_overflow > 10, "the scenario overflows its queue ({total_overflow})");
    // Queue length from the trace matches the sampled series at every sample (a queue with an
    // event at the sample instant itself may be sampled before or after it: skipped).
    let series = &r.queue_series;
    let (st, sq, sl) = (series.f64("time_s"), ints(series, "queue"), ints(series, "len_pkts"));
    let kind = ints(ev, "kind");
    let mut j = 0;
    let mut len = vec![0i64; q.rows()];
    let mut checked = 0;
    let mut row = 0;
    while row < series.rows() {
        let t = (st[row] * 1e9).round() as i64;
        let mut at_t = vec![false; q.rows()];
        while j < ev.rows() && time[j] <= t {
            let l = link[j];
            if time[j] == t && l >= 0 {
                at_t[l as usize] = true;
            }
            match kind[j] {
                k if k == EventKind::Enqueue as i64 => len[l as usize] += 1,
                k if k == EventKind::Dequeue as i64 => len[l as usize] -= 1,
                _ => {}
            }
            j += 1;
        }
        while row < series.rows() && (st[row] * 1e9).round() as i64 == t {
            let qid = sq[row] as usize;
            if !at_t[qid] {
                assert_eq!(len[qid], sl[row], "queue {qid} at {}", st[row]);
                checked += 1;
            }
            row += 1;
        }
    }
    assert!(checked > series.rows() * 9 / 10, "{checked} of {}", series.rows());
}

#[test]
fn filters_select_a_subset_of_the_full_trace() {
    let full = common::run(&with_trace("events = true"));
    let part = common::run(&with_trace(
        "events = true\nflows = [1, 2]\nlinks = [\"bottleneck\"]\nkinds = [\"enqueue\", \"drop\", \"ack\"]\nstart = \"1s\"\nstop = \"3s\"",
    ));
    let (fe, pe) = (events(&full), events(&part));
    let keep = |i: usize| {
        let (t, k, f, l) = (ints(fe, "time_ns")[i], ints(fe, "kind")[i], ints(fe, "flow")[i], ints(fe, "link")[i]);
        let link_event = k == EventKind::Enqueue as i64 || (k == EventKind::Drop as i64 && l >= 0);
        (1_000_000_000..=3_000_000_000).contains(&t)
            && (f == 1 || f == 2)
            && [EventKind::Enqueue as i64, EventKind::Drop as i64, EventKind::Ack as i64].contains(&k)
            && (!link_event || l == 0 || l == 1)
    };
    let expected: Vec<usize> = (0..fe.rows()).filter(|&i| keep(i)).collect();
    assert!(expected.len() > 1000);
    assert_eq!(pe.rows(), expected.len());
    for col in ["time_ns", "kind", "flow", "link", "packet", "seq", "size", "retx", "acked", "reason"] {
        let want: Vec<i64> = expected.iter().map(|&i| ints(fe, col)[i]).collect();
        assert_eq!(ints(pe, col), want.as_slice(), "column {col}");
    }
}

#[test]
fn bad_trace_sections_name_the_field() {
    let err = |section: &str| {
        let text = with_trace(section);
        match scenario::from_toml(&text).and_then(|s| s.build().map(|_| ())) {
            Ok(()) => panic!("accepted {section}"),
            Err(e) => e.to_string(),
        }
    };
    assert_eq!(err("events = true\nflows = [4]"), "trace.flows[0]: flow 4 does not exist; flows are 0..3");
    let e = err("events = true\nlinks = [\"r0-r1\", \"core\"]");
    assert!(e.starts_with("trace.links[1]: unknown link \"core\"; give \"bottleneck\", a link name (\"r0-r1\""), "{e}");
    let e = err("events = true\nkinds = [\"sned\"]");
    assert!(e.starts_with("trace.kinds[0]: unknown variant `sned`, expected one of `send`"), "{e}");
    assert_eq!(err("flows = [0]"), "trace.flows: filters the event trace, which is off; set trace.events = true");
    assert_eq!(err("events = true\nstart = \"2s\"\nstop = \"1s\""), "trace.stop: 1s is not after start = 2s");
    assert_eq!(err("pcap = [\"r1->r0\", \"r1->s0\"]"), "trace.pcap[1]: no link goes from \"r1\" to \"s0\"");
    let e = err("event = true");
    assert!(e.starts_with("trace.event: unknown field `event`"), "{e}");
    assert!(!e.contains('\n'));
}

/// A pcap file parsed back: (link type, records of (time ns, captured bytes, original length)).
fn read_pcap(path: &std::path::Path) -> (u32, Vec<(u64, Vec<u8>, u32)>) {
    let data = std::fs::read(path).unwrap();
    let u32le = |at: usize| u32::from_le_bytes(data[at..at + 4].try_into().unwrap());
    assert_eq!(u32le(0), 0xa1b2_3c4d, "nanosecond pcap magic");
    assert_eq!((data[4], data[6]), (2, 4), "version 2.4");
    let mut records = Vec::new();
    let mut at = 24;
    while at < data.len() {
        let t = u64::from(u32le(at)) * 1_000_000_000 + u64::from(u32le(at + 4));
        let (incl, orig) = (u32le(at + 8) as usize, u32le(at + 12));
        records.push((t, data[at + 16..at + 16 + incl].to_vec(), orig));
        at += 16 + incl;
    }
    assert_eq!(at, data.len(), "no trailing bytes");
    (u32le(20), records)
}

#[test]
fn pcap_captures_every_departure_of_the_chosen_directions() {
    let dir = std::env::temp_dir().join(format!("flowshare-pcap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let s = scenario::from_toml(&with_trace("pcap = [\"bottleneck\", \"r1->d0\"]")).unwrap();
    let mut sim = Simulation::new(&s).unwrap();
    let paths = sim.set_pcap_dir(&dir).unwrap();
    let names: Vec<String> = paths.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["r0-r1.pcap", "r1-r0.pcap", "r1-d0.pcap"]);
    let r = sim.finish();
    assert!(r.trace.events.is_none() && r.trace.pcap_error.is_none());
    let departures = ints(&r.queues, "departures");
    for f in &r.trace.pcap {
        let (linktype, recs) = read_pcap(&f.path);
        assert_eq!(linktype, 101);
        assert_eq!(recs.len() as u64, f.packets);
        assert_eq!(recs.len() as i64, departures[f.queue as usize], "{}", f.path.display());
        assert!(recs.windows(2).all(|w| w[0].0 <= w[1].0), "timestamps in order");
        for (_, hdr, orig) in &recs {
            assert_eq!(hdr[0], 0x45);
            assert_eq!(u32::from(u16::from_be_bytes([hdr[2], hdr[3]])), *orig);
            let mut sum: u32 = hdr[..20].chunks(2).map(|c| u32::from(u16::from_be_bytes([c[0], c[1]]))).sum();
            while sum >> 16 != 0 {
                sum = (sum & 0xffff) + (sum >> 16);
            }
            assert_eq!(sum, 0xffff, "IPv4 header checksum");
        }
    }
    // The forward bottleneck carries data of all four flows, 1500 bytes for full segments.
    let (_, fwd) = read_pcap(&r.trace.pcap[0].path);
    let flows: std::collections::BTreeSet<u8> = fwd.iter().map(|(_, h, _)| h[15]).collect();
    assert_eq!(flows.into_iter().collect::<Vec<_>>(), [0, 1, 2, 3]);
    assert!(fwd.iter().filter(|(_, h, _)| h[12..14] == [10, 1]).all(|(_, _, o)| *o <= 1500));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// RED's early drops and a UDP flow's packets are traced with their own reason and packet
/// type, and the counts match the queue and flow tables.
#[test]
fn red_early_drops_and_udp_packets_are_traced() {
    let r = common::run(
        r#"
[simulation]
duration = "5s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "10ms", queue = { kind = "red", limit = 60, min_th = 5, max_th = 15, max_p = 0.1, w_q = 0.002, mode = "packets" } }
access = { rate = "100Mbps", delay = "1ms", queue = { limit = 1000 } }
[[flows]]
count = 4
[[flows]]
name = "cbr"
transport = "udp"
source = { kind = "cbr", rate = "2Mbps", packet_size = "1000B" }
[trace]
events = true
"#,
    );
    let ev = events(&r);
    let reason = ints(ev, "reason");
    let link = ints(ev, "link");
    let early = count(ev, EventKind::Drop, |i| reason[i] == Reason::Early as i64 && link[i] == 0);
    let overflow = count(ev, EventKind::Drop, |i| reason[i] == Reason::Overflow as i64 && link[i] == 0);
    let q = &r.queues;
    assert!(early > 0, "RED dropped nothing early");
    assert_eq!(early, q.i64("early_drops")[0]);
    assert_eq!(overflow, q.i64("forced_drops")[0]);
    let packet = ints(ev, "packet");
    let flow = ints(ev, "flow");
    let udp_received = count(ev, EventKind::Receive, |i| packet[i] == code("udp"));
    assert_eq!(udp_received, r.flows.i64("packets_received")[4]);
    assert!(udp_received > 0 && (0..ev.rows()).all(|i| packet[i] != code("udp") || flow[i] == 4));
}

/// Packets a link's loss model discards are traced as drops with reason `link_loss`, at the
/// end of their transmission, and count the queue's `link_losses`.
#[test]
fn link_losses_are_traced() {
    let r = common::run(
        r#"
[simulation]
duration = "3s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "10ms", queue = { limit = 100 }, loss = { model = "bernoulli", p = 0.02 } }
access = { rate = "100Mbps", delay = "1ms", queue = { limit = 1000 } }
[[flows]]
count = 2
[trace]
events = true
"#,
    );
    let ev = events(&r);
    let (reason, link) = (ints(ev, "reason"), ints(ev, "link"));
    let lost = count(ev, EventKind::Drop, |i| reason[i] == Reason::LinkLoss as i64 && link[i] == 0);
    assert!(lost > 0);
    assert_eq!(lost, r.queues.i64("link_losses")[0]);
    let per_flow: i64 = r.flows.i64("link_losses").iter().sum();
    assert_eq!(lost, per_flow);
}

/// A loss model before the queue loses packets on arrival: the trace shows each such loss at
/// the arrival time (the sender's send time plus the access link's transmission and delay),
/// not at the end of the link's last transmission.
#[test]
fn losses_before_the_queue_are_traced_at_arrival() {
    let r = common::run(
        r#"
[simulation]
duration = "2s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "10ms", loss = { model = "bernoulli", p = 0.3 }, loss_position = "before_queue" }
access = { rate = "100Mbps", delay = "1ms", queue = { limit = 1000 } }
[[flows]]
name = "cbr"
transport = "udp"
source = { kind = "cbr", rate = "2Mbps", packet_size = "1000B" }
[trace]
events = true
"#,
    );
    let ev = events(&r);
    let (kind, reason, link, seq, t) =
        (ints(ev, "kind"), ints(ev, "reason"), ints(ev, "link"), ints(ev, "seq"), ints(ev, "time_ns"));
    let sent: std::collections::HashMap<i64, i64> =
        (0..ev.rows()).filter(|&i| kind[i] == EventKind::Send as i64).map(|i| (seq[i], t[i])).collect();
    let lost: Vec<usize> = (0..ev.rows())
        .filter(|&i| kind[i] == EventKind::Drop as i64 && reason[i] == Reason::LinkLoss as i64 && link[i] == 0)
        .collect();
    assert_eq!(lost.len() as i64, r.queues.i64("link_losses")[0]);
    assert!(lost.len() > 50, "{} losses", lost.len());
    // 1028 bytes at 100 Mbit/s, then 1 ms.
    let hop = 82_240 + 1_000_000;
    assert!(lost.iter().all(|&i| t[i] - sent[&seq[i]] == hop), "a loss traced at another time");
    assert!(t.windows(2).all(|w| w[0] <= w[1]), "the trace is sorted by time");
}
