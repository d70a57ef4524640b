//! Measuring the emulator's fidelity with real packets: two fresh network namespaces, the
//! emulator on one thread, a UDP sender in side a and a receiver in side b on others. Shared
//! by the `fidelity` test and example.
//!
//! Each datagram carries its sequence number and its send time (CLOCK_MONOTONIC, which every
//! namespace shares), so the receiver sees each packet's one-way delay.

use flowshare_core::scenario::from_toml;
use flowshare_emu::clock::{monotonic_ns, Realtime};
use flowshare_emu::{netns, run, EmuReport, EmulatorConfig, LinkSelect};
use std::net::{SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

/// IP packet size of every datagram: 20 bytes of IPv4 header, 8 of UDP, 1472 of payload.
pub const PACKET: u64 = 1500;
const PAYLOAD: usize = 1472;
const PORT: u16 = 5001;

/// Why the measurement cannot run here, if it cannot.
pub fn skip_reason() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("needs root (network namespaces and TUN devices)".into());
    }
    if !std::path::Path::new("/dev/net/tun").exists() {
        return Some("/dev/net/tun is missing".into());
    }
    match Command::new("ip").arg("-V").output() {
        Ok(o) if o.status.success() => None,
        _ => Some("the `ip` command (iproute2) is missing".into()),
    }
}

/// Two namespaces made for one measurement, deleted when dropped.
pub struct Namespaces {
    /// Side a.
    pub a: String,
    /// Side b.
    pub b: String,
    made: Vec<String>,
}

impl Namespaces {
    /// Make two namespaces with names unique to this process and call.
    pub fn create() -> Result<Namespaces, String> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let k = NEXT.fetch_add(1, Ordering::Relaxed);
        let base = format!("fsemu-{}-{k}", std::process::id());
        let mut ns = Namespaces { a: format!("{base}-a"), b: format!("{base}-b"), made: Vec::new() };
        for name in [ns.a.clone(), ns.b.clone()] {
            let out = Command::new("ip").args(["netns", "add", &name]).output().map_err(|e| e.to_string())?;
            if !out.status.success() {
                // `ns` is dropped on return and deletes what was made.
                return Err(format!("ip netns add {name}: {}", String::from_utf8_lossy(&out.stderr).trim()));
            }
            ns.made.push(name);
        }
        Ok(ns)
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        for name in &self.made {
            let _ = Command::new("ip").args(["netns", "del", name]).status();
        }
    }
}

/// A one-link scenario: `rate_bps`, `delay_ms`, a DropTail queue of `limit` packets.
pub fn config(ns: &Namespaces, rate_bps: u64, delay_ms: u64, limit: u32, duration: Duration) -> EmulatorConfig {
    let toml = format!(
        r#"
[simulation]
duration = "1h"

[topology]
kind = "graph"
nodes = ["a", "b"]
links = [{{ from = "a", to = "b", name = "wire", rate = "{rate_bps}bps", delay = "{delay_ms}ms", queue = {{ limit = {limit} }} }}]

[[flows]]
name = "probe"
src = "a"
dst = "b"
"#
    );
    let scenario = from_toml(&toml).expect("the measurement scenario is valid");
    let mut cfg = EmulatorConfig::new(&ns.a, &ns.b, scenario, LinkSelect::Name("wire".into()));
    cfg.duration = duration;
    cfg
}

/// One received datagram.
#[derive(Clone, Copy, Debug)]
pub struct Received {
    /// Sequence number.
    pub seq: u64,
    /// Send time, monotonic ns.
    pub sent: u64,
    /// Receive time, monotonic ns.
    pub recv: u64,
}

/// What a measurement saw.
pub struct Outcome {
    /// Datagrams received, in order of arrival.
    pub received: Vec<Received>,
    /// Datagrams sent.
    pub sent: u64,
    /// The emulator's report.
    pub report: EmuReport,
}

fn force_buffer(sock: &UdpSocket, opt: libc::c_int, bytes: libc::c_int) {
    // SAFETY: a valid socket and an int option value.
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            opt,
            (&bytes as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// Run the emulator with `cfg` (with `realtime`, its thread, the sender's and the receiver's
/// under SCHED_FIFO, so that other work on the machine disturbs the measurement less; not for
/// a saturated link, where the emulator never sleeps and the kernel's real-time throttling
/// would stop it for 50 ms every second) and send `count` datagrams a → b, one every `interval_ns`
/// (in bursts when the sender's sleeps overshoot); collect what arrives until everything has
/// or the link has been quiet for half a second after the last send.
pub fn measure(cfg: EmulatorConfig, count: u64, interval_ns: u64, realtime: bool) -> Result<Outcome, String> {
    let mut cfg = cfg;
    cfg.realtime_priority = realtime.then_some(50);
    let stop = Arc::new(AtomicBool::new(false));
    let (ready_tx, ready_rx) = mpsc::channel();
    let (addr_a, addr_b) = (cfg.addr_a, cfg.addr_b);
    let (ns_a, ns_b) = (cfg.ns_a.clone(), cfg.ns_b.clone());
    let emu = {
        let stop = stop.clone();
        thread::spawn(move || run(&cfg, &stop, || ready_tx.send(()).expect("waiting for the devices")))
    };
    if ready_rx.recv_timeout(Duration::from_secs(10)).is_err() {
        stop.store(true, Ordering::Relaxed);
        return Err(match emu.join() {
            Ok(Err(e)) => e.to_string(),
            Ok(Ok(_)) => "the emulator ended before the devices were up".into(),
            Err(_) => "the emulator panicked".into(),
        });
    }
    let finished = Arc::new(AtomicBool::new(false));
    let (bound_tx, bound_rx) = mpsc::channel();
    let receiver = {
        let finished = finished.clone();
        thread::spawn(move || -> Result<Vec<Received>, String> {
            netns::move_thread(&ns_b).map_err(|e| e.to_string())?;
            let sock = UdpSocket::bind(SocketAddrV4::new(addr_b, PORT)).map_err(|e| format!("binding: {e}"))?;
            force_buffer(&sock, libc::SO_RCVBUFFORCE, 64 << 20);
            sock.set_read_timeout(Some(Duration::from_millis(100))).map_err(|e| e.to_string())?;
            // When precision matters the receiver spins instead of sleeping, so that no wake-up
            // latency enters its times (not under SCHED_FIFO: the kernel throttles a real-time
            // thread that never sleeps).
            sock.set_nonblocking(realtime).map_err(|e| e.to_string())?;
            bound_tx.send(()).map_err(|e| e.to_string())?;
            let mut got = Vec::with_capacity(count as usize);
            let mut buf = [0u8; 2048];
            let mut quiet_since = None;
            while (got.len() as u64) < count {
                match sock.recv(&mut buf) {
                    Ok(n) if n >= 16 => {
                        let recv = monotonic_ns();
                        let seq = u64::from_le_bytes(buf[0..8].try_into().expect("8 bytes"));
                        let sent = u64::from_le_bytes(buf[8..16].try_into().expect("8 bytes"));
                        got.push(Received { seq, sent, recv });
                        quiet_since = None;
                    }
                    Ok(_) => {}
                    Err(e)
                        if e.kind() == std::io::ErrorKind::WouldBlock
                            && realtime
                            && !finished.load(Ordering::Relaxed) =>
                    {
                        std::hint::spin_loop();
                    }
                    Err(_) if finished.load(Ordering::Relaxed) => {
                        let since = *quiet_since.get_or_insert_with(monotonic_ns);
                        if monotonic_ns() - since > 500_000_000 {
                            break;
                        }
                    }
                    Err(_) => {}
                }
            }
            Ok(got)
        })
    };
    let bound = bound_rx.recv_timeout(Duration::from_secs(5));
    let sender = thread::spawn(move || -> Result<u64, String> {
        bound.map_err(|_| "the receiver did not start".to_string())?;
        netns::move_thread(&ns_a).map_err(|e| e.to_string())?;
        let _rt = realtime.then(|| Realtime::enter(40)).transpose().map_err(|e| format!("sender: {e}"))?;
        let sock = UdpSocket::bind(SocketAddrV4::new(addr_a, 0)).map_err(|e| format!("binding: {e}"))?;
        force_buffer(&sock, libc::SO_SNDBUFFORCE, 16 << 20);
        sock.connect(SocketAddrV4::new(addr_b, PORT)).map_err(|e| format!("connecting: {e}"))?;
        let mut payload = [0u8; PAYLOAD];
        let start = monotonic_ns();
        let mut seq = 0;
        while seq < count {
            let now = monotonic_ns();
            let target = start + seq * interval_ns;
            if now < target {
                thread::sleep(Duration::from_nanos(target - now));
                continue;
            }
            payload[0..8].copy_from_slice(&seq.to_le_bytes());
            payload[8..16].copy_from_slice(&monotonic_ns().to_le_bytes());
            sock.send(&payload).map_err(|e| format!("sending datagram {seq}: {e}"))?;
            seq += 1;
        }
        Ok(seq)
    });
    let sent = sender.join().map_err(|_| "the sender panicked".to_string());
    finished.store(true, Ordering::Relaxed);
    let received = receiver.join().map_err(|_| "the receiver panicked".to_string());
    stop.store(true, Ordering::Relaxed);
    let report = emu.join().map_err(|_| "the emulator panicked".to_string())?.map_err(|e| e.to_string())?;
    Ok(Outcome { received: received??, sent: sent??, report })
}

/// Datagrams that arrived after one sent later (a link never reorders).
pub fn reordered(o: &Outcome) -> usize {
    o.received.windows(2).filter(|w| w[1].seq < w[0].seq).count()
}

/// Serialization time of one datagram at `rate_bps`, in ns.
pub fn serialization_ns(rate_bps: u64) -> u64 {
    PACKET * 8 * 1_000_000_000 / rate_bps
}

/// Received rate in bit/s: IP bytes between the first and the last arrival.
pub fn received_rate(o: &Outcome) -> f64 {
    let first = o.received.iter().map(|r| r.recv).min().unwrap_or(0);
    let last = o.received.iter().map(|r| r.recv).max().unwrap_or(0);
    if o.received.len() < 2 || last == first {
        return 0.0;
    }
    (o.received.len() as u64 - 1) as f64 * (PACKET * 8) as f64 * 1e9 / (last - first) as f64
}

/// Offered above the link rate (120 %) for `secs` seconds into a buffer that never fills.
pub fn rate_run(rate_bps: u64, secs: f64) -> Result<(f64, Outcome), String> {
    let ns = Namespaces::create()?;
    let interval = serialization_ns(rate_bps) * 5 / 6;
    let count = (secs * 1e9 / interval as f64) as u64;
    let cfg = config(&ns, rate_bps, 20, 1_000_000, Duration::from_secs_f64(secs * 2.0 + 5.0));
    let o = measure(cfg, count, interval, false)?;
    Ok((received_rate(&o), o))
}

/// Delay errors in ns (one-way delay minus configured delay and serialization), sorted.
pub fn delay_errors(o: &Outcome, rate_bps: u64, delay_ms: u64) -> Vec<i64> {
    let expected = (delay_ms * 1_000_000 + serialization_ns(rate_bps)) as i64;
    let mut e: Vec<i64> = o.received.iter().map(|r| (r.recv - r.sent) as i64 - expected).collect();
    e.sort_unstable();
    e
}

/// The `q`-quantile of sorted values.
pub fn quantile(sorted: &[i64], q: f64) -> i64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// At low load (one datagram per ms, or every two serialization times if that is longer, so
/// that none queues behind another) through a 20 ms link for `secs` seconds.
pub fn delay_run(rate_bps: u64, secs: f64) -> Result<(Vec<i64>, Outcome), String> {
    let ns = Namespaces::create()?;
    let interval = (2 * serialization_ns(rate_bps)).max(1_000_000);
    let count = (secs * 1e9 / interval as f64) as u64;
    let cfg = config(&ns, rate_bps, 20, 1000, Duration::from_secs_f64(secs + 5.0));
    let o = measure(cfg, count, interval, true)?;
    Ok((delay_errors(&o, rate_bps, 20), o))
}
