"""The link emulator as a process of a live run: ``python -m flowshare.live.emulator REQUEST
REPORT``.

It brings the TUN devices up in the two namespaces named in the request (JSON), prints
``ready`` on stdout, and forwards packets through the scenario's link until the request's
duration has passed or it receives SIGTERM, SIGINT or SIGHUP; then it removes the devices
and writes its report (JSON) to REPORT. Each stage it reaches is a line on stdout
(``ready``, ``stopping``, ``joined``, ``reported``), so that the run can tell where an
emulator slow to end is. An error is one line on stderr and exit status 1,
with nothing written.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from .. import _core
from .part import run_part, stop_event

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2:
        print("usage: python -m flowshare.live.emulator REQUEST.json REPORT.json", file=sys.stderr)
        return 2
    request, report = Path(args[0]), Path(args[1])
    stopped = stop_event()
    return run_part(
        "link emulator",
        lambda: _core.Emulator(request.read_text()),
        report,
        stopped,
        on_stage=lambda stage: print(stage, flush=True),
    )


if __name__ == "__main__":
    sys.exit(main())
