//! Flow groups as written in a scenario, and the connections a built scenario hands to the
//! simulation.

use super::abr::AbrCfg;
use super::ensemble::Ensemble;
use super::tcp::TcpCfg;
use super::topology::LinkOverride;
use crate::cc::aggregate::Join;
use crate::cc::CcConfig;
use crate::net::{LinkId, NodeId, RouteId};
use crate::tcp::TcpConfig;
use crate::tfrc::{TfrcCfg, TfrcConfig};
use crate::traffic::arrivals::{ArrivalsCfg, Process};
use crate::traffic::{SourceCfg, SourceSpec, Transport};
use crate::units::{Bytes, Dur, Time};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

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
    /// Each flow starts a random time in [0, `start_jitter`] after its spaced start, drawn from
    /// the flow's own stream: replications with different seeds then differ.
    #[serde(default, skip_serializing_if = "Dur::is_zero")]
    pub start_jitter: Dur,
    /// No new data after this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Dur>,
    /// Bytes to transfer; absent for bulk (unlimited) data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Bytes>,
    /// Dumbbell: direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
    /// Dumbbell: the base RTT of each flow's path, its two-way propagation delay. The delays
    /// of the group's access links (both directions, sender and receiver side) are derived so
    /// that the path's propagation delays add up to it; `topology.access.delay` does not apply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt: Option<Dur>,
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
    /// `tcp` (default), `udp` or `tfrc`.
    #[serde(default, skip_serializing_if = "Transport::is_tcp")]
    pub transport: Transport,
    /// TFRC: its options (see `docs/tfrc.md`); the normalized scenario has them all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tfrc: Option<TfrcCfg>,
    /// UDP: the traffic source (see `docs/traffic.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceCfg>,
    /// TCP transfers opened while the run goes on (see `docs/traffic.md`), instead of `count`
    /// flows that start at given times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<ArrivalsCfg>,
    /// Members joining an aggregate connection (`tcp.cc` `pamultcp` or `mpat`) at run time
    /// (ADR 0012).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregate: Option<AggregateCfg>,
    /// The flow's data cells as an ATM ABR circuit (ADR 0013; `docs/scenarios.md`, "ATM cell
    /// links").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abr: Option<AbrCfg>,
}

/// `aggregate` as written.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AggregateCfg {
    /// Members joining at given times with finite transfers.
    #[serde(default)]
    pub joins: Vec<JoinCfg>,
}

/// One member joining an aggregate.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JoinCfg {
    /// When it joins (from the start of the run).
    pub at: Dur,
    /// What it transfers.
    pub size: Bytes,
}

fn default_flow_name() -> String {
    "flow".into()
}
fn default_count() -> u32 {
    1
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
    /// Routes of forward packets (data) and reverse packets (ACKs) in the scenario's route
    /// table, indexed by [`crate::packet::Dir`].
    pub routes: [RouteId; 2],
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
    /// The ensemble it joins, if any (TCP only).
    pub ensemble: Option<Ensemble>,
    /// Members joining its aggregate at run time (PA-MulTCP and MPAT only).
    pub aggregate: Vec<Join>,
    /// UDP flows: the source (`None` for TCP).
    pub source: Option<SourceSpec>,
    /// TFRC flows: the options (`None` for TCP and UDP).
    pub tfrc: Option<Arc<TfrcConfig>>,
    /// Stable name of the flow's random streams: `flow/<group name>/<k>`, with `k` counting
    /// the flows of that name in scenario order.
    pub key: String,
    /// ABR: the link direction whose transmitter is the source of its data cells.
    pub abr: Option<LinkId>,
}

impl ConnSpec {
    /// Its transport's name, as in results.
    pub fn transport(&self) -> &'static str {
        match (&self.source, &self.tfrc) {
            (Some(_), _) => "udp",
            (None, Some(_)) => "tfrc",
            (None, None) => "tcp",
        }
    }
}

/// A flow group whose connections an arrival process opens while the run goes on.
#[derive(Clone, Debug)]
pub struct ArrivalSpec {
    /// Group label.
    pub name: String,
    /// Index of its flow group (`[[flows]]` table).
    pub group: u32,
    /// Host its transfers are sent from.
    pub src: NodeId,
    /// Host that receives them.
    pub dst: NodeId,
    /// Forward and reverse routes, shared by all its connections.
    pub routes: [RouteId; 2],
    /// Transport parameters of each connection.
    pub tcp: TcpConfig,
    /// Congestion-control algorithm of each connection.
    pub cc: CcConfig,
    /// The ensemble each connection joins, if any.
    pub ensemble: Option<Ensemble>,
    /// What opens the connections.
    pub process: Process,
    /// Connections are opened from this time on.
    pub start: Time,
    /// And not at or after this one.
    pub stop: Option<Time>,
    /// At most this many connections in all.
    pub limit: Option<u64>,
    /// Base name of its random streams: `flow/<group name>`.
    pub key: String,
    /// A population: its nodes and the routes between them (`src`, `dst` and `routes` are
    /// then its first pair's).
    pub placed: Option<Arc<Placed>>,
}

impl ArrivalSpec {
    /// Every pair of forward and reverse routes its connections may take.
    pub fn routes_used(&self) -> &[[RouteId; 2]] {
        match &self.placed {
            Some(p) => &p.pairs,
            None => std::slice::from_ref(&self.routes),
        }
    }
}

/// A population's nodes in the network, and the routes between every two of them.
#[derive(Clone, Debug)]
pub struct Placed {
    /// The population's nodes, in its order.
    pub nodes: Vec<NodeId>,
    /// Forward and reverse routes of each ordered pair of distinct nodes.
    pub pairs: Vec<[RouteId; 2]>,
    /// `pairs` index of the pair (i, j) at `i · n + j` (unused for i = j).
    index: Vec<u32>,
}

impl Placed {
    /// Routes between population nodes `nodes`, from `route(a, b)`.
    pub fn new<E>(
        nodes: Vec<NodeId>,
        mut route: impl FnMut(NodeId, NodeId) -> Result<RouteId, E>,
    ) -> Result<Placed, E> {
        let n = nodes.len();
        let mut pairs = Vec::with_capacity(n * n.saturating_sub(1));
        let mut index = vec![u32::MAX; n * n];
        for (i, &a) in nodes.iter().enumerate() {
            for (j, &b) in nodes.iter().enumerate() {
                if i != j {
                    index[i * n + j] = pairs.len() as u32;
                    pairs.push([route(a, b)?, route(b, a)?]);
                }
            }
        }
        Ok(Placed { nodes, pairs, index })
    }

    /// The routes from population node `i` to population node `j` (distinct).
    pub fn routes(&self, i: usize, j: usize) -> [RouteId; 2] {
        debug_assert_ne!(i, j, "a transfer leaves its source's node");
        self.pairs[self.index[i * self.nodes.len() + j] as usize]
    }
}
