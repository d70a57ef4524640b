//! TFRC options as written in a scenario (`[flows.tfrc]`), their defaults and their check
//! into a [`TfrcConfig`].
//!
//! The defaults are RFC 5348's behaviour. `profile = "ns2"` takes ns-2.35's `Agent/TFRC` and
//! `Agent/TFRCSink` defaults instead; a key written next to a profile overrides it. The
//! normalized scenario has every key filled in.

use super::equation::Equation;
use super::loss_history::wali_weights;
use crate::units::{Bytes, Dur, Time};
use crate::ConfigError;
use serde::{Deserialize, Serialize};

/// draft-welzl-multfrc-01 §3: the user-settable `n` SHOULD NOT exceed 6 (six TCP flows
/// already use about 95 % of a link; more gain under 1 %).
pub const DRAFT_MAX_N: f64 = 6.0;

/// Whose defaults fill the keys not written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// RFC 5348.
    #[default]
    Rfc5348,
    /// ns-2.35's `Agent/TFRC` and `Agent/TFRCSink`.
    Ns2,
}

/// How the sender computes the `t_RTO` of the throughput equation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TRto {
    /// `t_RTO = 4R` (RFC 5348 §4.3), at least `min_rto`.
    #[serde(rename = "4r")]
    FourR,
    /// TCP's estimator, SRTT + max(4·RTTVAR, `clock_tick`) rounded up to the tick, at least
    /// `min_rto` (RFC 6298; the RFC 2988 estimator the MulTFRC draft recommends).
    Tcp,
    /// ns-2's `tzero_`: TCP's estimator in whole `clock_tick`s with ns-2's integer
    /// arithmetic (`TfrcAgent::update_rtt`: samples rounded to ticks, at least one; 3 and 2
    /// fraction bits; SRTT + 4·RTTVAR), at least `min_rto`. With a 100 ms tick and RTTs under
    /// 150 ms it stays at 300 ms.
    Ns2,
}

/// How a report sets the sending rate once the first loss has ended slow start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RateRule {
    /// RFC 5348 §4.3: `X = max(min(X_calc, 2·max(X_recv_set)), s/t_mbi)`, so the rate jumps
    /// to the equation's whenever the receive rate allows.
    #[default]
    Rfc5348,
    /// ns-2.35's `TfrcAgent`: leaving slow start takes `X_calc`; then a report with
    /// `X_calc > X` adds `s/R` times the RTTs since the last change (at most two), times the
    /// `n` of MulTFRC or CP (one packet per RTT per emulated flow), and a report
    /// with `X_calc <= X` takes `X_calc`, both capped at `max(2·X_recv, s/R)` with the
    /// latest `X_recv` (`increase_rate`, `decrease_rate` with `maxHeavyRounds_ = 0`); the
    /// no-feedback timer halves `X`.
    Ns2,
}

/// Which throughput equation the sender uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EquationName {
    /// RFC 5348 §3.1.
    #[default]
    Tfrc,
    /// draft-welzl-multfrc-01 §3: `n` TCP flows.
    Multfrc,
    /// CP (Ott, Sparks and Mayer-Patel 2004): `n` flow shares, each the TFRC equation at the
    /// loss event rate of a 1/n sample of the packets.
    Cp,
}

impl EquationName {
    fn is_tfrc(&self) -> bool {
        *self == EquationName::Tfrc
    }
}

/// The `j` the MulTFRC equation takes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JMode {
    /// The receiver's weighted mean of packets lost per loss event (the draft, §5.4).
    #[default]
    Measured,
    /// 1: every loss event loses one packet.
    One,
}

/// How many packets the first loss event counts as lost, for `j`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FirstEventLost {
    /// One (draft-welzl-multfrc-01 §6.3.1: "the number of packets lost in the first interval
    /// is set to 1"), so that the losses of a slow-start overshoot do not set `j`.
    #[default]
    One,
    /// Every packet lost in it, as in later loss events.
    Counted,
}

/// The MulTFRC options (`equation = "multfrc"`), every key filled in.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MulTfrcCfg {
    /// Flows emulated, a real number above 0.
    pub n: f64,
    /// The largest `n` allowed (draft-welzl-multfrc-01 §3: SHOULD NOT exceed 6).
    pub max_n: f64,
    /// `"measured"` or `"one"`.
    pub j: JMode,
    /// The improved j is used for `n` below this (0: never).
    pub improved_j_below: f64,
    /// `"one"` or `"counted"`.
    pub first_event_lost: FirstEventLost,
}

/// The CP options (`equation = "cp"`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CpCfg {
    /// Flow shares, a real number above 1.
    pub n: f64,
}

/// The largest `n` CP accepts: its receiver samples one packet in `n`.
pub const CP_MAX_N: f64 = 1000.0;

/// `rate_init`: RFC 3390's initial window, or a number of packets per RTT.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RateInit {
    /// `"rfc3390"`.
    Name(String),
    /// Packets per RTT.
    Packets(f64),
}

/// The options as written; absent keys take the profile's default.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Written {
    profile: Option<Profile>,
    packet_size: Option<Bytes>,
    header: Option<Bytes>,
    feedback_size: Option<Bytes>,
    ss_mult: Option<f64>,
    rate_init: Option<RateInit>,
    sqrt_rtt: Option<bool>,
    discount: Option<bool>,
    df: Option<f64>,
    t_rto: Option<TRto>,
    min_rto: Option<Dur>,
    clock_tick: Option<Dur>,
    conservative: Option<bool>,
    rate_rule: Option<RateRule>,
    num_feedback: Option<u32>,
    weights: Option<String>,
    intervals: Option<u32>,
    no_feedback_rtts: Option<f64>,
    b: Option<f64>,
    equation: Option<EquationName>,
    n: Option<f64>,
    max_n: Option<f64>,
    j: Option<JMode>,
    improved_j_below: Option<f64>,
    first_event_lost: Option<FirstEventLost>,
}

/// TFRC options of a flow group, every key filled in (see `docs/tfrc.md`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "Written")]
pub struct TfrcCfg {
    /// Whose defaults filled the keys not written.
    pub profile: Profile,
    /// Payload bytes per packet (ns-2 `packetSize_`).
    pub packet_size: Bytes,
    /// Header bytes added to each data packet on the wire (ns-2 `headersize_`).
    pub header: Bytes,
    /// Wire size of a feedback packet (ns-2 `Agent/TFRCSink packetSize_`).
    pub feedback_size: Bytes,
    /// Slow-start rate multiplier per RTT (ns-2 `ssmult_`).
    pub ss_mult: f64,
    /// Initial rate: `"rfc3390"` or packets per RTT (ns-2 `rate_init_option_`, `rate_init_`).
    pub rate_init: RateInit,
    /// Space packets by the square root of the latest RTT sample over its mean (RFC 5348
    /// §4.5; ns-2 `ca_`).
    pub sqrt_rtt: bool,
    /// History discounting (RFC 5348 §5.5; ns-2 `discount_`).
    pub discount: bool,
    /// Weight of the old RTT estimate in its moving average, `q` (RFC 5348 §4.3; ns-2 `df_`).
    pub df: f64,
    /// The equation's `t_RTO`: `"4r"`, `"tcp"` or `"ns2"`.
    pub t_rto: TRto,
    /// Smallest `t_RTO` (ns-2 `minrto_`).
    pub min_rto: Dur,
    /// Clock granularity of the `"tcp"` and `"ns2"` `t_RTO` estimators (ns-2 `tcp_tick_`).
    pub clock_tick: Dur,
    /// After a loss, cap the rate at the receive rate, else at 1.5 times it, instead of
    /// twice it (ns-2 `conservative_`, `scmult_`).
    pub conservative: bool,
    /// How reports set the rate after slow start: `"rfc5348"` or `"ns2"`.
    pub rate_rule: RateRule,
    /// Feedback packets per RTT (ns-2 `NumFeedback_`).
    pub num_feedback: u32,
    /// Loss-interval averaging: `"wali"`, the weighted average of RFC 5348 §5.4 (ns-2
    /// `algo_ = 1`).
    pub weights: String,
    /// Loss intervals averaged, `n` (RFC 5348 §5.4; ns-2 `NumSamples_`).
    pub intervals: u32,
    /// The no-feedback timer runs this many RTTs (at least two packet intervals).
    pub no_feedback_rtts: f64,
    /// Packets acknowledged per ACK in the equation (ns-2 `bval_`).
    pub b: f64,
    /// `"tfrc"`, `"multfrc"` or `"cp"`; written out only for the latter two, so that TFRC
    /// scenarios normalize as before.
    #[serde(default, skip_serializing_if = "EquationName::is_tfrc")]
    pub equation: EquationName,
    /// MulTFRC's options; present when `equation = "multfrc"` or one of them is written.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub multfrc: Option<MulTfrcCfg>,
    /// CP's options; present when `equation = "cp"`.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub cp: Option<CpCfg>,
}

impl Default for TfrcCfg {
    fn default() -> Self {
        Written::default().into()
    }
}

impl From<Written> for TfrcCfg {
    fn from(w: Written) -> Self {
        let profile = w.profile.unwrap_or_default();
        let ns2 = profile == Profile::Ns2;
        fn pick<T>(ns2: bool, rfc: T, ns: T) -> T {
            if ns2 {
                ns
            } else {
                rfc
            }
        }
        TfrcCfg {
            profile,
            packet_size: w.packet_size.unwrap_or(Bytes(1000)),
            header: w.header.unwrap_or(Bytes(pick(ns2, 40, 32))),
            feedback_size: w.feedback_size.unwrap_or(Bytes(40)),
            ss_mult: w.ss_mult.unwrap_or(2.0),
            rate_init: w.rate_init.unwrap_or_else(|| RateInit::Name("rfc3390".into())),
            sqrt_rtt: w.sqrt_rtt.unwrap_or(ns2),
            discount: w.discount.unwrap_or(ns2),
            df: w.df.unwrap_or(pick(ns2, 0.9, 0.95)),
            t_rto: w.t_rto.unwrap_or(pick(ns2, TRto::FourR, TRto::Ns2)),
            min_rto: w.min_rto.unwrap_or(Dur(0)),
            clock_tick: w.clock_tick.unwrap_or(Dur(pick(ns2, 0, 100_000_000))),
            conservative: w.conservative.unwrap_or(false),
            rate_rule: w.rate_rule.unwrap_or(pick(ns2, RateRule::Rfc5348, RateRule::Ns2)),
            num_feedback: w.num_feedback.unwrap_or(1),
            weights: w.weights.unwrap_or_else(|| "wali".into()),
            intervals: w.intervals.unwrap_or(8),
            no_feedback_rtts: w.no_feedback_rtts.unwrap_or(pick(ns2, 4.0, 2.0)),
            b: w.b.unwrap_or(1.0),
            equation: w.equation.unwrap_or_default(),
            cp: (w.equation == Some(EquationName::Cp)).then(|| CpCfg { n: w.n.unwrap_or(1.0) }),
            multfrc: (w.equation == Some(EquationName::Multfrc)
                || (w.n.is_some() && w.equation != Some(EquationName::Cp))
                || w.max_n.is_some()
                || w.j.is_some()
                || w.improved_j_below.is_some()
                || w.first_event_lost.is_some())
            .then(|| MulTfrcCfg {
                n: w.n.unwrap_or(1.0),
                max_n: w.max_n.unwrap_or(DRAFT_MAX_N),
                j: w.j.unwrap_or_default(),
                improved_j_below: w.improved_j_below.unwrap_or(12.0),
                first_event_lost: w.first_event_lost.unwrap_or_default(),
            }),
        }
    }
}

/// Checked TFRC parameters of one flow.
#[derive(Clone, Debug, PartialEq)]
pub struct TfrcConfig {
    /// Payload bytes per packet, `s`.
    pub payload: u32,
    /// Header bytes per data packet.
    pub header: u32,
    /// Wire bytes of a feedback packet.
    pub feedback_size: u32,
    /// Slow-start multiplier.
    pub ss_mult: f64,
    /// Initial window in packets; `None`: RFC 3390's `min(4s, max(2s, 4380 B))`.
    pub init_packets: Option<f64>,
    /// RFC 5348 §4.5 spacing.
    pub sqrt_rtt: bool,
    /// RFC 5348 §5.5.
    pub discount: bool,
    /// RTT moving-average weight `q`.
    pub q: f64,
    /// `t_RTO` rule.
    pub t_rto: TRto,
    /// Smallest `t_RTO`, ns.
    pub min_rto: Time,
    /// Clock tick of the `"tcp"` rule, ns.
    pub clock_tick: Time,
    /// ns-2's conservative cap.
    pub conservative: bool,
    /// The rate rule after slow start.
    pub rate_rule: RateRule,
    /// Feedback packets per RTT.
    pub num_feedback: u32,
    /// Loss-interval weights, most recent first.
    pub weights: Vec<f64>,
    /// No-feedback timer length in RTTs.
    pub no_feedback_rtts: f64,
    /// The throughput equation.
    pub equation: Equation,
    /// Whether the first loss event counts one lost packet, whatever it lost (MulTFRC's j).
    pub first_event_lost_one: bool,
}

impl TfrcCfg {
    /// Check the options; `path` is the table's field path (`flows[0].tfrc`).
    pub fn resolve(&self, path: &str) -> Result<TfrcConfig, ConfigError> {
        let err = |field: &str, msg: String| Err(ConfigError::new(format!("{path}.{field}"), msg));
        if self.packet_size.0 == 0 || self.packet_size.0 + self.header.0 > 65_535 {
            return err(
                "packet_size",
                format!("must be at least 1B, and with the header at most 65535B, got {}", self.packet_size),
            );
        }
        if self.feedback_size.0 == 0 || self.feedback_size.0 > 65_535 {
            return err("feedback_size", format!("must be 1B to 65535B, got {}", self.feedback_size));
        }
        if !(self.ss_mult > 1.0 && self.ss_mult <= 100.0) {
            return err("ss_mult", format!("expected a number > 1 and at most 100, got {}", self.ss_mult));
        }
        let init_packets = match &self.rate_init {
            RateInit::Name(n) if n == "rfc3390" => None,
            RateInit::Name(n) => {
                return err("rate_init", format!("expected \"rfc3390\" or a number of packets, got \"{n}\""))
            }
            RateInit::Packets(k) if *k >= 1.0 && *k <= 1e6 => Some(*k),
            RateInit::Packets(k) => {
                return err("rate_init", format!("expected \"rfc3390\" or a number of packets from 1 to 1e6, got {k}"))
            }
        };
        if !(0.0..1.0).contains(&self.df) {
            return err("df", format!("expected a number at least 0 and below 1, got {}", self.df));
        }
        if self.t_rto == TRto::Ns2 && self.clock_tick.0 == 0 {
            return err("clock_tick", "must be above 0s with t_rto = \"ns2\" (ns-2 counts in ticks)".into());
        }
        if self.num_feedback == 0 || self.num_feedback > 100 {
            return err(
                "num_feedback",
                format!("expected 1 to 100 feedback packets per RTT, got {}", self.num_feedback),
            );
        }
        if self.weights != "wali" {
            return err("weights", format!("expected \"wali\", got \"{}\"", self.weights));
        }
        if self.intervals == 0 || self.intervals > 64 {
            return err("intervals", format!("expected 1 to 64 loss intervals, got {}", self.intervals));
        }
        if !(self.no_feedback_rtts >= 1.0 && self.no_feedback_rtts <= 100.0) {
            return err("no_feedback_rtts", format!("expected a number from 1 to 100, got {}", self.no_feedback_rtts));
        }
        if !(self.b >= 1.0 && self.b <= 100.0) {
            return err("b", format!("expected a number from 1 to 100, got {}", self.b));
        }
        let equation = match (self.equation, &self.multfrc) {
            (EquationName::Tfrc, None) => Equation::Tcp { b: self.b },
            (EquationName::Tfrc, Some(_)) => {
                return err(
                    "equation",
                    "n, max_n, j, improved_j_below and first_event_lost need equation = \"multfrc\"".into(),
                )
            }
            (EquationName::Multfrc, m) => {
                let m = m.expect("filled in with equation = \"multfrc\"");
                if !(m.max_n > 0.0 && m.max_n <= 1000.0) {
                    return err("max_n", format!("expected a number above 0 and at most 1000, got {}", m.max_n));
                }
                if !(m.n > 0.0 && m.n.is_finite()) {
                    return err("n", format!("expected a number above 0, got {}", m.n));
                }
                if m.n > m.max_n {
                    return err(
                        "n",
                        format!(
                            "{} exceeds max_n = {} (draft-welzl-multfrc-01 §3; raise max_n to allow it)",
                            m.n, m.max_n
                        ),
                    );
                }
                if !(0.0..=1000.0).contains(&m.improved_j_below) {
                    return err(
                        "improved_j_below",
                        format!("expected a number from 0 to 1000, got {}", m.improved_j_below),
                    );
                }
                Equation::MulTfrc {
                    n: m.n,
                    b: self.b,
                    improved_j_below: m.improved_j_below,
                    measured_j: m.j == JMode::Measured,
                }
            }
            (EquationName::Cp, Some(_)) => {
                return err(
                    "equation",
                    "max_n, j, improved_j_below and first_event_lost need equation = \"multfrc\"".into(),
                )
            }
            (EquationName::Cp, None) => {
                let n = self.cp.map_or(1.0, |c| c.n);
                if !(n > 1.0 && n <= CP_MAX_N) {
                    return err(
                        "n",
                        format!("expected a number of flow shares above 1 and at most {CP_MAX_N} for equation = \"cp\", got {n}"),
                    );
                }
                Equation::Cp { n, b: self.b }
            }
        };
        Ok(TfrcConfig {
            payload: self.packet_size.0 as u32,
            header: self.header.0 as u32,
            feedback_size: self.feedback_size.0 as u32,
            ss_mult: self.ss_mult,
            init_packets,
            sqrt_rtt: self.sqrt_rtt,
            discount: self.discount,
            q: self.df,
            t_rto: self.t_rto,
            min_rto: self.min_rto.0,
            clock_tick: self.clock_tick.0,
            conservative: self.conservative,
            rate_rule: self.rate_rule,
            num_feedback: self.num_feedback,
            weights: wali_weights(self.intervals as usize),
            no_feedback_rtts: self.no_feedback_rtts,
            equation,
            first_event_lost_one: self.multfrc.is_some_and(|m| m.first_event_lost == FirstEventLost::One),
        })
    }
}

impl TfrcConfig {
    /// The default options, checked.
    pub fn rfc5348() -> Self {
        TfrcCfg::default().resolve("tfrc").expect("the defaults are valid")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(json: &str) -> String {
        let cfg: TfrcCfg = serde_json::from_str(json).unwrap();
        cfg.resolve("flows[0].tfrc").unwrap_err().to_string()
    }

    #[test]
    fn defaults_are_rfc5348_and_the_ns2_profile_is_ns2s() {
        let d = TfrcCfg::default();
        assert_eq!((d.packet_size, d.header, d.feedback_size), (Bytes(1000), Bytes(40), Bytes(40)));
        assert_eq!((d.sqrt_rtt, d.discount, d.df, d.t_rto), (false, false, 0.9, TRto::FourR));
        let n: TfrcCfg = serde_json::from_str(r#"{"profile": "ns2", "df": 0.8}"#).unwrap();
        assert_eq!((n.sqrt_rtt, n.discount, n.t_rto, n.header), (true, true, TRto::Ns2, Bytes(32)));
        assert_eq!((d.rate_rule, n.rate_rule), (RateRule::Rfc5348, RateRule::Ns2));
        assert_eq!(n.clock_tick, Dur(100_000_000));
        assert_eq!(n.df, 0.8, "a written key overrides the profile");
        // Normalized: every key written out, and it reads back the same.
        let json = serde_json::to_string(&n).unwrap();
        assert!(json.contains("\"ss_mult\":2.0") && json.contains("\"rate_init\":\"rfc3390\""), "{json}");
        assert_eq!(serde_json::from_str::<TfrcCfg>(&json).unwrap(), n);
    }

    #[test]
    fn bad_values_name_the_field() {
        assert_eq!(e(r#"{"ss_mult": 0.5}"#), "flows[0].tfrc.ss_mult: expected a number > 1 and at most 100, got 0.5");
        assert_eq!(
            e(r#"{"rate_init": "fast"}"#),
            "flows[0].tfrc.rate_init: expected \"rfc3390\" or a number of packets, got \"fast\""
        );
        assert!(e(r#"{"df": 1.0}"#).starts_with("flows[0].tfrc.df: expected"));
        assert!(e(r#"{"weights": "ewma"}"#).starts_with("flows[0].tfrc.weights: expected \"wali\""));
        assert!(e(r#"{"num_feedback": 0}"#).starts_with("flows[0].tfrc.num_feedback:"));
        assert!(serde_json::from_str::<TfrcCfg>(r#"{"ssmult": 2}"#).is_err(), "unknown keys are refused");
        assert_eq!(
            e(r#"{"equation": "multfrc", "n": 8}"#),
            "flows[0].tfrc.n: 8 exceeds max_n = 6 (draft-welzl-multfrc-01 §3; raise max_n to allow it)"
        );
        assert_eq!(e(r#"{"equation": "multfrc", "n": 0}"#), "flows[0].tfrc.n: expected a number above 0, got 0");
        assert_eq!(
            e(r#"{"n": 2}"#),
            "flows[0].tfrc.equation: n, max_n, j, improved_j_below and first_event_lost need equation = \"multfrc\""
        );
        assert!(e(r#"{"equation": "multfrc", "max_n": -1}"#).starts_with("flows[0].tfrc.max_n: expected"));
        assert!(serde_json::from_str::<TfrcCfg>(r#"{"equation": "mul"}"#).is_err());
        assert!(serde_json::from_str::<TfrcCfg>(r#"{"j": "old"}"#).is_err());
        assert_eq!(
            e(r#"{"equation": "cp", "n": 1}"#),
            "flows[0].tfrc.n: expected a number of flow shares above 1 and at most 1000 for equation = \"cp\", got 1"
        );
        assert!(e(r#"{"equation": "cp"}"#).starts_with("flows[0].tfrc.n: expected a number of flow shares above 1"));
        assert!(e(r#"{"equation": "cp", "n": 0.5}"#).ends_with("got 0.5"));
        assert!(e(r#"{"equation": "cp", "n": 1e9}"#).starts_with("flows[0].tfrc.n:"));
        assert_eq!(
            e(r#"{"equation": "cp", "n": 4, "max_n": 8}"#),
            "flows[0].tfrc.equation: max_n, j, improved_j_below and first_event_lost need equation = \"multfrc\""
        );
    }

    #[test]
    fn cp_options_resolve_and_normalize() {
        let c: TfrcCfg = serde_json::from_str(r#"{"equation": "cp", "n": 4}"#).unwrap();
        assert_eq!((c.cp, c.multfrc), (Some(CpCfg { n: 4.0 }), None));
        assert_eq!(c.resolve("tfrc").unwrap().equation, Equation::Cp { n: 4.0, b: 1.0 });
        let json = serde_json::to_string(&c).unwrap();
        assert!(json.ends_with(r#""equation":"cp","n":4.0}"#), "{json}");
        assert_eq!(serde_json::from_str::<TfrcCfg>(&json).unwrap(), c);
    }

    #[test]
    fn multfrc_options_resolve_and_normalize() {
        let m: TfrcCfg = serde_json::from_str(r#"{"equation": "multfrc", "n": 8, "max_n": 10, "b": 2}"#).unwrap();
        let c = m.resolve("tfrc").unwrap();
        assert_eq!(c.equation, Equation::MulTfrc { n: 8.0, b: 2.0, improved_j_below: 12.0, measured_j: true });
        let json = serde_json::to_string(&m).unwrap();
        assert!(
            json.contains(r#""equation":"multfrc","n":8.0,"max_n":10.0,"j":"measured","improved_j_below":12.0"#),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<TfrcCfg>(&json).unwrap(), m);
        // Defaults: n = 1, the draft's cap; TFRC writes none of the keys.
        let d: TfrcCfg = serde_json::from_str(r#"{"equation": "multfrc", "j": "one"}"#).unwrap();
        assert_eq!(
            d.multfrc,
            Some(MulTfrcCfg {
                n: 1.0,
                max_n: 6.0,
                j: JMode::One,
                improved_j_below: 12.0,
                first_event_lost: FirstEventLost::One
            })
        );
        let t = serde_json::to_string(&TfrcCfg::default()).unwrap();
        assert!(!t.contains("equation") && !t.contains("max_n"), "{t}");
        assert_eq!(TfrcConfig::rfc5348().equation, Equation::Tcp { b: 1.0 });
    }
}
