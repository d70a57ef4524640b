"""Single-flow and AIMD throughput models.

* Mathis et al. (Damjanović (2010) eq. 2.1) and Padhye–Firoiu–Towsley–Kurose, "PFTK"
  (Damjanović (2010) eq. 2.2, with its ``min(1, ·)`` term), plus the RFC 5348 §3.1 form of the
  same equation (no ``min``), used by TFRC.
* The generic AIMD(a, b) model of Yang & Lam as used by Kuo and Fu (2008) (eqs. 1–6), the
  MulTCP(N) model factor (Kuo and Fu (2008) §3.1) and PA-MulTCP's window cap W_max (Kuo and
  Fu (2008) eq. 9).

Rates are in packets per second unless a segment size ``s`` (bytes) is given, in which case
they are in bytes per second. Every function broadcasts its array arguments (numpy rules) and
returns a float for scalar input. Arguments outside their domain raise ``ValueError`` naming
the argument and the allowed values. See ``docs/models.md``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._spec import (
    AT_LEAST_ONE,
    B_ACK,
    P_SINGLE,
    POSITIVE,
    RTO,
    RTT,
    UNIT_HALF_OPEN,
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
    "MODELS",
    "aimd_decrease_for_weight",
    "aimd_rate",
    "aimd_window",
    "mathis",
    "multcp_factor",
    "multcp_rate",
    "pa_multcp_params",
    "pa_multcp_wmax",
    "pftk",
]

PFTK_FORMS = ("pftk", "rfc5348")
"""``form`` of :func:`pftk`: with PFTK's ``min(1, 3·sqrt(3bp/8))`` or as in RFC 5348."""

DECREASE = Interval(0, 1, low_open=True)


def mathis(p: ArrayLike, rtt: ArrayLike, *, b: ArrayLike = 1.0, s: ArrayLike | None = None) -> Any:
    r"""Mathis et al.: throughput of one TCP flow in congestion avoidance under periodic loss.

    .. math:: B = \frac{1}{RTT}\frac{C}{\sqrt{p}},\qquad C = \sqrt{\frac{3}{2b}}

    Damjanović (2010) eq. (2.1) gives :math:`C = \sqrt{3/2}` (``b = 1``); the ``b`` of delayed
    ACKs enters as in the first term of PFTK, :math:`RTT\sqrt{2bp/3}`.

    Parameters
    ----------
    p : array_like
        Loss event rate, in (0, 1].
    rtt : array_like
        Round-trip time [s], > 0.
    b : array_like, default 1
        Packets acknowledged by one ACK, > 0.
    s : array_like, optional
        Segment size [bytes]; when given the result is in bytes/s.

    Returns
    -------
    float or ndarray
        Throughput [pkt/s], or [bytes/s] with ``s``.

    Examples
    --------
    >>> round(mathis(0.01, 0.1), 2)  # 10 * sqrt(150)
    122.47
    """
    p = check("p", p, UNIT_HALF_OPEN)
    rtt = check("rtt", rtt, POSITIVE)
    b = check("b", b, POSITIVE)
    return result(per_second(np.sqrt(3.0 / (2.0 * b * p)) / rtt, s))


def pftk(
    p: ArrayLike,
    rtt: ArrayLike,
    rto: ArrayLike,
    *,
    b: ArrayLike = 1.0,
    form: str = "pftk",
    s: ArrayLike | None = None,
) -> Any:
    r"""PFTK: steady-state throughput of one TCP Reno flow with time-outs.

    .. math::
        B = \frac{1}{RTT\sqrt{\frac{2bp}{3}}
            + T_0 \min\!\left(1, 3\sqrt{\frac{3bp}{8}}\right) p\,(1+32p^2)}

    Damjanović (2010) eq. (2.2) (Padhye et al. 1998, the approximate model). With
    ``form="rfc5348"`` the ``min`` is dropped, as in RFC 5348 §3.1 and the MulTFRC
    Internet-Draft; the two forms differ only when ``p > 8/(27 b)``.

    Parameters
    ----------
    p : array_like
        Loss event rate, in (0, 1].
    rtt : array_like
        Round-trip time [s], > 0.
    rto : array_like
        Retransmission time-out T_0 [s], > 0 (RFC 5348 suggests ``4 * rtt``).
    b : array_like, default 1
        Packets acknowledged by one ACK, > 0.
    form : {"pftk", "rfc5348"}
        With or without the ``min(1, ·)`` term.
    s : array_like, optional
        Segment size [bytes]; when given the result is in bytes/s (RFC 5348's ``X_Bps``).

    Returns
    -------
    float or ndarray
        Throughput [pkt/s], or [bytes/s] with ``s``.

    Examples
    --------
    Worked values of the equation (s = 1460 B, R = 0.1 s, t_RTO = 0.4 s):

    >>> round(pftk(0.01, 0.1, 0.4), 2)
    112.33
    >>> round(pftk(0.001, 0.1, 0.4, form="rfc5348", s=1460))
    560412
    """
    p = check("p", p, UNIT_HALF_OPEN)
    rtt = check("rtt", rtt, POSITIVE)
    rto = check("rto", rto, POSITIVE)
    b = check("b", b, POSITIVE)
    check_choice("form", form, PFTK_FORMS)
    to_factor = 3.0 * np.sqrt(3.0 * b * p / 8.0)
    if form == "pftk":
        to_factor = np.minimum(1.0, to_factor)
    denominator = rtt * np.sqrt(2.0 * b * p / 3.0) + rto * to_factor * p * (1.0 + 32.0 * p**2)
    return result(per_second(1.0 / denominator, s))


def aimd_window(a: ArrayLike, b: ArrayLike, p: ArrayLike) -> Any:
    r"""AIMD(a, b): the window at the end of a congestion epoch (its peak).

    .. math:: W = \sqrt{\frac{2a}{b(2-b)p}}

    Kuo and Fu (2008) eq. (1) (Yang & Lam). An epoch starts at :math:`(1-b)W` and grows by ``a``
    packets per RTT up to ``W``; one loss event ends it. Eqs. (7)–(9) are the same formula.

    Parameters
    ----------
    a : array_like
        Additive increase [pkt per RTT], > 0.
    b : array_like
        Multiplicative decrease factor, in (0, 1] (the window becomes ``(1-b)W``).
    p : array_like
        Loss event rate, in (0, 1].

    Returns
    -------
    float or ndarray
        Peak window [pkt].

    Examples
    --------
    >>> round(aimd_window(1, 0.5, 0.01), 4)  # standard TCP: sqrt(8/(3p))
    16.3299
    """
    a = check("a", a, POSITIVE)
    b = check("b", b, DECREASE)
    p = check("p", p, UNIT_HALF_OPEN)
    return result(np.sqrt(2.0 * a / (b * (2.0 - b) * p)))


def aimd_rate(
    a: ArrayLike, b: ArrayLike, p: ArrayLike, rtt: ArrayLike, *, s: ArrayLike | None = None
) -> Any:
    r"""AIMD(a, b): the sending rate.

    .. math:: T = \frac{2-b}{2\,\tau_{rtt}} W = \frac{1}{\tau_{rtt}}\sqrt{\frac{a(2-b)}{2bp}}

    Kuo and Fu (2008) eq. (2) with ``W`` from eq. (1); AIMD(1, 1/2) gives eq. (3),
    :math:`T_t = \sqrt{3/(2p)}/\tau_{rtt}`, the Mathis form.

    Parameters
    ----------
    a : array_like
        Additive increase [pkt per RTT], > 0.
    b : array_like
        Multiplicative decrease factor, in (0, 1].
    p : array_like
        Loss event rate, in (0, 1].
    rtt : array_like
        Round-trip time [s], > 0.
    s : array_like, optional
        Segment size [bytes]; when given the result is in bytes/s.

    Returns
    -------
    float or ndarray
        Sending rate [pkt/s], or [bytes/s] with ``s``.

    Examples
    --------
    >>> round(aimd_rate(1, 0.5, 0.01, 0.1), 2)  # = mathis(0.01, 0.1)
    122.47
    """
    window = np.asarray(aimd_window(a, b, p))
    rtt = check("rtt", rtt, POSITIVE)
    b = np.asarray(b, dtype=np.float64)
    return result(per_second((2.0 - b) / (2.0 * rtt) * window, s))


def aimd_decrease_for_weight(a: ArrayLike, n: ArrayLike = 1.0) -> Any:
    r"""The decrease factor that makes AIMD(a, b) as fast as ``n`` TCP flows at equal loss.

    .. math:: b = \frac{2a}{3N^2 + a}

    Kuo and Fu (2008) eq. (5); with ``n = 1`` it is eq. (6), the TCP-friendly pairs
    :math:`b = 2a/(3+a)`.

    Parameters
    ----------
    a : array_like
        Additive increase [pkt per RTT], > 0.
    n : array_like, default 1
        Weight (number of TCP flows to match), > 0.

    Returns
    -------
    float or ndarray
        Decrease factor ``b``.

    Examples
    --------
    >>> aimd_decrease_for_weight(1)  # standard TCP
    0.5
    >>> round(aimd_decrease_for_weight(2, 4), 4)  # PA-MulTCP's adjusting loop for N = 4
    0.08
    """
    a = check("a", a, POSITIVE)
    n = check("n", n, POSITIVE)
    return result(2.0 * a / (3.0 * n**2 + a))


def multcp_rate(n: ArrayLike, p: ArrayLike, rtt: ArrayLike, *, s: ArrayLike | None = None) -> Any:
    r"""MulTCP(N) as AIMD(N, 1/(2N)): the sending rate at loss event rate ``p``.

    Kuo and Fu (2008) §3.1: the window of N virtual flows grows by N per RTT and one loss halves
    one of them, :math:`(1 - 1/(2N))NW`. The rate is :func:`aimd_rate` with those parameters.

    Parameters
    ----------
    n : array_like
        Weight N, >= 1.
    p : array_like
        Loss event rate seen by the MulTCP flow, in (0, 1].
    rtt : array_like
        Round-trip time [s], > 0.
    s : array_like, optional
        Segment size [bytes]; when given the result is in bytes/s.

    Returns
    -------
    float or ndarray
        Sending rate [pkt/s], or [bytes/s] with ``s``.

    Examples
    --------
    >>> round(multcp_rate(1, 0.01, 0.1), 2)  # N = 1 is standard TCP
    122.47
    """
    n = check("n", n, AT_LEAST_ONE)
    return aimd_rate(n, 1.0 / (2.0 * n), p, rtt, s=s)


def multcp_factor(n: ArrayLike, *, loss_ratio: ArrayLike = 1.0) -> Any:
    r"""MulTCP(N)'s throughput relative to N standard TCP flows (the model factor).

    .. math::
        \frac{T_m}{N T_t} = \sqrt{\frac{2 - 1/(2N)}{3/2}}\;\sqrt{\frac{p_t}{p_m}}

    At equal loss event rates AIMD(N, 1/(2N)) does not satisfy eq. (5) of Kuo and Fu (2008)
    for N > 1 (that would need b = 2/(3N+1)), so it is slightly more aggressive than N flows:
    the first factor, from eqs. (1), (2) and (4) of their §3.1. A lower loss event rate
    ``p_m < p_t`` adds the second factor (§3.2, from eqs. 3 and 4); ``loss_ratio`` is
    :math:`p_t/p_m`.

    Parameters
    ----------
    n : array_like
        Weight N, >= 1.
    loss_ratio : array_like, default 1
        :math:`p_t/p_m`, the TCP flows' loss event rate over MulTCP's, > 0.

    Returns
    -------
    float or ndarray
        The ratio :math:`T_m/(N T_t)` (1 means exactly N flowshares).

    Examples
    --------
    Rounded to three decimals: 1.080, 1.118, 1.140, 1.147 and 1.150 (N = 30: 1.14994):

    >>> [round(multcp_factor(n), 4) for n in (2, 4, 10, 20, 30)]
    [1.0801, 1.118, 1.1402, 1.1475, 1.1499]
    """
    n = check("n", n, AT_LEAST_ONE)
    loss_ratio = check("loss_ratio", loss_ratio, POSITIVE)
    return result(np.sqrt((2.0 - 1.0 / (2.0 * n)) / 1.5) * np.sqrt(loss_ratio))


def pa_multcp_params(n: ArrayLike) -> tuple[Any, Any]:
    r"""PA-MulTCP's adjusting loop: AIMD(√N, 2/(1 + 3N^1.5)).

    Kuo and Fu (2008) §4.2 (as recommended by their report [17]); the pair satisfies eq. (5).

    Parameters
    ----------
    n : array_like
        Weight N, >= 1.

    Returns
    -------
    (a, b) : tuple of float or ndarray
        Additive increase [pkt per RTT] and decrease factor.

    Examples
    --------
    >>> a, b = pa_multcp_params(4)
    >>> a, round(b, 4)
    (2.0, 0.08)
    """
    n = check("n", n, AT_LEAST_ONE)
    return result(np.sqrt(n)), result(2.0 / (1.0 + 3.0 * n**1.5))


def pa_multcp_wmax(n: ArrayLike, p: ArrayLike) -> Any:
    r"""PA-MulTCP: the cap on the adjusting loop's window.

    .. math::
        W_m^{max} = \sqrt{\frac{2a}{b(2-b)p_t}} = \frac{1 + 3N^{1.5}}{\sqrt{6Np_t}}
        \quad (a = \sqrt N,\ b = 2/(1+3N^{1.5}))

    Kuo and Fu (2008) eq. (9); ``p`` is the loss event rate :math:`p_t` measured by the probe
    loop. Whether ``n`` should be the weight N or N − 1 (the probe loop also carries data) is
    the caller's choice (resolution ``pamultcp:A6`` in ``docs/resolutions.md``).

    Parameters
    ----------
    n : array_like
        Weight of the adjusting loop, >= 1.
    p : array_like
        Probe loop's loss event rate :math:`p_t`, in (0, 1].

    Returns
    -------
    float or ndarray
        Maximum window [pkt].

    Examples
    --------
    :math:`W_{max}\sqrt{p_t}` for the weights Kuo and Fu (2008) evaluate:

    >>> [round(pa_multcp_wmax(n, 1.0), 3) for n in (2, 4, 5, 10, 20, 30)]
    [2.738, 5.103, 6.306, 12.377, 24.586, 36.817]
    """
    a, b = pa_multcp_params(n)
    return aimd_window(a, b, p)


MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            "mathis",
            mathis,
            (P_SINGLE, RTT, B_ACK, S),
            "pkt/s",
            "one TCP flow, congestion avoidance only, periodic loss",
            "Damjanovic (2010) eq. 2.1 (Mathis et al.)",
            unit_with_s="B/s",
        ),
        ModelSpec(
            "pftk",
            pftk,
            (
                P_SINGLE,
                RTT,
                RTO,
                B_ACK,
                Key("form", "", "with PFTK's min(1, .) or as in RFC 5348", default="pftk",
                    choices=PFTK_FORMS),
                S,
            ),
            "pkt/s",
            "one TCP Reno flow with time-outs (the TFRC equation)",
            "Damjanovic (2010) eq. 2.2 (Padhye et al.); RFC 5348 section 3.1",
            unit_with_s="B/s",
        ),
        ModelSpec(
            "aimd",
            aimd_rate,
            (
                Key("a", "pkt/RTT", "additive increase per RTT", default=1.0, allowed=POSITIVE),
                Key("b", "1", "multiplicative decrease factor", default=0.5, allowed=DECREASE),
                P_SINGLE,
                RTT,
                S,
            ),
            "pkt/s",
            "sending rate of an AIMD(a, b) flow",
            "Kuo and Fu (2008) eqs. 1-2 (Yang & Lam)",
            unit_with_s="B/s",
        ),
        ModelSpec(
            "aimd-window",
            aimd_window,
            (
                Key("a", "pkt/RTT", "additive increase per RTT", default=1.0, allowed=POSITIVE),
                Key("b", "1", "multiplicative decrease factor", default=0.5, allowed=DECREASE),
                P_SINGLE,
            ),
            "pkt",
            "peak window of an AIMD(a, b) flow",
            "Kuo and Fu (2008) eq. 1 (Yang & Lam)",
        ),
        ModelSpec(
            "multcp-factor",
            multcp_factor,
            (
                Key("n", "flows", "MulTCP weight N", required=True, allowed=AT_LEAST_ONE),
                Key("loss_ratio", "1", "p_t/p_m, TCP's loss event rate over MulTCP's",
                    default=1.0, allowed=POSITIVE),
            ),
            "1",
            "MulTCP(N) throughput over N TCP flows' throughput",
            "Kuo and Fu (2008) sections 3.1-3.2",
        ),
        ModelSpec(
            "pa-multcp-wmax",
            pa_multcp_wmax,
            (
                Key("n", "flows", "weight of the adjusting loop", required=True,
                    allowed=AT_LEAST_ONE),
                Key("p", "1", "probe loop's loss event rate p_t", required=True,
                    allowed=UNIT_HALF_OPEN),
            ),
            "pkt",
            "PA-MulTCP's cap on the adjusting loop's window",
            "Kuo and Fu (2008) eq. 9",
        ),
    )
}
