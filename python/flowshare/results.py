"""Results of one run: pandas tables, aggregate figures and the files written to disk.

The tables stay in the core's column form until a DataFrame is asked for, and the files are
written by the Rust writers of ``flowshare._core`` (``write_csv``, ``write_timeseries``,
``render_plot``), so that running a scenario and writing its files imports neither numpy,
pandas, pyarrow nor matplotlib (docs/adr/0009-outputs-written-from-rust.md). A result whose
time series went to disk (past ``_series.SPILL_BYTES``) writes ``timeseries.parquet`` and
``events.parquet`` chunk by chunk with pyarrow.
"""

from __future__ import annotations

import array
import json
import math
import os
import shutil
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _core
from ._files import atomic_directory, check_directory
from ._series import RunData

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = [
    "CONCURRENCY_FILE",
    "DELAY_HISTOGRAM",
    "EVENTS_FILE",
    "OUTPUT_FILES",
    "TRANSFERS_FILE",
    "RunResult",
    "events_to_frame",
    "table_to_frame",
    "write_events_parquet",
]

OUTPUT_FILES = (
    "flows.csv",
    "queues.csv",
    "delays.csv",
    "fct.csv",
    "timeseries.parquet",
    "summary.json",
    "plot.png",
)
"""Files written by :meth:`RunResult.write`, in the order they are written."""

EVENTS_FILE = "events.parquet"
"""The event trace, written by :meth:`RunResult.write` when the run traced events."""

TRANSFERS_FILE = "transfers.parquet"
"""The per-transfer table, written by :meth:`RunResult.write` when the scenario has arrival
processes."""

CONCURRENCY_FILE = "concurrency.parquet"
"""The ``concurrency`` table, written by :meth:`RunResult.write` when the scenario asks for it
(``[trace] concurrency``)."""

MEMBERS_FILE = "members.csv"
"""The ``members`` table, written by :meth:`RunResult.write` when a flow of the scenario has
aggregate members joining at run time (``aggregate.joins``)."""

REPORT_FILE = "report.md"

DELAY_HISTOGRAM = "delays"
"""The results table of per-flow one-way delay histograms (columns ``flow``, ``bin_lo_s``,
``bin_hi_s``, ``count``), from which the plot draws the delay CDF per flow group; the panel is
left out when the results have none."""

# Columns (in the core's column form) of the tables a result may lack: results built by hand,
# or runs of a core without them. Written as empty tables with these columns.
_EMPTY_TABLES: dict[str, dict[str, Any]] = {
    "delays": {
        "flow": ("<i8", b""),
        "bin_lo_s": ("<f8", b""),
        "bin_hi_s": ("<f8", b""),
        "count": ("<i8", b""),
    },
    "fct": {
        "group": ("<i8", b""),
        "name": [],
        "size_bucket": [],
        "size_min_bytes": ("<i8", b""),
        "size_max_bytes": ("<i8", b""),
        "transfers": ("<i8", b""),
        "unfinished": ("<i8", b""),
        "fct_mean_s": ("<f8", b""),
        "fct_min_s": ("<f8", b""),
        "fct_p50_s": ("<f8", b""),
        "fct_p90_s": ("<f8", b""),
        "fct_p99_s": ("<f8", b""),
        "fct_max_s": ("<f8", b""),
    },
    "members": {
        "flow": ("<i8", b""),
        "name": [],
        "member": ("<i8", b""),
        "start_s": ("<f8", b""),
        "size_bytes": ("<i8", b""),
        "segments": ("<i8", b""),
        "completion_time_s": ("<f8", b""),
    },
}

# The result tables of the core that :meth:`RunResult.from_core` keeps as they are (besides the
# time series, the trace and the transfers, which have their own handling).
_SERIES_KEYS = ("flow_series", "queue_series")
_OWN_KEYS = frozenset(
    (
        "summary",
        "flows",
        "queues",
        *_SERIES_KEYS,
        "transfers",
        "concurrency",
        "events",
        "event_codes",
        "pcap",
    )
)

# Narrow dtypes of the event trace's columns (docs/traces.md); the coded columns become
# categoricals.
_EVENT_DTYPES = {
    "time_ns": "int64",
    "flow": "int32",
    "link": "int32",
    "seq": "int64",
    "size": "int32",
    "retx": "bool",
    "acked": "int32",
}
_EVENT_COLUMNS = (
    "time_s",
    "time_ns",
    "kind",
    "flow",
    "link",
    "packet",
    "seq",
    "size",
    "retx",
    "acked",
    "reason",
)


def table_to_frame(table: Mapping[str, Any], *, name: str = "table") -> pd.DataFrame:
    """Turn a columnar table from the native core into a DataFrame.

    Parameters
    ----------
    table : mapping of str to column
        Column name to either a list of ``str`` (a text column) or a ``(dtype, data)`` tuple,
        where ``dtype`` is a numpy dtype string such as ``"<f8"`` and ``data`` a ``bytes``
        buffer holding the values.
    name : str
        Name of the table, used in error messages.

    Returns
    -------
    pandas.DataFrame
        One column per entry, in the table's order.

    Raises
    ------
    ValueError
        If a column has an unknown shape, a buffer does not hold whole values, or the columns
        differ in length.
    """
    import numpy as np
    import pandas as pd

    columns: dict[str, Any] = {}
    for key, column in table.items():
        if isinstance(column, tuple) and len(column) == 2:
            dtype, data = column
            try:
                columns[key] = np.frombuffer(data, dtype=np.dtype(dtype))
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{name}.{key}: bad numeric column ({exc})") from None
        elif isinstance(column, list):
            columns[key] = column
        else:
            raise ValueError(
                f"{name}.{key}: expected a list of str or a (dtype, bytes) tuple, "
                f"got {type(column).__name__}"
            )
    lengths = {key: len(values) for key, values in columns.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"{name}: columns differ in length: {lengths}")
    return pd.DataFrame(columns)


def events_to_frame(table: Mapping[str, Any], codes: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """Turn the core's event table into the documented event DataFrame (``docs/traces.md``).

    Parameters
    ----------
    table : mapping
        The ``events`` table of ``_core.Simulation.finish()``: integer columns.
    codes : mapping of str to sequence of str
        Names of the codes of the ``kind``, ``packet`` and ``reason`` columns, in code order.

    Returns
    -------
    pandas.DataFrame
        Columns ``time_s``, ``time_ns``, ``kind``, ``flow``, ``link``, ``packet``, ``seq``,
        ``size``, ``retx``, ``acked``, ``reason``; ``kind``, ``packet`` and ``reason`` are
        categoricals (a ``reason`` that does not apply is missing).
    """
    return _events_frame(table_to_frame(table, name="events"), codes)


def _events_frame(raw: pd.DataFrame, codes: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """The documented event DataFrame from the core's integer columns."""
    import numpy as np
    import pandas as pd

    columns: dict[str, Any] = {}
    time_ns = raw["time_ns"].to_numpy(dtype="int64")
    columns["time_s"] = time_ns / 1e9
    for name in _EVENT_COLUMNS[1:]:
        values = raw[name].to_numpy()
        if name in _EVENT_DTYPES:
            columns[name] = values.astype(_EVENT_DTYPES[name])
            continue
        names = list(codes[name])
        categories = [n for n in names if n]
        # Code of each name among the categories; the empty name (no value) becomes -1.
        remap = np.array([categories.index(n) if n else -1 for n in names], dtype="int8")
        columns[name] = pd.Categorical.from_codes(remap[values], categories=categories)
    return pd.DataFrame(columns)


class RunResult:
    """The results of one simulation run.

    Attributes
    ----------
    summary : dict
        Run facts from the core: ``duration_s``, ``seed``, ``events``, ``wall_s``,
        ``scenario_hash``, ``version``.
    scenario : dict
        The normalized scenario that was run (every default filled in).
    flows : pandas.DataFrame
        One row per flow: goodput, RTT and cwnd statistics, retransmissions, drops, ...
    queues : pandas.DataFrame
        One row per link direction: arrivals, drops (``early_drops`` by RED,
        ``forced_drops`` by the limit), queue lengths, utilization, ...; with a RED queue
        also ``red_avg_pkts`` and ``red_max_p`` (``docs/queues.md``).
    flow_series : pandas.DataFrame
        Sampled per-flow time series: ``time_s``, ``flow``, ``cwnd``, ``ssthresh``,
        ``srtt_s``, ``send_rate_bps``, ``goodput_bps``.
    queue_series : pandas.DataFrame
        Sampled per-queue time series: ``time_s``, ``queue``, ``len_pkts``, ``len_bytes``
        (and ``red_avg_pkts`` when a queue is RED).
    transfers : pandas.DataFrame
        One row per transfer opened by an arrival process (``[flows.arrivals]``,
        ``docs/traffic.md``): ``transfer``, ``name``, ``user``, ``start_s``, ``size_bytes``,
        ``completion_time_s`` (``NaN`` if still running at the end), ``goodput_bps``,
        ``packets_sent``, ``retransmits``, ``timeouts``, ``drops``, ``initial_cwnd`` and
        ``initial_ssthresh`` (segments, after an ensemble's join rule; ``NaN`` ssthresh when
        unbounded), ``initial_srtt_s`` and ``initial_rttvar_s`` (the RTT estimate it starts
        with, ``NaN`` without one), ``rtt_min_s``, ``sent_bytes`` (distinct payload bytes
        sent). Empty without arrivals.
    delays : pandas.DataFrame
        Per listed flow, the histogram of the one-way delays of its data packets delivered
        after the warm-up: one row per non-empty bin, ``flow``, ``bin_lo_s``, ``bin_hi_s``
        (values in ``[bin_lo_s, bin_hi_s)``), ``count`` (``docs/measurements.md``).
    fct : pandas.DataFrame
        Flow-completion times of the finite transfers (sized listed flows and transfers of
        arrival processes) that started after the warm-up, per flow group: a row over all
        sizes (``size_bucket = "all"``) and one per size bucket that saw a transfer, with
        ``group``, ``name``, ``size_bucket``, ``size_min_bytes``, ``size_max_bytes`` (−1:
        unbounded), ``transfers`` (completed), ``unfinished``, ``fct_mean_s``, ``fct_min_s``,
        ``fct_p50_s``, ``fct_p90_s``, ``fct_p99_s``, ``fct_max_s``. Empty without finite
        transfers.
    members : pandas.DataFrame
        One row per member that joined an aggregate connection (PA-MulTCP or MPAT) at run
        time (``aggregate.joins``, ``docs/measurements.md``): ``flow``, ``name``, ``member``
        (joined members are numbered from ``n``), ``start_s``, ``size_bytes``, ``segments``,
        ``completion_time_s`` (from ``start_s`` until every one of its segments was
        delivered, cumulatively acknowledged or SACKed; ``NaN`` if not by the end). Empty
        without members.
    concurrency : pandas.DataFrame or None
        When the scenario names flow groups in ``[trace] concurrency``: whenever a transfer of
        one of them opens or completes, one row per transfer of those groups open at that
        instant (the opening one with nothing sent, the completing one included), in event
        order: ``time_s``, ``transfer``, ``sent_bytes`` (distinct payload bytes sent so far),
        ``acked_bytes`` (cumulatively acknowledged); else ``None`` (``docs/traces.md``).
    events : pandas.DataFrame or None
        The packet event trace when the scenario asked for one (``[trace] events = true``),
        else ``None``; columns and kinds are described in ``docs/traces.md``.
    pcap_files : list of pathlib.Path
        The pcap captures written during the run (``[trace] pcap`` with a ``pcap_dir``).

    Units are in the column names; ``NaN`` marks a value that does not apply. The column
    lists are given in ``docs/adr/0002-python-boundary.md``.
    """

    def __init__(
        self,
        *,
        summary: dict[str, Any],
        scenario: dict[str, Any],
        flows: pd.DataFrame | None = None,
        queues: pd.DataFrame | None = None,
        flow_series: pd.DataFrame | None = None,
        queue_series: pd.DataFrame | None = None,
        transfers: pd.DataFrame | None = None,
        concurrency: pd.DataFrame | None = None,
        delays: pd.DataFrame | None = None,
        fct: pd.DataFrame | None = None,
        events: pd.DataFrame | None = None,
        pcap_files: Sequence[str | os.PathLike[str]] = (),
        data: RunData | None = None,
        tables: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        self.summary = summary
        self.scenario = scenario
        # The core's tables in column form (``tables``), each turned into a DataFrame when
        # first asked for; frames given here take precedence.
        self._tables: dict[str, Mapping[str, Any]] = dict(tables or {})
        self._frames: dict[str, Any] = {}
        if flows is not None:
            self._frames["flows"] = flows
        if queues is not None:
            self._frames["queues"] = queues
        if delays is not None:
            self._frames["delays"] = delays
        if fct is not None:
            self._frames["fct"] = fct
        for key in ("flows", "queues"):
            if key not in self._frames and key not in self._tables:
                raise TypeError(f"RunResult: give {key}")
        self._transfers = transfers
        self._concurrency = concurrency
        self.pcap_files = [Path(p) for p in pcap_files]
        # The series and the trace are read from `data` (in chunks, perhaps on disk) when
        # first asked for; frames given here take precedence.
        self._data = data
        self._flow_series = flow_series
        self._queue_series = queue_series
        self._events = events
        if data is None and (flow_series is None or queue_series is None):
            raise TypeError("RunResult: give flow_series and queue_series, or data")

    def _frame(self, key: str) -> pd.DataFrame:
        frame = self._frames.get(key)
        if frame is None:
            frame = table_to_frame(self._tables[key], name=key)
            self._frames[key] = frame
        return frame

    @property
    def flows(self) -> pd.DataFrame:
        """One row per flow (a DataFrame made when first used)."""
        return self._frame("flows")

    @flows.setter
    def flows(self, frame: pd.DataFrame) -> None:
        self._frames["flows"] = frame

    @property
    def queues(self) -> pd.DataFrame:
        """One row per link direction (a DataFrame made when first used)."""
        return self._frame("queues")

    @queues.setter
    def queues(self, frame: pd.DataFrame) -> None:
        self._frames["queues"] = frame

    @property
    def transfers(self) -> pd.DataFrame:
        """One row per transfer opened by an arrival process (made when first used)."""
        if self._transfers is None:
            self._transfers = _transfers_frame(self._tables.get("transfers"))
        return self._transfers

    @transfers.setter
    def transfers(self, frame: pd.DataFrame) -> None:
        self._transfers = frame

    @property
    def concurrency(self) -> pd.DataFrame | None:
        """Snapshots of the open transfers of the groups ``[trace] concurrency`` names, or
        ``None`` when the scenario names none (made when first used)."""
        if self._concurrency is None and self._tables.get("concurrency") is not None:
            parts = self._tables["concurrency"]
            self._concurrency = _concat_tables(parts, name="concurrency")
        return self._concurrency

    @concurrency.setter
    def concurrency(self, frame: pd.DataFrame | None) -> None:
        self._concurrency = frame

    @property
    def delays(self) -> pd.DataFrame:
        """Per-flow one-way delay histograms (a DataFrame made when first used; empty when the
        results have none)."""
        return self._frame_or_empty("delays")

    @delays.setter
    def delays(self, frame: pd.DataFrame) -> None:
        self._frames["delays"] = frame

    @property
    def members(self) -> pd.DataFrame:
        """Members that joined aggregate connections at run time (a DataFrame made when
        first used; empty when there were none)."""
        return self._frame_or_empty("members")

    @members.setter
    def members(self, frame: pd.DataFrame) -> None:
        self._frames["members"] = frame

    @property
    def fct(self) -> pd.DataFrame:
        """Flow-completion-time summary per flow group and size (a DataFrame made when first
        used; empty when the results have none)."""
        return self._frame_or_empty("fct")

    @fct.setter
    def fct(self, frame: pd.DataFrame) -> None:
        self._frames["fct"] = frame

    def _frame_or_empty(self, key: str) -> pd.DataFrame:
        if key not in self._frames and key not in self._tables:
            self._frames[key] = table_to_frame(_EMPTY_TABLES[key], name=key)
        return self._frame(key)

    def table(self, name: str) -> pd.DataFrame | None:
        """A further result table of the core by name (such as ``delays``), as a
        DataFrame, or ``None`` when the results have no such table."""
        if name in self._frames:
            return self._frames[name]  # type: ignore[no-any-return]
        # These two arrive from the core in slices, which their properties join.
        if name == "transfers":
            return self.transfers
        if name == "concurrency":
            return self.concurrency
        if name not in self._tables:
            return None
        return self._frame(name)

    def _column(self, key: str, name: str) -> list[Any] | None:
        """Column ``name`` of table ``key`` as a list, from the DataFrame if one was made,
        else from the core's columns (no pandas); ``None`` when absent."""
        frame = self._frames.get(key)
        if frame is not None:
            return frame[name].tolist() if name in frame else None
        column = self._tables.get(key, {}).get(name)
        if column is None:
            return None
        return _column_values(column)

    @property
    def flow_series(self) -> pd.DataFrame:
        """Sampled per-flow time series (loaded into memory when first used)."""
        if self._flow_series is None:
            assert self._data is not None
            self._flow_series = self._data.flow.frame()
        return self._flow_series

    @flow_series.setter
    def flow_series(self, frame: pd.DataFrame) -> None:
        self._flow_series = frame

    @property
    def queue_series(self) -> pd.DataFrame:
        """Sampled per-queue time series (loaded into memory when first used)."""
        if self._queue_series is None:
            assert self._data is not None
            self._queue_series = self._data.queue.frame()
        return self._queue_series

    @queue_series.setter
    def queue_series(self, frame: pd.DataFrame) -> None:
        self._queue_series = frame

    @property
    def events(self) -> pd.DataFrame | None:
        """The packet event trace, or ``None`` (loaded into memory when first used)."""
        if self._events is None and self._data is not None and self._data.events is not None:
            self._events = _events_frame(self._data.events.frame(), self._data.event_codes)
        return self._events

    @events.setter
    def events(self, frame: pd.DataFrame | None) -> None:
        self._events = frame

    def _streamed(self) -> RunData | None:
        """The chunked data when the series are on disk and not loaded: written chunk by chunk."""
        data = self._data
        if data is None or not data.spilled or self._flow_series is not None:
            return None
        return data

    def _series_tables(self, columns: Sequence[str] | None = None) -> tuple[Any, Any]:
        """The flow and queue series for the Rust writers: the core's chunks as they are when
        no DataFrame was made, else the DataFrames' columns; ``columns`` (when given) limits
        chunks read from disk to those the caller needs."""
        out = []
        for which, frame in (("flow", self._flow_series), ("queue", self._queue_series)):
            if frame is not None:
                out.append(frame_to_table(frame))
                continue
            assert self._data is not None
            chunks = getattr(self._data, which)
            raw = chunks.raw()
            if raw is None:
                names = None if columns is None else [c for c in chunks.columns if c in columns]
                raw = [_arrays_to_table(chunks.chunk(i, names)) for i in range(len(chunks))]
            out.append(raw)
        return out[0], out[1]

    def _table_for_writer(self, key: str) -> Any:
        frame = self._frames.get(key)
        if frame is not None:
            return frame_to_table(frame)
        if key not in self._tables and key in _EMPTY_TABLES:
            return _EMPTY_TABLES[key]
        return self._tables[key]

    @classmethod
    def from_core(
        cls, raw: Mapping[str, Any], scenario: dict[str, Any], *, data: RunData | None = None
    ) -> RunResult:
        """Build a result from the dict returned by ``_core.Simulation.finish()``.

        Parameters
        ----------
        raw : mapping
            ``{"summary": dict, "flows": table, "queues": table, "flow_series": table,
            "queue_series": table}``, tables as accepted by :func:`table_to_frame`, and
            ``events`` and ``event_codes`` when events were traced, ``delays`` and ``fct``
            (empty tables when absent). Further tables are kept, readable with :meth:`table`.
        scenario : dict
            The normalized scenario that was run.
        data : RunData, optional
            The time series and events taken from the core while the run went on, the last
            chunk (``raw``'s) included; by default they are ``raw``'s.

        The tables are checked here and turned into DataFrames only when first used.
        """
        if data is None:
            data = RunData(events=raw.get("events") is not None)
            data.add(raw, raw.get("events"))
            data.event_codes = {k: list(v) for k, v in raw.get("event_codes", {}).items()}
        tables: dict[str, Any] = {}
        for key, table in raw.items():
            if key in ("flows", "queues") or (key not in _OWN_KEYS and isinstance(table, Mapping)):
                _check_table(table, name=key)
                tables[key] = table
        for key in ("transfers", "concurrency"):
            if raw.get(key) is not None:
                tables[key] = raw[key]
        pcap = [entry["path"] for entry in raw.get("pcap", ())]
        return cls(
            summary=dict(raw["summary"]),
            scenario=scenario,
            pcap_files=pcap,
            data=data,
            tables=tables,
        )

    def __repr__(self) -> str:
        duration = self.summary.get("duration_s")
        return (
            f"<RunResult: {len(self.flows)} flows, {len(self.queues)} queues, "
            f"{duration} s simulated, seed {self.summary.get('seed')}>"
        )

    def aggregate(self) -> dict[str, Any]:
        """Figures over all flows and queues.

        Returns
        -------
        dict
            ``flows`` (count), ``goodput_bps`` (payload bytes delivered by all flows after
            the warm-up × 8 / the simulated time after it, ``summary["warmup_s"]``; a flow's
            own ``goodput_bps`` is over the time it was active after the warm-up, so the
            per-flow figures need not add up to it), ``jain_index`` (Jain's fairness
            index of the ``goodput_bps`` of the flows that were active after the warm-up —
            a flow that never started has no goodput; ``None`` when undefined),
            ``drops`` (packets dropped at all queues, data and ACKs), ``retransmits`` and
            ``timeouts`` (sums over flows).
        """
        goodput = [float(x) for x in self._column("flows", "goodput_bps") or []]
        active = [x for x in goodput if not math.isnan(x)]
        duration = self.summary.get("duration_s")
        steady = float(duration or 0.0) - float(self.summary.get("warmup_s") or 0.0)
        steady_delivered = self._column("flows", "steady_bytes_delivered")
        delivered = self._column("flows", "bytes_delivered")
        if steady_delivered is not None and steady > 0:
            total = float(sum(steady_delivered)) * 8.0 / steady
        elif delivered is not None and duration:
            total = float(sum(delivered)) * 8.0 / float(duration)
        else:
            total = float(sum(goodput))
        figures: dict[str, Any] = _json_safe(
            {
                "flows": len(self._column("flows", _first_column(self, "flows")) or []),
                "goodput_bps": total,
                "jain_index": _jain(active) if active else None,
                "drops": _column_sum(self._column("queues", "drops")),
                "retransmits": _column_sum(self._column("flows", "retransmits")),
                "timeouts": _column_sum(self._column("flows", "timeouts")),
            }
        )
        return figures

    def timeseries(self) -> pd.DataFrame:
        """Flow and queue time series in one tidy table.

        Returns
        -------
        pandas.DataFrame
            Columns ``time_s``, ``kind`` (``"flow"`` or ``"queue"``), ``id`` (the flow or
            queue id), then the metric columns of both series (``cwnd``, ``ssthresh``,
            ``srtt_s``, ``send_rate_bps``, ``goodput_bps``, ``len_pkts``, ``len_bytes``). A
            metric that does not apply to a row's kind (``cwnd`` of a queue, ``len_pkts`` of a
            flow) is ``NaN``, so every metric column is float. Rows are sorted by
            ``time_s``, then ``kind``, then ``id``.
        """
        metrics = _metrics(list(self.flow_series.columns), list(self.queue_series.columns))
        return _tidy(self.flow_series, self.queue_series, metrics)

    def write(self, out_dir: str | os.PathLike[str], *, report: bool = False) -> list[Path]:
        """Write the results into ``out_dir``, atomically.

        Files: ``flows.csv`` and ``queues.csv`` (the tables as they are), ``delays.csv``
        (:attr:`delays`) and ``fct.csv`` (:attr:`fct`), ``timeseries.parquet``
        (see :meth:`timeseries`), ``summary.json`` (``summary``, ``aggregate`` from
        :meth:`aggregate`, and the normalized ``scenario``), ``plot.png`` (see :meth:`plot`),
        ``transfers.parquet`` when the scenario has arrival processes, ``members.csv``
        (:attr:`members`) when a flow has aggregate members joining (``aggregate.joins``),
        ``concurrency.parquet`` when it asks for the ``concurrency`` table,
        ``events.parquet`` when events were traced, the run's pcap files (hard
        links or copies of :attr:`pcap_files`) and, with ``report=True``, ``report.md``.

        Everything is first written into a staging directory next to ``out_dir`` and then
        renamed into place, so an error or an interrupt never leaves a half-written file (nor
        a new ``out_dir``). Files of the same name in an existing ``out_dir`` are replaced;
        other files there are left alone.

        Parameters
        ----------
        out_dir : str or path-like
            Output directory; created, with its parents, if missing.
        report : bool, default False
            Also write ``report.md``, a Markdown summary of the run embedding the plot.

        Returns
        -------
        list of pathlib.Path
            The files written, under ``out_dir``.
        """
        check_directory("out_dir", out_dir)
        with atomic_directory(out_dir) as stage:
            names = self.write_into(stage, report=report)
        out = Path(out_dir)
        return [out / name for name in names]

    def write_into(self, directory: str | os.PathLike[str], *, report: bool = False) -> list[str]:
        """Write the files of :meth:`write` into an existing directory, not atomically.

        Returns
        -------
        list of str
            The names of the files written, in order.
        """
        check_directory("directory", directory)
        stage = Path(directory)
        names = list(OUTPUT_FILES)
        _write_csv(self._table_for_writer("flows"), stage / "flows.csv")
        _write_csv(self._table_for_writer("queues"), stage / "queues.csv")
        _write_csv(self._table_for_writer("delays"), stage / "delays.csv")
        _write_csv(self._table_for_writer("fct"), stage / "fct.csv")
        _write_timeseries(self, stage / "timeseries.parquet")
        _write_summary(self, stage / "summary.json")
        _write_plot(self, stage / "plot.png")
        if _has_arrivals(self.scenario):
            _write_parquet(self.transfers, stage / TRANSFERS_FILE)
            names.append(TRANSFERS_FILE)
        if self.concurrency is not None:
            _write_parquet(self.concurrency, stage / CONCURRENCY_FILE)
            names.append(CONCURRENCY_FILE)
        if _has_members(self.scenario):
            _write_csv(self._table_for_writer("members"), stage / MEMBERS_FILE)
            names.append(MEMBERS_FILE)
        if _write_events(self, stage / EVENTS_FILE):
            names.append(EVENTS_FILE)
        for path in self.pcap_files:
            target = stage / path.name
            if not (target.exists() and os.path.samefile(path, target)):
                _link_or_copy(path, target)
            names.append(path.name)
        if report:
            _write_report(self, stage / REPORT_FILE)
            names.append(REPORT_FILE)
        return names

    def plot(self, path: str | os.PathLike[str]) -> dict[str, Any]:
        """Draw the run's plot (the ``plot.png`` of :meth:`write`) as a PNG file at ``path``.

        Panels, top to bottom: delivered goodput per flow (bytes delivered in order to the
        application per interval, as bin means, with the total and the bottleneck's capacity);
        the sending rate (retransmissions included); cwnd of the TCP flows on an axis set by
        the steady state (99th percentile after the first slow start + 15 %, higher values
        clipped and the clipping stated); the bottleneck queue length; then the RTT CDF per
        flow group and, when the results hold a ``delays`` table, the one-way delay
        CDF per group. Up to 8 flows are drawn one line each; more are drawn per flow group
        (the scenario's ``[[flows]]`` name) as the mean and a min-max band. Drawn by the
        Rust core (``flowshare._core.render_plot``); the same results give the same bytes.

        Returns
        -------
        dict
            What was drawn: ``width``, ``height`` and ``panels``, each with ``id``, ``title``,
            ``x_label``, ``y_label`` (units included), ``x_lim``, ``y_lim``, ``series``
            (``name``, ``kind``, ``points``, ``y_min``, ``y_max``), ``legend`` and ``notes``.
        """
        flow, queue = self._series_tables(_PLOT_SERIES_COLUMNS)
        tables: dict[str, Any] = {
            "flows": self._table_for_writer("flows"),
            "queues": self._table_for_writer("queues"),
            "flow_series": flow,
            "queue_series": queue,
        }
        if DELAY_HISTOGRAM in self._frames or DELAY_HISTOGRAM in self._tables:
            tables[DELAY_HISTOGRAM] = self._table_for_writer(DELAY_HISTOGRAM)
        duration = float(self.summary.get("duration_s") or 0.0)
        text = _core.render_plot(tables, duration, os.fspath(path))
        description: dict[str, Any] = json.loads(text)
        return description


SEQPLOT_FILE = "seqplot.png"
"""The sequence-time plot written on request (``flowshare run --seqplot FLOW ...``)."""


def seqplot(result: RunResult, flows: Sequence[int], path: str | os.PathLike[str]) -> dict[str, Any]:
    """Draw sequence-time panels of ``flows`` (data segments sent, retransmitted and dropped,
    cumulative ACKs received, segment number over time) from the run's event trace, as a PNG
    at ``path``; returns the description as :meth:`RunResult.plot` does.

    Raises
    ------
    ConfigError
        If the run traced no events (``[trace] events = true``) or a flow does not exist.
    """
    from ._core import ConfigError

    data = result._data
    if data is None or data.events is None:
        raise ConfigError(
            "--seqplot: needs the event trace; set [trace] events = true in the scenario "
            "(trace.flows may limit it to the flows plotted)"
        )
    ids = result._column("flows", "flow") or []
    for flow in flows:
        if flow not in ids:
            last = f"0..{len(ids) - 1}" if ids else "none"
            raise ConfigError(f"--seqplot: flow {flow} does not exist; flows are {last}")
    events = data.events.raw()
    if events is None:
        names = [c for c in data.events.columns if c in ("time_ns", "kind", "flow", "packet", "seq", "retx")]
        events = [_arrays_to_table(data.events.chunk(i, names)) for i in range(len(data.events))]
    codes = data.event_codes
    text = _core.render_seqplot(
        events, list(codes.get("kind", [])), list(codes.get("packet", [])), list(flows),
        os.fspath(path),
    )
    description: dict[str, Any] = json.loads(text)
    return description


def _transfers_frame(raw: Any) -> pd.DataFrame:
    """The per-transfer table from the core: one table, or the parts taken while the run went
    on; ``name`` becomes a categorical (one name per arrival group, many rows). Empty when the
    run had no arrival processes."""
    import pandas as pd

    if raw is None:
        return pd.DataFrame()
    frame = _concat_tables(raw, name="transfers")
    if "name" in frame:
        frame["name"] = frame["name"].astype("category")
    return frame


def _concat_tables(raw: Any, *, name: str) -> pd.DataFrame:
    """One DataFrame from a table of the core or the parts of it taken while the run went on."""
    import pandas as pd

    parts = [raw] if isinstance(raw, Mapping) else list(raw)
    frames = [table_to_frame(p, name=name) for p in parts]
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def _has_arrivals(scenario: Mapping[str, Any]) -> bool:
    flows = scenario.get("flows")
    return isinstance(flows, list) and any(
        isinstance(g, Mapping) and g.get("arrivals") is not None for g in flows
    )


def _has_members(scenario: Mapping[str, Any]) -> bool:
    flows = scenario.get("flows")
    return isinstance(flows, list) and any(
        isinstance(g, Mapping) and isinstance(g.get("aggregate"), Mapping) for g in flows
    )


def _column_sum(values: list[Any] | None) -> int | None:
    if values is None:
        return None
    return int(sum(values))


def _jain(values: list[float]) -> float:
    """Jain's fairness index of ``values`` (as :func:`flowshare.metrics.jain_index`, without
    numpy): (sum x)^2 / (n sum x^2); NaN when every value is 0."""
    total = math.fsum(values)
    squares = math.fsum(x * x for x in values)
    if squares == 0:
        return math.nan
    return total * total / (len(values) * squares)


def _first_column(result: RunResult, key: str) -> str:
    frame = result._frames.get(key)
    columns = list(frame.columns) if frame is not None else list(result._tables.get(key, {}))
    return columns[0] if columns else ""


_ARRAY_CODES = {"f8": "d", "i8": "q", "u8": "Q", "f4": "f", "i4": "i", "u4": "I", "i2": "h"}


def _column_values(column: Any) -> list[Any]:
    """A core column (``(dtype, bytes)`` or a list of text) as a list, without numpy."""
    if isinstance(column, list):
        return column
    dtype, data = column
    code = _ARRAY_CODES.get(str(dtype).lstrip("<>=|"))
    order = str(dtype)[:1]
    if code is None:
        import numpy as np

        return list(np.frombuffer(data, dtype=np.dtype(dtype)).tolist())
    values = array.array(code)
    values.frombytes(data)
    if (order == ">" and sys.byteorder == "little") or (order == "<" and sys.byteorder == "big"):
        values.byteswap()
    return values.tolist()


def _check_table(table: Mapping[str, Any], *, name: str) -> None:
    """Check the shape of a core table as :func:`table_to_frame` would, without converting."""
    lengths: dict[str, int] = {}
    for key, column in table.items():
        if isinstance(column, tuple) and len(column) == 2:
            dtype, data = column
            code = _ARRAY_CODES.get(str(dtype).lstrip("<>=|"))
            if code is None or not isinstance(data, bytes | bytearray | memoryview):
                # An unusual dtype: numpy reads it (and names the column if it cannot).
                lengths[key] = len(table_to_frame({key: column}, name=name))
                continue
            width = array.array(code).itemsize
            if len(data) % width:
                raise ValueError(
                    f"{name}.{key}: bad numeric column (buffer size must be a multiple of "
                    "element size)"
                )
            lengths[key] = len(data) // width
        elif isinstance(column, list):
            lengths[key] = len(column)
        else:
            raise ValueError(
                f"{name}.{key}: expected a list of str or a (dtype, bytes) tuple, "
                f"got {type(column).__name__}"
            )
    if len(set(lengths.values())) > 1:
        raise ValueError(f"{name}: columns differ in length: {lengths}")


def frame_to_table(frame: pd.DataFrame) -> dict[str, Any]:
    """A DataFrame in the core's column form, as the Rust writers take it: integer and boolean
    columns as ``<i8``, other numbers as ``<f8``, anything else as text (missing as empty)."""
    import numpy as np
    import pandas as pd

    table: dict[str, Any] = {}
    for name in frame.columns:
        series = frame[name]
        dtype = series.dtype
        if pd.api.types.is_bool_dtype(dtype) and not series.isna().any():
            table[str(name)] = ("<i8", series.to_numpy(dtype="<i8").tobytes())
        elif pd.api.types.is_integer_dtype(dtype) and not series.isna().any():
            table[str(name)] = ("<i8", series.to_numpy(dtype="<i8").tobytes())
        elif pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype):
            values = series.to_numpy(dtype="<f8", na_value=np.nan)
            table[str(name)] = ("<f8", values.tobytes())
        else:
            table[str(name)] = ["" if _missing(v) else str(v) for v in series.tolist()]
    return table


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _arrays_to_table(arrays: Mapping[str, Any]) -> dict[str, Any]:
    """Numpy columns in the core's column form."""
    out: dict[str, Any] = {}
    for name, values in arrays.items():
        kind = values.dtype.kind
        if kind in "iub":
            out[name] = ("<i8", values.astype("<i8").tobytes())
        else:
            out[name] = ("<f8", values.astype("<f8").tobytes())
    return out


#: Flow and queue series columns the plot draws (read from disk when the series were spilled).
_PLOT_SERIES_COLUMNS = (
    "time_s", "flow", "queue", "goodput_bps", "send_rate_bps", "cwnd", "ssthresh", "srtt_s",
    "len_pkts", "len_bytes",
)  # fmt: skip


def _json_safe(value: Any) -> Any:
    """Plain JSON types; non-finite floats become ``None``."""
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if hasattr(value, "item") and type(value).__module__ == "numpy":
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# The writers are separate functions so that each step can fail on its own (tests rely on it).


def _write_csv(table: Any, path: Path) -> None:
    """Write a table (a DataFrame or the core's columns) as CSV, as pandas' ``to_csv`` did."""
    if not isinstance(table, Mapping | list):
        table = frame_to_table(table)
    _core.write_csv(table, os.fspath(path))


class _TidySeries:
    """The flow and queue series, to be written as the tidy ``timeseries.parquet`` in Rust."""

    def __init__(self, flow: Any, queue: Any) -> None:
        self.flow = flow
        self.queue = queue


def _write_parquet(table: Any, path: Path) -> None:
    """Write a table as Parquet: the time series (:class:`_TidySeries`) by the Rust writer,
    a DataFrame (transfers, events) with pyarrow."""
    if isinstance(table, _TidySeries):
        _core.write_timeseries(table.flow, table.queue, os.fspath(path))
        return
    table.to_parquet(path, index=False, engine="pyarrow")


def _link_or_copy(source: Path, target: Path) -> None:
    """Hard-link ``source`` as ``target``, or copy it where links are not possible."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def _write_summary(result: RunResult, path: Path) -> None:
    document = _json_safe(
        {
            "summary": result.summary,
            "aggregate": result.aggregate(),
            "scenario": result.scenario,
        }
    )
    text = json.dumps(document, indent=2, allow_nan=False, ensure_ascii=False)
    path.write_text(text + "\n", encoding="utf-8")


def _write_timeseries(result: RunResult, path: Path) -> None:
    data = result._streamed()
    if data is None:
        _write_parquet(_TidySeries(*result._series_tables()), path)
        return
    # Series on disk (past _series.SPILL_BYTES): written chunk by chunk with pyarrow.
    metrics = _metrics(list(data.flow.columns), list(data.queue.columns))
    _write_chunks(
        (_tidy(f, q, metrics) for f, q in zip(data.flow.frames(), data.queue.frames(), strict=True)),
        path,
        empty=lambda: result.timeseries(),
    )


def _write_events(result: RunResult, path: Path) -> bool:
    """Write the event trace, if the run traced events; whether it did."""
    data = result._streamed()
    if data is None or data.events is None or result._events is not None:
        if result.events is None:
            return False
        _write_parquet(result.events, path)
        return True
    write_events_parquet(data.events.frames(), data.event_codes, path)
    return True


def write_events_parquet(
    chunks: Iterable[pd.DataFrame], codes: Mapping[str, Sequence[str]], path: str | os.PathLike[str]
) -> None:
    """Write an event trace given chunk by chunk as ``events.parquet`` (docs/traces.md).

    Parameters
    ----------
    chunks : iterable of pandas.DataFrame
        The trace in time order, in the core's integer columns: ``time_ns``, ``kind``,
        ``flow``, ``link``, ``packet``, ``seq``, ``size``, ``retx``, ``acked``, ``reason``.
    codes : mapping of str to sequence of str
        Names of the codes of the ``kind``, ``packet`` and ``reason`` columns, in code order.
    path : path-like
        The Parquet file, written a row group or more per chunk, with the schema of the
        simulator's event trace (an empty trace has it too).
    """
    import numpy as np
    import pandas as pd

    empty = pd.DataFrame({name: np.empty(0, dtype="int64") for name in _EVENT_COLUMNS[1:]})
    _write_chunks(
        (_events_frame(chunk, codes) for chunk in chunks),
        Path(path),
        empty=lambda: _events_frame(empty, codes),
    )


def _write_chunks(frames: Any, path: Path, *, empty: Any) -> None:
    """Write DataFrames of one schema as one Parquet file, a row group or more each."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer = None
    try:
        for frame in frames:
            if frame.empty:
                continue
            table = pa.Table.from_pandas(frame, preserve_index=False)
            if writer is None:
                writer = pq.ParquetWriter(str(path), table.schema)
            writer.write_table(table.cast(writer.schema))
    finally:
        if writer is not None:
            writer.close()
    if writer is None:
        empty().to_parquet(path, index=False, engine="pyarrow")


def _metrics(flow_columns: list[str], queue_columns: list[str]) -> list[str]:
    """The metric columns of the tidy time series: the flow series', then the queue series'."""
    metrics: list[str] = []
    for columns, id_column in ((flow_columns, "flow"), (queue_columns, "queue")):
        metrics += [c for c in columns if c not in ("time_s", id_column, *metrics)]
    return metrics


def _tidy(flow_series: pd.DataFrame, queue_series: pd.DataFrame, metrics: list[str]) -> pd.DataFrame:
    """Flow and queue series in one table (see :meth:`RunResult.timeseries`)."""
    import numpy as np
    import pandas as pd

    parts = [("flow", flow_series, "flow"), ("queue", queue_series, "queue")]

    def column(frame: pd.DataFrame, name: str, dtype: str) -> np.ndarray:
        if name in frame:
            return frame[name].to_numpy(dtype=dtype, na_value=np.nan)
        return np.full(len(frame), np.nan, dtype=dtype)

    time_s = np.concatenate([column(f, "time_s", "float64") for _, f, _ in parts])
    kind = np.concatenate([np.full(len(f), k, dtype=object) for k, f, _ in parts])
    ids = np.concatenate(
        [f[c].to_numpy(dtype="int64") if len(f) else np.empty(0, "int64") for _, f, c in parts]
    )
    kind_code = np.concatenate([np.full(len(f), i) for i, (_, f, _) in enumerate(parts)])
    order = np.lexsort((ids, kind_code, time_s))
    data: dict[str, Any] = {"time_s": time_s[order], "kind": kind[order], "id": ids[order]}
    for name in metrics:
        data[name] = np.concatenate([column(f, name, "float64") for _, f, _ in parts])[order]
    table = pd.DataFrame(data)
    return table.astype({"kind": "str"})


def _write_plot(result: RunResult, path: Path) -> None:
    result.plot(path)


def _write_report(result: RunResult, path: Path) -> None:
    from .report import render_report

    path.write_text(render_report(result, plot="plot.png"), encoding="utf-8")
