"""``flowshare reproduce pamultcp`` (Kuo and Fu, "Probe-Aided MulTCP: An Aggregate Congestion
Control Mechanism", ACM SIGCOMM CCR 38(1), 2008): the measures on synthetic frames with worked
numbers, the options and the scenarios, the targets, and a tiny reproduction end to end."""

from __future__ import annotations

import csv
import dataclasses
import json
import math

import numpy as np
import pandas as pd
import pytest

import flowshare
from flowshare import ConfigError
from flowshare.reproduce import pamultcp
from flowshare.reproduce import reproduce as run_reproduction
from flowshare.reproduce import pamultcp_metrics as m
from flowshare.reproduce import pamultcp_network as n
from flowshare.reproduce.targets import COLUMNS

# ---------------------------------------------------------------------------------------------
# Measures


def test_fairness_index_eq_11() -> None:
    # N = 10 sharing 100 Mbit/s with 40 TCP flows: the aggregate 20 Mbit/s is 2 per flowshare,
    # the TCP flows average 2: fair.
    assert m.fairness_index(20e6, 10, [1e6, 3e6, 2e6, 2e6]) == pytest.approx(1.0)
    # Twice as aggressive: 40 Mbit/s for N = 10 against TCP flows of 2 Mbit/s.
    assert m.fairness_index(40e6, 10, [2e6] * 5) == pytest.approx(2.0)
    assert math.isnan(m.fairness_index(1e6, 2, []))
    assert math.isnan(m.fairness_index(1e6, 2, [0.0, 0.0]))


def test_cov_eq_12_is_the_population_deviation_over_the_mean() -> None:
    # Rates 10, 20, 30: mean 20, population sd sqrt(200/3) = 8.165, CoV 0.40825.
    assert m.cov([10.0, 20.0, 30.0]) == pytest.approx(math.sqrt(200 / 3) / 20)
    assert m.cov([5.0, 5.0, 5.0]) == 0.0
    assert math.isnan(m.cov([]))
    assert math.isnan(m.cov([0.0, 0.0]))


def test_bins_in_keeps_the_bins_wholly_inside_the_window() -> None:
    s = pd.DataFrame({"time_s": [99.9, 100.0, 100.1, 100.2, 400.0, 400.1]})
    # The sample at t covers (t − 0.1, t]: 100.0 covers (99.9, 100.0], before the window.
    assert m.bins_in(s, 100.0, 400.0, 0.1)["time_s"].tolist() == [100.1, 100.2, 400.0]


def test_response_time_counts_bins_until_the_fair_share() -> None:
    # CBR from 300 s; fair share under it 20 Mbit/s. The rate is 40 until 300.6, 25 in the bin
    # ending 300.7, 18 in the one ending 300.8: 0.8 s = 8 RTTs of 100 ms.
    t = np.round(np.arange(299.5, 302.0, 0.1) + 0.1, 1)
    x = np.where(t <= 300.6, 40e6, np.where(t <= 300.7, 25e6, 18e6))
    assert m.response_time(t, x, 300.0, 20e6, 0.1) == pytest.approx(8.0)
    # A bin before 300 s never counts, even below the level.
    x2 = x.copy()
    x2[0] = 1e6
    assert m.response_time(t, x2, 300.0, 20e6, 0.1) == pytest.approx(8.0)
    # Recovery after 600 s: the first bin at or above 40 Mbit/s, 1.7 s later: 17 RTTs.
    t3 = np.round(np.arange(600.0, 603.0, 0.1) + 0.1, 1)
    x3 = np.where(t3 < 601.65, 10e6, 41e6)
    assert m.response_time(t3, x3, 600.0, 40e6, 0.1, "up") == pytest.approx(17.0)
    assert math.isnan(m.response_time(t3, x3, 600.0, 50e6, 0.1, "up"))
    with pytest.raises(ValueError, match="direction"):
        m.first_crossing(t3, x3, 600.0, 1.0, "sideways")


def test_completion_time_and_reduced_latency() -> None:
    members = pd.DataFrame({
        "flow": [0, 0, 0, 0, 0], "member": [0, 1, 2, 3, 4], "start_s": [0.0] * 4 + [50.0],
        "size_bytes": [np.nan] * 4 + [30000.0],
        "completion_time_s": [np.nan] * 4 + [1.2],
    })
    assert m.completion_time(members, 50.0) == pytest.approx(1.2)
    assert math.isnan(m.completion_time(members, 60.0))
    unfinished = members.assign(completion_time_s=np.nan)
    assert math.isnan(m.completion_time(unfinished, 50.0))
    # MPAT 2.4 s, PA-MulTCP 1.2 s: 50 % less latency; 1.6 vs 1.2: 25 %.
    assert m.reduced_latency(2.4, 1.2) == pytest.approx(50.0)
    assert m.reduced_latency(1.6, 1.2) == pytest.approx(25.0)
    assert math.isnan(m.reduced_latency(math.nan, 1.0))


def test_loss_event_rate_counts_window_reductions() -> None:
    flows = pd.DataFrame({"packets_sent": [1000, 2000, 0], "loss_events": [5, 2, 0]})
    assert m.loss_event_rate(flows).tolist()[:2] == pytest.approx([0.005, 0.001])
    assert math.isnan(m.loss_event_rate(flows).iloc[2])


def test_crossing_interpolates_where_the_index_falls_through_1() -> None:
    # FI 1.4, 1.2, 0.8 at N = 20, 25, 30: 1 is crossed halfway between 25 and 30.
    assert m.crossing([20, 25, 30], [1.4, 1.2, 0.8], 1.0, 31.0) == pytest.approx(27.5)
    # FI exactly 1 at N = 10 counts as still fair: the crossing is there.
    assert m.crossing([8, 10, 12], [1.5, 1.0, 0.5], 1.0, 31.0) == pytest.approx(10.0)
    assert m.crossing([8, 10, 12], [1.5, 1.2, 0.6], 1.0, 31.0) == pytest.approx(10 + 2 / 3)
    assert m.crossing([2, 30], [2.0, 1.5], 1.0, 31.0) == 31.0
    assert m.crossing([2, 30], [0.9, 0.5], 1.0, 31.0) == 2.0


def test_spearman() -> None:
    assert m.spearman([2, 4, 6, 8], [1.3, 1.2, 1.0, 0.7]) == pytest.approx(-1.0)
    assert m.spearman([1, 2, 3], [1, 3, 2]) == pytest.approx(0.5)
    assert math.isnan(m.spearman([1], [2]))
    assert math.isnan(m.spearman([1, 2], [3, 3]))


# ---------------------------------------------------------------------------------------------
# Options and scenarios


def test_options_are_checked() -> None:
    assert n.Options() == n.OPTIONS
    with pytest.raises(ConfigError, match=r"options.buffer: expected one of round_trip, one_way"):
        n.Options(buffer="half")
    with pytest.raises(ConfigError, match=r"options.cbr_mbps: expected one of 60, 30, 90"):
        n.Options(cbr_mbps=45)
    with pytest.raises(ConfigError, match=r"options.initial_window"):
        n.Options(initial_window=True)
    with pytest.raises(ConfigError, match=r"options.multcp_loss_policy"):
        n.Options(multcp_loss_policy="reno")
    with pytest.raises(ConfigError, match=r"options"):
        run_reproduction("pamultcp", "/nonexistent/x", scale="tiny", options=object())


def test_cases_are_checked() -> None:
    with pytest.raises(ConfigError, match="case.experiment"):
        n.Case("steady", "multcp", 200.0, 4)
    with pytest.raises(ConfigError, match="case.scheme"):
        n.Case("fair", "cubic", 200.0, 4)
    with pytest.raises(ConfigError, match="case.n"):
        n.Case("fair", "multcp", 200.0, 200)
    with pytest.raises(ConfigError, match="case.bandwidth_mbps"):
        n.Case("fair", "multcp", 0.0, 4)
    with pytest.raises(ConfigError, match="short-transfer"):
        n.Case("short", "pamultcp", 5.0, 4)
    assert n.Case("fair", "pamultcp", 400.0, 10).label == "fair-pamultcp-N10-400Mbps"


def test_buffer_is_the_bandwidth_delay_product_in_1500_byte_packets() -> None:
    # Round trip (100 ms): 400 Mbit/s × 0.1 s / 12000 bit = 3333 packets.
    assert [n.buffer_packets(bw) for bw in (400, 200, 120, 5)] == [3333, 1667, 1000, 42]
    one_way = n.Options(buffer="one_way")
    assert [n.buffer_packets(bw, one_way) for bw in (400, 5)] == [1667, 21]


def test_fair_scenario() -> None:
    s = n.scenario(n.Case("fair", "multcp", 200.0, 10), n.Timing(400.0, 100.0),
                   sample_interval_s=0.1)
    b = s["topology"]["bottleneck"]
    assert b == {"rate": "200Mbps", "delay": "50ms",
                 "queue": {"kind": "droptail", "limit": 1667}}
    assert s["topology"]["access"]["rate"] == "2000Mbps"
    assert s["topology"]["access"]["delay"] == "0ms"
    agg, tcp = s["flows"]
    assert agg["name"] == "agg" and agg["tcp"]["cc"]["algo"] == "multcp"
    assert agg["tcp"]["cc"]["n"] == 10 and tcp["count"] == 190
    for f in (agg, tcp):
        assert f["tcp"]["recovery"] == "sack" and f["tcp"]["delayed_ack"] is False
        assert f["tcp"]["mss"] == "1460B" and f["tcp"]["header"] == "40B"
        assert f["start_jitter"] == "10s"
    assert s["simulation"] == {"duration": "400s", "warmup": "100s", "sample_interval": "0.1s"}
    flowshare.validate(s)


def test_transient_short_and_model_scenarios() -> None:
    s = n.scenario(n.Case("transient", "pamultcp", 120.0, 10), n.Timing(900.0, 0.0, 300.0, 600.0),
                   n.Options(cbr_mbps=30))
    cbr = s["flows"][2]
    assert cbr["start"] == "300s" and cbr["stop"] == "600s"
    assert cbr["source"] == {"kind": "cbr", "rate": "30Mbps", "packet_size": "1472B"}
    assert s["flows"][0]["tcp"]["cc"] == {"algo": "pamultcp", "n": 10}
    assert s["flows"][1]["count"] == 20
    short = n.scenario(n.Case("short", "mpat", 5.0, 4, size_kb=30, ssthresh_kb=32),
                       n.Timing(350.0, 0.0, 50.0))
    agg = short["flows"][0]
    assert agg["aggregate"] == {"joins": [{"at": "50s", "size": "30000B"}]}
    assert agg["tcp"]["initial_ssthresh"] == pytest.approx(32000 / 1500)
    assert short["flows"][1]["tcp"]["initial_ssthresh"] == pytest.approx(32000 / 1500)
    assert short["topology"]["bottleneck"]["queue"]["limit"] == 42
    kib = n.scenario(n.Case("short", "mpat", 5.0, 4, size_kb=30, ssthresh_kb=32),
                     n.Timing(350.0, 0.0, 50.0), n.Options(kilobyte=1024))
    assert kib["flows"][0]["aggregate"]["joins"][0]["size"] == "30720B"
    model = n.scenario(n.Case("model", "aimd", 1000.0, 4, loss=0.01), n.Timing(100.0))
    assert model["topology"]["bottleneck"]["loss"] == {"model": "bernoulli", "p": 0.01}
    assert model["flows"][0]["tcp"]["cc"] == {"algo": "aimd", "a": 2.0, "b": pytest.approx(0.08)}
    s3 = n.scenario(n.Case("s3", "multcp", 400.0, multcp_n=(2, 20)), n.Timing(400.0))
    assert [f["name"] for f in s3["flows"]] == ["multcp2", "multcp20", "tcp"]
    assert s3["flows"][2]["count"] == 200


def test_plans_and_sweep() -> None:
    full = pamultcp.plan("full")
    assert full.replications == 20 and full.fair_n == pamultcp.N_GRID
    assert full.fair.duration_s == 400.0 and full.fair.warmup_s == 100.0
    assert (full.transient.on_s, full.transient.off_s) == (300.0, 600.0)
    every = pamultcp.cases(full)
    # 3 TCP + 6 AIMD + 6 MulTCP model cases, one Fig. 2 run, 2 × 2 × 11 steady-state cases, 2 transient,
    # and 2 × (8 sizes + 2 × 4 further ssthresh values) short-transfer cases.
    assert len(every) == 3 + 6 + 6 + 1 + 44 + 2 + 2 * 16
    assert len(set(every)) == len(every)
    doc = pamultcp.sweep_document(pamultcp.plan("tiny"))
    arms = pamultcp.runnable(pamultcp.plan("tiny"))
    assert len(doc["points"]) == len(arms)


def test_targets_cover_every_checklist_item_once() -> None:
    ids = [t.id for t in pamultcp.targets()]
    assert len(ids) == len(set(ids))
    items = {s.item for s in pamultcp._specs()}
    assert items == set(pamultcp.CHECKLIST) == set(range(1, 8))


def test_without_runs_every_target_is_unmeasured() -> None:
    evaluated = pamultcp.evaluate(pd.DataFrame())
    assert len(evaluated) == len(pamultcp.targets())
    for t in evaluated:
        assert not t.passed and t.note


# ---------------------------------------------------------------------------------------------
# End to end


def test_tiny_reproduction_writes_every_target(tmp_path) -> None:
    out = tmp_path / "pa"
    r = run_reproduction("pamultcp", out, scale="tiny", workers=1, progress=False)
    assert r.failed == 0 and r.runs == len(pamultcp.runnable(pamultcp.plan("tiny")))
    with open(out / "targets.csv", newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        assert tuple(reader.fieldnames or ()) == COLUMNS
        rows = list(reader)
    assert [row["id"] for row in rows] == [t.id for t in pamultcp.targets()]
    for row in rows:
        assert row["passed"] in ("true", "false")
        assert row["passed"] == "true" or row["note"]
    html = (out / "report.html").read_text(encoding="utf-8")
    assert html.index("Numeric targets") < html.index("The acceptance checklist")
    assert "Kuo and X. Fu" in html and "data:image/png;base64," in html
    runs = pd.read_csv(out / "runs.csv")
    assert set(runs["experiment"]) >= {"model", "s3", "fair", "transient"}
    assert "trace_t" not in runs
    # Resuming reuses every run.
    again = run_reproduction("pamultcp", out, scale="tiny", workers=1, progress=False)
    assert again.ran == 0 and [t.id for t in again.targets] == [row["id"] for row in rows]


def _synthetic_rows() -> pd.DataFrame:
    """Runs as a build with every controller would give them, with known numbers."""
    rows: list[dict] = []
    p = pamultcp.plan("quick")

    def add(**values) -> None:
        base = {"experiment": "", "scheme": "multcp", "bandwidth_mbps": 0.0, "n": 1,
                "size_kb": 0, "ssthresh_kb": 0, "loss": 0.0, "replication": 0, "packets": 1,
                "wall_s": 0.1}
        rows.append({**base, **values})

    for loss, ratio in ((0.001, 1.02), (0.003, 0.99), (0.01, 0.9)):
        add(experiment="model", scheme="tcp", loss=loss, model_ratio=ratio, timeout_share=0.1,
            t_sqrt_p=10.0, p_e=loss, rtt_s=0.1, throughput_pps=1.0, model_pps=1.0, timeouts=1)
        for n_ in (4, 10):
            add(experiment="model", scheme="aimd", n=n_, loss=loss, model_ratio=1.0,
                timeout_share=0.0, t_sqrt_p=10.0 * n_, p_e=loss, rtt_s=0.1,
                throughput_pps=1.0, model_pps=1.0, timeouts=0)
            add(experiment="model", scheme="multcp", n=n_, loss=loss, model_ratio=1.0,
                timeout_share=0.0, t_sqrt_p=10.0 * n_ * 1.1, p_e=loss, rtt_s=0.1,
                throughput_pps=1.0, model_pps=1.0, timeouts=0)
    add(experiment="s3", p_tcp=0.01, p_multcp2=0.008, p_multcp20=0.004)
    for bw in (200.0, 400.0):
        cross = 10 if bw == 200.0 else 25
        for n_ in p.fair_n:
            for scheme in ("multcp", "pamultcp"):
                fi = (1.5 - n_ / (cross * 2) if scheme == "multcp" else 1.0 + 0.01 * n_ / 30)
                add(experiment="fair", scheme=scheme, bandwidth_mbps=bw, n=n_, fi=fi,
                    cov=(0.1 if scheme == "pamultcp" else 0.2) * n_ * (400 / bw),
                    agg_timeouts=n_ if scheme == "multcp" else 0, agg_goodput_mbps=1.0,
                    tcp_goodput_mbps=1.0, p_agg=0.01, p_tcp=0.01, tcp_over_model=0.95,
                    adjust_over_cap=1.0 if scheme == "pamultcp" else np.nan)
    times = [round(x, 1) for x in np.arange(0.1, 130.05, 0.1)]
    for scheme, response in (("multcp", 17.0), ("pamultcp", 8.0)):
        add(experiment="transient", scheme=scheme, n=10, bandwidth_mbps=120.0,
            response_rtt=response, recovery_rtt=5.0 if scheme == "pamultcp" else 30.0,
            dip_share=0.0, cov_congested=0.3 if scheme == "pamultcp" else 0.9,
            mean_congested_mbps=20.0, agg_timeouts=1,
            trace_t=json.dumps(times), trace_mbps=json.dumps([40.0] * len(times)),
            trace_loops=(json.dumps({"probe_cwnd": [4.0] * len(times),
                                     "adjust_cwnd": [30.0] * len(times),
                                     "w_max": [None] * 5 + [33.0] * (len(times) - 5)})
                         if scheme == "pamultcp" else None))
    sizes = {(s, 32) for s in p.short_sizes} | {(s, t) for s in p.short_fig9_sizes
                                                for t in p.short_ssthresh}
    for size, th in sorted(sizes):
        # PA-MulTCP flat in ssthresh; MPAT slower by 1/(1 − RL) at 32 KB, RL = 50 % − 25 %·size/400,
        # and slower still at a lower ssthresh.
        pa = 1.0 + size / 100
        mpat = pa / (0.5 + 0.25 * size / 400) * (1 + 2 / th) / (1 + 2 / 32)
        for scheme, ct in (("mpat", mpat), ("pamultcp", pa)):
            add(experiment="short", scheme=scheme, n=4, bandwidth_mbps=5.0, size_kb=size,
                ssthresh_kb=th, completion_s=ct)
    frame = pd.DataFrame(rows)
    frame.attrs["plan"] = p
    frame.attrs["options"] = n.OPTIONS
    return frame


def test_every_target_is_measured_with_every_controller() -> None:
    rows = _synthetic_rows()
    by_id = {t.id: t for t in pamultcp.evaluate(rows)}
    assert all(math.isfinite(t.measured) for t in by_id.values()), [
        (t.id, t.note) for t in by_id.values() if not math.isfinite(t.measured)]
    assert by_id["C1a.tcp_model.p0.01"].measured == pytest.approx(0.9)
    assert "10% of the loss events were timeouts" in by_id["C1a.tcp_model.p0.01"].note
    assert by_id["C1a.tcp_model.p0.001"].note == ""  # a pass carries no note
    assert by_id["C1b.aimd_weight.N10"].measured == pytest.approx(1.0)
    assert by_id["C1c.multcp_weight.N4"].measured == pytest.approx(
        1.1 / math.sqrt((2 - 1 / 8) / 1.5))
    assert by_id["C2.s3.multcp20_loss_below_tcp"].measured == pytest.approx(0.4)
    # MulTCP's FI = 1.5 − N/20 at 200 Mbit/s crosses 1 at N = 10; 1.5 − N/50 at 400 at 25.
    assert by_id["C3b.multcp.fi_crossing.200"].measured == pytest.approx(10.0)
    assert by_id["C3b.multcp.fi_crossing.400"].measured == pytest.approx(25.0)
    assert by_id["C3a.pa.fi_max_deviation.400"].measured == pytest.approx(0.01)
    assert by_id["C5a.pa.response_rtt"].passed and by_id["C5b.multcp.response_rtt"].passed
    assert by_id["C5e.pa_recovers_faster"].measured == pytest.approx(-25.0)
    # Reduced latency 50 % − 25 %·size/400 at ssthresh 32 KB.
    assert by_id["C6a.reduced_latency_min"].measured == pytest.approx(25.0)
    assert by_id["C6b.reduced_latency_max"].measured == pytest.approx(50 - 25 * 10 / 400)
    assert by_id["C6c.reduced_latency_falls_with_size"].measured == pytest.approx(-1.0)
    assert by_id["C7a.mpat_faster_with_ssthresh.400KB"].measured == pytest.approx(-1.0)
    assert by_id["C7b.pa_flat_in_ssthresh.30KB"].measured == pytest.approx(0.0)
    html_parts = pamultcp.sections(rows)
    titles = [s.title for s in html_parts]
    assert titles[0] == "The acceptance checklist"
    figures = [part for s in html_parts for part in s.parts if "data:image/png" in part]
    assert len(figures) >= 9 and any("loops around the CBR flow" in f for f in figures)
    assert "trace_loops" not in _written(rows)


def _written(rows: pd.DataFrame) -> list[str]:
    import io

    buffer = io.StringIO()
    pamultcp.write_rows(rows, buffer)  # type: ignore[arg-type]
    return buffer.getvalue().splitlines()[0].split(",")


def test_an_unfair_pamultcp_is_explained_by_the_cap_and_tcp_below_the_model() -> None:
    rows = _synthetic_rows()
    pa = (rows["experiment"] == "fair") & (rows["scheme"] == "pamultcp") & (rows["bandwidth_mbps"] == 200)
    rows.loc[pa & (rows["n"] == 10), ["fi", "tcp_over_model"]] = (1.2, 0.85)
    c3a = {t.id: t for t in pamultcp.evaluate(rows)}["C3a.pa.fi_max_deviation.200"]
    assert not c3a.passed and c3a.measured == pytest.approx(0.2)
    assert "at N = 10 (FI 1.2)" in c3a.note and "0.85 of eq. (2)" in c3a.note
    predicted = pamultcp.pa_fi_predicted(10, 1.0, 0.85)
    assert predicted == pytest.approx((1 + 2 / (2 - 2 / (1 + 3 * 9 ** 1.5)) * 9 / 0.85) / 10)
    assert f"predict FI {predicted:.3g}" in c3a.note


def test_transfers_that_never_complete_are_said() -> None:
    rows = _synthetic_rows()
    rows.loc[rows["experiment"] == "short", "completion_s"] = np.nan
    by_id = {t.id: t for t in pamultcp.evaluate(rows)}
    assert "no joined member completed" in by_id["C6a.reduced_latency_min"].note
    assert not math.isfinite(by_id["C7b.pa_flat_in_ssthresh.400KB"].measured)


