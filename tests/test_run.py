"""flowshare.run on the native core, on scenarios small enough to take milliseconds."""

from __future__ import annotations

from pathlib import Path

import pytest

import flowshare
from flowshare import ConfigError
from flowshare import scenario as sc

REPO = Path(__file__).resolve().parents[1]


def tiny(**overrides):
    scn = sc.dumbbell(
        bottleneck=sc.link(rate="10Mbps", delay="5ms", queue=sc.droptail(limit=30)),
        access=sc.link(rate="100Mbps", delay="1ms"),
        flows=sc.flows(name="bulk", count=2, start_spacing="10ms"),
        duration="2s",
        sample_interval="100ms",
    )
    scn["simulation"].update(overrides)
    return scn


def test_run_returns_tables_with_the_documented_columns():
    result = flowshare.run(tiny(), progress=False)
    assert isinstance(result, flowshare.RunResult)
    assert len(result.flows) == 2
    assert {"flow", "name", "goodput_bps", "retransmits", "rtt_mean_s"} <= set(result.flows)
    assert {"queue", "link", "from", "to", "drops", "utilization"} <= set(result.queues)
    assert list(result.flow_series.columns[:2]) == ["time_s", "flow"]
    assert list(result.queue_series.columns[:2]) == ["time_s", "queue"]
    assert result.flows["name"].tolist() == ["bulk", "bulk"]
    # 20 samples of 100 ms per flow over 2 s.
    assert len(result.flow_series) == pytest.approx(2 * 20, abs=2)
    assert result.summary["duration_s"] == 2.0
    assert result.scenario["topology"]["kind"] == "dumbbell"


def test_goodput_is_positive_and_within_the_bottleneck():
    result = flowshare.run(tiny(), progress=False)
    goodput = result.flows["goodput_bps"]
    assert (goodput > 0).all()
    assert goodput.sum() <= 10e6


def test_seed_overrides_the_scenario():
    result = flowshare.run(tiny(seed=5), seed=9, progress=False)
    assert result.summary["seed"] == 9
    assert result.scenario["simulation"]["seed"] == 9


def test_same_seed_same_tables():
    a = flowshare.run(tiny(), progress=False)
    b = flowshare.run(tiny(), progress=False)
    for name in ("flows", "queues", "flow_series", "queue_series"):
        assert getattr(a, name).equals(getattr(b, name)), name


def test_short_run_shows_no_progress_bar_even_when_asked(capsys):
    flowshare.run(tiny(), progress=True)
    assert capsys.readouterr().err == ""


def test_time_series_can_be_turned_off(tmp_path):
    result = flowshare.run(tiny(sample_interval="0s"), progress=False)
    assert len(result.flow_series) == 0 and len(result.queue_series) == 0
    result.write(tmp_path / "out")
    assert (tmp_path / "out" / "plot.png").stat().st_size > 0


def test_invalid_dict_raises_config_error_naming_the_field():
    scn = tiny()
    scn["flows"][0]["tcp"] = {"recovery": "newrenoo"}
    with pytest.raises(ConfigError, match=r"flows\[0\]\.tcp\.recovery"):
        flowshare.run(scn)


@pytest.mark.parametrize("path", sorted((REPO / "scenarios").glob("*.toml")), ids=lambda p: p.name)
def test_shipped_scenarios_validate(path):
    scn = flowshare.validate(path)
    assert scn["flows"]


def test_demo_scenario_is_found_in_the_checkout():
    from flowshare.cli import demo_scenario_path

    assert demo_scenario_path() == REPO / "scenarios" / "demo.toml"
    assert demo_scenario_path().is_file()


def test_a_lan_and_a_link_change_run_and_report():
    scn = sc.graph(
        nodes=["srv", "r", "h1", "h2"],
        links=[sc.link(from_="srv", to="r", rate="1Gbps", delay="5ms")],
        lans=[sc.lan(name="lan", nodes=["r", "h1", "h2"], rate="10Mbps", delay="0.5us")],
        # The UDP source keeps packets on the LAN while it is down, whatever TCP is doing.
        flows=[
            sc.flows(src="srv", dst="h1"),
            sc.flows(src="h2", dst="srv"),
            sc.flows(src="srv", dst="h2", transport="udp", source={"kind": "cbr", "rate": "1Mbps"}),
        ],
        duration="2s",
        changes=[
            sc.change(at="1s", link="lan", up=False),
            sc.change(at="1.2s", link="lan", up=True),
        ],
    )
    result = flowshare.run(scn, progress=False)
    lan = result.queues[result.queues["link"] == "lan"]
    assert lan["from"].tolist() == ["r", "h1", "h2"]
    assert (lan["to"] == "lan").all()
    # One channel: the stations' utilizations add up to at most 1.
    assert lan["utilization"].sum() <= 1.0 + 1e-9
    assert result.flows["route_drops"].sum() > 0
    assert {"down_drops", "down_losses"} <= set(result.queues)
    assert (result.flows["goodput_bps"] > 0).all()
