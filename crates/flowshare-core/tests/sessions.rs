//! Sequential WWW sources (`process = "sessions"`): one page at a time per source, reading
//! times between the pages of a session, session gaps between sessions, the Reyes-Lecuona
//! preset's volume of transfers; and closed-loop users that restart at once (`think = "0s"`).

mod common;

use flowshare_core::results::Table;
use flowshare_core::{scenario, Simulation};

/// A 100 Mbps dumbbell with a 20 ms bottleneck, `seconds` long, no time series, with the
/// flow groups of `groups`.
fn dumbbell(seconds: u32, groups: &str) -> String {
    common::dumbbell(seconds, r#"rate = "100Mbps", delay = "20ms", queue = { limit = 200 }"#, groups)
        .replace("seed = 5", "seed = 5\nsample_interval = \"0s\"")
}

fn transfers(toml: &str) -> Table {
    let s = scenario::from_toml(toml).unwrap_or_else(|e| panic!("bad test scenario: {e}"));
    let mut sim = Simulation::new(&s).unwrap();
    sim.run_until(sim.end());
    sim.finish().transfers
}

/// Each source's transfers in order of start: (start, completion time, size).
fn by_source(t: &Table, source: i64) -> Vec<(f64, f64, i64)> {
    let mut rows: Vec<(f64, f64, i64)> = (0..t.rows())
        .filter(|&i| t.i64("user")[i] == source)
        .map(|i| (t.f64("start_s")[i], t.f64("completion_time_s")[i], t.i64("size_bytes")[i]))
        .collect();
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    rows
}

/// The pauses of a source: from each transfer's completion to the next one's start.
fn pauses(rows: &[(f64, f64, i64)]) -> Vec<f64> {
    rows.windows(2).map(|w| w[1].0 - (w[0].0 + w[0].1)).collect()
}

#[test]
fn a_source_reads_between_pages_and_pauses_between_sessions() {
    // Sessions of round(2.6) = 3 pages, 2 s reading, 7 s between sessions.
    let groups = "[[flows]]\nname = \"www\"\nstart = \"1s\"\n[flows.arrivals]\nprocess = \"sessions\"\nsources = 2\n\
        session_gap = \"7s\"\npages = 2.6\nthink = \"2s\"\nsize = \"30KB\"\n";
    let t = transfers(&dumbbell(100, groups));
    for s in 0..2 {
        let rows = by_source(&t, s);
        assert!(rows.len() > 15, "source {s}: {} pages", rows.len());
        // The first session starts one session gap after the group's start.
        assert!((rows[0].0 - 8.0).abs() < 1e-9, "source {s} starts at {}", rows[0].0);
        assert!(rows.iter().all(|r| r.2 == 30_000));
        let p = pauses(&rows[..rows.len() - 1]);
        for (k, gap) in p.iter().enumerate() {
            let want = if k % 3 == 2 { 7.0 } else { 2.0 };
            assert!((gap - want).abs() < 1e-6, "source {s}, pause {k}: {gap} s, not {want} s");
        }
    }
    assert!(by_source(&t, 2).is_empty(), "two sources, numbered 0 and 1");
}

#[test]
fn the_reyes_lecuona_preset_fetches_one_page_at_a_time_at_its_rate() {
    // Three sources of Table 3.1's model for 50,000 s.
    let seconds = 50_000.0;
    let groups = "[[flows]]\nname = \"www\"\n[flows.arrivals]\nprocess = \"sessions\"\nsources = 3\n\
        model = \"reyes_lecuona\"\n";
    let t = transfers(&dumbbell(seconds as u32, groups));
    let mut reading = Vec::new();
    for s in 0..3 {
        let rows = by_source(&t, s);
        // Never two pages of a source at once: each starts after the previous completed.
        let p = pauses(&rows);
        assert!(p.iter().all(|&g| g >= -1e-9), "source {s}: a page opened before the previous completed");
        assert!(rows.iter().all(|r| r.2 >= 30_458), "source {s}: a page below the Pareto minimum");
        // Reading times are most pauses; the largest ones include the session gaps.
        reading.extend(p);
    }
    // Per page: a reading time except after a session's last page (a session gap instead)
    // and a transfer. With mean 25.81 pages (rounded to the nearest), that is
    // 35.286 · 24.81/25.81 + 5/25.81 + transfer ≈ 34.1 s + transfer per source.
    let done: Vec<f64> = t.f64("completion_time_s").iter().copied().filter(|c| c.is_finite()).collect();
    let transfer = common::mean(&done);
    assert!(transfer > 0.04 && transfer < 1.0, "mean transfer time {transfer} s");
    let cycle = 35.286 * (1.0 - 1.0 / 25.81) + 5.0 / 25.81 + transfer;
    let expected = 3.0 * seconds / cycle;
    // The count's spread, from a Monte Carlo of the model without network, is about 6 % of
    // the mean at this length (heavy-tailed sessions and reading times): 4 of them.
    let n = t.rows() as f64;
    assert!((n / expected - 1.0).abs() < 0.25, "{n} pages, expected about {expected:.0}");
    // The pauses are reading times (gamma, median ≈ 0.003 s) and a few session gaps: more
    // than half of them are below 10 ms, and their mean is close to 34 s.
    let short = reading.iter().filter(|&&g| g < 0.01).count() as f64 / reading.len() as f64;
    assert!(short > 0.45 && short < 0.65, "{short} of the pauses are below 10 ms");
}

#[test]
fn sources_draw_the_same_pages_whatever_the_algorithm() {
    let groups = |cc: &str| {
        format!(
            "[[flows]]\nname = \"www\"\ntcp = {{ cc = \"{cc}\" }}\n[flows.arrivals]\nprocess = \"sessions\"\n\
             sources = 3\nmodel = \"reyes-lecuona\"\nthink = {{ dist = \"exponential\", mean = \"1s\" }}\n"
        )
    };
    let a = transfers(&dumbbell(300, &groups("reno")));
    let b = transfers(&dumbbell(300, &groups("reno")));
    assert_eq!(format!("{a:?}"), format!("{b:?}"), "deterministic");
    let c = transfers(&dumbbell(300, &groups("cubic")));
    for s in 0..3 {
        let (x, y) = (by_source(&a, s), by_source(&c, s));
        let k = x.len().min(y.len());
        assert!(k > 20, "source {s}: {k} pages");
        let sizes = |r: &[(f64, f64, i64)]| r[..k].iter().map(|r| r.2).collect::<Vec<_>>();
        assert_eq!(sizes(&x), sizes(&y), "source {s}");
    }
}

#[test]
fn closed_loop_users_with_zero_think_restart_at_once() {
    // Background senders that reopen their connection as soon as it terminated.
    let groups = "[[flows]]\nname = \"bg\"\nstart = \"2s\"\n[flows.arrivals]\nprocess = \"closed_loop\"\nusers = 1\n\
        think = \"0s\"\nsize = { dist = \"pareto\", scale = \"30458B\", shape = 1.7584 }\n";
    let t = transfers(&dumbbell(30, groups));
    let rows = by_source(&t, 0);
    assert!(rows.len() > 20, "{} transfers", rows.len());
    assert_eq!(rows[0].0, 2.0, "the first opens at the start");
    let p = pauses(&rows[..rows.len() - 1]);
    assert!(p.iter().all(|g| g.abs() < 1e-6), "each reopens as the previous completes: {p:?}");
}

#[test]
fn mistakes_in_sessions_are_named() {
    let err = |table: &str| {
        let toml =
            dumbbell(1, &format!("[[flows]]\nname = \"w\"\n[flows.arrivals]\nprocess = \"sessions\"\n{table}\n"));
        match scenario::from_toml(&toml) {
            Err(e) => e.to_string(),
            Ok(s) => Simulation::new(&s).err().expect("an error").to_string(),
        }
    };
    assert_eq!(
        err(""),
        "flows[0].arrivals.session_gap: is required: the time between a session's last page and the next session \
         (or give model = \"reyes_lecuona\")"
    );
    assert_eq!(
        err("model = \"reyes_lecuona\"\nrate = 1"),
        "flows[0].arrivals.rate: not a field of process \"sessions\"; its fields are sources, model, session_gap, \
         pages, pages_rounding, think, size, limit"
    );
    assert_eq!(err("model = \"reyes_lecuona\"\nsources = 0"), "flows[0].arrivals.sources: must be at least 1");
    assert_eq!(err("model = \"reyes_lecuona\"\npages = 0"), "flows[0].arrivals.pages: must be greater than 0, got 0");
    assert_eq!(
        err("model = \"reyes_lecuona\"\npages = { dist = \"lognormal\", mean = 25 }"),
        "flows[0].arrivals.pages.sd: is required with dist = \"lognormal\""
    );
    assert_eq!(
        err("model = \"reyes_lecuona\"\nsize = \"0B\""),
        "flows[0].arrivals.size: must be greater than 0, got 0B"
    );
    let e = err("model = \"reyes_lecuona\"\npages = \"25\"");
    assert!(e.starts_with("flows[0].arrivals.pages: "), "{e}");
    let e = err("model = \"reyes_lecuona\"\npages_rounding = \"down\"");
    assert!(e.starts_with("flows[0].arrivals.pages_rounding: unknown variant `down`"), "{e}");
    let e = err("model = \"surge\"");
    assert!(e.starts_with("flows[0].arrivals.model: unknown variant `surge`"), "{e}");
    let users = "[[flows]]\nname = \"w\"\n[flows.arrivals]\nprocess = \"closed_loop\"\nusers = 1\nthink = \"1s\"\nsize = \"1KB\"\npages = 3\n";
    let s = scenario::from_toml(&dumbbell(1, users)).unwrap();
    assert_eq!(
        Simulation::new(&s).err().expect("an error").to_string(),
        "flows[0].arrivals.pages: not a field of process \"closed_loop\"; its fields are users, think, size, limit"
    );
}

#[test]
fn the_normalized_scenario_writes_out_the_preset() {
    let groups = "[[flows]]\nname = \"www\"\n[flows.arrivals]\nprocess = \"sessions\"\nmodel = \"reyes_lecuona\"\n\
        think = \"1s\"\n";
    let j = scenario::from_toml(&dumbbell(1, groups)).unwrap().to_json();
    for part in [
        r#""model":"reyes_lecuona""#,
        r#""sources":1"#,
        r#""pages_rounding":"nearest""#,
        r#""session_gap":{"dist":"exponential","mean":"5s"}"#,
        r#""pages":{"dist":"lognormal","mean":25.807,"sd":78.752}"#,
        r#""think":"1s""#,
        r#""size":{"dist":"pareto","shape":1.7584,"scale":"30458B"}"#,
    ] {
        assert!(j.contains(part), "{part} not in {j}");
    }
    assert_eq!(scenario::from_json(&j).unwrap().to_json(), j, "it reads back the same");
}
