//! `[flows] abr`: a flow's data as an ATM ABR circuit (ADR 0013, `net::abr`), with the
//! defaults of Table 4.1 of G. Hasegawa, "Congestion and Fairness Control Mechanisms of TCP
//! for the High-Speed Internet", PhD thesis, Osaka University, 2000.

use crate::net::abr::{AbrParams, TdfPer};
use crate::sim::atm::CELL_BYTES;
use crate::units::Rate;
use crate::ConfigError;
use serde::{Deserialize, Serialize};

/// `abr` as written. The increase may be given as the thesis's AIRF or as TM 4.0's RIF (the
/// same fraction of PCR), the decrease as the thesis's RDF factor RDFF (ACR / RDFF per marked
/// RM cell) or as TM 4.0's RDF (a fraction of ACR); resolution `hasegawa:A22`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AbrCfg {
    /// Peak cell rate, as a bit rate of 53-byte cells (default: the rate of the link where
    /// the flow's cells enter the cell network).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcr: Option<Rate>,
    /// Initial cell rate, a fraction of PCR (default 1/20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icr: Option<f64>,
    /// Minimum cell rate, a fraction of PCR (default 1/1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcr: Option<f64>,
    /// Cells per forward RM cell (default 32).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nrm: Option<u32>,
    /// Increase per unmarked backward RM cell, a fraction of PCR (default 1/64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub airf: Option<f64>,
    /// TM 4.0's name for `airf`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rif: Option<f64>,
    /// A marked backward RM cell cuts ACR by ACR / `rdff` (default 16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rdff: Option<f64>,
    /// TM 4.0's form: a marked backward RM cell cuts ACR by this fraction of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rdf: Option<f64>,
    /// Forward RM cells without a backward one before ACR is cut by `xdf` (default 32).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xrm: Option<u32>,
    /// That cut, a fraction of ACR (default 1/2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xdf: Option<f64>,
    /// Time-out factor (default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tof: Option<f64>,
    /// Time-out decrease factor, per unit of `tdf_per` (default 1/8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tdf: Option<f64>,
    /// The unit of the time in the time-out rule: `rm_period` (default; `nrm` cell times at
    /// ACR) or `second` (resolution `hasegawa:A23`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tdf_per: Option<TdfPer>,
}

impl AbrCfg {
    /// The source's parameters for a circuit entering the cell network on a link of
    /// `entry_rate`. `path` is the table's field path.
    pub fn resolve(&self, path: &str, entry_rate: Rate) -> Result<AbrParams, ConfigError> {
        let err = |field: &str, msg: String| ConfigError::new(format!("{path}.{field}"), msg);
        let fraction = |field: &str, v: Option<f64>, default: f64| match v.unwrap_or(default) {
            x if x > 0.0 && x <= 1.0 => Ok(x),
            x => Err(err(field, format!("must be a fraction in (0, 1], got {x}"))),
        };
        let one_of = |a: (&str, Option<f64>), b: (&str, Option<f64>)| match (a.1, b.1) {
            (Some(_), Some(_)) => Err(err(b.0, format!("give {} or {}, not both", a.0, b.0))),
            _ => Ok(()),
        };
        let pcr = self.pcr.unwrap_or(entry_rate);
        if pcr.0 == 0 {
            return Err(err("pcr", "must be greater than 0bps".into()));
        }
        let pcr = pcr.0 as f64 / f64::from(8 * CELL_BYTES);
        let icr = fraction("icr", self.icr, 1.0 / 20.0)?;
        let mcr = fraction("mcr", self.mcr, 1.0 / 1000.0)?;
        if mcr > icr {
            return Err(err("mcr", format!("must be at most icr ({icr}), got {mcr}")));
        }
        one_of(("airf", self.airf), ("rif", self.rif))?;
        let increase = match self.rif {
            Some(r) => fraction("rif", Some(r), 0.0)?,
            None => fraction("airf", self.airf, 1.0 / 64.0)?,
        };
        one_of(("rdff", self.rdff), ("rdf", self.rdf))?;
        let decrease = match (self.rdf, self.rdff) {
            (Some(r), _) => fraction("rdf", Some(r), 0.0)?,
            (None, Some(f)) if f >= 1.0 => 1.0 / f,
            (None, Some(f)) => return Err(err("rdff", format!("must be at least 1, got {f}"))),
            (None, None) => 1.0 / 16.0,
        };
        let nrm = self.nrm.unwrap_or(32);
        if nrm < 2 {
            return Err(err("nrm", format!("must be at least 2 (an RM cell and a data cell), got {nrm}")));
        }
        let xrm = self.xrm.unwrap_or(32);
        if xrm == 0 {
            return Err(err("xrm", "must be at least 1".into()));
        }
        let tof = self.tof.unwrap_or(2.0);
        if !(tof.is_finite() && tof > 0.0) {
            return Err(err("tof", format!("must be a number > 0, got {tof}")));
        }
        let tdf = self.tdf.unwrap_or(0.125);
        if !(tdf.is_finite() && tdf >= 0.0) {
            return Err(err("tdf", format!("must be a number ≥ 0, got {tdf}")));
        }
        Ok(AbrParams {
            pcr,
            mcr: mcr * pcr,
            icr: icr * pcr,
            nrm,
            increase,
            decrease,
            xrm,
            xdf: fraction("xdf", self.xdf, 0.5)?,
            tof,
            tdf,
            tdf_per: self.tdf_per.unwrap_or_default(),
        })
    }
}
