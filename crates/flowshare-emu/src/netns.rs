//! Entering named network namespaces (the ones `ip netns add` makes, bound under
//! `/var/run/netns`). A network namespace is a property of a thread, so one thread can make a
//! device or a socket in another namespace and come back, and what it made stays in that
//! namespace.

use crate::EmuError;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Where `ip netns` binds named namespaces.
pub const NETNS_DIR: &str = "/var/run/netns";

/// The calling thread is in another namespace until this is dropped; dropping it returns the
/// thread to the namespace it was in.
#[derive(Debug)]
pub struct NetnsGuard {
    original: OwnedFd,
}

fn open(path: &str) -> io::Result<OwnedFd> {
    let c = CString::new(path).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `c` is a valid NUL-terminated path.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn setns(fd: &OwnedFd) -> io::Result<()> {
    // SAFETY: `fd` refers to an open namespace file.
    if unsafe { libc::setns(fd.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Whether `name` can name a namespace under [`NETNS_DIR`].
pub fn check_name(field: &str, name: &str) -> Result<(), EmuError> {
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
        return Err(EmuError::config(field, format!("\"{name}\" is not a namespace name (non-empty, without '/')")));
    }
    Ok(())
}

/// Move the calling thread into namespace `name`.
fn switch(name: &str) -> Result<(), EmuError> {
    let problem = |p: String| EmuError::Namespace { ns: name.to_string(), problem: p };
    let path = format!("{NETNS_DIR}/{name}");
    let fd = open(&path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => problem(format!("does not exist (no {path}; `ip netns add {name}` makes it)")),
        _ => problem(format!("cannot open {path}: {e}")),
    })?;
    setns(&fd).map_err(|e| match e.raw_os_error() {
        Some(libc::EPERM) => problem("entering it is not permitted (needs CAP_SYS_ADMIN)".into()),
        Some(libc::EINVAL) => problem(format!("{path} is not a network namespace")),
        _ => problem(format!("cannot enter it: {e}")),
    })
}

/// Enter namespace `name` until the returned guard is dropped.
pub fn enter(name: &str) -> Result<NetnsGuard, EmuError> {
    check_name("namespace", name)?;
    let original = open("/proc/thread-self/ns/net").map_err(|e| EmuError::Namespace {
        ns: name.to_string(),
        problem: format!("cannot open the current thread's namespace to return to it: {e}"),
    })?;
    switch(name)?;
    Ok(NetnsGuard { original })
}

/// Move the calling thread into namespace `name` for the rest of its life (an endpoint
/// thread that only ever works there).
pub fn move_thread(name: &str) -> Result<(), EmuError> {
    check_name("namespace", name)?;
    switch(name)
}

impl Drop for NetnsGuard {
    fn drop(&mut self) {
        // Returning to a namespace the thread was in cannot be refused (the file is open and
        // the thread had the rights to leave it); a failure here would be a kernel bug.
        let back = setns(&self.original);
        debug_assert!(back.is_ok(), "returning to the original network namespace failed: {back:?}");
    }
}
