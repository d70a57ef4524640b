//! Connections opened while the run goes on: Poisson arrivals, closed-loop users with think
//! times, traces of start times and sizes; slots reused so that memory follows the open
//! connections; the per-transfer table.

mod common;

use flowshare_core::results::{Column, RunResults, Table};
use flowshare_core::{scenario, Simulation};

fn texts(t: &Table, name: &str) -> Vec<String> {
    match t.get(name) {
        Some(Column::Str(v)) => v.clone(),
        _ => panic!("no text column {name}"),
    }
}

/// A 100 Mbps dumbbell with a 20 ms bottleneck and a 200-packet queue, `seconds` long, with the
/// flow groups of `groups`.
fn dumbbell(seconds: u32, groups: &str) -> String {
    common::dumbbell(seconds, r#"rate = "100Mbps", delay = "20ms", queue = { limit = 200 }"#, groups)
}

fn run(toml: &str) -> (RunResults, usize) {
    let s = scenario::from_toml(toml).unwrap_or_else(|e| panic!("bad test scenario: {e}"));
    let sim = Simulation::new(&s).unwrap();
    let mut sim = sim;
    sim.run_until(sim.end());
    let slots = sim.slots();
    (sim.finish(), slots)
}

#[test]
fn poisson_arrivals_open_connections_at_the_rate() {
    let groups = "[[flows]]\nname = \"web\"\n[flows.arrivals]\nprocess = \"poisson\"\nrate = 20\nsize = \"20KB\"\n";
    let (r, _) = run(&dumbbell(100, groups));
    let t = &r.transfers;
    let n = t.rows();
    // 2000 expected; the count of a Poisson process has a standard deviation of √2000 ≈ 45.
    assert!((n as f64 - 2000.0).abs() < 4.0 * 45.0, "{n} transfers");
    let start = t.f64("start_s");
    let gaps: Vec<f64> = start.windows(2).map(|w| w[1] - w[0]).collect();
    let mean = common::mean(&gaps);
    assert!((mean - 0.05).abs() < 0.005, "mean gap {mean}");
    // Exponential gaps: the standard deviation is the mean.
    let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
    assert!((sd / mean - 1.0).abs() < 0.1, "sd {sd} for mean {mean}");
    // A lightly loaded path: every transfer but the last few completes, fast.
    let done = t.f64("completion_time_s").iter().filter(|c| !c.is_nan()).count();
    assert!(done >= n - 5, "{done} of {n} completed");
    assert!(t.i64("size_bytes").iter().all(|&s| s == 20_000));
    assert!(texts(t, "name").iter().all(|s| s == "web"));
    assert!(t.i64("user").iter().all(|&u| u == -1));
    // Transfers are numbered after the listed flows (none here), in order of opening.
    let mut ids = t.i64("transfer").to_vec();
    ids.sort_unstable();
    assert_eq!(ids, (0..n as i64).collect::<Vec<_>>());
}

#[test]
fn closed_loop_users_think_between_their_transfers() {
    let groups = "[[flows]]\nname = \"bulk\"\n\
        [[flows]]\nname = \"users\"\n[flows.arrivals]\nprocess = \"closed_loop\"\nusers = 10\n\
        think = { dist = \"exponential\", mean = \"1s\" }\nsize = { dist = \"pareto\", mean = \"30KB\", shape = 1.5 }\n";
    let (r, slots) = run(&dumbbell(200, groups));
    let t = &r.transfers;
    let (user, start, done) = (t.i64("user"), t.f64("start_s"), t.f64("completion_time_s"));
    assert!(t.rows() > 1000, "{} transfers", t.rows());
    // The listed flow is flow 0; transfers are 1, 2, ...
    assert!(t.i64("transfer").iter().all(|&id| id >= 1));
    let mut thinks = Vec::new();
    for u in 0..10 {
        let mine: Vec<usize> = (0..t.rows()).filter(|&i| user[i] == u).collect();
        assert!(mine.len() > 50, "user {u}: {} transfers", mine.len());
        for w in mine.windows(2) {
            let (a, b) = (w[0], w[1]);
            // One transfer at a time: the next starts after the previous completed.
            let think = start[b] - (start[a] + done[a]);
            assert!(think >= -1e-9, "user {u}: transfer at {} before the previous ended", start[b]);
            thinks.push(think);
        }
    }
    let mean = common::mean(&thinks);
    assert!((mean - 1.0).abs() < 0.1, "mean think time {mean}");
    // Slots: the listed flow and at most two per user (a finished transfer's slot waits for
    // its last packets while the user's next one has started).
    assert!(slots <= 1 + 2 * 10, "{slots} slots for 10 users");
    assert!(r.flows.rows() == 1, "only listed flows are in the flow table");
}

#[test]
fn a_trace_opens_transfers_at_its_times_with_its_sizes() {
    let groups = "[[flows]]\nname = \"t\"\nstart = \"1s\"\n[flows.arrivals]\nprocess = \"trace\"\n\
        transfers = [[\"0.5s\", \"100KB\"], [\"0s\", \"1460B\"], [\"0.5s\", \"3KB\"], [\"2s\", \"1MB\"]]\n";
    let (r, _) = run(&dumbbell(10, groups));
    let t = &r.transfers;
    // In order of completion; sorted by start they are the trace's entries, in time order
    // and, at equal times, in the order given.
    let mut rows: Vec<(i64, f64, i64)> =
        (0..t.rows()).map(|i| (t.i64("transfer")[i], t.f64("start_s")[i], t.i64("size_bytes")[i])).collect();
    rows.sort_by_key(|r| r.0);
    assert_eq!(rows, vec![(0, 1.0, 1460), (1, 1.5, 100_000), (2, 1.5, 3000), (3, 3.0, 1_000_000)]);
    assert!(t.f64("completion_time_s").iter().all(|c| c.is_finite()));
    // A 1460-byte transfer takes one segment: one RTT (44 ms and transmissions) to complete.
    let small = (0..4).find(|&i| t.i64("size_bytes")[i] == 1460).unwrap();
    let c = t.f64("completion_time_s")[small];
    assert!(c > 0.044 && c < 0.046, "completion {c}");
}

#[test]
fn memory_follows_open_connections_not_transfers_made() {
    // 3,000 transfers by 20 users: about 20 open at a time.
    let groups = "[[flows]]\nname = \"users\"\n[flows.arrivals]\nprocess = \"closed_loop\"\nusers = 20\n\
        think = { dist = \"exponential\", mean = \"50ms\" }\nsize = \"10KB\"\nlimit = 3000\n";
    let s = scenario::from_toml(&dumbbell(60, groups)).unwrap();
    let mut sim = Simulation::new(&s).unwrap();
    let mut taken = 0;
    let mut peak = 0;
    for k in 1..=60 {
        sim.run_until(k * 1_000_000_000);
        taken += sim.take_transfers().rows();
        peak = peak.max(sim.slots());
    }
    let r = sim.finish();
    assert_eq!(taken + r.transfers.rows(), 3000, "the limit stops the arrivals");
    assert!(peak <= 40, "{peak} slots for 20 users and 3000 transfers");
    // Taken rows are not kept: the results hold only what was not taken.
    assert_eq!(r.transfers.rows(), 0);
}

#[test]
fn arrival_groups_are_classified_by_group_in_schedulers() {
    // A DRR bottleneck that pushes out of the longest queue when full: the listed flow has a
    // queue, the arrival group shares one.
    let groups = "[[flows]]\nname = \"bulk\"\n\
        [[flows]]\nname = \"web\"\n[flows.arrivals]\nprocess = \"poisson\"\nrate = 10\nsize = \"50KB\"\n";
    let toml = common::dumbbell(
        20,
        r#"rate = "10Mbps", delay = "20ms", queue = { kind = "drr", limit = 100, quantum = "1500B", overflow = "push_out_longest" }"#,
        groups,
    );
    let built = scenario::from_toml(&toml).unwrap().build().unwrap();
    let queues = built.net.links[0].scheduled().expect("scheduled").sched.queues.len();
    assert_eq!(queues, 2, "one DRR queue for the flow, one for the group");
    let (r, _) = run(&toml);
    common::assert_conservation(&r);
    // The group offers 4 Mbit/s, less than its half of the link: it gets what it offers, and
    // the bulk flow takes the rest.
    let t = &r.transfers;
    let done = (0..t.rows()).filter(|&i| t.f64("completion_time_s")[i].is_finite());
    let web = done.map(|i| t.i64("size_bytes")[i]).sum::<i64>() as f64 * 8.0 / 20.0;
    let bulk = r.flows.f64("goodput_bps")[0];
    assert!(web > 3.5e6 && bulk > 4.5e6 && web + bulk > 9e6, "web {web}, bulk {bulk}");
    // FQ-CoDel with buckets hashes each connection; priority classes take groups by name.
    for queue in [
        r#"{ kind = "fq_codel", limit = 1000, buckets = 16 }"#,
        r#"{ kind = "priority", limit = 100, classes = [ { flows = ["web"] }, { flows = ["bulk"] } ] }"#,
    ] {
        let toml = common::dumbbell(5, &format!(r#"rate = "10Mbps", delay = "20ms", queue = {queue}"#), groups);
        let (r, _) = run(&toml);
        assert!(r.transfers.rows() > 30, "{queue}: {} transfers", r.transfers.rows());
    }
}

#[test]
fn same_seed_same_transfers_and_common_sizes_across_algorithms() {
    let groups = |cc: &str| {
        format!(
            "[[flows]]\nname = \"users\"\ntcp = {{ cc = \"{cc}\" }}\n[flows.arrivals]\nprocess = \"closed_loop\"\n\
             users = 5\nthink = {{ dist = \"exponential\", mean = \"200ms\" }}\n\
             size = {{ dist = \"lognormal\", mean = \"50KB\", sd = \"100KB\" }}\n"
        )
    };
    let a = run(&dumbbell(20, &groups("reno"))).0.transfers;
    let b = run(&dumbbell(20, &groups("reno"))).0.transfers;
    assert_eq!(format!("{a:?}"), format!("{b:?}"), "deterministic");
    // Each user's k-th transfer has the same size whatever the algorithm (its own stream).
    let c = run(&dumbbell(20, &groups("cubic"))).0.transfers;
    let sizes = |t: &Table, u: i64| -> Vec<i64> {
        let mut rows: Vec<(f64, i64)> = (0..t.rows())
            .filter(|&i| t.i64("user")[i] == u)
            .map(|i| (t.f64("start_s")[i], t.i64("size_bytes")[i]))
            .collect();
        rows.sort_by(|x, y| x.0.total_cmp(&y.0));
        rows.into_iter().map(|r| r.1).collect()
    };
    for u in 0..5 {
        let (x, y) = (sizes(&a, u), sizes(&c, u));
        let k = x.len().min(y.len());
        assert!(k > 10);
        assert_eq!(x[..k], y[..k], "user {u}");
    }
}

#[test]
fn time_series_cover_transfers_only_while_they_run() {
    let groups = "[[flows]]\nname = \"t\"\n[flows.arrivals]\nprocess = \"trace\"\n\
        transfers = [[\"1s\", \"2MB\"], [\"3s\", \"2MB\"]]\n";
    let toml = dumbbell(6, groups).replace("seed = 5", "seed = 5\nsample_interval = \"10ms\"");
    let (r, _) = run(&toml);
    let (s, t) = (&r.flow_series, &r.transfers);
    for i in 0..t.rows() {
        let id = t.i64("transfer")[i];
        let (start, end) = (t.f64("start_s")[i], t.f64("start_s")[i] + t.f64("completion_time_s")[i]);
        let times: Vec<f64> = (0..s.rows()).filter(|&k| s.i64("flow")[k] == id).map(|k| s.f64("time_s")[k]).collect();
        assert!(!times.is_empty());
        assert!(times.iter().all(|&x| x >= start && x <= end + 1e-9), "transfer {id}: samples outside its life");
        assert!(times.len() as f64 >= (end - start) / 0.01 - 1.0);
    }
}

#[test]
fn mistakes_in_arrivals_are_named() {
    let err = |groups: &str| {
        let s = scenario::from_toml(&dumbbell(1, groups)).unwrap_or_else(|e| panic!("{e}"));
        Simulation::new(&s).err().expect("an error").to_string()
    };
    let arrivals = |table: &str| format!("[[flows]]\nname = \"w\"\n[flows.arrivals]\n{table}\n");
    assert_eq!(
        err(&arrivals("process = \"poisson\"\nsize = \"1KB\"")),
        "flows[0].arrivals.rate: is required: connections per second"
    );
    assert_eq!(
        err(&arrivals("process = \"poisson\"\nrate = 5\nsize = \"1KB\"\nusers = 4")),
        "flows[0].arrivals.users: not a field of process \"poisson\"; its fields are rate, size, limit"
    );
    assert_eq!(
        err(&arrivals("process = \"closed_loop\"\nusers = 4\nsize = \"1KB\"")),
        "flows[0].arrivals.think: is required: the think time between a user's transfers"
    );
    assert_eq!(
        err("[[flows]]\ncount = 3\n[flows.arrivals]\nprocess = \"poisson\"\nrate = 1\nsize = \"1KB\"\n"),
        "flows[0].count: not used with arrivals; a closed loop's users are arrivals.users"
    );
    assert_eq!(
        err("[[flows]]\ntransport = \"udp\"\nsource = { kind = \"cbr\", rate = \"1Mbps\" }\n[flows.arrivals]\nprocess = \"poisson\"\nrate = 1\nsize = \"1KB\"\n"),
        "flows[0].arrivals: opens TCP transfers; it is not available with transport = \"udp\""
    );
    let poisson = arrivals("process = \"poisson\"\nrate = 1\nsize = \"1KB\"");
    assert_eq!(
        err(&format!("{poisson}{poisson}")),
        "flows[1].name: \"w\" is also the name of flows[0]; groups with arrivals need distinct names"
    );
    assert!(err(&arrivals("process = \"trace\"\nfile = \"no-such-file.csv\""))
        .starts_with("flows[0].arrivals.file: cannot read \"no-such-file.csv\""));
    let e = scenario::from_toml(&dumbbell(1, &arrivals("process = \"poisson\"\nrate = 1\nsize = { dist = \"exp\" }")))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("flows[0].arrivals.size.dist: unknown variant `exp`"), "{e}");
}
