"""Chapter 5 of the Hasegawa (2000) reproduction: the physics of short runs of its scenarios
(asymmetric link of Table 5.1, HTTP/1.0 and 1.1 clients) and its targets' evaluation."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import flowshare
from flowshare._core import ConfigError
from flowshare.models.hasegawa import ch5 as model
from flowshare.reproduce import hasegawa_ch5 as ch5
from flowshare.reproduce.hasegawa_runs import SERIES_PREFIX

OPTIONS = ch5.Options()


def _run(point, tmp_path, options=OPTIONS):
    out = tmp_path / "run"
    flowshare.run(ch5.scenario(point, options), seed=7).write(out)
    return ch5.measure(out, point, options)


def test_one_small_document_takes_the_simulated_handshake_near_eq_5_1(tmp_path):
    # 10 Kbyte over HTTP/1.0 at τ = 10 ms: 1.5 rtt of set-up + the fluid slow start within
    # 30 % (the simulated slow start sends whole windows; the ACK clock is the uplink's).
    r = _run(ch5.Point("delay", "tahoe", ch5.K_HTTP, 10.0, 10), tmp_path)
    assert r["documents"] == 1 and r["unfinished"] == 0
    rtt = model.asym_rtt(3750.0, 1000.0, 0.01, 0.01)
    assert r["delay_ms"] > 1e3 * 1.5 * rtt
    assert abs(r["delay_ms"] / r["model_ms"] - 1) < 0.3, r


def test_http_1_1_saves_a_round_trip_per_later_document(tmp_path):
    rows = {h: _run(ch5.Point("session", "tahoe", ch5.K_HTTP, 10.0, http=h, count=5),
                    tmp_path / h) for h in ("1.0", "1.1")}
    t10, t11 = (rows[h][SERIES_PREFIX + "total_ms"] for h in ("1.0", "1.1"))
    rtt_ms = 1e3 * model.asym_rtt(3750.0, 1000.0, 0.01, 0.01)
    # The first document costs the same; each later one about one rtt (≈ 22.3 ms) less.
    assert abs(t10[0] - t11[0]) < 0.05 * t10[0]
    saved = (t10[-1] - t10[0]) - (t11[-1] - t11[0])
    assert 0.6 * 4 * rtt_ms < saved < 1.6 * 4 * rtt_ms, (saved, rtt_ms)


def test_tahoe_collapses_past_k_equal_b_f_and_the_original_vegas_stays_at_the_uplink(tmp_path):
    thr = {(tcp, k): _run(ch5.Point("throughput", tcp, k, run_s=1.0), tmp_path / f"{tcp}{k}")
           for tcp in ("tahoe", "vegas_original") for k in (8, 12)}
    assert thr[("tahoe", 8)]["thr_norm"] > 0.7
    assert thr[("tahoe", 12)]["thr_pps"] < 0.5 * thr[("tahoe", 8)]["thr_pps"]
    # The original Vegas takes the upstream queue for congestion: its window settles near
    # what the uplink's ACK rate carries, μ_r = 1000 packets/s.
    for k in (8, 12):
        assert abs(thr[("vegas_original", k)]["thr_pps"] - 1000) < 150


def test_the_mix_draws_table_5_2_and_every_document_completes(tmp_path):
    r = _run(ch5.Point("mix", "vegas", ch5.K_HTTP, 1.0, http="1.1", count=3), tmp_path)
    assert r["documents"] == 3 * ch5.MIX_PER_SESSION and r["unfinished"] == 0
    assert 0 < r["mean_ms"] < 200
    mean_kb = sum(s * p for s, p in model.TABLE_5_2)
    assert 0.2 * mean_kb < r["mean_kb"] < 10 * mean_kb


def test_targets_evaluate_on_rows_and_say_why_they_miss():
    k = [2.0, 4.0, 8.0, 12.0]
    rows = pd.DataFrame(
        [{"experiment": "throughput", "tcp": tcp, "k": x, "thr_pps": v}
         for x, t, v, o in zip(k, (1900, 3800, 7000, 2000), (2000, 4000, 6000, 1500),
                               (900, 1000, 1000, 1000), strict=True)
         for tcp, v in (("tahoe", t), ("vegas", v), ("vegas_original", o))]
        + [{"experiment": "session", "tcp": tcp, "tau_ms": tau, "http": h, "total_ms": v}
           for tau, vals in ((0.01, (100, 95, 110, 104)), (10.0, (600, 500, 900, 800)))
           for (tcp, h), v in zip((("tahoe", "1.0"), ("tahoe", "1.1"), ("vegas", "1.0"),
                                   ("vegas", "1.1")), vals, strict=True)]
        + [{"experiment": "mix", "tcp": tcp, "tau_ms": tau, "http": "1.0", "mean_ms": v}
           for tau in (0.1, 1.0, 10.0) for tcp, v in (("tahoe", 10 + tau), ("vegas", 9 + tau))])
    got = {t.id: t for t in ch5.evaluate(rows)}
    assert got["C5-1"].measured == 8.0 and got["C5-1"].passed
    assert got["C5-2a"].measured == 4.0 and not got["C5-2a"].passed and got["C5-2a"].note
    assert math.isclose(got["C5-2b"].measured, (900 / 2000 + 0.25 + 1000 / 6000 + 1000 / 1500) / 4)
    assert math.isclose(got["C5-3a"].measured, (5 / 100 + 6 / 110) / 2)
    assert math.isclose(got["C5-3b"].measured, 300 / 100)
    assert got["C5-4"].measured == 1.0 and got["C5-4"].passed
    empty = ch5.evaluate(pd.DataFrame())
    assert all(math.isnan(t.measured) and not t.passed and t.note for t in empty)


def test_bad_points_are_refused():
    with pytest.raises(ConfigError, match="point.tcp"):
        ch5.Point("delay", "reno", 3.75)
    with pytest.raises(ConfigError, match="options.ch5.refresh"):
        ch5.Options(refresh="5ms")
