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
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._files import atomic_directory
from . import plots, ranks, stats

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
    response_names = _string_list(sweep, "responses", sweep_path)

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


def _arm_table(store: Store, response: str, level: float) -> pd.DataFrame:
    """Per arm: parameter values, n, mean, std, t interval and C.O.V. of one response."""
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
            row.update(n=s.n, mean=s.mean, std=s.std, low=s.low, high=s.high, cv=s.cv)
        else:
            row.update(n=0, mean=math.nan, std=math.nan, low=math.nan, high=math.nan,
                       cv=math.nan)
        rows.append(row)
    return pd.DataFrame(rows)


def _arm_labels(table: pd.DataFrame, varying: Sequence[str]) -> list[str]:
    if not varying:
        return [str(a) for a in table["arm"]]
    return [
        ", ".join(f"{p.rsplit('.', 1)[-1]}={row[p]}" for p in varying)
        for _, row in table.iterrows()
    ]


def _response_plots(page: _Page, table: pd.DataFrame, response: str, varying: list[str],
                    level: float) -> list[str]:
    out = []
    band = f"mean and {level:.0%} confidence interval"
    numeric = [p for p in varying if pd.api.types.is_numeric_dtype(table[p])]
    if len(varying) == 1 and numeric:
        fig = plots.lines_with_bands(table, x=varying[0], ylabel=response,
                                     title=f"{response}: {band}")
        out.append(page.figure(fig, f"{response}_vs_{varying[0]}",
                               f"{response} against {varying[0]}, {band}"))
    elif len(varying) == 2 and numeric:
        x = max(numeric, key=lambda p: table[p].nunique())
        hue = varying[0] if varying[1] == x else varying[1]
        if table[hue].nunique() <= MAX_LINE_LEVELS:
            fig = plots.lines_with_bands(table, x=x, hue=hue, ylabel=response,
                                         title=f"{response}: {band}")
            out.append(page.figure(fig, f"{response}_vs_{x}",
                                   f"{response} against {x} for each {hue}, {band}"))
    if len(varying) == 2:
        matrix = table.pivot_table(index=varying[0], columns=varying[1], values="mean",
                                   aggfunc="mean", sort=True, dropna=False)
        fig = plots.heatmap(matrix, title=f"mean {response}", colorbar=response)
        out.append(page.figure(fig, f"{response}_heatmap",
                               f"mean {response} over {varying[0]} × {varying[1]}"))
    if not out:
        bars = table.assign(label=_arm_labels(table, varying))
        fig = plots.grouped_bars(bars, group="label", xlabel="arm", ylabel=response,
                                 title=f"{response}: {band}")
        out.append(page.figure(fig, f"{response}_by_arm", f"{response} by arm, {band}"))
    return out


def _comparison_section(store: Store, arms: list[Hashable]) -> str:
    frame = store.responses
    a, b = (frame[frame["arm"] == arm] for arm in arms)
    paired_ok = False
    if {"replication", "seed"} <= set(frame.columns):
        joined = a.merge(b, on="replication", suffixes=("_a", "_b"))
        paired_ok = (len(joined) == len(a) == len(b) and len(joined) >= 2
                     and bool((joined["seed_a"] == joined["seed_b"]).all()))
    rows = []
    for response in store.response_names:
        xa = a[response].to_numpy(dtype=float)
        xb = b[response].to_numpy(dtype=float)
        xa, xb = xa[np.isfinite(xa)], xb[np.isfinite(xb)]
        try:
            c = stats.unpaired_t(xa, xb)
            rows.append([response, "unpaired", c.difference, f"{c.level:.2f}",
                         f"({c.low:.4g}, {c.high:.4g})", _verdict(c.sign)])
        except ValueError as exc:
            rows.append([response, "unpaired", math.nan, "", str(exc), ""])
        if paired_ok:
            joined = a.merge(b, on="replication", suffixes=("_a", "_b"))
            pa = joined[f"{response}_a"].to_numpy(dtype=float)
            pb = joined[f"{response}_b"].to_numpy(dtype=float)
            keep = np.isfinite(pa) & np.isfinite(pb)
            try:
                c = stats.paired_t(pa[keep], pb[keep])
                rows.append([response, "paired (same seeds)", c.difference, f"{c.level:.2f}",
                             f"({c.low:.4g}, {c.high:.4g})", _verdict(c.sign)])
            except ValueError as exc:
                rows.append([response, "paired (same seeds)", math.nan, "", str(exc), ""])
    intro = (
        f"<p>Difference arm {_e(arms[0])} − arm {_e(arms[1])}: Jain's t test for unpaired "
        "observations, at the highest of the levels 0.90, 0.95, 0.99 at which the interval "
        "excludes zero (the 0.90 interval when none does)"
        + (", and the paired test on the replications, which share their seeds." if paired_ok
           else ".") + "</p>"
    )
    table = _table(["response", "test", "difference", "level", "interval", "verdict"], rows)
    return f"<h2>Comparison of the two arms</h2>{intro}{table}"


def _verdict(sign: int) -> str:
    return {1: "first arm larger", -1: "second arm larger", 0: "not distinguishable"}[sign]


def _outlier_section(store: Store) -> str:
    frame = store.responses
    rows = []
    for response in store.response_names:
        for arm, part in frame.groupby("arm", sort=True):
            part = part[np.isfinite(part[response].to_numpy(dtype=float))]
            values = part[response].to_numpy(dtype=float)
            if values.size < 3 or np.std(values) == 0:
                continue
            g = stats.grubbs(values)
            if g.outlier:
                rows.append([response, arm, part["run_id"].iloc[g.index], g.value,
                             g.statistic, g.critical])
    text = ("<p>Grubbs' test (two-sided, α = 0.05) on each arm's replications of each "
            "response.</p>")
    if not rows:
        return f"<h2>Outliers</h2>{text}<p>No outlier found.</p>"
    table = _table(["response", "arm", "run", "value", "G", "critical G"], rows,
                   numeric_from=3)
    return f"<h2>Outliers</h2>{text}{table}"


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
    by = next((p for p in [*([rank_by] if rank_by in varying else []), *varying]
               if frame[p].nunique() <= MAX_LINE_LEVELS), None)
    keys = frame.loc[data.index, by if by else "arm"].tolist()
    labels = [f"{by} = {k}" if by else f"arm {k}" for k in keys]
    fig = plots.pca_scores(result, labels=labels, title="runs on the first two components")
    figure = page.figure(fig, "pca", "PCA of the z-scored responses: variance explained and "
                         f"scores of the runs, coloured by {by or 'arm'}")
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


def _rank_section(page: _Page, store: Store, by: str) -> str:
    frame = store.responses
    if by not in frame.columns:
        raise StoreError(
            f"--rank-by: {by!r} is not a parameter of the sweep; parameters: "
            f"{', '.join(store.parameters) or 'none'}"
        )
    others = [p for p in _varying(frame, store.parameters) if p != by]
    conditions = (frame[others].astype(str).agg(", ".join, axis=1) if others
                  else pd.Series("all", index=frame.index))
    long = frame.assign(_condition=conditions)
    # Conditions in the order of their parameter values (numbers as numbers, not as text).
    firsts = long.drop_duplicates("_condition")
    order = (firsts.sort_values(others, kind="stable") if others else firsts)["_condition"]
    cells = []
    for response in store.response_names:
        means = long.groupby([by, "_condition"], sort=True)[response].mean().reset_index()
        cells.append(means.rename(columns={response: "value"}).assign(_group=response))
    table = pd.concat(cells, ignore_index=True)
    order = order.tolist()
    matrices = ranks.rank_matrices(table, alternative=by, condition="_condition",
                                   group="_group", value="value", conditions=order,
                                   groups=store.response_names)
    colours: dict[Hashable, pd.DataFrame] = {}
    fills: dict[Hashable, pd.DataFrame] = {}
    for response in store.response_names:
        wide = table[table["_group"] == response].pivot(index="_condition", columns=by,
                                                        values="value")
        colour, filled = ranks.rank_colours(wide)
        for alt in wide.columns:
            colours.setdefault(alt, pd.DataFrame(index=order))[response] = colour[alt]
            fills.setdefault(alt, pd.DataFrame(index=order))[response] = filled[alt]
    figures = []
    for alt, matrix in matrices.items():
        matrix.index.name, matrix.columns.name = ", ".join(others) or "condition", "response"
        fig = plots.rank_matrix(matrix, colour=colours[alt], filled=fills[alt],
                                title=f"ranks of {by} = {alt}")
        figures.append(page.figure(fig, f"ranks_{by}_{alt}", f"rank matrix of {by} = {alt}"))
    means = pd.DataFrame(
        {alt: [float(m[r].mean()) for r in store.response_names]
         for alt, m in matrices.items()},
        index=store.response_names,
    )
    summary = ranks.rank_summary({"mean rank": means})
    rows = [[f"{a} {b}".strip(), *summary.loc[(a, b)].tolist()] for a, b in summary.index]
    k = len(matrices)
    return (
        f"<h2>Rank matrices of {_e(by)}</h2>"
        f"<p>In each condition ({_e(', '.join(others) or 'one condition')}) the {k} values of "
        f"{_e(by)} are ranked by each response's mean, {k} for the highest and 1 for the "
        "lowest (ties share the mean rank). Cells are green above the mean of the "
        f"{k} values and red below; the extreme farther from the mean is filled. The summary "
        "gives the mean rank per response over the conditions, their mean and their sample "
        "standard deviation (Mills et al. 2010, Tables 8-31/8-32).</p>"
        + _table(["", *[str(c) for c in summary.columns]], rows, numeric_from=1)
        + "".join(figures)
    )


def _facts_section(store: Store) -> str:
    sweep, catalog = store.sweep, store.catalog
    facts: list[tuple[str, Any]] = [
        ("run store", store.directory),
        ("parameters", ", ".join(store.parameters) or "none"),
        ("responses", ", ".join(store.response_names) or "none"),
        ("replications", sweep.get("replications", "?")),
        ("arms", catalog["arm"].nunique()),
        ("runs", len(catalog)),
        ("root seed", sweep.get("root_seed", "?")),
        ("design", json.dumps(sweep.get("design", {}), sort_keys=True)),
        ("version", sweep.get("version", "?")),
    ]
    if "version" in catalog.columns:
        versions = sorted(str(v) for v in catalog["version"].dropna().unique())
        if versions:
            facts.append(("versions of the runs", ", ".join(versions)))
    if "wall_s" in catalog.columns:
        wall = pd.to_numeric(catalog["wall_s"], errors="coerce").sum()
        facts.append(("total wall time of the runs (s)", _fmt(float(wall))))
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
    page.sections += [f"<h1>{_e(title)}</h1>", _facts_section(store), _status_section(store)]
    frame = store.responses
    if frame.empty:
        page.sections.append("<p>No finished runs: nothing to summarize yet.</p>")
    else:
        varying = _varying(frame, store.parameters)
        identical = stats.identical_replications(frame, store.response_names)
        if identical:
            page.sections.append(
                '<p class="warning"><strong>Warning:</strong> the replications of arm '
                f"{_e(', '.join(str(a) for a in identical))} are identical, so their "
                f"confidence intervals are zero; {_e(stats.IDENTICAL_HINT)}.</p>"
            )
        for response in store.response_names:
            table = _arm_table(store, response, level)
            params = [p for p in store.parameters if p in table.columns]
            rows = [
                [r["arm"], *(r[p] for p in params), r["n"], r["mean"],
                 (r["high"] - r["low"]) / 2, r["low"], r["high"], r["std"], r["cv"]]
                for _, r in table.iterrows()
            ]
            header = ["arm", *params, "n", "mean", f"± ({level:.0%} CI)", "CI low", "CI high",
                      "std", "C.O.V."]
            section = [f"<h2>{_e(response)}</h2>",
                       _table(header, rows, numeric_from=1 + len(params))]
            section += _response_plots(page, table, response, varying, level)
            page.sections.append("".join(section))
        arms = sorted(frame["arm"].unique().tolist())
        if len(arms) == 2:
            page.sections.append(_comparison_section(store, arms))
        page.sections.append(_outlier_section(store))
        page.sections.append(_pca_section(page, store, rank_by))
        if rank_by is not None:
            page.sections.append(_rank_section(page, store, rank_by))
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
    store = load_store(directory)
    text, images = render(store, level=level, rank_by=rank_by)
    target = Path(out) if out is not None else store.directory / "report"
    with atomic_directory(target) as stage:
        for name, data in images.items():
            (stage / name).write_bytes(data)
        (stage / REPORT_FILE).write_text(text, encoding="utf-8")
    return [target / REPORT_FILE, *(target / name for name in images)]
