//! The live event loop: one agent, one datagram transport, one clock.
//!
//! Each [`LiveEndpoint::step`] takes every pending datagram (decoding it, dropping and counting
//! what is malformed, foreign or not admissible, delivering the rest to the agent), then runs
//! the agent's due wake-up and its congestion controller's due timer, sending what the agent
//! produced after each call. It returns the next deadline; [`run_endpoint`] sleeps until then or
//! until a datagram arrives, for the configured duration or until a stop flag is set.
//!
//! The agent is driven as the simulation drives it (`Agent::start` at the flow's start time,
//! `Agent::stop` at its stop time, a wake-up when `next_wake` is due, the controller's clocked
//! members and timers), with two differences a real clock forces: a wake-up runs at the time
//! the loop gets to it, a little after its deadline (agents check their own deadlines, so this
//! is allowed); and a controller timer fires with its scheduled time, which is what the host's
//! bookkeeping of pending timers expects. A TFRC receiver sees the sender's timestamps on its
//! own clock ([`crate::peer_clock`]).
//!
//! A reliable transfer ([`crate::reliable`]) sits beside a TFRC agent: at the sender, each
//! TFRC data packet the agent produces is given the block the reliable sender picks, block
//! ACKs go to the reliable sender, and the agent is stopped once every block is acknowledged;
//! at the receiver, the block is taken off each data packet before the agent sees it and
//! handed to the reliable receiver, whose block ACKs go out after the agent's output.

use crate::admit::{Admission, Rejection};
use crate::config::{Built, EndpointConfig};
use crate::error::LiveError;
use crate::peer_clock::PeerClock;
use crate::reliable;
use crate::report::{AgentReport, Counters, EndpointReport, ReliableReport};
use crate::transport::{Clock, MonotonicClock, Transport, UdpTransport};
use crate::wire::{self, Datagram, MAX_DATAGRAM};
use flowshare_core::agent::{Agent, Io, Side};
use flowshare_core::cc::host::GroupId;
use flowshare_core::cc::{CcHost, MemberId};
use flowshare_core::engine::WakeTag;
use flowshare_core::packet::{Kind, Packet};
use flowshare_core::scenario::ConnSpec;
use flowshare_core::units::{Time, MAX_TIME};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Datagrams taken per step before timers get their turn, so that a flood cannot starve them.
const RECV_BATCH: usize = 256;

/// This side's half of a reliable transfer.
enum Half {
    Sender(reliable::Sender),
    Receiver(reliable::Receiver),
}

/// One side of one connection, live.
pub struct LiveEndpoint<T: Transport, C: Clock> {
    spec: ConnSpec,
    flow: usize,
    side: Side,
    conn_id: u32,
    peer: SocketAddr,
    agent: Agent,
    cc: CcHost,
    transport: T,
    clock: C,
    admission: Admission,
    /// The peer's timestamps on this clock (for a TFRC receiver).
    peer_clock: PeerClock,
    /// A reliable transfer's half, for a sized TFRC flow.
    reliable: Option<Half>,
    /// The sender's timestamp of the latest data packet (a reliable receiver echoes it).
    last_peer_ts: Time,
    counters: Counters,
    /// The agent's output, and a datagram being written or read.
    out: Vec<Packet>,
    tx: Vec<u8>,
    rx: Vec<u8>,
    /// Controller timers to fire: (time, group, generation).
    timers: Vec<(Time, GroupId, u16)>,
    clocked: Vec<MemberId>,
    started: bool,
    stopped: bool,
}

impl<T: Transport, C: Clock> LiveEndpoint<T, C> {
    /// The endpoint `cfg` describes, on `transport` and `clock` (`cfg.bind` is the caller's
    /// business: the transport is already bound).
    pub fn new(cfg: &EndpointConfig, transport: T, clock: C) -> Result<Self, LiveError> {
        Ok(Self::from_built(cfg, cfg.build()?, transport, clock))
    }

    /// The endpoint of `cfg`, whose flow and agent `cfg.build()` gave.
    fn from_built(cfg: &EndpointConfig, Built { spec, agent, transfer }: Built, transport: T, clock: C) -> Self {
        let udp_header = spec.source.as_ref().map_or(0, |s| s.header);
        let reliable = transfer.map(|t| match cfg.side {
            Side::Source => Half::Sender(reliable::Sender::new(t)),
            Side::Destination => Half::Receiver(reliable::Receiver::new(t)),
        });
        LiveEndpoint {
            spec,
            flow: cfg.flow,
            side: cfg.side,
            conn_id: cfg.conn_id,
            peer: cfg.peer,
            agent,
            cc: CcHost::new(),
            transport,
            clock,
            admission: Admission::new(udp_header),
            peer_clock: PeerClock::default(),
            reliable,
            last_peer_ts: 0,
            counters: Counters::default(),
            out: Vec::with_capacity(64),
            tx: Vec::with_capacity(MAX_DATAGRAM),
            // One byte more than the largest datagram, so that a longer one shows as too long.
            rx: vec![0; MAX_DATAGRAM + 1],
            timers: Vec::new(),
            clocked: Vec::new(),
            started: false,
            stopped: false,
        }
    }

    /// The agent.
    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    /// The sending half of the reliable transfer, if this is its sender.
    pub fn reliable_sender(&self) -> Option<&reliable::Sender> {
        match &self.reliable {
            Some(Half::Sender(s)) => Some(s),
            _ => None,
        }
    }

    /// The receiving half of the reliable transfer, if this is its receiver.
    pub fn reliable_receiver(&self) -> Option<&reliable::Receiver> {
        match &self.reliable {
            Some(Half::Receiver(r)) => Some(r),
            _ => None,
        }
    }

    /// What has been counted so far.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The transport.
    pub fn transport(&self) -> &T {
        &self.transport
    }

    /// The transport, mutably (to wait on it).
    pub fn transport_mut(&mut self) -> &mut T {
        &mut self.transport
    }

    /// The clock's reading now.
    pub fn now(&self) -> Time {
        self.clock.now()
    }

    /// Take pending datagrams and run what is due. Returns the next deadline, if any.
    pub fn step(&mut self) -> Result<Option<Time>, LiveError> {
        let now = self.clock.now();
        if self.side == Side::Source {
            if !self.started && now >= self.spec.start {
                self.started = true;
                let mut io = Io { now, out: &mut self.out, cc: &mut self.cc };
                self.agent.start(&mut io);
                self.after_agent(now)?;
            }
            if self.started && !self.stopped && self.spec.stop.is_some_and(|t| now >= t) {
                self.stopped = true;
                self.agent.stop(now);
            }
        }
        for _ in 0..RECV_BATCH {
            let got = self.transport.recv(&mut self.rx).map_err(|source| LiveError::Io { field: "socket", source })?;
            let Some((len, from)) = got else { break };
            self.on_datagram(len, from)?;
        }
        let now = self.clock.now();
        if self.agent.next_wake().is_some_and(|t| t <= now) {
            let mut io = Io { now, out: &mut self.out, cc: &mut self.cc };
            self.agent.on_wake(&mut io);
            self.after_agent(now)?;
        }
        while let Some(i) = self.timers.iter().position(|&(t, _, _)| t <= now) {
            let (t, g, gen) = self.timers.swap_remove(i);
            self.cc.fire_timer(WakeTag::new(g, gen), t);
            self.after_agent(now)?;
        }
        Ok(self.next_deadline())
    }

    /// When something is next due: the flow's start or stop, the agent, a controller timer.
    pub fn next_deadline(&self) -> Option<Time> {
        let start = (self.side == Side::Source && !self.started).then_some(self.spec.start);
        let stop = self.spec.stop.filter(|_| self.side == Side::Source && !self.stopped);
        let timer = self.timers.iter().map(|&(t, _, _)| t).min();
        [start, stop, self.agent.next_wake(), timer].into_iter().flatten().min()
    }

    /// Datagram `rx[..len]` arrived from `from`.
    fn on_datagram(&mut self, len: usize, from: SocketAddr) -> Result<(), LiveError> {
        if from != self.peer {
            self.counters.foreign_peer += 1;
            return Ok(());
        }
        let d = match wire::decode(&self.rx[..len]) {
            Ok(d) => d,
            Err(e) => {
                self.counters.malformed[e.index()] += 1;
                return Ok(());
            }
        };
        if d.conn_id() != self.conn_id {
            self.counters.foreign_connection += 1;
            return Ok(());
        }
        let now = self.clock.now();
        let d = match d {
            Datagram::Packet(d) => d,
            Datagram::BlockAck { ack, .. } => return self.on_block_ack(&ack, len, now),
        };
        let mut p = d.packet;
        p.conn = self.flow as u32;
        // A block number is for a reliable receiver only; the agent sees the packet without it.
        let block = wire::block_of(&p);
        if let (Some(b), Agent::TfrcReceiver(_)) = (block, &self.agent) {
            let admitted = match &self.reliable {
                Some(Half::Receiver(r)) => r.admit(b),
                _ => Err(Rejection::NotReliable),
            };
            if let Err(r) = admitted {
                self.counters.rejected[r as usize] += 1;
                return Ok(());
            }
        }
        if let Err(r) = self.admission.check(&self.agent, &p, now) {
            self.counters.rejected[r as usize] += 1;
            return Ok(());
        }
        wire::clear_block(&mut p);
        if let Agent::TfrcReceiver(_) = self.agent {
            self.last_peer_ts = p.ts;
            p.ts = self.peer_clock.inbound(p.ts, now);
        }
        self.counters.datagrams_received += 1;
        self.counters.bytes_received += len as u64;
        let mut io = Io { now, out: &mut self.out, cc: &mut self.cc };
        self.agent.on_packet(&p, &mut io);
        if let (Some(b), Some(Half::Receiver(r))) = (block, &mut self.reliable) {
            r.on_block(b, now);
        }
        self.after_agent(now)
    }

    /// Block ACK `ack`, a datagram of `len` bytes, arrived at `now`.
    fn on_block_ack(&mut self, ack: &wire::BlockAck, len: usize, now: Time) -> Result<(), LiveError> {
        let admitted = match (&self.reliable, &self.agent) {
            (Some(Half::Sender(s)), _) => s.admit(ack, now),
            (None, Agent::TfrcSender(_)) => Err(Rejection::NotReliable),
            _ => Err(Rejection::UnexpectedKind),
        };
        if let Err(r) = admitted {
            self.counters.rejected[r as usize] += 1;
            return Ok(());
        }
        self.counters.datagrams_received += 1;
        self.counters.bytes_received += len as u64;
        if let Some(Half::Sender(s)) = &mut self.reliable {
            if s.on_ack(ack, now) {
                // Every block has arrived: the transfer is over, and so is the flow.
                self.agent.stop(now);
            }
        }
        Ok(())
    }

    /// After the agent ran: send what it produced, let the members its controller clocked
    /// send, and note the controller's timers.
    fn after_agent(&mut self, now: Time) -> Result<(), LiveError> {
        self.flush(now)?;
        while self.cc.has_pending() {
            self.cc.take_clocked(&mut self.clocked);
            self.cc.timer_events(&mut self.timers);
            for _ in std::mem::take(&mut self.clocked) {
                let mut io = Io { now, out: &mut self.out, cc: &mut self.cc };
                self.agent.clock(&mut io);
                self.flush(now)?;
            }
        }
        Ok(())
    }

    /// Encode and send the agent's output, then a block ACK if the reliable receiver wants
    /// one.
    fn flush(&mut self, now: Time) -> Result<(), LiveError> {
        for mut p in self.out.drain(..) {
            match (&mut self.reliable, &self.agent, p.kind) {
                // The reliable sender picks the block the packet carries.
                (Some(Half::Sender(s)), Agent::TfrcSender(a), Kind::TfrcData) => {
                    let rtt = a.rtt().map(|r| ((r * 1e9).round() as Time).min(MAX_TIME));
                    if let Some((block, bytes, why)) = s.next_block(p.seq, now, rtt) {
                        wire::set_block(&mut p, block);
                        // A repair or a probe shows as a retransmission on the wire.
                        p.set_retx(why != reliable::Pick::New);
                        // A short last block goes in a packet of its size.
                        if bytes < s.transfer().block_bytes {
                            p.size -= s.transfer().block_bytes - bytes;
                        }
                    }
                }
                (Some(Half::Receiver(r)), _, Kind::TfrcFeedback) => r.on_feedback(),
                _ => {}
            }
            let t_delay = match (&self.agent, p.kind) {
                (Agent::TfrcReceiver(k), Kind::TfrcFeedback) => {
                    let t_delay = k.last_data().map_or(0, |(ts, _)| p.ts.saturating_sub(ts));
                    p.ts = self.peer_clock.outbound(p.ts).max(t_delay);
                    t_delay
                }
                // The segment carries the sender's smoothed RTT, for whoever watches the wire.
                (Agent::TcpSender(s), Kind::Data) => {
                    let rtt = s.cc_state(&self.cc).rtt;
                    if rtt.samples > 0 && p.n_sack == 0 {
                        p.set_word(0, (rtt.srtt.round() as Time).min(MAX_TIME));
                    }
                    0
                }
                _ => 0,
            };
            wire::encode(&p, self.conn_id, t_delay, &mut self.tx)?;
            let sent =
                self.transport.send(&self.tx, self.peer).map_err(|source| LiveError::Io { field: "socket", source })?;
            if sent {
                self.counters.datagrams_sent += 1;
                self.counters.bytes_sent += self.tx.len() as u64;
            } else {
                self.counters.send_dropped += 1;
            }
        }
        if let Some(Half::Receiver(r)) = &mut self.reliable {
            if r.ack_due() {
                let ack = r.make_ack(self.last_peer_ts);
                wire::encode_block_ack(&ack, self.conn_id, &mut self.tx)?;
                let sent = self
                    .transport
                    .send(&self.tx, self.peer)
                    .map_err(|source| LiveError::Io { field: "socket", source })?;
                if sent {
                    self.counters.datagrams_sent += 1;
                    self.counters.bytes_sent += self.tx.len() as u64;
                } else {
                    self.counters.send_dropped += 1;
                }
            }
        }
        Ok(())
    }

    /// The report of a run that lasted `elapsed` ns.
    pub fn report(&mut self, elapsed: Time) -> EndpointReport {
        if let Agent::TcpSender(s) = &mut self.agent {
            s.finish(elapsed, &self.cc);
        }
        let agent = AgentReport::of(&self.agent, &self.cc, self.spec.cc.as_str());
        let reliable = self.reliable.as_ref().map(|h| match h {
            Half::Sender(s) => ReliableReport::sender(s, self.spec.start),
            // The flow's start on this clock: the sender's start time through the offset the
            // first data packet gave.
            Half::Receiver(r) => ReliableReport::receiver(r, self.peer_clock.to_local(self.spec.start)),
        });
        EndpointReport::new(self.flow, self.side, self.spec.transport(), elapsed, &self.counters, agent, reliable)
    }
}

/// Run for `duration` (core time from the clock's zero) or until `stop` is set, waiting on the
/// transport between deadlines.
pub fn run<T: Transport, C: Clock>(
    ep: &mut LiveEndpoint<T, C>,
    duration: Duration,
    stop: &AtomicBool,
) -> Result<EndpointReport, LiveError> {
    let end = duration.as_nanos().min(u128::from(u64::MAX)) as Time;
    /// The longest sleep without looking at the stop flag.
    const POLL_STOP: Time = 50_000_000;
    loop {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let next = ep.step()?;
        let now = ep.now();
        if now >= end {
            break;
        }
        let until = next.unwrap_or(end).min(end).min(now + POLL_STOP);
        let timeout = Duration::from_nanos(until.saturating_sub(now));
        ep.transport_mut().wait(Some(timeout)).map_err(|source| LiveError::Io { field: "socket", source })?;
    }
    let elapsed = ep.now().min(end);
    Ok(ep.report(elapsed))
}

/// Bind `cfg.bind`, run the endpoint `cfg` describes on the monotonic clock for
/// `cfg.duration` or until `stop` is set, and report.
pub fn run_endpoint(cfg: &EndpointConfig, stop: &AtomicBool) -> Result<EndpointReport, LiveError> {
    // The configuration is checked before the network is touched.
    let built = cfg.build()?;
    let transport = UdpTransport::bind(cfg.bind).map_err(|e| {
        LiveError::config("bind", format!("cannot bind {}: {e}; give a local address and a free port", cfg.bind))
    })?;
    let mut ep = LiveEndpoint::from_built(cfg, built, transport, MonotonicClock::start());
    run(&mut ep, cfg.duration, stop)
}
