"""``flowshare model``: evaluate an analytic model from the command line.

::

    flowshare model --list
    flowshare model pftk p=0.01 rtt=100ms rto=400ms
    flowshare model multfrc n=5 p=0.001:0.1:20 j=1 rtt=100ms rto=0.4s --log --plot multfrc.png

Each ``KEY=VALUE`` sets one of the model's keys (see ``--list``); ``KEY=START:STOP:COUNT``
sweeps one key over ``COUNT`` values (evenly spaced, or geometrically with ``--log``) and
prints a table, which ``--plot FILE`` also draws as a PNG. A bad key or value is reported in
one line naming the key and what is allowed, with exit status 2 and nothing written.

A key that is a time, a size or a bit rate takes its value with a unit, written as in a
scenario (``rtt=100ms``, ``s=1460B``, ``bandwidth=10Mbps`` or ``"bandwidth=10 Mbit/s"``), and
the model receives it in the key's own unit (seconds for ``rtt``); a bare number there is
refused, as in a scenario, because ``rtt=100`` could mean seconds or milliseconds. Counts,
ratios and probabilities (``p``, ``n``, ``j``, packets, cells) stay bare numbers.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from .. import _core
from .._files import interrupts_deferred, reported_as
from . import MODELS, get
from ._spec import Key, ModelSpec

__all__ = ["ModelUsageError", "add_arguments", "list_models", "run_cli"]

SIGNIFICANT = 7
#: The most values a KEY=START:STOP:COUNT range may have (each is a line of the table).
MAX_RANGE_COUNT = 100_000
"""Significant digits printed."""


class ModelUsageError(ValueError):
    """A bad model name, key or value (exit status 2)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``model`` subcommand's arguments to ``parser``."""
    parser.add_argument("name", nargs="?", metavar="NAME", help="model name (see --list)")
    parser.add_argument(
        "assignments",
        nargs="*",
        metavar="KEY=VALUE",
        help="a model input, or KEY=START:STOP:COUNT for a range (at most one)",
    )
    parser.add_argument("--list", action="store_true", help="list the models and their keys")
    parser.add_argument("--plot", metavar="FILE", help="draw the range as a PNG")
    parser.add_argument(
        "--log", action="store_true", help="space a range geometrically and plot it on a log axis"
    )


def run_cli(args: argparse.Namespace) -> int:
    """Run ``flowshare model`` with parsed ``args``; ``ModelUsageError`` for bad input."""
    if args.list:
        if args.name is not None or args.assignments:
            raise ModelUsageError("--list takes no model or keys")
        print(list_models(), end="")
        return 0
    if args.name is None:
        raise ModelUsageError("a model NAME is required (see 'flowshare model --list')")
    try:
        spec = get(args.name)
    except ValueError as exc:
        raise ModelUsageError(str(exc)) from None
    values, swept = _parse(spec, args.assignments, log=args.log)
    if args.plot is not None and swept is None:
        raise ModelUsageError("--plot needs a range: give one key as KEY=START:STOP:COUNT")
    if args.plot is not None:
        _check_plot_path(Path(args.plot))
    output = _evaluate(spec, values, swept)
    unit = spec.unit_for(values)
    if swept is None:
        print(f"{_fmt(float(output))} {unit}".rstrip() if unit != "1" else _fmt(float(output)))
        return 0
    xs = np.asarray(values[swept], dtype=float)
    ys = np.broadcast_to(output, xs.shape)
    if args.plot is not None:
        _plot(spec, values, swept, xs, ys, unit, Path(args.plot), log=args.log)
    print(_table(spec, swept, xs, ys, unit), end="")
    return 0


def list_models() -> str:
    """The text of ``flowshare model --list``: each model, its unit and its keys."""
    lines = []
    for spec in MODELS.values():
        lines.append(f"{spec.name}  [{_unit_text(spec)}]  {spec.description} ({spec.source})")
        width = max(len(k.name) for k in spec.keys)
        for key in spec.keys:
            unit = f"[{key.unit}]" if key.unit else ""
            lines.append(
                f"    {key.name:<{width}}  {unit:<9} {_default_text(key):<18} "
                f"{key.describe_allowed()}; {key.description}"
            )
    return "\n".join(lines) + "\n"


def _unit_text(spec: ModelSpec) -> str:
    if spec.unit_with_s:
        return f"{spec.unit}; {spec.unit_with_s} with s"
    return spec.unit


def _default_text(key: Key) -> str:
    if key.required:
        return "required"
    if key.default is None:
        return "optional"
    value = key.default
    return f"default {_fmt(value) if isinstance(value, float) else value}"


def _evaluate(spec: ModelSpec, values: dict[str, Any], swept: str | None) -> np.ndarray:
    """The model's result for ``values``, or a one-line :class:`ModelUsageError`.

    Inputs inside a key's domain can still be beyond what the formula can compute in floating
    point (an overflow, a NaN further in): that is reported as such, not as a warning on
    standard error, an ``inf`` printed with exit 0 or an error about an internal variable.
    """
    given = ", ".join(f"{k}={_describe(v)}" for k, v in values.items())
    beyond = ModelUsageError(
        f"model {spec.name} has no finite result for {given}: the inputs are beyond the range "
        "its formula can compute"
    )
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="warn"):
        warnings.simplefilter("always")
        try:
            output = np.asarray(spec(**values), dtype=float)
        except (OverflowError, FloatingPointError, ZeroDivisionError):
            raise beyond from None
        except TypeError:
            if swept is None:
                raise
            raise ModelUsageError(
                f"{swept} cannot be a range for model {spec.name}; give it one value"
            ) from None
        except ValueError as exc:
            if any(issubclass(w.category, RuntimeWarning) for w in caught):
                raise beyond from None
            raise ModelUsageError(str(exc)) from None
    if not np.all(np.isfinite(output)):
        raise beyond
    return output


def _describe(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"{_fmt(float(value[0]))}..{_fmt(float(value[-1]))}"
    return value if isinstance(value, str) else _fmt(float(value))


def _check_plot_path(path: Path) -> None:
    """The --plot target: a .png file in a directory that exists (errors name it as given)."""
    if path.suffix.lower() != ".png":
        raise ModelUsageError(f"--plot {path}: the plot is a PNG; give a file name ending in .png")
    if path.is_dir():
        raise ModelUsageError(f"--plot {path}: is a directory")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise ModelUsageError(f"--plot {path}: directory {parent} does not exist")


def _parse(
    spec: ModelSpec, assignments: list[str], *, log: bool
) -> tuple[dict[str, Any], str | None]:
    values: dict[str, Any] = {}
    swept: str | None = None
    for item in assignments:
        name, sep, text = item.partition("=")
        if not sep or not name:
            raise ModelUsageError(f"expected KEY=VALUE, got {item!r}")
        try:
            key = spec.key(name)
        except KeyError:
            raise ModelUsageError(
                f"model {spec.name} has no key {name!r}; its keys are {', '.join(spec.key_names)}"
            ) from None
        if name in values:
            raise ModelUsageError(f"key {name!r} is given twice")
        if ":" in text:
            if swept is not None:
                raise ModelUsageError(
                    f"only one key can be a range; {swept!r} and {name!r} both are"
                )
            values[name] = _range(key, text, log=log)
            swept = name
        else:
            values[name] = _value(key, text)
    for key in spec.keys:
        if key.required and key.name not in values:
            raise ModelUsageError(
                f"model {spec.name} needs {key.name}=... ({key.description}; "
                f"{key.describe_allowed()})"
            )
    return values, swept


def _value(key: Key, text: str) -> Any:
    if not key.numeric:
        if text not in key.choices:
            raise ModelUsageError(f"{key.name} must be {key.describe_allowed()}, got {text!r}")
        return text
    number = _number(key, text)
    _check(key, np.asarray(number))
    return number


#: Key units that are dimensions: (kind of quantity, the key's unit per base unit, the unit a
#: bare number is shown with in the suggestion).
DIMENSIONS: dict[str, tuple[str, float, str]] = {
    "s": ("time", 1.0, "s"),
    "ms": ("time", 1e3, "ms"),
    "B": ("size", 1.0, "B"),
    "bytes": ("size", 1.0, "B"),
    "bit/s": ("rate", 1.0, "bps"),
}


def _quantity(key: Key, text: str) -> float:
    """A value with its unit, converted to the key's unit; bare numbers are refused."""
    kind, per_base, shown = DIMENSIONS[key.unit]
    try:
        return _core.parse_quantity(kind, text) * per_base  # type: ignore[arg-type]
    except ValueError as exc:
        message = str(exc)
    if " has no unit; " in message:
        units = message[message.index("(units: "):]
        raise ModelUsageError(
            f"{key.name}: {text.strip()} has no unit; write {key.name}={text.strip()}{shown} {units}"
        ) from None
    raise ModelUsageError(f"{key.name}: {message}") from None


def _number(key: Key, text: str) -> float:
    if key.unit in DIMENSIONS:
        number = _quantity(key, text)
        if not np.isfinite(number):
            raise ModelUsageError(f"{key.name} must be {key.describe_allowed()}, got {text!r}")
        return number
    try:
        number = float(text)
    except ValueError:
        number = float("nan")
    if not np.isfinite(number):
        raise ModelUsageError(f"{key.name} must be a number {key.describe_allowed()}, got {text!r}")
    return number


def _range(key: Key, text: str, *, log: bool) -> np.ndarray:
    if not key.numeric:
        raise ModelUsageError(f"{key.name} cannot be a range; it must be {key.describe_allowed()}")
    parts = text.split(":")
    if len(parts) != 3:
        raise ModelUsageError(f"{key.name}: a range is START:STOP:COUNT, got {text!r}")
    start, stop = _number(key, parts[0]), _number(key, parts[1])
    try:
        count = int(parts[2])
    except ValueError:
        count = 0
    if count < 2:
        raise ModelUsageError(
            f"{key.name}: the COUNT of a range must be an integer >= 2, got {parts[2]!r}"
        )
    if count > MAX_RANGE_COUNT:
        raise ModelUsageError(
            f"{key.name}: the COUNT of a range must be at most {MAX_RANGE_COUNT}, got {parts[2]!r}"
        )
    if log and (start <= 0 or stop <= 0):
        raise ModelUsageError(f"{key.name}: a --log range needs START and STOP > 0")
    _check(key, np.array([start, stop]))
    values = np.geomspace(start, stop, count) if log else np.linspace(start, stop, count)
    _check(key, values)
    return values


def _check(key: Key, values: np.ndarray) -> None:
    if key.allowed is None:
        return
    bad = ~key.allowed.contains(values)
    if np.any(bad):
        raise ModelUsageError(
            f"{key.name} must be {key.allowed}, got {_fmt(float(values[bad].flat[0]))}"
        )


def _fmt(value: float) -> str:
    return f"{value:.{SIGNIFICANT}g}"


def _table(spec: ModelSpec, swept: str, xs: np.ndarray, ys: np.ndarray, unit: str) -> str:
    key = spec.key(swept)
    left = f"{swept} ({key.unit})" if key.unit and key.unit != "1" else swept
    right = f"{spec.name} ({unit})" if unit and unit != "1" else spec.name
    rows = [(left, right)] + [(_fmt(float(x)), _fmt(float(y))) for x, y in zip(xs, ys, strict=True)]
    wl = max(len(r[0]) for r in rows)
    wr = max(len(r[1]) for r in rows)
    return "".join(f"{a:>{wl}}  {b:>{wr}}\n" for a, b in rows)


def _plot(
    spec: ModelSpec,
    values: dict[str, Any],
    swept: str,
    xs: np.ndarray,
    ys: np.ndarray,
    unit: str,
    path: Path,
    *,
    log: bool,
) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from ..plots import save_figure

    fig = Figure(figsize=(7, 4.5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    ax.plot(xs, ys, linewidth=1.5, marker="." if len(xs) <= 50 else None)
    if log:
        ax.set_xscale("log")
    key = spec.key(swept)
    ax.set_xlabel(f"{swept} ({key.unit})" if key.unit and key.unit != "1" else swept)
    ax.set_ylabel(f"{spec.name} ({unit})" if unit and unit != "1" else spec.name)
    fixed = ", ".join(
        f"{k}={_fmt(v) if isinstance(v, float) else v}" for k, v in values.items() if k != swept
    )
    ax.set_title(f"{spec.name}: {fixed}" if fixed else spec.name, fontsize=10)
    ax.grid(visible=True, alpha=0.3)
    # Written next to the target and renamed, so a failure or a signal leaves no partial file.
    # A signal (Ctrl-C, SIGTERM, SIGHUP) waits while the temporary file is created, renamed or
    # removed, so that it is never left behind.
    directory = path.parent if str(path.parent) else Path(".")
    staging = ""
    try:
        with interrupts_deferred():
            with reported_as(path):   # the temporary file is ours, the plot the user's
                handle, staging = tempfile.mkstemp(prefix=".model-", suffix=".png", dir=directory)
            os.close(handle)
        save_figure(fig, staging)
        with interrupts_deferred():
            # mkstemp's file is private (0600); the plot gets the mode of any other file.
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(staging, 0o666 & ~umask)
            os.replace(staging, path)
    except BaseException:
        if staging:
            with interrupts_deferred():
                Path(staging).unlink(missing_ok=True)
        raise
