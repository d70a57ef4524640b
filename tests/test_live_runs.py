"""Live runs end to end: namespaces, the link emulator, the kernel's TCP and flowshare's live
transport, and what is left behind (nothing) after a run, an interrupt or a crashed part.

They need root and /dev/net/tun and skip, saying so, elsewhere. Each sends a few seconds of
traffic inside namespaces it makes.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from flowshare import cli
from flowshare.live import netns

pytestmark = [
    pytest.mark.skipif(
        not (os.geteuid() == 0 and Path("/dev/net/tun").exists() and shutil.which("ip")),
        reason="live runs need root, /dev/net/tun and iproute2's ip to make namespaces and TUN devices",
    ),
    # Real traffic on a real clock: alone, after the parallel part of the suite.
    pytest.mark.serial,
]

RATE_BPS = 10e6

SCENARIO = """
[simulation]
duration = "{duration}"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "10Mbps", delay = "10ms", queue = {{ limit = 50 }} }}
access = {{ rate = "1Gbps", delay = "0s" }}
[[flows]]
name = "tcp"
count = 2
start_spacing = "100ms"
tcp = {{ cc = "cubic", mss = "1448B", header = "52B" }}
"""

MULTFRC = """
[[flows]]
name = "m"
transport = "tfrc"
tfrc = { equation = "multfrc", n = 2, packet_size = "1448B", header = "52B" }
"""


def ours() -> set[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True)
    return {w.split()[0] for w in listed.stdout.splitlines() if w.startswith(netns.PREFIX)}


def children_left() -> list[str]:
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True).stdout
    return [line for line in ps.splitlines() if "flowshare.live." in line]


@pytest.fixture
def clean():
    before = ours()
    yield
    assert ours() == before, "a live run left namespaces behind"
    assert children_left() == [], "a live run left processes behind"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(text)
    return path


def test_kernel_flows_cross_the_emulated_bottleneck(tmp_path, clean, capsys):
    out = tmp_path / "out"
    assert cli.main(["live", str(write(tmp_path, SCENARIO.format(duration="4s"))), "--out", str(out)]) == 0
    flows = pd.read_csv(out / "flows.csv")
    queues = pd.read_csv(out / "queues.csv")
    summary = json.loads((out / "summary.json").read_text())
    assert list(flows.cc) == ["cubic", "cubic"] and list(flows["stack"]) == ["kernel", "kernel"]
    # Both flows moved data, and together no more than the link carries (plus its queue).
    assert (flows.bytes_delivered > 0).all()
    total = flows.bytes_delivered.sum() * 8
    assert 0.5 * RATE_BPS * 4 < total <= RATE_BPS * 4 + 50 * 1500 * 8
    # Every delivered byte crossed the emulator's forward direction.
    forward = queues.iloc[0]
    assert forward.arrival_bytes >= flows.bytes_delivered.sum()
    assert forward.departures > 0 and forward.max_len_pkts <= 50
    assert summary["summary"]["mode"] == "live" and summary["aggregate"]["flows"] == 2


def pcap_records(path: Path) -> int:
    """The number of packets in a pcap file (24-byte file header, 16-byte record headers)."""
    data = path.read_bytes()
    n, at = 0, 24
    while at + 16 <= len(data):
        (length,) = struct.unpack_from("<I", data, at + 8)
        at += 16 + length
        n += 1
    assert at == len(data)
    return n


def test_multfrc_on_flowshares_transport_beside_kernel_tcp(tmp_path, clean):
    out = tmp_path / "out"
    text = SCENARIO.format(duration="4s") + MULTFRC + '[trace]\npcap = ["bottleneck"]\n'
    assert cli.main(["live", str(write(tmp_path, text)), "--out", str(out)]) == 0
    # The capture holds every packet the bottleneck delivered, both directions.
    queues = pd.read_csv(out / "queues.csv")
    assert pcap_records(out / "bottleneck.pcap") == queues.departures.sum()
    flows = pd.read_csv(out / "flows.csv")
    assert list(flows["stack"]) == ["kernel", "kernel", "flowshare"]
    assert list(flows.transport) == ["tcp", "tcp", "tfrc"]
    assert (flows.goodput_bps > 0).all()
    assert flows.goodput_bps.sum() <= RATE_BPS * 1.05
    summary = json.loads((out / "summary.json").read_text())
    assert summary["summary"]["malformed_datagrams"] == 0


RELIABLE = """
[simulation]
duration = "5s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "10ms", queue = { limit = 50 }, loss = { model = "bernoulli", p = 0.03 } }
access = { rate = "1Gbps", delay = "0s" }
[[flows]]
name = "m"
transport = "tfrc"
size = "300KB"
tfrc = { equation = "multfrc", n = 2, packet_size = "1448B", header = "52B" }
"""


def test_a_reliable_multfrc_transfer_completes_through_a_lossy_bottleneck(tmp_path, clean):
    out = tmp_path / "out"
    assert cli.main(["live", str(write(tmp_path, RELIABLE)), "--out", str(out)]) == 0
    flows = pd.read_csv(out / "flows.csv")
    queues = pd.read_csv(out / "queues.csv")
    (flow,) = flows.itertuples()
    # Every byte arrived, in order, although the bottleneck lost packets: the lost blocks were
    # sent again, and the transfer completed well within the run.
    assert queues.iloc[0].link_losses > 0
    assert (flow.size_bytes, flow.bytes_delivered) == (300_000, 300_000)
    assert flow.retransmits >= 1
    assert 0.05 < flow.completion_time_s < 4.0, flow.completion_time_s
    # The sender stopped with the transfer: what it sent is the transfer, its repairs and
    # the packets of the last round trips, not five seconds of MulTFRC.
    assert flow.bytes_sent < 2 * 300_000, flow.bytes_sent
    summary = json.loads((out / "summary.json").read_text())
    assert summary["summary"]["malformed_datagrams"] == 0


def test_the_event_trace_accounts_for_every_packet_of_the_bottleneck(tmp_path, clean):
    # A short queue, so that the flows' slow starts overflow it.
    text = SCENARIO.format(duration="3s").replace("limit = 50", "limit = 15")
    path = write(tmp_path, text + "[trace]\nevents = true\n")
    assert cli.main(["live", str(path), "--out", str(tmp_path / "live")]) == 0
    assert cli.main(["run", str(path), "--out", str(tmp_path / "sim")]) == 0
    events = pd.read_parquet(tmp_path / "live" / "events.parquet")
    simulated = pd.read_parquet(tmp_path / "sim" / "events.parquet")
    queues = pd.read_csv(tmp_path / "live" / "queues.csv")
    # The simulation's columns, types and categories; only the bottleneck's link events.
    assert events.dtypes.equals(simulated.dtypes)
    assert set(events.kind) == {"enqueue", "dequeue", "drop"}
    assert set(events.link) == {0, 1} and set(events.flow) == {0, 1}
    assert (events.time_ns.diff().dropna() >= 0).all() and events.time_ns.min() >= 0
    assert queues.drops.iloc[0] > 0
    for q, row in queues.iterrows():
        mine = events[events.link == q]
        n = mine.kind.value_counts()
        assert row.no_flow == 0, row
        # Drops per flow add up to the queue's; every arrival was queued or dropped; every
        # packet queued was written or is still in the link (DropTail, no loss model).
        drops = mine[mine.kind == "drop"].groupby("flow").size()
        assert drops.sum() == row.drops + row.link_losses == n.get("drop", 0), (q, drops, row)
        assert n["enqueue"] + n.get("drop", 0) == row.arrivals, (q, n, row)
        assert n["enqueue"] == row.departures + row.left_in_link, (q, n, row)
        assert row.departures <= n["dequeue"] <= n["enqueue"]
    # Data one way, acknowledgements the other; the drops made retransmissions, which carry
    # segment numbers already sent (queued or dropped on arrival).
    sent = events[events.kind.isin(["enqueue", "drop"]) & (events.link == 0)]
    assert set(sent.packet) == {"syn", "data", "ack"}
    assert set(events[events.link == 1].packet) == {"synack", "ack"}
    for flow, data in sent[sent.packet == "data"].groupby("flow"):
        first = data[~data.retx]
        assert first.seq.iloc[0] == 0 and first.seq.is_monotonic_increasing, flow
        assert set(data[data.retx].seq) <= set(first.seq), flow
    # Within the run, only data overflowed the queue (a connection's reset at the end may).
    assert events[(events.kind == "drop") & (events.time_s < 3)].packet.eq("data").all()
    assert sent.retx.any()


def start_live(tmp_path: Path, out: Path) -> subprocess.Popen[str]:
    """``flowshare live`` of a 30-s scenario, as a process, once its namespaces exist."""
    path = write(tmp_path, SCENARIO.format(duration="30s"))
    run = subprocess.Popen(
        [sys.executable, "-m", "flowshare", "live", str(path), "--out", str(out)],
        stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 20
    while not ours() and time.monotonic() < deadline:
        time.sleep(0.1)
    return run


def test_interrupt_removes_everything_and_writes_nothing(tmp_path, clean):
    out = tmp_path / "out"
    run = start_live(tmp_path, out)
    time.sleep(2.5)  # the flows are running
    run.send_signal(signal.SIGINT)
    _, err = run.communicate(timeout=30)
    assert run.returncode == 130, err
    assert "interrupted" in err
    assert not out.exists()


def test_a_crashed_emulator_ends_the_run_with_one_line(tmp_path, clean):
    out = tmp_path / "out"
    run = start_live(tmp_path, out)
    deadline = time.monotonic() + 20
    pid = None
    while pid is None and time.monotonic() < deadline:
        found = subprocess.run(["pgrep", "-f", "flowshare.live.emulator"], capture_output=True, text=True)
        pid = int(found.stdout.split()[0]) if found.stdout.strip() else None
        time.sleep(0.1)
    assert pid is not None
    time.sleep(1.5)
    os.kill(pid, signal.SIGKILL)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "the link emulator ended during the run" in lines[0], err
    assert not out.exists()
