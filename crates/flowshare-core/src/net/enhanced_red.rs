//! Enhanced RED (Hasegawa, thesis §6.2.2): RED whose drop probability between the thresholds
//! is the arriving packet's flow's own `p_i`, so that flows with larger windows are dropped more
//! and the queue shares the link more fairly.

use crate::engine::{uniform, Stream};
use crate::packet::Meta;
use crate::units::{Time, NS_PER_SEC};

/// Parameters of enhanced RED (Hasegawa, thesis §6.2.2): RED whose drop probability between
/// the thresholds is the arriving packet's flow's `p_i`.
#[derive(Clone, Debug, PartialEq)]
pub struct EnhancedRedParams {
    /// Lower threshold of the average, packets.
    pub min_th: f64,
    /// Upper threshold, packets: at or above it every arrival is dropped.
    pub max_th: f64,
    /// EWMA weight.
    pub w_q: f64,
    /// `p_i` by flow (connection index), filled by [`Scheduler::bind_flows`].
    pub p: Vec<f64>,
    /// `p_i` by group index, for connections opened at run time (filled likewise).
    pub p_group: Vec<f64>,
    /// `p_i` of flows whose group has none.
    pub default_p: f64,
    /// `p_i` by flow-group name, as the scenario gives them.
    pub group_p: Vec<(String, f64)>,
    /// Linear ramp `p_i · (avg − min_th)/(max_th − min_th)` instead of a constant `p_i`.
    pub ramp: bool,
    /// Typical packets per second of the link, for the idle-time correction of the average.
    pub ptc: f64,
}

/// State of one enhanced-RED queue.
#[derive(Clone, Debug)]
pub struct EnhancedRed {
    /// Parameters.
    pub params: EnhancedRedParams,
    avg: f64,
    rng: Stream,
}

impl EnhancedRed {
    /// An enhanced-RED queue with an empty average.
    pub fn new(params: EnhancedRedParams, rng: Stream) -> Self {
        EnhancedRed { params, avg: 0.0, rng }
    }

    /// The average, packets.
    pub fn avg_pkts(&self) -> f64 {
        self.avg
    }

    /// Decide on an arrival of `flow` at `at` finding `q` packets waiting; `idle_since` is when the
    /// queue emptied if it is empty. Returns true to drop. The average is RED's EWMA with ns-2's
    /// idle correction; between the thresholds the drop is a Bernoulli trial with the flow's `p_i`
    /// (no count spacing: the "independent drops with probability p" of Hasegawa (2000) §6.2.2,
    /// resolution hasegawa:A42).
    pub fn early_drop(&mut self, at: Time, m: &Meta, q: u32, idle_since: Option<Time>) -> bool {
        let w = self.params.w_q;
        let mut decay = 1.0 - w;
        if let Some(since) = idle_since {
            let m = (self.params.ptc * at.saturating_sub(since) as f64 / NS_PER_SEC as f64).floor();
            decay *= (1.0 - w).powf(m);
        }
        self.avg = decay * self.avg + w * f64::from(q);
        let p = &self.params;
        if self.avg < p.min_th {
            return false;
        }
        if self.avg >= p.max_th {
            return true;
        }
        let p_i = match p.p.get(m.flow as usize) {
            Some(&p_i) => p_i,
            None => p.p_group.get(m.group as usize).copied().unwrap_or(p.default_p),
        };
        let p_i = if p.ramp { p_i * (self.avg - p.min_th) / (p.max_th - p.min_th) } else { p_i };
        uniform(&mut self.rng) < p_i
    }

    /// Set the average, for tests.
    #[cfg(test)]
    pub(crate) fn set_avg(&mut self, avg: f64) {
        self.avg = avg;
    }
}
