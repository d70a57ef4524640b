//! The receiver's loss history: lost packets from sequence gaps, loss events, the loss
//! intervals and the loss event rate, as in RFC 5348 §5 (S. Floyd, M. Handley, J. Padhye,
//! J. Widmer, "TCP Friendly Rate Control (TFRC): Protocol Specification", RFC 5348, 2008).
//!
//! It is fed `(sequence number, arrival time, RTT)` of each packet that arrives and knows
//! nothing of agents or packets, so that it serves the TFRC receiver and offline trace
//! analysis alike.
//!
//! - §5.1: a packet is lost once `ndupack` (3) packets with higher sequence numbers have
//!   arrived; a packet that arrives after that is ignored.
//! - §5.2: a lost packet's arrival time is interpolated between the packets received just
//!   before and just after it. It starts a new loss event if that time is more than one RTT
//!   (the RTT the sender wrote into the packet that revealed it) after the start of the
//!   current loss event; otherwise it belongs to the current one. That decision is
//!   [`crate::loss_events::Grouper`]'s, which trace analysis (`flowshare.analysis`) uses too.
//! - §5.3: a loss interval runs from the first lost packet of one loss event to the first lost
//!   packet of the next; the open interval `I_0` runs from the latest loss event's first lost
//!   packet to the highest sequence number received, both included.
//! - §5.4: the mean interval weights the `n` most recent closed intervals (`w_i = 1` for
//!   `i < n/2`, else `2(n−i)/(n+2)`: 1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2 for n = 8) and uses `I_0`
//!   in place of the oldest only when that raises the mean; with fewer than `n` closed
//!   intervals, the `k` there are weighted by `w_0..w_(k−1)`. `p = 1 / mean`.
//! - §5.5 (optional): history discounting lowers the weight of the older intervals while
//!   `I_0` is more than twice the mean, by `DF = max(0.5, 2·mean/I_0)`; the factor is kept
//!   with those intervals when the next loss event closes `I_0`.
//!
//! Each interval also keeps how many packets were lost in its loss event, averaged with the
//! same weights ([`Estimate::j`]): what a controller emulating several flows (MulTFRC,
//! draft-welzl-multfrc-01 §5.4) reads besides `p`.

use crate::loss_events::Grouper;
use crate::units::Time;
use std::collections::VecDeque;

/// Packets above a gap that reveal a loss (RFC 5348 §5.1).
pub const NDUPACK: u32 = 3;

/// Smallest history discount factor (RFC 5348 §5.5).
const MIN_DISCOUNT: f64 = 0.5;

/// The weights of RFC 5348 §5.4 for `n` intervals, most recent first.
pub fn wali_weights(n: usize) -> Vec<f64> {
    (0..n).map(|i| if i < n / 2 { 1.0 } else { 2.0 * (n - i) as f64 / (n + 2) as f64 }).collect()
}

/// A closed loss interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// Packets from the first lost packet of its loss event to that of the next.
    pub length: f64,
    /// Packets lost in its loss event.
    pub lost: u32,
    /// Its history discount factor (1 without discounting).
    df: f64,
}

/// The loss event under way: the open interval.
#[derive(Clone, Copy, Debug)]
struct Event {
    /// First lost packet.
    seq: u64,
    /// Packets lost in it so far.
    lost: u32,
}

/// What the history estimates now.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// Loss event rate, `1 / mean interval`.
    pub p: f64,
    /// Mean packets lost per loss event, weighted like the intervals.
    pub j: f64,
}

/// Loss detection and the loss-interval history of one flow.
#[derive(Clone, Debug)]
pub struct LossHistory {
    weights: Vec<f64>,
    discount: bool,
    /// Closed intervals, most recent (`I_1`) first; at most `weights.len()`.
    closed: VecDeque<Interval>,
    current: Option<Event>,
    /// Groups the losses into loss events (and knows the current event's start time).
    grouper: Grouper<Time>,
    /// Lowest sequence number not yet known to be received or lost.
    next: u64,
    /// The highest packet below `next` that was received, and when.
    before: Option<(u64, Time)>,
    /// Packets received above the gap at `next`, in order.
    pending: VecDeque<(u64, Time)>,
    highest: Option<u64>,
    received: u64,
    lost: u64,
    /// The loss event under way counts one lost packet, whatever it loses ([`Self::pin_lost`]).
    pinned: bool,
    /// Every loss joins the loss event under way, however late ([`Self::pin_lost`]).
    holding: bool,
}

impl LossHistory {
    /// An empty history weighting its intervals by `weights` (most recent first), with or
    /// without history discounting.
    pub fn new(weights: Vec<f64>, discount: bool) -> Self {
        assert!(!weights.is_empty(), "at least one weight");
        LossHistory {
            closed: VecDeque::with_capacity(weights.len() + 1),
            weights,
            discount,
            current: None,
            grouper: Grouper::new(),
            next: 0,
            before: None,
            pending: VecDeque::with_capacity(NDUPACK as usize + 1),
            highest: None,
            received: 0,
            lost: 0,
            pinned: false,
            holding: false,
        }
    }

    /// Packet `seq` arrived at `at`; the sender's RTT estimate it carries is `rtt`. Returns
    /// whether a new loss event began.
    pub fn on_packet(&mut self, seq: u64, at: Time, rtt: Time) -> bool {
        if seq < self.next || self.pending.iter().any(|&(s, _)| s == seq) {
            return false; // a duplicate, or a packet already counted as lost
        }
        self.received += 1;
        self.highest = Some(self.highest.map_or(seq, |h| h.max(seq)));
        match self.pending.back() {
            Some(&(last, _)) if last > seq => {
                let i = self.pending.partition_point(|&(s, _)| s < seq);
                self.pending.insert(i, (seq, at));
            }
            _ => self.pending.push_back((seq, at)),
        }
        let mut new_event = false;
        loop {
            match self.pending.front() {
                Some(&(s, t)) if s == self.next => {
                    self.pending.pop_front();
                    self.before = Some((s, t));
                    self.next += 1;
                }
                Some(&(s_after, t_after)) if self.pending.len() >= NDUPACK as usize => {
                    let lost = self.next;
                    let t_loss = match self.before {
                        // §5.2: T_loss = T_before + (T_after − T_before)·(S_loss − S_before)/(S_after − S_before)
                        Some((s_before, t_before)) => {
                            let span = u128::from(t_after.saturating_sub(t_before));
                            let frac = u128::from(lost - s_before);
                            t_before + (span * frac / u128::from(s_after - s_before)) as Time
                        }
                        None => t_after,
                    };
                    new_event |= self.on_loss(lost, t_loss, rtt);
                    self.next += 1;
                }
                _ => break,
            }
        }
        new_event
    }

    /// Packet `seq` is lost, at interpolated time `at`. Returns whether it starts a loss event.
    fn on_loss(&mut self, seq: u64, at: Time, rtt: Time) -> bool {
        self.lost += 1;
        // While the first event holds its losses the grouper is not asked: its event stays
        // the first one, so the first loss after the hold is judged against it.
        let joins = (self.holding && self.current.is_some()) || !self.grouper.push(at, rtt);
        if joins {
            if let Some(ev) = &mut self.current {
                if !self.pinned {
                    ev.lost += 1;
                }
            }
            return false;
        }
        if let Some(ev) = self.current {
            // The open interval closes; the discount in effect stays with the older ones.
            let df = self.current_discount();
            for i in self.closed.iter_mut() {
                i.df *= df;
            }
            self.closed.push_front(Interval { length: (seq - ev.seq) as f64, lost: ev.lost, df: 1.0 });
            self.closed.truncate(self.weights.len());
        }
        self.current = Some(Event { seq, lost: 1 });
        self.pinned = false;
        true
    }

    /// Put a synthetic first interval of `length` packets (one lost) under the first loss
    /// event, as RFC 5348 §6.3.1 has the receiver do; no-op once an interval is closed.
    pub fn seed(&mut self, length: f64) {
        if self.closed.is_empty() {
            self.closed.push_front(Interval { length, lost: 1, df: 1.0 });
        }
    }

    /// Count the loss event under way as one lost packet, whatever it loses (MulTFRC's first
    /// loss event, draft-welzl-multfrc-01 §6.3.1), and hold every later loss in it until
    /// [`Self::release`]; the packets still count in [`Self::packets_lost`].
    pub fn pin_lost(&mut self) {
        if let Some(ev) = &mut self.current {
            ev.lost = 1;
            self.pinned = true;
            self.holding = true;
        }
    }

    /// Losses more than one RTT after the event's first loss start new events again.
    pub fn release(&mut self) {
        self.holding = false;
    }

    /// Whether losses are held in the event under way ([`Self::pin_lost`]).
    pub fn holding(&self) -> bool {
        self.holding
    }

    /// The open interval `I_0`, in packets (`None` before the first loss event).
    pub fn open_interval(&self) -> Option<f64> {
        let (ev, h) = (self.current?, self.highest?);
        Some((h + 1).saturating_sub(ev.seq) as f64)
    }

    /// The closed intervals, most recent first.
    pub fn intervals(&self) -> impl Iterator<Item = &Interval> {
        self.closed.iter()
    }

    /// Loss events so far.
    pub fn loss_events(&self) -> u64 {
        self.grouper.events()
    }

    /// Packets found lost so far.
    pub fn packets_lost(&self) -> u64 {
        self.lost
    }

    /// Distinct packets received so far.
    pub fn packets_received(&self) -> u64 {
        self.received
    }

    /// Packets lost in the loss event under way (0 before the first).
    pub fn lost_in_current_event(&self) -> u32 {
        self.current.map_or(0, |e| e.lost)
    }

    /// The mean of the closed intervals alone (`I_tot1 / W_tot1`), with their discounts.
    fn history_mean(&self) -> Option<f64> {
        let (mut i_tot, mut w_tot) = (0.0, 0.0);
        for (i, w) in self.closed.iter().zip(&self.weights) {
            i_tot += i.length * w * i.df;
            w_tot += w * i.df;
        }
        (w_tot > 0.0).then(|| i_tot / w_tot)
    }

    /// §5.5's `DF` for the open interval: 1 unless discounting is on and `I_0` is more than
    /// twice the mean.
    fn current_discount(&self) -> f64 {
        if !self.discount {
            return 1.0;
        }
        match (self.open_interval(), self.history_mean()) {
            (Some(i0), Some(mean)) if i0 > 2.0 * mean => (2.0 * mean / i0).max(MIN_DISCOUNT),
            _ => 1.0,
        }
    }

    /// The loss event rate and mean losses per event (RFC 5348 §5.4–5.5); `None` before the
    /// first loss event.
    pub fn estimate(&self) -> Option<Estimate> {
        let i0 = self.open_interval()?;
        let lp0 = f64::from(self.lost_in_current_event());
        let k = self.closed.len().min(self.weights.len());
        if k == 0 {
            return Some(Estimate { p: 1.0 / i0.max(1.0), j: lp0 });
        }
        let df = self.current_discount();
        let w = &self.weights;
        // I_tot0 = I_0·w_0 + Σ_{i=1}^{k−1} I_i·w_i·DF_i·DF
        let (mut i_tot0, mut w_tot0, mut lp_tot0) = (i0 * w[0], w[0], lp0 * w[0]);
        // I_tot1 = Σ_{i=1}^{k} I_i·w_(i−1)·DF_i
        let (mut i_tot1, mut w_tot1, mut lp_tot1) = (0.0, 0.0, 0.0);
        for (idx, iv) in self.closed.iter().take(k).enumerate() {
            let i = idx + 1;
            if i < k {
                let wd = w[i] * iv.df * df;
                i_tot0 += iv.length * wd;
                w_tot0 += wd;
                lp_tot0 += f64::from(iv.lost) * wd;
            }
            let wd = w[i - 1] * iv.df;
            i_tot1 += iv.length * wd;
            w_tot1 += wd;
            lp_tot1 += f64::from(iv.lost) * wd;
        }
        let (mean0, mean1) = (i_tot0 / w_tot0, i_tot1 / w_tot1);
        let (mean, j) = if mean0 > mean1 { (mean0, lp_tot0 / w_tot0) } else { (mean1, lp_tot1 / w_tot1) };
        Some(Estimate { p: 1.0 / mean.max(1.0), j })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;

    /// Packets 0..=`upto` one per millisecond, except `lost`, with RTT `rtt`; returns the
    /// number of new loss events reported.
    fn feed(h: &mut LossHistory, from: u64, upto: u64, lost: &[u64], rtt: Time) -> u32 {
        let mut events = 0;
        for s in from..=upto {
            if !lost.contains(&s) && h.on_packet(s, s * MS, rtt) {
                events += 1;
            }
        }
        events
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn wali_weights_of_eight_intervals() {
        assert_eq!(wali_weights(8), vec![1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2]);
        assert_eq!(wali_weights(4), vec![1.0, 1.0, 2.0 / 3.0, 1.0 / 3.0]);
    }

    #[test]
    fn no_loss_gives_no_estimate() {
        let mut h = LossHistory::new(wali_weights(8), false);
        assert_eq!(feed(&mut h, 0, 100, &[], 10 * MS), 0);
        assert_eq!(h.estimate(), None);
        assert_eq!(h.packets_received(), 101);
    }

    #[test]
    fn a_gap_is_a_loss_only_after_three_later_packets() {
        let mut h = LossHistory::new(wali_weights(8), false);
        feed(&mut h, 0, 9, &[], 10 * MS);
        assert!(!h.on_packet(11, 11 * MS, 10 * MS));
        assert!(!h.on_packet(12, 12 * MS, 10 * MS));
        assert_eq!(h.packets_lost(), 0);
        assert!(h.on_packet(13, 13 * MS, 10 * MS), "the third packet above the gap reveals it");
        assert_eq!(h.packets_lost(), 1);
        // Interpolated between 9 (9 ms) and 11 (11 ms): 10 ms; I_0 = 10..=13.
        assert_eq!(h.grouper.start(), Some(10 * MS));
        assert_eq!(h.open_interval(), Some(4.0));
        // The late packet 10 changes nothing.
        assert!(!h.on_packet(10, 14 * MS, 10 * MS));
        assert_eq!(h.packets_received(), 13);
    }

    #[test]
    fn reordering_within_three_packets_is_not_a_loss() {
        let mut h = LossHistory::new(wali_weights(8), false);
        for s in [0, 1, 3, 4, 2, 5, 6, 7, 7] {
            h.on_packet(s, s * MS, 10 * MS);
        }
        assert_eq!(h.packets_lost(), 0);
        assert_eq!(h.packets_received(), 8, "the duplicate 7 is not counted");
    }

    #[test]
    fn losses_within_one_rtt_are_one_loss_event() {
        let mut h = LossHistory::new(wali_weights(8), false);
        // RTT 100 ms, one packet per ms: 10 and 50 lie within 100 ms, 200 does not.
        assert_eq!(feed(&mut h, 0, 300, &[10, 50, 200], 100 * MS), 2);
        assert_eq!(h.loss_events(), 2);
        assert_eq!(h.packets_lost(), 3);
        let closed: Vec<Interval> = h.intervals().copied().collect();
        assert_eq!(closed, vec![Interval { length: 190.0, lost: 2, df: 1.0 }]);
        assert_eq!(h.open_interval(), Some(101.0));
        assert_eq!(h.lost_in_current_event(), 1);
    }

    /// Closed intervals 10, 20, …, 80 (most recent first), the one of length 60 with three
    /// packets lost, and an open interval from packet 460 on. RTT 5 ms, a packet per ms.
    fn eight_intervals(discount: bool, upto: u64) -> LossHistory {
        let mut h = LossHistory::new(wali_weights(8), discount);
        let lost = [100, 180, 250, 251, 252, 310, 360, 400, 430, 450, 460];
        assert_eq!(feed(&mut h, 0, upto, &lost, 5 * MS), 9);
        let lengths: Vec<f64> = h.intervals().map(|i| i.length).collect();
        assert_eq!(lengths, vec![10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0]);
        h
    }

    #[test]
    fn weighted_mean_of_eight_intervals_by_hand() {
        // I_0 = 460..=464 = 5 packets.
        // I_tot1 = 10+20+30+40 + 50·0.8+60·0.6+70·0.4+80·0.2 = 220, W_tot = 6: mean 36.667.
        // I_tot0 = 5+10+20+30 + 40·0.8+50·0.6+60·0.4+70·0.2 = 165: smaller, not used.
        // j = (1+1+1+1 + 1·0.8 + 3·0.6 + 1·0.4 + 1·0.2)/6 = 7.2/6 = 1.2.
        let h = eight_intervals(false, 464);
        assert_eq!(h.open_interval(), Some(5.0));
        let e = h.estimate().unwrap();
        assert!(close(e.p, 6.0 / 220.0), "{e:?}");
        assert!(close(e.j, 1.2), "{e:?}");
    }

    #[test]
    fn the_open_interval_counts_only_when_it_raises_the_mean() {
        // I_0 = 300: I_tot0 = 300+10+20+30 + 32+30+24+14 = 460 > 220, so p = 6/460.
        // j = (1+1+1+1 + 0.8 + 0.6 + 3·0.4 + 0.2)/6 = 6.8/6.
        let h = eight_intervals(false, 759);
        assert_eq!(h.open_interval(), Some(300.0));
        let e = h.estimate().unwrap();
        assert!(close(e.p, 6.0 / 460.0), "{e:?}");
        assert!(close(e.j, 6.8 / 6.0), "{e:?}");
    }

    #[test]
    fn history_discounting_by_hand() {
        // I_0 = 300 > 2·36.667: DF = max(0.5, 73.33/300) = 0.5.
        // I_tot0 = 300 + 0.5·(10+20+30+32+30+24+14) = 380, W_tot0 = 1 + 0.5·5 = 3.5.
        // p = min(W_tot0/I_tot0, W_tot1/I_tot1) = 3.5/380.
        let h = eight_intervals(true, 759);
        let e = h.estimate().unwrap();
        assert!(close(e.p, 3.5 / 380.0), "{e:?}");
        // Below twice the mean, discounting changes nothing.
        let h = eight_intervals(true, 464);
        assert!(close(h.estimate().unwrap().p, 6.0 / 220.0));
    }

    #[test]
    fn discount_stays_with_the_older_intervals() {
        let mut h = eight_intervals(true, 759);
        // A loss at 800 closes I_0 = 340 while DF = 0.5 (340 > 73.3): the eight older
        // intervals keep DF_i = 0.5, the new one 1.
        feed(&mut h, 760, 900, &[800], 5 * MS);
        let dfs: Vec<f64> = h.intervals().map(|i| i.df).collect();
        assert_eq!(dfs, vec![1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]);
        assert_eq!(h.intervals().next().unwrap().length, 340.0);
    }

    #[test]
    fn first_loss_event_uses_the_seeded_interval() {
        let mut h = LossHistory::new(wali_weights(8), false);
        assert_eq!(feed(&mut h, 0, 20, &[10], 5 * MS), 1);
        // Before seeding: only I_0 = 10..=20 = 11 packets.
        assert!(close(h.estimate().unwrap().p, 1.0 / 11.0));
        h.seed(1000.0);
        // I_1 = 1000 (w_0 = 1) against I_0 = 11: the mean is 1000.
        assert!(close(h.estimate().unwrap().p, 1.0 / 1000.0));
        h.seed(5.0);
        assert_eq!(h.intervals().count(), 1, "seeding happens once");
    }

    #[test]
    fn lost_packets_per_event_and_their_mean_by_hand() {
        // draft-welzl-multfrc-01 §5.2/§5.4. RTT 100 ms, a packet per ms.
        let mut h = LossHistory::new(wali_weights(8), false);
        // 10, 11 and 50 within 100 ms of 10: one loss event, LP_0 = 3; with no closed
        // interval j is LP_0.
        assert_eq!(feed(&mut h, 0, 150, &[10, 11, 50], 100 * MS), 1);
        assert_eq!(h.lost_in_current_event(), 3);
        assert!(close(h.estimate().unwrap().j, 3.0));
        // The synthetic first interval (one lost) outweighs I_0 = 141: j = 1.
        h.seed(1000.0);
        assert!(close(h.estimate().unwrap().j, 1.0));
        // 200 and 201 open a second event: I_1 = 190 (3 lost), I_2 = 1000 (1 lost),
        // I_0 = 200..=400 = 201 (2 lost). I_tot1 = 1190 > I_tot0 = 391: j = (3 + 1)/2.
        assert_eq!(feed(&mut h, 151, 400, &[200, 201], 100 * MS), 1);
        assert_eq!(h.lost_in_current_event(), 2);
        assert!(close(h.estimate().unwrap().j, 2.0), "{:?}", h.estimate());
        // At I_0 = 1000 the two sums tie (the closed intervals are kept); at 1001, I_tot0 =
        // 1191 is the larger and LP_0 counts: j = (2 + 3)/2.
        feed(&mut h, 401, 1199, &[], 100 * MS);
        assert_eq!(h.open_interval(), Some(1000.0));
        assert!(close(h.estimate().unwrap().j, 2.0));
        feed(&mut h, 1200, 1200, &[], 100 * MS);
        assert!(close(h.estimate().unwrap().j, 2.5), "{:?}", h.estimate());
    }

    #[test]
    fn loss_events_agree_with_the_batch_grouping() {
        // Pseudo-random bursts of lost packets, one packet per ms, so that a lost packet's
        // interpolated time is its number in ms and many losses fall exactly one RTT (a whole
        // number of ms) after an event's first loss: the receiver's count of loss events must
        // be what `loss_events` finds in the same loss times.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut boundary_hits = 0;
        for _ in 0..100 {
            let rtt = (1 + next() % 40) * MS;
            let mut lost = Vec::new();
            let mut s = 1 + next() % 5; // packet 0 arrives: every loss has a packet before it
            while s < 2_000 {
                for k in 0..=next() % 3 {
                    lost.push(s + k);
                }
                s = lost.last().unwrap() + 2 + next() % 60; // at least one received between bursts
            }
            let upto = lost.last().unwrap() + NDUPACK as u64;
            let mut h = LossHistory::new(wali_weights(8), false);
            feed(&mut h, 0, upto, &lost, rtt);
            let times: Vec<Time> = lost.iter().map(|&s| s * MS).collect();
            let batch = crate::loss_events::event_index(&times, rtt).last().map_or(0, |&e| e + 1);
            assert_eq!(h.packets_lost(), lost.len() as u64);
            assert_eq!(h.loss_events(), batch, "rtt {rtt}, lost {lost:?}");
            let mut start = None;
            for &t in &times {
                match start {
                    Some(s0) if t == s0 + rtt => boundary_hits += 1,
                    Some(s0) if t <= s0 + rtt => {}
                    _ => start = Some(t),
                }
            }
        }
        assert!(boundary_hits > 20, "the exact boundary was tried {boundary_hits} times");
    }

    #[test]
    fn history_discounting_weights_j_like_the_intervals() {
        // draft-welzl-multfrc-01 §5.5. As in `history_discounting_by_hand`, DF = 0.5 and I_0
        // wins: LP_tot = 1·1 + 0.5·(1 + 1 + 1 + 0.8 + 0.6 + 3·0.4 + 0.2) = 3.9 over
        // W_tot0 = 3.5.
        let h = eight_intervals(true, 759);
        assert!(close(h.estimate().unwrap().j, 3.9 / 3.5), "{:?}", h.estimate());
        // Without discounting the same history gives 6.8/6.
        let h = eight_intervals(false, 759);
        assert!(close(h.estimate().unwrap().j, 6.8 / 6.0));
    }
}
