//! `flowshare-sim [--detail] [--transfers FILE.csv] [--out DIR] SCENARIO.toml|.json`: run a
//! scenario from Rust alone and print one JSON line.
//!
//! This is what `python3 -m bench` times against ns-2 and ns-3 as a whole process, and what a
//! profiler should be pointed at. Output keys: `wall_s` (seconds in the event loop), `events`,
//! `acked_pkts` and `goodput_mbps` (computed as the ns-2 reference script does: segments
//! cumulatively acknowledged × MSS × 8 / duration; UDP and TFRC flows count packets received), `drops` (all queues), `flows`.
//!
//! With arrival processes, the line also gives `transfers` (transfers recorded) and `slots`
//! (connection slots, i.e. the most connections open at once plus the listed flows), and
//! `--transfers FILE.csv` writes the per-transfer table to a file as the run goes on, so that
//! memory stays bounded by the open connections however many transfers are made.
//!
//! `--out DIR` writes `flows.csv`, `queues.csv`, `timeseries.parquet` and `plot.png` into `DIR`
//! (created if missing) with the writers `flowshare run` uses (crate `flowshare-output`), and
//! adds `write_s`, the seconds they took.
//!
//! `--detail` adds `per_flow` (one object per flow: `acked_pkts`, `cwnd_mean`, `drops`,
//! `link_losses`, `retransmits`, `timeouts`) and `queues` (one object per link direction that
//! carried packets: `link`, `from`, `to`, `drops`, `early_drops`, `link_losses`,
//! `mean_len_pkts`, `utilization`, and `red_avg_pkts` on RED queues), for the
//! cross-checks of `docs/validation.md`.

use flowshare_core::results::{Column, Table};
use flowshare_core::{scenario, Simulation};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut detail = false;
    let mut transfers_path = None;
    let mut out_dir: Option<String> = None;
    while args.first().is_some_and(|a| a.starts_with("--")) {
        match args.remove(0).as_str() {
            "--detail" => detail = true,
            "--out" if !args.is_empty() => out_dir = Some(args.remove(0)),
            "--transfers" if !args.is_empty() => transfers_path = Some(args.remove(0)),
            _ => return usage(),
        }
    }
    if args.len() != 1 || args[0].starts_with('-') {
        return usage();
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
    let parsed = parsed.map(|mut s| {
        s.base_dir = Path::new(path).parent().map(Path::to_path_buf);
        s
    });
    let sim = parsed.and_then(|s| Simulation::new(&s).map(|sim| (s, sim)));
    let (scenario, mut sim) = match sim {
        Ok(s) => s,
        Err(e) => {
            eprintln!("flowshare-sim: error: {e}");
            return ExitCode::from(1);
        }
    };
    let mut streamed = None;
    if let Some(file) = &transfers_path {
        match stream_transfers(&mut sim, file) {
            Ok(w) => streamed = Some(w),
            Err(e) => {
                eprintln!("flowshare-sim: error: writing {file}: {e}");
                return ExitCode::from(1);
            }
        }
    }
    sim.run_until(sim.end());
    let taken = sim.transfers_recorded();
    let slots = sim.slots();
    let results = sim.finish();
    // The transfers still running at the end are in the results.
    let transfers = taken + results.transfers.rows() as u64 - if streamed.is_some() { 0 } else { taken };
    if let (Some(mut w), Some(file)) = (streamed, &transfers_path) {
        if let Err(e) = write_csv(&mut w, &results.transfers, &mut false).and_then(|_| w.flush()) {
            eprintln!("flowshare-sim: error: writing {file}: {e}");
            return ExitCode::from(1);
        }
    }
    let duration = results.summary.duration_s;
    let delivered = results.flows.i64("bytes_delivered");
    let drops: i64 = results.queues.i64("drops").iter().sum();
    // Segments delivered in order, as ns-2's `ack_` counts them, flow by flow.
    // Packets per flow: TCP segments of `mss` bytes, UDP and TFRC packets of their
    // `packet_size`.
    let mss = scenario.flows.iter().filter(|g| g.arrivals.is_none()).flat_map(|g| {
        let size = match (&g.source, &g.tfrc) {
            (Some(s), _) => s.packet_size.0,
            (None, Some(t)) => t.packet_size.0,
            (None, None) => g.tcp.mss.0,
        };
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
    if scenario.flows.iter().any(|g| g.arrivals.is_some()) {
        out["transfers"] = serde_json::json!(transfers);
        out["slots"] = serde_json::json!(slots);
    }
    if let Some(dir) = &out_dir {
        let started = std::time::Instant::now();
        let written = std::fs::create_dir_all(dir)
            .map_err(flowshare_output::OutputError::from)
            .and_then(|_| flowshare_output::write_run(&results, Path::new(dir)));
        if let Err(e) = written {
            eprintln!("flowshare-sim: error: writing {dir}: {e}");
            return ExitCode::from(1);
        }
        out["write_s"] = serde_json::json!(started.elapsed().as_secs_f64());
    }
    if detail {
        out["per_flow"] = per_flow(&results.flows, &per_flow_acked);
        out["queues"] = queues(&results.queues);
    }
    println!("{out}");
    ExitCode::SUCCESS
}

fn usage() -> ExitCode {
    eprintln!("usage: flowshare-sim [--detail] [--transfers FILE.csv] [--out DIR] SCENARIO.toml|SCENARIO.json");
    ExitCode::from(2)
}

/// Run to the end in steps of a thousandth of the run, appending the transfers recorded in each
/// step to `file` (CSV with a header line); returns the writer for the transfers still running
/// at the end, which the results hold.
fn stream_transfers(sim: &mut Simulation, file: &str) -> std::io::Result<std::io::BufWriter<std::fs::File>> {
    let mut w = std::io::BufWriter::new(std::fs::File::create(file)?);
    let end = sim.end();
    let mut header = true;
    for k in 1..=1000u64 {
        sim.run_until(end / 1000 * k);
        write_csv(&mut w, &sim.take_transfers(), &mut header)?;
    }
    Ok(w)
}

/// Append the rows of `t` to `w`, with the column names first if `header` is still set.
fn write_csv(w: &mut impl Write, t: &Table, header: &mut bool) -> std::io::Result<()> {
    if std::mem::take(header) {
        let names: Vec<&str> = t.columns.iter().map(|(n, _)| *n).collect();
        writeln!(w, "{}", names.join(","))?;
    }
    for i in 0..t.rows() {
        let cells: Vec<String> = t
            .columns
            .iter()
            .map(|(_, c)| match c {
                Column::F64(v) => format!("{}", v[i]),
                Column::I64(v) => v[i].to_string(),
                Column::Str(v) => v[i].clone(),
            })
            .collect();
        writeln!(w, "{}", cells.join(","))?;
    }
    Ok(())
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
    let lost = flows.i64("link_losses");
    (0..flows.rows())
        .map(|i| {
            serde_json::json!({
                "acked_pkts": acked[i],
                "cwnd_mean": cwnd[i],
                "drops": drops[i],
                "link_losses": lost[i],
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
    let (early, lost) = (q.i64("early_drops"), q.i64("link_losses"));
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
                "link_losses": lost[i],
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
