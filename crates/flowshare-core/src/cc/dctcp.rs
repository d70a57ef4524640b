//! DCTCP (M. Alizadeh, A. Greenberg, D. A. Maltz, J. Padhye, P. Patel, B. Prabhakar,
//! S. Sengupta, M. Sridharan, "Data Center TCP (DCTCP)", ACM SIGCOMM 2010; S. Bensley,
//! D. Thaler, P. Balasubramanian, L. Eggert, G. Judd, "Data Center TCP (DCTCP): TCP Congestion
//! Control for Data Centers", RFC 8257, 2017).
//!
//! The switch marks every ECN-capable arrival that finds the queue at or above K (the queue
//! option `ecn_threshold`); the receiver echoes each segment's mark (RFC 8257 §3.2, in
//! [`crate::tcp::Sink`]); the sender estimates the fraction of marked data:
//!
//! - once per window of data (when the cumulative ACK reaches the `snd_nxt` recorded at the
//!   last update), F = marked / acknowledged segments over that window and
//!   α ← (1 − g)·α + g·F (RFC 8257 §3.3; g = 1/16 and α = 1 initially, Linux's
//!   `dctcp_shift_g` 4 and `dctcp_alpha_on_init` 1024);
//! - on an ECN echo, at most once per window (the sender's CWR rule), cwnd ← cwnd·(1 − α/2),
//!   at least 2 segments;
//! - growth and the reaction to a loss are Reno's (RFC 8257 §3.4: a loss halves the window).
//!
//! The counts are in segments acknowledged cumulatively (Linux counts bytes, newer kernels
//! delivered segments SACK included) and α is a real number, not Linux's 10-bit fixed point.

use super::{in_slow_start, slow_start, AckSample, Caps, CcState, CongestionControl, LossKind, LossSignal};
use serde::{Deserialize, Serialize};

/// DCTCP's parameters (validated by `CcConfig`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DctcpParams {
    /// Weight g of the newest window's fraction in α (0 < g ≤ 1; 1/16).
    pub g: f64,
    /// α before the first update (0 ≤ α ≤ 1; 1, so a flow starts cautious).
    pub initial_alpha: f64,
}

impl Default for DctcpParams {
    fn default() -> Self {
        DctcpParams { g: 1.0 / 16.0, initial_alpha: 1.0 }
    }
}

/// DCTCP state.
#[derive(Clone, Copy, Debug)]
pub struct Dctcp {
    p: DctcpParams,
    /// Estimated fraction of marked segments.
    alpha: f64,
    /// Segments acknowledged, and acknowledged with ECE, in the current window.
    acked: u64,
    marked: u64,
    /// The window ends when the cumulative ACK reaches this segment.
    next_seq: u64,
}

impl Dctcp {
    /// A fresh instance.
    pub fn new(p: DctcpParams) -> Self {
        Dctcp { p, alpha: p.initial_alpha, acked: 0, marked: 0, next_seq: 0 }
    }

    /// α now.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Count one ACK (`newly` segments, `ece` echoed) and, at a window's end, update α from
    /// F = marked / acknowledged (RFC 8257 §3.3).
    pub fn count(&mut self, newly: u64, ece: bool, snd_una: u64, snd_nxt: u64) {
        self.acked += newly;
        if ece {
            self.marked += newly;
        }
        if snd_una >= self.next_seq {
            if self.acked > 0 {
                let f = self.marked as f64 / self.acked as f64;
                self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g * f;
            }
            self.next_seq = snd_nxt;
            self.acked = 0;
            self.marked = 0;
        }
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    fn caps(&self) -> Caps {
        Caps { ack_events: true, ..Caps::default() }
    }

    /// α's accounting sees every ACK, before the sender's reaction to its echo.
    fn on_ack_event(&mut self, st: &CcState, ack: &AckSample) {
        self.count(ack.newly_acked, ack.ece, st.snd_una, st.snd_nxt);
    }

    fn on_ack(&mut self, st: &mut CcState, _ack: &AckSample) {
        if in_slow_start(st) {
            slow_start(st);
        } else {
            st.cwnd += 1.0 / st.cwnd;
        }
    }

    fn ssthresh_after(&mut self, st: &CcState, loss: &LossSignal) -> f64 {
        match loss.kind {
            LossKind::Ecn => (st.cwnd * (1.0 - self.alpha / 2.0)).max(2.0),
            LossKind::DupAcks | LossKind::Timeout => (loss.flight_size as f64 / 2.0).max(2.0),
        }
    }

    fn metrics(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("dctcp_alpha", self.alpha);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::loss_of;

    /// α = 1, g = 1/16 and a window without a mark: α = 15/16, then (15/16)² after a second.
    #[test]
    fn alpha_decays_by_one_minus_g_per_unmarked_window() {
        let mut d = Dctcp::new(DctcpParams::default());
        // The first ACK closes the (empty) window before any data: F over its own segment.
        d.count(1, false, 1, 10);
        assert_eq!(d.alpha(), 15.0 / 16.0);
        // Nine more segments of that window, then the ACK reaching 10 closes it.
        for una in 2..10 {
            d.count(1, false, una, 20);
            assert_eq!(d.alpha(), 15.0 / 16.0, "no update inside a window");
        }
        d.count(1, false, 10, 20);
        assert_eq!(d.alpha(), (15.0 / 16.0) * (15.0 / 16.0));
    }

    /// F = marked / acknowledged over the window: 5 of 20 segments marked, α from 0 to
    /// g·F = 1/16 · 1/4 = 1/64; with g = 1/2 and α = 1: 1/2 + 1/2 · 1/4 = 5/8.
    #[test]
    fn alpha_moves_towards_the_marked_fraction() {
        for (p, expected) in [
            (DctcpParams { g: 1.0 / 16.0, initial_alpha: 0.0 }, 1.0 / 64.0),
            (DctcpParams { g: 0.5, initial_alpha: 1.0 }, 5.0 / 8.0),
        ] {
            let mut d = Dctcp::new(p);
            d.next_seq = 20;
            for una in 1..=20 {
                d.count(1, una % 4 == 0, una, 40);
            }
            assert!((d.alpha() - expected).abs() < 1e-15, "{p:?}: α = {}", d.alpha());
        }
    }

    /// The cut on an echo is cwnd·(1 − α/2): α = 1 halves, α = 1/4 keeps 7/8, at least 2;
    /// a loss halves FlightSize as Reno does.
    #[test]
    fn the_cut_is_alpha_over_two_and_loss_is_reno() {
        let st = CcState::new(80.0, f64::INFINITY, 1460);
        let mut d = Dctcp::new(DctcpParams::default());
        assert_eq!(d.ssthresh_after(&st, &loss_of(LossKind::Ecn, 80)), 40.0);
        d.alpha = 0.25;
        assert_eq!(d.ssthresh_after(&st, &loss_of(LossKind::Ecn, 80)), 70.0);
        assert_eq!(d.ssthresh_after(&st, &loss_of(LossKind::DupAcks, 60)), 30.0);
        assert_eq!(d.ssthresh_after(&st, &loss_of(LossKind::Timeout, 3)), 2.0);
        let small = CcState::new(3.0, f64::INFINITY, 1460);
        d.alpha = 1.0;
        assert_eq!(d.ssthresh_after(&small, &loss_of(LossKind::Ecn, 3)), 2.0);
    }
}
