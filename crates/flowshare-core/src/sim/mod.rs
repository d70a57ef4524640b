//! The simulation: owns the world and runs the event loop.
//!
//! The loop itself is here; forwarding ([`forward`]), link changes ([`changes`]) and what a run
//! reports ([`tables`]) have files of their own.

mod arrivals;
pub mod atm;
mod changes;
mod concurrency;
mod ensembles;
mod estimate;
mod forward;
mod members;
mod tables;

use arrivals::{Arrivals, Transfer, TransferLog, User};

pub use estimate::{Estimate, BYTES_PER_SERIES_ROW, BYTES_PER_TRACE_ROW};
use tables::Series;

use crate::agent::{endpoint, Agent, EndpointId, Io, Side};
use crate::cc::host::GroupId;
use crate::cc::{CcHost, GroupControl, MemberId};
use crate::engine::{stream, uniform_delay, Event, EventQueue, Stream, WakeTag};
use crate::net::link::GONE;
use crate::net::{LinkId, Network, RouteId, RouteTable};
use crate::packet::{Arena, Packet, PacketId};
use crate::results::{fnv1a, RunResults, Summary};
use crate::scenario::{ConnSpec, LinkChange, Scenario};
use crate::stats::{DelayStats, FctStats};
use crate::tcp::{Controller, RttTiming, Sender, Sink, TcpConfig};
use crate::tfrc;
use crate::trace::{FlowWire, TraceCfg, Tracer};
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
    /// Its packets in the network (or held by its send jitter): a transfer's slot is given
    /// back when this drops to zero after the transfer completed.
    in_network: u32,
    /// A route of it crosses cell links (ADR 0013): its packets take the forwarding loop
    /// that segments and reassembles.
    cells: bool,
}

impl Conn {
    fn new(paths: [Arc<[LinkId]>; 2], group: u32, routes: [RouteId; 2], net: &Network) -> Conn {
        let cells = paths.iter().any(|p| p.iter().any(|&l| net.links[l as usize].cells));
        Conn { paths, group, routes, in_network: 0, cells }
    }
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
    /// What the run was estimated to cost before it started.
    estimate: Estimate,
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
    /// The flows the scenario lists: slots `0..n_static`, for the whole run.
    n_static: usize,
    /// Arrival processes, and the users of closed loops.
    arrivals: Vec<Arrivals>,
    users: Vec<User>,
    /// Per slot, the transfer occupying it (`None` for a listed flow or a free slot).
    transfers: Vec<Option<Transfer>>,
    /// Slots given back by finished transfers.
    free_slots: Vec<u32>,
    /// Number of the next transfer.
    next_transfer: u32,
    /// Finished transfers not yet taken.
    transfer_log: TransferLog,
    /// The `concurrency` table, when the scenario asks for it.
    concurrency: Option<Box<concurrency::Concurrency>>,
    /// Start of the steady state (`simulation.warmup`); 0 = the whole run.
    warmup: Time,
    /// What the counters held at the end of the warm-up, once it has passed.
    warm: Option<Box<tables::Warm>>,
    /// Per listed flow, the one-way delays of its data packets delivered since the warm-up.
    delays: Vec<DelayStats>,
    /// Names of the flow groups (`[[flows]]` tables), in order.
    group_names: Vec<String>,
    /// Ensembles of connections under one common controller (`tcp.ensemble`).
    ensembles: ensembles::Ensembles,
    /// The AAL5 circuits of the cell links (ADR 0013); empty without them.
    circuits: atm::Circuits,
    /// Completion times of the transfers opened by arrival processes that started after the
    /// warm-up: per flow group, [`tables::FCT_ROWS`] entries (all sizes, then each size bucket).
    fct: Vec<FctStats>,
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

/// Refuse what cell links (ADR 0013) cannot do: a route that enters the cell network twice
/// (reassembly keeps one queue of frames per circuit), and link changes (which move packets
/// between routes, parked frames included).
fn check_cell_routes(built: &crate::scenario::Built) -> Result<(), ConfigError> {
    let net = &built.net;
    if !net.links.iter().any(|l| l.cells) {
        return Ok(());
    }
    if !built.changes.is_empty() {
        return Err(ConfigError::new(
            "changes",
            "link changes are not available in a network with cell links (cells = true)",
        ));
    }
    let routes =
        built.conns.iter().map(|c| c.routes).chain(built.arrivals.iter().flat_map(|a| a.routes_used().iter().copied()));
    for r in routes.flat_map(|r| r.into_iter()) {
        let links = built.routes.links(r);
        let entries = links
            .iter()
            .enumerate()
            .filter(|&(i, &l)| net.links[l as usize].cells && (i == 0 || !net.links[links[i - 1] as usize].cells))
            .count();
        if entries > 1 {
            let mut names: Vec<_> =
                links.iter().map(|&l| net.nodes[net.links[l as usize].from as usize].as_str()).collect();
            names.extend(links.last().map(|&l| net.to_name(l)));
            return Err(ConfigError::new(
                "topology",
                format!("the route {} enters the cell network (cells = true) more than once; a route may cross one run of cell links", names.join(" -> ")),
            ));
        }
    }
    Ok(())
}

impl Simulation {
    /// Build a simulation from a validated scenario.
    pub fn new(scenario: &Scenario) -> Result<Self, ConfigError> {
        let mut built = scenario.build()?;
        let end = scenario.simulation.duration.0;
        let estimate = Estimate::of(
            &built,
            end,
            scenario.simulation.sample_interval.0,
            scenario.trace.as_ref().filter(|t| t.events).map_or(0, TraceCfg::kinds_kept),
            scenario.simulation.seed,
        );
        let mut users = vec![0u32; built.net.links.len()];
        // An arrival group's connections share one pair of routes: they arrive at each link in
        // the order of the link before, as one connection's packets do.
        let routes_used = built
            .conns
            .iter()
            .map(|c| c.routes)
            .chain(built.arrivals.iter().flat_map(|a| a.routes_used().iter().copied()));
        for r in routes_used {
            for &l in r.iter().flat_map(|&r| built.routes.links(r)) {
                users[l as usize] += 1;
            }
        }
        check_cell_routes(&built)?;
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
            let (source, destination) = connection_agents(c, i, end, seed);
            agents.push(source);
            agents.push(destination);
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
            // Only events and pcap captures need a tracer on the packet path.
            Some(cfg) if cfg.events || !cfg.pcap.is_empty() => {
                let spec = cfg.resolve(&built.net, built.conns.len(), scenario.bottleneck_link(), end)?;
                let wire = built
                    .conns
                    .iter()
                    .map(|c| match (&c.source, &c.tfrc) {
                        (Some(s), _) => FlowWire { mss: s.payload, header: s.header, size: None },
                        (None, Some(t)) => FlowWire { mss: t.payload, header: t.header, size: c.size },
                        (None, None) => FlowWire { mss: c.tcp.mss, header: c.tcp.header, size: c.size },
                    })
                    .collect();
                Some(Box::new(Tracer::new(spec, built.net.links.len(), wire, end)))
            }
            _ => None,
        };
        let concurrency = match &scenario.trace {
            Some(cfg) => {
                let groups: Vec<(&str, bool)> =
                    scenario.flows.iter().map(|g| (g.name.as_str(), g.arrivals.is_some())).collect();
                cfg.concurrency_groups(&groups)?.map(|mask| Box::new(concurrency::Concurrency::new(mask)))
            }
            None => None,
        };
        let sample_interval = scenario.simulation.sample_interval.0;
        if sample_interval > 0 && sample_interval <= end {
            events.push(sample_interval, Event::Sample);
        }
        let warmup = scenario.simulation.warmup.0;
        if warmup > 0 {
            events.push(warmup, Event::Warmup);
        }
        let group_names: Vec<String> = scenario.flows.iter().map(|g| g.name.clone()).collect();
        let any_red = built.net.links.iter().any(|l| l.red().is_some());
        let n = built.conns.len();
        let arrivals = std::mem::take(&mut built.arrivals);
        let mut sim = Simulation {
            estimate,
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
                .map(|c| Conn::new(c.routes.map(|r| built.routes.shared(r)), c.group, c.routes, &built.net))
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
            n_static: n,
            arrivals: Vec::new(),
            users: Vec::new(),
            transfers: vec![None; n],
            free_slots: Vec::new(),
            next_transfer: n as u32,
            transfer_log: TransferLog::default(),
            concurrency,
            warmup,
            warm: None,
            delays: vec![DelayStats::default(); n],
            fct: vec![FctStats::default(); group_names.len() * tables::FCT_ROWS],
            group_names,
            ensembles: ensembles::Ensembles::default(),
            circuits: atm::Circuits::default(),
        };
        sim.init_ensembles();
        sim.init_arrivals(arrivals);
        for (i, c) in sim.specs.iter().enumerate() {
            if let Some(link) = c.abr {
                sim.circuits.set_abr(i as u32, link);
            }
        }
        Ok(sim)
    }

    /// Put each listed TCP flow with an ensemble setting in its ensemble's group.
    fn init_ensembles(&mut self) {
        for (i, c) in self.specs.iter().enumerate() {
            let Some(setting) = &c.ensemble else { continue };
            let ends = (c.src, c.dst, c.routes[0]);
            let g = self.ensembles.group(&mut self.cc, &self.net, &self.routes, ends, setting);
            let sender = self.agents[2 * i].tcp_sender_mut().expect("an ensemble flow is a TCP flow");
            sender.set_controller(Controller::Group(g));
        }
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

    /// What the run was estimated to cost before it started (see [`Estimate`]).
    pub fn estimate(&self) -> &Estimate {
        &self.estimate
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
                self.note_owner(ep);
                self.after_agent(ep, wake);
            }
            Event::Arrival(a) => self.on_arrival_event(a),
            Event::User(u) => self.on_user_event(u),
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
            Event::Warmup => self.end_warmup(),
            Event::RmCell(id) => self.rm_cell_out(id, self.now),
        }
    }

    /// A TCP sender at endpoint `ep` has just started: note which endpoint its congestion
    /// control member belongs to.
    fn note_owner(&mut self, ep: EndpointId) {
        if let Some(m) = self.agents[ep as usize].tcp_sender().and_then(Sender::member) {
            if self.owner.len() <= m as usize {
                self.owner.resize(m as usize + 1, 0);
            }
            self.owner[m as usize] = ep;
        }
    }

    /// After endpoint `ep` ran: schedule its wake-up for `wake`, put the packets it produced
    /// on the network, let the members its congestion controller clocked send, and look after
    /// a transfer's slot.
    #[inline(always)]
    fn after_agent(&mut self, ep: EndpointId, wake: Option<Time>) {
        self.arm(ep, wake);
        self.flush(ep / 2);
        if self.cc.has_pending() {
            self.after_controllers();
        }
        if (ep / 2) as usize >= self.n_static {
            self.after_transfer_event(ep / 2);
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

    /// Run to the end and return the results.
    pub fn finish(mut self) -> RunResults {
        self.run_until(self.end);
        self.record_running_transfers();
        let end = self.end;
        for a in &mut self.agents {
            if let Agent::TcpSender(s) = a {
                s.finish(end, &self.cc);
            }
        }
        let flows = self.flow_table();
        let queues = self.queue_table();
        let (flow_series, queue_series) = self.take_series();
        let delays = self.delay_table();
        let fct = self.fct_table();
        let members = self.members_table();
        RunResults {
            summary: Summary {
                duration_s: secs(end),
                warmup_s: secs(self.warmup),
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
            transfers: self.take_transfers(),
            concurrency: self.take_concurrency(),
            members,
            delays,
            fct,
            trace: self.trace.take().map_or_else(Default::default, |t| t.finish(end)),
        }
    }
}

/// The two endpoints of listed connection `i` described by `c`, as a run of length `end` with
/// seed `seed` builds them: (source side, destination side). The live transport builds its
/// endpoints here too, so that a connection behaves the same in simulation and on a network.
pub fn connection_agents(c: &ConnSpec, i: u32, end: Time, seed: u64) -> (Agent, Agent) {
    match &c.source {
        None if c.tfrc.is_some() => {
            let cfg = c.tfrc.clone().expect("a TFRC flow");
            let stop = c.stop.unwrap_or(Time::MAX).min(end.saturating_add(1));
            let s = u64::from(cfg.payload);
            let (total, last) = match c.size {
                Some(bytes) => (Some(bytes.div_ceil(s)), (bytes - (bytes.div_ceil(s) - 1) * s) as u32),
                None => (None, cfg.payload),
            };
            (
                Agent::TfrcSender(Box::new(tfrc::Sender::new(i, cfg.clone(), total, last, stop))),
                Agent::TfrcReceiver(Box::new(tfrc::Receiver::new(i, cfg))),
            )
        }
        Some(src) => {
            let stop = c.stop.unwrap_or(Time::MAX).min(end.saturating_add(1));
            (
                Agent::UdpSource(Box::new(UdpSender::new(i, src, c.start, stop, seed, &c.key))),
                Agent::UdpSink(UdpSink::new(src.header)),
            )
        }
        None => {
            let mss = u64::from(c.tcp.mss);
            let (total, last) = match c.size {
                Some(bytes) => (Some(bytes.div_ceil(mss)), (bytes - (bytes.div_ceil(mss) - 1) * mss) as u32),
                None => (None, c.tcp.mss),
            };
            let ctl = match c.cc.build_aggregate(i, &c.aggregate) {
                Some(ctl) => Controller::Solo(ctl),
                None => Controller::Solo(c.cc.build_solo_for(seed, &c.key)),
            };
            let mut sender = Sender::new(i, c.tcp, total, last, ctl);
            set_clock_phase(&mut sender, seed, &c.key, &c.tcp);
            (Agent::TcpSender(Box::new(sender)), Agent::TcpSink(Sink::new(i, &c.tcp, total, last)))
        }
    }
}

/// `rtt_timing = "ns2"`: the sender's clock ticks at a random phase, uniform over one tick and
/// drawn from the run's seed (ns-2's `boot_time_`), so that replications differ.
fn set_clock_phase(sender: &mut Sender, seed: u64, key: &str, tcp: &TcpConfig) {
    if tcp.rtt_timing == RttTiming::Ns2 {
        let mut rng = stream(seed, &format!("{key}/clock_phase"));
        sender.set_clock_phase(uniform_delay(&mut rng, tcp.timer_tick.max(1) - 1));
    }
}
