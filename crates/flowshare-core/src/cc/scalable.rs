//! Scalable TCP (Kelly, "Scalable TCP: improving performance in highspeed wide area networks",
//! CCR 33(2), 2003): multiplicative increase, multiplicative decrease.
//!
//! Two variants:
//!
//! - `paper`: +0.01 segment per ACK in congestion avoidance (1 % per RTT), cwnd × 0.875 on a
//!   loss, and plain Reno below the legacy window of 16 segments.
//! - `linux` (`tcp_scalable.c`, also ns-2.35's TCP-Linux): +1 segment per `min(cwnd, 50)`
//!   segments acknowledged, i.e. 2 % per RTT above 50 segments and Reno-like below; ssthresh =
//!   max(cwnd − ⌊cwnd/8⌋, 2) always.
//!
//! Differences from both: the decrease applies to FlightSize (RFC 5681's convention, used by
//! every algorithm here) rather than cwnd; they are equal while the flow is window-limited.

use super::{in_slow_start, slow_start, AckSample, CcState, CongestionControl, LossSignal};
use serde::{Deserialize, Serialize};

/// Paper (Kelly 2003) or Linux constants.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScalableVariant {
    /// a = 0.01 per ACK, b = 0.125, Reno below 16 segments.
    #[default]
    Paper,
    /// +1 per min(cwnd, 50) segments acknowledged, b = 1/8.
    Linux,
}

/// Legacy window below which the paper variant behaves like Reno.
const LOW_WINDOW: f64 = 16.0;
/// Paper: increase per ACK.
const A: f64 = 0.01;
/// Decrease factor.
const B: f64 = 0.125;
/// Linux: `TCP_SCALABLE_AI_CNT`.
const AI_CNT: f64 = 50.0;

/// Scalable TCP state.
#[derive(Clone, Copy, Debug)]
pub struct Scalable {
    variant: ScalableVariant,
    /// Linux: segments acknowledged towards the next increment.
    acked: f64,
}

impl Scalable {
    /// A fresh instance.
    pub fn new(variant: ScalableVariant) -> Self {
        Scalable { variant, acked: 0.0 }
    }
}

impl CongestionControl for Scalable {
    fn name(&self) -> &'static str {
        "scalable"
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &AckSample) {
        if in_slow_start(st) {
            slow_start(st);
            return;
        }
        match self.variant {
            ScalableVariant::Paper if st.cwnd < LOW_WINDOW => st.cwnd += 1.0 / st.cwnd,
            ScalableVariant::Paper => st.cwnd += A,
            ScalableVariant::Linux => {
                // tcp_cong_avoid_ai(tp, min(cwnd, 50), acked)
                let cnt = st.cwnd.floor().clamp(1.0, AI_CNT);
                self.acked += ack.newly_acked as f64;
                while self.acked >= cnt {
                    self.acked -= cnt;
                    st.cwnd += 1.0;
                }
            }
        }
    }

    fn ssthresh_after(&mut self, _st: &CcState, loss: &LossSignal) -> f64 {
        let w = loss.flight_size as f64;
        self.acked = 0.0;
        let cut = match self.variant {
            ScalableVariant::Paper if w < LOW_WINDOW => w / 2.0,
            ScalableVariant::Paper => w * (1.0 - B),
            ScalableVariant::Linux => w - (w / 8.0).floor(),
        };
        cut.max(2.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::{ack, loss};

    /// Kelly (2003) and Linux `tcp_scalable.c`: at cwnd 1000 with one ACK per segment the paper
    /// adds 10 per RTT, Linux 20; a loss leaves 875.
    #[test]
    fn worked_example_at_a_window_of_1000() {
        for (variant, gain) in [(ScalableVariant::Paper, 10.0), (ScalableVariant::Linux, 20.0)] {
            let mut st = CcState::new(1000.0, 500.0, 1460);
            let mut s = Scalable::new(variant);
            for _ in 0..1000 {
                s.on_ack(&mut st, &ack());
            }
            assert!((st.cwnd - (1000.0 + gain)).abs() < 1e-6, "{variant:?}: {}", st.cwnd);
            assert_eq!(s.ssthresh_after(&st, &loss(1000)), 875.0);
        }
    }

    #[test]
    fn paper_variant_is_reno_below_the_legacy_window() {
        let mut st = CcState::new(10.0, 5.0, 1460);
        let mut s = Scalable::new(ScalableVariant::Paper);
        s.on_ack(&mut st, &ack());
        assert!((st.cwnd - 10.1).abs() < 1e-12);
        assert_eq!(s.ssthresh_after(&st, &loss(10)), 5.0);
        assert_eq!(s.ssthresh_after(&st, &loss(3)), 2.0);
    }

    #[test]
    fn linux_variant_is_reno_like_below_fifty_segments() {
        let mut st = CcState::new(20.0, 10.0, 1460);
        let mut s = Scalable::new(ScalableVariant::Linux);
        for _ in 0..20 {
            s.on_ack(&mut st, &ack());
        }
        assert_eq!(st.cwnd, 21.0);
        assert_eq!(s.ssthresh_after(&st, &loss(20)), 18.0, "20 - floor(20/8)");
    }
}
