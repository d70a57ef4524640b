//! H-TCP (Leith and Shorten, "H-TCP: TCP for high-speed and long-distance networks", PFLDnet
//! 2004; draft-leith-tcp-htcp-06): the additive increase depends on the time Δ since the last
//! congestion event. For Δ_L = 1 s after an event the flow adds about one segment per RTT, as
//! Reno does; then α_raw(Δ) = 1 + 10(Δ − Δ_L) + ((Δ − Δ_L)/2)² segments per RTT, so the longer
//! the flow goes without a loss the faster it probes. α = 2(1 − β)·α_raw keeps the AIMD pair
//! Reno-compatible, and the backoff β = RTT_min/RTT_max adapts to how much of the window the
//! queue held. A large change of throughput between events falls back to β = 0.5 (the bandwidth
//! switch), so flows converge to fair shares after a change of conditions.
//!
//! Two variants:
//!
//! - `linux` (default): `net/ipv4/tcp_htcp.c` (ns-2.35's TCP-Linux module is the 2.6.22 copy):
//!   millisecond jiffies (HZ = 1000) and fixed point <<7. α_raw is the integer 1 + (10d +
//!   (d/2)²/HZ)/HZ with d = Δ − Δ_L in jiffies; RTT scaling multiplies it by min RTT/100 ms with
//!   the ratio 100 ms/min RTT clamped to [0.5, 10] (integer, at least 1). α = 2·α_raw·(128 −
//!   β)/128, updated at each congestion event and after each +1 of cwnd. Growth uses the counter
//!   idiom: packets acked accumulate until counter·α ≥ cwnd, then cwnd += 1. β = 0.5 at the
//!   first event (`modeswitch`) and whenever min RTT ≤ 10 ms; otherwise ⌊128·minRTT/maxRTT⌋
//!   clamped to [64, 102]. max RTT follows RTT samples in the Open state only upwards and only
//!   by jumps of at most 20 ms, and decays to minRTT + 0.95·(maxRTT − minRTT) at each event. The
//!   bandwidth switch compares the largest smoothed throughput of the epoch, maxB, with the
//!   previous epoch's: β = 0.5 (and adaptive backoff waits one more event) unless 5·maxB lies
//!   in [4·old_maxB, 6·old_maxB]. Throughput samples are taken in the Open state once about a
//!   window (cwnd − α) has been acked and at least a min RTT has passed; within three min RTTs
//!   of Δ's start the estimate restarts, later samples are smoothed (3·B + sample)/4.
//!   Δ starts when a congestion event is detected and starts again when the connection returns
//!   to Open (`htcp_state` resets `last_cong` on both transitions), so in congestion avoidance
//!   it runs from the end of recovery.
//! - `paper`: the continuous rules: α_raw(Δ) as a real function with Δ from the detection of
//!   the last event, α = 2(1 − β)·α_raw applied per ACK as cwnd += α/cwnd, β = RTT_min/RTT_max
//!   clamped to [0.5, 0.8] with RTT_max the largest RTT sample of the epoch, and the bandwidth
//!   switch |B(k+1) − B(k)|/B(k) > Δ_B = 0.2 → β = 0.5 with B the largest smoothed throughput of
//!   the epoch (the same estimator as `linux`). RTT scaling, off by default here, multiplies
//!   α_raw by RTT_min/100 ms (the ratio clamped as in Linux, α_raw at least 1).
//!
//! Differences: ssthresh = max(β·FlightSize, 2) (Linux uses cwnd; equal while window-limited).
//! Δ's restart at the return to Open is taken at the first ACK after recovery (this interface
//! has no time in `on_phase`), a fraction of an RTT after Linux. RTTs are the sender's samples;
//! min RTT is the sender's smallest sample. Linux's undo of a spurious reduction is not
//! reproduced. 2.6.22 (ns-2.35) tracks max RTT from SRTT, and only after three min RTTs in
//! congestion avoidance; current Linux, followed here, uses each RTT sample. ns-3.37's
//! `TcpHtcp` is not offered: no β clamp, no RTT scaling and an increment in bytes.

use super::{in_slow_start, slow_start, AckSample, CcState, CongestionControl, LossSignal, Phase};
use crate::units::{Dur, Time, NS_PER_SEC};
use serde::{Deserialize, Serialize};

/// Linux or paper rules.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HtcpVariant {
    /// `tcp_htcp.c` (current Linux; ns-2.35 TCP-Linux holds the 2.6.22 copy).
    #[default]
    Linux,
    /// Leith and Shorten 2004 / draft-leith-tcp-htcp-06, continuous.
    Paper,
}

/// Linux: jiffies per second. One jiffy is 1 ms.
pub const HZ: u64 = 1000;
const NS_PER_JIFFY: u64 = NS_PER_SEC / HZ;
/// Linux `BETA_MIN`: 0.5 in <<7 fixed point.
pub const BETA_MIN_FP: u64 = 64;
/// Linux `BETA_MAX`: 102/128 = 0.797.
pub const BETA_MAX_FP: u64 = 102;
/// Linux `ALPHA_BASE`: 1.0 in <<7 fixed point.
const ALPHA_BASE_FP: u64 = 128;
/// Linux: adaptive backoff only when min RTT exceeds 10 ms.
const ADAPTIVE_MIN_RTT_JIFFIES: u64 = 10;
/// Linux: max RTT grows only by jumps of at most 20 ms.
const MAX_RTT_JUMP_JIFFIES: u64 = 20;
/// Paper: the backoff clamp.
const PAPER_BETA_MIN: f64 = 0.5;
const PAPER_BETA_MAX: f64 = 0.8;
/// Paper: Δ_B, the relative throughput change that triggers the bandwidth switch.
pub const DELTA_B: f64 = 0.2;
/// RTT scaling's reference RTT, seconds.
const RTT_REF: f64 = 0.1;

/// H-TCP parameters (validated by `CcConfig`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct HtcpParams {
    /// Rule set.
    pub variant: HtcpVariant,
    /// Scale α_raw by min RTT/100 ms (Linux `use_rtt_scaling`; default on for `linux`, off for
    /// `paper`).
    pub rtt_scaling: bool,
    /// β = 0.5 after a large change of throughput (Linux `use_bandwidth_switch`; on in both).
    pub bandwidth_switch: bool,
    /// Δ_L: the Reno-like period after a congestion event (1 s).
    pub delta_l: Dur,
}

impl HtcpParams {
    /// The defaults of a variant.
    pub fn defaults(variant: HtcpVariant) -> Self {
        HtcpParams {
            variant,
            rtt_scaling: variant == HtcpVariant::Linux,
            bandwidth_switch: true,
            delta_l: Dur(NS_PER_SEC),
        }
    }
}

impl Default for HtcpParams {
    fn default() -> Self {
        HtcpParams::defaults(HtcpVariant::default())
    }
}

/// The paper's α_raw(Δ), Δ and Δ_L in seconds.
pub fn alpha_raw(delta: f64, delta_l: f64) -> f64 {
    if delta <= delta_l {
        1.0
    } else {
        let d = delta - delta_l;
        1.0 + 10.0 * d + (d / 2.0) * (d / 2.0)
    }
}

/// Linux's integer α_raw (`htcp_alpha_update`'s factor) after `diff` jiffies since the last
/// event, with Δ_L = `delta_l` jiffies, optionally scaled by min RTT (jiffies; 0 = unknown).
pub fn linux_factor(diff: u64, delta_l: u64, min_rtt: u64, rtt_scaling: bool) -> u64 {
    let mut factor = 1;
    if diff > delta_l {
        let d = diff - delta_l;
        factor = 1 + (10 * d + (d / 2) * (d / 2) / HZ) / HZ;
    }
    if rtt_scaling && min_rtt > 0 {
        // 100 ms/min RTT in <<3 fixed point, clamped to [0.5, 10]
        let scale = ((HZ << 3) / (10 * min_rtt)).clamp(1 << 2, 10 << 3);
        factor = ((factor << 3) / scale).max(1);
    }
    factor
}

/// Linux α in <<7 fixed point for an integer factor and β (<<7).
pub fn linux_alpha_fp(factor: u64, beta_fp: u64) -> u64 {
    match 2 * factor * (128 - beta_fp) {
        0 => ALPHA_BASE_FP,
        a => a,
    }
}

/// Elapsed time in whole jiffies.
fn jiffies(t: Time) -> u64 {
    t / NS_PER_JIFFY
}

/// An RTT in jiffies, rounded up (Linux `usecs_to_jiffies`).
fn rtt_jiffies(t: Time) -> u64 {
    t.div_ceil(NS_PER_JIFFY)
}

fn secs(t: Time) -> f64 {
    t as f64 / NS_PER_SEC as f64
}

/// H-TCP state.
#[derive(Clone, Copy, Debug)]
pub struct Htcp {
    p: HtcpParams,
    /// Start of Δ; `None` until the first ACK or event.
    last_cong: Option<Time>,
    /// The connection returned to Open; the next ACK restarts Δ (Linux `htcp_state`).
    open_pending: bool,
    /// Time of the last ACK seen (for the `htcp_delta_s` metric).
    last_now: Time,
    /// α, segments per RTT. Linux: `alpha_fp`/128.
    alpha: f64,
    /// β, the fraction of the window kept at the next event.
    beta: f64,
    /// Linux: α and β in <<7 fixed point.
    alpha_fp: u64,
    beta_fp: u64,
    /// Linux: adaptive backoff allowed (a first event, without a bandwidth switch, has passed).
    modeswitch: bool,
    /// Linux: packets acked towards the next +1 (`snd_cwnd_cnt`).
    counter: u64,
    /// Largest RTT: Linux jiffies tracked by its rules; paper: ns, the epoch's largest sample.
    max_rtt: u64,
    /// Throughput estimator: packets acked since `lasttime`, smoothed estimate, the epoch's
    /// largest and the previous epoch's largest, packets/s.
    packetcount: u64,
    lasttime: Time,
    bi: f64,
    max_b: f64,
    old_max_b: f64,
}

impl Htcp {
    /// A fresh instance.
    pub fn new(p: HtcpParams) -> Self {
        Htcp {
            p,
            last_cong: None,
            open_pending: false,
            last_now: 0,
            alpha: 1.0,
            beta: 0.5,
            alpha_fp: ALPHA_BASE_FP,
            beta_fp: BETA_MIN_FP,
            modeswitch: false,
            counter: 0,
            max_rtt: 0,
            packetcount: 0,
            lasttime: 0,
            bi: 0.0,
            max_b: 0.0,
            old_max_b: 0.0,
        }
    }

    /// α, segments per RTT.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// β, the fraction of the window kept at the next event.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// The largest smoothed throughput of the current epoch, segments/s.
    pub fn max_b(&self) -> f64 {
        self.max_b
    }

    fn linux(&self) -> bool {
        self.p.variant == HtcpVariant::Linux
    }

    /// Δ at `now`, nanoseconds.
    fn delta(&self, now: Time) -> Time {
        now.saturating_sub(self.last_cong.unwrap_or(now))
    }

    /// Linux `htcp_alpha_update` at `now`.
    fn linux_alpha_update(&mut self, st: &CcState, now: Time) {
        let min_rtt = if st.min_rtt == u64::MAX { 0 } else { rtt_jiffies(st.min_rtt) };
        let factor = linux_factor(jiffies(self.delta(now)), jiffies(self.p.delta_l.0), min_rtt, self.p.rtt_scaling);
        self.alpha_fp = linux_alpha_fp(factor, self.beta_fp);
        self.alpha = self.alpha_fp as f64 / 128.0;
    }

    /// The paper's α at `now`.
    fn paper_alpha_update(&mut self, st: &CcState, now: Time) {
        let mut raw = alpha_raw(secs(self.delta(now)), secs(self.p.delta_l.0));
        if self.p.rtt_scaling && st.min_rtt != u64::MAX && st.min_rtt > 0 {
            raw = (raw * (secs(st.min_rtt) / RTT_REF).clamp(0.1, 2.0)).max(1.0);
        }
        self.alpha = 2.0 * (1.0 - self.beta) * raw;
    }

    /// RTT sample bookkeeping (Linux `measure_rtt`; paper: the epoch's largest sample).
    fn measure_rtt(&mut self, st: &CcState, rtt: Time) {
        if st.phase != Phase::Open {
            return;
        }
        if self.linux() {
            let (min, r) = (rtt_jiffies(st.min_rtt.min(rtt)), rtt_jiffies(rtt));
            if self.max_rtt < min {
                self.max_rtt = min;
            }
            if self.max_rtt < r && r <= self.max_rtt + MAX_RTT_JUMP_JIFFIES {
                self.max_rtt = r;
            }
        } else {
            self.max_rtt = self.max_rtt.max(rtt);
        }
    }

    /// Throughput estimate (Linux `measure_achieved_throughput`).
    fn measure_throughput(&mut self, st: &CcState, now: Time, acked: u64) {
        if st.phase != Phase::Open {
            self.packetcount = 0;
            self.lasttime = now;
            return;
        }
        self.packetcount += acked;
        if st.min_rtt == u64::MAX || st.min_rtt == 0 {
            return;
        }
        let linux = self.linux();
        let (elapsed, min_rtt) = if linux {
            (jiffies(now.saturating_sub(self.lasttime)), rtt_jiffies(st.min_rtt))
        } else {
            (now.saturating_sub(self.lasttime), st.min_rtt)
        };
        let a = if linux { (self.alpha_fp >> 7).max(1) as f64 } else { self.alpha.floor().max(1.0) };
        if (self.packetcount as f64) < st.cwnd.floor() - a || elapsed < min_rtt || elapsed == 0 {
            return;
        }
        let cur =
            if linux { (self.packetcount * HZ / elapsed) as f64 } else { self.packetcount as f64 / secs(elapsed) };
        let ccount = if linux { jiffies(self.delta(now)) / min_rtt } else { self.delta(now) / min_rtt };
        if ccount <= 3 {
            // just after a backoff: start again
            self.bi = cur;
            self.max_b = cur;
        } else {
            self.bi = (3.0 * self.bi + cur) / 4.0;
            if linux {
                self.bi = self.bi.floor();
            }
            self.max_b = self.max_b.max(self.bi);
        }
        self.packetcount = 0;
        self.lasttime = now;
    }

    /// Linux `htcp_beta_update` with min and max RTT in jiffies.
    fn linux_beta_update(&mut self, min_rtt: u64) {
        self.beta_fp = 'beta: {
            if self.p.bandwidth_switch {
                let (max_b, old) = (self.max_b, self.old_max_b);
                self.old_max_b = max_b;
                if !(4.0 * old <= 5.0 * max_b && 5.0 * max_b <= 6.0 * old) {
                    self.modeswitch = false;
                    break 'beta BETA_MIN_FP;
                }
            }
            if self.modeswitch && min_rtt > ADAPTIVE_MIN_RTT_JIFFIES && self.max_rtt > 0 {
                ((min_rtt << 7) / self.max_rtt).clamp(BETA_MIN_FP, BETA_MAX_FP)
            } else {
                self.modeswitch = true;
                BETA_MIN_FP
            }
        };
        self.beta = self.beta_fp as f64 / 128.0;
    }

    /// The paper's backoff for the event ending the current epoch.
    fn paper_beta_update(&mut self, min_rtt: Time) {
        let mut beta = if self.max_rtt > 0 && min_rtt > 0 {
            (min_rtt as f64 / self.max_rtt as f64).clamp(PAPER_BETA_MIN, PAPER_BETA_MAX)
        } else {
            PAPER_BETA_MIN
        };
        if self.p.bandwidth_switch {
            let (b, old) = (self.max_b, self.old_max_b);
            if old > 0.0 && ((b - old) / old).abs() > DELTA_B {
                beta = PAPER_BETA_MIN;
            }
            self.old_max_b = b;
        }
        self.beta = beta;
        self.max_rtt = 0;
    }
}

impl CongestionControl for Htcp {
    fn name(&self) -> &'static str {
        "htcp"
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &AckSample) {
        let now = ack.now;
        self.last_now = now;
        if self.last_cong.is_none() {
            // Linux `htcp_init`: Δ counts from the start of the connection
            self.last_cong = Some(now);
            self.lasttime = now;
        }
        let open = st.phase == Phase::Open;
        if self.open_pending && open {
            // Linux `htcp_state(TCP_CA_Open)`; the estimator restarted during recovery
            self.open_pending = false;
            if self.linux() {
                self.last_cong = Some(now);
            }
            self.packetcount = 0;
            self.lasttime = now;
        }
        if let Some(rtt) = ack.rtt {
            self.measure_rtt(st, rtt);
        }
        if self.p.bandwidth_switch {
            self.measure_throughput(st, now, ack.newly_acked);
        }
        if in_slow_start(st) {
            slow_start(st);
            return;
        }
        match self.p.variant {
            HtcpVariant::Linux => {
                if (self.counter * self.alpha_fp) >> 7 >= st.cwnd.floor() as u64 {
                    st.cwnd += 1.0;
                    self.counter = 0;
                    self.linux_alpha_update(st, now);
                } else {
                    // Linux credits the packets of an Open-state ACK, otherwise one
                    self.counter += if open { ack.newly_acked } else { 1 };
                }
            }
            HtcpVariant::Paper => {
                self.paper_alpha_update(st, now);
                st.cwnd += self.alpha / st.cwnd;
            }
        }
    }

    fn ssthresh_after(&mut self, st: &CcState, loss: &LossSignal) -> f64 {
        let w = loss.flight_size as f64;
        self.counter = 0;
        self.open_pending = false;
        self.packetcount = 0;
        self.lasttime = loss.now;
        let cut = match self.p.variant {
            HtcpVariant::Linux => {
                // htcp_param_update, then htcp_reset on entering CWR/Recovery/Loss
                let min_rtt = if st.min_rtt == u64::MAX { 0 } else { rtt_jiffies(st.min_rtt) };
                self.linux_beta_update(min_rtt);
                self.linux_alpha_update(st, loss.now);
                if min_rtt > 0 && self.max_rtt > min_rtt {
                    self.max_rtt = min_rtt + (self.max_rtt - min_rtt) * 95 / 100;
                }
                ((loss.flight_size * self.beta_fp) >> 7) as f64
            }
            HtcpVariant::Paper => {
                self.paper_beta_update(if st.min_rtt == u64::MAX { 0 } else { st.min_rtt });
                self.last_cong = Some(loss.now);
                self.paper_alpha_update(st, loss.now);
                w * self.beta
            }
        };
        self.last_cong = Some(loss.now);
        cut.max(2.0)
    }

    fn on_phase(&mut self, _st: &mut CcState, _from: Phase, to: Phase) {
        if to == Phase::Open {
            self.open_pending = true;
        }
    }

    fn metrics(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("htcp_alpha", self.alpha);
        out("htcp_beta", self.beta);
        out("htcp_delta_s", secs(self.delta(self.last_now)));
        out("htcp_max_b", self.max_b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::loss;

    const MS: Time = 1_000_000;
    const S: Time = 1_000 * MS;

    fn ack_at(now: Time, rtt: Option<Time>) -> AckSample {
        AckSample { now, rtt, ..crate::cc::testing::ack() }
    }

    fn loss_at(now: Time, flight: u64) -> LossSignal {
        LossSignal { now, ..loss(flight) }
    }

    /// Congestion-avoidance state with the given min RTT.
    fn ca_state(cwnd: f64, min_rtt_ms: u64) -> CcState {
        let mut st = CcState::new(cwnd, cwnd, 1460);
        st.min_rtt = min_rtt_ms * MS;
        st.rtt.srtt = (min_rtt_ms * MS) as f64;
        st
    }

    /// The increase function of Leith and Shorten (2004): α_raw at Δ = 0.5, 2, 3, 6, 11 s, and
    /// α = 2(1 − β)α_raw.
    #[test]
    fn alpha_raw_table() {
        let rows = [(0.5, 1.0, 1.0, 0.4), (2.0, 11.25, 11.25, 4.5), (3.0, 22.0, 22.0, 8.8), (6.0, 57.25, 0.0, 0.0)];
        for (delta, raw, a05, a08) in rows {
            let r = alpha_raw(delta, 1.0);
            assert!((r - raw).abs() < 1e-12, "Δ {delta}: α_raw {r}");
            if a05 > 0.0 {
                assert!((2.0 * (1.0 - 0.5) * r - a05).abs() < 1e-12, "Δ {delta}, β 0.5");
                assert!((2.0 * (1.0 - 0.8) * r - a08).abs() < 1e-9, "Δ {delta}, β 0.8");
            }
        }
        assert_eq!(alpha_raw(11.0, 1.0), 126.0);
        assert_eq!(alpha_raw(1.0, 1.0), 1.0, "Δ = Δ_L is still Reno-like");
        // Linux's integer α_raw (no scaling): the same values, truncated
        for (delta_ms, factor) in [(500, 1), (2000, 11), (3000, 22), (6000, 57), (11_000, 126)] {
            assert_eq!(linux_factor(delta_ms, HZ, 100, false), factor, "Δ {delta_ms} ms");
        }
    }

    /// Linux integer, Δ = 3 s, β = 0.5: factor 22 at min RTT 100 ms, 11 at 50, 44 at 200, 2 at 10.
    #[test]
    fn linux_rtt_scaling_factors() {
        for (min_rtt, factor) in [(100, 22), (50, 11), (200, 44), (10, 2), (1000, 44), (1, 2)] {
            assert_eq!(linux_factor(3000, HZ, min_rtt, true), factor, "min RTT {min_rtt} ms");
        }
        // within Δ_L the factor stays 1 even where scaling would make it 0
        assert_eq!(linux_factor(500, HZ, 10, true), 1);
        assert_eq!(linux_alpha_fp(22, BETA_MIN_FP), 22 * 128, "β = 0.5: α = α_raw");
        assert_eq!(linux_alpha_fp(1, BETA_MAX_FP), 52, "β = 0.797: α = 0.406");
    }

    /// min RTT 100 ms, max RTT 150 ms → β = 0.667 and α(3 s) = 14.67 (paper); Linux truncates
    /// β to 85/128 = 0.664, so α(3 s) = 2·22·43/128 = 14.78.
    #[test]
    fn adaptive_backoff_and_alpha_after_it() {
        let p = HtcpParams { bandwidth_switch: false, ..HtcpParams::defaults(HtcpVariant::Paper) };
        let mut h = Htcp::new(p);
        let st = ca_state(100.0, 100);
        h.on_ack(&mut st.clone(), &ack_at(0, Some(150 * MS)));
        let cut = h.ssthresh_after(&st, &loss_at(10 * S, 90));
        assert!((h.beta() - 2.0 / 3.0).abs() < 1e-12, "β {}", h.beta());
        assert!((cut - 60.0).abs() < 1e-9, "90·2/3: {cut}");
        let mut s = ca_state(60.0, 100);
        h.on_ack(&mut s, &ack_at(13 * S, None));
        assert!((h.alpha() - 44.0 / 3.0).abs() < 1e-9, "α(3 s) = 14.67: {}", h.alpha());
        assert!((s.cwnd - 60.0 - h.alpha() / 60.0).abs() < 1e-12, "cwnd += α/cwnd");

        // Linux: the first event backs off by half (modeswitch), later ones adapt
        let p = HtcpParams { bandwidth_switch: false, ..HtcpParams::default() };
        let mut h = Htcp::new(p);
        let mut st = ca_state(100.0, 100);
        h.on_ack(&mut st, &ack_at(0, Some(100 * MS)));
        for step in 1..=5 {
            h.on_ack(&mut st, &ack_at(step * MS, Some((100 + 10 * step) * MS)));
        }
        assert_eq!(h.max_rtt, 150, "grown in ≤ 20 ms jumps");
        h.on_ack(&mut st, &ack_at(6 * MS, Some(300 * MS)));
        assert_eq!(h.max_rtt, 150, "a jump of more than 20 ms is ignored");
        assert_eq!(h.ssthresh_after(&st, &loss_at(S, 100)), 50.0, "first event: β = 0.5");
        assert_eq!(h.max_rtt, 147, "decay: 100 + 0.95·50");
        h.max_rtt = 150;
        assert_eq!(h.ssthresh_after(&st, &loss_at(4 * S, 100)), 66.0, "⌊100·85/128⌋");
        assert_eq!(h.beta_fp, 85);
        h.linux_alpha_update(&st, 7 * S);
        assert_eq!(h.alpha_fp, 2 * 22 * 43);
        assert!((h.alpha() - 14.78125).abs() < 1e-12);
    }

    #[test]
    fn linux_beta_clamps_and_needs_more_than_ten_ms() {
        for (min_rtt, max_rtt, beta_fp) in [(100, 400, 64), (100, 101, 102), (10, 20, 64), (11, 20, 70)] {
            let mut h = Htcp::new(HtcpParams { bandwidth_switch: false, ..HtcpParams::default() });
            h.modeswitch = true;
            h.max_rtt = max_rtt;
            h.linux_beta_update(min_rtt);
            assert_eq!(h.beta_fp, beta_fp, "min {min_rtt} ms, max {max_rtt} ms");
        }
        // paper: clamped to [0.5, 0.8]
        for (max_rtt, beta) in [(400, 0.5), (101, 0.8), (125, 0.8), (150, 2.0 / 3.0)] {
            let mut h = Htcp::new(HtcpParams { bandwidth_switch: false, ..HtcpParams::defaults(HtcpVariant::Paper) });
            h.max_rtt = max_rtt * MS;
            h.paper_beta_update(100 * MS);
            assert!((h.beta() - beta).abs() < 1e-12, "max {max_rtt} ms: {}", h.beta());
        }
    }

    /// Bandwidth switch: β = 0.5 unless the epoch's throughput is within 20 % of the last one.
    #[test]
    fn bandwidth_switch() {
        // Linux: 5·maxB in [4·old, 6·old]
        for (old, new, switched) in [(1000.0, 1000.0, false), (1000.0, 800.0, false), (1000.0, 1200.0, false)]
            .into_iter()
            .chain([(1000.0, 799.0, true), (1000.0, 1201.0, true), (0.0, 500.0, true)])
        {
            let mut h = Htcp::new(HtcpParams::default());
            h.modeswitch = true;
            h.max_rtt = 150;
            h.old_max_b = old;
            h.max_b = new;
            h.linux_beta_update(100);
            assert_eq!(h.beta_fp, if switched { 64 } else { 85 }, "{old} → {new}");
            assert_eq!(h.modeswitch, !switched, "a switch delays adaptive backoff one more event");
            assert_eq!(h.old_max_b, new);
        }
        // paper: |B(k+1) − B(k)|/B(k) > 0.2; no previous B, no switch
        for (old, new, switched) in
            [(1000.0, 1200.0, false), (1000.0, 1201.0, true), (1000.0, 790.0, true), (0.0, 5.0, false)]
        {
            let mut h = Htcp::new(HtcpParams::defaults(HtcpVariant::Paper));
            h.max_rtt = 150 * MS;
            h.old_max_b = old;
            h.max_b = new;
            h.paper_beta_update(100 * MS);
            let beta = if switched { 0.5 } else { 2.0 / 3.0 };
            assert!((h.beta() - beta).abs() < 1e-12, "{old} → {new}: {}", h.beta());
        }
    }

    /// The throughput estimate: one sample once about a window has been acked and a min RTT has
    /// passed; restarted within three min RTTs of Δ's start, smoothed (3·B + sample)/4 later.
    #[test]
    fn throughput_estimate() {
        let mut h = Htcp::new(HtcpParams::default());
        let mut st = ca_state(100.0, 100);
        // one ACK per ms from t = 0 (Δ's start): at 100 ms, 101 packets in 100 jiffies
        for i in 0..=100 {
            h.on_ack(&mut st, &ack_at(i * MS, None));
        }
        assert_eq!((h.max_b(), h.packetcount, h.lasttime), (1010.0, 0, 100 * MS));
        // ten seconds on, two ACKs per ms: 200 packets in 100 ms, smoothed ⌊(3·1010 + 2000)/4⌋
        h.lasttime = 10 * S;
        for i in 1..=199 {
            h.on_ack(&mut st, &ack_at(10 * S + i * MS / 2, None));
        }
        assert_eq!((h.max_b(), h.packetcount), (1010.0, 199), "a window acked, but not yet a min RTT");
        h.on_ack(&mut st, &ack_at(10 * S + 100 * MS, None));
        assert_eq!((h.bi, h.max_b(), h.packetcount), (1257.0, 1257.0, 0));
        // a slower sample lowers the smoothed estimate but not the epoch's largest
        h.lasttime = 20 * S;
        for i in 1..=st.cwnd as u64 {
            h.on_ack(&mut st, &ack_at(20 * S + i * S / 1000, None));
        }
        assert!(h.bi < 1257.0 && h.max_b() == 1257.0, "{} {}", h.bi, h.max_b());
    }

    /// Linux counter: with α = 1 (Δ < Δ_L, β = 0.5) +1 per cwnd + 1 ACKs; at Δ = 3 s with
    /// min RTT 100 ms, α = 22: +1 per ⌈cwnd/22⌉ + 1 ACKs.
    #[test]
    fn linux_counter_increments() {
        let mut h = Htcp::new(HtcpParams { bandwidth_switch: false, ..HtcpParams::default() });
        let mut st = ca_state(50.0, 100);
        for i in 0..50 {
            h.on_ack(&mut st, &ack_at(i * MS, None));
        }
        assert_eq!(st.cwnd, 50.0, "50 ACKs count to 50");
        h.on_ack(&mut st, &ack_at(50 * MS, None));
        assert_eq!(st.cwnd, 51.0);
        // at Δ = 3 s the increment recomputes α = 22
        let mut h = Htcp::new(HtcpParams { bandwidth_switch: false, ..HtcpParams::default() });
        let mut st = ca_state(100.0, 100);
        h.on_ack(&mut st, &ack_at(0, None));
        h.counter = 1000;
        h.on_ack(&mut st, &ack_at(3 * S, None));
        assert_eq!((st.cwnd, h.alpha()), (101.0, 22.0));
        for i in 0..5 {
            h.on_ack(&mut st, &ack_at(3 * S + i, None));
        }
        assert_eq!(st.cwnd, 101.0, "5·22 = 110 ≥ 101 only at the next ACK");
        h.on_ack(&mut st, &ack_at(3 * S + 5, None));
        assert_eq!(st.cwnd, 102.0);
    }

    /// Linux restarts Δ when the connection returns to Open; the paper counts from the loss.
    #[test]
    fn delta_restarts_at_the_end_of_recovery_in_linux() {
        for (variant, delta) in [(HtcpVariant::Linux, 1.5), (HtcpVariant::Paper, 2.0)] {
            let mut h = Htcp::new(HtcpParams { bandwidth_switch: false, ..HtcpParams::defaults(variant) });
            let mut st = ca_state(100.0, 100);
            h.on_ack(&mut st, &ack_at(0, None));
            h.ssthresh_after(&st, &loss_at(10 * S, 100));
            st.phase = Phase::Recovery;
            h.on_phase(&mut st, Phase::Open, Phase::Recovery);
            st.phase = Phase::Open;
            h.on_phase(&mut st, Phase::Recovery, Phase::Open);
            h.on_ack(&mut st, &ack_at(10 * S + 500 * MS, None));
            h.on_ack(&mut st, &ack_at(12 * S, None));
            let mut seen = Vec::new();
            h.metrics(&mut |k, v| seen.push((k, v)));
            assert_eq!(seen[2], ("htcp_delta_s", delta), "{variant:?}");
            assert_eq!(
                seen.iter().map(|s| s.0).collect::<Vec<_>>(),
                ["htcp_alpha", "htcp_beta", "htcp_delta_s", "htcp_max_b"]
            );
        }
    }

    #[test]
    fn slow_start_is_shared_and_small_windows_keep_two() {
        let mut h = Htcp::new(HtcpParams::default());
        let mut st = CcState::new(150.0, f64::INFINITY, 1460);
        st.max_ssthresh = Some(100.0);
        h.on_ack(&mut st, &ack_at(0, None));
        assert!((st.cwnd - 150.0 - 1.0 / 3.0).abs() < 1e-12, "limited slow start: +1/3");
        for variant in [HtcpVariant::Linux, HtcpVariant::Paper] {
            let mut h = Htcp::new(HtcpParams::defaults(variant));
            assert_eq!(h.ssthresh_after(&CcState::new(3.0, 3.0, 1460), &loss(3)), 2.0, "{variant:?}");
        }
    }
}
