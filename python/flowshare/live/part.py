"""What every Rust part of a live run (the link emulator, an endpoint) does as a process: stop
on SIGTERM, SIGINT or SIGHUP, run to its end, and write its report whole or not at all."""

from __future__ import annotations

import json
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

__all__ = ["Part", "STAGES", "run_part", "stop_event"]


class Part(Protocol):
    """A Rust part running on its own thread (``_core.Emulator``, ``_core.Endpoint``)."""

    def stop(self) -> None: ...
    def finished(self) -> bool: ...
    def join(self) -> str: ...


def stop_event() -> threading.Event:
    """An event set by SIGTERM, SIGINT or SIGHUP."""
    stopped = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda _signum, _frame: stopped.set())
    return stopped


#: The stages a part passes through, in order, as ``on_stage`` is told of them: started (its
#: devices or sockets are ready), stopping (its end was asked for or reached), joined (its
#: thread has ended and released what it held) and reported (its report is written).
STAGES = ("ready", "stopping", "joined", "reported")


def run_part(what: str, start: Callable[[], Part], report: Path, stopped: threading.Event,
             on_stage: Callable[[str], None] = lambda _stage: None) -> int:
    """Start a part, run it until it ends or ``stopped`` is set, and write its report; return
    the exit status (1, with one line on stderr, if it could not start or failed).
    ``on_stage`` is told of each of :data:`STAGES` as it is reached, so that a part slow to
    end can be seen where it is."""
    try:
        part = start()
    except (OSError, ValueError, RuntimeError) as exc:
        print(f"{what}: {exc}", file=sys.stderr)
        return 1
    on_stage("ready")
    # The main thread waits in short steps so that a signal is handled promptly.
    while not stopped.wait(0.05) and not part.finished():
        pass
    on_stage("stopping")
    part.stop()
    try:
        text = part.join()
    except RuntimeError as exc:
        print(f"{what}: {exc}", file=sys.stderr)
        return 1
    on_stage("joined")
    tmp = report.with_suffix(".tmp")
    tmp.write_text(json.dumps(json.loads(text), indent=2))
    tmp.replace(report)
    on_stage("reported")
    return 0
