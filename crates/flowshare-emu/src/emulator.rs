//! The emulator: two TUN devices in two network namespaces, joined by one link of a scenario.
//! Packets side a sends out of its device cross the link's forward direction and come out of
//! side b's device; side b's cross the reverse direction back.
//!
//! The loop reads every pending packet (stamped with the monotonic clock as it is read),
//! offers it to its direction, writes the packets that are due, and waits in `ppoll` until
//! the next due time or a readable device, spinning through the last microseconds so that
//! writes happen on time (see [`crate::clock::wait`]).
//!
//! With an event trace ([`EmulatorConfig::events`]) the link events of every packet of a flow
//! are recorded as the model decides them (`crate::events`), and written once the clock has
//! passed them, each loop after the due writes.

use crate::clock::{self, Realtime, TimerSlack};
use crate::direction::{Classify, Direction, Sink, Trace};
use crate::events::{EventCodes, EventLog, EventsConfig, EventsReport, RECORD_LEN};
use crate::flows::FlowMap;
use crate::pcap::Capture;
use crate::report::EmuReport;
use crate::tun::{self, Tun, TunConfig};
use crate::{netns, EmuError};
use flowshare_core::net::LinkDir;
use flowshare_core::trace::TraceSpec;
use flowshare_core::units::Time;
use flowshare_core::Scenario;
use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Packets read from one device before due writes are looked at again.
const READ_BATCH: usize = 64;

/// Which link of the scenario to emulate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkSelect {
    /// By name (`r0-r1` for a dumbbell's bottleneck, a graph link's `name` or `from-to`).
    Name(String),
    /// By position among the scenario's links and LANs, in declaration order.
    Index(usize),
}

/// What to emulate, and where.
#[derive(Clone, Debug)]
pub struct EmulatorConfig {
    /// Namespace of side a, which the link's forward direction leaves from.
    pub ns_a: String,
    /// Namespace of side b.
    pub ns_b: String,
    /// Device name in side a's namespace.
    pub dev_a: String,
    /// Device name in side b's namespace.
    pub dev_b: String,
    /// Side a's address.
    pub addr_a: Ipv4Addr,
    /// Side b's address, in side a's subnet.
    pub addr_b: Ipv4Addr,
    /// Prefix length of the subnet both addresses are in.
    pub prefix_len: u8,
    /// MTU of both devices.
    pub mtu: u32,
    /// The scenario whose link is emulated: its rate, delay, queue discipline and loss model
    /// per direction, built by the simulator's own builder.
    pub scenario: Scenario,
    /// Which of its links.
    pub link: LinkSelect,
    /// How long to run (unless stopped earlier).
    pub duration: Duration,
    /// Capture the packets leaving both directions to this pcap file.
    pub pcap: Option<PathBuf>,
    /// Record the link events of the flows' packets (with the scenario's `[trace]` filters of
    /// flows, links and kinds, when it asks for events).
    pub events: Option<EventsConfig>,
    /// Never sleep: poll the devices continuously, so that packets are also read within
    /// about a microsecond of reaching a device (a sleeping thread wakes tens to hundreds of
    /// microseconds late, more in a virtual machine), at the price of one busy core.
    pub busy_poll: bool,
    /// Run the emulator's thread under SCHED_FIFO at this priority (1 to 99) so that other
    /// work on the machine cannot hold back its writes; `None` keeps the thread's policy.
    /// Best with `busy_poll` off: a real-time thread that never sleeps monopolizes a core.
    pub realtime_priority: Option<i32>,
}

impl EmulatorConfig {
    /// Emulate `link` of `scenario` between namespaces `ns_a` and `ns_b`, with devices
    /// `emu-a` (10.77.0.1/24) and `emu-b` (10.77.0.2/24), MTU 1500, for one minute.
    pub fn new(ns_a: impl Into<String>, ns_b: impl Into<String>, scenario: Scenario, link: LinkSelect) -> Self {
        EmulatorConfig {
            ns_a: ns_a.into(),
            ns_b: ns_b.into(),
            dev_a: "emu-a".into(),
            dev_b: "emu-b".into(),
            addr_a: Ipv4Addr::new(10, 77, 0, 1),
            addr_b: Ipv4Addr::new(10, 77, 0, 2),
            prefix_len: 24,
            mtu: 1500,
            scenario,
            link,
            duration: Duration::from_secs(60),
            pcap: None,
            events: None,
            busy_poll: false,
            realtime_priority: None,
        }
    }

    /// Check the fields that do not need the scenario.
    pub fn check(&self) -> Result<(), EmuError> {
        netns::check_name("ns_a", &self.ns_a)?;
        netns::check_name("ns_b", &self.ns_b)?;
        if self.ns_a == self.ns_b {
            return Err(EmuError::config(
                "ns_b",
                format!("must differ from ns_a (\"{}\"): in one namespace the kernel would deliver locally", self.ns_a),
            ));
        }
        tun::check_name("dev_a", &self.dev_a)?;
        tun::check_name("dev_b", &self.dev_b)?;
        if !(1..=30).contains(&self.prefix_len) {
            return Err(EmuError::config(
                "prefix_len",
                format!("must be 1 to 30 (a subnet holding both addresses), got {}", self.prefix_len),
            ));
        }
        let mask = u32::MAX << (32 - u32::from(self.prefix_len));
        let (a, b) = (u32::from(self.addr_a), u32::from(self.addr_b));
        if a == b || a & mask != b & mask {
            let net = Ipv4Addr::from(a & mask);
            return Err(EmuError::config(
                "addr_b",
                format!(
                    "must be another address of side a's subnet {net}/{} (each side reaches the other through its device), got {}",
                    self.prefix_len, self.addr_b
                ),
            ));
        }
        if !(68..=65_535).contains(&self.mtu) {
            return Err(EmuError::config("mtu", format!("must be 68 to 65535 bytes (IPv4), got {}", self.mtu)));
        }
        if let Some(p) = self.realtime_priority.filter(|p| !(1..=99).contains(p)) {
            return Err(EmuError::config("realtime_priority", format!("must be 1 to 99 (SCHED_FIFO), got {p}")));
        }
        if self.duration.is_zero() {
            return Err(EmuError::config("duration", "must be greater than 0s"));
        }
        Ok(())
    }

    /// The link's two directions, built by the scenario builder with their queue disciplines
    /// and loss models, and how each classifies packets into flows.
    #[cfg(test)]
    pub(crate) fn directions(&self) -> Result<(Direction, Direction), EmuError> {
        self.parts().map(|p| (p.forward, p.reverse))
    }

    /// The link's two directions and what the event trace keeps.
    fn parts(&self) -> Result<Parts, EmuError> {
        if !self.scenario.changes.is_empty() {
            return Err(EmuError::config(
                "scenario.changes",
                "the emulator does not apply link changes; remove them or emulate one setting at a time",
            ));
        }
        let built = self.scenario.build()?;
        let filter = match &self.scenario.trace {
            Some(t) if t.events => {
                t.resolve(&built.net, built.conns.len(), self.scenario.bottleneck_link(), Time::MAX)?
            }
            _ => TraceSpec::everything(),
        };
        let mut net = built.net;
        let names = &net.link_names;
        let k = match &self.link {
            LinkSelect::Name(n) => names.iter().position(|x| x == n).ok_or_else(|| {
                EmuError::config("link", format!("no link is called \"{n}\"; links are {}", names.join(", ")))
            })?,
            LinkSelect::Index(i) if *i < names.len() => *i,
            LinkSelect::Index(i) => {
                return Err(EmuError::config(
                    "link",
                    format!("index {i} is out of range; the scenario has {} links and LANs", names.len()),
                ))
            }
        };
        let name = names[k].clone();
        if net.lans.iter().any(|l| l.link as usize == k) {
            return Err(EmuError::config(
                "link",
                format!("\"{name}\" is a LAN; the emulator joins two namespaces over a point-to-point link"),
            ));
        }
        let dirs = net.dirs_of(k);
        let (f, r) = (dirs[0] as usize, dirs[1] as usize);
        if net.links[f].cells {
            return Err(EmuError::config(
                "link",
                format!("\"{name}\" is an ATM cell link (cells = true); the emulator carries IP packets, not cells"),
            ));
        }
        let mut take = |d: usize, which: &str| {
            let placeholder = LinkDir::new(0, 0, net.links[d].params);
            let link = std::mem::replace(&mut net.links[d], placeholder);
            let classify = Classify::for_link(&link, &built.conns).ok_or_else(|| {
                EmuError::config(
                    "link",
                    format!(
                        "no flow of the scenario crosses the {which} direction of \"{name}\", so its per-flow queues \
                         have no flow to classify packets into; add a flow group whose route crosses it"
                    ),
                )
            })?;
            Ok::<_, EmuError>(Direction::new(link, d as u32, classify))
        };
        Ok(Parts { forward: take(f, "forward")?, reverse: take(r, "reverse")?, filter, flows: built.conns.len() })
    }
}

/// What a run is made of.
struct Parts {
    forward: Direction,
    reverse: Direction,
    /// What the event trace keeps.
    filter: TraceSpec,
    /// The scenario's flows.
    flows: usize,
}

/// Emulate `cfg` until its duration has passed or `stop` is set. `ready` is called once both
/// devices are up, so that the caller can start the endpoints. Devices are removed on return,
/// whether the run succeeded or not.
pub fn run(cfg: &EmulatorConfig, stop: &AtomicBool, ready: impl FnOnce()) -> Result<EmuReport, EmuError> {
    cfg.check()?;
    let Parts { mut forward, mut reverse, filter, flows } = cfg.parts()?;
    let mut trace = match &cfg.events {
        Some(ev) => Some(Trace {
            flows: FlowMap::new(cfg.addr_a, cfg.addr_b, &ev.flows, flows)?,
            log: EventLog::create(&ev.path, filter)?,
        }),
        None => None,
    };
    let mut capture = cfg.pcap.as_deref().map(Capture::create).transpose()?;
    let side = |ns: &str, name: &str, addr| TunConfig {
        ns: ns.to_string(),
        name: name.to_string(),
        addr,
        prefix_len: cfg.prefix_len,
        mtu: cfg.mtu,
    };
    let tun_a = Tun::open(&side(&cfg.ns_a, &cfg.dev_a, cfg.addr_a))?;
    let tun_b = Tun::open(&side(&cfg.ns_b, &cfg.dev_b, cfg.addr_b))?;
    let _slack = TimerSlack::tighten();
    let _realtime = match cfg.realtime_priority {
        Some(p) => Some(Realtime::enter(p).map_err(|e| {
            let why = match e.raw_os_error() {
                Some(libc::EPERM) => "not permitted (needs CAP_SYS_NICE)".to_string(),
                _ => e.to_string(),
            };
            EmuError::config("realtime_priority", format!("cannot run under SCHED_FIFO at {p}: {why}"))
        })?),
        None => None,
    };
    let mut fds = clock::readable(&[tun_a.as_raw_fd(), tun_b.as_raw_fd()]);
    let mut buf = vec![0u8; 65_536];
    let t0 = clock::monotonic_ns();
    let wall0 = clock::realtime_ns();
    let end = t0.saturating_add(u64::try_from(cfg.duration.as_nanos()).unwrap_or(u64::MAX));
    let to_b = Sink { tun: &tun_b, t0, wall0 };
    let to_a = Sink { tun: &tun_a, t0, wall0 };
    if let Some(t) = &mut trace {
        t.log.start(t0);
    }
    ready();
    // The last time both directions had run every event up to: the trace ends there, so that
    // a FIFO's dequeues (known ahead) and a scheduler's (known as they start) end together.
    let mut traced_upto = 0;
    loop {
        let now = clock::monotonic_ns();
        if now >= end || stop.load(Ordering::Relaxed) {
            break;
        }
        forward.deliver(now - t0, &to_b, &mut capture, &mut trace)?;
        reverse.deliver(now - t0, &to_a, &mut capture, &mut trace)?;
        if let Some(t) = &mut trace {
            // Both directions have run every event up to now; reads come later.
            t.log.flush_upto(now - t0)?;
            traced_upto = now - t0;
        }
        for (tun, dir) in [(&tun_a, &mut forward), (&tun_b, &mut reverse)] {
            for _ in 0..READ_BATCH {
                let Some(n) = tun.read(&mut buf)? else { break };
                dir.offer(clock::monotonic_ns() - t0, &buf[..n], &mut trace);
            }
        }
        match [forward.next_due(), reverse.next_due()].into_iter().flatten().min() {
            Some(due) => clock::wait(&mut fds, (t0 + due).min(end), true, cfg.busy_poll),
            None => clock::wait(&mut fds, end.min(clock::monotonic_ns() + clock::MAX_SLEEP_NS), false, cfg.busy_poll),
        }
        .map_err(|e| EmuError::Device {
            ns: cfg.ns_a.clone(),
            dev: cfg.dev_a.clone(),
            problem: format!("waiting for packets on both devices: {e}"),
        })?;
    }
    let elapsed_ns = clock::monotonic_ns() - t0;
    if let Some(c) = capture {
        c.finish()?;
    }
    let traced = trace.is_some();
    let events = match trace {
        Some(t) => {
            Some(EventsReport { records: t.log.finish(traced_upto)?, record_len: RECORD_LEN, codes: EventCodes })
        }
        None => None,
    };
    Ok(EmuReport { forward: forward.report(traced), reverse: reverse.report(traced), elapsed_ns, events })
}
