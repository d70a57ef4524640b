//! The emulator's clock (CLOCK_MONOTONIC, in nanoseconds, shared by every network namespace so
//! that endpoints can timestamp packets on the same scale) and its wait: sleep in `ppoll`
//! until shortly before a due time, then spin, because a sleeping thread wakes tens of
//! microseconds late.

use std::io;
use std::os::fd::RawFd;

/// Before a due time, the last stretch spent spinning (polling the devices without sleeping).
pub const SPIN_NS: u64 = 200_000;

/// Longest single sleep, so that a stop request is seen promptly.
pub const MAX_SLEEP_NS: u64 = 50_000_000;

fn now(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec to write to; both clocks always exist on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_MONOTONIC in nanoseconds.
#[inline]
pub fn monotonic_ns() -> u64 {
    now(libc::CLOCK_MONOTONIC)
}

/// CLOCK_REALTIME in nanoseconds since the Unix epoch (for capture timestamps).
pub fn realtime_ns() -> u64 {
    now(libc::CLOCK_REALTIME)
}

/// Poll `fds` for input for at most `timeout_ns`; true when one is readable.
fn poll(fds: &mut [libc::pollfd], timeout_ns: u64) -> io::Result<bool> {
    let ts = libc::timespec { tv_sec: (timeout_ns / 1_000_000_000) as _, tv_nsec: (timeout_ns % 1_000_000_000) as _ };
    // SAFETY: `fds` is a valid slice of pollfd for its length; `ts` outlives the call.
    let r = unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, &ts, std::ptr::null()) };
    if r < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted { Ok(false) } else { Err(e) };
    }
    Ok(r > 0)
}

/// Wait until one of `fds` is readable or the monotonic clock reaches `until`. With `spin`,
/// the last [`SPIN_NS`] before `until` are spent polling without sleeping, so that the caller
/// resumes within about a microsecond of `until`; without it (nothing is due, `until` is only
/// a time to look at the stop flag again) the whole wait sleeps.
///
/// A sleep lasts at most [`MAX_SLEEP_NS`]; when `until` is further away the wait returns after
/// it (the caller looks at its stop flag and waits again) rather than spinning through the
/// rest.
///
/// With `busy`, the wait never sleeps: packets are then read within about a microsecond of
/// reaching a device too, at the price of a core kept busy.
pub fn wait(fds: &mut [libc::pollfd], until: u64, spin: bool, busy: bool) -> io::Result<()> {
    let mut t = monotonic_ns();
    let spin = spin || busy;
    let margin = if busy {
        u64::MAX / 2
    } else if spin {
        SPIN_NS
    } else {
        0
    };
    if until > t.saturating_add(margin) {
        let sleep = until - t - margin;
        if poll(fds, sleep.min(MAX_SLEEP_NS))? || !spin || sleep > MAX_SLEEP_NS {
            return Ok(());
        }
        t = monotonic_ns();
    }
    while t < until {
        if poll(fds, 0)? {
            return Ok(());
        }
        std::hint::spin_loop();
        t = monotonic_ns();
    }
    Ok(())
}

/// `pollfd`s asking for input on `fds`.
pub fn readable(fds: &[RawFd]) -> Vec<libc::pollfd> {
    fds.iter().map(|&fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 }).collect()
}

/// Lower the calling thread's timer slack to 1 ns (Linux's default of 50 µs would delay every
/// `ppoll` timeout by that much) until the guard is dropped.
pub struct TimerSlack {
    previous: libc::c_ulong,
}

impl TimerSlack {
    /// Set the calling thread's timer slack to 1 ns.
    pub fn tighten() -> TimerSlack {
        // SAFETY: PR_GET/SET_TIMERSLACK take no pointers and only affect the calling thread.
        let previous = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
        TimerSlack { previous: previous.max(1) as libc::c_ulong }
    }
}

impl Drop for TimerSlack {
    fn drop(&mut self) {
        // SAFETY: as in `tighten`.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, self.previous, 0, 0, 0) };
    }
}

/// The calling thread runs under SCHED_FIFO until the guard is dropped, so that other work
/// on the machine (a compiler, the endpoints) cannot delay the emulator's writes by whole
/// scheduler time slices.
pub struct Realtime {
    policy: libc::c_int,
    param: libc::sched_param,
}

impl Realtime {
    /// Run the calling thread under SCHED_FIFO at `priority` (1 to 99).
    pub fn enter(priority: i32) -> std::io::Result<Realtime> {
        let mut policy = 0;
        let mut param = libc::sched_param { sched_priority: 0 };
        // SAFETY: both pointers are valid for writes; pthread_self is the calling thread.
        let r = unsafe { libc::pthread_getschedparam(libc::pthread_self(), &mut policy, &mut param) };
        if r != 0 {
            return Err(io::Error::from_raw_os_error(r));
        }
        let fifo = libc::sched_param { sched_priority: priority };
        // SAFETY: `fifo` is a valid sched_param.
        let r = unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &fifo) };
        if r != 0 {
            return Err(io::Error::from_raw_os_error(r));
        }
        Ok(Realtime { policy, param })
    }
}

impl Drop for Realtime {
    fn drop(&mut self) {
        // SAFETY: restoring the policy and parameters read in `enter`.
        unsafe { libc::pthread_setschedparam(libc::pthread_self(), self.policy, &self.param) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    /// CPU time the calling thread has used, in nanoseconds.
    fn thread_cpu_ns() -> u64 {
        now(libc::CLOCK_THREAD_CPUTIME_ID)
    }

    #[test]
    fn a_far_due_time_is_slept_towards_in_steps_not_spun_towards() {
        // A pipe nobody writes to: never readable.
        let (reader, _writer) = std::io::pipe().unwrap();
        let mut fds = readable(&[reader.as_raw_fd()]);
        let start = monotonic_ns();
        let cpu = thread_cpu_ns();
        let until = start + 4 * MAX_SLEEP_NS;
        wait(&mut fds, until, true, false).unwrap();
        let (waited, spun) = (monotonic_ns() - start, thread_cpu_ns() - cpu);
        // One capped sleep, then back to the caller, long before the due time; and asleep, not
        // spinning, for almost all of it.
        assert!((MAX_SLEEP_NS..3 * MAX_SLEEP_NS).contains(&waited), "waited {waited} ns");
        assert!(spun < MAX_SLEEP_NS / 5, "spent {spun} ns of CPU time in a {waited} ns wait");
    }

    #[test]
    fn a_near_due_time_is_met_by_spinning_through_the_last_stretch() {
        let (reader, _writer) = std::io::pipe().unwrap();
        let mut fds = readable(&[reader.as_raw_fd()]);
        let until = monotonic_ns() + 3 * SPIN_NS;
        wait(&mut fds, until, true, false).unwrap();
        assert!(monotonic_ns() >= until);
    }
}
