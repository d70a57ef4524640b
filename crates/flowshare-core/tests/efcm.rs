//! EFCM ensembles end to end (`tcp.ensemble`, ADR 0010): connections of one host to one
//! receiver network hold equal windows, a single loss reduces the ensemble's aggregate window
//! by 1/(2n) and every member's share with it, and transfers opened at run time join the
//! ensemble of a running flow.

mod common;

use flowshare_core::results::RunResults;

/// Sender S, routers A and B joined by a 10 Mbps, 20 ms link with a queue too long to
/// overflow in these runs, receivers R1 (1 ms) and R2 (30 ms) behind B; `flows` appended.
fn graph(seconds: u32, flows: &str) -> String {
    format!(
        r#"
[simulation]
duration = "{seconds}s"
seed = 3
sample_interval = "10ms"
[topology]
kind = "graph"
nodes = ["S", "A", "B", "R1", "R2"]
links = [
  {{ from = "S", to = "A", rate = "1Gbps", delay = "1ms", queue = {{ limit = 10000 }} }},
  {{ from = "A", to = "B", rate = "10Mbps", delay = "20ms", queue = {{ limit = 10000 }} }},
  {{ from = "B", to = "R1", rate = "1Gbps", delay = "1ms", queue = {{ limit = 10000 }} }},
  {{ from = "B", to = "R2", rate = "1Gbps", delay = "30ms", queue = {{ limit = 10000 }} }},
]
{flows}
"#
    )
}

/// The study's TCP settings (initial window 3, initial ssthresh 44) and an ensemble table.
fn tcp(ensemble: &str) -> String {
    format!("tcp = {{ recovery = \"newreno\", initial_window = 3, initial_ssthresh = 44{ensemble} }}")
}

/// The sampled cwnd of flow `flow`: (time, cwnd).
fn cwnd_series(r: &RunResults, flow: i64) -> Vec<(f64, f64)> {
    let s = &r.flow_series;
    let (t, f, w) = (s.f64("time_s"), s.i64("flow"), s.f64("cwnd"));
    (0..t.len()).filter(|&i| f[i] == flow).map(|i| (t[i], w[i])).collect()
}

fn two_receivers(key: &str) -> String {
    let ens = format!(", ensemble = {{ controller = \"efcm\", key = \"{key}\" }}");
    graph(
        4,
        &format!(
            "[[flows]]\nname = \"near\"\nsrc = \"S\"\ndst = \"R1\"\n{}\n\
             [[flows]]\nname = \"far\"\nsrc = \"S\"\ndst = \"R2\"\nstart = \"300ms\"\n{}\n",
            tcp(&ens),
            tcp(&ens)
        ),
    )
}

#[test]
fn members_of_one_receiver_network_hold_equal_windows_at_every_sample() {
    let r = common::run(&two_receivers("network"));
    common::assert_conservation(&r);
    assert_eq!(r.flows.i64("drops").iter().sum::<i64>(), 0, "no loss in this run");
    let (near, far) = (cwnd_series(&r, 0), cwnd_series(&r, 1));
    let both: Vec<(f64, f64, f64)> =
        near.iter().zip(&far).filter(|(a, _)| a.0 > 0.3).map(|(a, b)| (a.0, a.1, b.1)).collect();
    assert!(both.len() > 300);
    for &(t, a, b) in &both {
        assert_eq!(a, b, "windows differ at {t} s");
    }
    assert!(both.iter().any(|&(_, a, _)| a > 44.0), "the shared window passed the shared ssthresh");
    // With key = "receiver" the two receivers make two ensembles: the far flow, with the longer
    // RTT, has its own window.
    let r = common::run(&two_receivers("receiver"));
    let (near, far) = (cwnd_series(&r, 0), cwnd_series(&r, 1));
    let same = near.iter().zip(&far).filter(|(a, b)| a.0 > 0.3 && a.1 == b.1).count();
    assert!(same * 10 < near.len(), "separate ensembles had equal windows in {same} samples");
}

/// Two bulk flows to R1; the first loses its segment 400 once. NewReno halves that flow's
/// window; EFCM re-shares, so both hold 3/4 of their window before the loss: the aggregate
/// is cut by 1/(2n) = 1/4, and the flow without a loss is cut too.
#[test]
fn a_single_loss_cuts_the_aggregate_by_one_over_2n() {
    let ens = ", ensemble = { controller = \"efcm\", key = \"receiver\" }";
    let flows = |ens: &str| {
        format!(
            "[[flows]]\nname = \"lossy\"\nsrc = \"S\"\ndst = \"R1\"\ndrop_segments = [400]\n{}\n\
             [[flows]]\nname = \"clean\"\nsrc = \"S\"\ndst = \"R1\"\n{}\n",
            tcp(ens),
            tcp(ens)
        )
    };
    let ratio_of_clean = |r: &RunResults| {
        let (lossy, clean) = (cwnd_series(r, 0), cwnd_series(r, 1));
        // The first sample at which the lossy flow's reported window fell.
        let k = (1..lossy.len()).find(|&k| lossy[k].1 < lossy[k - 1].1).expect("a reduction");
        (clean[k].1 / clean[k - 1].1, lossy[k].1 / lossy[k - 1].1, lossy, clean, k)
    };
    let r = common::run(&graph(4, &flows(ens)));
    common::assert_conservation(&r);
    assert_eq!(r.flows.i64("fast_retransmits"), &[1, 0]);
    let (clean_ratio, _, lossy, clean, k) = ratio_of_clean(&r);
    assert!((clean_ratio - 0.75).abs() < 0.03, "clean flow's window cut to {clean_ratio} of it");
    // Once the lossy flow has left recovery both hold the same share again, 3/4 of the old one
    // plus the growth since.
    let after = (k..lossy.len()).find(|&j| lossy[j].1 == clean[j].1).expect("equal windows again");
    assert!(lossy[after].0 - lossy[k].0 < 0.3, "recovery took one or two RTTs");
    let aggregate = (lossy[after].1 + clean[after].1) / (lossy[k - 1].1 + clean[k - 1].1);
    assert!((aggregate - 0.75).abs() < 0.05, "aggregate cut to {aggregate}");
    // Without the ensemble the lossy flow halves and the other keeps its window.
    let plain = common::run(&graph(4, &flows("")));
    let (clean_ratio, lossy_ratio, ..) = ratio_of_clean(&plain);
    assert!(clean_ratio >= 1.0, "plain clean flow kept its window: {clean_ratio}");
    assert!((lossy_ratio - 0.5).abs() < 0.05, "plain lossy flow halved: {lossy_ratio}");
}

/// Transfers opened by an arrival process from S to R1 join the ensemble of a bulk flow from
/// S to R1: at every sample where one runs, it holds the bulk flow's window (a lone transfer
/// would start from 3 segments).
#[test]
fn transfers_opened_at_run_time_join_the_ensemble_of_a_running_flow() {
    let ens = ", ensemble = { controller = \"efcm\", key = \"receiver\" }";
    let scenario = |ens: &str| {
        graph(
            3,
            &format!(
                "[[flows]]\nname = \"bulk\"\nsrc = \"S\"\ndst = \"R1\"\n{}\n\
                 [[flows]]\nname = \"pages\"\nsrc = \"S\"\ndst = \"R1\"\nstart = \"1s\"\n{}\n\
                 [flows.arrivals]\nprocess = \"trace\"\n\
                 transfers = [[\"0s\", \"500KB\"], [\"0.5s\", \"500KB\"], [\"0.55s\", \"500KB\"]]\n",
                tcp(ens),
                tcp(ens)
            ),
        )
    };
    let shared = |r: &RunResults| {
        let s = &r.flow_series;
        let (t, f, w) = (s.f64("time_s"), s.i64("flow"), s.f64("cwnd"));
        let bulk: std::collections::HashMap<u64, f64> =
            (0..t.len()).filter(|&i| f[i] == 0).map(|i| (t[i].to_bits(), w[i])).collect();
        let rows: Vec<(f64, f64)> = (0..t.len()).filter(|&i| f[i] > 0).map(|i| (w[i], bulk[&t[i].to_bits()])).collect();
        (rows.iter().filter(|(a, b)| a == b).count(), rows.len())
    };
    let r = common::run(&scenario(ens));
    assert_eq!(r.transfers.rows(), 3);
    let (equal, n) = shared(&r);
    assert!(n > 20, "{n} samples of transfers");
    assert_eq!(equal, n, "transfers hold the bulk flow's window");
    let (equal, n) = shared(&common::run(&scenario("")));
    assert!(equal * 10 < n, "plain transfers have windows of their own ({equal} of {n})");
}

/// A member whose backed-off retransmission times out again re-shares the ensemble's window at
/// once (the Loss phase does not change, so no phase hook runs). Two senders with initial window
/// 10 and ssthresh 44 share 10/44; segments 0–9 of a are lost. First timeout: ssthresh
/// max(10/2, 2) = 5, cwnd 1, both (1 + 10)/2 = 5.5 and (5 + 44)/2 = 24.5. Second timeout:
/// ssthresh max(⌈5.5⌉/2, 2) = 3, cwnd 1, both (1 + 5.5)/2 = 3.25 and (3 + 24.5)/2 = 13.75.
#[test]
fn a_repeated_timeout_of_one_sender_re_shares_the_ensemble_at_once() {
    use flowshare_core::cc::efcm::{Efcm, EfcmParams};
    use flowshare_core::cc::CcHost;
    use flowshare_core::tcp::{Controller, Sender};
    let text = graph(1, &format!("[[flows]]\nname = \"f\"\nsrc = \"S\"\ndst = \"R1\"\n{}\n", tcp("")))
        .replace("initial_window = 3", "initial_window = 10");
    let cfg = flowshare_core::scenario::from_toml(&text).unwrap().build().unwrap().conns[0].tcp;
    let mut cc = CcHost::new();
    // Neither pacing nor ACK clocking: only the senders' own events move the windows.
    let params = EfcmParams { pacing: false, ack_clocking: false, ..EfcmParams::default() };
    let gid = cc.add_group(Box::new(Efcm::new(params)));
    let mut out = Vec::new();
    let mut senders: Vec<Sender> = (0..2).map(|i| Sender::new(i, cfg, None, cfg.mss, Controller::Group(gid))).collect();
    for s in &mut senders {
        s.start(0, &mut cc, &mut out);
    }
    let windows = |senders: &[Sender], cc: &CcHost| -> Vec<(f64, f64)> {
        senders.iter().map(|s| s.cc_state(cc)).map(|st| (st.cwnd, st.ssthresh)).collect()
    };
    assert_eq!(windows(&senders, &cc), [(10.0, 44.0); 2]);
    // Only a's timer is driven: nothing of a's comes back.
    let a = &mut senders[0];
    let first = a.next_wake().expect("a's retransmission timer");
    a.on_wake(first, &mut cc, &mut out);
    assert_eq!(a.stats.timeouts, 1);
    assert_eq!(windows(&senders, &cc), [(5.5, 24.5); 2]);
    let a = &mut senders[0];
    let second = a.next_wake().expect("the backed-off timer");
    assert!(second > first);
    a.on_wake(second, &mut cc, &mut out);
    assert_eq!((a.stats.timeouts, a.backoff()), (2, 4));
    assert_eq!(windows(&senders, &cc), [(3.25, 13.75); 2]);
}

/// Groups `a` (initial window 3, ssthresh 44) and `b` (10, 20) open transfers from S to R1 in
/// one ensemble; `c`, a plain group to R2 with unbounded ssthresh, opens one too large to
/// finish. Checks the transfers table's start values: a's first transfer starts alone (3, 44, no
/// RTT); b's at the same instant joins it, (3 + 10)/2 = 6.5 and (44 + 20)/2 = 32; b's second,
/// at 1 s, inherits the ensemble's SRTT and RTTVAR.
#[test]
fn transfers_record_the_window_and_rtt_they_start_with() {
    let ens = ", ensemble = { controller = \"efcm\", key = \"receiver\" }";
    let flows = format!(
        "[[flows]]\nname = \"a\"\nsrc = \"S\"\ndst = \"R1\"\n{}\n\
         [flows.arrivals]\nprocess = \"trace\"\ntransfers = [[\"0s\", \"1MB\"]]\n\
         [[flows]]\nname = \"b\"\nsrc = \"S\"\ndst = \"R1\"\n{}\n\
         [flows.arrivals]\nprocess = \"trace\"\ntransfers = [[\"0s\", \"20KB\"], [\"1s\", \"20KB\"]]\n\
         [[flows]]\nname = \"c\"\nsrc = \"S\"\ndst = \"R2\"\ntcp = {{ initial_window = 3 }}\n\
         [flows.arrivals]\nprocess = \"trace\"\ntransfers = [[\"0s\", \"50MB\"]]\n",
        tcp(ens),
        tcp(ens).replace("initial_window = 3, initial_ssthresh = 44", "initial_window = 10, initial_ssthresh = 20"),
    );
    let r = common::run(&graph(5, &flows));
    let t = &r.transfers;
    let names: Vec<&str> = t.columns.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        [
            "transfer",
            "name",
            "user",
            "start_s",
            "size_bytes",
            "completion_time_s",
            "goodput_bps",
            "packets_sent",
            "retransmits",
            "timeouts",
            "drops",
            "initial_cwnd",
            "initial_ssthresh",
            "initial_srtt_s",
            "initial_rttvar_s",
            "rtt_min_s",
            "sent_bytes",
            "session",
            "document",
        ]
    );
    // Rows by transfer number, in order of opening: a's (0), b's first (1), c's (2), b's
    // second (3); the table lists them in the order they finished.
    let row = |id: i64| t.i64("transfer").iter().position(|&x| x == id).expect("a row");
    let (a, b0, c, b1) = (row(0), row(1), row(2), row(3));
    let Some(flowshare_core::results::Column::Str(name)) = t.get("name") else { panic!("a name column") };
    assert_eq!([&name[a], &name[b0], &name[b1], &name[c]], ["a", "b", "b", "c"]);
    let (cwnd, ssthresh) = (t.f64("initial_cwnd"), t.f64("initial_ssthresh"));
    let (srtt, rttvar, rtt_min) = (t.f64("initial_srtt_s"), t.f64("initial_rttvar_s"), t.f64("rtt_min_s"));
    assert_eq!((cwnd[a], ssthresh[a]), (3.0, 44.0));
    assert_eq!((cwnd[b0], ssthresh[b0]), (6.5, 32.0));
    assert_eq!((cwnd[c], ssthresh[c].is_nan()), (3.0, true), "plain: the configured window, no ssthresh");
    for k in [a, b0, c] {
        assert!(srtt[k].is_nan() && rttvar[k].is_nan(), "no estimate to start from");
    }
    // At 1 s a is still running: the ensemble has its RTT samples (44 ms of propagation and
    // the queue of two transfers on 10 Mbps).
    assert!(srtt[b1] > 0.044 && srtt[b1] < 0.5 && rttvar[b1] > 0.0, "{} {}", srtt[b1], rttvar[b1]);
    // The smallest samples: the 44 ms and 102 ms propagation RTTs plus transmission times.
    assert!(rtt_min[b0] > 0.044 && rtt_min[b0] < 0.048, "{}", rtt_min[b0]);
    assert!(rtt_min[c] > 0.102 && rtt_min[c] < 0.106, "{}", rtt_min[c]);
    let (size, sent, done) = (t.i64("size_bytes"), t.i64("sent_bytes"), t.f64("completion_time_s"));
    for k in [a, b0, b1] {
        assert!(!done[k].is_nan());
        assert_eq!(sent[k], size[k], "a completed transfer sent every byte");
    }
    // c is unfinished after 5 s: it sent whole segments of new data, far fewer than 50 MB.
    assert!(done[c].is_nan());
    assert!(sent[c] > 0 && sent[c] % 1460 == 0 && sent[c] < 10_000_000, "{}", sent[c]);
}
