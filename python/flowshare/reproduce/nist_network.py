"""Provisioning of the three-tier network of Mills et al. (2010), "Comparing Congestion Control
Regimes in a Heterogeneous Network", ch. 8 of K. Mills et al., *Study of Proposed Internet
Congestion Control Mechanisms*, NIST SP 500-282: router speeds from the base speed x1
(Table 8-8, Table 8-15 in Gbit/s), buffers of RTT × C × x3 (Table 8-18), and the shares of
sources and receivers by access-router class (Tables 8-9 to 8-11).

Speeds are in packets per millisecond of 1500-byte packets, as the study gives them. The
study's own simulator, MesoNet, is not public; what this module holds is what the chapter
states, and the tests check it against the chapter's printed tables.
"""

from __future__ import annotations

import functools
import math
from collections import Counter, deque
from dataclasses import dataclass

import numpy as np

PACKET_B = 1500
"""The packet size that Table 8-15's Gbit/s imply: 3200 packets/ms × 12,000 bit = 38.4 Gbit/s."""

BASE_SPEEDS = (800, 1600)
"""x1, the base network speed, at −1 and +1 (Table 8-2), packets/ms."""
DELAY_MULTIPLIERS = (1, 2)
"""x2, the propagation-delay multiplier, at −1 and +1 (Table 8-2)."""
BUFFER_FACTORS = (0.5, 1.0)
"""x3, the buffer scaling factor, at −1 and +1 (Table 8-2)."""

BB_SPEEDUP = 2
"""Backbone router speed = x1 × BBspeedup (Table 8-8)."""
R2 = 4
"""POP router speed = x1 / R2 (Table 8-8)."""
R3 = 10
"""Normal access router speed = x1 / R2 / R3 (Table 8-8)."""
B_DIRECT = 10
"""An access router directly connected to a backbone router: normal speed × Bdirect."""
B_FAST = 2
"""A fast access router: normal speed × Bfast. At x1 = −1 that is 40 packets/ms (480 Mbit/s),
where Table 8-15 prints 720 Mbit/s; Table 8-8 and the access buffers of Table 8-18 agree with
480 (resolution ``nist:A2``)."""
HOST_BASIC = 8
"""A host's interface, packets/ms (Table 8-8, "e.g., 100 Mbps")."""
HOST_FAST = 80
"""A fast host's interface, packets/ms ("e.g., 1 Gbps")."""

RTT_MS = 40.6908
"""The round-trip time of the buffer rule at x2 = 1. Table 8-18's backbone and POP rows are
RTT × C × x3 with one RTT for every router, the mean propagation delay of Table 8-17
(41 ms): 65,105 = 1600 × 40.6906, 260,422 = 3200 × 2 × 40.6909, 146,487 = 3600 × 40.6908."""

ROUTER_CLASSES = ("backbone", "pop", "direct", "fast", "normal")


def check_probabilities(**factors: float) -> None:
    """Refuse a factor that should be a probability (x7, x8) and is not, naming it."""
    for name, p in factors.items():
        if not 0 <= p <= 1:
            raise ValueError(f"{name}: a probability in [0, 1], got {p}")


def speeds(x1: float) -> dict[str, float]:
    """Router speeds in packets/ms for base speed ``x1`` (Table 8-8)."""
    if x1 <= 0:
        raise ValueError(f"x1: the base speed must be positive packets/ms, got {x1}")
    normal = x1 / R2 / R3
    return {"backbone": x1 * BB_SPEEDUP, "pop": x1 / R2, "direct": normal * B_DIRECT,
            "fast": normal * B_FAST, "normal": normal}


def gbps(packets_per_ms: float) -> float:
    """A speed in packets/ms as Gbit/s of 1500-byte packets (Table 8-15)."""
    return packets_per_ms * PACKET_B * 8 * 1000 / 1e9


def buffer_packets(capacity: float, x2: float, x3: float, rtt_ms: float = RTT_MS) -> float:
    """A router's buffer, RTT × C × x3 packets (§8.1.1.2, "QszAlg"), with the RTT scaled by
    the propagation-delay multiplier ``x2``."""
    if capacity <= 0 or x2 <= 0 or x3 <= 0:
        raise ValueError(f"capacity, x2 and x3 must be positive, got {capacity}, {x2}, {x3}")
    return x3 * capacity * rtt_ms * x2


@dataclass(frozen=True)
class BufferRange:
    """Smallest, mean and largest buffer of a router class over the four (x1, x2) pairs."""

    min: float
    avg: float
    max: float


def buffer_table(capacity_at: dict[float, float], x3: float) -> BufferRange:
    """Table 8-18's row for a router class whose speed at base speed x1 is
    ``capacity_at[x1]``: its buffer over the four combinations of x1 and x2, at ``x3``."""
    sizes = [buffer_packets(capacity_at[x1], x2, x3) for x1 in BASE_SPEEDS for x2 in DELAY_MULTIPLIERS]
    return BufferRange(min(sizes), sum(sizes) / len(sizes), max(sizes))


SOURCE_PLACEMENT = {"normal": 0.1, "fast": 0.6, "direct": 0.3}
"""P(Ns), P(Nsf), P(Nsd): the probability that a source is put under an access router of each
class (Table 8-9)."""
RECEIVER_PLACEMENT = {"normal": 0.6, "fast": 0.2, "direct": 0.2}
"""P(Nr), P(Nrf), P(Nrd) (Table 8-9)."""
SOURCE_SHARES = {"direct": 0.06, "fast": 0.58, "normal": 0.36}
"""The resulting shares of sources by access class (Table 8-10); they depend on how many
routers of each class the topology has, which the chapter does not give."""
RECEIVER_SHARES = {"direct": 0.02, "fast": 0.08, "normal": 0.90}
"""The resulting shares of receivers (Table 8-10)."""
PATH_CLASS_P = {"VF": 1.070e-3, "F": 61.479e-3, "T": 937.451e-3}
"""P(path class) of a flow (Table 8-11): very fast (both ends under directly connected access
routers), fast (direct or fast at both ends, not both direct), typical (a normal one at
either end)."""
BASE_SOURCES = 100
"""Bsources: the basic unit of sources per access router, multiplied by x9; receivers are
four times as many (Table 8-9)."""
SOURCES = {2: 17_355, 3: 26_085}
"""Sources in all, by x9 (Table 8-16); receivers are four times as many."""


def path_class(src: str, dst: str) -> str:
    """The path class of a flow between access routers of classes ``src`` and ``dst``
    (``direct``, ``fast`` or ``normal``; §8.1.1, Table 8-5): DD very fast, DF or FF fast,
    anything with a normal router typical."""
    for c in (src, dst):
        if c not in SOURCE_PLACEMENT:
            raise ValueError(f"access class {c!r}: expected one of direct, fast, normal")
    if "normal" in (src, dst):
        return "T"
    return "VF" if src == dst == "direct" else "F"


def path_class_from_shares(sources: dict[str, float], receivers: dict[str, float]) -> dict[str, float]:
    """P(path class) if a flow's source and receiver were drawn independently from the given
    shares by access class."""
    p = {"VF": 0.0, "F": 0.0, "T": 0.0}
    for s, ps in sources.items():
        for r, pr in receivers.items():
            p[path_class(s, r)] += ps * pr
    return p


MEAN_ACCESS_SPEED = 1_294 / RTT_MS
"""The mean access-router speed at x1 = −1 that Table 8-18's smallest access buffer implies
(31.80 packets/ms): one buffer rule for every access router, over the mix of classes."""


@dataclass(frozen=True)
class AccessRouters:
    """How many access routers of each class the network has. The chapter does not give the
    counts (its topology, Fig. 6-1 of SP 500-282, is not reproduced in it); :data:`ACCESS_ROUTERS`
    is fitted to the tables that depend on them (:func:`fit_access_routers`)."""

    direct: int
    fast: int
    normal: int

    def count(self, access_class: str) -> int:
        return {"direct": self.direct, "fast": self.fast, "normal": self.normal}[access_class]

    def scaled(self, scale: float) -> AccessRouters:
        """``scale`` times as many routers of each class, rounded, at least one of each (a
        smaller network of the same routers; ``nist:A23``)."""
        if not 0 < scale <= 1:
            raise ValueError(f"scale: a fraction in (0, 1], got {scale}")
        return AccessRouters(*(max(1, round(n * scale)) for n in (self.direct, self.fast, self.normal)))


@dataclass(frozen=True)
class Placement:
    """What a mix of access routers gives when each router of class c holds Bsources · x9 ·
    P(source under c) sources and receivers in proportion to P(receiver under c) (Table 8-9)."""

    sources: dict[int, float]
    """Sources in all, by x9 (Table 8-16)."""
    source_shares: dict[str, float]
    receiver_shares: dict[str, float]
    path_classes: dict[str, float]
    mean_access_speed: float
    """Mean access-router speed at x1 = −1, packets/ms."""


def placement(routers: AccessRouters) -> Placement:
    """The placement that ``routers`` gives (Tables 8-10, 8-11, 8-16 and the access row of
    Table 8-18 are what it is compared with)."""
    classes = tuple(SOURCE_PLACEMENT)
    n = {c: routers.count(c) for c in classes}
    units = sum(SOURCE_PLACEMENT[c] * n[c] for c in classes)
    rx = sum(RECEIVER_PLACEMENT[c] * n[c] for c in classes)
    src = {c: SOURCE_PLACEMENT[c] * n[c] / units for c in classes}
    dst = {c: RECEIVER_PLACEMENT[c] * n[c] / rx for c in classes}
    speed = speeds(BASE_SPEEDS[0])
    mean = sum(speed[c] * n[c] for c in classes) / sum(n.values())
    return Placement({x9: BASE_SOURCES * x9 * units for x9 in SOURCES}, src, dst,
                     path_class_from_shares(src, dst), mean)


def _misfit(p: Placement) -> float:
    """Sum of squared relative errors against Tables 8-11, 8-16 and 8-18 (access row), and of
    squared absolute errors of the shares of Table 8-10."""
    rel = [p.sources[x9] / SOURCES[x9] - 1 for x9 in SOURCES]
    rel += [p.path_classes[k] / PATH_CLASS_P[k] - 1 for k in ("VF", "F")]
    rel.append(p.mean_access_speed / MEAN_ACCESS_SPEED - 1)
    shares = [p.source_shares[c] - SOURCE_SHARES[c] for c in SOURCE_SHARES]
    shares += [p.receiver_shares[c] - RECEIVER_SHARES[c] for c in RECEIVER_SHARES]
    return float(sum(e * e for e in rel + shares))


def fit_access_routers(direct: range = range(10, 30), fast: range = range(70, 100),
                       normal: range = range(270, 360)) -> tuple[AccessRouters, float]:
    """The counts of access routers, within the given ranges, that best reproduce the
    published placement (the least :func:`_misfit`), and their misfit. The defaults bracket
    the counts that Table 8-10's source shares and Table 8-16's total give alone (about 17,
    84 and 313)."""
    fits = ((_misfit(placement(r)), r) for r in
            (AccessRouters(d, f, n) for d in direct for f in fast for n in normal))
    cost, best = min(fits, key=lambda x: x[0])
    return best, cost


ACCESS_ROUTERS = AccessRouters(direct=18, fast=84, normal=313)
"""The access routers of the reconstructed network: the counts :func:`fit_access_routers`
finds. With them Table 8-11's path classes come out as 1.072·10⁻³ and 61.70·10⁻³ (published
1.070 and 61.479), the sources as 26,130 and 17,420 (26,085 and 17,355), the source shares as
6.2 / 57.9 / 35.9 % (6 / 58 / 36) and the mean access speed as 31.86 packets/ms (31.80): four
tables agree on one mix of routers (resolution ``nist:A18``)."""


# --- The network: backbone, POPs and access routers -------------------------------------------

BACKBONE_SITES = {
    "SEA": (47.61, -122.33), "SNV": (37.37, -122.04), "LAX": (34.05, -118.24),
    "DEN": (39.74, -104.99), "KSC": (39.10, -94.58), "HOU": (29.76, -95.37),
    "CHI": (41.88, -87.63), "IND": (39.77, -86.16), "ATL": (33.75, -84.39),
    "WAS": (38.91, -77.04), "NYC": (40.71, -74.01),
}
"""The backbone routers and their cities (latitude, longitude): the eleven nodes of the
Abilene research backbone (Internet2, 2003–2007), the "Abilene-like" layout of the study's
topology (SP 500-282, Fig. 6-1, which the chapter does not reproduce; ``nist:A19``)."""
BACKBONE_LINKS = (
    ("SEA", "SNV"), ("SEA", "DEN"), ("SNV", "LAX"), ("SNV", "DEN"), ("LAX", "HOU"),
    ("DEN", "KSC"), ("KSC", "HOU"), ("KSC", "IND"), ("HOU", "ATL"), ("IND", "ATL"),
    ("IND", "CHI"), ("CHI", "NYC"), ("ATL", "WAS"), ("NYC", "WAS"),
)
"""Abilene's fourteen backbone links, in the order they are declared (routes are fewest hops,
ties to the link declared first)."""
POPS_PER_SITE = 2
"""POP routers per backbone router: 22 in all, each in its backbone router's city."""
EARTH_RADIUS_KM = 6371.0

DELAY_TARGETS_MS = {"min": 6.0, "avg": RTT_MS, "max": 100.0}
"""Table 8-17 at x2 = 1: the round-trip propagation delay of a flow, smallest, mean (41 ms,
40.69 by the buffers of Table 8-18) and largest. x2 = 2 doubles them."""


def great_circle_km(a: tuple[float, float], b: tuple[float, float]) -> float:
    """The great-circle distance between two (latitude, longitude) points in degrees."""
    (la1, lo1), (la2, lo2) = (tuple(map(math.radians, p)) for p in (a, b))
    h = math.sin((la2 - la1) / 2) ** 2 + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(math.sqrt(h))


def backbone_routes() -> dict[tuple[str, str], tuple[int, float]]:
    """Hops and great-circle km of the fewest-hop route between every ordered pair of backbone
    sites, found as the simulator finds it: breadth-first from the source, each router's links
    in declaration order, so that ties go to the link declared first. An access router hangs
    off one router, so its routes are its uplinks followed by these."""
    adj: dict[str, list[str]] = {s: [] for s in BACKBONE_SITES}
    for a, b in BACKBONE_LINKS:
        adj[a].append(b)
        adj[b].append(a)
    out = {}
    for src in BACKBONE_SITES:
        via: dict[str, str | None] = {src: None}
        frontier = deque([src])
        while frontier:
            u = frontier.popleft()
            for v in adj[u]:
                if v not in via:
                    via[v] = u
                    frontier.append(v)
        for dst in BACKBONE_SITES:
            hops, km, at = 0, 0.0, dst
            while (prev := via[at]) is not None:
                hops, km, at = hops + 1, km + great_circle_km(BACKBONE_SITES[prev], BACKBONE_SITES[at]), prev
            out[src, dst] = (hops, km)
    return out


@dataclass(frozen=True)
class AccessRouter:
    """An access router: its class and where it hangs (a POP, or a backbone router for a
    directly connected one)."""

    name: str
    access_class: str
    site: str
    parent: str


def access_layout(routers: AccessRouters = ACCESS_ROUTERS) -> list[AccessRouter]:
    """The access routers, dealt out in turn: directly connected ones over the backbone sites,
    fast and normal ones over the POPs, so that every site and POP gets as even a share of each
    class as the counts allow (and a class with fewer routers than places spreads them across
    the continent rather than filling the first places)."""
    sites = list(BACKBONE_SITES)
    pops = [(s, k) for s in sites for k in range(1, POPS_PER_SITE + 1)]

    def place(i: int, n: int, slots: int) -> int:
        return i % slots if n >= slots else i * slots // n

    out = []
    for i in range(routers.direct):
        s = sites[place(i, routers.direct, len(sites))]
        out.append(AccessRouter(f"d{i}-{s}", "direct", s, f"bb-{s}"))
    for c, n in (("fast", routers.fast), ("normal", routers.normal)):
        for i in range(n):
            s, k = pops[place(i, n, len(pops))]
            out.append(AccessRouter(f"{c[0]}{i}-{s}", c, s, f"pop{k}-{s}"))
    return out


@dataclass(frozen=True)
class Delays:
    """One-way propagation delays in ms at x2 = 1 (``nist:A19``)."""

    access: float
    """A fast or normal access router to its POP."""
    direct: float
    """A directly connected access router to its backbone router."""
    pop: float
    """A POP to its backbone router (same city)."""
    per_km: float
    """A backbone link, per great-circle km."""


@dataclass(frozen=True)
class DelayFit:
    delays: Delays
    min: float
    avg: float
    max: float
    """Round-trip propagation delays of flows at x2 = 1, ms (Table 8-17)."""


def _flow_weights(routers: AccessRouters, layout: list[AccessRouter]) -> np.ndarray:
    """P(a flow goes from access router i to j): the source in proportion to the sources under
    i, the receiver to the receivers under j ≠ i (the population draws receivers under
    another router)."""
    from .nist_population import hosts_per_router

    src, dst = (np.asarray(v, dtype=float) for v in hosts_per_router(3, routers))
    w = np.outer(src, dst)
    np.fill_diagonal(w, 0.0)
    w /= w.sum(axis=1, keepdims=True)
    return w * (src / src.sum())[:, None]


def _rtt_terms(layout: list[AccessRouter]) -> tuple[np.ndarray, ...]:
    """For every pair of access routers, the round trip's count of access, direct and POP
    links and its backbone km, so that a round trip is their dot product with the delays."""
    routes = backbone_routes()
    n = len(layout)
    access, direct, pop, km = (np.zeros((n, n)) for _ in range(4))
    for i, a in enumerate(layout):
        for j, b in enumerate(layout):
            ends = (a, b)
            access[i, j] = 2 * sum(r.access_class != "direct" for r in ends)
            direct[i, j] = 2 * sum(r.access_class == "direct" for r in ends)
            same_pop = a.parent == b.parent and a.access_class != "direct"
            pop[i, j] = 0 if same_pop else access[i, j]
            km[i, j] = routes[a.site, b.site][1] + routes[b.site, a.site][1]
    return access, direct, pop, km


def fit_delays(routers: AccessRouters = ACCESS_ROUTERS, pop_ms: float = 0.0) -> DelayFit:
    """Delays that give Table 8-17 exactly for the flows of the population: the smallest round
    trip (two access routers under one POP) sets the access links at a quarter of 6 ms; a
    direct link's delay and the backbone's ms per km then solve the mean and the largest round
    trip together (the largest is between directly connected routers at the two ends of the
    longest route). A POP is in its backbone router's city, ``pop_ms`` away."""
    layout = access_layout(routers)
    w = _flow_weights(routers, layout)
    access, direct, pop, km = _rtt_terms(layout)
    a = DELAY_TARGETS_MS["min"] / 4
    mean = {k: float((w * t).sum()) for k, t in (("access", access), ("direct", direct),
                                                 ("pop", pop), ("km", km))}
    fixed_mean = a * mean["access"] + pop_ms * mean["pop"]
    # Unknowns (direct, per_km): mean and max of the round trip.
    far = np.unravel_index(np.argmax(np.where(direct == 4, km, -1)), km.shape)
    lhs = np.array([[mean["direct"], mean["km"]], [4.0, km[far]]])
    rhs = np.array([DELAY_TARGETS_MS["avg"] - fixed_mean, DELAY_TARGETS_MS["max"]])
    d, per_km = np.linalg.solve(lhs, rhs)
    if d < a or per_km <= 0:
        raise ValueError(f"no delays fit Table 8-17 with these routers: direct {d:.3f} ms, {per_km:.6f} ms/km")
    delays = Delays(a, float(d), pop_ms, float(per_km))
    rtt = a * access + d * direct + pop_ms * pop + per_km * km
    np.fill_diagonal(rtt, np.nan)
    return DelayFit(delays, float(np.nanmin(rtt)), float((w * np.nan_to_num(rtt)).sum()), float(np.nanmax(rtt)))


@functools.lru_cache(maxsize=4)
def delays(routers: AccessRouters = ACCESS_ROUTERS) -> Delays:
    """The fitted delays (:func:`fit_delays`), computed once."""
    return fit_delays(routers).delays


ROUTER_SPEEDS = ("split", "per_direction")
"""How a router's speed and buffer become its link's two directions (``nist:A21``): ``split``
(the default) gives each direction half of both, so that the router forwards at most its speed
in all, as MesoNet's per-router service does; ``per_direction`` gives each direction all of
both, twice the router's speed."""


@dataclass(frozen=True)
class Link:
    a: str
    b: str
    rate: float
    """The speed of the router the link belongs to, packets/ms of 1500 bytes (Table 8-8)."""
    delay_us: int
    queue: int
    """That router's buffer, packets (Table 8-18)."""


@dataclass(frozen=True)
class Topology:
    """The three-tier network of one condition, as a flowshare graph topology."""

    nodes: tuple[str, ...]
    links: tuple[Link, ...]
    access: dict[str, str]
    """Access router → its class (``direct``, ``fast``, ``normal``)."""
    router_speed: str = "split"
    """One of :data:`ROUTER_SPEEDS`."""

    @property
    def direction_share(self) -> float:
        """The share of a router's speed and buffer each direction of its link gets."""
        return 0.5 if self.router_speed == "split" else 1.0

    def table(self) -> dict:
        """The ``[topology]`` table of a scenario: each link direction at the router's speed
        and buffer times :attr:`direction_share`."""
        share = self.direction_share
        return {"kind": "graph", "nodes": list(self.nodes), "links": [
            {"from": k.a, "to": k.b, "rate": f"{round(k.rate * share * PACKET_B * 8 * 1000)}bps",
             "delay": f"{k.delay_us}us", "queue": {"limit": max(1, round(k.queue * share))}}
            for k in self.links]}


def check_router_speed(router_speed: object) -> None:
    """Refuse a reading of the router speeds that is not one of :data:`ROUTER_SPEEDS`."""
    if router_speed not in ROUTER_SPEEDS:
        raise ValueError(f"router_speed: expected one of {', '.join(ROUTER_SPEEDS)}, "
                         f"got {router_speed!r}")


def topology(x1: float, x2: float, x3: float, *, scale: float = 1.0,
             router_speed: str = "split") -> Topology:
    """The network at base speed ``x1`` (packets/ms), delay multiplier ``x2`` and buffer factor
    ``x3``: every link belongs to the router of the lower tier it joins and carries its speed
    (Table 8-8) and its buffer, RTT × C × x3 (Table 8-18); ``router_speed`` says how the two
    directions share them (:data:`ROUTER_SPEEDS`). A link's delay is the fitted one
    (:func:`fit_delays`) times x2.

    ``scale`` (0 < scale ≤ 1) builds a smaller network of the same kind (``nist:A23``): that
    share of the access routers of each class (:meth:`AccessRouters.scaled`), each as at full
    scale, spread over the same backbone with the same delays; a POP's uplink runs at the POP
    speed times its access routers over a full-scale POP's (18.05), POPs left without access
    routers are left out, and the backbone runs at its speed times the share of sources kept."""
    if x2 <= 0:
        raise ValueError(f"x2: the delay multiplier must be positive, got {x2}")
    check_router_speed(router_speed)
    routers = ACCESS_ROUTERS.scaled(scale) if scale != 1 else ACCESS_ROUTERS
    speed = speeds(x1)
    dl = delays(ACCESS_ROUTERS)
    layout = access_layout(routers)
    under = Counter(r.parent for r in layout if r.access_class != "direct")
    full_pop = (ACCESS_ROUTERS.fast + ACCESS_ROUTERS.normal) / (len(BACKBONE_SITES) * POPS_PER_SITE)

    def link(a: str, b: str, rate: float, delay_ms: float) -> Link:
        return Link(a, b, rate, round(delay_ms * x2 * 1000), max(1, round(buffer_packets(rate, x2, x3))))

    links = []
    backbone = speed["backbone"] * source_share(routers)
    for a, b in BACKBONE_LINKS:
        km = great_circle_km(BACKBONE_SITES[a], BACKBONE_SITES[b])
        links.append(link(f"bb-{a}", f"bb-{b}", backbone, dl.per_km * km))
    pops = [f"pop{k}-{s}" for s in BACKBONE_SITES for k in range(1, POPS_PER_SITE + 1)
            if under[f"pop{k}-{s}"]]
    for pop in pops:
        rate = speed["pop"] * (1 if routers == ACCESS_ROUTERS else min(1.0, under[pop] / full_pop))
        links.append(link(pop, f"bb-{pop.split('-', 1)[1]}", rate, dl.pop))
    for r in layout:
        links.append(link(r.name, r.parent, speed[r.access_class],
                          dl.direct if r.access_class == "direct" else dl.access))
    nodes = [f"bb-{s}" for s in BACKBONE_SITES] + pops + [r.name for r in layout]
    return Topology(tuple(nodes), tuple(links), {r.name: r.access_class for r in layout},
                    router_speed)


def source_share(routers: AccessRouters) -> float:
    """The sources under ``routers`` over those of the full network (the same for every x9)."""
    def units(r: AccessRouters) -> float:
        return sum(SOURCE_PLACEMENT[c] * r.count(c) for c in SOURCE_PLACEMENT)
    return units(routers) / units(ACCESS_ROUTERS)
