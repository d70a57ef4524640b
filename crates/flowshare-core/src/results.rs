//! Columnar results: what a run hands back to Python, the CLI and the benchmark binary.

/// One column of a table.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    /// 64-bit floats (NaN where a value does not apply).
    F64(Vec<f64>),
    /// 64-bit integers.
    I64(Vec<i64>),
    /// Text.
    Str(Vec<String>),
}

impl Column {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }

    /// True when the column has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Named columns of equal length.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    /// Columns in order.
    pub columns: Vec<(&'static str, Column)>,
}

impl Table {
    /// Append a column.
    pub fn push(&mut self, name: &'static str, col: Column) {
        debug_assert!(
            self.columns.first().is_none_or(|(_, c)| c.len() == col.len()),
            "column {name} has a different length"
        );
        self.columns.push((name, col));
    }

    /// The column called `name`.
    pub fn get(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| *n == name).map(|(_, c)| c)
    }

    /// A float column by name (panics if absent or of another type: for tests and tools).
    pub fn f64(&self, name: &str) -> &[f64] {
        match self.get(name) {
            Some(Column::F64(v)) => v,
            _ => panic!("no f64 column {name}"),
        }
    }

    /// An integer column by name (panics if absent or of another type: for tests and tools).
    pub fn i64(&self, name: &str) -> &[i64] {
        match self.get(name) {
            Some(Column::I64(v)) => v,
            _ => panic!("no i64 column {name}"),
        }
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }
}

/// Run-level facts.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Simulated seconds.
    pub duration_s: f64,
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
