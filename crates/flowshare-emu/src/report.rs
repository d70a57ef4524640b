//! What a run did: the link model's counters per direction and how late packets were written.

use crate::events::EventsReport;
use crate::timing::LatenessSummary;
use serde::Serialize;

/// One direction of the emulated link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DirReport {
    /// Packets offered to the queue.
    pub arrivals: u64,
    /// Bytes offered to the queue (IP total lengths).
    pub bytes: u64,
    /// Packets the queue dropped (overflow, AQM, push-outs, CoDel).
    pub drops: u64,
    /// Of `drops`, those decided by the AQM (RED, CoDel) rather than by a limit.
    pub early_drops: u64,
    /// Packets marked Congestion Experienced.
    pub marks: u64,
    /// Packets discarded by the direction's loss model.
    pub link_losses: u64,
    /// Packets written to the far device.
    pub departures: u64,
    /// Largest number of packets the queue held (including the one in transmission).
    pub max_queue: u32,
    /// Packets still queued or propagating when the run ended (not written).
    pub left_in_link: u64,
    /// Packets read that were not IPv4 (IPv6 above all), dropped unshaped.
    pub not_ipv4: u64,
    /// IPv4 packets with a malformed header, dropped.
    pub malformed: u64,
    /// With an event trace: packets that belong to no flow (another protocol, address or
    /// port, a fragment, a datagram the live transport refuses), carried but not traced.
    pub no_flow: Option<u64>,
    /// Actual write time minus the time the model said the packet arrives.
    pub lateness: LatenessSummary,
}

/// A whole run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct EmuReport {
    /// The side a → side b direction (the link's forward direction).
    pub forward: DirReport,
    /// The side b → side a direction.
    pub reverse: DirReport,
    /// Length of the run, from the devices being up to the end, in nanoseconds.
    pub elapsed_ns: u64,
    /// The event trace, when one was asked for.
    pub events: Option<EventsReport>,
}
