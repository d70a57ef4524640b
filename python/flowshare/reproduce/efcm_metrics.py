"""The measures of the EFCM study, from a run's transfers, and its significance test.

M. Savorić and H. Karl, *Performance Evaluation of an Improved Common Congestion Controller
for WWW-based TCP Connections*, Technical Report TKN-04-007, TU Berlin, 2004: Chapter 4
defines the measured connections and the measures, Appendix B.1 the test that gives each table
row its Δ. All throughputs are in segments of 1460 bytes per second.

- :func:`connections` turns the ``transfers`` table into the server's WWW connections;
- :func:`efcm_capable` marks the *new connections entering an ensemble* (§3.1 of the report's
  Ch. 4: another of the server's connections to the receiver LAN is open when it starts);
- :func:`concurrency_periods` splits a run into the periods of constant concurrency;
- :func:`mean_throughputs` gives T̄1 (overall) and T̄2 (connection-oriented) and
  :func:`concurrent_measures` the concurrent connections' T̄1, T̄2 and mean fairness index;
- :func:`unpaired_t` compares two sets of per-run values (R. Jain, *The Art of Computer
  Systems Performance Analysis*, Wiley, 1991, §13.4.2).

Resolutions ``efcm:A11`` to ``efcm:A14`` (``docs/resolutions.md``) fix what the report leaves
open.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ..metrics import jain_index
from .efcm_network import PAYLOAD_B, WWW_GROUPS

__all__ = ["INITIAL", "LEVELS", "Comparison", "concurrency_periods", "concurrent_measures",
           "connections", "efcm_capable", "mean_throughputs", "new_connection_measures",
           "period_segments", "sign", "unpaired_t"]

INITIAL = ("initial_cwnd", "initial_ssthresh", "initial_srtt_s", "initial_rttvar_s")
"""The transfers' columns of the values a connection starts with: after an ensemble's join
rule re-shared the ensemble, or the configured ones (the report's "initial values" rows)."""

LEVELS = (0.90, 0.95, 0.99)
"""The confidence levels of Appendix B.1."""


def connections(transfers: pd.DataFrame, groups: Sequence[str] = WWW_GROUPS) -> pd.DataFrame:
    """The connections of ``groups`` (the server's WWW sources), one row each.

    Columns ``transfer``, ``name``, ``start_s``, ``end_s`` (``inf`` when still open at the end
    of the run), ``duration_s`` (d_i: opening to the ACK of the last byte, ``NaN`` when open)
    and ``segments`` (s_i = ⌈bytes / 1460⌉, the distinct data segments of the page, resolution
    ``efcm:A12``), sorted by opening time and transfer number; and the values each connection
    started with, :data:`INITIAL`, where the table has them.
    """
    rows = transfers[transfers["name"].isin(list(groups))]
    duration = rows["completion_time_s"].to_numpy(dtype=np.float64)
    start = rows["start_s"].to_numpy(dtype=np.float64)
    out = pd.DataFrame({
        "transfer": rows["transfer"].to_numpy(),
        "name": rows["name"].to_numpy(),
        "start_s": start,
        "end_s": np.where(np.isfinite(duration), start + duration, np.inf),
        "duration_s": duration,
        "segments": np.ceil(rows["size_bytes"].to_numpy(dtype=np.float64) / PAYLOAD_B),
    })
    for column in INITIAL:
        if column in rows:
            out[column] = rows[column].to_numpy(dtype=np.float64)
    return out.sort_values(["start_s", "transfer"], kind="stable").reset_index(drop=True)


def efcm_capable(conns: pd.DataFrame) -> np.ndarray:
    """Which connections open while another of ``conns`` is open (resolution ``efcm:A14``).

    ``conns`` as :func:`connections` sorts them. A connection that closes at the instant another
    opens is not open then; of two opening at one instant, the one with the lower transfer
    number is open when the other opens. Holds for runs without EFCM too (the report's
    connections that "could be controlled").
    """
    start = conns["start_s"].to_numpy(dtype=np.float64)
    ends = np.sort(conns["end_s"].to_numpy(dtype=np.float64))
    opened_before = np.arange(len(start))
    closed_before = np.searchsorted(ends, start, side="right")
    return np.asarray(opened_before - closed_before >= 1)


def concurrency_periods(conns: pd.DataFrame) -> pd.DataFrame:
    """The maximal periods in which the same two or more connections are open (``efcm:A13``).

    Columns ``start_s``, ``end_s`` and ``members`` (a tuple of transfer numbers). A connection
    still open at the end of the run is open until then; periods end at the last finite time.
    """
    events: list[tuple[float, int, int]] = []
    for transfer, start, end in conns[["transfer", "start_s", "end_s"]].itertuples(index=False):
        events.append((float(start), 1, int(transfer)))
        if math.isfinite(end):
            events.append((float(end), 0, int(transfer)))
    events.sort()
    open_now: set[int] = set()
    rows: list[tuple[float, float, tuple[int, ...]]] = []
    i = 0
    while i < len(events):
        t = events[i][0]
        while i < len(events) and events[i][0] == t:
            _, kind, transfer = events[i]
            if kind:
                open_now.add(transfer)
            else:
                open_now.discard(transfer)
            i += 1
        if i < len(events) and len(open_now) >= 2:
            rows.append((t, events[i][0], tuple(sorted(open_now))))
    return pd.DataFrame(rows, columns=["start_s", "end_s", "members"])


def mean_throughputs(segments: Sequence[float] | np.ndarray,
                     durations: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """T̄1 = Σ s_i / Σ d_i (the controller as a whole) and T̄2 = (1/n) Σ s_i / d_i (what one
    connection can expect), §3.3 of the report's Ch. 4. ``(nan, nan)`` with no connection."""
    s = np.asarray(segments, dtype=np.float64)
    d = np.asarray(durations, dtype=np.float64)
    if s.shape != d.shape:
        raise ValueError("segments and durations: expected arrays of one length")
    if s.size == 0:
        return math.nan, math.nan
    if np.any(d <= 0):
        raise ValueError("durations: expected every duration > 0")
    return float(s.sum() / d.sum()), float(np.mean(s / d))


def new_connection_measures(conns: pd.DataFrame, *, start_s: float = 0.0,
                            end_s: float = math.inf) -> pd.DataFrame:
    """T̄1 and T̄2 of the new connections entering an ensemble, per WWW source (TCP 1-3).

    Counts the EFCM-capable connections that open at or after ``start_s`` and complete by
    ``end_s`` (resolution ``efcm:A11``). One row per source name: ``connections``,
    ``capable``, ``t1``, ``t2``, and for each column of :data:`INITIAL` that ``conns`` has,
    its mean over the counted connections (``NaN`` values, no estimate yet, left out).
    """
    capable = efcm_capable(conns)
    counted = (capable & (conns["start_s"] >= start_s).to_numpy()
               & (conns["end_s"] <= end_s).to_numpy()
               & np.isfinite(conns["duration_s"].to_numpy(dtype=np.float64)))
    initial = [c for c in INITIAL if c in conns]
    rows = []
    for name, group in conns.groupby("name", sort=True):
        mask = counted[group.index.to_numpy()]
        t1, t2 = mean_throughputs(group["segments"].to_numpy()[mask],
                                  group["duration_s"].to_numpy()[mask])
        row = {"name": name, "connections": len(group),
               "capable": int(capable[group.index.to_numpy()].sum()), "t1": t1, "t2": t2}
        for column in initial:
            values = group[column].to_numpy(dtype=np.float64)[mask]
            values = values[np.isfinite(values)]
            row[column] = float(values.mean()) if values.size else math.nan
        rows.append(row)
    return pd.DataFrame(rows, columns=["name", "connections", "capable", "t1", "t2", *initial])


def concurrent_measures(periods: pd.DataFrame, sent: pd.DataFrame) -> dict[str, float]:
    """T̄1, T̄2 and the mean fairness index Ī_f of the concurrent connections (``efcm:A13``).

    ``periods`` as :func:`concurrency_periods` gives them, with a ``period`` column or its
    index as the period's number; ``sent`` has a row per period and member: ``period``,
    ``transfer`` and ``segments``, the distinct new data segments the member first sent in the
    period (``efcm:A12``). A connection's time of concurrency c_i is the total length of its
    periods and its throughput its segments in them over c_i; the fairness index of a period
    is Jain's over its members' throughputs in it, and Ī_f the unweighted mean over periods
    (a period in which no member sent anything has no index and is left out).
    Returns ``t1``, ``t2``, ``fairness`` and ``periods``.
    """
    numbers = periods["period"] if "period" in periods else pd.Series(periods.index)
    length = pd.Series((periods["end_s"] - periods["start_s"]).to_numpy(),
                       index=numbers.to_numpy())
    if np.any(length.to_numpy() <= 0):
        raise ValueError("periods: expected every period to end after it starts")
    known = sent["period"].isin(length.index)
    if not known.all():
        raise ValueError("sent.period: expected a period of periods, got "
                         f"{sent.loc[~known, 'period'].iloc[0]!r}")
    rows = sent.assign(length_s=length.loc[sent["period"]].to_numpy())
    per_conn = rows.groupby("transfer")[["segments", "length_s"]].sum()
    t1, t2 = mean_throughputs(per_conn["segments"].to_numpy(), per_conn["length_s"].to_numpy())
    rates = rows["segments"] / rows["length_s"]
    fairness = np.array([jain_index(r.to_numpy()) for _, r in rates.groupby(rows["period"])])
    # A period in which no member sent has no fairness index (0/0): it is left out.
    defined = fairness[np.isfinite(fairness)]
    return {"t1": t1, "t2": t2,
            "fairness": float(defined.mean()) if defined.size else math.nan,
            "periods": float(len(fairness))}


def period_segments(periods: pd.DataFrame, snapshots: pd.DataFrame,
                    counter: str = "acked") -> pd.DataFrame:
    """What each member transferred in each period, from the run's ``concurrency`` snapshots.

    ``snapshots`` has a row per open transfer at every opening and completion of one
    (``time_s``, ``transfer``, ``sent_bytes``: the highest payload byte first sent so far,
    ``acked_bytes``: the payload acknowledged so far); periods begin and end at such instants.
    A member's segments in a period are, by ``counter`` (resolution ``efcm:A12``), the payload
    acknowledged (``acked``) or the new data first sent (``sent``) between the period's bounds,
    in segments of 1460 bytes. Returns ``period``, ``transfer``, ``segments``, one row per
    period and member, as :func:`concurrent_measures` takes them.
    """
    if counter not in ("acked", "sent"):
        raise ValueError(f"counter: expected acked or sent, got {counter!r}")
    # Instants as whole nanoseconds: a period's end is a start plus a duration in floating
    # point, which may differ from the snapshot's time in the last bits.
    ns = np.rint(snapshots["time_s"].to_numpy(dtype=np.float64) * 1e9).astype(np.int64)
    keyed = pd.DataFrame({"ns": ns, "transfer": snapshots["transfer"].to_numpy(),
                          "sent": snapshots[f"{counter}_bytes"].to_numpy(dtype=np.float64)})
    sent = keyed.groupby(["ns", "transfer"], sort=False)["sent"].last().to_dict()
    rows = []
    for period, (start, end, members) in enumerate(
            periods[["start_s", "end_s", "members"]].itertuples(index=False)):
        a, b = round(start * 1e9), round(end * 1e9)
        for transfer in members:
            try:
                before = sent[(a, transfer)]
                after = sent[(b, transfer)]
            except KeyError:
                raise ValueError(
                    f"snapshots: no snapshot of transfer {transfer} at {start!r} s or {end!r} s "
                    "(the run's trace.concurrency must name the connections' groups)") from None
            rows.append((period, transfer, (after - before) / PAYLOAD_B))
    return pd.DataFrame(rows, columns=["period", "transfer", "segments"])


@dataclass(frozen=True)
class Comparison:
    """An unpaired t-test of a measure without EFCM (a) against with EFCM (b), App. B.1."""

    difference: float
    """mean(a) − mean(b): negative when EFCM gives more."""
    s: float
    """Standard deviation of the difference, sqrt(s_a²/n_a + s_b²/n_b)."""
    nu: float
    """Effective degrees of freedom (Jain 1991, §13.4.2)."""
    level: float
    """The highest of :data:`LEVELS` at which the difference is significant, else the lowest."""
    low: float
    high: float
    """The confidence interval at ``level``."""
    sign: str
    """``+`` EFCM significantly higher, ``−`` significantly lower, ``=`` not significant."""


def sign(low: float, high: float) -> str:
    """Δ of a confidence interval of (no EFCM − EFCM) for a measure where more is better:
    ``+`` when it lies below 0, ``−`` above 0, ``=`` when it holds 0 (App. B.1)."""
    if high < 0:
        return "+"
    if low > 0:
        return "−"
    return "="


def unpaired_t(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray,
               levels: Sequence[float] = LEVELS) -> Comparison:
    """Jain's t-test for unpaired observations (1991, §13.4.2) of per-run values ``a`` (no
    EFCM) and ``b`` (EFCM): CI = (x̄_a − x̄_b) ± t[1 − α/2; ν] · s with
    ν = (s_a²/n_a + s_b²/n_b)² / [(s_a²/n_a)²/(n_a + 1) + (s_b²/n_b)²/(n_b + 1)] − 2."""
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.size < 2 or y.size < 2:
        raise ValueError("a, b: expected at least 2 values each")
    if not levels or any(not 0 < lv < 1 for lv in levels):
        raise ValueError(f"levels: expected levels in (0, 1), got {list(levels)!r}")
    va = x.var(ddof=1) / x.size
    vb = y.var(ddof=1) / y.size
    diff = float(x.mean() - y.mean())
    s = math.sqrt(va + vb)
    if s == 0:
        raise ValueError("a, b: expected values that vary (both samples are constant)")
    nu = (va + vb) ** 2 / (va**2 / (x.size + 1) + vb**2 / (y.size + 1)) - 2
    chosen = None
    for level in sorted(levels):
        half = float(stats.t.ppf((1 + level) / 2, nu)) * s
        ci = (level, diff - half, diff + half)
        if chosen is None or sign(ci[1], ci[2]) != "=":
            chosen = ci
    assert chosen is not None
    level, low, high = chosen
    return Comparison(diff, s, float(nu), level, low, high, sign(low, high))
