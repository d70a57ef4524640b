r"""Chapter 6: RED with Reno, enhanced RED, and Vegas behind FIFO/RED (Eqs 6.1-6.30).

Hasegawa (2000), ch. 6. ``N`` connections with access rates ``bw`` share an output link
``BW`` at one router. Rates are in **bit/s** at the interface and converted to
packets/s with ``packet_bytes`` (2 Kbyte = 2048 bytes by default) wherever a time
enters; ``tau`` is the one-way propagation delay in seconds (100 ms in the thesis);
windows and queues are in packets; drop probabilities are per packet.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ._common import as_float, check_choice, check_nonnegative, check_positive, check_probability, out

__all__ = [
    "EnhancedRed",
    "VegasEquilibrium",
    "enhanced_red_probabilities",
    "phase_throughput",
    "proportional_share",
    "red_reno_throughput",
    "red_reno_window",
    "red_reno_wmax_iteration",
    "timeout_probability",
    "vegas_fifo_equilibrium",
    "vegas_red_throughput",
]


def proportional_share(bw: ArrayLike, BW: float) -> np.ndarray:  # noqa: N803 - the thesis's name
    r"""Ideal (proportionally fair) throughputs :math:`BW\,bw_i/\sum_j bw_j` (§6.1.3), in the unit of ``BW``.

    >>> proportional_share([64, 128, 256], 336)  # the thesis's example [Kbit/s]
    array([ 48.,  96., 192.])
    """
    b = _rates("bw", bw)
    return float(check_positive("BW", BW)) * b / b.sum()


# --- RED + Reno (Eqs 6.1-6.12) -------------------------------------------------------------


def red_reno_window(p: ArrayLike) -> tuple[Any, Any]:
    r"""Mean window at loss and mean window [packets] (Eqs 6.5, 6.6).

    :math:`\bar W_{max} = \sqrt{8/(3p)}` and :math:`W_a = \frac34\bar W_{max}`.

    >>> [round(v, 3) for v in red_reno_window(0.02)]
    [11.547, 8.66]
    """
    q = _drop_probability("p", p)
    wmax = np.sqrt(8 / (3 * q))
    return out(wmax), out(0.75 * wmax)


def red_reno_wmax_iteration(
    p: float, w0: float = 1.0, *, form: str = "corrected", tol: float = 1e-12, max_iter: int = 10_000
) -> float:
    r"""Iterate the per-cycle window map (Eq 6.4) to its fixed point [packets].

    ``form="corrected"`` (default, hasegawa:A47): :math:`W' = \sqrt{(W/2)^2 + 2N_p}` with
    :math:`N_p = 1/p` (6.1), whose fixed point is :math:`\sqrt{8/(3p)}` (6.5).
    ``form="printed"``: :math:`W' = \sqrt{W^2 + 2N_p}` grows without bound, so it raises.

    >>> round(red_reno_wmax_iteration(0.02), 3)
    11.547
    """
    check_choice("form", form, ("corrected", "printed"))
    q = float(_drop_probability("p", p))
    w = float(check_nonnegative("w0", w0))
    n_p = 1 / q
    for _ in range(max_iter):
        nxt = math.sqrt((w / 2 if form == "corrected" else w) ** 2 + 2 * n_p)
        if abs(nxt - w) <= tol * max(1.0, nxt):
            return nxt
        w = nxt
    raise ValueError(f"Eq 6.4 ({form}) did not converge in {max_iter} iterations; only form='corrected' has a fixed point")


def timeout_probability(p: ArrayLike, w_a: ArrayLike, *, exponent: str = "standard") -> Any:
    r"""Probability of two or more losses in a window, which makes Reno time out (Eq 6.10).

    :math:`P_{to} = \sum_{i\ge2}\binom{n}{i}p^i(1-p)^{n-i}` with :math:`n` = ``w_a``
    rounded to the nearest whole packet (hasegawa:A49). ``exponent="printed"`` uses the
    thesis's :math:`(1-p)^{n+1-i}`.

    >>> round(timeout_probability(0.02, 8.66), 4), round(timeout_probability(0.02, 8.66, exponent="printed"), 4)
    (0.0131, 0.0129)
    """
    check_choice("exponent", exponent, ("standard", "printed"))
    q = check_probability("p", p)
    n = np.rint(check_nonnegative("w_a", w_a))
    p0 = (1 - q) ** n  # no loss
    p1 = n * q * (1 - q) ** (n - 1)  # exactly one loss
    at_least_two = np.where(n >= 2, 1 - p0 - p1, 0.0)
    if exponent == "printed":
        at_least_two = at_least_two * (1 - q)
    return out(np.clip(at_least_two, 0.0, 1.0))


def phase_throughput(bw: ArrayLike, BW: float, w_a: ArrayLike, *, weighting: str = "packet") -> np.ndarray:  # noqa: N803
    r"""Per-connection service rate when windows arrive as simultaneous bursts (Eqs 6.7-6.9).

    Connection ``i`` sends a burst of ``w_a[i]`` packets at its access rate ``bw[i]``; all
    bursts start together. Between consecutive burst ends (the phases), the active
    connections are served at :math:`S = \min(\sum_{active} bw, BW)` (6.7), shared in
    proportion to their arrivals (6.8). With a common ``w_a`` this is the thesis's
    :math:`W_{i,j}` construction; per-connection ``w_a`` generalises it (hasegawa:A50).

    ``weighting="packet"`` (default, Eq 6.9 with the index fixed to the phases the
    connection takes part in, hasegawa:A48): :math:`\rho_i = \sum_j (W_{i,j}/W_a) R_{i,j}`.
    ``weighting="time"``: :math:`\rho_i = W_a / \sum_j (\text{service time of phase } j)`.
    Neither conserves capacity at small ``BW`` (the sum can exceed ``BW``; see
    ``normalise`` in :func:`red_reno_throughput`). The result is in the unit of ``bw``.

    >>> phase_throughput([1.0, 1.0], 4.0, 5.0)  # the link is never the bottleneck
    array([1., 1.])
    """
    check_choice("weighting", weighting, ("packet", "time"))
    b = _rates("bw", bw)
    cap = float(check_positive("BW", BW))
    w = np.broadcast_to(check_positive("w_a", w_a), b.shape).astype(np.float64)
    ends = w / b  # arrival time of each burst's last packet
    order = np.argsort(ends, kind="stable")
    rho_num = np.zeros_like(b)
    service = np.zeros_like(b)
    start = 0.0
    active = np.ones(b.shape, dtype=bool)
    for idx in order:
        dur = ends[idx] - start
        if dur > 0:
            arrivals = np.where(active, b * dur, 0.0)  # W_{i,j}
            total_rate = float(np.sum(b[active]))
            s = min(total_rate, cap)  # S_j (6.7)
            rate = np.where(active, b / total_rate * s, 0.0)  # R_{i,j} (6.8)
            rho_num += arrivals / w * rate
            service += np.where(active, arrivals.sum() / s, 0.0)
        start = ends[idx]
        active[idx] = False
    if weighting == "packet":
        return rho_num
    return w / service


def red_reno_throughput(
    bw: ArrayLike,
    BW: float,  # noqa: N803
    p: ArrayLike = 0.02,
    *,
    tau: float = 0.1,
    packet_bytes: float = 2048.0,
    timeout: bool = True,
    exponent: str = "standard",
    weighting: str = "packet",
    normalise: bool = False,
) -> np.ndarray:
    r"""Per-connection Reno throughput behind a RED router [bit/s] (Eqs 6.5-6.12).

    Every packet is dropped with probability ``p`` (a scalar, or one per connection for
    enhanced RED, hasegawa:A50); windows are fixed at :math:`W_{a,i} = \frac34\sqrt{8/(3p_i)}`;
    :func:`phase_throughput` gives :math:`\rho_i`; with ``timeout=True`` the time-out
    correction (6.12) gives

    .. math:: \rho'_i = \frac{\rho_i W_a + (1-P_{to})\rho_i^2 RTO_i}{W_a + \rho_i RTO_i},\quad
              RTO_i = 2RTT_i,\quad RTT_i = 2\tau + \frac{\sum_{k\ne i}W_{a,k}}{BW} + \frac{W_{a,i}}{\rho_i}

    with rates in packets/s inside (6.11). ``normalise=True`` scales the result down to
    ``BW`` when it adds up to more (hasegawa:A48; not in the thesis).

    >>> rho = red_reno_throughput([64e3, 128e3, 256e3, 512e3], 400e3)
    >>> [round(float(x) / 1e3, 1) for x in rho]  # Kbit/s at BW = 400 Kbit/s; sum 539 > BW
    [57.9, 104.8, 165.8, 210.9]
    """
    b = _rates("bw", bw)
    cap = float(check_positive("BW", BW))
    q = np.broadcast_to(_drop_probability("p", p), b.shape).astype(np.float64)
    t = float(check_nonnegative("tau", tau))
    pkt_bits = 8 * float(check_positive("packet_bytes", packet_bytes))
    w_a = np.asarray(red_reno_window(q)[1], dtype=np.float64).reshape(b.shape)
    rho = phase_throughput(b, cap, w_a, weighting=weighting)
    if timeout:
        rho_pk = rho / pkt_bits
        bw_pk = cap / pkt_bits
        p_to = np.asarray(timeout_probability(q, w_a, exponent=exponent), dtype=np.float64).reshape(b.shape)
        rtt = 2 * t + (w_a.sum() - w_a) / bw_pk + w_a / rho_pk
        rto = 2 * rtt
        rho = (rho_pk * w_a + (1 - p_to) * rho_pk**2 * rto) / (w_a + rho_pk * rto) * pkt_bits
    if normalise and rho.sum() > cap:
        rho = rho * cap / rho.sum()
    return rho


class EnhancedRed(NamedTuple):
    """Result of :func:`enhanced_red_probabilities`."""

    p: np.ndarray  #: per-connection drop probabilities
    throughput: np.ndarray  #: predicted throughputs [bit/s]
    ideal: np.ndarray  #: proportional shares [bit/s]
    iterations: int
    converged: bool


def enhanced_red_probabilities(
    bw: ArrayLike,
    BW: float,  # noqa: N803
    *,
    p0: ArrayLike = 0.02,
    a: float = 1.1,
    b: float = 0.9,
    tol: float = 0.01,
    max_iter: int = 10_000,
    p_min: float = 1e-4,
    p_max: float = 0.5,
    **model: Any,
) -> EnhancedRed:
    r"""Per-connection RED drop probabilities that aim at proportional fairness (§6.2.2, enhanced RED).

    The thesis's iteration: compute :math:`\rho_i` from the current :math:`p_i` with
    :func:`red_reno_throughput` (6.12); stop when every :math:`\rho_i` is within ``tol``
    of its ideal :math:`BW\,bw_i/\sum bw` (relative, hasegawa:A50); otherwise take the single
    connection farthest from its ideal (largest :math:`|\rho_i - ideal_i|`) and multiply
    its :math:`p_i` by ``a`` (= 1.1) if it gets too much or ``b`` (= 0.9) if too little.
    :math:`p_i` stays within ``[p_min, p_max]``. Extra keywords go to
    :func:`red_reno_throughput` (``tau``, ``packet_bytes``, ``normalise``...).

    When ``max_iter`` passes without convergence a ``RuntimeWarning`` is issued and the
    last iterate returned with ``converged=False``.

    >>> res = enhanced_red_probabilities([64e3, 128e3, 256e3, 512e3], 800e3)
    >>> res.converged, [round(float(x), 4) for x in res.p]
    (True, [0.1791, 0.091, 0.0278, 0.0077])
    """
    bws = _rates("bw", bw)
    cap = float(check_positive("BW", BW))
    if not a > 1:
        raise ValueError(f"a must be > 1 (got {a:g})")
    if not 0 < b < 1:
        raise ValueError(f"b must be in (0, 1) (got {b:g})")
    if not 0 < p_min < p_max <= 1:
        raise ValueError("p_min and p_max must satisfy 0 < p_min < p_max <= 1")
    if not tol > 0:
        raise ValueError(f"tol must be > 0 (got {tol:g})")
    p = np.clip(np.broadcast_to(_drop_probability("p0", p0), bws.shape).astype(np.float64), p_min, p_max)
    ideal = proportional_share(bws, cap)
    for it in range(int(max_iter) + 1):
        rho = red_reno_throughput(bws, cap, p, **model)
        if np.max(np.abs(rho / ideal - 1)) < tol:
            return EnhancedRed(p, rho, ideal, it, True)
        if it == max_iter:
            break
        j = int(np.argmax(np.abs(rho - ideal)))
        p[j] = min(max(p[j] * (a if rho[j] > ideal[j] else b), p_min), p_max)
    message = f"enhanced RED did not reach {tol:g} of the ideal shares in {max_iter} iterations"
    warnings.warn(message, RuntimeWarning, stacklevel=2)
    return EnhancedRed(p, rho, ideal, int(max_iter), False)


# --- Vegas behind FIFO / RED (Eqs 6.13-6.30) ------------------------------------------------


class VegasEquilibrium(NamedTuple):
    """Result of :func:`vegas_fifo_equilibrium`."""

    throughput: np.ndarray  #: rho_i [bit/s] (6.20, 6.21)
    queue: np.ndarray  #: l_i [packets] (6.18)
    window: np.ndarray  #: W_i [packets] (6.17)
    rtt: np.ndarray  #: rtt_i [s] (6.16)


def vegas_fifo_equilibrium(
    bw: ArrayLike,
    BW: float,  # noqa: N803
    *,
    tau: float = 0.1,
    alpha: float = 2.0,
    beta: float = 4.0,
    queue: str = "mid",
    packet_bytes: float = 2048.0,
    tol: float = 1e-12,
    max_iter: int = 1000,
) -> VegasEquilibrium:
    r"""Converged Vegas throughputs, queues and windows behind a FIFO queue (Eqs 6.13-6.21).

    Each connection keeps :math:`l_i = c + \rho_i/BW` packets queued (6.18) with
    :math:`c = (\alpha+\beta)/2` for ``queue="mid"`` (default, hasegawa:A51), ``alpha`` or
    ``beta`` for the two ends of the band; the link is shared in proportion to the
    queue (6.13), capped at each access rate (6.20, 6.21: water-filling over the
    saturated set). Solved by fixed-point iteration on :math:`\rho`; then
    :math:`rtt_i = 2\tau + l_i/\rho_i` (6.16) and :math:`W_i = rtt_i\rho_i` (6.17).

    >>> eq = vegas_fifo_equilibrium([64e3, 128e3, 256e3, 512e3], 400e3)
    >>> [round(float(x) / 1e3, 1) for x in eq.throughput]  # the 64 Kbit/s flow gets all it can
    [64.0, 112.0, 112.0, 112.0]
    """
    check_choice("queue", queue, ("mid", "alpha", "beta"))
    bws = _rates("bw", bw)
    cap = float(check_positive("BW", BW))
    t = float(check_nonnegative("tau", tau))
    a, b_ = float(check_nonnegative("alpha", alpha)), float(check_nonnegative("beta", beta))
    if b_ < a:
        raise ValueError("beta must be >= alpha")
    c = {"mid": (a + b_) / 2, "alpha": a, "beta": b_}[queue]
    if c <= 0:
        raise ValueError("the Vegas queue target must be > 0 packets (alpha, beta > 0)")
    pkt_bits = 8 * float(check_positive("packet_bytes", packet_bytes))
    bw_pk, cap_pk = bws / pkt_bits, cap / pkt_bits
    rho = np.minimum(bw_pk, cap_pk / bws.size)
    for _ in range(max_iter):
        l_i = c + rho / cap_pk
        nxt = _water_fill(l_i, bw_pk, cap_pk)
        if np.max(np.abs(nxt - rho)) <= tol * cap_pk:
            rho = nxt
            break
        rho = nxt
    else:
        raise ValueError(f"the Vegas/FIFO fixed point did not converge in {max_iter} iterations")
    l_i = c + rho / cap_pk
    rtt = 2 * t + l_i / rho
    return VegasEquilibrium(rho * pkt_bits, l_i, rtt * rho, rtt)


def vegas_red_throughput(
    bw: ArrayLike,
    BW: float,  # noqa: N803
    p: ArrayLike = 0.02,
    *,
    tau: float = 0.1,
    alpha: float = 2.0,
    beta: float = 4.0,
    queue: str = "mid",
    packet_bytes: float = 2048.0,
) -> np.ndarray:
    r"""Vegas throughput behind a RED router [bit/s], from the three-phase loss cycle (Eqs 6.22-6.30).

    After a RED drop the window halves from the converged :math:`W_i`
    (:func:`vegas_fifo_equilibrium`) and grows by one packet per :math:`rtt_i`. Phase 1,
    from :math:`W_i/2` to :math:`2\tau\rho_i`, delivers
    :math:`\bar\rho_{i,1} = \frac{(W_i/2 + 2\tau\rho_i)/2}{2\tau + 1/\rho_i}` (6.22); phases 2
    (up to :math:`W_i`) and 3 (flat at :math:`W_i` until the cycle's :math:`1/p` packets
    are sent) deliver :math:`\rho_i` (6.23). Durations and packet counts are 6.24-6.29,
    the result the time average 6.30. Resolution hasegawa:A52: phase 1 is empty when
    :math:`W_i/2 \ge 2\tau\rho_i`; when the cycle's packets run out before :math:`W_i`
    (negative :math:`A_3`), the cycle is cut where they do.

    >>> rho = vegas_red_throughput([64e3, 128e3, 256e3, 512e3], 960e3)
    >>> [round(float(x) / 1e3, 1) for x in rho]  # only the 512 Kbit/s flow loses (phase 1)
    [64.0, 128.0, 256.0, 486.6]
    """
    eq = vegas_fifo_equilibrium(bw, BW, tau=tau, alpha=alpha, beta=beta, queue=queue, packet_bytes=packet_bytes)
    pkt_bits = 8 * float(packet_bytes)
    rho = eq.throughput / pkt_bits
    q = np.broadcast_to(_drop_probability("p", p), rho.shape)
    res = np.empty_like(rho)
    for i in range(rho.size):
        res[i] = _vegas_cycle(rho[i], eq.window[i], eq.rtt[i], float(tau), 1 / float(q[i]))
    return res * pkt_bits


def _vegas_cycle(rho: float, w: float, rtt: float, tau: float, n_p: float) -> float:
    """Mean rate over one Vegas/RED loss cycle (6.22-6.30), in packets/s."""
    pipe = 2 * tau * rho  # the window that just fills the pipe
    lo = w / 2
    mid = min(max(pipe, lo), w)  # phase 1 runs from lo to mid
    times, rates = [], []
    a1 = 0.5 * (mid + lo) * (mid - lo)  # 6.26
    if a1 > n_p:  # the cycle ends inside phase 1
        mid = math.sqrt(lo * lo + 2 * n_p)
        a1 = n_p
    if mid > lo:
        times.append((mid - lo) * rtt)  # 6.24
        rates.append(((lo + mid) / 2) / (2 * tau + 1 / rho))  # 6.22
    left = n_p - a1
    top = w
    a2 = 0.5 * (top + mid) * (top - mid)  # 6.27
    if a2 > left:  # the cycle ends inside phase 2
        top = math.sqrt(mid * mid + 2 * left)
        a2 = left
    if top > mid:
        times.append((top - mid) * rtt)  # 6.25
        rates.append(rho)
    a3 = left - a2  # 6.28
    if a3 > 0:
        times.append(a3 / w * rtt)  # 6.29
        rates.append(rho)
    total = sum(times)
    return sum(t * r for t, r in zip(times, rates, strict=True)) / total if total > 0 else rho  # 6.30


def _water_fill(weights: np.ndarray, caps: np.ndarray, total: float) -> np.ndarray:
    """Share ``total`` in proportion to ``weights``, no one above its cap (6.20, 6.21)."""
    rho = np.zeros_like(weights)
    free = np.ones(weights.shape, dtype=bool)
    remaining = total
    while np.any(free):
        share = np.where(free, weights / weights[free].sum() * remaining, 0.0)
        over = free & (share >= caps)
        if not np.any(over):
            rho[free] = share[free]
            break
        rho[over] = caps[over]
        remaining -= caps[over].sum()
        free &= ~over
        if remaining <= 0:
            break
    return rho


def _rates(name: str, bw: ArrayLike) -> np.ndarray:
    b = check_positive(name, bw)
    if b.ndim != 1 or b.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of access rates")
    return b


def _drop_probability(name: str, p: ArrayLike) -> np.ndarray:
    q = as_float(p)
    if q.size and not np.all((q > 0) & (q <= 1)):
        raise ValueError(f"{name} must be a drop probability in (0, 1] (got {q[~((q > 0) & (q <= 1))].flat[0]:g})")
    return q
