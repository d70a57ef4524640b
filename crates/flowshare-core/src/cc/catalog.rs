//! The listing of the algorithm registry that `flowshare algorithms` prints.
//!
//! Names, parameters, defaults and the values of choice parameters are read from the registry
//! itself ([`ALGORITHMS`] and the [`CcConfig`] parser): an algorithm added there is listed at
//! once. Only the prose (a one-line description, the reference and the allowed range of a
//! numeric parameter, which the parser checks in code) is written here; a test keeps the two in
//! step.

use super::config::{CcConfig, ALGORITHMS};
use serde_json::{json, Map, Value};

/// The prose of one algorithm.
pub struct AlgorithmDoc {
    /// Its name in `tcp.cc`.
    pub name: &'static str,
    /// One line.
    pub summary: &'static str,
    /// Where it is defined.
    pub reference: &'static str,
    /// `(parameter, allowed range, description)`.
    pub params: &'static [(&'static str, &'static str, &'static str)],
}

const VARIANT: (&str, &str, &str) = ("variant", "", "which published form the constants and rules follow");
const VEGAS_COMMON: [(&str, &str, &str); 5] = [
    ("gamma", ">= 0 segments", "slow-start exit threshold of the brakmo and linux slow starts"),
    ("slow_start", "", "slow-start rule"),
    ("diff", "", "form of the queued-segment estimate"),
    ("base_rtt_refresh", "a positive time, or absent (no refresh)", "period of the base-RTT refresh"),
    ("refresh_to", "", "what the base RTT becomes at a refresh"),
];

/// The prose of every algorithm of [`ALGORITHMS`].
pub const DOCS: &[AlgorithmDoc] = &[
    AlgorithmDoc {
        name: "reno",
        summary: "AIMD(1, 1/2): slow start, then one segment per RTT, halve on a loss",
        reference: "M. Allman, V. Paxson and E. Blanton, \"TCP Congestion Control\", RFC 5681, 2009",
        params: &[],
    },
    AlgorithmDoc {
        name: "aimd",
        summary: "AIMD(a, b): slow start, then a segments more per RTT, the window times 1 - b on a loss",
        reference: "Y. R. Yang and S. S. Lam, \"General AIMD Congestion Control\", IEEE ICNP 2000",
        params: &[
            ("a", "> 0 segments per RTT", "additive increase"),
            ("b", "0 < b < 1", "multiplicative decrease: the fraction of the window removed on a loss"),
        ],
    },
    AlgorithmDoc {
        name: "scalable",
        summary: "Scalable TCP: multiplicative increase, ssthresh = 0.875 of the window on a loss",
        reference: "T. Kelly, \"Scalable TCP: Improving Performance in Highspeed Wide Area Networks\", ACM SIGCOMM CCR 33(2), 2003",
        params: &[VARIANT],
    },
    AlgorithmDoc {
        name: "multcp",
        summary: "MulTCP(N): one connection that behaves like N Reno flows",
        reference: "J. Crowcroft and P. Oechslin, \"Differentiated End-to-End Internet Services using a Weighted Proportional Fair Sharing TCP\", ACM SIGCOMM CCR 28(3), 1998",
        params: &[
            ("n", "1 to 10000 (real)", "number of Reno flows emulated"),
            ("slow_start", "", "standard (+1 per ACK) or triple (the paper's x3 per RTT)"),
            ("loss_policy", "", "how ssthresh is set on a loss (docs/algorithms.md)"),
        ],
    },
    AlgorithmDoc {
        name: "pamultcp",
        summary: "PA-MulTCP(N): a probe loop AIMD(1, 1/2) and an adjusting loop AIMD(sqrt N', 2/(1+3N'^1.5)) capped by the probe loop's loss-event rate, in one SACK connection",
        reference: "Fang-Chun Kuo and Xiaoming Fu, \"Probe-Aided MulTCP: An Aggregate Congestion Control Mechanism\", ACM SIGCOMM CCR 38(1), 2008",
        params: &[
            ("n", "2 to 200 (whole; 1 with adjust_weight = \"n\")", "long-lived member flows of the aggregate"),
            ("assignment", "", "consecutive (a loop keeps new segments until it is closed) or interleave"),
            ("timeout", "", "which loop a timeout collapses: owner (of the oldest outstanding segment) or both"),
            ("adjust_weight", "", "the adjusting loop's weight: n_minus_1 (N flowshares in all) or n (the paper's equations)"),
        ],
    },
    AlgorithmDoc {
        name: "mpat",
        summary: "MPAT: one AIMD(1, 1/2) window loop per member flow in one SACK connection",
        reference: "M. Singh, P. Pradhan and P. Francis, \"MPAT: Aggregate TCP Congestion Management as a Building Block for Internet QoS\", IEEE ICNP 2004",
        params: &[
            ("n", "1 to 200 (whole)", "long-lived member flows of the aggregate"),
            ("new_loop_cwnd", "1 to 1000 segments", "window a joining member's loop starts from"),
        ],
    },
    AlgorithmDoc {
        name: "stochastic",
        summary: "Stochastic TCP: one window, the sum of n virtual Reno streams; each ACK and each loss goes to one stream at random",
        reference: "T. J. Hacker and P. Smith, \"Stochastic TCP: A Statistical Approach to Congestion Avoidance\", PFLDnet 2008",
        params: &[
            ("n", "1 to 64 (whole)", "number of virtual streams"),
            ("acks_per_increase", "1 to 1000000 (whole)", "ACKs a stream must be given per increment of 1/w (less aggression above 1)"),
        ],
    },
    AlgorithmDoc {
        name: "vegas",
        summary: "TCP Vegas: keeps between alpha and beta segments queued, judged once per round",
        reference: "L. S. Brakmo and L. L. Peterson, \"TCP Vegas: End to End Congestion Avoidance on a Global Internet\", IEEE JSAC 13(8), 1995",
        params: &[
            VARIANT,
            ("alpha", ">= 0 segments (linux: multiples of 1/2)", "below this many queued segments, +1 per RTT"),
            ("beta", ">= alpha segments", "above this many queued segments, -1 per RTT"),
            VEGAS_COMMON[0],
            VEGAS_COMMON[1],
            VEGAS_COMMON[2],
            VEGAS_COMMON[3],
            VEGAS_COMMON[4],
        ],
    },
    AlgorithmDoc {
        name: "vegas_enhanced",
        summary: "Enhanced Vegas: Vegas with alpha = beta = delta and no dead zone",
        reference: "G. Hasegawa, \"Improving Fairness and Stability of Congestion Control Mechanisms of TCP\", PhD thesis, Osaka University, 2000, Eq 2.26",
        params: &[
            ("delta", "> 0 segments", "target number of queued segments"),
            VEGAS_COMMON[0],
            VEGAS_COMMON[1],
            VEGAS_COMMON[2],
            VEGAS_COMMON[3],
            VEGAS_COMMON[4],
        ],
    },
    AlgorithmDoc {
        name: "highspeed",
        summary: "HighSpeed TCP: increase a(w) and decrease b(w) that grow with the window",
        reference: "S. Floyd, \"HighSpeed TCP for Large Congestion Windows\", RFC 3649, 2003",
        params: &[VARIANT],
    },
    AlgorithmDoc {
        name: "bic",
        summary: "BIC TCP: binary search towards the window of the last loss",
        reference: "L. Xu, K. Harfoush and I. Rhee, \"Binary Increase Congestion Control (BIC) for Fast Long-Distance Networks\", IEEE INFOCOM 2004",
        params: &[
            VARIANT,
            ("beta", "0 < beta < 1", "fraction of the window kept on a loss"),
            ("s_max", "> 0 segments per RTT", "largest increment"),
            ("s_min", "> 0 and <= s_max segments per RTT", "smallest increment"),
            ("low_window", ">= 0 segments", "below this window, Reno"),
            ("fast_convergence", "true or false", "release bandwidth faster after consecutive losses"),
        ],
    },
    AlgorithmDoc {
        name: "cubic",
        summary: "CUBIC: window a cubic function of the time since the last loss",
        reference: "L. Xu, S. Ha, I. Rhee, V. Goel and L. Eggert (eds.), \"CUBIC for Fast and Long-Distance Networks\", RFC 9438, 2023",
        params: &[
            VARIANT,
            ("c", "> 0 segments/s^3", "scaling constant of the cubic"),
            ("beta", "0 < beta < 1", "fraction of the window kept on a loss"),
            ("fast_convergence", "true or false", "release bandwidth faster after consecutive losses"),
            ("tcp_friendliness", "true or false", "at least the window Reno would have"),
            ("hystart", "true or false", "HyStart: leave slow start on an ACK train or a delay increase (Linux: on)"),
            ("hystart_detect", "\"both\", \"ack_train\" or \"delay\"", "which HyStart detectors run"),
            ("hystart_low_window", ">= 0 segments", "HyStart acts only above this window"),
            ("hystart_ack_delta", "a time", "largest gap between ACKs of one train"),
        ],
    },
    AlgorithmDoc {
        name: "htcp",
        summary: "H-TCP: increase a function of the time since the last loss",
        reference: "D. Leith and R. Shorten, \"H-TCP: TCP for high-speed and long-distance networks\", PFLDnet 2004",
        params: &[
            VARIANT,
            ("rtt_scaling", "true or false", "scale the increase by the RTT"),
            ("bandwidth_switch", "true or false", "adaptive backoff from the throughput change"),
            ("delta_l", "a time (linux: whole milliseconds)", "low-speed period after a loss"),
        ],
    },
    AlgorithmDoc {
        name: "compound",
        summary: "Compound TCP: a loss window plus a delay window",
        reference: "K. Tan, J. Song, Q. Zhang and M. Sridharan, \"A Compound TCP Approach for High-speed and Long Distance Networks\", IEEE INFOCOM 2006",
        params: &[
            VARIANT,
            ("alpha", "> 0", "gain of the delay window's increase"),
            ("beta", "0 < beta < 1", "fraction of the window removed on a loss"),
            ("k", "0 < k < 1", "exponent of the delay window's increase"),
            ("zeta", ">= 0", "segments of the delay window removed per segment queued"),
            ("gamma", "> 0 segments", "queued segments that signal congestion"),
            ("low_wnd", ">= 0 segments (0 = off)", "below this window, Reno"),
        ],
    },
    AlgorithmDoc {
        name: "fast",
        summary: "FAST TCP: delay-based, keeps alpha segments queued per flow",
        reference: "C. Jin, D. X. Wei and S. H. Low, \"FAST TCP: Motivation, Architecture, Algorithms, Performance\", IEEE INFOCOM 2004",
        params: FAST_PARAMS,
    },
    AlgorithmDoc {
        name: "fast_at",
        summary: "FAST with alpha-tuning: FAST whose alpha follows its rate or losses",
        reference: "D. X. Wei, C. Jin, S. H. Low and S. Hegde, \"FAST TCP: Motivation, Architecture, Algorithms, Performance\", IEEE/ACM ToN 14(6), 2006",
        params: FAST_PARAMS,
    },
    AlgorithmDoc {
        name: "bbr",
        summary: "BBR v1: paces at the measured bottleneck bandwidth, window of two BDPs",
        reference: "N. Cardwell, Y. Cheng, C. S. Gunn, S. H. Yeganeh and V. Jacobson, \"BBR: Congestion-Based Congestion Control\", ACM Queue 14(5), 2016; Linux net/ipv4/tcp_bbr.c",
        params: &[
            ("bw_window", "1 to 1000 rounds", "window of the max-bandwidth filter"),
            ("min_rtt_window", "a positive time", "window of the min-RTT filter"),
            ("probe_rtt_time", "a positive time", "least time spent in PROBE_RTT"),
            ("random_start", "true or false", "start PROBE_BW at a random phase of the gain cycle"),
        ],
    },
    AlgorithmDoc {
        name: "dctcp",
        summary: "DCTCP: cuts the window in proportion to the fraction of ECN-marked segments",
        reference: "M. Alizadeh et al., \"Data Center TCP (DCTCP)\", ACM SIGCOMM 2010; S. Bensley et al., RFC 8257, 2017",
        params: &[
            ("g", "0 < g <= 1", "weight of the newest window in the marked fraction alpha"),
            ("initial_alpha", "0 <= initial_alpha <= 1", "alpha before the first window is measured"),
        ],
    },
];

const FAST_PARAMS: &[(&str, &str, &str)] = &[
    ("alpha", "> 0 segments", "segments queued per flow at equilibrium"),
    ("beta", ">= alpha segments, or absent (always update)", "no update while alpha <= queued < beta"),
    ("gamma", "0 < gamma <= 1", "step size of the window update"),
    ("update_period", "a positive time", "period of the window update"),
    ("every_other_rtt", "true or false", "update every other RTT"),
    ("pace", "true or false", "pace the window increase"),
    ("mi_threshold", "a time", "queueing delay that ends the multiplicative increase"),
    ("slow_start", "", "slow-start rule"),
    ("avg_weight", "", "weight of the RTT average"),
    ("alpha_tuning", "", "none (fast) or rate or loss (fast_at)"),
    ("alpha_min", "> 0 and <= alpha segments", "smallest tuned alpha"),
];

/// The accepted fields of `algo`, read from the parser's refusal of an unknown one.
pub fn accepted_params(algo: &str) -> Vec<String> {
    let probe = json!({ "algo": algo, "\u{1}": 0 });
    let err = match serde_json::from_value::<CcConfig>(probe) {
        Err(e) => e.to_string(),
        Ok(_) => return Vec::new(),
    };
    quoted_names(&err, "expected")
}

/// The names in backquotes after `marker` in a serde message (``expected one of `a`, `b` ``).
fn quoted_names(message: &str, marker: &str) -> Vec<String> {
    let Some(at) = message.find(marker) else { return Vec::new() };
    let tail = &message[at..];
    let tail = tail.split(" (algo").next().unwrap_or(tail);
    tail.split('`').skip(1).step_by(2).map(str::to_string).collect()
}

/// The values a choice parameter takes, read from the parser's refusal of an unknown one;
/// empty for a number, time or boolean.
fn choices(algo: &str, param: &str, base: &Map<String, Value>) -> Vec<String> {
    let mut table = base.clone();
    table.insert("algo".into(), json!(algo));
    table.insert(param.into(), json!("\u{1}"));
    match serde_json::from_value::<CcConfig>(Value::Object(table)) {
        Err(e) if e.to_string().contains("unknown variant") => quoted_names(&e.to_string(), "expected"),
        _ => Vec::new(),
    }
}

/// The normalized parameters of `algo` with `set` given: every default filled in.
pub fn defaults(algo: &str, set: &Map<String, Value>) -> Result<Map<String, Value>, String> {
    let mut table = set.clone();
    table.insert("algo".into(), json!(algo));
    let cfg: CcConfig = serde_json::from_value(Value::Object(table)).map_err(|e| e.to_string())?;
    match serde_json::to_value(cfg).expect("an algorithm serializes") {
        Value::Object(mut m) => {
            m.remove("algo");
            Ok(m)
        }
        _ => Ok(Map::new()),
    }
}

/// One algorithm's listing: name, summary, reference and, per parameter, its kind, default
/// (per variant where variants differ), range and description.
pub fn describe(algo: &str) -> Option<Value> {
    if !ALGORITHMS.contains(&algo) {
        return None;
    }
    let doc = DOCS.iter().find(|d| d.name == algo);
    let names = accepted_params(algo);
    let variants = if names.iter().any(|n| n == "variant") { choices(algo, "variant", &Map::new()) } else { vec![] };
    // Defaults per variant (one set if the algorithm has no variants).
    let mut per_variant: Vec<(Option<String>, Map<String, Value>)> = Vec::new();
    if variants.is_empty() {
        per_variant.push((None, defaults(algo, &Map::new()).unwrap_or_default()));
    } else {
        for v in &variants {
            let mut set = Map::new();
            set.insert("variant".into(), json!(v));
            per_variant.push((Some(v.clone()), defaults(algo, &set).unwrap_or_default()));
        }
    }
    // The variant naming the algorithm alone picks: the one whose defaults are the same.
    let plain = defaults(algo, &Map::new()).unwrap_or_default();
    let default_variant = plain.get("variant").cloned().or_else(|| {
        let fields = |m: &Map<String, Value>| m.keys().filter(|k| *k != "variant").count();
        let same = |m: &Map<String, Value>| {
            fields(m) == fields(&plain) && m.iter().all(|(k, v)| k == "variant" || plain.get(k) == Some(v))
        };
        per_variant.iter().find(|(_, m)| same(m)).and_then(|(v, _)| v.clone()).map(Value::String)
    });
    let params: Vec<Value> = names
        .iter()
        .map(|name| {
            let prose = doc.and_then(|d| d.params.iter().find(|p| p.0 == name));
            // An option of a group switched on by a boolean (`hystart_detect` by `hystart`) is
            // written out only when its switch is on: its default is the one it then takes.
            let gated = |variant: &Option<String>| -> Value {
                names
                    .iter()
                    .filter(|switch| name.starts_with(&format!("{switch}_")))
                    .find_map(|switch| {
                        let mut set = Map::new();
                        if let Some(v) = variant {
                            set.insert("variant".into(), json!(v));
                        }
                        set.insert(switch.clone(), json!(true));
                        defaults(algo, &set).ok()?.get(name).cloned()
                    })
                    .unwrap_or_else(|| {
                        // The switch itself, left out of the normalized form when off.
                        let prefix = format!("{name}_");
                        if names.iter().any(|n| n.starts_with(&prefix)) {
                            json!(false)
                        } else {
                            Value::Null
                        }
                    })
            };
            let values: Vec<(Option<String>, Value)> = per_variant
                .iter()
                .map(|(v, m)| (v.clone(), m.get(name).cloned().unwrap_or_else(|| gated(v))))
                .collect();
            let default = if name == "variant" {
                default_variant.clone().unwrap_or(Value::Null)
            } else {
                let first = &values[0].1;
                if values.iter().all(|(_, x)| x == first) {
                    first.clone()
                } else {
                    Value::Object(values.iter().map(|(v, x)| (v.clone().unwrap_or_default(), x.clone())).collect())
                }
            };
            let choice = choices(algo, name, &Map::new());
            let kind = if !choice.is_empty() {
                "choice"
            } else {
                match values.iter().map(|x| &x.1).find(|x| !x.is_null()) {
                    Some(Value::Bool(_)) => "boolean",
                    Some(Value::Number(_)) => "number",
                    Some(Value::String(_)) => "time",
                    _ if prose.is_some_and(|p| p.1.contains("time")) => "time",
                    _ => "number",
                }
            };
            let mut p = Map::new();
            p.insert("name".into(), json!(name));
            p.insert("kind".into(), json!(kind));
            p.insert("default".into(), default);
            let range = match (choice.is_empty(), prose) {
                (false, _) => choice.join(", "),
                (true, Some(p)) => p.1.to_string(),
                (true, None) => String::new(),
            };
            p.insert("allowed".into(), json!(range));
            p.insert("description".into(), json!(prose.map(|p| p.2).unwrap_or("")));
            Value::Object(p)
        })
        .collect();
    Some(json!({
        "name": algo,
        "summary": doc.map(|d| d.summary).unwrap_or(""),
        "reference": doc.map(|d| d.reference).unwrap_or(""),
        "variants": variants,
        "params": params,
    }))
}

/// Loss recoveries (`tcp.recovery`) and their one-line descriptions.
pub const RECOVERIES: &[(&str, &str)] = &[
    ("tahoe", "fast retransmit, then slow start from one segment (no fast recovery)"),
    ("reno", "fast retransmit and fast recovery ending on the first new ACK (RFC 5681 §3.2)"),
    ("newreno", "Reno with partial-ACK handling: recovery ends when all data outstanding at its start is acknowledged (RFC 6582)"),
    ("sack", "SACK-based recovery; tcp.sack_recovery picks rfc6675 (RFC 6675), rate_halving (ns-2.35's TCP-Linux) or prr (RFC 6937)"),
];

/// Queue disciplines (`queue.kind`) and their one-line descriptions.
pub const QUEUES: &[(&str, &str)] = &[
    ("droptail", "first in, first out; arrivals beyond the limit are dropped"),
    ("red", "FIFO with Random Early Detection (S. Floyd and V. Jacobson, IEEE/ACM ToN 1(4), 1993)"),
    ("priority", "strict priority between classes of flows"),
    ("drr", "deficit round robin (M. Shreedhar and G. Varghese, SIGCOMM 1995); with aqm, DRR+"),
    ("enhanced_red", "FIFO with a RED drop probability per flow group"),
    ("fq_codel", "FQ-CoDel (RFC 8290)"),
    ("epd", "ATM cell FIFO discarding whole frames: EPD (A. Romanow and S. Floyd, IEEE JSAC 13(4), 1995), EPD/A, PPD"),
];

/// The whole listing: every algorithm of the registry, the recoveries and the queues.
pub fn listing() -> Value {
    let algorithms: Vec<Value> = ALGORITHMS.iter().filter_map(|a| describe(a)).collect();
    let named = |items: &[(&str, &str)]| -> Vec<Value> {
        items.iter().map(|(n, d)| json!({ "name": n, "description": d })).collect()
    };
    json!({
        "algorithms": algorithms,
        "recoveries": named(RECOVERIES),
        "queues": named(QUEUES),
    })
}

/// Levenshtein distance, for "did you mean".
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The refusal of an unknown `tcp.cc` name: a recovery or queue named by mistake gets the
/// right field, a misspelling the nearest names, and every message points to the listing.
pub fn unknown_algorithm(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    let head = format!("unknown algorithm \"{name}\"");
    let listing = "`flowshare algorithms` lists them with their parameters";
    if let Some((r, _)) = RECOVERIES.iter().find(|(r, _)| *r == lower && !ALGORITHMS.contains(r)) {
        let pretty = if *r == "newreno" { "NewReno" } else { r };
        return format!("{head}; {pretty} is recovery = \"{r}\" with cc = \"reno\" ({listing})");
    }
    if let Some((q, _)) = QUEUES.iter().find(|(q, _)| *q == lower) {
        return format!("{head}; {q} is a queue discipline, queue.kind = \"{q}\" on a link ({listing})");
    }
    let mut near: Vec<(usize, &str)> = ALGORITHMS
        .iter()
        .map(|a| (edit_distance(&lower.replace('-', "_"), a), *a))
        .filter(|(d, a)| *d <= 2.max(a.len() / 3))
        .collect();
    near.sort();
    let near: Vec<String> = near.iter().take(3).map(|(_, a)| format!("\"{a}\"")).collect();
    if near.is_empty() {
        format!("{head}; algorithms are {} ({listing})", ALGORITHMS.join(", "))
    } else {
        format!("{head}; did you mean {}? ({listing})", near.join(" or "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_algorithm_is_documented_with_exactly_its_parameters() {
        for algo in ALGORITHMS {
            let doc = DOCS.iter().find(|d| d.name == *algo).unwrap_or_else(|| panic!("{algo}: no entry in DOCS"));
            let mut listed: Vec<&str> = doc.params.iter().map(|p| p.0).collect();
            let mut accepted = accepted_params(algo);
            listed.sort_unstable();
            accepted.sort_unstable();
            assert_eq!(listed, accepted, "{algo}");
            assert!(!doc.summary.is_empty() && !doc.reference.is_empty(), "{algo}");
        }
        for d in DOCS {
            assert!(ALGORITHMS.contains(&d.name), "{} documented but not in the registry", d.name);
        }
    }

    #[test]
    fn every_listed_default_is_accepted_by_the_parser() {
        let listing = listing();
        for a in listing["algorithms"].as_array().unwrap() {
            let algo = a["name"].as_str().unwrap();
            let variants: Vec<Option<&str>> = match a["variants"].as_array().unwrap().as_slice() {
                [] => vec![None],
                vs => vs.iter().map(|v| v.as_str()).collect(),
            };
            for variant in variants {
                let mut table = Map::new();
                table.insert("algo".into(), json!(algo));
                for p in a["params"].as_array().unwrap() {
                    let name = p["name"].as_str().unwrap();
                    let value = match (&p["default"], variant) {
                        (_, Some(v)) if name == "variant" => json!(v),
                        (Value::Object(per), Some(v)) => per[v].clone(),
                        (d, _) => d.clone(),
                    };
                    if !value.is_null() {
                        table.insert(name.into(), value);
                    }
                }
                // Options of a group whose switch is off by default are not written (the
                // parser refuses them there).
                let off: Vec<String> =
                    table.iter().filter(|(_, v)| **v == json!(false)).map(|(k, _)| format!("{k}_")).collect();
                table.retain(|k, _| !off.iter().any(|p| k.starts_with(p)));
                let written = Value::Object(table.clone());
                let cfg: CcConfig = serde_json::from_value(written.clone())
                    .unwrap_or_else(|e| panic!("{algo} {variant:?}: listed defaults refused: {e}"));
                // And they are the defaults: the same as naming the algorithm (and variant) alone.
                let mut alone = Map::new();
                alone.insert("algo".into(), json!(algo));
                if let Some(v) = variant {
                    alone.insert("variant".into(), json!(v));
                }
                let plain: CcConfig = serde_json::from_value(Value::Object(alone)).unwrap();
                assert_eq!(cfg, plain, "{algo} {variant:?}");
            }
        }
    }

    #[test]
    fn choices_come_from_the_parser() {
        let cubic = describe("cubic").unwrap();
        assert_eq!(cubic["variants"], json!(["rfc", "ns2"]));
        let vegas = describe("vegas").unwrap();
        let slow = vegas["params"].as_array().unwrap().iter().find(|p| p["name"] == "slow_start").unwrap();
        assert_eq!(slow["kind"], "choice");
        assert!(slow["allowed"].as_str().unwrap().contains("thesis"), "{slow}");
        let multcp = describe("multcp").unwrap();
        let n = &multcp["params"][0];
        assert_eq!((n["name"].as_str(), n["default"].as_f64()), (Some("n"), Some(1.0)));
        assert!(describe("nope").is_none());
    }

    #[test]
    fn unknown_names_get_a_hint() {
        assert_eq!(
            unknown_algorithm("newreno"),
            "unknown algorithm \"newreno\"; NewReno is recovery = \"newreno\" with cc = \"reno\" (`flowshare algorithms` lists them with their parameters)"
        );
        assert!(unknown_algorithm("NewReno").contains("recovery = \"newreno\""));
        assert!(unknown_algorithm("sack").contains("recovery = \"sack\""));
        assert!(unknown_algorithm("red").contains("queue.kind = \"red\""));
        assert!(unknown_algorithm("cubicc").contains("did you mean \"cubic\"?"), "{}", unknown_algorithm("cubicc"));
        assert!(unknown_algorithm("vegas-enhanced").contains("did you mean \"vegas_enhanced\""));
        let far = unknown_algorithm("zzzzzzzz");
        assert!(far.contains("algorithms are reno, aimd, scalable"), "{far}");
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
