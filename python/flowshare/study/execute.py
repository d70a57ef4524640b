"""Run a sweep: validate every arm, open the run store, execute the runs locally or on Dask.

Every backend calls the same :func:`execute_run` on a worker and sends back the run's files as
bytes; only the driving process writes the store. Results therefore do not depend on the
backend, the number of workers or the order in which runs finish, and Dask workers need no
shared file system.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .. import __version__
from .. import sim as _sim
from .._core import ConfigError
from . import stats
from .store import RunStore
from .sweep import Response, Run, Sweep, evaluate_responses, load_sweep

__all__ = ["SweepOutcome", "execute_run", "run_sweep"]

Outcome = dict[str, Any]

DASK_CONNECT_TIMEOUT = "20s"
"""How long ``--dask ADDR`` waits for the scheduler to answer."""


@dataclass
class SweepOutcome:
    """What :func:`run_sweep` did.

    Attributes
    ----------
    out : pathlib.Path
        The run store.
    total, done, failed, pending : int
        Runs in the sweep and their status at the end.
    ran : int
        Runs executed by this call (the others were done before a resume).
    failures : list of (str, str)
        ``(run_id, error)`` of the failed runs.
    identical_arms : list of int
        Arms whose replications gave identical responses (see
        :func:`flowshare.study.stats.identical_replications`).
    """

    out: Path
    total: int
    done: int
    failed: int
    pending: int
    ran: int
    failures: list[tuple[str, str]]
    identical_arms: list[int]


def run_sweep(
    source: Sweep | str | os.PathLike[str] | Mapping[str, Any],
    out: str | os.PathLike[str],
    *,
    workers: int | None = None,
    dask: Any = None,
    resume: bool = False,
    progress: bool | None = None,
) -> SweepOutcome:
    """Run every run of a sweep and write the run store ``out``.

    Parameters
    ----------
    source : Sweep, path or mapping
        The sweep (see :func:`flowshare.study.load_sweep`).
    out : str or path-like
        The run store directory (``docs/sweeps.md``).
    workers : int, optional
        Local worker processes; default every core. ``1`` runs in this process.
    dask : str or distributed.Client, optional
        Run on this dask.distributed scheduler address (or client) instead.
    resume : bool
        Continue the sweep in ``out``: done runs are kept, pending and failed ones run.
    progress : bool, optional
        Progress bar with ETA on stderr; default only when stderr is a terminal.

    Raises
    ------
    ConfigError
        If the sweep or any arm's scenario is invalid (nothing runs), or ``out`` cannot hold
        the sweep.
    KeyboardInterrupt
        On Ctrl-C or SIGTERM, after recording the runs already finished.
    """
    sweep = source if isinstance(source, Sweep) else load_sweep(source)
    if workers is not None and workers < 1:
        raise ConfigError(f"workers: expected an integer >= 1, got {workers}")
    runs = sweep.runs(sweep.validate())
    # Connect before the store is created, so that a wrong address leaves nothing behind.
    client, own_client = _dask_client(dask) if dask is not None else (None, False)
    try:
        return _execute(sweep, runs, out, client, workers, resume=resume, progress=progress)
    finally:
        if own_client:
            client.close()


def _execute(
    sweep: Sweep,
    runs: Sequence[Run],
    out: str | os.PathLike[str],
    client: Any,
    workers: int | None,
    *,
    resume: bool,
    progress: bool | None,
) -> SweepOutcome:
    store = RunStore.open(out, sweep, runs, resume=resume)
    todo = store.to_run()
    response_specs = [{"name": r.name, **r.to_dict()} for r in sweep.responses]
    tasks = [
        {"run_id": run.run_id, "scenario": run.scenario, "responses": response_specs}
        for run in todo
    ]
    if progress is None:
        progress = _stderr_is_tty()
    bar = _progress_bar(len(tasks)) if progress and tasks else None

    interrupts = _Interrupts()

    def on_outcome(outcome: Outcome) -> None:
        with interrupts.deferred():
            store.record(outcome)
        if bar is not None:
            bar.update(1)

    try:
        with interrupts.installed():
            if not tasks:
                pass
            elif client is not None:
                _run_dask(tasks, client, on_outcome)
            else:
                count = min(workers or _cores(), len(tasks))
                _run_local(tasks, count, on_outcome)
    finally:
        if bar is not None:
            bar.close()
        store.flush()
    counts = store.counts()
    failures = [
        (run_id, str(store.rows[run_id]["error"]))
        for run_id in store.order
        if store.rows[run_id]["status"] == "failed"
    ]
    identical = stats.identical_replications(store.response_table(), sweep.response_names)
    return SweepOutcome(
        out=Path(out),
        total=len(runs),
        ran=len(tasks),
        failures=failures,
        identical_arms=identical,
        **counts,
    )


def execute_run(task: Mapping[str, Any]) -> Outcome:
    """Simulate one run and return its outcome; a failing run is reported, never raised.

    Parameters
    ----------
    task : mapping
        ``run_id``, ``scenario`` (normalized, seed set) and ``responses`` (definitions).

    Returns
    -------
    dict
        ``run_id``, ``ok``, ``error`` (one line, or ``None``), ``version``, ``started_at``
        (ISO 8601, UTC), ``wall_s``, ``responses`` (name → float) and ``files`` (name → bytes,
        as :meth:`RunResult.write_into` writes them).
    """
    started_at = datetime.now(UTC).isoformat(timespec="milliseconds")
    start = time.perf_counter()
    files: dict[str, bytes] = {}
    responses: dict[str, float] = {}
    error = None
    try:
        with tempfile.TemporaryDirectory(prefix="flowshare-run-") as directory:
            # pcap captures (trace.pcap) stream into the same directory as the other files.
            result = _sim.run(task["scenario"], progress=False, pcap_dir=directory)
            definitions = [Response(**spec) for spec in task["responses"]]
            responses = evaluate_responses(result, definitions)
            for name in result.write_into(directory):
                files[name] = (Path(directory) / name).read_bytes()
    except Exception as exc:  # the run failed; the sweep records why and goes on
        error = _one_line(f"{type(exc).__name__}: {exc}")
        files, responses = {}, {}
    return {
        "run_id": task["run_id"],
        "ok": error is None,
        "error": error,
        "version": __version__,
        "started_at": started_at,
        "wall_s": time.perf_counter() - start,
        "responses": responses,
        "files": files,
    }


# ---------------------------------------------------------------------------------------------
# Backends


def _run_local(
    tasks: Sequence[Outcome], workers: int, on_outcome: Callable[[Outcome], None]
) -> None:
    if workers == 1:
        for task in tasks:
            on_outcome(execute_run(task))
        return
    # "spawn": workers start clean, without the driver's threads or open files.
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_init_worker,
        initargs=(os.getpid(),),
    )
    try:
        futures = [pool.submit(execute_run, task) for task in tasks]
        for future in as_completed(futures):
            on_outcome(future.result())
    except BaseException:
        # Runs in flight are lost by design; stop the workers now rather than let them finish.
        processes = list(getattr(pool, "_processes", {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            with contextlib.suppress(Exception):
                process.terminate()
        raise
    pool.shutdown(wait=True)


def _dask_client(dask: Any) -> tuple[Any, bool]:
    """A dask.distributed client for an address (ours to close) or the client given."""
    try:
        from distributed import Client
    except ImportError:
        raise ConfigError(
            "--dask needs dask.distributed; install it with: pip install 'flowshare[dask]'"
        ) from None
    if isinstance(dask, Client):
        return dask, False
    try:
        return Client(dask, timeout=DASK_CONNECT_TIMEOUT, set_as_default=False), True
    except (OSError, TimeoutError, ValueError) as exc:
        raise ConfigError(
            f"--dask: cannot connect to the scheduler at {dask}: {_one_line(str(exc))}"
        ) from None


def _run_dask(
    tasks: Sequence[Outcome], client: Any, on_outcome: Callable[[Outcome], None]
) -> None:
    from distributed import as_completed as dask_completed

    futures = []
    prefix = f"flowshare-{os.getpid()}-{time.time_ns()}"  # unique keys on a shared scheduler
    try:
        futures = [
            client.submit(execute_run, task, key=f"{prefix}-{task['run_id']}", pure=False)
            for task in tasks
        ]
        for future in dask_completed(futures, loop=client.loop):
            on_outcome(future.result())
    finally:
        with contextlib.suppress(Exception):
            client.cancel(futures)


# ---------------------------------------------------------------------------------------------
# Helpers


PARENT_POLL_S = 0.5


def _init_worker(driver_pid: int) -> None:
    """Workers leave Ctrl-C to the driver, which stops them, and exit when the driver is gone
    (a SIGKILL gives it no chance to stop them; idle workers would otherwise wait forever)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while os.getppid() == driver_pid:
            time.sleep(PARENT_POLL_S)
        os._exit(1)

    threading.Thread(target=watch, name="flowshare-driver-watch", daemon=True).start()


class _Interrupts:
    """Ctrl-C and SIGTERM raise KeyboardInterrupt while the sweep runs, except while a run is
    being recorded: then the interrupt waits until the run directory and its catalog row agree.

    (Masking the signals would not do: another thread of the process may take them.)
    """

    def __init__(self) -> None:
        self.critical = False
        self.pending = False

    def handler(self, signum: int, frame: Any) -> None:
        if self.critical:
            self.pending = True
            return
        raise KeyboardInterrupt

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {s: signal.signal(s, self.handler) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for s, old in previous.items():
                signal.signal(s, old)

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        self.critical = True
        try:
            yield
        finally:
            self.critical = False
        if self.pending:
            self.pending = False
            raise KeyboardInterrupt


def _cores() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1


def _progress_bar(total: int) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc="sweep", unit="run", file=sys.stderr, dynamic_ncols=True)


def _stderr_is_tty() -> bool:
    stream = sys.stderr
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):
        return False


def _one_line(message: str) -> str:
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return "; ".join(lines) if lines else "unknown error"
