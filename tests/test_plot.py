"""The plot of a run, checked without looking at pixels: ``RunResult.plot`` returns what it drew
(panels, axis labels with units, limits, series and their point counts, legend entries)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from core_tables import core_result, num, tiny_scenario_dict

import flowshare
from flowshare.results import RunResult

ROOT = Path(__file__).resolve().parents[1]


def panel(description: dict, pid: str) -> dict:
    found = [p for p in description["panels"] if p["id"] == pid]
    assert found, f"no {pid} panel in {[p['id'] for p in description['panels']]}"
    return found[0]


def series(p: dict, name_start: str) -> dict:
    found = [s for s in p["series"] if s["name"].startswith(name_start)]
    assert found, f"no series {name_start!r} in {[s['name'] for s in p['series']]}"
    return found[0]


@pytest.fixture(scope="module")
def r1(tmp_path_factory):
    """R1 (16 NewReno flows on 100 Mbit/s, 60 s) and the description of its plot."""
    result = flowshare.run(ROOT / "scenarios" / "r1-dumbbell.toml", progress=False)
    path = tmp_path_factory.mktemp("r1") / "plot.png"
    return result, result.plot(path), path


def test_r1_plot_has_every_panel_with_units(r1):
    _, d, path = r1
    assert path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    ids = [p["id"] for p in d["panels"]]
    assert ids == ["goodput", "send_rate", "cwnd", "queue", "rtt_cdf", "delay_cdf"]
    labels = {p["id"]: (p["x_label"], p["y_label"]) for p in d["panels"]}
    assert labels["goodput"] == ("time (s)", "goodput (Mbit/s)")
    assert labels["send_rate"] == ("time (s)", "sending rate (Mbit/s)")
    assert labels["cwnd"] == ("time (s)", "cwnd (segments)")
    assert labels["queue"] == ("time (s)", "queue (packets)")
    assert labels["rtt_cdf"] == ("RTT (ms)", "fraction of samples")
    # One-way delay: at least the 22 ms of propagation of every R1 path, and at most that plus
    # a full 250-packet queue at 100 Mbit/s (30 ms) and the serializations (52.2 ms), up to the
    # width of a histogram bin (1/32) and the axis margin.
    delay = panel(d, "delay_cdf")
    assert delay["x_label"] == "one-way delay (ms)"
    assert 22.0 < delay["x_lim"][1] <= 52.2 * (1 + 1 / 32) * 1.06
    assert "delivered goodput" in panel(d, "goodput")["title"]
    assert "retransmissions included" in panel(d, "send_rate")["title"]
    assert all(p["x_lim"] == [0.0, 60.0] for p in d["panels"] if p["x_label"] == "time (s)")


def test_r1_goodput_total_stays_within_the_link_capacity(r1):
    _, d, _ = r1
    goodput = panel(d, "goodput")
    total = series(goodput, "total of 16 flows")
    capacity = series(goodput, "bottleneck capacity")
    assert capacity["y_max"] == pytest.approx(100.0)
    assert 80.0 < total["y_max"] <= 100.0
    # The sending rate (retransmissions included) is a separate panel.
    assert series(panel(d, "send_rate"), "total of 16 flows")["points"] == total["points"]


def test_r1_cwnd_axis_shows_the_steady_state_and_says_what_it_clips(r1):
    result, d, _ = r1
    cwnd = panel(d, "cwnd")
    peak = float(result.flow_series["cwnd"].max())
    assert cwnd["y_lim"][1] < peak
    assert any("clipped" in n for n in cwnd["notes"])
    assert "clipped" in cwnd["title"]
    assert all(s["y_max"] is None or s["y_max"] <= cwnd["y_lim"][1] for s in cwnd["series"])


def test_r1_sixteen_flows_are_summarised_by_group(r1):
    _, d, _ = r1
    for p in d["panels"]:
        assert len(p["legend"]) <= 4, p["legend"]
    goodput = panel(d, "goodput")
    assert goodput["legend"] == [
        "newreno (16 flows): mean, band min-max",
        "total of 16 flows",
        "bottleneck capacity 100 Mbit/s",
    ]
    assert [s["kind"] for s in goodput["series"]][:2] == ["band", "line"]
    assert panel(d, "rtt_cdf")["legend"][0].startswith("newreno (")


def test_r1_queue_panel_shows_the_bottleneck(r1):
    _, d, _ = r1
    queue = panel(d, "queue")
    assert queue["legend"] == ["r0->r1 (100 Mbit/s)"]
    line = queue["series"][0]
    assert line["points"] == 600
    assert 0 < line["y_max"] <= 250  # the queue holds 250 packets
    assert "max queueing delay" in queue["title"]


def test_r1_plot_is_deterministic(r1, tmp_path):
    result, d, path = r1
    again = tmp_path / "again.png"
    assert result.plot(again) == d
    assert again.read_bytes() == path.read_bytes()


def test_udp_flows_are_not_in_the_cwnd_panel(tmp_path):
    result = flowshare.run(ROOT / "scenarios" / "udp-cbr-vs-tcp.toml", progress=False)
    d = result.plot(tmp_path / "p.png")
    udp = set(result.flows.loc[result.flows["transport"] == "udp", "name"])
    assert udp
    cwnd = panel(d, "cwnd")
    assert cwnd["title"].startswith("cwnd of the 2 TCP flows")
    assert not [s for s in cwnd["series"] if s["name"].split()[0] in udp]
    # Few flows: one line and one legend entry each in the goodput panel.
    names = panel(d, "goodput")["legend"]
    assert len([n for n in names if not n.startswith(("total", "bottleneck"))]) == len(result.flows)


def test_the_delay_cdf_is_drawn_from_the_delay_histograms(tmp_path):
    raw = core_result()
    result = RunResult.from_core(raw, tiny_scenario_dict())
    assert "delay_cdf" not in [p["id"] for p in result.plot(tmp_path / "a.png")["panels"]]
    raw["delays"] = {
        "flow": num([0, 0, 1], "<i8"),
        "bin_lo_s": num([0.01, 0.02, 0.01]),
        "bin_hi_s": num([0.02, 0.03, 0.02]),
        "count": num([3, 1, 4], "<i8"),
    }
    result = RunResult.from_core(raw, tiny_scenario_dict())
    delay = panel(result.plot(tmp_path / "b.png"), "delay_cdf")
    assert delay["x_label"] == "one-way delay (ms)"
    assert delay["legend"] == ["bulk (8 packets)"]
    assert delay["series"][0]["y_max"] == 1.0


def test_a_run_without_samples_says_so(tmp_path):
    raw = core_result()
    for key in ("flow_series", "queue_series"):
        raw[key] = {name: (col[0], b"") for name, col in raw[key].items()}
    d = RunResult.from_core(raw, {}).plot(tmp_path / "p.png")
    assert [p["title"] for p in d["panels"]] == [
        "no time series recorded (simulation.sample_interval = 0)"
    ]


def test_the_description_is_plain_json(r1):
    json.dumps(r1[1], allow_nan=False)


def test_seqplot_draws_each_flow_from_the_event_trace(tmp_path, capsys):
    from flowshare import cli

    text = (ROOT / "scenarios" / "udp-cbr-vs-tcp.toml").read_text()
    path = tmp_path / "s.toml"
    path.write_text(text.replace('duration = "30s"', 'duration = "3s"') + "\n[trace]\nevents = true\n")
    out = tmp_path / "out"
    assert cli.main(["run", str(path), "--out", str(out), "--no-progress", "--seqplot", "0", "1"]) == 0
    assert (out / "seqplot.png").read_bytes().startswith(b"\x89PNG")
    assert "seqplot.png" in capsys.readouterr().out
    result = flowshare.run(path, progress=False)
    from flowshare.results import seqplot

    d = seqplot(result, [1], tmp_path / "s.png")
    (p,) = d["panels"]
    assert p["x_label"] == "time (s)" and p["y_label"] == "segment number"
    names = [s["name"].split(" (")[0] for s in p["series"]]
    assert names[0] == "sent" and "cumulative ACK received" in names
    assert all(s["kind"] == "points" and s["points"] > 0 for s in p["series"])


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("", "--seqplot: needs the event trace; set [trace] events = true"),
        ("\n[trace]\nevents = true\n", "--seqplot: flow 9 does not exist; flows are 0..3"),
    ],
)
def test_seqplot_errors_are_one_line(tmp_path, capsys, extra, message):
    from flowshare import cli

    text = (ROOT / "scenarios" / "udp-cbr-vs-tcp.toml").read_text()
    path = tmp_path / "s.toml"
    path.write_text(text.replace('duration = "30s"', 'duration = "1s"') + extra)
    out = tmp_path / "out"
    assert cli.main(["run", str(path), "--out", str(out), "--no-progress", "--seqplot", "9"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"flowshare: error: {message}") and err.count("\n") == 1
    assert not out.exists()


def test_the_run_command_imports_no_numerical_python(tmp_path):
    # flowshare run writes every file from Rust: numpy, pandas, pyarrow and matplotlib stay out
    # of the process (docs/adr/0009-outputs-written-from-rust.md).
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from flowshare import cli\n"
        f"assert cli.main(['run', {str(ROOT / 'scenarios' / 'demo.toml')!r}, '--out', "
        f"{str(tmp_path / 'out')!r}, '--no-progress']) == 0\n"
        "heavy = [m for m in ('numpy', 'pandas', 'pyarrow', 'matplotlib') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "HEAVY []" in done.stdout
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(
        ["flows.csv", "queues.csv", "delays.csv", "fct.csv", "timeseries.parquet", "summary.json", "plot.png"]
    )
