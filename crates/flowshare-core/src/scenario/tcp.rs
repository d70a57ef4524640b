//! TCP options as written in a scenario: their defaults and their check into a [`TcpConfig`].

use super::ensemble::EnsembleCfg;
use crate::cc::CcConfig;
use crate::tcp::{
    Decrease, MisRx, MisRxReference, RecoverRule, Recovery, RtoRestart, RttTiming, SackRecovery, TcpConfig,
};
use crate::units::{Bytes, Dur};
use crate::ConfigError;
use serde::{Deserialize, Serialize};

/// The largest initial window, segments: it is sent at once, a packet per segment.
pub const MAX_INITIAL_WINDOW: f64 = 1_000_000.0;

/// TCP options as written in a scenario (see `docs/scenarios.md`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpCfg {
    /// Loss recovery.
    #[serde(default)]
    pub recovery: Recovery,
    /// Congestion-control algorithm.
    #[serde(default)]
    pub cc: CcConfig,
    /// Payload bytes per segment.
    #[serde(default = "d_mss")]
    pub mss: Bytes,
    /// Header bytes per data segment.
    #[serde(default = "d_header")]
    pub header: Bytes,
    /// Wire size of an ACK.
    #[serde(default = "d_header")]
    pub ack_size: Bytes,
    /// Initial cwnd, segments.
    #[serde(default = "d_iw")]
    pub initial_window: f64,
    /// Initial ssthresh, segments; absent = unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_ssthresh: Option<f64>,
    /// Limited slow start (RFC 3742) above this window, segments; absent = off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ssthresh: Option<f64>,
    /// Slow start also when cwnd equals ssthresh (RFC 5681 §3.1 leaves that case to the
    /// sender; Linux 2.6.22, as ns-2's TCP-Linux runs it, slow-starts there).
    #[serde(default)]
    pub slow_start_at_ssthresh: bool,
    /// Receiver window, segments; absent = unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rwnd: Option<u64>,
    /// Largest burst per event; 0 = unlimited.
    #[serde(default)]
    pub max_burst: u32,
    /// Delayed ACKs on or off.
    #[serde(default)]
    pub delayed_ack: bool,
    /// Segments per delayed ACK.
    #[serde(default = "d_delack_count")]
    pub delack_count: u32,
    /// Delayed-ACK timeout.
    #[serde(default = "d_delack_timeout")]
    pub delack_timeout: Dur,
    /// Model the three-way handshake.
    #[serde(default)]
    pub handshake: bool,
    /// The first segment is a header-only SYN stand-in, sent and acknowledged as data within
    /// the initial window (ns-2's `syn_` with TCP-Linux, whose window is open from the start).
    #[serde(default)]
    pub syn_segment: bool,
    /// Initial RTO.
    #[serde(default = "d_one_second")]
    pub rto_initial: Dur,
    /// Minimum RTO.
    #[serde(default = "d_one_second")]
    pub rto_min: Dur,
    /// Maximum RTO.
    #[serde(default = "d_rto_max")]
    pub rto_max: Dur,
    /// Clock granularity.
    #[serde(default = "d_tick")]
    pub timer_tick: Dur,
    /// Largest backoff multiplier.
    #[serde(default = "d_max_backoff")]
    pub max_backoff: u32,
    /// The retransmission timer runs; `false` models TCP without timeout (RTO = ∞).
    #[serde(default = "d_true")]
    pub rto_enabled: bool,
    /// Mis-retransmission detection (Hasegawa ch. 3).
    #[serde(default)]
    pub misrx_detection: bool,
    /// Its factor k (0 < k < 1).
    #[serde(default = "d_misrx_k")]
    pub misrx_k: f64,
    /// The RTT it compares with.
    #[serde(default)]
    pub misrx_rtt: MisRxReference,
    /// Force a timeout on one segment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force_timeout: Option<ForceTimeout>,
    /// Explicit Congestion Notification (RFC 3168): data is sent ECN-capable, the sink echoes
    /// marks and the sender reduces its window once per window of data.
    #[serde(default, skip_serializing_if = "is_false")]
    pub ecn: bool,
    /// Largest random delay before each data segment leaves the sender (ns-2's `overhead_`),
    /// to break phase effects; absent = none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_jitter: Option<Dur>,
    /// Limited transmit (RFC 3042; ns-2's `singledup_`, on in ns-2 and Linux).
    #[serde(default = "d_true")]
    pub limited_transmit: bool,
    /// Credit window growth per newly acknowledged segment instead of per ACK (RFC 3465's
    /// byte counting with no limit, as Linux's `tcp_cong_avoid_ai` and `tcp_slow_start` do);
    /// off by default (RFC 5681, ns-2, ns-3).
    #[serde(default, skip_serializing_if = "is_false")]
    pub byte_counting: bool,
    /// With `recovery = "sack"`: `rfc6675`, `rate_halving` (ns-2.35's TCP-Linux) or `prr`
    /// (RFC 6937, Linux since 3.2).
    #[serde(default)]
    pub sack_recovery: SackRecovery,
    /// `careful` (RFC 6582 §4, ns-2's `bug_fix_`), `less_careful` or `after_timeout` (ns-2's Sack1).
    #[serde(default)]
    pub recover: RecoverRule,
    /// `new_data` (RFC 6298), `every_ack` (ns-2.35's TCP-Linux) or `oldest_sent` (a timer per
    /// packet, from the oldest unacknowledged segment's last send).
    #[serde(default)]
    pub rto_restart: RtoRestart,
    /// `every_ack` (timestamps) or `ns2` (one timed segment per round trip, in ticks).
    #[serde(default)]
    pub rtt_timing: RttTiming,
    /// Segments sent at most per duplicate ACK in fast recovery; 0 (default) for no limit,
    /// 2 for ns-2's NewReno.
    #[serde(default)]
    pub dupack_burst: u32,
    /// Bytes an ACK grows by per SACK block it carries (ns-2's Sack1 sink: 8); 0 by default.
    #[serde(default)]
    pub sack_block_bytes: Bytes,
    /// `flight` (RFC 5681) or `window` (ns-2.35's `slowdown`).
    #[serde(default)]
    pub decrease: Decrease,
    /// Put the connections under a common congestion controller per sending host and
    /// receiver or receiver network (ADR 0010); absent = each connection on its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ensemble: Option<EnsembleCfg>,
}

pub(super) fn is_false(b: &bool) -> bool {
    !*b
}

/// A timeout forced on one segment: the timer expires `after` its first transmission unless the
/// segment has been acknowledged (Experiment 1 of Hasegawa (2000), §3.2.2, sets packet 503's RTO
/// small).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForceTimeout {
    /// Segment number (from 0).
    pub segment: u64,
    /// Time from its first transmission to the timeout.
    pub after: Dur,
}

fn d_true() -> bool {
    true
}
fn d_misrx_k() -> f64 {
    0.5
}

fn d_mss() -> Bytes {
    Bytes(1460)
}
fn d_header() -> Bytes {
    Bytes(40)
}
fn d_iw() -> f64 {
    3.0
}
fn d_delack_count() -> u32 {
    2
}
fn d_delack_timeout() -> Dur {
    Dur::from_millis(100)
}
fn d_one_second() -> Dur {
    Dur::from_millis(1000)
}
fn d_rto_max() -> Dur {
    Dur::from_millis(60_000)
}
fn d_tick() -> Dur {
    Dur::from_millis(1)
}
fn d_max_backoff() -> u32 {
    64
}

impl Default for TcpCfg {
    fn default() -> Self {
        // Every field has a serde default; an empty table yields exactly those.
        serde_json::from_str("{}").expect("TcpCfg defaults are complete")
    }
}

impl TcpCfg {
    pub(super) fn resolve(&self, path: &str) -> Result<TcpConfig, ConfigError> {
        let err = |field: &str, msg: String| Err(ConfigError::new(format!("{path}.{field}"), msg));
        if self.mss.0 == 0 || self.mss.0 > 65_535 {
            return err("mss", format!("must be between 1B and 65535B, got {}", self.mss));
        }
        if self.header.0 > 65_535 {
            return err("header", format!("must be at most 65535B, got {}", self.header));
        }
        if self.ack_size.0 == 0 || self.ack_size.0 > 65_535 {
            return err("ack_size", format!("must be between 1B and 65535B, got {}", self.ack_size));
        }
        if !(self.initial_window >= 1.0 && self.initial_window.is_finite()) {
            return err("initial_window", format!("must be a number of segments >= 1, got {}", self.initial_window));
        }
        if self.initial_window > MAX_INITIAL_WINDOW {
            // The whole initial window leaves at once, one packet each.
            return err(
                "initial_window",
                format!("must be at most {MAX_INITIAL_WINDOW} segments, got {}", self.initial_window),
            );
        }
        if let Some(s) = self.initial_ssthresh {
            if s.is_nan() || s < 2.0 {
                return err("initial_ssthresh", format!("must be >= 2 segments, got {s}"));
            }
        }
        if let Some(m) = self.max_ssthresh {
            if m.is_nan() || m < 2.0 {
                return err("max_ssthresh", format!("must be >= 2 segments, got {m}"));
            }
        }
        if self.rwnd == Some(0) {
            return err("rwnd", "must be at least 1 segment".into());
        }
        if self.delack_count == 0 {
            return err("delack_count", "must be at least 1".into());
        }
        if self.timer_tick.0 == 0 {
            return err("timer_tick", "must be greater than 0".into());
        }
        if self.rto_initial.0 == 0 {
            return err("rto_initial", "must be greater than 0".into());
        }
        if self.rto_min > self.rto_max {
            return err("rto_min", format!("{} is larger than rto_max = {}", self.rto_min, self.rto_max));
        }
        if self.max_backoff == 0 {
            return err("max_backoff", "must be at least 1".into());
        }
        if !(self.misrx_k > 0.0 && self.misrx_k < 1.0) {
            return err("misrx_k", format!("must be between 0 and 1 (exclusive), got {}", self.misrx_k));
        }
        if self.misrx_detection && self.recovery == Recovery::Sack {
            return err(
                "misrx_detection",
                "is available with recovery = \"tahoe\", \"reno\" or \"newreno\", not \"sack\"".into(),
            );
        }
        if self.sack_recovery != SackRecovery::Rfc6675 && self.recovery != Recovery::Sack {
            return err(
                "sack_recovery",
                format!(
                    "\"{}\" needs recovery = \"sack\", got recovery = \"{}\"",
                    self.sack_recovery.as_str(),
                    self.recovery.as_str()
                ),
            );
        }
        if matches!(self.cc, CcConfig::VegasNs2(_)) && matches!(self.recovery, Recovery::Sack | Recovery::Tahoe) {
            return err(
                "recovery",
                format!(
                    "\"{}\" cannot be used with cc vegas variant \"ns2\", which does its own loss recovery; use \"newreno\" or \"reno\"",
                    self.recovery.as_str()
                ),
            );
        }
        if self.cc.is_aggregate() {
            // Each loop's segments are accounted for through the SACK scoreboard, and the
            // connection's window must stay the loops' sum through recovery.
            if self.recovery != Recovery::Sack {
                return err(
                    "recovery",
                    format!(
                        "cc \"{}\" needs recovery = \"sack\", got \"{}\"",
                        self.cc.as_str(),
                        self.recovery.as_str()
                    ),
                );
            }
            if self.sack_recovery != SackRecovery::Rfc6675 {
                return err(
                    "sack_recovery",
                    format!(
                        "cc \"{}\" needs sack_recovery = \"rfc6675\", got \"{}\"",
                        self.cc.as_str(),
                        self.sack_recovery.as_str()
                    ),
                );
            }
            if self.ecn {
                return err(
                    "ecn",
                    format!("cc \"{}\" cannot tell which loop an ECN echo is for; remove ecn = true", self.cc.as_str()),
                );
            }
        }
        if self.syn_segment && self.handshake {
            return err(
                "syn_segment",
                "is a stand-in for the handshake and cannot be used with handshake = true; choose one".into(),
            );
        }
        if self.sack_block_bytes.0 > 40 {
            return err(
                "sack_block_bytes",
                format!("must be at most 40B (the TCP option space), got {}", self.sack_block_bytes),
            );
        }
        if let Some(f) = self.force_timeout {
            if f.after.0 == 0 {
                return err("force_timeout.after", "must be greater than 0s".into());
            }
        }
        Ok(TcpConfig {
            recovery: self.recovery,
            mss: self.mss.0 as u32,
            header: self.header.0 as u32,
            ack_size: self.ack_size.0 as u32,
            initial_window: self.initial_window,
            initial_ssthresh: self.initial_ssthresh.unwrap_or(f64::INFINITY),
            max_ssthresh: self.max_ssthresh,
            slow_start_at_ssthresh: self.slow_start_at_ssthresh,
            rwnd: self.rwnd.unwrap_or(u64::MAX),
            max_burst: self.max_burst,
            delayed_ack: self.delayed_ack.then_some((self.delack_count, self.delack_timeout.0)),
            handshake: self.handshake,
            syn_segment: self.syn_segment,
            rto_initial: self.rto_initial.0,
            rto_min: self.rto_min.0,
            rto_max: self.rto_max.0,
            timer_tick: self.timer_tick.0,
            max_backoff: self.max_backoff,
            rto_enabled: self.rto_enabled,
            misrx: self.misrx_detection.then_some(MisRx { k: self.misrx_k, reference: self.misrx_rtt }),
            force_timeout: self.force_timeout.map(|f| (f.segment, f.after.0)),
            // DCTCP needs ECN (Linux's TCP_CONG_NEEDS_ECN): its connections are ECN-capable.
            ecn: self.ecn || matches!(self.cc, CcConfig::Dctcp(_)),
            dctcp: matches!(self.cc, CcConfig::Dctcp(_)),
            send_jitter: self.send_jitter.map_or(0, |d| d.0),
            limited_transmit: self.limited_transmit,
            byte_counting: self.byte_counting,
            sack_recovery: self.sack_recovery,
            recover: self.recover,
            rto_restart: self.rto_restart,
            rtt_timing: self.rtt_timing,
            dupack_burst: self.dupack_burst,
            sack_block_bytes: self.sack_block_bytes.0 as u32,
            decrease: self.decrease,
            min_cwnd_half: self.sack_recovery == SackRecovery::RateHalving && self.cc.halves_to_min_cwnd(),
            ns2_vegas: match self.cc {
                CcConfig::VegasNs2(p) => Some(p),
                _ => None,
            },
        })
    }
}
