//! The congestion-control host's hooks, each shown by a small controller of the kind the
//! studies need (ADR 0001): a window shared by two connections whose ACKs clock each other
//! (EFCM, TCB interdependence), two loops with their own AIMD windows inside one connection
//! (PA-MulTCP, MPAT), a paced sender, and a periodic timer.
//!
//! Each test would fail if its hook did nothing: windows would differ, no segment would be sent
//! on another member's ACK, one loop would get no segments or no reduction, segments would
//! leave in bursts, the timer would never run.

mod common;

use flowshare_core::cc::host::GroupId;
use flowshare_core::cc::{
    AckSample, Caps, CcConfig, CcHost, Delivered, GroupControl, LossSignal, LostSegment, MemberId, Members, Pacing,
    Phase, Tag,
};
use flowshare_core::packet::Kind;
use flowshare_core::results::RunResults;
use flowshare_core::tcp::{Controller, Sender};
use flowshare_core::units::Time;
use flowshare_core::{scenario, Simulation};
use std::sync::{Arc, Mutex};

const MS: Time = 1_000_000;

/// Build `toml`, put `flows` under `ctl`, run to the end.
fn run_with(toml: &str, flows: &[u32], ctl: Box<dyn GroupControl>) -> RunResults {
    let s = scenario::from_toml(toml).unwrap_or_else(|e| panic!("bad test scenario: {e}"));
    let mut sim = Simulation::new(&s).unwrap();
    sim.add_group(flows, ctl).unwrap();
    sim.finish()
}

/// Trace event kinds and packet types used here.
const SEND: i64 = 0;
const ACK: i64 = 5;
const DATA: i64 = 0;
const ACK_PACKET: i64 = 1;

/// Trace events of one kind of one packet type of flow `flow`: (time, seq, retx).
fn events(r: &RunResults, kind: i64, packet: i64, flow: i64) -> Vec<(i64, i64, bool)> {
    let ev = r.trace.events.as_ref().expect("an event trace");
    let (t, k, f, seq, retx) = (ev.i64("time_ns"), ev.i64("kind"), ev.i64("flow"), ev.i64("seq"), ev.i64("retx"));
    let pk = ev.i64("packet");
    (0..t.len())
        .filter(|&i| k[i] == kind && pk[i] == packet && f[i] == flow)
        .map(|i| (t[i], seq[i], retx[i] != 0))
        .collect()
}

/// The sampled cwnd of flow `flow`: (time, cwnd).
fn cwnd_series(r: &RunResults, flow: i64) -> Vec<(f64, f64)> {
    let s = &r.flow_series;
    let (t, f, w) = (s.f64("time_s"), s.i64("flow"), s.f64("cwnd"));
    (0..t.len()).filter(|&i| f[i] == flow).map(|i| (t[i], w[i])).collect()
}

// ---------------------------------------------------------------------------------------------
// One window shared equally; an ACK on one member clocks the other.

/// The members share one Reno window: it grows by one segment per ACK in slow start and by
/// 1/window in congestion avoidance, whichever member the ACK is for, halves on a loss of any
/// member, and every member holds an equal share. Each ACK lets every other member send into
/// its new share at once.
#[derive(Debug, Default)]
struct SharedWindow {
    total: f64,
    ssthresh: f64,
}

impl SharedWindow {
    fn share(&self, g: &mut Members<'_>) {
        let n = g.len() as f64;
        for k in 0..g.len() {
            let o = g.ids()[k];
            let st = g.get_mut(o);
            st.cwnd = self.total / n;
            st.ssthresh = self.ssthresh / n;
        }
    }
}

impl GroupControl for SharedWindow {
    fn name(&self) -> &'static str {
        "shared_window"
    }

    fn on_join(&mut self, m: MemberId, g: &mut Members<'_>, _now: Time) {
        let st = g.get(m);
        self.total += st.cwnd;
        self.ssthresh = if g.len() == 1 { st.ssthresh } else { self.ssthresh + st.ssthresh };
        self.share(g);
    }

    fn on_ack(&mut self, m: MemberId, ack: &AckSample, g: &mut Members<'_>) {
        if ack.in_recovery {
            return;
        }
        self.total += if self.total < self.ssthresh { 1.0 } else { 1.0 / self.total };
        self.share(g);
        for k in 0..g.len() {
            let o = g.ids()[k];
            if o != m {
                g.clock(o);
            }
        }
    }

    fn on_loss(&mut self, _m: MemberId, _loss: &LossSignal, g: &mut Members<'_>) -> f64 {
        self.ssthresh = (self.total / 2.0).max(2.0 * g.len() as f64);
        self.total = self.ssthresh;
        self.share(g);
        self.ssthresh / g.len() as f64
    }
}

/// Two SACK flows with round-trip times of about 24 and 84 ms (without queueing); the second
/// starts at `far_start`.
fn two_rtts(seconds: u32, far_start: &str, trace: &str) -> String {
    common::dumbbell(
        seconds,
        r#"rate = "10Mbps", delay = "10ms", queue = { limit = 100 }"#,
        &format!(
            "[[flows]]\nname = \"near\"\ntcp = {{ recovery = \"sack\" }}\n\
             [[flows]]\nname = \"far\"\nstart = \"{far_start}\"\nsrc_access = {{ delay = \"31ms\" }}\n\
             tcp = {{ recovery = \"sack\" }}\n{trace}"
        ),
    )
}

#[test]
fn two_connections_share_one_window_equally() {
    let r = run_with(&two_rtts(20, "1s", ""), &[0, 1], Box::new(SharedWindow::default()));
    common::assert_conservation(&r);
    let (near, far) = (cwnd_series(&r, 0), cwnd_series(&r, 1));
    let both: Vec<(f64, f64)> = near.iter().zip(&far).filter(|(a, _)| a.0 > 1.0).map(|(a, b)| (a.1, b.1)).collect();
    let equal = both.iter().filter(|(a, b)| a == b).count();
    // Windows differ only while a member is in a timeout's slow start from one segment.
    assert!(equal * 100 >= both.len() * 95, "equal windows in {equal} of {} samples", both.len());
    assert!(both.iter().any(|&(a, _)| a > 10.0), "the shared window grew");
    // Equal windows, so the flows' throughputs are in the inverse ratio of their RTTs.
    let (g, rtt) = (r.flows.f64("goodput_bps"), r.flows.f64("rtt_mean_s"));
    let (rate_ratio, rtt_ratio) = (g[0] / g[1], rtt[1] / rtt[0]);
    assert!((rate_ratio / rtt_ratio - 1.0).abs() < 0.2, "goodputs {g:?}, RTTs {rtt:?}");
    // Without the controller each flow has a window of its own.
    let plain = common::run(&two_rtts(20, "1s", ""));
    let (near, far) = (cwnd_series(&plain, 0), cwnd_series(&plain, 1));
    let same = near.iter().zip(&far).filter(|(a, b)| a.0 > 1.0 && a.1 == b.1).count();
    assert!(same * 20 < near.len(), "plain flows had equal windows in {same} samples");
}

#[test]
fn an_ack_on_one_member_clocks_the_other() {
    let trace = "[trace]\nevents = true\nkinds = [\"send\", \"ack\"]\n";
    let r = run_with(&two_rtts(3, "0s", trace), &[0, 1], Box::new(SharedWindow::default()));
    let near_acks: std::collections::HashSet<i64> = events(&r, ACK, ACK_PACKET, 0).iter().map(|e| e.0).collect();
    let far_acks: std::collections::HashSet<i64> = events(&r, ACK, ACK_PACKET, 1).iter().map(|e| e.0).collect();
    let far_sends = events(&r, SEND, DATA, 1);
    // The far flow's segments sent at the instant a near ACK arrived, and none of its own.
    let clocked = far_sends.iter().filter(|e| near_acks.contains(&e.0) && !far_acks.contains(&e.0)).count();
    // In slow start every second near ACK opens a segment of the far flow's share.
    assert!(clocked * 20 > far_sends.len(), "{clocked} of {} far segments clocked by near ACKs", far_sends.len());
    // Without the group, the far flow sends only on its own ACKs (and timers).
    let plain = common::run(&two_rtts(3, "0s", trace));
    let near_acks: std::collections::HashSet<i64> = events(&plain, ACK, ACK_PACKET, 0).iter().map(|e| e.0).collect();
    let far_acks: std::collections::HashSet<i64> = events(&plain, ACK, ACK_PACKET, 1).iter().map(|e| e.0).collect();
    let lone =
        events(&plain, SEND, DATA, 1).iter().filter(|e| near_acks.contains(&e.0) && !far_acks.contains(&e.0)).count();
    assert_eq!(lone, 0);
}

// ---------------------------------------------------------------------------------------------
// Two loops with their own AIMD windows inside one connection.

#[derive(Debug, Default)]
struct Loop {
    cwnd: f64,
    ssthresh: f64,
    in_flight: u32,
    /// A loss of a segment at or above this number starts a new loss event of the loop.
    recover: u64,
    reductions: u32,
    delivered: u64,
    lost: u64,
    delivered_in_recovery: u64,
}

/// What the test reads back after the run.
#[derive(Debug, Default)]
struct LoopLog {
    loops: [Loop; 2],
    tags_of_losses: Vec<Tag>,
}

/// Strict alternation: segment k goes to loop k mod 2 when that loop's window has room. Each
/// loop is Reno on its own segments: +1 per delivered segment below its ssthresh, +1/cwnd
/// above, halved on the first loss of a loss event.
#[derive(Debug)]
struct TwoLoops {
    admitted: u64,
    log: Arc<Mutex<LoopLog>>,
}

impl TwoLoops {
    fn sync(log: &LoopLog, m: MemberId, g: &mut Members<'_>) {
        let st = g.get_mut(m);
        st.cwnd = log.loops[0].cwnd + log.loops[1].cwnd;
        st.ssthresh = st.cwnd;
    }
}

impl GroupControl for TwoLoops {
    fn name(&self) -> &'static str {
        "two_loops"
    }

    fn caps(&self) -> Caps {
        Caps { tags: true, ..Caps::default() }
    }

    fn on_join(&mut self, m: MemberId, g: &mut Members<'_>, _now: Time) {
        let mut log = self.log.lock().unwrap();
        for l in &mut log.loops {
            *l = Loop { cwnd: 2.0, ssthresh: f64::INFINITY, ..Loop::default() };
        }
        Self::sync(&log, m, g);
    }

    fn admit(&mut self, _m: MemberId, _g: &mut Members<'_>, _now: Time) -> Option<Tag> {
        let tag = (self.admitted % 2) as usize;
        let mut log = self.log.lock().unwrap();
        let l = &mut log.loops[tag];
        if f64::from(l.in_flight) >= l.cwnd.floor() {
            return None;
        }
        l.in_flight += 1;
        self.admitted += 1;
        Some(tag as Tag)
    }

    fn on_delivered(&mut self, m: MemberId, d: &Delivered<'_>, g: &mut Members<'_>) {
        let mut log = self.log.lock().unwrap();
        let in_recovery = g.get(m).phase == Phase::Recovery;
        assert_eq!(d.segments.len() as u32, d.by_tag.iter().sum::<u32>(), "each segment delivered is listed");
        for (t, &n) in d.by_tag.iter().enumerate() {
            let l = &mut log.loops[t];
            l.in_flight -= n;
            l.delivered += u64::from(n);
            if in_recovery {
                l.delivered_in_recovery += u64::from(n);
            }
            for _ in 0..n {
                l.cwnd += if l.cwnd < l.ssthresh { 1.0 } else { 1.0 / l.cwnd };
            }
        }
        Self::sync(&log, m, g);
    }

    fn on_lost_segment(&mut self, m: MemberId, lost: &LostSegment, g: &mut Members<'_>) {
        let mut log = self.log.lock().unwrap();
        log.tags_of_losses.push(lost.tag);
        let l = &mut log.loops[lost.tag as usize];
        l.lost += 1;
        if lost.seq >= l.recover {
            l.ssthresh = (l.cwnd / 2.0).max(2.0);
            l.cwnd = l.ssthresh;
            l.recover = self.admitted;
            l.reductions += 1;
        }
        Self::sync(&log, m, g);
    }

    fn on_ack(&mut self, m: MemberId, ack: &AckSample, _g: &mut Members<'_>) {
        let _ = (m, ack); // windows grow per delivered segment, per loop
    }

    fn on_loss(&mut self, m: MemberId, _loss: &LossSignal, g: &mut Members<'_>) -> f64 {
        // Which loop lost is known per segment (on_lost_segment); the connection keeps the sum.
        g.get(m).cwnd
    }

    fn metrics(&self, _m: MemberId, out: &mut dyn FnMut(&'static str, f64)) {
        let log = self.log.lock().unwrap();
        if log.loops[0].cwnd > 0.0 {
            out("loop0_cwnd", log.loops[0].cwnd);
            out("loop1_cwnd", log.loops[1].cwnd);
        }
    }
}

#[test]
fn segments_carry_the_tag_of_the_loop_that_admitted_them() {
    let s = scenario::from_toml(&common::dumbbell(1, r#"rate = "10Mbps", delay = "10ms""#, "[[flows]]\n")).unwrap();
    let mut cfg = s.build().unwrap().conns[0].tcp;
    cfg.recovery = flowshare_core::tcp::Recovery::Sack;
    let log = Arc::new(Mutex::new(LoopLog::default()));
    let mut cc = CcHost::new();
    let g: GroupId = cc.add_group(Box::new(TwoLoops { admitted: 0, log: log.clone() }));
    let mut s = Sender::new(0, cfg, None, cfg.mss, Controller::Group(g));
    let mut out = Vec::new();
    s.start(0, &mut cc, &mut out);
    // Each loop starts with two segments: four go, tagged 0, 1, 0, 1.
    assert_eq!(out.iter().map(|p| (p.seq, p.tag)).collect::<Vec<_>>(), vec![(0, 0), (1, 1), (2, 0), (3, 1)]);
    assert_eq!(cc.state(s.member().unwrap()).cwnd, 4.0);
    // The ACK of segment 0 delivers one segment of loop 0: its window grows to 3, so it may
    // send two more (segments 4 and 6), while loop 1 (2 in flight, window 2) waits.
    out.clear();
    let mut ack = flowshare_core::packet::Packet::new(0, Kind::Ack, 1, 40, 0);
    ack.ts = 0;
    s.on_ack(30 * MS, &ack, &mut cc, &mut out);
    assert_eq!(log.lock().unwrap().loops[0].delivered, 1);
    assert_eq!(out.iter().map(|p| (p.seq, p.tag)).collect::<Vec<_>>(), vec![(4, 0)]);
}

#[test]
fn two_loops_keep_separate_aimd_windows() {
    // Only odd segments are lost: with strict alternation they all belong to loop 1.
    let drops: Vec<String> = (0..40).map(|k| (301 + 400 * k).to_string()).collect();
    let toml = common::dumbbell(
        20,
        r#"rate = "20Mbps", delay = "10ms", queue = { limit = 1000 }"#,
        &format!("[[flows]]\ndrop_segments = [{}]\ntcp = {{ recovery = \"sack\" }}\n", drops.join(", ")),
    );
    let log = Arc::new(Mutex::new(LoopLog::default()));
    let r = run_with(&toml, &[0], Box::new(TwoLoops { admitted: 0, log: log.clone() }));
    common::assert_conservation(&r);
    let log = log.lock().unwrap();
    let (l0, l1) = (&log.loops[0], &log.loops[1]);
    println!("loop 0: {l0:?}\nloop 1: {l1:?}");
    assert!(log.tags_of_losses.iter().all(|&t| t == 1), "lost tags {:?}", log.tags_of_losses);
    assert_eq!(l0.reductions, 0, "loop 0 never lost a segment");
    assert!(l1.reductions >= 10, "loop 1 halved at each of its losses: {}", l1.reductions);
    // Each loop carries about half the segments, and the two counts add up to what arrived.
    let received = r.flows.i64("packets_received")[0] as u64;
    assert!(l0.delivered.abs_diff(l1.delivered) <= l0.delivered / 20, "{} vs {}", l0.delivered, l1.delivered);
    assert!(received >= l0.delivered + l1.delivered);
    // Deliveries are reported during SACK recovery too.
    assert!(l0.delivered_in_recovery > 0 && l1.delivered_in_recovery > 0);
    // Loop 0 grows without a cut, so it ends with the larger window.
    assert!(l0.cwnd > 2.0 * l1.cwnd, "windows {} and {}", l0.cwnd, l1.cwnd);
    // The loops' windows are in the flow's time series.
    let s = &r.flow_series;
    assert!(s.f64("loop0_cwnd").iter().zip(s.f64("loop1_cwnd")).any(|(a, b)| a > b));
}

// ---------------------------------------------------------------------------------------------
// Pacing.

/// A fixed window of 50 segments, released one segment (or `burst`) every `gap`.
#[derive(Debug)]
struct Paced {
    gap: Time,
    burst: u32,
}

impl GroupControl for Paced {
    fn name(&self) -> &'static str {
        "paced"
    }

    fn caps(&self) -> Caps {
        Caps { pacing: true, ..Caps::default() }
    }

    fn on_join(&mut self, m: MemberId, g: &mut Members<'_>, _now: Time) {
        g.get_mut(m).cwnd = 50.0;
    }

    fn on_ack(&mut self, _m: MemberId, _ack: &AckSample, _g: &mut Members<'_>) {}

    fn on_loss(&mut self, m: MemberId, _loss: &LossSignal, g: &mut Members<'_>) -> f64 {
        g.get(m).cwnd
    }

    fn pacing(&self, _m: MemberId, _g: &Members<'_>) -> Option<Pacing> {
        Some(Pacing { gap: self.gap, burst: self.burst })
    }
}

fn paced_run(ctl: Option<Paced>) -> Vec<i64> {
    let toml = common::dumbbell(
        1,
        r#"rate = "100Mbps", delay = "1ms""#,
        "[[flows]]\n[trace]\nevents = true\nkinds = [\"send\"]\n",
    );
    let r = match ctl {
        Some(c) => run_with(&toml, &[0], Box::new(c)),
        None => common::run(&toml),
    };
    events(&r, SEND, DATA, 0).iter().filter(|e| !e.2).map(|e| e.0).collect()
}

#[test]
fn a_paced_sender_spaces_its_segments() {
    let times = paced_run(Some(Paced { gap: 2 * MS, burst: 1 }));
    let gaps: Vec<i64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    // 1 s at one segment per 2 ms, the last one at 1 s: 501 segments, each 2 ms after the
    // previous.
    assert_eq!(times.len(), 501);
    assert!(gaps.iter().all(|&g| g == 2 * MS as i64), "gaps {:?}", &gaps[..10]);
    // Bursts of two: pairs back to back, pairs 2 ms apart.
    let times = paced_run(Some(Paced { gap: 2 * MS, burst: 2 }));
    let gaps: Vec<i64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    assert_eq!(times.len(), 1002);
    assert!(gaps.iter().step_by(2).all(|&g| g == 0) && gaps.iter().skip(1).step_by(2).all(|&g| g == 2 * MS as i64));
    // Unpaced, the initial window leaves in one burst.
    let plain = paced_run(None);
    assert_eq!(plain[0], plain[2]);
}

// ---------------------------------------------------------------------------------------------
// A periodic timer.

/// Every `period` the controller runs and sets its member's window to 8 segments.
#[derive(Debug)]
struct Periodic {
    period: Time,
    next: Time,
    ran_at: Arc<Mutex<Vec<Time>>>,
}

impl GroupControl for Periodic {
    fn name(&self) -> &'static str {
        "periodic"
    }

    fn caps(&self) -> Caps {
        Caps { timer: true, ..Caps::default() }
    }

    fn on_join(&mut self, _m: MemberId, _g: &mut Members<'_>, now: Time) {
        self.next = now + self.period;
    }

    fn on_ack(&mut self, _m: MemberId, _ack: &AckSample, _g: &mut Members<'_>) {}

    fn on_loss(&mut self, m: MemberId, _loss: &LossSignal, g: &mut Members<'_>) -> f64 {
        g.get(m).cwnd
    }

    fn next_timer(&self) -> Option<Time> {
        Some(self.next)
    }

    fn on_timer(&mut self, now: Time, g: &mut Members<'_>) {
        self.ran_at.lock().unwrap().push(now);
        self.next = now + self.period;
        for k in 0..g.len() {
            let m = g.ids()[k];
            g.get_mut(m).cwnd = 8.0;
            g.clock(m);
        }
    }
}

#[test]
fn a_periodic_timer_runs_on_time() {
    let ran_at = Arc::new(Mutex::new(Vec::new()));
    let toml = common::dumbbell(2, r#"rate = "10Mbps", delay = "10ms""#, "[[flows]]\nstart = \"0.1s\"\n");
    let r = run_with(&toml, &[0], Box::new(Periodic { period: 50 * MS, next: 0, ran_at: ran_at.clone() }));
    let ran = ran_at.lock().unwrap().clone();
    let expected: Vec<Time> = (1..=38).map(|k| 100 * MS + 50 * MS * k).collect();
    assert_eq!(ran, expected);
    // The window the timer set is the window the flow used.
    assert_eq!(r.flows.f64("cwnd_final")[0], 8.0);
    assert!(r.flows.f64("goodput_bps")[0] > 0.0);
}

// ---------------------------------------------------------------------------------------------
// Misuse of the API is refused with a message.

#[test]
fn groups_take_tcp_flows_that_have_not_started() {
    let toml = common::dumbbell(
        1,
        r#"rate = "10Mbps", delay = "10ms""#,
        "[[flows]]\ncount = 2\n[[flows]]\ntransport = \"udp\"\nsource = { kind = \"cbr\", rate = \"1Mbps\" }\n",
    );
    let s = scenario::from_toml(&toml).unwrap();
    let mut sim = Simulation::new(&s).unwrap();
    let ctl = || -> Box<dyn GroupControl> { Box::new(SharedWindow::default()) };
    assert_eq!(sim.add_group(&[5], ctl()).unwrap_err().to_string(), "flows[0]: flow 5 does not exist; flows are 0..2");
    assert_eq!(sim.add_group(&[0, 2], ctl()).unwrap_err().to_string(), "flows[1]: flow 2 is not a TCP flow");
    assert_eq!(sim.add_group(&[0, 0], ctl()).unwrap_err().to_string(), "flows[1]: flow 0 is listed twice");
    sim.add_group(&[0], ctl()).unwrap();
    assert_eq!(sim.add_group(&[0], ctl()).unwrap_err().to_string(), "flows[0]: flow 0 is already in a group");
    sim.run_until(500 * MS);
    assert_eq!(
        sim.add_group(&[1], ctl()).unwrap_err().to_string(),
        "flows[0]: flow 1 has started; add groups before running"
    );
    // A plain algorithm keeps working for the flow left alone.
    let r = sim.finish();
    assert!(r.flows.f64("goodput_bps")[1] > 1e6);
    let _ = CcConfig::Reno;
}
