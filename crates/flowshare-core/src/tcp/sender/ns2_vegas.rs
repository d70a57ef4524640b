//! ns-2.35's `Agent/TCP/Vegas` (`tcp/tcp-vegas.cc`, after USC's NetBSD Vegas port of Brakmo and
//! Peterson, "TCP Vegas: end to end congestion avoidance on a global Internet", IEEE JSAC
//! 13(8), 1995), selected with `cc = { algo = "vegas", variant = "ns2" }`.
//!
//! The agent replaces its TCP's ACK processing, so it lives here rather than in a controller:
//!
//! - Once per round (an ACK at or beyond the segment that was next to send when the round
//!   began): rtt is the mean of the round's fine-grained samples (or the round's length if
//!   there were none); baseRTT falls to it, or is set to it when at most one segment was sent
//!   in the round; diff = ⌊(expected − actual)·baseRTT + ½⌋ with expected the window
//!   outstanding over baseRTT and actual the round's segments over rtt. In slow start every
//!   other round grows by one segment per ACK, and diff > γ ends it: cwnd −= cwnd/8 (at
//!   least 2), ssthresh = 2. In congestion avoidance diff > β takes one segment off at once
//!   (at least 2), diff < α adds 1/cwnd per ACK. Growth waits while fewer than three segments'
//!   room is left unused (`cwnd − outstanding ≤ 2`).
//! - Fine-grained RTT samples come from the segment each new ACK acknowledges last, if it was
//!   sent once; they drive a timeout of their own, v_timeout = ((sa/4) + sd)/2·17/16.
//! - The third duplicate ACK, or any duplicate ACK once the oldest segment has been out for
//!   v_timeout, retransmits it; unless the window has already been cut since that segment was
//!   sent, the window becomes ¾ of itself (½ if the segment had been retransmitted, 2 if it was
//!   3 or less) and is inflated by the duplicate ACKs; further duplicate ACKs add one each. The
//!   first new ACK deflates it again (and sets ssthresh to 2). The first two new ACKs after the
//!   retransmission retransmit the next segment too if it has been out for v_timeout.
//! - A retransmission timeout halves ssthresh (from the window) and restarts from 2 segments.
//! - The agent starts with a window of one segment (`delay_growth_`): the first ACK leaves it
//!   there, the second sets it to the initial window (`last_ack_ == 0`), which that ACK's
//!   slow-start increase then raises by one: 1, 3, 6, 12, … every other round. ns-2's
//!   40-byte SYN stand-in (`syn_`) lives in `TcpAgent::output`, which this agent replaces, so
//!   its first segment is a full one.
//!
//! Differences from the source: ns-2's agent stores send times in a ring of `window_` slots,
//! sized at the first segment (flowshare keeps them per outstanding segment); a window deflated
//! to 0 (possible after a timeout, when ns-2 stalls until the next timeout) stays at 1 here, as
//! every flowshare window does. There is no limited transmit, as in ns-2.

use super::{Sender, DUP_THRESH};
use crate::cc::vegas::Ns2VegasParams;
use crate::cc::CcHost;
use crate::packet::Packet;
use crate::units::Time;
use std::collections::VecDeque;

/// Times in seconds from the first segment sent (ns-2's `vegastime()`).
type Secs = f64;

/// A slot never sent, or acknowledged (ns-2 writes −1 there).
const UNSENT: Secs = -1.0;

/// The agent's state (ns-2's `v_*` members).
#[derive(Debug)]
pub(super) struct Ns2VegasState {
    p: Ns2VegasParams,
    /// When the first segment left.
    first_sent: Option<Time>,
    /// Whether an ACK has arrived (ns-2's `firstrecv_ >= 0`).
    received: bool,
    /// (last send time, transmissions) of each segment from `una`.
    sent: VecDeque<(Secs, u32)>,
    una: u64,
    sa: Secs,
    sd: Secs,
    timeout: Secs,
    base_rtt: Secs,
    sum_rtt: Secs,
    cnt_rtt: u32,
    /// The round ends with the ACK of this segment (ns-2 numbering: the last one acknowledged).
    beg_seq: u64,
    beg_time: Secs,
    incr: f64,
    inc_flag: bool,
    worried: u64,
    newcwnd: f64,
    cwnd_changed: Secs,
    /// `snd_max` at the last duplicate-ACK retransmission or timeout.
    recover: u64,
    last_was_timeout: bool,
    /// The window is still the one segment it starts with (`delay_growth_`).
    delay_growth: bool,
}

impl Ns2VegasState {
    pub(super) fn new(p: Ns2VegasParams) -> Self {
        Ns2VegasState {
            p,
            first_sent: None,
            received: false,
            sent: VecDeque::new(),
            una: 0,
            sa: 0.0,
            sd: 0.0,
            timeout: 1000.0,
            base_rtt: 1e9,
            sum_rtt: 0.0,
            cnt_rtt: 0,
            beg_seq: 0,
            beg_time: 0.0,
            incr: 0.0,
            inc_flag: true,
            worried: 0,
            newcwnd: 0.0,
            cwnd_changed: 0.0,
            recover: 0,
            last_was_timeout: false,
            delay_growth: true,
        }
    }

    fn t(&self, now: Time) -> Secs {
        self.first_sent.map_or(0.0, |f| (now - f) as f64 / 1e9)
    }

    fn slot(&self, seq: u64) -> (Secs, u32) {
        seq.checked_sub(self.una).and_then(|k| self.sent.get(k as usize).copied()).unwrap_or((UNSENT, 0))
    }

    /// Segment `seq` left at `now` (ns-2's `output`).
    pub(super) fn on_send(&mut self, now: Time, seq: u64) {
        let first = *self.first_sent.get_or_insert(now);
        let k = (seq - self.una) as usize;
        if self.sent.len() <= k {
            self.sent.resize(k + 1, (UNSENT, 0));
        }
        let slot = &mut self.sent[k];
        slot.0 = (now - first) as f64 / 1e9;
        slot.1 += 1;
    }

    /// Whether segment `seq` has been out for the fine-grained timeout (ns-2's
    /// `vegas_expire`; a segment not yet sent counts as sent at −1 s).
    fn expired(&self, now: Time, seq: u64) -> bool {
        self.t(now) - self.slot(seq).0 >= self.timeout
    }

    /// Baseline of the fine-grained estimator at the first ACK.
    fn first_ack(&mut self, now: Time) {
        if !self.received {
            self.received = true;
            let rtt = self.t(now);
            self.base_rtt = rtt;
            self.sa = rtt * 8.0;
            self.sd = rtt;
            self.timeout = (self.sa / 4.0 + self.sd) / 2.0;
        }
    }
}

impl Sender {
    fn vegas(&mut self) -> &mut Ns2VegasState {
        self.vegas.as_deref_mut().expect("ns-2 Vegas state")
    }

    /// A new ACK for `ack` is about to be processed: the first ACK seeds the fine-grained
    /// estimator, and an inflated window deflates (before the duplicate-ACK count is reset).
    /// Returns (send time, transmissions) of the last segment it acknowledges.
    pub(super) fn vegas_before_new_ack(&mut self, now: Time, ack: u64, cc: &mut CcHost) -> (f64, u32) {
        let m = self.m();
        let dupacks = self.dupacks;
        let (initial_window, una) = (self.cfg.initial_window, self.snd_una);
        let v = self.vegas();
        v.first_ack(now);
        let st = cc.state_mut(m);
        // `if (last_ack_ == 0 && delay_growth_) cwnd_ = initial_window()`: ns-2's last_ack_
        // is the last segment acknowledged, so this is the ACK that follows the first one.
        if v.delay_growth && una >= 1 {
            v.delay_growth = false;
            if una == 1 {
                st.cwnd = initial_window;
            }
        }
        if dupacks > DUP_THRESH && st.cwnd > v.newcwnd {
            st.cwnd = v.newcwnd.max(1.0);
            st.ssthresh = 2.0;
        }
        let last = v.slot(ack - 1);
        let n = ack - v.una;
        for _ in 0..n.min(v.sent.len() as u64) {
            v.sent.pop_front();
        }
        v.una = ack;
        last
    }

    /// After the common new-ACK processing (snd_una = `ack`): the per-round rule, the
    /// per-ACK increase, the fine-grained sample from `last` and the check of the next segment
    /// after a duplicate-ACK retransmission.
    pub(super) fn vegas_after_new_ack(
        &mut self,
        now: Time,
        ack: u64,
        last: (f64, u32),
        cc: &mut CcHost,
        out: &mut Vec<Packet>,
    ) {
        let m = self.m();
        let (snd_nxt, una) = (self.snd_nxt, self.snd_una);
        let v = self.vegas.as_deref_mut().expect("ns-2 Vegas state");
        let now_s = v.t(now);
        let st = cc.state_mut(m);
        // ns-2 numbers an ACK by the last segment it acknowledges; t_seqno_ is snd_nxt.
        let ackno = ack - 1;
        let outstanding = (snd_nxt - una + 1) as f64; // t_seqno_ − last_ack_
        if ackno >= v.beg_seq {
            let rtt = if v.cnt_rtt > 0 { v.sum_rtt / f64::from(v.cnt_rtt) } else { now_s - v.beg_time };
            v.sum_rtt = 0.0;
            v.cnt_rtt = 0;
            let rtt_len = snd_nxt.saturating_sub(v.beg_seq) as f64;
            if rtt > 0.0 {
                if rtt < v.base_rtt || rtt_len <= 1.0 {
                    v.base_rtt = rtt;
                }
                let actual = rtt_len / rtt;
                let expect = outstanding / v.base_rtt;
                // C's int(): truncation toward zero.
                let delta = ((expect - actual) * v.base_rtt + 0.5).trunc();
                if st.cwnd < st.ssthresh {
                    v.inc_flag = !v.inc_flag;
                    if !v.inc_flag {
                        v.incr = 0.0;
                    } else if delta > v.p.gamma {
                        st.ssthresh = 2.0;
                        st.cwnd = (st.cwnd - st.cwnd / 8.0).max(2.0);
                        v.incr = 0.0;
                    } else {
                        v.incr = 1.0;
                    }
                } else if delta > v.p.beta {
                    st.cwnd = (st.cwnd - 1.0).max(2.0);
                    v.incr = 0.0;
                } else if delta < v.p.alpha {
                    v.incr = 1.0 / st.cwnd;
                } else {
                    v.incr = 0.0;
                }
            }
            v.beg_seq = snd_nxt;
            v.beg_time = now_s;
        }
        if v.incr == 1.0 && st.cwnd >= st.ssthresh {
            v.incr = 0.0;
        }
        if v.incr > 0.0 && st.cwnd - outstanding <= 2.0 {
            st.cwnd += v.incr;
        }
        let (send_time, transmits) = last;
        if send_time != 0.0 && transmits == 1 {
            let rtt = now_s - send_time;
            v.sum_rtt += rtt;
            v.cnt_rtt += 1;
            if rtt > 0.0 {
                v.base_rtt = v.base_rtt.min(rtt);
                let mut n = rtt - v.sa / 8.0;
                v.sa += n;
                n = n.abs() - v.sd / 4.0;
                v.sd += n;
                v.timeout = (v.sa / 4.0 + v.sd) / 2.0;
                v.timeout += v.timeout / 16.0;
            }
        }
        if v.worried > 0 {
            v.worried -= 1;
            if v.expired(now, una) {
                self.dupacks = DUP_THRESH;
                self.emit(now, una, 0, cc, out);
            } else {
                self.vegas().worried = 0;
            }
        }
    }

    /// A duplicate ACK (ns-2's `recv` with `seqno == last_ack_`).
    pub(super) fn vegas_dup_ack(&mut self, now: Time, cc: &mut CcHost, out: &mut Vec<Packet>) {
        let m = self.m();
        self.dupacks += 1;
        let (una, snd_nxt, snd_max, rwnd) = (self.snd_una, self.snd_nxt, self.snd_max, self.cfg.rwnd);
        let dupacks = self.dupacks;
        let v = self.vegas();
        v.first_ack(now);
        let expired = v.expired(now, una);
        if expired || dupacks == DUP_THRESH {
            let (send_time, transmits) = v.slot(una);
            // ns-2's bug_fix_: no second retransmission for the window a timeout resent.
            if una > v.recover || !v.last_was_timeout {
                v.last_was_timeout = false;
                v.recover = snd_max;
                v.worried = (snd_nxt - una + 1).min(2);
                if transmits > 1 {
                    v.timeout *= 2.0;
                } else {
                    v.timeout += v.timeout / 8.0;
                }
                if v.cwnd_changed < send_time {
                    let st = cc.state_mut(m);
                    let mut win = (st.cwnd as u64).min(rwnd);
                    win = if win <= 3 {
                        2
                    } else if transmits > 1 {
                        win >> 1
                    } else {
                        win - (win >> 2)
                    };
                    v.newcwnd = win as f64;
                    st.cwnd = v.newcwnd + f64::from(dupacks);
                    v.cwnd_changed = v.t(now);
                }
                // ns-2's reset_rtx_timer(1): back the timer off and restart it.
                self.backoff = (self.backoff * 2).min(self.cfg.max_backoff);
                self.stats.backoff_max = self.stats.backoff_max.max(self.backoff);
                self.abandon_timing(cc);
                self.arm_timer(now, cc);
                self.stats.fast_retransmits += 1;
                self.stats.loss_events += 1;
                self.emit(now, una, 0, cc, out);
                if transmits == 1 {
                    self.dupacks = DUP_THRESH;
                }
            }
        } else if dupacks > DUP_THRESH {
            cc.state_mut(m).cwnd += 1.0;
        }
        if self.dupacks == 0 || self.dupacks >= DUP_THRESH {
            self.send_available(now, cc, out);
        }
    }

    /// A retransmission timeout (after the common handling has halved ssthresh and gone back
    /// to `snd_una`): restart from 2 segments.
    pub(super) fn vegas_timeout(&mut self, now: Time, cc: &mut CcHost) {
        let m = self.m();
        let snd_max = self.snd_max;
        let v = self.vegas();
        v.recover = snd_max;
        v.last_was_timeout = true;
        v.newcwnd = 0.0;
        v.cwnd_changed = v.t(now);
        cc.state_mut(m).cwnd = 2.0;
    }
}
