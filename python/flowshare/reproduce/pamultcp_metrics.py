"""The measures of the PA-MulTCP study, as functions of plain numbers and frames.

F.-C. Kuo and X. Fu, *Probe-Aided MulTCP: An Aggregate Congestion Control Mechanism*, ACM
SIGCOMM Computer Communication Review 38(1), 2008: the fairness index (eq. 11), the coefficient
of variation of the aggregate's rate (eq. 12), the loss-event rate (Fig. 2), the response and
recovery times of §5.2, and the completion time and reduced latency of §5.3. Each function
takes what one run gives (a flows table, a time series) so that it can be checked on synthetic
frames with worked numbers (``tests/test_reproduce_pamultcp.py``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["completion_time", "cov", "crossing", "fairness_index", "first_crossing", "loss_event_rate",
           "reduced_latency", "response_time", "spearman"]


def fairness_index(aggregate_bps: float, n: float, tcp_bps: Sequence[float]) -> float:
    """Eq. (11): FI = (T/N) / ((1/m)·Σ T_tcp_i), the aggregate's throughput per flowshare
    over the mean background TCP throughput. ``NaN`` without TCP flows or when they got
    nothing.

    >>> fairness_index(20e6, 10, [1e6, 3e6])
    1.0
    """
    tcp = np.asarray(tcp_bps, dtype=np.float64)
    tcp = tcp[np.isfinite(tcp)]
    if not tcp.size or not n > 0:
        return math.nan
    mean = float(tcp.mean())
    return (aggregate_bps / n) / mean if mean > 0 else math.nan


def cov(rates: Sequence[float]) -> float:
    """Eq. (12): the population standard deviation of the rates over their mean (``NaN`` for
    no rates or a zero mean).

    >>> round(cov([1.0, 3.0]), 6)
    0.5
    """
    x = np.asarray(rates, dtype=np.float64)
    x = x[np.isfinite(x)]
    if not x.size:
        return math.nan
    mean = float(x.mean())
    return float(np.sqrt(np.mean((x - mean) ** 2))) / mean if mean > 0 else math.nan


def bins_in(series: pd.DataFrame, start_s: float, end_s: float, interval_s: float
            ) -> pd.DataFrame:
    """The samples of ``series`` (``time_s`` at the end of each bin) whose bin lies wholly in
    [start_s, end_s]."""
    t = series["time_s"].to_numpy(dtype=np.float64)
    keep = (t - interval_s >= start_s - 1e-9) & (t <= end_s + 1e-9)
    return series[keep]


def crossing(x: Sequence[float], y: Sequence[float], level: float, none: float) -> float:
    """Where ``y`` (over increasing ``x``) first falls below ``level``: linearly interpolated
    between the last point at or above it and the first below; ``none`` if it never falls
    below, ``x[0]`` if it starts below.

    >>> crossing([20, 25, 30], [1.4, 1.2, 0.8], 1.0, 31.0)
    27.5
    """
    xs = np.asarray(x, dtype=np.float64)
    ys = np.asarray(y, dtype=np.float64)
    below = np.flatnonzero(ys < level)
    if not below.size:
        return none
    i = int(below[0])
    if i == 0:
        return float(xs[0])
    x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
    return float(x0 + (y0 - level) / (y0 - y1) * (x1 - x0))


def loss_event_rate(flows: pd.DataFrame) -> pd.Series:
    """Each flow's loss-event rate: loss events over data packets sent.

    The events are the flows table's ``loss_events``, a TCP sender's window reductions: entries
    into fast recovery, ECN reductions and timeouts outside an episode already counted
    (``docs/measurements.md``).
    """
    sent = flows["packets_sent"].to_numpy(dtype=np.float64)
    events = event_counts(flows)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(sent > 0, events / sent, np.nan)
    return pd.Series(rate, index=flows.index)


def event_counts(flows: pd.DataFrame) -> np.ndarray:
    """Loss events per flow (see :func:`loss_event_rate`)."""
    return flows["loss_events"].to_numpy(dtype=np.float64)


def first_crossing(times_s: Sequence[float], rates: Sequence[float], after_s: float,
                   level: float, direction: str) -> float:
    """The end time of the first bin after ``after_s`` whose rate is at or below (``"down"``)
    or at or above (``"up"``) ``level``, minus ``after_s``; ``NaN`` if none.

    >>> first_crossing([0.1, 0.2, 0.3, 0.4], [9, 9, 4, 1], 0.0, 5.0, "down")
    0.3
    """
    t = np.asarray(times_s, dtype=np.float64)
    x = np.asarray(rates, dtype=np.float64)
    if direction not in ("down", "up"):
        raise ValueError(f"direction: expected 'down' or 'up', got {direction!r}")
    after = t > after_s + 1e-9
    hit = after & ((x <= level) if direction == "down" else (x >= level))
    idx = np.flatnonzero(hit)
    return float(round(t[idx[0]] - after_s, 9)) if idx.size else math.nan


def response_time(times_s: Sequence[float], rates_bps: Sequence[float], at_s: float,
                  level_bps: float, rtt_s: float, direction: str = "down") -> float:
    """§5.2's response time in RTTs: from ``at_s`` (the CBR flow starting, or with
    ``direction="up"`` stopping) to the end of the first 0.1 s bin in which the aggregate's
    rate is at or below (at or above) ``level_bps``, its fair share under the new load.

    >>> response_time([300.1, 300.2, 300.3], [40e6, 30e6, 19e6], 300.0, 20e6, 0.1)
    3.0
    """
    # Rounded off: bin ends over the RTT are whole numbers up to the float error.
    return round(first_crossing(times_s, rates_bps, at_s, level_bps, direction) / rtt_s, 9)


def completion_time(members: pd.DataFrame, joined_at_s: float) -> float:
    """§5.3's completion time of the member that joined at ``joined_at_s``: its
    ``completion_time_s`` (from its start until all its segments are acknowledged, cumulatively
    or by SACK), ``NaN`` if it did not finish or no member joined then.

    >>> m = pd.DataFrame({"start_s": [0.0, 50.0], "completion_time_s": [math.nan, 0.84]})
    >>> completion_time(m, 50.0)
    0.84
    """
    if members is None or not len(members):
        return math.nan
    joined = members[np.isclose(members["start_s"].to_numpy(dtype=np.float64), joined_at_s,
                                atol=1e-6)]
    if not len(joined):
        return math.nan
    value = float(joined["completion_time_s"].iloc[0])
    return value if math.isfinite(value) else math.nan


def reduced_latency(ct_mpat: float, ct_pa: float) -> float:
    """Fig. 8b: (CT_MPAT − CT_PA)/CT_MPAT in per cent.

    >>> reduced_latency(2.0, 1.5)
    25.0
    """
    if not (math.isfinite(ct_mpat) and math.isfinite(ct_pa)) or ct_mpat <= 0:
        return math.nan
    return 100.0 * (ct_mpat - ct_pa) / ct_mpat


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation (average ranks for ties); ``NaN`` for fewer than 2 finite
    pairs or a constant input.

    >>> spearman([1, 2, 3], [3, 2, 1])
    -1.0
    """
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    ok = np.isfinite(a) & np.isfinite(b)
    a, b = a[ok], b[ok]
    if a.size < 2:
        return math.nan
    ra = pd.Series(a).rank().to_numpy()
    rb = pd.Series(b).rank().to_numpy()
    if np.std(ra) == 0 or np.std(rb) == 0:
        return math.nan
    return float(np.corrcoef(ra, rb)[0, 1])
