"""Connections opened while the run goes on, seen from Python: the per-transfer table, the file
it is written to, and trace files found next to their scenario."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import flowshare
from flowshare import ConfigError

SCENARIO = """
[simulation]
duration = "20s"
seed = 2

[topology]
kind = "dumbbell"
bottleneck = {{ rate = "20Mbps", delay = "10ms", queue = {{ limit = 100 }} }}
access = {{ rate = "1Gbps", delay = "1ms" }}

[[flows]]
name = "bulk"

[[flows]]
name = "web"
[flows.arrivals]
{arrivals}
"""

POISSON = 'process = "poisson"\nrate = 10\nsize = { dist = "exponential", mean = "30KB" }'

COLUMNS = [
    "transfer",
    "name",
    "user",
    "start_s",
    "size_bytes",
    "completion_time_s",
    "goodput_bps",
    "packets_sent",
    "retransmits",
    "timeouts",
    "drops",
    "initial_cwnd",
    "initial_ssthresh",
    "initial_srtt_s",
    "initial_rttvar_s",
    "rtt_min_s",
    "sent_bytes",
    "session",
    "document",
]

IW = 3.0
"""The default ``tcp.initial_window``, segments."""


def write_scenario(tmp_path: Path, arrivals: str) -> Path:
    path = tmp_path / "web.toml"
    path.write_text(SCENARIO.format(arrivals=arrivals), encoding="utf-8")
    return path


def test_the_transfer_table_has_one_row_per_transfer(tmp_path: Path) -> None:
    result = flowshare.run(write_scenario(tmp_path, POISSON), progress=False)
    t = result.transfers
    assert list(t.columns) == COLUMNS
    # 10 per second for 20 s: about 200 (a Poisson count, sd about 14).
    assert 140 < len(t) < 260
    assert t["transfer"].is_unique and (t["transfer"] >= 1).all(), "the listed flow is flow 0"
    assert isinstance(t["name"].dtype, pd.CategoricalDtype) and set(t["name"]) == {"web"}
    done = t.dropna(subset=["completion_time_s"])
    assert len(done) >= len(t) - 10
    expected = done["size_bytes"] * 8 / done["completion_time_s"]
    assert (done["goodput_bps"] - expected).abs().max() < 1e-6 * expected.max()
    # Only the listed flow is in the flow table.
    assert result.flows["name"].tolist() == ["bulk"]
    # Plain transfers start from the configured window (the default initial window), with no
    # RTT estimate and an unbounded ssthresh; completed ones sent every byte.
    assert (t["initial_cwnd"] == IW).all()
    assert t["initial_ssthresh"].isna().all() and t["initial_srtt_s"].isna().all()
    assert t["initial_rttvar_s"].isna().all()
    assert (done["sent_bytes"] == done["size_bytes"]).all()
    # The smallest RTT sample: at least the 24 ms of propagation.
    assert (done["rtt_min_s"] >= 0.024).all() and (done["rtt_min_s"] < 0.2).all()


def test_write_adds_transfers_parquet(tmp_path: Path) -> None:
    result = flowshare.run(write_scenario(tmp_path, POISSON), progress=False)
    files = result.write(tmp_path / "out")
    assert tmp_path / "out" / "transfers.parquet" in files
    back = pd.read_parquet(tmp_path / "out" / "transfers.parquet")
    assert len(back) == len(result.transfers)
    # A run without arrivals writes no such file.
    plain = flowshare.run(_plain(tmp_path), progress=False)
    names = {p.name for p in plain.write(tmp_path / "plain")}
    assert "transfers.parquet" not in names and plain.transfers.empty


def _plain(tmp_path: Path) -> Path:
    path = tmp_path / "plain.toml"
    text = SCENARIO.format(arrivals="").split('[[flows]]\nname = "web"')[0]
    path.write_text(text, encoding="utf-8")
    return path


def test_a_trace_file_is_read_next_to_its_scenario(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "trace.csv").write_text("start,size\n1s,20KB\n2.5,5000\n", encoding="utf-8")
    path = write_scenario(tmp_path, 'process = "trace"\nfile = "trace.csv"')
    monkeypatch.chdir(tmp_path.parent)
    t = flowshare.run(path, progress=False).transfers.sort_values("start_s")
    assert t["start_s"].tolist() == [1.0, 2.5]
    assert t["size_bytes"].tolist() == [20_000, 5000]
    # Relative to the working directory when the scenario is a mapping: not found here.
    assert Path(os.getcwd()) != tmp_path
    link = {"rate": "10Mbps", "delay": "1ms"}
    mapping = {
        "simulation": {"duration": "1s"},
        "topology": {"kind": "dumbbell", "bottleneck": link, "access": link},
        "flows": [
            {"name": "a"},
            {"name": "t", "arrivals": {"process": "trace", "file": "trace.csv"}},
        ],
    }
    with pytest.raises(ConfigError, match=r'^flows\[1\]\.arrivals\.file: cannot read "trace\.csv"'):
        flowshare.validate(mapping)


def test_mistakes_name_the_field(tmp_path: Path) -> None:
    arrivals = 'process = "closed_loop"\nusers = 0\nthink = "1s"\nsize = "1KB"'
    path = write_scenario(tmp_path, arrivals)
    message = r"web\.toml: flows\[1\]\.arrivals\.users: must be at least 1$"
    with pytest.raises(ConfigError, match=message):
        flowshare.validate(path)


def test_the_cli_writes_the_transfer_table(tmp_path: Path) -> None:
    from flowshare import cli

    path = write_scenario(tmp_path, POISSON)
    assert cli.main(["run", str(path), "--out", str(tmp_path / "o"), "--no-progress"]) == 0
    assert (tmp_path / "o" / "transfers.parquet").is_file()


def test_sessions_of_pages_from_python(tmp_path: Path) -> None:
    arrivals = (
        'process = "sessions"\nsources = 2\nmodel = "reyes_lecuona"\n'
        'think = "1s"\nsession_gap = "2s"\npages = 4'
    )
    result = flowshare.run(write_scenario(tmp_path, arrivals), progress=False)
    t = result.transfers
    assert set(t["user"]) == {0, 1}, "the sources, numbered in their group"
    assert (t["size_bytes"] >= 30_458).all(), "the preset's Pareto page sizes"
    for _, pages in t.sort_values("start_s").groupby("user"):
        end = (pages["start_s"] + pages["completion_time_s"]).to_numpy()
        pauses = pages["start_s"].to_numpy()[1:] - end[:-1]
        # Sessions of 4 pages: three 1 s reading times, then a 2 s session gap.
        assert len(pauses) >= 4
        assert all(abs(p - (2.0 if k % 4 == 3 else 1.0)) < 1e-6 for k, p in enumerate(pauses))
    arr = result.scenario["flows"][1]["arrivals"]
    assert arr["pages"] == 4 and arr["pages_rounding"] == "nearest"
    assert arr["size"] == {"dist": "pareto", "shape": 1.7584, "scale": "30458B"}


def test_sessions_mistakes_name_the_field(tmp_path: Path) -> None:
    path = write_scenario(tmp_path, 'process = "sessions"\nmodel = "reyes_lecuona"\npages = 0')
    message = r"web\.toml: flows\[1\]\.arrivals\.pages: must be greater than 0, got 0$"
    with pytest.raises(ConfigError, match=message):
        flowshare.validate(path)


def test_the_concurrency_table(tmp_path: Path) -> None:
    path = write_scenario(tmp_path, POISSON)
    path.write_text(path.read_text(encoding="utf-8") + '[trace]\nconcurrency = ["web"]\n',
                    encoding="utf-8")
    result = flowshare.run(path, progress=False)
    c = result.concurrency
    assert c is not None and list(c.columns) == ["time_s", "transfer", "sent_bytes", "acked_bytes"]
    t = result.transfers.set_index("transfer")
    # One row at each opening (the opening transfer with nothing sent) and completion, for every
    # transfer open then: at least two rows per transfer, one more per transfer it overlapped.
    assert len(c) >= 2 * len(t)
    assert c["time_s"].is_monotonic_increasing
    assert (c["acked_bytes"] <= c["sent_bytes"]).all()
    assert set(c["transfer"]) == set(t.index)
    first = c.groupby("transfer").first()
    assert (first["sent_bytes"] == 0).all() and (first["acked_bytes"] == 0).all()
    assert np.allclose(first["time_s"], t.loc[first.index, "start_s"])
    done = t.dropna(subset=["completion_time_s"])
    last = c.groupby("transfer").last().loc[done.index]
    assert (last["acked_bytes"] == done["size_bytes"]).all()
    assert np.allclose(last["time_s"], done["start_s"] + done["completion_time_s"])
    # Written next to the other tables, in the transfers' format.
    files = {p.name for p in result.write(tmp_path / "out")}
    assert "concurrency.parquet" in files
    back = pd.read_parquet(tmp_path / "out" / "concurrency.parquet")
    pd.testing.assert_frame_equal(back, c)
    # By name too, as any other table (both arrive from the core in slices).
    pd.testing.assert_frame_equal(result.table("concurrency"), c)
    pd.testing.assert_frame_equal(result.table("transfers"), result.transfers)
    # Without the option: no table, no file.
    plain = flowshare.run(write_scenario(tmp_path, POISSON), progress=False)
    assert plain.concurrency is None
    assert "concurrency.parquet" not in {p.name for p in plain.write(tmp_path / "plain")}


def test_concurrency_names_groups_with_arrivals(tmp_path: Path) -> None:
    path = write_scenario(tmp_path, POISSON)
    text = path.read_text(encoding="utf-8")
    for names, message in [
        ('["webb"]', r'trace\.concurrency\[0\]: no flow group is named "webb"; '
                     r'give groups with arrivals: "web"$'),
        ('["web", "bulk"]', r'trace\.concurrency\[1\]: flow group "bulk" has no arrivals, so it '
                            r'opens no transfers; give groups with arrivals: "web"$'),
    ]:
        path.write_text(text + f"[trace]\nconcurrency = {names}\n", encoding="utf-8")
        with pytest.raises(ConfigError, match=message):
            flowshare.validate(path)
