"""Plots of a run's time series (matplotlib, Agg backend; no pyplot state is touched)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, cast

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["MAX_FLOW_LINES", "save_figure", "throughput_cwnd"]

RATE = "send_rate_bps"
"""The flow-series column drawn as throughput."""

MAX_FLOW_LINES = 20
"""Most flows drawn one line each; the aggregate is drawn whenever there is more than one."""

MAX_POINTS = 5_000
"""Most points a line has: a longer series is drawn as means over consecutive samples (a plot
is about a thousand pixels wide, and millions of points would only cost memory)."""


def throughput_cwnd(
    flow_series: pd.DataFrame | Iterable[pd.DataFrame],
    flows: pd.DataFrame | None = None,
    *,
    max_flows: int = MAX_FLOW_LINES,
) -> Figure:
    """Throughput and cwnd of each flow over time, in two panels sharing the time axis.

    Throughput is the sending rate (``send_rate_bps``, retransmissions included) per sample
    interval. In-order goodput per interval is not drawn: a repaired loss releases a
    whole window of buffered data in one interval, and the spikes would hide everything else
    (the total goodput is in ``summary.json``).

    Parameters
    ----------
    flow_series : pandas.DataFrame or iterable of pandas.DataFrame
        The ``flow_series`` table of a run (columns ``time_s``, ``flow``, ``send_rate_bps``,
        ``cwnd``), or a collection of its chunks in time order (a sample time in one chunk
        only), iterated twice and reduced a chunk at a time, so that a long run's series need
        not be in memory at once.
    flows : pandas.DataFrame, optional
        The ``flows`` table, used for line labels (``name`` and ``flow`` columns).
    max_flows : int, default 20
        Flows drawn individually (the lowest ids). With more than one flow the top panel also
        shows the total throughput of all flows and the bottom panel their mean cwnd.

    Returns
    -------
    matplotlib.figure.Figure
        The figure, attached to an Agg canvas.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 6), layout="constrained")
    FigureCanvasAgg(fig)
    ax_rate, ax_cwnd = fig.subplots(2, 1, sharex=True)
    ax_rate.set_ylabel("throughput (Mbit/s)")
    ax_cwnd.set_ylabel("cwnd (segments)")
    ax_cwnd.set_xlabel("time (s)")
    for ax in (ax_rate, ax_cwnd):
        ax.grid(visible=True, alpha=0.3)

    chunks = [flow_series] if isinstance(flow_series, pd.DataFrame) else flow_series
    ids = sorted({int(i) for c in chunks for i in c["flow"].unique().tolist()})
    if not ids:
        ax_rate.text(
            0.5,
            0.5,
            "no time series recorded (simulation.sample_interval = 0)",
            ha="center",
            va="center",
            transform=ax_rate.transAxes,
        )
        return fig

    shown = ids[:max_flows]
    labels = _labels(flows)
    width = 0.8 if len(shown) > 8 else 1.2
    times = sum(int(c["time_s"].nunique()) for c in chunks)
    stride = max(1, -(-times // MAX_POINTS))
    lines, total, mean_cwnd = _reduce(chunks, shown, aggregate=len(ids) > 1, stride=stride)
    for flow, series in lines:
        label = labels.get(flow, f"flow {flow}")
        ax_rate.plot(series["time_s"], series[RATE] / 1e6, linewidth=width, label=label)
        ax_cwnd.plot(series["time_s"], series["cwnd"], linewidth=width, label=label)
    if len(ids) > 1:
        agg = {"color": "black", "linewidth": 2.0}
        ax_rate.plot(total.index, total, label=f"total of {len(ids)} flows", **agg)
        ax_cwnd.plot(mean_cwnd.index, mean_cwnd, label=f"mean of {len(ids)} flows", **agg)
    if stride > 1:
        ax_cwnd.set_title(f"means over {stride} samples", fontsize=9)
    if len(shown) < len(ids):
        ax_rate.set_title(f"{len(shown)} of {len(ids)} flows shown individually", fontsize=9)
    if len(shown) + 1 <= 12:
        ax_rate.legend(fontsize=8, loc="upper right")
        ax_cwnd.legend(fontsize=8, loc="upper right")
    ax_rate.set_ylim(bottom=0)
    ax_cwnd.set_ylim(bottom=0)
    return fig


def _reduce(
    chunks: Iterable[pd.DataFrame], shown: list[int], *, aggregate: bool, stride: int
) -> tuple[list[tuple[int, pd.DataFrame]], pd.Series, pd.Series]:
    """The lines to draw, a chunk at a time: each shown flow's series, the total throughput
    (Mbit/s) and the mean cwnd over all flows per sample time; with ``stride > 1``, means over
    ``stride`` consecutive sample times, kept as sums and counts per chunk so that memory
    follows the points drawn (a time is in one chunk only)."""
    columns = ["time_s", RATE, "cwnd"]
    parts, totals, means = [], [], []
    offset = 0
    for c in chunks:
        if not len(c):
            continue
        mine = c[c["flow"].isin(shown)]
        if aggregate:
            by_time = c.groupby("time_s", sort=True)
            total = by_time[RATE].sum(min_count=1) / 1e6
            mean = by_time["cwnd"].mean()
        if stride == 1:
            parts.append(mine)
            if aggregate:
                totals.append(total)
                means.append(mean)
            continue
        # Bin each sample time by its rank over the whole run; keep sums and counts per bin.
        index = np.unique(c["time_s"].to_numpy(), return_inverse=True)[1]
        bins = (offset + index) // stride
        offset += int(index.max()) + 1
        parts.append(mine[columns].assign(flow=mine["flow"], bin=bins[c["flow"].isin(shown).to_numpy()])
                     .groupby(["flow", "bin"]).agg(["sum", "count"]))
        if aggregate:
            per_time = pd.DataFrame({"time_s": total.index, "total": total.to_numpy(), "mean": mean.to_numpy()})
            per_time["bin"] = (offset - len(per_time) + np.arange(len(per_time))) // stride
            totals.append(per_time.groupby("bin").agg(["sum", "count"]))
    if stride == 1:
        subset = pd.concat(parts) if parts else pd.DataFrame(columns=["flow", *columns])
        lines = [
            (int(cast(int, flow)), series.sort_values("time_s", kind="stable"))
            for flow, series in subset.groupby("flow", sort=True)
        ]
        total_s = pd.concat(totals) if totals else pd.Series(dtype=float)
        mean_s = pd.concat(means) if means else pd.Series(dtype=float)
        return lines, total_s, mean_s

    def means_of(sums: pd.DataFrame, names: list[str]) -> pd.DataFrame:
        return pd.DataFrame({n: sums[(n, "sum")] / sums[(n, "count")] for n in names})

    lines = []
    if parts:
        binned = means_of(pd.concat(parts).groupby(level=[0, 1]).sum(), columns)
        for flow, series in binned.groupby(level=0, sort=True):
            lines.append((int(cast(int, flow)), series.droplevel(0)))
    if totals:
        agg = means_of(pd.concat(totals).groupby(level=0).sum(), ["time_s", "total", "mean"])
        return lines, agg["total"].set_axis(agg["time_s"]), agg["mean"].set_axis(agg["time_s"])
    return lines, pd.Series(dtype=float), pd.Series(dtype=float)


def save_figure(fig: Figure, path: str | os.PathLike[str]) -> None:
    """Save ``fig`` as a PNG with no timestamp in its metadata."""
    fig.savefig(path, format="png", dpi=110, metadata={"Software": None})


def _labels(flows: pd.DataFrame | None) -> dict[int, str]:
    if flows is None or "flow" not in flows or "name" not in flows:
        return {}
    return {
        int(flow): f"{name} {flow}"
        for flow, name in zip(flows["flow"].tolist(), flows["name"].tolist(), strict=True)
    }
