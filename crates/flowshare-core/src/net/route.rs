//! Static shortest-path routing (fewest hops) over the link directions that are up, as ns-2's
//! static routing computes it.

use super::{LinkId, Network, NodeId};
use std::collections::VecDeque;

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

    #[test]
    fn unreachable_gives_none() {
        let mut net = Network::default();
        let a = net.add_node("a");
        let b = net.add_node("b");
        assert_eq!(shortest_path(&net, a, b), None);
    }
}
