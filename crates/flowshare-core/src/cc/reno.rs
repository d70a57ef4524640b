//! AIMD window control; with a = 1, b = 1/2 it is Reno's (RFC 5681 §3.1).
//!
//! Growth is credited once per ACK of new data, as RFC 5681 (eq. 2 and 3), ns-2's
//! `TcpAgent::opencwnd` and ns-3's `TcpNewReno` do: +1 segment per ACK in slow start and
//! +a/cwnd per ACK in congestion avoidance. The decrease is ssthresh = max((1 − b)·FlightSize, 2)
//! (RFC 5681 eq. 4 with b = 1/2).

use super::{in_slow_start, slow_start, AckSample, CcState, CongestionControl, LossSignal};

/// Additive increase `a` segments per RTT, multiplicative decrease by the factor `b`.
#[derive(Clone, Copy, Debug)]
pub struct Aimd {
    /// Segments added per RTT in congestion avoidance.
    pub a: f64,
    /// Fraction of the window removed on a loss.
    pub b: f64,
}

impl Aimd {
    /// Reno: AIMD(1, 1/2).
    pub fn reno() -> Self {
        Aimd { a: 1.0, b: 0.5 }
    }
}

impl CongestionControl for Aimd {
    fn name(&self) -> &'static str {
        if self.a == 1.0 && self.b == 0.5 {
            "reno"
        } else {
            "aimd"
        }
    }

    fn on_ack(&mut self, st: &mut CcState, _ack: &AckSample) {
        if in_slow_start(st) {
            slow_start(st);
        } else {
            st.cwnd += self.a / st.cwnd;
        }
    }

    fn ssthresh_after(&mut self, _st: &CcState, loss: &LossSignal) -> f64 {
        ((1.0 - self.b) * loss.flight_size as f64).max(2.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::ack;
    use crate::cc::{LossKind, Phase};

    #[test]
    fn slow_start_adds_one_segment_per_ack() {
        let mut st = CcState::new(2.0, 10.0, 1460);
        let mut r = Aimd::reno();
        r.on_ack(&mut st, &ack());
        r.on_ack(&mut st, &ack());
        assert_eq!(st.cwnd, 4.0);
    }

    #[test]
    fn congestion_avoidance_adds_one_segment_per_window_of_acks() {
        let mut st = CcState::new(10.0, 10.0, 1460);
        let mut r = Aimd::reno();
        r.on_ack(&mut st, &ack());
        assert!((st.cwnd - 10.1).abs() < 1e-12);
        // ten ACKs: 10 + sum 1/w ~ 11 (each step uses the current window)
        for _ in 0..9 {
            r.on_ack(&mut st, &ack());
        }
        assert!((st.cwnd - 10.95).abs() < 0.01, "{}", st.cwnd);
    }

    #[test]
    fn loss_halves_the_flight_size_but_not_below_two() {
        let st = CcState { phase: Phase::Open, ..CcState::new(20.0, 100.0, 1460) };
        let mut r = Aimd::reno();
        let loss = |flight| LossSignal { kind: LossKind::DupAcks, now: 0, flight_size: flight };
        assert_eq!(r.ssthresh_after(&st, &loss(20)), 10.0);
        assert_eq!(r.ssthresh_after(&st, &loss(3)), 2.0);
    }
}
