"""The run store of a sweep: one directory holding the sweep, a catalog and every run's results.

Layout (``docs/sweeps.md``; the report reads it)::

    DIR/sweep.toml         the sweep file as given (sweep.source.json for a JSON file or a mapping)
    DIR/sweep.json         the normalized sweep
    DIR/catalog.parquet    one row per run: status, seed, timings, error, parameter values
    DIR/responses.parquet  one row per done run: parameter values and responses
    DIR/runs/<run_id>/     the run's result files and run.json

Only the process driving the sweep writes here. Every file is written to a temporary name
and renamed, and a run's directory is staged and renamed whole, so a kill at any instant
leaves complete files. A run's directory holds ``run.json`` with its responses, which makes
the directory itself the record that the run is done: resuming trusts the directories over a
catalog that may be up to a second stale.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._core import ConfigError
from .._files import atomic_directory, interrupts_deferred
from .sweep import Run, Sweep

__all__ = ["CATALOG_COLUMNS", "RunStore", "StoreError"]

CATALOG_COLUMNS = (
    "run_id", "arm", "replication", "seed", "scenario_hash", "version", "status",
    "started_at", "wall_s", "error",
)
RUN_RECORD = "run.json"
TEMPORARY_MARK = ".tmp-"
"""``.catalog.parquet.tmp-<pid>``: a table being written, renamed into place when complete."""
FLUSH_INTERVAL_S = 1.0
"""The catalog and responses files are rewritten at most this often while runs complete (and
always at the end)."""


class StoreError(ConfigError):
    """The output directory cannot hold this sweep (exists, differs, is not a store)."""


PYTHON_NAMES = {
    "out": "out", "resume": "resume=True", "workers": "workers", "dask": "dask",
    "sweep": "sweep",
}
"""How errors name the arguments of :func:`flowshare.study.run_sweep`."""
CLI_NAMES = {
    "out": "--out", "resume": "--resume", "workers": "--workers", "dask": "--dask",
    "sweep": "sweep file",
}
"""How errors name the options of ``flowshare sweep``."""


class RunStore:
    """A sweep's run store. Open it with :meth:`open`."""

    def __init__(self, out: Path, sweep: Sweep, runs: Sequence[Run]) -> None:
        self.out = out
        self.sweep = sweep
        self.runs = {run.run_id: run for run in runs}
        self.order = [run.run_id for run in runs]
        self.rows: dict[str, dict[str, Any]] = {
            run.run_id: {
                "status": "pending", "version": None, "started_at": None,
                "wall_s": None, "error": None,
            }
            for run in runs
        }
        self.responses: dict[str, dict[str, float]] = {}
        self._last_flush = 0.0
        self._dirty = False
        self.created: list[Path] = []
        """Directories this store created (the store, then missing parents, innermost first)
        when it started a new sweep; :meth:`discard` removes them."""
        self.emptied = False
        """Whether the store was created inside an existing empty directory."""
        self.recorded = 0
        """Runs recorded (done or failed) since the store was opened."""

    # -- opening ----------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        out: str | os.PathLike[str],
        sweep: Sweep,
        runs: Sequence[Run],
        *,
        resume: bool,
        names: Mapping[str, str] = PYTHON_NAMES,
    ) -> RunStore:
        """Create the store in ``out``, or with ``resume`` reopen the one there.

        ``names`` says how errors name the arguments (:data:`PYTHON_NAMES`, or
        :data:`CLI_NAMES` for the command line).

        Raises
        ------
        StoreError
            If ``out`` holds a sweep and ``resume`` is false, holds a different sweep, or is a
            non-empty directory that is not a run store.
        """
        out = Path(out)
        store = cls(out, sweep, runs)
        if out.exists() and not out.is_dir():
            raise StoreError(f"{out}: exists and is not a directory; choose another {names['out']}")
        has_sweep = (out / "sweep.json").is_file()
        if has_sweep:
            if not resume:
                raise StoreError(
                    f"{out}: holds a sweep already; pass {names['resume']} to continue it, or "
                    f"choose another {names['out']}"
                )
            store._reopen(names)
        elif out.is_dir() and any(out.iterdir()):
            raise StoreError(
                f"{out}: exists and is not a run store (no sweep.json); choose another "
                f"{names['out']}"
            )
        else:
            store.emptied = out.is_dir()
            if not store.emptied:
                probe = out.absolute()
                while not probe.exists():
                    store.created.append(probe)
                    probe = probe.parent
            store._create()
        return store

    def discard(self) -> None:
        """Undo :meth:`open` of a new sweep: remove the store and the directories created for
        it, or empty the existing empty directory it was created in. A resumed store is left
        alone."""
        with interrupts_deferred():
            if self.emptied:
                for entry in self.out.iterdir():
                    if entry.is_dir() and not entry.is_symlink():
                        shutil.rmtree(entry, ignore_errors=True)
                    else:
                        entry.unlink(missing_ok=True)
                return
            for i, directory in enumerate(self.created):
                if i == 0:
                    shutil.rmtree(directory, ignore_errors=True)
                else:
                    try:
                        directory.rmdir()
                    except OSError:  # something else was put there meanwhile
                        break

    def _create(self) -> None:
        source = "sweep.toml" if self.sweep.source_suffix == ".toml" else "sweep.source.json"
        with atomic_directory(self.out) as stage:
            (stage / source).write_text(self.sweep.source_text, encoding="utf-8")
            _write_json(stage / "sweep.json", self.sweep.to_json())
            (stage / "runs").mkdir()
            self._write_tables(stage)

    def _reopen(self, names: Mapping[str, str]) -> None:
        stored = json.loads((self.out / "sweep.json").read_text(encoding="utf-8"))
        current = self.sweep.to_json()
        for key in current:
            if key != "version" and stored.get(key) != current[key]:
                raise StoreError(
                    f"{self.out}: holds a different sweep (different {key}); resume it with the "
                    f"same {names['sweep']}, or choose another {names['out']}"
                )
        runs_dir = self.out / "runs"
        runs_dir.mkdir(exist_ok=True)
        # Staging directories of runs, and temporary tables, that were being written when the
        # sweep was killed (SIGKILL; other signals let the sweep remove them).
        for entry in runs_dir.iterdir():
            if entry.name.startswith(".") and ".partial-" in entry.name:
                shutil.rmtree(entry, ignore_errors=True)
        for name in ("catalog.parquet", "responses.parquet"):
            for entry in self.out.glob(f".{name}{TEMPORARY_MARK}*"):
                entry.unlink(missing_ok=True)
        catalog_path = self.out / "catalog.parquet"
        previous: dict[str, dict[str, Any]] = {}
        if catalog_path.is_file():
            for row in pd.read_parquet(catalog_path).to_dict("records"):
                previous[row["run_id"]] = row
        for run_id in self.order:
            record_path = runs_dir / run_id / RUN_RECORD
            if record_path.is_file():
                record = json.loads(record_path.read_text(encoding="utf-8"))
                self.rows[run_id] = {
                    "status": "done",
                    "version": record.get("version"),
                    "started_at": record.get("started_at"),
                    "wall_s": record.get("wall_s"),
                    "error": None,
                }
                self.responses[run_id] = {
                    k: _float(v) for k, v in record.get("responses", {}).items()
                }
            elif previous.get(run_id, {}).get("status") == "failed":
                old = previous[run_id]
                self.rows[run_id] = {
                    "status": "failed",
                    "version": _none(old.get("version")),
                    "started_at": _none(old.get("started_at")),
                    "wall_s": _none(old.get("wall_s")),
                    "error": _none(old.get("error")),
                }
        self._write_tables(self.out)

    # -- queries ----------------------------------------------------------------------------

    def to_run(self) -> list[Run]:
        """Runs not done yet (pending or failed), in catalog order."""
        return [self.runs[r] for r in self.order if self.rows[r]["status"] != "done"]

    def counts(self) -> dict[str, int]:
        counts = {"done": 0, "failed": 0, "pending": 0}
        for row in self.rows.values():
            counts[row["status"]] += 1
        return counts

    def catalog(self) -> pd.DataFrame:
        """The catalog as a DataFrame (what ``catalog.parquet`` holds)."""
        records = []
        for run_id in self.order:
            run = self.runs[run_id]
            row = self.rows[run_id]
            records.append(
                {
                    "run_id": run_id,
                    "arm": run.arm,
                    "replication": run.replication,
                    "seed": run.seed,
                    "scenario_hash": run.scenario_hash,
                    "version": row["version"],
                    "status": row["status"],
                    "started_at": row["started_at"],
                    "wall_s": row["wall_s"],
                    "error": row["error"],
                }
            )
        frame = pd.DataFrame.from_records(records, columns=list(CATALOG_COLUMNS))
        frame = frame.astype(
            {
                "run_id": "str", "arm": "int64", "replication": "int64", "seed": "int64",
                "scenario_hash": "str", "status": "str", "wall_s": "float64",
            }
        )
        for column in ("version", "started_at", "error"):
            frame[column] = pd.array(frame[column].tolist(), dtype="string")
        return self._with_parameters(frame)

    def response_table(self) -> pd.DataFrame:
        """One row per done run: run_id, arm, replication, seed, parameters, responses."""
        done = [r for r in self.order if self.rows[r]["status"] == "done"]
        frame = pd.DataFrame(
            {
                "run_id": pd.Series([r for r in done], dtype="str"),
                "arm": np.array([self.runs[r].arm for r in done], dtype="int64"),
                "replication": np.array([self.runs[r].replication for r in done], dtype="int64"),
                "seed": np.array([self.runs[r].seed for r in done], dtype="int64"),
            }
        )
        frame = self._with_parameters(frame)
        for name in self.sweep.response_names:
            frame[name] = np.array(
                [self.responses[r].get(name, np.nan) for r in done], dtype="float64"
            )
        return frame

    def _with_parameters(self, frame: pd.DataFrame) -> pd.DataFrame:
        arms = frame["arm"].to_numpy()
        for path in self.sweep.parameters:
            column = _parameter_column([arm[path] for arm in self.sweep.arms])
            frame[path] = column[arms] if len(arms) else column[:0]
        return frame

    # -- recording --------------------------------------------------------------------------

    def record(self, outcome: Mapping[str, Any]) -> None:
        """Record a finished run (``ok`` or not) and, for a done run, write its directory."""
        run = self.runs[outcome["run_id"]]
        if outcome["ok"]:
            record = {
                "run_id": run.run_id,
                "arm": run.arm,
                "replication": run.replication,
                "seed": run.seed,
                "scenario_hash": run.scenario_hash,
                "version": outcome["version"],
                "started_at": outcome["started_at"],
                "wall_s": outcome["wall_s"],
                "responses": {k: _json_float(v) for k, v in outcome["responses"].items()},
            }
            target = self.out / "runs" / run.run_id
            if target.exists():
                # Written by an earlier attempt that the catalog had not caught up with.
                shutil.rmtree(target)
            with atomic_directory(target) as stage:
                for name, data in outcome["files"].items():
                    (stage / name).write_bytes(data)
                _write_json(stage / RUN_RECORD, record)
            self.responses[run.run_id] = {k: _float(v) for k, v in outcome["responses"].items()}
            status, error = "done", None
        else:
            status, error = "failed", outcome["error"]
        self.rows[run.run_id] = {
            "status": status,
            "version": outcome["version"],
            "started_at": outcome["started_at"],
            "wall_s": outcome["wall_s"],
            "error": error,
        }
        self._dirty = True
        self.recorded += 1
        if time.monotonic() - self._last_flush >= FLUSH_INTERVAL_S:
            self.flush()

    def flush(self) -> None:
        """Rewrite ``catalog.parquet`` and ``responses.parquet`` if anything changed."""
        if self._dirty:
            self._write_tables(self.out)

    def _write_tables(self, directory: Path) -> None:
        _write_parquet(self.catalog(), directory / "catalog.parquet")
        _write_parquet(self.response_table(), directory / "responses.parquet")
        self._dirty = False
        self._last_flush = time.monotonic()


def _parameter_column(values: Sequence[Any]) -> np.ndarray:
    """A parameter's values as one column type: bool, int64, float64 or str; values of mixed
    or structured types become their JSON text."""
    kinds = {type(v) for v in values}
    if kinds == {bool}:
        return np.array(values, dtype=bool)
    if kinds == {int}:
        return np.array(values, dtype="int64")
    if kinds <= {int, float}:
        return np.array(values, dtype="float64")
    if kinds == {str}:
        return np.array(values, dtype=object)
    return np.array([json.dumps(v, sort_keys=True) for v in values], dtype=object)


def _write_parquet(frame: pd.DataFrame, path: Path) -> None:
    temporary = path.with_name(f".{path.name}{TEMPORARY_MARK}{os.getpid()}")
    try:
        frame.to_parquet(temporary, index=False, engine="pyarrow")
        os.replace(temporary, path)
    finally:
        with interrupts_deferred():  # a second Ctrl-C does not leave the temporary file
            temporary.unlink(missing_ok=True)


def _write_json(path: Path, document: Any) -> None:
    text = json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False)
    path.write_text(text + "\n", encoding="utf-8")


def _float(value: Any) -> float:
    return float("nan") if value is None else float(value)


def _json_float(value: Any) -> float | None:
    """``None`` for a missing or non-finite value (JSON has no NaN)."""
    if value is None:
        return None
    value = float(value)
    return value if np.isfinite(value) else None


def _none(value: Any) -> Any:
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and np.isnan(value):
        return None
    return value
