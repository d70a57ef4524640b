//! Stochastic TCP (T. J. Hacker and P. Smith, "Stochastic TCP: A Statistical Approach to
//! Congestion Avoidance", PFLDnet 2008): one connection whose window is the sum of `n`
//! virtual streams' windows, each run as a Reno flow; ACKs and losses are handed to the
//! streams at random. The description followed is that of Dragana Damjanović, "Parallel TCP
//! Data Transfers: A Practical Model and its Application", PhD thesis, University of Innsbruck,
//! 2010, §2.5; the paper's own text was not at hand, so the rules below are choices where that
//! description is silent.
//!
//! - Slow start: standard TCP (+1 segment per ACK, limited slow start where configured), on the
//!   connection's window as a whole. At the first ACK in congestion avoidance after a slow
//!   start the window is split evenly: every stream gets cwnd/n.
//! - Congestion avoidance: each ACK of new data goes to one stream chosen uniformly at random,
//!   which grows by 1/w_k (w_k its window); cwnd grows by the same amount and stays the sum.
//!   The growth is credited once per ACK whatever it acknowledges, as flowshare's Reno does
//!   (RFC 5681 eq. 3, ns-2's `opencwnd`, Linux's Reno of 2008), so that n = 1 is Reno.
//!   With `acks_per_increase` = m > 1, a stream grows by 1/w_k only on every m-th ACK it is
//!   given (a counter per stream), the authors' way to make the aggregate less aggressive: it
//!   then adds about n/m segments per RTT.
//! - Loss (fast retransmit, or an ECN echo): one stream chosen uniformly at random halves. The
//!   fraction of the window that leaves, f = (w_k/2)/Σw, is applied to RFC 5681's FlightSize:
//!   ssthresh = max((1 − f)·FlightSize, 2) (for n = 1, Reno's FlightSize/2), and the streams
//!   are scaled so that their sum is that ssthresh, the window the sender continues from.
//! - Timeout: every stream resets as a TCP flow would: its ssthresh becomes half its window,
//!   so the connection's ssthresh is max(FlightSize/2, 2), as Reno's. The sender owns the loss
//!   window and restarts from one segment (not n, one per stream), and the connection slow
//!   starts as a whole up to that ssthresh, where the window is split evenly again.
//! - The sender may set cwnd itself (the end of a recovery, SACK's rate halving or PRR, an
//!   undo): whenever the window found at an ACK is not the one the algorithm left, the
//!   streams are scaled in proportion to it, so that their sum is always cwnd.
//!
//! The random choices come from the flow's stream `<key>/cc` of the run's seed (a SplitMix64
//! generator seeded from it, as BBR's start phase is), so a scenario and a seed give the same
//! run. With n = 1 nothing is drawn. At most [`MAX_STREAMS`] streams (the state is a plain
//! value the host copies to undo a reduction).

use super::{in_slow_start, slow_start, AckSample, CcState, CongestionControl, LossKind, LossSignal};

/// The most virtual streams a connection holds.
pub const MAX_STREAMS: usize = 64;

/// SplitMix64 (Steele, Lea and Flood 2014): one 64-bit draw from `state`.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Stochastic TCP state.
#[derive(Clone, Copy, Debug)]
pub struct Stochastic {
    n: usize,
    acks_per_increase: u32,
    /// The virtual streams' windows, segments (the first `n`).
    w: [f64; MAX_STREAMS],
    /// ACKs each stream has been given since its last increment.
    acks: [u32; MAX_STREAMS],
    /// The window the algorithm last left in `CcState::cwnd` (NaN: the streams are not split
    /// yet, as in a slow start).
    left: f64,
    rng: u64,
}

impl Stochastic {
    /// `n` (1 to [`MAX_STREAMS`]) virtual streams, each growing once per `acks_per_increase`
    /// ACKs it is given; random choices from `seed`.
    pub fn new(n: u32, acks_per_increase: u32, seed: u64) -> Self {
        let n = (n as usize).clamp(1, MAX_STREAMS);
        Stochastic {
            n,
            acks_per_increase: acks_per_increase.max(1),
            w: [0.0; MAX_STREAMS],
            acks: [0; MAX_STREAMS],
            left: f64::NAN,
            rng: seed,
        }
    }

    /// The virtual streams' windows, segments.
    pub fn streams(&self) -> &[f64] {
        &self.w[..self.n]
    }

    /// A stream chosen uniformly at random (none drawn for n = 1).
    fn pick(&mut self) -> usize {
        if self.n == 1 {
            return 0;
        }
        // Lemire's multiply-shift: uniform enough for n ≤ 64 (bias below 2^-57).
        ((u128::from(splitmix(&mut self.rng)) * self.n as u128) >> 64) as usize
    }

    /// Every stream gets `cwnd / n`.
    fn split(&mut self, cwnd: f64) {
        let each = cwnd / self.n as f64;
        self.w[..self.n].fill(each);
        self.acks[..self.n].fill(0);
    }

    /// Scale the streams so that they add up to `cwnd`.
    fn scale_to(&mut self, cwnd: f64) {
        if self.n == 1 {
            self.w[0] = cwnd;
            return;
        }
        let sum: f64 = self.w[..self.n].iter().sum();
        if sum > 0.0 && sum.is_finite() {
            let k = cwnd / sum;
            self.w[..self.n].iter_mut().for_each(|w| *w *= k);
        } else {
            self.split(cwnd);
        }
    }

    /// The streams, split at the first ACK in congestion avoidance and scaled to what the
    /// sender made of the window since.
    fn sync(&mut self, cwnd: f64) {
        if self.left.is_nan() {
            self.split(cwnd);
        } else if self.left != cwnd {
            self.scale_to(cwnd);
        }
    }
}

impl CongestionControl for Stochastic {
    fn name(&self) -> &'static str {
        "stochastic"
    }

    fn on_ack(&mut self, st: &mut CcState, _ack: &AckSample) {
        if in_slow_start(st) {
            slow_start(st);
            self.left = f64::NAN;
            return;
        }
        self.sync(st.cwnd);
        let k = self.pick();
        self.acks[k] += 1;
        if self.acks[k] >= self.acks_per_increase {
            self.acks[k] = 0;
            let inc = 1.0 / self.w[k];
            self.w[k] += inc;
            st.cwnd += inc;
        }
        self.left = st.cwnd;
    }

    fn ssthresh_after(&mut self, st: &CcState, loss: &LossSignal) -> f64 {
        let flight = loss.flight_size as f64;
        if loss.kind == LossKind::Timeout {
            // Every stream halves its ssthresh and restarts; the connection slow starts.
            self.left = f64::NAN;
            return (0.5 * flight).max(2.0);
        }
        if self.left.is_nan() {
            // A loss in slow start: split the window it reached, then one stream halves.
            self.split(st.cwnd);
        } else if self.left != st.cwnd {
            self.scale_to(st.cwnd);
        }
        let k = self.pick();
        let sum: f64 = if self.n == 1 { self.w[0] } else { self.w[..self.n].iter().sum() };
        let kept = if sum > 0.0 { 1.0 - 0.5 * self.w[k] / sum } else { 0.5 };
        self.w[k] *= 0.5;
        let ss = (kept * flight).max(2.0);
        self.scale_to(ss);
        self.left = ss;
        ss
    }

    fn metrics(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("stochastic_n", self.n as f64);
        let (lo, hi) = self.w[..self.n].iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &w| (lo.min(w), hi.max(w)));
        let split = !self.left.is_nan();
        out("stochastic_w_min", if split { lo } else { f64::NAN });
        out("stochastic_w_max", if split { hi } else { f64::NAN });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::{ack, loss, loss_of};
    use crate::cc::Aimd;

    #[test]
    fn the_window_splits_evenly_at_the_end_of_slow_start() {
        let mut s = Stochastic::new(4, 1, 7);
        let mut st = CcState::new(2.0, 40.0, 1460);
        while st.cwnd < 40.0 {
            s.on_ack(&mut st, &ack());
        }
        assert_eq!(st.cwnd, 40.0, "standard slow start, one segment per ACK");
        s.on_ack(&mut st, &ack());
        // The first ACK in congestion avoidance: 4 × 10, then one stream grows by 1/10.
        let mut w = s.streams().to_vec();
        w.sort_by(f64::total_cmp);
        assert_eq!(w, vec![10.0, 10.0, 10.0, 10.1]);
        assert!((st.cwnd - 40.1).abs() < 1e-12);
    }

    /// Four streams of 25: about +4 segments per RTT of 100 ACKs, like four Reno flows.
    #[test]
    fn four_streams_add_about_four_segments_per_rtt() {
        let mut s = Stochastic::new(4, 1, 1);
        let mut st = CcState::new(100.0, 50.0, 1460);
        for _ in 0..100 {
            s.on_ack(&mut st, &ack());
        }
        assert!((st.cwnd - 104.0).abs() < 0.2, "{}", st.cwnd);
        let sum: f64 = s.streams().iter().sum();
        assert!((sum - st.cwnd).abs() < 1e-9, "the streams add up to cwnd: {sum} vs {}", st.cwnd);
        // Needing four ACKs per increment: about one segment per RTT.
        let mut slow = Stochastic::new(4, 4, 1);
        let mut st = CcState::new(100.0, 50.0, 1460);
        for _ in 0..100 {
            slow.on_ack(&mut st, &ack());
        }
        assert!((st.cwnd - 101.0).abs() < 0.3, "{}", st.cwnd);
    }

    /// A loss halves one stream: with four equal streams the window keeps 7/8 of FlightSize,
    /// the streams follow the new sum.
    #[test]
    fn a_loss_halves_one_stream() {
        let mut s = Stochastic::new(4, 1, 3);
        let st = CcState::new(40.0, 20.0, 1460);
        s.split(40.0);
        s.left = 40.0;
        let ss = s.ssthresh_after(&st, &loss(40));
        assert!((ss - 35.0).abs() < 1e-9, "{ss}");
        let mut w = s.streams().to_vec();
        w.sort_by(f64::total_cmp);
        assert!((w[0] - 5.0).abs() < 1e-9 && w[1..].iter().all(|x| (x - 10.0).abs() < 1e-9), "{w:?}");
        // A timeout: FlightSize/2, and the next ACK is slow start's.
        assert_eq!(s.ssthresh_after(&st, &loss_of(LossKind::Timeout, 30)), 15.0);
        let mut st = CcState::new(1.0, 15.0, 1460);
        s.on_ack(&mut st, &ack());
        assert_eq!(st.cwnd, 2.0);
        assert!(s.streams().iter().all(|&x| x > 0.0));
    }

    /// n = 1 is Reno, step for step.
    #[test]
    fn one_stream_is_reno() {
        let mut s = Stochastic::new(1, 1, 9);
        let mut r = Aimd::reno();
        let (mut a, mut b) = (CcState::new(2.0, 30.0, 1460), CcState::new(2.0, 30.0, 1460));
        for i in 0..2000u64 {
            s.on_ack(&mut a, &ack());
            r.on_ack(&mut b, &ack());
            if i % 97 == 96 {
                let (flight, kind) = (a.cwnd as u64, if i % 5 == 0 { LossKind::Timeout } else { LossKind::DupAcks });
                let (x, y) =
                    (s.ssthresh_after(&a, &loss_of(kind, flight)), r.ssthresh_after(&b, &loss_of(kind, flight)));
                assert_eq!(x, y);
                a.ssthresh = x;
                b.ssthresh = y;
                a.cwnd = if kind == LossKind::Timeout { 1.0 } else { x };
                b.cwnd = a.cwnd;
            }
            assert_eq!(a.cwnd, b.cwnd, "ACK {i}");
        }
    }

    #[test]
    fn the_same_seed_makes_the_same_choices() {
        let run = |seed| {
            let mut s = Stochastic::new(5, 1, seed);
            let mut st = CcState::new(50.0, 10.0, 1460);
            for i in 0..500 {
                s.on_ack(&mut st, &ack());
                if i % 100 == 99 {
                    st.cwnd = s.ssthresh_after(&st, &loss(st.cwnd as u64));
                }
            }
            s.streams().to_vec()
        };
        assert_eq!(run(11), run(11));
        assert_ne!(run(11), run(12));
    }
}
