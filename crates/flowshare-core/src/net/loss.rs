//! Loss models of one link direction.
//!
//! A loss model sits **after the queue**, as ns-2's `lossmodel` does: a packet the queue
//! accepts keeps its place in the queue and its transmission time, and the model then decides
//! whether it reaches the far node or vanishes on the wire. That fits the precomputed link of
//! ADR 0003: [`crate::net::LinkDir::enqueue`] accepts the packet and computes its departure as
//! usual, and a lost packet is simply not put in the pipe. A lost packet therefore still loads
//! the queue and the transmitter (it counts in the queue's departures and utilization) and is
//! counted in the queue's `link_losses`, never in its `drops` (which are overflow only).
//!
//! Every model draws from its own random stream (`link/<link name>/<forward|reverse>/loss`),
//! and every random model draws exactly one number per packet, lost or not, in the order the
//! packets leave the queue. So the n-th packet through a direction always meets the n-th
//! number of its stream: models on other links never shift it, and two runs that differ only
//! in a loss probability are coupled (with Bernoulli loss, the packets lost at p = 0.01 are a
//! subset of those lost at p = 0.02).
//!
//! The models (see `docs/links.md` for definitions, stationary rates and the set-ups of the studies
//! they reproduce):
//!
//! | `model` | parameters | process |
//! |---|---|---|
//! | `bernoulli` | `p` | each packet lost independently with probability p |
//! | `gilbert_elliott` | `p_gb`, `p_bg`, `loss_good` = 0, `loss_bad` = 1 | two-state Markov chain per packet |
//! | `burst` | `p`, `length` | outside a burst, each packet starts one with probability p; a burst is `length` lost packets, the starting one included |
//! | `two_state` | `q`, `length` | the good state ends after each delivered packet with probability q; then exactly `length` packets are lost |
//! | `periodic` | `every`, `offset` = 0 | packets number offset, offset + every, … (from 0) are lost |
//! | `schedule` | `steps`, `pattern` | piecewise-constant rate: `random` = Bernoulli, `periodic` = one loss every round(1/rate) packets |

use crate::engine::{uniform, Stream};
use crate::units::{Dur, Time};
use crate::ConfigError;
use serde::{Deserialize, Serialize};

/// Where a link's loss model acts (`loss_position`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossPosition {
    /// On the wire: a lost packet has taken its queue slot and transmission time (ns-2's
    /// `$ns link-lossmodel`).
    #[default]
    AfterQueue,
    /// On arrival at the link, before the queue: a lost packet takes neither (ns-2's
    /// `$ns lossmodel`, the error module at the link's head).
    BeforeQueue,
}

impl LossPosition {
    /// Whether this is the default (left out when a scenario is written back).
    pub fn is_default(&self) -> bool {
        *self == LossPosition::AfterQueue
    }
}

/// A loss model as written in a scenario (`loss = { model = "bernoulli", p = 0.01 }`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossCfg {
    /// Each packet is lost independently with probability `p`.
    Bernoulli {
        /// Loss probability.
        p: f64,
    },
    /// Gilbert–Elliott: a good and a bad state with their own loss probabilities; after each
    /// packet the chain moves good → bad with probability `p_gb` and bad → good with `p_bg`.
    GilbertElliott {
        /// Probability of moving from good to bad after a packet.
        p_gb: f64,
        /// Probability of moving from bad to good after a packet.
        p_bg: f64,
        /// Loss probability in the good state.
        #[serde(default)]
        loss_good: f64,
        /// Loss probability in the bad state.
        #[serde(default = "one")]
        loss_bad: f64,
    },
    /// Fixed-length bursts (Damjanović (2010), S3′): a packet outside a burst starts one with
    /// probability `p`; the burst is that packet and the `length - 1` after it, all lost.
    Burst {
        /// Probability per packet (outside a burst) that a burst starts.
        p: f64,
        /// Packets per burst.
        length: u32,
    },
    /// Two-state model with a fixed bad-state length (Damjanović (2010), S3): after each packet of
    /// the good state (all delivered) the good state ends with probability `q`; the bad state then
    /// loses exactly the next `length` packets.
    TwoState {
        /// Probability per good-state packet that the good state ends.
        q: f64,
        /// Packets lost in each bad state.
        length: u32,
    },
    /// Deterministic: packets number `offset`, `offset + every`, … (counted from 0 on this
    /// link direction) are lost.
    Periodic {
        /// Period in packets.
        every: u64,
        /// Number of the first lost packet, below `every`.
        #[serde(default)]
        offset: u64,
    },
    /// A piecewise-constant loss rate (Damjanović (2010), S4): `steps` are (from time, rate) pairs;
    /// each rate holds until the next step's time; before the first step nothing is lost.
    Schedule {
        /// (from time, rate) pairs with strictly increasing times.
        steps: Vec<(Dur, f64)>,
        /// How the rate is applied.
        pattern: SchedulePattern,
    },
}

fn one() -> f64 {
    1.0
}

/// How a [`LossCfg::Schedule`] applies its current rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SchedulePattern {
    /// Each packet lost independently with the current rate (Bernoulli).
    Random,
    /// One loss every round(1/rate) packets: a packet is lost when round(1/rate) packets,
    /// itself included, have passed since the previous loss (the count carries over a step).
    Periodic,
}

impl LossCfg {
    /// The `model` name.
    pub fn name(&self) -> &'static str {
        match self {
            LossCfg::Bernoulli { .. } => "bernoulli",
            LossCfg::GilbertElliott { .. } => "gilbert_elliott",
            LossCfg::Burst { .. } => "burst",
            LossCfg::TwoState { .. } => "two_state",
            LossCfg::Periodic { .. } => "periodic",
            LossCfg::Schedule { .. } => "schedule",
        }
    }

    /// Check every parameter; `path` is the field path of the `loss` table.
    pub fn validate(&self, path: &str) -> Result<(), ConfigError> {
        let prob = |field: &str, v: f64| {
            if (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(ConfigError::new(format!("{path}.{field}"), format!("must be a probability in [0, 1], got {v}")))
            }
        };
        let at_least_one = |field: &str, v: u64| {
            if v >= 1 {
                Ok(())
            } else {
                Err(ConfigError::new(format!("{path}.{field}"), "must be at least 1 packet"))
            }
        };
        match self {
            LossCfg::Bernoulli { p } => prob("p", *p),
            LossCfg::GilbertElliott { p_gb, p_bg, loss_good, loss_bad } => {
                prob("p_gb", *p_gb)?;
                prob("p_bg", *p_bg)?;
                prob("loss_good", *loss_good)?;
                prob("loss_bad", *loss_bad)
            }
            LossCfg::Burst { p, length } => {
                prob("p", *p)?;
                at_least_one("length", u64::from(*length))
            }
            LossCfg::TwoState { q, length } => {
                prob("q", *q)?;
                at_least_one("length", u64::from(*length))
            }
            LossCfg::Periodic { every, offset } => {
                at_least_one("every", *every)?;
                if offset >= every {
                    return Err(ConfigError::new(
                        format!("{path}.offset"),
                        format!("must be below every = {every}, got {offset}"),
                    ));
                }
                Ok(())
            }
            LossCfg::Schedule { steps, .. } => {
                if steps.is_empty() {
                    return Err(ConfigError::new(
                        format!("{path}.steps"),
                        "needs at least one [time, rate] pair, e.g. [[\"0s\", 0.01]]",
                    ));
                }
                for (i, (t, r)) in steps.iter().enumerate() {
                    prob(&format!("steps[{i}][1]"), *r)?;
                    if i > 0 && *t <= steps[i - 1].0 {
                        return Err(ConfigError::new(
                            format!("{path}.steps[{i}][0]"),
                            format!("times must increase: {t} is not after {}", steps[i - 1].0),
                        ));
                    }
                }
                Ok(())
            }
        }
    }

    /// Long-run fraction of packets lost, for the stationary models (`None` for `schedule`).
    pub fn long_run_rate(&self) -> Option<f64> {
        Some(match *self {
            LossCfg::Bernoulli { p } => p,
            LossCfg::GilbertElliott { p_gb, p_bg, loss_good, loss_bad } => {
                if p_gb + p_bg == 0.0 {
                    // The chain never leaves the good state it starts in.
                    loss_good
                } else {
                    let bad = p_gb / (p_gb + p_bg);
                    (1.0 - bad) * loss_good + bad * loss_bad
                }
            }
            LossCfg::Burst { p, length } => {
                // Renewal cycles: a geometric number (mean (1-p)/p) of delivered packets, then
                // `length` lost ones.
                let l = f64::from(length);
                if p == 0.0 {
                    0.0
                } else {
                    p * l / (p * l + 1.0 - p)
                }
            }
            LossCfg::TwoState { q, length } => {
                // Cycles: a geometric number (mean 1/q, at least 1) of delivered packets, then
                // exactly `length` lost ones.
                let l = f64::from(length);
                q * l / (q * l + 1.0)
            }
            LossCfg::Periodic { every, .. } => 1.0 / every as f64,
            LossCfg::Schedule { .. } => return None,
        })
    }
}

#[derive(Clone, Debug)]
enum Process {
    Bernoulli { p: f64 },
    GilbertElliott { p_gb: f64, p_bg: f64, loss_good: f64, loss_bad: f64, bad: bool },
    Burst { p: f64, length: u32, left: u32 },
    TwoState { q: f64, length: u32, left: u32 },
    Periodic { every: u64, offset: u64 },
    Schedule { steps: Vec<(Time, f64)>, next: usize, rate: f64, period: u64, since: u64, random: bool },
}

/// A running loss model of one link direction.
#[derive(Clone, Debug)]
pub struct LossProcess {
    state: Process,
    rng: Stream,
    /// Packets seen so far.
    seen: u64,
    name: &'static str,
}

impl LossProcess {
    /// The process of a validated `cfg`, drawing from `rng`.
    pub fn new(cfg: &LossCfg, rng: Stream) -> Self {
        let state = match cfg {
            &LossCfg::Bernoulli { p } => Process::Bernoulli { p },
            &LossCfg::GilbertElliott { p_gb, p_bg, loss_good, loss_bad } => {
                Process::GilbertElliott { p_gb, p_bg, loss_good, loss_bad, bad: false }
            }
            &LossCfg::Burst { p, length } => Process::Burst { p, length, left: 0 },
            &LossCfg::TwoState { q, length } => Process::TwoState { q, length, left: 0 },
            &LossCfg::Periodic { every, offset } => Process::Periodic { every, offset },
            LossCfg::Schedule { steps, pattern } => Process::Schedule {
                steps: steps.iter().map(|&(t, r)| (t.0, r)).collect(),
                next: 0,
                rate: 0.0,
                period: 0,
                since: 0,
                random: *pattern == SchedulePattern::Random,
            },
        };
        LossProcess { state, rng, seen: 0, name: cfg.name() }
    }

    /// The `model` name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Packets seen so far.
    pub fn seen(&self) -> u64 {
        self.seen
    }

    /// Whether the next packet, leaving the queue at time `t` (non-decreasing from call to
    /// call), is lost.
    #[inline]
    pub fn lose(&mut self, t: Time) -> bool {
        let n = self.seen;
        self.seen += 1;
        match &mut self.state {
            Process::Bernoulli { p } => uniform(&mut self.rng) < *p,
            Process::GilbertElliott { p_gb, p_bg, loss_good, loss_bad, bad } => {
                // Two draws per packet: the loss in the current state, then the transition.
                let lost = uniform(&mut self.rng) < if *bad { *loss_bad } else { *loss_good };
                let u = uniform(&mut self.rng);
                *bad = if *bad { u >= *p_bg } else { u < *p_gb };
                lost
            }
            Process::Burst { p, length, left } => {
                let u = uniform(&mut self.rng);
                if *left > 0 {
                    *left -= 1;
                    true
                } else if u < *p {
                    *left = *length - 1;
                    true
                } else {
                    false
                }
            }
            Process::TwoState { q, length, left } => {
                let u = uniform(&mut self.rng);
                if *left > 0 {
                    *left -= 1;
                    true
                } else {
                    if u < *q {
                        *left = *length;
                    }
                    false
                }
            }
            Process::Periodic { every, offset } => n % *every == *offset,
            Process::Schedule { steps, next, rate, period, since, random } => {
                while *next < steps.len() && steps[*next].0 <= t {
                    *rate = steps[*next].1;
                    // round(1/rate); a rate of 0 means no loss.
                    *period = if *rate > 0.0 { (1.0 / *rate).round().max(1.0) as u64 } else { 0 };
                    *next += 1;
                }
                if *random {
                    uniform(&mut self.rng) < *rate
                } else {
                    *since += 1;
                    if *period > 0 && *since >= *period {
                        *since = 0;
                        true
                    } else {
                        false
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    const N: usize = 1_000_000;
    /// Two-sided 99.9 % normal quantile.
    const Z: f64 = 3.29;
    /// Two-sided 99.9 % quantile of Student's t with 99 degrees of freedom (100 batch means).
    const T99: f64 = 3.39;

    fn cfg(toml_text: &str) -> LossCfg {
        #[derive(Deserialize)]
        struct W {
            loss: LossCfg,
        }
        let w: W = toml::from_str(toml_text).unwrap_or_else(|e| panic!("{e}"));
        w.loss.validate("loss").unwrap();
        w.loss
    }

    fn draws(c: &LossCfg, name: &str, n: usize) -> Vec<bool> {
        let mut m = LossProcess::new(c, stream(42, name));
        (0..n).map(|_| m.lose(0)).collect()
    }

    /// Mean and 99.9 % half-width of independent samples.
    fn mean_ci(x: &[f64], z: f64) -> (f64, f64) {
        let n = x.len() as f64;
        let mean = x.iter().sum::<f64>() / n;
        let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0);
        (mean, z * (var / n).sqrt())
    }

    /// Loss rate with a batch-means 99.9 % interval (100 batches), valid for correlated losses.
    fn rate_ci(x: &[bool]) -> (f64, f64) {
        let batch = x.len() / 100;
        let means: Vec<f64> =
            x.chunks(batch).map(|c| c.iter().filter(|&&l| l).count() as f64 / c.len() as f64).collect();
        mean_ci(&means, T99)
    }

    /// Lengths of the runs of consecutive losses (a run cut by the end is dropped).
    fn loss_runs(x: &[bool]) -> Vec<f64> {
        let mut runs = Vec::new();
        let mut cur = 0;
        for &l in x {
            if l {
                cur += 1;
            } else if cur > 0 {
                runs.push(f64::from(cur));
                cur = 0;
            }
        }
        runs
    }

    fn check(what: &str, measured: (f64, f64), expected: f64) {
        let (m, h) = measured;
        println!("{what}: measured {m:.6} ± {h:.6} (99.9 %), expected {expected:.6}");
        assert!((m - expected).abs() <= h, "{what}: {m} ± {h} does not contain {expected}");
    }

    #[test]
    fn bernoulli_rate_matches_p() {
        for p in [0.001, 0.01, 0.1] {
            let c = LossCfg::Bernoulli { p };
            let x = draws(&c, "bernoulli", N);
            let rate = x.iter().filter(|&&l| l).count() as f64 / N as f64;
            let half = Z * (p * (1.0 - p) / N as f64).sqrt();
            check(&format!("bernoulli p={p} rate"), (rate, half), p);
            // Loss runs are geometric with mean 1/(1-p).
            check(&format!("bernoulli p={p} mean run"), mean_ci(&loss_runs(&x), Z), 1.0 / (1.0 - p));
        }
        assert!(draws(&LossCfg::Bernoulli { p: 0.0 }, "b", 10_000).iter().all(|&l| !l));
        assert!(draws(&LossCfg::Bernoulli { p: 1.0 }, "b", 10_000).iter().all(|&l| l));
    }

    #[test]
    fn gilbert_elliott_rate_and_bad_state_length() {
        // loss_good = 0, loss_bad = 1: loss runs are the bad sojourns, geometric, mean 1/p_bg.
        let c = cfg("loss = { model = \"gilbert_elliott\", p_gb = 0.001, p_bg = 0.3 }");
        assert_eq!(c, LossCfg::GilbertElliott { p_gb: 0.001, p_bg: 0.3, loss_good: 0.0, loss_bad: 1.0 });
        let x = draws(&c, "ge", N);
        check("gilbert_elliott rate", rate_ci(&x), c.long_run_rate().unwrap());
        check("gilbert_elliott mean bad run", mean_ci(&loss_runs(&x), Z), 1.0 / 0.3);

        // Partial losses in both states.
        let c =
            cfg("loss = { model = \"gilbert_elliott\", p_gb = 0.01, p_bg = 0.1, loss_good = 0.002, loss_bad = 0.5 }");
        let x = draws(&c, "ge2", N);
        let expected = (10.0 / 11.0) * 0.002 + (1.0 / 11.0) * 0.5;
        assert!((c.long_run_rate().unwrap() - expected).abs() < 1e-12);
        check("gilbert_elliott partial rate", rate_ci(&x), expected);
    }

    #[test]
    fn burst_rate_and_run_length() {
        for (p, length) in [(0.001, 1u32), (0.001, 3), (0.001, 8), (0.05, 3), (0.2, 3)] {
            let c = cfg(&format!("loss = {{ model = \"burst\", p = {p}, length = {length} }}"));
            let x = draws(&c, "burst", N);
            let l = f64::from(length);
            check(&format!("burst p={p} L={length} rate"), rate_ci(&x), p * l / (p * l + 1.0 - p));
            assert!((c.long_run_rate().unwrap() - p * l / (p * l + 1.0 - p)).abs() < 1e-15);
            // Bursts may abut: a run is a geometric number (mean 1/(1-p)) of whole bursts.
            // At p = 0.001 about one burst in a thousand abuts, too few for an interval.
            let runs = loss_runs(&x);
            assert!(runs.iter().all(|r| r % l == 0.0), "a run is a whole number of bursts");
            if p >= 0.05 {
                check(&format!("burst p={p} L={length} mean run"), mean_ci(&runs, Z), l / (1.0 - p));
            }
        }
    }

    #[test]
    fn two_state_loses_exactly_length_packets_per_bad_state() {
        let (q, length) = (0.001, 3u32);
        let c = cfg("loss = { model = \"two_state\", q = 0.001, length = 3 }");
        let x = draws(&c, "two_state", N);
        check("two_state rate", rate_ci(&x), 3.0 * q / (3.0 * q + 1.0));
        let runs = loss_runs(&x);
        assert!(runs.iter().all(|&r| r == f64::from(length)), "every bad state loses exactly L packets");
        // Good states: geometric number of delivered packets, mean 1/q (the first good state,
        // before any loss, is included: it has the same law).
        let mut gaps = Vec::new();
        let mut cur = 0.0;
        for &l in &x {
            if !l {
                cur += 1.0;
            } else if cur > 0.0 {
                gaps.push(cur);
                cur = 0.0;
            }
        }
        check("two_state mean good length", mean_ci(&gaps, Z), 1.0 / q);
    }

    #[test]
    fn periodic_is_exact() {
        let c = cfg("loss = { model = \"periodic\", every = 100, offset = 7 }");
        let x = draws(&c, "periodic", 100_000);
        let lost: Vec<usize> = x.iter().enumerate().filter(|(_, &l)| l).map(|(i, _)| i).collect();
        assert_eq!(lost.len(), 1000);
        assert!(lost.iter().enumerate().all(|(k, &i)| i == 7 + 100 * k));
        assert_eq!(c.long_run_rate(), Some(0.01));
        let every_packet = draws(&LossCfg::Periodic { every: 1, offset: 0 }, "p", 100);
        assert!(every_packet.iter().all(|&l| l));
    }

    /// Damjanović (2010), S4: 1 % from 0 s, 10 % from 4 s, 0.5 % from 13 s; one packet per
    /// millisecond.
    fn s4(pattern: &str) -> LossCfg {
        cfg(&format!(
            "loss = {{ model = \"schedule\", steps = [[\"0s\", 0.01], [\"4s\", 0.1], [\"13s\", 0.005]], pattern = \"{pattern}\" }}"
        ))
    }

    #[test]
    fn periodic_schedule_switches_at_the_step_times() {
        let c = s4("periodic");
        let mut m = LossProcess::new(&c, stream(1, "s4"));
        let ms = 1_000_000;
        let lost: Vec<u64> = (0..20_000u64).filter(|&i| m.lose(i * ms)).collect();
        // 1 %: packets 99, 199, … 3999 (the 100th, 200th, …).
        let first: Vec<u64> = lost.iter().copied().filter(|&i| i < 4000).collect();
        assert_eq!(first, (1..=40).map(|k| 100 * k - 1).collect::<Vec<_>>());
        // At 4 s the period becomes 10: the count since the loss at 3999 continues.
        let mid: Vec<u64> = lost.iter().copied().filter(|&i| (4000..13_000).contains(&i)).collect();
        assert_eq!(mid.first(), Some(&4009));
        assert!(mid.windows(2).all(|w| w[1] - w[0] == 10));
        assert_eq!(mid.len(), 900);
        // At 13 s, 0.5 %: every 200 packets after the last 10 % loss (12999).
        let last: Vec<u64> = lost.iter().copied().filter(|&i| i >= 13_000).collect();
        assert_eq!(last.first(), Some(&13_199));
        assert!(last.windows(2).all(|w| w[1] - w[0] == 200));
        assert_eq!(mid.last(), Some(&12_999));
    }

    #[test]
    fn random_schedule_rates_per_step() {
        let c = s4("random");
        let mut m = LossProcess::new(&c, stream(1, "s4"));
        // One packet every 10 µs for 20 s: 2·10⁶ packets.
        let step = 10_000;
        let x: Vec<(u64, bool)> = (0..2_000_000u64).map(|i| (i * step, m.lose(i * step))).collect();
        for (from, to, rate) in [(0u64, 4u64, 0.01), (4, 13, 0.1), (13, 20, 0.005)] {
            let seg: Vec<bool> = x
                .iter()
                .filter(|(t, _)| (from * 1_000_000_000..to * 1_000_000_000).contains(t))
                .map(|&(_, l)| l)
                .collect();
            let n = seg.len() as f64;
            let r = seg.iter().filter(|&&l| l).count() as f64 / n;
            check(&format!("schedule random [{from} s, {to} s)"), (r, Z * (rate * (1.0 - rate) / n).sqrt()), rate);
        }
        // Nothing is lost before the first step.
        let late = LossCfg::Schedule { steps: vec![(Dur(1_000), 1.0)], pattern: SchedulePattern::Random };
        let mut m = LossProcess::new(&late, stream(1, "late"));
        assert!(!m.lose(999));
        assert!(m.lose(1_000));
    }

    #[test]
    fn streams_are_independent_and_coupled_across_p() {
        let a = draws(&LossCfg::Bernoulli { p: 0.5 }, "link/a/forward/loss", N);
        let b = draws(&LossCfg::Bernoulli { p: 0.5 }, "link/b/forward/loss", N);
        let both = a.iter().zip(&b).filter(|(x, y)| **x && **y).count() as f64 / N as f64;
        // Independence: P(both) = 1/4, binomial interval.
        check("P(a and b lost)", (both, Z * (0.25 * 0.75 / N as f64).sqrt()), 0.25);
        // Common random numbers: raising p only adds losses.
        let lo = draws(&LossCfg::Bernoulli { p: 0.01 }, "link/a/forward/loss", N);
        let hi = draws(&LossCfg::Bernoulli { p: 0.02 }, "link/a/forward/loss", N);
        assert!(lo.iter().zip(&hi).all(|(l, h)| !*l || *h));
    }

    #[test]
    fn every_field_is_validated() {
        let err = |text: &str| {
            #[derive(Deserialize, Debug)]
            struct W {
                #[allow(dead_code)]
                loss: LossCfg,
            }
            match toml::from_str::<W>(text) {
                Err(e) => e.message().to_string(),
                Ok(w) => w.loss.validate("loss").unwrap_err().to_string(),
            }
        };
        assert_eq!(
            err("loss = { model = \"bernoulli\", p = 1.5 }"),
            "loss.p: must be a probability in [0, 1], got 1.5"
        );
        assert_eq!(
            err("loss = { model = \"gilbert_elliott\", p_gb = 0.1, p_bg = -0.1 }"),
            "loss.p_bg: must be a probability in [0, 1], got -0.1"
        );
        assert_eq!(
            err("loss = { model = \"gilbert_elliott\", p_gb = 0.1, p_bg = 0.1, loss_bad = 2 }"),
            "loss.loss_bad: must be a probability in [0, 1], got 2"
        );
        assert_eq!(err("loss = { model = \"burst\", p = 0.1, length = 0 }"), "loss.length: must be at least 1 packet");
        assert_eq!(
            err("loss = { model = \"two_state\", q = 0.1, length = 0 }"),
            "loss.length: must be at least 1 packet"
        );
        assert_eq!(err("loss = { model = \"periodic\", every = 0 }"), "loss.every: must be at least 1 packet");
        assert_eq!(
            err("loss = { model = \"periodic\", every = 10, offset = 10 }"),
            "loss.offset: must be below every = 10, got 10"
        );
        assert_eq!(
            err("loss = { model = \"schedule\", steps = [[\"1s\", 0.1], [\"1s\", 0.2]], pattern = \"random\" }"),
            "loss.steps[1][0]: times must increase: 1s is not after 1s"
        );
        assert_eq!(
            err("loss = { model = \"schedule\", steps = [[\"0s\", 1.1]], pattern = \"random\" }"),
            "loss.steps[0][1]: must be a probability in [0, 1], got 1.1"
        );
        assert!(
            err("loss = { model = \"schedule\", steps = [], pattern = \"random\" }").starts_with("loss.steps: needs")
        );
        let e = err("loss = { model = \"bernouli\", p = 0.1 }");
        assert!(e.contains("unknown variant `bernouli`") && e.contains("`gilbert_elliott`"), "{e}");
        let e = err("loss = { model = \"bernoulli\", q = 0.1 }");
        assert!(e.contains("unknown field `q`"), "{e}");
        let e = err("loss = { model = \"schedule\", steps = [[\"0s\", 0.1]] }");
        assert!(e.contains("missing field `pattern`"), "{e}");
    }
}
