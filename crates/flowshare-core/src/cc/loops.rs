//! One AIMD window loop of a multi-loop controller (PA-MulTCP's probe and adjusting loops,
//! MPAT's loop per member): its own window, threshold, in-flight count and recovery episode
//! inside a connection whose window is the loops' sum.

/// One window loop.
#[derive(Clone, Copy, Debug)]
pub struct Loop {
    /// Window, segments.
    pub cwnd: f64,
    /// Slow-start threshold, segments.
    pub ssthresh: f64,
    /// Segments sent under it and not yet delivered (lost ones included until delivered).
    pub in_flight: u64,
    /// A loss of a segment numbered below this belongs to the episode already reduced for.
    recover: u64,
    /// No growth until the cumulative ACK reaches this (the loop's fast recovery).
    hold: u64,
    /// Window reductions.
    pub reductions: u64,
}

impl Loop {
    /// A loop starting at `cwnd` below `ssthresh`.
    pub fn new(cwnd: f64, ssthresh: f64) -> Self {
        Loop { cwnd, ssthresh, in_flight: 0, recover: 0, hold: 0, reductions: 0 }
    }

    /// May it send a new segment? (in-flight < ⌊cwnd⌋, resolution pamultcp:A8)
    pub fn open(&self) -> bool {
        (self.in_flight as f64) < self.cwnd.floor().max(1.0)
    }

    /// One new segment sent under it.
    pub fn sent(&mut self) {
        self.in_flight += 1;
    }

    /// One of its segments delivered, the cumulative ACK being `snd_una`: AIMD growth, +1 in
    /// slow start and +a/cwnd above, except during its own fast recovery.
    pub fn delivered(&mut self, a: f64, snd_una: u64) {
        self.in_flight = self.in_flight.saturating_sub(1);
        if snd_una < self.hold {
            return;
        }
        if self.cwnd < self.ssthresh {
            self.cwnd += 1.0;
        } else {
            self.cwnd += a / self.cwnd;
        }
    }

    /// Its segment `seq` was found lost by the ACKs: the first loss of an episode sets
    /// ssthresh = max(2, (1 − b)·cwnd) and cwnd = ssthresh, and holds growth until the
    /// segments sent before it (below `next_seq`) are acknowledged. True if it reduced.
    pub fn lost(&mut self, seq: u64, b: f64, next_seq: u64) -> bool {
        if seq < self.recover {
            return false;
        }
        self.ssthresh = ((1.0 - b) * self.cwnd).max(2.0);
        self.cwnd = self.ssthresh;
        self.recover = next_seq;
        self.hold = next_seq;
        self.reductions += 1;
        true
    }

    /// A retransmission timeout: ssthresh = max(2, (1 − b)·cwnd), cwnd = 1 (resolution
    /// pamultcp:A16); slow start follows, and losses among the segments already sent are
    /// part of this episode.
    pub fn collapse(&mut self, b: f64, next_seq: u64) {
        self.ssthresh = ((1.0 - b) * self.cwnd).max(2.0);
        self.cwnd = 1.0;
        self.recover = next_seq;
        self.hold = 0;
        self.reductions += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loop_reduces_once_per_episode_and_holds_growth_through_its_recovery() {
        let mut l = Loop::new(20.0, 10.0);
        for _ in 0..20 {
            l.sent();
        }
        assert!(!l.open());
        // A loss at 5 with 30 segments sent: halve once; a second loss below 30 is the same episode.
        assert!(l.lost(5, 0.5, 30));
        assert_eq!((l.cwnd, l.ssthresh), (10.0, 10.0));
        assert!(!l.lost(12, 0.5, 31));
        assert_eq!(l.cwnd, 10.0);
        // Deliveries before the cumulative ACK passes 30 do not grow it; after, +1/cwnd each.
        l.delivered(1.0, 29);
        assert_eq!(l.cwnd, 10.0);
        l.delivered(1.0, 30);
        assert!((l.cwnd - 10.1).abs() < 1e-12);
        assert!(l.lost(30, 0.5, 40), "a loss at or above 30 starts a new episode");
        l.collapse(0.5, 50);
        assert_eq!(l.cwnd, 1.0);
        assert!((l.ssthresh - 2.525).abs() < 1e-9, "half of 5.05: {}", l.ssthresh);
    }
}
