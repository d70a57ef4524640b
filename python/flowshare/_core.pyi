"""The native core: a validated scenario goes in, columnar results come out.

The contract is ``docs/adr/0002-python-boundary.md``.
"""

from typing import Any, Literal, TypedDict, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "ConfigError",
    "Simulation",
    "__version__",
    "build_profile",
    "cumulative_loss_events",
    "flow_loss_events",
    "loss_event_index",
    "parse_scenario",
    "render_plot",
    "render_seqplot",
    "write_csv",
    "write_timeseries",
]

__version__: str
"""The crate version."""

build_profile: Literal["release", "debug"]
"""The Cargo profile the extension was built with."""

class ConfigError(ValueError):
    """An invalid scenario; one line: ``<field path>: <what is wrong>; <what is allowed>``."""

def parse_scenario(text: str, fmt: Literal["toml", "json"], base_dir: str | None = None) -> str:
    """Validate a scenario and return it as normalized JSON (every default filled in);
    relative file names in it are read from ``base_dir``.

    Raises ConfigError on bad input.
    """

def parse_quantity(kind: Literal["time", "rate", "size"], text: str) -> float:
    """A quantity with its unit (``"100ms"``, ``"10 Mbit/s"``, ``"1460B"``) in seconds, bits
    per second or bytes, parsed as scenarios are; ``ValueError`` naming the accepted units."""

def algorithms_json() -> str:
    """The congestion-control algorithms of the registry with their parameters, defaults,
    allowed values and references, the loss recoveries and the queue disciplines, as JSON."""

_Column = list[str] | tuple[str, bytes]
"""A text column, or ``(numpy dtype string, raw little-endian buffer)``."""

_Table = dict[str, _Column]

class _Summary(TypedDict):
    duration_s: float
    warmup_s: float
    seed: int
    events: int
    wall_s: float
    scenario_hash: str
    version: str

class _Results(TypedDict):
    summary: _Summary
    flows: _Table
    queues: _Table
    flow_series: _Table
    queue_series: _Table
    transfers: _Table
    delays: _Table
    fct: _Table
    members: _Table

@final
class Simulation:
    """A simulation built once from a scenario, advanced in steps."""

    def __new__(
        cls,
        text: str,
        fmt: Literal["toml", "json"] = "json",
        seed: int | None = None,
        pcap_dir: str | None = None,
        base_dir: str | None = None,
    ) -> Simulation:
        """Parse, validate and build a scenario (``seed`` overrides ``simulation.seed``);
        raises ConfigError."""
    @property
    def scenario_json(self) -> str:
        """The scenario as normalized JSON: every default filled in, the seed applied."""
    def open_pcap(self, dir: str) -> list[str]:
        """Open the pcap files ``trace.pcap`` selects in ``dir`` (which must exist)."""
    @property
    def duration_s(self) -> float:
        """Simulated time the scenario lasts, in seconds."""
    @property
    def now_s(self) -> float:
        """Simulated time reached so far, in seconds."""
    def run_until(self, t_s: float) -> None:
        """Advance the simulation to ``t_s`` seconds; releases the GIL."""
    def take_transfers(self) -> _Table:
        """The per-transfer rows recorded since the last call."""
    def take_concurrency(self) -> _Table | None:
        """The rows of the ``concurrency`` table written since the last call, or ``None``
        when the scenario does not ask for it (``[trace] concurrency``)."""
    def finish(self) -> _Results:
        """Run to the end if needed and return the results."""

def write_csv(table: _Table | list[_Table], path: str) -> None:
    """Write a table (or its chunks in order) as CSV, as pandas' ``to_csv(index=False)``
    writes it; numeric columns must be ``<f8`` or ``<i8``. Releases the GIL."""

def write_timeseries(
    flow_series: _Table | list[_Table], queue_series: _Table | list[_Table], path: str
) -> None:
    """Write the tidy time series (``time_s``, ``kind``, ``id``, metrics) as Parquet."""

def render_plot(tables: dict[str, Any], duration_s: float, path: str) -> str:
    """Draw a run's plot as a PNG at ``path``; returns its description as JSON text."""

def render_seqplot(
    events: _Table | list[_Table],
    kind_names: list[str],
    packet_names: list[str],
    flows: list[int],
    path: str,
) -> str:
    """Draw sequence-time panels of ``flows`` from the event trace as a PNG; returns their
    description as JSON text."""

# Loss events (``flowshare.analysis``): the grouping the TFRC receiver uses. A loss belongs to
# the current event if ``t <= start + rtt`` (start: the event's first loss), else it starts
# one. Times are float64 seconds, sorted, no NaN; flows int64; ``ValueError`` otherwise.

def loss_event_index(times: npt.NDArray[np.float64], rtt: float) -> tuple[str, bytes]:
    """For each loss, the index of its loss event, as an ``("<i8", bytes)`` column."""

def cumulative_loss_events(
    times: npt.NDArray[np.float64], flows: npt.NDArray[np.int64], rtt: float
) -> _Table:
    """The loss events of the flows observed as one: ``start_s`` (its first loss),
    ``losses`` and ``flows`` (distinct flows hit), one row per event."""

def flow_loss_events(
    times: npt.NDArray[np.float64],
    flows: npt.NDArray[np.int64],
    ids: npt.NDArray[np.int64],
    rtts: npt.NDArray[np.float64],
) -> tuple[str, bytes]:
    """Loss events counted flow by flow, flow ``ids[k]`` grouped by ``rtts[k]``: the count of
    each of ``ids`` as an ``("<i8", bytes)`` column. A loss of a flow not in ``ids`` or a NaN
    RTT of a flow with losses is a ``ValueError``."""
