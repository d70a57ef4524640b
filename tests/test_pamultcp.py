"""PA-MulTCP and MPAT from Python: the cap the simulator applies against the model's
``pa_multcp_wmax``, members joining an aggregate and the ``members`` table, and the
scenario checks."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import flowshare
from flowshare import ConfigError
from flowshare.models import pa_multcp_wmax

SCENARIO = """
[simulation]
duration = "{duration}s"
seed = 3

[topology]
kind = "dumbbell"
bottleneck = {{ rate = "10Mbps", delay = "20ms", queue = {{ limit = 60 }} }}
access = {{ rate = "1Gbps", delay = "1ms" }}

[[flows]]
name = "agg"
tcp = {{ recovery = "sack", cc = {cc} }}
{extra}

[[flows]]
name = "tcp"
count = 2
tcp = {{ recovery = "sack" }}
"""

MEMBER_COLUMNS = ["flow", "name", "member", "start_s", "size_bytes", "segments", "completion_time_s"]


def run(tmp_path: Path, cc: str, extra: str = "", duration: int = 20) -> flowshare.RunResult:
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO.format(duration=duration, cc=cc, extra=extra))
    return flowshare.run(path, progress=False)


def test_worked_caps_match_the_model() -> None:
    """Kuo and Fu (2008) eq. (9) at p = 0.01: (1 + 3N'^1.5)/sqrt(6N'p) for N' = 2, 10, 30."""
    for n, wmax in [(2, 27.3817), (10, 123.765), (30, 368.169)]:
        closed = (1 + 3 * n**1.5) / math.sqrt(6 * n * 0.01)
        assert pa_multcp_wmax(n, 0.01) == pytest.approx(closed, rel=1e-12)
        assert closed == pytest.approx(wmax, rel=1e-5)


def test_the_simulated_cap_is_the_models(tmp_path: Path) -> None:
    """Every sample of the adjusting loop's cap is ``pa_multcp_wmax`` of the weight N' and
    the probe loop's loss-event rate at that instant, and the adjusting loop stays under it."""
    for weight, n in [("n_minus_1", 4), ("n", 4)]:
        cc = f'{{ algo = "pamultcp", n = {n}, adjust_weight = "{weight}" }}'
        s = run(tmp_path, cc).flow_series
        s = s[s["flow"] == 0]
        assert set(s["weight_n"].dropna()) == {n - 1 if weight == "n_minus_1" else n}
        known = s.dropna(subset=["w_max", "p_probe"])
        assert len(known) > len(s) / 2, "the probe loop lost packets early"
        model = pa_multcp_wmax(known["weight_n"].to_numpy(), known["p_probe"].to_numpy())
        np.testing.assert_allclose(known["w_max"].to_numpy(), model, rtol=1e-9)
        assert (known["adjust_cwnd"] <= known["w_max"] + 1e-9).all()
        assert 0 < known["p_probe"].max() < 0.2


def test_a_joined_member_completes_and_is_in_the_members_table(tmp_path: Path) -> None:
    for cc in ['{ algo = "pamultcp", n = 4 }', '{ algo = "mpat", n = 4 }']:
        extra = 'aggregate = { joins = [{ at = "8s", size = "30KB" }, { at = "19.9s", size = "10MB" }] }'
        result = run(tmp_path, cc, extra)
        m = result.members
        assert list(m.columns) == MEMBER_COLUMNS
        assert m["name"].tolist() == ["agg", "agg"]
        assert m["member"].tolist() == [4, 5]
        assert m["start_s"].tolist() == [8.0, 19.9]
        assert m["size_bytes"].tolist() == [30_000, 10_000_000]
        assert m["segments"].tolist() == [21, 6850]
        done = m["completion_time_s"].tolist()
        # Sharing the aggregate with four long-lived members, 21 segments take at least 105
        # of the aggregate's segments at 10 Mbps; the 10 MB member cannot finish in 0.1 s.
        assert 105 * 0.0012 < done[0] < 5.0, cc
        assert math.isnan(done[1]), cc
        pd.testing.assert_frame_equal(result.table("members"), m)
        out = tmp_path / "out"
        files = result.write(out)
        assert out / "members.csv" in files
        written = pd.read_csv(out / "members.csv")
        assert list(written.columns) == MEMBER_COLUMNS
        assert written["completion_time_s"].iloc[0] == pytest.approx(done[0])


def test_no_members_gives_an_empty_table_and_no_file(tmp_path: Path) -> None:
    result = run(tmp_path, '{ algo = "pamultcp", n = 2 }', duration=2)
    assert result.members.empty
    assert list(result.members.columns) == MEMBER_COLUMNS
    files = result.write(tmp_path / "out")
    assert not any(f.name == "members.csv" for f in files)


def test_aggregate_needs_an_aggregate_controller(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(
        SCENARIO.format(duration=2, cc='"reno"', extra='aggregate = { joins = [{ at = "1s", size = "1KB" }] }')
    )
    with pytest.raises(ConfigError, match=r"flows\[0\]\.aggregate.*pamultcp"):
        flowshare.run(path, progress=False)
