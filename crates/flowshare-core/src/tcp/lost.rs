//! Which outstanding segments Linux's accounting holds lost, kept up to date incrementally.
//!
//! With `sack_recovery = "rate_halving"` or `"prr"` a segment is lost when it is not SACKed
//! and either it was never retransmitted in this loss episode and lies at or below the loss
//! bound (FACK or RFC 6675 IsLost) or below the timeout floor (a timeout holds everything then
//! outstanding lost, as Linux's `tcp_enter_loss` and ns-2's `MarkLoss` do), or its last
//! retransmission went out before a segment that has since been SACKed (the retransmission was
//! lost too). The pipe is everything outstanding that is neither SACKed nor lost.
//!
//! `rate_halving` adds the second rule of ns-2.35's TCP-Linux scoreboard (`ScoreBoard1`): each
//! retransmission of a loss episode gets the next number from 0, and one is lost when a
//! retransmission numbered more than DupThresh + 1 after it has been acknowledged (SACKed or
//! cumulatively). The numbers start again from 0 with every episode, while the ACKs of the
//! previous episode's retransmissions may still be coming back: a SACK for one of those is
//! counted against the segment's new number, and can declare this episode's earlier
//! retransmissions lost the moment they are sent. That is how ns-2's TCP-Linux comes to resend
//! the same segments many times over after a large overshoot, and `rate_halving` does the same.
//!
//! Evaluating that rule over the whole window on every ACK costs O(window) per ACK, which at
//! 1 Gbit/s (windows of thousands of segments) dominated the run. Both inputs only grow within
//! a connection — the loss bound and the highest SACKed segment — so each segment changes state
//! a bounded number of times per episode, and the lost set can be kept with flags and a count:
//! segments below `upto` have had the bound applied, and retransmissions wait in `pending`
//! (in the order they were sent, which is the order of their marks) until a SACK above them
//! shows them lost.

use std::collections::VecDeque;

/// The lost-segment marks of one sender, aligned with its SACK scoreboard at `snd_una`.
#[derive(Debug, Default)]
pub(super) struct LostMarks {
    /// `snd_una`: index 0 of `mark` and `lost`.
    una: u64,
    /// 1 + `snd_max` at the last retransmission of each segment in this episode, 0 if none.
    mark: VecDeque<u64>,
    /// Whether each segment is held lost.
    lost: VecDeque<bool>,
    /// Segments flagged in `lost`.
    count: u64,
    /// The bound rule has been applied to every segment below this.
    upto: u64,
    /// (mark, segment, number) of retransmissions not yet shown lost, in the order sent (marks
    /// non-decreasing, numbers increasing).
    pending: VecDeque<(u64, u64, u64)>,
    /// No segment below this is lost.
    hint: u64,
    /// `snd_max` at the last timeout: below it, a segment not retransmitted since is lost.
    floor: u64,
    /// Whether the retransmission-number rule applies (`rate_halving`).
    numbered: bool,
    /// 1 + the number of each segment's last retransmission in this episode, 0 if none.
    id: VecDeque<u64>,
    /// The number the next retransmission gets.
    next_id: u64,
    /// The highest number of a retransmission acknowledged in this episode, if any.
    acked_id: Option<u64>,
    /// The highest number SACKed by the ACK being processed: it counts from the next ACK on
    /// (ns-2 walks its scoreboard once per ACK, from the bottom, and has passed the segments
    /// below by the time it meets the SACKed one; a cumulative ACK counts at once).
    sacked_id: Option<u64>,
}

/// ns-2's `dupack_threshold + 1`: a retransmission is lost once one numbered more than this
/// after it has been acknowledged.
const RTX_ID_GAP: u64 = 4;

impl LostMarks {
    /// Marks with the retransmission-number rule (`rate_halving`) or without it.
    pub(super) fn new(numbered: bool) -> Self {
        LostMarks { numbered, ..Self::default() }
    }

    /// Segments held lost.
    pub(super) fn count(&self) -> u64 {
        self.count
    }

    /// Whether segment `seq` is held lost (as of the last [`LostMarks::refresh`]).
    pub(super) fn is_lost(&self, seq: u64) -> bool {
        seq >= self.una && self.lost.get((seq - self.una) as usize) == Some(&true)
    }

    /// Flag segment `seq`; true if that made it lost.
    fn set(&mut self, seq: u64, lost: bool) -> bool {
        let k = (seq - self.una) as usize;
        if self.lost.len() <= k {
            if !lost {
                return false;
            }
            self.lost.resize(k + 1, false);
        }
        if self.lost[k] == lost {
            return false;
        }
        self.lost[k] = lost;
        if lost {
            self.count += 1;
            self.hint = self.hint.min(seq);
        } else {
            self.count -= 1;
        }
        lost
    }

    fn mark_of(&self, seq: u64) -> u64 {
        self.mark.get((seq - self.una) as usize).copied().unwrap_or(0)
    }

    /// 1 + the number of segment `seq`'s last retransmission, 0 if none in this episode.
    fn id_of(&self, seq: u64) -> u64 {
        self.id.get((seq - self.una) as usize).copied().unwrap_or(0)
    }

    /// The number of segment `seq`'s retransmission in this episode, if the number rule
    /// applies and the segment is not held lost (an acknowledgement then comes from it).
    fn acked_number(&self, seq: u64) -> Option<u64> {
        let id = self.id_of(seq);
        (self.numbered && id > 0 && !self.is_lost(seq)).then(|| id - 1)
    }

    /// A new ACK is being processed: the numbers SACKed by the last one now count.
    pub(super) fn next_ack(&mut self) {
        self.acked_id = self.acked_id.max(self.sacked_id.take());
    }

    /// Whether retransmission number `id` is lost by the number rule.
    fn outnumbered(&self, id: u64) -> bool {
        self.acked_id.is_some_and(|a| id + RTX_ID_GAP < a)
    }

    /// The cumulative ACK moved to `una`.
    pub(super) fn acked(&mut self, una: u64) {
        let n = una.saturating_sub(self.una);
        if self.numbered {
            for seq in self.una..self.una + n.min(self.id.len() as u64) {
                self.acked_id = self.acked_id.max(self.acked_number(seq));
            }
        }
        for _ in 0..n.min(self.id.len() as u64) {
            self.id.pop_front();
        }
        for _ in 0..n.min(self.lost.len() as u64) {
            if self.lost.pop_front() == Some(true) {
                self.count -= 1;
            }
        }
        for _ in 0..n.min(self.mark.len() as u64) {
            self.mark.pop_front();
        }
        self.una = self.una.max(una);
        self.upto = self.upto.max(una);
        self.hint = self.hint.max(una);
        while self.pending.front().is_some_and(|&(_, s, _)| s < una) {
            self.pending.pop_front();
        }
    }

    /// Segment `seq` was newly SACKed.
    pub(super) fn sacked(&mut self, seq: u64) {
        self.sacked_id = self.sacked_id.max(self.acked_number(seq));
        self.set(seq, false);
    }

    /// Segment `seq` was retransmitted while `snd_max` was `snd_max`.
    pub(super) fn retransmitted(&mut self, seq: u64, snd_max: u64) {
        self.set(seq, false);
        let k = (seq - self.una) as usize;
        if self.mark.len() <= k {
            self.mark.resize(k + 1, 0);
        }
        self.mark[k] = snd_max + 1;
        let id = self.next_id;
        self.next_id += 1;
        if self.id.len() <= k {
            self.id.resize(k + 1, 0);
        }
        self.id[k] = id + 1;
        self.pending.push_back((snd_max + 1, seq, id));
    }

    /// A new episode numbers its retransmissions from 0.
    fn restart_numbers(&mut self) {
        self.id.iter_mut().for_each(|i| *i = 0);
        self.next_id = 0;
        self.acked_id = None;
        self.sacked_id = None;
    }

    /// A new loss episode (recovery or a timeout): earlier retransmissions no longer count, so
    /// every segment the bound has passed is lost again unless SACKed.
    pub(super) fn reset(&mut self, sacked: &VecDeque<bool>) {
        for k in 0..self.mark.len() {
            if self.mark[k] > 0 {
                self.mark[k] = 0;
                let seq = self.una + k as u64;
                if seq < self.upto && sacked.get(k) != Some(&true) {
                    self.set(seq, true);
                }
            }
        }
        self.pending.clear();
        self.restart_numbers();
    }

    /// The scoreboard is cleared (ns-2's `ClearScoreBoard` when a recovery ends): nothing is
    /// held lost, marked or numbered until SACKs arrive again.
    pub(super) fn clear(&mut self) {
        self.lost.clear();
        self.count = 0;
        self.mark.clear();
        self.pending.clear();
        self.id.clear();
        self.restart_numbers();
        (self.upto, self.hint, self.floor) = (self.una, self.una, self.una);
    }

    /// A timeout: earlier retransmissions no longer count and every segment outstanding
    /// (below `snd_max`) is lost unless SACKed.
    pub(super) fn timeout(&mut self, sacked: &VecDeque<bool>, snd_max: u64) {
        for seq in self.una..snd_max {
            let k = (seq - self.una) as usize;
            if let Some(m) = self.mark.get_mut(k) {
                *m = 0;
            }
            self.set(seq, sacked.get(k) != Some(&true));
        }
        self.pending.clear();
        self.restart_numbers();
        self.floor = snd_max;
        self.upto = self.upto.max(snd_max);
    }

    /// Apply the loss `bound` (the highest segment it holds lost, if any) and the highest
    /// SACKed segment `high_sacked` (one past it); `sacked` is the scoreboard from `una`.
    /// Returns how many segments this newly held lost.
    pub(super) fn refresh(&mut self, bound: Option<u64>, high_sacked: u64, sacked: &VecDeque<bool>) -> u64 {
        let mut newly = 0;
        if let Some(b) = bound {
            while self.upto <= b {
                let seq = self.upto;
                let k = (seq - self.una) as usize;
                if sacked.get(k) != Some(&true) && self.mark_of(seq) == 0 {
                    newly += u64::from(self.set(seq, true));
                }
                self.upto += 1;
            }
        }
        while let Some(&(mark, seq, id)) = self.pending.front() {
            if mark > high_sacked && !self.outnumbered(id) {
                break;
            }
            self.pending.pop_front();
            if seq < self.una {
                continue; // acknowledged since
            }
            let k = (seq - self.una) as usize;
            // Only the segment's last retransmission counts.
            if self.id_of(seq) == id + 1 && sacked.get(k) != Some(&true) {
                newly += u64::from(self.set(seq, true));
            }
        }
        newly
    }

    /// Debug builds: the flags agree with the rule evaluated from scratch over `una..snd_max`.
    #[cfg(debug_assertions)]
    pub(super) fn check(&self, bound: Option<u64>, high_sacked: u64, sacked: &VecDeque<bool>, snd_max: u64) {
        for seq in self.una..snd_max {
            let k = (seq - self.una) as usize;
            let expected = sacked.get(k) != Some(&true)
                && match self.mark_of(seq) {
                    0 => bound.is_some_and(|b| seq <= b) || seq < self.floor,
                    mark => mark - 1 < high_sacked || (self.numbered && self.outnumbered(self.id_of(seq) - 1)),
                };
            debug_assert_eq!(self.is_lost(seq), expected, "segment {seq} (una {}, bound {bound:?})", self.una);
        }
        debug_assert!((self.una..self.hint).all(|s| !self.is_lost(s)));
    }

    /// The first lost segment at or above `from` and below `end`.
    pub(super) fn next_lost(&mut self, from: u64, end: u64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let start = from.max(self.hint);
        let mut seq = start;
        while seq < end && !self.is_lost(seq) {
            seq += 1;
        }
        if from <= self.hint {
            // Nothing lost between the hint and `seq`.
            self.hint = seq;
        }
        (seq < end).then_some(seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ten segments 0..9 lost below four SACKed ones (10..13), all ten resent in order while
    /// 20 segments are out: retransmission numbers 0..9.
    fn resent(numbered: bool) -> (LostMarks, VecDeque<bool>) {
        let mut m = LostMarks::new(numbered);
        let mut sacked = VecDeque::from(vec![false; 20]);
        for s in 10..14u64 {
            sacked[s as usize] = true;
            m.sacked(s);
        }
        assert_eq!(m.refresh(Some(9), 14, &sacked), 10);
        for s in 0..10 {
            m.retransmitted(s, 20);
        }
        assert_eq!(m.count(), 0);
        (m, sacked)
    }

    #[test]
    fn a_retransmission_is_lost_once_one_numbered_more_than_four_after_it_is_acknowledged() {
        for numbered in [true, false] {
            let (mut m, mut sacked) = resent(numbered);
            // Retransmission number 5 (segment 5) arrives: number 0 is more than four before it,
            // which counts from the next ACK on.
            sacked[5] = true;
            m.sacked(5);
            assert_eq!(m.refresh(Some(9), 14, &sacked), 0);
            m.next_ack();
            let lost = m.refresh(Some(9), 14, &sacked);
            assert_eq!(lost, u64::from(numbered), "numbered: {numbered}");
            assert_eq!(m.is_lost(0), numbered);
            assert!(!m.is_lost(1), "number 1 is only four before 5");
            #[cfg(debug_assertions)]
            m.check(Some(9), 14, &sacked, 20);
        }
    }

    #[test]
    fn numbers_start_again_with_each_episode_so_a_late_ack_of_the_last_one_counts_against_this_one() {
        let (mut m, mut sacked) = resent(true);
        // The episode ends and a new one begins; segments 0..9 are resent again, numbered 0..9.
        m.reset(&sacked);
        for s in 0..10 {
            m.retransmitted(s, 20);
        }
        // Segment 8 arrives: it is the last episode's retransmission (number 8 then), but the
        // scoreboard knows only this episode's, number 8 too; numbers 0..3 are now lost though
        // they were sent a moment ago.
        sacked[8] = true;
        m.sacked(8);
        m.next_ack();
        assert_eq!(m.refresh(Some(9), 14, &sacked), 4);
        assert!((0..4).all(|s| m.is_lost(s)) && !m.is_lost(4));
        #[cfg(debug_assertions)]
        m.check(Some(9), 14, &sacked, 20);
    }
}
