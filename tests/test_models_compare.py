"""Model against simulation: points from results, per-point errors, the plot."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from core_tables import TINY_TOML

from flowshare import models, sim
from flowshare.models import compare, points_from_results
from flowshare.results import RunResult


def run_with_flows(flows: dict, *, duration: float = 10.0, seed: int = 1) -> RunResult:
    """A RunResult whose flows table is given; the other tables are empty."""
    empty = pd.DataFrame()
    return RunResult(
        summary={"duration_s": duration, "seed": seed},
        scenario={},
        flows=pd.DataFrame(flows),
        queues=empty,
        flow_series=empty,
        queue_series=empty,
    )


TWO_FLOWS = {
    "flow": [0, 1],
    "start_s": [0.0, 2.0],
    "stop_s": [math.nan, 8.0],
    "completion_time_s": [math.nan, math.nan],
    "packets_sent": [1000, 600],
    "packets_received": [990, 594],
    "fast_retransmits": [8, 3],
    "timeouts": [2, 1],
    "drops": [12, 5],
    "rtt_mean_s": [0.05, 0.08],
    "rtt_samples": [300, 100],
}


def test_points_from_a_result_aggregate_the_flows():
    points = points_from_results(run_with_flows(TWO_FLOWS))
    row = points.iloc[0]
    assert row["n"] == 2
    # loss events (fast recoveries + time-outs) of any flow over packets of all flows
    assert row["p"] == pytest.approx(14 / 1600)
    assert row["p_r"] == pytest.approx(17 / 1600)
    assert row["rtt"] == pytest.approx((0.05 * 300 + 0.08 * 100) / 400)
    # flow 0 active 10 s, flow 1 from 2 s to its stop at 8 s
    assert row["throughput"] == pytest.approx(1000 / 10 + 600 / 6)
    assert (row["loss_events"], row["timeouts"], row["packets"]) == (14, 3, 1600)


def test_points_per_flow_and_received_throughput():
    points = points_from_results(run_with_flows(TWO_FLOWS), aggregate=False,
                                 throughput="delivered")
    assert points["flow"].tolist() == [0, 1]
    assert points["n"].tolist() == [1, 1]
    assert points["p"].tolist() == pytest.approx([10 / 1000, 4 / 600])
    assert points["throughput"].tolist() == pytest.approx([99.0, 99.0])


def test_a_completed_flow_counts_until_completion():
    flows = dict(TWO_FLOWS, completion_time_s=[5.0, math.nan])
    points = points_from_results(run_with_flows(flows), aggregate=False)
    assert points["throughput"].iloc[0] == pytest.approx(1000 / 5)


def test_a_run_without_loss_events_has_no_loss_rate():
    flows = dict(TWO_FLOWS, fast_retransmits=[0, 0], timeouts=[0, 0])
    points = points_from_results([run_with_flows(flows), run_with_flows(TWO_FLOWS, seed=2)])
    assert math.isnan(points["p"].iloc[0])
    assert points["seed"].tolist() == [1, 2]
    # such points are left out of a comparison
    cmp = compare(points, "parallel-a", params={"rto": 0.4})
    assert len(cmp.table) == 1 and cmp.dropped == 1


def test_points_reject_other_objects_and_modes():
    with pytest.raises(ValueError, match="not a RunResult"):
        points_from_results([object()])
    with pytest.raises(ValueError, match="throughput must be one of"):
        points_from_results(run_with_flows(TWO_FLOWS), throughput="acked")


def test_errors_per_point():
    points = pd.DataFrame({
        "n": [5, 5, 10],
        "p": [0.01, 0.02, 0.01],
        "rtt": [0.1, 0.1, 0.1],
        "throughput": [500.0, 300.0, 1000.0],
    })
    cmp = compare(points, "parallel-a", params={"rto": 0.4})
    expected = models.model_a(points["n"].to_numpy(), points["p"].to_numpy(), 0.1, 0.4)
    t = cmp.table
    assert t["model"].to_numpy() == pytest.approx(expected)
    assert t["error"].to_numpy() == pytest.approx(expected - points["throughput"].to_numpy())
    assert t["rel_error"].to_numpy() == pytest.approx(
        (expected - points["throughput"].to_numpy()) / points["throughput"].to_numpy()
    )
    assert (t["abs_error"] >= 0).all() and (t["abs_rel_error"] >= 0).all()
    assert t["rto"].tolist() == [0.4, 0.4, 0.4]
    s = cmp.summary()
    assert s["points"] == 3
    assert s["max_abs_rel_error"] == pytest.approx(t["abs_rel_error"].max())
    assert cmp.unit == "pkt/s"
    # one curve per n, over the loss range
    assert [label for label, _, _ in cmp.curves] == ["model, n=5", "model, n=10"]
    _, xs, ys = cmp.curves[0]
    assert xs.min() < 0.01 and xs.max() > 0.02
    assert ys == pytest.approx(models.model_a(5, xs, 0.1, 0.4))


def test_model_matching_itself_has_zero_error():
    p = np.geomspace(1e-4, 0.05, 6)
    points = pd.DataFrame({"p": p, "rtt": 0.2, "throughput": models.pftk(p, 0.2, 0.8)})
    cmp = compare(points, models.MODELS["pftk"], params={"rto": 0.8})
    assert cmp.summary()["mean_abs_rel_error"] == pytest.approx(0.0, abs=1e-12)


def test_columns_map_keys_and_params_override():
    points = pd.DataFrame({"loss": [0.01], "rtt_s": [0.1], "pps": [100.0], "rto": [9.9]})
    cmp = compare(points, "pftk", columns={"p": "loss", "rtt": "rtt_s"}, measured="pps",
                  params={"rto": 0.4})
    assert cmp.table["model"].iloc[0] == pytest.approx(models.pftk(0.01, 0.1, 0.4))


def test_a_plain_function_as_the_model():
    def my_model(p, rtt, k=1.0):
        return k / (rtt * np.sqrt(p))

    points = pd.DataFrame({"p": [0.01, 0.04], "rtt": [0.1, 0.1], "throughput": [100.0, 50.0]})
    cmp = compare(points, my_model, params={"k": 1.0})
    assert cmp.table["model"].tolist() == pytest.approx([100.0, 50.0])
    assert cmp.model == "my_model"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"model": "pftk"}, r"model pftk needs rto .*params=\{'rto': \.\.\.\}"),
        ({"model": "nope"}, "unknown model 'nope'"),
        ({"model": "pftk", "params": {"rto": 0.4}, "measured": "goodput"}, "no column 'goodput'"),
        ({"model": "pftk", "params": {"rto": 0.4}, "columns": {"p": "loss"}}, "maps 'p' to 'loss'"),
        ({"model": "pftk", "params": {"rto": 0.4}, "x": "n"}, "x='n' is not an input"),
        ({"model": "pftk", "params": {"rto": -1}}, "rto must be > 0"),
    ],
)
def test_compare_errors_name_what_is_wrong(kwargs, message):
    points = pd.DataFrame({"p": [0.01], "rtt": [0.1], "throughput": [100.0]})
    with pytest.raises(ValueError, match=message):
        compare(points, **kwargs)


def test_plot_draws_curves_and_points(tmp_path):
    points = pd.DataFrame({
        "n": [2, 2, 2],
        "p": [0.001, 0.01, 0.05],
        "rtt": [0.1, 0.11, 0.12],
        "throughput": [700.0, 220.0, 60.0],
    })
    cmp = compare(points, "parallel-a", params={"rto": 0.4})
    fig = cmp.plot()
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    assert [line.get_label() for line in ax.get_lines()] == [
        "model, n=2", "simulation", "model at each point"
    ]
    target = tmp_path / "cmp.png"
    cmp.save_plot(target)
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_model_against_a_real_simulation(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(TINY_TOML, encoding="utf-8")
    result = sim.run(path, progress=False)
    points = points_from_results(result)
    assert points["n"].iloc[0] == 2
    assert points["throughput"].iloc[0] > 0
    cmp = compare(result, "parallel-a", params={"rto": 0.2})
    if cmp.table.empty:  # a 2 s run may see no loss event
        assert cmp.dropped == 1
    else:
        assert np.isfinite(cmp.table["rel_error"]).all()
    cmp.plot()
