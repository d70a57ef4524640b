//! `flowshare-sim SCENARIO.toml|.json`: run a scenario from Rust alone and print one JSON line.
//!
//! This is what `flowshare bench` times against ns-2 and ns-3 as a whole process, and what a
//! profiler should be pointed at. Output keys: `wall_s` (seconds in the event loop), `events`,
//! `acked_pkts` and `goodput_mbps` (computed as the ns-2 reference script does: segments
//! cumulatively acknowledged × MSS × 8 / duration), `drops` (all queues), `flows`.

use flowshare_core::{scenario, Simulation};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 2 || args[1].starts_with('-') {
        eprintln!("usage: flowshare-sim SCENARIO.toml|SCENARIO.json");
        return ExitCode::from(2);
    }
    let path = &args[1];
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
    let mss = scenario.flows.iter().flat_map(|g| std::iter::repeat_n(g.tcp.mss.0 as i64, g.count as usize));
    let acked_pkts: i64 = delivered.iter().zip(mss).map(|(d, m)| d / m).sum();
    let delivered: i64 = delivered.iter().sum();
    let out = serde_json::json!({
        "wall_s": results.summary.wall_s,
        "events": results.summary.events,
        "flows": results.flows.rows(),
        "acked_pkts": acked_pkts,
        "goodput_mbps": delivered as f64 * 8.0 / duration / 1e6,
        "drops": drops,
    });
    println!("{out}");
    ExitCode::SUCCESS
}
