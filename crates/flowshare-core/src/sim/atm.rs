//! ATM cell links (ADR 0013): AAL5 segmentation where a packet enters a cell link, reassembly
//! where its cells leave the cell network.
//!
//! A packet (the frame) that reaches a cell link is parked in the arena and replaced by
//! ⌈(size + 8) / 48⌉ cells of 53 bytes, the last flagged `FRAME_END`; each cell names its
//! frame. Cells of a virtual circuit (a connection's direction) are never reordered, so the
//! exit keeps per circuit only the frames in transit, oldest first, and a count of the cells
//! of the oldest that arrived. A frame goes on when its last cell arrives and all of its cells
//! did; otherwise it is lost there, as AAL5's CRC would lose it. A frame whose last cell was
//! lost is merged, in AAL5, with the next frame's cells, so the next frame is lost too. Cell
//! losses are counted by the queues that drop them; the connection counts the frames lost.

use super::Simulation;
use crate::net::abr::Abr;
use crate::net::LinkId;
use crate::packet::{ecn, flags, Dir, Kind, Packet, PacketId};
use crate::trace::{EventKind, Reason};
use crate::units::Time;
use std::collections::VecDeque;

/// Bytes of an ATM cell on the wire.
pub const CELL_BYTES: u32 = 53;
/// Payload bytes of a cell.
pub const CELL_PAYLOAD: u32 = 48;
/// Bytes of the AAL5 trailer, carried in the frame's last cell.
pub const AAL5_TRAILER: u32 = 8;

/// Cells that carry a frame of `size` bytes: its bytes and the AAL5 trailer, padded to whole
/// cell payloads.
#[inline]
pub fn aal5_cells(size: u32) -> u32 {
    (size + AAL5_TRAILER).div_ceil(CELL_PAYLOAD)
}

/// What the exit of the cell network knows of one virtual circuit.
#[derive(Clone, Debug, Default)]
pub(super) struct Circuit {
    /// Frames segmented and not yet reassembled or lost, oldest first.
    frames: VecDeque<PacketId>,
    /// Cells of the oldest frame that have arrived.
    cells: u32,
    /// The oldest frame is merged with the rest of a frame whose last cell was lost.
    broken: bool,
    /// ABR: the link direction whose transmitter is the circuit's source (a forward circuit
    /// of a flow with `abr`), and the cells sent into it, RM cells included.
    abr: Option<(LinkId, u64)>,
}

/// The circuits of every connection, two per connection (indexed by `2 · conn + dir`).
#[derive(Debug, Default)]
pub(super) struct Circuits(Vec<Circuit>);

impl Circuits {
    /// Frames of connection `conn` travelling `dir` as cells.
    pub(super) fn in_transit(&self, conn: u32, dir: Dir) -> usize {
        self.0.get(2 * conn as usize + dir as usize).map_or(0, |c| c.frames.len())
    }

    /// Make the forward circuit of connection `conn` an ABR circuit whose source is the
    /// transmitter of `link`.
    pub(super) fn set_abr(&mut self, conn: u32, link: LinkId) {
        self.get(conn, Dir::Forward).abr = Some((link, 0));
    }

    /// ABR circuit of `conn` sends a data cell: whether a forward RM cell goes first (one
    /// cell in `nrm` is one, the circuit's first cell among them).
    fn rm_before_next(&mut self, conn: u32, nrm: u32) -> bool {
        let sent = &mut self.get(conn, Dir::Forward).abr.as_mut().expect("an ABR circuit").1;
        let rm = sent.is_multiple_of(u64::from(nrm));
        *sent += 1 + u64::from(rm);
        rm
    }

    fn get(&mut self, conn: u32, dir: Dir) -> &mut Circuit {
        let i = 2 * conn as usize + dir as usize;
        if i >= self.0.len() {
            self.0.resize_with(i + 1, Circuit::default);
        }
        &mut self.0[i]
    }
}

impl Simulation {
    /// Packet `id`, offered at `at` to the cell link at `hop` of its route, enters the cell
    /// network: park it and send its cells in its place.
    #[cold]
    #[inline(never)]
    pub(super) fn segment(&mut self, id: PacketId, hop: u16, at: Time) {
        let frame = *self.arena.get(id);
        self.arena.get_mut(id).hop = hop;
        if hop == 0 && self.trace.is_some() {
            self.trace_endpoint(EventKind::Send, &frame, Reason::None);
        }
        let circuit = self.circuits.get(frame.conn, frame.dir);
        circuit.frames.push_back(id);
        let abr = circuit.abr.map(|(link, _)| self.abr_source(link).params().nrm);
        let n = aal5_cells(frame.size);
        for k in 0..n {
            if abr.is_some_and(|nrm| self.circuits.rm_before_next(frame.conn, nrm)) {
                let mut rm = Packet::new(frame.conn, Kind::Cell, 0, CELL_BYTES, at);
                (rm.dir, rm.hop, rm.flags, rm.ecn) = (frame.dir, hop, flags::RM, ecn::ECT);
                self.send_cell(rm, at);
            }
            let mut cell = Packet::new(frame.conn, Kind::Cell, u64::from(id), CELL_BYTES, frame.ts);
            cell.dir = frame.dir;
            cell.hop = hop;
            if k + 1 == n {
                cell.flags |= flags::FRAME_END;
            }
            self.send_cell(cell, at);
        }
    }

    /// Put `cell` on its route at `at`.
    fn send_cell(&mut self, cell: Packet, at: Time) {
        let c = self.arena.alloc(cell);
        self.conns[cell.conn as usize].in_network += 1;
        self.forward(c, at);
    }

    /// The ABR source at the transmitter of `link`.
    fn abr_source(&mut self, link: LinkId) -> &mut Abr {
        self.net.links[link as usize].scheduled_mut().and_then(|s| s.abr.as_deref_mut()).expect("an ABR source link")
    }

    /// RM cell `id` leaves the cell network at `at`. A forward one is turned around there (the
    /// destination's end of the circuit) onto the reverse route's cell links, carrying the
    /// congestion indication of its CE bit; a backward one reaches its source, whose allowed
    /// cell rate follows it.
    #[cold]
    #[inline(never)]
    pub(super) fn rm_cell_out(&mut self, id: PacketId, at: Time) {
        let cell = *self.arena.get(id);
        match cell.dir {
            Dir::Forward => {
                let back = &self.conns[cell.conn as usize].paths[Dir::Reverse as usize];
                let entry = back.iter().position(|&l| self.net.links[l as usize].cells);
                let Some(hop) = entry else {
                    return self.free_packet(id, cell.conn);
                };
                let p = self.arena.get_mut(id);
                (p.dir, p.hop, p.ecn) = (Dir::Reverse, hop as u16, cell.ecn & ecn::CE);
                self.forward(id, at);
            }
            Dir::Reverse => {
                if let Some((link, _)) = self.circuits.get(cell.conn, Dir::Forward).abr {
                    self.abr_source(link).on_backward_rm(cell.ecn & ecn::CE != 0);
                }
                self.free_packet(id, cell.conn);
            }
        }
    }

    /// Cell `id` leaves the cell network: count it towards its frame, and return the frame
    /// when this was its last cell and it is whole (the caller sends it on).
    #[cold]
    #[inline(never)]
    pub(super) fn reassemble(&mut self, id: PacketId) -> Option<PacketId> {
        let cell = *self.arena.get(id);
        self.arena.free(id);
        self.conns[cell.conn as usize].in_network -= 1;
        let frame = cell.seq as PacketId;
        // Older frames with no cell to come lost their last cell; what arrived of them stays
        // in AAL5's reassembly buffer, and this frame's cells are appended to it.
        loop {
            let circuit = self.circuits.get(cell.conn, cell.dir);
            let older = *circuit.frames.front().expect("a cell of a frame in transit");
            if older == frame {
                break;
            }
            circuit.frames.pop_front();
            circuit.broken |= circuit.cells > 0;
            circuit.cells = 0;
            self.lose_frame(older);
        }
        let size = self.arena.get(frame).size;
        let circuit = self.circuits.get(cell.conn, cell.dir);
        circuit.cells += 1;
        if cell.flags & flags::FRAME_END == 0 {
            return None;
        }
        circuit.frames.pop_front();
        let complete = !circuit.broken && circuit.cells == aal5_cells(size);
        circuit.cells = 0;
        circuit.broken = false;
        if complete {
            return Some(frame);
        }
        self.lose_frame(frame);
        None
    }

    /// Frame `id` lost a cell: AAL5 discards it at reassembly.
    fn lose_frame(&mut self, id: PacketId) {
        let p = *self.arena.get(id);
        if self.trace.is_some() {
            self.trace_endpoint(EventKind::Drop, &p, Reason::Reassembly);
        }
        self.count_drop(&p);
        self.free_packet(id, p.conn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aal5_pads_the_frame_and_its_trailer_to_whole_cells() {
        // The thesis's 4,352-byte TCP packets: 4,360 bytes with the trailer, 91 cells.
        assert_eq!(aal5_cells(4352), 91);
        assert_eq!(aal5_cells(40), 1); // an ACK and its trailer fill one cell exactly
        assert_eq!(aal5_cells(41), 2);
        assert_eq!(aal5_cells(1500), 32);
    }
}
