"""Reproduction of the simulations of Hasegawa (2000), one module per chapter.

G. Hasegawa, *Congestion and Fairness Control Mechanisms of TCP for the High-Speed Internet*,
PhD thesis, Osaka University, 2000. This driver runs the chapters in :data:`CHAPTERS` as one
sweep and concatenates their measured rows, targets and report sections:

- chapter 2 (:mod:`.hasegawa_ch2`): two Tahoe, Reno, Vegas or Enhanced Vegas connections
  sharing a bottleneck (Figs 2.3-2.8);
- chapter 3 (:mod:`.hasegawa_ch3`): mis-retransmission, Experiments 1 and 2, the extra delay D
  and the detection mechanism (Figs 3.1-3.5, 3.9-3.11);
- chapter 4 (:mod:`.hasegawa_ch4`): TCP over ATM, UBR, EPD, EPD/A and ABR with binary rate
  control, single hop and multihop (Figs 4.2-4.28);
- chapter 5 (:mod:`.hasegawa_ch5`): Tahoe and Vegas, HTTP/1.0 and 1.1 clients over an
  asymmetric link (Figs 5.3-5.7);
- chapter 6 (:mod:`.hasegawa_ch6`): FIFO, RED, enhanced RED, DRR and DRR+ with Reno and Vegas
  for proportional fairness, and reverse traffic (Figs 6.4-6.23).

A chapter module (interface: :class:`flowshare.reproduce.hasegawa_runs.Chapter`) is added by
naming it in :data:`CHAPTERS`.

Each chapter's choices where the thesis is open are the fields of its ``Options``; the study's
:class:`Options` holds one per chapter (``Options(ch3=hasegawa_ch3.Options(er_delay="instant"))``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, make_dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from .._core import ConfigError
from . import hasegawa_ch2, hasegawa_ch3, hasegawa_ch4, hasegawa_ch5, hasegawa_ch6
from .hasegawa_runs import SERIES_PREFIX
from .report import Section
from .targets import Target, check_unique

__all__ = ["CHAPTERS", "KEY", "OPTIONS", "SCALES", "Options", "Plan", "evaluate",
           "intro", "plan", "rows_from_store", "sections", "sweep_document", "targets",
           "write_rows"]

KEY = "hasegawa"
TITLE = ("Hasegawa (2000): congestion and fairness control mechanisms of TCP — simulations of "
         "chapters 2 to 6")
SCALES = ("full", "quick", "tiny")
"""``full``: the thesis's run lengths and sweeps; ``quick``: fewer points and shorter runs
(``docs/reproduce.md`` gives the measured wall times); ``tiny``: a few seconds, for tests."""

CHAPTERS: tuple[Any, ...] = (hasegawa_ch2, hasegawa_ch3, hasegawa_ch4, hasegawa_ch5, hasegawa_ch6)
"""The simulated chapters, in the thesis's order; adding one is adding its module here."""


def _options_post_init(self: Any) -> None:
    for chapter in CHAPTERS:
        value = getattr(self, chapter.KEY)
        if not isinstance(value, chapter.Options):
            raise ConfigError(f"options.{chapter.KEY}: expected a {chapter.__name__}.Options, "
                              f"got {value!r}")


Options: Any = make_dataclass(
    "Options",
    [(c.KEY, c.Options, field(default_factory=c.Options)) for c in CHAPTERS],
    frozen=True,
    namespace={"__post_init__": _options_post_init,
               "__doc__": "The choices of every chapter (each chapter module's ``Options``)."},
)
Options.__module__ = __name__
OPTIONS = Options()


@dataclass(frozen=True)
class Plan:
    """The runs of one scale: (chapter key, point) in sweep-arm order."""

    scale: str
    arms: tuple[tuple[str, Any], ...]


def _chapter(key: str) -> Any:
    for chapter in CHAPTERS:
        if chapter.KEY == key:
            return chapter
    raise KeyError(key)


def plan(scale: str) -> Plan:
    """Every chapter's points at ``scale`` (one of :data:`SCALES`)."""
    if scale not in SCALES:
        raise ConfigError(f"scale: expected one of {', '.join(SCALES)}, got {scale!r}")
    return Plan(scale, tuple((c.KEY, p) for c in CHAPTERS for p in c.points(scale)))


SWEPT = ("simulation.duration", "simulation.sample_interval", "simulation.warmup", "topology",
         "flows", "trace", "changes")
"""The scenario keys every arm sets (every chapter's scenario has them all)."""


def sweep_document(p: Plan, options: Any = OPTIONS) -> dict[str, Any]:
    """One arm per (chapter, point), each with its own seed."""
    scenarios = [_chapter(key).scenario(point, getattr(options, key)) for key, point in p.arms]

    def value(s: dict[str, Any], key: str) -> Any:
        for part in key.split("."):
            s = s[part]
        return s

    return {
        "base": scenarios[0],
        "replications": 1,
        "root_seed": 2000,
        # Every run its own random numbers: the repeated runs of chapter 2 differ by seed.
        "common_random_numbers": False,
        "points": [{key: value(s, key) for key in SWEPT} for s in scenarios],
    }


def rows_from_store(store: Path, p: Plan, options: Any = OPTIONS) -> pd.DataFrame:
    """One measured row per finished run (column ``chapter`` says whose)."""
    catalog = pd.read_parquet(store / "catalog.parquet")
    out = []
    for _, run in catalog.sort_values("arm").iterrows():
        if run["status"] != "done":
            continue
        key, point = p.arms[int(run["arm"])]
        row = _chapter(key).measure(store / "runs" / str(run["run_id"]), point,
                                    getattr(options, key))
        row["chapter"] = key
        row["run_id"] = str(run["run_id"])
        out.append(row)
    return pd.DataFrame(out)


def _rows_of(rows: pd.DataFrame, key: str) -> pd.DataFrame:
    if rows.empty or "chapter" not in rows:
        return pd.DataFrame()
    return rows[rows["chapter"] == key].dropna(axis=1, how="all")


def targets() -> list[Target]:
    """Every target of the study, unevaluated, chapter by chapter."""
    return [t for c in CHAPTERS for t in c.targets()]


def evaluate(rows: pd.DataFrame) -> list[Target]:
    """Every target, evaluated on its chapter's rows."""
    out = [t for c in CHAPTERS for t in c.evaluate(_rows_of(rows, c.KEY))]
    check_unique(out)
    return out


def sections(rows: pd.DataFrame) -> list[Section]:
    """The chapters' sections in order."""
    return [s for c in CHAPTERS for s in c.sections(_rows_of(rows, c.KEY))]


def intro(scale: str, options: Any = OPTIONS) -> list[str]:
    """The report's opening paragraphs."""
    return [
        "G. Hasegawa, Congestion and Fairness Control Mechanisms of TCP for the High-Speed "
        "Internet, PhD thesis, Osaka University, 2000.",
        f"Scale: {scale}. Every number below comes from the runs of this reproduction; a target "
        "that is not met says why in its note.",
        *[c.intro(scale, getattr(options, c.KEY)) for c in CHAPTERS],
        "Choices: " + json.dumps(asdict(options)),
    ]


def write_rows(rows: pd.DataFrame, path: Path) -> None:
    """The measured runs as CSV (``runs.csv``), without the figures' series."""
    keep = [c for c in rows.columns if not str(c).startswith(SERIES_PREFIX)]
    rows[keep].to_csv(path, index=False, float_format="%.6g")
