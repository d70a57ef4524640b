"""Results of one run: pandas tables, aggregate figures and the files written to disk."""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ._files import atomic_directory
from ._series import RunData
from .metrics import jain_index
from .report import render_report

__all__ = [
    "EVENTS_FILE",
    "OUTPUT_FILES",
    "TRANSFERS_FILE",
    "RunResult",
    "events_to_frame",
    "table_to_frame",
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

REPORT_FILE = "report.md"

# Columns of the tables a result may lack (results built by hand, or by an older core).
DELAY_COLUMNS = {"flow": "int64", "bin_lo_s": "float64", "bin_hi_s": "float64", "count": "int64"}
FCT_COLUMNS = {
    "group": "int64",
    "name": "object",
    "size_bucket": "object",
    "size_min_bytes": "int64",
    "size_max_bytes": "int64",
    "transfers": "int64",
    "unfinished": "int64",
    "fct_mean_s": "float64",
    "fct_min_s": "float64",
    "fct_p50_s": "float64",
    "fct_p90_s": "float64",
    "fct_p99_s": "float64",
    "fct_max_s": "float64",
}

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
        Run facts from the core: ``duration_s``, ``warmup_s`` (the steady-state figures
        count from here, ``docs/measurements.md``), ``seed``, ``events``, ``wall_s``,
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
        ``packets_sent``, ``retransmits``, ``timeouts``, ``drops``. Empty without arrivals.
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
        flows: pd.DataFrame,
        queues: pd.DataFrame,
        flow_series: pd.DataFrame | None = None,
        queue_series: pd.DataFrame | None = None,
        transfers: pd.DataFrame | None = None,
        delays: pd.DataFrame | None = None,
        fct: pd.DataFrame | None = None,
        events: pd.DataFrame | None = None,
        pcap_files: Sequence[str | os.PathLike[str]] = (),
        data: RunData | None = None,
    ) -> None:
        self.summary = summary
        self.scenario = scenario
        self.flows = flows
        self.queues = queues
        self.transfers = pd.DataFrame() if transfers is None else transfers
        self.delays = _empty(DELAY_COLUMNS) if delays is None else delays
        self.fct = _empty(FCT_COLUMNS) if fct is None else fct
        self.pcap_files = [Path(p) for p in pcap_files]
        # The series and the trace are read from `data` (in chunks, perhaps on disk) when
        # first asked for; frames given here take precedence.
        self._data = data
        self._flow_series = flow_series
        self._queue_series = queue_series
        self._events = events
        if data is None and (flow_series is None or queue_series is None):
            raise TypeError("RunResult: give flow_series and queue_series, or data")

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
            (empty tables when absent).
        scenario : dict
            The normalized scenario that was run.
        data : RunData, optional
            The time series and events taken from the core while the run went on, the last
            chunk (``raw``'s) included; by default they are ``raw``'s.
        """
        if data is None:
            data = RunData(events=raw.get("events") is not None)
            data.add(raw, raw.get("events"))
            data.event_codes = {k: list(v) for k, v in raw.get("event_codes", {}).items()}
        frames = {key: table_to_frame(raw[key], name=key) for key in ("flows", "queues")}
        for key in ("delays", "fct"):
            if raw.get(key) is not None:
                frames[key] = table_to_frame(raw[key], name=key)
        pcap = [entry["path"] for entry in raw.get("pcap", ())]
        return cls(
            summary=dict(raw["summary"]),
            scenario=scenario,
            transfers=_transfers_frame(raw.get("transfers")),
            pcap_files=pcap,
            data=data,
            **frames,
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
        flows, queues = self.flows, self.queues
        goodput: np.ndarray = (
            flows["goodput_bps"].to_numpy(dtype=float) if "goodput_bps" in flows else np.empty(0)
        )
        active = goodput[~np.isnan(goodput)]
        duration = self.summary.get("duration_s")
        steady = float(duration or 0.0) - float(self.summary.get("warmup_s") or 0.0)
        if "steady_bytes_delivered" in flows and steady > 0:
            total = float(flows["steady_bytes_delivered"].sum()) * 8.0 / steady
        elif "bytes_delivered" in flows and duration:
            total = float(flows["bytes_delivered"].sum()) * 8.0 / float(duration)
        else:
            total = float(np.sum(goodput))
        figures: dict[str, Any] = _json_safe(
            {
                "flows": len(flows),
                "goodput_bps": total,
                "jain_index": jain_index(active) if len(active) else None,
                "drops": _column_sum(queues, "drops"),
                "retransmits": _column_sum(flows, "retransmits"),
                "timeouts": _column_sum(flows, "timeouts"),
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
        :meth:`aggregate`, and the normalized ``scenario``), ``plot.png`` (goodput and cwnd
        over time), ``transfers.parquet`` when the scenario has arrival processes,
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
        stage = Path(directory)
        names = list(OUTPUT_FILES)
        _write_csv(self.flows, stage / "flows.csv")
        _write_csv(self.queues, stage / "queues.csv")
        _write_csv(self.delays, stage / "delays.csv")
        _write_csv(self.fct, stage / "fct.csv")
        _write_timeseries(self, stage / "timeseries.parquet")
        _write_summary(self, stage / "summary.json")
        _write_plot(self, stage / "plot.png")
        if _has_arrivals(self.scenario):
            _write_parquet(self.transfers, stage / TRANSFERS_FILE)
            names.append(TRANSFERS_FILE)
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


def _transfers_frame(raw: Any) -> pd.DataFrame | None:
    """The per-transfer table from the core: one table, or the parts taken while the run went
    on; ``name`` becomes a categorical (one name per arrival group, many rows)."""
    if raw is None:
        return None
    parts = [raw] if isinstance(raw, Mapping) else list(raw)
    frames = [table_to_frame(p, name="transfers") for p in parts]
    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    if "name" in frame:
        frame["name"] = frame["name"].astype("category")
    return frame


def _empty(columns: Mapping[str, str]) -> pd.DataFrame:
    """An empty table with these columns and dtypes."""
    return pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in columns.items()})


def _has_arrivals(scenario: Mapping[str, Any]) -> bool:
    flows = scenario.get("flows")
    return isinstance(flows, list) and any(
        isinstance(g, Mapping) and g.get("arrivals") is not None for g in flows
    )


def _column_sum(frame: pd.DataFrame, column: str) -> int | None:
    if column not in frame:
        return None
    return int(frame[column].sum())


def _json_safe(value: Any) -> Any:
    """Plain JSON types; non-finite floats become ``None``."""
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# The writers are separate functions so that each step can fail on its own (tests rely on it).


def _write_csv(frame: pd.DataFrame, path: Path) -> None:
    frame.to_csv(path, index=False, lineterminator="\n")


def _write_parquet(frame: pd.DataFrame, path: Path) -> None:
    frame.to_parquet(path, index=False, engine="pyarrow")


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
        _write_parquet(result.timeseries(), path)
        return
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
    codes = data.event_codes
    _write_chunks(
        (_events_frame(f, codes) for f in data.events.frames()),
        path,
        empty=lambda: _events_frame(data.events.frame(), codes),  # type: ignore[union-attr]
    )
    return True


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
        _write_parquet(empty(), path)


def _metrics(flow_columns: list[str], queue_columns: list[str]) -> list[str]:
    """The metric columns of the tidy time series: the flow series', then the queue series'."""
    metrics: list[str] = []
    for columns, id_column in ((flow_columns, "flow"), (queue_columns, "queue")):
        metrics += [c for c in columns if c not in ("time_s", id_column, *metrics)]
    return metrics


def _tidy(flow_series: pd.DataFrame, queue_series: pd.DataFrame, metrics: list[str]) -> pd.DataFrame:
    """Flow and queue series in one table (see :meth:`RunResult.timeseries`)."""
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
    from .plots import RATE, save_figure, throughput_cwnd

    data = result._streamed()
    if data is None:
        series: Any = result.flow_series
    else:
        flow = data.flow

        class _Chunks:
            def __iter__(self) -> Any:
                return flow.frames(["time_s", "flow", RATE, "cwnd"])

        series = _Chunks()
    save_figure(throughput_cwnd(series, result.flows), path)


def _write_report(result: RunResult, path: Path) -> None:
    path.write_text(render_report(result, plot="plot.png"), encoding="utf-8")
