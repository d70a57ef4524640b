"""File types, sizes and the large-file constraints of Mills et al. (2010), "Comparing
Congestion Control Regimes in a Heterogeneous Network", ch. 8 of K. Mills et al., *Study of
Proposed Internet Congestion Control Mechanisms*, NIST SP 500-282 (Tables 8-3, 8-4, 8-7 and
§8.1.1.1).

A flow carries a Web object unless a large type (document, service pack, movie) is needed to
keep that type's active flows in a flow group at their minimum, or is drawn at the type's
probability while the network holds fewer active flows of the type than its maximum. Every
large type's size is a Web object's size drawn from the Pareto distribution times the type's
multiplier. Sizes are in 1500-byte packets. The simulation applies the rule (`process =
"population"`); this module gives its parameters.
"""

from __future__ import annotations

import math
from .nist_network import PATH_CLASS_P, check_probabilities

TYPES = ("M", "SP", "D", "WO")
"""Movie, service pack, document, Web object: the order in which §8.1.1.1 fills minima."""
MULTIPLIER = {"M": 10_000, "SP": 1_000, "D": 10, "WO": 1}
"""Mx, Sx, Fx: a large file is a Web-object draw times this (Table 8-4)."""
FLOOR = {"M": 10, "SP": 100, "D": 1000}
"""The least target maximum of active flows of each large type (§8.1.1.1, eqs. (1)–(3))."""
WO_SHAPE = 1.5
"""The Pareto shape of Web-object sizes (Table 8-4)."""
MIN_SHARE = 0.1
"""The minima are this share of the maximum, spread over the flow groups (Table 8-7)."""


GROUP_ORDER = (("VF", True), ("VF", False), ("F", True), ("F", False), ("T", True), ("T", False))
"""(path class, FAST interface) within a file type, in Table 8-6's order: VF-F, VF-N, F-F,
F-N, T-F, T-N (also the column order of the rank matrices)."""


def flow_group(file_type: str, path_class: str, fast_interface: bool) -> int:
    """The flow group of Table 8-6, 1 to 24: movies 1–6, service packs 7–12, documents 13–18,
    Web objects 19–24, each in :data:`GROUP_ORDER`. A flow's interface is FAST only when both
    its source and its receiver are fast (§8.1.1)."""
    if file_type not in MULTIPLIER:
        raise ValueError(f"file type {file_type!r}: expected one of {', '.join(TYPES)}")
    key = (path_class, fast_interface)
    if key not in GROUP_ORDER:
        raise ValueError(f"path class {path_class!r}: expected VF, F or T")
    return TYPES.index(file_type) * len(GROUP_ORDER) + GROUP_ORDER.index(key) + 1


def group_label(group: int) -> str:
    """Table 8-6's label of flow group ``group``, e.g. 16 is ``"F-N D"`` (fast path, normal
    interface, document)."""
    if not 1 <= group <= len(TYPES) * len(GROUP_ORDER):
        raise ValueError(f"flow group {group}: expected 1 to 24")
    t, k = divmod(group - 1, len(GROUP_ORDER))
    path_class, fast = GROUP_ORDER[k]
    return f"{path_class}-{'F' if fast else 'N'} {TYPES[t]}"


def type_probabilities(x6: int) -> dict[str, float]:
    """P(D), P(SP), P(M) for large-file distribution ``x6`` = 1 or 2 (Table 8-3; the movie
    probability at x6 = 1 is Table 8-14's 2·10⁻⁴, where Table 8-3 prints 4·10⁻⁴, resolution
    ``nist:A1``). The rest is P(Web object)."""
    if x6 == 2:
        return {"D": 4e-2, "SP": 4e-3, "M": 4e-4}
    if x6 == 1:
        return {"D": 2e-2, "SP": 2e-3, "M": 2e-4}
    raise ValueError(f"x6: the large-file distribution is 1 or 2, got {x6}")


def max_active(sources: int, x6: int) -> dict[str, int]:
    """The target maximum of active flows of each large type network-wide, max(⌈s·P⌉,
    floor) for ``sources`` sources (§8.1.1.1, eqs. (1)–(3))."""
    if sources < 1:
        raise ValueError(f"sources: expected at least 1, got {sources}")
    p = type_probabilities(x6)
    return {t: max(math.ceil(sources * p[t]), FLOOR[t]) for t in FLOOR}


def min_active(maximum: int, path_class: str, fast_interface: bool, alternate: bool,
               x7: float, x8: float) -> int:
    """The target minimum of active flows of a large type in one flow group (Table 8-7):
    ⌈max · 0.1 · P(path class) · (x7 or 1 − x7) · (x8 or 1 − x8)⌉, at least 1. As printed,
    a fast interface counts with x7 although it needs both ends fast (resolution ``nist:A11``)."""
    check_probabilities(x7=x7, x8=x8)
    share = (x7 if fast_interface else 1 - x7) * (x8 if alternate else 1 - x8)
    return max(math.ceil(maximum * MIN_SHARE * PATH_CLASS_P[path_class] * share), 1)


def web_object_size(mean: float, u: float) -> int:
    """A Web object's size in packets from a uniform draw ``u`` in (0, 1]: Pareto of shape 1.5
    and the given mean (x5; scale mean/3), rounded up, at least one packet."""
    if not 0 < u <= 1:
        raise ValueError(f"u: a uniform draw in (0, 1], got {u}")
    scale = mean * (WO_SHAPE - 1) / WO_SHAPE
    return max(math.ceil(scale * u ** (-1 / WO_SHAPE)), 1)
