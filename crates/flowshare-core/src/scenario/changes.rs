//! `[[changes]]`: rate, delay and up/down changes of links and LANs at given times, resolved
//! against the built network into the link directions they apply to.

use super::Scenario;
use crate::net::{LinkId, Network};
use crate::units::{Dur, Rate, Time};
use crate::ConfigError;
use serde::{Deserialize, Serialize};

/// A change of a link or LAN at a given time (`[[changes]]`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChangeCfg {
    /// When it applies.
    pub at: Dur,
    /// Name of the link or LAN (`"bottleneck"` in a dumbbell).
    pub link: String,
    /// Which directions of a point-to-point link (default both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<ChangeDirection>,
    /// New rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// New propagation delay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Dur>,
    /// Up (true) or down (false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up: Option<bool>,
}

/// Directions a change applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeDirection {
    /// The link's forward direction only.
    Forward,
    /// The reverse direction only.
    Reverse,
    /// Both.
    Both,
}

/// A resolved change.
#[derive(Clone, Debug)]
pub struct LinkChange {
    /// When it applies.
    pub at: Time,
    /// The link directions it applies to.
    pub dirs: Vec<LinkId>,
    /// New rate.
    pub rate: Option<Rate>,
    /// New delay.
    pub delay: Option<Time>,
    /// Up or down.
    pub up: Option<bool>,
}

impl Scenario {
    /// Check the `[[changes]]` against the network; sorted by time, stably.
    pub(super) fn resolve_changes(&self, net: &Network) -> Result<Vec<LinkChange>, ConfigError> {
        let mut out = Vec::with_capacity(self.changes.len());
        let duration = self.simulation.duration;
        for (i, c) in self.changes.iter().enumerate() {
            let path = format!("changes[{i}]");
            if c.at.0 > duration.0 {
                return Err(ConfigError::new(
                    format!("{path}.at"),
                    format!("{} is beyond the end of the run (simulation.duration = {duration})", c.at),
                ));
            }
            let named: Vec<usize> = (0..net.link_names.len()).filter(|&k| net.link_names[k] == c.link).collect();
            let k = match (named.as_slice(), self.bottleneck_link()) {
                ([k], _) => *k,
                ([], Some(b)) if c.link == "bottleneck" => b,
                ([], _) => {
                    const SHOWN: usize = 6;
                    let mut names: Vec<String> =
                        net.link_names.iter().take(SHOWN).map(|n| format!("\"{n}\"")).collect();
                    if net.link_names.len() > SHOWN {
                        names.push(format!("… ({} links)", net.link_names.len()));
                    }
                    return Err(ConfigError::new(
                        format!("{path}.link"),
                        format!("unknown link \"{}\"; links are {}", c.link, names.join(", ")),
                    ));
                }
                (many, _) => {
                    return Err(ConfigError::new(
                        format!("{path}.link"),
                        format!("{} links are called \"{}\"; give them unique names", many.len(), c.link),
                    ));
                }
            };
            if c.rate.is_none() && c.delay.is_none() && c.up.is_none() {
                return Err(ConfigError::new(path, "changes nothing; give at least one of rate, delay, up"));
            }
            if c.rate.is_some_and(|r| r.0 == 0) {
                return Err(ConfigError::new(format!("{path}.rate"), "must be greater than 0bps (use up = false)"));
            }
            let mut dirs = net.dirs_of(k);
            let is_lan = net.links[dirs[0] as usize].lan.is_some();
            match c.direction {
                Some(ChangeDirection::Forward | ChangeDirection::Reverse) if is_lan => {
                    return Err(ConfigError::new(
                        format!("{path}.direction"),
                        format!("\"{}\" is a LAN, whose channel both directions share; omit direction", c.link),
                    ));
                }
                Some(ChangeDirection::Forward) => dirs.truncate(1),
                Some(ChangeDirection::Reverse) => {
                    dirs.remove(0);
                }
                _ => {}
            }
            out.push(LinkChange { at: c.at.0, dirs, rate: c.rate, delay: c.delay.map(|d| d.0), up: c.up });
        }
        out.sort_by_key(|c| c.at);
        Ok(out)
    }
}
