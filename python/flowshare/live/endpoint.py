"""One endpoint of flowshare's live transport as a process of a live run:
``python -m flowshare.live.endpoint REQUEST REPORT --at T``.

At ``T`` (``CLOCK_MONOTONIC`` seconds, which every namespace shares) it starts the side of the
flow the request (JSON) names, over a UDP socket, runs it for the request's duration or until
SIGTERM, SIGINT or SIGHUP, and writes its report (JSON) to REPORT. An error is one line on
stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from .. import _core
from .part import run_part, stop_event

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m flowshare.live.endpoint")
    parser.add_argument("request", type=Path)
    parser.add_argument("report", type=Path)
    parser.add_argument("--at", type=float, required=True, help="CLOCK_MONOTONIC start, s")
    args = parser.parse_args(argv)
    stopped = stop_event()
    request = args.request.read_text()
    while not stopped.is_set() and (left := args.at - time.monotonic()) > 0:
        stopped.wait(min(left, 0.05))
    return run_part("live endpoint", lambda: _core.Endpoint(request), args.report, stopped)


if __name__ == "__main__":
    sys.exit(main())
