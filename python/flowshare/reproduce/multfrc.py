"""Reproduction of the model validation of Damjanović (2010), and the list of its MulTFRC targets.

D. Damjanović, *Parallel TCP Data Transfers: A Practical Model and its Application*, PhD
thesis, University of Innsbruck, 2010. Chapter 3 validates two throughput models of n parallel
TCP flows against ns-2 simulations: Model A (per-flow loss event rate, §3.2, Algorithm 1) and
Model B (cumulative-flow loss event rate and the flows hit per event j, §3.3, Algorithm 2). This
module simulates the three setups of §3.2.4 / §3.3.4 with flowshare's dumbbell:

- **S1**: Bernoulli loss on a 1 Gbit/s bottleneck (30 ms or 100 ms), access 10 Gbit/s / 1 ms,
  RED (automatic parameters, gentle) or DropTail, n = 5, 10, 50, 100, 460 s, first 15 s cut;
- **S2**: no artificial loss, bottleneck 30 ms with 1-256 Mbit/s, access 1 Gbit/s / 1 ms,
  DropTail (queue = BDP) or RED, 600 s, first 50 s cut;
- **S3**: S1's topology with a two-state burst loss (a burst starts after a delivered packet
  with probability 0.001 and drops a fixed number of packets), 600 s, first 50 s cut;

measures the loss measures and the throughput of each run, evaluates both models with and
without time-outs at the measured inputs and compares the errors with the numbers in the
thesis's text (§3.2.4, §3.3.4). The MulTFRC simulations of chapter 4 are in
:mod:`flowshare.reproduce.multfrc_protocol`; both run as one sweep.

Choices the thesis leaves open are the named fields of :class:`Options`; ``docs/reproduce.md``
gives the reasons.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._core import ConfigError
from ..analysis import loss_events
from ..models import parallel
from . import multfrc_protocol as protocol
from .report import Section, figure_html, table_html
from .targets import Target

__all__ = ["KEY", "OPTIONS", "SCALES", "Options", "Plan", "Point", "measure", "plan", "points",
           "scenario", "targets"]

KEY = "multfrc"
TITLE = ("Damjanović (2010): throughput models of n parallel TCP flows (Model A, Model B) "
         "and MulTFRC, against simulation")
SCALES = ("full", "quick", "tiny")
"""``full`` is the thesis's scale; ``quick`` a reduced set for a few minutes on 2 cores;
``tiny`` three short runs, for tests."""

PAYLOAD_B = 1000
HEADER_B = 40


@dataclass(frozen=True)
class Options:
    """Resolutions of what the thesis leaves open (``docs/reproduce.md``, "Choices").

    Each field's allowed values are in :data:`CHOICES` (``b`` is any number > 0).
    """

    rtt_timing: str = "ns2"
    """Which RTT samples feed the TCP flows' retransmission timer: ``ns2``, ns-2's one timed
    segment per round trip in 10 ms ticks (the thesis's simulator; it gives the RTT/RTO of
    0.32 and 0.84 the thesis reports); or ``every_ack``."""
    recovery: str = "reno"
    """TCP loss recovery of the simulated flows: the thesis does not name the ns-2 agent of its
    model validation; its models describe Reno (§2.1, §3.2.1)."""
    per_flow_loss: str = "recovery_events"
    """Model A's p: ``recovery_events``, fast recoveries plus time-outs over packets sent (the
    thesis traced ns-2's fast-recovery and time-out events, §3.2.4); or ``trace``, each flow's
    drops grouped into loss events within one RTT (the definition of §3.1)."""
    cumulative_rtt: str = "mean"
    """The RTT that groups losses into cumulative loss events (§3.3.4, "t ≤ t_le1 + RTT"):
    ``mean``, the mean measured RTT of the run's flows; or ``min``, the smallest sample."""
    model_rto: str = "measured"
    """T of the models: ``measured``, the mean retransmission timeout of the flows after the
    warm-up, without back-off; or ``rtt4``, 4 × RTT (TFRC's rule)."""
    t_rto: str = "4r"
    """The t_RTO of the equation of MulTFRC, TFRC and CP in chapter 4: ``4r``, 4·RTT (one of
    the two rules of the thesis's §2.4, and the one its results agree with best,
    ``docs/reproduce.md``); ``tcp``, TCP's estimator with the competing flows' 200 ms minimum
    and 10 ms tick (the other rule, RFC 2988, which draft-welzl-multfrc-01 recommends); or
    ``ns2``, ns-2's tick-based ``tzero_``."""
    rate_rule: str = "rfc5348"
    """How reports set the rate of those senders (``docs/tfrc.md``): ``rfc5348``, as
    draft-welzl-multfrc-01 defines MulTFRC (changes to RFC 5348); or ``ns2``, the additive
    increase of ns-2's TFRC agent, n packets per RTT for MulTFRC(n)."""
    b: float = 1.0
    """Packets per ACK: no delayed ACKs, as ns-2's one-way TCP sink."""
    model_b_j: str = "old"
    """The j of Model B's main curve and of its error targets: ``old`` = p_r/p_e capped at n
    (the thesis's default), ``measured`` or ``improved`` (eq. 3.52)."""
    error_denominator: str = "measured"
    """Errors are (model − measured) / ``measured`` or / ``model`` (the thesis does not state
    the denominator)."""
    red_limit: str = "max(bdp, 50)"
    """Buffer of a RED bottleneck: ``max(bdp, 50)``, the BDP but at least ns-2's default of 50
    packets; or ``bdp``."""
    red_mean_pktsize: str = "data_packet"
    """The packet unit of the chapter-4 RED bottleneck (S8-S10 and the comparators), whose
    automatic weight w_q = 1 − exp(−1/C) counts C in packets of this size per second
    (``multfrc:A27``): ``data_packet``, the 1040-byte data packet; or ``ns2_default``, ns-2's
    ``mean_pktsize_`` of 500 bytes, which halves w_q."""
    send_jitter: str = "bottleneck_packet"
    """ns-2's ``overhead_``, which the thesis set against phase effects (§3.2.4) without giving
    its value: ``bottleneck_packet``, each segment leaves a random time in [0, one packet's
    transmission time at the bottleneck] after the previous one; or ``none``."""

    def __post_init__(self) -> None:
        for name, allowed in CHOICES.items():
            value = getattr(self, name)
            if value not in allowed:
                raise ConfigError(
                    f"options.{name}: expected one of {', '.join(allowed)}, got {value!r}"
                )
        if not (isinstance(self.b, int | float) and not isinstance(self.b, bool) and self.b > 0):
            raise ConfigError(f"options.b: expected a number > 0, got {self.b!r}")


CHOICES: dict[str, tuple[str, ...]] = {
    "recovery": ("reno", "newreno", "sack"),
    "rtt_timing": ("ns2", "every_ack"),
    "per_flow_loss": ("recovery_events", "trace"),
    "cumulative_rtt": ("mean", "min"),
    "model_rto": ("measured", "rtt4"),
    "t_rto": ("4r", "tcp", "ns2"),
    "rate_rule": ("rfc5348", "ns2"),
    "model_b_j": ("old", "measured", "improved"),
    "error_denominator": ("measured", "model"),
    "red_limit": ("max(bdp, 50)", "bdp"),
    "send_jitter": ("bottleneck_packet", "none"),
    "red_mean_pktsize": tuple(protocol.RED_MEAN_PKTSIZE),
}
"""The values each field of :class:`Options` allows."""


OPTIONS = Options()


@dataclass(frozen=True)
class Point:
    """One simulated condition."""

    setup: str            # "S1", "S2", "S3"
    queue: str            # "red" or "droptail"
    delay_ms: int         # bottleneck one-way delay
    capacity_mbps: float  # bottleneck rate
    n: int
    loss: float = 0.0     # S1: Bernoulli loss probability
    burst: int = 0        # S3: packets lost per burst
    prefix: bool = False  # the same run stopped at the end of the warm-up

    @property
    def label(self) -> str:
        what = {"S1": f"loss {self.loss:g}", "S2": f"{self.capacity_mbps:g} Mbit/s",
                "S3": f"burst {self.burst}"}[self.setup]
        return f"{self.setup} {self.queue} {self.delay_ms} ms n={self.n} {what}"


@dataclass(frozen=True)
class Plan:
    """The conditions and durations of one scale."""

    s1: dict[tuple[int, str], tuple[int, ...]]   # (delay_ms, queue) -> flows
    s1_loss: tuple[float, ...]
    s1_low_loss: tuple[float, ...]                # extra S1 loss rates for n = 5, 10 only
    s2_capacity: tuple[float, ...]
    s2_flows: tuple[int, ...]
    s2_queues: tuple[str, ...]
    s3_burst: tuple[int, ...]
    s3_flows: tuple[int, ...]
    s3_queues: tuple[str, ...]
    durations: dict[str, tuple[float, float]] = field(default_factory=dict)  # setup -> (run, warm-up)
    sample_s: float = 1.0
    replications: int = 1
    protocol: protocol.Plan | None = None   # chapter 4 (MulTFRC)


def plan(scale: str) -> Plan:
    """The plan of ``scale`` (one of :data:`SCALES`): chapter 3's runs and chapter 4's."""
    models = _model_plan(scale)
    return replace(models, protocol=protocol.plan(scale, models.s1_loss, models.s1_low_loss,
                                                  models.s2_capacity))


def _model_plan(scale: str) -> Plan:
    if scale == "full":
        flows = (5, 10, 50, 100)
        return Plan(
            s1={(30, "red"): flows, (30, "droptail"): flows, (100, "red"): (10, 50)},
            s1_loss=(0.0001, 0.001, 0.003, 0.006, 0.009, 0.02, 0.03, 0.045, 0.06, 0.08, 0.1),
            s1_low_loss=(0.00005,),
            s2_capacity=(1, 2, 4, 8, 16, 32, 64, 128, 256),
            s2_flows=flows,
            s2_queues=("droptail", "red"),
            s3_burst=(2, 3, 4, 5, 6, 8),
            s3_flows=(5, 10),
            s3_queues=("red", "droptail"),
            durations={"S1": (460.0, 15.0), "S2": (600.0, 50.0), "S3": (600.0, 50.0)},
        )
    if scale == "quick":
        return Plan(
            s1={(30, "red"): (5, 10, 50), (30, "droptail"): (5,), (100, "red"): (10,)},
            s1_loss=(0.0003, 0.001, 0.003, 0.009, 0.03, 0.06, 0.08),
            s1_low_loss=(),
            s2_capacity=(1, 2, 4, 16, 128, 256),
            s2_flows=(5, 10),
            s2_queues=("droptail", "red"),
            s3_burst=(2, 3, 4, 6),
            s3_flows=(5,),
            s3_queues=("red",),
            durations={"S1": (120.0, 15.0), "S2": (150.0, 50.0), "S3": (150.0, 50.0)},
        )
    if scale == "tiny":
        return Plan(
            s1={(30, "red"): (5,)},
            s1_loss=(0.01,),
            s1_low_loss=(),
            s2_capacity=(8,),
            s2_flows=(5,),
            s2_queues=("droptail",),
            s3_burst=(2,),
            s3_flows=(5,),
            s3_queues=("red",),
            durations={"S1": (6.0, 2.0), "S2": (6.0, 2.0), "S3": (6.0, 2.0)},
        )
    raise ValueError(f"scale: expected one of {', '.join(SCALES)}, got {scale!r}")


def points(p: Plan) -> list[Point | protocol.ProtocolPoint]:
    """Every condition of a plan: chapter 3's (S1, S2, S3, then their prefix twins), then
    chapter 4's (:func:`flowshare.reproduce.multfrc_protocol.points`)."""
    out = []
    for (delay, queue), flows in p.s1.items():
        for n in flows:
            losses = p.s1_loss + (p.s1_low_loss if n in (5, 10) else ())
            for loss in sorted(losses):
                out.append(Point("S1", queue, delay, 1000.0, n, loss=loss))
    for queue in p.s2_queues:
        for n in p.s2_flows:
            for c in p.s2_capacity:
                out.append(Point("S2", queue, 30, float(c), n))
    for queue in p.s3_queues:
        for n in p.s3_flows:
            for length in p.s3_burst:
                out.append(Point("S3", queue, 30, 1000.0, n, burst=length))
    # Each condition's twin stopped at the end of its warm-up: the flows table counts events
    # over the whole run, so the steady-state counts are the differences (same seed, same
    # random streams, hence the same first seconds).
    models: list[Point | protocol.ProtocolPoint] = [*out, *(replace(x, prefix=True) for x in out)]
    if p.protocol is None:
        return models
    return models + list(protocol.points(p.protocol, p.s1_loss, p.s1_low_loss))


# ---------------------------------------------------------------------------------------------
# Scenarios


def _bdp_packets(point: Point, access_delay_ms: float = 1.0) -> int:
    rtt = 2 * (point.delay_ms + 2 * access_delay_ms) / 1000
    return max(2, round(point.capacity_mbps * 1e6 * rtt / (8 * (PAYLOAD_B + HEADER_B))))


def scenario(point: Point, p: Plan, options: Options = OPTIONS) -> dict[str, Any]:
    """The flowshare scenario of one condition (seed set by the sweep)."""
    duration, warmup = p.durations[point.setup]
    bdp = _bdp_packets(point)
    if point.queue == "red":
        limit = max(bdp, 50) if options.red_limit == "max(bdp, 50)" else bdp
        queue = {"kind": "red", "limit": limit, "gentle": True,
                 "w_q": "auto", "min_th": "auto", "max_th": "auto"}
    else:
        queue = {"kind": "droptail", "limit": bdp}
    bottleneck: dict[str, Any] = {
        "rate": f"{point.capacity_mbps:g}Mbps", "delay": f"{point.delay_ms}ms", "queue": queue,
    }
    if point.setup == "S1":
        bottleneck["loss"] = {"model": "bernoulli", "p": point.loss}
    elif point.setup == "S3":
        bottleneck["loss"] = {"model": "two_state", "q": 0.001, "length": point.burst}
    access_rate = "1Gbps" if point.setup == "S2" else "10Gbps"
    tcp: dict[str, Any] = {
        "recovery": options.recovery, "mss": f"{PAYLOAD_B}B", "header": f"{HEADER_B}B",
        "ack_size": "40B", "initial_window": 2, "rwnd": 100000, "delayed_ack": False,
        "rto_initial": "3s", "rto_min": "200ms", "timer_tick": "10ms",
        "rtt_timing": options.rtt_timing,
    }
    if options.recovery == "sack":
        tcp["recover"] = "after_timeout"  # ns-2's Agent/TCP/Sack1 clears recover_ after a recovery
    if options.send_jitter == "bottleneck_packet":
        packet_ns = (PAYLOAD_B + HEADER_B) * 8 * 1000 / point.capacity_mbps
        tcp["send_jitter"] = f"{round(packet_ns)}ns"
    if point.prefix:
        duration, warmup = warmup, 0.0
    return {
        "simulation": {"duration": f"{duration:g}s", "warmup": f"{warmup:g}s",
                       "sample_interval": f"{p.sample_s:g}s"},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": bottleneck,
            "access": {"rate": access_rate, "delay": "1ms", "queue": {"limit": 100000}},
        },
        "flows": [{
            "name": "tcp",
            "count": point.n,
            "start_jitter": "1s",
            "tcp": tcp,
        }],
        "trace": {"events": True, "kinds": ["drop"]},
    }


SWEPT = ("simulation.duration", "simulation.warmup", "simulation.sample_interval",
         "simulation.multfrc_max_total_n", "topology", "flows", "trace")
"""The scenario keys every arm of the sweep sets."""


def _any_scenario(point: Point | protocol.ProtocolPoint, p: Plan,
                  options: Options) -> dict[str, Any]:
    if isinstance(point, Point):
        s = scenario(point, p, options)
        s["simulation"]["multfrc_max_total_n"] = protocol.DEFAULT_MAX_TOTAL_N
        return s
    assert p.protocol is not None
    s = protocol.scenario(point, p.protocol, options.t_rto, options.rate_rule,
                          options.rtt_timing, options.red_mean_pktsize)
    s["trace"] = {"events": False}
    return s


def sweep_document(p: Plan, options: Options = OPTIONS) -> dict[str, Any]:
    """The sweep of every condition: one arm per :class:`Point`, in :func:`points` order."""
    scenarios = [_any_scenario(x, p, options) for x in points(p)]

    def value(s: dict[str, Any], key: str) -> Any:
        for part in key.split("."):
            s = s[part]
        return s

    return {
        "base": scenarios[0],
        "replications": p.replications,
        "root_seed": 2010,
        "points": [{key: value(s, key) for key in SWEPT} for s in scenarios],
    }


# ---------------------------------------------------------------------------------------------
# Measurement


def _steady_samples(series: pd.DataFrame, warmup: float, interval: float) -> pd.DataFrame:
    # A sample at t covers (t − interval, t]: keep those wholly after the warm-up.
    return series[series["time_s"] - interval >= warmup - 1e-9]


def measure(run_dir: Path, prefix_dir: Path, point: Point, p: Plan,
            options: Options = OPTIONS) -> dict[str, Any]:
    """Loss measures, throughput, model values and errors of one condition.

    ``run_dir`` holds the run, ``prefix_dir`` the same run stopped at the end of the warm-up;
    counts after the warm-up are the differences of their flows tables.
    """
    duration, warmup = p.durations[point.setup]
    span = duration - warmup
    whole = pd.read_csv(run_dir / "flows.csv").set_index("flow")
    early = pd.read_csv(prefix_dir / "flows.csv").set_index("flow")

    def steady(column: str) -> float:
        return float((whole[column] - early[column]).sum())

    packets = steady("packets_sent")        # data packets sent after the warm-up
    throughput = packets / span              # pkt/s, retransmissions included (§3.2.4)
    # Model A's p: fast recoveries and time-outs per packet sent (§3.2.4).
    timeouts = steady("timeouts")
    events = steady("fast_retransmits") + timeouts
    # Mean of every RTT sample after the warm-up (a starved flow may have none).
    means = whole["rtt_mean_s"].to_numpy(float)
    weights = np.where(np.isfinite(means), whole["rtt_samples"].to_numpy(float), 0.0)
    rtt = (float(np.sum(np.where(weights > 0, means, 0.0) * weights) / weights.sum())
           if weights.sum() > 0 else math.nan)
    series = pd.read_parquet(run_dir / "timeseries.parquet")
    series = series[series["kind"].astype(str) == "flow"]
    after = _steady_samples(series, warmup, p.sample_s)
    if options.model_rto == "measured":
        # The timeout armed without back-off: samples taken while no timeout was backed off.
        unbacked = after[after["backoff"] == 1]["rto_s"]  # the multiplier: 1 = none
        rto = float(unbacked.mean()) if len(unbacked) else math.nan
    else:
        rto = 4 * rtt

    # Losses of data packets after the warm-up.
    trace = pd.read_parquet(run_dir / "events.parquet")
    drops = trace[(trace["kind"].astype(str) == "drop") & (trace["packet"].astype(str) == "data")
                  & (trace["time_s"] >= warmup)]
    times = drops["time_s"].to_numpy(float)
    lost_by = drops["flow"].to_numpy()
    if options.per_flow_loss == "recovery_events":
        p_flow = events / packets if packets else math.nan
    else:
        flow_events = sum(int(loss_events(times[lost_by == f], rtt)[-1] + 1)
                          for f in np.unique(lost_by))
        p_flow = flow_events / packets if packets else math.nan

    # Model B's p_e, p_r and j: the losses of all flows grouped by one RTT.
    group_rtt = rtt if options.cumulative_rtt == "mean" else float(whole["rtt_min_s"].min())
    order = np.argsort(times, kind="stable")
    event_of = loss_events(times[order], group_rtt) if len(times) else np.empty(0, dtype=np.int64)
    grouped = pd.DataFrame({"event": event_of, "flow": lost_by[order]})
    n_events = int(event_of[-1] + 1) if len(event_of) else 0
    p_e = n_events / packets if packets else math.nan
    p_r = len(times) / packets if packets else math.nan
    j_measured = float(grouped.groupby("event")["flow"].nunique().mean()) if n_events else math.nan
    j_raw = p_r / p_e if n_events else math.nan

    n = point.n
    row: dict[str, Any] = {**asdict(point), "label": point.label,
                           "throughput": throughput, "packets": packets,
                           "p": p_flow, "p_e": p_e, "p_r": p_r,
                           "timeout_share": timeouts / events if events else math.nan,
                           "rtt": rtt, "rto": rto, "j_measured": j_measured,
                           "j_old": min(n, j_raw) if n_events else math.nan,
                           "j_improved": float(parallel.improved_j(n, j_raw)) if n_events
                           else math.nan}
    b = options.b
    usable = rtt > 0 and rto > 0  # False for NaN: no RTT sample or no timeout sampled
    if usable and 0 < p_flow < 1:
        row["model_a"] = float(parallel.model_a(n, p_flow, rtt, rto, b=b))
        row["model_a_ca"] = float(parallel.model_a_ca(n, p_flow, rtt, b=b))
    if usable and n_events and 0 < p_e < 1:
        js = {"old": j_raw, "measured": j_measured, "improved": row["j_improved"]}
        for name, j in js.items():
            row[f"model_b_{name}"] = float(parallel.model_b(n, p_e, j, rtt, rto, b=b))
        row["model_b"] = row[f"model_b_{options.model_b_j}"]
        j_main = max(1.0, min(n, js[options.model_b_j]))
        row["model_b_ca"] = float(parallel.model_b_ca(n, p_e, j_main, rtt, b=b))
    for model in ("model_a", "model_a_ca", "model_b", "model_b_old", "model_b_measured",
                  "model_b_improved", "model_b_ca"):
        value = row.get(model, math.nan)
        row[model] = value
        reference = throughput if options.error_denominator == "measured" else value
        row["err_" + model[6:]] = (100 * (value - throughput) / reference if reference
                                   else math.nan)
    return row


# ---------------------------------------------------------------------------------------------
# Targets


def _t(id: str, description: str, published: float, tolerance: float, comparison: str = "close",
       kind: str = "absolute") -> Target:
    return Target(id, description, published, tolerance, comparison, kind)


PP2 = 2.0   # percentage points, for an error value the thesis quotes from one run
J_REL = 0.10
THR_REL = 0.05

MEASURED_TARGETS: tuple[Target, ...] = (
    # §3.2.4, Model A (per-flow loss event rate)
    _t("A.S1.30ms.max_error", "S1 30 ms RED: largest |error| of Model A (with time-outs), %",
       10.0, 0.0, "at_most"),
    _t("A.S1.30ms.max_error_below_8pct",
       "S1 30 ms RED: largest |error| of Model A for packet loss < 8%, %", 5.0, 0.0, "at_most"),
    _t("A.S1.30ms.sign_change_loss",
       "S1 30 ms RED: packet loss (%) where Model A turns from over- to underestimating",
       5.0, 2.0),
    _t("A.S1.100ms.max_error_low_loss",
       "S1 100 ms RED: largest |error| of Model A for packet loss <= 2%, %", 5.0, 0.0, "at_most"),
    _t("A.S1.100ms.overestimate_share_high_loss",
       "S1 100 ms RED: share of runs with packet loss > 2% that Model A overestimates",
       1.0, 0.0, "at_least"),
    _t("A.S1.30ms.rtt_over_rto", "S1 30 ms: mean RTT / mean RTO", 0.32, 0.2, kind="relative"),
    _t("A.S1.100ms.rtt_over_rto", "S1 100 ms: mean RTT / mean RTO", 0.84, 0.2, kind="relative"),
    _t("A.S1.30ms.droptail_vs_red",
       "S1 30 ms: largest |error(DropTail) − error(RED)| of Model A at equal n and loss, "
       "percentage points", 0.0, 3.0, "at_most"),
    _t("A.S2.droptail.256.n5", "S2 DropTail 256 Mbit/s, 5 flows: |error| of Model A, %",
       1.5, PP2),
    _t("A.S2.droptail.256.n10", "S2 DropTail 256 Mbit/s, 10 flows: |error| of Model A, %",
       2.0, PP2),
    _t("A.S2.droptail.256.n50", "S2 DropTail 256 Mbit/s, 50 flows: |error| of Model A, %",
       1.5, PP2),
    _t("A.S2.droptail.256.n100", "S2 DropTail 256 Mbit/s, 100 flows: |error| of Model A, %",
       3.0, PP2),
    _t("A.S2.droptail.4to128.n5_n10.max_error",
       "S2 DropTail 4-128 Mbit/s, 5 and 10 flows: largest |error| of Model A, %",
       7.0, 0.0, "at_most"),
    _t("A.S2.droptail.low_capacity.overestimate_share",
       "S2 DropTail: share of (5 flows, 1 Mbit/s), (10 flows, 1 and 2 Mbit/s) that Model A "
       "overestimates", 1.0, 0.0, "at_least"),
    _t("A.S2.red_better_than_droptail",
       "S2: mean |error| of Model A with RED minus with DropTail, percentage points",
       0.0, 0.0, "at_most"),
    _t("A.S3.max_error", "S3 burst loss: largest |error| of Model A, %", 4.5, 0.0, "at_most"),
    _t("A.S3.error_grows_with_burst",
       "S3: rank correlation of burst length and |error| of Model A", 1.0, 0.5, "at_least"),
    # §3.3.4, Model B (cumulative loss event rate)
    _t("B.S1.j_measured.n5_0.9pct",
       "S1 30 ms RED, 5 flows, 0.9% loss: measured flows hit per cumulative loss event",
       1.42, J_REL, kind="relative"),
    _t("B.S1.j_measured.n10_0.9pct",
       "S1 30 ms RED, 10 flows, 0.9% loss: measured flows hit per cumulative loss event",
       1.96, J_REL, kind="relative"),
    _t("B.S1.max_error_below_2pct",
       "S1 30 ms RED: largest |error| of Model B for 0.01% <= packet loss < 2%, %",
       3.0, 0.0, "at_most"),
    _t("B.S1.underestimate_below_0.01pct",
       "S1 30 ms RED: largest underestimate of Model B for packet loss < 0.01%, %",
       5.0, 0.0, "at_most"),
    _t("B.S1.lowest.n5.j_old", "S1 30 ms RED, 5 flows, lowest loss: old j = min(n, p_r/p_e)",
       1.175302, J_REL, kind="relative"),
    _t("B.S1.lowest.n5.j_measured", "S1 30 ms RED, 5 flows, lowest loss: measured j",
       1.124352, J_REL, kind="relative"),
    _t("B.S1.lowest.n5.j_improved", "S1 30 ms RED, 5 flows, lowest loss: improved j (eq. 3.52)",
       1.153449, J_REL, kind="relative"),
    _t("B.S1.lowest.n5.error_old_j",
       "S1 30 ms RED, 5 flows, lowest loss: |error| of Model B with old j, %", 4.7, PP2),
    _t("B.S1.lowest.n5.error_measured_j",
       "S1 30 ms RED, 5 flows, lowest loss: |error| of Model B with measured j, %", 2.0, PP2),
    _t("B.S1.lowest.n5.error_improved_j",
       "S1 30 ms RED, 5 flows, lowest loss: |error| of Model B with improved j, %", 3.87, PP2),
    _t("B.S1.min_error_above_4.5pct",
       "S1 30 ms RED: smallest |error| of Model B for packet loss > 4.5%, %",
       7.0, 0.0, "at_least"),
    _t("B.S1.max_error", "S1 30 ms RED: largest |error| of Model B, %",
       10.5, 0.0, "at_most"),
    _t("B.S2.droptail.128_256.max_error_n10_plus",
       "S2 DropTail 128 and 256 Mbit/s, 10 or more flows: largest |error| of Model B, %",
       1.0, 0.0, "at_most"),
    _t("B.S2.droptail.128_256.n5.error",
       "S2 DropTail 128 and 256 Mbit/s, 5 flows: largest |error| of Model B, %", 3.0, PP2),
    _t("B.S2.red.n5.lowest.j_measured", "S2 RED, 5 flows, lowest loss: measured j",
       3.43859, J_REL, kind="relative"),
    _t("B.S2.red.n5.lowest.j_old", "S2 RED, 5 flows, lowest loss: old j",
       4.140351, J_REL, kind="relative"),
    _t("B.S2.red.n5.lowest.j_improved", "S2 RED, 5 flows, lowest loss: improved j",
       3.015146, J_REL, kind="relative"),
    _t("B.S2.red.n5.lowest.throughput", "S2 RED, 5 flows, lowest loss: measured throughput, pkt/s",
       25403.79, THR_REL, kind="relative"),
    _t("B.S2.red.n5.lowest.model_old_j",
       "S2 RED, 5 flows, lowest loss: Model B with old j, pkt/s", 22903.79, THR_REL,
       kind="relative"),
    _t("B.S2.red.n5.lowest.model_measured_j",
       "S2 RED, 5 flows, lowest loss: Model B with measured j, pkt/s", 25139.24, THR_REL,
       kind="relative"),
    _t("B.S2.red.n5.lowest.model_improved_j",
       "S2 RED, 5 flows, lowest loss: Model B with improved j, pkt/s", 26850.08, THR_REL,
       kind="relative"),
    _t("B.S3.underestimate_share", "S3 burst loss: share of runs Model B underestimates",
       1.0, 0.0, "at_least"),
    _t("B.S3.model_a_better",
       "S3: mean |error| of Model B minus that of Model A, percentage points", 0.0, 0.0,
       "at_least"),
)

def targets() -> list[Target]:
    """Every numeric target of the study, unevaluated, in report order."""
    return [*MEASURED_TARGETS, *protocol.TARGETS]


def _select(rows: pd.DataFrame, **where: Any) -> pd.DataFrame:
    mask = np.ones(len(rows), dtype=bool)
    for key, value in where.items():
        mask &= (rows[key] == value).to_numpy()
    return rows[mask]


Measure = Callable[[pd.DataFrame], "tuple[float | None, str]"]


def _max_abs(frame: pd.DataFrame, column: str, what: str) -> tuple[float | None, str]:
    values = frame[column].dropna()
    if values.empty:
        return None, f"no run with {what} at this scale"
    return float(values.abs().max()), ""


def _share(flags: pd.Series, what: str) -> tuple[float | None, str]:
    if flags.empty:
        return None, f"no run with {what} at this scale"
    return float(flags.mean()), ""


def _worst_run(frame: pd.DataFrame, column: str) -> str:
    """Where ``column``'s largest |value| lies, with what the flows did there."""
    f = frame.dropna(subset=[column])
    if f.empty:
        return ""
    w = f.loc[f[column].abs().idxmax()]
    where = (f"bursts of {w['burst']:g} packets" if w.get("setup") == "S3"
             else f"{w['capacity_mbps']:g} Mbit/s with {w['n']:g} flows")
    also = f"Model A errs by {w['err_a']:+.1f} % and " if column != "err_a" else ""
    return (f"largest with {where} ({w[column]:+.1f} %), where {also}"
            f"{w['timeout_share']:.0%} of the Reno flows' loss events are time-outs")


def _with_worst(result: tuple[float | None, str], frame: pd.DataFrame,
                column: str) -> tuple[float | None, str]:
    """A largest |value| with the note of where it lies (or the reason it is missing)."""
    value, note = result
    return value, (note if value is None else _worst_run(frame, column))


def _sign_change(frame: pd.DataFrame) -> tuple[float | None, str]:
    frame = frame.dropna(subset=["err_a", "p_r"]).sort_values("p_r")
    if len(frame) < 2:
        return None, "fewer than two S1 30 ms RED runs at this scale"
    loss = frame["p_r"].to_numpy() * 100
    over = (frame["err_a"].to_numpy() > 0)
    # The threshold that best separates overestimates (below) from underestimates (above).
    best, best_cost = None, None
    for i in range(len(loss) + 1):
        cost = int((~over[:i]).sum() + over[i:].sum())
        if best_cost is None or cost < best_cost:
            best_cost = cost
            lo = loss[i - 1] if i > 0 else 0.0
            hi = loss[i] if i < len(loss) else loss[-1]
            best = (lo + hi) / 2
    if best is None or not over.any() or over.all():
        side = "over" if over.all() else "under"
        return None, f"Model A {side}estimates every S1 30 ms RED run: no change of sign"
    return float(best), ""


def _lowest(frame: pd.DataFrame, column: str, by: str = "p_e") -> tuple[float | None, str]:
    frame = frame.dropna(subset=[by])
    if frame.empty:
        return None, "no such run at this scale"
    value = frame.sort_values(by).iloc[0][column]
    return (None, "not defined for this run") if pd.isna(value) else (float(value), "")


def _spearman(x: pd.Series, y: pd.Series) -> tuple[float | None, str]:
    if len(x) < 3 or x.nunique() < 2:
        return None, "fewer than three burst lengths at this scale"
    return float(pd.Series(x.to_numpy()).rank().corr(pd.Series(y.to_numpy()).rank())), ""


def _burst_trend(s3: pd.DataFrame) -> tuple[float | None, str]:
    """Rank correlation of burst length and Model A's |error|, with the errors by burst."""
    value, note = _spearman(s3["burst"], s3["err_a"].abs())
    if value is None:
        return value, note
    by = s3.groupby("burst")["err_a"].apply(lambda e: e.abs().mean())
    return value, ("Model A's mean |error| by burst length: "
                   + ", ".join(f"{b:g} packets {e:.1f} %" for b, e in by.items()))


def _j_at(rows: pd.DataFrame, n: int) -> tuple[float | None, str]:
    frame = _select(rows, setup="S1", queue="red", delay_ms=30, n=n)
    frame = frame[np.isclose(frame["loss"], 0.009)]
    if frame.empty:
        return None, f"no S1 30 ms RED run with {n} flows at 0.9% loss at this scale"
    return float(frame["j_measured"].mean()), ""


def _measurements(rows: pd.DataFrame) -> dict[str, Measure]:
    s1 = _select(rows, setup="S1", queue="red", delay_ms=30)
    s1_100 = _select(rows, setup="S1", queue="red", delay_ms=100)
    s1_dt = _select(rows, setup="S1", queue="droptail", delay_ms=30)
    s2_dt = _select(rows, setup="S2", queue="droptail")
    s2_red = _select(rows, setup="S2", queue="red")
    s3 = _select(rows, setup="S3")

    def rtt_over_rto(frame: pd.DataFrame) -> tuple[float | None, str]:
        if frame.empty:
            return None, "no such run at this scale"
        return float(frame["rtt"].mean() / frame["rto"].mean()), ""

    def droptail_vs_red(_: pd.DataFrame) -> tuple[float | None, str]:
        merged = s1.merge(s1_dt, on=["n", "loss"], suffixes=("_red", "_dt"))
        if merged.empty:
            return None, "no S1 30 ms DropTail run with a RED twin at this scale"
        gap = (merged["err_a_dt"] - merged["err_a_red"]).abs().sort_values()
        worst = merged.loc[gap.index[-1]]
        note = (f"the largest difference is at n = {worst['n']:g} and {worst['loss']:.2%} loss, "
                f"where the flows carry {worst['throughput_red']:.0f} pkt/s behind RED and "
                f"{worst['throughput_dt']:.0f} behind DropTail")
        if max(worst["throughput_red"], worst["throughput_dt"]) > 0.95 * S1_LINK_PKTS:
            note += (f": the 1 Gbit/s link ({S1_LINK_PKTS:.0f} packets/s) is full there, so the "
                     "queue's own drops add to the random loss")
        if len(gap) > 1:
            note += f"; every other condition differs by at most {gap.iloc[-2]:.2f} points"
        return float(gap.iloc[-1]), note

    def s2_256(n: int) -> Measure:
        return lambda _: _max_abs(_select(s2_dt, n=n, capacity_mbps=256.0), "err_a",
                                  f"S2 DropTail 256 Mbit/s and {n} flows")

    def low_capacity(_: pd.DataFrame) -> tuple[float | None, str]:
        picked = s2_dt[((s2_dt["n"] == 5) & (s2_dt["capacity_mbps"] == 1))
                       | ((s2_dt["n"] == 10) & s2_dt["capacity_mbps"].isin([1.0, 2.0]))]
        return _share(picked["err_a"].dropna() > 0, "S2 DropTail at 1-2 Mbit/s and 5 or 10 flows")

    def red_better(_: pd.DataFrame) -> tuple[float | None, str]:
        if s2_dt.empty or s2_red.empty:
            return None, "S2 needs both DropTail and RED runs; this scale has one"
        by = pd.DataFrame({q: f.groupby("capacity_mbps")["err_a"].apply(lambda e: e.abs().mean())
                           for q, f in (("red", s2_red), ("droptail", s2_dt))}).dropna()
        worse = by.index[by["red"] > by["droptail"]]
        note = ""
        if len(worse):
            hit = s2_red[s2_red["capacity_mbps"].isin(worse)]
            note = (f"RED's mean |error| is above DropTail's at {', '.join(f'{c:g}' for c in worse)} "
                    f"Mbit/s only, where up to {hit['n'].max():g} flows share the link, "
                    f"{hit['timeout_share'].min():.0%}-{hit['timeout_share'].max():.0%} of their "
                    f"loss events are time-outs and Model A errs by up to "
                    f"{hit['err_a'].abs().max():.0f} %")
        return float(s2_red["err_a"].abs().mean() - s2_dt["err_a"].abs().mean()), note

    def b_low(_: pd.DataFrame) -> tuple[float | None, str]:
        f = s1[(s1["p_r"] >= 1e-4) & (s1["p_r"] < 0.02)]
        return _max_abs(f, "err_b", "0.01% <= loss < 2% in S1 30 ms RED")

    def b_very_low(_: pd.DataFrame) -> tuple[float | None, str]:
        f = s1[s1["p_r"] < 1e-4]["err_b"].dropna()
        if f.empty:
            return None, "no S1 30 ms RED run below 0.01% loss at this scale"
        return float(max(0.0, -f.min())), ""

    def b_high(_: pd.DataFrame) -> tuple[float | None, str]:
        f = s1[s1["p_r"] > 0.045]["err_b"].dropna()
        if f.empty:
            return None, "no S1 30 ms RED run above 4.5% loss at this scale"
        return float(f.abs().min()), ""

    def s2_b(wide: bool) -> Measure:
        def m(_: pd.DataFrame) -> tuple[float | None, str]:
            f = s2_dt[s2_dt["capacity_mbps"].isin([128.0, 256.0])]
            f = f[f["n"] >= 10] if wide else f[f["n"] == 5]
            return _with_worst(_max_abs(f, "err_b", "S2 DropTail at 128 or 256 Mbit/s"
                                        + (" and 10 or more flows" if wide else " and 5 flows")),
                               f, "err_b")
        return m

    s1_n5 = _select(s1, n=5)
    s2_red_n5 = _select(s2_red, n=5)

    def lowest(frame: pd.DataFrame, column: str, absolute: bool = False) -> Measure:
        def m(_: pd.DataFrame) -> tuple[float | None, str]:
            value, note = _lowest(frame, column)
            return (abs(value) if absolute and value is not None else value), note
        return m

    def s2_red_lowest(column: str) -> Measure:
        """:func:`lowest` of S2 RED with 5 flows, saying how often the run's flows timed out."""
        def m(_: pd.DataFrame) -> tuple[float | None, str]:
            value, note = _lowest(s2_red_n5, column)
            share, _ = _lowest(s2_red_n5, "timeout_share")   # the same run's
            if value is not None and share is not None:
                note = f"the 5 flows time out in {share:.0%} of their loss events in this run"
            return value, note
        return m

    def s3_under(_: pd.DataFrame) -> tuple[float | None, str]:
        value, note = _share(s3["err_b"].dropna() < 0, "S3")
        over = s3[s3["err_b"] >= 0]
        if value is not None and len(over):
            bursts = ", ".join(f"{b:g}" for b in sorted(set(over["burst"])))
            note = (f"Model B overestimates with bursts of {bursts} "
                    f"packets (by {over['err_b'].max():.1f} % at most)")
        return value, note

    def s3_a_better(_: pd.DataFrame) -> tuple[float | None, str]:
        if s3.empty:
            return None, "no S3 run at this scale"
        return float(s3["err_b"].abs().mean() - s3["err_a"].abs().mean()), ""

    return {
        "A.S1.30ms.max_error": lambda _: _max_abs(s1, "err_a", "S1 30 ms RED"),
        "A.S1.30ms.max_error_below_8pct":
            lambda _: _max_abs(s1[s1["p_r"] < 0.08], "err_a", "loss < 8% in S1 30 ms RED"),
        "A.S1.30ms.sign_change_loss": lambda _: _sign_change(s1),
        "A.S1.100ms.max_error_low_loss":
            lambda _: _max_abs(s1_100[s1_100["p_r"] <= 0.02], "err_a",
                               "loss <= 2% in S1 100 ms RED"),
        "A.S1.100ms.overestimate_share_high_loss":
            lambda _: _share(s1_100[s1_100["p_r"] > 0.02]["err_a"].dropna() > 0,
                             "loss > 2% in S1 100 ms RED"),
        "A.S1.30ms.rtt_over_rto": lambda _: rtt_over_rto(_select(rows, setup="S1", delay_ms=30)),
        "A.S1.100ms.rtt_over_rto": lambda _: rtt_over_rto(_select(rows, setup="S1", delay_ms=100)),
        "A.S1.30ms.droptail_vs_red": droptail_vs_red,
        "A.S2.droptail.256.n5": s2_256(5),
        "A.S2.droptail.256.n10": s2_256(10),
        "A.S2.droptail.256.n50": s2_256(50),
        "A.S2.droptail.256.n100": s2_256(100),
        "A.S2.droptail.4to128.n5_n10.max_error":
            lambda _: _max_abs(s2_dt[s2_dt["n"].isin([5, 10])
                                     & s2_dt["capacity_mbps"].between(4, 128)],
                               "err_a", "S2 DropTail at 4-128 Mbit/s and 5 or 10 flows"),
        "A.S2.droptail.low_capacity.overestimate_share": low_capacity,
        "A.S2.red_better_than_droptail": red_better,
        "A.S3.max_error": lambda _: _with_worst(_max_abs(s3, "err_a", "S3"), s3, "err_a"),
        "A.S3.error_grows_with_burst": lambda _: _burst_trend(s3),
        "B.S1.j_measured.n5_0.9pct": lambda _: _j_at(rows, 5),
        "B.S1.j_measured.n10_0.9pct": lambda _: _j_at(rows, 10),
        "B.S1.max_error_below_2pct": b_low,
        "B.S1.underestimate_below_0.01pct": b_very_low,
        "B.S1.lowest.n5.j_old": lowest(s1_n5, "j_old"),
        "B.S1.lowest.n5.j_measured": lowest(s1_n5, "j_measured"),
        "B.S1.lowest.n5.j_improved": lowest(s1_n5, "j_improved"),
        "B.S1.lowest.n5.error_old_j": lowest(s1_n5, "err_b_old", absolute=True),
        "B.S1.lowest.n5.error_measured_j": lowest(s1_n5, "err_b_measured", absolute=True),
        "B.S1.lowest.n5.error_improved_j": lowest(s1_n5, "err_b_improved", absolute=True),
        "B.S1.min_error_above_4.5pct": b_high,
        "B.S1.max_error": lambda _: _max_abs(s1, "err_b", "S1 30 ms RED"),
        "B.S2.droptail.128_256.max_error_n10_plus": s2_b(True),
        "B.S2.droptail.128_256.n5.error": s2_b(False),
        "B.S2.red.n5.lowest.j_measured": lowest(s2_red_n5, "j_measured"),
        "B.S2.red.n5.lowest.j_old": lowest(s2_red_n5, "j_old"),
        "B.S2.red.n5.lowest.j_improved": lowest(s2_red_n5, "j_improved"),
        "B.S2.red.n5.lowest.throughput": s2_red_lowest("throughput"),
        "B.S2.red.n5.lowest.model_old_j": s2_red_lowest("model_b_old"),
        "B.S2.red.n5.lowest.model_measured_j": s2_red_lowest("model_b_measured"),
        "B.S2.red.n5.lowest.model_improved_j": s2_red_lowest("model_b_improved"),
        "B.S3.underestimate_share": s3_under,
        "B.S3.model_a_better": s3_a_better,
    }


def _parts(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The model-validation rows (chapter 3) and the MulTFRC rows (chapter 4)."""
    if rows.empty or "part" not in rows:
        return rows, rows
    model = rows[rows["part"] == "model"]
    return model, rows[rows["part"] == "protocol"]


def evaluate(rows: pd.DataFrame) -> list[Target]:
    """Every target evaluated against the measured runs ``rows`` (one row per run)."""
    model, multfrc = _parts(rows)
    measurements = _measurements(model)
    out = []
    for target in MEASURED_TARGETS:
        value, note = measurements[target.id](model)
        out.append(target.unmeasured(note) if value is None
                   else target.evaluate(value).explained(note)
                   .explained(WHY_MISSED.get(target.id, "")))
    return out + protocol.evaluate(multfrc, model)


S1_LINK_PKTS = 1e9 / (8 * (PAYLOAD_B + HEADER_B))
"""The 1 Gbit/s bottleneck of S1 in data packets per second."""

_CROSSCHECK = ('docs/validation.md, "Parallel TCP Reno under random loss against ns-2.35", whose '
               "TCP Reno agrees with flowshare's on every throughput and p")
NS2_MISSES: dict[str, str] = {
    "A.S1.30ms.max_error": "63.1",
    "A.S1.30ms.max_error_below_8pct": "7.55",
    "A.S1.100ms.max_error_low_loss": "7.0",
    "A.S2.droptail.256.n5": "5.04",
    "A.S2.droptail.256.n10": "5.16",
    "A.S2.droptail.4to128.n5_n10.max_error": "18.3",
    "A.S2.droptail.low_capacity.overestimate_share": "0.667",
}
"""The Model A targets that ns-2.35's own runs of the same setups miss, evaluated as here, with
ns-2's value (measured 2026-11-29, ``bench/peers/crosscheck_parallel.py``): seven of the 68
targets, so no simulator whose Reno behaves as ns-2.35's passes 90 % of them."""
_NS2_S1_B = ("flowshare's Reno sends within 3 % of ns-2.35's in S1 (docs/validation.md, \"Parallel "
             "TCP Reno under random loss against ns-2.35\"); Model B with the cumulative loss "
             "measure of §3.3.4 overestimates those flows by up to 37 % where time-outs dominate")
_RENO_S2_RED = ("with SACK or NewReno recovery (Options.recovery) they time out in none and carry "
                "25,005 and 25,017 pkt/s (150-s runs, seed 1, measured 2026-11-29), within 1.6 % "
                "of the thesis's 25,403.79; the thesis does not name its TCP agent")
_RENO_S2_RED_MODEL = ("Model B takes this run's p_e and RTT; its three j agree with the thesis's "
                      "(the B.S2.red.n5.lowest.j_* targets), so the value differs through the "
                      "flows' loss event rate, which their time-outs set (with SACK recovery, "
                      "Options.recovery, the old and improved j give 19,452 and 22,886 pkt/s, "
                      "150-s run, seed 1, measured 2026-11-29)")
WHY_MISSED: dict[str, str] = {
    **{key: (f"ns-2.35's Agent/TCP/Reno in the same setups, evaluated the same way, gives "
             f"{value} and misses this target too ({_CROSSCHECK})")
       for key, value in NS2_MISSES.items()},
    "B.S2.red.n5.lowest.throughput": _RENO_S2_RED,
    "B.S2.red.n5.lowest.model_old_j": _RENO_S2_RED_MODEL,
    "B.S2.red.n5.lowest.model_improved_j": _RENO_S2_RED_MODEL,
    "B.S2.red.n5.lowest.model_measured_j": _RENO_S2_RED_MODEL,
    "B.S1.max_error": _NS2_S1_B,
    "B.S1.max_error_below_2pct": _NS2_S1_B,
    "B.S1.underestimate_below_0.01pct": (
        "the lowest loss (0.005 %) gives about 300 losses per run, so the error there carries "
        "a sampling error of about 3 % (Mathis: the rate goes as 1/sqrt(p))"),
}
"""Why a chapter-3 target misses, where a cross-check or a measurement shows it; added to the
note of a miss."""


# ---------------------------------------------------------------------------------------------
# Report sections


def _plot_groups(rows: pd.DataFrame, x: str, xlabel: str, title: str, log_x: bool) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    flows = sorted(rows["n"].unique())
    fig, axes = plt.subplots(1, len(flows), figsize=(4.2 * len(flows), 3.6), squeeze=False)
    for ax, n in zip(axes[0], flows, strict=True):
        f = rows[rows["n"] == n].sort_values(x)
        xs = f[x] * (100 if x == "p_r" else 1)
        ax.plot(xs, f["throughput"], "ko", label="simulation")
        ax.plot(xs, f["model_a"], "b-", label="Model A")
        ax.plot(xs, f["model_a_ca"], "b:", label="Model A, no time-outs")
        ax.plot(xs, f["model_b"], "r-", label="Model B")
        ax.plot(xs, f["model_b_ca"], "r:", label="Model B, no time-outs")
        ax.set_title(f"n = {n}")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("throughput [pkt/s]")
        ax.set_yscale("log")
        if log_x:
            ax.set_xscale("log")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    return figure_html(fig, title)


def _plot_errors(rows: pd.DataFrame, x: str, xlabel: str, title: str, log_x: bool,
                 bounds: Sequence[tuple[str, float, str]]) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    markers = "osd^v<>"
    panels = (("a", "err_a", "Model A"), ("b", "err_b", "Model B"))
    for ax, (model, column, name) in zip(axes, panels, strict=True):
        for k, n in enumerate(sorted(rows["n"].unique())):
            f = rows[rows["n"] == n].sort_values(x)
            xs = f[x] * (100 if x == "p_r" else 1)
            ax.plot(xs, f[column], marker=markers[k % len(markers)], label=f"n = {n}")
        for which, value, label in bounds:
            if which != model:
                continue
            for sign in (1, -1):
                ax.axhline(sign * value, color="grey", ls="--", lw=0.8)
            ax.text(ax.get_xlim()[0], value, f" thesis: {label}", fontsize=7, va="bottom")
        ax.axhline(0, color="black", lw=0.6)
        ax.set_title(name)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("error [% of measured]")
        if log_x:
            ax.set_xscale("log")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"{title}: model error")
    fig.tight_layout()
    return figure_html(fig, f"{title}: error of the models with time-outs; dashed lines: the "
                            "thesis's bounds")


def _point_table(rows: pd.DataFrame, x: str) -> str:
    header = (x, "n", "throughput", "p", "p_e", "p_r", "j meas.", "j old", "j impr.",
              "TO share", "RTT s", "RTO s", "err A %", "err A no TO %", "err B old %",
              "err B meas. %", "err B impr. %")
    body = []
    for _, r in rows.sort_values(["n", x]).iterrows():
        body.append([r[x] if x != "p_r" else r["loss"], int(r["n"]), r["throughput"], r["p"],
                     r["p_e"], r["p_r"], r["j_measured"], r["j_old"], r["j_improved"],
                     r["timeout_share"], r["rtt"], r["rto"], r["err_a"], r["err_a_ca"],
                     r["err_b_old"], r["err_b_measured"], r["err_b_improved"]])
    first = {"p_r": "loss model p", "capacity_mbps": "Mbit/s", "burst": "burst"}[x]
    return table_html((first, *header[1:]), body)


GROUPS = (
    ("S1, 30 ms, RED: random loss (Figs. 3.6, 3.7, 3.19, 3.20)",
     dict(setup="S1", queue="red", delay_ms=30), "p_r",
     "Thesis: Model A within 10% everywhere and within 5% below 8% loss, turning from "
     "over- to underestimating near 5% loss; Model B within 3% below 2% loss, above 7% "
     "beyond 4.5% loss and never above 10.5%; at 0.9% loss 1.42 (5 flows) and 1.96 (10 flows) "
     "flows are hit per cumulative loss event; at the lowest loss of Fig. 3.19(a) old j = "
     "1.175302, measured j = 1.124352, improved j = 1.153449 with errors 4.7%, 2% and 3.87%.",
     (("a", 10.0, "≤ 10%"), ("a", 5.0, "< 5% below 8% loss"),
      ("b", 3.0, "≤ 3% below 2% loss"), ("b", 10.5, "≤ 10.5%"))),
    ("S1, 100 ms, RED: random loss, long RTT (Figs. 3.8, 3.21)",
     dict(setup="S1", queue="red", delay_ms=100), "p_r",
     "Thesis: below 2% loss the error of Model A is as small as at 30 ms; above it the model "
     "always overestimates. RTT/RTO is 0.84 (0.32 at 30 ms).", (("a", 5.0, "< 5% below 2% loss"),)),
    ("S1, 30 ms, DropTail: random loss with a BDP FIFO (Figs. 3.9, 3.10, 3.22, 3.23)",
     dict(setup="S1", queue="droptail", delay_ms=30), "p_r",
     "Thesis: \"completely the same\" results as with RED.", (("a", 10.0, "≤ 10%"),)),
    ("S2, DropTail: self-induced loss, 1-256 Mbit/s (Figs. 3.12, 3.13, 3.25, 3.26)",
     dict(setup="S2", queue="droptail"), "capacity_mbps",
     "Thesis: Model A errs by 1.5% (5 and 50 flows), 2% (10) and 3% (100) at 256 Mbit/s, "
     "below 7% for 5 and 10 flows from 4 to 128 Mbit/s, and overestimates 5 flows at 1 Mbit/s "
     "and 10 flows at 1 and 2 Mbit/s. Model B errs by less than 1% at 128 and 256 Mbit/s, "
     "except about 3% for 5 flows.", (("a", 7.0, "< 7%, 5-10 flows, 4-128 Mbit/s"),
      ("b", 1.0, "< 1% at 128-256 Mbit/s"))),
    ("S2, RED: self-induced loss (Figs. 3.14, 3.15, 3.27, 3.28)",
     dict(setup="S2", queue="red"), "capacity_mbps",
     "Thesis: RED is better than DropTail for Model A. For 5 flows at the lowest loss: "
     "measured j = 3.43859, old j = 4.140351, improved j = 3.015146; measured 25403.79 pkt/s, "
     "Model B 22903.79 (old j), 25139.24 (measured j), 26850.08 (improved j) pkt/s.", ()),
    ("S3: burst loss (Figs. 3.16, 3.17, 3.29, 3.30)",
     dict(setup="S3"), "burst",
     "Thesis: Model A within 4.5% in all runs, the difference growing with the burst length; "
     "Model B always underestimates, more for longer bursts; Model A is the better one here.",
     (("a", 4.5, "< 4.5%"),)),
)


def sections(rows: pd.DataFrame) -> list[Section]:
    """One section per figure group with its plots, its runs and the thesis's numbers."""
    rows, multfrc = _parts(rows)
    out = []
    for title, where, x, thesis, bounds in GROUPS:
        frame = _select(rows, **where)
        section = Section(title, paragraphs=[thesis])
        if frame.empty:
            section.paragraphs.append("No run of this group at this scale.")
        else:
            xlabel = {"p_r": "packet loss ratio [%]", "capacity_mbps": "capacity [Mbit/s]",
                      "burst": "burst length [packets]"}[x]
            section.parts.append(_plot_groups(frame, x, xlabel, title, log_x=x != "burst"))
            section.parts.append(_plot_errors(frame, x, xlabel, title, x != "burst", bounds))
            section.parts.append(_point_table(frame, x))
        out.append(section)
    return out + protocol.sections(multfrc, rows)


def intro(scale: str, options: Options = OPTIONS) -> list[str]:
    """The report's opening paragraphs."""
    return [
        "D. Damjanović, Parallel TCP Data Transfers: A Practical Model and its Application, "
        "PhD thesis, University of Innsbruck, 2010, chapters 3 and 4.",
        f"Scale: {scale}. Errors are (model − measured) / measured in per cent; throughput is "
        "packets leaving the senders per second after the warm-up, retransmissions included. "
        "Model A takes the per-flow loss event rate p (fast recoveries plus time-outs over "
        "packets sent), Model B the cumulative loss event rate p_e and j from the drop trace.",
        "Chapter 4 runs MulTFRC (flowshare's TFRC sender with the MulTFRC equation and ns-2's "
        "TFRC defaults) alone under random and self-induced loss, against a UDP flow, and "
        "against n SACK TCP flows; its sections follow the model validation's.",
        "Choices: " + json.dumps(asdict(options)),
    ]


def write_rows(rows: pd.DataFrame, path: Path) -> None:
    """The measured runs as CSV (``runs.csv`` of the output directory)."""
    rows.to_csv(path, index=False, float_format="%.6g")


def rows_from_store(store: Path, p: Plan, options: Options = OPTIONS,
                    conditions: Sequence[Point | protocol.ProtocolPoint] | None = None
                    ) -> pd.DataFrame:
    """One measured row per done run of the store (``part`` says which chapter)."""
    catalog = pd.read_parquet(store / "catalog.parquet")
    conditions = list(points(p)) if conditions is None else list(conditions)
    arm_of = {c: i for i, c in enumerate(conditions)}
    done = {
        (int(r["arm"]), int(r["replication"])): str(r["run_id"])
        for _, r in catalog.iterrows() if r["status"] == "done"
    }
    out = []
    for (arm, rep), run_id in sorted(done.items()):
        point = conditions[arm]
        if point.prefix:
            continue
        twin: Path | None = None
        if isinstance(point, Point) or point.needs_prefix:
            k = arm_of.get(replace(point, prefix=True))
            if k is None or (k, rep) not in done:
                continue
            twin = store / "runs" / done[(k, rep)]
        if isinstance(point, Point):
            assert twin is not None
            row = measure(store / "runs" / run_id, twin, point, p, options)
            row["part"] = "model"
        else:
            assert p.protocol is not None
            row = protocol.measure(store / "runs" / run_id, twin, point, p.protocol)
        row["run_id"] = run_id
        row["replication"] = rep
        out.append(row)
    return pd.DataFrame(out)
