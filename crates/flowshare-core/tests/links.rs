//! Link loss models and asymmetric links in whole simulations.

use flowshare_core::results::RunResults;

mod common;

use common::{assert_conservation, run};

/// Two-sided 99.9 % normal quantile.
const Z: f64 = 3.29;

fn dumbbell(duration: &str, bottleneck: &str, flows: &str) -> String {
    format!(
        r#"
[simulation]
duration = "{duration}"
[topology]
kind = "dumbbell"
bottleneck = {bottleneck}
access = {{ rate = "1Gbps", delay = "1ms", queue = {{ limit = 10000 }} }}
{flows}
"#
    )
}

fn bernoulli_run(p: f64) -> RunResults {
    let bottleneck = format!(
        "{{ rate = \"100Mbps\", delay = \"20ms\", queue = {{ limit = 10000 }}, loss = {{ model = \"bernoulli\", p = {p} }} }}"
    );
    run(&dumbbell("100s", &bottleneck, "[[flows]]\ntcp = { rto_min = \"200ms\" }"))
}

#[test]
fn tcp_over_a_bernoulli_link_sees_the_loss_rate_and_a_mathis_throughput() {
    let mut goodputs = Vec::new();
    for p in [0.0025, 0.01] {
        let r = bernoulli_run(p);
        assert_conservation(&r);
        let (f, q) = (&r.flows, &r.queues);
        assert_eq!(q.i64("drops")[0], 0, "the queue never overflows: every loss is the model's");
        // The bottleneck's forward direction carries the data; its losses are the model's.
        let n = q.i64("departures")[0] as f64;
        let rate = q.i64("link_losses")[0] as f64 / n;
        let half = Z * (p * (1.0 - p) / n).sqrt();
        println!("p = {p}: link loss rate {rate:.5} ± {half:.5} over {n} packets");
        assert!((rate - p).abs() <= half, "link loss rate {rate} vs {p} ± {half}");
        assert_eq!(f.i64("link_losses")[0], q.i64("link_losses")[0]);
        assert_eq!(f.i64("ack_link_losses")[0], 0, "ACKs use the reverse direction, which is lossless");
        assert_eq!(q.i64("link_losses")[1], 0);
        assert_eq!(q.get("loss_model").map(|c| format!("{c:?}")).unwrap().matches("bernoulli").count(), 1);
        // Mathis et al.: B = MSS / RTT · sqrt(3 / (2p)).
        let rtt = f.f64("rtt_mean_s")[0];
        let mathis = 1460.0 * 8.0 / rtt * (1.5 / p).sqrt();
        let g = f.f64("goodput_bps")[0];
        println!("p = {p}: goodput {g:.0} bit/s, Mathis {mathis:.0} bit/s, ratio {:.3}", g / mathis);
        assert!((0.7..=1.4).contains(&(g / mathis)), "goodput {g} vs Mathis {mathis}");
        goodputs.push(g);
    }
    // Four times the loss rate, about half the throughput.
    let ratio = goodputs[0] / goodputs[1];
    println!("goodput ratio p = 0.0025 / p = 0.01: {ratio:.3} (Mathis: 2)");
    assert!((1.6..=2.6).contains(&ratio), "ratio {ratio}");
}

/// 10 Mbps forward, 64 kbps reverse: one 40-byte ACK takes 5 ms, so at most 200 ACKs a second
/// come back, and with one ACK per segment and no ACK lost the sender cannot send faster than
/// 200 segments a second (2.336 Mbit/s of payload), a quarter of the forward capacity. The
/// receiver window (100 segments) bounds the ACKs waiting on the reverse link.
fn asymmetric(reverse_limit: u32) -> RunResults {
    let bottleneck = format!(
        "{{ rate = \"10Mbps\", delay = \"10ms\", queue = {{ limit = 100 }}, reverse = {{ rate = \"64Kbps\", delay = \"15ms\", queue = {{ limit = {reverse_limit} }} }} }}"
    );
    run(&dumbbell("30s", &bottleneck, "[[flows]]\ntcp = { rto_min = \"200ms\", rwnd = 100 }"))
}

#[test]
fn a_slow_reverse_path_throttles_the_ack_clock() {
    let ack_ceiling = 200.0 * 1460.0 * 8.0;
    // A reverse buffer larger than the window: no ACK is lost and the ACK path is the bottleneck.
    let r = asymmetric(200);
    assert_conservation(&r);
    let (f, q) = (&r.flows, &r.queues);
    assert_eq!(q.f64("rate_bps")[0..2], [10e6, 64e3]);
    assert_eq!(q.f64("delay_s")[0..2], [0.010, 0.015]);
    assert_eq!(f.i64("ack_drops")[0], 0);
    // Late goodput, after the reverse queue has filled.
    let s = &r.flow_series;
    let late: Vec<f64> =
        (0..s.rows()).filter(|&i| s.f64("time_s")[i] > 10.0).map(|i| s.f64("goodput_bps")[i]).collect();
    let g = late.iter().sum::<f64>() / late.len() as f64;
    println!("reverse buffer 200: late goodput {g:.0} bit/s, ACK-clock ceiling {ack_ceiling:.0}");
    assert!(g <= 1.01 * ack_ceiling && g >= 0.95 * ack_ceiling, "goodput {g} vs ACK ceiling {ack_ceiling}");
    assert!(q.f64("utilization")[1] > 0.95, "the reverse link is saturated");
    assert!(q.f64("utilization")[0] < 0.3, "the forward link idles");
    // The base RTT is the sum of both directions' delays and serialization times.
    // Four 1 ms access hops, 10 ms forward and 15 ms reverse; 1500 B at 1 Gbps twice and at
    // 10 Mbps once, 40 B at 1 Gbps twice and at 64 kbps once.
    let base =
        4.0 * 0.001 + 0.010 + 0.015 + 1500.0 * 8.0 * (2.0 / 1e9 + 1.0 / 10e6) + 40.0 * 8.0 * (2.0 / 1e9 + 1.0 / 64e3);
    let rtt_min = f.f64("rtt_min_s")[0];
    assert!((rtt_min - base).abs() < 1e-6, "rtt_min {rtt_min} vs {base}");

    // A small reverse buffer (5 ACKs, B_r of Hasegawa (2000) Table 5.1): ACKs are dropped, the
    // survivors are cumulative, and the sender sends a burst of about k = 833 / 200 ≈ 4 segments
    // per ACK. As k is below the forward buffer (Hasegawa (2000) §5.2.2, Case 1) the bursts fit and
    // the thinned ACK stream clocks out far more than 200 segments a second.
    let r = asymmetric(5);
    assert_conservation(&r);
    let (f, q) = (&r.flows, &r.queues);
    let g = f.f64("goodput_bps")[0];
    println!(
        "reverse buffer 5: goodput {g:.0} bit/s, ACK drops {}, data drops {}, forward utilization {:.3}",
        f.i64("ack_drops")[0],
        f.i64("drops")[0],
        q.f64("utilization")[0]
    );
    assert!(f.i64("ack_drops")[0] > 0);
    assert!(q.i64("max_len_pkts")[1] <= 5);
    assert!(g > 3.0 * ack_ceiling, "ACK thinning lifts the ACK-clock limit: {g}");
    assert!(q.i64("max_len_pkts")[0] >= 4, "data leaves in bursts of about k segments");

    // The symmetric link: the forward capacity is the limit.
    let sym = run(&dumbbell(
        "30s",
        "{ rate = \"10Mbps\", delay = \"10ms\", queue = { limit = 100 } }",
        "[[flows]]\ntcp = { rto_min = \"200ms\" }",
    ));
    let gs = sym.flows.f64("goodput_bps")[0];
    println!("symmetric: goodput {gs:.0} bit/s");
    assert!(gs > 0.9 * 10e6 * 1460.0 / 1500.0);
}

#[test]
fn loss_direction_conventions() {
    // `loss` acts on r0 → r1 (data of forward flows), `reverse.loss` on r1 → r0 (their ACKs).
    let fwd = "{ rate = \"10Mbps\", delay = \"10ms\", loss = { model = \"periodic\", every = 50 } }";
    let rev = "{ rate = \"10Mbps\", delay = \"10ms\", reverse = { loss = { model = \"periodic\", every = 50 } } }";
    let flows = "[[flows]]\nsize = \"2MB\"\ntcp = { rto_min = \"200ms\" }";
    let a = run(&dumbbell("20s", fwd, flows));
    let b = run(&dumbbell("20s", rev, flows));
    assert_conservation(&a);
    assert_conservation(&b);
    for r in [&a, &b] {
        assert_eq!(r.flows.i64("bytes_delivered")[0], 2_000_000);
    }
    let (fa, qa) = (&a.flows, &a.queues);
    assert!(fa.i64("link_losses")[0] > 0 && fa.i64("ack_link_losses")[0] == 0);
    assert_eq!((qa.i64("link_losses")[0], qa.i64("link_losses")[1]), (fa.i64("link_losses")[0], 0));
    // Packets 0, 50, 100, … of the forward direction, exactly.
    assert_eq!(qa.i64("link_losses")[0], (qa.i64("departures")[0] + 49) / 50);
    let (fb, qb) = (&b.flows, &b.queues);
    assert!(fb.i64("link_losses")[0] == 0 && fb.i64("ack_link_losses")[0] > 0);
    assert_eq!(qb.i64("link_losses")[1], (qb.i64("departures")[1] + 49) / 50);

    // Access links: forward is the direction of the flow's data (host → router on the
    // sender's side, router → host on the receiver's).
    let text = dumbbell(
        "20s",
        "{ rate = \"10Mbps\", delay = \"10ms\" }",
        "[[flows]]\nsize = \"1MB\"\ndst_access = { loss = { model = \"periodic\", every = 100, offset = 10 } }",
    );
    let r = run(&text);
    let q = &r.queues;
    let link = |name: &str, from: &str| {
        let names = match q.get("link") {
            Some(flowshare_core::results::Column::Str(v)) => v.clone(),
            _ => unreachable!(),
        };
        let froms = match q.get("from") {
            Some(flowshare_core::results::Column::Str(v)) => v.clone(),
            _ => unreachable!(),
        };
        (0..q.rows()).find(|&i| names[i] == name && froms[i] == from).unwrap()
    };
    assert!(q.i64("link_losses")[link("r1-d0", "r1")] > 0);
    assert_eq!(q.i64("link_losses").iter().sum::<i64>(), q.i64("link_losses")[link("r1-d0", "r1")]);
}

#[test]
fn same_seed_same_results_and_models_do_not_disturb_other_links() {
    let graph = |extra: &str| {
        format!(
            r#"
[simulation]
duration = "20s"
seed = 7
[topology]
kind = "graph"
nodes = ["a", "b", "c", "d"]
links = [
  {{ from = "a", to = "b", rate = "10Mbps", delay = "10ms", loss = {{ model = "gilbert_elliott", p_gb = 0.002, p_bg = 0.3 }} }},
  {{ from = "c", to = "d", rate = "10Mbps", delay = "10ms"{extra} }},
]
[[flows]]
src = "a"
dst = "b"
[[flows]]
src = "c"
dst = "d"
"#
        )
    };
    let a = run(&graph(""));
    let b = run(&graph(""));
    assert_conservation(&a);
    assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));
    assert_eq!(format!("{:?}", a.queues), format!("{:?}", b.queues));
    assert_eq!(format!("{:?}", a.flow_series), format!("{:?}", b.flow_series));
    assert!(a.flows.i64("link_losses")[0] > 0);

    // A loss model on the other, disjoint link changes nothing for the first flow.
    let c = run(&graph(
        ", loss = { model = \"bernoulli\", p = 0.01 }, reverse = { loss = { model = \"bernoulli\", p = 0.05 } }",
    ));
    assert_conservation(&c);
    assert!(c.flows.i64("link_losses")[1] > 0 && c.flows.i64("ack_link_losses")[1] > 0);
    for col in ["packets_sent", "link_losses", "bytes_delivered", "retransmits"] {
        assert_eq!(a.flows.i64(col)[0], c.flows.i64(col)[0], "{col}");
    }
    assert_eq!(a.queues.i64("link_losses")[0], c.queues.i64("link_losses")[0]);

    // Another seed draws other losses.
    let d = run(&graph("").replace("seed = 7", "seed = 8"));
    assert_ne!(a.flows.i64("link_losses")[0], d.flows.i64("link_losses")[0]);
}

#[test]
fn damjanovic_s4_schedule_drives_the_window() {
    // Damjanović (2010), S4, on a 15 Mbit/s, 20 ms bottleneck (DropTail here): periodic loss 1 %,
    // 10 % from 4 s, 0.5 % from 13 s. The window follows the loss rate: smaller in the 10 % phase.
    let bottleneck = r#"{ rate = "15Mbps", delay = "20ms", queue = { limit = 1000 }, loss = { model = "schedule", steps = [["0s", 0.01], ["4s", 0.1], ["13s", 0.005]], pattern = "periodic" } }"#;
    let r = run(&dumbbell("20s", bottleneck, "[[flows]]\ntcp = { rto_min = \"200ms\" }"));
    assert_conservation(&r);
    let s = &r.flow_series;
    let mean_cwnd = |from: f64, to: f64| {
        let v: Vec<f64> =
            (0..s.rows()).filter(|&i| (from..to).contains(&s.f64("time_s")[i])).map(|i| s.f64("cwnd")[i]).collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let (a, b, c) = (mean_cwnd(1.0, 4.0), mean_cwnd(6.0, 13.0), mean_cwnd(15.0, 20.0));
    println!("mean cwnd: 1 % {a:.1}, 10 % {b:.1}, 0.5 % {c:.1}");
    assert!(b < 0.5 * a && c > a, "cwnd {a} {b} {c}");
    // Periodic losses: the count over the run is close to packets × rate per phase.
    let lost = r.queues.i64("link_losses")[0];
    let sent = r.queues.i64("departures")[0];
    assert!(lost > sent / 200 && lost < sent / 10, "{lost} of {sent}");
}

/// `loss_position`: a model after the queue (ns-2's `link-lossmodel`, the default) loses
/// packets that have taken their queue slot and transmission time; one before it (ns-2's
/// `lossmodel`) loses them on arrival. 20 Mbit/s of UDP into a 10 Mbit/s link losing half its
/// packets: before the queue the 10 Mbit/s left fit and the queue hardly drops, while after it
/// the queue overflows with the whole 20 Mbit/s and the link delivers only half of 10 Mbit/s.
#[test]
fn a_loss_model_before_the_queue_loses_packets_that_take_no_slot() {
    let flows =
        "[[flows]]\ntransport = \"udp\"\nsource = { kind = \"cbr\", rate = \"20Mbps\", packet_size = \"1000B\" }";
    let run_at = |position: &str| {
        let bottleneck = format!(
            "{{ rate = \"10Mbps\", delay = \"10ms\", queue = {{ limit = 50 }}, loss = {{ model = \"bernoulli\", p = 0.5 }}{position} }}"
        );
        let r = run(&dumbbell("5s", &bottleneck, flows));
        let (f, q) = (&r.flows, &r.queues);
        let accounted =
            f.i64("packets_received")[0] + f.i64("drops")[0] + f.i64("link_losses")[0] + f.i64("in_network_end")[0];
        assert_eq!(f.i64("packets_sent")[0], accounted, "{position}: every packet accounted for");
        if !position.is_empty() {
            // Lost on arrival: never an arrival of the queue, counted at once by both tables.
            assert_eq!(f.i64("link_losses")[0], q.i64("link_losses")[0]);
            assert_eq!(q.i64("arrivals")[0], q.i64("departures")[0] + q.i64("drops")[0] + q.i64("len_end_pkts")[0]);
        }
        (q.i64("drops")[0], q.i64("link_losses")[0], r.flows.f64("goodput_bps")[0])
    };
    let (after_drops, after_losses, after_goodput) = run_at("");
    let (before_drops, before_losses, before_goodput) = run_at(", loss_position = \"before_queue\"");
    println!("after: drops {after_drops}, losses {after_losses}, goodput {after_goodput:.0}");
    println!("before: drops {before_drops}, losses {before_losses}, goodput {before_goodput:.0}");
    assert!(after_drops > 5_000, "after the queue, the queue takes all 20 Mbit/s: {after_drops}");
    assert!(before_drops < after_drops / 20, "before the queue, 10 Mbit/s reach it: {before_drops}");
    assert!((4.0e6..5.5e6).contains(&after_goodput), "half of what the link sends: {after_goodput}");
    assert!(before_goodput > 8.0e6, "the link carries what survives: {before_goodput}");
    let e = flowshare_core::scenario::from_toml(&dumbbell(
        "1s",
        "{ rate = \"10Mbps\", delay = \"10ms\", loss_position = \"before_queue\" }",
        flows,
    ))
    .and_then(|s| s.build().map(|_| ()))
    .expect_err("a position without a model");
    assert!(e.to_string().contains("loss_position"), "{e}");
}
