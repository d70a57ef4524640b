//! TCP mechanism: a one-way sender and sink in the style of ns-2 (no handshake unless asked
//! for), counted in segments, with the classic loss-recovery variants.

pub mod http;
mod lost;
pub mod sender;
pub mod sink;

pub use sender::{Controller, Sender, SenderStats};
pub use sink::Sink;

use crate::units::Time;
use serde::{Deserialize, Serialize};

/// Loss-recovery variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Recovery {
    /// Fast retransmit, then slow start from one segment (no fast recovery).
    Tahoe,
    /// Fast retransmit and fast recovery; recovery ends on the first new ACK (RFC 5681 §3.2).
    Reno,
    /// Reno with partial-ACK handling: recovery ends when all data outstanding at its start
    /// is acknowledged (RFC 6582).
    #[default]
    Newreno,
    /// SACK-based recovery with the pipe estimate (RFC 6675).
    Sack,
}

impl Recovery {
    /// The name used in scenarios and results.
    pub fn as_str(self) -> &'static str {
        match self {
            Recovery::Tahoe => "tahoe",
            Recovery::Reno => "reno",
            Recovery::Newreno => "newreno",
            Recovery::Sack => "sack",
        }
    }
}

/// When duplicate ACKs may start a new fast retransmit after a loss episode (RFC 6582 §4):
/// `recover` is one past the highest segment sent when the episode began.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RecoverRule {
    /// Only once the cumulative ACK goes beyond `recover` (RFC 6582's careful variant; ns-2's
    /// `bug_fix_`): duplicate ACKs at exactly `recover`, which the go-back-N resending after a
    /// timeout produces, start nothing.
    #[default]
    Careful,
    /// Also when it equals `recover` (RFC 6582's less careful variant; ns-2's `less_careful_`;
    /// the TCP Reno of Hasegawa's thesis, whose Experiment 1 fast-retransmits on exactly these
    /// duplicate ACKs).
    LessCareful,
    /// As `Careful` after a timeout, but a fast recovery that ends clears `recover`, so a loss
    /// of the first segment sent after the recovery began starts a new fast retransmit rather
    /// than waiting for the timer (ns-2's `Agent/TCP/Sack1`, which sets `recover_` to 0 when
    /// its fast recovery ends and only a timeout sets it to stay).
    AfterTimeout,
}

/// What a window reduction is taken from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Decrease {
    /// FlightSize, at most the window in force (RFC 5681 §3.2 eq. 4).
    #[default]
    Flight,
    /// The window ⌊min(cwnd, rwnd)⌋ (ssthresh in fast recovery), with ssthresh truncated to
    /// whole segments: ns-2.35's `TcpAgent::slowdown` (`precision_reduce_` off).
    Window,
}

/// When the retransmission timer restarts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RtoRestart {
    /// On an ACK of new data (RFC 6298 §5.3).
    #[default]
    NewData,
    /// On every ACK, duplicate ACKs included, while data is outstanding: ns-2.35's TCP-Linux
    /// agent (`renew_timer` in `time_processing`), where a small window waiting for the SACK
    /// marking to find its loss is not cut short by the timer.
    EveryAck,
    /// Never restarted by an ACK as such: the timer runs from the last send of the oldest
    /// unacknowledged segment, a timer per packet (RFC 7765's restart rule applied always).
    /// When the RTT jumps above an RTO that has converged to a constant RTT, a segment's timer
    /// expires before its ACK returns however closely the ACKs of earlier segments follow:
    /// the mis-retransmission of G. Hasegawa, PhD thesis, Osaka University, 2000, §3.3.
    OldestSent,
}

/// Which RTT measurements feed the retransmission timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RttTiming {
    /// Every ACK that does not echo a retransmission (as with timestamps, RFC 7323), with
    /// RFC 6298's filter in nanoseconds.
    #[default]
    EveryAck,
    /// ns-2.35's `TcpAgent` without timestamps: one segment timed per round trip, measured
    /// in whole clock ticks from a random clock phase per connection (`boot_time_`), with its
    /// integer filter; a timeout or fast retransmit abandons the measurement (Karn), and a
    /// backoff beyond 8 folds SRTT into RTTVAR (`rtt_backoff`).
    Ns2,
}

/// How a SACK sender counts what is in flight and reduces its window in recovery
/// (`recovery = "sack"` only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SackRecovery {
    /// RFC 6675: outside recovery the window limits the data outstanding (limited transmit
    /// sends on the first two duplicate ACKs); a segment is lost when three SACKed segments
    /// lie above it; cwnd = ssthresh on entry, and the pipe estimate paces recovery.
    #[default]
    Rfc6675,
    /// ns-2.35's TCP-Linux (Linux 2.6.22 as ported): SACKed and lost segments leave the pipe
    /// at all times, so every duplicate ACK releases new data; a segment is lost when four
    /// segments above it are SACKed, a retransmission when a segment sent after it is; on entry
    /// cwnd = the algorithm's `min_cwnd` (ssthresh / 2 for reno, highspeed, scalable, vegas and
    /// compound) or ssthresh, and the pipe falls from the old window by one segment per two
    /// ACKs; on exit cwnd rises to ssthresh but not above pipe + 3 (`tcp_moderate_cwnd`).
    RateHalving,
    /// Linux since 3.2: SACKed and lost segments leave the pipe at all times; proportional
    /// rate reduction (RFC 6937, with slow-start reduction bound) takes the pipe to ssthresh
    /// during recovery; cwnd = ssthresh on exit.
    Prr,
}

impl SackRecovery {
    /// The name used in scenarios.
    pub fn as_str(self) -> &'static str {
        match self {
            SackRecovery::Rfc6675 => "rfc6675",
            SackRecovery::RateHalving => "rate_halving",
            SackRecovery::Prr => "prr",
        }
    }

    /// SACKed and lost segments leave the pipe outside recovery too (Linux's accounting).
    pub fn linux_pipe(self) -> bool {
        self != SackRecovery::Rfc6675
    }
}

/// Which RTT a mis-retransmission check compares the first ACK after a timeout with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MisRxReference {
    /// The last valid RTT sample before the timeout (resolution hasegawa:A19).
    #[default]
    LastSample,
    /// The smoothed RTT before the timeout.
    Srtt,
}

/// Mis-retransmission detection (Hasegawa, ch. 3, Eq 3.16): a timeout was spurious when the
/// first ACK after it comes back faster than `k` times the RTT before it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MisRx {
    /// The factor k, 0 < k < 1.
    pub k: f64,
    /// The RTT compared with.
    pub reference: MisRxReference,
}

/// Resolved TCP parameters of one connection (times in nanoseconds, sizes in bytes).
#[derive(Clone, Copy, Debug)]
pub struct TcpConfig {
    /// Loss recovery.
    pub recovery: Recovery,
    /// Payload bytes per segment.
    pub mss: u32,
    /// Header bytes added to each data segment on the wire.
    pub header: u32,
    /// Wire size of an ACK, SYN or SYN-ACK.
    pub ack_size: u32,
    /// Initial cwnd, segments.
    pub initial_window: f64,
    /// Initial ssthresh, segments.
    pub initial_ssthresh: f64,
    /// Limited slow start above this window (RFC 3742).
    pub max_ssthresh: Option<f64>,
    /// Slow start when cwnd equals ssthresh too.
    pub slow_start_at_ssthresh: bool,
    /// Receiver window, segments.
    pub rwnd: u64,
    /// Most segments sent in response to one event; 0 = unlimited.
    pub max_burst: u32,
    /// Delayed ACKs: (ACK every `n` segments, timeout); `None` acknowledges every segment.
    pub delayed_ack: Option<(u32, Time)>,
    /// Model the three-way handshake.
    pub handshake: bool,
    /// Segment 0 is a header-only SYN stand-in carried as data (ns-2's `syn_`).
    pub syn_segment: bool,
    /// Initial retransmission timeout.
    pub rto_initial: Time,
    /// Lower bound of the RTO.
    pub rto_min: Time,
    /// Upper bound of the RTO, backoff included.
    pub rto_max: Time,
    /// Clock granularity G: the RTO is a whole number of ticks.
    pub timer_tick: Time,
    /// Largest backoff multiplier.
    pub max_backoff: u32,
    /// The retransmission timer runs; `false` is "TCP without timeout" (RTO = ∞).
    pub rto_enabled: bool,
    /// Mis-retransmission detection, if enabled.
    pub misrx: Option<MisRx>,
    /// Force a timeout: the timer expires this long after segment `.0` is first sent, unless
    /// it has been acknowledged by then.
    pub force_timeout: Option<(u64, Time)>,
    /// Send data ECN-capable and react to echoed marks (RFC 3168).
    pub ecn: bool,
    /// DCTCP's ECN (RFC 8257): the sink echoes each segment's CE mark (§3.2, with its
    /// two-state machine under delayed ACKs) instead of latching ECE until CWR, and the sender
    /// grows its window on marked ACKs outside the window after a reduction.
    pub dctcp: bool,
    /// Largest random delay before each data segment leaves (0 = none; ns-2's `overhead_`).
    pub send_jitter: Time,
    /// Limited transmit (RFC 3042): one new segment on each of the first two duplicate ACKs.
    pub limited_transmit: bool,
    /// Credit window growth per newly acknowledged segment rather than per ACK (RFC 3465's
    /// byte counting with no limit, as Linux does).
    pub byte_counting: bool,
    /// SACK accounting and window reduction (with [`Recovery::Sack`]).
    pub sack_recovery: SackRecovery,
    /// When a new fast retransmit may follow a loss episode.
    pub recover: RecoverRule,
    /// When the retransmission timer restarts.
    pub rto_restart: RtoRestart,
    /// Which RTT measurements feed the retransmission timer.
    pub rtt_timing: RttTiming,
    /// Segments sent at most per duplicate ACK in fast recovery, from the third on (0: no
    /// limit; ns-2's NewReno sends at most 2, `send_much(0, 0, 2)`).
    pub dupack_burst: u32,
    /// Bytes an ACK grows by per SACK block (ns-2.35's `Agent/TCPSink/Sack1`: 8).
    pub sack_block_bytes: u32,
    /// What a window reduction is taken from.
    pub decrease: Decrease,
    /// With [`SackRecovery::RateHalving`]: recovery starts from ssthresh / 2 (the algorithm's
    /// `min_cwnd` in Linux 2.6.22) instead of ssthresh.
    pub min_cwnd_half: bool,
    /// ns-2.35's Vegas agent (`vegas` with `variant = "ns2"`), which takes over loss recovery.
    pub ns2_vegas: Option<crate::cc::vegas::Ns2VegasParams>,
}
