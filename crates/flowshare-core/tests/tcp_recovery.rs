//! Sender-level checks of loss detection: limited transmit (RFC 3042) and the `recover`
//! comparison that stops a second fast retransmit for one loss episode (RFC 6582 §4).

use flowshare_core::cc::{CcConfig, CcHost};
use flowshare_core::packet::{Kind, Packet};
use flowshare_core::tcp::{Controller, Recovery, Sender, TcpConfig};

mod common;

/// The TCP settings of a flow with `recovery` and the options in `extra` (initial window 3
/// unless `extra` sets one).
fn cfg(recovery: &str, extra: &str) -> TcpConfig {
    let iw = if extra.contains("initial_window") { "" } else { ", initial_window = 3" };
    let text = format!(
        r#"
[simulation]
duration = "1s"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "10Mbps", delay = "10ms" }}
access = {{ rate = "1Gbps", delay = "1ms" }}
[[flows]]
tcp = {{ recovery = "{recovery}"{iw}{extra} }}
"#
    );
    let s = flowshare_core::scenario::from_toml(&text).unwrap();
    s.build().unwrap().conns[0].tcp
}

fn sender(cfg: TcpConfig) -> Sender {
    Sender::new(0, cfg, None, cfg.mss, Controller::Solo(CcConfig::Reno.build_solo()))
}

/// A sender of `cfg` that has started (sent its first window, kept in the returned `out`).
fn started(cfg: TcpConfig) -> (Sender, CcHost, Vec<Packet>) {
    let mut cc = CcHost::new();
    let mut s = sender(cfg);
    let mut out = Vec::new();
    s.start(0, &mut cc, &mut out);
    (s, cc, out)
}

fn ack(seq: u64) -> Packet {
    Packet::new(0, Kind::Ack, seq, 40, 0)
}

fn new_segments(out: &[Packet]) -> Vec<u64> {
    out.iter().filter(|p| p.kind == Kind::Data && !p.retx()).map(|p| p.seq).collect()
}

#[test]
fn limited_transmit_sends_one_new_segment_on_each_of_the_first_two_duplicate_acks() {
    for recovery in ["reno", "newreno", "sack"] {
        let c = cfg(recovery, "");
        assert!(c.limited_transmit, "on by default, as in ns-2 and Linux");
        let (mut s, mut cc, mut out) = started(c);
        assert_eq!(new_segments(&out), [0, 1, 2]);
        // Segment 0 is lost: 1 and 2 arrive and are acknowledged with duplicate ACKs.
        out.clear();
        s.on_ack(1_000, &ack(0), &mut cc, &mut out);
        assert_eq!(new_segments(&out), [3], "{recovery}: first duplicate ACK");
        out.clear();
        s.on_ack(2_000, &ack(0), &mut cc, &mut out);
        assert_eq!(new_segments(&out), [4], "{recovery}: second duplicate ACK");
        assert_eq!(s.stats.fast_retransmits, 0);
        // Segment 3's duplicate ACK is the third: with a window of three, only limited transmit
        // makes fast retransmit possible.
        out.clear();
        s.on_ack(3_000, &ack(0), &mut cc, &mut out);
        assert_eq!(s.stats.fast_retransmits, 1, "{recovery}");
        assert!(out.iter().any(|p| p.seq == 0 && p.retx()), "{recovery}: segment 0 resent");
    }
}

#[test]
fn without_limited_transmit_a_window_of_three_waits_for_the_timer() {
    let c = cfg("newreno", ", limited_transmit = false");
    let (mut s, mut cc, mut out) = started(c);
    out.clear();
    s.on_ack(1_000, &ack(0), &mut cc, &mut out);
    s.on_ack(2_000, &ack(0), &mut cc, &mut out);
    assert!(out.is_empty(), "nothing sent on duplicate ACKs");
    assert_eq!(s.stats.fast_retransmits, 0);
    let deadline = s.rto_deadline.expect("timer armed");
    s.on_wake(deadline, &mut cc, &mut out);
    assert_eq!(s.stats.timeouts, 1);
}

#[test]
fn limited_transmit_stays_within_the_receiver_window() {
    let c = cfg("newreno", ", rwnd = 3, limited_transmit = true");
    let (mut s, mut cc, mut out) = started(c);
    out.clear();
    s.on_ack(1_000, &ack(0), &mut cc, &mut out);
    assert!(out.is_empty(), "the receiver window is full");
}

#[test]
fn duplicate_acks_at_recover_after_a_timeout_start_no_fast_retransmit() {
    for recovery in [Recovery::Reno, Recovery::Newreno, Recovery::Sack] {
        let mut c = cfg(recovery.as_str(), ", initial_window = 10");
        c.initial_window = 10.0;
        let (mut s, mut cc, mut out) = started(c);
        assert_eq!(s.snd_max, 10);
        // Segment 0 is lost and the timer expires: recover = 10, go-back-N from 0.
        let deadline = s.rto_deadline.unwrap();
        out.clear();
        s.on_wake(deadline, &mut cc, &mut out);
        assert_eq!(s.stats.timeouts, 1);
        // The retransmission fills the hole; the receiver had 1..9, so the ACK jumps to 10 and
        // new data goes out.
        let t = deadline + 50_000_000;
        s.on_ack(t, &ack(10), &mut cc, &mut out);
        assert!(s.snd_max > 10);
        // Duplicate ACKs at exactly `recover` (echoes of resent segments the receiver already
        // had) are not a new loss.
        for k in 1..=4 {
            s.on_ack(t + k, &ack(10), &mut cc, &mut out);
        }
        assert_eq!(s.stats.fast_retransmits, 0, "{recovery:?}: ACK == recover");
        // Beyond `recover` a loss is new: three duplicate ACKs at 11 start a fast retransmit.
        let sent = s.snd_max;
        s.on_ack(t + 10, &ack(11), &mut cc, &mut out);
        assert!(s.snd_max >= sent);
        for k in 1..=3 {
            s.on_ack(t + 10 + k, &ack(11), &mut cc, &mut out);
        }
        assert_eq!(s.stats.fast_retransmits, 1, "{recovery:?}: ACK beyond recover");
    }
}

fn sack_ack(seq: u64, blocks: &[(u64, u64)]) -> Packet {
    let mut p = ack(seq);
    for &(a, b) in blocks {
        p.push_sack_block(a, b);
    }
    p
}

#[test]
fn linux_accounting_sends_on_every_sacking_duplicate_ack_and_marks_a_loss_four_above() {
    let c = cfg("sack", r#", initial_window = 4, sack_recovery = "rate_halving""#);
    let (mut s, mut cc, mut out) = started(c);
    assert_eq!(new_segments(&out), [0, 1, 2, 3]);
    // Segment 0 is lost; each later arrival is SACKed, leaves the pipe, and a new segment
    // takes its place: three duplicate ACKs do not start recovery yet (ns-2's TCP-Linux marks
    // a segment lost once one four above it is SACKed).
    for (k, end) in (2..=4).enumerate() {
        out.clear();
        s.on_ack(1_000 * (k as u64 + 1), &sack_ack(0, &[(1, end)]), &mut cc, &mut out);
        assert_eq!(new_segments(&out), [end + 2], "duplicate ACK {}", k + 1);
        assert_eq!(s.stats.fast_retransmits, 0);
    }
    out.clear();
    s.on_ack(4_000, &sack_ack(0, &[(1, 5)]), &mut cc, &mut out);
    assert_eq!(s.stats.fast_retransmits, 1);
    assert!(out.iter().any(|p| p.seq == 0 && p.retx()), "segment 0 resent");
}

#[test]
fn rate_halving_lets_the_pipe_fall_by_one_segment_per_two_acks() {
    let c = cfg("sack", r#", initial_window = 20, initial_ssthresh = 1000, sack_recovery = "rate_halving""#);
    let (mut s, mut cc, mut out) = started(c);
    assert_eq!(s.snd_max, 20);
    // Segment 0 is lost; 1..=k arrive. Reno halves from the window (ssthresh 10) and, as in
    // Linux 2.6.22's reno module, recovery starts from min_cwnd = ssthresh / 2 = 5.
    let mut t = 1_000;
    let mut sent_per_ack = Vec::new();
    for end in 2..=20 {
        out.clear();
        s.on_ack(t, &sack_ack(0, &[(1, end)]), &mut cc, &mut out);
        t += 1_000;
        sent_per_ack.push(out.len());
    }
    let m = s.member().unwrap();
    assert_eq!(cc.state(m).ssthresh, 10.0);
    assert_eq!(cc.state(m).cwnd, 5.0);
    // Before recovery each of the three ACKs releases a new segment; the fourth starts
    // recovery and resends segment 0; from there the pipe falls from the old window by one
    // segment per two ACKs.
    assert_eq!(sent_per_ack[..4], [1, 1, 1, 1], "{sent_per_ack:?}");
    let during: usize = sent_per_ack[4..].iter().sum();
    assert_eq!(during, 7, "{sent_per_ack:?}");
    assert!(sent_per_ack[4..].windows(2).all(|w| w[0] + w[1] == 1), "{sent_per_ack:?}");
}

#[test]
fn prr_sends_in_proportion_to_deliveries() {
    let c = cfg("sack", r#", initial_window = 20, initial_ssthresh = 1000, sack_recovery = "prr""#);
    let (mut s, mut cc, mut out) = started(c);
    let mut t = 1_000;
    let mut total = 0;
    for end in 2..=20 {
        out.clear();
        s.on_ack(t, &sack_ack(0, &[(1, end)]), &mut cc, &mut out);
        t += 1_000;
        if s.stats.fast_retransmits == 1 {
            total += out.len();
        }
    }
    // RFC 6937: over the recovery, about ssthresh / RecoverFS = 1/2 a segment per segment
    // delivered; the retransmission of segment 0 comes first.
    assert_eq!(s.stats.fast_retransmits, 1);
    assert!((7..=10).contains(&total), "{total} segments for 16 deliveries");
    assert!(s.stats.retransmits >= 1);
}

#[test]
fn sack_recovery_needs_sack() {
    let text = r#"
[simulation]
duration = "1s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "10ms" }
access = { rate = "1Gbps", delay = "1ms" }
[[flows]]
tcp = { recovery = "newreno", sack_recovery = "prr" }
"#;
    let err = flowshare_core::scenario::from_toml(text).and_then(|s| s.build().map(|_| ())).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"flows[0].tcp.sack_recovery: "prr" needs recovery = "sack", got recovery = "newreno""#
    );
}

#[test]
fn rto_rttvar_and_backoff_are_reported_per_flow_and_over_time() {
    // The bottleneck fails from 2 s to 9 s: the timer backs off 0.2, 0.4, 0.8, 1.6, 3.2 s,
    // and the retransmission after 6.4 more (at about 14.6 s) gets through.
    let text = r#"
[simulation]
duration = "20s"
sample_interval = "100ms"
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "20ms", queue = { limit = 50 } }
access = { rate = "1Gbps", delay = "1ms" }
[[flows]]
tcp = { rto_min = "200ms", rto_initial = "1s" }
[[changes]]
at = "2s"
link = "bottleneck"
up = false
[[changes]]
at = "9s"
link = "bottleneck"
up = true
"#;
    let s = flowshare_core::scenario::from_toml(text).unwrap();
    let r = flowshare_core::Simulation::new(&s).unwrap().finish();
    let f = &r.flows;
    let backoff_max = f.i64("backoff_max")[0];
    let timeouts = f.i64("timeouts")[0];
    assert!(timeouts >= 5, "{timeouts} timeouts while the link was down");
    assert!(backoff_max >= 16, "backoff reached {backoff_max}");
    let (srtt, rttvar, rto) = (f.f64("srtt_final_s")[0], f.f64("rttvar_final_s")[0], f.f64("rto_final_s")[0]);
    assert!(srtt > 0.042 && rttvar >= 0.0 && rto >= 0.2 && rto >= srtt, "srtt {srtt}, rttvar {rttvar}, rto {rto}");
    let ts = &r.flow_series;
    let (t, backoff, rto_s, srtt_s) = (ts.f64("time_s"), ts.i64("backoff"), ts.f64("rto_s"), ts.f64("srtt_s"));
    let at = |x: f64| t.iter().position(|&v| (v - x).abs() < 1e-9).unwrap();
    // Before the failure the timer is not backed off; while the link is down it is, and the
    // armed timeout grows with it; a valid RTT sample after the repair resets it.
    assert_eq!(backoff[at(1.5)], 1);
    assert!(backoff[at(8.5)] >= 8, "backoff at 8.5 s: {}", backoff[at(8.5)]);
    assert!(rto_s[at(8.5)] >= 8.0 * 0.2, "armed timeout at 8.5 s: {}", rto_s[at(8.5)]);
    assert_eq!(backoff[at(14.5)], 32, "still waiting for the backed-off timer");
    assert_eq!(backoff[at(19.5)], 1, "reset by new samples after the repair");
    assert!(rto_s[at(1.5)] >= srtt_s[at(1.5)]);
    assert!(ts.f64("rttvar_s")[at(1.5)] >= 0.0);
}

#[test]
fn the_less_careful_variant_fast_retransmits_at_recover() {
    let mut c = cfg("newreno", r#", initial_window = 10, recover = "less_careful""#);
    c.initial_window = 10.0;
    let (mut s, mut cc, mut out) = started(c);
    let deadline = s.rto_deadline.unwrap();
    s.on_wake(deadline, &mut cc, &mut out);
    let t = deadline + 50_000_000;
    s.on_ack(t, &ack(10), &mut cc, &mut out);
    for k in 1..=3 {
        s.on_ack(t + k, &ack(10), &mut cc, &mut out);
    }
    assert_eq!(s.stats.fast_retransmits, 1, "RFC 6582's less careful variant, as in Hasegawa's thesis");
}

/// The first segment sent in a SACK recovery is lost, and its duplicate ACKs come after the
/// recovery has ended (the ACK of the retransmission reaches exactly `recover`): RFC 6582's
/// careful rule keeps them from starting a fast retransmit, so the sender waits for its
/// timer; ns-2's Sack1 clears `recover_` when a fast recovery ends (`after_timeout`) and
/// retransmits at once.
#[test]
fn after_timeout_lets_a_loss_just_after_a_fast_recovery_start_another() {
    for (rule, retransmits) in [("careful", 1), ("after_timeout", 2)] {
        let c = cfg("sack", &format!(r#", initial_window = 10, recover = "{rule}""#));
        let (mut s, mut cc, mut out) = started(c);
        assert_eq!(new_segments(&out), (0..10).collect::<Vec<_>>());
        // Segment 0 is lost: 1..=11 arrive (10 and 11 sent by limited transmit), each SACKed by
        // a duplicate ACK; the third starts the recovery with `recover` = 12.
        out.clear();
        for k in 1..=11u64 {
            s.on_ack(k * 1_000, &sack_ack(0, &[(1, k + 1)]), &mut cc, &mut out);
        }
        assert_eq!(s.stats.fast_retransmits, 1, "{rule}");
        let sent = new_segments(&out);
        assert!(sent.starts_with(&[10, 11, 12, 13, 14, 15]), "{rule}: new data {sent:?}");
        // Segment 12, the first sent in the recovery, is lost. The retransmission of 0 is
        // acknowledged up to it: the recovery ends; then 13..=15 arrive above the hole.
        out.clear();
        s.on_ack(20_000, &ack(12), &mut cc, &mut out);
        for (k, top) in (14..=16u64).enumerate() {
            s.on_ack(21_000 + k as u64, &sack_ack(12, &[(13, top)]), &mut cc, &mut out);
        }
        assert_eq!(s.stats.fast_retransmits, retransmits, "recover = {rule}");
        let resent = out.iter().any(|p| p.seq == 12 && p.retx());
        assert_eq!(resent, retransmits == 2, "recover = {rule}: segment 12 resent before the timer");
    }
}

#[test]
fn every_ack_restarts_the_timer_only_with_rto_restart_every_ack() {
    for (restart, moves) in [("new_data", false), ("every_ack", true)] {
        let c = cfg("sack", &format!(r#", initial_window = 4, rto_restart = "{restart}""#));
        let (mut s, mut cc, mut out) = started(c);
        let armed = s.rto_deadline.unwrap();
        s.on_ack(50_000_000, &sack_ack(0, &[(1, 2)]), &mut cc, &mut out);
        assert_eq!(s.rto_deadline.unwrap() > armed, moves, "{restart}: a duplicate ACK restarts the timer");
    }
}

/// With `rto_restart = "oldest_sent"` the timer runs from the last send of the oldest
/// unacknowledged segment: an ACK moves it only as far as that segment's send time, and the
/// go-back-N's resend of the segment restarts it.
#[test]
fn oldest_sent_times_the_oldest_unacknowledged_segment_from_its_last_send() {
    let mut deadlines = Vec::new();
    for restart in ["new_data", "oldest_sent"] {
        let c = cfg("reno", &format!(r#", initial_window = 4, rto_restart = "{restart}""#));
        let (mut s, mut cc, mut out) = started(c); // segments 0-3 leave at t = 0
        s.on_ack(50_000_000, &ack(1), &mut cc, &mut out);
        let deadline = s.rto_deadline.unwrap();
        deadlines.push((s, cc, deadline));
    }
    let (new_data, oldest) = (deadlines[0].2, deadlines[1].2);
    // One 50-ms sample in both, so the same RTO: from the ACK, or from segment 1's send at 0.
    assert_eq!(new_data - oldest, 50_000_000);
    let rto = oldest; // segment 1 left at 0
    let (s, cc, _) = &mut deadlines[1];
    let mut out = Vec::new();
    s.on_wake(oldest, cc, &mut out);
    assert_eq!(s.stats.timeouts, 1);
    assert!(out.iter().any(|p| p.seq == 1 && p.retx()), "segment 1 goes again");
    assert_eq!(s.rto_deadline, Some(oldest + 2 * rto), "timed from the resend, backed off");
}

#[test]
fn the_window_decrease_takes_whole_segments_from_the_window_as_ns2_does() {
    for (decrease, ssthresh) in [("flight", 4.5), ("window", 4.0)] {
        let c = cfg("newreno", &format!(r#", initial_window = 9, decrease = "{decrease}""#));
        let (mut s, mut cc, mut out) = started(c);
        // Segment 0 is lost; limited transmit sends two more on the first two duplicate ACKs,
        // which the FlightSize rule leaves out: both cut from 9 segments.
        for t in 1..=3 {
            s.on_ack(t * 1_000, &ack(0), &mut cc, &mut out);
        }
        let m = s.member().unwrap();
        assert_eq!(s.stats.fast_retransmits, 1);
        assert_eq!(cc.state(m).ssthresh, ssthresh, "decrease = {decrease}");
        assert_eq!(cc.state(m).cwnd, ssthresh + 3.0);
    }
}

/// ns-2's NewReno sends at most two segments per duplicate ACK in fast recovery
/// (`send_much(0, 0, 2)`): `dupack_burst = 2`. Without it a duplicate ACK that finds the window
/// wide open sends all it allows.
#[test]
fn dupack_burst_caps_what_one_duplicate_ack_releases_in_recovery() {
    for (cap, expected) in [(0, 16), (2, 2)] {
        let (mut s, mut cc, mut out) = started(cfg("newreno", &format!(", dupack_burst = {cap}")));
        for t in 1..=3 {
            s.on_ack(t * 1_000, &ack(0), &mut cc, &mut out);
        }
        assert_eq!(s.stats.fast_retransmits, 1);
        assert_eq!(s.snd_max, 5, "segments 0–2 and two by limited transmit");
        // Open the window wide, as a large ssthresh would, and take one more duplicate ACK
        // (inflation makes it 21 with 5 outstanding).
        cc.state_mut(s.member().unwrap()).cwnd = 20.0;
        out.clear();
        s.on_ack(4_000, &ack(0), &mut cc, &mut out);
        assert_eq!(new_segments(&out).len(), expected, "dupack_burst = {cap}");
    }
}

#[test]
fn the_reported_window_leaves_out_the_inflation_and_follows_the_rate_halving_target() {
    // NewReno: in fast recovery cwnd is inflated to ssthresh + 3 and by one per further
    // duplicate ACK; the window results report stays at ssthresh (ns-2's cwnd_, without
    // dupwnd_).
    let c = cfg("newreno", ", initial_window = 10, initial_ssthresh = 1000");
    let (mut s, mut cc, mut out) = started(c);
    let m = s.member().unwrap();
    for k in 1..=4u64 {
        out.clear();
        s.on_ack(1_000 * k, &ack(0), &mut cc, &mut out);
    }
    let st = *cc.state(m);
    assert_eq!(st.ssthresh, 5.0);
    assert_eq!(st.cwnd, 9.0, "ssthresh + 3, and one more for the fourth duplicate ACK");
    assert_eq!(s.reported_cwnd(&st), 5.0);
    s.on_ack(5_000, &ack(s.snd_max), &mut cc, &mut out);
    let st = *cc.state(m);
    assert_eq!(s.reported_cwnd(&st), st.cwnd, "out of recovery the window is cwnd");

    // TCP-Linux rate halving: cwnd drops to min_cwnd at once, but the pipe target falls from
    // the old window by one segment per two ACKs; that target is the window reported while it
    // is above cwnd (ns-2's save_from_linux reports next_pkts_in_flight_).
    let c = cfg("sack", r#", initial_window = 20, initial_ssthresh = 1000, sack_recovery = "rate_halving""#);
    let (mut s, mut cc, mut out) = started(c);
    let m = s.member().unwrap();
    let mut reported = Vec::new();
    for (k, end) in (2..=20).enumerate() {
        out.clear();
        s.on_ack(1_000 * (k as u64 + 1), &sack_ack(0, &[(1, end)]), &mut cc, &mut out);
        reported.push(s.reported_cwnd(cc.state(m)));
    }
    let st = *cc.state(m);
    assert_eq!(st.cwnd, 5.0);
    assert_eq!(reported[..3], [20.0, 20.0, 20.0], "before recovery: cwnd");
    assert!(reported[3] >= 18.0, "{reported:?}");
    assert!(reported[3..].windows(2).all(|w| w[1] <= w[0]), "{reported:?}");
    assert!(reported.iter().all(|&w| w >= st.cwnd), "{reported:?}");
    assert!(*reported.last().unwrap() < 14.0, "{reported:?}");
}

#[test]
fn the_window_decrease_keeps_ns2s_fractional_half_window() {
    // ns-2's slowdown halves the real window: ssthresh = ⌊9.5/2⌋ = 4, cwnd_ = 4.75, which
    // is the window when fast recovery ends; with decrease = "flight" both are 4.5.
    for (decrease, ssthresh, after) in [("window", 4.0, 4.75), ("flight", 4.5, 4.5)] {
        let c = cfg("newreno", &format!(r#", initial_window = 9.5, decrease = "{decrease}""#));
        let (mut s, mut cc, mut out) = started(c);
        let m = s.member().unwrap();
        for k in 1..=3u64 {
            out.clear();
            s.on_ack(1_000 * k, &ack(0), &mut cc, &mut out);
        }
        assert_eq!(s.stats.fast_retransmits, 1);
        let st = *cc.state(m);
        assert_eq!(st.ssthresh, ssthresh, "{decrease}");
        assert_eq!(s.reported_cwnd(&st), after, "{decrease}: the window on the network in recovery");
        s.on_ack(5_000, &ack(s.snd_max), &mut cc, &mut out);
        assert_eq!(cc.state(m).cwnd, after, "{decrease}: cwnd when recovery ends");
    }
}

#[test]
fn a_syn_segment_goes_with_the_first_data_segment_and_carries_no_payload() {
    // ns-2's TCP-Linux: the SYN stand-in is segment 0 of a window of 2, header only.
    let c = cfg("sack", r#", initial_window = 2, header = "50B", syn_segment = true"#);
    let (_, _, out) = started(c);
    let sizes: Vec<(u64, u32)> = out.iter().map(|p| (p.seq, p.size)).collect();
    assert_eq!(sizes, [(0, 50), (1, 1510)]);
    // A finite transfer delivers exactly its bytes, in one segment more.
    let r = common::run(&common::dumbbell(
        5,
        r#"rate = "10Mbps", delay = "10ms""#,
        "[[flows]]\nsize = \"100KB\"\ntcp = { recovery = \"sack\", syn_segment = true }",
    ));
    assert_eq!(r.flows.i64("bytes_delivered")[0], 100_000);
    assert_eq!(r.flows.i64("packets_received")[0], (100_000 + 1459) / 1460 + 1);
    // It stands for the handshake, so not both.
    let e = flowshare_core::scenario::from_toml(&common::dumbbell(
        1,
        r#"rate = "10Mbps", delay = "10ms""#,
        "[[flows]]\ntcp = { syn_segment = true, handshake = true }",
    ))
    .and_then(|s| s.build().map(|_| ()))
    .expect_err("refused")
    .to_string();
    assert!(e.contains("syn_segment") && e.contains("handshake"), "{e}");
}

#[test]
fn rate_halving_leaves_a_timeout_as_it_leaves_a_recovery() {
    // Ten segments out, a timeout: ssthresh 5, cwnd 1, segment 0 resent. The ACK of all ten
    // ends the Loss state; ns-2's TCP-Linux then raises cwnd to ssthresh but to at most 3
    // beyond what is outstanding (nothing here): 3. RFC 6675 keeps slow start's 2.
    for (sack_recovery, after) in [("rate_halving", 3.0), ("rfc6675", 2.0)] {
        let c = cfg("sack", &format!(r#", initial_window = 10, sack_recovery = "{sack_recovery}""#));
        let (mut s, mut cc, mut out) = started(c);
        let m = s.member().unwrap();
        let deadline = s.rto_deadline.expect("timer armed");
        out.clear();
        s.on_wake(deadline, &mut cc, &mut out);
        assert_eq!((s.stats.timeouts, cc.state(m).ssthresh), (1, 5.0), "{sack_recovery}");
        out.clear();
        s.on_ack(deadline + 50_000_000, &ack(10), &mut cc, &mut out);
        assert_eq!(cc.state(m).cwnd, after, "{sack_recovery}");
    }
}

#[test]
fn linux_accounting_resends_a_retransmission_lost_after_a_timeout_without_waiting_for_the_timer() {
    // Two segments out, a timeout: segment 0 goes again and is acknowledged; cwnd 2 sends 1
    // again and new segment 2. Segment 2 is SACKed but 1 is not: its retransmission, sent
    // before 2, was lost too. Linux (and ns-2's TCP-Linux) marks it lost and enters recovery;
    // every duplicate ACK restarts the timer, so waiting for it would stall the flow.
    for sack_recovery in ["rate_halving", "prr"] {
        let c = cfg(
            "sack",
            &format!(r#", initial_window = 2, sack_recovery = "{sack_recovery}", rto_restart = "every_ack""#),
        );
        let (mut s, mut cc, mut out) = started(c);
        let deadline = s.rto_deadline.expect("timer armed");
        out.clear();
        s.on_wake(deadline, &mut cc, &mut out);
        assert_eq!(s.stats.timeouts, 1);
        assert!(out.iter().any(|p| p.seq == 0 && p.retx()), "{sack_recovery}: segment 0 resent");
        out.clear();
        s.on_ack(deadline + 50_000_000, &ack(1), &mut cc, &mut out);
        assert!(out.iter().any(|p| p.seq == 1 && p.retx()), "{sack_recovery}: segment 1 resent");
        assert_eq!(new_segments(&out), [2], "{sack_recovery}");
        out.clear();
        s.on_ack(deadline + 60_000_000, &sack_ack(1, &[(2, 3)]), &mut cc, &mut out);
        assert_eq!(s.stats.fast_retransmits, 1, "{sack_recovery}: a recovery begins");
        assert!(out.iter().any(|p| p.seq == 1 && p.retx()), "{sack_recovery}: segment 1 resent again");
    }
}

#[test]
fn rate_halving_starts_no_recovery_on_the_ack_that_ends_one_and_forgets_its_sacks() {
    // ns-2's TCP-Linux: the ACK that ends a recovery clears the scoreboard and looks no
    // further; SACK blocks that show another loss start the next recovery one ACK later.
    let c = cfg("sack", r#", initial_window = 40, sack_recovery = "rate_halving""#);
    let (mut s, mut cc, mut out) = started(c);
    let mut sent: Vec<u64> = new_segments(&out);
    let mut t = 1_000_000;
    let mut step = |s: &mut Sender, cc: &mut CcHost, out: &mut Vec<Packet>, p: Packet, sent: &mut Vec<u64>| {
        out.clear();
        s.on_ack(t, &p, cc, out);
        sent.extend(new_segments(out));
        t += 1_000_000;
    };
    let top = |sent: &Vec<u64>| *sent.iter().max().unwrap() + 1;
    // Segment 0 is lost; 1..4 arrive (releasing 40..43): the fourth SACK marks 0 lost, and the
    // recovery covers everything sent so far.
    for k in 2..=5 {
        step(&mut s, &mut cc, &mut out, sack_ack(0, &[(1, k)]), &mut sent);
    }
    assert_eq!(s.stats.fast_retransmits, 1);
    let recover = top(&sent);
    // Everything after 0 arrives, one segment per ACK, but segment `recover`, which the
    // ACKs release with new data beyond it.
    for k in 6..=recover {
        step(&mut s, &mut cc, &mut out, sack_ack(0, &[(1, k)]), &mut sent);
    }
    let mut next = recover + 1;
    while next < top(&sent) && next <= recover + 5 {
        next += 1;
        step(&mut s, &mut cc, &mut out, sack_ack(0, &[(recover + 1, next), (1, recover)]), &mut sent);
    }
    let high = top(&sent);
    assert!(high > recover + 5, "sent {sent:?}");
    // 0's retransmission arrives: a full ACK whose SACK block shows `recover` lost.
    step(&mut s, &mut cc, &mut out, sack_ack(recover, &[(recover + 1, high)]), &mut sent);
    assert_eq!(s.stats.fast_retransmits, 1, "the ACK that ends the recovery starts none");
    assert!(!out.iter().any(|p| p.retx()), "nothing resent on it");
    // The SACKed segments are forgotten: they count as in flight, which fills the window.
    assert_eq!(new_segments(&out), Vec::<u64>::new(), "nothing new sent on it");
    step(&mut s, &mut cc, &mut out, sack_ack(recover, &[(recover + 1, high)]), &mut sent);
    assert_eq!(s.stats.fast_retransmits, 2, "the next one does");
    assert!(out.iter().any(|p| p.seq == recover && p.retx()), "segment {recover} resent");
}

/// `sent_bytes` counts distinct payload (the highest byte sent), `acked_bytes` the payload
/// cumulatively acknowledged. A 3,420-byte transfer is two 1,460-byte segments and a last one of
/// 500: the first window sends all three; an ACK of two segments acknowledges 2,920 B; the
/// timeout's retransmission of the third adds nothing sent. With `syn_segment`, segment 0 stands
/// for the SYN and carries no payload.
#[test]
fn sent_and_acked_bytes_count_distinct_payload() {
    let c = cfg("newreno", "");
    let mut cc = CcHost::new();
    let mut s = Sender::new(0, c, Some(3), 500, Controller::Solo(CcConfig::Reno.build_solo()));
    let mut out = Vec::new();
    assert_eq!((s.sent_bytes(), s.acked_bytes()), (0, 0));
    s.start(0, &mut cc, &mut out);
    assert_eq!((s.sent_bytes(), s.acked_bytes()), (3420, 0));
    s.on_ack(1_000, &ack(2), &mut cc, &mut out);
    assert_eq!((s.sent_bytes(), s.acked_bytes()), (3420, 2920));
    out.clear();
    let deadline = s.next_wake().expect("a timer for the third segment");
    s.on_wake(deadline, &mut cc, &mut out);
    assert!(out.iter().any(|p| p.seq == 2 && p.retx()), "segment 2 resent");
    assert_eq!((s.sent_bytes(), s.acked_bytes()), (3420, 2920));
    s.on_ack(deadline + 1_000, &ack(3), &mut cc, &mut out);
    assert_eq!((s.sent_bytes(), s.acked_bytes()), (3420, 3420));
    // With the SYN stand-in: segments 0 (no payload), 1 and 2 (1,460 B each) go first.
    let c = cfg("newreno", ", syn_segment = true");
    let mut cc = CcHost::new();
    let mut s = Sender::new(0, c, Some(3), 500, Controller::Solo(CcConfig::Reno.build_solo()));
    s.start(0, &mut cc, &mut out);
    assert_eq!(s.sent_bytes(), 2920);
    s.on_ack(1_000, &ack(1), &mut cc, &mut out);
    assert_eq!(s.acked_bytes(), 0, "the stand-in carries no payload");
    s.on_ack(2_000, &ack(4), &mut cc, &mut out);
    assert_eq!((s.sent_bytes(), s.acked_bytes()), (3420, 3420));
}

/// A TCP flow's `loss_events` counts its window reductions: two losses of one window are one
/// fast recovery, a loss in a later window another; a timeout in the open state is one too.
#[test]
fn loss_events_count_window_reductions() {
    let run = |tcp: &str, drops: &str| {
        let flow = format!("[[flows]]\ndrop_segments = [{drops}]\ntcp = {{ {tcp} }}\n");
        common::run(&common::dumbbell(10, r#"rate = "10Mbps", delay = "10ms", queue = { limit = 1000 }"#, &flow))
    };
    for recovery in ["sack", "newreno"] {
        let r = run(&format!("recovery = \"{recovery}\""), "100, 101, 400");
        let f = &r.flows;
        assert_eq!(f.i64("fast_retransmits")[0], 2, "{recovery}");
        assert_eq!(f.i64("loss_events")[0], 2, "{recovery}: one event per recovered window");
    }
    // A timeout in the open state (forced before segment 200's ACK can come back) is one.
    let r = run("recovery = \"sack\", force_timeout = { segment = 200, after = \"1ms\" }", "");
    let f = &r.flows;
    assert_eq!((f.i64("fast_retransmits")[0], f.i64("timeouts")[0]), (0, 1));
    assert_eq!(f.i64("loss_events")[0], 1, "the forced timeout in the open state is an event of its own");
}
