"""The hosts of Mills et al. (2010), "Comparing Congestion Control Regimes in a Heterogeneous
Network", ch. 8 of K. Mills et al., *Study of Proposed Internet Congestion Control Mechanisms*,
NIST SP 500-282: sources and receivers under the access routers (Table 8-9), each host's
interface speed (x7) and each source's congestion-control algorithm (x8), drawn from
per-aspect random streams (Table 8-12) so that the seven alternate algorithms of a condition
see the same hosts (common random numbers).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .nist_network import (ACCESS_ROUTERS, BASE_SOURCES, RECEIVER_PLACEMENT, SOURCE_PLACEMENT,
                           AccessRouters, check_probabilities)

RECEIVERS_PER_SOURCE = 4
"""Receivers are four times the sources (Table 8-9's base unit of 400, Table 8-16)."""

SEEDS = {"CC": 100_000, "TT": 200_000, "HS": 300_000, "UP": 400_000, "WO": 500_000,
         "FT": 600_000, "RS": 700_000}
"""Table 8-12's seed of each random aspect: algorithm assignment (CC), think times (TT), host
interface speeds (HS), first activation (UP), Web-object sizes (WO), file types (FT) and the
receiver of each flow (RS)."""


def aspect_rng(aspect: str, offset: int = 0) -> np.random.Generator:
    """The random stream of one aspect (Table 8-12), with the run's ``offset`` (RandOffset)
    added to its seed; independent of every other aspect's stream."""
    if aspect not in SEEDS:
        raise ValueError(f"aspect {aspect!r}: expected one of {', '.join(SEEDS)}")
    return np.random.Generator(np.random.PCG64(SEEDS[aspect] + offset))


@dataclass(frozen=True)
class Hosts:
    """One kind of host (sources or receivers), one entry per host."""

    router: np.ndarray
    """Index of the host's access router: the direct routers first, then the fast, then the
    normal ones (:func:`router_classes`)."""
    fast: np.ndarray
    """Whether the host's interface is fast (80 packets/ms) rather than basic (8)."""


@dataclass(frozen=True)
class Population:
    """The sources and receivers of one condition."""

    sources: Hosts
    receivers: Hosts
    alternate: np.ndarray
    """Per source: whether it runs the condition's alternate algorithm rather than Reno."""


def router_classes(routers: AccessRouters = ACCESS_ROUTERS) -> np.ndarray:
    """The class of each access router (``direct``, ``fast``, ``normal``), in index order."""
    return np.array(["direct"] * routers.direct + ["fast"] * routers.fast + ["normal"] * routers.normal)


def _per_router(counts: dict[str, float], routers: AccessRouters) -> np.ndarray:
    """Hosts per access router, ``counts[c]`` under each router of class c, rounded to whole
    hosts."""
    classes = router_classes(routers)
    return np.rint(np.array([counts[c] for c in classes])).astype(np.int64)


def populate(x7: float, x8: float, x9: int, routers: AccessRouters = ACCESS_ROUTERS,
             offset: int = 0) -> Population:
    """Place the hosts of a condition: under an access router of class c, Bsources · x9 ·
    P(source under c) sources, and receivers in proportion to P(receiver under c), four per
    source in all (Table 8-9; ``nist:A18``). Each host is fast with probability ``x7`` (the HS
    stream, sources first), each source runs the alternate algorithm with probability ``x8``
    (the CC stream)."""
    check_probabilities(x7=x7, x8=x8)
    if x9 < 1:
        raise ValueError(f"x9: the multiplier of sources is at least 1, got {x9}")
    per_src = _per_router({c: BASE_SOURCES * x9 * p for c, p in SOURCE_PLACEMENT.items()}, routers)
    n_sources = int(per_src.sum())
    weight = sum(p * routers.count(c) for c, p in RECEIVER_PLACEMENT.items())
    per_rx = _per_router({c: RECEIVERS_PER_SOURCE * n_sources * p / weight
                          for c, p in RECEIVER_PLACEMENT.items()}, routers)
    src_router = np.repeat(np.arange(per_src.size), per_src)
    rx_router = np.repeat(np.arange(per_rx.size), per_rx)
    hs = aspect_rng("HS", offset)
    src_fast = hs.random(src_router.size) < x7
    rx_fast = hs.random(rx_router.size) < x7
    alternate = aspect_rng("CC", offset).random(src_router.size) < x8
    return Population(Hosts(src_router, src_fast), Hosts(rx_router, rx_fast), alternate)
