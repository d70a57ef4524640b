//! The network: nodes, full-duplex links (one transmitter, queue and pipe per direction),
//! shared-medium LANs (one direction per attached station, one channel) and static routes.

pub mod abr;
pub mod codel;
pub mod enhanced_red;
pub mod epd;
pub mod link;
pub mod loss;
pub mod red;
pub mod route;
pub mod sched;
pub mod subqueue;

use crate::packet::Meta;
use crate::units::Time;
pub use link::{Aqm, Fifo, Limit, LinkDir, Queue, QueueStats, Refusal, Scheduled};
pub use route::{shortest_path, RouteId, RouteTable, Router};

/// Index of a node.
pub type NodeId = u32;
/// Index of one direction of a link.
pub type LinkId = u32;

/// A built network: named nodes and link directions. A full-duplex link has two directions
/// (forward first), a LAN one per attached station; `link_of` says whose a direction is.
#[derive(Debug, Default)]
pub struct Network {
    /// Node names, indexed by [`NodeId`].
    pub nodes: Vec<String>,
    /// Link directions, indexed by [`LinkId`].
    pub links: Vec<LinkDir>,
    /// Per node, the outgoing link directions with the node each reaches, in declaration
    /// order (ties in routing go to the first). A station's LAN direction reaches every other
    /// station of the LAN.
    pub adjacency: Vec<Vec<(LinkId, NodeId)>>,
    /// Name of each full-duplex link and LAN, in declaration order.
    pub link_names: Vec<String>,
    /// Per direction, the index in `link_names` of its link or LAN.
    pub link_of: Vec<u32>,
    /// Per direction of a full-duplex link, the other direction (`None` on a LAN).
    pub reverse: Vec<Option<LinkId>>,
    /// The LANs.
    pub lans: Vec<Lan>,
}

/// A shared-medium LAN: one half-duplex channel that the directions of all its stations use
/// in turn, first come first served in order of arrival at the channel.
#[derive(Clone, Debug)]
pub struct Lan {
    /// Index in `link_names`.
    pub link: u32,
    /// End of the last transmission accepted on the channel.
    pub busy_until: Time,
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
        let k = self.link_names.len() as u32;
        self.links.push(LinkDir::new(a, b, forward));
        self.links.push(LinkDir::new(b, a, reverse));
        self.adjacency[a as usize].push((id, b));
        self.adjacency[b as usize].push((id + 1, a));
        self.link_names.push(name.into());
        self.link_of.extend([k, k]);
        self.reverse.extend([Some(id + 1), Some(id)]);
        id
    }

    /// Add a LAN joining `stations` (at least two, distinct), with the parameters of each
    /// station's direction onto it (the channel's rate and delay, the station's queue); returns
    /// the directions in station order. A LAN direction's `to` is its own station: the node a
    /// packet reaches depends on its route.
    pub fn add_lan(
        &mut self,
        name: impl Into<String>,
        stations: &[NodeId],
        params: &[link::LinkParams],
    ) -> Vec<LinkId> {
        let k = self.link_names.len() as u32;
        let lan = self.lans.len() as u32;
        self.link_names.push(name.into());
        self.lans.push(Lan { link: k, busy_until: 0 });
        let first = self.links.len() as LinkId;
        for (&s, &p) in stations.iter().zip(params) {
            let mut d = LinkDir::new(s, s, p);
            d.lan = Some(lan);
            d.slow_enqueue = true;
            self.links.push(d);
            self.link_of.push(k);
            self.reverse.push(None);
        }
        for (i, &s) in stations.iter().enumerate() {
            for &o in stations.iter().filter(|&&o| o != s) {
                self.adjacency[s as usize].push((first + i as LinkId, o));
            }
        }
        (first..first + stations.len() as LinkId).collect()
    }

    /// Offer a packet (`meta`) arriving at `at` to FIFO direction `link`
    /// ([`LinkDir::enqueue`]); on a LAN the packet also waits for the channel, which it then
    /// holds until its transmission ends. Always inlined: forwarding has two copies of its
    /// loop (with and without cell links), and out of line this costs R1 some 6 % more
    /// instructions (callgrind).
    #[inline(always)]
    pub fn enqueue(&mut self, link: LinkId, now: Time, at: Time, meta: &Meta) -> Result<Time, Refusal> {
        let l = &mut self.links[link as usize];
        if l.slow_enqueue {
            return self.enqueue_slow(link, now, at, meta);
        }
        l.enqueue(now, at, meta)
    }

    /// [`Network::enqueue`] for a LAN station or a link whose loss model acts before the
    /// queue, out of line so that the point-to-point path keeps the link's enqueue inlined.
    #[cold]
    #[inline(never)]
    fn enqueue_slow(&mut self, link: LinkId, now: Time, at: Time, meta: &Meta) -> Result<Time, Refusal> {
        let l = &mut self.links[link as usize];
        if l.loss_first && l.lost_on_arrival(at) {
            return Err(Refusal::Lost);
        }
        let Some(lan) = l.lan else {
            return l.enqueue(now, at, meta);
        };
        let lan = lan as usize;
        l.wait_for(self.lans[lan].busy_until);
        let r = l.enqueue(now, at, meta);
        if r.is_ok() {
            self.lans[lan].busy_until = l.last_end();
        }
        r
    }

    /// The directions of link or LAN `k` (index in `link_names`): forward then reverse for a
    /// link, one per station for a LAN.
    pub fn dirs_of(&self, k: usize) -> Vec<LinkId> {
        (0..self.links.len() as LinkId).filter(|&q| self.link_of[q as usize] as usize == k).collect()
    }

    /// Name of the far end of direction `q`: its receiving node, or the LAN's name.
    pub fn to_name(&self, q: LinkId) -> &str {
        let l = &self.links[q as usize];
        match l.lan {
            Some(lan) => &self.link_names[self.lans[lan as usize].link as usize],
            None => &self.nodes[l.to as usize],
        }
    }

    /// The node id called `name`.
    pub fn node(&self, name: &str) -> Option<NodeId> {
        self.nodes.iter().position(|n| n == name).map(|i| i as NodeId)
    }
}
