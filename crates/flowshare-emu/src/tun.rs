//! TUN devices: a layer-3 device (IFF_TUN, no packet-information header) whose packets the
//! emulator reads and writes. Each is created, addressed, sized and brought up inside a named
//! namespace with ioctls on a socket opened there, so no external `ip` command is needed. The
//! device lives as long as its file descriptor.

use crate::netns;
use crate::EmuError;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// What device to make, where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TunConfig {
    /// Namespace the device lives in.
    pub ns: String,
    /// Device name (1 to 15 bytes).
    pub name: String,
    /// Its IPv4 address.
    pub addr: Ipv4Addr,
    /// Prefix length of the address's subnet (the kernel routes the subnet to the device).
    pub prefix_len: u8,
    /// Its MTU in bytes.
    pub mtu: u32,
}

/// An open TUN device; closing it removes the device.
#[derive(Debug)]
pub struct Tun {
    fd: OwnedFd,
    ns: String,
    name: String,
}

/// `struct ifreq`: an interface name and a 24-byte union of request data.
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    data: [u8; 24],
}

impl IfReq {
    fn new(name: &str) -> IfReq {
        let mut r = IfReq { name: [0; libc::IFNAMSIZ], data: [0; 24] };
        r.name[..name.len()].copy_from_slice(name.as_bytes());
        r
    }

    fn set_short(&mut self, v: libc::c_short) {
        self.data[..2].copy_from_slice(&v.to_ne_bytes());
    }

    fn short(&self) -> libc::c_short {
        libc::c_short::from_ne_bytes([self.data[0], self.data[1]])
    }

    fn set_int(&mut self, v: libc::c_int) {
        self.data[..4].copy_from_slice(&v.to_ne_bytes());
    }

    /// A `sockaddr_in` holding `a`.
    fn set_addr(&mut self, a: Ipv4Addr) {
        self.data = [0; 24];
        self.data[..2].copy_from_slice(&(libc::AF_INET as libc::sa_family_t).to_ne_bytes());
        self.data[4..8].copy_from_slice(&a.octets());
    }
}

/// Whether `name` is a valid interface name.
pub fn check_name(field: &str, name: &str) -> Result<(), EmuError> {
    let bad = name.is_empty()
        || name.len() >= libc::IFNAMSIZ
        || name == "."
        || name == ".."
        || name.chars().any(|c| c == '/' || c == ':' || c == '\0' || c.is_whitespace());
    if bad {
        return Err(EmuError::config(
            field,
            format!("\"{name}\" is not a device name (1 to 15 bytes, without '/', ':' or whitespace)"),
        ));
    }
    Ok(())
}

fn ioctl(fd: RawFd, req: libc::Ioctl, r: &mut IfReq) -> io::Result<()> {
    // SAFETY: every request used here reads or writes a `struct ifreq`, which `r` is.
    if unsafe { libc::ioctl(fd, req, r as *mut IfReq) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn owned(fd: libc::c_int) -> io::Result<OwnedFd> {
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by the kernel and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

impl Tun {
    /// Make, configure and bring up the device `cfg` describes, non-blocking.
    pub fn open(cfg: &TunConfig) -> Result<Tun, EmuError> {
        check_name("device", &cfg.name)?;
        if !(1..=32).contains(&cfg.prefix_len) {
            return Err(EmuError::config("prefix_len", format!("must be 1 to 32, got {}", cfg.prefix_len)));
        }
        if !(68..=65_535).contains(&cfg.mtu) {
            return Err(EmuError::config("mtu", format!("must be 68 to 65535 bytes (IPv4), got {}", cfg.mtu)));
        }
        let _inside = netns::enter(&cfg.ns)?;
        let fail = |what: &str, e: io::Error| {
            let problem = match e.raw_os_error() {
                Some(libc::EPERM) | Some(libc::EACCES) => format!("{what}: not permitted (needs CAP_NET_ADMIN)"),
                Some(libc::EBUSY) => format!("{what}: a device of that name already exists"),
                Some(libc::ENOENT) if what.contains("/dev/net/tun") => {
                    format!("{what}: /dev/net/tun is missing (no TUN support)")
                }
                _ => format!("{what}: {e}"),
            };
            EmuError::Device { ns: cfg.ns.clone(), dev: cfg.name.clone(), problem }
        };
        let path = c"/dev/net/tun";
        // SAFETY: `path` is a valid NUL-terminated string.
        let fd = owned(unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC) })
            .map_err(|e| fail("opening /dev/net/tun", e))?;
        let mut r = IfReq::new(&cfg.name);
        r.set_short((libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short);
        ioctl(fd.as_raw_fd(), libc::TUNSETIFF, &mut r).map_err(|e| fail("creating the TUN device", e))?;
        // SAFETY: plain socket creation.
        let sock = owned(unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) })
            .map_err(|e| fail("opening a configuration socket", e))?;
        let s = sock.as_raw_fd();
        let mut r = IfReq::new(&cfg.name);
        r.set_int(cfg.mtu as libc::c_int);
        ioctl(s, libc::SIOCSIFMTU, &mut r).map_err(|e| fail(&format!("setting the MTU to {}", cfg.mtu), e))?;
        let mut r = IfReq::new(&cfg.name);
        r.set_addr(cfg.addr);
        ioctl(s, libc::SIOCSIFADDR, &mut r).map_err(|e| fail(&format!("setting the address {}", cfg.addr), e))?;
        let mask = Ipv4Addr::from(u32::MAX << (32 - u32::from(cfg.prefix_len)));
        let mut r = IfReq::new(&cfg.name);
        r.set_addr(mask);
        ioctl(s, libc::SIOCSIFNETMASK, &mut r).map_err(|e| fail(&format!("setting the netmask {mask}"), e))?;
        let mut r = IfReq::new(&cfg.name);
        ioctl(s, libc::SIOCGIFFLAGS, &mut r).map_err(|e| fail("reading the flags", e))?;
        let up = r.short() | (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        r.set_short(up);
        ioctl(s, libc::SIOCSIFFLAGS, &mut r).map_err(|e| fail("bringing it up", e))?;
        Ok(Tun { fd, ns: cfg.ns.clone(), name: cfg.name.clone() })
    }

    /// Read one packet into `buf`: its length, or `None` when none is waiting.
    pub fn read(&self, buf: &mut [u8]) -> Result<Option<usize>, EmuError> {
        // SAFETY: `buf` is valid for writes of its length.
        let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
            _ => Err(self.error("reading a packet", e)),
        }
    }

    /// Hand one packet to the namespace's network stack, as if it had arrived on the device.
    pub fn write(&self, packet: &[u8]) -> Result<(), EmuError> {
        loop {
            // SAFETY: `packet` is valid for reads of its length.
            let n = unsafe { libc::write(self.fd.as_raw_fd(), packet.as_ptr().cast(), packet.len()) };
            if n >= 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(self.error("writing a packet", e));
            }
        }
    }

    /// Device name.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn error(&self, what: &str, e: io::Error) -> EmuError {
        EmuError::Device { ns: self.ns.clone(), dev: self.name.clone(), problem: format!("{what}: {e}") }
    }
}

impl AsRawFd for Tun {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}
