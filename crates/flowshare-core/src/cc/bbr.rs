//! BBR v1 (N. Cardwell, Y. Cheng, C. S. Gunn, S. H. Yeganeh, V. Jacobson, "BBR:
//! Congestion-Based Congestion Control", ACM Queue 14(5), 2016; Linux `net/ipv4/tcp_bbr.c`,
//! 4.9 to 5.x).
//!
//! BBR models the path by two numbers and paces to them: the bottleneck bandwidth, the
//! windowed maximum of delivery-rate samples over the last 10 rounds (the sender's rate
//! estimation, [`super::RateSample`]), and the round-trip propagation time, the minimum RTT
//! over the last 10 s. The pacing rate is `pacing_gain × bw` (less Linux's 1 % margin) and the
//! window `cwnd_gain × bw × min_rtt` plus a quantisation allowance, through four modes:
//!
//! - STARTUP: both gains 2/ln 2 (the kernel's 739/256 = 2.887) until the bandwidth has not
//!   grown by 25 % for 3 rounds (not counting application-limited samples);
//! - DRAIN: pacing gain 88/256 (the inverse), window gain 2.887, until what is in flight is at
//!   most one BDP;
//! - PROBE_BW: window gain 2, pacing gain cycling through 5/4, 3/4, 1, 1, 1, 1, 1, 1, one
//!   phase per min RTT (the 5/4 phase also until in flight reaches 5/4 BDP, the 3/4 phase ends
//!   early once it is down to a BDP), starting at a random phase other than 3/4 (drawn from the
//!   run's seed);
//! - PROBE_RTT: when the min RTT has not been refreshed for 10 s, the window is capped at 4
//!   segments for 200 ms and one round, then the previous mode resumes with the window saved.
//!
//! In loss recovery, the first round conserves packets (cwnd = in flight + delivered); after
//! it, the window grows by what is delivered towards the target; the window before recovery
//! is restored when it ends (`bbr_set_cwnd_to_recover_or_restore`).
//!
//! Omitted from Linux: the long-term (policer) bandwidth model (`lt_bw`), the ACK-aggregation
//! allowance (`extra_acked`, 4.19+), the earliest-departure-time correction of in-flight
//! (`bbr_packets_in_net_at_edt`, 5.0+), the idle restart, and the per-ACK count of lost
//! segments (`rs->losses`; here 0). The rate and the window are real numbers of segments, not
//! Linux's fixed point; segments leave one at a time (no TSO), but the allowance keeps
//! Linux's `3 × tso_segs_goal` with the goal computed from the pacing rate as Linux does.

use super::{AckSample, Caps, CcState, CongestionControl, LossSignal, Pacing, Phase};
use crate::units::{Dur, Time};
use serde::{Deserialize, Serialize};

/// STARTUP's gains: `BBR_UNIT * 2885 / 1000 + 1` over `BBR_UNIT` (2/ln 2 = 2.8854).
pub const HIGH_GAIN: f64 = 739.0 / 256.0;
/// DRAIN's pacing gain: `BBR_UNIT * 1000 / 2885` over `BBR_UNIT`.
pub const DRAIN_GAIN: f64 = 88.0 / 256.0;
/// PROBE_BW's window gain.
pub const CWND_GAIN: f64 = 2.0;
/// PROBE_BW's pacing-gain cycle.
pub const PACING_GAINS: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// Smallest window, segments (`bbr_cwnd_min_target`).
pub const CWND_MIN_TARGET: f64 = 4.0;
/// Growth of the bandwidth that counts as still growing in STARTUP (`bbr_full_bw_thresh`).
pub const FULL_BW_THRESH: f64 = 1.25;
/// Rounds without such growth that end STARTUP (`bbr_full_bw_cnt`).
pub const FULL_BW_COUNT: u32 = 3;
/// Linux's initial window (`TCP_INIT_CWND`), used before any RTT sample.
const INIT_CWND: f64 = 10.0;
/// Linux paces 1 % below the model (`bbr_pacing_margin_percent`).
const PACING_MARGIN: f64 = 0.99;

/// BBR's parameters (validated by `CcConfig`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BbrParams {
    /// Rounds of the max-bandwidth filter (`bbr_bw_rtts`, 10).
    pub bw_window: u32,
    /// Window of the min-RTT filter (`bbr_min_rtt_win_sec`, 10 s).
    pub min_rtt_window: Dur,
    /// Least time in PROBE_RTT (`bbr_probe_rtt_mode_ms`, 200 ms).
    pub probe_rtt_time: Dur,
    /// PROBE_BW starts at a random phase (Linux); off, at the 5/4 phase.
    pub random_start: bool,
}

impl Default for BbrParams {
    fn default() -> Self {
        BbrParams {
            bw_window: 10,
            min_rtt_window: Dur::from_millis(10_000),
            probe_rtt_time: Dur::from_millis(200),
            random_start: true,
        }
    }
}

/// BBR's modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Exponential search for the bandwidth.
    Startup,
    /// Draining the queue STARTUP built.
    Drain,
    /// Steady state, cycling the pacing gain.
    ProbeBw,
    /// Draining the queue to measure the propagation RTT.
    ProbeRtt,
}

/// Kathleen Nichols' windowed max filter as Linux's `lib/win_minmax.c` keeps it: the best, second
/// best and third best samples of the window, with their times (here rounds).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MaxFilter {
    s: [(u64, f64); 3],
}

impl MaxFilter {
    /// The maximum over the window.
    pub fn get(&self) -> f64 {
        self.s[0].1
    }

    fn reset(&mut self, t: u64, v: f64) -> f64 {
        self.s = [(t, v); 3];
        v
    }

    /// Add sample `v` at time `t` (`minmax_running_max` with window `win`).
    pub fn update(&mut self, win: u64, t: u64, v: f64) -> f64 {
        if v >= self.s[0].1 || t - self.s[2].0 > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].1 {
            self.s[2] = (t, v);
            self.s[1] = (t, v);
        } else if v >= self.s[2].1 {
            self.s[2] = (t, v);
        }
        let dt = t - self.s[0].0;
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = (t, v);
            if t - self.s[0].0 > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = (t, v);
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[2] = (t, v);
            self.s[1] = (t, v);
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = (t, v);
        }
        self.s[0].1
    }
}

/// BBR state.
#[derive(Clone, Copy, Debug)]
pub struct Bbr {
    p: BbrParams,
    /// Current mode.
    pub mode: Mode,
    /// Max filter of delivery rates, segments per second.
    bw: MaxFilter,
    /// Rounds so far (`rtt_cnt`), and the delivered count that ends the current one.
    rtt_cnt: u64,
    next_rtt_delivered: u64,
    round_start: bool,
    /// Min RTT over the window and when it was taken (`u64::MAX` before a sample).
    min_rtt: Time,
    min_rtt_stamp: Time,
    /// Pacing rate, segments per second (0 before the first ACK).
    pacing_rate: f64,
    has_seen_rtt: bool,
    /// Gains in force.
    pacing_gain: f64,
    cwnd_gain: f64,
    /// STARTUP's full-bandwidth detection.
    full_bw: f64,
    full_bw_cnt: u32,
    full_bw_reached: bool,
    /// PROBE_BW's phase and when it started.
    cycle_idx: usize,
    cycle_stamp: Time,
    /// PROBE_RTT's end time (0 until in flight is down to 4) and whether a round has passed.
    probe_rtt_done_stamp: Time,
    probe_rtt_round_done: bool,
    /// The window to return to after recovery or PROBE_RTT.
    prior_cwnd: f64,
    /// The phase at the previous ACK, and packet conservation in the first round of recovery.
    prev_phase: Phase,
    packet_conservation: bool,
    /// When the connection's delivered count last grew, and that count.
    delivered_time: Time,
    delivered_total: u64,
    /// Samples of segments sent before the connection had delivered this many are
    /// application-limited (PROBE_RTT's `tp->app_limited`).
    app_limited_until: u64,
    /// splitmix64 state for the random start phase.
    rng: u64,
}

/// One step of splitmix64.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Bbr {
    /// A fresh instance whose random phases come from `seed`.
    pub fn new(p: BbrParams, seed: u64) -> Self {
        Bbr {
            p,
            mode: Mode::Startup,
            bw: MaxFilter::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            min_rtt: u64::MAX,
            min_rtt_stamp: 0,
            pacing_rate: 0.0,
            has_seen_rtt: false,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw: 0.0,
            full_bw_cnt: 0,
            full_bw_reached: false,
            cycle_idx: 0,
            cycle_stamp: 0,
            probe_rtt_done_stamp: 0,
            probe_rtt_round_done: false,
            prior_cwnd: 0.0,
            prev_phase: Phase::Open,
            packet_conservation: false,
            delivered_time: 0,
            delivered_total: 0,
            app_limited_until: 0,
            rng: seed,
        }
    }

    /// The bandwidth estimate, segments per second.
    pub fn max_bw(&self) -> f64 {
        self.bw.get()
    }

    /// The min-RTT estimate, ns (`u64::MAX` before a sample).
    pub fn min_rtt(&self) -> Time {
        self.min_rtt
    }

    /// The pacing rate, segments per second.
    pub fn pacing_rate(&self) -> f64 {
        self.pacing_rate
    }

    /// The pacing gain in force.
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }

    /// The window gain in force.
    pub fn cwnd_gain(&self) -> f64 {
        self.cwnd_gain
    }

    /// PROBE_BW's phase (index into [`PACING_GAINS`]).
    pub fn cycle_idx(&self) -> usize {
        self.cycle_idx
    }

    /// STARTUP has found the pipe full.
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    /// ⌈bw × min_rtt × gain⌉ (`bbr_bdp`); the initial window before an RTT sample.
    pub fn bdp(&self, bw: f64, gain: f64) -> f64 {
        if self.min_rtt == u64::MAX {
            return INIT_CWND;
        }
        (bw * self.min_rtt as f64 / 1e9 * gain).ceil()
    }

    /// Segments per burst Linux would hand its TSO engine at this pacing rate (about 1 ms of
    /// data, at least 2 above 1.2 Mbit/s, at most 127; `bbr_tso_segs_goal`).
    fn tso_segs_goal(&self, mss: u32) -> f64 {
        let bytes_per_s = self.pacing_rate * f64::from(mss);
        let min_segs = if bytes_per_s < 1_200_000.0 / 8.0 { 1.0 } else { 2.0 };
        let bytes = (bytes_per_s / 1024.0).floor().min(65_536.0 - 1.0 - 320.0);
        (bytes / f64::from(mss)).floor().max(min_segs).min(127.0)
    }

    /// `bbr_quantization_budget`: room for three TSO bursts, rounded up to even, and 2 more in
    /// the 5/4 phase.
    fn quantization_budget(&self, cwnd: f64, mss: u32) -> f64 {
        let mut c = cwnd + 3.0 * self.tso_segs_goal(mss);
        c = 2.0 * (c / 2.0).ceil();
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            c += 2.0;
        }
        c
    }

    /// `bbr_inflight`: the BDP at `gain` with the quantisation budget.
    pub fn inflight(&self, bw: f64, gain: f64, mss: u32) -> f64 {
        self.quantization_budget(self.bdp(bw, gain), mss)
    }

    fn rate_of(&self, bw: f64, gain: f64) -> f64 {
        bw * gain * PACING_MARGIN
    }

    /// Pacing from the initial window over the SRTT (1 ms before a sample) at the high gain.
    fn init_pacing_rate(&mut self, st: &CcState) {
        let rtt = if st.rtt.srtt > 0.0 {
            self.has_seen_rtt = true;
            st.rtt.srtt.max(1.0)
        } else {
            1e6
        };
        self.pacing_rate = self.rate_of(st.cwnd / (rtt / 1e9), HIGH_GAIN);
    }

    fn set_pacing_rate(&mut self, st: &CcState, bw: f64, gain: f64) {
        let rate = self.rate_of(bw, gain);
        if !self.has_seen_rtt && st.rtt.srtt > 0.0 {
            self.init_pacing_rate(st);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    fn save_cwnd(&mut self, cwnd: f64) {
        if self.prev_phase == Phase::Open && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    fn advance_cycle_phase(&mut self) {
        self.cycle_idx = (self.cycle_idx + 1) % PACING_GAINS.len();
        self.cycle_stamp = self.delivered_time;
    }

    /// PROBE_BW from a random phase other than 3/4 (`bbr_reset_probe_bw_mode`): the index
    /// before the advance is 7 − U{0..6}.
    fn reset_probe_bw_mode(&mut self) {
        self.mode = Mode::ProbeBw;
        let r = if self.p.random_start { (splitmix(&mut self.rng) % 7) as usize } else { 0 };
        self.cycle_idx = PACING_GAINS.len() - 1 - r;
        self.advance_cycle_phase();
    }

    fn reset_mode(&mut self) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode();
        } else {
            self.mode = Mode::Startup;
        }
    }

    fn is_next_cycle_phase(&self, prior_in_flight: u64, mss: u32) -> bool {
        let full_length = self.delivered_time.saturating_sub(self.cycle_stamp) > self.min_rtt;
        let inflight = prior_in_flight as f64;
        let bw = self.max_bw();
        if self.pacing_gain == 1.0 {
            full_length
        } else if self.pacing_gain > 1.0 {
            full_length && inflight >= self.inflight(bw, self.pacing_gain, mss)
        } else {
            full_length || inflight <= self.inflight(bw, 1.0, mss)
        }
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (PACING_GAINS[self.cycle_idx], CWND_GAIN),
            Mode::ProbeRtt => (1.0, 1.0),
        };
    }

    /// `bbr_update_model` and `bbr_main` for one ACK with its rate sample.
    fn on_sample(&mut self, st: &mut CcState, ack: &AckSample) {
        let Some(rs) = ack.rate else { return };
        let mss = st.mss;
        if rs.acked > 0 {
            self.delivered_time = ack.now;
        }
        self.delivered_total = rs.total_delivered;
        let app_limited = rs.app_limited || rs.prior_delivered < self.app_limited_until;
        // bbr_update_bw: rounds, and the max filter.
        self.round_start = false;
        if let Some(bw) = rs.rate() {
            if rs.prior_delivered >= self.next_rtt_delivered {
                self.next_rtt_delivered = rs.total_delivered;
                self.rtt_cnt += 1;
                self.round_start = true;
                self.packet_conservation = false;
            }
            if !app_limited || bw >= self.max_bw() {
                self.bw.update(u64::from(self.p.bw_window), self.rtt_cnt, bw);
            }
        }
        // bbr_update_cycle_phase
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(rs.prior_in_flight, mss) {
            self.advance_cycle_phase();
        }
        // bbr_check_full_bw_reached
        if !self.full_bw_reached && self.round_start && !app_limited {
            if self.max_bw() >= self.full_bw * FULL_BW_THRESH {
                self.full_bw = self.max_bw();
                self.full_bw_cnt = 0;
            } else {
                self.full_bw_cnt += 1;
                self.full_bw_reached = self.full_bw_cnt >= FULL_BW_COUNT;
            }
        }
        // bbr_check_drain
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            st.ssthresh = self.inflight(self.max_bw(), 1.0, mss);
        }
        if self.mode == Mode::Drain && rs.in_flight as f64 <= self.inflight(self.max_bw(), 1.0, mss) {
            self.reset_probe_bw_mode();
        }
        // bbr_update_min_rtt
        let expired = ack.now > self.min_rtt_stamp.saturating_add(self.p.min_rtt_window.0);
        if let Some(rtt) = ack.rtt {
            if rtt <= self.min_rtt || expired {
                self.min_rtt = rtt;
                self.min_rtt_stamp = ack.now;
            }
        }
        if expired && self.mode != Mode::ProbeRtt && self.min_rtt != u64::MAX {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(st.cwnd);
            self.probe_rtt_done_stamp = 0;
        }
        if self.mode == Mode::ProbeRtt {
            self.app_limited_until = (rs.total_delivered + rs.in_flight).max(1);
            if self.probe_rtt_done_stamp == 0 && rs.in_flight as f64 <= CWND_MIN_TARGET {
                self.probe_rtt_done_stamp = ack.now + self.p.probe_rtt_time.0;
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = rs.total_delivered;
            } else if self.probe_rtt_done_stamp != 0 {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done && ack.now > self.probe_rtt_done_stamp {
                    self.min_rtt_stamp = ack.now;
                    st.cwnd = st.cwnd.max(self.prior_cwnd);
                    self.reset_mode();
                }
            }
        }
        self.update_gains();
        // bbr_main
        let bw = self.max_bw();
        self.set_pacing_rate(st, bw, self.pacing_gain);
        self.set_cwnd(st, rs.acked, rs.in_flight, bw);
    }

    /// `bbr_set_cwnd` with `bbr_set_cwnd_to_recover_or_restore`.
    fn set_cwnd(&mut self, st: &mut CcState, acked: u64, in_flight: u64, bw: f64) {
        let acked_f = acked as f64;
        if acked > 0 {
            let mut cwnd = st.cwnd;
            let (prev, now) = (self.prev_phase, st.phase);
            if now == Phase::Recovery && prev != Phase::Recovery {
                self.packet_conservation = true;
                self.next_rtt_delivered = self.delivered_total;
                cwnd = in_flight as f64 + acked_f;
            } else if prev != Phase::Open && now == Phase::Open {
                cwnd = cwnd.max(self.prior_cwnd);
                self.packet_conservation = false;
            }
            self.prev_phase = now;
            if self.packet_conservation {
                st.cwnd = cwnd.max(in_flight as f64 + acked_f);
            } else {
                let target = self.inflight(bw, self.cwnd_gain, st.mss);
                if self.full_bw_reached {
                    cwnd = (cwnd + acked_f).min(target);
                } else if cwnd < target || self.delivered_total < INIT_CWND as u64 {
                    cwnd += acked_f;
                }
                st.cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        if self.mode == Mode::ProbeRtt {
            st.cwnd = st.cwnd.min(CWND_MIN_TARGET);
        }
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    fn caps(&self) -> Caps {
        Caps { pacing: true, rate: true, ..Caps::default() }
    }

    fn controls_recovery(&self) -> bool {
        true
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &AckSample) {
        if self.pacing_rate == 0.0 {
            self.init_pacing_rate(st);
        }
        self.on_sample(st, ack);
    }

    /// Linux's `bbr_ssthresh` saves the window and leaves ssthresh alone; the sender here sets
    /// cwnd from what this returns, so it is what is in flight: the packet conservation of
    /// the first round of recovery starts from there.
    fn ssthresh_after(&mut self, st: &CcState, loss: &LossSignal) -> f64 {
        self.save_cwnd(st.cwnd);
        (loss.flight_size as f64).max(CWND_MIN_TARGET)
    }

    fn on_phase(&mut self, _st: &mut CcState, _from: Phase, to: Phase) {
        if to == Phase::Loss {
            // bbr_set_state(TCP_CA_Loss): the timeout ends a round and restarts the search
            // for a full pipe.
            self.prev_phase = Phase::Loss;
            self.full_bw = 0.0;
            self.full_bw_cnt = 0;
            self.round_start = true;
        }
    }

    fn pacing(&self, _st: &CcState) -> Option<Pacing> {
        (self.pacing_rate > 0.0).then(|| Pacing { gap: ((1e9 / self.pacing_rate).round() as Time).max(1), burst: 1 })
    }

    fn metrics(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("bbr_mode", self.mode as u8 as f64);
        out("bbr_bw_pps", self.max_bw());
        out("bbr_min_rtt_s", if self.min_rtt == u64::MAX { f64::NAN } else { self.min_rtt as f64 / 1e9 });
        out("bbr_pacing_gain", self.pacing_gain);
        out("bbr_cwnd_gain", self.cwnd_gain);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::RateSample;

    const MS: Time = 1_000_000;

    /// The windowed max over 10 rounds: a peak stays for 10 rounds, then gives way to the best
    /// of the samples that came after it.
    #[test]
    fn max_filter_keeps_a_peak_for_ten_rounds() {
        let mut f = MaxFilter::default();
        f.update(10, 0, 100.0);
        f.update(10, 1, 50.0);
        for t in 2..=10 {
            assert_eq!(f.update(10, t, 60.0 + t as f64), 100.0, "round {t}");
        }
        // Round 11 is more than 10 rounds after the peak: the best later sample (70 at
        // round 10) takes over.
        assert_eq!(f.update(10, 11, 55.0), 70.0);
        // A new maximum replaces everything at once.
        assert_eq!(f.update(10, 12, 120.0), 120.0);
        assert_eq!(f.update(10, 13, 10.0), 120.0);
        // Nothing left in the window: the sample is the estimate.
        assert_eq!(f.update(10, 40, 10.0), 10.0);
    }

    /// PROBE_BW's gain sequence from each possible start: the random start is never the 3/4
    /// phase, and the phases follow 5/4, 3/4, 1 × 6.
    #[test]
    fn gain_cycle_sequence_and_random_start() {
        let mut starts = std::collections::BTreeSet::new();
        for seed in 0..200 {
            let mut b = Bbr::new(BbrParams::default(), seed);
            b.reset_probe_bw_mode();
            starts.insert(b.cycle_idx());
        }
        assert_eq!(starts.into_iter().collect::<Vec<_>>(), vec![0, 2, 3, 4, 5, 6, 7]);
        let mut b = Bbr::new(BbrParams { random_start: false, ..BbrParams::default() }, 1);
        b.reset_probe_bw_mode();
        let mut gains = Vec::new();
        for _ in 0..9 {
            b.update_gains();
            gains.push(b.pacing_gain());
            b.advance_cycle_phase();
        }
        assert_eq!(gains, vec![1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.25]);
        // The same seed gives the same start.
        let phase = |seed| {
            let mut b = Bbr::new(BbrParams::default(), seed);
            b.reset_probe_bw_mode();
            b.cycle_idx()
        };
        assert_eq!(phase(42), phase(42));
    }

    /// A bulk flow over a 1000-segment/s, 40 ms path, one ACK per segment with exact rate
    /// samples: drives the model as the sender would.
    struct Path {
        bbr: Bbr,
        st: CcState,
        now: Time,
        delivered: u64,
    }

    impl Path {
        fn new() -> Path {
            let mut st = CcState::new(10.0, f64::INFINITY, 1000);
            st.rtt.sample(40 * MS);
            Path { bbr: Bbr::new(BbrParams::default(), 7), st, now: 0, delivered: 0 }
        }

        /// One ACK of `acked` segments delivered at `bw` segments/s, `rtt` after its send,
        /// with `in_flight` segments outstanding.
        fn ack(&mut self, acked: u64, bw: f64, rtt: Time, in_flight: u64) {
            self.now += (acked as f64 / bw * 1e9) as Time;
            let prior = self.delivered;
            self.delivered += acked;
            let interval = rtt.max((acked as f64 / bw * 1e9) as Time);
            let delivered_in = (bw * interval as f64 / 1e9).round() as u64;
            let rate = RateSample {
                delivered: delivered_in,
                interval,
                prior_delivered: prior.saturating_sub(delivered_in - acked),
                total_delivered: self.delivered,
                prior_time: 0,
                app_limited: false,
                acked,
                prior_in_flight: in_flight + acked,
                in_flight,
            };
            let a = AckSample {
                now: self.now,
                newly_acked: acked,
                rtt: Some(rtt),
                round_start: false,
                in_flight_before: in_flight + acked,
                in_recovery: false,
                ece: false,
                rate: Some(rate),
            };
            self.bbr.on_ack(&mut self.st, &a);
        }
    }

    /// STARTUP ends after 3 rounds without 25 % growth of the bandwidth, DRAIN follows; the
    /// window is then cwnd_gain × BDP plus the allowance: at 1000 segments/s and 40 ms the
    /// BDP is 40 segments, so PROBE_BW's target is 2 × 40 + 3 × 2 = 86 (88 in the 5/4 phase).
    #[test]
    fn startup_exits_after_three_flat_rounds_and_cwnd_is_twice_the_bdp() {
        let mut p = Path::new();
        // Rounds of 40 ACKs at a flat 1000 segments/s: the first round sets full_bw, the next
        // three fail to grow it by 25 %.
        let mut rounds_in_startup = 0;
        while p.bbr.mode == Mode::Startup {
            for _ in 0..40 {
                p.ack(1, 1000.0, 40 * MS, 100);
            }
            rounds_in_startup += 1;
            assert!(rounds_in_startup < 10, "STARTUP never ended");
        }
        assert!(p.bbr.full_bw_reached());
        assert!((3..=5).contains(&rounds_in_startup), "{rounds_in_startup} rounds");
        assert_eq!(p.bbr.mode, Mode::Drain);
        assert_eq!(p.bbr.pacing_gain(), DRAIN_GAIN);
        // ssthresh is set to one BDP with the allowance: 40 + 6 = 46.
        assert_eq!(p.st.ssthresh, 46.0);
        // In flight down to a BDP: PROBE_BW.
        p.ack(1, 1000.0, 40 * MS, 40);
        assert_eq!(p.bbr.mode, Mode::ProbeBw);
        assert_eq!(p.bbr.cwnd_gain(), 2.0);
        assert_eq!(p.bbr.bdp(p.bbr.max_bw(), 1.0), 40.0);
        for _ in 0..400 {
            p.ack(1, 1000.0, 40 * MS, 80);
        }
        let extra = if p.bbr.cycle_idx() == 0 { 2.0 } else { 0.0 };
        assert_eq!(p.st.cwnd, 86.0 + extra, "cwnd = 2 × BDP + 3 × tso_segs_goal");
        // Pacing at gain × bw less 1 %.
        let g = p.bbr.pacing_gain();
        assert!((p.bbr.pacing_rate() - 1000.0 * g * 0.99).abs() < 1e-9);
    }

    /// 10 s without a lower RTT sample: PROBE_RTT caps the window at 4 segments until 200 ms
    /// and a round have passed with at most 4 in flight, then PROBE_BW resumes with the window
    /// it had.
    #[test]
    fn min_rtt_expiry_enters_probe_rtt() {
        let mut p = Path::new();
        while p.bbr.mode != Mode::ProbeBw {
            p.ack(1, 1000.0, 40 * MS, 40);
        }
        // RTT samples above the min keep the old one until its 10 s expire.
        let start = p.now;
        while p.now < start + 9_000 * MS {
            p.ack(1, 1000.0, 45 * MS, 80);
            assert_eq!(p.bbr.mode, Mode::ProbeBw);
        }
        assert_eq!(p.bbr.min_rtt(), 40 * MS);
        let before = p.st.cwnd;
        while p.bbr.mode != Mode::ProbeRtt {
            p.ack(1, 1000.0, 45 * MS, 80);
        }
        assert!(p.now - p.bbr.min_rtt_stamp <= 2 * MS, "the expired filter took the new sample");
        assert_eq!(p.bbr.min_rtt(), 45 * MS);
        assert_eq!(p.st.cwnd, 4.0);
        let entered = p.now;
        // In flight falls to 4: the 200 ms start; ACKs keep coming at the 4-segment rate.
        loop {
            p.ack(1, 100.0, 40 * MS, 4);
            if p.bbr.mode != Mode::ProbeRtt {
                break;
            }
            assert!(p.st.cwnd <= 4.0);
        }
        let stayed = p.now - entered;
        assert!(stayed > 200 * MS && stayed < 260 * MS, "PROBE_RTT lasted {stayed} ns");
        assert_eq!(p.bbr.mode, Mode::ProbeBw);
        assert!(p.st.cwnd >= before, "window restored: {} vs {before}", p.st.cwnd);
        assert_eq!(p.bbr.min_rtt(), 40 * MS);
    }
}
