//! Deterministic event queue: ordered by time, ties broken by insertion order.

use crate::units::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Everything that can happen at a point in time. Small and `Copy`; dispatch is one `match`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The packet at the head of link direction `.0`'s pipe reaches the far node.
    LinkArrival(u32),
    /// An endpoint may have something due (a timer, a pacing or send instant): a [`WakeTag`],
    /// the endpoint and the generation of its slot when the event was scheduled.
    Wake(WakeTag),
    /// Connection `.0` starts.
    Start(u32),
    /// Connection `.0` stops sending new data.
    Stop(u32),
    /// Arrival process `.0` opens its next connection.
    Arrival(u32),
    /// Closed-loop user `.0` ends its think time and opens a connection.
    User(u32),
    /// The next data segment held by connection `.0`'s send jitter leaves.
    Release(u32),
    /// The periodic timer of a congestion-control group may be due: a [`WakeTag`] of the group
    /// and its generation.
    CcTimer(WakeTag),
    /// Take one time-series sample of every flow and queue.
    Sample,
    /// Apply the scenario's link change `.0`.
    LinkChange(u32),
    /// The transmitter of scheduled link direction `.0` frees (ADR 0004): the packet being
    /// sent, if any, has been sent, and the discipline picks the next.
    LinkTransmit(u32),
    /// The warm-up ends: the steady-state figures count from now.
    Warmup,
    /// ABR resource-management cell `.0` (its arena index) reaches the end of its route, where
    /// it is turned around or read by its source (ADR 0013).
    RmCell(u32),
}

const _: () = assert!(std::mem::size_of::<Event>() == 8, "events stay 8 bytes");

/// A slot index and the generation of the slot, packed in 32 bits so that an event stays 8
/// bytes (a wider event costs the event loop about 1 % more instructions). Slot indices are
/// below 2²⁶; the generation is kept modulo 64. A wake-up that reaches a reused slot of the
/// same generation modulo 64 is harmless: whoever holds the slot checks its own deadlines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WakeTag(u32);

impl WakeTag {
    /// Slots that can be tagged.
    pub const MAX_SLOTS: u32 = 1 << 26;

    /// Tag slot `slot` (below [`WakeTag::MAX_SLOTS`]) at generation `gen`.
    #[inline]
    pub fn new(slot: u32, gen: u16) -> WakeTag {
        debug_assert!(slot < Self::MAX_SLOTS, "slot {slot} cannot be tagged");
        WakeTag(slot | (u32::from(gen) & 63) << 26)
    }

    /// The slot.
    #[inline]
    pub fn slot(self) -> u32 {
        self.0 & (Self::MAX_SLOTS - 1)
    }

    /// Whether the tag was made for generation `gen` (modulo 64).
    #[inline]
    pub fn is_gen(self, gen: u16) -> bool {
        self.0 >> 26 == u32::from(gen) & 63
    }
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
    fn wake_tags_keep_slot_and_generation() {
        let t = WakeTag::new(WakeTag::MAX_SLOTS - 1, 65);
        assert_eq!(t.slot(), WakeTag::MAX_SLOTS - 1);
        assert!(t.is_gen(1) && t.is_gen(65) && !t.is_gen(2));
        assert_eq!(WakeTag::new(7, 0).slot(), 7);
    }

    #[test]
    fn pops_in_time_order_and_ties_in_insertion_order() {
        let mut q = EventQueue::new();
        q.push(20, Event::Sample);
        q.push(10, Event::Start(2));
        q.push(10, Event::Start(0));
        q.push(10, Event::Start(1));
        q.push(5, Event::LinkArrival(9));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (5, Event::LinkArrival(9)),
                (10, Event::Start(2)),
                (10, Event::Start(0)),
                (10, Event::Start(1)),
                (20, Event::Sample)
            ]
        );
        assert_eq!(q.popped(), 5);
    }

    proptest::proptest! {
        /// Any mix of pushes (times never before the last popped one), pops and top
        /// replacements pops exactly what a sorted reference of `(time, seq)` gives.
        #[test]
        fn pops_what_a_sorted_reference_pops(ops in proptest::collection::vec((0u8..4, 0u64..50), 1..400)) {
            let mut q = EventQueue::new();
            let mut reference = std::collections::BTreeSet::new();
            let (mut now, mut seq) = (0u64, 0u32);
            for (op, dt) in ops {
                match op {
                    0 | 1 => {
                        q.push(now + dt, Event::Start(seq));
                        reference.insert((now + dt, seq));
                        seq += 1;
                    }
                    2 => {
                        let got = q.pop();
                        let want = reference.pop_first();
                        proptest::prop_assert_eq!(got, want.map(|(t, s)| (t, Event::Start(s))));
                        if let Some((t, _)) = want {
                            now = t;
                        }
                    }
                    _ => {
                        if let Some((t, s)) = reference.pop_first() {
                            proptest::prop_assert_eq!(q.peek(), Some((t, Event::Start(s))));
                            now = t;
                            q.replace_top(now + dt, Event::Start(seq));
                            reference.insert((now + dt, seq));
                            seq += 1;
                        }
                    }
                }
                proptest::prop_assert_eq!(q.len(), reference.len());
            }
            while let Some((t, s)) = reference.pop_first() {
                proptest::prop_assert_eq!(q.pop(), Some((t, Event::Start(s))));
            }
            proptest::prop_assert!(q.is_empty());
        }
    }
}
