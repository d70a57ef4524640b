//! The throughput equation a TFRC sender sets its rate from, and its inverse.
//!
//! RFC 5348 §3.1 (S. Floyd, M. Handley, J. Padhye, J. Widmer, "TCP Friendly Rate Control
//! (TFRC): Protocol Specification", RFC 5348, 2008) uses the TCP Reno model of J. Padhye,
//! V. Firoiu, D. Towsley, J. Kurose, "Modeling TCP Reno performance: a simple model and its
//! empirical validation", IEEE/ACM Transactions on Networking 8(2), 2000:
//!
//! ```text
//! X = s / (R·√(2bp/3) + t_RTO·(3·√(3bp/8))·p·(1 + 32p²))
//! ```
//!
//! in bytes per second, for a segment size `s` (bytes), round-trip time `R` (s), loss event
//! rate `p`, retransmission timeout `t_RTO` (s) and `b` packets acknowledged per ACK.
//!
//! The equation is an [`Equation`] value so that a controller that emulates several flows
//! (MulTFRC, which also takes the number of flows `n` and the packets lost per loss event `j`)
//! is a second variant, not a second sender.

/// What an equation is evaluated on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Inputs {
    /// Segment size, bytes.
    pub s: f64,
    /// Round-trip time, seconds.
    pub r: f64,
    /// Loss event rate, in (0, 1].
    pub p: f64,
    /// Retransmission timeout, seconds.
    pub t_rto: f64,
    /// Mean packets lost per loss event (reported by the receiver; unused by TFRC's own
    /// equation, read by multi-flow equations).
    pub j: f64,
}

/// Which throughput equation a sender uses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Equation {
    /// RFC 5348 §3.1, with `b` packets acknowledged per ACK (RFC 5348 recommends 1).
    Tcp {
        /// Packets acknowledged by one ACK.
        b: f64,
    },
}

impl Default for Equation {
    fn default() -> Self {
        Equation::Tcp { b: 1.0 }
    }
}

impl Equation {
    /// The allowed rate in bytes per second. `p` must be positive.
    pub fn rate(&self, x: &Inputs) -> f64 {
        match *self {
            Equation::Tcp { b } => tcp_rate(x.s, x.r, x.p, x.t_rto, b),
        }
    }

    /// The loss event rate at which the equation gives `target` bytes per second (within
    /// 0.1 %, tighter than RFC 5348 §6.3.1's 5 %), for the other inputs of `x` (its `p` is
    /// ignored). Used to seed the loss history after the first loss event. The rate falls
    /// as `p` grows, so bisection on log p finds it; a target above the rate at p = 10⁻¹²
    /// gives that p, one below the rate at p = 1 gives 1.
    pub fn invert(&self, target: f64, x: &Inputs) -> f64 {
        let at = |p: f64| self.rate(&Inputs { p, ..*x });
        let (mut lo, mut hi) = (1e-12f64.ln(), 0.0f64);
        if at(lo.exp()) <= target {
            return lo.exp();
        }
        if at(1.0) >= target {
            return 1.0;
        }
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            let r = at(mid.exp());
            if (r - target).abs() <= 1e-3 * target {
                return mid.exp();
            }
            if r > target {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        (0.5 * (lo + hi)).exp()
    }
}

/// RFC 5348 §3.1: bytes per second for segment size `s` (bytes), RTT `r` (s), loss event rate
/// `p`, timeout `t_rto` (s) and `b` packets per ACK.
pub fn tcp_rate(s: f64, r: f64, p: f64, t_rto: f64, b: f64) -> f64 {
    let ca = r * (2.0 * b * p / 3.0).sqrt();
    let to = t_rto * (3.0 * (3.0 * b * p / 8.0).sqrt()) * p * (1.0 + 32.0 * p * p);
    s / (ca + to)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn tcp_equation_matches_hand_computed_values() {
        // Worked by hand and checked in Python:
        //   X = s/(R*sqrt(2*b*p/3) + t*(3*sqrt(3*b*p/8))*p*(1+32*p*p))
        // s=1000, R=0.1, p=0.01, t_RTO=0.4, b=1: 0.00816497 + 0.00073720 -> 112332.234 B/s.
        let cases = [
            ("1 %, 100 ms", 1000.0, 0.1, 0.01, 0.4, 1.0, 112_332.234_363),
            ("5 %, 50 ms, 1460 B", 1460.0, 0.05, 0.05, 0.2, 1.0, 107_627.851_138),
            ("b = 2 (delayed ACKs)", 1000.0, 0.1, 0.01, 0.4, 2.0, 79_430.884_664),
            ("0.1 %, 200 ms", 1000.0, 0.2, 0.001, 0.8, 1.0, 191_921.815_696),
        ];
        for (label, s, r, p, t, b, want) in cases {
            let got = tcp_rate(s, r, p, t, b);
            assert!(close(got, want, 1e-9), "{label}: {got} != {want}");
            let eq = Equation::Tcp { b };
            assert_eq!(eq.rate(&Inputs { s, r, p, t_rto: t, j: 1.0 }), got, "{label}");
        }
    }

    #[test]
    fn rate_falls_as_loss_grows() {
        let eq = Equation::default();
        let mut last = f64::INFINITY;
        for k in 1..=1000 {
            let p = k as f64 / 1000.0;
            let x = eq.rate(&Inputs { s: 1000.0, r: 0.05, p, t_rto: 0.2, j: 1.0 });
            assert!(x < last, "p = {p}");
            last = x;
        }
    }

    #[test]
    fn inverse_finds_the_loss_rate_of_a_target_rate() {
        let eq = Equation::default();
        let x = Inputs { s: 1000.0, r: 0.1, p: 0.0, t_rto: 0.4, j: 1.0 };
        // The first worked value backwards: 112332 B/s at R = 100 ms is p = 1 %.
        let p = eq.invert(112_332.234, &x);
        assert!(close(p, 0.01, 2e-3), "{p}");
        for target in [2_000.0, 50_000.0, 1e6, 1e8] {
            let p = eq.invert(target, &x);
            let got = eq.rate(&Inputs { p, ..x });
            assert!(close(got, target, 0.05), "target {target}: p {p} gives {got}");
        }
        // Out of range: a rate no loss rate in (0, 1] reaches.
        assert_eq!(eq.invert(1.0, &x), 1.0);
    }
}
