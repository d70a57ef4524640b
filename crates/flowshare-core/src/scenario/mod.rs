//! Scenario documents: parsing, validation and building.
//!
//! A scenario is data (TOML or JSON). Parsing rejects unknown keys and ill-formed values with
//! the path of the field; [`Scenario::build`] then checks what a schema cannot (references
//! between nodes, reachable destinations, consistent bounds) and produces the network and the
//! connection list. After that, types are trusted.
//!
//! One file per part of the document: `topology` (links and LANs), `queues`, `flows`, `tcp`
//! and `changes` hold what a scenario says and how each part is checked; `build` puts the
//! checked parts together.

mod abr;
mod build;
mod changes;
mod ensemble;
mod flows;
mod queues;
mod tcp;
mod topology;

pub use abr::AbrCfg;
pub use build::Built;
pub use changes::{ChangeCfg, ChangeDirection, LinkChange};
pub use ensemble::{Ensemble, EnsembleCfg, EnsembleController, EnsembleKey, EnsembleParams};
pub use flows::{AggregateCfg, ArrivalSpec, ConnSpec, Direction, FlowGroup, JoinCfg, Placed};
pub use queues::{AutoF64, ClassCfg, LimitCfg, MarkAt, OverflowCfg, QueueCfg, QueueKind, RedMode, SubAqmKind};
pub use tcp::{ForceTimeout, TcpCfg};
pub use topology::{GraphLink, LanCfg, LinkCfg, LinkOverride, ReverseCfg, Topology, TopologyKind};

use crate::units::Dur;
use crate::ConfigError;
use serde::{Deserialize, Serialize};

/// A whole scenario.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Run-wide settings.
    pub simulation: SimulationCfg,
    /// The network.
    pub topology: Topology,
    /// Flow groups.
    pub flows: Vec<FlowGroup>,
    /// Packet event trace and pcap captures (`docs/traces.md`); absent = none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::trace::TraceCfg>,
    /// Link rate, delay and up/down changes at given times (`docs/links.md`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<ChangeCfg>,
    /// Directory that relative file names in the scenario (trace files) are read from: the
    /// scenario file's own directory when it was read from a file, else the working directory.
    #[serde(skip)]
    pub base_dir: Option<std::path::PathBuf>,
}

impl Scenario {
    /// Normalized JSON: every default filled in.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a scenario always serializes")
    }

    /// The full-duplex link the trace selector `"bottleneck"` names (a dumbbell's r0-r1).
    pub fn bottleneck_link(&self) -> Option<usize> {
        (self.topology.kind == TopologyKind::Dumbbell).then_some(0)
    }
}

/// Run-wide settings.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimulationCfg {
    /// Simulated time to run.
    pub duration: Dur,
    /// Master seed of every random stream.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Period of the time series; zero turns them off.
    #[serde(default = "default_sample_interval")]
    pub sample_interval: Dur,
    /// Start of the steady state: the figures over a run (goodput, mean window, RTT and
    /// delay statistics, queue means, utilization, completion times) count from here; the
    /// time series and the event counts cover the whole run (`docs/scenarios.md`).
    #[serde(default, skip_serializing_if = "Dur::is_zero")]
    pub warmup: Dur,
    /// Largest sum of `n` over all MulTFRC connections (draft-welzl-multfrc-01 §4); unset: 6.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multfrc_max_total_n: Option<f64>,
}

fn default_seed() -> u64 {
    1
}
fn default_sample_interval() -> Dur {
    Dur::from_millis(100)
}

/// Parse a TOML document.
pub fn from_toml(text: &str) -> Result<Scenario, ConfigError> {
    let de = toml::Deserializer::parse(text).map_err(|e| toml_error(text, &e))?;
    let scenario: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        ConfigError::new(path, first_line(inner.message()))
    })?;
    let written: toml::Table = toml::from_str(text).map_err(|e| toml_error(text, &e))?;
    let written = serde_json::to_value(written).expect("a TOML table converts to JSON");
    tables_written_as_tables(&written, &scenario)?;
    Ok(fill_defaults(scenario))
}

/// Parse a JSON document.
pub fn from_json(text: &str) -> Result<Scenario, ConfigError> {
    let json_error =
        |e: &dyn std::fmt::Display| ConfigError::new("", format!("invalid JSON: {}", first_line(&e.to_string())));
    let written: serde_json::Value = serde_json::from_str(text).map_err(|e| json_error(&e))?;
    if !written.is_object() {
        return Err(ConfigError::new(
            "",
            format!(
                "expected a JSON object with simulation, topology and flows at the top level, got {}",
                json_kind(&written)
            ),
        ));
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let scenario: Scenario = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        ConfigError::new(path, first_line(&without_position(&e.into_inner())))
    })?;
    tables_written_as_tables(&written, &scenario)?;
    Ok(fill_defaults(scenario))
}

/// Fill in the option tables a scenario may leave out but the normalized form writes in full:
/// a TFRC group's `tfrc` table; a sessions group's defaults and its preset's distributions.
fn fill_defaults(mut scenario: Scenario) -> Scenario {
    for g in &mut scenario.flows {
        if g.transport == crate::traffic::Transport::Tfrc && g.tfrc.is_none() {
            g.tfrc = Some(Default::default());
        }
        if let Some(a) = &mut g.arrivals {
            a.fill_defaults();
        }
    }
    scenario
}

/// The message of a JSON error without serde_json's " at line L column C": the error names
/// the field path instead, and a scenario given as a Python mapping has no lines of its own.
fn without_position(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    let position = format!(" at line {} column {}", e.line(), e.column());
    match msg.strip_suffix(&position) {
        Some(head) if e.line() > 0 => head.to_string(),
        _ => msg,
    }
}

/// Serde also reads a struct from an array of its fields in declaration order; a scenario
/// refuses that form, because values would bind by position and unknown keys could not be
/// caught. Wherever the parsed scenario has a table, the document must have had one (or
/// nothing: a default).
fn tables_written_as_tables(written: &serde_json::Value, scenario: &Scenario) -> Result<(), ConfigError> {
    let parsed = serde_json::to_value(scenario).expect("a scenario always serializes");
    let mut path = String::new();
    if array_for_table(written, &parsed, &mut path) {
        return Err(ConfigError::new(path, "expected a table of named fields, got an array"));
    }
    Ok(())
}

/// Whether `written` has an array where `parsed` has a table; `path` is left naming the first.
fn array_for_table(written: &serde_json::Value, parsed: &serde_json::Value, path: &mut String) -> bool {
    use serde_json::Value;
    let len = path.len();
    let found = match (written, parsed) {
        (Value::Array(_), Value::Object(_)) => return true,
        (Value::Array(w), Value::Array(p)) => w.iter().zip(p).enumerate().any(|(i, (w, p))| {
            path.truncate(len);
            path.push_str(&format!("[{i}]"));
            array_for_table(w, p, path)
        }),
        (Value::Object(w), Value::Object(p)) => w.iter().any(|(key, w)| {
            p.get(key).is_some_and(|p| {
                path.truncate(len);
                if len > 0 {
                    path.push('.');
                }
                path.push_str(key);
                array_for_table(w, p, path)
            })
        }),
        _ => false,
    };
    if !found {
        path.truncate(len);
    }
    found
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

fn first_line(s: &str) -> String {
    s.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}

fn toml_error(text: &str, e: &toml::de::Error) -> ConfigError {
    let at = e.span().map(|s| {
        let line = text[..s.start.min(text.len())].matches('\n').count() + 1;
        format!(" (line {line})")
    });
    ConfigError::new("", format!("invalid TOML: {}{}", first_line(e.message()), at.unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Limit;
    use crate::units::Rate;

    const R1: &str = r#"
[simulation]
duration = "60s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "100Mbps", delay = "20ms", queue = { limit = 250 } }
access = { rate = "1Gbps", delay = "1ms", queue = { limit = 100000 } }
[[flows]]
count = 16
start_spacing = "10ms"
tcp = { initial_window = 2 }
"#;

    fn err_toml(text: &str) -> String {
        match from_toml(text).and_then(|s| s.build().map(|_| ())) {
            Ok(()) => panic!("accepted bad input"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn r1_builds_a_dumbbell_with_one_host_pair_per_flow() {
        let s = from_toml(R1).unwrap();
        let b = s.build().unwrap();
        assert_eq!(b.conns.len(), 16);
        assert_eq!(b.net.nodes.len(), 2 + 32);
        assert_eq!(b.net.links.len(), 2 * (1 + 32));
        assert_eq!(b.conns[3].start, 30_000_000);
        assert_eq!(b.routes.links(b.conns[0].routes[0]).len(), 3);
        assert_eq!(b.routes.links(b.conns[0].routes[0])[1], 0, "the bottleneck r0->r1 is link direction 0");
        assert_eq!(b.routes.links(b.conns[0].routes[1])[1], 1);
        assert_eq!(b.conns[0].tcp.header, 40);
    }

    #[test]
    fn normalized_json_round_trips() {
        let s = from_toml(R1).unwrap();
        let j = s.to_json();
        let again = from_json(&j).unwrap();
        assert_eq!(again.to_json(), j);
        assert!(j.contains("\"recovery\":\"newreno\""));
    }

    #[test]
    fn unknown_keys_and_bad_values_name_the_field() {
        let bad_variant = R1.replace("initial_window = 2", "recovery = \"newrenoo\"");
        let e = err_toml(&bad_variant);
        assert!(e.starts_with("flows[0].tcp.recovery: unknown variant `newrenoo`"), "{e}");
        assert!(e.contains("`tahoe`"), "{e}");

        let e = err_toml(&R1.replace("count = 16", "count = 16\ncolor = 3"));
        assert!(e.starts_with("flows[0].color: unknown field `color`, expected one of `name`"), "{e}");

        let e = err_toml(&R1.replace("\"20ms\"", "\"20 parsecs\""));
        assert!(e.starts_with("topology.bottleneck.delay: expected a time"), "{e}");

        let e = err_toml(&R1.replace("kind = \"dumbbell\"", "kind = \"ring\""));
        assert!(
            e.starts_with("topology.kind: unknown variant `ring`, expected one of `dumbbell`, `parking_lot`, `graph`"),
            "{e}"
        );

        let e = err_toml(&R1.replace("kind = \"dumbbell\"", "kind = \"parking_lot\""));
        assert_eq!(e, "topology.bottleneck: not a field of kind \"parking_lot\"; its fields are access, routers, link");

        let e = err_toml(&R1.replace("limit = 250", "limit = 0"));
        assert_eq!(e, "topology.bottleneck.queue.limit: must be at least 1 packet or 1 byte");

        let e = err_toml(
            &R1.replace("initial_window = 2", "initial_window = 2, misrx_detection = true, recovery = \"sack\""),
        );
        assert!(e.starts_with("flows[0].tcp.misrx_detection: is available with recovery"), "{e}");
        let e = err_toml(&R1.replace("initial_window = 2", "initial_window = 2, misrx_k = 1.5"));
        assert_eq!(e, "flows[0].tcp.misrx_k: must be between 0 and 1 (exclusive), got 1.5");
        let e = err_toml(&R1.replace("initial_window = 2", "initial_window = 2, force_timeout = { segment = 3 }"));
        assert!(e.starts_with("flows[0].tcp.force_timeout: missing field `after`"), "{e}");

        let e = err_toml(&R1.replace("count = 16", "count = 16\nsrc = \"a\""));
        assert!(e.starts_with("flows[0].src: only allowed with topology kind \"graph\""), "{e}");

        let e = err_toml("[simulation\nduration = 1");
        assert!(e.starts_with("invalid TOML:") && e.contains("(line 1)") && !e.contains('\n'), "{e}");

        let e = err_toml(&R1.replace("duration = \"60s\"", ""));
        assert!(e.contains("missing field `duration`"), "{e}");
    }

    #[test]
    fn tables_written_as_arrays_are_refused() {
        let e = err_toml(&R1.replace("[simulation]\nduration = \"60s\"", "simulation = [\"2s\", 5, \"100ms\"]"));
        assert_eq!(e, "simulation: expected a table of named fields, got an array");
        let e = err_toml(&R1.replace(
            "bottleneck = { rate = \"100Mbps\", delay = \"20ms\", queue = { limit = 250 } }",
            "bottleneck = [\"10Mbps\", \"10ms\"]",
        ));
        assert_eq!(e, "topology.bottleneck: expected a table of named fields, got an array");
        let e = err_toml(&R1.replace("count = 16", "count = 16\nsrc_access = [\"1Gbps\", \"5ms\"]"));
        assert_eq!(e, "flows[0].src_access: expected a table of named fields, got an array");
        // A JSON document must be an object; arrays of the right shape stay arrays.
        let j = from_toml(R1).unwrap().to_json();
        let e = from_json(&format!("[{j}]")).unwrap_err().to_string();
        assert_eq!(e, "expected a JSON object with simulation, topology and flows at the top level, got an array");
        assert!(from_json("{").unwrap_err().to_string().starts_with("invalid JSON: "));
        let schedule = R1.replace(
            "tcp = { initial_window = 2 }",
            "transport = \"udp\"\nsource = { kind = \"cbr\", rate = \"1Mbps\", schedule = [[\"1s\", \"2Mbps\"]] }",
        );
        from_toml(&schedule).unwrap().build().unwrap();
    }

    #[test]
    fn red_queues_parse_and_validate_every_field() {
        let red =
            |q: &str| R1.replace("queue = { limit = 250 }", &format!("queue = {{ kind = \"red\", limit = 250{q} }}"));
        let b = from_toml(&red(", min_th = 5, max_th = 15, max_p = 0.02, w_q = 0.002, mode = \"packets\""))
            .unwrap()
            .build()
            .unwrap();
        let Some(r) = b.net.links[0].red() else { panic!("not RED") };
        assert_eq!((r.params.min_th, r.params.max_th, r.params.max_p, r.params.w_q), (5.0, 15.0, 0.02, 0.002));
        assert!(!r.params.bytes && r.params.gentle && r.params.wait && r.params.adaptive.is_none());
        // Defaults: ns-2.35's (automatic w_q and thresholds, byte mode with 500-byte packets).
        let b = from_toml(&red("")).unwrap().build().unwrap();
        let Some(r) = b.net.links[0].red() else { panic!("not RED") };
        // 100 Mbps / 500 B = 25000 packets/s: min_th = 0.005 * 25000 / 2 = 62.5.
        assert_eq!((r.params.min_th, r.params.max_th, r.params.mean_pktsize), (62.5, 187.5, 500));
        assert!(r.params.bytes);
        // The normalized form keeps "auto" and round-trips.
        let s = from_toml(&red(", w_q = \"auto\", min_th = 4")).unwrap();
        let j = s.to_json();
        assert!(j.contains("\"w_q\":\"auto\"") && j.contains("\"min_th\":4.0"), "{j}");
        assert_eq!(from_json(&j).unwrap().to_json(), j);
        // DropTail scenarios serialize exactly as before.
        assert!(!from_toml(R1).unwrap().to_json().contains("min_th"));

        let path = "topology.bottleneck.queue";
        for (q, msg) in [
            (", min_th = 0", "min_th: must be a number of packets > 0 or \"auto\", got 0"),
            (", max_th = -3", "max_th: must be a number of packets > 0 or \"auto\", got -3"),
            (", min_th = 20, max_th = 10", "max_th: must be greater than min_th = 20, got 10"),
            (", max_p = 0", "max_p: must be a probability in (0, 1], got 0"),
            (", max_p = 1.5", "max_p: must be a probability in (0, 1], got 1.5"),
            (", w_q = 2", "w_q: must be in (0, 1] or \"auto\", got 2"),
            (", mean_pktsize = \"0B\"", "mean_pktsize: must be between 1B and 65535B, got 0B"),
            (", target_delay = \"0s\"", "target_delay: must be greater than 0s"),
        ] {
            assert_eq!(err_toml(&red(q)), format!("{path}.{msg}"));
        }
        let e = err_toml(&red(", w_q = \"automatic\""));
        assert_eq!(e, format!("{path}.w_q: expected a number or \"auto\", got \"automatic\""));
        let e = err_toml(&red(", mode = \"bits\""));
        assert!(e.starts_with(&format!("{path}.mode: unknown variant `bits`, expected `packets` or `bytes`")), "{e}");
        let b = from_toml(&red(", ecn = true")).unwrap().build().unwrap();
        let Some(r) = b.net.links[0].red() else { panic!("not RED") };
        assert!(r.params.ecn);
        let e = err_toml(&red(", ecn = 1"));
        assert!(e.starts_with(&format!("{path}.ecn: invalid type: integer `1`, expected a boolean")), "{e}");
        let e = err_toml(&R1.replace("queue = { limit = 250 }", "queue = { limit = 250, min_th = 5 }"));
        assert_eq!(e, format!("{path}.min_th: is a RED parameter; it needs kind = \"red\""));
        // Access links are checked under the flow group that uses them.
        let e = err_toml(&R1.replace("queue = { limit = 100000 }", "queue = { kind = \"red\", max_p = 7 }"));
        assert_eq!(e, "topology.access.queue.max_p: must be a probability in (0, 1], got 7");
    }

    #[test]
    fn loss_and_reverse_build_per_direction() {
        let text = R1
            .replace(
                "queue = { limit = 250 } }",
                "queue = { limit = 250 }, loss = { model = \"bernoulli\", p = 0.01 }, reverse = { rate = \"64Kbps\", queue = { limit = 5 }, loss = { model = \"periodic\", every = 10 } } }",
            )
            .replace("count = 16", "count = 2\ndst_access = { reverse = { delay = \"30ms\" } }");
        let s = from_toml(&text).unwrap();
        let b = s.build().unwrap();
        let (f, r) = (&b.net.links[0], &b.net.links[1]);
        assert_eq!((f.params.rate, r.params.rate), (Rate(100_000_000), Rate(64_000)));
        assert_eq!((f.params.limit, r.params.limit), (Limit::Packets(250), Limit::Packets(5)));
        assert_eq!((f.params.delay, r.params.delay), (20_000_000, 20_000_000), "reverse delay inherited");
        assert_eq!(f.loss.as_ref().map(|m| m.name()), Some("bernoulli"));
        assert_eq!(r.loss.as_ref().map(|m| m.name()), Some("periodic"));
        // dst access of flow 0: r1 -> d0 forward, d0 -> r1 reverse with its own delay.
        let d0 = b.routes.links(b.conns[0].routes[0])[2] as usize;
        assert_eq!(b.net.links[d0].params.delay, 1_000_000);
        assert_eq!(b.net.links[d0 + 1].params.delay, 30_000_000);
        assert!(b.net.links[d0].loss.is_none() && b.net.links[d0 + 1].loss.is_none());
        // The normalized document keeps the new fields and reads back the same.
        let j = s.to_json();
        assert!(j.contains("\"loss\":{\"model\":\"bernoulli\",\"p\":0.01}"), "{j}");
        assert_eq!(from_json(&j).unwrap().to_json(), j);
    }

    #[test]
    fn loss_and_reverse_errors_name_the_field() {
        let with = |bottleneck_extra: &str| {
            err_toml(
                &R1.replace("queue = { limit = 250 } }", &format!("queue = {{ limit = 250 }}, {bottleneck_extra} }}")),
            )
        };
        assert_eq!(
            with("loss = { model = \"bernoulli\", p = 2 }"),
            "topology.bottleneck.loss.p: must be a probability in [0, 1], got 2"
        );
        assert_eq!(
            with("reverse = { loss = { model = \"burst\", p = 0.1, length = 0 } }"),
            "topology.bottleneck.reverse.loss.length: must be at least 1 packet"
        );
        assert_eq!(with("reverse = { rate = 0 }"), "topology.bottleneck.reverse.rate: must be greater than 0bps");
        assert_eq!(
            with("reverse = { queue = { limit = 0 } }"),
            "topology.bottleneck.reverse.queue.limit: must be at least 1 packet or 1 byte"
        );
        let e = with("reverse = { los = 1 }");
        assert!(e.starts_with("topology.bottleneck.reverse.los: unknown field `los`"), "{e}");
        let e = with("loss = { model = \"gilbert\" }");
        assert!(
            e.starts_with("topology.bottleneck.loss.model: unknown variant `gilbert`, expected one of `bernoulli`"),
            "{e}"
        );
        let e = err_toml(&R1.replace(
            "count = 16",
            "count = 16\nsrc_access = { loss = { model = \"periodic\", every = 5, offset = 9 } }",
        ));
        assert_eq!(e, "flows[0].src_access.loss.offset: must be below every = 5, got 9");
        let g = r#"
[simulation]
duration = "1s"
[topology]
kind = "graph"
nodes = ["a", "b"]
links = [
  { from = "a", to = "b", rate = "10Mbps", delay = "1ms" },
  { from = "a", to = "b", rate = "10Mbps", delay = "1ms", loss = { model = "bernoulli", p = 0.1 } },
]
[[flows]]
src = "a"
dst = "b"
"#;
        assert!(err_toml(g).starts_with("topology.links[1].name: another link is also called \"a-b\""));
        assert!(from_toml(&g.replace("p = 0.1 }", "p = 0.1 }, name = \"lossy\"")).unwrap().build().is_ok());
    }

    #[test]
    fn graph_references_are_checked() {
        let g = r#"
[simulation]
duration = "1s"
[topology]
kind = "graph"
nodes = ["a", "b", "c"]
links = [ { from = "a", to = "b", rate = "10Mbps", delay = "1ms" } ]
[[flows]]
src = "a"
dst = "c"
"#;
        assert_eq!(err_toml(g), "flows[0]: no route from \"a\" to \"c\"");
        let g2 = g.replace("to = \"b\"", "to = \"x\"");
        assert!(err_toml(&g2).starts_with("topology.links[0].to: unknown node \"x\""));
    }
}
