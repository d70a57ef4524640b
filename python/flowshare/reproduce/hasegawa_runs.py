"""What the chapters of the Hasegawa (2000) reproduction share: the chapter interface, the TCP
settings of the thesis, reading a run of the store, and small measures.

G. Hasegawa, *Congestion and Fairness Control Mechanisms of TCP for the High-Speed Internet*,
PhD thesis, Osaka University, 2000. The study driver is :mod:`flowshare.reproduce.hasegawa`;
each chapter is one module (``hasegawa_ch2``, ``hasegawa_ch3``, ``hasegawa_ch6``) with the
interface :class:`Chapter` describes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd

from .._core import ConfigError
from .report import Section
from .targets import Target

__all__ = ["SERIES_PREFIX", "Chapter", "check_choice", "check_positive", "jain", "read_series",
           "thesis_tcp"]

SERIES_PREFIX = "series_"
"""Columns of a measured row that hold arrays for the figures; ``runs.csv`` leaves them out."""


class Chapter(Protocol):
    """The interface of a chapter module (``hasegawa_chN``).

    ``KEY`` ("ch2"), ``NUMBER`` (2) and ``TITLE`` name it; ``Options`` is a frozen dataclass of
    the chapter's choices (its defaults the documented resolutions); ``points(scale)`` lists the
    simulated conditions (hashable dataclasses with a ``label``), ``scenario(point, options)``
    gives the flowshare scenario of one, ``measure(run_dir, point, options)`` one row of
    measures; ``targets()`` lists the chapter's targets unevaluated, ``evaluate(rows)``
    evaluates them on the chapter's rows, ``sections(rows)`` gives the report sections and
    ``intro(scale, options)`` one paragraph for the report's opening.
    """

    KEY: str
    NUMBER: int
    TITLE: str
    Options: Any

    def points(self, scale: str) -> Sequence[Any]: ...

    def scenario(self, point: Any, options: Any) -> dict[str, Any]: ...

    def measure(self, run_dir: Path, point: Any, options: Any) -> dict[str, Any]: ...

    def targets(self) -> list[Target]: ...

    def evaluate(self, rows: pd.DataFrame) -> list[Target]: ...

    def sections(self, rows: pd.DataFrame) -> list[Section]: ...

    def intro(self, scale: str, options: Any) -> str: ...


def thesis_tcp(*, mss_b: int, header_b: int = 40, rwnd: int, recovery: str = "reno",
               cc: Any = "reno", **extra: Any) -> dict[str, Any]:
    """TCP options of every simulated chapter (resolution ``hasegawa:A8``): one ACK per packet,
    fine-grained timers without a floor worth the name (1 µs tick, 1 µs minimum RTO), an
    initial window of one packet (the slow start of Eq 1.1 starts from cwnd = 1)."""
    tcp: dict[str, Any] = {
        "recovery": recovery, "cc": cc, "mss": f"{mss_b}B", "header": f"{header_b}B",
        "ack_size": "40B", "rwnd": rwnd, "initial_window": 1, "delayed_ack": False,
        "rto_min": "1us", "timer_tick": "1us",
    }
    tcp.update(extra)
    return tcp


def read_series(run_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The flow and queue time series of a stored run (``kind`` = flow / queue, ``id``)."""
    series = pd.read_parquet(run_dir / "timeseries.parquet")
    kind = series["kind"].astype(str)
    return series[kind == "flow"], series[kind == "queue"]


def jain(values: Sequence[float] | np.ndarray) -> float:
    """Jain's fairness index (Σx)² / (n·Σx²) of ``values``; NaN for none or all zero."""
    x = np.asarray(values, dtype=float)
    if x.size == 0 or not np.all(np.isfinite(x)) or not np.any(x):
        return math.nan
    return float(x.sum() ** 2 / (x.size * np.sum(x * x)))


def check_positive(where: str, value: Any) -> None:
    """Raise a one-line :class:`ConfigError` unless ``value`` is a number > 0."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ConfigError(f"{where}: expected a number > 0, got {value!r}")


def check_choice(where: str, value: Any, allowed: Sequence[str]) -> None:
    """Raise a one-line :class:`ConfigError` unless ``value`` is one of ``allowed``."""
    if value not in allowed:
        raise ConfigError(f"{where}: expected one of {', '.join(allowed)}, got {value!r}")


def pyplot() -> Any:
    """matplotlib's pyplot with the Agg backend (figures are only ever written to PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
