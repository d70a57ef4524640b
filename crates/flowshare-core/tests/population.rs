//! A population of sources and receivers under access routers (`process = "population"`):
//! receivers drawn under other nodes, flow groups from the access classes and interfaces,
//! the hosts' interfaces as rate limits, file-type minima and maxima, common random numbers
//! across algorithms, and errors that name the field.

mod common;

use flowshare_core::results::{Column, RunResults, Table};
use flowshare_core::scenario;
use std::collections::BTreeMap;

fn texts(t: &Table, name: &str) -> Vec<String> {
    match t.get(name) {
        Some(Column::Str(v)) => v.clone(),
        _ => panic!("no text column {name}"),
    }
}

/// A star around `b0`: `a0` (direct, 5 ms), `a1` (fast, 10 ms), `a2` (normal, 100 Mbit/s,
/// 20 ms), with a population whose table `population` is completed by the given lines.
fn star(seconds: u32, seed: u64, population: &str) -> String {
    format!(
        r#"
[simulation]
duration = "{seconds}s"
seed = {seed}
sample_interval = "0s"

[topology]
kind = "graph"
nodes = ["b0", "a0", "a1", "a2"]
links = [
  {{ from = "a0", to = "b0", rate = "1Gbps", delay = "5ms", queue = {{ limit = 500 }} }},
  {{ from = "a1", to = "b0", rate = "1Gbps", delay = "10ms", queue = {{ limit = 500 }} }},
  {{ from = "a2", to = "b0", rate = "100Mbps", delay = "20ms", queue = {{ limit = 200 }} }},
]

[[flows]]
name = "pop"
[flows.arrivals]
process = "population"
think = {{ dist = "exponential", mean = "1s" }}
size = {{ dist = "pareto", mean = "150KB", shape = 1.5 }}
[flows.arrivals.population]
classes = {{ a0 = "direct", a1 = "fast", a2 = "normal" }}
interface = {{ rate = "20Mbps", fast_rate = "400Mbps", fast = 0.5 }}
first = {{ dist = "uniform", min = "0s", max = "1s" }}
{population}
"#
    )
}

fn labels(r: &RunResults) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for n in texts(&r.transfers, "name") {
        *m.entry(n).or_insert(0) += 1;
    }
    m
}

#[test]
fn receivers_are_under_other_nodes_and_set_the_path_class() {
    // Sources and receivers under a0 (direct) and receivers under a1 (fast): a receiver under
    // the source's own router would make a very fast path; every transfer is direct-fast.
    let r = common::run(&star(20, 1, "sources = { a0 = 50 }\nreceivers = { a0 = 500, a1 = 10 }"));
    let l = labels(&r);
    assert!(r.transfers.rows() > 200, "{} transfers", r.transfers.rows());
    assert!(l.keys().all(|k| k.starts_with("pop/web/F-")), "{l:?}");
    // Both interfaces fast a quarter of the time (each host fast with probability ½).
    let ff = l.iter().filter(|(k, _)| k.contains("/F-F/")).map(|(_, n)| n).sum::<usize>() as f64;
    let share = ff / r.transfers.rows() as f64;
    assert!((0.1..0.45).contains(&share), "F-F share {share}");
}

#[test]
fn the_slower_interface_limits_each_transfer() {
    let r = common::run(&star(30, 2, "sources = { a0 = 40 }\nreceivers = { a1 = 400 }"));
    let t = &r.transfers;
    let names = texts(t, "name");
    let goodput = t.f64("goodput_bps");
    let sizes = t.i64("size_bytes");
    let (mut fast_max, mut normal_max) = (0.0f64, 0.0f64);
    for ((n, &g), &s) in names.iter().zip(goodput).zip(sizes) {
        if g.is_nan() || s < 500_000 {
            continue;
        }
        if n.contains("-N/") {
            normal_max = normal_max.max(g);
        } else {
            fast_max = fast_max.max(g);
        }
    }
    // A normal interface (20 Mbit/s of wire bytes) bounds goodput; a fast pair goes well beyond.
    assert!(normal_max > 10e6 && normal_max < 20e6, "normal {normal_max}");
    assert!(fast_max > 40e6, "fast {fast_max}");
}

#[test]
fn minima_keep_large_files_active_and_maxima_bound_the_draws() {
    let pop = r#"sources = { a0 = 100 }
receivers = { a1 = 100, a2 = 400 }
[[flows.arrivals.population.file_types]]
name = "movie"
probability = 0.0
multiplier = 100
max_active = 0
min_active = { "F-F/base" = 1000 }
[[flows.arrivals.population.file_types]]
name = "document"
probability = 0.5
multiplier = 10
max_active = 3
"#;
    let r = common::run(&star(20, 3, pop));
    let l = labels(&r);
    // Every F-F transfer is held as a movie by its unmet minimum; nothing else is a movie.
    assert!(l.keys().filter(|k| k.contains("/F-F/")).all(|k| k.starts_with("pop/movie/")), "{l:?}");
    assert!(l.keys().filter(|k| k.starts_with("pop/movie/")).all(|k| k.contains("/F-F/")), "{l:?}");
    // Half the other draws are documents, but at most three at a time: far fewer than half.
    let docs: usize = l.iter().filter(|(k, _)| k.starts_with("pop/document/")).map(|(_, n)| n).sum();
    let web: usize = l.iter().filter(|(k, _)| k.starts_with("pop/web/")).map(|(_, n)| n).sum();
    assert!(docs > 0 && docs * 3 < web, "{docs} documents, {web} Web objects");
    let t = &r.transfers;
    let (start, fct) = (t.f64("start_s"), t.f64("completion_time_s"));
    let names = texts(t, "name");
    let mut events: Vec<(f64, i32)> = Vec::new();
    for ((n, &s), &c) in names.iter().zip(start).zip(fct) {
        if n.starts_with("pop/document/") {
            events.push((s, 1));
            events.push((if c.is_nan() { f64::INFINITY } else { s + c }, -1));
        }
    }
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut active = 0;
    for (_, d) in events {
        active += d;
        assert!(active <= 3, "{active} documents active at once");
    }
}

#[test]
fn sources_draw_the_same_transfers_whatever_the_alternate_algorithm() {
    let pop = |alg: &str| {
        star(
            5,
            4,
            &format!("sources = {{ a0 = 30, a1 = 30 }}\nreceivers = {{ a1 = 100, a2 = 100 }}\nalternate = {{ cc = \"{alg}\", share = 0.5 }}"),
        )
    };
    let first = |r: &RunResults| {
        let t = &r.transfers;
        let mut m = BTreeMap::new();
        for ((&u, &s), n) in t.i64("user").iter().zip(t.f64("start_s")).zip(texts(t, "name")) {
            let e = m.entry(u).or_insert((f64::INFINITY, String::new(), 0));
            if s < e.0 {
                // The path and interfaces of the label, not the algorithm.
                *e = (s, n.rsplit_once('/').unwrap().0.to_string(), 0);
            }
        }
        for ((&u, &s), &size) in t.i64("user").iter().zip(t.f64("start_s")).zip(t.i64("size_bytes")) {
            let e = m.get_mut(&u).unwrap();
            if s == e.0 {
                e.2 = size;
            }
        }
        m
    };
    let (a, b) = (common::run(&pop("cubic")), common::run(&pop("highspeed")));
    let (fa, fb) = (first(&a), first(&b));
    assert_eq!(fa.len(), 60);
    // Each source's first transfer starts at the same time, to the same kind of receiver, with
    // the same size, under either algorithm.
    assert_eq!(fa, fb);
    let algs = |r: &RunResults| labels(r).keys().map(|k| k.rsplit('/').next().unwrap().to_string()).collect::<Vec<_>>();
    assert!(algs(&a).contains(&"cubic".to_string()) && algs(&a).contains(&"reno".to_string()));
    assert!(algs(&b).contains(&"highspeed".to_string()));
}

#[test]
fn a_seed_gives_the_same_transfers() {
    let s = star(10, 5, "sources = { a0 = 20, a2 = 20 }\nreceivers = { a1 = 50, a2 = 50 }");
    let (a, b) = (common::run(&s), common::run(&s));
    assert_eq!(texts(&a.transfers, "name"), texts(&b.transfers, "name"));
    assert_eq!(
        a.transfers.f64("completion_time_s").iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        b.transfers.f64("completion_time_s").iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
}

#[test]
fn bad_populations_name_the_field() {
    let err = |toml: &str| match scenario::from_toml(toml) {
        Ok(s) => match flowshare_core::Simulation::new(&s) {
            Ok(_) => panic!("accepted"),
            Err(e) => e.to_string(),
        },
        Err(e) => e.to_string(),
    };
    let ok = star(1, 1, "sources = { a0 = 2 }\nreceivers = { a1 = 2 }");
    let unknown =
        ok.replace("a1 = 2 }\n", "zz = 2 }\n").replace("a2 = \"normal\" }", "a2 = \"normal\", zz = \"fast\" }");
    assert_eq!(err(&unknown), "flows[0].arrivals.population: unknown node \"zz\" holds hosts");
    let with_src = ok.replace("name = \"pop\"", "name = \"pop\"\nsrc = \"a0\"");
    assert!(err(&with_src).starts_with("flows[0].src: not used with process = \"population\""), "{}", err(&with_src));
    let no_hosts = star(1, 1, "sources = { a0 = 2 }\nreceivers = { a0 = 2 }");
    assert!(err(&no_hosts).contains("no receiver under another node"), "{}", err(&no_hosts));
    let no_think = ok.replace("think = { dist = \"exponential\", mean = \"1s\" }\n", "");
    assert!(err(&no_think).starts_with("flows[0].arrivals.think: is required"), "{}", err(&no_think));
}
