//! One direction of a point-to-point link: a FIFO queue (DropTail or RED), a transmitter and a
//! pipe.
//!
//! A FIFO queue served at a fixed rate needs no event per transmission: when a packet is
//! accepted its transmission start and end are already known (`max(now, busy_until)` and that
//! plus its serialization time). So the link computes, on enqueue, the time the packet reaches
//! the far node, and keeps the packet in its pipe (a FIFO ordered by that time). Only the head
//! of the pipe has an event in the global queue. Queue occupancy at any instant is the number
//! of accepted packets whose transmission has not ended yet, kept in `held`.
//!
//! A link direction used by a single route (a host's access link, say) is *exclusive*: its
//! packets arrive in the order of the link before it, so the simulation may offer a packet to
//! it at the (future) time the packet will reach it, as soon as that time is known, and skip
//! one event per packet (see `Simulation::forward`). `held` therefore records each packet's
//! arrival time too, and occupancy counts only packets that have arrived.
//!
//! A station's direction onto a shared-medium LAN ([`crate::net::Network::add_lan`]) is a link
//! direction like any other, except that its transmissions also wait for the LAN's channel,
//! which every station shares: [`crate::net::Network::enqueue`] moves the direction's
//! `busy_until` to the channel's before offering the packet.
//!
//! A direction may be taken down and its rate and delay changed during a run
//! ([`LinkDir::go_down`], [`LinkDir::set_rate`], [`LinkDir::set_delay`]); a change applies to
//! packets accepted after it, since earlier departures are already computed.
//!
//! A direction may have a loss model ([`crate::net::loss`]); it acts after the queue: an
//! accepted packet is transmitted as usual and the caller asks [`LinkDir::lost_on_wire`]
//! whether it then vanishes instead of entering the pipe.
//!
//! What waits in a direction is its [`Queue`], chosen once when the link is built: a [`Fifo`]
//! (the above) or a [`Scheduled`] discipline (ADR 0004). Both see each packet's [`Meta`]
//! (flow, group, size, ECN, frame boundary), so per-flow AQM, frame discard or marking live in
//! a discipline, not in the forwarding loop.

use crate::net::abr::Abr;
use crate::net::epd::Epd;
use crate::net::loss::LossProcess;
use crate::net::red::{Red, Verdict};
use crate::net::sched::{Queued, Removal, Scheduler};
use crate::net::subqueue::reaches;
use crate::net::NodeId;
use crate::packet::{flags, Meta, PacketId};
use crate::ring::Ring;
use crate::units::{Rate, Time};

/// Capacity of a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// At most this many packets held, counting the one being transmitted.
    Packets(u32),
    /// At most this many bytes held, counting the packet being transmitted.
    Bytes(u64),
}

/// Static parameters of a link direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkParams {
    /// Transmission rate.
    pub rate: Rate,
    /// Propagation delay in nanoseconds.
    pub delay: Time,
    /// Queue capacity.
    pub limit: Limit,
}

/// Counters of one queue. Lengths count packets held, including the one in transmission.
#[derive(Clone, Copy, Debug, Default)]
pub struct QueueStats {
    /// Packets offered to the queue.
    pub arrivals: u64,
    /// Bytes offered to the queue.
    pub arrival_bytes: u64,
    /// Packets dropped on arrival.
    pub drops: u64,
    /// Bytes dropped on arrival.
    pub drop_bytes: u64,
    /// Of `drops`, those decided by the active queue management (RED) rather than by the limit.
    pub early_drops: u64,
    /// Of `drops`, packets waiting or in transmission when the direction went down.
    pub down_drops: u64,
    /// Transmitted packets still propagating when the direction went down (departures, lost).
    pub down_losses: u64,
    /// Largest number of packets held.
    pub max_len: u32,
    /// Integral of packets held over time, in packet-nanoseconds.
    pub len_integral: u128,
    /// Integral of bytes held over time, in byte-nanoseconds.
    pub bytes_integral: u128,
    /// Nanoseconds spent transmitting.
    pub busy: u64,
    /// Packets transmitted and then discarded by the loss model (a subset of departures).
    pub link_losses: u64,
    /// Packets accepted with their CE bit set by RED's ECN marking.
    pub marks: u64,
}

/// Why a queue refused a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The active queue management (RED) dropped it before the queue was full.
    Early,
    /// The queue was full.
    Overflow,
    /// The link's loss model, placed before the queue, lost it on arrival.
    Lost,
}

/// Admission policy of a FIFO link: which arrivals are refused before the hard limit.
#[derive(Debug, Default)]
pub enum Aqm {
    /// Only the limit refuses packets.
    #[default]
    DropTail,
    /// Random Early Detection, then the limit.
    Red(Box<Red>),
    /// Whole-frame discard of AAL5 cells (EPD, EPD/A, PPD), then the limit.
    Epd(Box<Epd>),
}

/// One direction of a link.
#[derive(Debug)]
pub struct LinkDir {
    /// Transmitting node.
    pub from: NodeId,
    /// Receiving node.
    pub to: NodeId,
    /// Rate, delay and queue limit (a FIFO's; a scheduler has its own limits).
    pub params: LinkParams,
    busy_until: Time,
    carry: u64,
    /// Last (size, whole ns, remainder) of a serialization-time computation: data and ACK
    /// sizes repeat, so the division is rarely needed.
    tx_cache: [(u32, u64, u64); 2],
    /// Only one route uses this direction.
    pub exclusive: bool,
    /// An ATM cell link (ADR 0013): packets cross it as AAL5 cells, which its queue counts.
    pub cells: bool,
    /// Packets on their way to `to`, with their arrival times, in order.
    pipe: Ring<(Time, PacketId)>,
    /// Counters.
    pub stats: QueueStats,
    /// What waits to be sent, and how the next is chosen.
    pub queue: Queue,
    /// Loss model, if any: after the queue, or before it with `loss_first`.
    pub loss: Option<Box<LossProcess>>,
    /// The loss model acts on arrival, before the queue (`loss_position = "before_queue"`).
    pub(crate) loss_first: bool,
    /// Arrivals take [`Network`](super::Network)'s out-of-line path: a LAN station, or a loss
    /// model before the queue.
    pub(crate) slow_enqueue: bool,
    /// End of transmission of lost packets not yet fully transmitted (for end-of-run clipping).
    lost_ends: Ring<Time>,
    /// The LAN this direction transmits onto (index into the network's LANs), if any.
    pub lan: Option<u32>,
    /// Carrying traffic; routes avoid directions that are down.
    pub up: bool,
    /// Earliest arrival of the next accepted packet: after a delay decrease or a down period,
    /// packets must not overtake those already in the pipe.
    floor: Time,
}

/// The queue of a link direction, chosen once when the link is built.
#[derive(Debug)]
pub enum Queue {
    /// First in, first out: departures are known when a packet is accepted (ADR 0003).
    Fifo(Fifo),
    /// A discipline that chooses the next packet when the transmitter frees (ADR 0004).
    Scheduled(Box<Scheduled>),
}

/// A FIFO queue with its admission policy.
#[derive(Debug, Default)]
pub struct Fifo {
    /// Accepted packets whose transmission has not ended: (arrival, end of transmission, bytes).
    held: Ring<(Time, Time, u32)>,
    held_bytes: u64,
    /// The first `gone` entries of `held` (`gone_bytes` bytes) end by the latest offer time;
    /// only offers ahead of time make this non-zero.
    gone: usize,
    gone_bytes: u64,
    /// Admission policy.
    pub aqm: Aqm,
    /// RED or the step threshold marked the packet just accepted (see [`LinkDir::take_mark`]).
    marked: bool,
    /// Step marking (DCTCP; Alizadeh et al., SIGCOMM 2010): an ECN-capable arrival that finds
    /// at least this many packets or bytes waiting (the one in transmission aside) is marked.
    pub mark_threshold: Option<Limit>,
}

impl Fifo {
    /// Forget packets whose transmission ended by `now`.
    #[inline]
    fn purge(&mut self, now: Time) {
        while let Some(&(_, end, size)) = self.held.front() {
            if end > now {
                break;
            }
            self.held.pop_front();
            self.held_bytes -= u64::from(size);
            // Everything purged ended by `now`, which is not later than the latest offer.
            if self.gone > 0 {
                self.gone -= 1;
                self.gone_bytes -= u64::from(size);
            }
        }
    }
}

/// The scheduler and transmitter of a scheduled link direction.
#[derive(Debug)]
pub struct Scheduled {
    /// The discipline and the packets waiting in it.
    pub sched: Scheduler,
    /// The packet in transmission: (arrival at the queue, end of transmission, bytes). Set
    /// until the transmitter event at its end has run.
    tx: Option<(Time, Time, u32)>,
    /// Packets that had been queued and were removed without being sent (push-outs, CoDel
    /// drops), already counted in the statistics, for the caller to account and clear.
    pub removed: Vec<(Queued, Removal)>,
    /// The ABR source whose cells this transmitter spaces (the first cell link of an ABR
    /// circuit, ADR 0013).
    pub abr: Option<Box<Abr>>,
    /// A step marking marked the packet just accepted (see [`LinkDir::take_mark`]).
    marked: bool,
}

impl Scheduled {
    /// An idle transmitter in front of `sched`.
    pub fn new(sched: Scheduler) -> Self {
        Scheduled { sched, tx: None, removed: Vec::new(), abr: None, marked: false }
    }
}

/// Serialization time of `size` bytes at `rate`, carrying the sub-nanosecond remainder in
/// `carry`. `cache` keeps the last two (size, whole ns, remainder): data and ACK sizes repeat,
/// so the division is rarely needed.
#[inline]
fn serialization(cache: &mut [(u32, u64, u64); 2], carry: &mut u64, rate: Rate, size: u32) -> u64 {
    let slot = usize::from(cache[0].0 != size);
    let (cached, whole, rem) = cache[slot];
    if cached != size {
        let bits_ns = u64::from(size) * 8 * crate::units::NS_PER_SEC;
        // Keep the most recent size in slot 0.
        cache[1] = cache[0];
        cache[0] = (size, bits_ns / rate.0, bits_ns % rate.0);
        return rate.tx_time(u64::from(size), carry);
    }
    *carry += rem;
    if *carry >= rate.0 {
        *carry -= rate.0;
        whole + 1
    } else {
        whole
    }
}

/// Pipe entry of a packet that was lost when its direction went down: its arrival event still
/// pops, and finds nothing to deliver.
pub const GONE: PacketId = PacketId::MAX;

impl LinkDir {
    /// An idle link direction with a DropTail FIFO.
    pub fn new(from: NodeId, to: NodeId, params: LinkParams) -> Self {
        LinkDir {
            from,
            to,
            params,
            busy_until: 0,
            carry: 0,
            tx_cache: [(0, 0, 0); 2],
            exclusive: false,
            cells: false,
            pipe: Ring::default(),
            stats: QueueStats::default(),
            queue: Queue::Fifo(Fifo::default()),
            loss: None,
            loss_first: false,
            slow_enqueue: false,
            lost_ends: Ring::default(),
            lan: None,
            up: true,
            floor: 0,
        }
    }

    /// Whether the direction is scheduled (ADR 0004) rather than a FIFO.
    #[inline]
    pub fn is_scheduled(&self) -> bool {
        matches!(self.queue, Queue::Scheduled(_))
    }

    /// The scheduler and transmitter of a scheduled direction.
    pub fn scheduled(&self) -> Option<&Scheduled> {
        match &self.queue {
            Queue::Scheduled(s) => Some(s),
            Queue::Fifo(_) => None,
        }
    }

    /// The scheduler and transmitter of a scheduled direction, mutably.
    pub fn scheduled_mut(&mut self) -> Option<&mut Scheduled> {
        match &mut self.queue {
            Queue::Scheduled(s) => Some(s),
            Queue::Fifo(_) => None,
        }
    }

    /// A FIFO direction's admission policy.
    pub fn aqm(&self) -> Option<&Aqm> {
        match &self.queue {
            Queue::Fifo(f) => Some(&f.aqm),
            Queue::Scheduled(_) => None,
        }
    }

    /// A FIFO direction's RED, if it has one.
    pub fn red(&self) -> Option<&Red> {
        match self.aqm() {
            Some(Aqm::Red(r)) => Some(r),
            _ => None,
        }
    }

    /// Give a FIFO direction step marking at `k` (see [`Fifo::mark_threshold`]).
    pub fn set_mark_threshold(&mut self, k: Option<Limit>) {
        match &mut self.queue {
            Queue::Fifo(f) => f.mark_threshold = k,
            Queue::Scheduled(_) => panic!("a scheduled direction has no FIFO marking threshold"),
        }
    }

    /// Give a FIFO direction the admission policy `aqm`.
    pub fn set_aqm(&mut self, aqm: Aqm) {
        match &mut self.queue {
            Queue::Fifo(f) => f.aqm = aqm,
            Queue::Scheduled(_) => panic!("a scheduled direction has no FIFO admission policy"),
        }
    }

    /// Count the packets removed from a scheduled queue at `now` since index `from` of
    /// `removed` as drops (CoDel's as early drops) and close their occupancy.
    fn note_removed(&mut self, now: Time, from: usize) {
        let Queue::Scheduled(s) = &self.queue else { unreachable!("a scheduled link") };
        for &(q, why) in &s.removed[from..] {
            let st = &mut self.stats;
            st.drops += 1;
            st.drop_bytes += u64::from(q.meta.size);
            if why == Removal::Codel {
                st.early_drops += 1;
            }
            let sojourn = now - q.at;
            st.len_integral += u128::from(sojourn);
            st.bytes_integral += u128::from(sojourn * u64::from(q.meta.size));
        }
    }

    /// Scheduled direction: offer `q`, arriving now. On acceptance returns whether the
    /// transmitter is idle, so the caller must start it ([`LinkDir::sched_start`]); packets
    /// pushed out are in `sched.removed`.
    pub fn sched_enqueue(&mut self, now: Time, q: Queued) -> Result<bool, Refusal> {
        self.stats.arrivals += 1;
        self.stats.arrival_bytes += u64::from(q.meta.size);
        let Queue::Scheduled(s) = &mut self.queue else { unreachable!("a scheduled link") };
        let from = s.removed.len();
        let res = s.sched.enqueue(now, q, &mut s.removed);
        let idle = s.tx.is_none();
        let held = s.sched.len().0 + u32::from(!idle);
        s.marked = res == Ok(true);
        self.note_removed(now, from);
        match res {
            Ok(_) => {
                self.stats.max_len = self.stats.max_len.max(held);
                Ok(idle)
            }
            Err(r) => {
                self.stats.drops += 1;
                self.stats.drop_bytes += u64::from(q.meta.size);
                if r == Refusal::Early {
                    self.stats.early_drops += 1;
                }
                Err(r)
            }
        }
    }

    /// Scheduled direction whose transmitter frees at `now`: take the next packet from the
    /// discipline and start sending it. Returns it with the time it reaches the far node (its
    /// transmission ends `delay` earlier), or `None` when nothing waits.
    pub fn sched_start(&mut self, now: Time) -> Option<(Queued, Time)> {
        let Queue::Scheduled(s) = &mut self.queue else { unreachable!("a scheduled link") };
        s.tx = None;
        let from = s.removed.len();
        let next = s.sched.dequeue(now, &mut s.removed);
        self.note_removed(now, from);
        let q = next?;
        let size = q.meta.size;
        let tx = self.tx_time(size);
        // An ABR source's transmitter waits 1/ACR between cell starts; each cell still takes
        // only its wire time to leave.
        let Queue::Scheduled(s) = &mut self.queue else { unreachable!("a scheduled link") };
        let spacing = match &mut s.abr {
            Some(abr) => {
                if q.meta.flags & flags::RM != 0 {
                    abr.on_forward_rm(now);
                }
                abr.spacing().max(tx)
            }
            None => tx,
        };
        let end = now + spacing;
        s.tx = Some((q.at, end, size));
        self.busy_until = end;
        let st = &mut self.stats;
        st.busy += tx;
        let sojourn = end - q.at;
        st.len_integral += u128::from(sojourn);
        st.bytes_integral += u128::from(sojourn * u64::from(size));
        Some((q, (now + tx + self.params.delay).max(self.floor)))
    }

    /// Packets held by a scheduled direction at `now` (waiting or in transmission), and their
    /// bytes.
    fn sched_len_at(s: &Scheduled, now: Time) -> (u32, u64) {
        let (n, b) = s.sched.len();
        match s.tx {
            Some((_, end, size)) if end > now => (n + 1, b + u64::from(size)),
            _ => (n, b),
        }
    }

    /// The queue's capacity as configured (a scheduled direction's shared limit).
    pub fn limit(&self) -> Limit {
        self.scheduled().map_or(self.params.limit, |s| s.sched.total)
    }

    /// Make this direction scheduled by `sched` (ADR 0004).
    pub fn set_scheduler(&mut self, sched: Scheduler) {
        self.queue = Queue::Scheduled(Box::new(Scheduled::new(sched)));
    }

    /// Packet ids waiting in a scheduled direction's queues (for conservation checks).
    pub fn waiting_ids(&self) -> impl Iterator<Item = PacketId> + '_ {
        self.scheduled().into_iter().flat_map(|s| s.sched.iter().map(|q| q.id))
    }

    /// Serialization time of `size` bytes, carrying the sub-nanosecond remainder.
    #[inline]
    fn tx_time(&mut self, size: u32) -> u64 {
        serialization(&mut self.tx_cache, &mut self.carry, self.params.rate, size)
    }

    /// Offer a packet (`meta`) arriving at `at` (`now` or later, and not earlier than any
    /// previous offer) to this FIFO direction. On acceptance returns the time the packet
    /// reaches the far node; otherwise the packet is dropped, and the error says why. The
    /// caller then either puts the packet in this link's pipe ([`LinkDir::push_pipe`]) or hands
    /// it straight to an exclusive next link. RED may mark an ECN-capable packet instead of
    /// dropping it: the caller asks [`LinkDir::take_mark`] after an acceptance.
    #[inline(always)]
    pub fn enqueue(&mut self, now: Time, at: Time, meta: &Meta) -> Result<Time, Refusal> {
        let Queue::Fifo(f) = &mut self.queue else { unreachable!("a FIFO direction") };
        let size = meta.size;
        f.purge(now);
        self.stats.arrivals += 1;
        self.stats.arrival_bytes += u64::from(size);
        // Packets that will have left by `at` stay listed until `now` reaches their end, so
        // occupancy sampled in between stays right; they do not count against the limit.
        while let Some(&(_, end, sz)) = f.held.get(f.gone) {
            if end > at {
                break;
            }
            f.gone += 1;
            f.gone_bytes += u64::from(sz);
        }
        let (gone, gone_bytes) = (f.gone as u64, f.gone_bytes);
        if let Some(k) = f.mark_threshold {
            if meta.ect() {
                let (q, q_bytes) = match f.held.get(f.gone) {
                    Some(&(_, _, first)) => (f.held.len() - f.gone - 1, f.held_bytes - gone_bytes - u64::from(first)),
                    None => (0, 0),
                };
                f.marked = reaches(k, q as u64, q_bytes);
            }
        }
        let early = match &mut f.aqm {
            Aqm::DropTail => false,
            Aqm::Red(red) => {
                // RED sees the packets waiting behind the one in transmission at `at`.
                let (q, q_bytes, idle) = match f.held.get(f.gone) {
                    Some(&(_, _, first)) => {
                        (f.held.len() - f.gone - 1, f.held_bytes - gone_bytes - u64::from(first), None)
                    }
                    None => (0, 0, Some(self.busy_until)),
                };
                match red.verdict(at, size, q as u32, q_bytes, idle, meta.ect()) {
                    Verdict::Accept => false,
                    Verdict::Mark => {
                        f.marked = true;
                        false
                    }
                    Verdict::Drop => true,
                }
            }
            Aqm::Epd(epd) => epd.discards((f.held.len() as u64 - gone) as u32, meta),
        };
        if early {
            self.stats.drops += 1;
            self.stats.drop_bytes += u64::from(size);
            self.stats.early_drops += 1;
            return Err(Refusal::Early);
        }
        let full = match self.params.limit {
            Limit::Packets(n) => f.held.len() as u64 - gone >= u64::from(n),
            Limit::Bytes(b) => f.held_bytes - gone_bytes + u64::from(size) > b,
        };
        if full {
            match &mut f.aqm {
                Aqm::DropTail => {}
                Aqm::Red(red) => red.reset_count(),
                Aqm::Epd(epd) => epd.overflowed(meta),
            }
            f.marked = false;
            self.stats.drops += 1;
            self.stats.drop_bytes += u64::from(size);
            return Err(Refusal::Overflow);
        }
        let start = at.max(self.busy_until);
        let tx = serialization(&mut self.tx_cache, &mut self.carry, self.params.rate, size);
        let end = start + tx;
        self.busy_until = end;
        f.held.push_back((at, end, size));
        f.held_bytes += u64::from(size);
        let held = (f.held.len() as u64 - gone) as u32;
        let s = &mut self.stats;
        s.busy += tx;
        s.max_len = s.max_len.max(held);
        let sojourn = end - at;
        s.len_integral += u128::from(sojourn);
        s.bytes_integral += u128::from(sojourn * u64::from(size));
        Ok((end + self.params.delay).max(self.floor))
    }

    /// The transmitter cannot start before `t` (a LAN station: the channel is busy until then).
    #[inline]
    pub(crate) fn wait_for(&mut self, t: Time) {
        self.busy_until = self.busy_until.max(t);
    }

    /// End of transmission of the packet accepted last (on a LAN, at least the end of the
    /// channel's last transmission when this direction was last offered a packet).
    #[inline]
    pub fn last_end(&self) -> Time {
        self.busy_until
    }

    /// Change the rate for packets accepted from now on.
    pub fn set_rate(&mut self, rate: Rate) {
        self.params.rate = rate;
        self.tx_cache = [(0, 0, 0); 2];
        self.carry = 0;
    }

    /// Change the propagation delay for packets accepted from now on; they never arrive before
    /// a packet already in the pipe.
    pub fn set_delay(&mut self, delay: Time) {
        self.params.delay = delay;
        if let Some(&(t, _)) = self.pipe.back() {
            self.floor = self.floor.max(t);
        }
    }

    /// Take the direction down at `now`: every packet waiting, in transmission or propagating
    /// is lost. Returns the ids of the lost packets still in the pipe (the caller frees them);
    /// their pipe entries become [`GONE`] and arrive at the time the head was due, so the
    /// pending arrival event stays valid. Queue counters lose the work and occupancy that will
    /// no longer happen. Offers ahead of time (exclusive links) must not be in use.
    pub fn go_down(&mut self, now: Time) -> Vec<PacketId> {
        self.up = false;
        let mut lost_queued = Vec::new();
        // A FIFO's accepted packets, or nothing for a scheduler (whose packet in transmission is
        // already in the pipe).
        let mut held = Ring::default();
        match &mut self.queue {
            Queue::Fifo(f) => {
                f.purge(now);
                held = std::mem::take(&mut f.held);
                (f.held_bytes, f.gone, f.gone_bytes) = (0, 0, 0);
            }
            Queue::Scheduled(s) => {
                // Every waiting packet is lost; CoDel's drops while emptying stay in `removed`.
                let from = s.removed.len();
                while let Some(q) = s.sched.dequeue(now, &mut s.removed) {
                    lost_queued.push(q);
                }
                // The packet in transmission is in the pipe: its transmission stops now, and
                // the transmitter event still due at its old end finds the queue empty.
                if let Some((at, end, size)) = s.tx {
                    s.tx = Some((at, end.min(now), size));
                    let over = end.saturating_sub(now);
                    self.stats.len_integral -= u128::from(over);
                    self.stats.bytes_integral -= u128::from(over * u64::from(size));
                }
                self.note_removed(now, from);
                for q in &lost_queued {
                    let st = &mut self.stats;
                    st.drops += 1;
                    st.down_drops += 1;
                    st.drop_bytes += u64::from(q.meta.size);
                    st.len_integral += u128::from(now - q.at);
                    st.bytes_integral += u128::from((now - q.at) * u64::from(q.meta.size));
                }
            }
        }
        let waiting = held.len() as u64;
        let mut rest = 0;
        for &(_, end, size) in held.iter() {
            let over = end - now;
            self.stats.len_integral -= u128::from(over);
            self.stats.bytes_integral -= u128::from(over * u64::from(size));
            // Off a LAN the queue is served back to back from `now`; on one, other stations
            // interleave, so each packet loses at most its own transmission time.
            rest += match self.lan {
                None => 0,
                Some(_) => over.min(self.params.rate.tx_time(u64::from(size), &mut 0)),
            };
        }
        if self.lan.is_none() {
            rest = self.busy_until.saturating_sub(now);
        }
        self.stats.busy -= rest;
        // Packets the loss model had already discarded are now lost to the link going down.
        let lost_waiting = self.lost_ends.iter().filter(|&&e| e > now).count() as u64;
        self.lost_ends = Ring::default();
        self.stats.link_losses -= lost_waiting;
        self.stats.drops += waiting;
        self.stats.down_drops += waiting;
        let ids: Vec<PacketId> = self.pipe_ids().collect();
        self.stats.down_losses += ids.len() as u64 - (waiting - lost_waiting);
        if let Some(&(head, _)) = self.pipe.front() {
            let n = self.pipe.len();
            self.pipe = Ring::default();
            for _ in 0..n {
                self.pipe.push_back((head, GONE));
            }
            self.floor = self.floor.max(head);
        }
        self.busy_until = self.busy_until.min(now);
        let mut ids = ids;
        ids.extend(lost_queued.iter().map(|q| q.id));
        ids
    }

    /// Whether RED marked the ECN-capable packet [`LinkDir::enqueue`] just accepted (the caller
    /// sets its CE bit); kept out of the return value so the path of packets without ECN
    /// pays nothing.
    #[inline]
    pub fn take_mark(&mut self) -> bool {
        let marked = match &mut self.queue {
            Queue::Fifo(f) => std::mem::take(&mut f.marked),
            Queue::Scheduled(s) => std::mem::take(&mut s.marked),
        };
        self.stats.marks += u64::from(marked);
        marked
    }

    /// After [`LinkDir::enqueue`] accepted a packet that reaches the far node at `arrival`:
    /// whether the loss model discards it on the wire once transmitted. A lost packet keeps
    /// its queue slot and transmission time and is counted in `link_losses`; the caller does
    /// not put it in the pipe.
    #[inline(always)]
    pub fn lost_on_wire(&mut self, now: Time, arrival: Time) -> bool {
        if self.loss.is_none() {
            return false;
        }
        self.lose(now, arrival)
    }

    /// Whether the loss model acts on arrival, before the queue (callers driving a scheduled
    /// direction, or a FIFO outside a [`Network`](super::Network), ask
    /// [`LinkDir::lost_on_arrival`] first).
    #[inline]
    pub fn loss_first(&self) -> bool {
        self.loss_first
    }

    /// Place the loss model before the queue (`loss_position = "before_queue"`).
    pub fn set_loss_first(&mut self) {
        self.loss_first = true;
        self.slow_enqueue = true;
    }

    /// With a loss model placed before the queue (`loss_first`): whether the packet arriving
    /// at `now` is lost before it is queued; it is counted in `link_losses` and takes neither a
    /// queue slot nor transmission time.
    #[inline(never)]
    pub fn lost_on_arrival(&mut self, now: Time) -> bool {
        let lost = self.loss.as_mut().is_some_and(|m| m.lose(now));
        self.stats.link_losses += u64::from(lost);
        lost
    }

    /// [`LinkDir::lost_on_wire`] for a direction with a loss model (out of line: the fast
    /// path only tests for the model).
    #[inline(never)]
    fn lose(&mut self, now: Time, arrival: Time) -> bool {
        if self.loss_first {
            return false;
        }
        let Some(model) = self.loss.as_mut() else {
            return false;
        };
        let end = self.busy_until;
        debug_assert!(end + self.params.delay == arrival || self.floor >= arrival, "not the last accepted packet");
        if !model.lose(end) {
            return false;
        }
        while self.lost_ends.front().is_some_and(|&e| e <= now) {
            self.lost_ends.pop_front();
        }
        self.lost_ends.push_back(end);
        self.stats.link_losses += 1;
        true
    }

    /// Put packet `id` in the pipe, to reach the far node at `arrival`. Returns true when the
    /// pipe was empty, so the caller must schedule the arrival event.
    #[inline]
    pub fn push_pipe(&mut self, arrival: Time, id: PacketId) -> bool {
        debug_assert!(self.pipe.back().is_none_or(|&(t, _)| t <= arrival), "pipe out of order");
        self.pipe.push_back((arrival, id));
        self.pipe.len() == 1
    }

    /// Remove the packet at the head of the pipe (it has arrived) and return it with the
    /// arrival time of the next one, which the caller schedules.
    #[inline]
    pub fn pop_arrival(&mut self) -> (PacketId, Option<Time>) {
        // The engine schedules LinkArrival only for a non-empty pipe.
        let (_, id) = self.pipe.pop_front().expect("LinkArrival for an empty pipe");
        (id, self.pipe.front().map(|&(t, _)| t))
    }

    /// Packets held at `now` (waiting or in transmission), and their bytes. Packets offered
    /// ahead of time to an exclusive link count only once they have arrived.
    pub fn len_at(&mut self, now: Time) -> (u32, u64) {
        let f = match &mut self.queue {
            Queue::Scheduled(s) => return Self::sched_len_at(s, now),
            Queue::Fifo(f) => f,
        };
        f.purge(now);
        let mut n = f.held.len();
        let mut bytes = f.held_bytes;
        for &(at, _, size) in f.held.iter().rev() {
            if at <= now {
                break;
            }
            n -= 1;
            bytes -= u64::from(size);
        }
        (n as u32, bytes)
    }

    /// Packet ids still in the pipe (for conservation checks).
    pub fn pipe_ids(&self) -> impl Iterator<Item = PacketId> + '_ {
        self.pipe.iter().map(|&(_, id)| id).filter(|&id| id != GONE)
    }

    /// Counters clipped to a run that ended at `end`: work, occupancy and arrivals after
    /// `end` are removed. Returns (stats, packets that finished transmission by `end`).
    pub fn stats_at(&mut self, end: Time) -> (QueueStats, u64) {
        if let Queue::Scheduled(sch) = &self.queue {
            // Everything up to now happened by `end`; only the packets still held need
            // clipping: waiting ones count until `end`, the one in transmission stops there.
            let mut s = self.stats;
            let mut still_held = sch.sched.len().0 as u64;
            for q in sch.sched.iter() {
                let held = end - q.at;
                s.len_integral += u128::from(held);
                s.bytes_integral += u128::from(held * u64::from(q.meta.size));
            }
            if let Some((_, e, size)) = sch.tx {
                if e > end {
                    still_held += 1;
                    let over = e - end;
                    s.len_integral -= u128::from(over);
                    s.bytes_integral -= u128::from(over * u64::from(size));
                    s.busy -= over;
                }
            }
            s.link_losses -= self.lost_ends.iter().filter(|&&e| e > end).count() as u64;
            let departures = s.arrivals - s.drops - still_held;
            return (s, departures);
        }
        let Queue::Fifo(f) = &mut self.queue else { unreachable!("handled above") };
        f.purge(end);
        let f = &*f;
        let mut s = self.stats;
        let mut still_held = 0;
        for &(at, e, size) in f.held.iter() {
            if at > end {
                // Offered ahead of time to an exclusive link; it arrives after the run.
                s.arrivals -= 1;
                s.arrival_bytes -= u64::from(size);
                s.len_integral -= u128::from(e - at);
                s.bytes_integral -= u128::from((e - at) * u64::from(size));
                s.busy -= self.params.rate.tx_time(u64::from(size), &mut 0);
                continue;
            }
            still_held += 1;
            let over = e - end;
            s.len_integral -= u128::from(over);
            s.bytes_integral -= u128::from(over * u64::from(size));
        }
        // Transmission of packets that arrived by `end` may run past it.
        if self.lan.is_some() {
            // Other stations interleave: each packet runs past `end` by at most its own time.
            for &(_, e, size) in f.held.iter().filter(|h| h.0 <= end) {
                s.busy -= (e - end).min(self.params.rate.tx_time(u64::from(size), &mut 0));
            }
        } else {
            let busy_end = f.held.iter().filter(|h| h.0 <= end).map(|h| h.1).max().unwrap_or(0);
            if busy_end > end {
                s.busy -= busy_end - end;
            }
        }
        // Losses count once the lost packet's transmission has ended.
        s.link_losses -= self.lost_ends.iter().filter(|&&e| e > end).count() as u64;
        let departures = s.arrivals - s.drops - still_held;
        (s, departures)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A packet of `size` bytes as a queue sees it.
    fn m(size: u32) -> Meta {
        Meta { flow: 0, group: 0, size, ecn: 0, flags: 0 }
    }

    fn link(limit: Limit) -> LinkDir {
        // 8 Mbps: a 1000-byte packet takes exactly 1 ms.
        LinkDir::new(0, 1, LinkParams { rate: Rate(8_000_000), delay: 5_000_000, limit })
    }

    #[test]
    fn back_to_back_packets_serialize_then_propagate() {
        let mut l = link(Limit::Packets(10));
        assert_eq!(l.enqueue(0, 0, &m(1000)), Ok(6_000_000));
        assert!(l.push_pipe(6_000_000, 0));
        assert_eq!(l.enqueue(0, 0, &m(1000)), Ok(7_000_000));
        assert!(!l.push_pipe(7_000_000, 1));
        assert_eq!(l.enqueue(500_000, 500_000, &m(1000)), Ok(8_000_000));
        assert_eq!(l.len_at(1_500_000), (2, 2000));
        assert_eq!(l.pop_arrival(), (0, Some(7_000_000)));
    }

    #[test]
    fn packet_limit_counts_the_packet_in_transmission() {
        let mut l = link(Limit::Packets(2));
        assert!(l.enqueue(0, 0, &m(1000)).is_ok());
        assert!(l.enqueue(0, 0, &m(1000)).is_ok());
        assert!(l.enqueue(0, 0, &m(1000)).is_err());
        // After the first transmission ends there is room again.
        assert!(l.enqueue(1_000_000, 1_000_000, &m(1000)).is_ok());
        assert_eq!(l.stats.drops, 1);
        assert_eq!(l.stats.max_len, 2);
    }

    #[test]
    fn byte_limit_counts_bytes() {
        let mut l = link(Limit::Bytes(2500));
        assert!(l.enqueue(0, 0, &m(1000)).is_ok());
        assert!(l.enqueue(0, 0, &m(1000)).is_ok());
        assert!(l.enqueue(0, 0, &m(1000)).is_err());
        assert!(l.enqueue(0, 0, &m(500)).is_ok());
    }

    #[test]
    fn statistics_are_clipped_at_the_end_of_the_run() {
        let mut l = link(Limit::Packets(10));
        l.enqueue(0, 0, &m(1000)).unwrap();
        l.enqueue(0, 0, &m(1000)).unwrap();
        // At 1.5 ms: one packet done, one half transmitted.
        let (s, departed) = l.stats_at(1_500_000);
        assert_eq!(departed, 1);
        assert_eq!(s.busy, 1_500_000);
        // held: packet 0 for 1 ms, packet 1 for 1.5 ms (clipped)
        assert_eq!(s.len_integral, 2_500_000);
    }

    /// A direction scheduled by a one-queue DRR (a FIFO served at dequeue time).
    fn scheduled(limit: Limit) -> LinkDir {
        use crate::net::sched::{Discipline, Drr, Overflow, SubAqm, SubQueue};
        let mut l = link(Limit::Packets(10));
        let drr = Drr::new(vec![u32::MAX], u32::MAX, Overflow::DropArrival);
        let mut s = Scheduler::new(Discipline::Drr(drr), vec![SubQueue::new(None, SubAqm::None)], limit);
        s.bind_flows(&["f"], &[true], &[]).unwrap();
        l.set_scheduler(s);
        l
    }

    fn q(id: u32, at: Time) -> Queued {
        Queued { id, at, meta: m(1000) }
    }

    #[test]
    fn scheduled_statistics_are_clipped_at_the_end_of_the_run() {
        let mut l = scheduled(Limit::Packets(10));
        assert_eq!(l.sched_enqueue(0, q(0, 0)), Ok(true));
        assert_eq!(l.sched_start(0), Some((q(0, 0), 6_000_000)));
        assert_eq!(l.sched_enqueue(0, q(1, 0)), Ok(false));
        assert_eq!(l.len_at(500_000), (2, 2000));
        // The transmitter frees at 1 ms and sends packet 1 until 2 ms.
        assert_eq!(l.sched_start(1_000_000), Some((q(1, 0), 7_000_000)));
        assert_eq!(l.sched_enqueue(1_200_000, q(2, 1_200_000)), Ok(false));
        // At 1.5 ms: packet 0 done, packet 1 half sent, packet 2 waiting for 0.3 ms.
        let (s, departed) = l.stats_at(1_500_000);
        assert_eq!((s.arrivals, departed, s.drops), (3, 1, 0));
        assert_eq!(s.busy, 1_500_000);
        assert_eq!(s.len_integral, 1_000_000 + 1_500_000 + 300_000);
        assert_eq!(s.max_len, 2);
        assert_eq!(l.len_at(1_500_000), (2, 2000));
        assert_eq!(l.limit(), Limit::Packets(10));
    }

    #[test]
    fn scheduled_limit_counts_waiting_packets_only() {
        let mut l = scheduled(Limit::Packets(1));
        assert_eq!(l.sched_enqueue(0, q(0, 0)), Ok(true));
        l.sched_start(0);
        assert_eq!(l.sched_enqueue(0, q(1, 0)), Ok(false));
        assert_eq!(l.sched_enqueue(0, q(2, 0)), Err(Refusal::Overflow));
        let (s, departed) = l.stats_at(10_000_000);
        assert_eq!((s.arrivals, s.drops, departed), (3, 1, 1));
    }

    #[test]
    fn offers_ahead_of_time_count_only_once_arrived() {
        let mut l = link(Limit::Packets(10));
        l.enqueue(0, 0, &m(1000)).unwrap();
        l.enqueue(0, 3_000_000, &m(1000)).unwrap(); // offered early, arrives at 3 ms
        assert_eq!(l.len_at(500_000), (1, 1000));
        let (s, departed) = l.stats_at(2_000_000);
        assert_eq!((s.arrivals, departed, s.busy), (1, 1, 1_000_000));
    }

    #[test]
    fn red_sees_the_packets_waiting_and_the_idle_time() {
        use crate::net::red::{Red, RedParams};
        let params = RedParams {
            min_th: 1.0,
            max_th: 2.0,
            max_p: 0.1,
            w_q: 0.5,
            gentle: false,
            wait: false,
            bytes: false,
            ecn: false,
            mark_p: None,
            mean_pktsize: 1000,
            ptc: 1000.0,
            adaptive: None,
        };
        let mut l = link(Limit::Packets(10));
        l.set_aqm(Aqm::Red(Box::new(Red::new(params, crate::engine::stream(1, "test")))));
        let avg = |l: &LinkDir| l.red().expect("RED").avg_pkts();
        // Waiting queues seen: 0 (idle link), 0 (one in transmission), 1, 2, 2.
        assert!(l.enqueue(0, 0, &m(1000)).is_ok());
        assert!(l.enqueue(0, 0, &m(1000)).is_ok());
        assert!(l.enqueue(0, 0, &m(1000)).is_ok()); // avg 0.5: below min_th
        assert!(l.enqueue(0, 0, &m(1000)).is_ok()); // avg 1.25: first arrival above min_th
        assert_eq!(avg(&l), 1.25);
        assert!(l.enqueue(0, 0, &m(1000)).is_err()); // q = 3, avg 2.125 >= max_th: early drop
        assert_eq!((l.stats.drops, l.stats.early_drops), (1, 1));
        // Four packets end at 4 ms; an arrival at 11 ms finds the link idle for 7 packet
        // times: avg ← 0.5^(7+1) · avg.
        let before = avg(&l);
        assert!(l.enqueue(11_000_000, 11_000_000, &m(1000)).is_ok());
        assert!((avg(&l) - before * 0.5f64.powi(8)).abs() < 1e-12);
    }

    #[test]
    fn going_down_loses_the_queue_and_the_pipe_and_keeps_the_order() {
        let mut l = link(Limit::Packets(10));
        for id in 0..3 {
            let arrival = l.enqueue(0, 0, &m(1000)).unwrap();
            l.push_pipe(arrival, id);
        }
        // At 1.5 ms: packet 0 is propagating, 1 in transmission, 2 waiting.
        assert_eq!(l.go_down(1_500_000), vec![0, 1, 2]);
        assert_eq!((l.stats.drops, l.stats.down_drops, l.stats.down_losses), (2, 2, 1));
        assert_eq!(l.stats.busy, 1_500_000);
        assert_eq!(l.len_at(1_500_000), (0, 0));
        assert_eq!(l.pipe_ids().count(), 0);
        // The three lost entries arrive at the head's time, 6 ms, and deliver nothing.
        assert_eq!(l.pop_arrival(), (GONE, Some(6_000_000)));
        l.up = true;
        // Accepted at 2 ms, it would arrive at 8 ms: after the lost entries, fine.
        assert_eq!(l.enqueue(2_000_000, 2_000_000, &m(1000)), Ok(8_000_000));
        let (s, departed) = l.stats_at(10_000_000);
        assert_eq!((s.arrivals, s.drops, departed), (4, 2, 2));
    }

    #[test]
    fn a_shorter_delay_never_lets_a_packet_overtake() {
        let mut l = link(Limit::Packets(10));
        let first = l.enqueue(0, 0, &m(1000)).unwrap();
        l.push_pipe(first, 0);
        l.set_delay(1_000_000);
        l.set_rate(Rate(16_000_000));
        // 0.5 ms of transmission after the first ends at 1 ms, then 1 ms: 2.5 ms, held back
        // to the first packet's arrival at 6 ms.
        assert_eq!(l.enqueue(0, 0, &m(1000)), Ok(first));
        assert_eq!(l.last_end(), 1_500_000);
        assert_eq!(l.enqueue(5_000_000, 5_000_000, &m(1000)), Ok(6_500_000));
    }

    #[test]
    fn cached_serialization_time_keeps_the_remainder() {
        let mut l = LinkDir::new(0, 1, LinkParams { rate: Rate(7_000_000), delay: 0, limit: Limit::Packets(100) });
        let mut reference = 0;
        let mut expected = 0;
        for i in 0..20u64 {
            let size = if i % 3 == 0 { 40 } else { 1500 };
            expected += Rate(7_000_000).tx_time(size, &mut reference);
            l.enqueue(0, 0, &m(size as u32)).unwrap();
        }
        assert_eq!(l.busy_until, expected);
    }
}
