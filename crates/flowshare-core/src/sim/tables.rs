//! What a run reports: the sampled time series and the per-flow and per-queue tables.

use super::Simulation;
use crate::agent::Agent;
use crate::net::link::QueueStats;
use crate::net::LinkId;
use crate::packet::{Dir, Kind};
use crate::results::{Column, Table};
use crate::stats::{DelayStats, SIZE_BUCKETS};
use crate::tcp::SenderStats;
use crate::units::{secs, Time};

/// Rows of the completion-time summary per flow group: all sizes, then each size bucket.
pub(super) const FCT_ROWS: usize = 1 + SIZE_BUCKETS.len();

/// The name of row `k` of a group's completion-time summary.
fn bucket_name(k: usize) -> String {
    match k {
        0 => "all",
        1 => "<10kB",
        2 => "10kB-100kB",
        3 => "100kB-1MB",
        4 => "1MB-10MB",
        _ => ">=10MB",
    }
    .to_string()
}

/// What the counters held when the warm-up ended: the steady-state figures are differences
/// from these.
#[derive(Debug, Default)]
pub(super) struct Warm {
    /// Per listed flow.
    flows: Vec<WarmFlow>,
    /// Per link direction, its statistics at the end of the warm-up.
    queues: Vec<QueueStats>,
    /// Per link direction, the integral of RED's average up to the end of the warm-up
    /// (packet-nanoseconds; 0 without RED).
    red: Vec<f64>,
}

/// A listed flow's counters at the end of the warm-up.
#[derive(Clone, Copy, Debug, Default)]
struct WarmFlow {
    /// Payload bytes delivered.
    delivered: u64,
    /// Data packets sent (TCP: segments and SYNs; UDP: datagrams).
    sent: u64,
    /// Data packets dropped or lost.
    lost: u64,
    rtt_n: u64,
    rtt_sum: f64,
    cwnd_integral: f64,
    /// TFRC: the time integral of the loss event rate its receiver reported.
    p_integral: f64,
}

/// Sampled time series, column by column.
#[derive(Debug, Default)]
pub(super) struct Series {
    pub(super) f_time: Vec<f64>,
    pub(super) f_flow: Vec<i64>,
    pub(super) f_cwnd: Vec<f64>,
    pub(super) f_ssthresh: Vec<f64>,
    pub(super) f_srtt: Vec<f64>,
    pub(super) f_rttvar: Vec<f64>,
    /// The retransmission timeout the timer would be armed with now (backoff applied).
    pub(super) f_rto: Vec<f64>,
    pub(super) f_backoff: Vec<i64>,
    pub(super) f_send_rate: Vec<f64>,
    pub(super) f_goodput: Vec<f64>,
    /// One column per algorithm metric (`CongestionControl::metrics`), in order of first
    /// appearance; NaN in rows whose algorithm does not report it.
    pub(super) f_algo: Vec<(&'static str, Vec<f64>)>,
    pub(super) q_time: Vec<f64>,
    pub(super) q_queue: Vec<i64>,
    pub(super) q_len: Vec<i64>,
    pub(super) q_bytes: Vec<i64>,
    /// RED's average (packets); NaN for other queues.
    pub(super) q_red_avg: Vec<f64>,
}

/// Set metric `name` of flow-series row `row` (1-based: the row just pushed) to `value`,
/// adding its column, NaN in earlier rows, the first time it is seen.
fn push_metric(columns: &mut Vec<(&'static str, Vec<f64>)>, row: usize, name: &'static str, value: f64) {
    let col = match columns.iter().position(|(n, _)| *n == name) {
        Some(k) => &mut columns[k].1,
        None => {
            columns.push((name, Vec::new()));
            &mut columns.last_mut().expect("just pushed").1
        }
    };
    col.resize(row - 1, f64::NAN);
    col.push(value);
}

impl Simulation {
    /// The time series sampled since the last call: (per-flow, per-queue) tables. Drained
    /// while a run goes on, they keep the core's memory bounded however long the run; what is
    /// left is in the run's results. Algorithm metric columns keep their order from one call
    /// to the next (a column first seen later is appended).
    pub fn take_series(&mut self) -> (Table, Table) {
        let algo_names: Vec<(&'static str, Vec<f64>)> =
            self.series.f_algo.iter().map(|(name, _)| (*name, Vec::new())).collect();
        let series = std::mem::replace(&mut self.series, Series { f_algo: algo_names, ..Series::default() });
        let mut flow_series = Table::default();
        flow_series.push("time_s", Column::F64(series.f_time));
        flow_series.push("flow", Column::I64(series.f_flow));
        flow_series.push("cwnd", Column::F64(series.f_cwnd));
        flow_series.push("ssthresh", Column::F64(series.f_ssthresh));
        flow_series.push("srtt_s", Column::F64(series.f_srtt));
        flow_series.push("rttvar_s", Column::F64(series.f_rttvar));
        flow_series.push("rto_s", Column::F64(series.f_rto));
        flow_series.push("backoff", Column::I64(series.f_backoff));
        flow_series.push("send_rate_bps", Column::F64(series.f_send_rate));
        flow_series.push("goodput_bps", Column::F64(series.f_goodput));
        for (name, col) in series.f_algo {
            flow_series.push(name, Column::F64(col));
        }
        let mut queue_series = Table::default();
        queue_series.push("time_s", Column::F64(series.q_time));
        queue_series.push("queue", Column::I64(series.q_queue));
        queue_series.push("len_pkts", Column::I64(series.q_len));
        queue_series.push("len_bytes", Column::I64(series.q_bytes));
        if self.any_red {
            queue_series.push("red_avg_pkts", Column::F64(series.q_red_avg));
        }
        (flow_series, queue_series)
    }

    /// The traced events up to the time reached, sorted by time, since the last call; `None`
    /// when the run traces no events. Like [`Simulation::take_series`], for bounded memory.
    pub fn take_events(&mut self) -> Option<Table> {
        let now = self.now;
        self.trace.as_mut().and_then(|t| t.take_events(now))
    }

    pub(super) fn sample(&mut self) {
        let t = secs(self.now);
        let interval = secs(self.sample_interval);
        // The listed flows, then the transfers running now (time series only for connections
        // that are active: memory follows the open connections).
        let mut rows: Vec<(usize, i64)> = (0..self.n_static).map(|i| (i, i as i64)).collect();
        for (slot, tr) in self.transfers.iter().enumerate().skip(self.n_static) {
            if let Some(tr) = tr.filter(|t| !t.done()) {
                rows.push((slot, i64::from(tr.id)));
            }
        }
        let s = &mut self.series;
        for (i, flow) in rows {
            let c = &mut self.counters[i];
            s.f_time.push(t);
            s.f_flow.push(flow);
            // An ABR source's allowed cell rate, from the transmitter that paces its cells.
            let abr = self.specs.get(i).and_then(|spec| spec.abr);
            if let Some(acr) = abr.and_then(|l| self.net.links[l as usize].scheduled()?.abr.as_deref().map(|a| a.acr()))
            {
                push_metric(&mut s.f_algo, s.f_time.len(), "acr_cells_s", acr);
            }
            let (src, dst) = (&self.agents[2 * i], &self.agents[2 * i + 1]);
            let (Agent::TcpSender(snd), Agent::TcpSink(sink)) = (src, dst) else {
                // No window, no RTT: NaN, as for an algorithm metric a flow does not have.
                let sent = src.udp_source().map(|u| u.stats.bytes_sent);
                let sent = sent.or(src.tfrc_sender().map(|t| t.stats.bytes_sent)).unwrap_or(0);
                let delivered = dst.udp_sink().map(|k| k.bytes);
                let delivered = delivered.or(dst.tfrc_receiver().map(|k| k.bytes)).unwrap_or(0);
                s.f_cwnd.push(f64::NAN);
                s.f_ssthresh.push(f64::NAN);
                s.f_srtt.push(src.tfrc_sender().and_then(|t| t.rtt()).unwrap_or(f64::NAN));
                s.f_rttvar.push(f64::NAN);
                s.f_rto.push(f64::NAN);
                s.f_backoff.push(0);
                s.f_send_rate.push((sent - c.last_sent_bytes) as f64 * 8.0 / interval);
                s.f_goodput.push((delivered - c.last_delivered_bytes) as f64 * 8.0 / interval);
                c.last_sent_bytes = sent;
                c.last_delivered_bytes = delivered;
                continue;
            };
            let st = snd.cc_state(&self.cc);
            let sent = snd.stats.bytes_sent;
            let delivered = sink.bytes_delivered;
            s.f_cwnd.push(snd.reported_cwnd(&st));
            s.f_ssthresh.push(st.ssthresh);
            s.f_srtt.push(if st.rtt.samples > 0 { st.rtt.srtt / 1e9 } else { f64::NAN });
            s.f_rttvar.push(if st.rtt.samples > 0 { st.rtt.rttvar / 1e9 } else { f64::NAN });
            s.f_rto.push(secs(st.rtt.timeout(snd.backoff())));
            s.f_backoff.push(i64::from(snd.backoff()));
            s.f_send_rate.push((sent - c.last_sent_bytes) as f64 * 8.0 / interval);
            s.f_goodput.push((delivered - c.last_delivered_bytes) as f64 * 8.0 / interval);
            c.last_sent_bytes = sent;
            c.last_delivered_bytes = delivered;
            let Some(m) = snd.member() else { continue };
            let (row, columns) = (s.f_time.len(), &mut s.f_algo);
            self.cc.metrics(m, &mut |name, value| push_metric(columns, row, name, value));
        }
        let rows = s.f_time.len();
        for (_, col) in &mut s.f_algo {
            col.resize(rows, f64::NAN);
        }
        for (q, l) in self.net.links.iter_mut().enumerate() {
            let (pkts, bytes) = l.len_at(self.now);
            s.q_time.push(t);
            s.q_queue.push(q as i64);
            s.q_len.push(i64::from(pkts));
            s.q_bytes.push(bytes as i64);
            if self.any_red {
                s.q_red_avg.push(l.red().map_or(f64::NAN, |r| r.avg_pkts()));
            }
        }
    }

    /// The warm-up ends now: note what the counters hold, bring the window integrals up to
    /// now, and start the extremes (RTT, window) and the delay statistics afresh.
    pub(super) fn end_warmup(&mut self) {
        let now = self.now;
        let mut flows = Vec::with_capacity(self.n_static);
        for i in 0..self.n_static {
            let c = &self.counters[i];
            let mut w = WarmFlow { lost: c.data_dropped + c.data_link_lost, ..WarmFlow::default() };
            let (src, dst) = self.agents.split_at_mut(2 * i + 1);
            match &mut src[2 * i] {
                Agent::TcpSender(s) => {
                    s.finish(now, &self.cc);
                    let cwnd = s.reported_cwnd(&s.cc_state(&self.cc));
                    let st = &mut s.stats;
                    w.sent = st.packets_sent;
                    w.rtt_n = st.rtt_n;
                    w.rtt_sum = st.rtt_sum;
                    w.cwnd_integral = st.cwnd_integral;
                    st.rtt_min = u64::MAX;
                    st.rtt_max = 0;
                    if st.started_at.is_some() && st.completed_at.is_none() {
                        st.cwnd_max = cwnd;
                    }
                }
                Agent::UdpSource(u) => w.sent = u.stats.packets_sent,
                Agent::TfrcSender(t) => {
                    let st = &mut t.stats;
                    w.sent = st.packets_sent;
                    w.rtt_n = st.rtt_n;
                    w.rtt_sum = st.rtt_sum;
                    st.rtt_min = u64::MAX;
                    st.rtt_max = 0;
                }
                _ => {}
            }
            w.delivered = match &dst[0] {
                Agent::TcpSink(k) => k.bytes_delivered,
                Agent::UdpSink(k) => k.bytes,
                Agent::TfrcReceiver(k) => {
                    w.p_integral = k.reported_p_integral(now);
                    k.bytes
                }
                _ => 0,
            };
            flows.push(w);
        }
        self.delays.iter_mut().for_each(|d| *d = DelayStats::default());
        let queues = self.net.links.iter_mut().map(|l| l.stats_at(now).0).collect();
        let red = self.net.links.iter().map(|l| l.red().map_or(0.0, |r| r.mean_avg_pkts(now) * now as f64)).collect();
        self.warm = Some(Box::new(Warm { flows, queues, red }));
    }

    /// Listed flow `i`'s counters at the end of the warm-up (zeros without one).
    fn warm_flow(&self, i: usize) -> WarmFlow {
        self.warm.as_ref().map_or_else(WarmFlow::default, |w| w.flows[i])
    }

    /// The delay histograms of the listed flows: one row per non-empty bin.
    pub(super) fn delay_table(&self) -> Table {
        let (mut flow, mut lo, mut hi, mut count) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (i, d) in self.delays.iter().enumerate() {
            for (a, b, n) in d.hist.bins() {
                flow.push(i as i64);
                lo.push(secs(a));
                hi.push(secs(b));
                count.push(n as i64);
            }
        }
        let mut t = Table::default();
        t.push("flow", Column::I64(flow));
        t.push("bin_lo_s", Column::F64(lo));
        t.push("bin_hi_s", Column::F64(hi));
        t.push("count", Column::I64(count));
        t
    }

    /// Count a finite transfer of flow group `group` and `size` bytes that started at `start`
    /// and completed in `fct` (`None`: still running at the end), unless it started during the
    /// warm-up.
    pub(super) fn count_fct(&mut self, group: u32, size: u64, start: Time, fct: Option<Time>) {
        if start < self.warmup {
            return;
        }
        let base = group as usize * FCT_ROWS;
        for k in [0, 1 + crate::stats::size_bucket(size)] {
            let f = &mut self.fct[base + k];
            match fct {
                Some(d) => f.record(d),
                None => f.unfinished += 1,
            }
        }
    }

    /// The completion-time summary: per flow group with finite transfers, a row over all sizes
    /// and one per size bucket that saw a transfer. Counts the listed finite flows first.
    pub(super) fn fct_table(&mut self) -> Table {
        for i in 0..self.n_static {
            let spec = &self.specs[i];
            let (Some(size), Some(s)) = (spec.size, self.agents[2 * i].tcp_sender()) else { continue };
            if s.stats.started_at.is_none() {
                continue;
            }
            let (group, start) = (spec.group, spec.start);
            let fct = s.stats.completed_at.map(|c| c - start);
            self.count_fct(group, size, start, fct);
        }
        let mut t = Table::default();
        let (mut group, mut name, mut bucket, mut lo, mut hi) = (vec![], vec![], vec![], vec![], vec![]);
        let (mut n, mut unfinished) = (vec![], vec![]);
        let mut fig: [Vec<f64>; 6] = Default::default();
        for (g, rows) in self.fct.chunks(FCT_ROWS).enumerate() {
            for (k, f) in rows.iter().enumerate() {
                if f.n + f.unfinished == 0 {
                    continue;
                }
                let (a, b) = if k == 0 { (0, u64::MAX) } else { SIZE_BUCKETS[k - 1] };
                group.push(g as i64);
                name.push(self.group_names[g].clone());
                bucket.push(bucket_name(k));
                lo.push(a as i64);
                hi.push(if b == u64::MAX { -1 } else { b as i64 });
                n.push(f.n as i64);
                unfinished.push(f.unfinished as i64);
                let s = |v: f64| v / 1e9;
                let p = |q: f64| s(f.hist.percentile(q, f.min, f.max));
                let some = f.n > 0;
                for (col, v) in fig.iter_mut().zip([
                    s(f.mean()),
                    if some { s(f.min as f64) } else { f64::NAN },
                    p(50.0),
                    p(90.0),
                    p(99.0),
                    if some { s(f.max as f64) } else { f64::NAN },
                ]) {
                    col.push(v);
                }
            }
        }
        t.push("group", Column::I64(group));
        t.push("name", Column::Str(name));
        t.push("size_bucket", Column::Str(bucket));
        t.push("size_min_bytes", Column::I64(lo));
        t.push("size_max_bytes", Column::I64(hi));
        t.push("transfers", Column::I64(n));
        t.push("unfinished", Column::I64(unfinished));
        let [mean, min, p50, p90, p99, max] = fig;
        t.push("fct_mean_s", Column::F64(mean));
        t.push("fct_min_s", Column::F64(min));
        t.push("fct_p50_s", Column::F64(p50));
        t.push("fct_p90_s", Column::F64(p90));
        t.push("fct_p99_s", Column::F64(p99));
        t.push("fct_max_s", Column::F64(max));
        t
    }

    /// Data packets of connection `c` still inside the network.
    pub(super) fn data_in_network(&self) -> Vec<u64> {
        let mut n = vec![0u64; self.n_static];
        for (c, j) in self.jitter.iter().enumerate().take(self.n_static) {
            n[c] += j.as_ref().map_or(0, |j| j.held.len() as u64);
        }
        for l in &self.net.links {
            for id in l.pipe_ids().chain(l.waiting_ids()) {
                let p = self.arena.get(id);
                // A cell stands for part of a frame, which the circuits count.
                if p.dir == Dir::Forward && (p.conn as usize) < self.n_static && p.kind != Kind::Cell {
                    n[p.conn as usize] += 1;
                }
            }
        }
        for (c, k) in n.iter_mut().enumerate() {
            *k += self.circuits.in_transit(c as u32, Dir::Forward) as u64;
        }
        n
    }

    pub(super) fn flow_table(&self) -> Table {
        let n = self.specs.len();
        let in_net = self.data_in_network();
        let names = |f: &dyn Fn(usize) -> String| Column::Str((0..n).map(f).collect());
        let floats = |f: &dyn Fn(usize) -> f64| Column::F64((0..n).map(f).collect());
        let ints = |f: &dyn Fn(usize) -> i64| Column::I64((0..n).map(f).collect());
        // UDP flows have no TCP sender: their TCP counters read as a sender's that never ran.
        let never = SenderStats { rtt_min: u64::MAX, ..SenderStats::default() };
        let sender = |i: usize| self.agents[2 * i].tcp_sender();
        // TFRC senders keep the counters they share with TCP (packets, bytes, RTT samples)
        // in the same struct.
        let tfrc = |i: usize| self.agents[2 * i].tfrc_sender();
        let tfrc_rx = |i: usize| self.agents[2 * i + 1].tfrc_receiver();
        let st = |i: usize| sender(i).map(|s| &s.stats).or(tfrc(i).map(|s| &s.stats)).unwrap_or(&never);
        let nan_or = |o: Option<Time>| o.map_or(f64::NAN, secs);
        let active_end = |i: usize| {
            let spec = &self.specs[i];
            st(i).completed_at.unwrap_or_else(|| spec.stop.unwrap_or(self.end).min(self.end))
        };
        // UDP flows: sender and sink counters in place of TCP's; TCP-only values are NaN
        // (floats), 0 (counts) or "" (text).
        let source = |i: usize| self.agents[2 * i].udp_source();
        let udp_sink = |i: usize| self.agents[2 * i + 1].udp_sink();
        let tcp_sink = |i: usize| self.agents[2 * i + 1].tcp_sink();
        let tcp = |i: usize| sender(i).is_some();
        let bytes_sent = |i: usize| source(i).map_or(st(i).bytes_sent, |u| u.stats.bytes_sent);
        let delivered = |i: usize| match (tcp_sink(i), udp_sink(i), tfrc_rx(i)) {
            (Some(k), _, _) => k.bytes_delivered,
            (_, Some(k), _) => k.bytes,
            (_, _, Some(k)) => k.bytes,
            _ => 0,
        };
        let started = |i: usize| source(i).map_or(st(i).started_at, |u| u.stats.started_at).is_some();
        let warm = |i: usize| self.warm_flow(i);
        // The steady state of flow `i`: from its start or the end of the warm-up, whichever is
        // later, to the end of its activity.
        let from = |i: usize| self.specs[i].start.max(self.warmup);
        let packets_sent = |i: usize| source(i).map_or(st(i).packets_sent, |u| u.stats.packets_sent);
        let rtt_n = |i: usize| st(i).rtt_n - warm(i).rtt_n;
        let tcp_s = |i: usize, v: &str| if tcp(i) { v.to_string() } else { String::new() };
        let mut t = Table::default();
        t.push("flow", ints(&|i| i as i64));
        t.push("name", names(&|i| self.specs[i].name.clone()));
        t.push("src", names(&|i| self.net.nodes[self.specs[i].src as usize].clone()));
        t.push("dst", names(&|i| self.net.nodes[self.specs[i].dst as usize].clone()));
        t.push("transport", names(&|i| self.specs[i].transport().to_string()));
        t.push("source", names(&|i| self.specs[i].source.as_ref().map_or("", |s| s.kind.as_str()).to_string()));
        t.push("cc", names(&|i| tcp_s(i, self.specs[i].cc.as_str())));
        t.push("recovery", names(&|i| tcp_s(i, self.specs[i].tcp.recovery.as_str())));
        t.push("start_s", floats(&|i| secs(self.specs[i].start)));
        t.push("stop_s", floats(&|i| nan_or(self.specs[i].stop)));
        t.push("size_bytes", ints(&|i| self.specs[i].size.map_or(-1, |b| b as i64)));
        t.push("bytes_sent", ints(&|i| bytes_sent(i) as i64));
        t.push("bytes_delivered", ints(&|i| delivered(i) as i64));
        t.push("packets_sent", ints(&|i| packets_sent(i) as i64));
        t.push("packets_received", ints(&|i| self.counters[i].data_received as i64));
        t.push("retransmits", ints(&|i| st(i).retransmits as i64));
        t.push("fast_retransmits", ints(&|i| st(i).fast_retransmits as i64));
        t.push("timeouts", ints(&|i| st(i).timeouts as i64));
        t.push("misrx_detected", ints(&|i| st(i).misrx_detected as i64));
        t.push("drops", ints(&|i| self.counters[i].data_dropped as i64));
        t.push("ack_drops", ints(&|i| self.counters[i].acks_dropped as i64));
        t.push("link_losses", ints(&|i| self.counters[i].data_link_lost as i64));
        t.push("ack_link_losses", ints(&|i| self.counters[i].acks_link_lost as i64));
        if !self.changes.is_empty() {
            t.push("route_drops", ints(&|i| self.counters[i].data_route_dropped as i64));
            t.push("ack_route_drops", ints(&|i| self.counters[i].acks_route_dropped as i64));
        }
        t.push("in_network_end", ints(&|i| in_net[i] as i64));
        t.push("ecn_marks", ints(&|i| tcp_sink(i).map_or(0, |k| k.ce_received) as i64));
        t.push("ecn_reductions", ints(&|i| st(i).ecn_reductions as i64));
        t.push(
            "goodput_bps",
            floats(&|i| {
                let (start, stop) = (from(i), active_end(i));
                if stop > start && started(i) {
                    (delivered(i) - warm(i).delivered) as f64 * 8.0 / secs(stop - start)
                } else {
                    f64::NAN
                }
            }),
        );
        t.push("steady_bytes_delivered", ints(&|i| (delivered(i) - warm(i).delivered) as i64));
        t.push(
            "loss_rate",
            floats(&|i| {
                let c = &self.counters[i];
                let sent = packets_sent(i) - warm(i).sent;
                let lost = c.data_dropped + c.data_link_lost - warm(i).lost;
                if sent > 0 {
                    lost as f64 / sent as f64
                } else {
                    f64::NAN
                }
            }),
        );
        t.push(
            "rtt_mean_s",
            floats(&|i| {
                if rtt_n(i) > 0 {
                    (st(i).rtt_sum - warm(i).rtt_sum) / rtt_n(i) as f64 / 1e9
                } else {
                    f64::NAN
                }
            }),
        );
        let d = |i: usize| &self.delays[i];
        let owd = |i: usize, f: &dyn Fn(&DelayStats) -> f64| if d(i).n > 0 { f(d(i)) / 1e9 } else { f64::NAN };
        t.push("delay_mean_s", floats(&|i| owd(i, &|k| k.mean())));
        t.push("delay_max_s", floats(&|i| owd(i, &|k| k.max as f64)));
        t.push("delay_min_s", floats(&|i| owd(i, &|k| k.min as f64)));
        t.push("delay_p50_s", floats(&|i| owd(i, &|k| k.percentile(50.0))));
        t.push("delay_p95_s", floats(&|i| owd(i, &|k| k.percentile(95.0))));
        t.push("delay_p99_s", floats(&|i| owd(i, &|k| k.percentile(99.0))));
        t.push("jitter_s", floats(&|i| owd(i, &|k| k.jitter())));
        t.push("ipdv_mean_s", floats(&|i| owd(i, &|k| k.ipdv_mean())));
        t.push("delay_packets", ints(&|i| d(i).n as i64));
        t.push("rtt_min_s", floats(&|i| if rtt_n(i) > 0 { secs(st(i).rtt_min) } else { f64::NAN }));
        t.push("rtt_max_s", floats(&|i| if rtt_n(i) > 0 { secs(st(i).rtt_max) } else { f64::NAN }));
        t.push("rtt_samples", ints(&|i| rtt_n(i) as i64));
        t.push(
            "cwnd_mean",
            floats(&|i| {
                let (start, stop) = (from(i), active_end(i));
                if stop > start && st(i).started_at.is_some() && tcp(i) {
                    (st(i).cwnd_integral - warm(i).cwnd_integral) / (stop - start) as f64
                } else {
                    f64::NAN
                }
            }),
        );
        t.push("cwnd_max", floats(&|i| if st(i).started_at.is_some() && tcp(i) { st(i).cwnd_max } else { f64::NAN }));
        t.push("cwnd_final", floats(&|i| sender(i).map_or(f64::NAN, |s| s.reported_cwnd(&s.cc_state(&self.cc)))));
        let rtt_final = |i: usize| sender(i).map(|s| s.cc_state(&self.cc).rtt).filter(|r| r.samples > 0);
        t.push(
            "srtt_final_s",
            floats(&|i| match tfrc(i) {
                Some(s) => s.rtt().unwrap_or(f64::NAN),
                None => rtt_final(i).map_or(f64::NAN, |r| r.srtt / 1e9),
            }),
        );
        t.push("rttvar_final_s", floats(&|i| rtt_final(i).map_or(f64::NAN, |r| r.rttvar / 1e9)));
        t.push("rto_final_s", floats(&|i| sender(i).map_or(f64::NAN, |s| secs(s.cc_state(&self.cc).rtt.rto))));
        t.push("backoff_max", ints(&|i| i64::from(st(i).backoff_max)));
        t.push(
            "completion_time_s",
            floats(&|i| st(i).completed_at.map_or(f64::NAN, |c| secs(c - self.specs[i].start))),
        );
        t.push("setup_time_s", floats(&|i| st(i).established_at.map_or(f64::NAN, |c| secs(c - self.specs[i].start))));
        // TFRC: the receiver's loss event rate and the sender's allowed rate at the end.
        t.push("loss_event_rate", floats(&|i| tfrc_rx(i).map_or(f64::NAN, |k| k.loss_event_rate())));
        // Its time average over the steady state, as a trace of the reports would give it.
        t.push(
            "loss_event_rate_mean",
            floats(&|i| match tfrc_rx(i) {
                Some(k) if self.end > from(i) => {
                    (k.reported_p_integral(self.end) - warm(i).p_integral) / secs(self.end - from(i))
                }
                _ => f64::NAN,
            }),
        );
        // TFRC: the receiver's loss events; TCP: the sender's window reductions.
        let events = |i: usize| match tfrc_rx(i) {
            Some(k) => k.history().loss_events() as i64,
            None => sender(i).map_or(0, |s| s.stats.loss_events as i64),
        };
        t.push("loss_events", ints(&events));
        t.push("tfrc_rate_final_bps", floats(&|i| tfrc(i).map_or(f64::NAN, |s| s.rate() * 8.0)));
        // The packets lost per loss event the sender last heard (MulTFRC's `j`).
        t.push("tfrc_j_final", floats(&|i| tfrc(i).map_or(f64::NAN, |s| s.j())));
        t
    }

    pub(super) fn queue_table(&mut self) -> Table {
        let end = self.end;
        // Means and rates are over the steady state: from the end of the warm-up.
        let duration = (end - self.warmup) as f64;
        let none = QueueStats::default();
        let warm = |q: usize| self.warm.as_ref().map_or(&none, |w| &w.queues[q]);
        let mut rows = Vec::new();
        for l in self.net.links.iter_mut() {
            let len_end = l.len_at(end).0;
            rows.push((l.stats_at(end), len_end));
        }
        let net = &self.net;
        let n = net.links.len();
        let names = |f: &dyn Fn(usize) -> String| Column::Str((0..n).map(f).collect());
        let floats = |f: &dyn Fn(usize) -> f64| Column::F64((0..n).map(f).collect());
        let ints = |f: &dyn Fn(usize) -> i64| Column::I64((0..n).map(f).collect());
        let mut t = Table::default();
        t.push("queue", ints(&|q| q as i64));
        t.push("link", names(&|q| net.link_names[net.link_of[q] as usize].clone()));
        t.push("from", names(&|q| net.nodes[net.links[q].from as usize].clone()));
        t.push("to", names(&|q| net.to_name(q as LinkId).to_string()));
        t.push("rate_bps", floats(&|q| net.links[q].params.rate.0 as f64));
        t.push("delay_s", floats(&|q| secs(net.links[q].params.delay)));
        t.push(
            "limit",
            ints(&|q| match net.links[q].limit() {
                crate::net::Limit::Packets(p) => i64::from(p),
                crate::net::Limit::Bytes(b) => b as i64,
            }),
        );
        t.push(
            "limit_unit",
            names(&|q| match net.links[q].limit() {
                crate::net::Limit::Packets(_) => "packets".into(),
                crate::net::Limit::Bytes(_) => "bytes".into(),
            }),
        );
        t.push("arrivals", ints(&|q| rows[q].0 .0.arrivals as i64));
        t.push("departures", ints(&|q| rows[q].0 .1 as i64));
        t.push("drops", ints(&|q| rows[q].0 .0.drops as i64));
        t.push("arrival_bytes", ints(&|q| rows[q].0 .0.arrival_bytes as i64));
        t.push("drop_bytes", ints(&|q| rows[q].0 .0.drop_bytes as i64));
        t.push("early_drops", ints(&|q| rows[q].0 .0.early_drops as i64));
        t.push("ecn_marks", ints(&|q| rows[q].0 .0.marks as i64));
        t.push(
            "forced_drops",
            ints(&|q| (rows[q].0 .0.drops - rows[q].0 .0.early_drops - rows[q].0 .0.down_drops) as i64),
        );
        t.push("link_losses", ints(&|q| rows[q].0 .0.link_losses as i64));
        t.push("loss_model", names(&|q| net.links[q].loss.as_ref().map_or("", |m| m.name()).to_string()));
        let s = |q: usize| &rows[q].0 .0;
        t.push("mean_len_pkts", floats(&|q| (s(q).len_integral - warm(q).len_integral) as f64 / duration));
        t.push("max_len_pkts", ints(&|q| i64::from(s(q).max_len)));
        t.push("mean_len_bytes", floats(&|q| (s(q).bytes_integral - warm(q).bytes_integral) as f64 / duration));
        t.push("utilization", floats(&|q| (s(q).busy - warm(q).busy) as f64 / duration));
        t.push(
            "drop_rate",
            floats(&|q| {
                let arrivals = s(q).arrivals - warm(q).arrivals;
                if arrivals > 0 {
                    (s(q).drops - warm(q).drops) as f64 / arrivals as f64
                } else {
                    f64::NAN
                }
            }),
        );
        t.push(
            "mean_sojourn_s",
            floats(&|q| {
                let accepted = (s(q).arrivals - s(q).drops) - (warm(q).arrivals - warm(q).drops);
                if accepted > 0 {
                    (s(q).len_integral - warm(q).len_integral) as f64 / accepted as f64 / 1e9
                } else {
                    f64::NAN
                }
            }),
        );
        t.push("len_end_pkts", ints(&|q| i64::from(rows[q].1)));
        if !self.changes.is_empty() {
            t.push("down_drops", ints(&|q| rows[q].0 .0.down_drops as i64));
            t.push("down_losses", ints(&|q| rows[q].0 .0.down_losses as i64));
        }
        let red = |q: usize| net.links[q].red();
        if self.any_red {
            let warmup = self.warmup;
            let red_avg = |q: usize, r: &crate::net::red::Red| match &self.warm {
                None => r.mean_avg_pkts(end),
                Some(w) => (r.mean_avg_pkts(end) * end as f64 - w.red[q]) / (end - warmup) as f64,
            };
            t.push("red_avg_pkts", floats(&|q| red(q).map_or(f64::NAN, |r| red_avg(q, r))));
            t.push("red_max_p", floats(&|q| red(q).map_or(f64::NAN, |r| r.max_p())));
        }
        t
    }
}
