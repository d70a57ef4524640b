//! What a live endpoint runs: one side of one listed flow of a scenario, between two socket
//! addresses, for a bounded time; and the checks made before anything is sent.
//!
//! The agent is built by the core's own constructor ([`connection_agents`]), so a live
//! connection has exactly the parameters the simulated one has. The checks refuse what has no
//! meaning for a single connection on a real network (an ensemble of connections sharing one
//! controller), packets too large for one IPv4 datagram, and MulTFRC settings beyond the caps
//! that M. Welzl and D. Damjanović, "MulTFRC: TFRC with weighted fairness",
//! draft-welzl-multfrc-01, IETF Internet-Draft, 2009, asks for: `n` per connection
//! (§3, "SHOULD NOT exceed 6") and the sum of `n` over the connections of one host (§4).
//!
//! A TFRC or MulTFRC flow with a `size` is a reliable transfer of that many bytes
//! ([`crate::reliable`]): its agents are built as for a bulk flow (the TFRC sender keeps
//! sending until the transfer is complete, retransmissions included), and the reliable layer
//! numbers the blocks the packets carry.

use crate::error::LiveError;
use crate::reliable::Transfer;
use crate::wire::{MAX_BLOCK, MAX_SIZE};
use flowshare_core::agent::{Agent, Side};
use flowshare_core::scenario::ConnSpec;
use flowshare_core::sim::connection_agents;
use flowshare_core::tfrc::Equation;
use flowshare_core::units::MAX_TIME;
use flowshare_core::Scenario;
use std::net::SocketAddr;
use std::time::Duration;

/// The cap on `n` the MulTFRC draft recommends, per connection and per host.
pub const DRAFT_N_CAP: f64 = 6.0;

/// One live endpoint: side `side` of listed flow `flow` of `scenario`, bound to `bind` and
/// exchanging datagrams with `peer` only, for `duration`.
#[derive(Clone, Debug)]
pub struct EndpointConfig {
    /// The scenario the flow is taken from. Its topology is not used (the network is real);
    /// its `simulation.duration` still bounds how long a source sends, as in a simulated run,
    /// and the flow's `start` and `stop` count from the endpoint's start.
    pub scenario: Scenario,
    /// Index of the flow among the scenario's listed flows (`[[flows]]` with `count` expanded,
    /// in order), as in the simulation's flow table.
    pub flow: usize,
    /// Which end this process runs.
    pub side: Side,
    /// Local address to bind (port 0: any free port).
    pub bind: SocketAddr,
    /// The other endpoint: datagrams go there, and datagrams from elsewhere are dropped.
    pub peer: SocketAddr,
    /// How long to run.
    pub duration: Duration,
    /// Connection id written in and expected on every datagram; both ends must agree.
    pub conn_id: u32,
    /// The largest `n` of one MulTFRC connection.
    pub multfrc_max_n: f64,
    /// The largest sum of `n` over the MulTFRC connections of one host.
    pub multfrc_max_host_n: f64,
    /// `n` of the MulTFRC connections this host already runs outside the scenario.
    pub multfrc_host_n_other: f64,
}

/// What [`EndpointConfig::build`] makes: the flow's spec, this side's agent and, for a sized
/// TFRC flow, the reliable transfer.
pub(crate) struct Built {
    pub(crate) spec: ConnSpec,
    pub(crate) agent: Agent,
    pub(crate) transfer: Option<Transfer>,
}

impl EndpointConfig {
    /// Side `side` of flow `flow`, with connection id `flow` and the draft's caps.
    pub fn new(
        scenario: Scenario,
        flow: usize,
        side: Side,
        bind: SocketAddr,
        peer: SocketAddr,
        duration: Duration,
    ) -> Self {
        EndpointConfig {
            scenario,
            flow,
            side,
            bind,
            peer,
            duration,
            conn_id: flow as u32,
            multfrc_max_n: DRAFT_N_CAP,
            multfrc_max_host_n: DRAFT_N_CAP,
            multfrc_host_n_other: 0.0,
        }
    }

    /// The reliable transfer the flow asks for: a TFRC or MulTFRC flow with a `size`.
    pub fn transfer(&self) -> Result<Option<Transfer>, LiveError> {
        Ok(self.build()?.transfer)
    }

    /// Check everything and build the agent: the flow's spec and its endpoint on this side.
    pub(crate) fn build(&self) -> Result<Built, LiveError> {
        let d = self.duration.as_nanos();
        if d == 0 || d > u128::from(MAX_TIME) {
            return Err(LiveError::config(
                "duration",
                format!("must be above 0s and at most 1e9 s, got {:?}", self.duration),
            ));
        }
        if self.peer.ip().is_unspecified() || self.peer.port() == 0 {
            return Err(LiveError::config(
                "peer",
                format!("{} is not a destination: give the other endpoint's address and port", self.peer),
            ));
        }
        let built = self.scenario.build()?;
        let n_flows = built.conns.len();
        let Some(c) = built.conns.get(self.flow) else {
            return Err(LiveError::config(
                "flow",
                format!(
                    "{} is not a listed flow: the scenario lists {n_flows} (0..={})",
                    self.flow,
                    n_flows.saturating_sub(1)
                ),
            ));
        };
        let path = format!("flows[{}]", c.group);
        if c.ensemble.is_some() {
            return Err(LiveError::config(
                format!("{path}.tcp.ensemble"),
                "an ensemble shares one controller between connections; a live endpoint runs one connection",
            ));
        }
        check_sizes(c, &path)?;
        self.check_multfrc(&built.conns, c, &path)?;
        let transfer = reliable_transfer(c, &path)?;
        let end = self.scenario.simulation.duration.0;
        // A reliable transfer's sender sends until the receiver has every block: its TFRC
        // agent is a bulk sender, stopped when the transfer completes.
        let mut agent_spec = c.clone();
        if transfer.is_some() {
            agent_spec.size = None;
        }
        let (source, destination) =
            connection_agents(&agent_spec, self.flow as u32, end, self.scenario.simulation.seed);
        let agent = match self.side {
            Side::Source => source,
            Side::Destination => destination,
        };
        Ok(Built { spec: c.clone(), agent, transfer })
    }

    fn check_multfrc(&self, conns: &[ConnSpec], c: &ConnSpec, path: &str) -> Result<(), LiveError> {
        for (field, v, min) in [
            ("multfrc_max_n", self.multfrc_max_n, f64::MIN_POSITIVE),
            ("multfrc_max_host_n", self.multfrc_max_host_n, f64::MIN_POSITIVE),
            ("multfrc_host_n_other", self.multfrc_host_n_other, 0.0),
        ] {
            if !(v >= min && v <= 1e6) {
                let lower = if min > 0.0 { "above 0" } else { "at least 0" };
                return Err(LiveError::config(field, format!("expected a number {lower} and at most 1e6, got {v}")));
            }
        }
        let Some(n) = multfrc_n(c) else { return Ok(()) };
        if n > self.multfrc_max_n {
            return Err(LiveError::config(
                "multfrc_max_n",
                format!(
                    "{path}.tfrc.n = {n} exceeds the per-connection cap {} (draft-welzl-multfrc-01 §3); lower n or raise multfrc_max_n",
                    self.multfrc_max_n
                ),
            ));
        }
        // This host is the flow's source or destination node; every MulTFRC flow of the
        // scenario on that node counts, as do the connections the host runs besides.
        let host = match self.side {
            Side::Source => c.src,
            Side::Destination => c.dst,
        };
        let on_host: f64 = conns
            .iter()
            .filter(|o| match self.side {
                Side::Source => o.src == host,
                Side::Destination => o.dst == host,
            })
            .filter_map(multfrc_n)
            .sum();
        let total = on_host + self.multfrc_host_n_other;
        if total > self.multfrc_max_host_n * (1.0 + 1e-12) {
            return Err(LiveError::config(
                "multfrc_max_host_n",
                format!(
                    "the MulTFRC connections of this host add up to n = {total} ({on_host} in the scenario, {} besides), above the per-host cap {} (draft-welzl-multfrc-01 §4)",
                    self.multfrc_host_n_other, self.multfrc_max_host_n
                ),
            ));
        }
        Ok(())
    }
}

/// The reliable transfer of a sized TFRC flow: `size` bytes in blocks of the packet's payload.
fn reliable_transfer(c: &ConnSpec, path: &str) -> Result<Option<Transfer>, LiveError> {
    let (Some(size), Some(tfrc)) = (c.size, c.tfrc.as_ref()) else { return Ok(None) };
    let t = Transfer { size, block_bytes: tfrc.payload };
    if size == 0 || tfrc.payload == 0 || t.blocks() > MAX_BLOCK + 1 {
        return Err(LiveError::config(
            format!("{path}.size"),
            format!(
                "a reliable transfer of {size} bytes in blocks of {} bytes: expected at least 1 byte and at most 2^48 blocks",
                tfrc.payload
            ),
        ));
    }
    Ok(Some(t))
}

/// `n` of a MulTFRC flow.
fn multfrc_n(c: &ConnSpec) -> Option<f64> {
    match c.tfrc.as_ref()?.equation {
        Equation::MulTfrc { n, .. } => Some(n),
        _ => None,
    }
}

fn too_large(field: &str, size: u32) -> LiveError {
    LiveError::config(
        field,
        format!("packets of {size} bytes do not fit one IPv4 datagram: at most {MAX_SIZE} bytes, headers included"),
    )
}

/// Every packet the flow sends must fit one datagram.
fn check_sizes(c: &ConnSpec, path: &str) -> Result<(), LiveError> {
    let sizes: Vec<(String, u64)> = match (&c.source, &c.tfrc) {
        (Some(s), _) => vec![(format!("{path}.packet_size"), u64::from(s.payload) + u64::from(s.header))],
        (None, Some(t)) => vec![
            (format!("{path}.tfrc.payload"), u64::from(t.payload) + u64::from(t.header)),
            (format!("{path}.tfrc.feedback_size"), u64::from(t.feedback_size)),
        ],
        (None, None) => vec![
            (format!("{path}.tcp.mss"), u64::from(c.tcp.mss) + u64::from(c.tcp.header)),
            (format!("{path}.tcp.ack_size"), u64::from(c.tcp.ack_size) + 3 * u64::from(c.tcp.sack_block_bytes)),
        ],
    };
    for (field, size) in sizes {
        if size > u64::from(MAX_SIZE) {
            return Err(too_large(&field, size.min(u64::from(u32::MAX)) as u32));
        }
    }
    Ok(())
}
