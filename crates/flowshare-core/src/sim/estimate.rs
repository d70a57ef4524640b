//! What a scenario will cost before it runs: events, time-series rows, traced events and
//! memory, estimated from the built network in well under a second for any size.
//!
//! Throughput comes from a max-min fair share of every link direction's rate among the flows
//! crossing it (progressive filling), each flow capped by what it can offer: a TCP flow by its
//! receiver window over its base RTT and by its size, a source by its rate, an arrival group
//! by its arrival rate times its mean transfer size. Packets follow from throughput and
//! packet size, events from packets and hops (with per-packet and per-hop costs measured on
//! this engine), packets held from the queues of the saturated directions and the pipes.
//! The figures are estimates, meant to be within a small factor of a run's; a front end
//! compares them against a budget so that a runaway scenario is refused before it starts
//! (`docs/reliability.md`).

use crate::engine::stream;
use crate::net::{Limit, Network};
use crate::scenario::Built;
use crate::tcp::TcpConfig;
use crate::trace::EventKind;
use crate::traffic::arrivals::Process;
use crate::traffic::{SourceKind, SourceSpec};
use crate::units::{secs, Time};

/// Events per packet per hop it crosses (an arrival; transmissions on a direction only one
/// route uses are computed ahead without events), measured on the shipped dumbbells.
const EVENTS_PER_HOP: f64 = 0.5;
/// Events per data packet at the endpoints (timers, the ACK's handling), measured.
const EVENTS_PER_PACKET: f64 = 1.0;
/// Events per packet a source generates (its timer), whether or not the network carries it.
const EVENTS_PER_GENERATED: f64 = 1.0;
/// Bytes of core memory per connection (sender, sink, counters, routes), measured.
const BYTES_PER_CONN: f64 = 6_000.0;
/// Bytes per link direction (queue, counters, one time-series row buffer), measured.
const BYTES_PER_LINK: f64 = 800.0;
/// Bytes per packet held in a queue or a pipe (arena slot, queue entry, event), measured.
const BYTES_PER_PACKET: f64 = 160.0;
/// Bytes of a time-series row in the core before it is taken (flow rows are the wider).
pub const BYTES_PER_SERIES_ROW: u64 = 80;
/// Bytes of a traced event in the core before it is taken.
pub const BYTES_PER_TRACE_ROW: u64 = 40;
/// Traced events per packet per hop when every kind is traced (enqueue, dequeue, and the
/// packet's send, receive or drop spread over its hops).
const TRACE_ROWS_PER_HOP: f64 = 2.0;

/// The estimated cost of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// Events the run will process.
    pub events: f64,
    /// Samples of the time series (one per `sample_interval`).
    pub samples: f64,
    /// Rows of the time series (flows and queue directions, per sample).
    pub series_rows: f64,
    /// Rows of the event trace (zero when events are not traced).
    pub trace_rows: f64,
    /// Packets held in queues and pipes at the busiest.
    pub packets_held: f64,
    /// Core memory in bytes, apart from time-series rows and traced events not yet taken.
    pub memory_bytes: f64,
    /// Of `memory_bytes`, the packets held (the rest is the built network, there from the
    /// start).
    pub packet_bytes: f64,
    /// Where the events come from: (field path, events), largest first.
    pub drivers: Vec<(String, f64)>,
    /// Connections listed (the flows of every group; transfers of arrival groups apart).
    pub connections: usize,
}

/// One flow's (or arrival group's) offered load.
struct Demand {
    /// Field path of its group.
    group: u32,
    data: Vec<u32>,
    ack_hops: usize,
    /// Wire bytes of a data packet.
    wire: f64,
    /// ACKs per data packet.
    acks: f64,
    /// Most it can send, bits per second.
    cap: f64,
    /// Bits per second it generates whatever the network carries (sources; 0 for TCP).
    offered: f64,
    /// Seconds it is active.
    active: f64,
    /// Most data packets it sends in all.
    packets: f64,
    /// Its share, bits per second (set by `fill`).
    rate: f64,
    /// Fewest data packets it sends however small its share: a TCP flow's initial window and
    /// a retransmission a second (timeouts back off), bounded by its size.
    floor: f64,
}

impl Demand {
    /// A connection (or an arrival group's) on `routes`, sized by its TCP settings, with no
    /// cap or size yet.
    fn on(group: u32, built: &Built, routes: [u32; 2], tcp: &TcpConfig, active: f64) -> Demand {
        Demand {
            group,
            data: built.routes.links(routes[0]).to_vec(),
            ack_hops: built.routes.links(routes[1]).len(),
            wire: f64::from(tcp.mss + tcp.header),
            acks: tcp.delayed_ack.map_or(1.0, |(n, _)| 1.0 / f64::from(n.max(1))),
            cap: 0.0,
            offered: 0.0,
            active,
            packets: f64::INFINITY,
            rate: 0.0,
            floor: 0.0,
        }
    }
}

/// Traced events of `packet_hops` packet-hops made by `packets` packets, for the kinds in
/// `kinds`: a kept enqueue or dequeue once per hop, a kept send, drop, receive or ack at most
/// once per packet; never more than every kind together.
fn trace_rows_of(kinds: u8, packet_hops: f64, packets: f64) -> f64 {
    let kept = |k: EventKind| f64::from(kinds >> k as u8 & 1);
    let per_hop = kept(EventKind::Enqueue) + kept(EventKind::Dequeue);
    let per_packet = kept(EventKind::Send) + kept(EventKind::Drop) + kept(EventKind::Receive) + kept(EventKind::Ack);
    (packet_hops * per_hop + packets * per_packet).min(packet_hops * TRACE_ROWS_PER_HOP)
}

impl Estimate {
    /// The estimate of `built`, a scenario with `duration` and `sample_interval` (ns) and
    /// events traced of the kinds in `trace_kinds` (bit `k`: kind with code `k`; 0 when events
    /// are not traced), seeded by `seed` (arrival sizes are averaged over draws).
    pub fn of(built: &Built, duration: Time, sample_interval: Time, trace_kinds: u8, seed: u64) -> Estimate {
        let mut demands = Vec::with_capacity(built.conns.len() + built.arrivals.len());
        for c in &built.conns {
            let active = (secs(c.stop.unwrap_or(duration).min(duration)) - secs(c.start)).max(0.0);
            let d = match &c.source {
                Some(src) => {
                    let wire = f64::from(src.payload + src.header);
                    let bits = source_rate(src) * wire / f64::from(src.payload.max(1));
                    // Open loop: no ACKs, and it sends whatever the network carries.
                    let mut d = Demand::on(c.group, built, c.routes, &c.tcp, active);
                    (d.ack_hops, d.acks, d.wire, d.cap, d.offered) = (0, 0.0, wire, bits, bits);
                    d
                }
                None => {
                    let mut d = Demand::on(c.group, built, c.routes, &c.tcp, active);
                    let rtt = base_rtt(
                        &built.net,
                        &d.data,
                        built.routes.links(c.routes[1]),
                        d.wire,
                        f64::from(c.tcp.ack_size),
                    );
                    d.cap = c.tcp.rwnd as f64 * d.wire * 8.0 / rtt.max(1e-9);
                    d.packets = c.size.map_or(f64::INFINITY, |b| (b as f64 / f64::from(c.tcp.mss.max(1))).ceil());
                    d.floor = if active > 0.0 { (c.tcp.initial_window + active).min(d.packets) } else { 0.0 };
                    d
                }
            };
            demands.push(d);
        }
        let mut rng = stream(seed, "estimate");
        for a in &built.arrivals {
            let active = (secs(a.stop.unwrap_or(duration).min(duration)) - secs(a.start)).max(0.0);
            let mean =
                |d: &crate::traffic::arrivals::Dist, rng: &mut _| (0..256).map(|_| d.sample(rng)).sum::<f64>() / 256.0;
            let mut d = Demand::on(a.group, built, a.routes, &a.tcp, active);
            // A user's transfer takes at least a round trip, whatever its think time.
            let rtt = base_rtt(&built.net, &d.data, built.routes.links(a.routes[1]), d.wire, f64::from(a.tcp.ack_size));
            // Transfers per second and payload bytes per transfer.
            let (per_s, bytes) = match &a.process {
                Process::Poisson { gap, size } => (1.0 / mean(gap, &mut rng).max(1e-12), mean(size, &mut rng)),
                Process::ClosedLoop { users, think, size } => {
                    (f64::from(*users) / (mean(think, &mut rng) + rtt).max(1e-3), mean(size, &mut rng))
                }
                Process::Sessions(m) => {
                    // Per page: a reading time, but a session gap instead once a session.
                    let pages = mean(&m.pages, &mut rng).max(1.0);
                    let pause = (mean(&m.think, &mut rng) * (pages - 1.0) + mean(&m.gap, &mut rng)) / pages;
                    (f64::from(m.sources) / (pause + rtt).max(1e-3), mean(&m.size, &mut rng))
                }
                Process::Http(h) => {
                    // A document takes at least its set-up and a round trip.
                    let pause = mean(&h.think, &mut rng) / h.documents.per_session() as f64;
                    (f64::from(h.clients) / (pause + 2.5 * rtt).max(1e-3), h.documents.mean_size())
                }
                Process::Population { think, size, hosts } => (
                    hosts.total_sources() as f64 / (mean(think, &mut rng) + rtt).max(1e-3),
                    mean(size, &mut rng) * hosts.mean_multiplier(),
                ),
                Process::Trace(t) => {
                    let span = t.last().map_or(1.0, |l| secs(l.0).max(1.0));
                    (t.len() as f64 / span, t.iter().map(|x| x.1 as f64).sum::<f64>() / t.len().max(1) as f64)
                }
            };
            let mut transfers = per_s * active;
            if let Some(limit) = a.limit {
                transfers = transfers.min(limit as f64);
            }
            let per_transfer = (bytes / f64::from(a.tcp.mss.max(1))).ceil() + 3.0; // with the handshake
            d.packets = transfers * per_transfer;
            d.cap = if active > 0.0 { d.packets * d.wire * 8.0 / active } else { 0.0 };
            d.floor = transfers * per_transfer.min(a.tcp.initial_window + 3.0);
            demands.push(d);
        }
        let load = fill(&built.net, &mut demands);

        let mut by_group: Vec<f64> = Vec::new();
        let mut trace_rows = 0.0;
        for d in &demands {
            let carried = (d.rate * d.active / (8.0 * d.wire)).min(d.packets).max(d.floor);
            let generated = d.offered * d.active / (8.0 * d.wire);
            let hops = d.data.len() as f64 + d.acks * d.ack_hops as f64;
            let events = carried * (EVENTS_PER_HOP * hops + EVENTS_PER_PACKET) + generated * EVENTS_PER_GENERATED;
            if by_group.len() <= d.group as usize {
                by_group.resize(d.group as usize + 1, 0.0);
            }
            by_group[d.group as usize] += events;
            trace_rows += trace_rows_of(trace_kinds, carried * hops + generated, carried + generated);
        }
        let mut drivers: Vec<(String, f64)> =
            by_group.iter().enumerate().map(|(g, &e)| (format!("flows[{g}]"), e)).collect();
        let samples = duration.checked_div(sample_interval).unwrap_or(0) as f64;
        drivers.push(("simulation.sample_interval".into(), samples));
        drivers.sort_by(|a, b| b.1.total_cmp(&a.1));
        let events = drivers.iter().map(|d| d.1).sum::<f64>() + 2.0 * demands.len() as f64;

        // Packets held: the full queue of every saturated direction, and every pipe.
        let mut held = 0.0;
        for (l, carried) in built.net.links.iter().zip(&load) {
            let rate = l.params.rate.0 as f64;
            if *carried >= 0.999 * rate && rate > 0.0 {
                held += match l.params.limit {
                    Limit::Packets(n) => f64::from(n),
                    Limit::Bytes(b) => b as f64 / 500.0,
                };
            }
            held += carried * secs(l.params.delay) / (8.0 * 500.0);
        }
        // A flow holds no more than its window in the network.
        let windows: f64 = built.conns.iter().filter(|c| c.source.is_none()).map(|c| c.tcp.rwnd as f64).sum::<f64>()
            + demands.iter().filter(|d| d.offered > 0.0).map(|d| d.cap / (8.0 * d.wire) * 0.01).sum::<f64>();
        let packets_held = held.min(windows.max(1.0)).max(0.0);
        let series_rows = samples * (built.conns.len() + built.net.links.len()) as f64;
        let memory_bytes = BYTES_PER_CONN * (built.conns.len() + built.arrivals.len()) as f64
            + BYTES_PER_LINK * built.net.links.len() as f64
            + BYTES_PER_PACKET * packets_held;
        Estimate {
            events,
            samples,
            series_rows,
            trace_rows,
            packets_held,
            memory_bytes,
            packet_bytes: BYTES_PER_PACKET * packets_held,
            drivers,
            connections: built.conns.len(),
        }
    }
}

/// Mean payload rate of a source, bits per second: the highest of its schedule (a schedule
/// may ramp up), scaled by the on share of an on/off source.
fn source_rate(src: &SourceSpec) -> f64 {
    let peak = src.schedule.iter().map(|p| p.rate_bps).chain([src.rate]).max().unwrap_or(0) as f64;
    let (_, on, off, _) = src.on_off;
    if src.kind == SourceKind::OnOff && on > 0 && off > 0 {
        peak * on as f64 / (on + off) as f64
    } else {
        peak
    }
}

/// Round-trip time of an empty path: propagation and one transmission per hop.
fn base_rtt(net: &Network, data: &[u32], ack: &[u32], wire: f64, ack_wire: f64) -> f64 {
    let hop = |l: u32, bytes: f64| {
        let p = &net.links[l as usize].params;
        secs(p.delay) + bytes * 8.0 / (p.rate.0 as f64).max(1.0)
    };
    data.iter().map(|&l| hop(l, wire)).sum::<f64>() + ack.iter().map(|&l| hop(l, ack_wire)).sum::<f64>()
}

/// Max-min fair shares by progressive filling: every unfrozen demand grows at the same pace
/// until a link direction it crosses is full or it reaches its cap. Sets each demand's `rate`
/// and returns the load of each direction, bits per second. After a bounded number of rounds
/// the rest share what is left equally per direction (a feasible, slightly low allocation).
fn fill(net: &Network, demands: &mut [Demand]) -> Vec<f64> {
    const ROUNDS: usize = 64;
    let capacity: Vec<f64> = net.links.iter().map(|l| l.params.rate.0 as f64).collect();
    let mut load = vec![0.0; capacity.len()];
    let mut open: Vec<usize> = (0..demands.len())
        .filter(|&i| demands[i].cap > 0.0 && demands[i].active > 0.0 && !demands[i].data.is_empty())
        .collect();
    let mut level = 0.0;
    for round in 0..=ROUNDS {
        if open.is_empty() {
            break;
        }
        let mut users = vec![0u32; capacity.len()];
        for &i in &open {
            for &l in &demands[i].data {
                users[l as usize] += 1;
            }
        }
        // The next level at which a direction fills or a demand reaches its cap.
        let mut step = f64::INFINITY;
        for (l, &u) in users.iter().enumerate() {
            if u > 0 {
                step = step.min((capacity[l] - load[l]).max(0.0) / f64::from(u));
            }
        }
        for &i in &open {
            step = step.min(demands[i].cap - level);
        }
        level += step.max(0.0);
        for &i in &open {
            for &l in &demands[i].data {
                load[l as usize] += step.max(0.0);
            }
            demands[i].rate = level;
        }
        let last = round == ROUNDS;
        open.retain(|&i| {
            let d = &demands[i];
            let full = d.data.iter().any(|&l| load[l as usize] >= capacity[l as usize] * (1.0 - 1e-9));
            !(last || full || d.rate >= d.cap * (1.0 - 1e-9))
        });
    }
    load
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::from_toml;

    fn estimate(flows: &str) -> Estimate {
        let text = format!(
            "[simulation]\nduration = \"10s\"\n[topology]\nkind = \"dumbbell\"\n\
             bottleneck = {{ rate = \"10Mbps\", delay = \"10ms\", queue = {{ limit = 50 }} }}\n\
             access = {{ rate = \"100Mbps\", delay = \"1ms\" }}\n{flows}"
        );
        let s = from_toml(&text).unwrap();
        let b = s.build().unwrap();
        Estimate::of(&b, s.simulation.duration.0, s.simulation.sample_interval.0, 0, 1)
    }

    #[test]
    fn traced_rows_follow_the_kinds_kept() {
        // 1,000 packets over 6 hops each.
        let (hops, packets) = (6_000.0, 1_000.0);
        let bit = |k: EventKind| 1u8 << k as u8;
        assert_eq!(trace_rows_of(u8::MAX, hops, packets), 12_000.0, "every kind: two per hop");
        assert_eq!(trace_rows_of(0, hops, packets), 0.0, "not traced");
        assert_eq!(trace_rows_of(bit(EventKind::Drop), hops, packets), 1_000.0, "drops: one per packet at most");
        assert_eq!(trace_rows_of(bit(EventKind::Enqueue) | bit(EventKind::Send), hops, packets), 7_000.0);
    }

    #[test]
    fn flows_share_the_bottleneck_and_sources_count_what_they_generate() {
        // Two greedy flows fill the 10 Mbit/s bottleneck: 10 s of 1500-byte packets.
        let two = estimate("[[flows]]\ncount = 2\n");
        let packets = 10e6 * 10.0 / (8.0 * 1500.0);
        let per_packet = EVENTS_PER_HOP * 6.0 + EVENTS_PER_PACKET;
        assert!((two.drivers[0].1 / (packets * per_packet) - 1.0).abs() < 0.01, "{:?}", two.drivers);
        // Its queue is full and the pipes hold what is in flight.
        assert!(two.packets_held >= 50.0 && two.packets_held <= 100.0, "{}", two.packets_held);
        // A 1 Gbit/s source on a 100 Mbit/s access link still generates 1 Gbit/s of packets.
        let udp = estimate("[[flows]]\ntransport = \"udp\"\nsource = { kind = \"cbr\", rate = \"1Gbps\" }\n");
        let generated = 1e9 * 10.0 / (8.0 * 1000.0);
        assert!(udp.drivers[0].1 > generated * EVENTS_PER_GENERATED, "{:?}", udp.drivers);
        assert_eq!(udp.drivers[0].0, "flows[0]");
        // Time series: 100 samples of 1 flow and 6 queue directions.
        assert_eq!(udp.series_rows, 100.0 * 7.0);
    }
}
