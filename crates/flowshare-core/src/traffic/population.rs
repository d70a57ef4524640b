//! A population of hosts under access routers, as MesoNet models one (Mills et al. (2010),
//! "Comparing Congestion Control Regimes in a Heterogeneous Network", ch. 8 of NIST SP
//! 500-282, §8.1.1): each source alternates a think time and one transfer to a receiver drawn
//! at random among all receivers; each host has a basic or a fast interface; each source uses
//! the group's algorithm or an alternate one; and a transfer is a Web object unless it is
//! made a larger file type, either to keep a minimum of such transfers active in its flow
//! group or, at random, while fewer than a maximum are active.
//!
//! A flow group is the path class (very fast, fast or typical, from the access classes of the
//! two routers), whether both interfaces are fast, and the source's algorithm: twelve groups,
//! written `VF-F/base`, `T-N/alternate`, ….

use crate::cc::CcConfig;
use crate::engine::{uniform, Stream};
use crate::traffic::arrivals::{Dist, DistCfg};
use crate::units::{Dur, Rate};
use crate::ConfigError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The class of an access router (§8.1.1, Table 8-5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AccessClass {
    /// Attached directly to a backbone router.
    Direct,
    /// A fast access router.
    Fast,
    /// A normal access router.
    Normal,
}

/// The path class of a flow between access routers of two classes: both direct is very
/// fast, direct or fast at both ends fast, a normal router at either end typical.
pub fn path_class(a: AccessClass, b: AccessClass) -> usize {
    use AccessClass::{Direct, Normal};
    match (a, b) {
        (Normal, _) | (_, Normal) => 2,
        (Direct, Direct) => 0,
        _ => 1,
    }
}

const PATH_CLASSES: [&str; 3] = ["VF", "F", "T"];

/// Flow groups: 3 path classes × 2 interface classes × 2 algorithms.
pub const GROUPS: usize = 12;

/// The flow group of a transfer.
pub fn group(path: usize, both_fast: bool, alternate: bool) -> usize {
    path * 4 + usize::from(!both_fast) * 2 + usize::from(alternate)
}

/// The key of flow group `g`, as `min_active` tables and transfer labels write it.
pub fn group_key(g: usize) -> String {
    let iface = if (g / 2).is_multiple_of(2) { "F" } else { "N" };
    let alg = if g.is_multiple_of(2) { "base" } else { "alternate" };
    format!("{}-{iface}/{alg}", PATH_CLASSES[g / 4])
}

/// The hosts' interfaces as written.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterfaceCfg {
    /// A basic host's interface.
    pub rate: Rate,
    /// A fast host's interface.
    pub fast_rate: Rate,
    /// The probability that a host (source or receiver) is fast.
    pub fast: f64,
}

/// The alternate algorithm as written.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlternateCfg {
    /// Its algorithm.
    pub cc: CcConfig,
    /// The probability that a source uses it (the others use the group's `tcp.cc`).
    pub share: f64,
}

/// A file type larger than a Web object, as written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileTypeCfg {
    /// Its label in results.
    pub name: String,
    /// The probability that a transfer is drawn as this type.
    pub probability: f64,
    /// Its size is the Web-object draw times this.
    pub multiplier: f64,
    /// A drawn transfer becomes this type only while fewer than this many are active.
    pub max_active: u32,
    /// Per flow group (`"T-F/alternate"`, …), the transfers of this type kept active: a new
    /// transfer of the group is made this type while fewer are (groups not listed: none).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub min_active: BTreeMap<String, u32>,
}

/// `arrivals.population` as written.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PopulationCfg {
    /// Source hosts under each node.
    pub sources: BTreeMap<String, u32>,
    /// Receiver hosts under each node.
    pub receivers: BTreeMap<String, u32>,
    /// The access class of each node holding sources or receivers (others may be listed).
    pub classes: BTreeMap<String, AccessClass>,
    /// The hosts' interfaces.
    pub interface: InterfaceCfg,
    /// The alternate algorithm and its share of the sources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alternate: Option<AlternateCfg>,
    /// When each source first becomes active, from the group's start (default: a think time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<DistCfg<Dur>>,
    /// The larger file types, in the order their minima are served.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub file_types: Vec<FileTypeCfg>,
}

/// A resolved larger file type.
#[derive(Clone, Debug, PartialEq)]
pub struct FileType {
    /// Its label.
    pub name: String,
    /// Drawn with this probability.
    pub probability: f64,
    /// Size multiplier.
    pub multiplier: f64,
    /// Most active by random draw.
    pub max_active: u32,
    /// Minimum active per flow group.
    pub min_active: [u32; GROUPS],
}

/// A resolved population, its nodes by position in `names`.
#[derive(Clone, Debug, PartialEq)]
pub struct Population {
    /// The nodes holding sources or receivers, by name (in name order).
    pub names: Vec<String>,
    /// Per node, its access class.
    pub class: Vec<AccessClass>,
    /// Per node, its sources.
    pub sources: Vec<u32>,
    /// Per node, its receivers.
    pub receivers: Vec<u32>,
    /// Basic and fast interface rates, bit/s.
    pub rates: [f64; 2],
    /// The probability that a host is fast.
    pub fast: f64,
    /// The alternate algorithm and its share.
    pub alternate: Option<(CcConfig, f64)>,
    /// First activation (`None`: a think time).
    pub first: Option<Dist>,
    /// The larger file types.
    pub types: Vec<FileType>,
}

/// The most hosts of a population (sources and receivers each).
pub const MAX_HOSTS: u64 = 10_000_000;

fn probability(path: &str, p: f64) -> Result<f64, ConfigError> {
    if (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(ConfigError::new(path, format!("must be a probability in [0, 1], got {p}")))
    }
}

impl PopulationCfg {
    /// Check the table (`path` is its field path) and resolve it; node names are checked
    /// against the network when the scenario is built.
    pub fn resolve(&self, path: &str) -> Result<Population, ConfigError> {
        let field = |f: &str| format!("{path}.{f}");
        for (f, hosts) in [("sources", &self.sources), ("receivers", &self.receivers)] {
            let total: u64 = hosts.values().map(|&n| u64::from(n)).sum();
            if total == 0 {
                return Err(ConfigError::new(field(f), "must place at least one host"));
            }
            if total > MAX_HOSTS {
                return Err(ConfigError::new(field(f), format!("at most {MAX_HOSTS} hosts, got {total}")));
            }
        }
        let mut names: Vec<String> = self.sources.keys().chain(self.receivers.keys()).cloned().collect();
        names.sort();
        names.dedup();
        let mut class = Vec::with_capacity(names.len());
        for n in &names {
            match self.classes.get(n) {
                Some(&c) => class.push(c),
                None => {
                    return Err(ConfigError::new(
                        field("classes"),
                        format!("gives no class for node \"{n}\"; each node with hosts needs direct, fast or normal"),
                    ))
                }
            }
        }
        let count = |m: &BTreeMap<String, u32>| names.iter().map(|n| m.get(n).copied().unwrap_or(0)).collect();
        let sources: Vec<u32> = count(&self.sources);
        let receivers: Vec<u32> = count(&self.receivers);
        // Each source needs a receiver under another node.
        let total_rx: u64 = receivers.iter().map(|&r| u64::from(r)).sum();
        if let Some(i) = (0..names.len()).find(|&i| sources[i] > 0 && total_rx == u64::from(receivers[i])) {
            return Err(ConfigError::new(
                field("receivers"),
                format!("the sources under \"{}\" have no receiver under another node", names[i]),
            ));
        }
        let i = &self.interface;
        for (f, r) in [("interface.rate", i.rate), ("interface.fast_rate", i.fast_rate)] {
            if r.0 == 0 {
                return Err(ConfigError::new(field(f), "must be greater than 0"));
            }
        }
        let fast = probability(&field("interface.fast"), i.fast)?;
        let alternate = match &self.alternate {
            Some(a) => Some((a.cc, probability(&field("alternate.share"), a.share)?)),
            None => None,
        };
        let first = match &self.first {
            Some(d) => Some(d.resolve_time(&field("first"))?),
            None => None,
        };
        let mut types = Vec::with_capacity(self.file_types.len());
        let mut total_p = 0.0;
        for (k, t) in self.file_types.iter().enumerate() {
            let tf = |f: &str| field(&format!("file_types[{k}].{f}"));
            if t.name.is_empty() || t.name.contains('/') || t.name == "web" {
                return Err(ConfigError::new(tf("name"), "must be non-empty, without '/', and not \"web\""));
            }
            if self.file_types[..k].iter().any(|o| o.name == t.name) {
                return Err(ConfigError::new(tf("name"), format!("\"{}\" is used twice", t.name)));
            }
            total_p += probability(&tf("probability"), t.probability)?;
            if !(t.multiplier.is_finite() && t.multiplier >= 1.0) {
                return Err(ConfigError::new(tf("multiplier"), format!("must be at least 1, got {}", t.multiplier)));
            }
            let mut min_active = [0; GROUPS];
            for (key, &n) in &t.min_active {
                let g = (0..GROUPS).find(|&g| group_key(g) == *key).ok_or_else(|| {
                    ConfigError::new(
                        tf("min_active"),
                        format!("unknown flow group \"{key}\"; groups are {{VF,F,T}}-{{F,N}}/{{base,alternate}}"),
                    )
                })?;
                min_active[g] = n;
            }
            types.push(FileType {
                name: t.name.clone(),
                probability: t.probability,
                multiplier: t.multiplier,
                max_active: t.max_active,
                min_active,
            });
        }
        if total_p > 1.0 + 1e-12 {
            return Err(ConfigError::new(
                field("file_types"),
                format!("the probabilities add up to {total_p}, more than 1 (the rest is Web objects)"),
            ));
        }
        Ok(Population {
            names,
            class,
            sources,
            receivers,
            rates: [i.rate.0 as f64, i.fast_rate.0 as f64],
            fast,
            alternate,
            first,
            types,
        })
    }
}

/// Active transfers per file type and flow group (index `types.len()` is Web objects).
#[derive(Clone, Debug, Default)]
pub struct Active {
    per_group: Vec<[u32; GROUPS]>,
    total: Vec<u32>,
}

impl Active {
    /// Counters for `types` larger file types and Web objects.
    pub fn new(types: usize) -> Active {
        Active { per_group: vec![[0; GROUPS]; types + 1], total: vec![0; types + 1] }
    }

    /// A transfer of type `t` in group `g` opened.
    pub fn open(&mut self, t: usize, g: usize) {
        self.per_group[t][g] += 1;
        self.total[t] += 1;
    }

    /// It completed.
    pub fn close(&mut self, t: usize, g: usize) {
        self.per_group[t][g] -= 1;
        self.total[t] -= 1;
    }

    /// Transfers of type `t` active.
    pub fn total(&self, t: usize) -> u32 {
        self.total[t]
    }
}

impl Population {
    /// The file type of a new transfer of group `g` (`types.len()` for a Web object) and its
    /// size multiplier (§8.1.1.1): the first type whose minimum in the group is not met;
    /// otherwise a type drawn from `rng` with the types' probabilities, kept only while fewer
    /// than its maximum are active (a Web object otherwise). Minima are served whatever the
    /// maxima: the study's movie minima add up to more than its movie maximum.
    pub fn file_type(&self, g: usize, active: &Active, rng: &mut Stream) -> (usize, f64) {
        let web = (self.types.len(), 1.0);
        if let Some(t) = (0..self.types.len()).find(|&t| active.per_group[t][g] < self.types[t].min_active[g]) {
            return (t, self.types[t].multiplier);
        }
        let mut u = uniform(rng);
        for (t, ft) in self.types.iter().enumerate() {
            if u < ft.probability {
                return if active.total[t] < ft.max_active { (t, ft.multiplier) } else { web };
            }
            u -= ft.probability;
        }
        web
    }

    /// The label of file type `t` (`"web"` for a Web object).
    pub fn type_name(&self, t: usize) -> &str {
        self.types.get(t).map_or("web", |ft| ft.name.as_str())
    }

    /// Sources in all.
    pub fn total_sources(&self) -> u64 {
        self.sources.iter().map(|&n| u64::from(n)).sum()
    }

    /// The mean size multiplier of a transfer drawn at random (minima aside).
    pub fn mean_multiplier(&self) -> f64 {
        let p: f64 = self.types.iter().map(|t| t.probability).sum();
        (1.0 - p) + self.types.iter().map(|t| t.probability * t.multiplier).sum::<f64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    fn cfg() -> PopulationCfg {
        toml::from_str(
            r#"
            sources = { a = 3, b = 1 }
            receivers = { a = 4, c = 8 }
            classes = { a = "direct", b = "fast", c = "normal" }
            interface = { rate = "96Mbps", fast_rate = "960Mbps", fast = 0.5 }
            alternate = { cc = "bic", share = 0.7 }
            [[file_types]]
            name = "movie"
            probability = 0.25
            multiplier = 1e4
            max_active = 2
            min_active = { "VF-F/alternate" = 1 }
            "#,
        )
        .unwrap()
    }

    #[test]
    fn groups_are_keyed_by_path_interface_and_algorithm() {
        assert_eq!(group_key(group(0, true, true)), "VF-F/alternate");
        assert_eq!(group_key(group(2, false, false)), "T-N/base");
        let keys: std::collections::BTreeSet<String> = (0..GROUPS).map(group_key).collect();
        assert_eq!(keys.len(), GROUPS);
        use AccessClass::*;
        assert_eq!(path_class(Direct, Direct), 0);
        assert_eq!(path_class(Direct, Fast), 1);
        assert_eq!(path_class(Fast, Fast), 1);
        assert_eq!(path_class(Fast, Normal), 2);
        assert_eq!(path_class(Normal, Direct), 2);
    }

    #[test]
    fn resolves_nodes_in_name_order() {
        let p = cfg().resolve("p").unwrap();
        assert_eq!(p.names, ["a", "b", "c"]);
        assert_eq!(p.sources, [3, 1, 0]);
        assert_eq!(p.receivers, [4, 0, 8]);
        assert_eq!(p.rates, [96e6, 960e6]);
        assert_eq!(p.types[0].min_active[group(0, true, true)], 1);
        assert!((p.mean_multiplier() - (0.75 + 2500.0)).abs() < 1e-9);
    }

    #[test]
    fn bad_tables_name_the_field() {
        let err = |f: &dyn Fn(&mut PopulationCfg)| {
            let mut c = cfg();
            f(&mut c);
            c.resolve("p").unwrap_err().to_string()
        };
        assert!(err(&|c| {
            c.classes.remove("b");
        })
        .contains("p.classes"));
        assert!(err(&|c| c.interface.fast = 1.5).contains("p.interface.fast"));
        assert!(err(&|c| c.file_types[0].probability = 2.0).contains("p.file_types[0].probability"));
        assert!(err(&|c| {
            c.file_types[0].min_active.insert("X-F/base".into(), 1);
        })
        .contains("unknown flow group"));
        assert!(err(&|c| {
            c.receivers = [("a".to_string(), 4)].into();
            c.classes.remove("c");
        })
        .contains("no receiver under another node"));
        assert!(err(&|c| c.sources.clear()).contains("p.sources"));
    }

    #[test]
    fn minima_come_first_and_maxima_bound_the_draws() {
        let p = cfg().resolve("p").unwrap();
        let mut active = Active::new(1);
        let mut rng = stream(1, "types");
        let vf = group(0, true, true);
        // The group's minimum is not met: a movie whatever the draw.
        assert_eq!(p.file_type(vf, &active, &mut rng), (0, 1e4));
        active.open(0, vf);
        // Met: drawn, a quarter movies.
        let t = group(2, false, false);
        let movies = (0..4000).filter(|_| p.file_type(t, &active, &mut rng).0 == 0).count();
        assert!((800..1200).contains(&movies), "{movies}");
        // At the maximum, draws give Web objects only.
        active.open(0, t);
        assert_eq!(active.total(0), 2);
        assert!((0..1000).all(|_| p.file_type(t, &active, &mut rng) == (1, 1.0)));
        active.close(0, t);
        assert_eq!(active.total(0), 1);
    }
}
