//! Quantities with explicit units: time, rate and size.
//!
//! Scenario files write `"20ms"`, `"100Mbps"` (or `"100 Mbit/s"`), `"1460B"`. A bare number
//! is refused, except zero: `rate = 20` would otherwise silently mean 20 bit/s and `delay = 20`
//! twenty seconds. Rates are bits per second; a byte rate (`"10MB/s"`) is refused with its
//! equivalent in bits. Internally time is an integer count of nanoseconds,
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

/// One family of quantities: what it is called, an example, the units listed in messages and
/// the parser of a unit's name (the scale to the base unit, or a hint why it is refused).
struct Family {
    what: &'static str,
    /// The unit a bare number is shown with in the suggestion ("20" → "20ms").
    example_unit: &'static str,
    /// The units as listed in messages.
    listed: &'static str,
    unit: fn(&str, f64) -> Result<f64, String>,
}

const TIME: Family =
    Family { what: "time", example_unit: "ms", listed: "ns, us (or µs), ms, s, min, h", unit: time_unit };
const RATE: Family = Family {
    what: "rate",
    example_unit: "Mbps",
    listed: "bps, kbps, Mbps, Gbps, Tbps, also bit/s forms such as \"10 Mbit/s\"",
    unit: rate_unit,
};
const SIZE: Family =
    Family { what: "size", example_unit: "B", listed: "B, KB (or kB), MB, GB, KiB, MiB, GiB", unit: size_unit };

/// Nanoseconds per unit of time.
fn time_unit(unit: &str, _: f64) -> Result<f64, String> {
    Ok(match unit {
        "ns" => 1.0,
        "us" | "µs" | "μs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "min" => 60e9,
        "h" => 3600e9,
        _ => return Err(String::new()),
    })
}

/// The decimal prefix of a rate's unit, either case (a rate in millibits is not a thing, so
/// `mbps` is megabits, as `tc` writes it).
fn rate_prefix(unit: &str) -> (f64, &str) {
    let scale = match unit.chars().next() {
        Some('k' | 'K') => 1e3,
        Some('m' | 'M') => 1e6,
        Some('g' | 'G') => 1e9,
        Some('t' | 'T') => 1e12,
        _ => return (1.0, unit),
    };
    (scale, &unit[1..])
}

/// Bits per second per unit of rate. Rates are bits per second: a byte rate (`MB/s`, `MBps`)
/// and ns-2's bare `Mb` are refused with the equivalent in bits.
fn rate_unit(unit: &str, value: f64) -> Result<f64, String> {
    let (scale, rest) = rate_prefix(unit);
    let prefix = &unit[..unit.len() - rest.len()];
    match rest {
        "bps" | "bit/s" | "Bit/s" | "bits/s" | "b/s" => Ok(scale),
        "Bps" | "B/s" | "byte/s" | "Byte/s" | "bytes/s" => {
            let p = prefix.to_uppercase().replace('K', "k");
            Err(format!(
                "\"{unit}\" is bytes per second, and rates are in bits per second: write \"{}{p}bps\"",
                fmt_number(value * 8.0)
            ))
        }
        "b" | "bit" | "Bit" | "bits" => {
            let p = prefix.to_uppercase().replace('K', "k");
            Err(format!("\"{unit}\" is an amount, not a rate: write \"{}{p}bps\"", fmt_number(value)))
        }
        _ => Err(String::new()),
    }
}

/// Bytes per unit of size.
fn size_unit(unit: &str, _: f64) -> Result<f64, String> {
    Ok(match unit {
        "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1048576.0,
        "GiB" => 1073741824.0,
        _ => return Err(String::new()),
    })
}

/// A number as a person would write it back (no trailing `.0`).
fn fmt_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else if (1e-6..1e15).contains(&v.abs()) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// The one-line refusal of a bare number where a unit is needed.
fn no_unit(family: &Family, number: &str) -> String {
    format!(
        "{number} has no unit; write a {} such as \"{number}{}\" (units: {})",
        family.what, family.example_unit, family.listed
    )
}

/// Parse `"<number><unit>"` or `"<number> <unit>"` in a family; returns the value in the base
/// unit. A bare number other than zero is refused: it would silently mean seconds, bit/s or
/// bytes.
fn parse_with_units(text: &str, family: &Family, example: &str) -> Result<f64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'))
        .unwrap_or(t.len());
    // "1e3ms" is fine, and no unit begins with 'e', so the split is unambiguous.
    let (num, unit) = t.split_at(split);
    let unit = unit.trim();
    let expected =
        || format!("expected a {} such as \"{example}\" (units: {}), got \"{text}\"", family.what, family.listed);
    let value: f64 = num.trim().parse().map_err(|_| expected())?;
    if unit.is_empty() {
        if value == 0.0 {
            return Ok(0.0);
        }
        return Err(no_unit(family, num.trim()));
    }
    let scale = (family.unit)(unit, value).map_err(|hint| if hint.is_empty() { expected() } else { hint })?;
    let v = value * scale;
    // An infinite product of finite parts is refused as too large by the caller.
    if value.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(expected())
    }
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
    ($ty:ident, $family:expr, $example:literal, $fmt_units:expr, $max:expr) => {
        impl $ty {
            /// The largest value a scenario may give.
            pub const MAX: $ty = $ty($max);

            /// Parse from text with a unit, e.g. the documented examples.
            pub fn parse(text: &str) -> Result<$ty, String> {
                let v = parse_with_units(text, &$family, $example)?;
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
                        write!(f, "a {} such as \"{}\"", $family.what, $example)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$ty, E> {
                        $ty::parse(v).map_err(E::custom)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$ty, E> {
                        if v == 0 {
                            return Ok($ty(0));
                        }
                        Err(E::custom(no_unit(&$family, &v.to_string())))
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$ty, E> {
                        if v < 0 {
                            return Err(E::custom(format!("expected a non-negative {}, got {}", $family.what, v)));
                        }
                        self.visit_u64(v as u64)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$ty, E> {
                        if !(v.is_finite() && v >= 0.0) {
                            return Err(E::custom(format!("expected a non-negative {}, got {}", $family.what, v)));
                        }
                        if v == 0.0 {
                            return Ok($ty(0));
                        }
                        Err(E::custom(no_unit(&$family, &fmt_number(v))))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

quantity_serde!(
    Dur,
    TIME,
    "20ms",
    &[("h", 3_600_000_000_000), ("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000), ("ns", 1)],
    MAX_TIME
);
quantity_serde!(
    Rate,
    RATE,
    "100Mbps",
    &[("Gbps", 1_000_000_000), ("Mbps", 1_000_000), ("Kbps", 1_000), ("bps", 1)],
    MAX_RATE_BPS
);
quantity_serde!(Bytes, SIZE, "1460B", &[("GB", 1_000_000_000), ("MB", 1_000_000), ("KB", 1_000), ("B", 1)], MAX_BYTES);

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
    fn rates_accept_the_usual_spellings_of_bits_per_second() {
        for text in [
            "10Mbps",
            "10mbps",
            "10 Mbps",
            "10Mbit/s",
            "10 Mbit/s",
            "10MBit/s",
            "10mbit/s",
            "10Mb/s",
            "10 Mb/s",
            "10Mbits/s",
            "0.01Gbps",
            "0.01 Gbit/s",
            "10000kbps",
            "10000Kbps",
            "10000 kbit/s",
            "10000kb/s",
            "10000000bps",
            "10000000 bit/s",
            "1e7bps",
            "0.00001Tbps",
            "0.00001Tbit/s",
        ] {
            assert_eq!(Rate::parse(text), Ok(Rate(10_000_000)), "{text}");
        }
        assert_eq!(Rate::parse("64 kbps"), Ok(Rate(64_000)));
    }

    #[test]
    fn byte_rates_and_amounts_are_refused_with_the_rate_in_bits() {
        assert_eq!(
            Rate::parse("10MB/s").unwrap_err(),
            "\"MB/s\" is bytes per second, and rates are in bits per second: write \"80Mbps\""
        );
        assert_eq!(
            Rate::parse("1.5 MBps").unwrap_err(),
            "\"MBps\" is bytes per second, and rates are in bits per second: write \"12Mbps\""
        );
        assert!(Rate::parse("100kB/s").unwrap_err().ends_with("write \"800kbps\""));
        assert_eq!(Rate::parse("10Mb").unwrap_err(), "\"Mb\" is an amount, not a rate: write \"10Mbps\"");
    }

    #[test]
    fn times_accept_micro_signs_and_spaces() {
        for text in ["250us", "250µs", "250μs", "250 us", "0.25ms", "0.25 ms", "250000ns"] {
            assert_eq!(Dur::parse(text), Ok(Dur(250_000)), "{text}");
        }
        assert_eq!(Dur::parse("1h"), Ok(Dur(3_600 * NS_PER_SEC)));
    }

    #[test]
    fn bare_numbers_are_refused_naming_the_units_but_zero_is_zero() {
        assert_eq!(
            Rate::parse("20").unwrap_err(),
            "20 has no unit; write a rate such as \"20Mbps\" (units: bps, kbps, Mbps, Gbps, Tbps, also bit/s forms such as \"10 Mbit/s\")"
        );
        assert_eq!(
            Dur::parse("20").unwrap_err(),
            "20 has no unit; write a time such as \"20ms\" (units: ns, us (or µs), ms, s, min, h)"
        );
        assert!(Bytes::parse("1460").unwrap_err().starts_with("1460 has no unit; write a size such as \"1460B\""));
        // As JSON or TOML numbers, not only as strings.
        let r = serde_json::from_str::<Rate>("20").unwrap_err().to_string();
        assert!(r.starts_with("20 has no unit; write a rate such as \"20Mbps\""), "{r}");
        let d = serde_json::from_str::<Dur>("0.5").unwrap_err().to_string();
        assert!(d.starts_with("0.5 has no unit; write a time such as \"0.5ms\""), "{d}");
        let b = serde_json::from_str::<Bytes>("1460").unwrap_err().to_string();
        assert!(b.starts_with("1460 has no unit; write a size such as \"1460B\""), "{b}");
        let huge = serde_json::from_str::<Dur>("1e300").unwrap_err().to_string();
        assert!(huge.starts_with("1e300 has no unit; write a time such as \"1e300ms\""), "{huge}");
        let n = serde_json::from_str::<Dur>("-3").unwrap_err().to_string();
        assert!(n.starts_with("expected a non-negative time, got -3"), "{n}");
        // Zero is zero in every unit.
        assert_eq!(serde_json::from_str::<Dur>("0").unwrap(), Dur(0));
        assert_eq!(serde_json::from_str::<Rate>("0.0").unwrap(), Rate(0));
        assert_eq!(Bytes::parse("0"), Ok(Bytes(0)));
    }

    #[test]
    fn rejects_unknown_units_with_the_allowed_list() {
        let e = Dur::parse("20 sec").unwrap_err();
        assert_eq!(e, "expected a time such as \"20ms\" (units: ns, us (or µs), ms, s, min, h), got \"20 sec\"");
        assert!(Rate::parse("10 ms").unwrap_err().starts_with("expected a rate such as \"100Mbps\""));
        assert!(Bytes::parse("-3B").is_err());
        assert!(Bytes::parse("3pkt").unwrap_err().contains("units: B, KB"));
        assert!(Rate::parse("fast").is_err());
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
        let d: Result<Dur, _> = serde_json::from_str("\"1e300s\"");
        assert!(d.unwrap_err().to_string().contains("must be at most 1000000000s"));
        let r: Result<Rate, _> = serde_json::from_str("\"100Tbps\"");
        assert!(r.is_err());
    }

    #[test]
    fn what_is_printed_parses_back() {
        for s in ["20ms", "60s", "1us", "7ns", "2h"] {
            assert_eq!(Dur::parse(s).unwrap().to_string(), s);
        }
        for r in [Rate(100_000_000), Rate(64_000), Rate(1), Rate(2_500_000_000), Rate::MAX, Rate(0)] {
            assert_eq!(Rate::parse(&r.to_string()), Ok(r));
            // The command line's reports write "Mbit/s" with a space.
            let mbit = format!("{} Mbit/s", r.0 as f64 / 1e6);
            assert_eq!(Rate::parse(&mbit), Ok(r), "{mbit}");
        }
        for b in [Bytes(1460), Bytes(64_000), Bytes(0), Bytes::MAX] {
            assert_eq!(Bytes::parse(&b.to_string()), Ok(b));
        }
        for d in [Dur(0), Dur(1), Dur(1_500_000), Dur::MAX] {
            assert_eq!(Dur::parse(&d.to_string()), Ok(d));
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
