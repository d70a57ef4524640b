"""The NIST study's responses from a transfers table (Mills et al. 2010, NIST SP 500-282 ch. 8,
Tables 8-19, 8-20, 8-24)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from flowshare.reproduce import nist_responses as nr


def transfers(rows):
    return pd.DataFrame(rows, columns=["name", "start_s", "size_bytes", "completion_time_s",
                                       "packets_sent", "retransmits"])


def test_names_give_table_8_6_groups_and_the_algorithm_class():
    t = nr.label_columns(transfers([
        ("nist/document/F-N/bic", 0.0, 1460, 1.0, 1, 0),
        ("nist/movie/VF-F/reno", 0.0, 1460, 1.0, 1, 0),
        ("nist/web/T-N/reno", 0.0, 1460, 1.0, 1, 0),
    ]))
    assert list(t["group"]) == [16, 1, 24]
    assert list(t["tcp"]) == [False, True, True]
    assert list(t["file_type"]) == ["D", "M", "WO"]
    with pytest.raises(ValueError, match="unknown file type"):
        nr.label_columns(transfers([("nist/film/T-N/reno", 0.0, 1, 1.0, 1, 0)]))
    with pytest.raises(ValueError, match="names must be"):
        nr.label_columns(transfers([("web", 0.0, 1, 1.0, 1, 0)]))


def test_group_summary_weights_its_records_by_n():
    rng = np.random.default_rng(1)
    g = rng.exponential(1000.0, 2500)
    s = nr.group_summary(g)
    assert s["N"] == 2500
    # The N-weighted mean of the records' means is the overall mean…
    assert s["mean"] == pytest.approx(g.mean())
    # …but the extremes are averages of the records' extremes, as the study computes them.
    records = [g[:1000], g[1000:2000], g[2000:]]
    assert s["max"] == pytest.approx((1000 * records[0].max() + 1000 * records[1].max() + 500 * records[2].max()) / 2500)
    assert s["max"] < g.max()
    assert s["p50"] == pytest.approx(sum(len(r) * np.median(r) for r in records) / 2500)
    assert list(s) == list(nr.STATISTICS)
    empty = nr.group_summary(np.array([]))
    assert empty["N"] == 0 and np.isnan(empty["mean"])


def test_user_experience_splits_alternate_and_tcp_flows():
    rows = []
    for k in range(30):
        # Alternate documents on F-N paths at 100 packets/s, Reno's at 50.
        rows.append(("nist/document/F-N/bic", float(k), 146_000, 1.0, 100, 0))
        rows.append(("nist/document/F-N/reno", float(k), 146_000, 2.0, 100, 2))
    rows.append(("nist/movie/VF-F/reno", 0.0, 1460, float("nan"), 5, 0))  # still running
    ux = nr.user_experience(transfers(rows), mss=1460, batch=10)
    row = ux.set_index("group").loc[16]
    assert row["y1(u)"] == 30 and row["y2(u)"] == pytest.approx(100.0)
    assert row["y15(u)"] == 30 and row["y16(u)"] == pytest.approx(50.0)
    assert row["y3(u)"] == 0.0
    assert ux.set_index("group").loc[1, "y15(u)"] == 0
    assert len(ux) == 24 and list(ux.columns) == ["group", *(f"y{i}(u)" for i in range(1, 29))]


def test_completions_and_retransmissions():
    t = transfers([
        ("nist/web/T-N/reno", 0.0, 1460, 1.0, 10, 0),
        ("nist/web/T-N/reno", 5.0, 1460, 1.0, 10, 1),
        ("nist/document/T-N/reno", 6.0, 1460, 1.0, 30, 2),
        ("nist/movie/T-N/reno", 7.0, 1460, float("nan"), 40, 4),
    ])
    c = nr.completions(t)
    assert c["y12"] == 3
    assert c["y13"] == pytest.approx(2 / 3) and c["y14"] == pytest.approx(1 / 3)
    assert c["y15"] == 0 and c["y16"] == 0
    assert nr.retransmission_rate(t, after_s=5.0) == pytest.approx(7 / 80)


def test_active_flows_average_the_transfers_in_progress_over_the_measured_half():
    t = pd.DataFrame({"start_s": [0.0, 4.0, 6.0, 9.0], "completion_time_s": [10.0, 2.0, np.nan, 0.5]})
    # Over [5, 10]: the first for 5 s, the second 1 s, the third (unfinished) 4 s, the fourth 0.5 s.
    assert nr.active_flows(t, 5.0, 10.0) == pytest.approx((5 + 1 + 4 + 0.5) / 5)
    with pytest.raises(ValueError, match="end_s"):
        nr.active_flows(t, 5.0, 5.0)
