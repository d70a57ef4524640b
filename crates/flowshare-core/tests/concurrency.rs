//! The `concurrency` table (`[trace] concurrency`): a snapshot of every open transfer of the
//! named flow groups whenever one of them opens or completes.

mod common;

use flowshare_core::results::{RunResults, Table};
use flowshare_core::{scenario, Simulation};

/// A dumbbell (10 Mbps, 10 ms) with three trace-driven groups: `a` opens 100 KB at 0 s, `b`
/// 20 KB at 0 s and 0.5 s, `c` 30 KB at 0.1 s; `[trace]` given by `trace`.
fn scenario(trace: &str) -> String {
    common::dumbbell(
        3,
        r#"rate = "10Mbps", delay = "10ms""#,
        &format!(
            r#"
[[flows]]
name = "a"
tcp = {{ initial_window = 3 }}
[flows.arrivals]
process = "trace"
transfers = [["0s", "100KB"]]
[[flows]]
name = "b"
tcp = {{ initial_window = 3 }}
[flows.arrivals]
process = "trace"
transfers = [["0s", "20KB"], ["0.5s", "20KB"]]
[[flows]]
name = "c"
[flows.arrivals]
process = "trace"
transfers = [["0.1s", "30KB"]]
{trace}
"#
        ),
    )
}

fn run(trace: &str) -> RunResults {
    common::run(&scenario(trace))
}

/// The rows as (time, transfer, sent, acked).
fn rows(t: &Table) -> Vec<(f64, i64, i64, i64)> {
    let (time, id, sent, acked) = (t.f64("time_s"), t.i64("transfer"), t.i64("sent_bytes"), t.i64("acked_bytes"));
    (0..time.len()).map(|k| (time[k], id[k], sent[k], acked[k])).collect()
}

/// Transfers a (0) and b (1, then 3) followed, c (2) not. At 0 s a opens alone, then b opens
/// with a's first window of 3 segments sent (4380 B); each completion lists the transfers open,
/// itself with every byte sent and acknowledged.
#[test]
fn rows_at_each_opening_and_completion_of_the_named_groups() {
    let r = run("[trace]\nconcurrency = [\"a\", \"b\"]");
    let t = r.concurrency.as_ref().expect("the table is asked for");
    let names: Vec<&str> = t.columns.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["time_s", "transfer", "sent_bytes", "acked_bytes"]);
    let rows = rows(t);
    assert_eq!(rows[..3], [(0.0, 0, 0, 0), (0.0, 0, 4380, 0), (0.0, 1, 0, 0)]);
    let completed: std::collections::HashMap<i64, f64> = r
        .transfers
        .i64("transfer")
        .iter()
        .zip(r.transfers.f64("start_s").iter().zip(r.transfers.f64("completion_time_s")))
        .map(|(&id, (&s, &d))| (id, s + d))
        .collect();
    assert_eq!(completed.len(), 4, "every transfer completed");
    // Group rows by event: the openings of 0, 1 and 3 and the completions of 0, 1 and 3.
    let mut events = Vec::new();
    let mut k = 0;
    while k < rows.len() {
        let at = rows[k].0;
        let n = rows[k..].iter().take_while(|r| r.0 == at).count();
        events.push(rows[k..k + n].to_vec());
        k += n;
    }
    // At 0 s: two events (a opens, b opens), written together at one time.
    assert_eq!(events.len(), 5, "{events:?}");
    for ev in &events[1..] {
        let at = ev[0].0;
        let ids: Vec<i64> = ev.iter().map(|r| r.1).collect();
        assert!(!ids.contains(&2), "c is not followed");
        let completing: Vec<&(f64, i64, i64, i64)> =
            ev.iter().filter(|r| (completed[&r.1] - at).abs() < 1e-9).collect();
        if at == 0.5 {
            // b's second transfer opens: it has sent nothing; b's first finished long before.
            assert_eq!(ev.last(), Some(&(0.5, 3, 0, 0)));
            assert!(completing.is_empty());
        } else {
            assert_eq!(completing.len(), 1, "one completion at {at}: {ev:?}");
            let c = completing[0];
            let size = if c.1 == 0 { 100_000 } else { 20_000 };
            assert_eq!((c.2, c.3), (size, size), "the completing transfer, all sent and acknowledged");
        }
        for r in ev {
            assert!(r.3 <= r.2, "acknowledged no more than sent: {r:?}");
        }
    }
    // Progress never goes back, and times are in event order.
    for w in rows.windows(2) {
        assert!(w[1].0 >= w[0].0);
    }
    for id in [0, 1, 3] {
        let mine: Vec<_> = rows.iter().filter(|r| r.1 == id).collect();
        assert!(mine.windows(2).all(|w| w[1].2 >= w[0].2 && w[1].3 >= w[0].3), "{id}: {mine:?}");
    }
}

/// Without the option there is no table, and the option changes nothing else in the run.
#[test]
fn the_table_is_opt_in_and_changes_nothing_else() {
    let plain = run("");
    assert!(plain.concurrency.is_none());
    let none = run("[trace]\nconcurrency = []");
    assert!(none.concurrency.is_none(), "an empty list asks for no table");
    let with = run("[trace]\nconcurrency = [\"c\"]");
    assert_eq!(rows(with.concurrency.as_ref().unwrap()).len(), 2, "c's opening and completion");
    assert_eq!(with.summary.events, plain.summary.events);
    assert_eq!(with.transfers.f64("completion_time_s"), plain.transfers.f64("completion_time_s"));
}

/// A name that is not a group with arrivals is refused, naming the field and the groups
/// allowed.
#[test]
fn unknown_and_listed_groups_are_refused() {
    let err = |trace: &str, extra: &str| {
        let text = scenario(trace) + extra;
        let s = scenario::from_toml(&text).unwrap_or_else(|e| panic!("{e}"));
        Simulation::new(&s).err().map(|e| e.to_string())
    };
    assert_eq!(
        err("[trace]\nconcurrency = [\"a\", \"x\"]", "").as_deref(),
        Some("trace.concurrency[1]: no flow group is named \"x\"; give groups with arrivals: \"a\", \"b\", \"c\"")
    );
    assert_eq!(
        err("[trace]\nconcurrency = [\"bulk\"]", "[[flows]]\nname = \"bulk\"\n").as_deref(),
        Some(
            "trace.concurrency[0]: flow group \"bulk\" has no arrivals, so it opens no transfers; give groups with \
             arrivals: \"a\", \"b\", \"c\""
        )
    );
}
