//! Measure the emulator's fidelity with real packets and print a markdown table: the rate a
//! saturated link delivers and the one-way delay error at low load, at 10 and 100 Mbit/s.
//! Needs root (network namespaces and TUN devices).
//!
//! `cargo run --release -p flowshare-emu --example fidelity`

#[path = "../tests/harness/mod.rs"]
mod harness;

use harness::{delay_run, quantile, rate_run, reordered, skip_reason};

fn ms(ns: i64) -> f64 {
    ns as f64 / 1e6
}

fn main() {
    if let Some(why) = skip_reason() {
        eprintln!("fidelity: cannot measure: {why}");
        std::process::exit(1);
    }
    let mut rows = Vec::new();
    for rate in [10_000_000u64, 100_000_000] {
        let (measured, r) = rate_run(rate, 2.0).unwrap_or_else(|e| {
            eprintln!("fidelity: rate run at {rate} bit/s: {e}");
            std::process::exit(1)
        });
        let (errors, d) = delay_run(rate, 2.0).unwrap_or_else(|e| {
            eprintln!("fidelity: delay run at {rate} bit/s: {e}");
            std::process::exit(1)
        });
        let lost = d.sent - d.received.len() as u64;
        rows.push(format!(
            "| {} | {:.3} | {:+.3} | {} | {:.3} | {:.3} | {:.3} | {} / {} | {:.1} / {:.1} |",
            rate / 1_000_000,
            measured / 1e6,
            (measured - rate as f64) / rate as f64 * 100.0,
            errors.len(),
            ms(quantile(&errors, 0.5)),
            ms(quantile(&errors, 0.99)),
            ms(*errors.last().unwrap_or(&0)),
            lost + r.sent - r.received.len() as u64,
            reordered(&r) + reordered(&d),
            d.report.forward.lateness.p99_ns as f64 / 1e3,
            d.report.forward.lateness.max_ns as f64 / 1e3,
        ));
    }
    println!("| rate configured (Mbit/s) | rate measured (Mbit/s) | rate error (%) | delay samples | delay error p50 (ms) | delay error p99 (ms) | delay error max (ms) | datagrams lost / reordered | write lateness p99 / max (µs) |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        println!("{r}");
    }
}
