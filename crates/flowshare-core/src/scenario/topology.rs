//! The network part of a scenario: topology kinds, links and LANs as written, and how they are
//! checked and added to a [`Network`] with their queues and loss models.

use super::queues::{QueueCfg, QueueKind};
use super::SimulationCfg;
use crate::engine::stream;
use crate::net::epd::Epd;
use crate::net::link::LinkParams;
use crate::net::loss::{LossCfg, LossPosition, LossProcess};
use crate::net::red::Red;
use crate::net::{Aqm, Limit, LinkId, Network, NodeId};
use crate::units::{Dur, Rate};
use crate::ConfigError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The most routers a parking lot may have. Each is a node with a link to the next, built
/// before anything else is checked: a chain of 100,000 builds in well under a second, one of
/// a billion would take all the memory there is.
pub const MAX_ROUTERS: u32 = 100_000;

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
    pub(super) fn as_str(self) -> &'static str {
        match self {
            TopologyKind::Dumbbell => "dumbbell",
            TopologyKind::ParkingLot => "parking_lot",
            TopologyKind::Graph => "graph",
        }
    }
}

/// The network. Which of the optional fields apply depends on `kind` (checked by
/// [`Scenario::build`](super::Scenario::build)); a flat table keeps every error message's
/// field path exact.
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
    /// Parking lot: number of routers in the chain (at least 2, at most [`MAX_ROUTERS`]).
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
    pub(super) fn check_fields(&self) -> Result<(), ConfigError> {
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
        match self.routers {
            Some(n) if n > MAX_ROUTERS => {
                Err(ConfigError::new("topology.routers", format!("must be at most {MAX_ROUTERS}, got {n}")))
            }
            _ => Ok(()),
        }
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
    /// Where the forward loss model acts: `after_queue` (default) or `before_queue`.
    #[serde(default, skip_serializing_if = "LossPosition::is_default")]
    pub loss_position: LossPosition,
    /// How the reverse direction differs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse: Option<ReverseCfg>,
    /// An ATM cell link: both directions carry 53-byte AAL5 cells, and their queues count
    /// cells (ADR 0013).
    #[serde(default, skip_serializing_if = "super::tcp::is_false")]
    pub cells: bool,
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
    /// Where the reverse loss model acts.
    #[serde(default, skip_serializing_if = "LossPosition::is_default")]
    pub loss_position: LossPosition,
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
    /// Where the forward loss model acts, if different.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_position: Option<LossPosition>,
    /// Reverse-direction fields, each overriding the default's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse: Option<ReverseCfg>,
}

impl LinkOverride {
    pub(super) fn apply(&self, base: &LinkCfg) -> LinkCfg {
        let reverse = match (&self.reverse, &base.reverse) {
            (None, r) => r.clone(),
            (Some(o), None) => Some(o.clone()),
            (Some(o), Some(b)) => Some(ReverseCfg {
                rate: o.rate.or(b.rate),
                delay: o.delay.or(b.delay),
                queue: o.queue.clone().or_else(|| b.queue.clone()),
                loss: o.loss.clone().or_else(|| b.loss.clone()),
                loss_position: if o.loss.is_some() { o.loss_position } else { b.loss_position },
            }),
        };
        LinkCfg {
            rate: self.rate.unwrap_or(base.rate),
            delay: self.delay.unwrap_or(base.delay),
            queue: self.queue.clone().unwrap_or_else(|| base.queue.clone()),
            loss: self.loss.clone().or_else(|| base.loss.clone()),
            loss_position: self.loss_position.unwrap_or(base.loss_position),
            reverse,
            cells: base.cells,
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
    /// Where it acts: `after_queue` (default) or `before_queue`.
    #[serde(default, skip_serializing_if = "LossPosition::is_default")]
    pub loss_position: LossPosition,
    /// How the `to → from` direction differs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse: Option<ReverseCfg>,
    /// An ATM cell link (ADR 0013).
    #[serde(default, skip_serializing_if = "super::tcp::is_false")]
    pub cells: bool,
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
    cfg.queue.epd_params(&qpath, cfg.cells)?;
    if cfg.queue.needs_cells() && !cfg.cells {
        return Err(ConfigError::new(
            format!("{qpath}.classes"),
            "a class with epd discards whole AAL5 frames of cells; it needs cells = true on the link",
        ));
    }
    cfg.queue.mark_threshold(&qpath)?;
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
    let threshold = cfg.queue.mark_threshold(&qpath)?;
    if threshold.is_some() {
        net.links[dir as usize].set_mark_threshold(threshold);
    }
    if let Some(params) = cfg.queue.epd_params(&qpath, cfg.cells)? {
        net.links[dir as usize].set_aqm(Aqm::Epd(Box::new(Epd::new(params))));
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
            loss_position: LossPosition::AfterQueue,
            reverse: None,
            cells: cfg.cells,
        },
        None => LinkCfg { loss: None, loss_position: LossPosition::AfterQueue, reverse: None, ..cfg.clone() },
    }
}

/// Checked parameters of both directions of `cfg`, loss models included.
pub(super) fn link_dirs(cfg: &LinkCfg, path: &str) -> Result<(LinkParams, LinkParams), ConfigError> {
    let forward = link_params(cfg, path)?;
    if let Some(loss) = &cfg.loss {
        loss.validate(&format!("{path}.loss"))?;
    } else if !cfg.loss_position.is_default() {
        return Err(ConfigError::new(
            format!("{path}.loss_position"),
            "needs a loss model (`loss`) to place".to_string(),
        ));
    }
    let Some(r) = &cfg.reverse else {
        return Ok((forward, forward));
    };
    let reverse = link_params(&reverse_cfg(cfg), &format!("{path}.reverse"))?;
    if let Some(loss) = &r.loss {
        loss.validate(&format!("{path}.reverse.loss"))?;
    } else if !r.loss_position.is_default() {
        return Err(ConfigError::new(
            format!("{path}.reverse.loss_position"),
            "needs a loss model (`loss`) to place".to_string(),
        ));
    }
    Ok((forward, reverse))
}

/// Add link `cfg` from `a` (forward direction `a → b`) with its queue disciplines and loss
/// models; each loss model draws from the stream `link/<name>/<forward|reverse>/loss`.
pub(super) fn add_link_cfg(
    net: &mut Network,
    sim: &SimulationCfg,
    name: String,
    (a, b): (NodeId, NodeId),
    cfg: &LinkCfg,
    path: &str,
) -> Result<LinkId, ConfigError> {
    let (forward, reverse) = link_dirs(cfg, path)?;
    let models = [
        ("forward", cfg.loss.as_ref(), cfg.loss_position),
        (
            "reverse",
            cfg.reverse.as_ref().and_then(|r| r.loss.as_ref()),
            cfg.reverse.as_ref().map_or(LossPosition::AfterQueue, |r| r.loss_position),
        ),
    ];
    if models.iter().any(|m| m.1.is_some()) && net.link_names.contains(&name) {
        return Err(ConfigError::new(
            format!("{path}.name"),
            format!("another link is also called \"{name}\"; a link with a loss model needs a unique name (it names its random stream)"),
        ));
    }
    let id = net.add_asymmetric_link(name.clone(), a, b, forward, reverse);
    net.links[id as usize].cells = cfg.cells;
    net.links[id as usize + 1].cells = cfg.cells;
    install_queue(net, id, cfg, path, sim)?;
    let rev_path = if cfg.reverse.is_some() { format!("{path}.reverse") } else { path.to_string() };
    install_queue(net, id + 1, &reverse_cfg(cfg), &rev_path, sim)?;
    for (k, (dir, model, position)) in models.into_iter().enumerate() {
        if let Some(m) = model {
            let rng = stream(sim.seed, &format!("link/{name}/{dir}/loss"));
            let dir = &mut net.links[id as usize + k];
            dir.loss = Some(Box::new(LossProcess::new(m, rng)));
            if position == LossPosition::BeforeQueue {
                dir.set_loss_first();
            }
        }
    }
    Ok(id)
}

/// Add LAN `cfg` (at `path`) to a graph whose node names are `nodes`. Each station's queue is
/// `cfg.queue` or its entry in `cfg.queues`; each station's loss model draws from the stream
/// `link/<lan name>/<station>/loss`.
pub(super) fn add_lan_cfg(
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
        loss_position: LossPosition::AfterQueue,
        reverse: None,
        cells: false,
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
