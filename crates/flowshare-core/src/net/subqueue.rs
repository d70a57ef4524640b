//! The FIFO sub-queues of a scheduled link direction ([`crate::net::sched`]): the packets
//! waiting in them ([`Queued`]), their admission control (RED, enhanced RED) and limits, and why
//! a queued packet may leave without being sent ([`Removal`]). CoDel ([`crate::net::codel`])
//! works on these queues; the scheduler chooses among them.

use crate::net::enhanced_red::EnhancedRed;
use crate::net::epd::Epd;
use crate::net::red::Red;
use crate::net::{Limit, Refusal};
use crate::packet::{Meta, PacketId};
use crate::units::Time;
use std::collections::VecDeque;

/// A packet waiting in a scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queued {
    /// Arena index.
    pub id: PacketId,
    /// Arrival time at the queue.
    pub at: Time,
    /// What the discipline sees of it (flow and group for classification, size, ECN, frame).
    pub meta: Meta,
}

/// Why a packet that had been queued left without being sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Removal {
    /// Pushed out of the longest (fattest) queue to make room for an arrival.
    PushOut,
    /// Dropped at dequeue by CoDel.
    Codel,
}

/// Whether `pkts` packets of `bytes` bytes exceed `limit`.
#[inline]
pub(crate) fn exceeds(limit: Limit, pkts: u32, bytes: u64) -> bool {
    match limit {
        Limit::Packets(n) => pkts > n,
        Limit::Bytes(b) => bytes > b,
    }
}

/// Whether `pkts` packets of `bytes` bytes reach `limit` (a step marking's threshold).
#[inline]
pub(crate) fn reaches(limit: Limit, pkts: u64, bytes: u64) -> bool {
    match limit {
        Limit::Packets(n) => pkts >= u64::from(n),
        Limit::Bytes(b) => bytes >= b,
    }
}

/// Admission control of one sub-queue, before its limit.
#[derive(Clone, Debug, Default)]
pub enum SubAqm {
    /// Only limits refuse packets.
    #[default]
    None,
    /// RED (DRR+).
    Red(Box<Red>),
    /// Enhanced RED (DRR+, or the `enhanced_red` FIFO).
    Enhanced(Box<EnhancedRed>),
    /// Whole-frame discard of ATM cells (a class of a priority queue on a cell link).
    Epd(Box<Epd>),
}

/// One FIFO sub-queue of a scheduler.
#[derive(Clone, Debug, Default)]
pub struct SubQueue {
    pkts: VecDeque<Queued>,
    bytes: u64,
    /// Own limit, if any (besides the scheduler's shared one).
    pub limit: Option<Limit>,
    /// When it last became empty (RED's idle correction).
    empty_since: Time,
    /// Admission control.
    pub aqm: SubAqm,
    /// Step marking: an ECN-capable arrival that finds this many packets or bytes waiting
    /// here is marked (EFCI marking of forward RM cells in a class of a cell link).
    pub mark_threshold: Option<Limit>,
    /// Apply the step marking when a packet leaves (to the packets it leaves behind) rather
    /// than when it arrives, so the mark does not wait behind the queue that caused it.
    pub mark_at_departure: bool,
}

impl SubQueue {
    /// A sub-queue with an optional limit and admission control.
    pub fn new(limit: Option<Limit>, aqm: SubAqm) -> Self {
        SubQueue { limit, aqm, ..Default::default() }
    }

    /// Packets waiting.
    pub fn len(&self) -> usize {
        self.pkts.len()
    }

    /// True when nothing waits.
    pub fn is_empty(&self) -> bool {
        self.pkts.is_empty()
    }

    /// Bytes waiting.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The packets waiting, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &Queued> + '_ {
        self.pkts.iter()
    }

    /// Admission control and own limit for `q`; does not add it. On acceptance, whether the
    /// step marking marks it.
    pub(crate) fn admit(&mut self, q: &Queued) -> Result<bool, Refusal> {
        let idle = self.pkts.is_empty().then_some(self.empty_since);
        let early = match &mut self.aqm {
            SubAqm::None => false,
            SubAqm::Red(red) => red.early_drop(q.at, q.meta.size, self.pkts.len() as u32, self.bytes, idle),
            SubAqm::Enhanced(e) => e.early_drop(q.at, &q.meta, self.pkts.len() as u32, idle),
            SubAqm::Epd(e) => e.discards(self.pkts.len() as u32, &q.meta),
        };
        if early {
            return Err(Refusal::Early);
        }
        if let Some(limit) = self.limit {
            if exceeds(limit, self.pkts.len() as u32 + 1, self.bytes + u64::from(q.meta.size)) {
                self.overflowed(q);
                return Err(Refusal::Overflow);
            }
        }
        Ok(!self.mark_at_departure && self.over_mark_threshold(&q.meta))
    }

    /// Whether ECN-capable `meta` finds the step marking's threshold reached by the packets
    /// waiting here.
    pub(crate) fn over_mark_threshold(&self, meta: &Meta) -> bool {
        meta.ect() && self.mark_threshold.is_some_and(|k| reaches(k, self.pkts.len() as u64, self.bytes))
    }

    /// `q`, admitted by [`SubQueue::admit`], was refused for want of room after all.
    pub(crate) fn overflowed(&mut self, q: &Queued) {
        match &mut self.aqm {
            SubAqm::Red(red) => red.reset_count(),
            SubAqm::Epd(e) => e.overflowed(&q.meta),
            SubAqm::None | SubAqm::Enhanced(_) => {}
        }
    }

    /// Append `q` (no checks).
    pub fn push_back(&mut self, q: Queued) {
        self.bytes += u64::from(q.meta.size);
        self.pkts.push_back(q);
    }

    /// Remove the head; `now` is noted when the queue empties.
    pub fn pop_head(&mut self, now: Time) -> Option<Queued> {
        let q = self.pkts.pop_front()?;
        self.bytes -= u64::from(q.meta.size);
        if self.pkts.is_empty() {
            self.empty_since = now;
        }
        Some(q)
    }

    pub(crate) fn head_size(&self) -> Option<u32> {
        self.pkts.front().map(|q| q.meta.size)
    }
}
