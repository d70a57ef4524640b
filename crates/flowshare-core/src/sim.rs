//! The simulation: owns the world and runs the event loop.

use crate::agent::{endpoint, receiver, Agent, EndpointId, Io, Side};
use crate::cc::host::GroupId;
use crate::cc::{CcHost, GroupControl, MemberId};
use crate::engine::{stream, uniform_delay, Event, EventQueue, Stream, WakeTag};
use crate::net::link::GONE;
use crate::net::sched::{Queued, Removal};
use crate::net::{LinkId, Network, NodeId, Refusal, RouteId, RouteTable};
use crate::packet::{ecn, Arena, Dir, Kind, Meta, Packet, PacketId};
use crate::results::{fnv1a, Column, RunResults, Summary, Table};
use crate::scenario::{ConnSpec, LinkChange, Scenario};
use crate::tcp::{Controller, Sender, SenderStats, Sink};
use crate::trace::{EventKind, FlowWire, Reason, Tracer};
use crate::traffic::{UdpSender, UdpSink};
use crate::units::{secs, Time};
use crate::ConfigError;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

/// Per-connection packet accounting done by the network (not by the endpoints).
#[derive(Clone, Copy, Debug, Default)]
struct ConnCounters {
    data_dropped: u64,
    acks_dropped: u64,
    data_received: u64,
    /// Data packets and ACKs lost by link loss models (not queue drops).
    data_link_lost: u64,
    acks_link_lost: u64,
    /// Of the drops, those caused by a link going down or by a missing route.
    data_route_dropped: u64,
    acks_route_dropped: u64,
    /// Index of the next entry of the connection's `drop_segments` to apply.
    next_forced_drop: usize,
    last_sent_bytes: u64,
    last_delivered_bytes: u64,
}

/// What forwarding needs of a connection, kept small and together.
#[derive(Clone, Debug)]
struct Conn {
    /// Links of its forward and reverse routes, indexed by [`Dir`] (shared with every
    /// connection between the same end nodes).
    paths: [Arc<[LinkId]>; 2],
    /// Its flow group, which queues see.
    group: u32,
    /// Its routes in the route table, to refresh `paths` when routes change.
    routes: [RouteId; 2],
}

/// Sampled time series, column by column.
#[derive(Debug, Default)]
struct Series {
    f_time: Vec<f64>,
    f_flow: Vec<i64>,
    f_cwnd: Vec<f64>,
    f_ssthresh: Vec<f64>,
    f_srtt: Vec<f64>,
    f_send_rate: Vec<f64>,
    f_goodput: Vec<f64>,
    /// One column per algorithm metric (`CongestionControl::metrics`), in order of first
    /// appearance; NaN in rows whose algorithm does not report it.
    f_algo: Vec<(&'static str, Vec<f64>)>,
    q_time: Vec<f64>,
    q_queue: Vec<i64>,
    q_len: Vec<i64>,
    q_bytes: Vec<i64>,
    /// RED's average (packets); NaN for other queues.
    q_red_avg: Vec<f64>,
}

/// A running simulation of one scenario.
pub struct Simulation {
    now: Time,
    end: Time,
    seed: u64,
    scenario_hash: String,
    events: EventQueue,
    arena: Arena,
    net: Network,
    specs: Vec<ConnSpec>,
    /// The routes connections use, shared between connections with the same end nodes.
    routes: RouteTable,
    /// Per connection, what forwarding needs.
    conns: Vec<Conn>,
    /// Every connection's two endpoints ([`crate::agent::endpoint`]).
    agents: Vec<Agent>,
    /// Per endpoint, its wake event in the queue.
    wakes: Vec<Wake>,
    /// Congestion state and group controllers of every TCP sender.
    cc: CcHost,
    /// Per congestion-control member, the endpoint of its sender.
    owner: Vec<EndpointId>,
    /// Members a controller asked to send, and group timers to schedule (reused buffers).
    clocked: Vec<MemberId>,
    timers: Vec<(Time, GroupId, u16)>,
    counters: Vec<ConnCounters>,
    out: Vec<Packet>,
    sample_interval: Time,
    series: Series,
    /// Some queue is RED: the queue tables get RED's columns.
    any_red: bool,
    wall_s: f64,
    /// Event trace and pcap captures; `None` unless the scenario has a `[trace]` section.
    trace: Option<Box<Tracer>>,
    /// The scenario's link changes, applied by `Event::LinkChange`; when there are any, no
    /// link is exclusive (ADR 0005) and the tables get the route-drop columns.
    changes: Vec<LinkChange>,
    /// Per connection, the send jitter of its TCP sender, if it has one.
    jitter: Vec<Option<Box<SendJitter>>>,
}

/// The wake event of an endpoint.
#[derive(Clone, Copy, Debug, Default)]
struct Wake {
    /// Time of its event in the queue, if any. Re-armed lazily: a later deadline keeps the
    /// earlier event, which finds nothing due and re-arms.
    entry: Option<Time>,
    /// Generation its events carry; bumped when the endpoint slot is reused, so a wake-up of
    /// an earlier occupant is ignored.
    gen: u16,
}

/// ns-2's `overhead_`: a TCP sender's data segments leave one at a time, each a random time
/// uniform in [0, `max`] after the previous one left (or after it was produced, if later).
struct SendJitter {
    max: Time,
    rng: Stream,
    /// Segments produced and not yet released, oldest first.
    held: VecDeque<PacketId>,
}

impl SendJitter {
    fn delay(&mut self) -> Time {
        uniform_delay(&mut self.rng, self.max)
    }
}

/// Hop of a packet that is to be dropped when it reaches the next node: after a route change
/// that node is not on its flow's route.
const STRANDED: u16 = u16::MAX - 1;

impl Simulation {
    /// Build a simulation from a validated scenario.
    pub fn new(scenario: &Scenario) -> Result<Self, ConfigError> {
        let built = scenario.build()?;
        let end = scenario.simulation.duration.0;
        let mut built = built;
        let mut users = vec![0u32; built.net.links.len()];
        for c in &built.conns {
            for &l in c.routes.iter().flat_map(|&r| built.routes.links(r)) {
                users[l as usize] += 1;
            }
        }
        // Changes move packets between routes and flush pipes, which needs every packet in the
        // pipe of the link it is on; LAN directions need their offers in time order.
        let fixed = built.changes.is_empty();
        for (l, n) in built.net.links.iter_mut().zip(users) {
            // A scheduled direction cannot be offered packets ahead of time (ADR 0004).
            l.exclusive = n == 1 && fixed && l.lan.is_none() && !l.is_scheduled();
        }
        let mut events = EventQueue::new();
        // Pushed first: a change applies before anything else scheduled at the same time.
        for (i, c) in built.changes.iter().enumerate() {
            events.push(c.at, Event::LinkChange(i as u32));
        }
        let mut agents = Vec::with_capacity(2 * built.conns.len());
        let mut jitter = Vec::with_capacity(built.conns.len());
        let seed = scenario.simulation.seed;
        for (i, c) in built.conns.iter().enumerate() {
            let i = i as u32;
            match &c.source {
                Some(src) => {
                    let stop = c.stop.unwrap_or(Time::MAX).min(end.saturating_add(1));
                    agents.push(Agent::UdpSource(Box::new(UdpSender::new(i, src, c.start, stop, seed, &c.key))));
                    agents.push(Agent::UdpSink(UdpSink::new(src.header)));
                }
                None => {
                    let mss = u64::from(c.tcp.mss);
                    let (total, last) = match c.size {
                        Some(bytes) => (Some(bytes.div_ceil(mss)), (bytes - (bytes.div_ceil(mss) - 1) * mss) as u32),
                        None => (None, c.tcp.mss),
                    };
                    let ctl = Controller::Solo(c.cc.build_solo());
                    agents.push(Agent::TcpSender(Box::new(Sender::new(i, c.tcp, total, last, ctl))));
                    agents.push(Agent::TcpSink(Sink::new(i, &c.tcp, total, last)));
                }
            }
            jitter.push((c.source.is_none() && c.tcp.send_jitter > 0).then(|| {
                let rng = stream(seed, &format!("{}/send_jitter", c.key));
                Box::new(SendJitter { max: c.tcp.send_jitter, rng, held: VecDeque::new() })
            }));
            if c.start <= end {
                events.push(c.start, Event::Start(i));
            }
            if let Some(stop) = c.stop {
                if stop <= end {
                    events.push(stop, Event::Stop(i));
                }
            }
        }
        let trace = match &scenario.trace {
            Some(cfg) => {
                let spec = cfg.resolve(&built.net, built.conns.len(), scenario.bottleneck_link(), end)?;
                let wire = built
                    .conns
                    .iter()
                    .map(|c| match &c.source {
                        Some(s) => FlowWire { mss: s.payload, header: s.header, size: None },
                        None => FlowWire { mss: c.tcp.mss, header: c.tcp.header, size: c.size },
                    })
                    .collect();
                Some(Box::new(Tracer::new(spec, built.net.links.len(), wire, end)))
            }
            None => None,
        };
        let sample_interval = scenario.simulation.sample_interval.0;
        if sample_interval > 0 && sample_interval <= end {
            events.push(sample_interval, Event::Sample);
        }
        let any_red = built.net.links.iter().any(|l| l.red().is_some());
        Ok(Simulation {
            now: 0,
            end,
            seed: scenario.simulation.seed,
            scenario_hash: fnv1a(&scenario.to_json()),
            events,
            arena: Arena::new(),
            counters: vec![ConnCounters::default(); built.conns.len()],
            conns: built
                .conns
                .iter()
                .map(|c| Conn { paths: c.routes.map(|r| built.routes.shared(r)), group: c.group, routes: c.routes })
                .collect(),
            net: built.net,
            specs: built.conns,
            routes: built.routes,
            wakes: vec![Wake::default(); agents.len()],
            agents,
            cc: CcHost::new(),
            owner: Vec::new(),
            clocked: Vec::new(),
            timers: Vec::new(),
            out: Vec::with_capacity(64),
            sample_interval,
            series: Series::default(),
            any_red,
            wall_s: 0.0,
            trace,
            changes: built.changes,
            jitter,
        })
    }

    /// Write a pcap file for each link direction the scenario's `trace.pcap` selects into
    /// `dir` (which must exist) and return their paths; call before running. Without such a
    /// selection nothing is written.
    pub fn set_pcap_dir(&mut self, dir: &std::path::Path) -> std::io::Result<Vec<std::path::PathBuf>> {
        match &mut self.trace {
            Some(t) => t.open_pcap(dir, &self.net),
            None => Ok(Vec::new()),
        }
    }

    /// Put TCP flows `flows` under one group controller `ctl` (an ensemble, a multi-loop or a
    /// paced controller; see [`GroupControl`]) in place of their own algorithms; call before
    /// running. Each flow joins the group when it starts and leaves it when its transfer
    /// completes. Returns the group's id in the congestion-control host.
    pub fn add_group(&mut self, flows: &[u32], ctl: Box<dyn GroupControl>) -> Result<GroupId, ConfigError> {
        let n = self.specs.len();
        for (i, &f) in flows.iter().enumerate() {
            let path = format!("flows[{i}]");
            let Some(agent) = self.agents.get(2 * f as usize) else {
                return Err(ConfigError::new(
                    path,
                    format!("flow {f} does not exist; flows are 0..{}", n.saturating_sub(1)),
                ));
            };
            match agent.tcp_sender() {
                None => return Err(ConfigError::new(path, format!("flow {f} is not a TCP flow"))),
                Some(s) if s.stats.started_at.is_some() => {
                    return Err(ConfigError::new(path, format!("flow {f} has started; add groups before running")))
                }
                Some(s) if s.group().is_some() => {
                    return Err(ConfigError::new(path, format!("flow {f} is already in a group")))
                }
                Some(_) => {}
            }
            if flows[..i].contains(&f) {
                return Err(ConfigError::new(path, format!("flow {f} is listed twice")));
            }
        }
        let g = self.cc.add_group(ctl);
        for &f in flows {
            let s = self.agents[2 * f as usize].tcp_sender_mut().expect("checked: a TCP sender");
            s.set_controller(Controller::Group(g));
        }
        Ok(g)
    }

    /// Simulated time reached.
    pub fn now(&self) -> Time {
        self.now
    }

    /// End of the run.
    pub fn end(&self) -> Time {
        self.end
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.events.popped()
    }

    /// Process every event up to and including `t` (capped at the end of the run).
    pub fn run_until(&mut self, t: Time) {
        let t = t.min(self.end);
        let wall = Instant::now();
        while let Some((at, ev)) = self.events.peek() {
            if at > t {
                break;
            }
            self.now = at;
            if let Event::LinkArrival(link) = ev {
                // The next packet in the pipe takes the arriving one's place in the queue.
                let (id, next) = self.net.links[link as usize].pop_arrival();
                match next {
                    Some(next) => self.events.replace_top(next, Event::LinkArrival(link)),
                    None => {
                        self.events.pop();
                    }
                }
                if id != GONE {
                    self.on_arrival(id);
                }
                continue;
            }
            self.events.pop();
            self.dispatch(ev);
        }
        self.now = self.now.max(t);
        self.wall_s += wall.elapsed().as_secs_f64();
    }

    #[inline]
    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::LinkArrival(_) => unreachable!("handled in run_until"),
            Event::Wake(tag) => {
                let ep = tag.slot();
                let w = &mut self.wakes[ep as usize];
                if !tag.is_gen(w.gen) {
                    return; // a wake-up of an earlier occupant of the slot
                }
                if w.entry == Some(self.now) {
                    w.entry = None;
                }
                let mut io = Io { now: self.now, out: &mut self.out, cc: &mut self.cc };
                let wake = self.agents[ep as usize].on_wake(&mut io);
                self.after_agent(ep, wake);
            }
            Event::Start(c) => {
                let ep = endpoint(c, Side::Source);
                let mut io = Io { now: self.now, out: &mut self.out, cc: &mut self.cc };
                let wake = self.agents[ep as usize].start(&mut io);
                if let Some(m) = self.agents[ep as usize].tcp_sender().and_then(Sender::member) {
                    if self.owner.len() <= m as usize {
                        self.owner.resize(m as usize + 1, 0);
                    }
                    self.owner[m as usize] = ep;
                }
                self.after_agent(ep, wake);
            }
            Event::Stop(c) => self.agents[endpoint(c, Side::Source) as usize].stop(self.now),
            Event::CcTimer(tag) => {
                self.cc.fire_timer(tag, self.now);
                self.after_controllers();
            }
            Event::LinkTransmit(link) => self.start_tx(link),
            Event::Release(c) => {
                let j = self.jitter[c as usize].as_mut().expect("a sender with send jitter");
                let id = j.held.pop_front().expect("Release with a held segment");
                if !j.held.is_empty() {
                    self.events.push(self.now + j.delay(), Event::Release(c));
                }
                // Stamped when it really leaves, as ns-2 stamps at output.
                self.arena.get_mut(id).ts = self.now;
                self.forward(id, self.now);
            }
            Event::Sample => {
                self.sample();
                let next = self.now + self.sample_interval;
                if next <= self.end {
                    self.events.push(next, Event::Sample);
                }
            }
            Event::LinkChange(i) => self.apply_change(i as usize),
        }
    }

    /// Apply link change `i`: new rates and delays hold for packets accepted from now on; a
    /// direction going down loses every packet on it; any up/down switch recomputes routes.
    #[cold]
    fn apply_change(&mut self, i: usize) {
        let c = self.changes[i].clone();
        let mut rerouted = false;
        for &d in &c.dirs {
            let l = &mut self.net.links[d as usize];
            if let Some(rate) = c.rate {
                l.set_rate(rate);
            }
            if let Some(delay) = c.delay {
                l.set_delay(delay);
            }
            match c.up {
                Some(true) if !l.up => {
                    l.up = true;
                    rerouted = true;
                }
                Some(false) if l.up => {
                    let lost = l.go_down(self.now);
                    if let Some(lan) = l.lan {
                        let ch = &mut self.net.lans[lan as usize].busy_until;
                        *ch = (*ch).min(self.now);
                    }
                    for id in lost {
                        let p = *self.arena.get(id);
                        self.count_route_drop(&p);
                        if let Some(t) = &mut self.trace {
                            t.dropped(self.now, &p, d, Reason::LinkDown);
                        }
                        self.arena.free(id);
                    }
                    // CoDel may have dropped packets while the scheduler was emptied.
                    if self.net.links[d as usize].is_scheduled() {
                        self.drain_removed(d);
                    }
                    rerouted = true;
                }
                _ => {}
            }
        }
        if rerouted {
            self.reroute();
        }
    }

    /// Count packet `p` as dropped by a link going down or for want of a route.
    fn count_route_drop(&mut self, p: &Packet) {
        self.count_drop(p);
        let c = &mut self.counters[p.conn as usize];
        match p.dir {
            Dir::Forward => c.data_route_dropped += 1,
            Dir::Reverse => c.acks_route_dropped += 1,
        }
    }

    /// Recompute every flow's routes over the directions that are up and move the packets in
    /// flight onto them: a packet continues from the node it is about to reach if that node is
    /// on its new route, and is dropped on reaching it otherwise. A flow without a route gets
    /// an empty one; its packets are dropped at their first hop.
    fn reroute(&mut self) {
        let net = &self.net;
        let new = self.routes.recomputed(net);
        // The node at position `k` of a route ending at `last`.
        let node_at = |route: &[LinkId], k: usize, last: NodeId| match route.get(k) {
            Some(&l) => net.links[l as usize].from,
            None => last,
        };
        for l in &net.links {
            // Packets waiting in a scheduler will reach the same node as those in the pipe.
            for id in l.pipe_ids().chain(l.waiting_ids()) {
                let p = self.arena.get_mut(id);
                if p.hop == STRANDED {
                    continue;
                }
                let route = self.conns[p.conn as usize].routes[p.dir as usize];
                let (old, fresh, last) = (self.routes.links(route), new.links(route), self.routes.ends(route).1);
                let reached = node_at(old, p.hop as usize + 1, last);
                p.hop = match (1..=fresh.len()).find(|&k| node_at(fresh, k, last) == reached) {
                    Some(k) => (k - 1) as u16,
                    None => STRANDED,
                };
            }
        }
        self.routes = new;
        for c in &mut self.conns {
            c.paths = c.routes.map(|r| self.routes.shared(r));
        }
    }

    /// After endpoint `ep` ran: schedule its wake-up for `wake`, put the packets it produced
    /// on the network, and let the members its congestion controller clocked send.
    #[inline(always)]
    fn after_agent(&mut self, ep: EndpointId, wake: Option<Time>) {
        self.arm(ep, wake);
        self.flush(ep / 2);
        if self.cc.has_pending() {
            self.after_controllers();
        }
    }

    /// Members that controllers asked to send do so; group timers are scheduled.
    #[cold]
    #[inline(never)]
    fn after_controllers(&mut self) {
        loop {
            self.cc.take_clocked(&mut self.clocked);
            if self.clocked.is_empty() {
                break;
            }
            let m = self.clocked.remove(0);
            let ep = self.owner[m as usize];
            let mut io = Io { now: self.now, out: &mut self.out, cc: &mut self.cc };
            let wake = self.agents[ep as usize].clock(&mut io);
            self.arm(ep, wake);
            self.flush(ep / 2);
        }
        self.cc.timer_events(&mut self.timers);
        for (t, g, gen) in self.timers.drain(..) {
            self.events.push(t, Event::CcTimer(WakeTag::new(g, gen)));
        }
    }

    /// Bring endpoint `ep`'s wake-up at `wake` into the event queue, unless an event at or
    /// before it is already there.
    #[inline(always)]
    fn arm(&mut self, ep: EndpointId, wake: Option<Time>) {
        if let Some(d) = wake {
            let w = &mut self.wakes[ep as usize];
            if w.entry.is_none_or(|e| e > d) {
                w.entry = Some(d);
                self.events.push(d, Event::Wake(WakeTag::new(ep, w.gen)));
            }
        }
    }

    /// Put the packets an endpoint of connection `c` produced on the network.
    #[inline]
    fn flush(&mut self, c: u32) {
        let jittered = self.jitter[c as usize].is_some();
        for i in 0..self.out.len() {
            let p = self.out[i];
            if p.kind == Kind::Data && !p.retx() && self.forced_drop(c, p.seq) {
                self.counters[c as usize].data_dropped += 1;
                if self.trace.is_some() {
                    self.trace_forced_drop(i);
                }
                continue;
            }
            let id = self.arena.alloc(p);
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
    fn forced_drop(&mut self, c: u32, seq: u64) -> bool {
        let drops = &self.specs[c as usize].drop_segments;
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
    fn forward(&mut self, id: u32, mut at: Time) {
        // What forwarding and the queues need; the arena copy is updated where it must be.
        let p = self.arena.get(id);
        let (conn, dir, mut hop) = (p.conn, p.dir, p.hop);
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
            self.arena.get_mut(id).hop = hop;
            if self.net.links[link as usize].push_pipe(arrival, id) {
                self.events.push(arrival, Event::LinkArrival(link));
            }
            return;
        }
    }

    /// Offer packet `id` to scheduled link direction `link` now (ADR 0004).
    #[inline(never)]
    fn enqueue_scheduled(&mut self, id: u32, meta: Meta, link: LinkId) {
        let now = self.now;
        let p = *self.arena.get(id);
        let q = Queued { id, at: now, meta };
        match self.net.links[link as usize].sched_enqueue(now, q) {
            Err(refusal) => {
                if self.trace.is_some() {
                    trace_link(&mut self.trace, &self.net, now, Err(refusal), &p, link);
                }
                self.count_drop(&p);
                self.arena.free(id);
            }
            Ok(idle) => {
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

    /// Count a dropped packet against its connection.
    #[inline]
    fn count_drop(&mut self, p: &Packet) {
        let c = &mut self.counters[p.conn as usize];
        match p.dir {
            Dir::Forward => c.data_dropped += 1,
            Dir::Reverse => c.acks_dropped += 1,
        }
    }

    /// Account and free the packets scheduled link `link` removed from its queues.
    fn drain_removed(&mut self, link: LinkId) {
        let n = self.net.links[link as usize].scheduled().map_or(0, |s| s.removed.len());
        for i in 0..n {
            let (q, why) = self.net.links[link as usize].scheduled().expect("scheduled").removed[i];
            let p = *self.arena.get(q.id);
            if let Some(t) = &mut self.trace {
                let reason = match why {
                    Removal::PushOut => Reason::PushOut,
                    Removal::Codel => Reason::Codel,
                };
                t.dropped(self.now, &p, link, reason);
            }
            self.count_drop(&p);
            self.arena.free(q.id);
        }
        if n > 0 {
            self.net.links[link as usize].scheduled_mut().expect("scheduled").removed.clear();
        }
    }

    /// The transmitter of scheduled link `link` is free now: send the next packet, if any,
    /// and schedule the transmitter's next event at the end of its transmission.
    fn start_tx(&mut self, link: LinkId) {
        let l = &mut self.net.links[link as usize];
        let started = l.sched_start(self.now);
        let end = l.last_end();
        self.drain_removed(link);
        let Some((q, arrival)) = started else {
            return;
        };
        self.events.push(end, Event::LinkTransmit(link));
        let p = *self.arena.get(q.id);
        if self.trace.is_some() {
            trace_sched(&mut self.trace, self.now, Some(end), &p, link);
        }
        if self.net.links[link as usize].lost_on_wire(self.now, arrival) {
            self.lost_on_link(q.id, link);
            return;
        }
        if self.net.links[link as usize].push_pipe(arrival, q.id) {
            self.events.push(arrival, Event::LinkArrival(link));
        }
    }

    /// Packet `id`, offered to `link` at `at`, was refused by its queue.
    #[cold]
    #[inline(never)]
    fn refused(&mut self, id: u32, link: LinkId, at: Time, refusal: Refusal) {
        let p = *self.arena.get(id);
        if self.trace.is_some() {
            trace_link(&mut self.trace, &self.net, at, Err(refusal), &p, link);
        }
        self.count_drop(&p);
        self.arena.free(id);
    }

    /// Packet `id`, just transmitted on `link`, was discarded by the link's loss model.
    #[cold]
    #[inline(never)]
    fn lost_on_link(&mut self, id: u32, link: LinkId) {
        let p = *self.arena.get(id);
        if self.trace.is_some() {
            trace_link_loss(&mut self.trace, &self.net, &p, link);
        }
        let c = &mut self.counters[p.conn as usize];
        match p.dir {
            Dir::Forward => c.data_link_lost += 1,
            Dir::Reverse => c.acks_link_lost += 1,
        }
        self.arena.free(id);
    }

    /// Packet `id` reached the far end of a link.
    fn on_arrival(&mut self, id: u32) {
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
        self.arena.free(id);
        let c = p.conn as usize;
        if p.dir == Dir::Forward {
            self.counters[c].data_received += 1;
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
        self.after_agent(ep, wake);
    }

    /// Drop packet `id` for want of a route: a sender's packet at its first hop, or a packet
    /// that reached a node off its flow's new route.
    #[cold]
    #[inline(never)]
    fn drop_no_route(&mut self, id: u32, p: Packet) {
        self.count_route_drop(&p);
        self.arena.free(id);
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
    fn trace_forced_drop(&mut self, i: usize) {
        let p = self.out[i];
        self.trace_endpoint(EventKind::Send, &p, Reason::None);
        self.trace_endpoint(EventKind::Drop, &p, Reason::Forced);
    }

    /// Trace an event at an endpoint (kept out of line: the untraced path only tests `trace`).
    #[cold]
    #[inline(never)]
    fn trace_endpoint(&mut self, kind: EventKind, p: &Packet, reason: Reason) {
        if let Some(t) = &mut self.trace {
            t.endpoint(self.now, kind, p, reason);
        }
    }

    fn sample(&mut self) {
        let t = secs(self.now);
        let interval = secs(self.sample_interval);
        let s = &mut self.series;
        for i in 0..self.specs.len() {
            let c = &mut self.counters[i];
            s.f_time.push(t);
            s.f_flow.push(i as i64);
            let (src, dst) = (&self.agents[2 * i], &self.agents[2 * i + 1]);
            let (Agent::TcpSender(snd), Agent::TcpSink(sink)) = (src, dst) else {
                // No window, no RTT: NaN, as for an algorithm metric a flow does not have.
                let sent = src.udp_source().map_or(0, |u| u.stats.bytes_sent);
                let delivered = dst.udp_sink().map_or(0, |k| k.bytes);
                s.f_cwnd.push(f64::NAN);
                s.f_ssthresh.push(f64::NAN);
                s.f_srtt.push(f64::NAN);
                s.f_send_rate.push((sent - c.last_sent_bytes) as f64 * 8.0 / interval);
                s.f_goodput.push((delivered - c.last_delivered_bytes) as f64 * 8.0 / interval);
                c.last_sent_bytes = sent;
                c.last_delivered_bytes = delivered;
                continue;
            };
            let st = snd.cc_state(&self.cc);
            let sent = snd.stats.bytes_sent;
            let delivered = sink.bytes_delivered;
            s.f_cwnd.push(st.cwnd);
            s.f_ssthresh.push(st.ssthresh);
            s.f_srtt.push(if st.rtt.samples > 0 { st.rtt.srtt / 1e9 } else { f64::NAN });
            s.f_send_rate.push((sent - c.last_sent_bytes) as f64 * 8.0 / interval);
            s.f_goodput.push((delivered - c.last_delivered_bytes) as f64 * 8.0 / interval);
            c.last_sent_bytes = sent;
            c.last_delivered_bytes = delivered;
            let Some(m) = snd.member() else { continue };
            let row = s.f_time.len();
            let columns = &mut s.f_algo;
            self.cc.metrics(m, &mut |name, value| {
                let col = match columns.iter().position(|(n, _)| *n == name) {
                    Some(k) => &mut columns[k].1,
                    None => {
                        columns.push((name, Vec::new()));
                        &mut columns.last_mut().expect("just pushed").1
                    }
                };
                col.resize(row - 1, f64::NAN);
                col.push(value);
            });
        }
        let rows = s.f_time.len();
        for (_, col) in &mut s.f_algo {
            col.resize(rows, f64::NAN);
        }
        for (q, l) in self.net.links.iter_mut().enumerate() {
            let (pkts, bytes) = l.len_at(self.now);
            s.q_time.push(t);
            s.q_queue.push(q as i64);
            s.q_len.push(i64::from(pkts));
            s.q_bytes.push(bytes as i64);
            if self.any_red {
                s.q_red_avg.push(l.red().map_or(f64::NAN, |r| r.avg_pkts()));
            }
        }
    }

    /// Data packets of connection `c` still inside the network.
    fn data_in_network(&self) -> Vec<u64> {
        let mut n = vec![0u64; self.specs.len()];
        for (c, j) in self.jitter.iter().enumerate() {
            n[c] += j.as_ref().map_or(0, |j| j.held.len() as u64);
        }
        for l in &self.net.links {
            for id in l.pipe_ids().chain(l.waiting_ids()) {
                let p = self.arena.get(id);
                if p.dir == Dir::Forward {
                    n[p.conn as usize] += 1;
                }
            }
        }
        n
    }

    /// Run to the end and return the results.
    pub fn finish(mut self) -> RunResults {
        self.run_until(self.end);
        let end = self.end;
        for a in &mut self.agents {
            if let Agent::TcpSender(s) = a {
                s.finish(end, &self.cc);
            }
        }
        let flows = self.flow_table();
        let queues = self.queue_table();
        let series = std::mem::take(&mut self.series);
        let mut flow_series = Table::default();
        flow_series.push("time_s", Column::F64(series.f_time));
        flow_series.push("flow", Column::I64(series.f_flow));
        flow_series.push("cwnd", Column::F64(series.f_cwnd));
        flow_series.push("ssthresh", Column::F64(series.f_ssthresh));
        flow_series.push("srtt_s", Column::F64(series.f_srtt));
        flow_series.push("send_rate_bps", Column::F64(series.f_send_rate));
        flow_series.push("goodput_bps", Column::F64(series.f_goodput));
        for (name, col) in series.f_algo {
            flow_series.push(name, Column::F64(col));
        }
        let mut queue_series = Table::default();
        queue_series.push("time_s", Column::F64(series.q_time));
        queue_series.push("queue", Column::I64(series.q_queue));
        queue_series.push("len_pkts", Column::I64(series.q_len));
        queue_series.push("len_bytes", Column::I64(series.q_bytes));
        if self.any_red {
            queue_series.push("red_avg_pkts", Column::F64(series.q_red_avg));
        }
        RunResults {
            summary: Summary {
                duration_s: secs(end),
                seed: self.seed,
                events: self.events.popped(),
                wall_s: self.wall_s,
                scenario_hash: self.scenario_hash.clone(),
                version: crate::VERSION.to_string(),
            },
            flows,
            queues,
            flow_series,
            queue_series,
            trace: self.trace.take().map_or_else(Default::default, |t| t.finish(end)),
        }
    }

    fn flow_table(&self) -> Table {
        let n = self.specs.len();
        let in_net = self.data_in_network();
        let names = |f: &dyn Fn(usize) -> String| Column::Str((0..n).map(f).collect());
        let floats = |f: &dyn Fn(usize) -> f64| Column::F64((0..n).map(f).collect());
        let ints = |f: &dyn Fn(usize) -> i64| Column::I64((0..n).map(f).collect());
        // UDP flows have no TCP sender: their TCP counters read as a sender's that never ran.
        let never = SenderStats { rtt_min: u64::MAX, ..SenderStats::default() };
        let sender = |i: usize| self.agents[2 * i].tcp_sender();
        let st = |i: usize| sender(i).map_or(&never, |s| &s.stats);
        let nan_or = |o: Option<Time>| o.map_or(f64::NAN, secs);
        let active_end = |i: usize| {
            let spec = &self.specs[i];
            st(i).completed_at.unwrap_or_else(|| spec.stop.unwrap_or(self.end).min(self.end))
        };
        // UDP flows: sender and sink counters in place of TCP's; TCP-only values are NaN
        // (floats), 0 (counts) or "" (text).
        let source = |i: usize| self.agents[2 * i].udp_source();
        let udp_sink = |i: usize| self.agents[2 * i + 1].udp_sink();
        let tcp_sink = |i: usize| self.agents[2 * i + 1].tcp_sink();
        let tcp = |i: usize| sender(i).is_some();
        let bytes_sent = |i: usize| source(i).map_or(st(i).bytes_sent, |u| u.stats.bytes_sent);
        let delivered = |i: usize| match (tcp_sink(i), udp_sink(i)) {
            (Some(k), _) => k.bytes_delivered,
            (_, Some(k)) => k.bytes,
            _ => 0,
        };
        let started = |i: usize| source(i).map_or(st(i).started_at, |u| u.stats.started_at).is_some();
        let tcp_s = |i: usize, v: &str| if tcp(i) { v.to_string() } else { String::new() };
        let mut t = Table::default();
        t.push("flow", ints(&|i| i as i64));
        t.push("name", names(&|i| self.specs[i].name.clone()));
        t.push("src", names(&|i| self.net.nodes[self.specs[i].src as usize].clone()));
        t.push("dst", names(&|i| self.net.nodes[self.specs[i].dst as usize].clone()));
        t.push("transport", names(&|i| if tcp(i) { "tcp" } else { "udp" }.to_string()));
        t.push("source", names(&|i| self.specs[i].source.as_ref().map_or("", |s| s.kind.as_str()).to_string()));
        t.push("cc", names(&|i| tcp_s(i, self.specs[i].cc.as_str())));
        t.push("recovery", names(&|i| tcp_s(i, self.specs[i].tcp.recovery.as_str())));
        t.push("start_s", floats(&|i| secs(self.specs[i].start)));
        t.push("stop_s", floats(&|i| nan_or(self.specs[i].stop)));
        t.push("size_bytes", ints(&|i| self.specs[i].size.map_or(-1, |b| b as i64)));
        t.push("bytes_sent", ints(&|i| bytes_sent(i) as i64));
        t.push("bytes_delivered", ints(&|i| delivered(i) as i64));
        t.push("packets_sent", ints(&|i| source(i).map_or(st(i).packets_sent, |u| u.stats.packets_sent) as i64));
        t.push("packets_received", ints(&|i| self.counters[i].data_received as i64));
        t.push("retransmits", ints(&|i| st(i).retransmits as i64));
        t.push("fast_retransmits", ints(&|i| st(i).fast_retransmits as i64));
        t.push("timeouts", ints(&|i| st(i).timeouts as i64));
        t.push("misrx_detected", ints(&|i| st(i).misrx_detected as i64));
        t.push("drops", ints(&|i| self.counters[i].data_dropped as i64));
        t.push("ack_drops", ints(&|i| self.counters[i].acks_dropped as i64));
        t.push("link_losses", ints(&|i| self.counters[i].data_link_lost as i64));
        t.push("ack_link_losses", ints(&|i| self.counters[i].acks_link_lost as i64));
        if !self.changes.is_empty() {
            t.push("route_drops", ints(&|i| self.counters[i].data_route_dropped as i64));
            t.push("ack_route_drops", ints(&|i| self.counters[i].acks_route_dropped as i64));
        }
        t.push("in_network_end", ints(&|i| in_net[i] as i64));
        t.push("ecn_marks", ints(&|i| tcp_sink(i).map_or(0, |k| k.ce_received) as i64));
        t.push("ecn_reductions", ints(&|i| st(i).ecn_reductions as i64));
        t.push(
            "goodput_bps",
            floats(&|i| {
                let start = self.specs[i].start;
                let stop = active_end(i);
                if stop > start && started(i) {
                    delivered(i) as f64 * 8.0 / secs(stop - start)
                } else {
                    f64::NAN
                }
            }),
        );
        t.push(
            "rtt_mean_s",
            floats(&|i| if st(i).rtt_n > 0 { st(i).rtt_sum / st(i).rtt_n as f64 / 1e9 } else { f64::NAN }),
        );
        let owd = |i: usize, f: &dyn Fn(&UdpSink) -> f64| match udp_sink(i) {
            Some(k) if k.packets > 0 => f(k),
            _ => f64::NAN,
        };
        t.push("delay_mean_s", floats(&|i| owd(i, &|k| k.delay_sum as f64 / k.packets as f64 / 1e9)));
        t.push("delay_max_s", floats(&|i| owd(i, &|k| secs(k.delay_max))));
        t.push("rtt_min_s", floats(&|i| if st(i).rtt_n > 0 { secs(st(i).rtt_min) } else { f64::NAN }));
        t.push("rtt_max_s", floats(&|i| if st(i).rtt_n > 0 { secs(st(i).rtt_max) } else { f64::NAN }));
        t.push("rtt_samples", ints(&|i| st(i).rtt_n as i64));
        t.push(
            "cwnd_mean",
            floats(&|i| {
                let start = self.specs[i].start;
                let stop = active_end(i);
                if stop > start && st(i).started_at.is_some() && tcp(i) {
                    st(i).cwnd_integral / (stop - start) as f64
                } else {
                    f64::NAN
                }
            }),
        );
        t.push("cwnd_max", floats(&|i| if st(i).started_at.is_some() { st(i).cwnd_max } else { f64::NAN }));
        t.push("cwnd_final", floats(&|i| sender(i).map_or(f64::NAN, |s| s.cc_state(&self.cc).cwnd)));
        t.push(
            "completion_time_s",
            floats(&|i| st(i).completed_at.map_or(f64::NAN, |c| secs(c - self.specs[i].start))),
        );
        t.push("setup_time_s", floats(&|i| st(i).established_at.map_or(f64::NAN, |c| secs(c - self.specs[i].start))));
        t
    }

    fn queue_table(&mut self) -> Table {
        let end = self.end;
        let duration = end as f64;
        let mut rows = Vec::new();
        for l in self.net.links.iter_mut() {
            let len_end = l.len_at(end).0;
            rows.push((l.stats_at(end), len_end));
        }
        let net = &self.net;
        let n = net.links.len();
        let names = |f: &dyn Fn(usize) -> String| Column::Str((0..n).map(f).collect());
        let floats = |f: &dyn Fn(usize) -> f64| Column::F64((0..n).map(f).collect());
        let ints = |f: &dyn Fn(usize) -> i64| Column::I64((0..n).map(f).collect());
        let mut t = Table::default();
        t.push("queue", ints(&|q| q as i64));
        t.push("link", names(&|q| net.link_names[net.link_of[q] as usize].clone()));
        t.push("from", names(&|q| net.nodes[net.links[q].from as usize].clone()));
        t.push("to", names(&|q| net.to_name(q as LinkId).to_string()));
        t.push("rate_bps", floats(&|q| net.links[q].params.rate.0 as f64));
        t.push("delay_s", floats(&|q| secs(net.links[q].params.delay)));
        t.push(
            "limit",
            ints(&|q| match net.links[q].limit() {
                crate::net::Limit::Packets(p) => i64::from(p),
                crate::net::Limit::Bytes(b) => b as i64,
            }),
        );
        t.push(
            "limit_unit",
            names(&|q| match net.links[q].limit() {
                crate::net::Limit::Packets(_) => "packets".into(),
                crate::net::Limit::Bytes(_) => "bytes".into(),
            }),
        );
        t.push("arrivals", ints(&|q| rows[q].0 .0.arrivals as i64));
        t.push("departures", ints(&|q| rows[q].0 .1 as i64));
        t.push("drops", ints(&|q| rows[q].0 .0.drops as i64));
        t.push("arrival_bytes", ints(&|q| rows[q].0 .0.arrival_bytes as i64));
        t.push("drop_bytes", ints(&|q| rows[q].0 .0.drop_bytes as i64));
        t.push("early_drops", ints(&|q| rows[q].0 .0.early_drops as i64));
        t.push("ecn_marks", ints(&|q| rows[q].0 .0.marks as i64));
        t.push(
            "forced_drops",
            ints(&|q| (rows[q].0 .0.drops - rows[q].0 .0.early_drops - rows[q].0 .0.down_drops) as i64),
        );
        t.push("link_losses", ints(&|q| rows[q].0 .0.link_losses as i64));
        t.push("loss_model", names(&|q| net.links[q].loss.as_ref().map_or("", |m| m.name()).to_string()));
        t.push("mean_len_pkts", floats(&|q| rows[q].0 .0.len_integral as f64 / duration));
        t.push("max_len_pkts", ints(&|q| i64::from(rows[q].0 .0.max_len)));
        t.push("mean_len_bytes", floats(&|q| rows[q].0 .0.bytes_integral as f64 / duration));
        t.push("utilization", floats(&|q| rows[q].0 .0.busy as f64 / duration));
        t.push("len_end_pkts", ints(&|q| i64::from(rows[q].1)));
        if !self.changes.is_empty() {
            t.push("down_drops", ints(&|q| rows[q].0 .0.down_drops as i64));
            t.push("down_losses", ints(&|q| rows[q].0 .0.down_losses as i64));
        }
        let red = |q: usize| net.links[q].red();
        if self.any_red {
            t.push("red_avg_pkts", floats(&|q| red(q).map_or(f64::NAN, |r| r.mean_avg_pkts(end))));
            t.push("red_max_p", floats(&|q| red(q).map_or(f64::NAN, |r| r.max_p())));
        }
        t
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
                if p.hop == 0 {
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
        if p.hop == 0 {
            t.endpoint(at, EventKind::Send, p, Reason::None);
        }
        match arrival {
            Ok(_) => t.accepted(at, net.links[link as usize].last_end(), p, link),
            Err(Refusal::Early) => t.dropped(at, p, link, Reason::Early),
            Err(Refusal::Overflow) => t.dropped(at, p, link, Reason::Overflow),
        }
    }
}
