//! Static shortest-path routing (fewest hops) over the link directions that are up, as ns-2's
//! static routing computes it, and the table of routes a run uses.
//!
//! Routes are computed once per pair of end nodes and shared by every connection between them
//! ([`RouteTable`]). A [`Router`] computes them cheaply for many hosts: a host with a single
//! link (a stub, like a dumbbell's senders) reaches everything through it, so its routes are
//! that link followed by its router's; and one breadth-first tree per router serves every
//! destination. The routes are exactly those of [`shortest_path`].

use super::{LinkId, Network, NodeId};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// The link directions of a fewest-hop path from `src` to `dst`, or `None` when `dst` cannot
/// be reached. Breadth-first search visits each node's links in declaration order, so among
/// equally short paths the one using earlier-declared links wins, deterministically.
pub fn shortest_path(net: &Network, src: NodeId, dst: NodeId) -> Option<Vec<LinkId>> {
    let n = net.nodes.len();
    let mut via: Vec<Option<LinkId>> = vec![None; n];
    let mut seen = vec![false; n];
    let mut frontier = VecDeque::from([src]);
    seen[src as usize] = true;
    while let Some(u) = frontier.pop_front() {
        if u == dst {
            break;
        }
        for &(l, v) in &net.adjacency[u as usize] {
            if !seen[v as usize] && net.links[l as usize].up {
                seen[v as usize] = true;
                via[v as usize] = Some(l);
                frontier.push_back(v);
            }
        }
    }
    if !seen[dst as usize] {
        return None;
    }
    let mut path = Vec::new();
    let mut at = dst;
    while at != src {
        let l = via[at as usize]?;
        path.push(l);
        at = net.links[l as usize].from;
    }
    path.reverse();
    Some(path)
}

/// The breadth-first tree from one node: the link each node is first reached by.
fn bfs_tree(net: &Network, src: NodeId) -> Vec<LinkId> {
    let mut via = vec![NOT_REACHED; net.nodes.len()];
    let mut seen = vec![false; net.nodes.len()];
    let mut frontier = VecDeque::from([src]);
    seen[src as usize] = true;
    while let Some(u) = frontier.pop_front() {
        for &(l, v) in &net.adjacency[u as usize] {
            if !seen[v as usize] && net.links[l as usize].up {
                seen[v as usize] = true;
                via[v as usize] = l;
                frontier.push_back(v);
            }
        }
    }
    via
}

/// `bfs_tree` entry of a node the tree does not reach (and of its root).
const NOT_REACHED: LinkId = LinkId::MAX;

/// Computes fewest-hop routes for many pairs of nodes, reusing what it has computed. The
/// network may gain nodes between calls (hosts on stub links, as a scenario is built); after
/// links change otherwise, [`Router::clear`] it.
#[derive(Debug, Default)]
pub struct Router {
    /// Breadth-first trees by root.
    trees: HashMap<NodeId, Vec<LinkId>>,
}

impl Router {
    /// A router with nothing computed.
    pub fn new() -> Self {
        Self::default()
    }

    /// The only outgoing link of a stub node and the node it reaches.
    fn stub(net: &Network, n: NodeId) -> Option<(LinkId, NodeId)> {
        match net.adjacency[n as usize].as_slice() {
            &[only] => Some(only),
            _ => None,
        }
    }

    /// The route [`shortest_path`] gives from `src` to `dst` on `net`.
    pub fn route(&mut self, net: &Network, src: NodeId, dst: NodeId) -> Option<Vec<LinkId>> {
        if src == dst {
            return Some(Vec::new());
        }
        let mut route = Vec::new();
        // A stub source leaves by its one link whatever the destination.
        let mut from = src;
        if let Some((l, n)) = Self::stub(net, src) {
            if !net.links[l as usize].up {
                return None;
            }
            route.push(l);
            from = n;
            if from == dst {
                return Some(route);
            }
        }
        // A stub destination is entered from its one neighbour, by the first of that
        // neighbour's links to it that is up (breadth-first search takes the first).
        let mut to = dst;
        let mut last = None;
        if let Some((out, n)) = Self::stub(net, dst) {
            // Its neighbour's only way to it is the other direction of its link (or, on a LAN
            // of two, the neighbour's direction onto the LAN).
            let l = match net.reverse[out as usize] {
                Some(back) => back,
                None => net.adjacency[n as usize].iter().find(|&&(_, v)| v == dst)?.0,
            };
            if !net.links[l as usize].up {
                return None;
            }
            last = Some(l);
            to = n;
        }
        if from != to {
            let tree = self.trees.entry(from).or_insert_with(|| bfs_tree(net, from));
            if to as usize >= tree.len() {
                // A node added since the tree was computed.
                *tree = bfs_tree(net, from);
            }
            let start = route.len();
            let mut at = to;
            while at != from {
                let l = tree[at as usize];
                if l == NOT_REACHED {
                    return None;
                }
                route.push(l);
                at = net.links[l as usize].from;
            }
            route[start..].reverse();
        }
        route.extend(last);
        Some(route)
    }

    /// Forget what was computed (after links went up or down).
    pub fn clear(&mut self) {
        self.trees.clear();
    }
}

/// Index of a route in a [`RouteTable`].
pub type RouteId = u32;

/// The routes of a run, one per ordered pair of end nodes, shared by every connection between
/// them.
#[derive(Clone, Debug, Default)]
pub struct RouteTable {
    /// Per route, its links in order; connections hold a clone, so the forwarding path reaches
    /// the links without a lookup in the table.
    routes: Vec<Arc<[LinkId]>>,
    /// Per route: its end nodes.
    ends: Vec<(NodeId, NodeId)>,
    by_ends: HashMap<(NodeId, NodeId), RouteId>,
}

impl RouteTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The route from `src` to `dst`, computed with `router` the first time it is asked for;
    /// `None` when `dst` cannot be reached.
    pub fn get_or_add(&mut self, router: &mut Router, net: &Network, src: NodeId, dst: NodeId) -> Option<RouteId> {
        if let Some(&id) = self.by_ends.get(&(src, dst)) {
            return Some(id);
        }
        let route = router.route(net, src, dst)?;
        let id = self.routes.len() as RouteId;
        self.routes.push(route.into());
        self.ends.push((src, dst));
        self.by_ends.insert((src, dst), id);
        Some(id)
    }

    /// The links of route `id`, in order.
    #[inline]
    pub fn links(&self, id: RouteId) -> &[LinkId] {
        &self.routes[id as usize]
    }

    /// Route `id`, shared.
    pub fn shared(&self, id: RouteId) -> Arc<[LinkId]> {
        self.routes[id as usize].clone()
    }

    /// Number of routes.
    pub fn len(&self) -> usize {
        self.routes.len()
    }

    /// True when there is no route.
    pub fn is_empty(&self) -> bool {
        self.routes.is_empty()
    }

    /// The end nodes of route `id`.
    pub fn ends(&self, id: RouteId) -> (NodeId, NodeId) {
        self.ends[id as usize]
    }

    /// The same routes recomputed on `net` as it is now (links up or down), keeping their ids;
    /// a pair that is no longer connected gets an empty route.
    pub fn recomputed(&self, net: &Network) -> RouteTable {
        let mut router = Router::new();
        let mut t = RouteTable { by_ends: self.by_ends.clone(), ends: self.ends.clone(), ..RouteTable::default() };
        for &(src, dst) in &self.ends {
            t.routes.push(router.route(net, src, dst).unwrap_or_default().into());
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::link::LinkParams;
    use crate::net::Limit;
    use crate::units::Rate;

    fn params() -> LinkParams {
        LinkParams { rate: Rate(1_000_000), delay: 1, limit: Limit::Packets(10) }
    }

    #[test]
    fn finds_fewest_hops_and_breaks_ties_by_declaration_order() {
        let mut net = Network::default();
        let [a, b, c, d] = ["a", "b", "c", "d"].map(|n| net.add_node(n));
        let ab = net.add_link("ab", a, b, params());
        let bd = net.add_link("bd", b, d, params());
        let _ac = net.add_link("ac", a, c, params());
        let _cd = net.add_link("cd", c, d, params());
        assert_eq!(shortest_path(&net, a, d), Some(vec![ab, bd]));
        // The reverse direction uses the odd link ids.
        assert_eq!(shortest_path(&net, d, a), Some(vec![bd + 1, ab + 1]));
        assert_eq!(shortest_path(&net, a, a), Some(vec![]));
    }

    #[test]
    fn directions_that_are_down_are_avoided() {
        let mut net = Network::default();
        let [a, b, c, d] = ["a", "b", "c", "d"].map(|n| net.add_node(n));
        let ab = net.add_link("ab", a, b, params());
        let bd = net.add_link("bd", b, d, params());
        let ac = net.add_link("ac", a, c, params());
        let cd = net.add_link("cd", c, d, params());
        net.links[bd as usize].up = false;
        assert_eq!(shortest_path(&net, a, d), Some(vec![ac, cd]));
        // Only the forward direction is down: the way back is unchanged.
        assert_eq!(shortest_path(&net, d, a), Some(vec![bd + 1, ab + 1]));
        net.links[cd as usize].up = false;
        assert_eq!(shortest_path(&net, a, d), None);
    }

    #[test]
    fn a_lan_direction_reaches_every_other_station() {
        let mut net = Network::default();
        let [a, r1, r2, r3, b] = ["a", "r1", "r2", "r3", "b"].map(|n| net.add_node(n));
        let a_r1 = net.add_link("a-r1", a, r1, params());
        let r3_b = net.add_link("r3-b", r3, b, params());
        let lan = net.add_lan("lan", &[r1, r2, r3], &[params(); 3]);
        assert_eq!(net.dirs_of(2), lan);
        assert_eq!(net.to_name(lan[0]), "lan");
        assert_eq!(net.adjacency[r1 as usize], vec![(a_r1 + 1, a), (lan[0], r2), (lan[0], r3)]);
        assert_eq!(shortest_path(&net, a, b), Some(vec![a_r1, lan[0], r3_b]));
        assert_eq!(shortest_path(&net, b, a), Some(vec![r3_b + 1, lan[2], a_r1 + 1]));
        assert_eq!(shortest_path(&net, r2, r3), Some(vec![lan[1]]));
    }

    /// A dumbbell-like network: hosts on stub links around a small core with a LAN and a
    /// down link; the router gives `shortest_path`'s route for every pair.
    #[test]
    fn the_router_agrees_with_shortest_path_everywhere() {
        let mut net = Network::default();
        let [r0, r1, r2, r3] = ["r0", "r1", "r2", "r3"].map(|n| net.add_node(n));
        net.add_link("r0r1", r0, r1, params());
        net.add_link("r1r2", r1, r2, params());
        let down = net.add_link("r0r2", r0, r2, params());
        net.links[down as usize].up = false;
        net.add_lan("lan", &[r2, r3], &[params(); 2]);
        let mut hosts = Vec::new();
        for (i, &r) in [r0, r0, r1, r2, r3, r3].iter().enumerate() {
            let h = net.add_node(format!("h{i}"));
            net.add_link(format!("h{i}"), h, r, params());
            hosts.push(h);
        }
        // A host with two links is not a stub.
        net.add_link("h0r1", hosts[0], r1, params());
        let mut router = Router::new();
        let all: Vec<NodeId> = (0..net.nodes.len() as NodeId).collect();
        for &a in &all {
            for &b in &all {
                assert_eq!(router.route(&net, a, b), shortest_path(&net, a, b), "{a} -> {b}");
            }
        }
        let mut table = RouteTable::new();
        let id = table.get_or_add(&mut router, &net, hosts[1], hosts[5]).unwrap();
        assert_eq!(table.get_or_add(&mut router, &net, hosts[1], hosts[5]), Some(id));
        assert_eq!(Some(table.links(id).to_vec()), shortest_path(&net, hosts[1], hosts[5]));
        // Taking r1-r2 down leaves h1 without a way to h5.
        net.links[2].up = false;
        assert_eq!(table.recomputed(&net).links(id), &[] as &[LinkId]);
    }

    #[test]
    fn unreachable_gives_none() {
        let mut net = Network::default();
        let a = net.add_node("a");
        let b = net.add_node("b");
        assert_eq!(shortest_path(&net, a, b), None);
    }
}
