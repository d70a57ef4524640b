"""The event trace of a live run (``events.parquet``): what the emulated bottleneck decided.

With ``[trace] events = true`` the link emulator records, for every packet of a flow that
crosses the bottleneck, the link events its model decides (``enqueue``, ``dequeue``, ``drop``
with the simulator's reasons) into a file of fixed-size records (``flowshare_emu::events``);
after the run they are written as ``events.parquet`` by the simulator's own writer, with times
from the run's time zero. End-host events (``send``, ``receive``, ``ack``) happen where the
emulator cannot see them and are not in a live trace. See docs/traces.md and docs/live.md.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _core
from ..results import write_events_parquet
from . import bottleneck
from .netns import LiveError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "LINK_KINDS",
    "RECORDS_FILE",
    "check",
    "emulator_request",
    "events_wanted",
    "write",
]

#: The kinds of event a live trace holds: those of the emulated link.
LINK_KINDS = ("enqueue", "dequeue", "drop")
#: The emulator's records, in the run's working directory.
RECORDS_FILE = "events.records"
#: Records converted at a time (32 bytes each).
_CHUNK_RECORDS = 1 << 18
#: The record layout of ``flowshare_emu::events`` (little-endian).
_RECORD_FIELDS = [
    ("time_ns", "<i8"),
    ("seq", "<u8"),
    ("flow", "<u4"),
    ("link", "<i4"),
    ("size", "<u4"),
    ("kind", "u1"),
    ("packet", "u1"),
    ("retx", "u1"),
    ("reason", "u1"),
]


def _trace(scenario: Mapping[str, Any]) -> Mapping[str, Any]:
    return scenario.get("trace") or {}


def events_wanted(scenario: Mapping[str, Any]) -> bool:
    """Whether the scenario asks for the event trace (``[trace] events = true``)."""
    return bool(_trace(scenario).get("events"))


def check(scenario: Mapping[str, Any]) -> None:
    """Refuse, naming the field, the ``[trace]`` filters a live run cannot honour: kinds of
    event that happen at end hosts, and links other than the emulated bottleneck."""
    trace = _trace(scenario)
    if not trace.get("events"):
        return
    for i, kind in enumerate(trace.get("kinds") or []):
        if kind not in LINK_KINDS:
            raise LiveError(
                f"trace.kinds[{i}]: a live run traces only the emulated bottleneck's events "
                f"({', '.join(LINK_KINDS)}); {kind!r} happens at an end host, which the link "
                "emulator does not see"
            )
    for i, selector in enumerate(trace.get("links") or []):
        if "->".join(part.strip() for part in selector.split("->")) not in bottleneck.SELECTORS:
            allowed = ", ".join(f'"{x}"' for x in bottleneck.SELECTORS[:-1])
            raise LiveError(
                f"trace.links[{i}]: a live run emulates only the bottleneck; give {allowed} "
                f'or "{bottleneck.SELECTORS[-1]}", got "{selector}"'
            )


def emulator_request(
    flows: Sequence[Any], records: Path, receiver_port: int
) -> dict[str, Any]:
    """The ``events`` part of the emulator's request: where its records go and each flow's
    ports (a kernel flow's sender port to the receiver's ``receiver_port``; a flow of
    flowshare's transport on its own port at both ends)."""
    return {
        "path": str(records),
        "flows": [
            {
                "flow": f.index,
                "stack": f.runner,
                "port_a": f.port,
                "port_b": receiver_port if f.runner == "kernel" else f.port,
            }
            for f in flows
        ],
    }


def _window_ns(trace: Mapping[str, Any]) -> tuple[int, int | None]:
    start = round(_core.parse_quantity("time", trace.get("start") or "0s") * 1e9)
    stop = trace.get("stop")
    return start, None if stop is None else round(_core.parse_quantity("time", stop) * 1e9)


def _chunks(
    records: Path, count: int, t0_ns: int, start_ns: int, stop_ns: int | None
) -> Iterator[pd.DataFrame]:
    """The records as the core's integer event columns, times from the run's time zero, those
    in the ``[start, stop]`` window only, a chunk at a time."""
    import numpy as np
    import pandas as pd

    dtype = np.dtype(_RECORD_FIELDS)
    with open(records, "rb") as f:
        left = count
        while left:
            rec = np.fromfile(f, dtype=dtype, count=min(left, _CHUNK_RECORDS))
            if len(rec) == 0:
                raise LiveError(f"the link emulator's event trace {records} is cut short")
            left -= len(rec)
            time_ns = rec["time_ns"] - np.int64(t0_ns)
            keep = time_ns >= start_ns
            if stop_ns is not None:
                keep &= time_ns <= stop_ns
            rec, time_ns = rec[keep], time_ns[keep]
            yield pd.DataFrame({
                "time_ns": time_ns,
                "kind": rec["kind"].astype("int64"),
                "flow": rec["flow"].astype("int64"),
                "link": rec["link"].astype("int64"),
                "packet": rec["packet"].astype("int64"),
                "seq": rec["seq"].astype("int64"),
                "size": rec["size"].astype("int64"),
                "retx": rec["retx"].astype("int64"),
                "acked": np.zeros(len(rec), dtype="int64"),
                "reason": rec["reason"].astype("int64"),
            })


def write(path: Path, records: Path, scenario: Mapping[str, Any], t0_s: float,
          emulator: Mapping[str, Any]) -> None:
    """Write ``events.parquet`` at ``path`` from the emulator's ``records``: times from the
    run's time zero ``t0_s`` (``CLOCK_MONOTONIC`` seconds), in the scenario's ``[trace]``
    window; ``emulator`` is the emulator's report, which says how many records it wrote and
    names the codes."""
    report = emulator.get("events")
    if report is None:
        raise LiveError("the link emulator did not record the event trace it was asked for")
    import numpy as np

    if np.dtype(_RECORD_FIELDS).itemsize != int(report["record_len"]):
        raise LiveError(
            f"the link emulator's records are {report['record_len']} bytes, not "
            f"{np.dtype(_RECORD_FIELDS).itemsize}: the extension and the package differ"
        )
    count = int(report["records"])
    size = records.stat().st_size
    if size != count * int(report["record_len"]):
        raise LiveError(
            f"the link emulator's event trace {records} holds {size} bytes for {count} records"
        )
    start_ns, stop_ns = _window_ns(_trace(scenario))
    write_events_parquet(
        _chunks(records, count, round(t0_s * 1e9), start_ns, stop_ns), report["codes"], path
    )
