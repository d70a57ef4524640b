"""The algorithm lines of the benchmark: R1 run once per congestion-control algorithm.

R1 (16 flows, 100 Mbps / 20 ms, 250-packet queue, 60 s) is rerun with every flow group's
``tcp.cc`` replaced by each algorithm at its defaults. What matters is the cost per event: an
algorithm whose per-ACK work is heavy shows up as more nanoseconds per event than Reno's,
whatever its goodput or event count. Scenarios are written as JSON next to the snapshot of the
binary, so the run uses exactly the R1 file of the checkout with one field changed.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

#: (label, tcp.cc) per algorithm, in the order of docs/algorithms.md's families.
ALGORITHMS: tuple[tuple[str, Any], ...] = (
    ("reno", "reno"),
    ("multcp", {"algo": "multcp", "n": 4}),
    ("scalable", "scalable"),
    ("highspeed", "highspeed"),
    ("bic", "bic"),
    ("cubic", "cubic"),
    ("htcp", "htcp"),
    ("compound", "compound"),
    ("vegas", "vegas"),
    ("vegas_enhanced", "vegas_enhanced"),
    ("fast", "fast"),
    ("fast_at", "fast_at"),
)

#: An algorithm costing more than this many times Reno's time per event is flagged.
SLOW_FACTOR = 1.5


def algorithm_scenario(base: Mapping[str, Any], cc: Any) -> dict[str, Any]:
    """``base`` (a parsed scenario) with every flow group running ``cc``."""
    scen = json.loads(json.dumps(base))
    groups = scen.get("flows")
    if not isinstance(groups, list) or not groups:
        raise ValueError("flows: the base scenario has no [[flows]] groups")
    for group in groups:
        group.setdefault("tcp", {})["cc"] = cc
    return scen


def write_scenarios(base_toml: Path, out_dir: Path) -> dict[str, Path]:
    """One JSON scenario per algorithm in ``out_dir``, derived from ``base_toml``."""
    with base_toml.open("rb") as f:
        base = tomllib.load(f)
    paths = {}
    for label, cc in ALGORITHMS:
        path = out_dir / f"r1-{label}.json"
        path.write_text(json.dumps(algorithm_scenario(base, cc), indent=1))
        paths[label] = path
    return paths


def summarize(label: str, cc: Any, walls: Sequence[float], parsed: Sequence[Mapping[str, Any]],
              median: Callable[[Sequence[float]], float | None]) -> dict[str, Any]:
    """One algorithm's row from its runs (``parsed``: flowshare-sim's JSON lines)."""
    inproc = median([p["wall_s"] for p in parsed])
    events = parsed[0]["events"] if parsed else None
    return {
        "algorithm": label,
        "cc": cc,
        "wall_s": median(walls),
        "runs_s": list(walls),
        "inprocess_s": inproc,
        "events": events,
        "ns_per_event": (inproc * 1e9 / events) if inproc and events else None,
        "goodput_mbps": parsed[0]["goodput_mbps"] if parsed else None,
        "drops": parsed[0].get("drops") if parsed else None,
    }


def add_relative_cost(rows: list[dict[str, Any]]) -> None:
    """Each row's time per event relative to Reno's, and whether it is slow."""
    reno = next((r["ns_per_event"] for r in rows if r["algorithm"] == "reno"), None)
    for r in rows:
        rel = r["ns_per_event"] / reno if reno and r["ns_per_event"] else None
        r["cost_vs_reno"] = rel
        r["slow"] = None if rel is None else rel > SLOW_FACTOR


def render(rows: Sequence[Mapping[str, Any]], repeat: int) -> list[str]:
    """The markdown section of docs/performance.md."""
    out = ["### Algorithms: R1 with each congestion-control algorithm", "",
           f"flowshare only, the median of {repeat} run(s) each, every algorithm at its defaults "
           f"(`multcp` with n = 4). Time per event is the simulation loop's own time divided by "
           f"its events; an algorithm above {SLOW_FACTOR:g}× Reno's is marked slow.", "",
           "| algorithm | wall time | events | time per event | vs Reno | goodput "
           "| bottleneck drops |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        rel, wall, npe, gp, drops = (r.get(k) for k in
                                     ("cost_vs_reno", "wall_s", "ns_per_event", "goodput_mbps", "drops"))
        cells = [
            f"`{r['algorithm']}`",
            "–" if wall is None else f"{wall:.3f} s",
            f"{r.get('events') or 0:,}",
            "–" if npe is None else f"{npe:.0f} ns",
            "–" if rel is None else f"{rel:.2f}×" + (" **slow**" if r.get("slow") else ""),
            "–" if gp is None else f"{gp:.2f} Mbps",
            "–" if drops is None else f"{drops:,}",
        ]
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    return out
