"""A run's time series and event trace, taken from the core slice by slice as the run goes.

They stay in memory while small; past a threshold every chunk is written to an Arrow IPC file
in a spill directory on disk, so a run's memory stays bounded however long it is, and the
files are written out (``timeseries.parquet``, ``events.parquet``) a chunk at a time. The
spill directory is removed when the result that owns it is garbage-collected or the process
exits.

Chunks held in memory stay in the core's column form (``(dtype, bytes)`` pairs and lists of
text), which the Rust writers take as they are: numpy, pandas and pyarrow are imported only
when a chunk is read as arrays or spilled (docs/adr/0009-outputs-written-from-rust.md).
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = ["SPILL_BYTES", "Chunks", "RunData"]

SPILL_BYTES = 256 * 2**20
"""Bytes of time series and traced events held in memory before they go to disk."""


class Chunks:
    """The chunks of one table, in time order. A column may first appear in a later chunk (an
    algorithm metric a later flow reports); earlier chunks read it as NaN, as the core's own
    table would."""

    def __init__(self, name: str) -> None:
        self.name = name
        #: Column name to the numpy dtype string of its values, in order of first appearance.
        self.columns: dict[str, str] = {}
        self._chunks: list[dict[str, tuple[str, bytes]] | Path] = []
        self.rows = 0
        self.memory_bytes = 0

    def append(self, table: Mapping[str, Any]) -> None:
        """Add a chunk in the core's ``(dtype, bytes)`` column form (kept as it is)."""
        chunk: dict[str, tuple[str, bytes]] = {}
        lengths = set()
        for key, column in table.items():
            if not (isinstance(column, tuple) and len(column) == 2):
                raise ValueError(f"{self.name}.{key}: expected a (dtype, bytes) column")
            dtype, data = column
            width = _itemsize(dtype)
            if width is None or len(data) % width:
                raise ValueError(f"{self.name}.{key}: bad numeric column {dtype!r}")
            chunk[key] = (dtype, data)
            lengths.add(len(data) // width)
            self.columns.setdefault(key, dtype)
        if len(lengths) > 1:
            raise ValueError(f"{self.name}: columns differ in length")
        self.rows += lengths.pop() if lengths else 0
        self.memory_bytes += sum(len(c[1]) for c in chunk.values())
        self._chunks.append(chunk)

    def raw(self) -> list[dict[str, tuple[str, bytes]]] | None:
        """The chunks in the core's column form, or ``None`` when some are on disk."""
        if self.spilled:
            return None
        return [c for c in self._chunks if not isinstance(c, Path)]

    @property
    def spilled(self) -> bool:
        """Whether any chunk is on disk."""
        return any(isinstance(c, Path) for c in self._chunks)

    def spill(self, directory: Path) -> None:
        """Write the chunks held in memory to Arrow IPC files in ``directory``."""
        import numpy as np
        import pyarrow as pa

        for i, chunk in enumerate(self._chunks):
            if isinstance(chunk, Path):
                continue
            path = directory / f"{self.name}-{i:07d}.arrow"
            arrays = {k: np.frombuffer(d, dtype=np.dtype(t)) for k, (t, d) in chunk.items()}
            table = pa.table({k: pa.array(v) for k, v in arrays.items()})
            with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
                w.write_table(table)
            self._chunks[i] = path
        self.memory_bytes = 0

    def __len__(self) -> int:
        return len(self._chunks)

    def chunk(self, i: int, columns: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """Chunk ``i`` with ``columns`` (default: every column), missing ones as NaN."""
        import numpy as np
        import pyarrow as pa

        names = list(self.columns) if columns is None else list(columns)
        held = self._chunks[i]
        if isinstance(held, Path):
            with pa.memory_map(str(held)) as source:
                table = pa.ipc.open_file(source).read_all()
            present = {n: table.column(n).to_numpy() for n in names if n in table.column_names}
            rows = table.num_rows
        else:
            present = {
                n: np.frombuffer(held[n][1], dtype=np.dtype(held[n][0])) for n in names if n in held
            }
            rows = len(next(iter(present.values()))) if present else _rows(held)
        return {
            n: present[n] if n in present else np.full(rows, np.nan, dtype="float64")
            for n in names
        }

    def frames(self, columns: Sequence[str] | None = None) -> Iterator[pd.DataFrame]:
        """Each chunk as a DataFrame, in order."""
        import pandas as pd

        for i in range(len(self._chunks)):
            yield pd.DataFrame(self.chunk(i, columns))

    def frame(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """The whole table (loaded into memory)."""
        import numpy as np
        import pandas as pd

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


def _itemsize(dtype: str) -> int | None:
    """Bytes per value of a numpy dtype string such as ``"<f8"`` (without importing numpy)."""
    digits = dtype.lstrip("<>=|").lstrip("fiub?")
    if dtype.endswith("?") or dtype.lstrip("<>=|") == "b1":
        return 1
    try:
        width = int(digits)
    except ValueError:
        return None
    return width if width > 0 else None


def _rows(chunk: Mapping[str, tuple[str, bytes]]) -> int:
    for dtype, data in chunk.values():
        width = _itemsize(dtype)
        return len(data) // width if width else 0
    return 0
