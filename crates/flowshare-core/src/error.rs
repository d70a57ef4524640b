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
/// A message longer than [`MAX_MESSAGE_CHARS`] (a huge value quoted whole) is cut short.
fn one_line(text: String) -> String {
    let breaks = |c: char| c.is_control() || c == '\u{2028}' || c == '\u{2029}';
    let long = text.len() > MAX_MESSAGE_CHARS;
    if !long && !text.chars().any(breaks) {
        return text;
    }
    let escaped: String =
        text.chars().flat_map(|c| if breaks(c) { c.escape_default().collect::<Vec<_>>() } else { vec![c] }).collect();
    let total = escaped.chars().count();
    if total <= MAX_MESSAGE_CHARS {
        return escaped;
    }
    let head: String = escaped.chars().take(MAX_MESSAGE_CHARS).collect();
    format!("{head}… ({total} characters in all)")
}

/// The longest path or message shown, in characters.
pub const MAX_MESSAGE_CHARS: usize = 500;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_stay_one_short_line() {
        let e = ConfigError::new("nodes[0]", "name \"a\nb\" is not allowed");
        assert_eq!(e.to_string(), "nodes[0]: name \"a\\nb\" is not allowed");
        let huge = format!("expected a time, got \"{}\"", "x".repeat(100_000));
        let shown = ConfigError::new("simulation.duration", huge).to_string();
        assert!(shown.ends_with("… (100023 characters in all)"), "{}", &shown[shown.len() - 40..]);
        assert!(shown.chars().count() < 600);
    }
}
