//! Every scenario shipped in `scenarios/` parses, builds and runs for a moment.

use flowshare_core::{scenario, Simulation};

#[test]
fn every_shipped_scenario_builds_and_runs() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&path).unwrap();
            let s = scenario::from_toml(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let mut sim = Simulation::new(&s).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            sim.run_until(200_000_000);
            assert!(sim.events() > 0, "{}: nothing happened", path.display());
            names.push(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    names.sort();
    for required in
        ["demo.toml", "r1-dumbbell.toml", "r2-dumbbell.toml", "parking-lot.toml", "graph.toml", "udp-cbr-vs-tcp.toml"]
    {
        assert!(names.iter().any(|n| n == required), "scenarios/{required} is missing");
    }
}
