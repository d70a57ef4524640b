//! The members of one aggregate connection (ADR 0012): the `n` long-lived members it starts
//! with, the members that join it while the run goes on with a finite transfer, and which
//! member each segment belongs to, so that a joined member's completion can be told.
//!
//! PA-MulTCP and MPAT carry several flows' data in one connection. Which flow a segment
//! belongs to matters for a joined member only: it is complete when every one of its segments
//! has been delivered, cumulatively acknowledged or SACKed (not when its last byte is received
//! in order), and it leaves the aggregate then. The controllers keep one [`SegmentLog`] entry
//! per outstanding segment, so the cost is per segment sent, never per member.

use super::host::Tag;
use crate::units::Time;
use std::collections::VecDeque;

/// A member joining an aggregate at run time with a finite transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Join {
    /// When it joins, ns from the start of the run.
    pub at: Time,
    /// Bytes it transfers.
    pub bytes: u64,
    /// Segments it transfers (bytes over the MSS, rounded up).
    pub segments: u64,
}

/// What the `members` table reports of one joined member.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MemberRecord {
    /// The connection (flow id) of the aggregate.
    pub flow: u32,
    /// The member's index: joined members count from `n` (the initial members are 0..n−1).
    pub member: u32,
    /// When it joined, ns.
    pub start: Time,
    /// Bytes it transfers.
    pub bytes: u64,
    /// Segments it transfers.
    pub segments: u64,
    /// When its last segment was delivered, if it was.
    pub completed: Option<Time>,
}

/// A joined member while it is active.
#[derive(Clone, Copy, Debug)]
struct Active {
    member: u32,
    join: Join,
    admitted: u64,
    delivered: u64,
}

/// The members of one aggregate: who is active, whose turn the next segment is, and the
/// records of the joined members.
#[derive(Debug)]
pub struct Roster {
    flow: u32,
    initial: u32,
    /// Joins not yet due, latest first.
    pending: Vec<Join>,
    active: Vec<Active>,
    /// Members taking turns for new data (the initial ones, then joined ones with data left).
    ring: Vec<u32>,
    turn: usize,
    records: Vec<MemberRecord>,
    next_member: u32,
}

impl Roster {
    /// The aggregate of connection `flow` with `initial` long-lived members and `joins`.
    pub fn new(flow: u32, initial: u32, joins: &[Join]) -> Self {
        // Latest first, to pop; the sort is stable, so joins at one time keep their order.
        let mut sorted = joins.to_vec();
        sorted.sort_by_key(|j| j.at);
        sorted.reverse();
        Roster {
            flow,
            initial,
            pending: sorted,
            active: Vec::new(),
            ring: (0..initial).collect(),
            turn: 0,
            records: Vec::new(),
            next_member: initial,
        }
    }

    /// Members now: the initial ones and the joined ones not yet complete.
    pub fn n(&self) -> u32 {
        self.initial + self.active.len() as u32
    }

    /// When the next member joins.
    pub fn next_join(&self) -> Option<Time> {
        self.pending.last().map(|j| j.at)
    }

    /// The members joining at or before `now`, activated; their indices are returned.
    pub fn join_due(&mut self, now: Time) -> Vec<u32> {
        let mut joined = Vec::new();
        while self.pending.last().is_some_and(|j| j.at <= now) {
            let join = self.pending.pop().expect("a pending join");
            let member = self.next_member;
            self.next_member += 1;
            self.active.push(Active { member, join, admitted: 0, delivered: 0 });
            self.ring.push(member);
            self.records.push(MemberRecord {
                flow: self.flow,
                member,
                start: now,
                bytes: join.bytes,
                segments: join.segments,
                completed: None,
            });
            joined.push(member);
        }
        joined
    }

    /// The member whose turn it is for the next new segment (round robin over the members
    /// with data left), counted as admitted.
    pub fn next_turn(&mut self) -> u32 {
        let k = self.turn % self.ring.len();
        let member = self.ring[k];
        self.turn = k + 1;
        self.admitted(member);
        member
    }

    /// Whether `member` has data left to send (initial members always have).
    pub fn has_data(&self, member: u32) -> bool {
        member < self.initial || self.active.iter().any(|a| a.member == member && a.admitted < a.join.segments)
    }

    /// One more segment of `member` is sent; a joined member with nothing left leaves the turns.
    pub fn admitted(&mut self, member: u32) {
        if let Some(a) = self.active.iter_mut().find(|a| a.member == member) {
            a.admitted += 1;
            if a.admitted >= a.join.segments {
                if let Some(k) = self.ring.iter().position(|&r| r == member) {
                    self.ring.remove(k);
                    if k < self.turn {
                        self.turn -= 1;
                    }
                }
            }
        }
    }

    /// A segment of `member` was delivered at `now`; true when that completes the member,
    /// which then leaves the aggregate.
    pub fn delivered(&mut self, member: u32, now: Time) -> bool {
        let Some(k) = self.active.iter().position(|a| a.member == member) else { return false };
        let a = &mut self.active[k];
        a.delivered += 1;
        if a.delivered < a.join.segments {
            return false;
        }
        self.active.remove(k);
        if let Some(r) = self.records.iter_mut().find(|r| r.member == member) {
            r.completed = Some(now);
        }
        true
    }

    /// The records of the members that have joined so far, handed over once.
    pub fn take_records(&mut self, out: &mut Vec<MemberRecord>) {
        out.append(&mut self.records);
    }
}

/// One outstanding segment of an aggregate connection: its loop and member.
#[derive(Clone, Copy, Debug)]
pub struct Segment {
    /// The loop that admitted it.
    pub tag: Tag,
    /// The member it carries data of.
    pub member: u32,
    /// Its number among the segments of its loop.
    pub index: u64,
    /// Already reported delivered (a segment counts once).
    pub delivered: bool,
}

/// The segments from the connection's oldest unacknowledged one to the last sent, by sequence
/// number: every new segment is admitted by the controller, so the k-th admitted is number k.
#[derive(Debug, Default)]
pub struct SegmentLog {
    base: u64,
    segs: VecDeque<Segment>,
}

impl SegmentLog {
    /// Number of the next new segment.
    pub fn next_seq(&self) -> u64 {
        self.base + self.segs.len() as u64
    }

    /// Note the next new segment: loop `tag`'s segment number `index`, of `member`.
    pub fn push(&mut self, tag: Tag, member: u32, index: u64) {
        self.segs.push_back(Segment { tag, member, index, delivered: false });
    }

    /// Segment `seq`, if outstanding.
    pub fn get(&self, seq: u64) -> Option<&Segment> {
        seq.checked_sub(self.base).and_then(|k| self.segs.get(k as usize))
    }

    /// Mark segment `seq` delivered; returns it if it was not already.
    pub fn deliver(&mut self, seq: u64) -> Option<Segment> {
        let k = seq.checked_sub(self.base)? as usize;
        let s = self.segs.get_mut(k)?;
        if s.delivered {
            return None;
        }
        s.delivered = true;
        Some(*s)
    }

    /// Forget the segments below `snd_una` (cumulatively acknowledged, so already delivered).
    pub fn trim(&mut self, snd_una: u64) {
        while self.base < snd_una && !self.segs.is_empty() {
            self.segs.pop_front();
            self.base += 1;
        }
    }
}

/// The [`GroupControl`](super::host::GroupControl) callbacks of an aggregate whose connection
/// window is the sum of its loops' windows and whose members come from a [`Roster`]: PA-MulTCP
/// and MPAT answer them the same way. Expanded inside `impl GroupControl for T`, where `T` has
/// a field `roster: Roster` and the methods `sync(&self, &mut CcState)` (the loops' sum into
/// the connection's cwnd and ssthresh) and `admit_joins(&mut self, Time)`.
macro_rules! loop_sum_callbacks {
    () => {
        fn caps(&self) -> $crate::cc::host::Caps {
            $crate::cc::host::Caps {
                tags: true,
                timer: self.roster.next_join().is_some(),
                ..$crate::cc::host::Caps::default()
            }
        }

        // A phase change or a backed-off timeout moves the connection's window, not the loops'.
        fn on_phase(
            &mut self,
            m: $crate::cc::host::MemberId,
            _from: $crate::cc::Phase,
            _to: $crate::cc::Phase,
            g: &mut $crate::cc::host::Members<'_>,
        ) {
            self.sync(g.get_mut(m));
        }

        fn on_repeated_timeout(&mut self, m: $crate::cc::host::MemberId, g: &mut $crate::cc::host::Members<'_>) {
            self.sync(g.get_mut(m));
        }

        fn next_timer(&self) -> Option<$crate::units::Time> {
            self.roster.next_join()
        }

        fn on_timer(&mut self, now: $crate::units::Time, g: &mut $crate::cc::host::Members<'_>) {
            self.admit_joins(now);
            for k in 0..g.len() {
                let m = g.ids()[k];
                self.sync(g.get_mut(m));
                g.clock(m);
            }
        }

        fn take_member_records(&mut self, out: &mut Vec<$crate::cc::aggregate::MemberRecord>) {
            self.roster.take_records(out);
        }
    };
}
pub(crate) use loop_sum_callbacks;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_take_turns_and_complete_when_every_segment_is_delivered() {
        let join = Join { at: 5, bytes: 3000, segments: 3 };
        let mut r = Roster::new(7, 2, &[join]);
        assert_eq!((r.n(), r.next_join()), (2, Some(5)));
        assert!(r.join_due(4).is_empty());
        assert_eq!(r.join_due(5), vec![2]);
        assert_eq!(r.n(), 3);
        // Round robin 0, 1, 2, 0, 1, 2, 0, 1, 2, then member 2 has nothing left.
        let turns: Vec<u32> = (0..11).map(|_| r.next_turn()).collect();
        assert_eq!(turns, vec![0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1]);
        assert!(!r.has_data(2) && r.has_data(0));
        assert!(!r.delivered(2, 10) && !r.delivered(2, 11));
        assert!(r.delivered(2, 12), "the third of three segments completes it");
        assert_eq!(r.n(), 2);
        let mut out = Vec::new();
        r.take_records(&mut out);
        let want = MemberRecord { flow: 7, member: 2, start: 5, bytes: 3000, segments: 3, completed: Some(12) };
        assert_eq!(out, vec![want]);
    }

    #[test]
    fn the_segment_log_counts_a_delivery_once() {
        let mut log = SegmentLog::default();
        for k in 0..4 {
            log.push((k % 2) as Tag, k, u64::from(k / 2));
        }
        assert_eq!(log.next_seq(), 4);
        assert_eq!(log.deliver(2).map(|s| (s.tag, s.member)), Some((0, 2)));
        assert!(log.deliver(2).is_none());
        log.trim(3);
        assert!(log.get(2).is_none());
        assert_eq!(log.get(3).map(|s| s.member), Some(3));
        assert_eq!(log.next_seq(), 4);
    }
}
