r"""Chapter 4: ABR binary rate control, parameter tuning formulas (Eqs 4.5-4.7).

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

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._common import check_nonnegative, check_positive, out

__all__ = [
    "CELL_BYTES",
    "CELL_PAYLOAD_BYTES",
    "TABLE_4_1",
    "TABLE_4_2",
    "aal5_cells",
    "abr_icr",
    "abr_q_max",
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
