//! A link emulator: packets leaving one network namespace through a TUN device cross
//! flowshare's own model of a link direction ([`flowshare_core::net::LinkDir`], built by the
//! scenario builder with its queue discipline and loss model) and enter another namespace
//! through a second TUN device at the time the model says they arrive. Real endpoints (a
//! kernel TCP, `flowshare-live`) then see the same DropTail, RED/ECN, DRR, FQ-CoDel and loss
//! behaviour as simulated flows do.
//!
//! One concept per module: [`netns`] enters namespaces, [`tun`] makes the devices, [`ipv4`]
//! reads what the model needs from a packet, [`clock`] keeps time and waits, `direction`
//! drives one [`LinkDir`](flowshare_core::net::LinkDir) in real time, [`timing`] summarizes
//! write-time errors, [`pcap`] records departures, [`flows`] tells which flow a packet
//! belongs to, [`events`] records the link events of the flows' packets, and [`emulator`]
//! puts them together.

pub mod clock;
mod direction;
pub mod emulator;
pub mod error;
pub mod events;
pub mod flows;
pub mod ipv4;
pub mod netns;
pub mod pcap;
pub mod report;
pub mod timing;
pub mod tun;

pub use emulator::{run, EmulatorConfig, LinkSelect};
pub use error::EmuError;
pub use events::{EventsConfig, EventsReport};
pub use flows::{FlowPorts, Stack};
pub use report::{DirReport, EmuReport};
