"""flowshare-only benchmark cases that are not races against the peers: how long a network of
many flows takes to build, and how memory behaves under a web workload of a million transfers.

* ``setup``: R1's dumbbell with 1,000 to 100,000 flows, run for 1 ms, so that the time is that
  of parsing, validating and building the network and its routes. Timed as the
  ``flowshare-sim`` process and, when the ``flowshare`` package can be imported, as
  ``flowshare.run`` inside Python (the interpreter's start-up excluded).
* ``web``: ``scenarios/web-closed-loop.toml`` (26,000 closed-loop users) stopped after 100,000
  and after 1,000,000 transfers, with the per-transfer table streamed to a file: peak memory
  should not grow with the transfers made, only with the connections open at a time
  (``slots``); and ``scenarios/web-three-tier.toml``, the same users across a three-tier
  network, stopped after 1,000,000 transfers: many short transfers over multi-hop routes.
* ``population``: R1's dumbbell with 10,000 and 100,000 long flows at once, the bottleneck
  and its queue scaled with the flows (1 Mbit/s and R1's 30 ms of buffer per flow), for 2 s:
  time per event against R1's, measured in the same invocation, and peak memory per flow.
* ``e2e``: ``flowshare run`` on R1, every output file and the plot included, as a whole
  process, beside the simulation alone (``flowshare-sim``'s own event-loop time and process)
  and ns-2 on the same network: what the command adds to the simulation
  (docs/adr/0009-outputs-written-from-rust.md).
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

#: Flow counts of the population case, its bottleneck share per flow, its length, and the
#: interval over which its flows start (evenly spaced).
POPULATION_FLOWS = (10_000, 100_000)
POPULATION_MBPS_PER_FLOW = 1
POPULATION_DURATION_S = 2
POPULATION_START_WINDOW_US = 100_000
#: R1's queue (250 packets at 100 Mbit/s, 30 ms), kept in time as the bottleneck grows.
R1_QUEUE_PER_MBPS = 2.5
#: The targets of the largest population: time per event at most this many times R1's,
#: peak memory per flow at most this many bytes.
POPULATION_TARGET_EVENT_RATIO = 2.0
POPULATION_TARGET_BYTES_PER_FLOW = 2048

WEB_SCENARIO = Path("scenarios/web-closed-loop.toml")
#: The same population over a three-tier network of 28 routers, in 16 groups.
WEB_THREE_TIER = Path("scenarios/web-three-tier.toml")
#: The web case's runs: a scenario and the transfers after which it stops opening more.
WEB_RUNS = ((WEB_SCENARIO, 100_000), (WEB_SCENARIO, 1_000_000), (WEB_THREE_TIER, 1_000_000))

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


def population_scenario(r1_text: str, flows: int) -> str:
    """R1's scenario text with ``flows`` long flows started over the first 100 ms, the
    bottleneck at 1 Mbit/s per flow with R1's 30 ms of queue, run for 2 s without time
    series."""
    text = setup_scenario(r1_text, flows)
    text = re.sub(r'(?m)^duration = "[^"]*"$', f'duration = "{POPULATION_DURATION_S}s"', text)
    mbps = flows * POPULATION_MBPS_PER_FLOW
    limit = round(mbps * R1_QUEUE_PER_MBPS)
    text, n = re.subn(r'(?m)^(bottleneck = \{ rate = )"[^"]*"(, delay = "[^"]*", queue = \{ limit = )\d+( \} \})$',
                      rf'\g<1>"{mbps}Mbps"\g<2>{limit}\g<3>', text)
    if n != 1:
        raise ValueError("R1's scenario has no single `bottleneck = { rate, delay, queue }` line")
    spacing_ns = POPULATION_START_WINDOW_US * 1000 // flows
    text, n = re.subn(r'(?m)^start_spacing = "[^"]*"$', f'start_spacing = "{spacing_ns}ns"', text)
    if n != 1:
        raise ValueError("R1's scenario has no single `start_spacing` line")
    return text


def _sim_json(stdout: str) -> dict[str, Any]:
    """flowshare-sim's JSON line (its last)."""
    return json.loads(stdout.strip().splitlines()[-1])


def _ns_per_event(out: Mapping[str, Any]) -> float | None:
    """The event loop's nanoseconds per event from flowshare-sim's JSON line."""
    events = out.get("events")
    return float(out["wall_s"]) * 1e9 / events if events else None


def run_population(sim: Path, r1: Path, repeat: int, measure: Callable[..., Any],
                   median: Callable[[Sequence[float]], float | None], log: Callable[[str], None],
                   tmp: Path) -> dict[str, Any]:
    """The population case: R1's own time per event (median of ``repeat`` runs), then per
    flow count one run's events, time per event, its ratio to R1's and peak memory per
    flow."""
    def run(path: Path, what: str) -> Any:
        res = measure([str(sim), str(path)])
        if not res.ok:
            raise RuntimeError(f"flowshare-sim {what} failed: {res.stderr.strip()[-200:]}")
        return res

    r1_times = [_ns_per_event(_sim_json(run(r1, "on R1").stdout)) for _ in range(repeat)]
    r1_ns = median([t for t in r1_times if t is not None])
    base = r1.read_text()
    rows = []
    for flows in POPULATION_FLOWS:
        path = tmp / f"population-{flows}.toml"
        path.write_text(population_scenario(base, flows))
        res = run(path, f"with {flows} flows")
        out = _sim_json(res.stdout)
        ns = _ns_per_event(out)
        per_flow = None if res.peak_mib is None else res.peak_mib * 2**20 / flows
        acked = out.get("acked_pkts")
        rows.append({"flows": flows, "events": out["events"], "ns_per_event": ns,
                     "events_per_packet": out["events"] / acked if acked else None,
                     "vs_r1": None if ns is None or not r1_ns else ns / r1_ns,
                     "wall_s": res.wall_s, "peak_mib": res.peak_mib, "bytes_per_flow": per_flow,
                     "goodput_mbps": out.get("goodput_mbps"), "drops": out.get("drops")})
        log(f"population {flows:,} flows: {_f(ns, 0)} ns per event, "
            f"{_f(per_flow, 0)} bytes per flow")
    largest = rows[-1]
    meets = None
    if largest["vs_r1"] is not None and largest["bytes_per_flow"] is not None:
        meets = (largest["vs_r1"] <= POPULATION_TARGET_EVENT_RATIO
                 and largest["bytes_per_flow"] <= POPULATION_TARGET_BYTES_PER_FLOW)
    return {"repeat": repeat, "r1_ns_per_event": r1_ns, "rows": rows, "meets_target": meets}


def web_scenario(text: str, limit: int) -> str:
    """A web scenario's text stopped after ``limit`` transfers, shared equally by its groups
    (each has a `limit = N` line)."""
    groups = len(re.findall(r"(?m)^limit = \d+$", text))
    if groups == 0 or limit % groups:
        raise ValueError(f"a web scenario needs `limit = N` lines, one per group, that can share "
                         f"{limit:,} transfers equally; it has {groups}")
    return re.sub(r"(?m)^limit = \d+$", f"limit = {limit // groups}", text)


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


def run_web(sim: Path, root: Path, measure: Callable[..., Any], log: Callable[[str], None],
            tmp: Path) -> dict[str, Any]:
    """The web case: per scenario and transfer limit, wall time, peak memory, transfers,
    slots, events and the event loop's time per event."""
    rows = []
    for scenario, limit in WEB_RUNS:
        path = tmp / f"{scenario.stem}-{limit}.toml"
        path.write_text(web_scenario((root / scenario).read_text(), limit))
        table = tmp / f"transfers-{scenario.stem}-{limit}.csv"
        res = measure([str(sim), "--transfers", str(table), str(path)])
        if not res.ok:
            tail = res.stderr.strip()[-200:]
            raise RuntimeError(f"flowshare-sim on the web workload failed: {tail}")
        out = _sim_json(res.stdout)
        rows.append({"scenario": str(scenario), "limit": limit, "wall_s": res.wall_s,
                     "peak_mib": res.peak_mib, "transfers": out.get("transfers"),
                     "slots": out.get("slots"), "events": out.get("events"),
                     "ns_per_event": _ns_per_event(out)})
        table.unlink(missing_ok=True)
        log(f"web {scenario.stem}, {limit} transfers: {res.wall_s:.2f} s, "
            f"{res.peak_mib or float('nan'):.1f} MiB, {out.get('slots')} slots")
    return {"rows": rows}


#: What ``flowshare run`` on R1 may add to the simulation's own time, and its peak memory
#: (twice ns-2's 20 MB), docs/performance.md.
E2E_TARGET_OVERHEAD_S = 0.1
E2E_TARGET_PEAK_MIB = 40e6 / 2**20


def run_e2e(sim: Path, r1: Path, ns2: Sequence[str] | None, repeat: int,
            measure: Callable[..., Any], median: Callable[[Sequence[float]], float | None],
            log: Callable[[str], None], tmp: Path) -> dict[str, Any]:
    """The end-to-end case: ``flowshare run R1 --out DIR`` as a whole process (median wall
    time, largest peak memory over ``repeat`` runs) beside ``flowshare-sim R1`` (its process
    and its in-process simulation time) and, when ``ns2`` (the command line of the ns-2 run)
    is given, ns-2. The overhead is the command's wall time less the simulation's own."""
    runs: dict[str, dict[str, list[float]]] = {
        k: {"wall": [], "peak": [], "sim": []} for k in ("sim", "run", "ns2")}

    def record(key: str, res: Any, what: str) -> None:
        if not res.ok:
            raise RuntimeError(f"{what} failed: {res.stderr.strip()[-200:]}")
        runs[key]["wall"].append(res.wall_s)
        if res.peak_mib is not None:
            runs[key]["peak"].append(res.peak_mib)

    with_python = python_can_run()
    for i in range(repeat):
        res = measure([str(sim), str(r1)])
        record("sim", res, "flowshare-sim on R1")
        runs["sim"]["sim"].append(float(_sim_json(res.stdout)["wall_s"]))
        if with_python:
            out = tmp / f"e2e-{i}"
            record("run", measure([sys.executable, "-m", "flowshare", "run", str(r1), "--out",
                                   str(out), "--no-progress"]), "flowshare run on R1")
        if ns2 is not None:
            res = measure(list(ns2))
            if res.ok:
                record("ns2", res, "ns-2")

    def med(key: str, what: str) -> float | None:
        return median(runs[key][what]) if runs[key][what] else None

    def peak(key: str) -> float | None:
        return max(runs[key]["peak"]) if runs[key]["peak"] else None

    sim_s, run_s = med("sim", "sim"), med("run", "wall")
    overhead = None if sim_s is None or run_s is None else run_s - sim_s
    run_peak = peak("run")
    meets = None
    if overhead is not None and run_peak is not None:
        meets = overhead <= E2E_TARGET_OVERHEAD_S and run_peak <= E2E_TARGET_PEAK_MIB
    result = {"repeat": repeat, "python": with_python,
              "sim_s": sim_s, "sim_process_s": med("sim", "wall"), "sim_peak_mib": peak("sim"),
              "run_s": run_s, "run_peak_mib": run_peak, "overhead_s": overhead,
              "ns2_s": med("ns2", "wall"), "ns2_peak_mib": peak("ns2"), "meets_target": meets}
    log(f"e2e R1: flowshare run {_f(run_s)} s ({_f(run_peak, 1)} MiB), simulation {_f(sim_s)} s"
        f", ns-2 {_f(result['ns2_s'])} s")
    return result


def _f(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def render(setup: Mapping[str, Any] | None, web: Mapping[str, Any] | None,
           e2e: Mapping[str, Any] | None = None,
           population: Mapping[str, Any] | None = None) -> list[str]:
    """The markdown sections of docs/performance.md."""
    out: list[str] = []
    if e2e:
        out += ["### End to end: flowshare run on R1", "",
                "`flowshare run scenarios/r1-dumbbell.toml --out DIR`, all files and the plot "
                "included, as a whole process (interpreter start-up included), beside the "
                "simulation alone (`flowshare-sim`: its in-process event-loop time and the "
                f"whole process) and ns-2 on the same network; medians of {e2e['repeat']} runs, "
                "peak memory the largest.", "",
                "| | wall time | peak memory |", "|---|---|---|",
                f"| `flowshare run` (Python, files and plot) | {_f(e2e['run_s'])} s "
                f"| {_f(e2e['run_peak_mib'], 1)} MiB |",
                f"| simulation alone (event loop) | {_f(e2e['sim_s'])} s | – |",
                f"| `flowshare-sim` process | {_f(e2e['sim_process_s'])} s "
                f"| {_f(e2e['sim_peak_mib'], 1)} MiB |",
                f"| ns-2 | {_f(e2e['ns2_s'])} s | {_f(e2e['ns2_peak_mib'], 1)} MiB |", ""]
        verdicts = {True: "**met**", False: "**not met**", None: "not measured"}
        out += [f"Overhead of the command over the simulation: {_f(e2e['overhead_s'])} s. "
                f"Target: at most {E2E_TARGET_OVERHEAD_S:g} s over the simulation and at most "
                f"{E2E_TARGET_PEAK_MIB:.1f} MiB (40 MB): {verdicts[e2e['meets_target']]}.", ""]
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
    if population:
        out += ["### Many concurrent flows", "",
                f"R1's dumbbell with N long flows started evenly over the first "
                f"{POPULATION_START_WINDOW_US // 1000} ms, the bottleneck at "
                f"{POPULATION_MBPS_PER_FLOW} Mbit/s per flow with R1's 30 ms of queue "
                f"({R1_QUEUE_PER_MBPS:g} packets per Mbit/s), {POPULATION_DURATION_S} s simulated, "
                "one run each. Time per event is the event loop's own time divided by its "
                f"events; R1's ({_f(population['r1_ns_per_event'], 0)} ns, median of "
                f"{population['repeat']}) is measured in the same invocation. Memory per flow "
                "is the process's peak resident memory divided by the flows.", "",
                "| flows | events | time per event | vs R1 | wall time | peak memory "
                "| per flow | goodput | bottleneck drops |",
                "|---|---|---|---|---|---|---|---|---|"]
        for r in population["rows"]:
            peak = "–" if r["peak_mib"] is None else f"{r['peak_mib']:,.1f} MiB"
            per_flow = "–" if r["bytes_per_flow"] is None else f"{r['bytes_per_flow']:,.0f} B"
            goodput = "–" if r["goodput_mbps"] is None else f"{r['goodput_mbps']:,.0f} Mbit/s"
            ns = "–" if r["ns_per_event"] is None else f"{r['ns_per_event']:,.0f} ns"
            out.append(f"| {r['flows']:,} | {r['events']:,} | {ns} "
                       f"| {_f(r['vs_r1'], 2)}× | {r['wall_s']:.1f} s | {peak} | {per_flow} "
                       f"| {goodput} | {r['drops']:,} |")
        verdicts = {True: "**met**", False: "**not met**", None: "not measured"}
        out += ["", f"Target for {POPULATION_FLOWS[-1]:,} flows: time per event at most "
                f"{POPULATION_TARGET_EVENT_RATIO:g}× R1's and at most "
                f"{POPULATION_TARGET_BYTES_PER_FLOW:,} bytes per flow: "
                f"{verdicts[population['meets_target']]}.", ""]
    if web:
        out += ["### Connections at run time: a million web transfers", "",
                f"`{WEB_SCENARIO}`: 26,000 closed-loop users (think time "
                "exponential, mean 5 s; Pareto object sizes, mean 20 KB) over a 1 Gbit/s "
                f"bottleneck; `{WEB_THREE_TIER}`: the same users in 16 groups across a "
                "three-tier network (backbone ring, POPs, access routers; five or six links a "
                "route). Each is stopped after the given number of transfers, with the "
                "per-transfer table streamed to a file (`flowshare-sim --transfers`). Slots are "
                "the most connections open at once; time per event is the event loop's.", "",
                "| scenario | transfers | wall time | peak memory | slots | events | time per event |",
                "|---|---|---|---|---|---|---|"]
        for r in web["rows"]:
            peak = "–" if r["peak_mib"] is None else f"{r['peak_mib']:,.1f} MiB"
            name = Path(r.get("scenario", WEB_SCENARIO)).stem
            out.append(f"| `{name}` | {r['transfers']:,} | {r['wall_s']:.2f} s | {peak} "
                       f"| {r['slots']:,} | {r['events']:,} | {_f(r.get('ns_per_event'), 0)} ns |")
        out.append("")
    return out


def temp_dir() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="flowshare-bench-workloads-")
