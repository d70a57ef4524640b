"""Experiment statistics against textbook values and scipy.

Textbook numbers: R. Jain, The Art of Computer Systems Performance Analysis (1991), Examples
13.6 (paired) and 13.7 (unpaired); Grubbs' critical values from the table in D. Harvey,
Analytical Chemistry 2.0, Appendix 7 (two-sided G(α, n)) and Grubbs (1969) Table 1
(one-sided); the NIST/SEMATECH e-Handbook §1.3.5.17.1 example for the statistic.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from flowshare import metrics
from flowshare.study import stats

# Jain, Example 13.6/13.7: processor times of one task on two systems (six workloads).
SYSTEM_A = [5.36, 16.57, 0.62, 1.41, 0.64, 7.26]
SYSTEM_B = [19.12, 3.52, 3.38, 2.50, 3.60, 1.74]
# Example 13.6 uses the same observations rounded to one decimal.
PAIRED_A = [5.4, 16.6, 0.6, 1.4, 0.6, 7.3]
PAIRED_B = [19.1, 3.5, 3.4, 2.5, 3.6, 1.7]


# --- mean, standard deviation, C.O.V. ---------------------------------------------------------


def test_summary_matches_scipy_t_interval():
    rng = np.random.default_rng(5)
    x = rng.normal(10.0, 2.0, size=12)
    s = stats.summarize(x, level=0.95)
    low, high = st.t.interval(0.95, len(x) - 1, loc=np.mean(x), scale=st.sem(x))
    assert s.n == 12
    assert s.mean == pytest.approx(np.mean(x), rel=1e-12)
    assert s.std == pytest.approx(np.std(x, ddof=1), rel=1e-12)
    assert (s.low, s.high) == pytest.approx((low, high), rel=1e-12)
    assert s.half_width == pytest.approx((high - low) / 2, rel=1e-12)
    assert s.cv == pytest.approx(np.std(x, ddof=1) / np.mean(x), rel=1e-12)
    assert stats.mean_ci(x, level=0.99) == pytest.approx(
        st.t.interval(0.99, 11, loc=np.mean(x), scale=st.sem(x)), rel=1e-12
    )


def test_t_interval_covers_the_true_mean_at_its_level():
    # 2000 samples of 5: the 90 % interval must cover the mean about 90 % of the time
    # (binomial sd 0.0067); a z interval would cover only about 81 %.
    rng = np.random.default_rng(11)
    hits = sum(
        low <= 3.0 <= high
        for low, high in (stats.mean_ci(rng.normal(3.0, 1.0, 5), level=0.9) for _ in range(2000))
    )
    assert abs(hits / 2000 - 0.90) < 0.02


def test_single_value_summary_has_no_spread():
    s = stats.summarize([4.0])
    assert s.mean == 4.0 and math.isnan(s.std) and math.isnan(s.low) and math.isnan(s.cv)


def test_coefficient_of_variation():
    assert stats.coefficient_of_variation([2.0, 4.0, 6.0]) == pytest.approx(0.5)
    assert stats.coefficient_of_variation([2.0, 4.0, 6.0], ddof=0) == pytest.approx(
        math.sqrt(8 / 3) / 4
    )
    assert math.isnan(stats.coefficient_of_variation([-1.0, 1.0]))


def test_jain_index_is_the_metrics_function():
    assert stats.jain_index is metrics.jain_index
    assert stats.jain_index([1.0, 1.0, 0.0, 0.0]) == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: stats.summarize([]), "values: needs at least 1 values, got 0"),
        (lambda: stats.summarize([1.0, math.nan]), "values: contains nan"),
        (lambda: stats.summarize([1.0, 2.0], level=95), "level: must be between 0 and 1"),
        (lambda: stats.unpaired_t([1.0], [1.0, 2.0]), "a: needs at least 2 values, got 1"),
        (lambda: stats.unpaired_t([1.0, 1.0], [2.0, 2.0]), "both samples are constant"),
        (lambda: stats.paired_t([1.0, 2.0], [1.0, 2.0, 3.0]), "paired samples need equal sizes"),
        (lambda: stats.grubbs([1.0, 2.0]), "values: needs at least 3 values"),
        (lambda: stats.grubbs([1.0, 2.0, 3.0], side="up"), "side: must be 'two-sided'"),
        (lambda: stats.pca([[1.0, 2.0], [1.0, 3.0]], columns=["a", "b"]),
         "column 'a' is constant"),
    ],
)
def test_bad_input_gets_one_line_naming_the_argument(call, message):
    with pytest.raises(ValueError, match=None) as err:
        call()
    assert message in str(err.value) and "\n" not in str(err.value)


# --- Jain's unpaired and paired t tests --------------------------------------------------------


def test_unpaired_t_reproduces_jain_example_13_7():
    # Jain: mean difference -0.33, s = 3.698, nu = 11.921 -> 12, t[0.95;12] = 1.782,
    # 90 % interval (-6.92, 6.26): not significant, so the 0.90 interval is reported.
    c = stats.unpaired_t(SYSTEM_A, SYSTEM_B)
    assert c.difference == pytest.approx(-0.333, abs=1e-3)
    assert c.std_error == pytest.approx(3.698, abs=1e-3)
    assert c.dof == 12
    assert c.intervals[0.90] == pytest.approx((-6.92, 6.26), abs=0.006)
    assert (c.level, c.sign, c.significant) == (0.90, 0, False)
    assert (c.low, c.high) == c.intervals[0.90]
    fractional = stats.unpaired_t(SYSTEM_A, SYSTEM_B, round_dof=False)
    assert fractional.dof == pytest.approx(11.921, abs=1e-3)


def test_unpaired_t_effective_dof_is_jains_not_welchs():
    rng = np.random.default_rng(2)
    a, b = rng.normal(0, 1, 5), rng.normal(0, 3, 9)
    va, vb = np.var(a, ddof=1) / 5, np.var(b, ddof=1) / 9
    jain = (va + vb) ** 2 / (va**2 / 6 + vb**2 / 10) - 2
    welch = (va + vb) ** 2 / (va**2 / 4 + vb**2 / 8)
    c = stats.unpaired_t(a, b, round_dof=False)
    assert c.dof == pytest.approx(jain, rel=1e-12)
    assert abs(c.dof - welch) > 0.1
    # With Welch's dof the interval is scipy's Welch interval: same centre and scale.
    res = st.ttest_ind(a, b, equal_var=False)
    assert c.difference / c.std_error == pytest.approx(res.statistic, rel=1e-12)


def test_unpaired_t_reports_the_highest_significant_level_and_its_sign():
    # Difference about 3 standard errors: significant at 0.95, not at 0.99 -> level 0.95.
    a = [10.0, 11.0, 12.0, 13.0, 14.0, 10.5, 11.5, 12.5, 13.5, 14.5]
    b = [x - 1.7 for x in a[::-1]]
    b[0] += 0.3
    c = stats.unpaired_t(a, b)
    half = {lvl: (hi - lo) / 2 for lvl, (lo, hi) in c.intervals.items()}
    expected = max(lvl for lvl in stats.LEVELS if c.difference > half[lvl])
    assert c.level == expected
    assert c.sign == 1 and c.low > 0
    # Swapping the alternatives mirrors the interval and flips the sign (Savorić and Karl
    # (2004): a CI of no-EFCM minus EFCM below zero means the second alternative is better).
    m = stats.unpaired_t(b, a)
    assert (m.level, m.sign) == (c.level, -1)
    assert (m.low, m.high) == pytest.approx((-c.high, -c.low), rel=1e-12)


def test_unpaired_t_highly_significant_is_reported_at_0_99():
    c = stats.unpaired_t([1.0, 1.1, 0.9, 1.05, 0.95], [2.0, 2.1, 1.9, 2.05, 1.95])
    assert (c.level, c.sign) == (0.99, -1)


def test_paired_t_reproduces_jain_example_13_6():
    # Jain: differences {-13.7, 13.1, -2.8, -1.1, -3.0, 5.6}, mean -0.32, variance 81.62,
    # t[0.95;5] = 2.015, 90 % interval (-7.75, 7.11).
    c = stats.paired_t(PAIRED_A, PAIRED_B)
    assert c.method == "paired" and c.dof == 5
    assert c.difference == pytest.approx(-0.32, abs=0.005)
    assert c.std_error**2 * 6 == pytest.approx(81.62, abs=0.005)
    assert c.intervals[0.90] == pytest.approx((-7.75, 7.11), abs=0.006)
    assert c.sign == 0


def test_paired_t_matches_scipy_and_gains_power_from_pairing():
    rng = np.random.default_rng(7)
    common = rng.normal(100, 20, 10)  # common random numbers: large shared variation
    a = common + rng.normal(1.0, 0.3, 10)
    b = common
    paired = stats.paired_t(a, b)
    res = st.ttest_rel(a, b)
    assert paired.difference / paired.std_error == pytest.approx(res.statistic, rel=1e-12)
    assert (paired.level, paired.sign) == (0.99, 1)
    assert stats.unpaired_t(a, b).sign == 0


# --- Grubbs -----------------------------------------------------------------------------------

# Harvey, Appendix 7 (two-sided): n -> (alpha 0.05, alpha 0.01). Two entries of that table are
# misprinted and left out: n = 7 at 0.05 reads 2.202 (2.020) and n = 15 at 0.01 repeats 2.755
# (2.806).
TWO_SIDED = {
    3: (1.155, 1.155), 4: (1.481, 1.496), 5: (1.715, 1.764), 6: (1.887, 1.973),
    7: (None, 2.139), 8: (2.126, 2.274), 9: (2.215, 2.387), 10: (2.290, 2.482),
    11: (2.355, 2.564), 12: (2.412, 2.636), 13: (2.462, 2.699), 14: (2.507, 2.755),
    15: (2.549, None),
}  # fmt: skip
# Grubbs (1969), Table 1 (one-sided, largest or smallest value).
ONE_SIDED = {3: (1.153, 1.155), 5: (1.672, 1.749), 8: (2.032, 2.221), 10: (2.176, 2.410),
             15: (2.409, 2.705)}  # fmt: skip


@pytest.mark.parametrize("n", sorted(TWO_SIDED))
def test_grubbs_critical_values_match_the_published_tables(n):
    for alpha, value in zip((0.05, 0.01), TWO_SIDED[n], strict=True):
        if value is not None:
            assert stats.grubbs_critical(n, alpha=alpha) == pytest.approx(value, abs=1.5e-3)
    for alpha, value in zip((0.05, 0.01), ONE_SIDED.get(n, (None, None)), strict=True):
        if value is not None:
            got = stats.grubbs_critical(n, alpha=alpha, side="max")
            assert got == pytest.approx(value, abs=1.5e-3)


def test_grubbs_flags_the_nist_outlier_and_not_a_normal_sample():
    data = [199.31, 199.53, 200.19, 200.82, 201.92, 201.95, 202.18, 245.57]
    r = stats.grubbs(data)
    assert r.statistic == pytest.approx(2.4687, abs=1e-3)
    assert (r.index, r.value, r.outlier) == (7, 245.57, True)
    assert stats.grubbs(data, side="max").critical == pytest.approx(2.032, abs=1.5e-3)
    low = stats.grubbs(data, side="min")
    assert low.value == 199.31 and not low.outlier
    assert not stats.grubbs(data[:-1]).outlier


def test_grubbs_false_alarm_rate_is_alpha():
    rng = np.random.default_rng(3)
    alarms = sum(stats.grubbs(rng.normal(size=10), alpha=0.05).outlier for _ in range(2000))
    assert abs(alarms / 2000 - 0.05) < 0.015


# --- PCA --------------------------------------------------------------------------------------


def test_pca_is_the_eigendecomposition_of_the_correlation_matrix():
    rng = np.random.default_rng(4)
    latent = rng.normal(size=(40, 1))
    x = np.hstack([latent * 3 + rng.normal(0, 0.1, (40, 1)), latent * -2 + 5,
                   rng.normal(0, 1, (40, 1)) * 100 + latent])  # fmt: skip
    x[:, 1] += rng.normal(0, 0.2, 40)
    result = stats.pca(x, columns=["u", "v", "w"])
    eig, vec = np.linalg.eigh(np.corrcoef(x, rowvar=False))
    order = np.argsort(eig)[::-1]
    assert result.eigenvalues == pytest.approx(eig[order], rel=1e-10)
    assert result.explained.sum() == pytest.approx(1.0)
    assert result.explained[0] > 0.6
    for i, k in enumerate(order):
        assert abs(np.dot(result.loadings.iloc[:, i], vec[:, k])) == pytest.approx(1.0)
    # Scores are the z-scores projected on the loadings; their variances are the eigenvalues.
    z = (x - x.mean(0)) / x.std(0, ddof=1)
    assert result.scores.to_numpy() == pytest.approx(z @ result.loadings.to_numpy())
    assert result.scores.var(ddof=1).to_numpy() == pytest.approx(result.eigenvalues)
    # The largest loading of each component is positive, so signs are reproducible.
    for pc in result.loadings:
        column = result.loadings[pc]
        assert column[column.abs().idxmax()] > 0
    assert list(result.loadings.index) == ["u", "v", "w"]


def test_pca_is_scale_free():
    rng = np.random.default_rng(9)
    x = rng.normal(size=(20, 3))
    a = stats.pca(x)
    b = stats.pca(x * [1.0, 1e6, 1e-3] + [5, -7, 0])
    assert a.explained == pytest.approx(b.explained)
    assert a.loadings.to_numpy() == pytest.approx(b.loadings.to_numpy())


def test_identical_replications_finds_arms_whose_every_response_repeats():
    frame = pd.DataFrame({
        "arm": [0, 0, 1, 1, 2, 3, 3],
        "goodput": [5.0, 5.0, 5.0, 5.1, 7.0, 1.0, 1.0],
        "drops": [3.0, 3.0, 3.0, 3.0, 1.0, np.nan, np.nan],
    })  # fmt: skip
    # Arm 1 differs in one response, arm 2 has a single replication.
    assert stats.identical_replications(frame, ["goodput", "drops"]) == [0, 3]
    assert stats.identical_replications(frame, ["drops"]) == [0, 1, 3]
    assert stats.identical_replications(frame, []) == []
