"""flowshare-only benchmark cases that are not races against the peers: how long a network of
many flows takes to build, and how memory behaves under a web workload of a million transfers.

* ``setup``: R1's dumbbell with 1,000 to 100,000 flows, run for 1 ms, so that the time is that
  of parsing, validating and building the network and its routes. Timed as the
  ``flowshare-sim`` process and, when the ``flowshare`` package can be imported, as
  ``flowshare.run`` inside Python (the interpreter's start-up excluded).
* ``web``: ``scenarios/web-closed-loop.toml`` (26,000 closed-loop users) stopped after 100,000
  and after 1,000,000 transfers, with the per-transfer table streamed to a file: peak memory
  should not grow with the transfers made, only with the connections open at a time
  (``slots``).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

#: Flow counts of the set-up case.
SETUP_FLOWS = (1_000, 8_000, 26_000, 100_000)

#: The set-up target of docs/performance.md: 26,000 flows built in at most this long.
SETUP_TARGET_S = 1.0
SETUP_TARGET_FLOWS = 26_000

WEB_SCENARIO = Path("scenarios/web-closed-loop.toml")
WEB_LIMITS = (100_000, 1_000_000)

#: Runs `flowshare.run` on a scenario file and prints the seconds it took.
_PY_TIMER = (
    "import sys, time, flowshare\n"
    "t = time.perf_counter()\n"
    "flowshare.run(sys.argv[1], progress=False)\n"
    "print(time.perf_counter() - t)\n"
)


def setup_scenario(r1_text: str, flows: int) -> str:
    """R1's scenario text with ``flows`` flows, run for 1 ms, without time series."""
    text, n = re.subn(r"(?m)^count = \d+$", f"count = {flows}", r1_text)
    if n != 1:
        raise ValueError("R1's scenario has no single `count = N` line")
    text = re.sub(r'(?m)^duration = "[^"]*"$', 'duration = "1ms"', text)
    return re.sub(r'(?m)^sample_interval = "[^"]*"$', 'sample_interval = "0s"', text)


def web_scenario(text: str, limit: int) -> str:
    """The web scenario's text stopped after ``limit`` transfers."""
    out, n = re.subn(r"(?m)^limit = \d+$", f"limit = {limit}", text)
    if n != 1:
        raise ValueError(f"{WEB_SCENARIO} has no single `limit = N` line")
    return out


def python_can_run() -> bool:
    """Whether this interpreter imports the built ``flowshare`` package."""
    probe = subprocess.run([sys.executable, "-c", "import flowshare"], capture_output=True)
    return probe.returncode == 0


def run_setup(sim: Path, r1: Path, repeat: int, measure: Callable[..., Any],
              median: Callable[[Sequence[float]], float | None], log: Callable[[str], None],
              tmp: Path) -> dict[str, Any]:
    """The set-up case: per flow count, flowshare-sim's wall time and peak memory, and
    ``flowshare.run``'s time in Python (medians of ``repeat`` runs)."""
    base = r1.read_text()
    with_python = python_can_run()
    rows = []
    for flows in SETUP_FLOWS:
        path = tmp / f"setup-{flows}.toml"
        path.write_text(setup_scenario(base, flows))
        walls, peaks, py = [], [], []
        for _ in range(repeat):
            res = measure([str(sim), str(path)])
            if not res.ok:
                tail = res.stderr.strip()[-200:]
                raise RuntimeError(f"flowshare-sim with {flows} flows failed: {tail}")
            walls.append(res.wall_s)
            if res.peak_mib is not None:
                peaks.append(res.peak_mib)
            if with_python:
                out = subprocess.run([sys.executable, "-c", _PY_TIMER, str(path)],
                                     capture_output=True, text=True, check=True)
                py.append(float(out.stdout.strip().splitlines()[-1]))
        rows.append({"flows": flows, "sim_s": median(walls),
                     "peak_mib": max(peaks) if peaks else None,
                     "python_s": median(py) if py else None})
        log(f"setup {flows} flows: flowshare-sim {median(walls):.3f} s"
            + (f", flowshare.run {median(py):.3f} s" if py else ""))
    target = next((r for r in rows if r["flows"] == SETUP_TARGET_FLOWS), None)
    slowest = None
    if target:
        times = [t for t in (target["sim_s"], target["python_s"]) if t is not None]
        slowest = max(times) if times else None
    return {"repeat": repeat, "rows": rows, "python": with_python,
            "meets_target": None if slowest is None else slowest <= SETUP_TARGET_S}


def run_web(sim: Path, web: Path, measure: Callable[..., Any], log: Callable[[str], None],
            tmp: Path) -> dict[str, Any]:
    """The web case: per transfer limit, wall time, peak memory, transfers and slots."""
    base = web.read_text()
    rows = []
    for limit in WEB_LIMITS:
        path = tmp / f"web-{limit}.toml"
        path.write_text(web_scenario(base, limit))
        table = tmp / f"transfers-{limit}.csv"
        res = measure([str(sim), "--transfers", str(table), str(path)])
        if not res.ok:
            tail = res.stderr.strip()[-200:]
            raise RuntimeError(f"flowshare-sim on the web workload failed: {tail}")
        out = json.loads(res.stdout.strip().splitlines()[-1])
        rows.append({"limit": limit, "wall_s": res.wall_s, "peak_mib": res.peak_mib,
                     "transfers": out.get("transfers"), "slots": out.get("slots"),
                     "events": out.get("events")})
        table.unlink(missing_ok=True)
        log(f"web {limit} transfers: {res.wall_s:.2f} s, {res.peak_mib or float('nan'):.1f} MiB, "
            f"{out.get('slots')} slots")
    return {"rows": rows}


def render(setup: Mapping[str, Any] | None, web: Mapping[str, Any] | None) -> list[str]:
    """The markdown sections of docs/performance.md."""
    out: list[str] = []
    if setup:
        out += ["### Set-up: building many flows", "",
                f"R1's dumbbell with N flows (two hosts and two access links each) run for 1 ms: "
                f"the time is that of parsing, validating and building the network and its "
                f"routes. `flowshare-sim` is the whole process (median of {setup['repeat']}); "
                "`flowshare.run` is the call from Python, results included, without the "
                "interpreter's start-up.", "",
                "| flows | flowshare-sim | peak memory | flowshare.run (Python) |",
                "|---|---|---|---|"]
        for r in setup["rows"]:
            py = "–" if r["python_s"] is None else f"{r['python_s']:.3f} s"
            peak = "–" if r["peak_mib"] is None else f"{r['peak_mib']:,.1f} MiB"
            out.append(f"| {r['flows']:,} | {r['sim_s']:.3f} s | {peak} | {py} |")
        verdicts = {True: "**met**", False: "**not met**", None: "not measured"}
        verdict = verdicts[setup["meets_target"]]
        out += ["", f"Target: {SETUP_TARGET_FLOWS:,} flows built in at most {SETUP_TARGET_S:g} s: "
                f"{verdict}.", ""]
    if web:
        out += ["### Connections at run time: a million web transfers", "",
                "`scenarios/web-closed-loop.toml`: 26,000 closed-loop users (think time "
                "exponential, mean 5 s; Pareto object sizes, mean 20 KB) over a 1 Gbit/s "
                "bottleneck, stopped after the given number of transfers, with the "
                "per-transfer table streamed to a file (`flowshare-sim --transfers`). Slots are "
                "the most connections open at once.", "",
                "| transfers | wall time | peak memory | slots | events |",
                "|---|---|---|---|---|"]
        for r in web["rows"]:
            peak = "–" if r["peak_mib"] is None else f"{r['peak_mib']:,.1f} MiB"
            out.append(f"| {r['transfers']:,} | {r['wall_s']:.2f} s | {peak} | {r['slots']:,} "
                       f"| {r['events']:,} |")
        out.append("")
    return out


def temp_dir() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="flowshare-bench-workloads-")
