//! Loss events: losses grouped by one round-trip time.
//!
//! The rule: a loss starts a new loss event unless it comes within one RTT, inclusive, of the
//! first loss of the current event (`at <= start + rtt`); then it belongs to that event. It is
//! RFC 5348 §5.2's rule for the TFRC receiver, and the rule of the loss measures of
//! Damjanović, "Parallel TCP Data Transfers: A Practical Model and its Application", PhD
//! thesis, University of Innsbruck, 2010, §3.1: the per-flow loss event rate `p`, the
//! cumulative-flow loss event rate `p_e` of `n` flows observed as one, and the mean number of
//! flows hit per cumulative event (the measured `j`).
//!
//! It is written once, here, so that the TFRC receiver ([`crate::tfrc::LossHistory`], one loss
//! at a time, in integer nanoseconds) and trace analysis (`flowshare.analysis`, whole lists of
//! float seconds) cannot disagree. The time type is generic ([`LossTime`]) rather than
//! converted: float seconds rounded to nanoseconds could move a loss across the boundary,
//! and the receiver's integer arithmetic must stay exact. `start + rtt` is computed in the
//! time type (saturating for integers, rounded to nearest for floats, as numpy adds), and the
//! comparison is `<=` for both.

use std::collections::BTreeMap;

/// A time that an RTT can be added to: the simulator's integer nanoseconds ([`crate::units::Time`])
/// or float seconds.
pub trait LossTime: Copy + PartialOrd {
    /// `self + rtt`, the last time that still belongs to an event starting at `self`.
    fn plus(self, rtt: Self) -> Self;
}

impl LossTime for u64 {
    /// Saturating: an event that starts near the end of time takes every later loss.
    fn plus(self, rtt: u64) -> u64 {
        self.saturating_add(rtt)
    }
}

impl LossTime for f64 {
    /// A NaN time or RTT makes every loss an event of its own (the comparison is false); the
    /// Python binding refuses NaN before it gets here.
    fn plus(self, rtt: f64) -> f64 {
        self + rtt
    }
}

/// The streaming form of the rule: losses go in one at a time, in the order they are found,
/// each with the RTT that groups it (the TFRC receiver takes the RTT written in the packet
/// that revealed the loss, so it may change from loss to loss).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grouper<T> {
    /// First loss of the current event.
    start: Option<T>,
    events: u64,
}

impl<T> Default for Grouper<T> {
    fn default() -> Self {
        Grouper { start: None, events: 0 }
    }
}

impl<T: LossTime> Grouper<T> {
    /// No loss yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A loss at `at`, grouped by `rtt`. Returns whether it starts a new loss event.
    pub fn push(&mut self, at: T, rtt: T) -> bool {
        if let Some(start) = self.start {
            if at <= start.plus(rtt) {
                return false;
            }
        }
        self.start = Some(at);
        self.events += 1;
        true
    }

    /// Time of the first loss of the current event (`None` before the first loss).
    pub fn start(&self) -> Option<T> {
        self.start
    }

    /// Loss events so far.
    pub fn events(&self) -> u64 {
        self.events
    }
}

/// For each loss of a time-sorted list, the index of its loss event (0, 1, …).
pub fn event_index<T: LossTime>(times: &[T], rtt: T) -> Vec<u64> {
    let mut g = Grouper::new();
    times
        .iter()
        .map(|&at| {
            g.push(at, rtt);
            g.events() - 1
        })
        .collect()
}

/// A loss event of the cumulative flow: the losses of `n` flows observed as one flow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CumulativeEvent<T> {
    /// Time of its first loss.
    pub start: T,
    /// Losses in it, of any flow.
    pub losses: u64,
    /// Distinct flows that lost a packet in it (what Model B's measured `j` averages).
    pub flows: u64,
}

/// The loss events of the cumulative flow, from losses `(times[i], flows[i])` sorted by time,
/// all grouped by one `rtt`.
pub fn cumulative_events<T: LossTime, F: Ord + Copy>(times: &[T], flows: &[F], rtt: T) -> Vec<CumulativeEvent<T>> {
    assert_eq!(times.len(), flows.len(), "one flow per loss");
    let mut g = Grouper::new();
    let mut out: Vec<CumulativeEvent<T>> = Vec::new();
    // The last event each flow lost a packet in: a flow counts once per event.
    let mut last_event: BTreeMap<F, u64> = BTreeMap::new();
    for (&at, &flow) in times.iter().zip(flows) {
        if g.push(at, rtt) {
            out.push(CumulativeEvent { start: at, losses: 0, flows: 0 });
        }
        let event = g.events() - 1;
        let ev = out.last_mut().expect("an event is open after a loss");
        ev.losses += 1;
        if last_event.insert(flow, event) != Some(event) {
            ev.flows += 1;
        }
    }
    out
}

/// Loss events counted flow by flow, from losses `(times[i], flows[i])` sorted by time; each
/// flow's losses are grouped by `rtt(flow)` (asked once per flow, at its first loss). Flows
/// without losses are absent.
pub fn flow_loss_events<T: LossTime, F: Ord + Copy>(
    times: &[T],
    flows: &[F],
    mut rtt: impl FnMut(F) -> T,
) -> BTreeMap<F, u64> {
    assert_eq!(times.len(), flows.len(), "one flow per loss");
    let mut groupers: BTreeMap<F, (Grouper<T>, T)> = BTreeMap::new();
    for (&at, &flow) in times.iter().zip(flows) {
        let (g, r) = groupers.entry(flow).or_insert_with(|| (Grouper::new(), rtt(flow)));
        g.push(at, *r);
    }
    groupers.into_iter().map(|(f, (g, _))| (f, g.events())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_boundary_is_inclusive_in_nanoseconds_and_seconds() {
        let mut g = Grouper::<u64>::new();
        assert!(g.push(1_000, 500));
        assert!(!g.push(1_500, 500), "at == start + rtt joins the event");
        assert!(g.push(1_501, 500));
        assert_eq!((g.events(), g.start()), (2, Some(1_501)));

        let mut g = Grouper::<f64>::new();
        assert!(g.push(1.0, 0.5));
        assert!(!g.push(1.5, 0.5), "at == start + rtt joins the event");
        assert!(g.push(1.5 + 1e-12, 0.5));
        // The sum is the float sum: 0.1 + 0.2 = 0.30000000000000004 ≥ 0.3.
        let mut g = Grouper::<f64>::new();
        g.push(0.1, 0.2);
        assert!(!g.push(0.3, 0.2));
        assert!(!g.push(0.1 + 0.2, 0.2));
        assert!(g.push((0.1_f64 + 0.2).next_up(), 0.2));
    }

    #[test]
    fn the_event_is_measured_from_its_first_loss_not_the_latest() {
        // 0, 0.6, 1.0 with RTT 1: one event; 1.2 is more than one RTT after 0.
        assert_eq!(event_index(&[0.0, 0.6, 1.0, 1.2, 2.2, 2.3], 1.0), vec![0, 0, 0, 1, 1, 2]);
        assert_eq!(event_index::<u64>(&[], 5), Vec::<u64>::new());
    }

    #[test]
    fn saturation_and_rtt_per_loss() {
        let mut g = Grouper::<u64>::new();
        g.push(u64::MAX - 1, 10);
        assert!(!g.push(u64::MAX, 10));
        // The RTT given with a loss decides for that loss.
        let mut g = Grouper::<u64>::new();
        g.push(0, 100);
        assert!(!g.push(100, 100));
        assert!(g.push(150, 50) && g.start() == Some(150));
    }

    #[test]
    fn cumulative_events_by_hand() {
        // tests/test_trace.py's crafted trace: RTT 0.1 s, flows 0, 1 and 2.
        let times = [1.00, 1.02, 1.05, 1.08, 1.11, 1.20, 3.00];
        let flows = [0, 1, 0, 2, 2, 0, 1];
        let ev = cumulative_events(&times, &flows, 0.1);
        assert_eq!(
            ev,
            vec![
                CumulativeEvent { start: 1.00, losses: 4, flows: 3 },
                CumulativeEvent { start: 1.11, losses: 2, flows: 2 },
                CumulativeEvent { start: 3.00, losses: 1, flows: 1 },
            ]
        );
        let per_flow = flow_loss_events(&times, &flows, |_| 0.1);
        assert_eq!(per_flow.into_iter().collect::<Vec<_>>(), vec![(0, 2), (1, 2), (2, 1)]);
        assert!(cumulative_events::<f64, i64>(&[], &[], 0.1).is_empty());
    }

    #[test]
    fn each_flow_has_its_own_rtt() {
        let times = [0, 10, 20, 30];
        let flows = [7, 7, 9, 9];
        let mut asked = Vec::new();
        let counts = flow_loss_events(&times, &flows, |f| {
            asked.push(f);
            if f == 7 {
                10
            } else {
                5
            }
        });
        assert_eq!(asked, vec![7, 9], "asked once per flow");
        assert_eq!(counts.into_iter().collect::<Vec<_>>(), vec![(7, 1), (9, 2)]);
    }

    /// The batch functions against a direct reading of the rule, on pseudo-random losses of
    /// three flows on a millisecond grid (so that many fall exactly one RTT after an event's
    /// start).
    #[test]
    fn batch_functions_agree_with_the_rule() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..200 {
            let n = (next() % 60) as usize;
            let mut t = 0u64;
            let (mut times, mut flows) = (Vec::new(), Vec::new());
            for _ in 0..n {
                t += next() % 4; // repeats included
                times.push(t);
                flows.push(next() % 3);
            }
            let rtt = next() % 6;
            let idx = event_index(&times, rtt);
            let (mut expect, mut start) = (Vec::new(), None::<u64>);
            for &at in &times {
                if start.is_none_or(|s| at > s + rtt) {
                    start = Some(at);
                    expect.push(expect.last().map_or(0, |&e| e + 1));
                } else {
                    expect.push(*expect.last().unwrap());
                }
            }
            assert_eq!(idx, expect);
            let cum = cumulative_events(&times, &flows, rtt);
            assert_eq!(cum.len() as u64, idx.last().map_or(0, |&e| e + 1));
            for (e, ev) in cum.iter().enumerate() {
                let members: Vec<usize> = (0..n).filter(|&i| idx[i] == e as u64).collect();
                assert_eq!(ev.start, times[members[0]]);
                assert_eq!(ev.losses, members.len() as u64);
                let mut fl: Vec<u64> = members.iter().map(|&i| flows[i]).collect();
                fl.sort_unstable();
                fl.dedup();
                assert_eq!(ev.flows, fl.len() as u64);
            }
            let per_flow = flow_loss_events(&times, &flows, |f| rtt + f);
            for (f, count) in per_flow {
                let own: Vec<u64> = (0..n).filter(|&i| flows[i] == f).map(|i| times[i]).collect();
                assert_eq!(count, event_index(&own, rtt + f).last().unwrap() + 1);
            }
            // Float seconds on the same grid give the same events (the grid is exact in binary).
            let secs: Vec<f64> = times.iter().map(|&t| t as f64 / 4.0).collect();
            assert_eq!(event_index(&secs, rtt as f64 / 4.0), idx);
        }
    }
}
