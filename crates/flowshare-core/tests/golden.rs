//! Golden outputs: short runs of every mechanism, reduced to rounded tables and compared with
//! the files in `tests/golden/` at the repository root.
//!
//! A refactor must leave every table byte-identical. A deliberate change of behaviour
//! regenerates them, in a commit of its own that says why:
//!
//! ```sh
//! FLOWSHARE_BLESS=1 cargo test --release -p flowshare-core --test golden
//! ```
//!
//! Values are rounded to six significant digits so that the files hold across platforms whose
//! math libraries differ in the last bits; counts are exact.

use flowshare_core::results::{Column, RunResults, Table};
use flowshare_core::{scenario, Simulation};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden")
}

/// `x` with six significant digits, `nan` for NaN.
fn sig(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x == 0.0 {
        return "0".into();
    }
    format!("{x:.5e}")
}

fn cell(t: &Table, name: &str, row: usize) -> String {
    match t.get(name).unwrap_or_else(|| panic!("no column {name}")) {
        Column::F64(v) => sig(v[row]),
        Column::I64(v) => v[row].to_string(),
        Column::Str(v) => v[row].clone(),
    }
}

const FLOW_COLUMNS: [&str; 21] = [
    "flow",
    "name",
    "goodput_bps",
    "bytes_delivered",
    "packets_sent",
    "packets_received",
    "drops",
    "ack_drops",
    "link_losses",
    "retransmits",
    "fast_retransmits",
    "timeouts",
    "ecn_marks",
    "ecn_reductions",
    "misrx_detected",
    "cwnd_mean",
    "completion_time_s",
    "delay_mean_s",
    "delay_p99_s",
    "jitter_s",
    "loss_rate",
];

const QUEUE_COLUMNS: [&str; 12] = [
    "queue",
    "link",
    "arrivals",
    "departures",
    "drops",
    "early_drops",
    "ecn_marks",
    "link_losses",
    "max_len_pkts",
    "mean_len_pkts",
    "utilization",
    "mean_sojourn_s",
];

const FCT_COLUMNS: [&str; 8] =
    ["group", "size_bucket", "transfers", "unfinished", "fct_mean_s", "fct_p50_s", "fct_p99_s", "fct_max_s"];

/// The rounded tables of one run: every flow, every queue that saw a packet, per flow the
/// sums of its sampled cwnd and goodput series (which guard the time series too), and the
/// completion-time summary when the run has finite transfers.
fn render(r: &RunResults) -> String {
    let mut out = String::new();
    writeln!(out, "# flows\n{}", FLOW_COLUMNS.join(" ")).unwrap();
    for i in 0..r.flows.rows() {
        let row: Vec<String> = FLOW_COLUMNS.iter().map(|c| cell(&r.flows, c, i)).collect();
        writeln!(out, "{}", row.join(" ")).unwrap();
    }
    writeln!(out, "# queues\n{}", QUEUE_COLUMNS.join(" ")).unwrap();
    let arrivals = r.queues.i64("arrivals");
    for i in (0..r.queues.rows()).filter(|&i| arrivals[i] > 0) {
        let row: Vec<String> = QUEUE_COLUMNS.iter().map(|c| cell(&r.queues, c, i)).collect();
        writeln!(out, "{}", row.join(" ")).unwrap();
    }
    writeln!(out, "# series\nflow samples cwnd_sum goodput_sum").unwrap();
    let s = &r.flow_series;
    let (flow, cwnd, goodput) = (s.i64("flow"), s.f64("cwnd"), s.f64("goodput_bps"));
    for f in 0..r.flows.rows() as i64 {
        let rows: Vec<usize> = (0..flow.len()).filter(|&k| flow[k] == f).collect();
        let sum = |v: &[f64]| rows.iter().map(|&k| v[k]).filter(|x| !x.is_nan()).sum::<f64>();
        writeln!(out, "{f} {} {} {}", rows.len(), sig(sum(cwnd)), sig(sum(goodput))).unwrap();
    }
    if r.fct.rows() > 0 {
        writeln!(out, "# fct\n{}", FCT_COLUMNS.join(" ")).unwrap();
        for i in 0..r.fct.rows() {
            let row: Vec<String> = FCT_COLUMNS.iter().map(|c| cell(&r.fct, c, i)).collect();
            writeln!(out, "{}", row.join(" ")).unwrap();
        }
    }
    out
}

fn run(path: &Path) -> RunResults {
    let text = std::fs::read_to_string(path).unwrap();
    let s = scenario::from_toml(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Simulation::new(&s).unwrap_or_else(|e| panic!("{}: {e}", path.display())).finish()
}

#[test]
fn golden_tables_are_unchanged() {
    let dir = golden_dir();
    let bless = std::env::var_os("FLOWSHARE_BLESS").is_some();
    let mut scenarios: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    scenarios.sort();
    assert!(scenarios.len() >= 20, "golden scenarios missing from {}", dir.display());
    let mut failures = Vec::new();
    for path in &scenarios {
        let got = render(&run(path));
        let expected_path = path.with_extension("golden");
        if bless {
            std::fs::write(&expected_path, &got).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path)
            .unwrap_or_else(|e| panic!("{}: {e} (FLOWSHARE_BLESS=1 writes it)", expected_path.display()));
        if got != expected {
            let line = got.lines().zip(expected.lines()).position(|(a, b)| a != b);
            let detail = match line {
                Some(k) => format!(
                    "line {}:\n  expected {}\n  got      {}",
                    k + 1,
                    expected.lines().nth(k).unwrap(),
                    got.lines().nth(k).unwrap()
                ),
                None => "a different number of lines".into(),
            };
            failures.push(format!("{}: {detail}", path.file_name().unwrap().to_string_lossy()));
        }
    }
    assert!(failures.is_empty(), "golden tables changed:\n{}", failures.join("\n"));
}
