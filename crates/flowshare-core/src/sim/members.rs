//! The `members` table (ADR 0012): one row per member that joined an aggregate connection
//! (PA-MulTCP, MPAT) at run time, with its transfer and its completion time. The controllers
//! keep the records; the table is made once, at the end of the run.

use super::Simulation;
use crate::results::{Column, Table};
use crate::units::secs;

impl Simulation {
    /// The members that joined aggregates, by flow and member index; the completion time is
    /// from the join to the delivery of the member's last segment, NaN if not complete.
    pub(super) fn members_table(&mut self) -> Table {
        let records = self.cc.take_member_records();
        let mut t = Table::default();
        t.push("flow", Column::I64(records.iter().map(|r| i64::from(r.flow)).collect()));
        t.push("name", Column::Str(records.iter().map(|r| self.specs[r.flow as usize].name.clone()).collect()));
        t.push("member", Column::I64(records.iter().map(|r| i64::from(r.member)).collect()));
        t.push("start_s", Column::F64(records.iter().map(|r| secs(r.start)).collect()));
        t.push("size_bytes", Column::I64(records.iter().map(|r| r.bytes as i64).collect()));
        t.push("segments", Column::I64(records.iter().map(|r| r.segments as i64).collect()));
        let done = |r: &crate::cc::aggregate::MemberRecord| r.completed.map_or(f64::NAN, |c| secs(c - r.start));
        t.push("completion_time_s", Column::F64(records.iter().map(done).collect()));
        t
    }
}
