//! The event engine: a time-ordered queue of small `Copy` events and named random streams.
//!
//! Packets do not travel through this queue: a link keeps its in-flight packets in its own
//! FIFO and schedules only the packet at the head (see [`crate::net::link`]), so the queue
//! holds about one entry per link direction and per timer, whatever the load.

mod queue;
mod rng;

pub use queue::{Event, EventQueue, WakeTag};
pub use rng::{stream, uniform, uniform_delay, Stream};
