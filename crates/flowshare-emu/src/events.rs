//! The event trace of the emulated link: every `enqueue`, `dequeue` and `drop` the link
//! model decides for a packet of a flow, with the simulator's meaning of each (`docs/traces.md`,
//! `flowshare_core::trace`), written to a file of fixed-size records while the run goes on.
//!
//! Each record is [`RECORD_LEN`] bytes, little-endian:
//!
//! | offset | type | field |
//! |---:|---|---|
//! | 0 | i64 | time, CLOCK_MONOTONIC ns (the clock every namespace shares) |
//! | 8 | u64 | `seq` |
//! | 16 | u32 | `flow` |
//! | 20 | i32 | `link` (the direction's index in the scenario's network) |
//! | 24 | u32 | `size` (IPv4 total length) |
//! | 28 | u8 | `kind` code ([`EventKind`]) |
//! | 29 | u8 | `packet` code ([`flowshare_core::trace::PACKET_NAMES`]) |
//! | 30 | u8 | `retx` (0 or 1) |
//! | 31 | u8 | `reason` code ([`Reason`]) |
//!
//! Records come in time order (equal times in the order the events happened, so a packet's
//! events are in causal order): a FIFO direction knows a packet's dequeue, and a loss on the
//! wire, when it accepts the packet, as the simulator does; such events wait in memory (a few
//! per packet in the link) until the emulator's clock has passed them. Events the clock never
//! reached before the run ended are not written, as a simulation lists nothing after its end.

use crate::flows::{Classified, FlowPorts};
use crate::EmuError;
use flowshare_core::net::LinkId;
use flowshare_core::trace::{code_names, EventKind, Reason, TraceSpec};
use flowshare_core::units::Time;
use serde::{Deserialize, Serialize, Serializer};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Bytes of one record.
pub const RECORD_LEN: usize = 32;

/// What to trace and where: the records' file and the flows' ports.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventsConfig {
    /// The file of records (created, or truncated).
    pub path: PathBuf,
    /// The flows and their ports; packets of no flow are left out (and counted).
    pub flows: Vec<FlowPorts>,
}

/// One event, waiting for the clock to pass it.
#[derive(Clone, Copy, Debug)]
struct Pending {
    time: Time,
    /// Recording order, which breaks ties.
    order: u64,
    record: [u8; RECORD_LEN],
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.order) == (other.time, other.order)
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Pending {
    /// Reversed, so that the max-heap yields the earliest event first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.order).cmp(&(self.time, self.order))
    }
}

/// The record of an event.
fn encode(t_abs: i64, kind: EventKind, link: LinkId, c: &Classified, size: u32, reason: Reason) -> [u8; RECORD_LEN] {
    let mut r = [0u8; RECORD_LEN];
    r[0..8].copy_from_slice(&t_abs.to_le_bytes());
    r[8..16].copy_from_slice(&c.seq.to_le_bytes());
    r[16..20].copy_from_slice(&c.flow.to_le_bytes());
    r[20..24].copy_from_slice(&(link as i32).to_le_bytes());
    r[24..28].copy_from_slice(&size.to_le_bytes());
    r[28] = kind as u8;
    r[29] = c.packet;
    r[30] = u8::from(c.retx);
    r[31] = reason as u8;
    r
}

/// The records being written.
#[derive(Debug)]
pub(crate) struct EventLog {
    out: BufWriter<File>,
    path: PathBuf,
    /// The scenario's `[trace]` filters (its time window is relative to the run's time zero,
    /// which only the caller knows, and is applied there).
    filter: TraceSpec,
    /// CLOCK_MONOTONIC at model time 0.
    t0: u64,
    pending: BinaryHeap<Pending>,
    order: u64,
    written: u64,
}

impl EventLog {
    /// Create `path` for the events whose kind, flow and link `filter` keeps.
    pub(crate) fn create(path: &Path, filter: TraceSpec) -> Result<EventLog, EmuError> {
        let file = File::create(path).map_err(|source| EmuError::Events { path: path.to_path_buf(), source })?;
        Ok(EventLog {
            out: BufWriter::with_capacity(1 << 16, file),
            path: path.to_path_buf(),
            filter,
            t0: 0,
            pending: BinaryHeap::new(),
            order: 0,
            written: 0,
        })
    }

    /// Model time 0 is `t0` on CLOCK_MONOTONIC.
    pub(crate) fn start(&mut self, t0: u64) {
        self.t0 = t0;
    }

    /// Record an event of packet `c` (of `size` bytes) at model time `t` on direction `link`.
    pub(crate) fn record(&mut self, t: Time, kind: EventKind, link: LinkId, c: &Classified, size: u32, reason: Reason) {
        if !(self.filter.keeps(kind, c.flow) && self.filter.keeps_link(link)) {
            return;
        }
        let t_abs = i64::try_from(self.t0.saturating_add(t)).unwrap_or(i64::MAX);
        let record = encode(t_abs, kind, link, c, size, reason);
        self.pending.push(Pending { time: t, order: self.order, record });
        self.order += 1;
    }

    /// Write the events at or before `t`, in order: the caller has recorded every event up to
    /// `t`, and records none before it from now on.
    pub(crate) fn flush_upto(&mut self, t: Time) -> Result<(), EmuError> {
        while self.pending.peek().is_some_and(|p| p.time <= t) {
            let p = self.pending.pop().expect("peeked");
            self.out.write_all(&p.record).map_err(|source| EmuError::Events { path: self.path.clone(), source })?;
            self.written += 1;
        }
        Ok(())
    }

    /// Write the events at or before `end`, leave out the later ones, and close the file;
    /// returns the number of records written.
    pub(crate) fn finish(mut self, end: Time) -> Result<u64, EmuError> {
        self.flush_upto(end)?;
        self.out.flush().map_err(|source| EmuError::Events { path: self.path.clone(), source })?;
        Ok(self.written)
    }
}

/// The names of the codes of the records' `kind`, `packet` and `reason` fields, as the
/// simulator's event table has them (serialized as `{"kind": [...], ...}`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EventCodes;

impl Serialize for EventCodes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let names = code_names();
        let mut m = s.serialize_map(Some(names.len()))?;
        for (column, codes) in &names {
            m.serialize_entry(column, codes)?;
        }
        m.end()
    }
}

/// What the event trace holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct EventsReport {
    /// Records written.
    pub records: u64,
    /// Bytes of one record ([`RECORD_LEN`]).
    pub record_len: usize,
    /// The names of the coded fields' codes.
    pub codes: EventCodes,
}

/// The records of file `path` as (time, seq, flow, link, kind, reason), removing the file.
#[cfg(test)]
pub(crate) fn read_records(path: &Path) -> Vec<(i64, u64, u32, i32, u8, u8)> {
    let bytes = std::fs::read(path).unwrap();
    std::fs::remove_file(path).unwrap();
    assert_eq!(bytes.len() % RECORD_LEN, 0);
    bytes
        .chunks(RECORD_LEN)
        .map(|r| {
            (
                i64::from_le_bytes(r[0..8].try_into().unwrap()),
                u64::from_le_bytes(r[8..16].try_into().unwrap()),
                u32::from_le_bytes(r[16..20].try_into().unwrap()),
                i32::from_le_bytes(r[20..24].try_into().unwrap()),
                r[28],
                r[31],
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use flowshare_core::packet::Kind;
    use flowshare_core::trace::packet_code;

    fn packet(flow: u32, seq: u64) -> Classified {
        Classified { flow, packet: packet_code(Kind::Data), seq, retx: false }
    }

    /// The record layout, byte for byte: `tests/test_live.py` decodes these same bytes with
    /// the reader's field list, so a field moved on either side fails one of the two tests.
    pub(crate) const PINNED_RECORD: [u8; RECORD_LEN] = [
        0x34, 0x12, 0, 0, 0, 0, 0, 0, // time 0x1234
        0x07, 0x06, 0, 0, 0, 0, 0, 0, // seq 0x0607
        5, 0, 0, 0, // flow 5
        3, 0, 0, 0, // link 3
        0x09, 0x08, 0, 0, // size 0x0809
        3, // kind: drop
        1, // packet: ack
        1, // retx
        1, // reason: overflow
    ];

    #[test]
    fn a_record_has_the_documented_layout() {
        let path = std::env::temp_dir().join(format!("flowshare-emu-layout-{}.bin", std::process::id()));
        let mut log = EventLog::create(&path, TraceSpec::everything()).unwrap();
        log.start(0x1000);
        let ack = Classified { flow: 5, packet: packet_code(Kind::Ack), seq: 0x0607, retx: true };
        log.record(0x0234, EventKind::Drop, 3, &ack, 0x0809, Reason::Overflow);
        assert_eq!(log.finish(0x0234).unwrap(), 1);
        let bytes = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(bytes, PINNED_RECORD);
    }

    #[test]
    fn records_come_out_in_time_order_and_later_ones_are_left_out() {
        let path = std::env::temp_dir().join(format!("flowshare-emu-events-{}.bin", std::process::id()));
        let mut log = EventLog::create(&path, TraceSpec::everything()).unwrap();
        log.start(1_000);
        // A FIFO's enqueue and its dequeue, known ahead; then an arrival dropped before it.
        log.record(10, EventKind::Enqueue, 0, &packet(0, 0), 1500, Reason::None);
        log.record(50, EventKind::Dequeue, 0, &packet(0, 0), 1500, Reason::None);
        log.record(20, EventKind::Drop, 1, &packet(1, 0), 52, Reason::Overflow);
        log.flush_upto(20).unwrap();
        // At equal times the recording order holds.
        log.record(50, EventKind::Enqueue, 0, &packet(0, 1), 1500, Reason::None);
        log.record(90, EventKind::Dequeue, 0, &packet(0, 1), 1500, Reason::None);
        assert_eq!(log.finish(60).unwrap(), 4);
        let got = read_records(&path);
        let (enq, deq, drop) = (EventKind::Enqueue as u8, EventKind::Dequeue as u8, EventKind::Drop as u8);
        assert_eq!(
            got,
            [
                (1_010, 0, 0, 0, enq, 0),
                (1_020, 0, 1, 1, drop, Reason::Overflow as u8),
                (1_050, 0, 0, 0, deq, 0),
                (1_050, 1, 0, 0, enq, 0),
            ]
        );
    }

    #[test]
    fn the_filter_keeps_flows_links_and_kinds_asked_for() {
        let f = TraceSpec {
            flow_mask: vec![false, true],
            link_mask: vec![true, false],
            kind_mask: 1 << EventKind::Drop as u8,
            ..TraceSpec::everything()
        };
        let keeps = |kind, flow, link| f.keeps(kind, flow) && f.keeps_link(link);
        assert!(keeps(EventKind::Drop, 1, 0));
        assert!(!keeps(EventKind::Drop, 0, 0));
        assert!(!keeps(EventKind::Drop, 1, 1));
        assert!(!keeps(EventKind::Enqueue, 1, 0));
        assert!(!keeps(EventKind::Drop, 2, 0), "a flow beyond the mask");
        assert!(!keeps(EventKind::Drop, 1, 2), "a link beyond the mask");
        let all = TraceSpec::everything();
        assert!(all.keeps(EventKind::Dequeue, 99) && all.keeps_link(7));
    }

    #[test]
    fn codes_are_the_simulators() {
        let json =
            serde_json::to_value(EventsReport { records: 3, record_len: RECORD_LEN, codes: EventCodes }).unwrap();
        assert_eq!(json["records"], 3);
        assert_eq!(json["codes"]["kind"][1], "enqueue");
        assert_eq!(json["codes"]["reason"][1], "overflow");
        assert_eq!(json["codes"]["packet"][0], "data");
    }
}
