"""``flowshare live``: a dumbbell scenario run over real stacks through the link emulator.

The scenario's bottleneck becomes the emulator's link between two namespaces made for the
run: every sender in one, every receiver in the other, so every packet of the run crosses the
simulator's own link model (queue discipline, rate, delay, loss model) and nothing else. The
access links are not emulated: their propagation delays are added to the bottleneck's (they
add up along the path and the access links of a dumbbell do not queue), and their rate is the
TUN device's. The run writes the files ``flowshare run`` writes for the same measures, so the
two directories can be compared with the same tools (``flowshare compare``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .. import _core
from . import bottleneck, trace
from .kernel import KERNEL_ALGORITHMS, kernel_algorithm
from .netns import TERM_GRACE_S, LiveError, Namespaces, describe_process, namespaces

__all__ = ["LiveFlow", "LivePlan", "MAX_DURATION_S", "emulated_scenario", "plan", "run"]

Stack = Literal["kernel", "flowshare"]
STACKS: tuple[Stack, ...] = ("kernel", "flowshare")
#: A live run sends real traffic for its whole duration; longer runs are refused.
MAX_DURATION_S = 600.0
#: Time between starting the endpoints and the run's time zero, for the receivers to listen.
LEAD_S = 1.0
#: How long the emulator may take to bring its devices up.
READY_TIMEOUT_S = 15.0
#: How long the endpoints may take to finish after the run's end (the receiver drains).
FINISH_GRACE_S = 15.0
#: How long the emulator may take to exit once stopped. Removing a TUN device waits until the
#: kernel has released every reference to it (routes cached by sockets still closing), which
#: has been seen to take more than 15 s.
EMULATOR_EXIT_S = 60.0
SENDER_ADDRESS = "10.77.0.1"
RECEIVER_ADDRESS = "10.77.0.2"
PORT = 5001
#: Flow i of flowshare's transport uses UDP port ENDPOINT_PORT + i on both sides; a kernel
#: flow's sender binds TCP port ENDPOINT_PORT + i (the emulator's event trace tells flows apart
#: by their ports).
ENDPOINT_PORT = 6000
#: The capture of the emulated bottleneck, in the run's output directory.
PCAP_FILE = "bottleneck.pcap"


@dataclass(frozen=True)
class LiveFlow:
    """One flow of a live run: the scenario's flow ``index``, run by the kernel's TCP or by
    flowshare's live transport (``runner``)."""

    index: int
    name: str
    transport: Literal["tcp", "tfrc"]
    cc: str
    start_s: float
    runner: Stack
    #: MulTFRC's n (the number of TCP flows it stands for); 0 for other flows.
    n: float = 0.0
    #: Bytes of a TFRC or MulTFRC flow's reliable transfer (its scenario ``size``); -1: bulk.
    size_bytes: int = -1

    @property
    def port(self) -> int:
        """The UDP port of its endpoints (flowshare's transport), or its sender's TCP port
        (the kernel's)."""
        return ENDPOINT_PORT + self.index


@dataclass(frozen=True)
class LivePlan:
    """What a live run does: its flows, its length and the scenario the emulator applies."""

    stack: Stack
    duration_s: float
    flows: tuple[LiveFlow, ...]
    scenario: Mapping[str, Any]


def _seconds(text: str, field: str) -> float:
    try:
        return _core.parse_quantity("time", text)
    except ValueError as exc:
        raise LiveError(f"{field}: {exc}") from None


def emulated_scenario(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """The scenario with the access links' propagation delay folded into the bottleneck's."""
    out = json.loads(json.dumps(scenario))
    topology = out["topology"]
    bottleneck = topology["bottleneck"]
    delay = _seconds(bottleneck["delay"], "topology.bottleneck.delay")
    access = topology.get("access")
    if access is not None:
        delay += 2 * _seconds(access.get("delay", "0s"), "topology.access.delay")
    bottleneck["delay"] = f"{round(delay * 1e9)}ns"
    return out


def plan(scenario: Mapping[str, Any], stack: Stack) -> LivePlan:
    """Check that ``scenario`` (normalized) can run live on ``stack``; raise LiveError if not."""
    if stack not in STACKS:
        raise LiveError(f"stack: expected one of {', '.join(STACKS)}, got {stack!r}")
    topology = scenario.get("topology", {})
    if topology.get("kind") != "dumbbell":
        raise LiveError(
            f"topology.kind: live mode runs a dumbbell, got {topology.get('kind')!r}"
        )
    duration = _seconds(scenario["simulation"]["duration"], "simulation.duration")
    if duration > MAX_DURATION_S:
        raise LiveError(
            f"simulation.duration: a live run lasts at most {MAX_DURATION_S:g} s, got {duration:g} s"
        )
    flows: list[LiveFlow] = []
    for g, group in enumerate(scenario.get("flows", [])):
        where = f"flows[{g}]"
        unsupported = sorted(k for k in group if k not in _LIVE_FLOW_KEYS)
        if unsupported:
            raise LiveError(
                f"{where}.{unsupported[0]}: not supported by live mode (it runs long-lived "
                f"bulk transfers with {', '.join(sorted(_LIVE_FLOW_KEYS))})"
            )
        transport = group.get("transport", "tcp")
        n = 0.0
        size = -1
        if "size" in group:
            # A sized TFRC or MulTFRC flow is a reliable (selective-repeat) transfer of that
            # size over flowshare's live transport; the kernel's TCP flows are bulk.
            if transport != "tfrc":
                raise LiveError(
                    f"{where}.size: live mode runs sized transfers on tfrc flows only (a "
                    f"reliable TFRC or MulTFRC transfer); {transport} flows are bulk"
                )
            size = round(_core.parse_quantity("size", group["size"]))
        if transport == "tfrc":
            # The kernel has no TFRC: these flows always run on flowshare's transport.
            tfrc = group.get("tfrc", {})
            runner: Stack = "flowshare"
            algo = tfrc.get("equation", "tfrc")
            n = float(tfrc.get("n", 1.0)) if algo == "multfrc" else 0.0
        elif transport == "tcp":
            runner = stack
            algo = group.get("tcp", {}).get("cc", {}).get("algo", "reno")
            if stack == "kernel" and kernel_algorithm(algo) is None:
                raise LiveError(
                    f"{where}.tcp.cc.algo: the kernel offers "
                    f"{', '.join(sorted(KERNEL_ALGORITHMS))}, got {algo!r} (or run it on "
                    "flowshare's transport: --stack flowshare)"
                )
        else:
            raise LiveError(f"{where}.transport: live mode runs tcp and tfrc flows, got {transport!r}")
        start = _seconds(group.get("start", "0s"), f"{where}.start")
        spacing = _seconds(group.get("start_spacing", "0s"), f"{where}.start_spacing")
        for k in range(int(group.get("count", 1))):
            flows.append(LiveFlow(
                len(flows), group.get("name", f"flow{g}"), transport, algo, start + k * spacing,
                runner, n, size,
            ))
    if not flows:
        raise LiveError("flows: a live run needs at least one flow")
    late = [f for f in flows if f.start_s >= duration]
    if late:
        raise LiveError(
            f"flows: flow {late[0].index} starts at {late[0].start_s:g} s, after the run's end"
        )
    trace.check(scenario)
    return LivePlan(stack, duration, tuple(flows), emulated_scenario(scenario))


_LIVE_FLOW_KEYS = frozenset(
    {"name", "count", "start", "start_spacing", "transport", "tcp", "tfrc", "size"}
)


def capture_wanted(scenario: Mapping[str, Any]) -> bool:
    """Whether the scenario asks for packet captures (``[trace] pcap``): a live run then
    captures the bottleneck's departures, both directions in one file."""
    trace = scenario.get("trace") or {}
    return bool(trace.get("pcap"))


class _Stages:
    """The stages (:data:`flowshare.live.part.STAGES`) a part prints on its stdout, read
    without blocking, each with the time it was seen."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        self._stream = process.stdout
        os.set_blocking(self._stream.fileno(), False)
        self._pending = b""
        self.seen: dict[str, float] = {}

    def update(self) -> None:
        chunk = self._stream.read()
        if not chunk:
            return
        lines = (self._pending + chunk).split(b"\n")
        self._pending = lines.pop()
        for line in lines:
            self.seen.setdefault(line.decode(errors="replace").strip(), time.monotonic())

    def last(self) -> str:
        """The latest stage seen, and how long ago."""
        if not self.seen:
            return "it reported no stage"
        stage, at = max(self.seen.items(), key=lambda kv: kv[1])
        return f"its last stage was {stage!r}, {time.monotonic() - at:.1f} s ago"


def _wait_ready(process: subprocess.Popen[bytes], what: str) -> _Stages:
    deadline = time.monotonic() + READY_TIMEOUT_S
    stages = _Stages(process)
    while time.monotonic() < deadline:
        stages.update()
        if "ready" in stages.seen:
            return stages
        if process.poll() is not None:
            raise LiveError(f"{what} exited before it was ready: {_stderr_line(process)}")
        time.sleep(0.02)
    raise LiveError(f"{what} was not ready within {READY_TIMEOUT_S:g} s")


def _wait_emulator_exit(process: subprocess.Popen[bytes], stages: _Stages) -> None:
    """Wait for the stopped emulator to end. Once its report is written it has done its part:
    an exit slower than TERM_GRACE_S after that does not fail the run (the namespaces'
    teardown ends the process). Before that, an emulator that does not end within
    EMULATOR_EXIT_S is an error that says where it is."""
    deadline = time.monotonic() + EMULATOR_EXIT_S
    while (status := process.poll()) is None:
        stages.update()
        reported = stages.seen.get("reported")
        if reported is not None and time.monotonic() > reported + TERM_GRACE_S:
            return
        if time.monotonic() > deadline:
            raise LiveError(
                f"the link emulator did not finish within {EMULATOR_EXIT_S:g} s of being "
                f"stopped: {stages.last()}; {describe_process(process.pid)}"
            )
        time.sleep(0.05)
    if status != 0:
        raise LiveError(f"the link emulator failed: {_stderr_line(process)}")


def _stderr_line(process: subprocess.Popen[bytes]) -> str:
    if process.stderr is None:
        return f"exit status {process.returncode}"
    text = process.stderr.read().decode(errors="replace").strip().splitlines()
    return text[-1] if text else f"exit status {process.returncode}"


def _wait_all(
    parts: Sequence[tuple[str, subprocess.Popen[bytes]]],
    deadline: float,
    watch: Sequence[tuple[str, subprocess.Popen[bytes]]] = (),
) -> None:
    """Wait for every part to end; the first that fails, a ``watch``ed process that ends at
    all (the emulator must outlive the endpoints), or the deadline ends the run."""
    waiting = list(parts)
    while waiting:
        for what, process in watch:
            if process.poll() is not None:
                raise LiveError(f"{what} ended during the run: {_stderr_line(process)}")
        for what, process in list(waiting):
            status = process.poll()
            if status is None:
                continue
            if status != 0:
                raise LiveError(f"{what} failed: {_stderr_line(process)}")
            waiting.remove((what, process))
        if waiting and time.monotonic() > deadline:
            raise LiveError(f"{waiting[0][0]} did not finish in time")
        time.sleep(0.05)


def _start_emulator(ns: Namespaces, live: LivePlan, work: Path) -> tuple[subprocess.Popen[bytes], _Stages]:
    config = {
        "scenario": live.scenario,
        "link": bottleneck.NAME,
        "ns_a": ns.sender,
        "ns_b": ns.receiver,
        "address_a": SENDER_ADDRESS,
        "address_b": RECEIVER_ADDRESS,
        "duration_s": LEAD_S + live.duration_s + FINISH_GRACE_S,
    }
    if capture_wanted(live.scenario):
        config["pcap"] = str(work / PCAP_FILE)
    if trace.events_wanted(live.scenario):
        config["events"] = trace.emulator_request(live.flows, work / trace.RECORDS_FILE, PORT)
    (work / "emulator.json").write_text(json.dumps(config))
    process = ns.start(
        [sys.executable, "-m", "flowshare.live.emulator", str(work / "emulator.json"),
         str(work / "emulator-report.json")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    return process, _wait_ready(process, "the link emulator")


def _start_flowshare(
    ns: Namespaces, live: LivePlan, work: Path, t0: float
) -> list[tuple[str, subprocess.Popen[bytes]]]:
    """Both endpoints of each flow of flowshare's transport, a process each. A receiver starts
    LEAD_S / 2 early (and runs that much longer) so that it is bound when data arrives; both
    ends count the flow's start from their own start, so the sender starts on time."""
    parts = []
    flows = [f for f in live.flows if f.runner == "flowshare"]
    host_n = sum(f.n for f in flows)
    for f in flows:
        for side, namespace, bind, peer, at, length in (
            ("destination", ns.receiver, RECEIVER_ADDRESS, SENDER_ADDRESS, t0 - LEAD_S / 2,
             live.duration_s + LEAD_S / 2),
            ("source", ns.sender, SENDER_ADDRESS, RECEIVER_ADDRESS, t0, live.duration_s),
        ):
            request = {
                "scenario": live.scenario,
                "flow": f.index,
                "side": side,
                "bind": f"{bind}:{f.port}",
                "peer": f"{peer}:{f.port}",
                "duration_s": length,
                "multfrc_host_n_other": host_n - f.n,
            }
            stem = work / f"flow{f.index}-{side}"
            stem.with_suffix(".request.json").write_text(json.dumps(request))
            process = ns.start(
                [sys.executable, "-m", "flowshare.live.endpoint",
                 str(stem.with_suffix(".request.json")), str(stem.with_suffix(".json")),
                 "--at", repr(at)],
                namespace=namespace, stderr=subprocess.PIPE,
            )
            parts.append((f"flow {f.index}'s {side} endpoint", process))
    return parts


def _start_kernel(ns: Namespaces, live: LivePlan, work: Path, t0: float) -> list[tuple[str, subprocess.Popen[bytes]]]:
    flows = [f for f in live.flows if f.runner == "kernel"]
    if not flows:
        return []
    common = ["--t0", repr(t0), "--duration", repr(live.duration_s)]
    py = [sys.executable, "-m", "flowshare.live.kernel"]
    receiver = ns.start(
        [*py, "receive", "--port", str(PORT), "--flows", str(len(live.flows)), *common,
         "--out", str(work / "receiver.json")],
        namespace=ns.receiver, stderr=subprocess.PIPE,
    )
    specs = [f"--flow={f.index}:{kernel_algorithm(f.cc)}:{f.start_s!r}" for f in flows]
    sender = ns.start(
        [*py, "send", "--to", RECEIVER_ADDRESS, "--port", str(PORT),
         "--source-port", str(ENDPOINT_PORT), *specs, *common, "--out", str(work / "sender.json")],
        namespace=ns.sender, stderr=subprocess.PIPE,
    )
    return [("the kernel receiver", receiver), ("the kernel sender", sender)]


def run(scenario: Mapping[str, Any], work: Path, *, stack: Stack = "kernel") -> dict[str, Any]:
    """Run ``scenario`` live; return the reports of its parts (written into ``work``)."""
    live = plan(scenario, stack)
    with namespaces() as ns:
        emulator, stages = _start_emulator(ns, live, work)
        t0 = time.monotonic() + LEAD_S
        parts = _start_kernel(ns, live, work, t0) + _start_flowshare(ns, live, work, t0)
        _wait_all(parts, t0 + live.duration_s + FINISH_GRACE_S, watch=[("the link emulator", emulator)])
        emulator.terminate()
        _wait_emulator_exit(emulator, stages)
    kernel = any(f.runner == "kernel" for f in live.flows)

    def read(name: str) -> Any:
        return json.loads((work / name).read_text())

    return {
        "plan": live,
        "t0_s": t0,
        "receiver": read("receiver.json") if kernel else [],
        "sender": read("sender.json") if kernel else [],
        "endpoints": {
            f.index: {side: read(f"flow{f.index}-{side}.json") for side in ("source", "destination")}
            for f in live.flows if f.runner == "flowshare"
        },
        "emulator": read("emulator-report.json"),
    }
