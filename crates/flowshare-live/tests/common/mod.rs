//! A virtual network for running live endpoints deterministically: datagrams are held in
//! memory until their arrival time, the clocks are the network's time (plus an offset) and the
//! test moves it. What the link does to each datagram (its delay, whether it is lost, what it
//! records) is the test's own [`Link`].

use flowshare_core::scenario::Scenario;
use flowshare_core::units::Time;
use flowshare_live::{Clock, EndpointConfig, LiveEndpoint, Side, Transport};
use std::cell::{Cell, RefCell};
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

pub const MS: Time = 1_000_000;

/// A datagram on its way: when it arrives, where, from where.
pub struct InFlight {
    pub at: Time,
    pub to: SocketAddr,
    pub from: SocketAddr,
    pub bytes: Vec<u8>,
}

/// What the link does to a datagram an endpoint sends.
pub trait Link {
    /// When the datagram `bytes`, sent at `now`, arrives; `None` if the link loses it.
    fn carry(&mut self, now: Time, bytes: &[u8]) -> Option<Time>;

    /// The datagram `bytes` was taken by its receiver at `now`.
    fn arrived(&mut self, _now: Time, _bytes: &[u8]) {}
}

/// The network's time, the datagrams in flight and the link they cross.
pub struct Net<L> {
    pub now: Cell<Time>,
    pub flying: RefCell<Vec<InFlight>>,
    pub link: RefCell<L>,
}

impl<L> Net<L> {
    /// A network at time 0 with nothing in flight.
    pub fn new(link: L) -> Rc<Self> {
        Rc::new(Net { now: Cell::new(0), flying: RefCell::new(Vec::new()), link: RefCell::new(link) })
    }

    fn next_arrival(&self) -> Option<Time> {
        self.flying.borrow().iter().map(|d| d.at).min()
    }

    /// How many datagrams are still on their way to `to`.
    pub fn in_flight_to(&self, to: SocketAddr) -> u64 {
        self.flying.borrow().iter().filter(|d| d.to == to).count() as u64
    }
}

/// One endpoint's attachment to the network at `addr`.
pub struct Mem<L> {
    net: Rc<Net<L>>,
    addr: SocketAddr,
}

impl<L: Link> Transport for Mem<L> {
    fn recv(&mut self, buf: &mut [u8]) -> io::Result<Option<(usize, SocketAddr)>> {
        let now = self.net.now.get();
        let mut flying = self.net.flying.borrow_mut();
        // The earliest arrival first: jitter reorders, the link does not.
        let Some(i) = flying
            .iter()
            .enumerate()
            .filter(|(_, d)| d.to == self.addr && d.at <= now)
            .min_by_key(|(_, d)| d.at)
            .map(|(i, _)| i)
        else {
            return Ok(None);
        };
        let d = flying.remove(i);
        self.net.link.borrow_mut().arrived(now, &d.bytes);
        buf[..d.bytes.len()].copy_from_slice(&d.bytes);
        Ok(Some((d.bytes.len(), d.from)))
    }

    fn send(&mut self, buf: &[u8], to: SocketAddr) -> io::Result<bool> {
        let net = &self.net;
        if let Some(at) = net.link.borrow_mut().carry(net.now.get(), buf) {
            net.flying.borrow_mut().push(InFlight { at, to, from: self.addr, bytes: buf.to_vec() });
        }
        Ok(true)
    }

    fn wait(&mut self, _timeout: Option<Duration>) -> io::Result<()> {
        Ok(()) // the test moves the clock
    }
}

/// The network's time plus an offset.
pub struct Virtual<L>(Rc<Net<L>>, Time);

impl<L> Clock for Virtual<L> {
    fn now(&self) -> Time {
        self.0.now.get() + self.1
    }
}

pub type Ep<L> = LiveEndpoint<Mem<L>, Virtual<L>>;

/// The endpoint `cfg` on `net`, its clock `skew` ns ahead of the network's.
pub fn endpoint<L: Link>(cfg: &EndpointConfig, net: &Rc<Net<L>>, skew: Time) -> Ep<L> {
    LiveEndpoint::new(cfg, Mem { net: net.clone(), addr: cfg.bind }, Virtual(net.clone(), skew)).unwrap()
}

/// Both ends of flow 0 of `scenario`, the source at `a` and the destination at `b` with its
/// clock `skew` ns ahead, run over `net` until `end` ns of network time; `watch` sees the
/// source and the destination after each step of the destination.
pub fn run_flow<L: Link>(
    scenario: Scenario,
    (a, b): (SocketAddr, SocketAddr),
    net: &Rc<Net<L>>,
    skew: Time,
    end: Time,
    mut watch: impl FnMut(&Ep<L>, &Ep<L>),
) -> (Ep<L>, Ep<L>) {
    let d = Duration::from_secs(60);
    let src_cfg = EndpointConfig::new(scenario.clone(), 0, Side::Source, a, b, d);
    let dst_cfg = EndpointConfig::new(scenario, 0, Side::Destination, b, a, d);
    let mut src = endpoint(&src_cfg, net, 0);
    let mut dst = endpoint(&dst_cfg, net, skew);
    // Run each endpoint, then move the clock to the next deadline or arrival (the receiver's
    // deadlines are on its own clock). Work left due now (more datagrams than one step takes)
    // is run without moving the clock.
    let mut spins = 0;
    loop {
        let s = src.step().unwrap();
        let r = dst.step().unwrap().map(|t| t.saturating_sub(skew));
        watch(&src, &dst);
        let next = [s, r, net.next_arrival()].into_iter().flatten().min();
        match next {
            Some(t) if t <= end => {
                if t <= net.now.get() {
                    spins += 1;
                    assert!(spins < 1_000, "stuck at {t} ns");
                } else {
                    spins = 0;
                    net.now.set(t);
                }
            }
            _ => break,
        }
    }
    (src, dst)
}
