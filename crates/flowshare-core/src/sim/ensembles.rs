//! The search list of ensembles (ADR 0010): which group controller a TCP connection with an
//! ensemble setting joins. As in EFCM's implementation (Savorić and Karl, TKN-04-007,
//! Appendix A), a connection opening looks its sending host and receiver key up in a list of
//! ensembles and joins the one found or starts a new one; an ensemble whose last member left
//! is dissolved by its controller and reused by the next connection with its key. The entry
//! and its controller are kept, so a controller with temporal sharing (`tcb`, `etcp`) holds the
//! last closed connection's state for the next one.

use crate::cc::efcm::Efcm;
use crate::cc::host::GroupId;
use crate::cc::tcb::Tcb;
use crate::cc::CcHost;
use crate::net::{Network, NodeId, RouteId, RouteTable};
use crate::scenario::{Ensemble, EnsembleKey, EnsembleParams};

/// One ensemble of the list.
#[derive(Debug)]
struct Entry {
    src: NodeId,
    key: NodeId,
    setting: Ensemble,
    group: GroupId,
}

/// The ensembles made so far.
#[derive(Debug, Default)]
pub(super) struct Ensembles {
    list: Vec<Entry>,
}

impl Ensembles {
    /// The group a connection from `src` to `dst` over data route `route` joins under
    /// `setting`, made if it is the first.
    pub(super) fn group(
        &mut self,
        cc: &mut CcHost,
        net: &Network,
        routes: &RouteTable,
        (src, dst, route): (NodeId, NodeId, RouteId),
        setting: &Ensemble,
    ) -> GroupId {
        let key = match setting.key {
            EnsembleKey::Receiver => dst,
            // The node whose link (or LAN station) delivers to the receiver.
            EnsembleKey::Network => routes.links(route).last().map_or(src, |&l| net.links[l as usize].from),
        };
        if let Some(e) = self.list.iter().find(|e| e.src == src && e.key == key && e.setting == *setting) {
            return e.group;
        }
        let group = match setting.params {
            EnsembleParams::Efcm(p) => cc.add_group(Box::new(Efcm::new(p))),
            EnsembleParams::Tcb(p) => cc.add_group(Box::new(Tcb::new(p))),
        };
        self.list.push(Entry { src, key, setting: *setting, group });
        group
    }
}
