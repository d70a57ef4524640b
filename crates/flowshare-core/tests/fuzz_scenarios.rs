//! Property-based fuzz of the scenario loader and builder (docs/reliability.md, "Fuzzing").
//!
//! Every shipped scenario (`scenarios/*.toml`), and a few documents written here for the
//! features no shipped scenario uses, is mutated at random: one to four mutations, each of them
//! a key or array element deleted, a value replaced by an extreme or ill-typed one, an unknown
//! key inserted, an array element (a `[[flows]]` group, a link) duplicated, an enum word
//! misspelt or swapped for another, or a number scaled. The result is written back as TOML,
//! loaded and built. Properties:
//!
//! - nothing panics;
//! - an error is one line that names a field;
//! - a scenario that builds and is [`small_enough`] runs, shortened to at most
//!   [`RUN_CAP_NS`], and conserves packets: in every flow `packets_sent = packets_received +
//!   drops + link_losses + in_network_end`, in every queue `arrivals = departures + drops +
//!   len_end_pkts`.
//!
//! The seed is fixed. `FLOWSHARE_FUZZ_CASES` sets the number of cases; `make fuzz` runs many
//! more than `make test`.

use flowshare_core::cc::CcConfig;
use flowshare_core::net::Limit;
use flowshare_core::scenario::{self, QueueCfg, ReverseCfg};
use flowshare_core::units::Rate;
use flowshare_core::{Scenario, Simulation};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, RngAlgorithm, RngSeed, TestCaseError, TestRunner};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use toml::{Table, Value};

/// The seed of every run of this fuzz.
const SEED: u64 = 20_240_611;

/// Cases per run without `FLOWSHARE_FUZZ_CASES`: about 20 s in either profile of `make test`
/// on two cores (the `checked` profile, with debug assertions, is the slower).
#[cfg(not(debug_assertions))]
const DEFAULT_CASES: u32 = 60_000;
#[cfg(debug_assertions)]
const DEFAULT_CASES: u32 = 45_000;

/// A run is cut to at most this much simulated time.
const RUN_CAP_NS: u64 = 500_000_000;

/// A case running longer than this is reported with its document, and the process aborts.
const CASE_DEADLINE: Duration = Duration::from_secs(120);

// ---------------------------------------------------------------------------------------------
// The decision to run

/// Whether a built scenario is cheap enough to simulate in the fuzz: a few hundred thousand
/// packets and a few MB of results at most. It sees the scenario as it will run, after
/// [`shortened`]. One place, so that a resource estimate can replace these rules.
fn small_enough(s: &Scenario) -> bool {
    const MAX_RATE: u64 = 1_000_000_000;
    const MAX_FLOWS: u64 = 50;
    /// Packets per second on the fastest link, of the smallest data packet.
    const MAX_PACKET_RATE: u64 = 250_000;
    const MAX_SAMPLES: u64 = 10_000;

    let duration = s.simulation.duration.0;
    if duration > 2_000_000_000 {
        return false;
    }
    let interval = s.simulation.sample_interval.0;
    if interval != 0 && duration / interval > MAX_SAMPLES {
        return false;
    }
    let flows: u64 = s.flows.iter().map(|f| u64::from(f.count)).sum();
    if flows > MAX_FLOWS || s.flows.len() as u64 > MAX_FLOWS {
        return false;
    }

    // Every rate a link, a LAN, an override or a change can set, and every queue.
    let mut links = Links::default();
    let t = &s.topology;
    for l in [&t.bottleneck, &t.access, &t.link].into_iter().flatten() {
        links.link(l.rate, &l.queue, l.reverse.as_ref());
    }
    for l in t.links.iter().flatten() {
        links.link(l.rate, &l.queue, l.reverse.as_ref());
    }
    for lan in t.lans.iter().flatten() {
        links.link(lan.rate, &lan.queue, None);
        lan.queues.values().for_each(|q| links.queue(q));
    }
    for c in &s.changes {
        links.rates.extend(c.rate);
    }
    let mut smallest_packet = u64::MAX;
    for f in &s.flows {
        for o in [&f.src_access, &f.dst_access].into_iter().flatten() {
            links.rates.extend(o.rate);
            o.queue.iter().for_each(|q| links.queue(q));
            links.reverse(o.reverse.as_ref());
        }
        let tcp = &f.tcp;
        smallest_packet = smallest_packet.min(tcp.mss.0 + tcp.header.0);
        if tcp.initial_window > 10_000.0 || tcp.rto_initial.0 < 1_000_000 || tcp.rto_min.0 < 1_000_000 {
            return false;
        }
        // MulTCP(n) grows its window n times as fast as Reno, and sends it at once.
        if matches!(tcp.cc, CcConfig::Multcp { n, .. } if above(n, 100.0)) {
            return false;
        }
        if let Some(src) = &f.source {
            let packet = src.packet_size.0 + src.header.0;
            smallest_packet = smallest_packet.min(packet);
            let source_rates =
                src.rate.iter().chain(src.peak.iter()).chain(src.schedule.iter().flatten().map(|p| &p.rate));
            for r in source_rates {
                if r.0 > MAX_RATE || r.0 / (8 * packet.max(1)) > MAX_PACKET_RATE {
                    return false;
                }
            }
            let short_period = [src.on, src.off].into_iter().flatten().any(|d| d.0 < 1_000_000);
            if short_period || src.fps.is_some_and(|fps| above(fps, 1000.0)) {
                return false;
            }
        }
        if let Some(a) = &f.arrivals {
            let busy = a.rate.is_some_and(|r| above(r, 1000.0))
                || a.users.is_some_and(|u| u > 1000)
                || a.sources.is_some_and(|u| u > 1000)
                || a.transfers.as_ref().is_some_and(|t| t.len() > 1000)
                || a.file.is_some();
            if busy {
                return false;
            }
        }
    }
    let fastest = links.rates.iter().map(|r| r.0).max().unwrap_or(0);
    !links.tiny_quantum && fastest <= MAX_RATE && fastest / (8 * smallest_packet.max(1)) <= MAX_PACKET_RATE
}

/// `x` is above `limit`, or not a number.
fn above(x: f64, limit: f64) -> bool {
    x.is_nan() || x > limit
}

/// The rates and queues of a scenario's links, for [`small_enough`].
#[derive(Default)]
struct Links {
    rates: Vec<Rate>,
    /// A DRR or FQ-CoDel quantum below 64 bytes: it serves a packet in many rounds.
    tiny_quantum: bool,
}

impl Links {
    fn link(&mut self, rate: Rate, queue: &QueueCfg, reverse: Option<&ReverseCfg>) {
        self.rates.push(rate);
        self.queue(queue);
        self.reverse(reverse);
    }

    fn reverse(&mut self, r: Option<&ReverseCfg>) {
        if let Some(r) = r {
            self.rates.extend(r.rate);
            r.queue.iter().for_each(|q| self.queue(q));
        }
    }

    fn queue(&mut self, q: &QueueCfg) {
        let bytes = q.quantum.map(|l| match l.0 {
            Limit::Bytes(b) => b,
            Limit::Packets(_) => u64::MAX,
        });
        self.tiny_quantum |= bytes.is_some_and(|b| b < 64);
    }
}

/// The scenario as the fuzz runs it: at most [`RUN_CAP_NS`] of simulated time, without the
/// link changes after that.
fn shortened(mut s: Scenario) -> Scenario {
    let end = s.simulation.duration.0.min(RUN_CAP_NS);
    s.simulation.duration.0 = end;
    s.changes.retain(|c| c.at.0 < end);
    s
}

// ---------------------------------------------------------------------------------------------
// Documents and mutations

/// Documents for the features no shipped scenario uses.
const EXTRA: [(&str, &str); 3] = [
    (
        "red-ecn-arrivals",
        r#"
[simulation]
duration = "2s"
sample_interval = "100ms"

[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "10ms", queue = { kind = "red", limit = 100, min_th = 5, max_th = 15, max_p = 0.1, ecn = true }, loss = { model = "gilbert_elliott", p_gb = 0.01, p_bg = 0.3 }, reverse = { rate = "2Mbps", queue = { limit = 20 } } }
access = { rate = "100Mbps", delay = "1ms" }

[[flows]]
name = "cubic"
count = 2
start_spacing = "50ms"
start_jitter = "10ms"
tcp = { cc = "cubic", recovery = "sack", ecn = true, delayed_ack = true, handshake = true }

[[flows]]
name = "web"
tcp = { recovery = "newreno", rto_min = "200ms" }
[flows.arrivals]
process = "poisson"
rate = 20
size = { dist = "lognormal", mean = "25KB", sd = "50KB" }
limit = 100

[[flows]]
name = "onoff"
transport = "udp"
source = { kind = "on_off", rate = "2Mbps", on = "100ms", off = "100ms", periods = "pareto", shape = 1.5 }

[[changes]]
at = "1s"
link = "r0-r1"
rate = "5Mbps"

[trace]
events = true
"#,
    ),
    (
        "parking-lot-schedulers",
        r#"
[simulation]
duration = "1s"
seed = 7

[topology]
kind = "parking_lot"
routers = 3
link = { rate = "20Mbps", delay = "5ms", queue = { kind = "fq_codel", limit = 1000, quantum = "1514B", target = "5ms", interval = "100ms" } }
access = { rate = "100Mbps", delay = "1ms", queue = { kind = "drr", limit = 60, aqm = "red", min_th = 5, max_th = 15, mode = "packets" } }

[[flows]]
name = "vegas"
from = 0
to = 2
drop_segments = [3, 4, 9]
tcp = { cc = { algo = "vegas" }, recovery = "reno", force_timeout = { segment = 20, after = "1ms" }, misrx_detection = true }

[[flows]]
name = "users"
from = 1
to = 2
tcp = { rtt_timing = "ns2", decrease = "window", rto_restart = "every_ack" }
[flows.arrivals]
process = "closed_loop"
users = 20
think = { dist = "exponential", mean = "50ms" }
size = { dist = "pareto", scale = "4KB", shape = 1.2 }

[[flows]]
name = "replay"
from = 0
to = 1
[flows.arrivals]
process = "trace"
transfers = [["10ms", "20KB"], ["200ms", "1MB"]]

[[flows]]
name = "video"
from = 0
to = 1
transport = "udp"
source = { kind = "vbr", rate = "2Mbps", peak = "6Mbps", jitter = "1ms" }
"#,
    ),
    (
        "graph-lan-losses",
        r#"
[simulation]
duration = "1s"
sample_interval = "50ms"

[topology]
kind = "graph"
nodes = ["a", "b", "c", "d"]
links = [
  { from = "a", to = "b", rate = "20Mbps", delay = "2ms", queue = { kind = "priority", limit = 100, classes = [ { flows = ["udp"], limit = 50 }, { flows = ["tcp"], limit = 50 } ] } },
  { from = "b", to = "c", name = "lossy", rate = "10Mbps", delay = "5ms", loss = { model = "schedule", steps = [["0s", 0.01], ["0.5s", 0.05]], pattern = "periodic" }, loss_position = "before_queue" },
  { from = "a", to = "c", name = "backup", rate = "5Mbps", delay = "20ms", loss = { model = "two_state", q = 0.01, length = 2 }, queue = { kind = "enhanced_red", limit = 30, flow_p = { tcp = 0.05 } } },
]
lans = [
  { name = "lan", nodes = ["c", "d"], rate = "10Mbps", delay = "0.5us", queue = { limit = 50 }, loss = { model = "periodic", every = 50 } },
]

[[flows]]
name = "tcp"
count = 2
src = "a"
dst = "d"
size = "200KB"
tcp = { recovery = "sack", sack_recovery = "rate_halving", cc = "htcp", send_jitter = "1ms" }

[[flows]]
name = "udp"
src = "a"
dst = "d"
transport = "udp"
source = { kind = "poisson", rate = "1Mbps", schedule = [["0.2s", "3Mbps"], ["0.8s", "0Mbps", "ramp"]] }

[[changes]]
at = "0.3s"
link = "lossy"
up = false

[[changes]]
at = "0.6s"
link = "lossy"
direction = "reverse"
up = true
"#,
    ),
];

/// The seed documents: every shipped scenario that needs no other file, then [`EXTRA`].
fn corpus() -> Vec<(String, Table)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("scenarios/ is readable")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    let mut docs = Vec::new();
    for p in paths {
        let text = std::fs::read_to_string(&p).expect("a shipped scenario is readable");
        let table: Table = text.parse().unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        if !mentions_key(&Value::Table(table.clone()), "file") {
            docs.push((p.file_name().unwrap().to_string_lossy().into_owned(), table));
        }
    }
    assert!(docs.len() >= 5, "too few shipped scenarios in {}", dir.display());
    for (name, text) in EXTRA {
        docs.push((name.to_string(), text.parse().unwrap_or_else(|e| panic!("{name}: {e}"))));
    }
    docs
}

fn mentions_key(v: &Value, key: &str) -> bool {
    match v {
        Value::Table(t) => t.iter().any(|(k, v)| k == key || mentions_key(v, key)),
        Value::Array(a) => a.iter().any(|v| mentions_key(v, key)),
        _ => false,
    }
}

/// A replacement value.
#[derive(Clone, Debug)]
enum Repl {
    /// One of [`fixed`].
    Fixed(usize),
    /// A small integer.
    Int(i64),
    /// The value it replaces, twice, in an array.
    ArrayOfSelf,
    /// An empty array.
    EmptyArray,
    /// A string of this many characters.
    Long(usize),
    /// Tables nested this deep.
    Nested(usize),
}

/// Words of the scenario format: an enum word may become another.
const WORDS: &[&str] = &[
    "droptail",
    "red",
    "priority",
    "drr",
    "enhanced_red",
    "fq_codel",
    "dumbbell",
    "parking_lot",
    "graph",
    "tahoe",
    "reno",
    "newreno",
    "sack",
    "cubic",
    "bic",
    "vegas",
    "highspeed",
    "htcp",
    "compound",
    "scalable",
    "fast",
    "multcp",
    "bbr",
    "dctcp",
    "ack_train",
    "poisson",
    "closed_loop",
    "trace",
    "constant",
    "exponential",
    "pareto",
    "lognormal",
    "gamma",
    "uniform",
    "cbr",
    "on_off",
    "vbr",
    "bernoulli",
    "gilbert_elliott",
    "burst",
    "two_state",
    "periodic",
    "schedule",
    "forward",
    "reverse",
    "both",
    "udp",
    "tcp",
    "packets",
    "bytes",
    "auto",
    "ramp",
    "step",
    "drop_arrival",
    "push_out_longest",
    "none",
    "rate_halving",
    "prr",
    "ns2",
    "every_ack",
    "oldest_sent",
    "rm_period",
    "window",
    "before_queue",
    "r0",
    "r1",
];

/// Keys to insert: unknown ones (a line break among them: a message shows it escaped), and
/// known ones where they may not belong.
const KEYS: &[&str] = &[
    "colour",
    "x",
    "",
    "_",
    "a b",
    "ü",
    "1",
    "x\ny",
    "a\rb",
    "p\u{2028}q",
    "rate",
    "delay",
    "kind",
    "queue",
    "limit",
    "count",
    "tcp",
    "seed",
    "reverse",
    "loss",
    "name",
    "size",
    "start",
    "stop",
    "users",
    "arrivals",
    "source",
    "changes",
    "trace",
];

fn fixed() -> Vec<Value> {
    let mut v: Vec<Value> = [0, -1, 1, 2, 7, 255, 65_536, 4_294_967_296, i64::MAX, i64::MIN, -9_999_999_999]
        .into_iter()
        .map(Value::Integer)
        .collect();
    v.extend(
        [0.0, -0.0, 0.5, 1.5, -2.5, 1e300, -1e300, 1e-300, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e9, 1e20]
            .into_iter()
            .map(Value::Float),
    );
    v.extend(
        [
            "",
            "a\nb",
            " ",
            "1e300s",
            "-1ms",
            "0s",
            "1e-30s",
            "0bps",
            "1e30bps",
            "-5Mbps",
            "0B",
            "1e20B",
            "1.5B",
            "NaNms",
            "infs",
            "1e3ms",
            "10 Mbps",
            "10mbps",
            "1µs",
            "0.5us",
            "1e9s",
            "100Gbps",
            "10Tbps",
            "20KB",
            "2s",
            "64",
            "true",
            "auto",
            "ramp",
            "r0",
            "flow",
            "é",
            "\u{7f}",
            "1e308Gbps",
            "0x10ms",
            "+5ms",
            "5 ms ",
        ]
        .into_iter()
        .map(|s| Value::String(s.into())),
    );
    v.push(Value::Boolean(true));
    v.push(Value::Boolean(false));
    v.push(Value::Datetime("1979-05-27T07:32:00Z".parse().expect("a TOML datetime")));
    v.push(Value::Table(Table::new()));
    v.push(Value::Table(toml::toml! { kind = "red" }));
    v.push(Value::Table(toml::toml! { rate = "10Mbps" delay = "1ms" }));
    v.push(Value::Table(toml::toml! { algo = "multcp" n = 1e9 }));
    v
}

fn repl() -> impl Strategy<Value = Repl> {
    let n = fixed().len();
    prop_oneof![
        6 => (0..n).prop_map(Repl::Fixed),
        2 => (-3i64..70).prop_map(Repl::Int),
        1 => Just(Repl::ArrayOfSelf),
        1 => Just(Repl::EmptyArray),
        1 => prop_oneof![Just(65usize), Just(100_000)].prop_map(Repl::Long),
        1 => prop_oneof![1usize..4, Just(300)].prop_map(Repl::Nested),
    ]
}

/// The value `r` gives in place of `old` (`None` for an inserted key).
fn replacement(r: &Repl, old: Option<&Value>) -> Value {
    match r {
        Repl::Fixed(i) => fixed().swap_remove(*i),
        Repl::Int(i) => Value::Integer(*i),
        Repl::ArrayOfSelf => {
            let old = old.cloned().unwrap_or(Value::Integer(1));
            Value::Array(vec![old.clone(), old])
        }
        Repl::EmptyArray => Value::Array(Vec::new()),
        Repl::Long(n) => Value::String("x".repeat(*n)),
        Repl::Nested(depth) => {
            let mut v = Value::Integer(1);
            for level in 0..*depth {
                let mut t = Table::new();
                t.insert(format!("k{level}"), v);
                v = Value::Table(t);
            }
            v
        }
    }
}

/// Edits of a string, for near misses of enum words.
#[derive(Clone, Debug)]
enum Edit {
    Append,
    DropLast,
    Upper,
    Swap,
    Space,
    Dash,
    Word(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        Just(Edit::Append),
        Just(Edit::DropLast),
        Just(Edit::Upper),
        Just(Edit::Swap),
        Just(Edit::Space),
        Just(Edit::Dash),
        (0..WORDS.len()).prop_map(Edit::Word),
        (0..WORDS.len()).prop_map(Edit::Word),
    ]
}

fn apply_edit(s: &str, e: &Edit) -> String {
    match e {
        Edit::Append => format!("{s}x"),
        Edit::DropLast => {
            let mut t = s.to_string();
            t.pop();
            t
        }
        Edit::Upper => s.to_uppercase(),
        Edit::Swap => {
            let mut c: Vec<char> = s.chars().collect();
            if c.len() >= 2 {
                c.swap(0, 1);
            }
            c.into_iter().collect()
        }
        Edit::Space => format!(" {s}"),
        Edit::Dash => {
            if s.contains('_') {
                s.replace('_', "-")
            } else {
                format!("{s}_")
            }
        }
        Edit::Word(i) => WORDS[*i].to_string(),
    }
}

/// Factors a number is scaled by.
const FACTORS: [f64; 10] = [0.0, -1.0, 0.5, 2.0, 10.0, 1e3, 1e-3, 1e6, 1e9, 1e-9];

/// Keys whose values size the network or the workload: scaled by at most 10. Millions of
/// flows or of closed-loop users take gigabytes as the scenario is built, before the
/// resource guard can refuse it (docs/reliability.md, "Fuzzing").
const SIZING_KEYS: &[&str] = &["count", "users", "routers", "limit", "buckets", "rwnd", "initial_window"];

#[derive(Clone, Debug)]
enum Mutation {
    Delete(Index),
    Replace(Index, Repl),
    Insert(Index, usize, Repl),
    Duplicate(Index, Index),
    Word(Index, Edit),
    Scale(Index, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        2 => any::<Index>().prop_map(Mutation::Delete),
        4 => (any::<Index>(), repl()).prop_map(|(i, r)| Mutation::Replace(i, r)),
        2 => (any::<Index>(), 0..KEYS.len(), repl()).prop_map(|(i, k, r)| Mutation::Insert(i, k, r)),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(a, e)| Mutation::Duplicate(a, e)),
        2 => (any::<Index>(), edit()).prop_map(|(i, e)| Mutation::Word(i, e)),
        2 => (any::<Index>(), 0..FACTORS.len()).prop_map(|(i, f)| Mutation::Scale(i, f)),
    ]
}

#[derive(Clone, Debug, PartialEq)]
enum Seg {
    Key(String),
    At(usize),
}

/// Every node below `v`, by path, parents before children.
fn nodes(v: &Value, prefix: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
    match v {
        Value::Table(t) => {
            for (k, child) in t {
                prefix.push(Seg::Key(k.clone()));
                out.push(prefix.clone());
                nodes(child, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                prefix.push(Seg::At(i));
                out.push(prefix.clone());
                nodes(child, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

fn get<'a>(v: &'a Value, path: &[Seg]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, seg| match (v, seg) {
        (Value::Table(t), Seg::Key(k)) => t.get(k),
        (Value::Array(a), Seg::At(i)) => a.get(*i),
        _ => None,
    })
}

fn get_mut<'a>(v: &'a mut Value, path: &[Seg]) -> Option<&'a mut Value> {
    path.iter().try_fold(v, |v, seg| match (v, seg) {
        (Value::Table(t), Seg::Key(k)) => t.get_mut(k),
        (Value::Array(a), Seg::At(i)) => a.get_mut(*i),
        _ => None,
    })
}

fn last_key(path: &[Seg]) -> Option<&str> {
    path.iter().rev().find_map(|s| match s {
        Seg::Key(k) => Some(k.as_str()),
        Seg::At(_) => None,
    })
}

/// A number or a quantity string scaled by `f`.
fn scaled(v: &Value, f: f64) -> Option<Value> {
    match v {
        Value::Integer(i) => Some(if f.fract() == 0.0 && (*i as f64 * f).abs() < 9e18 {
            Value::Integer((*i as f64 * f) as i64)
        } else {
            Value::Float(*i as f64 * f)
        }),
        Value::Float(x) => Some(Value::Float(x * f)),
        Value::String(s) => {
            let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
            let x: f64 = s[..split].parse().ok()?;
            Some(Value::String(format!("{}{}", x * f, &s[split..])))
        }
        _ => None,
    }
}

fn mutate(doc: &mut Value, m: &Mutation) {
    let mut all = Vec::new();
    nodes(doc, &mut Vec::new(), &mut all);
    let pick = |i: &Index, keep: &dyn Fn(&[Seg], &Value) -> bool| -> Option<Vec<Seg>> {
        let c: Vec<&Vec<Seg>> = all.iter().filter(|p| keep(p, get(doc, p).expect("a node"))).collect();
        (!c.is_empty()).then(|| c[i.index(c.len())].clone())
    };
    match m {
        Mutation::Delete(i) => {
            if let Some(p) = pick(i, &|_, _| true) {
                let (last, parent) = p.split_last().expect("a node below the root");
                match (get_mut(doc, parent), last) {
                    (Some(Value::Table(t)), Seg::Key(k)) => {
                        t.remove(k);
                    }
                    (Some(Value::Array(a)), Seg::At(j)) => {
                        a.remove(*j);
                    }
                    _ => unreachable!("a path found by nodes()"),
                }
            }
        }
        Mutation::Replace(i, r) => {
            if let Some(p) = pick(i, &|_, _| true) {
                let slot = get_mut(doc, &p).expect("a node");
                *slot = replacement(r, Some(slot));
            }
        }
        Mutation::Insert(i, k, r) => {
            // The root, or any table below it.
            let p = pick(i, &|_, v| v.is_table()).filter(|_| i.index(4) != 0).unwrap_or_default();
            if let Some(Value::Table(t)) = get_mut(doc, &p) {
                t.insert(KEYS[*k].to_string(), replacement(r, None));
            }
        }
        Mutation::Duplicate(a, e) => {
            let nonempty = |_: &[Seg], v: &Value| v.as_array().is_some_and(|a| !a.is_empty());
            if let Some(p) = pick(a, &nonempty) {
                let Some(Value::Array(arr)) = get_mut(doc, &p) else { unreachable!("an array") };
                let j = e.index(arr.len());
                arr.insert(j, arr[j].clone());
            }
        }
        Mutation::Word(i, e) => {
            if let Some(p) = pick(i, &|_, v| v.is_str()) {
                let slot = get_mut(doc, &p).expect("a node");
                *slot = Value::String(apply_edit(slot.as_str().expect("a string"), e));
            }
        }
        Mutation::Scale(i, f) => {
            let numeric = |_: &[Seg], v: &Value| scaled(v, 2.0).is_some();
            if let Some(p) = pick(i, &numeric) {
                let factor = FACTORS[*f];
                let sizing = last_key(&p).is_some_and(|k| SIZING_KEYS.contains(&k));
                let factor = if sizing && factor.abs() > 10.0 { 10.0 } else { factor };
                let slot = get_mut(doc, &p).expect("a node");
                *slot = scaled(slot, factor).expect("a number");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The properties

/// What one case came to, for the statistics printed at the end.
#[derive(Default)]
struct Tally {
    refused: AtomicU64,
    built: AtomicU64,
    ran: AtomicU64,
}

fn check_error(e: &flowshare_core::ConfigError, text: &str) -> Result<(), TestCaseError> {
    let shown = e.to_string();
    let names_a_field = if e.path.is_empty() || e.path == "." {
        // A document-level error names its field in backquotes (`missing field `flows``), or
        // is one of the document as TOML (tables nested past the parser's depth limit).
        shown.contains('`') || shown.starts_with("invalid TOML: ")
    } else {
        shown.starts_with(&e.path)
    };
    if shown.trim().is_empty() || shown.contains('\n') || shown.contains('\r') || !names_a_field {
        return Err(TestCaseError::fail(format!("not a one-line error naming a field: {shown:?}\n{text}")));
    }
    Ok(())
}

fn check_case(text: &str, tally: &Tally) -> Result<(), TestCaseError> {
    let s = match scenario::from_toml(text) {
        Ok(s) => s,
        Err(e) => {
            tally.refused.fetch_add(1, Ordering::Relaxed);
            return check_error(&e, text);
        }
    };
    if let Err(e) = s.build() {
        tally.refused.fetch_add(1, Ordering::Relaxed);
        return check_error(&e, text);
    }
    tally.built.fetch_add(1, Ordering::Relaxed);
    let s = shortened(s);
    if !small_enough(&s) {
        return Ok(());
    }
    let sim = Simulation::new(&s).map_err(|e| TestCaseError::fail(format!("built, then refused: {e}\n{text}")))?;
    let r = sim.finish();
    tally.ran.fetch_add(1, Ordering::Relaxed);
    let f = &r.flows;
    for i in 0..f.rows() {
        let sent = f.i64("packets_sent")[i];
        let accounted =
            f.i64("packets_received")[i] + f.i64("drops")[i] + f.i64("link_losses")[i] + f.i64("in_network_end")[i];
        prop_assert_eq!(sent, accounted, "flow {} does not conserve packets\n{}", i, text);
        prop_assert!(f.i64("bytes_delivered")[i] <= f.i64("bytes_sent")[i], "flow {}\n{}", i, text);
    }
    let q = &r.queues;
    for i in 0..q.rows() {
        let accounted = q.i64("departures")[i] + q.i64("drops")[i] + q.i64("len_end_pkts")[i];
        prop_assert_eq!(q.i64("arrivals")[i], accounted, "queue {} does not conserve packets\n{}", i, text);
        prop_assert!(q.i64("link_losses")[i] <= q.i64("departures")[i], "queue {}\n{}", i, text);
    }
    Ok(())
}

fn cases() -> u32 {
    match std::env::var("FLOWSHARE_FUZZ_CASES") {
        Ok(v) => v.trim().parse().unwrap_or_else(|_| panic!("FLOWSHARE_FUZZ_CASES must be a count, got {v:?}")),
        Err(_) => DEFAULT_CASES,
    }
}

/// Aborts the process, showing the document, when one case runs past [`CASE_DEADLINE`]: a
/// hang is a failure too, and its document the reproducer.
struct Watchdog {
    current: Arc<Mutex<(u64, Instant, String)>>,
}

impl Watchdog {
    fn start() -> Self {
        let current = Arc::new(Mutex::new((0u64, Instant::now(), String::new())));
        let seen = Arc::clone(&current);
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_secs(1));
            let (case, since, text) = &*seen.lock().unwrap_or_else(|e| e.into_inner());
            if since.elapsed() > CASE_DEADLINE {
                eprintln!("case {case} has run for more than {CASE_DEADLINE:?}:\n{text}");
                std::process::abort();
            }
        });
        Watchdog { current }
    }

    fn case(&self, n: u64, text: &str) {
        let mut c = self.current.lock().unwrap_or_else(|e| e.into_inner());
        *c = (n, Instant::now(), text.to_string());
    }
}

#[test]
fn shipped_scenarios_load_unmutated() {
    for (name, table) in corpus() {
        let text = toml::to_string(&table).expect("a table serializes");
        let s = scenario::from_toml(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        s.build().unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn mutated_scenarios_give_one_line_errors_or_conserving_runs() {
    let docs = corpus();
    let config = Config {
        cases: cases(),
        failure_persistence: None,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(SEED),
        max_shrink_iters: 2000,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let tally = Tally::default();
    let watchdog = Watchdog::start();
    let counter = AtomicU64::new(0);
    let started = Instant::now();
    let strategy = (0..docs.len(), prop::collection::vec(mutation(), 1..=4));
    let outcome = runner.run(&strategy, |(which, mutations)| {
        let mut doc = Value::Table(docs[which].1.clone());
        for m in &mutations {
            mutate(&mut doc, m);
        }
        let Ok(text) = toml::to_string(&doc) else {
            // Not every value tree is a TOML document (an array of tables holding a scalar):
            // nothing to load.
            return Ok(());
        };
        let text = format!("# from {}: {mutations:?}\n{text}", docs[which].0);
        watchdog.case(counter.fetch_add(1, Ordering::Relaxed), &text);
        check_case(&text, &tally)
    });
    eprintln!(
        "fuzz_scenarios: {} cases in {:.1} s: {} refused, {} built, {} ran",
        counter.load(Ordering::Relaxed),
        started.elapsed().as_secs_f64(),
        tally.refused.load(Ordering::Relaxed),
        tally.built.load(Ordering::Relaxed),
        tally.ran.load(Ordering::Relaxed),
    );
    if let Err(e) = outcome {
        panic!("{e}");
    }
}
