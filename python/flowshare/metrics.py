"""Aggregate figures computed from per-flow results."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["jain_index"]


def jain_index(values: ArrayLike, *, axis: int | None = None) -> Any:
    r"""Jain's fairness index of an allocation.

    .. math:: J(x_1, \dots, x_n) = \frac{\left(\sum_i x_i\right)^2}{n \sum_i x_i^2}

    (Jain, Chiu and Hawe, DEC-TR-301, 1984, eq. 1). It is 1 when all ``n`` values are
    equal and ``k/n`` when ``k`` of them share equally and the rest get nothing.

    Parameters
    ----------
    values : array_like
        Non-negative allocations, e.g. per-flow goodput in bit/s.
    axis : int, optional
        Axis along which the index is computed; by default over all values.

    Returns
    -------
    float or ndarray
        The index, in ``[1/n, 1]``. ``nan`` where every value is zero (the index is
        undefined) or a value is ``nan``.

    Raises
    ------
    ValueError
        If there are no values along ``axis`` or a value is negative.

    Examples
    --------
    >>> jain_index([5.0, 5.0, 5.0, 5.0])
    1.0
    >>> jain_index([1.0, 0.0, 0.0, 0.0])
    0.25
    >>> round(jain_index([1, 2, 3]), 6)  # 36 / (3 * 14)
    0.857143
    """
    x = np.asarray(values, dtype=np.float64)
    n = x.size if axis is None else x.shape[axis]
    if n == 0:
        raise ValueError("jain_index needs at least one value")
    if np.any(x < 0):
        raise ValueError("jain_index is defined for non-negative values only")
    total = np.sum(x, axis=axis)
    squares = np.sum(x * x, axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        index = np.where(squares > 0, total * total / (n * squares), np.nan)
    return float(index) if np.ndim(index) == 0 else index
