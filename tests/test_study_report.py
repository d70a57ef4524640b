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
