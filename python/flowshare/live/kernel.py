"""Bulk transfers over the kernel's own TCP: the real stack a simulation is compared with.

Run inside a namespace of a live run (``python -m flowshare.live.kernel receive|send ...``).
The receiver accepts one connection per flow, each opened with a 4-byte flow number, and
counts the bytes the application reads until the run's end; the sender opens each flow at its
start time with the congestion control asked for (``TCP_CONGESTION``), from a port of its own
(the base port given plus the flow number, so that the link emulator knows each connection by
its ports), and writes as fast as the socket takes data. Times are on ``CLOCK_MONOTONIC``,
which every namespace shares, so the two ends agree on the run's start without exchanging
clocks. Each side writes one JSON document of its counts.
"""

from __future__ import annotations

import argparse
import json
import selectors
import socket
import struct
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = ["KERNEL_ALGORITHMS", "kernel_algorithm", "main"]

#: The library's algorithm names the kernel offers under its own name (``TCP_CONGESTION``).
KERNEL_ALGORITHMS = {"reno": "reno", "newreno": "reno", "cubic": "cubic", "bbr": "bbr"}
CHUNK = 64 * 1024
HELLO = struct.Struct("!I")
#: How long the receiver keeps draining its connections after the run's end.
DRAIN_S = 2.0
# struct tcp_info (linux/tcp.h): eight one-byte fields, then 32-bit fields; tcpi_rtt (µs) is
# the 16th of those and tcpi_total_retrans the 24th.
_TCP_INFO_RTT = 8 + 15 * 4
_TCP_INFO_TOTAL_RETRANS = 8 + 23 * 4
_TCP_INFO_BYTES = _TCP_INFO_TOTAL_RETRANS + 4


def kernel_algorithm(name: str) -> str | None:
    """The kernel's name for the library's algorithm ``name``, or None if it has none."""
    return KERNEL_ALGORITHMS.get(name.lower())


@dataclass
class Received:
    """What the receiver counted of one flow."""

    flow: int
    bytes_delivered: int = 0
    first_s: float | None = None
    last_s: float | None = None


@dataclass
class Sent:
    """What the sender knows of one flow at the run's end (from ``TCP_INFO``)."""

    flow: int
    cc: str
    bytes_sent: int = 0
    retransmits: int = 0
    srtt_s: float = 0.0
    error: str = ""


def _sleep_until(t: float) -> None:
    while (left := t - time.monotonic()) > 0:
        time.sleep(min(left, 0.05))


def receive(port: int, flows: int, t0: float, duration: float) -> list[Received]:
    """Accept ``flows`` connections on ``port`` and count their bytes until ``t0 + duration``."""
    end = t0 + duration
    counts: dict[int, Received] = {}
    pending: dict[socket.socket, bytes] = {}
    owner: dict[socket.socket, Received] = {}
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", port))
    listener.listen(max(flows, 1))
    listener.setblocking(False)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    buffer = bytearray(CHUNK)
    # After the end the connections are drained, uncounted, until the senders have read their
    # statistics and reset them: closing first would reset the senders instead.
    drain_end = end + DRAIN_S
    while (now := time.monotonic()) < drain_end and (now < end or len(selector.get_map()) > 1):
        for key, _ in selector.select(timeout=min(drain_end - now, 0.1)):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            if sock is listener:
                conn, _ = listener.accept()
                conn.setblocking(False)
                pending[conn] = b""
                selector.register(conn, selectors.EVENT_READ)
                continue
            try:
                n = sock.recv_into(buffer)
            except ConnectionResetError:
                n = 0
            t = time.monotonic() - t0
            if n == 0:
                selector.unregister(sock)
                sock.close()
                continue
            record = owner.get(sock)
            if record is None:
                head = pending[sock] + bytes(buffer[:n])
                if len(head) < HELLO.size:
                    pending[sock] = head
                    continue
                (flow,) = HELLO.unpack_from(head)
                record = counts.setdefault(flow, Received(flow))
                owner[sock] = record
                del pending[sock]
                n = len(head) - HELLO.size
                if n == 0:
                    continue
            if t <= duration:
                record.bytes_delivered += n
                record.first_s = t if record.first_s is None else record.first_s
                record.last_s = t
    for key in list(selector.get_map().values()):
        key.fileobj.close()  # type: ignore[union-attr]
    return [counts.get(i, Received(i)) for i in range(flows)]


def _tcp_info(sock: socket.socket) -> tuple[int, float]:
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _TCP_INFO_BYTES)
    (rtt_us,) = struct.unpack_from("I", raw, _TCP_INFO_RTT)
    (retrans,) = struct.unpack_from("I", raw, _TCP_INFO_TOTAL_RETRANS)
    return retrans, rtt_us / 1e6


def _send_one(
    flow: int, cc: str, start: float, address: tuple[str, int], source_port: int, t0: float,
    end: float, out: Sent,
) -> None:
    _sleep_until(t0 + start)
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("", source_port))
        sock.settimeout(max(end - time.monotonic(), 0.1))
        sock.connect(address)
        sock.sendall(HELLO.pack(flow))
        data = bytes(CHUNK)
        sock.settimeout(0.05)
        while time.monotonic() < end:
            try:
                out.bytes_sent += sock.send(data)
            except (TimeoutError, BlockingIOError):
                continue
        out.retransmits, out.srtt_s = _tcp_info(sock)
        # The run is over: reset rather than wait for the unsent data to drain.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
    except OSError as exc:
        out.error = f"flow {flow}: {exc.strerror or exc}"


def send(
    address: tuple[str, int], flows: Sequence[tuple[int, str, float]], t0: float, duration: float,
    source_port: int,
) -> list[Sent]:
    """Open each ``(flow, cc, start)`` at ``t0 + start`` from port ``source_port + flow`` and
    send until ``t0 + duration``."""
    end = t0 + duration
    results = [Sent(flow, cc) for flow, cc, _ in flows]
    threads = [
        threading.Thread(
            target=_send_one,
            args=(flow, cc, start, address, source_port + flow, t0, end, result),
        )
        for (flow, cc, start), result in zip(flows, results, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def _flow_spec(text: str) -> tuple[int, str, float]:
    flow, cc, start = text.split(":")
    return int(flow), cc, float(start)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m flowshare.live.kernel")
    sub = parser.add_subparsers(dest="role", required=True)
    rx = sub.add_parser("receive")
    rx.add_argument("--port", type=int, required=True)
    rx.add_argument("--flows", type=int, required=True)
    tx = sub.add_parser("send")
    tx.add_argument("--to", required=True, help="receiver address")
    tx.add_argument("--port", type=int, required=True)
    tx.add_argument("--flow", action="append", type=_flow_spec, required=True, help="ID:CC:START")
    tx.add_argument("--source-port", type=int, required=True,
                    help="flow ID sends from port SOURCE_PORT + ID")
    for p in (rx, tx):
        p.add_argument("--t0", type=float, required=True, help="CLOCK_MONOTONIC start, s")
        p.add_argument("--duration", type=float, required=True)
        p.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.role == "receive":
        records: list[Received] | list[Sent] = receive(
            args.port, args.flows, args.t0, args.duration
        )
    else:
        records = send(
            (args.to, args.port), args.flow, args.t0, args.duration, args.source_port
        )
    args.out.write_text(json.dumps([asdict(r) for r in records]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
