"""Jain's fairness index against hand-computed values (Jain, Chiu and Hawe 1984, eq. 1)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from flowshare.metrics import jain_index


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([7.0], 1.0),  # one flow is always fair to itself
        ([5.0, 5.0, 5.0, 5.0], 1.0),  # equal shares
        ([1.0, 0.0, 0.0, 0.0], 0.25),  # one of n gets everything: 1/n
        ([2.0, 2.0, 0.0, 0.0, 0.0], 0.4),  # k of n share equally: k/n
        ([1.0, 2.0, 3.0], 36.0 / 42.0),  # (1+2+3)^2 / (3 * (1+4+9))
        ([10e6, 30e6], 0.8),  # (40)^2 / (2 * (100 + 900))
    ],
)
def test_textbook_values(values, expected):
    assert jain_index(values) == pytest.approx(expected, rel=1e-12)


def test_scale_invariant():
    x = np.array([1.0, 4.0, 9.0, 2.0])
    assert jain_index(x * 1e6) == pytest.approx(jain_index(x), rel=1e-12)


def test_axis_computes_one_index_per_row():
    out = jain_index([[1.0, 1.0], [1.0, 0.0]], axis=1)
    np.testing.assert_allclose(out, [1.0, 0.5])


def test_all_zero_is_undefined():
    assert math.isnan(jain_index([0.0, 0.0, 0.0]))


def test_nan_propagates():
    assert math.isnan(jain_index([1.0, float("nan")]))


@pytest.mark.parametrize("bad", [[], [1.0, -1.0]])
def test_rejects_empty_and_negative(bad):
    with pytest.raises(ValueError, match="jain_index"):
        jain_index(bad)
