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

__all__ = ["Part", "run_part", "stop_event"]


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


def run_part(what: str, start: Callable[[], Part], report: Path, stopped: threading.Event,
             on_start: Callable[[], None] = lambda: None) -> int:
    """Start a part, run it until it ends or ``stopped`` is set, and write its report; return
    the exit status (1, with one line on stderr, if it could not start or failed)."""
    try:
        part = start()
    except (OSError, ValueError, RuntimeError) as exc:
        print(f"{what}: {exc}", file=sys.stderr)
        return 1
    on_start()
    # The main thread waits in short steps so that a signal is handled promptly.
    while not stopped.wait(0.05) and not part.finished():
        pass
    part.stop()
    try:
        text = part.join()
    except RuntimeError as exc:
        print(f"{what}: {exc}", file=sys.stderr)
        return 1
    tmp = report.with_suffix(".tmp")
    tmp.write_text(json.dumps(json.loads(text), indent=2))
    tmp.replace(report)
    return 0
