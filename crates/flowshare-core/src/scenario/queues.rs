//! Queues as written in a scenario, and their resolution for a given link into RED parameters
//! or a scheduler (priority, DRR, enhanced RED, FQ-CoDel), with ns-2.35's defaults.

use crate::engine::stream;
use crate::net::codel::CodelParams;
use crate::net::epd::{Epd, EpdParams};
use crate::net::red::{self, Red, RedParams};
use crate::net::sched::{
    ClassNames, Discipline, Drr, EnhancedRed, EnhancedRedParams, FqCodel, Overflow, PerFlow, Scheduler, SubAqm,
    SubQueue,
};
use crate::net::Limit;
use crate::units::{Bytes, Dur, Rate};
use crate::ConfigError;
use rand_core::RngCore;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// The most hash buckets an `fq_codel` queue may have (Linux's `flows` limit).
pub const MAX_BUCKETS: u32 = 65_536;

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
    /// FIFO of ATM cells discarding whole frames: EPD, EPD/A, PPD (`net::epd`).
    Epd,
}

impl QueueKind {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            QueueKind::Droptail => "droptail",
            QueueKind::Red => "red",
            QueueKind::Priority => "priority",
            QueueKind::Drr => "drr",
            QueueKind::EnhancedRed => "enhanced_red",
            QueueKind::FqCodel => "fq_codel",
            QueueKind::Epd => "epd",
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
    /// Priority class of a cell link: whole-frame discard of its cells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epd: Option<EpdCfg>,
    /// Priority class: step marking of ECN-capable arrivals that find this many packets (or
    /// bytes) waiting in the class (EFCI marking of forward RM cells on a cell link).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_threshold: Option<LimitCfg>,
    /// Priority class: when `ecn_threshold` applies, as a packet arrives (default) or as it
    /// leaves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark: Option<MarkAt>,
}

/// When a priority class's step marking looks at its queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkAt {
    /// An arrival that finds the threshold reached is marked.
    #[default]
    Arrival,
    /// A packet that leaves the threshold reached behind it is marked.
    Departure,
}

/// `epd` of a priority class: the fields of kind `"epd"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EpdCfg {
    /// Cells in the class above which a frame is discarded (default half the class's limit,
    /// or of the queue's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<u32>,
    /// EPD/A.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accounting: Option<bool>,
    /// PPD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ppd: Option<bool>,
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
    /// ns-2.35's `use_mark_p_`: ECN marks only while the drop probability is below this, and
    /// no drop-all threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark_p: Option<f64>,
    /// Step marking at K (DCTCP): droptail and RED mark an ECN-capable arrival that finds at
    /// least K packets (an integer) or bytes (a size) waiting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_threshold: Option<LimitCfg>,
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
    /// EPD: a frame whose first cell finds more cells than this queued is discarded (default
    /// half the limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<u32>,
    /// EPD/A: per-VC accounting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accounting: Option<bool>,
    /// PPD: after a tail drop inside a frame, discard the rest of it but its last cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ppd: Option<bool>,
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
            mark_p: None,
            ecn_threshold: None,
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
            threshold: None,
            accounting: None,
            ppd: None,
        }
    }
}

/// The optional fields of a RED queue.
const RED_FIELDS: [&str; 12] = [
    "min_th",
    "max_th",
    "max_p",
    "w_q",
    "gentle",
    "wait",
    "mode",
    "mean_pktsize",
    "adaptive",
    "target_delay",
    "ecn",
    "mark_p",
];

/// Resolve `cfg`, the frame discard of a queue or class holding at most `limit` (the field
/// `limit_field`); `threshold_field` names its threshold. The threshold defaults to half the
/// limit, which must count cells.
fn epd_params(cfg: &EpdCfg, limit_field: &str, threshold_field: &str, limit: Limit) -> Result<EpdParams, ConfigError> {
    let Limit::Packets(limit) = limit else {
        return Err(ConfigError::new(
            limit_field,
            "frame discard (EPD) needs a limit in cells (an integer), not bytes",
        ));
    };
    let threshold = cfg.threshold.unwrap_or(limit / 2);
    if threshold > limit {
        return Err(ConfigError::new(
            threshold_field,
            format!("must be at most the limit ({limit} cells), got {threshold}"),
        ));
    }
    Ok(EpdParams { threshold, accounting: cfg.accounting.unwrap_or(false), ppd: cfg.ppd.unwrap_or(false) })
}

/// The optional fields of an EPD queue.
const EPD_FIELDS: [&str; 3] = ["threshold", "accounting", "ppd"];

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
        if let Some(m) = self.mark_p {
            if !(m > 0.0 && m <= 1.0) {
                return err("mark_p", format!("must be a probability in (0, 1], got {m}"));
            }
        }
        Ok(RedParams {
            min_th,
            max_th,
            max_p,
            w_q,
            gentle: self.gentle.unwrap_or(true),
            wait: self.wait.unwrap_or(true),
            bytes,
            ecn: self.ecn.unwrap_or(false),
            mark_p: self.mark_p,
            mean_pktsize: mean.0 as u32,
            ptc,
            adaptive: self.adaptive.unwrap_or(false).then(|| red::Adaptive::ns2(rate.0 as f64)),
        })
    }

    /// Every optional field with whether it is set.
    fn fields(&self) -> [(&'static str, bool); 26] {
        [
            ("ecn_threshold", self.ecn_threshold.is_some()),
            ("ecn", self.ecn.is_some()),
            ("mark_p", self.mark_p.is_some()),
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
            ("threshold", self.threshold.is_some()),
            ("accounting", self.accounting.is_some()),
            ("ppd", self.ppd.is_some()),
        ]
    }

    /// The optional fields `kind` (with its `aqm`) takes.
    fn allowed_fields(&self) -> Vec<&'static str> {
        const ERED: [&str; 7] = ["min_th", "max_th", "w_q", "max_p", "flow_p", "ramp", "mean_pktsize"];
        match self.kind {
            QueueKind::Droptail => vec!["ecn_threshold"],
            QueueKind::Red => {
                let mut v = RED_FIELDS.to_vec();
                v.push("ecn_threshold");
                v
            }
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
            QueueKind::Epd => {
                let mut v = EPD_FIELDS.to_vec();
                v.push("ecn_threshold");
                v
            }
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
            if EPD_FIELDS.contains(&field) {
                return Err(ConfigError::new(
                    format!("{path}.{field}"),
                    "is a frame-discard parameter of ATM cell queues; it needs kind = \"epd\"",
                ));
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

    /// The step-marking threshold of a FIFO kind (`ecn_threshold`), checked.
    pub fn mark_threshold(&self, path: &str) -> Result<Option<Limit>, ConfigError> {
        self.check_fields(path)?;
        match self.ecn_threshold.map(|l| l.0) {
            Some(Limit::Packets(0) | Limit::Bytes(0)) => Err(ConfigError::new(
                format!("{path}.ecn_threshold"),
                "must be at least 1 packet (an integer) or 1 byte (a size such as \"30000B\")",
            )),
            k => Ok(k),
        }
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

    /// The frame-discard policy of kind `"epd"` on a link that is a cell link or not
    /// (`cells`), or `None` for the other kinds. `path` is the queue's field path.
    pub fn epd_params(&self, path: &str, cells: bool) -> Result<Option<EpdParams>, ConfigError> {
        self.check_fields(path)?;
        if self.kind != QueueKind::Epd {
            return Ok(None);
        }
        if !cells {
            return Err(ConfigError::new(
                format!("{path}.kind"),
                "\"epd\" discards whole AAL5 frames of cells; it needs cells = true on the link",
            ));
        }
        let cfg = EpdCfg { threshold: self.threshold, accounting: self.accounting, ppd: self.ppd };
        epd_params(&cfg, &format!("{path}.limit"), &format!("{path}.threshold"), self.limit.0).map(Some)
    }

    /// Whether a class of the queue discards frames of cells, which only cell links carry.
    pub fn needs_cells(&self) -> bool {
        self.kind == QueueKind::Epd || self.classes.iter().flatten().any(|c| c.epd.is_some())
    }

    /// Enhanced RED's parameters (defaults after resolution hasegawa:A42: thresholds 5 and 15
    /// packets, w_q = 0.002, p = 0.02).
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
            p_group: Vec::new(),
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
            QueueKind::Droptail | QueueKind::Red | QueueKind::Epd => Ok(None),
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
                    let limit = Self::class_limit(c.limit, &cpath)?;
                    let aqm = match &c.epd {
                        Some(e) => {
                            let limit_field = format!("{}.limit", if c.limit.is_some() { &cpath } else { path });
                            let p =
                                epd_params(e, &limit_field, &format!("{cpath}.epd.threshold"), limit.unwrap_or(total))?;
                            SubAqm::Epd(Box::new(Epd::new(p)))
                        }
                        None => SubAqm::None,
                    };
                    let mut q = SubQueue::new(limit, aqm);
                    q.mark_threshold = match c.ecn_threshold.map(|l| l.0) {
                        Some(Limit::Packets(0) | Limit::Bytes(0)) => {
                            return Err(ConfigError::new(
                                format!("{cpath}.ecn_threshold"),
                                "must be at least 1 packet (an integer) or 1 byte (a size such as \"30000B\")",
                            ))
                        }
                        k => k,
                    };
                    q.mark_at_departure = match (c.mark, q.mark_threshold) {
                        (Some(_), None) => {
                            return Err(ConfigError::new(format!("{cpath}.mark"), "needs ecn_threshold"))
                        }
                        (m, _) => m == Some(MarkAt::Departure),
                    };
                    queues.push(q);
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
                    if c.epd.is_some() || c.ecn_threshold.is_some() || c.mark.is_some() {
                        let field = if c.epd.is_some() {
                            "epd"
                        } else if c.ecn_threshold.is_some() {
                            "ecn_threshold"
                        } else {
                            "mark"
                        };
                        return Err(ConfigError::new(format!("{cpath}.{field}"), "only priority classes take it"));
                    }
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
                if let Some(n) = self.buckets.filter(|&n| n > MAX_BUCKETS) {
                    return err("buckets", format!("must be at most {MAX_BUCKETS} (Linux fq_codel's limit), got {n}"));
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
