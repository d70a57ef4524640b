"""Argument checks and small helpers shared by the chapter modules."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "as_float",
    "check_choice",
    "check_fraction",
    "check_nonnegative",
    "check_positive",
    "check_probability",
    "out",
]


def as_float(x: ArrayLike) -> np.ndarray:
    """``x`` as a float64 array (no copy when it already is one)."""
    return np.asarray(x, dtype=np.float64)


def _check(name: str, x: ArrayLike, ok: Any, allowed: str) -> np.ndarray:
    arr = as_float(x)
    if arr.size and not np.all(ok(arr)):
        bad = arr[~ok(arr)].flat[0]
        raise ValueError(f"{name} must be {allowed} (got {bad:g})")
    return arr


def check_positive(name: str, x: ArrayLike) -> np.ndarray:
    """``x`` as an array; ValueError unless every value is finite and > 0."""
    return _check(name, x, lambda a: np.isfinite(a) & (a > 0), "finite and > 0")


def check_nonnegative(name: str, x: ArrayLike, *, finite: bool = True) -> np.ndarray:
    """``x`` as an array; ValueError unless every value is >= 0 (and finite if asked)."""
    if finite:
        return _check(name, x, lambda a: np.isfinite(a) & (a >= 0), "finite and >= 0")
    return _check(name, x, lambda a: a >= 0, ">= 0")


def check_probability(name: str, x: ArrayLike) -> np.ndarray:
    """``x`` as an array; ValueError unless every value is in [0, 1]."""
    return _check(name, x, lambda a: (a >= 0) & (a <= 1), "in [0, 1]")


def check_fraction(name: str, x: ArrayLike) -> np.ndarray:
    """``x`` as an array; ValueError unless every value is in (0, 1]."""
    return _check(name, x, lambda a: (a > 0) & (a <= 1), "in (0, 1]")


def check_choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    """``value`` if it is one of ``choices``, else ValueError naming them."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))} (got {value!r})")
    return value


def out(x: Any) -> Any:
    """A Python float for a 0-d result, the array otherwise."""
    arr = np.asarray(x)
    return float(arr) if arr.ndim == 0 else arr
