//! MulTCP(N) (Crowcroft and Oechslin, "Differentiated end-to-end Internet services using a
//! weighted proportional fair sharing TCP", CCR 28(3), 1998): one connection that behaves like
//! N Reno flows, i.e. AIMD(N, 1/(2N)).
//!
//! - Congestion avoidance: cwnd += N/cwnd per ACK (N segments per RTT).
//! - Loss: one of the N virtual flows halves, so ssthresh = (1 − 1/(2N))·FlightSize.
//! - Slow start: `standard` (+1 per ACK), or `triple`, the original paper's: +2 per ACK (×3 per
//!   RTT) until the window N flows would hold, N·2^k = 3^k, i.e. below N^(ln 3 / ln 1.5) segments
//!   (Crowcroft and Oechslin 1998); limited slow start applies above that point as for any flow.
//! - Loss policy (resolution pamultcp:A16): `multcp` (the default: the MulTCP decrease on every
//!   loss, timeouts included, cwnd = 1 after a timeout), `halve_on_timeout` (ssthresh = FlightSize/2
//!   after a timeout), or `ns2` (what ns-2.35's `increase_num_`/`decrease_num_` agent does in
//!   `TcpAgent::slowdown`: halve on the first decrease, on a decrease in slow start and at a
//!   timeout itself, the MulTCP decrease otherwise; from the window ⌊cwnd⌋, not FlightSize, with
//!   ssthresh truncated to whole segments).

use super::{in_slow_start, slow_start, AckSample, CcState, CongestionControl, LossKind, LossSignal};
use serde::{Deserialize, Serialize};

/// Slow-start rule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MulTcpSlowStart {
    /// One segment per ACK, as for one Reno flow.
    #[default]
    Standard,
    /// Two segments per ACK until N^(ln 3/ln 1.5) segments, then one.
    Triple,
}

/// How ssthresh is chosen on a loss (resolution pamultcp:A16).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossPolicy {
    /// (1 − 1/(2N))·FlightSize on every loss.
    #[default]
    Multcp,
    /// As `multcp`, but FlightSize/2 after a retransmission timeout.
    HalveOnTimeout,
    /// ns-2's emulation: halve on the first decrease, in slow start and at a timeout; from the
    /// window, truncated.
    Ns2,
}

/// MulTCP state.
#[derive(Clone, Copy, Debug)]
pub struct MulTcp {
    n: f64,
    slow_start: MulTcpSlowStart,
    policy: LossPolicy,
    /// Window below which the triple slow start applies.
    switch: f64,
    decreased: bool,
}

impl MulTcp {
    /// MulTCP emulating `n` ≥ 1 flows.
    pub fn new(n: f64, slow_start: MulTcpSlowStart, policy: LossPolicy) -> Self {
        let switch = n.powf(3f64.ln() / 1.5f64.ln());
        MulTcp { n, slow_start, policy, switch, decreased: false }
    }

    /// Window (segments) up to which the triple slow start grows ×3 per RTT.
    pub fn switch_point(&self) -> f64 {
        self.switch
    }
}

impl CongestionControl for MulTcp {
    fn name(&self) -> &'static str {
        "multcp"
    }

    fn on_ack(&mut self, st: &mut CcState, _ack: &AckSample) {
        if in_slow_start(st) {
            if self.slow_start == MulTcpSlowStart::Triple && st.cwnd < self.switch {
                st.cwnd += 2.0;
            } else {
                slow_start(st);
            }
        } else {
            st.cwnd += self.n / st.cwnd;
        }
    }

    fn ssthresh_after(&mut self, st: &CcState, loss: &LossSignal) -> f64 {
        let timeout = loss.kind == LossKind::Timeout;
        let first = !self.decreased;
        self.decreased = true;
        let decrease = 1.0 - 1.0 / (2.0 * self.n);
        match self.policy {
            LossPolicy::Multcp => (loss.flight_size as f64 * decrease).max(2.0),
            LossPolicy::HalveOnTimeout => (loss.flight_size as f64 * if timeout { 0.5 } else { decrease }).max(2.0),
            LossPolicy::Ns2 => {
                // `slowdown(CLOSE_SSTHRESH_HALF)`: halfwin if first_decrease_, slow start or
                // last_cwnd_action_ == TIMEOUT (set just before the timeout's own slowdown),
                // else decrease_num_ · window(); both truncated, at least 2. ns-2's window
                // during fast recovery is cwnd_ without the inflation, i.e. about ssthresh.
                let window = if st.phase == super::Phase::Recovery { st.ssthresh } else { st.cwnd }.floor();
                let halve = first || st.cwnd < st.ssthresh || timeout;
                (window * if halve { 0.5 } else { decrease }).floor().max(2.0)
            }
        }
    }

    fn metrics(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("multcp_n", self.n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::{ack, loss_of};

    /// Crowcroft and Oechslin (1998): switch points and loss multipliers.
    #[test]
    fn switch_points_and_loss_multipliers() {
        for (n, switch, mult) in [(2.0, 6.54, 0.75), (4.0, 42.8, 0.875), (10.0, 512.0, 0.95)] {
            let mut m = MulTcp::new(n, MulTcpSlowStart::Triple, LossPolicy::Multcp);
            assert!((m.switch_point() - switch).abs() / switch < 0.002, "N={n}: {}", m.switch_point());
            let st = CcState::new(1000.0, 500.0, 1460);
            assert!((m.ssthresh_after(&st, &loss_of(LossKind::DupAcks, 1000)) - 1000.0 * mult).abs() < 1e-9);
        }
    }

    /// N = 4 at cwnd 100: about +4 per RTT; a loss gives 87.5.
    #[test]
    fn worked_example_n4() {
        let mut m = MulTcp::new(4.0, MulTcpSlowStart::Standard, LossPolicy::Multcp);
        let mut st = CcState::new(100.0, 50.0, 1460);
        for _ in 0..100 {
            m.on_ack(&mut st, &ack());
        }
        assert!((st.cwnd - 104.0).abs() < 0.1, "{}", st.cwnd);
        assert_eq!(m.ssthresh_after(&st, &loss_of(LossKind::DupAcks, 100)), 87.5);
    }

    #[test]
    fn triple_slow_start_adds_two_per_ack_below_the_switch_point() {
        let mut m = MulTcp::new(4.0, MulTcpSlowStart::Triple, LossPolicy::Multcp);
        let mut st = CcState::new(2.0, f64::INFINITY, 1460);
        m.on_ack(&mut st, &ack());
        assert_eq!(st.cwnd, 4.0);
        st.cwnd = 43.0;
        m.on_ack(&mut st, &ack());
        assert_eq!(st.cwnd, 44.0, "above 42.8 it doubles per RTT like one flow");
    }

    #[test]
    fn loss_policies_of_resolution_pamultcp_a16() {
        let st = CcState::new(100.0, 50.0, 1460);
        let mut m = MulTcp::new(4.0, MulTcpSlowStart::Standard, LossPolicy::HalveOnTimeout);
        assert_eq!(m.ssthresh_after(&st, &loss_of(LossKind::Timeout, 100)), 50.0);
        assert_eq!(m.ssthresh_after(&st, &loss_of(LossKind::DupAcks, 100)), 87.5);

        // ns-2.35's TcpAgent::slowdown, from the window (101.7 → 101), truncated.
        let st = CcState::new(101.7, 50.0, 1460);
        let mut ns2 = MulTcp::new(4.0, MulTcpSlowStart::Standard, LossPolicy::Ns2);
        assert_eq!(ns2.ssthresh_after(&st, &loss_of(LossKind::DupAcks, 90)), 50.0, "first decrease halves");
        assert_eq!(ns2.ssthresh_after(&st, &loss_of(LossKind::DupAcks, 90)), 88.0, "⌊0.875 × 101⌋");
        assert_eq!(ns2.ssthresh_after(&st, &loss_of(LossKind::Timeout, 90)), 50.0, "a timeout halves itself");
        assert_eq!(ns2.ssthresh_after(&st, &loss_of(LossKind::DupAcks, 90)), 88.0, "the next cut does not");
        let in_slow_start = CcState::new(41.0, 50.0, 1460);
        assert_eq!(ns2.ssthresh_after(&in_slow_start, &loss_of(LossKind::DupAcks, 40)), 20.0);
        let tiny = CcState::new(3.0, 2.0, 1460);
        assert_eq!(ns2.ssthresh_after(&tiny, &loss_of(LossKind::DupAcks, 3)), 2.0, "at least 2");
    }
}
