"""The simulated networks of the PA-MulTCP study: one dumbbell per experiment.

F.-C. Kuo and X. Fu, *Probe-Aided MulTCP: An Aggregate Congestion Control Mechanism*, ACM
SIGCOMM Computer Communication Review 38(1), 2008. Every experiment (§3.2 and §5) shares one
drop-tail bottleneck with a 50 ms delay and a buffer of one bandwidth-delay product, SACK TCP,
1500-byte packets and unconstrained windows; they differ in the bandwidth, the flows and the
duration:

- ``model``: one AIMD loop alone under Bernoulli loss (the throughput model of §3, eqs. 1-2);
- ``s3``: MulTCP(2) and MulTCP(20) against 200 TCP flows at 400 Mbit/s (§3.2, Fig. 2);
- ``fair``: one PA-MulTCP(N) or MulTCP(N) aggregate against 200 − N TCP flows at 200 or
  400 Mbit/s (§5.1, Figs. 4 and 5);
- ``transient``: PA-MulTCP(10) or MulTCP(10) against 20 TCP flows at 120 Mbit/s with a CBR
  flow between 300 and 600 s (§5.2, Figs. 6 and 7);
- ``short``: PA-MulTCP(4) or MPAT(4) against 20 TCP flows at 5 Mbit/s, one member joining the
  aggregate at 50 s with a finite transfer (§5.3, Figs. 8 and 9).

:func:`scenario` builds the flowshare scenario (a mapping) of one :class:`Case`. What the paper
leaves open is a named field of :class:`Options` (``docs/reproduce.md``, "pamultcp", and the
``pamultcp:`` entries of ``docs/resolutions.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .._core import ConfigError

__all__ = ["CHOICES", "EXPERIMENTS", "OPTIONS", "PACKET_B", "RTT_S", "SCHEMES", "Case", "Options",
           "Timing", "buffer_packets", "scenario"]

RTT_S = 0.1
"""The nominal round-trip time: the 50 ms bottleneck twice, access delays zero (§5.2 equates
7-8 RTTs with 700-800 ms)."""
DELAY_MS = 50
PACKET_B = 1500
"""Data packets on the wire (``pamultcp:A26``): 1460 bytes of payload and a 40-byte header."""
HEADER_B = 40
PAYLOAD_B = PACKET_B - HEADER_B
ACCESS_FACTOR = 10
"""Access links are this many times faster than the bottleneck (``pamultcp:A2``)."""
START_SPREAD_S = 10.0
"""Every flow starts at a random time uniform in [0, 10] s (``pamultcp:A3``)."""

EXPERIMENTS = ("model", "s3", "fair", "transient", "short")
SCHEMES = ("tcp", "aimd", "multcp", "pamultcp", "mpat")
"""``tcp`` and ``aimd`` only in the model check; the aggregates elsewhere."""


@dataclass(frozen=True)
class Options:
    """Resolutions of what the paper leaves open; each field's values are in :data:`CHOICES`."""

    buffer: str = "round_trip"
    """The bottleneck buffer, "the delay-bandwidth product" (``pamultcp:A1``): ``round_trip``,
    rate × 100 ms in 1500-byte packets (3333, 1667, 1000 and 42 packets at 400, 200, 120 and
    5 Mbit/s); or ``one_way``, rate × 50 ms."""
    timers: str = "ns2"
    """TCP's timers (``pamultcp:A17``): ``ns2``, ns-2.29's Sack1 agent: one timed segment per
    RTT in 10 ms ticks, an initial RTO of 3 s and a minimum of 1 s; or ``ns2_minrto_200ms``,
    the same with the 200 ms minimum of later ns-2 releases."""
    initial_window: int = 2
    """``windowInit_`` (``pamultcp:A17``): 2 (ns-2.29's default) or 1."""
    multcp_loss_policy: str = "multcp"
    """MulTCP's rule at a timeout (``pamultcp:A16``), the ``multcp`` algorithm's
    ``loss_policy``: ``multcp``, ``halve_on_timeout`` or ``ns2``."""
    multcp_slow_start: str = "standard"
    """MulTCP's slow start (``pamultcp:A27``): ``standard`` (+1 per ACK, ns-2's parameter-based
    MulTCP) or ``triple`` (the original paper's ×3 per RTT up to N flows' window)."""
    s3_runs: str = "together"
    """Fig. 2 (``pamultcp:A23``): ``together``, MulTCP(2), MulTCP(20) and 200 TCP flows in one
    simulation, as §3.2's sentence reads; or ``separate``, one simulation per MulTCP."""
    cbr_mbps: int = 60
    """The CBR rate of §5.2 (``pamultcp:A18``), not given by the paper: 60 Mbit/s (half the
    bottleneck), or 30 or 90."""
    trace_rate: str = "sending"
    """The aggregate's rate in the 0.1 s bins of §5.2's response and recovery times
    (``pamultcp:A29``): ``sending`` (packets sent, retransmissions included, as the CoV of
    §5.1) or ``goodput`` (payload delivered)."""
    send_jitter: str = "none"
    """Against drop-tail phase effects (``pamultcp:A2``): ``none``, as the paper mentions
    nothing of the kind; or ``bottleneck_packet``, every TCP segment leaves a random time in
    [0, one packet's transmission time at the bottleneck] after it could (ns-2's
    ``overhead_``, tcp ``send_jitter``)."""
    kilobyte: int = 1000
    """Bytes per KB in §5.3's transfer sizes and initial ssthresh (``pamultcp:A20``): 1000 or
    1024."""

    def __post_init__(self) -> None:
        for name, allowed in CHOICES.items():
            value = getattr(self, name)
            if isinstance(value, bool) or value not in allowed:
                raise ConfigError(
                    f"options.{name}: expected one of {', '.join(map(str, allowed))}, "
                    f"got {value!r}")


CHOICES: dict[str, tuple[Any, ...]] = {
    "buffer": ("round_trip", "one_way"),
    "timers": ("ns2", "ns2_minrto_200ms"),
    "initial_window": (2, 1),
    "multcp_loss_policy": ("multcp", "halve_on_timeout", "ns2"),
    "multcp_slow_start": ("standard", "triple"),
    "s3_runs": ("together", "separate"),
    "cbr_mbps": (60, 30, 90),
    "trace_rate": ("sending", "goodput"),
    "send_jitter": ("none", "bottleneck_packet"),
    "kilobyte": (1000, 1024),
}
"""The values each field of :class:`Options` allows (the first is the default)."""

OPTIONS = Options()


@dataclass(frozen=True)
class Case:
    """One simulated condition.

    ``scheme`` is the aggregate's controller (``multcp``, ``pamultcp``, ``mpat``; in the model
    check ``tcp`` or ``aimd``); ``n`` its weight; ``size_kb`` and ``ssthresh_kb`` the joining
    transfer and the initial ssthresh of §5.3; ``loss`` the Bernoulli loss of the model check;
    ``multcp_n`` the MulTCP weights of one Fig. 2 simulation.
    """

    experiment: str
    scheme: str = "multcp"
    bandwidth_mbps: float = 0.0
    n: int = 1
    size_kb: int = 0
    ssthresh_kb: int = 0
    loss: float = 0.0
    multcp_n: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.experiment not in EXPERIMENTS:
            raise ConfigError(f"case.experiment: expected one of {', '.join(EXPERIMENTS)}, "
                              f"got {self.experiment!r}")
        if self.scheme not in SCHEMES:
            raise ConfigError(f"case.scheme: expected one of {', '.join(SCHEMES)}, "
                              f"got {self.scheme!r}")
        if not self.bandwidth_mbps > 0:
            raise ConfigError(f"case.bandwidth_mbps: expected a rate > 0, "
                              f"got {self.bandwidth_mbps!r}")
        if not (isinstance(self.n, int) and self.n >= 1):
            raise ConfigError(f"case.n: expected an integer >= 1, got {self.n!r}")
        if self.experiment == "fair" and self.n >= 200:
            raise ConfigError(f"case.n: the aggregate and 200 − N TCP flows need N < 200, "
                              f"got {self.n}")
        if self.experiment == "short" and not (self.size_kb > 0 and self.ssthresh_kb > 0):
            raise ConfigError("case: a short-transfer case needs size_kb and ssthresh_kb > 0")
        if self.experiment == "model" and not 0 < self.loss < 1:
            raise ConfigError(f"case.loss: expected a probability in (0, 1), got {self.loss!r}")

    @property
    def label(self) -> str:
        """E.g. ``fair-pamultcp-N10-200Mbps``."""
        if self.experiment == "model":
            return f"model-{self.scheme}-N{self.n}-p{self.loss:g}"
        if self.experiment == "s3":
            return "s3-multcp" + "+".join(map(str, self.multcp_n))
        if self.experiment == "short":
            return (f"short-{self.scheme}-N{self.n}-{self.size_kb}KB-"
                    f"ssthresh{self.ssthresh_kb}KB")
        return f"{self.experiment}-{self.scheme}-N{self.n}-{self.bandwidth_mbps:g}Mbps"


@dataclass(frozen=True)
class Timing:
    """The times of one experiment at a scale: run length, the discarded start, and for
    ``transient`` the CBR on and off times, for ``short`` the join time."""

    duration_s: float
    warmup_s: float = 0.0
    on_s: float = 0.0
    off_s: float = 0.0


def buffer_packets(bandwidth_mbps: float, options: Options = OPTIONS) -> int:
    """The bottleneck buffer in 1500-byte packets: the bandwidth-delay product (``A1``)."""
    delay = RTT_S if options.buffer == "round_trip" else RTT_S / 2
    return max(2, round(bandwidth_mbps * 1e6 * delay / (8 * PACKET_B)))


def _tcp(options: Options, bandwidth_mbps: float, cc: Any = "reno",
         ssthresh_pkts: float | None = None) -> dict[str, Any]:
    """SACK TCP as ns-2.29's Sack1 agent with the study's packets (``A17``, ``A26``)."""
    tcp: dict[str, Any] = {
        "cc": cc, "recovery": "sack", "mss": f"{PAYLOAD_B}B", "header": f"{HEADER_B}B",
        "ack_size": "40B", "delayed_ack": False, "initial_window": options.initial_window,
        "rwnd": 10_000_000, "rtt_timing": "ns2", "timer_tick": "10ms", "rto_initial": "3s",
        "rto_min": "1s" if options.timers == "ns2" else "200ms",
    }
    if ssthresh_pkts is not None:
        tcp["initial_ssthresh"] = ssthresh_pkts
    if options.send_jitter == "bottleneck_packet":
        tcp["send_jitter"] = f"{round(PACKET_B * 8 * 1000 / bandwidth_mbps)}ns"
    return tcp


def _multcp(n: int, options: Options) -> dict[str, Any]:
    return {"algo": "multcp", "n": n, "slow_start": options.multcp_slow_start,
            "loss_policy": options.multcp_loss_policy}


def aggregate_cc(case: Case, options: Options = OPTIONS) -> Any:
    """The aggregate's ``tcp.cc``: MulTCP(N), PA-MulTCP(N) or MPAT(N); in the model check
    Reno (``tcp``) or AIMD(√N, 2/(1 + 3N^1.5)) (``aimd``)."""
    if case.scheme == "multcp":
        return _multcp(case.n, options)
    if case.scheme in ("pamultcp", "mpat"):
        return {"algo": case.scheme, "n": case.n}
    if case.scheme == "aimd":
        return {"algo": "aimd", "a": math.sqrt(case.n), "b": 2 / (1 + 3 * case.n ** 1.5)}
    return "reno"


def _flow(name: str, tcp: dict[str, Any], count: int = 1) -> dict[str, Any]:
    flow: dict[str, Any] = {"name": name, "tcp": tcp, "start_jitter": f"{START_SPREAD_S:g}s"}
    if count != 1:
        flow["count"] = count
    return flow


def scenario(case: Case, timing: Timing, options: Options = OPTIONS, *,
             sample_interval_s: float = 0.0) -> dict[str, Any]:
    """The flowshare scenario of ``case`` (the seed is set by the sweep).

    The aggregate is always flow 0 (group ``agg``; in Fig. 2 the groups ``multcp2`` and
    ``multcp20`` come first), the background TCP flows the group ``tcp``, the CBR flow ``cbr``.
    """
    if not timing.duration_s > 0:
        raise ConfigError(f"timing.duration_s: expected a number > 0, got {timing.duration_s!r}")
    if sample_interval_s < 0:
        raise ConfigError(f"sample_interval_s: expected a number ≥ 0, got {sample_interval_s!r}")
    bw = case.bandwidth_mbps
    bottleneck: dict[str, Any] = {
        "rate": f"{bw:g}Mbps", "delay": f"{DELAY_MS}ms",
        "queue": {"kind": "droptail", "limit": buffer_packets(bw, options)},
    }
    flows: list[dict[str, Any]]
    if case.experiment == "model":
        # One loop alone: an uncongested bottleneck whose buffer never fills, Bernoulli loss.
        bottleneck["queue"] = {"kind": "droptail", "limit": 100_000}
        bottleneck["loss"] = {"model": "bernoulli", "p": case.loss}
        flows = [_flow("agg", _tcp(options, bw, aggregate_cc(case, options)))]
    elif case.experiment == "s3":
        flows = [_flow(f"multcp{n}", _tcp(options, bw, _multcp(n, options)))
                 for n in case.multcp_n]
        flows.append(_flow("tcp", _tcp(options, bw), 200))
    elif case.experiment == "fair":
        flows = [_flow("agg", _tcp(options, bw, aggregate_cc(case, options))),
                 _flow("tcp", _tcp(options, bw), 200 - case.n)]
    elif case.experiment == "transient":
        flows = [_flow("agg", _tcp(options, bw, aggregate_cc(case, options))),
                 _flow("tcp", _tcp(options, bw), 20),
                 {"name": "cbr", "transport": "udp", "start": f"{timing.on_s:g}s",
                  "stop": f"{timing.off_s:g}s",
                  "source": {"kind": "cbr", "rate": f"{options.cbr_mbps}Mbps",
                             "packet_size": f"{PACKET_B - 28}B"}}]
    else:  # short
        kb = options.kilobyte
        ssthresh = case.ssthresh_kb * kb / PACKET_B   # pamultcp:A20, not rounded
        agg = _flow("agg", _tcp(options, bw, aggregate_cc(case, options), ssthresh))
        agg["aggregate"] = {"joins": [{"at": f"{timing.on_s:g}s",
                                       "size": f"{case.size_kb * kb}B"}]}
        flows = [agg, _flow("tcp", _tcp(options, bw, "reno", ssthresh), 20)]
    simulation: dict[str, Any] = {"duration": f"{timing.duration_s:g}s",
                                  "warmup": f"{timing.warmup_s:g}s",
                                  "sample_interval": f"{sample_interval_s:g}s"}
    return {
        "simulation": simulation,
        "topology": {
            "kind": "dumbbell",
            "bottleneck": bottleneck,
            "access": {"rate": f"{ACCESS_FACTOR * bw:g}Mbps", "delay": "0ms",
                       "queue": {"limit": 100_000}},
        },
        "flows": flows,
    }


