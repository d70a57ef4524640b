//! The algorithm registry: what a scenario may write as `tcp.cc`.
//!
//! `cc = "scalable"` picks an algorithm with its defaults; `cc = { algo = "multcp", n = 4 }`
//! sets parameters. Every algorithm's parameters are checked here, so a built algorithm can
//! trust them.

use super::multcp::{LossPolicy, MulTcp, MulTcpSlowStart};
use super::scalable::{Scalable, ScalableVariant};
use super::{Aimd, CongestionControl};
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A congestion-control algorithm with its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Default)]
#[serde(tag = "algo", rename_all = "snake_case")]
pub enum CcConfig {
    /// Reno: AIMD(1, 1/2), RFC 5681.
    #[default]
    Reno,
    /// Scalable TCP (Kelly 2003).
    Scalable {
        /// `paper` (+0.01 per ACK, Reno below 16 segments) or `linux` (+1 per 50 ACKs).
        variant: ScalableVariant,
    },
    /// MulTCP(N): one connection that behaves like N Reno flows (Crowcroft and Oechslin 1998).
    Multcp {
        /// Number of flows emulated (real, at least 1).
        n: f64,
        /// `standard` or `triple` (the original paper's ×3 per RTT until N flows would catch up).
        slow_start: MulTcpSlowStart,
        /// How ssthresh is set on a loss (specs/001 ambiguity A16).
        loss_policy: LossPolicy,
    },
}

/// Names accepted for `algo`, in the order error messages list them.
pub const ALGORITHMS: &[&str] = &["reno", "scalable", "multcp"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScalableParams {
    #[serde(default)]
    variant: ScalableVariant,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MulTcpParams {
    #[serde(default = "one")]
    n: f64,
    #[serde(default)]
    slow_start: MulTcpSlowStart,
    #[serde(default)]
    loss_policy: LossPolicy,
}

fn one() -> f64 {
    1.0
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoParams {}

fn params<T: for<'de> Deserialize<'de>>(algo: &str, table: Map<String, Value>) -> Result<T, String> {
    let mut track = serde_path_to_error::Track::new();
    let de = serde_path_to_error::Deserializer::new(Value::Object(table), &mut track);
    T::deserialize(de).map_err(|e| {
        let path = track.path().to_string();
        let at = if path.is_empty() || path == "." { String::new() } else { format!("{path}: ") };
        format!("{at}{e} (algo = \"{algo}\")")
    })
}

impl CcConfig {
    fn from_table(mut table: Map<String, Value>) -> Result<CcConfig, String> {
        let algo = match table.remove("algo") {
            Some(Value::String(s)) => s,
            Some(other) => return Err(format!("algo: expected a name such as \"reno\", got {other}")),
            None => return Err(format!("missing field `algo`; algorithms are {}", ALGORITHMS.join(", "))),
        };
        let cfg = match algo.as_str() {
            "reno" => {
                params::<NoParams>(&algo, table)?;
                CcConfig::Reno
            }
            "scalable" => CcConfig::Scalable { variant: params::<ScalableParams>(&algo, table)?.variant },
            "multcp" => {
                let p: MulTcpParams = params(&algo, table)?;
                if !(p.n.is_finite() && p.n >= 1.0) {
                    return Err(format!("n: must be a number of flows >= 1, got {}", p.n));
                }
                CcConfig::Multcp { n: p.n, slow_start: p.slow_start, loss_policy: p.loss_policy }
            }
            other => {
                let allowed: Vec<String> = ALGORITHMS.iter().map(|a| format!("`{a}`")).collect();
                return Err(format!("unknown algorithm `{other}`, expected one of {}", allowed.join(", ")));
            }
        };
        Ok(cfg)
    }

    /// Build a fresh algorithm instance.
    pub fn build(self) -> Box<dyn CongestionControl> {
        match self {
            CcConfig::Reno => Box::new(Aimd::reno()),
            CcConfig::Scalable { variant } => Box::new(Scalable::new(variant)),
            CcConfig::Multcp { n, slow_start, loss_policy } => Box::new(MulTcp::new(n, slow_start, loss_policy)),
        }
    }

    /// The name used in scenarios and results.
    pub fn as_str(self) -> &'static str {
        match self {
            CcConfig::Reno => "reno",
            CcConfig::Scalable { .. } => "scalable",
            CcConfig::Multcp { .. } => "multcp",
        }
    }
}

impl<'de> Deserialize<'de> for CcConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(name) => {
                let mut table = Map::new();
                table.insert("algo".into(), Value::String(name));
                CcConfig::from_table(table).map_err(de::Error::custom)
            }
            Value::Object(table) => CcConfig::from_table(table).map_err(de::Error::custom),
            other => Err(de::Error::custom(format!(
                "expected an algorithm name such as \"reno\" or a table such as {{ algo = \"multcp\", n = 4 }}, got {other}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<CcConfig, String> {
        serde_json::from_str::<CcConfig>(json).map_err(|e| e.to_string())
    }

    #[test]
    fn names_and_tables_select_algorithms_with_defaults() {
        assert_eq!(parse("\"reno\"").unwrap(), CcConfig::Reno);
        assert_eq!(parse("{\"algo\": \"scalable\"}").unwrap(), CcConfig::Scalable { variant: ScalableVariant::Paper });
        assert_eq!(
            parse("{\"algo\": \"multcp\", \"n\": 4}").unwrap(),
            CcConfig::Multcp { n: 4.0, slow_start: MulTcpSlowStart::Standard, loss_policy: LossPolicy::Multcp }
        );
    }

    #[test]
    fn normalized_form_round_trips() {
        for cfg in [
            CcConfig::Reno,
            CcConfig::Scalable { variant: ScalableVariant::Linux },
            CcConfig::Multcp { n: 2.5, slow_start: MulTcpSlowStart::Triple, loss_policy: LossPolicy::Ns2 },
        ] {
            let json = serde_json::to_string(&cfg).unwrap();
            assert_eq!(parse(&json).unwrap(), cfg, "{json}");
        }
    }

    #[test]
    fn bad_names_and_parameters_are_precise() {
        let e = parse("\"cubicc\"").unwrap_err();
        assert!(e.starts_with("unknown algorithm `cubicc`, expected one of `reno`, `scalable`, `multcp`"), "{e}");
        let e = parse("{\"algo\": \"multcp\", \"n\": 0.5}").unwrap_err();
        assert!(e.starts_with("n: must be a number of flows >= 1, got 0.5"), "{e}");
        let e = parse("{\"algo\": \"multcp\", \"m\": 2}").unwrap_err();
        assert!(e.contains("unknown field `m`") && e.contains("algo = \"multcp\""), "{e}");
        let e = parse("{\"algo\": \"scalable\", \"variant\": \"bsd\"}").unwrap_err();
        assert!(e.starts_with("variant: unknown variant `bsd`, expected `paper` or `linux`"), "{e}");
        let e = parse("{\"n\": 2}").unwrap_err();
        assert!(e.starts_with("missing field `algo`"), "{e}");
        assert!(parse("{\"algo\": \"reno\", \"a\": 2}").is_err());
        assert!(parse("3").unwrap_err().starts_with("expected an algorithm name"));
    }
}
