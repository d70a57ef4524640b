"""One-way delay histograms, flow-completion times and the warm-up, seen from Python: the
accessors of a result, the files a run writes and the aggregate figures."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import flowshare
from flowshare import ConfigError
from flowshare.results import OUTPUT_FILES

# 100 Mbps / 2 ms access links, a 10 Mbps / 10 ms bottleneck: a 1028-byte CBR packet crosses
# the empty path in 14 ms + 2 * 82.24 us + 822.4 us = 14.98688 ms.
SCENARIO = """
[simulation]
duration = "3s"
seed = 4
{warmup}

[topology]
kind = "dumbbell"
bottleneck = {{ rate = "10Mbps", delay = "10ms", queue = {{ limit = 60 }} }}
access = {{ rate = "100Mbps", delay = "2ms", queue = {{ limit = 10000 }} }}

[[flows]]
name = "cbr"
transport = "udp"
source = {{ kind = "cbr", rate = "1Mbps" }}

[[flows]]
name = "bulk"
start = "0.5s"

[[flows]]
name = "file"
size = "50KB"
start = "1.5s"
"""

OWD = 0.01498688


def scenario(tmp_path: Path, warmup: str = "") -> Path:
    path = tmp_path / "delay.toml"
    path.write_text(SCENARIO.format(warmup=warmup), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> flowshare.RunResult:
    return flowshare.run(scenario(tmp_path_factory.mktemp("delay")), progress=False)


def test_delay_histogram_table(result) -> None:
    d = result.delays
    assert list(d.columns) == ["flow", "bin_lo_s", "bin_hi_s", "count"]
    assert d["flow"].dtype == np.int64 and d["count"].dtype == np.int64
    assert (d["bin_hi_s"] > d["bin_lo_s"]).all()
    # Bins are at most 1/32 of their lower bound wide (values below 64 ns have bins of 1 ns).
    assert ((d["bin_hi_s"] - d["bin_lo_s"]) <= d["bin_lo_s"] / 32 + 1e-12).all()
    counts = d.groupby("flow")["count"].sum()
    flows = result.flows.set_index("flow")
    for flow, n in counts.items():
        assert n == flows.loc[flow, "delay_packets"] == flows.loc[flow, "packets_received"]
    # The CBR flow's delays: never below the empty path, and queueing behind TCP in the tail.
    cbr = result.flows.iloc[0]
    assert cbr["delay_min_s"] >= OWD - 1e-12
    assert cbr["delay_min_s"] <= cbr["delay_p50_s"] <= cbr["delay_p95_s"] <= cbr["delay_p99_s"]
    assert cbr["delay_p99_s"] <= cbr["delay_max_s"]
    assert cbr["delay_p99_s"] > OWD + 0.02
    assert cbr["jitter_s"] > 0 and cbr["ipdv_mean_s"] > 0


def test_percentile_lies_in_its_bin(result) -> None:
    d = result.delays[result.delays["flow"] == 0]
    n = int(d["count"].sum())
    rank = math.ceil(0.99 * n)
    row = d[d["count"].cumsum() >= rank].iloc[0]
    p99 = result.flows.iloc[0]["delay_p99_s"]
    assert row["bin_lo_s"] - 1e-12 <= p99 <= row["bin_hi_s"] + 1e-12


def test_fct_summary(result) -> None:
    f = result.fct
    assert list(f.columns) == [
        "group", "name", "size_bucket", "size_min_bytes", "size_max_bytes", "transfers",
        "unfinished", "fct_mean_s", "fct_min_s", "fct_p50_s", "fct_p90_s", "fct_p99_s",
        "fct_max_s",
    ]  # fmt: skip
    assert f["size_bucket"].tolist() == ["all", "10kB-100kB"]
    assert f["name"].tolist() == ["file", "file"]
    assert (f["transfers"] == 1).all() and (f["unfinished"] == 0).all()
    fct = result.flows.iloc[2]["completion_time_s"]
    for col in ("fct_mean_s", "fct_min_s", "fct_p50_s", "fct_p99_s", "fct_max_s"):
        assert f[col].tolist() == pytest.approx([fct, fct], rel=1e-12)


def test_run_writes_delays_and_fct_files(result, tmp_path: Path) -> None:
    out = tmp_path / "out"
    written = result.write(out)
    assert [p.name for p in written] == list(OUTPUT_FILES)
    assert {"delays.csv", "fct.csv"} <= set(OUTPUT_FILES)
    delays = pd.read_csv(out / "delays.csv")
    pd.testing.assert_frame_equal(delays, result.delays, check_dtype=False)
    fct = pd.read_csv(out / "fct.csv")
    assert fct["transfers"].tolist() == [1, 1]
    flows = pd.read_csv(out / "flows.csv")
    for col in ("delay_p99_s", "jitter_s", "loss_rate", "steady_bytes_delivered"):
        assert col in flows


def test_cli_run_writes_the_new_files(tmp_path: Path) -> None:
    from flowshare.cli import main

    out = tmp_path / "out"
    assert main(["run", str(scenario(tmp_path, 'warmup = "1s"')), "--out", str(out)]) == 0
    assert (out / "delays.csv").is_file() and (out / "fct.csv").is_file()
    # The transfer starts after the warm-up: it is in the summary.
    assert pd.read_csv(out / "fct.csv")["transfers"].tolist() == [1, 1]


def test_warmup_steady_state_figures(tmp_path: Path) -> None:
    plain = flowshare.run(scenario(tmp_path), progress=False)
    warm = flowshare.run(scenario(tmp_path, 'warmup = "1s"'), progress=False)
    assert warm.summary["warmup_s"] == 1.0 and plain.summary["warmup_s"] == 0.0
    # Whole-run counts and time series are unchanged; steady-state figures are not.
    pd.testing.assert_series_equal(plain.flows["packets_received"], warm.flows["packets_received"])
    pd.testing.assert_frame_equal(plain.flow_series, warm.flow_series)
    assert warm.delays["count"].sum() < plain.delays["count"].sum()
    bulk_plain, bulk_warm = plain.flows.iloc[1], warm.flows.iloc[1]
    assert bulk_warm["steady_bytes_delivered"] < bulk_plain["steady_bytes_delivered"]
    assert bulk_plain["steady_bytes_delivered"] == bulk_plain["bytes_delivered"]
    # The aggregate goodput is over the 2 s after the warm-up.
    total = warm.flows["steady_bytes_delivered"].sum() * 8 / 2.0
    assert warm.aggregate()["goodput_bps"] == pytest.approx(total)
    assert warm.queues["utilization"][0] != plain.queues["utilization"][0]


def test_warmup_must_be_shorter_than_the_run(tmp_path: Path) -> None:
    too_long = r"simulation\.warmup: must be less than simulation\.duration \(3s\), got 3s$"
    with pytest.raises(ConfigError, match=too_long):
        flowshare.run(scenario(tmp_path, 'warmup = "3s"'), progress=False)
    # A string needs its unit (a plain number is seconds, as everywhere).
    for bad in ('"10"', '"1 parsec"', "-1"):
        with pytest.raises(ConfigError, match=r"simulation\.warmup: "):
            flowshare.run(scenario(tmp_path, f"warmup = {bad}"), progress=False)


def test_results_built_by_hand_have_empty_tables() -> None:
    from core_tables import core_result

    r = flowshare.RunResult.from_core(core_result(), {})
    assert r.delays.empty and list(r.delays.columns) == ["flow", "bin_lo_s", "bin_hi_s", "count"]
    assert r.fct.empty and "fct_p99_s" in r.fct


def test_scenario_builder_takes_a_warmup() -> None:
    from flowshare import scenario as sc

    doc = sc.dumbbell(
        bottleneck=sc.link(rate="10Mbps", delay="10ms"),
        access=sc.link(rate="100Mbps", delay="2ms"),
        flows=sc.flows(name="bulk"),
        duration="2s",
        warmup="0.5s",
    )
    assert doc["simulation"]["warmup"] == "0.5s"
    result = flowshare.run(doc, progress=False)
    assert result.summary["warmup_s"] == 0.5


def test_report_states_the_warmup(tmp_path: Path) -> None:
    warm = flowshare.run(scenario(tmp_path, 'warmup = "1s"'), progress=False)
    written = warm.write(tmp_path / "out", report=True)
    assert "warm-up: the first 1 s" in written[-1].read_text()
