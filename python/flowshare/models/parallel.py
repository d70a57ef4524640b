"""Throughput of n parallel TCP flows, and MulTFRC (Damjanović 2010).

Model A (§3.2) takes the *per-flow* loss event rate ``p``; model B (§3.3) takes the loss
event rate ``p`` of the *cumulative* flow (all n flows seen as one, at most one event per RTT)
and ``j``, the mean number of packets lost (or flows hit) per cumulative loss event. Both
extend PFTK; the congestion-avoidance-only closed forms are eqs. (3.19) and (3.51), the full
models with time-outs are Algorithms 1 and 2, and Algorithm 3 (the Internet-Draft
draft-welzl-multfrc-01 §3) is the MulTFRC rate equation.

Rates are in packets per second unless a segment size ``s`` (bytes) is given, in which case
they are in bytes per second. Every function broadcasts its array arguments and returns a
float for scalar input. Loss rates must lie in the open interval (0, 1): at ``p = 0`` the
models are undefined (a TFRC sender is then in slow start and does not use the equation) and
at ``p = 1`` the time-out duration :math:`T f(p)/(1-p)` is infinite.

The typos of the source and how they are resolved (named options where there are
alternatives) are listed in ``docs/models.md`` and ``docs/resolutions.md``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._spec import (
    B_ACK,
    J,
    N_FLOWS,
    NON_NEGATIVE,
    P,
    POSITIVE,
    RTO,
    RTT,
    UNIT_OPEN,
    Interval,
    Key,
    ModelSpec,
    S,
    check,
    check_choice,
    per_second,
    result,
)

__all__ = [
    "CAP_MODES",
    "F_MODES",
    "IMPROVED_J_THRESHOLD",
    "MODELS",
    "Q_J_MODES",
    "TIMEOUT_VARIANTS",
    "altman_utilisation",
    "hit_window_a",
    "improved_j",
    "model_a",
    "model_a_ca",
    "model_a_closed_form",
    "model_b",
    "model_b_ca",
    "multfrc",
    "old_j",
    "rounds_a",
    "rounds_b",
    "timeout_duration",
    "timeout_f",
    "timeout_probability",
]

Float = NDArray[np.float64]

F_MODES = ("approx", "exact")
"""``f``: :math:`f(p) = 1 + 32p^2` (the algorithms) or the exact polynomial of eq. (3.26)."""

TIMEOUT_VARIANTS = ("droptail-plr", "bernoulli-plr", "droptail-p", "bernoulli-p")
"""Model A's time-out probability variants (§3.2.2, Fig. 3.4); ``droptail-plr`` is the
thesis's choice (eqs. 3.30–3.32)."""

Q_J_MODES = ("raw", "flows")
"""``q_j``: which j the time-out term of Algorithms 2/3 uses: the raw ``j`` as printed, or the
number of flows hit ``j_af`` (the "consistent" variant, resolution ``multfrc:A3``)."""

CAP_MODES = ("ceil", "n")
"""``cap``: the upper bound on the flows hit, ``ceil(n)`` (Algorithm 3) or ``n``
(Algorithm 2)."""

IMPROVED_J_THRESHOLD = 12.0
"""Algorithm 3 uses the improved j when ``n < threshold``; 12 per the Internet-Draft."""


# ---------------------------------------------------------------------------------------------
# Building blocks


def rounds_a(n: ArrayLike, p: ArrayLike, *, b: ArrayLike = 1.0) -> Any:
    r"""Model A: mean number of rounds in a TD period, :math:`E[X]`.

    .. math::
        E[X] = \frac{2pb - npb + \sqrt{n^2p^2b^2 - 4np^2b^2 + 4p^2b^2 + 24bn^2p}}{6n^2p}

    Damjanović (2010) eq. (3.17); the radicand is :math:`pb\,(24n^2 + pb(n-2)^2)` as in
    Algorithm 1.

    Parameters
    ----------
    n : array_like
        Number of flows, > 0.
    p : array_like
        Per-flow loss event rate, in (0, 1).
    b : array_like, default 1
        Packets acknowledged by one ACK, > 0.

    Returns
    -------
    float or ndarray
        :math:`E[X]` [rounds].

    Examples
    --------
    >>> round(rounds_a(1, 0.01), 4)  # (0.01 + sqrt(0.0001 + 0.24)) / 0.06
    8.3333
    """
    return rounds_b(n, p, 1.0, b=b)


def rounds_b(n: ArrayLike, p: ArrayLike, j: ArrayLike, *, b: ArrayLike = 1.0) -> Any:
    r"""Model B: mean number of rounds between cumulative loss events, :math:`E[X]`.

    .. math::
        E[X] = \frac{2j^2pb - npbj + \sqrt{pbj\,[24n^2 + pbj(n-2j)^2]}}{6n^2p}

    Damjanović (2010) eq. (3.49) (radicand factored as in Algorithm 2); ``j = 1``
    gives eq. (3.17).

    Parameters
    ----------
    n : array_like
        Number of flows, > 0.
    p : array_like
        Loss event rate of the cumulative flow, in (0, 1).
    j : array_like
        Flows hit per cumulative loss event, > 0.
    b : array_like, default 1
        Packets acknowledged by one ACK, > 0.

    Returns
    -------
    float or ndarray
        :math:`E[X]` [rounds].
    """
    n = check("n", n, POSITIVE)
    p = check("p", p, UNIT_OPEN)
    j = check("j", j, POSITIVE)
    b = check("b", b, POSITIVE)
    return result(_rounds(n, p, j, b))


def _rounds(n: Float, p: Float, j: Float, b: Float) -> Float:
    pbj = p * b * j
    radicand = pbj * (24.0 * n**2 + pbj * (n - 2.0 * j) ** 2)
    return (pbj * (2.0 * j - n) + np.sqrt(radicand)) / (6.0 * n**2 * p)


def hit_window_a(n: ArrayLike, p: ArrayLike, *, b: ArrayLike = 1.0) -> Any:
    r"""Model A: window of the flow hit in the loss round, :math:`E[W_f] = 2nE[X]/b`.

    Damjanović (2010) eq. (3.27) (``w`` in Algorithm 1).

    Examples
    --------
    >>> round(hit_window_a(1, 0.01), 4)
    16.6667
    """
    x = np.asarray(rounds_a(n, p, b=b))
    return result(2.0 * np.asarray(n, dtype=float) * x / np.asarray(b, dtype=float))


def timeout_f(p: ArrayLike, *, f: str = "approx") -> Any:
    r"""The polynomial of the time-out duration, :math:`f(p)`.

    .. math:: f(p) = 1 + p + 2p^2 + 4p^3 + 8p^4 + 16p^5 + 32p^6 \approx 1 + 32p^2

    Damjanović (2010) eq. (3.26) (PFTK's :math:`f`, with back-off doubling up to :math:`64T`).

    Parameters
    ----------
    p : array_like
        Loss event rate, in (0, 1).
    f : {"approx", "exact"}
        :math:`1 + 32p^2` (as in the algorithms) or the polynomial.

    Examples
    --------
    >>> timeout_f(0.5, f="exact")
    4.0
    >>> timeout_f(0.5)
    9.0
    """
    p = check("p", p, UNIT_OPEN)
    check_choice("f", f, F_MODES)
    return result(_f(p, f))


def _f(p: Float, f: str) -> Float:
    if f == "approx":
        return 1.0 + 32.0 * p**2
    return 1.0 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6


def timeout_duration(p: ArrayLike, rto: ArrayLike, *, f: str = "approx") -> Any:
    r"""Mean duration of a time-out sequence, :math:`E[Z^{TO}] = T f(p)/(1-p)`.

    Damjanović (2010) eq. (3.26) (``z`` in the algorithms). The mean number of packets sent in
    it is :math:`E[R] = 1/(1-p)` (eq. 3.25).

    Parameters
    ----------
    p : array_like
        Loss event rate, in (0, 1).
    rto : array_like
        Initial time-out T [s], > 0.
    f : {"approx", "exact"}
        See :func:`timeout_f`.

    Returns
    -------
    float or ndarray
        :math:`E[Z^{TO}]` [s].

    Examples
    --------
    >>> round(timeout_duration(0.01, 0.4), 6)  # 0.4 * 1.0032 / 0.99
    0.405333
    """
    p = check("p", p, UNIT_OPEN)
    rto = check("rto", rto, POSITIVE)
    check_choice("f", f, F_MODES)
    return result(rto * _f(p, f) / (1.0 - p))


def timeout_probability(
    w: ArrayLike, p: ArrayLike | None = None, *, variant: str = "droptail-plr"
) -> Any:
    r"""Probability that a loss in a window of ``w`` packets is a time-out.

    ``variant`` selects one of the four calculations of Damjanović (2010) §3.2.2 (Fig. 3.4):

    ``"droptail-plr"`` (the thesis's choice, eqs. 3.30/3.31)
        :math:`\hat Q_{TO}(w) = \min(1, (1-y^3)(1 + y^3(1 - y^{w-3})))` with
        :math:`y = 1 - p_{lr}`, :math:`p_{lr} = 1/w`; 1 for ``w <= 3``.
    ``"bernoulli-plr"`` (eqs. 3.28/3.29)
        :math:`P_{TO} = \sum_{v=2}^{\lfloor w\rfloor} \hat P_{TO}(v)/(\lfloor w\rfloor + 1)`,
        the window uniform on :math:`[0, \lfloor w\rfloor]`, :math:`\hat P_{TO}(v)` from the
        binomial :math:`B(v, k)` with :math:`p_{lr} = 1/w`.
    ``"droptail-p"``
        PFTK's :math:`\hat Q(p, w) = \min(1, (1-(1-p)^3)(1+(1-p)^3(1-(1-p)^{w-3}))/(1-(1-p)^w))`
        with the loss probability ``p`` of any packet.
    ``"bernoulli-p"``
        As ``"bernoulli-plr"`` with ``p`` in place of :math:`p_{lr}`. The thesis takes this
        variant from Brosh et al. [25] without printing it; this is a reconstruction from
        eqs. (3.28)/(3.29).

    Parameters
    ----------
    w : array_like
        Window of the flow hit, :math:`E[W_f]` [pkt], > 0.
    p : array_like, optional
        Loss probability of any packet, in (0, 1); needed by the ``-p`` variants only.
    variant : str
        One of :data:`TIMEOUT_VARIANTS`.

    Returns
    -------
    float or ndarray
        Probability in [0, 1].

    Examples
    --------
    >>> timeout_probability(3.0)
    1.0
    >>> round(timeout_probability(20.0), 6)
    0.213779
    """
    check_choice("variant", variant, TIMEOUT_VARIANTS)
    w = check("w", w, POSITIVE)
    if variant.endswith("-p"):
        if p is None:
            raise ValueError(f"timeout_probability variant {variant!r} needs p")
        loss = check("p", p, UNIT_OPEN)
    else:
        loss = 1.0 / w
    w, loss = np.broadcast_arrays(w, loss)
    if variant.startswith("droptail"):
        return result(_droptail_q(w, loss, pftk_form=variant == "droptail-p"))
    out = np.vectorize(_bernoulli_q, otypes=[np.float64])(w, loss)
    return result(out)


def _droptail_q(w: Float, loss: Float, *, pftk_form: bool) -> Float:
    y = 1.0 - loss
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        q = (1.0 - y**3) * (1.0 + y**3 * (1.0 - y ** (w - 3.0)))
        if pftk_form:
            q = q / (1.0 - y**w)
        q = np.minimum(1.0, q)
    return np.where(w <= 3.0, 1.0, q)


def _bernoulli_q(w: float, loss: float) -> float:
    from scipy.stats import binom  # only these variants need scipy

    w_max = int(np.floor(w))
    if w_max < 2:
        return 0.0
    delivered = 1.0 - loss
    ks = np.arange(w_max + 1)
    # Sum over m = 0..2 of B(k, m): fewer than three of k packets delivered.
    few = binom.cdf(2, ks, delivered)
    total = 0.0
    for v in range(2, w_max + 1):
        if v <= 3:
            total += 1.0
            continue
        # B(v, k): k of v packets delivered, each lost with probability `loss` (eq. 3.28).
        pk = binom.pmf(ks[: v + 1], v, delivered)
        p_to = few[v] + float(np.sum(pk[3:v] * few[3:v]))
        total += min(1.0, p_to)
    return total / (w_max + 1)


# ---------------------------------------------------------------------------------------------
# Model A


def model_a_ca(n: ArrayLike, p: ArrayLike, rtt: ArrayLike, *, b: ArrayLike = 1.0,
               s: ArrayLike | None = None) -> Any:
    r"""Model A without time-outs: n parallel flows in congestion avoidance.

    .. math::
        B = \frac{1}{RTT}\,
            \frac{6n^2}{2pb - npb + \sqrt{n^2p^2b^2 - 4np^2b^2 + 4p^2b^2 + 24bn^2p}}
          = \frac{1}{p\,E[X]\,RTT}

    Damjanović (2010) eq. (3.19). For ``n = 1`` it tends to the Mathis form
    :math:`\sqrt{3/(2bp)}/RTT` as ``p`` goes to 0.

    Parameters
    ----------
    n : array_like
        Number of flows, > 0 (the derivation assumes a whole number).
    p : array_like
        Per-flow loss event rate, in (0, 1).
    rtt : array_like
        Round-trip time [s], > 0.
    b : array_like, default 1
        Packets acknowledged by one ACK, > 0.
    s : array_like, optional
        Segment size [bytes]; when given the result is in bytes/s.

    Returns
    -------
    float or ndarray
        Throughput of all n flows together [pkt/s], or [bytes/s] with ``s``.

    Examples
    --------
    >>> round(model_a_ca(1, 0.01, 0.1), 3)  # 6 / (0.1 * (0.01 + sqrt(0.2401)))
    120.0
    """
    p_ = check("p", p, UNIT_OPEN)
    rtt = check("rtt", rtt, POSITIVE)
    x = np.asarray(rounds_a(n, p_, b=b))
    return result(per_second(1.0 / (p_ * x * rtt), s))


def model_a(
    n: ArrayLike,
    p: ArrayLike,
    rtt: ArrayLike,
    rto: ArrayLike,
    *,
    b: ArrayLike = 1.0,
    f: str = "approx",
    cap_timeouts: bool = True,
    timeout_variant: str = "droptail-plr",
    s: ArrayLike | None = None,
) -> Any:
    r"""Model A with time-outs, Algorithm 1: throughput of n parallel flows, per-flow loss.

    .. math::
        B_{ext} = \frac{1 - q/n}{p\,E[X]\,RTT} + \frac{q}{E[Z^{TO}](1-p)},\qquad
        q = \min\!\left(n,\ \hat Q_{TO}(E[W_f])\frac{E[Z^{TO}]}{E[X]\,RTT}\right)

    Damjanović (2010) Algorithm 1 (§3.2.3), i.e. eq. (3.33) with the number of flows in time-out
    ``q = E[nTO]`` (eq. 3.32) capped at ``n``. The printed ``q1`` line has unbalanced
    parentheses; it is implemented as eq. (3.31) with :math:`p_{lr} = 1/w` (resolution
    ``multfrc:A1``), see :func:`timeout_probability`. With ``f="exact", cap_timeouts=False``
    this is the closed form (3.34) (:func:`model_a_closed_form`).

    Parameters
    ----------
    n : array_like
        Number of flows, > 0.
    p : array_like
        Per-flow loss event rate, in (0, 1).
    rtt : array_like
        Round-trip time [s], > 0.
    rto : array_like
        Initial retransmission time-out T [s], > 0.
    b : array_like, default 1
        Packets acknowledged by one ACK, > 0.
    f : {"approx", "exact"}
        :math:`f(p)` in :math:`E[Z^{TO}]`: ``1 + 32p^2`` (Algorithm 1) or eq. (3.26).
    cap_timeouts : bool, default True
        Cap the number of flows in time-out at ``n`` (Algorithm 1). Without the cap the
        result can be negative at very high loss, as (3.34) is.
    timeout_variant : str, default "droptail-plr"
        One of :data:`TIMEOUT_VARIANTS`. The ``-p`` variants use
        :math:`E[nTO] = P_{TO}\,n`; the ``-plr`` ones eq. (3.32).
    s : array_like, optional
        Segment size [bytes]; when given the result is in bytes/s.

    Returns
    -------
    float or ndarray
        Throughput of all n flows together [pkt/s], or [bytes/s] with ``s``.

    Examples
    --------
    Values computed from the thesis's printed algorithms (b = 1, RTT = 0.1 s, T = 0.4 s, n = 1):

    >>> [round(model_a(1, p, 0.1, 0.4), 2) for p in (0.001, 0.01, 0.05)]
    [379.54, 105.73, 25.48]
    """
    n = check("n", n, POSITIVE)
    p = check("p", p, UNIT_OPEN)
    rtt = check("rtt", rtt, POSITIVE)
    rto = check("rto", rto, POSITIVE)
    b = check("b", b, POSITIVE)
    check_choice("f", f, F_MODES)
    check_choice("timeout_variant", timeout_variant, TIMEOUT_VARIANTS)
    x = _rounds(n, p, np.float64(1.0), b)
    w = 2.0 * n * x / b
    z = rto * _f(p, f) / (1.0 - p)
    q1 = np.asarray(timeout_probability(w, p, variant=timeout_variant))
    if timeout_variant.endswith("-p"):
        q = q1 * n
    else:
        q = q1 * z / (x * rtt)
    if cap_timeouts:
        q = np.minimum(q, n)
    rate = (1.0 - q / n) / (p * x * rtt) + q / (z * (1.0 - p))
    return result(per_second(rate, s))


def model_a_closed_form(n: ArrayLike, p: ArrayLike, rtt: ArrayLike, rto: ArrayLike, *,
                        b: ArrayLike = 1.0, s: ArrayLike | None = None) -> Any:
    r"""Model A with time-outs, the closed form as printed.

    .. math::
        B_{ext} = \frac{6n^2\left(1+\hat Q_{TO}(E[W_f])\frac{p}{1-p}\right)}{D\,RTT}
                - \frac{36n^3p\,\frac{T f(p)}{1-p}\,\hat Q_{TO}(E[W_f])}{D^2\,RTT^2}

    with :math:`D = 2pb - npb + \sqrt{n^2p^2b^2 - 4np^2b^2 + 4p^2b^2 + 24bn^2p}` and the exact
    :math:`f(p)` — Damjanović (2010) eq. (3.34). It equals :func:`model_a` with ``f="exact"``
    and ``cap_timeouts=False``; unlike Algorithm 1 it does not cap the flows in time-out, so it
    falls below zero at very high loss.

    Examples
    --------
    >>> round(model_a_closed_form(1, 0.01, 0.1, 0.4), 2)  # exact f(p): below Algorithm 1's 105.73
    105.63
    """
    n = check("n", n, POSITIVE)
    p = check("p", p, UNIT_OPEN)
    rtt = check("rtt", rtt, POSITIVE)
    rto = check("rto", rto, POSITIVE)
    b = check("b", b, POSITIVE)
    d = 2 * p * b - n * p * b + np.sqrt(
        n**2 * p**2 * b**2 - 4 * n * p**2 * b**2 + 4 * p**2 * b**2 + 24 * b * n**2 * p
    )
    w_f = d / (3 * n * p * b)  # eq. 3.27
    q = _droptail_q(w_f, 1.0 / w_f, pftk_form=False)
    first = 6 * n**2 * (1 + q * p / (1 - p)) / (d * rtt)
    second = 36 * n**3 * p * (rto * _f(p, "exact") / (1 - p)) * q / (d**2 * rtt**2)
    return result(per_second(first - second, s))


# ---------------------------------------------------------------------------------------------
# Model B and MulTFRC


def old_j(p_r: ArrayLike, p_e: ArrayLike, n: ArrayLike) -> Any:
    r"""The "old" estimate of the flows hit per cumulative loss event, :math:`\min(n, p_r/p_e)`.

    Damjanović (2010) §3.3.1: each packet lost in a cumulative loss event is taken to belong to
    a different flow.

    Parameters
    ----------
    p_r : array_like
        Packet loss rate, in (0, 1).
    p_e : array_like
        Loss event rate of the cumulative flow, in (0, 1).
    n : array_like
        Number of flows, > 0.

    Examples
    --------
    >>> old_j(0.02, 0.01, 5)
    2.0
    """
    p_r = check("p_r", p_r, UNIT_OPEN)
    p_e = check("p_e", p_e, UNIT_OPEN)
    n = check("n", n, POSITIVE)
    return result(np.minimum(n, p_r / p_e))


def improved_j(n: ArrayLike, j: ArrayLike) -> Any:
    r"""The "improved" estimate of the flows hit per cumulative loss event.

    .. math:: j_{af} = \max\!\left(n\left(1 - \left(1 - \frac1n\right)^{j}\right),\ 1\right)

    Damjanović (2010) eq. (3.52), with :math:`j = p_r/p_e` (or the measured packets lost per
    event): each lost packet belongs to any of the n flows with probability 1/n. For ``n <= 1``
    the result is 1 (resolution ``multfrc:A7``: :math:`1 - 1/n` is then negative or zero and the
    power undefined or 0; one flow is hit).

    Parameters
    ----------
    n : array_like
        Number of flows, > 0.
    j : array_like
        Packets lost per cumulative loss event, >= 0.

    Returns
    -------
    float or ndarray
        Flows hit per loss event, in [1, n] for n >= 1.

    Examples
    --------
    The two examples of Damjanović (2010) §3.3.4 (n = 5):

    >>> round(improved_j(5, 1.175302), 6)
    1.153449
    >>> round(improved_j(5, 4.140351), 6)
    3.015146
    """
    n = check("n", n, POSITIVE)
    j = check("j", j, NON_NEGATIVE)
    return result(_improved_j(n, j))


def _improved_j(n: Float, j: Float) -> Float:
    with np.errstate(invalid="ignore", divide="ignore"):
        hit = n * (1.0 - (1.0 - 1.0 / n) ** j)
    return np.where(n <= 1.0, 1.0, np.maximum(hit, 1.0))


def model_b_ca(n: ArrayLike, p: ArrayLike, j: ArrayLike, rtt: ArrayLike, *,
               b: ArrayLike = 1.0, s: ArrayLike | None = None) -> Any:
    r"""Model B without time-outs: n flows, cumulative loss event rate ``p``, ``j`` flows hit.

    .. math::
        B = \frac{1}{RTT}\,\frac{6n^2}{2j^2pb - npbj
            + \sqrt{n^2p^2b^2j^2 - 4np^2b^2j^3 + 4j^4p^2b^2 + 24n^2pbj}}

    Damjanović (2010) eq. (3.51). ``j = 1`` gives model A (3.19). ``j`` is used as given (no
    cap).

    Parameters
    ----------
    n : array_like
        Number of flows, > 0.
    p : array_like
        Loss event rate of the cumulative flow, in (0, 1).
    j : array_like
        Flows hit per cumulative loss event, > 0 (physically in [1, n]).
    rtt : array_like
        Round-trip time [s], > 0.
    b : array_like, default 1
        Packets acknowledged by one ACK, > 0.
    s : array_like, optional
        Segment size [bytes]; when given the result is in bytes/s.

    Examples
    --------
    >>> model_b_ca(3, 0.01, 1, 0.1) == model_a_ca(3, 0.01, 0.1)
    True
    """
    p_ = check("p", p, UNIT_OPEN)
    rtt = check("rtt", rtt, POSITIVE)
    x = np.asarray(rounds_b(n, p_, j, b=b))
    return result(per_second(1.0 / (p_ * x * rtt), s))


def _model_b(n: Float, p: Float, j: Float, j_af: Float, rtt: Float, rto: Float, b: Float,
             f: str, q_j: str, cap_timeouts: bool) -> Float:
    """Algorithm 2/3 from the flows hit ``j_af`` onwards."""
    x = _rounds(n, p, j_af, b)
    jq = j if q_j == "raw" else j_af
    q = np.minimum(2.0 * jq * b / (x * (1.0 + 3.0 * n / jq)), n)  # n * pLost / E[W]
    z = rto * _f(p, f) / (1.0 - p)
    q = q * z / (x * rtt)
    if cap_timeouts:
        q = np.minimum(q, n)
    return (1.0 - q / n) / (p * x * rtt) + q / (z * (1.0 - p))


def _model_b_args(n: ArrayLike, p: ArrayLike, j: ArrayLike, rtt: ArrayLike, rto: ArrayLike,
                  b: ArrayLike, f: str, q_j: str) -> tuple[Float, ...]:
    n_ = check("n", n, POSITIVE)
    p_ = check("p", p, UNIT_OPEN)
    j_ = check("j", j, NON_NEGATIVE)
    rtt_ = check("rtt", rtt, POSITIVE)
    rto_ = check("rto", rto, POSITIVE)
    b_ = check("b", b, POSITIVE)
    check_choice("f", f, F_MODES)
    check_choice("q_j", q_j, Q_J_MODES)
    # j = 0 is the Internet-Draft's value before the first loss; it is read as 1
    # (``multfrc:A8``).
    j_ = np.where(j_ == 0.0, 1.0, j_)
    return n_, p_, j_, rtt_, rto_, b_


def model_b(
    n: ArrayLike,
    p: ArrayLike,
    j: ArrayLike,
    rtt: ArrayLike,
    rto: ArrayLike,
    *,
    b: ArrayLike = 1.0,
    f: str = "approx",
    q_j: str = "raw",
    cap_timeouts: bool = True,
    s: ArrayLike | None = None,
) -> Any:
    r"""Model B with time-outs, Algorithm 2: n parallel flows, cumulative loss measure.

    .. code-block:: text

        j_af = min(max(j, 1), n)
        x = E[X] of eq. (3.49) with j_af
        q = min(2 j b / (x (1 + 3 n / j)), n)        # n pLost / E[W], eq. (3.54)
        z = T (1 + 32 p^2) / (1 - p)
        q = n if q z / (x RTT) >= n else q z / (x RTT)
        B = (1 - q/n) / (p x RTT) + q / (z (1 - p))

    Damjanović (2010) Algorithm 2 (§3.3.3), eqs. (3.53)–(3.55). The printed eq. (3.54) has
    :math:`n\,p_e/p_r` where its derivation (:math:`pLost = p_r/p_e`) and the algorithm have
    :math:`n\,j/E[W]`; the algorithm is followed (resolution ``multfrc:A2``).

    Parameters
    ----------
    n : array_like
        Number of flows, > 0.
    p : array_like
        Loss event rate of the cumulative flow :math:`p_e`, in (0, 1).
    j : array_like
        Packets lost per cumulative loss event (:math:`p_r/p_e`, or measured), >= 0; 0 (no
        loss seen yet) is read as 1.
    rtt : array_like
        Round-trip time [s], > 0.
    rto : array_like
        Retransmission time-out :math:`t_{RTO}` [s], > 0.
    b : array_like, default 1
        Packets acknowledged by one ACK, > 0.
    f : {"approx", "exact"}
        :math:`f(p)` in :math:`E[Z^{TO}]`: ``1 + 32p^2`` (the algorithm) or eq. (3.26).
    q_j : {"raw", "flows"}
        The j of the time-out term: the raw ``j`` as printed, or ``j_af`` (``multfrc:A3``).
    cap_timeouts : bool, default True
        Cap the number of flows in time-out at ``n`` (the algorithm; eq. 3.54 does not).
    s : array_like, optional
        Segment size [bytes]; when given the result is in bytes/s.

    Returns
    -------
    float or ndarray
        Throughput of all n flows together [pkt/s], or [bytes/s] with ``s``.

    Examples -------- The j-sensitivity of Damjanović (2010) §3.3.4 (S2 RED, n = 5, lowest loss;
    the loss rate is not printed, about 5e-6 fits): the thesis's 25139.24 / 22903.79 = 1.0976
    (measured j over old j) and 26850.08 / 22903.79 = 1.1723 (improved j over old j):

    >>> old = model_b(5, 5e-6, 4.140351, 0.1, 0.4)
    >>> round(model_b(5, 5e-6, 3.43859, 0.1, 0.4) / old, 4)
    1.0976
    >>> round(model_b(5, 5e-6, 3.015146, 0.1, 0.4) / old, 4)
    1.1724
    """
    n_, p_, j_, rtt_, rto_, b_ = _model_b_args(n, p, j, rtt, rto, b, f, q_j)
    j_af = np.minimum(np.maximum(j_, 1.0), n_)
    rate = _model_b(n_, p_, j_, j_af, rtt_, rto_, b_, f, q_j, cap_timeouts)
    return result(per_second(rate, s))


def multfrc(
    n: ArrayLike,
    p: ArrayLike,
    j: ArrayLike,
    rtt: ArrayLike,
    rto: ArrayLike,
    *,
    b: ArrayLike = 1.0,
    threshold: float = IMPROVED_J_THRESHOLD,
    cap: str = "ceil",
    f: str = "approx",
    q_j: str = "raw",
    s: ArrayLike | None = None,
) -> Any:
    r"""The MulTFRC rate equation: Algorithm 3, draft-welzl-multfrc-01 §3.

    .. code-block:: text

        if N < 12: af = N (1 - (1 - 1/N)^j)  else: af = j     # improved j, eq. (3.52)
        af = max(min(af, ceil(N)), 1)
        ... then as Algorithm 2 (model_b) with j_af = af
        X_Bps = (...) * s

    Damjanović (2010) Appendix A (Algorithm 3) and Appendix B (the Internet-Draft). "af" in the
    printed ``a = ...`` line is read as ``j_af`` (``multfrc:A4``); for ``N <= 1`` the improved j
    is 1 (``multfrc:A7``); ``j = 0`` (the draft's initial value) is read as 1 (``multfrc:A8``).

    Parameters
    ----------
    n : array_like
        Number of emulated TFRC flows N, > 0 (real-valued; the draft says a user-settable N
        SHOULD NOT exceed 6, a policy this function does not enforce).
    p : array_like
        Loss event rate, in (0, 1).
    j : array_like
        Packets lost per loss event, >= 0.
    rtt : array_like
        Round-trip time R [s], > 0.
    rto : array_like
        :math:`t_{RTO}` [s], > 0 (the draft recommends the RFC 2988 algorithm).
    b : array_like, default 1
        Packets acknowledged by one ACK, > 0 (1 is recommended).
    threshold : float, default 12
        The improved j is used when ``N < threshold`` (the draft's 12; §4.2.1 reads "n <= 12"
        and the figure captions "n < 13", ``multfrc:A6``). 0 never uses it.
    cap : {"ceil", "n"}
        Upper bound on the flows hit: ``ceil(N)`` (Algorithm 3) or ``N`` (Algorithm 2).
    f : {"approx", "exact"}
        :math:`f(p)`: ``1 + 32p^2`` (as printed) or eq. (3.26).
    q_j : {"raw", "flows"}
        The j of the time-out term: raw ``j`` as printed, or ``j_af`` (``multfrc:A3``).
    s : array_like, optional
        Segment size [bytes]; when given the result is the draft's ``X_Bps`` [bytes/s].

    Returns
    -------
    float or ndarray
        Rate [pkt/s], or [bytes/s] with ``s``.

    Examples
    --------
    Values computed from the thesis's printed algorithms (b = 1, R = 0.1 s, t_RTO = 0.4 s):

    >>> [round(multfrc(1, p, 1, 0.1, 0.4), 2) for p in (0.001, 0.01, 0.05)]
    [383.67, 116.57, 44.54]
    >>> round(multfrc(5, 0.01, 2, 0.1, 0.4), 2)
    423.83
    >>> round(multfrc(0.5, 0.001, 1, 0.1, 0.4), 2)
    189.5
    """
    n_, p_, j_, rtt_, rto_, b_ = _model_b_args(n, p, j, rtt, rto, b, f, q_j)
    check_choice("cap", cap, CAP_MODES)
    threshold = float(check("threshold", threshold, Interval(None, None)))
    af = np.where(n_ < threshold, _improved_j(n_, j_), j_)
    upper = np.ceil(n_) if cap == "ceil" else n_
    af = np.maximum(np.minimum(af, upper), 1.0)
    rate = _model_b(n_, p_, j_, af, rtt_, rto_, b_, f, q_j, cap_timeouts=True)
    return result(per_second(rate, s))


def altman_utilisation(n: ArrayLike) -> Any:
    r"""Link utilisation reached by n parallel TCP flows (Altman et al., INFOCOM 2006).

    .. math:: U = 1 - \frac{1}{1 + 3N}

    As quoted by the MulTFRC Internet-Draft (Damjanović (2010) Appendix B, "100 − 100/(1+3N)
    percent"): one flow 75 %, three flows 90 %, six flows about 95 %.

    Parameters
    ----------
    n : array_like
        Number of flows, > 0.

    Returns
    -------
    float or ndarray
        Utilisation as a fraction in (0, 1).

    Examples
    --------
    >>> altman_utilisation(1), altman_utilisation(3)
    (0.75, 0.9)
    """
    n = check("n", n, POSITIVE)
    return result(1.0 - 1.0 / (1.0 + 3.0 * n))


_F = Key("f", "", "f(p) in the time-out duration: 1+32p^2 or the exact polynomial",
         default="approx", choices=F_MODES)
_Q_J = Key("q_j", "", "j in the time-out term: raw j (as printed) or flows hit j_af",
           default="raw", choices=Q_J_MODES)
_P_E = Key("p", "1", "loss event rate of the cumulative flow", required=True, allowed=UNIT_OPEN)

MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            "parallel-a",
            model_a,
            (
                N_FLOWS,
                Key("p", "1", "per-flow loss event rate", required=True, allowed=UNIT_OPEN),
                RTT,
                RTO,
                B_ACK,
                _F,
                Key("timeout_variant", "", "time-out probability calculation",
                    default="droptail-plr", choices=TIMEOUT_VARIANTS),
                S,
            ),
            "pkt/s",
            "n parallel TCP flows, per-flow loss event rate, with time-outs (Algorithm 1)",
            "Damjanovic (2010) Algorithm 1, eqs. 3.17-3.33",
            unit_with_s="B/s",
        ),
        ModelSpec(
            "parallel-a-ca",
            model_a_ca,
            (N_FLOWS, Key("p", "1", "per-flow loss event rate", required=True,
                          allowed=UNIT_OPEN), RTT, B_ACK, S),
            "pkt/s",
            "n parallel TCP flows, per-flow loss, congestion avoidance only",
            "Damjanovic (2010) eq. 3.19",
            unit_with_s="B/s",
        ),
        ModelSpec(
            "parallel-a-closed",
            model_a_closed_form,
            (N_FLOWS, Key("p", "1", "per-flow loss event rate", required=True,
                          allowed=UNIT_OPEN), RTT, RTO, B_ACK, S),
            "pkt/s",
            "n parallel TCP flows with time-outs, the printed closed form",
            "Damjanovic (2010) eq. 3.34",
            unit_with_s="B/s",
        ),
        ModelSpec(
            "parallel-b",
            model_b,
            (N_FLOWS, _P_E, J, RTT, RTO, B_ACK, _F, _Q_J, S),
            "pkt/s",
            "n parallel TCP flows, cumulative loss event rate and j, with time-outs "
            "(Algorithm 2)",
            "Damjanovic (2010) Algorithm 2, eqs. 3.49-3.55",
            unit_with_s="B/s",
        ),
        ModelSpec(
            "parallel-b-ca",
            model_b_ca,
            (N_FLOWS, _P_E, Key("j", "flows", "flows hit per cumulative loss event",
                                required=True, allowed=POSITIVE), RTT, B_ACK, S),
            "pkt/s",
            "n parallel TCP flows, cumulative loss, congestion avoidance only",
            "Damjanovic (2010) eq. 3.51",
            unit_with_s="B/s",
        ),
        ModelSpec(
            "multfrc",
            multfrc,
            (
                N_FLOWS,
                _P_E,
                J,
                RTT,
                RTO,
                B_ACK,
                Key("threshold", "flows", "improved j is used when n < threshold",
                    default=IMPROVED_J_THRESHOLD, allowed=Interval(None, None)),
                Key("cap", "", "cap on the flows hit: ceil(n) or n", default="ceil",
                    choices=CAP_MODES),
                _F,
                _Q_J,
                S,
            ),
            "pkt/s",
            "MulTFRC rate equation: n emulated TFRC flows (Algorithm 3, Internet-Draft)",
            "Damjanovic (2010) Algorithm 3; draft-welzl-multfrc-01 section 3",
            unit_with_s="B/s",
        ),
        ModelSpec(
            "improved-j",
            improved_j,
            (N_FLOWS, Key("j", "pkt", "packets lost per cumulative loss event (p_r/p_e)",
                          required=True, allowed=NON_NEGATIVE)),
            "flows",
            "flows hit per cumulative loss event, improved estimate",
            "Damjanovic (2010) eq. 3.52",
        ),
        ModelSpec(
            "altman",
            altman_utilisation,
            (N_FLOWS,),
            "1",
            "link utilisation of n parallel TCP flows",
            "Altman et al. 2006, as quoted in Damjanovic (2010) Appendix B",
        ),
    )
}
