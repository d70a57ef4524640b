"""``flowshare report DIR``: one self-contained HTML page (and PNG plots) for a sweep's run store.

The run store (written by ``flowshare sweep``) is read as documented in ``docs/reports.md``:
``sweep.json`` (parameters, responses, replications, design, root seed), ``catalog.parquet``
(one row per run with its status and error) and ``responses.parquet`` (one row per finished run
with its parameter and response values). Nothing under ``runs/`` is needed.

The page holds the sweep facts, the run status counts with every failed run's error, per
response a table of mean ± t confidence interval by arm and a plot, a comparison of the two
arms when there are two (Jain's unpaired t test, and the paired test when the arms share
seeds), Grubbs outliers, a PCA of the responses, and optionally rank matrices. Images are
inlined as base64 PNG, so the page has no external assets; each plot is also written as a PNG
beside it. The output appears whole or not at all. The same store always gives byte-identical
files (no timestamps).
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import os
import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from .._files import atomic_directory, check_directory
from . import plots, quantities, ranks, stats

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["REPORT_FILE", "Store", "StoreError", "load_store", "write_report"]

REPORT_FILE = "report.html"
STATUSES = ("done", "failed", "pending")
MAX_ERROR_CHARS = 400
MAX_LINE_LEVELS = 10
"""Most distinct values of a second parameter drawn as separate lines."""


class StoreError(ValueError):
    """A run store that is missing or cannot be read; the message is one line."""


@dataclass(frozen=True)
class Store:
    """A run store read from disk."""

    directory: Path
    sweep: dict[str, Any]
    catalog: pd.DataFrame
    responses: pd.DataFrame
    parameters: list[str] = field(default_factory=list)
    response_names: list[str] = field(default_factory=list)


def _string_list(sweep: dict[str, Any], key: str, path: Path) -> list[str]:
    value = sweep.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise StoreError(f"{path}: '{key}' must be a list of names, got {value!r}")
    return list(value)


def _read_parquet(path: Path) -> pd.DataFrame:
    try:
        return pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several unrelated types for corrupt files
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise StoreError(f"{path}: not a readable Parquet file ({first})") from None


def load_store(directory: str | os.PathLike[str]) -> Store:
    """Read and check a run store.

    Raises
    ------
    StoreError
        With one line naming the file and what is wrong: the directory or ``sweep.json`` or
        ``catalog.parquet`` missing, invalid JSON, a required field or column missing, or
        ``responses.parquet`` missing while the catalog lists finished runs.
    """
    root = Path(directory)
    if not root.is_dir():
        raise StoreError(f"{root}: no such run store directory")
    sweep_path = root / "sweep.json"
    if not sweep_path.is_file():
        raise StoreError(f"{sweep_path}: missing; is {root} a sweep output directory?")
    try:
        sweep = json.loads(sweep_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise StoreError(f"{sweep_path}: not valid JSON ({exc})") from None
    if not isinstance(sweep, dict):
        raise StoreError(f"{sweep_path}: must hold a JSON object")
    parameters = _string_list(sweep, "parameters", sweep_path)
    # A name listed twice is one response (and gets one section).
    response_names = list(dict.fromkeys(_string_list(sweep, "responses", sweep_path)))

    catalog_path = root / "catalog.parquet"
    if not catalog_path.is_file():
        raise StoreError(f"{catalog_path}: missing")
    catalog = _read_parquet(catalog_path)
    for column in ("run_id", "arm", "status"):
        if column not in catalog.columns:
            raise StoreError(f"{catalog_path}: no '{column}' column")
    unknown = sorted(set(catalog["status"].astype(str)) - set(STATUSES))
    if unknown:
        raise StoreError(
            f"{catalog_path}: unknown status {unknown[0]!r}; allowed: {', '.join(STATUSES)}"
        )

    responses_path = root / "responses.parquet"
    done = int((catalog["status"] == "done").sum())
    if responses_path.is_file():
        responses = _read_parquet(responses_path)
    elif done == 0:
        responses = pd.DataFrame(columns=["run_id", "arm", *parameters, *response_names])
    else:
        raise StoreError(f"{responses_path}: missing although {done} runs are done")
    for column in ("run_id", "arm", *response_names):
        if column not in responses.columns:
            raise StoreError(f"{responses_path}: no '{column}' column")
    for name in response_names:
        if len(responses) and not pd.api.types.is_numeric_dtype(responses[name]):
            raise StoreError(f"{responses_path}: response '{name}' is not numeric")
    return Store(root, sweep, catalog, responses, parameters, response_names)


# ---------------------------------------------------------------------------------------------
# Analysis


@dataclass
class _Page:
    """The report under construction: HTML sections and the PNG files."""

    sections: list[str] = field(default_factory=list)
    images: dict[str, bytes] = field(default_factory=dict)

    def figure(self, fig: Figure, name: str, caption: str) -> str:
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=110, metadata={"Software": None})
        data = buffer.getvalue()
        file = _unique(_slug(name) + ".png", self.images)
        self.images[file] = data
        encoded = base64.b64encode(data).decode("ascii")
        return (
            f'<figure><img alt="{_e(caption)}" src="data:image/png;base64,{encoded}">'
            f"<figcaption>{_e(caption)} (<code>{_e(file)}</code>)</figcaption></figure>"
        )


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "plot"


def _unique(name: str, taken: dict[str, bytes]) -> str:
    stem, suffix, i = name[: -len(".png")], ".png", 2
    while name in taken:
        name = f"{stem}-{i}{suffix}"
        i += 1
    return name


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _fmt(value: Any, digits: int = 4) -> str:
    if value is None:
        return ""
    if isinstance(value, float | np.floating):
        if math.isnan(value):
            return "–"
        return f"{value:.{digits}g}"
    return str(value)


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]], *, numeric_from: int = 0) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = "".join(
            f'<td class="num">{_e(_fmt(v))}</td>' if i >= numeric_from and numeric_from
            else f"<td>{_e(_fmt(v))}</td>"
            for i, v in enumerate(row)
        )
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _varying(frame: pd.DataFrame, parameters: Sequence[str]) -> list[str]:
    return [p for p in parameters if p in frame.columns and frame[p].nunique(dropna=False) > 1]


def _quantities(store: Store) -> dict[str, quantities.Quantity]:
    """Each response's unit, range and direction: the default responses' own, a declared
    response's from its definition in ``sweep.json``."""
    definitions = store.sweep.get("response_definitions")
    definitions = definitions if isinstance(definitions, dict) else {}
    out = {}
    for name in store.response_names:
        definition = definitions.get(name)
        out[name] = quantities.quantity(name, definition if isinstance(definition, dict)
                                        else None)
    return out


def _arm_table(store: Store, response: str, level: float,
               quantity: quantities.Quantity) -> pd.DataFrame:
    """Per arm: parameter values, n, mean, std, t interval and C.O.V. of one response.

    ``half`` is the t interval's half-width; ``low`` and ``high`` are its bounds clipped to
    the range of the quantity (a count's interval does not go below zero)."""
    frame = store.responses
    params = [p for p in store.parameters if p in frame.columns]
    rows = []
    for arm, part in frame.groupby("arm", sort=True):
        values = part[response].to_numpy(dtype=float)
        values = values[np.isfinite(values)]
        row: dict[str, Any] = {"arm": arm}
        row.update({p: part[p].iloc[0] for p in params})
        if values.size:
            s = stats.summarize(values, level=level)
            row.update(n=s.n, mean=s.mean, std=s.std, half=s.half_width,
                       low=quantity.clip(s.low), high=quantity.clip(s.high), cv=s.cv)
        else:
            row.update(n=0, mean=math.nan, std=math.nan, half=math.nan, low=math.nan,
                       high=math.nan, cv=math.nan)
        rows.append(row)
    return pd.DataFrame(rows)


def _arm_labels(store: Store, varying: Sequence[str]) -> dict[Hashable, str]:
    """``cc=cubic, queue=red`` for each arm, by the short names of the varying parameters."""
    firsts = store.responses.drop_duplicates("arm").sort_values("arm", kind="stable")
    if not varying:
        return {arm: f"arm {arm}" for arm in firsts["arm"]}
    labels = quantities.arm_labels(firsts[list(varying)].to_dict("records"), varying)
    return dict(zip(firsts["arm"].tolist(), labels, strict=True))


def _unit_text(unit: str) -> str:
    return f" ({unit})" if unit else ""


def _response_plots(page: _Page, table: pd.DataFrame, response: str,
                    quantity: quantities.Quantity, unit: str, varying: list[str],
                    names: dict[str, str], labels: dict[Hashable, str],
                    level: float) -> list[str]:
    """The plots of one response; ``table`` holds the arm statistics already in ``unit``."""
    out = []
    band = f"mean and {level:.0%} confidence interval"
    ylabel = f"{quantity.title}{_unit_text(unit)}"
    numeric = [p for p in varying if pd.api.types.is_numeric_dtype(table[p])]
    shown = table.rename(columns=names)
    if len(varying) == 1 and numeric:
        x = names[varying[0]]
        fig = plots.lines_with_bands(shown, x=x, ylabel=ylabel, title=f"{quantity.title}: {band}")
        out.append(page.figure(fig, f"{response}_vs_{varying[0]}",
                               f"{quantity.title} against {x}, {band}"))
    elif len(varying) == 2 and numeric:
        x = max(numeric, key=lambda p: table[p].nunique())
        hue = varying[0] if varying[1] == x else varying[1]
        if table[hue].nunique() <= MAX_LINE_LEVELS:
            shown = shown.assign(**{names[hue]: [quantities.short_value(v) for v in table[hue]]})
            fig = plots.lines_with_bands(shown, x=names[x], hue=names[hue], ylabel=ylabel,
                                         title=f"{quantity.title}: {band}")
            out.append(page.figure(fig, f"{response}_vs_{x}",
                                   f"{quantity.title} against {names[x]} for each "
                                   f"{names[hue]}, {band}"))
    if len(varying) == 2 and not numeric:
        # Two categorical parameters: bars of the first, side by side for each value of the
        # second, with the confidence intervals the heatmap cannot show.
        first, second = names[varying[0]], names[varying[1]]
        bars = shown.assign(**{first: [quantities.short_value(v) for v in table[varying[0]]],
                               second: [quantities.short_value(v) for v in table[varying[1]]]})
        fig = plots.grouped_bars(bars, group=first, hue=second, ylabel=ylabel,
                                 title=f"{quantity.title}: {band}")
        out.append(page.figure(fig, f"{response}_by_arm",
                               f"{quantity.title} by {first} and {second}, {band}"))
    if len(varying) == 2:
        short = table.assign(**{p: [quantities.short_value(v) for v in table[p]]
                                for p in varying if not pd.api.types.is_numeric_dtype(table[p])})
        matrix = short.pivot_table(index=varying[0], columns=varying[1], values="mean",
                                   aggfunc="mean", sort=True, dropna=False)
        matrix.index.name, matrix.columns.name = names[varying[0]], names[varying[1]]
        fig = plots.heatmap(matrix, title=f"mean {quantity.title}", colorbar=ylabel)
        out.append(page.figure(fig, f"{response}_heatmap",
                               f"mean {quantity.title} over {names[varying[0]]} × "
                               f"{names[varying[1]]}"))
    if not out:
        bars = table.assign(label=[labels[a] for a in table["arm"]])
        fig = plots.grouped_bars(bars, group="label", xlabel="arm", ylabel=ylabel,
                                 title=f"{quantity.title}: {band}")
        out.append(page.figure(fig, f"{response}_by_arm", f"{quantity.title} by arm, {band}"))
    return out


def _comparison(store: Store, response: str, arms: list[Hashable],
                labels: dict[Hashable, str], quantity: quantities.Quantity,
                factor: float, unit: str) -> str:
    """Jain's unpaired test of the two arms (and the paired one when they share seeds)."""
    frame = store.responses
    a, b = (frame[frame["arm"] == arm] for arm in arms)
    paired_ok = False
    joined = pd.DataFrame()
    if {"replication", "seed"} <= set(frame.columns):
        joined = a.merge(b, on="replication", suffixes=("_a", "_b"))
        paired_ok = (len(joined) == len(a) == len(b) and len(joined) >= 2
                     and bool((joined["seed_a"] == joined["seed_b"]).all()))
    rows = []

    def row(test: str, run: Callable[[], stats.Comparison]) -> None:
        try:
            c = run()
        except ValueError as exc:
            rows.append([test, math.nan, "", str(exc), ""])
            return
        rows.append([test, c.difference / factor, f"{c.level:.2f}",
                     f"({_fmt(c.low / factor)}, {_fmt(c.high / factor)})",
                     _verdict(c.sign, [labels[arm] for arm in arms], quantity.better)])

    xa = a[response].to_numpy(dtype=float)
    xb = b[response].to_numpy(dtype=float)
    row("unpaired", lambda: stats.unpaired_t(xa[np.isfinite(xa)], xb[np.isfinite(xb)]))
    if paired_ok:
        pa = joined[f"{response}_a"].to_numpy(dtype=float)
        pb = joined[f"{response}_b"].to_numpy(dtype=float)
        keep = np.isfinite(pa) & np.isfinite(pb)
        row("paired (same seeds)", lambda: stats.paired_t(pa[keep], pb[keep]))
    intro = (
        f"<p>Difference {_e(labels[arms[0]])} − {_e(labels[arms[1]])}: Jain's t test for "
        "unpaired observations, at the highest of the levels 0.90, 0.95, 0.99 at which the "
        "interval excludes zero (the 0.90 interval when none does)"
        + (", and the paired test on the replications, which share their seeds." if paired_ok
           else ".") + "</p>"
    )
    header = ["test", f"difference{_unit_text(unit)}", "level", "interval", "verdict"]
    return f"<h3>Comparison of the two arms</h3>{intro}{_table(header, rows)}"


def _verdict(sign: int, labels: Sequence[str], better: str | None) -> str:
    if sign == 0:
        return "not distinguishable"
    larger, smaller = (labels[0], labels[1]) if sign > 0 else (labels[1], labels[0])
    if better is None:
        return f"{larger} larger"
    return f"{larger} larger: {larger if better == 'higher' else smaller} better"


def _outliers(store: Store, response: str, labels: dict[Hashable, str], factor: float,
              unit: str) -> str:
    """Grubbs' test on each arm's replications, where the arm has enough of them."""
    frame = store.responses
    rows, small, constant = [], [], []
    for arm, part in frame.groupby("arm", sort=True):
        part = part[np.isfinite(part[response].to_numpy(dtype=float))]
        values = part[response].to_numpy(dtype=float)
        if values.size < stats.GRUBBS_MIN_N:
            small.append(values.size)
            continue
        if np.std(values) == 0:
            constant.append(arm)
            continue
        g = stats.grubbs(values)
        if g.outlier:
            rows.append([labels[arm], part["run_id"].iloc[g.index], g.value / factor,
                         g.statistic, g.critical])
    text = ("<h3>Outliers</h3><p>Grubbs' test (two-sided, α = 0.05) for one outlier among "
            f"each arm's replications, applied to arms with at least {stats.GRUBBS_MIN_N} "
            "values.")
    if small:
        sizes = sorted(set(small))
        text += (f" Not applied to {_plural(len(small), 'arm')} with n = "
                 f"{', '.join(str(n) for n in sizes)}: below {stats.GRUBBS_MIN_N} values the "
                 "test flags ordinary values as outliers.")
    if constant:
        text += f" Constant in {_plural(len(constant), 'arm')}: nothing to test."
    text += "</p>"
    if len(small) == frame["arm"].nunique():
        return text
    if not rows:
        return text + "<p>No outlier found.</p>"
    return text + _table(["arm", "run", f"value{_unit_text(unit)}", "G", "critical G"], rows,
                         numeric_from=2)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _response_section(page: _Page, store: Store, response: str,
                      quantity: quantities.Quantity, varying: list[str],
                      labels: dict[Hashable, str], level: float) -> str:
    """Everything about one response: arm statistics, plots, the comparison of two arms and
    the outliers, in one section."""
    table = _arm_table(store, response, level, quantity)
    factor, unit = quantities.scale(quantity.unit, table[["mean", "high"]].to_numpy().ravel())
    scaled = table.copy()
    for column in ("mean", "std", "half", "low", "high"):
        scaled[column] = table[column] / factor
    names = quantities.short_names(varying)
    rows = [
        [r["arm"], *(quantities.short_value(r[p]) for p in varying), r["n"], r["mean"],
         r["half"], r["low"], r["high"], r["std"], r["cv"]]
        for _, r in scaled.iterrows()
    ]
    u = _unit_text(unit)
    header = ["arm", *(names[p] for p in varying), "n", f"mean{u}", f"± ({level:.0%} CI)",
              "CI low", "CI high", "std", "C.O.V."]
    direction = {"higher": "higher is better", "lower": "lower is better"}.get(
        quantity.better or "", "direction not stated (not ranked)")
    clipped = ""
    if quantity.minimum is not None or quantity.maximum is not None:
        bounds = [f"{'below' if i == 0 else 'above'} {_fmt(b)}"
                  for i, b in enumerate((quantity.minimum, quantity.maximum)) if b is not None]
        clipped = (f" Interval bounds are clipped at the range of the quantity (never "
                   f"{' or '.join(bounds)}); ± is the half-width of the t interval.")
    title = quantity.title if quantity.title == response else f"{quantity.title} ({response})"
    intro = (f"<p>Unit: {_e(unit or 'none')}; {_e(direction)}. Mean ± t confidence interval "
             f"per arm over its finished runs.{_e(clipped)}</p>")
    parts = [f'<section id="response-{_e(response)}"><h2>{_e(title)}</h2>', intro,
             _table(header, rows, numeric_from=1 + len(varying))]
    parts += _response_plots(page, scaled, response, quantity, unit, varying, names, labels,
                             level)
    arms = sorted(store.responses["arm"].unique().tolist())
    if len(arms) == 2:
        parts.append(_comparison(store, response, arms, labels, quantity, factor, unit))
    parts.append(_outliers(store, response, labels, factor, unit))
    parts.append("</section>")
    return "".join(parts)


TIME_SERIES = (("goodput_bps", "sum", "aggregate goodput", "bit/s"),
               ("cwnd", "mean", "mean congestion window", "segments"))
"""Time series overlaid across arms: the metric of ``timeseries.parquet``, how the flows of a
run are combined at each instant, the title and the unit."""
MAX_OVERLAY_ARMS = 12


def _time_series_section(page: _Page, store: Store, labels: dict[Hashable, str]) -> str:
    """Per arm, the mean over its runs of each run's aggregate goodput and mean cwnd over
    time, read from the runs' ``timeseries.parquet`` (left out when no run has one)."""
    frame = store.responses
    arms = sorted(frame["arm"].unique().tolist())
    if len(arms) > MAX_OVERLAY_ARMS:
        return ("<h2>Time series</h2><p>Not drawn: more than "
                f"{MAX_OVERLAY_ARMS} arms would not be readable in one plot.</p>")
    series: dict[str, dict[Hashable, pd.Series]] = {m: {} for m, *_ in TIME_SERIES}
    for arm in arms:
        per_run: dict[str, list[pd.Series]] = {m: [] for m, *_ in TIME_SERIES}
        for run_id in frame.loc[frame["arm"] == arm, "run_id"]:
            path = store.directory / "runs" / str(run_id) / "timeseries.parquet"
            if not path.is_file():
                continue
            try:
                available = set(pq.read_schema(path).names)
                wanted = [c for c in ("time_s", "kind", *(m for m, *_ in TIME_SERIES))
                          if c in available]
                if not {"time_s", "kind"} <= set(wanted):
                    continue
                data = pd.read_parquet(path, columns=wanted)
            except Exception:  # a damaged run file leaves that run out of the overlay
                continue
            flows = data[data["kind"] == "flow"]
            for metric, how, *_ in TIME_SERIES:
                if metric in flows.columns and len(flows):
                    grouped = flows.groupby("time_s", sort=True)[metric]
                    per_run[metric].append(grouped.sum(min_count=1) if how == "sum"
                                           else grouped.mean())
        for metric in per_run:
            if per_run[metric]:
                series[metric][arm] = pd.concat(per_run[metric], axis=1).mean(axis=1)
    figures = []
    for metric, how, title, unit in TIME_SERIES:
        if not series[metric]:
            continue
        everything = np.concatenate([s.to_numpy(dtype=float) for s in series[metric].values()])
        factor, shown = quantities.scale(unit, everything)
        lines = {labels[arm]: s / factor for arm, s in series[metric].items()}
        fig = plots.time_series(lines, ylabel=f"{title}{_unit_text(shown)}",
                                title=f"{title} over time, mean of each arm's runs")
        combined = "sum over the flows" if how == "sum" else "mean over the flows"
        figures.append(page.figure(fig, f"{metric}_over_time",
                                   f"{title} ({combined} of a run), mean over each arm's runs"))
    if not figures:
        return ""
    return ("<h2>Time series</h2><p>Each run's time series (<code>timeseries.parquet</code>), "
            "combined over its flows at each sampling instant and averaged over the arm's "
            "runs.</p>" + "".join(figures))


def _pca_section(page: _Page, store: Store, rank_by: str | None) -> str:
    frame = store.responses
    names = [r for r in store.response_names if r in frame.columns]
    data = frame[names].astype(float)
    data = data[np.isfinite(data.to_numpy()).all(axis=1)]
    keep = [c for c in names if len(data) > 1 and data[c].std(ddof=1) > 0]
    if len(keep) < 2 or len(data) < 3:
        return ""
    result = stats.pca(data[keep])
    shown = min(len(keep), 4)
    rows = [[name, *result.loadings.loc[name].iloc[:shown].tolist()] for name in keep]
    explained = ", ".join(
        f"PC{i + 1} {share:.1%}" for i, share in enumerate(result.explained[:shown])
    )
    # Colour by the first parameter with few values (by arm when there is none).
    varying = _varying(frame, store.parameters)
    names_short = quantities.short_names(varying)
    by = next((p for p in [*([rank_by] if rank_by in varying else []), *varying]
               if frame[p].nunique() <= MAX_LINE_LEVELS), None)
    keys = frame.loc[data.index, by if by else "arm"].tolist()
    labels = [f"{names_short[by]}={quantities.short_value(k)}" if by else f"arm {k}"
              for k in keys]
    fig = plots.pca_scores(result, labels=labels, title="runs on the first two components")
    coloured = names_short[by] if by else "arm"
    figure = page.figure(fig, "pca", "PCA of the z-scored responses: variance explained and "
                         f"scores of the runs, coloured by {coloured}")
    dropped = sorted(set(names) - set(keep))
    note = f" Constant responses left out: {', '.join(dropped)}." if dropped else ""
    return (
        "<h2>Principal components</h2>"
        f"<p>PCA of the z-scored responses of {len(data)} runs. Variance explained: "
        f"{_e(explained)}.{_e(note)}</p>"
        + _table(["response", *[f"PC{i + 1} loading" for i in range(shown)]], rows,
                 numeric_from=1)
        + figure
    )


def _rank_section(page: _Page, store: Store, by: str,
                  qs: dict[str, quantities.Quantity]) -> str:
    frame = store.responses
    if by not in frame.columns:
        raise StoreError(
            f"--rank-by: {by!r} is not a parameter of the sweep; parameters: "
            f"{', '.join(store.parameters) or 'none'}"
        )
    directed = [r for r in store.response_names if qs[r].better is not None]
    undirected = [r for r in store.response_names if qs[r].better is None]
    note = ""
    if undirected:
        note = (f"<p>Not ranked, since no direction is stated: {_e(', '.join(undirected))}. "
                "A declared response states it with <code>better = \"higher\"</code> or "
                "<code>better = \"lower\"</code>.</p>")
    if not directed:
        return f"<h2>Rank matrices of {_e(by)}</h2>{note}"
    others = [p for p in _varying(frame, store.parameters) if p != by]
    short = quantities.short_names(others)
    conditions = (
        frame[others].apply(
            lambda r: ", ".join(f"{short[p]}={quantities.short_value(r[p])}" for p in others),
            axis=1)
        if others else pd.Series("all", index=frame.index)
    )
    long = frame.assign(_condition=conditions)
    # Conditions in the order of their parameter values (numbers as numbers, not as text).
    firsts = long.drop_duplicates("_condition")
    order = (firsts.sort_values(others, kind="stable") if others else firsts)["_condition"]
    cells = []
    for response in directed:
        means = long.groupby([by, "_condition"], sort=True)[response].mean().reset_index()
        means = means.rename(columns={response: "value"}).assign(_group=response)
        # Ranks: 1 for the best value; colours: green where better than the mean.
        means["_key"] = ranks.best_first(means["value"], qs[response].better or "higher")
        means["_oriented"] = -means["_key"]
        cells.append(means)
    table = pd.concat(cells, ignore_index=True)
    order = order.tolist()
    # rank_matrices gives k to the highest value: rank the negated key so the best gets 1.
    # rank_matrices ranks ascending (1 for the lowest): the lowest key is the best value.
    matrices = ranks.rank_matrices(table, alternative=by, condition="_condition",
                                   group="_group", value="_key", conditions=order,
                                   groups=directed)
    colours: dict[Hashable, pd.DataFrame] = {}
    fills: dict[Hashable, pd.DataFrame] = {}
    for response in directed:
        wide = table[table["_group"] == response].pivot(index="_condition", columns=by,
                                                        values="_oriented")
        colour, filled = ranks.rank_colours(wide)
        for alt in wide.columns:
            colours.setdefault(alt, pd.DataFrame(index=order))[response] = colour[alt]
            fills.setdefault(alt, pd.DataFrame(index=order))[response] = filled[alt]
    figures = []
    by_short = quantities.short_names([by])[by]
    for alt, matrix in matrices.items():
        matrix.index.name = ", ".join(short[p] for p in others) or "condition"
        matrix.columns.name = "response"
        fig = plots.rank_matrix(matrix, colour=colours[alt], filled=fills[alt],
                                title=f"ranks of {by_short}={quantities.short_value(alt)}")
        figures.append(page.figure(fig, f"ranks_{by}_{alt}",
                                   f"rank matrix of {by_short}={quantities.short_value(alt)}"))
    means = pd.DataFrame(
        {alt: [float(m[r].mean()) for r in directed] for alt, m in matrices.items()},
        index=directed,
    )
    summary = ranks.rank_summary({"mean rank": means})
    rows = [[f"{a} {b}".strip(), *summary.loc[(a, b)].tolist()] for a, b in summary.index]
    k = len(matrices)
    directions = ", ".join(f"{r} ({qs[r].better})" for r in directed)
    return (
        f"<h2>Rank matrices of {_e(by)}</h2>"
        f"<p>In each condition ({_e(', '.join(short[p] for p in others) or 'one condition')}) "
        f"the {k} values of {_e(by_short)} are ranked by each response's mean so that rank 1 "
        f"is the best and {k} the worst: the highest value where higher is better, the lowest "
        f"where lower is better (ties share the mean rank). Directions: {_e(directions)}. "
        f"Cells are green where the value is better than the mean of the {k} values and red "
        "where it is worse; the extreme farther from the mean is filled. The summary gives "
        "the mean rank per response over the conditions, their mean and their sample "
        "standard deviation (the rank summaries of Mills et al. 2010, Tables 8-31/8-32, "
        "with every response oriented so that a low mean rank is good).</p>"
        + note
        + _table(["", *[quantities.short_value(c) for c in summary.columns]], rows,
                 numeric_from=1)
        + "".join(figures)
    )


def _design_text(design: Any) -> str:
    """The design of ``sweep.json`` in words: its blocks and number of arms."""
    if not isinstance(design, dict):
        return "?"
    parts = []
    for block in design.get("blocks", []) or []:
        if not isinstance(block, dict):
            continue
        names = ", ".join(quantities.short_names(block.get("parameters", [])).values())
        kind = str(block.get("kind", "?"))
        if kind == "factorial":
            factors = block.get("factors", {}) or {}
            k, runs = len(factors), block.get("runs", "?")
            p = k - int(math.log2(runs)) if isinstance(runs, int) and runs > 0 else "?"
            parts.append(f"two-level fractional factorial 2^({k}−{p}), resolution "
                         f"{block.get('resolution', '?')}, {runs} runs ({names})")
        else:
            parts.append(f"{kind} of {names}" if names else kind)
    if not parts:
        return "one arm: the base scenario"
    arms = design.get("arms")
    return "; ".join(parts) + (f"; {arms} arms" if arms is not None else "")


def _facts_section(store: Store, qs: dict[str, quantities.Quantity]) -> str:
    sweep, catalog = store.sweep, store.catalog
    names = quantities.short_names(store.parameters)
    responses = ", ".join(
        f"{r} ({qs[r].unit or 'no unit'}, "
        f"{qs[r].better + ' is better' if qs[r].better else 'no direction'})"
        for r in store.response_names
    )
    facts: list[tuple[str, Any]] = [
        ("run store", store.directory.name or store.directory),
        ("parameters", ", ".join(f"{names[p]} ({p})" if names[p] != p else p
                                 for p in store.parameters) or "none"),
        ("responses", responses or "none"),
        ("replications", sweep.get("replications", "?")),
        ("arms", catalog["arm"].nunique()),
        ("runs", len(catalog)),
        ("root seed", sweep.get("root_seed", "?")),
        ("design", _design_text(sweep.get("design", {}))),
        ("version", sweep.get("version", "?")),
    ]
    if "version" in catalog.columns:
        versions = sorted(str(v) for v in catalog["version"].dropna().unique())
        if versions:
            facts.append(("versions of the runs", ", ".join(versions)))
    if "wall_s" in catalog.columns:
        wall = pd.to_numeric(catalog["wall_s"], errors="coerce").sum()
        facts.append(("total wall time of the runs", f"{_fmt(float(wall))} s"))
    rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in facts)
    return f'<h2>Sweep</h2><table class="facts">{rows}</table>'


def _status_section(store: Store) -> str:
    catalog = store.catalog
    counts = catalog["status"].astype(str).value_counts()
    cells = [[s, int(counts.get(s, 0))] for s in STATUSES]
    out = "<h2>Runs</h2>" + _table(["status", "runs"], cells, numeric_from=1)
    failed = catalog[catalog["status"] == "failed"]
    if len(failed):
        cols = [c for c in ("run_id", "arm", "replication", "seed") if c in failed.columns]
        rows = []
        for _, row in failed.sort_values("run_id", kind="stable").iterrows():
            error = str(row.get("error") or "no error recorded")
            if len(error) > MAX_ERROR_CHARS:
                error = error[:MAX_ERROR_CHARS] + " …"
            rows.append([*(row[c] for c in cols), error])
        out += "<h3>Failed runs</h3>" + _table([*cols, "error"], rows)
    return out


STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
thead th { background: #f3f3f3; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.facts th { background: #f8f8f8; font-weight: normal; }
p.warning { background: #fff4e0; border-left: 4px solid #e08a00; padding: 0.5em 0.8em; }
figure { margin: 1em 0; } img { max-width: 100%; } figcaption { font-size: 0.85em; color: #555; }
"""


def render(store: Store, *, level: float = 0.95, rank_by: str | None = None
           ) -> tuple[str, dict[str, bytes]]:
    """Build the report of ``store``: the HTML text and the PNG files by name."""
    if rank_by is not None and rank_by not in store.parameters:
        raise StoreError(
            f"--rank-by: {rank_by!r} is not a parameter of the sweep; parameters: "
            f"{', '.join(store.parameters) or 'none'}"
        )
    page = _Page()
    title = f"flowshare sweep report: {store.directory.name or store.directory}"
    qs = _quantities(store)
    page.sections += [f"<h1>{_e(title)}</h1>", _facts_section(store, qs),
                      _status_section(store)]
    frame = store.responses
    if frame.empty:
        page.sections.append("<p>No finished runs: nothing to summarize yet.</p>")
    else:
        varying = _varying(frame, store.parameters)
        labels = _arm_labels(store, varying)
        identical = stats.identical_replications(frame, store.response_names)
        if identical:
            page.sections.append(
                '<p class="warning"><strong>Warning:</strong> the replications of arm '
                f"{_e(', '.join(str(a) for a in identical))} are identical, so their "
                f"confidence intervals are zero; {_e(stats.IDENTICAL_HINT)}.</p>"
            )
        # One section per response (a name listed twice still gets one).
        for response in dict.fromkeys(store.response_names):
            page.sections.append(
                _response_section(page, store, response, qs[response], varying, labels, level)
            )
        page.sections.append(_time_series_section(page, store, labels))
        page.sections.append(_pca_section(page, store, rank_by))
        if rank_by is not None:
            page.sections.append(_rank_section(page, store, rank_by, qs))
    body = "\n".join(s for s in page.sections if s)
    text = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(title)}</title><style>{STYLE}</style></head>\n<body>\n{body}\n"
        "</body></html>\n"
    )
    return text, page.images


def write_report(
    directory: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    level: float = 0.95,
    rank_by: str | None = None,
) -> list[Path]:
    """Write ``report.html`` and the plots as PNG into ``out`` (default ``DIR/report``).

    Everything is built in memory first and then written through a staging directory, so
    the report appears whole or not at all (files of the same names are replaced, other
    files in ``out`` are left alone).

    Returns
    -------
    list of pathlib.Path
        The files written, ``report.html`` first.
    """
    if not 0.0 < level < 1.0:
        raise StoreError(f"--level: must be between 0 and 1 (exclusive), got {level}")
    if out is not None:
        check_directory("out", out)
    store = load_store(directory)
    text, images = render(store, level=level, rank_by=rank_by)
    target = Path(out) if out is not None else store.directory / "report"
    with atomic_directory(target) as stage:
        for name, data in images.items():
            (stage / name).write_bytes(data)
        (stage / REPORT_FILE).write_text(text, encoding="utf-8")
    return [target / REPORT_FILE, *(target / name for name in images)]
