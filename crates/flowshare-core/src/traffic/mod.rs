//! Non-TCP traffic: packet sources carried by a UDP transport (no congestion control, no
//! acknowledgements) and the receiver that counts what arrives.
//!
//! A source is a generator of `(nominal send time, payload bytes)` in time order, one file per
//! kind: [`cbr`] (constant bit rate, with a rate schedule), [`poisson`], [`onoff`] (exponential
//! or Pareto on/off bursts) and [`vbr`] (MPEG-like frames). [`UdpSender`] adds the optional
//! per-packet jitter and the stop time, and puts the packets on the network; the simulation
//! gives it one event per send instant (a back-to-back burst is one event). Nothing here
//! allocates per packet. The models and their parameters are described in `docs/traffic.md`.

pub mod arrivals;
pub mod cbr;
pub mod http;
pub mod onoff;
pub mod poisson;
pub mod population;
pub mod schedule;
pub mod sessions;
pub mod vbr;

pub use crate::engine::Stream;
use crate::engine::{stream, uniform_delay};
use crate::packet::{Kind, Packet};
use crate::units::{Bytes, Dur, Rate, Time};
use crate::ConfigError;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

pub use onoff::Periods;
use schedule::{Point, RateProfile};

pub use crate::engine::uniform;

/// An exponential number with mean `mean`.
#[inline]
pub fn exponential(rng: &mut Stream, mean: f64) -> f64 {
    -mean * (1.0 - uniform(rng)).ln()
}

/// A Pareto number with mean `mean` and shape `shape` > 1 (scale `mean·(shape−1)/shape`).
#[inline]
pub fn pareto(rng: &mut Stream, mean: f64, shape: f64) -> f64 {
    let scale = mean * (shape - 1.0) / shape;
    scale / (1.0 - uniform(rng)).powf(1.0 / shape)
}

/// Which transport a flow group uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// TCP (the `tcp` table applies).
    #[default]
    Tcp,
    /// UDP carrying the packets of a `source`.
    Udp,
    /// TFRC, RFC 5348 (the `tfrc` table applies; see `docs/tfrc.md`).
    Tfrc,
}

impl Transport {
    /// The name used in scenarios and results.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Tcp => "tcp",
            Transport::Udp => "udp",
            Transport::Tfrc => "tfrc",
        }
    }

    /// True for the default, which normalized scenarios leave out.
    pub fn is_tcp(&self) -> bool {
        *self == Transport::Tcp
    }
}

/// Source models.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// Constant bit rate, with an optional rate schedule.
    Cbr,
    /// Exponential gaps at a mean rate, with an optional rate schedule.
    Poisson,
    /// Bursts at a peak rate separated by silences.
    OnOff,
    /// MPEG-like frames.
    Vbr,
}

impl SourceKind {
    /// The name used in scenarios and results.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Cbr => "cbr",
            SourceKind::Poisson => "poisson",
            SourceKind::OnOff => "on_off",
            SourceKind::Vbr => "vbr",
        }
    }
}

/// One point of a rate schedule: `["9s", "2.5Mbps"]` (a step: from 9 s on, 2.5 Mbps) or
/// `["20s", "10Mbps", "ramp"]` (the rate rises or falls linearly from the previous point to
/// reach 10 Mbps at 20 s).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedulePoint {
    /// Absolute simulation time.
    pub at: Dur,
    /// Rate from (step) or at (ramp) that time.
    pub rate: Rate,
    /// Linear from the previous point.
    pub ramp: bool,
}

impl Serialize for SchedulePoint {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(2 + usize::from(self.ramp)))?;
        seq.serialize_element(&self.at)?;
        seq.serialize_element(&self.rate)?;
        if self.ramp {
            seq.serialize_element("ramp")?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for SchedulePoint {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = SchedulePoint;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a schedule point [time, rate] or [time, rate, \"ramp\"], e.g. [\"9s\", \"2.5Mbps\"]")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SchedulePoint, A::Error> {
                let at: Dur = seq.next_element()?.ok_or_else(|| de::Error::invalid_length(0, &self))?;
                let rate: Rate = seq.next_element()?.ok_or_else(|| de::Error::invalid_length(1, &self))?;
                let ramp = match seq.next_element::<String>()?.as_deref() {
                    None | Some("step") => false,
                    Some("ramp") => true,
                    Some(other) => {
                        return Err(de::Error::custom(format!(
                            "unknown schedule point form `{other}`, expected `step` or `ramp`"
                        )))
                    }
                };
                if seq.next_element::<de::IgnoredAny>()?.is_some() {
                    return Err(de::Error::invalid_length(4, &self));
                }
                Ok(SchedulePoint { at, rate, ramp })
            }
        }
        d.deserialize_seq(V)
    }
}

/// A traffic source as written in a scenario (`[flows.source]`). Which fields apply depends on
/// `kind`; a flat table keeps every error's field path exact (see `docs/traffic.md`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceCfg {
    /// Which model.
    pub kind: SourceKind,
    /// Payload bytes per packet (the largest packet of a VBR frame).
    #[serde(default = "d_packet_size")]
    pub packet_size: Bytes,
    /// Header bytes added to every packet on the wire.
    #[serde(default = "d_header")]
    pub header: Bytes,
    /// CBR: the rate; Poisson: the mean rate; on/off: the rate during on periods; VBR: the
    /// mean rate. Payload bits per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// CBR and Poisson: rate changes at absolute times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Vec<SchedulePoint>>,
    /// On/off: mean on period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on: Option<Dur>,
    /// On/off: mean off period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off: Option<Dur>,
    /// On/off: distribution of the periods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub periods: Option<Periods>,
    /// On/off with Pareto periods: the shape (> 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<f64>,
    /// VBR: peak rate (largest frame times the frame rate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak: Option<Rate>,
    /// VBR: frames per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fps: Option<f64>,
    /// VBR: group-of-pictures pattern of I, P and B frames.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gop: Option<String>,
    /// VBR: nominal size of a P frame over that of a B frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pb_ratio: Option<f64>,
    /// VBR: relative variation of frame sizes (uniform within ± this fraction).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variation: Option<f64>,
    /// VBR: spread a frame's packets over the frame interval (`false`: back to back).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<bool>,
    /// Every kind: each packet leaves a random time uniform in [0, jitter] after its nominal
    /// time (ns-2's `overhead_`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub jitter: Dur,
}

fn is_zero(d: &Dur) -> bool {
    d.0 == 0
}
fn d_packet_size() -> Bytes {
    Bytes(1000)
}
fn d_header() -> Bytes {
    Bytes(28)
}

/// Defaults of the optional fields.
const D_ON: Dur = Dur::from_millis(500);
const D_OFF: Dur = Dur::from_millis(500);
const D_SHAPE: f64 = 1.5;
const D_FPS: f64 = 30.0;
const D_GOP: &str = "IBBPBBPBBPBB";
const D_PB_RATIO: f64 = 2.0;
const D_VARIATION: f64 = 0.2;

/// A validated source, ready to build for one flow.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceSpec {
    /// Model.
    pub kind: SourceKind,
    /// Payload bytes per packet.
    pub payload: u32,
    /// Header bytes per packet.
    pub header: u32,
    /// Base rate (bits per second) before the first schedule point.
    pub rate: u64,
    /// Schedule points, sorted.
    pub schedule: Vec<Point>,
    /// On/off parameters: periods, mean on, mean off (ns), shape.
    pub on_off: (Periods, Time, Time, f64),
    /// VBR parameters.
    pub vbr: Option<vbr::VbrParams>,
    /// Jitter bound, ns.
    pub jitter: Time,
}

impl SourceCfg {
    /// Check the fields of `kind` and resolve defaults; `path` is the table's field path.
    pub fn resolve(&self, path: &str) -> Result<SourceSpec, ConfigError> {
        let err = |field: &str, msg: String| Err(ConfigError::new(format!("{path}.{field}"), msg));
        let kind = self.kind;
        use SourceKind::*;
        let fields: [(&str, bool, &[SourceKind]); 11] = [
            ("schedule", self.schedule.is_some(), &[Cbr, Poisson]),
            ("on", self.on.is_some(), &[OnOff]),
            ("off", self.off.is_some(), &[OnOff]),
            ("periods", self.periods.is_some(), &[OnOff]),
            ("shape", self.shape.is_some(), &[OnOff]),
            ("peak", self.peak.is_some(), &[Vbr]),
            ("fps", self.fps.is_some(), &[Vbr]),
            ("gop", self.gop.is_some(), &[Vbr]),
            ("pb_ratio", self.pb_ratio.is_some(), &[Vbr]),
            ("variation", self.variation.is_some(), &[Vbr]),
            ("spread", self.spread.is_some(), &[Vbr]),
        ];
        for (name, present, kinds) in fields {
            if present && !kinds.contains(&kind) {
                let mut allowed = vec!["packet_size", "header", "rate"];
                allowed.extend(fields.iter().filter(|f| f.2.contains(&kind)).map(|f| f.0));
                allowed.push("jitter");
                return err(
                    name,
                    format!("not a field of kind \"{}\"; its fields are {}", kind.as_str(), allowed.join(", ")),
                );
            }
        }
        if self.packet_size.0 == 0 || self.packet_size.0 + self.header.0 > 65_535 {
            return err(
                "packet_size",
                format!("must be at least 1B, and with the header at most 65535B, got {}", self.packet_size),
            );
        }
        let schedule = self.schedule.as_deref().unwrap_or_default();
        let mut points = Vec::with_capacity(schedule.len());
        for (i, p) in schedule.iter().enumerate() {
            if let Some(prev) = schedule.get(i.wrapping_sub(1)) {
                if p.at <= prev.at {
                    return err(
                        &format!("schedule[{i}]"),
                        format!("{} is not after the previous point ({})", p.at, prev.at),
                    );
                }
            } else if p.ramp {
                return err(
                    "schedule[0]",
                    "the first point cannot be a ramp; add a step point where the ramp begins".into(),
                );
            }
            points.push(Point { at: p.at.0, rate_bps: p.rate.0, ramp: p.ramp });
        }
        let rate = match (self.rate, kind) {
            (Some(r), _) => r.0,
            (None, Cbr | Poisson) if !points.is_empty() => 0,
            (None, Cbr | Poisson) => return err("rate", "is required (or give a schedule)".into()),
            (None, OnOff) => return err("rate", "is required: the rate during on periods".into()),
            (None, Vbr) => return err("rate", "is required: the mean rate".into()),
        };
        if rate == 0 && points.iter().all(|p| p.rate_bps == 0) {
            return err("rate", "must be greater than 0bps".into());
        }
        let (on, off) = (self.on.unwrap_or(D_ON), self.off.unwrap_or(D_OFF));
        let shape = self.shape.unwrap_or(D_SHAPE);
        if kind == OnOff {
            if on.0 == 0 {
                return err("on", "must be greater than 0s".into());
            }
            if !(shape > 1.0 && shape.is_finite()) {
                return err("shape", format!("must be greater than 1 (a finite mean), got {shape}"));
            }
        }
        let vbr = if kind == Vbr {
            let fps = self.fps.unwrap_or(D_FPS);
            if !(fps > 0.0 && fps.is_finite()) {
                return err("fps", format!("must be a positive number, got {fps}"));
            }
            let gop_text = self.gop.as_deref().unwrap_or(D_GOP);
            let mut gop = Vec::with_capacity(gop_text.len());
            for c in gop_text.chars() {
                match c {
                    'I' => gop.push(0),
                    'P' => gop.push(1),
                    'B' => gop.push(2),
                    _ => return err("gop", format!("must be a string of I, P and B frames, got \"{gop_text}\"")),
                }
            }
            if !gop.contains(&0) {
                return err("gop", format!("needs at least one I frame, got \"{gop_text}\""));
            }
            let pb = self.pb_ratio.unwrap_or(D_PB_RATIO);
            if !(pb > 0.0 && pb.is_finite()) {
                return err("pb_ratio", format!("must be a positive number, got {pb}"));
            }
            let v = self.variation.unwrap_or(D_VARIATION);
            if !(0.0..1.0).contains(&v) {
                return err("variation", format!("must be at least 0 and below 1, got {v}"));
            }
            let Some(peak) = self.peak else {
                return err("peak", "is required: the rate of the largest frame".into());
            };
            if peak.0 < rate {
                return err("peak", format!("{peak} is below the mean rate {}", Rate(rate)));
            }
            let spread = self.spread.unwrap_or(true);
            match vbr::VbrParams::new(fps, gop, rate as f64, peak.0 as f64, pb, v, spread) {
                Ok(p) => Some(p),
                Err(msg) if msg.starts_with("needs") => return err("gop", msg),
                Err(msg) => return err("rate", msg),
            }
        } else {
            None
        };
        Ok(SourceSpec {
            kind,
            payload: self.packet_size.0 as u32,
            header: self.header.0 as u32,
            rate,
            schedule: points,
            on_off: (self.periods.unwrap_or_default(), on.0, off.0, shape),
            vbr,
            jitter: self.jitter.0,
        })
    }
}

/// A running source of one flow.
#[derive(Clone, Debug)]
pub enum Source {
    /// Constant bit rate.
    Cbr(cbr::Cbr),
    /// Poisson.
    Poisson(poisson::Poisson),
    /// On/off bursts.
    OnOff(onoff::OnOff),
    /// MPEG-like frames.
    Vbr(vbr::Vbr),
}

impl Source {
    /// The source of `spec` for a flow starting at `start`, drawing from `rng`.
    pub fn new(spec: &SourceSpec, start: Time, rng: Stream) -> Self {
        let profile = || RateProfile::new(spec.rate, &spec.schedule, start);
        match spec.kind {
            SourceKind::Cbr => Source::Cbr(cbr::Cbr::new(profile(), spec.payload)),
            SourceKind::Poisson => Source::Poisson(poisson::Poisson::new(profile(), spec.payload, rng)),
            SourceKind::OnOff => {
                let (periods, on, off, shape) = spec.on_off;
                Source::OnOff(onoff::OnOff::new(periods, spec.rate, on, off, shape, spec.payload, start, rng))
            }
            SourceKind::Vbr => {
                Source::Vbr(vbr::Vbr::new(spec.vbr.clone().expect("resolved"), spec.payload, start, rng))
            }
        }
    }

    /// The next packet: nominal send time (not decreasing) and payload bytes; `None` when the
    /// source will send nothing more.
    #[inline]
    pub fn next_packet(&mut self) -> Option<(Time, u32)> {
        match self {
            Source::Cbr(s) => s.next_packet(),
            Source::Poisson(s) => s.next_packet(),
            Source::OnOff(s) => s.next_packet(),
            Source::Vbr(s) => s.next_packet(),
        }
    }
}

/// Counters of a UDP sender.
#[derive(Clone, Copy, Debug, Default)]
pub struct UdpStats {
    /// Packets sent.
    pub packets_sent: u64,
    /// Payload bytes sent.
    pub bytes_sent: u64,
    /// When the flow started.
    pub started_at: Option<Time>,
}

/// The sending end of a UDP flow: a source, the jitter and the stop time.
#[derive(Clone, Debug)]
pub struct UdpSender {
    conn: u32,
    source: Source,
    header: u32,
    jitter: Time,
    jitter_rng: Stream,
    /// Next packet: actual send time and payload.
    pending: Option<(Time, u32)>,
    stop: Time,
    seq: u64,
    /// Counters.
    pub stats: UdpStats,
}

impl UdpSender {
    /// The sender of connection `conn` starting at `start` and sending nothing at or after
    /// `stop`. Its random streams are `<key>/source` and `<key>/jitter` of the run's `seed`.
    pub fn new(conn: u32, spec: &SourceSpec, start: Time, stop: Time, seed: u64, key: &str) -> Self {
        UdpSender {
            conn,
            source: Source::new(spec, start, stream(seed, &format!("{key}/source"))),
            header: spec.header,
            jitter: spec.jitter,
            jitter_rng: stream(seed, &format!("{key}/jitter")),
            pending: None,
            stop,
            seq: 0,
            stats: UdpStats::default(),
        }
    }

    /// Draw the next packet, jittered and kept in order after `after`.
    #[inline]
    fn advance(&mut self, after: Time) {
        self.pending = self.source.next_packet().and_then(|(t, size)| {
            let t = if self.jitter > 0 {
                (t + uniform_delay(&mut self.jitter_rng, self.jitter)).max(after)
            } else {
                t.max(after)
            };
            (t < self.stop).then_some((t, size))
        });
    }

    /// Start at `now`.
    pub fn start(&mut self, now: Time) {
        self.stats.started_at = Some(now);
        self.advance(now);
    }

    /// Send nothing at or after `now`.
    pub fn stop(&mut self, now: Time) {
        self.stop = self.stop.min(now);
        if self.pending.is_some_and(|(t, _)| t >= self.stop) {
            self.pending = None;
        }
    }

    /// When the next packet is due.
    #[inline]
    pub fn next_wake(&self) -> Option<Time> {
        self.pending.map(|p| p.0)
    }

    /// Send every packet due at `now` into `out`.
    #[inline]
    pub fn on_wake(&mut self, now: Time, out: &mut Vec<Packet>) {
        while let Some((t, size)) = self.pending {
            if t > now {
                return;
            }
            out.push(Packet::new(self.conn, Kind::Udp, self.seq, size + self.header, now));
            self.seq += 1;
            self.stats.packets_sent += 1;
            self.stats.bytes_sent += u64::from(size);
            self.advance(now);
        }
    }
}

/// The receiving end of a UDP flow: counts what arrives.
#[derive(Clone, Copy, Debug, Default)]
pub struct UdpSink {
    header: u32,
    /// Packets received.
    pub packets: u64,
    /// Payload bytes received.
    pub bytes: u64,
}

impl UdpSink {
    /// A sink for packets with `header` header bytes.
    pub fn new(header: u32) -> Self {
        UdpSink { header, ..Default::default() }
    }

    /// Packet `p` arrived at `now`.
    #[inline]
    pub fn on_packet(&mut self, now: Time, p: &Packet) {
        self.packets += 1;
        let _ = now;
        self.bytes += u64::from(p.size - self.header);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cbr_spec(jitter: Time) -> SourceSpec {
        let cfg: SourceCfg = serde_json::from_str(r#"{"kind": "cbr", "rate": "8Mbps"}"#).unwrap();
        SourceSpec { jitter, ..cfg.resolve("s").unwrap() }
    }

    fn send_times(spec: &SourceSpec, key: &str) -> Vec<Time> {
        let mut s = UdpSender::new(0, spec, 0, 1_000_000_000, 1, key);
        let mut out = Vec::new();
        s.start(0);
        let mut times = Vec::new();
        while let Some(now) = s.next_wake() {
            s.on_wake(now, &mut out);
            times.extend(out.drain(..).map(|p| p.ts));
        }
        times
    }

    #[test]
    fn jitter_is_bounded_keeps_order_and_the_count() {
        // 1000-byte packets at 8 Mbps: one per ms, 1000 in the run.
        let plain = send_times(&cbr_spec(0), "a");
        assert_eq!(plain.len(), 1000);
        let jittered = send_times(&cbr_spec(300_000), "a");
        assert!(jittered.len() >= 999 && jittered.len() <= 1000);
        let delays: Vec<Time> = plain.iter().zip(&jittered).map(|(a, b)| b - a).collect();
        assert!(delays.iter().all(|&d| d <= 300_000));
        let mean = delays.iter().sum::<Time>() as f64 / delays.len() as f64;
        assert!((mean - 150_000.0).abs() < 15_000.0, "mean jitter {mean}");
        assert!(delays.iter().any(|&d| d > 290_000) && delays.iter().any(|&d| d < 10_000));
        // Jitter larger than the gap: order is kept, the count is unchanged.
        let wide = send_times(&cbr_spec(5_000_000), "a");
        assert!(wide.windows(2).all(|w| w[0] <= w[1]));
        assert!(wide.len() >= 995, "{}", wide.len());
    }

    #[test]
    fn fields_of_another_kind_and_bad_values_are_named() {
        let e = |json: &str| {
            let cfg: SourceCfg = serde_json::from_str(json).unwrap();
            cfg.resolve("flows[0].source").unwrap_err().to_string()
        };
        assert_eq!(
            e(r#"{"kind": "cbr", "rate": "1Mbps", "peak": "2Mbps"}"#),
            "flows[0].source.peak: not a field of kind \"cbr\"; its fields are packet_size, header, rate, schedule, jitter"
        );
        assert_eq!(e(r#"{"kind": "cbr"}"#), "flows[0].source.rate: is required (or give a schedule)");
        assert_eq!(
            e(r#"{"kind": "on_off", "rate": "1Mbps", "periods": "pareto", "shape": 1.0}"#),
            "flows[0].source.shape: must be greater than 1 (a finite mean), got 1"
        );
        assert!(e(r#"{"kind": "cbr", "schedule": [["2s", "1Mbps"], ["1s", "2Mbps"]]}"#)
            .starts_with("flows[0].source.schedule[1]: 1s is not after"));
        assert!(e(r#"{"kind": "cbr", "schedule": [["2s", "1Mbps", "ramp"]]}"#)
            .starts_with("flows[0].source.schedule[0]: the first point cannot be a ramp"));
        assert!(e(r#"{"kind": "vbr", "rate": "4.5Mbps", "peak": "5Mbps"}"#)
            .starts_with("flows[0].source.rate: must be above"));
        assert!(e(r#"{"kind": "vbr", "rate": "4.5Mbps", "peak": "15Mbps", "gop": "IXB"}"#)
            .starts_with("flows[0].source.gop: must be a string of I, P and B"));
    }
}
