"""The link emulator as a process of a live run: ``python -m flowshare.live.emulator REQUEST
REPORT``.

It brings the TUN devices up in the two namespaces named in the request (JSON), prints
``ready`` on stdout, and forwards packets through the scenario's link until the request's
duration has passed or it receives SIGTERM, SIGINT or SIGHUP; then it removes the devices
and writes its report (JSON) to REPORT. An error is one line on stderr and exit status 1,
with nothing written.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from .. import _core

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2:
        print("usage: python -m flowshare.live.emulator REQUEST.json REPORT.json", file=sys.stderr)
        return 2
    request, report = Path(args[0]), Path(args[1])
    stopped = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        stopped.set()

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    try:
        emulator = _core.Emulator(request.read_text())
    except (OSError, ValueError, RuntimeError) as exc:
        print(f"link emulator: {exc}", file=sys.stderr)
        return 1
    print("ready", flush=True)
    # The main thread sleeps in short steps so that a signal is handled promptly.
    while not stopped.wait(0.05) and not emulator.finished():
        pass
    emulator.stop()
    try:
        text = emulator.join()
    except RuntimeError as exc:
        print(f"link emulator: {exc}", file=sys.stderr)
        return 1
    tmp = report.with_suffix(".tmp")
    tmp.write_text(json.dumps(json.loads(text), indent=2))
    tmp.replace(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
