//! A population group at run time ([`crate::traffic::population`]): its hosts, drawn once, and
//! the plan of each source's next transfer.
//!
//! Every host's interface and every source's algorithm is drawn when the run is built, from
//! one stream per aspect (`<key>/interfaces`, `<key>/algorithms`). Each source then has its own
//! streams of Web-object sizes, file types and receivers (`<key>/source<s>/…`; its think times
//! are its user stream), so that the k-th transfer of a source draws the same numbers in runs
//! that differ only in the algorithms: the common random numbers of Mills et al. (2010),
//! Table 8-12.

use super::whole_bytes;
use crate::cc::CcConfig;
use crate::engine::{stream, uniform, Stream};
use crate::net::RouteId;
use crate::scenario::Placed;
use crate::traffic::arrivals::Dist;
use crate::traffic::population::{group, group_key, path_class, Active, Population, GROUPS};
use std::sync::Arc;

/// A source host.
#[derive(Clone, Copy, Debug)]
struct Source {
    /// Its node, by position in the population.
    node: u32,
    fast: bool,
    alternate: bool,
}

/// A receiver host.
#[derive(Clone, Copy, Debug)]
struct Receiver {
    node: u32,
    fast: bool,
}

/// The streams of one source.
#[derive(Debug)]
struct Streams {
    sizes: Stream,
    types: Stream,
    receivers: Stream,
}

/// What a source's next transfer is.
#[derive(Clone, Copy, Debug)]
pub(in crate::sim) struct Pick {
    /// Payload bytes.
    pub(in crate::sim) size: u64,
    /// Forward and reverse routes.
    pub(in crate::sim) routes: [RouteId; 2],
    /// It uses the alternate algorithm.
    pub(in crate::sim) alternate: bool,
    /// The slower of the two interfaces, bit/s.
    pub(in crate::sim) rate_bps: f64,
    /// Its file type and flow group, `type · GROUPS + group`.
    pub(in crate::sim) label: u16,
}

/// A population group's hosts and active transfers.
#[derive(Debug)]
pub(in crate::sim) struct PopulationRun {
    hosts: Arc<Population>,
    placed: Arc<Placed>,
    sources: Vec<Source>,
    receivers: Vec<Receiver>,
    streams: Vec<Streams>,
    active: Active,
    /// Per label, the transfers table's `name`: `<group name>/<file type>/<flow group>`.
    labels: Vec<String>,
}

impl PopulationRun {
    /// Draw the hosts of group `name` (streams under `key`), whose sources use `base` unless
    /// they use the alternate algorithm.
    pub(in crate::sim) fn new(
        seed: u64,
        key: &str,
        name: &str,
        base: CcConfig,
        hosts: &Arc<Population>,
        placed: &Arc<Placed>,
    ) -> Self {
        let mut interfaces = stream(seed, &format!("{key}/interfaces"));
        let mut algorithms = stream(seed, &format!("{key}/algorithms"));
        let mut sources = Vec::with_capacity(hosts.total_sources() as usize);
        for (node, &n) in hosts.sources.iter().enumerate() {
            for _ in 0..n {
                let fast = uniform(&mut interfaces) < hosts.fast;
                let alternate = hosts.alternate.is_some_and(|(_, share)| uniform(&mut algorithms) < share);
                sources.push(Source { node: node as u32, fast, alternate });
            }
        }
        let mut receivers = Vec::new();
        for (node, &n) in hosts.receivers.iter().enumerate() {
            for _ in 0..n {
                receivers.push(Receiver { node: node as u32, fast: uniform(&mut interfaces) < hosts.fast });
            }
        }
        let streams = (0..sources.len())
            .map(|s| Streams {
                sizes: stream(seed, &format!("{key}/source{s}/sizes")),
                types: stream(seed, &format!("{key}/source{s}/types")),
                receivers: stream(seed, &format!("{key}/source{s}/receivers")),
            })
            .collect();
        // The algorithm's name in place of "base" or "alternate".
        let alt = hosts.alternate.map_or("alternate", |(cc, _)| cc.as_str());
        let labels = (0..=hosts.types.len())
            .flat_map(|t| (0..GROUPS).map(move |g| (t, g)))
            .map(|(t, g)| {
                let key = group_key(g).replace("alternate", alt).replace("base", base.as_str());
                format!("{name}/{}/{key}", hosts.type_name(t))
            })
            .collect();
        PopulationRun {
            active: Active::new(hosts.types.len()),
            hosts: Arc::clone(hosts),
            placed: Arc::clone(placed),
            sources,
            receivers,
            streams,
            labels,
        }
    }

    /// Source `s`'s next transfer, Web objects sized by `size`: a receiver under another node,
    /// its flow group, and its file type (which counts as active from now on).
    pub(in crate::sim) fn next(&mut self, s: u32, size: &Dist) -> Pick {
        let src = self.sources[s as usize];
        let st = &mut self.streams[s as usize];
        let n = self.receivers.len();
        // Validation guarantees a receiver under another node.
        let rx = loop {
            let r = self.receivers[((uniform(&mut st.receivers) * n as f64) as usize).min(n - 1)];
            if r.node != src.node {
                break r;
            }
        };
        let h = &self.hosts;
        let path = path_class(h.class[src.node as usize], h.class[rx.node as usize]);
        let g = group(path, src.fast && rx.fast, src.alternate);
        let web = size.sample(&mut st.sizes);
        let (t, multiplier) = h.file_type(g, &self.active, &mut st.types);
        self.active.open(t, g);
        Pick {
            size: whole_bytes(web * multiplier),
            routes: self.placed.routes(src.node as usize, rx.node as usize),
            alternate: src.alternate,
            rate_bps: h.rates[usize::from(src.fast)].min(h.rates[usize::from(rx.fast)]),
            label: (t * GROUPS + g) as u16,
        }
    }

    /// A transfer with `label` completed.
    pub(in crate::sim) fn completed(&mut self, label: u16) {
        let l = usize::from(label);
        self.active.close(l / GROUPS, l % GROUPS);
    }

    /// The transfers table's name of a transfer with `label`.
    pub(in crate::sim) fn label(&self, label: u16) -> &str {
        &self.labels[usize::from(label)]
    }
}
