//! TFRC, TCP-Friendly Rate Control: a rate-based transport whose sender sets its rate from a
//! TCP throughput equation, fed by the loss event rate and receive rate its receiver reports.
//!
//! S. Floyd, M. Handley, J. Padhye, J. Widmer, "TCP Friendly Rate Control (TFRC): Protocol
//! Specification", RFC 5348, 2008. One file per concept: the throughput [`equation`], the
//! receiver's [`loss_history`] (usable alone, for trace analysis), the [`sender`] and the
//! [`receiver`] agents, and the scenario options ([`config`]). What is modelled and the
//! options are described in `docs/tfrc.md`.
//!
//! MulTFRC (M. Welzl and D. Damjanović, "MulTFRC: TFRC with weighted fairness",
//! draft-welzl-multfrc-01, IETF Internet-Draft, 2009) is the [`Equation::MulTfrc`] variant:
//! the receiver counts the packets lost per loss event and reports their weighted mean `j`,
//! which that equation takes with the number of flows `n`.
//!
//! CP (D. E. Ott, T. Sparks and K. Mayer-Patel, "Aggregate congestion control for distributed
//! multimedia applications", Proc. IEEE INFOCOM 2004) is the [`Equation::Cp`] variant: `n`
//! times the TFRC equation, at the loss event rate the receiver measures on a 1/n sample of
//! the packets ([`cp`], bandwidth filtered loss detection).

pub mod config;
pub mod cp;
pub mod equation;
pub mod loss_history;
pub mod receiver;
pub mod sender;

pub use config::{TfrcCfg, TfrcConfig};
pub use equation::Equation;
pub use loss_history::LossHistory;
pub use receiver::Receiver;
pub use sender::Sender;
