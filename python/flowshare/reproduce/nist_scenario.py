"""One run of Mills et al. (2010), "Comparing Congestion Control Regimes in a Heterogeneous
Network", ch. 8 of K. Mills et al., *Study of Proposed Internet Congestion Control Mechanisms*,
NIST SP 500-282, as a flowshare scenario: a condition of the 2^(9−4) design (Tables 8-13,
8-14), an alternate algorithm (Table 8-1) and an initial slow-start threshold (§8.1.1, HIGH or
LOW), on the three-tier network of :mod:`.nist_network` with the population of
:mod:`.nist_population` and the file types of :mod:`.nist_workload`.

The population runs in the simulation (``process = "population"``): each source alternates an
exponential think time of mean x4 and one transfer to a receiver drawn at random, with the
interfaces (x7), algorithms (x8) and file types drawn there from per-aspect streams.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..study.design import fractional_factorial
from . import nist_network as nn
from . import nist_population as npop
from . import nist_workload as nw

FACTORS = ("x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9")
GENERATORS = {"F": "BCDE", "G": "ACDE", "H": "ABDE", "I": "ABCE"}
"""x6 = x2x3x4x5, x7 = x1x3x4x5, x8 = x1x2x4x5, x9 = x1x2x3x5 (letters A–I are x1–x9): the
generators that reproduce Table 8-13 row by row, x1 varying fastest."""
LEVELS: dict[str, tuple[float, float]] = {
    "x1": (800, 1600), "x2": (1, 2), "x3": (0.5, 1.0), "x4": (5000, 7500), "x5": (100, 150),
    "x6": (1, 2), "x7": (0.3, 0.7), "x8": (0.3, 0.7), "x9": (2, 3),
}
"""Each factor at −1 and +1 in natural units (Table 8-14): x1 packets/ms, x4 think time in ms,
x5 mean Web object in packets, x6 the large-file distribution (Table 8-3's column)."""

ALTERNATES = {"BIC": "bic", "CTCP": "compound", "FAST": "fast", "FAST-AT": "fast_at",
              "HSTCP": "highspeed", "HTCP": "htcp", "Scalable": "scalable"}
"""The seven alternate algorithms of Table 8-1 and their names in flowshare; the other sources
run Reno."""
THRESHOLDS = {"HIGH": 2**30, "LOW": 100}
"""SS_INT, the initial slow-start threshold in packets (Table 8-9, ``nist:A9``)."""
MAX_SSTHRESH = 100
"""Limited slow start above 100 packets (RFC 3742; ``nist:A10``)."""

MSS_B = 1460
HEADER_B = 40
"""A packet is 1500 bytes on the wire (:data:`.nist_network.PACKET_B`): 1460 of payload."""
FILE_TYPES = (("movie", "M"), ("service_pack", "SP"), ("document", "D"))
"""The large file types in the order their minima are served (§8.1.1.1)."""


def design() -> np.ndarray:
    """The 32 × 9 signs of Table 8-13, row k − 1 for condition k."""
    return fractional_factorial("ABCDEFGHI", GENERATORS)


def condition(k: int) -> dict[str, float]:
    """Condition ``k`` (1 to 32) in natural units (Table 8-14)."""
    if not 1 <= k <= 32:
        raise ValueError(f"condition: expected 1 to 32, got {k}")
    signs = design()[k - 1]
    return {f: LEVELS[f][int(s > 0)] for f, s in zip(FACTORS, signs)}


def _rate(packets_per_ms: float) -> str:
    """A speed in packets/ms as bit/s of 1500-byte packets, exactly."""
    return f"{round(packets_per_ms * nn.PACKET_B * 8 * 1000)}bps"


def file_types(x: dict[str, float], sources: int, share: float = 1.0) -> list[dict[str, Any]]:
    """The large file types of condition ``x`` with ``sources`` sources at full scale: Table
    8-3's probabilities, Table 8-4's multipliers, the maxima of §8.1.1.1 and the minima of
    Table 8-7 per flow group (written ``T-F/alternate`` …, as the population process keys
    them). A smaller network with ``share`` of the sources has ``share`` of the concurrent
    flows: the full-scale maximum times the share (at least one) and the full-scale minimum
    times the share, rounded (a minimum of none is no minimum; ``nist:A23``)."""
    p = nw.type_probabilities(int(x["x6"]))
    maxima = nw.max_active(sources, int(x["x6"]))
    out = []
    for name, t in FILE_TYPES:
        minima = {}
        for path in ("VF", "F", "T"):
            for fast in (True, False):
                for alt in (False, True):
                    key = f"{path}-{'F' if fast else 'N'}/{'alternate' if alt else 'base'}"
                    n = round(nw.min_active(maxima[t], path, fast, alt, x["x7"], x["x8"]) * share)
                    if n > 0:
                        minima[key] = n
        out.append({"name": name, "probability": p[t], "multiplier": nw.MULTIPLIER[t],
                    "max_active": max(round(maxima[t] * share), 1), "min_active": minima})
    return out


def scenario(k: int, alternate: str, threshold: str, *, duration_s: float = 3600.0, seed: int = 0,
             scale: float = 1.0, router_speed: str = "split") -> dict[str, Any]:
    """The scenario of condition ``k`` with ``alternate`` (a key of :data:`ALTERNATES`) and
    ``threshold`` (``HIGH`` or ``LOW``), ``duration_s`` long (the study's hour by default).
    ``scale`` (0 < scale ≤ 1) keeps that share of the access routers, each with its hosts,
    speeds and delays as at full scale, and shrinks the POP and backbone speeds to the traffic
    kept (:func:`.nist_network.topology`, ``nist:A23``); ``router_speed`` says how a router's
    speed and buffer serve its link's two directions (:data:`.nist_network.ROUTER_SPEEDS`,
    ``nist:A21``)."""
    if alternate not in ALTERNATES:
        raise ValueError(f"alternate: expected one of {', '.join(ALTERNATES)}, got {alternate!r}")
    if threshold not in THRESHOLDS:
        raise ValueError(f"threshold: expected HIGH or LOW, got {threshold!r}")
    if not duration_s > 0:
        raise ValueError(f"duration_s: must be positive, got {duration_s}")
    x = condition(k)
    topo = nn.topology(x["x1"], x["x2"], x["x3"], scale=scale, router_speed=router_speed)
    routers = nn.AccessRouters(**{c: sum(1 for v in topo.access.values() if v == c)
                                  for c in ("direct", "fast", "normal")})
    per_src, per_rx = npop.hosts_per_router(int(x["x9"]), routers)
    # Routers of a class hold the same hosts: pair them with the topology's routers by class.
    names = sorted(topo.access, key=lambda n: (("direct", "fast", "normal").index(topo.access[n]), n))
    sources = {n: int(c) for n, c in zip(names, per_src) if c > 0}
    receivers = {n: int(c) for n, c in zip(names, per_rx) if c > 0}
    think_ms = x["x4"]
    population = {
        "sources": sources,
        "receivers": receivers,
        "classes": dict(topo.access),
        "interface": {"rate": _rate(nn.HOST_BASIC), "fast_rate": _rate(nn.HOST_FAST), "fast": x["x7"]},
        "alternate": {"cc": ALTERNATES[alternate], "share": x["x8"]},
        # A source first becomes active uniformly within one mean think time (UPseed).
        "first": {"dist": "uniform", "min": "0s", "max": f"{int(think_ms)}ms"},
        "file_types": file_types(x, int(npop.hosts_per_router(int(x["x9"]))[0].sum()),
                                 nn.source_share(routers)),
    }
    return {
        "simulation": {"duration": f"{duration_s}s", "seed": seed, "sample_interval": "0s"},
        "topology": topo.table(),
        "flows": [{
            "name": "nist",
            "tcp": {"cc": "reno", "mss": f"{MSS_B}B", "header": f"{HEADER_B}B",
                    "initial_ssthresh": THRESHOLDS[threshold], "max_ssthresh": MAX_SSTHRESH},
            "arrivals": {
                "process": "population",
                "think": {"dist": "exponential", "mean": f"{int(think_ms)}ms"},
                "size": {"dist": "pareto", "mean": f"{int(x['x5']) * MSS_B}B", "shape": nw.WO_SHAPE},
                "population": population,
            },
        }],
    }
