//! flowshare-core: a deterministic, packet-level congestion-control simulator.
//!
//! A validated [`scenario::Scenario`] is turned into a [`sim::Simulation`], which advances
//! simulated time (integer nanoseconds) through one event loop and produces columnar
//! [`results::RunResults`]. Nothing here reads a wall clock into results, spawns threads or
//! uses an unseeded random source: the same scenario and seed give byte-identical results.
//!
//! Layers: [`engine`] (time, events, random streams) → [`net`] (nodes, links, queues,
//! routes) → [`agent`] (the endpoints: [`tcp`] sender and sink mechanism, [`traffic`] sources
//! and their UDP transport, [`tfrc`]) → [`cc`] (congestion-control policy, run by one host for every
//! connection).
#![warn(missing_docs)]

pub mod agent;
pub mod cc;
pub mod engine;
pub mod error;
pub mod loss_events;
pub mod net;
pub mod packet;
pub mod results;
pub mod ring;
pub mod scenario;
pub mod sim;
pub mod stats;
pub mod table;
pub mod tcp;
pub mod tfrc;
pub mod trace;
pub mod traffic;
pub mod units;

pub use error::ConfigError;
pub use scenario::Scenario;
pub use sim::Simulation;

/// Crate version, recorded in every run's summary.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
