r"""Chapter 3: the RTO estimator at constant RTT and the cost of one mis-retransmission.

Hasegawa (2000), ch. 3 (Eqs 3.1-3.16). The RTO estimator is Jacobson's (Eqs 3.1-3.6);
the extra delay ``D`` of one spurious timeout is Eqs 3.8-3.15.

Units: times in seconds, the link rate ``bandwidth`` in bit/s, the maximum window
``window`` and the packet size ``packet`` in bytes (the thesis writes Kbyte; only
their ratio enters ``D/rtt``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._common import as_float, check_choice, check_fraction, check_nonnegative, check_positive, out

__all__ = [
    "atm_window_rtt",
    "extra_delay",
    "extra_delay_rtts",
    "is_mis_retransmission",
    "misretransmission_windows",
    "rto_after",
    "rto_series",
    "rtt_window_limited",
]


def rto_series(
    rtt_samples: ArrayLike,
    *,
    a0: float | None = None,
    d0: float | None = None,
    g: float = 0.125,
    h: float = 0.25,
    rto_k: float = 4.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Jacobson's estimator over a sequence of RTT samples (Eqs 3.1-3.6).

    .. math::
        Err_n = RTT_n - A_{n-1},\quad A_n = A_{n-1} + g\,Err_n,\quad
        D_n = D_{n-1} + h(|Err_n| - D_{n-1}),\quad RTO_n = A_n + k\,D_n

    ``a0`` and ``d0`` default to the first sample and half of it (the BSD start-up).
    Returns ``(A, D, RTO)``, arrays of the sample count, in the samples' unit.

    >>> a, d, rto = rto_series([0.1] * 3, a0=0.1, d0=0.02)
    >>> [round(float(x), 5) for x in rto]  # 0.1 + 4 * 0.02 * 0.75**n
    [0.16, 0.145, 0.13375]
    """
    x = check_nonnegative("rtt_samples", rtt_samples)
    if x.ndim != 1 or x.size == 0:
        raise ValueError("rtt_samples must be a non-empty 1-D sequence")
    check_fraction("g", g)
    check_fraction("h", h)
    check_nonnegative("rto_k", rto_k)
    a = float(x[0]) if a0 is None else float(check_nonnegative("a0", a0))
    d = a / 2 if d0 is None else float(check_nonnegative("d0", d0))
    big_a, big_d = np.empty_like(x), np.empty_like(x)
    for n, sample in enumerate(x):
        err = sample - a
        a = a + g * err
        d = d + h * (abs(err) - d)
        big_a[n], big_d[n] = a, d
    return big_a, big_d, big_a + rto_k * big_d


def rto_after(
    n: ArrayLike,
    rtt: ArrayLike,
    a0: ArrayLike,
    d0: ArrayLike,
    *,
    g: float = 0.125,
    h: float = 0.25,
    rto_k: float = 4.0,
) -> Any:
    r"""RTO after ``n`` samples of a constant ``rtt`` (closed form of Eqs 3.1-3.6; Eq 3.7).

    With a constant RTT, :math:`A_n - rtt = (1-g)^n (A_0 - rtt)` and the deviation
    :math:`D_n` decays by :math:`(1-h)` per sample towards :math:`|A_{n-1} - rtt|`, so
    :math:`\lim_{n\to\infty} RTO_n = rtt` (Eq 3.7). Vectorised over all arguments;
    the result is in the unit of ``rtt``. It agrees with :func:`rto_series`.

    >>> round(rto_after(0, 3.86e-3, 3.86e-3, 0.05e-3) * 1e3, 2)  # the 4.06 ms of §3.2.2
    4.06
    >>> round(rto_after(200, 0.1, 0.3, 0.05), 9)  # Eq 3.7: RTO -> rtt
    0.1
    """
    nn = check_nonnegative("n", n)
    if np.any(nn != np.floor(nn)):
        raise ValueError("n must be a whole number of samples")
    r = check_nonnegative("rtt", rtt)
    a0_ = check_nonnegative("a0", a0)
    d0_ = check_nonnegative("d0", d0)
    check_fraction("g", g)
    check_fraction("h", h)
    e0 = a0_ - r  # A_0 - rtt
    a_n = r + (1 - g) ** nn * e0
    # D_n = (1-h)^n D_0 + h sum_{j=1..n} (1-h)^{n-j} |e_{j-1}|, |e_{j-1}| = (1-g)^{j-1} |e0|
    q = (1 - g) / (1 - h)
    with np.errstate(divide="ignore", invalid="ignore"):
        geom = np.where(np.isclose(q, 1.0), nn, (1 - q**nn) / (1 - q))
    d_n = (1 - h) ** nn * d0_ + h * (1 - h) ** np.maximum(nn - 1, 0) * np.abs(e0) * np.where(nn > 0, geom, 0)
    return out(a_n + rto_k * d_n)


def atm_window_rtt(window: ArrayLike, bandwidth: ArrayLike, *, cell_tax: float = 53 / 48) -> Any:
    r"""Window-limited RTT [s] of a full window of ``window`` bytes over ATM (§3.2.2).

    :math:`RTT = 8\,W\,(53/48)/BW`: a window-limited sender on a fixed ER share sees the
    window's transmission time, including the cell tax.

    >>> round(atm_window_rtt(64 * 1024, 150e6) * 1e3, 2)  # Exp. 2 before the join: 3.86 ms
    3.86
    """
    w = check_nonnegative("window", window)
    bw = check_positive("bandwidth", bandwidth)
    return out(8 * w * cell_tax / bw)


def misretransmission_windows(window: ArrayLike, packet: ArrayLike) -> tuple[Any, Any]:
    r"""Windows :math:`cwnd(t_1)` and :math:`cwnd(t_2)` after a spurious timeout (Eqs 3.8, 3.9).

    .. math:: cwnd(t_1) = \sqrt{mW + (W/2)^2},\qquad cwnd(t_2) = cwnd(t_1)/2

    in the unit of ``window`` and ``packet`` (bytes here).

    >>> misretransmission_windows(64.0, 4.0)  # Kbyte: sqrt(256 + 1024) = 35.78
    (35.77708763999664, 17.88854381999832)
    """
    w = check_positive("window", window)
    m = check_positive("packet", packet)
    c1 = np.sqrt(m * w + (w / 2) ** 2)
    return out(c1), out(c1 / 2)


def extra_delay_rtts(window: ArrayLike, packet: ArrayLike) -> Any:
    r"""Extra delay of one mis-retransmission in units of rtt, Eq 3.14 (closed form).

    .. math:: \frac{D}{rtt} = \frac{17W + 4m - 8\sqrt{4mW + W^2}}{32m}

    It depends on :math:`W/m` only. Eqs 3.11-3.13 as printed are not consistent with
    3.14 (hasegawa:A18); 3.14 is implemented as printed.

    >>> round(extra_delay_rtts(64, 1), 2), round(extra_delay_rtts(64, 8), 2)
    (17.63, 1.93)
    """
    w = check_positive("window", window)
    m = check_positive("packet", packet)
    return out((17 * w + 4 * m - 8 * np.sqrt(4 * m * w + w * w)) / (32 * m))


def rtt_window_limited(window: ArrayLike, packet: ArrayLike, tau: ArrayLike, bandwidth: ArrayLike) -> Any:
    r"""The steady RTT [s] before the spurious timeout (Eq 3.15).

    .. math:: rtt = \begin{cases} 2\tau + m/BW, & W \le 2\tau BW\\ W/BW, & W > 2\tau BW\end{cases}

    with ``window`` and ``packet`` in bytes and ``bandwidth`` in bit/s.

    >>> round(rtt_window_limited(64 * 1024, 4 * 1024, 1e-3, 150e6) * 1e3, 3)  # Exp. 1: W/BW
    3.495
    """
    w = check_positive("window", window)
    m = check_positive("packet", packet)
    t = check_nonnegative("tau", tau)
    bw = check_positive("bandwidth", bandwidth)
    pipe = 2 * t * bw / 8
    return out(np.where(w <= pipe, 2 * t + 8 * m / bw, 8 * w / bw))


def extra_delay(
    window: ArrayLike,
    packet: ArrayLike,
    tau: ArrayLike,
    bandwidth: ArrayLike,
    *,
    regime: str = "pipe",
    floor_at_rtt: bool = False,
) -> Any:
    r"""Extra delay ``D`` [s] caused by one mis-retransmission (Eqs 3.10, 3.14, 3.15).

    ``regime="pipe"`` (default, resolution hasegawa:A18): :math:`D = rtt` (Eq 3.10) when
    :math:`cwnd(t_2) \ge 2\tau BW` (the halved window still fills the pipe), otherwise
    Eq 3.14. ``regime="formula"`` always uses Eq 3.14. Eq 3.14 drops below one rtt for
    large packets (e.g. W/m = 4 gives 0.84 rtt); ``floor_at_rtt=True`` floors D at rtt.

    ``window`` and ``packet`` in bytes, ``tau`` one-way in seconds, ``bandwidth`` in bit/s.

    >>> d = extra_delay(64 * 1024, 4 * 1024, 1e-3, 150e6)  # Exp. 1 parameters
    >>> round(d * 1e3, 1)  # 4.15 rtt of 3.50 ms; the simulated value is about 6 ms (§3.2.2)
    14.5
    """
    check_choice("regime", regime, ("pipe", "formula"))
    w = check_positive("window", window)
    m = check_positive("packet", packet)
    t = check_nonnegative("tau", tau)
    bw = check_positive("bandwidth", bandwidth)
    rtt = as_float(rtt_window_limited(w, m, t, bw))
    ratio = as_float(extra_delay_rtts(w, m))
    if floor_at_rtt:
        ratio = np.maximum(ratio, 1.0)
    if regime == "pipe":
        _, c2 = misretransmission_windows(w, m)
        ratio = np.where(as_float(c2) >= 2 * t * bw / 8, 1.0, ratio)
    return out(ratio * rtt)


def is_mis_retransmission(observed_rtt: ArrayLike, rtt_before: ArrayLike, misrx_k: float = 0.5) -> Any:
    r"""The detection rule (Eq 3.16): the retransmission was spurious if its RTT < k × the RTT before.

    ``observed_rtt`` is the time from the retransmission to the first ACK that advances
    ``snd_una``; ``rtt_before`` the last valid RTT sample before the timeout (hasegawa:A19).
    The thesis uses ``misrx_k = 0.5``; ``0 < misrx_k < 1``.

    >>> is_mis_retransmission([0.5e-3, 3.5e-3], 3.86e-3)
    array([ True, False])
    """
    o = check_nonnegative("observed_rtt", observed_rtt)
    r = check_nonnegative("rtt_before", rtt_before)
    k = float(misrx_k)
    if not 0 < k < 1:
        raise ValueError(f"misrx_k must be in (0, 1) (got {k:g})")
    res = o < k * r
    return bool(res) if res.ndim == 0 else res
