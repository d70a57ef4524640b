//! Connections opened while the simulation runs: a flow group with `[flows.arrivals]` is a
//! workload of finite TCP transfers between its two end hosts, opened by one of three
//! processes (see `docs/traffic.md`):
//!
//! - `poisson`: transfers start at the instants of a Poisson process of `rate` per second;
//! - `closed_loop`: `users` users each alternate a transfer and a `think` time (the next
//!   transfer starts a think time after the previous one completed), as in web and NIST-style
//!   workloads;
//! - `trace`: transfers start at given times with given sizes (inline or from a CSV file);
//! - `sessions`: `sources` sequential WWW sources, each a sequence of sessions of pages
//!   ([`super::sessions`]);
//! - `http`: `users` HTTP clients, each fetching sessions of documents over HTTP/1.0 or
//!   HTTP/1.1 ([`super::http`]).
//!
//! Sizes (and think times) follow a distribution ([`DistCfg`]): a fixed value, or exponential,
//! Pareto, lognormal, gamma or uniform. Every random aspect has its own stream: per group for a
//! Poisson process's gaps and sizes, per user (per source) for a closed loop's think times and
//! sizes (a sessions group's draws), so two
//! runs that differ only in the algorithm under test see the same sizes in the same order.

use super::http::{DocumentsCfg, Http, HttpVersion};
use super::population::{Population, PopulationCfg};
use super::sessions::{Count, PageRounding, SessionPreset, Sessions};
use crate::engine::Stream;
use crate::units::{Bytes, Dur, Time, NS_PER_SEC};
use crate::ConfigError;
use rand_distr::{Distribution, Exp, Gamma, LogNormal, Pareto, Uniform};
use serde::de::{self, value::MapAccessDeserializer, Deserializer, IntoDeserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;
use std::marker::PhantomData;
use std::path::Path;
use std::sync::Arc;

/// A quantity a distribution can be given in: sizes in bytes, times in seconds.
pub trait Quantity: Copy + fmt::Display + Serialize + for<'de> Deserialize<'de> {
    /// The value in the base unit (bytes, seconds).
    fn base(self) -> f64;
    /// What the quantity is, for messages ("a size", "a time").
    const WHAT: &'static str;
}

impl Quantity for Bytes {
    fn base(self) -> f64 {
        self.0 as f64
    }
    const WHAT: &'static str = "a size";
}

impl Quantity for Dur {
    fn base(self) -> f64 {
        self.0 as f64 / NS_PER_SEC as f64
    }
    const WHAT: &'static str = "a time";
}

/// Families of distributions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DistKind {
    /// Always `mean`.
    Constant,
    /// Exponential with mean `mean`.
    Exponential,
    /// Pareto with shape `shape` and either mean `mean` (shape > 1) or scale (minimum)
    /// `scale`.
    Pareto,
    /// Lognormal whose own mean and standard deviation are `mean` and `sd`.
    Lognormal,
    /// Gamma with mean `mean` and standard deviation `sd`.
    Gamma,
    /// Uniform between `min` and `max`.
    Uniform,
}

impl DistKind {
    fn as_str(self) -> &'static str {
        match self {
            DistKind::Constant => "constant",
            DistKind::Exponential => "exponential",
            DistKind::Pareto => "pareto",
            DistKind::Lognormal => "lognormal",
            DistKind::Gamma => "gamma",
            DistKind::Uniform => "uniform",
        }
    }
}

/// A distribution as a table: `{ dist = "pareto", mean = "70KB", shape = 1.2 }`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, bound = "")]
pub struct DistTable<Q: Quantity> {
    /// The family.
    pub dist: DistKind,
    /// Mean (constant: the value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<Q>,
    /// Standard deviation (lognormal, gamma).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sd: Option<Q>,
    /// Pareto: the shape α.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<f64>,
    /// Pareto: the scale (minimum), instead of the mean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<Q>,
    /// Uniform: the bounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<Q>,
    /// Uniform: the bounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<Q>,
}

/// A distribution of a positive quantity as written in a scenario: a fixed value (`"100KB"`,
/// `"5s"`) or a [`DistTable`].
#[derive(Clone, Copy, Debug)]
pub enum DistCfg<Q: Quantity> {
    /// Always this value.
    Fixed(Q),
    /// Drawn from a distribution.
    Table(DistTable<Q>),
}

impl<Q: Quantity> Serialize for DistCfg<Q> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            DistCfg::Fixed(q) => q.serialize(s),
            DistCfg::Table(t) => t.serialize(s),
        }
    }
}

impl<'de, Q: Quantity> Deserialize<'de> for DistCfg<Q> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<Q>(PhantomData<Q>);
        impl<'de, Q: Quantity> Visitor<'de> for V<Q> {
            type Value = DistCfg<Q>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "{} (e.g. \"100KB\" or \"5s\") or a distribution table such as {{ dist = \"exponential\", mean = ... }}", Q::WHAT)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Q::deserialize(v.into_deserializer()).map(DistCfg::Fixed)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Q::deserialize(v.into_deserializer()).map(DistCfg::Fixed)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Q::deserialize(v.into_deserializer()).map(DistCfg::Fixed)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Q::deserialize(v.into_deserializer()).map(DistCfg::Fixed)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                DistTable::deserialize(MapAccessDeserializer::new(map)).map(DistCfg::Table)
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// A resolved distribution over the base unit (bytes or seconds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dist {
    /// Always this value.
    Constant(f64),
    /// Exponential of this mean.
    Exponential(Exp<f64>),
    /// Pareto.
    Pareto(Pareto<f64>),
    /// Lognormal.
    Lognormal(LogNormal<f64>),
    /// Gamma.
    Gamma(Gamma<f64>),
    /// Uniform.
    Uniform(Uniform<f64>),
}

impl Dist {
    /// One draw.
    #[inline]
    pub fn sample(&self, rng: &mut Stream) -> f64 {
        match self {
            Dist::Constant(v) => *v,
            Dist::Exponential(d) => d.sample(rng),
            Dist::Pareto(d) => d.sample(rng),
            Dist::Lognormal(d) => d.sample(rng),
            Dist::Gamma(d) => d.sample(rng),
            Dist::Uniform(d) => d.sample(rng),
        }
    }
}

impl DistCfg<Dur> {
    /// As [`DistCfg::resolve`], but a fixed time may also be zero (`"0s"`): a user who opens
    /// its next transfer as soon as the previous one completed.
    pub fn resolve_time(&self, path: &str) -> Result<Dist, ConfigError> {
        match self {
            DistCfg::Fixed(Dur(0)) => Ok(Dist::Constant(0.0)),
            _ => self.resolve(path),
        }
    }
}

impl<Q: Quantity> DistCfg<Q> {
    /// Check the parameters (`path` is the field path) and resolve the distribution.
    pub fn resolve(&self, path: &str) -> Result<Dist, ConfigError> {
        let t = match self {
            DistCfg::Fixed(q) => {
                let v = q.base();
                if v <= 0.0 {
                    return Err(ConfigError::new(path, format!("must be greater than 0, got {q}")));
                }
                return Ok(Dist::Constant(v));
            }
            DistCfg::Table(t) => t,
        };
        let kind = t.dist.as_str();
        let err = |field: &str, msg: String| Err(ConfigError::new(format!("{path}.{field}"), msg));
        let need = |field: &str, v: Option<Q>| -> Result<f64, ConfigError> {
            match v {
                None => Err(ConfigError::new(format!("{path}.{field}"), format!("is required with dist = \"{kind}\""))),
                Some(q) if q.base() <= 0.0 => {
                    Err(ConfigError::new(format!("{path}.{field}"), format!("must be greater than 0, got {q}")))
                }
                Some(q) => Ok(q.base()),
            }
        };
        // Fields a family does not use are mistakes.
        let used: &[&str] = match t.dist {
            DistKind::Constant | DistKind::Exponential => &["mean"],
            DistKind::Pareto => &["mean", "shape", "scale"],
            DistKind::Lognormal | DistKind::Gamma => &["mean", "sd"],
            DistKind::Uniform => &["min", "max"],
        };
        let given = [
            ("mean", t.mean.is_some()),
            ("sd", t.sd.is_some()),
            ("shape", t.shape.is_some()),
            ("scale", t.scale.is_some()),
            ("min", t.min.is_some()),
            ("max", t.max.is_some()),
        ];
        if let Some((field, _)) = given.iter().find(|(f, g)| *g && !used.contains(f)) {
            return err(
                field,
                format!("is not a parameter of dist = \"{kind}\"; its parameters are {}", used.join(", ")),
            );
        }
        let bad = |field: &str, e: &dyn fmt::Display| ConfigError::new(format!("{path}.{field}"), e.to_string());
        Ok(match t.dist {
            DistKind::Constant => Dist::Constant(need("mean", t.mean)?),
            DistKind::Exponential => {
                Dist::Exponential(Exp::new(1.0 / need("mean", t.mean)?).map_err(|e| bad("mean", &e))?)
            }
            DistKind::Pareto => {
                let shape = match t.shape {
                    Some(a) if a > 0.0 && a.is_finite() => a,
                    Some(a) => return err("shape", format!("must be a positive number, got {a}")),
                    None => return err("shape", "is required with dist = \"pareto\"".into()),
                };
                let scale = match (t.mean, t.scale) {
                    (Some(_), Some(_)) => return err("scale", "give either mean or scale, not both".into()),
                    (None, None) => return err("mean", "is required with dist = \"pareto\" (or give scale)".into()),
                    (Some(_), None) if shape <= 1.0 => {
                        return err("mean", format!("is infinite for shape = {shape} (≤ 1); give scale instead"))
                    }
                    (Some(m), None) => need("mean", Some(m))? * (shape - 1.0) / shape,
                    (None, Some(s)) => need("scale", Some(s))?,
                };
                Dist::Pareto(Pareto::new(scale, shape).map_err(|e| bad("shape", &e))?)
            }
            DistKind::Lognormal => {
                let (m, sd) = (need("mean", t.mean)?, need("sd", t.sd)?);
                // The mean and deviation are those of the variable itself (resolution efcm:A8).
                let sigma2 = (1.0 + (sd / m).powi(2)).ln();
                Dist::Lognormal(LogNormal::new(m.ln() - sigma2 / 2.0, sigma2.sqrt()).map_err(|e| bad("sd", &e))?)
            }
            DistKind::Gamma => {
                let (m, sd) = (need("mean", t.mean)?, need("sd", t.sd)?);
                let shape = (m / sd).powi(2);
                Dist::Gamma(Gamma::new(shape, sd * sd / m).map_err(|e| bad("sd", &e))?)
            }
            DistKind::Uniform => {
                // The lower bound may be zero: a first start anywhere from the group's start on.
                let lo = match t.min {
                    Some(q) if q.base() == 0.0 => 0.0,
                    m => need("min", m)?,
                };
                let hi = need("max", t.max)?;
                if hi < lo {
                    return err(
                        "max",
                        format!("{} is below min = {}", t.max.expect("checked"), t.min.expect("checked")),
                    );
                }
                Dist::Uniform(Uniform::new_inclusive(lo, hi).map_err(|e| bad("max", &e))?)
            }
        })
    }
}

/// Which process opens the connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArrivalKind {
    /// A Poisson process of `rate` connections per second.
    Poisson,
    /// `users` users, each alternating a transfer and a think time.
    ClosedLoop,
    /// Given start times and sizes.
    Trace,
    /// `sources` sequential sources of sessions of pages.
    Sessions,
    /// `users` HTTP clients fetching sessions of documents.
    Http,
    /// Sources under access routers sending to receivers drawn at random (`population`).
    Population,
}

impl ArrivalKind {
    fn as_str(self) -> &'static str {
        match self {
            ArrivalKind::Poisson => "poisson",
            ArrivalKind::ClosedLoop => "closed_loop",
            ArrivalKind::Trace => "trace",
            ArrivalKind::Sessions => "sessions",
            ArrivalKind::Http => "http",
            ArrivalKind::Population => "population",
        }
    }
}

/// One transfer of an inline trace: `["1.5s", "20KB"]`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct TraceEntry(pub Dur, pub Bytes);

/// `[flows.arrivals]` as written in a scenario.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArrivalsCfg {
    /// The process.
    pub process: ArrivalKind,
    /// Poisson: connections per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Closed loop: the number of users. HTTP: the number of clients (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub users: Option<u32>,
    /// Closed loop: the think time between a user's transfers. Sessions: the reading time
    /// between the pages of a session. HTTP: the pause between a client's sessions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think: Option<DistCfg<Dur>>,
    /// Sessions: the number of sequential sources (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<u32>,
    /// Sessions: a published parameter set for `session_gap`, `pages`, `think` and `size`;
    /// those given as well override it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<SessionPreset>,
    /// Sessions: the time from a session's last page's completion to the next session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_gap: Option<DistCfg<Dur>>,
    /// Sessions: pages per session (a number without unit, made whole by `pages_rounding`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<DistCfg<Count>>,
    /// Sessions: how a drawn number of pages becomes whole (default `nearest`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages_rounding: Option<PageRounding>,
    /// Poisson, closed loop and sessions: the size of each transfer (page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<DistCfg<Bytes>>,
    /// Trace: the transfers, `[[start, size], …]`, start times from the group's `start`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfers: Option<Vec<TraceEntry>>,
    /// Trace: a CSV file of transfers (start time, size per line; relative to the scenario
    /// file's directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// At most this many connections are opened (in all, not per user).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    /// HTTP: `"1.0"` or `"1.1"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<HttpVersion>,
    /// HTTP: each session's documents, a list of sizes or a weighted mix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documents: Option<DocumentsCfg>,
    /// HTTP: sessions per client (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<u64>,
    /// HTTP/1.1: keep the window from one document to the next (default false: restart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_cwnd: Option<bool>,
    /// HTTP: the wire size of a request (default: an ACK's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_size: Option<Bytes>,
    /// Population: its hosts, interfaces, algorithms and file types
    /// ([`crate::traffic::population`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub population: Option<PopulationCfg>,
}

/// The most users of a closed-loop group (each is allocated when the run is built).
pub const MAX_USERS: u32 = 1_000_000;

/// A resolved arrival process.
#[derive(Clone, Debug, PartialEq)]
pub enum Process {
    /// Poisson arrivals: exponential gaps of mean `1 / rate` seconds.
    Poisson {
        /// Gap between arrivals, seconds.
        gap: Dist,
        /// Transfer size, bytes.
        size: Dist,
    },
    /// Closed-loop users.
    ClosedLoop {
        /// Users.
        users: u32,
        /// Think time, seconds.
        think: Dist,
        /// Transfer size, bytes.
        size: Dist,
    },
    /// Transfers at given times (from the group's start, sorted) with given sizes.
    Trace(Vec<(Time, u64)>),
    /// Sequential sources of sessions of pages.
    Sessions(Sessions),
    /// HTTP clients.
    Http(Http),
    /// A population of sources and receivers: `think` between a source's transfers, `size`
    /// of a Web object.
    Population {
        /// Think time, seconds.
        think: Dist,
        /// Web-object size, bytes.
        size: Dist,
        /// The hosts.
        hosts: Arc<Population>,
    },
}

impl ArrivalsCfg {
    /// Write out what a sessions group leaves to defaults: `sources`, `pages_rounding` and the
    /// distributions its `model` gives, so a normalized scenario shows every parameter (and
    /// reads back the same).
    pub fn fill_defaults(&mut self) {
        if self.process != ArrivalKind::Sessions {
            return;
        }
        self.sources.get_or_insert(1);
        self.pages_rounding.get_or_insert_default();
        if let Some(m) = self.model {
            self.session_gap.get_or_insert(m.session_gap());
            self.pages.get_or_insert(m.pages());
            self.think.get_or_insert(m.think());
            self.size.get_or_insert(m.size());
        }
    }

    /// Check the table (`path` is its field path) and resolve the process; a trace `file` is
    /// read relative to `base_dir`.
    pub fn resolve(&self, path: &str, base_dir: Option<&Path>) -> Result<(Process, Option<u64>), ConfigError> {
        let kind = self.process;
        let err = |field: &str, msg: String| Err(ConfigError::new(format!("{path}.{field}"), msg));
        use ArrivalKind::{ClosedLoop, Http as H, Poisson, Population as Pop, Sessions as Sess};
        let fields: [(&str, bool, &[ArrivalKind]); 17] = [
            ("rate", self.rate.is_some(), &[Poisson]),
            ("users", self.users.is_some(), &[ClosedLoop, H]),
            ("sources", self.sources.is_some(), &[Sess]),
            ("model", self.model.is_some(), &[Sess]),
            ("session_gap", self.session_gap.is_some(), &[Sess]),
            ("pages", self.pages.is_some(), &[Sess]),
            ("pages_rounding", self.pages_rounding.is_some(), &[Sess]),
            ("think", self.think.is_some(), &[ClosedLoop, Sess, H, Pop]),
            ("size", self.size.is_some(), &[Poisson, ClosedLoop, Sess, Pop]),
            ("transfers", self.transfers.is_some(), &[ArrivalKind::Trace]),
            ("file", self.file.is_some(), &[ArrivalKind::Trace]),
            ("version", self.version.is_some(), &[H]),
            ("documents", self.documents.is_some(), &[H]),
            ("sessions", self.sessions.is_some(), &[H]),
            ("persistent_cwnd", self.persistent_cwnd.is_some(), &[H]),
            ("request_size", self.request_size.is_some(), &[H]),
            ("population", self.population.is_some(), &[Pop]),
        ];
        for (name, present, kinds) in fields {
            if present && !kinds.contains(&kind) {
                let mut allowed: Vec<&str> = fields.iter().filter(|f| f.2.contains(&kind)).map(|f| f.0).collect();
                allowed.push("limit");
                return err(
                    name,
                    format!("not a field of process \"{}\"; its fields are {}", kind.as_str(), allowed.join(", ")),
                );
            }
        }
        if self.limit == Some(0) {
            return err("limit", "must be at least 1 (omit it for no limit)".into());
        }
        let size = |s: &Option<DistCfg<Bytes>>| match s {
            Some(d) => d.resolve(&format!("{path}.size")),
            None => Err(ConfigError::new(format!("{path}.size"), "is required: the size of each transfer")),
        };
        let process = match kind {
            ArrivalKind::Poisson => {
                let rate = match self.rate {
                    Some(r) if r > 0.0 && r.is_finite() => r,
                    Some(r) => {
                        return err("rate", format!("must be a positive number of connections per second, got {r}"))
                    }
                    None => return err("rate", "is required: connections per second".into()),
                };
                let gap = Exp::new(rate).map_err(|e| ConfigError::new(format!("{path}.rate"), e.to_string()))?;
                Process::Poisson { gap: Dist::Exponential(gap), size: size(&self.size)? }
            }
            ArrivalKind::ClosedLoop => {
                let users = match self.users {
                    Some(0) => return err("users", "must be at least 1".into()),
                    Some(u) if u > MAX_USERS => return err("users", format!("must be at most {MAX_USERS}, got {u}")),
                    Some(u) => u,
                    None => return err("users", "is required: the number of users".into()),
                };
                let think = match &self.think {
                    Some(t) => t.resolve_time(&format!("{path}.think"))?,
                    None => return err("think", "is required: the think time between a user's transfers".into()),
                };
                Process::ClosedLoop { users, think, size: size(&self.size)? }
            }
            ArrivalKind::Sessions => {
                let sources = match self.sources {
                    Some(0) => return err("sources", "must be at least 1".into()),
                    Some(u) if u > MAX_USERS => return err("sources", format!("must be at most {MAX_USERS}, got {u}")),
                    Some(u) => u,
                    None => 1,
                };
                let model = self.model;
                // A field given wins over the preset; without either it is missing.
                fn pick<Q: Quantity>(
                    given: &Option<DistCfg<Q>>,
                    preset: Option<DistCfg<Q>>,
                    path: &str,
                    what: &str,
                ) -> Result<DistCfg<Q>, ConfigError> {
                    given.or(preset).ok_or_else(|| {
                        ConfigError::new(path, format!("is required: {what} (or give model = \"reyes_lecuona\")"))
                    })
                }
                let field = |f: &str| format!("{path}.{f}");
                let gap = pick(
                    &self.session_gap,
                    model.map(|m| m.session_gap()),
                    &field("session_gap"),
                    "the time between a session's last page and the next session",
                )?;
                let pages =
                    pick(&self.pages, model.map(|m| m.pages()), &field("pages"), "the number of pages per session")?;
                let think =
                    pick(&self.think, model.map(|m| m.think()), &field("think"), "the reading time between pages")?;
                let page_size = pick(&self.size, model.map(|m| m.size()), &field("size"), "the size of each page")?;
                Process::Sessions(Sessions {
                    sources,
                    gap: gap.resolve_time(&field("session_gap"))?,
                    pages: pages.resolve(&field("pages"))?,
                    rounding: self.pages_rounding.unwrap_or_default(),
                    think: think.resolve_time(&field("think"))?,
                    size: page_size.resolve(&field("size"))?,
                })
            }
            ArrivalKind::Http => {
                let version = match self.version {
                    Some(v) => v,
                    None => return err("version", "is required: \"1.0\" or \"1.1\"".into()),
                };
                let documents = match &self.documents {
                    Some(d) => d.resolve(&format!("{path}.documents"))?,
                    None => {
                        return err(
                            "documents",
                            "is required: a list of sizes such as [\"100KB\", \"10KB\"] or a mix \
                             { sizes = [...], weights = [...], count = 10 }"
                                .into(),
                        )
                    }
                };
                if self.persistent_cwnd.is_some() && version == HttpVersion::V1_0 {
                    return err(
                        "persistent_cwnd",
                        "applies to version = \"1.1\" (HTTP/1.0 opens a new connection per document)".into(),
                    );
                }
                let clients = match self.users {
                    Some(0) => return err("users", "must be at least 1".into()),
                    Some(u) if u > MAX_USERS => return err("users", format!("must be at most {MAX_USERS}, got {u}")),
                    Some(u) => u,
                    None => 1,
                };
                let sessions = match self.sessions {
                    Some(0) => return err("sessions", "must be at least 1".into()),
                    Some(n) => n,
                    None => 1,
                };
                let request_size = match self.request_size {
                    Some(Bytes(0)) => return err("request_size", "must be at least 1B".into()),
                    Some(Bytes(b)) if b > u64::from(u32::MAX) => {
                        return err("request_size", format!("must be at most {}B, got {b}B", u32::MAX))
                    }
                    Some(Bytes(b)) => Some(b as u32),
                    None => None,
                };
                let think = match &self.think {
                    Some(t) => t.resolve_time(&format!("{path}.think"))?,
                    None => Dist::Constant(0.0),
                };
                Process::Http(Http {
                    clients,
                    version,
                    documents,
                    sessions,
                    think,
                    persistent_cwnd: self.persistent_cwnd.unwrap_or(false),
                    request_size,
                })
            }
            ArrivalKind::Population => {
                let think = match &self.think {
                    Some(t) => t.resolve_time(&format!("{path}.think"))?,
                    None => return err("think", "is required: the think time between a source's transfers".into()),
                };
                let hosts = match &self.population {
                    Some(p) => Arc::new(p.resolve(&format!("{path}.population"))?),
                    None => return err("population", "is required: the sources, receivers and their nodes".into()),
                };
                Process::Population { think, size: size(&self.size)?, hosts }
            }
            ArrivalKind::Trace => {
                let mut list = match (&self.transfers, &self.file) {
                    (Some(_), Some(_)) => return err("file", "give either transfers or file, not both".into()),
                    (None, None) => return err("transfers", "is required (or give a file)".into()),
                    (Some(t), None) => {
                        let mut list = Vec::with_capacity(t.len());
                        for (i, e) in t.iter().enumerate() {
                            if e.1 .0 == 0 {
                                return err(&format!("transfers[{i}]"), "a transfer needs at least 1B".into());
                            }
                            list.push((e.0 .0, e.1 .0));
                        }
                        list
                    }
                    (None, Some(f)) => read_trace(&format!("{path}.file"), f, base_dir)?,
                };
                if list.is_empty() {
                    return err(if self.file.is_some() { "file" } else { "transfers" }, "holds no transfer".into());
                }
                // Stable: transfers at the same time open in the order given.
                list.sort_by_key(|e| e.0);
                Process::Trace(list)
            }
        };
        Ok((process, self.limit))
    }
}

/// Read a trace file: one transfer per line, `start, size` (a time such as `1.5s` or plain
/// seconds, a size such as `20KB` or plain bytes); a first line that is not a transfer is taken
/// as a header; `#` starts a comment.
fn read_trace(path: &str, file: &str, base_dir: Option<&Path>) -> Result<Vec<(Time, u64)>, ConfigError> {
    let full = match base_dir {
        Some(dir) if Path::new(file).is_relative() => dir.join(file),
        _ => Path::new(file).to_path_buf(),
    };
    let text = std::fs::read_to_string(&full)
        .map_err(|e| ConfigError::new(path, format!("cannot read \"{}\": {e}", full.display())))?;
    let mut out = Vec::new();
    for (k, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        let parsed = match cells.as_slice() {
            [t, s] => cell_time(t).and_then(|t| cell_size(s).map(|s| (t, s))),
            _ => Err(format!("expected two columns (start, size), found {}", cells.len())),
        };
        match parsed {
            Ok((t, s)) if s.0 > 0 => out.push((t.0, s.0)),
            Ok(_) => return Err(ConfigError::new(path, format!("line {}: a transfer needs at least 1B", k + 1))),
            // A header line.
            Err(_) if out.is_empty() && k == 0 => {}
            Err(e) => return Err(ConfigError::new(path, format!("line {}: {e}", k + 1))),
        }
    }
    Ok(out)
}

/// A time cell: `1.5s`, or plain seconds.
fn cell_time(cell: &str) -> Result<Dur, String> {
    match cell.parse::<f64>() {
        Ok(s) if s >= 0.0 && s.is_finite() => Ok(Dur((s * NS_PER_SEC as f64).round() as u64)),
        Ok(s) => Err(format!("a start time must be a time >= 0, got {s}")),
        Err(_) => Dur::parse(cell),
    }
}

/// A size cell: `20KB`, or plain bytes.
fn cell_size(cell: &str) -> Result<Bytes, String> {
    match cell.parse::<u64>() {
        Ok(b) => Ok(Bytes(b)),
        Err(_) => Bytes::parse(cell),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    fn dist(toml_value: &str) -> Result<Dist, String> {
        #[derive(Deserialize)]
        struct W {
            d: DistCfg<Bytes>,
        }
        let w: W = toml::from_str(&format!("d = {toml_value}")).map_err(|e| e.to_string())?;
        w.d.resolve("size").map_err(|e| e.to_string())
    }

    fn mean_of(d: &Dist, n: usize) -> f64 {
        let mut rng = stream(1, "test");
        (0..n).map(|_| d.sample(&mut rng)).sum::<f64>() / n as f64
    }

    #[test]
    fn fixed_values_and_tables_resolve_with_the_right_means() {
        assert_eq!(dist("\"100KB\"").unwrap(), Dist::Constant(100_000.0));
        assert_eq!(dist("\"1460 B\"").unwrap(), Dist::Constant(1460.0));
        assert!(dist("1460").unwrap_err().contains("1460 has no unit; write a size such as \"1460B\""));
        for (t, mean) in [
            ("{ dist = \"exponential\", mean = \"10KB\" }", 10_000.0),
            ("{ dist = \"pareto\", mean = \"70KB\", shape = 2.5 }", 70_000.0),
            ("{ dist = \"lognormal\", mean = \"25KB\", sd = \"50KB\" }", 25_000.0),
            ("{ dist = \"gamma\", mean = \"35KB\", sd = \"50KB\" }", 35_000.0),
            ("{ dist = \"uniform\", min = \"10KB\", max = \"30KB\" }", 20_000.0),
        ] {
            let m = mean_of(&dist(t).unwrap(), 400_000);
            assert!((m / mean - 1.0).abs() < 0.03, "{t}: mean {m}");
        }
        // A Pareto given by its scale never draws below it.
        let p = dist("{ dist = \"pareto\", scale = \"30458B\", shape = 1.7584 }").unwrap();
        let mut rng = stream(1, "p");
        assert!((0..10_000).all(|_| p.sample(&mut rng) >= 30_458.0));
    }

    #[test]
    fn mistakes_are_named() {
        assert_eq!(dist("0").unwrap_err(), "size: must be greater than 0, got 0B");
        assert_eq!(
            dist("{ dist = \"exponential\", mean = \"1KB\", shape = 2 }").unwrap_err(),
            "size.shape: is not a parameter of dist = \"exponential\"; its parameters are mean"
        );
        assert_eq!(
            dist("{ dist = \"gamma\", mean = \"1KB\" }").unwrap_err(),
            "size.sd: is required with dist = \"gamma\""
        );
        assert!(dist("{ dist = \"pareto\", mean = \"1KB\", shape = 1 }")
            .unwrap_err()
            .starts_with("size.mean: is infinite"));
        assert!(dist("{ dist = \"zipf\", mean = \"1KB\" }").unwrap_err().contains("unknown variant `zipf`"));
        assert!(dist("{ dist = \"uniform\", min = \"3KB\", max = \"1KB\" }")
            .unwrap_err()
            .starts_with("size.max: 1KB is below"));
    }

    #[test]
    fn trace_files_read_times_and_sizes() {
        let dir = std::env::temp_dir().join(format!("flowshare-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("t.csv"), "start,size\n0.5s, 20KB\n# a comment\n1.25, 1460\n").unwrap();
        let cfg = ArrivalsCfg {
            process: ArrivalKind::Trace,
            rate: None,
            users: None,
            think: None,
            sources: None,
            model: None,
            session_gap: None,
            pages: None,
            pages_rounding: None,
            size: None,
            transfers: None,
            file: Some("t.csv".into()),
            limit: None,
            version: None,
            documents: None,
            sessions: None,
            persistent_cwnd: None,
            request_size: None,
            population: None,
        };
        let (p, _) = cfg.resolve("flows[0].arrivals", Some(&dir)).unwrap();
        assert_eq!(p, Process::Trace(vec![(500_000_000, 20_000), (1_250_000_000, 1460)]));
        std::fs::write(dir.join("t.csv"), "0.5s, 20KB\n1s, lots\n").unwrap();
        let e = cfg.resolve("flows[0].arrivals", Some(&dir)).unwrap_err().to_string();
        assert!(e.starts_with("flows[0].arrivals.file: line 2:"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
