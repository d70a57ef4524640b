//! Configuration errors: one line naming the field and what is allowed.

use std::fmt;

/// A scenario that cannot be run. `path` is the dotted field path (`flows[1].tcp.mss`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// Dotted path of the offending field; empty for document-level errors.
    pub path: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl ConfigError {
    /// An error at `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError { path: one_line(path.into()), message: one_line(message.into()) }
    }
}

/// A message quotes keys and values as written; a line break or other control character in
/// them is shown escaped (`\n`), so that the message stays one line.
fn one_line(text: String) -> String {
    let breaks = |c: char| c.is_control() || c == '\u{2028}' || c == '\u{2029}';
    if !text.chars().any(breaks) {
        return text;
    }
    text.chars().flat_map(|c| if breaks(c) { c.escape_default().collect::<Vec<_>>() } else { vec![c] }).collect()
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() || self.path == "." {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}
