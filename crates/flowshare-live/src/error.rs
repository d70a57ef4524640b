//! Why a live endpoint could not be set up or stopped running: each message is one line that
//! names the field at fault and what is allowed.

use flowshare_core::ConfigError;

/// What went wrong configuring or running a live endpoint.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// The scenario does not validate.
    #[error("scenario: {0}")]
    Scenario(#[from] ConfigError),
    /// A setting of the endpoint or of the flow it runs is refused.
    #[error("{field}: {message}")]
    Config {
        /// The field, as a path (`flow`, `multfrc_max_n`, `flows[0].tcp.ensemble`).
        field: String,
        /// What is wrong and what is allowed.
        message: String,
    },
    /// The socket could not be set up or failed while running.
    #[error("{field}: {source}")]
    Io {
        /// The part it concerns (`socket`).
        field: &'static str,
        /// The system's error.
        source: std::io::Error,
    },
    /// A packet the agent produced has no datagram form (the configuration checks rule this
    /// out; kept so that a run stops with a message rather than sending something else).
    #[error("flow: cannot encode a packet: {0}")]
    Encode(#[from] crate::wire::EncodeError),
}

impl LiveError {
    /// A refused setting.
    pub fn config(field: impl Into<String>, message: impl Into<String>) -> Self {
        LiveError::Config { field: field.into(), message: message.into() }
    }
}
