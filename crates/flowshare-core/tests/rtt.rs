//! A flow group's `rtt`: the access delays are derived so that the path's two-way propagation
//! delay equals it, and the smallest RTT a sender measures is that plus serialization.

use flowshare_core::scenario::from_toml;

mod common;

use common::run;

/// Serialization of one 1500 B data segment on the three links of a dumbbell path and of its
/// 40 B ACK on the way back: access links at `access_bps`, the bottleneck at `bn_bps`.
fn serialization_s(access_bps: f64, bn_bps: f64) -> f64 {
    let bits = |bytes: f64| bytes * 8.0;
    2.0 * bits(1500.0) / access_bps + bits(1500.0) / bn_bps + 2.0 * bits(40.0) / access_bps + bits(40.0) / bn_bps
}

fn scenario(bottleneck: &str, flows: &str) -> String {
    format!(
        r#"
[simulation]
duration = "2s"
[topology]
kind = "dumbbell"
bottleneck = {bottleneck}
access = {{ rate = "100Mbps", delay = "7ms", queue = {{ limit = 1000 }} }}
{flows}
"#
    )
}

#[test]
fn the_smallest_measured_rtt_is_the_stated_rtt_plus_serialization() {
    // One flow per run, so that no other flow's packets queue ahead of its first segment.
    let groups: [(&str, Option<f64>); 4] = [
        ("rtt = \"40ms\"", Some(0.040)),
        ("rtt = \"200ms\"", Some(0.200)),
        ("rtt = \"33.333333ms\"\ndirection = \"reverse\"", Some(0.033_333_333)),
        // No rtt: the access delays as written (7 ms each way on both sides).
        ("", None),
    ];
    for bottleneck in [
        r#"{ rate = "10Mbps", delay = "10ms", queue = { limit = 100 } }"#,
        // Asymmetric: 10 ms one way, 4 ms the other; the RTT still holds.
        r#"{ rate = "10Mbps", delay = "10ms", queue = { limit = 100 }, reverse = { delay = "4ms" } }"#,
    ] {
        let bn_two_way = if bottleneck.contains("4ms") { 0.014 } else { 0.020 };
        for (group, stated) in groups {
            let r = run(&scenario(bottleneck, &format!("[[flows]]\n{group}")));
            let min = r.flows.f64("rtt_min_s")[0];
            let want = stated.unwrap_or(bn_two_way + 4.0 * 0.007) + serialization_s(100e6, 10e6);
            assert!((min - want).abs() < 2e-9, "{group:?} on {bottleneck}: min RTT {min} s, expected {want} s");
        }
    }
}

#[test]
fn the_rtt_is_checked() {
    let err =
        |bottleneck: &str, flows: &str| from_toml(&scenario(bottleneck, flows)).and_then(|s| s.build().map(|_| ()));
    let bn = r#"{ rate = "10Mbps", delay = "30ms" }"#;
    let e = err(bn, "[[flows]]\nrtt = \"50ms\"").unwrap_err().to_string();
    assert_eq!(
        e,
        "flows[0].rtt: 50ms is less than the bottleneck's own two-way propagation delay (60ms); the RTT must be at least that"
    );
    // Exactly the bottleneck's: zero access delay, accepted.
    assert!(err(bn, "[[flows]]\nrtt = \"60ms\"").is_ok());
    let e = err(bn, "[[flows]]\nrtt = \"100ms\"\nsrc_access = { delay = \"1ms\" }").unwrap_err().to_string();
    assert!(e.starts_with("flows[0].src_access.delay: cannot be given with the group's rtt"), "{e}");
    let e =
        err(bn, "[[flows]]\nrtt = \"100ms\"\ndst_access = { reverse = { delay = \"1ms\" } }").unwrap_err().to_string();
    assert!(e.starts_with("flows[0].dst_access.reverse.delay: cannot be given"), "{e}");
    // Other access fields still apply.
    assert!(err(bn, "[[flows]]\nrtt = \"100ms\"\nsrc_access = { rate = \"1Gbps\" }").is_ok());
    let e = err(bn, "[[flows]]\nrtt = 80").unwrap_err().to_string();
    assert!(e.starts_with("flows[0].rtt: 80 has no unit; write a time such as \"80ms\""), "{e}");
    let lot = r#"
[simulation]
duration = "1s"
[topology]
kind = "parking_lot"
routers = 3
link = { rate = "10Mbps", delay = "5ms" }
access = { rate = "100Mbps", delay = "1ms" }
[[flows]]
from = 0
to = 2
rtt = "50ms"
"#;
    let e = from_toml(lot).and_then(|s| s.build().map(|_| ())).unwrap_err().to_string();
    assert!(e.starts_with("flows[0].rtt: only allowed with topology kind \"dumbbell\""), "{e}");
}
