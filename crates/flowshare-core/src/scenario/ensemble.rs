//! Ensembles as written in a scenario (ADR 0010): a flow group's TCP connections put under one
//! common congestion controller per sending host and receiver (or receiver network), as EFCM
//! forms them (`docs/algorithms.md`, "efcm", "tcb" and "etcp").

use crate::cc::efcm::{AlphaMode, EfcmParams, LeaveRule};
use crate::cc::tcb::{Sharing, TcbParams};
use crate::cc::CcConfig;
use crate::units::Dur;
use crate::ConfigError;
use serde::{Deserialize, Serialize};

/// The common controller of an ensemble.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnsembleController {
    /// Ensemble flow congestion management.
    Efcm,
    /// TCB interdependence (RFC 2140, RFC 9040): state shared at open.
    Tcb,
    /// Ensemble-TCP's sharing at open.
    Etcp,
}

impl EnsembleController {
    /// Its name in a scenario.
    pub fn as_str(self) -> &'static str {
        match self {
            EnsembleController::Efcm => "efcm",
            EnsembleController::Tcb => "tcb",
            EnsembleController::Etcp => "etcp",
        }
    }
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
    /// The controller: `efcm`, `tcb` or `etcp`.
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
    /// `tcb`, `etcp`: keep a closed connection's state for the next (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temporal: Option<bool>,
    /// `tcb`, `etcp`: how long a closed connection's state is kept (default 3600 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_age: Option<Dur>,
    /// `tcb`, `etcp`: share cwnd as well as RTT and ssthresh (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwnd: Option<bool>,
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
    /// The controller and its options.
    pub params: EnsembleParams,
}

/// A checked controller with its options.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EnsembleParams {
    /// EFCM.
    Efcm(EfcmParams),
    /// TCB interdependence or E-TCP.
    Tcb(TcbParams),
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
        let label = match self.controller {
            EnsembleController::Efcm => "EFCM",
            EnsembleController::Tcb => "TCB interdependence",
            EnsembleController::Etcp => "E-TCP",
        };
        if *cc != CcConfig::Reno {
            return Err(ConfigError::new(
                format!("{path}.controller"),
                format!("{label} runs NewReno's window rules; tcp.cc must be \"reno\", got \"{}\"", cc.as_str()),
            ));
        }
        if self.controller != EnsembleController::Efcm {
            return self.resolve_tcb(path);
        }
        for (field, set) in
            [("temporal", self.temporal.is_some()), ("max_age", self.max_age.is_some()), ("cwnd", self.cwnd.is_some())]
        {
            if set {
                return Err(ConfigError::new(
                    format!("{path}.{field}"),
                    "only used with controller = \"tcb\" or \"etcp\", got controller = \"efcm\"",
                ));
            }
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
            params: EnsembleParams::Efcm(EfcmParams {
                alpha: self.alpha,
                alpha_fixed,
                leave: self.leave,
                pacing: self.pacing,
                ack_clocking: self.ack_clocking,
            }),
        })
    }

    /// The options of `tcb` and `etcp`; EFCM's options are refused.
    fn resolve_tcb(&self, path: &str) -> Result<Ensemble, ConfigError> {
        let name = self.controller.as_str();
        let efcm_only = [
            ("alpha", self.alpha != AlphaMode::Fixed),
            ("alpha_fixed", self.alpha_fixed.is_some()),
            ("leave", self.leave != LeaveRule::Keep),
            ("pacing", !self.pacing),
            ("ack_clocking", !self.ack_clocking),
        ];
        if let Some((field, _)) = efcm_only.iter().find(|(_, set)| *set) {
            return Err(ConfigError::new(
                format!("{path}.{field}"),
                format!("only used with controller = \"efcm\", got controller = \"{name}\""),
            ));
        }
        let sharing = if self.controller == EnsembleController::Tcb { Sharing::Tcb } else { Sharing::Etcp };
        let mut p = TcbParams::new(sharing);
        if let Some(age) = self.max_age {
            if age.0 == 0 {
                return Err(ConfigError::new(format!("{path}.max_age"), "must be a duration > 0, got 0"));
            }
            if self.temporal == Some(false) {
                return Err(ConfigError::new(format!("{path}.max_age"), "only used with temporal = true"));
            }
            p.max_age = age.0;
        }
        p.temporal = self.temporal.unwrap_or(true);
        p.cwnd = self.cwnd.unwrap_or(true);
        Ok(Ensemble { key: self.key, params: EnsembleParams::Tcb(p) })
    }
}
