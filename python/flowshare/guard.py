"""The resource guard: a run's estimated cost, checked against a budget before it starts.

The core estimates a scenario's events, time-series rows, traced events and memory from the
built network (``_core.Simulation.estimate``). A run that would need more memory than the
machine has available (or than ``max_memory``), more work than ``max_events``, or more disk
for its time series and trace than the spill directory's file system has free, is refused
with one line naming the setting that drives it and what would fit. ``force`` runs it anyway.
See ``docs/reliability.md``.
"""

from __future__ import annotations

import math
import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._core import ConfigError

__all__ = [
    "DEFAULT_MAX_EVENTS",
    "Budget",
    "BudgetError",
    "Cost",
    "available_memory",
    "cost",
    "max_connections",
    "parse_size",
]

DEFAULT_MAX_EVENTS = 10**10
"""Default work budget: events, time-series rows and traced events together (each costs about
as much as an event); 10 to 60 minutes at the 2.7 to 16.6 million events per second measured
on the shipped scenarios."""

ROWS_PER_SLICE = 1_000_000
"""Time-series rows and traced events the core holds before they are taken (the run is cut
into more slices when there would be more)."""

EVENTS_PER_SLICE = 1_000_000
"""A run is cut into no more slices than it has millions of events (the core runs 10 to 30
million a second): a slice then lasts tens of milliseconds, short enough for Ctrl-C and the
progress bar, and a short run is not slowed by hundreds of round trips to Python."""

SPILLED_ROW_BYTES = 80
"""Disk bytes of a spilled time-series row (Arrow IPC, uncompressed)."""

WRITTEN_ROW_BYTES = 24
"""Disk bytes of a written time-series or event row (Parquet, compressed), roughly."""

_PER_FLOW_RESULT_BYTES = 2_000
"""Python memory per flow for the results tables (flows.csv and its DataFrame)."""


class BudgetError(ConfigError):
    """A scenario whose estimated cost exceeds the budget; nothing was run."""


class _Frozen:
    """A small immutable record: keyword fields in ``_fields`` order with defaults from the
    class, equality and a repr by fields. (Not a dataclass: importing ``dataclasses`` costs the
    command line about 20 ms, docs/adr/0009-outputs-written-from-rust.md.)"""

    _fields: tuple[str, ...] = ()
    __slots__ = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(self._fields):
            raise TypeError(f"{type(self).__name__}: at most {len(self._fields)} arguments")
        values = dict(zip(self._fields, args, strict=False))
        for name, value in kwargs.items():
            if name not in self._fields or name in values:
                raise TypeError(f"{type(self).__name__}: unexpected or repeated argument {name!r}")
            values[name] = value
        for name in self._fields:
            if name not in values:
                default = type(self).__dict__.get("_defaults", {}).get(name, _MISSING)
                if default is _MISSING:
                    raise TypeError(f"{type(self).__name__}: missing argument {name!r}")
                values[name] = default
            object.__setattr__(self, name, values[name])
        self._check()

    def _check(self) -> None:
        pass

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, n) for n in self._fields)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields)
        return f"{type(self).__name__}({fields})"


_MISSING = object()


class Budget(_Frozen):
    """What a run may cost.

    Attributes
    ----------
    max_memory : int, optional
        Bytes of memory; by default what the machine has available (and the address-space
        limit, ``ulimit -v``, if one is set).
    max_events : float
        Events, time-series rows and traced events together.
    force : bool
        Run whatever the estimate.
    hint : str
        How to lift the budget, named as the caller names its settings.
    """

    __slots__ = ("max_memory", "max_events", "force", "hint")
    _fields = __slots__
    _defaults = {
        "max_memory": None,
        "max_events": DEFAULT_MAX_EVENTS,
        "force": False,
        "hint": "raise max_events or max_memory, or pass force=True",
    }
    max_memory: int | None
    max_events: float
    force: bool
    hint: str

    def _check(self) -> None:
        if self.max_memory is not None and (
            isinstance(self.max_memory, bool)
            or not isinstance(self.max_memory, int)
            or self.max_memory <= 0
        ):
            raise ConfigError(f"max_memory: expected a positive number of bytes, got {self.max_memory!r}")
        if (
            isinstance(self.max_events, bool)
            or not isinstance(self.max_events, int | float)
            or not self.max_events > 0
            or not math.isfinite(self.max_events)
        ):
            raise ConfigError(f"max_events: expected a positive number, got {self.max_events!r}")


class Cost(_Frozen):
    """The estimated cost of a run, as the guard counts it."""

    __slots__ = (
        "events", "work", "memory_bytes", "disk_bytes", "rows_per_slice", "slices",
        "series_rows", "trace_rows", "base_bytes", "process_bytes",
    )  # fmt: skip
    _fields = __slots__
    events: float
    work: float
    memory_bytes: float
    disk_bytes: float
    rows_per_slice: float
    slices: int
    series_rows: float
    trace_rows: float
    base_bytes: float
    process_bytes: float

    def describe(self) -> str:
        """A short phrase: ``about 3.3e+06 events, 140 MB``."""
        text = f"about {self.events:.2g} events, {_size(self.memory_bytes)} of memory"
        if self.disk_bytes >= 1e6:
            text += f", {_size(self.disk_bytes)} of time series and trace"
        return text


def cost(estimate: Mapping[str, Any], *, base_slices: int) -> Cost:
    """What the guard counts of the core's ``estimate`` for a run cut into ``base_slices``
    slices, fewer for a run of few events (``EVENTS_PER_SLICE``), more for one of many rows
    (``ROWS_PER_SLICE``)."""
    rows = float(estimate["series_rows"]) + float(estimate["trace_rows"])
    by_events = min(base_slices, math.ceil(float(estimate["events"]) / EVENTS_PER_SLICE))
    slices = max(by_events, math.ceil(rows / ROWS_PER_SLICE), 1)
    per_slice = rows / slices
    row_bytes = max(int(estimate["series_row_bytes"]), int(estimate["trace_row_bytes"]))
    from ._series import SPILL_BYTES

    # The core's state, one slice of rows in the core, in Python and while spilled (x3), what
    # is held before spilling, and the results tables.
    # The process now holds the interpreter, its libraries and the built network (which the
    # core's estimate counts too, with the packets to come).
    built = float(estimate["memory_bytes"]) - float(estimate["packet_bytes"])
    rss = _rss()
    base = max(rss - built, 0.0)
    memory = (
        float(estimate["memory_bytes"])
        + 3 * per_slice * row_bytes
        + min(rows * row_bytes, SPILL_BYTES)
        + _PER_FLOW_RESULT_BYTES * _flows(estimate)
        + base
    )
    disk = 0.0
    if rows * row_bytes > SPILL_BYTES:
        disk = rows * (SPILLED_ROW_BYTES + WRITTEN_ROW_BYTES)
    return Cost(
        events=float(estimate["events"]),
        work=float(estimate["events"]) + rows,
        memory_bytes=memory,
        disk_bytes=disk,
        rows_per_slice=per_slice,
        slices=slices,
        series_rows=float(estimate["series_rows"]),
        trace_rows=float(estimate["trace_rows"]),
        base_bytes=base,
        process_bytes=rss,
    )


def check(
    c: Cost,
    estimate: Mapping[str, Any],
    scenario: Mapping[str, Any],
    budget: Budget,
    *,
    duration_s: float,
    spill_dir: str | os.PathLike[str] | None,
) -> None:
    """Raise :class:`BudgetError` if a run of ``duration_s`` simulated seconds would exceed
    ``budget``."""
    if budget.force:
        return
    duration = duration_s
    if c.work > budget.max_events:
        drivers = [(str(p), float(e)) for p, e in estimate["drivers"]]
        field, events = max(drivers, key=lambda d: d[1]) if drivers else ("flows", c.events)
        if c.series_rows + c.trace_rows > events:
            field, events = _rows_driver(scenario, c)
        if field == "simulation.sample_interval" and c.series_rows > 0:
            # Rows scale with the number of samples: fewer samples, a longer interval.
            other = c.work - c.series_rows - float(estimate["samples"])
            per_sample = (c.series_rows + float(estimate["samples"])) / float(estimate["samples"])
            samples_fit = max(budget.max_events - other, 0) / per_sample
            fit = (
                f"a sample_interval of at least {_duration(duration / samples_fit)} fits, or "
                '"0s" for no time series'
                if samples_fit >= 1
                else f"no sample_interval fits; {_duration(duration * budget.max_events / c.work)}"
                " of simulation.duration would"
            )
        else:
            fit = f"about {_duration(duration * budget.max_events / c.work)} of simulation.duration fits"
        raise BudgetError(
            f"{field}: the run would take about {c.work:.2g} events and rows "
            f"({events / c.work:.0%} from {field}), more than the budget of "
            f"{budget.max_events:.2g}; {fit}; {budget.hint}"
        )
    memory_limit, memory_name = _memory_limit(budget)
    if c.memory_bytes > memory_limit:
        flows = _flows(estimate)
        held = float(estimate["packets_held"])
        group = _largest_group(scenario)
        parts = {
            f"{group}.count" if group else "flows": (
                float(estimate["memory_bytes"]) - float(estimate["packet_bytes"])
                + _PER_FLOW_RESULT_BYTES * flows,
                f"{flows} connections",
            ),
            "the queue limits": (float(estimate["packet_bytes"]), f"{held:.2g} packets held in queues"),
            "simulation.sample_interval": (c.memory_bytes - c.base_bytes - float(
                estimate["memory_bytes"]) - _PER_FLOW_RESULT_BYTES * flows, "time-series rows"),
        }
        field, (part, why) = max(parts.items(), key=lambda kv: kv[1][0])
        fit = ""
        if field.endswith(".count") and flows > 0:
            spare = memory_limit - (c.memory_bytes - part)
            fit = f"; about {max(int(spare / (part / flows)), 0)} connections in all fit"
        raise BudgetError(
            f"{field}: the run would need about {_size(c.memory_bytes)} of memory ({why}; "
            f"this process holds {_size(c.process_bytes)} now), more than {memory_name} "
            f"({_size(memory_limit)}){fit}; {budget.hint}"
        )
    if c.disk_bytes > 0:
        where = Path(spill_dir) if spill_dir is not None else Path(_tempdir())
        free = _free_bytes(where)
        if free is not None and c.disk_bytes > free:
            field, _ = _rows_driver(scenario, c)
            rows_fit = free / (SPILLED_ROW_BYTES + WRITTEN_ROW_BYTES)
            raise BudgetError(
                f"{field}: the time series and trace would take about {_size(c.disk_bytes)} "
                f"({c.series_rows + c.trace_rows:.2g} rows) on disk, more than the "
                f"{_size(free)} free in {where}; at most {rows_fit:.2g} rows fit; "
                f"{budget.hint}"
            )


BUILD_BYTES_PER_CONNECTION = 10_000
"""Memory a connection takes once built (its hosts, links, agents and routes), measured at
about 7 kB on dumbbells, with a margin."""


def max_connections(budget: Budget | None) -> int | None:
    """The most connections (listed flows and closed-loop users) that ``budget``'s memory can
    build, checked before the core allocates them; ``None`` for no limit."""
    budget = budget or Budget()
    if budget.force:
        return None
    limit, _ = _memory_limit(budget)
    if not math.isfinite(limit):
        return None
    spare = limit - _rss()
    # With no room at all, the estimate after the build says why, at the cost of a small build.
    return int(spare / BUILD_BYTES_PER_CONNECTION) if spare >= BUILD_BYTES_PER_CONNECTION * 1000 else None


def available_memory() -> int | None:
    """Bytes of memory available to a new run: ``MemAvailable`` of ``/proc/meminfo`` plus
    what this process holds, bounded by the address-space limit; ``None`` if unknown."""
    limits = []
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    limits.append(int(line.split()[1]) * 1024 + _rss())
                    break
    except OSError:
        pass
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            limits.append(soft // 2)  # virtual size runs well above resident size
    except (ImportError, ValueError, OSError):
        pass
    return min(limits) if limits else None


_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?(?:[eE][0-9]+)?)\s*([KMGT]i?B?|B)?\s*$", re.I)
_UNITS = {"": 1, "B": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}


def parse_size(text: str) -> int:
    """``"4GiB"``, ``"500MB"``, ``"2e9"`` as bytes; ``ValueError`` naming what is allowed."""
    m = _SIZE.match(text)
    if not m:
        raise ValueError(f"expected a size such as 4GiB or 500MB, got {text!r}")
    number, unit = float(m.group(1)), (m.group(2) or "").upper()
    factor = _UNITS[unit[:1]] if unit else 1
    if "I" in unit:
        factor = 1024 ** "BKMGT".index(unit[0])
    value = number * factor
    if not (1 <= value < 2**63):
        raise ValueError(f"expected a size from 1B to 8EiB, got {text!r}")
    return int(value)


def _memory_limit(budget: Budget) -> tuple[float, str]:
    if budget.max_memory is not None:
        return float(budget.max_memory), "the memory budget"
    available = available_memory()
    if available is None:
        return math.inf, "the memory available"
    return float(available), "the memory available on this machine"


def _rows_driver(scenario: Mapping[str, Any], c: Cost) -> tuple[str, float]:
    if c.trace_rows > c.series_rows:
        return "trace.events", c.trace_rows
    return "simulation.sample_interval", c.series_rows


def _largest_group(scenario: Mapping[str, Any]) -> str | None:
    groups = scenario.get("flows") or []
    counts = [(int(g.get("count", 1)), i) for i, g in enumerate(groups) if isinstance(g, Mapping)]
    return f"flows[{max(counts)[1]}]" if counts else None


def _flows(estimate: Mapping[str, Any]) -> int:
    return int(estimate.get("connections", 0))


def _rss() -> int:
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _tempdir() -> str:
    import tempfile

    return tempfile.gettempdir()


def _free_bytes(path: Path) -> int | None:
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        return shutil.disk_usage(probe).free
    except OSError:
        return None


def _duration(seconds: float) -> str:
    """A time in the scenario's notation, rounded up to 3 significant digits so that it fits."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{_up(seconds / scale)}{unit}"
    return f"{max(math.ceil(seconds * 1e9), 1)}ns"


def _up(x: float) -> str:
    digits = 3 - 1 - math.floor(math.log10(x))
    scale = 10.0**digits
    return f"{math.ceil(x * scale - 1e-9) / scale:g}"


def _size(n: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"
