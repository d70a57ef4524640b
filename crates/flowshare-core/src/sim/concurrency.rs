//! The `concurrency` table (`[trace] concurrency`): snapshots of the progress of the open
//! transfers of chosen flow groups, taken whenever one of them opens or completes, so that
//! throughput can be measured over periods in which transfers ran concurrently.
//!
//! The log keeps the slots of the open transfers of those groups in opening order; an opening
//! or a completion writes one row per slot in that list. The cost is per opening and
//! completion, proportional to the transfers open: nothing on the per-packet path.

use super::Simulation;
use crate::results::{Column, Table};
use crate::units::secs;

/// Open transfers of the chosen groups, and the rows written so far.
#[derive(Debug)]
pub(super) struct Concurrency {
    /// Per flow group, whether its transfers are followed.
    groups: Vec<bool>,
    /// Slots of the followed transfers now open, in opening order.
    open: Vec<u32>,
    time: Vec<f64>,
    transfer: Vec<i64>,
    sent: Vec<i64>,
    acked: Vec<i64>,
}

impl Concurrency {
    /// A log following the flow groups marked in `groups`.
    pub(super) fn new(groups: Vec<bool>) -> Self {
        Concurrency {
            groups,
            open: Vec::new(),
            time: Vec::new(),
            transfer: Vec::new(),
            sent: Vec::new(),
            acked: Vec::new(),
        }
    }

    /// The rows written since the last call, as a table; the rows are dropped, the open
    /// transfers kept.
    pub(super) fn take(&mut self) -> Table {
        let mut t = Table::default();
        t.push("time_s", Column::F64(std::mem::take(&mut self.time)));
        t.push("transfer", Column::I64(std::mem::take(&mut self.transfer)));
        t.push("sent_bytes", Column::I64(std::mem::take(&mut self.sent)));
        t.push("acked_bytes", Column::I64(std::mem::take(&mut self.acked)));
        t
    }
}

impl Simulation {
    /// A transfer of flow group `group` opened in slot `c` (its sender not yet started): follow
    /// it if its group is chosen, and write a snapshot.
    pub(super) fn concurrency_opened(&mut self, c: u32, group: u32) {
        let Some(log) = self.concurrency.as_deref_mut() else { return };
        if log.groups[group as usize] {
            log.open.push(c);
            self.concurrency_snapshot();
        }
    }

    /// The transfer in slot `c` completed: write a snapshot (it included) and stop following it.
    pub(super) fn concurrency_completed(&mut self, c: u32) {
        let Some(log) = self.concurrency.as_deref_mut() else { return };
        if let Some(k) = log.open.iter().position(|&o| o == c) {
            self.concurrency_snapshot();
            let log = self.concurrency.as_deref_mut().expect("a concurrency log");
            log.open.remove(k);
        }
    }

    /// One row per followed transfer open now.
    fn concurrency_snapshot(&mut self) {
        let log = self.concurrency.as_deref_mut().expect("a concurrency log");
        let t = secs(self.now);
        for &c in &log.open {
            let slot = c as usize;
            let id = self.transfers[slot].expect("a followed slot holds its transfer").id;
            let s = self.agents[2 * slot].tcp_sender().expect("a transfer has a TCP sender");
            log.time.push(t);
            log.transfer.push(i64::from(id));
            log.sent.push(s.sent_bytes() as i64);
            log.acked.push(s.acked_bytes() as i64);
        }
    }

    /// The rows of the `concurrency` table written since the last call, or `None` when the
    /// scenario does not ask for it (`[trace] concurrency`; see `docs/traces.md`). Drained while
    /// a run goes on, it keeps the core's memory bounded.
    pub fn take_concurrency(&mut self) -> Option<Table> {
        self.concurrency.as_deref_mut().map(Concurrency::take)
    }
}
