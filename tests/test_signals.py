"""SIGINT, SIGTERM and SIGHUP while ``flowshare run``, ``sweep``, ``model`` and ``report`` work.

Each command runs as a process of its own, in a session of its own. Once it is demonstrably in
the middle of its work (its hidden staging directory or temporary plot file exists, a first run
of a sweep is stored, or it has installed its signal handlers with seconds of work ahead), the
signal goes to its process group, as a terminal sends Ctrl-C and a hang-up. The command must
exit with the documented status after one line on stderr and leave nothing partial: no new
output, no hidden staging directory, no temporary file, no worker process. A sweep's store must
stay consistent, and ``--resume`` must complete it without running a finished run again.

A few windows too narrow to hit from outside (a signal while files are moved into place, while
a staging directory is removed, while a sweep records a run) are hit from inside the process.
docs/reliability.md, section "Signals".
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pytest

from flowshare import cli
from flowshare._files import atomic_directory
from flowshare.results import OUTPUT_FILES
from flowshare.study import run_sweep
from flowshare.study.store import RunStore

pytestmark = pytest.mark.skipif(
    not hasattr(signal, "SIGHUP") or not hasattr(os, "killpg"),
    reason="needs POSIX signals (SIGHUP) and process groups",
)

SIGNALS = [
    pytest.param(getattr(signal, name), id=name)
    for name in ("SIGINT", "SIGTERM", "SIGHUP")
    if hasattr(signal, name)
]

INTERRUPTED = "flowshare: interrupted; no output written"
TIMEOUT_S = 60.0
"""Bound on every wait; the tests take seconds."""

HAS_PROC = Path("/proc/self/status").is_file()


def exit_status(sig: int) -> int:
    """Every command: 128 + the signal's number (130 for Ctrl-C)."""
    return 128 + sig





# ---------------------------------------------------------------------------------------------
# Helpers


def dumbbell(duration: str, *, flows: str = '[[flows]]\nname = "bulk"', extra: str = "",
             sample_interval: str = "100ms") -> str:
    return (
        f'[simulation]\nduration = "{duration}"\nsample_interval = "{sample_interval}"\n\n'
        '[topology]\nkind = "dumbbell"\n'
        'bottleneck = { rate = "10Mbps", delay = "10ms" }\n'
        'access = { rate = "100Mbps", delay = "1ms" }\n\n'
        f"{flows}\n{extra}"
    )


# 20 flows sampled every millisecond: simulated in a fraction of a second, written (time series,
# plot, report) in about a second, so the signal comes while the staging directory fills:
# flows.csv is written first, the plot and report.md last.
SLOW_TO_WRITE = dumbbell("5s", flows='[[flows]]\nname = "bulk"\ncount = 20',
                         sample_interval="1ms")

# Hours of simulated time (about 15 s of wall time) with the bottleneck's ACK direction captured:
# the pcap file grows in the staging directory from the first simulated second.
LONG_WITH_PCAP = dumbbell("10000s", sample_interval="0s",
                          extra='[trace]\npcap = ["r1->r0"]\n')
PCAP_FILE = "r1-r0.pcap"
PCAP_HEADER_BYTES = 24

BASE = """\
[simulation]
duration = "0.5s"
seed = 3
sample_interval = "100ms"

[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "5ms", queue = { limit = 30 }, \
loss = { model = "bernoulli", p = 0.005 } }
access = { rate = "100Mbps", delay = "1ms" }

[[flows]]
name = "bulk"
count = 2
"""

SWEEP = """\
base = "base.toml"
replications = 2
root_seed = 5

[grid]
"topology.bottleneck.rate" = {rates}

[responses]
first_goodput = { table = "flows", column = "goodput_bps", where = { flow = 0 } }
max_queue_drops = { table = "queues", column = "drops", agg = "max" }
"""
RATES = ("5Mbps", "10Mbps", "20Mbps")
SWEEP_RUNS = 2 * len(RATES)


def make_sweep(directory: Path, rates: tuple[str, ...] = RATES) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "base.toml").write_text(BASE, encoding="utf-8")
    path = directory / "sweep.toml"
    path.write_text(SWEEP.replace("{rates}", json.dumps(list(rates))), encoding="utf-8")
    return path


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The child's environment: its temporary files go to a directory of the test's own."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    return {
        **os.environ,
        "TMPDIR": str(temporary),
        "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
    }


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[str]]]:
    """Processes started by a test; a process group still alive at the end is killed."""
    processes: list[subprocess.Popen[str]] = []
    yield processes
    for process in processes:
        if live_members(process.pid):  # a test failed half-way
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def start(
    started: list[subprocess.Popen[str]], env: dict[str, str], cwd: Path, *argv: object
) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "flowshare", *map(str, argv)],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a process group of its own, as a terminal's job
    )
    started.append(process)
    return process


def wait_for(process: subprocess.Popen[str], condition: Callable[[], bool], what: str) -> bool:
    """Poll ``condition`` until it holds (True) or the process has exited (False)."""
    deadline = time.monotonic() + TIMEOUT_S
    while not condition():
        if process.poll() is not None:
            return False
        assert time.monotonic() < deadline, f"{what}: not within {TIMEOUT_S} s"
        time.sleep(0.001)
    return True


def send(process: subprocess.Popen[str], sig: int) -> str:
    """Send ``sig`` to the process group; wait until the process and its children are gone;
    return the process's stderr."""
    os.killpg(process.pid, sig)
    _, err = process.communicate(timeout=TIMEOUT_S)
    deadline = time.monotonic() + TIMEOUT_S
    while live_members(process.pid):  # workers of a sweep leave after the driver
        assert time.monotonic() < deadline, "a child process outlived the command"
        time.sleep(0.01)
    return err


def live_members(group: int) -> list[int]:
    """The processes of a process group that have not exited (zombies waiting for init to reap
    them do not count)."""
    if not HAS_PROC:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return []
        return [group]
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        state, _ppid, pgrp = stat[stat.rindex(")") + 2 :].split()[:3]
        if int(pgrp) == group and state != "Z":
            members.append(int(entry.name))
    return members


def interrupt_at_work(
    started: list[subprocess.Popen[str]],
    env: dict[str, str],
    cwd: Path,
    argv: list[object],
    sig: int,
    *,
    at_work: Callable[[], bool],
    committed: Callable[[], bool],
    undo: Callable[[], None],
    attempts: int = 4,
) -> tuple[int, str]:
    """Run ``flowshare *argv``, send ``sig`` once ``at_work()`` holds and return the exit
    status and stderr.

    An attempt in which the command finished its output before the signal came (the poll
    missed a short window, or the signal arrived after the output was in place) proves
    nothing: it is undone and repeated. An attempt in which the signal came in time is
    returned for the caller to check, whatever it left."""
    for _ in range(attempts):
        process = start(started, env, cwd, *argv)
        if wait_for(process, at_work, f"flowshare {argv[0]} at work"):
            err = send(process, sig)
            if not (process.returncode == 0 or committed()):
                return process.returncode, err
        else:
            process.communicate(timeout=TIMEOUT_S)
        assert process.returncode in (0, exit_status(sig)), process.returncode
        assert committed(), "the command ended without its output and without the signal"
        undo()
    pytest.fail(f"flowshare {argv[0]} was never caught at work in {attempts} attempts")


def leftovers(root: Path) -> list[str]:
    """Hidden files and directories anywhere under ``root`` (staging directories
    ``.NAME.partial-*``, temporary tables ``.NAME.tmp-*``, plots ``.model-*``, spilled series),
    and anything in the children's temporary directory."""
    found = []
    for path in root.rglob("*"):
        if path.name.startswith("."):
            found.append(str(path.relative_to(root)))
    temporary = root / "tmp"
    if temporary.is_dir():
        found += [f"tmp/{p.name}" for p in temporary.iterdir()]
    return sorted(found)


def handlers_installed(pid: int) -> bool:
    """Whether the process catches SIGTERM and SIGHUP, which the command line does only while
    a command runs (Linux: the SigCgt mask of /proc/PID/status)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    for line in text.splitlines():
        if line.startswith("SigCgt:"):
            mask = int(line.split()[1], 16)
            return all(mask >> (s - 1) & 1 for s in (signal.SIGTERM, signal.SIGHUP))
    return False


def check_interrupted(outcome: tuple[int, str], status: int, message: str) -> None:
    returncode, err = outcome
    assert returncode == status, err
    assert err.splitlines() == [message], err


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


# ---------------------------------------------------------------------------------------------
# flowshare run


@pytest.mark.parametrize("sig", SIGNALS)
def test_run_interrupted_while_writing_its_results_writes_nothing(tmp_path, env, started, sig):
    scenario = tmp_path / "slow-to-write.toml"
    scenario.write_text(SLOW_TO_WRITE, encoding="utf-8")
    out = tmp_path / "out"
    outcome = interrupt_at_work(
        started, env, tmp_path,
        ["run", scenario, "--out", out, "--no-progress", "--report"], sig,
        at_work=lambda: any(tmp_path.glob(".out.partial-*/flows.csv")),  # the first file
        committed=out.exists,
        undo=lambda: shutil.rmtree(out),
    )
    check_interrupted(outcome, exit_status(sig), INTERRUPTED)
    assert not out.exists()
    assert leftovers(tmp_path) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["slow-to-write.toml", "tmp"]


@pytest.mark.parametrize("sig", SIGNALS)
def test_run_with_pcap_interrupted_while_simulating_leaves_the_output_as_it_was(
    tmp_path, env, started, sig
):
    # pcap captures stream into the staging directory while the run goes on; the existing
    # output directory keeps its files, untouched.
    scenario = tmp_path / "long-pcap.toml"
    scenario.write_text(LONG_WITH_PCAP, encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    (out / "flows.csv").write_text("an earlier run's table\n")
    (out / "notes.txt").write_text("kept\n")
    before = tree(out)

    def pcap_growing() -> bool:
        return any(
            p.stat().st_size > PCAP_HEADER_BYTES
            for p in tmp_path.glob(f".out.partial-*/{PCAP_FILE}")
        )

    outcome = interrupt_at_work(
        started, env, tmp_path, ["run", scenario, "--out", out, "--no-progress"], sig,
        at_work=pcap_growing,
        committed=lambda: (out / PCAP_FILE).exists(),
        undo=lambda: pytest.fail("a run of hours of simulated time finished"),
        attempts=1,
    )
    check_interrupted(outcome, exit_status(sig), INTERRUPTED)
    assert tree(out) == before
    assert leftovers(tmp_path) == []


# ---------------------------------------------------------------------------------------------
# flowshare sweep


def _done_runs(out: Path) -> list[str]:
    return sorted(p.parent.name for p in (out / "runs").glob("*/run.json"))


@pytest.mark.parametrize(
    "sig, workers",
    [
        # Runs in the driver: the signal interrupts the simulation of a run there.
        pytest.param(signal.SIGINT, 1, id="SIGINT-one-process"),
        # A pool: workers ignore a terminal's Ctrl-C and hang-up, remove their runs' temporary
        # files on SIGTERM; multiprocessing's resource tracker must survive the hang-up.
        pytest.param(signal.SIGTERM, 2, id="SIGTERM-two-workers"),
        pytest.param(getattr(signal, "SIGHUP", 1), 2, id="SIGHUP-two-workers"),
    ],
)
def test_sweep_interrupted_keeps_a_consistent_store_that_resume_completes(
    tmp_path, env, started, capsys, sig, workers
):
    path = make_sweep(tmp_path / "def")
    out = tmp_path / "store"
    process = start(started, env, tmp_path, "sweep", path, "--out", out, "--workers", workers,
                    "--no-progress")
    assert wait_for(process, lambda: bool(_done_runs(out)), "a first run stored"), (
        process.communicate()
    )
    err = send(process, sig)
    check_interrupted(
        (process.returncode, err),
        exit_status(sig),
        f"flowshare: interrupted; finished runs are kept in {out}; continue with --resume",
    )
    assert leftovers(tmp_path) == []  # run staging, catalog temporaries, workers' run files

    # The catalog agrees with the run directories; every stored run is complete.
    done = _done_runs(out)
    assert 1 <= len(done) < SWEEP_RUNS
    catalog = pd.read_parquet(out / "catalog.parquet")
    assert len(catalog) == SWEEP_RUNS and catalog.run_id.is_unique
    assert sorted(catalog.run_id[catalog.status == "done"]) == done
    assert set(catalog.status) == {"done", "pending"}
    assert sorted(pd.read_parquet(out / "responses.parquet").run_id) == done
    started_at = {}
    for run_id in done:
        assert {p.name for p in (out / "runs" / run_id).iterdir()} == {*OUTPUT_FILES, "run.json"}
        started_at[run_id] = json.loads((out / "runs" / run_id / "run.json").read_text())[
            "started_at"
        ]

    capsys.readouterr()
    argv = ["sweep", str(path), "--out", str(out), "--resume", "--workers", "1", "--no-progress"]
    assert cli.main(argv) == 0
    summary = f"{SWEEP_RUNS} runs: {SWEEP_RUNS} done, 0 failed ({len(done)} done before)"
    assert summary in capsys.readouterr().out
    catalog = pd.read_parquet(out / "catalog.parquet")
    responses = pd.read_parquet(out / "responses.parquet")
    for table in (catalog, responses):
        assert len(table) == SWEEP_RUNS and table.run_id.is_unique
    assert catalog.status.eq("done").all()
    assert len(_done_runs(out)) == SWEEP_RUNS
    assert leftovers(tmp_path) == []
    for run_id, stamp in started_at.items():  # not run again
        record = json.loads((out / "runs" / run_id / "run.json").read_text())
        assert record["started_at"] == stamp


# ---------------------------------------------------------------------------------------------
# flowshare model


@pytest.mark.parametrize("sig", SIGNALS)
def test_model_interrupted_while_plotting_leaves_no_plot_file(tmp_path, env, started, sig):
    # 100,000 points: the PNG takes a moment to draw into its hidden temporary file.
    plot = tmp_path / "pftk.png"
    outcome = interrupt_at_work(
        started, env, tmp_path,
        ["model", "pftk", "p=0.001:0.1:100000", "rtt=100ms", "rto=400ms", "--plot", plot.name],
        sig,
        at_work=lambda: any(tmp_path.glob(".model-*")),
        committed=plot.exists,
        undo=plot.unlink,
    )
    check_interrupted(outcome, exit_status(sig), INTERRUPTED)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tmp"]
    assert leftovers(tmp_path) == []


# ---------------------------------------------------------------------------------------------
# flowshare report


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("store")
    out = directory / "store"
    run_sweep(make_sweep(directory / "def", rates=("5Mbps", "10Mbps")), out, workers=1,
              progress=False)
    return out


@pytest.mark.skipif(not HAS_PROC, reason="tells when the command runs from /proc/PID/status")
@pytest.mark.parametrize("sig", SIGNALS)
def test_report_interrupted_while_rendering_writes_nothing(tmp_path, env, started, store, sig):
    # Reading the store and drawing its plots takes a second or two; the report's staging
    # directory exists only for the moment its files are written.
    before = tree(store)
    report = tmp_path / "report"
    outcome = interrupt_at_work(
        started, env, tmp_path, ["report", store, "--out", report], sig,
        at_work=lambda: handlers_installed(started[-1].pid),  # the process being polled
        committed=report.exists,
        undo=lambda: shutil.rmtree(report),
    )
    check_interrupted(outcome, exit_status(sig), INTERRUPTED)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tmp"]
    assert leftovers(tmp_path) == []
    assert tree(store) == before



# ---------------------------------------------------------------------------------------------
# Narrow windows, hit from inside the process: the signal is sent to the process itself at the
# worst moment, with the handlers the command line installs.


@pytest.mark.parametrize("sig", SIGNALS)
def test_a_signal_while_files_are_moved_into_place_waits_until_all_are(
    tmp_path, monkeypatch, sig
):
    # Once: an existing output directory could keep some old files next to some new ones.
    target = tmp_path / "out"
    target.mkdir()
    for name in ("a", "b", "c"):
        (target / name).write_text("old")
    real_replace = os.replace

    def replace(source, destination):
        real_replace(source, destination)
        os.kill(os.getpid(), sig)  # after the first file

    monkeypatch.setattr(os, "replace", replace)
    with cli._termination_unwinds(), pytest.raises(KeyboardInterrupt):
        with atomic_directory(target) as stage:
            for name in ("a", "b", "c"):
                (stage / name).write_text("new")
    assert {p.name: p.read_text() for p in target.iterdir()} == dict.fromkeys("abc", "new")
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("sig", SIGNALS)
def test_a_second_signal_while_the_staging_directory_is_removed_leaves_nothing(
    tmp_path, monkeypatch, sig
):
    # Once: a second Ctrl-C while the staging directory was removed left it behind.
    real_rmtree = shutil.rmtree

    def rmtree(path, *args, **kwargs):
        os.kill(os.getpid(), sig)
        real_rmtree(path, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", rmtree)
    with cli._termination_unwinds(), pytest.raises(KeyboardInterrupt):
        with atomic_directory(tmp_path / "new" / "out") as stage:
            (stage / "flows.csv").write_text("half")
            raise KeyboardInterrupt  # the first signal
    assert list(tmp_path.iterdir()) == []  # nor the parent created for the output


@pytest.mark.parametrize("sig", SIGNALS)
def test_a_signal_as_the_temporary_plot_file_is_created_leaves_no_file(
    tmp_path, monkeypatch, capsys, sig
):
    # Once: a signal between the creation of the hidden temporary file and the code that
    # removes it on failure left the file behind.
    real_mkstemp = tempfile.mkstemp

    def mkstemp(*args, **kwargs):
        created = real_mkstemp(*args, **kwargs)
        os.kill(os.getpid(), sig)
        return created

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    monkeypatch.chdir(tmp_path)
    argv = ["model", "pftk", "p=0.01:0.1:5", "rtt=100ms", "rto=400ms", "--plot", "pftk.png"]
    assert cli.main(argv) == exit_status(sig)
    assert capsys.readouterr().err == INTERRUPTED + "\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("sig", SIGNALS)
def test_a_signal_while_a_sweep_records_a_run_waits_until_the_run_is_recorded(
    tmp_path, monkeypatch, sig
):
    # Once: SIGHUP stopped a sweep in the middle of recording a run, and SIGTERM lost the
    # command line's exception, which tells which signal it was.
    path = make_sweep(tmp_path / "def")
    real_record = RunStore.record

    def record(self, outcome):
        if not self.responses:  # the first run
            os.kill(os.getpid(), sig)
        real_record(self, outcome)

    monkeypatch.setattr(RunStore, "record", record)
    out = tmp_path / "out"
    handlers = {s.values[0]: signal.getsignal(s.values[0]) for s in SIGNALS}
    with cli._termination_unwinds(), pytest.raises(KeyboardInterrupt) as caught:
        run_sweep(path, out, workers=1, progress=False)
    assert getattr(caught.value, "signum", signal.SIGINT) == sig
    catalog = pd.read_parquet(out / "catalog.parquet")
    assert catalog.status.tolist() == ["done"] + ["pending"] * (SWEEP_RUNS - 1)
    assert _done_runs(out) == [catalog.run_id[0]]
    assert leftovers(tmp_path) == []
    assert {s: signal.getsignal(s) for s in handlers} == handlers  # restored


@pytest.mark.parametrize("sig", SIGNALS)
def test_a_signal_as_a_run_s_temporary_directory_is_created_leaves_none(
    tmp_path, monkeypatch, sig
):
    # Once: a signal between the creation of a run's temporary directory and the code that
    # removes it left the directory behind.
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    real_mkdtemp = tempfile.mkdtemp

    def mkdtemp(*args, **kwargs):
        created = real_mkdtemp(*args, **kwargs)
        os.kill(os.getpid(), sig)
        return created

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    path = make_sweep(tmp_path / "def", rates=("10Mbps",))
    out = tmp_path / "out"
    with cli._termination_unwinds(), pytest.raises(KeyboardInterrupt):
        run_sweep(path, out, workers=1, progress=False)
    assert leftovers(tmp_path) == []
    # No run had finished: the new store is removed whole.
    assert not out.exists()


@pytest.mark.parametrize("sig", [p for p in SIGNALS if p.id in ("SIGINT", "SIGHUP")])
def test_a_signal_ignored_when_a_sweep_starts_stays_ignored(tmp_path, monkeypatch, sig):
    # nohup ignores SIGHUP, a shell ignores SIGINT for a background job: the sweep goes on.
    # Once: the sweep stopped on an ignored Ctrl-C.
    path = make_sweep(tmp_path / "def", rates=("10Mbps",))
    real_record = RunStore.record

    def record(self, outcome):
        os.kill(os.getpid(), sig)
        real_record(self, outcome)

    monkeypatch.setattr(RunStore, "record", record)
    previous = signal.signal(sig, signal.SIG_IGN)
    try:
        outcome = run_sweep(path, tmp_path / "out", workers=1, progress=False)
    except KeyboardInterrupt:  # (would end the test session)
        pytest.fail("the sweep stopped on an ignored signal")
    finally:
        signal.signal(sig, previous)
    assert (outcome.done, outcome.pending) == (2, 0)


def test_resume_removes_what_a_killed_sweep_was_writing(tmp_path):
    # SIGKILL leaves no chance to clean up: a run's staging directory and the temporary
    # catalog and responses tables stay until the sweep is resumed.
    path = make_sweep(tmp_path / "def", rates=("10Mbps",))
    out = tmp_path / "out"
    run_sweep(path, out, workers=1, progress=False)
    (out / "runs" / ".a000-r00.partial-1-0123abcd").mkdir()
    (out / ".catalog.parquet.tmp-1").write_bytes(b"PAR1")
    (out / ".responses.parquet.tmp-1").write_bytes(b"PAR1")
    outcome = run_sweep(path, out, workers=1, resume=True, progress=False)
    assert (outcome.done, outcome.ran) == (2, 0)
    assert leftovers(tmp_path) == []
