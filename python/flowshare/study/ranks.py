"""Rank matrices and rank summaries, as Mills et al. (2010, NIST SP 500-282, §8.3.2) define them.

For every condition (a design point) and group (e.g. flow group), the k alternatives being
compared (Mills et al.: 7 alternate congestion-control algorithms) are ranked by a response, k
for the highest value down to 1 for the lowest. One alternative's ranks over all conditions
(rows) and groups (columns) form its *rank matrix*. A *rank summary* (Tables 8-31/8-32) gives,
per alternative, the mean rank over the cells of each block of groups (a file type: 32
conditions × 6 groups = 192 cells), the mean of those block means per response ("Avg."), and
over all responses together the mean and the sample standard deviation (n − 1) of the block
means. Ties are unspecified in the source: they get the mean of the ranks they span.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats as _st

__all__ = [
    "best_first",
    "block_mean_ranks",
    "rank_colours",
    "rank_matrices",
    "rank_summary",
    "rank_values",
]


def rank_values(values: ArrayLike, *, axis: int = 0) -> np.ndarray:
    """Rank values along ``axis``: the highest gets k (the number of values), the lowest 1.

    Ties get the mean of the ranks they span; ``nan`` values stay ``nan`` and the others are
    ranked among themselves.

    >>> rank_values([3.0, 9.0, 1.0, 9.0]).tolist()
    [2.0, 3.5, 1.0, 3.5]
    """
    x = np.asarray(values, dtype=np.float64)
    return np.asarray(_st.rankdata(x, method="average", axis=axis, nan_policy="omit"),
                      dtype=np.float64)


def best_first(values: ArrayLike, better: str) -> np.ndarray:
    """Values turned so that :func:`rank_values` gives rank 1 to the best and k to the worst.

    Mills et al. (2010) rank k for the highest value whatever the response; a report that
    averages ranks over responses needs "better" to mean the same rank in each. ``better``
    is ``"higher"`` (the values are negated: the highest gets rank 1) or ``"lower"`` (kept:
    the lowest gets rank 1).

    >>> rank_values(best_first([3.0, 9.0, 1.0], "higher")).tolist()
    [2.0, 1.0, 3.0]
    >>> rank_values(best_first([3.0, 9.0, 1.0], "lower")).tolist()
    [2.0, 3.0, 1.0]
    """
    x = np.asarray(values, dtype=np.float64)
    if better == "higher":
        return -x
    if better == "lower":
        return x
    raise ValueError(f"better: expected 'higher' or 'lower', got {better!r}")


def rank_matrices(
    table: pd.DataFrame,
    *,
    alternative: str,
    condition: str,
    group: str,
    value: str,
    conditions: Sequence[Hashable] | None = None,
    groups: Sequence[Hashable] | None = None,
) -> dict[Hashable, pd.DataFrame]:
    """One rank matrix per alternative from a long table of values.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per (alternative, condition, group) with the response in column ``value``
        (average replications first: one row per cell).
    alternative, condition, group, value : str
        Column names.
    conditions, groups : sequence, optional
        Row and column order of the matrices (Mills et al. (2010): conditions from least to
        most congested, groups in Table 8-6 order); by default the sorted distinct values.

    Returns
    -------
    dict
        Alternative → DataFrame of ranks (index: conditions, columns: groups).

    Raises
    ------
    ValueError
        If a column is missing or a cell appears twice.
    """
    for column in (alternative, condition, group, value):
        if column not in table.columns:
            raise ValueError(f"table: has no column {column!r}")
    keys = [alternative, condition, group]
    duplicated = table.duplicated(keys)
    if duplicated.any():
        row = table.loc[duplicated, keys].iloc[0].tolist()
        raise ValueError(
            f"table: more than one value for {dict(zip(keys, row, strict=True))}; "
            "average the replications first"
        )
    cube = table.set_index(keys)[value].astype(np.float64).unstack(alternative)
    ranks = pd.DataFrame(rank_values(cube.to_numpy(), axis=1), index=cube.index,
                         columns=cube.columns)
    rows = list(conditions) if conditions is not None else sorted(table[condition].unique())
    cols = list(groups) if groups is not None else sorted(table[group].unique())
    out: dict[Hashable, pd.DataFrame] = {}
    for alt in cube.columns:
        matrix = ranks[alt].unstack(group).reindex(index=rows, columns=cols)
        matrix.index.name, matrix.columns.name = condition, group
        out[alt] = matrix
    return out


def rank_colours(values: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The colouring of Mills et al. (2010) for the cells of one condition × group.

    ``values`` has one row per cell and one column per alternative. A cell is green (+1) if
    its value is above the mean of the k values of its row and red (−1) below (0 on it). In
    each row one cell is *filled*: the rank-k cell if the highest value is farther from the
    mean than the lowest, else the rank-1 cell.

    Returns
    -------
    (colour, filled) : tuple of DataFrame
        Same shape as ``values``: −1/0/+1 and booleans.
    """
    x = values.to_numpy(dtype=np.float64)
    with warnings.catch_warnings():  # a row with no value has no mean: it stays uncoloured
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(x, axis=1, keepdims=True)
    colour = np.sign(x - mean)
    colour[np.isnan(colour)] = 0
    filled = np.zeros_like(x, dtype=bool)
    for i, row in enumerate(x):
        if np.all(np.isnan(row)):
            continue
        hi, lo = np.nanargmax(row), np.nanargmin(row)
        above, below = row[hi] - mean[i, 0], mean[i, 0] - row[lo]
        filled[i, hi if above > below else lo] = True
    return (pd.DataFrame(colour.astype(int), index=values.index, columns=values.columns),
            pd.DataFrame(filled, index=values.index, columns=values.columns))


def block_mean_ranks(
    matrix: pd.DataFrame, blocks: Mapping[str, Sequence[Hashable]]
) -> pd.Series:
    """Mean rank over the cells of each block of columns of one rank matrix.

    In Mills et al. (2010) the blocks are file types: Movies = groups 1–6, Service packs 7–12,
    Documents 13–18, Web objects 19–24, each mean taken over 32 conditions × 6 groups = 192
    cells. ``nan`` cells (no value) are left out.
    """
    out = {}
    for name, columns in blocks.items():
        missing = [c for c in columns if c not in matrix.columns]
        if missing:
            raise ValueError(f"blocks: block {name!r} names columns not in the matrix: {missing}")
        cells = matrix[list(columns)].to_numpy(dtype=np.float64).ravel()
        cells = cells[~np.isnan(cells)]
        out[name] = float(cells.mean()) if cells.size else np.nan
    return pd.Series(out, dtype=np.float64)


def rank_summary(block_means: Mapping[str, pd.DataFrame | Mapping[Any, Any]]) -> pd.DataFrame:
    """A rank summary table in the layout of Tables 8-31/8-32 of Mills et al. (2010).

    Parameters
    ----------
    block_means : mapping
        Response name → DataFrame of mean ranks (index: blocks, columns: alternatives), e.g.
        ``{"y2(u)": ..., "y16(u)": ...}``, each column built with :func:`block_mean_ranks`.

    Returns
    -------
    pandas.DataFrame
        Index (response, block) with, per response, its blocks then ``"Avg."`` (the mean of
        its block means); then ``("all", "Avg.")``, the mean of every block mean of every
        response, and ``("all", "Std.")``, their sample standard deviation (n − 1, which
        reproduces every Std. of Tables 8-31/8-32 of Mills et al. (2010) to two decimals).
    """
    if not block_means:
        raise ValueError("block_means: needs at least one response")
    parts, all_means = [], []
    for response, means in block_means.items():
        frame = pd.DataFrame(means).astype(np.float64)
        avg = frame.mean(axis=0).to_frame("Avg.").T
        part = pd.concat([frame, avg])
        part.index = pd.MultiIndex.from_product([[response], list(part.index)])
        parts.append(part)
        all_means.append(frame)
    stacked = pd.concat(all_means)
    combined = pd.DataFrame(
        [stacked.mean(axis=0), stacked.std(axis=0, ddof=1)],
        index=pd.MultiIndex.from_tuples([("all", "Avg."), ("all", "Std.")]),
    )
    return pd.concat([*parts, combined])
