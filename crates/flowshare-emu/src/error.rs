//! Errors of the emulator: one line naming the namespace, device, file or field at fault.

use flowshare_core::ConfigError;
use std::path::PathBuf;

/// Why the emulator could not start or had to stop.
#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    /// A configuration field is out of range: the field and what is allowed.
    #[error("{field}: {problem}")]
    Config {
        /// Name of the field.
        field: String,
        /// What is wrong and what is allowed.
        problem: String,
    },
    /// The scenario the link is taken from does not build.
    #[error("scenario: {0}")]
    Scenario(#[from] ConfigError),
    /// A network namespace cannot be entered.
    #[error("network namespace \"{ns}\": {problem}")]
    Namespace {
        /// Name under `/var/run/netns`.
        ns: String,
        /// What went wrong.
        problem: String,
    },
    /// A TUN device cannot be made, configured, read or written.
    #[error("device \"{dev}\" in namespace \"{ns}\": {problem}")]
    Device {
        /// Namespace of the device.
        ns: String,
        /// Device name.
        dev: String,
        /// What went wrong.
        problem: String,
    },
    /// The packet capture cannot be written.
    #[error("pcap file {}: {source}", path.display())]
    Pcap {
        /// The capture file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The event trace cannot be written.
    #[error("event trace {}: {source}", path.display())]
    Events {
        /// The file of records.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl EmuError {
    /// A configuration error for `field`.
    pub fn config(field: impl Into<String>, problem: impl Into<String>) -> Self {
        EmuError::Config { field: field.into(), problem: problem.into() }
    }
}
