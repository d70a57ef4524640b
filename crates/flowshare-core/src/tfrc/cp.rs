//! CP's bandwidth filtered loss detection (BFLD): the loss event rate of one flow share.
//!
//! CP (D. E. Ott, T. Sparks and K. Mayer-Patel, "Aggregate congestion control for distributed
//! multimedia applications", Proc. IEEE INFOCOM 2004, pp. 13–23, as described in Dragana
//! Damjanović, "Parallel TCP Data Transfers: A Practical Model and its Application", PhD
//! thesis, University of Innsbruck, 2010, §2.5 and §4.2.4) sends `n` times the TFRC equation's
//! rate ([`super::Equation::Cp`]). Fed with the loss event rate of the whole flow, that would
//! be too much: `n` flows see about `n` times fewer loss events per packet together than one
//! of them alone. So the receiver measures the loss event rate of one flow share: it looks
//! only at a pseudo-random sample of about 1/n of the packets, as if they were the packets of
//! one TFRC flow sending at 1/n of the rate, and reports that `p`.
//!
//! Choices where the description leaves them open:
//!
//! - **The sample.** A packet belongs to it when a hash of its sequence number, SplitMix64's
//!   finalizer (Steele, Lea and Flood 2014) of `seq`, falls below `2^64/n`. The sample depends
//!   on nothing but the sequence number, so the receiver knows whether a packet it never saw
//!   was in it (its loss counts only then), and the same sequence numbers give the same sample
//!   in every run.
//! - **Renumbering.** The sampled packets are numbered 0, 1, 2, … in sequence order (the number
//!   of sampled sequence numbers below theirs) and fed, with their arrival times and the RTT
//!   the sender wrote into them, to an ordinary RFC 5348 loss history
//!   ([`LossHistory`]): a sampled packet is lost once three later sampled packets have
//!   arrived, losses within one RTT of an event's first loss belong to that event, and loss
//!   intervals are counted in sampled packets. Its `p` (and `j`) is what the receiver reports.
//! - **The first loss event** seeds the sample's history as RFC 5348 §6.3.1 has it, with the
//!   `p` at which CP's equation gives the receive rate, i.e. at which TFRC's gives 1/n of it.

use super::loss_history::LossHistory;
use crate::units::Time;

/// SplitMix64's output function of `x` (a bijection of u64 that mixes every bit).
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The BFLD filter of one CP receiver and the loss history of its sample.
#[derive(Clone, Debug)]
pub struct CpFilter {
    /// A sequence number is sampled when `mix(seq) < threshold`, `2^64/n`.
    threshold: u64,
    /// Sequence numbers below this have been counted...
    cursor: u64,
    /// ...and this many of them are sampled.
    rank: u64,
    history: LossHistory,
}

impl CpFilter {
    /// The filter for `n` > 1 flow shares, with the history's interval weights and discounting.
    pub fn new(n: f64, weights: Vec<f64>, discount: bool) -> Self {
        assert!(n > 1.0, "CP needs more than one flow share");
        let threshold = (18_446_744_073_709_551_616.0 / n) as u64;
        CpFilter { threshold, cursor: 0, rank: 0, history: LossHistory::new(weights, discount) }
    }

    /// Whether packet `seq` is in the sample.
    #[inline]
    pub fn sampled(&self, seq: u64) -> bool {
        mix(seq) < self.threshold
    }

    /// Its number within the sample if packet `seq` is sampled: how many sampled sequence
    /// numbers lie below it.
    pub fn sample_index(&mut self, seq: u64) -> Option<u64> {
        if !self.sampled(seq) {
            return None;
        }
        if seq >= self.cursor {
            self.rank += (self.cursor..seq).filter(|&s| self.sampled(s)).count() as u64;
            self.cursor = seq;
            Some(self.rank)
        } else {
            // A packet that arrives after a later one (reordered, or late): count back.
            Some(self.rank - (seq..self.cursor).filter(|&s| self.sampled(s)).count() as u64)
        }
    }

    /// Packet `seq` arrived at `at` carrying the sender's RTT `rtt`. Returns whether a new loss
    /// event of the sample began.
    pub fn on_packet(&mut self, seq: u64, at: Time, rtt: Time) -> bool {
        match self.sample_index(seq) {
            Some(i) => self.history.on_packet(i, at, rtt),
            None => false,
        }
    }

    /// The sample's loss history.
    pub fn history(&self) -> &LossHistory {
        &self.history
    }

    /// The sample's loss history, to seed it.
    pub fn history_mut(&mut self) -> &mut LossHistory {
        &mut self.history
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tfrc::loss_history::wali_weights;

    const MS: Time = 1_000_000;

    #[test]
    fn the_sample_is_about_one_in_n_and_renumbered_in_order() {
        for n in [2.0, 4.0, 10.0] {
            let mut f = CpFilter::new(n, wali_weights(8), false);
            let members: Vec<u64> = (0..100_000u64).filter(|&s| f.sampled(s)).collect();
            let share = members.len() as f64 / 100_000.0;
            assert!((share * n - 1.0).abs() < 0.05, "n = {n}: {share}");
            // In order, each member's index is its rank; out of order too.
            for (i, &s) in members.iter().enumerate().take(50) {
                assert_eq!(f.sample_index(s), Some(i as u64));
            }
            assert_eq!(f.sample_index(members[10]), Some(10), "a late packet counts back");
            assert_eq!(f.sample_index(members[60]), Some(60));
            assert_eq!(f.sample_index(members[55]), Some(55));
            let outside = (0..).find(|&s| !f.sampled(s)).unwrap();
            assert_eq!(f.sample_index(outside), None);
        }
    }

    /// A lost packet outside the sample goes unseen; one inside is a loss of the sample,
    /// found once three later sampled packets arrive.
    #[test]
    fn only_losses_in_the_sample_count() {
        let probe = CpFilter::new(4.0, wali_weights(8), false);
        let members: Vec<u64> = (0..2000u64).filter(|&s| probe.sampled(s)).collect();
        let outside: Vec<u64> = (0..2000u64).filter(|&s| !probe.sampled(s)).collect();
        let feed = |lost: &[u64]| {
            let mut f = CpFilter::new(4.0, wali_weights(8), false);
            let mut events = 0;
            for s in 0..2000u64 {
                if !lost.contains(&s) && f.on_packet(s, s * MS, 50 * MS) {
                    events += 1;
                }
            }
            (events, f.history().packets_lost(), f.history().packets_received())
        };
        assert_eq!(feed(&outside[100..110]), (0, 0, members.len() as u64));
        let (events, lost, _) = feed(&[members[100], members[300]]);
        assert_eq!((events, lost), (2, 2));
        // The interval between them is 200 sampled packets.
        let mut f = CpFilter::new(4.0, wali_weights(8), false);
        for s in 0..2000u64 {
            if s != members[100] && s != members[300] {
                f.on_packet(s, s * MS, 50 * MS);
            }
        }
        let e = f.history().estimate().unwrap();
        assert!(e.p > 0.0);
        assert_eq!(f.history().open_interval(), Some((members.len() - 300) as f64));
    }
}
