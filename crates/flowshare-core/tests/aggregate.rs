//! Aggregate connections (PA-MulTCP and MPAT, ADR 0012) in whole runs: the share an aggregate
//! of N takes against TCP flows, members joining at run time and the `members` table, the
//! per-loop accounting of a hand-driven sender through SACK recovery, and the scenario checks.

mod common;

use flowshare_core::cc::host::GroupId;
use flowshare_core::cc::pamultcp::{AdjustWeight, Assignment, PaMulTcp, PaMulTcpParams, TimeoutRule, ADJUST, PROBE};
use flowshare_core::cc::CcHost;
use flowshare_core::packet::{Kind, Packet};
use flowshare_core::results::RunResults;
use flowshare_core::scenario;
use flowshare_core::tcp::{Controller, Recovery, Sender};
use flowshare_core::units::Time;

const MS: Time = 1_000_000;

/// An aggregate flow with `cc` (and `extra` on the flow) beside `tcp` Reno/SACK flows on a
/// 10 Mbps, 20 ms dumbbell with a 60-packet drop-tail queue, for `seconds`.
fn shared(seconds: u32, cc: &str, extra: &str, tcp: u32) -> String {
    common::dumbbell(
        seconds,
        r#"rate = "10Mbps", delay = "20ms", queue = { limit = 60 }"#,
        &format!(
            "[[flows]]\nname = \"agg\"\nstart_jitter = \"1s\"\ntcp = {{ recovery = \"sack\", cc = {cc} }}\n{extra}\n\
             [[flows]]\nname = \"tcp\"\ncount = {tcp}\nstart_jitter = \"1s\"\ntcp = {{ recovery = \"sack\" }}\n"
        ),
    )
}

/// Goodput of flow 0 over the mean goodput of the others.
fn share_ratio(r: &RunResults) -> f64 {
    let g = r.flows.f64("goodput_bps");
    let others = &g[1..];
    g[0] / (others.iter().sum::<f64>() / others.len() as f64)
}

fn column(r: &RunResults, name: &str) -> Vec<f64> {
    let s = &r.flow_series;
    let f = s.i64("flow");
    // Before the flow starts its controller has no values.
    let t = s.f64("time_s");
    s.f64(name).iter().zip(f).zip(t).filter(|((_, &f), &t)| f == 0 && t >= 1.0).map(|((v, _), _)| *v).collect()
}

#[test]
fn pamultcp_of_four_takes_about_four_tcp_shares() {
    let r = common::run(&shared(40, r#"{ algo = "pamultcp", n = 4 }"#, "", 4));
    common::assert_conservation(&r);
    let ratio = share_ratio(&r);
    println!("PA-MulTCP(4) / TCP goodput: {ratio:.2}; flows {:?}", r.flows.f64("goodput_bps"));
    assert!((2.5..6.0).contains(&ratio), "PA-MulTCP(4) got {ratio:.2} TCP shares");
    // The probe loop lost packets, so the cap is finite, and it bounds the adjusting loop.
    let (adjust, cap) = (column(&r, "adjust_cwnd"), column(&r, "w_max"));
    let capped: Vec<(f64, f64)> =
        adjust.iter().zip(&cap).filter(|(_, c)| c.is_finite()).map(|(a, c)| (*a, *c)).collect();
    assert!(capped.len() * 2 > adjust.len(), "W_max is known for most of the run");
    assert!(capped.iter().all(|(a, c)| a <= &(c + 1e-9)), "the adjusting loop stays under W_max");
    let p: Vec<f64> = column(&r, "p_probe").into_iter().filter(|p| p.is_finite()).collect();
    assert!(p.iter().all(|&p| p > 0.0 && p < 0.2), "probe loss-event rates {:?}", &p[..p.len().min(5)]);
    // The adjusting loop carries more than the probe loop: it holds N' = 3 flows' window.
    let probe = column(&r, "probe_cwnd");
    let (ma, mp) = (common::mean(&adjust), common::mean(&probe));
    assert!(ma > 1.5 * mp, "mean windows: adjusting {ma:.1}, probe {mp:.1}");
}

#[test]
fn mpat_of_four_takes_about_four_tcp_shares() {
    let r = common::run(&shared(40, r#"{ algo = "mpat", n = 4 }"#, "", 4));
    common::assert_conservation(&r);
    let ratio = share_ratio(&r);
    println!("MPAT(4) / TCP goodput: {ratio:.2}");
    assert!((2.5..6.0).contains(&ratio), "MPAT(4) got {ratio:.2} TCP shares");
    assert!(column(&r, "loops").iter().all(|&l| l == 4.0));
}

/// A 30 KB member joins at 10 s: it completes, it is in the `members` table, and N is one
/// more while it is active.
#[test]
fn a_joined_member_completes_and_is_reported() {
    for cc in [r#"{ algo = "pamultcp", n = 4 }"#, r#"{ algo = "mpat", n = 4 }"#] {
        let extra = r#"aggregate = { joins = [{ at = "10s", size = "30KB" }, { at = "12s", size = "400KB" }] }"#;
        let r = common::run(&shared(25, cc, extra, 2));
        let m = &r.members;
        assert_eq!(m.rows(), 2, "{cc}: two members joined");
        assert_eq!(m.i64("flow"), &[0, 0]);
        match m.get("name") {
            Some(flowshare_core::results::Column::Str(names)) => assert_eq!(names, &["agg", "agg"]),
            other => panic!("a name column: {other:?}"),
        }
        assert_eq!(m.i64("member"), &[4, 5]);
        assert_eq!(m.f64("start_s"), &[10.0, 12.0]);
        assert_eq!(m.i64("size_bytes"), &[30_000, 400_000]);
        assert_eq!(m.i64("segments"), &[21, 274]);
        let done = m.f64("completion_time_s");
        println!("{cc}: completion times {done:?}");
        // With the data shared among five members, 21 segments take at least 5·21 segments
        // of the aggregate at 10 Mbps (1.2 ms each).
        assert!(done[0] > 105.0 * 0.0012 && done[0] < 10.0, "{cc}: 30 KB in {} s", done[0]);
        assert!(done[1] > done[0] && done[1] < 12.0, "{cc}: 400 KB in {} s", done[1]);
        // While members are active the aggregate counts them.
        let n = column(&r, "members_n");
        let t: Vec<f64> = column(&r, "members_n").iter().enumerate().map(|(k, _)| k as f64).collect();
        let times: Vec<f64> = r
            .flow_series
            .f64("time_s")
            .iter()
            .zip(r.flow_series.i64("flow"))
            .filter(|(&t, &f)| f == 0 && t >= 1.0)
            .map(|(t, _)| *t)
            .collect();
        assert_eq!(t.len(), times.len());
        let at = |s: f64| n[times.iter().position(|&x| x >= s).expect("a sample")];
        // The 30 KB member is done before the 400 KB one joins at 12 s.
        assert!(done[0] < 2.0, "{cc}: {}", done[0]);
        assert_eq!((at(9.0), at(10.05), at(12.05), at(done[1] + 11.9)), (4.0, 5.0, 5.0, 5.0), "{cc}");
        assert_eq!(*n.last().unwrap(), 4.0, "{cc}: both members left");
    }
}

/// Per-loop accounting through SACK recovery, driving a sender by hand: segments carry the
/// loop that admitted them, a hole in a probe segment cuts the probe loop alone, and the
/// segments SACKed during the recovery grow each loop by its own deliveries.
#[test]
fn losses_and_deliveries_are_accounted_per_loop_through_sack_recovery() {
    let s = scenario::from_toml(&common::dumbbell(1, r#"rate = "10Mbps", delay = "10ms""#, "[[flows]]\n")).unwrap();
    let mut cfg = s.build().unwrap().conns[0].tcp;
    cfg.recovery = Recovery::Sack;
    cfg.initial_window = 4.0;
    let params = PaMulTcpParams {
        n: 4,
        assignment: Assignment::Interleave,
        timeout: TimeoutRule::Owner,
        adjust_weight: AdjustWeight::NMinus1,
    };
    let mut cc = CcHost::new();
    let g: GroupId = cc.add_group(Box::new(PaMulTcp::new(params, 0, &[])));
    let mut snd = Sender::new(0, cfg, None, cfg.mss, Controller::Group(g));
    let mut out = Vec::new();
    snd.start(0, &mut cc, &mut out);
    let m = snd.member().unwrap();
    let metric = |cc: &CcHost, name: &str| {
        let mut v = f64::NAN;
        cc.metrics(m, &mut |n, x| {
            if n == name {
                v = x;
            }
        });
        v
    };
    // Interleaved: 4 + 4 segments alternate between the loops, adjusting first.
    let tags: Vec<u8> = out.iter().map(|p| p.tag).collect();
    assert_eq!(tags, vec![ADJUST, PROBE, ADJUST, PROBE, ADJUST, PROBE, ADJUST, PROBE]);
    assert_eq!(cc.state(m).cwnd, 8.0);
    // Segment 1 (probe) is lost: ACKs of 1 with SACKs of 2.., one per segment that arrives.
    let mut now = 30 * MS;
    let ack = |snd: &mut Sender, cc: &mut CcHost, upto: u64, now: Time, out: &mut Vec<Packet>| {
        let mut p = Packet::new(0, Kind::Ack, 1, 40, 0);
        p.ts = 0;
        p.push_sack_block(2, upto);
        snd.on_ack(now, &p, cc, out);
    };
    out.clear();
    // The ACK of segment 0 (adjusting) grows the adjusting loop only.
    let mut first = Packet::new(0, Kind::Ack, 1, 40, 0);
    first.ts = 0;
    snd.on_ack(now, &first, &mut cc, &mut out);
    assert_eq!((metric(&cc, "probe_cwnd"), metric(&cc, "adjust_cwnd")), (4.0, 5.0));
    for upto in 3..=5 {
        now += MS;
        ack(&mut snd, &mut cc, upto, now, &mut out);
    }
    // Three SACKed segments above segment 1: fast retransmit, the probe loop halves.
    assert!(out.iter().any(|p| p.seq == 1 && p.retx() && p.tag == PROBE), "segment 1 resent as a probe segment");
    // Segments 2 and 4 (adjusting) and 3 (probe) were SACKed first, +1 each in slow start:
    // the probe loop halved from 5, the adjusting loop is at 7.
    assert_eq!(metric(&cc, "probe_cwnd"), 2.5, "the probe loop halved");
    let adjust = metric(&cc, "adjust_cwnd");
    assert_eq!(adjust, 7.0, "the adjusting loop was not cut");
    // The probe loss sets W_max for p = 8/(3·5²) and N' = 3: 16.59/sqrt(18p) = 11.97.
    assert!((metric(&cc, "w_max") - 11.97).abs() < 0.01, "W_max {}", metric(&cc, "w_max"));
    // More SACKs during the recovery: the adjusting loop grows, the probe loop holds.
    for upto in 6..=9 {
        now += MS;
        ack(&mut snd, &mut cc, upto, now, &mut out);
    }
    assert_eq!(metric(&cc, "probe_cwnd"), 2.5, "no growth in the probe loop's recovery");
    assert_eq!(metric(&cc, "adjust_cwnd"), adjust + 2.0, "the adjusting loop grew on its SACKed 6 and 8");
    assert_eq!(cc.state(m).cwnd, metric(&cc, "probe_cwnd") + metric(&cc, "adjust_cwnd"));
}

#[test]
fn scenario_errors_name_the_field() {
    let err = |flow: &str| {
        let toml = common::dumbbell(1, r#"rate = "10Mbps", delay = "10ms""#, flow);
        match scenario::from_toml(&toml).and_then(|s| s.build().map(|_| ())) {
            Ok(()) => panic!("accepted: {flow}"),
            Err(e) => e.to_string(),
        }
    };
    let e =
        err("[[flows]]\ntcp = { recovery = \"sack\" }\naggregate = { joins = [{ at = \"1s\", size = \"1KB\" }] }\n");
    assert!(e.contains("flows[0].aggregate") && e.contains("pamultcp"), "{e}");
    let e = err("[[flows]]\ntcp = { cc = { algo = \"pamultcp\", n = 4 } }\n");
    assert!(e.contains("flows[0].tcp.recovery") && e.contains("sack"), "{e}");
    let e = err("[[flows]]\ntcp = { recovery = \"sack\", cc = { algo = \"pamultcp\", n = 1 } }\n");
    assert!(e.contains("n: must be a whole number of flows from 2"), "{e}");
    let e = err("[[flows]]\nsize = \"1MB\"\ntcp = { recovery = \"sack\", cc = { algo = \"mpat\", n = 2 } }\naggregate = { joins = [{ at = \"1s\", size = \"1KB\" }] }\n");
    assert!(e.contains("flows[0].aggregate") && e.contains("size"), "{e}");
    let e = err("[[flows]]\nstart = \"2s\"\ntcp = { recovery = \"sack\", cc = { algo = \"mpat\", n = 2 } }\naggregate = { joins = [{ at = \"1s\", size = \"1KB\" }] }\n");
    assert!(e.contains("flows[0].aggregate.joins[0].at"), "{e}");
    assert!(!e.contains('\n'), "one line: {e}");
}
