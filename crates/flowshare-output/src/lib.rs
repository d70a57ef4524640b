//! The files of a run, written from Rust: `flows.csv`, `queues.csv`, `delays.csv` and `fct.csv` ([`csv`]),
//! `timeseries.parquet` ([`parquet`]) and `plot.png` ([`plot`]), so that the command line
//! needs neither pandas, pyarrow nor matplotlib (docs/adr/0009-outputs-written-from-rust.md).
//!
//! The writers take [`Frame`]s: named columns of any length, built from the core's
//! [`flowshare_core::results::Table`]s or from the chunks the Python front end took from the
//! core while the run went on. Every column a table has is written, whatever its name, so a
//! column the core adds reaches the files without a change here.

pub mod csv;
pub mod frame;
pub mod parquet;
pub mod plot;
pub mod pyfmt;

pub use frame::{Col, Frame};

/// An error writing an output file: the file and what went wrong.
#[derive(Debug)]
pub enum OutputError {
    /// The file system refused.
    Io(std::io::Error),
    /// The data cannot be written as asked (a malformed table, an encoder's error).
    Data(String),
}

impl std::fmt::Display for OutputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OutputError::Io(e) => write!(f, "{e}"),
            OutputError::Data(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for OutputError {}

impl From<std::io::Error> for OutputError {
    fn from(e: std::io::Error) -> Self {
        OutputError::Io(e)
    }
}

impl From<::parquet::errors::ParquetError> for OutputError {
    fn from(e: ::parquet::errors::ParquetError) -> Self {
        match e {
            ::parquet::errors::ParquetError::External(inner) => match inner.downcast::<std::io::Error>() {
                Ok(io) => OutputError::Io(*io),
                Err(other) => OutputError::Data(other.to_string()),
            },
            other => OutputError::Data(other.to_string()),
        }
    }
}

/// Result of a writer.
pub type Result<T> = std::result::Result<T, OutputError>;

/// Write `flows.csv`, `queues.csv`, `delays.csv`, `fct.csv`, `timeseries.parquet` and `plot.png` of `results` into the
/// existing directory `dir` (not atomically: the Python front end stages the directory);
/// returns the names written. `summary.json` is the front end's.
pub fn write_run(results: &flowshare_core::results::RunResults, dir: &std::path::Path) -> Result<Vec<&'static str>> {
    let flows = Frame::from_table(&results.flows);
    let queues = Frame::from_table(&results.queues);
    let flow_series = Frame::from_table(&results.flow_series);
    let queue_series = Frame::from_table(&results.queue_series);
    csv::write(&flows, &dir.join("flows.csv"))?;
    csv::write(&queues, &dir.join("queues.csv"))?;
    let delays = Frame::from_table(&results.delays);
    csv::write(&delays, &dir.join("delays.csv"))?;
    csv::write(&Frame::from_table(&results.fct), &dir.join("fct.csv"))?;
    parquet::write_timeseries(&flow_series, &queue_series, &dir.join("timeseries.parquet"))?;
    let input = plot::PlotInput {
        flows,
        queues,
        flow_series,
        queue_series,
        delays: Some(delays),
        duration_s: results.summary.duration_s,
    };
    plot::render(&input, &dir.join("plot.png"))?;
    Ok(vec!["flows.csv", "queues.csv", "delays.csv", "fct.csv", "timeseries.parquet", "plot.png"])
}
