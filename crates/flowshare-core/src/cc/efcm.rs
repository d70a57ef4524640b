//! EFCM, ensemble flow congestion management: a sender-side common congestion controller for
//! the TCP connections of one host to one receiver or receiver network (M. Savorić and H. Karl,
//! "Performance Evaluation of an Improved Common Congestion Controller for WWW-based TCP
//! Connections", Technical Report TKN-04-007, Telecommunication Networks Group, Technische
//! Universität Berlin, 2004).
//!
//! An ensemble of n connections stays exactly as aggressive as n NewReno connections: every
//! member runs standard TCP, and whenever standard TCP changes one member's cwnd or ssthresh the
//! sum over the members is kept (incrementally) and every member gets sum / n; whenever it takes
//! an RTT sample the ensemble's SRTT and RTTVAR move by an EWMA with weight 1/n and every member
//! gets them, so all share one timeout. A joiner adds its initial window and ssthresh to the
//! sums and inherits the ensemble's SRTT and RTTVAR. A leaver's share stays in the aggregate
//! (`leave = "keep"`, the report's wording) or goes with it (`"drop"`). Members' segments are
//! paced, at most two per burst every α·SRTT_agg/CWND_agg, and an ACK on any member lets every
//! member send into its share (ensemble ACK clocking).
//!
//! Recovery: a member entering fast recovery contributes its new ssthresh (NewReno's
//! cwnd = ssthresh) to the aggregate window; what its recovery variant adds above that
//! (NewReno's inflation by duplicate ACKs, deflation by partial ACKs) stays its own and is
//! dropped when it leaves recovery, where it holds its share. The windows the sender sets on
//! entering recovery, on a timeout (a repeated one too) or on an ECN echo are changes by standard
//! TCP and re-shared.

use super::host::{Caps, GroupControl, MemberId, Members, Pacing};
use super::{AckSample, Aimd, CongestionControl, LossSignal, Phase};
use crate::units::Time;
use serde::{Deserialize, Serialize};

/// How the pacing factor α is chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlphaMode {
    /// α = `alpha_fixed` (2 in the report's evaluated controller).
    #[default]
    Fixed,
    /// Extension after the report's Appendix C: α = 1 below an SRTT_agg of 60 ms, else 2.
    Step,
    /// Extension after the report's Appendix C: α rises linearly from 1 at 60 ms to 2 at
    /// 100 ms of SRTT_agg.
    Linear,
}

impl AlphaMode {
    /// Its name in a scenario.
    pub fn as_str(self) -> &'static str {
        match self {
            AlphaMode::Fixed => "fixed",
            AlphaMode::Step => "step",
            AlphaMode::Linear => "linear",
        }
    }
}

/// What happens to a leaving member's share of the aggregate cwnd and ssthresh.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeaveRule {
    /// The aggregate is kept and shared among the remaining members (the report's §2.4.2).
    #[default]
    Keep,
    /// The leaver's share is removed from the aggregate.
    Drop,
}

/// EFCM's options.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EfcmParams {
    /// How α is chosen.
    pub alpha: AlphaMode,
    /// α with [`AlphaMode::Fixed`].
    pub alpha_fixed: f64,
    /// The leave rule.
    pub leave: LeaveRule,
    /// Pace members' segments (≤ 2 per burst, α·SRTT_agg/CWND_agg apart).
    pub pacing: bool,
    /// An ACK on one member clocks every member.
    pub ack_clocking: bool,
}

impl Default for EfcmParams {
    fn default() -> Self {
        EfcmParams {
            alpha: AlphaMode::Fixed,
            alpha_fixed: 2.0,
            leave: LeaveRule::Keep,
            pacing: true,
            ack_clocking: true,
        }
    }
}

/// SRTT_agg below which [`AlphaMode::Step`] and [`AlphaMode::Linear`] use α = 1, ns (the
/// report's Appendix C: small α below 60 ms of minimum RTT).
const ALPHA_LOW_SRTT: f64 = 60e6;
/// SRTT_agg from which [`AlphaMode::Linear`] uses α = 2, ns.
const ALPHA_HIGH_SRTT: f64 = 100e6;
/// Segments per burst (the report's §2.4.3).
const BURST: u32 = 2;

impl EfcmParams {
    /// α at an ensemble SRTT of `srtt` ns.
    pub fn alpha_at(&self, srtt: f64) -> f64 {
        match self.alpha {
            AlphaMode::Fixed => self.alpha_fixed,
            AlphaMode::Step => {
                if srtt < ALPHA_LOW_SRTT {
                    1.0
                } else {
                    2.0
                }
            }
            AlphaMode::Linear => (1.0 + (srtt - ALPHA_LOW_SRTT) / (ALPHA_HIGH_SRTT - ALPHA_LOW_SRTT)).clamp(1.0, 2.0),
        }
    }
}

/// What the controller last gave or saw of one member.
#[derive(Clone, Copy, Debug)]
struct Record {
    id: MemberId,
    /// Its share of the aggregate window (in recovery, without the variant's own inflation).
    base: f64,
    ssthresh: f64,
    /// RTT samples its estimator had taken.
    samples: u64,
}

/// One ensemble's controller (see the module documentation).
#[derive(Debug)]
pub struct Efcm {
    p: EfcmParams,
    /// Members in joining order.
    recs: Vec<Record>,
    /// CWND_agg and the sum of ssthresh, segments.
    cwnd_sum: f64,
    ssthresh_sum: f64,
    /// SRTT_agg and RTTVAR_agg, ns; `None` until a member has an RTT sample.
    rtt: Option<(f64, f64)>,
    /// Members whose window the sender changed since the controller last looked.
    pending: Vec<MemberId>,
}

impl Efcm {
    /// An empty ensemble.
    pub fn new(p: EfcmParams) -> Self {
        Efcm { p, recs: Vec::new(), cwnd_sum: 0.0, ssthresh_sum: 0.0, rtt: None, pending: Vec::new() }
    }

    /// CWND_agg, segments.
    pub fn cwnd_agg(&self) -> f64 {
        self.cwnd_sum
    }

    /// The sum of the members' ssthresh, segments.
    pub fn ssthresh_agg(&self) -> f64 {
        self.ssthresh_sum
    }

    /// SRTT_agg and RTTVAR_agg, ns.
    pub fn rtt_agg(&self) -> Option<(f64, f64)> {
        self.rtt
    }

    /// Members.
    pub fn len(&self) -> usize {
        self.recs.len()
    }

    /// True when the ensemble is dissolved.
    pub fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }

    fn pos(&self, m: MemberId) -> usize {
        self.recs.iter().position(|r| r.id == m).expect("a member of this ensemble")
    }

    /// Take member `k`'s window and ssthresh as standard TCP set them into the sums.
    fn observe(&mut self, k: usize, g: &Members<'_>) {
        let st = g.get(self.recs[k].id);
        let base = if st.phase == Phase::Recovery { st.ssthresh } else { st.cwnd };
        let r = &mut self.recs[k];
        self.cwnd_sum += base - r.base;
        self.ssthresh_sum += st.ssthresh - r.ssthresh;
        r.base = base;
        r.ssthresh = st.ssthresh;
    }

    /// Give every member sum / n, keeping a recovering member's own inflation.
    fn share(&mut self, g: &mut Members<'_>) {
        let n = self.recs.len() as f64;
        let (cwnd, ssthresh) = (self.cwnd_sum / n, self.ssthresh_sum / n);
        for r in &mut self.recs {
            let st = g.get_mut(r.id);
            let own = if st.phase == Phase::Recovery { st.cwnd - r.base } else { 0.0 };
            st.cwnd = (cwnd + own).max(1.0);
            st.ssthresh = ssthresh;
            r.base = cwnd;
            r.ssthresh = ssthresh;
        }
    }

    /// Re-share after changes the sender made to pending members' windows.
    fn settle(&mut self, g: &mut Members<'_>) {
        if self.pending.is_empty() {
            return;
        }
        let mut changed = false;
        while let Some(m) = self.pending.pop() {
            if let Some(k) = self.recs.iter().position(|r| r.id == m) {
                self.observe(k, g);
                changed = true;
            }
        }
        if changed {
            self.share(g);
        }
    }

    fn mark(&mut self, m: MemberId) {
        if !self.pending.contains(&m) {
            self.pending.push(m);
        }
    }

    /// Give every member the ensemble's SRTT and RTTVAR.
    fn share_rtt(&mut self, g: &mut Members<'_>) {
        let Some((srtt, rttvar)) = self.rtt else { return };
        for r in &mut self.recs {
            let st = g.get_mut(r.id);
            st.rtt.set(srtt, rttvar);
            r.samples = st.rtt.samples;
        }
    }

    /// Ask every member after the one at `k` (round robin) to send.
    fn clock_after(&self, k: usize, g: &mut Members<'_>) {
        let n = self.recs.len();
        for i in 1..n {
            g.clock(self.recs[(k + i) % n].id);
        }
    }
}

impl GroupControl for Efcm {
    fn name(&self) -> &'static str {
        "efcm"
    }

    fn caps(&self) -> Caps {
        Caps { pacing: self.p.pacing, ..Caps::default() }
    }

    fn on_join(&mut self, m: MemberId, g: &mut Members<'_>, _now: Time) {
        self.settle(g);
        let st = g.get(m);
        let rec = Record { id: m, base: st.cwnd, ssthresh: st.ssthresh, samples: st.rtt.samples };
        if self.recs.is_empty() {
            // A lone member starts as standard TCP, with no RTT information.
            self.cwnd_sum = st.cwnd;
            self.ssthresh_sum = st.ssthresh;
            self.rtt = None;
            self.recs.push(rec);
            return;
        }
        self.cwnd_sum += st.cwnd;
        self.ssthresh_sum += st.ssthresh;
        self.recs.push(rec);
        self.share(g);
        if let Some((srtt, rttvar)) = self.rtt {
            let st = g.get_mut(m);
            st.rtt.set(srtt, rttvar);
            let k = self.recs.len() - 1;
            self.recs[k].samples = st.rtt.samples;
        }
        if self.p.ack_clocking {
            self.clock_after(self.recs.len() - 1, g);
        }
    }

    fn on_leave(&mut self, m: MemberId, g: &mut Members<'_>, _now: Time) {
        self.settle(g);
        let k = self.pos(m);
        let r = self.recs.remove(k);
        if self.recs.is_empty() {
            // The ensemble dissolves; nothing is kept for later connections.
            self.cwnd_sum = 0.0;
            self.ssthresh_sum = 0.0;
            self.rtt = None;
            return;
        }
        if self.p.leave == LeaveRule::Drop {
            self.cwnd_sum -= r.base;
            self.ssthresh_sum -= r.ssthresh;
        }
        self.share(g);
        if self.p.ack_clocking {
            // Every member left may send into its new share, from the one after the leaver.
            let n = self.recs.len();
            for i in 0..n {
                g.clock(self.recs[(k + i) % n].id);
            }
        }
    }

    fn on_ack(&mut self, m: MemberId, ack: &AckSample, g: &mut Members<'_>) {
        self.settle(g);
        let k = self.pos(m);
        if !ack.in_recovery {
            // Standard growth of this member, then the new sum shared (+1/n each in slow
            // start).
            Aimd::reno().on_ack(g.get_mut(m), ack);
            self.observe(k, g);
            self.share(g);
        }
        let est = g.get(m).rtt;
        if est.samples != self.recs[k].samples {
            // The member's estimator took a sample (standard TCP updated its SRTT and RTTVAR):
            // the ensemble's values move by 1/n of the way to the member's.
            let (srtt, rttvar) = match self.rtt {
                None => (est.srtt, est.rttvar),
                Some((s, v)) => {
                    let w = 1.0 / self.recs.len() as f64;
                    ((1.0 - w) * s + w * est.srtt, (1.0 - w) * v + w * est.rttvar)
                }
            };
            self.rtt = Some((srtt, rttvar));
            self.share_rtt(g);
        }
        if self.p.ack_clocking {
            self.clock_after(k, g);
        }
    }

    fn on_loss(&mut self, m: MemberId, loss: &LossSignal, g: &mut Members<'_>) -> f64 {
        self.settle(g);
        // The sender sets this member's window next; the new sums are shared at the next hook.
        self.mark(m);
        Aimd::reno().ssthresh_after(g.get(m), loss)
    }

    fn on_phase(&mut self, m: MemberId, from: Phase, to: Phase, g: &mut Members<'_>) {
        if from == Phase::Recovery && to == Phase::Open {
            // Leaving recovery drops the member's own inflation, whatever window the variant
            // deflates to: it holds its share, as ns-2's NewReno clears `dupwnd_` and keeps
            // `cwnd_` (the share EFCM gave it).
            self.settle(g);
            let k = self.pos(m);
            g.get_mut(m).cwnd = self.recs[k].base.max(1.0);
            return;
        }
        self.mark(m);
        self.settle(g);
    }

    fn on_repeated_timeout(&mut self, m: MemberId, g: &mut Members<'_>) {
        // Standard TCP set this member's window and ssthresh again: re-share now, as for any
        // such change.
        self.mark(m);
        self.settle(g);
    }

    fn undo(&mut self, m: MemberId, _g: &mut Members<'_>) {
        // The sender restores ssthresh after this call.
        self.mark(m);
    }

    fn pacing(&self, _m: MemberId, _g: &Members<'_>) -> Option<Pacing> {
        let (srtt, _) = self.rtt?;
        if srtt <= 0.0 || self.cwnd_sum <= 0.0 {
            return None;
        }
        let gap = (self.p.alpha_at(srtt) * srtt / self.cwnd_sum).round().max(1.0) as Time;
        Some(Pacing { gap, burst: BURST })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::{ack, loss};
    use crate::cc::{CcHost, CcState, LossKind};

    const MS: f64 = 1e6;

    /// The study's TCP settings: initial window 3, initial ssthresh 44 (65535 B / 1460 B).
    fn study() -> CcState {
        CcState::new(3.0, 44.0, 1460)
    }

    fn efcm(p: EfcmParams) -> (CcHost, u32) {
        let mut host = CcHost::new();
        let gid = host.add_group(Box::new(Efcm::new(p)));
        (host, gid)
    }

    fn windows(host: &CcHost, ms: &[MemberId]) -> Vec<(f64, f64)> {
        ms.iter().map(|&m| (host.state(m).cwnd, host.state(m).ssthresh)).collect()
    }

    fn with(cwnd: f64, ssthresh: f64) -> CcState {
        CcState::new(cwnd, ssthresh, 1460)
    }

    #[test]
    fn a_lone_member_starts_with_its_own_tcp_settings() {
        let (mut host, gid) = efcm(EfcmParams::default());
        let a = host.join(study(), Some(gid), None, 0);
        assert_eq!(windows(&host, &[a]), [(3.0, 44.0)]);
        assert_eq!(host.state(a).rtt.samples, 0, "no RTT information to inherit");
    }

    /// §2.4.1: a third member joining two with cwnd 10/10 and ssthresh 44/44 makes everyone's
    /// cwnd (10 + 10 + 3)/3 = 23/3 and ssthresh (44 + 44 + 44)/3 = 44; the joiner inherits
    /// SRTT_agg and RTTVAR_agg.
    #[test]
    fn a_joiner_triggers_resharing_and_inherits_the_rtt() {
        let (mut host, gid) = efcm(EfcmParams::default());
        let a = host.join(with(10.0, 44.0), Some(gid), None, 0);
        let b = host.join(with(10.0, 44.0), Some(gid), None, 0);
        assert_eq!(windows(&host, &[a, b]), [(10.0, 44.0); 2]);
        // An RTT sample of 100 ms on a: SRTT 100 ms, RTTVAR 50 ms become the ensemble's.
        host.state_mut(a).rtt.sample(100_000_000);
        host.on_ack(a, &AckSample { rtt: Some(100_000_000), in_recovery: true, ..ack() });
        let c = host.join(study(), Some(gid), None, 0);
        for (w, s) in windows(&host, &[a, b, c]) {
            assert!((w - 23.0 / 3.0).abs() < 1e-12 && (s - 44.0).abs() < 1e-12, "{w} {s}");
        }
        let est = host.state(c).rtt;
        assert_eq!((est.srtt, est.rttvar), (100.0 * MS, 50.0 * MS));
    }

    /// §2.4.2: n = 2 with cwnd 20/20; one member's loss halves its window to 10, so both
    /// hold 15: the aggregate shrinks by 1/(2n) = 1/4, not 1/2.
    #[test]
    fn a_loss_on_one_member_reduces_every_member_fairly() {
        let (mut host, gid) = efcm(EfcmParams::default());
        let a = host.join(with(20.0, 44.0), Some(gid), None, 0);
        let b = host.join(with(20.0, 44.0), Some(gid), None, 0);
        // The sender's NewReno fast retransmit: ssthresh from the controller, cwnd = ssthresh
        // + 3 (inflation), then recovery.
        let ss = host.on_loss(a, &loss(20));
        assert_eq!(ss, 10.0);
        host.state_mut(a).ssthresh = ss;
        host.state_mut(a).cwnd = ss + 3.0;
        host.set_phase(a, Phase::Recovery);
        // Shares: cwnd (10 + 20)/2 = 15, ssthresh (10 + 44)/2 = 27; a keeps its 3 of inflation.
        assert_eq!(windows(&host, &[a, b]), [(18.0, 27.0), (15.0, 27.0)]);
        // Inflation by a duplicate ACK stays a's own; b's ACK in slow start (15 < 27) adds one
        // segment to the aggregate, 1/2 to each share.
        host.state_mut(a).cwnd += 1.0;
        host.on_ack(b, &ack());
        assert_eq!(windows(&host, &[a, b]), [(19.5, 27.0), (15.5, 27.0)]);
        // NewReno's exit deflates a (to its cut, 10): a drops its inflation and holds its
        // share, so the aggregate stays 31 = 3/4 of 40 plus b's segment.
        host.state_mut(a).cwnd = 10.0;
        host.set_phase(a, Phase::Open);
        assert_eq!(windows(&host, &[a, b]), [(15.5, 27.0), (15.5, 27.0)]);
    }

    /// A timeout sets one member's window to 1: with 20/20 and ssthresh 44/44, ssthresh
    /// max(20/2, 2) = 10 and cwnd 1 on a give both (1 + 20)/2 = 10.5 and (10 + 44)/2 = 27. The
    /// backed-off retransmission times out too, in the Loss phase: ssthresh max(⌈10.5⌉/2, 2) =
    /// 5.5 and cwnd 1 on a are re-shared at once, (1 + 10.5)/2 = 5.75 and (5.5 + 27)/2 = 16.25,
    /// with no other hook in between.
    #[test]
    fn a_repeated_timeout_is_shared_at_once() {
        let (mut host, gid) = efcm(EfcmParams::default());
        let a = host.join(with(20.0, 44.0), Some(gid), None, 0);
        let b = host.join(with(20.0, 44.0), Some(gid), None, 0);
        // What the sender does on a timeout (`Sender::on_timer`).
        let timeout = |host: &mut CcHost, flight_size: u64| {
            let again = host.state(a).phase == Phase::Loss;
            let ss = host.on_loss(a, &LossSignal { kind: LossKind::Timeout, now: 0, flight_size });
            host.state_mut(a).ssthresh = ss;
            host.state_mut(a).cwnd = 1.0;
            if again {
                host.on_repeated_timeout(a);
            } else {
                host.set_phase(a, Phase::Loss);
            }
        };
        timeout(&mut host, 20);
        assert_eq!(windows(&host, &[a, b]), [(10.5, 27.0); 2]);
        timeout(&mut host, 11);
        assert_eq!(windows(&host, &[a, b]), [(5.75, 16.25); 2]);
        // A third one: ssthresh max(6/2, 2) = 3, so (1 + 5.75)/2 = 3.375 and (3 + 16.25)/2.
        timeout(&mut host, 6);
        assert_eq!(windows(&host, &[a, b]), [(3.375, 9.625); 2]);
    }

    /// Growth: an ACK in slow start adds one segment to the aggregate (1/n per share), in
    /// congestion avoidance 1/cwnd_i.
    #[test]
    fn ack_growth_is_shared() {
        let (mut host, gid) = efcm(EfcmParams::default());
        let a = host.join(with(4.0, 44.0), Some(gid), None, 0);
        let b = host.join(with(4.0, 44.0), Some(gid), None, 0);
        host.on_ack(a, &ack());
        assert_eq!(windows(&host, &[a, b]), [(4.5, 44.0); 2]);
        let (mut host, gid) = efcm(EfcmParams::default());
        let a = host.join(with(20.0, 10.0), Some(gid), None, 0);
        let b = host.join(with(20.0, 10.0), Some(gid), None, 0);
        host.on_ack(b, &ack());
        // 40 + 1/20 over two.
        assert_eq!(windows(&host, &[a, b]), [(20.025, 10.0); 2]);
    }

    /// With every member at SRTT_agg, a sample R on one moves its SRTT by (R − SRTT_agg)/8 and
    /// SRTT_agg by 1/n of that: an ensemble EWMA with gain 1/(8n); RTTVAR's gain is 1/(4n).
    #[test]
    fn rtt_samples_move_the_ensemble_average_with_gain_one_over_8n() {
        let (mut host, gid) = efcm(EfcmParams::default());
        let a = host.join(study(), Some(gid), None, 0);
        let b = host.join(study(), Some(gid), None, 0);
        host.state_mut(a).rtt.sample(100_000_000);
        host.on_ack(a, &AckSample { rtt: Some(100_000_000), in_recovery: true, ..ack() });
        for m in [a, b] {
            assert_eq!((host.state(m).rtt.srtt, host.state(m).rtt.rttvar), (100.0 * MS, 50.0 * MS));
        }
        // b samples 180 ms: b's own SRTT 110, RTTVAR 3/4·50 + 1/4·80 = 57.5; the ensemble's
        // SRTT 100 + 80/16 = 105, RTTVAR 50 + (80 − 50)/8 = 53.75, for both members.
        host.state_mut(b).rtt.sample(180_000_000);
        host.on_ack(b, &AckSample { rtt: Some(180_000_000), in_recovery: true, ..ack() });
        for m in [a, b] {
            let e = host.state(m).rtt;
            assert_eq!((e.srtt, e.rttvar), (105.0 * MS, 53.75 * MS));
            assert_eq!(e.rto, 1_000_000_000, "both at RFC 6298's 1 s floor: 105 + 4·53.75 ms");
        }
    }

    /// §2.4.2: a leaver's share stays in the aggregate (44 + 44, one leaves: 88 for the one
    /// left); with `leave = "drop"` it goes. The last leaver dissolves the ensemble.
    #[test]
    fn leave_keeps_the_aggregate_and_the_last_leaver_dissolves() {
        for (rule, left) in [(LeaveRule::Keep, (30.0, 88.0)), (LeaveRule::Drop, (15.0, 44.0))] {
            let (mut host, gid) = efcm(EfcmParams { leave: rule, ..EfcmParams::default() });
            let a = host.join(with(10.0, 44.0), Some(gid), None, 0);
            let b = host.join(with(20.0, 44.0), Some(gid), None, 0);
            assert_eq!(windows(&host, &[a, b]), [(15.0, 44.0); 2]);
            host.leave(a, 1);
            assert_eq!(windows(&host, &[b]), [left], "{rule:?}");
            host.leave(b, 2);
            // A later connection starts as a lone member with its own settings.
            let c = host.join(study(), Some(gid), None, 3);
            assert_eq!(windows(&host, &[c]), [(3.0, 44.0)]);
        }
    }

    /// §2.4.3: Δt = α·SRTT_agg/CWND_agg between bursts of two. With SRTT_agg 100 ms and
    /// CWND_agg 20: fixed α = 2 gives 10 ms; at 40 ms step and linear give α = 1 (2 ms); at
    /// 80 ms step gives α = 2 (8 ms) and linear 1.5 (6 ms).
    #[test]
    fn pacing_gap_for_each_alpha_mode() {
        let gap = |alpha: AlphaMode, srtt_ms: u64| {
            let (mut host, gid) = efcm(EfcmParams { alpha, ..EfcmParams::default() });
            let a = host.join(with(10.0, 44.0), Some(gid), None, 0);
            let _b = host.join(with(10.0, 44.0), Some(gid), None, 0);
            assert_eq!(host.pacing(a), None, "no pacing without an RTT sample");
            host.state_mut(a).rtt.sample(srtt_ms * 1_000_000);
            host.on_ack(a, &AckSample { in_recovery: true, ..ack() });
            let p = host.pacing(a).expect("paced");
            assert_eq!(p.burst, 2);
            p.gap as f64 / MS
        };
        assert_eq!(gap(AlphaMode::Fixed, 100), 10.0);
        assert_eq!(gap(AlphaMode::Step, 40), 2.0);
        assert_eq!(gap(AlphaMode::Linear, 40), 2.0);
        assert_eq!(gap(AlphaMode::Step, 80), 8.0);
        assert_eq!(gap(AlphaMode::Linear, 80), 6.0);
        assert_eq!(gap(AlphaMode::Linear, 150), 15.0);
        let p = EfcmParams { alpha_fixed: 1.0, ..EfcmParams::default() };
        assert_eq!(p.alpha_at(1e9), 1.0);
        assert!(Efcm::new(EfcmParams::default()).caps().pacing);
        assert!(!Efcm::new(EfcmParams { pacing: false, ..EfcmParams::default() }).caps().pacing);
    }

    /// §2.2: an ACK on one member asks every other member to send, round robin from the one
    /// after it.
    #[test]
    fn an_ack_clocks_every_other_member_round_robin() {
        let (mut host, gid) = efcm(EfcmParams::default());
        let ms: Vec<MemberId> = (0..4).map(|_| host.join(with(4.0, 44.0), Some(gid), None, 0)).collect();
        let mut clocked = Vec::new();
        host.take_clocked(&mut clocked);
        clocked.clear();
        host.on_ack(ms[2], &ack());
        host.take_clocked(&mut clocked);
        assert_eq!(clocked, [ms[3], ms[0], ms[1]]);
        let (mut host, gid) = efcm(EfcmParams { ack_clocking: false, ..EfcmParams::default() });
        let a = host.join(study(), Some(gid), None, 0);
        let _b = host.join(study(), Some(gid), None, 0);
        host.on_ack(a, &ack());
        assert!(!host.has_pending());
    }
}
