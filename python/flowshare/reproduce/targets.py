"""Numeric reproduction targets: a published value, a tolerance, and the measured value.

A study's targets are the numbers its text states (an error bound, a measured j, a throughput).
Each :class:`Target` says how a measurement is compared with the published value, so the pass or
fail of every row of ``targets.csv`` is computed here and nowhere else.

>>> t = Target("x", "an error bound", published=10.0, tolerance=0.0, comparison="at_most")
>>> t.evaluate(9.5).passed, t.evaluate(10.5).passed
(True, False)
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

__all__ = ["COLUMNS", "COMPARISONS", "Target", "check_unique", "counts", "read_targets", "write_targets"]

COLUMNS = ("id", "description", "published", "measured", "tolerance", "passed", "note")
"""The columns of ``targets.csv``, in order."""

COMPARISONS = ("close", "at_most", "at_least")
"""How a measured value meets the published one:

- ``close``: |measured − published| ≤ tolerance (a value the study reports);
- ``at_most``: measured ≤ published + tolerance (an upper bound the study states);
- ``at_least``: measured ≥ published − tolerance (a lower bound the study states).
"""

TOLERANCE_KINDS = ("absolute", "relative", "factor")
"""A tolerance in the unit of the value, as a fraction of |published|, or as a factor (``close``
only: published / tolerance ≤ measured ≤ published · tolerance, for counts that span decades)."""


@dataclass(frozen=True)
class Target:
    """One numeric target of a study and, once evaluated, its measured value.

    Attributes
    ----------
    id : str
        Stable identifier (``A.S1.30ms.max_error``).
    description : str
        What is compared, with the unit.
    published : float
        The study's value (``NaN`` for a statement without a number, never used here).
    tolerance : float
        The allowed difference, >= 0; ``tolerance_kind`` says in which unit.
    comparison : str
        One of :data:`COMPARISONS`.
    tolerance_kind : str
        One of :data:`TOLERANCE_KINDS`.
    measured : float
        The reproduced value; ``NaN`` when not measured.
    note : str
        Why the target missed, or why it could not be measured; empty for a pass.
    """

    id: str
    description: str
    published: float
    tolerance: float
    comparison: str = "close"
    tolerance_kind: str = "absolute"
    measured: float = math.nan
    note: str = ""

    def __post_init__(self) -> None:
        if self.comparison not in COMPARISONS:
            raise ValueError(
                f"comparison: expected one of {', '.join(COMPARISONS)}, got {self.comparison!r}"
            )
        if self.tolerance_kind not in TOLERANCE_KINDS:
            raise ValueError(
                f"tolerance_kind: expected one of {', '.join(TOLERANCE_KINDS)}, "
                f"got {self.tolerance_kind!r}"
            )
        if not (self.tolerance >= 0):
            raise ValueError(f"tolerance: expected a number >= 0, got {self.tolerance!r}")
        if self.tolerance_kind == "factor" and (self.comparison != "close"
                                                or not self.tolerance >= 1):
            raise ValueError("a factor tolerance needs comparison 'close' and a factor >= 1")

    @property
    def allowed(self) -> float:
        """The tolerance in the unit of the value."""
        if self.tolerance_kind == "relative":
            return self.tolerance * abs(self.published)
        return self.tolerance

    @property
    def passed(self) -> bool:
        """Whether the measured value meets the published one; false when not measured."""
        m, p, tol = self.measured, self.published, self.allowed
        if not (math.isfinite(m) and math.isfinite(p)):
            return False
        # A relative tolerance of a float computed from decimal inputs can land one ulp short.
        slack = 1e-12 * max(1.0, abs(p))
        if self.tolerance_kind == "factor":
            return p / self.tolerance * (1 - 1e-12) <= m <= p * self.tolerance * (1 + 1e-12)
        if self.comparison == "close":
            return abs(m - p) <= tol + slack
        if self.comparison == "at_most":
            return m <= p + tol + slack
        return m >= p - tol - slack

    def evaluate(self, measured: float | None, note: str = "") -> Target:
        """This target with ``measured`` (``None``: not measured) and, for a miss, a note.

        A miss without a note gets one stating the difference, so that every failed row says
        why it failed.
        """
        value = math.nan if measured is None else float(measured)
        done = replace(self, measured=value, note=note)
        if not done.passed and not note:
            done = replace(done, note=done.difference())
        if done.passed and note:
            done = replace(done, note=note)
        return done

    def explained(self, why: str) -> Target:
        """This evaluated target with ``why`` added to its note if it missed."""
        if self.passed or not why:
            return self
        return replace(self, note=f"{self.note}; {why}" if self.note else why)

    def unmeasured(self, note: str) -> Target:
        """This target, not measured, with the reason."""
        if not note:
            raise ValueError("note: an unmeasured target needs the reason")
        return replace(self, measured=math.nan, note=note)

    def tolerance_text(self) -> str:
        """The tolerance as written in ``targets.csv``: ``±0.5``, ``±10%``, ``<= +0``."""
        if self.tolerance_kind == "factor":
            return f"×/÷{_number(self.tolerance)}"
        if self.tolerance_kind == "relative":
            amount = f"{_number(self.tolerance * 100)}%"
        else:
            amount = _number(self.tolerance)
        if self.comparison == "close":
            return f"±{amount}"
        if self.comparison == "at_most":
            return f"upper bound, +{amount}"
        return f"lower bound, −{amount}"

    def difference(self) -> str:
        """One line comparing measured and published."""
        if not math.isfinite(self.measured):
            return "not measured"
        m, p = _number(self.measured), _number(self.published)
        if self.tolerance_kind == "factor":
            return f"measured {m} is not within a factor {_number(self.tolerance)} of published {p}"
        if self.comparison == "close":
            return f"measured {m} differs from published {p} by more than {self.tolerance_text()}"
        bound = _number(self.published + (self.allowed if self.comparison == "at_most"
                                          else -self.allowed))
        side = "above the upper" if self.comparison == "at_most" else "below the lower"
        return f"measured {m} is {side} bound {bound} (published {p})"

    def row(self) -> dict[str, str]:
        """The row of ``targets.csv``."""
        return {
            "id": self.id,
            "description": self.description,
            "published": _number(self.published),
            "measured": _number(self.measured) if math.isfinite(self.measured) else "",
            "tolerance": self.tolerance_text(),
            "passed": "true" if self.passed else "false",
            "note": self.note,
        }


def _number(value: float) -> str:
    """A value as written in the tables: up to 6 significant digits."""
    if not math.isfinite(value):
        return ""
    return f"{value:.10g}"


def write_targets(targets: Sequence[Target], path: str | os.PathLike[str]) -> None:
    """Write ``targets.csv`` (columns :data:`COLUMNS`, one row per target)."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(COLUMNS))
        writer.writeheader()
        for target in targets:
            writer.writerow(target.row())


def read_targets(path: str | os.PathLike[str]) -> list[dict[str, str]]:
    """The rows of a ``targets.csv``."""
    with open(Path(path), newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def check_unique(targets: Iterable[Target]) -> None:
    """Raise ``ValueError`` if two targets share an id."""
    seen: set[str] = set()
    for target in targets:
        if target.id in seen:
            raise ValueError(f"target id {target.id!r} appears twice")
        seen.add(target.id)


def counts(targets: Iterable[Target]) -> Mapping[str, int]:
    """Passed, failed and unmeasured targets."""
    out = {"passed": 0, "failed": 0, "not_measured": 0}
    for target in targets:
        if target.passed:
            out["passed"] += 1
        elif math.isfinite(target.measured):
            out["failed"] += 1
        else:
            out["not_measured"] += 1
    return out
