"""Analytic throughput models, next to the simulator.

Each model is a vectorised function (numpy broadcasting) whose docstring cites the equation it
implements, with units; ``docs/models.md`` lists them all, with the typos of the sources and
how they are resolved.

>>> from flowshare import models
>>> round(models.pftk(0.01, rtt=0.1, rto=0.4), 2)            # packets/s
112.33
>>> round(models.multfrc(5, 0.01, 1, rtt=0.1, rto=0.4), 2)   # 5 emulated flows
596.26
>>> models.get("mathis").unit
'pkt/s'

The registry :data:`MODELS` maps a model's command-line name (``flowshare model NAME``) to a
:class:`ModelSpec`: its function, its keys with units, defaults and allowed values, the unit
of its result and a one-line description. Each module of :data:`_MODULES` contributes its own
``MODELS`` table.
"""

from __future__ import annotations

import importlib

from ._spec import Interval, Key, ModelSpec
from .compare import ModelComparison, compare, points_from_results
from .parallel import (
    altman_utilisation,
    hit_window_a,
    improved_j,
    model_a,
    model_a_ca,
    model_a_closed_form,
    model_b,
    model_b_ca,
    multfrc,
    old_j,
    rounds_a,
    rounds_b,
    timeout_duration,
    timeout_f,
    timeout_probability,
)
from .single import (
    aimd_decrease_for_weight,
    aimd_rate,
    aimd_window,
    mathis,
    multcp_factor,
    multcp_rate,
    pa_multcp_params,
    pa_multcp_wmax,
    pftk,
)

__all__ = [
    "MODELS",
    "Interval",
    "Key",
    "ModelComparison",
    "ModelSpec",
    "aimd_decrease_for_weight",
    "aimd_rate",
    "aimd_window",
    "altman_utilisation",
    "compare",
    "get",
    "hit_window_a",
    "improved_j",
    "mathis",
    "model_a",
    "model_a_ca",
    "model_a_closed_form",
    "model_b",
    "model_b_ca",
    "multcp_factor",
    "multcp_rate",
    "multfrc",
    "old_j",
    "pa_multcp_params",
    "pa_multcp_wmax",
    "pftk",
    "points_from_results",
    "rounds_a",
    "rounds_b",
    "timeout_duration",
    "timeout_f",
    "timeout_probability",
]

_MODULES = ("single", "parallel", "hasegawa")
"""Modules of this package whose ``MODELS`` tables make up the registry, in listing order."""


def _collect() -> dict[str, ModelSpec]:
    registry: dict[str, ModelSpec] = {}
    for name in _MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        for key, spec in module.MODELS.items():
            if isinstance(spec, dict):
                spec = _from_table(key, spec)
            if key in registry:
                raise RuntimeError(f"model {key!r} is defined twice ({name} and before)")
            registry[key] = spec
    return registry


def _from_table(name: str, table: dict) -> ModelSpec:
    """A :class:`ModelSpec` from the plain table form ``{func, keys, unit, help}``, where
    ``keys`` maps an argument to (unit, default or None = required, description)."""
    keys = tuple(
        Key(arg, unit, description, default=default, required=default is None)
        for arg, (unit, default, description) in table["keys"].items()
    )
    return ModelSpec(name, table["func"], keys, table["unit"], table["help"],
                     source=table.get("source", "Hasegawa, PhD thesis, Osaka University 2000"))


MODELS: dict[str, ModelSpec] = _collect()
"""Every model by its command-line name."""


def get(name: str) -> ModelSpec:
    """The model called ``name``; ``ValueError`` listing the names if there is none.

    >>> get("multfrc").key_names[:5]
    ('n', 'p', 'j', 'rtt', 'rto')
    """
    try:
        return MODELS[name]
    except KeyError:
        raise ValueError(
            f"unknown model {name!r}; known models: {', '.join(MODELS)}"
        ) from None
