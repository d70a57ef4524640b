"""A run's time series and event trace, taken from the core slice by slice as the run goes.

They stay in memory while small; past a threshold every chunk is written to an Arrow IPC file
in a spill directory on disk, so a run's memory stays bounded however long it is, and the
files are written out (``timeseries.parquet``, ``events.parquet``) a chunk at a time. The
spill directory is removed when the result that owns it is garbage-collected or the process
exits.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

__all__ = ["SPILL_BYTES", "Chunks", "RunData"]

SPILL_BYTES = 256 * 2**20
"""Bytes of time series and traced events held in memory before they go to disk."""


class Chunks:
    """The chunks of one table, in time order. A column may first appear in a later chunk (an
    algorithm metric a later flow reports); earlier chunks read it as NaN, as the core's own
    table would."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.columns: dict[str, np.dtype[Any]] = {}
        self._chunks: list[dict[str, np.ndarray] | Path] = []
        self.rows = 0
        self.memory_bytes = 0

    def append(self, table: Mapping[str, Any]) -> None:
        """Add a chunk in the core's ``(dtype, bytes)`` column form."""
        chunk: dict[str, np.ndarray] = {}
        for key, column in table.items():
            if not (isinstance(column, tuple) and len(column) == 2):
                raise ValueError(f"{self.name}.{key}: expected a (dtype, bytes) column")
            values = np.frombuffer(column[1], dtype=np.dtype(column[0]))
            chunk[key] = values
            self.columns.setdefault(key, values.dtype)
        rows = {len(v) for v in chunk.values()}
        if len(rows) > 1:
            raise ValueError(f"{self.name}: columns differ in length")
        self.rows += rows.pop() if rows else 0
        self.memory_bytes += sum(v.nbytes for v in chunk.values())
        self._chunks.append(chunk)

    @property
    def spilled(self) -> bool:
        """Whether any chunk is on disk."""
        return any(isinstance(c, Path) for c in self._chunks)

    def spill(self, directory: Path) -> None:
        """Write the chunks held in memory to Arrow IPC files in ``directory``."""
        for i, chunk in enumerate(self._chunks):
            if isinstance(chunk, Path):
                continue
            path = directory / f"{self.name}-{i:07d}.arrow"
            table = pa.table({k: pa.array(v) for k, v in chunk.items()})
            with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
                w.write_table(table)
            self._chunks[i] = path
        self.memory_bytes = 0

    def __len__(self) -> int:
        return len(self._chunks)

    def chunk(self, i: int, columns: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """Chunk ``i`` with ``columns`` (default: every column), missing ones as NaN."""
        names = list(self.columns) if columns is None else list(columns)
        held = self._chunks[i]
        if isinstance(held, Path):
            with pa.memory_map(str(held)) as source:
                table = pa.ipc.open_file(source).read_all()
            present = {n: table.column(n).to_numpy() for n in names if n in table.column_names}
            rows = table.num_rows
        else:
            present = {n: held[n] for n in names if n in held}
            rows = len(next(iter(held.values()))) if held else 0
        return {
            n: present[n] if n in present else np.full(rows, np.nan, dtype="float64")
            for n in names
        }

    def frames(self, columns: Sequence[str] | None = None) -> Iterator[pd.DataFrame]:
        """Each chunk as a DataFrame, in order."""
        for i in range(len(self._chunks)):
            yield pd.DataFrame(self.chunk(i, columns))

    def frame(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """The whole table (loaded into memory)."""
        names = list(self.columns) if columns is None else list(columns)
        parts = [self.chunk(i, names) for i in range(len(self._chunks))]
        if not parts:
            return pd.DataFrame({n: np.empty(0, dtype=self.columns.get(n, "float64")) for n in names})
        return pd.DataFrame({n: np.concatenate([p[n] for p in parts]) for n in names})


class RunData:
    """The time series (per flow and per queue) and the event trace of one run, in chunks
    taken from the core together, so that chunk ``i`` of each covers the same span of time."""

    def __init__(
        self,
        *,
        spill_dir: str | Path | None = None,
        spill_bytes: int | None = None,
        events: bool = False,
    ) -> None:
        self.flow = Chunks("flow_series")
        self.queue = Chunks("queue_series")
        self.events = Chunks("events") if events else None
        self.event_codes: dict[str, list[str]] = {}
        self._spill_parent = None if spill_dir is None else Path(spill_dir)
        self._spill_bytes = SPILL_BYTES if spill_bytes is None else spill_bytes
        self._directory: Path | None = None

    @property
    def tables(self) -> list[Chunks]:
        """The chunked tables."""
        return [t for t in (self.flow, self.queue, self.events) if t is not None]

    @property
    def spilled(self) -> bool:
        """Whether the chunks go to disk."""
        return self._directory is not None

    def add(self, series: Mapping[str, Any], events: Mapping[str, Any] | None) -> None:
        """Add what one ``take_series()`` and ``take_events()`` of the core returned."""
        self.flow.append(series["flow_series"])
        self.queue.append(series["queue_series"])
        if self.events is not None:
            self.events.append(events if events is not None else {})
        if self._directory is None and sum(t.memory_bytes for t in self.tables) > self._spill_bytes:
            self._directory = Path(
                tempfile.mkdtemp(prefix=".flowshare-spill-", dir=self._spill_parent)
            )
            weakref.finalize(self, shutil.rmtree, self._directory, ignore_errors=True)
        if self._directory is not None:
            for table in self.tables:
                table.spill(self._directory)
