r"""Chapter 4: ABR binary rate control, parameter tuning formulas (Eqs 4.5-4.7) and the
rate loop the printed source and switch rules make on their own (:func:`abr_rate_loop`).

Hasegawa (2000), ch. 4, after Ohsaki et al. [47]. The formulas are implemented as
printed in the thesis (resolution hasegawa:A25): the OCR of Eq 4.5 is not dimensionally
consistent and Condition 2 (no under-utilisation) is omitted in the thesis, so these
functions are not expected to reproduce the tuned parameters of Table 4.2, which is
given here as data (:data:`TABLE_4_2`).

Units (explicit everywhere): queue lengths and buffers in **cells**, rates (``bw``,
``pcr``, ``icr``, ``air``) in **cells/ms**, delays in **ms**. ``air`` is the additive
increase per backward RM cell, :math:`AIR = AIRF\cdot PCR/N_{RM}` (:func:`air_from_airf`);
``rdf`` is the "RDF factor" of Table 4.1 (16 by default; the divisor form, ACR is cut
by ACR/RDF per marked RM cell).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._common import check_nonnegative, check_positive, check_probability, out

__all__ = [
    "CELL_BYTES",
    "CELL_PAYLOAD_BYTES",
    "RateLoop",
    "TABLE_4_1",
    "TABLE_4_2",
    "aal5_cells",
    "abr_icr",
    "abr_q_max",
    "abr_rate_loop",
    "abr_xrm",
    "air_from_airf",
    "bytes_to_cells",
    "mbps_to_cells_per_ms",
]

CELL_BYTES = 53
CELL_PAYLOAD_BYTES = 48

#: Table 4.1, the ABR/UBR parameters (rates in cells/ms, times in ms).
TABLE_4_1: dict[str, float] = {
    "packet_bytes": 4352,
    "receiver_window_bytes": 64 * 1024,
    "pcr": 353.2,
    "mcr": 353.2 / 1000,
    "n_rm": 32,
    "xdf": 0.5,
    "airf": 1 / 64,
    "rdf": 16,
    "icr": 353.2 / 20,
    "x_rm": 32,
    "tof": 2,
    "tdf": 1 / 8,
    "bw": 353.2,
    "n_vc": 10,
    "run_s": 50,
}

#: Table 4.2, tuned (AIRF, RDF factor) by buffer size in Kbyte (tau = 1.0 ms, N_VC = 10).
#: The text gives AIRF = 1/128 for 300 Kbyte (hasegawa:A26); both sets should be run.
TABLE_4_2: dict[int, tuple[float, float]] = {
    10: (1 / 256, 4),
    50: (1 / 256, 4),
    100: (1 / 128, 4),
    200: (1 / 256, 2),
    300: (1 / 256, 2),
}


def bytes_to_cells(size: ArrayLike, *, cell_bytes: int = CELL_BYTES) -> Any:
    """A buffer of ``size`` bytes in 53-byte cells (how the thesis converts: 300 Kbyte ≈ 5,800 cells).

    >>> round(bytes_to_cells(300 * 1024))
    5796
    """
    return out(check_nonnegative("size", size) / cell_bytes)


def aal5_cells(packet: ArrayLike) -> Any:
    """Cells of one AAL5 frame carrying ``packet`` bytes (8-byte trailer, 48-byte payloads).

    >>> aal5_cells(4352)  # Table 4.1's TCP packet
    91.0
    """
    p = check_nonnegative("packet", packet)
    return out(np.ceil((p + 8) / CELL_PAYLOAD_BYTES))


def mbps_to_cells_per_ms(rate: ArrayLike) -> Any:
    """A line rate in Mbit/s as 53-byte cells per ms.

    >>> round(mbps_to_cells_per_ms(149.76), 1)  # Table 4.1: 353.2 cells/ms
    353.2
    """
    return out(check_nonnegative("rate", rate) * 1e6 / (8 * CELL_BYTES) / 1e3)


def air_from_airf(airf: ArrayLike, pcr: ArrayLike, n_rm: ArrayLike = 32) -> Any:
    r"""Additive increase per backward RM cell [cells/ms]: :math:`AIR = AIRF\cdot PCR/N_{RM}`.

    >>> air_from_airf(1 / 64, 353.2, 32)  # each unmarked BRM adds N_RM * AIR = AIRF * PCR
    0.1724609375
    """
    return out(check_nonnegative("airf", airf) * check_positive("pcr", pcr) / check_positive("n_rm", n_rm))


def abr_q_max(
    q_threshold: ArrayLike,
    air: ArrayLike,
    rdf: ArrayLike,
    n_vc: ArrayLike,
    bw: ArrayLike,
    tau: ArrayLike,
) -> Any:
    r"""Maximum switch queue [cells] under binary ABR control, Eq 4.5 as printed (Condition 1).

    .. math::
        Q_{max} = Q + RDF\sqrt{\frac{2\,AIR\,N_{VC}\,Q}{BW}}
                  - N_{VC}\,RDF\,\ln\!\left(1 + \frac{2\,AIR\,Q}{BW}\right)
                  + \tau\sqrt{2\,AIR\,BW\,Q} + AIR\,N_{VC}\,RDF\,\tau + \frac{AIR\,BW\,\tau^2}{2}

    ``q_threshold`` (Q) in cells (half the buffer), ``air`` in cells/ms, ``bw`` in cells/ms,
    ``tau`` in ms, ``rdf`` and ``n_vc`` dimensionless. Condition 1 is ``BL >= Q_max``.
    The printed equation is OCR'd and mixes dimensions (hasegawa:A25): use it for trends, not to reproduce Table 4.2.

    >>> round(abr_q_max(2898, air_from_airf(1 / 64, 353.2), 16, 10, 353.2, 1.0), 1)
    3420.5
    """
    q = check_nonnegative("q_threshold", q_threshold)
    a = check_nonnegative("air", air)
    r = check_nonnegative("rdf", rdf)
    n = check_positive("n_vc", n_vc)
    b = check_positive("bw", bw)
    t = check_nonnegative("tau", tau)
    return out(
        q
        + r * np.sqrt(2 * a * n * q / b)
        - n * r * np.log1p(2 * a * q / b)
        + t * np.sqrt(2 * a * b * q)
        + a * n * r * t
        + a * b * t * t / 2
    )


def abr_icr(buffer: ArrayLike, q_max: ArrayLike, tau: ArrayLike, bw: ArrayLike, pcr: ArrayLike) -> Any:
    r"""Largest safe initial cell rate [cells/ms] for a new connection (Eq 4.6).

    .. math:: ICR = \min\!\left(PCR,\ \frac{\max(BL - Q_{max}, 0)}{\tau + Q_{max}/BW}\right)

    ``buffer`` (BL) and ``q_max`` in cells, ``tau`` in ms, ``bw`` and ``pcr`` in cells/ms.

    >>> abr_icr(5796, 3000, 1.0, 353.2, 353.2)  # 2796 / (1 + 8.494) = 294.5
    294.5088870332816
    """
    bl = check_nonnegative("buffer", buffer)
    qm = check_nonnegative("q_max", q_max)
    t = check_nonnegative("tau", tau)
    b = check_positive("bw", bw)
    p = check_positive("pcr", pcr)
    with np.errstate(divide="ignore"):
        room = np.maximum(bl - qm, 0.0) / (t + qm / b)
    return out(np.minimum(p, np.where(t + qm / b > 0, room, math.inf)))


def abr_xrm(icr: ArrayLike, q_max: ArrayLike, tau: ArrayLike, bw: ArrayLike, n_rm: ArrayLike = 32) -> Any:
    r"""Number of forward RM cells without feedback before the source backs off (Eq 4.7).

    .. math:: X_{RM} = \frac{ICR}{N_{RM}}\left(\tau + \frac{Q_{max}}{BW}\right)

    ``icr`` and ``bw`` in cells/ms, ``q_max`` in cells, ``tau`` in ms; the result is a
    count of RM cells (cells/ms × ms / cells-per-RM-cell).

    >>> round(abr_xrm(294.5, 3000, 1.0, 353.2), 1)
    87.4
    """
    i = check_nonnegative("icr", icr)
    qm = check_nonnegative("q_max", q_max)
    t = check_nonnegative("tau", tau)
    b = check_positive("bw", bw)
    n = check_positive("n_rm", n_rm)
    return out(i / n * (t + qm / b))


@dataclass(frozen=True)
class RateLoop:
    """What :func:`abr_rate_loop` measured over its run."""

    throughput: float
    """Data cells the link carried over its capacity × the run: the RM cells (one in N_RM) are
    left out, as the thesis's effective throughput leaves them out. No TCP runs, so no cell is
    wasted on a packet broken elsewhere: an upper bound on the effective throughput."""
    busy: float
    """Share of the run the link was sending."""
    lost_cells: float
    """Cells the full buffer refused."""
    marks: int
    """Forward RM cells the switch marked."""
    min_rate: float
    """Lowest summed ACR [cells/ms] once ``settle`` ms have passed and every source has
    started (infinite if the run ends before)."""
    max_queue: float
    """Longest queue [cells]."""


def abr_rate_loop(
    n_vc: int,
    buffer: float,
    airf: float,
    rdf: float,
    tau: float,
    *,
    bw: float = 353.2,
    pcr: float = 353.2,
    icr: float | None = None,
    mcr: float | None = None,
    n_rm: int = 32,
    x_rm: int = 32,
    xdf: float = 0.5,
    threshold: float | None = None,
    start_spacing: float = 1.0,
    duration: float = 1000.0,
    settle: float = 100.0,
) -> RateLoop:
    r"""The binary ABR loop of §4.1 with greedy sources and no TCP: what the printed rules do.

    ``n_vc`` sources, started ``start_spacing`` ms apart at ``icr`` (default PCR/20), send
    cells at their ACR, a forward RM cell first and then one in every ``n_rm``, into one FIFO
    switch buffer of ``buffer`` cells served at ``bw`` cells/ms, as a fluid (a full buffer
    refuses the excess). A forward RM cell leaves the switch after the cells ahead of it and is
    marked when the queue it leaves behind exceeds ``threshold`` (half the buffer; marking on
    departure, ``hasegawa:A59``); its backward RM cell reaches the source 2·``tau`` ms later
    (the switch next to the sources, as in Fig 4.1, where the access links have no delay).
    The source then applies Eq 4.1 (unmarked: ACR + AIRF·PCR, at most PCR) or Eq 4.2 (marked:
    ACR − ACR/RDF, at least MCR, default PCR/1000; ``rdf`` is the RDF factor of Table 4.1,
    ``hasegawa:A22``), and rule (b), Eq 4.3, when ``x_rm`` forward RM cells went unanswered.
    Rule (c) never fires: a greedy source is never silent.

    The model isolates the rate loop from TCP: where a simulation of TCP over the cells agrees
    with it, a gap to the thesis lies in the rules themselves. Event-driven and exact for the
    fluid queue; deterministic. Rates in cells/ms, times in ms, buffers in cells.

    >>> r = abr_rate_loop(10, 5796, 1 / 128, 2, 1.0)  # §4.2.3's tuning for τ = 1 ms, 300 Kbyte
    >>> round(r.throughput, 2), r.lost_cells
    (0.96, 0.0)
    """
    n = int(check_positive("n_vc", n_vc))
    if n != n_vc:
        raise ValueError(f"n_vc must be a whole number (got {n_vc!r})")
    b = float(check_positive("buffer", buffer))
    inc = float(check_positive("airf", airf)) * float(check_positive("pcr", pcr))
    cut = 1 / float(check_positive("rdf", rdf))
    if cut > 1:
        raise ValueError(f"rdf must be >= 1 (got {rdf:g})")
    delay = 2 * float(check_nonnegative("tau", tau))
    link = float(check_positive("bw", bw))
    start_rate = pcr / 20 if icr is None else float(check_positive("icr", icr))
    floor = pcr / 1000 if mcr is None else float(check_nonnegative("mcr", mcr))
    every = float(check_positive("n_rm", n_rm))
    unanswered_max = float(check_positive("x_rm", x_rm))
    back_off = float(check_probability("xdf", xdf))
    mark_above = b / 2 if threshold is None else float(check_nonnegative("threshold", threshold))
    spacing = float(check_nonnegative("start_spacing", start_spacing))
    end = float(check_positive("duration", duration))
    settled = float(check_nonnegative("settle", settle))

    rate = [0.0] * n               # ACR; 0 until the source starts
    cells = [0.0] * n              # cells sent since the last forward RM cell
    unanswered = [0] * n           # forward RM cells since the last backward one (rule b)
    admitted = [0.0] * n           # a full buffer admits this source's RM cells in this proportion
    starts = [i * spacing for i in range(n)]
    started = 0
    pending: list[tuple[float, int, int, bool]] = []   # (time, 0 leaves switch | 1 back at source, vc, mark)
    t = q = served = busy = lost = 0.0
    total = 0.0
    marks = 0
    min_rate, max_queue = math.inf, 0.0
    while True:
        rm_at = [t + max(every - cells[i], 0.0) / rate[i] if rate[i] > 0 else math.inf
                 for i in range(n)]
        vc = min(range(n), key=rm_at.__getitem__)
        nxt = min(end, rm_at[vc], starts[started] if started < n else math.inf,
                  pending[0][0] if pending else math.inf)
        dt = nxt - t
        if dt > 0:
            if total >= link:
                fill = (b - q) / (total - link) if total > link else math.inf
                if dt <= fill:
                    q += (total - link) * dt
                else:
                    lost += (total - link) * (dt - fill)
                    q = b
                served += link * dt
                busy += dt
            else:
                drain = q / (link - total)
                if dt <= drain:
                    q -= (link - total) * dt
                    served += link * dt
                    busy += dt
                else:
                    served += link * drain + total * (dt - drain)
                    busy += drain + (dt - drain) * total / link
                    q = 0.0
            for i in range(n):
                cells[i] += rate[i] * dt
            t = nxt
            max_queue = max(max_queue, q)
        if t >= end:
            break
        if pending and pending[0][0] <= t:
            _, kind, i, marked = heapq.heappop(pending)
            if kind == 0:                       # leaves the switch: marked on departure
                marked = q > mark_above
                marks += marked
                heapq.heappush(pending, (t + delay, 1, i, marked))
            else:                               # the backward RM cell is back
                unanswered[i] = 0
                rate[i] = max(rate[i] * (1 - cut), floor) if marked else min(rate[i] + inc, pcr)
        elif started < n and starts[started] <= t:
            rate[started] = start_rate
            cells[started] = every              # the first cell is a forward RM cell
            started += 1
        else:
            i = vc
            if unanswered[i] >= unanswered_max:
                rate[i] = max(rate[i] * (1 - back_off), floor)
            cells[i] -= every
            unanswered[i] += 1
            full = q >= b and total > link
            admitted[i] += link / total if full else 1.0
            if admitted[i] >= 1.0:
                admitted[i] -= 1.0
                heapq.heappush(pending, (t + q / link, 0, i, False))
        total = sum(rate)
        if t >= settled and started == n:
            min_rate = min(min_rate, total)
    return RateLoop(throughput=served * (every - 1) / every / (link * end), busy=busy / end,
                    lost_cells=lost, marks=marks, min_rate=min_rate, max_queue=max_queue)
