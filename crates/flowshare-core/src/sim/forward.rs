//! Forwarding: packets leave an endpoint, cross link directions (handed on at once across
//! links exclusive to their route, ADR 0003; through a scheduler's transmitter on scheduled
//! directions, ADR 0004), are dropped, lost or delivered to the endpoint at the far end.

use super::{Simulation, STRANDED};
use crate::agent::{receiver, Io};
use crate::engine::Event;
use crate::net::sched::Queued;
use crate::net::{LinkId, Network, Refusal};
use crate::packet::{ecn, flags, Dir, Kind, Meta, Packet};
use crate::trace::{EventKind, Reason, Tracer};
use crate::units::Time;

impl Simulation {
    /// Put the packets an endpoint of connection `c` produced on the network.
    #[inline]
    pub(super) fn flush(&mut self, c: u32) {
        let jittered = self.jitter[c as usize].is_some();
        for i in 0..self.out.len() {
            let p = self.out[i];
            if matches!(p.kind, Kind::Data | Kind::TfrcData) && !p.retx() && self.forced_drop(c, p.seq) {
                self.counters[c as usize].data_dropped += 1;
                if self.trace.is_some() {
                    self.trace_forced_drop(i);
                }
                continue;
            }
            let id = self.arena.alloc(p);
            self.conns[c as usize].in_network += 1;
            if jittered && p.kind == Kind::Data {
                if let Some(j) = &mut self.jitter[c as usize] {
                    if j.held.is_empty() {
                        self.events.push(self.now + j.delay(), Event::Release(c));
                    }
                    j.held.push_back(id);
                    continue;
                }
            }
            self.forward(id, self.now);
        }
        self.out.clear();
    }

    /// Whether the first transmission of segment `seq` of connection `c` is to be lost.
    /// First transmissions go out in increasing order, so one cursor per connection suffices.
    #[inline]
    pub(super) fn forced_drop(&mut self, c: u32, seq: u64) -> bool {
        // Only the flows a scenario lists have crafted drops.
        let Some(spec) = self.specs.get(c as usize) else { return false };
        let drops = &spec.drop_segments;
        let cursor = &mut self.counters[c as usize].next_forced_drop;
        while *cursor < drops.len() && drops[*cursor] < seq {
            *cursor += 1;
        }
        if *cursor < drops.len() && drops[*cursor] == seq {
            *cursor += 1;
            return true;
        }
        false
    }

    /// Offer packet `id` to the link at its current hop, arriving there at `at`. While the
    /// next link is exclusive to this route the packet is handed on at once, at the time it
    /// will get there; it waits in the pipe of the last link reached, whose head has an event.
    #[inline]
    pub(super) fn forward(&mut self, id: u32, at: Time) {
        let conn = self.arena.get(id).conn;
        if self.conns[conn as usize].cells {
            return self.forward_cells(id, at);
        }
        self.forward_on::<false>(id, at);
    }

    /// [`Simulation::forward`] for a connection whose route crosses cell links (ADR 0013).
    #[inline(never)]
    fn forward_cells(&mut self, id: u32, at: Time) {
        self.forward_on::<true>(id, at);
    }

    /// The forwarding loop; with `CELLS`, a packet entering a cell link becomes cells and a
    /// cell leaving one goes back into its frame.
    #[inline(always)]
    fn forward_on<const CELLS: bool>(&mut self, id: u32, mut at: Time) {
        // What forwarding and the queues need; the arena copy is updated where it must be.
        let p = self.arena.get(id);
        let (conn, dir, mut hop) = (p.conn, p.dir, p.hop);
        let cell = CELLS && p.kind == Kind::Cell;
        let c = &self.conns[conn as usize];
        let meta = Meta { flow: conn, group: c.group, size: p.size, ecn: p.ecn, flags: p.flags };
        let route = &*c.paths[dir as usize];
        loop {
            let Some(&link) = route.get(hop as usize) else {
                // Only a route emptied by a link change gets here (at hop 0).
                let p = *self.arena.get(id);
                self.drop_no_route(id, p);
                return;
            };
            if CELLS && self.net.links[link as usize].cells != cell {
                if !cell {
                    return self.segment(id, hop, at);
                }
                // The cell leaves the cell network here; its frame goes on if it is whole.
                if meta.flags & flags::RM != 0 {
                    return self.rm_cell_out(id, at);
                }
                if let Some(frame) = self.reassemble(id) {
                    self.arena.get_mut(frame).hop = hop;
                    self.forward(frame, at);
                }
                return;
            }
            if self.net.links[link as usize].is_scheduled() {
                // Never exclusive, so `at` is now.
                self.arena.get_mut(id).hop = hop;
                self.enqueue_scheduled(id, meta, link);
                return;
            }
            let arrival = match self.net.enqueue(link, self.now, at, &meta) {
                Ok(arrival) => {
                    if meta.ecn != 0 && self.net.links[link as usize].take_mark() {
                        self.arena.get_mut(id).ecn |= ecn::CE;
                    }
                    arrival
                }
                Err(refusal) => {
                    self.arena.get_mut(id).hop = hop;
                    self.refused(id, link, at, refusal);
                    return;
                }
            };
            if self.trace.is_some() {
                let mut p = *self.arena.get(id);
                p.hop = hop;
                trace_link(&mut self.trace, &self.net, at, Ok(arrival), &p, link);
            }
            if self.net.links[link as usize].lost_on_wire(self.now, arrival) {
                self.arena.get_mut(id).hop = hop;
                self.lost_on_link(id, link);
                return;
            }
            let next = hop as usize + 1;
            if next < route.len() && self.net.links[route[next] as usize].exclusive {
                hop += 1;
                at = arrival;
                continue;
            }
            let mut id = id;
            if CELLS && cell && next == route.len() {
                // A route that ends in the cell network: the destination reassembles, and the
                // frame, if whole, arrives with its last cell. An RM cell arrives by itself.
                if meta.flags & flags::RM != 0 {
                    self.events.push(arrival, Event::RmCell(id));
                    return;
                }
                match self.reassemble(id) {
                    Some(frame) => id = frame,
                    None => return,
                }
            }
            self.arena.get_mut(id).hop = hop;
            if self.net.links[link as usize].push_pipe(arrival, id) {
                self.events.push(arrival, Event::LinkArrival(link));
            }
            return;
        }
    }

    /// Offer packet `id` to scheduled link direction `link` now (ADR 0004).
    #[inline(never)]
    pub(super) fn enqueue_scheduled(&mut self, id: u32, meta: Meta, link: LinkId) {
        if self.net.links[link as usize].loss_first && self.net.links[link as usize].lost_on_arrival(self.now) {
            return self.refused(id, link, self.now, Refusal::Lost);
        }
        let now = self.now;
        let p = *self.arena.get(id);
        let q = Queued { id, at: now, meta };
        match self.net.links[link as usize].sched_enqueue(now, q) {
            Err(refusal) => {
                if self.trace.is_some() {
                    trace_link(&mut self.trace, &self.net, now, Err(refusal), &p, link);
                }
                self.count_drop(&p);
                self.free_packet(id, p.conn);
            }
            Ok(idle) => {
                if meta.ecn != 0 && self.net.links[link as usize].take_mark() {
                    self.arena.get_mut(id).ecn |= ecn::CE;
                }
                if self.trace.is_some() {
                    trace_sched(&mut self.trace, now, None, &p, link);
                }
                self.drain_removed(link);
                if idle {
                    self.start_tx(link);
                }
            }
        }
    }

    /// Count a dropped packet against its connection. A lost cell is counted by its queue,
    /// and its frame when it is discarded at reassembly.
    #[inline]
    pub(super) fn count_drop(&mut self, p: &Packet) {
        if p.kind == Kind::Cell {
            return;
        }
        let c = &mut self.counters[p.conn as usize];
        match p.dir {
            Dir::Forward => c.data_dropped += 1,
            Dir::Reverse => c.acks_dropped += 1,
        }
    }

    /// Account and free the packets scheduled link `link` removed from its queues.
    pub(super) fn drain_removed(&mut self, link: LinkId) {
        let n = self.net.links[link as usize].scheduled().map_or(0, |s| s.removed.len());
        for i in 0..n {
            let (q, why) = self.net.links[link as usize].scheduled().expect("scheduled").removed[i];
            let p = *self.arena.get(q.id);
            if let Some(t) = &mut self.trace {
                t.dropped(self.now, &p, link, why.into());
            }
            self.count_drop(&p);
            self.free_packet(q.id, p.conn);
        }
        if n > 0 {
            self.net.links[link as usize].scheduled_mut().expect("scheduled").removed.clear();
        }
    }

    /// The transmitter of scheduled link `link` is free now: send the next packet, if any,
    /// and schedule the transmitter's next event at the end of its transmission.
    pub(super) fn start_tx(&mut self, link: LinkId) {
        let l = &mut self.net.links[link as usize];
        let started = l.sched_start(self.now);
        let end = l.last_end();
        self.drain_removed(link);
        let Some((q, arrival)) = started else {
            return;
        };
        self.events.push(end, Event::LinkTransmit(link));
        let mut p = *self.arena.get(q.id);
        if q.meta.ecn & !p.ecn & ecn::CE != 0 {
            // Marked as it leaves (a class's `mark = "departure"`).
            p.ecn |= ecn::CE;
            self.arena.get_mut(q.id).ecn = p.ecn;
            self.net.links[link as usize].stats.marks += 1;
        }
        if self.trace.is_some() {
            trace_sched(&mut self.trace, self.now, Some(end), &p, link);
        }
        if self.net.links[link as usize].lost_on_wire(self.now, arrival) {
            self.lost_on_link(q.id, link);
            return;
        }
        let mut id = q.id;
        if p.kind == Kind::Cell && usize::from(p.hop) + 1 == self.conns[p.conn as usize].paths[p.dir as usize].len() {
            // The last cell link of a route that ends in the cell network (see `forward_on`).
            if p.flags & flags::RM != 0 {
                self.events.push(arrival, Event::RmCell(id));
                return;
            }
            match self.reassemble(id) {
                Some(frame) => {
                    self.arena.get_mut(frame).hop = p.hop;
                    id = frame;
                }
                None => return,
            }
        }
        if self.net.links[link as usize].push_pipe(arrival, id) {
            self.events.push(arrival, Event::LinkArrival(link));
        }
    }

    /// Packet `id`, offered to `link` at `at`, was refused by its queue.
    #[cold]
    #[inline(never)]
    pub(super) fn refused(&mut self, id: u32, link: LinkId, at: Time, refusal: Refusal) {
        let p = *self.arena.get(id);
        if self.trace.is_some() {
            trace_link(&mut self.trace, &self.net, at, Err(refusal), &p, link);
        }
        if refusal == Refusal::Lost {
            return self.count_link_loss(id, &p);
        }
        self.count_drop(&p);
        self.free_packet(id, p.conn);
    }

    /// Packet `id`, just transmitted on `link`, was discarded by the link's loss model.
    #[cold]
    #[inline(never)]
    pub(super) fn lost_on_link(&mut self, id: u32, link: LinkId) {
        let p = *self.arena.get(id);
        if self.trace.is_some() {
            trace_link_loss(&mut self.trace, &self.net, &p, link);
        }
        self.count_link_loss(id, &p);
    }

    /// Count packet `p` (`id`) as lost by a link's loss model and free it (a cell is counted
    /// by its link, and its frame at reassembly).
    fn count_link_loss(&mut self, id: u32, p: &Packet) {
        if p.kind != Kind::Cell {
            let c = &mut self.counters[p.conn as usize];
            match p.dir {
                Dir::Forward => c.data_link_lost += 1,
                Dir::Reverse => c.acks_link_lost += 1,
            }
        }
        self.free_packet(id, p.conn);
    }

    /// Packet `id` reached the far end of a link.
    pub(super) fn on_arrival(&mut self, id: u32) {
        let p = self.arena.get_mut(id);
        p.hop += 1;
        let (conn, dir, hop) = (p.conn, p.dir, p.hop);
        if (hop as usize) < self.conns[conn as usize].paths[dir as usize].len() {
            self.forward(id, self.now);
            return;
        }
        let p = *self.arena.get(id);
        if p.hop == STRANDED + 1 {
            self.drop_no_route(id, p);
            return;
        }
        let c = p.conn as usize;
        if p.dir == Dir::Forward {
            self.counters[c].data_received += 1;
            if c < self.n_static && p.kind != Kind::Syn {
                self.delays[c].record(p.ts, self.now);
            }
        }
        let ep = receiver(p.conn, p.dir);
        let mut io = Io { now: self.now, out: &mut self.out, cc: &mut self.cc };
        let wake = self.agents[ep as usize].on_packet(&p, &mut io);
        if self.trace.is_some() {
            let kind = match p.dir {
                Dir::Forward => EventKind::Receive,
                Dir::Reverse => EventKind::Ack,
            };
            self.trace_endpoint(kind, &p, Reason::None);
        }
        // Freed after the delivery: the slot of a transfer is given back, if need be, once its
        // endpoint has run (in `after_agent`).
        self.arena.free(id);
        self.conns[c].in_network -= 1;
        self.after_agent(ep, wake);
    }

    /// Packet `id` of connection `conn` leaves the network (delivered, dropped or lost).
    #[inline]
    pub(super) fn free_packet(&mut self, id: u32, conn: u32) {
        self.arena.free(id);
        let c = &mut self.conns[conn as usize];
        c.in_network -= 1;
        if c.in_network == 0 && conn as usize >= self.n_static {
            self.after_last_packet(conn);
        }
    }

    /// Drop packet `id` for want of a route: a sender's packet at its first hop, or a packet
    /// that reached a node off its flow's new route.
    #[cold]
    #[inline(never)]
    pub(super) fn drop_no_route(&mut self, id: u32, p: Packet) {
        self.count_route_drop(&p);
        self.free_packet(id, p.conn);
        if self.trace.is_some() {
            if p.hop == 0 {
                self.trace_endpoint(EventKind::Send, &p, Reason::None);
            }
            self.trace_endpoint(EventKind::Drop, &p, Reason::NoRoute);
        }
    }

    /// Trace the sending and crafted loss of `self.out[i]`.
    #[cold]
    #[inline(never)]
    pub(super) fn trace_forced_drop(&mut self, i: usize) {
        let p = self.out[i];
        self.trace_endpoint(EventKind::Send, &p, Reason::None);
        self.trace_endpoint(EventKind::Drop, &p, Reason::Forced);
    }

    /// Trace an event at an endpoint (kept out of line: the untraced path only tests `trace`).
    #[cold]
    #[inline(never)]
    pub(super) fn trace_endpoint(&mut self, kind: EventKind, p: &Packet, reason: Reason) {
        if let Some(t) = &mut self.trace {
            t.endpoint(self.now, kind, p, reason);
        }
    }
}

/// Trace packet `p`, transmitted on `link` and then discarded by its loss model when its
/// transmission ends.
#[cold]
#[inline(never)]
fn trace_link_loss(trace: &mut Option<Box<Tracer>>, net: &Network, p: &Packet, link: LinkId) {
    if let Some(t) = trace {
        t.dropped(net.links[link as usize].last_end(), p, link, Reason::LinkLoss);
    }
}

/// Trace packet `p` at scheduled link `link`: put in the queue at `at` (`done` = `None`), or
/// starting its transmission, which ends at `done`.
#[cold]
#[inline(never)]
fn trace_sched(trace: &mut Option<Box<Tracer>>, at: Time, done: Option<Time>, p: &Packet, link: LinkId) {
    if let Some(t) = trace {
        match done {
            None => {
                if p.hop == 0 && p.kind != Kind::Cell {
                    t.endpoint(at, EventKind::Send, p, Reason::None);
                }
                t.enqueued(at, p, link);
            }
            Some(done) => t.transmitted(done, p, link),
        }
    }
}

/// Trace packet `p` offered to `link` at `at`: accepted, reaching the far node at `arrival`,
/// or refused; at the first hop the packet has just been sent. Out of line: the
/// untraced path only tests `trace`.
#[cold]
#[inline(never)]
fn trace_link(
    trace: &mut Option<Box<Tracer>>,
    net: &Network,
    at: Time,
    arrival: Result<Time, Refusal>,
    p: &Packet,
    link: LinkId,
) {
    if let Some(t) = trace {
        // A cell at the first hop belongs to a frame whose sending `segment` traced.
        if p.hop == 0 && p.kind != Kind::Cell {
            t.endpoint(at, EventKind::Send, p, Reason::None);
        }
        match arrival {
            Ok(_) => t.accepted(at, net.links[link as usize].last_end(), p, link),
            // A loss model before the queue loses the packet on arrival, at `at`.
            Err(refusal) => t.dropped(at, p, link, refusal.into()),
        }
    }
}
