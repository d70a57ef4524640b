//! Deterministic event queue: ordered by time, ties broken by insertion order.

use crate::units::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Everything that can happen at a point in time. Small and `Copy`; dispatch is one `match`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The packet at the head of link direction `.0`'s pipe reaches the far node.
    LinkArrival(u32),
    /// A sender timer of connection `.0` may be due (retransmission or handshake).
    SenderTimer(u32),
    /// The delayed-ACK timer of connection `.0`'s sink may be due.
    SinkTimer(u32),
    /// Connection `.0` starts.
    FlowStart(u32),
    /// Connection `.0` stops sending new data.
    FlowStop(u32),
    /// The traffic source of UDP flow `.0` has packets to send.
    Source(u32),
    /// The next data segment held by connection `.0`'s send jitter leaves.
    Release(u32),
    /// Take one time-series sample of every flow and queue.
    Sample,
    /// Apply the scenario's link change `.0`.
    LinkChange(u32),
    /// The transmitter of scheduled link direction `.0` frees (ADR 0004): the packet being
    /// sent, if any, has been sent, and the discipline picks the next.
    LinkTransmit(u32),
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: Time,
    seq: u64,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.seq == other.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed, so the std max-heap pops the earliest (time, seq) first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

/// A min-queue of events keyed by `(time, insertion sequence)`.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
    popped: u64,
}

impl EventQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedule `event` at `time`. Events at equal times pop in the order they were pushed.
    #[inline]
    pub fn push(&mut self, time: Time, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { time, seq, event });
    }

    /// The earliest event, without removing it.
    #[inline]
    pub fn peek(&self) -> Option<(Time, Event)> {
        self.heap.peek().map(|e| (e.time, e.event))
    }

    /// Replace the earliest event by `event` at `time` (which must not be earlier): one sift
    /// instead of a pop and a push. The earliest event counts as popped. A link whose pipe has
    /// another packet after the one arriving does exactly this.
    #[inline]
    pub fn replace_top(&mut self, time: Time, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let mut top = self.heap.peek_mut().expect("replace_top on an empty queue");
        debug_assert!(time >= top.time, "event scheduled in the past");
        *top = Entry { time, seq, event };
        self.popped += 1;
    }

    /// Remove and return the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let e = self.heap.pop()?;
        self.popped += 1;
        Some((e.time, e.event))
    }

    /// Number of events popped so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order_and_ties_in_insertion_order() {
        let mut q = EventQueue::new();
        q.push(20, Event::Sample);
        q.push(10, Event::FlowStart(2));
        q.push(10, Event::FlowStart(0));
        q.push(10, Event::FlowStart(1));
        q.push(5, Event::LinkArrival(9));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (5, Event::LinkArrival(9)),
                (10, Event::FlowStart(2)),
                (10, Event::FlowStart(0)),
                (10, Event::FlowStart(1)),
                (20, Event::Sample)
            ]
        );
        assert_eq!(q.popped(), 5);
    }
}
