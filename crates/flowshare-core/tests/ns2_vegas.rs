//! ns-2.35's `Agent/TCP/Vegas` (`cc = { algo = "vegas", variant = "ns2" }`): its duplicate-ACK
//! rule with the ¾ cut and window inflation, its fine-grained retransmission, the window of 2
//! after a timeout, and a lone flow that settles with α to β packets queued.

use flowshare_core::cc::{CcHost, Phase};
use flowshare_core::packet::{Kind, Packet};
use flowshare_core::tcp::{Controller, Sender, TcpConfig};

mod common;

use common::{bottleneck_queue, dumbbell, mean, run};

const MS: u64 = 1_000_000;

/// One flow of `cc` (initial window 4, TCP options `tcp`) over a 10 Mbit/s / 20 ms dumbbell
/// with a 100-packet queue, for 20 s.
fn scenario(cc: &str, tcp: &str) -> String {
    dumbbell(
        20,
        r#"rate = "10Mbps", delay = "20ms", queue = { limit = 100 }"#,
        &format!("[[flows]]\ntcp = {{ cc = {cc}, initial_window = 4{tcp} }}"),
    )
}

const NS2: &str = r#"{ algo = "vegas", variant = "ns2" }"#;

fn cfg_and_cc(cc: &str) -> (TcpConfig, flowshare_core::cc::CcConfig) {
    let s = flowshare_core::scenario::from_toml(&scenario(cc, "")).unwrap();
    let conn = &s.build().unwrap().conns[0];
    (conn.tcp, conn.cc)
}

/// A started ns-2 Vegas sender (initial window 4) past its start-up: it sends segment 0 alone;
/// the ACK of it (44 ms) leaves the window at one segment and segment 1 goes; the ACK of that
/// (88 ms) opens the window of 4 (`delay_growth_`), and segments 2–5 go at 88 ms.
fn started() -> (Sender, CcHost, Vec<Packet>) {
    let (tcp, cc_cfg) = cfg_and_cc(NS2);
    assert!(tcp.ns2_vegas.is_some());
    let mut cc = CcHost::new();
    let mut s = Sender::new(0, tcp, None, tcp.mss, Controller::Solo(cc_cfg.build_solo()));
    let mut out = Vec::new();
    s.start(0, &mut cc, &mut out);
    assert_eq!(sent(&out), [0], "one segment first");
    for (k, expect) in [(1u64, vec![1u64]), (2, vec![2, 3, 4, 5])] {
        out.clear();
        s.on_ack(44 * k * MS, &ack(k), &mut cc, &mut out);
        assert_eq!(sent(&out), expect, "ACK {k}");
    }
    assert_eq!(cwnd(&s, &cc), 4.0, "the second ACK opens the initial window");
    (s, cc, out)
}

fn sent(out: &[Packet]) -> Vec<u64> {
    out.iter().map(|p| p.seq).collect()
}

fn ack(seq: u64) -> Packet {
    Packet::new(0, Kind::Ack, seq, 40, 0)
}

fn cwnd(s: &Sender, cc: &CcHost) -> f64 {
    s.cc_state(cc).cwnd
}

/// ACKs 3–6 at 135–138 ms: each sends one new segment (6–9, sent at 135–138 ms); the round
/// makes no increase (ns-2 grows in every other round of slow start).
fn first_round(s: &mut Sender, cc: &mut CcHost, out: &mut Vec<Packet>) {
    for k in 3..=6 {
        out.clear();
        s.on_ack((132 + k) * MS, &ack(k), cc, out);
        assert_eq!(sent(out), [k + 3], "ACK {k}");
    }
    assert_eq!(cwnd(s, cc), 4.0);
}

#[test]
fn third_duplicate_ack_cuts_to_three_quarters_inflates_and_deflates_on_the_new_ack() {
    let (mut s, mut cc, mut out) = started();
    first_round(&mut s, &mut cc, &mut out);
    // Segment 6 is lost; 7, 8 and 9 bring duplicate ACKs 47 ms after their sending, before
    // the fine-grained timeout (about 1.4 × the RTT, 60 ms) has passed.
    for (k, t) in [(1, 183), (2, 184)] {
        out.clear();
        s.on_ack(t * MS, &ack(6), &mut cc, &mut out);
        assert!(out.is_empty(), "duplicate ACK {k}: ns-2's Vegas has no limited transmit");
    }
    out.clear();
    s.on_ack(185 * MS, &ack(6), &mut cc, &mut out);
    assert!(out.iter().any(|p| p.seq == 6 && p.retx()), "third duplicate ACK resends segment 6");
    assert_eq!(s.stats.fast_retransmits, 1);
    // win = 4 − ⌊4/4⌋ = 3, inflated by the three duplicate ACKs.
    assert_eq!(cwnd(&s, &cc), 6.0);
    assert_eq!(s.cc_state(&cc).phase, Phase::Open);
    s.on_ack(186 * MS, &ack(6), &mut cc, &mut out);
    assert_eq!(cwnd(&s, &cc), 7.0, "each further duplicate ACK inflates by one");
    // The new ACK deflates to ¾ of the window with ssthresh 2; the same ACK closes a round
    // (diff < α), which adds 1/cwnd.
    out.clear();
    s.on_ack(233 * MS, &ack(12), &mut cc, &mut out);
    let st = s.cc_state(&cc);
    assert_eq!((st.cwnd, st.ssthresh), (3.0 + 1.0 / 3.0, 2.0));
}

#[test]
fn a_duplicate_ack_after_the_fine_grained_timeout_retransmits_at_once() {
    let (mut s, mut cc, mut out) = started();
    first_round(&mut s, &mut cc, &mut out);
    // The first duplicate ACK comes 150 ms after segment 6 left: past v_timeout (60 ms).
    out.clear();
    s.on_ack(285 * MS, &ack(6), &mut cc, &mut out);
    assert!(out.iter().any(|p| p.seq == 6 && p.retx()), "segment 6 resent on the first duplicate ACK");
    // Cut to 3, inflated by one duplicate ACK.
    assert_eq!(cwnd(&s, &cc), 4.0);
}

#[test]
fn a_timeout_restarts_from_two_segments_with_half_the_window_as_ssthresh() {
    let (mut s, mut cc, mut out) = started();
    first_round(&mut s, &mut cc, &mut out);
    let deadline = s.rto_deadline.expect("timer armed");
    out.clear();
    s.on_wake(deadline, &mut cc, &mut out);
    assert_eq!(s.stats.timeouts, 1);
    let st = s.cc_state(&cc);
    assert_eq!((st.cwnd, st.ssthresh), (2.0, 2.0));
    let resent: Vec<u64> = out.iter().filter(|p| p.retx()).map(|p| p.seq).collect();
    assert_eq!(resent, [6, 7], "go back N with a window of 2");
}

/// A lone ns-2 Vegas flow leaves slow start on diff > γ without a loss and holds between α = 1
/// and β = 3 of its packets in the bottleneck queue (plus the one in transmission), keeping the
/// link busy.
#[test]
fn lone_flow_settles_with_alpha_to_beta_packets_queued_and_no_loss() {
    let r = run(&scenario(NS2, ""));
    assert_eq!(r.queues.i64("drops")[0], 0, "Vegas with the γ exit loses nothing");
    let q = bottleneck_queue(&r, 10.0);
    let m = mean(&q);
    assert!((1.0..=4.0).contains(&m), "mean queue {m} outside [α, β + 1]");
    let goodput = r.flows.f64("goodput_bps")[0];
    assert!(goodput > 0.9 * 10e6 * 1460.0 / 1500.0, "goodput {goodput} leaves the link idle");
}

#[test]
fn options_of_the_other_variant_and_sack_recovery_are_refused() {
    let err = |cc: &str, tcp: &str| {
        flowshare_core::scenario::from_toml(&scenario(cc, tcp))
            .and_then(|s| s.build().map(|_| ()))
            .expect_err("must be refused")
            .to_string()
    };
    let e = err(r#"{ algo = "vegas", variant = "ns2", slow_start = "linux" }"#, "");
    assert!(e.contains("slow_start") && e.contains("ns2"), "{e}");
    let e = err(NS2, r#", recovery = "sack""#);
    assert!(e.contains("recovery") && e.contains("ns2"), "{e}");
    let e = err(r#"{ algo = "vegas", variant = "ns3" }"#, "");
    assert!(e.contains("variant"), "{e}");
    // Linux 2.6.22's module: its own slow start and diff, thresholds in half segments.
    let e = err(r#"{ algo = "vegas", variant = "linux", diff = "paper" }"#, "");
    assert!(e.contains("diff") && e.contains("\"linux\""), "{e}");
    let e = err(r#"{ algo = "vegas", variant = "linux", alpha = 1.2 }"#, "");
    assert!(e.contains("alpha") && e.contains("half segments"), "{e}");
    let linux = cfg_and_cc(r#"{ algo = "vegas", variant = "linux" }"#).1;
    assert!(
        matches!(linux, flowshare_core::cc::CcConfig::VegasLinux(p) if (p.alpha, p.beta, p.gamma) == (2.0, 4.0, 1.0))
    );
    // The thresholds default to ns-2's.
    let (tcp, _) = cfg_and_cc(NS2);
    let p = tcp.ns2_vegas.unwrap();
    assert_eq!((p.alpha, p.beta, p.gamma), (1.0, 3.0, 1.0));
}

/// ns-2's start-up with its default initial window of 2: one segment, then the second ACK
/// sets the window to 2 and that ACK's slow-start increase makes it 3 (ns-2: cwnd_ 1, 3, 6,
/// 12, … every other round).
#[test]
fn start_up_with_an_initial_window_of_two_goes_one_then_three() {
    let s = flowshare_core::scenario::from_toml(&dumbbell(
        1,
        r#"rate = "10Mbps", delay = "20ms", queue = { limit = 100 }"#,
        &format!("[[flows]]\ntcp = {{ cc = {NS2}, initial_window = 2 }}"),
    ))
    .unwrap();
    let conn = &s.build().unwrap().conns[0];
    let mut cc = CcHost::new();
    let mut snd = Sender::new(0, conn.tcp, None, conn.tcp.mss, Controller::Solo(conn.cc.build_solo()));
    let mut out = Vec::new();
    snd.start(0, &mut cc, &mut out);
    assert_eq!((sent(&out), cwnd(&snd, &cc)), (vec![0], 1.0));
    out.clear();
    snd.on_ack(44 * MS, &ack(1), &mut cc, &mut out);
    assert_eq!((sent(&out), cwnd(&snd, &cc)), (vec![1], 1.0));
    out.clear();
    snd.on_ack(88 * MS, &ack(2), &mut cc, &mut out);
    assert_eq!((sent(&out), cwnd(&snd, &cc)), (vec![2, 3, 4], 3.0));
}
