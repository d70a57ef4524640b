//! HTTP clients (`process = "http"`): each client fetches sessions of documents from the group's
//! source host (the server), one document after another, over HTTP/1.0 (a new TCP connection
//! per document) or HTTP/1.1 (one persistent connection per session). The workload of
//! G. Hasegawa, "Congestion and Fairness Control Mechanisms of TCP for the High-Speed
//! Internet", PhD thesis, Osaka University, 2000, chapter 5; the connection-level behaviour is
//! in [`crate::tcp::http`], the design in ADR 0014.
//!
//! A session's documents are a fixed list (Fig. 5.6: a 100 KB document and then 10 KB ones) or
//! `count` documents drawn from a weighted set of sizes (Table 5.2's mix), drawn from the
//! client's own stream at the start of the session, so every algorithm under test sees the
//! same documents.

use crate::engine::{uniform, Stream};
use crate::units::Bytes;
use crate::ConfigError;
use serde::de::{value::MapAccessDeserializer, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// The HTTP version: how documents map to connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum HttpVersion {
    /// A new connection per document (a handshake before each).
    #[serde(rename = "1.0")]
    V1_0,
    /// One persistent connection per session (a handshake before its first document, a
    /// request alone before each later one).
    #[serde(rename = "1.1")]
    V1_1,
}

/// A weighted set of document sizes, `{ sizes = [...], weights = [...], count = 10 }`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DocumentMix {
    /// The sizes.
    pub sizes: Vec<Bytes>,
    /// Their relative weights (any positive scale).
    pub weights: Vec<f64>,
    /// Documents per session.
    pub count: u64,
}

/// `documents` as written: a list of sizes fetched in order, or a [`DocumentMix`].
#[derive(Clone, Debug)]
pub enum DocumentsCfg {
    /// These documents, in this order, every session.
    List(Vec<Bytes>),
    /// Drawn per document.
    Mix(DocumentMix),
}

impl Serialize for DocumentsCfg {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            DocumentsCfg::List(l) => l.serialize(s),
            DocumentsCfg::Mix(m) => m.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for DocumentsCfg {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = DocumentsCfg;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(
                    f,
                    "a list of document sizes such as [\"100KB\", \"10KB\"] or a mix \
                     {{ sizes = [...], weights = [...], count = 10 }}"
                )
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut list = Vec::new();
                while let Some(b) = seq.next_element::<Bytes>()? {
                    list.push(b);
                }
                Ok(DocumentsCfg::List(list))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                DocumentMix::deserialize(MapAccessDeserializer::new(map)).map(DocumentsCfg::Mix)
            }
        }
        d.deserialize_any(V)
    }
}

/// Where a session's documents come from, resolved.
#[derive(Clone, Debug, PartialEq)]
pub enum DocumentSource {
    /// Always these sizes, bytes.
    List(Vec<u64>),
    /// `count` draws from `sizes` with cumulative probabilities `cum` (the last is 1).
    Mix {
        /// Sizes, bytes.
        sizes: Vec<u64>,
        /// Cumulative probabilities.
        cum: Vec<f64>,
        /// Documents per session.
        count: u64,
    },
}

/// The most documents in one session.
pub const MAX_DOCUMENTS: u64 = 1_000_000;

impl DocumentsCfg {
    /// Check (`path` is the field's path) and resolve.
    pub fn resolve(&self, path: &str) -> Result<DocumentSource, ConfigError> {
        let positive = |sizes: &[Bytes], field: &str| -> Result<Vec<u64>, ConfigError> {
            if sizes.is_empty() {
                return Err(ConfigError::new(field, "holds no document; give at least one size"));
            }
            sizes
                .iter()
                .enumerate()
                .map(|(i, b)| match b.0 {
                    0 => Err(ConfigError::new(format!("{field}[{i}]"), "a document needs at least 1B")),
                    n => Ok(n),
                })
                .collect()
        };
        match self {
            DocumentsCfg::List(l) => {
                if l.len() as u64 > MAX_DOCUMENTS {
                    return Err(ConfigError::new(path, format!("at most {MAX_DOCUMENTS} documents per session")));
                }
                Ok(DocumentSource::List(positive(l, path)?))
            }
            DocumentsCfg::Mix(m) => {
                let sizes = positive(&m.sizes, &format!("{path}.sizes"))?;
                if m.weights.len() != sizes.len() {
                    return Err(ConfigError::new(
                        format!("{path}.weights"),
                        format!("needs one weight per size: {} sizes, {} weights", sizes.len(), m.weights.len()),
                    ));
                }
                if let Some((i, w)) = m.weights.iter().enumerate().find(|(_, w)| !(w.is_finite() && **w > 0.0)) {
                    return Err(ConfigError::new(
                        format!("{path}.weights[{i}]"),
                        format!("must be a positive number, got {w}"),
                    ));
                }
                if !(1..=MAX_DOCUMENTS).contains(&m.count) {
                    return Err(ConfigError::new(
                        format!("{path}.count"),
                        format!("must be 1 to {MAX_DOCUMENTS} documents per session, got {}", m.count),
                    ));
                }
                let total: f64 = m.weights.iter().sum();
                let mut acc = 0.0;
                let mut cum: Vec<f64> = m
                    .weights
                    .iter()
                    .map(|w| {
                        acc += w;
                        acc / total
                    })
                    .collect();
                *cum.last_mut().expect("a size") = 1.0;
                Ok(DocumentSource::Mix { sizes, cum, count: m.count })
            }
        }
    }
}

impl DocumentSource {
    /// The documents of the next session, drawn from `rng` for a mix.
    pub fn session(&self, rng: &mut Stream) -> Vec<u64> {
        match self {
            DocumentSource::List(l) => l.clone(),
            DocumentSource::Mix { sizes, cum, count } => (0..*count)
                .map(|_| {
                    let u = uniform(rng);
                    sizes[cum.partition_point(|&c| c <= u).min(sizes.len() - 1)]
                })
                .collect(),
        }
    }

    /// The mean document size, bytes.
    pub fn mean_size(&self) -> f64 {
        match self {
            DocumentSource::List(l) => l.iter().sum::<u64>() as f64 / l.len() as f64,
            DocumentSource::Mix { sizes, cum, .. } => {
                let mut prev = 0.0;
                sizes
                    .iter()
                    .zip(cum)
                    .map(|(&s, &c)| {
                        let p = c - prev;
                        prev = c;
                        s as f64 * p
                    })
                    .sum()
            }
        }
    }

    /// Documents per session.
    pub fn per_session(&self) -> u64 {
        match self {
            DocumentSource::List(l) => l.len() as u64,
            DocumentSource::Mix { count, .. } => *count,
        }
    }
}

/// A resolved HTTP workload.
#[derive(Clone, Debug, PartialEq)]
pub struct Http {
    /// Clients, each fetching its own sessions.
    pub clients: u32,
    /// HTTP/1.0 or HTTP/1.1.
    pub version: HttpVersion,
    /// Each session's documents.
    pub documents: DocumentSource,
    /// Sessions per client.
    pub sessions: u64,
    /// Pause between a client's sessions, seconds.
    pub think: crate::traffic::arrivals::Dist,
    /// HTTP/1.1: keep the window across documents instead of restarting it.
    pub persistent_cwnd: bool,
    /// Wire size of a request (`None`: an ACK's).
    pub request_size: Option<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    fn docs(v: &str) -> Result<DocumentSource, String> {
        #[derive(Deserialize)]
        struct W {
            d: DocumentsCfg,
        }
        let w: W = toml::from_str(&format!("d = {v}")).map_err(|e| e.to_string())?;
        w.d.resolve("documents").map_err(|e| e.to_string())
    }

    #[test]
    fn lists_and_mixes_resolve_and_draw_with_their_weights() {
        assert_eq!(docs("[\"100KB\", \"10KB\"]").unwrap(), DocumentSource::List(vec![100_000, 10_000]));
        let mix = docs("{ sizes = [\"1KB\", \"3KB\"], weights = [3, 1], count = 4 }").unwrap();
        assert_eq!(mix.mean_size(), 1500.0);
        let mut rng = stream(1, "mix");
        let drawn: Vec<u64> = (0..2000).flat_map(|_| mix.session(&mut rng)).collect();
        let small = drawn.iter().filter(|&&s| s == 1000).count() as f64 / drawn.len() as f64;
        assert!((small - 0.75).abs() < 0.02, "{small}");
    }

    #[test]
    fn mistakes_are_named() {
        assert_eq!(docs("[]").unwrap_err(), "documents: holds no document; give at least one size");
        assert_eq!(docs("[\"0B\"]").unwrap_err(), "documents[0]: a document needs at least 1B");
        assert_eq!(
            docs("{ sizes = [\"1KB\"], weights = [1, 2], count = 1 }").unwrap_err(),
            "documents.weights: needs one weight per size: 1 sizes, 2 weights"
        );
        assert_eq!(
            docs("{ sizes = [\"1KB\"], weights = [-1], count = 1 }").unwrap_err(),
            "documents.weights[0]: must be a positive number, got -1"
        );
        assert!(docs("{ sizes = [\"1KB\"], weights = [1], count = 0 }").unwrap_err().starts_with("documents.count:"));
    }
}
