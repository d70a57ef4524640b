//! Sharing TCP control block state at connection open: TCB interdependence (J. Touch, "TCP
//! Control Block Interdependence", RFC 2140, 1997; J. Touch, M. Welzl, S. Islam, "TCP Control
//! Block Interdependence", RFC 9040, 2021) and, as a comparator, Ensemble-TCP's initial
//! sharing (L. Eggert, J. Heidemann, J. Touch, "Effects of Ensemble-TCP", ACM SIGCOMM Computer
//! Communication Review 30(1), 2000).
//!
//! Unlike EFCM these controllers act only when a connection opens; afterwards every member
//! runs NewReno's window rules on its own, as a plain connection would. What a joiner starts
//! from:
//! - *Ensemble sharing* (other members open): the ensemble's latest SRTT and RTTVAR (the
//!   estimate of the member that last took an RTT sample). With `tcb`, the mean ssthresh and
//!   (with `cwnd = true`) the mean cwnd of the open members, which keep theirs. With `etcp`,
//!   the open members' summed cwnd and ssthresh are re-shared over all members, joiner
//!   included, so joining adds nothing to the ensemble's window.
//! - *Temporal sharing* (no member open): the SRTT, RTTVAR, ssthresh and (with `cwnd = true`)
//!   cwnd the last connection to close left, if it closed at most `max_age` ago (RFC 9040's
//!   cache merged by "most recent"; older state is discarded and the joiner starts with the
//!   standard values).
//!
//! The cache lives in the controller, and the search list keeps a controller after its last
//! member leaves (ADR 0010), so the closed connection's state is there for the next one.

use super::host::{GroupControl, MemberId, Members};
use super::{AckSample, Aimd, CongestionControl, LossSignal, Phase};
use crate::units::Time;

/// Which rule shares the windows of open members with a joiner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sharing {
    /// RFC 2140 / RFC 9040: the joiner takes the open members' mean values.
    Tcb,
    /// Ensemble-TCP: the ensemble's window is re-shared among all members, joiner included.
    Etcp,
}

/// The controllers' options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcbParams {
    /// The ensemble-sharing rule.
    pub sharing: Sharing,
    /// Keep a closed connection's state for the next one (temporal sharing).
    pub temporal: bool,
    /// Cached state older than this (ns) is discarded.
    pub max_age: Time,
    /// Share cwnd as well as RTT and ssthresh.
    pub cwnd: bool,
}

/// Linux's `tcp_metrics` keeps a destination's cached TCP state for one hour
/// (`TCP_METRICS_TIMEOUT`); RFC 9040 leaves the age open.
pub const DEFAULT_MAX_AGE: Time = 3600 * 1_000_000_000;

impl TcbParams {
    /// The defaults for `sharing`: temporal sharing on, an hour's age, cwnd shared.
    pub fn new(sharing: Sharing) -> Self {
        TcbParams { sharing, temporal: true, max_age: DEFAULT_MAX_AGE, cwnd: true }
    }
}

/// The state a closed connection left.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Cached {
    /// When it closed.
    at: Time,
    /// SRTT and RTTVAR, ns, if it took an RTT sample.
    rtt: Option<(f64, f64)>,
    ssthresh: f64,
    cwnd: f64,
}

/// One ensemble's controller (see the module documentation).
#[derive(Debug)]
pub struct Tcb {
    p: TcbParams,
    /// The ensemble's latest SRTT and RTTVAR while members are open, ns.
    rtt: Option<(f64, f64)>,
    /// The last closed connection's state.
    cache: Option<Cached>,
}

impl Tcb {
    /// An empty ensemble with an empty cache.
    pub fn new(p: TcbParams) -> Self {
        Tcb { p, rtt: None, cache: None }
    }

    /// Initialise joiner `m` from the members already open (`others`).
    fn ensemble_share(&self, m: MemberId, others: &[MemberId], g: &mut Members<'_>) {
        let n = others.len() as f64;
        let cwnd_sum: f64 = others.iter().map(|&o| g.get(o).cwnd).sum();
        let ssthresh_sum: f64 = others.iter().map(|&o| g.get(o).ssthresh).sum();
        match self.p.sharing {
            Sharing::Tcb => {
                let st = g.get_mut(m);
                st.ssthresh = ssthresh_sum / n;
                if self.p.cwnd {
                    st.cwnd = (cwnd_sum / n).max(1.0);
                }
            }
            Sharing::Etcp => {
                let (cwnd, ssthresh) = (cwnd_sum / (n + 1.0), ssthresh_sum / (n + 1.0));
                for &o in others.iter().chain([&m]) {
                    let st = g.get_mut(o);
                    st.ssthresh = ssthresh;
                    if self.p.cwnd {
                        st.cwnd = cwnd.max(1.0);
                    }
                }
            }
        }
        if let Some((srtt, rttvar)) = self.rtt {
            g.get_mut(m).rtt.set(srtt, rttvar);
        }
    }
}

impl GroupControl for Tcb {
    fn name(&self) -> &'static str {
        match self.p.sharing {
            Sharing::Tcb => "tcb",
            Sharing::Etcp => "etcp",
        }
    }

    fn on_join(&mut self, m: MemberId, g: &mut Members<'_>, now: Time) {
        let others: Vec<MemberId> = g.ids().iter().copied().filter(|&o| o != m).collect();
        if !others.is_empty() {
            self.ensemble_share(m, &others, g);
            return;
        }
        self.rtt = None;
        let Some(c) = self.cache else { return };
        if now.saturating_sub(c.at) > self.p.max_age {
            // Aged out: the joiner keeps the standard initial values.
            self.cache = None;
            return;
        }
        let st = g.get_mut(m);
        st.ssthresh = c.ssthresh;
        if self.p.cwnd {
            st.cwnd = c.cwnd.max(1.0);
        }
        if let Some((srtt, rttvar)) = c.rtt {
            st.rtt.set(srtt, rttvar);
            self.rtt = c.rtt;
        }
    }

    fn on_leave(&mut self, m: MemberId, g: &mut Members<'_>, now: Time) {
        if self.p.temporal {
            let st = g.get(m);
            // In recovery the window the variant inflated is not one to start from: its cut is.
            let cwnd = if st.phase == Phase::Recovery { st.ssthresh } else { st.cwnd };
            let rtt = (st.rtt.samples > 0).then_some((st.rtt.srtt, st.rtt.rttvar));
            self.cache = Some(Cached { at: now, rtt: rtt.or(self.rtt), ssthresh: st.ssthresh, cwnd });
        }
        if g.len() == 1 {
            self.rtt = None;
        }
    }

    fn on_ack(&mut self, m: MemberId, ack: &AckSample, g: &mut Members<'_>) {
        if !ack.in_recovery {
            Aimd::reno().on_ack(g.get_mut(m), ack);
        }
        let est = g.get(m).rtt;
        if est.samples > 0 {
            self.rtt = Some((est.srtt, est.rttvar));
        }
    }

    fn on_loss(&mut self, m: MemberId, loss: &LossSignal, g: &mut Members<'_>) -> f64 {
        Aimd::reno().ssthresh_after(g.get(m), loss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::ack;
    use crate::cc::{CcHost, CcState, RttEstimator};

    const MS: Time = 1_000_000;
    const S: Time = 1_000_000_000;

    /// Initial window 3, ssthresh 44, an RTO floor of 100 ms so inherited RTOs show.
    fn fresh() -> CcState {
        let mut st = CcState::new(3.0, 44.0, 1460);
        st.rtt = RttEstimator::new(1000 * MS, MS, 100 * MS, 60 * S);
        st
    }

    fn host(p: TcbParams) -> (CcHost, u32) {
        let mut host = CcHost::new();
        let gid = host.add_group(Box::new(Tcb::new(p)));
        (host, gid)
    }

    /// A member that measured SRTT `srtt` and RTTVAR `rttvar` (ms) and holds `cwnd`/`ssthresh`.
    fn open(host: &mut CcHost, gid: u32, cwnd: f64, ssthresh: f64, rtt_ms: (f64, f64), now: Time) -> MemberId {
        let m = host.join(fresh(), Some(gid), None, now);
        let st = host.state_mut(m);
        st.cwnd = cwnd;
        st.ssthresh = ssthresh;
        st.rtt.set(rtt_ms.0 * MS as f64, rtt_ms.1 * MS as f64);
        host.on_ack(m, &AckSample { in_recovery: true, ..ack() });
        m
    }

    fn view(host: &CcHost, m: MemberId) -> (f64, f64, f64, f64, Time) {
        let st = host.state(m);
        (st.cwnd, st.ssthresh, st.rtt.srtt / MS as f64, st.rtt.rttvar / MS as f64, st.rtt.rto / MS)
    }

    /// A connection closing with SRTT 100 ms, RTTVAR 20 ms, ssthresh 30 and cwnd 36: the next
    /// one, 10 s later, starts with all four (RTO 100 + 4·20 = 180 ms instead of 1 s).
    #[test]
    fn temporal_sharing_within_the_age_limit() {
        let (mut h, gid) = host(TcbParams::new(Sharing::Tcb));
        let a = open(&mut h, gid, 36.0, 30.0, (100.0, 20.0), 0);
        h.leave(a, 5 * S);
        let b = h.join(fresh(), Some(gid), None, 15 * S);
        assert_eq!(view(&h, b), (36.0, 30.0, 100.0, 20.0, 180));
        // With cwnd = false only RTT and ssthresh are inherited.
        let (mut h, gid) = host(TcbParams { cwnd: false, ..TcbParams::new(Sharing::Tcb) });
        let a = open(&mut h, gid, 36.0, 30.0, (100.0, 20.0), 0);
        h.leave(a, 5 * S);
        let b = h.join(fresh(), Some(gid), None, 15 * S);
        assert_eq!(view(&h, b), (3.0, 30.0, 100.0, 20.0, 180));
    }

    /// With max_age 60 s, state left at 5 s is used at 65 s and discarded at 65 s + 1 ns: the
    /// joiner starts with the standard values (cwnd 3, ssthresh 44, no RTT, RTO 1 s).
    #[test]
    fn aged_state_is_discarded() {
        let p = TcbParams { max_age: 60 * S, ..TcbParams::new(Sharing::Tcb) };
        let (mut h, gid) = host(p);
        let a = open(&mut h, gid, 36.0, 30.0, (100.0, 20.0), 0);
        h.leave(a, 5 * S);
        let b = h.join(fresh(), Some(gid), None, 65 * S);
        assert_eq!(view(&h, b).1, 30.0);
        h.leave(b, 65 * S);
        let c = h.join(fresh(), Some(gid), None, 125 * S + 1);
        assert_eq!(view(&h, c), (3.0, 44.0, 0.0, 0.0, 1000));
        assert_eq!(h.state(c).rtt.samples, 0);
        // Without temporal sharing nothing is kept at all.
        let (mut h, gid) = host(TcbParams { temporal: false, ..TcbParams::new(Sharing::Tcb) });
        let a = open(&mut h, gid, 36.0, 30.0, (100.0, 20.0), 0);
        h.leave(a, S);
        let b = h.join(fresh(), Some(gid), None, S);
        assert_eq!(view(&h, b), (3.0, 44.0, 0.0, 0.0, 1000));
    }

    /// Two open connections with cwnd 10 and 20, ssthresh 40 and 20; the second sampled last
    /// (SRTT 80 ms, RTTVAR 10 ms). TCB: the joiner takes the means, cwnd 15 and ssthresh 30,
    /// and the ensemble's RTT (RTO 120 ms); the others keep theirs.
    #[test]
    fn tcb_ensemble_sharing_takes_the_open_members_means() {
        let (mut h, gid) = host(TcbParams::new(Sharing::Tcb));
        let a = open(&mut h, gid, 10.0, 40.0, (100.0, 20.0), 0);
        let b = open(&mut h, gid, 20.0, 20.0, (80.0, 10.0), 0);
        let c = h.join(fresh(), Some(gid), None, S);
        assert_eq!(view(&h, c), (15.0, 30.0, 80.0, 10.0, 120));
        assert_eq!((view(&h, a).0, view(&h, b).0), (10.0, 20.0));
    }

    /// E-TCP: the same two members' window (30) and ssthresh (60) are re-shared over three,
    /// 10 and 20 each; the ensemble's window does not grow by the joiner's initial window.
    #[test]
    fn etcp_reshares_the_ensemble_window_at_open() {
        let (mut h, gid) = host(TcbParams::new(Sharing::Etcp));
        let a = open(&mut h, gid, 10.0, 40.0, (100.0, 20.0), 0);
        // b's open re-shares a's window; then both grow apart to 10/40 and 20/20.
        let b = open(&mut h, gid, 20.0, 20.0, (80.0, 10.0), 0);
        (h.state_mut(a).cwnd, h.state_mut(a).ssthresh) = (10.0, 40.0);
        let c = h.join(fresh(), Some(gid), None, S);
        for m in [a, b, c] {
            assert_eq!(view(&h, m).0..=view(&h, m).1, 10.0..=20.0);
        }
        assert_eq!(view(&h, c).2, 80.0);
        // After open each member grows on its own: an ACK on c in slow start adds one to c only.
        h.on_ack(c, &ack());
        assert_eq!((view(&h, a).0, view(&h, c).0), (10.0, 11.0));
        // A lone E-TCP member after the ensemble closed starts from the cache, as TCB does.
        for m in [a, b, c] {
            h.leave(m, 2 * S);
        }
        let d = h.join(fresh(), Some(gid), None, 3 * S);
        assert_eq!(view(&h, d).0, 11.0, "the last to close left cwnd 11");
    }

    /// A connection closing in fast recovery leaves its cut (ssthresh), not the inflated window.
    #[test]
    fn a_close_in_recovery_caches_the_cut() {
        let (mut h, gid) = host(TcbParams::new(Sharing::Tcb));
        let a = open(&mut h, gid, 20.0, 44.0, (100.0, 20.0), 0);
        let ss = h.on_loss(a, &crate::cc::testing::loss(20));
        h.state_mut(a).ssthresh = ss;
        h.state_mut(a).cwnd = ss + 3.0;
        h.set_phase(a, Phase::Recovery);
        h.leave(a, S);
        let b = h.join(fresh(), Some(gid), None, 2 * S);
        assert_eq!(view(&h, b).0..=view(&h, b).1, 10.0..=10.0);
    }
}
