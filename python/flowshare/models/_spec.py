"""Argument checking and the model registry's spec objects.

Every model function checks its numeric arguments with :func:`check`, which raises a
``ValueError`` naming the argument and the allowed values. The same :class:`Interval` objects
describe the keys of the command line (:class:`Key`), so the two never disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["Interval", "Key", "ModelSpec", "check", "check_choice", "result"]

Float = NDArray[np.float64]


@dataclass(frozen=True)
class Interval:
    """A set of allowed real values: ``low``/``high`` bounds, each open or closed.

    >>> str(Interval(0, 1, low_open=True, high_open=True))
    'in (0, 1)'
    >>> str(Interval(0, None, low_open=True))
    '> 0'
    """

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    integer: bool = False

    def contains(self, values: Float) -> NDArray[np.bool_]:
        """Element-wise membership (``nan`` and infinities are never members)."""
        ok = np.isfinite(values)
        if self.low is not None:
            ok &= (values > self.low) if self.low_open else (values >= self.low)
        if self.high is not None:
            ok &= (values < self.high) if self.high_open else (values <= self.high)
        if self.integer:
            ok &= np.floor(values) == values
        return ok

    def __str__(self) -> str:
        kind = "an integer " if self.integer else ""
        if self.low is not None and self.high is not None:
            left = "(" if self.low_open else "["
            right = ")" if self.high_open else "]"
            return f"{kind}in {left}{_num(self.low)}, {_num(self.high)}{right}"
        if self.low is not None:
            return f"{kind}{'>' if self.low_open else '>='} {_num(self.low)}"
        if self.high is not None:
            return f"{kind}{'<' if self.high_open else '<='} {_num(self.high)}"
        return f"{kind}a number".strip()


def _num(x: float) -> str:
    return f"{x:g}"


POSITIVE = Interval(0, None, low_open=True)
UNIT_OPEN = Interval(0, 1, low_open=True, high_open=True)
UNIT_HALF_OPEN = Interval(0, 1, low_open=True)
AT_LEAST_ONE = Interval(1, None)
NON_NEGATIVE = Interval(0, None)


def check(name: str, value: ArrayLike, allowed: Interval) -> Float:
    """``value`` as a float array, or a ``ValueError`` naming ``name`` and ``allowed``.

    >>> check("p", [0.1, 0.2], UNIT_OPEN)
    array([0.1, 0.2])
    >>> check("p", [0.1, 1.0], UNIT_OPEN)
    Traceback (most recent call last):
    ...
    ValueError: p must be in (0, 1), got 1.0
    """
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number {allowed}, got {value!r}") from None
    bad = ~allowed.contains(array)
    if np.any(bad):
        first = array[bad].flat[0] if array.ndim else array.item()
        raise ValueError(f"{name} must be {allowed}, got {float(first)!r}")
    return array


def check_choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    """``value`` if it is one of ``choices``, else a ``ValueError`` listing them."""
    if value not in choices:
        listed = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {listed}, got {value!r}")
    return value


def result(value: Float) -> Any:
    """A Python float for 0-d results, the array otherwise (the numpy convention)."""
    return float(value) if np.ndim(value) == 0 else value


def per_second(rate_pkts: Float, s: ArrayLike | None) -> Float:
    """Packets/s, or bytes/s when a segment size ``s`` (bytes) is given."""
    if s is None:
        return rate_pkts
    return rate_pkts * check("s", s, POSITIVE)


@dataclass(frozen=True)
class Key:
    """One argument of a model as the command line sees it.

    ``default`` is used when the key is not given; a key with ``required=True`` has none, and
    an optional key with ``default=None`` is simply not passed (e.g. ``s``).
    """

    name: str
    unit: str
    description: str
    default: float | str | None = None
    required: bool = False
    allowed: Interval | None = None
    choices: tuple[str, ...] = ()

    @property
    def numeric(self) -> bool:
        """Whether the key takes a number (else one of ``choices``)."""
        return not self.choices

    def describe_allowed(self) -> str:
        """The allowed values, as shown in errors and in ``--list``."""
        if self.choices:
            return "one of " + ", ".join(self.choices)
        return str(self.allowed) if self.allowed is not None else "a number"


@dataclass(frozen=True)
class ModelSpec:
    """A model as the registry and the command line see it.

    ``function`` is called with the keys as keyword arguments (key names are the function's
    parameter names). ``unit`` is the unit of the result; ``unit_with_s`` replaces it when
    the segment size ``s`` is given.
    """

    name: str
    function: Callable[..., Any]
    keys: tuple[Key, ...]
    unit: str
    description: str
    source: str
    unit_with_s: str | None = None
    key_names: tuple[str, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key_names", tuple(k.name for k in self.keys))

    def key(self, name: str) -> Key:
        """The key called ``name``; ``KeyError`` if the model has none."""
        for key in self.keys:
            if key.name == name:
                return key
        raise KeyError(name)

    def arguments(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """``values`` completed with the defaults; ``ValueError`` for unknown or missing keys."""
        unknown = [k for k in values if k not in self.key_names]
        if unknown:
            raise ValueError(
                f"{self.name} has no key {unknown[0]!r}; its keys are {', '.join(self.key_names)}"
            )
        args: dict[str, Any] = {}
        for key in self.keys:
            if key.name in values and values[key.name] is not None:
                args[key.name] = values[key.name]
            elif key.required:
                raise ValueError(f"{self.name} needs {key.name} ({key.description})")
            elif key.default is not None:
                args[key.name] = key.default
        return args

    def __call__(self, **values: Any) -> Any:
        """Evaluate the model; missing keys take their defaults."""
        return self.function(**self.arguments(values))

    def unit_for(self, values: Mapping[str, Any]) -> str:
        """The unit of the result for these arguments."""
        if self.unit_with_s is not None and values.get("s") is not None:
            return self.unit_with_s
        return self.unit


# Keys shared by several models.
P = Key("p", "1", "loss event rate (loss events per packet sent)", required=True,
        allowed=UNIT_OPEN)
P_SINGLE = Key("p", "1", "loss event rate (loss events per packet sent)", required=True,
               allowed=UNIT_HALF_OPEN)
RTT = Key("rtt", "s", "round-trip time", required=True, allowed=POSITIVE)
RTO = Key("rto", "s", "retransmission time-out (initial, T_0)", default=None, required=True,
          allowed=POSITIVE)
B_ACK = Key("b", "pkt", "packets acknowledged by one ACK", default=1.0, allowed=POSITIVE)
N_FLOWS = Key("n", "flows", "number of (emulated) flows", required=True, allowed=POSITIVE)
J = Key("j", "pkt", "packets lost per loss event (0 is read as 1)", required=True,
        allowed=NON_NEGATIVE)
S = Key("s", "B", "segment size; when given the result is in bytes/s", allowed=POSITIVE)

