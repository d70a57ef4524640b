"""Run a sweep: validate every arm, open the run store, execute the runs locally or on Dask.

Every backend calls the same :func:`execute_run` on a worker and sends back the run's files as
bytes; only the driving process writes the store. Results therefore do not depend on the
backend, the number of workers or the order in which runs finish, and Dask workers need no
shared file system.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.context
import multiprocessing.spawn
import os
import shutil
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
from .._files import INTERRUPT_SIGNALS, check_directory, check_flag, interrupts_deferred
from ..guard import Budget
from . import stats
from .store import PYTHON_NAMES, RunStore
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
    force: bool = False,
) -> SweepOutcome:
    """Run every run of a sweep and write the run store ``out``.

    Works from a plain script without an ``if __name__ == "__main__":`` guard: the local
    workers do not import the main module (see :func:`_preparation_data`). A sweep that
    stops before any of its runs has finished (an error, an interrupt) removes the store it
    created, so the same call can be made again. Errors name this function's arguments
    (``resume=True``, ``out``).

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
    force : bool
        Run every arm whatever the resource guard estimates (``docs/reliability.md``): for
        sweeps known to fit although the estimate says otherwise, such as runs whose event
        trace keeps only a few kinds of events, which the estimate counts in full.

    Raises
    ------
    ConfigError
        If the sweep or any arm's scenario is invalid (nothing runs), or ``out`` cannot hold
        the sweep.
    KeyboardInterrupt
        On Ctrl-C, SIGTERM or SIGHUP, after stopping the runs in flight and recording the runs
        already finished. The exception is the one the signal's handler raises where that is
        a Python function (the command line's carries the signal), else ``KeyboardInterrupt``.
        A signal ignored when the sweep starts (SIGHUP under ``nohup``) stays ignored.
    """
    return sweep_with_names(
        source, out, workers=workers, dask=dask, resume=resume, progress=progress,
        names=PYTHON_NAMES, force=force,
    )


def sweep_with_names(
    source: Sweep | str | os.PathLike[str] | Mapping[str, Any],
    out: str | os.PathLike[str],
    *,
    workers: int | None,
    dask: Any,
    resume: bool,
    progress: bool | None,
    names: Mapping[str, str],
    force: bool = False,
) -> SweepOutcome:
    """:func:`run_sweep`, with errors naming the arguments as ``names`` says (the command line
    passes :data:`~flowshare.study.store.CLI_NAMES`)."""
    check_directory(names["out"], out)
    check_flag("progress", progress)
    check_flag("resume", resume, optional=False)
    sweep = source if isinstance(source, Sweep) else load_sweep(source)
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise ConfigError(f"{names['workers']}: expected an integer >= 1, got {workers!r}")
    runs = sweep.runs(sweep.validate(force=force))
    # Connect before the store is created, so that a wrong address leaves nothing behind.
    client, own_client = _dask_client(dask, names) if dask is not None else (None, False)
    try:
        return _execute(sweep, runs, out, client, workers, resume=resume, progress=progress,
                        names=names, force=force)
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
    names: Mapping[str, str],
    force: bool = False,
) -> SweepOutcome:
    store = RunStore.open(out, sweep, runs, resume=resume, names=names)
    try:
        return _execute_in(store, sweep, runs, out, client, workers, progress=progress,
                           force=force)
    except BaseException:
        # A sweep that stops before its first run finished (an interrupt, workers that could
        # not start) leaves no store behind: nothing in it would be worth resuming.
        if store.recorded == 0:
            store.discard()
        raise


def _execute_in(
    store: RunStore,
    sweep: Sweep,
    runs: Sequence[Run],
    out: str | os.PathLike[str],
    client: Any,
    workers: int | None,
    *,
    progress: bool | None,
    force: bool = False,
) -> SweepOutcome:
    todo = store.to_run()
    response_specs = [{"name": r.name, **r.to_dict()} for r in sweep.responses]
    tasks = [
        {"run_id": run.run_id, "scenario": run.scenario, "responses": response_specs,
         "force": force}
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
            try:
                if not tasks:
                    pass
                elif client is not None:
                    _run_dask(tasks, client, on_outcome)
                else:
                    count = min(workers or _cores(), len(tasks))
                    _run_local(tasks, count, on_outcome)
            finally:
                # The catalog catches up with the run directories even if a second signal
                # comes while it is written.
                with interrupts.deferred():
                    store.flush()
    finally:
        if bar is not None:
            bar.close()
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
        ``run_id``, ``scenario`` (normalized, seed set), ``responses`` (definitions) and,
        optionally, ``force`` (run whatever the resource guard estimates).

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
    directory = ""
    try:
        # The run's temporary directory is created and removed with signals held back, so that
        # Ctrl-C cannot come between its creation and the code that removes it.
        with interrupts_deferred():
            directory = tempfile.mkdtemp(prefix="flowshare-run-")
        # pcap captures (trace.pcap) stream into the same directory as the other files.
        budget = Budget(force=True) if task.get("force") else None
        result = _sim.run(task["scenario"], progress=False, pcap_dir=directory, budget=budget)
        definitions = [Response(**spec) for spec in task["responses"]]
        responses = evaluate_responses(result, definitions)
        for name in result.write_into(directory):
            files[name] = (Path(directory) / name).read_bytes()
    except Exception as exc:  # the run failed; the sweep records why and goes on
        error = _one_line(f"{type(exc).__name__}: {exc}")
        files, responses = {}, {}
    finally:
        if directory:
            with interrupts_deferred():
                shutil.rmtree(directory, ignore_errors=True)
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


_MANAGER_EXIT_S = 5.0
"""How long a stopping sweep waits for its process pool's manager thread to exit."""


def _run_local(
    tasks: Sequence[Outcome], workers: int, on_outcome: Callable[[Outcome], None]
) -> None:
    if workers == 1:
        for task in tasks:
            on_outcome(execute_run(task))
        return
    pool: ProcessPoolExecutor | None = None
    try:
        # "spawn": workers start clean, without the driver's threads or open files, and
        # without running the driver's main script (_WorkerContext). The pool's processes
        # (the workers, multiprocessing's resource tracker) are started with the stopping
        # signals blocked, see _signals_blocked.
        with _signals_blocked():
            pool = ProcessPoolExecutor(
                max_workers=workers,
                mp_context=_WorkerContext(),
                initializer=_init_worker,
                initargs=(os.getpid(),),
            )
        with _signals_blocked():
            futures = [pool.submit(_execute_in_worker, task) for task in tasks]
        for future in as_completed(futures):
            on_outcome(future.result())
    except BaseException:
        # Runs in flight are lost by design; stop the workers now rather than let them finish
        # (SIGTERM: a worker ends its run within a slice of simulated time, removing its
        # temporary files, and exits once the pool has shut down). Another signal waits until
        # they are told.
        with interrupts_deferred():
            if pool is not None:
                processes = list(getattr(pool, "_processes", {}).values())
                manager = getattr(pool, "_executor_manager_thread", None)
                pool.shutdown(wait=False, cancel_futures=True)
                for process in processes:
                    with contextlib.suppress(Exception):
                        process.terminate()
                # The pool's manager thread closes its wake-up pipe once it sees the workers
                # gone; if that raced with the interpreter's exit hook, which writes to the
                # pipe, Python 3.11 would print an ignored OSError (fixed in 3.12). Wait for it
                # a bounded time.
                if manager is not None:
                    manager.join(timeout=_MANAGER_EXIT_S)
        raise
    pool.shutdown(wait=True)


def _dask_client(dask: Any, names: Mapping[str, str]) -> tuple[Any, bool]:
    """A dask.distributed client for an address (ours to close) or the client given."""
    try:
        from distributed import Client
    except ImportError:
        raise ConfigError(
            f"{names['dask']}: needs dask.distributed; install it with: "
            "pip install 'flowshare[dask]'"
        ) from None
    if isinstance(dask, Client):
        return dask, False
    _check_address(dask, names["dask"])
    try:
        return Client(dask, timeout=DASK_CONNECT_TIMEOUT, set_as_default=False), True
    except (OSError, TimeoutError, ValueError) as exc:
        raise ConfigError(
            f"{names['dask']}: cannot connect to the scheduler at {dask}: {_one_line(str(exc))}"
        ) from None


_HOST_PORT_SCHEMES = ("tcp", "tls", "ws", "wss")


def _check_address(dask: Any, name: str) -> None:
    """Refuse a scheduler address that cannot name one before a ``Client`` is made: a client
    that fails on a malformed address is left half-built, and its finaliser then waits 40 s
    and prints a traceback after our one-line error."""
    from distributed.comm.addressing import get_address_host_port, parse_address
    from distributed.comm.registry import get_backend

    expected = "expected a scheduler address such as tcp://HOST:PORT or HOST:PORT"
    if not isinstance(dask, str):
        raise ConfigError(f"{name}: {expected} or a distributed.Client, got {dask!r}")
    try:
        scheme, _ = parse_address(dask)
        get_backend(scheme)
        if scheme in _HOST_PORT_SCHEMES:
            host, port = get_address_host_port(dask)
            if not host:
                raise ValueError("no host")
            if not 0 < port < 65536:
                raise ValueError(f"port {port} outside 1-65535")
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{name}: {expected}, got {dask!r} ({_one_line(str(exc))})") from None


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

_launching = threading.local()


def _preparation_data(name: str) -> dict[str, Any]:
    """``multiprocessing.spawn.get_preparation_data`` without the main module for our workers.

    A spawned process normally imports the parent's ``__main__`` again (a script runs once
    more as ``__mp_main__``), which is why multiprocessing asks scripts for an
    ``if __name__ == "__main__":`` guard. The sweep's workers need nothing from the main
    module: the function they run lives in this module and their tasks are plain data. So
    the processes this module starts leave it out, and a script that calls
    :func:`run_sweep` at its top level works as it is written. Processes started by anyone
    else (another thread, the user's own pools) are unaffected.
    """
    data: dict[str, Any] = _spawn_preparation(name)
    if getattr(_launching, "active", False):
        data.pop("init_main_from_path", None)
        data.pop("init_main_from_name", None)
    return data


_spawn_preparation = multiprocessing.spawn.get_preparation_data


def _install_preparation() -> None:
    if multiprocessing.spawn.get_preparation_data is not _preparation_data:
        global _spawn_preparation
        _spawn_preparation = multiprocessing.spawn.get_preparation_data
        multiprocessing.spawn.get_preparation_data = _preparation_data


class _WorkerProcess(multiprocessing.context.SpawnProcess):
    """A spawned process that does not import the parent's main module (see
    :func:`_preparation_data`)."""

    @staticmethod
    def _Popen(process_obj: Any) -> Any:  # noqa: N802 (multiprocessing's name)
        _install_preparation()
        _launching.active = True
        try:
            return multiprocessing.context.SpawnProcess._Popen(process_obj)
        finally:
            _launching.active = False


class _WorkerContext(multiprocessing.context.SpawnContext):
    """The ``spawn`` context, with processes that leave the main module alone."""

    Process = _WorkerProcess


@contextlib.contextmanager
def _signals_blocked() -> Iterator[None]:
    """Block Ctrl-C, SIGTERM and SIGHUP in this thread while processes are started.

    A terminal sends Ctrl-C and its hang-up to the whole process group, workers included. A
    started process inherits the blocked signals and keeps them blocked until it has taken its
    own measures: a worker in :func:`_init_worker` (a worker still importing would die with a
    traceback on the shared stderr), multiprocessing's resource tracker never for SIGHUP (it
    ignores SIGINT and SIGTERM, and would die of a hang-up). In the driver, a signal that
    arrives meanwhile is taken by another thread or handled when the block ends.
    """
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, INTERRUPT_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


class _WorkerStopped(KeyboardInterrupt):
    """SIGTERM in a worker of the local pool: its run unwinds (its temporary directory is
    removed) and the runs still queued for it are refused; the driver stops the sweep."""


_worker_busy = False
_worker_stopping = False


def _init_worker(driver_pid: int) -> None:
    """Workers leave Ctrl-C and SIGHUP to the driver, which stops them with SIGTERM, and exit
    when the driver is gone (a SIGKILL gives it no chance to stop them; idle workers would
    otherwise wait forever)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _worker_terminated)
    if hasattr(signal, "pthread_sigmask"):  # blocked by the driver while it started us
        signal.pthread_sigmask(signal.SIG_UNBLOCK, INTERRUPT_SIGNALS)

    def watch() -> None:
        while os.getppid() == driver_pid:
            time.sleep(PARENT_POLL_S)
        os._exit(1)

    threading.Thread(target=watch, name="flowshare-driver-watch", daemon=True).start()


def _worker_terminated(signum: int, frame: Any) -> None:
    """SIGTERM in a worker. The worker does not exit there and then: killed while it sends a
    run's files back, it would leave the driver waiting forever for the rest of the message.
    It ends its run, refuses the runs queued for it, and exits when the pool shuts down."""
    global _worker_stopping
    if _worker_stopping:
        return
    _worker_stopping = True
    if _worker_busy:
        raise _WorkerStopped


def _execute_in_worker(task: Mapping[str, Any]) -> Outcome:
    """:func:`execute_run` in a worker of the local pool, stopped by SIGTERM."""
    global _worker_busy
    _worker_busy = True
    try:
        if _worker_stopping:
            raise _WorkerStopped
        return execute_run(task)
    finally:
        _worker_busy = False


class _Interrupts:
    """Ctrl-C, SIGTERM and SIGHUP stop the sweep while it runs, except while a run is being
    recorded: then the interrupt waits until the run directory and its catalog row agree.

    The exception raised is the one the signal's previous handler raises (the command line's
    carries the signal; Ctrl-C's is ``KeyboardInterrupt``), or ``KeyboardInterrupt`` where
    the signal had its default action. A signal ignored when the sweep starts (``nohup``,
    a background job) stays ignored. Once the sweep is stopping, further signals are absorbed:
    the workers are stopped and the catalog is written all the same.

    (Masking the signals would not do: another thread of the process may take them.)
    """

    def __init__(self) -> None:
        self.critical = False
        self.pending: int | None = None
        self.stopping = False
        self.previous: dict[int, Any] = {}

    def handler(self, signum: int, frame: Any) -> None:
        if self.stopping:
            return
        if self.critical:
            if self.pending is None:
                self.pending = signum
            return
        self.stop(signum, frame)

    def stop(self, signum: int, frame: Any) -> None:
        self.stopping = True
        previous = self.previous.get(signum)
        if callable(previous):
            previous(signum, frame)  # raises, as a rule
        raise KeyboardInterrupt

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        for s in INTERRUPT_SIGNALS:
            current = signal.getsignal(s)
            if current is signal.SIG_IGN or current is None:  # ignored, or not Python's to set
                continue
            self.previous[s] = current
            signal.signal(s, self.handler)
        try:
            yield
        finally:
            for s, old in self.previous.items():
                signal.signal(s, old)

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        self.critical = True
        try:
            yield
        finally:
            self.critical = False
        if self.pending is not None:
            signum, self.pending = self.pending, None
            self.stop(signum, None)


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
