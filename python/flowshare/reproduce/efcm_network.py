"""The simulated network and workload of one case of the EFCM study.

M. Savorić and H. Karl, *Performance Evaluation of an Improved Common Congestion Controller
for WWW-based TCP Connections*, Technical Report TKN-04-007, Telecommunication Networks Group,
Technische Universität Berlin, 2004. §3.1 gives the network, §3.2 the WWW workload and §5 the
cases: a minimum RTT of 20, 60, 100 or 500 ms, a reliable or unreliable (5 % loss) last hop,
and NewReno with or without the EFCM controller on the server's connections.

:func:`scenario` builds the flowshare scenario (a mapping) of one :class:`Case`. What the
report leaves open is a named field of :class:`Options` (``docs/reproduce.md``, "efcm", and
the ``efcm:`` entries of ``docs/resolutions.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._core import ConfigError

__all__ = ["CASES", "CHOICES", "MIN_RTTS_MS", "OPTIONS", "PAYLOAD_B", "WWW_GROUPS", "Case",
           "Options", "core_delay_s", "scenario"]

MIN_RTTS_MS = (20, 60, 100, 500)
"""The minimum RTTs of simulations 1-4 (§5)."""
LAST_HOP_LOSS = 0.05
"""The unreliable scenario's packet loss rate on the receiver LAN (§3.1)."""
PAYLOAD_B = 1460
"""The study's MSS: throughput is counted in segments of this payload (§3.1)."""
LAN_DELAY_S = 0.5e-6
WWW_GROUPS = ("S1", "S2", "S3")
"""The flow groups of the server's three WWW sources; S<i> sends to R<i>."""
BACKGROUND_GROUPS = ("BS1", "BS2")

# Table 3.1's page size, which the background senders use too (resolution efcm:A9).
PAGE_SIZE = {"dist": "pareto", "shape": 1.7584, "scale": "30458B"}


@dataclass(frozen=True)
class Case:
    """One simulated case: simulation 1-4 by its minimum RTT, the last hop, the controller."""

    min_rtt_ms: int
    unreliable: bool = False
    efcm: bool = False

    def __post_init__(self) -> None:
        if self.min_rtt_ms not in MIN_RTTS_MS:
            raise ConfigError(f"case.min_rtt_ms: expected one of "
                              f"{', '.join(map(str, MIN_RTTS_MS))}, got {self.min_rtt_ms!r}")

    @property
    def label(self) -> str:
        """E.g. ``rtt100-unreliable-efcm``."""
        hop = "unreliable" if self.unreliable else "reliable"
        return f"rtt{self.min_rtt_ms}-{hop}-{'efcm' if self.efcm else 'newreno'}"


CASES = tuple(Case(r, u, e) for r in MIN_RTTS_MS for u in (False, True) for e in (False, True))
"""The study's 16 cases: 4 RTTs × 2 last hops × without and with EFCM."""


@dataclass(frozen=True)
class Options:
    """Resolutions of what the report leaves open; each field's values are in :data:`CHOICES`."""

    br1: str = "router2"
    """Where background receiver BR1 sits (Figure 3.1 is missing, ``efcm:A2``): ``router2``,
    on its own 100 Mbit/s, 0.25 ms link to router 2, mirroring BS2 at router 1, so that the
    BS1 flow shares the core but not the receiver LAN; or ``receiver_lan``."""
    core_delay: str = "rtt_minus_lans"
    """How the minimum RTT is set (the text gives one 30 ms core link, ``efcm:A3``):
    ``rtt_minus_lans``, the core link's one-way delay is min RTT / 2 less the two LANs' 0.5 µs,
    so the WWW paths' propagation RTT is exactly the case's; or ``half_rtt``, min RTT / 2."""
    key: str = "network"
    """The EFCM ensemble key (``efcm:A1``): ``network``, all of the server's connections to the
    receiver LAN form one ensemble; or ``receiver``, one per receiver host."""
    leave: str = "keep"
    """EFCM's leave rule (``efcm:A5``): ``keep`` the leaver's share in the aggregate, or
    ``drop`` it."""
    background: str = "restart"
    """The background senders (``efcm:A9``): ``restart``, one connection at a time with Table
    3.1's Pareto page sizes, reopened the instant it completes; or ``bulk``, one unending
    connection each."""
    pages_rounding: str = "nearest"
    """Pages per session from the lognormal draw x (``efcm:A8``): ``nearest``, max(1, round(x));
    or ``up``, ⌈x⌉."""
    tcp_timers: str = "ns2"
    """The RTT estimator and timer (``efcm:A15``): ``ns2``, ns-2.1b9's defaults (one timed segment
    per round trip in 100 ms ticks, an initial RTO of 6 s, at least two ticks); or ``rfc6298``,
    every ACK timed with a 1 ms clock, an initial RTO of 1 s and a minimum of 200 ms."""
    rwnd: str = "large"
    """The receiver window (``efcm:A15``, a calibration knob): ``large``, 1000 segments, which
    never limits; or ``ns2``, ns-2's default of 20 segments."""

    sink: str = "per_segment"
    """The receivers' acknowledgements (``efcm:A15``): ``per_segment``, one ACK per data segment
    (ns-2's ``TCPSink``); or ``delayed``, one per two segments or after 100 ms (ns-2's
    ``TCPSink/DelAck`` with its default ``interval_``)."""

    period_counter: str = "acked"
    """What a concurrent connection's throughput in a period of concurrency counts
    (``efcm:A12``): ``acked``, the payload acknowledged during the period (its goodput there);
    or ``sent``, the new data first sent during the period."""

    def __post_init__(self) -> None:
        for name, allowed in CHOICES.items():
            value = getattr(self, name)
            if value not in allowed:
                raise ConfigError(
                    f"options.{name}: expected one of {', '.join(allowed)}, got {value!r}")


CHOICES: dict[str, tuple[str, ...]] = {
    "br1": ("router2", "receiver_lan"),
    "core_delay": ("rtt_minus_lans", "half_rtt"),
    "key": ("network", "receiver"),
    "leave": ("keep", "drop"),
    "background": ("restart", "bulk"),
    "pages_rounding": ("nearest", "up"),
    "tcp_timers": ("ns2", "rfc6298"),
    "rwnd": ("large", "ns2"),
    "sink": ("per_segment", "delayed"),
    "period_counter": ("acked", "sent"),
}
"""The values each field of :class:`Options` allows."""

OPTIONS = Options()


def core_delay_s(case: Case, options: Options = OPTIONS) -> float:
    """One-way delay of the router-to-router link (resolution ``efcm:A3``)."""
    half = case.min_rtt_ms / 2000
    return half - 2 * LAN_DELAY_S if options.core_delay == "rtt_minus_lans" else half


def _tcp(options: Options) -> dict[str, Any]:
    """NewReno with the study's MSS, initial window and ssthresh (§3.1) and an ns-2 sink."""
    tcp: dict[str, Any] = {
        "cc": "reno", "recovery": "newreno", "mss": f"{PAYLOAD_B}B", "header": "40B",
        "ack_size": "40B", "delayed_ack": options.sink == "delayed", "initial_window": 3,
        "initial_ssthresh": 44, "rwnd": 1000 if options.rwnd == "large" else 20,
    }
    if options.sink == "delayed":
        tcp.update(delack_count=2, delack_timeout="100ms")
    if options.tcp_timers == "ns2":
        tcp.update(rtt_timing="ns2", timer_tick="100ms", rto_initial="6s", rto_min="200ms")
    else:
        tcp.update(rtt_timing="every_ack", timer_tick="1ms", rto_initial="1s", rto_min="200ms")
    return tcp


def scenario(case: Case, options: Options = OPTIONS, *, duration_s: float = 250_000.0,
             sample_interval_s: float = 0.0, seed: int | None = None) -> dict[str, Any]:
    """The flowshare scenario of ``case``: §3.1's network with §3.2's workload.

    ``duration_s`` defaults to the report's 250,000 s per run; ``sample_interval_s`` > 0 adds
    time series (cwnd, SRTT of every open connection), which long runs should not.
    """
    if not duration_s > 0:
        raise ConfigError(f"duration_s: expected a number > 0, got {duration_s!r}")
    if sample_interval_s < 0:
        raise ConfigError(f"sample_interval_s: expected a number ≥ 0, got {sample_interval_s!r}")
    receivers = ["router2", "R1", "R2", "R3", "BR2"]
    links: list[dict[str, Any]] = [
        # Routers buffer 20 packets per link (§3.1); hosts and LAN stations 50 (efcm:A4).
        {"from": "router1", "to": "router2", "rate": "100Mbps",
         "delay": f"{core_delay_s(case, options) * 1e9:.0f}ns", "queue": {"limit": 20}},
        {"from": "BS2", "to": "router1", "rate": "100Mbps", "delay": "0.25ms",
         "queue": {"limit": 50}, "reverse": {"queue": {"limit": 20}}},
    ]
    if options.br1 == "router2":
        links.append({"from": "router2", "to": "BR1", "rate": "100Mbps", "delay": "0.25ms",
                      "queue": {"limit": 20}, "reverse": {"queue": {"limit": 50}}})
    else:
        receivers.append("BR1")
    receiver_lan: dict[str, Any] = {
        "name": "receiver_lan", "nodes": receivers, "rate": "10Mbps", "delay": "0.5us",
        "queue": {"limit": 50}, "queues": {"router2": {"limit": 20}},
    }
    if case.unreliable:
        receiver_lan["loss"] = {"model": "bernoulli", "p": LAST_HOP_LOSS}
    lans = [
        {"name": "sender_lan", "nodes": ["server", "BS1", "router1"], "rate": "100Mbps",
         "delay": "0.5us", "queue": {"limit": 50}, "queues": {"router1": {"limit": 20}}},
        receiver_lan,
    ]
    www_tcp = _tcp(options)
    if case.efcm:
        www_tcp["ensemble"] = {"controller": "efcm", "key": options.key, "leave": options.leave}
    flows: list[dict[str, Any]] = [
        {"name": group, "src": "server", "dst": f"R{i}", "tcp": dict(www_tcp),
         "arrivals": {"process": "sessions", "model": "reyes_lecuona", "sources": 1,
                      "pages_rounding": options.pages_rounding}}
        for i, group in enumerate(WWW_GROUPS, start=1)
    ]
    for group, dst in zip(BACKGROUND_GROUPS, ("BR1", "BR2"), strict=True):
        flow: dict[str, Any] = {"name": group, "src": group, "dst": dst, "tcp": _tcp(options)}
        if options.background == "restart":
            flow["arrivals"] = {"process": "closed_loop", "users": 1, "think": "0s",
                                "size": dict(PAGE_SIZE)}
        flows.append(flow)
    simulation: dict[str, Any] = {"duration": f"{duration_s:g}s",
                                  "sample_interval": f"{sample_interval_s:g}s"}
    if seed is not None:
        simulation["seed"] = seed
    return {
        "simulation": simulation,
        "topology": {
            "kind": "graph",
            "nodes": ["server", "BS1", "BS2", "router1", "router2", "R1", "R2", "R3", "BR1",
                      "BR2"],
            "links": links,
            "lans": lans,
        },
        "flows": flows,
    }
