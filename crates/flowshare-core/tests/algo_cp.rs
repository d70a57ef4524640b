//! CP (Ott, Sparks and Mayer-Patel, INFOCOM 2004) in whole simulations: with n = 4 flow shares
//! under random loss it sends about four times what a TFRC flow sends, and the loss event rate
//! it reports (measured on a 1/n sample of its packets) is about a TFRC flow's, above the lower
//! one of its whole packet stream; runs repeat exactly; n ≤ 1 is refused with the field named.

use flowshare_core::results::RunResults;
use flowshare_core::scenario;

mod common;

use common::{assert_conservation, lossy_tfrc as lossy, run};

/// What one run tells about flow 0.
struct Measured {
    /// Goodput, bytes/s.
    goodput: f64,
    /// The loss event rate the receiver reported, averaged over time.
    reported: f64,
    /// Loss events of the whole packet stream per packet received.
    whole: f64,
}

fn measure(r: &RunResults) -> Measured {
    let f = &r.flows;
    Measured {
        goodput: f.f64("goodput_bps")[0] / 8.0,
        reported: f.f64("loss_event_rate_mean")[0],
        whole: f.i64("loss_events")[0] as f64 / f.i64("packets_received")[0] as f64,
    }
}

/// TFRC and CP with `n` over the same loss, summed over seeds 1 to 3.
fn compare(n: f64, delay_ms: u32) -> (Measured, Measured) {
    let mut sums = [(0.0, 0.0, 0.0), (0.0, 0.0, 0.0)];
    for seed in 1..=3 {
        for (k, tfrc) in ["".to_string(), format!("equation = \"cp\"\nn = {n}")].iter().enumerate() {
            let r = run(&lossy(60, seed, delay_ms, tfrc));
            assert_conservation(&r);
            let m = measure(&r);
            sums[k].0 += m.goodput / 3.0;
            sums[k].1 += m.reported / 3.0;
            sums[k].2 += m.whole / 3.0;
        }
    }
    let [t, c] = sums.map(|(goodput, reported, whole)| Measured { goodput, reported, whole });
    eprintln!(
        "delay {delay_ms} ms: TFRC {:.0} B/s, p reported {:.5}, whole stream {:.5}; CP n = {n}: {:.0} B/s ({:.3}x), \
         p reported {:.5}, whole stream {:.5}",
        t.goodput,
        t.reported,
        t.whole,
        c.goodput,
        c.goodput / t.goodput,
        c.reported,
        c.whole
    );
    (t, c)
}

#[test]
fn four_shares_send_about_four_tfrc_rates_at_one_shares_loss_event_rate() {
    for delay_ms in [20, 50] {
        let (t, c) = compare(4.0, delay_ms);
        let k = c.goodput / t.goodput;
        assert!((3.0..5.0).contains(&k), "delay {delay_ms} ms: {k}");
        // The reported p is a TFRC flow's (within 25 %)...
        let rel = c.reported / t.reported;
        assert!((0.75..1.25).contains(&rel), "delay {delay_ms} ms: p {} vs TFRC {}", c.reported, t.reported);
        // ...and well above that of CP's whole packet stream, whose loss events, with four
        // times as many packets per RTT, merge more losses (TFRC's own reported p is about
        // 1.1 times its long-run loss events per packet: the time average weighs the short
        // intervals longer).
        assert!(c.reported > 1.3 * c.whole, "delay {delay_ms} ms: p {} vs whole {}", c.reported, c.whole);
        assert!(t.reported < 1.25 * t.whole, "delay {delay_ms} ms: TFRC p {} vs whole {}", t.reported, t.whole);
    }
}

#[test]
fn two_and_a_half_shares() {
    let (t, c) = compare(2.5, 20);
    let k = c.goodput / t.goodput;
    assert!((1.9..3.1).contains(&k), "{k}");
}

#[test]
fn same_seed_same_results() {
    let text = lossy(20, 3, 20, "equation = \"cp\"\nn = 3\ndiscount = true");
    let (a, b) = (run(&text), run(&text));
    for col in ["bytes_delivered", "packets_sent", "loss_events"] {
        assert_eq!(a.flows.i64(col), b.flows.i64(col), "{col}");
    }
    assert_eq!(a.flows.f64("tfrc_rate_final_bps"), b.flows.f64("tfrc_rate_final_bps"));
    assert_eq!(a.flows.f64("loss_event_rate_mean"), b.flows.f64("loss_event_rate_mean"));
}

#[test]
fn errors_name_the_field() {
    let err = |tfrc: &str| match scenario::from_toml(&lossy(10, 1, 20, tfrc)).and_then(|s| s.build().map(|_| ())) {
        Ok(()) => panic!("accepted {tfrc}"),
        Err(e) => e.to_string(),
    };
    let shares = |n: &str| {
        format!(
            "flows[0].tfrc.n: expected a number of flow shares above 1 and at most 1000 for equation = \"cp\", got {n}"
        )
    };
    assert_eq!(err("equation = \"cp\"\nn = 1"), shares("1"));
    assert_eq!(err("equation = \"cp\"\nn = 0.5"), shares("0.5"));
    assert_eq!(err("equation = \"cp\"\nn = -2"), shares("-2"));
    assert_eq!(err("equation = \"cp\""), shares("1"));
    assert_eq!(
        err("equation = \"cp\"\nn = 4\nj = \"one\""),
        "flows[0].tfrc.equation: max_n, j, improved_j_below and first_event_lost need equation = \"multfrc\""
    );
    // Written out in the normalized scenario, and read back the same.
    let json = scenario::from_toml(&lossy(10, 1, 20, "equation = \"cp\"\nn = 4")).unwrap().to_json();
    assert!(json.contains(r#""equation":"cp","n":4.0"#), "{json}");
    assert_eq!(scenario::from_json(&json).unwrap().to_json(), json);
}
