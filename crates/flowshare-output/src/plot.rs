//! `plot.png`: what a run did, in panels a reader can trust.
//!
//! * **Delivered goodput** per flow: bytes delivered in order to the receiving application
//!   per interval (the flow series' `goodput_bps`), as means over bins of consecutive
//!   samples (the bin is stated), with the total of all flows and the bottleneck's capacity.
//!   Data a receiver held out of order reaches the application in one burst when the loss is
//!   repaired; such a burst above the capacity is moved back to the bins before it (the bytes
//!   are kept, and the title says so).
//! * **Sending rate** per flow (`send_rate_bps`, retransmissions included), labelled as such.
//! * **cwnd** of the TCP flows only, on an axis that shows the steady state: the y-limit is
//!   the 99th percentile of the values sampled after each flow's first slow start (its first
//!   finite `ssthresh`) plus 15 %; higher values (slow start, recovery) are drawn at the limit
//!   and the clipping is stated in the title.
//! * **Queue length** (packets) of the bottleneck queue(s), with their largest queueing delay.
//! * **RTT CDF** per flow group (smoothed RTT samples), and the **one-way delay CDF** per
//!   group when the results hold a `delays` table (`flow`, `bin_lo_s`, `bin_hi_s`, `count`).
//!
//! Up to [`MAX_INDIVIDUAL`] flows are drawn one line each; beyond that each flow group (the
//! scenario's `[[flows]]` entry name) is drawn as its mean and a min–max band, one legend
//! entry per group. [`build`] computes the panels as data and [`Panel::describe`] gives each
//! as JSON (title, axis labels, limits, series and point counts), so that tests check the plot
//! without looking at pixels; [`render`] draws them. Drawing is deterministic: the same
//! results give the same PNG bytes.

use crate::frame::{Col, Frame};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// Most flows drawn one line each; more are drawn per group.
pub const MAX_INDIVIDUAL: usize = 8;
/// Most bins a time panel's lines have.
pub const MAX_BINS: usize = 60;
/// Most points of a line drawn sample by sample (cwnd, queue length); longer series are
/// drawn as bin means.
pub const MAX_POINTS: usize = 4000;
/// Percentile of the cwnd after the first slow start that sets the cwnd axis.
pub const CWND_PERCENTILE: f64 = 99.0;
/// Image size, pixels.
pub const WIDTH: u32 = 1200;
const TIME_PANEL_H: u32 = 215;
const CDF_PANEL_H: u32 = 270;

static FONT: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");

const PALETTE: [(u8, u8, u8); 10] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
];

/// What the plot is drawn from.
#[derive(Clone, Debug, Default)]
pub struct PlotInput {
    /// The flows table (`flow`, `name`, `transport` are used when present).
    pub flows: Frame,
    /// The queues table (`queue`, `from`, `to`, `rate_bps`, `utilization`, `drops`, ...).
    pub queues: Frame,
    /// The per-flow time series.
    pub flow_series: Frame,
    /// The per-queue time series.
    pub queue_series: Frame,
    /// The one-way delay histogram, when the results hold one.
    pub delays: Option<Frame>,
    /// Simulated seconds (the time axis); 0 takes the last sample's time.
    pub duration_s: f64,
}

/// One line (or band) of a panel.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend text (empty: no legend entry).
    pub name: String,
    /// `"line"`, `"band"` (min–max, `points` the upper then the lower edge), `"reference"` or
    /// `"points"` (marks, not joined).
    pub kind: &'static str,
    /// Colour index into the palette; `None` is black.
    pub color: Option<usize>,
    /// Points in data coordinates.
    pub points: Vec<(f64, f64)>,
    /// Line width, pixels.
    pub width: u32,
}

/// One panel: its axes, its series and what the reader is told about them.
#[derive(Clone, Debug)]
pub struct Panel {
    /// Short identifier (`goodput`, `send_rate`, `cwnd`, `queue`, `rtt_cdf`, `delay_cdf`).
    pub id: &'static str,
    /// Title drawn above the panel.
    pub title: String,
    /// X axis label with unit.
    pub x_label: String,
    /// Y axis label with unit.
    pub y_label: String,
    /// X limits.
    pub x_lim: (f64, f64),
    /// Y limits.
    pub y_lim: (f64, f64),
    /// Series in drawing order.
    pub series: Vec<Series>,
    /// Facts stated in the title (clipping, bins).
    pub notes: Vec<String>,
    /// Whether a time panel (full width) or a CDF (half width, on the last row).
    pub time_axis: bool,
}

impl Panel {
    /// The panel as JSON: `id`, `title`, `x_label`, `y_label`, `x_lim`, `y_lim`, `series`
    /// (`name`, `kind`, `points`), `legend` (the legend's entries) and `notes`.
    pub fn describe(&self) -> Value {
        let series: Vec<Value> = self
            .series
            .iter()
            .map(|s| {
                let (min, max) =
                    s.points.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.1), b.max(p.1)));
                json!({"name": s.name, "kind": s.kind, "points": s.points.len(),
                       "y_min": finite(min), "y_max": finite(max)})
            })
            .collect();
        let legend: Vec<&str> = self.series.iter().filter(|s| !s.name.is_empty()).map(|s| s.name.as_str()).collect();
        json!({
            "id": self.id, "title": self.title, "x_label": self.x_label, "y_label": self.y_label,
            "x_lim": [self.x_lim.0, self.x_lim.1], "y_lim": [self.y_lim.0, self.y_lim.1],
            "series": series, "legend": legend, "notes": self.notes,
        })
    }
}

fn finite(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

/// A flow: its id, group and samples.
struct FlowData {
    id: i64,
    group: String,
    tcp: bool,
    t: Vec<f64>,
    goodput: Vec<f64>,
    rate: Vec<f64>,
    cwnd: Vec<f64>,
    ssthresh: Vec<f64>,
    srtt: Vec<f64>,
}

fn col_f64(frame: &Frame, name: &str) -> Option<Vec<f64>> {
    frame.get(name).map(Col::to_f64)
}

fn col_str(frame: &Frame, name: &str) -> Option<Vec<String>> {
    match frame.get(name) {
        Some(Col::Str(v)) => Some(v.clone()),
        _ => None,
    }
}

fn flows_of(input: &PlotInput) -> Vec<FlowData> {
    let s = &input.flow_series;
    let n = s.rows();
    let t = col_f64(s, "time_s").unwrap_or_else(|| vec![f64::NAN; n]);
    let ids = col_f64(s, "flow").unwrap_or_else(|| vec![0.0; n]);
    let get = |name: &str| col_f64(s, name).unwrap_or_else(|| vec![f64::NAN; n]);
    let (goodput, rate, cwnd, ssthresh, srtt) =
        (get("goodput_bps"), get("send_rate_bps"), get("cwnd"), get("ssthresh"), get("srtt_s"));
    let table_ids = col_f64(&input.flows, "flow").unwrap_or_default();
    let names = col_str(&input.flows, "name").unwrap_or_default();
    let transport = col_str(&input.flows, "transport").unwrap_or_default();
    let mut by_id: BTreeMap<i64, FlowData> = BTreeMap::new();
    for r in 0..n {
        let id = ids[r] as i64;
        let f = by_id.entry(id).or_insert_with(|| {
            let row = table_ids.iter().position(|&x| x as i64 == id);
            FlowData {
                id,
                group: row.and_then(|i| names.get(i).cloned()).unwrap_or_else(|| "flows".into()),
                tcp: row.and_then(|i| transport.get(i)).is_none_or(|t| t != "udp"),
                t: Vec::new(),
                goodput: Vec::new(),
                rate: Vec::new(),
                cwnd: Vec::new(),
                ssthresh: Vec::new(),
                srtt: Vec::new(),
            }
        });
        f.t.push(t[r]);
        f.goodput.push(goodput[r]);
        f.rate.push(rate[r]);
        f.cwnd.push(cwnd[r]);
        f.ssthresh.push(ssthresh[r]);
        f.srtt.push(srtt[r]);
    }
    let mut flows: Vec<FlowData> = by_id.into_values().collect();
    for f in &mut flows {
        // Without a transport column, a flow with no cwnd sample is not TCP.
        if transport.is_empty() && f.cwnd.iter().all(|c| c.is_nan()) {
            f.tcp = false;
        }
    }
    flows
}

/// The sample times of the run, sorted, and the bins over them.
struct Bins {
    /// Bin of each distinct sample time, by rank.
    times: Vec<f64>,
    per_bin: usize,
    count: usize,
}

impl Bins {
    fn new(flows: &[FlowData], max_bins: usize) -> Self {
        let mut times: Vec<f64> = flows.iter().flat_map(|f| f.t.iter().copied()).filter(|t| t.is_finite()).collect();
        times.sort_by(f64::total_cmp);
        times.dedup();
        let per_bin = times.len().div_ceil(max_bins).max(1);
        let count = times.len().div_ceil(per_bin);
        Bins { times, per_bin, count }
    }

    fn of(&self, t: f64) -> usize {
        let rank = self.times.partition_point(|&x| x < t);
        rank / self.per_bin
    }

    /// Number of sample times in bin `b`.
    fn size(&self, b: usize) -> usize {
        (self.times.len() - b * self.per_bin).min(self.per_bin)
    }

    /// The time drawn for bin `b`: its last sample time.
    fn time(&self, b: usize) -> f64 {
        self.times[b * self.per_bin + self.size(b) - 1]
    }

    /// Seconds a bin spans (from the sample spacing).
    fn span_s(&self) -> f64 {
        if self.times.len() < 2 {
            return 0.0;
        }
        (self.times[self.times.len() - 1] - self.times[0]) / (self.times.len() - 1) as f64 * self.per_bin as f64
    }

    /// Per bin: a rate as bytes over time (the sum of the values over the bin's sample times,
    /// missing samples being zero), or `None` where `mean_present` and no sample is present.
    fn reduce(&self, t: &[f64], v: &[f64], mean_present: bool) -> Vec<Option<f64>> {
        let mut sum = vec![0.0; self.count];
        let mut n = vec![0usize; self.count];
        for (&ti, &vi) in t.iter().zip(v) {
            if ti.is_finite() && vi.is_finite() {
                let b = self.of(ti);
                sum[b] += vi;
                n[b] += 1;
            }
        }
        (0..self.count)
            .map(|b| {
                if mean_present {
                    (n[b] > 0).then(|| sum[b] / n[b] as f64)
                } else {
                    Some(sum[b] / self.size(b) as f64)
                }
            })
            .collect()
    }
}

/// Cap every value of a rate series at `cap`, moving the excess of a bin back to the bins
/// before it (the last first), so that the sum is kept; whether anything moved. An excess left
/// at the first bin stays there.
fn spread_back(values: &mut [f64], cap: f64) -> bool {
    let mut carry = 0.0;
    let mut moved = false;
    for v in values.iter_mut().rev() {
        *v += carry;
        carry = 0.0;
        if *v > cap * (1.0 + 1e-9) {
            carry = *v - cap;
            *v = cap;
            moved = true;
        }
    }
    if let Some(first) = values.first_mut() {
        *first += carry;
    }
    moved
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (p / 100.0 * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn nice_max(x: f64) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return 1.0;
    }
    x * 1.05
}

/// The top of a time panel whose highest value is `x`: room above the lines for the legend of
/// `entries` lines (about 16 of the panel's 156 plotting pixels each), at most 3 times `x`.
fn with_legend_room(x: f64, entries: usize) -> f64 {
    let legend = (14.0 + 16.0 * entries as f64) / 156.0;
    nice_max(x) / (1.0 - legend - 0.04).max(1.0 / 3.0)
}

fn legend_entries(series: &[Series]) -> usize {
    series.iter().filter(|s| !s.name.is_empty()).count()
}

/// Groups in order of first appearance, with their flows' indices.
fn groups(flows: &[&FlowData]) -> Vec<(String, Vec<usize>)> {
    let mut out: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, f) in flows.iter().enumerate() {
        match out.iter_mut().find(|(g, _)| *g == f.group) {
            Some((_, v)) => v.push(i),
            None => out.push((f.group.clone(), vec![i])),
        }
    }
    out
}

/// Lines for per-flow values over bins: each flow (few flows) or each group's mean and
/// min–max band (many).
#[allow(clippy::needless_range_loop)] // a bin indexes every member flow's values
fn flow_lines(flows: &[&FlowData], per_flow: &[Vec<Option<f64>>], bins: &Bins, scale: f64, series: &mut Vec<Series>) {
    if flows.len() <= MAX_INDIVIDUAL {
        for (i, f) in flows.iter().enumerate() {
            let points =
                per_flow[i].iter().enumerate().filter_map(|(b, v)| v.map(|v| (bins.time(b), v * scale))).collect();
            series.push(Series {
                name: format!("{} {}", f.group, f.id),
                kind: "line",
                color: Some(i % PALETTE.len()),
                points,
                width: 2,
            });
        }
        return;
    }
    for (gi, (group, members)) in groups(flows).iter().enumerate() {
        let mut mean = Vec::new();
        let mut upper = Vec::new();
        let mut lower = Vec::new();
        for b in 0..bins.count {
            let vals: Vec<f64> = members.iter().filter_map(|&i| per_flow[i][b]).map(|v| v * scale).collect();
            if vals.is_empty() {
                continue;
            }
            let t = bins.time(b);
            mean.push((t, vals.iter().sum::<f64>() / vals.len() as f64));
            upper.push((t, vals.iter().copied().fold(f64::NEG_INFINITY, f64::max)));
            lower.push((t, vals.iter().copied().fold(f64::INFINITY, f64::min)));
        }
        lower.reverse();
        upper.extend(lower);
        let color = Some(gi % PALETTE.len());
        series.push(Series { name: String::new(), kind: "band", color, points: upper, width: 0 });
        series.push(Series {
            name: format!("{group} ({} flows): mean, band min-max", members.len()),
            kind: "line",
            color,
            points: mean,
            width: 2,
        });
    }
}

fn y_top(series: &[Series]) -> f64 {
    series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).filter(|y| y.is_finite()).fold(0.0, f64::max)
}

/// The bottleneck queues: those busiest (utilization at least half the highest), up to four,
/// busiest first.
fn bottlenecks(queues: &Frame) -> Vec<usize> {
    let n = queues.rows();
    let util = col_f64(queues, "utilization").unwrap_or_else(|| vec![0.0; n]);
    let drops = col_f64(queues, "drops").unwrap_or_else(|| vec![0.0; n]);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| util[b].total_cmp(&util[a]).then(drops[b].total_cmp(&drops[a])).then(a.cmp(&b)));
    let top = order.first().map_or(0.0, |&i| util[i]);
    order.into_iter().filter(|&i| util[i] >= 0.5 * top).take(4).collect()
}

/// Compute the panels.
pub fn build(input: &PlotInput) -> Vec<Panel> {
    let flows = flows_of(input);
    let duration = if input.duration_s > 0.0 {
        input.duration_s
    } else {
        flows.iter().flat_map(|f| f.t.iter().copied()).fold(0.0, f64::max).max(1e-9)
    };
    let x_lim = (0.0, duration);
    let mut panels = Vec::new();
    if flows.is_empty() {
        panels.push(Panel {
            id: "goodput",
            title: "no time series recorded (simulation.sample_interval = 0)".into(),
            x_label: "time (s)".into(),
            y_label: "goodput (Mbit/s)".into(),
            x_lim,
            y_lim: (0.0, 1.0),
            series: Vec::new(),
            notes: vec!["no time series".into()],
            time_axis: true,
        });
        return panels;
    }
    let bins = Bins::new(&flows, MAX_BINS);
    let all: Vec<&FlowData> = flows.iter().collect();
    let bin_note = if bins.per_bin > 1 {
        format!("means over bins of {} samples ({:.3} s)", bins.per_bin, bins.span_s())
    } else {
        "per sample interval".into()
    };
    let b_queues = bottlenecks(&input.queues);
    let rates = col_f64(&input.queues, "rate_bps").unwrap_or_default();
    let capacity = b_queues.first().and_then(|&q| rates.get(q).copied()).filter(|r| r.is_finite() && *r > 0.0);

    // Goodput and sending rate.
    for (id, what, y_label) in [
        ("goodput", "delivered goodput (in order to the application)", "goodput (Mbit/s)"),
        ("send_rate", "sending rate (retransmissions included)", "sending rate (Mbit/s)"),
    ] {
        let mut per_flow: Vec<Vec<Option<f64>>> = flows
            .iter()
            .map(|f| bins.reduce(&f.t, if id == "goodput" { &f.goodput } else { &f.rate }, false))
            .collect();
        let mut totals: Vec<f64> =
            (0..bins.count).map(|b| per_flow.iter().map(|v| v[b].unwrap_or(0.0)).sum::<f64>()).collect();
        let mut notes = vec![bin_note.clone()];
        let mut what = what.to_string();
        let fits = |v: &[f64], c: f64| v.iter().sum::<f64>() <= c * v.len() as f64;
        // Only where the bytes fit through the capacity over the run: with several bottlenecks
        // (a parking lot) the flows' total may exceed the busiest link's, and is left as it is.
        if let (true, Some(c)) = (id == "goodput" && fits(&totals, capacity.unwrap_or(0.0)), capacity) {
            // Data a receiver held out of order is delivered in one burst when the loss is
            // repaired; it crossed the bottleneck earlier, so the excess over the capacity is
            // moved back to the intervals before (bytes are kept, none exceeds the capacity).
            let mut spread = spread_back(&mut totals, c);
            for v in &mut per_flow {
                let mut vals: Vec<f64> = v.iter().map(|x| x.unwrap_or(0.0)).collect();
                if spread_back(&mut vals, c) {
                    spread = true;
                    for (x, y) in v.iter_mut().zip(vals) {
                        if x.is_some() || y > 0.0 {
                            *x = Some(y);
                        }
                    }
                }
            }
            if spread {
                let note = "bursts released by loss repair spread back to earlier bins, each at most the capacity";
                notes.push(note.into());
                what.push_str("; ");
                what.push_str(note);
            }
        }
        let mut series = Vec::new();
        flow_lines(&all, &per_flow, &bins, 1e-6, &mut series);
        if flows.len() > 1 {
            let total = (0..bins.count).map(|b| (bins.time(b), totals[b] * 1e-6)).collect();
            series.push(Series {
                name: format!("total of {} flows", flows.len()),
                kind: "line",
                color: None,
                points: total,
                width: 2,
            });
        }
        if let Some(c) = capacity {
            series.push(Series {
                name: format!("bottleneck capacity {}", mbps(c)),
                kind: "reference",
                color: Some(7),
                points: vec![(0.0, c * 1e-6), (duration, c * 1e-6)],
                width: 1,
            });
        }
        let top = with_legend_room(y_top(&series), legend_entries(&series));
        panels.push(Panel {
            id,
            title: format!("{what}, {bin_note}"),
            x_label: "time (s)".into(),
            y_label: y_label.into(),
            x_lim,
            y_lim: (0.0, top),
            series,
            notes,
            time_axis: true,
        });
    }

    // cwnd of the TCP flows.
    let tcp: Vec<&FlowData> = flows.iter().filter(|f| f.tcp).collect();
    if !tcp.is_empty() {
        let mut steady: Vec<f64> = Vec::new();
        let mut peak = 0.0f64;
        for f in &tcp {
            let first = f.ssthresh.iter().position(|s| s.is_finite());
            for (i, &c) in f.cwnd.iter().enumerate() {
                if c.is_finite() {
                    peak = peak.max(c);
                    if first.is_some_and(|k| i >= k) {
                        steady.push(c);
                    }
                }
            }
        }
        steady.sort_by(f64::total_cmp);
        let limit = if steady.is_empty() { nice_max(peak) } else { percentile(&steady, CWND_PERCENTILE) * 1.15 };
        let limit = if limit.is_finite() && limit > 0.0 { limit.min(nice_max(peak)) } else { 1.0 };
        let mut notes = Vec::new();
        let clipped = peak > limit;
        if clipped {
            notes.push(format!("clipped at {limit:.0} segments; peak {peak:.0} segments"));
        }
        let mut series = Vec::new();
        let samples = tcp.iter().map(|f| f.t.len()).max().unwrap_or(0);
        if tcp.len() <= MAX_INDIVIDUAL && samples <= MAX_POINTS {
            for f in &tcp {
                let points =
                    f.t.iter()
                        .zip(&f.cwnd)
                        .filter(|(t, c)| t.is_finite() && c.is_finite())
                        .map(|(&t, &c)| (t, c.min(limit)))
                        .collect();
                let color = flows.iter().position(|g| g.id == f.id).map(|k| k % PALETTE.len());
                series.push(Series { name: format!("{} {}", f.group, f.id), kind: "line", color, points, width: 1 });
            }
        } else {
            let per_flow: Vec<Vec<Option<f64>>> = tcp.iter().map(|f| bins.reduce(&f.t, &f.cwnd, true)).collect();
            flow_lines(&tcp, &per_flow, &bins, 1.0, &mut series);
            for s in &mut series {
                for p in &mut s.points {
                    p.1 = p.1.min(limit);
                }
            }
            notes.push(bin_note.clone());
        }
        let mut title = format!("cwnd of the {} TCP flow{}", tcp.len(), if tcp.len() == 1 { "" } else { "s" });
        if clipped {
            title.push_str(&format!(
                "; clipped at {limit:.0} segments (p{CWND_PERCENTILE:.0} after slow start + 15%), peak {peak:.0}"
            ));
        }
        panels.push(Panel {
            id: "cwnd",
            title,
            x_label: "time (s)".into(),
            y_label: "cwnd (segments)".into(),
            x_lim,
            y_lim: (0.0, limit),
            series,
            notes,
            time_axis: true,
        });
    }

    // Bottleneck queue(s).
    if !b_queues.is_empty() && input.queue_series.rows() > 0 {
        let qs = &input.queue_series;
        let n = qs.rows();
        let t = col_f64(qs, "time_s").unwrap_or_else(|| vec![f64::NAN; n]);
        let id = col_f64(qs, "queue").unwrap_or_else(|| vec![0.0; n]);
        let len = col_f64(qs, "len_pkts").unwrap_or_else(|| vec![f64::NAN; n]);
        let bytes = col_f64(qs, "len_bytes").unwrap_or_else(|| vec![f64::NAN; n]);
        let qid = col_f64(&input.queues, "queue").unwrap_or_default();
        let from = col_str(&input.queues, "from").unwrap_or_default();
        let to = col_str(&input.queues, "to").unwrap_or_default();
        let mut series = Vec::new();
        let mut delays = Vec::new();
        for (k, &q) in b_queues.iter().enumerate() {
            let want = qid.get(q).copied().unwrap_or(q as f64);
            let rows: Vec<usize> = (0..n).filter(|&r| id[r] == want).collect();
            let rate = rates.get(q).copied().unwrap_or(f64::NAN);
            let max_delay = rows.iter().map(|&r| bytes[r] * 8.0 / rate).filter(|d| d.is_finite()).fold(0.0, f64::max);
            let label = match (from.get(q), to.get(q)) {
                (Some(a), Some(b)) => format!("{a}->{b}"),
                _ => format!("queue {want}"),
            };
            delays.push(format!("{label} max queueing delay {:.1} ms", max_delay * 1e3));
            let points: Vec<(f64, f64)> = if rows.len() <= MAX_POINTS {
                rows.iter().map(|&r| (t[r], len[r])).collect()
            } else {
                let tq: Vec<f64> = rows.iter().map(|&r| t[r]).collect();
                let vq: Vec<f64> = rows.iter().map(|&r| len[r]).collect();
                let qb = Bins {
                    times: {
                        let mut x = tq.clone();
                        x.sort_by(f64::total_cmp);
                        x.dedup();
                        x
                    },
                    per_bin: 1,
                    count: 0,
                };
                let per = qb.times.len().div_ceil(MAX_POINTS).max(1);
                let qb = Bins { count: qb.times.len().div_ceil(per), per_bin: per, times: qb.times };
                qb.reduce(&tq, &vq, true).iter().enumerate().filter_map(|(b, v)| v.map(|v| (qb.time(b), v))).collect()
            };
            series.push(Series {
                name: format!("{label} ({})", mbps(rate)),
                kind: "line",
                color: Some(k % PALETTE.len()),
                points,
                width: 1,
            });
        }
        let top = with_legend_room(y_top(&series), legend_entries(&series));
        panels.push(Panel {
            id: "queue",
            title: format!("bottleneck queue length; {}", delays.join(", ")),
            x_label: "time (s)".into(),
            y_label: "queue (packets)".into(),
            x_lim,
            y_lim: (0.0, top),
            series,
            notes: delays,
            time_axis: true,
        });
    }

    // RTT CDF per group.
    let mut series = Vec::new();
    let mut x_max = 0.0f64;
    for (gi, (group, members)) in groups(&tcp).iter().enumerate() {
        let mut v: Vec<f64> = members
            .iter()
            .flat_map(|&i| tcp[i].srtt.iter().copied())
            .filter(|x| x.is_finite())
            .map(|x| x * 1e3)
            .collect();
        if v.is_empty() {
            continue;
        }
        v.sort_by(f64::total_cmp);
        x_max = x_max.max(v[v.len() - 1]);
        series.push(Series {
            name: format!("{group} ({} samples)", v.len()),
            kind: "line",
            color: Some(gi % PALETTE.len()),
            points: cdf_points(&v),
            width: 2,
        });
    }
    if !series.is_empty() {
        panels.push(Panel {
            id: "rtt_cdf",
            title: "RTT CDF per flow group (smoothed RTT samples)".into(),
            x_label: "RTT (ms)".into(),
            y_label: "fraction of samples".into(),
            x_lim: (0.0, nice_max(x_max)),
            y_lim: (0.0, 1.0),
            series,
            notes: Vec::new(),
            time_axis: false,
        });
    }

    // One-way delay CDF per group, from the delay histogram when the results hold one.
    if let Some(h) = &input.delays {
        if let Some(p) = delay_cdf(h, &flows) {
            panels.push(p);
        }
    }
    panels
}

/// The one-way delay CDF per flow group from a `delays` table (`flow`, `bin_lo_s`,
/// `bin_hi_s`, `count`); `None` when the table lacks them or is empty.
fn delay_cdf(h: &Frame, flows: &[FlowData]) -> Option<Panel> {
    let (flow, hi, count) = (col_f64(h, "flow")?, col_f64(h, "bin_hi_s")?, col_f64(h, "count")?);
    let mut per_group: Vec<(String, BTreeMap<u64, f64>)> = Vec::new();
    for r in 0..h.rows() {
        if !(hi[r].is_finite() && count[r] > 0.0) {
            continue;
        }
        let group =
            flows.iter().find(|f| f.id == flow[r] as i64).map_or_else(|| "flows".to_string(), |f| f.group.clone());
        let entry = match per_group.iter_mut().position(|(g, _)| *g == group) {
            Some(i) => &mut per_group[i].1,
            None => {
                per_group.push((group, BTreeMap::new()));
                &mut per_group.last_mut().expect("pushed").1
            }
        };
        *entry.entry(hi[r].to_bits()).or_insert(0.0) += count[r];
    }
    let mut series = Vec::new();
    let mut x_max = 0.0f64;
    for (gi, (group, hist)) in per_group.iter().enumerate() {
        let total: f64 = hist.values().sum();
        let mut acc = 0.0;
        let mut points = Vec::with_capacity(hist.len());
        let mut edges: Vec<(f64, f64)> = hist.iter().map(|(k, c)| (f64::from_bits(*k), *c)).collect();
        edges.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (edge, c) in edges {
            acc += c;
            points.push((edge * 1e3, acc / total));
            x_max = x_max.max(edge * 1e3);
        }
        series.push(Series {
            name: format!("{group} ({total:.0} packets)"),
            kind: "line",
            color: Some(gi % PALETTE.len()),
            points,
            width: 2,
        });
    }
    if series.is_empty() {
        return None;
    }
    Some(Panel {
        id: "delay_cdf",
        title: "one-way delay CDF per flow group (delivered packets)".into(),
        x_label: "one-way delay (ms)".into(),
        y_label: "fraction of packets".into(),
        x_lim: (0.0, nice_max(x_max)),
        y_lim: (0.0, 1.0),
        series,
        notes: Vec::new(),
        time_axis: false,
    })
}

/// Points of the empirical CDF of sorted `v`, at most 400.
fn cdf_points(v: &[f64]) -> Vec<(f64, f64)> {
    let n = v.len();
    let step = n.div_ceil(400).max(1);
    let mut pts: Vec<(f64, f64)> = (0..n).step_by(step).map(|i| (v[i], (i + 1) as f64 / n as f64)).collect();
    if pts.last().is_none_or(|p| p.1 < 1.0) {
        pts.push((v[n - 1], 1.0));
    }
    pts
}

fn mbps(bps: f64) -> String {
    if !bps.is_finite() {
        return "rate unknown".into();
    }
    if bps >= 1e9 {
        format!("{} Gbit/s", trim(bps / 1e9))
    } else if bps >= 1e6 {
        format!("{} Mbit/s", trim(bps / 1e6))
    } else {
        format!("{} kbit/s", trim(bps / 1e3))
    }
}

fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The panels as a JSON document: `{"width", "height", "panels": [...]}`.
pub fn describe(panels: &[Panel]) -> Value {
    let (w, h) = size(panels);
    json!({"width": w, "height": h, "panels": panels.iter().map(Panel::describe).collect::<Vec<_>>()})
}

fn size(panels: &[Panel]) -> (u32, u32) {
    let time = panels.iter().filter(|p| p.time_axis).count() as u32;
    let cdf = panels.iter().any(|p| !p.time_axis) as u32;
    (WIDTH, (time * TIME_PANEL_H + cdf * CDF_PANEL_H).max(TIME_PANEL_H))
}

fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let registered = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
        assert!(registered.is_ok(), "the embedded font is valid");
    });
}

fn color(c: Option<usize>) -> RGBColor {
    match c {
        Some(i) => {
            let (r, g, b) = PALETTE[i % PALETTE.len()];
            RGBColor(r, g, b)
        }
        None => BLACK,
    }
}

/// Draw `panels` into an RGB buffer of [`size`].
fn draw(panels: &[Panel], buf: &mut [u8], (w, h): (u32, u32)) -> Result<(), String> {
    register_font();
    // The buffer starts white (no fill needed).
    let root = BitMapBackend::with_buffer(buf, (w, h)).into_drawing_area();
    let time: Vec<&Panel> = panels.iter().filter(|p| p.time_axis).collect();
    let cdf: Vec<&Panel> = panels.iter().filter(|p| !p.time_axis).collect();
    let mut areas = Vec::new();
    let mut rest = root.clone();
    for _ in &time {
        let (top, bottom) = rest.split_vertically(TIME_PANEL_H);
        areas.push(top);
        rest = bottom;
    }
    if !cdf.is_empty() {
        let parts = rest.split_evenly((1, cdf.len().max(2)));
        for (p, area) in cdf.iter().zip(parts) {
            draw_panel(p, &area)?;
        }
    }
    for (p, area) in time.iter().zip(areas) {
        draw_panel(p, &area)?;
    }
    root.present().map_err(|e| e.to_string())?;
    Ok(())
}

fn draw_panel<DB: DrawingBackend>(p: &Panel, area: &DrawingArea<DB, plotters::coord::Shift>) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let x1 = if p.x_lim.1 > p.x_lim.0 { p.x_lim.1 } else { p.x_lim.0 + 1.0 };
    let y1 = if p.y_lim.1 > p.y_lim.0 { p.y_lim.1 } else { p.y_lim.0 + 1.0 };
    let mut chart = ChartBuilder::on(area)
        .caption(&p.title, ("sans-serif", 14))
        .margin(6)
        .margin_right(16)
        .x_label_area_size(34)
        .y_label_area_size(64)
        .build_cartesian_2d(p.x_lim.0..x1, p.y_lim.0..y1)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(&p.x_label)
        .y_desc(&p.y_label)
        .label_style(("sans-serif", 12))
        .axis_desc_style(("sans-serif", 13))
        .x_labels(12)
        .y_labels(6)
        .x_label_formatter(&|v| trim(*v))
        .y_label_formatter(&|v| trim(*v))
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()
        .map_err(err)?;
    let clamp = |(x, y): (f64, f64)| (x.clamp(p.x_lim.0, x1), y.clamp(p.y_lim.0, y1));
    let mut labelled = false;
    for s in &p.series {
        let c = color(s.color);
        let pts: Vec<(f64, f64)> =
            s.points.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite()).map(clamp).collect();
        match s.kind {
            "points" => {
                chart
                    .draw_series(pts.into_iter().map(|p| Circle::new(p, 1, c.filled())))
                    .map_err(err)?
                    .label(s.name.clone())
                    .legend(move |(x, y)| Circle::new((x + 9, y), 3, c.filled()));
                labelled = true;
            }
            "band" => {
                if pts.len() > 2 {
                    chart.draw_series(std::iter::once(Polygon::new(pts, c.mix(0.18).filled()))).map_err(err)?;
                }
            }
            _ => {
                let style = c.stroke_width(s.width.max(1));
                let drawn = chart.draw_series(LineSeries::new(pts, style)).map_err(err)?;
                if !s.name.is_empty() {
                    labelled = true;
                    drawn
                        .label(s.name.clone())
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
                }
            }
        }
    }
    if labelled {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .label_font(("sans-serif", 11))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(180, 180, 180))
            .draw()
            .map_err(err)?;
    }
    if p.series.is_empty() {
        let (w, h) = area.dim_in_pixel();
        let style = TextStyle::from(("sans-serif", 14)).pos(Pos::new(HPos::Center, VPos::Center));
        area.draw_text(&p.title, &style, (w as i32 / 2, h as i32 / 2)).map_err(err)?;
    }
    Ok(())
}

/// Draw `panels` and write them as a PNG to `path`.
pub fn write_png(panels: &[Panel], path: &Path) -> crate::Result<()> {
    let (w, h) = size(panels);
    let mut buf = vec![255u8; (w * h * 3) as usize];
    draw(panels, &mut buf, (w, h)).map_err(crate::OutputError::Data)?;
    encode_png(&buf, (w, h), path)
}

/// Encode an RGB buffer as a PNG file (no timestamp or other varying chunk).
pub fn encode_png(buf: &[u8], (w, h): (u32, u32), path: &Path) -> crate::Result<()> {
    let file = std::fs::File::create(path)?;
    let out = std::io::BufWriter::with_capacity(1 << 16, file);
    let mut enc = png::Encoder::new(out, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_compression(png::Compression::Fast);
    let mut writer = enc.write_header().map_err(png_err)?;
    writer.write_image_data(buf).map_err(png_err)?;
    writer.finish().map_err(png_err)?;
    Ok(())
}

fn png_err(e: png::EncodingError) -> crate::OutputError {
    match e {
        png::EncodingError::IoError(io) => crate::OutputError::Io(io),
        other => crate::OutputError::Data(other.to_string()),
    }
}

/// Compute, draw and write the plot of `input` to `path`; returns its description
/// ([`describe`]).
pub fn render(input: &PlotInput, path: &Path) -> crate::Result<Value> {
    let panels = build(input);
    write_png(&panels, path)?;
    Ok(describe(&panels))
}

/// Most marks of one kind drawn in a sequence-time panel; more are thinned evenly (stated).
pub const MAX_SEQ_POINTS: usize = 50_000;

/// Sequence-time panels, one per flow of `flows`, from the event trace (`time_ns`, `kind`,
/// `flow`, `packet`, `seq`, `retx` columns; `kind_names` and `packet_names` name their codes):
/// data segments sent (first transmissions and retransmissions apart), cumulative ACKs
/// received and data segments dropped, segment number against time.
pub fn build_seq(events: &Frame, kind_names: &[String], packet_names: &[String], flows: &[i64]) -> Vec<Panel> {
    let n = events.rows();
    let col = |name: &str| col_f64(events, name).unwrap_or_else(|| vec![f64::NAN; n]);
    let (t, kind, flow, packet, seq, retx) =
        (col("time_ns"), col("kind"), col("flow"), col("packet"), col("seq"), col("retx"));
    let code = |names: &[String], want: &str| names.iter().position(|k| k == want).map(|i| i as f64);
    let (send, ack, drop) = (code(kind_names, "send"), code(kind_names, "ack"), code(kind_names, "drop"));
    let data = code(packet_names, "data");
    let x_max = t.iter().copied().filter(|x| x.is_finite()).fold(0.0, f64::max) / 1e9;
    let mut panels = Vec::new();
    for &f in flows {
        let mut marks: [Vec<(f64, f64)>; 4] = Default::default();
        for r in 0..n {
            if flow[r] as i64 != f {
                continue;
            }
            let k = Some(kind[r]);
            let which = if k == send && Some(packet[r]) == data {
                if retx[r] > 0.0 {
                    1
                } else {
                    0
                }
            } else if k == ack {
                2
            } else if k == drop && Some(packet[r]) == data {
                3
            } else {
                continue;
            };
            marks[which].push((t[r] / 1e9, seq[r]));
        }
        let names = ["sent", "retransmitted", "cumulative ACK received", "dropped"];
        let colors = [0, 1, 2, 3];
        let mut notes = Vec::new();
        let mut series = Vec::new();
        let mut y_max = 0.0f64;
        for (i, m) in marks.iter().enumerate() {
            if m.is_empty() {
                continue;
            }
            y_max = m.iter().map(|p| p.1).fold(y_max, f64::max);
            let step = m.len().div_ceil(MAX_SEQ_POINTS).max(1);
            if step > 1 {
                notes.push(format!("{}: every {step}th of {} marks", names[i], m.len()));
            }
            series.push(Series {
                name: format!("{} ({})", names[i], m.len()),
                kind: "points",
                color: Some(colors[i]),
                points: m.iter().step_by(step).copied().collect(),
                width: 1,
            });
        }
        let mut title = format!("flow {f}: sequence numbers over time (event trace)");
        if series.is_empty() {
            title.push_str("; no traced data or ACK events for this flow");
        }
        if !notes.is_empty() {
            title.push_str(&format!("; {}", notes.join(", ")));
        }
        panels.push(Panel {
            id: "seq",
            title,
            x_label: "time (s)".into(),
            y_label: "segment number".into(),
            x_lim: (0.0, if x_max > 0.0 { x_max } else { 1.0 }),
            y_lim: (0.0, nice_max(y_max)),
            series,
            notes,
            time_axis: true,
        });
    }
    panels
}
