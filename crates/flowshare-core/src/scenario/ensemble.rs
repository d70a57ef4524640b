//! Ensembles as written in a scenario (ADR 0010): a flow group's TCP connections put under one
//! common congestion controller per sending host and receiver (or receiver network), as EFCM
//! forms them (`docs/algorithms.md`, "efcm").

use crate::cc::efcm::{AlphaMode, EfcmParams, LeaveRule};
use crate::cc::CcConfig;
use crate::ConfigError;
use serde::{Deserialize, Serialize};

/// The common controller of an ensemble.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnsembleController {
    /// Ensemble flow congestion management.
    Efcm,
}

/// What connections of one sending host must share to be in one ensemble.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnsembleKey {
    /// The receiving host (the report's search list of receiver addresses).
    Receiver,
    /// The receiver's network: the node that hands the data to the receiver (its access
    /// router, or the station sending onto its LAN).
    #[default]
    Network,
}

/// `tcp.ensemble` as written.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnsembleCfg {
    /// The controller: `efcm`.
    pub controller: EnsembleController,
    /// `network` (default) or `receiver`.
    #[serde(default)]
    pub key: EnsembleKey,
    /// Pacing factor: `fixed` (default), or the extensions `step` and `linear`.
    #[serde(default)]
    pub alpha: AlphaMode,
    /// α with `alpha = "fixed"`; 2 if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha_fixed: Option<f64>,
    /// What a leaving connection's share does: `keep` (default) or `drop`.
    #[serde(default)]
    pub leave: LeaveRule,
    /// Pace each member's segments.
    #[serde(default = "d_true")]
    pub pacing: bool,
    /// An ACK on any member clocks every member.
    #[serde(default = "d_true")]
    pub ack_clocking: bool,
}

fn d_true() -> bool {
    true
}

/// A checked ensemble setting: connections with equal settings, the same sending host and the
/// same key node share one controller.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ensemble {
    /// What is shared.
    pub key: EnsembleKey,
    /// EFCM's options.
    pub efcm: EfcmParams,
}

impl EnsembleCfg {
    /// Check it for a flow group whose congestion control is `cc` and initial ssthresh
    /// `initial_ssthresh`; `path` names the table.
    pub(super) fn resolve(
        &self,
        path: &str,
        cc: &CcConfig,
        initial_ssthresh: Option<f64>,
    ) -> Result<Ensemble, ConfigError> {
        if *cc != CcConfig::Reno {
            return Err(ConfigError::new(
                format!("{path}.controller"),
                format!("EFCM runs NewReno's window rules; tcp.cc must be \"reno\", got \"{}\"", cc.as_str()),
            ));
        }
        if initial_ssthresh.is_none_or(|s| !s.is_finite()) {
            return Err(ConfigError::new(
                format!("{path}.controller"),
                "EFCM shares the sum of ssthresh; set tcp.initial_ssthresh to a number of segments",
            ));
        }
        let alpha_fixed = match (self.alpha, self.alpha_fixed) {
            (_, None) => 2.0,
            (AlphaMode::Fixed, Some(a)) if a.is_finite() && a > 0.0 => a,
            (AlphaMode::Fixed, Some(a)) => {
                return Err(ConfigError::new(format!("{path}.alpha_fixed"), format!("must be a number > 0, got {a}")))
            }
            (mode, Some(_)) => {
                return Err(ConfigError::new(
                    format!("{path}.alpha_fixed"),
                    format!("only used with alpha = \"fixed\", got alpha = \"{}\"", mode.as_str()),
                ))
            }
        };
        Ok(Ensemble {
            key: self.key,
            efcm: EfcmParams {
                alpha: self.alpha,
                alpha_fixed,
                leave: self.leave,
                pacing: self.pacing,
                ack_clocking: self.ack_clocking,
            },
        })
    }
}
