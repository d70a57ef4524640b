//! Queue disciplines that choose what to send when the transmitter frees: strict priority,
//! deficit round robin (DRR, DRR+ with RED or enhanced RED per queue), a single enhanced-RED
//! FIFO, and FQ-CoDel.
//!
//! Unlike a FIFO (ADR 0003), such a discipline cannot tell on arrival when a packet will leave,
//! so a link direction that has one keeps a transmitter with one event per transmission (ADR
//! 0004): [`Scheduler::dequeue`] runs when the transmitter frees. Packets are classified by
//! flow (connection index) into sub-queues with a table built once the scenario's flows are
//! known ([`Scheduler::bind_flows`]).
//!
//! Occupancy limits of a scheduler count the packets *waiting* in it, not the one being
//! transmitted (as ns-2's `Queue/DRR` and Linux qdiscs count).

use crate::net::codel::{Codel, CodelParams};
use crate::net::red::{Red, RedParams};
use crate::net::subqueue::exceeds;
use crate::net::{Limit, Refusal};
use crate::packet::{ecn, Meta};
use crate::units::Time;
use std::collections::VecDeque;

pub use crate::net::enhanced_red::{EnhancedRed, EnhancedRedParams};
pub use crate::net::subqueue::{Queued, Removal, SubAqm, SubQueue};

/// FQ-CoDel's bucket of a flow: SplitMix64 of (flow, salt), a fixed, platform-independent
/// hash.
fn bucket(flow: u32, salt: u64, buckets: u32) -> u32 {
    let mut z = u64::from(flow).wrapping_add(salt).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z % u64::from(buckets)) as u32
}

/// What [`Scheduler::bind_flows`] classifies: a listed flow, or an arrival group.
#[derive(Clone, Copy)]
enum Unit {
    Flow(usize),
    Group(u32),
}

/// What a DRR does when its shared limit is reached.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Overflow {
    /// Refuse the arrival.
    #[default]
    DropArrival,
    /// Accept it, then drop from the head of the queue with the most bytes until the total
    /// fits (ns-2's `Queue/DRR`).
    PushOutLongest,
}

/// Deficit round robin state (M. Shreedhar, G. Varghese, "Efficient Fair Queueing Using
/// Deficit Round Robin", SIGCOMM 1995), with ns-2's `Queue/DRR` order of service: a queue that
/// becomes active joins the end of the round.
#[derive(Clone, Debug, Default)]
pub struct Drr {
    /// Bytes of credit per round, by queue.
    pub quantum: Vec<u32>,
    deficit: Vec<u64>,
    /// The queue at the front of `active` has had its quantum for this turn.
    turn: Vec<bool>,
    active: VecDeque<u32>,
    /// Quantum of queues created for flows no explicit queue lists.
    pub default_quantum: u32,
    /// Shared-limit policy.
    pub overflow: Overflow,
}

/// FQ-CoDel (RFC 8290) state.
#[derive(Clone, Debug)]
pub struct FqCodel {
    /// Bytes of credit per round (RFC 8290's quantum).
    pub quantum: u32,
    /// CoDel parameters of every flow queue.
    pub codel: CodelParams,
    /// Hash flows into this many buckets; `None`: one queue per flow.
    pub buckets: Option<u32>,
    /// Perturbation of the hash.
    pub salt: u64,
    deficit: Vec<i64>,
    state: Vec<Codel>,
    /// 0: in no list, 1: new flows, 2: old flows.
    list: Vec<u8>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
}

impl Drr {
    /// A DRR with explicit queues of the given quanta.
    pub fn new(quantum: Vec<u32>, default_quantum: u32, overflow: Overflow) -> Self {
        Drr { quantum, default_quantum, overflow, ..Default::default() }
    }
}

impl FqCodel {
    /// An FQ-CoDel with no flows yet.
    pub fn new(quantum: u32, codel: CodelParams, buckets: Option<u32>, salt: u64) -> Self {
        FqCodel {
            quantum,
            codel,
            buckets,
            salt,
            deficit: Vec::new(),
            state: Vec::new(),
            list: Vec::new(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
        }
    }

    /// The CoDel state of queue `k`.
    pub fn codel_state(&self, k: usize) -> &Codel {
        &self.state[k]
    }
}

/// The discipline of a scheduled link direction.
#[derive(Clone, Debug)]
pub enum Discipline {
    /// Strict priority: queue 0 is served whenever it has a packet, then queue 1, ...
    Priority,
    /// Deficit round robin over the queues (one queue: a FIFO, as `enhanced_red` uses it).
    Drr(Drr),
    /// FQ-CoDel.
    FqCodel(Box<FqCodel>),
}

/// Flow-group names of explicit classes, kept until the flows are known.
#[derive(Clone, Debug, Default)]
pub struct ClassNames {
    /// Field path of the queue, for errors.
    pub path: String,
    /// Field holding the classes (`classes` or `queues`).
    pub field: &'static str,
    /// Names per class.
    pub names: Vec<Vec<String>>,
}

/// Template of the sub-queues a DRR creates for flows no explicit queue lists.
#[derive(Clone, Debug, Default)]
pub struct PerFlow {
    /// Limit of each.
    pub limit: Option<Limit>,
    /// RED parameters of each (DRR+), with the base name of their random streams.
    pub red: Option<(RedParams, u64, String)>,
    /// Enhanced RED of each (DRR+).
    pub enhanced: Option<(EnhancedRedParams, u64, String)>,
}

/// A discipline with its sub-queues, classification table and shared limit.
#[derive(Clone, Debug)]
pub struct Scheduler {
    /// Which discipline.
    pub disc: Discipline,
    /// Sub-queues (classes, DRR queues, flow buckets).
    pub queues: Vec<SubQueue>,
    /// Sub-queue of each listed flow.
    class: Vec<u32>,
    /// Sub-queue of the connections of each arrival group (by group index).
    group_class: Vec<u32>,
    /// Limit on everything waiting.
    pub total: Limit,
    pkts: u32,
    bytes: u64,
    /// Explicit classes to resolve against the flows.
    pub names: Option<ClassNames>,
    /// Sub-queues made for unlisted flows (DRR).
    pub per_flow: PerFlow,
    /// Largest packet seen (CoDel's MAXPACKET).
    max_packet: u32,
}

impl Scheduler {
    /// A scheduler with the given explicit sub-queues (possibly none yet).
    pub fn new(disc: Discipline, queues: Vec<SubQueue>, total: Limit) -> Self {
        Scheduler {
            disc,
            queues,
            class: Vec::new(),
            group_class: Vec::new(),
            total,
            pkts: 0,
            bytes: 0,
            names: None,
            per_flow: PerFlow::default(),
            max_packet: 0,
        }
    }

    /// Kind name, for results.
    pub fn name(&self) -> &'static str {
        match &self.disc {
            Discipline::Priority => "priority",
            Discipline::Drr(_) if self.names.is_none() && self.queues.len() == 1 => "fifo",
            Discipline::Drr(_) => "drr",
            Discipline::FqCodel(_) => "fq_codel",
        }
    }

    /// Classify the run's flows: `groups[f]` is flow `f`'s group name, `here[f]` says whether
    /// its packets use this direction (queues of their own are made only for those). Explicit
    /// classes take the flows of the groups they name; the others go to the lowest priority
    /// class, to a DRR queue of their own, to their FQ-CoDel queue (one per flow or a hash
    /// bucket), or to the single queue of a FIFO.
    ///
    /// `arrival` lists the groups whose connections are opened while the run goes on, as
    /// (group index, name, uses this direction): their connections are classified by group,
    /// not one entry per connection. A group of them shares one DRR or exact FQ-CoDel queue; with
    /// FQ-CoDel buckets each connection is hashed into a bucket.
    pub fn bind_flows(
        &mut self,
        groups: &[&str],
        here: &[bool],
        arrival: &[(u32, &str, bool)],
    ) -> Result<(), crate::ConfigError> {
        let n = groups.len();
        self.class = vec![u32::MAX; n];
        let n_groups = arrival.iter().map(|a| a.0 as usize + 1).max().unwrap_or(0);
        self.group_class = vec![u32::MAX; n_groups];
        if let Some(names) = &self.names {
            for (k, class) in names.names.iter().enumerate() {
                for (j, name) in class.iter().enumerate() {
                    let path = format!("{}.{}[{k}].flows[{j}]", names.path, names.field);
                    let taken = |other: u32| {
                        Err(crate::ConfigError::new(
                            path.clone(),
                            format!("flow group \"{name}\" is already in {}[{other}]", names.field),
                        ))
                    };
                    let mut found = false;
                    for (f, g) in groups.iter().enumerate() {
                        if g == name {
                            found = true;
                            if self.class[f] != u32::MAX && self.class[f] != k as u32 {
                                return taken(self.class[f]);
                            }
                            self.class[f] = k as u32;
                        }
                    }
                    for &(g, gname, _) in arrival {
                        if gname == name {
                            found = true;
                            let c = &mut self.group_class[g as usize];
                            if *c != u32::MAX && *c != k as u32 {
                                return taken(*c);
                            }
                            *c = k as u32;
                        }
                    }
                    if !found {
                        let mut known: Vec<&str> = Vec::new();
                        for g in groups.iter().copied().chain(arrival.iter().map(|a| a.1)) {
                            if !known.contains(&g) {
                                known.push(g);
                            }
                        }
                        return Err(crate::ConfigError::new(
                            path,
                            format!("no flow group is called \"{name}\"; groups are {}", known.join(", ")),
                        ));
                    }
                }
            }
        }
        let explicit = self.queues.len() as u32;
        let fifo = self.names.is_none() && explicit == 1;
        let own_queue = match &self.disc {
            Discipline::Drr(_) => !fifo,
            Discipline::FqCodel(fq) => fq.buckets.is_none(),
            Discipline::Priority => false,
        };
        let mut exact = 0u32;
        // The listed flows one by one, then each arrival group as one, in a stable order.
        let units = (0..n).map(|f| (Unit::Flow(f), here[f])).chain(arrival.iter().map(|a| (Unit::Group(a.0), a.2)));
        for (unit, used) in units {
            let slot = match unit {
                Unit::Flow(f) => &self.class[f],
                Unit::Group(g) => &self.group_class[g as usize],
            };
            if *slot != u32::MAX || (own_queue && !used) {
                continue;
            }
            let class = match &mut self.disc {
                Discipline::Priority => explicit - 1,
                Discipline::Drr(_) if fifo => 0,
                Discipline::Drr(d) => {
                    let k = self.queues.len() as u32;
                    let pf = &self.per_flow;
                    let label = match unit {
                        Unit::Flow(f) => format!("flow{f}"),
                        Unit::Group(g) => format!("group{g}"),
                    };
                    let aqm = if let Some((params, seed, base)) = &pf.red {
                        SubAqm::Red(Box::new(Red::new(
                            *params,
                            crate::engine::stream(*seed, &format!("{base}/{label}")),
                        )))
                    } else if let Some((params, seed, base)) = &pf.enhanced {
                        let rng = crate::engine::stream(*seed, &format!("{base}/{label}"));
                        SubAqm::Enhanced(Box::new(EnhancedRed::new(params.clone(), rng)))
                    } else {
                        SubAqm::None
                    };
                    self.queues.push(SubQueue::new(pf.limit, aqm));
                    d.quantum.push(d.default_quantum);
                    k
                }
                Discipline::FqCodel(fq) => match (fq.buckets, unit) {
                    (Some(b), Unit::Flow(f)) => bucket(f as u32, fq.salt, b),
                    // Connections opened at run time are hashed as they come.
                    (Some(_), Unit::Group(_)) => continue,
                    (None, _) => {
                        exact += 1;
                        exact - 1
                    }
                },
            };
            match unit {
                Unit::Flow(f) => self.class[f] = class,
                Unit::Group(g) => self.group_class[g as usize] = class,
            }
        }
        if let Discipline::FqCodel(fq) = &mut self.disc {
            let k = match fq.buckets {
                Some(b) => b as usize,
                None => exact as usize,
            };
            self.queues = (0..k).map(|_| SubQueue::new(None, SubAqm::None)).collect();
            fq.deficit = vec![0; k];
            fq.state = vec![Codel::default(); k];
            fq.list = vec![0; k];
        }
        // Enhanced RED's p_i by flow, and by group for connections opened at run time.
        let p_named =
            |e: &EnhancedRedParams, g: &str| e.group_p.iter().find(|(name, _)| name == g).map_or(e.default_p, |x| x.1);
        for q in &mut self.queues {
            if let SubAqm::Enhanced(e) = &mut q.aqm {
                let params = &mut e.params;
                params.p = groups.iter().map(|g| p_named(params, g)).collect();
                params.p_group = vec![params.default_p; n_groups];
                for &(g, name, _) in arrival {
                    params.p_group[g as usize] = p_named(params, name);
                }
            }
        }
        if let Discipline::Drr(d) = &mut self.disc {
            d.deficit = vec![0; self.queues.len()];
            d.turn = vec![false; self.queues.len()];
        }
        Ok(())
    }

    /// The sub-queue of a packet: its flow's, or, for a connection opened at run time, its
    /// group's or its hash bucket's.
    #[inline]
    fn class_of_packet(&self, m: &Meta) -> usize {
        if let Some(&k) = self.class.get(m.flow as usize) {
            return k as usize;
        }
        match &self.disc {
            Discipline::FqCodel(fq) if fq.buckets.is_some() => {
                bucket(m.flow, fq.salt, fq.buckets.expect("checked")) as usize
            }
            _ => self.group_class[m.group as usize] as usize,
        }
    }

    /// The sub-queue of flow `f`.
    pub fn class_of(&self, f: u32) -> u32 {
        self.class[f as usize]
    }

    /// Packets and bytes waiting.
    pub fn len(&self) -> (u32, u64) {
        (self.pkts, self.bytes)
    }

    /// True when nothing waits.
    pub fn is_empty(&self) -> bool {
        self.pkts == 0
    }

    /// Every waiting packet.
    pub fn iter(&self) -> impl Iterator<Item = &Queued> + '_ {
        self.queues.iter().flat_map(|q| q.iter())
    }

    /// Remove the head of queue `k` as a push-out.
    fn push_out(&mut self, k: usize, now: Time, removed: &mut Vec<(Queued, Removal)>) {
        let q = self.queues[k].pop_head(now).expect("pushing out of an empty queue");
        self.pkts -= 1;
        self.bytes -= u64::from(q.meta.size);
        removed.push((q, Removal::PushOut));
        if self.queues[k].is_empty() {
            match &mut self.disc {
                Discipline::Drr(d) => {
                    if let Some(pos) = d.active.iter().position(|&a| a as usize == k) {
                        d.active.remove(pos);
                    }
                    d.deficit[k] = 0;
                    d.turn[k] = false;
                }
                Discipline::FqCodel(_) | Discipline::Priority => {}
            }
        }
    }

    /// Offer `q` at `now` (its arrival time). On refusal nothing changed but the AQM state;
    /// packets pushed out to make room are appended to `removed`. On acceptance, whether its
    /// queue's step marking marks it.
    pub fn enqueue(&mut self, now: Time, q: Queued, removed: &mut Vec<(Queued, Removal)>) -> Result<bool, Refusal> {
        let k = self.class_of_packet(&q.meta);
        self.max_packet = self.max_packet.max(q.meta.size);
        let push_out = match &self.disc {
            Discipline::Drr(d) => d.overflow == Overflow::PushOutLongest,
            Discipline::FqCodel(_) => true,
            Discipline::Priority => false,
        };
        let marked = self.queues[k].admit(&q)?;
        if !push_out && exceeds(self.total, self.pkts + 1, self.bytes + u64::from(q.meta.size)) {
            self.queues[k].overflowed(&q);
            return Err(Refusal::Overflow);
        }
        self.queues[k].push_back(q);
        self.pkts += 1;
        self.bytes += u64::from(q.meta.size);
        match &mut self.disc {
            Discipline::Drr(d) => {
                if self.queues[k].len() == 1 {
                    d.active.push_back(k as u32);
                    d.deficit[k] = 0;
                    d.turn[k] = false;
                }
            }
            Discipline::FqCodel(fq) => {
                if fq.list[k] == 0 {
                    fq.list[k] = 1;
                    fq.new_flows.push_back(k as u32);
                    fq.deficit[k] = i64::from(fq.quantum);
                }
            }
            Discipline::Priority => {}
        }
        while push_out && exceeds(self.total, self.pkts, self.bytes) {
            let fattest = match &self.disc {
                // ns-2: the first queue with the most bytes in round order from the current one.
                Discipline::Drr(d) => {
                    let mut best = d.active[0] as usize;
                    for &a in &d.active {
                        if self.queues[a as usize].bytes() > self.queues[best].bytes() {
                            best = a as usize;
                        }
                    }
                    best
                }
                // RFC 8290 §4.1: the queue with the largest byte count (lowest index on ties).
                _ => {
                    let mut best = 0;
                    for (i, sq) in self.queues.iter().enumerate() {
                        if sq.bytes() > self.queues[best].bytes() {
                            best = i;
                        }
                    }
                    best
                }
            };
            self.push_out(fattest, now, removed);
        }
        Ok(marked)
    }

    /// The packet to transmit next at `now`, if any. Packets a discipline drops on the way
    /// (CoDel) are appended to `removed`.
    pub fn dequeue(&mut self, now: Time, removed: &mut Vec<(Queued, Removal)>) -> Option<Queued> {
        if self.pkts == 0 {
            return None;
        }
        let (k, q) = match &mut self.disc {
            Discipline::Priority => {
                let k = self.queues.iter().position(|q| !q.is_empty())?;
                (k, self.queues[k].pop_head(now)?)
            }
            Discipline::Drr(d) => loop {
                let k = *d.active.front()? as usize;
                if !d.turn[k] {
                    d.deficit[k] += u64::from(d.quantum[k]);
                    d.turn[k] = true;
                }
                let size = self.queues[k].head_size().expect("active queues are not empty");
                if u64::from(size) <= d.deficit[k] {
                    d.deficit[k] -= u64::from(size);
                    let q = self.queues[k].pop_head(now).expect("checked");
                    if self.queues[k].is_empty() {
                        d.deficit[k] = 0;
                        d.turn[k] = false;
                        d.active.pop_front();
                    }
                    break (k, q);
                }
                d.turn[k] = false;
                d.active.rotate_left(1);
            },
            Discipline::FqCodel(fq) => {
                let maxpacket = self.max_packet;
                loop {
                    let (k, from_new) = match (fq.new_flows.front(), fq.old_flows.front()) {
                        (Some(&k), _) => (k as usize, true),
                        (None, Some(&k)) => (k as usize, false),
                        (None, None) => return None,
                    };
                    if fq.deficit[k] <= 0 {
                        fq.deficit[k] += i64::from(fq.quantum);
                        if from_new {
                            fq.new_flows.pop_front();
                        } else {
                            fq.old_flows.pop_front();
                        }
                        fq.old_flows.push_back(k as u32);
                        fq.list[k] = 2;
                        continue;
                    }
                    let before = removed.len();
                    let got = fq.state[k].dequeue(now, &fq.codel, &mut self.queues[k], maxpacket, removed);
                    for (r, _) in &removed[before..] {
                        self.pkts -= 1;
                        self.bytes -= u64::from(r.meta.size);
                    }
                    match got {
                        Some(q) => {
                            fq.deficit[k] -= i64::from(q.meta.size);
                            break (k, q);
                        }
                        None => {
                            // RFC 8290 §4.2: an emptied new queue goes to the end of the old
                            // list (so it cannot stay "new"); an emptied old queue leaves.
                            if from_new {
                                fq.new_flows.pop_front();
                                fq.old_flows.push_back(k as u32);
                                fq.list[k] = 2;
                            } else {
                                fq.old_flows.pop_front();
                                fq.list[k] = 0;
                            }
                        }
                    }
                }
            }
        };
        debug_assert!(k < self.queues.len());
        self.pkts -= 1;
        self.bytes -= u64::from(q.meta.size);
        let mut q = q;
        if self.queues[k].mark_at_departure && self.queues[k].over_mark_threshold(&q.meta) {
            q.meta.ecn |= ecn::CE;
        }
        Some(q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;
    use crate::packet::Meta;

    fn pkt(id: u32, flow: u32, size: u32) -> Queued {
        Queued { id, at: 0, meta: Meta { flow, group: 0, size, ecn: 0, flags: 0 } }
    }

    fn drr(quanta: &[u32], total: Limit, overflow: Overflow) -> Scheduler {
        let d = Drr { quantum: quanta.to_vec(), default_quantum: 1500, overflow, ..Default::default() };
        let queues = quanta.iter().map(|_| SubQueue::new(None, SubAqm::None)).collect();
        let mut s = Scheduler::new(Discipline::Drr(d), queues, total);
        s.names = Some(ClassNames {
            path: "q".into(),
            field: "queues",
            names: (0..quanta.len()).map(|i| vec![format!("g{i}")]).collect(),
        });
        let groups: Vec<String> = (0..quanta.len()).map(|i| format!("g{i}")).collect();
        let refs: Vec<&str> = groups.iter().map(String::as_str).collect();
        s.bind_flows(&refs, &vec![true; refs.len()], &[]).unwrap();
        s
    }

    #[test]
    fn drr_serves_bytes_in_proportion_to_the_quanta() {
        let mut s = drr(&[500, 1000, 1500], Limit::Packets(10_000), Overflow::DropArrival);
        let mut removed = Vec::new();
        for i in 0..3000 {
            s.enqueue(0, pkt(i, i % 3, 500), &mut removed).unwrap();
        }
        let mut sent = [0u64; 3];
        for _ in 0..1200 {
            let q = s.dequeue(0, &mut removed).unwrap();
            sent[q.meta.flow as usize] += u64::from(q.meta.size);
        }
        // 1200 packets = 200 rounds of 1 + 2 + 3 packets.
        assert_eq!(sent, [100_000, 200_000, 300_000]);
        assert!(removed.is_empty());
    }

    #[test]
    fn drr_carries_the_deficit_when_the_head_does_not_fit() {
        // Quantum 600, packets of 1000: the queue sends once every two rounds.
        let mut s = drr(&[600, 1000], Limit::Packets(100), Overflow::DropArrival);
        let mut removed = Vec::new();
        for i in 0..20 {
            s.enqueue(0, pkt(i, i % 2, 1000), &mut removed).unwrap();
        }
        let order: Vec<u32> = (0..6).map(|_| s.dequeue(0, &mut removed).unwrap().meta.flow).collect();
        assert_eq!(order, [1, 0, 1, 1, 0, 1]);
    }

    #[test]
    fn ns2_push_out_drops_the_head_of_the_longest_queue() {
        let mut s = drr(&[1500, 1500], Limit::Bytes(4000), Overflow::PushOutLongest);
        let mut removed = Vec::new();
        s.enqueue(0, pkt(0, 0, 1000), &mut removed).unwrap();
        s.enqueue(0, pkt(1, 0, 1000), &mut removed).unwrap();
        s.enqueue(0, pkt(2, 0, 1000), &mut removed).unwrap();
        s.enqueue(0, pkt(3, 1, 1000), &mut removed).unwrap();
        assert!(removed.is_empty());
        // 5000 bytes > 4000: flow 0 (3000 bytes) loses its head, packet 0.
        s.enqueue(0, pkt(4, 1, 1000), &mut removed).unwrap();
        assert_eq!(removed, vec![(pkt(0, 0, 1000), Removal::PushOut)]);
        assert_eq!(s.len(), (4, 4000));
        // Without push-out the arrival itself is refused.
        let mut s = drr(&[1500, 1500], Limit::Bytes(4000), Overflow::DropArrival);
        for i in 0..4 {
            s.enqueue(0, pkt(i, i / 3, 1000), &mut removed).unwrap();
        }
        assert_eq!(s.enqueue(0, pkt(4, 1, 1000), &mut removed), Err(Refusal::Overflow));
    }

    #[test]
    fn priority_serves_the_highest_non_empty_class() {
        let queues = vec![SubQueue::new(Some(Limit::Packets(2)), SubAqm::None), SubQueue::new(None, SubAqm::None)];
        let mut s = Scheduler::new(Discipline::Priority, queues, Limit::Packets(100));
        s.names = Some(ClassNames { path: "q".into(), field: "classes", names: vec![vec!["hi".into()], vec![]] });
        s.bind_flows(&["lo", "hi", "other"], &[true; 3], &[]).unwrap();
        assert_eq!((s.class_of(0), s.class_of(1), s.class_of(2)), (1, 0, 1));
        let mut removed = Vec::new();
        s.enqueue(0, pkt(0, 0, 100), &mut removed).unwrap();
        s.enqueue(0, pkt(1, 1, 100), &mut removed).unwrap();
        s.enqueue(0, pkt(2, 1, 100), &mut removed).unwrap();
        // The class limit of 2 refuses a third high-priority packet.
        assert_eq!(s.enqueue(0, pkt(3, 1, 100), &mut removed), Err(Refusal::Overflow));
        let order: Vec<u32> = std::iter::from_fn(|| s.dequeue(0, &mut removed)).map(|q| q.id).collect();
        assert_eq!(order, [1, 2, 0]);
    }

    #[test]
    fn unknown_and_repeated_group_names_are_errors() {
        let queues = vec![SubQueue::default(), SubQueue::default()];
        let mut s = Scheduler::new(Discipline::Priority, queues, Limit::Packets(100));
        s.names = Some(ClassNames {
            path: "topology.bottleneck.queue".into(),
            field: "classes",
            names: vec![vec!["vbr".into()], vec!["x".into()]],
        });
        let e = s.bind_flows(&["vbr", "data"], &[true; 2], &[]).unwrap_err().to_string();
        assert_eq!(
            e,
            "topology.bottleneck.queue.classes[1].flows[0]: no flow group is called \"x\"; groups are vbr, data"
        );
        s.names.as_mut().unwrap().names[1] = vec!["vbr".into()];
        let e = s.bind_flows(&["vbr", "data"], &[true; 2], &[]).unwrap_err().to_string();
        assert!(e.contains("already in classes[0]"), "{e}");
    }

    #[test]
    fn enhanced_red_drops_each_flow_with_its_own_probability() {
        let params = EnhancedRedParams {
            min_th: 5.0,
            max_th: 15.0,
            w_q: 0.002,
            p: vec![0.01, 0.05, 0.2],
            p_group: Vec::new(),
            default_p: 0.02,
            group_p: Vec::new(),
            ramp: false,
            ptc: 1000.0,
        };
        let mut e = EnhancedRed::new(params, stream(3, "test"));
        let m = |flow: u32| Meta { flow, group: 0, size: 1000, ecn: 0, flags: 0 };
        e.set_avg(10.0);
        let n = 20_000u32;
        let mut drops = [0u32; 3];
        for i in 0..3 * n {
            // The queue seen is held at 10: the average stays between the thresholds.
            if e.early_drop(0, &m(i % 3), 10, None) {
                drops[(i % 3) as usize] += 1;
            }
        }
        assert!((e.avg_pkts() - 10.0).abs() < 1e-9);
        for (f, &p) in [0.01, 0.05, 0.2].iter().enumerate() {
            let mean = f64::from(n) * p;
            let sd = (mean * (1.0 - p)).sqrt();
            // 99.9 % binomial interval (normal approximation, ±3.29 σ).
            assert!((f64::from(drops[f]) - mean).abs() < 3.29 * sd, "flow {f}: {} drops, expected {mean}", drops[f]);
        }
        // Below min_th nothing is dropped, at max_th everything is.
        e.set_avg(0.0);
        assert!(!(0..100).any(|_| e.early_drop(0, &m(2), 0, None)));
        e.set_avg(15.0);
        assert!(e.early_drop(0, &m(0), 15, None));
    }

    #[test]
    fn enhanced_red_ramp_scales_p_with_the_average() {
        let params = EnhancedRedParams {
            min_th: 0.0,
            max_th: 10.0,
            w_q: 1e-12,
            p: vec![0.4],
            p_group: Vec::new(),
            default_p: 0.4,
            group_p: Vec::new(),
            ramp: true,
            ptc: 1000.0,
        };
        let mut e = EnhancedRed::new(params, stream(4, "test"));
        e.set_avg(2.5); // p = 0.4 · 0.25 = 0.1
        let n = 40_000;
        let m = Meta { flow: 0, group: 0, size: 1000, ecn: 0, flags: 0 };
        let drops = (0..n).filter(|_| e.early_drop(0, &m, 2, None)).count() as f64;
        let sd = (f64::from(n) * 0.1 * 0.9).sqrt();
        assert!((drops - f64::from(n) * 0.1).abs() < 3.29 * sd, "{drops}");
    }
}
