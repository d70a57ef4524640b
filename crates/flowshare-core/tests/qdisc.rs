//! Scheduled queue disciplines in whole simulations (ADR 0004): strict priority, DRR and DRR+,
//! enhanced RED, FQ-CoDel; their accounting, traces and errors.

mod common;

use flowshare_core::results::{RunResults, Table};
use flowshare_core::scenario;
use flowshare_core::trace::{EventKind, Reason};

/// A dumbbell with a 10 Mbps / 10 ms bottleneck of `queue` and fast access links.
fn dumbbell(seconds: u32, queue: &str, flows: &str) -> String {
    common::dumbbell(seconds, &format!(r#"rate = "10Mbps", delay = "10ms", queue = {queue}"#), flows)
}

fn cbr(name: &str, rate: &str) -> String {
    format!(
        "[[flows]]\nname = \"{name}\"\ntransport = \"udp\"\nsource = {{ kind = \"cbr\", rate = \"{rate}\", packet_size = \"1000B\" }}\n"
    )
}

fn tcp(name: &str, count: u32) -> String {
    format!(
        "[[flows]]\nname = \"{name}\"\ncount = {count}\nstart_spacing = \"10ms\"\ntcp = {{ recovery = \"sack\" }}\n"
    )
}

fn goodput(r: &RunResults, i: usize) -> f64 {
    r.flows.f64("goodput_bps")[i]
}

fn events(r: &RunResults) -> &Table {
    r.trace.events.as_ref().expect("events traced")
}

#[test]
fn priority_starves_the_low_class_while_the_high_class_saturates_the_link() {
    // Per-class limits: with only the shared one, the starved class would fill the buffer and
    // refuse the high class's arrivals.
    let q = r#"{ kind = "priority", limit = 200, classes = [ { flows = ["vbr"], limit = 50 }, { flows = ["data"], limit = 50 } ] }"#;
    // High class above the link rate: the low class gets nothing once both run.
    let r = common::run(&dumbbell(10, q, &(cbr("vbr", "12Mbps") + &cbr("data", "5Mbps"))));
    common::assert_conservation(&r);
    let (hi, lo) = (goodput(&r, 0), goodput(&r, 1));
    // 1028-byte packets of 1000 payload bytes at 10 Mbps: 9.73 Mbps of payload.
    assert!(hi > 9.6e6, "high class {hi}");
    assert!(lo < 0.05e6, "low class {lo}");
    // High class below the link rate: the low class gets the leftover.
    let r = common::run(&dumbbell(10, q, &(cbr("vbr", "4Mbps") + &cbr("data", "8Mbps"))));
    common::assert_conservation(&r);
    let (hi, lo) = (goodput(&r, 0), goodput(&r, 1));
    assert!((hi - 4e6).abs() < 0.05e6, "high class {hi}");
    let leftover = 10e6 * 1000.0 / 1028.0 - hi;
    assert!((lo - leftover).abs() < 0.02 * leftover, "low class {lo}, leftover {leftover}");
    // The low class's packets are the ones dropped.
    assert_eq!(r.flows.i64("drops")[0], 0);
    assert!(r.flows.i64("drops")[1] > 0);
}

#[test]
fn priority_gives_tcp_the_capacity_a_vbr_class_leaves() {
    let q = r#"{ kind = "priority", limit = 150, classes = [ { flows = ["vbr"], limit = 100 }, { flows = ["data"], limit = 50 } ] }"#;
    let vbr = "[[flows]]\nname = \"vbr\"\ntransport = \"udp\"\nsource = { kind = \"vbr\", rate = \"3Mbps\", peak = \"6Mbps\" }\n";
    let r = common::run(&dumbbell(20, q, &(vbr.to_string() + &tcp("data", 2))));
    common::assert_conservation(&r);
    assert_eq!(r.flows.i64("drops")[0], 0, "the VBR class is never dropped");
    let data = goodput(&r, 1) + goodput(&r, 2);
    assert!(data > 5.5e6, "TCP gets the rest: {data}");
}

#[test]
fn drr_shares_of_long_lived_tcp_flows_follow_the_quanta() {
    let q = r#"{ kind = "drr", limit = 300, queues = [
        { flows = ["a"], quantum = "1500B", limit = 100 },
        { flows = ["b"], quantum = "3000B", limit = 100 },
        { flows = ["c"], quantum = "4500B", limit = 100 } ] }"#;
    let flows = tcp("a", 1) + &tcp("b", 1) + &tcp("c", 1);
    let r = common::run(&dumbbell(60, q, &flows));
    common::assert_conservation(&r);
    let g: Vec<f64> = (0..3).map(|i| goodput(&r, i)).collect();
    let total: f64 = g.iter().sum();
    for (i, w) in [1.0, 2.0, 3.0].iter().enumerate() {
        let share = g[i] / total;
        let want = w / 6.0;
        assert!((share / want - 1.0).abs() < 0.02, "flow {i}: share {share:.4}, quantum share {want:.4}");
    }
    assert!(total > 9.0e6, "{total}");
}

#[test]
fn drr_default_gives_every_flow_its_own_queue_and_equal_shares() {
    // A shared buffer that refuses arrivals would let phase-locked CBR flows take unequal
    // parts of it; pushing out from the longest queue keeps the shares fair.
    let q = r#"{ kind = "drr", limit = 200, quantum = 1, overflow = "push_out_longest" }"#;
    let flows = cbr("u", "6Mbps") + &cbr("v", "6Mbps") + &cbr("w", "2Mbps");
    let r = common::run(&dumbbell(10, q, &flows));
    common::assert_conservation(&r);
    // Max-min fair: w gets its 2 Mbps, u and v split the rest.
    let (u, v, w) = (goodput(&r, 0), goodput(&r, 1), goodput(&r, 2));
    assert!((w - 2e6).abs() < 0.02e6, "{w}");
    assert!((u / v - 1.0).abs() < 0.01, "{u} vs {v}");
    assert!(((u + v + w) - 10e6 * 1000.0 / 1028.0).abs() < 0.05e6);
}

#[test]
fn drr_push_out_drops_queued_packets_of_the_longest_queue() {
    let q = r#"{ kind = "drr", limit = "30000B", overflow = "push_out_longest" }"#;
    let flows = cbr("u", "9Mbps") + &cbr("v", "3Mbps") + "[trace]\nevents = true\nlinks = [\"r0->r1\"]\n";
    let r = common::run(&dumbbell(5, q, &flows));
    common::assert_conservation(&r);
    let ev = events(&r);
    let (kind, reason, flow) = (ev.i64("kind"), ev.i64("reason"), ev.i64("flow"));
    let pushed = |f: i64| {
        (0..ev.rows())
            .filter(|&i| kind[i] == EventKind::Drop as i64 && reason[i] == Reason::PushOut as i64 && flow[i] == f)
            .count()
    };
    // Only the heavy flow, whose queue is the longest, loses packets; they are push-outs.
    assert!(pushed(0) > 100, "{}", pushed(0));
    assert_eq!(pushed(1), 0);
    assert_eq!(r.flows.i64("drops")[0] as usize, pushed(0));
    assert_eq!(r.queues.i64("forced_drops")[0] as usize, pushed(0));
    // Every enqueued packet is dequeued or dropped or still held at the end.
    let count = |k: EventKind| (0..ev.rows()).filter(|&i| kind[i] == k as i64).count() as i64;
    let held = r.queues.i64("len_end_pkts")[0];
    assert_eq!(count(EventKind::Enqueue), count(EventKind::Dequeue) + pushed(0) as i64 + held);
}

#[test]
fn drr_plus_runs_red_in_each_queue() {
    let q = r#"{ kind = "drr", limit = 120, aqm = "red", min_th = 5, max_th = 15, max_p = 0.1, w_q = 0.002, mode = "packets",
        queues = [ { flows = ["a"], limit = 60 }, { flows = ["b"], limit = 60 } ] }"#;
    let r = common::run(&dumbbell(30, q, &(tcp("a", 2) + &tcp("b", 2))));
    common::assert_conservation(&r);
    let q0 = &r.queues;
    assert!(q0.i64("early_drops")[0] > 20, "{}", q0.i64("early_drops")[0]);
    // RED keeps each queue short: the mean length is far below the 120-packet limit.
    assert!(q0.f64("mean_len_pkts")[0] < 40.0, "{}", q0.f64("mean_len_pkts")[0]);
    let a = goodput(&r, 0) + goodput(&r, 1);
    let b = goodput(&r, 2) + goodput(&r, 3);
    assert!((a / b - 1.0).abs() < 0.05, "{a} vs {b}");
}

#[test]
fn enhanced_red_drops_each_group_with_its_own_probability() {
    // Thresholds 0 and a very large max_th: every arrival is between them and the queue
    // never fills, so each flow's early-drop rate is its p_i.
    let q = r#"{ kind = "enhanced_red", limit = 100000, min_th = 0, max_th = 1000000, max_p = 0.3,
        flow_p = { low = 0.02, high = 0.1 } }"#;
    let flows = cbr("low", "4Mbps") + &cbr("high", "4Mbps") + &cbr("other", "4Mbps");
    let r = common::run(&dumbbell(20, q, &flows));
    common::assert_conservation(&r);
    for (i, p) in [0.02, 0.1, 0.3].iter().enumerate() {
        // Trials: every packet sent reached the queue (but the one or two still on the 1 ms
        // access link); those waiting in the queue at the end were accepted.
        let n = r.flows.i64("packets_sent")[i] as f64;
        let d = r.flows.i64("drops")[i] as f64;
        let sd = (n * p * (1.0 - p)).sqrt();
        assert!((d - n * p).abs() < 3.29 * sd, "flow {i}: {d} drops of {n}, p = {p}");
    }
    assert_eq!(r.queues.i64("early_drops")[0], r.queues.i64("drops")[0]);
}

/// A bulk TCP flow and a sparse 100 kbps UDP flow share a 10 Mbps bottleneck with a large
/// buffer; returns the sparse flow's mean one-way delay.
fn sparse_delay(queue: &str) -> (f64, RunResults) {
    let flows = tcp("bulk", 1) + &cbr("sparse", "100kbps").replace("1000B", "100B");
    let r = common::run(&dumbbell(20, queue, &flows));
    common::assert_conservation(&r);
    (r.flows.f64("delay_mean_s")[1], r)
}

#[test]
fn fq_codel_isolates_a_sparse_flow_from_a_bulk_flows_standing_queue() {
    let (fifo, _) = sparse_delay("{ limit = 1000 }");
    let (fq, r) = sparse_delay(r#"{ kind = "fq_codel", limit = 1000 }"#);
    // Propagation: 1 + 10 + 1 ms. Behind the bulk flow's standing queue of hundreds of
    // packets the FIFO adds hundreds of ms; FQ-CoDel serves the sparse flow first.
    assert!(fifo > 0.2, "FIFO delay {fifo}");
    assert!(fq < 0.0135, "FQ-CoDel delay {fq}");
    assert_eq!(r.flows.i64("drops")[1], 0, "the sparse flow loses nothing");
    // CoDel keeps the bulk flow's queue near target: drops are CoDel's, none forced.
    let q = &r.queues;
    assert!(q.i64("early_drops")[0] > 0);
    assert_eq!(q.i64("forced_drops")[0], 0);
    assert!(q.f64("mean_len_pkts")[0] < 30.0, "{}", q.f64("mean_len_pkts")[0]);
    // One Reno-style flow behind a 5 ms target does not quite fill a 24 ms RTT pipe.
    assert!(goodput(&r, 0) > 8.0e6, "bulk goodput {}", goodput(&r, 0));
}

#[test]
fn fq_codel_with_hash_buckets_runs_and_conserves() {
    let q = r#"{ kind = "fq_codel", limit = 200, buckets = 2, quantum = "300B", target = "2ms", interval = "50ms" }"#;
    let r = common::run(&dumbbell(10, q, &(tcp("t", 4) + "[trace]\nevents = true\nlinks = [\"r0->r1\"]\n")));
    common::assert_conservation(&r);
    assert!(r.queues.f64("utilization")[0] > 0.9);
    // CoDel's drops are traced with their reason, at dequeue, and count as early drops.
    let ev = events(&r);
    let (kind, reason) = (ev.i64("kind"), ev.i64("reason"));
    let codel = (0..ev.rows())
        .filter(|&i| kind[i] == EventKind::Drop as i64 && reason[i] == Reason::Codel as i64)
        .count() as i64;
    assert!(codel > 0);
    assert_eq!(codel, r.queues.i64("early_drops")[0]);
}

#[test]
fn scheduled_queue_statistics_and_traces_are_consistent() {
    let q = r#"{ kind = "drr", limit = 40 }"#;
    let flows = tcp("t", 3) + &cbr("u", "3Mbps") + "[trace]\nevents = true\n";
    let r = common::run(&dumbbell(8, q, &flows));
    common::assert_conservation(&r);
    let qs = &r.queues;
    assert!(qs.i64("drops")[0] > 0 && qs.i64("max_len_pkts")[0] <= 41);
    let mean = qs.f64("mean_len_pkts")[0];
    assert!(mean > 1.0 && mean < 41.0, "{mean}");
    assert!(qs.f64("utilization")[0] > 0.95);
    // Per link: enqueues = dequeues + drops after acceptance + held at the end, and every
    // packet's dequeue follows its enqueue.
    let ev = events(&r);
    let (kind, link) = (ev.i64("kind"), ev.i64("link"));
    let n = |k: EventKind| (0..ev.rows()).filter(|&i| kind[i] == k as i64 && link[i] == 0).count() as i64;
    assert_eq!(n(EventKind::Enqueue) - n(EventKind::Dequeue), qs.i64("len_end_pkts")[0]);
    assert_eq!(n(EventKind::Drop), qs.i64("drops")[0]);
    assert_eq!(n(EventKind::Enqueue) + n(EventKind::Drop), qs.i64("arrivals")[0]);
}

#[test]
fn scheduled_runs_are_deterministic() {
    let q = r#"{ kind = "fq_codel", limit = 300, buckets = 3 }"#;
    let text = dumbbell(5, q, &(tcp("t", 3) + &cbr("u", "2Mbps")));
    let a = common::run(&text);
    let b = common::run(&text);
    assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));
    assert_eq!(format!("{:?}", a.queues), format!("{:?}", b.queues));
}

fn err(queue: &str) -> String {
    let text = dumbbell(1, queue, &(tcp("a", 1) + &tcp("b", 1)));
    match scenario::from_toml(&text).and_then(|s| s.build().map(|_| ())) {
        Ok(()) => panic!("accepted {queue}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_scheduled_queues_name_the_field() {
    let p = "topology.bottleneck.queue";
    assert_eq!(
        err(r#"{ kind = "priority" }"#),
        format!(
            "{p}.classes: is required with kind = \"priority\": a list of {{ flows = [...] }}, highest priority first"
        )
    );
    assert_eq!(
        err(r#"{ kind = "priority", classes = [ { flows = ["a"] }, { flows = ["x"] } ] }"#),
        format!("{p}.classes[1].flows[0]: no flow group is called \"x\"; groups are a, b")
    );
    assert_eq!(
        err(r#"{ kind = "drr", queues = [ { flows = ["a"] }, { flows = ["a"] } ] }"#),
        format!("{p}.queues[1].flows[0]: flow group \"a\" is already in queues[0]")
    );
    assert_eq!(
        err(r#"{ kind = "drr", min_th = 5 }"#),
        format!("{p}.min_th: is not a field of kind \"drr\"; its fields are kind, limit, queues, quantum, mean_pktsize, overflow, aqm (RED fields need aqm = \"red\" or \"enhanced_red\")")
    );
    assert_eq!(err(r#"{ kind = "drr", quantum = "0B" }"#).split(':').next().unwrap(), format!("{p}.quantum"));
    assert_eq!(
        err(r#"{ kind = "drr", queues = [ { flows = [] } ] }"#),
        format!("{p}.queues[0].flows: lists no flow group; name the groups whose flows share this queue")
    );
    assert_eq!(err(r#"{ kind = "drr", overflow = "drop_front" }"#).split(':').next().unwrap(), format!("{p}.overflow"));
    assert_eq!(
        err(r#"{ kind = "enhanced_red", flow_p = { a = 1.5 } }"#),
        format!("{p}.flow_p.a: must be a probability in [0, 1], got 1.5")
    );
    assert_eq!(
        err(r#"{ kind = "enhanced_red", min_th = 10, max_th = 5 }"#),
        format!("{p}.max_th: must be greater than min_th = 10, got 5")
    );
    assert_eq!(err(r#"{ kind = "fq_codel", target = "0s" }"#), format!("{p}.target: must be greater than 0s"));
    assert_eq!(
        err(r#"{ kind = "fq_codel", quantum = 3 }"#),
        format!("{p}.quantum: must be a size between 1B and 1048576B such as \"1514B\", got 3")
    );
    assert_eq!(
        err(r#"{ kind = "fq_codel", buckets = 0 }"#),
        format!("{p}.buckets: must be at least 1 (omit it for one queue per flow)")
    );
    assert_eq!(
        err(r#"{ kind = "priority", classes = [ { flows = ["a"], quantum = 2 } ] }"#),
        format!("{p}.classes[0].quantum: only DRR queues have a quantum")
    );
    assert_eq!(
        err(r#"{ kind = "fq_codel", classes = [] }"#),
        format!("{p}.classes: is not a field of kind \"fq_codel\"; its fields are kind, limit, quantum, target, interval, buckets")
    );
}

#[test]
fn per_flow_queues_are_made_only_for_the_flows_that_use_a_direction() {
    let text = dumbbell(3, r#"{ kind = "fq_codel" }"#, &tcp("t", 3)).replace(
        "access = { rate = \"1Gbps\", delay = \"1ms\", queue = { limit = 100000 } }",
        "access = { rate = \"1Gbps\", delay = \"1ms\", queue = { kind = \"drr\", limit = 1000 } }",
    );
    let built = scenario::from_toml(&text).unwrap().build().unwrap();
    let queues = |l: usize| built.net.links[l].scheduled().expect("scheduled").sched.queues.len();
    // Both bottleneck directions carry the three flows (data one way, ACKs the other); each
    // access link direction carries one flow.
    assert_eq!((queues(0), queues(1)), (3, 3));
    assert!((2..built.net.links.len()).all(|l| queues(l) == 1));
    let r = common::run(&text);
    common::assert_conservation(&r);
    let total: f64 = r.flows.f64("goodput_bps").iter().sum();
    assert!(total > 7e6, "{:?}", r.flows.f64("goodput_bps"));
}

#[test]
fn drr_plus_with_enhanced_red_drops_each_group_with_its_own_probability_in_its_queue() {
    // Two DRR queues, each with enhanced RED whose thresholds keep every arrival between them:
    // each flow's drop rate is its group's p_i, whichever queue it is in.
    let q = r#"{ kind = "drr", limit = 100000, aqm = "enhanced_red", min_th = 0, max_th = 1000000, max_p = 0.3,
        flow_p = { a = 0.05, b = 0.15 }, queues = [ { flows = ["a", "c"] }, { flows = ["b"] } ] }"#;
    let flows = cbr("a", "5Mbps") + &cbr("b", "5Mbps") + &cbr("c", "2Mbps");
    let r = common::run(&dumbbell(20, q, &flows));
    common::assert_conservation(&r);
    for (i, p) in [0.05, 0.15, 0.3].iter().enumerate() {
        // Trials: every packet sent reached the queue (but the one or two still on the 1 ms
        // access link); those waiting in the queue at the end were accepted.
        let n = r.flows.i64("packets_sent")[i] as f64;
        let d = r.flows.i64("drops")[i] as f64;
        let sd = (n * p * (1.0 - p)).sqrt();
        assert!((d - n * p).abs() < 3.29 * sd, "flow {i}: {d} drops of {n}, p = {p}");
    }
}
