"""Model against simulation: per-point errors and one plot.

:func:`compare` evaluates a model at the loss rate, RTT (and whatever else the model needs)
of each simulated point and returns a :class:`ModelComparison` holding a table with the
errors and a plot of the model curves over the simulated points. Points come as a pandas
DataFrame whose columns are named after the model's keys (``p``, ``rtt``, ``n``, ...) plus the
measured ``throughput``, or straight from simulation results through
:func:`points_from_results`.

>>> import pandas as pd
>>> points = pd.DataFrame({"p": [0.001, 0.01], "rtt": [0.1, 0.1], "throughput": [400.0, 100.0]})
>>> cmp = compare(points, "pftk", params={"rto": 0.4})
>>> cmp.table[["p", "measured", "model", "rel_error"]].round(4)
       p  measured     model  rel_error
0  0.001     400.0  383.8436    -0.0404
1  0.010     100.0  112.3322     0.1233

Errors are ``model − measured`` and ``(model − measured) / measured``: the thesis never states
the denominator of its error percentages (resolution ``multfrc:A19`` in
``docs/resolutions.md``), so the measurement is taken as the reference.
"""

from __future__ import annotations

import inspect
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ._spec import ModelSpec

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ..results import RunResult

__all__ = ["ModelComparison", "compare", "points_from_results"]

THROUGHPUT_MODES = ("sent", "delivered")


@dataclass
class ModelComparison:
    """A model evaluated at simulated points.

    Attributes
    ----------
    model : str
        The model's name.
    unit : str
        Unit of ``measured`` and ``model``.
    table : pandas.DataFrame
        One row per point used: the model's inputs (one column per key that varies between
        points or was given), then ``measured``, ``model``, ``error`` (model − measured),
        ``abs_error``, ``rel_error`` ((model − measured) / measured) and ``abs_rel_error``.
        Rows whose inputs or measurement are ``NaN`` are left out.
    x : str
        The input drawn on the horizontal axis.
    curves : list of (str, ndarray, ndarray)
        Model curves: label, x values, model values.
    dropped : int
        Points left out for a ``NaN`` input or measurement.
    """

    model: str
    unit: str
    table: pd.DataFrame
    x: str
    curves: list[tuple[str, np.ndarray, np.ndarray]] = field(default_factory=list)
    dropped: int = 0

    def summary(self) -> dict[str, float | int]:
        """Error figures over all points.

        Returns
        -------
        dict
            ``points``, ``mean_rel_error`` (the bias), ``mean_abs_rel_error``,
            ``max_abs_rel_error`` and ``rms_error`` (in ``unit``).
        """
        t = self.table
        if t.empty:
            nan = math.nan
            return {"points": 0, "mean_rel_error": nan, "mean_abs_rel_error": nan,
                    "max_abs_rel_error": nan, "rms_error": nan}
        return {
            "points": len(t),
            "mean_rel_error": float(t["rel_error"].mean()),
            "mean_abs_rel_error": float(t["abs_rel_error"].mean()),
            "max_abs_rel_error": float(t["abs_rel_error"].max()),
            "rms_error": float(np.sqrt(np.mean(t["error"].to_numpy() ** 2))),
        }

    def plot(
        self, *, logx: bool | None = None, logy: bool = False, title: str | None = None
    ) -> Figure:
        """Model curves over the simulated points, and the model at each point.

        Parameters
        ----------
        logx : bool, optional
            Logarithmic horizontal axis; by default when ``x`` is a loss rate spanning more
            than a factor of 10.
        logy : bool, default False
            Logarithmic vertical axis.
        title : str, optional
            Figure title; by default the model name and the mean absolute relative error.

        Returns
        -------
        matplotlib.figure.Figure
            The figure, attached to an Agg canvas (no pyplot state is touched).
        """
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=(7, 4.5), layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.subplots()
        for label, xs, ys in self.curves:
            ax.plot(xs, ys, linewidth=1.5, label=label)
        t = self.table
        if not t.empty:
            xs = t[self.x].to_numpy(dtype=float)
            ax.plot(xs, t["measured"], "o", color="black", markersize=5, label="simulation")
            ax.plot(xs, t["model"], "o", markerfacecolor="none", color="tab:red", markersize=7,
                    label="model at each point")
        if logx is None:
            positive = t[self.x][t[self.x] > 0] if not t.empty else pd.Series(dtype=float)
            logx = self.x.startswith("p") and len(positive) > 0 and (
                positive.max() / positive.min() > 10
            )
        if logx:
            ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        ax.set_xlabel(self.x)
        ax.set_ylabel(f"throughput ({self.unit})")
        if title is None:
            err = self.summary()["mean_abs_rel_error"]
            title = self.model if math.isnan(err) else (
                f"{self.model}: mean |relative error| {100 * err:.1f} %"
            )
        ax.set_title(title, fontsize=10)
        ax.grid(visible=True, alpha=0.3)
        ax.legend(fontsize=8)
        return fig

    def save_plot(self, path: str | os.PathLike[str], **kwargs: Any) -> None:
        """Write :meth:`plot` as a PNG (keyword arguments go to :meth:`plot`)."""
        from ..plots import save_figure

        save_figure(self.plot(**kwargs), path)


def compare(
    points: pd.DataFrame | RunResult | Iterable[RunResult],
    model: str | ModelSpec | Callable[..., Any],
    *,
    params: Mapping[str, Any] | None = None,
    columns: Mapping[str, str] | None = None,
    measured: str = "throughput",
    x: str = "p",
    by: str | Sequence[str] | None = None,
    curve_points: int = 200,
) -> ModelComparison:
    """Evaluate ``model`` at each simulated point and compare with the measured throughput.

    Parameters
    ----------
    points : pandas.DataFrame, RunResult or iterable of RunResult
        One row per point. Columns named after the model's keys (``p``, ``rtt``, ``n``, ``j``,
        ...) are used as per-point inputs; ``measured`` holds the simulated throughput in the
        model's unit (pkt/s for the rate models). Results are turned into points with
        :func:`points_from_results` (one point per run, all its flows together).
    model : str, ModelSpec or callable
        A registered model name (see ``flowshare model --list``), a spec, or a function
        taking the inputs as keyword arguments.
    params : mapping, optional
        Inputs that are the same for every point (e.g. ``{"rto": 0.4}``); they override
        columns of the same name.
    columns : mapping, optional
        Model key → column name, for columns not named after the key.
    measured : str, default "throughput"
        Column with the measured throughput.
    x : str, default "p"
        Input on the horizontal axis of the plot; curves are drawn over its range.
    by : str or sequence of str, optional
        Input columns that split the points into groups, one curve each (default: ``n`` when
        it is a column, else one curve). Inputs other than ``x`` are set to the group's median
        along a curve.
    curve_points : int, default 200
        Points per curve.

    Returns
    -------
    ModelComparison

    Raises
    ------
    ValueError
        If the model needs an input that is neither a column nor in ``params``, a column is
        missing, or an input is outside the model's domain.
    """
    frame = _as_points(points)
    spec = _as_spec(model)
    params = dict(params or {})
    columns = dict(columns or {})
    if measured not in frame:
        raise ValueError(f"points have no column {measured!r} (the measured throughput)")
    for key, column in columns.items():
        if column not in frame:
            raise ValueError(f"columns maps {key!r} to {column!r}, which points do not have")

    per_point: dict[str, str] = {}
    for key in spec.keys:
        column = columns.get(key.name, key.name)
        if key.name not in params and column in frame:
            per_point[key.name] = column
        elif key.name not in params and key.required:
            raise ValueError(
                f"model {spec.name} needs {key.name} ({key.description}): give a column "
                f"{column!r} or params={{{key.name!r}: ...}}"
            )
    if x not in per_point and x not in params:
        raise ValueError(f"x={x!r} is not an input of model {spec.name}")

    used = [per_point[k] for k in per_point] + [measured]
    keep = frame[used].notna().all(axis=1)
    frame = frame[keep].reset_index(drop=True)
    inputs = {k: frame[c].to_numpy(dtype=float) for k, c in per_point.items()}
    values = (
        np.broadcast_to(np.asarray(spec(**params, **inputs), dtype=float), len(frame))
        if len(frame)
        else np.empty(0)
    )

    table = pd.DataFrame({k: frame[c].to_numpy() for k, c in per_point.items()})
    for key, value in params.items():
        if np.ndim(value) == 0:
            table[key] = value
    table["measured"] = frame[measured].to_numpy(dtype=float)
    table["model"] = values
    table["error"] = table["model"] - table["measured"]
    table["abs_error"] = table["error"].abs()
    with np.errstate(divide="ignore", invalid="ignore"):
        table["rel_error"] = table["error"] / table["measured"]
    table["abs_rel_error"] = table["rel_error"].abs()

    groups = _groups(by, per_point)
    curves = _curves(spec, params, inputs, x, groups, curve_points) if len(frame) else []
    return ModelComparison(
        model=spec.name,
        unit=spec.unit_for(params),
        table=table,
        x=x,
        curves=curves,
        dropped=int((~keep).sum()),
    )


def points_from_results(
    results: RunResult | Iterable[RunResult],
    *,
    aggregate: bool = True,
    throughput: str = "sent",
) -> pd.DataFrame:
    """Loss rates, RTT and throughput of simulation runs, as points for :func:`compare`.

    The loss event rate is counted as the thesis counts it in ns-2 (Damjanović (2010) §3.2.4):
    one loss event per fast-recovery entry or time-out, over the packets sent
    (``(fast_retransmits + timeouts) / packets_sent`` of the flows table).

    Parameters
    ----------
    results : RunResult or iterable of RunResult
        Simulation results.
    aggregate : bool, default True
        One point per run with all its flows together (for the parallel-flow models: ``n`` is
        the number of flows, ``p`` the per-flow loss event rate, i.e. loss events of any flow
        over packets of all flows, ``throughput`` the sum over flows). ``False`` gives one
        point per flow with ``n = 1``.
    throughput : {"sent", "delivered"}
        Packets leaving the sender, retransmissions included (the thesis's model validation),
        or data packets arriving at the receiver, per second of the flow's active time.

    Returns
    -------
    pandas.DataFrame
        Columns ``run`` (position in ``results``), ``seed``, ``flow`` (per-flow points only),
        ``n``, ``p`` (``NaN`` without any loss event), ``p_r`` (packet loss rate, drops over
        packets sent), ``rtt`` [s] (mean RTT sample), ``throughput`` [pkt/s],
        ``loss_events``, ``timeouts`` and ``packets``.
    """
    from ..results import RunResult

    if throughput not in THROUGHPUT_MODES:
        raise ValueError(f"throughput must be one of 'sent', 'delivered', got {throughput!r}")
    runs = [results] if isinstance(results, RunResult) else list(results)
    rows: list[dict[str, Any]] = []
    for index, run in enumerate(runs):
        if not isinstance(run, RunResult):
            raise ValueError(f"results[{index}] is a {type(run).__name__}, not a RunResult")
        flows = run.flows
        if flows.empty:
            continue
        duration = float(run.summary.get("duration_s", math.nan))
        start = flows["start_s"].to_numpy(dtype=float)
        stop = np.fmin(flows["stop_s"].to_numpy(dtype=float), duration)
        done = start + flows["completion_time_s"].to_numpy(dtype=float)
        end = np.where(np.isfinite(done), done, np.where(np.isfinite(stop), stop, duration))
        active = end - start
        column = "packets_sent" if throughput == "sent" else "packets_received"
        with np.errstate(divide="ignore", invalid="ignore"):
            rate = np.where(active > 0, flows[column].to_numpy(dtype=float) / active, np.nan)
        events = (flows["fast_retransmits"] + flows["timeouts"]).to_numpy(dtype=float)
        packets = flows["packets_sent"].to_numpy(dtype=float)
        drops = flows["drops"].to_numpy(dtype=float)
        rtt = flows["rtt_mean_s"].to_numpy(dtype=float)
        samples = flows["rtt_samples"].to_numpy(dtype=float)
        timeouts = flows["timeouts"].to_numpy(dtype=float)
        seed = run.summary.get("seed")
        if aggregate:
            weights = np.where(np.isfinite(rtt), samples, 0.0)
            rows.append({
                "run": index,
                "seed": seed,
                "n": len(flows),
                "p": _event_rate(events.sum(), packets.sum()),
                "p_r": _ratio(drops.sum(), packets.sum()),
                "rtt": _ratio(float(np.nansum(rtt * weights)), float(weights.sum())),
                "throughput": float(np.nansum(rate)),
                "loss_events": int(events.sum()),
                "timeouts": int(timeouts.sum()),
                "packets": int(packets.sum()),
            })
        else:
            for i in range(len(flows)):
                rows.append({
                    "run": index,
                    "seed": seed,
                    "flow": int(flows["flow"].iloc[i]),
                    "n": 1,
                    "p": _event_rate(events[i], packets[i]),
                    "p_r": _ratio(drops[i], packets[i]),
                    "rtt": float(rtt[i]),
                    "throughput": float(rate[i]),
                    "loss_events": int(events[i]),
                    "timeouts": int(timeouts[i]),
                    "packets": int(packets[i]),
                })
    return pd.DataFrame(rows)


def _ratio(num: float, den: float) -> float:
    """``num / den``, or ``NaN`` when there is nothing to divide by."""
    return float(num / den) if den > 0 else math.nan


def _event_rate(events: float, packets: float) -> float:
    """Loss event rate; ``NaN`` without any loss event (the models need p > 0)."""
    return _ratio(events, packets) if events > 0 else math.nan


def _as_points(points: Any) -> pd.DataFrame:
    if isinstance(points, pd.DataFrame):
        return points
    return points_from_results(points)


def _as_spec(model: Any) -> ModelSpec:
    from . import get

    if isinstance(model, ModelSpec):
        return model
    if isinstance(model, str):
        return get(model)
    if callable(model):
        return _spec_of_callable(model)
    raise ValueError(f"model must be a name, a ModelSpec or a function, got {model!r}")


def _spec_of_callable(function: Callable[..., Any]) -> ModelSpec:
    from ._spec import Key

    keys = []
    for parameter in inspect.signature(function).parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        required = parameter.default is inspect.Parameter.empty
        keys.append(Key(parameter.name, "", parameter.name, required=required))
    name = getattr(function, "__name__", "model")
    return ModelSpec(name, function, tuple(keys), "pkt/s", name, "user function")


def _groups(by: str | Sequence[str] | None, per_point: Mapping[str, str]) -> list[str]:
    if by is None:
        return ["n"] if "n" in per_point else []
    names = [by] if isinstance(by, str) else list(by)
    for name in names:
        if name not in per_point:
            raise ValueError(f"by={name!r} is not a per-point input of the model")
    return names


def _curves(
    spec: ModelSpec,
    params: Mapping[str, Any],
    inputs: Mapping[str, np.ndarray],
    x: str,
    groups: list[str],
    count: int,
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    if x not in inputs:
        return []
    frame = pd.DataFrame(inputs)
    parts = frame.groupby(groups, sort=True) if groups else [((), frame)]
    curves = []
    for label_values, part in parts:
        xs = _grid(part[x].to_numpy(), x, count)
        args = {k: float(np.median(v)) for k, v in part.items() if k != x}
        curve_args = {**params, **args, x: xs}
        try:
            ys = np.broadcast_to(np.asarray(spec(**curve_args), dtype=float), xs.shape)
        except ValueError:
            continue  # a median outside the domain (it cannot happen for an interval domain)
        if groups:
            values = label_values if isinstance(label_values, tuple) else (label_values,)
            label = "model, " + ", ".join(f"{g}={v:g}" for g, v in zip(groups, values, strict=True))
        else:
            label = "model"
        curves.append((label, xs, ys))
    return curves


def _grid(values: np.ndarray, x: str, count: int) -> np.ndarray:
    low, high = float(np.min(values)), float(np.max(values))
    if x.startswith("p") and low > 0:
        low, high = low / 1.5, min(high * 1.5, 0.5 * (1.0 + high))
        return np.geomspace(low, high, count) if high > low else np.array([low])
    span = (high - low) * 0.05 or abs(low) * 0.05 or 1.0
    return np.linspace(max(low - span, 0.0) if low > 0 else low, high + span, count)
