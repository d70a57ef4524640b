//! The source of an ATM ABR (available bit rate) virtual circuit with binary feedback
//! (ADR 0013), as G. Hasegawa, "Congestion and Fairness Control Mechanisms of TCP for the
//! High-Speed Internet", PhD thesis, Osaka University, 2000, §4.2.3 (after the ATM Forum's
//! rate-based control and H. Ohsaki, M. Murata, H. Suzuki, C. Ikeda and H. Miyahara,
//! "Rate-Based Congestion Control for ATM Networks", ACM SIGCOMM CCR 25(2), 1995) defines it.
//!
//! The source sends its cells no closer than 1/ACR apart (the allowed cell rate, between MCR
//! and PCR, starting at ICR), one in every `nrm` of them a forward RM cell. Switches mark
//! forward RM cells when their queue is long (EFCI); the destination returns them as backward
//! RM cells, and each changes ACR:
//!
//! - unmarked: `ACR ← min(ACR + increase · PCR, PCR)` (eq. 4.1; `increase` is the thesis's
//!   AIRF = AIR · N_RM / PCR, or TM 4.0's RIF);
//! - marked: `ACR ← max(ACR · (1 − decrease), MCR)` (eq. 4.2; `decrease` is 1 / RDFF in the
//!   thesis's notation, TM 4.0's RDF);
//!
//! and before each forward RM cell it sends:
//!
//! - when at least `xrm` forward RM cells went since the last backward one:
//!   `ACR ← max(ACR · (1 − xdf), MCR)` (eq. 4.3);
//! - when ACR > ICR and the time T since the last forward RM cell exceeds `tof · nrm` cell
//!   times at ACR: `ACR ← max(ACR · (1 − T · tdf), ICR)` (eq. 4.4). The thesis gives T no
//!   unit (resolution `hasegawa:A23`): by default T counts RM periods, `nrm` cell times at
//!   ACR, the unit of the rule's own condition (T > `tof`), so that TDF = 1/8 cuts a quarter
//!   of ACR at the time-out and brings it to ICR after eight silent periods; in seconds
//!   (`tdf_per = "second"`) the rule is all but inert at ATM time scales.
//!
//! The spacing is enforced by the transmitter of the circuit's first cell link: it is busy for
//! 1/ACR after it starts a cell, while the cell itself reaches the far end after its wire time.

use crate::units::{Time, NS_PER_SEC};
use serde::{Deserialize, Serialize};

/// Parameters of an ABR source; rates in cells per second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbrParams {
    /// Peak cell rate.
    pub pcr: f64,
    /// Minimum cell rate.
    pub mcr: f64,
    /// Initial cell rate.
    pub icr: f64,
    /// Cells per forward RM cell (the RM cell included).
    pub nrm: u32,
    /// Increase per unmarked backward RM cell, as a fraction of PCR.
    pub increase: f64,
    /// Decrease per marked backward RM cell, as a fraction of ACR.
    pub decrease: f64,
    /// Forward RM cells without a backward one before ACR is cut by `xdf`.
    pub xrm: u32,
    /// Cut after `xrm` unanswered forward RM cells, as a fraction of ACR.
    pub xdf: f64,
    /// Time-out factor: the rule of eq. 4.4 applies after `tof · nrm` cell times without a
    /// forward RM cell.
    pub tof: f64,
    /// Time-out decrease factor, per unit of `tdf_per`.
    pub tdf: f64,
    /// The unit of T in eq. 4.4.
    pub tdf_per: TdfPer,
}

/// The unit of the time T in the time-out rule of eq. 4.4 (resolution `hasegawa:A23`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TdfPer {
    /// The source's RM period: `nrm` cell times at ACR.
    #[default]
    RmPeriod,
    /// Seconds.
    Second,
}

/// State of an ABR source.
#[derive(Clone, Debug)]
pub struct Abr {
    params: AbrParams,
    /// Allowed cell rate.
    acr: f64,
    /// Forward RM cells sent since the last backward RM cell arrived.
    unanswered: u32,
    /// When the last forward RM cell was sent.
    last_frm: Option<Time>,
    /// Fraction of a nanosecond carried between spacings.
    carry: f64,
}

impl Abr {
    /// A source at its initial cell rate.
    pub fn new(params: AbrParams) -> Self {
        Abr { params, acr: params.icr, unanswered: 0, last_frm: None, carry: 0.0 }
    }

    /// The parameters.
    pub fn params(&self) -> &AbrParams {
        &self.params
    }

    /// The allowed cell rate, cells per second.
    pub fn acr(&self) -> f64 {
        self.acr
    }

    /// A backward RM cell arrived, `marked` or not.
    pub fn on_backward_rm(&mut self, marked: bool) {
        let p = &self.params;
        self.unanswered = 0;
        self.acr = if marked {
            (self.acr * (1.0 - p.decrease)).max(p.mcr)
        } else {
            (self.acr + p.increase * p.pcr).min(p.pcr)
        };
    }

    /// A forward RM cell is about to be sent at `now`.
    pub fn on_forward_rm(&mut self, now: Time) {
        let p = &self.params;
        if self.unanswered >= p.xrm {
            self.acr = (self.acr * (1.0 - p.xdf)).max(p.mcr);
        }
        if let Some(last) = self.last_frm {
            let periods = (now - last) as f64 / NS_PER_SEC as f64 * self.acr / f64::from(p.nrm);
            if self.acr > p.icr && periods > p.tof {
                let t = match p.tdf_per {
                    TdfPer::RmPeriod => periods,
                    TdfPer::Second => (now - last) as f64 / NS_PER_SEC as f64,
                };
                self.acr = (self.acr * (1.0 - t * p.tdf)).max(p.icr);
            }
        }
        self.unanswered += 1;
        self.last_frm = Some(now);
    }

    /// Nanoseconds from the start of a cell to the earliest start of the next one, 1/ACR,
    /// with the fractions of nanoseconds carried so that the mean spacing is exact.
    pub fn spacing(&mut self) -> u64 {
        let exact = NS_PER_SEC as f64 / self.acr + self.carry;
        let whole = exact.floor();
        self.carry = exact - whole;
        whole as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Table 4.1 of the thesis: PCR = 353.2 cells/ms, MCR = PCR/1000, ICR = PCR/20, N_RM = 32,
    /// AIRF = 1/64, RDF factor 16, X_RM = 32, XDF = 1/2, TOF = 2, TDF = 1/8.
    fn table_4_1() -> AbrParams {
        let pcr = 353_200.0;
        AbrParams {
            pcr,
            mcr: pcr / 1000.0,
            icr: pcr / 20.0,
            nrm: 32,
            increase: 1.0 / 64.0,
            decrease: 1.0 / 16.0,
            xrm: 32,
            xdf: 0.5,
            tof: 2.0,
            tdf: 0.125,
            tdf_per: TdfPer::RmPeriod,
        }
    }

    #[test]
    fn acr_after_an_unmarked_and_a_marked_backward_rm_cell() {
        let mut a = Abr::new(table_4_1());
        assert_eq!(a.acr(), 17_660.0); // ICR = PCR/20
                                       // Unmarked: + AIRF · PCR = 353,200 / 64 = 5,518.75 cells/s.
        a.on_backward_rm(false);
        assert_eq!(a.acr(), 23_178.75);
        // Marked: − ACR / RDFF = 23,178.75 / 16 = 1,448.671875.
        a.on_backward_rm(true);
        assert_eq!(a.acr(), 21_730.078125);
        // Never above PCR nor below MCR.
        for _ in 0..100 {
            a.on_backward_rm(false);
        }
        assert_eq!(a.acr(), 353_200.0);
        for _ in 0..1000 {
            a.on_backward_rm(true);
        }
        assert_eq!(a.acr(), 353.2);
    }

    #[test]
    fn unanswered_forward_rm_cells_cut_the_rate() {
        let mut a = Abr::new(table_4_1());
        for _ in 0..3 {
            a.on_backward_rm(false);
        }
        let acr = a.acr(); // 34,216.25 cells/s: an RM cell every 32 / ACR = 0.935 ms
        let gap = (32.0 / acr * 1e9) as u64;
        let mut now = 0;
        for _ in 0..32 {
            a.on_forward_rm(now);
            now += gap;
        }
        assert_eq!(a.acr(), acr, "32 forward RM cells without an answer: no cut yet");
        a.on_forward_rm(now); // the 33rd finds 32 unanswered: ACR halves (XDF = 1/2)
        assert_eq!(a.acr(), acr / 2.0);
    }

    #[test]
    fn a_long_silence_cuts_the_rate_by_the_rm_periods_it_lasted() {
        // Ten unmarked answers: 17,660 + 10 · 5,518.75 = 72,847.5 cells/s, an RM period of
        // 32 / ACR = 0.439 ms. 1 ms of silence is 2.28 periods > TOF = 2: ACR falls by
        // T · TDF = 28.5 %.
        let mut a = Abr::new(table_4_1());
        for _ in 0..10 {
            a.on_backward_rm(false);
        }
        let before = a.acr();
        assert_eq!(before, 72_847.5);
        a.on_forward_rm(0);
        let (mut b, mut c) = (a.clone(), a.clone());
        a.on_forward_rm(1_000_000);
        let periods = 0.001 * before / 32.0;
        assert!((a.acr() - before * (1.0 - periods * 0.125)).abs() < 1e-9, "{}", a.acr());
        // With T in seconds the same silence cuts 0.0125 %.
        b.params.tdf_per = TdfPer::Second;
        b.on_forward_rm(1_000_000);
        assert!((b.acr() - before * (1.0 - 0.001 * 0.125)).abs() < 1e-9, "{}", b.acr());
        // Eight periods of silence (3.5 ms) bring ACR down to ICR.
        c.on_forward_rm(3_600_000);
        assert_eq!(c.acr(), 17_660.0);
    }

    #[test]
    fn a_silence_shorter_than_tof_rm_periods_leaves_the_rate_alone() {
        let mut a = Abr::new(table_4_1());
        a.on_backward_rm(false); // 23,178.75 cells/s: an RM period is 1.38 ms
        a.on_forward_rm(0);
        a.on_forward_rm(2_700_000); // 1.96 periods
        assert_eq!(a.acr(), 23_178.75);
    }

    #[test]
    fn the_spacing_is_exact_on_average() {
        let mut a = Abr::new(table_4_1());
        let total: u64 = (0..17_660).map(|_| a.spacing()).sum();
        // 17,660 cells at 17,660 cells/s take one second, to the nanosecond.
        assert!(total.abs_diff(1_000_000_000) <= 1, "{total}");
    }
}
