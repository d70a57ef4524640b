"""One endpoint of flowshare's live transport as a process of a live run:
``python -m flowshare.live.endpoint REQUEST REPORT --at T``.

At ``T`` (``CLOCK_MONOTONIC`` seconds, which every namespace shares) it starts the side of the
flow the request (JSON) names, over a UDP socket, runs it for the request's duration or until
SIGTERM, SIGINT or SIGHUP, and writes its report (JSON) to REPORT. An error is one line on
stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from .. import _core

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m flowshare.live.endpoint")
    parser.add_argument("request", type=Path)
    parser.add_argument("report", type=Path)
    parser.add_argument("--at", type=float, required=True, help="CLOCK_MONOTONIC start, s")
    args = parser.parse_args(argv)
    stopped = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        stopped.set()

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    request = args.request.read_text()
    while not stopped.is_set() and (left := args.at - time.monotonic()) > 0:
        stopped.wait(min(left, 0.05))
    try:
        endpoint = _core.Endpoint(request)
    except (ValueError, RuntimeError) as exc:
        print(f"live endpoint: {exc}", file=sys.stderr)
        return 1
    while not stopped.wait(0.05) and not endpoint.finished():
        pass
    endpoint.stop()
    try:
        text = endpoint.join()
    except RuntimeError as exc:
        print(f"live endpoint: {exc}", file=sys.stderr)
        return 1
    tmp = args.report.with_suffix(".tmp")
    tmp.write_text(json.dumps(json.loads(text), indent=2))
    tmp.replace(args.report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
