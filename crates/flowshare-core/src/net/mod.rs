//! The network: nodes, full-duplex links (one transmitter, queue and pipe per direction) and
//! static routes.

pub mod codel;
pub mod link;
pub mod loss;
pub mod red;
pub mod route;
pub mod sched;

pub use link::{Aqm, Limit, LinkDir, QueueStats, Refusal, Scheduled};
pub use route::shortest_path;

/// Index of a node.
pub type NodeId = u32;
/// Index of one direction of a link.
pub type LinkId = u32;

/// A built network: named nodes and link directions. Link `2k` and `2k + 1` are the two
/// directions of the k-th full-duplex link.
#[derive(Debug, Default)]
pub struct Network {
    /// Node names, indexed by [`NodeId`].
    pub nodes: Vec<String>,
    /// Link directions, indexed by [`LinkId`].
    pub links: Vec<LinkDir>,
    /// Per node, the outgoing link directions in declaration order (ties in routing go to the
    /// first).
    pub adjacency: Vec<Vec<LinkId>>,
    /// Name of each full-duplex link (`links.len() / 2` entries).
    pub link_names: Vec<String>,
}

impl Network {
    /// Add a node and return its id.
    pub fn add_node(&mut self, name: impl Into<String>) -> NodeId {
        self.nodes.push(name.into());
        self.adjacency.push(Vec::new());
        (self.nodes.len() - 1) as NodeId
    }

    /// Add a full-duplex link with the same parameters in both directions; returns the id of
    /// the `a → b` direction (the `b → a` direction is that id + 1).
    pub fn add_link(&mut self, name: impl Into<String>, a: NodeId, b: NodeId, params: link::LinkParams) -> LinkId {
        self.add_asymmetric_link(name, a, b, params, params)
    }

    /// Add a full-duplex link with parameters `forward` for `a → b` and `reverse` for `b → a`;
    /// returns the id of the `a → b` direction.
    pub fn add_asymmetric_link(
        &mut self,
        name: impl Into<String>,
        a: NodeId,
        b: NodeId,
        forward: link::LinkParams,
        reverse: link::LinkParams,
    ) -> LinkId {
        let id = self.links.len() as LinkId;
        self.links.push(LinkDir::new(a, b, forward));
        self.links.push(LinkDir::new(b, a, reverse));
        self.adjacency[a as usize].push(id);
        self.adjacency[b as usize].push(id + 1);
        self.link_names.push(name.into());
        id
    }

    /// The node id called `name`.
    pub fn node(&self, name: &str) -> Option<NodeId> {
        self.nodes.iter().position(|n| n == name).map(|i| i as NodeId)
    }
}
