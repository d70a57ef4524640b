//! What the event loop needs of the outside world: a datagram transport and a clock.
//!
//! The loop ([`crate::endpoint`]) is written against the [`Transport`] and [`Clock`] traits, so
//! that its logic can be tested with datagrams in memory and a clock the test moves; the live
//! implementations are a non-blocking UDP socket waited on with `ppoll(2)` and the monotonic
//! clock (`CLOCK_MONOTONIC` through [`Instant`]).

use flowshare_core::units::Time;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// Datagrams in and out, and a way to sleep until one may have arrived.
pub trait Transport {
    /// One pending datagram into `buf`: its length and sender, or `None` when nothing is
    /// pending. A datagram longer than `buf` is cut to `buf.len()`.
    fn recv(&mut self, buf: &mut [u8]) -> io::Result<Option<(usize, SocketAddr)>>;

    /// Send `buf` to `to`. `Ok(false)`: the local send buffer is full and the datagram was
    /// dropped, as a full interface queue drops a packet.
    fn send(&mut self, buf: &[u8], to: SocketAddr) -> io::Result<bool>;

    /// Sleep until a datagram may be pending or `timeout` has passed (`None`: no limit).
    fn wait(&mut self, timeout: Option<Duration>) -> io::Result<()>;
}

/// The time an endpoint runs on.
pub trait Clock {
    /// Nanoseconds since the endpoint started.
    fn now(&self) -> Time;
}

/// The monotonic clock, from the moment it is made: core time 0 is the endpoint's start.
#[derive(Clone, Copy, Debug)]
pub struct MonotonicClock {
    epoch: Instant,
}

impl MonotonicClock {
    /// A clock reading 0 now.
    pub fn start() -> Self {
        MonotonicClock { epoch: Instant::now() }
    }
}

impl Clock for MonotonicClock {
    fn now(&self) -> Time {
        // u64 nanoseconds last 584 years.
        self.epoch.elapsed().as_nanos() as Time
    }
}

/// A bound, non-blocking UDP socket.
#[derive(Debug)]
pub struct UdpTransport {
    socket: UdpSocket,
}

impl UdpTransport {
    /// Bind to `addr` and make the socket non-blocking.
    pub fn bind(addr: SocketAddr) -> io::Result<Self> {
        let socket = UdpSocket::bind(addr)?;
        socket.set_nonblocking(true)?;
        Ok(UdpTransport { socket })
    }

    /// The address it is bound to (the port the system chose, for port 0).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }
}

/// Errors that say nothing about this socket: an ICMP error for an earlier datagram (reported on
/// some systems even for unconnected sockets) or an interrupted call.
fn transient(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::Interrupted | io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionReset)
}

impl Transport for UdpTransport {
    fn recv(&mut self, buf: &mut [u8]) -> io::Result<Option<(usize, SocketAddr)>> {
        loop {
            match self.socket.recv_from(buf) {
                Ok((n, from)) => return Ok(Some((n, from))),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) if transient(&e) => continue,
                Err(e) => return Err(e),
            }
        }
    }

    fn send(&mut self, buf: &[u8], to: SocketAddr) -> io::Result<bool> {
        loop {
            match self.socket.send_to(buf, to) {
                Ok(_) => return Ok(true),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                // ENOBUFS: the interface queue is full, a drop like any other.
                Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    fn wait(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        let mut fd = libc::pollfd { fd: self.socket.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        let ts = timeout.map(|d| libc::timespec {
            tv_sec: d.as_secs().min(i32::MAX as u64) as libc::time_t,
            tv_nsec: libc::c_long::from(d.subsec_nanos() as i32),
        });
        let ts_ptr = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: `fd` and `ts` outlive the call; a null signal mask leaves the mask unchanged.
        let r = unsafe { libc::ppoll(&mut fd, 1, ts_ptr, std::ptr::null()) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        Ok(())
    }
}
