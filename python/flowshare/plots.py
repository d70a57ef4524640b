"""Plots of a run's time series (matplotlib, Agg backend; no pyplot state is touched)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, cast

import pandas as pd

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["MAX_FLOW_LINES", "save_figure", "throughput_cwnd"]

RATE = "send_rate_bps"
"""The flow-series column drawn as throughput."""

MAX_FLOW_LINES = 20
"""Most flows drawn one line each; the aggregate is drawn whenever there is more than one."""


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
    subset_parts, totals, mean_cwnds = [], [], []
    for c in chunks:
        subset_parts.append(c[c["flow"].isin(shown)])
        if len(ids) > 1 and len(c):
            # Per sample time, over all flows; a time is in one chunk only.
            by_time = c.groupby("time_s", sort=True)
            totals.append(by_time[RATE].sum(min_count=1) / 1e6)
            mean_cwnds.append(by_time["cwnd"].mean())
    subset = pd.concat(subset_parts)
    for flow, series in subset.groupby("flow", sort=True):
        series = series.sort_values("time_s", kind="stable")
        label = labels.get(int(cast(int, flow)), f"flow {flow}")
        ax_rate.plot(series["time_s"], series[RATE] / 1e6, linewidth=width, label=label)
        ax_cwnd.plot(series["time_s"], series["cwnd"], linewidth=width, label=label)
    if len(ids) > 1:
        total = pd.concat(totals)
        mean_cwnd = pd.concat(mean_cwnds)
        agg = {"color": "black", "linewidth": 2.0}
        ax_rate.plot(total.index, total, label=f"total of {len(ids)} flows", **agg)
        ax_cwnd.plot(mean_cwnd.index, mean_cwnd, label=f"mean of {len(ids)} flows", **agg)
    if len(shown) < len(ids):
        ax_rate.set_title(f"{len(shown)} of {len(ids)} flows shown individually", fontsize=9)
    if len(shown) + 1 <= 12:
        ax_rate.legend(fontsize=8, loc="upper right")
        ax_cwnd.legend(fontsize=8, loc="upper right")
    ax_rate.set_ylim(bottom=0)
    ax_cwnd.set_ylim(bottom=0)
    return fig


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
