//! The congestion-control host: every connection's congestion state and the group controller
//! it belongs to.
//!
//! A TCP sender owns mechanism (sequence numbers, loss detection, retransmission); policy is
//! asked of its group controller through the host. A plain algorithm is a group of one
//! ([`Solo`]), so there is one code path for every connection, and the per-ACK cost of a plain
//! algorithm stays one indirect call. A group controller sees all its members' [`CcState`]s at
//! once ([`Members`]), can set their windows and RTT estimates, and can ask members to send
//! ([`Members::clock`]): an ACK on one connection then clocks transmissions on the others
//! (EFCM's ensemble ACK clocking, TCB interdependence).
//!
//! Optional capabilities ([`Caps`]) are asked for once, when a member joins, so connections
//! that do not use them pay nothing on the hot path:
//! - `tags`: the controller decides whether one more new segment may go and under which loop
//!   tag ([`GroupControl::admit`]); the sender keeps the tag of every outstanding segment and
//!   reports segments leaving the network ([`GroupControl::on_delivered`]) and segments lost
//!   ([`GroupControl::on_lost_segment`]) per tag, in recovery too (PA-MulTCP, MPAT);
//! - `pacing`: segments leave no faster than [`GroupControl::pacing`] allows, released by the
//!   sender's pacing timer (EFCM's pacing, paced TCP);
//! - `timer`: the controller has a periodic timer ([`GroupControl::next_timer`]).

use super::aggregate::MemberRecord;
use super::{AckSample, CcState, CongestionControl, LossKind, LossSignal, Phase};
use crate::engine::WakeTag;
use crate::units::Time;
use std::fmt::Debug;

/// A congestion-controlled connection in the host.
pub type MemberId = u32;
/// A group controller in the host.
pub type GroupId = u32;
/// A control loop of a multi-loop controller, carried by each data segment.
pub type Tag = u8;

/// Optional hooks a group controller uses (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Caps {
    /// New segments are admitted and tagged by [`GroupControl::admit`].
    pub tags: bool,
    /// Transmissions are paced by [`GroupControl::pacing`].
    pub pacing: bool,
    /// [`GroupControl::next_timer`] schedules [`GroupControl::on_timer`].
    pub timer: bool,
    /// Every [`AckSample`] carries a delivery-rate sample ([`super::RateSample`]); the sender
    /// keeps a send record per segment for it, and ACKs that only SACK data reach
    /// [`GroupControl::on_ack`] too (with `newly_acked` 0).
    pub rate: bool,
    /// [`GroupControl::on_ack_event`] runs on every ACK of new data.
    pub ack_events: bool,
}

/// A pacing constraint: at most `burst` segments back to back, then a gap of `gap` before the
/// next burst may start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pacing {
    /// Time from the start of one burst to the start of the next.
    pub gap: Time,
    /// Segments per burst (at least 1).
    pub burst: u32,
}

impl Pacing {
    /// One segment of `bytes` bytes at a time at `rate_bps` bits per second.
    pub fn rate(rate_bps: f64, bytes: u32) -> Pacing {
        let gap = (f64::from(bytes) * 8.0 / rate_bps * 1e9).round().max(1.0) as Time;
        Pacing { gap, burst: 1 }
    }
}

/// A segment the sender considers lost and retransmits (reported to controllers with
/// [`Caps::tags`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LostSegment {
    /// When the loss was detected.
    pub now: Time,
    /// Its sequence number.
    pub seq: u64,
    /// The loop it was sent under.
    pub tag: Tag,
    /// When it was last sent.
    pub sent_at: Time,
    /// How the loss was found.
    pub kind: LossKind,
}

/// Segments of a member that left the network on one ACK, cumulatively or by SACK (reported
/// to controllers with [`Caps::tags`]). Each segment is reported once.
#[derive(Clone, Copy, Debug)]
pub struct Delivered<'a> {
    /// Arrival time of the ACK.
    pub now: Time,
    /// The connection's oldest unacknowledged segment after this ACK.
    pub snd_una: u64,
    /// Segments delivered per tag (`by_tag[t]`).
    pub by_tag: &'a [u32],
    /// Each segment delivered, as (sequence number, tag), SACKed ones first.
    pub segments: &'a [(u64, Tag)],
}

/// A group controller's view of its members during one hook.
pub struct Members<'a> {
    ids: &'a [MemberId],
    states: &'a mut [CcState],
    clocked: &'a mut Vec<MemberId>,
}

impl<'a> Members<'a> {
    /// The members, in order of joining.
    #[inline]
    pub fn ids(&self) -> &[MemberId] {
        self.ids
    }

    /// Number of members.
    #[inline]
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// True when the group has no member.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Member `m`'s congestion state.
    #[inline]
    pub fn get(&self, m: MemberId) -> &CcState {
        debug_assert!(self.ids.contains(&m), "member {m} is not in this group");
        &self.states[m as usize]
    }

    /// Member `m`'s congestion state, to change.
    #[inline]
    pub fn get_mut(&mut self, m: MemberId) -> &mut CcState {
        debug_assert!(self.ids.contains(&m), "member {m} is not in this group");
        &mut self.states[m as usize]
    }

    /// Ask member `m` to send what its window now allows once the hook returns (an ACK on one
    /// member clocking the others).
    #[inline]
    pub fn clock(&mut self, m: MemberId) {
        debug_assert!(self.ids.contains(&m), "member {m} is not in this group");
        if !self.clocked.contains(&m) {
            self.clocked.push(m);
        }
    }
}

/// A controller of one or more connections' congestion windows (ADR 0001).
///
/// `m` is always the member the event belongs to; `g` gives access to every member. Hooks
/// never send: a member sends when its own sender runs, or when a hook asks for it with
/// [`Members::clock`].
pub trait GroupControl: Send + Sync + Debug {
    /// Name recorded in results.
    fn name(&self) -> &'static str;
    /// Optional hooks used; asked once per member, when it joins.
    fn caps(&self) -> Caps {
        Caps::default()
    }
    /// Member `m` starts; its state holds the connection's initial values.
    fn on_join(&mut self, _m: MemberId, _g: &mut Members<'_>, _now: Time) {}
    /// Member `m` ends (its transfer is complete or the run is over); it is still in `g`.
    fn on_leave(&mut self, _m: MemberId, _g: &mut Members<'_>, _now: Time) {}
    /// An ACK of new data for member `m` (in every phase: see [`AckSample::in_recovery`]).
    fn on_ack(&mut self, m: MemberId, ack: &AckSample, g: &mut Members<'_>);
    /// Member `m` detected a congestion signal; returns its new ssthresh, which the sender
    /// applies (and sets cwnd as its recovery variant prescribes).
    fn on_loss(&mut self, m: MemberId, loss: &LossSignal, g: &mut Members<'_>) -> f64;
    /// Member `m`'s sender changed phase (it has already set `phase`).
    fn on_phase(&mut self, _m: MemberId, _from: Phase, _to: Phase, _g: &mut Members<'_>) {}
    /// Member `m` timed out again while in [`Phase::Loss`] (a backed-off retransmission timed
    /// out): the sender has set its ssthresh and cwnd anew, with no change of phase to report.
    fn on_repeated_timeout(&mut self, _m: MemberId, _g: &mut Members<'_>) {}
    /// The last reduction of member `m` was spurious: restore what the controller decided at
    /// it. The sender restores the window itself.
    fn undo(&mut self, _m: MemberId, _g: &mut Members<'_>) {}
    /// With [`Caps::tags`]: may member `m` send one more new segment now, and under which
    /// loop? `None` holds it back.
    fn admit(&mut self, _m: MemberId, _g: &mut Members<'_>, _now: Time) -> Option<Tag> {
        Some(0)
    }
    /// With [`Caps::tags`]: segments of member `m` newly acknowledged, cumulatively or by
    /// SACK, on any ACK that acknowledged some.
    fn on_delivered(&mut self, _m: MemberId, _d: &Delivered<'_>, _g: &mut Members<'_>) {}
    /// With [`Caps::tags`]: a segment of member `m` is deemed lost and will be resent under
    /// its tag (in recovery too).
    fn on_lost_segment(&mut self, _m: MemberId, _lost: &LostSegment, _g: &mut Members<'_>) {}
    /// With [`Caps::ack_events`]: an ACK of new data for member `m`, before the sender reacts.
    fn on_ack_event(&mut self, _m: MemberId, _ack: &AckSample, _g: &mut Members<'_>) {}
    /// With [`Caps::pacing`]: member `m`'s pacing now (`None`: unpaced).
    fn pacing(&self, _m: MemberId, _g: &Members<'_>) -> Option<Pacing> {
        None
    }
    /// With [`Caps::timer`]: when [`GroupControl::on_timer`] should next run.
    fn next_timer(&self) -> Option<Time> {
        None
    }
    /// With [`Caps::timer`]: the timer fired.
    fn on_timer(&mut self, _now: Time, _g: &mut Members<'_>) {}
    /// Controller state of member `m` for time series, as (name, value) pairs.
    fn metrics(&self, _m: MemberId, _out: &mut dyn FnMut(&'static str, f64)) {}
    /// The records of the members that joined an aggregate it runs (ADR 0012), handed over
    /// once: when its last connection leaves, or at the end of the run.
    fn take_member_records(&mut self, _out: &mut Vec<MemberRecord>) {}
}

/// A per-connection algorithm as a group of one: the single path every plain connection takes.
#[derive(Debug)]
pub struct Solo<C> {
    /// The algorithm.
    pub alg: C,
    /// The algorithm as it was before its last reduction, restored by an undo.
    before_loss: Option<C>,
}

impl<C: CongestionControl + Copy + 'static> Solo<C> {
    /// `alg` as a group of one.
    pub fn new(alg: C) -> Self {
        Solo { alg, before_loss: None }
    }

    /// `alg` as a boxed group controller.
    pub fn boxed(alg: C) -> Box<dyn GroupControl> {
        Box::new(Solo::new(alg))
    }
}

impl<C: CongestionControl + Copy> GroupControl for Solo<C> {
    fn name(&self) -> &'static str {
        self.alg.name()
    }

    fn caps(&self) -> Caps {
        self.alg.caps()
    }

    #[inline]
    fn on_ack(&mut self, m: MemberId, ack: &AckSample, g: &mut Members<'_>) {
        if !ack.in_recovery || self.alg.controls_recovery() {
            self.alg.on_ack(g.get_mut(m), ack);
        }
    }

    fn on_ack_event(&mut self, m: MemberId, ack: &AckSample, g: &mut Members<'_>) {
        self.alg.on_ack_event(g.get(m), ack);
    }

    fn pacing(&self, m: MemberId, g: &Members<'_>) -> Option<Pacing> {
        self.alg.pacing(g.get(m))
    }

    #[inline]
    fn on_loss(&mut self, m: MemberId, loss: &LossSignal, g: &mut Members<'_>) -> f64 {
        self.before_loss = Some(self.alg);
        self.alg.ssthresh_after(g.get(m), loss)
    }

    fn on_phase(&mut self, m: MemberId, from: Phase, to: Phase, g: &mut Members<'_>) {
        self.alg.on_phase(g.get_mut(m), from, to);
    }

    /// The algorithm's own state goes back to what it was before the last reduction (its
    /// `W_max`, epoch, α and the like), as if the loss had not happened.
    fn undo(&mut self, _m: MemberId, _g: &mut Members<'_>) {
        if let Some(before) = self.before_loss.take() {
            self.alg = before;
        }
    }

    fn metrics(&self, _m: MemberId, out: &mut dyn FnMut(&'static str, f64)) {
        self.alg.metrics(out);
    }
}

/// A group controller and its members.
#[derive(Debug)]
struct Group {
    ctl: Box<dyn GroupControl>,
    members: Vec<MemberId>,
    caps: Caps,
    /// Freed when its last member leaves (a [`Solo`] made for one connection).
    transient: bool,
    /// Time of the timer event in the driver's queue, if any.
    timer_entry: Option<Time>,
    /// Changes each time the slot is reused, so a timer event of an earlier group is ignored.
    gen: u16,
}

/// The controller of a free group slot.
#[derive(Debug)]
struct Vacant;

impl GroupControl for Vacant {
    fn name(&self) -> &'static str {
        "vacant"
    }
    fn on_ack(&mut self, _m: MemberId, _ack: &AckSample, _g: &mut Members<'_>) {
        unreachable!("a vacant group has no members")
    }
    fn on_loss(&mut self, _m: MemberId, _loss: &LossSignal, _g: &mut Members<'_>) -> f64 {
        unreachable!("a vacant group has no members")
    }
}

impl Group {
    fn vacant(gen: u16) -> Group {
        Group {
            ctl: Box::new(Vacant),
            members: Vec::new(),
            caps: Caps::default(),
            transient: true,
            timer_entry: None,
            gen,
        }
    }

    fn live(&self) -> bool {
        !self.members.is_empty() || !self.transient
    }
}

/// Every connection's congestion state and group controller.
#[derive(Debug, Default)]
pub struct CcHost {
    states: Vec<CcState>,
    group_of: Vec<GroupId>,
    /// Group slots; a freed slot holds a vacant group until it is reused.
    groups: Vec<Group>,
    free_members: Vec<MemberId>,
    free_groups: Vec<GroupId>,
    clocked: Vec<MemberId>,
    /// Groups whose timer may have changed since the driver last looked.
    rearm: Vec<GroupId>,
    /// Records of aggregate members of groups already dissolved.
    member_records: Vec<MemberRecord>,
}

/// Run `$body` with `$ctl` (the group's controller) and `$g` (its members) borrowed, then note
/// that the group's timer may have changed if it has one.
macro_rules! with_group {
    ($host:expr, $m:expr, |$ctl:ident, $g:ident| $body:expr) => {{
        let gid = $host.group_of[$m as usize];
        let group = &mut $host.groups[gid as usize];
        let $ctl = &mut group.ctl;
        let mut $g = Members { ids: &group.members, states: &mut $host.states, clocked: &mut $host.clocked };
        let out = $body;
        if group.caps.timer {
            $host.rearm.push(gid);
        }
        out
    }};
}

impl CcHost {
    /// An empty host.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add group controller `ctl`, kept after its members leave; returns its id.
    pub fn add_group(&mut self, ctl: Box<dyn GroupControl>) -> GroupId {
        self.insert_group(ctl, false)
    }

    fn insert_group(&mut self, ctl: Box<dyn GroupControl>, transient: bool) -> GroupId {
        let caps = ctl.caps();
        let group = |gen| Group { ctl, members: Vec::new(), caps, transient, timer_entry: None, gen };
        match self.free_groups.pop() {
            Some(g) => {
                let gen = self.groups[g as usize].gen.wrapping_add(1);
                self.groups[g as usize] = group(gen);
                g
            }
            None => {
                self.groups.push(group(0));
                (self.groups.len() - 1) as GroupId
            }
        }
    }

    /// A new member with initial state `st` in group `group` (`None`: a group of its own run
    /// by `solo`, which must then be given). The controller's `on_join` runs at `now`.
    pub fn join(
        &mut self,
        st: CcState,
        group: Option<GroupId>,
        solo: Option<Box<dyn GroupControl>>,
        now: Time,
    ) -> MemberId {
        let gid = match group {
            Some(g) => g,
            None => self.insert_group(solo.expect("a controller for a group of one"), true),
        };
        let m = match self.free_members.pop() {
            Some(m) => {
                self.states[m as usize] = st;
                self.group_of[m as usize] = gid;
                m
            }
            None => {
                self.states.push(st);
                self.group_of.push(gid);
                (self.states.len() - 1) as MemberId
            }
        };
        self.groups[gid as usize].members.push(m);
        with_group!(self, m, |ctl, g| ctl.on_join(m, &mut g, now));
        m
    }

    /// Member `m` leaves at `now`: `on_leave` runs, its slot is freed, and a group of one is
    /// dissolved.
    pub fn leave(&mut self, m: MemberId, now: Time) {
        with_group!(self, m, |ctl, g| ctl.on_leave(m, &mut g, now));
        let gid = self.group_of[m as usize];
        let group = &mut self.groups[gid as usize];
        group.members.retain(|&x| x != m);
        if !group.live() {
            group.ctl.take_member_records(&mut self.member_records);
            *group = Group::vacant(group.gen);
            self.free_groups.push(gid);
        }
        self.free_members.push(m);
    }

    /// The capabilities of member `m`'s controller.
    #[inline]
    pub fn caps(&self, m: MemberId) -> Caps {
        self.groups[self.group_of[m as usize] as usize].caps
    }

    /// Member `m`'s state.
    #[inline]
    pub fn state(&self, m: MemberId) -> &CcState {
        &self.states[m as usize]
    }

    /// Member `m`'s state, to change.
    #[inline]
    pub fn state_mut(&mut self, m: MemberId) -> &mut CcState {
        &mut self.states[m as usize]
    }

    /// The group of member `m`.
    pub fn group_of(&self, m: MemberId) -> GroupId {
        self.group_of[m as usize]
    }

    /// Name of member `m`'s controller.
    pub fn name(&self, m: MemberId) -> &'static str {
        self.groups[self.group_of[m as usize] as usize].ctl.name()
    }

    /// [`GroupControl::on_ack`].
    #[inline]
    pub fn on_ack(&mut self, m: MemberId, ack: &AckSample) {
        with_group!(self, m, |ctl, g| ctl.on_ack(m, ack, &mut g));
    }

    /// [`GroupControl::on_ack_event`].
    #[inline]
    pub fn on_ack_event(&mut self, m: MemberId, ack: &AckSample) {
        with_group!(self, m, |ctl, g| ctl.on_ack_event(m, ack, &mut g));
    }

    /// [`GroupControl::on_loss`].
    #[inline]
    pub fn on_loss(&mut self, m: MemberId, loss: &LossSignal) -> f64 {
        with_group!(self, m, |ctl, g| ctl.on_loss(m, loss, &mut g))
    }

    /// Set member `m`'s phase to `to`, telling its controller when it changes.
    pub fn set_phase(&mut self, m: MemberId, to: Phase) {
        let from = self.states[m as usize].phase;
        if from != to {
            self.states[m as usize].phase = to;
            with_group!(self, m, |ctl, g| ctl.on_phase(m, from, to, &mut g));
        }
    }

    /// [`GroupControl::on_repeated_timeout`].
    pub fn on_repeated_timeout(&mut self, m: MemberId) {
        with_group!(self, m, |ctl, g| ctl.on_repeated_timeout(m, &mut g));
    }

    /// [`GroupControl::undo`].
    pub fn undo(&mut self, m: MemberId) {
        with_group!(self, m, |ctl, g| ctl.undo(m, &mut g));
    }

    /// [`GroupControl::admit`].
    pub fn admit(&mut self, m: MemberId, now: Time) -> Option<Tag> {
        with_group!(self, m, |ctl, g| ctl.admit(m, &mut g, now))
    }

    /// [`GroupControl::on_delivered`].
    pub fn on_delivered(&mut self, m: MemberId, d: &Delivered<'_>) {
        with_group!(self, m, |ctl, g| ctl.on_delivered(m, d, &mut g));
    }

    /// The records of every aggregate member so far (ADR 0012), by flow and member index;
    /// each is handed over once.
    pub fn take_member_records(&mut self) -> Vec<MemberRecord> {
        let mut out = std::mem::take(&mut self.member_records);
        for group in &mut self.groups {
            group.ctl.take_member_records(&mut out);
        }
        out.sort_by_key(|r| (r.flow, r.member));
        out
    }

    /// [`GroupControl::on_lost_segment`].
    pub fn on_lost_segment(&mut self, m: MemberId, lost: &LostSegment) {
        with_group!(self, m, |ctl, g| ctl.on_lost_segment(m, lost, &mut g));
    }

    /// [`GroupControl::pacing`].
    pub fn pacing(&mut self, m: MemberId) -> Option<Pacing> {
        let group = &mut self.groups[self.group_of[m as usize] as usize];
        let g = Members { ids: &group.members, states: &mut self.states, clocked: &mut self.clocked };
        group.ctl.pacing(m, &g)
    }

    /// [`GroupControl::metrics`] of member `m`.
    pub fn metrics(&self, m: MemberId, out: &mut dyn FnMut(&'static str, f64)) {
        self.groups[self.group_of[m as usize] as usize].ctl.metrics(m, out);
    }

    /// Work for the driver: members to clock or group timers to schedule.
    #[inline]
    pub fn has_pending(&self) -> bool {
        !self.clocked.is_empty() || !self.rearm.is_empty()
    }

    /// Members a hook asked to send, in the order asked; the list is left empty.
    #[inline]
    pub fn take_clocked(&mut self, into: &mut Vec<MemberId>) {
        if !self.clocked.is_empty() {
            into.append(&mut self.clocked);
        }
    }

    /// Groups whose timer may need an event, each with the time and generation to schedule it
    /// with: the driver pushes one event per entry. A group's event already queued for an
    /// earlier time is kept (it re-arms lazily when it fires).
    pub fn timer_events(&mut self, into: &mut Vec<(Time, GroupId, u16)>) {
        while let Some(gid) = self.rearm.pop() {
            let group = &mut self.groups[gid as usize];
            if let Some(t) = group.ctl.next_timer() {
                if group.timer_entry.is_none_or(|e| e > t) {
                    group.timer_entry = Some(t);
                    into.push((t, gid, group.gen));
                }
            }
        }
    }

    /// The timer event `tag` (a group and its generation) fired at `now`; runs `on_timer` if
    /// the group still exists and its timer is due.
    pub fn fire_timer(&mut self, tag: WakeTag, now: Time) {
        let gid = tag.slot();
        let group = &mut self.groups[gid as usize];
        if !tag.is_gen(group.gen) || !group.live() {
            return;
        }
        if group.timer_entry == Some(now) {
            group.timer_entry = None;
        }
        if group.ctl.next_timer().is_some_and(|t| t <= now) {
            let mut g = Members { ids: &group.members, states: &mut self.states, clocked: &mut self.clocked };
            group.ctl.on_timer(now, &mut g);
        }
        self.rearm.push(gid);
    }

    /// Members of group `gid`.
    pub fn members(&self, gid: GroupId) -> &[MemberId] {
        &self.groups[gid as usize].members
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::{ack, loss};
    use crate::cc::Aimd;

    fn metrics(host: &CcHost, m: MemberId) -> Vec<(&'static str, f64)> {
        let mut v = Vec::new();
        host.metrics(m, &mut |n, x| v.push((n, x)));
        v
    }

    #[test]
    fn undo_restores_the_algorithms_own_state() {
        use crate::cc::cubic::{Cubic, CubicParams};
        use crate::cc::LossKind;
        let params = CubicParams::default();
        let mut host = CcHost::new();
        let mut st = CcState::new(80.0, 40.0, 1460);
        st.rtt.sample(50_000_000);
        st.min_rtt = 50_000_000;
        let m = host.join(st, None, Some(Solo::boxed(Cubic::new(params))), 0);
        // A first loss sets W_max = 80; growth follows the cubic from there.
        host.on_loss(m, &LossSignal { kind: LossKind::DupAcks, now: 1_000_000_000, flight_size: 80 });
        host.state_mut(m).cwnd = 60.0;
        for k in 1..=200 {
            host.on_ack(m, &AckSample { now: 1_000_000_000 + k * 5_000_000, ..ack() });
        }
        let before = metrics(&host, m);
        // A timeout that proves spurious: W_max and K change at the reduction...
        host.on_loss(m, &LossSignal { kind: LossKind::Timeout, now: 3_000_000_000, flight_size: 90 });
        host.set_phase(m, Phase::Loss);
        assert_ne!(metrics(&host, m), before);
        // ... and come back with the undo.
        host.undo(m);
        assert_eq!(metrics(&host, m), before);
        // A second undo without a new reduction changes nothing.
        host.undo(m);
        assert_eq!(metrics(&host, m), before);
    }

    #[test]
    fn a_plain_algorithm_is_a_group_of_one_that_dissolves() {
        let mut host = CcHost::new();
        let a = host.join(CcState::new(2.0, 10.0, 1460), None, Some(Solo::boxed(Aimd::reno())), 0);
        let b = host.join(CcState::new(2.0, 10.0, 1460), None, Some(Solo::boxed(Aimd::reno())), 0);
        assert_ne!(host.group_of(a), host.group_of(b));
        host.on_ack(a, &ack());
        assert_eq!(host.state(a).cwnd, 3.0);
        assert_eq!(host.state(b).cwnd, 2.0);
        // In recovery the algorithm does not grow the window.
        host.on_ack(a, &AckSample { in_recovery: true, ..ack() });
        assert_eq!(host.state(a).cwnd, 3.0);
        assert_eq!(host.on_loss(b, &loss(20)), 10.0);
        let gid = host.group_of(a);
        host.leave(a, 1);
        // Both slots are reused by the next connection.
        let c = host.join(CcState::new(5.0, 10.0, 1460), None, Some(Solo::boxed(Aimd::reno())), 2);
        assert_eq!((c, host.group_of(c)), (a, gid));
        assert_eq!(host.state(c).cwnd, 5.0);
        assert_eq!(host.members(gid), &[c]);
    }
}
