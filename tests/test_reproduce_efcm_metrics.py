"""The EFCM study's measures (Savorić and Karl, TKN-04-007, 2004, Ch. 4 and App. B.1) on
hand-computed numbers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from flowshare.reproduce import efcm_metrics as m


def _transfers(rows: list[tuple[int, str, float, float, int]]) -> pd.DataFrame:
    """(transfer, name, start, completion time or nan, bytes) rows as a transfers table."""
    return pd.DataFrame(rows, columns=["transfer", "name", "start_s", "completion_time_s",
                                       "size_bytes"])


# A [0, 10), B [5, 8), C [10, 12) (opens as A closes), D [10, 11) (opens with C, after it),
# E from 11.5, still open at the end; F belongs to a background group.
TRANSFERS = _transfers([
    (0, "S1", 0.0, 10.0, 1460 * 20),
    (1, "S2", 5.0, 3.0, 1460 * 3 + 1),
    (2, "S3", 10.0, 2.0, 30458),
    (3, "S1", 10.0, 1.0, 1460),
    (4, "S2", 11.5, math.nan, 1460 * 40),
    (5, "BS1", 1.0, 1.0, 1460),
])


def test_connections_count_whole_segments_and_open_ends() -> None:
    conns = m.connections(TRANSFERS)
    assert conns["transfer"].tolist() == [0, 1, 2, 3, 4]
    assert conns["segments"].tolist() == [20, 4, 21, 1, 40]  # ⌈30458 / 1460⌉ = 21
    assert conns["end_s"].tolist()[:4] == [10.0, 8.0, 12.0, 11.0]
    assert math.isinf(conns["end_s"].iloc[4])


def test_capable_connections_open_while_another_is_open() -> None:
    conns = m.connections(TRANSFERS)
    # B opens inside A; C opens as A closes (not capable); D opens with C, after it in order;
    # E opens while C is open.
    assert m.efcm_capable(conns).tolist() == [False, True, False, True, True]


def test_concurrency_periods_have_constant_membership() -> None:
    periods = m.concurrency_periods(m.connections(TRANSFERS))
    assert periods.to_dict("records") == [
        {"start_s": 5.0, "end_s": 8.0, "members": (0, 1)},
        {"start_s": 10.0, "end_s": 11.0, "members": (2, 3)},
        {"start_s": 11.5, "end_s": 12.0, "members": (2, 4)},
    ]


def test_t1_weights_by_duration_and_t2_by_connection() -> None:
    # 10 segments in 1 s and 30 in 5 s: T̄1 = 40 / 6, T̄2 = (10 + 6) / 2.
    t1, t2 = m.mean_throughputs([10, 30], [1.0, 5.0])
    assert t1 == pytest.approx(40 / 6)
    assert t2 == pytest.approx(8.0)
    assert all(math.isnan(x) for x in m.mean_throughputs([], []))
    with pytest.raises(ValueError, match="durations"):
        m.mean_throughputs([1], [0.0])


def test_new_connection_measures_per_source() -> None:
    conns = m.connections(TRANSFERS)
    table = m.new_connection_measures(conns).set_index("name")
    # S1: D only (1 segment in 1 s); S2: B (4 in 3 s; E never completes); S3: none capable.
    assert table.loc["S1", "t1"] == pytest.approx(1.0)
    assert table.loc["S2", ["t1", "t2"]].tolist() == pytest.approx([4 / 3, 4 / 3])
    assert table.loc["S2", "capable"] == 2
    assert math.isnan(table.loc["S3", "t1"])
    # A window that starts after D leaves S1 with nothing counted.
    later = m.new_connection_measures(conns, start_s=10.5).set_index("name")
    assert math.isnan(later.loc["S1", "t1"])


def test_concurrent_measures_and_jain_index() -> None:
    periods = pd.DataFrame({"start_s": [5.0, 10.0], "end_s": [8.0, 11.0],
                            "members": [(0, 1), (2, 3)]})
    # Period 0: 3 and 3 segments in 3 s, rates (1, 1), index 1; period 1: (4, 0), index 0.5.
    sent = pd.DataFrame({"period": [0, 0, 1, 1], "transfer": [0, 1, 2, 3],
                         "segments": [3, 3, 4, 0]})
    out = m.concurrent_measures(periods, sent)
    assert out["fairness"] == pytest.approx(0.75)
    assert out["t1"] == pytest.approx(10 / 8)            # 10 segments in 3 + 3 + 1 + 1 s
    assert out["t2"] == pytest.approx((1 + 1 + 4 + 0) / 4)
    assert out["periods"] == 2
    with pytest.raises(ValueError, match="sent.period"):
        m.concurrent_measures(periods, sent.assign(period=[0, 0, 1, 7]))


def test_unpaired_t_by_hand() -> None:
    # x̄_a = 2, x̄_b = 5, s_a² = s_b² = 1, n = 3: s = sqrt(2/3),
    # ν = (2/3)² / (2 · (1/3)² / 4) − 2 = 6; t[0.975; 6] = 2.447, t[0.995; 6] = 3.707.
    c = m.unpaired_t([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    assert c.difference == pytest.approx(-3.0)
    assert c.s == pytest.approx(math.sqrt(2 / 3))
    assert c.nu == pytest.approx(6.0)
    # Significant at 0.95 (−3 ± 1.998) but not at 0.99 (−3 ± 3.027): EFCM better, '+'.
    assert c.level == 0.95
    assert (c.low, c.high) == pytest.approx((-3 - 2.446912 * c.s, -3 + 2.446912 * c.s),
                                            abs=1e-5)
    assert c.sign == "+"
    # Not significant even at 0.90: the 0.90 interval and '='.
    same = m.unpaired_t([1.0, 2.0, 3.0], [1.5, 2.0, 2.5])
    assert (same.level, same.sign) == (0.90, "=")
    assert same.nu == pytest.approx((5 / 12) ** 2 / ((1 / 9 + 1 / 144) / 4) - 2)  # 3.88
    assert same.low < 0 < same.high
    with pytest.raises(ValueError, match="at least 2"):
        m.unpaired_t([1.0], [2.0, 3.0])


def test_unpaired_t_matches_the_t_quantile() -> None:
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(1)
    a, b = rng.normal(10, 2, 12), rng.normal(11, 3, 12)
    c = m.unpaired_t(a, b, levels=(0.99,))
    half = stats.t.ppf(0.995, c.nu) * c.s
    assert (c.low, c.high) == pytest.approx((c.difference - half, c.difference + half))


@pytest.mark.parametrize(("low", "high", "table_mid", "delta"), [
    (-5.77, -2.37, 46.61 - 50.68, "+"),   # B.1, T̄2 new TCP 1; Table 5.1 gives '+'
    (0.27, 3.15, 69.69 - 67.98, "−"),     # B.2, T̄2 new TCP 2; Table 5.3 gives '−'
    (-0.73, 2.28, 42.25 - 41.48, "="),    # B.1, T̄1 new TCP 1; Table 5.1 gives '='
    (0.25, 1.99, 39.97 - 38.86, "−"),     # B.1, T̄1 concurrent; Table 5.2 gives '−'
])
def test_sign_convention_of_the_reports_tables(low: float, high: float, table_mid: float,
                                               delta: str) -> None:
    # The intervals are of (no EFCM − EFCM): their midpoints are the tables' differences
    # (to the rounding of both).
    assert (low + high) / 2 == pytest.approx(table_mid, abs=0.015)
    assert m.sign(low, high) == delta


def test_period_segments_count_what_is_acknowledged_or_sent_between_the_bounds() -> None:
    # Transfer 1 opens at 0 s; transfer 2 opens at 1 s and completes at 3 s; 1 completes at 4 s.
    conns = pd.DataFrame({"transfer": [1, 2], "name": ["S1", "S2"], "start_s": [0.0, 1.0],
                          "end_s": [4.0, 3.0], "duration_s": [4.0, 2.0], "segments": [4, 2]})
    periods = m.concurrency_periods(conns)
    assert list(periods["members"]) == [(1, 2)]
    snapshots = pd.DataFrame({
        "time_s": [0.0, 1.0, 1.0, 3.0, 3.0, 4.0],
        "transfer": [1, 1, 2, 1, 2, 1],
        "sent_bytes": [0, 4380, 0, 5840, 2920, 5840],
        "acked_bytes": [0, 1460, 0, 4380, 2920, 5840],
    })
    acked = m.period_segments(periods, snapshots)
    assert acked.to_dict("list") == {"period": [0, 0], "transfer": [1, 2],
                                     "segments": [2.0, 2.0]}
    sent = m.period_segments(periods, snapshots, "sent")
    assert sent["segments"].tolist() == [1.0, 2.0]
    # A period end that is a start plus a duration in floating point still finds its snapshot.
    late = periods.assign(end_s=1.0 + (3.0 - 1.0) * (1 + 1e-16))
    assert m.period_segments(late, snapshots)["segments"].tolist() == [2.0, 2.0]
    with pytest.raises(ValueError, match="no snapshot of transfer 2"):
        m.period_segments(periods, snapshots[snapshots["transfer"] == 1])
    with pytest.raises(ValueError, match="counter: expected acked or sent"):
        m.period_segments(periods, snapshots, "both")
