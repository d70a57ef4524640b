"""``flowshare report DIR``: the HTML page, its plots, its numbers and its errors.

Most tests build a run store with synthetic numbers (``write_store``, in the layout
``flowshare sweep`` writes); one runs three tiny real simulations into the layout.
"""

from __future__ import annotations

import base64
import copy
import json
import re
import tomllib
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from core_tables import TINY_TOML

from flowshare import cli, sim
from flowshare.study import report, stats

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def write_store(
    root: Path,
    arms: list[dict[str, Any]],
    value: Callable[[dict[str, Any], int], dict[str, float]],
    *,
    replications: int = 3,
    failed: dict[tuple[int, int], str] | None = None,
    common_seeds: bool = False,
    definitions: dict[str, dict[str, Any]] | None = None,
) -> Path:
    """A run store: ``arms`` are parameter dicts, ``value(params, replication)`` the responses.

    ``failed`` maps (arm, replication) to an error message; those runs have no responses.
    """
    failed = failed or {}
    parameters = list(arms[0])
    responses = list(value(arms[0], 0))
    root.mkdir(parents=True)
    sweep = {"parameters": parameters, "responses": responses, "replications": replications,
             "design": {"kind": "grid"}, "root_seed": 42, "version": "0.1.0"}  # fmt: skip
    if definitions:
        sweep["response_definitions"] = definitions
    (root / "sweep.json").write_text(json.dumps(sweep), encoding="utf-8")
    catalog, done = [], []
    for arm, params in enumerate(arms):
        for rep in range(replications):
            run_id = f"a{arm:03d}-r{rep:02d}"
            seed = 1000 + rep if common_seeds else 1000 + 10 * arm + rep
            error = failed.get((arm, rep))
            status = "failed" if error else "done"
            catalog.append({"run_id": run_id, "arm": arm, "replication": rep, "seed": seed,
                            "scenario_hash": f"h{arm}", "version": "0.1.0", "status": status,
                            "started_at": "2026-11-24T18:00:00Z", "wall_s": 0.5,
                            "error": error, **params})  # fmt: skip
            (root / "runs" / run_id).mkdir(parents=True)
            if not error:
                done.append({"run_id": run_id, "arm": arm, "replication": rep, "seed": seed,
                             **params, **value(params, rep)})  # fmt: skip
    pd.DataFrame(catalog).to_parquet(root / "catalog.parquet")
    pd.DataFrame(done).to_parquet(root / "responses.parquet")
    return root


def noisy(params: dict[str, Any], rep: int) -> dict[str, float]:
    rate = float(params["bottleneck.rate_mbps"])
    return {"goodput_mbps": 0.9 * rate + [0.1, -0.2, 0.15][rep],
            "drops": 100.0 / rate + [1.0, 3.0, 2.0][rep]}  # fmt: skip


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("flowshare: error: "), err
    return lines[0]


def inlined_images(text: str) -> list[bytes]:
    return [base64.b64decode(m) for m in re.findall(r'src="data:image/png;base64,([^"]+)"', text)]


@pytest.fixture
def one_factor(tmp_path: Path) -> Path:
    arms = [{"bottleneck.rate_mbps": r} for r in (2, 5, 10, 20)]
    return write_store(tmp_path / "sweep", arms, noisy, failed={(3, 2): "ConfigError: boom\nx"})


def test_report_is_self_contained_and_plots_are_written_as_png(one_factor, capsys):
    assert cli.main(["report", str(one_factor)]) == 0
    out = capsys.readouterr().out
    html_path = one_factor / "report" / "report.html"
    assert f"report: {html_path}" in out
    text = html_path.read_text(encoding="utf-8")
    # Self-contained: no external references of any kind.
    assert not re.search(r'(src|href)="(?!data:)', text)
    assert "<script" not in text and "<link" not in text
    pngs = sorted(p for p in (one_factor / "report").iterdir() if p.suffix == ".png")
    assert [p.name for p in pngs] == ["drops_vs_bottleneck.rate_mbps.png",
                                      "goodput_mbps_vs_bottleneck.rate_mbps.png", "pca.png"]
    images = inlined_images(text)
    assert sorted(images) == sorted(p.read_bytes() for p in pngs)
    assert all(data.startswith(PNG_MAGIC) for data in images)


def test_report_tables_hold_mean_and_t_interval_per_arm(one_factor):
    report.write_report(one_factor)
    text = (one_factor / "report" / "report.html").read_text(encoding="utf-8")
    # Sweep facts and status counts, with the failed run's error on one line.
    assert "<th>replications</th><td>3</td>" in text
    assert "<td>done</td><td class=\"num\">11</td>" in text
    assert "<td>failed</td><td class=\"num\">1</td>" in text
    assert "a003-r02" in text and "ConfigError: boom\nx" in text
    # Arm 1 (5 Mbit/s): goodput 4.6, 4.3, 4.65 -> mean and 95 % t interval.
    s = stats.summarize([4.6, 4.3, 4.65])
    row = re.search(r"<tr><td>1</td><td>5</td><td class=\"num\">3</td>(.*?)</tr>", text)
    assert row is not None
    cells = re.findall(r">([^<]*)</td>", row.group(1))
    # Four significant digits are printed.
    assert float(cells[0]) == pytest.approx(s.mean, rel=2e-4)
    assert float(cells[1]) == pytest.approx(s.half_width, rel=2e-4)
    assert (float(cells[2]), float(cells[3])) == pytest.approx((s.low, s.high), rel=2e-4)
    # The arm with a failed run has n = 2.
    assert re.search(r"<tr><td>3</td><td>20</td><td class=\"num\">2</td>", text)


def test_same_store_gives_byte_identical_reports(one_factor, tmp_path):
    first = report.write_report(one_factor, tmp_path / "r1")
    second = report.write_report(one_factor, tmp_path / "r2")
    assert [p.name for p in first] == [p.name for p in second]
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name


def test_two_arms_with_common_seeds_get_unpaired_and_paired_comparisons(tmp_path):
    arms = [{"tcp.cc": "newreno"}, {"tcp.cc": "cubic"}]

    def value(params: dict[str, Any], rep: int) -> dict[str, float]:
        base = [50.0, 70.0, 90.0, 60.0][rep]  # large common variation across seeds
        gain = 2.0 + [0.01, -0.01, 0.02, -0.02][rep] if params["tcp.cc"] == "cubic" else 0.0
        return {"goodput": base + gain + 0.1 * rep}

    store = write_store(tmp_path / "s", arms, value, replications=4, common_seeds=True)
    report.write_report(store)
    text = (store / "report" / "report.html").read_text(encoding="utf-8")
    assert "Comparison of the two arms" in text
    unpaired = stats.unpaired_t([50, 70.1, 90.2, 60.3], [52.01, 72.09, 92.22, 62.28])
    assert unpaired.sign == 0
    assert re.search(r"<td>unpaired</td><td>-2</td><td>0.90</td>.*?"
                     r"not distinguishable", text)
    # Pairing removes the common variation: arm 0 − arm 1 = −2 ± 0.02, significant at 0.99;
    # the arms are named by their parameter values.
    assert "Difference cc=newreno − cc=cubic" in text
    assert re.search(r"<td>paired \(same seeds\)</td><td>-2</td><td>0.99</td>.*?"
                     r"cc=cubic larger", text)
    assert "goodput_by_arm.png" in {p.name for p in (store / "report").iterdir()}


def test_two_parameters_give_a_heatmap_and_lines(tmp_path):
    arms = [{"bottleneck.rate_mbps": r, "queue.kind": q} for q in ("droptail", "red")
            for r in (2, 5, 10)]  # fmt: skip

    def value(params: dict[str, Any], rep: int) -> dict[str, float]:
        bonus = 0.5 if params["queue.kind"] == "red" else 0.0
        return {"goodput": params["bottleneck.rate_mbps"] * 0.9 - bonus + 0.05 * rep}

    store = write_store(tmp_path / "s", arms, value, definitions={
        "goodput": {"table": "flows", "column": "goodput_bps", "better": "higher"}})
    files = report.write_report(store, rank_by="queue.kind")
    names = {p.name for p in files}
    assert {"goodput_heatmap.png", "goodput_vs_bottleneck.rate_mbps.png"} <= names
    assert {"ranks_queue.kind_droptail.png", "ranks_queue.kind_red.png"} <= names
    text = files[0].read_text(encoding="utf-8")
    # droptail beats red in every condition; higher goodput is better, so droptail ranks 1
    # and red 2 (std over one response nan).
    assert "Rank matrices of queue.kind" in text
    assert re.search(r"<td>mean rank goodput</td><td class=\"num\">1</td>"
                     r"<td class=\"num\">2</td>", text)


def test_undefined_and_constant_responses_plot_without_warnings(tmp_path):
    # A response that is nan in every run (Jain's index with a UDP flow, say) keeps its row
    # and column in the heatmap; a constant one gets a usable colour scale.
    arms = [{"a": a, "b": b} for a in (1, 2, 3) for b in ("x", "y")]

    def value(params: dict[str, Any], rep: int) -> dict[str, float]:
        return {"undefined": float("nan"), "constant": 4.0, "varying": params["a"] + 0.1 * rep}

    store = write_store(tmp_path / "s", arms, value)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        files = report.write_report(store)
    names = {p.name for p in files}
    assert {"undefined_heatmap.png", "constant_heatmap.png", "varying_heatmap.png"} <= names


def test_rank_by_an_unknown_parameter_is_one_line(one_factor, capsys):
    assert cli.main(["report", str(one_factor), "--rank-by", "nope"]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "--rank-by: 'nope' is not a parameter of the sweep; parameters: " in line
    assert not (one_factor / "report").exists()


# --- broken stores ----------------------------------------------------------------------------


def _corrupt_catalog(root: Path) -> None:
    (root / "catalog.parquet").write_bytes(b"PAR1 this is not parquet")


def _drop_response_column(root: Path) -> None:
    frame = pd.read_parquet(root / "responses.parquet").drop(columns=["drops"])
    frame.to_parquet(root / "responses.parquet")


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (lambda r: (r / "sweep.json").unlink(), "sweep.json: missing; is "),
        (lambda r: (r / "sweep.json").write_text("{oops"), "sweep.json: not valid JSON"),
        (lambda r: (r / "sweep.json").write_text('{"parameters": "x", "responses": []}'),
         "sweep.json: 'parameters' must be a list of names, got 'x'"),
        (lambda r: (r / "catalog.parquet").unlink(), "catalog.parquet: missing"),
        (_corrupt_catalog, "catalog.parquet: not a readable Parquet file"),
        (lambda r: (r / "responses.parquet").unlink(),
         "responses.parquet: missing although 11 runs are done"),
        (_drop_response_column, "responses.parquet: no 'drops' column"),
    ],
)
def test_broken_store_gets_one_line_naming_what_is_wrong(one_factor, capsys, damage, expected):
    damage(one_factor)
    assert cli.main(["report", str(one_factor)]) == 1
    assert expected in one_error_line(capsys.readouterr().err)
    assert not (one_factor / "report").exists()


def test_missing_store_directory(tmp_path, capsys):
    assert cli.main(["report", str(tmp_path / "nowhere")]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert line == f"flowshare: error: {tmp_path / 'nowhere'}: no such run store directory"
    assert not (tmp_path / "nowhere").exists()


def test_report_is_never_half_written(one_factor, monkeypatch):
    report.write_report(one_factor)
    before = {p.name: p.read_bytes() for p in (one_factor / "report").iterdir()}
    calls = {"n": 0}
    real = Path.write_bytes

    def failing_write(self: Path, data: bytes) -> int:
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", failing_write)
    # A changed store, interrupted while its second plot is written: the old report stays.
    frame = pd.read_parquet(one_factor / "responses.parquet")
    frame["goodput_mbps"] += 1.0
    frame.to_parquet(one_factor / "responses.parquet")
    with pytest.raises(KeyboardInterrupt):
        report.write_report(one_factor)
    after = {p.name: p.read_bytes() for p in (one_factor / "report").iterdir()}
    assert after == before
    assert [p.name for p in one_factor.iterdir() if p.name.startswith(".")] == []


def test_store_without_finished_runs_still_reports_the_failures(tmp_path):
    arms = [{"x": 1}, {"x": 2}]
    failed = {(a, r): f"crash {a}{r}" for a in range(2) for r in range(2)}
    store = write_store(tmp_path / "s", arms, lambda p, r: {"y": 1.0}, replications=2,
                        failed=failed)
    (store / "responses.parquet").unlink()
    files = report.write_report(store)
    text = files[0].read_text(encoding="utf-8")
    assert "No finished runs" in text and "crash 11" in text
    assert files[1:] == []


# --- real simulations -------------------------------------------------------------------------


def test_report_of_three_real_tiny_runs(tmp_path):
    base = tomllib.loads(TINY_TOML)
    root = tmp_path / "real"
    catalog, done = [], []
    plan = [(0, 0, "5Mbps"), (0, 1, "5Mbps"), (1, 0, "10Mbps")]
    for arm, rep, rate in plan:
        scenario = copy.deepcopy(base)
        scenario["topology"]["bottleneck"]["rate"] = rate
        seed = 10 + rep
        result = sim.run(scenario, seed=seed, progress=False)
        run_id = f"a{arm}-r{rep}"
        run_dir = root / "runs" / run_id
        run_dir.mkdir(parents=True)
        result.write_into(run_dir)
        agg = result.aggregate()
        summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
        catalog.append({"run_id": run_id, "arm": arm, "replication": rep, "seed": seed,
                        "scenario_hash": summary.get("scenario_hash"), "status": "done",
                        "version": summary.get("version"), "wall_s": summary.get("wall_s"),
                        "error": None, "topology.bottleneck.rate": rate})  # fmt: skip
        done.append({"run_id": run_id, "arm": arm, "replication": rep, "seed": seed,
                     "topology.bottleneck.rate": rate,
                     "goodput_mbps": agg["goodput_bps"] / 1e6,
                     "jain_index": agg["jain_index"], "drops": float(agg["drops"])})  # fmt: skip
    sweep = {"parameters": ["topology.bottleneck.rate"],
             "responses": ["goodput_mbps", "jain_index", "drops"], "replications": 2,
             "design": {"kind": "list"}, "root_seed": 10, "version": "test"}  # fmt: skip
    (root / "sweep.json").write_text(json.dumps(sweep), encoding="utf-8")
    pd.DataFrame(catalog).to_parquet(root / "catalog.parquet")
    pd.DataFrame(done).to_parquet(root / "responses.parquet")

    goodput = pd.DataFrame(done).set_index("run_id")["goodput_mbps"]
    # Physics: goodput stays below the bottleneck rate and the faster link carries more.
    assert 0 < goodput["a0-r0"] < 5 and 0 < goodput["a0-r1"] < 5
    assert goodput["a0-r0"] < goodput["a1-r0"] < 10

    files = report.write_report(root)
    text = files[0].read_text(encoding="utf-8")
    assert "<h2>goodput_mbps</h2>" in text and "10Mbps" in text
    # The runs' stored time series are overlaid, one line per arm.
    names = {p.name for p in files}
    assert {"goodput_bps_over_time.png", "cwnd_over_time.png"} <= names
    assert "<h2>Time series</h2>" in text
    mean = np.mean([goodput["a0-r0"], goodput["a0-r1"]])
    assert f"{mean:.4g}" in text
    assert {p.name for p in files[1:]} >= {"goodput_mbps_by_arm.png"}
    assert all(p.read_bytes().startswith(PNG_MAGIC) for p in files[1:])


def test_plot_helpers_draw_what_they_are_given():
    from flowshare.study import plots

    data = pd.DataFrame({"load": ["low", "low", "high", "high"], "cc": ["reno", "cubic"] * 2,
                         "mean": [1.0, 2.0, 3.0, 4.0], "low": [0.5, 1.5, 2.5, 3.5],
                         "high": [1.5, 2.5, 3.5, 4.5]})  # fmt: skip
    fig = plots.grouped_bars(data, group="load", hue="cc")
    bars = fig.axes[0].patches
    assert [b.get_height() for b in bars] == [1.0, 3.0, 2.0, 4.0]  # reno bars, then cubic
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["low", "high"]
    matrix = pd.DataFrame([[1.0, np.nan], [2.0, 3.0]], index=["a", "b"], columns=["u", "v"])
    texts = [t.get_text() for t in plots.heatmap(matrix).axes[0].texts]
    assert texts == ["1", "2", "3"]
    ranks_fig = plots.rank_matrix(matrix.fillna(1.5), separators=["v"])
    assert [t.get_text() for t in ranks_fig.axes[0].texts] == ["1", "1.5", "2", "3"]
    line = pd.DataFrame({"x": [3, 1, 2], "mean": [3.0, 1.0, 2.0], "low": [2.5, 0.5, 1.5],
                         "high": [3.5, 1.5, 2.5]})  # fmt: skip
    ax = plots.lines_with_bands(line, x="x").axes[0]
    assert ax.lines[0].get_xdata().tolist() == [1, 2, 3]


def test_report_warns_when_an_arms_replications_are_identical(tmp_path):
    def same_in_arm_1(params: dict[str, Any], rep: int) -> dict[str, float]:
        rate = float(params["bottleneck.rate_mbps"])
        spread = 0.0 if rate == 5 else [0.1, -0.2, 0.15][rep]
        return {"goodput_mbps": 0.9 * rate + spread, "drops": 10.0}

    arms = [{"bottleneck.rate_mbps": r} for r in (2, 5)]
    root = write_store(tmp_path / "sweep", arms, same_in_arm_1)
    text = report.write_report(root)[0].read_text(encoding="utf-8")
    warning = re.search(r'<p class="warning">(.*?)</p>', text)
    assert warning is not None
    assert "replications of arm 1 are identical" in warning.group(1)
    # An arm whose replications vary in any response is not named.
    assert "arm 0" not in warning.group(1)
    noisy_text = report.write_report(write_store(tmp_path / "noisy", arms, noisy))[0].read_text()
    assert 'class="warning"' not in noisy_text


# --- units, labels, sections, intervals, outliers, directions ---------------------------------


def figures_of(monkeypatch) -> list[Any]:
    """Capture every figure the report draws (after it is drawn)."""
    captured: list[Any] = []
    original = report._Page.figure

    def figure(self, fig, name, caption):
        out = original(self, fig, name, caption)
        captured.append((name, fig))
        return out

    monkeypatch.setattr(report._Page, "figure", figure)
    return captured


def test_rates_are_shown_in_mbit_s_without_an_offset(tmp_path, monkeypatch):
    # Goodput near 10 Mbit/s that varies in the fourth digit: matplotlib's default ticks
    # would read "+9.99e6" or "1e7" above the axis.
    arms = [{"topology.bottleneck.queue.limit": q} for q in (20, 40, 80)]

    def value(params: dict[str, Any], rep: int) -> dict[str, float]:
        return {"goodput_bps": 9.99e6 + 1e3 * params["topology.bottleneck.queue.limit"]
                + 500.0 * rep}

    store = write_store(tmp_path / "s", arms, value)
    figures = figures_of(monkeypatch)
    text = report.write_report(store)[0].read_text(encoding="utf-8")
    assert "<th>mean (Mbit/s)</th>" in text
    assert "Unit: Mbit/s; higher is better" in text
    assert "1e7" not in text and "e+06" not in text
    name, fig = next((n, f) for n, f in figures if n.startswith("goodput_bps_vs_"))
    ax = fig.axes[0]
    assert ax.get_ylabel() == "aggregate goodput (Mbit/s)"
    assert ax.get_xlabel() == "limit"
    assert ax.yaxis.get_offset_text().get_text() == ""
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert ticks and all("e" not in t for t in ticks), ticks
    assert all(9.5 < float(t.replace("\u2212", "-")) < 10.5 for t in ticks if t), ticks


def test_times_are_shown_in_milliseconds():
    from flowshare.study import quantities

    q = quantities.quantity("mean_rtt", {"table": "flows", "column": "rtt_mean_s",
                                         "agg": "mean", "better": "lower"})
    assert (q.unit, q.better, q.minimum) == ("s", "lower", 0.0)
    assert quantities.scale("s", [0.0312, 0.048]) == (1e-3, "ms")
    assert quantities.scale("bit/s", [9.2e6]) == (1e6, "Mbit/s")
    assert quantities.scale("bit/s", [950e6, 1.2e9]) == (1e9, "Gbit/s")
    assert quantities.scale("packets", [12345.0]) == (1.0, "packets")


def test_arms_are_labelled_by_short_names_and_values(tmp_path):
    red = json.dumps({"type": "red", "limit": 60}, sort_keys=True)
    droptail = json.dumps({"type": "droptail", "limit": 60}, sort_keys=True)
    arms = [{"flows[0].tcp.cc": "cubic", "topology.bottleneck.queue": red,
             "flows[0].trace": "traces/2026/lab/cubic-red.csv"},
            {"flows[0].tcp.cc": "reno", "topology.bottleneck.queue": droptail,
             "flows[0].trace": "traces/2026/lab/reno-droptail.csv"}]  # fmt: skip

    def value(params: dict[str, Any], rep: int) -> dict[str, float]:
        return {"goodput_bps": (8e6 if params["flows[0].tcp.cc"] == "cubic" else 7e6) + rep}

    store = write_store(tmp_path / "s", arms, value)
    text = report.write_report(store)[0].read_text(encoding="utf-8")
    label = "cc=cubic, queue=red(limit=60), trace=cubic-red.csv"
    assert f"Difference {label} − cc=reno, queue=droptail(limit=60), trace=reno-droptail.csv" \
        in text
    assert "traces/2026" not in text
    assert '{&quot;' not in text and '{"' not in text


def test_short_names_keep_paths_that_would_be_equal():
    from flowshare.study import quantities

    names = quantities.short_names(["flows[0].tcp.cc", "flows[1].tcp.cc", "topology.rate"])
    assert names == {"flows[0].tcp.cc": "flows[0].tcp.cc", "flows[1].tcp.cc": "flows[1].tcp.cc",
                     "topology.rate": "rate"}
    assert quantities.short_value('{"model": "bernoulli", "p": 0.01}') == "bernoulli(p=0.01)"


def test_each_response_gets_exactly_one_section(one_factor):
    sweep = json.loads((one_factor / "sweep.json").read_text(encoding="utf-8"))
    sweep["responses"] = [*sweep["responses"], "drops"]  # listed twice
    (one_factor / "sweep.json").write_text(json.dumps(sweep), encoding="utf-8")
    text = report.write_report(one_factor)[0].read_text(encoding="utf-8")
    for response in ("goodput_mbps", "drops"):
        assert text.count(f'<section id="response-{response}">') == 1
        headings = re.findall(r"<h2>([^<]*)</h2>", text)
        assert sum(response in h for h in headings) == 1, headings
    # The comparison and the outliers of a response are inside its section, not repeated
    # in sections of their own.
    assert "<h2>Outliers</h2>" not in text and "<h2>Comparison" not in text


def test_interval_of_a_count_does_not_go_below_zero(tmp_path):
    arms = [{"queue.limit": 20}, {"queue.limit": 80}]

    def value(params: dict[str, Any], rep: int) -> dict[str, float]:
        return {"drops": [0.0, 0.0, 0.0, 9.0][rep] if params["queue.limit"] == 80 else 40.0 + rep}

    store = write_store(tmp_path / "s", arms, value, replications=4)
    assert stats.summarize([0.0, 0.0, 0.0, 9.0]).low < 0  # the plain t interval would
    loaded = report.load_store(store)
    q = report._quantities(loaded)["drops"]
    table = report._arm_table(loaded, "drops", 0.95, q)
    assert (table["low"] >= 0).all()
    assert table.loc[table["queue.limit"] == 80, "low"].item() == 0.0
    text = report.write_report(store)[0].read_text(encoding="utf-8")
    section = text[text.index('<section id="response-drops">'):]
    row = re.search(r"<tr><td>1</td><td>80</td>(.*?)</tr>", section)
    assert row is not None
    cells = re.findall(r">([^<]*)</td>", row.group(1))
    # n, mean, ±, CI low, CI high
    assert cells[0] == "4" and float(cells[1]) == 2.25 and cells[3] == "0"
    assert "never below 0" in section


def test_grubbs_is_not_applied_to_four_values(tmp_path):
    # 0, 0, 0, 1: G = 1.5, the largest possible for 4 values, above the critical 1.48.
    assert stats.grubbs([0.0, 0.0, 0.0, 1.0]).outlier
    arms = [{"queue.limit": 20}]
    responses = ["timeouts", "drops", "retransmits", "goodput_bps", "flows", "jain_index",
                 "extra"]

    def value(params: dict[str, Any], rep: int) -> dict[str, float]:
        return {r: [5.0, 5.0, 5.0, 6.0][rep] for r in responses}

    store = write_store(tmp_path / "s", arms, value, replications=4)
    text = report.write_report(store)[0].read_text(encoding="utf-8")
    assert text.count("Not applied to 1 arm with n = 4") == len(responses)
    assert "critical G" not in text  # no outlier table anywhere


def test_grubbs_flags_at_most_one_value_of_an_arm_of_eight(tmp_path):
    arms = [{"queue.limit": 20}]
    values = [199.31, 199.53, 200.19, 200.82, 201.92, 201.95, 202.18, 245.57]  # NIST example

    def value(params: dict[str, Any], rep: int) -> dict[str, float]:
        return {"goodput": values[rep]}

    store = write_store(tmp_path / "s", arms, value, replications=8)
    text = report.write_report(store)[0].read_text(encoding="utf-8")
    table = text[text.index("critical G"):]
    table = table[:table.index("</table>")]
    assert table.count("<tr>") == 1 and "a000-r07" in table and "245.6" in table


def test_mean_rank_puts_the_best_first_for_each_direction(tmp_path):
    # Worked example: goodput (higher is better) and drops (lower is better).
    #            goodput  drops   rank goodput  rank drops  mean rank
    #   cubic       9       10         1            2          1.5
    #   reno        8       30         2            3          2.5
    #   vegas       7        5         3            1          2.0
    # Ranking both by value (k for the highest) would give cubic 2.5, reno 2.5, vegas 1.0.
    table = {"cubic": (9.0, 10.0), "reno": (8.0, 30.0), "vegas": (7.0, 5.0)}
    arms = [{"tcp.cc": cc} for cc in table]

    def value(params: dict[str, Any], rep: int) -> dict[str, float]:
        goodput, drops = table[params["tcp.cc"]]
        return {"goodput_bps": goodput * 1e6 + rep, "drops": drops + rep, "flows": 4.0}

    store = write_store(tmp_path / "s", arms, value)
    text = report.write_report(store, rank_by="tcp.cc")[0].read_text(encoding="utf-8")
    assert "Directions: goodput_bps (higher), drops (lower)" in text

    def row(label: str) -> list[float]:
        match = re.search(rf"<tr><td>{re.escape(label)}</td>(.*?)</tr>", text)
        assert match is not None, label
        return [float(v) for v in re.findall(r">([^<]*)</td>", match.group(1))]

    assert row("mean rank goodput_bps") == [1, 2, 3]
    assert row("mean rank drops") == [2, 3, 1]
    assert row("all Avg.") == [1.5, 2.5, 2.0]
    # flows has no direction: it is not ranked, and the page says so.
    assert "Not ranked, since no direction is stated: flows" in text
    assert "mean rank flows" not in text
