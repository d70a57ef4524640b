//! Quantities with explicit units: time, rate and size.
//!
//! Scenario files write `"20ms"`, `"100Mbps"`, `"1460B"`; a plain number is read in the base
//! unit (seconds, bits per second, bytes). Internally time is an integer count of nanoseconds,
//! rates are integer bits per second and sizes integer bytes, so arithmetic on the hot path is
//! exact and platform-independent.

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// Simulated time in nanoseconds since the start of the run.
pub type Time = u64;

/// Nanoseconds per second.
pub const NS_PER_SEC: u64 = 1_000_000_000;

/// The largest time a scenario may give: 10⁹ s (about 32 years). Simulated time is a u64 count
/// of nanoseconds (at most 1.8·10¹⁰ s), so sums of a few such times cannot wrap.
pub const MAX_TIME: Time = 1_000_000_000 * NS_PER_SEC;
/// The largest rate a scenario may give: 10 Tbit/s.
pub const MAX_RATE_BPS: u64 = 10_000_000_000_000;
/// The largest size a scenario may give: 10¹⁵ bytes (1 PB).
pub const MAX_BYTES: u64 = 1_000_000_000_000_000;

/// Seconds as f64, for results.
pub fn secs(t: Time) -> f64 {
    t as f64 / NS_PER_SEC as f64
}

/// A span of time in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dur(pub u64);

/// A rate in bits per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

/// A size in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

impl Dur {
    /// From milliseconds.
    pub const fn from_millis(ms: u64) -> Dur {
        Dur(ms * 1_000_000)
    }

    /// Zero length (a default that scenarios leave out when written back).
    pub fn is_zero(&self) -> bool {
        self.0 == 0
    }
}

impl Rate {
    /// Time to put `bytes` on the wire, in whole nanoseconds, with the sub-nanosecond
    /// remainder carried in `carry` (bit-nanoseconds) so long runs do not drift.
    #[inline]
    pub fn tx_time(self, bytes: u64, carry: &mut u64) -> u64 {
        let num = bytes * 8 * NS_PER_SEC + *carry;
        *carry = num % self.0;
        num / self.0
    }
}

struct Unit {
    suffix: &'static str,
    scale: f64,
}

const TIME_UNITS: &[Unit] = &[
    Unit { suffix: "ns", scale: 1.0 },
    Unit { suffix: "us", scale: 1e3 },
    Unit { suffix: "ms", scale: 1e6 },
    Unit { suffix: "min", scale: 60e9 },
    Unit { suffix: "s", scale: 1e9 },
    Unit { suffix: "h", scale: 3600e9 },
];
const RATE_UNITS: &[Unit] = &[
    Unit { suffix: "bps", scale: 1.0 },
    Unit { suffix: "Kbps", scale: 1e3 },
    Unit { suffix: "kbps", scale: 1e3 },
    Unit { suffix: "Mbps", scale: 1e6 },
    Unit { suffix: "Gbps", scale: 1e9 },
];
const SIZE_UNITS: &[Unit] = &[
    Unit { suffix: "B", scale: 1.0 },
    Unit { suffix: "KB", scale: 1e3 },
    Unit { suffix: "kB", scale: 1e3 },
    Unit { suffix: "MB", scale: 1e6 },
    Unit { suffix: "GB", scale: 1e9 },
    Unit { suffix: "KiB", scale: 1024.0 },
    Unit { suffix: "MiB", scale: 1048576.0 },
    Unit { suffix: "GiB", scale: 1073741824.0 },
];

/// Parse `"<number><unit>"` against a unit table; returns the value in the base unit.
fn parse_with_units(text: &str, units: &[Unit]) -> Option<f64> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'))
        .unwrap_or(t.len());
    // "1e3ms" is fine, but a unit beginning with 'e' does not exist, so the split is unambiguous.
    let (num, unit) = t.split_at(split);
    let unit = unit.trim();
    let value: f64 = num.trim().parse().ok()?;
    let scale = units.iter().find(|u| u.suffix == unit)?.scale;
    let v = value * scale;
    (v.is_finite() && v >= 0.0).then_some(v)
}

fn format_exact(value: u64, units: &[(&str, u64)]) -> String {
    for (suffix, scale) in units {
        if value != 0 && value.is_multiple_of(*scale) {
            return format!("{}{}", value / scale, suffix);
        }
    }
    format!("{}{}", value, units.last().map(|u| u.0).unwrap_or(""))
}

macro_rules! quantity_serde {
    ($ty:ident, $what:literal, $example:literal, $units:expr, $base_scale:expr, $fmt_units:expr, $max:expr) => {
        impl $ty {
            /// The largest value a scenario may give.
            pub const MAX: $ty = $ty($max);

            /// Parse from text with a unit, e.g. the documented examples.
            pub fn parse(text: &str) -> Result<$ty, String> {
                let v = parse_with_units(text, $units).ok_or_else(|| {
                    let allowed: Vec<&str> = $units.iter().map(|u| u.suffix).collect();
                    format!(
                        "expected a {} such as \"{}\" (units: {}), got \"{}\"",
                        $what,
                        $example,
                        allowed.join(", "),
                        text
                    )
                })?;
                $ty::bounded(v, text)
            }

            /// A value in the base unit, refused above [`Self::MAX`] rather than clamped.
            fn bounded(v: f64, given: &str) -> Result<$ty, String> {
                let n = v.round();
                if n > $max as f64 {
                    return Err(format!("must be at most {}, got {}", $ty::MAX, given));
                }
                Ok($ty(n as u64))
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&format_exact(self.0, $fmt_units))
            }
        }

        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.to_string())
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        write!(f, "a {} such as \"{}\"", $what, $example)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$ty, E> {
                        $ty::parse(v).map_err(E::custom)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$ty, E> {
                        self.visit_f64(v as f64)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$ty, E> {
                        self.visit_f64(v as f64)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$ty, E> {
                        if v.is_finite() && v >= 0.0 {
                            $ty::bounded(v * $base_scale, &v.to_string()).map_err(E::custom)
                        } else {
                            Err(E::custom(format!("expected a non-negative {}, got {}", $what, v)))
                        }
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

quantity_serde!(
    Dur,
    "time",
    "20ms",
    TIME_UNITS,
    1e9,
    &[("h", 3_600_000_000_000), ("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000), ("ns", 1)],
    MAX_TIME
);
quantity_serde!(
    Rate,
    "rate",
    "100Mbps",
    RATE_UNITS,
    1.0,
    &[("Gbps", 1_000_000_000), ("Mbps", 1_000_000), ("Kbps", 1_000), ("bps", 1)],
    MAX_RATE_BPS
);
quantity_serde!(
    Bytes,
    "size",
    "1460B",
    SIZE_UNITS,
    1.0,
    &[("GB", 1_000_000_000), ("MB", 1_000_000), ("KB", 1_000), ("B", 1)],
    MAX_BYTES
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_unit_family() {
        assert_eq!(Dur::parse("20ms").unwrap(), Dur(20_000_000));
        assert_eq!(Dur::parse("1.5s").unwrap(), Dur(1_500_000_000));
        assert_eq!(Dur::parse("2min").unwrap(), Dur(120_000_000_000));
        assert_eq!(Rate::parse("100Mbps").unwrap(), Rate(100_000_000));
        assert_eq!(Rate::parse("1Gbps").unwrap(), Rate(1_000_000_000));
        assert_eq!(Bytes::parse("1460B").unwrap(), Bytes(1460));
        assert_eq!(Bytes::parse("1MiB").unwrap(), Bytes(1 << 20));
    }

    #[test]
    fn rejects_missing_or_unknown_units_with_the_allowed_list() {
        let e = Dur::parse("20").unwrap_err();
        assert!(e.contains("units: ns, us, ms"), "{e}");
        assert!(Rate::parse("10Mb").is_err());
        assert!(Bytes::parse("-3B").is_err());
    }

    #[test]
    fn values_beyond_the_limits_are_refused_not_clamped() {
        assert_eq!(Dur::parse("1000000000s").unwrap(), Dur::MAX);
        for text in ["1e12s", "2e9s"] {
            let e = Dur::parse(text).unwrap_err();
            assert_eq!(e, format!("must be at most 1000000000s, got {text}"));
        }
        assert!(Rate::parse("1e30bps").unwrap_err().contains("at most 10000Gbps"));
        assert!(Bytes::parse("1e20B").unwrap_err().contains("at most 1000000GB"));
        // Plain numbers too (seconds, bit/s, bytes).
        let d: Result<Dur, _> = serde_json::from_str("1e300");
        assert!(d.unwrap_err().to_string().contains("must be at most 1000000000s"));
        let r: Result<Rate, _> = serde_json::from_str("1e14");
        assert!(r.is_err());
    }

    #[test]
    fn display_round_trips() {
        for s in ["20ms", "60s", "1us", "7ns"] {
            assert_eq!(Dur::parse(s).unwrap().to_string(), s);
        }
        assert_eq!(Rate(100_000_000).to_string(), "100Mbps");
        assert_eq!(Bytes(1460).to_string(), "1460B");
    }

    #[test]
    fn tx_time_carries_the_remainder() {
        // 1500 B at 3 bps-multiples does not divide evenly; the carry keeps the sum exact.
        let r = Rate(7_000_000);
        let mut carry = 0;
        let total: u64 = (0..7).map(|_| r.tx_time(1500, &mut carry)).sum();
        assert_eq!(total, 7 * 1500 * 8 * NS_PER_SEC / 7_000_000);
        assert_eq!(Rate(100_000_000).tx_time(1460, &mut 0), 116_800);
    }
}
