//! Whole-frame discard at an ATM cell queue (ADR 0013): early packet discard (EPD; A. Romanow
//! and S. Floyd, "Dynamics of TCP Traffic over ATM Networks", IEEE JSAC 13(4), 1995), EPD with
//! per-VC accounting (EPD/A; as G. Hasegawa, "Congestion and Fairness Control Mechanisms of TCP
//! for the High-Speed Internet", PhD thesis, Osaka University, 2000, §4.2.2, defines it) and
//! partial packet discard (PPD).
//!
//! A cell queue loses a whole frame (an AAL5 packet) when it loses any of its cells, so cells
//! of a frame that is already broken only waste the link. The policy keeps, per virtual circuit
//! (a connection, keyed by [`Meta::flow`]; a link direction carries one direction of it),
//! whether the circuit is between frames, inside an accepted frame or inside a discarded one;
//! `FRAME_END` on a frame's last cell closes the frame.
//!
//! - **EPD:** the first cell of a frame that finds more than `threshold` cells in the queue
//!   (counting the one in transmission, as the limit does) is discarded, and so is every later
//!   cell of its frame, the last one included. Otherwise the frame is accepted; its cells are
//!   still refused when the queue is full (tail drop).
//! - **EPD/A:** as EPD, but a frame of circuit i is accepted over the threshold when
//!   `Q_i < Q / N`, `Q_i` being the circuit's cells in the queue, `Q` all cells and `N` the
//!   circuits with cells in the queue.
//! - **PPD:** once a cell of an accepted frame is refused because the queue is full, the rest of
//!   the frame is discarded except its last cell, which delimits the frame for the receiver's
//!   AAL5 (without it the next frame would be lost too). `threshold` = the limit gives PPD
//!   without EPD.
//!
//! Discards are early drops (`Refusal::Early`); they do not wait for the queue to be full.

use crate::packet::Meta;
use std::collections::VecDeque;

/// Parameters of a frame-discard policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EpdParams {
    /// A frame whose first cell finds more cells than this in the queue is discarded.
    pub threshold: u32,
    /// EPD/A: accept a frame over the threshold when its circuit holds less than its share.
    pub accounting: bool,
    /// PPD: after a tail drop inside a frame, discard the rest of it but its last cell.
    pub ppd: bool,
}

/// Where a circuit is in its stream of frames.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Frame {
    /// The next cell starts a frame.
    #[default]
    Between,
    /// Inside a frame whose first cell was accepted.
    Accepting,
    /// Inside a frame discarded by EPD: every cell goes, the last one too.
    Discarding,
    /// Inside a frame that lost a cell to tail drop (PPD): every cell goes but the last.
    Partial,
}

/// Frame-discard state of one cell queue.
#[derive(Clone, Debug)]
pub struct Epd {
    params: EpdParams,
    /// Per circuit (indexed by flow), its place in its frames.
    frames: Vec<Frame>,
    /// EPD/A: per circuit, its cells in the queue.
    held: Vec<u32>,
    /// EPD/A: the circuit of each accepted cell, oldest first; the queue is a FIFO, so the
    /// cells that left are the oldest, as many as this holds beyond the queue's length.
    order: VecDeque<u32>,
    /// EPD/A: circuits with cells in the queue.
    active: u32,
}

impl Epd {
    /// A policy with no circuit seen yet.
    pub fn new(params: EpdParams) -> Self {
        Epd { params, frames: Vec::new(), held: Vec::new(), order: VecDeque::new(), active: 0 }
    }

    /// The parameters.
    pub fn params(&self) -> &EpdParams {
        &self.params
    }

    /// Whether cell `meta`, arriving at a queue holding `q` cells, is discarded before the
    /// queue's limit is checked. A cell not discarded is taken as accepted unless
    /// [`Epd::overflowed`] follows.
    pub fn discards(&mut self, q: u32, meta: &Meta) -> bool {
        let vc = meta.flow as usize;
        if vc >= self.frames.len() {
            self.frames.resize(vc + 1, Frame::Between);
            if self.params.accounting {
                self.held.resize(vc + 1, 0);
            }
        }
        if self.params.accounting {
            self.forget_departed(q);
        }
        let last = meta.frame_end();
        let inside = |f: Frame| if last { Frame::Between } else { f };
        let discard = match self.frames[vc] {
            Frame::Between => {
                let discard = q > self.params.threshold && !(self.params.accounting && self.under_share(vc, q));
                self.frames[vc] = inside(if discard { Frame::Discarding } else { Frame::Accepting });
                discard
            }
            Frame::Accepting => {
                self.frames[vc] = inside(Frame::Accepting);
                false
            }
            Frame::Discarding => {
                self.frames[vc] = inside(Frame::Discarding);
                true
            }
            Frame::Partial => {
                self.frames[vc] = inside(Frame::Partial);
                !last
            }
        };
        if self.params.accounting && !discard {
            self.held[vc] += 1;
            self.active += u32::from(self.held[vc] == 1);
            self.order.push_back(meta.flow);
        }
        discard
    }

    /// Cell `meta`, admitted by [`Epd::discards`], found the queue full.
    pub fn overflowed(&mut self, meta: &Meta) {
        let vc = meta.flow as usize;
        if self.params.ppd && self.frames[vc] == Frame::Accepting {
            self.frames[vc] = Frame::Partial;
        }
        if self.params.accounting {
            self.order.pop_back();
            self.held[vc] -= 1;
            self.active -= u32::from(self.held[vc] == 0);
        }
    }

    /// EPD/A: forget the cells that left a queue now holding `q`.
    fn forget_departed(&mut self, q: u32) {
        for _ in q as usize..self.order.len() {
            let v = self.order.pop_front().expect("more cells recorded than queued") as usize;
            self.held[v] -= 1;
            self.active -= u32::from(self.held[v] == 0);
        }
    }

    /// EPD/A: whether circuit `vc` holds less than its share `q / N` of a queue of `q` cells.
    fn under_share(&self, vc: usize, q: u32) -> bool {
        u64::from(self.held[vc]) * u64::from(self.active) < u64::from(q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::flags;

    fn cell(flow: u32, last: bool) -> Meta {
        let flags = if last { flags::FRAME_END } else { 0 };
        Meta { flow, group: 0, size: 53, ecn: 0, flags }
    }

    /// Offer a frame of `n` cells of `flow` to a queue that holds `q` cells before it and
    /// `limit` at most; no cell leaves meanwhile. Returns (discarded, refused as full).
    fn frame(e: &mut Epd, flow: u32, n: u32, q: &mut u32, limit: u32) -> (u32, u32) {
        let (mut early, mut full) = (0, 0);
        for k in 0..n {
            let c = cell(flow, k + 1 == n);
            if e.discards(*q, &c) {
                early += 1;
            } else if *q >= limit {
                e.overflowed(&c);
                full += 1;
            } else {
                *q += 1;
            }
        }
        (early, full)
    }

    #[test]
    fn epd_decides_on_the_first_cell_and_keeps_the_decision_across_the_frame() {
        let mut e = Epd::new(EpdParams { threshold: 50, accounting: false, ppd: false });
        // 50 cells queued: not above the threshold, so the 91-cell frame is accepted whole even
        // though the queue passes the threshold after its first cell.
        let mut q = 50;
        assert_eq!(frame(&mut e, 0, 91, &mut q, 1000), (0, 0));
        assert_eq!(q, 141);
        // Now above it: the next frame of any circuit is discarded whole, its last cell too.
        assert_eq!(frame(&mut e, 1, 91, &mut q, 1000), (91, 0));
        assert_eq!(frame(&mut e, 0, 91, &mut q, 1000), (91, 0));
        // The table entry cleared at the last cell: with the queue back under the threshold,
        // the circuit's next frame is accepted.
        q = 10;
        assert_eq!(frame(&mut e, 1, 91, &mut q, 1000), (0, 0));
    }

    #[test]
    fn an_accepted_frame_meets_tail_drop_and_ppd_spares_only_its_last_cell() {
        // PPD alone (threshold = limit). 20 cells of room: 20 accepted, 71 refused as full, the last one among them.
        let mut plain = Epd::new(EpdParams { threshold: 1000, accounting: false, ppd: false });
        let mut q = 980;
        assert_eq!(frame(&mut plain, 0, 91, &mut q, 1000), (0, 71));
        // PPD: the first refusal discards the next 69 cells early; the last cell still meets the
        // limit (refused here, as the queue is full).
        let mut ppd = Epd::new(EpdParams { threshold: 1000, accounting: false, ppd: true });
        let mut q = 980;
        assert_eq!(frame(&mut ppd, 0, 91, &mut q, 1000), (69, 2));
        // With room again by the last cell, PPD lets the last cell in to end the frame.
        let mut ppd = Epd::new(EpdParams { threshold: 1000, accounting: false, ppd: true });
        let mut q = 998;
        let (mut early, mut full) = (0, 0);
        for k in 0..10 {
            let c = cell(0, k == 9);
            if ppd.discards(q, &c) {
                early += 1;
            } else if q >= 1000 {
                ppd.overflowed(&c);
                full += 1;
            } else {
                q += 1;
            }
            if k == 5 {
                q = 0; // the queue drains meanwhile
            }
        }
        assert_eq!((early, full, q), (6, 1, 1));
    }

    #[test]
    fn epd_a_accepts_a_circuit_below_its_share_over_the_threshold() {
        let mut e = Epd::new(EpdParams { threshold: 100, accounting: true, ppd: false });
        let mut q = 0;
        // Circuit 0 fills 182 cells (two frames), circuit 1 holds 91: Q = 273 > 100.
        frame(&mut e, 0, 91, &mut q, 10_000);
        frame(&mut e, 0, 91, &mut q, 10_000);
        frame(&mut e, 1, 91, &mut q, 10_000);
        assert_eq!((q, e.active), (273, 2));
        // Q / N = 136.5: circuit 1 (91 cells) is below its share, circuit 0 (182) above.
        assert_eq!(frame(&mut e, 1, 91, &mut q, 10_000), (0, 0));
        assert_eq!(frame(&mut e, 0, 91, &mut q, 10_000), (91, 0));
        // A circuit with no cell queued is always below its share.
        assert_eq!(frame(&mut e, 2, 91, &mut q, 10_000), (0, 0));
        // The 455 cells queued so far leave but 150 (the oldest first: circuit 0's 182, then
        // circuit 1's): circuit 2 (91 cells) now holds more than its share, 150 / 2.
        assert!(e.discards(150, &cell(2, false)));
        assert_eq!((e.active, e.order.len(), e.held[0], e.held[1], e.held[2]), (2, 150, 0, 59, 91));
    }
}
