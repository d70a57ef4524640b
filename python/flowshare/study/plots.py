"""Plot helpers for studies: lines with confidence bands, grouped bars, heatmaps, rank matrices.

Each helper returns a matplotlib ``Figure`` attached to an Agg canvas (no pyplot state is
touched, so they are safe in worker processes and tests); save it with
:func:`flowshare.plots.save_figure`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from .stats import Pca

__all__ = [
    "grouped_bars", "heatmap", "lines_with_bands", "pca_scores", "rank_matrix", "time_series",
]

GREEN = "#2e9e44"
RED = "#d1342f"
PALE_GREEN = "#cdebd3"
PALE_RED = "#f6d0ce"


def _figure(width: float, height: float) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _label(ax: Axes, xlabel: str | None, ylabel: str | None, title: str | None) -> None:
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=10)
    _plain_ticks(ax)


def _plain_ticks(ax: Axes) -> None:
    """Tick labels as plain numbers: no offset ("+1e7") and no factor ("1e7") above the axis.

    The callers pass values already in a unit with an engineering prefix (Mbit/s, ms) and
    name that unit in the axis label."""
    from matplotlib.ticker import ScalarFormatter

    for axis in (ax.xaxis, ax.yaxis):
        formatter = axis.get_major_formatter()
        if isinstance(formatter, ScalarFormatter) and axis.get_scale() == "linear":
            formatter.set_useOffset(False)
            formatter.set_scientific(False)


def lines_with_bands(
    data: pd.DataFrame,
    *,
    x: str,
    y: str = "mean",
    low: str = "low",
    high: str = "high",
    hue: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    title: str | None = None,
    log_x: bool = False,
) -> Figure:
    """Lines of ``y`` against ``x`` with a shaded confidence band from ``low`` to ``high``.

    ``data`` has one row per point (e.g. per arm: mean and t-interval of a response); with
    ``hue`` one line per distinct value of that column. Points are sorted by ``x``; missing
    bounds (a single replication) leave the band out at that point.
    """
    fig = _figure(7.5, 4.5)
    ax = fig.subplots()
    groups: list[tuple[Any, pd.DataFrame]] = (
        list(data.groupby(hue, sort=True)) if hue else [(None, data)]
    )
    for key, part in groups:
        part = part.sort_values(x, kind="stable")
        label = None if hue is None else f"{hue} = {key}"
        (line,) = ax.plot(part[x], part[y], marker="o", markersize=3.5, linewidth=1.5,
                          label=label)
        ax.fill_between(part[x], part[low], part[high], color=line.get_color(), alpha=0.2,
                        linewidth=0)
    if log_x:
        ax.set_xscale("log")
    if hue and len(groups) <= 12:
        ax.legend(fontsize=8)
    ax.grid(visible=True, alpha=0.3)
    _label(ax, xlabel or x, ylabel or y, title)
    return fig


def grouped_bars(
    data: pd.DataFrame,
    *,
    group: str,
    y: str = "mean",
    low: str | None = "low",
    high: str | None = "high",
    hue: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    title: str | None = None,
) -> Figure:
    """Bars of ``y`` for each value of ``group``, side by side for each value of ``hue``.

    With ``low``/``high`` each bar carries an error bar spanning its confidence interval.
    Groups and hues keep their order of first appearance in ``data``.
    """
    groups = list(dict.fromkeys(data[group].tolist()))
    hues: list[Any] = list(dict.fromkeys(data[hue].tolist())) if hue else [None]
    fig = _figure(max(6.0, min(16.0, 0.55 * len(groups) * len(hues) + 2)), 4.5)
    ax = fig.subplots()
    width = 0.8 / len(hues)
    positions = np.arange(len(groups), dtype=float)
    for i, key in enumerate(hues):
        part = data if hue is None else data[data[hue] == key]
        part = part.set_index(group).reindex(groups)
        values = part[y].to_numpy(dtype=float)
        err = None
        if low and high:
            lo = values - part[low].to_numpy(dtype=float)
            hi = part[high].to_numpy(dtype=float) - values
            # An interval clipped to the quantity's range may end on the wrong side of a
            # mean outside that range (a value the response should not take): no bar there.
            err = np.clip(np.nan_to_num(np.vstack([lo, hi]), nan=0.0), 0.0, None)
        ax.bar(positions + (i - (len(hues) - 1) / 2) * width, values, width * 0.95, yerr=err,
               capsize=2.5, label=None if hue is None else f"{hue} = {key}")
    ax.set_xticks(positions, [str(g) for g in groups], rotation=30 if len(groups) > 6 else 0,
                  ha="right" if len(groups) > 6 else "center", fontsize=8)
    if hue and len(hues) <= 12:
        ax.legend(fontsize=8)
    ax.grid(visible=True, axis="y", alpha=0.3)
    _label(ax, xlabel or group, ylabel or y, title)
    return fig


def heatmap(
    matrix: pd.DataFrame,
    *,
    title: str | None = None,
    colorbar: str | None = None,
    annotate: bool = True,
    fmt: str = "{:.3g}",
    cmap: str = "viridis",
) -> Figure:
    """A heatmap of a matrix (rows: index, columns: columns), cells annotated with values.

    ``nan`` cells are left blank.
    """
    values = matrix.to_numpy(dtype=float)
    rows, cols = values.shape
    fig = _figure(max(4.5, min(16.0, 0.6 * cols + 2.5)), max(3.0, min(14.0, 0.35 * rows + 1.8)))
    ax = fig.subplots()
    finite = values[np.isfinite(values)]
    # An all-nan or constant matrix still gets a non-degenerate colour scale.
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    image = ax.imshow(np.ma.masked_invalid(values), aspect="auto", cmap=cmap, vmin=lo, vmax=hi)
    bar = fig.colorbar(image, ax=ax, label=colorbar or "")
    _plain_ticks(bar.ax)
    ax.set_xticks(range(cols), [str(c) for c in matrix.columns], fontsize=8,
                  rotation=30 if cols > 6 else 0, ha="right" if cols > 6 else "center")
    ax.set_yticks(range(rows), [str(r) for r in matrix.index], fontsize=8)
    ax.set_xlabel(str(matrix.columns.name or ""))
    ax.set_ylabel(str(matrix.index.name or ""))
    if annotate and rows * cols <= 400:
        middle = (finite.min() + finite.max()) / 2 if finite.size else 0.0
        for (r, c), v in np.ndenumerate(values):
            if np.isfinite(v):
                ax.text(c, r, fmt.format(v), ha="center", va="center", fontsize=7,
                        color="black" if v > middle else "white")
    _label(ax, None, None, title)
    return fig


def rank_matrix(
    ranks: pd.DataFrame,
    *,
    colour: pd.DataFrame | None = None,
    filled: pd.DataFrame | None = None,
    title: str | None = None,
    separators: Sequence[Hashable] = (),
) -> Figure:
    """A rank matrix drawn as Mills et al. (2010) draw it: each cell shows the rank as a number.

    ``colour`` (−1/0/+1 per cell, see :func:`flowshare.study.ranks.rank_colours`) tints cells
    above the mean of their k values green and below it red; ``filled`` cells get a solid
    fill (the extreme farther from the mean). Without ``colour`` the cells are shaded by rank.
    ``separators`` are columns before which a vertical line is drawn (file-type blocks).
    """
    from matplotlib.colors import ListedColormap

    values = ranks.to_numpy(dtype=float)
    rows, cols = values.shape
    fig = _figure(max(4.5, min(16.0, 0.45 * cols + 2.5)), max(3.0, min(14.0, 0.3 * rows + 1.5)))
    ax = fig.subplots()
    if colour is not None:
        code = colour.reindex(index=ranks.index, columns=ranks.columns).to_numpy(dtype=float)
        code = np.nan_to_num(code, nan=0.0)
        if filled is not None:
            fill = filled.reindex(index=ranks.index, columns=ranks.columns).to_numpy(dtype=bool)
            code = np.where(fill, code * 2, code)
        cmap = ListedColormap([RED, PALE_RED, "white", PALE_GREEN, GREEN])
        ax.imshow(code, aspect="auto", cmap=cmap, vmin=-2.5, vmax=2.5)
    else:
        ax.imshow(np.ma.masked_invalid(values), aspect="auto", cmap="Greens", alpha=0.6)
    for (r, c), v in np.ndenumerate(values):
        if np.isfinite(v):
            text = f"{v:g}" if v == round(v) else f"{v:.1f}"
            ax.text(c, r, text, ha="center", va="center", fontsize=7)
    for column in separators:
        position = list(ranks.columns).index(column)
        ax.axvline(position - 0.5, color="black", linewidth=1.0)
    ax.set_xticks(range(cols), [str(c) for c in ranks.columns], fontsize=7,
                  rotation=45 if cols > 6 else 0, ha="right" if cols > 6 else "center")
    ax.set_yticks(range(rows), [str(r) for r in ranks.index], fontsize=7)
    ax.set_xlabel(str(ranks.columns.name or ""))
    ax.set_ylabel(str(ranks.index.name or ""))
    _label(ax, None, None, title)
    return fig


def pca_scores(result: Pca, *, labels: Sequence[Any] | None = None,
               title: str | None = None) -> Figure:
    """Explained variance per component (left) and the scores on PC1 × PC2 (right).

    ``labels`` (one per observation, e.g. the arm) colour the points.
    """
    fig = _figure(10.0, 4.2)
    ax_var, ax_scores = fig.subplots(1, 2, width_ratios=[1, 1.6])
    k = len(result.explained)
    ax_var.bar(range(1, k + 1), result.explained * 100)
    ax_var.plot(range(1, k + 1), np.cumsum(result.explained) * 100, color="black", marker="o",
                markersize=3, label="cumulative")
    ax_var.set_xticks(range(1, k + 1))
    ax_var.set_ylim(0, 105)
    ax_var.legend(fontsize=8)
    _label(ax_var, "principal component", "variance explained (%)", None)
    scores = result.scores
    second = scores.iloc[:, 1] if scores.shape[1] > 1 else pd.Series(0.0, index=scores.index)
    if labels is None:
        ax_scores.scatter(scores.iloc[:, 0], second, s=14)
    else:
        keys = pd.Series(list(labels), index=scores.index)
        for key in dict.fromkeys(keys.tolist()):
            mask = (keys == key).to_numpy()
            ax_scores.scatter(scores.iloc[mask, 0], second[mask], s=14, label=str(key))
        if keys.nunique() <= 12:
            ax_scores.legend(fontsize=7)
    ax_scores.axhline(0, color="grey", linewidth=0.5)
    ax_scores.axvline(0, color="grey", linewidth=0.5)
    ax_scores.grid(visible=True, alpha=0.3)
    _label(ax_scores, f"PC1 ({result.explained[0]:.0%})",
           f"PC2 ({result.explained[1]:.0%})" if k > 1 else "PC2", title)
    return fig


def time_series(
    lines: Mapping[str, pd.Series],
    *,
    xlabel: str = "time (s)",
    ylabel: str | None = None,
    title: str | None = None,
) -> Figure:
    """One line per entry of ``lines`` (label → series indexed by time), overlaid.

    A legend names the lines when there are at most 12 of them.
    """
    fig = _figure(7.5, 4.2)
    ax = fig.subplots()
    for label, series in lines.items():
        ax.plot(series.index.to_numpy(dtype=float), series.to_numpy(dtype=float),
                linewidth=1.2, label=label)
    if 1 < len(lines) <= 12:
        ax.legend(fontsize=8)
    ax.grid(visible=True, alpha=0.3)
    _label(ax, xlabel, ylabel, title)
    return fig
