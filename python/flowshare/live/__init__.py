"""Live mode: flowshare's scenarios run over real network stacks.

:func:`run` runs a dumbbell scenario with real endpoints (the kernel's TCP) whose packets
cross the simulator's own link model in a link emulator between two network namespaces made
for the run; it writes the files ``flowshare run`` writes, which
:func:`flowshare.live.compare.compare` sets beside a simulation's. See docs/live.md.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from .._files import atomic_directory, check_directory, read_document_text
from .. import _core
from ..results import EVENTS_FILE
from . import trace
from .netns import LiveError, check_privileges
from .session import Stack

__all__ = ["LiveError", "check_privileges", "run"]


def run(scenario: str | os.PathLike[str], out: str | os.PathLike[str], *,
        stack: Stack = "kernel") -> list[Path]:
    """Run the scenario file ``scenario`` live; write its files into ``out`` and list them.

    Nothing is written unless the run completes; the namespaces, devices and processes it made
    are removed on every exit path, Ctrl-C included.
    """
    import json

    from . import outputs, session

    if not isinstance(scenario, str | os.PathLike):
        raise _core.ConfigError(
            f"scenario: expected the path of a .toml or .json file, got {scenario!r}"
        )
    check_directory("out", out)
    path = Path(scenario)
    text, fmt = read_document_text(path, "scenario")
    normalized = json.loads(_core.parse_scenario(text, fmt, path.parent))
    session.plan(normalized, stack)  # a bad scenario fails before anything is made
    check_privileges()
    # The working directory is in the staging directory, on the output's file system: the
    # event trace's records and the capture can be large.
    with atomic_directory(out) as stage, tempfile.TemporaryDirectory(
        prefix=".flowshare-live-", dir=stage
    ) as tmp:
        reports = session.run(normalized, Path(tmp), stack=stack)
        names = outputs.write(stage, reports["plan"], reports)
        if trace.events_wanted(normalized):
            trace.write(stage / EVENTS_FILE, Path(tmp) / trace.RECORDS_FILE, normalized,
                        reports["t0_s"], reports["emulator"])
            names.append(EVENTS_FILE)
        capture = Path(tmp) / session.PCAP_FILE
        if capture.exists():
            shutil.move(capture, stage / session.PCAP_FILE)
            names.append(session.PCAP_FILE)
    return [Path(out) / name for name in names]
