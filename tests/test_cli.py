"""The command line: exit codes, one-line errors, and nothing left behind on failure.

The tests at the top stub the simulation out (``flowshare.sim.run``) to check the CLI alone;
the ones under "real runs" run the native core on a tiny scenario.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from core_tables import TINY_TOML

from flowshare import cli, results, sim
from flowshare.results import OUTPUT_FILES

REPO = Path(__file__).resolve().parents[1]


def one_error_line(err: str) -> str:
    """The single stderr line of a failed command."""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("flowshare: error: "), err
    return lines[0]


# --- command line errors (status 2) -----------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], "required: COMMAND"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        (["run", "x.toml"], "required: --out"),
        (["run", "--out", "o"], "required: FILE"),
        (["run", "x.toml", "--out", "o", "--seed", "abc"], "invalid int value: 'abc'"),
        (["validate"], "required: FILE"),
        (["demo"], "required: --out"),
        (["run", "x.toml", "--out", "o", "--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_bad_command_lines_exit_2_with_one_line(argv, expected, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(argv) == 2
    out, err = capsys.readouterr()
    assert expected in one_error_line(err)
    assert out == ""
    assert list(tmp_path.iterdir()) == []


def test_help_and_version_exit_0(capsys):
    assert cli.main(["--help"]) == 0
    out, _ = capsys.readouterr()
    assert "run" in out and "validate" in out and "demo" in out
    assert "sweep" in out
    assert cli.main(["run", "--help"]) == 0
    assert "--seed" in capsys.readouterr().out
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("flowshare ")


# --- user errors (status 1) -------------------------------------------------------------------


def test_missing_scenario_file(capsys, tmp_path):
    out_dir = tmp_path / "out"
    assert cli.main(["run", str(tmp_path / "nope.toml"), "--out", str(out_dir)]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert line == f"flowshare: error: scenario file not found: {tmp_path / 'nope.toml'}"
    assert not out_dir.exists()


def test_validate_missing_file(capsys, tmp_path):
    assert cli.main(["validate", str(tmp_path / "nope.toml")]) == 1
    assert "not found" in one_error_line(capsys.readouterr().err)


def test_multi_line_error_messages_are_folded_into_one(capsys, monkeypatch):
    def broken(*_args, **_kwargs):
        raise cli.ConfigError("first line\n  second line\n")

    monkeypatch.setattr(sim, "run", broken)
    assert cli.main(["run", "x.toml", "--out", "o"]) == 1
    assert one_error_line(capsys.readouterr().err) == "flowshare: error: first line; second line"


# --- the run command with the simulation stubbed out ------------------------------------------


@pytest.fixture
def stub_run(monkeypatch, result):
    """Make ``flowshare.sim.run`` return the hand-built result; record its arguments."""
    calls = []

    def fake_run(scenario, *, seed=None, progress=None, **_options):
        calls.append({"scenario": scenario, "seed": seed, "progress": progress})
        return result

    monkeypatch.setattr(sim, "run", fake_run)
    return calls


def test_run_prints_goodput_table_and_paths(stub_run, capsys, tmp_path):
    out_dir = tmp_path / "out"
    argv = ["run", "s.toml", "--out", str(out_dir), "--seed", "9", "--no-progress"]
    assert cli.main(argv) == 0
    assert stub_run == [{"scenario": "s.toml", "seed": 9, "progress": False}]
    out = capsys.readouterr().out
    assert "goodput (Mbit/s)" in out
    assert "3.000" in out and "1.000" in out
    assert "Jain index 0.8000" in out
    for name in OUTPUT_FILES:
        assert str(out_dir / name) in out
        assert (out_dir / name).is_file()
    assert not (out_dir / "report.md").exists()


def test_run_progress_defaults_to_automatic(stub_run, tmp_path):
    assert cli.main(["run", "s.toml", "--out", str(tmp_path / "o")]) == 0
    assert stub_run[0]["progress"] is None


def test_interrupt_while_writing_leaves_nothing(stub_run, capsys, tmp_path, monkeypatch):
    def interrupted(_frame, path):
        path.write_bytes(b"PAR1 half")
        raise KeyboardInterrupt

    monkeypatch.setattr(results, "_write_parquet", interrupted)
    assert cli.main(["run", "s.toml", "--out", str(tmp_path / "out")]) == 130
    assert "interrupted" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_interrupt_while_simulating_leaves_nothing(capsys, tmp_path, monkeypatch):
    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(sim, "run", interrupted)
    assert cli.main(["demo", "--out", str(tmp_path / "out")]) == 130
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_turned_into_a_library_error_is_still_an_interruption(capsys, tmp_path, monkeypatch):
    # A C extension converting its arguments when SIGINT arrives (matplotlib's pybind11 code)
    # reports the pending KeyboardInterrupt as a failed overload, a TypeError.
    import os
    import signal

    def converting(*_args, **_kwargs):
        try:
            os.kill(os.getpid(), signal.SIGINT)
        except KeyboardInterrupt:
            raise TypeError("incompatible function arguments") from None

    monkeypatch.setattr(sim, "run", converting)
    assert cli.main(["demo", "--out", str(tmp_path / "out")]) == 130
    assert "interrupted" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_unwritable_output_is_a_one_line_error(stub_run, capsys, tmp_path, monkeypatch):
    def denied(_frame, path):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(results, "_write_parquet", denied)
    out_dir = tmp_path / "out"
    assert cli.main(["run", "s.toml", "--out", str(out_dir)]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert line == f"flowshare: error: --out: cannot write {out_dir}: Permission denied"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("command", "option"),
    [
        (["run", "s.toml", "--out"], "--out"),
        (["demo", "--out"], "--out"),
        (["sweep", str(REPO / "scenarios" / "sweeps" / "factorial.toml"), "--out"], "--out"),
        (["reproduce", "efcm", "--quick", "--out"], "--out"),
    ],
)
def test_an_output_path_that_cannot_be_created_names_its_option(
    stub_run, capsys, tmp_path, command, option
):
    # Under a regular file nothing can be created, whoever runs the test (root included).
    blocker = tmp_path / "file"
    blocker.write_text("")
    target = blocker / "deeper" / "out"
    assert cli.main([*command, str(target)]) == 1
    line = one_error_line(capsys.readouterr().err)
    # The path the user gave, never a staging name of ours (".out.partial-…", ".model-…").
    assert line == f"flowshare: error: {option}: cannot write {target}: Not a directory"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_a_plot_that_cannot_be_written_names_its_option(capsys, tmp_path, monkeypatch):
    import tempfile

    def refused(*, prefix, suffix, dir):
        raise PermissionError(13, "Permission denied", f"{dir}/{prefix}x{suffix}")

    monkeypatch.setattr(tempfile, "mkstemp", refused)
    target = tmp_path / "plot.png"
    argv = ["model", "mathis", "rtt=10ms:100ms:3", "p=0.01", "s=1460B", "--plot", str(target)]
    assert cli.main(argv) == 1
    line = one_error_line(capsys.readouterr().err)
    assert line == f"flowshare: error: --plot: cannot write {target}: Permission denied"


def test_output_onto_a_file_is_a_one_line_error(stub_run, capsys, tmp_path):
    target = tmp_path / "taken"
    target.write_text("")
    assert cli.main(["run", "s.toml", "--out", str(target)]) == 1
    assert "not a directory" in one_error_line(capsys.readouterr().err)


# --- real runs ------------------------------------------------------------------------------


def test_run_writes_all_five_files(tiny_toml, tmp_path, capsys):
    out_dir = tmp_path / "out"
    assert cli.main(["run", str(tiny_toml), "--out", str(out_dir), "--no-progress"]) == 0
    assert sorted(p.name for p in out_dir.iterdir()) == sorted(OUTPUT_FILES)
    out = capsys.readouterr().out
    assert "bulk" in out and "total goodput" in out


def test_run_twice_gives_byte_identical_tables(tiny_toml, tmp_path):
    for name in ("a", "b"):
        assert cli.main(["run", str(tiny_toml), "--out", str(tmp_path / name)]) == 0
    for name in ("flows.csv", "queues.csv", "timeseries.parquet"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_seed_changes_the_recorded_seed(tiny_toml, tmp_path):
    import json

    assert cli.main(["run", str(tiny_toml), "--out", str(tmp_path / "o"), "--seed", "11"]) == 0
    doc = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert doc["summary"]["seed"] == 11
    assert doc["scenario"]["simulation"]["seed"] == 11


def test_validate_ok(tiny_toml, capsys):
    assert cli.main(["validate", str(tiny_toml)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ok: 2 flows, 5 links, 2 s; about ") and out.endswith(" of memory\n")


def test_validate_names_the_bad_field(tmp_path, capsys):
    path = tmp_path / "bad.toml"
    path.write_text(TINY_TOML.replace('name = "bulk"', 'name = "bulk"\nstart = "soon"'))
    assert cli.main(["validate", str(path)]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith(f"flowshare: error: {path}: flows[0].start")


def test_run_with_a_bad_scenario_creates_no_directory(tmp_path, capsys):
    path = tmp_path / "bad.toml"
    path.write_text(TINY_TOML.replace('rate = "10Mbps"', 'rate = "10 parsecs"'))
    out_dir = tmp_path / "out"
    assert cli.main(["run", str(path), "--out", str(out_dir)]) == 1
    assert "topology.bottleneck.rate" in one_error_line(capsys.readouterr().err)
    assert not out_dir.exists()


def test_demo_falls_back_to_the_builtin_scenario(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli, "demo_scenario_path", lambda: tmp_path / "missing.toml")
    out_dir = tmp_path / "demo-out"
    assert cli.main(["demo", "--out", str(out_dir), "--no-progress"]) == 0
    assert sorted(p.name for p in out_dir.iterdir()) == sorted([*OUTPUT_FILES, "report.md"])
    report = (out_dir / "report.md").read_text()
    assert "![goodput, sending rate, cwnd, queue and RTT over time](plot.png)" in report
    assert "short-rtt" in report and "long-rtt" in report
    assert f"report: {out_dir / 'report.md'}" in capsys.readouterr().out
