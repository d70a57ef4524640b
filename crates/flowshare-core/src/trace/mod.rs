//! Packet event traces and pcap captures (`[trace]` in a scenario; see `docs/traces.md`).
//!
//! The simulation reports each packet event to a [`Tracer`] when the scenario asks for a trace;
//! without a `[trace]` section there is no tracer and the event loop only tests an `Option`.
//! Events are kept column by column in narrow vectors (about 32 bytes per event, amortized
//! growth only) and turned into a [`Table`] sorted by time at the end of the run.
//!
//! Because a FIFO link computes a packet's departure when it accepts it (ADR 0003), enqueue and
//! dequeue events of exclusive links are known, and recorded, before the simulation reaches
//! their time. Recording order is therefore causal per packet but not sorted by time; the final
//! table is sorted by time with a stable sort, so events of equal time keep their causal order.

pub mod pcap;

use crate::net::sched::Removal;
use crate::net::{LinkId, Network, Refusal};
use crate::packet::{Kind, Packet};
use crate::table::{Column, Table};
use crate::units::{Dur, Time};
use crate::ConfigError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Kinds of trace events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum EventKind {
    /// An endpoint puts a packet on the network (a sender's segment, a sink's ACK).
    Send = 0,
    /// A link direction accepts a packet into its queue.
    Enqueue = 1,
    /// A packet stops occupying its queue: the end of its transmission.
    Dequeue = 2,
    /// A packet is lost (see [`Reason`]).
    Drop = 3,
    /// A data segment (or SYN) reaches the receiving host.
    Receive = 4,
    /// An ACK (or SYN-ACK) reaches the sending host.
    Ack = 5,
}

impl EventKind {
    /// Every kind, in code order.
    pub const ALL: [EventKind; 6] =
        [EventKind::Send, EventKind::Enqueue, EventKind::Dequeue, EventKind::Drop, EventKind::Receive, EventKind::Ack];

    /// The name used in scenarios and result tables.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Send => "send",
            EventKind::Enqueue => "enqueue",
            EventKind::Dequeue => "dequeue",
            EventKind::Drop => "drop",
            EventKind::Receive => "receive",
            EventKind::Ack => "ack",
        }
    }
}

/// Why an event happened; so far only drops have a reason. New loss causes (AQM, link loss
/// models) get new codes; existing codes never change meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Reason {
    /// No reason recorded (every event but a drop).
    None = 0,
    /// The queue was full on arrival.
    Overflow = 1,
    /// A scenario's `drop_segments` removed the segment before it entered the network.
    Forced = 2,
    /// An active queue (RED) dropped the packet early, before the queue was full.
    Early = 3,
    /// The link's loss model discarded the packet after its transmission.
    LinkLoss = 4,
    /// The link direction went down while the packet waited, was transmitted or propagated.
    LinkDown = 5,
    /// No route: at the sender's first hop when the flow has none, or at a node a packet
    /// reached after a route change when that node is not on its flow's new route.
    NoRoute = 6,
    /// A queued packet was pushed out to make room for an arrival (DRR's `push_out_longest`,
    /// FQ-CoDel's drop from the fattest queue).
    PushOut = 7,
    /// CoDel dropped a queued packet when dequeuing it (FQ-CoDel).
    Codel = 8,
    /// A packet carried as ATM cells lost one of them: AAL5 discarded it at reassembly.
    Reassembly = 9,
}

impl From<Refusal> for Reason {
    /// The reason of a drop a link's queue refused on arrival.
    fn from(r: Refusal) -> Reason {
        match r {
            Refusal::Early => Reason::Early,
            Refusal::Overflow => Reason::Overflow,
            // A loss model before the queue: lost on arrival.
            Refusal::Lost => Reason::LinkLoss,
        }
    }
}

impl From<Removal> for Reason {
    /// The reason of a drop of a packet a scheduler removed from its queue.
    fn from(r: Removal) -> Reason {
        match r {
            Removal::PushOut => Reason::PushOut,
            Removal::Codel => Reason::Codel,
        }
    }
}

impl Reason {
    /// Every reason, in code order.
    pub const ALL: [Reason; 10] = [
        Reason::None,
        Reason::Overflow,
        Reason::Forced,
        Reason::Early,
        Reason::LinkLoss,
        Reason::LinkDown,
        Reason::NoRoute,
        Reason::PushOut,
        Reason::Codel,
        Reason::Reassembly,
    ];

    /// The name in result tables (empty for [`Reason::None`], which tables show as missing).
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::None => "",
            Reason::Overflow => "overflow",
            Reason::Forced => "forced",
            Reason::Early => "early",
            Reason::LinkLoss => "link_loss",
            Reason::LinkDown => "link_down",
            Reason::NoRoute => "no_route",
            Reason::PushOut => "push_out",
            Reason::Codel => "codel",
            Reason::Reassembly => "reassembly",
        }
    }
}

/// Code of a packet type in the `packet` column.
pub fn packet_code(kind: Kind) -> u8 {
    match kind {
        Kind::Data => 0,
        Kind::Ack => 1,
        Kind::Syn => 2,
        Kind::SynAck => 3,
        Kind::Udp => 4,
        Kind::TfrcData => 5,
        Kind::TfrcFeedback => 6,
        Kind::Cell => 7,
    }
}

/// Names of the `packet` codes, in code order.
pub const PACKET_NAMES: [&str; 8] = ["data", "ack", "syn", "synack", "udp", "tfrc_data", "tfrc_feedback", "cell"];

/// The `[trace]` section of a scenario.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceCfg {
    /// Record the event trace.
    #[serde(default)]
    pub events: bool,
    /// Only these flows (indices); absent = every flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows: Option<Vec<u32>>,
    /// Link events only on these links: a link name (both directions), `"from->to"` (one
    /// direction) or, in a dumbbell, `"bottleneck"`; absent = every link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links: Option<Vec<String>>,
    /// Only these kinds; absent = every kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kinds: Option<Vec<EventKind>>,
    /// Events before this time are left out.
    #[serde(default)]
    pub start: Dur,
    /// Events after this time are left out; absent = the end of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Dur>,
    /// Link directions to capture in pcap files, selected like `links`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pcap: Vec<String>,
    /// Flow groups (with arrivals) whose open transfers the `concurrency` table follows;
    /// empty = no table.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub concurrency: Vec<String>,
}

impl TraceCfg {
    /// The kinds of event kept, as a mask (bit `k`: the kind with code `k`).
    pub fn kinds_kept(&self) -> u8 {
        self.kinds.as_ref().map_or(u8::MAX, |kinds| kinds.iter().fold(0, |m, k| m | 1 << *k as u8))
    }

    /// Check the section against the built network and resolve it. `bottleneck` is the
    /// link (full-duplex index) the name `"bottleneck"` stands for, if any.
    pub fn resolve(
        &self,
        net: &Network,
        n_flows: usize,
        bottleneck: Option<usize>,
        end: Time,
    ) -> Result<TraceSpec, ConfigError> {
        let filters_set = self.flows.is_some()
            || self.links.is_some()
            || self.kinds.is_some()
            || self.start.0 > 0
            || self.stop.is_some();
        if filters_set && !self.events {
            let field = [
                ("flows", self.flows.is_some()),
                ("links", self.links.is_some()),
                ("kinds", self.kinds.is_some()),
                ("start", self.start.0 > 0),
                ("stop", self.stop.is_some()),
            ]
            .iter()
            .find(|f| f.1)
            .map_or("events", |f| f.0);
            return Err(ConfigError::new(
                format!("trace.{field}"),
                "filters the event trace, which is off; set trace.events = true",
            ));
        }
        let mut flow_mask = Vec::new();
        if let Some(flows) = &self.flows {
            if flows.is_empty() {
                return Err(ConfigError::new("trace.flows", "is empty; omit it to trace every flow"));
            }
            flow_mask = vec![false; n_flows];
            for (i, &f) in flows.iter().enumerate() {
                if f as usize >= n_flows {
                    return Err(ConfigError::new(
                        format!("trace.flows[{i}]"),
                        format!("flow {f} does not exist; flows are 0..{}", n_flows.saturating_sub(1)),
                    ));
                }
                flow_mask[f as usize] = true;
            }
        }
        let mut link_mask = Vec::new();
        if let Some(links) = &self.links {
            if links.is_empty() {
                return Err(ConfigError::new("trace.links", "is empty; omit it to trace every link"));
            }
            link_mask = vec![false; net.links.len()];
            for (i, sel) in links.iter().enumerate() {
                for q in select_links(net, sel, bottleneck, &format!("trace.links[{i}]"))? {
                    link_mask[q as usize] = true;
                }
            }
        }
        if self.kinds.as_ref().is_some_and(Vec::is_empty) {
            return Err(ConfigError::new(
                "trace.kinds",
                "is empty; omit it to trace every kind (send, enqueue, dequeue, drop, receive, ack)",
            ));
        }
        let kind_mask = self.kinds_kept();
        let stop = self.stop.map_or(end, |s| s.0);
        if self.stop.is_some() && stop <= self.start.0 {
            return Err(ConfigError::new("trace.stop", format!("{} is not after start = {}", Dur(stop), self.start)));
        }
        let mut pcap = Vec::new();
        for (i, sel) in self.pcap.iter().enumerate() {
            for q in select_links(net, sel, bottleneck, &format!("trace.pcap[{i}]"))? {
                if net.links[q as usize].cells {
                    return Err(ConfigError::new(
                        format!("trace.pcap[{i}]"),
                        "selects a cell link (cells = true): pcap captures hold IP packets, not ATM cells; capture a link outside the cell network",
                    ));
                }
                if !pcap.contains(&q) {
                    pcap.push(q);
                }
            }
        }
        Ok(TraceSpec { events: self.events, flow_mask, link_mask, kind_mask, start: self.start.0, stop, pcap })
    }
}

impl TraceCfg {
    /// Which of `groups` (each flow group's name and whether it has arrivals, in order)
    /// `concurrency` names, as a mask; `None` when it names none.
    pub fn concurrency_groups(&self, groups: &[(&str, bool)]) -> Result<Option<Vec<bool>>, ConfigError> {
        if self.concurrency.is_empty() {
            return Ok(None);
        }
        let allowed: Vec<String> = groups.iter().filter(|g| g.1).map(|g| format!("\"{}\"", g.0)).collect();
        let give = if allowed.is_empty() {
            "the scenario has no flow group with arrivals".to_string()
        } else {
            format!("give groups with arrivals: {}", allowed.join(", "))
        };
        let mut mask = vec![false; groups.len()];
        for (i, name) in self.concurrency.iter().enumerate() {
            let path = format!("trace.concurrency[{i}]");
            let found: Vec<usize> = (0..groups.len()).filter(|&g| groups[g].0 == name.as_str()).collect();
            if found.is_empty() {
                return Err(ConfigError::new(path, format!("no flow group is named \"{name}\"; {give}")));
            }
            let with_arrivals: Vec<usize> = found.into_iter().filter(|&g| groups[g].1).collect();
            if with_arrivals.is_empty() {
                return Err(ConfigError::new(
                    path,
                    format!("flow group \"{name}\" has no arrivals, so it opens no transfers; {give}"),
                ));
            }
            for g in with_arrivals {
                mask[g] = true;
            }
        }
        Ok(Some(mask))
    }
}

/// Link directions a selector names.
fn select_links(net: &Network, sel: &str, bottleneck: Option<usize>, path: &str) -> Result<Vec<LinkId>, ConfigError> {
    if let Some(k) = net.link_names.iter().position(|n| n == sel) {
        return Ok(net.dirs_of(k));
    }
    if sel == "bottleneck" {
        if let Some(k) = bottleneck {
            return Ok(net.dirs_of(k));
        }
    }
    if let Some((a, b)) = sel.split_once("->") {
        let dirs: Vec<LinkId> = (0..net.links.len() as LinkId)
            .filter(|&q| net.nodes[net.links[q as usize].from as usize] == a.trim() && net.to_name(q) == b.trim())
            .collect();
        if !dirs.is_empty() {
            return Ok(dirs);
        }
        return Err(ConfigError::new(path, format!("no link goes from \"{}\" to \"{}\"", a.trim(), b.trim())));
    }
    const SHOWN: usize = 6;
    let mut names: Vec<String> = net.link_names.iter().take(SHOWN).map(|n| format!("\"{n}\"")).collect();
    if net.link_names.len() > SHOWN {
        names.push(format!("… ({} links)", net.link_names.len()));
    }
    let alias = if bottleneck.is_some() { "\"bottleneck\", " } else { "" };
    Err(ConfigError::new(
        path,
        format!("unknown link \"{sel}\"; give {alias}a link name ({}) or a direction \"from->to\"", names.join(", ")),
    ))
}

/// A resolved `[trace]` section.
#[derive(Clone, Debug)]
pub struct TraceSpec {
    /// Record events.
    pub events: bool,
    /// Per flow, traced or not; empty = all.
    pub flow_mask: Vec<bool>,
    /// Per link direction, link events traced or not; empty = all.
    pub link_mask: Vec<bool>,
    /// Bit `k` set: kind with code `k` traced.
    pub kind_mask: u8,
    /// Time window, inclusive, ns.
    pub start: Time,
    /// End of the window, inclusive, ns.
    pub stop: Time,
    /// Link directions captured to pcap files.
    pub pcap: Vec<LinkId>,
}

impl TraceSpec {
    /// Every event of every flow at every link direction, at any time, and no pcap capture.
    pub fn everything() -> TraceSpec {
        TraceSpec {
            events: true,
            flow_mask: Vec::new(),
            link_mask: Vec::new(),
            kind_mask: u8::MAX,
            start: 0,
            stop: Time::MAX,
            pcap: Vec::new(),
        }
    }

    /// Whether the kind and flow filters keep an event of `kind` of flow `flow` (the time
    /// window and the link filter aside).
    #[inline]
    pub fn keeps(&self, kind: EventKind, flow: u32) -> bool {
        self.kind_mask & (1 << kind as u8) != 0
            && (self.flow_mask.is_empty() || self.flow_mask.get(flow as usize) == Some(&true))
    }

    /// Whether the link filter keeps events at link direction `link`.
    #[inline]
    pub fn keeps_link(&self, link: LinkId) -> bool {
        self.link_mask.is_empty() || self.link_mask.get(link as usize) == Some(&true)
    }
}

/// Narrow columns of the recorded events, in recording order.
#[derive(Debug, Default)]
struct Columns {
    time: Vec<u64>,
    seq: Vec<u64>,
    flow: Vec<u32>,
    link: Vec<i32>,
    size: Vec<u32>,
    acked: Vec<u32>,
    kind: Vec<u8>,
    packet: Vec<u8>,
    retx: Vec<bool>,
    reason: Vec<u8>,
}

/// What pcap headers need to know about a flow.
#[derive(Clone, Copy, Debug)]
pub struct FlowWire {
    /// Payload bytes per full segment.
    pub mss: u32,
    /// Header bytes of a data segment in the simulated wire size.
    pub header: u32,
    /// Bytes of a finite transfer.
    pub size: Option<u64>,
}

/// One pcap capture of a run.
#[derive(Clone, Debug)]
pub struct PcapFile {
    /// Link direction (queue id).
    pub queue: u32,
    /// Where it was written.
    pub path: PathBuf,
    /// Packets recorded.
    pub packets: u64,
}

/// The trace part of a run's results.
#[derive(Clone, Debug, Default)]
pub struct TraceResults {
    /// The event table, when events were traced (see `docs/traces.md`).
    pub events: Option<Table>,
    /// The pcap files written.
    pub pcap: Vec<PcapFile>,
    /// The first error writing a pcap file, if any (the files are then incomplete).
    pub pcap_error: Option<String>,
}

/// Records the events of one run.
#[derive(Debug)]
pub struct Tracer {
    spec: TraceSpec,
    cols: Columns,
    /// Per link direction, the index of its pcap writer.
    pcap_of: Vec<Option<u32>>,
    writers: Vec<(u32, pcap::PcapWriter)>,
    /// Per connection slot: its wire format, the highest cumulative ACK its sender received,
    /// and the flow (or transfer) number events are recorded under.
    wire: Vec<FlowWire>,
    high_ack: Vec<u64>,
    flow_of: Vec<u32>,
    end: Time,
}

impl Tracer {
    /// A tracer for `spec` on a network of `links` link directions, for a run ending at `end`.
    pub fn new(spec: TraceSpec, links: usize, wire: Vec<FlowWire>, end: Time) -> Tracer {
        let high_ack = vec![0; wire.len()];
        let flow_of = (0..wire.len() as u32).collect();
        Tracer {
            spec,
            cols: Columns::default(),
            pcap_of: vec![None; links],
            writers: Vec::new(),
            wire,
            high_ack,
            flow_of,
            end,
        }
    }

    /// Connection slot `slot` now carries transfer `flow`, sent with `wire`.
    pub fn set_slot(&mut self, slot: u32, flow: u32, wire: FlowWire) {
        let s = slot as usize;
        if s >= self.wire.len() {
            self.wire.resize(s + 1, wire);
            self.high_ack.resize(s + 1, 0);
            self.flow_of.resize(s + 1, flow);
        }
        (self.wire[s], self.high_ack[s], self.flow_of[s]) = (wire, 0, flow);
    }

    /// Open one pcap file per selected link direction in `dir` (which must exist), named
    /// `<from>-<to>.pcap` (with `.q<queue>` before `.pcap` when two directions share the
    /// node pair). Returns the paths.
    pub fn open_pcap(&mut self, dir: &Path, net: &Network) -> std::io::Result<Vec<PathBuf>> {
        let name = |q: LinkId| format!("{}-{}", net.nodes[net.links[q as usize].from as usize], net.to_name(q));
        let mut paths = Vec::new();
        for &q in &self.spec.pcap {
            let base = name(q);
            let shared = net.links.iter().enumerate().filter(|(k, _)| name(*k as LinkId) == base).count() > 1;
            let file = if shared { format!("{base}.q{q}.pcap") } else { format!("{base}.pcap") };
            let path = dir.join(file);
            let w = pcap::PcapWriter::create(&path)?;
            self.pcap_of[q as usize] = Some(self.writers.len() as u32);
            self.writers.push((q, w));
            paths.push(path);
        }
        Ok(paths)
    }

    #[inline]
    fn wanted(&self, t: Time, kind: EventKind, flow: u32) -> bool {
        self.spec.events && t >= self.spec.start && t <= self.spec.stop && self.spec.keeps(kind, flow)
    }

    #[inline]
    fn push(&mut self, t: Time, kind: EventKind, p: &Packet, link: i32, reason: Reason, acked: u64) {
        let c = &mut self.cols;
        c.time.push(t);
        c.seq.push(p.seq);
        c.flow.push(self.flow_of[p.conn as usize]);
        c.link.push(link);
        c.size.push(p.size);
        c.acked.push(u32::try_from(acked).unwrap_or(u32::MAX));
        c.kind.push(kind as u8);
        c.packet.push(packet_code(p.kind));
        c.retx.push(p.retx());
        c.reason.push(reason as u8);
    }

    /// An event at an endpoint (`send`, `receive`, `ack`, or a forced `drop`). For an `ack`
    /// the tracer works out how many segments it newly acknowledges.
    #[inline]
    pub fn endpoint(&mut self, t: Time, kind: EventKind, p: &Packet, reason: Reason) {
        let mut acked = 0;
        if kind == EventKind::Ack && p.kind == Kind::Ack {
            let high = &mut self.high_ack[p.conn as usize];
            acked = p.seq.saturating_sub(*high);
            *high = (*high).max(p.seq);
        }
        if self.wanted(t, kind, self.flow_of[p.conn as usize]) {
            self.push(t, kind, p, -1, reason, acked);
        }
    }

    #[inline]
    fn link_wanted(&self, link: LinkId) -> bool {
        self.spec.keeps_link(link)
    }

    /// Link direction `link` refused `p` arriving at `t`.
    #[inline]
    pub fn dropped(&mut self, t: Time, p: &Packet, link: LinkId, reason: Reason) {
        if self.link_wanted(link) && self.wanted(t, EventKind::Drop, self.flow_of[p.conn as usize]) {
            self.push(t, EventKind::Drop, p, link as i32, reason, 0);
        }
    }

    /// Link direction `link` accepted `p` arriving at `t`; its transmission ends at `done`.
    #[inline]
    pub fn accepted(&mut self, t: Time, done: Time, p: &Packet, link: LinkId) {
        self.enqueued(t, p, link);
        self.transmitted(done, p, link);
    }

    /// Scheduled link direction `link` put `p`, arriving at `t`, in its queue.
    #[inline]
    pub fn enqueued(&mut self, t: Time, p: &Packet, link: LinkId) {
        if self.link_wanted(link) && self.wanted(t, EventKind::Enqueue, self.flow_of[p.conn as usize]) {
            self.push(t, EventKind::Enqueue, p, link as i32, Reason::None, 0);
        }
    }

    /// Link direction `link` is sending `p`; its transmission ends at `done` (the dequeue
    /// event and the pcap record).
    #[inline]
    pub fn transmitted(&mut self, done: Time, p: &Packet, link: LinkId) {
        if self.link_wanted(link) && self.wanted(done, EventKind::Dequeue, self.flow_of[p.conn as usize]) {
            self.push(done, EventKind::Dequeue, p, link as i32, Reason::None, 0);
        }
        if let Some(w) = self.pcap_of[link as usize] {
            if done <= self.end {
                let wire = self.wire[p.conn as usize];
                self.writers[w as usize].1.write(done, p, &wire);
            }
        }
    }

    /// Flush the pcap files and build the event table: events after `end` (known ahead of
    /// time, see the module notes) are left out, the rest sorted by time, stably.
    pub fn finish(mut self, end: Time) -> TraceResults {
        let mut out = TraceResults { events: self.take_events(end), ..TraceResults::default() };
        for (q, w) in self.writers {
            let (path, packets, err) = w.finish();
            if out.pcap_error.is_none() {
                out.pcap_error = err.map(|e| format!("{}: {e}", path.display()));
            }
            out.pcap.push(PcapFile { queue: q, path, packets });
        }
        out
    }

    /// The recorded events at or before `upto`, sorted by time (stably), as a table; they are
    /// removed and later ones kept. `None` when events are not traced. Every event at or
    /// before the time the simulation has reached is already recorded, so the tables taken
    /// one after the other are in time order.
    pub fn take_events(&mut self, upto: Time) -> Option<Table> {
        if !self.spec.events {
            return None;
        }
        let c = &mut self.cols;
        let mut order: Vec<u32> = (0..c.time.len() as u32).filter(|&i| c.time[i as usize] <= upto).collect();
        if !order.windows(2).all(|w| c.time[w[0] as usize] <= c.time[w[1] as usize]) {
            order.sort_by_key(|&i| c.time[i as usize]);
        }
        fn col<T: Copy>(v: &[T], order: &[u32], f: impl Fn(T) -> i64) -> Column {
            Column::I64(order.iter().map(|&i| f(v[i as usize])).collect())
        }
        let mut t = Table::default();
        t.push("time_ns", col(&c.time, &order, |x| x as i64));
        t.push("kind", col(&c.kind, &order, i64::from));
        t.push("flow", col(&c.flow, &order, i64::from));
        t.push("link", col(&c.link, &order, i64::from));
        t.push("packet", col(&c.packet, &order, i64::from));
        t.push("seq", col(&c.seq, &order, |x| x as i64));
        t.push("size", col(&c.size, &order, i64::from));
        t.push("retx", col(&c.retx, &order, i64::from));
        t.push("acked", col(&c.acked, &order, i64::from));
        t.push("reason", col(&c.reason, &order, i64::from));
        c.retain_after(upto);
        Some(t)
    }
}

impl Columns {
    /// Keep only the events after `t`, in recording order.
    fn retain_after(&mut self, t: Time) {
        let keep: Vec<bool> = self.time.iter().map(|&x| x > t).collect();
        fn retain<T>(v: &mut Vec<T>, keep: &[bool]) {
            let mut i = 0;
            v.retain(|_| {
                i += 1;
                keep[i - 1]
            });
        }
        retain(&mut self.time, &keep);
        retain(&mut self.seq, &keep);
        retain(&mut self.flow, &keep);
        retain(&mut self.link, &keep);
        retain(&mut self.size, &keep);
        retain(&mut self.acked, &keep);
        retain(&mut self.kind, &keep);
        retain(&mut self.packet, &keep);
        retain(&mut self.retx, &keep);
        retain(&mut self.reason, &keep);
    }
}

/// Names of the codes of the event table's coded columns: (`kind`, `packet`, `reason`).
pub fn code_names() -> [(&'static str, Vec<&'static str>); 3] {
    [
        ("kind", EventKind::ALL.iter().map(|k| k.as_str()).collect()),
        ("packet", PACKET_NAMES.to_vec()),
        ("reason", Reason::ALL.iter().map(|r| r.as_str()).collect()),
    ]
}
