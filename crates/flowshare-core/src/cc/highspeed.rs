//! HighSpeed TCP (Floyd, RFC 3649, "HighSpeed TCP for Large Congestion Windows", 2003): AIMD
//! whose increase a(w) and decrease b(w) depend on the window, so that a flow needs far fewer
//! loss-free RTTs to fill a large pipe. Below Low_Window = 38 segments it is Reno.
//!
//! Two variants:
//!
//! - `rfc` (default): the continuous response function of RFC 3649 §5 with Low_Window = 38,
//!   High_Window = 83000, High_P = 10⁻⁷, High_Decrease = 0.1; b(w) is linear in ln w, p(w)
//!   log-linear in ln w, and a(w) = w²·p(w)·2b(w)/(2 − b(w)). Per ACK cwnd += a(w)/cwnd; on a
//!   loss ssthresh = (1 − b(w))·w. This is also what ns-2's native `windowOption_ 8` computes.
//! - `linux` (`tcp_highspeed.c`, identical in ns-2.35's TCP-Linux): the 72-row table of RFC 3649
//!   Appendix B. The row i (0-based) holding ⌊cwnd⌋ in (cwnd_{i−1}, cwnd_i] gives a = i + 1
//!   segments per RTT, credited with Linux's counter idiom (+1 segment once the counter reaches
//!   cwnd), and a decrease md_i/256: ssthresh = w − ⌊w·md_i/256⌋.
//!
//! Differences: the decrease applies to FlightSize (RFC 5681's convention, used by every
//! algorithm here) where RFC 3649 and Linux use cwnd; they are equal while the flow is
//! window-limited. Linux picks the decrease row from the window of the last ACK in congestion
//! avoidance; here the row is that of FlightSize at the loss. ns-2's native agent halves on the
//! first decrease, in slow start and after a timeout whatever b(w) is; that is not reproduced.
//! Slow start is the shared one; RFC 3649 recommends limited slow start (`tcp.max_ssthresh`).

use super::{in_slow_start, slow_start, AckSample, CcState, CongestionControl, LossSignal};
use serde::{Deserialize, Serialize};

/// RFC formula or Linux table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HighSpeedVariant {
    /// The continuous a(w), b(w) of RFC 3649 §5.
    #[default]
    Rfc,
    /// The RFC 3649 Appendix B table as Linux `tcp_highspeed.c` uses it.
    Linux,
}

/// Window (segments) at and below which HighSpeed TCP is Reno (RFC 3649 §5).
pub const LOW_WINDOW: f64 = 38.0;
/// Window at which the response function reaches High_P (RFC 3649 §5).
const HIGH_WINDOW: f64 = 83_000.0;
/// Loss rate at High_Window.
const HIGH_P: f64 = 1e-7;
/// Decrease factor b at High_Window.
const HIGH_DECREASE: f64 = 0.1;
/// Loss rate at Low_Window: Reno's response function w = sqrt(1.5/p) solved for p.
const LOW_P: f64 = 1.5 / (LOW_WINDOW * LOW_WINDOW);

/// RFC 3649 Appendix B as scaled by Linux: (upper window of the row, decrease × 256).
/// Row i applies to windows in (previous bound, bound] and adds i + 1 segments per RTT; windows
/// above the last bound use the last row.
const LINUX_TABLE: [(u32, u32); 72] = [
    (38, 128),
    (118, 112),
    (221, 104),
    (347, 98),
    (495, 93),
    (663, 89),
    (851, 86),
    (1058, 83),
    (1284, 81),
    (1529, 78),
    (1793, 76),
    (2076, 74),
    (2378, 72),
    (2699, 71),
    (3039, 69),
    (3399, 68),
    (3778, 66),
    (4177, 65),
    (4596, 64),
    (5036, 62),
    (5497, 61),
    (5979, 60),
    (6483, 59),
    (7009, 58),
    (7558, 57),
    (8130, 56),
    (8726, 55),
    (9346, 54),
    (9991, 53),
    (10661, 52),
    (11358, 52),
    (12082, 51),
    (12834, 50),
    (13614, 49),
    (14424, 48),
    (15265, 48),
    (16137, 47),
    (17042, 46),
    (17981, 45),
    (18955, 45),
    (19965, 44),
    (21013, 43),
    (22101, 43),
    (23230, 42),
    (24402, 41),
    (25618, 41),
    (26881, 40),
    (28193, 39),
    (29557, 39),
    (30975, 38),
    (32450, 38),
    (33986, 37),
    (35586, 36),
    (37253, 36),
    (38992, 35),
    (40808, 35),
    (42707, 34),
    (44694, 33),
    (46776, 33),
    (48961, 32),
    (51258, 32),
    (53677, 31),
    (56230, 30),
    (58932, 30),
    (61799, 29),
    (64851, 28),
    (68113, 28),
    (71617, 27),
    (75401, 26),
    (79517, 26),
    (84035, 25),
    (89053, 24),
];

/// Fraction of the way from Low_Window to High_Window on a log scale.
fn log_position(w: f64) -> f64 {
    (w.ln() - LOW_WINDOW.ln()) / (HIGH_WINDOW.ln() - LOW_WINDOW.ln())
}

/// RFC 3649 b(w): 0.5 at Low_Window, High_Decrease at High_Window.
pub fn rfc_b(w: f64) -> f64 {
    if w <= LOW_WINDOW {
        return 0.5;
    }
    (HIGH_DECREASE - 0.5) * log_position(w) + 0.5
}

/// RFC 3649 p(w): the loss rate at which the response function gives window w.
pub fn rfc_p(w: f64) -> f64 {
    (LOW_P.ln() + log_position(w) * (HIGH_P.ln() - LOW_P.ln())).exp()
}

/// RFC 3649 a(w) = w²·p(w)·2b(w)/(2 − b(w)): segments added per RTT.
pub fn rfc_a(w: f64) -> f64 {
    if w <= LOW_WINDOW {
        return 1.0;
    }
    let b = rfc_b(w);
    w * w * rfc_p(w) * 2.0 * b / (2.0 - b)
}

/// Linux table row for an integer window.
fn linux_row(w: u64) -> usize {
    LINUX_TABLE.iter().position(|&(bound, _)| w <= u64::from(bound)).unwrap_or(LINUX_TABLE.len() - 1)
}

/// Linux (a, b) for a window: a = row + 1 segments per RTT, b = md/256.
pub fn linux_ab(w: f64) -> (f64, f64) {
    let row = linux_row(w.max(0.0).floor() as u64);
    ((row + 1) as f64, f64::from(LINUX_TABLE[row].1) / 256.0)
}

/// HighSpeed TCP state.
#[derive(Clone, Copy, Debug)]
pub struct HighSpeed {
    variant: HighSpeedVariant,
    /// Linux: a-credits accumulated towards the next +1 segment.
    counter: f64,
    /// a(w) and b(w) at the last window the algorithm looked at (for `metrics`).
    a: f64,
    b: f64,
    /// Window (⌊cwnd⌋) for which `a` and `b` were computed.
    at: u64,
}

impl HighSpeed {
    /// A fresh instance.
    pub fn new(variant: HighSpeedVariant) -> Self {
        HighSpeed { variant, counter: 0.0, a: 1.0, b: 0.5, at: 0 }
    }

    /// (a(w), b(w)) of this variant.
    pub fn ab(&self, w: f64) -> (f64, f64) {
        match self.variant {
            HighSpeedVariant::Rfc => (rfc_a(w), rfc_b(w)),
            HighSpeedVariant::Linux => linux_ab(w),
        }
    }

    /// Refresh the cached a and b when the integer window changes (the logs and the exponential
    /// are then computed once per window step, not once per ACK; ns-2's `cwnd_range_` does the
    /// same).
    fn refresh(&mut self, w: f64) {
        let at = w.max(0.0).floor() as u64;
        if at != self.at {
            (self.a, self.b) = self.ab(at as f64);
            self.at = at;
        }
    }
}

impl CongestionControl for HighSpeed {
    fn name(&self) -> &'static str {
        "highspeed"
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &AckSample) {
        if in_slow_start(st) {
            slow_start(st);
            return;
        }
        self.refresh(st.cwnd);
        match self.variant {
            HighSpeedVariant::Rfc => st.cwnd += self.a / st.cwnd,
            HighSpeedVariant::Linux => {
                // snd_cwnd_cnt += a; one more segment each time it reaches cwnd
                let w = st.cwnd.floor().max(1.0);
                self.counter += self.a * ack.newly_acked as f64;
                while self.counter >= w {
                    self.counter -= w;
                    st.cwnd += 1.0;
                }
            }
        }
    }

    fn ssthresh_after(&mut self, _st: &CcState, loss: &LossSignal) -> f64 {
        let w = loss.flight_size as f64;
        self.counter = 0.0;
        self.refresh(w);
        let cut = match self.variant {
            HighSpeedVariant::Rfc => (1.0 - rfc_b(w)) * w,
            HighSpeedVariant::Linux => {
                let md = u64::from(LINUX_TABLE[linux_row(loss.flight_size)].1);
                (loss.flight_size - loss.flight_size * md / 256) as f64
            }
        };
        cut.max(2.0)
    }

    fn metrics(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("hstcp_a", self.a);
        out("hstcp_b", self.b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::{ack, loss};

    /// RFC 3649 §5, worked values of the formula: (label, w, p, b, a).
    #[test]
    fn rfc_response_function_table() {
        let rows = [
            ("Low_Window", 38.0, 1.039e-3, 0.500, 1.00),
            ("w = 100", 100.0, 3.244e-4, 0.4497, 1.882),
            ("w = 1000", 1000.0, 2.034e-5, 0.3299, 8.034),
            ("w = 10000", 10_000.0, 1.275e-6, 0.2101, 29.93),
            ("High_Window", 83_000.0, 1.0e-7, 0.100, 72.5),
        ];
        for (label, w, p, b, a) in rows {
            assert!((rfc_p(w) - p).abs() / p < 1e-3, "{label}: p = {}", rfc_p(w));
            assert!((rfc_b(w) - b).abs() < 1e-4, "{label}: b = {}", rfc_b(w));
            assert!((rfc_a(w) - a).abs() / a < 2e-3, "{label}: a = {}", rfc_a(w));
        }
        assert_eq!((rfc_a(10.0), rfc_b(10.0)), (1.0, 0.5), "Reno below Low_Window");
    }

    /// The Linux table: (label, w, a, md/256, ssthresh after a loss at w).
    #[test]
    fn linux_table_rows() {
        let rows = [
            ("Reno at 20", 20, 1.0, 128, 10),
            ("last Reno row", 38, 1.0, 128, 19),
            ("second row starts", 39, 2.0, 112, 39 - 39 * 112 / 256),
            ("w = 100", 100, 2.0, 112, 57),
            ("w = 1000: 1000 - 324", 1000, 8.0, 83, 676),
            ("w = 10000", 10_000, 30.0, 52, 10_000 - 2031),
            ("w = 83000", 83_000, 71.0, 25, 83_000 - 8105),
            ("beyond the table", 100_000, 72.0, 24, 100_000 - 9375),
        ];
        for (label, w, a, md, ssthresh) in rows {
            let (ta, tb) = linux_ab(w as f64);
            assert_eq!(ta, a, "{label}: a");
            assert_eq!(tb, f64::from(md) / 256.0, "{label}: b");
            let mut h = HighSpeed::new(HighSpeedVariant::Linux);
            let st = CcState::new(w as f64, 1.0, 1460);
            assert_eq!(h.ssthresh_after(&st, &loss(w)), ssthresh as f64, "{label}: ssthresh");
        }
    }

    /// About one window of ACKs at w = 1000. RFC: +a(w)/w per ACK with a(1000) = 8.034 and
    /// a(1008) = 8.07 gives +8.03. Linux: each ACK credits a = 8 and the k-th increment costs
    /// 1000 + k − 1 credits, so 7 increments take 7021 credits (878 ACKs) and the 8th needs
    /// 8028 (1004 ACKs). A loss then leaves (1 − 0.3299)·1000 = 670.1 (RFC) or 676 (Linux).
    #[test]
    fn one_rtt_and_one_loss_at_a_window_of_1000() {
        let rows = [
            ("RFC, 1000 ACKs", HighSpeedVariant::Rfc, 1000, 8.03, 0.02, 670.12),
            ("Linux, 1003 ACKs", HighSpeedVariant::Linux, 1003, 7.0, 0.0, 676.0),
            ("Linux, 1004 ACKs", HighSpeedVariant::Linux, 1004, 8.0, 0.0, 676.0),
        ];
        for (label, variant, acks, gain, tol, after) in rows {
            let mut st = CcState::new(1000.0, 500.0, 1460);
            let mut h = HighSpeed::new(variant);
            for _ in 0..acks {
                h.on_ack(&mut st, &ack());
            }
            assert!((st.cwnd - 1000.0 - gain).abs() <= tol, "{label}: {}", st.cwnd);
            let cut = h.ssthresh_after(&st, &loss(1000));
            assert!((cut - after).abs() < 0.01, "{label}: {cut}");
        }
    }

    #[test]
    fn reno_at_and_below_low_window() {
        for variant in [HighSpeedVariant::Rfc, HighSpeedVariant::Linux] {
            let mut st = CcState::new(30.0, 10.0, 1460);
            let mut h = HighSpeed::new(variant);
            for _ in 0..30 {
                h.on_ack(&mut st, &ack());
            }
            assert!((st.cwnd - 31.0).abs() < 0.02, "{variant:?}: {}", st.cwnd);
            assert_eq!(h.ssthresh_after(&st, &loss(30)), 15.0, "{variant:?}");
            assert_eq!(h.ssthresh_after(&st, &loss(3)), 2.0, "{variant:?}: floor of 2");
        }
    }

    #[test]
    fn slow_start_is_the_shared_one_and_metrics_report_a_and_b() {
        let mut st = CcState::new(100.0, f64::INFINITY, 1460);
        st.max_ssthresh = Some(100.0);
        let mut h = HighSpeed::new(HighSpeedVariant::Rfc);
        h.on_ack(&mut st, &ack());
        assert_eq!(st.cwnd, 101.0);
        h.on_ack(&mut st, &ack());
        assert!((st.cwnd - (101.0 + 1.0 / 2.0)).abs() < 1e-12, "limited slow start: {}", st.cwnd);
        (st.cwnd, st.ssthresh) = (100.0, 50.0);
        h.on_ack(&mut st, &ack());
        let mut seen = Vec::new();
        h.metrics(&mut |k, v| seen.push((k, v)));
        assert_eq!(seen[0].0, "hstcp_a");
        assert!((seen[0].1 - 1.882).abs() < 0.01 && (seen[1].1 - 0.4497).abs() < 0.001, "{seen:?}");
    }
}
