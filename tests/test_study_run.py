"""Running sweeps: the run store layout, failures and retries, resuming after SIGKILL, and the
same results from one process, a local pool and a Dask cluster."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from flowshare import ConfigError, cli
from flowshare.results import OUTPUT_FILES
from flowshare.study import execute, load_sweep, run_sweep
from flowshare.study.store import CATALOG_COLUMNS

# A 2-flow dumbbell with random loss, so that replications differ; a few ms per run.
BASE = """\
[simulation]
duration = "{duration}"
seed = 3
sample_interval = "200ms"

[topology]
kind = "dumbbell"
bottleneck = {{ rate = "10Mbps", delay = "5ms", queue = {{ limit = 30 }}, \
  loss = {{ model = "bernoulli", p = 0.005 }} }}
access = {{ rate = "100Mbps", delay = "1ms" }}

[[flows]]
name = "bulk"
count = 2
start_spacing = "10ms"
"""

SWEEP = """\
base = "base.toml"
replications = {replications}
root_seed = 5

[grid]
"topology.bottleneck.rate" = {rates}
"flows[0].tcp.recovery" = ["newreno", "sack"]

[responses]
first_goodput = {{ table = "flows", column = "goodput_bps", where = {{ flow = 0 }} }}
max_queue_drops = {{ table = "queues", column = "drops", agg = "max" }}
"""


def make_sweep(directory: Path, *, rates=("5Mbps", "10Mbps"), replications=2, duration="2s"):
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "base.toml").write_text(BASE.format(duration=duration), encoding="utf-8")
    path = directory / "sweep.toml"
    path.write_text(
        SWEEP.format(rates=json.dumps(list(rates)), replications=replications), encoding="utf-8"
    )
    return path


def catalog(out: Path) -> pd.DataFrame:
    return pd.read_parquet(out / "catalog.parquet")


def test_store_layout_catalog_and_responses(tmp_path):
    path = make_sweep(tmp_path / "def")
    out = tmp_path / "out"
    outcome = run_sweep(path, out, workers=1, progress=False)
    assert (outcome.total, outcome.done, outcome.failed, outcome.ran) == (8, 8, 0, 8)

    assert (out / "sweep.toml").read_bytes() == path.read_bytes()
    normalized = json.loads((out / "sweep.json").read_text())
    assert normalized["parameters"] == ["topology.bottleneck.rate", "flows[0].tcp.recovery"]
    assert normalized["responses"][-2:] == ["first_goodput", "max_queue_drops"]
    assert normalized["replications"] == 2 and normalized["root_seed"] == 5
    assert {"design", "version", "arms"} <= set(normalized)

    cat = catalog(out)
    assert list(cat.columns) == [*CATALOG_COLUMNS, *normalized["parameters"]]
    assert cat.status.tolist() == ["done"] * 8
    assert cat.run_id.is_unique and cat.error.isna().all()
    assert cat.arm.tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    assert cat.replication.tolist() == [0, 1] * 4
    assert (cat.wall_s > 0).all() and cat.started_at.notna().all()
    assert cat["topology.bottleneck.rate"].tolist() == ["5Mbps"] * 4 + ["10Mbps"] * 4
    # Common random numbers: replication r has one seed in every arm.
    assert cat.groupby("replication").seed.nunique().tolist() == [1, 1]

    for row in cat.itertuples():
        run_dir = out / "runs" / row.run_id
        names = {p.name for p in run_dir.iterdir()}
        assert names == {*OUTPUT_FILES, "run.json"}
        summary = json.loads((run_dir / "summary.json").read_text())
        assert summary["summary"]["seed"] == row.seed
        scenario = summary["scenario"]
        rate = cat.at[row.Index, "topology.bottleneck.rate"]
        assert scenario["topology"]["bottleneck"]["rate"] == rate
        record = json.loads((run_dir / "run.json").read_text())
        assert record["run_id"] == row.run_id and record["scenario_hash"] == row.scenario_hash

    responses = pd.read_parquet(out / "responses.parquet")
    assert responses.run_id.tolist() == cat.run_id.tolist()
    flows = pd.read_csv(out / "runs" / cat.run_id[3] / "flows.csv")
    assert responses.first_goodput[3] == flows.goodput_bps[0]
    # Physics: a 10 Mbit/s bottleneck carries more than a 5 Mbit/s one, and less than 10.
    by_rate = responses.groupby("topology.bottleneck.rate").goodput_bps.mean()
    assert by_rate["5Mbps"] < 5e6 < by_rate["10Mbps"] < 10e6
    # Replications differ (independent seeds).
    assert responses.goodput_bps[0] != responses.goodput_bps[1]


def test_existing_store_needs_resume_and_the_same_sweep(tmp_path, capsys):
    path = make_sweep(tmp_path / "def", rates=("5Mbps",), replications=1)
    out = tmp_path / "out"
    argv = ["--workers", "1", "--no-progress"]
    assert cli.main(["sweep", str(path), "--out", str(out), *argv]) == 0
    assert "2 runs: 2 done, 0 failed" in capsys.readouterr().out
    assert cli.main(["sweep", str(path), "--out", str(out)]) == 1
    assert "holds a sweep already; pass --resume" in capsys.readouterr().err
    assert cli.main(["sweep", str(path), "--out", str(out), "--resume", *argv]) == 0
    assert "2 runs: 2 done, 0 failed (2 done before)" in capsys.readouterr().out
    other = make_sweep(tmp_path / "other", rates=("6Mbps",), replications=1)
    assert cli.main(["sweep", str(other), "--out", str(out), "--resume"]) == 1
    assert "holds a different sweep (different arms); resume it with the same sweep file" in (
        capsys.readouterr().err
    )
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "x").write_text("x")
    assert cli.main(["sweep", str(path), "--out", str(junk)]) == 1
    assert "is not a run store (no sweep.json)" in capsys.readouterr().err
    assert cli.main(["sweep", str(path), "--out", str(tmp_path / "w"), "--workers", "0"]) == 2
    assert "expected an integer >= 1, got 0" in capsys.readouterr().err
    both = ["--workers", "2", "--dask", "tcp://127.0.0.1:9"]
    assert cli.main(["sweep", str(path), "--out", str(tmp_path / "w"), *both]) == 2
    assert "--workers applies to local runs" in capsys.readouterr().err
    assert not (tmp_path / "w").exists()


def test_failed_run_keeps_its_error_and_is_retried_on_resume(tmp_path, monkeypatch):
    path = make_sweep(tmp_path / "def")
    out = tmp_path / "out"
    sweep = load_sweep(path)
    victim = sweep.runs()[5]
    real_run = execute._sim.run
    calls: list[int] = []

    def flaky(scenario, **kwargs):
        seed = scenario["simulation"]["seed"]
        calls.append(seed)
        if scenario == victim.scenario and fail:
            raise RuntimeError("disk quota exceeded\nwhile simulating")
        return real_run(scenario, **kwargs)

    monkeypatch.setattr(execute._sim, "run", flaky)
    fail = True
    outcome = run_sweep(path, out, workers=1, progress=False)
    assert (outcome.done, outcome.failed) == (7, 1)
    error = "RuntimeError: disk quota exceeded; while simulating"
    assert outcome.failures == [(victim.run_id, error)]
    cat = catalog(out).set_index("run_id")
    assert cat.at[victim.run_id, "status"] == "failed"
    assert cat.at[victim.run_id, "error"] == "RuntimeError: disk quota exceeded; while simulating"
    assert not (out / "runs" / victim.run_id).exists()
    assert victim.run_id not in set(pd.read_parquet(out / "responses.parquet").run_id)
    done_before = {p.name: (p / "run.json").stat().st_mtime_ns for p in (out / "runs").iterdir()}

    fail = False
    calls.clear()
    outcome = run_sweep(path, out, workers=1, resume=True, progress=False)
    assert (outcome.done, outcome.failed, outcome.ran) == (8, 0, 1)
    assert calls == [victim.seed]  # only the failed run ran again
    cat = catalog(out).set_index("run_id")
    assert cat.status.eq("done").all() and cat.error.isna().all()
    for name, mtime in done_before.items():
        assert (out / "runs" / name / "run.json").stat().st_mtime_ns == mtime
    assert len(pd.read_parquet(out / "responses.parquet")) == 8


def test_a_response_on_a_missing_column_fails_every_run_with_its_reason(tmp_path, capsys):
    path = make_sweep(tmp_path / "def", rates=("5Mbps",), replications=1)
    path.write_text(
        path.read_text().replace('column = "drops"', 'column = "dropz"'), encoding="utf-8"
    )
    out = tmp_path / "out"
    assert cli.main(["sweep", str(path), "--out", str(out), "--no-progress"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1
    assert err[0].startswith("flowshare: error: 2 runs failed (first: a000-r00: ValueError: "
                             "responses.max_queue_drops: queues has no column 'dropz'")
    assert "rerun with --resume to retry" in err[0]
    assert catalog(out).status.tolist() == ["failed", "failed"]


def test_local_pool_gives_the_same_results_as_one_process(tmp_path):
    path = make_sweep(tmp_path / "def")
    run_sweep(path, tmp_path / "one", workers=1, progress=False)
    run_sweep(path, tmp_path / "two", workers=2, progress=False)
    one, two = tmp_path / "one", tmp_path / "two"
    assert (one / "responses.parquet").read_bytes() == (two / "responses.parquet").read_bytes()
    timing = ["started_at", "wall_s"]
    pd.testing.assert_frame_equal(
        catalog(one).drop(columns=timing), catalog(two).drop(columns=timing)
    )
    for run_dir in (one / "runs").iterdir():
        for name in ("flows.csv", "queues.csv", "timeseries.parquet", "summary.json"):
            if name == "summary.json":
                a = json.loads((run_dir / name).read_text())
                b = json.loads((two / "runs" / run_dir.name / name).read_text())
                a["summary"].pop("wall_s"), b["summary"].pop("wall_s")
                assert a == b
            else:
                other = two / "runs" / run_dir.name / name
                assert (run_dir / name).read_bytes() == other.read_bytes()


def _done_dirs(out: Path) -> list[str]:
    runs = out / "runs"
    if not runs.is_dir():
        return []
    return sorted(p.name for p in runs.iterdir() if not p.name.startswith("."))


def _children(pid: int) -> list[int]:
    listed = subprocess.run(["ps", "--ppid", str(pid), "-o", "pid="], capture_output=True,
                            text=True, check=False)
    return [int(p) for p in listed.stdout.split()]


def _wait_gone(pids: list[int], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    for pid in pids:
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            assert time.monotonic() < deadline, f"process {pid} still running"
            time.sleep(0.05)


def _start_cli_sweep(path: Path, out: Path, *extra: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    command = [sys.executable, "-m", "flowshare.cli", "sweep", str(path), "--out", str(out),
               *extra]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for_runs(process: subprocess.Popen[bytes], out: Path, count: int) -> None:
    deadline = time.monotonic() + 120
    while len(_done_dirs(out)) < count:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_sigterm_stops_workers_and_records_the_finished_runs(tmp_path):
    path = make_sweep(
        tmp_path / "def", rates=("4Mbps", "6Mbps", "8Mbps", "10Mbps"), replications=2,
        duration="3s",
    )
    out = tmp_path / "out"
    process = _start_cli_sweep(path, out, "--workers", "2")
    _wait_for_runs(process, out, 2)
    workers = _children(process.pid)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143
    assert "interrupted; finished runs are kept in" in err.decode()
    _wait_gone(workers)
    done = _done_dirs(out)
    cat = catalog(out)
    assert sorted(cat.run_id[cat.status == "done"]) == done  # catalog caught up on exit
    assert 2 <= len(done) < 16
    assert cat.status.isin(["done", "pending"]).all()


def test_sweep_killed_with_sigkill_resumes_without_repeating_or_losing_runs(tmp_path):
    path = make_sweep(
        tmp_path / "def", rates=("4Mbps", "6Mbps", "8Mbps", "10Mbps"), replications=2,
        duration="3s",
    )  # 16 runs
    out = tmp_path / "out"
    process = _start_cli_sweep(path, out, "--workers", "2")
    _wait_for_runs(process, out, 3)
    workers = _children(process.pid)
    assert workers
    process.kill()  # SIGKILL to the driver: no clean-up at all
    process.communicate()
    assert process.returncode == -signal.SIGKILL
    _wait_gone(workers)  # orphaned workers notice and exit

    survivors = _done_dirs(out)
    assert 3 <= len(survivors) < 16
    started = {
        name: json.loads((out / "runs" / name / "run.json").read_text())["started_at"]
        for name in survivors
    }
    for name in survivors:  # complete, never half-written
        assert {p.name for p in (out / "runs" / name).iterdir()} == {*OUTPUT_FILES, "run.json"}

    resumed = _start_cli_sweep(path, out, "--workers", "2", "--resume")
    stdout, stderr = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, stderr
    assert f"16 runs: 16 done, 0 failed ({len(survivors)} done before)" in stdout.decode()
    assert len(_done_dirs(out)) == 16
    assert not [p for p in (out / "runs").iterdir() if p.name.startswith(".")]
    for name, stamp in started.items():  # not run again
        assert json.loads((out / "runs" / name / "run.json").read_text())["started_at"] == stamp
    cat = catalog(out)
    assert cat.status.eq("done").all() and len(cat) == 16

    # The interrupted sweep ends with exactly the responses of an uninterrupted one.
    run_sweep(path, tmp_path / "straight", workers=1, progress=False)
    assert (out / "responses.parquet").read_bytes() == (
        tmp_path / "straight" / "responses.parquet"
    ).read_bytes()


def test_dask_local_cluster_gives_the_same_results_as_local_execution(tmp_path):
    distributed = pytest.importorskip("distributed")
    path = make_sweep(tmp_path / "def")
    run_sweep(path, tmp_path / "local", workers=1, progress=False)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        outcome = run_sweep(path, tmp_path / "dask", dask=cluster.scheduler_address, progress=False)
        assert (outcome.done, outcome.failed) == (8, 0)
    local, remote = tmp_path / "local", tmp_path / "dask"
    assert (local / "responses.parquet").read_bytes() == (remote / "responses.parquet").read_bytes()
    for run_dir in (local / "runs").iterdir():
        assert (run_dir / "flows.csv").read_bytes() == (
            remote / "runs" / run_dir.name / "flows.csv"
        ).read_bytes()


def test_dask_address_that_does_not_answer_is_one_error_line(tmp_path, monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr(execute, "DASK_CONNECT_TIMEOUT", "1s")
    path = make_sweep(tmp_path / "def", rates=("5Mbps",), replications=1)
    # Called from Python, the error names the argument (the command line names --dask).
    with pytest.raises(ConfigError, match="^dask: cannot connect to the scheduler at"):
        run_sweep(path, tmp_path / "out", dask="tcp://127.0.0.1:9", progress=False)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("notanaddress", "missing port number"),
        ("foo://host:8786", "unknown address scheme 'foo'"),
        ("tcp://host:x", "invalid literal"),
        ("tcp://host:99999", "port 99999 outside 1-65535"),
        ("tcp://:8786", "(no host)"),
        ("", "missing port number"),
        (5, None),
    ],
)
def test_malformed_dask_address_is_refused_before_any_client(tmp_path, address, reason):
    pytest.importorskip("distributed")
    path = make_sweep(tmp_path / "def", rates=("5Mbps",), replications=1)
    with pytest.raises(ConfigError) as err:
        run_sweep(path, tmp_path / "out", dask=address, progress=False)
    message = str(err.value)
    assert message.startswith("dask: expected a scheduler address such as tcp://HOST:PORT")
    assert f"got {address!r}" in message and "\n" not in message
    if reason is not None:
        assert reason in message
    assert not (tmp_path / "out").exists()


def test_malformed_dask_address_on_the_command_line_is_one_line_at_once(tmp_path):
    # A half-built Client's finaliser used to wait 40 s at exit and print a traceback after
    # the error line; the process must end with the one line alone.
    pytest.importorskip("distributed")
    path = make_sweep(tmp_path / "def", rates=("5Mbps",), replications=1)
    done = subprocess.run(
        [sys.executable, "-m", "flowshare", "sweep", str(path), "--out", str(tmp_path / "out"),
         "--dask", "notanaddress"],
        capture_output=True, text=True, timeout=30,
    )
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "flowshare: error: --dask: expected a scheduler address such as tcp://HOST:PORT or "
        "HOST:PORT, got 'notanaddress' (missing port number in address 'notanaddress')"
    ]
    assert not (tmp_path / "out").exists()


def test_sweep_built_in_python_keeps_its_source_as_json_and_shows_progress(tmp_path, capsys):
    from flowshare import scenario as sc

    base = sc.dumbbell(
        bottleneck=sc.link(rate="10Mbps", delay="5ms", queue=sc.droptail(limit=30)),
        access=sc.link(rate="100Mbps", delay="1ms"),
        flows=sc.flows(name="bulk", count=2),
        duration="1s",
    )
    definition = {"base": base, "replications": 2, "points": [{"flows[0].count": 1}]}
    out = tmp_path / "out"
    outcome = run_sweep(definition, out, workers=1, progress=True)
    assert (outcome.total, outcome.done) == (2, 2)
    assert json.loads((out / "sweep.source.json").read_text()) == definition
    assert not (out / "sweep.toml").exists()
    assert json.loads((out / "sweep.json").read_text())["base"] == base
    err = capsys.readouterr().err
    assert "sweep: 100%" in err and "2/2" in err
    assert pd.read_parquet(out / "responses.parquet")["flows"].tolist() == [1.0, 1.0]


def test_traced_runs_keep_their_event_trace_and_pcap_captures(tmp_path):
    directory = tmp_path / "def"
    path = make_sweep(directory, rates=("5Mbps",), replications=1, duration="0.5s")
    base = directory / "base.toml"
    base.write_text(base.read_text() + '\n[trace]\nevents = true\npcap = ["bottleneck"]\n')
    out = tmp_path / "out"
    assert run_sweep(path, out, workers=1, progress=False).done == 2
    for run_dir in (out / "runs").iterdir():
        names = {p.name for p in run_dir.iterdir()}
        assert "events.parquet" in names
        pcaps = [n for n in names if n.endswith(".pcap")]
        assert len(pcaps) == 2  # both directions of the bottleneck
        assert all((run_dir / n).stat().st_size > 24 for n in pcaps)  # beyond the header


def test_an_interrupt_while_a_run_is_recorded_waits_until_it_is_recorded(tmp_path, monkeypatch):
    from flowshare.study.store import RunStore

    path = make_sweep(tmp_path / "def", rates=("5Mbps",), replications=2)
    real_record = RunStore.record

    def record_then_interrupt(self, outcome):
        real_record(self, outcome)
        os.kill(os.getpid(), signal.SIGTERM)  # arrives in the middle of recording

    monkeypatch.setattr(RunStore, "record", record_then_interrupt)
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        run_sweep(path, out, workers=1, progress=False)
    cat = catalog(out)
    assert cat.status.tolist() == ["done", "pending", "pending", "pending"]
    assert _done_dirs(out) == [cat.run_id[0]]
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # handlers restored


def test_identical_replications_are_reported_and_jitter_makes_them_differ(tmp_path, capsys):
    # No random element: TCP over DropTail gives the same result for every seed.
    plain = re.sub(r",\s*loss = \{\{[^}]*\}\}", "", BASE)
    assert "bernoulli" not in plain
    directory = tmp_path / "def"
    path = make_sweep(directory, rates=("10Mbps",), replications=3, duration="1s")
    (directory / "base.toml").write_text(plain.format(duration="1s"), encoding="utf-8")
    outcome = run_sweep(path, tmp_path / "plain", workers=1, progress=False)
    assert outcome.identical_arms == [0, 1]
    assert cli.main(["sweep", str(path), "--out", str(tmp_path / "cli"), "--workers", "1"]) == 0
    err = capsys.readouterr().err
    assert "warning: the replications of arm 0, 1 are identical" in err
    assert "start_jitter" in err
    # Start-time jitter reaches the seed: the same sweep's replications now differ.
    jittered = plain.replace('start_spacing = "10ms"', 'start_spacing = "10ms"\nstart_jitter = "200ms"')
    (directory / "base.toml").write_text(jittered.format(duration="1s"), encoding="utf-8")
    outcome = run_sweep(path, tmp_path / "jittered", workers=1, progress=False)
    assert outcome.identical_arms == []
    responses = pd.read_parquet(tmp_path / "jittered" / "responses.parquet")
    assert responses.groupby("arm")["first_goodput"].nunique().min() == 3


# --- a start that fails leaves nothing behind ------------------------------------------------


def _interrupt_first_run(monkeypatch):
    def interrupted(task):
        raise KeyboardInterrupt

    monkeypatch.setattr(execute, "execute_run", interrupted)


def test_interrupt_before_the_first_run_leaves_no_store(tmp_path, monkeypatch):
    path = make_sweep(tmp_path / "def", rates=("5Mbps",), replications=1)
    _interrupt_first_run(monkeypatch)
    out = tmp_path / "new" / "parents" / "out"
    with pytest.raises(KeyboardInterrupt):
        run_sweep(path, out, workers=1, progress=False)
    assert not (tmp_path / "new").exists()  # the store and the parents made for it
    # An existing empty directory stays, empty.
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(KeyboardInterrupt):
        run_sweep(path, empty, workers=1, progress=False)
    assert empty.is_dir() and list(empty.iterdir()) == []
    # So the same call can simply be made again.
    monkeypatch.undo()
    assert run_sweep(path, out, workers=1, progress=False).done == 2


def test_interrupt_of_a_resumed_store_keeps_it(tmp_path, monkeypatch):
    path = make_sweep(tmp_path / "def", rates=("5Mbps",), replications=1)
    out = tmp_path / "out"
    run_sweep(path, out, workers=1, progress=False)
    (out / "runs" / "a000-r00" / "run.json").unlink()  # as if the run had not finished
    (out / "runs" / "a000-r00").rename(out / "runs" / ".a000-r00.partial-1")
    _interrupt_first_run(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(path, out, workers=1, resume=True, progress=False)
    assert (out / "sweep.json").is_file() and (out / "runs" / "a001-r00").is_dir()


def test_cli_interrupt_before_the_first_run_says_nothing_was_written(tmp_path, monkeypatch,
                                                                    capsys):
    path = make_sweep(tmp_path / "def", rates=("5Mbps",), replications=1)
    _interrupt_first_run(monkeypatch)
    out = tmp_path / "out"
    status = cli.main(["sweep", str(path), "--out", str(out), "--workers", "1", "--no-progress"])
    assert status == 130 and not out.exists()
    err = capsys.readouterr().err
    assert err == f"flowshare: interrupted; no run had finished; nothing was written to {out}\n"


def test_errors_name_the_python_argument_or_the_cli_option(tmp_path, capsys):
    path = make_sweep(tmp_path / "def", rates=("5Mbps",), replications=1)
    out = tmp_path / "out"
    run_sweep(path, out, workers=1, progress=False)
    with pytest.raises(ConfigError) as info:
        run_sweep(path, out, workers=1, progress=False)
    assert str(info.value) == (
        f"{out}: holds a sweep already; pass resume=True to continue it, or choose another out"
    )
    assert cli.main(["sweep", str(path), "--out", str(out), "--no-progress"]) == 1
    assert capsys.readouterr().err == (
        f"flowshare: error: {out}: holds a sweep already; pass --resume to continue it, or "
        "choose another --out\n"
    )
    with pytest.raises(ConfigError, match=r"^workers: expected an integer >= 1, got 0$"):
        run_sweep(path, tmp_path / "other", workers=0, progress=False)
    assert not (tmp_path / "other").exists()


def test_a_bad_arm_leaves_no_store(tmp_path):
    path = make_sweep(tmp_path / "def", rates=("5Mbps", "fast"), replications=1)
    with pytest.raises(ConfigError, match="topology.bottleneck.rate"):
        run_sweep(path, tmp_path / "out", workers=1, progress=False)
    assert not (tmp_path / "out").exists()
