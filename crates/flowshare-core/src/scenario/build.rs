//! [`Scenario::build`]: everything the schema cannot check, and the network and connections
//! of a checked scenario.

use super::changes::LinkChange;
use super::flows::{ArrivalSpec, ConnSpec, Direction, Placed};
use super::tcp::TcpCfg;
use super::topology::{add_lan_cfg, add_link_cfg, link_dirs, LinkCfg, LinkOverride, TopologyKind};
use super::{FlowGroup, Scenario};
use crate::cc::aggregate::Join;
use crate::cc::CcConfig;
use crate::engine::{stream, uniform_delay};
use crate::net::abr::Abr;
use crate::net::sched::{Discipline, Scheduler, SubAqm, SubQueue};
use crate::net::{Aqm, Network, NodeId, RouteId, RouteTable, Router};
use crate::traffic::arrivals::{ArrivalKind, Process};
use crate::traffic::Transport;
use crate::units::{Bytes, Dur};
use crate::ConfigError;
use std::sync::Arc;

/// The network and connections a scenario describes.
#[derive(Debug)]
pub struct Built {
    /// Nodes and links.
    pub net: Network,
    /// Connections in flow order.
    pub conns: Vec<ConnSpec>,
    /// Flow groups whose connections are opened while the run goes on.
    pub arrivals: Vec<ArrivalSpec>,
    /// The routes the connections use.
    pub routes: RouteTable,
    /// Link changes, in time order (file order at equal times).
    pub changes: Vec<LinkChange>,
}

impl Scenario {
    /// Check everything the schema cannot and build the network and connections.
    pub fn build(&self) -> Result<Built, ConfigError> {
        if self.simulation.duration.0 == 0 {
            return Err(ConfigError::new("simulation.duration", "must be greater than 0s"));
        }
        if self.simulation.warmup.0 >= self.simulation.duration.0 {
            return Err(ConfigError::new(
                "simulation.warmup",
                format!(
                    "must be less than simulation.duration ({}), got {}",
                    self.simulation.duration, self.simulation.warmup
                ),
            ));
        }
        if self.flows.is_empty() {
            return Err(ConfigError::new("flows", "at least one [[flows]] group is required"));
        }
        // Endpoint wake-ups carry the endpoint's index in 26 bits.
        let most = u64::from(crate::engine::WakeTag::MAX_SLOTS / 2 - 1);
        let listed: u64 = self.flows.iter().filter(|f| f.arrivals.is_none()).map(|f| u64::from(f.count)).sum();
        if listed > most {
            return Err(ConfigError::new("flows", format!("{listed} flows in all; at most {most} are supported")));
        }
        self.topology.check_fields()?;
        let topo = &self.topology;
        let kind = topo.kind.as_str();
        let mut net = Network::default();
        let mut graph_nodes = Vec::new();
        let mut routers = Vec::new();
        let mut access = None;
        // check_fields guarantees the options each kind needs are present.
        match topo.kind {
            TopologyKind::Dumbbell => {
                let (bottleneck, acc) =
                    (topo.bottleneck.as_ref().expect("checked"), topo.access.as_ref().expect("checked"));
                link_dirs(acc, "topology.access")?;
                let r0 = net.add_node("r0");
                let r1 = net.add_node("r1");
                add_link_cfg(&mut net, &self.simulation, "r0-r1".into(), (r0, r1), bottleneck, "topology.bottleneck")?;
                routers = vec![r0, r1];
                access = Some(acc);
            }
            TopologyKind::ParkingLot => {
                let (n, link, acc) = (
                    topo.routers.as_ref().expect("checked"),
                    topo.link.as_ref().expect("checked"),
                    topo.access.as_ref().expect("checked"),
                );
                if *n < 2 {
                    return Err(ConfigError::new("topology.routers", format!("must be at least 2, got {n}")));
                }
                link_dirs(link, "topology.link")?;
                link_dirs(acc, "topology.access")?;
                for i in 0..*n {
                    routers.push(net.add_node(format!("r{i}")));
                }
                for i in 1..*n as usize {
                    let ends = (routers[i - 1], routers[i]);
                    add_link_cfg(
                        &mut net,
                        &self.simulation,
                        format!("r{}-r{}", i - 1, i),
                        ends,
                        link,
                        "topology.link",
                    )?;
                }
                access = Some(acc);
            }
            TopologyKind::Graph => {
                let (nodes, links) = (topo.nodes.as_ref().expect("checked"), topo.links.as_ref().expect("checked"));
                if nodes.is_empty() {
                    return Err(ConfigError::new("topology.nodes", "at least one node is required"));
                }
                for (i, n) in nodes.iter().enumerate() {
                    if let Some(problem) = node_name_problem(n) {
                        return Err(ConfigError::new(format!("topology.nodes[{i}]"), problem));
                    }
                    if net.node(n).is_some() {
                        return Err(ConfigError::new(
                            format!("topology.nodes[{i}]"),
                            format!("duplicate node name \"{n}\""),
                        ));
                    }
                    graph_nodes.push(net.add_node(n.clone()));
                }
                for (i, l) in links.iter().enumerate() {
                    let path = format!("topology.links[{i}]");
                    let lookup = |field: &str, name: &str| {
                        net.node(name).ok_or_else(|| {
                            ConfigError::new(
                                format!("{path}.{field}"),
                                format!("unknown node \"{name}\"; nodes are {}", nodes.join(", ")),
                            )
                        })
                    };
                    let a = lookup("from", &l.from)?;
                    let b = lookup("to", &l.to)?;
                    if a == b {
                        return Err(ConfigError::new(format!("{path}.to"), "a link must join two different nodes"));
                    }
                    let cfg = LinkCfg {
                        rate: l.rate,
                        delay: l.delay,
                        queue: l.queue.clone(),
                        loss: l.loss.clone(),
                        loss_position: l.loss_position,
                        reverse: l.reverse.clone(),
                        cells: l.cells,
                    };
                    if let Some(problem) = l.name.as_deref().and_then(name_problem) {
                        return Err(ConfigError::new(format!("{path}.name"), problem));
                    }
                    let name = l.name.clone().unwrap_or_else(|| format!("{}-{}", l.from, l.to));
                    add_link_cfg(&mut net, &self.simulation, name, (a, b), &cfg, &path)?;
                }
                for (i, lan) in topo.lans.iter().flatten().enumerate() {
                    if let Some(problem) = name_problem(&lan.name) {
                        return Err(ConfigError::new(format!("topology.lans[{i}].name"), problem));
                    }
                    add_lan_cfg(&mut net, &self.simulation, lan, &format!("topology.lans[{i}]"), nodes)?;
                }
            }
        }

        let mut conns = Vec::new();
        let mut arrivals = Vec::new();
        let mut routes = RouteTable::new();
        let mut router = Router::new();
        for (g, group) in self.flows.iter().enumerate() {
            let path = format!("flows[{g}]");
            let only = |field: &str, present: bool, kinds: &str| {
                if present {
                    Err(ConfigError::new(
                        format!("{path}.{field}"),
                        format!("only allowed with topology kind {kinds}, this is \"{kind}\""),
                    ))
                } else {
                    Ok(())
                }
            };
            let is_graph = kind == "graph";
            only("direction", group.direction.is_some() && kind != "dumbbell", "\"dumbbell\"")?;
            only("rtt", group.rtt.is_some() && kind != "dumbbell", "\"dumbbell\"")?;
            only("from", group.from.is_some() && kind != "parking_lot", "\"parking_lot\"")?;
            only("to", group.to.is_some() && kind != "parking_lot", "\"parking_lot\"")?;
            only("src", group.src.is_some() && !is_graph, "\"graph\"")?;
            only("dst", group.dst.is_some() && !is_graph, "\"graph\"")?;
            only("src_access", group.src_access.is_some() && is_graph, "\"dumbbell\" or \"parking_lot\"")?;
            only("dst_access", group.dst_access.is_some() && is_graph, "\"dumbbell\" or \"parking_lot\"")?;
            if group.count == 0 {
                return Err(ConfigError::new(format!("{path}.count"), "must be at least 1"));
            }
            if let Some(problem) = name_problem(&group.name) {
                return Err(ConfigError::new(format!("{path}.name"), problem));
            }
            if group.size == Some(Bytes(0)) {
                return Err(ConfigError::new(format!("{path}.size"), "must be at least 1B (omit it for bulk data)"));
            }
            let tcp = group.tcp.resolve(&format!("{path}.tcp"))?;
            let aggregate = resolve_aggregate(group, &path, tcp.mss)?;
            let ensemble = match &group.tcp.ensemble {
                Some(e) => {
                    Some(e.resolve(&format!("{path}.tcp.ensemble"), &group.tcp.cc, group.tcp.initial_ssthresh)?)
                }
                None => None,
            };
            if group.tfrc.is_some() && group.transport != Transport::Tfrc {
                return Err(ConfigError::new(format!("{path}.tfrc"), "only allowed with transport = \"tfrc\""));
            }
            let tfrc = match group.transport {
                Transport::Tfrc => {
                    let default_tcp = serde_json::to_value(TcpCfg::default()).expect("serializes");
                    if serde_json::to_value(group.tcp).expect("serializes") != default_tcp {
                        return Err(ConfigError::new(
                            format!("{path}.tcp"),
                            "not used with transport = \"tfrc\"; its options are in `tfrc`",
                        ));
                    }
                    let cfg = group.tfrc.clone().unwrap_or_default();
                    Some(Arc::new(cfg.resolve(&format!("{path}.tfrc"))?))
                }
                _ => None,
            };
            let source = match (group.transport, &group.source) {
                (Transport::Tcp | Transport::Tfrc, None) => None,
                (Transport::Tcp | Transport::Tfrc, Some(_)) => {
                    return Err(ConfigError::new(format!("{path}.source"), "only allowed with transport = \"udp\""));
                }
                (Transport::Udp, None) => {
                    return Err(ConfigError::new(format!("{path}.source"), "is required with transport = \"udp\""));
                }
                (Transport::Udp, Some(src)) => {
                    let udp_only = |field: &str, present: bool| {
                        if present {
                            Err(ConfigError::new(format!("{path}.{field}"), "not used with transport = \"udp\""))
                        } else {
                            Ok(())
                        }
                    };
                    udp_only("size", group.size.is_some())?;
                    udp_only("drop_segments", !group.drop_segments.is_empty())?;
                    let default_tcp = serde_json::to_value(TcpCfg::default()).expect("serializes");
                    udp_only("tcp", serde_json::to_value(group.tcp).expect("serializes") != default_tcp)?;
                    Some(src.resolve(&format!("{path}.source"))?)
                }
            };
            let is_population = group.arrivals.as_ref().is_some_and(|a| a.process == ArrivalKind::Population);
            if is_population && !is_graph {
                return Err(ConfigError::new(
                    format!("{path}.arrivals.process"),
                    format!("\"population\" needs topology kind \"graph\", this is \"{kind}\""),
                ));
            }
            // Endpoints of the group's flows are the same routers or nodes for every flow.
            let (ingress, egress) = match topo.kind {
                TopologyKind::Dumbbell => match group.direction.unwrap_or_default() {
                    Direction::Forward => (routers[0], routers[1]),
                    Direction::Reverse => (routers[1], routers[0]),
                },
                TopologyKind::ParkingLot => {
                    let n = topo.routers.as_ref().expect("checked");
                    let from = group.from.unwrap_or(0);
                    let to = group.to.unwrap_or(n - 1);
                    for (field, v) in [("from", from), ("to", to)] {
                        if v >= *n {
                            return Err(ConfigError::new(
                                format!("{path}.{field}"),
                                format!("router {v} does not exist; routers are 0..{}", n - 1),
                            ));
                        }
                    }
                    if from == to {
                        return Err(ConfigError::new(format!("{path}.to"), "must differ from `from`"));
                    }
                    (routers[from as usize], routers[to as usize])
                }
                TopologyKind::Graph if is_population => {
                    // Its transfers run between the nodes of its population.
                    for (field, given) in [("src", group.src.is_some()), ("dst", group.dst.is_some())] {
                        if given {
                            return Err(ConfigError::new(
                                format!("{path}.{field}"),
                                "not used with process = \"population\": its transfers run between the nodes \
                                 of arrivals.population",
                            ));
                        }
                    }
                    (0, 0)
                }
                TopologyKind::Graph => {
                    let nodes = topo.nodes.as_ref().expect("checked");
                    let find = |field: &str, v: &Option<String>| -> Result<NodeId, ConfigError> {
                        let name = v.as_deref().ok_or_else(|| {
                            ConfigError::new(format!("{path}.{field}"), "is required with topology kind \"graph\"")
                        })?;
                        net.node(name).ok_or_else(|| {
                            ConfigError::new(
                                format!("{path}.{field}"),
                                format!("unknown node \"{name}\"; nodes are {}", nodes.join(", ")),
                            )
                        })
                    };
                    let s = find("src", &group.src)?;
                    let d = find("dst", &group.dst)?;
                    if s == d {
                        return Err(ConfigError::new(format!("{path}.dst"), "must differ from `src`"));
                    }
                    (s, d)
                }
            };
            if let Some(stop) = group.stop {
                if stop <= group.start {
                    return Err(ConfigError::new(
                        format!("{path}.stop"),
                        format!("{stop} is not after start = {}", group.start),
                    ));
                }
            }
            if let Some(arr) = &group.arrivals {
                let not_with = |field: &str, present: bool, hint: &str| {
                    if present {
                        Err(ConfigError::new(format!("{path}.{field}"), format!("not used with arrivals; {hint}")))
                    } else {
                        Ok(())
                    }
                };
                not_with("count", group.count != 1, "a closed loop's users are arrivals.users")?;
                not_with("start_spacing", group.start_spacing.0 > 0, "the arrival process spaces the connections")?;
                not_with("start_jitter", group.start_jitter.0 > 0, "the arrival process spaces the connections")?;
                not_with("size", group.size.is_some(), "give arrivals.size")?;
                not_with("aggregate", group.aggregate.is_some(), "members join flows that start at given times")?;
                not_with("abr", group.abr.is_some(), "an ABR source's link carries one circuit, a flow's")?;
                not_with(
                    "drop_segments",
                    !group.drop_segments.is_empty(),
                    "they apply to flows that start at given times",
                )?;
                if group.transport != Transport::Tcp {
                    return Err(ConfigError::new(
                        format!("{path}.arrivals"),
                        format!(
                            "opens TCP transfers; it is not available with transport = \"{}\"",
                            group.transport.as_str()
                        ),
                    ));
                }
                // The transfers table and the random streams tell arrival groups apart by name.
                if let Some(h) = self.flows[..g].iter().position(|f| f.arrivals.is_some() && f.name == group.name) {
                    return Err(ConfigError::new(
                        format!("{path}.name"),
                        format!(
                            "\"{}\" is also the name of flows[{h}]; groups with arrivals need distinct names",
                            group.name
                        ),
                    ));
                }
                let (process, limit) = arr.resolve(&format!("{path}.arrivals"), self.base_dir.as_deref())?;
                if matches!(process, Process::Http(_)) {
                    // The HTTP client opens its connections itself (SYN, SYN-ACK, request).
                    for (field, set) in [("handshake", tcp.handshake), ("syn_segment", tcp.syn_segment)] {
                        if set {
                            return Err(ConfigError::new(
                                format!("{path}.tcp.{field}"),
                                "must be false with process = \"http\": the client opens each connection \
                                 with its own handshake (SYN, SYN-ACK, request)",
                            ));
                        }
                    }
                }
                // One pair of hosts for all the group's connections.
                let (src, dst) = match access {
                    Some(acc) => {
                        let label = |side: &str| format!("{side}{g}-{}", group.name);
                        self.add_hosts(&mut net, acc, group, &path, (ingress, egress), (label("s"), label("d")))?
                    }
                    None => (ingress, egress),
                };
                let mut route = |a: NodeId, b: NodeId| route_between(&mut routes, &mut router, &net, &path, a, b);
                let placed = match &process {
                    Process::Population { hosts, .. } => {
                        let field = format!("{path}.arrivals.population");
                        let mut nodes = Vec::with_capacity(hosts.names.len());
                        for name in &hosts.names {
                            nodes.push(net.node(name).ok_or_else(|| {
                                ConfigError::new(&field, format!("unknown node \"{name}\" holds hosts"))
                            })?);
                        }
                        Some(Arc::new(Placed::new(nodes, &mut route)?))
                    }
                    _ => None,
                };
                let (src, dst, group_routes) = match &placed {
                    Some(p) => (p.nodes[0], p.nodes[1], p.pairs[0]),
                    None => (src, dst, [route(src, dst)?, route(dst, src)?]),
                };
                arrivals.push(ArrivalSpec {
                    name: group.name.clone(),
                    group: g as u32,
                    src,
                    dst,
                    routes: group_routes,
                    placed,
                    tcp,
                    cc: group.tcp.cc,
                    ensemble,
                    process,
                    start: group.start.0,
                    stop: group.stop.map(|d| d.0),
                    limit,
                    key: format!("flow/{}", group.name),
                });
                continue;
            }
            let mut drop_segments = group.drop_segments.clone();
            drop_segments.sort_unstable();
            drop_segments.dedup();
            let same_name = self.flows[..g].iter().filter(|f| f.name == group.name).map(|f| f.count).sum::<u32>();
            for k in 0..group.count {
                let index = conns.len();
                let (src, dst) = match access {
                    Some(acc) => self.add_hosts(
                        &mut net,
                        acc,
                        group,
                        &path,
                        (ingress, egress),
                        (format!("s{index}"), format!("d{index}")),
                    )?,
                    None => (ingress, egress),
                };
                let mut route = |a: NodeId, b: NodeId| route_between(&mut routes, &mut router, &net, &path, a, b);
                let (data_route, ack_route) = (route(src, dst)?, route(dst, src)?);
                let key = format!("flow/{}/{}", group.name, same_name + k);
                let jitter = match group.start_jitter.0 {
                    0 => 0,
                    max => uniform_delay(&mut stream(self.simulation.seed, &format!("{key}/start_jitter")), max),
                };
                // In u128: start + k·spacing may pass even u64's range, which must not wrap.
                let start =
                    u128::from(group.start.0) + u128::from(group.start_spacing.0) * u128::from(k) + u128::from(jitter);
                if start > u128::from(crate::units::MAX_TIME) {
                    return Err(ConfigError::new(
                        format!("{path}.start_spacing"),
                        format!(
                            "flow {k} of the group would start at {:.4e} s, after the largest time allowed ({})",
                            start as f64 / 1e9,
                            crate::units::Dur::MAX
                        ),
                    ));
                }
                let start = start as u64;
                conns.push(ConnSpec {
                    name: group.name.clone(),
                    group: g as u32,
                    src,
                    dst,
                    routes: [data_route, ack_route],
                    start,
                    stop: group.stop.map(|d| d.0),
                    size: group.size.map(|b| b.0),
                    tcp,
                    cc: group.tcp.cc,
                    drop_segments: drop_segments.clone(),
                    ensemble,
                    aggregate: aggregate.clone(),
                    source: source.clone(),
                    tfrc: tfrc.clone(),
                    key,
                    abr: None,
                });
            }
        }
        multfrc_total_n(&conns, self.simulation.multfrc_max_total_n)?;
        self.install_abr(&mut net, &routes, &mut conns, &arrivals)?;
        let groups: Vec<&str> = conns.iter().map(|c| c.name.as_str()).collect();
        // Per scheduled direction, which routes cross it (one pass over the routes).
        let mut crossing: Vec<Option<Vec<bool>>> =
            net.links.iter().map(|l| l.is_scheduled().then(|| vec![false; routes.len()])).collect();
        for r in 0..routes.len() as u32 {
            for &l in routes.links(r) {
                if let Some(on) = &mut crossing[l as usize] {
                    on[r as usize] = true;
                }
            }
        }
        for (l, on) in net.links.iter_mut().zip(&crossing) {
            if let (Some(s), Some(on)) = (l.scheduled_mut(), on) {
                // Link changes may reroute any flow onto this direction: give every flow its
                // queue from the start.
                let crosses = |routes: &[u32; 2]| !self.changes.is_empty() || routes.iter().any(|&r| on[r as usize]);
                let here: Vec<bool> = conns.iter().map(|c| crosses(&c.routes)).collect();
                let arrival: Vec<(u32, &str, bool)> =
                    arrivals.iter().map(|a| (a.group, a.name.as_str(), a.routes_used().iter().any(&crosses))).collect();
                s.sched.bind_flows(&groups, &here, &arrival)?;
            }
        }
        if let Some(trace) = &self.trace {
            trace.resolve(&net, conns.len(), self.bottleneck_link(), self.simulation.duration.0)?;
            let groups: Vec<(&str, bool)> =
                self.flows.iter().map(|g| (g.name.as_str(), g.arrivals.is_some())).collect();
            trace.concurrency_groups(&groups)?;
        }
        let changes = self.resolve_changes(&net)?;
        Ok(Built { net, conns, arrivals, routes, changes })
    }

    /// Make the link where each ABR flow's data cells enter the cell network the flow's ABR
    /// source (ADR 0013): a transmitter that spaces the cells at the allowed cell rate.
    fn install_abr(
        &self,
        net: &mut Network,
        routes: &RouteTable,
        conns: &mut [ConnSpec],
        arrivals: &[ArrivalSpec],
    ) -> Result<(), ConfigError> {
        if self.flows.iter().all(|g| g.abr.is_none()) {
            return Ok(());
        }
        let mut users = vec![0u32; net.links.len()];
        for r in conns.iter().map(|c| c.routes).chain(arrivals.iter().flat_map(|a| a.routes_used().iter().copied())) {
            for &l in r.iter().flat_map(|&r| routes.links(r)) {
                users[l as usize] += 1;
            }
        }
        for c in conns.iter_mut() {
            let Some(cfg) = &self.flows[c.group as usize].abr else { continue };
            let path = format!("flows[{}].abr", c.group);
            let Some(&entry) = routes.links(c.routes[0]).iter().find(|&&l| net.links[l as usize].cells) else {
                return Err(ConfigError::new(path, "the flow's data route crosses no cell link (cells = true)"));
            };
            let l = &net.links[entry as usize];
            let name = format!("{} -> {}", net.nodes[l.from as usize], net.to_name(entry));
            if users[entry as usize] > 1 {
                return Err(ConfigError::new(
                    path,
                    format!("its cells enter the cell network on {name}, which other routes cross too; an ABR source's link carries one circuit"),
                ));
            }
            if !matches!(l.aqm(), Some(Aqm::DropTail)) || l.lan.is_some() {
                return Err(ConfigError::new(
                    path,
                    format!("its cells enter the cell network on {name}, whose queue is not \"droptail\"; the source's interface there spaces its cells"),
                ));
            }
            let params = cfg.resolve(&path, l.params.rate)?;
            let limit = l.params.limit;
            let link = &mut net.links[entry as usize];
            link.set_scheduler(Scheduler::new(Discipline::Priority, vec![SubQueue::new(None, SubAqm::None)], limit));
            link.scheduled_mut().expect("scheduled").abr = Some(Box::new(Abr::new(params)));
            c.abr = Some(entry);
        }
        Ok(())
    }

    /// Set the access delays of a dumbbell flow group with `rtt`: the four one-way access
    /// delays (sender side forward and reverse, receiver side forward and reverse) share what
    /// the bottleneck's two directions leave of the RTT, to the nanosecond.
    fn derive_access_delays(
        &self,
        rtt: Dur,
        group: &FlowGroup,
        path: &str,
        access: [&mut LinkCfg; 2],
    ) -> Result<(), ConfigError> {
        for (side, o) in [("src_access", &group.src_access), ("dst_access", &group.dst_access)] {
            let Some(o) = o else { continue };
            let reverse = o.reverse.as_ref().and_then(|r| r.delay).is_some();
            if o.delay.is_some() || reverse {
                let field = if o.delay.is_some() { "delay" } else { "reverse.delay" };
                return Err(ConfigError::new(
                    format!("{path}.{side}.{field}"),
                    "cannot be given with the group's rtt, which sets the access delays; give one of them",
                ));
            }
        }
        let bn = self.topology.bottleneck.as_ref().expect("a dumbbell has a bottleneck");
        let bn_fwd = bn.delay;
        let bn_rev = bn.reverse.as_ref().and_then(|r| r.delay).unwrap_or(bn.delay);
        let own = bn_fwd.0 + bn_rev.0;
        if rtt.0 < own {
            return Err(ConfigError::new(
                format!("{path}.rtt"),
                format!(
                    "{rtt} is less than the bottleneck's own two-way propagation delay ({}); the RTT must be at least that",
                    Dur(own)
                ),
            ));
        }
        let rest = rtt.0 - own;
        let (q, r) = (rest / 4, rest % 4);
        let share = |k: u64| Dur(q + u64::from(k < r));
        for (i, cfg) in access.into_iter().enumerate() {
            let i = 2 * i as u64;
            cfg.delay = share(i);
            let mut rev = cfg.reverse.clone().unwrap_or_default();
            rev.delay = Some(share(i + 1));
            cfg.reverse = Some(rev);
        }
        Ok(())
    }

    /// Add a source host and a destination host called `names`, joined to routers `ends` by
    /// access links (`acc` with the group's overrides); returns the hosts.
    fn add_hosts(
        &self,
        net: &mut Network,
        acc: &LinkCfg,
        group: &FlowGroup,
        path: &str,
        (ingress, egress): (NodeId, NodeId),
        (s_name, d_name): (String, String),
    ) -> Result<(NodeId, NodeId), ConfigError> {
        let none = LinkOverride::default();
        let mut s_cfg = group.src_access.as_ref().unwrap_or(&none).apply(acc);
        let mut d_cfg = group.dst_access.as_ref().unwrap_or(&none).apply(acc);
        if let Some(rtt) = group.rtt {
            self.derive_access_delays(rtt, group, path, [&mut s_cfg, &mut d_cfg])?;
        }
        // Forward is the direction of the flow's data: host to router, router to host.
        let s_link = format!("{s_name}-{}", net.nodes[ingress as usize]);
        let d_link = format!("{}-{d_name}", net.nodes[egress as usize]);
        let s = net.add_node(s_name);
        let d = net.add_node(d_name);
        add_link_cfg(net, &self.simulation, s_link, (s, ingress), &s_cfg, &format!("{path}.src_access"))?;
        add_link_cfg(net, &self.simulation, d_link, (egress, d), &d_cfg, &format!("{path}.dst_access"))?;
        Ok((s, d))
    }
}

/// The route from `a` to `b`, shared with earlier connections between the same nodes; an error
/// naming flow group `path` if there is none.
fn route_between(
    routes: &mut RouteTable,
    router: &mut Router,
    net: &Network,
    path: &str,
    a: NodeId,
    b: NodeId,
) -> Result<RouteId, ConfigError> {
    routes.get_or_add(router, net, a, b).ok_or_else(|| {
        ConfigError::new(
            path.to_string(),
            format!("no route from \"{}\" to \"{}\"", net.nodes[a as usize], net.nodes[b as usize]),
        )
    })
}

/// The longest flow group or node name, characters (names go into tables, legends and file
/// names).
pub const MAX_NAME_CHARS: usize = 64;

/// Why `name` cannot name a flow group, link or LAN, if it cannot.
fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        Some("cannot be empty".into())
    } else if name.chars().count() > MAX_NAME_CHARS || name.chars().any(char::is_control) {
        Some(format!("must be at most {MAX_NAME_CHARS} characters, none of them control characters"))
    } else {
        None
    }
}

/// Why `name` cannot name a node, if it cannot. Node names become file names (a pcap capture is
/// `<from>-<to>.pcap` in the output directory), so they are kept to letters, digits, `_`, `-` and
/// `.`, not starting with `.`: no path separator, no `..`, nothing a shell or file system reads
/// specially.
fn node_name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("a node name cannot be empty".into());
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    if name.len() > MAX_NAME_CHARS || !name.chars().all(allowed) || name.starts_with('.') {
        return Some(format!(
            "node name \"{}\" is not allowed: at most {MAX_NAME_CHARS} of the characters A-Z, a-z, 0-9, `_`, `-` and `.`, not starting with `.`",
            name.chars().take(MAX_NAME_CHARS).collect::<String>()
        ));
    }
    None
}

/// draft-welzl-multfrc-01 §4: the sum of `n` over all MulTFRC connections is capped
/// system-wide (`simulation.multfrc_max_total_n`, default 6), since several connections
/// multiply the aggression one connection's `max_n` bounds.
fn multfrc_total_n(conns: &[ConnSpec], cap: Option<f64>) -> Result<(), ConfigError> {
    let cap = cap.unwrap_or(crate::tfrc::config::DRAFT_MAX_N);
    if !(cap > 0.0 && cap <= 1e6) {
        return Err(ConfigError::new(
            "simulation.multfrc_max_total_n",
            format!("expected a number above 0 and at most 1e6, got {cap}"),
        ));
    }
    // (group name, connections, n) in group order.
    let mut groups: Vec<(&str, u32, f64)> = Vec::new();
    for c in conns {
        if let Some(crate::tfrc::Equation::MulTfrc { n, .. }) = c.tfrc.as_ref().map(|t| t.equation) {
            match groups.last_mut() {
                Some(g) if g.0 == c.name => g.1 += 1,
                _ => groups.push((c.name.as_str(), 1, n)),
            }
        }
    }
    let total: f64 = groups.iter().map(|g| f64::from(g.1) * g.2).sum();
    if total > cap * (1.0 + 1e-12) {
        let parts: Vec<String> = groups.iter().map(|(name, k, n)| format!("{name} {k} × n = {n}")).collect();
        return Err(ConfigError::new(
            "simulation.multfrc_max_total_n",
            format!(
                "the MulTFRC connections' n add up to {total} ({}), above {cap} (draft-welzl-multfrc-01 §4; raise multfrc_max_total_n to allow it)",
                parts.join(", ")
            ),
        ));
    }
    Ok(())
}

/// The members joining a flow's aggregate (`flows[g].aggregate`), checked: only on a bulk TCP
/// flow whose `tcp.cc` is an aggregate controller, each joining at or after the flow's start
/// with at least one byte.
fn resolve_aggregate(group: &FlowGroup, path: &str, mss: u32) -> Result<Vec<Join>, ConfigError> {
    let Some(agg) = &group.aggregate else { return Ok(Vec::new()) };
    let field = format!("{path}.aggregate");
    let cc = group.tcp.cc;
    if !cc.is_aggregate() || group.transport != Transport::Tcp {
        return Err(ConfigError::new(
            field,
            format!("only allowed with tcp.cc algo \"pamultcp\" or \"mpat\", got \"{}\"", cc.as_str()),
        ));
    }
    if group.size.is_some() {
        return Err(ConfigError::new(
            field,
            "the initial members are long-lived: remove `size` (the flow must be bulk data)",
        ));
    }
    if let Some(max) = cc.max_members() {
        if let CcConfig::Mpat(p) = cc {
            if p.n as usize + agg.joins.len() > max {
                return Err(ConfigError::new(
                    format!("{field}.joins"),
                    format!(
                        "at most {} members may join an mpat connection with n = {}, got {}",
                        max - p.n as usize,
                        p.n,
                        agg.joins.len()
                    ),
                ));
            }
        }
    }
    let mut joins = Vec::with_capacity(agg.joins.len());
    for (k, j) in agg.joins.iter().enumerate() {
        if j.size.0 == 0 {
            return Err(ConfigError::new(format!("{field}.joins[{k}].size"), "must be at least 1B"));
        }
        if j.at < group.start {
            return Err(ConfigError::new(
                format!("{field}.joins[{k}].at"),
                format!("{} is before the flow's start = {}", j.at, group.start),
            ));
        }
        joins.push(Join { at: j.at.0, bytes: j.size.0, segments: j.size.0.div_ceil(u64::from(mss)) });
    }
    Ok(joins)
}
