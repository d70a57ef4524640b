//! Endpoints: everything that sends or receives packets, behind one abstraction the event loop
//! dispatches to.
//!
//! Each connection has two endpoints, one on its source host and one on its destination host
//! ([`Side`]). An endpoint is an [`Agent`]: a sans-IO state machine that is handed time and
//! packets ([`Io`]) and answers with packets (pushed to `io.out`) and a deadline
//! ([`Agent::next_wake`]) at which it wants to run again. The driver, the simulation or the
//! live mode, owns the clock and the network; it keeps one wake event per endpoint and calls
//! [`Agent::on_wake`] when it fires (an agent checks its own deadlines, so an early or stale
//! wake-up does nothing). Each agent has its own statistics and no fields of another kind: a
//! UDP flow carries no TCP state.
//!
//! Adding an endpoint kind (TFRC, web clients and servers, ATM ABR sources) means one variant
//! here and its state machine in its own module.

use crate::cc::CcHost;
use crate::packet::{Dir, Packet};
use crate::tcp::{Sender, Sink};
use crate::tfrc;
use crate::traffic::{UdpSender, UdpSink};
use crate::units::Time;

/// Which end of a connection an endpoint is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Side {
    /// The source host: it sends the forward packets (data).
    Source = 0,
    /// The destination host: it receives them and sends the reverse packets (ACKs).
    Destination = 1,
}

/// Index of an endpoint: `2 · connection + side`.
pub type EndpointId = u32;

/// The endpoint of connection `conn` on `side`.
#[inline]
pub fn endpoint(conn: u32, side: Side) -> EndpointId {
    conn * 2 + side as u32
}

/// The endpoint a packet of connection `conn` travelling `dir` is delivered to: forward
/// packets to the destination, reverse packets to the source.
#[inline]
pub fn receiver(conn: u32, dir: Dir) -> EndpointId {
    conn * 2 + 1 - dir as u32
}

/// What an agent is handed when it runs: the time, where its packets go, and the
/// congestion-control host (TCP senders are members of it).
pub struct Io<'a> {
    /// The current time.
    pub now: Time,
    /// Packets the agent sends, in order.
    pub out: &'a mut Vec<Packet>,
    /// Congestion state and group controllers.
    pub cc: &'a mut CcHost,
}

/// An endpoint of a connection. The large kinds are boxed so that a slot stays small.
#[derive(Debug)]
pub enum Agent {
    /// A TCP sender (source side).
    TcpSender(Box<Sender>),
    /// A TCP sink (destination side).
    TcpSink(Sink),
    /// A UDP traffic source (source side).
    UdpSource(Box<UdpSender>),
    /// A UDP receiver (destination side).
    UdpSink(UdpSink),
    /// A TFRC sender (source side).
    TfrcSender(Box<tfrc::Sender>),
    /// A TFRC receiver (destination side).
    TfrcReceiver(Box<tfrc::Receiver>),
    /// A free slot: no connection uses it.
    Vacant,
}

impl Agent {
    /// The connection starts at `io.now`. Source-side agents act; of the destination side
    /// only an HTTP client, which opens its connection. Returns [`Agent::next_wake`].
    pub fn start(&mut self, io: &mut Io<'_>) -> Option<Time> {
        match self {
            Agent::TcpSender(s) => s.start(io.now, io.cc, io.out),
            Agent::UdpSource(s) => s.start(io.now),
            Agent::TfrcSender(s) => s.start(io.now),
            Agent::TcpSink(k) => k.start(io.now, io.out),
            Agent::UdpSink(_) | Agent::TfrcReceiver(_) | Agent::Vacant => {}
        }
        self.next_wake()
    }

    /// The connection stops offering new data at `now` (what was sent is still repaired).
    pub fn stop(&mut self, now: Time) {
        match self {
            Agent::TcpSender(s) => s.stop(),
            Agent::UdpSource(s) => s.stop(now),
            Agent::TfrcSender(s) => s.stop(now),
            Agent::TcpSink(_) | Agent::UdpSink(_) | Agent::TfrcReceiver(_) | Agent::Vacant => {}
        }
    }

    /// Packet `p` of this agent's connection arrived. Returns [`Agent::next_wake`].
    #[inline]
    pub fn on_packet(&mut self, p: &Packet, io: &mut Io<'_>) -> Option<Time> {
        match self {
            Agent::TcpSender(s) => {
                s.on_packet(io.now, p, io.cc, io.out);
                s.next_wake()
            }
            Agent::TcpSink(k) => {
                k.on_packet(io.now, p, io.out);
                k.next_wake()
            }
            Agent::UdpSink(k) => {
                k.on_packet(io.now, p);
                None
            }
            Agent::TfrcSender(s) => {
                s.on_feedback(io.now, p);
                s.next_wake()
            }
            Agent::TfrcReceiver(k) => {
                k.on_packet(io.now, p, io.out);
                k.next_wake()
            }
            Agent::UdpSource(s) => {
                debug_assert!(false, "a UDP source receives nothing");
                s.next_wake()
            }
            Agent::Vacant => {
                debug_assert!(false, "a packet for a free slot");
                None
            }
        }
    }

    /// The agent's wake event fired at `io.now`. Returns [`Agent::next_wake`].
    #[inline]
    pub fn on_wake(&mut self, io: &mut Io<'_>) -> Option<Time> {
        match self {
            Agent::TcpSender(s) => s.on_wake(io.now, io.cc, io.out),
            Agent::TcpSink(k) => k.on_timer(io.now, io.out),
            Agent::UdpSource(s) => s.on_wake(io.now, io.out),
            Agent::TfrcSender(s) => s.on_wake(io.now, io.out),
            Agent::TfrcReceiver(k) => k.on_timer(io.now, io.out),
            Agent::UdpSink(_) | Agent::Vacant => {}
        }
        self.next_wake()
    }

    /// Its congestion controller asks it to send what its window allows. Returns
    /// [`Agent::next_wake`].
    pub fn clock(&mut self, io: &mut Io<'_>) -> Option<Time> {
        if let Agent::TcpSender(s) = self {
            s.clock(io.now, io.cc, io.out);
        }
        self.next_wake()
    }

    /// When the agent next wants to run, if ever.
    #[inline]
    pub fn next_wake(&self) -> Option<Time> {
        match self {
            Agent::TcpSender(s) => s.next_wake(),
            Agent::TcpSink(k) => k.next_wake(),
            Agent::UdpSource(s) => s.next_wake(),
            Agent::TfrcSender(s) => s.next_wake(),
            Agent::TfrcReceiver(k) => k.next_wake(),
            Agent::UdpSink(_) | Agent::Vacant => None,
        }
    }

    /// The TCP sender, if this is one.
    pub fn tcp_sender(&self) -> Option<&Sender> {
        match self {
            Agent::TcpSender(s) => Some(s),
            _ => None,
        }
    }

    /// The TCP sender, mutably, if this is one.
    pub fn tcp_sender_mut(&mut self) -> Option<&mut Sender> {
        match self {
            Agent::TcpSender(s) => Some(s),
            _ => None,
        }
    }

    /// The TCP sink, if this is one.
    pub fn tcp_sink(&self) -> Option<&Sink> {
        match self {
            Agent::TcpSink(k) => Some(k),
            _ => None,
        }
    }

    /// The UDP source, if this is one.
    pub fn udp_source(&self) -> Option<&UdpSender> {
        match self {
            Agent::UdpSource(s) => Some(s),
            _ => None,
        }
    }

    /// The TFRC sender, if this is one.
    pub fn tfrc_sender(&self) -> Option<&tfrc::Sender> {
        match self {
            Agent::TfrcSender(s) => Some(s),
            _ => None,
        }
    }

    /// The TFRC receiver, if this is one.
    pub fn tfrc_receiver(&self) -> Option<&tfrc::Receiver> {
        match self {
            Agent::TfrcReceiver(k) => Some(k),
            _ => None,
        }
    }

    /// The UDP sink, if this is one.
    pub fn udp_sink(&self) -> Option<&UdpSink> {
        match self {
            Agent::UdpSink(k) => Some(k),
            _ => None,
        }
    }
}
