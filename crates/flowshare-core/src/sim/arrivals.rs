//! Connections opened while the run goes on ([`crate::traffic::arrivals`]): arrival
//! processes, closed-loop users, sequential session sources and HTTP clients ([`http`]),
//! connection slots taken from a free list and given back, and the per-transfer table written
//! as transfers finish.
//!
//! The flows a scenario lists occupy the first slots for the whole run. A transfer opened by
//! an arrival process takes a free slot (or a new one), runs, and is recorded when its last
//! byte is acknowledged; its slot is given back once none of its packets is left in the
//! network (the slot counts them), so memory follows the connections open at a time, not the
//! transfers made. A slot's endpoints carry a new wake generation each time it is reused, so a
//! timer of an earlier occupant never wakes the new one.

use super::{Conn, ConnCounters, Simulation};
use crate::agent::{endpoint, Agent, Io, Side};
use crate::engine::{stream, Event, Stream};
use crate::results::{Column, Table};
use crate::scenario::ArrivalSpec;
use crate::tcp::{Controller, Sender, Sink};
use crate::trace::FlowWire;
use crate::traffic::arrivals::Process;
use crate::traffic::sessions::SourceState;
use crate::units::{secs, Time, NS_PER_SEC};

mod http;
mod population;
use http::{HttpConn, HttpUser};
use population::{Pick, PopulationRun};

/// An arrival process at run time.
#[derive(Debug)]
pub(super) struct Arrivals {
    pub(super) spec: ArrivalSpec,
    /// Poisson: gaps. Trace: unused.
    gaps: Stream,
    /// Poisson: sizes.
    sizes: Stream,
    /// Trace: the next entry.
    next: usize,
    /// Connections opened so far.
    opened: u64,
    /// A population: its hosts and active transfers.
    population: Option<Box<PopulationRun>>,
}

/// A closed-loop user, or a sessions group's source: it alternates a transfer and a pause (a
/// think time; a reading time or a session gap), drawing both from its own stream.
#[derive(Debug)]
pub(super) struct User {
    arrivals: u32,
    /// Its number in its group, as in the transfers table.
    index: u32,
    rng: Stream,
    /// Sessions: where the source is in its session.
    session: SourceState,
    /// HTTP: where the client is in its sessions.
    http: HttpUser,
}

/// A transfer occupying a slot.
#[derive(Clone, Copy, Debug)]
pub(super) struct Transfer {
    /// Its number: the listed flows are 0…n−1, transfers count on from n.
    pub(super) id: u32,
    arrivals: u32,
    user: Option<u32>,
    start: Time,
    size: u64,
    /// Its last byte was acknowledged (and it was recorded).
    done: bool,
    /// An HTTP connection: its documents are recorded one by one as the client receives them.
    http: Option<HttpConn>,
    /// A population's transfer: its file type and flow group ([`Pick::label`]).
    label: Option<u16>,
}

impl Transfer {
    /// Its last byte was acknowledged.
    pub(super) fn done(&self) -> bool {
        self.done
    }
}

/// The per-transfer table, row by row as transfers finish, until it is taken.
#[derive(Debug, Default)]
pub(super) struct TransferLog {
    transfer: Vec<i64>,
    name: Vec<String>,
    user: Vec<i64>,
    start: Vec<f64>,
    size: Vec<i64>,
    completion: Vec<f64>,
    goodput: Vec<f64>,
    packets_sent: Vec<i64>,
    retransmits: Vec<i64>,
    timeouts: Vec<i64>,
    drops: Vec<i64>,
    initial_cwnd: Vec<f64>,
    initial_ssthresh: Vec<f64>,
    initial_srtt: Vec<f64>,
    initial_rttvar: Vec<f64>,
    rtt_min: Vec<f64>,
    sent_bytes: Vec<i64>,
    session: Vec<i64>,
    document: Vec<i64>,
    /// Rows recorded since the start of the run.
    pub(super) total: u64,
}

impl TransferLog {
    /// The rows recorded since the last call, as a table; the log is left empty.
    pub(super) fn take(&mut self) -> Table {
        let mut t = Table::default();
        t.push("transfer", Column::I64(std::mem::take(&mut self.transfer)));
        t.push("name", Column::Str(std::mem::take(&mut self.name)));
        t.push("user", Column::I64(std::mem::take(&mut self.user)));
        t.push("start_s", Column::F64(std::mem::take(&mut self.start)));
        t.push("size_bytes", Column::I64(std::mem::take(&mut self.size)));
        t.push("completion_time_s", Column::F64(std::mem::take(&mut self.completion)));
        t.push("goodput_bps", Column::F64(std::mem::take(&mut self.goodput)));
        t.push("packets_sent", Column::I64(std::mem::take(&mut self.packets_sent)));
        t.push("retransmits", Column::I64(std::mem::take(&mut self.retransmits)));
        t.push("timeouts", Column::I64(std::mem::take(&mut self.timeouts)));
        t.push("drops", Column::I64(std::mem::take(&mut self.drops)));
        t.push("initial_cwnd", Column::F64(std::mem::take(&mut self.initial_cwnd)));
        t.push("initial_ssthresh", Column::F64(std::mem::take(&mut self.initial_ssthresh)));
        t.push("initial_srtt_s", Column::F64(std::mem::take(&mut self.initial_srtt)));
        t.push("initial_rttvar_s", Column::F64(std::mem::take(&mut self.initial_rttvar)));
        t.push("rtt_min_s", Column::F64(std::mem::take(&mut self.rtt_min)));
        t.push("sent_bytes", Column::I64(std::mem::take(&mut self.sent_bytes)));
        t.push("session", Column::I64(std::mem::take(&mut self.session)));
        t.push("document", Column::I64(std::mem::take(&mut self.document)));
        t
    }
}

/// A sender's counters as the per-transfer table reports them.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Counts {
    packets_sent: u64,
    retransmits: u64,
    timeouts: u64,
    drops: u64,
    sent_bytes: u64,
}

impl Counts {
    /// Sender `s`'s counters, with `drops` data packets of its connection dropped.
    fn of(s: &Sender, drops: u64) -> Counts {
        let st = &s.stats;
        Counts {
            packets_sent: st.packets_sent,
            retransmits: st.retransmits,
            timeouts: st.timeouts,
            drops,
            sent_bytes: s.sent_bytes(),
        }
    }

    /// What was counted since `base`.
    fn since(self, base: Counts) -> Counts {
        Counts {
            packets_sent: self.packets_sent - base.packets_sent,
            retransmits: self.retransmits - base.retransmits,
            timeouts: self.timeouts - base.timeouts,
            drops: self.drops - base.drops,
            sent_bytes: self.sent_bytes - base.sent_bytes,
        }
    }
}

/// One row of the per-transfer table beyond what the transfer and its sender tell.
struct Row {
    /// When it started (was asked for).
    start: Time,
    size: u64,
    /// How long it took, if it completed.
    fct: Option<Time>,
    counts: Counts,
    /// HTTP: the client's session and the document's number in it (−1 otherwise).
    session: i64,
    document: i64,
}

/// A size drawn from a distribution over bytes: whole bytes, at least one.
fn whole_bytes(x: f64) -> u64 {
    (x.ceil() as u64).max(1)
}

/// A time drawn from a distribution over seconds: whole nanoseconds.
fn whole_ns(x: f64) -> Time {
    (x * NS_PER_SEC as f64).round() as Time
}

impl Simulation {
    /// Set up the arrival processes of `specs`: their first events and their users.
    pub(super) fn init_arrivals(&mut self, specs: Vec<ArrivalSpec>) {
        for (a, spec) in specs.into_iter().enumerate() {
            let a = a as u32;
            let mut arr = Arrivals {
                gaps: stream(self.seed, &format!("{}/arrivals", spec.key)),
                sizes: stream(self.seed, &format!("{}/sizes", spec.key)),
                next: 0,
                opened: 0,
                population: match (&spec.process, &spec.placed) {
                    (Process::Population { hosts, .. }, Some(placed)) => {
                        Some(Box::new(PopulationRun::new(self.seed, &spec.key, &spec.name, spec.cc, hosts, placed)))
                    }
                    _ => None,
                },
                spec,
            };
            match &arr.spec.process {
                Process::Poisson { gap, .. } => {
                    let first = arr.spec.start.saturating_add(whole_ns(gap.sample(&mut arr.gaps)));
                    self.arrivals.push(arr);
                    self.schedule_arrival(a, first);
                }
                Process::Trace(list) => {
                    let first = arr.spec.start.saturating_add(list[0].0);
                    self.arrivals.push(arr);
                    self.schedule_arrival(a, first);
                }
                Process::ClosedLoop { .. } | Process::Sessions(_) | Process::Http(_) | Process::Population { .. } => {
                    // Each user starts after a first think time of its own, each source after a
                    // first session gap (a population's after its `first` time, drawn from one
                    // stream); HTTP clients start at once.
                    let (n, prefix) = match &arr.spec.process {
                        Process::ClosedLoop { users, .. } => (*users, "user"),
                        Process::Sessions(m) => (m.sources, "source"),
                        Process::Http(h) => (h.clients, "client"),
                        Process::Population { hosts, .. } => (hosts.total_sources() as u32, "source"),
                        _ => unreachable!("users or sources"),
                    };
                    let mut firsts = stream(self.seed, &format!("{}/first", arr.spec.key));
                    for u in 0..n {
                        let mut rng = stream(self.seed, &format!("{}/{prefix}{u}", arr.spec.key));
                        let delay = match &arr.spec.process {
                            Process::ClosedLoop { think, .. } => think.sample(&mut rng),
                            Process::Sessions(m) => m.first(&mut rng),
                            Process::Http(_) => 0.0,
                            Process::Population { think, hosts, .. } => match &hosts.first {
                                Some(first) => first.sample(&mut firsts),
                                None => think.sample(&mut rng),
                            },
                            _ => unreachable!("users or sources"),
                        };
                        let first = arr.spec.start.saturating_add(whole_ns(delay));
                        let id = self.users.len() as u32;
                        self.users.push(User {
                            arrivals: a,
                            index: u,
                            rng,
                            session: SourceState::default(),
                            http: HttpUser::default(),
                        });
                        if arr.spec.stop.is_none_or(|s| first < s) && first <= self.end {
                            self.events.push(first, Event::User(id));
                        }
                    }
                    self.arrivals.push(arr);
                }
            }
        }
    }

    /// Schedule the next opening of process `a` at `t` if it may still open one then.
    fn schedule_arrival(&mut self, a: u32, t: Time) {
        let arr = &self.arrivals[a as usize];
        let open = arr.spec.stop.is_none_or(|s| t < s) && arr.spec.limit.is_none_or(|l| arr.opened < l);
        if open && t <= self.end {
            self.events.push(t, Event::Arrival(a));
        }
    }

    /// Process `a` opens its next connection now, and schedules the one after.
    pub(super) fn on_arrival_event(&mut self, a: u32) {
        let arr = &mut self.arrivals[a as usize];
        let (size, next) = match &arr.spec.process {
            Process::Poisson { gap, size } => {
                let s = whole_bytes(size.sample(&mut arr.sizes));
                (s, Some(self.now.saturating_add(whole_ns(gap.sample(&mut arr.gaps)))))
            }
            Process::Trace(list) => {
                let (_, s) = list[arr.next];
                arr.next += 1;
                (s, list.get(arr.next).map(|e| arr.spec.start.saturating_add(e.0)))
            }
            Process::ClosedLoop { .. } | Process::Sessions(_) | Process::Http(_) | Process::Population { .. } => {
                unreachable!("users, sources and clients open their own connections")
            }
        };
        arr.opened += 1;
        if let Some(t) = next {
            self.schedule_arrival(a, t);
        }
        self.open_transfer(a, size, None, None, None);
    }

    /// User (or source) `u` ends its pause: it opens its next transfer, unless its process
    /// has stopped.
    pub(super) fn on_user_event(&mut self, u: u32) {
        let user = &mut self.users[u as usize];
        let a = user.arrivals;
        let arr = &mut self.arrivals[a as usize];
        if arr.spec.stop.is_some_and(|s| self.now >= s) || arr.spec.limit.is_some_and(|l| arr.opened >= l) {
            return;
        }
        let size = match &arr.spec.process {
            Process::ClosedLoop { size, .. } => size.sample(&mut user.rng),
            Process::Sessions(m) => m.open_page(&mut user.session, &mut user.rng),
            Process::Http(_) => return self.open_http(u),
            Process::Population { size, .. } => {
                let run = arr.population.as_mut().expect("a population's hosts");
                let pick = run.next(user.index, size);
                arr.opened += 1;
                return self.open_transfer(a, pick.size, Some(u), None, Some(pick));
            }
            _ => unreachable!("a closed loop, sessions or HTTP"),
        };
        let size = whole_bytes(size);
        arr.opened += 1;
        self.open_transfer(a, size, Some(u), None, None);
    }

    /// Open a transfer of `size` bytes for process `a` (and user `user`) now, in a free slot;
    /// for an HTTP client, a connection carrying the documents of `http`; for a population's
    /// source, the transfer `pick` plans.
    fn open_transfer(
        &mut self,
        a: u32,
        size: u64,
        user: Option<u32>,
        http: Option<(HttpConn, Vec<u64>)>,
        pick: Option<Pick>,
    ) {
        let spec = &self.arrivals[a as usize].spec;
        let routes = pick.map_or(spec.routes, |p| p.routes);
        let id = self.next_transfer;
        self.next_transfer =
            id.checked_add(1).expect("transfer numbers are 32-bit: at most 4,294,967,295 flows and transfers in a run");
        let c = match self.free_slots.pop() {
            Some(c) => c,
            None => {
                let c = self.conns.len() as u32;
                // Endpoint wake-ups carry the endpoint's index in 26 bits.
                assert!(
                    2 * u64::from(c) + 1 < u64::from(crate::engine::WakeTag::MAX_SLOTS),
                    "more than {} connections open at once",
                    crate::engine::WakeTag::MAX_SLOTS / 2
                );
                self.conns.push(Conn::new(routes.map(|r| self.routes.shared(r)), spec.group, routes, &self.net));
                self.agents.extend([Agent::Vacant, Agent::Vacant]);
                self.wakes.extend([super::Wake::default(), super::Wake::default()]);
                self.counters.push(ConnCounters::default());
                self.jitter.push(None);
                self.transfers.push(None);
                c
            }
        };
        let tcp = spec.tcp;
        let mss = u64::from(tcp.mss);
        let total = size.div_ceil(mss);
        let last = (size - (total - 1) * mss) as u32;
        let ctl = match &spec.ensemble {
            Some(setting) => {
                let ends = (spec.src, spec.dst, spec.routes[0]);
                Controller::Group(self.ensembles.group(&mut self.cc, &self.net, &self.routes, ends, setting))
            }
            None => {
                let cc = match (pick, &spec.process) {
                    (Some(p), Process::Population { hosts, .. }) if p.alternate => {
                        hosts.alternate.expect("an alternate algorithm").0
                    }
                    _ => spec.cc,
                };
                Controller::Solo(cc.build_solo_for(self.seed, &format!("{}/t{id}", spec.key)))
            }
        };
        let slot = c as usize;
        let mut sender = Sender::new(c, tcp, Some(total), last, ctl);
        if let Some(p) = pick {
            sender.set_interface_rate(p.rate_bps);
        }
        super::set_clock_phase(&mut sender, self.seed, &format!("{}/t{id}", spec.key), &tcp);
        let mut sink = Sink::new(c, &tcp, Some(total), last);
        if let (Some((_, docs)), Process::Http(h)) = (&http, &spec.process) {
            http::serve_and_fetch(&mut sender, &mut sink, c, h, &tcp, docs);
        }
        self.agents[2 * slot] = Agent::TcpSender(Box::new(sender));
        self.agents[2 * slot + 1] = Agent::TcpSink(sink);
        for w in &mut self.wakes[2 * slot..2 * slot + 2] {
            w.entry = None;
            w.gen = w.gen.wrapping_add(1);
        }
        let conn = &mut self.conns[slot];
        debug_assert_eq!(conn.in_network, 0, "a reused slot holds no packet");
        *conn = Conn::new(routes.map(|r| self.routes.shared(r)), spec.group, routes, &self.net);
        self.counters[slot] = ConnCounters::default();
        self.jitter[slot] = (tcp.send_jitter > 0).then(|| {
            let rng = stream(self.seed, &format!("{}/t{id}/send_jitter", spec.key));
            Box::new(super::SendJitter { max: tcp.send_jitter, rng, held: Default::default() })
        });
        self.transfers[slot] = Some(Transfer {
            id,
            arrivals: a,
            user,
            start: self.now,
            size,
            done: false,
            http: http.as_ref().map(|h| h.0),
            label: pick.map(|p| p.label),
        });
        self.concurrency_opened(c, self.arrivals[a as usize].spec.group);
        if let Some(t) = &mut self.trace {
            t.set_slot(c, id, FlowWire { mss: tcp.mss, header: tcp.header, size: Some(size) });
        }
        let ep = endpoint(c, Side::Source);
        let mut io = Io { now: self.now, out: &mut self.out, cc: &mut self.cc };
        let wake = self.agents[ep as usize].start(&mut io);
        self.note_owner(ep);
        self.after_agent(ep, wake);
        if http.is_some() {
            // The client opens the connection, once the server listens.
            let ep = endpoint(c, Side::Destination);
            let mut io = Io { now: self.now, out: &mut self.out, cc: &mut self.cc };
            let wake = self.agents[ep as usize].start(&mut io);
            self.after_agent(ep, wake);
        }
    }

    /// After an endpoint of transfer slot `c` ran: record the transfer when it has just
    /// completed (and start its user's pause), and give the slot back once it is done
    /// and none of its packets is left.
    #[cold]
    #[inline(never)]
    pub(super) fn after_transfer_event(&mut self, c: u32) {
        let slot = c as usize;
        let Some(t) = self.transfers[slot] else { return };
        if let Some(h) = t.http {
            return self.after_http_event(c, t, h);
        }
        if !t.done {
            let Some(s) = self.agents[2 * slot].tcp_sender() else { return };
            if s.stats.completed_at.is_none() {
                return;
            }
            self.record_transfer(c);
            self.concurrency_completed(c);
            if let Some(u) = t.user {
                let user = &mut self.users[u as usize];
                let arr = &mut self.arrivals[user.arrivals as usize];
                if let (Some(run), Some(label)) = (&mut arr.population, t.label) {
                    run.completed(label);
                }
                let pause = match &arr.spec.process {
                    Process::ClosedLoop { think, .. } | Process::Population { think, .. } => {
                        think.sample(&mut user.rng)
                    }
                    Process::Sessions(m) => m.after_page(&user.session, &mut user.rng),
                    _ => unreachable!("a closed loop or sessions (HTTP clients move on by document)"),
                };
                let next = self.now.saturating_add(whole_ns(pause));
                if arr.spec.stop.is_none_or(|s| next < s) && next <= self.end {
                    self.events.push(next, Event::User(u));
                }
            }
        }
        if self.conns[slot].in_network == 0 {
            self.release_slot(c);
        }
    }

    /// The last packet of transfer slot `c` left the network: give the slot back if the
    /// transfer is done.
    #[cold]
    #[inline(never)]
    pub(super) fn after_last_packet(&mut self, c: u32) {
        if self.transfers[c as usize].is_some_and(|t| t.done) {
            self.release_slot(c);
        }
    }

    /// Record the transfer in slot `c` in the per-transfer table (a completed one, or one
    /// still running at the end of the run) and mark it done.
    fn record_transfer(&mut self, c: u32) {
        let slot = c as usize;
        let t = self.transfers[slot].as_mut().expect("a transfer");
        t.done = true;
        let t = *t;
        let s = self.agents[2 * slot].tcp_sender().expect("a TCP sender");
        let fct = s.stats.completed_at.map(|at| at - t.start);
        let counts = Counts::of(s, self.counters[slot].data_dropped);
        self.push_row(c, &t, Row { start: t.start, size: t.size, fct, counts, session: -1, document: -1 });
    }

    /// Add a row for transfer `t` in slot `c` (a whole transfer, or one document of an HTTP
    /// connection) to the per-transfer table and the flow-completion statistics.
    fn push_row(&mut self, c: u32, t: &Transfer, row: Row) {
        let s = self.agents[2 * c as usize].tcp_sender().expect("a TCP sender");
        let completion = row.fct.map(secs);
        let log = &mut self.transfer_log;
        log.transfer.push(i64::from(t.id));
        let arr = &self.arrivals[t.arrivals as usize];
        log.name.push(match (&arr.population, t.label) {
            (Some(run), Some(label)) => run.label(label).to_string(),
            _ => arr.spec.name.clone(),
        });
        log.user.push(t.user.map_or(-1, |u| i64::from(self.users[u as usize].index)));
        log.start.push(secs(row.start));
        log.size.push(row.size as i64);
        log.completion.push(completion.unwrap_or(f64::NAN));
        log.goodput.push(completion.map_or(f64::NAN, |d| row.size as f64 * 8.0 / d));
        log.packets_sent.push(row.counts.packets_sent as i64);
        log.retransmits.push(row.counts.retransmits as i64);
        log.timeouts.push(row.counts.timeouts as i64);
        log.drops.push(row.counts.drops as i64);
        let st = &s.stats;
        log.initial_cwnd.push(st.initial_cwnd);
        log.initial_ssthresh.push(if st.initial_ssthresh.is_finite() { st.initial_ssthresh } else { f64::NAN });
        let (srtt, rttvar) = st.initial_rtt.map_or((f64::NAN, f64::NAN), |(s, v)| (s / 1e9, v / 1e9));
        log.initial_srtt.push(srtt);
        log.initial_rttvar.push(rttvar);
        log.rtt_min.push(if st.rtt_n > 0 { secs(st.rtt_min) } else { f64::NAN });
        log.sent_bytes.push(row.counts.sent_bytes as i64);
        log.session.push(row.session);
        log.document.push(row.document);
        log.total += 1;
        let group = self.arrivals[t.arrivals as usize].spec.group;
        self.count_fct(group, row.size, row.start, row.fct);
    }

    /// Give slot `c` back: its endpoints go, the slot waits on the free list.
    fn release_slot(&mut self, c: u32) {
        let slot = c as usize;
        self.transfers[slot] = None;
        self.agents[2 * slot] = Agent::Vacant;
        self.agents[2 * slot + 1] = Agent::Vacant;
        self.jitter[slot] = None;
        self.free_slots.push(c);
    }

    /// Record the transfers still running at the end of the run.
    pub(super) fn record_running_transfers(&mut self) {
        for c in self.n_static as u32..self.transfers.len() as u32 {
            match self.transfers[c as usize] {
                Some(t @ Transfer { done: false, http: Some(h), .. }) => self.record_unfinished_document(c, t, h),
                Some(Transfer { done: false, http: None, .. }) => self.record_transfer(c),
                _ => {}
            }
        }
    }

    /// The transfers recorded since the last call (a per-transfer table; see
    /// `docs/traffic.md`). Drained while a run goes on, it keeps the memory of a run with
    /// millions of transfers bounded; what is left is in the run's results.
    pub fn take_transfers(&mut self) -> Table {
        self.transfer_log.take()
    }

    /// Connection slots in use or free: the most connections open at once (plus the listed
    /// flows), however many transfers were made.
    pub fn slots(&self) -> usize {
        self.conns.len()
    }

    /// Transfers recorded so far (taken or not).
    pub fn transfers_recorded(&self) -> u64 {
        self.transfer_log.total
    }
}
