"""The algorithm lines of the benchmark: R1 run once per congestion-control algorithm, and once
with TFRC in place of TCP.

R1 (16 flows, 100 Mbps / 20 ms, 250-packet queue, 60 s) is rerun with every flow group's
``tcp.cc`` replaced by each algorithm at its defaults. What matters is the cost per event: an
algorithm whose per-ACK work is heavy shows up as more nanoseconds per event than Reno's,
whatever its goodput or event count. TFRC sends one report per RTT where TCP sends an ACK per
segment, so its events are not TCP's: it is compared by the time per data packet delivered. Scenarios are written as JSON next to the snapshot of the
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

#: Controllers that run on SACK connections: (label, tcp.cc), each judged against the ``sack``
#: row (Reno with SACK recovery) rather than against Reno with NewReno recovery.
SACK_CONTROLLERS: tuple[tuple[str, Any], ...] = (
    ("pamultcp", {"algo": "pamultcp", "n": 4}),
    ("mpat", {"algo": "mpat", "n": 4}),
)

#: The rows: (label, what changes in every flow group), each algorithm's ``tcp.cc``, Reno with
#: SACK recovery and the controllers built on it, then TFRC in place of TCP (RFC 5348's
#: defaults, R1's segment and header sizes).
ROWS: tuple[tuple[str, Any], ...] = (
    *((label, {"tcp.cc": cc}) for label, cc in ALGORITHMS),
    ("sack", {"tcp.cc": "reno", "tcp.recovery": "sack"}),
    *((label, {"tcp.cc": cc, "tcp.recovery": "sack"}) for label, cc in SACK_CONTROLLERS),
    ("tfrc", {"transport": "tfrc"}),
)

#: The row each row's cost is compared with: ``sack`` for the SACK controllers, else ``reno``.
BASELINE: dict[str, str] = {label: "sack" for label, _ in SACK_CONTROLLERS}

#: A row costing more than this many times Reno's time per event (TFRC: per delivered packet)
#: is flagged.
SLOW_FACTOR = 1.5


def row_scenario(base: Mapping[str, Any], change: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` (a parsed scenario) with ``change`` (a row of :data:`ROWS`) in every flow
    group."""
    scen = json.loads(json.dumps(base))
    groups = scen.get("flows")
    if not isinstance(groups, list) or not groups:
        raise ValueError("flows: the base scenario has no [[flows]] groups")
    for group in groups:
        if "tcp.cc" in change:
            group.setdefault("tcp", {})["cc"] = change["tcp.cc"]
        if "tcp.recovery" in change:
            group.setdefault("tcp", {})["recovery"] = change["tcp.recovery"]
        if change.get("transport") == "tfrc":
            tcp = group.pop("tcp", {})
            group["transport"] = "tfrc"
            group["tfrc"] = {k: tcp[t] for k, t in (("packet_size", "mss"), ("header", "header"))
                             if t in tcp}
    return scen


def write_scenarios(base_toml: Path, out_dir: Path) -> dict[str, Path]:
    """One JSON scenario per row in ``out_dir``, derived from ``base_toml``."""
    with base_toml.open("rb") as f:
        base = tomllib.load(f)
    paths = {}
    for label, change in ROWS:
        path = out_dir / f"r1-{label}.json"
        path.write_text(json.dumps(row_scenario(base, change), indent=1))
        paths[label] = path
    return paths


def summarize(label: str, change: Any, walls: Sequence[float],
              parsed: Sequence[Mapping[str, Any]],
              median: Callable[[Sequence[float]], float | None]) -> dict[str, Any]:
    """One row from its runs (``parsed``: flowshare-sim's JSON lines)."""
    inproc = median([p["wall_s"] for p in parsed])
    events = parsed[0]["events"] if parsed else None
    packets = parsed[0].get("acked_pkts") if parsed else None
    return {
        "algorithm": label,
        "change": change,
        "packets": packets,
        "ns_per_packet": (inproc * 1e9 / packets) if inproc and packets else None,
        "wall_s": median(walls),
        "runs_s": list(walls),
        "inprocess_s": inproc,
        "events": events,
        "ns_per_event": (inproc * 1e9 / events) if inproc and events else None,
        "goodput_mbps": parsed[0]["goodput_mbps"] if parsed else None,
        "drops": parsed[0].get("drops") if parsed else None,
    }


def add_relative_cost(rows: list[dict[str, Any]]) -> None:
    """Each row's time per event and per delivered packet relative to its baseline's (Reno's;
    for the SACK controllers, Reno with SACK recovery: :data:`BASELINE`), and whether it is
    slow (TFRC by the packet, the algorithms by the event)."""
    by_label = {r["algorithm"]: r for r in rows}
    for r in rows:
        r["baseline"] = BASELINE.get(r["algorithm"], "reno")
        ref = by_label.get(r["baseline"])
        for key, out in (("ns_per_event", "cost_vs_reno"), ("ns_per_packet", "packet_cost_vs_reno")):
            base = ref.get(key) if ref else None
            r[out] = r[key] / base if base and r.get(key) else None
        rel = r["packet_cost_vs_reno"] if r["algorithm"] == "tfrc" else r["cost_vs_reno"]
        r["slow"] = None if rel is None else rel > SLOW_FACTOR


def render(rows: Sequence[Mapping[str, Any]], repeat: int) -> list[str]:
    """The markdown section of docs/performance.md."""
    out = ["### Algorithms: R1 with each congestion-control algorithm, and with TFRC", "",
           f"flowshare only, the median of {repeat} run(s) each, every algorithm at its defaults "
           f"(`multcp` with n = 4); `tfrc`: every flow TFRC (RFC 5348's defaults) instead of TCP. "
           f"Time per event and per packet are the simulation loop's own time divided by its "
           f"events and by the data packets delivered. `sack` is Reno with SACK recovery, and "
           f"`pamultcp` and `mpat` (n = 4, on SACK connections) are compared with it; every "
           f"other row with Reno (NewReno recovery). An algorithm above {SLOW_FACTOR:g}× its "
           f"baseline's time per event, or TFRC above {SLOW_FACTOR:g}× Reno's time per packet, "
           f"is marked slow.", "",
           "| row | wall time | events | time per event | vs base | time per packet | vs base "
           "| goodput | bottleneck drops |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        rel, prel, wall, npe, npp, gp, drops = (
            r.get(k) for k in ("cost_vs_reno", "packet_cost_vs_reno", "wall_s", "ns_per_event",
                               "ns_per_packet", "goodput_mbps", "drops"))
        tfrc = r["algorithm"] == "tfrc"
        slow = " **slow**" if r.get("slow") else ""
        cells = [
            f"`{r['algorithm']}`",
            "–" if wall is None else f"{wall:.3f} s",
            f"{r.get('events') or 0:,}",
            "–" if npe is None else f"{npe:.0f} ns",
            "–" if rel is None else f"{rel:.2f}×" + ("" if tfrc else slow),
            "–" if npp is None else f"{npp:.0f} ns",
            "–" if prel is None else f"{prel:.2f}×" + (slow if tfrc else ""),
            "–" if gp is None else f"{gp:.2f} Mbps",
            "–" if drops is None else f"{drops:,}",
        ]
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    return out
