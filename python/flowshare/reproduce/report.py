"""The HTML report of a reproduction: the targets table first, then one section per figure group.

The page is one self-contained file: figures are PNGs inlined as base64 ``data:`` URIs and the
style is inline, so it can be mailed or archived without losing anything.
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .targets import Target, counts

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["Section", "figure_html", "render", "run_cost", "table_html"]

STYLE = """
body { font-family: sans-serif; margin: 2em; max-width: 1200px; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.pass td.verdict { color: #176117; font-weight: bold; }
tr.fail td.verdict { color: #a31515; font-weight: bold; }
figure { display: inline-block; margin: 0.5em; }
figcaption { font-size: 0.85em; color: #555; max-width: 560px; }
"""


@dataclass
class Section:
    """One figure group: a heading, explanatory paragraphs, figures and tables (HTML)."""

    title: str
    paragraphs: list[str] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def figure_html(fig: Figure, caption: str) -> str:
    """``fig`` as an inlined PNG with its caption; the figure is closed."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)
    encoded = base64.b64encode(buffer.getvalue()).decode("ascii")
    return (
        f'<figure><img alt="{_e(caption)}" src="data:image/png;base64,{encoded}">'
        f"<figcaption>{_e(caption)}</figcaption></figure>"
    )


def _cell(value: Any) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return '<td class="num">–</td>'
        return f'<td class="num">{value:.4g}</td>'
    if isinstance(value, int) and not isinstance(value, bool):
        return f'<td class="num">{value}</td>'
    return f"<td>{_e(value)}</td>"


def table_html(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain table; floats with 4 significant digits."""
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def run_cost(rows: pd.DataFrame) -> str:
    """The simulator's work: data packets sent in all runs over the runs' summed wall time
    (``rows`` has one row per run with ``packets`` and ``wall_s``); empty if no run timed."""
    if "wall_s" not in rows or not rows["wall_s"].map(math.isfinite).any():
        return ""
    packets, wall = float(rows["packets"].sum()), float(rows["wall_s"].sum())
    return (f"{len(rows)} runs sent {packets:.4g} data packets in {wall:.4g} s of run wall time "
            f"(summed over workers): {packets / wall:.3g} packets per second per worker.")


def targets_table(targets: Sequence[Target]) -> str:
    """The table of every numeric target, the same rows as ``targets.csv``."""
    header = ("id", "description", "published", "measured", "tolerance", "passed", "note")
    head = "".join(f"<th>{h}</th>" for h in header)
    rows = []
    for target in targets:
        row = target.row()
        verdict = "pass" if target.passed else "fail"
        rows.append(
            f'<tr class="{verdict}" id="target-{_e(row["id"])}"><td><code>{_e(row["id"])}</code></td>'
            f"<td>{_e(row['description'])}</td>"
            f'<td class="num">{_e(row["published"])}</td>'
            f'<td class="num">{_e(row["measured"]) or "–"}</td>'
            f'<td class="num">{_e(row["tolerance"])}</td>'
            f'<td class="verdict">{_e(row["passed"])}</td><td>{_e(row["note"])}</td></tr>'
        )
    return (
        f'<table class="targets"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}'
        "</tbody></table>"
    )


def render(title: str, intro: Sequence[str], targets: Sequence[Target],
           sections: Sequence[Section]) -> str:
    """The whole page: title, introduction, the targets table, then the sections."""
    tally = counts(targets)
    summary = (
        f"{len(targets)} targets: {tally['passed']} passed, {tally['failed']} failed, "
        f"{tally['not_measured']} not measured."
    )
    body = [f"<h1>{_e(title)}</h1>"]
    body += [f"<p>{_e(p)}</p>" for p in intro]
    body.append("<h2>Numeric targets</h2>")
    body.append(f"<p>{_e(summary)}</p>")
    body.append(targets_table(targets))
    for section in sections:
        body.append(f"<h2>{_e(section.title)}</h2>")
        body += [f"<p>{_e(p)}</p>" for p in section.paragraphs]
        body += section.parts
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(title)}</title><style>{STYLE}</style></head>\n<body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )
