"""What a sweep's responses measure: unit, range, and which direction is better.

A report shows each response in its unit with an engineering prefix (``12.4 Mbit/s``,
``35.2 ms``), clips confidence intervals to the range the quantity can take (counts, rates and
times are never negative; Jain's index is at most 1) and ranks alternatives so that rank 1 is
always the best, which needs each response's direction. The default responses carry theirs;
a declared response states it with ``better = "higher"`` or ``better = "lower"`` in its
definition (``docs/sweeps.md``), and its unit follows from the column it reads (``*_bps``: bit/s,
``*_s``: seconds, ``*_bytes``: bytes, ``*_pkts`` and packet counters: packets, ``cwnd*`` and
``ssthresh*``: segments).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

import numpy as np

__all__ = [
    "DIRECTIONS",
    "Quantity",
    "arm_labels",
    "format_value",
    "quantity",
    "scale",
    "short_names",
    "short_value",
]

DIRECTIONS = ("higher", "lower")
"""Values of a response's ``better`` field."""


@dataclass(frozen=True)
class Quantity:
    """How a response is shown and compared.

    Attributes
    ----------
    title : str
        A readable name (``aggregate goodput``).
    unit : str
        The unit of the stored values: ``bit/s``, ``s``, ``bytes``, ``packets``, ``segments``
        (congestion windows), another count
        noun (``flows``, ``timeouts``, ``rows``) or ``""`` for a pure number.
    minimum, maximum : float or None
        The range the quantity can take; confidence intervals are clipped to it.
    better : {"higher", "lower"} or None
        Which values are better; ``None`` when not stated (the response is not ranked).
    """

    title: str
    unit: str
    minimum: float | None = None
    maximum: float | None = None
    better: str | None = None

    def clip(self, value: float) -> float:
        if math.isnan(value):
            return value
        if self.minimum is not None and value < self.minimum:
            return self.minimum
        if self.maximum is not None and value > self.maximum:
            return self.maximum
        return value


DEFAULTS: dict[str, Quantity] = {
    "flows": Quantity("flows", "flows", 0.0),
    "goodput_bps": Quantity("aggregate goodput", "bit/s", 0.0, better="higher"),
    "jain_index": Quantity("Jain's fairness index", "", 0.0, 1.0, better="higher"),
    "drops": Quantity("packets dropped", "packets", 0.0, better="lower"),
    "retransmits": Quantity("retransmitted segments", "packets", 0.0, better="lower"),
    "timeouts": Quantity("retransmission timeouts", "timeouts", 0.0, better="lower"),
}
"""The default responses (``RunResult.aggregate()``): goodput, fairness, losses."""

_PACKET_COLUMNS = {"drops", "retransmits", "marks", "sent", "delivered", "packets"}
_COUNT_COLUMNS = {"timeouts": "timeouts", "transfers": "transfers", "flows": "flows"}


def quantity(name: str, definition: Mapping[str, Any] | None = None) -> Quantity:
    """The quantity of response ``name``: a default one, or a declared one from its
    definition (``table``, ``column``, ``agg`` and optionally ``better``)."""
    if definition is None:
        return DEFAULTS.get(name, Quantity(name, ""))
    column = str(definition.get("column", ""))
    agg = definition.get("agg", "mean")
    better = definition.get("better")
    better = better if better in DIRECTIONS else None
    if agg == "count":
        return Quantity(name, "rows", 0.0, better=better)
    unit, minimum, maximum = "", None, None
    if column.endswith("_bps"):
        unit, minimum = "bit/s", 0.0
    elif column.endswith("_bytes"):
        unit, minimum = "bytes", 0.0
    elif column.endswith("_s"):
        unit, minimum = "s", 0.0
    elif column.endswith("_pkts") or column in _PACKET_COLUMNS:
        unit, minimum = "packets", 0.0
    elif column in _COUNT_COLUMNS:
        unit, minimum = _COUNT_COLUMNS[column], 0.0
    elif column.startswith(("cwnd", "ssthresh")):
        unit, minimum = "segments", 0.0
    elif column == "jain_index":
        unit, minimum, maximum = "", 0.0, 1.0
    return Quantity(name, unit, minimum, maximum, better)


_PREFIXES = ((1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))
_TIME = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"))


def scale(unit: str, values: Sequence[float] | np.ndarray) -> tuple[float, str]:
    """A divisor and the unit to show ``values`` in, chosen from their largest magnitude:
    ``(1e6, "Mbit/s")`` for rates of millions of bit/s, ``(1e-3, "ms")`` for times below a
    second, ``(1.0, unit)`` for counts and pure numbers."""
    finite = np.abs(np.asarray(values, dtype=float))
    finite = finite[np.isfinite(finite) & (finite > 0)]
    top = float(finite.max()) if finite.size else 0.0
    if unit in ("bit/s", "bytes"):
        base = "bit/s" if unit == "bit/s" else "B"
        for factor, prefix in _PREFIXES:
            if top >= factor:
                return factor, f"{prefix}{base}" if prefix else unit
        return 1.0, unit
    if unit == "s":
        for factor, name in _TIME:
            if top >= factor:
                return factor, name
        return (1e-6, "µs") if top > 0 else (1.0, "s")
    return 1.0, unit


def format_value(value: float, digits: int = 4) -> str:
    """A number with ``digits`` significant digits, without exponent for ordinary magnitudes."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    value = float(value)
    if value == 0:
        return "0"
    if 1e-3 <= abs(value) < 1e7:
        decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
        text = f"{value:.{decimals}f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    return f"{value:.{digits}g}"


def short_names(parameters: Sequence[str]) -> dict[str, str]:
    """Short, distinct names of parameter paths: the last field name
    (``flows[0].tcp.cc`` → ``cc``), with more of the path where two would be equal
    (``flows[0].tcp.cc`` and ``flows[1].tcp.cc`` stay whole)."""
    parts = {p: p.split(".") for p in parameters}
    names: dict[str, str] = {}
    for path, segments in parts.items():
        for length in range(1, len(segments) + 1):
            candidate = ".".join(segments[-length:])
            clashes = [
                q for q, other in parts.items()
                if q != path and ".".join(other[-length:]) == candidate
            ]
            if not clashes:
                names[path] = re.sub(r"\[\d+\]$", "", candidate) if length == 1 else candidate
                break
        else:
            names[path] = path
    if len(set(names.values())) < len(names):  # stripping an index made two equal
        return {p: p for p in parameters}
    return names


_KIND_KEYS = ("type", "model", "kind", "name", "cc", "algorithm")


def short_value(value: Any) -> str:
    """A parameter value as a short label: a table by its kind and settings
    (``red(limit=60)``), a file path by its file name, JSON text decoded first."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            value = json.loads(value)
        except ValueError:
            pass
    if isinstance(value, Mapping):
        kind = next((k for k in _KIND_KEYS if isinstance(value.get(k), str)), None)
        rest = ", ".join(f"{k}={short_value(v)}" for k, v in value.items() if k != kind)
        if kind is None:
            return rest or "{}"
        return f"{value[kind]}({rest})" if rest else str(value[kind])
    if isinstance(value, list):
        return "[" + ", ".join(short_value(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float | np.floating):
        return format_value(float(value))
    if isinstance(value, str) and ("/" in value or "\\" in value):
        return PurePath(value.replace("\\", "/")).name or value
    return str(value)


def arm_labels(rows: Sequence[Mapping[str, Any]], parameters: Sequence[str]) -> list[str]:
    """``cc=cubic, queue=red(limit=60)`` for each arm's parameter values (the parameters
    that vary), by short parameter names."""
    names = short_names(parameters)
    return [", ".join(f"{names[p]}={short_value(row[p])}" for p in parameters) for row in rows]
