"""The hosts of Mills et al. (2010), "Comparing Congestion Control Regimes in a Heterogeneous
Network", ch. 8 of K. Mills et al., *Study of Proposed Internet Congestion Control Mechanisms*,
NIST SP 500-282: how many sources and receivers are under each access router (Table 8-9).
Each host's interface speed (x7) and each source's algorithm (x8) are drawn when the run is
built, by the simulation's population process, from per-aspect random streams (Table 8-12).
"""

from __future__ import annotations

import numpy as np

from .nist_network import ACCESS_ROUTERS, BASE_SOURCES, RECEIVER_PLACEMENT, SOURCE_PLACEMENT, AccessRouters

RECEIVERS_PER_SOURCE = 4
"""Receivers are four times the sources (Table 8-9's base unit of 400, Table 8-16)."""

def router_classes(routers: AccessRouters = ACCESS_ROUTERS) -> np.ndarray:
    """The class of each access router (``direct``, ``fast``, ``normal``), in index order."""
    return np.array(["direct"] * routers.direct + ["fast"] * routers.fast + ["normal"] * routers.normal)


def _per_router(counts: dict[str, float], routers: AccessRouters) -> np.ndarray:
    """Hosts per access router, ``counts[c]`` under each router of class c on average: the
    class's total rounded to whole hosts and dealt out evenly over its routers."""
    classes = router_classes(routers)
    out = np.zeros(len(classes), dtype=np.int64)
    for c in ("direct", "fast", "normal"):
        where = np.flatnonzero(classes == c)
        if where.size == 0:
            continue
        total = int(np.rint(counts[c] * where.size))
        base, extra = divmod(total, where.size)
        out[where] = base
        # The remainder goes to routers spread evenly over the class.
        out[where[(np.arange(extra) * where.size) // max(extra, 1)]] += 1
    return out


def hosts_per_router(x9: int, routers: AccessRouters = ACCESS_ROUTERS) -> tuple[np.ndarray, np.ndarray]:
    """Sources and receivers under each access router (in :func:`router_classes` order) for
    source multiplier ``x9``: under a router of class c, Bsources · x9 · P(source under c)
    sources, and receivers in proportion to P(receiver under c), four per source in all
    (Table 8-9; ``nist:A18``). Interfaces and algorithms are drawn by the simulation
    (``process = "population"``), from per-aspect streams."""
    if x9 < 1:
        raise ValueError(f"x9: the multiplier of sources is at least 1, got {x9}")
    sources = _per_router({c: BASE_SOURCES * x9 * p for c, p in SOURCE_PLACEMENT.items()}, routers)
    weight = sum(p * routers.count(c) for c, p in RECEIVER_PLACEMENT.items())
    receivers = _per_router({c: RECEIVERS_PER_SOURCE * int(sources.sum()) * p / weight
                             for c, p in RECEIVER_PLACEMENT.items()}, routers)
    return sources, receivers
