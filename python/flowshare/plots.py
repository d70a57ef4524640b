"""Saving matplotlib figures (Agg backend; no pyplot state is touched), for the model and
sweep-report plots.

The plot of a run (``plot.png``) is drawn by the Rust core: see
:meth:`flowshare.RunResult.plot` and docs/adr/0009-outputs-written-from-rust.md.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["save_figure"]


def save_figure(fig: Figure, path: str | os.PathLike[str]) -> None:
    """Save ``fig`` as a PNG with no timestamp in its metadata."""
    fig.savefig(path, format="png", dpi=110, metadata={"Software": None})
