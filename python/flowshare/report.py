"""A short Markdown report of one run.

The report reads a run through :class:`Run`, the few attributes of a
:class:`flowshare.RunResult` it needs; this module does not import :mod:`flowshare.results`,
which writes ``report.md`` with the other files of a run.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

import pandas as pd

__all__ = ["Run", "render_report"]

MAX_FLOW_ROWS = 40
MAX_QUEUE_ROWS = 10


class Run(Protocol):
    """What a report reads of a run (the attributes of :class:`flowshare.RunResult`)."""

    summary: dict[str, Any]
    scenario: dict[str, Any]
    flows: pd.DataFrame
    queues: pd.DataFrame

    def aggregate(self) -> dict[str, Any]:
        """Figures over all flows and queues."""
        ...


def render_report(
    result: Run, *, plot: str | None = "plot.png", title: str | None = None
) -> str:
    """Render a Markdown summary of ``result``.

    Parameters
    ----------
    result : RunResult
        The run to describe (any object with the attributes of :class:`Run`).
    plot : str, optional
        Relative path of the plot image to embed; ``None`` for no image.
    title : str, optional
        First heading; default ``"flowshare run report"``.

    Returns
    -------
    str
        Markdown text: run facts, aggregate figures, a table of flows (at most 40 rows) and
        the busiest queues (at most 10 rows, by utilization).
    """
    summary, agg = result.summary, result.aggregate()
    topology = (result.scenario.get("topology") or {}).get("kind", "?")
    lines = [f"# {title or 'flowshare run report'}", ""]
    lines += [
        f"- scenario: {topology} topology, {agg['flows']} flows, "
        f"{_num(summary.get('duration_s'))} s simulated, seed {summary.get('seed')}",
        f"- run: {_int(summary.get('events'))} events in {_num(summary.get('wall_s'), 3)} s "
        f"wall time, flowshare {summary.get('version', '?')}, "
        f"scenario hash `{summary.get('scenario_hash', '?')}`",
        "- total goodput (payload delivered by all flows / simulated time after the warm-up): "
        f"{_mbps(agg['goodput_bps'])} Mbit/s",
        f"- Jain's fairness index over the flows' goodput: {_num(agg['jain_index'], 4)}",
        f"- packets dropped at queues: {_int(agg['drops'])}; retransmissions: "
        f"{_int(agg['retransmits'])}; timeouts: {_int(agg['timeouts'])}",
    ]
    warmup = summary.get("warmup_s") or 0.0
    if warmup > 0:
        lines.append(
            f"- warm-up: the first {_num(warmup)} s are left out of goodput, Jain's index and the "
            "other steady-state figures; counts cover the whole run"
        )
    lines.append("")
    if plot:
        lines += [f"![goodput, sending rate, cwnd, queue and RTT over time]({plot})", ""]

    lines += ["## Flows", ""]
    lines += _flow_table(result.flows)
    lines += ["", "## Queues", ""]
    lines += _queue_table(result.queues)
    lines += [
        "",
        "## Files",
        "",
        "- `flows.csv`, `queues.csv`: the per-flow and per-queue tables",
        "- `delays.csv`: per-flow histograms of one-way delay; `fct.csv`: flow-completion times",
        "- `timeseries.parquet`: sampled flow and queue time series in one table",
        "- `summary.json`: run facts, aggregate figures and the normalized scenario",
        "- `plot.png`: goodput, sending rate, cwnd, bottleneck queue and RTT distribution",
        "",
    ]
    return "\n".join(lines)


def _flow_table(flows: pd.DataFrame) -> list[str]:
    header = ["flow", "name", "cc", "recovery", "goodput (Mbit/s)", "mean RTT (ms)",
              "retransmits", "timeouts", "drops"]
    rows = []
    for r in flows.head(MAX_FLOW_ROWS).to_dict("records"):
        rows.append([
            _int(r.get("flow")), _text(r.get("name")), _text(r.get("cc")),
            _text(r.get("recovery")), _mbps(r.get("goodput_bps")),
            _num(_scale(r.get("rtt_mean_s"), 1e3), 2), _int(r.get("retransmits")),
            _int(r.get("timeouts")), _int(r.get("drops")),
        ])
    lines = _table(header, rows)
    lines += ["", "A flow's goodput is measured over the time it was active."]
    if len(flows) > MAX_FLOW_ROWS:
        lines += ["", f"{len(flows) - MAX_FLOW_ROWS} more flows in `flows.csv`."]
    return lines


def _queue_table(queues: pd.DataFrame) -> list[str]:
    header = ["queue", "link", "from → to", "rate (Mbit/s)", "utilization", "mean len (pkts)",
              "max len (pkts)", "drops"]
    if "utilization" in queues:
        busiest = queues.sort_values("utilization", ascending=False, kind="stable")
    else:
        busiest = queues
    rows = []
    for r in busiest.head(MAX_QUEUE_ROWS).to_dict("records"):
        rows.append([
            _int(r.get("queue")), _text(r.get("link")),
            f"{_text(r.get('from'))} → {_text(r.get('to'))}", _mbps(r.get("rate_bps")),
            _num(r.get("utilization"), 3), _num(r.get("mean_len_pkts"), 2),
            _int(r.get("max_len_pkts")), _int(r.get("drops")),
        ])
    lines = _table(header, rows)
    if len(queues) > MAX_QUEUE_ROWS:
        lines += ["", f"The {MAX_QUEUE_ROWS} busiest of {len(queues)} link directions; "
                  "all of them in `queues.csv`."]
    return lines


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return out


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _text(value: Any) -> str:
    if _missing(value):
        return "–"
    return str(value).replace("|", "\\|")


def _int(value: Any) -> str:
    return "–" if _missing(value) else str(int(value))


def _num(value: Any, digits: int = 3) -> str:
    return "–" if _missing(value) else f"{float(value):.{digits}f}".rstrip("0").rstrip(".")


def _scale(value: Any, factor: float) -> Any:
    return value if _missing(value) else float(value) * factor


def _mbps(value: Any) -> str:
    return "–" if _missing(value) else f"{float(value) / 1e6:.3f}"
