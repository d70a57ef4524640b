//! Sequential WWW sources (`process = "sessions"`): each source runs sessions one after the
//! other, a session being a number of pages fetched one at a time, each page one TCP transfer.
//! These are the session and page levels of the page-oriented WWW model of A. Reyes-Lecuona,
//! E. González-Parada, E. Casilari, J. C. Casasola and A. Díaz-Estrella, "A page-oriented WWW
//! traffic model for wireless system simulations", ITC 16, 1999, in the simplified form that
//! M. Savorić and H. Karl use in "Performance Evaluation of an Improved Common Congestion
//! Controller for WWW-based TCP Connections", TU Berlin, TKN-04-007, 2004 (Table 3.1), which
//! [`SessionPreset::ReyesLecuona`] fills in.
//!
//! A source draws, in this order and all from its own stream: a session gap before its first
//! session; at each session's first page the number of pages; at each page its size; after a
//! page a reading time (`think`), or a session gap after a session's last page. The order does
//! not depend on when transfers complete, so every algorithm under test sees the same pages.

use super::arrivals::{DistCfg, DistKind, DistTable, Quantity};
use crate::engine::Stream;
use crate::traffic::arrivals::Dist;
use crate::units::{Bytes, Dur, NS_PER_SEC};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// A number without unit: pages per session.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Count(pub f64);

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl Serialize for Count {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Whole numbers stay integers in a normalized scenario.
        if self.0.fract() == 0.0 && (0.0..9.0e15).contains(&self.0) {
            s.serialize_u64(self.0 as u64)
        } else {
            s.serialize_f64(self.0)
        }
    }
}

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Count;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "a number without unit, such as 25")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Count, E> {
                Ok(Count(v as f64))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Count, E> {
                Ok(Count(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Count, E> {
                if v.is_finite() {
                    Ok(Count(v))
                } else {
                    Err(E::custom(format!("must be a finite number, got {v}")))
                }
            }
        }
        d.deserialize_any(V)
    }
}

impl Quantity for Count {
    fn base(self) -> f64 {
        self.0
    }
    const WHAT: &'static str = "a number";
}

/// How a drawn number of pages (a real number) becomes a whole number of at least one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PageRounding {
    /// The nearest whole number, and at least 1: it keeps the mean of the lognormal
    /// (25.807 → 25.81 pages with Table 3.1's parameters).
    #[default]
    Nearest,
    /// The next whole number up: every session has its fractional page, adding about half a
    /// page to the mean.
    Up,
}

impl PageRounding {
    /// Pages of a session whose draw is `x`.
    pub fn pages(self, x: f64) -> u64 {
        let n = match self {
            PageRounding::Nearest => x.round(),
            PageRounding::Up => x.ceil(),
        };
        // `as` saturates: a draw beyond u64 is u64::MAX pages, and NaN cannot be drawn.
        (n as u64).max(1)
    }
}

/// Published parameter sets of the session model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionPreset {
    /// Table 3.1 of Savorić and Karl (2004), the simplified model of Reyes-Lecuona et al.
    /// (1999): session gaps exponential (mean 5 s), pages per session lognormal (mean 25.807,
    /// sd 78.752), reading times gamma (mean 35.286 s, sd 147.390 s), page sizes Pareto
    /// (α = 1.7584, minimum 30458 bytes).
    #[serde(alias = "reyes-lecuona")]
    ReyesLecuona,
}

/// Seconds as a [`Dur`].
fn seconds(s: f64) -> Dur {
    Dur((s * NS_PER_SEC as f64).round() as u64)
}

fn table<Q: Quantity>(dist: DistKind) -> DistTable<Q> {
    DistTable { dist, mean: None, sd: None, shape: None, scale: None, min: None, max: None }
}

impl SessionPreset {
    /// Its inter-session time.
    pub fn session_gap(self) -> DistCfg<Dur> {
        match self {
            SessionPreset::ReyesLecuona => {
                DistCfg::Table(DistTable { mean: Some(seconds(5.0)), ..table(DistKind::Exponential) })
            }
        }
    }

    /// Its pages per session.
    pub fn pages(self) -> DistCfg<Count> {
        match self {
            SessionPreset::ReyesLecuona => DistCfg::Table(DistTable {
                mean: Some(Count(25.807)),
                sd: Some(Count(78.752)),
                ..table(DistKind::Lognormal)
            }),
        }
    }

    /// Its reading time between pages.
    pub fn think(self) -> DistCfg<Dur> {
        match self {
            SessionPreset::ReyesLecuona => DistCfg::Table(DistTable {
                mean: Some(seconds(35.286)),
                sd: Some(seconds(147.390)),
                ..table(DistKind::Gamma)
            }),
        }
    }

    /// Its page size.
    pub fn size(self) -> DistCfg<Bytes> {
        match self {
            SessionPreset::ReyesLecuona => {
                DistCfg::Table(DistTable { shape: Some(1.7584), scale: Some(Bytes(30_458)), ..table(DistKind::Pareto) })
            }
        }
    }
}

/// The resolved model of a sessions group (times in seconds, sizes in bytes).
#[derive(Clone, Debug, PartialEq)]
pub struct Sessions {
    /// Sequential sources in the group.
    pub sources: u32,
    /// Inter-session time: from a session's last page's completion to the next session.
    pub gap: Dist,
    /// Pages per session, before rounding.
    pub pages: Dist,
    /// How a draw of `pages` becomes whole pages.
    pub rounding: PageRounding,
    /// Reading time: from a page's completion to the next page of the session.
    pub think: Dist,
    /// Page size.
    pub size: Dist,
}

/// Where a source is in its current session.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SourceState {
    /// Pages of the session still to open (0: the next page starts a new session).
    pub pages_left: u64,
}

impl Sessions {
    /// Seconds from the group's start to a source's first session: one session gap, so the
    /// sources of a run do not all open their first page at the same instant.
    pub fn first(&self, rng: &mut Stream) -> f64 {
        self.gap.sample(rng)
    }

    /// The source opens a page now; a new session first draws its number of pages. Returns
    /// the page's size in bytes (not yet rounded).
    pub fn open_page(&self, s: &mut SourceState, rng: &mut Stream) -> f64 {
        if s.pages_left == 0 {
            s.pages_left = self.rounding.pages(self.pages.sample(rng));
        }
        s.pages_left -= 1;
        self.size.sample(rng)
    }

    /// The source's page completed now: seconds until its next page, a reading time within
    /// the session or a session gap after its last page.
    pub fn after_page(&self, s: &SourceState, rng: &mut Stream) -> f64 {
        if s.pages_left > 0 {
            self.think.sample(rng)
        } else {
            self.gap.sample(rng)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    fn preset() -> Sessions {
        let p = SessionPreset::ReyesLecuona;
        Sessions {
            sources: 1,
            gap: p.session_gap().resolve("gap").unwrap(),
            pages: p.pages().resolve("pages").unwrap(),
            rounding: PageRounding::Nearest,
            think: p.think().resolve("think").unwrap(),
            size: p.size().resolve("size").unwrap(),
        }
    }

    fn draws(d: &Dist, n: usize, name: &str) -> Vec<f64> {
        let mut rng = stream(7, name);
        (0..n).map(|_| d.sample(&mut rng)).collect()
    }

    fn mean_sd(x: &[f64]) -> (f64, f64) {
        let n = x.len() as f64;
        let m = x.iter().sum::<f64>() / n;
        (m, (x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt())
    }

    #[test]
    fn the_preset_has_table_3_1s_parameters() {
        let m = preset();
        // Lognormal: σ_N = sqrt(ln(1 + (σ/μ)²)), μ_N = ln μ − σ_N²/2.
        let Dist::Lognormal(l) = m.pages else { panic!("lognormal pages") };
        let sigma = (1.0f64 + (78.752f64 / 25.807).powi(2)).ln().sqrt();
        assert!((sigma - 1.52752).abs() < 1e-5, "{sigma}");
        assert_eq!(l, rand_distr::LogNormal::new(25.807f64.ln() - sigma * sigma / 2.0, sigma).unwrap());
        // Gamma: shape (μ/σ)², scale σ²/μ.
        let Dist::Gamma(g) = m.think else { panic!("gamma reading time") };
        assert_eq!(g, rand_distr::Gamma::new((35.286f64 / 147.39).powi(2), 147.39f64.powi(2) / 35.286).unwrap());
        assert_eq!(m.size, Dist::Pareto(rand_distr::Pareto::new(30_458.0, 1.7584).unwrap()));
        assert_eq!(m.gap, Dist::Exponential(rand_distr::Exp::new(0.2).unwrap()));
    }

    #[test]
    fn the_presets_draws_have_its_moments() {
        let m = preset();
        // Exponential session gaps: the mean within 4 standard errors (sd = mean).
        let n = 200_000;
        let (mean, _) = mean_sd(&draws(&m.gap, n, "gap"));
        assert!((mean - 5.0).abs() < 4.0 * 5.0 / (n as f64).sqrt(), "session gap mean {mean}");
        // Lognormal pages and gamma reading times are skewed (their sample sd converges
        // slowly): many draws, and tolerances of a few per cent (mean) and 10 % (sd).
        let n = 2_000_000;
        let (mean, sd) = mean_sd(&draws(&m.pages, n, "pages"));
        assert!((mean / 25.807 - 1.0).abs() < 0.02, "pages mean {mean}");
        assert!((sd / 78.752 - 1.0).abs() < 0.1, "pages sd {sd}");
        let (mean, sd) = mean_sd(&draws(&m.think, n, "think"));
        assert!((mean / 35.286 - 1.0).abs() < 0.02, "reading time mean {mean}");
        assert!((sd / 147.39 - 1.0).abs() < 0.1, "reading time sd {sd}");
        // Pareto page sizes: never below the minimum β; infinite variance (α < 2), so the tail
        // P(X > x) = (β/x)^α is tested at a few points, each count within 4 binomial sd.
        let sizes = draws(&m.size, n, "size");
        assert!(sizes.iter().all(|&s| s >= 30_458.0));
        for x in [40_000.0, 100_000.0, 1e6] {
            let p = (30_458.0f64 / x).powf(1.7584);
            let k = sizes.iter().filter(|&&s| s > x).count() as f64;
            let sd = (n as f64 * p * (1.0 - p)).sqrt();
            assert!((k - n as f64 * p).abs() < 4.0 * sd, "P(X > {x}): {k} of {n}, expected {}", n as f64 * p);
        }
        // Its mean αβ/(α − 1) = 70,619 B, loosely: the sample mean of a tail this heavy
        // wanders by several per cent.
        let (mean, _) = mean_sd(&sizes);
        assert!((mean / 70_619.0 - 1.0).abs() < 0.1, "page size mean {mean}");
    }

    #[test]
    fn pages_are_whole_and_at_least_one() {
        let near = PageRounding::Nearest;
        assert_eq!([0.01, 0.5, 1.49, 1.5, 2.6].map(|x| near.pages(x)), [1, 1, 1, 2, 3]);
        let up = PageRounding::Up;
        assert_eq!([0.01, 1.0, 1.01, 2.6].map(|x| up.pages(x)), [1, 1, 2, 3]);
        // Nearest keeps the lognormal's mean; up adds about half a page.
        let m = preset();
        let x = draws(&m.pages, 1_000_000, "rounding");
        let mean = |r: PageRounding| x.iter().map(|&v| r.pages(v) as f64).sum::<f64>() / x.len() as f64;
        let (raw, n, u) = (mean_sd(&x).0, mean(near), mean(up));
        assert!((n - raw).abs() < 0.05, "nearest {n} against {raw}");
        assert!((u - raw - 0.5).abs() < 0.05, "up {u} against {raw}");
    }

    #[test]
    fn a_source_reads_between_pages_and_pauses_between_sessions() {
        let fixed = |v: f64| Dist::Constant(v);
        let m = Sessions {
            sources: 1,
            gap: fixed(7.0),
            pages: fixed(2.6),
            rounding: PageRounding::Nearest,
            think: fixed(2.0),
            size: fixed(1000.0),
        };
        let mut rng = stream(1, "s");
        let mut s = SourceState::default();
        let mut gaps = Vec::new();
        for _ in 0..6 {
            assert_eq!(m.open_page(&mut s, &mut rng), 1000.0);
            gaps.push(m.after_page(&s, &mut rng));
        }
        assert_eq!(gaps, [2.0, 2.0, 7.0, 2.0, 2.0, 7.0], "sessions of 3 pages");
    }
}
