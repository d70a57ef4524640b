//! A peer's timestamps on this endpoint's clock.
//!
//! Each endpoint's clock starts at 0 when the endpoint starts, so a timestamp written by the
//! peer is on another clock. Echoing it back is harmless (the peer subtracts it from its own
//! clock), but a TFRC receiver also compares a data packet's send time with a time of its own
//! (whether the sender had the first loss report when it sent the packet, for MulTFRC's first
//! loss event). The receiver therefore sees the peer's timestamps shifted by the offset between
//! the two clocks measured at the first packet (its one-way delay included, so a packet reads
//! as sent when it would have arrived), and every echo is shifted back, so the peer gets
//! exactly the timestamps it wrote.

use flowshare_core::units::{Time, MAX_TIME};

/// The offset from the peer's clock to this one, once the first timestamp has arrived.
#[derive(Clone, Copy, Debug, Default)]
pub struct PeerClock {
    offset: Option<i128>,
}

fn clamp(t: i128) -> Time {
    t.clamp(0, i128::from(MAX_TIME)) as Time
}

impl PeerClock {
    /// Peer timestamp `ts`, arriving at `now`, on this clock.
    pub fn inbound(&mut self, ts: Time, now: Time) -> Time {
        let off = *self.offset.get_or_insert(i128::from(now) - i128::from(ts));
        clamp(i128::from(ts) + off)
    }

    /// Peer time `ts` on this clock, once the offset is known (without setting it).
    pub fn to_local(&self, ts: Time) -> Option<Time> {
        self.offset.map(|off| clamp(i128::from(ts) + off))
    }

    /// A time on this clock that came from [`PeerClock::inbound`], on the peer's clock again.
    pub fn outbound(&self, t: Time) -> Time {
        self.offset.map_or(t, |off| clamp(i128::from(t) - off))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoes_go_back_exactly_whichever_clock_started_first() {
        for (ts, now) in [(1_000, 50_000), (50_000, 1_000)] {
            let mut c = PeerClock::default();
            let local = c.inbound(ts, now);
            assert_eq!(local, now);
            assert_eq!(c.outbound(local + 700), ts + 700, "held 700 ns");
            assert_eq!(c.inbound(ts + 10, now + 99), now + 10, "the offset is the first packet's");
        }
        assert_eq!(PeerClock::default().outbound(5), 5);
        assert_eq!(PeerClock::default().to_local(5), None);
        let mut c = PeerClock::default();
        c.inbound(1_000, 50_000);
        assert_eq!(c.to_local(0), Some(49_000));
    }
}
