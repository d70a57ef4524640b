//! flowshare's endpoints over real UDP sockets and a real clock.
//!
//! The core's endpoints are sans-IO state machines; this crate drives one of them with a
//! monotonic clock and a non-blocking UDP socket, so that a connection of a scenario (a TCP
//! sender or sink with any of the library's congestion controls, a TFRC or MulTFRC sender or
//! receiver, a UDP source or sink) runs between two hosts of a real network. [`wire`] maps a
//! packet to one datagram and back; [`endpoint`] is the event loop; [`config`] says what an
//! endpoint runs and checks it; [`admit`] keeps what the network sends within what the agents
//! can take; [`reliable`] makes a sized TFRC or MulTFRC flow a reliable (selective-repeat)
//! transfer.
#![warn(missing_docs)]

pub mod admit;
pub mod config;
pub mod endpoint;
pub mod error;
pub mod peer_clock;
pub mod reliable;
pub mod report;
pub mod transport;
pub mod wire;

pub use config::EndpointConfig;
pub use endpoint::{run, run_endpoint, LiveEndpoint};
pub use error::LiveError;
pub use flowshare_core::agent::Side;
pub use reliable::Transfer;
pub use report::{AgentReport, Counters, EndpointReport, ReliableReport};
pub use transport::{Clock, MonotonicClock, Transport, UdpTransport};
pub use wire::{decode, encode, Datagram, WireError};
