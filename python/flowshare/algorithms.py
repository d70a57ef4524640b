"""The registry of congestion-control algorithms, loss recoveries and queue disciplines.

Everything here is read from the Rust core (``_core.algorithms_json``): the algorithms a
scenario may name in ``tcp.cc``, each parameter with its default (per variant where the
variants differ), its allowed values and a one-line description, and the reference. An
algorithm added to the core is listed without a change here.

Examples
--------
>>> from flowshare import algorithms
>>> "cubic" in algorithms.names()
True
>>> [p["name"] for p in algorithms.describe("multcp")["params"]]
['n', 'slow_start', 'loss_policy']
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from . import _core

__all__ = ["describe", "format_listing", "format_one", "listing", "names"]


@cache
def _listing_text() -> str:
    return _core.algorithms_json()


def listing() -> dict[str, Any]:
    """The whole listing: ``algorithms``, ``recoveries`` and ``queues``."""
    data: dict[str, Any] = json.loads(_listing_text())
    return data


def names() -> list[str]:
    """The names ``tcp.cc`` accepts, in the registry's order."""
    return [a["name"] for a in listing()["algorithms"]]


def describe(name: str) -> dict[str, Any]:
    """One algorithm's entry.

    Raises
    ------
    KeyError
        If the core has no algorithm of that name; the message suggests the nearest names.
    """
    for a in listing()["algorithms"]:
        if a["name"] == name:
            entry: dict[str, Any] = a
            return entry
    raise KeyError(_unknown(name))


def _unknown(name: str) -> str:
    known = names()
    near = sorted(known, key=lambda k: _distance(name.lower(), k))[:3]
    near = [k for k in near if _distance(name.lower(), k) <= max(2, len(k) // 3)]
    hint = f"; did you mean {' or '.join(repr(k) for k in near)}?" if near else ""
    return f"unknown algorithm {name!r}{hint} (algorithms: {', '.join(known)})"


def _distance(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a):
        prev, row[0] = row[0], i + 1
        for j, cb in enumerate(b):
            prev, row[j + 1] = row[j + 1], min(prev + (ca != cb), row[j] + 1, row[j + 1] + 1)
    return row[len(b)]


def _value(v: Any) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict):
        return ", ".join(f"{k}: {_value(x)}" for k, x in v.items())
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def format_one(entry: dict[str, Any]) -> str:
    """An algorithm's entry as text: summary, reference and a table of parameters."""
    lines = [f"{entry['name']} — {entry['summary']}", f"  reference: {entry['reference']}"]
    if not entry["params"]:
        lines.append("  parameters: none")
        return "\n".join(lines)
    lines.append("  parameters (default; allowed):")
    for p in entry["params"]:
        allowed = f"; {p['allowed']}" if p["allowed"] else ""
        lines.append(f"    {p['name']} = {_value(p['default'])}{allowed}")
        if p["description"]:
            lines.append(f"        {p['description']}")
    example = next((p for p in entry["params"] if p["name"] != "variant"), None)
    if example is not None:
        default = p_default = example["default"]
        if isinstance(default, dict):
            p_default = next(iter(default.values()))
        shown = json.dumps(p_default) if not isinstance(p_default, bool) else _value(p_default)
        lines.append(
            f"  e.g. cc = {{ algo = \"{entry['name']}\", {example['name']} = {shown} }}"
        )
    return "\n".join(lines)


def format_listing(data: dict[str, Any]) -> str:
    """The whole listing as text: one line per algorithm, recovery and queue discipline."""
    width = max(len(a["name"]) for a in data["algorithms"])
    out = ["Congestion control (tcp.cc = NAME, or a table { algo = NAME, PARAM = VALUE }):"]
    for a in data["algorithms"]:
        params = ", ".join(p["name"] for p in a["params"]) or "no parameters"
        out.append(f"  {a['name']:<{width}}  {a['summary']} [{params}]")
    out.append("")
    out.append("Loss recovery (tcp.recovery = NAME; any algorithm):")
    width = max(len(r["name"]) for r in data["recoveries"])
    for r in data["recoveries"]:
        out.append(f"  {r['name']:<{width}}  {r['description']}")
    out.append("")
    out.append("Queue disciplines (queue.kind = NAME; see docs/queues.md):")
    width = max(len(q["name"]) for q in data["queues"])
    for q in data["queues"]:
        out.append(f"  {q['name']:<{width}}  {q['description']}")
    out.append("")
    out.append("'flowshare algorithms NAME' shows an algorithm's parameters, defaults and reference.")
    return "\n".join(out)
