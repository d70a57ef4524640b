"""The MulTFRC simulations of Damjanović (2010), chapter 4, and their targets.

D. Damjanović, *Parallel TCP Data Transfers: A Practical Model and its Application*, PhD
thesis, University of Innsbruck, 2010, §4.2. MulTFRC (``equation = "multfrc"`` of flowshare's
TFRC sender, ``docs/tfrc.md``) is run in the thesis's setups:

- **I1** (§4.2.1, Figs. 4.3-4.9): one MulTFRC flow alone in S1 (Bernoulli loss on a 1 Gbit/s
  bottleneck), compared with the n TCP flows of the model validation in the same condition;
- **I2** (Figs. 4.10-4.12): one MulTFRC flow alone in S2 (self-induced loss, DropTail = BDP);
- **S6** (Fig. 4.17): MulTFRC with n = 2, 4, or n TFRC flows, on 15 Mbit/s / 20 ms when a
  10 Mbit/s UDP flow starts at 9 s;
- **S8** (Figs. 4.23-4.26): MulTFRC(n) against n SACK TCP flows on a 20 ms bottleneck with the
  RED of Floyd et al. (2000) or DropTail, both 3 × BDP;
- **S9** (Figs. 4.28, 4.29): MulTFRC with 0 < n <= 2 against one TCP flow, 10 runs per point;
- **S10** (Fig. 4.27): S8 at 64 Mbit/s with a web background taking 10 %, 45 % or 75 % of the
  capacity, TCP against MulTFRC compared with TCP against TCP;
- **C** (§4.2.4, Figs. 4.30-4.32): the comparators CP, MulTCP and Stochastic TCP with n flow
  shares against n SACK flows on Fig. 4.23's RED 32 Mbit/s bottleneck, several runs per n.

The MulTFRC senders use ns-2's TFRC defaults (``profile = "ns2"``: 1000 B packets with a 32 B
header, as in the thesis, which built MulTFRC on ns-2's TFRC agent). ``docs/reproduce.md``
gives every choice the thesis leaves open.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .report import Section, figure_html, table_html
from .targets import Target

__all__ = ["Plan", "ProtocolPoint", "TARGETS", "evaluate", "measure", "plan", "points",
           "scenario", "sections"]

PAYLOAD_B = 1000
TCP_HEADER_B = 40
TFRC_HEADER_B = 32  # ns-2's Agent/TFRC headersize_, the 1032 B packets of §4.2.1
PP2 = 2.0
DEFAULT_MAX_TOTAL_N = 6.0  # draft-welzl-multfrc-01's system-wide cap, raised per run for n > 6
C_CAPACITY_MBPS = 32.0  # the comparators' bottleneck: Fig. 4.30's, and Fig. 4.23's for MulTFRC


@dataclass(frozen=True)
class ProtocolPoint:
    """One simulated condition of chapter 4."""

    setup: str              # "I1", "I2", "S6", "S8", "S9", "S10", "C" (comparators)
    queue: str              # "red" or "droptail"
    delay_ms: int           # bottleneck one-way delay
    capacity_mbps: float
    n: float                # MulTFRC's n (S6 with sender "tfrc": the number of TFRC flows)
    sender: str = "multfrc"  # "multfrc", "tfrc" (n TFRC flows), "tcp" (S10: n TCP as observed),
    #                          or a comparator (C): "cp", "multcp", "stochastic"
    j: str = "improved"     # "old" (improved_j_below = 0) or "improved" (below 12)
    loss: float = 0.0       # I1: Bernoulli loss probability
    background: float = 0.0  # S10: share of the capacity the web background offers
    rep: int = 0            # S9, C: the run's number (its flows draw from their own streams)
    prefix: bool = False    # the same run stopped at the end of the warm-up (I1, I2)

    @property
    def label(self) -> str:
        what = {"I1": f"loss {self.loss:g}", "I2": f"{self.capacity_mbps:g} Mbit/s",
                "S6": "UDP at 9 s", "S8": f"{self.capacity_mbps:g} Mbit/s",
                "S9": f"{self.capacity_mbps:g} Mbit/s run {self.rep}",
                "C": f"{self.capacity_mbps:g} Mbit/s run {self.rep}",
                "S10": f"background {self.background:.0%}"}[self.setup]
        who = f"{self.sender} n={self.n:g}" + (f" {self.j} j" if self.sender == "multfrc" else "")
        return f"{self.setup} {self.queue} {self.delay_ms} ms {who} {what}"

    @property
    def needs_prefix(self) -> bool:
        """Whether packets sent after the warm-up are needed (from the run's prefix twin)."""
        return self.setup in ("I1", "I2")


@dataclass(frozen=True)
class Plan:
    """The chapter-4 conditions and durations of one scale."""

    i1: dict[tuple[int, str], tuple[int, ...]]   # (delay_ms, queue) -> n, at the S1 losses
    i1_improved_n: tuple[int, ...]
    i1_improved_loss: tuple[float, ...]
    i2_capacity: tuple[float, ...]
    i2_n: tuple[int, ...]
    s6_n: tuple[int, ...]
    s8: dict[tuple[str, float], tuple[int, ...]]   # (queue, capacity) -> n
    s9_capacity: tuple[float, ...]
    s9_n: tuple[float, ...]
    s9_runs: int
    s10_background: tuple[float, ...]
    s10_n: tuple[int, ...]
    durations: dict[str, tuple[float, float]] = field(default_factory=dict)
    c_n: tuple[int, ...] = ()
    """The comparators' n (Figs. 4.31, 4.32); MulTFRC runs as a comparator at n = 4 only, for
    the smoothness of Fig. 4.30 (its other n are the S8 runs at the same capacity)."""
    c_runs: dict[str, int] = field(default_factory=dict)   # sender -> runs per n


def plan(scale: str, s1_loss: Sequence[float], s1_low_loss: Sequence[float],
         s2_capacity: Sequence[float]) -> Plan:
    """The chapter-4 plan of ``scale``; I1 and I2 reuse the S1 losses and S2 capacities."""
    if scale == "full":
        f424 = (1, 2, 5, 10, 15, 17, 20, 25, 30)
        wide = (1, 2, 5, 10, 15, 17, 20, 25, 30, 40, 50, 60, 70, 75, 80, 90, 100)
        s8: dict[tuple[str, float], tuple[int, ...]] = {}
        for c in (10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0):
            s8[("red", c)] = f424
            s8[("droptail", c)] = f424
        s8[("red", 32.0)] = wide
        s8[("red", 64.0)] = wide
        s8[("red", 128.0)] = wide
        return Plan(
            i1={(30, "red"): (5, 10, 50, 100), (100, "red"): (10, 50)},
            i1_improved_n=(5, 10), i1_improved_loss=(0.0001, 0.001, 0.003, 0.006, 0.06, 0.08),
            i2_capacity=tuple(s2_capacity), i2_n=(5, 10, 50, 100),
            s6_n=(2, 4), s8=s8,
            s9_capacity=(4.0, 8.0, 16.0, 32.0),
            s9_n=tuple(round(0.1 * k, 1) for k in range(1, 21)), s9_runs=10,
            s10_background=(0.10, 0.45, 0.75), s10_n=(2, 5, 10, 20, 30, 50, 100),
            durations={"I1": (460.0, 50.0), "I2": (600.0, 50.0), "S6": (20.0, 0.0),
                       "S8": (300.0, 15.0), "S9": (200.0, 15.0), "S10": (300.0, 15.0),
                       "C": (300.0, 15.0)},
            c_n=(2, 4, 5, 10, 15, 20, 30, 50),
            c_runs={"cp": 10, "multcp": 3, "stochastic": 3, "multfrc": 3},
        )
    if scale == "quick":
        return Plan(
            i1={(30, "red"): (5, 10)},
            i1_improved_n=(5,), i1_improved_loss=(0.001,),
            i2_capacity=(16.0, 128.0), i2_n=(5,),
            s6_n=(4,),
            s8={("red", 10.0): (30,), ("droptail", 10.0): (5,), ("red", 32.0): (10, 70),
                ("red", 64.0): (15,), ("red", 128.0): (15,)},
            s9_capacity=(8.0,), s9_n=(0.5, 1.5), s9_runs=2,
            s10_background=(0.10,), s10_n=(2,),
            durations={"I1": (120.0, 50.0), "I2": (150.0, 50.0), "S6": (20.0, 0.0),
                       "S8": (100.0, 15.0), "S9": (100.0, 15.0), "S10": (100.0, 15.0),
                       "C": (100.0, 15.0)},
            c_n=(4, 20), c_runs={"cp": 2, "multcp": 1, "stochastic": 1, "multfrc": 1},
        )
    if scale == "tiny":
        return Plan(
            i1={(30, "red"): (5,)}, i1_improved_n=(), i1_improved_loss=(),
            i2_capacity=(), i2_n=(), s6_n=(), s8={("red", 8.0): (2,)},
            s9_capacity=(), s9_n=(), s9_runs=0, s10_background=(), s10_n=(),
            durations={"I1": (6.0, 2.0), "S8": (6.0, 2.0)},
        )
    raise ValueError(f"scale: got {scale!r}")


def points(p: Plan, s1_loss: Sequence[float], s1_low_loss: Sequence[float]) -> list[ProtocolPoint]:
    """Every chapter-4 condition of a plan, with the prefix twins of those that need one."""
    out: list[ProtocolPoint] = []
    for (delay, queue), flows in p.i1.items():
        for n in flows:
            for loss in sorted(tuple(s1_loss) + (tuple(s1_low_loss) if n in (5, 10) else ())):
                out.append(ProtocolPoint("I1", queue, delay, 1000.0, n, j="old", loss=loss))
    for n in p.i1_improved_n:
        for loss in p.i1_improved_loss:
            out.append(ProtocolPoint("I1", "red", 30, 1000.0, n, j="improved", loss=loss))
    for n in p.i2_n:
        for c in p.i2_capacity:
            out.append(ProtocolPoint("I2", "droptail", 30, float(c), n, j="old"))
    for n in p.s6_n:
        for sender in ("multfrc", "tfrc"):
            out.append(ProtocolPoint("S6", "droptail", 20, 15.0, n, sender=sender))
    for (queue, c), flows in p.s8.items():
        for n in flows:
            out.append(ProtocolPoint("S8", queue, 20, c, n))
    for c in p.s9_capacity:
        for n in p.s9_n:
            for rep in range(p.s9_runs):
                out.append(ProtocolPoint("S9", "red", 20, c, n, rep=rep))
    for sender, runs in p.c_runs.items():
        for n in ((4,) if sender == "multfrc" else p.c_n):
            for rep in range(runs):
                out.append(ProtocolPoint("C", "red", 20, C_CAPACITY_MBPS, float(n),
                                         sender=sender, rep=rep))
    for share in p.s10_background:
        for n in p.s10_n:
            for sender in ("multfrc", "tcp"):
                out.append(ProtocolPoint("S10", "red", 20, 64.0, n, sender=sender,
                                         background=share))
    return out + [replace(x, prefix=True) for x in out if x.needs_prefix]


# ---------------------------------------------------------------------------------------------
# Scenarios


def _packets(rate_mbps: float, seconds: float, size_b: int) -> int:
    return max(2, round(rate_mbps * 1e6 * seconds / (8 * size_b)))


def _tcp(recovery: str, capacity_mbps: float, rtt_timing: str) -> dict[str, Any]:
    packet_ns = (PAYLOAD_B + TCP_HEADER_B) * 8 * 1000 / capacity_mbps
    tcp = {"recovery": recovery, "mss": f"{PAYLOAD_B}B", "header": f"{TCP_HEADER_B}B",
           "ack_size": "40B", "initial_window": 2, "rwnd": 100000, "delayed_ack": False,
           "rto_initial": "3s", "rto_min": "200ms", "timer_tick": "10ms",
           "rtt_timing": rtt_timing,
           # ns-2's overhead_ against phase effects, as in the model validation
           "send_jitter": f"{round(packet_ns)}ns"}
    if recovery == "sack":
        # ns-2's Agent/TCP/Sack1 clears recover_ when a fast recovery ends.
        tcp["recover"] = "after_timeout"
    return tcp


T_RTO: dict[str, dict[str, str]] = {
    "ns2": {},
    "tcp": {"t_rto": "tcp", "min_rto": "200ms", "clock_tick": "10ms"},
    "4r": {"t_rto": "4r"},
}
"""The equation's t_RTO for each value of ``Options.t_rto`` (TFRC keys over ``profile =
"ns2"``): ns-2's tick-based ``tzero_``; TCP's estimator with the competing TCP flows' 200 ms
minimum and 10 ms tick (RFC 2988, as the MulTFRC draft recommends); or 4R (RFC 5348)."""


def _equation_based(t_rto: str, rate_rule: str) -> dict[str, Any]:
    """The TFRC options every equation-based sender of chapter 4 shares."""
    return {"profile": "ns2", **T_RTO[t_rto], "rate_rule": rate_rule}


def _multfrc(point: ProtocolPoint, t_rto: str, rate_rule: str) -> dict[str, Any]:
    if point.sender == "tfrc":
        return _equation_based(t_rto, rate_rule)
    return {**_equation_based(t_rto, rate_rule), "equation": "multfrc", "n": point.n,
            "max_n": max(6.0, float(point.n)),
            "improved_j_below": 12 if point.j == "improved" else 0}


COMPARATORS = ("cp", "multcp", "stochastic")
"""The aggregate controllers the thesis compares MulTFRC with (§4.2.4)."""


def _comparator(point: ProtocolPoint, tcp: dict[str, Any], t_rto: str,
                rate_rule: str) -> dict[str, Any]:
    """The flow settings of one aggregate of n flows: CP (Ott, Sparks and Mayer-Patel 2004) as
    a TFRC flow, MulTCP (Crowcroft and Oechslin 1998) and Stochastic TCP (Hacker and Smith
    2008) as one TCP connection with the SACK flows' settings."""
    if point.sender == "cp":
        return {"transport": "tfrc", "tfrc": {**_equation_based(t_rto, rate_rule),
                                              "equation": "cp", "n": point.n}}
    return {"tcp": {**tcp, "cc": {"algo": point.sender, "n": point.n}}}


RED_MEAN_PKTSIZE = {"data_packet": f"{PAYLOAD_B + TCP_HEADER_B}B", "ns2_default": "500B"}
"""The ``mean_pktsize`` of the S8-S10 RED queue for each value of ``Options.red_mean_pktsize``
(resolution ``multfrc:A27``): the 1040-byte data packet, or ns-2's default of 500 bytes."""


def _s8_queue(point: ProtocolPoint, bdp: int, red_mean_pktsize: str) -> dict[str, Any]:
    # Floyd, Handley, Padhye and Widmer (2000), as the thesis took it: buffer 3 × BDP, RED
    # gentle with min_th = BDP/10 and max_th = BDP/3; ns-2's automatic weight, whose time
    # constant counts packets of mean_pktsize.
    if point.queue == "red":
        min_th = max(1.0, bdp / 10)
        return {"kind": "red", "limit": 3 * bdp, "gentle": True, "mode": "packets",
                "w_q": "auto", "mean_pktsize": RED_MEAN_PKTSIZE[red_mean_pktsize],
                "min_th": round(min_th, 3), "max_th": round(max(min_th + 1, bdp / 3), 3)}
    return {"kind": "droptail", "limit": 3 * bdp}


def scenario(point: ProtocolPoint, p: Plan, t_rto: str = "4r",
             rate_rule: str = "rfc5348", rtt_timing: str = "ns2",
             red_mean_pktsize: str = "data_packet") -> dict[str, Any]:
    """The flowshare scenario of one chapter-4 condition (seed set by the sweep); ``t_rto``
    picks the equation's t_RTO (:data:`T_RTO`) and ``rate_rule`` the TFRC rate rule
    (``docs/tfrc.md``) of every equation-based sender, ``rtt_timing`` the TCP flows' timer
    samples, ``red_mean_pktsize`` the RED queue's packet unit (:data:`RED_MEAN_PKTSIZE`)."""
    duration, warmup = p.durations[point.setup]
    if point.prefix:
        duration, warmup = warmup, 0.0
    setup = point.setup
    flows: list[dict[str, Any]] = []
    tag = f"r{point.rep}" if setup in ("S9", "C") else ""
    sample = "1s"
    if setup in ("I1", "I2"):
        rtt = 2 * (point.delay_ms + 2) / 1000
        bdp = _packets(point.capacity_mbps, rtt, PAYLOAD_B + TCP_HEADER_B)
        if point.queue == "red":
            queue = {"kind": "red", "limit": max(bdp, 50), "gentle": True,
                     "w_q": "auto", "min_th": "auto", "max_th": "auto"}
        else:
            queue = {"kind": "droptail", "limit": bdp}
        bottleneck: dict[str, Any] = {"rate": f"{point.capacity_mbps:g}Mbps",
                                      "delay": f"{point.delay_ms}ms", "queue": queue}
        if setup == "I1":
            bottleneck["loss"] = {"model": "bernoulli", "p": point.loss}
        access = {"rate": "10Gbps" if setup == "I1" else "1Gbps", "delay": "1ms",
                  "queue": {"limit": 100000}}
        flows.append({"name": "multfrc", "transport": "tfrc",
                      "tfrc": _multfrc(point, t_rto, rate_rule)})
    elif setup == "S6":
        rtt = 2 * (point.delay_ms + 2) / 1000
        bdp = _packets(point.capacity_mbps, rtt, PAYLOAD_B + TCP_HEADER_B)
        bottleneck = {"rate": "15Mbps", "delay": "20ms",
                      "queue": {"kind": "droptail", "limit": bdp}}
        access = {"rate": "100Mbps", "delay": "1ms", "queue": {"kind": "droptail", "limit": 1000}}
        group: dict[str, Any] = {"name": point.sender, "transport": "tfrc",
                                 "tfrc": _multfrc(point, t_rto, rate_rule)}
        if point.sender == "tfrc":
            group["count"] = int(point.n)
            group["start_spacing"] = "10ms"
        flows.append(group)
        flows.append({"name": "udp", "transport": "udp", "start": "9s",
                      "source": {"kind": "cbr", "rate": "10Mbps", "packet_size": "1000B"}})
        sample = "50ms"
    else:  # S8, S9, S10, C: MulTFRC (or a comparator) against TCP through a 20 ms bottleneck
        rtt = 2 * (point.delay_ms + 2 + 1) / 1000
        bdp = _packets(point.capacity_mbps, rtt, PAYLOAD_B + TCP_HEADER_B)
        bottleneck = {"rate": f"{point.capacity_mbps:g}Mbps", "delay": f"{point.delay_ms}ms",
                      "queue": _s8_queue(point, bdp, red_mean_pktsize)}
        access = {"rate": "10Gbps", "delay": "1ms", "queue": {"limit": 100000}}
        sides = {"src_access": {"delay": "2ms"}, "dst_access": {"delay": "1ms"}}
        n_tcp = 1 if setup == "S9" else int(point.n)
        tcp = _tcp("sack", point.capacity_mbps, rtt_timing)
        if point.sender == "tcp":   # S10's reference: n TCP flows observed in place of MulTFRC
            flows.append({"name": "observed", "count": int(point.n), "start_jitter": "1s",
                          "tcp": tcp, **sides})
        elif point.sender in COMPARATORS:
            flows.append({"name": "agg" + tag, **_comparator(point, tcp, t_rto, rate_rule),
                          **sides})
        else:
            flows.append({"name": "multfrc" + tag, "transport": "tfrc",
                          "tfrc": _multfrc(point, t_rto, rate_rule), **sides})
        flows.append({"name": "tcp" + tag, "count": n_tcp, "start_jitter": "1s", "tcp": tcp,
                      **sides})
        if setup == "C":
            sample = "200ms"
        if setup == "S10":
            # A web background: Poisson arrivals of TCP transfers with Pareto sizes (mean
            # 20 kB, shape 1.5) offering `background` of the capacity, in place of PackMime.
            mean_b = 20_000
            rate = point.background * point.capacity_mbps * 1e6 / (8 * mean_b)
            flows.append({"name": "web", "tcp": {"initial_window": 2, "rto_min": "200ms"},
                          "arrivals": {"process": "poisson", "rate": round(rate, 6),
                                       "size": {"dist": "pareto", "mean": f"{mean_b}B",
                                                "shape": 1.5}},
                          **sides})
            sample = "0s"
    total_n = (max(DEFAULT_MAX_TOTAL_N, float(point.n)) if point.sender == "multfrc"
               else DEFAULT_MAX_TOTAL_N)
    return {
        "simulation": {"duration": f"{duration:g}s", "warmup": f"{warmup:g}s",
                       "sample_interval": sample, "multfrc_max_total_n": total_n},
        "topology": {"kind": "dumbbell", "bottleneck": bottleneck, "access": access},
        "flows": flows,
    }


# ---------------------------------------------------------------------------------------------
# Measurement


def measure(run_dir: Path, prefix_dir: Path | None, point: ProtocolPoint,
            p: Plan) -> dict[str, Any]:
    """Throughputs, shares and loss of one chapter-4 run."""
    duration, warmup = p.durations[point.setup]
    span = duration - warmup
    flows = pd.read_csv(run_dir / "flows.csv")
    queues = pd.read_csv(run_dir / "queues.csv")
    bottleneck = queues[(queues["link"] == "r0-r1") & (queues["from"] == "r0")].iloc[0]
    row: dict[str, Any] = {**asdict(point), "part": "protocol", "label": point.label,
                           "utilisation": float(bottleneck["utilization"]) * 100,
                           "loss_rate": float(bottleneck["drop_rate"])}
    names = flows["name"].astype(str)
    multfrc = flows[names.str.startswith("multfrc") | names.str.startswith("agg")
                    | (names == "tfrc") | (names == "observed")]
    tcp = flows[names.str.startswith("tcp")]
    if point.needs_prefix and prefix_dir is not None:
        early = pd.read_csv(prefix_dir / "flows.csv")
        sent = float(multfrc["packets_sent"].sum() - early.loc[multfrc.index, "packets_sent"].sum())
        row["throughput"] = sent / span                      # pkt/s leaving the sender
        lost = float(multfrc["drops"].sum() + multfrc["link_losses"].sum()
                     - early.loc[multfrc.index, "drops"].sum()
                     - early.loc[multfrc.index, "link_losses"].sum())
        row["loss_rate"] = lost / sent if sent else math.nan
        row["j_final"] = float(multfrc["tfrc_j_final"].iloc[0])
        row["p_mean"] = float(multfrc["loss_event_rate_mean"].iloc[0])
    if point.setup == "S6":
        series = pd.read_parquet(run_dir / "timeseries.parquet")
        senders = flows.loc[flows["transport"].astype(str) == "tfrc", "flow"].to_numpy()
        series = series[(series["kind"].astype(str) == "flow") & series["id"].isin(senders)]
        rate = series.groupby("time_s")["send_rate_bps"].sum()
        row["response_s"] = response_time(rate, start_s=9.0, share_mbps=15.0 - 10.0)
        row["series"] = rate.to_json()
    if point.setup in ("S8", "S9", "S10", "C"):
        m = float(multfrc["steady_bytes_delivered"].sum()) * 8 / span    # bit/s, payload
        t = float(tcp["steady_bytes_delivered"].sum()) * 8 / span
        row["multfrc_bps"], row["tcp_bps"] = m, t
        # Loss seen by each side after the warm-up (the flows table's steady loss_rate), and
        # the last j MulTFRC's sender had: what explains a gap between the two.
        row["multfrc_loss_rate"] = float(multfrc["loss_rate"].mean())
        row["tcp_loss_rate"] = float(np.average(tcp["loss_rate"].fillna(0),
                                                weights=tcp["packets_sent"].clip(lower=1)))
        row["j_final"] = (float(multfrc["tfrc_j_final"].mean())
                          if point.sender in ("multfrc", "tcp") else math.nan)
        payload = point.capacity_mbps * 1e6 * PAYLOAD_B / (PAYLOAD_B + TCP_HEADER_B)
        if point.setup == "S10":
            web = flows_background_bps(run_dir, warmup, duration)
            row["background_bps"] = web
            payload = max(payload - web, 1.0)
        n_tcp = 1 if point.setup == "S9" else point.n
        n_m = point.n
        if point.setup == "S9":
            row["ratio"] = m / t if t else math.nan
            row["deviation"] = 100 * (row["ratio"] - point.n) / point.n
        else:
            norm = payload / (n_tcp + n_m)
            row["tcp_norm"] = t / (n_tcp * norm)
            row["multfrc_norm"] = m / (n_m * norm)
            row["difference"] = row["tcp_norm"] - row["multfrc_norm"]
        if point.setup == "C":
            row["tcp_over_agg"] = t / m if m else math.nan
            row["cov"] = rate_cov(run_dir, int(multfrc["flow"].iloc[0]), warmup)
    return row


def rate_cov(run_dir: Path, flow: int, warmup: float) -> float:
    """Coefficient of variation of a flow's sending rate over the samples after the warm-up:
    how much an aggregate's rate fluctuates (Fig. 4.30)."""
    series = pd.read_parquet(run_dir / "timeseries.parquet")
    series = series[(series["kind"].astype(str) == "flow") & (series["id"] == flow)
                    & (series["time_s"] > warmup)]
    rate = series["send_rate_bps"].to_numpy(float)
    return float(np.std(rate) / np.mean(rate)) if len(rate) and np.mean(rate) > 0 else math.nan


def flows_background_bps(run_dir: Path, warmup: float, duration: float) -> float:
    """Payload bit rate of the web transfers after the warm-up (bytes of transfers that
    completed in the window, spread over it; what is cut at either end roughly cancels)."""
    path = run_dir / "transfers.parquet"
    if not path.is_file():
        return 0.0
    t = pd.read_parquet(path)
    t = t[t["name"].astype(str) == "web"]
    done = t["start_s"] + t["completion_time_s"]
    inside = t[(t["start_s"] >= warmup) & (done <= duration)]
    return float(inside["size_bytes"].sum()) * 8 / (duration - warmup)


def response_time(rate_bps: pd.Series, start_s: float, share_mbps: float,
                  within: float = 0.1) -> float:
    """Seconds from ``start_s`` until the rate first falls to ``(1 + within)`` × the share
    left (``share_mbps``) and stays there for the next sample too; NaN if it never does."""
    after = rate_bps[rate_bps.index > start_s]
    limit = (1 + within) * share_mbps * 1e6
    below = (after.to_numpy() <= limit)
    times = after.index.to_numpy(float)
    for k in range(len(below) - 1):
        if below[k] and below[k + 1]:
            # a sample at t covers (t − interval, t]: the rate was reached within it
            return float(times[k] - start_s)
    return math.nan


# ---------------------------------------------------------------------------------------------
# Targets


def _t(id: str, description: str, published: float, tolerance: float, comparison: str = "close",
       kind: str = "absolute") -> Target:
    return Target(id, description, published, tolerance, comparison, kind)


TARGETS: tuple[Target, ...] = (
    # §4.2.1, MulTFRC in isolation, against the n TCP flows of the model validation
    _t("M.S1.30ms.low_loss_gap",
       "S1 30 ms RED, old j: largest shortfall of MulTFRC below TCP for loss < 2.7%, % of TCP",
       1.1, 0.0, "at_most"),
    _t("M.S1.30ms.0.1pct.n5", "S1 30 ms RED, 0.1% loss, n = 5: MulTFRC below TCP, %", 2.7, PP2),
    _t("M.S1.30ms.0.1pct.n10", "S1 30 ms RED, 0.1% loss, n = 10: MulTFRC below TCP, %", 3.7, PP2),
    _t("M.S1.30ms.0.1pct.n50", "S1 30 ms RED, 0.1% loss, n = 50: MulTFRC below TCP, %", 4.8, PP2),
    _t("M.S1.30ms.0.1pct.n100", "S1 30 ms RED, 0.1% loss, n = 100: MulTFRC below TCP, %",
       4.9, PP2),
    _t("M.S1.30ms.gap_over_5pct_from_loss",
       "S1 30 ms RED: lowest loss (%) at which MulTFRC is > 5% from TCP", 5.0, 0.0, "at_least"),
    _t("M.S1.30ms.gap_over_10pct_from_loss",
       "S1 30 ms RED: lowest loss (%) at which MulTFRC is > 10% from TCP", 6.9, 0.0, "at_least"),
    _t("M.S1.100ms.max_gap", "S1 100 ms RED: largest MulTFRC-TCP difference up to 10% loss, %",
       4.5, 0.0, "at_most"),
    _t("M.S1.100ms.0.1pct.n10", "S1 100 ms RED, 0.1% loss, n = 10: MulTFRC below TCP, %",
       3.6, PP2),
    _t("M.S1.100ms.0.1pct.n50", "S1 100 ms RED, 0.1% loss, n = 50: MulTFRC below TCP, %",
       4.0, PP2),
    _t("M.S1.improved_j.low_loss_excess",
       "S1 with improved j, loss < 1%: largest MulTFRC excess over TCP, %", 15.0, 0.0, "at_most"),
    _t("M.S2.droptail.utilisation",
       "S2 DropTail: mean bottleneck utilisation with MulTFRC alone, %", 99.0, 1.0, "at_least"),
    _t("M.S4.response_time.n4",
       "Fig. 4.17: MulTFRC n = 4 reaches the new rate after UDP starts, s", 0.8, 0.2),
    _t("M.S4.response_time.tfrc4", "Fig. 4.17: 4 TFRC flows reach the new rate, s", 1.0, 0.2),
    _t("M.S8.red32.threshold_n",
       "Fig. 4.23, RED 32 Mbit/s: largest n up to which every normalised TCP-MulTFRC "
       "difference is <= 0.1", 70.0, 0.0, "at_least"),
    _t("M.F424a.utilisation", "Fig. 4.24(a), RED 10-70 Mbit/s: smallest link utilisation, %",
       93.0, 0.0, "at_least"),
    _t("M.F424a.tcp_share", "Fig. 4.24(a): smallest TCP share of its fair share, %",
       90.0, 0.0, "at_least"),
    _t("M.F424a.10mbps.n30.multfrc_share",
       "Fig. 4.24(a), 10 Mbit/s, n = 30: MulTFRC share of its fair share, %", 82.0, 5.0),
    _t("M.F424b.utilisation", "Fig. 4.24(b), DropTail 10-70 Mbit/s: smallest link utilisation, %",
       97.0, 0.0, "at_least"),
    _t("M.F425.min_normalised", "Fig. 4.25, 64 Mbit/s: smallest normalised throughput",
       0.89, 0.03),
    _t("M.F425.max_normalised", "Fig. 4.25, 64 Mbit/s: largest normalised throughput",
       1.01, 0.03),
    _t("M.F426.min_normalised", "Fig. 4.26, 128 Mbit/s: smallest normalised throughput",
       0.8, 0.03),
    _t("M.F426.max_normalised", "Fig. 4.26, 128 Mbit/s: largest normalised throughput",
       1.08, 0.03),
    _t("M.F427.10pct.n2.excess",
       "Fig. 4.27, 10% web background, n = 2: TCP's throughput against MulTFRC over that "
       "against TCP, minus 1, %", 8.0, PP2),
    _t("M.F430.cp_fluctuates_more",
       "Fig. 4.30, RED 32 Mbit/s, 4 flow shares: CP's sending-rate coefficient of variation "
       "over MulTFRC(4)'s (the thesis: CP fluctuates more, > 1)", 1.0, 0.0, "at_least"),
    _t("M.F431.cp_error_grows_with_n",
       "Fig. 4.31, RED 32 Mbit/s: rank correlation of n with CP's mean |TCP/CP - 1| (the "
       "thesis: CP's error grows with n, > 0)", 0.0, 0.0, "at_least"),
    _t("M.F428.mean_deviation",
       "Fig. 4.28, 8 Mbit/s, 0.3 < n <= 2: largest |mean deviation| from the fair share, %",
       4.0, 0.0, "at_most"),
    _t("M.F429.deviation",
       "Fig. 4.29, 4-32 Mbit/s, loss >= 0.1%: largest |mean deviation| from the fair share, %",
       10.0, 0.0, "at_most"),
)

Result = tuple["float | None", str]


def _pick(frame: pd.DataFrame, **where: Any) -> pd.DataFrame:
    mask = np.ones(len(frame), dtype=bool)
    for key, value in where.items():
        column = frame[key]
        mask &= (np.isclose(column.to_numpy(float), value) if isinstance(value, float)
                 else (column == value).to_numpy())
    return frame[mask]


def isolation_gaps(protocol: pd.DataFrame, model: pd.DataFrame) -> pd.DataFrame:
    """I1 runs joined with the TCP runs of the same S1 condition: ``gap`` = (TCP − MulTFRC)
    / TCP in % (positive: MulTFRC below TCP); ``tcp_model_b`` is Model B at the TCP flows' own
    inputs, where the model rows have it."""
    i1 = protocol[protocol["setup"] == "I1"]
    if i1.empty or model.empty or "throughput" not in model:
        return pd.DataFrame(columns=[*i1.columns, "tcp_throughput", "tcp_loss", "gap"])
    columns = ["queue", "delay_ms", "n", "loss", "throughput", "p_r"]
    columns += ["model_b"] if "model_b" in model else []
    tcp = model[model["setup"] == "S1"][columns]
    tcp = tcp.rename(columns={"throughput": "tcp_throughput", "p_r": "tcp_loss",
                              "model_b": "tcp_model_b"})
    if i1.empty or tcp.empty:
        return pd.DataFrame(columns=[*i1.columns, "tcp_throughput", "tcp_loss", "gap"])
    merged = i1.drop(columns=["n"]).assign(n=i1["n"].astype(int)).merge(
        tcp, on=["queue", "delay_ms", "n", "loss"], how="inner")
    merged["gap"] = 100 * (merged["tcp_throughput"] - merged["throughput"]) / merged[
        "tcp_throughput"]
    return merged


COLUMNS = ("setup", "queue", "delay_ms", "capacity_mbps", "n", "sender", "j", "loss",
           "background", "rep", "throughput", "utilisation", "loss_rate", "response_s",
           "tcp_norm", "multfrc_norm", "difference", "ratio", "deviation", "tcp_bps",
           "multfrc_bps")
"""The columns of the measured rows the targets read (missing ones are NaN)."""


def _complete(frame: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in COLUMNS if c not in frame.columns]
    return frame.reindex(columns=[*frame.columns, *missing]) if missing else frame


def _measures(protocol: pd.DataFrame, model: pd.DataFrame) -> dict[str, Callable[[], Result]]:
    protocol = _complete(protocol)
    gaps = isolation_gaps(protocol, model)
    old30 = gaps[(gaps["j"] == "old") & (gaps["delay_ms"] == 30)]
    old100 = gaps[(gaps["j"] == "old") & (gaps["delay_ms"] == 100)]
    improved = gaps[gaps["j"] == "improved"]

    def at(frame: pd.DataFrame, n: int, loss: float, what: str) -> Result:
        f = frame[(frame["n"] == n) & np.isclose(frame["loss"], loss)]
        if f.empty:
            return None, f"no {what} run with n = {n} at {loss:.1%} loss at this scale"
        return float(f["gap"].mean()), _against_model(f, n)

    def low_loss_gap() -> Result:
        f = old30[old30["loss"] < 0.027]
        if f.empty:
            return None, "no I1 30 ms run below 2.7% loss at this scale"
        return float(max(0.0, f["gap"].max())), ""

    def first_loss_over(limit: float) -> Callable[[], Result]:
        def m() -> Result:
            if old30.empty:
                return None, "no I1 30 ms run at this scale"
            over = old30[old30["gap"].abs() > limit]
            if over.empty:
                return float(old30["loss"].max() * 100), (
                    f"no run is more than {limit:g}% from TCP; the value is the largest loss run")
            return float(over["loss"].min() * 100), ""
        return m

    def max_gap_100() -> Result:
        if old100.empty:
            return None, "no I1 100 ms run at this scale"
        k = old100["gap"].abs().idxmax()
        worst = old100.loc[[k]]
        return float(old100["gap"].abs().max()), (
            f"largest at n = {worst['n'].iloc[0]:g} and {worst['loss'].iloc[0]:.1%} loss: "
            + _against_model(worst, int(worst["n"].iloc[0]), thesis=False))

    def improved_excess() -> Result:
        f = improved[improved["loss"] < 0.01]
        if f.empty:
            return None, "no improved-j I1 run below 1% loss at this scale"
        return float(max(0.0, -f["gap"].min())), ""

    def utilisation_i2() -> Result:
        f = protocol[protocol["setup"] == "I2"]
        if f.empty:
            return None, "no I2 run at this scale"
        return float(f["utilisation"].mean()), ""

    def response(sender: str) -> Callable[[], Result]:
        def m() -> Result:
            f = _pick(protocol, setup="S6", sender=sender, n=4.0)
            if f.empty:
                return None, "no S6 run with n = 4 at this scale"
            value = float(f["response_s"].mean())
            if not math.isfinite(value):
                return None, "the rate never fell to within 10% of the share left by UDP"
            return value, ""
        return m

    s8 = protocol[protocol["setup"] == "S8"]

    def threshold() -> Result:
        f = _pick(s8, queue="red", capacity_mbps=32.0).sort_values("n")
        if f.empty:
            return None, "no S8 RED 32 Mbit/s run at this scale"
        bad = f[f["difference"].abs() > 0.1]
        if bad.empty:
            return float(f["n"].max()), ""
        first = float(bad["n"].min())
        below = f[f["n"] < first]
        return (float(below["n"].max()) if not below.empty else 0.0), (
            "" if first > 70 else f"the difference exceeds 0.1 at n = {first:g} "
            f"({float(bad.iloc[0]['difference']):+.3f})")

    f424 = s8[s8["capacity_mbps"].isin([10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0])]
    red424, dt424 = f424[f424["queue"] == "red"], f424[f424["queue"] == "droptail"]

    def smallest(frame: pd.DataFrame, column: str, what: str, scale: float = 1.0) -> Result:
        if frame.empty:
            return None, f"no {what} run at this scale"
        k = frame[column].idxmin()
        note = f"at {frame.loc[k, 'capacity_mbps']:g} Mbit/s, n = {frame.loc[k, 'n']:g}"
        return float(frame[column].min() * scale), note

    def share_10_30() -> Result:
        f = _pick(red424, capacity_mbps=10.0, n=30.0)
        if f.empty:
            return None, "no S8 RED 10 Mbit/s run with n = 30 at this scale"
        return float(f["multfrc_norm"].mean() * 100), ""

    def extreme(capacity: float, largest: bool) -> Callable[[], Result]:
        def m() -> Result:
            f = _pick(s8, queue="red", capacity_mbps=capacity)
            if f.empty:
                return None, f"no S8 RED {capacity:g} Mbit/s run at this scale"
            both = pd.concat([f.assign(norm=f["tcp_norm"], who="the TCP flows"),
                              f.assign(norm=f["multfrc_norm"], who="MulTFRC")],
                             ignore_index=True)
            w = both.loc[both["norm"].idxmax() if largest else both["norm"].idxmin()]
            return float(w["norm"]), (
                f"{w['who']} at n = {w['n']:g}, where MulTFRC lost {w['multfrc_loss_rate']:.2%} "
                f"of its packets and the TCP flows {w['tcp_loss_rate']:.2%}")
        return m

    def web_excess() -> Result:
        s10 = _pick(protocol[protocol["setup"] == "S10"], background=0.10, n=2.0)
        against_m = s10[s10["sender"] == "multfrc"]
        against_t = s10[s10["sender"] == "tcp"]
        if against_m.empty or against_t.empty:
            return None, "no S10 run with n = 2 at 10% background at this scale"
        return float(100 * (against_m["tcp_bps"].mean() / against_t["tcp_bps"].mean() - 1)), ""

    s9 = protocol[protocol["setup"] == "S9"]
    s9_mean = (s9.groupby(["capacity_mbps", "n"]).agg(deviation=("deviation", "mean"),
                                                      loss=("loss_rate", "mean")).reset_index()
               if not s9.empty else pd.DataFrame(columns=["capacity_mbps", "n", "deviation",
                                                          "loss"]))

    def f428() -> Result:
        f = s9_mean[np.isclose(s9_mean["capacity_mbps"].astype(float), 8.0)
                    & (s9_mean["n"] > 0.3)]
        if f.empty:
            return None, "no S9 8 Mbit/s run with n > 0.3 at this scale"
        k = f["deviation"].abs().idxmax()
        return float(f["deviation"].abs().max()), f"largest at n = {f.loc[k, 'n']:g}"

    def f429() -> Result:
        f = s9_mean[s9_mean["loss"] >= 0.001]
        if f.empty:
            return None, "no S9 run with loss >= 0.1% at this scale"
        k = f["deviation"].abs().idxmax()
        return float(f["deviation"].abs().max()), (
            f"largest at {f.loc[k, 'capacity_mbps']:g} Mbit/s, n = {f.loc[k, 'n']:g}")

    comparators = protocol[protocol["setup"] == "C"]

    def cp_smoothness() -> Result:
        cp = _pick(comparators, sender="cp", n=4.0)
        mf = _pick(comparators, sender="multfrc", n=4.0)
        if cp.empty or mf.empty:
            return None, "no comparator run of CP and MulTFRC with n = 4 at this scale"
        return float(cp["cov"].mean() / mf["cov"].mean()), (
            f"CoV {cp['cov'].mean():.3f} (CP) and {mf['cov'].mean():.3f} (MulTFRC)")

    def cp_error_trend() -> Result:
        cp = _pick(comparators, sender="cp")
        if cp.empty:
            return None, "no comparator run of CP at this scale"
        error = (cp["tcp_over_agg"] - 1).abs().groupby(cp["n"]).mean()
        if len(error) < 3:
            return None, "fewer than three n of CP at this scale"
        rho = float(stats.spearmanr(error.index.to_numpy(float), error.to_numpy()).statistic)
        return rho, f"mean |TCP/CP - 1| {error.iloc[0]:.2f} at n = {error.index[0]:g}, " \
                    f"{error.iloc[-1]:.2f} at n = {error.index[-1]:g}"

    return {
        "M.F430.cp_fluctuates_more": cp_smoothness,
        "M.F431.cp_error_grows_with_n": cp_error_trend,
        "M.S1.30ms.low_loss_gap": low_loss_gap,
        "M.S1.30ms.0.1pct.n5": lambda: at(old30, 5, 0.001, "I1 30 ms"),
        "M.S1.30ms.0.1pct.n10": lambda: at(old30, 10, 0.001, "I1 30 ms"),
        "M.S1.30ms.0.1pct.n50": lambda: at(old30, 50, 0.001, "I1 30 ms"),
        "M.S1.30ms.0.1pct.n100": lambda: at(old30, 100, 0.001, "I1 30 ms"),
        "M.S1.30ms.gap_over_5pct_from_loss": first_loss_over(5.0),
        "M.S1.30ms.gap_over_10pct_from_loss": first_loss_over(10.0),
        "M.S1.100ms.max_gap": max_gap_100,
        "M.S1.100ms.0.1pct.n10": lambda: at(old100, 10, 0.001, "I1 100 ms"),
        "M.S1.100ms.0.1pct.n50": lambda: at(old100, 50, 0.001, "I1 100 ms"),
        "M.S1.improved_j.low_loss_excess": improved_excess,
        "M.S2.droptail.utilisation": utilisation_i2,
        "M.S4.response_time.n4": response("multfrc"),
        "M.S4.response_time.tfrc4": response("tfrc"),
        "M.S8.red32.threshold_n": threshold,
        "M.F424a.utilisation": lambda: smallest(red424, "utilisation", "S8 RED 10-70 Mbit/s"),
        "M.F424a.tcp_share": lambda: smallest(red424, "tcp_norm", "S8 RED 10-70 Mbit/s", 100),
        "M.F424a.10mbps.n30.multfrc_share": share_10_30,
        "M.F424b.utilisation": lambda: smallest(dt424, "utilisation",
                                                "S8 DropTail 10-70 Mbit/s"),
        "M.F425.min_normalised": extreme(64.0, False),
        "M.F425.max_normalised": extreme(64.0, True),
        "M.F426.min_normalised": extreme(128.0, False),
        "M.F426.max_normalised": extreme(128.0, True),
        "M.F427.10pct.n2.excess": web_excess,
        "M.F428.mean_deviation": f428,
        "M.F429.deviation": f429,
    }


THESIS_ABOVE_MODEL = {5: 2.0}
"""§4.2.1 at 0.1 % loss: MulTFRC above Model B, % (1 % for every other n)."""
THESIS_TCP_ABOVE_MODEL = 5.0
"""§4.2.1 at 0.1 % loss: the TCP flows above Model B, % (MulTFRC 1-2 % above the model and
2.7-4.9 % below the TCP flows)."""


def _against_model(gaps: pd.DataFrame, n: int, thesis: bool = True) -> str:
    """Where a gap between MulTFRC and the TCP flows comes from: each side against Model B at
    the TCP flows' own inputs, with ``thesis`` beside the thesis's at 0.1 % loss (its MulTFRC
    1-2 % above the model and 2.7-4.9 % below the TCP flows, so its model about 5 % below
    them)."""
    if "tcp_model_b" not in gaps or gaps["tcp_model_b"].isna().all():
        return ""
    model_b = float(gaps["tcp_model_b"].mean())
    mine = 100 * (float(gaps["throughput"].mean()) / model_b - 1)
    tcp = 100 * (float(gaps["tcp_throughput"].mean()) / model_b - 1)
    if not thesis:
        larger = ("Model B and the TCP flows" if abs(tcp) > abs(mine)
                  else "MulTFRC and Model B")
        return (f"MulTFRC sent {mine:+.1f} % from Model B at the TCP flows' own p_e, j and RTT "
                f"({model_b:.0f} pkt/s) and the TCP flows {tcp:+.1f} %: the larger part of the "
                f"gap lies between {larger}")
    thesis_mine = THESIS_ABOVE_MODEL.get(n, 1.0)
    where = ("how far the model is from the TCP flows, not in MulTFRC's following it"
             if abs(tcp - THESIS_TCP_ABOVE_MODEL) > abs(mine - thesis_mine)
             else "how far MulTFRC is from the model")
    return (f"MulTFRC sent {mine:+.1f} % from Model B at the TCP flows' own p_e, j and RTT "
            f"({model_b:.0f} pkt/s; the thesis: {thesis_mine:+g} %) and the TCP flows "
            f"{tcp:+.1f} % (the thesis: about {THESIS_TCP_ABOVE_MODEL:+g} %): the difference "
            f"from the thesis lies mostly in {where}")


def evaluate(protocol: pd.DataFrame, model: pd.DataFrame) -> list[Target]:
    """The chapter-4 targets evaluated against the measured runs."""
    measures = _measures(protocol, model)
    out = []
    for target in TARGETS:
        value, note = measures[target.id]()
        if value is None:
            out.append(target.unmeasured(note))
            continue
        done = target.evaluate(value)
        if not done.passed and note:
            done = target.evaluate(value, f"{done.note}; {note}")
        out.append(done.explained(WHY_MISSED.get(target.id, "")))
    return out


_CONGESTED = ("the gap comes from n = 100 (and 50) at 0.01 % random loss, where MulTFRC's "
              "equation allows more than the 1 Gbit/s link carries: under RFC 5348's rate rule "
              "it overshoots by up to twice the receive rate and loses hundreds of packets in "
              "one loss event (j of several hundred), which the equation reads as every flow "
              "hit; `rate_rule = \"ns2\"` (ns-2's additive increase) narrows it "
              "(docs/reproduce.md)")
WHY_MISSED: dict[str, str] = {
    "M.S1.30ms.low_loss_gap": _CONGESTED,
    "M.S1.30ms.gap_over_5pct_from_loss": _CONGESTED,
    "M.S1.30ms.gap_over_10pct_from_loss": _CONGESTED,
    "M.S4.response_time.n4": ("MulTFRC still reacts faster than four TFRC flows, as in the "
                              "thesis; both react sooner than there"),
    "M.S4.response_time.tfrc4": ("MulTFRC still reacts faster than four TFRC flows, as in the "
                                 "thesis; both react sooner than there"),
}
"""Why a chapter-4 target misses, where a measurement shows it; added to the note of a
miss. The t_RTO and rate-rule sensitivity of every target is in docs/reproduce.md."""


# ---------------------------------------------------------------------------------------------
# Report sections


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _open(protocol: pd.DataFrame, setup: str, title: str,
          paragraphs: list[str]) -> tuple[Section, pd.DataFrame]:
    """A report section for ``setup`` and its runs; a section without runs says so."""
    section = Section(title, paragraphs=paragraphs)
    runs = protocol[protocol["setup"] == setup]
    if runs.empty:
        section.paragraphs.append("No run of this group at this scale.")
    return section, runs


def _isolation_section(protocol: pd.DataFrame, model: pd.DataFrame) -> Section:
    section = Section(
        "MulTFRC alone under random loss against n TCP flows (Figs. 4.3-4.9)",
        paragraphs=["Thesis (S1, 30 ms, old j): MulTFRC is always slightly below TCP, less than "
                    "1.1% below 2.7% loss; at 0.1% loss 2.7%, 3.7%, 4.8% and 4.9% below for n = "
                    "5, 10, 50, 100; more than 5% off only above 5% loss and more than 10% only "
                    "above 6.9%. At 100 ms the difference stays within 4.5%. With the improved j "
                    "MulTFRC is up to 15% above TCP at low loss.",
                    "The TCP values are the model-validation runs of the same condition (n Reno "
                    "flows); both throughputs are packets leaving the sender per second."])
    gaps = isolation_gaps(protocol, model)
    if gaps.empty:
        section.paragraphs.append("No run of this group at this scale.")
        return section
    plt = _plt()
    groups = sorted({(int(d), j) for d, j in zip(gaps["delay_ms"], gaps["j"], strict=True)})
    fig, axes = plt.subplots(1, len(groups), figsize=(5 * len(groups), 3.6), squeeze=False)
    for ax, (delay, j) in zip(axes[0], groups, strict=True):
        f = gaps[(gaps["delay_ms"] == delay) & (gaps["j"] == j)]
        for n in sorted(f["n"].unique()):
            g = f[f["n"] == n].sort_values("loss")
            ax.plot(g["loss"] * 100, -g["gap"], marker="o", label=f"n = {n}")
        ax.axhline(0, color="black", lw=0.6)
        ax.set_xscale("log")
        ax.set_xlabel("loss model p [%]")
        ax.set_ylabel("MulTFRC − TCP [% of TCP]")
        ax.set_title(f"{delay} ms, {j} j")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    section.parts.append(figure_html(fig, "MulTFRC against n TCP flows in the same S1 condition"))
    body = [[r["delay_ms"], r["j"], r["n"], r["loss"], r["tcp_throughput"], r["throughput"],
             r["gap"], r["p_mean"], r["j_final"]]
            for _, r in gaps.sort_values(["delay_ms", "j", "n", "loss"]).iterrows()]
    section.parts.append(table_html(
        ("delay ms", "j", "n", "loss model p", "TCP pkt/s", "MulTFRC pkt/s",
         "MulTFRC below TCP %", "MulTFRC p (mean)", "j (last)"), body))
    return section


def _i2_section(protocol: pd.DataFrame) -> Section:
    section, f = _open(
        protocol, "I2", "MulTFRC alone, self-induced loss, DropTail (Figs. 4.10-4.12)",
        paragraphs=["Thesis: utilisation about 99%."])
    if f.empty:
        return section
    body = [[r["n"], r["capacity_mbps"], r["throughput"], r["utilisation"], r["loss_rate"]]
            for _, r in f.sort_values(["n", "capacity_mbps"]).iterrows()]
    section.parts.append(table_html(("n", "Mbit/s", "pkt/s sent", "utilisation %",
                                     "loss rate"), body))
    return section


def _s6_section(protocol: pd.DataFrame) -> Section:
    section, f = _open(
        protocol, "S6", "Responsiveness: a 10 Mbit/s UDP flow starts at 9 s (Fig. 4.17)",
        paragraphs=["Thesis: MulTFRC with n = 4 reaches the new rate in 0.8 s, 4 TFRC flows in "
                    "1 s; for n = 2 the difference is small. Here the response time is the time "
                    "from 9 s until the sending rate (50 ms samples) is within 10% of the "
                    "5 Mbit/s the UDP flow leaves, for two samples in a row."])
    if f.empty:
        return section
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for _, r in f.iterrows():
        rate = pd.read_json(io.StringIO(r["series"]), typ="series")
        ax.plot(rate.index.astype(float), rate.to_numpy() / 1e6,
                label=f"{r['sender']} n = {r['n']:g}")
    ax.axvline(9, color="grey", ls="--")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("sending rate [Mbit/s]")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    section.parts.append(figure_html(fig, "Sending rate of MulTFRC and of n TFRC flows"))
    body = [[r["sender"], r["n"], r["response_s"]] for _, r in f.iterrows()]
    section.parts.append(table_html(("sender", "n", "response time s"), body))
    return section


def _s8_section(protocol: pd.DataFrame) -> Section:
    section, f = _open(
        protocol, "S8", "MulTFRC against n TCP flows (Figs. 4.23-4.26)",
        paragraphs=["Thesis: at 32 Mbit/s RED the normalised difference exceeds 0.1 only for "
                    "n >= 70; over 10-70 Mbit/s RED utilisation > 93% and TCP > 90% of its share "
                    "(MulTFRC about 82% at 10 Mbit/s, n = 30); DropTail utilisation > 97%; at "
                    "64 Mbit/s all normalised values lie in 0.89-1.01, at 128 Mbit/s in "
                    "0.8-1.08. Normalised throughput: B / (n · BW / 2n), ideal 1."])
    if f.empty:
        return section
    plt = _plt()
    cells = sorted({(q, c) for q, c in zip(f["queue"], f["capacity_mbps"], strict=True)})
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    for q, c in cells:
        g = f[(f["queue"] == q) & (f["capacity_mbps"] == c)].sort_values("n")
        axes[0].plot(g["n"], g["tcp_norm"], marker="o", label=f"TCP, {q} {c:g} Mbit/s")
        axes[1].plot(g["n"], g["multfrc_norm"], marker="s", label=f"MulTFRC, {q} {c:g} Mbit/s")
    for ax, what in zip(axes, ("TCP", "MulTFRC"), strict=True):
        ax.axhline(1, color="black", lw=0.6)
        ax.set_xlabel("n")
        ax.set_ylabel(f"normalised {what} throughput")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    section.parts.append(figure_html(fig, "Normalised throughput of n TCP flows and of MulTFRC(n)"))
    body = [[r["queue"], r["capacity_mbps"], r["n"], r["tcp_norm"], r["multfrc_norm"],
             r["difference"], r["utilisation"], r["loss_rate"], r["tcp_loss_rate"],
             r["multfrc_loss_rate"], r["j_final"]]
            for _, r in f.sort_values(["queue", "capacity_mbps", "n"]).iterrows()]
    section.parts.append(table_html(("queue", "Mbit/s", "n", "TCP norm.", "MulTFRC norm.",
                                     "difference", "utilisation %", "drop rate",
                                     "TCP loss rate", "MulTFRC loss rate", "MulTFRC j (last)"),
                                    body))
    return section


def _s9_section(protocol: pd.DataFrame) -> Section:
    section, f = _open(
        protocol, "S9", "Non-integer n against one TCP flow (Figs. 4.28, 4.29)",
        paragraphs=["Thesis: at 8 Mbit/s the mean deviation from the fair share (MulTFRC/TCP = n) "
                    "is at most 4% except n = 0.1 and 0.2 (about 15%); over 4-32 Mbit/s below 10% "
                    "except where loss < 0.1%."])
    if f.empty:
        return section
    g = f.groupby(["capacity_mbps", "n"]).agg(ratio=("ratio", "mean"),
                                              deviation=("deviation", "mean"),
                                              sd=("deviation", "std"),
                                              loss=("loss_rate", "mean"),
                                              runs=("rep", "count")).reset_index()
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for c in sorted(g["capacity_mbps"].unique()):
        h = g[g["capacity_mbps"] == c]
        ax.errorbar(h["n"], h["deviation"], yerr=h["sd"].fillna(0), marker="o", capsize=2,
                    label=f"{c:g} Mbit/s")
    ax.axhline(0, color="black", lw=0.6)
    ax.set_xlabel("n")
    ax.set_ylabel("deviation from the fair share [%]")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    section.parts.append(figure_html(fig, "MulTFRC/TCP against n: mean and sd over the runs"))
    body = [[r["capacity_mbps"], r["n"], r["ratio"], r["deviation"], r["sd"], r["loss"],
             r["runs"]] for _, r in g.iterrows()]
    section.parts.append(table_html(("Mbit/s", "n", "MulTFRC/TCP", "deviation %", "sd %",
                                     "drop rate", "runs"), body))
    return section


def _s10_section(protocol: pd.DataFrame) -> Section:
    section, f = _open(
        protocol, "S10", "With a web background (Fig. 4.27)",
        paragraphs=["Thesis (64 Mbit/s): with 10% background and n = 2, TCP against MulTFRC gets "
                    "8% more than TCP against TCP. The background here is Poisson arrivals of "
                    "TCP transfers with Pareto sizes (mean 20 kB, shape 1.5), not PackMime-HTTP."])
    if f.empty:
        return section
    body = [[r["background"], r["n"], r["sender"], r["tcp_bps"] / 1e6, r["multfrc_bps"] / 1e6,
             r["background_bps"] / 1e6, r["tcp_norm"], r["multfrc_norm"], r["utilisation"]]
            for _, r in f.sort_values(["background", "n", "sender"]).iterrows()]
    section.parts.append(table_html(("background", "n", "observed", "TCP Mbit/s",
                                     "observed Mbit/s", "web Mbit/s", "TCP norm.",
                                     "observed norm.", "utilisation %"), body))
    return section


def _comparator_section(protocol: pd.DataFrame) -> Section:
    section, c = _open(
        protocol, "C",
        "MulTFRC and the aggregate controllers it was compared with (Figs. 4.30-4.32)",
        paragraphs=["Thesis: CP fluctuates more than MulTFRC (Fig. 4.30); its error grows with n "
                    "and repeated runs differ significantly (Fig. 4.31, 10 runs per n); MulTCP "
                    "is reasonable up to n = 10, cannot do 0 < n < 1 and fluctuates (Fig. 4.32); "
                    "Stochastic TCP performs poorly at these bandwidths. Each aggregate of n "
                    f"shares runs against n SACK flows, RED {C_CAPACITY_MBPS:g} Mbit/s, 20 ms; "
                    "MulTFRC's points are the S8 runs there. The ratio is the n TCP flows' "
                    "throughput over the aggregate's (ideal 1)."])
    if c.empty:
        return section
    s8 = _pick(protocol[protocol["setup"] == "S8"], queue="red", capacity_mbps=C_CAPACITY_MBPS)
    s8 = s8.assign(tcp_over_agg=s8["tcp_bps"] / s8["multfrc_bps"])
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 3.8))
    for sender, frame in [("multfrc", s8[s8["n"] <= max(c["n"])])] + [
            (x, c[c["sender"] == x]) for x in COMPARATORS]:
        if frame.empty:
            continue
        g = frame.groupby("n")["tcp_over_agg"]
        mean, low, high = g.mean(), g.min(), g.max()
        ax.errorbar(mean.index, mean, yerr=[mean - low, high - mean], marker="o", capsize=3,
                    label={"multfrc": "MulTFRC", "cp": "CP", "multcp": "MulTCP",
                           "stochastic": "Stochastic TCP"}[sender])
    ax.axhline(1, color="black", lw=0.6)
    ax.set_xlabel("n")
    ax.set_ylabel("TCP throughput / aggregate's")
    ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    section.parts.append(figure_html(fig, "n TCP flows against one aggregate of n: mean and "
                                          "range over the runs"))
    summary = (c.groupby(["sender", "n"])
               .agg(runs=("tcp_over_agg", "size"), ratio=("tcp_over_agg", "mean"),
                    low=("tcp_over_agg", "min"), high=("tcp_over_agg", "max"),
                    cov=("cov", "mean"), utilisation=("utilisation", "mean"),
                    loss=("loss_rate", "mean")).reset_index())
    body = [[r["sender"], r["n"], r["runs"], r["ratio"], r["low"], r["high"], r["cov"],
             r["utilisation"], r["loss"]] for _, r in summary.iterrows()]
    section.parts.append(table_html(("aggregate", "n", "runs", "TCP/aggregate", "min", "max",
                                     "rate CoV", "utilisation %", "loss rate"), body))
    return section


def sections(protocol: pd.DataFrame, model: pd.DataFrame) -> list[Section]:
    """The chapter-4 sections of the report."""
    return [_isolation_section(protocol, model), _i2_section(protocol), _s6_section(protocol),
            _s8_section(protocol), _s9_section(protocol), _s10_section(protocol),
            _comparator_section(protocol)]
