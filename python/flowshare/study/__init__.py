"""Experiments: sweeps and designs, the run store, local and Dask execution, statistics over
runs, rank matrices and reports of a run store.

>>> from flowshare import study
>>> sweep = study.load_sweep("scenarios/sweeps/loss-recovery.toml")  # doctest: +SKIP
>>> outcome = study.run_sweep(sweep, "out/loss-recovery")  # doctest: +SKIP
>>> study.write_report("out/loss-recovery")  # doctest: +SKIP
"""

from __future__ import annotations

from .design import fractional_factorial, full_factorial, is_orthogonal, resolution
from .execute import SweepOutcome, run_sweep
from .report import write_report
from .sweep import Sweep, derive_seed, load_sweep

__all__ = [
    "Sweep",
    "SweepOutcome",
    "derive_seed",
    "fractional_factorial",
    "full_factorial",
    "is_orthogonal",
    "load_sweep",
    "resolution",
    "run_sweep",
    "write_report",
]
