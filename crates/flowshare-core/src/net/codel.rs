//! CoDel, the controlled-delay AQM of RFC 8289, as FQ-CoDel (RFC 8290) runs it on each flow
//! queue: a packet's sojourn time is measured when it is dequeued; once every packet has
//! stayed above `target` for an `interval`, CoDel enters a dropping state and drops at the
//! head, the k-th drop of a dropping period `interval / sqrt(k)` after the previous one.

use crate::net::subqueue::{Queued, Removal, SubQueue};
use crate::units::Time;

/// CoDel's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodelParams {
    /// Acceptable standing queueing delay (RFC 8289 TARGET, 5 ms).
    pub target: Time,
    /// Window over which the delay must stay above target (INTERVAL, 100 ms).
    pub interval: Time,
}

/// The state of one CoDel queue (RFC 8289 §5's variables).
#[derive(Clone, Copy, Debug, Default)]
pub struct Codel {
    /// When the sojourn time will have been above target for an interval; `None` while below.
    first_above_time: Option<Time>,
    /// Time of the next drop while dropping.
    drop_next: Time,
    /// Drops of the current dropping period (kept between periods for the restart rule).
    pub count: u32,
    lastcount: u32,
    /// In the dropping state.
    pub dropping: bool,
}

/// `t + interval / sqrt(count)`, the control law.
pub fn control_law(t: Time, interval: Time, count: u32) -> Time {
    t + (interval as f64 / f64::from(count.max(1)).sqrt()) as Time
}

impl Codel {
    /// RFC 8289's `dodequeue`: pop the head and say whether it may be dropped.
    fn dodequeue(&mut self, now: Time, p: &CodelParams, q: &mut SubQueue, maxpacket: u32) -> (Option<Queued>, bool) {
        let Some(pkt) = q.pop_head(now) else {
            self.first_above_time = None;
            return (None, false);
        };
        let sojourn = now - pkt.at;
        if sojourn < p.target || q.bytes() <= u64::from(maxpacket) {
            self.first_above_time = None;
            return (Some(pkt), false);
        }
        match self.first_above_time {
            None => {
                self.first_above_time = Some(now + p.interval);
                (Some(pkt), false)
            }
            Some(t) => (Some(pkt), now >= t),
        }
    }

    /// RFC 8289's `dequeue`: the packet to send from `q` at `now`, if any; dropped packets
    /// are appended to `removed`. `maxpacket` is the largest packet size seen (MAXPACKET).
    pub fn dequeue(
        &mut self,
        now: Time,
        p: &CodelParams,
        q: &mut SubQueue,
        maxpacket: u32,
        removed: &mut Vec<(Queued, Removal)>,
    ) -> Option<Queued> {
        let (mut pkt, ok) = self.dodequeue(now, p, q, maxpacket);
        if self.dropping {
            if !ok {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                removed.push((pkt.expect("ok_to_drop implies a packet"), Removal::Codel));
                self.count += 1;
                let (next, ok) = self.dodequeue(now, p, q, maxpacket);
                pkt = next;
                if ok {
                    self.drop_next = control_law(self.drop_next, p.interval, self.count);
                } else {
                    self.dropping = false;
                }
            }
        } else if ok {
            removed.push((pkt.expect("ok_to_drop implies a packet"), Removal::Codel));
            pkt = self.dodequeue(now, p, q, maxpacket).0;
            self.dropping = true;
            // Restart near the previous drop rate if the last dropping period was recent.
            let delta = self.count.wrapping_sub(self.lastcount);
            self.count = 1;
            if delta > 1 && delta < u32::MAX / 2 && now.saturating_sub(self.drop_next) < 16 * p.interval {
                self.count = delta;
            }
            self.drop_next = control_law(now, p.interval, self.count);
            self.lastcount = self.count;
        }
        pkt
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::subqueue::SubAqm;
    use crate::packet::Meta;

    fn meta() -> Meta {
        Meta { flow: 0, group: 0, size: 1000, ecn: 0, flags: 0 }
    }

    const MS: Time = 1_000_000;

    #[test]
    fn drops_are_spaced_by_interval_over_sqrt_count() {
        // A queue that always holds a 50 ms standing queue of 1000-byte packets, served one
        // packet per ms: every sojourn is above target, so CoDel drops at the control law.
        let p = CodelParams { target: 5 * MS, interval: 100 * MS };
        let mut c = Codel::default();
        let mut q = SubQueue::new(None, SubAqm::None);
        let mut removed = Vec::new();
        let mut id = 0;
        let mut drop_times = Vec::new();
        let mut t = 0;
        while t < 2000 * MS {
            // Keep 50 packets that arrived 50 ms before now.
            while q.len() < 60 {
                q.push_back(Queued { id, at: t.saturating_sub(50 * MS), meta: meta() });
                id += 1;
            }
            let before = removed.len();
            c.dequeue(t, &p, &mut q, 1000, &mut removed);
            for _ in before..removed.len() {
                drop_times.push(t);
            }
            t += MS;
        }
        // The first packets arrived at 0, so the sojourn first reaches target at 5 ms; the
        // first drop comes one interval later.
        assert_eq!(drop_times[0], 105 * MS);
        // After the k-th drop of the period (count = k) the next comes interval/sqrt(k)
        // later (to the 1 ms service granularity).
        assert!(drop_times.len() > 40);
        for k in 1..40 {
            let gap = (drop_times[k] - drop_times[k - 1]) as f64;
            let law = 100.0 * MS as f64 / (k as f64).sqrt();
            assert!((gap - law).abs() <= MS as f64, "drop {k}: gap {gap} vs {law}");
        }
        assert!(c.dropping);
    }

    #[test]
    fn a_short_queue_is_never_dropped() {
        let p = CodelParams { target: 5 * MS, interval: 100 * MS };
        let mut c = Codel::default();
        let mut q = SubQueue::new(None, SubAqm::None);
        let mut removed = Vec::new();
        for t in 0..1000u64 {
            // One packet, 20 ms old: above target, but no more than MAXPACKET bytes are left.
            q.push_back(Queued { id: t as u32, at: (t * MS).saturating_sub(20 * MS), meta: meta() });
            assert!(c.dequeue(t * MS, &p, &mut q, 1000, &mut removed).is_some());
        }
        assert!(removed.is_empty());
    }
}
