//! The files of a small run, written twice: every file there, the same bytes both times, and a
//! plot whose panels describe what the run did.

use flowshare_core::{scenario, Simulation};
use flowshare_output::plot::{build, PlotInput};
use flowshare_output::{write_run, Frame};

const SCENARIO: &str = r#"
[simulation]
duration = "3s"
seed = 2
sample_interval = "50ms"

[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "10ms", queue = { limit = 40 } }
access = { rate = "100Mbps", delay = "1ms" }

[[flows]]
name = "bulk"
count = 2

[[flows]]
name = "cbr"
transport = "udp"
[flows.source]
kind = "cbr"
rate = "2Mbps"
packet_size = "1000B"
"#;

fn run() -> flowshare_core::results::RunResults {
    let s = scenario::from_toml(SCENARIO).expect("valid scenario");
    let mut sim = Simulation::new(&s).expect("builds");
    sim.run_until(sim.end());
    sim.finish()
}

fn dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("flowshare-output-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn files_are_written_and_deterministic() {
    let results = run();
    let (a, b) = (dir("a"), dir("b"));
    let names = write_run(&results, &a).unwrap();
    write_run(&run(), &b).unwrap();
    for name in names {
        let (x, y) = (std::fs::read(a.join(name)).unwrap(), std::fs::read(b.join(name)).unwrap());
        assert!(!x.is_empty(), "{name}");
        assert_eq!(x, y, "{name} differs between two runs");
    }
    assert!(std::fs::read(a.join("plot.png")).unwrap().starts_with(b"\x89PNG\r\n\x1a\n"));
    assert!(std::fs::read(a.join("timeseries.parquet")).unwrap().starts_with(b"PAR1"));
    let csv = std::fs::read_to_string(a.join("flows.csv")).unwrap();
    assert!(csv.starts_with("flow,name,"));
    assert_eq!(csv.lines().count(), 4);
    std::fs::remove_dir_all(a).ok();
    std::fs::remove_dir_all(b).ok();
}

#[test]
fn the_cwnd_panel_leaves_out_udp_and_the_goodput_stays_within_capacity() {
    let r = run();
    let input = PlotInput {
        flows: Frame::from_table(&r.flows),
        queues: Frame::from_table(&r.queues),
        flow_series: Frame::from_table(&r.flow_series),
        queue_series: Frame::from_table(&r.queue_series),
        delays: None,
        duration_s: r.summary.duration_s,
    };
    let panels = build(&input);
    let ids: Vec<&str> = panels.iter().map(|p| p.id).collect();
    assert_eq!(ids, ["goodput", "send_rate", "cwnd", "queue", "rtt_cdf"]);
    let cwnd = &panels[2];
    assert!(cwnd.title.starts_with("cwnd of the 2 TCP flows"), "{}", cwnd.title);
    assert!(cwnd.series.iter().all(|s| s.name.starts_with("bulk")));
    assert_eq!(panels[0].series.iter().filter(|s| s.name.starts_with("cbr")).count(), 1);
    let total = panels[0].series.iter().find(|s| s.name.starts_with("total")).unwrap();
    assert!(total.points.iter().all(|p| p.1 <= 10.0 + 1e-9), "{:?}", total.points);
}
