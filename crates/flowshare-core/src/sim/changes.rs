//! Link changes at given times: new rates and delays, directions going down and up, and the
//! rerouting that follows (ADR 0005).

use super::{Simulation, STRANDED};
use crate::net::{LinkId, NodeId};
use crate::packet::{Dir, Packet};
use crate::trace::Reason;

impl Simulation {
    /// Apply link change `i`: new rates and delays hold for packets accepted from now on; a
    /// direction going down loses every packet on it; any up/down switch recomputes routes.
    #[cold]
    pub(super) fn apply_change(&mut self, i: usize) {
        let c = self.changes[i].clone();
        let mut rerouted = false;
        for &d in &c.dirs {
            let l = &mut self.net.links[d as usize];
            if let Some(rate) = c.rate {
                l.set_rate(rate);
            }
            if let Some(delay) = c.delay {
                l.set_delay(delay);
            }
            match c.up {
                Some(true) if !l.up => {
                    l.up = true;
                    rerouted = true;
                }
                Some(false) if l.up => {
                    let lost = l.go_down(self.now);
                    if let Some(lan) = l.lan {
                        let ch = &mut self.net.lans[lan as usize].busy_until;
                        *ch = (*ch).min(self.now);
                    }
                    for id in lost {
                        let p = *self.arena.get(id);
                        self.count_route_drop(&p);
                        if let Some(t) = &mut self.trace {
                            t.dropped(self.now, &p, d, Reason::LinkDown);
                        }
                        self.free_packet(id, p.conn);
                    }
                    // CoDel may have dropped packets while the scheduler was emptied.
                    if self.net.links[d as usize].is_scheduled() {
                        self.drain_removed(d);
                    }
                    rerouted = true;
                }
                _ => {}
            }
        }
        if rerouted {
            self.reroute();
        }
    }

    /// Count packet `p` as dropped by a link going down or for want of a route.
    pub(super) fn count_route_drop(&mut self, p: &Packet) {
        self.count_drop(p);
        let c = &mut self.counters[p.conn as usize];
        match p.dir {
            Dir::Forward => c.data_route_dropped += 1,
            Dir::Reverse => c.acks_route_dropped += 1,
        }
    }

    /// Recompute every flow's routes over the directions that are up and move the packets in
    /// flight onto them: a packet continues from the node it is about to reach if that node is
    /// on its new route, and is dropped on reaching it otherwise. A flow without a route gets
    /// an empty one; its packets are dropped at their first hop.
    pub(super) fn reroute(&mut self) {
        let net = &self.net;
        let new = self.routes.recomputed(net);
        // The node at position `k` of a route ending at `last`.
        let node_at = |route: &[LinkId], k: usize, last: NodeId| match route.get(k) {
            Some(&l) => net.links[l as usize].from,
            None => last,
        };
        for l in &net.links {
            // Packets waiting in a scheduler will reach the same node as those in the pipe.
            for id in l.pipe_ids().chain(l.waiting_ids()) {
                let p = self.arena.get_mut(id);
                if p.hop == STRANDED {
                    continue;
                }
                let route = self.conns[p.conn as usize].routes[p.dir as usize];
                let (old, fresh, last) = (self.routes.links(route), new.links(route), self.routes.ends(route).1);
                let reached = node_at(old, p.hop as usize + 1, last);
                p.hop = match (1..=fresh.len()).find(|&k| node_at(fresh, k, last) == reached) {
                    Some(k) => (k - 1) as u16,
                    None => STRANDED,
                };
            }
        }
        self.routes = new;
        for c in &mut self.conns {
            c.paths = c.routes.map(|r| self.routes.shared(r));
        }
    }
}
