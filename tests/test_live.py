"""Live mode's Python side: what a scenario may ask of a live run, the namespaces it makes and
removes, the comparison of two run directories, and the command line's errors.

The end-to-end runs through the link emulator are in ``test_live_runs.py``; they need root.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import flowshare
from flowshare import _core, cli
from flowshare.live import compare, netns, part, session, trace

ROOT = os.geteuid() == 0 and Path("/dev/net/tun").exists() and shutil.which("ip") is not None
needs_root = pytest.mark.skipif(
    not ROOT, reason="needs root, /dev/net/tun and iproute2's ip to make namespaces"
)
# Some of these make namespaces and check what is left behind: alone, after the parallel part.
pytestmark = pytest.mark.serial

DUMBBELL = """
[simulation]
duration = "3s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "20ms", queue = { limit = 50 } }
access = { rate = "1Gbps", delay = "1ms" }
[[flows]]
name = "c"
count = 2
start_spacing = "250ms"
tcp = { cc = "cubic" }
[[flows]]
name = "r"
start = "1s"
tcp = { cc = "reno" }
"""


def normalized(text: str = DUMBBELL) -> dict:
    return json.loads(_core.parse_scenario(text, "toml"))


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("flowshare: error: "), err
    return lines[0]


# --- the plan of a live run -------------------------------------------------------------------


def test_plan_expands_flow_groups_with_their_starts():
    live = session.plan(normalized(), "kernel")
    assert [(f.index, f.name, f.cc, f.start_s) for f in live.flows] == [
        (0, "c", "cubic", 0.0),
        (1, "c", "cubic", 0.25),
        (2, "r", "reno", 1.0),
    ]
    assert live.duration_s == 3.0


def test_tfrc_flows_run_on_flowshares_transport_and_tcp_on_the_stack_chosen():
    text = DUMBBELL + """
[[flows]]
name = "m"
transport = "tfrc"
tfrc = { equation = "multfrc", n = 2.5 }
"""
    kernel = session.plan(normalized(text), "kernel")
    assert [(f.transport, f.runner, f.n) for f in kernel.flows] == [
        ("tcp", "kernel", 0.0), ("tcp", "kernel", 0.0), ("tcp", "kernel", 0.0),
        ("tfrc", "flowshare", 2.5),
    ]
    assert kernel.flows[3].cc == "multfrc" and kernel.flows[3].port == session.ENDPOINT_PORT + 3
    # flowshare's transport runs any algorithm of the library; the kernel only its own.
    bic = normalized(text.replace('cc = "reno"', 'cc = "bic"'))
    assert session.plan(bic, "flowshare").flows[2].runner == "flowshare"
    with pytest.raises(netns.LiveError, match="--stack flowshare"):
        session.plan(bic, "kernel")


def test_a_sized_tfrc_flow_is_a_reliable_transfer_of_its_size():
    text = DUMBBELL + """
[[flows]]
name = "m"
transport = "tfrc"
size = "300KB"
tfrc = { equation = "multfrc", n = 2 }
"""
    live = session.plan(normalized(text), "kernel")
    assert [f.size_bytes for f in live.flows] == [-1, -1, -1, 300_000]
    assert live.flows[3].runner == "flowshare"


def test_access_delays_are_folded_into_the_emulated_bottleneck():
    live = session.plan(normalized(), "kernel")
    assert live.scenario["topology"]["bottleneck"]["delay"] == "22000000ns"
    # The scenario given is not modified.
    assert normalized()["topology"]["bottleneck"]["delay"] == "20ms"


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda s: s["topology"].update(kind="parking_lot"), "topology.kind"),
        (lambda s: s["simulation"].update(duration="601s"), "simulation.duration"),
        (lambda s: s["flows"][1]["tcp"]["cc"].update(algo="bic"), "flows[1].tcp.cc.algo"),
        (lambda s: s["flows"][0].update(stop="2s"), "flows[0].stop"),
        (lambda s: s["flows"][0].update(size="1MB"), "flows[0].size: live mode runs sized transfers on tfrc"),
        (lambda s: s["flows"][1].update(start="3s"), "flows: flow 2 starts at 3 s"),
        (lambda s: s.update(flows=[]), "flows: a live run needs at least one flow"),
    ],
)
def test_plan_refuses_what_live_mode_cannot_run_naming_the_field(edit, field):
    scenario = normalized()
    edit(scenario)
    with pytest.raises(netns.LiveError, match=field.replace("[", r"\[").replace("]", r"\]")):
        session.plan(scenario, "kernel")


def test_plan_refuses_an_unknown_stack():
    with pytest.raises(netns.LiveError, match="stack: expected one of kernel, flowshare"):
        session.plan(normalized(), "ns3")  # type: ignore[arg-type]


def test_privileges_are_checked_with_a_one_line_reason(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(netns.LiveError, match="live mode needs root"):
        netns.check_privileges()


# --- the event trace ---------------------------------------------------------------------------


def with_trace(lines: str) -> dict:
    return normalized(DUMBBELL + "[trace]\nevents = true\n" + lines)


@pytest.mark.parametrize(
    ("lines", "field"),
    [
        ('kinds = ["drop", "send"]', "trace.kinds[1]: a live run traces only"),
        ('kinds = ["ack"]', "trace.kinds[0]"),
        (
            'links = ["bottleneck", "s0-r0"]',
            'trace.links[1]: a live run emulates only the bottleneck; give "bottleneck", '
            '"r0-r1", "r0->r1" or "r1->r0", got "s0-r0"',
        ),
        ('links = ["r1->d0"]', "trace.links[0]"),
    ],
)
def test_plan_refuses_trace_filters_a_live_run_cannot_honour(lines, field):
    with pytest.raises(netns.LiveError, match=field.replace("[", r"\[").replace("]", r"\]")):
        session.plan(with_trace(lines), "kernel")


def test_plan_takes_the_trace_filters_of_the_bottleneck():
    text = 'kinds = ["enqueue", "drop"]\nlinks = ["bottleneck", "r0 -> r1", "r1->r0", "r0-r1"]\n'
    session.plan(with_trace(text + 'flows = [1]\nstart = "1s"\nstop = "2s"\n'), "kernel")
    # Without events the filters are the scenario's business (refused when parsed).
    session.plan(normalized(DUMBBELL + '[trace]\npcap = ["bottleneck"]\n'), "kernel")


def test_the_emulator_is_told_each_flows_ports():
    text = DUMBBELL + '[[flows]]\nname = "t"\ntransport = "tfrc"\n'
    live = session.plan(normalized(text), "kernel")
    request = trace.emulator_request(live.flows, Path("/x/events.records"), session.PORT)
    assert request["path"] == "/x/events.records"
    assert request["flows"] == [
        {"flow": 0, "stack": "kernel", "port_a": 6000, "port_b": 5001},
        {"flow": 1, "stack": "kernel", "port_a": 6001, "port_b": 5001},
        {"flow": 2, "stack": "kernel", "port_a": 6002, "port_b": 5001},
        {"flow": 3, "stack": "flowshare", "port_a": 6003, "port_b": 6003},
    ]


RECORD = np.dtype(trace._RECORD_FIELDS)


def records(path: Path, rows: list[tuple]) -> dict:
    """Write emulator records (time, seq, flow, link, size, kind, packet, retx, reason); return
    the emulator report's ``events`` part, with the codes of a simulation's trace."""
    np.array(rows, dtype=RECORD).tofile(path)
    sim = flowshare.run(with_trace("")).events
    cats = {c: list(sim[c].cat.categories) for c in ("kind", "packet", "reason")}
    codes = {"kind": cats["kind"], "packet": cats["packet"], "reason": ["", *cats["reason"]]}
    return {"events": {"records": len(rows), "record_len": RECORD.itemsize, "codes": codes}}


def test_the_record_reader_has_the_emulators_layout():
    # The record crates/flowshare-emu/src/events.rs pins (PINNED_RECORD): drop, flow 5, link 3,
    # seq 0x0607, size 0x0809, an ACK, retransmitted, overflow, at 0x1234 ns.
    pinned = bytes([0x34, 0x12, 0, 0, 0, 0, 0, 0, 0x07, 0x06, 0, 0, 0, 0, 0, 0,
                    5, 0, 0, 0, 3, 0, 0, 0, 0x09, 0x08, 0, 0, 3, 1, 1, 1])
    (record,) = np.frombuffer(pinned, dtype=RECORD)
    assert record.tolist() == (0x1234, 0x0607, 5, 3, 0x0809, 3, 1, 1, 1)
    assert RECORD.names == ("time_ns", "seq", "flow", "link", "size", "kind", "packet", "retx",
                            "reason")


def test_records_become_the_simulators_event_table(tmp_path):
    t0 = 5_000_000_000
    enq, deq, drop = 1, 2, 3
    rows = [
        (t0 + 10, 0, 0, 0, 1500, enq, 0, 0, 0),  # before the window
        (t0 + 1_000_000_000, 7, 1, 0, 1500, drop, 0, 1, 1),
        (t0 + 1_200_000_000, 3, 0, 1, 52, enq, 1, 0, 0),
        (t0 + 1_500_000_000, 4, 0, 0, 1500, deq, 0, 0, 0),
        (t0 + 2_500_000_000, 5, 0, 0, 1500, enq, 0, 0, 0),  # after it
    ]
    report = records(tmp_path / "r", rows)
    scenario = with_trace('start = "1s"\nstop = "2s"\n')
    trace.write(tmp_path / "events.parquet", tmp_path / "r", scenario, t0 / 1e9, report)
    live = pd.read_parquet(tmp_path / "events.parquet")
    assert list(live.time_ns) == [1_000_000_000, 1_200_000_000, 1_500_000_000]
    assert list(live.kind) == ["drop", "enqueue", "dequeue"]
    assert list(live.packet) == ["data", "ack", "data"]
    assert list(live.flow) == [1, 0, 0] and list(live.link) == [0, 1, 0]
    assert list(live.seq) == [7, 3, 4] and list(live.retx) == [True, False, False]
    assert live.reason.iloc[0] == "overflow" and live.reason.iloc[1:].isna().all()
    assert (live.acked == 0).all() and list(live["size"]) == [1500, 52, 1500]
    # The types and categories of a simulated trace.
    sim_dir = tmp_path / "sim"
    flowshare.run(with_trace("")).write(sim_dir)
    assert live.dtypes.equals(pd.read_parquet(sim_dir / "events.parquet").dtypes)


def test_a_trace_cut_short_is_an_error(tmp_path):
    report = records(tmp_path / "r", [(1, 0, 0, 0, 1500, 1, 0, 0, 0)])
    report["events"]["records"] = 2
    with pytest.raises(netns.LiveError, match="holds 32 bytes for 2 records"):
        trace.write(tmp_path / "e.parquet", tmp_path / "r", with_trace(""), 0.0, report)
    assert not (tmp_path / "e.parquet").exists()


# --- namespaces -------------------------------------------------------------------------------


def namespaces_now() -> set[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True)
    return {line.split()[0] for line in listed.stdout.splitlines() if line.strip()}


@needs_root
def test_namespaces_are_removed_with_their_processes_on_an_error():
    before = namespaces_now()
    with pytest.raises(RuntimeError, match="boom"), netns.namespaces() as ns:
        assert {ns.sender, ns.receiver} <= namespaces_now()
        sleeper = ns.start(["sleep", "60"], namespace=ns.sender)
        raise RuntimeError("boom")
    assert sleeper.returncode is not None
    assert namespaces_now() == before


@needs_root
def test_stale_namespaces_of_dead_runs_are_removed_and_nothing_else():
    dead_pid = 4_194_303  # above any pid this machine hands out (pid_max's ceiling)
    stale = f"{netns.PREFIX}{dead_pid}-abc-a"
    alive = f"{netns.PREFIX}{os.getpid()}-abc-a"
    other = "flowshare-test-other"
    made = []
    try:
        for name in (stale, alive, other):
            subprocess.run(["ip", "netns", "add", name], check=True)
            made.append(name)
        assert netns.remove_stale() == [stale]
        assert stale not in namespaces_now()
        assert {alive, other} <= namespaces_now()
    finally:
        for name in made:
            subprocess.run(["ip", "netns", "delete", name], capture_output=True, check=False)


# --- a part slow to end ------------------------------------------------------------------------


@contextlib.contextmanager
def fake_part(stages: list[str]) -> Iterator[subprocess.Popen[bytes]]:
    """A process that prints ``stages`` as a part would, ignores SIGTERM and then hangs."""
    script = (
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        f"for stage in {stages!r}:\n"
        "    print(stage, flush=True)\n"
        "time.sleep(60)\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    ) as process:
        try:
            yield process
        finally:
            process.kill()


def test_run_part_reports_each_stage_in_order(tmp_path):
    class Done:
        def stop(self) -> None: ...
        def finished(self) -> bool: return True
        def join(self) -> str: return '{"ok": 1}'

    seen: list[str] = []
    stopped = threading.Event()
    assert part.run_part("x", Done, tmp_path / "r.json", stopped, seen.append) == 0
    assert seen == list(part.STAGES)
    assert json.loads((tmp_path / "r.json").read_text()) == {"ok": 1}


def test_an_emulator_that_has_reported_but_lingers_does_not_fail_the_run(tmp_path, monkeypatch):
    monkeypatch.setattr(session, "TERM_GRACE_S", 0.2)
    with fake_part(["ready", "stopping", "joined", "reported"]) as process:
        stages = session._wait_ready(process, "the fake emulator")
        started = time.monotonic()
        session._wait_emulator_exit(process, stages)
        assert process.poll() is None and time.monotonic() - started < 5


def test_an_emulator_that_does_not_end_says_where_it_is(tmp_path, monkeypatch):
    monkeypatch.setattr(session, "EMULATOR_EXIT_S", 0.5)
    with fake_part(["ready", "stopping"]) as process:
        stages = session._wait_ready(process, "the fake emulator")
        with pytest.raises(netns.LiveError) as error:
            session._wait_emulator_exit(process, stages)
    message = str(error.value)
    assert "within 0.5 s of being stopped" in message
    assert "last stage was 'stopping'" in message
    # Where the process is: its thread, asleep.
    assert f"thread {process.pid} (python" in message and " S" in message


def test_describe_process_of_a_process_that_is_gone():
    process = subprocess.Popen(["true"])
    process.wait()
    assert netns.describe_process(process.pid) == f"process {process.pid} is gone"


@needs_root
def test_a_process_that_outlives_its_kill_is_reported_not_waited_for(monkeypatch):
    # A process blocked in the kernel outlives SIGKILL; here the waits for the sleeper expire
    # as they would for such a process (the signals themselves are real).
    real_wait = subprocess.Popen.wait

    def wait(self, timeout=None):
        if self.args == ["sleep", "60"] and timeout is not None:
            raise subprocess.TimeoutExpired(self.args, timeout)
        return real_wait(self, timeout)

    with pytest.raises(netns.LiveError, match="did not end even when killed: sleep 60: thread "):
        with netns.namespaces() as ns:
            sleeper = ns.start(["sleep", "60"])
            monkeypatch.setattr(subprocess.Popen, "wait", wait)
    monkeypatch.undo()
    assert sleeper.wait(timeout=5) in (-signal.SIGTERM, -signal.SIGKILL)


# --- comparing two run directories -------------------------------------------------------------


def write_run(directory: Path, goodputs: list[float], ccs: list[str] | None = None) -> Path:
    directory.mkdir()
    ccs = ccs or ["cubic"] * len(goodputs)
    pd.DataFrame({
        "flow": range(len(goodputs)),
        "name": ["f"] * len(goodputs),
        "cc": ccs,
        "goodput_bps": goodputs,
        "retransmits": [1] * len(goodputs),
    }).to_csv(directory / "flows.csv", index=False)
    return directory


def test_compare_sets_goodputs_and_jain_side_by_side(tmp_path):
    a = write_run(tmp_path / "sim", [4e6, 4e6])
    b = write_run(tmp_path / "live", [6e6, 3e6])
    result = compare.compare(a, b)
    assert result.goodput_a_bps == 8e6 and result.goodput_b_bps == 9e6
    assert result.goodput_difference == pytest.approx(0.125)
    assert result.jain_a == pytest.approx(1.0)
    assert result.jain_b == pytest.approx(81 / 90)
    assert list(result.flows.difference) == pytest.approx([0.5, -0.25])


def test_compare_refuses_runs_of_different_flows(tmp_path):
    a = write_run(tmp_path / "a", [1e6, 1e6])
    b = write_run(tmp_path / "b", [1e6, 1e6], ["cubic", "reno"])
    # The message says where they differ, not two equal counts.
    with pytest.raises(ValueError, match=r"different flows \(flow 1 runs cubic against reno\); "):
        compare.compare(a, b)
    c = write_run(tmp_path / "c", [1e6, 1e6, 1e6])
    with pytest.raises(ValueError, match=r"different flows \(2 and 3 flows\)"):
        compare.compare(a, c)


def test_compare_command_prints_and_plots(tmp_path, capsys):
    a = write_run(tmp_path / "sim", [4e6, 4e6])
    b = write_run(tmp_path / "live", [6e6, 3e6])
    assert cli.main(["compare", str(a), str(b), "--plot", str(tmp_path / "c.png")]) == 0
    out = capsys.readouterr().out
    assert "+50.0%" in out and "Jain index 1.0000 against 0.9000" in out
    assert (tmp_path / "c.png").stat().st_size > 0


@pytest.mark.parametrize(
    ("make", "status", "expected"),
    [
        (lambda d: d, 1, "run directory not found"),
        (lambda d: (d.mkdir(), d)[1], 1, "no flows.csv"),
    ],
)
def test_compare_command_errors_are_one_line(tmp_path, capsys, make, status, expected):
    a = write_run(tmp_path / "sim", [4e6])
    b = make(tmp_path / "missing")
    assert cli.main(["compare", str(a), str(b)]) == status
    assert expected in one_error_line(capsys.readouterr().err)


def test_compare_plot_suffix_is_checked(tmp_path, capsys):
    a = write_run(tmp_path / "sim", [4e6])
    assert cli.main(["compare", str(a), str(a), "--plot", str(tmp_path / "c.txt")]) == 2
    assert "--plot" in one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "c.txt").exists()


# --- the live command's errors ----------------------------------------------------------------


def test_live_command_refuses_a_scenario_it_cannot_run_and_writes_nothing(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text(DUMBBELL.replace('cc = "reno"', 'cc = "vegas"'))
    out = tmp_path / "out"
    assert cli.main(["live", str(path), "--out", str(out)]) == 1
    assert "flows[1].tcp.cc.algo" in one_error_line(capsys.readouterr().err)
    assert not out.exists()


def test_live_command_without_privileges_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    path = tmp_path / "s.toml"
    path.write_text(DUMBBELL)
    out = tmp_path / "out"
    assert cli.main(["live", str(path), "--out", str(out)]) == 1
    assert "needs root" in one_error_line(capsys.readouterr().err)
    assert not out.exists()
