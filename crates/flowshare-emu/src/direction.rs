//! One direction of the emulated link, driven in real time: packets read from one device are
//! offered to the scenario's [`LinkDir`] exactly as the simulator offers its packets
//! (`flowshare_core::sim::forward`), and written to the other device when the model says
//! they reach the far end. Times are nanoseconds since the run began.
//!
//! A FIFO direction (DropTail, RED, step marking) computes each arrival time on enqueue. A
//! scheduled one (DRR, priority, FQ-CoDel) keeps a transmitter whose next event, the end of
//! the current transmission, the loop waits for like a due write. The loss model acts where
//! the scenario places it. The packets themselves wait in a slab indexed by the id the
//! link's pipe and scheduler carry.
//!
//! With an event trace ([`Trace`]), each packet is classified into its flow as it is offered,
//! and the link events are recorded where the simulator records them
//! (`flowshare_core::sim::forward`): `enqueue` when the queue accepts it, `dequeue` at the end
//! of its transmission, `drop` with the simulator's reason when it is refused, pushed out,
//! dropped by CoDel or lost by the loss model.

use crate::events::EventLog;
use crate::flows::{Classified, FlowMap};
use crate::ipv4::{self, codepoint, Rejected};
use crate::pcap::Capture;
use crate::report::DirReport;
use crate::timing::Lateness;
use crate::tun::Tun;
use crate::{clock, EmuError};
use flowshare_core::net::link::GONE;
use flowshare_core::net::sched::{Discipline, Queued};
use flowshare_core::net::LinkDir;
use flowshare_core::net::LinkId;
use flowshare_core::packet::{ecn, Meta, PacketId};
use flowshare_core::scenario::ConnSpec;
use flowshare_core::trace::{EventKind, Reason};
use flowshare_core::units::Time;

/// How a packet's 5-tuple hash becomes the flow (and flow group) a queue discipline sees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Classify {
    /// The discipline does not look at flows (a FIFO): the hash itself.
    Any,
    /// FQ-CoDel with hash buckets hashes flows it was not told about into its buckets: a
    /// flow number above the scenario's `listed` flows, so each 5-tuple finds its bucket.
    Buckets { listed: u32 },
    /// Per-flow queues or classes exist for the scenario's flows only: each 5-tuple takes the
    /// queue of one of them, (flow, group), chosen by its hash, as stochastic fairness
    /// queueing does (P. E. McKenney, "Stochastic Fairness Queueing", IEEE INFOCOM 1990).
    Listed(Vec<(u32, u32)>),
}

impl Classify {
    /// The classification `link` needs, given the scenario's connections; `None` when the
    /// direction has per-flow queues and no connection crosses it.
    pub(crate) fn for_link(link: &LinkDir, conns: &[ConnSpec]) -> Option<Classify> {
        let Some(s) = link.scheduled() else {
            return Some(Classify::Any);
        };
        if let Discipline::FqCodel(fq) = &s.sched.disc {
            if fq.buckets.is_some() {
                return Some(Classify::Buckets { listed: conns.len() as u32 });
            }
        }
        let listed: Vec<(u32, u32)> = (0..conns.len() as u32)
            .filter(|&f| s.sched.class_of(f) != u32::MAX)
            .map(|f| (f, conns[f as usize].group))
            .collect();
        (!listed.is_empty()).then_some(Classify::Listed(listed))
    }

    /// (flow, group) of a packet whose 5-tuple hashes to `hash`.
    pub(crate) fn flow(&self, hash: u32) -> (u32, u32) {
        match self {
            Classify::Any => (hash, 0),
            Classify::Buckets { listed } => (listed + hash % (u32::MAX - listed), 0),
            Classify::Listed(flows) => flows[hash as usize % flows.len()],
        }
    }
}

/// Where written packets go, and the clock offsets that turn model times into real ones.
pub(crate) struct Sink<'a> {
    /// The far side's device.
    pub tun: &'a Tun,
    /// Monotonic time at which the run began (model time 0).
    pub t0: u64,
    /// Wall-clock time at `t0`, for capture timestamps.
    pub wall0: u64,
}

/// The event trace of both directions: the flows packets are classified into and the
/// records' file.
pub(crate) struct Trace {
    pub flows: FlowMap,
    pub log: EventLog,
}

/// One direction in real time.
pub(crate) struct Direction {
    link: LinkDir,
    /// The direction's index in the scenario's network (the trace's `link`).
    id: LinkId,
    classify: Classify,
    /// Packet bytes by id; `free` lists reusable ids.
    slots: Vec<Vec<u8>>,
    /// What each waiting packet is in the trace (`None`: no flow's, or no trace).
    tags: Vec<Option<Classified>>,
    free: Vec<PacketId>,
    /// Arrival time of the pipe's head.
    head: Option<Time>,
    /// End of the scheduled transmitter's current transmission (its next event).
    tx_end: Option<Time>,
    departures: u64,
    not_ipv4: u64,
    malformed: u64,
    /// Packets of no flow (counted only with a trace).
    no_flow: u64,
    lateness: Lateness,
}

impl Direction {
    /// Drive `link`, direction `id` of the scenario's network, classifying packets with
    /// `classify`.
    pub(crate) fn new(link: LinkDir, id: LinkId, classify: Classify) -> Direction {
        Direction {
            link,
            id,
            classify,
            slots: Vec::new(),
            tags: Vec::new(),
            free: Vec::new(),
            head: None,
            tx_end: None,
            departures: 0,
            not_ipv4: 0,
            malformed: 0,
            no_flow: 0,
            lateness: Lateness::default(),
        }
    }

    fn alloc(&mut self, packet: &[u8], tag: Option<Classified>) -> PacketId {
        match self.free.pop() {
            Some(id) => {
                let s = &mut self.slots[id as usize];
                s.clear();
                s.extend_from_slice(packet);
                self.tags[id as usize] = tag;
                id
            }
            None => {
                self.slots.push(packet.to_vec());
                self.tags.push(tag);
                (self.slots.len() - 1) as PacketId
            }
        }
    }

    /// Record event `kind` of a packet (`tag`, `size` bytes) at `t`, if it is traced.
    fn log(
        &self,
        trace: &mut Option<Trace>,
        t: Time,
        kind: EventKind,
        tag: Option<Classified>,
        size: u32,
        reason: Reason,
    ) {
        if let (Some(trace), Some(c)) = (trace, tag) {
            trace.log.record(t, kind, self.id, &c, size, reason);
        }
    }

    /// The next time something is due: a write or the transmitter's next event.
    pub(crate) fn next_due(&self) -> Option<Time> {
        match (self.head, self.tx_end) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Offer `packet`, read at `now`.
    pub(crate) fn offer(&mut self, now: Time, packet: &[u8], trace: &mut Option<Trace>) {
        let info = match ipv4::parse(packet) {
            Ok(info) => info,
            Err(Rejected::NotIpv4) => return self.not_ipv4 += 1,
            Err(Rejected::Malformed) => return self.malformed += 1,
        };
        // Transmitter events up to now come first, as in the simulator's event order.
        self.advance(now, trace);
        let tag = trace.as_mut().and_then(|t| t.flows.classify(packet));
        self.no_flow += u64::from(trace.is_some() && tag.is_none());
        let (flow, group) = self.classify.flow(info.flow_hash);
        let size = u32::from(info.total_len);
        let meta = Meta { flow, group, size, ecn: info.meta_ecn(), flags: 0 };
        if self.link.loss_first() && self.link.lost_on_arrival(now) {
            return self.log(trace, now, EventKind::Drop, tag, size, Reason::LinkLoss);
        }
        if self.link.is_scheduled() {
            return self.offer_scheduled(now, packet, meta, tag, trace);
        }
        let arrival = match self.link.enqueue(now, now, &meta) {
            Ok(arrival) => arrival,
            Err(refusal) => return self.log(trace, now, EventKind::Drop, tag, size, refusal.into()),
        };
        // A FIFO knows when the transmission ends as it accepts the packet.
        let end = self.link.last_end();
        self.log(trace, now, EventKind::Enqueue, tag, size, Reason::None);
        self.log(trace, end, EventKind::Dequeue, tag, size, Reason::None);
        let marked = meta.ecn != 0 && self.link.take_mark();
        if self.link.lost_on_wire(now, arrival) {
            return self.log(trace, end, EventKind::Drop, tag, size, Reason::LinkLoss);
        }
        let id = self.alloc(packet, tag);
        if marked {
            ipv4::set_ce(&mut self.slots[id as usize]);
        }
        if self.link.push_pipe(arrival, id) {
            self.head = Some(arrival);
        }
    }

    fn offer_scheduled(
        &mut self,
        now: Time,
        packet: &[u8],
        meta: Meta,
        tag: Option<Classified>,
        trace: &mut Option<Trace>,
    ) {
        let id = self.alloc(packet, tag);
        match self.link.sched_enqueue(now, Queued { id, at: now, meta }) {
            Err(refusal) => {
                self.log(trace, now, EventKind::Drop, tag, meta.size, refusal.into());
                self.free.push(id);
            }
            Ok(idle) => {
                if meta.ecn != 0 && self.link.take_mark() {
                    ipv4::set_ce(&mut self.slots[id as usize]);
                }
                self.log(trace, now, EventKind::Enqueue, tag, meta.size, Reason::None);
                self.drain_removed(now, trace);
                if idle {
                    self.start_tx(now, trace);
                }
            }
        }
    }

    /// Free the packets the scheduler removed at `t` without sending them (the link counts
    /// their drops; the trace records them).
    fn drain_removed(&mut self, t: Time, trace: &mut Option<Trace>) {
        let n = self.link.scheduled().map_or(0, |s| s.removed.len());
        for i in 0..n {
            let (q, why) = self.link.scheduled().expect("scheduled").removed[i];
            self.log(trace, t, EventKind::Drop, self.tags[q.id as usize], q.meta.size, why.into());
            self.free.push(q.id);
        }
        if n > 0 {
            self.link.scheduled_mut().expect("scheduled").removed.clear();
        }
    }

    /// Run the scheduled transmitter's events due by `now`.
    fn advance(&mut self, now: Time, trace: &mut Option<Trace>) {
        while let Some(t) = self.tx_end.filter(|&t| t <= now) {
            self.start_tx(t, trace);
        }
    }

    /// The scheduled transmitter is free at `t`: send the next packet, if any.
    fn start_tx(&mut self, t: Time, trace: &mut Option<Trace>) {
        let started = self.link.sched_start(t);
        let end = self.link.last_end();
        self.drain_removed(t, trace);
        let Some((q, arrival)) = started else {
            self.tx_end = None;
            return;
        };
        self.tx_end = Some(end);
        let tag = self.tags[q.id as usize];
        self.log(trace, end, EventKind::Dequeue, tag, q.meta.size, Reason::None);
        let bytes = &mut self.slots[q.id as usize];
        if q.meta.ecn & ecn::CE != 0 && bytes[1] & 0b11 != codepoint::CE {
            // Marked as it leaves (a class's `mark = "departure"`).
            ipv4::set_ce(bytes);
            self.link.stats.marks += 1;
        }
        if self.link.lost_on_wire(t, arrival) {
            self.log(trace, end, EventKind::Drop, tag, q.meta.size, Reason::LinkLoss);
            self.free.push(q.id);
            return;
        }
        if self.link.push_pipe(arrival, q.id) {
            self.head = Some(arrival);
        }
    }

    /// Write every packet due by `now` to `sink`, recording how late each write is.
    pub(crate) fn deliver(
        &mut self,
        now: Time,
        sink: &Sink,
        capture: &mut Option<Capture>,
        trace: &mut Option<Trace>,
    ) -> Result<(), EmuError> {
        self.advance(now, trace);
        while let Some(due) = self.head.filter(|&h| h <= now) {
            let (id, next) = self.link.pop_arrival();
            self.head = next;
            if id == GONE {
                continue;
            }
            let written = clock::monotonic_ns();
            self.lateness.record(written.saturating_sub(sink.t0 + due));
            let bytes = &self.slots[id as usize];
            sink.tun.write(bytes)?;
            if let Some(c) = capture {
                c.write(sink.wall0 + (written - sink.t0), bytes)?;
            }
            self.departures += 1;
            self.free.push(id);
        }
        Ok(())
    }

    /// The direction's counters (`traced`: packets were classified into flows).
    pub(crate) fn report(&self, traced: bool) -> DirReport {
        let s = &self.link.stats;
        DirReport {
            arrivals: s.arrivals,
            bytes: s.arrival_bytes,
            drops: s.drops,
            early_drops: s.early_drops,
            marks: s.marks,
            link_losses: s.link_losses,
            departures: self.departures,
            max_queue: s.max_len,
            left_in_link: (self.link.pipe_ids().count() + self.link.waiting_ids().count()) as u64,
            not_ipv4: self.not_ipv4,
            malformed: self.malformed,
            no_flow: traced.then_some(self.no_flow),
            lateness: self.lateness.summary(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EmulatorConfig, LinkSelect};
    use flowshare_core::scenario::from_toml;

    /// The two directions of link `wire` (a → b) with `link` as its table's extra fields,
    /// in a scenario with `flows` flows from a to b.
    fn wire(link: &str, flows: u32) -> (Direction, Direction) {
        let toml = format!(
            r#"
[simulation]
duration = "10s"
[topology]
kind = "graph"
nodes = ["a", "b"]
links = [{{ from = "a", to = "b", name = "wire", {link} }}]
[[flows]]
name = "f"
count = {flows}
src = "a"
dst = "b"
"#
        );
        let s = from_toml(&toml).unwrap();
        EmulatorConfig::new("x", "y", s, LinkSelect::Name("wire".into())).directions().unwrap()
    }

    /// A UDP packet of `total` bytes, source port `sport`, TOS `tos`.
    fn udp(tos: u8, sport: u16, total: u16) -> Vec<u8> {
        let mut p = vec![0u8; usize::from(total)];
        p[0] = 0x45;
        p[1] = tos;
        p[2..4].copy_from_slice(&total.to_be_bytes());
        p[8] = 64;
        p[9] = 17;
        p[12..16].copy_from_slice(&[10, 77, 0, 1]);
        p[16..20].copy_from_slice(&[10, 77, 0, 2]);
        let sum = ipv4::header_checksum(&p[..20]);
        p[10..12].copy_from_slice(&sum.to_be_bytes());
        p[20..22].copy_from_slice(&sport.to_be_bytes());
        p[22..24].copy_from_slice(&5001u16.to_be_bytes());
        p
    }

    #[test]
    fn fifo_arrivals_are_the_link_models() {
        // 8 Mbit/s: 1000 bytes take 1 ms; then 5 ms of propagation.
        let (mut f, _) = wire(r#"rate = "8Mbps", delay = "5ms", queue = { limit = 2 }"#, 1);
        f.offer(0, &udp(0, 1, 1000), &mut None);
        assert_eq!(f.next_due(), Some(6_000_000));
        f.offer(0, &udp(0, 1, 1000), &mut None);
        f.offer(0, &udp(0, 1, 1000), &mut None); // the third finds the queue full
        let r = f.report(false);
        assert_eq!((r.arrivals, r.bytes, r.drops, r.max_queue, r.left_in_link), (3, 3000, 1, 2, 2));
        assert_eq!(f.next_due(), Some(6_000_000));
    }

    #[test]
    fn non_ipv4_and_malformed_packets_are_counted_not_offered() {
        let (mut f, _) = wire(r#"rate = "8Mbps", delay = "5ms""#, 1);
        let mut v6 = vec![0u8; 60];
        v6[0] = 0x60;
        f.offer(0, &v6, &mut None);
        f.offer(0, &udp(0, 1, 1000)[..500], &mut None);
        let r = f.report(false);
        assert_eq!((r.arrivals, r.not_ipv4, r.malformed), (0, 1, 1));
        assert_eq!(f.next_due(), None);
    }

    #[test]
    fn step_marking_sets_ce_in_the_packet_with_a_valid_checksum() {
        let (mut f, _) = wire(r#"rate = "8Mbps", delay = "1ms", queue = { limit = 100, ecn_threshold = 1 }"#, 1);
        for _ in 0..3 {
            f.offer(0, &udp(codepoint::ECT0, 1, 1000), &mut None);
        }
        // Waiting packets seen: none, none (one in transmission), one: the third is marked.
        assert_eq!(f.report(false).marks, 1);
        let marked: Vec<_> = f.link.pipe_ids().map(|id| f.slots[id as usize][1] & 0b11).collect();
        assert_eq!(marked, [codepoint::ECT0, codepoint::ECT0, codepoint::CE]);
        let third = &f.slots[f.link.pipe_ids().nth(2).unwrap() as usize];
        assert_eq!(ipv4::header_checksum(&third[..20]), 0);
    }

    #[test]
    fn scheduled_direction_runs_its_transmitter() {
        let (mut f, _) = wire(r#"rate = "8Mbps", delay = "5ms", queue = { kind = "fq_codel" }"#, 2);
        assert!(matches!(f.classify, Classify::Listed(ref l) if l.len() == 2));
        f.offer(0, &udp(0, 1, 1000), &mut None);
        f.offer(0, &udp(0, 2, 1000), &mut None);
        // The transmitter's next event (1 ms) comes before the first arrival (6 ms).
        assert_eq!(f.next_due(), Some(1_000_000));
        f.advance(1_000_000, &mut None);
        assert_eq!(f.next_due(), Some(2_000_000));
        f.advance(2_000_000, &mut None);
        assert_eq!(f.next_due(), Some(6_000_000));
        assert_eq!(f.link.pipe_ids().count(), 2);
    }

    #[test]
    fn fq_codel_buckets_hash_flows_beyond_the_listed_ones() {
        let (f, _) = wire(r#"rate = "8Mbps", delay = "5ms", queue = { kind = "fq_codel", buckets = 16 }"#, 3);
        assert_eq!(f.classify, Classify::Buckets { listed: 3 });
        for h in [0, 1, 7, u32::MAX] {
            assert!(f.classify.flow(h).0 >= 3);
        }
    }

    #[test]
    fn listed_flows_spread_five_tuples_over_the_scenarios_flows() {
        let c = Classify::Listed(vec![(0, 0), (1, 0), (2, 1)]);
        assert_eq!(c.flow(4), (1, 0));
        assert_eq!(c.flow(5), (2, 1));
        assert_eq!(Classify::Any.flow(12345), (12345, 0));
    }

    #[test]
    fn loss_model_discards_on_the_wire() {
        let (mut f, _) = wire(r#"rate = "8Mbps", delay = "5ms", loss = { model = "periodic", every = 2 }"#, 1);
        for _ in 0..4 {
            f.offer(0, &udp(0, 1, 1000), &mut None);
        }
        let r = f.report(false);
        assert_eq!((r.arrivals, r.link_losses, r.left_in_link), (4, 2, 2));
    }

    /// A trace of flows 0 and 1 (flowshare's transport on ports 6000 and 6001) into a file
    /// unique to `name`.
    fn traced(name: &str) -> (Option<Trace>, std::path::PathBuf) {
        use crate::flows::{FlowPorts, Stack};
        use flowshare_core::trace::TraceSpec;
        let path = std::env::temp_dir().join(format!("flowshare-emu-{name}-{}.bin", std::process::id()));
        let ports = [0, 1].map(|f| FlowPorts {
            flow: f,
            stack: Stack::Flowshare,
            port_a: 6000 + f as u16,
            port_b: 6000 + f as u16,
        });
        let flows = FlowMap::new([10, 77, 0, 1].into(), [10, 77, 0, 2].into(), &ports, 2).unwrap();
        let log = EventLog::create(&path, TraceSpec::everything()).unwrap();
        (Some(Trace { flows, log }), path)
    }

    /// A data datagram of flow `flow`, segment `seq`, `total` bytes of IPv4 packet.
    fn data(flow: u32, seq: u64, total: u16) -> Vec<u8> {
        use flowshare_core::packet::{Kind, Packet};
        let mut d = Vec::new();
        flowshare_live::wire::encode(&Packet::new(flow, Kind::Data, seq, u32::from(total), 0), flow, 0, &mut d)
            .unwrap();
        let mut p = udp(0, 6000 + flow as u16, total);
        p[22..24].copy_from_slice(&(6000 + flow as u16).to_be_bytes());
        p[28..].copy_from_slice(&d);
        p
    }

    /// The records of `trace` up to `end` as (time, seq, flow, link, kind, reason).
    fn records(trace: Option<Trace>, path: &std::path::Path, end: Time) -> Vec<(i64, u64, u32, i32, u8, u8)> {
        trace.unwrap().log.finish(end).unwrap();
        crate::events::read_records(path)
    }

    const ENQ: u8 = EventKind::Enqueue as u8;
    const DEQ: u8 = EventKind::Dequeue as u8;
    const DROP: u8 = EventKind::Drop as u8;

    #[test]
    fn a_traced_fifo_records_enqueues_dequeues_and_overflows() {
        let (mut trace, path) = traced("fifo");
        // 8 Mbit/s: 1000 bytes take 1 ms; a queue of 2 packets.
        let (mut f, _) = wire(r#"rate = "8Mbps", delay = "5ms", queue = { limit = 2 }"#, 2);
        f.offer(0, &data(0, 0, 1000), &mut trace);
        f.offer(0, &data(1, 0, 1000), &mut trace);
        f.offer(0, &data(0, 1, 1000), &mut trace); // full
        f.offer(0, &udp(0, 7777, 1000), &mut trace); // no flow's, full too
        let r = f.report(true);
        assert_eq!((r.arrivals, r.drops, r.no_flow), (4, 2, Some(1)));
        // The second transmission has not ended by 1.5 ms: its dequeue is left out.
        let over = Reason::Overflow as u8;
        assert_eq!(
            records(trace, &path, 1_500_000),
            [(0, 0, 0, 0, ENQ, 0), (0, 0, 1, 0, ENQ, 0), (0, 1, 0, 0, DROP, over), (1_000_000, 0, 0, 0, DEQ, 0)]
        );
    }

    #[test]
    fn a_loss_on_the_wire_is_a_drop_at_the_end_of_the_transmission() {
        let (mut trace, path) = traced("loss");
        // Every other packet lost, starting with the first.
        let (mut f, _) = wire(r#"rate = "8Mbps", delay = "5ms", loss = { model = "periodic", every = 2 }"#, 2);
        f.offer(0, &data(0, 0, 1000), &mut trace);
        f.offer(0, &data(0, 1, 1000), &mut trace);
        let lost = Reason::LinkLoss as u8;
        assert_eq!(
            records(trace, &path, 10_000_000),
            [
                (0, 0, 0, 0, ENQ, 0),
                (0, 1, 0, 0, ENQ, 0),
                (1_000_000, 0, 0, 0, DEQ, 0),
                (1_000_000, 0, 0, 0, DROP, lost),
                (2_000_000, 1, 0, 0, DEQ, 0)
            ]
        );
    }

    #[test]
    fn a_traced_scheduler_records_push_outs_and_its_transmissions() {
        let (mut trace, path) = traced("drr");
        // A shared limit of 2000 bytes, pushing out of the longest queue.
        let q = r#"queue = { kind = "drr", limit = "2000B", overflow = "push_out_longest" }"#;
        let (mut f, _) = wire(&format!(r#"rate = "8Mbps", delay = "5ms", {q}"#), 2);
        f.offer(0, &data(0, 0, 1000), &mut trace); // transmitted at once
        f.offer(0, &data(0, 1, 1000), &mut trace);
        f.offer(0, &data(0, 2, 1000), &mut trace);
        f.offer(0, &data(1, 0, 1000), &mut trace); // pushes out flow 0's head
        f.advance(2_000_000, &mut trace);
        let recs = records(trace, &path, 2_000_000);
        let push = Reason::PushOut as u8;
        let drops: Vec<_> = recs.iter().filter(|r| r.4 == DROP).collect();
        assert_eq!(drops, [&(0, 1, 0, 0, DROP, push)]);
        assert_eq!(recs.iter().filter(|r| r.4 == ENQ).count(), 4);
        // Dequeues at the ends of the transmissions, 1 ms apart, in time order.
        let deqs: Vec<_> = recs.iter().filter(|r| r.4 == DEQ).map(|r| (r.0, r.2)).collect();
        assert_eq!(deqs[0], (1_000_000, 0));
        assert_eq!(deqs.len(), 2);
        assert!(recs.windows(2).all(|w| w[0].0 <= w[1].0));
        assert_eq!(f.report(true).no_flow, Some(0));
    }
}
