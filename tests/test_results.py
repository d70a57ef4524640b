"""RunResult: conversion of the core's columnar tables, the tidy time series and the files."""

from __future__ import annotations

import json
import math
import numpy as np
import pandas as pd
import pytest
from core_tables import core_result, num

from flowshare import results
from flowshare.results import OUTPUT_FILES, RunResult, table_to_frame

# --- table conversion -------------------------------------------------------------------------


def test_numeric_and_text_columns_keep_values_dtypes_and_order():
    frame = table_to_frame(
        {
            "flow": num([2, 0, 1], "<i8"),
            "name": ["a", "b", "c|d"],
            "goodput_bps": num([1.5e6, np.nan, 0.0]),
        }
    )
    assert list(frame.columns) == ["flow", "name", "goodput_bps"]
    assert frame["flow"].dtype == np.int64
    assert frame["goodput_bps"].dtype == np.float64
    assert frame["flow"].tolist() == [2, 0, 1]
    assert frame["name"].tolist() == ["a", "b", "c|d"]
    assert frame["goodput_bps"].iloc[0] == 1.5e6
    assert math.isnan(frame["goodput_bps"].iloc[1])


def test_big_endian_buffer_is_read_with_its_dtype():
    frame = table_to_frame({"x": (">i8", np.array([1, 256], dtype=">i8").tobytes())})
    assert frame["x"].tolist() == [1, 256]


def test_empty_table_gives_typed_empty_columns():
    frame = table_to_frame({"time_s": num([]), "flow": num([], "<i8"), "name": []})
    assert len(frame) == 0
    assert list(frame.columns) == ["time_s", "flow", "name"]
    assert frame["time_s"].dtype == np.float64
    assert frame["flow"].dtype == np.int64


def test_frame_can_be_modified_although_buffers_are_read_only():
    frame = table_to_frame({"x": num([1.0, 2.0])})
    frame.loc[0, "x"] = 5.0
    assert frame["x"].tolist() == [5.0, 2.0]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"a": num([1.0, 2.0]), "b": num([1.0])}, "differ in length"),
        ({"a": ("<f8", b"\x00" * 7)}, "flows.a: bad numeric column"),
        ({"a": ("not-a-dtype", b"")}, "flows.a: bad numeric column"),
        ({"a": 3}, "flows.a: expected a list of str"),
    ],
)
def test_malformed_tables_are_rejected_naming_the_column(table, message):
    with pytest.raises(ValueError, match=message):
        table_to_frame(table, name="flows")


def test_from_core_builds_all_four_tables(result):
    assert result.summary["seed"] == 7
    assert result.flows.shape == (2, 13)
    assert result.queues["from"].tolist() == ["r0", "r1"]
    assert len(result.flow_series) == 4
    assert result.queue_series["len_bytes"].dtype == np.int64
    assert "2 flows" in repr(result)


# --- aggregate and tidy time series -----------------------------------------------------------


def test_aggregate_figures(result):
    agg = result.aggregate()
    assert agg["flows"] == 2
    assert agg["goodput_bps"] == 3.2e6  # 400 kB delivered in 1 s
    assert agg["jain_index"] == pytest.approx(16 / (2 * 10))  # (3+1)^2 / (2 (9+1))
    assert agg["drops"] == 6  # queue drops, not flow drops
    assert agg["retransmits"] == 5
    assert agg["timeouts"] == 2


def test_jain_index_leaves_out_flows_that_never_started(result):
    result.flows["goodput_bps"] = [3.0, float("nan")]  # the second flow never started
    assert result.aggregate()["jain_index"] == 1.0
    result.flows["goodput_bps"] = [float("nan"), float("nan")]
    assert result.aggregate()["jain_index"] is None


def test_aggregate_goodput_falls_back_to_the_sum_of_rates(result):
    result.flows = result.flows.drop(columns="bytes_delivered")
    assert result.aggregate()["goodput_bps"] == 4e6


def test_timeseries_is_one_tidy_table(result):
    ts = result.timeseries()
    assert list(ts.columns) == [
        "time_s", "kind", "id",
        "cwnd", "ssthresh", "srtt_s", "send_rate_bps", "goodput_bps",
        "len_pkts", "len_bytes",
    ]  # fmt: skip
    assert len(ts) == 8
    # Sorted by time, then kind, then id.
    assert ts[["time_s", "kind", "id"]].values.tolist() == [
        [0.5, "flow", 0], [0.5, "flow", 1], [0.5, "queue", 0], [0.5, "queue", 1],
        [1.0, "flow", 0], [1.0, "flow", 1], [1.0, "queue", 0], [1.0, "queue", 1],
    ]  # fmt: skip
    flows = ts[ts["kind"] == "flow"]
    queues = ts[ts["kind"] == "queue"]
    assert flows["len_pkts"].isna().all() and flows["cwnd"].notna().all()
    assert queues["cwnd"].isna().all() and queues["len_pkts"].notna().all()
    assert flows["cwnd"].tolist() == [10.0, 4.0, 12.0, 5.0]
    assert queues["len_bytes"].tolist() == [4500.0, 0.0, 6000.0, 40.0]
    assert ts["id"].dtype == np.int64


def test_timeseries_without_samples_keeps_its_columns():
    raw = core_result()
    for key in ("flow_series", "queue_series"):
        raw[key] = {name: (col[0], b"") for name, col in raw[key].items()}
    ts = RunResult.from_core(raw, {}).timeseries()
    assert len(ts) == 0
    assert {"time_s", "kind", "id", "cwnd", "len_pkts"} <= set(ts.columns)


# --- files ------------------------------------------------------------------------------------


def test_write_produces_files_that_open(result, tmp_path):
    out = tmp_path / "out"
    written = result.write(out)
    assert written == [out / name for name in OUTPUT_FILES]
    assert sorted(p.name for p in out.iterdir()) == sorted(OUTPUT_FILES)

    flows = pd.read_csv(out / "flows.csv")
    assert flows["goodput_bps"].tolist() == [3e6, 1e6]
    assert flows["recovery"].tolist() == ["newreno", "sack"]
    assert math.isnan(flows["completion_time_s"][0])
    queues = pd.read_csv(out / "queues.csv")
    assert queues["drops"].tolist() == [6, 0]

    ts = pd.read_parquet(out / "timeseries.parquet")
    pd.testing.assert_frame_equal(ts, result.timeseries(), check_dtype=False)

    doc = json.loads((out / "summary.json").read_text())
    assert set(doc) == {"summary", "aggregate", "scenario"}
    assert doc["summary"]["events"] == 1234
    assert doc["aggregate"]["jain_index"] == pytest.approx(0.8)
    assert doc["scenario"]["flows"][0]["count"] == 2

    png = (out / "plot.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    from PIL import Image

    with Image.open(out / "plot.png") as image:
        assert image.width > 400 and image.height > 300


def test_write_with_report_embeds_the_plot(result, tmp_path):
    written = result.write(tmp_path / "out", report=True)
    assert written[-1].name == "report.md"
    text = written[-1].read_text()
    assert "](plot.png)" in text
    assert "Jain" in text and "0.8" in text
    assert "| 0 | bulk | reno | newreno | 3.000 |" in text


def test_summary_json_has_no_nan(result, tmp_path):
    result.flows["goodput_bps"] = [0.0, 0.0]  # Jain's index is undefined
    result.write(tmp_path)
    text = (tmp_path / "summary.json").read_text()
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert json.loads(text)["aggregate"]["jain_index"] is None


def test_write_is_byte_identical_for_the_same_result(result, tmp_path):
    result.write(tmp_path / "a")
    result.write(tmp_path / "b")
    for name in ("flows.csv", "queues.csv", "timeseries.parquet", "plot.png"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_plot_with_many_flows_draws_one_band_per_group_plus_the_total(tmp_path):
    # Once (matplotlib): 20 flows drawn one line each plus the aggregate, with no legend.
    n, t = 30, 5
    flow_series = {
        "time_s": num(np.repeat(np.arange(1, t + 1) * 0.1, n)),
        "flow": num(np.tile(np.arange(n), t), "<i8"),
        "cwnd": num(np.ones(n * t)),
        "send_rate_bps": num(np.full(n * t, 1e6)),
        "goodput_bps": num(np.full(n * t, 1e6)),
    }
    flows = {"flow": num(np.arange(n), "<i8"), "name": ["a"] * 10 + ["b"] * 20}
    raw = {**core_result(), "flows": flows, "flow_series": flow_series}
    d = RunResult.from_core(raw, {}).plot(tmp_path / "p.png")
    top = d["panels"][0]
    assert top["legend"] == [
        "a (10 flows): mean, band min-max",
        "b (20 flows): mean, band min-max",
        "total of 30 flows",
        "bottleneck capacity 10 Mbit/s",
    ]
    total = [s for s in top["series"] if s["name"].startswith("total")][0]
    assert total["points"] == t
    assert total["y_min"] == total["y_max"] == pytest.approx(30.0)  # 30 flows x 1 Mbit/s


# --- atomic writes ----------------------------------------------------------------------------


@pytest.mark.parametrize("error", [OSError, KeyboardInterrupt])
def test_failed_write_leaves_no_directory(result, tmp_path, monkeypatch, error):
    def boom(_result, path):
        path.write_bytes(b"\x89PNG half")
        raise error("stop")

    monkeypatch.setattr(results, "_write_plot", boom)
    out = tmp_path / "new" / "nested" / "out"
    with pytest.raises(error):
        result.write(out)
    assert list(tmp_path.iterdir()) == []  # not even the parents created for it


def test_failed_write_leaves_an_existing_directory_untouched(result, tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    (out / "flows.csv").write_text("old\n")
    (out / "notes.txt").write_text("mine\n")

    def boom(_result, path):
        path.write_text("{ half")
        raise KeyboardInterrupt

    monkeypatch.setattr(results, "_write_summary", boom)
    with pytest.raises(KeyboardInterrupt):
        result.write(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert sorted(p.name for p in out.iterdir()) == ["flows.csv", "notes.txt"]
    assert (out / "flows.csv").read_text() == "old\n"


def test_write_into_existing_directory_replaces_only_its_files(result, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "flows.csv").write_text("old\n")
    (out / "notes.txt").write_text("mine\n")
    result.write(out)
    assert (out / "notes.txt").read_text() == "mine\n"
    assert (out / "flows.csv").read_text().startswith("flow,name,")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_write_onto_a_file_is_an_error(result, tmp_path):
    target = tmp_path / "out"
    target.write_text("x")
    with pytest.raises(NotADirectoryError, match="not a directory"):
        result.write(target)
    assert target.read_text() == "x"
    assert list(tmp_path.iterdir()) == [target]


def test_new_output_directory_has_ordinary_permissions(result, tmp_path):
    probe = tmp_path / "probe"
    probe.mkdir()
    result.write(tmp_path / "out")
    assert (tmp_path / "out").stat().st_mode & 0o777 == probe.stat().st_mode & 0o777
