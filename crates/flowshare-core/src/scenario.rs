//! Scenario documents: parsing, validation and building.
//!
//! A scenario is data (TOML or JSON). Parsing rejects unknown keys and ill-formed values with
//! the path of the field; [`Scenario::build`] then checks what a schema cannot (references
//! between nodes, reachable destinations, consistent bounds) and produces the network and the
//! connection list. After that, types are trusted.

use crate::cc::CcConfig;
use crate::engine::stream;
use crate::net::codel::CodelParams;
use crate::net::link::LinkParams;
use crate::net::loss::{LossCfg, LossProcess};
use crate::net::red::{self, Red, RedParams};
use crate::net::sched::{
    ClassNames, Discipline, Drr, EnhancedRed, EnhancedRedParams, FqCodel, Overflow, PerFlow, Scheduler, SubAqm,
    SubQueue,
};
use crate::net::{shortest_path, Aqm, Limit, LinkId, Network, NodeId};
use crate::tcp::{MisRx, MisRxReference, Recovery, TcpConfig};
use crate::traffic::{SourceCfg, SourceSpec, Transport};
use crate::units::{Bytes, Dur, Rate, Time};
use crate::ConfigError;
use rand_core::RngCore;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;

/// A whole scenario.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Run-wide settings.
    pub simulation: SimulationCfg,
    /// The network.
    pub topology: Topology,
    /// Flow groups.
    pub flows: Vec<FlowGroup>,
    /// Packet event trace and pcap captures (`docs/traces.md`); absent = none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::trace::TraceCfg>,
    /// Link rate, delay and up/down changes at given times (`docs/links.md`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<ChangeCfg>,
}

/// A change of a link or LAN at a given time (`[[changes]]`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChangeCfg {
    /// When it applies.
    pub at: Dur,
    /// Name of the link or LAN (`"bottleneck"` in a dumbbell).
    pub link: String,
    /// Which directions of a point-to-point link (default both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<ChangeDirection>,
    /// New rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// New propagation delay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Dur>,
    /// Up (true) or down (false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up: Option<bool>,
}

/// Directions a change applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeDirection {
    /// The link's forward direction only.
    Forward,
    /// The reverse direction only.
    Reverse,
    /// Both.
    Both,
}

/// A resolved change.
#[derive(Clone, Debug)]
pub struct LinkChange {
    /// When it applies.
    pub at: Time,
    /// The link directions it applies to.
    pub dirs: Vec<LinkId>,
    /// New rate.
    pub rate: Option<Rate>,
    /// New delay.
    pub delay: Option<Time>,
    /// Up or down.
    pub up: Option<bool>,
}

/// Run-wide settings.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimulationCfg {
    /// Simulated time to run.
    pub duration: Dur,
    /// Master seed of every random stream.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Period of the time series; zero turns them off.
    #[serde(default = "default_sample_interval")]
    pub sample_interval: Dur,
}

fn default_seed() -> u64 {
    1
}
fn default_sample_interval() -> Dur {
    Dur::from_millis(100)
}

/// Topology builders.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TopologyKind {
    /// Two routers joined by a bottleneck; every flow has its own hosts and access links.
    Dumbbell,
    /// A chain of routers; flows enter and leave at given routers through their own access links.
    ParkingLot,
    /// Named nodes and links.
    Graph,
}

impl TopologyKind {
    fn as_str(self) -> &'static str {
        match self {
            TopologyKind::Dumbbell => "dumbbell",
            TopologyKind::ParkingLot => "parking_lot",
            TopologyKind::Graph => "graph",
        }
    }
}

/// The network. Which of the optional fields apply depends on `kind` (checked by
/// [`Scenario::build`]); a flat table keeps every error message's field path exact.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    /// Which builder.
    pub kind: TopologyKind,
    /// Dumbbell: the link between the routers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottleneck: Option<LinkCfg>,
    /// Dumbbell and parking lot: default access links of every flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<LinkCfg>,
    /// Parking lot: number of routers in the chain (at least 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routers: Option<u32>,
    /// Parking lot: every router-to-router link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<LinkCfg>,
    /// Graph: node names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Vec<String>>,
    /// Graph: full-duplex links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links: Option<Vec<GraphLink>>,
    /// Graph: shared-medium LANs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lans: Option<Vec<LanCfg>>,
}

/// A shared-medium LAN of an explicit graph: one half-duplex channel of `rate` and `delay`
/// that every station (node in `nodes`) and both directions share, served first come first
/// served, with a queue per station.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LanCfg {
    /// Name in results, trace selectors and changes (unique).
    pub name: String,
    /// The stations (at least two).
    pub nodes: Vec<String>,
    /// Capacity of the channel, shared by all stations and directions.
    pub rate: Rate,
    /// Propagation delay between any two stations.
    pub delay: Dur,
    /// Each station's interface queue.
    #[serde(default)]
    pub queue: QueueCfg,
    /// Per-station queues that differ from `queue`, by node name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub queues: BTreeMap<String, QueueCfg>,
    /// Loss model of every station's transmissions, each station with its own stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<LossCfg>,
}

impl Topology {
    /// Check that exactly the fields of `kind` are present.
    fn check_fields(&self) -> Result<(), ConfigError> {
        let kind = self.kind;
        let fields: [(&str, bool, &[TopologyKind]); 6] = [
            ("bottleneck", self.bottleneck.is_some(), &[TopologyKind::Dumbbell]),
            ("access", self.access.is_some(), &[TopologyKind::Dumbbell, TopologyKind::ParkingLot]),
            ("routers", self.routers.is_some(), &[TopologyKind::ParkingLot]),
            ("link", self.link.is_some(), &[TopologyKind::ParkingLot]),
            ("nodes", self.nodes.is_some(), &[TopologyKind::Graph]),
            ("links", self.links.is_some(), &[TopologyKind::Graph]),
        ];
        if self.lans.is_some() && kind != TopologyKind::Graph {
            return Err(ConfigError::new(
                "topology.lans",
                format!("only allowed with kind \"graph\", this is \"{}\"", kind.as_str()),
            ));
        }
        for (name, present, kinds) in fields {
            let applies = kinds.contains(&kind);
            if present && !applies {
                let allowed: Vec<_> = fields.iter().filter(|f| f.2.contains(&kind)).map(|f| f.0).collect();
                return Err(ConfigError::new(
                    format!("topology.{name}"),
                    format!("not a field of kind \"{}\"; its fields are {}", kind.as_str(), allowed.join(", ")),
                ));
            }
            if !present && applies {
                return Err(ConfigError::new(
                    format!("topology.{name}"),
                    format!("is required with kind \"{}\"", kind.as_str()),
                ));
            }
        }
        Ok(())
    }
}

/// A link's parameters. Rate, delay and queue apply to both directions unless `reverse`
/// overrides them for the reverse one; `loss` applies to the forward direction only.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkCfg {
    /// Transmission rate.
    pub rate: Rate,
    /// One-way propagation delay.
    pub delay: Dur,
    /// Queue discipline and capacity.
    #[serde(default)]
    pub queue: QueueCfg,
    /// Loss model of the forward direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<LossCfg>,
    /// How the reverse direction differs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse: Option<ReverseCfg>,
}

/// The reverse direction of a link: absent fields take the forward direction's value, except
/// `loss`, which is never inherited.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReverseCfg {
    /// Rate, if different.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// Delay, if different.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Dur>,
    /// Queue, if different.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueCfg>,
    /// Loss model of the reverse direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<LossCfg>,
}

/// Partial link parameters overriding a default.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkOverride {
    /// Rate, if different.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// Delay, if different.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Dur>,
    /// Queue, if different.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueCfg>,
    /// Forward loss model, if different.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<LossCfg>,
    /// Reverse-direction fields, each overriding the default's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse: Option<ReverseCfg>,
}

impl LinkOverride {
    fn apply(&self, base: &LinkCfg) -> LinkCfg {
        let reverse = match (&self.reverse, &base.reverse) {
            (None, r) => r.clone(),
            (Some(o), None) => Some(o.clone()),
            (Some(o), Some(b)) => Some(ReverseCfg {
                rate: o.rate.or(b.rate),
                delay: o.delay.or(b.delay),
                queue: o.queue.clone().or_else(|| b.queue.clone()),
                loss: o.loss.clone().or_else(|| b.loss.clone()),
            }),
        };
        LinkCfg {
            rate: self.rate.unwrap_or(base.rate),
            delay: self.delay.unwrap_or(base.delay),
            queue: self.queue.clone().unwrap_or_else(|| base.queue.clone()),
            loss: self.loss.clone().or_else(|| base.loss.clone()),
            reverse,
        }
    }
}

/// A link of an explicit graph.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphLink {
    /// One end.
    pub from: String,
    /// The other end.
    pub to: String,
    /// Name in results (default `from-to`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Transmission rate.
    pub rate: Rate,
    /// One-way propagation delay.
    pub delay: Dur,
    /// Queue discipline and capacity.
    #[serde(default)]
    pub queue: QueueCfg,
    /// Loss model of the `from → to` direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<LossCfg>,
    /// How the `to → from` direction differs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse: Option<ReverseCfg>,
}

/// Queue disciplines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueKind {
    /// First in, first out; arrivals beyond the limit are dropped.
    #[default]
    Droptail,
    /// FIFO with Random Early Detection before the limit (`docs/queues.md`).
    Red,
    /// Strict priority between classes of flows (scheduled, ADR 0004).
    Priority,
    /// Deficit round robin; with `aqm`, DRR+ (scheduled).
    Drr,
    /// FIFO with enhanced RED: a drop probability per flow group (scheduled).
    EnhancedRed,
    /// FQ-CoDel, RFC 8290 (scheduled).
    FqCodel,
}

impl QueueKind {
    fn as_str(self) -> &'static str {
        match self {
            QueueKind::Droptail => "droptail",
            QueueKind::Red => "red",
            QueueKind::Priority => "priority",
            QueueKind::Drr => "drr",
            QueueKind::EnhancedRed => "enhanced_red",
            QueueKind::FqCodel => "fq_codel",
        }
    }
}

/// A class of a priority queue or a queue of a DRR.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassCfg {
    /// Flow groups (by name) whose flows it holds.
    #[serde(default)]
    pub flows: Vec<String>,
    /// Its own limit, besides the queue's shared one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<LimitCfg>,
    /// DRR: its quantum (bytes, or packets of `mean_pktsize`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantum: Option<LimitCfg>,
}

/// Admission control inside each DRR queue (DRR+).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubAqmKind {
    /// Limits only.
    #[default]
    None,
    /// RED in each queue.
    Red,
    /// Enhanced RED in each queue.
    EnhancedRed,
}

/// What a DRR does when its shared limit is reached.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OverflowCfg {
    /// Refuse the arrival.
    #[default]
    DropArrival,
    /// Drop from the head of the queue holding the most bytes (ns-2's `Queue/DRR`).
    PushOutLongest,
}

/// A queue.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueCfg {
    /// Discipline.
    #[serde(default)]
    pub kind: QueueKind,
    /// Capacity: an integer is packets, a size string is bytes.
    #[serde(default = "default_limit")]
    pub limit: LimitCfg,
    // RED parameters (kind = "red" only); absent fields take ns-2.35's defaults
    // (`docs/queues.md`).
    /// RED: lower threshold of the average (packets), or "auto".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_th: Option<AutoF64>,
    /// Upper threshold (packets), or "auto" (3 × min_th).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_th: Option<AutoF64>,
    /// Drop probability at max_th.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_p: Option<f64>,
    /// EWMA weight, or "auto".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub w_q: Option<AutoF64>,
    /// Gentle mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gentle: Option<bool>,
    /// ns-2's `wait_` spacing of drops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<bool>,
    /// Packet or byte mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<RedMode>,
    /// Typical packet size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_pktsize: Option<Bytes>,
    /// Adaptive RED.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<bool>,
    /// Target queueing delay of the automatic thresholds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_delay: Option<Dur>,
    /// Mark ECN-capable packets instead of dropping them early.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
    // Scheduled disciplines (`docs/queues.md`).
    /// Priority: classes, highest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classes: Option<Vec<ClassCfg>>,
    /// DRR: explicit queues; flows of unlisted groups get a queue each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queues: Option<Vec<ClassCfg>>,
    /// DRR and FQ-CoDel: quantum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantum: Option<LimitCfg>,
    /// DRR: shared-limit policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overflow: Option<OverflowCfg>,
    /// DRR: admission control in each queue (DRR+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aqm: Option<SubAqmKind>,
    /// Enhanced RED: drop probability p_i by flow-group name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow_p: Option<std::collections::BTreeMap<String, f64>>,
    /// Enhanced RED: linear ramp up to p_i instead of a constant p_i.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp: Option<bool>,
    /// FQ-CoDel: CoDel's target delay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Dur>,
    /// FQ-CoDel: CoDel's interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Dur>,
    /// FQ-CoDel: hash flows into this many queues instead of one queue per flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buckets: Option<u32>,
}

impl Default for QueueCfg {
    fn default() -> Self {
        QueueCfg {
            kind: QueueKind::Droptail,
            limit: default_limit(),
            min_th: None,
            max_th: None,
            max_p: None,
            w_q: None,
            gentle: None,
            wait: None,
            mode: None,
            mean_pktsize: None,
            adaptive: None,
            target_delay: None,
            ecn: None,
            classes: None,
            queues: None,
            quantum: None,
            overflow: None,
            aqm: None,
            flow_p: None,
            ramp: None,
            target: None,
            interval: None,
            buckets: None,
        }
    }
}

/// The optional fields of a RED queue.
const RED_FIELDS: [&str; 11] =
    ["min_th", "max_th", "max_p", "w_q", "gentle", "wait", "mode", "mean_pktsize", "adaptive", "target_delay", "ecn"];

/// A number or `"auto"` (ns-2's automatic value).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AutoF64 {
    /// Derived from the link, as ns-2 does.
    Auto,
    /// Given.
    Value(f64),
}

impl Serialize for AutoF64 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            AutoF64::Auto => s.serialize_str("auto"),
            AutoF64::Value(v) => s.serialize_f64(*v),
        }
    }
}

impl<'de> Deserialize<'de> for AutoF64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = AutoF64;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number or \"auto\"")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<AutoF64, E> {
                Ok(AutoF64::Value(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<AutoF64, E> {
                Ok(AutoF64::Value(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<AutoF64, E> {
                Ok(AutoF64::Value(v as f64))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<AutoF64, E> {
                if v == "auto" {
                    Ok(AutoF64::Auto)
                } else {
                    Err(E::custom(format!("expected a number or \"auto\", got \"{v}\"")))
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// How RED measures the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RedMode {
    /// Average in packets; every packet has the same drop probability.
    Packets,
    /// Average in bytes (thresholds × `mean_pktsize`); drop probability ∝ packet size.
    Bytes,
}

impl QueueCfg {
    /// Resolve against a link of `rate` and `delay`, with ns-2.35's defaults and automatic
    /// values. `path` is the queue's field path.
    fn resolve_red(&self, path: &str, rate: Rate, delay: Dur) -> Result<RedParams, ConfigError> {
        let err = |field: &str, msg: String| Err(ConfigError::new(format!("{path}.{field}"), msg));
        let mean = self.mean_pktsize.unwrap_or(Bytes(500));
        if mean.0 == 0 || mean.0 > 65_535 {
            return err("mean_pktsize", format!("must be between 1B and 65535B, got {mean}"));
        }
        let target = self.target_delay.unwrap_or(Dur::from_millis(5));
        if target.0 == 0 {
            return err("target_delay", "must be greater than 0s".into());
        }
        let ptc = rate.0 as f64 / (8.0 * mean.0 as f64);
        let delay_s = delay.0 as f64 / 1e9;
        let positive = |field: &str, v: f64| -> Result<f64, ConfigError> {
            if v.is_finite() && v > 0.0 {
                Ok(v)
            } else {
                Err(ConfigError::new(
                    format!("{path}.{field}"),
                    format!("must be a number of packets > 0 or \"auto\", got {v}"),
                ))
            }
        };
        let min_th = match self.min_th.unwrap_or(AutoF64::Auto) {
            AutoF64::Auto => red::auto_min_th(ptc, target.0 as f64 / 1e9),
            AutoF64::Value(v) => positive("min_th", v)?,
        };
        let max_th = match self.max_th.unwrap_or(AutoF64::Auto) {
            AutoF64::Auto => 3.0 * min_th,
            AutoF64::Value(v) => positive("max_th", v)?,
        };
        if max_th <= min_th {
            return err("max_th", format!("must be greater than min_th = {min_th}, got {max_th}"));
        }
        let max_p = self.max_p.unwrap_or(0.1);
        if !(max_p > 0.0 && max_p <= 1.0) {
            return err("max_p", format!("must be a probability in (0, 1], got {max_p}"));
        }
        let w_q = match self.w_q.unwrap_or(AutoF64::Auto) {
            AutoF64::Auto => red::auto_w_q(ptc, delay_s),
            AutoF64::Value(v) if v > 0.0 && v <= 1.0 => v,
            AutoF64::Value(v) => return err("w_q", format!("must be in (0, 1] or \"auto\", got {v}")),
        };
        let bytes = self.mode.unwrap_or(RedMode::Bytes) == RedMode::Bytes;
        Ok(RedParams {
            min_th,
            max_th,
            max_p,
            w_q,
            gentle: self.gentle.unwrap_or(true),
            wait: self.wait.unwrap_or(true),
            bytes,
            ecn: self.ecn.unwrap_or(false),
            mean_pktsize: mean.0 as u32,
            ptc,
            adaptive: self.adaptive.unwrap_or(false).then(|| red::Adaptive::ns2(rate.0 as f64)),
        })
    }

    /// Every optional field with whether it is set.
    fn fields(&self) -> [(&'static str, bool); 21] {
        [
            ("ecn", self.ecn.is_some()),
            ("min_th", self.min_th.is_some()),
            ("max_th", self.max_th.is_some()),
            ("max_p", self.max_p.is_some()),
            ("w_q", self.w_q.is_some()),
            ("gentle", self.gentle.is_some()),
            ("wait", self.wait.is_some()),
            ("mode", self.mode.is_some()),
            ("mean_pktsize", self.mean_pktsize.is_some()),
            ("adaptive", self.adaptive.is_some()),
            ("target_delay", self.target_delay.is_some()),
            ("classes", self.classes.is_some()),
            ("queues", self.queues.is_some()),
            ("quantum", self.quantum.is_some()),
            ("overflow", self.overflow.is_some()),
            ("aqm", self.aqm.is_some()),
            ("flow_p", self.flow_p.is_some()),
            ("ramp", self.ramp.is_some()),
            ("target", self.target.is_some()),
            ("interval", self.interval.is_some()),
            ("buckets", self.buckets.is_some()),
        ]
    }

    /// The optional fields `kind` (with its `aqm`) takes.
    fn allowed_fields(&self) -> Vec<&'static str> {
        const ERED: [&str; 7] = ["min_th", "max_th", "w_q", "max_p", "flow_p", "ramp", "mean_pktsize"];
        match self.kind {
            QueueKind::Droptail => vec![],
            QueueKind::Red => RED_FIELDS.to_vec(),
            QueueKind::Priority => vec!["classes"],
            QueueKind::Drr => {
                let mut v = vec!["queues", "quantum", "mean_pktsize", "overflow", "aqm"];
                match self.aqm.unwrap_or_default() {
                    SubAqmKind::None => {}
                    // RED inside DRR queues drops; it does not mark.
                    SubAqmKind::Red => v.extend(RED_FIELDS.iter().filter(|f| !["mean_pktsize", "ecn"].contains(f))),
                    SubAqmKind::EnhancedRed => v.extend(ERED.iter().filter(|f| **f != "mean_pktsize")),
                }
                v
            }
            QueueKind::EnhancedRed => ERED.to_vec(),
            QueueKind::FqCodel => vec!["quantum", "target", "interval", "buckets"],
        }
    }

    /// Reject fields that `kind` does not take.
    fn check_fields(&self, path: &str) -> Result<(), ConfigError> {
        let allowed = self.allowed_fields();
        for (field, present) in self.fields() {
            if !present || allowed.contains(&field) {
                continue;
            }
            if self.kind == QueueKind::Droptail && RED_FIELDS.contains(&field) {
                return Err(ConfigError::new(format!("{path}.{field}"), "is a RED parameter; it needs kind = \"red\""));
            }
            let kind = self.kind.as_str();
            let mut list = vec!["kind", "limit"];
            list.extend(&allowed);
            let hint = if self.kind == QueueKind::Drr && self.aqm.is_none() {
                " (RED fields need aqm = \"red\" or \"enhanced_red\")"
            } else {
                ""
            };
            return Err(ConfigError::new(
                format!("{path}.{field}"),
                format!("is not a field of kind \"{kind}\"; its fields are {}{hint}", list.join(", ")),
            ));
        }
        Ok(())
    }

    /// RED's resolved parameters for a link of `rate` and `delay`, or `None` for the other
    /// kinds. `path` is the queue's field path.
    pub fn red_params(&self, path: &str, rate: Rate, delay: Dur) -> Result<Option<RedParams>, ConfigError> {
        self.check_fields(path)?;
        match self.kind {
            QueueKind::Red => self.resolve_red(path, rate, delay).map(Some),
            _ => Ok(None),
        }
    }

    /// Enhanced RED's parameters (defaults after seed 004's A42: thresholds 5 and 15 packets,
    /// w_q = 0.002, p = 0.02).
    fn resolve_enhanced(&self, path: &str, rate: Rate) -> Result<EnhancedRedParams, ConfigError> {
        let err = |field: &str, msg: String| Err(ConfigError::new(format!("{path}.{field}"), msg));
        let number = |field: &str, v: Option<AutoF64>, default: f64| -> Result<f64, ConfigError> {
            match v {
                None => Ok(default),
                Some(AutoF64::Value(x)) if x.is_finite() && x >= 0.0 => Ok(x),
                Some(AutoF64::Value(x)) => Err(ConfigError::new(
                    format!("{path}.{field}"),
                    format!("must be a number of packets >= 0, got {x}"),
                )),
                Some(AutoF64::Auto) => Err(ConfigError::new(
                    format!("{path}.{field}"),
                    "\"auto\" is for RED; enhanced RED needs a number of packets",
                )),
            }
        };
        let min_th = number("min_th", self.min_th, 5.0)?;
        let max_th = number("max_th", self.max_th, 15.0)?;
        if max_th <= min_th {
            return err("max_th", format!("must be greater than min_th = {min_th}, got {max_th}"));
        }
        let w_q = match self.w_q {
            None => 0.002,
            Some(AutoF64::Value(v)) if v > 0.0 && v <= 1.0 => v,
            Some(v) => {
                let shown = match v {
                    AutoF64::Auto => "\"auto\"".to_string(),
                    AutoF64::Value(x) => x.to_string(),
                };
                return err("w_q", format!("must be in (0, 1] for enhanced RED, got {shown}"));
            }
        };
        let default_p = self.max_p.unwrap_or(0.02);
        if !(0.0..=1.0).contains(&default_p) {
            return err("max_p", format!("must be a probability in [0, 1], got {default_p}"));
        }
        let mut group_p = Vec::new();
        for (name, &p) in self.flow_p.iter().flatten() {
            if !(0.0..=1.0).contains(&p) {
                return err(&format!("flow_p.{name}"), format!("must be a probability in [0, 1], got {p}"));
            }
            group_p.push((name.clone(), p));
        }
        let mean = self.mean_pktsize.unwrap_or(Bytes(1500));
        if mean.0 == 0 || mean.0 > 65_535 {
            return err("mean_pktsize", format!("must be between 1B and 65535B, got {mean}"));
        }
        Ok(EnhancedRedParams {
            min_th,
            max_th,
            w_q,
            p: Vec::new(),
            default_p,
            group_p,
            ramp: self.ramp.unwrap_or(false),
            ptc: rate.0 as f64 / (8.0 * mean.0 as f64),
        })
    }

    /// A limit of a class or queue, checked.
    fn class_limit(l: Option<LimitCfg>, path: &str) -> Result<Option<Limit>, ConfigError> {
        match l.map(|l| l.0) {
            Some(Limit::Packets(0) | Limit::Bytes(0)) => {
                Err(ConfigError::new(format!("{path}.limit"), "must be at least 1 packet or 1 byte"))
            }
            l => Ok(l),
        }
    }

    /// The scheduler of a scheduled kind for a link of `rate` and `delay`, or `None` for a
    /// FIFO kind. Random streams are named `<stream>/red/q<k>` (DRR+ RED in explicit queue
    /// k, `.../flow<f>` in flow f's own queue), `<stream>/enhanced_red...` likewise, and
    /// `<stream>/fq_codel` (the hash perturbation), of the run's `seed`.
    pub fn scheduler(
        &self,
        path: &str,
        rate: Rate,
        delay: Dur,
        seed: u64,
        stream_base: &str,
    ) -> Result<Option<Scheduler>, ConfigError> {
        self.check_fields(path)?;
        let total = self.limit.0;
        let err = |field: &str, msg: String| Err(ConfigError::new(format!("{path}.{field}"), msg));
        match self.kind {
            QueueKind::Droptail | QueueKind::Red => Ok(None),
            QueueKind::Priority => {
                let Some(classes) = &self.classes else {
                    return err(
                        "classes",
                        "is required with kind = \"priority\": a list of { flows = [...] }, highest priority first"
                            .into(),
                    );
                };
                if classes.is_empty() {
                    return err("classes", "needs at least one class".into());
                }
                let mut queues = Vec::new();
                for (k, c) in classes.iter().enumerate() {
                    let cpath = format!("{path}.classes[{k}]");
                    if c.quantum.is_some() {
                        return Err(ConfigError::new(format!("{cpath}.quantum"), "only DRR queues have a quantum"));
                    }
                    queues.push(SubQueue::new(Self::class_limit(c.limit, &cpath)?, SubAqm::None));
                }
                let mut s = Scheduler::new(Discipline::Priority, queues, total);
                s.names = Some(ClassNames {
                    path: path.to_string(),
                    field: "classes",
                    names: classes.iter().map(|c| c.flows.clone()).collect(),
                });
                Ok(Some(s))
            }
            QueueKind::Drr => {
                let mean = self.mean_pktsize.unwrap_or(Bytes(1500));
                if mean.0 == 0 || mean.0 > 65_535 {
                    return err("mean_pktsize", format!("must be between 1B and 65535B, got {mean}"));
                }
                let quantum_of = |q: Option<LimitCfg>, field: &str, default: u32| -> Result<u32, ConfigError> {
                    let bytes = match q.map(|q| q.0) {
                        None => return Ok(default),
                        Some(Limit::Packets(n)) => u64::from(n) * mean.0,
                        Some(Limit::Bytes(b)) => b,
                    };
                    if bytes == 0 || bytes > u64::from(u32::MAX) {
                        return Err(ConfigError::new(
                            field.to_string(),
                            "must be a size between 1B and 4294967295B or a number of packets >= 1".to_string(),
                        ));
                    }
                    Ok(bytes as u32)
                };
                let default_quantum = quantum_of(self.quantum, &format!("{path}.quantum"), 1500)?;
                let aqm = self.aqm.unwrap_or_default();
                let red = match aqm {
                    SubAqmKind::Red => Some(self.resolve_red(path, rate, delay)?),
                    _ => None,
                };
                let enhanced = match aqm {
                    SubAqmKind::EnhancedRed => Some(self.resolve_enhanced(path, rate)?),
                    _ => None,
                };
                let make_aqm = |name: String| match (&red, &enhanced) {
                    (Some(p), _) => {
                        SubAqm::Red(Box::new(Red::new(*p, stream(seed, &format!("{stream_base}/red/{name}")))))
                    }
                    (_, Some(e)) => SubAqm::Enhanced(Box::new(EnhancedRed::new(
                        e.clone(),
                        stream(seed, &format!("{stream_base}/enhanced_red/{name}")),
                    ))),
                    _ => SubAqm::None,
                };
                let mut queues = Vec::new();
                let mut quantum = Vec::new();
                let explicit = self.queues.clone().unwrap_or_default();
                for (k, c) in explicit.iter().enumerate() {
                    let cpath = format!("{path}.queues[{k}]");
                    if c.flows.is_empty() {
                        return Err(ConfigError::new(
                            format!("{cpath}.flows"),
                            "lists no flow group; name the groups whose flows share this queue",
                        ));
                    }
                    queues.push(SubQueue::new(Self::class_limit(c.limit, &cpath)?, make_aqm(format!("q{k}"))));
                    quantum.push(quantum_of(c.quantum, &format!("{cpath}.quantum"), default_quantum)?);
                }
                let overflow = match self.overflow.unwrap_or_default() {
                    OverflowCfg::DropArrival => Overflow::DropArrival,
                    OverflowCfg::PushOutLongest => Overflow::PushOutLongest,
                };
                let drr = Drr::new(quantum, default_quantum, overflow);
                let mut s = Scheduler::new(Discipline::Drr(drr), queues, total);
                if self.queues.is_some() {
                    s.names = Some(ClassNames {
                        path: path.to_string(),
                        field: "queues",
                        names: explicit.iter().map(|c| c.flows.clone()).collect(),
                    });
                }
                s.per_flow = PerFlow {
                    limit: None,
                    red: red.map(|p| (p, seed, format!("{stream_base}/red"))),
                    enhanced: enhanced.map(|e| (e, seed, format!("{stream_base}/enhanced_red"))),
                };
                if self.queues.is_none() {
                    // A DRR of one queue per flow: every flow's queue is made at binding.
                    s.names = Some(ClassNames { path: path.to_string(), field: "queues", names: Vec::new() });
                }
                Ok(Some(s))
            }
            QueueKind::EnhancedRed => {
                let e = self.resolve_enhanced(path, rate)?;
                let aqm = SubAqm::Enhanced(Box::new(EnhancedRed::new(
                    e,
                    stream(seed, &format!("{stream_base}/enhanced_red")),
                )));
                let drr = Drr::new(vec![u32::MAX], u32::MAX, Overflow::DropArrival);
                Ok(Some(Scheduler::new(Discipline::Drr(drr), vec![SubQueue::new(None, aqm)], total)))
            }
            QueueKind::FqCodel => {
                let quantum = match self.quantum.map(|q| q.0) {
                    None => 1514,
                    Some(Limit::Bytes(b)) if b > 0 && b <= 1 << 20 => b as u32,
                    Some(q) => {
                        let shown = match q {
                            Limit::Packets(n) => n.to_string(),
                            Limit::Bytes(b) => Bytes(b).to_string(),
                        };
                        return err(
                            "quantum",
                            format!("must be a size between 1B and 1048576B such as \"1514B\", got {shown}"),
                        );
                    }
                };
                let target = self.target.unwrap_or(Dur::from_millis(5));
                let interval = self.interval.unwrap_or(Dur::from_millis(100));
                if target.0 == 0 {
                    return err("target", "must be greater than 0s".into());
                }
                if interval.0 == 0 {
                    return err("interval", "must be greater than 0s".into());
                }
                if self.buckets == Some(0) {
                    return err("buckets", "must be at least 1 (omit it for one queue per flow)".into());
                }
                if matches!(total, Limit::Bytes(_)) {
                    return err(
                        "limit",
                        "must be a number of packets for kind \"fq_codel\" (RFC 8290's packet limit)".into(),
                    );
                }
                let salt = stream(seed, &format!("{stream_base}/fq_codel")).next_u64();
                let fq =
                    FqCodel::new(quantum, CodelParams { target: target.0, interval: interval.0 }, self.buckets, salt);
                Ok(Some(Scheduler::new(Discipline::FqCodel(Box::new(fq)), Vec::new(), total)))
            }
        }
    }
}

fn default_limit() -> LimitCfg {
    LimitCfg(Limit::Packets(100))
}

/// A queue limit as written in a scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LimitCfg(pub Limit);

impl Serialize for LimitCfg {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Limit::Packets(n) => s.serialize_u32(n),
            Limit::Bytes(b) => s.serialize_str(&Bytes(b).to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for LimitCfg {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = LimitCfg;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a packet count (integer) or a size such as \"375000B\"")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<LimitCfg, E> {
                u32::try_from(v)
                    .map(|n| LimitCfg(Limit::Packets(n)))
                    .map_err(|_| E::custom(format!("packet limit {v} is too large")))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<LimitCfg, E> {
                if v < 0 {
                    return Err(E::custom(format!("expected a non-negative packet count, got {v}")));
                }
                self.visit_u64(v as u64)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<LimitCfg, E> {
                Bytes::parse(v)
                    .map(|b| LimitCfg(Limit::Bytes(b.0)))
                    .map_err(|e| E::custom(format!("{e}; or give an integer number of packets")))
            }
        }
        d.deserialize_any(V)
    }
}

/// Which way a dumbbell flow goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// From the `r0` side to the `r1` side.
    #[default]
    Forward,
    /// From the `r1` side to the `r0` side.
    Reverse,
}

/// A group of flows with the same settings.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowGroup {
    /// Label in results.
    #[serde(default = "default_flow_name")]
    pub name: String,
    /// Number of flows.
    #[serde(default = "default_count")]
    pub count: u32,
    /// Start of the first flow.
    #[serde(default)]
    pub start: Dur,
    /// Gap between the starts of consecutive flows of the group.
    #[serde(default)]
    pub start_spacing: Dur,
    /// No new data after this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Dur>,
    /// Bytes to transfer; absent for bulk (unlimited) data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Bytes>,
    /// Dumbbell: direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
    /// Dumbbell and parking lot: sender access link override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src_access: Option<LinkOverride>,
    /// Dumbbell and parking lot: receiver access link override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst_access: Option<LinkOverride>,
    /// Parking lot: entry router.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<u32>,
    /// Parking lot: exit router.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<u32>,
    /// Graph: sending node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src: Option<String>,
    /// Graph: receiving node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst: Option<String>,
    /// Segment numbers whose first transmission is lost in the network (each flow of the
    /// group), for studying loss recovery on a chosen pattern.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drop_segments: Vec<u64>,
    /// Transport options.
    #[serde(default)]
    pub tcp: TcpCfg,
    /// `tcp` (default) or `udp`.
    #[serde(default, skip_serializing_if = "Transport::is_tcp")]
    pub transport: Transport,
    /// UDP: the traffic source (see `docs/traffic.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceCfg>,
}

fn default_flow_name() -> String {
    "flow".into()
}
fn default_count() -> u32 {
    1
}

/// TCP options as written in a scenario (see `docs/scenarios.md`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpCfg {
    /// Loss recovery.
    #[serde(default)]
    pub recovery: Recovery,
    /// Congestion-control algorithm.
    #[serde(default)]
    pub cc: CcConfig,
    /// Payload bytes per segment.
    #[serde(default = "d_mss")]
    pub mss: Bytes,
    /// Header bytes per data segment.
    #[serde(default = "d_header")]
    pub header: Bytes,
    /// Wire size of an ACK.
    #[serde(default = "d_header")]
    pub ack_size: Bytes,
    /// Initial cwnd, segments.
    #[serde(default = "d_iw")]
    pub initial_window: f64,
    /// Initial ssthresh, segments; absent = unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_ssthresh: Option<f64>,
    /// Limited slow start (RFC 3742) above this window, segments; absent = off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ssthresh: Option<f64>,
    /// Receiver window, segments; absent = unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rwnd: Option<u64>,
    /// Largest burst per event; 0 = unlimited.
    #[serde(default)]
    pub max_burst: u32,
    /// Delayed ACKs on or off.
    #[serde(default)]
    pub delayed_ack: bool,
    /// Segments per delayed ACK.
    #[serde(default = "d_delack_count")]
    pub delack_count: u32,
    /// Delayed-ACK timeout.
    #[serde(default = "d_delack_timeout")]
    pub delack_timeout: Dur,
    /// Model the three-way handshake.
    #[serde(default)]
    pub handshake: bool,
    /// Initial RTO.
    #[serde(default = "d_one_second")]
    pub rto_initial: Dur,
    /// Minimum RTO.
    #[serde(default = "d_one_second")]
    pub rto_min: Dur,
    /// Maximum RTO.
    #[serde(default = "d_rto_max")]
    pub rto_max: Dur,
    /// Clock granularity.
    #[serde(default = "d_tick")]
    pub timer_tick: Dur,
    /// Largest backoff multiplier.
    #[serde(default = "d_max_backoff")]
    pub max_backoff: u32,
    /// The retransmission timer runs; `false` models TCP without timeout (RTO = ∞).
    #[serde(default = "d_true")]
    pub rto_enabled: bool,
    /// Mis-retransmission detection (Hasegawa ch. 3).
    #[serde(default)]
    pub misrx_detection: bool,
    /// Its factor k (0 < k < 1).
    #[serde(default = "d_misrx_k")]
    pub misrx_k: f64,
    /// The RTT it compares with.
    #[serde(default)]
    pub misrx_rtt: MisRxReference,
    /// Force a timeout on one segment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force_timeout: Option<ForceTimeout>,
    /// Explicit Congestion Notification (RFC 3168): data is sent ECN-capable, the sink echoes
    /// marks and the sender reduces its window once per window of data.
    #[serde(default, skip_serializing_if = "is_false")]
    pub ecn: bool,
    /// Largest random delay before each data segment leaves the sender (ns-2's `overhead_`),
    /// to break phase effects; absent = none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_jitter: Option<Dur>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A timeout forced on one segment: the timer expires `after` its first transmission unless
/// the segment has been acknowledged (seed 004's Experiment 1 sets packet 503's RTO small).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForceTimeout {
    /// Segment number (from 0).
    pub segment: u64,
    /// Time from its first transmission to the timeout.
    pub after: Dur,
}

fn d_true() -> bool {
    true
}
fn d_misrx_k() -> f64 {
    0.5
}

fn d_mss() -> Bytes {
    Bytes(1460)
}
fn d_header() -> Bytes {
    Bytes(40)
}
fn d_iw() -> f64 {
    3.0
}
fn d_delack_count() -> u32 {
    2
}
fn d_delack_timeout() -> Dur {
    Dur::from_millis(100)
}
fn d_one_second() -> Dur {
    Dur::from_millis(1000)
}
fn d_rto_max() -> Dur {
    Dur::from_millis(60_000)
}
fn d_tick() -> Dur {
    Dur::from_millis(1)
}
fn d_max_backoff() -> u32 {
    64
}

impl Default for TcpCfg {
    fn default() -> Self {
        // Every field has a serde default; an empty table yields exactly those.
        serde_json::from_str("{}").expect("TcpCfg defaults are complete")
    }
}

impl TcpCfg {
    fn resolve(&self, path: &str) -> Result<TcpConfig, ConfigError> {
        let err = |field: &str, msg: String| Err(ConfigError::new(format!("{path}.{field}"), msg));
        if self.mss.0 == 0 || self.mss.0 > 65_535 {
            return err("mss", format!("must be between 1B and 65535B, got {}", self.mss));
        }
        if self.header.0 > 65_535 {
            return err("header", format!("must be at most 65535B, got {}", self.header));
        }
        if self.ack_size.0 == 0 || self.ack_size.0 > 65_535 {
            return err("ack_size", format!("must be between 1B and 65535B, got {}", self.ack_size));
        }
        if !(self.initial_window >= 1.0 && self.initial_window.is_finite()) {
            return err("initial_window", format!("must be a number of segments >= 1, got {}", self.initial_window));
        }
        if let Some(s) = self.initial_ssthresh {
            if s.is_nan() || s < 2.0 {
                return err("initial_ssthresh", format!("must be >= 2 segments, got {s}"));
            }
        }
        if let Some(m) = self.max_ssthresh {
            if m.is_nan() || m < 2.0 {
                return err("max_ssthresh", format!("must be >= 2 segments, got {m}"));
            }
        }
        if self.rwnd == Some(0) {
            return err("rwnd", "must be at least 1 segment".into());
        }
        if self.delack_count == 0 {
            return err("delack_count", "must be at least 1".into());
        }
        if self.timer_tick.0 == 0 {
            return err("timer_tick", "must be greater than 0".into());
        }
        if self.rto_initial.0 == 0 {
            return err("rto_initial", "must be greater than 0".into());
        }
        if self.rto_min > self.rto_max {
            return err("rto_min", format!("{} is larger than rto_max = {}", self.rto_min, self.rto_max));
        }
        if self.max_backoff == 0 {
            return err("max_backoff", "must be at least 1".into());
        }
        if !(self.misrx_k > 0.0 && self.misrx_k < 1.0) {
            return err("misrx_k", format!("must be between 0 and 1 (exclusive), got {}", self.misrx_k));
        }
        if self.misrx_detection && self.recovery == Recovery::Sack {
            return err(
                "misrx_detection",
                "is available with recovery = \"tahoe\", \"reno\" or \"newreno\", not \"sack\"".into(),
            );
        }
        if let Some(f) = self.force_timeout {
            if f.after.0 == 0 {
                return err("force_timeout.after", "must be greater than 0s".into());
            }
        }
        Ok(TcpConfig {
            recovery: self.recovery,
            mss: self.mss.0 as u32,
            header: self.header.0 as u32,
            ack_size: self.ack_size.0 as u32,
            initial_window: self.initial_window,
            initial_ssthresh: self.initial_ssthresh.unwrap_or(f64::INFINITY),
            max_ssthresh: self.max_ssthresh,
            rwnd: self.rwnd.unwrap_or(u64::MAX),
            max_burst: self.max_burst,
            delayed_ack: self.delayed_ack.then_some((self.delack_count, self.delack_timeout.0)),
            handshake: self.handshake,
            rto_initial: self.rto_initial.0,
            rto_min: self.rto_min.0,
            rto_max: self.rto_max.0,
            timer_tick: self.timer_tick.0,
            max_backoff: self.max_backoff,
            rto_enabled: self.rto_enabled,
            misrx: self.misrx_detection.then_some(MisRx { k: self.misrx_k, reference: self.misrx_rtt }),
            force_timeout: self.force_timeout.map(|f| (f.segment, f.after.0)),
            ecn: self.ecn,
            send_jitter: self.send_jitter.map_or(0, |d| d.0),
        })
    }
}

/// One connection of a built scenario.
#[derive(Clone, Debug)]
pub struct ConnSpec {
    /// Group label.
    pub name: String,
    /// Index of its flow group (`[[flows]]` table).
    pub group: u32,
    /// Sending node.
    pub src: NodeId,
    /// Receiving node.
    pub dst: NodeId,
    /// Routes of forward packets (data) and reverse packets (ACKs), indexed by
    /// [`crate::packet::Dir`].
    pub routes: [Vec<LinkId>; 2],
    /// Start time.
    pub start: Time,
    /// Stop time, if any.
    pub stop: Option<Time>,
    /// Bytes to send (finite transfer).
    pub size: Option<u64>,
    /// Transport parameters.
    pub tcp: TcpConfig,
    /// Congestion-control algorithm.
    pub cc: CcConfig,
    /// Sorted segment numbers whose first transmission is lost.
    pub drop_segments: Vec<u64>,
    /// UDP flows: the source (`None` for TCP).
    pub source: Option<SourceSpec>,
    /// Stable name of the flow's random streams: `flow/<group name>/<k>`, with `k` counting
    /// the flows of that name in scenario order.
    pub key: String,
}

impl ConnSpec {
    /// The route of packets travelling `dir`.
    #[inline]
    pub fn route(&self, dir: crate::packet::Dir) -> &[LinkId] {
        &self.routes[dir as usize]
    }
}

/// The network and connections a scenario describes.
#[derive(Debug)]
pub struct Built {
    /// Nodes and links.
    pub net: Network,
    /// Connections in flow order.
    pub conns: Vec<ConnSpec>,
    /// Link changes, in time order (file order at equal times).
    pub changes: Vec<LinkChange>,
}

/// Parse a TOML document.
pub fn from_toml(text: &str) -> Result<Scenario, ConfigError> {
    let de = toml::Deserializer::parse(text).map_err(|e| toml_error(text, &e))?;
    let scenario: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        ConfigError::new(path, first_line(inner.message()))
    })?;
    Ok(scenario)
}

/// Parse a JSON document.
pub fn from_json(text: &str) -> Result<Scenario, ConfigError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let scenario: Scenario = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let msg = inner.to_string();
        // serde_json appends " at line L column C"; keep the message on one line.
        ConfigError::new(path, first_line(&msg))
    })?;
    Ok(scenario)
}

fn first_line(s: &str) -> String {
    s.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}

fn toml_error(text: &str, e: &toml::de::Error) -> ConfigError {
    let at = e.span().map(|s| {
        let line = text[..s.start.min(text.len())].matches('\n').count() + 1;
        format!(" (line {line})")
    });
    ConfigError::new("", format!("invalid TOML: {}{}", first_line(e.message()), at.unwrap_or_default()))
}

fn link_params(cfg: &LinkCfg, path: &str) -> Result<LinkParams, ConfigError> {
    if cfg.rate.0 == 0 {
        return Err(ConfigError::new(format!("{path}.rate"), "must be greater than 0bps"));
    }
    match cfg.queue.limit.0 {
        Limit::Packets(0) | Limit::Bytes(0) => {
            return Err(ConfigError::new(format!("{path}.queue.limit"), "must be at least 1 packet or 1 byte"));
        }
        _ => {}
    }
    let qpath = format!("{path}.queue");
    cfg.queue.red_params(&qpath, cfg.rate, cfg.delay)?;
    cfg.queue.scheduler(&qpath, cfg.rate, cfg.delay, 0, "check")?;
    Ok(LinkParams { rate: cfg.rate, delay: cfg.delay.0, limit: cfg.queue.limit.0 })
}

/// Give link direction `dir` the queue discipline of `cfg`: RED draws from the stream
/// `link/<link name>/<from>-><to>/red` of the run's seed.
fn install_queue(
    net: &mut Network,
    dir: LinkId,
    cfg: &LinkCfg,
    path: &str,
    sim: &SimulationCfg,
) -> Result<(), ConfigError> {
    let name = &net.link_names[net.link_of[dir as usize] as usize];
    let l = &net.links[dir as usize];
    let stream_name = format!("{name}/{}->{}", net.nodes[l.from as usize], net.to_name(dir));
    let qpath = format!("{path}.queue");
    if let Some(s) = cfg.queue.scheduler(&qpath, cfg.rate, cfg.delay, sim.seed, &format!("link/{stream_name}"))? {
        net.links[dir as usize].set_scheduler(s);
        return Ok(());
    }
    let Some(params) = cfg.queue.red_params(&qpath, cfg.rate, cfg.delay)? else {
        return Ok(());
    };
    let mut red = Red::new(params, stream(sim.seed, &format!("link/{stream_name}/red")));
    red.set_horizon(sim.duration.0);
    net.links[dir as usize].set_aqm(Aqm::Red(Box::new(red)));
    Ok(())
}

/// The configuration of the reverse direction of `cfg` (its loss model aside).
fn reverse_cfg(cfg: &LinkCfg) -> LinkCfg {
    match &cfg.reverse {
        Some(r) => LinkCfg {
            rate: r.rate.unwrap_or(cfg.rate),
            delay: r.delay.unwrap_or(cfg.delay),
            queue: r.queue.clone().unwrap_or_else(|| cfg.queue.clone()),
            loss: None,
            reverse: None,
        },
        None => LinkCfg { loss: None, reverse: None, ..cfg.clone() },
    }
}

/// Checked parameters of both directions of `cfg`, loss models included.
fn link_dirs(cfg: &LinkCfg, path: &str) -> Result<(LinkParams, LinkParams), ConfigError> {
    let forward = link_params(cfg, path)?;
    if let Some(loss) = &cfg.loss {
        loss.validate(&format!("{path}.loss"))?;
    }
    let Some(r) = &cfg.reverse else {
        return Ok((forward, forward));
    };
    let reverse = link_params(&reverse_cfg(cfg), &format!("{path}.reverse"))?;
    if let Some(loss) = &r.loss {
        loss.validate(&format!("{path}.reverse.loss"))?;
    }
    Ok((forward, reverse))
}

/// Add link `cfg` from `a` (forward direction `a → b`) with its queue disciplines and loss
/// models; each loss model draws from the stream `link/<name>/<forward|reverse>/loss`.
fn add_link_cfg(
    net: &mut Network,
    sim: &SimulationCfg,
    name: String,
    (a, b): (NodeId, NodeId),
    cfg: &LinkCfg,
    path: &str,
) -> Result<LinkId, ConfigError> {
    let (forward, reverse) = link_dirs(cfg, path)?;
    let models = [("forward", cfg.loss.as_ref()), ("reverse", cfg.reverse.as_ref().and_then(|r| r.loss.as_ref()))];
    if models.iter().any(|m| m.1.is_some()) && net.link_names.contains(&name) {
        return Err(ConfigError::new(
            format!("{path}.name"),
            format!("another link is also called \"{name}\"; a link with a loss model needs a unique name (it names its random stream)"),
        ));
    }
    let id = net.add_asymmetric_link(name.clone(), a, b, forward, reverse);
    install_queue(net, id, cfg, path, sim)?;
    let rev_path = if cfg.reverse.is_some() { format!("{path}.reverse") } else { path.to_string() };
    install_queue(net, id + 1, &reverse_cfg(cfg), &rev_path, sim)?;
    for (k, (dir, model)) in models.into_iter().enumerate() {
        if let Some(m) = model {
            let rng = stream(sim.seed, &format!("link/{name}/{dir}/loss"));
            net.links[id as usize + k].loss = Some(Box::new(LossProcess::new(m, rng)));
        }
    }
    Ok(id)
}

/// Add LAN `cfg` (at `path`) to a graph whose node names are `nodes`. Each station's queue is
/// `cfg.queue` or its entry in `cfg.queues`; each station's loss model draws from the stream
/// `link/<lan name>/<station>/loss`.
fn add_lan_cfg(
    net: &mut Network,
    sim: &SimulationCfg,
    cfg: &LanCfg,
    path: &str,
    nodes: &[String],
) -> Result<(), ConfigError> {
    if cfg.name.is_empty() {
        return Err(ConfigError::new(format!("{path}.name"), "cannot be empty"));
    }
    if net.link_names.contains(&cfg.name) {
        return Err(ConfigError::new(
            format!("{path}.name"),
            format!("another link or LAN is also called \"{}\"; a LAN needs a unique name", cfg.name),
        ));
    }
    if cfg.nodes.len() < 2 {
        return Err(ConfigError::new(format!("{path}.nodes"), "a LAN needs at least two nodes"));
    }
    let mut stations = Vec::new();
    for (j, n) in cfg.nodes.iter().enumerate() {
        let id = net.node(n).ok_or_else(|| {
            ConfigError::new(
                format!("{path}.nodes[{j}]"),
                format!("unknown node \"{n}\"; nodes are {}", nodes.join(", ")),
            )
        })?;
        if stations.contains(&id) {
            return Err(ConfigError::new(format!("{path}.nodes[{j}]"), format!("node \"{n}\" is listed twice")));
        }
        stations.push(id);
    }
    if let Some(other) = cfg.queues.keys().find(|k| !cfg.nodes.contains(k)) {
        return Err(ConfigError::new(
            format!("{path}.queues.{other}"),
            format!("\"{other}\" is not a node of this LAN; its nodes are {}", cfg.nodes.join(", ")),
        ));
    }
    if let Some(loss) = &cfg.loss {
        loss.validate(&format!("{path}.loss"))?;
    }
    let station_cfg = |n: &String| LinkCfg {
        rate: cfg.rate,
        delay: cfg.delay,
        queue: cfg.queues.get(n).cloned().unwrap_or_else(|| cfg.queue.clone()),
        loss: None,
        reverse: None,
    };
    let station_path = |n: &String| match cfg.queues.contains_key(n) {
        true => format!("{path}.queues.{n}"),
        false => path.to_string(),
    };
    if cfg.rate.0 == 0 {
        return Err(ConfigError::new(format!("{path}.rate"), "must be greater than 0bps"));
    }
    // Queue errors name `<path>.queue.*`; a per-station queue is `<path>.queues.<node>.*`.
    let fix = |n: &String| {
        let (from, to) = (format!("{path}.queues.{n}.queue"), format!("{path}.queues.{n}"));
        move |mut e: ConfigError| {
            e.path = e.path.replace(&from, &to);
            e
        }
    };
    let mut params = Vec::new();
    for n in &cfg.nodes {
        params.push(link_params(&station_cfg(n), &station_path(n)).map_err(fix(n))?);
    }
    for n in &cfg.nodes {
        let kind = station_cfg(n).queue.kind;
        if !matches!(kind, QueueKind::Droptail | QueueKind::Red) {
            return Err(ConfigError::new(
                match cfg.queues.contains_key(n) {
                    true => format!("{path}.queues.{n}.kind"),
                    false => format!("{path}.queue.kind"),
                },
                format!("a LAN station's queue is \"droptail\" or \"red\", not \"{}\"", kind.as_str()),
            ));
        }
    }
    let dirs = net.add_lan(cfg.name.clone(), &stations, &params);
    for (n, &d) in cfg.nodes.iter().zip(&dirs) {
        install_queue(net, d, &station_cfg(n), &station_path(n), sim).map_err(fix(n))?;
        if let Some(m) = &cfg.loss {
            let rng = stream(sim.seed, &format!("link/{}/{n}/loss", cfg.name));
            net.links[d as usize].loss = Some(Box::new(LossProcess::new(m, rng)));
        }
    }
    Ok(())
}

impl Scenario {
    /// Normalized JSON: every default filled in.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a scenario always serializes")
    }

    /// Check everything the schema cannot and build the network and connections.
    pub fn build(&self) -> Result<Built, ConfigError> {
        if self.simulation.duration.0 == 0 {
            return Err(ConfigError::new("simulation.duration", "must be greater than 0s"));
        }
        if self.flows.is_empty() {
            return Err(ConfigError::new("flows", "at least one [[flows]] group is required"));
        }
        self.topology.check_fields()?;
        let topo = &self.topology;
        let kind = topo.kind.as_str();
        let mut net = Network::default();
        let mut graph_nodes = Vec::new();
        let mut routers = Vec::new();
        let mut access = None;
        // check_fields guarantees the options each kind needs are present.
        match topo.kind {
            TopologyKind::Dumbbell => {
                let (bottleneck, acc) =
                    (topo.bottleneck.as_ref().expect("checked"), topo.access.as_ref().expect("checked"));
                link_dirs(acc, "topology.access")?;
                let r0 = net.add_node("r0");
                let r1 = net.add_node("r1");
                add_link_cfg(&mut net, &self.simulation, "r0-r1".into(), (r0, r1), bottleneck, "topology.bottleneck")?;
                routers = vec![r0, r1];
                access = Some(acc);
            }
            TopologyKind::ParkingLot => {
                let (n, link, acc) = (
                    topo.routers.as_ref().expect("checked"),
                    topo.link.as_ref().expect("checked"),
                    topo.access.as_ref().expect("checked"),
                );
                if *n < 2 {
                    return Err(ConfigError::new("topology.routers", format!("must be at least 2, got {n}")));
                }
                link_dirs(link, "topology.link")?;
                link_dirs(acc, "topology.access")?;
                for i in 0..*n {
                    routers.push(net.add_node(format!("r{i}")));
                }
                for i in 1..*n as usize {
                    let ends = (routers[i - 1], routers[i]);
                    add_link_cfg(
                        &mut net,
                        &self.simulation,
                        format!("r{}-r{}", i - 1, i),
                        ends,
                        link,
                        "topology.link",
                    )?;
                }
                access = Some(acc);
            }
            TopologyKind::Graph => {
                let (nodes, links) = (topo.nodes.as_ref().expect("checked"), topo.links.as_ref().expect("checked"));
                if nodes.is_empty() {
                    return Err(ConfigError::new("topology.nodes", "at least one node is required"));
                }
                for (i, n) in nodes.iter().enumerate() {
                    if n.is_empty() {
                        return Err(ConfigError::new(format!("topology.nodes[{i}]"), "a node name cannot be empty"));
                    }
                    if net.node(n).is_some() {
                        return Err(ConfigError::new(
                            format!("topology.nodes[{i}]"),
                            format!("duplicate node name \"{n}\""),
                        ));
                    }
                    graph_nodes.push(net.add_node(n.clone()));
                }
                for (i, l) in links.iter().enumerate() {
                    let path = format!("topology.links[{i}]");
                    let lookup = |field: &str, name: &str| {
                        net.node(name).ok_or_else(|| {
                            ConfigError::new(
                                format!("{path}.{field}"),
                                format!("unknown node \"{name}\"; nodes are {}", nodes.join(", ")),
                            )
                        })
                    };
                    let a = lookup("from", &l.from)?;
                    let b = lookup("to", &l.to)?;
                    if a == b {
                        return Err(ConfigError::new(format!("{path}.to"), "a link must join two different nodes"));
                    }
                    let cfg = LinkCfg {
                        rate: l.rate,
                        delay: l.delay,
                        queue: l.queue.clone(),
                        loss: l.loss.clone(),
                        reverse: l.reverse.clone(),
                    };
                    let name = l.name.clone().unwrap_or_else(|| format!("{}-{}", l.from, l.to));
                    add_link_cfg(&mut net, &self.simulation, name, (a, b), &cfg, &path)?;
                }
                for (i, lan) in topo.lans.iter().flatten().enumerate() {
                    add_lan_cfg(&mut net, &self.simulation, lan, &format!("topology.lans[{i}]"), nodes)?;
                }
            }
        }

        let mut conns = Vec::new();
        for (g, group) in self.flows.iter().enumerate() {
            let path = format!("flows[{g}]");
            let only = |field: &str, present: bool, kinds: &str| {
                if present {
                    Err(ConfigError::new(
                        format!("{path}.{field}"),
                        format!("only allowed with topology kind {kinds}, this is \"{kind}\""),
                    ))
                } else {
                    Ok(())
                }
            };
            let is_graph = kind == "graph";
            only("direction", group.direction.is_some() && kind != "dumbbell", "\"dumbbell\"")?;
            only("from", group.from.is_some() && kind != "parking_lot", "\"parking_lot\"")?;
            only("to", group.to.is_some() && kind != "parking_lot", "\"parking_lot\"")?;
            only("src", group.src.is_some() && !is_graph, "\"graph\"")?;
            only("dst", group.dst.is_some() && !is_graph, "\"graph\"")?;
            only("src_access", group.src_access.is_some() && is_graph, "\"dumbbell\" or \"parking_lot\"")?;
            only("dst_access", group.dst_access.is_some() && is_graph, "\"dumbbell\" or \"parking_lot\"")?;
            if group.count == 0 {
                return Err(ConfigError::new(format!("{path}.count"), "must be at least 1"));
            }
            if group.name.is_empty() {
                return Err(ConfigError::new(format!("{path}.name"), "cannot be empty"));
            }
            if group.size == Some(Bytes(0)) {
                return Err(ConfigError::new(format!("{path}.size"), "must be at least 1B (omit it for bulk data)"));
            }
            let tcp = group.tcp.resolve(&format!("{path}.tcp"))?;
            let source = match (group.transport, &group.source) {
                (Transport::Tcp, None) => None,
                (Transport::Tcp, Some(_)) => {
                    return Err(ConfigError::new(format!("{path}.source"), "only allowed with transport = \"udp\""));
                }
                (Transport::Udp, None) => {
                    return Err(ConfigError::new(format!("{path}.source"), "is required with transport = \"udp\""));
                }
                (Transport::Udp, Some(src)) => {
                    let udp_only = |field: &str, present: bool| {
                        if present {
                            Err(ConfigError::new(format!("{path}.{field}"), "not used with transport = \"udp\""))
                        } else {
                            Ok(())
                        }
                    };
                    udp_only("size", group.size.is_some())?;
                    udp_only("drop_segments", !group.drop_segments.is_empty())?;
                    let default_tcp = serde_json::to_value(TcpCfg::default()).expect("serializes");
                    udp_only("tcp", serde_json::to_value(group.tcp).expect("serializes") != default_tcp)?;
                    Some(src.resolve(&format!("{path}.source"))?)
                }
            };
            // Endpoints of the group's flows are the same routers or nodes for every flow.
            let (ingress, egress) = match topo.kind {
                TopologyKind::Dumbbell => match group.direction.unwrap_or_default() {
                    Direction::Forward => (routers[0], routers[1]),
                    Direction::Reverse => (routers[1], routers[0]),
                },
                TopologyKind::ParkingLot => {
                    let n = topo.routers.as_ref().expect("checked");
                    let from = group.from.unwrap_or(0);
                    let to = group.to.unwrap_or(n - 1);
                    for (field, v) in [("from", from), ("to", to)] {
                        if v >= *n {
                            return Err(ConfigError::new(
                                format!("{path}.{field}"),
                                format!("router {v} does not exist; routers are 0..{}", n - 1),
                            ));
                        }
                    }
                    if from == to {
                        return Err(ConfigError::new(format!("{path}.to"), "must differ from `from`"));
                    }
                    (routers[from as usize], routers[to as usize])
                }
                TopologyKind::Graph => {
                    let nodes = topo.nodes.as_ref().expect("checked");
                    let find = |field: &str, v: &Option<String>| -> Result<NodeId, ConfigError> {
                        let name = v.as_deref().ok_or_else(|| {
                            ConfigError::new(format!("{path}.{field}"), "is required with topology kind \"graph\"")
                        })?;
                        net.node(name).ok_or_else(|| {
                            ConfigError::new(
                                format!("{path}.{field}"),
                                format!("unknown node \"{name}\"; nodes are {}", nodes.join(", ")),
                            )
                        })
                    };
                    let s = find("src", &group.src)?;
                    let d = find("dst", &group.dst)?;
                    if s == d {
                        return Err(ConfigError::new(format!("{path}.dst"), "must differ from `src`"));
                    }
                    (s, d)
                }
            };
            if let Some(stop) = group.stop {
                if stop <= group.start {
                    return Err(ConfigError::new(
                        format!("{path}.stop"),
                        format!("{stop} is not after start = {}", group.start),
                    ));
                }
            }
            let mut drop_segments = group.drop_segments.clone();
            drop_segments.sort_unstable();
            drop_segments.dedup();
            let same_name = self.flows[..g].iter().filter(|f| f.name == group.name).map(|f| f.count).sum::<u32>();
            for k in 0..group.count {
                let index = conns.len();
                let (src, dst) = if let Some(acc) = access {
                    let none = LinkOverride::default();
                    let s_cfg = group.src_access.as_ref().unwrap_or(&none).apply(acc);
                    let d_cfg = group.dst_access.as_ref().unwrap_or(&none).apply(acc);
                    let s = net.add_node(format!("s{index}"));
                    let d = net.add_node(format!("d{index}"));
                    // Forward is the direction of the flow's data: host to router, router to host.
                    let s_name = format!("s{index}-{}", net.nodes[ingress as usize]);
                    let d_name = format!("{}-d{index}", net.nodes[egress as usize]);
                    add_link_cfg(
                        &mut net,
                        &self.simulation,
                        s_name,
                        (s, ingress),
                        &s_cfg,
                        &format!("{path}.src_access"),
                    )?;
                    add_link_cfg(
                        &mut net,
                        &self.simulation,
                        d_name,
                        (egress, d),
                        &d_cfg,
                        &format!("{path}.dst_access"),
                    )?;
                    (s, d)
                } else {
                    (ingress, egress)
                };
                let data_route = shortest_path(&net, src, dst).ok_or_else(|| {
                    ConfigError::new(
                        path.clone(),
                        format!("no route from \"{}\" to \"{}\"", net.nodes[src as usize], net.nodes[dst as usize]),
                    )
                })?;
                let ack_route = shortest_path(&net, dst, src).ok_or_else(|| {
                    ConfigError::new(
                        path.clone(),
                        format!("no route from \"{}\" to \"{}\"", net.nodes[dst as usize], net.nodes[src as usize]),
                    )
                })?;
                let start = group.start.0 + group.start_spacing.0 * u64::from(k);
                conns.push(ConnSpec {
                    name: group.name.clone(),
                    group: g as u32,
                    src,
                    dst,
                    routes: [data_route, ack_route],
                    start,
                    stop: group.stop.map(|d| d.0),
                    size: group.size.map(|b| b.0),
                    tcp,
                    cc: group.tcp.cc,
                    drop_segments: drop_segments.clone(),
                    source: source.clone(),
                    key: format!("flow/{}/{}", group.name, same_name + k),
                });
            }
        }
        let groups: Vec<&str> = conns.iter().map(|c| c.name.as_str()).collect();
        for (id, l) in net.links.iter_mut().enumerate() {
            if let Some(s) = l.scheduled_mut() {
                let id = id as LinkId;
                // Link changes may reroute any flow onto this direction: give every flow its
                // queue from the start.
                let here: Vec<bool> = conns
                    .iter()
                    .map(|c| !self.changes.is_empty() || c.routes.iter().any(|r| r.contains(&id)))
                    .collect();
                s.sched.bind_flows(&groups, &here)?;
            }
        }
        if let Some(trace) = &self.trace {
            trace.resolve(&net, conns.len(), self.bottleneck_link(), self.simulation.duration.0)?;
        }
        let changes = self.resolve_changes(&net)?;
        Ok(Built { net, conns, changes })
    }

    /// Check the `[[changes]]` against the network; sorted by time, stably.
    fn resolve_changes(&self, net: &Network) -> Result<Vec<LinkChange>, ConfigError> {
        let mut out = Vec::with_capacity(self.changes.len());
        let duration = self.simulation.duration;
        for (i, c) in self.changes.iter().enumerate() {
            let path = format!("changes[{i}]");
            if c.at.0 > duration.0 {
                return Err(ConfigError::new(
                    format!("{path}.at"),
                    format!("{} is beyond the end of the run (simulation.duration = {duration})", c.at),
                ));
            }
            let named: Vec<usize> = (0..net.link_names.len()).filter(|&k| net.link_names[k] == c.link).collect();
            let k = match (named.as_slice(), self.bottleneck_link()) {
                ([k], _) => *k,
                ([], Some(b)) if c.link == "bottleneck" => b,
                ([], _) => {
                    const SHOWN: usize = 6;
                    let mut names: Vec<String> =
                        net.link_names.iter().take(SHOWN).map(|n| format!("\"{n}\"")).collect();
                    if net.link_names.len() > SHOWN {
                        names.push(format!("… ({} links)", net.link_names.len()));
                    }
                    return Err(ConfigError::new(
                        format!("{path}.link"),
                        format!("unknown link \"{}\"; links are {}", c.link, names.join(", ")),
                    ));
                }
                (many, _) => {
                    return Err(ConfigError::new(
                        format!("{path}.link"),
                        format!("{} links are called \"{}\"; give them unique names", many.len(), c.link),
                    ));
                }
            };
            if c.rate.is_none() && c.delay.is_none() && c.up.is_none() {
                return Err(ConfigError::new(path, "changes nothing; give at least one of rate, delay, up"));
            }
            if c.rate.is_some_and(|r| r.0 == 0) {
                return Err(ConfigError::new(format!("{path}.rate"), "must be greater than 0bps (use up = false)"));
            }
            let mut dirs = net.dirs_of(k);
            let is_lan = net.links[dirs[0] as usize].lan.is_some();
            match c.direction {
                Some(ChangeDirection::Forward | ChangeDirection::Reverse) if is_lan => {
                    return Err(ConfigError::new(
                        format!("{path}.direction"),
                        format!("\"{}\" is a LAN, whose channel both directions share; omit direction", c.link),
                    ));
                }
                Some(ChangeDirection::Forward) => dirs.truncate(1),
                Some(ChangeDirection::Reverse) => {
                    dirs.remove(0);
                }
                _ => {}
            }
            out.push(LinkChange { at: c.at.0, dirs, rate: c.rate, delay: c.delay.map(|d| d.0), up: c.up });
        }
        out.sort_by_key(|c| c.at);
        Ok(out)
    }

    /// The full-duplex link the trace selector `"bottleneck"` names (a dumbbell's r0-r1).
    pub fn bottleneck_link(&self) -> Option<usize> {
        (self.topology.kind == TopologyKind::Dumbbell).then_some(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R1: &str = r#"
[simulation]
duration = "60s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "100Mbps", delay = "20ms", queue = { limit = 250 } }
access = { rate = "1Gbps", delay = "1ms", queue = { limit = 100000 } }
[[flows]]
count = 16
start_spacing = "10ms"
tcp = { initial_window = 2 }
"#;

    fn err_toml(text: &str) -> String {
        match from_toml(text).and_then(|s| s.build().map(|_| ())) {
            Ok(()) => panic!("accepted bad input"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn r1_builds_a_dumbbell_with_one_host_pair_per_flow() {
        let s = from_toml(R1).unwrap();
        let b = s.build().unwrap();
        assert_eq!(b.conns.len(), 16);
        assert_eq!(b.net.nodes.len(), 2 + 32);
        assert_eq!(b.net.links.len(), 2 * (1 + 32));
        assert_eq!(b.conns[3].start, 30_000_000);
        assert_eq!(b.conns[0].routes[0].len(), 3);
        assert_eq!(b.conns[0].routes[0][1], 0, "the bottleneck r0->r1 is link direction 0");
        assert_eq!(b.conns[0].routes[1][1], 1);
        assert_eq!(b.conns[0].tcp.header, 40);
    }

    #[test]
    fn normalized_json_round_trips() {
        let s = from_toml(R1).unwrap();
        let j = s.to_json();
        let again = from_json(&j).unwrap();
        assert_eq!(again.to_json(), j);
        assert!(j.contains("\"recovery\":\"newreno\""));
    }

    #[test]
    fn unknown_keys_and_bad_values_name_the_field() {
        let bad_variant = R1.replace("initial_window = 2", "recovery = \"newrenoo\"");
        let e = err_toml(&bad_variant);
        assert!(e.starts_with("flows[0].tcp.recovery: unknown variant `newrenoo`"), "{e}");
        assert!(e.contains("`tahoe`"), "{e}");

        let e = err_toml(&R1.replace("count = 16", "count = 16\ncolor = 3"));
        assert!(e.starts_with("flows[0].color: unknown field `color`, expected one of `name`"), "{e}");

        let e = err_toml(&R1.replace("\"20ms\"", "\"20 parsecs\""));
        assert!(e.starts_with("topology.bottleneck.delay: expected a time"), "{e}");

        let e = err_toml(&R1.replace("kind = \"dumbbell\"", "kind = \"ring\""));
        assert!(
            e.starts_with("topology.kind: unknown variant `ring`, expected one of `dumbbell`, `parking_lot`, `graph`"),
            "{e}"
        );

        let e = err_toml(&R1.replace("kind = \"dumbbell\"", "kind = \"parking_lot\""));
        assert_eq!(e, "topology.bottleneck: not a field of kind \"parking_lot\"; its fields are access, routers, link");

        let e = err_toml(&R1.replace("limit = 250", "limit = 0"));
        assert_eq!(e, "topology.bottleneck.queue.limit: must be at least 1 packet or 1 byte");

        let e = err_toml(
            &R1.replace("initial_window = 2", "initial_window = 2, misrx_detection = true, recovery = \"sack\""),
        );
        assert!(e.starts_with("flows[0].tcp.misrx_detection: is available with recovery"), "{e}");
        let e = err_toml(&R1.replace("initial_window = 2", "initial_window = 2, misrx_k = 1.5"));
        assert_eq!(e, "flows[0].tcp.misrx_k: must be between 0 and 1 (exclusive), got 1.5");
        let e = err_toml(&R1.replace("initial_window = 2", "initial_window = 2, force_timeout = { segment = 3 }"));
        assert!(e.starts_with("flows[0].tcp.force_timeout: missing field `after`"), "{e}");

        let e = err_toml(&R1.replace("count = 16", "count = 16\nsrc = \"a\""));
        assert!(e.starts_with("flows[0].src: only allowed with topology kind \"graph\""), "{e}");

        let e = err_toml("[simulation\nduration = 1");
        assert!(e.starts_with("invalid TOML:") && e.contains("(line 1)") && !e.contains('\n'), "{e}");

        let e = err_toml(&R1.replace("duration = \"60s\"", ""));
        assert!(e.contains("missing field `duration`"), "{e}");
    }

    #[test]
    fn red_queues_parse_and_validate_every_field() {
        let red =
            |q: &str| R1.replace("queue = { limit = 250 }", &format!("queue = {{ kind = \"red\", limit = 250{q} }}"));
        let b = from_toml(&red(", min_th = 5, max_th = 15, max_p = 0.02, w_q = 0.002, mode = \"packets\""))
            .unwrap()
            .build()
            .unwrap();
        let Some(r) = b.net.links[0].red() else { panic!("not RED") };
        assert_eq!((r.params.min_th, r.params.max_th, r.params.max_p, r.params.w_q), (5.0, 15.0, 0.02, 0.002));
        assert!(!r.params.bytes && r.params.gentle && r.params.wait && r.params.adaptive.is_none());
        // Defaults: ns-2.35's (automatic w_q and thresholds, byte mode with 500-byte packets).
        let b = from_toml(&red("")).unwrap().build().unwrap();
        let Some(r) = b.net.links[0].red() else { panic!("not RED") };
        // 100 Mbps / 500 B = 25000 packets/s: min_th = 0.005 * 25000 / 2 = 62.5.
        assert_eq!((r.params.min_th, r.params.max_th, r.params.mean_pktsize), (62.5, 187.5, 500));
        assert!(r.params.bytes);
        // The normalized form keeps "auto" and round-trips.
        let s = from_toml(&red(", w_q = \"auto\", min_th = 4")).unwrap();
        let j = s.to_json();
        assert!(j.contains("\"w_q\":\"auto\"") && j.contains("\"min_th\":4.0"), "{j}");
        assert_eq!(from_json(&j).unwrap().to_json(), j);
        // DropTail scenarios serialize exactly as before.
        assert!(!from_toml(R1).unwrap().to_json().contains("min_th"));

        let path = "topology.bottleneck.queue";
        for (q, msg) in [
            (", min_th = 0", "min_th: must be a number of packets > 0 or \"auto\", got 0"),
            (", max_th = -3", "max_th: must be a number of packets > 0 or \"auto\", got -3"),
            (", min_th = 20, max_th = 10", "max_th: must be greater than min_th = 20, got 10"),
            (", max_p = 0", "max_p: must be a probability in (0, 1], got 0"),
            (", max_p = 1.5", "max_p: must be a probability in (0, 1], got 1.5"),
            (", w_q = 2", "w_q: must be in (0, 1] or \"auto\", got 2"),
            (", mean_pktsize = \"0B\"", "mean_pktsize: must be between 1B and 65535B, got 0B"),
            (", target_delay = \"0s\"", "target_delay: must be greater than 0s"),
        ] {
            assert_eq!(err_toml(&red(q)), format!("{path}.{msg}"));
        }
        let e = err_toml(&red(", w_q = \"automatic\""));
        assert_eq!(e, format!("{path}.w_q: expected a number or \"auto\", got \"automatic\""));
        let e = err_toml(&red(", mode = \"bits\""));
        assert!(e.starts_with(&format!("{path}.mode: unknown variant `bits`, expected `packets` or `bytes`")), "{e}");
        let b = from_toml(&red(", ecn = true")).unwrap().build().unwrap();
        let Some(r) = b.net.links[0].red() else { panic!("not RED") };
        assert!(r.params.ecn);
        let e = err_toml(&red(", ecn = 1"));
        assert!(e.starts_with(&format!("{path}.ecn: invalid type: integer `1`, expected a boolean")), "{e}");
        let e = err_toml(&R1.replace("queue = { limit = 250 }", "queue = { limit = 250, min_th = 5 }"));
        assert_eq!(e, format!("{path}.min_th: is a RED parameter; it needs kind = \"red\""));
        // Access links are checked under the flow group that uses them.
        let e = err_toml(&R1.replace("queue = { limit = 100000 }", "queue = { kind = \"red\", max_p = 7 }"));
        assert_eq!(e, "topology.access.queue.max_p: must be a probability in (0, 1], got 7");
    }

    #[test]
    fn loss_and_reverse_build_per_direction() {
        let text = R1
            .replace(
                "queue = { limit = 250 } }",
                "queue = { limit = 250 }, loss = { model = \"bernoulli\", p = 0.01 }, reverse = { rate = \"64Kbps\", queue = { limit = 5 }, loss = { model = \"periodic\", every = 10 } } }",
            )
            .replace("count = 16", "count = 2\ndst_access = { reverse = { delay = \"30ms\" } }");
        let s = from_toml(&text).unwrap();
        let b = s.build().unwrap();
        let (f, r) = (&b.net.links[0], &b.net.links[1]);
        assert_eq!((f.params.rate, r.params.rate), (Rate(100_000_000), Rate(64_000)));
        assert_eq!((f.params.limit, r.params.limit), (Limit::Packets(250), Limit::Packets(5)));
        assert_eq!((f.params.delay, r.params.delay), (20_000_000, 20_000_000), "reverse delay inherited");
        assert_eq!(f.loss.as_ref().map(|m| m.name()), Some("bernoulli"));
        assert_eq!(r.loss.as_ref().map(|m| m.name()), Some("periodic"));
        // dst access of flow 0: r1 -> d0 forward, d0 -> r1 reverse with its own delay.
        let d0 = b.conns[0].routes[0][2] as usize;
        assert_eq!(b.net.links[d0].params.delay, 1_000_000);
        assert_eq!(b.net.links[d0 + 1].params.delay, 30_000_000);
        assert!(b.net.links[d0].loss.is_none() && b.net.links[d0 + 1].loss.is_none());
        // The normalized document keeps the new fields and reads back the same.
        let j = s.to_json();
        assert!(j.contains("\"loss\":{\"model\":\"bernoulli\",\"p\":0.01}"), "{j}");
        assert_eq!(from_json(&j).unwrap().to_json(), j);
    }

    #[test]
    fn loss_and_reverse_errors_name_the_field() {
        let with = |bottleneck_extra: &str| {
            err_toml(
                &R1.replace("queue = { limit = 250 } }", &format!("queue = {{ limit = 250 }}, {bottleneck_extra} }}")),
            )
        };
        assert_eq!(
            with("loss = { model = \"bernoulli\", p = 2 }"),
            "topology.bottleneck.loss.p: must be a probability in [0, 1], got 2"
        );
        assert_eq!(
            with("reverse = { loss = { model = \"burst\", p = 0.1, length = 0 } }"),
            "topology.bottleneck.reverse.loss.length: must be at least 1 packet"
        );
        assert_eq!(with("reverse = { rate = 0 }"), "topology.bottleneck.reverse.rate: must be greater than 0bps");
        assert_eq!(
            with("reverse = { queue = { limit = 0 } }"),
            "topology.bottleneck.reverse.queue.limit: must be at least 1 packet or 1 byte"
        );
        let e = with("reverse = { los = 1 }");
        assert!(e.starts_with("topology.bottleneck.reverse.los: unknown field `los`"), "{e}");
        let e = with("loss = { model = \"gilbert\" }");
        assert!(
            e.starts_with("topology.bottleneck.loss.model: unknown variant `gilbert`, expected one of `bernoulli`"),
            "{e}"
        );
        let e = err_toml(&R1.replace(
            "count = 16",
            "count = 16\nsrc_access = { loss = { model = \"periodic\", every = 5, offset = 9 } }",
        ));
        assert_eq!(e, "flows[0].src_access.loss.offset: must be below every = 5, got 9");
        let g = r#"
[simulation]
duration = "1s"
[topology]
kind = "graph"
nodes = ["a", "b"]
links = [
  { from = "a", to = "b", rate = "10Mbps", delay = "1ms" },
  { from = "a", to = "b", rate = "10Mbps", delay = "1ms", loss = { model = "bernoulli", p = 0.1 } },
]
[[flows]]
src = "a"
dst = "b"
"#;
        assert!(err_toml(g).starts_with("topology.links[1].name: another link is also called \"a-b\""));
        assert!(from_toml(&g.replace("p = 0.1 }", "p = 0.1 }, name = \"lossy\"")).unwrap().build().is_ok());
    }

    #[test]
    fn graph_references_are_checked() {
        let g = r#"
[simulation]
duration = "1s"
[topology]
kind = "graph"
nodes = ["a", "b", "c"]
links = [ { from = "a", to = "b", rate = "10Mbps", delay = "1ms" } ]
[[flows]]
src = "a"
dst = "c"
"#;
        assert_eq!(err_toml(g), "flows[0]: no route from \"a\" to \"c\"");
        let g2 = g.replace("to = \"b\"", "to = \"x\"");
        assert!(err_toml(&g2).starts_with("topology.links[0].to: unknown node \"x\""));
    }
}
