"""Inputs that once crashed, hung or gave a wrong answer: each now gives a one-line error or a
correct result."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import tomllib

from pathlib import Path

import pandas as pd
import pytest

import flowshare
import flowshare._series
import flowshare.cli
import flowshare.guard

ROOT = Path(__file__).resolve().parents[1]


def scenario(topology: str = "", flows: str = "", duration: str = "2s") -> str:
    topology = topology or (
        'kind = "dumbbell"\n'
        'bottleneck = { rate = "10Mbps", delay = "10ms" }\n'
        'access = { rate = "100Mbps", delay = "1ms" }'
    )
    flows = flows or '[[flows]]\nname = "a"'
    return f'[simulation]\nduration = "{duration}"\n\n[topology]\n{topology}\n\n{flows}\n'


@pytest.fixture
def write(tmp_path):
    def write(text: str) -> str:
        path = tmp_path / "scenario.toml"
        path.write_text(text)
        return str(path)

    return write


def error_of(path: str) -> str:
    with pytest.raises(flowshare.ConfigError) as e:
        flowshare.validate(path)
    message = str(e.value)
    assert "\n" not in message, message
    return message


def test_fq_codel_buckets_have_an_upper_bound(write):
    # Once: `validate` aborted the interpreter allocating a billion buckets.
    top = (
        'kind = "dumbbell"\n'
        'bottleneck = { rate = "10Mbps", delay = "10ms", queue = { kind = "fq_codel", limit = 100, '
        "buckets = 1000000000 } }\n"
        'access = { rate = "100Mbps", delay = "1ms" }'
    )
    assert "buckets: must be at most 65536" in error_of(write(scenario(topology=top)))


def test_initial_window_has_an_upper_bound(write):
    # Once: `run` aborted the interpreter sending 10^8 segments at once.
    flows = '[[flows]]\nname = "a"\ntcp = { initial_window = 1e8 }'
    message = error_of(write(scenario(flows=flows)))
    assert "initial_window: must be at most 1000000 segments" in message


@pytest.mark.parametrize(
    "where, value, expected",
    [
        ("duration", '"1e12s"', "must be at most 1000000000s"),
        ("duration", '"1e300s"', "must be at most 1000000000s"),
        ("duration", "1e300", '1e300 has no unit; write a time such as "1e300ms"'),
        ("rate", '"1e30bps"', "must be at most 10000Gbps"),
        ("size", '"1e20B"', "must be at most 1000000GB"),
    ],
)
def test_quantities_beyond_their_limits_are_refused_not_clamped(write, where, value, expected):
    # Once: clamped to u64's range (584 years, 1.8e19 bit/s, 1.8e19 bytes) and accepted.
    if where == "duration":
        text = scenario().replace('duration = "2s"', f"duration = {value}")
    elif where == "rate":
        text = scenario(topology=textwrap.dedent(f"""\
            kind = "dumbbell"
            bottleneck = {{ rate = {value}, delay = "10ms" }}
            access = {{ rate = "100Mbps", delay = "1ms" }}"""))
    else:
        text = scenario(flows=f'[[flows]]\nname = "a"\nsize = {value}')
    assert expected in error_of(write(text))


def test_start_spacing_that_would_pass_the_largest_time_is_refused(write):
    # Once: start + i * spacing wrapped in u64 nanoseconds; the third flow started at 0 s.
    flows = '[[flows]]\nname = "a"\ncount = 3\nstart_spacing = "9e8s"'
    message = error_of(write(scenario(flows=flows)))
    assert "flows[0].start_spacing: flow 2 of the group would start at" in message, message


def test_a_handshake_keeps_packets_conserved(write):
    # Once: the SYN was counted as received but not as sent.
    flows = '[[flows]]\nname = "a"\ncount = 2\ntcp = { handshake = true }'
    r = flowshare.run(write(scenario(flows=flows)))
    f = r.flows
    lhs = f["packets_sent"]
    rhs = f["packets_received"] + f["drops"] + f["link_losses"] + f["in_network_end"]
    assert (lhs == rhs).all(), f[["packets_sent", "packets_received", "drops"]]


@pytest.mark.parametrize("node", ["../escaped", "a/b", ".hidden", "x" * 65, "with space"])
def test_node_names_are_safe_as_file_names(write, node):
    # Once: a node named "../escaped" put its pcap capture outside the output directory.
    top = textwrap.dedent(f"""\
        kind = "graph"
        nodes = ["{node}", "b"]
        links = [{{ from = "{node}", to = "b", rate = "10Mbps", delay = "1ms" }}]""")
    flows = f'[[flows]]\nname = "a"\nsrc = "{node}"\ndst = "b"'
    assert "topology.nodes[0]: node name" in error_of(write(scenario(topology=top, flows=flows)))


def test_flow_names_have_a_length_limit(write):
    # Once: a 1 MB flow name validated, and the run hung drawing its legend.
    flows = f'[[flows]]\nname = "{"f" * 1_000_000}"'
    message = error_of(write(scenario(flows=flows)))
    assert "flows[0].name: must be at most 64 characters" in message
    assert len(message) < 400


def test_a_scenario_must_be_a_regular_file_of_bounded_size(tmp_path):
    # Once: a scenario linked to /dev/zero was read until memory ran out; a FIFO blocked.
    zero = tmp_path / "zero.toml"
    zero.symlink_to("/dev/zero")
    with pytest.raises(flowshare.ConfigError, match="not a regular file"):
        flowshare.validate(str(zero))
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    with pytest.raises(flowshare.ConfigError, match="not a regular file"):
        flowshare.validate(str(fifo))
    big = tmp_path / "big.toml"
    big.write_text("#" * (17 * 1024 * 1024))
    with pytest.raises(flowshare.ConfigError, match="may have at most 16777216 bytes"):
        flowshare.validate(str(big))


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_terminated_run_leaves_no_partial_output(tmp_path, sig):
    # Once: SIGTERM while `flowshare run` wrote its results left a hidden staging directory.
    path = tmp_path / "long.toml"
    path.write_text(
        scenario(
            topology='kind = "dumbbell"\nbottleneck = { rate = "1Gbps", delay = "10ms" }\n'
            'access = { rate = "10Gbps", delay = "1ms" }',
            flows='[[flows]]\nname = "a"\ncount = 8',
            duration="600s",
        )
    )
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "flowshare", "run", str(path), "--out", str(out), "--no-progress"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not any(p.name.startswith(".out.partial") for p in tmp_path.iterdir()):
        assert proc.poll() is None and time.monotonic() < deadline, "the run did not start"
        time.sleep(0.05)
    time.sleep(0.5)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err
    assert "interrupted; no output written" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.toml"]


@pytest.mark.parametrize(
    "argv, expected",
    [
        # Once a TypeError traceback.
        (
            ["multfrc", "n=5", "p=0.01", "j=1", "rtt=100ms", "rto=400ms", "threshold=1:10:5"],
            "threshold cannot be a range for model multfrc",
        ),
        # Once an OverflowError traceback.
        (["hasegawa-tahoe-wmax", "b_f=1e308"], "has no finite result for b_f=1e+308"),
        # Once a 7.45 GiB allocation and a MemoryError traceback.
        (["pftk", "p=0.001:0.1:1000000000", "rtt=100ms", "rto=400ms"], "must be at most 100000"),
        # Once "inf pkt/s" with exit 0, after RuntimeWarnings on stderr.
        (["mathis", "p=5e-324", "rtt=100ms"], "has no finite result"),
        # Once "w must be > 0, got nan": an internal variable.
        (["parallel-a", "n=1e308", "p=0.5", "rtt=500ms", "rto=500ms"], "has no finite result"),
    ],
)
def test_model_cli_gives_one_line_errors_at_the_edges(capsys, argv, expected):
    from flowshare import cli

    assert cli.main(["model", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and expected in err, err
    assert "Warning" not in err and "Traceback" not in err


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["run", "x.toml", "--out", "o", "--seed", "-1"], "--seed: expected an integer from 0"),
        (["run", "x.toml", "--out", ""], "--out: expected a directory path, got an empty one"),
        (
            ["model", "pftk", "p=0.001:0.1:5", "rtt=100ms", "rto=400ms", "--plot", "/no/x.png"],
            "--plot /no/x.png: directory /no does not exist",
        ),
        (
            ["model", "pftk", "p=0.001:0.1:5", "rtt=100ms", "rto=400ms", "--plot", "x.txt"],
            "--plot x.txt: the plot is a PNG",
        ),
    ],
)
def test_cli_messages_name_what_the_user_gave(capsys, argv, expected):
    # Once: a bad --seed was an error "in the scenario" at a column of internal JSON, --out ''
    # wrote into the current directory, and --plot errors named a hidden temporary file.
    from flowshare import cli

    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1, err


def test_a_model_plot_gets_the_mode_of_other_output_files(tmp_path):
    # Once: created 0600 (private), unlike every other file written.
    from flowshare import cli

    plot = tmp_path / "m.png"
    argv = ["model", "pftk", "p=0.001:0.1:5", "rtt=100ms", "rto=400ms", "--plot", str(plot)]
    assert cli.main(argv) == 0
    umask = os.umask(0)
    os.umask(umask)
    assert plot.stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_time_series_beyond_the_work_budget_is_refused(write, capsys):
    # Once: a 1 us sample interval over 2 s ran out of memory (a Rust panic or SIGABRT). The
    # series now stream to disk; a 1 ns interval (2.8e10 rows) is refused by the guard.
    text = scenario(flows='[[flows]]\nname = "a"\ncount = 4').replace(
        'duration = "2s"', 'duration = "2s"\nsample_interval = "1ns"'
    )
    path = write(text)
    assert flowshare.cli.main(["run", path, "--out", str(Path(path).parent / "out")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        "flowshare: error: simulation.sample_interval: the run would take about 4.6e+10"
    ), err
    assert "more than the budget of 1e+10; a sample_interval of at least 5ns fits" in err
    assert "--force" in err
    assert err.count("\n") == 1
    assert not (Path(path).parent / "out").exists()
    assert not [p for p in Path(path).parent.iterdir() if p.name.startswith(".")]


def test_a_long_run_streams_its_series_and_trace_to_disk_unchanged(tmp_path, monkeypatch):
    # Once: writing the results of a long run needed about 4x the simulation's memory and
    # failed after a finished 2,000-flow, 120 s run. Past a threshold the time series and the
    # trace go to disk chunk by chunk; the files written are the same.
    text = scenario(flows='[[flows]]\nname = "a"\ncount = 3\nstart_spacing = "0.1s"').replace(
        'duration = "2s"', 'duration = "2s"\nsample_interval = "10ms"'
    ) + "\n[trace]\nevents = true\n"
    path = tmp_path / "s.toml"
    path.write_text(text)
    kept = flowshare.run(str(path))
    kept.write(tmp_path / "memory")
    monkeypatch.setattr(flowshare._series, "SPILL_BYTES", 4096)
    spill = tmp_path / "spill"
    spill.mkdir()
    spilled = flowshare.run(str(path), spill_dir=spill)
    assert spilled._data is not None and spilled._data.spilled
    assert [p.name for p in spill.iterdir()][0].startswith(".flowshare-spill-")
    spilled.write(tmp_path / "disk")
    for name in ("timeseries.parquet", "events.parquet"):
        a = pd.read_parquet(tmp_path / "memory" / name)
        b = pd.read_parquet(tmp_path / "disk" / name)
        pd.testing.assert_frame_equal(a, b)
        assert len(a) > 1000
    for name in ("plot.png", "flows.csv", "queues.csv"):
        assert (tmp_path / "memory" / name).read_bytes() == (tmp_path / "disk" / name).read_bytes()
    pd.testing.assert_frame_equal(kept.flow_series, spilled.flow_series)
    pd.testing.assert_frame_equal(kept.events, spilled.events)
    del spilled
    import gc

    gc.collect()
    assert list(spill.iterdir()) == []


def test_an_absurd_load_is_refused_before_it_runs_naming_its_flow_group(write, capsys, tmp_path):
    # Once: 100 Gbit/s of 1-byte packets (or a 1e9 s duration) was accepted and ran for ever.
    flows = (
        '[[flows]]\nname = "a"\ncount = 2\n\n[[flows]]\nname = "u"\ntransport = "udp"\n'
        'source = { kind = "cbr", rate = "100Gbps", packet_size = "1B" }'
    )
    path = write(scenario(flows=flows))
    assert flowshare.cli.main(["run", path, "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("flowshare: error: flows[1]: the run would take about 2.5e+10 events")
    assert "of simulation.duration fits" in err
    with pytest.raises(flowshare.guard.BudgetError, match=r"flows\[1\]"):
        flowshare.run(path)
    assert flowshare.cli.main(["validate", path]) == 1
    assert "flows[1]: the run would take" in capsys.readouterr().err


def test_the_budget_is_configurable_and_force_runs_anyway(write, capsys, tmp_path):
    # Without time series the connections are what the run holds, so the error names them.
    text = scenario(flows='[[flows]]\nname = "a"\ncount = 2')
    path = write(text.replace('duration = "2s"', 'duration = "2s"\nsample_interval = "0s"'))
    assert flowshare.cli.main(["validate", path]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ok: 2 flows, 5 links, 2 s; about ") and " events, " in out
    out_dir = str(tmp_path / "out")
    assert flowshare.cli.main(["run", path, "--out", out_dir, "--max-events", "1000"]) == 1
    err = capsys.readouterr().err
    assert "flows[0]: the run would take" in err and "more than the budget of 1e+03" in err
    assert flowshare.cli.main(["run", path, "--out", out_dir, "--max-memory", "1MB"]) == 1
    err = capsys.readouterr().err
    assert "flows[0].count: the run would need about" in err, err
    assert "this process holds" in err and "more than the memory budget (1 MB)" in err
    assert not (tmp_path / "out").exists()
    argv = ["run", path, "--out", out_dir, "--max-events", "1000", "--max-memory", "1MB"]
    assert flowshare.cli.main([*argv, "--force"]) == 0
    assert (tmp_path / "out" / "flows.csv").exists()
    for bad, message in (
        (["--max-memory", "lots"], "expected a size such as 4GiB or 500MB"),
        (["--max-events", "-3"], "expected a finite number >= 1"),
        (["--max-events", "inf"], "expected a finite number >= 1"),
    ):
        assert flowshare.cli.main(["validate", path, *bad]) == 2
        assert message in capsys.readouterr().err
    with pytest.raises(flowshare.ConfigError, match="max_events: expected a positive number"):
        flowshare.guard.Budget(max_events=float("nan"))


@pytest.mark.parametrize(
    "name", ["demo", "graph", "parking-lot", "udp-cbr-vs-tcp", "priority-vbr", "r1-dumbbell"]
)
def test_the_event_estimate_is_within_a_small_factor_of_the_run(name):
    from flowshare import sim

    _, core = sim._prepare(ROOT / "scenarios" / f"{name}.toml")
    estimate = core.estimate["events"]
    events = core.finish()["summary"]["events"]
    assert 0.3 < estimate / events < 3, (estimate, events)



def test_run_builds_the_network_once(write, tmp_path, monkeypatch):
    # Once: `run` built the network three times (and `validate` twice), which cost seconds
    # with 20,000 flows before anything was simulated.
    from flowshare import _core

    builds = []
    real_simulation, real_parse = _core.Simulation, _core.parse_scenario

    def simulation(*args, **kwargs):
        builds.append("Simulation")
        return real_simulation(*args, **kwargs)

    def parse(*args, **kwargs):
        builds.append("parse_scenario")
        return real_parse(*args, **kwargs)

    monkeypatch.setattr(_core, "Simulation", simulation)
    monkeypatch.setattr(_core, "parse_scenario", parse)
    trace = '\n[trace]\npcap = ["bottleneck"]\n'
    path = write(scenario(flows='[[flows]]\nname = "a"\ncount = 3', duration="0.5s") + trace)
    assert flowshare.cli.main(["run", path, "--out", str(tmp_path / "out")]) == 0
    assert builds == ["Simulation"]
    assert flowshare.cli.main(["validate", path]) == 0
    assert builds == ["Simulation"] * 2


@pytest.mark.parametrize(
    "table, array, field",
    [
        ('[simulation]\nduration = "2s"', 'simulation = ["2s", 5, "100ms"]', "simulation"),
        (
            'bottleneck = { rate = "10Mbps", delay = "10ms" }',
            'bottleneck = ["10Mbps", "10ms"]',
            "topology.bottleneck",
        ),
    ],
)
def test_tables_written_as_positional_arrays_are_refused(write, table, array, field):
    # Once: values bound by position (serde's sequence form of a struct), unnoticed.
    document = scenario()
    assert table in document
    message = error_of(write(document.replace(table, array)))
    assert message.endswith(f"{field}: expected a table of named fields, got an array"), message


def test_a_json_scenario_must_be_an_object(tmp_path):
    normalized = flowshare.validate(_tiny(tmp_path))
    path = tmp_path / "list.json"
    path.write_text(json.dumps([normalized]))
    with pytest.raises(flowshare.ConfigError) as e:
        flowshare.validate(str(path))
    assert str(e.value).endswith(
        "expected a JSON object with simulation, topology and flows at the top level, got an array"
    )


def _tiny(tmp_path) -> str:
    path = tmp_path / "tiny.toml"
    path.write_text(scenario())
    return str(path)


CASES = Path(__file__).parent / "cases" / "reliability"
"""The scenario files that once crashed, hung or gave a wrong answer (each says what was seen in
its header), as they were found."""

EXPECTED = {
    "01-validate-aborts-fqcodel-buckets": "topology.bottleneck.queue.buckets: must be at most 65536",
    "02-run-aborts-initial-window": "flows[0].tcp.initial_window: must be at most 1000000 segments",
    "03-run-panic-sample-interval": None,
    "04-quadratic-build-20000-flows": None,
    "05-write-memoryerror-2000-flows-120s": None,
    "06-start-spacing-wraps": "flows[0].start_spacing: must be at most 1000000000s",
    "07-huge-values-silently-clamped": "flows[0].size: must be at most 1000000GB, got 1e20B",
    "08-handshake-breaks-conservation": None,
    "09-pcap-path-traversal": 'topology.nodes[0]: node name "../../escaped" is not allowed',
    "17-positional-arrays-accepted": "simulation: expected a table of named fields, got an array",
    "19-no-event-rate-guard": "flows[1].source.rate: must be at most 10000Gbps, got 1e15bps",
}


def test_every_reproducer_file_is_covered():
    assert sorted(p.stem for p in CASES.glob("*.toml")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_reproducer_gives_a_one_line_error_or_validates_within_budget(name, capsys):
    path = str(CASES / f"{name}.toml")
    status = flowshare.cli.main(["validate", path])
    out, err = capsys.readouterr()
    expected = EXPECTED[name]
    if expected is None:
        assert status == 0 and out.startswith("ok: ") and out.count("\n") == 1, (out, err)
    else:
        assert status == 1 and err.count("\n") == 1, err
        assert err.startswith(f"flowshare: error: {path}: {expected}"), err


def test_the_handshake_reproducer_conserves_packets():
    result = flowshare.run(str(CASES / "08-handshake-breaks-conservation.toml"))
    f = result.flows
    lost = f["drops"] + f["link_losses"] + f["in_network_end"]
    assert (f["packets_sent"] == f["packets_received"] + lost).all()


def test_a_long_silent_phase_says_what_it_is_doing(monkeypatch, capsys):
    # Once: nothing was shown while a large network was built or its results written.
    from flowshare import sim

    monkeypatch.setattr(sim, "PROGRESS_DELAY_S", 0.01)
    with sim.status("building the network", enabled=True):
        time.sleep(0.5)
    with sim.status("writing out", enabled=False):
        time.sleep(0.05)
    with sim.status("quick", enabled=True):
        pass
    time.sleep(0.05)
    assert capsys.readouterr().err == "flowshare: building the network...\n"


def test_a_long_series_is_plotted_as_means_with_bounded_points(tmp_path):
    # Once: a 1 us sample interval over 2 s (2 million samples) drew every point, and the plot
    # took 1.5 GB.
    import numpy as np
    from core_tables import core_result, num

    from flowshare.results import RunResult

    n = 30_007
    t = np.repeat(np.arange(1, n + 1) * 1e-3, 2)
    series = {
        "time_s": num(t),
        "flow": num(np.tile([0, 1], n), "<i8"),
        "send_rate_bps": num(np.full(2 * n, 1e6)),
        "goodput_bps": num(np.full(2 * n, 1e6)),
        "cwnd": num(np.tile([2.0, 4.0], n)),
    }
    raw = core_result()
    raw["flow_series"] = series
    half = {k: (v[0], v[1][: 8 * 2 * 5000]) for k, v in series.items()}
    rest = {k: (v[0], v[1][8 * 2 * 5000 :]) for k, v in series.items()}
    from flowshare._series import RunData

    data = RunData()
    data.add({"flow_series": half, "queue_series": raw["queue_series"]}, None)
    empty = {k: (v[0], b"") for k, v in raw["queue_series"].items()}
    data.add({"flow_series": rest, "queue_series": empty}, None)
    d = RunResult.from_core(raw, {}, data=data).plot(tmp_path / "p.png")
    for p in d["panels"]:
        if p["x_label"] == "time (s)":
            assert all(s["points"] <= 4000 for s in p["series"]), p["id"]
    rate = d["panels"][0]
    total = [s for s in rate["series"] if s["name"].startswith("total")][0]
    assert total["points"] <= 120
    assert total["y_min"] == pytest.approx(2.0) and total["y_max"] == pytest.approx(2.0)

def test_a_signal_ignored_at_start_stays_ignored_like_nohup():
    # Once: `nohup flowshare run ...` still stopped with exit 129 when the terminal closed.
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with flowshare.cli._termination_unwinds():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) is flowshare.cli._raise_terminated
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)


def test_a_parking_lot_has_at_most_100000_routers(write):
    # Once: a billion routers were built until memory ran out (ten million took 80 s).
    top = (
        'kind = "parking_lot"\nrouters = 1000000000\n'
        'link = { rate = "10Mbps", delay = "1ms" }\naccess = { rate = "100Mbps", delay = "1ms" }'
    )
    message = error_of(write(scenario(topology=top)))
    assert message.endswith("topology.routers: must be at most 100000, got 1000000000"), message


def test_a_scenario_mapping_json_cannot_carry_is_refused_in_one_line():
    # Once: a string holding a lone surrogate (what os.fsdecode makes of a byte that is not
    # UTF-8) raised UnicodeEncodeError, and a mapping nested 5000 deep RecursionError.
    from flowshare import scenario as sc

    def dumbbell(name):
        return sc.dumbbell(
            bottleneck=sc.link(rate="10Mbps", delay="10ms"),
            access=sc.link(rate="100Mbps", delay="1ms"),
            flows=sc.flows(name=name),
            duration="1s",
        )

    for call in (flowshare.validate, flowshare.run):
        with pytest.raises(flowshare.ConfigError) as e:
            call(dumbbell("a\udcff"))
        assert str(e.value).startswith("flows[0].name: ") and "\n" not in str(e.value), e.value
    deep = 1
    for _ in range(5000):
        deep = {"k": deep}
    with pytest.raises(flowshare.ConfigError, match="nested too deeply"):
        flowshare.validate({**dumbbell("a"), "x": deep})


def test_an_interrupt_after_the_output_is_written_says_so(write, tmp_path, capsys, monkeypatch):
    # Once: a signal while the goodput table was printed said "no output written", although
    # the output directory was complete.
    path = write(scenario(duration="0.5s"))

    def interrupted(_result):
        raise KeyboardInterrupt

    monkeypatch.setattr(flowshare.cli, "_print_flows", interrupted)
    out = tmp_path / "out"
    assert flowshare.cli.main(["run", path, "--out", str(out)]) == 130
    assert capsys.readouterr().err == f"flowshare: interrupted; {out} was written whole\n"
    assert (out / "flows.csv").exists()


def test_a_sweep_arm_over_the_budget_is_refused_before_anything_runs(tmp_path, capsys):
    from flowshare.study import load_sweep

    (tmp_path / "base.toml").write_text(scenario(), encoding="utf-8")
    body = 'base = "base.toml"\n[grid]\n"simulation.duration" = ["1s", "1000000000s"]\n'
    (tmp_path / "sweep.toml").write_text(body, encoding="utf-8")
    with pytest.raises(flowshare.ConfigError) as e:
        load_sweep(str(tmp_path / "sweep.toml")).validate()
    message = str(e.value)
    assert 'arm 1 (simulation.duration = "1000000000s")' in message
    assert "flows[0]: the run would take" in message
    assert flowshare.cli.main(["sweep", str(tmp_path / "sweep.toml"), "--out", str(tmp_path / "s")]) == 1
    assert not (tmp_path / "s").exists()


def test_line_breaks_in_keys_and_names_stay_on_one_line(write):
    # Once: a node named "a\nb" or an unknown key "x\ny" gave a message of two lines.
    top = (
        'kind = "graph"\nnodes = ["a\\nb", "c"]\n'
        'links = [{ from = "a\\nb", to = "c", rate = "10Mbps", delay = "1ms" }]'
    )
    message = error_of(write(scenario(topology=top, flows='[[flows]]\nsrc = "a\\nb"\ndst = "c"')))
    assert 'node name "a\\nb" is not allowed' in message
    message = error_of(write(scenario(flows='[[flows]]\nname = "a"\n"x\\ry" = 1')))
    assert message.count("\n") == 0 and "x\\ry" in message


def test_more_connections_than_memory_can_build_are_refused_before_building(write):
    # Once: 2,000,000 flows took 3.6 GB to validate, and 4e9 closed-loop users more than 20 GB
    # (or an abort under ulimit), before the guard could estimate anything.
    budget = flowshare.guard.Budget(max_memory=2 * 10**9)
    path = write(scenario(flows='[[flows]]\nname = "a"\ncount = 2000000'))
    with pytest.raises(flowshare.ConfigError, match=r"^.*flows\[0\]\.count: 2000000 connections"):
        flowshare.validate(path, budget=budget)
    users = (
        '[[flows]]\nname = "w"\narrivals = { process = "closed_loop", users = 4000000000, '
        'think = "1s", size = "10KB" }'
    )
    message = error_of(write(scenario(flows=users)))
    assert "flows[0].arrivals.users: 4000000000 connections in all would need more memory" in message
    with pytest.raises(flowshare.ConfigError, match="users: must be at most 1000000, got 4000000000"):
        flowshare.validate(write(scenario(flows=users)), budget=flowshare.guard.Budget(force=True))


def test_multcp_n_has_an_upper_bound(write):
    # Once: n = 1e9 on a lossy link sent 63 million packets and took 2.5 GB; 1e300 aborted.
    flows = '[[flows]]\nname = "a"\ntcp = { cc = { algo = "multcp", n = 1e9 } }'
    message = error_of(write(scenario(flows=flows)))
    assert "n: must be a number of flows from 1 to 10000, got 1000000000" in message


def test_an_output_path_that_is_not_utf8_is_a_usage_error(capsys):
    # Once: `--out $'\xff'` raised UnicodeEncodeError in the Parquet writer (a traceback).
    assert flowshare.cli.main(["run", "s.toml", "--out", "x\udcff"]) == 2
    assert "argument --out: expected a UTF-8 path" in capsys.readouterr().err


def test_validate_counts_connections_against_its_memory_budget(write, capsys):
    path = write(scenario(flows='[[flows]]\nname = "a"\ncount = 200000'))
    assert flowshare.cli.main(["validate", path, "--max-memory", "1GB"]) == 1
    err = capsys.readouterr().err
    assert "flows[0].count: 200000 connections in all would need more memory to build" in err


def test_a_huge_value_is_not_quoted_whole(write, capsys):
    # Once: a 100 kB string gave a 100 kB error line.
    huge = "x" * 100_000
    path = write(scenario().replace('duration = "2s"', f'duration = "{huge}"'))
    assert flowshare.cli.main(["validate", path]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) < 1200, len(err)
    assert err.startswith("flowshare: error: ") and "characters in all)" in err


def test_an_output_directory_with_a_name_of_255_bytes_can_be_written(write, tmp_path):
    # Once: the hidden staging name, 25 bytes longer than the target's, was too long to create.
    path = write(scenario(duration="0.2s"))
    out = tmp_path / ("o" * 255)
    assert flowshare.cli.main(["run", path, "--out", str(out), "--no-progress"]) == 0
    assert (out / "flows.csv").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_sweep_base_that_is_never_run_as_it_stands_is_not_judged_by_the_guard():
    # Once: a reproduction's sweep, run with force=True, was refused because its base (the
    # first arm's scenario, never run as such) had a drop trace the guard costs as a full one.
    from flowshare.study.sweep import load_sweep

    base = tomllib.loads(scenario(flows='[[flows]]\nname = "a"\ncount = 2',
                                  duration="100000000s"))
    doc = {"base": base, "points": [{"simulation.duration": "1s"},
                                    {"simulation.duration": "2s"}]}
    sweep = load_sweep(doc)
    assert len(sweep.validate()) == 2
    # An arm that is itself beyond the budget is still refused, unless forced.
    doc["points"].append({"simulation.duration": "100000000s"})
    sweep = load_sweep(doc)
    with pytest.raises(flowshare.ConfigError, match="the run would take"):
        sweep.validate()
    assert len(sweep.validate(force=True)) == 3


def test_a_documents_text_in_place_of_its_path_is_named_in_one_line(tmp_path, capsys):
    from flowshare import cli
    from flowshare.study import load_sweep

    text = Path(_tiny(tmp_path)).read_text()
    sweep = (Path(__file__).parents[1] / "scenarios" / "sweeps" / "factorial.toml").read_text()
    for call, what in ((lambda: flowshare.run(text), "scenario"),
                       (lambda: flowshare.validate(json.dumps(tomllib.loads(text))), "scenario"),
                       (lambda: load_sweep(sweep), "sweep")):
        with pytest.raises(flowshare.ConfigError) as e:
            call()
        message = str(e.value)
        assert "\n" not in message
        assert message.startswith(f"{what}: got a {what}'s text where its file name goes")
    # The parsed text runs.
    assert flowshare.validate(tomllib.loads(text))["flows"]
    assert cli.main(["validate", text]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("flowshare: error: scenario: got a")


def test_a_directory_or_budget_argument_of_the_wrong_kind_is_named_in_one_line(tmp_path,
                                                                                monkeypatch):
    from flowshare import live
    from flowshare.study import run_sweep, write_report

    monkeypatch.chdir(tmp_path)   # an empty path would otherwise be the working directory
    tiny = _tiny(tmp_path)
    result = flowshare.run(tiny)
    for call, message in (
        (lambda: flowshare.run(tiny, budget=5), "budget: expected a flowshare.guard.Budget, got 5"),
        (lambda: flowshare.validate(tiny, budget="x"),
         "budget: expected a flowshare.guard.Budget, got 'x'"),
        (lambda: flowshare.run(tiny, spill_dir=5), "spill_dir: expected a directory path, got 5"),
        (lambda: flowshare.run(tiny, pcap_dir=""), "pcap_dir: expected a directory path, got ''"),
        (lambda: result.write(""), "out_dir: expected a directory path, got ''"),
        (lambda: result.write(None), "out_dir: expected a directory path, got None"),
        (lambda: result.write_into(""), "directory: expected a directory path, got ''"),
        (lambda: run_sweep({"base": tiny, "parameters": {"simulation.seed": [1, 2]}}, ""),
         "out: expected a directory path, got ''"),
        (lambda: write_report(tmp_path, ""), "out: expected a directory path, got ''"),
        # Checked before the namespaces are made, so no privilege is needed to see it.
        (lambda: live.run(tiny, ""), "out: expected a directory path, got ''"),
        (lambda: live.run({"a": 1}, tmp_path / "live"),
         "scenario: expected the path of a .toml or .json file, got {'a': 1}"),
    ):
        with pytest.raises(flowshare.ConfigError) as caught:
            call()
        assert str(caught.value) == message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.toml"]


def test_a_flag_argument_that_is_not_a_bool_is_named_in_one_line(tmp_path):
    # "x" or 0 would otherwise count by its truth value: a progress bar asked for by accident,
    # or a sweep resumed (or not) by a string.
    from flowshare.reproduce import reproduce
    from flowshare.study import run_sweep

    tiny = _tiny(tmp_path)
    sweep = {"base": tiny, "parameters": {"simulation.seed": [1, 2]}}
    for call, message in (
        (lambda: flowshare.run(tiny, progress="x"),
         "progress: expected True, False or None, got 'x'"),
        (lambda: flowshare.run(tiny, progress=1), "progress: expected True, False or None, got 1"),
        (lambda: run_sweep(sweep, tmp_path / "s", progress="no"),
         "progress: expected True, False or None, got 'no'"),
        (lambda: run_sweep(sweep, tmp_path / "s", resume=None),
         "resume: expected True or False, got None"),
        (lambda: reproduce("efcm", tmp_path / "r", scale="quick", progress="yes"),
         "progress: expected True, False or None, got 'yes'"),
    ):
        with pytest.raises(flowshare.ConfigError) as caught:
            call()
        assert str(caught.value) == message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.toml"]
    assert flowshare.run(tiny, progress=False).flows.shape[0] == 1
