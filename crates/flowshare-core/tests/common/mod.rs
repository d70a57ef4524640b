//! Shared by the integration tests: run a scenario written inline.

use flowshare_core::results::RunResults;
use flowshare_core::{scenario, Simulation};

/// Parse, build and run a TOML scenario; a malformed test scenario panics with the loader's
/// one-line error.
pub fn run(toml: &str) -> RunResults {
    let s = scenario::from_toml(toml).unwrap_or_else(|e| panic!("bad test scenario: {e}"));
    Simulation::new(&s).unwrap_or_else(|e| panic!("bad test scenario: {e}")).finish()
}
