r"""Chapter 2: two connections sharing a bottleneck (Tahoe, Reno, Vegas, Enhanced Vegas).

Hasegawa, *Congestion and Fairness Control Mechanisms of TCP for the High-Speed Internet*,
PhD thesis, Osaka University, 2000, ch. 2 (Eqs 2.1-2.36).

Units: windows and queues in packets, the bottleneck rate ``mu`` in packets/s, the one-way
propagation delays ``tau1``, ``tau2`` in seconds (the round-trip propagation delay is
``2 * tau``, resolution hasegawa:A10).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._common import as_float, check_choice, check_nonnegative, check_positive, out

__all__ = [
    "GOLDEN_QUEUE_FACTOR",
    "efficiency_line",
    "enhanced_vegas_centre",
    "enhanced_vegas_window",
    "loss_line",
    "loss_window",
    "tahoe_fixed_point",
    "tahoe_throughput",
    "tahoe_windows",
    "vegas_queue_range",
    "vegas_ratio_range",
    "vegas_single_window_range",
    "vegas_window_bound",
    "vegas_window_bounds",
]

#: :math:`(3+\sqrt5)/2`, the root of :math:`x^2-3x+1=0` that bounds the shared Vegas queue.
GOLDEN_QUEUE_FACTOR = (3.0 + math.sqrt(5.0)) / 2.0


# --- the cwnd1-cwnd2 plane (Eqs 2.1, 2.2) --------------------------------------------------


def efficiency_line(
    cwnd1: ArrayLike, tau1: ArrayLike, tau2: ArrayLike, mu: ArrayLike, *, tau_is_rtt: bool = False
) -> Any:
    r"""Connection 2's window on the efficiency line, given connection 1's (Eq 2.1).

    The link is just full when :math:`cwnd_1/(2\tau_1) + cwnd_2/(2\tau_2) = \mu`
    (resolution hasegawa:A10: ``tau`` is one-way, so the RTT is ``2*tau``; ``tau_is_rtt=True``
    reads Eq 2.1 literally as :math:`cwnd_1/\tau_1 + cwnd_2/\tau_2 = \mu`). In the
    homogeneous case the line is :math:`cwnd_1 + cwnd_2 = W_e = 2\tau\mu` (Eq 2.2).

    >>> efficiency_line(10.0, 0.005, 0.005, 2000.0)  # W_e = 2 * 0.005 * 2000 = 20
    10.0
    """
    x = as_float(cwnd1)
    t1, t2 = check_positive("tau1", tau1), check_positive("tau2", tau2)
    m = check_positive("mu", mu)
    scale = 1.0 if tau_is_rtt else 2.0
    return out(scale * t2 * (m - x / (scale * t1)))


def loss_line(
    cwnd1: ArrayLike,
    tau1: ArrayLike,
    tau2: ArrayLike,
    mu: ArrayLike,
    buffer: ArrayLike,
    *,
    tau_is_rtt: bool = False,
) -> Any:
    r"""Connection 2's window on the packet-loss line, given connection 1's.

    Homogeneous case: :math:`cwnd_1 + cwnd_2 = W_l = W_e + B`. Heterogeneous case
    (resolution hasegawa:A10): the efficiency line shifted by ``B`` along the diagonal, i.e. by
    ``B/2`` in each coordinate (an approximation, as in the thesis's figures).

    >>> loss_line(10.0, 0.005, 0.005, 2000.0, 10.0)
    20.0
    """
    b = check_nonnegative("buffer", buffer)
    x = as_float(cwnd1)
    return out(as_float(efficiency_line(x - b / 2, tau1, tau2, mu, tau_is_rtt=tau_is_rtt)) + b / 2)


def loss_window(tau: ArrayLike, mu: ArrayLike, buffer: ArrayLike) -> Any:
    r"""Total window at which the shared buffer overflows, homogeneous case: :math:`W_l = 2\tau\mu + B`.

    >>> round(loss_window(0.005, 20e6 / (8 * 1024), 10), 2)  # Figs 2.3/2.4, 1 Kbyte = 1024 B
    34.41
    """
    t = check_positive("tau", tau)
    m = check_positive("mu", mu)
    b = check_nonnegative("buffer", buffer)
    return out(2 * t * m + b)


# --- Tahoe / Reno per-loss-cycle recursion (Eqs 2.3-2.9) ----------------------------------


def tahoe_fixed_point(tau_j: ArrayLike, tau_other: ArrayLike, w_loss: ArrayLike) -> Any:
    r"""Connection ``j``'s limit-cycle window at loss (Eq 2.7, corrected; hasegawa:A11 iv).

    .. math:: W_j^\infty = \frac{\tau_1\tau_2}{\tau_j(\tau_1+\tau_2)}\,W_l
              = \frac{\tau_{other}}{\tau_j+\tau_{other}}\,W_l

    This is :math:`2c_j`, the fixed point of :math:`W_j^i = W_j^{i-1}/2 + c_j`; the two
    connections' values add up to :math:`W_l`. The closed form printed in the thesis
    converges to :math:`c_j` instead (see :func:`tahoe_windows`). Reno follows the
    same recursion (§2.2.3: Reno is Tahoe without slow start in this model).

    >>> tahoe_fixed_point(0.004, 0.008, 30.0)  # W1/W2 = tau2/tau1 = 2
    20.0
    """
    tj = check_positive("tau_j", tau_j)
    to = check_positive("tau_other", tau_other)
    wl = check_nonnegative("w_loss", w_loss)
    return out(to / (tj + to) * wl)


def tahoe_windows(
    w_first: ArrayLike,
    tau_j: ArrayLike,
    tau_other: ArrayLike,
    w_loss: ArrayLike,
    cycles: int,
    *,
    closed_form: str = "corrected",
) -> np.ndarray:
    r"""Connection ``j``'s window at the end of loss cycles ``1..cycles`` (Eq 2.7).

    Recursion (first line of Eq 2.7, with the index fixed, hasegawa:A11 iii):
    :math:`W_j^i = W_j^{i-1}/2 + c_j`, :math:`c_j = \frac1{\tau_j}\frac{\tau_1\tau_2}{2(\tau_1+\tau_2)}W_l`.

    ``closed_form="corrected"`` (default, hasegawa:A11 iv) returns
    :math:`W_j^i = 2c_j - (1/2)^{i-1}(2c_j - W_j^1)`, which is the recursion's solution;
    ``closed_form="printed"`` returns the thesis's second line
    :math:`c_j - (1/2)^{i-1}(c_j - W_j^1)`; ``closed_form="recursion"`` iterates the
    recursion (the same numbers as "corrected", kept as a check).

    Returns an array of shape ``(cycles,) + broadcast shape``; entry ``i-1`` is
    :math:`W_j^i` [packets].

    >>> tahoe_windows(4.0, 0.005, 0.005, 34.0, 4)  # converges to W_l / 2 = 17
    array([ 4.   , 10.5  , 13.75 , 15.375])
    """
    check_choice("closed_form", closed_form, ("corrected", "printed", "recursion"))
    if int(cycles) != cycles or cycles < 1:
        raise ValueError(f"cycles must be an integer >= 1 (got {cycles!r})")
    w1 = check_nonnegative("w_first", w_first)
    tj = check_positive("tau_j", tau_j)
    to = check_positive("tau_other", tau_other)
    wl = check_nonnegative("w_loss", w_loss)
    c = to / (2 * (tj + to)) * wl  # (1/tau_j) tau1 tau2 / (2 (tau1 + tau2)) W_l
    i = np.arange(1, int(cycles) + 1, dtype=np.float64).reshape((-1,) + (1,) * np.ndim(c + w1))
    if closed_form == "corrected":
        return 2 * c - 0.5 ** (i - 1) * (2 * c - w1)
    if closed_form == "printed":
        return c - 0.5 ** (i - 1) * (c - w1)
    rows = [np.broadcast_to(w1 + 0 * c, np.shape(c + w1)).astype(np.float64)]
    for _ in range(int(cycles) - 1):
        rows.append(rows[-1] / 2 + c)
    return np.stack(rows)


def tahoe_throughput(
    tau_j: ArrayLike, tau_other: ArrayLike, w_loss: ArrayLike, *, constant: str = "corrected"
) -> Any:
    r"""Connection ``j``'s long-run Tahoe/Reno throughput [packets/s] (Eqs 2.8, 2.9).

    ``constant="corrected"`` (default, hasegawa:A11 v): the window saw-tooths between
    :math:`W_j/2` and :math:`W_j = W_j^\infty`, averages :math:`3W_j/4` over an RTT of
    :math:`2\tau_j`, so :math:`S_j = 3W_j/(8\tau_j)`. ``constant="printed"`` gives Eq 2.9
    as printed, :math:`\frac{3}{\tau_j^2}\frac{\tau_1\tau_2}{2(\tau_1+\tau_2)}W_l`, four
    times larger. Both scale as :math:`1/\tau_j^2`: :math:`S_1/S_2 = (\tau_2/\tau_1)^2`.

    >>> tahoe_throughput(0.004, 0.008, 30.0) / tahoe_throughput(0.008, 0.004, 30.0)
    4.0
    """
    check_choice("constant", constant, ("corrected", "printed"))
    tj = check_positive("tau_j", tau_j)
    w = as_float(tahoe_fixed_point(tau_j, tau_other, w_loss))
    if constant == "corrected":
        return out(3 * w / (8 * tj))
    return out(3 * w / (2 * tj))  # 3/tau_j^2 * tau1 tau2 W_l / (2 (tau1+tau2)) = 3 (2 c_j) / (2 tau_j)


# --- Vegas (Eqs 2.10-2.25) ---------------------------------------------------------------


def vegas_single_window_range(
    tau: ArrayLike, mu: ArrayLike, alpha: ArrayLike = 2.0, beta: ArrayLike = 4.0, *, plus_one: bool = True
) -> tuple[Any, Any]:
    r"""Window range of a lone Vegas connection, :math:`(W^1_{lo}, W^1_{hi})` [packets] (Eq 2.16).

    With :math:`W_1^1 = 2\tau\mu + l_1` (2.14) and :math:`\alpha < l_1 < \beta` (2.15), the
    thesis prints :math:`2\tau\mu + (\alpha+1) < W_1^1 < 2\tau\mu + (\beta+1)`. The "+1"
    does not follow from 2.14-2.15 (hasegawa:A12); ``plus_one=False`` drops it.

    >>> vegas_single_window_range(0.005, 2000.0)
    (23.0, 25.0)
    """
    t = check_positive("tau", tau)
    m = check_positive("mu", mu)
    a, b = _thresholds(alpha, beta)
    extra = 1.0 if plus_one else 0.0
    return out(2 * t * m + a + extra), out(2 * t * m + b + extra)


def vegas_queue_range(alpha: ArrayLike = 2.0, beta: ArrayLike = 4.0) -> tuple[Any, Any]:
    r"""Range of the shared queue :math:`l_2` [packets] once both Vegas connections run.

    .. math:: \frac{3+\sqrt5}{2}\alpha < l_2 < \frac{3+\sqrt5}{2}\beta

    (the unnumbered result after Eq 2.25; from :math:`1/x + 1/(x-1) = 1`).

    >>> [round(v, 2) for v in vegas_queue_range(2, 4)]
    [5.24, 10.47]
    """
    a, b = _thresholds(alpha, beta)
    return out(GOLDEN_QUEUE_FACTOR * a), out(GOLDEN_QUEUE_FACTOR * b)


def vegas_window_bound(
    tau: ArrayLike, mu: ArrayLike, l2: ArrayLike, threshold: ArrayLike, base_queue: ArrayLike = 0.0
) -> Any:
    r"""One side of the Vegas window bounds 2.24/2.25 [packets].

    .. math:: W = (2\tau\mu + l_2)\,\frac{\theta}{l_2 - l_b}

    with :math:`\theta = \alpha` for the lower and :math:`\beta` for the upper bound, and
    the queue already in the base RTT :math:`l_b = 0` for connection 1 (2.24) and
    :math:`l_b = l_1` for the late joiner (2.25).

    >>> vegas_window_bound(0.005, 2000.0, 8.0, 2.0)  # (20 + 8) * 2 / 8
    7.0
    """
    t = check_positive("tau", tau)
    m = check_positive("mu", mu)
    q = check_positive("l2", l2)
    th = check_nonnegative("threshold", threshold)
    lb = check_nonnegative("base_queue", base_queue)
    if np.any(lb >= q):
        raise ValueError("base_queue must be smaller than l2")
    return out((2 * t * m + q) * th / (q - lb))


def vegas_window_bounds(
    tau1: ArrayLike,
    tau2: ArrayLike,
    mu: ArrayLike,
    l1: ArrayLike,
    l2: ArrayLike,
    alpha: ArrayLike = 2.0,
    beta: ArrayLike = 4.0,
) -> dict[str, Any]:
    r"""Both connections' Vegas window ranges after connection 2 joins (Eqs 2.24, 2.25).

    Returns ``{"w1": (lo, hi), "w2": (lo, hi)}`` in packets; ``l1`` is the queue
    connection 1 had built alone (it inflates connection 2's base RTT, Eq 2.23) and
    ``l2`` the shared queue.

    >>> vegas_window_bounds(0.005, 0.005, 2000.0, 3.0, 8.0)
    {'w1': (7.0, 14.0), 'w2': (11.2, 22.4)}
    """
    a, b = _thresholds(alpha, beta)
    return {
        "w1": (vegas_window_bound(tau1, mu, l2, a), vegas_window_bound(tau1, mu, l2, b)),
        "w2": (vegas_window_bound(tau2, mu, l2, a, l1), vegas_window_bound(tau2, mu, l2, b, l1)),
    }


def vegas_ratio_range(
    tau1: float,
    tau2: float,
    mu: float,
    alpha: float = 2.0,
    beta: float = 4.0,
    *,
    points: int = 201,
) -> tuple[float, float]:
    r"""Smallest and largest :math:`W_1^2/W_2^2` over feasible Vegas equilibria (hasegawa:A13).

    The thesis quotes 0.95-2.12 (homogeneous case) without the :math:`l_1, l_2` it used.
    Resolution hasegawa:A13: scan :math:`l_1\in[\alpha,\beta]` and :math:`l_2 > l_1` on a grid,
    keep the pairs for which windows inside 2.24 and 2.25 also satisfy the link
    equation 2.17 (:math:`W_1/rtt_1 + W_2/rtt_2 = \mu`, with :math:`rtt_j = 2\tau_j + l_2/\mu`),
    and report the extreme ratios. Writing :math:`x_j = W_j/(\mu\,rtt_j)`, 2.17 is
    :math:`x_1 + x_2 = 1`, with :math:`x_1\in(\alpha/l_2, \beta/l_2)` and
    :math:`x_2\in(\alpha/(l_2-l_1), \beta/(l_2-l_1))`.

    This scan gives about 0.28-1.41 for α=2, β=4 (homogeneous; independent of τ and μ),
    not the thesis's 0.95-2.12: treat the thesis range as a soft target.

    >>> lo, hi = vegas_ratio_range(0.005, 0.005, 2441.4)
    >>> round(lo, 2), round(hi, 2)
    (0.28, 1.41)
    """
    t1, t2 = float(check_positive("tau1", tau1)), float(check_positive("tau2", tau2))
    m = float(check_positive("mu", mu))
    a, b = (float(v) for v in _thresholds(alpha, beta))
    if points < 2:
        raise ValueError(f"points must be >= 2 (got {points})")
    l1 = np.linspace(a, b, points)[:, None]
    l2_lo, l2_hi = vegas_queue_range(a, b)
    l2 = np.linspace(max(l2_lo * 0.5, a), l2_hi * 1.5, 20 * points)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.where(l2 > l1, l2 - l1, np.nan)
        x_lo = np.maximum(a / l2, 1 - b / d)
        x_hi = np.minimum(b / l2, 1 - a / d)
        feasible = x_lo < x_hi
        if not np.any(feasible):
            raise ValueError("no feasible Vegas equilibrium for these alpha and beta")
        p1 = 2 * t1 * m + l2
        p2 = 2 * t2 * m + l2
        r_lo = x_lo / (1 - x_lo) * p1 / p2
        r_hi = x_hi / (1 - x_hi) * p1 / p2
    return float(np.min(r_lo[feasible])), float(np.max(r_hi[feasible]))


# --- Enhanced Vegas (Eqs 2.26-2.36) -------------------------------------------------------


def enhanced_vegas_window(tau: ArrayLike, mu: ArrayLike, delta: ArrayLike = 3.0) -> Any:
    r"""Oscillation centre of one Enhanced Vegas connection's window [packets] (Eqs 2.34-2.36).

    .. math:: W = (2\tau\mu + l_2)\frac{\delta}{l_2},\quad l_2 = 2\delta
              \;\Rightarrow\; W = \tau\mu + \delta

    Both connections see the true base RTT :math:`2\tau_j + 1/\mu` (2.30-2.33), so the
    centre is proportional to the propagation delay apart from the common ``delta``.

    >>> round(enhanced_vegas_window(0.005, 20e6 / (8 * 1024)), 1)  # Figs 2.3/2.4 setting: 15.2
    15.2
    """
    t = check_positive("tau", tau)
    m = check_positive("mu", mu)
    d = check_positive("delta", delta)
    l2 = 2 * d
    return out((2 * t * m + l2) * d / l2)


def enhanced_vegas_centre(
    tau1: ArrayLike, tau2: ArrayLike, mu: ArrayLike, delta: ArrayLike = 3.0
) -> tuple[Any, Any, Any]:
    r"""Centre :math:`(W_1^2, W_2^2, l_2)` of the Enhanced Vegas oscillation (Eqs 2.34-2.36).

    >>> w1, w2, l2 = enhanced_vegas_centre(0.004, 0.008, 20e6 / (8 * 1024))
    >>> round(w1, 1), round(w2, 1), l2
    (12.8, 22.5, 6.0)
    """
    d = check_positive("delta", delta)
    return enhanced_vegas_window(tau1, mu, d), enhanced_vegas_window(tau2, mu, d), out(2 * d)


def _thresholds(alpha: ArrayLike, beta: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    a = check_positive("alpha", alpha)
    b = check_positive("beta", beta)
    if np.any(b < a):
        raise ValueError("beta must be >= alpha")
    return a, b
