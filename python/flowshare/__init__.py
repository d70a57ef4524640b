"""flowshare: a congestion-control laboratory.

Fast packet-level simulation of congestion controllers (a Rust core) with a Python front end
that returns pandas tables.

>>> import flowshare
>>> result = flowshare.run("scenarios/r1-dumbbell.toml")   # doctest: +SKIP
>>> result.flows[["flow", "goodput_bps"]]                    # doctest: +SKIP

Scenarios are TOML or JSON files, or dicts built with :mod:`flowshare.scenario`; the format is
described in ``docs/scenarios.md``.
"""

from __future__ import annotations

import warnings

from . import _core
from ._core import ConfigError
from .results import RunResult
from .scenario import load_scenario
from .sim import run, validate

__all__ = ["ConfigError", "RunResult", "__version__", "load_scenario", "run", "validate"]

__version__: str = _core.__version__

if _core.build_profile == "debug":
    warnings.warn(
        "flowshare's native core is a debug build and simulates many times slower than a "
        "release build; rebuild it with `maturin develop --release` (or `make develop`).",
        UserWarning,
        stacklevel=2,
    )
