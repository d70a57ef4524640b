//! Property tests: random small topologies and flows never panic and always conserve packets.

use flowshare_core::{scenario, Simulation};
use proptest::prelude::*;

/// (src, dst, recovery index, finite size, segments to drop, delayed ACKs)
type FlowDraw = (usize, usize, u8, Option<u32>, Vec<u64>, bool);

#[derive(Debug, Clone)]
struct Net {
    nodes: usize,
    extra_links: Vec<(usize, usize)>,
    rates_mbps: Vec<u32>,
    delays_ms: Vec<u32>,
    limits: Vec<u32>,
    /// Per link: 0 none, 1 Bernoulli, 2 Gilbert–Elliott, 3 burst, 4 asymmetric with reverse loss.
    losses: Vec<u8>,
    flows: Vec<FlowDraw>,
}

fn net() -> impl Strategy<Value = Net> {
    (2usize..6).prop_flat_map(|n| {
        let links = n - 1 + 3;
        (
            Just(n),
            prop::collection::vec((0..n, 0..n), 3),
            prop::collection::vec(1u32..50, links),
            prop::collection::vec(0u32..30, links),
            prop::collection::vec(2u32..60, links),
            prop::collection::vec(0u8..5, links),
            prop::collection::vec(
                (
                    0..n,
                    0..n,
                    0u8..4,
                    prop::option::of(1u32..300_000),
                    prop::collection::vec(0u64..60, 0..4),
                    any::<bool>(),
                ),
                1..5,
            ),
        )
            .prop_map(|(nodes, extra_links, rates_mbps, delays_ms, limits, losses, flows)| Net {
                nodes,
                extra_links,
                rates_mbps,
                delays_ms,
                limits,
                losses,
                flows,
            })
    })
}

fn to_toml(n: &Net) -> String {
    let names: Vec<String> = (0..n.nodes).map(|i| format!("\"n{i}\"")).collect();
    let mut links = Vec::new();
    // A chain keeps the graph connected; extra links add loops and parallel paths.
    let mut pairs: Vec<(usize, usize)> = (1..n.nodes).map(|i| (i - 1, i)).collect();
    pairs.extend(n.extra_links.iter().copied().filter(|(a, b)| a != b));
    for (k, (a, b)) in pairs.iter().enumerate() {
        let loss = match n.losses[k] {
            1 => ", loss = { model = \"bernoulli\", p = 0.02 }".to_string(),
            2 => ", loss = { model = \"gilbert_elliott\", p_gb = 0.01, p_bg = 0.3 }".to_string(),
            3 => ", loss = { model = \"burst\", p = 0.005, length = 3 }".to_string(),
            4 => format!(
                ", reverse = {{ rate = \"{}Kbps\", delay = \"{}ms\", queue = {{ limit = 5 }}, loss = {{ model = \"periodic\", every = 7 }} }}",
                64 * n.rates_mbps[k],
                n.delays_ms[k] + 3
            ),
            _ => String::new(),
        };
        // Parallel links share a default name; one with a loss model needs its own.
        links.push(format!(
            "{{ from = \"n{a}\", to = \"n{b}\", name = \"l{k}\", rate = \"{}Mbps\", delay = \"{}ms\", queue = {{ limit = {} }}{loss} }}",
            n.rates_mbps[k], n.delays_ms[k], n.limits[k]
        ));
    }
    let recoveries = ["tahoe", "reno", "newreno", "sack"];
    let mut flows = String::new();
    for (src, dst, rec, size, drops, delack) in &n.flows {
        if src == dst {
            continue;
        }
        let drops: Vec<String> = drops.iter().map(u64::to_string).collect();
        flows.push_str(&format!(
            "[[flows]]\nsrc = \"n{src}\"\ndst = \"n{dst}\"\ndrop_segments = [{}]\n{}tcp = {{ recovery = \"{}\", delayed_ack = {delack}, rto_min = \"200ms\" }}\n",
            drops.join(", "),
            size.map(|s| format!("size = \"{s}B\"\n")).unwrap_or_default(),
            recoveries[*rec as usize]
        ));
    }
    if flows.is_empty() {
        flows = "[[flows]]\nsrc = \"n0\"\ndst = \"n1\"\n".into();
    }
    format!(
        "[simulation]\nduration = \"3s\"\nsample_interval = \"500ms\"\n[topology]\nkind = \"graph\"\nnodes = [{}]\nlinks = [{}]\n{flows}",
        names.join(", "),
        links.join(", ")
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn random_networks_conserve_packets(n in net()) {
        let text = to_toml(&n);
        let s = scenario::from_toml(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let r = Simulation::new(&s).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?.finish();
        let f = &r.flows;
        for i in 0..f.rows() {
            let sent = f.i64("packets_sent")[i];
            let accounted = f.i64("packets_received")[i] + f.i64("drops")[i] + f.i64("link_losses")[i] + f.i64("in_network_end")[i];
            prop_assert_eq!(sent, accounted, "flow {}\n{}", i, text);
            prop_assert!(f.i64("bytes_delivered")[i] <= f.i64("bytes_sent")[i]);
            let size = f.i64("size_bytes")[i];
            if size >= 0 {
                prop_assert!(f.i64("bytes_delivered")[i] <= size);
            }
            prop_assert!(f.f64("cwnd_final")[i] >= 1.0);
        }
        let q = &r.queues;
        for i in 0..q.rows() {
            let accounted = q.i64("departures")[i] + q.i64("drops")[i] + q.i64("len_end_pkts")[i];
            prop_assert_eq!(q.i64("arrivals")[i], accounted, "queue {}\n{}", i, text);
            prop_assert!(q.i64("link_losses")[i] <= q.i64("departures")[i]);
            prop_assert!(q.i64("max_len_pkts")[i] <= q.i64("limit")[i]);
        }
    }
}
