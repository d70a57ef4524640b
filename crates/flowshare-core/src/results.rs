//! Columnar results: what a run hands back to Python, the CLI and the benchmark binary.

pub use crate::table::{Column, Table};

/// Run-level facts.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Simulated seconds.
    pub duration_s: f64,
    /// Simulated seconds of warm-up: the steady-state figures count from here.
    pub warmup_s: f64,
    /// Master seed.
    pub seed: u64,
    /// Events processed.
    pub events: u64,
    /// Wall-clock seconds spent in the event loop (not part of any deterministic output).
    pub wall_s: f64,
    /// FNV-1a hash of the normalized scenario, hex.
    pub scenario_hash: String,
    /// Crate version.
    pub version: String,
}

/// Everything a run produces.
#[derive(Clone, Debug)]
pub struct RunResults {
    /// Run-level facts.
    pub summary: Summary,
    /// One row per flow.
    pub flows: Table,
    /// One row per link direction.
    pub queues: Table,
    /// Sampled per-flow state.
    pub flow_series: Table,
    /// Sampled queue lengths.
    pub queue_series: Table,
    /// One row per transfer opened by an arrival process (those not taken while the run went
    /// on; see [`crate::Simulation::take_transfers`]).
    pub transfers: Table,
    /// Snapshots of the progress of the open transfers of the flow groups `[trace]
    /// concurrency` names, at each opening and completion of one of them (those not taken
    /// while the run went on); `None` when the scenario does not ask for them.
    pub concurrency: Option<Table>,
    /// One row per member that joined an aggregate connection at run time (ADR 0012): `flow`,
    /// `name`, `member`, `start_s`, `size_bytes`, `segments`, `completion_time_s` (NaN if not
    /// complete by the end).
    pub members: Table,
    /// Per listed flow, the histogram of the one-way delays of its data packets delivered
    /// after the warm-up: one row per non-empty bin (`flow`, `bin_lo_s`, `bin_hi_s`, `count`).
    pub delays: Table,
    /// Flow-completion times of finite transfers that started after the warm-up, per flow
    /// group, over all sizes and per size bucket.
    pub fct: Table,
    /// Event trace and pcap files, when the scenario asks for them.
    pub trace: crate::trace::TraceResults,
}

/// FNV-1a 64-bit hash, for scenario fingerprints.
pub fn fnv1a(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}
