//! MulTFRC (draft-welzl-multfrc-01) in whole simulations: under random loss it sends about
//! `n` times what a TFRC flow sends, for n below and above 1; it shares a RED bottleneck with
//! TCP about as `n` TCP flows would; its options are checked with errors naming the field.

use flowshare_core::results::RunResults;
use flowshare_core::scenario;

mod common;

use common::{assert_conservation, run};

/// One TFRC flow over a 100 Mbps, 20 ms bottleneck that loses 1 % of the packets.
fn lossy(seconds: u32, tfrc: &str) -> String {
    common::lossy_tfrc(seconds, 3, 20, tfrc)
}

/// Goodput of flow 0, bytes/s.
fn goodput(r: &RunResults) -> f64 {
    r.flows.f64("goodput_bps")[0] / 8.0
}

/// Goodput of MulTFRC with `n` over that of TFRC under the same 1 % loss.
fn ratio_to_tfrc(n: f64, seconds: u32) -> f64 {
    let tfrc = run(&lossy(seconds, ""));
    let mul = run(&lossy(seconds, &format!("equation = \"multfrc\"\nn = {n}")));
    assert_conservation(&mul);
    let (x, x1) = (goodput(&mul), goodput(&tfrc));
    let j = mul.flows.f64("tfrc_j_final")[0];
    eprintln!(
        "n = {n}: MulTFRC {x:.0} B/s (loss event rate {:.5}, j {j:.3}), TFRC {x1:.0} B/s (loss event rate {:.5}): {:.3}",
        mul.flows.f64("loss_event_rate")[0],
        tfrc.flows.f64("loss_event_rate")[0],
        x / x1
    );
    // Packets lost per loss event: at least one, and a few at most at 1 % loss.
    assert!((1.0..3.0).contains(&j), "j {j}");
    x / x1
}

#[test]
fn n_of_one_behaves_like_tfrc() {
    let k = ratio_to_tfrc(1.0, 60);
    assert!((k - 1.0).abs() < 0.15, "{k}");
}

#[test]
fn n_of_four_sends_about_four_tfrc_rates() {
    let k = ratio_to_tfrc(4.0, 60);
    assert!((3.0..5.0).contains(&k), "{k}");
}

#[test]
fn n_of_one_half_sends_about_half() {
    let k = ratio_to_tfrc(0.5, 60);
    assert!((0.35..0.65).contains(&k), "{k}");
}

#[test]
fn n_of_two_against_two_newreno_flows_on_red() {
    // Measured from 10 s on, past the slow starts. TFRC itself gets about 0.6 of one NewReno
    // flow's goodput in this setup (measured the same way), so MulTFRC is expected below,
    // not at, the share of two TCP flows.
    let r = run(&common::dumbbell(
        60,
        r#"rate = "10Mbps", delay = "20ms", queue = { kind = "red", limit = 60, min_th = 5, max_th = 15, max_p = 0.1, w_q = 0.002, mode = "packets" }"#,
        r#"
[[flows]]
name = "multfrc"
transport = "tfrc"
[flows.tfrc]
equation = "multfrc"
n = 2
[[flows]]
name = "reno"
count = 2
start_spacing = "100ms"
"#,
    )
    .replace("seed = 5", "seed = 5\nwarmup = \"10s\""));
    assert_conservation(&r);
    let g = r.flows.f64("goodput_bps");
    let (mul, tcp) = (g[0], g[1] + g[2]);
    eprintln!("MulTFRC n = 2: {mul:.0} b/s, two NewReno: {tcp:.0} b/s ({:.3})", mul / tcp);
    assert!(mul + tcp > 0.85 * 10e6, "the link is used: {}", mul + tcp);
    assert!(mul > 0.5 * tcp && mul < 2.0 * tcp, "MulTFRC {mul} against two NewReno {tcp}");
}

#[test]
fn errors_name_the_field() {
    let err = |text: &str| match scenario::from_toml(text).and_then(|s| s.build().map(|_| ())) {
        Ok(()) => panic!("accepted {text}"),
        Err(e) => e.to_string(),
    };
    let one = |tfrc: &str| err(&lossy(10, tfrc));
    assert_eq!(
        one("equation = \"multfrc\"\nn = 8"),
        "flows[0].tfrc.n: 8 exceeds max_n = 6 (draft-welzl-multfrc-01 §3; raise max_n to allow it)"
    );
    assert_eq!(one("equation = \"multfrc\"\nn = -1"), "flows[0].tfrc.n: expected a number above 0, got -1");
    assert_eq!(
        one("n = 2"),
        "flows[0].tfrc.equation: n, max_n, j, improved_j_below and first_event_lost need equation = \"multfrc\""
    );
    assert!(one("equation = \"multcp\"").starts_with("flows[0].tfrc.equation:"), "{}", one("equation = \"multcp\""));
    assert!(one("equation = \"multfrc\"\nj = \"old\"").starts_with("flows[0].tfrc.j:"));
    // The sum over connections: 2 × 4 = 8 above the default 6, named per group.
    let two = lossy(10, "equation = \"multfrc\"\nn = 4\nmax_n = 10").replace("name = \"f\"", "name = \"f\"\ncount = 2");
    assert_eq!(
        err(&two),
        "simulation.multfrc_max_total_n: the MulTFRC connections' n add up to 8 (f 2 × n = 4), above 6 \
         (draft-welzl-multfrc-01 §4; raise multfrc_max_total_n to allow it)"
    );
    let raised = two.replace("warmup = \"5s\"", "warmup = \"5s\"\nmultfrc_max_total_n = 8");
    scenario::from_toml(&raised).unwrap().build().map(|_| ()).unwrap();
    // Written out in the normalized scenario, and read back the same.
    let json = scenario::from_toml(&raised).unwrap().to_json();
    assert!(
        json.contains(r#""multfrc_max_total_n":8.0"#) && json.contains(r#""equation":"multfrc","n":4.0"#),
        "{json}"
    );
    assert_eq!(scenario::from_json(&json).unwrap().to_json(), json);
}

#[test]
fn same_seed_same_results() {
    let text = lossy(20, "equation = \"multfrc\"\nn = 3\ndiscount = true");
    let (a, b) = (run(&text), run(&text));
    for col in ["bytes_delivered", "packets_sent", "loss_events"] {
        assert_eq!(a.flows.i64(col), b.flows.i64(col), "{col}");
    }
    assert_eq!(a.flows.f64("tfrc_rate_final_bps"), b.flows.f64("tfrc_rate_final_bps"));
}
