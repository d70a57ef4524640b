//! `flowshare-sim [--detail] SCENARIO.toml|.json`: run a scenario from Rust alone and print one
//! JSON line.
//!
//! This is what `python3 -m bench` times against ns-2 and ns-3 as a whole process, and what a
//! profiler should be pointed at. Output keys: `wall_s` (seconds in the event loop), `events`,
//! `acked_pkts` and `goodput_mbps` (computed as the ns-2 reference script does: segments
//! cumulatively acknowledged × MSS × 8 / duration; UDP flows count packets received), `drops` (all queues), `flows`.
//!
//! `--detail` adds `per_flow` (one object per flow: `acked_pkts`, `cwnd_mean`, `drops`,
//! `retransmits`, `timeouts`) and `queues` (one object per link direction that carried
//! packets: `link`, `from`, `to`, `drops`, `early_drops`, `mean_len_pkts`, `utilization`, and
//! `red_avg_pkts` on RED queues), for the
//! cross-checks of `docs/validation.md`.

use flowshare_core::results::{Column, Table};
use flowshare_core::{scenario, Simulation};
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let detail = args.first().is_some_and(|a| a == "--detail");
    if detail {
        args.remove(0);
    }
    if args.len() != 1 || args[0].starts_with('-') {
        eprintln!("usage: flowshare-sim [--detail] SCENARIO.toml|SCENARIO.json");
        return ExitCode::from(2);
    }
    let path = &args[0];
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("flowshare-sim: error: cannot read {path}: {e}");
            return ExitCode::from(1);
        }
    };
    let parsed = if path.ends_with(".json") { scenario::from_json(&text) } else { scenario::from_toml(&text) };
    let sim = parsed.and_then(|s| Simulation::new(&s).map(|sim| (s, sim)));
    let (scenario, sim) = match sim {
        Ok(s) => s,
        Err(e) => {
            eprintln!("flowshare-sim: error: {e}");
            return ExitCode::from(1);
        }
    };
    let results = sim.finish();
    let duration = results.summary.duration_s;
    let delivered = results.flows.i64("bytes_delivered");
    let drops: i64 = results.queues.i64("drops").iter().sum();
    // Segments delivered in order, as ns-2's `ack_` counts them, flow by flow.
    // Packets per flow: TCP segments of `mss` bytes, UDP packets of the source's `packet_size`.
    let mss = scenario.flows.iter().flat_map(|g| {
        let size = g.source.as_ref().map_or(g.tcp.mss.0, |s| s.packet_size.0);
        std::iter::repeat_n(size as i64, g.count as usize)
    });
    let per_flow_acked: Vec<i64> = delivered.iter().zip(mss).map(|(d, m)| d / m).collect();
    let acked_pkts: i64 = per_flow_acked.iter().sum();
    let delivered: i64 = delivered.iter().sum();
    let mut out = serde_json::json!({
        "wall_s": results.summary.wall_s,
        "events": results.summary.events,
        "flows": results.flows.rows(),
        "acked_pkts": acked_pkts,
        "goodput_mbps": delivered as f64 * 8.0 / duration / 1e6,
        "drops": drops,
    });
    if detail {
        out["per_flow"] = per_flow(&results.flows, &per_flow_acked);
        out["queues"] = queues(&results.queues);
    }
    println!("{out}");
    ExitCode::SUCCESS
}

fn texts(t: &Table, name: &str) -> Vec<String> {
    match t.get(name) {
        Some(Column::Str(v)) => v.clone(),
        _ => panic!("no text column {name}"),
    }
}

/// One object per flow, in flow order.
fn per_flow(flows: &Table, acked: &[i64]) -> serde_json::Value {
    let (cwnd, drops, rtx, rto) =
        (flows.f64("cwnd_mean"), flows.i64("drops"), flows.i64("retransmits"), flows.i64("timeouts"));
    (0..flows.rows())
        .map(|i| {
            serde_json::json!({
                "acked_pkts": acked[i],
                "cwnd_mean": cwnd[i],
                "drops": drops[i],
                "retransmits": rtx[i],
                "timeouts": rto[i],
            })
        })
        .collect()
}

/// One object per link direction that carried at least one packet.
fn queues(q: &Table) -> serde_json::Value {
    let (link, from, to) = (texts(q, "link"), texts(q, "from"), texts(q, "to"));
    let (arrivals, drops) = (q.i64("arrivals"), q.i64("drops"));
    let (len, util) = (q.f64("mean_len_pkts"), q.f64("utilization"));
    let early = q.i64("early_drops");
    let red_avg = q.get("red_avg_pkts").map(|_| q.f64("red_avg_pkts"));
    (0..q.rows())
        .filter(|&i| arrivals[i] > 0)
        .map(|i| {
            let mut o = serde_json::json!({
                "link": link[i],
                "from": from[i],
                "to": to[i],
                "drops": drops[i],
                "early_drops": early[i],
                "mean_len_pkts": len[i],
                "utilization": util[i],
            });
            if let Some(avg) = red_avg.filter(|a| !a[i].is_nan()) {
                o["red_avg_pkts"] = serde_json::json!(avg[i]);
            }
            o
        })
        .collect()
}
