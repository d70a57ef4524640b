//! MPAT (Singh, Pradhan and Francis, "MPAT: Aggregate TCP Congestion Management as a
//! Building Block for Internet QoS", IEEE ICNP 2004), as Kuo and Fu ("Probe-Aided MulTCP: An
//! Aggregate Congestion Control Mechanism", ACM SIGCOMM Computer Communication Review 38(1),
//! 2008) compare it: one connection holding one standard AIMD(1, 1/2) window loop per member.
//!
//! Each loop has its own cwnd, ssthresh, in-flight count and recovery; a member's segments go
//! through its own loop only, and new segments are admitted round robin over the open loops
//! of members with data left. A member joining at run time gets a new loop in slow start from
//! `new_loop_cwnd` (default 1) with the connection's initial ssthresh; its loop is removed
//! when the member completes. The connection's cwnd is the loops' sum.

use super::aggregate::{loop_sum_callbacks, Join, Roster, SegmentLog};
use super::host::{Delivered, GroupControl, LostSegment, MemberId, Members, Tag};
use super::loops::Loop;
use super::{AckSample, CcState, LossKind, LossSignal};
use crate::units::Time;
use serde::Serialize;

/// Most loops one MPAT connection may have over a run (one tag each).
pub const MAX_LOOPS: usize = 256;

/// MPAT's options (`tcp.cc = { algo = "mpat", n = 4 }`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MpatParams {
    /// Members at the start (long-lived flows of the aggregate).
    pub n: u32,
    /// Window a joining member's loop starts from, segments.
    pub new_loop_cwnd: f64,
}

/// A member's loop.
#[derive(Clone, Copy, Debug)]
pub struct MemberLoop {
    /// The member.
    pub member: u32,
    /// The tag its segments carry.
    pub tag: Tag,
    /// Its window loop.
    pub l: Loop,
}

/// An MPAT connection's controller (a group of one).
#[derive(Debug)]
pub struct Mpat {
    params: MpatParams,
    roster: Roster,
    log: SegmentLog,
    /// The loops, in order of joining.
    pub loops: Vec<MemberLoop>,
    /// The connection's initial ssthresh, which a joining loop starts with.
    initial_ssthresh: f64,
    /// Where the round robin resumes.
    turn: usize,
    next_tag: usize,
}

impl Mpat {
    /// MPAT for connection `flow` with `joins` members joining at run time (at most
    /// [`MAX_LOOPS`] − n, checked by the scenario).
    pub fn new(params: MpatParams, flow: u32, joins: &[Join]) -> Self {
        Mpat {
            params,
            roster: Roster::new(flow, params.n, joins),
            log: SegmentLog::default(),
            loops: Vec::new(),
            initial_ssthresh: f64::INFINITY,
            turn: 0,
            next_tag: 0,
        }
    }

    fn add_loop(&mut self, member: u32, cwnd: f64, ssthresh: f64) {
        let tag = self.next_tag as Tag;
        self.next_tag += 1;
        self.loops.push(MemberLoop { member, tag, l: Loop::new(cwnd, ssthresh) });
    }

    fn find(&self, tag: Tag) -> Option<usize> {
        self.loops.iter().position(|l| l.tag == tag)
    }

    /// The connection's window is the loops' sum.
    fn sync(&self, st: &mut CcState) {
        st.cwnd = self.loops.iter().map(|l| l.l.cwnd).sum::<f64>().max(1.0);
        st.ssthresh = self.loops.iter().map(|l| l.l.ssthresh).sum::<f64>().max(2.0);
    }

    fn admit_joins(&mut self, now: Time) {
        for member in self.roster.join_due(now) {
            if self.next_tag < MAX_LOOPS {
                self.add_loop(member, self.params.new_loop_cwnd, self.initial_ssthresh);
            }
        }
    }
}

impl GroupControl for Mpat {
    fn name(&self) -> &'static str {
        "mpat"
    }

    loop_sum_callbacks!();

    fn on_join(&mut self, m: MemberId, g: &mut Members<'_>, now: Time) {
        let st = *g.get(m);
        self.initial_ssthresh = st.ssthresh;
        for member in 0..self.params.n {
            self.add_loop(member, st.cwnd, st.ssthresh);
        }
        self.admit_joins(now);
        self.sync(g.get_mut(m));
    }

    fn admit(&mut self, _m: MemberId, _g: &mut Members<'_>, _now: Time) -> Option<Tag> {
        let n = self.loops.len();
        for step in 0..n {
            let k = (self.turn + step) % n;
            let ml = self.loops[k];
            if ml.l.open() && self.roster.has_data(ml.member) {
                self.turn = k + 1;
                self.roster.admitted(ml.member);
                self.log.push(ml.tag, ml.member, 0);
                self.loops[k].l.sent();
                return Some(ml.tag);
            }
        }
        None
    }

    fn on_delivered(&mut self, m: MemberId, d: &Delivered<'_>, g: &mut Members<'_>) {
        for &(seq, _) in d.segments {
            let Some(s) = self.log.deliver(seq) else { continue };
            if let Some(k) = self.find(s.tag) {
                self.loops[k].l.delivered(1.0, d.snd_una);
            }
            if self.roster.delivered(s.member, d.now) {
                if let Some(k) = self.find(s.tag) {
                    self.loops.remove(k);
                    if k < self.turn {
                        self.turn -= 1;
                    }
                }
            }
        }
        self.log.trim(d.snd_una);
        self.sync(g.get_mut(m));
    }

    fn on_lost_segment(&mut self, m: MemberId, lost: &LostSegment, g: &mut Members<'_>) {
        // A timeout's retransmissions were accounted for at the timeout (`on_loss`).
        if lost.kind != LossKind::Timeout {
            let next = self.log.next_seq();
            if let Some(k) = self.find(lost.tag) {
                self.loops[k].l.lost(lost.seq, 0.5, next);
            }
        }
        self.sync(g.get_mut(m));
    }

    fn on_ack(&mut self, _m: MemberId, _ack: &AckSample, _g: &mut Members<'_>) {
        // The loops grow per delivered segment (`on_delivered`).
    }

    /// Losses found by ACKs are reduced per loop as their segments are reported; a timeout
    /// collapses the loop owning the oldest outstanding segment.
    fn on_loss(&mut self, m: MemberId, loss: &LossSignal, g: &mut Members<'_>) -> f64 {
        if loss.kind == LossKind::Timeout {
            let una = g.get(m).snd_una;
            let next = self.log.next_seq();
            if let Some(k) = self.log.get(una).and_then(|s| self.find(s.tag)) {
                self.loops[k].l.collapse(0.5, next);
            }
        }
        self.sync(g.get_mut(m));
        g.get(m).ssthresh
    }

    fn metrics(&self, _m: MemberId, out: &mut dyn FnMut(&'static str, f64)) {
        out("loops", self.loops.len() as f64);
        let newest = self.loops.last().map_or(f64::NAN, |l| l.l.cwnd);
        out("newest_loop_cwnd", newest);
        out("members_n", f64::from(self.roster.n()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::host::CcHost;

    const S: Time = 1_000_000_000;

    fn metric(host: &CcHost, m: MemberId, name: &str) -> f64 {
        let mut v = f64::NAN;
        host.metrics(m, &mut |n, x| {
            if n == name {
                v = x;
            }
        });
        v
    }

    /// Admit what the loops allow, then deliver it all on one ACK; returns the tags admitted.
    fn round(host: &mut CcHost, m: MemberId, next: &mut u64, now: Time) -> Vec<Tag> {
        let mut segs = Vec::new();
        while let Some(tag) = host.admit(m, now) {
            segs.push((*next, tag));
            *next += 1;
        }
        let mut by_tag = vec![0u32; 8];
        for &(_, t) in &segs {
            by_tag[t as usize] += 1;
        }
        host.on_delivered(m, &Delivered { now, snd_una: *next, by_tag: &by_tag, segments: &segs });
        segs.iter().map(|s| s.1).collect()
    }

    /// A joining member's loop starts in slow start from `new_loop_cwnd` with the
    /// connection's initial ssthresh, carries only its member's segments, and is removed when
    /// the member completes.
    #[test]
    fn a_new_loop_starts_in_slow_start_with_the_initial_ssthresh() {
        let join = Join { at: S, bytes: 20 * 1460, segments: 20 };
        let mut host = CcHost::new();
        let ctl = Mpat::new(MpatParams { n: 2, new_loop_cwnd: 1.0 }, 3, &[join]);
        let m = host.join(CcState::new(2.0, 4.0, 1460), None, Some(Box::new(ctl)), 0);
        let mut next = 0;
        // Round robin over two loops of two segments.
        assert_eq!(round(&mut host, m, &mut next, 0), vec![0, 1, 0, 1]);
        let mut ev = Vec::new();
        host.timer_events(&mut ev);
        assert_eq!(ev.len(), 1);
        host.fire_timer(crate::engine::WakeTag::new(ev[0].1, ev[0].2), S);
        assert_eq!((metric(&host, m, "loops"), metric(&host, m, "newest_loop_cwnd")), (3.0, 1.0));
        // The new loop (tag 2): 1 segment, then 2, then 4 (slow start up to ssthresh 4), then
        // congestion avoidance: 4 segments add about 1/4 each.
        let mut windows = Vec::new();
        for _ in 0..4 {
            let tags = round(&mut host, m, &mut next, S);
            windows.push((tags.iter().filter(|&&t| t == 2).count(), metric(&host, m, "newest_loop_cwnd")));
        }
        assert_eq!(&windows[..2], &[(1, 2.0), (2, 4.0)]);
        assert_eq!(windows[2].0, 4);
        assert!(windows[2].1 > 4.9 && windows[2].1 < 5.0, "congestion avoidance above ssthresh 4: {:?}", windows[2]);
        // 1 + 2 + 4 + 4 = 11 of its 20 segments so far; the member completes later and its
        // loop goes.
        for _ in 0..3 {
            round(&mut host, m, &mut next, 2 * S);
        }
        assert_eq!(metric(&host, m, "loops"), 2.0);
        let mut records = Vec::new();
        host.take_member_records().into_iter().for_each(|r| records.push(r));
        assert_eq!(records.len(), 1);
        assert_eq!((records[0].flow, records[0].member, records[0].segments), (3, 2, 20));
        assert_eq!(records[0].completed, Some(2 * S));
    }
}
