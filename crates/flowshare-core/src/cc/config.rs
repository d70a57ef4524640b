//! The algorithm registry: what a scenario may write as `tcp.cc`.
//!
//! `cc = "scalable"` picks an algorithm with its defaults; `cc = { algo = "multcp", n = 4 }`
//! sets parameters. Every algorithm's parameters are checked here, so a built algorithm can
//! trust them.

use super::bbr::{Bbr, BbrParams};
use super::bic::{Bic, BicParams, BicVariant};
use super::compound::{Compound, CompoundParams, CompoundVariant};
use super::cubic::{Cubic, CubicParams, CubicVariant, HystartDetect};
use super::dctcp::{Dctcp, DctcpParams};
use super::fast::{AlphaTuning, AvgWeight, Fast, FastParams, FastSlowStart};
use super::highspeed::{HighSpeed, HighSpeedVariant};
use super::htcp::{Htcp, HtcpParams, HtcpVariant};
use super::mpat::{Mpat, MpatParams, MAX_LOOPS};
use super::multcp::{LossPolicy, MulTcp, MulTcpSlowStart};
use super::pamultcp::{AdjustWeight, Assignment, PaMulTcp, PaMulTcpParams, TimeoutRule};
use super::scalable::{Scalable, ScalableVariant};
use super::stochastic::{Stochastic, MAX_STREAMS};
use super::vegas::{Ns2Vegas, Ns2VegasParams, RefreshTo, Vegas, VegasDiff, VegasRule, VegasSlowStart, VegasVariant};
use super::vegas_linux::{LinuxVegas, LinuxVegasParams};
use super::{Aimd, CongestionControl, GroupControl, Solo};

/// How [`CcConfig`] packages the algorithm it builds.
trait Make {
    type Out;
    fn make<C: CongestionControl + Copy + 'static>(alg: C) -> Self::Out;
    /// A controller that is a group controller only (PA-MulTCP, MPAT).
    fn group(ctl: Box<dyn GroupControl>) -> Self::Out;
}

/// A boxed algorithm.
struct Boxed;

impl Make for Boxed {
    type Out = Box<dyn CongestionControl>;
    fn make<C: CongestionControl + Copy + 'static>(alg: C) -> Self::Out {
        Box::new(alg)
    }
    fn group(ctl: Box<dyn GroupControl>) -> Self::Out {
        panic!("{} runs several window loops in one connection: build it with build_solo", ctl.name())
    }
}

/// The algorithm as a group of one.
struct AsSolo;

impl Make for AsSolo {
    type Out = Box<dyn GroupControl>;
    fn make<C: CongestionControl + Copy + 'static>(alg: C) -> Self::Out {
        Solo::boxed(alg)
    }
    fn group(ctl: Box<dyn GroupControl>) -> Self::Out {
        ctl
    }
}
use super::aggregate::Join;
use crate::units::Dur;
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A congestion-control algorithm with its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Default)]
#[serde(tag = "algo", rename_all = "snake_case")]
pub enum CcConfig {
    /// Reno: AIMD(1, 1/2), RFC 5681.
    #[default]
    Reno,
    /// Scalable TCP (Kelly 2003).
    Scalable {
        /// `paper` (+0.01 per ACK, Reno below 16 segments) or `linux` (+1 per 50 ACKs).
        variant: ScalableVariant,
    },
    /// HighSpeed TCP (RFC 3649).
    Highspeed {
        /// `rfc` (the continuous a(w), b(w)) or `linux` (the Appendix B table).
        variant: HighSpeedVariant,
    },
    /// BIC TCP (Xu, Harfoush, Rhee 2004): `variant` (`linux` or `paper`) and its constants.
    Bic(BicParams),
    /// CUBIC (RFC 9438): `variant` (`rfc` or `ns2`) and its constants.
    Cubic(CubicParams),
    /// FAST TCP (Jin, Wei, Low 2004): α segments queued per flow.
    Fast(FastParams),
    /// FAST with α-tuning (FAST-AT): FAST whose α follows its rate (an assumption, see docs).
    FastAt(FastParams),
    /// H-TCP (Leith and Shorten 2004): `variant` (`linux` or `paper`) and its options.
    Htcp(HtcpParams),
    /// Compound TCP (Tan et al. 2006): `variant` (`paper` or `ns2`) and its constants.
    Compound(CompoundParams),
    /// BBR v1 (Cardwell et al. 2016; Linux `tcp_bbr.c`).
    Bbr(BbrParams),
    /// DCTCP (Alizadeh et al. 2010; RFC 8257): `g` and `initial_alpha`.
    Dctcp(DctcpParams),
    /// AIMD(a, b): `a` segments more per RTT, the window times 1 − `b` on a loss (Yang and Lam
    /// 2000); Reno is AIMD(1, 1/2).
    Aimd {
        /// Segments added per RTT in congestion avoidance (> 0).
        a: f64,
        /// Fraction of the window removed on a loss (0 < b < 1).
        b: f64,
    },
    /// MulTCP(N): one connection that behaves like N Reno flows (Crowcroft and Oechslin 1998).
    Multcp {
        /// Number of flows emulated (real, at least 1).
        n: f64,
        /// `standard` or `triple` (the original paper's ×3 per RTT until N flows would catch up).
        slow_start: MulTcpSlowStart,
        /// How ssthresh is set on a loss (resolution pamultcp:A16).
        loss_policy: LossPolicy,
    },
    /// PA-MulTCP (Kuo and Fu 2008): a probe loop and an adjusting loop capped by the probe
    /// loop's loss-event rate, in one SACK connection carrying `n` flows.
    Pamultcp(PaMulTcpParams),
    /// MPAT (Singh, Pradhan and Francis 2004): one AIMD(1, 1/2) loop per member flow in one
    /// SACK connection.
    Mpat(MpatParams),
    /// Stochastic TCP (Hacker and Smith 2008): one window, the sum of `n` virtual Reno streams
    /// to which ACKs and losses are handed at random.
    Stochastic {
        /// Number of virtual streams (whole, 1 to 64).
        n: u32,
        /// ACKs a stream must be given per increment of 1/w (default 1).
        acks_per_increase: u32,
    },
    /// TCP Vegas (Brakmo and Peterson 1995; Hasegawa (2000) §1.2.3).
    Vegas {
        /// Below this many queued segments, +1 per RTT (default 2).
        alpha: f64,
        /// Above this many queued segments, −1 per RTT (default 4).
        beta: f64,
        /// Slow-start exit threshold of the `brakmo` and `linux` slow starts (default 1).
        gamma: f64,
        /// `thesis` (+1 every other ACK), `brakmo` (double every other RTT) or `linux`.
        slow_start: VegasSlowStart,
        /// `paper` (cwnd·(1 − baseRTT/rtt)) or `linux` (cwnd·(rtt − baseRTT)/baseRTT).
        diff: VegasDiff,
        /// Period of the base-RTT refresh (Hasegawa (2000) §5.3.1, e.g. "100ms"); none by default.
        base_rtt_refresh: Option<Dur>,
        /// What baseRTT becomes at a refresh: `interval_min` or `last_sample` (resolution
        /// hasegawa:A36).
        refresh_to: RefreshTo,
    },
    /// ns-2.35's `Agent/TCP/Vegas` (`algo = "vegas", variant = "ns2"`): its own loss
    /// recovery, fine-grained timeout and per-round rule, run by the sender.
    #[serde(rename = "vegas")]
    VegasNs2(Ns2VegasParams),
    /// Linux 2.6.22's `tcp_vegas.c` as ns-2.35's TCP-Linux runs it (`algo = "vegas", variant =
    /// "linux"`): fixed-point diff on the previous round's window, one step per round.
    VegasLinux(LinuxVegasParams),
    /// Enhanced Vegas (Hasegawa 2000, Eq 2.26): Vegas with α = β = δ and no dead zone.
    VegasEnhanced {
        /// Target number of queued segments (default 3).
        delta: f64,
        /// As for `vegas`.
        gamma: f64,
        /// As for `vegas`.
        slow_start: VegasSlowStart,
        /// As for `vegas`.
        diff: VegasDiff,
        /// As for `vegas`.
        base_rtt_refresh: Option<Dur>,
        /// As for `vegas`.
        refresh_to: RefreshTo,
    },
}

/// Names accepted for `algo`, in the order error messages list them.
pub const ALGORITHMS: &[&str] = &[
    "reno",
    "aimd",
    "scalable",
    "multcp",
    "pamultcp",
    "mpat",
    "stochastic",
    "vegas",
    "vegas_enhanced",
    "highspeed",
    "bic",
    "cubic",
    "htcp",
    "compound",
    "fast",
    "fast_at",
    "bbr",
    "dctcp",
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScalableParams {
    #[serde(default)]
    variant: ScalableVariant,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AimdParams {
    #[serde(default = "one")]
    a: f64,
    #[serde(default = "half")]
    b: f64,
}

fn half() -> f64 {
    0.5
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MulTcpParams {
    #[serde(default = "one")]
    n: f64,
    #[serde(default)]
    slow_start: MulTcpSlowStart,
    #[serde(default)]
    loss_policy: LossPolicy,
}

fn one() -> f64 {
    1.0
}

fn two() -> f64 {
    2.0
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PaMulTcpRaw {
    #[serde(default = "two")]
    n: f64,
    #[serde(default)]
    assignment: Assignment,
    #[serde(default)]
    timeout: TimeoutRule,
    #[serde(default)]
    adjust_weight: AdjustWeight,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MpatRaw {
    #[serde(default = "one")]
    n: f64,
    #[serde(default = "one")]
    new_loop_cwnd: f64,
}

/// Most members an aggregate controller starts with.
pub const AGGREGATE_MAX_N: f64 = 200.0;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StochasticParams {
    #[serde(default = "one")]
    n: f64,
    #[serde(default = "one")]
    acks_per_increase: f64,
}

/// The most ACKs per increment Stochastic TCP accepts.
pub const STOCHASTIC_MAX_ACKS: f64 = 1_000_000.0;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VegasParams {
    #[serde(default)]
    variant: VegasVariant,
    alpha: Option<f64>,
    beta: Option<f64>,
    gamma: Option<f64>,
    slow_start: Option<VegasSlowStart>,
    diff: Option<VegasDiff>,
    #[serde(default)]
    base_rtt_refresh: Option<Dur>,
    refresh_to: Option<RefreshTo>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VegasEnhancedParams {
    #[serde(default = "vegas_delta")]
    delta: f64,
    #[serde(default = "vegas_gamma")]
    gamma: f64,
    #[serde(default)]
    slow_start: VegasSlowStart,
    #[serde(default)]
    diff: VegasDiff,
    #[serde(default)]
    base_rtt_refresh: Option<Dur>,
    #[serde(default)]
    refresh_to: RefreshTo,
}

fn vegas_alpha() -> f64 {
    super::vegas::ALPHA
}
fn vegas_beta() -> f64 {
    super::vegas::BETA
}
fn vegas_gamma() -> f64 {
    super::vegas::GAMMA
}
fn vegas_delta() -> f64 {
    super::vegas::DELTA
}

/// Check the options Vegas and Enhanced Vegas share.
/// The most flows a MulTCP aggregate emulates: its window grows n times as fast, and past
/// this it sends more than any link the scenario can describe carries.
pub const MULTCP_MAX_N: f64 = 10_000.0;

fn check_vegas_common(gamma: f64, base_rtt_refresh: Option<Dur>) -> Result<(), String> {
    if !(gamma.is_finite() && gamma >= 0.0) {
        return Err(format!("gamma: must be a number of segments >= 0, got {gamma}"));
    }
    if let Some(p) = base_rtt_refresh {
        if p.0 == 0 {
            return Err("base_rtt_refresh: must be a positive time such as \"100ms\", got 0".into());
        }
    }
    Ok(())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HighSpeedParams {
    #[serde(default)]
    variant: HighSpeedVariant,
}

/// BIC: a variant and overrides of its defaults.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BicTable {
    #[serde(default)]
    variant: BicVariant,
    beta: Option<f64>,
    s_max: Option<f64>,
    s_min: Option<f64>,
    low_window: Option<f64>,
    fast_convergence: Option<bool>,
}

/// CUBIC: a variant and overrides of its defaults.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CubicTable {
    #[serde(default)]
    variant: CubicVariant,
    c: Option<f64>,
    beta: Option<f64>,
    fast_convergence: Option<bool>,
    tcp_friendliness: Option<bool>,
    hystart: Option<bool>,
    hystart_detect: Option<HystartDetect>,
    hystart_low_window: Option<f64>,
    hystart_ack_delta: Option<Dur>,
}

/// DCTCP: overrides of its defaults.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DctcpTable {
    g: Option<f64>,
    initial_alpha: Option<f64>,
}

fn dctcp_params(t: DctcpTable) -> Result<DctcpParams, String> {
    let d = DctcpParams::default();
    let p = DctcpParams { g: t.g.unwrap_or(d.g), initial_alpha: t.initial_alpha.unwrap_or(d.initial_alpha) };
    if !(p.g.is_finite() && p.g > 0.0 && p.g <= 1.0) {
        return Err(format!("g: must be the weight of the newest window in alpha, 0 < g <= 1, got {}", p.g));
    }
    if !(p.initial_alpha.is_finite() && (0.0..=1.0).contains(&p.initial_alpha)) {
        return Err(format!(
            "initial_alpha: must be a fraction of marked segments, 0 <= initial_alpha <= 1, got {}",
            p.initial_alpha
        ));
    }
    Ok(p)
}

/// BBR: overrides of its defaults.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BbrTable {
    bw_window: Option<u32>,
    min_rtt_window: Option<Dur>,
    probe_rtt_time: Option<Dur>,
    random_start: Option<bool>,
}

fn bbr_params(t: BbrTable) -> Result<BbrParams, String> {
    let d = BbrParams::default();
    let p = BbrParams {
        bw_window: t.bw_window.unwrap_or(d.bw_window),
        min_rtt_window: t.min_rtt_window.unwrap_or(d.min_rtt_window),
        probe_rtt_time: t.probe_rtt_time.unwrap_or(d.probe_rtt_time),
        random_start: t.random_start.unwrap_or(d.random_start),
    };
    if !(1..=1000).contains(&p.bw_window) {
        return Err(format!("bw_window: must be a number of rounds from 1 to 1000, got {}", p.bw_window));
    }
    if p.min_rtt_window.0 == 0 {
        return Err("min_rtt_window: must be a positive time such as \"10s\", got 0".into());
    }
    if p.probe_rtt_time.0 == 0 {
        return Err("probe_rtt_time: must be a positive time such as \"200ms\", got 0".into());
    }
    Ok(p)
}

/// β as the fraction of the window kept on a loss: strictly between 0 and 1.
fn check_kept_fraction(beta: f64) -> Result<(), String> {
    if !(beta.is_finite() && beta > 0.0 && beta < 1.0) {
        return Err(format!("beta: must be the fraction of the window kept on a loss, 0 < beta < 1, got {beta}"));
    }
    Ok(())
}

/// H-TCP: a variant and overrides of its defaults.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HtcpTable {
    #[serde(default)]
    variant: HtcpVariant,
    rtt_scaling: Option<bool>,
    bandwidth_switch: Option<bool>,
    delta_l: Option<Dur>,
}

fn htcp_params(t: HtcpTable) -> Result<HtcpParams, String> {
    let d = HtcpParams::defaults(t.variant);
    let p = HtcpParams {
        variant: t.variant,
        rtt_scaling: t.rtt_scaling.unwrap_or(d.rtt_scaling),
        bandwidth_switch: t.bandwidth_switch.unwrap_or(d.bandwidth_switch),
        delta_l: t.delta_l.unwrap_or(d.delta_l),
    };
    if p.variant == HtcpVariant::Linux && !p.delta_l.0.is_multiple_of(1_000_000) {
        return Err(format!(
            "delta_l: the linux variant counts whole milliseconds (jiffies), got {}; use variant = \"paper\" for finer times",
            p.delta_l
        ));
    }
    Ok(p)
}

fn bic_params(t: BicTable) -> Result<BicParams, String> {
    let d = BicParams::defaults(t.variant);
    let p = BicParams {
        variant: t.variant,
        beta: t.beta.unwrap_or(d.beta),
        s_max: t.s_max.unwrap_or(d.s_max),
        s_min: t.s_min.unwrap_or(d.s_min),
        low_window: t.low_window.unwrap_or(d.low_window),
        fast_convergence: t.fast_convergence.unwrap_or(d.fast_convergence),
    };
    check_kept_fraction(p.beta)?;
    if !(p.s_max.is_finite() && p.s_max > 0.0) {
        return Err(format!("s_max: must be a number of segments per RTT > 0, got {}", p.s_max));
    }
    if !(p.s_min.is_finite() && p.s_min > 0.0 && p.s_min <= p.s_max) {
        return Err(format!(
            "s_min: must be a number of segments per RTT > 0 and <= s_max ({}), got {}",
            p.s_max, p.s_min
        ));
    }
    if !(p.low_window.is_finite() && p.low_window >= 0.0) {
        return Err(format!("low_window: must be a number of segments >= 0, got {}", p.low_window));
    }
    Ok(p)
}

fn cubic_params(t: CubicTable) -> Result<CubicParams, String> {
    let d = CubicParams::defaults(t.variant);
    let p = CubicParams {
        variant: t.variant,
        c: t.c.unwrap_or(d.c),
        beta: t.beta.unwrap_or(d.beta),
        fast_convergence: t.fast_convergence.unwrap_or(d.fast_convergence),
        tcp_friendliness: t.tcp_friendliness.unwrap_or(d.tcp_friendliness),
        hystart: t.hystart.unwrap_or(d.hystart),
        hystart_detect: t.hystart_detect.unwrap_or(d.hystart_detect),
        hystart_low_window: t.hystart_low_window.unwrap_or(d.hystart_low_window),
        hystart_ack_delta: t.hystart_ack_delta.unwrap_or(d.hystart_ack_delta),
    };
    if !(p.hystart_low_window.is_finite() && p.hystart_low_window >= 0.0) {
        return Err(format!("hystart_low_window: must be a number of segments >= 0, got {}", p.hystart_low_window));
    }
    if !p.hystart {
        let set = [
            ("hystart_detect", t.hystart_detect.is_some()),
            ("hystart_low_window", t.hystart_low_window.is_some()),
            ("hystart_ack_delta", t.hystart_ack_delta.is_some()),
        ];
        if let Some((name, _)) = set.iter().find(|(_, s)| *s) {
            return Err(format!("{name}: HyStart is off; add hystart = true to use it"));
        }
    }
    if !(p.c.is_finite() && p.c > 0.0) {
        return Err(format!("c: must be a number of segments/s^3 > 0, got {}", p.c));
    }
    check_kept_fraction(p.beta)?;
    Ok(p)
}

/// FAST and FAST-AT: overrides of the defaults.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FastTable {
    alpha: Option<f64>,
    beta: Option<f64>,
    gamma: Option<f64>,
    update_period: Option<Dur>,
    every_other_rtt: Option<bool>,
    pace: Option<bool>,
    mi_threshold: Option<Dur>,
    slow_start: Option<FastSlowStart>,
    avg_weight: Option<AvgWeight>,
    alpha_tuning: Option<AlphaTuning>,
    alpha_min: Option<f64>,
}

fn fast_params(t: FastTable, d: FastParams) -> Result<FastParams, String> {
    let p = FastParams {
        alpha: t.alpha.unwrap_or(d.alpha),
        beta: t.beta.or(d.beta),
        gamma: t.gamma.unwrap_or(d.gamma),
        update_period: t.update_period.unwrap_or(d.update_period),
        every_other_rtt: t.every_other_rtt.unwrap_or(d.every_other_rtt),
        pace: t.pace.unwrap_or(d.pace),
        mi_threshold: t.mi_threshold.unwrap_or(d.mi_threshold),
        slow_start: t.slow_start.unwrap_or(d.slow_start),
        avg_weight: t.avg_weight.unwrap_or(d.avg_weight),
        alpha_tuning: t.alpha_tuning.unwrap_or(d.alpha_tuning),
        alpha_min: t.alpha_min.unwrap_or(d.alpha_min),
    };
    if !(p.alpha.is_finite() && p.alpha > 0.0) {
        return Err(format!("alpha: must be a number of segments > 0, got {}", p.alpha));
    }
    match (d.alpha_tuning, p.alpha_tuning) {
        (AlphaTuning::None, AlphaTuning::None) => {}
        (AlphaTuning::None, _) => {
            return Err("alpha_tuning: `fast` keeps alpha fixed; use algo = \"fast_at\" to tune it".into())
        }
        (_, AlphaTuning::None) => return Err("alpha_tuning: must be `rate` or `loss` for `fast_at`".into()),
        _ => {}
    }
    if let Some(b) = p.beta {
        if !(b.is_finite() && b >= p.alpha) {
            return Err(format!("beta: must be a number of segments >= alpha ({}), got {b}", p.alpha));
        }
    }
    if !(p.gamma.is_finite() && p.gamma > 0.0 && p.gamma <= 1.0) {
        return Err(format!("gamma: must be a step size with 0 < gamma <= 1, got {}", p.gamma));
    }
    if p.update_period.0 == 0 {
        return Err("update_period: must be a positive time such as \"10ms\", got 0".into());
    }
    if !(p.alpha_min.is_finite() && p.alpha_min > 0.0 && p.alpha_min <= p.alpha) {
        return Err(format!(
            "alpha_min: must be a number of segments > 0 and <= alpha ({}), got {}",
            p.alpha, p.alpha_min
        ));
    }
    Ok(p)
}

/// Compound TCP: a variant and overrides of its defaults.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CompoundTable {
    #[serde(default)]
    variant: CompoundVariant,
    alpha: Option<f64>,
    beta: Option<f64>,
    k: Option<f64>,
    zeta: Option<f64>,
    gamma: Option<f64>,
    low_wnd: Option<f64>,
}

fn compound_params(t: CompoundTable) -> Result<CompoundParams, String> {
    let d = CompoundParams::defaults(t.variant);
    let p = CompoundParams {
        variant: t.variant,
        alpha: t.alpha.unwrap_or(d.alpha),
        beta: t.beta.unwrap_or(d.beta),
        k: t.k.unwrap_or(d.k),
        zeta: t.zeta.unwrap_or(d.zeta),
        gamma: t.gamma.unwrap_or(d.gamma),
        low_wnd: t.low_wnd.unwrap_or(d.low_wnd),
    };
    if !(p.alpha.is_finite() && p.alpha > 0.0) {
        return Err(format!("alpha: must be the gain of the delay window's increase, > 0, got {}", p.alpha));
    }
    if !(p.beta.is_finite() && p.beta > 0.0 && p.beta < 1.0) {
        return Err(format!(
            "beta: must be the fraction of the window removed on a loss, 0 < beta < 1, got {}",
            p.beta
        ));
    }
    if !(p.k.is_finite() && p.k > 0.0 && p.k < 1.0) {
        return Err(format!("k: must be the exponent of the delay window's increase, 0 < k < 1, got {}", p.k));
    }
    if !(p.zeta.is_finite() && p.zeta >= 0.0) {
        return Err(format!("zeta: must be segments of dwnd removed per segment queued, >= 0, got {}", p.zeta));
    }
    if !(p.gamma.is_finite() && p.gamma > 0.0) {
        return Err(format!("gamma: must be a number of segments > 0, got {}", p.gamma));
    }
    if !(p.low_wnd.is_finite() && p.low_wnd >= 0.0) {
        return Err(format!("low_wnd: must be a number of segments >= 0 (0 = off), got {}", p.low_wnd));
    }
    Ok(p)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoParams {}

fn params<T: for<'de> Deserialize<'de>>(algo: &str, table: Map<String, Value>) -> Result<T, String> {
    let mut track = serde_path_to_error::Track::new();
    let de = serde_path_to_error::Deserializer::new(Value::Object(table), &mut track);
    T::deserialize(de).map_err(|e| {
        let path = track.path().to_string();
        let at = if path.is_empty() || path == "." { String::new() } else { format!("{path}: ") };
        format!("{at}{e} (algo = \"{algo}\")")
    })
}

impl CcConfig {
    fn from_table(mut table: Map<String, Value>) -> Result<CcConfig, String> {
        let algo = match table.remove("algo") {
            Some(Value::String(s)) => s,
            Some(other) => return Err(format!("algo: expected a name such as \"reno\", got {other}")),
            None => return Err(format!("missing field `algo`; algorithms are {}", ALGORITHMS.join(", "))),
        };
        let cfg = match algo.as_str() {
            "reno" => {
                params::<NoParams>(&algo, table)?;
                CcConfig::Reno
            }
            "aimd" => {
                let p: AimdParams = params(&algo, table)?;
                if !(p.a.is_finite() && p.a > 0.0) {
                    return Err(format!("a: must be segments added per RTT, > 0, got {}", p.a));
                }
                if !(p.b.is_finite() && p.b > 0.0 && p.b < 1.0) {
                    return Err(format!(
                        "b: must be the fraction of the window removed on a loss, 0 < b < 1, got {}",
                        p.b
                    ));
                }
                CcConfig::Aimd { a: p.a, b: p.b }
            }
            "scalable" => CcConfig::Scalable { variant: params::<ScalableParams>(&algo, table)?.variant },
            "multcp" => {
                let p: MulTcpParams = params(&algo, table)?;
                if !(p.n.is_finite() && (1.0..=MULTCP_MAX_N).contains(&p.n)) {
                    return Err(format!("n: must be a number of flows from 1 to {MULTCP_MAX_N}, got {}", p.n));
                }
                CcConfig::Multcp { n: p.n, slow_start: p.slow_start, loss_policy: p.loss_policy }
            }
            "pamultcp" => {
                let p: PaMulTcpRaw = params(&algo, table)?;
                // The adjusting loop's weight must be at least 1 (a = √N', b = 2/(1 + 3N'^1.5)).
                let least = if p.adjust_weight == AdjustWeight::NMinus1 { 2.0 } else { 1.0 };
                if !(p.n.fract() == 0.0 && (least..=AGGREGATE_MAX_N).contains(&p.n)) {
                    let why = if least == 2.0 {
                        " (adjust_weight = \"n_minus_1\" gives the adjusting loop n - 1)"
                    } else {
                        ""
                    };
                    return Err(format!(
                        "n: must be a whole number of flows from {least} to {AGGREGATE_MAX_N}{why}, got {}",
                        p.n
                    ));
                }
                CcConfig::Pamultcp(PaMulTcpParams {
                    n: p.n as u32,
                    assignment: p.assignment,
                    timeout: p.timeout,
                    adjust_weight: p.adjust_weight,
                })
            }
            "mpat" => {
                let p: MpatRaw = params(&algo, table)?;
                if !(p.n.fract() == 0.0 && (1.0..=AGGREGATE_MAX_N).contains(&p.n)) {
                    return Err(format!("n: must be a whole number of flows from 1 to {AGGREGATE_MAX_N}, got {}", p.n));
                }
                if !(p.new_loop_cwnd.is_finite() && (1.0..=1000.0).contains(&p.new_loop_cwnd)) {
                    return Err(format!(
                        "new_loop_cwnd: must be a number of segments from 1 to 1000, got {}",
                        p.new_loop_cwnd
                    ));
                }
                CcConfig::Mpat(MpatParams { n: p.n as u32, new_loop_cwnd: p.new_loop_cwnd })
            }
            "stochastic" => {
                let p: StochasticParams = params(&algo, table)?;
                let max = MAX_STREAMS as f64;
                if !(p.n.fract() == 0.0 && (1.0..=max).contains(&p.n)) {
                    return Err(format!("n: must be a whole number of virtual streams from 1 to {max}, got {}", p.n));
                }
                if !(p.acks_per_increase.fract() == 0.0 && (1.0..=STOCHASTIC_MAX_ACKS).contains(&p.acks_per_increase)) {
                    return Err(format!(
                        "acks_per_increase: must be a whole number of ACKs from 1 to {STOCHASTIC_MAX_ACKS}, got {}",
                        p.acks_per_increase
                    ));
                }
                CcConfig::Stochastic { n: p.n as u32, acks_per_increase: p.acks_per_increase as u32 }
            }
            "vegas" => {
                let p: VegasParams = params(&algo, table)?;
                let ns2 = p.variant == VegasVariant::Ns2;
                let d = match p.variant {
                    VegasVariant::Ns2 => super::vegas::NS2_PARAMS,
                    VegasVariant::Linux => {
                        let l = super::vegas_linux::LINUX_PARAMS;
                        Ns2VegasParams { alpha: l.alpha, beta: l.beta, gamma: l.gamma }
                    }
                    VegasVariant::Paper => {
                        Ns2VegasParams { alpha: vegas_alpha(), beta: vegas_beta(), gamma: vegas_gamma() }
                    }
                };
                let (alpha, beta, gamma) =
                    (p.alpha.unwrap_or(d.alpha), p.beta.unwrap_or(d.beta), p.gamma.unwrap_or(d.gamma));
                if !(alpha.is_finite() && alpha >= 0.0) {
                    return Err(format!("alpha: must be a number of segments >= 0, got {alpha}"));
                }
                if !(beta.is_finite() && beta >= alpha) {
                    return Err(format!("beta: must be a number of segments >= alpha ({alpha}), got {beta}"));
                }
                check_vegas_common(gamma, p.base_rtt_refresh)?;
                if p.variant != VegasVariant::Paper {
                    let paper_only = [
                        ("slow_start", p.slow_start.is_some()),
                        ("diff", p.diff.is_some()),
                        ("base_rtt_refresh", p.base_rtt_refresh.is_some()),
                        ("refresh_to", p.refresh_to.is_some()),
                    ];
                    if let Some((name, _)) = paper_only.iter().find(|(_, set)| *set) {
                        let (variant, whose) = if ns2 { ("ns2", "ns-2's Vegas") } else { ("linux", "Linux's Vegas") };
                        return Err(format!(
                            "{name}: not an option of variant \"{variant}\" ({whose} has its own slow start and diff); remove it or use variant = \"paper\""
                        ));
                    }
                }
                if p.variant == VegasVariant::Linux {
                    for (name, x) in [("alpha", alpha), ("beta", beta), ("gamma", gamma)] {
                        super::vegas_linux::fixed_point(name, x)?;
                    }
                    CcConfig::VegasLinux(LinuxVegasParams { alpha, beta, gamma })
                } else if ns2 {
                    CcConfig::VegasNs2(Ns2VegasParams { alpha, beta, gamma })
                } else {
                    CcConfig::Vegas {
                        alpha,
                        beta,
                        gamma,
                        slow_start: p.slow_start.unwrap_or_default(),
                        diff: p.diff.unwrap_or_default(),
                        base_rtt_refresh: p.base_rtt_refresh,
                        refresh_to: p.refresh_to.unwrap_or_default(),
                    }
                }
            }
            "vegas_enhanced" => {
                let p: VegasEnhancedParams = params(&algo, table)?;
                if !(p.delta.is_finite() && p.delta > 0.0) {
                    return Err(format!("delta: must be a number of segments > 0, got {}", p.delta));
                }
                check_vegas_common(p.gamma, p.base_rtt_refresh)?;
                CcConfig::VegasEnhanced {
                    delta: p.delta,
                    gamma: p.gamma,
                    slow_start: p.slow_start,
                    diff: p.diff,
                    base_rtt_refresh: p.base_rtt_refresh,
                    refresh_to: p.refresh_to,
                }
            }
            "highspeed" => CcConfig::Highspeed { variant: params::<HighSpeedParams>(&algo, table)?.variant },
            "bic" => CcConfig::Bic(bic_params(params(&algo, table)?)?),
            "cubic" => CcConfig::Cubic(cubic_params(params(&algo, table)?)?),
            "fast" => CcConfig::Fast(fast_params(params(&algo, table)?, FastParams::fast())?),
            "fast_at" => CcConfig::FastAt(fast_params(params(&algo, table)?, FastParams::fast_at())?),
            "htcp" => CcConfig::Htcp(htcp_params(params(&algo, table)?)?),
            "compound" => CcConfig::Compound(compound_params(params(&algo, table)?)?),
            "bbr" => CcConfig::Bbr(bbr_params(params(&algo, table)?)?),
            "dctcp" => CcConfig::Dctcp(dctcp_params(params(&algo, table)?)?),
            other => return Err(super::catalog::unknown_algorithm(other)),
        };
        Ok(cfg)
    }

    /// Build a fresh algorithm instance (random choices, such as BBR's start phase, from
    /// seed 0).
    pub fn build(self) -> Box<dyn CongestionControl> {
        self.build_with::<Boxed>(0)
    }

    /// The algorithm as a group of one ([`Solo`]) for the congestion-control host: one
    /// indirect call per ACK reaches the algorithm's own code.
    pub fn build_solo(self) -> Box<dyn GroupControl> {
        self.build_with::<AsSolo>(0)
    }

    /// [`CcConfig::build_solo`] for connection `key` of a run with `seed`: an algorithm's
    /// random choices draw from the stream `<key>/cc` of the seed.
    pub fn build_solo_for(self, seed: u64, key: &str) -> Box<dyn GroupControl> {
        let draw = match self {
            CcConfig::Bbr(_) | CcConfig::Stochastic { .. } => {
                use rand_core::RngCore;
                crate::engine::stream(seed, &format!("{key}/cc")).next_u64()
            }
            _ => 0,
        };
        self.build_with::<AsSolo>(draw)
    }

    fn build_with<M: Make>(self, seed: u64) -> M::Out {
        match self {
            CcConfig::Bbr(p) => M::make(Bbr::new(p, seed)),
            CcConfig::Dctcp(p) => M::make(Dctcp::new(p)),
            CcConfig::Reno => M::make(Aimd::reno()),
            CcConfig::Aimd { a, b } => M::make(Aimd { a, b }),
            CcConfig::Scalable { variant } => M::make(Scalable::new(variant)),
            CcConfig::Multcp { n, slow_start, loss_policy } => M::make(MulTcp::new(n, slow_start, loss_policy)),
            CcConfig::Stochastic { n, acks_per_increase } => M::make(Stochastic::new(n, acks_per_increase, seed)),
            CcConfig::Pamultcp(_) | CcConfig::Mpat(_) => M::group(self.build_aggregate(0, &[]).expect("an aggregate")),
            CcConfig::Highspeed { variant } => M::make(HighSpeed::new(variant)),
            CcConfig::Bic(p) => M::make(Bic::new(p)),
            CcConfig::Cubic(p) => M::make(Cubic::new(p)),
            CcConfig::Fast(p) | CcConfig::FastAt(p) => M::make(Fast::new(p)),
            CcConfig::Htcp(p) => M::make(Htcp::new(p)),
            CcConfig::Compound(p) => M::make(Compound::new(p)),
            CcConfig::Vegas { alpha, beta, gamma, slow_start, diff, base_rtt_refresh, refresh_to } => {
                M::make(Vegas::new(
                    VegasRule::DeadZone { alpha, beta },
                    gamma,
                    slow_start,
                    diff,
                    base_rtt_refresh.map(|d| d.0),
                    refresh_to,
                ))
            }
            CcConfig::VegasNs2(params) => M::make(Ns2Vegas { params }),
            CcConfig::VegasLinux(params) => M::make(LinuxVegas::new(params)),
            CcConfig::VegasEnhanced { delta, gamma, slow_start, diff, base_rtt_refresh, refresh_to } => {
                M::make(Vegas::new(
                    VegasRule::Enhanced { delta },
                    gamma,
                    slow_start,
                    diff,
                    base_rtt_refresh.map(|d| d.0),
                    refresh_to,
                ))
            }
        }
    }

    /// The controller of an aggregate connection (PA-MulTCP, MPAT) for connection `flow` with
    /// members joining at run time; `None` for any other algorithm.
    pub fn build_aggregate(self, flow: u32, joins: &[Join]) -> Option<Box<dyn GroupControl>> {
        match self {
            CcConfig::Pamultcp(p) => Some(Box::new(PaMulTcp::new(p, flow, joins))),
            CcConfig::Mpat(p) => Some(Box::new(Mpat::new(p, flow, joins))),
            _ => None,
        }
    }

    /// Whether it runs several window loops in one connection (PA-MulTCP, MPAT), which
    /// needs SACK recovery and may have aggregate members.
    pub fn is_aggregate(self) -> bool {
        matches!(self, CcConfig::Pamultcp(_) | CcConfig::Mpat(_))
    }

    /// The most members it may have over a run, if limited (one loop tag each for MPAT).
    pub fn max_members(self) -> Option<usize> {
        matches!(self, CcConfig::Mpat(_)).then_some(MAX_LOOPS)
    }

    /// Whether the Linux 2.6.22 module of this algorithm (as ns-2.35's TCP-Linux runs it)
    /// registers `min_cwnd = tcp_reno_min_cwnd` (ssthresh / 2): reno, highspeed, scalable,
    /// vegas and compound do; bic, cubic and htcp do not. Used by the `rate_halving` SACK
    /// recovery, which starts a recovery from this window.
    pub fn halves_to_min_cwnd(self) -> bool {
        matches!(
            self,
            CcConfig::Reno
                | CcConfig::Highspeed { .. }
                | CcConfig::Scalable { .. }
                | CcConfig::Vegas { .. }
                | CcConfig::VegasLinux(_)
                | CcConfig::Compound(_)
        )
    }

    /// The name used in scenarios and results.
    pub fn as_str(self) -> &'static str {
        match self {
            CcConfig::Reno => "reno",
            CcConfig::Aimd { .. } => "aimd",
            CcConfig::Scalable { .. } => "scalable",
            CcConfig::Multcp { .. } => "multcp",
            CcConfig::Pamultcp(_) => "pamultcp",
            CcConfig::Mpat(_) => "mpat",
            CcConfig::Stochastic { .. } => "stochastic",
            CcConfig::Highspeed { .. } => "highspeed",
            CcConfig::Bic(_) => "bic",
            CcConfig::Cubic(_) => "cubic",
            CcConfig::Bbr(_) => "bbr",
            CcConfig::Dctcp(_) => "dctcp",
            CcConfig::Fast(_) => "fast",
            CcConfig::FastAt(_) => "fast_at",
            CcConfig::Htcp(_) => "htcp",
            CcConfig::Compound(_) => "compound",
            CcConfig::Vegas { .. } | CcConfig::VegasNs2(_) | CcConfig::VegasLinux(_) => "vegas",
            CcConfig::VegasEnhanced { .. } => "vegas_enhanced",
        }
    }
}

impl<'de> Deserialize<'de> for CcConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(name) => {
                let mut table = Map::new();
                table.insert("algo".into(), Value::String(name));
                CcConfig::from_table(table).map_err(de::Error::custom)
            }
            Value::Object(table) => CcConfig::from_table(table).map_err(de::Error::custom),
            other => Err(de::Error::custom(format!(
                "expected an algorithm name such as \"reno\" or a table such as {{ algo = \"multcp\", n = 4 }}, got {other}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each (json, expected) case fails with a one-line error containing `expected`; an empty
    /// `expected` means the configuration is accepted.
    fn assert_errors(cases: &[(&str, &str)]) {
        for &(json, expected) in cases {
            match parse(json) {
                Err(e) => {
                    assert!(!expected.is_empty() && e.contains(expected), "{json}: {e}");
                    assert!(!e.contains('\n'), "{json}: one line: {e}");
                }
                Ok(cfg) => assert!(expected.is_empty(), "{json} accepted as {cfg:?}"),
            }
        }
    }

    fn parse(json: &str) -> Result<CcConfig, String> {
        serde_json::from_str::<CcConfig>(json).map_err(|e| e.to_string())
    }

    #[test]
    fn names_and_tables_select_algorithms_with_defaults() {
        assert_eq!(parse("\"reno\"").unwrap(), CcConfig::Reno);
        assert_eq!(parse("{\"algo\": \"scalable\"}").unwrap(), CcConfig::Scalable { variant: ScalableVariant::Paper });
        assert_eq!(
            parse("{\"algo\": \"multcp\", \"n\": 4}").unwrap(),
            CcConfig::Multcp { n: 4.0, slow_start: MulTcpSlowStart::Standard, loss_policy: LossPolicy::Multcp }
        );
    }

    #[test]
    fn normalized_form_round_trips() {
        for cfg in [
            CcConfig::Reno,
            CcConfig::Scalable { variant: ScalableVariant::Linux },
            CcConfig::Multcp { n: 2.5, slow_start: MulTcpSlowStart::Triple, loss_policy: LossPolicy::Ns2 },
        ] {
            let json = serde_json::to_string(&cfg).unwrap();
            assert_eq!(parse(&json).unwrap(), cfg, "{json}");
        }
    }

    #[test]
    fn stochastic_defaults_round_trip_and_checks() {
        assert_eq!(parse("\"stochastic\"").unwrap(), CcConfig::Stochastic { n: 1, acks_per_increase: 1 });
        let cfg = parse("{\"algo\": \"stochastic\", \"n\": 4, \"acks_per_increase\": 2}").unwrap();
        assert_eq!(cfg, CcConfig::Stochastic { n: 4, acks_per_increase: 2 });
        let json = serde_json::to_string(&cfg).unwrap();
        assert_eq!(json, r#"{"algo":"stochastic","n":4,"acks_per_increase":2}"#);
        assert_eq!(parse(&json).unwrap(), cfg);
        assert_eq!(cfg.build().name(), "stochastic");
        let cases = [
            (
                "{\"algo\": \"stochastic\", \"n\": 0}",
                "n: must be a whole number of virtual streams from 1 to 64, got 0",
            ),
            (
                "{\"algo\": \"stochastic\", \"n\": 2.5}",
                "n: must be a whole number of virtual streams from 1 to 64, got 2.5",
            ),
            ("{\"algo\": \"stochastic\", \"n\": 65}", "n: must be a whole number"),
            ("{\"algo\": \"stochastic\", \"n\": 64}", ""),
            (
                "{\"algo\": \"stochastic\", \"acks_per_increase\": 0}",
                "acks_per_increase: must be a whole number of ACKs from 1 to 1000000, got 0",
            ),
            ("{\"algo\": \"stochastic\", \"acks_per_increase\": 1.5}", "acks_per_increase: must be a whole number"),
            ("{\"algo\": \"stochastic\", \"n\": \"4\"}", "n: invalid type"),
            ("{\"algo\": \"stochastic\", \"m\": 2}", "unknown field `m`"),
        ];
        assert_errors(&cases);
    }

    #[test]
    fn bad_names_and_parameters_are_precise() {
        let e = parse("\"cubicc\"").unwrap_err();
        assert!(e.starts_with("unknown algorithm \"cubicc\"; did you mean \"cubic\"?"), "{e}");
        let e = parse("\"newreno\"").unwrap_err();
        assert!(
            e.starts_with("unknown algorithm \"newreno\"; NewReno is recovery = \"newreno\" with cc = \"reno\""),
            "{e}"
        );
        assert_eq!(parse("{\"algo\": \"aimd\", \"a\": 2, \"b\": 0.125}").unwrap(), CcConfig::Aimd { a: 2.0, b: 0.125 });
        let e = parse("{\"algo\": \"aimd\", \"a\": 1, \"b\": 1}").unwrap_err();
        assert!(e.starts_with("b: must be the fraction of the window removed on a loss, 0 < b < 1, got 1"), "{e}");
        let e = parse("{\"algo\": \"aimd\", \"a\": 0, \"b\": 0.5}").unwrap_err();
        assert!(e.starts_with("a: must be segments added per RTT, > 0, got 0"), "{e}");
        assert_eq!(parse("{\"algo\": \"aimd\"}").unwrap(), CcConfig::Aimd { a: 1.0, b: 0.5 });
        let e = parse("{\"algo\": \"multcp\", \"n\": 0.5}").unwrap_err();
        assert!(e.starts_with("n: must be a number of flows from 1 to 10000, got 0.5"), "{e}");
        let e = parse("{\"algo\": \"multcp\", \"m\": 2}").unwrap_err();
        assert!(e.contains("unknown field `m`") && e.contains("algo = \"multcp\""), "{e}");
        let e = parse("{\"algo\": \"scalable\", \"variant\": \"bsd\"}").unwrap_err();
        assert!(e.starts_with("variant: unknown variant `bsd`, expected `paper` or `linux`"), "{e}");
        let e = parse("{\"n\": 2}").unwrap_err();
        assert!(e.starts_with("missing field `algo`"), "{e}");
        assert!(parse("{\"algo\": \"reno\", \"a\": 2}").is_err());
        assert!(parse("3").unwrap_err().starts_with("expected an algorithm name"));
    }

    #[test]
    fn vegas_defaults_options_and_round_trip() {
        let thesis = CcConfig::Vegas {
            alpha: 2.0,
            beta: 4.0,
            gamma: 1.0,
            slow_start: VegasSlowStart::Thesis,
            diff: VegasDiff::Paper,
            base_rtt_refresh: None,
            refresh_to: RefreshTo::IntervalMin,
        };
        assert_eq!(parse("\"vegas\"").unwrap(), thesis);
        let asym = parse(
            "{\"algo\": \"vegas\", \"alpha\": 1, \"beta\": 3, \"slow_start\": \"brakmo\", \"diff\": \"linux\", \"base_rtt_refresh\": \"100ms\", \"refresh_to\": \"last_sample\"}",
        )
        .unwrap();
        assert_eq!(
            asym,
            CcConfig::Vegas {
                alpha: 1.0,
                beta: 3.0,
                gamma: 1.0,
                slow_start: VegasSlowStart::Brakmo,
                diff: VegasDiff::Linux,
                base_rtt_refresh: Some(Dur::from_millis(100)),
                refresh_to: RefreshTo::LastSample,
            }
        );
        let enhanced = parse("\"vegas_enhanced\"").unwrap();
        assert_eq!(
            enhanced,
            CcConfig::VegasEnhanced {
                delta: 3.0,
                gamma: 1.0,
                slow_start: VegasSlowStart::Thesis,
                diff: VegasDiff::Paper,
                base_rtt_refresh: None,
                refresh_to: RefreshTo::IntervalMin,
            }
        );
        for cfg in [thesis, asym, enhanced] {
            let json = serde_json::to_string(&cfg).unwrap();
            assert_eq!(parse(&json).unwrap(), cfg, "{json}");
            assert_eq!(cfg.build().name(), cfg.as_str());
        }
    }

    #[test]
    fn vegas_parameters_are_validated() {
        let cases = [
            ("{\"algo\": \"vegas\", \"alpha\": -1}", "alpha: must be a number of segments >= 0, got -1"),
            (
                "{\"algo\": \"vegas\", \"alpha\": 3, \"beta\": 2}",
                "beta: must be a number of segments >= alpha (3), got 2",
            ),
            ("{\"algo\": \"vegas\", \"beta\": 1}", "beta: must be a number of segments >= alpha (2), got 1"),
            ("{\"algo\": \"vegas\", \"gamma\": -0.5}", "gamma: must be a number of segments >= 0, got -0.5"),
            ("{\"algo\": \"vegas\", \"base_rtt_refresh\": \"0ms\"}", "base_rtt_refresh: must be a positive time"),
            ("{\"algo\": \"vegas\", \"base_rtt_refresh\": \"fast\"}", "base_rtt_refresh: "),
            (
                "{\"algo\": \"vegas\", \"slow_start\": \"fast\"}",
                "slow_start: unknown variant `fast`, expected one of `thesis`, `brakmo`, `linux`",
            ),
            ("{\"algo\": \"vegas\", \"diff\": \"ns2\"}", "diff: unknown variant `ns2`, expected `paper` or `linux`"),
            ("{\"algo\": \"vegas\", \"refresh_to\": \"max\"}", "refresh_to: unknown variant `max`"),
            ("{\"algo\": \"vegas\", \"delta\": 3}", "unknown field `delta`"),
            ("{\"algo\": \"vegas_enhanced\", \"delta\": 0}", "delta: must be a number of segments > 0, got 0"),
            ("{\"algo\": \"vegas_enhanced\", \"alpha\": 2}", "unknown field `alpha`"),
            ("{\"algo\": \"vegas_enhanced\", \"gamma\": -1}", "gamma: must be a number of segments >= 0, got -1"),
        ];
        assert_errors(&cases);
    }

    #[test]
    fn fast_defaults_overrides_and_round_trip() {
        let fast = parse("\"fast\"").unwrap();
        assert_eq!(fast, CcConfig::Fast(FastParams::fast()));
        let at = parse("\"fast_at\"").unwrap();
        assert_eq!(at, CcConfig::FastAt(FastParams { alpha_tuning: AlphaTuning::Rate, ..FastParams::fast() }));
        let tuned = parse(
            "{\"algo\": \"fast\", \"alpha\": 20, \"beta\": 40, \"update_period\": \"20ms\", \
             \"slow_start\": \"standard\", \"avg_weight\": \"ton\", \"every_other_rtt\": false}",
        )
        .unwrap();
        assert_eq!(
            tuned,
            CcConfig::Fast(FastParams {
                alpha: 20.0,
                beta: Some(40.0),
                update_period: Dur::from_millis(20),
                slow_start: FastSlowStart::Standard,
                avg_weight: AvgWeight::Ton,
                every_other_rtt: false,
                ..FastParams::fast()
            })
        );
        let loss = parse("{\"algo\": \"fast_at\", \"alpha_tuning\": \"loss\", \"alpha_min\": 4}").unwrap();
        for cfg in [fast, at, tuned, loss] {
            let json = serde_json::to_string(&cfg).unwrap();
            assert_eq!(parse(&json).unwrap(), cfg, "{json}");
            assert_eq!(cfg.build().name(), cfg.as_str());
        }
    }

    #[test]
    fn fast_parameters_are_validated() {
        let cases = [
            ("{\"algo\": \"fast\", \"alpha\": 0}", "alpha: must be a number of segments > 0, got 0"),
            ("{\"algo\": \"fast\", \"beta\": 50}", "beta: must be a number of segments >= alpha (100), got 50"),
            ("{\"algo\": \"fast\", \"gamma\": 1.5}", "gamma: must be a step size with 0 < gamma <= 1, got 1.5"),
            ("{\"algo\": \"fast\", \"update_period\": \"0s\"}", "update_period: must be a positive time"),
            ("{\"algo\": \"fast\", \"alpha_tuning\": \"rate\"}", "alpha_tuning: `fast` keeps alpha fixed"),
            ("{\"algo\": \"fast_at\", \"alpha_tuning\": \"none\"}", "alpha_tuning: must be `rate` or `loss`"),
            ("{\"algo\": \"fast_at\", \"alpha_tuning\": \"delay\"}", "alpha_tuning: unknown variant `delay`"),
            ("{\"algo\": \"fast_at\", \"alpha_min\": 200}", "alpha_min: must be a number of segments > 0 and <= alpha"),
            ("{\"algo\": \"fast\", \"slow_start\": \"brakmo\"}", "slow_start: unknown variant `brakmo`"),
            ("{\"algo\": \"fast\", \"delta\": 3}", "unknown field `delta`"),
        ];
        assert_errors(&cases);
    }

    #[test]
    fn highspeed_bic_cubic_defaults_overrides_and_round_trip() {
        let hs = parse("\"highspeed\"").unwrap();
        assert_eq!(hs, CcConfig::Highspeed { variant: HighSpeedVariant::Rfc });
        let hs_linux = parse("{\"algo\": \"highspeed\", \"variant\": \"linux\"}").unwrap();
        assert_eq!(hs_linux, CcConfig::Highspeed { variant: HighSpeedVariant::Linux });

        let bic = parse("\"bic\"").unwrap();
        let linux = BicParams {
            variant: BicVariant::Linux,
            beta: 819.0 / 1024.0,
            s_max: 16.0,
            s_min: 0.2,
            low_window: 14.0,
            fast_convergence: true,
        };
        assert_eq!(bic, CcConfig::Bic(linux));
        let paper = parse("{\"algo\": \"bic\", \"variant\": \"paper\"}").unwrap();
        let paper_params = BicParams { variant: BicVariant::Paper, beta: 0.875, s_max: 32.0, s_min: 0.01, ..linux };
        assert_eq!(paper, CcConfig::Bic(paper_params));
        let tuned =
            parse("{\"algo\": \"bic\", \"variant\": \"paper\", \"s_max\": 8, \"fast_convergence\": false}").unwrap();
        assert_eq!(tuned, CcConfig::Bic(BicParams { s_max: 8.0, fast_convergence: false, ..paper_params }));

        let cubic = parse("\"cubic\"").unwrap();
        let rfc = CubicParams {
            variant: CubicVariant::Rfc,
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            tcp_friendliness: true,
            ..CubicParams::default()
        };
        assert_eq!(cubic, CcConfig::Cubic(rfc));
        let ns2 = parse("{\"algo\": \"cubic\", \"variant\": \"ns2\"}").unwrap();
        assert_eq!(ns2, CcConfig::Cubic(CubicParams { variant: CubicVariant::Ns2, beta: 819.0 / 1024.0, ..rfc }));
        let ns3_like = parse("{\"algo\": \"cubic\", \"tcp_friendliness\": false, \"c\": 0.3}").unwrap();
        assert_eq!(ns3_like, CcConfig::Cubic(CubicParams { tcp_friendliness: false, c: 0.3, ..rfc }));

        for cfg in [hs, hs_linux, bic, paper, tuned, cubic, ns2, ns3_like] {
            let json = serde_json::to_string(&cfg).unwrap();
            assert_eq!(parse(&json).unwrap(), cfg, "{json}");
            assert_eq!(cfg.build().name(), cfg.as_str());
        }
    }

    #[test]
    fn highspeed_bic_cubic_parameters_are_validated() {
        let cases = [
            (
                "{\"algo\": \"highspeed\", \"variant\": \"ns3\"}",
                "variant: unknown variant `ns3`, expected `rfc` or `linux`",
            ),
            ("{\"algo\": \"highspeed\", \"low_window\": 20}", "unknown field `low_window`"),
            (
                "{\"algo\": \"bic\", \"variant\": \"ns3\"}",
                "variant: unknown variant `ns3`, expected `linux` or `paper`",
            ),
            ("{\"algo\": \"bic\", \"beta\": 0.125}", ""),
            (
                "{\"algo\": \"bic\", \"beta\": 1}",
                "beta: must be the fraction of the window kept on a loss, 0 < beta < 1, got 1",
            ),
            ("{\"algo\": \"bic\", \"beta\": 0}", "beta: must be the fraction of the window kept on a loss"),
            ("{\"algo\": \"bic\", \"s_max\": 0}", "s_max: must be a number of segments per RTT > 0, got 0"),
            (
                "{\"algo\": \"bic\", \"s_min\": 20}",
                "s_min: must be a number of segments per RTT > 0 and <= s_max (16), got 20",
            ),
            ("{\"algo\": \"bic\", \"s_min\": -1}", "s_min: must be"),
            ("{\"algo\": \"bic\", \"low_window\": -2}", "low_window: must be a number of segments >= 0, got -2"),
            ("{\"algo\": \"bic\", \"fast_convergence\": 1}", "fast_convergence: invalid type"),
            ("{\"algo\": \"bic\", \"b\": 4}", "unknown field `b`"),
            (
                "{\"algo\": \"cubic\", \"variant\": \"linux\"}",
                "variant: unknown variant `linux`, expected `rfc` or `ns2`",
            ),
            ("{\"algo\": \"cubic\", \"c\": 0}", "c: must be a number of segments/s^3 > 0, got 0"),
            (
                "{\"algo\": \"cubic\", \"beta\": 1.5}",
                "beta: must be the fraction of the window kept on a loss, 0 < beta < 1, got 1.5",
            ),
            ("{\"algo\": \"cubic\", \"hystart\": true}", ""),
            ("{\"algo\": \"cubic\", \"hystart\": 1}", "hystart: invalid type"),
            (
                "{\"algo\": \"cubic\", \"hystart_low_window\": 8}",
                "hystart_low_window: HyStart is off; add hystart = true to use it",
            ),
            (
                "{\"algo\": \"cubic\", \"hystart\": true, \"hystart_detect\": \"train\"}",
                "hystart_detect: unknown variant `train`, expected one of `both`, `ack_train`, `delay`",
            ),
            (
                "{\"algo\": \"cubic\", \"hystart\": true, \"hystart_low_window\": -1}",
                "hystart_low_window: must be a number of segments >= 0, got -1",
            ),
            ("{\"algo\": \"cubic\", \"hystart\": true, \"hystart_ack_delta\": \"soon\"}", "hystart_ack_delta: "),
            ("{\"algo\": \"cubic\", \"tcp_friendliness\": \"yes\"}", "tcp_friendliness: invalid type"),
        ];
        assert_errors(&cases);
    }

    #[test]
    fn bbr_dctcp_hystart_defaults_overrides_and_round_trip() {
        let bbr = parse("\"bbr\"").unwrap();
        assert_eq!(bbr, CcConfig::Bbr(BbrParams::default()));
        let tuned = parse(
            "{\"algo\": \"bbr\", \"bw_window\": 8, \"min_rtt_window\": \"5s\", \"probe_rtt_time\": \"100ms\", \"random_start\": false}",
        )
        .unwrap();
        assert_eq!(
            tuned,
            CcConfig::Bbr(BbrParams {
                bw_window: 8,
                min_rtt_window: Dur::from_millis(5000),
                probe_rtt_time: Dur::from_millis(100),
                random_start: false
            })
        );
        let dctcp = parse("\"dctcp\"").unwrap();
        assert_eq!(dctcp, CcConfig::Dctcp(DctcpParams { g: 0.0625, initial_alpha: 1.0 }));
        let dctcp_tuned = parse("{\"algo\": \"dctcp\", \"g\": 0.5, \"initial_alpha\": 0}").unwrap();
        assert_eq!(dctcp_tuned, CcConfig::Dctcp(DctcpParams { g: 0.5, initial_alpha: 0.0 }));
        let hy = parse("{\"algo\": \"cubic\", \"hystart\": true, \"hystart_detect\": \"delay\", \"hystart_low_window\": 8, \"hystart_ack_delta\": \"3ms\"}").unwrap();
        assert_eq!(
            hy,
            CcConfig::Cubic(CubicParams {
                hystart: true,
                hystart_detect: HystartDetect::Delay,
                hystart_low_window: 8.0,
                hystart_ack_delta: Dur::from_millis(3),
                ..CubicParams::default()
            })
        );
        // The default CUBIC's normalized form has no HyStart fields.
        let plain = serde_json::to_string(&parse("\"cubic\"").unwrap()).unwrap();
        assert!(!plain.contains("hystart"), "{plain}");
        for cfg in [bbr, tuned, dctcp, dctcp_tuned, hy] {
            let json = serde_json::to_string(&cfg).unwrap();
            assert_eq!(parse(&json).unwrap(), cfg, "{json}");
            assert_eq!(cfg.build().name(), cfg.as_str());
        }
    }

    #[test]
    fn bbr_and_dctcp_parameters_are_validated() {
        let cases = [
            ("{\"algo\": \"bbr\", \"bw_window\": 0}", "bw_window: must be a number of rounds from 1 to 1000, got 0"),
            ("{\"algo\": \"bbr\", \"bw_window\": -3}", "bw_window: invalid value"),
            ("{\"algo\": \"bbr\", \"min_rtt_window\": \"0s\"}", "min_rtt_window: must be a positive time"),
            ("{\"algo\": \"bbr\", \"probe_rtt_time\": \"0ms\"}", "probe_rtt_time: must be a positive time"),
            ("{\"algo\": \"bbr\", \"random_start\": \"yes\"}", "random_start: invalid type"),
            ("{\"algo\": \"bbr\", \"gain\": 2}", "unknown field `gain`"),
            (
                "{\"algo\": \"dctcp\", \"g\": 0}",
                "g: must be the weight of the newest window in alpha, 0 < g <= 1, got 0",
            ),
            ("{\"algo\": \"dctcp\", \"g\": 1.5}", "g: must be the weight"),
            ("{\"algo\": \"dctcp\", \"g\": 1}", ""),
            (
                "{\"algo\": \"dctcp\", \"initial_alpha\": 2}",
                "initial_alpha: must be a fraction of marked segments, 0 <= initial_alpha <= 1, got 2",
            ),
            ("{\"algo\": \"dctcp\", \"k\": 20}", "unknown field `k`"),
        ];
        assert_errors(&cases);
    }

    #[test]
    fn htcp_defaults_overrides_and_round_trip() {
        let htcp = parse("\"htcp\"").unwrap();
        let linux = HtcpParams {
            variant: HtcpVariant::Linux,
            rtt_scaling: true,
            bandwidth_switch: true,
            delta_l: Dur::from_millis(1000),
        };
        assert_eq!(htcp, CcConfig::Htcp(linux));
        let paper = parse("{\"algo\": \"htcp\", \"variant\": \"paper\"}").unwrap();
        let paper_params = HtcpParams { variant: HtcpVariant::Paper, rtt_scaling: false, ..linux };
        assert_eq!(paper, CcConfig::Htcp(paper_params));
        let tuned = parse(
            "{\"algo\": \"htcp\", \"variant\": \"paper\", \"rtt_scaling\": true, \"bandwidth_switch\": false, \"delta_l\": \"0.5s\"}",
        )
        .unwrap();
        assert_eq!(
            tuned,
            CcConfig::Htcp(HtcpParams {
                rtt_scaling: true,
                bandwidth_switch: false,
                delta_l: Dur::from_millis(500),
                ..paper_params
            })
        );
        let plain = parse("{\"algo\": \"htcp\", \"rtt_scaling\": false, \"delta_l\": \"2s\"}").unwrap();
        let bare = parse("{\"algo\": \"htcp\", \"delta_l\": 2}").unwrap_err();
        assert!(bare.starts_with("delta_l: 2 has no unit; write a time such as \"2ms\""), "{bare}");
        assert_eq!(plain, CcConfig::Htcp(HtcpParams { rtt_scaling: false, delta_l: Dur::from_millis(2000), ..linux }));
        for cfg in [htcp, paper, tuned, plain] {
            let json = serde_json::to_string(&cfg).unwrap();
            assert_eq!(parse(&json).unwrap(), cfg, "{json}");
            assert_eq!(cfg.build().name(), cfg.as_str());
        }
    }

    #[test]
    fn htcp_parameters_are_validated() {
        let cases = [
            (
                "{\"algo\": \"htcp\", \"variant\": \"ns3\"}",
                "variant: unknown variant `ns3`, expected `linux` or `paper`",
            ),
            ("{\"algo\": \"htcp\", \"rtt_scaling\": 1}", "rtt_scaling: invalid type"),
            ("{\"algo\": \"htcp\", \"bandwidth_switch\": \"on\"}", "bandwidth_switch: invalid type"),
            ("{\"algo\": \"htcp\", \"delta_l\": \"soon\"}", "delta_l: "),
            ("{\"algo\": \"htcp\", \"delta_l\": -1}", "delta_l: expected a non-negative time"),
            (
                "{\"algo\": \"htcp\", \"delta_l\": \"1.5ms\"}",
                "delta_l: the linux variant counts whole milliseconds (jiffies), got 1500us",
            ),
            ("{\"algo\": \"htcp\", \"variant\": \"paper\", \"delta_l\": \"1.5ms\"}", ""),
            ("{\"algo\": \"htcp\", \"beta\": 0.5}", "unknown field `beta`"),
        ];
        assert_errors(&cases);
    }

    #[test]
    fn compound_defaults_overrides_and_round_trip() {
        let paper = parse("\"compound\"").unwrap();
        let paper_params = CompoundParams {
            variant: CompoundVariant::Paper,
            alpha: 0.125,
            beta: 0.5,
            k: 0.75,
            zeta: 1.0,
            gamma: 30.0,
            low_wnd: 41.0,
        };
        assert_eq!(paper, CcConfig::Compound(paper_params));
        let ns2 = parse("{\"algo\": \"compound\", \"variant\": \"ns2\"}").unwrap();
        assert_eq!(
            ns2,
            CcConfig::Compound(CompoundParams { variant: CompoundVariant::Ns2, low_wnd: 0.0, ..paper_params })
        );
        let tuned = parse(
            "{\"algo\": \"compound\", \"alpha\": 0.25, \"beta\": 0.3, \"k\": 0.8, \"zeta\": 0.5, \"gamma\": 10, \"low_wnd\": 0}",
        )
        .unwrap();
        assert_eq!(
            tuned,
            CcConfig::Compound(CompoundParams {
                alpha: 0.25,
                beta: 0.3,
                k: 0.8,
                zeta: 0.5,
                gamma: 10.0,
                low_wnd: 0.0,
                ..paper_params
            })
        );
        let ns2_low = parse("{\"algo\": \"compound\", \"variant\": \"ns2\", \"low_wnd\": 41}").unwrap();
        assert_eq!(ns2_low, CcConfig::Compound(CompoundParams { variant: CompoundVariant::Ns2, ..paper_params }));
        for cfg in [paper, ns2, tuned, ns2_low] {
            let json = serde_json::to_string(&cfg).unwrap();
            assert_eq!(parse(&json).unwrap(), cfg, "{json}");
            assert_eq!(cfg.build().name(), cfg.as_str());
        }
        assert!(ALGORITHMS.contains(&"compound"));
    }

    #[test]
    fn compound_parameters_are_validated() {
        let cases = [
            (
                "{\"algo\": \"compound\", \"variant\": \"windows\"}",
                "variant: unknown variant `windows`, expected `paper` or `ns2`",
            ),
            (
                "{\"algo\": \"compound\", \"alpha\": 0}",
                "alpha: must be the gain of the delay window's increase, > 0, got 0",
            ),
            (
                "{\"algo\": \"compound\", \"beta\": 1}",
                "beta: must be the fraction of the window removed on a loss, 0 < beta < 1, got 1",
            ),
            ("{\"algo\": \"compound\", \"beta\": -0.5}", "beta: must be the fraction"),
            (
                "{\"algo\": \"compound\", \"k\": 1}",
                "k: must be the exponent of the delay window's increase, 0 < k < 1, got 1",
            ),
            ("{\"algo\": \"compound\", \"k\": 0}", "k: must be the exponent"),
            (
                "{\"algo\": \"compound\", \"zeta\": -1}",
                "zeta: must be segments of dwnd removed per segment queued, >= 0, got -1",
            ),
            ("{\"algo\": \"compound\", \"zeta\": 0}", ""),
            ("{\"algo\": \"compound\", \"gamma\": 0}", "gamma: must be a number of segments > 0, got 0"),
            (
                "{\"algo\": \"compound\", \"low_wnd\": -1}",
                "low_wnd: must be a number of segments >= 0 (0 = off), got -1",
            ),
            ("{\"algo\": \"compound\", \"gamma\": \"30\"}", "gamma: invalid type"),
            ("{\"algo\": \"compound\", \"delta\": 3}", "unknown field `delta`"),
        ];
        assert_errors(&cases);
    }
}
