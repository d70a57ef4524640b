"""Loss measures of parallel flows from a packet event trace (``docs/traces.md``).

The throughput models of n parallel TCP flows (Damjanović (2010) §3.1-§3.3) take one of two
loss measures, and Model B also the number j of flows hit per loss event:

- the **per-flow loss event rate** p: each flow is observed on its own; a loss starts a loss
  event of its flow unless it comes within one RTT of the first loss of that flow's current
  event (then it belongs to that event);
- the **cumulative-flow loss event rate** p_e: the n flows are one flow; a loss of *any* flow
  within one RTT of the first loss of the current cumulative event belongs to that event;
- the **packet loss rate** p_r: lost packets over packets sent;
- **measured j**: the mean number of distinct flows that lose a packet in a cumulative loss
  event (``old j`` is p_r / p_e, the packets lost per cumulative event).

Rates are per packet sent (first transmissions and retransmissions, as N_t in the thesis).
A loss is a ``drop`` event of a data segment, at the time of the drop.

The grouping of losses into events is the Rust core's (``flowshare_core::loss_events``), the
one the TFRC receiver uses (``docs/tfrc.md``), so the two cannot disagree: times are float
seconds here, integer nanoseconds in the receiver, and a loss exactly one RTT after an
event's first loss (``t == start + rtt``, the sum in float) belongs to the event in both.

>>> result = flowshare.run("scenario-with-trace.toml")   # doctest: +SKIP
>>> m = flowshare.analysis.loss_measures(result.events)    # doctest: +SKIP
>>> m.p_e, m.p_r, m.j_measured                             # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import _core

__all__ = ["LossMeasures", "loss_events", "loss_measures", "rounds", "rtt_samples"]


@dataclass(frozen=True)
class LossMeasures:
    """Loss measures of a set of flows over a time window.

    Attributes
    ----------
    n : int
        Number of flows analysed.
    packets_sent, packets_lost : int
        Data segments sent (retransmissions included) and lost, all flows together.
    flow_loss_events : int
        Loss events counted flow by flow (the per-flow measure), all flows together.
    cumulative_loss_events : int
        Loss events of the cumulative flow.
    p : float
        Per-flow loss event rate: ``flow_loss_events / packets_sent``.
    p_e : float
        Cumulative-flow loss event rate: ``cumulative_loss_events / packets_sent``.
    p_r : float
        Packet loss rate: ``packets_lost / packets_sent``.
    j_measured : float
        Mean number of distinct flows losing a packet per cumulative loss event.
    j_old : float
        ``p_r / p_e``: packets lost per cumulative loss event (not capped at n).
    rtt_s : float
        The RTT that groups losses into cumulative events (seconds).
    rtt_mean_s : float
        Mean of every RTT sample of the flows (``NaN`` without samples).
    round_mean_s : float
        Mean round duration over every round of the flows (``NaN`` without rounds).
    per_flow : pandas.DataFrame
        One row per flow: ``flow``, ``packets_sent``, ``packets_lost``, ``loss_events``,
        ``loss_event_rate``, ``loss_rate``, ``rtt_s`` (the RTT grouping its losses),
        ``rtt_mean_s``, ``rtt_samples``, ``round_mean_s``, ``rounds``.
    cumulative_events : pandas.DataFrame
        One row per cumulative loss event: ``start_s``, ``losses``, ``flows`` (distinct flows).
    """

    n: int
    packets_sent: int
    packets_lost: int
    flow_loss_events: int
    cumulative_loss_events: int
    p: float
    p_e: float
    p_r: float
    j_measured: float
    j_old: float
    rtt_s: float
    rtt_mean_s: float
    round_mean_s: float
    per_flow: pd.DataFrame = field(repr=False)
    cumulative_events: pd.DataFrame = field(repr=False)


def loss_events(times: Iterable[float], rtt: float) -> np.ndarray:
    """Group loss times into loss events.

    A loss starts a new event unless it comes within ``rtt`` (inclusive) of the first loss
    of the current event.

    Parameters
    ----------
    times : iterable of float
        Loss times in seconds, in any order.
    rtt : float
        The grouping interval, seconds.

    Returns
    -------
    numpy.ndarray of int
        For each loss in time order, the index of its event (0, 1, ...).

    Raises
    ------
    ValueError
        If a time or ``rtt`` is NaN (and there are losses).
    """
    t = np.sort(_floats(times))
    if not len(t):
        return np.empty(0, dtype=np.int64)
    return _column(_core.loss_event_index(t, float(rtt))).copy()


def _floats(values: Iterable[float]) -> np.ndarray:
    if isinstance(values, np.ndarray):
        return np.asarray(values, dtype=float)
    return np.asarray(list(values), dtype=float)


def _column(col: tuple[str, bytes]) -> np.ndarray:
    """A ``(dtype, bytes)`` column of the core as a (read-only) array."""
    dtype, data = col
    return np.frombuffer(data, dtype=np.dtype(dtype))


def _is(column: pd.Series, value: str) -> np.ndarray:
    return (column.astype(str) == value).to_numpy()


def _window(events: pd.DataFrame, start_s: float, stop_s: float | None) -> pd.DataFrame:
    t = events["time_s"].to_numpy(dtype=float)
    keep = t >= start_s
    if stop_s is not None:
        keep &= t <= stop_s
    return events[keep]


def rtt_samples(events: pd.DataFrame) -> pd.DataFrame:
    """RTT samples from ``send`` and ``ack`` events of data segments.

    An ACK that newly acknowledges data (``acked > 0``) and does not echo a retransmission
    (``retx`` false, Karn's rule) gives the sample ``t_ack − t_send``, where ``t_send`` is the
    first transmission of the segment below its cumulative ACK (``seq − 1``), which is the
    segment whose arrival triggered it.

    Returns
    -------
    pandas.DataFrame
        ``flow``, ``time_s`` (of the ACK), ``rtt_s``.
    """
    kind = events["kind"]
    send = events[_is(kind, "send") & _is(events["packet"], "data") & ~events["retx"].to_numpy(bool)]
    ack = events[
        _is(kind, "ack")
        & _is(events["packet"], "ack")
        & ~events["retx"].to_numpy(bool)
        & (events["acked"].to_numpy() > 0)
    ]
    first = send.groupby([send["flow"].to_numpy(), send["seq"].to_numpy()])["time_s"].min()
    keys = pd.MultiIndex.from_arrays([ack["flow"].to_numpy(), ack["seq"].to_numpy() - 1])
    sent_at = first.reindex(keys).to_numpy()
    ok = ~np.isnan(sent_at)
    return pd.DataFrame(
        {
            "flow": ack["flow"].to_numpy()[ok].astype(np.int64),
            "time_s": ack["time_s"].to_numpy(dtype=float)[ok],
            "rtt_s": ack["time_s"].to_numpy(dtype=float)[ok] - sent_at[ok],
        }
    )


def rounds(events: pd.DataFrame, flow: int) -> np.ndarray:
    """Round durations of one flow, in seconds.

    A round starts with the first data segment sent at or after its start and ends when the
    first ACK acknowledging that segment arrives (as in the PFTK model); the next round
    starts then. The last, unfinished round is not counted.
    """
    mine = events[events["flow"].to_numpy() == flow]
    kind = mine["kind"]
    send = mine[_is(kind, "send") & _is(mine["packet"], "data")]
    ack = mine[_is(kind, "ack") & _is(mine["packet"], "ack")]
    st, sseq = send["time_s"].to_numpy(float), send["seq"].to_numpy()
    at, aseq = ack["time_s"].to_numpy(float), ack["seq"].to_numpy()
    # Cumulative ACKs only grow; a running maximum makes that exact for searchsorted.
    aseq = np.maximum.accumulate(aseq) if len(aseq) else aseq
    out = []
    start = -np.inf
    while True:
        i = int(np.searchsorted(st, start, side="left"))
        if i >= len(st):
            break
        begin, marker = st[i], sseq[i]
        k = int(np.searchsorted(aseq, marker + 1, side="left"))
        k = max(k, int(np.searchsorted(at, begin, side="left")))
        while k < len(at) and aseq[k] <= marker:
            k += 1
        if k >= len(at):
            break
        out.append(at[k] - begin)
        start = at[k]
    return np.asarray(out, dtype=float)


def loss_measures(
    events: pd.DataFrame,
    *,
    rtt: float | Mapping[int, float] | None = None,
    flows: Iterable[int] | None = None,
    start_s: float = 0.0,
    stop_s: float | None = None,
) -> LossMeasures:
    """Per-flow and cumulative loss measures, p_r, j, RTT and rounds from an event trace.

    Parameters
    ----------
    events : pandas.DataFrame
        An event trace (``RunResult.events``) with at least the ``send`` and ``drop``
        events of the flows, and their ``ack`` events unless ``rtt`` is given.
    rtt : float or mapping of int to float, optional
        The RTT (seconds) within which losses form one event: one value for every flow, or
        one per flow. By default each flow's mean measured RTT groups its own losses, and
        the mean of all samples groups the cumulative flow's.
    flows : iterable of int, optional
        The n flows of the aggregate; default every flow that sent data in the window.
    start_s, stop_s : float
        Only events in ``[start_s, stop_s]`` count (warm-up exclusion).

    Returns
    -------
    LossMeasures

    Raises
    ------
    ValueError
        If the trace lacks a needed column, or an RTT is needed and cannot be measured.
    """
    needed = {"time_s", "kind", "flow", "packet", "seq", "retx", "acked"}
    missing = needed - set(events.columns)
    if missing:
        raise ValueError(f"events: missing columns {sorted(missing)}")
    ev = _window(events, start_s, stop_s)
    kind, packet = ev["kind"], ev["packet"]
    data = _is(packet, "data")
    send = ev[_is(kind, "send") & data]
    drop = ev[_is(kind, "drop") & data]
    if flows is None:
        ids = sorted(set(send["flow"].to_numpy().tolist()) | set(drop["flow"].to_numpy().tolist()))
    else:
        ids = sorted(set(int(f) for f in flows))
    samples = rtt_samples(ev)
    pooled = float(samples["rtt_s"].mean()) if len(samples) else float("nan")

    def flow_rtt(f: int) -> float:
        if isinstance(rtt, Mapping):
            if f not in rtt:
                raise ValueError(f"rtt: no value for flow {f}")
            return float(rtt[f])
        if rtt is not None:
            return float(rtt)
        mine = samples["rtt_s"][samples["flow"] == f]
        value = float(mine.mean()) if len(mine) else pooled
        if not np.isfinite(value):
            raise ValueError("no RTT samples in the trace (trace ack events or give rtt=...)")
        return value

    # The losses of the n flows in time order: flow by flow and as one cumulative flow.
    in_set = np.isin(drop["flow"].to_numpy(), ids)
    lost_t = drop["time_s"].to_numpy(float)[in_set]
    lost_f = drop["flow"].to_numpy()[in_set].astype(np.int64)
    order = np.argsort(lost_t, kind="stable")
    lost_t, lost_f = lost_t[order], lost_f[order]
    lost_ids, lost_counts = np.unique(lost_f, return_counts=True)
    lost_of = dict(zip(lost_ids.tolist(), lost_counts.tolist()))

    rtts = []
    for f in ids:
        try:
            rtts.append(flow_rtt(f))
        except ValueError:
            if lost_of.get(f, 0):
                raise
            rtts.append(float("nan"))
    events_of_flow = (
        _column(_core.flow_loss_events(lost_t, lost_f, np.asarray(ids, dtype=np.int64),
                                       np.asarray(rtts, dtype=float)))
        if len(lost_t) else np.zeros(len(ids), dtype=np.int64)
    )  # fmt: skip

    has_acks = bool(_is(ev["kind"], "ack").any())
    rows = []
    all_rounds = []
    for f, r, n_events in zip(ids, rtts, events_of_flow.tolist()):
        lost = lost_of.get(f, 0)
        sent = int((send["flow"].to_numpy() == f).sum())
        mine = samples["rtt_s"][samples["flow"] == f]
        durations = rounds(ev, f) if has_acks else np.empty(0)
        all_rounds.append(durations)
        rows.append(
            {
                "flow": f,
                "packets_sent": sent,
                "packets_lost": lost,
                "loss_events": n_events,
                "loss_event_rate": n_events / sent if sent else float("nan"),
                "loss_rate": lost / sent if sent else float("nan"),
                "rtt_s": r,
                "rtt_mean_s": float(mine.mean()) if len(mine) else float("nan"),
                "rtt_samples": len(mine),
                "round_mean_s": float(durations.mean()) if len(durations) else float("nan"),
                "rounds": len(durations),
            }
        )
    per_flow = pd.DataFrame(
        rows,
        columns=[
            "flow", "packets_sent", "packets_lost", "loss_events", "loss_event_rate",
            "loss_rate", "rtt_s", "rtt_mean_s", "rtt_samples", "round_mean_s", "rounds",
        ],
    )  # fmt: skip

    if isinstance(rtt, Mapping):
        agg_rtt = float(np.mean([float(rtt[f]) for f in ids])) if ids else float("nan")
    elif rtt is not None:
        agg_rtt = float(rtt)
    else:
        agg_rtt = pooled
    if len(lost_t) and not np.isfinite(agg_rtt):
        raise ValueError("no RTT samples in the trace (trace ack events or give rtt=...)")
    if len(lost_t):
        table = _core.cumulative_loss_events(lost_t, lost_f, agg_rtt)
        cum_events = pd.DataFrame({k: _column(table[k]) for k in ("start_s", "losses", "flows")})
    else:
        cum_events = pd.DataFrame(
            {
                "start_s": np.empty(0, dtype=float),
                "losses": np.empty(0, dtype=np.int64),
                "flows": np.empty(0, dtype=np.int64),
            }
        )
    sent_total = int(per_flow["packets_sent"].sum())
    lost_total = int(per_flow["packets_lost"].sum())
    flow_events = int(per_flow["loss_events"].sum())
    n_cum = len(cum_events)

    def rate(x: int) -> float:
        return x / sent_total if sent_total else float("nan")

    p_e, p_r = rate(n_cum), rate(lost_total)
    joined = np.concatenate(all_rounds) if all_rounds else np.empty(0)
    return LossMeasures(
        n=len(ids),
        packets_sent=sent_total,
        packets_lost=lost_total,
        flow_loss_events=flow_events,
        cumulative_loss_events=n_cum,
        p=rate(flow_events),
        p_e=p_e,
        p_r=p_r,
        j_measured=float(cum_events["flows"].mean()) if n_cum else float("nan"),
        j_old=p_r / p_e if n_cum else float("nan"),
        rtt_s=agg_rtt,
        rtt_mean_s=pooled,
        round_mean_s=float(joined.mean()) if len(joined) else float("nan"),
        per_flow=per_flow,
        cumulative_events=cum_events,
    )
