"""Statistics for experiment results: means with t intervals, comparisons, outliers and PCA.

Every function takes plain arrays of per-run values (one value per replication), uses numpy
and scipy only, and cites the definition it implements. The main reference is R. Jain, *The Art
of Computer Systems Performance Analysis*, Wiley 1991 (ch. 13), which Savorić and Karl (2004)
use for their comparisons (App. B); Grubbs' test follows Grubbs (1969) and the NIST/SEMATECH
e-Handbook §1.3.5.17.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats as _st

from ..metrics import jain_index

__all__ = [
    "GRUBBS_MIN_N",
    "LEVELS",
    "Comparison",
    "GrubbsResult",
    "Pca",
    "Summary",
    "coefficient_of_variation",
    "grubbs",
    "grubbs_critical",
    "identical_replications",
    "jain_index",
    "mean_ci",
    "paired_t",
    "pca",
    "summarize",
    "unpaired_t",
]

LEVELS: tuple[float, ...] = (0.90, 0.95, 0.99)
"""The confidence levels Savorić and Karl (2004, App. B) try, lowest first."""


@dataclass(frozen=True)
class Summary:
    """Sample statistics of one response: ``mean ± half_width`` is the t interval."""

    n: int
    mean: float
    std: float
    level: float
    low: float
    high: float
    cv: float

    @property
    def half_width(self) -> float:
        """Half the width of the confidence interval."""
        return (self.high - self.low) / 2


@dataclass(frozen=True)
class Comparison:
    """A confidence interval for the difference of two alternatives, ``a − b``.

    ``level`` is the highest of the tried levels at which the interval excludes zero, or the
    lowest tried level when it never does (Savorić and Karl (2004, App. B) print the 0.90
    interval then); ``low``/``high`` is the interval at that level. ``sign`` is +1 when the
    whole interval is above zero (``a`` is larger), −1 when below, 0 when it includes zero (the
    alternatives cannot be distinguished). ``intervals`` holds the interval at every tried
    level.
    """

    method: Literal["unpaired", "paired"]
    mean_a: float
    mean_b: float
    difference: float
    std_error: float
    dof: float
    level: float
    low: float
    high: float
    sign: int
    intervals: dict[float, tuple[float, float]] = field(default_factory=dict)

    @property
    def significant(self) -> bool:
        """Whether the interval excludes zero at ``level``."""
        return self.sign != 0


GRUBBS_MIN_N = 7
"""Fewest values on which a report applies Grubbs' test. The NIST/SEMATECH e-Handbook of
Statistical Methods (§1.3.5.17, "Grubbs' Test for Outliers") advises against the test for six
values or fewer, where it "frequently tags most of the points as outliers": with n values
G can be at most (n − 1)/√n, which for n = 4 is 1.5 against a critical value of 1.48 at
α = 0.05, so a sample such as 0, 0, 0, 1 is always flagged."""


@dataclass(frozen=True)
class GrubbsResult:
    """Grubbs' test for one outlier: ``statistic > critical`` flags ``value`` (at ``index``)."""

    n: int
    statistic: float
    critical: float
    alpha: float
    side: Literal["two-sided", "max", "min"]
    index: int
    value: float

    @property
    def outlier(self) -> bool:
        """Whether the suspect value is an outlier at level ``alpha``."""
        return self.statistic > self.critical


@dataclass(frozen=True)
class Pca:
    """Principal components of z-scored responses.

    ``eigenvalues`` are the variances of the components (eigenvalues of the correlation
    matrix), ``explained`` their share of the total, ``loadings`` the unit eigenvectors
    (rows = responses, columns = ``PC1``…), ``scores`` the z-scored data projected on them
    (rows = observations). Each component's sign is fixed so that its largest loading (in
    absolute value) is positive, so the result does not depend on the LAPACK build.
    """

    eigenvalues: np.ndarray
    explained: np.ndarray
    loadings: pd.DataFrame
    scores: pd.DataFrame


def _sample(values: ArrayLike, name: str = "values", *, minimum: int = 2) -> np.ndarray:
    x = np.asarray(values, dtype=np.float64).ravel()
    if x.size < minimum:
        raise ValueError(f"{name}: needs at least {minimum} values, got {x.size}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name}: contains nan or infinite values; drop them first")
    return x


def _check_level(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level: must be between 0 and 1 (exclusive), got {level}")
    return float(level)


def coefficient_of_variation(values: ArrayLike, *, ddof: int = 1) -> float:
    """Coefficient of variation: sample standard deviation divided by the mean.

    C.O.V. = s / x̄ (Jain 1991, §12.8), with ``s`` computed with ``ddof`` (1: the sample
    standard deviation). ``nan`` when the mean is zero.

    >>> round(coefficient_of_variation([1.0, 2.0, 3.0]), 6)  # s = 1, mean = 2
    0.5
    """
    x = _sample(values, minimum=ddof + 1)
    mean = float(np.mean(x))
    return float(np.std(x, ddof=ddof) / mean) if mean != 0 else math.nan


def mean_ci(values: ArrayLike, *, level: float = 0.95) -> tuple[float, float]:
    """Two-sided t confidence interval for the mean.

    x̄ ∓ t_[1−α/2; n−1] · s/√n (Jain 1991, §13.2, eq. 13.2, for samples from a normal
    population; Jain uses the same interval with the normal quantile for n ≥ 30, the t form
    is used here for every n).

    >>> low, high = mean_ci([5.4, 16.6, 0.6, 1.4, 0.6, 7.3], level=0.90)
    >>> round(low, 2), round(high, 2)
    (0.23, 10.4)
    """
    summary = summarize(values, level=level)
    return summary.low, summary.high


def identical_replications(frame: pd.DataFrame, responses: Sequence[str]) -> list[int]:
    """The arms whose replications (two or more) gave the same value of every response.

    ``frame`` has one row per finished run with an ``arm`` column and one column per
    response. Identical replications mean the scenario has no random element that the seed
    reaches (TCP itself is deterministic): their confidence intervals are zero and say nothing
    about the spread the study wants. NaN equals NaN here.
    """
    arms = []
    for arm, part in frame.groupby("arm", sort=True):
        if len(part) < 2 or not responses:
            continue
        values = part[list(responses)].to_numpy(dtype=float)
        first = values[0]
        same = (values == first) | (np.isnan(values) & np.isnan(first))
        if bool(same.all()):
            arms.append(int(arm))  # type: ignore[call-overload]
    return arms


IDENTICAL_HINT = (
    "add randomness the seed reaches: flows.start_jitter, tcp.send_jitter or a random loss "
    "model (docs/statistics.md, \"Replications that vary\")"
)


def summarize(values: ArrayLike, *, level: float = 0.95) -> Summary:
    """Count, mean, sample standard deviation, t interval of the mean and C.O.V.

    See :func:`mean_ci` for the interval and :func:`coefficient_of_variation`.
    A single value gives its mean with ``nan`` spread and interval.
    """
    level = _check_level(level)
    x = _sample(values, minimum=1)
    n, mean = x.size, float(np.mean(x))
    if n == 1:
        return Summary(1, mean, math.nan, level, math.nan, math.nan, math.nan)
    std = float(np.std(x, ddof=1))
    half = float(_st.t.ppf(0.5 + level / 2, n - 1)) * std / math.sqrt(n)
    cv = std / mean if mean != 0 else math.nan
    return Summary(n, mean, std, level, mean - half, mean + half, cv)


def _levels(levels: Sequence[float]) -> list[float]:
    checked = sorted({_check_level(level) for level in levels})
    if not checked:
        raise ValueError("levels: needs at least one confidence level, e.g. (0.90, 0.95, 0.99)")
    return checked


def _compare(
    method: Literal["unpaired", "paired"],
    mean_a: float,
    mean_b: float,
    std_error: float,
    dof: float,
    levels: Sequence[float],
) -> Comparison:
    diff = mean_a - mean_b
    intervals: dict[float, tuple[float, float]] = {}
    chosen: tuple[float, float, float, int] | None = None
    for level in _levels(levels):
        half = float(_st.t.ppf(0.5 + level / 2, dof)) * std_error
        low, high = diff - half, diff + half
        intervals[level] = (low, high)
        sign = 1 if low > 0 else -1 if high < 0 else 0
        if sign != 0:
            chosen = (level, low, high, sign)
    if chosen is None:
        first = min(intervals)
        chosen = (first, *intervals[first], 0)
    level, low, high, sign = chosen
    return Comparison(method, mean_a, mean_b, diff, std_error, dof, level, low, high, sign,
                      intervals)


def unpaired_t(
    a: ArrayLike,
    b: ArrayLike,
    *,
    levels: Sequence[float] = LEVELS,
    round_dof: bool = True,
) -> Comparison:
    """Jain's unpaired t-test for two alternatives (Savorić and Karl (2004), App. B).

    Jain 1991, §13.4.2: with sample means x̄_a, x̄_b, sample standard deviations s_a, s_b and
    sizes n_a, n_b,

    - s = √(s_a²/n_a + s_b²/n_b), the standard deviation of the mean difference;
    - ν = (s_a²/n_a + s_b²/n_b)² / [ (s_a²/n_a)²/(n_a+1) + (s_b²/n_b)²/(n_b+1) ] − 2, the
      effective number of degrees of freedom (Jain's Welch-like formula, not Welch's
      n−1 form);
    - CI = (x̄_a − x̄_b) ∓ t_[1−α/2; ν] · s.

    The interval is computed at every level in ``levels``; the result reports the highest
    level at which it excludes zero (see :class:`Comparison`). Jain rounds ν to the nearest
    integer before looking up t (his Example 13.7: ν = 11.921 → 12); ``round_dof=False``
    uses the fractional ν.

    >>> c = unpaired_t([5.36, 16.57, 0.62, 1.41, 0.64, 7.26],
    ...                [19.12, 3.52, 3.38, 2.50, 3.60, 1.74])
    >>> round(c.dof, 3), round(c.intervals[0.90][0], 2), round(c.intervals[0.90][1], 2)
    (12.0, -6.92, 6.26)
    """
    xa, xb = _sample(a, "a"), _sample(b, "b")
    va, vb = np.var(xa, ddof=1) / xa.size, np.var(xb, ddof=1) / xb.size
    std_error = math.sqrt(va + vb)
    if std_error == 0:
        raise ValueError("a, b: both samples are constant; the t interval is undefined")
    dof = (va + vb) ** 2 / (va**2 / (xa.size + 1) + vb**2 / (xb.size + 1)) - 2
    if round_dof:
        dof = float(max(1, round(dof)))
    return _compare("unpaired", float(np.mean(xa)), float(np.mean(xb)), std_error, float(dof),
                    levels)


def paired_t(a: ArrayLike, b: ArrayLike, *, levels: Sequence[float] = LEVELS) -> Comparison:
    """Comparison of paired observations: a t interval for the mean of d_i = a_i − b_i.

    Jain 1991, §13.4.1: the n pairs (same seed, same workload: common random numbers) give
    one sample of differences; CI = d̄ ∓ t_[1−α/2; n−1] · s_d/√n.

    >>> c = paired_t([5.4, 16.6, 0.6, 1.4, 0.6, 7.3], [19.1, 3.5, 3.4, 2.5, 3.6, 1.7])
    >>> round(c.intervals[0.90][0], 2), round(c.intervals[0.90][1], 2)  # Jain, Example 13.6
    (-7.75, 7.12)
    """
    xa, xb = _sample(a, "a"), _sample(b, "b")
    if xa.size != xb.size:
        raise ValueError(f"a, b: paired samples need equal sizes, got {xa.size} and {xb.size}")
    d = xa - xb
    std_error = float(np.std(d, ddof=1)) / math.sqrt(d.size)
    if std_error == 0:
        raise ValueError("a, b: the differences are constant; the t interval is undefined")
    return _compare("paired", float(np.mean(xa)), float(np.mean(xb)), std_error,
                    float(d.size - 1), levels)


def grubbs_critical(
    n: int, *, alpha: float = 0.05, side: Literal["two-sided", "max", "min"] = "two-sided"
) -> float:
    """Critical value of Grubbs' statistic for ``n`` values.

    G_crit = (n−1)/√n · √( t² / (n − 2 + t²) ), with t the upper α/(2n) quantile (two-sided)
    or α/n quantile (one-sided) of Student's t with n − 2 degrees of freedom (Grubbs 1969;
    NIST/SEMATECH e-Handbook §1.3.5.17).

    >>> round(grubbs_critical(10, alpha=0.05), 3)
    2.29
    """
    if n < 3:
        raise ValueError(f"n: Grubbs' test needs at least 3 values, got {n}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha: must be between 0 and 1 (exclusive), got {alpha}")
    p = alpha / (2 * n) if side == "two-sided" else alpha / n
    t = float(_st.t.isf(p, n - 2))
    return (n - 1) / math.sqrt(n) * math.sqrt(t * t / (n - 2 + t * t))


def grubbs(
    values: ArrayLike,
    *,
    alpha: float = 0.05,
    side: Literal["two-sided", "max", "min"] = "two-sided",
) -> GrubbsResult:
    """Grubbs' test for a single outlier in a sample from a normal population.

    G = max |x_i − x̄| / s (two-sided), (x_max − x̄)/s (``"max"``) or (x̄ − x_min)/s
    (``"min"``), with s the sample standard deviation; the suspect is an outlier when G
    exceeds :func:`grubbs_critical`. Mills et al. (2010, §8.3.1) apply it to the most extreme
    residual around a condition mean, α unstated: 0.05 by default (resolution ``nist:A13``).

    >>> r = grubbs([199.31, 199.53, 200.19, 200.82, 201.92, 201.95, 202.18, 245.57])
    >>> round(r.statistic, 3), r.value, r.outlier  # NIST e-Handbook §1.3.5.17.1: G = 2.4687
    (2.469, 245.57, True)
    """
    if side not in ("two-sided", "max", "min"):
        raise ValueError(f"side: must be 'two-sided', 'max' or 'min', got {side!r}")
    x = _sample(values, minimum=3)
    mean, s = float(np.mean(x)), float(np.std(x, ddof=1))
    if s == 0:
        raise ValueError("values: all equal; Grubbs' statistic is undefined")
    dev = (x - mean) / s
    if side == "max":
        index = int(np.argmax(dev))
        statistic = float(dev[index])
    elif side == "min":
        index = int(np.argmin(dev))
        statistic = float(-dev[index])
    else:
        index = int(np.argmax(np.abs(dev)))
        statistic = float(abs(dev[index]))
    critical = grubbs_critical(x.size, alpha=alpha, side=side)
    return GrubbsResult(x.size, statistic, critical, float(alpha), side, index, float(x[index]))


def pca(data: Any, *, columns: Sequence[str] | None = None) -> Pca:
    """Principal component analysis of z-scored responses.

    Each column is centred and divided by its sample standard deviation (z-score: Mills et al.
    (2010, §8.3.2) leave the scaling unstated, resolution ``nist:A13``), so the components are
    the eigenvectors of the correlation matrix R = Zᵀ Z / (n − 1), ordered by eigenvalue; the
    eigenvalues sum to the number of columns, and ``explained`` = eigenvalue / their sum
    (Jolliffe, *Principal Component Analysis*, 2002, §2.3). Computed by a singular value
    decomposition of Z.

    Parameters
    ----------
    data : pandas.DataFrame or array_like
        Observations in rows, responses in columns (at least 2 rows and 1 column).
    columns : sequence of str, optional
        Column names for array input; default ``y0``, ``y1``….

    Raises
    ------
    ValueError
        If a column is constant (its z-score is undefined) or holds nan.
    """
    if isinstance(data, pd.DataFrame):
        names = [str(c) for c in data.columns]
        index = data.index
        x = data.to_numpy(dtype=np.float64)
    else:
        x = np.asarray(data, dtype=np.float64)
        if x.ndim != 2:
            raise ValueError(f"data: must be 2-D (observations × responses), got {x.ndim}-D")
        names = list(columns) if columns is not None else [f"y{i}" for i in range(x.shape[1])]
        index = pd.RangeIndex(x.shape[0])
    if x.shape[0] < 2 or x.shape[1] < 1:
        raise ValueError(f"data: needs at least 2 rows and 1 column, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("data: contains nan or infinite values; drop them first")
    std = x.std(axis=0, ddof=1)
    for name, s in zip(names, std, strict=True):
        if s == 0:
            raise ValueError(f"data: column {name!r} is constant; z-scores are undefined")
    z = (x - x.mean(axis=0)) / std
    _, singular, vt = np.linalg.svd(z, full_matrices=False)
    eigenvalues = singular**2 / (x.shape[0] - 1)
    vectors = vt.T
    signs = np.sign(vectors[np.argmax(np.abs(vectors), axis=0), np.arange(vectors.shape[1])])
    vectors = vectors * np.where(signs == 0, 1.0, signs)
    pcs = [f"PC{i + 1}" for i in range(vectors.shape[1])]
    loadings = pd.DataFrame(vectors, index=names, columns=pcs)
    scores = pd.DataFrame(z @ vectors, index=index, columns=pcs)
    return Pca(eigenvalues, eigenvalues / x.shape[1], loadings, scores)
