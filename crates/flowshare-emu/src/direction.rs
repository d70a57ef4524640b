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

use crate::ipv4::{self, codepoint, Rejected};
use crate::pcap::Capture;
use crate::report::DirReport;
use crate::timing::Lateness;
use crate::tun::Tun;
use crate::{clock, EmuError};
use flowshare_core::net::link::GONE;
use flowshare_core::net::sched::{Discipline, Queued};
use flowshare_core::net::LinkDir;
use flowshare_core::packet::{ecn, Meta, PacketId};
use flowshare_core::scenario::ConnSpec;
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

/// One direction in real time.
pub(crate) struct Direction {
    link: LinkDir,
    classify: Classify,
    /// Packet bytes by id; `free` lists reusable ids.
    slots: Vec<Vec<u8>>,
    free: Vec<PacketId>,
    /// Arrival time of the pipe's head.
    head: Option<Time>,
    /// End of the scheduled transmitter's current transmission (its next event).
    tx_end: Option<Time>,
    departures: u64,
    not_ipv4: u64,
    malformed: u64,
    lateness: Lateness,
}

impl Direction {
    /// Drive `link`, classifying packets with `classify`.
    pub(crate) fn new(link: LinkDir, classify: Classify) -> Direction {
        Direction {
            link,
            classify,
            slots: Vec::new(),
            free: Vec::new(),
            head: None,
            tx_end: None,
            departures: 0,
            not_ipv4: 0,
            malformed: 0,
            lateness: Lateness::default(),
        }
    }

    fn alloc(&mut self, packet: &[u8]) -> PacketId {
        match self.free.pop() {
            Some(id) => {
                let s = &mut self.slots[id as usize];
                s.clear();
                s.extend_from_slice(packet);
                id
            }
            None => {
                self.slots.push(packet.to_vec());
                (self.slots.len() - 1) as PacketId
            }
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
    pub(crate) fn offer(&mut self, now: Time, packet: &[u8]) {
        let info = match ipv4::parse(packet) {
            Ok(info) => info,
            Err(Rejected::NotIpv4) => return self.not_ipv4 += 1,
            Err(Rejected::Malformed) => return self.malformed += 1,
        };
        // Transmitter events up to now come first, as in the simulator's event order.
        self.advance(now);
        let (flow, group) = self.classify.flow(info.flow_hash);
        let meta = Meta { flow, group, size: u32::from(info.total_len), ecn: info.meta_ecn(), flags: 0 };
        if self.link.loss_first() && self.link.lost_on_arrival(now) {
            return;
        }
        if self.link.is_scheduled() {
            return self.offer_scheduled(now, packet, meta);
        }
        let Ok(arrival) = self.link.enqueue(now, now, &meta) else {
            return;
        };
        let marked = meta.ecn != 0 && self.link.take_mark();
        if self.link.lost_on_wire(now, arrival) {
            return;
        }
        let id = self.alloc(packet);
        if marked {
            ipv4::set_ce(&mut self.slots[id as usize]);
        }
        if self.link.push_pipe(arrival, id) {
            self.head = Some(arrival);
        }
    }

    fn offer_scheduled(&mut self, now: Time, packet: &[u8], meta: Meta) {
        let id = self.alloc(packet);
        match self.link.sched_enqueue(now, Queued { id, at: now, meta }) {
            Err(_) => self.free.push(id),
            Ok(idle) => {
                if meta.ecn != 0 && self.link.take_mark() {
                    ipv4::set_ce(&mut self.slots[id as usize]);
                }
                self.drain_removed();
                if idle {
                    self.start_tx(now);
                }
            }
        }
    }

    /// Free the packets the scheduler removed without sending them (their drops are counted).
    fn drain_removed(&mut self) {
        let Some(s) = self.link.scheduled_mut() else { return };
        for (q, _) in s.removed.drain(..) {
            self.free.push(q.id);
        }
    }

    /// Run the scheduled transmitter's events due by `now`.
    fn advance(&mut self, now: Time) {
        while let Some(t) = self.tx_end.filter(|&t| t <= now) {
            self.start_tx(t);
        }
    }

    /// The scheduled transmitter is free at `t`: send the next packet, if any.
    fn start_tx(&mut self, t: Time) {
        let started = self.link.sched_start(t);
        let end = self.link.last_end();
        self.drain_removed();
        let Some((q, arrival)) = started else {
            self.tx_end = None;
            return;
        };
        self.tx_end = Some(end);
        let bytes = &mut self.slots[q.id as usize];
        if q.meta.ecn & ecn::CE != 0 && bytes[1] & 0b11 != codepoint::CE {
            // Marked as it leaves (a class's `mark = "departure"`).
            ipv4::set_ce(bytes);
            self.link.stats.marks += 1;
        }
        if self.link.lost_on_wire(t, arrival) {
            self.free.push(q.id);
            return;
        }
        if self.link.push_pipe(arrival, q.id) {
            self.head = Some(arrival);
        }
    }

    /// Write every packet due by `now` to `sink`, recording how late each write is.
    pub(crate) fn deliver(&mut self, now: Time, sink: &Sink, capture: &mut Option<Capture>) -> Result<(), EmuError> {
        self.advance(now);
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

    /// The direction's counters.
    pub(crate) fn report(&self) -> DirReport {
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
        f.offer(0, &udp(0, 1, 1000));
        assert_eq!(f.next_due(), Some(6_000_000));
        f.offer(0, &udp(0, 1, 1000));
        f.offer(0, &udp(0, 1, 1000)); // the third finds the queue full
        let r = f.report();
        assert_eq!((r.arrivals, r.bytes, r.drops, r.max_queue, r.left_in_link), (3, 3000, 1, 2, 2));
        assert_eq!(f.next_due(), Some(6_000_000));
    }

    #[test]
    fn non_ipv4_and_malformed_packets_are_counted_not_offered() {
        let (mut f, _) = wire(r#"rate = "8Mbps", delay = "5ms""#, 1);
        let mut v6 = vec![0u8; 60];
        v6[0] = 0x60;
        f.offer(0, &v6);
        f.offer(0, &udp(0, 1, 1000)[..500]);
        let r = f.report();
        assert_eq!((r.arrivals, r.not_ipv4, r.malformed), (0, 1, 1));
        assert_eq!(f.next_due(), None);
    }

    #[test]
    fn step_marking_sets_ce_in_the_packet_with_a_valid_checksum() {
        let (mut f, _) = wire(r#"rate = "8Mbps", delay = "1ms", queue = { limit = 100, ecn_threshold = 1 }"#, 1);
        for _ in 0..3 {
            f.offer(0, &udp(codepoint::ECT0, 1, 1000));
        }
        // Waiting packets seen: none, none (one in transmission), one: the third is marked.
        assert_eq!(f.report().marks, 1);
        let marked: Vec<_> = f.link.pipe_ids().map(|id| f.slots[id as usize][1] & 0b11).collect();
        assert_eq!(marked, [codepoint::ECT0, codepoint::ECT0, codepoint::CE]);
        let third = &f.slots[f.link.pipe_ids().nth(2).unwrap() as usize];
        assert_eq!(ipv4::header_checksum(&third[..20]), 0);
    }

    #[test]
    fn scheduled_direction_runs_its_transmitter() {
        let (mut f, _) = wire(r#"rate = "8Mbps", delay = "5ms", queue = { kind = "fq_codel" }"#, 2);
        assert!(matches!(f.classify, Classify::Listed(ref l) if l.len() == 2));
        f.offer(0, &udp(0, 1, 1000));
        f.offer(0, &udp(0, 2, 1000));
        // The transmitter's next event (1 ms) comes before the first arrival (6 ms).
        assert_eq!(f.next_due(), Some(1_000_000));
        f.advance(1_000_000);
        assert_eq!(f.next_due(), Some(2_000_000));
        f.advance(2_000_000);
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
            f.offer(0, &udp(0, 1, 1000));
        }
        let r = f.report();
        assert_eq!((r.arrivals, r.link_losses, r.left_in_link), (4, 2, 2));
    }
}
